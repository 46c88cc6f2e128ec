//! The off-path SmartNIC model: `offpath_predict` (JSON in, JSON out; the contract is
//! `nicbench_models::offpath::{Request, Response}`, documented in `docs/contracts/`).

use pyo3::prelude::*;

use crate::errors::model_error;

/// Predicts throughput, latency, bottleneck and advice for a mix of flows on an off-path
/// SmartNIC (or its RNIC baseline). Analytic: microseconds per call, no GIL release needed.
#[pyfunction]
fn offpath_predict(request_json: &str) -> PyResult<String> {
    nicbench_models::offpath::predict_json(request_json).map_err(model_error)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(offpath_predict, m)?)?;
    Ok(())
}
