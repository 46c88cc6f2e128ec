//! The interface between an OVS datapath and an OVS-TC offload NIC, below both: what the datapath
//! hands the NIC for a PVP run ([`load`]: megaflow counts per mask and ingress), what the NIC
//! answers ([`NicCost`] per packet, a [`Refusal`] per mask it did not take), the order in which
//! flows reach it ([`FlowOrder`]), and the host around it ([`host`]). The NIC models
//! ([`crate::agilio`], [`crate::connectx::eswitch`]) and the testbed that composes them
//! ([`crate::pvp`]) import this module; it imports none of them.

pub mod host;
pub mod load;

pub use host::HostParams;
pub use load::{Ingress, MaskLoad, MegaflowLoad};

use crate::error::ModelError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a NIC spends on one PVP packet (both passes).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NicCost {
    /// NIC time per packet that limits its packet rate \[ns\].
    pub service_ns: f64,
    /// Unloaded NIC latency of a packet (both passes) \[ns\].
    pub latency_ns: f64,
    /// Mechanism quantities (hit rates, working sets, bounds), by name.
    pub detail: BTreeMap<String, f64>,
}

/// Megaflows of a mask the NIC did not take, and why (as the driver would log it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Refusal {
    /// Index into the request's masks.
    pub mask: usize,
    pub megaflows: u64,
    pub reason: String,
}

/// The variant of `all` (in `NAMES` order) named `text`, else a one-line error naming `field`.
pub(crate) fn choice<T: Copy>(field: &str, text: &str, names: &[&str], all: &[T]) -> Result<T, ModelError> {
    names
        .iter()
        .position(|&n| n == text)
        .map(|i| all[i])
        .ok_or_else(|| ModelError::Scenario(format!("{field}: unknown '{text}' (allowed: {})", names.join(", "))))
}

/// The order in which the generator's flows send their packets, which decides how a cache
/// in front of the NIC's tables behaves once the flows outgrow it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowOrder {
    /// Flows take turns, one packet each (TRex's field engine incrementing the addresses per
    /// packet, `op="inc"`, as Red Hat's PVP script configures it): the seed's testbed.
    RoundRobin,
    /// Independent references: each packet's flow drawn at random (mixed real traffic).
    Random,
}

impl FlowOrder {
    pub const NAMES: [&'static str; 2] = ["round-robin", "random"];

    pub fn parse(text: &str) -> Result<FlowOrder, ModelError> {
        choice(
            "flow_order",
            text,
            &FlowOrder::NAMES,
            &[FlowOrder::RoundRobin, FlowOrder::Random],
        )
    }

    pub fn name(self) -> &'static str {
        FlowOrder::NAMES[self as usize]
    }
}
