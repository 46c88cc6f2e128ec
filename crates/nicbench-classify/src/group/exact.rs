//! Exact-match table for rules that pin the whole outer IPv4 5-tuple (the PAM'21 workload:
//! one rule per flow, millions of them).
//!
//! A rule qualifies when its only constraints are: outer source and destination address
//! words with mask `0xffff_ffff`, both ports exact, and any masked-equality on the rest of
//! the outer L4 word (protocol, presence bits, TCP flags) — no range, no other word. One
//! table holds the rules sharing that rest (`hi_mask`, `hi_value`), so its key is 12 bytes
//! (source, destination, ports) and a key whose L4 word does not have the rest is not
//! probed at all (TCP keys skip the UDP table).
//!
//! Layout: 32-byte entries, two per 64-byte line, with the rule's rank, slot, generation
//! and a packed action ([`pack_action`]) inline, so a hit costs exactly one cache line and
//! the lookup needs no second miss into the rule array. Linear probing in which every key's
//! home is the first entry of a line: at load <= 1/2 almost every hit is in the home line,
//! which a burst lookup prefetches for all its keys before probing any (rte_hash's bulk
//! lookup trick: one DRAM miss per key, all in flight together). Deletion shifts later
//! entries back (no tombstones), so lookups do not slow down under churn.
//!
//! Invariant: a table holds at most one rule per key; a second rule with the same key goes
//! to the group's general tables (the lookup takes the better of both by rank).

use crate::compile::{CompiledRule, Fate};
use crate::key::{PacketKey, W_DST_LO, W_L4, W_SRC_LO};
use crate::table::{prefetch_read, SlotBuf};

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

/// The table-selecting part and the 12-byte key of an exact 5-tuple rule, if it is one.
pub(crate) fn exact_form(rule: &CompiledRule) -> Option<(u64, u64, [u32; 3])> {
    const LO: u64 = 0xffff_ffff;
    if !rule.ranges.is_empty() || rule.words.len() != 3 {
        return None;
    }
    let [s, d, l4] = [&rule.words[0], &rule.words[1], &rule.words[2]];
    let shape = s.word as usize == W_SRC_LO
        && s.mask == LO
        && d.word as usize == W_DST_LO
        && d.mask == LO
        && l4.word as usize == W_L4
        && l4.mask & LO == LO;
    shape.then(|| (l4.mask & !LO, l4.value & !LO, [s.value as u32, d.value as u32, l4.value as u32]))
}

/// One entry: 32 bytes, two per cache line.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
pub(crate) struct ExactEntry {
    pub key: [u32; 3],
    /// [`pack_action`] of the rule.
    pub act: u32,
    pub rank: u64,
    /// Rule slot; `u32::MAX` marks a free entry.
    pub slot: u32,
    pub gen: u32,
}

const FREE: ExactEntry = ExactEntry { key: [0; 3], act: 0, rank: u64::MAX, slot: u32::MAX, gen: 0 };

/// A hit: what the lookup needs to finish the packet without touching the rule array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ExactHit {
    pub rank: u64,
    pub slot: u32,
    pub gen: u32,
    pub act: u32,
}

#[derive(Clone, Debug)]
pub(crate) struct ExactTable {
    /// Bits 32..64 of the outer L4 word every entry constrains, and their value.
    pub hi_mask: u64,
    pub hi_value: u64,
    /// Lower bound on the ranks held (not raised on delete).
    pub best_rank: u64,
    len: usize,
    /// `64 - log2(lines)`: the home line is the hash's top bits.
    shift: u32,
    entries: SlotBuf<ExactEntry>,
}

#[inline(always)]
pub(crate) fn hash3(k: &[u32; 3]) -> u64 {
    let a = (k[0] as u64) | ((k[1] as u64) << 32);
    let mut h = (a ^ 0x243f_6a88_85a3_08d3).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    h = (h.rotate_left(29) ^ k[2] as u64).wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
    h ^ (h >> 32)
}

impl ExactTable {
    pub fn new(hi_mask: u64, hi_value: u64) -> ExactTable {
        ExactTable { hi_mask, hi_value, best_rank: u64::MAX, len: 0, shift: 64 - 4, entries: SlotBuf::new(32, FREE) }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn memory_bytes(&self) -> usize {
        self.entries.len() * std::mem::size_of::<ExactEntry>()
    }

    /// The key of a packet for this table, `None` when the packet cannot hit it.
    #[inline(always)]
    pub fn key_of(&self, key: &PacketKey) -> Option<[u32; 3]> {
        let l4 = key.words[W_L4];
        (l4 & self.hi_mask == self.hi_value).then(|| [key.words[W_SRC_LO] as u32, key.words[W_DST_LO] as u32, l4 as u32])
    }

    /// First entry of the home line.
    #[inline(always)]
    fn home(&self, hash: u64) -> usize {
        ((hash >> self.shift) as usize) << 1
    }

    #[inline(always)]
    pub fn hash(&self, k: &[u32; 3]) -> u64 {
        hash3(k)
    }

    #[inline(always)]
    pub fn prefetch(&self, hash: u64) {
        if let Some(e) = self.entries.get(self.home(hash)) {
            prefetch_read(e as *const ExactEntry as *const u8);
        }
    }

    #[inline(always)]
    pub fn get_hashed(&self, k: &[u32; 3], hash: u64) -> Option<ExactHit> {
        let mask = self.entries.len() - 1;
        let mut i = self.home(hash);
        loop {
            let e = &self.entries[i];
            if e.slot == u32::MAX {
                return None;
            }
            if e.key == *k {
                return Some(ExactHit { rank: e.rank, slot: e.slot, gen: e.gen, act: e.act });
            }
            i = (i + 1) & mask;
        }
    }

    fn find(&self, k: &[u32; 3]) -> Result<usize, usize> {
        let mask = self.entries.len() - 1;
        let mut i = self.home(hash3(k));
        loop {
            let e = &self.entries[i];
            if e.slot == u32::MAX {
                return Err(i);
            }
            if e.key == *k {
                return Ok(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// Adds an entry; `false` (nothing changed) when the key is already present.
    pub fn insert(&mut self, e: ExactEntry) -> bool {
        if (self.len + 1) * 2 > self.entries.len() {
            self.grow();
        }
        match self.find(&e.key) {
            Ok(_) => false,
            Err(i) => {
                self.entries[i] = e;
                self.len += 1;
                self.best_rank = self.best_rank.min(e.rank);
                true
            }
        }
    }

    /// Removes the entry of `k` if it belongs to `slot`.
    pub fn remove(&mut self, k: &[u32; 3], slot: u32) -> bool {
        let Ok(i) = self.find(k) else { return false };
        if self.entries[i].slot != slot {
            return false;
        }
        let mask = self.entries.len() - 1;
        // Backward shift: move later members of the probe run into the hole when their home
        // is at or before it (cyclically).
        let mut hole = i;
        let mut j = (i + 1) & mask;
        loop {
            let e = self.entries[j];
            if e.slot == u32::MAX {
                break;
            }
            let home = self.home(hash3(&e.key));
            if (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(hole) & mask) {
                self.entries[hole] = e;
                hole = j;
            }
            j = (j + 1) & mask;
        }
        self.entries[hole] = FREE;
        self.len -= 1;
        if self.len == 0 {
            self.best_rank = u64::MAX;
        }
        true
    }

    fn grow(&mut self) {
        let cap = self.entries.len() * 2;
        let old = std::mem::replace(&mut self.entries, SlotBuf::new(cap, FREE));
        self.shift -= 1;
        self.len = 0;
        for e in old.iter().filter(|e| e.slot != u32::MAX) {
            let Err(i) = self.find(&e.key) else { continue };
            self.entries[i] = *e;
            self.len += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn entry(k: [u32; 3], slot: u32) -> ExactEntry {
        ExactEntry { key: k, act: pack_action(Fate::Queue { index: 3 }, None, None), rank: slot as u64, slot, gen: 1 }
    }

    #[test]
    fn test_insert_get_remove_against_std_map() {
        let mut t = ExactTable::new(0, 0);
        let mut m: HashMap<[u32; 3], u32> = HashMap::new();
        let mut x = 99u64;
        for step in 0..30_000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let k = [((x >> 50) % 900) as u32, 7, ((x >> 40) & 1) as u32];
            if x % 3 == 0 {
                match m.remove(&k) {
                    Some(slot) => {
                        assert!(!t.remove(&k, slot + 1), "step {step}: another rule's slot");
                        assert!(t.remove(&k, slot), "step {step}");
                    }
                    None => assert!(!t.remove(&k, 0), "step {step}"),
                }
            } else {
                assert_eq!(t.insert(entry(k, step)), !m.contains_key(&k), "step {step}");
                m.entry(k).or_insert(step);
            }
            assert_eq!(t.len(), m.len());
        }
        for (k, &slot) in &m {
            let h = t.get_hashed(k, t.hash(k)).expect("present");
            assert_eq!((h.slot, h.rank, h.gen), (slot, slot as u64, 1));
        }
        assert!(t.get_hashed(&[5000, 7, 0], t.hash(&[5000, 7, 0])).is_none());
    }

    #[test]
    fn test_remove_needs_the_owning_slot() {
        let mut t = ExactTable::new(0, 0);
        assert!(t.insert(entry([1, 2, 3], 10)));
        assert!(!t.insert(entry([1, 2, 3], 11)), "one rule per key");
        assert!(!t.remove(&[1, 2, 3], 11));
        assert!(t.remove(&[1, 2, 3], 10));
        assert_eq!(t.len(), 0);
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
        assert_eq!(pack_action(Fate::Drop, None, Some(1)), ACT_SLOW, "marks are read from the rule");
        assert_eq!(pack_action(Fate::PortId { id: u32::MAX }, None, None), ACT_SLOW);
        assert_eq!(pack_action(Fate::NoFate, Some(1 << 28), None), ACT_SLOW);
    }
}
