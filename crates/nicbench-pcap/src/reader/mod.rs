//! Streaming reader for classic pcap and pcapng, auto-detected from the magic.
//!
//! Invariants:
//! - **Streaming**: the file is read through one buffer (1 MiB, grown only for
//!   a pcapng block larger than that); a 10 GB file never sits in memory.
//!   [`PcapSource::open_mapped`] reads a regular file through a memory mapping
//!   instead (no copy of the bytes), through a window that moves as a buffer
//!   refills: same packets, same errors, bounded memory.
//! - **No allocation per packet**: [`Packet::data`] borrows the buffer and is
//!   valid until the next call to [`PcapSource::next_packet`].
//! - **Bad input loses nothing**: every complete packet before a truncated or
//!   corrupt record is delivered, then one error naming the packet index (the
//!   number of packets delivered before it) and the byte offset where the bad
//!   record starts, then `None` forever. Malformed input never panics.
//!
//! Classic pcap records are parsed by hand over the buffer (the hot path: a few
//! ns per record); it is tested against pcap-file's reader as an oracle. pcapng
//! framing is checked here and section/interface blocks are decoded by
//! pcap-file's `PcapNgParser`; packet blocks' fixed fields are read here so that
//! an odd option (bad UTF-8 in a comment) does not cost the packet.

mod buffer;
mod classic;
mod pcapng;

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::error::PcapError;
use crate::linktype::LinkType;

use self::buffer::{Buffer, Mapping};
use self::pcapng::NgState;

/// Read buffer size; 1 MiB amortises each read(2) over ~10k small records and
/// holds the largest classic record (16 B + 256 KiB) several times over.
pub const READ_BUFFER_BYTES: usize = 1 << 20;

/// One packet, borrowed from the reader's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet<'a> {
    /// Capture time since the Unix epoch \[ns\]; 0 for pcapng Simple Packet
    /// Blocks, which carry no timestamp.
    pub ts_ns: u64,
    /// Length of the packet on the wire \[bytes\] (`data` may be shorter: snaplen).
    pub orig_len: u32,
    /// The captured bytes, starting with the link-layer header.
    pub data: &'a [u8],
    /// Link type of the interface the packet was captured on.
    pub linktype: LinkType,
    /// pcapng interface id (0 for classic pcap).
    pub interface_id: u32,
}

impl Packet<'_> {
    /// Captured length \[bytes\] (= `data.len()`).
    pub fn caplen(&self) -> u32 {
        // The reader never delivers more than MAX_CAPLEN_BYTES, so this fits.
        self.data.len() as u32
    }
}

/// Timestamp resolution of a classic pcap file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TsResolution {
    /// Magic `0xa1b2c3d4`: the fraction field counts microseconds.
    Microsecond,
    /// Magic `0xa1b23c4d`: the fraction field counts nanoseconds.
    Nanosecond,
}

/// What kind of file a [`PcapSource`] is reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CaptureFormat {
    /// Classic libpcap format.
    Pcap {
        ts_resolution: TsResolution,
        /// Whether the file's header fields are big-endian.
        big_endian: bool,
        /// Snapshot length from the file header \[bytes\] (0 = unspecified).
        snaplen: u32,
    },
    /// pcapng (per-interface link type, snaplen and timestamp resolution).
    PcapNg,
}

/// A streaming packet reader over a pcap or pcapng file (or any byte stream).
pub struct PcapSource<R: Read = File> {
    input: R,
    path: Option<PathBuf>,
    /// Bytes `pos..end` are read but not consumed; `buf.len()` is the capacity
    /// (mapped: the file, all of it read).
    buf: Buffer,
    pos: usize,
    end: usize,
    /// File offset of `buf[0]`, so `buf_file_offset + pos` is the offset of the next record.
    buf_file_offset: u64,
    /// The input returned 0 bytes: no more data will come.
    eof: bool,
    /// An error (or clean end) was reported: `next_packet` returns `None` forever.
    done: bool,
    packets_read: u64,
    format: CaptureFormat,
    // Classic-pcap hot-path parameters, unpacked from `format` once.
    big_endian: bool,
    /// 1000 for microsecond files, 1 for nanosecond ones.
    ts_frac_to_ns: u64,
    /// Records with a larger caplen are corrupt: min(snaplen, MAX_CAPLEN_BYTES).
    caplen_limit: u32,
    /// Classic pcap's link type (unused for pcapng).
    linktype: LinkType,
    /// Present iff the file is pcapng.
    ng: Option<Box<NgState>>,
}

/// How long a named pipe (FIFO) may wait for its writer's first bytes [ms]: a capture streamed
/// through a FIFO (`tcpdump -w fifo`, a writer started just after the reader) starts within it; a
/// FIFO nobody writes to is refused after it instead of blocking forever.
pub const FIFO_WRITER_WAIT_MS: i32 = 5_000;

/// Opens `path` for reading. A named pipe is opened without waiting for a writer (a plain
/// `open` blocks until one comes, forever if none does), then given
/// [`FIFO_WRITER_WAIT_MS`] to deliver data; after that it is read as a normal, blocking stream.
fn open_input(path: &Path) -> io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
        if std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo()) {
            let file = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(path)?;
            let fd = file.as_raw_fd();
            let mut pfd = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: `pfd` is one valid pollfd for a descriptor `file` owns, alive for the call.
            let ready = unsafe { libc::poll(&mut pfd, 1, FIFO_WRITER_WAIT_MS) };
            if ready < 0 {
                return Err(io::Error::last_os_error());
            }
            if ready == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "a named pipe (FIFO) that no writer wrote to within {} s",
                        FIFO_WRITER_WAIT_MS / 1000
                    ),
                ));
            }
            // SAFETY: fcntl on a descriptor `file` owns; only O_NONBLOCK is cleared.
            unsafe {
                let flags = libc::fcntl(fd, libc::F_GETFL);
                if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) < 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            return Ok(file);
        }
    }
    File::open(path)
}

impl PcapSource<File> {
    /// Opens a pcap or pcapng file and reads its header.
    pub fn open(path: impl AsRef<Path>) -> Result<PcapSource<File>, PcapError> {
        let path = path.as_ref();
        let file = open_input(path).map_err(|source| PcapError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        Self::build(file, Some(path.to_path_buf()), Buffer::heap(READ_BUFFER_BYTES))
    }

    /// Like [`PcapSource::open`], reading a regular file through a read-only
    /// memory mapping: the records are parsed in place, no byte is copied.
    /// Same packets, errors and offsets as `open` (classic pcap and pcapng);
    /// pages behind the reading position are released, so memory stays
    /// bounded. Anything that cannot be mapped (a pipe, an empty file) is read
    /// as by `open`. See the `buffer` module for the SIGBUS caveat.
    pub fn open_mapped(path: impl AsRef<Path>) -> Result<PcapSource<File>, PcapError> {
        let path = path.as_ref();
        // Only a regular file is opened here: opening a FIFO releases its writer,
        // and closing it again before `open` reopens it would lose what it sent.
        let regular = std::fs::metadata(path).is_ok_and(|m| m.is_file());
        if let Some(file) = regular.then(|| File::open(path).ok()).flatten() {
            let map = file
                .metadata()
                .ok()
                .and_then(|m| usize::try_from(m.len()).ok())
                .and_then(|len| Mapping::new(&file, len));
            if let Some(map) = map {
                return Self::build(file, Some(path.to_path_buf()), Buffer::mapped(map));
            }
        }
        Self::open(path)
    }

    /// Whether the file is read through a memory mapping.
    pub fn is_mapped(&self) -> bool {
        self.buf.is_mapped()
    }
}

impl<R: Read> PcapSource<R> {
    /// Reads a pcap or pcapng from any byte stream (a `Cursor`, stdin, a pipe).
    pub fn from_reader(input: R) -> Result<PcapSource<R>, PcapError> {
        Self::build(input, None, Buffer::heap(READ_BUFFER_BYTES))
    }

    /// Like [`PcapSource::from_reader`] with a read buffer of `buffer_bytes`
    /// (at least 64; it still grows to hold any single record or block).
    pub fn with_buffer_bytes(input: R, buffer_bytes: usize) -> Result<PcapSource<R>, PcapError> {
        Self::build(input, None, Buffer::heap(buffer_bytes.max(64)))
    }

    fn build(input: R, path: Option<PathBuf>, buf: Buffer) -> Result<Self, PcapError> {
        let mut source = PcapSource {
            input,
            path,
            buf,
            pos: 0,
            end: 0,
            buf_file_offset: 0,
            eof: false,
            done: false,
            packets_read: 0,
            format: CaptureFormat::PcapNg,
            big_endian: false,
            ts_frac_to_ns: 1,
            caplen_limit: 0,
            linktype: LinkType::ETHERNET,
            ng: None,
        };
        source.fill(4)?;
        let available = source.available();
        if available == 0 {
            return Err(PcapError::EmptyFile);
        }
        if available < 4 {
            // Too short to tell pcap from pcapng: report against the shorter header.
            return Err(PcapError::TruncatedFileHeader {
                available_bytes: available as u64,
                needed_bytes: classic::FILE_HEADER_BYTES as u64,
            });
        }
        let magic = u32::from_be_bytes([source.buf[0], source.buf[1], source.buf[2], source.buf[3]]);
        if classic::is_classic_magic(magic) {
            source.read_classic_header(magic)?;
        } else if magic == pcapng::SECTION_HEADER_BLOCK {
            source.read_first_section_header()?;
        } else {
            return Err(PcapError::UnknownMagic { magic });
        }
        Ok(source)
    }

    /// The next packet, `Some(Err(_))` once for a bad record, then `None`.
    #[inline]
    pub fn next_packet(&mut self) -> Option<Result<Packet<'_>, PcapError>> {
        if self.ng.is_none() {
            self.next_classic()
        } else {
            self.next_pcapng()
        }
    }

    /// The file's link type: the header's for classic pcap; for pcapng the first
    /// interface's of the current section (`None` before any interface block).
    pub fn linktype(&self) -> Option<LinkType> {
        match &self.ng {
            None => Some(self.linktype),
            Some(ng) => ng.first_linktype(),
        }
    }

    /// Classic pcap or pcapng, with the classic header's parameters.
    pub fn format(&self) -> CaptureFormat {
        self.format
    }

    /// Packets delivered so far.
    pub fn packets_read(&self) -> u64 {
        self.packets_read
    }

    /// Bytes of the file consumed so far, headers included (= the byte offset
    /// of the next record).
    pub fn bytes_read(&self) -> u64 {
        self.offset_of(self.pos)
    }

    /// The path given to [`PcapSource::open`], if any.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    #[inline]
    fn available(&self) -> usize {
        self.end - self.pos
    }

    #[inline]
    fn offset_of(&self, buf_index: usize) -> u64 {
        self.buf_file_offset + buf_index as u64
    }

    /// Reads until at least `need` bytes are buffered past `pos` or the input ends.
    /// Moves the unconsumed bytes to the front first, so `pos` may change.
    /// A mapping moves its window instead (`pos` stays: it is the file offset).
    #[cold]
    #[inline(never)]
    fn fill(&mut self, need: usize) -> Result<(), PcapError> {
        if let Some(map) = self.buf.mapping_mut() {
            self.end = map.advance(self.pos, self.end, need);
            self.eof = self.end == map.len();
            return Ok(());
        }
        let (pos, end, eof, buf_file_offset) = (&mut self.pos, &mut self.end, &mut self.eof, &mut self.buf_file_offset);
        let (input, path) = (&mut self.input, self.path.as_deref());
        let filled = self.buf.with_heap(|buf| {
            if *pos > 0 {
                buf.copy_within(*pos..*end, 0);
                *buf_file_offset += *pos as u64;
                *end -= *pos;
                *pos = 0;
            }
            if need > buf.len() {
                // Only pcapng blocks get here; their size was checked against MAX_BLOCK_BYTES.
                buf.resize(need.next_power_of_two(), 0);
            }
            while *end < need && !*eof {
                match input.read(&mut buf[*end..]) {
                    Ok(0) => *eof = true,
                    Ok(n) => *end += n,
                    Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                    Err(source) => return Err(PcapError::io(path, *buf_file_offset + *end as u64, source)),
                }
            }
            Ok(())
        });
        filled.unwrap_or(Ok(()))
    }

    /// Ends the stream with `err`: later calls return `None`.
    #[cold]
    fn fail<T>(&mut self, err: PcapError) -> Option<Result<T, PcapError>> {
        self.done = true;
        Some(Err(err))
    }
}

impl<R: Read> std::fmt::Debug for PcapSource<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PcapSource")
            .field("path", &self.path)
            .field("format", &self.format)
            .field("packets_read", &self.packets_read)
            .field("bytes_read", &self.bytes_read())
            .finish_non_exhaustive()
    }
}

/// Reads a `u32` at `at` in the file's byte order. Callers guarantee `at + 4 <= bytes.len()`.
#[inline(always)]
fn read_u32(bytes: &[u8], at: usize, big_endian: bool) -> u32 {
    let raw = [bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]];
    if big_endian {
        u32::from_be_bytes(raw)
    } else {
        u32::from_le_bytes(raw)
    }
}

#[cfg(test)]
mod tests;
