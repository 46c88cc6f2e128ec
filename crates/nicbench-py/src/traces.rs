//! Trace analysis: `pcap_info`, `rss_spread`, `scan_pipeline`.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors::{invalid, pcap_error, trace_error};
use crate::progress;

#[pyfunction]
#[pyo3(signature = (path, progress=None))]
fn pcap_info(py: Python<'_>, path: PathBuf, progress: Option<PyObject>) -> PyResult<String> {
    let summary = progress::run(py, progress, |report| nicbench_trace::summarize(&path, report))?;
    serde_json::to_string(&summary.map_err(trace_error)?).map_err(invalid)
}

#[pyfunction]
#[pyo3(signature = (path, queues, key, with_ports, reta_size, inner, progress=None))]
#[allow(clippy::too_many_arguments)]
fn rss_spread(
    py: Python<'_>,
    path: PathBuf,
    queues: u16,
    key: Vec<u8>,
    with_ports: bool,
    reta_size: usize,
    inner: bool,
    progress: Option<PyObject>,
) -> PyResult<String> {
    let options = nicbench_trace::RssOptions {
        queues,
        key,
        with_ports,
        reta_size,
        inner,
    };
    let report = progress::run(py, progress, |report| {
        nicbench_trace::rss_spread(&path, &options, report)
    })?;
    serde_json::to_string(&report.map_err(trace_error)?).map_err(invalid)
}

/// (packets, elapsed_ns) of read → parse → FlowKey → Toeplitz over the file.
#[pyfunction]
fn scan_pipeline(py: Python<'_>, path: PathBuf, key: Vec<u8>) -> PyResult<(u64, u64)> {
    let stats = py
        .allow_threads(|| nicbench_trace::scan_pipeline(&path, &key))
        .map_err(trace_error)?;
    Ok((stats.packets, stats.elapsed_ns))
}

/// Up to `limit` records from packet index `skip` on, as (ts_ns, bytes), read by nicbench's reader.
#[pyfunction]
#[pyo3(signature = (path, skip=0, limit=None))]
fn read_packets(py: Python<'_>, path: PathBuf, skip: u64, limit: Option<u64>) -> PyResult<Vec<(u64, Py<PyBytes>)>> {
    let mut source = nicbench_pcap::PcapSource::open(&path).map_err(pcap_error)?;
    let mut out = Vec::new();
    let mut index = 0u64;
    while let Some(record) = source.next_packet() {
        let pkt = record.map_err(pcap_error)?;
        if index >= skip {
            if limit.is_some_and(|n| out.len() as u64 >= n) {
                break;
            }
            out.push((pkt.ts_ns, PyBytes::new(py, pkt.data).unbind()));
        }
        index += 1;
    }
    Ok(out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(pcap_info, m)?)?;
    m.add_function(wrap_pyfunction!(rss_spread, m)?)?;
    m.add_function(wrap_pyfunction!(scan_pipeline, m)?)?;
    m.add_function(wrap_pyfunction!(read_packets, m)?)?;
    Ok(())
}
