//! The bytes a [`super::PcapSource`] parses: its own read buffer, or a
//! read-only memory mapping of the whole file.
//!
//! Both look the same to the record parsers (a byte slice with `pos..end`
//! unconsumed), so a mapped file yields the same packets and the same errors
//! as a streamed one. A mapping is never copied into (no `read(2)` copy of
//! every byte) and never grows; its pages are handed back to the kernel
//! behind the reading position (`MADV_DONTNEED` every [`RELEASE_CHUNK_BYTES`]),
//! so the resident set stays bounded however large the file is.
//!
//! Invariants (mapped): the mapping covers the file's length at open time and
//! lives as long as the buffer; bytes before the last released offset are
//! never read again (the parsers only move forward). As for any mmap reader, a
//! file truncated by another process while mapped can raise SIGBUS; only
//! regular files are mapped.

use std::fs::File;
use std::ops::Deref;

/// Consumed bytes between two releases of a mapping's pages \[bytes\]: one
/// `madvise` per 16 MiB read costs nothing measurable and bounds the
/// mapping's share of the resident set to about this much.
pub(super) const RELEASE_CHUNK_BYTES: usize = 16 << 20;

/// A page is at least this large on every platform we map on \[bytes\];
/// release ranges are aligned down to it.
const PAGE_BYTES: usize = 4096;

pub(super) enum Buffer {
    /// Read buffer filled from the input; `len()` is its capacity.
    Heap(Vec<u8>),
    Mapped(Mapping),
}

impl Deref for Buffer {
    type Target = [u8];

    #[inline(always)]
    fn deref(&self) -> &[u8] {
        match self {
            Buffer::Heap(bytes) => bytes,
            Buffer::Mapped(map) => map.bytes(),
        }
    }
}

/// A read-only private mapping of a whole file, unmapped on drop.
pub(super) struct Mapping {
    ptr: *const u8,
    len: usize,
    /// Bytes `..released` have been handed back to the kernel.
    released: usize,
}

// SAFETY: the mapping is read-only and owned by one `Mapping`; moving it to
// another thread moves that ownership.
unsafe impl Send for Mapping {}

impl Mapping {
    /// Maps `len` (> 0) bytes of `file`; `None` when the system refuses.
    pub(super) fn new(file: &File, len: usize) -> Option<Mapping> {
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            if len == 0 {
                return None;
            }
            // SAFETY: a fresh read-only private mapping of `len` bytes of an open
            // file; the result is checked before use.
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
            // Advice only: a failure changes nothing. Two calls, because the
            // advice values are numbers, not flags that could be or-ed.
            // SAFETY: advice on our own mapping.
            unsafe {
                libc::madvise(ptr, len, libc::MADV_SEQUENTIAL);
                libc::madvise(ptr, len, libc::MADV_WILLNEED);
            }
            Some(Mapping {
                ptr: ptr as *const u8,
                len,
                released: 0,
            })
        }
        #[cfg(not(unix))]
        {
            let _ = (file, len);
            None
        }
    }

    /// Mapped bytes: the file's length at open time.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` maps `len` readable bytes for the life of `self`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// Hands the pages wholly before `consumed` back to the kernel; returns
    /// the offset at which to call again.
    #[cold]
    pub(super) fn release_before(&mut self, consumed: usize) -> usize {
        let end = consumed.min(self.len) / PAGE_BYTES * PAGE_BYTES;
        if end > self.released {
            #[cfg(unix)]
            // SAFETY: the range lies inside our mapping and is page aligned
            // (the mapping starts on a page); no reference into it is alive
            // (the parsers only read at or after `consumed`). For a read-only
            // private file mapping, later access would refault from the file.
            unsafe {
                libc::madvise(
                    self.ptr.add(self.released) as *mut libc::c_void,
                    end - self.released,
                    libc::MADV_DONTNEED,
                );
            }
            self.released = end;
        }
        consumed.saturating_add(RELEASE_CHUNK_BYTES)
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

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::io::Write;

    /// Resident size of the mapping that contains `addr` \[KiB\], from /proc/self/smaps.
    fn resident_kib(addr: usize) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut inside = false;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ') {
                if let Some((start, end)) = range.split_once('-') {
                    if let (Ok(start), Ok(end)) = (usize::from_str_radix(start, 16), usize::from_str_radix(end, 16)) {
                        inside = (start..end).contains(&addr);
                        continue;
                    }
                }
            }
            if inside {
                if let Some(kib) = line.strip_prefix("Rss:") {
                    return kib.trim().trim_end_matches("kB").trim().parse().unwrap();
                }
            }
        }
        panic!("no mapping at {addr:#x}");
    }

    #[test]
    fn test_release_before_drops_the_read_pages_from_the_resident_set() {
        let len = 3 * RELEASE_CHUNK_BYTES + 12_345;
        let path = std::env::temp_dir().join(format!("nicbench-pcap-release-{}", std::process::id()));
        let mut file = File::create(&path).unwrap();
        file.write_all(&vec![7u8; len]).unwrap();
        drop(file);
        let mut map = Mapping::new(&File::open(&path).unwrap(), len).unwrap();
        std::fs::remove_file(&path).unwrap();
        let addr = map.ptr as usize;
        let touch = |map: &Mapping| map.bytes().iter().step_by(PAGE_BYTES).map(|&b| u64::from(b)).sum::<u64>();
        assert_eq!(touch(&map), 7 * len.div_ceil(PAGE_BYTES) as u64);
        let whole_kib = (len / 1024) as u64;
        assert!(resident_kib(addr) >= whole_kib * 9 / 10, "every page read is resident");

        let consumed = len - 1000;
        assert_eq!(map.release_before(consumed), consumed + RELEASE_CHUNK_BYTES);
        assert_eq!(map.released, consumed / PAGE_BYTES * PAGE_BYTES);
        assert!(resident_kib(addr) <= 8, "only the last page or two stay: {} KiB", resident_kib(addr));
        // Released pages read again come back from the file, unchanged.
        assert_eq!(touch(&map), 7 * len.div_ceil(PAGE_BYTES) as u64);
        // Releasing behind an offset already released is a no-op.
        map.release_before(10);
        assert_eq!(map.released, consumed / PAGE_BYTES * PAGE_BYTES);
    }
}
