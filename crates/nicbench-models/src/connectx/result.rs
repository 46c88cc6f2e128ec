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

/// Achieved control-plane rate, and what was asked of the installer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InstallResult {
    /// Operations the installer ran (started before the end of the run; refused ones included).
    pub rules: u64,
    /// From the first operation's start to the last one's end \[s\].
    pub duration_s: f64,
    /// `rules` over `duration_s`: operations back to back, what a batch measures (PAM'21 Fig. 5)
    /// \[rules/s\]. In rate mode it can read above the asked rate for a few operations (n of
    /// them over n - 1 gaps): `achieved_rules_per_s` is the one to compare with the asked rate.
    pub rate_rules_per_s: f64,
    /// Operations refused (full firmware table) or without a target.
    pub refused: u64,
    /// Rate mode: the rate asked (`install.rate_per_s`); none for a batch \[rules/s\].
    #[serde(default)]
    pub requested_rules_per_s: Option<f64>,
    /// Rate mode: `rules` over the installer's cycles, from its asked start (`install.start_ns`)
    /// to when its next operation would have been due (or its last end, if later): each
    /// operation with its period, so that it is at most the asked rate (PAM'21's re-armed timer
    /// gives `1 / (cost + 1 / rate)`). A batch: `rate_rules_per_s` \[rules/s\].
    #[serde(default)]
    pub achieved_rules_per_s: f64,
    /// Operations due before the end of the run at the asked rate (operation i of bursts of
    /// `burst` due at start + ⌊i / burst⌋ · burst / rate; a batch: all of it), at most `count`.
    #[serde(default)]
    pub requested: u64,
    /// `requested` less `rules`: operations asked for by the end that the installer had not
    /// started (it runs one at a time; slow operations push the later ones back).
    #[serde(default)]
    pub backlog: u64,
    /// Rate mode, when the installer could not keep up (`backlog` above one burst at the end):
    /// when the operation was due from which on every operation started more than one period
    /// (`burst / rate`) after its due time, i.e. since when the backlog grew \[s\]. None when it
    /// kept up, and for a batch (no rate was asked).
    #[serde(default)]
    pub saturated_s: Option<f64>,
}

/// Where each measured packet ended up: `offered == delivered + dropped + in_flight_at_end`
/// (each term counted where the packet ended, none computed as a difference).
///
/// It covers the measured part of the run: packets sent at or after `warmup_ns` (the generator's
/// send time, as for latency). Packets sent during the warm-up are in none of these (the
/// result's top-level `dropped` counts the whole run, warm-up included; `sim.packets` every
/// packet produced).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PacketAccount {
    /// Packets the generator sent (`offered_mpps` × the measured time).
    pub offered: u64,
    /// Packets back at the generator within the receive window (the sum of `queues`;
    /// `rx_mpps` × `rx_window_s`).
    pub delivered: u64,
    /// Dropped, by cause (measured packets only).
    pub dropped: Dropped,
    /// Packets still inside the testbed when the run's drain ended (`in_flight` says where).
    pub in_flight_at_end: u64,
    pub in_flight: InFlight,
}

/// Where the packets in flight were when the run's drain (10 ms after the last packet left the
/// generator's port) ended.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InFlight {
    /// In the NIC: the steering pipeline, its packet buffer or the PCIe DMA (not in host memory yet).
    pub nic: u64,
    /// In host memory: an rx ring, or its core's burst in progress (DMA'd, not yet forwarded).
    pub rx_rings: u64,
    /// Forwarded by a core but not back at the generator when the drain ended and it stopped
    /// counting (TX queue, return link).
    pub returning: u64,
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
    /// With a rule file: how many of its rules the traffic's flows met.
    #[serde(default)]
    pub rules_met: Option<RulesMet>,
    /// What an unloaded packet's latency is made of \[µs\]: `fixed` (the testbed outside the
    /// modelled queues: the generator's stacks and timestamping, a fitted constant), `links`
    /// (propagation and serialization both ways, mean frame), `steering` and `pcie` (mean per
    /// packet), `core` (forwarding one packet). Latency above their sum is queueing.
    #[serde(default)]
    pub latency_floor_us: BTreeMap<String, f64>,
}

/// What the traffic met of the user's rule file: rules some flow's lookup met (the jump rules on
/// the way included), of all the file's rules (refused ones included); the same without the
/// catch-alls (rules that constrain no field, such as a layout's defaults).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RulesMet {
    pub total: u64,
    pub matched: u64,
    pub with_fields: u64,
    pub with_fields_matched: u64,
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
    /// utilization; for `host_core`, what the cores have left after a same-core installer's
    /// share, `installer_share`) \[Mpps\].
    pub capacity_mpps: f64,
    /// `host_core` with a same-core installer: the share of that core's time the installer took
    /// over the run (its operations stop the forwarding); 0 otherwise.
    #[serde(default)]
    pub installer_share: f64,
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
    /// Received rates: `packets.delivered` (and their wire bytes) over `rx_window_s`.
    pub rx_gbps: f64,
    pub rx_mpps: f64,
    pub tx_gbps: f64,
    /// The time the received rates are computed over \[s\]: from `warmup_ns` to the end of sending
    /// (the duration, or later when the port was still sending a paced backlog), or, when buffers
    /// overflowed (drops at the NIC buffer or an rx ring), to when the last packet came back less
    /// the shortest latency: what the full buffers held at the end drains after it, at the
    /// bottleneck's rate, and counts with its time.
    #[serde(default)]
    pub rx_window_s: f64,
    /// Where every measured packet (sent at or after `warmup_ns`) ended up: offered = delivered +
    /// dropped + in flight at the end, each counted.
    #[serde(default)]
    pub packets: PacketAccount,
    pub loss_ratio: f64,
    /// Dropped over the whole run, warm-up included (`packets.dropped`: the measured part).
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
