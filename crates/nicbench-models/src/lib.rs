//! nicbench-models: virtual NICs — mechanistic device models, one folder each, with every
//! parameter from a profile (`profiles/*.toml`, one loader: [`profile`]).
//!
//! Every model implements one interface, [`Model`] (typed `Request` in, typed `Result` out, a
//! `run`), and is one line of [`MODELS`]; [`registry`] runs a request by model name, exports the
//! contracts' JSON Schemas and checks profiles against [`PROFILE_KINDS`]:
//!
//! - [`connectx`]: ConnectX-4/5/6 and BlueField steering pipelines on the `nicbench-sim`
//!   engine (PAM'21), driven by real rules and packets.
//! - [`offpath`]: the BlueField-2 off-path SmartNIC's RDMA/PCIe paths (Wei et al.), analytic.
//! - [`flowhost`]: a Napatech capture NIC feeding N flow-metering cores (100G Argus study).
//! - [`pvp`]: the Red Hat PVP testbed around an OVS-TC offload NIC: [`connectx::eswitch`]
//!   (ConnectX-5 switchdev) or [`agilio`] (Netronome Agilio CX), analytic (seed 002).
//! - [`vswitch`]: the virtual Open vSwitch datapath; [`ovs_pvp`]: PVP through it with the user's
//!   rules and trace, in one run.
//!
//! Layers inside the crate: [`profile`] (loading, overrides, typed parameter sets) and [`model`]
//! (the interface) know no model; the models use them; this file and [`registry`] list the models.
//!
//! Invariants: no published result is looked up at run time (the models compute from
//! resources, demands and queues); a run is a pure function of request + profile (seeded,
//! simulated time only), except wall-clock statistics.

pub mod agilio;
pub mod common;
pub mod connectx;
pub mod error;
pub mod flowhost;
pub mod model;
pub mod offpath;
pub mod ovs_nic;
pub mod ovs_pvp;
pub mod profile;
pub mod pvp;
pub mod registry;
pub mod vswitch;

pub use error::ModelError;
pub use model::{Contract, Model, ModelEntry, ProfileKind};
pub use profile::{profiles_dir, ModelParams, Param, Profile};
pub use registry::{profile_json, run_json};

/// The registry: every model, by the name the binding and the contracts use.
pub static MODELS: &[ModelEntry] = &[
    ModelEntry::of::<connectx::Connectx>(),
    ModelEntry::of::<offpath::Offpath>(),
    ModelEntry::of::<flowhost::FlowHost>(),
    ModelEntry::of::<pvp::Pvp>(),
    ModelEntry::of::<vswitch::Vswitch>(),
    ModelEntry::of::<ovs_pvp::OvsPvp>(),
];

/// Every profile kind (the `kind` key of `profiles/*.toml`) with the check of its parameters.
pub static PROFILE_KINDS: &[ProfileKind] = &[
    connectx::PROFILE_KIND,
    offpath::PROFILE_KIND,
    flowhost::PROFILE_KIND,
    connectx::eswitch::PROFILE_KIND,
    agilio::PROFILE_KIND,
];
