//! Writing a generated stream to a nanosecond pcap file.
//!
//! Records hold the frame without FCS (`frame_size_bytes - 4`), with
//! `orig_len` = the same length, so a capture of the file reads back exactly
//! what the in-process API yields. The hot loop is: draw → copy header
//! template into a buffer whose payload stays zero → append to the pcap
//! writer's 1 MiB buffer; no allocation per packet.

use std::path::Path;

use nicbench_pcap::PcapWriter;

use crate::config::TrafficConfig;
use crate::error::TrafficError;
use crate::generator::{Summary, TrafficGen};

/// Snaplen written to the file header: the customary 65535 B (frames are ≤ 9014 B).
pub const SNAPLEN_BYTES: u32 = 65_535;

/// `progress` is called with the number of packets written every this many packets.
pub const PROGRESS_EVERY_PACKETS: u64 = 1 << 16;

/// Generates the stream of `config` into a pcap at `path` (created or
/// truncated). `progress(packets_done)` is called every
/// [`PROGRESS_EVERY_PACKETS`] packets and once at the end. The config must
/// end on its own (`packets` and/or `duration_ns`).
pub fn write_pcap(config: &TrafficConfig, path: &Path, mut progress: impl FnMut(u64)) -> Result<Summary, TrafficError> {
    if !config.is_finite() {
        config.validate()?;
        return Err(TrafficError::NoStopCondition);
    }
    let mut generator = TrafficGen::new(config)?;
    let mut writer = PcapWriter::create(path, SNAPLEN_BYTES)?;
    let mut next_report = PROGRESS_EVERY_PACKETS;
    let mut done = 0u64;
    while let Some(packet) = generator.next_packet() {
        // ≤ 9014 B (MAX_FRAME_SIZE_BYTES - 4): the cast is lossless.
        writer.write_packet(packet.meta.ts_ns, packet.data.len() as u32, packet.data)?;
        done += 1;
        if done == next_report {
            progress(done);
            next_report += PROGRESS_EVERY_PACKETS;
        }
    }
    writer.finish()?;
    progress(done);
    Ok(generator.summary())
}
