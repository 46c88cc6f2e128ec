//! Exact-match tables for rules that pin the whole outer IPv4 5-tuple (the PAM'21 workload:
//! one rule per flow, millions of them), updated in place by the writer while readers look
//! up: one copy shared by both left-right copies, multi-versioned (see [`crate::version`]).
//!
//! A rule qualifies when its only constraints are: outer source and destination address
//! words with mask `0xffff_ffff`, both ports exact, and any masked-equality on the rest of
//! the outer L4 word (protocol, presence bits, TCP flags) — no range, no other word. One
//! table holds the rules sharing that rest (`hi_mask`, `hi_value`), so its key is 12 bytes
//! (source, destination, ports) and a key whose L4 word does not have the rest is not
//! probed at all (TCP keys skip the UDP table).
//!
//! Layout: 32-byte entries, two per 64-byte line: key, packed action ([`pack_action`]),
//! rule slot and generation, and the versions `ins`/`del` between which the entry exists,
//! so a hit costs exactly one cache line and needs no second miss into the rule array.
//! Linear probing in which every key's home is the first entry of a line: at low load
//! almost every hit is in the home line, which a burst lookup prefetches for all its keys
//! before probing any (rte_hash's bulk lookup trick). A rule's rank (priority, insertion
//! order) is needed only when something else in the group could also match; it lives in
//! [`Ranks`], two cells per rule slot, the entry naming its cell (so a modify that changes
//! the priority does not change what an older version reads).
//!
//! Updates (single writer, [`ExactWriter`]): an insert fills a free or reclaimable entry of
//! the key's probe run with `ins` = the version being staged; a delete stores that version
//! into `del`; a modify does both (new entry, old one deleted at the same version) — on the
//! same key, the old entry is first copied to the end of the probe run and the new one
//! takes its place (`ExactWriter::handover`), so modifies do not grow the clusters. Apart
//! from that overwrite, which older readers see as an invisible entry followed by the copy,
//! nothing a reader may use is changed, so a reader pinned at `v` finds exactly the entries
//! with `ins <= v < del`. An entry deleted at `d` is reused once every reader is at `>= d`;
//! when used entries pass 1/2 of the table or live ones 1/3, the live and still-visible ones
//! are copied into a fresh buffer (twice the size if live entries pass 1/3), swapped in with
//! one pointer store; the old buffer is freed once no reader can hold it. (A modify's copy
//! stays at the end of a probe run until that rebuild: with rebuilds at 3/4 use, lookups
//! alone after a run of modifies were up to 17% slower than on a fresh table.)
//!
//! Invariants: at most one entry per key has `del == NEVER` (a second live rule on a key
//! goes to the group's general tables; the lookup takes the better of both by rank); every
//! probe run ends at a free entry (used <= 1/2).
//!
//! Memory ordering of a fill: `ins` is stored first, then a release fence, then the other
//! fields. A reader loads the other fields, then an acquire fence, then `ins`: if it saw
//! any new field it sees the new `ins` (not yet published: invisible); if it saw none, it
//! read the old, consistent, deleted entry. Either way no torn entry is ever reported.

use crate::compile::Fate;
use crate::key::{KEY_WORDS, W_DST_LO, W_L4, W_SRC_LO};
use crate::table::prefetch_read;
use crate::version::{le, low, visible, ALWAYS, NEVER};
use std::sync::atomic::{fence, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering::*};
use std::sync::{Arc, Mutex, OnceLock};

/// A packed action that does not fit inline: the lookup reads the rule entry instead.
pub(crate) const ACT_SLOW: u32 = u32::MAX;
const TAG_SHIFT: u32 = 28;
const PAYLOAD: u32 = (1 << TAG_SHIFT) - 1;

/// Packs (fate, jump, mark) into a `u32` when it fits: no mark, a jump or port id below
/// 2^28. Otherwise [`ACT_SLOW`].
pub(crate) fn pack_action(fate: Fate, jump: Option<u32>, mark: Option<u32>) -> u32 {
    if mark.is_some() {
        return ACT_SLOW;
    }
    let small = |v: u32, tag: u32| if v <= PAYLOAD { (tag << TAG_SHIFT) | v } else { ACT_SLOW };
    if let Some(g) = jump {
        return small(g, 1);
    }
    match fate {
        Fate::Queue { index } => small(index as u32, 2),
        Fate::Rss => 3 << TAG_SHIFT,
        Fate::Drop => 4 << TAG_SHIFT,
        Fate::PortId { id } => small(id, 5),
        Fate::Passthru => 6 << TAG_SHIFT,
        Fate::NoFate => 7 << TAG_SHIFT,
    }
}

/// Inverse of [`pack_action`] (not for [`ACT_SLOW`]): (fate, jump).
#[inline(always)]
pub(crate) fn unpack_action(act: u32) -> (Fate, Option<u32>) {
    let v = act & PAYLOAD;
    match act >> TAG_SHIFT {
        1 => (Fate::NoFate, Some(v)),
        2 => (Fate::Queue { index: v as u16 }, None),
        3 => (Fate::Rss, None),
        4 => (Fate::Drop, None),
        5 => (Fate::PortId { id: v }, None),
        6 => (Fate::Passthru, None),
        _ => (Fate::NoFate, None),
    }
}

/// The table-selecting part (`hi_mask`, `hi_value`) and the 12-byte key of an exact 5-tuple
/// rule, given its per-word equality masks and values, if it is one (`ranges`: whether it
/// also has range constraints).
pub(crate) fn exact_form(
    masks: &[u64; KEY_WORDS],
    values: &[u64; KEY_WORDS],
    ranges: bool,
) -> Option<(u64, u64, [u32; 3])> {
    const LO: u64 = 0xffff_ffff;
    let only_three = masks
        .iter()
        .enumerate()
        .all(|(w, &m)| m == 0 || w == W_SRC_LO || w == W_DST_LO || w == W_L4);
    let shape = !ranges && only_three && masks[W_SRC_LO] == LO && masks[W_DST_LO] == LO && masks[W_L4] & LO == LO;
    let (s, d, l4) = (values[W_SRC_LO] & LO, values[W_DST_LO] & LO, values[W_L4] & masks[W_L4]);
    shape.then(|| (masks[W_L4] & !LO, l4 & !LO, [s as u32, d as u32, l4 as u32]))
}

#[inline(always)]
fn key01(k: &[u32; 3]) -> u64 {
    k[0] as u64 | (k[1] as u64) << 32
}

#[inline(always)]
pub(crate) fn hash3(k: &[u32; 3]) -> u64 {
    let a = (k[0] as u64) | ((k[1] as u64) << 32);
    let mut h = (a ^ 0x243f_6a88_85a3_08d3).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    h = (h.rotate_left(29) ^ k[2] as u64).wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
    h ^ (h >> 32)
}

/// One entry: 32 bytes, two per cache line. All-zero is a free entry.
#[repr(C, align(32))]
pub(crate) struct Entry {
    /// Key words 0 and 1 (`k[0] | k[1] << 32`: one compare on lookup), then word 2.
    key01: AtomicU64,
    key2: AtomicU32,
    /// [`pack_action`] of the rule.
    act: AtomicU32,
    /// 0: free (never used since the buffer was built); else `(slot + 1) | cell << 31`.
    tag: AtomicU32,
    gen: AtomicU32,
    ins: AtomicU32,
    del: AtomicU32,
}

const CELL_BIT: u32 = 1 << 31;
// Two entries per cache line (the layout the probe and the prefetch rely on).
const _: () = assert!(std::mem::size_of::<Entry>() == 32);

/// A hit: what the lookup needs to finish the packet without touching the rule array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ExactHit {
    pub slot: u32,
    pub gen: u32,
    pub act: u32,
    /// The [`Ranks`] cell holding the rule's rank for this entry.
    pub cell: u32,
}

/// An entry array (a power of two of entries, zeroed). Big ones are mapped afresh from
/// the kernel, 2 MiB-aligned and advised huge pages before any page is touched (a random
/// probe into a 64 MiB table otherwise pays a page walk on top of the cache miss, and
/// memory recycled by the allocator keeps its small pages), and unmapped when freed.
pub(crate) struct Buf {
    entries: std::ptr::NonNull<Entry>,
    len: usize,
    /// `64 - log2(lines)`: the home line is the hash's top bits.
    shift: u32,
    /// The mapping (start, bytes) when mapped; `None` when from the allocator.
    map: Option<(usize, usize)>,
    /// A one-hash Bloom filter of the keys ever placed in this buffer ([`Buf::may_hold`]):
    /// bits are set before the entry is published and never cleared (a rebuild starts a
    /// new buffer). All ones in buffers over [`FILTER_MAX_ENTRIES`].
    filter: KeyFilter,
}

/// The filter's words, on cache lines of their own: the writer stores into them, and the
/// fields above are read by every probe.
#[repr(align(64))]
struct KeyFilter([AtomicU64; FILTER_BITS / 64]);

/// Bits of a buffer's key filter (512 bytes).
const FILTER_BITS: usize = 4096;
/// Buffers up to this many entries keep a real filter: at most 1/3 of them live (see
/// [`ExactWriter::rebuild`]), at most 341 keys in 4,096 bits. A larger buffer's keys would
/// fill it.
const FILTER_MAX_ENTRIES: usize = 1024;
/// Bits set in a small buffer's filter beyond which (and beyond twice the live entries)
/// the writer rebuilds it: keys come and go in reused entries without a rebuild, and their
/// bits stay, so churn would otherwise fill the filter (1/8 set: 12.5% false positives).
const FILTER_REBUILD_BITS: usize = FILTER_BITS / 8;

/// The filter bit of a key: its addresses, multiplied (the ports are left out: one
/// multiply, and rules on one address pair are rare).
#[inline(always)]
fn filter_bit(k: &[u32; 3]) -> usize {
    (key01(k).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - FILTER_BITS.trailing_zeros())) as usize
}

// SAFETY: Buf owns its memory like a Box<[Entry]>; entries are atomics.
unsafe impl Send for Buf {}
// SAFETY: shared access goes through atomics only.
unsafe impl Sync for Buf {}

const HUGE_PAGE_BYTES: usize = 2 << 20;

impl Buf {
    fn small_layout(len: usize) -> std::alloc::Layout {
        std::alloc::Layout::from_size_align(len * std::mem::size_of::<Entry>(), 64).expect("exact table layout")
    }

    /// `len` (a power of two, >= 2) free entries.
    fn new(len: usize) -> Box<Buf> {
        debug_assert!(len.is_power_of_two() && len >= 2);
        let bytes = len * std::mem::size_of::<Entry>();
        let lines = len / 2;
        let shift = 64 - lines.trailing_zeros();
        #[cfg(target_os = "linux")]
        if bytes >= HUGE_PAGE_BYTES {
            let total = bytes + HUGE_PAGE_BYTES;
            // SAFETY: a fresh private anonymous mapping (zero-filled); checked below.
            let raw = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    total,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if raw != libc::MAP_FAILED {
                let start = (raw as usize).next_multiple_of(HUGE_PAGE_BYTES);
                // SAFETY: advice on our own mapping, before first touch; failure is harmless.
                unsafe { libc::madvise(start as *mut libc::c_void, bytes, libc::MADV_HUGEPAGE) };
                if let Some(entries) = std::ptr::NonNull::new(start as *mut Entry) {
                    return Box::new(Buf {
                        entries,
                        len,
                        shift,
                        map: Some((raw as usize, total)),
                        filter: Self::empty_filter(len),
                    });
                }
            }
        }
        let layout = Self::small_layout(len);
        // SAFETY: the layout has a non-zero size; all-zero bytes are valid (free) entries.
        let raw = unsafe { std::alloc::alloc_zeroed(layout) };
        let Some(entries) = std::ptr::NonNull::new(raw as *mut Entry) else {
            std::alloc::handle_alloc_error(layout)
        };
        Box::new(Buf {
            entries,
            len,
            shift,
            map: None,
            filter: Self::empty_filter(len),
        })
    }

    /// Whether a buffer of `len` entries keeps a real key filter (else all ones).
    fn filtered(len: usize) -> bool {
        len <= FILTER_MAX_ENTRIES
    }

    fn empty_filter(len: usize) -> KeyFilter {
        let word = if Self::filtered(len) { 0 } else { u64::MAX };
        KeyFilter(std::array::from_fn(|_| AtomicU64::new(word)))
    }

    /// Notes a key about to be placed here (before its entry is published); whether that
    /// set a new bit. Single writer: a load and, only for a new bit, a plain store (no
    /// locked read-modify-write, and no store at all for a key noted before, such as every
    /// modify's).
    #[inline(always)]
    fn note(&self, k: &[u32; 3]) -> bool {
        if !Self::filtered(self.len) {
            return false;
        }
        let b = filter_bit(k);
        let (word, bit) = (&self.filter.0[b >> 6], 1u64 << (b & 63));
        let w = word.load(Relaxed);
        if w & bit != 0 {
            return false;
        }
        word.store(w | bit, Relaxed);
        true
    }

    /// `false` if no entry of `k` was ever placed in this buffer. A reader pinned at a
    /// version sees every bit set before it was published (bits are set before the
    /// entries they cover become visible, and a rebuilt buffer's before it is swapped in).
    #[inline(always)]
    pub fn may_hold(&self, k: &[u32; 3]) -> bool {
        let b = filter_bit(k);
        (self.filter.0[b >> 6].load(Relaxed) >> (b & 63)) & 1 != 0
    }

    #[inline(always)]
    fn entries(&self) -> &[Entry] {
        // SAFETY: `entries` points at `len` initialised entries owned by this Buf.
        unsafe { std::slice::from_raw_parts(self.entries.as_ptr(), self.len) }
    }

    /// First entry of the home line.
    #[inline(always)]
    fn home(&self, hash: u64) -> usize {
        ((hash >> self.shift) as usize) << 1
    }

    #[inline(always)]
    pub fn prefetch(&self, hash: u64) {
        if let Some(e) = self.entries().get(self.home(hash)) {
            prefetch_read(e as *const Entry as *const u8);
        }
    }

    /// The entry of `k` that exists at version `v`, if any.
    #[inline(always)]
    pub fn get(&self, k: &[u32; 3], hash: u64, v: u32) -> Option<ExactHit> {
        let entries = self.entries();
        let mask = entries.len() - 1;
        let mut i = self.home(hash);
        let k01 = key01(k);
        loop {
            let e = &entries[i];
            // Acquire: an entry copied by a modify's handover is whole once its tag shows.
            let tag = e.tag.load(Acquire);
            if tag == 0 {
                return None;
            }
            if e.key01.load(Relaxed) == k01 && e.key2.load(Relaxed) == k[2] {
                let (act, gen, del) = (e.act.load(Relaxed), e.gen.load(Relaxed), e.del.load(Relaxed));
                // Pairs with the release fence of `fill` (see the module doc).
                fence(Acquire);
                // Acquire: a new `ins` seen here may be a handover's overwrite, whose copy
                // further on must then be seen (pairs with the fence after the copy).
                let ins = e.ins.load(Acquire);
                if visible(v, ins, del) {
                    return Some(ExactHit {
                        slot: (tag & !CELL_BIT) - 1,
                        gen,
                        act,
                        cell: tag >> 31,
                    });
                }
            }
            i = (i + 1) & mask;
        }
    }
}

impl Drop for Buf {
    fn drop(&mut self) {
        match self.map {
            // SAFETY: the mapping made in `new`, unmapped once.
            #[cfg(target_os = "linux")]
            Some((start, bytes)) => unsafe {
                libc::munmap(start as *mut libc::c_void, bytes);
            },
            // SAFETY: allocated in `new` with this very layout.
            _ => unsafe { std::alloc::dealloc(self.entries.as_ptr() as *mut u8, Self::small_layout(self.len)) },
        }
    }
}

/// An exact table as readers see it: shared by both left-right copies and the writer.
pub(crate) struct ExactTable {
    /// Bits 32..64 of the outer L4 word every entry constrains, and their value.
    pub hi_mask: u64,
    pub hi_value: u64,
    buf: AtomicPtr<Buf>,
    /// What the writer changes, away from the fields above that every lookup reads.
    w: WriterSide,
}

/// The writer's side of an [`ExactTable`], on cache lines of its own. `live` changes with
/// every update: on the readers' line (`hi_mask`, `hi_value`, `buf`, read for every key),
/// each store invalidated it in the reader's cache, and at 1M updates/s nearly every
/// lookup burst waited for the line to come back from the writer's core.
#[repr(align(128))]
struct WriterSide {
    /// Buffers replaced at a version (first), freed once no reader is older.
    retired: Mutex<Vec<(u64, Box<Buf>)>>,
    /// Live entries (statistics).
    live: AtomicUsize,
    bytes: AtomicUsize,
}

impl std::fmt::Debug for ExactTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ExactTable({:#x}/{:#x}, {} live)",
            self.hi_value,
            self.hi_mask,
            self.len()
        )
    }
}

impl Drop for ExactTable {
    fn drop(&mut self) {
        let p = *self.buf.get_mut();
        // SAFETY: `buf` always holds a pointer from Box::into_raw, owned by this table;
        // with `&mut self` no reader can hold it.
        drop(unsafe { Box::from_raw(p) });
    }
}

impl ExactTable {
    fn new(hi_mask: u64, hi_value: u64) -> ExactTable {
        let buf = Buf::new(MIN_ENTRIES);
        let bytes = MIN_ENTRIES * std::mem::size_of::<Entry>();
        ExactTable {
            hi_mask,
            hi_value,
            buf: AtomicPtr::new(Box::into_raw(buf)),
            w: WriterSide {
                retired: Mutex::new(Vec::new()),
                live: AtomicUsize::new(0),
                bytes: AtomicUsize::new(bytes),
            },
        }
    }

    pub fn len(&self) -> usize {
        self.w.live.load(Relaxed)
    }

    pub fn memory_bytes(&self) -> usize {
        self.w.bytes.load(Relaxed)
    }

    /// The key of a packet for this table, `None` when the packet cannot hit it.
    #[inline(always)]
    pub fn key_of<K: crate::key_view::BurstKey>(&self, key: &K) -> Option<[u32; 3]> {
        let l4 = key.l4();
        (l4 & self.hi_mask == self.hi_value).then(|| [key.src(), key.dst(), l4 as u32])
    }

    /// The current entry array, for as long as the reader's pin lasts.
    #[inline(always)]
    pub fn view<'a>(&'a self, _pin: crate::version::Pinned<'a>) -> &'a Buf {
        // SAFETY: a buffer is freed only once every reader is idle or pinned at a version
        // >= the one it was replaced at (`ExactWriter::free_retired`); a reader pinned
        // at such a version loaded the pointer after the replacement (the version store,
        // or the left-right publish carrying a floor, follows the swap), and the returned
        // borrow cannot outlive the pin (`Pinned<'a>`).
        unsafe { &*self.buf.load(Acquire) }
    }
}

/// Where [`ExactWriter::place`] puts a new entry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Slot {
    index: usize,
    /// A never-used entry (not a reclaimed one).
    fresh: bool,
}

/// Smallest table: 16 lines.
const MIN_ENTRIES: usize = 32;

/// The single writer's handle on one [`ExactTable`]: placement, growth, reclamation.
pub(crate) struct ExactWriter {
    pub table: Arc<ExactTable>,
    live: usize,
    /// Entries not free (live, deleted, or reclaimable).
    used: usize,
    cap: usize,
    /// Bits set in the buffer's key filter (small buffers only).
    filter_bits: usize,
    /// Version of the last rebuild (the sweep that keeps stored versions recent).
    pub built_at: u64,
    /// The entry [`kill`](Self::kill) just deleted, its key and the version: a
    /// [`place`](Self::place) of the same key at that version (a modify) reuses it, after
    /// copying it to the end of the probe run for older readers (see `handover`).
    handover: Option<(usize, [u32; 3], u32)>,
}

impl ExactWriter {
    pub fn new(hi_mask: u64, hi_value: u64, now: u64) -> ExactWriter {
        ExactWriter {
            table: Arc::new(ExactTable::new(hi_mask, hi_value)),
            live: 0,
            used: 0,
            cap: MIN_ENTRIES,
            filter_bits: 0,
            built_at: now,
            handover: None,
        }
    }

    #[cfg(test)]
    pub fn live(&self) -> usize {
        self.live
    }

    fn buf(&self) -> &Buf {
        // SAFETY: only this writer replaces or frees buffers, and it holds `&self`.
        unsafe { &*self.table.buf.load(Relaxed) }
    }

    /// Index of the live entry of `k` (owned by rule slot `slot` if given).
    fn find_live(&self, k: &[u32; 3], slot: Option<u32>) -> Option<usize> {
        let buf = self.buf();
        let entries = buf.entries();
        let mask = entries.len() - 1;
        let mut i = buf.home(hash3(k));
        loop {
            let e = &entries[i];
            let tag = e.tag.load(Relaxed);
            if tag == 0 {
                return None;
            }
            let owner = (tag & !CELL_BIT).wrapping_sub(1);
            if e.del.load(Relaxed) == NEVER
                && slot.is_none_or(|s| s == owner)
                && e.key01.load(Relaxed) == key01(k)
                && e.key2.load(Relaxed) == k[2]
            {
                return Some(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// Brings the home line of `k` towards the cache (a hint).
    pub fn prefetch(&self, k: &[u32; 3]) {
        self.buf().prefetch(hash3(k));
    }

    /// Whether a rule is live on `k`.
    #[cfg(test)]
    pub fn contains_live(&self, k: &[u32; 3]) -> bool {
        self.find_live(k, None).is_some()
    }

    /// Where a new entry on `k` would go, or `None` if a rule is live on `k`: one walk of
    /// the probe run (duplicate check and placement together). Grows or rebuilds the
    /// table first if it is full (so call [`fill`](Self::fill) next, with nothing else
    /// touching the table in between). `min_pinned`: the oldest version a reader may use
    /// (entries deleted at or before it are reused); `w`: the version being staged.
    pub fn place(&mut self, k: &[u32; 3], w: u64, min_pinned: u64) -> Option<Slot> {
        // Used entries at most 1/2 of the table, live ones at most 1/3 (see `rebuild`).
        let filter_full = self.filter_bits > FILTER_REBUILD_BITS && self.filter_bits > 2 * self.live;
        if (self.used + 1) * 2 > self.cap || (self.live + 1) * 3 > self.cap || filter_full {
            self.rebuild(min_pinned, w);
        }
        if let Some((i, hk, hw)) = self.handover.take() {
            if hk == *k && hw == low(w) {
                return Some(self.handover(i));
            }
        }
        let m = low(min_pinned);
        let buf = self.buf();
        let entries = buf.entries();
        let mask = entries.len() - 1;
        let mut i = buf.home(hash3(k));
        let k01 = key01(k);
        let mut reuse = None;
        loop {
            let e = &entries[i];
            if e.tag.load(Relaxed) == 0 {
                return Some(match reuse {
                    Some(r) => Slot { index: r, fresh: false },
                    None => Slot { index: i, fresh: true },
                });
            }
            let del = e.del.load(Relaxed);
            if del == NEVER {
                if e.key01.load(Relaxed) == k01 && e.key2.load(Relaxed) == k[2] {
                    return None;
                }
            } else if reuse.is_none() && le(del, m) {
                reuse = Some(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// Adds the entry of rule `slot` on `k` at `at` (from [`place`](Self::place) for this
    /// very key), existing from version `w` (being staged).
    #[allow(clippy::too_many_arguments)]
    pub fn fill(&mut self, at: Slot, k: &[u32; 3], act: u32, slot: u32, cell: u32, gen: u32, w: u64) {
        self.handover = None;
        let buf = self.buf();
        let Some(e) = buf.entries().get(at.index) else { return };
        let noted = buf.note(k);
        // `ins` first (see the module doc): a reader that sees any field below sees it too.
        e.ins.store(low(w), Relaxed);
        fence(Release);
        e.key01.store(key01(k), Relaxed);
        e.key2.store(k[2], Relaxed);
        e.act.store(act, Relaxed);
        e.gen.store(gen, Relaxed);
        e.del.store(NEVER, Relaxed);
        e.tag.store((slot + 1) | (cell << 31), Relaxed);
        self.used += at.fresh as usize;
        self.filter_bits += noted as usize;
        self.live += 1;
        self.table.w.live.store(self.live, Relaxed);
    }

    /// [`place`](Self::place) then [`fill`](Self::fill); `false` (nothing done) if a rule
    /// is live on `k`.
    #[cfg(test)]
    #[allow(clippy::too_many_arguments)]
    pub fn insert(&mut self, k: &[u32; 3], act: u32, slot: u32, cell: u32, gen: u32, w: u64, min_pinned: u64) -> bool {
        match self.place(k, w, min_pinned) {
            Some(at) => {
                self.fill(at, k, act, slot, cell, gen, w);
                true
            }
            None => false,
        }
    }

    /// Deletes rule `slot`'s entry on `k` as of version `w`; `false` if there is none.
    pub fn kill(&mut self, k: &[u32; 3], slot: u32, w: u64) -> bool {
        let Some(i) = self.find_live(k, Some(slot)) else {
            return false;
        };
        self.buf().entries()[i].del.store(low(w), Relaxed);
        self.live -= 1;
        self.table.w.live.store(self.live, Relaxed);
        self.handover = Some((i, *k, low(w)));
        true
    }

    /// A modify's placement: entry `i` (just deleted at the staged version `w` by
    /// [`kill`](Self::kill), its key the new entry's) is copied to the first free entry
    /// after it in the probe run, and `i` is returned for the new entry. So a key's live
    /// entry keeps its place near home instead of moving to the end of its cluster with
    /// every modify, while the deleted one waits for readers (which would lengthen every
    /// cluster: primary clustering).
    ///
    /// Readers pinned before `w` must still find the old entry. The copy goes to a never-used
    /// entry (`tag == 0`), fields first and `tag` last after a release fence, so a reader
    /// that sees its tag sees it whole (readers load `tag` with acquire); a reused entry
    /// would expose torn reads to them. Then a release fence, and [`fill`](Self::fill)
    /// overwrites `i` starting with `ins = w`: a reader that sees any new field of `i` (its
    /// acquire fence follows them) or its new `ins` (loaded with acquire) synchronizes with
    /// that fence, so it sees the copy when it moves on; a reader that sees `i` old finds
    /// the old entry there.
    fn handover(&mut self, i: usize) -> Slot {
        let buf = self.buf();
        let entries = buf.entries();
        let mask = entries.len() - 1;
        let mut j = (i + 1) & mask;
        while entries[j].tag.load(Relaxed) != 0 {
            j = (j + 1) & mask;
        }
        let (e, c) = (&entries[i], &entries[j]);
        c.key01.store(e.key01.load(Relaxed), Relaxed);
        c.key2.store(e.key2.load(Relaxed), Relaxed);
        c.act.store(e.act.load(Relaxed), Relaxed);
        c.gen.store(e.gen.load(Relaxed), Relaxed);
        c.ins.store(e.ins.load(Relaxed), Relaxed);
        c.del.store(e.del.load(Relaxed), Relaxed);
        fence(Release);
        c.tag.store(e.tag.load(Relaxed), Relaxed);
        // The copy before any store into `i` (see above).
        fence(Release);
        self.used += 1;
        Slot { index: i, fresh: false }
    }

    /// Copies the entries some reader may still see into a fresh buffer (bigger if live
    /// entries pass 1/3), normalising `ins` that every reader has passed to [`ALWAYS`], and
    /// swaps it in. The old buffer is retired at `w`, the version being staged: readers
    /// pinned at `w` or later load the pointer after the swap.
    pub fn rebuild(&mut self, min_pinned: u64, w: u64) {
        // Indices change: a pending handover becomes an ordinary placement.
        self.handover = None;
        let mut cap = self.cap;
        // Live entries at most 1/3 of the table: a modify keeps the old entry until readers
        // pass it, so under updates a key holds two entries and linear probing's clusters
        // grow with both (1M rules: 1/2 gave 15.5 Mpps fresh, 1/3 gives 20; +67 B/rule).
        while (self.live + 1) * 3 > cap {
            cap *= 2;
        }
        let m = low(min_pinned);
        let new = Buf::new(cap);
        let (mut used, mut filter_bits) = (0, 0);
        {
            let (old, dst) = (self.buf().entries(), new.entries());
            let mask = dst.len() - 1;
            for e in old {
                let tag = e.tag.load(Relaxed);
                let (ins, del) = (e.ins.load(Relaxed), e.del.load(Relaxed));
                if tag == 0 || (del != NEVER && le(del, m)) {
                    continue;
                }
                let k01 = e.key01.load(Relaxed);
                let key = [k01 as u32, (k01 >> 32) as u32, e.key2.load(Relaxed)];
                let mut i = new.home(hash3(&key));
                while dst[i].tag.load(Relaxed) != 0 {
                    i = (i + 1) & mask;
                }
                filter_bits += new.note(&key) as usize;
                let d = &dst[i];
                d.key01.store(k01, Relaxed);
                d.key2.store(key[2], Relaxed);
                d.act.store(e.act.load(Relaxed), Relaxed);
                d.gen.store(e.gen.load(Relaxed), Relaxed);
                d.ins
                    .store(if ins != ALWAYS && le(ins, m) { ALWAYS } else { ins }, Relaxed);
                d.del.store(del, Relaxed);
                d.tag.store(tag, Relaxed);
                used += 1;
            }
        }
        // Readers reach the new entries through this pointer (release/acquire).
        let old = self.table.buf.swap(Box::into_raw(new), Release);
        // SAFETY: `old` came from Box::into_raw and is no longer reachable through `buf`;
        // it is freed only when no reader can hold it (see `free_retired`).
        let old = unsafe { Box::from_raw(old) };
        self.table
            .w
            .retired
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((w, old));
        self.cap = cap;
        self.used = used;
        self.filter_bits = filter_bits;
        self.built_at = w;
        self.table.w.bytes.store(cap * std::mem::size_of::<Entry>(), Relaxed);
        if (self.used + 1) * 8 > self.cap * 3 {
            // Deleted entries some reader may still see kept the table full (less than 1/8
            // of it left before the next rebuild): grow.
            self.cap *= 2;
            self.rebuild(min_pinned, w);
        }
    }

    /// Frees the buffers no reader can hold any more.
    pub fn free_retired(&self, min_pinned: u64) {
        let mut r = self.table.w.retired.lock().unwrap_or_else(|e| e.into_inner());
        if !r.is_empty() {
            r.retain(|(at, _)| *at > min_pinned);
        }
    }

    /// Whether buffers wait to be freed.
    pub fn has_retired(&self) -> bool {
        !self
            .table
            .w
            .retired
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
    }
}

/// Ranks of rules in exact tables, two cells per rule slot (see the module doc). Chunks
/// never move, so readers index them without a lock.
pub(crate) struct Ranks {
    chunks: Box<[OnceLock<RankChunk>]>,
}

/// [`RANK_CHUNK`] slots' two rank cells, allocated on first use.
type RankChunk = Box<[[AtomicU64; 2]]>;

const RANK_CHUNK_BITS: u32 = 16;
const RANK_CHUNK: usize = 1 << RANK_CHUNK_BITS;

impl Default for Ranks {
    fn default() -> Self {
        Ranks {
            chunks: (0..crate::counters::MAX_RULE_SLOTS / RANK_CHUNK)
                .map(|_| OnceLock::new())
                .collect(),
        }
    }
}

impl std::fmt::Debug for Ranks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Ranks")
    }
}

impl Ranks {
    /// Writer: sets a cell (published with the version that publishes its entry).
    pub fn set(&self, slot: u32, cell: u32, rank: u64) {
        let s = slot as usize;
        if let Some(chunk) = self.chunks.get(s >> RANK_CHUNK_BITS) {
            let c = chunk.get_or_init(|| {
                (0..RANK_CHUNK)
                    .map(|_| [AtomicU64::new(u64::MAX), AtomicU64::new(u64::MAX)])
                    .collect()
            });
            c[s & (RANK_CHUNK - 1)][cell as usize & 1].store(rank, Relaxed);
        }
    }

    #[inline(always)]
    pub fn get(&self, slot: u32, cell: u32) -> u64 {
        let s = slot as usize;
        self.chunks
            .get(s >> RANK_CHUNK_BITS)
            .and_then(|c| c.get())
            .map_or(u64::MAX, |c| c[s & (RANK_CHUNK - 1)][cell as usize & 1].load(Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::version::next_version;

    /// Model: every entry ever made, as (key, slot, ins, del) with full versions.
    type History = Vec<([u32; 3], u32, u64, u64)>;

    fn model_get(h: &History, k: &[u32; 3], v: u64) -> Option<u32> {
        let mut seen = h.iter().filter(|e| e.0 == *k && e.2 <= v && v < e.3).map(|e| e.1);
        let first = seen.next();
        assert!(seen.next().is_none(), "model: two entries of one key at one version");
        first
    }

    /// Random inserts, deletes and modifies on a small key space (long probe runs, reuse,
    /// rebuilds), several per version; every version a reader may still use must read what
    /// the model says, including the versions being replaced.
    #[test]
    fn test_versions_against_model_with_reuse_and_rebuilds() {
        // 600 keys: the table outgrows the key filter; 120: it keeps one throughout.
        let big = versions_against_model(300);
        assert!(big.cap > FILTER_MAX_ENTRIES, "{}", big.cap);
        let small = versions_against_model(60);
        assert!(small.cap <= FILTER_MAX_ENTRIES, "{}", small.cap);
    }

    /// The model test on `2 * key_space` keys; returns the writer at the end.
    fn versions_against_model(key_space: u64) -> ExactWriter {
        let mut w = ExactWriter::new(0, 0, 1);
        let mut hist: History = Vec::new();
        let mut live: std::collections::HashMap<[u32; 3], u32> = Default::default();
        let (mut x, mut v, mut next_slot) = (7u64, 1u64, 0u32);
        let mut published = vec![1u64];
        for round in 0..3000 {
            let staged = next_version(v);
            // Readers lag up to 4 versions behind.
            let min_pin = published[published.len().saturating_sub(5)];
            for _ in 0..3 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let k = [((x >> 40) % key_space) as u32, 9, (x >> 60) as u32 & 1];
                match (live.get(&k).copied(), x % 3) {
                    (Some(slot), 0) => {
                        assert!(w.kill(&k, slot, staged), "round {round}");
                        live.remove(&k);
                        hist.iter_mut()
                            .filter(|e| e.1 == slot && e.3 == u64::MAX)
                            .for_each(|e| e.3 = staged);
                    }
                    (Some(slot), _) => {
                        // Modify in place: same rule slot, new entry.
                        assert!(w.kill(&k, slot, staged));
                        hist.iter_mut()
                            .filter(|e| e.1 == slot && e.3 == u64::MAX)
                            .for_each(|e| e.3 = staged);
                        assert!(w.insert(&k, 5, slot, 1, 1, staged, min_pin));
                        hist.push((k, slot, staged, u64::MAX));
                    }
                    (None, _) => {
                        assert!(!w.contains_live(&k));
                        next_slot += 1;
                        assert!(w.insert(&k, 5, next_slot, 0, 1, staged, min_pin));
                        live.insert(k, next_slot);
                        hist.push((k, next_slot, staged, u64::MAX));
                    }
                }
            }
            v = staged;
            published.push(v);
            if round % 7 == 0 {
                w.free_retired(min_pin);
            }
            let first = published[published.len().saturating_sub(5)];
            for probe in 0..40u32 {
                let k = [(probe * 7 + round) % key_space as u32, 9, probe & 1];
                for &pv in published.iter().rev().take(5).chain([&(first)]) {
                    let got = w.buf().get(&k, hash3(&k), low(pv)).map(|h| h.slot);
                    assert_eq!(
                        got,
                        model_get(&hist, &k, pv),
                        "round {round} key {k:?} at version {pv} (staged {staged})"
                    );
                    assert!(
                        got.is_none() || w.buf().may_hold(&k),
                        "round {round}: the filter dropped a readable key {k:?}"
                    );
                }
                let staged_view = w.buf().get(&k, hash3(&k), low(next_version(v)));
                assert!(staged_view.is_none_or(|h| live.get(&k) == Some(&h.slot)));
            }
        }
        assert!(w.cap >= 256 && w.live() == live.len());
        w
    }

    /// The key filter of a small buffer passes every key placed (before and after a
    /// rebuild) and few others; a big buffer's passes everything.
    #[test]
    fn test_key_filter_small_tables_only() {
        let mut w = ExactWriter::new(0, 0, 1);
        let placed: Vec<[u32; 3]> = (0..40u32).map(|i| [i.wrapping_mul(2_654_435_761), 7 * i, 80]).collect();
        for (slot, k) in placed.iter().enumerate() {
            assert!(w.insert(k, 5, slot as u32, 0, 1, 2, 1));
        }
        assert!(
            w.cap > MIN_ENTRIES && w.cap <= FILTER_MAX_ENTRIES,
            "grew by rebuilds: {}",
            w.cap
        );
        assert!(placed.iter().all(|k| w.buf().may_hold(k)));
        let passed = (1000..11_000u32)
            .filter(|&i| w.buf().may_hold(&[i, i ^ 0x5555, 80]))
            .count();
        assert!(
            passed < 300,
            "40 keys in 4096 bits: ~1% false positives, got {passed} of 10000"
        );
        let big = Buf::new(4 * FILTER_MAX_ENTRIES);
        assert!((0..100u32).all(|i| big.may_hold(&[i, i, i])));
    }

    /// Keys that come and go leave their filter bits; the rebuilds (for used entries, or
    /// for the filter itself, whichever comes first) keep it selective.
    #[test]
    fn test_key_filter_stays_selective_under_churn() {
        let mut w = ExactWriter::new(0, 0, 1);
        const LIVE: u32 = 300;
        let key = |i: u32| [i.wrapping_mul(2_654_435_761), i, 6];
        let mut v = 1u64;
        for i in 0..20_000u32 {
            v = next_version(v);
            assert!(w.insert(&key(i), 5, i, 0, 1, v, v - 1));
            if i >= LIVE {
                assert!(w.kill(&key(i - LIVE), i - LIVE, v));
            }
        }
        assert!(
            w.cap <= FILTER_MAX_ENTRIES && w.filter_bits <= FILTER_REBUILD_BITS + 1,
            "cap {} bits {}",
            w.cap,
            w.filter_bits
        );
        assert!((20_000 - LIVE..20_000).all(|i| w.buf().may_hold(&key(i))));
        let passed = (100_000..110_000u32).filter(|&i| w.buf().may_hold(&key(i))).count();
        assert!(passed < 1_500, "{passed} of 10000 absent keys pass");
    }

    #[test]
    fn test_batch_insert_and_delete_of_one_key_is_never_visible() {
        let mut w = ExactWriter::new(0, 0, 1);
        assert!(w.insert(&[1, 2, 3], 7, 10, 0, 4, 3, 1));
        assert!(w.kill(&[1, 2, 3], 10, 3));
        for v in 1..6 {
            assert_eq!(w.buf().get(&[1, 2, 3], hash3(&[1, 2, 3]), v), None);
        }
        assert!(w.insert(&[1, 2, 3], 7, 11, 1, 4, 4, 3));
        assert!(
            !w.insert(&[1, 2, 3], 7, 12, 0, 4, 4, 3),
            "a second live rule on a key is refused"
        );
        let h = w
            .buf()
            .get(&[1, 2, 3], hash3(&[1, 2, 3]), 4)
            .expect("visible at its version");
        assert_eq!((h.slot, h.gen, h.act, h.cell), (11, 4, 7, 1));
        assert!(!w.kill(&[1, 2, 3], 10, 5), "only the owning rule slot deletes");
    }

    /// A modify (kill then place of one key at one version) keeps the key's entry where it
    /// was and copies the old one to the end of the run for older readers.
    #[test]
    fn test_modify_reuses_the_entry_and_older_versions_read_the_copy() {
        let mut w = ExactWriter::new(0, 0, 1);
        let k = [4, 5, 6];
        let first = w.place(&k, 3, 1).unwrap();
        w.fill(first, &k, 7, 10, 0, 1, 3);
        for (round, ver) in (4..9u64).enumerate() {
            assert!(w.kill(&k, 10, ver));
            let at = w.place(&k, ver, 1).unwrap();
            assert_eq!(at.index, first.index, "round {round}: the live entry stays put");
            w.fill(at, &k, 7 + ver as u32, 10, 0, 1, ver);
            for v in 3..=ver {
                let h = w
                    .buf()
                    .get(&k, hash3(&k), low(v))
                    .expect("every version finds its entry");
                assert_eq!(h.act, if v == 3 { 7 } else { 7 + v as u32 }, "version {v}");
            }
        }
        assert_eq!(w.used, 6, "one entry per version still readable");
    }

    #[test]
    fn test_exact_form_needs_three_full_words() {
        let mut m = [0u64; KEY_WORDS];
        let mut v = [0u64; KEY_WORDS];
        m[W_SRC_LO] = 0xffff_ffff;
        m[W_DST_LO] = 0xffff_ffff;
        m[W_L4] = 0xff_0000_0000 | 0xffff_ffff;
        v[W_SRC_LO] = 1;
        v[W_L4] = (6 << 32) | 0x0050_1234;
        assert_eq!(
            exact_form(&m, &v, false),
            Some((0xff_0000_0000, 6 << 32, [1, 0, 0x0050_1234]))
        );
        assert_eq!(exact_form(&m, &v, true), None, "ranges");
        m[W_DST_LO] = 0xffff_ff00;
        assert_eq!(exact_form(&m, &v, false), None, "a prefix");
    }

    #[test]
    fn test_ranks_two_cells_per_slot() {
        let r = Ranks::default();
        assert_eq!(r.get(70_000, 0), u64::MAX);
        r.set(70_000, 0, 5);
        r.set(70_000, 1, 9);
        assert_eq!((r.get(70_000, 0), r.get(70_000, 1)), (5, 9));
        assert_eq!(r.get(u32::MAX, 0), u64::MAX);
    }

    #[test]
    fn test_action_packing_round_trips() {
        for (fate, jump) in [
            (Fate::Queue { index: 65535 }, None),
            (Fate::Rss, None),
            (Fate::Drop, None),
            (Fate::PortId { id: 7 }, None),
            (Fate::Passthru, None),
            (Fate::NoFate, None),
            (Fate::NoFate, Some(12)),
        ] {
            let a = pack_action(fate, jump, None);
            assert_ne!(a, ACT_SLOW);
            assert_eq!(unpack_action(a), (fate, jump));
        }
        assert_eq!(
            pack_action(Fate::Drop, None, Some(1)),
            ACT_SLOW,
            "marks are read from the rule"
        );
        assert_eq!(pack_action(Fate::PortId { id: u32::MAX }, None, None), ACT_SLOW);
        assert_eq!(pack_action(Fate::NoFate, Some(1 << 28), None), ACT_SLOW);
    }
}
