//! The models' request/result contracts: `contract_schema(name)` (see `nicbench_models::contract`).

use pyo3::prelude::*;

use crate::errors::invalid;

/// The JSON Schema of a contract (`connectx.scenario`, `offpath.response`, ...) as JSON text.
#[pyfunction]
fn contract_schema(name: &str) -> PyResult<String> {
    nicbench_models::contract::schema_json(name).ok_or_else(|| {
        invalid(format!(
            "unknown contract {name:?} (known: {})",
            nicbench_models::contract::CONTRACTS.join(", ")
        ))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(contract_schema, m)?)?;
    Ok(())
}
