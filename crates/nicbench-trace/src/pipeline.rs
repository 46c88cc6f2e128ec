//! The benchmarked hot path: pcap read → parse → FlowKey → Toeplitz, one core.
//! (IPv4 frames skip building the `FlowKey`: `rss::hash_frame` hashes the
//! fields `flow_key` would put in it where they lie in the frame.)
//!
//! Timed inside Rust (monotonic clock) so that callers from Python measure the
//! pipeline, not the binding. The checksum folds every hash so the optimizer
//! cannot drop work.

use std::path::Path;
use std::time::Instant;

use nicbench_pcap::PcapSource;
use nicbench_wire::rss::{hash_frame, RssFields, Toeplitz};

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
        // Same hash as `hash_flow` of `flow_key`'s key; IPv4 straight from the frame's bytes.
        if let Ok(hash) = hash_frame(&toeplitz, pkt.data, RssFields::IpPorts) {
            stats.hashed += 1;
            stats.checksum ^= hash;
        }
    }
    stats.elapsed_ns = start.elapsed().as_nanos() as u64;
    Ok(stats)
}
