//! The virtual Napatech + flow-meter host model: `flowhost_simulate`, `flowhost_profile`
//! (JSON in, JSON out; the request/result shapes are `nicbench_models::flowhost`).

use pyo3::prelude::*;

use crate::errors::NicbenchError;

fn model_error(err: nicbench_models::ModelError) -> PyErr {
    NicbenchError::new_err(err.to_string())
}

/// Runs one flow-host request (JSON) without the GIL; returns the result JSON.
#[pyfunction]
fn flowhost_simulate(py: Python<'_>, request_json: String) -> PyResult<String> {
    py.allow_threads(|| nicbench_models::flowhost::simulate_json(&request_json))
        .map_err(model_error)
}

/// A flow-host profile (name or path) as JSON: every parameter with value, unit, provenance.
#[pyfunction]
#[pyo3(signature = (name_or_path, profiles_dir=None))]
fn flowhost_profile(name_or_path: &str, profiles_dir: Option<&str>) -> PyResult<String> {
    nicbench_models::flowhost::profile_json(name_or_path, profiles_dir).map_err(model_error)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(flowhost_simulate, m)?)?;
    m.add_function(wrap_pyfunction!(flowhost_profile, m)?)?;
    Ok(())
}
