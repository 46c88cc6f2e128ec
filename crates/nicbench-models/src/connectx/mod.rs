//! The ConnectX model: NVIDIA ConnectX-4/5/6 and BlueField steering pipelines (seed 000/001,
//! PAM'21), driven by real rule sets and real or generated packets.
//!
//! ```text
//!  generator ─▶ link ─▶ NIC: steering (root table, fast tables, steering cache)
//!                           ─▶ NIC buffer ─▶ PCIe DMA ─▶ RX rings (imissed)
//!      ▲                                                     │
//!      └──── link ◀── TX ◀── NF core (bursts; same-core rule installer) ◀──┘
//! ```
//!
//! - [`params`]: the typed parameters of `kind = "connectx"` profiles.
//! - [`scenario`] / [`result`]: the request/result contract (JSON; schema in `docs/contracts/`).
//! - [`setup`]: traffic flows, pre-installed rules in the classifier and the tables.
//! - [`steering`]: the steering tables and the cost of a lookup path.
//! - [`eswitch`]: ConnectX-5 in switchdev mode (OVS-TC offload into the eSwitch FDB) for the
//!   PVP testbed ([`crate::pvp`]), on the same steering cache.
//! - [`control`]: rule insert/delete/update costs on the installing core.
//! - [`traffic`]: packet sources (generator or pcap replay).
//! - [`testbed`]: the run ([`simulate`]): build, run loop, summary.
//!
//! Invariants: no published result is looked up at run time (the model computes from
//! resources, demands and queues); a run is a pure function of scenario + profile
//! (seeded, simulated time only), except the `sim.wall_s` statistics.

pub mod control;
pub mod eswitch;
pub mod params;
pub mod result;
pub mod scenario;
pub mod setup;
pub mod steering;
pub mod testbed;
pub mod traffic;

pub use params::ConnectxParams;
pub use result::{QueueCounts, SimResult};
pub use scenario::{Pacing, Scenario};
pub use testbed::simulate;

use crate::error::ModelError;
use crate::profile::{profiles_dir, Profile};

/// The `kind` of the profiles this model reads.
pub const KIND: &str = "connectx";

/// Runs a scenario given as JSON; returns the result as JSON.
pub fn simulate_json(scenario_json: &str, progress: &mut dyn FnMut(u64)) -> Result<String, ModelError> {
    let scn = Scenario::from_json(scenario_json)?;
    let result = simulate_scenario(&scn, progress)?;
    serde_json::to_string(&result).map_err(|e| ModelError::Scenario(e.to_string()))
}

/// Loads the scenario's profile (with overrides) and runs it.
pub fn simulate_scenario(scn: &Scenario, progress: &mut dyn FnMut(u64)) -> Result<SimResult, ModelError> {
    let mut profile = Profile::load(&scn.nic, &profiles_dir(scn.profiles_dir.as_deref()))?;
    profile.apply_overrides(&scn.overrides)?;
    simulate(scn, &profile, progress)
}
