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
//! - [`request`] / [`result`]: the request/result contract (JSON; schema in `docs/contracts/`);
//!   [`Connectx`] is the model in the registry ([`crate::model::Model`]).
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
pub mod request;
pub mod result;
pub mod setup;
pub mod steering;
pub mod testbed;
pub mod traffic;

pub use params::ConnectxParams;
pub use request::{Pacing, Request};
pub use result::QueueCounts;
pub use testbed::simulate;

use crate::error::ModelError;
use crate::model::{Model, ProfileKind};
use crate::profile::{profiles_dir, Profile};

/// The `kind` of the profiles this model reads.
pub const KIND: &str = "connectx";

/// The `connectx` profile kind: the parameters of [`ConnectxParams`].
pub const PROFILE_KIND: ProfileKind = ProfileKind {
    name: KIND,
    check: check_profile,
};

fn check_profile(p: &Profile) -> Result<(), ModelError> {
    p.params::<ConnectxParams>().map(drop)
}

/// The ConnectX model in the registry: a [`Request`] (scenario) in, a [`result::Result`] out.
pub struct Connectx;

impl Model for Connectx {
    const NAME: &'static str = "connectx";
    const SUMMARY: &'static str =
        "ConnectX-4/5/6 and BlueField flow steering, RX path and rule updates on the event engine (PAM'21)";
    const PROFILE_KINDS: &'static [&'static str] = &[KIND];
    const LIMITS: &'static [(&'static str, u64)] = request::LIMITS;
    type Request = Request;
    type Result = result::Result;

    fn request_from_json(text: &str) -> Result<Request, ModelError> {
        Request::from_json(text)
    }

    /// Loads the request's profile (with overrides) and runs it.
    fn run(request: &Request, progress: &mut dyn FnMut(u64)) -> Result<result::Result, ModelError> {
        let mut profile = Profile::load(&request.nic, &profiles_dir(request.profiles_dir.as_deref()))?;
        profile.apply_overrides(&request.overrides)?;
        simulate(request, &profile, progress)
    }
}
