//! Packets and RSS: `parse_frame`, `toeplitz_hash`, the standard keys.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use nicbench_wire::parse::parse_ethernet;
use nicbench_wire::rss::{Toeplitz, MICROSOFT_KEY, SYMMETRIC_KEY};
use nicbench_wire::FlowKey;

use crate::errors::invalid;

#[derive(serde::Serialize)]
struct FrameView {
    #[serde(flatten)]
    frame: nicbench_wire::parse::ParsedFrame,
    flow_key: Option<FlowKey>,
    stop_message: Option<String>,
}

/// The parsed frame as JSON: layers, tunnel, inner frame, stop, and its flow key.
#[pyfunction]
fn parse_frame(frame: &[u8]) -> PyResult<String> {
    let parsed = parse_ethernet(frame);
    let view = FrameView {
        flow_key: FlowKey::from_frame(&parsed),
        stop_message: parsed.stop.map(|s| s.to_string()),
        frame: parsed,
    };
    serde_json::to_string(&view).map_err(invalid)
}

#[pyfunction]
fn toeplitz_hash(key: &[u8], data: &[u8]) -> PyResult<u32> {
    let toeplitz = Toeplitz::new(key).map_err(invalid)?;
    if data.len() + 4 > key.len() {
        return Err(invalid(format!(
            "a {}-byte key hashes at most {} input bytes, got {}",
            key.len(),
            key.len() - 4,
            data.len()
        )));
    }
    Ok(toeplitz.hash(data))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("MICROSOFT_KEY", PyBytes::new(py, &MICROSOFT_KEY))?;
    m.add("SYMMETRIC_KEY", PyBytes::new(py, &SYMMETRIC_KEY))?;
    // Frame accounting on the wire (RFC 2544): the FCS a pcap record lacks, and preamble + SFD + gap.
    m.add("FCS_BYTES", nicbench_wire::builder::FCS_BYTES)?;
    m.add("WIRE_OVERHEAD_BYTES", nicbench_wire::builder::WIRE_OVERHEAD_BYTES)?;
    m.add_function(wrap_pyfunction!(parse_frame, m)?)?;
    m.add_function(wrap_pyfunction!(toeplitz_hash, m)?)?;
    Ok(())
}
