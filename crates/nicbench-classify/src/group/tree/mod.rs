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
//!   one step down is one load. A leaf is its own only child (its `a` points at a copy of
//!   itself past the cut nodes' children, and its dimension field reads a field that is
//!   always 0), so a descent steps every key the same way, leaf or not, with no branch;
//! - a leaf is a run of 256-byte blocks ([`leaf`]): the inline checks of eight rules packed
//!   field by field, tested together (AVX2 when the CPU has it, else a branch-free scalar
//!   loop), with the lanes' rule indices beside them. Fat leaves cost little to scan, so
//!   the tree is shallow and replicates few rules; the rank, slot and full-check flag of a
//!   rule ([`Meta`], 16 bytes, rank order) are read only for a matching lane;
//! - the burst lookup runs in stages over the keys (descent, leaf prefetch, scan, rule
//!   entry prefetch, validation) so that each stage's cache misses overlap.
//!
//! Invariants:
//! - `rules` are sorted by rank and a leaf's lanes hold indices in ascending order, so
//!   the first lane of a leaf that matches is that subtree's best rule;
//! - subtrees are ordered by the best rank they hold (early exit across subtrees);
//! - a tree is immutable once built. It is shared by both left-right copies and is only
//!   *valid for a rule* while the rule entry in the copy carries the tree's id: a delete or
//!   modify resets the entry, so a changed rule is ignored by the tree (a tombstone for
//!   free) and lives in the group's TupleMerge delta instead.

use super::RuleEntry;
use crate::compile::CompiledRule;
use crate::key::PacketKey;
use crate::key_view::BurstKey;
use std::sync::Arc;

mod build;
mod leaf;
pub(crate) use build::build;
use leaf::{Block, LANES};

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
    /// The ports as the leaf blocks pair them: source port low, destination port high
    /// (the L4 word's low 32 bits).
    ports: u32,
}

impl Fields {
    #[inline(always)]
    fn of<K: BurstKey>(key: &K) -> Fields {
        let l4 = key.l4();
        Fields {
            d: [
                key.src(),
                key.dst(),
                l4 as u32 & 0xffff,
                (l4 >> 16) as u32 & 0xffff,
                (l4 >> 32) as u32 & 0xff,
                0,
                0,
                0,
            ],
            hi: (l4 >> 32) as u32,
            ports: l4 as u32,
        }
    }
}

impl Check {
    /// The check of one rule (the leaves test eight at a time, [`Block::mask`]).
    #[cfg(test)]
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

/// Leaf flag of [`Node::m`].
const LEAF: u32 = 1 << 23;

/// Dimension field of a leaf: [`Fields::d`]`[5]` is always 0, so a leaf's child index is 0
/// whatever its other bits hold.
const LEAF_DIM: u32 = 5;

/// Block count bits of a leaf's [`Node::m`].
const COUNT_MASK: u32 = LEAF - 1;

/// A tree node in 8 bytes. Cut: children at `a..a + (1 << len)`, `m` = shift (bits 0-7) |
/// len << 8 (bits 8-15) | dimension << 29 (the top bits, so one shift reads it): the low
/// half is BMI1 `bextr`'s control word, so a child index is one instruction once the field
/// is loaded. Leaf: `a` = the index of the leaf's own copy in [`SubTree::children`] (its
/// blocks start at `a - SubTree::base`), `m` = [`LEAF_DIM`] << 29 | [`LEAF`] | block count
/// (bits 0-22: the dimension reads a field that is 0, so the control word is free).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Node {
    a: u32,
    m: u32,
}

impl Node {
    #[inline(always)]
    fn is_leaf(&self) -> bool {
        self.m & LEAF != 0
    }

    /// Leaf: number of blocks.
    #[inline(always)]
    fn block_count(&self) -> usize {
        (self.m & COUNT_MASK) as usize
    }

    /// Cut: number of children.
    fn fanout(&self) -> usize {
        1 << ((self.m >> 8) & 0xff)
    }

    /// The dimension read ([`LEAF_DIM`] for a leaf). Three bits: an index into
    /// [`Fields::d`] with no mask and no bounds check.
    #[inline(always)]
    fn dim(&self) -> usize {
        (self.m >> 29) as usize
    }

    fn cut(dim: usize, shift: u32, bits: u32, first_child: u32) -> Node {
        assert!(
            dim < LEAF_DIM as usize && shift < 32 && (1..=23).contains(&bits),
            "cut of {bits} bits on dimension {dim}"
        );
        Node {
            a: first_child,
            m: shift | bits << 8 | (dim as u32) << 29,
        }
    }

    /// A leaf whose own copy is at `self_slot` of the children (the builder passes the
    /// first block and adds [`SubTree::base`] once the cut nodes are all placed).
    fn leaf(self_slot: u32, count: u32) -> Node {
        assert!(count <= COUNT_MASK, "leaf of {count} blocks");
        Node {
            a: self_slot,
            m: LEAF_DIM << 29 | LEAF | count,
        }
    }

    /// Cut node: the index of the child `f` falls in (relative to `a`); 0 for a leaf. `bmi`
    /// must only be true when the CPU has BMI1 (the callers pass their `avx2` flag, which
    /// [`leaf::have_avx2`] sets only with BMI1 too).
    #[inline(always)]
    fn child_index(&self, f: &Fields, bmi: bool) -> u32 {
        let x = f.d[self.dim()];
        #[cfg(target_arch = "x86_64")]
        if bmi {
            // SAFETY: the CPU has BMI1 (see above). `bextr` reads the shift from bits 0-7
            // and the length from bits 8-15 of `m`, the layout of a cut node.
            return unsafe { std::arch::x86_64::_bextr2_u32(x, self.m) };
        }
        let _ = bmi;
        // A leaf's low half is its block count, but its field is 0: the index is 0.
        (x >> (self.m & 31)) & ((1u32 << ((self.m >> 8) & 31)) - 1)
    }
}

#[derive(Debug)]
struct SubTree {
    best_rank: u64,
    root: Node,
    /// Children of the cut nodes, as node copies: a cut node's children are
    /// `children[a..a + (1 << len)]`, so a step down the tree is one load. From `base` on, one
    /// slot per leaf block: the slot of a leaf's first block holds the leaf (its own
    /// child), the others the empty leaf. Every node's children are in bounds (asserted
    /// when the subtree is built), which the descent relies on.
    children: Box<[Node]>,
    /// Index of the leaf slots in `children` (the cut nodes' children come before).
    base: u32,
    /// Leaf blocks (see [`leaf`]); a leaf's rules ascend in index lane by lane. Block 0
    /// is [`Block::EMPTY`], the block of empty leaves.
    blocks: Box<[Block]>,
    /// Tree rule index of each block lane ([`NO_INDEX`]: unused).
    idx: Box<[u32]>,
}

impl SubTree {
    #[inline(always)]
    fn child(&self, n: &Node, f: &Fields, bmi: bool) -> &Node {
        &self.children[(n.a + n.child_index(f, bmi)) as usize]
    }

    /// A leaf's block range.
    #[inline(always)]
    fn blocks_of(&self, n: &Node) -> std::ops::Range<usize> {
        let start = n.a.wrapping_sub(self.base) as usize;
        start..start + n.block_count()
    }

    /// The first block of `range` with a matching lane, and its lane mask (0: none).
    #[inline(always)]
    fn scan(&self, range: std::ops::Range<usize>, f: &Fields, avx2: bool) -> (usize, u32) {
        // No closure here: a generic adapter would be instantiated without AVX2 and keep
        // the vector check out of line.
        for b in range {
            if let Some(blk) = self.blocks.get(b) {
                let m = blk.mask(f, avx2);
                if m != 0 {
                    return (b, m);
                }
            }
        }
        (usize::MAX, 0)
    }
}

/// One group's decision tree (see the module doc).
#[derive(Debug)]
pub(crate) struct Tree {
    pub id: u32,
    /// In rank order; leaf lanes index it.
    rules: Box<[Meta]>,
    subtrees: Box<[SubTree]>,
    /// The rules the tree was built from: a rule is in the tree only while its slot still
    /// holds this very `Arc` (checked when the tree is installed).
    pub members: Box<[(u32, Arc<CompiledRule>)]>,
    /// Whether leaf blocks are checked with AVX2 (detected at build time).
    avx2: bool,
}

impl Tree {
    /// Tree lookup: improves `best` (rank, slot) with the best valid rule of the tree.
    #[inline]
    pub fn lookup(&self, key: &PacketKey, rules: &[RuleEntry], best: &mut (u64, u32)) {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: `avx2` is only set when the CPU has AVX2 and BMI1.
            return unsafe { self.lookup_avx2(key, rules, best) };
        }
        self.lookup_with(key, rules, best, false)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,bmi1")]
    unsafe fn lookup_avx2(&self, key: &PacketKey, rules: &[RuleEntry], best: &mut (u64, u32)) {
        self.lookup_with(key, rules, best, true)
    }

    #[inline(always)]
    fn lookup_with(&self, key: &PacketKey, rules: &[RuleEntry], best: &mut (u64, u32), avx2: bool) {
        let f = Fields::of(key);
        for st in self.subtrees.iter() {
            if st.best_rank >= best.0 {
                break;
            }
            let mut n = &st.root;
            while !n.is_leaf() {
                n = st.child(n, &f, avx2);
            }
            let r = st.blocks_of(n);
            let (b, m) = st.scan(r.clone(), &f, avx2);
            self.resolve(st, r.end, b, m, &f, key, rules, best, avx2);
        }
    }

    /// From the matching lanes `m` of block `b` (a leaf's first block with a match; the
    /// leaf ends before block `end`): the leaf's best valid rule, into `best` if it beats
    /// it. A match that is not valid (deleted since the build, or failing its full check)
    /// moves on to the next matching lane, then the next blocks.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn resolve<K: BurstKey>(
        &self,
        st: &SubTree,
        end: usize,
        mut b: usize,
        mut m: u32,
        f: &Fields,
        key: &K,
        rules: &[RuleEntry],
        best: &mut (u64, u32),
        avx2: bool,
    ) {
        while m != 0 {
            while m != 0 {
                let meta = self.meta_of(st, b, m);
                if meta.rank >= best.0 {
                    return;
                }
                if self.valid(meta, key, rules) {
                    *best = (meta.rank, meta.slot);
                    return;
                }
                m &= m - 1;
            }
            (b, m) = st.scan(b + 1..end, f, avx2);
        }
    }

    /// The rule of the lowest lane of `m`, a non-empty mask of matching lanes of block `b`
    /// (`b < st.blocks.len()`: what [`SubTree::scan`] returns or a leaf's first block).
    #[inline(always)]
    fn meta_of(&self, st: &SubTree, b: usize, m: u32) -> &Meta {
        let at = b * LANES + (m.trailing_zeros() as usize & (LANES - 1));
        debug_assert!(m != 0 && at < st.idx.len() && (st.idx[at] as usize) < self.rules.len());
        // SAFETY: `idx` has `LANES` entries per block (`b` is a block); a lane that can match
        // holds an index into `rules`, and only unused lanes (which never match) hold
        // `NO_INDEX`: `build_with` asserts both for every subtree, immutable after.
        unsafe { self.rules.get_unchecked(*st.idx.get_unchecked(at) as usize) }
    }

    /// [`lookup`](Self::lookup) for a burst, in stages over the keys so that each stage's
    /// cache misses (tree nodes, leaf blocks, rule entries) are in flight together: the
    /// descent walks all keys down a subtree in lockstep, then the leaves' first blocks
    /// are prefetched, scanned, and the candidates' rule entries prefetched before they
    /// are validated. Not inlined: one call per burst costs nothing, and profiles then
    /// show the tree apart from the rest of the walk. `keys`: full keys, or the tuple fast
    /// path's compact ones ([`crate::key_view`]).
    #[inline(never)]
    pub fn lookup_burst<K: BurstKey>(&self, keys: &[K], rules: &[RuleEntry], best: &mut [(u64, u32)]) {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: `avx2` is only set when the CPU has AVX2 and BMI1.
            return unsafe { self.burst_avx2(keys, rules, best) };
        }
        self.burst_with(keys, rules, best, false)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,bmi1")]
    unsafe fn burst_avx2<K: BurstKey>(&self, keys: &[K], rules: &[RuleEntry], best: &mut [(u64, u32)]) {
        self.burst_with(keys, rules, best, true)
    }

    #[inline(always)]
    fn burst_with<K: BurstKey>(&self, keys: &[K], rules: &[RuleEntry], best: &mut [(u64, u32)], avx2: bool) {
        const B: usize = super::BURST;
        // Indices into the burst arrays are masked with `M` (a no-op: they are < B) so the
        // compiler drops the bounds checks of the hot loops.
        const M: usize = B - 1;
        const _: () = assert!(B.is_power_of_two());
        let n = keys.len().min(B).min(best.len());
        let mut f = [Fields::default(); B];
        for i in 0..n {
            f[i] = Fields::of(&keys[i]);
        }
        let mut cur: [Node; B] = [Node { a: 0, m: LEAF }; B];
        let mut cand = [(0usize, 0u32); B];
        for st in self.subtrees.iter() {
            // The keys this subtree may improve (its best rank beats theirs).
            let mut act = [0u8; B];
            let mut na = 0;
            for i in 0..n {
                act[na & M] = i as u8;
                na += (best[i].0 > st.best_rank) as usize;
                cur[i] = st.root;
            }
            if na == 0 {
                break; // subtrees ascend in best rank: no later one can help either
            }
            // Descent four keys at a time, their nodes in registers: each step loads the
            // four children together (a leaf is its own child), so the loads overlap with
            // no branch per key. (Tried: level by level over a compacted list of the keys
            // still at cut nodes: callgrind's branch model counted 1.6 fewer mispredictions
            // per key on acl1_1k and the same instructions, but it ran 4-8% slower on the
            // real CPU; a step that kept a leaf by a branch mispredicted 1.7 times per key
            // on acl1_1k, and a `select_unpredictable` one cost 9% more instructions.)
            if !st.root.is_leaf() {
                let ch = &st.children[..];
                let step = |c: Node, f: &Fields| -> Node {
                    let at = (c.a + c.child_index(f, avx2)) as usize;
                    debug_assert!(at < ch.len());
                    // SAFETY: every node's children are in bounds of `children` (a cut node's
                    // `a..a + (1 << len)`, a leaf's own slot `a`): `build` asserts it for each
                    // subtree, which is immutable after, and `c` is the root or a child.
                    unsafe { *ch.get_unchecked(at) }
                };
                // Groups of exactly four: the last group is padded with its last key (walked
                // twice, same result), so the group needs no remainder arithmetic.
                let padded = (na + 3) & !3;
                let last = act[(na - 1) & M];
                for j in na..padded {
                    act[j & M] = last;
                }
                for g in act[..padded].chunks_exact(4) {
                    let ix = [
                        g[0] as usize & M,
                        g[1] as usize & M,
                        g[2] as usize & M,
                        g[3] as usize & M,
                    ];
                    let mut c = [st.root; 4];
                    loop {
                        c = [
                            step(c[0], &f[ix[0]]),
                            step(c[1], &f[ix[1]]),
                            step(c[2], &f[ix[2]]),
                            step(c[3], &f[ix[3]]),
                        ];
                        if c[0].is_leaf() & c[1].is_leaf() & c[2].is_leaf() & c[3].is_leaf() {
                            break;
                        }
                    }
                    for q in 0..4 {
                        cur[ix[q]] = c[q];
                    }
                }
            }
            for &i in &act[..na] {
                let blk = st
                    .blocks
                    .as_ptr()
                    .wrapping_add(st.blocks_of(&cur[i as usize & M]).start) as *const u8;
                for line in 0..std::mem::size_of::<Block>() / 64 {
                    crate::table::prefetch_read(blk.wrapping_add(line * 64));
                }
            }
            // Every key tests its leaf's first block, with no branch per key (an empty
            // leaf tests the subtree's empty sentinel block 0); the keys whose first block
            // has no match but whose leaf has more blocks go on in a second pass. The
            // branches of a scan loop per key cost more than the scans (measured).
            let (mut more, mut nm) = ([0u8; B], 0);
            let (mut hit, mut nh) = ([0u8; B], 0);
            for &i in &act[..na] {
                let i = i as usize & M;
                let leaf = cur[i];
                let start = st.blocks_of(&leaf).start;
                let m = match st.blocks.get(start) {
                    Some(blk) => blk.mask(&f[i], avx2),
                    None => 0,
                };
                cand[i] = (start, m);
                more[nm & M] = i as u8;
                nm += ((m == 0) & (leaf.block_count() > 1)) as usize;
                hit[nh & M] = i as u8;
                nh += (m != 0) as usize;
            }
            // The same, block by block, for the keys still without a match: pass `k` tests
            // block `k` of their leaves and keeps those that miss and have more, so no
            // branch depends on where in its leaf a key matches (a scan loop per key
            // mispredicted its exit 0.4 times per key on ipc1_1k).
            let mut k = 1;
            while nm > 0 {
                let mut nn = 0;
                for j in 0..nm {
                    let i = more[j & M] as usize & M;
                    let r = st.blocks_of(&cur[i]);
                    let b = r.start + k;
                    let m = match st.blocks.get(b) {
                        Some(blk) => blk.mask(&f[i], avx2),
                        None => 0,
                    };
                    cand[i] = (b, m);
                    more[nn & M] = i as u8;
                    nn += ((m == 0) & (b + 1 < r.end)) as usize;
                    hit[nh & M] = i as u8;
                    nh += (m != 0) as usize;
                }
                nm = nn;
                k += 1;
            }
            for &i in &hit[..nh] {
                let (b, m) = cand[i as usize & M];
                let meta = self.meta_of(st, b, m);
                crate::table::prefetch_read(rules.as_ptr().wrapping_add(meta.slot as usize) as *const u8);
            }
            for &i in &hit[..nh] {
                let i = i as usize & M;
                let (b, m) = cand[i];
                self.resolve(
                    st,
                    st.blocks_of(&cur[i]).end,
                    b,
                    m,
                    &f[i],
                    &keys[i],
                    rules,
                    &mut best[i],
                    avx2,
                );
            }
        }
    }

    /// Whether the entry's rule is still this tree's (not deleted or modified since) and,
    /// when the inline check is partial, whether the whole rule matches.
    #[inline(always)]
    fn valid<K: BurstKey>(&self, m: &Meta, key: &K, rules: &[RuleEntry]) -> bool {
        match rules.get(m.slot as usize) {
            Some(r) if r.tree == self.id => {
                m.full_check == 0 || r.rule.as_ref().is_some_and(|rule| key.full_match(rule))
            }
            _ => false,
        }
    }

    pub fn subtree_count(&self) -> usize {
        self.subtrees.len()
    }

    pub fn memory_bytes(&self) -> usize {
        self.rules.len() * std::mem::size_of::<Meta>()
            + self.members.len() * 16
            + self
                .subtrees
                .iter()
                .map(|s| {
                    s.children.len() * std::mem::size_of::<Node>()
                        + s.blocks.len() * std::mem::size_of::<Block>()
                        + s.idx.len() * 4
                })
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests;
