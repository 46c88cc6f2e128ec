//! Joint bottleneck solve of a mix of flows, and latency with queueing.
//!
//! Two ways to share the NIC between flows (request field `mix`):
//! - `shares` (default): the mix runs at `X` requests/s and flow `i` gets `share_i · X`.
//!   `X` is the largest rate that keeps every resource at utilisation ≤ 1, every flow
//!   within what its requester threads can post, and every open-loop flow within its
//!   offered load. The binding constraint is the bottleneck (ties: resource order of
//!   [`Resource::ALL`], then `requester`, then `offered_load`).
//! - `max_min`: weighted max-min fairness by progressive filling — every unfrozen flow
//!   grows in proportion to its share until a resource it uses saturates or it reaches
//!   its own requester / offered limit; then it freezes and the others keep growing.
//!   This is how independent closed-loop requesters share a NIC (seed §4 runs).
//!
//! Latency: the unloaded segments of each flow, plus, when some flow is open-loop
//! (`offered_mpps`), an M/D/1 wait at the most utilised resource, treated as one server
//! whose service time is the mix's mean capacity-time per request (a fluid
//! approximation of its parallel servers). Closed-loop peaks report unloaded latency,
//! as the seed measures latency with a single requester (§3).

use super::demand::{Demand, Resource, N_RESOURCES};
use super::request::Flow;
use crate::error::ModelError;

/// What limits a mix or a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Resource(Resource),
    Requester,
    OfferedLoad,
}

impl Limit {
    pub fn name(self) -> &'static str {
        match self {
            Limit::Resource(r) => r.name(),
            Limit::Requester => "requester",
            Limit::OfferedLoad => "offered_load",
        }
    }
}

/// How flows share the NIC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MixMode {
    #[default]
    Shares,
    MaxMin,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Solution {
    /// Requests/s of each flow.
    pub rates: Vec<f64>,
    /// The mix's bottleneck.
    pub limit: Limit,
    /// What stopped each flow from going faster.
    pub flow_limits: Vec<Limit>,
    /// Utilisation of every resource at `rates`.
    pub utilization: [f64; N_RESOURCES],
    /// Highest fraction of a flow's posting capacity in use.
    pub requester_utilization: f64,
    /// Per flow: end-to-end latency \[ns\] (None: the offered load saturates the mix).
    pub latency_ns: Vec<Option<f64>>,
    pub saturated: Vec<bool>,
}

/// A flow's own cap (requests/s) and what it is.
fn flow_cap(f: &Flow, d: &Demand) -> (f64, Limit) {
    match f.offered_mpps {
        Some(o) if o * 1e6 < d.requester_rate => (o * 1e6, Limit::OfferedLoad),
        _ => (d.requester_rate, Limit::Requester),
    }
}

fn solve_shares(flows: &[Flow], demands: &[Demand]) -> (Vec<f64>, Limit, Vec<Limit>) {
    let mut mix_load = [0.0; N_RESOURCES];
    for (f, d) in flows.iter().zip(demands) {
        for (acc, l) in mix_load.iter_mut().zip(d.load.iter()) {
            *acc += f.share * l;
        }
    }
    let mut rate = f64::INFINITY;
    let mut limit = Limit::OfferedLoad;
    for r in Resource::ALL {
        let load = mix_load[r.index()];
        if load > 0.0 && 1.0 / load < rate {
            rate = 1.0 / load;
            limit = Limit::Resource(r);
        }
    }
    for (f, d) in flows.iter().zip(demands) {
        if d.requester_rate / f.share < rate {
            rate = d.requester_rate / f.share;
            limit = Limit::Requester;
        }
    }
    for f in flows {
        if let Some(o) = f.offered_mpps {
            if o * 1e6 / f.share < rate {
                rate = o * 1e6 / f.share;
                limit = Limit::OfferedLoad;
            }
        }
    }
    (
        flows.iter().map(|f| rate * f.share).collect(),
        limit,
        vec![limit; flows.len()],
    )
}

fn solve_max_min(flows: &[Flow], demands: &[Demand]) -> (Vec<f64>, Limit, Vec<Limit>) {
    let n = flows.len();
    let mut rates = vec![0.0; n];
    let mut frozen: Vec<Option<Limit>> = vec![None; n];
    let mut used = [0.0_f64; N_RESOURCES];
    let mut first_resource: Option<Resource> = None;
    // Each round freezes at least one flow, so n rounds suffice.
    for _ in 0..n {
        let active: Vec<usize> = (0..n).filter(|&i| frozen[i].is_none()).collect();
        if active.is_empty() {
            break;
        }
        let mut step = f64::INFINITY;
        let mut growth = [0.0; N_RESOURCES];
        for &i in &active {
            for (g, l) in growth.iter_mut().zip(demands[i].load.iter()) {
                *g += flows[i].share * l;
            }
            let (cap, _) = flow_cap(&flows[i], &demands[i]);
            step = step.min((cap - rates[i]).max(0.0) / flows[i].share);
        }
        for r in Resource::ALL {
            let g = growth[r.index()];
            if g > 0.0 {
                step = step.min((1.0 - used[r.index()]).max(0.0) / g);
            }
        }
        if !step.is_finite() {
            break;
        }
        for &i in &active {
            rates[i] += step * flows[i].share;
        }
        for (u, g) in used.iter_mut().zip(growth.iter()) {
            *u += step * g;
        }
        let saturated: Vec<Resource> = Resource::ALL
            .into_iter()
            .filter(|r| used[r.index()] >= 1.0 - 1e-9)
            .collect();
        if first_resource.is_none() {
            first_resource = saturated.first().copied();
        }
        for &i in &active {
            let (cap, cap_limit) = flow_cap(&flows[i], &demands[i]);
            if let Some(r) = saturated.iter().find(|r| demands[i].load[r.index()] > 0.0) {
                frozen[i] = Some(Limit::Resource(*r));
            } else if rates[i] >= cap * (1.0 - 1e-9) {
                frozen[i] = Some(cap_limit);
            }
        }
    }
    let flow_limits: Vec<Limit> = frozen.into_iter().map(|l| l.unwrap_or(Limit::OfferedLoad)).collect();
    let limit = match first_resource {
        Some(r) => Limit::Resource(r),
        None if flow_limits.contains(&Limit::Requester) => Limit::Requester,
        None => Limit::OfferedLoad,
    };
    (rates, limit, flow_limits)
}

pub fn solve(flows: &[Flow], demands: &[Demand], mode: MixMode) -> Result<Solution, ModelError> {
    let (rates, limit, flow_limits) = match mode {
        MixMode::Shares => solve_shares(flows, demands),
        MixMode::MaxMin => solve_max_min(flows, demands),
    };
    if rates.iter().any(|r| !r.is_finite() || *r <= 0.0) {
        return Err(ModelError::Scenario(
            "offpath: the mix has no finite bottleneck (check the profile's capacities)".into(),
        ));
    }
    let mut mix_load = [0.0; N_RESOURCES];
    for (rate, d) in rates.iter().zip(demands) {
        for (acc, l) in mix_load.iter_mut().zip(d.load.iter()) {
            *acc += rate * l;
        }
    }
    let utilization = mix_load;
    let total_rate: f64 = rates.iter().sum();
    let requester_utilization = rates
        .iter()
        .zip(demands)
        .map(|(rate, d)| rate / d.requester_rate)
        .fold(0.0, f64::max);

    let open_loop = flows.iter().any(|f| f.offered_mpps.is_some());
    let (busiest, rho) = Resource::ALL
        .iter()
        .map(|&r| (r, utilization[r.index()]))
        .fold((Resource::NetworkIn, -1.0), |acc, x| if x.1 > acc.1 { x } else { acc });
    let wait_ns = if open_loop && rho < 1.0 - 1e-9 {
        // Mean capacity-seconds per request of the mix at the busiest resource.
        let service_s = utilization[busiest.index()] / total_rate;
        rho * service_s / (2.0 * (1.0 - rho)) * 1e9
    } else {
        0.0
    };
    let mut latency_ns = Vec::with_capacity(flows.len());
    let mut saturated = Vec::with_capacity(flows.len());
    for ((f, d), rate) in flows.iter().zip(demands).zip(&rates) {
        let sat = f.offered_mpps.is_some_and(|o| *rate < o * 1e6 * (1.0 - 1e-9));
        saturated.push(sat);
        latency_ns.push(if sat { None } else { Some(d.latency_ns + wait_ns) });
    }
    Ok(Solution {
        rates,
        limit,
        flow_limits,
        utilization,
        requester_utilization,
        latency_ns,
        saturated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::offpath::demand::tests::flow;
    use crate::offpath::pcie::PcieLoad;
    use crate::offpath::request::{CommPath, Verb};

    /// A demand that loads only `loads` (resource, fraction per request).
    fn synthetic(loads: &[(Resource, f64)], requester_rate: f64) -> Demand {
        let mut load = [0.0; N_RESOURCES];
        for &(r, l) in loads {
            load[r.index()] = l;
        }
        Demand {
            load,
            pcie: PcieLoad::default(),
            latency_ns: 1000.0,
            posting_ns: 0.0,
            requester_rate,
            requester_rate_no_batch: requester_rate,
            requester_rate_batch32: requester_rate,
            overflow_tlps: 0.0,
            soc_write_banks: None,
        }
    }

    #[test]
    fn test_shares_and_max_min_arithmetic() {
        let mut a = flow(CommPath::ClientHost, Verb::Read, 64.0);
        let mut b = flow(CommPath::ClientSoc, Verb::Read, 64.0);
        a.share = 0.5;
        b.share = 0.5;
        // A: 10 ns of the shared cores + 20 ns of its own pool; B: 10 ns shared, 5 ns own pool.
        let da = synthetic(&[(Resource::NicCores, 10e-9), (Resource::NicCoresHost, 20e-9)], 1e12);
        let db = synthetic(&[(Resource::NicCores, 10e-9), (Resource::NicCoresSoc, 5e-9)], 1e12);
        let flows = [a, b];
        let demands = [da, db];
        // Shares: A's pool X·0.5·20 ns ≤ 1 → X = 100 M/s; the shared cores reach 100 M·10 ns = 1
        // at the same X: a tie, resolved to the first resource in order (nic_cores).
        let s = solve(&flows, &demands, MixMode::Shares).expect("solves");
        assert!(
            (s.rates[0] - 50e6).abs() < 1.0 && (s.rates[1] - 50e6).abs() < 1.0,
            "{:?}",
            s.rates
        );
        assert_eq!(s.limit, Limit::Resource(Resource::NicCores));
        // Max-min: both grow to 50 M/s (A's pool full at 50 M·20 ns = 1; shared at 1.0):
        // nothing is left for B either.
        let m = solve(&flows, &demands, MixMode::MaxMin).expect("solves");
        assert!(
            (m.rates[0] - 50e6).abs() < 1.0 && (m.rates[1] - 50e6).abs() < 1.0,
            "{:?}",
            m.rates
        );
        // Give the shared cores room: A freezes at 50 M (its pool), B continues to its cap.
        let da = synthetic(&[(Resource::NicCores, 2e-9), (Resource::NicCoresHost, 20e-9)], 1e12);
        let db = synthetic(&[(Resource::NicCores, 2e-9), (Resource::NicCoresSoc, 5e-9)], 120e6);
        let demands = [da, db];
        let m = solve(&flows, &demands, MixMode::MaxMin).expect("solves");
        assert!((m.rates[0] - 50e6).abs() < 1.0, "{:?}", m.rates);
        assert!((m.rates[1] - 120e6).abs() < 1.0, "{:?}", m.rates);
        assert_eq!(
            m.flow_limits,
            vec![Limit::Resource(Resource::NicCoresHost), Limit::Requester]
        );
        assert_eq!(m.limit, Limit::Resource(Resource::NicCoresHost));
        // Shares with the same demands: B's requester cap does not bind before A's pool.
        let s = solve(&flows, &demands, MixMode::Shares).expect("solves");
        assert_eq!(s.limit, Limit::Resource(Resource::NicCoresHost));
        assert!((s.utilization[Resource::NicCores.index()] - 100e6 * 2e-9).abs() < 1e-12);
    }
}
