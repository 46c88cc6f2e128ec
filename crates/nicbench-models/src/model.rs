//! The one interface every device model implements, and the registry that lists them.
//!
//! A model is a type implementing [`Model`]: its registry name (also the prefix of its contract
//! schemas, `<name>.request` / `<name>.result`), the profile kinds its `nic` may name, its typed
//! [`Model::Request`] and [`Model::Result`] (serde + JSON Schema: the contract with Python), how a
//! request is read from JSON (with the model's own checks) and its `run`, which may report progress.
//!
//! Everything generic over the models — the JSON entry point, the schema export, the binding's one
//! function, the list the Python side asks for — is written once, over the registry. Adding a model is
//! its folder (with `impl Model`) and one line in the registry (see `docs/contributing.md`).
//!
//! Profile kinds (the `kind` key of `profiles/*.toml`) are a separate list of [`ProfileKind`]s: a kind is a
//! parameter set a model owns and checks; several models may read one kind (the PVP model and the
//! virtual OVS both read `agilio` and `connectx-eswitch` profiles).

use serde::{de::DeserializeOwned, Serialize};

use crate::profile::Profile;
use crate::ModelError;

/// A device model: one typed request in, one typed result out.
pub trait Model {
    /// The registry name: `nicbench._native.model_run(NAME, ...)`, and the contracts' prefix.
    const NAME: &'static str;
    /// One line on what it models (shown by `nicbench models` and in the docs page).
    const SUMMARY: &'static str;
    /// The profile kinds (see [`ProfileKind`]) a request's `nic` may name; empty: the model reads none.
    const PROFILE_KINDS: &'static [&'static str];
    type Request: DeserializeOwned + schemars::JsonSchema;
    type Result: Serialize + schemars::JsonSchema;

    /// Reads a request from JSON and checks what the types cannot say. The default refuses what
    /// serde refuses (unknown fields included), naming the model.
    fn request_from_json(text: &str) -> Result<Self::Request, ModelError> {
        serde_json::from_str(text).map_err(|e| ModelError::Scenario(format!("{} request: {e}", Self::NAME)))
    }

    /// Runs one request. `progress(done)` is called now and then, in the model's own unit (the
    /// simulated nanoseconds of an engine run, say); analytic models need not call it.
    fn run(request: &Self::Request, progress: &mut dyn FnMut(u64)) -> Result<Self::Result, ModelError>;
}

/// A profile kind: its name (the profiles' `kind` key) and the check of a profile's parameters
/// against the typed set the owning model reads.
pub struct ProfileKind {
    pub name: &'static str,
    pub check: fn(&Profile) -> Result<(), ModelError>,
}
