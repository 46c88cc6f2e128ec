//! nicbench-models: virtual NICs — mechanistic device models, one folder each, with every
//! parameter from a profile (`profiles/*.toml`, one loader: [`profile`]).
//!
//! - [`connectx`]: ConnectX-4/5/6 and BlueField steering pipelines on the `nicbench-sim`
//!   engine (PAM'21), driven by real rules and packets.
//! - [`offpath`]: the BlueField-2 off-path SmartNIC's RDMA/PCIe paths (Wei et al.), analytic.
//! - [`flowhost`]: a Napatech capture NIC feeding N flow-metering cores (100G Argus study).
//! - [`pvp`]: the Red Hat PVP testbed around an OVS-TC offload NIC: [`connectx::eswitch`]
//!   (ConnectX-5 switchdev) or [`agilio`] (Netronome Agilio CX), analytic (seed 002).
//!
//! Each model takes one request and returns one result, both serde types whose JSON is the
//! contract with the Python side ([`contract`] generates their JSON Schemas).
//!
//! Invariants: no published result is looked up at run time (the models compute from
//! resources, demands and queues); a run is a pure function of request + profile (seeded,
//! simulated time only), except wall-clock statistics.

pub mod agilio;
pub mod common;
pub mod connectx;
pub mod contract;
pub mod error;
pub mod flowhost;
pub mod model;
pub mod offpath;
pub mod profile;
pub mod pvp;
pub mod vswitch;

pub use error::ModelError;
pub use model::{Model, ProfileKind};
pub use profile::{profiles_dir, ModelParams, Param, Profile};

/// Checks a profile against the parameters of the model its `kind` names (used by the loader).
pub(crate) fn check_profile(p: &Profile) -> Result<(), ModelError> {
    match p.kind.as_str() {
        connectx::KIND => p.params::<connectx::ConnectxParams>().map(drop),
        offpath::KIND => p.params::<offpath::OffpathParams>().map(drop),
        flowhost::KIND => flowhost::params::role(p).map(drop),
        connectx::eswitch::KIND => p.params::<connectx::eswitch::EswitchParams>().map(drop),
        agilio::KIND => p.params::<agilio::AgilioParams>().map(drop),
        other => Err(p.error(format_args!(
            "kind '{other}' names no model (kinds: {})",
            profile::KINDS.join(", ")
        ))),
    }
}

/// A profile (name or path; `profiles_dir` as in [`profiles_dir`]) as JSON: kind and every
/// parameter with value, unit, provenance.
pub fn profile_json(name_or_path: &str, profiles_dir_explicit: Option<&str>) -> Result<String, ModelError> {
    let profile = Profile::load(name_or_path, &profiles_dir(profiles_dir_explicit))?;
    serde_json::to_string(&profile).map_err(|e| ModelError::Profile(e.to_string()))
}
