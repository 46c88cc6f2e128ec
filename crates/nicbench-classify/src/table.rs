//! Open-addressing hash table from a masked key (up to [`HASH_WORDS`] words) to a `u32`
//! payload, built for burst lookups: the slot a key hashes to can be prefetched before
//! it is probed (rte_hash's bulk-lookup trick), and a slot holds the key inline so a hit
//! costs one cache line.
//!
//! Linear probing with backward-shift deletion (no tombstones, so deletes do not slow
//! lookups down over time). Capacity is a power of two, load factor at most 5/8.
//! Keys are not attacker-chosen here (rule sets and traces are the user's), so the hash is
//! a fast multiply-xorshift mix, not a keyed one.

/// Key words a table hashes on.
pub(crate) const HASH_WORDS: usize = 3;
pub(crate) type HashKey = [u64; HASH_WORDS];

const EMPTY: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
struct Slot {
    key: HashKey,
    /// High 32 bits of the hash, to skip most key compares.
    tag: u32,
    /// Payload; `EMPTY` marks a free slot.
    value: u32,
}

const FREE: Slot = Slot {
    key: [0; HASH_WORDS],
    tag: 0,
    value: EMPTY,
};

#[derive(Clone, Debug)]
pub(crate) struct HashTable {
    slots: SlotBuf<Slot>,
    len: usize,
    /// `64 - log2(capacity)`: the slot index is the hash's top bits.
    shift: u32,
}

/// Hash of a masked key.
#[inline(always)]
pub(crate) fn hash_key(k: &HashKey) -> u64 {
    const K1: u64 = 0x9e37_79b9_7f4a_7c15;
    const K2: u64 = 0xc2b2_ae3d_27d4_eb4f;
    const K3: u64 = 0x1656_67b1_9e37_79f9;
    let mut h = (k[0] ^ 0x243f_6a88_85a3_08d3).wrapping_mul(K1);
    h = (h.rotate_left(31) ^ k[1]).wrapping_mul(K2);
    h = (h.rotate_left(31) ^ k[2]).wrapping_mul(K3);
    h ^ (h >> 29)
}

impl Default for HashTable {
    fn default() -> Self {
        HashTable::with_capacity(0)
    }
}

impl HashTable {
    pub fn with_capacity(n: usize) -> HashTable {
        let cap = (n * 8 / 5).max(8).next_power_of_two();
        HashTable {
            slots: SlotBuf::new(cap, FREE),
            len: 0,
            shift: 64 - cap.trailing_zeros(),
        }
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Bytes of slot storage.
    pub fn memory_bytes(&self) -> usize {
        self.slots.len() * std::mem::size_of::<Slot>()
    }

    #[inline(always)]
    fn home(&self, hash: u64) -> usize {
        (hash >> self.shift) as usize
    }

    /// Brings the home slot of `hash` towards the cache (a hint; never faults).
    #[inline(always)]
    pub fn prefetch(&self, hash: u64) {
        let i = self.home(hash);
        // `get` keeps it safe; the index is always in range.
        if let Some(s) = self.slots.get(i) {
            prefetch_read(s as *const Slot as *const u8);
        }
    }

    #[inline(always)]
    pub fn get_hashed(&self, key: &HashKey, hash: u64) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let tag = hash as u32;
        let mut i = self.home(hash);
        loop {
            let s = &self.slots[i];
            if s.value == EMPTY {
                return None;
            }
            if s.tag == tag && s.key == *key {
                return Some(s.value);
            }
            i = (i + 1) & mask;
        }
    }

    pub fn get(&self, key: &HashKey) -> Option<u32> {
        self.get_hashed(key, hash_key(key))
    }

    /// Inserts or replaces; returns the previous payload.
    pub fn insert(&mut self, key: HashKey, value: u32) -> Option<u32> {
        debug_assert_ne!(value, EMPTY);
        if (self.len + 1) * 8 > self.slots.len() * 5 {
            self.grow();
        }
        let hash = hash_key(&key);
        let mask = self.slots.len() - 1;
        let tag = hash as u32;
        let mut i = self.home(hash);
        loop {
            let s = &mut self.slots[i];
            if s.value == EMPTY {
                *s = Slot { key, tag, value };
                self.len += 1;
                return None;
            }
            if s.tag == tag && s.key == key {
                return Some(std::mem::replace(&mut s.value, value));
            }
            i = (i + 1) & mask;
        }
    }

    /// Replaces the payload of a present key.
    pub fn set(&mut self, key: &HashKey, value: u32) -> bool {
        let hash = hash_key(key);
        let mask = self.slots.len() - 1;
        let mut i = self.home(hash);
        loop {
            let s = &mut self.slots[i];
            if s.value == EMPTY {
                return false;
            }
            if s.tag == hash as u32 && s.key == *key {
                s.value = value;
                return true;
            }
            i = (i + 1) & mask;
        }
    }

    pub fn remove(&mut self, key: &HashKey) -> Option<u32> {
        let hash = hash_key(key);
        let mask = self.slots.len() - 1;
        let mut i = self.home(hash);
        loop {
            let s = self.slots[i];
            if s.value == EMPTY {
                return None;
            }
            if s.tag == hash as u32 && s.key == *key {
                break;
            }
            i = (i + 1) & mask;
        }
        let removed = self.slots[i].value;
        // Backward shift: move later members of the probe run into the hole when their
        // home slot is at or before it.
        let mut hole = i;
        let mut j = (i + 1) & mask;
        loop {
            let s = self.slots[j];
            if s.value == EMPTY {
                break;
            }
            let home = self.home(hash_key(&s.key));
            // Distance from home to j vs. from home to hole (cyclic).
            if (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(hole) & mask) {
                self.slots[hole] = s;
                hole = j;
            }
            j = (j + 1) & mask;
        }
        self.slots[hole] = FREE;
        self.len -= 1;
        Some(removed)
    }

    fn grow(&mut self) {
        let cap = (self.slots.len() * 2).max(8);
        let old = std::mem::replace(&mut self.slots, SlotBuf::new(cap, FREE));
        self.shift = 64 - cap.trailing_zeros();
        self.len = 0;
        for s in old.iter().copied().filter(|s| s.value != EMPTY) {
            self.insert(s.key, s.value);
        }
    }

    /// Payloads of all entries (any order).
    #[cfg(test)]
    pub fn values(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots.iter().filter(|s| s.value != EMPTY).map(|s| s.value)
    }
}

/// Slot storage of the hash tables (plain `Copy` data). Tables of 2 MiB and more are
/// 2 MiB-aligned and advised to use transparent huge pages: a random probe into a 64 MiB
/// table otherwise costs a TLB miss (a page walk) on top of the cache miss.
pub(crate) struct SlotBuf<T: Copy> {
    ptr: std::ptr::NonNull<T>,
    len: usize,
}

// SAFETY: SlotBuf owns its allocation like a Box<[T]>; T is plain (Copy) data.
unsafe impl<T: Copy + Send> Send for SlotBuf<T> {}
// SAFETY: shared access is read-only (&[T]).
unsafe impl<T: Copy + Sync> Sync for SlotBuf<T> {}

const HUGE_PAGE_BYTES: usize = 2 << 20;

impl<T: Copy> SlotBuf<T> {
    fn layout(len: usize) -> std::alloc::Layout {
        let bytes = len * std::mem::size_of::<T>();
        let align = if bytes >= HUGE_PAGE_BYTES {
            HUGE_PAGE_BYTES
        } else {
            std::mem::align_of::<T>().max(64)
        };
        std::alloc::Layout::from_size_align(bytes.max(1), align).expect("slot table layout")
    }

    /// Uninitialised room for `len` elements (`len` > 0), advised huge pages when big.
    fn alloc(len: usize) -> *mut T {
        let layout = Self::layout(len);
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { std::alloc::alloc(layout) } as *mut T;
        if raw.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        if layout.align() == HUGE_PAGE_BYTES {
            // SAFETY: advice on memory we own, before first touch; failure is harmless.
            #[cfg(target_os = "linux")]
            unsafe {
                libc::madvise(raw as *mut libc::c_void, layout.size(), libc::MADV_HUGEPAGE);
            }
        }
        raw
    }

    /// `len` copies of `fill` (`len` > 0), cache-line aligned.
    pub fn new(len: usize, fill: T) -> SlotBuf<T> {
        let raw = Self::alloc(len);
        for i in 0..len {
            // SAFETY: i < len, inside the allocation.
            unsafe { raw.add(i).write(fill) };
        }
        // SAFETY: `alloc` never returns null.
        SlotBuf {
            ptr: unsafe { std::ptr::NonNull::new_unchecked(raw) },
            len,
        }
    }
}

impl<T: Copy> std::ops::Deref for SlotBuf<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: ptr points at len initialised slots we own.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Copy> std::ops::DerefMut for SlotBuf<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in Deref, and &mut self is exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Copy> Clone for SlotBuf<T> {
    fn clone(&self) -> SlotBuf<T> {
        let raw = Self::alloc(self.len);
        // SAFETY: both ranges are `len` elements of distinct allocations; `alloc` never
        // returns null.
        unsafe {
            std::ptr::copy_nonoverlapping(self.ptr.as_ptr(), raw, self.len);
            SlotBuf {
                ptr: std::ptr::NonNull::new_unchecked(raw),
                len: self.len,
            }
        }
    }
}

impl<T: Copy> Drop for SlotBuf<T> {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this very layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr() as *mut u8, Self::layout(self.len)) };
    }
}

impl<T: Copy> std::fmt::Debug for SlotBuf<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SlotBuf({} slots)", self.len)
    }
}

/// Advises transparent huge pages for the 2 MiB-aligned part of `[ptr, ptr + bytes)` (for
/// big vectors that grow: pages faulted in afterwards come as huge pages).
pub(crate) fn advise_huge(ptr: *const u8, bytes: usize) {
    let start = (ptr as usize).next_multiple_of(HUGE_PAGE_BYTES);
    let end = (ptr as usize + bytes) / HUGE_PAGE_BYTES * HUGE_PAGE_BYTES;
    if end > start {
        // SAFETY: advice on a range inside an allocation the caller owns; never faults.
        #[cfg(target_os = "linux")]
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[inline(always)]
pub(crate) fn prefetch_read(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetch is a hint and never dereferences or faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn test_insert_get_remove_against_std_map() {
        let mut t = HashTable::default();
        let mut m = HashMap::new();
        let mut x = 12345u64;
        for step in 0..20_000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            // Small key space: many collisions, re-inserts and removes of present keys.
            let key = [(x >> 50) % 700, 7, (x >> 40) & 1];
            if x % 3 == 0 {
                assert_eq!(t.remove(&key), m.remove(&key), "step {step}");
            } else {
                assert_eq!(t.insert(key, step), m.insert(key, step), "step {step}");
            }
            assert_eq!(t.len(), m.len());
        }
        for (k, v) in &m {
            assert_eq!(t.get(k), Some(*v));
        }
        assert_eq!(t.values().count(), m.len());
        assert!(t.set(m.keys().next().unwrap(), 5));
        assert!(!t.set(&[u64::MAX; 3], 5));
    }
}
