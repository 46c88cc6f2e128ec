//! The one error type of this crate.
//!
//! Invariant: every error about a record names the record's **packet index**
//! (0-based count of packets delivered before it) and the **byte offset** in the
//! file where the bad record starts, so a CLI can print the error on one line and
//! the user can find the spot with a hex editor. Display strings are complete
//! sentences-fragments without a trailing period.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Largest caplen we believe: 256 KiB. libpcap's own limit for any link type
/// (`MAXIMUM_SNAPLEN`) is 262144; anything above is a corrupt length field.
pub const MAX_CAPLEN_BYTES: u32 = 262_144;

/// Everything that can go wrong reading or writing a capture file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PcapError {
    /// The file could not be opened or created.
    #[error("{}: cannot open: {source}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    /// An I/O error from the operating system (read, write, flush).
    #[error("{}: I/O error at byte offset {offset_bytes}: {source}", PathDisplay(path.as_deref()))]
    Io {
        /// The file, where known (`None` for readers/writers built from a stream).
        path: Option<PathBuf>,
        /// Byte offset in the file at which the failed operation started.
        offset_bytes: u64,
        #[source]
        source: io::Error,
    },

    /// The file holds no byte at all.
    #[error("empty file: not a pcap/pcapng file")]
    EmptyFile,

    /// The first four bytes are no pcap or pcapng magic number.
    #[error("not a pcap/pcapng file: magic 0x{magic:08x}")]
    UnknownMagic {
        /// The first four bytes, read big-endian.
        magic: u32,
    },

    /// The file ends inside the global header (classic) or first section header (pcapng).
    #[error("truncated file header: only {available_bytes} of {needed_bytes} bytes")]
    TruncatedFileHeader { available_bytes: u64, needed_bytes: u64 },

    /// The file header is complete but nonsensical.
    #[error("corrupt file header: {reason}")]
    CorruptFileHeader { reason: String },

    /// The file ends inside a 16-byte classic record header.
    #[error("packet {index} at byte offset {offset_bytes}: truncated record header: only {available_bytes} of {needed_bytes} bytes left")]
    TruncatedRecordHeader {
        index: u64,
        offset_bytes: u64,
        available_bytes: u64,
        needed_bytes: u64,
    },

    /// The file ends inside a record's packet data.
    #[error("packet {index} at byte offset {offset_bytes}: truncated packet data: caplen says {caplen} bytes, only {available_bytes} left")]
    TruncatedPacketData {
        index: u64,
        offset_bytes: u64,
        caplen: u32,
        available_bytes: u64,
    },

    /// A record's captured length exceeds the file's (or interface's) snaplen.
    #[error("packet {index} at byte offset {offset_bytes}: corrupt record: caplen {caplen} > snaplen {snaplen}")]
    CaplenExceedsSnaplen {
        index: u64,
        offset_bytes: u64,
        caplen: u32,
        snaplen: u32,
    },

    /// A record's captured length is beyond anything a capture tool writes.
    #[error("packet {index} at byte offset {offset_bytes}: corrupt record: caplen {caplen} is absurd (> {max} bytes)", max = MAX_CAPLEN_BYTES)]
    AbsurdCaplen { index: u64, offset_bytes: u64, caplen: u32 },

    /// The file ends inside a pcapng block.
    #[error("packet {index} at byte offset {offset_bytes}: truncated pcapng block: block length says {block_len} bytes, only {available_bytes} left")]
    TruncatedBlock {
        index: u64,
        offset_bytes: u64,
        block_len: u64,
        available_bytes: u64,
    },

    /// A pcapng block is malformed (bad length, bad field, bad option).
    #[error("packet {index} at byte offset {offset_bytes}: corrupt pcapng block: {reason}")]
    CorruptBlock {
        index: u64,
        offset_bytes: u64,
        reason: String,
    },

    /// A pcapng packet refers to an interface no Interface Description Block declared.
    #[error("packet {index} at byte offset {offset_bytes}: corrupt pcapng block: interface id {interface_id} not declared ({declared} interfaces in section)")]
    UnknownInterface {
        index: u64,
        offset_bytes: u64,
        interface_id: u32,
        declared: usize,
    },

    /// The capture's link type is none nicbench decodes ([`crate::LinkType::DECODED`]).
    #[error(
        "link type {linktype} is not supported: nicbench decodes {}",
        crate::linktype::decoded_list()
    )]
    UnsupportedLinkType { linktype: crate::LinkType },

    /// A writer was asked for a snaplen no reader would accept.
    #[error("snaplen {snaplen} out of range 1..={max}", max = MAX_CAPLEN_BYTES)]
    InvalidSnaplen { snaplen: u32 },

    /// The writer was handed a packet it cannot represent in a classic pcap record.
    #[error("cannot write packet {index}: {reason}")]
    InvalidPacket { index: u64, reason: String },
}

impl PcapError {
    /// Builds an [`PcapError::Io`] for `path` (if any) at `offset_bytes`.
    pub(crate) fn io(path: Option<&Path>, offset_bytes: u64, source: io::Error) -> Self {
        PcapError::Io {
            path: path.map(Path::to_path_buf),
            offset_bytes,
            source,
        }
    }

    /// The 0-based index of the packet this error is about, if it is about one.
    pub fn packet_index(&self) -> Option<u64> {
        match *self {
            PcapError::TruncatedRecordHeader { index, .. }
            | PcapError::TruncatedPacketData { index, .. }
            | PcapError::CaplenExceedsSnaplen { index, .. }
            | PcapError::AbsurdCaplen { index, .. }
            | PcapError::TruncatedBlock { index, .. }
            | PcapError::CorruptBlock { index, .. }
            | PcapError::UnknownInterface { index, .. }
            | PcapError::InvalidPacket { index, .. } => Some(index),
            _ => None,
        }
    }

    /// The byte offset in the file where the offending record (or failed I/O) starts.
    pub fn offset_bytes(&self) -> Option<u64> {
        match *self {
            PcapError::Io { offset_bytes, .. }
            | PcapError::TruncatedRecordHeader { offset_bytes, .. }
            | PcapError::TruncatedPacketData { offset_bytes, .. }
            | PcapError::CaplenExceedsSnaplen { offset_bytes, .. }
            | PcapError::AbsurdCaplen { offset_bytes, .. }
            | PcapError::TruncatedBlock { offset_bytes, .. }
            | PcapError::CorruptBlock { offset_bytes, .. }
            | PcapError::UnknownInterface { offset_bytes, .. } => Some(offset_bytes),
            _ => None,
        }
    }
}

/// Shows a path, or `<stream>` for readers/writers that have none.
struct PathDisplay<'a>(Option<&'a Path>);

impl fmt::Display for PathDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(path) => write!(f, "{}", path.display()),
            None => f.write_str("<stream>"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_display_names_index_and_offset() {
        let err = PcapError::TruncatedPacketData {
            index: 2,
            offset_bytes: 140,
            caplen: 60,
            available_bytes: 13,
        };
        assert_eq!(
            err.to_string(),
            "packet 2 at byte offset 140: truncated packet data: caplen says 60 bytes, only 13 left"
        );
        assert_eq!(err.packet_index(), Some(2));
        assert_eq!(err.offset_bytes(), Some(140));
    }

    #[test]
    fn test_display_magic_and_io_path() {
        assert_eq!(
            PcapError::UnknownMagic { magic: 0x4749_4638 }.to_string(),
            "not a pcap/pcapng file: magic 0x47494638"
        );
        let io = PcapError::io(Some(Path::new("/tmp/x.pcap")), 24, io::Error::other("boom"));
        assert_eq!(io.to_string(), "/tmp/x.pcap: I/O error at byte offset 24: boom");
        let io = PcapError::io(None, 0, io::Error::other("boom"));
        assert!(io.to_string().starts_with("<stream>:"));
    }
}
