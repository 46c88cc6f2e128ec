//! The bytes a [`super::PcapSource`] parses: its own read buffer, or a
//! read-only memory mapping of the whole file.
//!
//! Both look the same to the record parsers (a byte slice with `pos..end`
//! available), so a mapped file yields the same packets and the same errors
//! as a streamed one. A mapping is never copied from (no `read(2)` copy of
//! every byte). It is read through a window that `fill` moves forward, as it
//! refills a read buffer: each move hands the pages behind the reading
//! position back to the kernel (`MADV_DONTNEED`) and makes the next
//! [`WINDOW_BYTES`] readable, so the resident set stays bounded however
//! large the file is, and the per-record path has no check of its own.
//! (Prefaulting each new window with `MADV_POPULATE_READ` was measured: 7%
//! more CPU on 750 B frames than the kernel's fault-around, so it is not done.)
//!
//! Invariants (mapped): the mapping covers the file's length at open time and
//! lives as long as the buffer; bytes before the last released offset are
//! never read again (the parsers only move forward). As for any mmap reader, a
//! file truncated by another process while mapped can raise SIGBUS; only
//! regular files are mapped.

use std::fs::File;
use std::ops::Deref;

/// How far ahead of the reading position a mapping's window reaches
/// \[bytes\]: one `madvise` per 16 MiB read costs nothing measurable (4, 16
/// and 64 MiB measured alike), and the mapping's share of the resident set
/// stays about this size.
pub(super) const WINDOW_BYTES: usize = 16 << 20;

/// A page is at least this large on every platform we map on \[bytes\];
/// release ranges are aligned down to it.
const PAGE_BYTES: usize = 4096;

/// The bytes being parsed. `ptr`/`len` always describe the live bytes of
/// `storage` (set when it is built and after every change to the heap
/// buffer, which only [`Buffer::with_heap`] can make), so reading them is one
/// slice construction whichever the storage: no branch per record.
pub(super) struct Buffer {
    ptr: *const u8,
    len: usize,
    storage: Storage,
}

enum Storage {
    /// Read buffer filled from the input; its length is the capacity.
    Heap(Vec<u8>),
    Mapped(Mapping),
}

// SAFETY: `ptr` points into `storage`, which the buffer owns (a `Vec` or a
// read-only mapping); moving the buffer to another thread moves both, and a
// shared reference only ever reads.
unsafe impl Send for Buffer {}
// SAFETY: as above; `&Buffer` gives read-only access.
unsafe impl Sync for Buffer {}

impl Buffer {
    pub(super) fn heap(bytes: usize) -> Buffer {
        let heap = vec![0; bytes];
        Buffer {
            ptr: heap.as_ptr(),
            len: heap.len(),
            storage: Storage::Heap(heap),
        }
    }

    pub(super) fn mapped(map: Mapping) -> Buffer {
        Buffer {
            ptr: map.ptr,
            len: map.len,
            storage: Storage::Mapped(map),
        }
    }

    pub(super) fn mapping_mut(&mut self) -> Option<&mut Mapping> {
        match &mut self.storage {
            Storage::Mapped(map) => Some(map),
            Storage::Heap(_) => None,
        }
    }

    pub(super) fn is_mapped(&self) -> bool {
        matches!(self.storage, Storage::Mapped(_))
    }

    /// Runs `f` on the heap buffer (it may write, move or resize it) and
    /// points the view at the result; `None` for a mapping.
    pub(super) fn with_heap<T>(&mut self, f: impl FnOnce(&mut Vec<u8>) -> T) -> Option<T> {
        let Storage::Heap(heap) = &mut self.storage else {
            return None;
        };
        let out = f(heap);
        self.ptr = heap.as_ptr();
        self.len = heap.len();
        Some(out)
    }
}

impl Deref for Buffer {
    type Target = [u8];

    #[inline(always)]
    fn deref(&self) -> &[u8] {
        // SAFETY: `ptr`/`len` describe the live bytes of `storage` (see the
        // type's doc), which `self` owns and nobody mutates while `&self` lives.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
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
            // Advice only (a failure changes nothing): read ahead generously on
            // faults. Reading ahead is asked for one window at a time
            // (`advance`), not for the whole file, which may not fit in memory.
            // SAFETY: advice on our own mapping.
            unsafe {
                libc::madvise(ptr, len, libc::MADV_SEQUENTIAL);
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

    #[cfg(all(test, target_os = "linux"))]
    fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` maps `len` readable bytes for the life of `self`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// Moves the window forward: hands the pages wholly before `pos` back to
    /// the kernel and returns the new end of the readable window, at least
    /// `pos + need` (or the end of the file) and at least [`WINDOW_BYTES`]
    /// past `pos`.
    #[cold]
    pub(super) fn advance(&mut self, pos: usize, old_end: usize, need: usize) -> usize {
        let release_end = pos.min(self.len) / PAGE_BYTES * PAGE_BYTES;
        if release_end > self.released {
            #[cfg(unix)]
            // SAFETY: the range lies inside our mapping and is page aligned
            // (the mapping starts on a page); no reference into it is alive
            // (the parsers only read at or after `pos`). For a read-only
            // private file mapping, later access would refault from the file.
            unsafe {
                libc::madvise(
                    self.ptr.add(self.released) as *mut libc::c_void,
                    release_end - self.released,
                    libc::MADV_DONTNEED,
                );
            }
            self.released = release_end;
        }
        let end = pos.saturating_add(need.max(WINDOW_BYTES)).min(self.len).max(old_end);
        let ahead_end = end.saturating_add(WINDOW_BYTES).min(self.len);
        let ahead_from = old_end.max(release_end) / PAGE_BYTES * PAGE_BYTES;
        if ahead_end > ahead_from {
            #[cfg(unix)]
            // SAFETY: advice on a page-aligned range inside our mapping; a
            // failure changes nothing. Starts reading this window and the
            // next from the file, if they are not in the page cache yet.
            unsafe {
                libc::madvise(
                    self.ptr.add(ahead_from) as *mut libc::c_void,
                    ahead_end - ahead_from,
                    libc::MADV_WILLNEED,
                );
            }
        }
        end
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
    fn test_the_window_releases_what_was_read() {
        let len = 3 * WINDOW_BYTES + 12_345;
        let path = std::env::temp_dir().join(format!("nicbench-pcap-window-{}", std::process::id()));
        let mut file = File::create(&path).unwrap();
        file.write_all(&vec![7u8; len]).unwrap();
        drop(file);
        let mut map = Mapping::new(&File::open(&path).unwrap(), len).unwrap();
        std::fs::remove_file(&path).unwrap();
        let addr = map.ptr as usize;
        let window_kib = (WINDOW_BYTES / 1024) as u64;
        // Read the file as a parser would: to the window's end, then move it.
        let (mut pos, mut end, mut peak_kib, mut sum) = (0, 0, 0, 0u64);
        while pos < len {
            if pos == end {
                end = map.advance(pos, end, 16);
                assert!(end > pos && end <= len && (end == len || end - pos >= WINDOW_BYTES));
            }
            sum += map.bytes()[pos..end]
                .iter()
                .step_by(PAGE_BYTES)
                .map(|&b| u64::from(b))
                .sum::<u64>();
            pos = end;
            peak_kib = peak_kib.max(resident_kib(addr));
        }
        assert_eq!(
            sum,
            7 * len.div_ceil(PAGE_BYTES) as u64,
            "every page read once, unchanged"
        );
        assert!(peak_kib <= window_kib + 8, "resident {peak_kib} KiB > one window");
        // Moving on at the end releases all but the last partial page.
        assert_eq!(map.advance(len, end, 16), len);
        assert_eq!(map.released, len / PAGE_BYTES * PAGE_BYTES);
        assert!(resident_kib(addr) <= 4, "{} KiB", resident_kib(addr));
        // Released pages read again come back from the file, unchanged.
        assert_eq!(
            map.bytes()
                .iter()
                .step_by(PAGE_BYTES)
                .map(|&b| u64::from(b))
                .sum::<u64>(),
            sum
        );
        // A window never moves back.
        assert_eq!(map.advance(10, len, 16), len);
    }
}
