//! What the flow-host model returns: the whole run, and per process.

use serde::Serialize;

use super::engine::WindowOutput;

/// One stream and its process.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ProcessResult {
    pub flows: usize,
    pub socket: usize,
    pub offered_mpps: f64,
    pub processed_mpps: f64,
    pub max_short_mpps: f64,
    pub dropped_packets: f64,
    pub packet_ns: f64,
    pub llc_miss_ratio: f64,
    pub cpu_util: f64,
}

/// The outcome of one scenario (rates are means over the simulated time).
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Result {
    pub nic: String,
    pub host: String,
    pub cores: u32,
    pub processes: usize,
    pub processes_per_core: u32,
    /// 1 when the scenario needs more cores than the host profile has (extra sockets assumed).
    pub exceeds_host: u8,
    pub flows: u64,
    pub frame_bytes: f64,
    /// Bytes per packet in the host buffer (slice + descriptor, aligned).
    pub stored_bytes: f64,
    pub offered_gbps: f64,
    pub offered_mpps: f64,
    /// Delivered to the host streams (after the FPGA/PCIe limits and the filter).
    pub captured_mpps: f64,
    pub filter_discarded_mpps: f64,
    pub nic_dropped_mpps: f64,
    pub processed_mpps: f64,
    /// Processed traffic counted as the card stores it (frame + descriptor), per core [Mb/s].
    pub processed_mbps_per_core: f64,
    pub processed_mbps: f64,
    pub processed_mpps_per_core: f64,
    pub processed_mpps_per_process: f64,
    /// Highest rate one process reached over a measurement window.
    pub processed_mpps_max_short: f64,
    /// Mean service capacity per core incl. stalls (model: what a core can sustain) \[Mpps\].
    pub capacity_mpps_per_core: f64,
    /// Peak (stall-free) service rate per core \[Mpps\].
    pub peak_mpps_per_core: f64,
    /// Dropped / packets that should have reached the host, over the simulated time.
    pub drop_ratio: f64,
    /// Long-run drop ratio of the fluid model: Σ max(0, offered − mean capacity) / offered
    /// over the processes (what a run much longer than the buffers converges to).
    pub drop_ratio_steady: f64,
    /// Processes whose mean offered load exceeds their mean capacity (drop in a long run).
    pub overloaded_processes: usize,
    pub dropped_packets: f64,
    pub host_dropped_packets: f64,
    /// 1 if drop_ratio > drop_tolerance or any process is overloaded (the buffers only delay
    /// its drops: the study's runs lasted 10 minutes).
    pub drops: u8,
    /// Most loaded process's offered packets over the mean.
    pub imbalance: f64,
    pub flows_per_process_min: usize,
    pub flows_per_process_max: usize,
    pub cpu_util_mean: f64,
    pub cpu_util_max: f64,
    pub packet_ns_mean: f64,
    /// Part of the packet cost spent waiting on misses the out-of-order window cannot hide,
    /// which an SMT sibling can use \[ns\] (mean over processes).
    pub exposed_ns_mean: f64,
    /// Throughput of a core with `processes_per_core` processes relative to one process
    /// alone (1 without SMT; mean over cores).
    pub smt_gain: f64,
    pub l2_miss_ratio_mean: f64,
    pub llc_miss_ratio_mean: f64,
    /// Fewest cores without drops (with `search_cores`; None if not found up to max_cores).
    pub cores_needed: Option<u32>,
    pub per_process: Vec<ProcessResult>,
    pub windows: Vec<WindowOutput>,
    pub sim_wall_s: f64,
}
