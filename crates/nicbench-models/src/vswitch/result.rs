//! What the virtual OVS datapath returns: the megaflows a trace installed, and the run's counts.

use std::collections::BTreeMap;

use nicbench_rules::openflow::DpFlow;
use serde::{Deserialize, Serialize};

use super::{cache, HostCosts, OffloadCaps};

/// One megaflow of the run.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MegaflowOut {
    #[schemars(with = "serde_json::Value")]
    pub flow: DpFlow,
    /// The flow in `dpctl/dump-flows` syntax.
    pub text: String,
    /// Why it is not offloaded, when hw-offload was on.
    pub reason: Option<String>,
    /// Still installed at the end of the run (false: a revalidator deleted it).
    pub installed: bool,
    /// Index (0-based, file order) of the packet whose upcall installed it.
    pub first_packet: u64,
}

/// The run's outcome.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Result {
    pub megaflows: Vec<MegaflowOut>,
    /// Refusal reason → megaflows refused for it.
    pub refusals: BTreeMap<String, u64>,
    pub packets: u64,
    pub bytes: u64,
    /// First to last packet \[s\].
    pub duration_s: f64,
    pub upcalls: u64,
    /// `None` when the trace spans no time.
    pub upcalls_per_s: Option<f64>,
    /// Upcalls whose flow was not installed (flow limit reached).
    pub flow_limit_hits: u64,
    /// The handler threads' work: upcalls, their queue, the set-up rate.
    pub flow_setup: FlowSetup,
    /// Packets on offloaded flows (handled by the NIC).
    pub hw_packets: u64,
    /// Packets on flows in the software datapaths (dp:ovs or tc software).
    pub sw_packets: u64,
    pub offloaded_flows: u64,
    pub not_offloaded_flows: u64,
    pub revalidators: cache::RevalidatorStats,
    /// Host CPU time: software packets, upcalls, revalidator dumps \[core·s\].
    pub host_busy_core_s: f64,
    /// `host_busy_core_s / duration_s`; `None` when the trace spans no time.
    pub host_cores_busy: Option<f64>,
    pub costs: HostCosts,
    pub caps: Option<OffloadCaps>,
    /// Set when no rule matches the request's `in_port` while rules match other ports: those
    /// ports (OVS runs the packets anyway, through the rules without an `in_port` match; usually
    /// a misnamed port).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_port_unmatched: Option<Vec<String>>,
}

/// Flow set-up on the handler threads (`cache.rs`, `run.rs`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FlowSetup {
    /// `n-handler-threads`.
    pub handler_threads: u32,
    /// Upcalls a handler took (`upcalls` less the lost ones), duplicates included.
    pub upcalls_handled: u64,
    /// Upcalls of packets whose flow's upcall was still queued or in service
    /// (`handler_duplicate_upcall`): handled and executed, installing nothing.
    pub duplicate_upcalls: u64,
    /// Misses a full handler queue dropped (`dpctl/show` "lost"); their packets are dropped.
    pub lost_upcalls: u64,
    /// Megaflows the upcalls installed.
    pub flows_set_up: u64,
    /// Flows set up per second: `flows_set_up` over the time from the first upcall to the last
    /// install (`None`: none set up).
    pub setup_per_s: Option<f64>,
    /// The longest handler queue (upcalls queued or in service on one thread).
    pub max_queued: u64,
    /// Handler threads' busy time, `upcalls_handled` × `upcall_us` \[core·s\].
    pub handler_busy_s: f64,
    /// `handler_busy_s` / (threads × `duration_s`); above 1 when upcalls are still queued at the end.
    pub handler_utilization: Option<f64>,
    /// Revalidator threads' busy time: the dumps' durations × threads \[core·s\].
    pub revalidator_busy_s: f64,
    /// `revalidator_busy_s` / (threads × `duration_s`).
    pub revalidator_utilization: Option<f64>,
    /// Host cores the flow set-up and revalidation took: (handler + revalidator busy) / `duration_s`.
    pub setup_cores_busy: Option<f64>,
}
