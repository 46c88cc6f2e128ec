//! Zero-copy input for classic pcap files: the file is memory-mapped and
//! records are parsed in place, so a frame's payload is never copied (the
//! buffered reader pays a kernel copy of every byte, which made 750 B
//! traffic much slower than 64 B).
//!
//! Invariants:
//! - Used only for regular files with a classic pcap header (either byte
//!   order, µs or ns); pcapng, pipes and anything mmap refuses go through
//!   `nicbench_pcap::PcapSource` (see [`open_pcap`]).
//! - Same packets, timestamps and error messages as `PcapSource`: a bad
//!   record ends the input with the same `PcapError` text (packet index and
//!   byte offset), every record before it is delivered.
//! - Bounds are checked against the mapping's length before every access; a
//!   file truncated by another process while mapped can still raise SIGBUS
//!   (as for any mmap reader), which is why only regular files are mapped.

use std::fs::File;
use std::path::Path;

use nicbench_pcap::{LinkType, PcapError, PcapSource, MAX_CAPLEN_BYTES};

use crate::error::FlowError;
use crate::run::{l2_of, Next, RawFrame, Source};

const FILE_HEADER_BYTES: usize = 24;
const RECORD_HEADER_BYTES: usize = 16;
const MAGIC_US: u32 = 0xa1b2_c3d4;
const MAGIC_NS: u32 = 0xa1b2_3c4d;
/// libpcap's `LT_LINKTYPE`: the upper bits carry FCS length flags.
const LINKTYPE_MASK: u32 = 0x03ff_ffff;
/// How far ahead of the current record to prefetch [bytes]: a few records of
/// any size, so the header loads overlap the metering of earlier packets.
const PREFETCH_AHEAD_BYTES: usize = 1024;

/// A read-only private mapping of a whole file, unmapped on drop.
struct Mapping {
    ptr: *const u8,
    len: usize,
}

impl Mapping {
    fn new(file: &File, len: usize) -> Option<Mapping> {
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            if len == 0 {
                return None;
            }
            // SAFETY: a fresh read-only private mapping of `len` bytes of an open file;
            // the result is checked before use.
            let ptr = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE,
                    file.as_raw_fd(),
                    0,
                )
            };
            if ptr == libc::MAP_FAILED {
                return None;
            }
            // SAFETY: advice on our own mapping; failure changes nothing.
            unsafe {
                libc::madvise(ptr, len, libc::MADV_SEQUENTIAL | libc::MADV_WILLNEED);
            }
            Some(Mapping {
                ptr: ptr as *const u8,
                len,
            })
        }
        #[cfg(not(unix))]
        {
            let _ = (file, len);
            None
        }
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` maps `len` readable bytes for the life of `self`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        #[cfg(unix)]
        // SAFETY: unmapping exactly the mapping we created; no slice outlives `self`.
        unsafe {
            libc::munmap(self.ptr as *mut libc::c_void, self.len);
        }
    }
}

/// Classic pcap records parsed in place from a mapping.
pub(crate) struct MmapPcapInput {
    map: Mapping,
    pos: usize,
    big_endian: bool,
    ts_frac_to_ns: u64,
    caplen_limit: u32,
    snaplen: u32,
    linktype: LinkType,
    packets_read: u64,
    done: bool,
}

#[inline(always)]
fn u32_at(b: &[u8], at: usize, big_endian: bool) -> u32 {
    let word = [b[at], b[at + 1], b[at + 2], b[at + 3]];
    if big_endian {
        u32::from_be_bytes(word)
    } else {
        u32::from_le_bytes(word)
    }
}

impl MmapPcapInput {
    /// Maps `file` when it is a regular, non-empty classic pcap; `None` otherwise.
    fn new(file: &File) -> Option<MmapPcapInput> {
        let meta = file.metadata().ok()?;
        if !meta.is_file() || meta.len() < FILE_HEADER_BYTES as u64 {
            return None;
        }
        let len = usize::try_from(meta.len()).ok()?;
        let map = Mapping::new(file, len)?;
        let header = map.bytes().get(..FILE_HEADER_BYTES)?;
        let magic = u32::from_be_bytes([header[0], header[1], header[2], header[3]]);
        let (big_endian, nanos) = match (magic, magic.swap_bytes()) {
            (MAGIC_US, _) => (true, false),
            (MAGIC_NS, _) => (true, true),
            (_, MAGIC_US) => (false, false),
            (_, MAGIC_NS) => (false, true),
            _ => return None,
        };
        let snaplen = u32_at(header, 16, big_endian);
        let linktype = LinkType(u32_at(header, 20, big_endian) & LINKTYPE_MASK);
        Some(MmapPcapInput {
            map,
            pos: FILE_HEADER_BYTES,
            big_endian,
            ts_frac_to_ns: if nanos { 1 } else { 1_000 },
            caplen_limit: if snaplen == 0 {
                MAX_CAPLEN_BYTES
            } else {
                snaplen.min(MAX_CAPLEN_BYTES)
            },
            snaplen,
            linktype,
            packets_read: 0,
            done: false,
        })
    }

    #[cold]
    fn fail(&mut self, err: PcapError) -> Next<'_> {
        self.done = true;
        Next::BadInput(err.to_string())
    }

    #[cold]
    fn caplen_error(&self, caplen: u32) -> PcapError {
        let (index, offset_bytes) = (self.packets_read, self.pos as u64);
        if self.snaplen != 0 && caplen > self.snaplen && caplen <= MAX_CAPLEN_BYTES {
            PcapError::CaplenExceedsSnaplen {
                index,
                offset_bytes,
                caplen,
                snaplen: self.snaplen,
            }
        } else {
            PcapError::AbsurdCaplen {
                index,
                offset_bytes,
                caplen,
            }
        }
    }
}

impl Source for MmapPcapInput {
    #[inline]
    fn next(&mut self) -> Result<Next<'_>, FlowError> {
        if self.done {
            return Ok(Next::End);
        }
        let len = self.map.len;
        let pos = self.pos;
        let left = len - pos;
        if left < RECORD_HEADER_BYTES {
            if left == 0 {
                self.done = true;
                return Ok(Next::End);
            }
            let err = PcapError::TruncatedRecordHeader {
                index: self.packets_read,
                offset_bytes: pos as u64,
                available_bytes: left as u64,
                needed_bytes: RECORD_HEADER_BYTES as u64,
            };
            return Ok(self.fail(err));
        }
        let big_endian = self.big_endian;
        let (ts_s, ts_frac, caplen, orig_len) = {
            let header = &self.map.bytes()[pos..pos + RECORD_HEADER_BYTES];
            (
                u32_at(header, 0, big_endian),
                u32_at(header, 4, big_endian),
                u32_at(header, 8, big_endian),
                u32_at(header, 12, big_endian),
            )
        };
        if caplen > self.caplen_limit {
            let err = self.caplen_error(caplen);
            return Ok(self.fail(err));
        }
        let data_start = pos + RECORD_HEADER_BYTES;
        let end = data_start + caplen as usize;
        if end > len {
            let err = PcapError::TruncatedPacketData {
                index: self.packets_read,
                offset_bytes: pos as u64,
                caplen,
                available_bytes: (len - data_start) as u64,
            };
            return Ok(self.fail(err));
        }
        let bytes = self.map.bytes();
        if let Some(ahead) = bytes.get(end + PREFETCH_AHEAD_BYTES) {
            crate::run::prefetch_bytes(std::slice::from_ref(ahead));
        }
        self.pos = end;
        self.packets_read += 1;
        let data = &bytes[data_start..end];
        Ok(Next::Frame(RawFrame {
            ts_ns: u64::from(ts_s) * 1_000_000_000 + u64::from(ts_frac) * self.ts_frac_to_ns,
            orig_len,
            data,
            l2: l2_of(self.linktype, data),
        }))
    }

    fn input_bytes_read(&self) -> u64 {
        self.pos as u64
    }
}

/// A pcap input: memory-mapped when possible, else the buffered reader.
pub(crate) enum PcapFileInput {
    Mapped(MmapPcapInput),
    Buffered(crate::run::PcapInput),
}

/// Opens `path` like `PcapSource::open` (same errors), mapping it when it is
/// a regular classic pcap file.
pub(crate) fn open_pcap(path: &Path) -> Result<PcapFileInput, FlowError> {
    // Only a regular file is opened here: opening a FIFO (`tcpdump -w - | …`, a named pipe)
    // releases its writer, and closing it again before the buffered reader reopens it
    // loses what the writer sent in between (or ends the writer with EPIPE).
    let regular = std::fs::metadata(path).is_ok_and(|m| m.is_file());
    if let Some(file) = regular.then(|| File::open(path).ok()).flatten() {
        if let Some(mapped) = MmapPcapInput::new(&file) {
            return Ok(PcapFileInput::Mapped(mapped));
        }
    }
    Ok(PcapFileInput::Buffered(crate::run::PcapInput {
        source: PcapSource::open(path)?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn record(out: &mut Vec<u8>, ts_s: u32, ts_frac: u32, data: &[u8], orig_len: u32) {
        for v in [ts_s, ts_frac, data.len() as u32, orig_len] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(data);
    }

    fn pcap_bytes(magic: u32, snaplen: u32) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&magic.to_le_bytes());
        b.extend_from_slice(&2u16.to_le_bytes());
        b.extend_from_slice(&4u16.to_le_bytes());
        b.extend_from_slice(&[0; 8]);
        b.extend_from_slice(&snaplen.to_le_bytes());
        b.extend_from_slice(&1u32.to_le_bytes());
        b
    }

    fn write_temp(name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let path = std::env::temp_dir().join(format!("nicbench-fm-mmap-{}-{name}", std::process::id()));
        let mut f = File::create(&path).unwrap();
        f.write_all(bytes).unwrap();
        path
    }

    /// (ts, orig_len, data) per frame, and the error that ended the input.
    type Drained = (Vec<(u64, u32, Vec<u8>)>, Option<String>);

    /// Drains an input.
    fn drain<S: Source>(mut s: S) -> Drained {
        let mut frames = Vec::new();
        loop {
            match s.next().unwrap() {
                Next::Frame(f) => frames.push((f.ts_ns, f.orig_len, f.data.to_vec())),
                Next::End => return (frames, None),
                Next::BadInput(m) => return (frames, Some(m)),
                Next::Idle(_) => unreachable!(),
            }
        }
    }

    fn buffered(path: &Path) -> Drained {
        drain(crate::run::PcapInput {
            source: PcapSource::open(path).unwrap(),
        })
    }

    #[test]
    fn test_mapped_equals_buffered_reader_incl_truncation_message() {
        let mut b = pcap_bytes(MAGIC_NS, 0);
        record(&mut b, 7, 999, &[0xaa; 60], 60);
        record(&mut b, 8, 1, &[0xbb; 20], 1500);
        let whole = b.clone();
        record(&mut b, 9, 2, &[0xcc; 40], 40);
        b.truncate(b.len() - 10); // cut inside the third record's data
        for (name, bytes, frames, err) in [("ok", &whole, 2, false), ("cut", &b, 2, true)] {
            let path = write_temp(name, bytes);
            let PcapFileInput::Mapped(m) = open_pcap(&path).unwrap() else {
                panic!("a regular classic pcap is mapped");
            };
            let mapped = drain(m);
            assert_eq!(mapped, buffered(&path), "{name}");
            assert_eq!(mapped.0.len(), frames);
            assert_eq!(mapped.0[0].0, 7_000_000_999, "ns timestamps");
            assert_eq!(mapped.0[1].1, 1500);
            assert_eq!(mapped.1.is_some(), err);
            if err {
                assert!(mapped.1.unwrap().contains("packet 2 at byte offset"), "names index and offset");
            }
            std::fs::remove_file(path).unwrap();
        }
    }

    #[test]
    fn test_microsecond_file_absurd_caplen_and_short_header() {
        let mut b = pcap_bytes(MAGIC_US, 64);
        record(&mut b, 1, 5, &[1; 10], 10);
        let mut bad = b.clone();
        record(&mut bad, 2, 0, &[2; 100], 100); // caplen > snaplen
        let mut short = b.clone();
        short.extend_from_slice(&[0; 7]);
        for (name, bytes) in [("snap", &bad), ("short", &short)] {
            let path = write_temp(name, bytes);
            let PcapFileInput::Mapped(m) = open_pcap(&path).unwrap() else {
                panic!("mapped");
            };
            let mapped = drain(m);
            assert_eq!(mapped, buffered(&path), "{name}");
            assert_eq!(mapped.0.len(), 1);
            assert_eq!(mapped.0[0].0, 1_000_005_000, "µs timestamps");
            assert!(mapped.1.is_some(), "{name}");
            std::fs::remove_file(path).unwrap();
        }
    }

    #[test]
    fn test_non_pcap_files_fall_back_to_the_reader_errors() {
        let path = write_temp("junk", &[0x42; 64]);
        assert!(matches!(open_pcap(&path), Err(FlowError::Pcap(_))));
        std::fs::remove_file(&path).unwrap();
        assert!(open_pcap(Path::new("/nonexistent/x.pcap")).is_err());
    }
}
