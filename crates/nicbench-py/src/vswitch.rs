//! The virtual OVS datapath: `vswitch_simulate` (JSON in, JSON out; the contract is
//! `nicbench_models::vswitch::{Request, VswitchResult}`, schemas in `docs/contracts/`).

use pyo3::prelude::*;

use crate::errors::model_error;

/// Runs one vswitch request (JSON) without the GIL; returns the result JSON.
#[pyfunction]
fn vswitch_simulate(py: Python<'_>, request_json: String) -> PyResult<String> {
    py.allow_threads(|| nicbench_models::vswitch::simulate_json(&request_json))
        .map_err(model_error)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(vswitch_simulate, m)?)?;
    Ok(())
}
