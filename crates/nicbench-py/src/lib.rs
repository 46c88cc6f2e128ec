//! The `nicbench._native` extension module: thin delegations to the core crates.
//!
//! Structured results cross the boundary as JSON strings (serde on the Rust side,
//! `json.loads` in Python): one well-tested path instead of hand-built dicts.
//! Long-running calls release the GIL and call an optional Python `progress`
//! callback periodically.

mod classify;
mod errors;
mod flowmeter;
mod for_rules;
mod models;
mod ovsflows;
mod packets;
mod profiles;
mod progress;
mod rules;
mod traces;
mod traffic;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("NicbenchError", py.get_type::<errors::NicbenchError>())?;
    m.add("PcapError", py.get_type::<errors::PcapError>())?;
    m.add("RuleError", py.get_type::<errors::RuleError>())?;
    classify::register(m)?;
    flowmeter::register(m)?;
    for_rules::register(m)?;
    models::register(m)?;
    ovsflows::register(m)?;
    packets::register(m)?;
    profiles::register(m)?;
    rules::register(m)?;
    traces::register(m)?;
    traffic::register(m)?;
    Ok(())
}
