//! The ConnectX model: `connectx_simulate` (JSON in, JSON out; the contract is
//! `nicbench_models::connectx::{Scenario, SimResult}`, documented in `docs/contracts/`).

use pyo3::prelude::*;

use crate::errors::model_error;
use crate::progress::Progress;

/// Runs a scenario (JSON) without the GIL; `progress(simulated_ns)` is called periodically.
#[pyfunction]
#[pyo3(signature = (scenario_json, progress=None))]
fn connectx_simulate(py: Python<'_>, scenario_json: String, progress: Option<PyObject>) -> PyResult<String> {
    let mut reporter = Progress::new(progress);
    let result =
        py.allow_threads(|| nicbench_models::connectx::simulate_json(&scenario_json, &mut |ns| reporter.report(ns)));
    reporter.finish()?;
    result.map_err(model_error)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(connectx_simulate, m)?)?;
    Ok(())
}
