//! Classic (libpcap) format: 24-byte global header, then 16-byte record
//! headers each followed by `caplen` bytes.
//!
//! The hot path is [`PcapSource::next_classic`]: when the whole record is
//! buffered it is two bounds checks, four loads and a few adds; every refill
//! and every error is out of line.

use std::io::Read;

use super::{read_u32, CaptureFormat, Packet, PcapSource, TsResolution};
use crate::error::{PcapError, MAX_CAPLEN_BYTES};
use crate::linktype::LinkType;

pub(super) const FILE_HEADER_BYTES: usize = 24;
pub(super) const RECORD_HEADER_BYTES: usize = 16;

const MAGIC_US: u32 = 0xa1b2_c3d4;
const MAGIC_NS: u32 = 0xa1b2_3c4d;
/// libpcap's `LT_LINKTYPE`: the upper bits carry FCS length flags, not the type.
const LINKTYPE_MASK: u32 = 0x03ff_ffff;
/// How far past the record just read to prefetch \[bytes\]: a few records
/// of any size, so the next headers load while the caller uses this packet.
const PREFETCH_AHEAD_BYTES: usize = 1024;

/// A hint to load the cache line holding `byte`; never faults.
#[inline(always)]
fn prefetch(byte: &u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing and cannot fault.
    #[allow(unused_unsafe)]
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>((byte as *const u8).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = byte;
}

/// Is `magic` (first four bytes read big-endian) a classic pcap magic in either byte order?
pub(super) fn is_classic_magic(magic: u32) -> bool {
    matches!(magic, MAGIC_US | MAGIC_NS) || matches!(magic.swap_bytes(), MAGIC_US | MAGIC_NS)
}

impl<R: Read> PcapSource<R> {
    /// Parses the global header; `magic` are its first four bytes read big-endian.
    pub(super) fn read_classic_header(&mut self, magic: u32) -> Result<(), PcapError> {
        self.fill(FILE_HEADER_BYTES)?;
        if self.available() < FILE_HEADER_BYTES {
            return Err(PcapError::TruncatedFileHeader {
                available_bytes: self.available() as u64,
                needed_bytes: FILE_HEADER_BYTES as u64,
            });
        }
        let big_endian = matches!(magic, MAGIC_US | MAGIC_NS);
        let ts_resolution = if magic == MAGIC_NS || magic.swap_bytes() == MAGIC_NS {
            TsResolution::Nanosecond
        } else {
            TsResolution::Microsecond
        };
        let header = &self.buf[self.pos..self.pos + FILE_HEADER_BYTES];
        // Version (bytes 4..8), thiszone and sigfigs are not checked: libpcap
        // ignores the latter two and writers in the wild disagree on the former.
        let snaplen = read_u32(header, 16, big_endian);
        let linktype = LinkType(read_u32(header, 20, big_endian) & LINKTYPE_MASK);
        if !linktype.is_decoded() {
            return Err(PcapError::UnsupportedLinkType { linktype });
        }

        self.format = CaptureFormat::Pcap {
            ts_resolution,
            big_endian,
            snaplen,
        };
        self.big_endian = big_endian;
        self.ts_frac_to_ns = match ts_resolution {
            TsResolution::Microsecond => 1_000,
            TsResolution::Nanosecond => 1,
        };
        // snaplen 0 means "unspecified" to some writers: then only the absurdity bound holds.
        self.caplen_limit = if snaplen == 0 {
            MAX_CAPLEN_BYTES
        } else {
            snaplen.min(MAX_CAPLEN_BYTES)
        };
        self.linktype = linktype;
        self.pos += FILE_HEADER_BYTES;
        Ok(())
    }

    #[inline]
    pub(super) fn next_classic(&mut self) -> Option<Result<Packet<'_>, PcapError>> {
        if self.done {
            return None;
        }
        if self.available() < RECORD_HEADER_BYTES {
            if let Err(err) = self.fill(RECORD_HEADER_BYTES) {
                return self.fail(err);
            }
            let available = self.available();
            if available == 0 {
                self.done = true;
                return None;
            }
            if available < RECORD_HEADER_BYTES {
                let err = PcapError::TruncatedRecordHeader {
                    index: self.packets_read,
                    offset_bytes: self.bytes_read(),
                    available_bytes: available as u64,
                    needed_bytes: RECORD_HEADER_BYTES as u64,
                };
                return self.fail(err);
            }
        }
        let header = &self.buf[self.pos..self.pos + RECORD_HEADER_BYTES];
        let big_endian = self.big_endian;
        let ts_s = read_u32(header, 0, big_endian);
        let ts_frac = read_u32(header, 4, big_endian);
        let caplen = read_u32(header, 8, big_endian);
        let orig_len = read_u32(header, 12, big_endian);
        if caplen > self.caplen_limit {
            let err = self.caplen_error(caplen);
            return self.fail(err);
        }
        let record_bytes = RECORD_HEADER_BYTES + caplen as usize;
        if self.available() < record_bytes {
            if let Err(err) = self.fill(record_bytes) {
                return self.fail(err);
            }
            let available = self.available();
            if available < record_bytes {
                let err = PcapError::TruncatedPacketData {
                    index: self.packets_read,
                    offset_bytes: self.bytes_read(),
                    caplen,
                    available_bytes: (available - RECORD_HEADER_BYTES) as u64,
                };
                return self.fail(err);
            }
        }
        let data_start = self.pos + RECORD_HEADER_BYTES;
        self.pos += record_bytes;
        self.packets_read += 1;
        // Large records put each header on a cache line of its own, too far
        // apart for the hardware prefetcher: ask for the next ones now.
        if let Some(ahead) = self.buf.get(self.pos + PREFETCH_AHEAD_BYTES) {
            prefetch(ahead);
        }
        // No overflow: u32::MAX s * 1e9 + u32::MAX * 1000 < u64::MAX. A fraction
        // beyond one second is kept as is (libpcap does the same).
        let ts_ns = u64::from(ts_s) * 1_000_000_000 + u64::from(ts_frac) * self.ts_frac_to_ns;
        Some(Ok(Packet {
            ts_ns,
            orig_len,
            data: &self.buf[data_start..self.pos],
            linktype: self.linktype,
            interface_id: 0,
        }))
    }

    #[cold]
    fn caplen_error(&self, caplen: u32) -> PcapError {
        let index = self.packets_read;
        let offset_bytes = self.bytes_read();
        match self.format {
            CaptureFormat::Pcap { snaplen, .. } if snaplen != 0 && caplen > snaplen && caplen <= MAX_CAPLEN_BYTES => {
                PcapError::CaplenExceedsSnaplen {
                    index,
                    offset_bytes,
                    caplen,
                    snaplen,
                }
            }
            _ => PcapError::AbsurdCaplen {
                index,
                offset_bytes,
                caplen,
            },
        }
    }
}
