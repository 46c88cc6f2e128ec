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
    /// The caps a request is held to, by name (`max_cores`, ...): enforced by the model's request
    /// check, exported by the registry so that the CLI and the targets state and check the same.
    const LIMITS: &'static [(&'static str, u64)] = &[];
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

/// A request as JSON in, its result as JSON out: what the registry runs for every model.
pub fn run_json<M: Model>(text: &str, progress: &mut dyn FnMut(u64)) -> Result<String, ModelError> {
    let request = M::request_from_json(text).map_err(ModelError::one_line)?;
    let result = M::run(&request, progress).map_err(ModelError::one_line)?;
    serde_json::to_string(&result).map_err(|e| ModelError::Scenario(format!("{} result: {e}", M::NAME)))
}

/// A model as the registry holds it: its declarations and the generic functions over its types.
pub struct ModelEntry {
    pub name: &'static str,
    pub summary: &'static str,
    pub profile_kinds: &'static [&'static str],
    pub limits: &'static [(&'static str, u64)],
    /// The implementing type's path (`nicbench_models::connectx::Connectx`): where its docs live.
    pub rust_type: fn() -> &'static str,
    run_json: fn(&str, &mut dyn FnMut(u64)) -> Result<String, ModelError>,
    request_schema: fn() -> schemars::Schema,
    result_schema: fn() -> schemars::Schema,
}

impl ModelEntry {
    /// The entry of model `M` (what a line of the registry writes).
    pub const fn of<M: Model>() -> ModelEntry {
        ModelEntry {
            name: M::NAME,
            summary: M::SUMMARY,
            profile_kinds: M::PROFILE_KINDS,
            limits: M::LIMITS,
            rust_type: std::any::type_name::<M>,
            run_json: run_json::<M>,
            request_schema: schema_of::<M::Request>,
            result_schema: schema_of::<M::Result>,
        }
    }

    /// Runs a request given as JSON; the result as JSON.
    pub fn run_json(&self, text: &str, progress: &mut dyn FnMut(u64)) -> Result<String, ModelError> {
        (self.run_json)(text, progress)
    }

    /// The JSON Schema of the model's request or result (see [`Contract`]).
    pub fn schema(&self, which: Contract) -> schemars::Schema {
        match which {
            Contract::Request => (self.request_schema)(),
            Contract::Result => (self.result_schema)(),
        }
    }
}

/// The two contracts of a model: what it takes and what it returns. Named `<model>.request` and
/// `<model>.result` (the files in `docs/contracts/`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Contract {
    Request,
    Result,
}

impl Contract {
    pub const ALL: [Contract; 2] = [Contract::Request, Contract::Result];

    pub fn as_str(self) -> &'static str {
        match self {
            Contract::Request => "request",
            Contract::Result => "result",
        }
    }
}

fn schema_of<T: schemars::JsonSchema>() -> schemars::Schema {
    schemars::schema_for!(T)
}
