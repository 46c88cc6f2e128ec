//! Per-rule hit and byte counters shared by every reader of a classifier.
//!
//! Counters are relaxed atomics indexed by rule slot, kept outside the two left-right
//! copies so both copies (and all reader threads) count into the same cells. Storage grows
//! in fixed chunks that never move, so readers index it without a lock. A hit costs two
//! uncontended `fetch_add`s on a line the lookup has usually just prefetched; counting can
//! be switched off per reader.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

const CHUNK_BITS: u32 = 16;
const CHUNK: usize = 1 << CHUNK_BITS;
/// Most rule slots a classifier can have (2^28; the table payload limit is 2^30).
pub const MAX_RULE_SLOTS: usize = 1 << 28;
const CHUNKS: usize = MAX_RULE_SLOTS / CHUNK;

#[derive(Default)]
#[repr(C, align(16))]
pub(crate) struct Cell {
    hits: AtomicU64,
    bytes: AtomicU64,
}

pub(crate) struct Counters {
    chunks: Box<[OnceLock<Box<[Cell]>>]>,
}

impl std::fmt::Debug for Counters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Counters")
    }
}

impl Default for Counters {
    fn default() -> Self {
        Counters {
            chunks: (0..CHUNKS).map(|_| OnceLock::new()).collect(),
        }
    }
}

impl Counters {
    /// Makes sure the cell of `slot` exists (writer side, before the rule is published).
    pub fn ensure(&self, slot: u32) {
        let c = slot as usize >> CHUNK_BITS;
        if let Some(chunk) = self.chunks.get(c) {
            chunk.get_or_init(|| (0..CHUNK).map(|_| Cell::default()).collect());
        }
    }

    #[inline(always)]
    pub fn cell(&self, slot: u32) -> Option<&Cell> {
        let s = slot as usize;
        self.chunks.get(s >> CHUNK_BITS)?.get()?.get(s & (CHUNK - 1))
    }

    #[inline(always)]
    pub fn add(&self, slot: u32, bytes: u32) {
        if let Some(c) = self.cell(slot) {
            c.hits.fetch_add(1, Ordering::Relaxed);
            c.bytes.fetch_add(bytes as u64, Ordering::Relaxed);
        }
    }

    /// Brings the cell of `slot` towards the cache (a hint).
    #[inline(always)]
    pub fn prefetch(&self, slot: u32) {
        if let Some(c) = self.cell(slot) {
            crate::table::prefetch_read(c as *const Cell as *const u8);
        }
    }

    pub fn reset(&self, slot: u32) {
        if let Some(c) = self.cell(slot) {
            c.hits.store(0, Ordering::Relaxed);
            c.bytes.store(0, Ordering::Relaxed);
        }
    }

    /// (hits, bytes) of a slot.
    pub fn get(&self, slot: u32) -> (u64, u64) {
        self.cell(slot).map_or((0, 0), |c| {
            (c.hits.load(Ordering::Relaxed), c.bytes.load(Ordering::Relaxed))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_counts_and_resets() {
        let c = Counters::default();
        c.add(70_000, 100); // chunk not allocated: ignored, no panic
        assert_eq!(c.get(70_000), (0, 0));
        c.ensure(70_000);
        c.add(70_000, 100);
        c.add(70_000, 60);
        assert_eq!(c.get(70_000), (2, 160));
        c.reset(70_000);
        assert_eq!(c.get(70_000), (0, 0));
        assert_eq!(c.get(u32::MAX), (0, 0));
    }
}
