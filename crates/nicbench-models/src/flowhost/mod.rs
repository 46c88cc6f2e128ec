//! Virtual flow-metering deployment: an FPGA capture NIC (Napatech) hashing 100 GbE into N
//! host streams, each consumed by one flow-meter process (Argus) on a host core.
//!
//! ```text
//!  wire (line rate, any size) ─▶ FPGA: capture ─ filter ─ slice ─ symmetric hash % N
//!        │ FPGA / PCIe limits: card drops          │
//!        ▼                                          ▼
//!   stream 0 … N-1 host buffers ──▶ flow meter p on core p/ppc (socket by socket)
//!        overflow: card drops        cost: base + flow-record misses (L2 / LLC share),
//!                                    SMT siblings share issue slots, housekeeping stalls
//! ```
//!
//! - [`params`]: the two profile roles (`kind = "flowhost"`), overrides.
//! - [`flows`]: the study's flows, their symmetric Toeplitz hash, Zipf shares.
//! - [`cost`]: the mechanistic per-packet cost and the placement of processes.
//! - [`engine`]: the time-stepped buffers/processes simulation (transients, drops).
//!
//! One [`Request`] in, one [`result::Result`] out ([`FlowHost`], the model in the registry); with `search_cores` the
//! result also holds the fewest cores that process the load without drops.
//!
//! Invariants: no published number is used at run time (everything follows from the
//! profiles and the request); a run is a pure function of request, profiles and seed.

pub mod cost;
pub mod engine;
pub mod flows;
pub mod params;
pub mod result;

use std::collections::BTreeMap;
use std::time::Instant;

use nicbench_sim::SimDuration;
use serde::{Deserialize, Serialize};

use crate::error::ModelError;
use crate::model::{Model, ProfileKind};
use crate::profile::{profiles_dir, Profile};
use cost::{available_fraction, process_costs, Placement};
use engine::{EngineInput, ProcessInput};
use flows::FlowSet;
pub use params::{CaptureNicParams, HostParams, Role};

/// The `kind` of the profiles this model reads.
pub const KIND: &str = "flowhost";

pub const DEFAULT_NIC: &str = "napatech-nt100";
pub const DEFAULT_HOST: &str = "argus-host";
/// Most cores a request or a search may use.
pub const MAX_CORES: u32 = 4096;
/// Frames a request may give, with FCS \[B\]: the one range every nicbench command takes (Ethernet's
/// minimum to a 9000 B jumbo MTU, `nicbench_wire::builder`), so a size one command accepts another does too.
pub const MIN_FRAME_BYTES: u32 = nicbench_wire::builder::MIN_FRAME_SIZE_BYTES;
pub const MAX_FRAME_BYTES: u32 = nicbench_wire::builder::MAX_FRAME_SIZE_BYTES;

/// The caps a request is held to (by `validate`), by name: what the CLI and the targets state.
pub const LIMITS: &[(&str, u64)] = &[
    ("max_cores", MAX_CORES as u64),
    ("min_frame_bytes", MIN_FRAME_BYTES as u64),
    ("max_frame_bytes", MAX_FRAME_BYTES as u64),
];

fn default_nic() -> String {
    DEFAULT_NIC.into()
}
fn default_host() -> String {
    DEFAULT_HOST.into()
}
fn one_u64() -> u64 {
    1
}
fn one_u32() -> u32 {
    1
}
fn eight() -> u32 {
    8
}
fn default_flows() -> u64 {
    16_384
}
fn default_frame() -> f64 {
    750.0
}
fn one_f64() -> f64 {
    1.0
}
fn default_duration() -> u64 {
    1_000_000_000
}
fn default_bin() -> u64 {
    100_000
}
fn default_window() -> u64 {
    100_000_000
}
fn default_max_cores() -> u32 {
    1024
}
fn default_drop_tolerance() -> f64 {
    1e-6
}

/// One scenario. Every field has a default (the study's 8 cores, 16,384 flows, 750 B, 100 Gbps).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// Capture-NIC profile (name or path).
    #[serde(default = "default_nic")]
    pub nic: String,
    /// Flow-meter host profile (name or path).
    #[serde(default = "default_host")]
    pub host: String,
    #[serde(default)]
    pub profiles_dir: Option<String>,
    /// Parameter overrides; each name must belong to the NIC or the host profile.
    #[serde(default)]
    pub overrides: BTreeMap<String, f64>,
    #[serde(default = "one_u64")]
    pub seed: u64,
    /// Physical cores running flow meters (one stream per process).
    #[serde(default = "eight")]
    pub cores: u32,
    /// Processes per core (2 = SMT siblings).
    #[serde(default = "one_u32")]
    pub processes_per_core: u32,
    #[serde(default = "default_flows")]
    pub flows: u64,
    /// If set, flows = round(flows_per_core × cores) (the load grows with the host).
    #[serde(default)]
    pub flows_per_core: Option<f64>,
    /// Frame size incl. FCS \[B\].
    #[serde(default = "default_frame")]
    pub frame_bytes: f64,
    /// Offered rate on the wire [Gb/s] (default and maximum: the line rate; above it is an error).
    #[serde(default)]
    pub rate_gbps: Option<f64>,
    /// Zipf exponent of flow popularity (0: equal flows).
    #[serde(default)]
    pub zipf_exponent: f64,
    /// Fraction of flows the card's filter passes to the host.
    #[serde(default = "one_f64")]
    pub filter_keep: f64,
    /// Payload slicing: bytes kept per frame.
    #[serde(default)]
    pub slice_bytes: Option<f64>,
    #[serde(default = "default_duration")]
    pub duration_ns: u64,
    #[serde(default = "default_bin")]
    pub bin_ns: u64,
    /// Window of the short-term maximum rate.
    #[serde(default = "default_window")]
    pub window_ns: u64,
    /// Also search the fewest cores without drops (`drops == 0`).
    #[serde(default)]
    pub search_cores: bool,
    #[serde(default = "default_max_cores")]
    pub max_cores: u32,
    #[serde(default = "default_drop_tolerance")]
    pub drop_tolerance: f64,
}

impl Request {
    pub fn from_json(text: &str) -> Result<Request, ModelError> {
        let req: Request = serde_json::from_str(text).map_err(|e| ModelError::Scenario(e.to_string()))?;
        req.validate()?;
        Ok(req)
    }

    fn validate(&self) -> Result<(), ModelError> {
        let bad = |m: String| Err(ModelError::Scenario(m));
        if self.cores == 0 || self.cores > MAX_CORES {
            return bad(format!("cores must be in 1..={MAX_CORES}, found {}", self.cores));
        }
        if self.max_cores == 0 || self.max_cores > MAX_CORES {
            return bad(format!(
                "max_cores must be in 1..={MAX_CORES}, found {}",
                self.max_cores
            ));
        }
        if self.processes_per_core == 0 {
            return bad("processes_per_core must be at least 1".into());
        }
        if !(self.frame_bytes.is_finite()
            && (f64::from(MIN_FRAME_BYTES)..=f64::from(MAX_FRAME_BYTES)).contains(&self.frame_bytes))
        {
            return bad(format!(
                "frame_bytes must be in [{MIN_FRAME_BYTES}, {MAX_FRAME_BYTES}], found {}",
                self.frame_bytes
            ));
        }
        if let Some(r) = self.rate_gbps {
            if !(r.is_finite() && r > 0.0) {
                return bad(format!("rate_gbps must be > 0, found {r}"));
            }
        }
        if let Some(s) = self.slice_bytes {
            if !(s.is_finite() && s >= 1.0) {
                return bad(format!("slice_bytes must be ≥ 1, found {s}"));
            }
        }
        if let Some(f) = self.flows_per_core {
            if !(f.is_finite() && f > 0.0) {
                return bad(format!("flows_per_core must be > 0, found {f}"));
            }
        }
        if self.bin_ns == 0 || self.duration_ns < self.bin_ns || self.window_ns < self.bin_ns {
            return bad(format!(
                "need 0 < bin_ns ≤ window_ns and bin_ns ≤ duration_ns (bin {}, window {}, duration {})",
                self.bin_ns, self.window_ns, self.duration_ns
            ));
        }
        if self.duration_ns / self.bin_ns > 50_000_000 {
            return bad("duration_ns / bin_ns exceeds 50M bins: use a coarser bin".into());
        }
        if !(self.drop_tolerance.is_finite() && self.drop_tolerance >= 0.0) {
            return bad(format!("drop_tolerance must be ≥ 0, found {}", self.drop_tolerance));
        }
        Ok(())
    }

    fn flows_for(&self, cores: u32) -> u64 {
        match self.flows_per_core {
            Some(f) => (f * f64::from(cores)).round().max(1.0) as u64,
            None => self.flows,
        }
    }
}

/// Profiles with the request's overrides applied, as typed parameters.
pub struct Profiles {
    pub nic: CaptureNicParams,
    pub host: HostParams,
    pub nic_name: String,
    pub host_name: String,
}

impl Profiles {
    pub fn load(req: &Request) -> Result<Profiles, ModelError> {
        let dir = profiles_dir(req.profiles_dir.as_deref());
        let mut nic = Profile::load(&req.nic, &dir)?;
        params::expect_role(&nic, Role::CaptureNic, "nic")?;
        let mut host = Profile::load(&req.host, &dir)?;
        params::expect_role(&host, Role::Host, "host")?;
        for (name, &value) in &req.overrides {
            if nic.declares(name) {
                nic.set(name, value)?;
            } else if host.declares(name) {
                host.set(name, value)?;
            } else {
                return Err(ModelError::Profile(format!(
                    "override of unknown parameter '{name}' (neither {} nor {} declares it)",
                    nic.name, host.name
                )));
            }
        }
        Ok(Profiles {
            nic: nic.params()?,
            host: host.params()?,
            nic_name: nic.name,
            host_name: host.name,
        })
    }
}

/// The flow-host model in the registry: a [`Request`] in, a [`result::Result`] out.
pub struct FlowHost;

impl Model for FlowHost {
    const NAME: &'static str = "flowhost";
    const SUMMARY: &'static str =
        "A Napatech capture NIC feeding N Argus-style flow-meter processes on host cores (100G Argus study)";
    const PROFILE_KINDS: &'static [&'static str] = &[KIND];
    const LIMITS: &'static [(&'static str, u64)] = LIMITS;
    type Request = Request;
    type Result = result::Result;

    fn request_from_json(text: &str) -> Result<Request, ModelError> {
        Request::from_json(text)
    }

    fn run(request: &Request, progress: &mut dyn FnMut(u64)) -> Result<result::Result, ModelError> {
        simulate_reporting(request, progress)
    }
}

/// The `flowhost` profile kind: a capture NIC's or a host's parameters (the profile's role says which).
pub const PROFILE_KIND: ProfileKind = ProfileKind {
    name: KIND,
    check: |p| params::role(p).map(drop),
};

pub fn simulate(req: &Request) -> Result<result::Result, ModelError> {
    simulate_reporting(req, &mut |_| {})
}

/// [`simulate`], calling `progress` now and then: with the flows made while the flow set is drawn,
/// then the simulated ns of each run (so that a caller can stop it; not a measure to show).
pub fn simulate_reporting(req: &Request, progress: &mut dyn FnMut(u64)) -> Result<result::Result, ModelError> {
    req.validate()?;
    let started = Instant::now();
    let profiles = Profiles::load(req)?;
    let mut cache = FlowCache::default();
    let mut result = run_cores(req, &profiles, req.cores, &mut cache, progress)?;
    if req.search_cores {
        result.cores_needed = search_cores(req, &profiles, &mut cache, progress)?;
    }
    result.sim_wall_s = started.elapsed().as_secs_f64();
    Ok(result)
}

/// The flow set of the last flow count used (a search with fixed flows reuses it).
#[derive(Default)]
struct FlowCache {
    flows: u64,
    set: Option<(FlowSet, f64)>,
}

impl FlowCache {
    fn get(
        &mut self,
        req: &Request,
        nic: &CaptureNicParams,
        flows: u64,
        progress: &mut dyn FnMut(u64),
    ) -> Result<&(FlowSet, f64), ModelError> {
        if self.set.is_none() || self.flows != flows {
            let n = usize::try_from(flows).map_err(|_| ModelError::Scenario(format!("flows {flows} too large")))?;
            let all = FlowSet::generate_reporting(n, req.seed, req.zipf_exponent, nic.hash_ports >= 0.5, progress)?;
            self.set = Some(all.filtered(req.filter_keep)?);
            self.flows = flows;
        }
        self.set
            .as_ref()
            .ok_or_else(|| ModelError::Scenario("flow set missing".into()))
    }
}

fn run_cores(
    req: &Request,
    pr: &Profiles,
    cores: u32,
    cache: &mut FlowCache,
    progress: &mut dyn FnMut(u64),
) -> Result<result::Result, ModelError> {
    let (nic, host) = (&pr.nic, &pr.host);
    if f64::from(req.processes_per_core) > host.smt_threads_per_core {
        return Err(ModelError::Scenario(format!(
            "processes_per_core = {} exceeds the host's {} hardware threads per core",
            req.processes_per_core, host.smt_threads_per_core
        )));
    }
    if let Some(r) = req.rate_gbps {
        // A port cannot put more on the wire than its line rate: refused, not clamped (a sweep
        // over rates would otherwise report the line rate's results under a higher rate).
        if r > nic.link_gbps * (1.0 + 1e-9) {
            return Err(ModelError::Scenario(format!(
                "rate_gbps = {r} exceeds the capture card's line rate of {} Gbps",
                nic.link_gbps
            )));
        }
    }
    let place = Placement::new(host, cores as usize, req.processes_per_core as usize);
    let processes = place.processes();
    if processes as f64 > nic.max_streams {
        return Err(ModelError::Scenario(format!(
            "{processes} processes need {processes} streams, the card distributes to at most {}",
            nic.max_streams
        )));
    }
    let flows_total = req.flows_for(cores);
    let (set, kept_share) = cache.get(req, nic, flows_total, progress)?;
    let loads = set.assign(processes);

    // The card: wire rate → FPGA limit → filter → PCIe limit.
    let offered_gbps = req.rate_gbps.unwrap_or(nic.link_gbps);
    let wire_bits = (req.frame_bytes + f64::from(nicbench_wire::builder::WIRE_OVERHEAD_BYTES)) * 8.0;
    let offered_pps = offered_gbps * 1e9 / wire_bits;
    let fpga_pps = offered_pps.min(nic.fpga_max_mpps * 1e6);
    let filtered_pps = fpga_pps * kept_share;
    let stored = nic.stored_bytes(req.frame_bytes, req.slice_bytes);
    let captured_pps = filtered_pps.min(nic.pcie_gbps * 1e9 / (stored * 8.0));
    // Card drops of packets the filter would pass: over the FPGA's rate, then over PCIe.
    let nic_dropped_pps = (offered_pps - fpga_pps) * kept_share + (filtered_pps - captured_pps);

    let buffer_packets = (nic.host_buffer_bytes_per_stream / stored).floor();
    let costs = process_costs(host, &place, &loads);
    let engine_in = EngineInput {
        processes: loads
            .iter()
            .zip(&costs)
            .map(|(l, c)| ProcessInput {
                arrival_per_ns: captured_pps * l.share * 1e-9,
                rate_per_ns: c.rate_per_ns,
                buffer_packets,
            })
            .collect(),
        stall_interval: SimDuration::from_ns_f64(host.stall_interval_us * 1e3),
        stall_mean: SimDuration::from_ns_f64(host.stall_mean_us * 1e3),
        bin: SimDuration::from_ns(req.bin_ns),
        duration: SimDuration::from_ns(req.duration_ns),
        window: SimDuration::from_ns(req.window_ns),
        seed: req.seed,
    };
    let out = engine::run_reporting(&engine_in, progress);
    let run_s = (req.duration_ns.div_ceil(req.bin_ns) * req.bin_ns) as f64 * 1e-9;

    let sum = |f: &dyn Fn(&engine::ProcessOutput) -> f64| out.processes.iter().map(f).sum::<f64>();
    let processed = sum(&|o| o.processed_packets);
    let host_dropped = sum(&|o| o.dropped_packets);
    let host_offered = sum(&|o| o.offered_packets);
    let nic_dropped = nic_dropped_pps * run_s;
    // What the generator sent in the run: the engine paces the aggregate in whole packets (within
    // one packet of the nominal rate, never above it). Offered and captured are counted from those
    // arrivals (plus what the card dropped or filtered before the host, fluid), so that
    // processed ≤ captured ≤ offered holds in every run.
    let captured_sent_pps = host_offered / run_s;
    let offered_sent_pps = offered_pps - captured_pps + captured_sent_pps;
    // The filter's discards are not losses: compare with what should have reached the host.
    let expected = nic_dropped + host_offered;
    let dropped = host_dropped + nic_dropped;
    let drop_ratio = if expected > 0.0 {
        (dropped / expected).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mean_offered = host_offered / processes as f64;
    let max_offered = out.processes.iter().map(|o| o.offered_packets).fold(0.0, f64::max);
    let avail = available_fraction(host);
    let rate_sum_per_ns: f64 = costs.iter().map(|c| c.rate_per_ns).sum();
    let n = processes as f64;
    let per_process: Vec<result::ProcessResult> = out
        .processes
        .iter()
        .zip(&costs)
        .zip(&loads)
        .enumerate()
        .map(|(p, ((o, c), l))| result::ProcessResult {
            flows: l.flows,
            socket: place.socket_of(host, p),
            offered_mpps: o.offered_packets / run_s / 1e6,
            processed_mpps: o.processed_packets / run_s / 1e6,
            max_short_mpps: o.max_window_rate_per_ns * 1e3,
            dropped_packets: o.dropped_packets,
            packet_ns: c.packet_ns,
            llc_miss_ratio: c.llc_miss_ratio,
            cpu_util: o.busy_fraction,
        })
        .collect();
    let cores_f = f64::from(cores);
    let (mut excess_pps, mut overloaded) = (0.0, 0usize);
    for (l, c) in loads.iter().zip(&costs) {
        let offered = captured_pps * l.share;
        let capacity = c.rate_per_ns * avail * 1e9;
        if offered > capacity {
            excess_pps += offered - capacity;
            overloaded += 1;
        }
    }
    let expected_pps = offered_pps * kept_share;
    let drop_ratio_steady = if expected_pps > 0.0 {
        ((excess_pps + nic_dropped_pps) / expected_pps).clamp(0.0, 1.0)
    } else {
        0.0
    };
    Ok(result::Result {
        nic: pr.nic_name.clone(),
        host: pr.host_name.clone(),
        cores,
        processes,
        processes_per_core: req.processes_per_core,
        exceeds_host: u8::from(place.exceeds_host(host)),
        flows: flows_total,
        frame_bytes: req.frame_bytes,
        stored_bytes: stored,
        offered_gbps: offered_sent_pps * wire_bits / 1e9,
        offered_mpps: offered_sent_pps / 1e6,
        captured_mpps: captured_sent_pps / 1e6,
        filter_discarded_mpps: (fpga_pps - filtered_pps) / 1e6,
        nic_dropped_mpps: nic_dropped_pps / 1e6,
        processed_mpps: processed / run_s / 1e6,
        processed_mbps_per_core: processed / run_s * stored * 8.0 / 1e6 / cores_f,
        processed_mbps: processed / run_s * stored * 8.0 / 1e6,
        processed_mpps_per_core: processed / run_s / 1e6 / cores_f,
        processed_mpps_per_process: processed / run_s / 1e6 / n,
        processed_mpps_max_short: per_process.iter().map(|p| p.max_short_mpps).fold(0.0, f64::max),
        capacity_mpps_per_core: rate_sum_per_ns * avail * 1e3 / cores_f,
        peak_mpps_per_core: rate_sum_per_ns * 1e3 / cores_f,
        drop_ratio,
        drop_ratio_steady,
        overloaded_processes: overloaded,
        dropped_packets: dropped,
        host_dropped_packets: host_dropped,
        drops: u8::from(drop_ratio > req.drop_tolerance || overloaded > 0),
        imbalance: if mean_offered > 0.0 {
            max_offered / mean_offered
        } else {
            1.0
        },
        flows_per_process_min: loads.iter().map(|l| l.flows).min().unwrap_or(0),
        flows_per_process_max: loads.iter().map(|l| l.flows).max().unwrap_or(0),
        cpu_util_mean: out.processes.iter().map(|o| o.busy_fraction).sum::<f64>() / n,
        cpu_util_max: out.processes.iter().map(|o| o.busy_fraction).fold(0.0, f64::max),
        packet_ns_mean: costs.iter().map(|c| c.packet_ns).sum::<f64>() / n,
        exposed_ns_mean: costs.iter().map(|c| c.exposed_ns).sum::<f64>() / n,
        smt_gain: costs.iter().map(|c| c.smt_gain).sum::<f64>() / n,
        l2_miss_ratio_mean: costs.iter().map(|c| c.l2_miss_ratio).sum::<f64>() / n,
        llc_miss_ratio_mean: costs.iter().map(|c| c.llc_miss_ratio).sum::<f64>() / n,
        cores_needed: None,
        per_process,
        windows: out.windows,
        sim_wall_s: 0.0,
    })
}

/// The fewest cores (same processes per core) without drops (`drops == 0`): doubling
/// until a count passes, then bisection (drops are taken as monotone in cores).
fn search_cores(
    req: &Request,
    pr: &Profiles,
    cache: &mut FlowCache,
    progress: &mut dyn FnMut(u64),
) -> Result<Option<u32>, ModelError> {
    let limit_streams = (pr.nic.max_streams as u32) / req.processes_per_core.max(1);
    let max = req.max_cores.min(limit_streams).max(1);
    let mut passes = |cores: u32, cache: &mut FlowCache| -> Result<bool, ModelError> {
        let r = run_cores(req, pr, cores, cache, progress)?;
        Ok(r.drops == 0)
    };
    let (mut low, mut high) = (0u32, 1u32);
    loop {
        if passes(high, cache)? {
            break;
        }
        if high >= max {
            return Ok(None);
        }
        low = high;
        high = (high * 2).min(max);
    }
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if passes(mid, cache)? {
            high = mid;
        } else {
            low = mid;
        }
    }
    Ok(Some(high))
}

#[cfg(test)]
mod tests;
