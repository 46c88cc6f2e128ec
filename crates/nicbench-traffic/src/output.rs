//! Writing a generated stream to a nanosecond pcap file.
//!
//! Records hold the frame without FCS (`frame_size_bytes - 4`), with
//! `orig_len` = the same length, so a capture of the file reads back exactly
//! what the in-process API yields. The hot loop is: draw → copy header
//! template into a buffer whose payload stays zero → append to the pcap
//! writer's 1 MiB buffer; no allocation per packet. The file appears under its name only when
//! the whole stream is written ([`PcapOutput`]).

use std::path::Path;

use nicbench_pcap::{BackgroundFile, LinkType, PcapError, PcapWriter};

use crate::atomic::AtomicFile;
use crate::config::TrafficConfig;
use crate::error::TrafficError;
use crate::generator::{Summary, TrafficGen};

/// Snaplen written to the file header: the customary 65535 B (frames are ≤ 9014 B).
pub const SNAPLEN_BYTES: u32 = 65_535;

/// `progress` is called with the number of packets written every this many packets.
pub const PROGRESS_EVERY_PACKETS: u64 = 1 << 16;

/// A pcap being written for a path: under a temporary name until [`PcapOutput::finish`]
/// (see [`crate::atomic`]); dropped unfinished, nothing is left.
pub(crate) struct PcapOutput {
    pub writer: PcapWriter<BackgroundFile>,
    file: AtomicFile,
}

impl PcapOutput {
    pub fn create(path: &Path) -> Result<PcapOutput, TrafficError> {
        let (file, temp) = AtomicFile::create(path).map_err(|source| PcapError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        let writer = PcapWriter::for_file(temp, path, SNAPLEN_BYTES, LinkType::ETHERNET)?;
        Ok(PcapOutput { writer, file })
    }

    /// Flushes the records and puts the file under its name.
    pub fn finish(self) -> Result<(), TrafficError> {
        self.writer.finish()?;
        let path = self.file.target().to_path_buf();
        self.file
            .commit()
            .map_err(|source| TrafficError::Output { path, source })
    }
}

/// Generates the stream of `config` into a pcap at `path` (created or
/// replaced, only once the whole stream is written). `progress(packets_done)` is called every
/// [`PROGRESS_EVERY_PACKETS`] packets and once at the end. The config must
/// end on its own (`packets` and/or `duration_ns`).
pub fn write_pcap(config: &TrafficConfig, path: &Path, mut progress: impl FnMut(u64)) -> Result<Summary, TrafficError> {
    if !config.is_finite() {
        config.validate()?;
        return Err(TrafficError::NoStopCondition);
    }
    let mut generator = TrafficGen::new(config)?;
    let mut out = PcapOutput::create(path)?;
    let mut next_report = PROGRESS_EVERY_PACKETS;
    let mut done = 0u64;
    while let Some(packet) = generator.next_packet() {
        // ≤ 9014 B (MAX_FRAME_SIZE_BYTES - 4): the cast is lossless.
        out.writer
            .write_packet(packet.meta.ts_ns, packet.data.len() as u32, packet.data)?;
        done += 1;
        if done == next_report {
            progress(done);
            next_report += PROGRESS_EVERY_PACKETS;
        }
    }
    progress(done); // before the file takes its name: a Ctrl-C seen here leaves nothing
    out.finish()?;
    Ok(generator.summary())
}
