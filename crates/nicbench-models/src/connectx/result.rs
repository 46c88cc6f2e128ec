//! The result of the ConnectX model (its JSON is the contract with Python; schema and field
//! docs in `docs/contracts/connectx.result.schema.json`).

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
    /// The bottleneck in the user's terms: what it is, its cost per packet, the rate it allows
    /// and the profile parameters behind it with their provenance.
    #[serde(default)]
    pub bottleneck_detail: Bottleneck,
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

/// The limiting resource of a run, named so that a reader can judge it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Bottleneck {
    /// The resource (a key of `utilization`).
    pub resource: String,
    /// What it is, in words.
    pub what: String,
    /// Its mean time per packet at this traffic \[ns\] (for `host_core`: one core's; for
    /// `link`: the mean frame's time on the wire).
    pub ns_per_packet: f64,
    /// The packet rate it lets through at this traffic (offered / utilization; for the root
    /// table and the pipeline, which share the steering engine, offered / their summed
    /// utilization) \[Mpps\].
    pub capacity_mpps: f64,
    /// The limit that would bind next if this one were lifted (a key of `utilization`; "" when
    /// there is none) and the rate it lets through \[Mpps\].
    #[serde(default)]
    pub next_resource: String,
    #[serde(default)]
    pub next_capacity_mpps: f64,
    /// The profile parameters that set its cost: name → value, unit, provenance.
    pub parameters: BTreeMap<String, ParamNote>,
}

/// A profile parameter as a result quotes it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ParamNote {
    pub value: f64,
    pub unit: String,
    pub provenance: String,
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

/// What one rx queue received.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QueueCounts {
    /// Packets received (back at the generator).
    pub packets: u64,
    /// Their frame bytes, FCS included (a replayed capture's frames get the 4 B it leaves out),
    /// without the 20 B of preamble and gap per frame.
    pub bytes: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Result {
    pub nic: String,
    pub offered_gbps: f64,
    pub offered_mpps: f64,
    pub rx_gbps: f64,
    pub rx_mpps: f64,
    pub tx_gbps: f64,
    pub loss_ratio: f64,
    pub dropped: Dropped,
    pub latency_us: LatencySummary,
    /// Received per rx queue (queue id → packets and bytes), the shape of `classify --json`'s
    /// `queues`.
    pub queues: BTreeMap<String, QueueCounts>,
    /// Per forwarding core, when the host has more than one (`cores` in the scenario).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cores: Vec<CoreResult>,
    pub timeline: Vec<TimelineBin>,
    pub events: Vec<Event>,
    pub install: Option<InstallResult>,
    pub model: ModelSummary,
    pub sim: SimStats,
}
