//! nicbench-models: virtual NICs — mechanistic device models on the `nicbench-sim`
//! engine, with every parameter from a profile (`profiles/*.toml`).
//!
//! ```text
//!  generator ─▶ link ─▶ NIC: steering (root table, fast tables, steering cache)
//!                           ─▶ NIC buffer ─▶ PCIe DMA ─▶ RX rings (imissed)
//!      ▲                                                     │
//!      └──── link ◀── TX ◀── NF core (bursts; same-core rule installer) ◀──┘
//! ```
//!
//! - [`profile`]: profiles and their typed parameters ([`NicParams`]), overrides.
//! - [`scenario`] / [`result`]: the JSON contract with the Python study side.
//! - [`setup`]: traffic flows, pre-installed rules in the classifier and the tables.
//! - [`steering`]: the ConnectX steering model (costs per lookup path).
//! - [`control`]: rule insert/delete/update costs on the installing core.
//! - [`testbed`]: the run loop ([`simulate`]).
//!
//! Invariants: no published result is looked up at run time (the models compute from
//! resources, demands and queues); a run is a pure function of scenario + profile
//! (seeded, simulated time only), except the `sim.wall_s` statistics.

pub mod control;
pub mod error;
pub mod flowhost;
pub mod offpath;
pub mod profile;
pub mod result;
pub mod scenario;
pub mod setup;
pub mod steering;
pub mod testbed;
pub mod traffic;

pub use error::ModelError;
pub use profile::{builtin_profiles, profiles_of_kind, NicParams, Param, Profile, STEERING_KIND};
pub use result::SimResult;
pub use scenario::{Pacing, Scenario};
pub use testbed::simulate;

use std::path::{Path, PathBuf};

/// The profiles folder: `explicit`, else env `NICBENCH_PROFILES`, else `<checkout>/profiles`.
pub fn profiles_dir(explicit: Option<&str>) -> PathBuf {
    if let Some(dir) = explicit {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("NICBENCH_PROFILES") {
        return PathBuf::from(dir);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../profiles")
}

/// Runs a scenario given as JSON; returns the result as JSON.
pub fn simulate_json(scenario_json: &str, progress: &mut dyn FnMut(u64)) -> Result<String, ModelError> {
    let scn = Scenario::from_json(scenario_json)?;
    let result = simulate_scenario(&scn, progress)?;
    serde_json::to_string(&result).map_err(|e| ModelError::Scenario(e.to_string()))
}

/// Loads the scenario's profile (with overrides) and runs it.
pub fn simulate_scenario(scn: &Scenario, progress: &mut dyn FnMut(u64)) -> Result<SimResult, ModelError> {
    let dir = profiles_dir(scn.profiles_dir.as_deref());
    let mut profile = Profile::load(&scn.nic, Some(&dir))?;
    profile.apply_overrides(&scn.overrides)?;
    simulate(scn, &profile, progress)
}

/// A profile as JSON (every parameter with value, unit, provenance).
pub fn profile_json(name_or_path: &str, profiles_dir_explicit: Option<&str>) -> Result<String, ModelError> {
    let profile = Profile::load(name_or_path, Some(&profiles_dir(profiles_dir_explicit)))?;
    serde_json::to_string(&profile).map_err(|e| ModelError::Profile(e.to_string()))
}
