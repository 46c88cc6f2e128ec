//! Per-packet cost of a flow-meter process, and how SMT siblings share a core.
//!
//! ```text
//!  one process alone on its core, per packet:
//!    busy_ns    = base_cycles / GHz + lines × [ (m_L2 − m_LLC) × min(hit, hide) + m_LLC × min(miss, hide) ]
//!    exposed_ns =                     lines × [ (m_L2 − m_LLC) × (hit − hide)⁺ + m_LLC × (miss − hide)⁺ ]
//!    packet_ns  = busy_ns + exposed_ns
//!  hide  = ooo_hidden_latency_cycles / GHz (reorder-buffer entries / issue width)
//!  m_X   = 1 − (share of the process's packets whose flow record is resident in cache X)
//!  k processes on one core:  core rate = min(k / packet_ns, 1 / busy_ns), shared equally
//! ```
//!
//! A process's working set is its flows × `flow_record_bytes`. A cache is shared by the
//! processes using it (L2 by the SMT siblings of a core, the LLC by all processes on the
//! socket) and holds the most popular records of all of them, so every process sees the same
//! per-flow residency: a process with more flows misses no more often per packet, it only
//! gets more packets. Cores are filled socket by socket (socket 0, the
//! card's NUMA node, first), so 1–8 processes on one socket share its LLC and the miss
//! ratio depends on the total flows on that socket. A cache of k records hits the k most
//! popular flows ([`shared_hit_ratios`]): `k / flows` for equal flows.
//!
//! SMT, from the resources two hardware threads share (not a fitted gain): the siblings of
//! a core share its issue slots and its L2. A flow-record lookup is a chain of dependent
//! loads; while one misses, the thread keeps the core issuing its own younger work until its
//! reorder buffer is full (`hide`), and only the rest of the wait leaves the issue slots to a
//! sibling. So one process occupies the core `busy_ns` per packet and waits `exposed_ns`:
//! k siblings reach at most `1 / busy_ns` together, and never more than k lone processes.
//! The gain over one process, `min(k, packet_ns / busy_ns)`, follows from the workload: 1
//! when every record touched is in the LLC (an LLC hit is shorter than `hide`), growing
//! towards k as DRAM misses (many flows per socket) dominate the packet. Two threads of
//! dependent lookups keep at most two misses in flight, far below a core's line-fill
//! buffers, so memory-level parallelism does not cap the overlap.
//!
//! Beyond the host's own cores the placement continues on further sockets of the same kind
//! (what a bigger host would do), so "cores needed" can exceed the testbed.

use super::flows::{shared_hit_ratios, StreamLoad};
use super::params::HostParams;

/// Where the processes run.
#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    pub cores: usize,
    pub processes_per_core: usize,
    /// Processes on each socket in use.
    pub processes_per_socket: Vec<usize>,
}

impl Placement {
    pub fn new(host: &HostParams, cores: usize, processes_per_core: usize) -> Placement {
        let per_socket = (host.cores_per_socket as usize).max(1);
        let sockets = cores.div_ceil(per_socket).max(1);
        let processes_per_socket = (0..sockets)
            .map(|s| (cores - s * per_socket).min(per_socket) * processes_per_core)
            .collect();
        Placement {
            cores,
            processes_per_core,
            processes_per_socket,
        }
    }

    pub fn processes(&self) -> usize {
        self.cores * self.processes_per_core
    }

    /// Socket of process `p` (processes of a core are consecutive; cores fill sockets in order).
    pub fn socket_of(&self, host: &HostParams, p: usize) -> usize {
        let core = p / self.processes_per_core.max(1);
        core / (host.cores_per_socket as usize).max(1)
    }

    /// Whether the placement needs more cores than the host has.
    pub fn exceeds_host(&self, host: &HostParams) -> bool {
        self.cores as f64 > host.sockets * host.cores_per_socket
    }
}

/// The cost model's view of one process.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProcessCost {
    /// Time per packet when the process has the core to itself \[ns\].
    pub packet_ns: f64,
    /// Part of `packet_ns` in which the process keeps the core's issue slots busy \[ns\].
    pub busy_ns: f64,
    /// Part of `packet_ns` in which the process waits on misses its out-of-order window
    /// cannot hide; an SMT sibling can use the core meanwhile \[ns\].
    pub exposed_ns: f64,
    pub l2_miss_ratio: f64,
    pub llc_miss_ratio: f64,
    /// Throughput of the process's core with its processes relative to one process alone
    /// (1 with one process per core).
    pub smt_gain: f64,
    /// Packets per ns the process handles while not stalled (its share of the core).
    pub rate_per_ns: f64,
}

/// Packets per ns that `k` processes get from one core together (bottleneck bound: the
/// issue slots give `1 / busy_ns`, and `k` processes never beat `k` lone ones, `k / packet_ns`).
pub fn core_rate_per_ns(k: usize, busy_ns: f64, packet_ns: f64) -> f64 {
    let k = k.max(1) as f64;
    (k / packet_ns.max(1e-9)).min(1.0 / busy_ns.max(1e-9))
}

/// The cost of every process: L2 shared by the processes of a core, the LLC by those of a
/// socket ([`shared_hit_ratios`]); the processes of a core share its issue slots.
pub fn process_costs(host: &HostParams, place: &Placement, loads: &[StreamLoad]) -> Vec<ProcessCost> {
    let ppc = place.processes_per_core.max(1);
    let per_socket = ppc * (host.cores_per_socket as usize).max(1);
    let record = host.flow_record_bytes;
    let hits = |group: usize, capacity_bytes: f64| -> Vec<f64> {
        loads
            .chunks(group)
            .flat_map(|chunk| {
                let refs: Vec<&StreamLoad> = chunk.iter().collect();
                shared_hit_ratios(&refs, capacity_bytes / record)
            })
            .collect()
    };
    let l2_hits = hits(ppc, host.l2_bytes_per_core);
    let llc_hits = hits(per_socket, host.llc_bytes_per_socket);
    let hide_ns = host.ooo_hidden_latency_cycles / host.cpu_ghz;
    let lines = host.flow_lines_per_packet;
    // (busy, exposed, m_L2, m_LLC) of each process as if alone on its core.
    let alone: Vec<(f64, f64, f64, f64)> = l2_hits
        .iter()
        .zip(&llc_hits)
        .map(|(&l2, &llc)| {
            let m_llc = (1.0 - llc).clamp(0.0, 1.0);
            let m_l2 = (1.0 - l2).clamp(m_llc, 1.0);
            let (llc_lines, dram_lines) = (lines * (m_l2 - m_llc), lines * m_llc);
            let busy = host.base_cycles_per_packet / host.cpu_ghz
                + llc_lines * host.llc_hit_ns.min(hide_ns)
                + dram_lines * host.llc_miss_ns.min(hide_ns);
            let exposed =
                llc_lines * (host.llc_hit_ns - hide_ns).max(0.0) + dram_lines * (host.llc_miss_ns - hide_ns).max(0.0);
            (busy, exposed, m_l2, m_llc)
        })
        .collect();
    alone
        .chunks(ppc)
        .flat_map(|core| {
            // The core's processes together (mean per-packet demands), split equally.
            let k = core.len();
            let busy = core.iter().map(|c| c.0).sum::<f64>() / k as f64;
            let packet = core.iter().map(|c| c.0 + c.1).sum::<f64>() / k as f64;
            let rate = core_rate_per_ns(k, busy, packet);
            let gain = if k == 1 { 1.0 } else { rate * packet };
            core.iter().map(move |&(busy_ns, exposed_ns, m_l2, m_llc)| ProcessCost {
                packet_ns: busy_ns + exposed_ns,
                busy_ns,
                exposed_ns,
                l2_miss_ratio: m_l2,
                llc_miss_ratio: m_llc,
                smt_gain: gain,
                rate_per_ns: rate / k as f64,
            })
        })
        .collect()
}

/// Fraction of time a process is not stalled (mean over the stall renewal process).
pub fn available_fraction(host: &HostParams) -> f64 {
    host.stall_interval_us / (host.stall_interval_us + host.stall_mean_us)
}

#[cfg(test)]
mod tests {
    use super::super::flows::FlowSet;
    use super::super::params::HostParams;
    use super::*;
    use crate::profile::Profile;
    use std::path::Path;

    fn host() -> HostParams {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../profiles");
        Profile::load("argus-host", &dir)
            .expect("profile")
            .params::<HostParams>()
            .expect("params")
    }

    #[test]
    fn test_placement_fills_sockets_in_order() {
        let h = host();
        let p = Placement::new(&h, 12, 1);
        assert_eq!(p.processes_per_socket, vec![8, 4]);
        assert_eq!(p.socket_of(&h, 7), 0);
        assert_eq!(p.socket_of(&h, 8), 1);
        let smt = Placement::new(&h, 16, 2);
        assert_eq!(smt.processes(), 32);
        assert_eq!(smt.processes_per_socket, vec![16, 16]);
        assert_eq!(smt.socket_of(&h, 15), 0);
        assert!(!smt.exceeds_host(&h));
        assert!(Placement::new(&h, 40, 1).exceeds_host(&h));
    }

    #[test]
    fn test_cost_grows_with_flows_per_socket() {
        let h = host();
        let place = Placement::new(&h, 8, 1);
        let cost = |flows: usize| {
            let loads = FlowSet::generate(flows, 1, 0.0, true).expect("flows").assign(8);
            process_costs(&h, &place, &loads)[0]
        };
        let small = cost(256);
        let big = cost(1 << 20);
        assert!(small.llc_miss_ratio < 1e-9, "256 flows fit the LLC");
        assert!(big.llc_miss_ratio > 0.9, "{}", big.llc_miss_ratio);
        assert!(
            big.packet_ns > 2.0 * small.packet_ns,
            "{} vs {}",
            big.packet_ns,
            small.packet_ns
        );
        // Zipf traffic keeps the popular records cached: fewer misses than equal flows.
        let zipf = FlowSet::generate(1 << 18, 1, 1.0, true).expect("flows").assign(8);
        let uni = FlowSet::generate(1 << 18, 1, 0.0, true).expect("flows").assign(8);
        assert!(process_costs(&h, &place, &zipf)[0].llc_miss_ratio < process_costs(&h, &place, &uni)[0].llc_miss_ratio);
    }

    #[test]
    fn test_core_rate_is_the_bottleneck_bound() {
        // One process: 1 / packet. Two: limited by the issue slots (1 / busy) or by 2 / packet.
        assert!((core_rate_per_ns(1, 100.0, 300.0) - 1.0 / 300.0).abs() < 1e-15);
        assert!((core_rate_per_ns(2, 100.0, 300.0) - 2.0 / 300.0).abs() < 1e-15);
        assert!((core_rate_per_ns(2, 200.0, 300.0) - 1.0 / 200.0).abs() < 1e-15);
        assert!(
            (core_rate_per_ns(2, 300.0, 300.0) - 1.0 / 300.0).abs() < 1e-15,
            "no stalls: no gain"
        );
    }

    #[test]
    fn test_smt_gain_follows_the_workload() {
        let h = host();
        let gain_at = |host: &HostParams, flows: usize| {
            let loads = FlowSet::generate(flows, 1, 0.0, true).expect("flows").assign(32);
            let one = process_costs(host, &Placement::new(host, 32, 1), &loads);
            let two = process_costs(host, &Placement::new(host, 16, 2), &loads);
            assert!(one
                .iter()
                .all(|c| c.smt_gain == 1.0 && (c.rate_per_ns * c.packet_ns - 1.0).abs() < 1e-12));
            let c = two[0];
            // What the core gives its two processes, from their own busy and exposed parts.
            let want = (2.0_f64).min(c.packet_ns / c.busy_ns);
            assert!((c.smt_gain - want).abs() < 1e-9, "{} vs {want}", c.smt_gain);
            assert!((c.rate_per_ns * 2.0 * c.packet_ns - c.smt_gain).abs() < 1e-9);
            c
        };
        // Every record in the LLC: an LLC hit is shorter than what the reorder buffer hides,
        // so nothing is left to a sibling.
        let few = gain_at(&h, 4096);
        assert_eq!(few.llc_miss_ratio, 0.0);
        assert!(h.llc_hit_ns < h.ooo_hidden_latency_cycles / h.cpu_ghz);
        assert_eq!(few.exposed_ns, 0.0);
        assert!((few.smt_gain - 1.0).abs() < 1e-12, "{}", few.smt_gain);
        // Most records in DRAM: the exposed waits are the sibling's, the gain grows.
        let many = gain_at(&h, 1 << 20);
        assert!(many.llc_miss_ratio > 0.9 && many.exposed_ns > many.busy_ns, "{many:?}");
        assert!(many.smt_gain > 1.5 && many.smt_gain <= 2.0, "{}", many.smt_gain);
        // A core that hides nothing leaves its LLC hits to the sibling too: the gain moves.
        let mut no_ooo = h.clone();
        no_ooo.ooo_hidden_latency_cycles = 0.0;
        let exposed = gain_at(&no_ooo, 4096);
        assert!(exposed.smt_gain > 1.05, "{}", exposed.smt_gain);
        assert!(available_fraction(&h) > 0.0 && available_fraction(&h) <= 1.0);
    }
}
