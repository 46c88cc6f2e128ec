//! The benchmarked hot path: pcap read → parse → FlowKey → Toeplitz, one core.
//!
//! Timed inside Rust (monotonic clock) so that callers from Python measure the
//! pipeline, not the binding. The checksum folds every hash so the optimizer
//! cannot drop work.

use std::path::Path;
use std::time::Instant;

use nicbench_pcap::PcapSource;
use nicbench_wire::parse::flow_key;
use nicbench_wire::rss::{hash_flow, RssFields, Toeplitz};

use crate::TraceError;

#[derive(Clone, Copy, Debug, Default)]
pub struct PipelineStats {
    pub packets: u64,
    /// Packets for which a flow key was found and hashed.
    pub hashed: u64,
    pub elapsed_ns: u64,
    /// XOR of all hashes (keeps the work observable).
    pub checksum: u32,
}

/// Read every Ethernet frame of `path`, extract its flow key and hash it with `key`.
pub fn scan_pipeline(path: &Path, key: &[u8]) -> Result<PipelineStats, TraceError> {
    let toeplitz = Toeplitz::new(key).map_err(|e| TraceError::Invalid(e.to_string()))?;
    let start = Instant::now();
    let mut source = PcapSource::open_mapped(path)?;
    let mut stats = PipelineStats::default();
    while let Some(record) = source.next_packet() {
        let pkt = record?;
        stats.packets += 1;
        if let Ok(k) = flow_key(pkt.data) {
            stats.hashed += 1;
            stats.checksum ^= hash_flow(&toeplitz, &k, RssFields::IpPorts);
        }
    }
    stats.elapsed_ns = start.elapsed().as_nanos() as u64;
    Ok(stats)
}
