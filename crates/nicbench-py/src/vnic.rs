//! Virtual NICs: `vnic_simulate`, `vnic_profile`, `vnic_profiles` (JSON in, JSON out;
//! the contract is `/work/briefs/G_contract.md`).

use pyo3::prelude::*;

use crate::errors::NicbenchError;
use crate::progress::Progress;

fn model_error(err: nicbench_models::ModelError) -> PyErr {
    NicbenchError::new_err(err.to_string())
}

/// Runs a scenario (JSON) without the GIL; `progress(simulated_ns)` is called periodically.
#[pyfunction]
#[pyo3(signature = (scenario_json, progress=None))]
fn vnic_simulate(py: Python<'_>, scenario_json: String, progress: Option<PyObject>) -> PyResult<String> {
    let mut reporter = Progress::new(progress);
    let result = py.allow_threads(|| nicbench_models::simulate_json(&scenario_json, &mut |ns| reporter.report(ns)));
    reporter.finish()?;
    result.map_err(model_error)
}

/// A profile (built-in name or path to a .toml) as JSON: every parameter with value, unit, provenance.
#[pyfunction]
#[pyo3(signature = (name_or_path, profiles_dir=None))]
fn vnic_profile(name_or_path: &str, profiles_dir: Option<&str>) -> PyResult<String> {
    nicbench_models::profile_json(name_or_path, profiles_dir).map_err(model_error)
}

/// Names of the built-in ConnectX steering profiles (env NICBENCH_PROFILES, else `<checkout>/profiles`).
#[pyfunction]
#[pyo3(signature = (profiles_dir=None))]
fn vnic_profiles(profiles_dir: Option<&str>) -> Vec<String> {
    nicbench_models::profiles_of_kind(&nicbench_models::profiles_dir(profiles_dir), nicbench_models::STEERING_KIND)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(vnic_simulate, m)?)?;
    m.add_function(wrap_pyfunction!(vnic_profile, m)?)?;
    m.add_function(wrap_pyfunction!(vnic_profiles, m)?)?;
    Ok(())
}
