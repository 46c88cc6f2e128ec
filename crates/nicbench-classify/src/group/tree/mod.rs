//! A decision tree over the outer 5-tuple (HiCuts-style equal-size cuts, EffiCuts-style
//! partitioning when one tree would replicate too much), compiled into flat arrays.
//!
//! The tree only *narrows* the candidates: every leaf entry is checked against the key
//! (5-tuple intervals plus the masked protocol/presence/flag bits of the L4 word inline,
//! and the full compiled rule when the inline check does not cover all of the rule's
//! constraints). A rule is projected onto each dimension as an interval that contains
//! every value it can match, so any rule shape is accepted; prefixes, exact values and
//! full-mask ranges are exact intervals, which is what ClassBench-style sets are made of.
//!
//! Layout, chosen for the cache (the lookup is a chain of dependent loads, so what counts
//! is how much of the tree stays in L1/L2):
//! - a node is 8 bytes ([`Node`]); a cut node's children are contiguous node *copies*, so
//!   one step down is one load;
//! - a leaf is a run of `u32` indices into [`Tree::rules`], one cache line per rule in
//!   rank order (a 32-byte inline check, then rank, slot and full-check flag for a match):
//!   rules replicated into many leaves cost 4 bytes per copy, not a copy of the rule;
//! - the burst lookup runs in stages over the keys (descent, leaf prefetch, scan, rule
//!   entry prefetch, validation) so that each stage's cache misses overlap.
//!
//! Invariants:
//! - `rules` are sorted by rank and leaves list indices in ascending order, so the
//!   first entry of a leaf that matches is that subtree's best rule;
//! - subtrees are ordered by the best rank they hold (early exit across subtrees);
//! - a tree is immutable once built. It is shared by both left-right copies and is only
//!   *valid for a rule* while the rule entry in the copy carries the tree's id: a delete or
//!   modify resets the entry, so a changed rule is ignored by the tree (a tombstone for
//!   free) and lives in the group's TupleMerge delta instead.

use super::RuleEntry;
use crate::compile::CompiledRule;
use crate::key::{PacketKey, W_DST_LO, W_L4, W_SRC_LO};
use std::sync::Arc;

mod build;
pub(crate) use build::build;

/// Tree id of a rule that is not in a tree (ids start at 1).
pub(crate) const NO_TREE: u32 = 0;

/// Dimensions cut on: source, destination, source port, destination port, protocol.
const DIMS: usize = 5;

/// One rule to build from: (slot, rank, rule).
pub(crate) type TreeInput = (u32, u64, Arc<CompiledRule>);

/// A rule's inline check, 32 bytes: intervals as (low, span) so a test is one subtraction
/// and one comparison, and the L4 word's bits above the ports (protocol, presence, TCP
/// flags) as a masked equality.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, align(32))]
struct Check {
    src_lo: u32,
    src_span: u32,
    dst_lo: u32,
    dst_span: u32,
    sport_lo: u16,
    sport_span: u16,
    dport_lo: u16,
    dport_span: u16,
    /// Constraints on `L4 word >> 32`.
    hi_mask: u32,
    hi_value: u32,
}

/// The key's fields as the checks and the cuts read them.
#[derive(Clone, Copy, Debug, Default)]
struct Fields {
    /// [src, dst, sport, dport, proto, 0, 0, 0]: indexed by a node's dimension (3 bits, so
    /// no bounds check).
    d: [u32; 8],
    /// `L4 word >> 32`.
    hi: u32,
}

impl Fields {
    #[inline(always)]
    fn of(key: &PacketKey) -> Fields {
        let l4 = key.words[W_L4];
        Fields {
            d: [key.words[W_SRC_LO] as u32, key.words[W_DST_LO] as u32, l4 as u32 & 0xffff, (l4 >> 16) as u32 & 0xffff, (l4 >> 32) as u32 & 0xff, 0, 0, 0],
            hi: (l4 >> 32) as u32,
        }
    }
}

impl Check {
    #[inline(always)]
    fn matches(&self, f: &Fields) -> bool {
        // Non-short-circuit `&`: five compares and no branch until the end.
        (f.d[0].wrapping_sub(self.src_lo) <= self.src_span)
            & (f.d[1].wrapping_sub(self.dst_lo) <= self.dst_span)
            & ((f.d[2] as u16).wrapping_sub(self.sport_lo) <= self.sport_span)
            & ((f.d[3] as u16).wrapping_sub(self.dport_lo) <= self.dport_span)
            & (f.hi & self.hi_mask == self.hi_value)
    }
}

/// What is read of a rule once its inline check matched.
#[derive(Clone, Copy, Debug, Default)]
struct Meta {
    rank: u64,
    slot: u32,
    /// Non-zero when the inline check is not the whole rule.
    full_check: u32,
}

/// A rule as the leaves see it: the inline check and, in the same cache line, what a
/// match needs next (one miss per candidate, not two).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
struct TreeRule {
    check: Check,
    meta: Meta,
}

/// Leaf items tested per step of a leaf scan.
const SCAN_CHUNK: usize = 4;

/// Leaf flag of [`Node::m`]; a leaf's `m` holds its item count below it.
const LEAF: u32 = 1 << 31;

/// A tree node in 8 bytes. Cut: children at `a..a + mask + 1`, `m` = dimension (3 bits) |
/// shift (5 bits) << 3 | child-index mask << 8. Leaf: items at `a..a + count`, `m` =
/// [`LEAF`] | count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Node {
    a: u32,
    m: u32,
}

impl Node {
    /// A leaf with no items: what keys that skip a subtree hold.
    const EMPTY: Node = Node { a: 0, m: LEAF };

    #[inline(always)]
    fn is_leaf(&self) -> bool {
        self.m & LEAF != 0
    }

    /// Leaf item range.
    #[inline(always)]
    fn items(&self) -> std::ops::Range<usize> {
        self.a as usize..self.a as usize + (self.m & !LEAF) as usize
    }

    fn cut(dim: usize, shift: u32, bits: u32, first_child: u32) -> Node {
        Node { a: first_child, m: dim as u32 | shift << 3 | ((1u32 << bits) - 1) << 8 }
    }

    fn leaf(first_item: u32, count: u32) -> Node {
        Node { a: first_item, m: LEAF | count }
    }

    /// Cut node: the index of the child `f` falls in (relative to `a`).
    #[inline(always)]
    fn child_index(&self, f: &Fields) -> u32 {
        (f.d[(self.m & 7) as usize] >> ((self.m >> 3) & 31)) & (self.m >> 8)
    }
}

#[derive(Debug)]
struct SubTree {
    best_rank: u64,
    root: Node,
    /// Children of the cut nodes, as node copies: a cut node's children are
    /// `children[a..=a + mask]`, so a step down the tree is one load.
    children: Box<[Node]>,
    /// Leaf items: indices into the tree's rules, ascending within a leaf.
    items: Box<[u32]>,
}

impl SubTree {
    #[inline(always)]
    fn child(&self, n: &Node, f: &Fields) -> &Node {
        &self.children[(n.a + n.child_index(f)) as usize]
    }
}

/// One group's decision tree (see the module doc).
#[derive(Debug)]
pub(crate) struct Tree {
    pub id: u32,
    /// In rank order; leaf items index it.
    rules: Box<[TreeRule]>,
    subtrees: Box<[SubTree]>,
    /// The rules the tree was built from: a rule is in the tree only while its slot still
    /// holds this very `Arc` (checked when the tree is installed).
    pub members: Box<[(u32, Arc<CompiledRule>)]>,
}

impl Tree {
    /// Tree lookup: improves `best` (rank, slot) with the best valid rule of the tree.
    #[inline]
    pub fn lookup(&self, key: &PacketKey, rules: &[RuleEntry], best: &mut (u64, u32)) {
        let f = Fields::of(key);
        let mut bound = u32::MAX;
        for st in self.subtrees.iter() {
            if st.best_rank >= best.0 {
                break;
            }
            let mut n = &st.root;
            while !n.is_leaf() {
                n = st.child(n, &f);
            }
            let items = st.items.get(n.items()).unwrap_or(&[]);
            if let Some(pos) = self.first_match(items, 0, &f, bound) {
                self.resolve(items, pos, &f, key, rules, best, &mut bound);
            }
        }
    }

    /// Position in `items` (from `from` on) of the first rule whose inline check matches
    /// and whose index is below `bound` (the tree's best valid match so far, `u32::MAX`:
    /// none; indices are in rank order, so the scan ends at the first item not below
    /// it). Tests [`SCAN_CHUNK`] items at a time without a branch per item: leaves are
    /// short and their matches unpredictable.
    #[inline(always)]
    fn first_match(&self, items: &[u32], from: usize, f: &Fields, bound: u32) -> Option<usize> {
        let mut at = from;
        while let Some(&head) = items.get(at) {
            if head >= bound {
                return None;
            }
            let chunk = &items[at..items.len().min(at + SCAN_CHUNK)];
            let mut first = usize::MAX;
            for (j, &i) in chunk.iter().enumerate().rev() {
                let hit = self.rules.get(i as usize).is_some_and(|r| r.check.matches(f)) & (i < bound);
                first = if hit { j } else { first };
            }
            if first != usize::MAX {
                return Some(at + first);
            }
            at += chunk.len();
        }
        None
    }

    /// From the inline match at `items[pos]`: the subtree's best valid rule, into `best`
    /// and `bound` if it beats them. A match that is not valid (deleted since the build,
    /// or failing its full check) resumes the scan.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn resolve(&self, items: &[u32], mut pos: usize, f: &Fields, key: &PacketKey, rules: &[RuleEntry], best: &mut (u64, u32), bound: &mut u32) {
        loop {
            let Some(r) = items.get(pos).and_then(|&i| self.rules.get(i as usize)) else { return };
            if r.meta.rank >= best.0 {
                return;
            }
            if self.valid(&r.meta, key, rules) {
                *best = (r.meta.rank, r.meta.slot);
                *bound = items[pos];
                return;
            }
            match self.first_match(items, pos + 1, f, *bound) {
                Some(p) => pos = p,
                None => return,
            }
        }
    }

    /// [`lookup`](Self::lookup) for a burst, in stages over the keys so that each stage's
    /// cache misses (tree nodes, leaf items, rules, rule entries) are in flight together:
    /// the descent walks all keys down a subtree in lockstep, then the leaves' items and
    /// first rules are prefetched, scanned, and the candidates' rule entries prefetched
    /// before they are validated. Not inlined: one call per burst costs nothing, and
    /// profiles then show the tree apart from the rest of the walk.
    #[inline(never)]
    pub fn lookup_burst(&self, keys: &[&PacketKey], rules: &[RuleEntry], best: &mut [(u64, u32)]) {
        const B: usize = super::BURST;
        const NONE: usize = usize::MAX;
        let n = keys.len().min(B).min(best.len());
        let mut f = [Fields::default(); B];
        for i in 0..n {
            f[i] = Fields::of(keys[i]);
        }
        let mut cur: [Node; B] = [Node::EMPTY; B];
        let mut bound = [u32::MAX; B];
        let mut cand = [NONE; B];
        for st in self.subtrees.iter() {
            // The keys this subtree may improve (its best rank beats theirs).
            let mut act = [0u8; B];
            let mut na = 0;
            for i in 0..n {
                act[na] = i as u8;
                na += (best[i].0 > st.best_rank) as usize;
                cur[i] = st.root;
            }
            if na == 0 {
                break; // subtrees ascend in best rank: no later one can help either
            }
            // Lockstep descent over the keys still at a cut node, kept in a compacted list
            // without a branch per key: the loads of a level are in flight together
            // instead of being flushed by mispredicted "is it a leaf yet" branches.
            let mut desc = act;
            let mut k = if st.root.is_leaf() { 0 } else { na };
            while k > 0 {
                let mut next_k = 0;
                for j in 0..k {
                    let i = desc[j] as usize;
                    let c = cur[i];
                    let next = st.children.get((c.a + c.child_index(&f[i])) as usize).copied().unwrap_or(Node::EMPTY);
                    cur[i] = next;
                    desc[next_k] = i as u8;
                    next_k += !next.is_leaf() as usize;
                }
                k = next_k;
            }
            for &i in &act[..na] {
                crate::table::prefetch_read(st.items.as_ptr().wrapping_add(cur[i as usize].a as usize) as *const u8);
            }
            for &i in &act[..na] {
                let items = st.items.get(cur[i as usize].items()).unwrap_or(&[]);
                for &r in items.iter().take(2) {
                    crate::table::prefetch_read(self.rules.as_ptr().wrapping_add(r as usize) as *const u8);
                }
            }
            for &i in &act[..na] {
                let i = i as usize;
                let items = st.items.get(cur[i].items()).unwrap_or(&[]);
                cand[i] = self.first_match(items, 0, &f[i], bound[i]).unwrap_or(NONE);
                if let Some(r) = items.get(cand[i]).and_then(|&r| self.rules.get(r as usize)) {
                    crate::table::prefetch_read(rules.as_ptr().wrapping_add(r.meta.slot as usize) as *const u8);
                }
            }
            for &i in &act[..na] {
                let i = i as usize;
                if cand[i] != NONE {
                    let items = st.items.get(cur[i].items()).unwrap_or(&[]);
                    self.resolve(items, cand[i], &f[i], keys[i], rules, &mut best[i], &mut bound[i]);
                }
            }
        }
    }

    /// Whether the entry's rule is still this tree's (not deleted or modified since) and,
    /// when the inline check is partial, whether the whole rule matches.
    #[inline(always)]
    fn valid(&self, m: &Meta, key: &PacketKey, rules: &[RuleEntry]) -> bool {
        match rules.get(m.slot as usize) {
            Some(r) if r.tree == self.id => m.full_check == 0 || r.rule.as_ref().is_some_and(|rule| rule.matches(key)),
            _ => false,
        }
    }

    pub fn subtree_count(&self) -> usize {
        self.subtrees.len()
    }

    pub fn memory_bytes(&self) -> usize {
        self.rules.len() * std::mem::size_of::<TreeRule>()
            + self.members.len() * 16
            + self.subtrees.iter().map(|s| s.children.len() * std::mem::size_of::<Node>() + s.items.len() * 4).sum::<usize>()
    }
}

#[cfg(test)]
mod tests;
