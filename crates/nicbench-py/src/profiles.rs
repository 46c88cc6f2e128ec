//! Device profiles of every model: `profile_json`, `profile_names`, `profiles_dir`,
//! `profile_path`, `set_installed_profiles_dir` (one loader: `nicbench_models::profile`).

use pyo3::prelude::*;

use crate::errors::model_error;
use nicbench_models::profile;

/// A profile (name or path) as JSON: name, kind, and every parameter with value, unit, provenance.
#[pyfunction]
#[pyo3(signature = (name_or_path, profiles_dir=None))]
fn profile_json(name_or_path: &str, profiles_dir: Option<&str>) -> PyResult<String> {
    nicbench_models::registry::profile_json(name_or_path, profiles_dir).map_err(model_error)
}

/// Names of the profiles in the profiles folder, of one profile `kind` or all.
#[pyfunction]
#[pyo3(signature = (kind=None, profiles_dir=None))]
fn profile_names(kind: Option<&str>, profiles_dir: Option<&str>) -> Vec<String> {
    let dir = profile::profiles_dir(profiles_dir);
    match kind {
        Some(kind) => profile::names_of_kind(&dir, kind),
        None => profile::names(&dir),
    }
}

/// The profile kinds of the registry (the `kind` key of profiles), in registry order.
#[pyfunction]
fn profile_kinds() -> Vec<&'static str> {
    nicbench_models::PROFILE_KINDS.iter().map(|k| k.name).collect()
}

/// The profiles folder: `explicit`, else `$NICBENCH_PROFILES`, else `<checkout>/profiles`.
#[pyfunction]
#[pyo3(signature = (explicit=None))]
fn profiles_dir(explicit: Option<&str>) -> String {
    profile::profiles_dir(explicit).display().to_string()
}

/// Sets the installation's profiles folder (used when neither `explicit` nor `$NICBENCH_PROFILES`
/// names one): `nicbench.data_files` calls it on import with the folder the package carries.
#[pyfunction]
fn set_installed_profiles_dir(dir: &str) {
    profile::set_installed_profiles_dir(dir.into());
}

/// The file a profile name or path refers to (an error naming the known profiles if none).
#[pyfunction]
#[pyo3(signature = (name_or_path, profiles_dir=None))]
fn profile_path(name_or_path: &str, profiles_dir: Option<&str>) -> PyResult<String> {
    let path = profile::resolve(name_or_path, &profile::profiles_dir(profiles_dir)).map_err(model_error)?;
    Ok(path.display().to_string())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(profile_json, m)?)?;
    m.add_function(wrap_pyfunction!(profile_names, m)?)?;
    m.add_function(wrap_pyfunction!(profile_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(profiles_dir, m)?)?;
    m.add_function(wrap_pyfunction!(set_installed_profiles_dir, m)?)?;
    m.add_function(wrap_pyfunction!(profile_path, m)?)?;
    Ok(())
}
