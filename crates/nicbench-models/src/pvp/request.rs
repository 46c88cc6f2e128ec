//! The PVP model's JSON contract (schema in `docs/contracts/pvp.*.schema.json`):
//! [`Request`] in, [`Result`] out.
//!
//! Invariants: unknown fields are refused; every bad value gets a one-line message naming the
//! field, what it got and what is allowed.

use super::{Refusal, MAX_FRAME_BYTES, MIN_FRAME_BYTES};
use crate::error::ModelError;
use crate::ovs_nic::MegaflowLoad;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Largest flow count accepted (far above any NIC's tables; a larger number is a unit mistake).
pub const MAX_FLOWS: u64 = 1 << 28;

/// The caps a request is held to (by `validate`), by name: what the CLI and the targets state.
pub const LIMITS: &[(&str, u64)] = &[
    ("max_flows", MAX_FLOWS),
    ("min_frame_bytes", MIN_FRAME_BYTES as u64),
    ("max_frame_bytes", MAX_FRAME_BYTES as u64),
];

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// Profile name or path (kind `connectx-eswitch` or `agilio`).
    pub nic: String,
    #[serde(default)]
    pub profiles_dir: Option<String>,
    #[serde(default)]
    pub overrides: BTreeMap<String, f64>,
    /// Flows the generator sends (uniformly); with the default megaflows, the seed's
    /// "flows/rules" (two OpenFlow rules, two megaflows per flow).
    pub flows: u64,
    /// Frame size with FCS \[B\]; with `vxlan`, the inner frame (the wire adds 50 B).
    pub frame_bytes: u32,
    /// VXLAN between the generator and the NIC: decap on the way in, encap on the way out.
    #[serde(default)]
    pub vxlan: bool,
    /// Offered load [Gb/s on the wire, preamble and gap included]; default: the port's line rate.
    #[serde(default)]
    pub offered_gbps: Option<f64>,
    /// The megaflows (counts per mask) from the datapath; default: the seed's PVP rule set.
    #[serde(default)]
    pub megaflows: Option<MegaflowLoad>,
    /// "tc-offload" (default), "kernel" or "dpdk".
    #[serde(default)]
    pub datapath: Option<String>,
    /// The order of the flows' packets: "round-robin" (default: the seed's TRex generator,
    /// addresses incremented per packet) or "random" (independent references).
    #[serde(default)]
    pub flow_order: Option<String>,
}

impl Request {
    pub fn from_json(text: &str) -> std::result::Result<Request, ModelError> {
        serde_json::from_str(text).map_err(|e| ModelError::Scenario(format!("pvp request: {e}")))
    }

    pub(crate) fn validate(&self, link_gbps: f64) -> std::result::Result<(), ModelError> {
        if self.flows == 0 || self.flows > MAX_FLOWS {
            return Err(ModelError::Scenario(format!(
                "flows: got {}, allowed 1 to {MAX_FLOWS}",
                self.flows
            )));
        }
        if !(MIN_FRAME_BYTES..=MAX_FRAME_BYTES).contains(&self.frame_bytes) {
            return Err(ModelError::Scenario(format!(
                "frame_bytes: got {}, allowed {MIN_FRAME_BYTES}-{MAX_FRAME_BYTES} (Ethernet frame with FCS)",
                self.frame_bytes
            )));
        }
        if let Some(g) = self.offered_gbps {
            if !(g.is_finite() && g > 0.0 && g <= link_gbps) {
                return Err(ModelError::Scenario(format!(
                    "offered_gbps: got {g}, allowed > 0 and <= the port's {link_gbps} Gb/s"
                )));
            }
        }
        Ok(())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Result {
    pub nic: String,
    pub kind: String,
    pub datapath: String,
    pub flow_order: String,
    pub flows: u64,
    /// Frame size on the wire (outer headers included) \[B\].
    pub wire_frame_bytes: u32,
    pub offered_mpps: f64,
    /// Packets per second back at the generator \[Mpps\].
    pub mpps: f64,
    /// Received frame bits (FCS included, no preamble/gap) [Gb/s].
    pub gbps: f64,
    /// Received line bits (preamble and gap included: 25 at line rate) [Gb/s].
    pub line_gbps: f64,
    /// Share of offered packets lost.
    pub loss: f64,
    /// Unloaded latency of one packet around the loop, the sum of `latency_parts_us`: both ports'
    /// serialization, the NIC's lookups in both passes, the PCIe crossings (to the VM and back,
    /// and one more each way per kernel datapath pass), the VM's forwarding and any software
    /// datapath passes; no queueing \[µs\].
    pub latency_us: f64,
    /// `latency_us` by part: `wire`, `nic`, `pcie`, `vm`, `software` \[µs\].
    pub latency_parts_us: BTreeMap<String, f64>,
    /// The stage that sets the rate ("offered" when every stage keeps up).
    pub bottleneck: String,
    /// Each stage's packet-rate limit \[Mpps\].
    pub limits_mpps: BTreeMap<String, f64>,
    pub megaflows_offloaded: u64,
    pub megaflows_software: u64,
    pub masks_offloaded: u64,
    pub refused: Vec<Refusal>,
    /// Host cores the software datapath keeps busy (OVS-DPDK: its PMD cores, always).
    pub host_cores_busy: f64,
    pub nic_service_ns: f64,
    pub detail: BTreeMap<String, f64>,
}
