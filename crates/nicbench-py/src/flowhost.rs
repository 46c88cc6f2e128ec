//! The virtual Napatech + flow-meter host model: `flowhost_simulate` (JSON in, JSON out; the
//! contract is `nicbench_models::flowhost::{Request, FlowHostResult}`, documented in `docs/contracts/`).

use pyo3::prelude::*;

use crate::errors::model_error;

/// Runs one flow-host request (JSON) without the GIL; returns the result JSON.
#[pyfunction]
fn flowhost_simulate(py: Python<'_>, request_json: String) -> PyResult<String> {
    py.allow_threads(|| nicbench_models::flowhost::simulate_json(&request_json))
        .map_err(model_error)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(flowhost_simulate, m)?)?;
    Ok(())
}
