//! Classic pcap writer: nanosecond timestamps, little-endian, any link type.
//!
//! Built for the traffic generator, which writes tens of millions of small
//! records: each record is a 16-byte header and the data copied into a 1 MiB
//! buffer, with no per-packet allocation or system call. Invariants of every
//! file written here: magic `0xa1b23c4d` (ns) in little-endian order, version
//! 2.4, `caplen <= snaplen`, `caplen <= orig_len`; so the files read back with
//! [`crate::PcapSource`], pcap-file, libpcap and Wireshark.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::background::BackgroundFile;
use crate::error::{PcapError, MAX_CAPLEN_BYTES};
use crate::linktype::LinkType;

/// Write buffer size: large enough that a write(2) moves ~16k small records.
const WRITE_BUFFER_BYTES: usize = 1 << 20;
/// Classic pcap magic for nanosecond timestamps (written little-endian).
const MAGIC_NS: u32 = 0xa1b2_3c4d;
const NS_PER_S: u64 = 1_000_000_000;

/// A streaming writer of nanosecond classic pcap files.
///
/// Call [`PcapWriter::finish`] to flush and see write errors; dropping the
/// writer flushes too but swallows errors.
#[derive(Debug)]
pub struct PcapWriter<W: Write = File> {
    out: BufWriter<W>,
    path: Option<PathBuf>,
    snaplen: u32,
    linktype: LinkType,
    packets_written: u64,
    bytes_written: u64,
}

impl PcapWriter<BackgroundFile> {
    /// Creates (truncates) `path` as an Ethernet pcap with this snaplen \[bytes\].
    /// The file's write calls run on a background thread (see [`BackgroundFile`]).
    pub fn create(path: &Path, snaplen: u32) -> Result<PcapWriter<BackgroundFile>, PcapError> {
        Self::with_linktype(path, snaplen, LinkType::ETHERNET)
    }

    /// Creates (truncates) `path` as a pcap of the given link type.
    pub fn with_linktype(
        path: &Path,
        snaplen: u32,
        linktype: LinkType,
    ) -> Result<PcapWriter<BackgroundFile>, PcapError> {
        check_snaplen(snaplen)?;
        let file = File::create(path).map_err(|source| PcapError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        Self::for_file(file, path, snaplen, linktype)
    }

    /// Writes a pcap of the given link type into `file`, already open, which errors call `path`
    /// (a temporary file written for `path`, renamed onto it when done).
    pub fn for_file(
        file: File,
        path: &Path,
        snaplen: u32,
        linktype: LinkType,
    ) -> Result<PcapWriter<BackgroundFile>, PcapError> {
        check_snaplen(snaplen)?;
        let mut writer = Self::new_unchecked(BackgroundFile::new(file), Some(path.to_path_buf()), snaplen, linktype);
        writer.write_file_header()?;
        Ok(writer)
    }
}

impl<W: Write> PcapWriter<W> {
    /// Writes a pcap into any sink (a `Vec<u8>`, a socket, a pipe).
    pub fn from_writer(sink: W, snaplen: u32, linktype: LinkType) -> Result<PcapWriter<W>, PcapError> {
        check_snaplen(snaplen)?;
        let mut writer = Self::new_unchecked(sink, None, snaplen, linktype);
        writer.write_file_header()?;
        Ok(writer)
    }

    fn new_unchecked(sink: W, path: Option<PathBuf>, snaplen: u32, linktype: LinkType) -> Self {
        PcapWriter {
            out: BufWriter::with_capacity(WRITE_BUFFER_BYTES, sink),
            path,
            snaplen,
            linktype,
            packets_written: 0,
            bytes_written: 0,
        }
    }

    fn write_file_header(&mut self) -> Result<(), PcapError> {
        let mut header = [0u8; 24];
        header[0..4].copy_from_slice(&MAGIC_NS.to_le_bytes());
        header[4..6].copy_from_slice(&2u16.to_le_bytes());
        header[6..8].copy_from_slice(&4u16.to_le_bytes());
        // thiszone = 0, sigfigs = 0 (bytes 8..16 stay zero)
        header[16..20].copy_from_slice(&self.snaplen.to_le_bytes());
        header[20..24].copy_from_slice(&self.linktype.0.to_le_bytes());
        self.write_bytes(&header)
    }

    /// Appends one record. `data` longer than the snaplen is cut to the snaplen,
    /// as a capture would; `orig_len` is the length on the wire \[bytes\] and must
    /// be at least the recorded length.
    #[inline]
    pub fn write_packet(&mut self, ts_ns: u64, orig_len: u32, data: &[u8]) -> Result<(), PcapError> {
        let caplen = data.len().min(self.snaplen as usize);
        // caplen <= snaplen <= MAX_CAPLEN_BYTES, so this cast cannot truncate.
        let caplen_u32 = caplen as u32;
        if orig_len < caplen_u32 {
            return Err(self.invalid(format!("orig_len {orig_len} < captured length {caplen}")));
        }
        let ts_s = ts_ns / NS_PER_S;
        let Ok(ts_s) = u32::try_from(ts_s) else {
            return Err(self.invalid(format!(
                "timestamp {ts_ns} ns is past 2106 (seconds do not fit 32 bits)"
            )));
        };
        let ts_frac_ns = (ts_ns % NS_PER_S) as u32;

        let mut record_header = [0u8; 16];
        record_header[0..4].copy_from_slice(&ts_s.to_le_bytes());
        record_header[4..8].copy_from_slice(&ts_frac_ns.to_le_bytes());
        record_header[8..12].copy_from_slice(&caplen_u32.to_le_bytes());
        record_header[12..16].copy_from_slice(&orig_len.to_le_bytes());
        self.write_bytes(&record_header)?;
        self.write_bytes(&data[..caplen])?;
        self.packets_written += 1;
        Ok(())
    }

    #[inline]
    fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), PcapError> {
        match self.out.write_all(bytes) {
            Ok(()) => {
                self.bytes_written += bytes.len() as u64;
                Ok(())
            }
            Err(source) => Err(PcapError::io(self.path.as_deref(), self.bytes_written, source)),
        }
    }

    #[cold]
    fn invalid(&self, reason: String) -> PcapError {
        PcapError::InvalidPacket {
            index: self.packets_written,
            reason,
        }
    }

    /// Flushes everything to the sink; the only way to learn of a late write error.
    pub fn finish(self) -> Result<(), PcapError> {
        self.into_inner().map(drop)
    }

    /// Flushes (the buffer, then the sink itself) and hands back the sink (e.g. the
    /// `Vec<u8>` a test wrote into).
    pub fn into_inner(self) -> Result<W, PcapError> {
        let path = self.path;
        let offset_bytes = self.bytes_written;
        let mut sink = self
            .out
            .into_inner()
            .map_err(|err| PcapError::io(path.as_deref(), offset_bytes, err.into_error()))?;
        sink.flush()
            .map_err(|err| PcapError::io(path.as_deref(), offset_bytes, err))?;
        Ok(sink)
    }

    /// Records written so far.
    pub fn packets_written(&self) -> u64 {
        self.packets_written
    }

    /// Bytes written so far, file header included (= the file's size after `finish`).
    pub fn bytes_written(&self) -> u64 {
        self.bytes_written
    }

    /// The snaplen in the file header \[bytes\].
    pub fn snaplen(&self) -> u32 {
        self.snaplen
    }

    /// The link type in the file header.
    pub fn linktype(&self) -> LinkType {
        self.linktype
    }
}

fn check_snaplen(snaplen: u32) -> Result<(), PcapError> {
    if snaplen == 0 || snaplen > MAX_CAPLEN_BYTES {
        return Err(PcapError::InvalidSnaplen { snaplen });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u32_le(bytes: &[u8], at: usize) -> u32 {
        u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
    }

    #[test]
    fn test_emit_header_and_record_bytes() {
        let mut writer = PcapWriter::from_writer(Vec::new(), 65535, LinkType::ETHERNET).unwrap();
        writer.write_packet(1_500_000_123, 64, &[0xaa; 60]).unwrap();
        assert_eq!(writer.packets_written(), 1);
        assert_eq!(writer.bytes_written(), 24 + 16 + 60);
        let bytes = writer.into_inner().unwrap();
        assert_eq!(&bytes[0..4], &[0x4d, 0x3c, 0xb2, 0xa1]);
        assert_eq!(u32_le(&bytes, 16), 65535);
        assert_eq!(u32_le(&bytes, 20), 1);
        assert_eq!(u32_le(&bytes, 24), 1, "seconds");
        assert_eq!(u32_le(&bytes, 28), 500_000_123, "nanoseconds");
        assert_eq!(u32_le(&bytes, 32), 60, "caplen");
        assert_eq!(u32_le(&bytes, 36), 64, "orig_len");
        assert_eq!(bytes.len(), 24 + 16 + 60);
    }

    #[test]
    fn test_emit_cuts_to_snaplen() {
        let mut writer = PcapWriter::from_writer(Vec::new(), 100, LinkType::RAW).unwrap();
        writer.write_packet(0, 1500, &[7; 1500]).unwrap();
        let bytes = writer.into_inner().unwrap();
        assert_eq!(u32_le(&bytes, 20), 101);
        assert_eq!(u32_le(&bytes, 32), 100);
        assert_eq!(u32_le(&bytes, 36), 1500);
        assert_eq!(bytes.len(), 24 + 16 + 100);
    }

    #[test]
    fn test_rejects_bad_input() {
        assert!(matches!(
            PcapWriter::from_writer(Vec::new(), 0, LinkType::ETHERNET),
            Err(PcapError::InvalidSnaplen { snaplen: 0 })
        ));
        assert!(PcapWriter::from_writer(Vec::new(), MAX_CAPLEN_BYTES + 1, LinkType::ETHERNET).is_err());
        let mut writer = PcapWriter::from_writer(Vec::new(), 65535, LinkType::ETHERNET).unwrap();
        writer.write_packet(0, 60, &[0; 60]).unwrap();
        let err = writer.write_packet(0, 59, &[0; 60]).unwrap_err();
        assert_eq!(err.packet_index(), Some(1));
        assert!(err.to_string().contains("orig_len 59 < captured length 60"), "{err}");
        let err = writer.write_packet(u64::MAX, 60, &[0; 60]).unwrap_err();
        assert!(matches!(err, PcapError::InvalidPacket { .. }));
        // Rejected packets leave no bytes behind.
        assert_eq!(writer.bytes_written(), 24 + 16 + 60);
    }

    #[test]
    fn test_create_reports_path() {
        let err = PcapWriter::create(Path::new("/nonexistent-dir/x.pcap"), 65535).unwrap_err();
        assert!(
            err.to_string().starts_with("/nonexistent-dir/x.pcap: cannot open:"),
            "{err}"
        );
    }
}
