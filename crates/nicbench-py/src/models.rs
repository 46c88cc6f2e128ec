//! Every device model through one function: `model_run(name, request_json, progress)` runs a
//! request on the model registered as `name` (`nicbench_models::MODELS`), `models_json()` lists
//! the registry, `contract_schema(name)` gives a contract's JSON Schema. Nothing here names a model.

use pyo3::prelude::*;

use crate::errors::{invalid, model_error};
use crate::progress;
use nicbench_models::registry;

/// Runs a request (JSON) on model `name` without the GIL; `progress(done)` is called now and then
/// in the model's unit (simulated nanoseconds for the event-driven ConnectX model).
#[pyfunction]
#[pyo3(signature = (name, request_json, progress=None))]
fn model_run(py: Python<'_>, name: &str, request_json: String, progress: Option<PyObject>) -> PyResult<String> {
    let model = registry::model(name).map_err(model_error)?;
    let result = progress::run(py, progress, |report| model.run_json(&request_json, report))?;
    result.map_err(model_error)
}

/// The registry as JSON: per model its name, summary, the profile kinds it reads, its Rust type
/// and its contracts.
#[pyfunction]
fn models_json() -> String {
    let models: Vec<serde_json::Value> = nicbench_models::MODELS
        .iter()
        .map(|m| {
            serde_json::json!({
                "name": m.name,
                "summary": m.summary,
                "profile_kinds": m.profile_kinds,
                "rust_type": (m.rust_type)(),
                "limits": m.limits.iter().copied().collect::<std::collections::BTreeMap<_, _>>(),
                "contracts": nicbench_models::Contract::ALL.map(|c| format!("{}.{}", m.name, c.as_str())),
            })
        })
        .collect();
    serde_json::Value::Array(models).to_string()
}

/// The JSON Schema of a contract (`connectx.request`, `offpath.result`, ...) as JSON text.
#[pyfunction]
fn contract_schema(name: &str) -> PyResult<String> {
    registry::schema_json(name).ok_or_else(|| {
        invalid(format!(
            "unknown contract {name:?} (known: {})",
            registry::contracts().join(", ")
        ))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(model_run, m)?)?;
    m.add_function(wrap_pyfunction!(models_json, m)?)?;
    m.add_function(wrap_pyfunction!(contract_schema, m)?)?;
    Ok(())
}
