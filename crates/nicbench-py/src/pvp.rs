//! The PVP testbed around an OVS-offload NIC: `pvp_predict` (JSON in, JSON out; the contract is
//! `nicbench_models::pvp::{Request, Response}`, documented in `docs/contracts/`).

use pyo3::prelude::*;

use crate::errors::model_error;

/// Predicts one PVP run (seed 002) on a ConnectX-5 eSwitch or an Agilio CX. Analytic.
#[pyfunction]
fn pvp_predict(request_json: &str) -> PyResult<String> {
    nicbench_models::pvp::predict_json(request_json).map_err(model_error)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(pvp_predict, m)?)?;
    Ok(())
}
