//! The result of the ConnectX model (its JSON is the contract with Python; schema and field
//! docs in `docs/contracts/connectx.md`).

use nicbench_sim::{LatencySummary, TimelineBin};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Dropped {
    /// RX ring full when the NIC had a packet to deliver (DPDK `imissed`).
    pub imissed: u64,
    /// NIC packet buffer full in front of the steering pipeline.
    pub nic: u64,
    /// Dropped by a rule's `drop` action.
    pub rule: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Event {
    pub t_s: f64,
    pub what: String,
}

/// Achieved control-plane rate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InstallResult {
    pub rules: u64,
    pub duration_s: f64,
    pub rate_rules_per_s: f64,
    /// Operations refused (full firmware table) or without a target.
    pub refused: u64,
}

/// What the model says about why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ModelSummary {
    pub root_table_occupancy: f64,
    pub tables_traversed_mean: f64,
    pub steering_cache_hit_rate: f64,
    /// Resource with the highest demand / capacity: link, nic_pipeline, root_table, pcie, host_core.
    pub bottleneck: String,
    /// Demand / capacity per resource.
    pub utilization: BTreeMap<String, f64>,
    pub steering_working_set_stes: f64,
    /// Pre-installed rules refused by full firmware tables.
    pub rules_refused: u64,
    /// What an unloaded packet's latency is made of \[µs\]: `fixed` (the testbed outside the
    /// modelled queues: the generator's stacks and timestamping, a fitted constant), `links`
    /// (propagation and serialization both ways, mean frame), `steering` and `pcie` (mean per
    /// packet), `core` (forwarding one packet). Latency above their sum is queueing.
    #[serde(default)]
    pub latency_floor_us: BTreeMap<String, f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SimStats {
    pub packets: u64,
    pub wall_s: f64,
    pub sim_packets_per_s: f64,
    /// Longest a packet waited at the generator's port because the traffic (a trace) came faster
    /// than the line rate; 0 when the port kept up \[µs\].
    #[serde(default)]
    pub link_paced_max_us: f64,
}

/// One forwarding core of a multi-core host (`cores` > 1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CoreResult {
    pub core: u32,
    /// The queues it polls (those that received packets).
    pub queues: Vec<u16>,
    /// Packets it forwarded back to the generator (measured ones).
    pub packets: u64,
    /// Its offered load over its capacity: packets that reached its rings times its cost per
    /// packet, per second of the run (above 1: it cannot keep up, `imissed` grows).
    pub utilization: f64,
    /// Share of the run it was busy (at most 1).
    pub busy_ratio: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SimResult {
    pub nic: String,
    pub offered_gbps: f64,
    pub offered_mpps: f64,
    pub rx_gbps: f64,
    pub rx_mpps: f64,
    pub tx_gbps: f64,
    pub loss_ratio: f64,
    pub dropped: Dropped,
    pub latency_us: LatencySummary,
    /// Packets received per rx queue.
    pub queues: BTreeMap<String, u64>,
    /// Per forwarding core, when the host has more than one (`cores` in the scenario).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cores: Vec<CoreResult>,
    /// Frame bytes received per rx queue, FCS included (a replayed capture's frames get the
    /// 4 B it leaves out), without the 20 B of preamble and gap per frame.
    #[serde(default)]
    pub queue_bytes: BTreeMap<String, u64>,
    pub timeline: Vec<TimelineBin>,
    pub events: Vec<Event>,
    pub install: Option<InstallResult>,
    pub model: ModelSummary,
    pub sim: SimStats,
}
