//! The traffic generator: `generate_pcap`, `measure_generation`, `expected_packets`.

use std::path::PathBuf;
use std::time::Instant;

use pyo3::prelude::*;

use nicbench_traffic::{write_pcap, TrafficConfig, TrafficGen};

use crate::errors::{invalid, json_error, traffic_error};
use crate::progress;

fn config_from_json(config_json: &str) -> PyResult<TrafficConfig> {
    serde_json::from_str(config_json).map_err(json_error)
}

/// Write the configured trace to `path`; returns the generator's summary as JSON.
#[pyfunction]
#[pyo3(signature = (config_json, path, progress=None))]
fn generate_pcap(py: Python<'_>, config_json: &str, path: PathBuf, progress: Option<PyObject>) -> PyResult<String> {
    let config = config_from_json(config_json)?;
    let summary = progress::run(py, progress, |report| write_pcap(&config, &path, report))?;
    serde_json::to_string(&summary.map_err(traffic_error)?).map_err(invalid)
}

/// Generate in memory without writing: (packets, bytes, elapsed_ns) of the generator alone.
#[pyfunction]
fn measure_generation(py: Python<'_>, config_json: &str) -> PyResult<(u64, u64, u64)> {
    let config = config_from_json(config_json)?;
    py.allow_threads(|| {
        let mut generator = TrafficGen::new(&config)?;
        let start = Instant::now();
        let (mut packets, mut bytes) = (0u64, 0u64);
        while let Some(packet) = generator.next_packet() {
            packets += 1;
            bytes += packet.data.len() as u64;
        }
        Ok((packets, bytes, start.elapsed().as_nanos() as u64))
    })
    .map_err(traffic_error)
}

/// Packets the configured run will produce, when bounded (for progress bars).
#[pyfunction]
fn expected_packets(config_json: &str) -> PyResult<Option<u64>> {
    Ok(config_from_json(config_json)?.expected_packets())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(generate_pcap, m)?)?;
    m.add_function(wrap_pyfunction!(measure_generation, m)?)?;
    m.add_function(wrap_pyfunction!(expected_packets, m)?)?;
    Ok(())
}
