//! Building a [`Tree`]: rules projected onto the five dimensions, cut recursively.
//!
//! A node is cut on the dimension and number of bits (up to [`Params::max_cut_bits`]) that
//! minimise its largest child, within a replication limit (HiCuts' space factor); a set of
//! rules that does not fit the replication budget in one tree is split by wildness
//! (EffiCuts), one subtree per category — unless the group is small ([`SMALL_RULES`]) and
//! fits one tree with fatter leaves ([`SMALL_SET`]): every subtree costs a key a walk.

use super::leaf::{self, Block};
use super::{Check, Meta, Node, SubTree, Tree, TreeInput, DIMS, LEAF_DIM};
use crate::compile::CompiledRule;
use crate::key::{ones64, W_DST_LO, W_L4, W_SRC_LO};
use std::sync::Arc;

const DIM_WORD: [usize; DIMS] = [W_SRC_LO, W_DST_LO, W_L4, W_L4, W_L4];
const DIM_SHIFT: [u32; DIMS] = [0, 0, 0, 16, 32];
const DIM_WIDTH: [u32; DIMS] = [32, 32, 16, 16, 8];

const MAX_DEPTH: u32 = 24;

/// The builder's knobs.
#[derive(Clone, Copy, Debug)]
pub(super) struct Params {
    /// A leaf holds at most this many rules unless no cut separates them. Leaves are
    /// scanned eight rules per vector step, so fat leaves (a shallow tree that replicates
    /// little) are cheaper than deep cuts: 32 measured best on the ClassBench sets.
    pub binth: usize,
    /// Most bits one cut consumes.
    pub max_cut_bits: u32,
    /// HiCuts space factor: a cut may replicate rules up to `spfac` × the node's rules.
    pub spfac: usize,
    /// Replication budget of one build: rule copies in (distinct) leaves per rule, plus a
    /// constant. A single tree that exceeds it is rebuilt as one subtree per (src wide?,
    /// dst wide?) category. 16: ipc1_10k then splits into 4 subtrees at 196 B/rule and
    /// runs as fast as one tree at 1964 B/rule (64).
    pub items_per_rule: usize,
    /// Whether a group of at most [`SMALL_RULES`] rules that does not fit one tree tries
    /// one tree with [`SMALL_SET`]'s knobs before it is partitioned.
    pub small_fallback: bool,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            binth: 32,
            max_cut_bits: 8,
            spfac: 4,
            items_per_rule: 16,
            small_fallback: true,
        }
    }
}

/// Groups of at most this many rules that do not fit one tree with the default [`Params`]
/// first try one tree with [`SMALL_SET`]'s: a key then walks one subtree instead of all
/// of them (fw1_1k: 3.07 subtrees and 5.4 leaf blocks per key before, 1 and 2.6 after;
/// the whole lookup ~1.7x as fast) for a few KiB per rule (tree 2.3 KiB/rule on fw1_1k,
/// ~2 MiB for the group).
const SMALL_RULES: usize = 1024;

/// Knobs of the one-tree attempt of small groups: fatter leaves, so that the cuts
/// replicate less (fw1_1k: binth 64 / spfac 8 was as fast at 4 KiB/rule; binth 32 fits
/// one tree only with 128-512 copies per rule, at 11 KiB/rule).
const SMALL_SET: Params = Params {
    binth: 96,
    max_cut_bits: 8,
    spfac: 4,
    items_per_rule: 128,
    small_fallback: false,
};

/// A rule as the builder sees it: its interval on each dimension.
#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    pub lo: [u32; DIMS],
    pub hi: [u32; DIMS],
}

/// The interval of dimension `d` that holds every value the rule can match there, and
/// whether the rule's constraints on those bits are exactly that interval.
pub(super) fn project(rule: &CompiledRule, d: usize) -> (u32, u32, bool) {
    let (word, shift, width) = (DIM_WORD[d], DIM_SHIFT[d], DIM_WIDTH[d]);
    let ones = ones64(width);
    let (mut m, mut v) = (0u64, 0u64);
    for w in rule.words.iter().filter(|w| w.word as usize == word) {
        m = (w.mask >> shift) & ones;
        v = (w.value >> shift) & ones;
    }
    let (mut lo, mut hi) = (v & m, v | (!m & ones));
    let free = !m & ones;
    let mut exact = free & free.wrapping_add(1) == 0; // prefix-shaped mask
    for r in rule.ranges.iter() {
        let (rw, rs, rwid) = (r.loc.word as usize, r.loc.shift as u32, r.loc.width as u32);
        let overlaps = rw == word && (r.loc.hi_word.is_some() || (rs < shift + width && shift < rs + rwid))
            || r.loc.hi_word.is_some_and(|h| h as usize == word);
        if !overlaps {
            continue;
        }
        if r.loc.hi_word.is_none() && rs == shift && rwid == width {
            let rm = r.mask as u64 & ones;
            // x & m >= lo implies x >= lo; x <= (x & m) + !m <= hi + !m.
            lo = lo.max(r.lo as u64);
            hi = hi.min((r.hi as u64).saturating_add(!rm & ones).min(ones));
            exact &= rm == ones;
        } else {
            exact = false;
        }
    }
    if lo > hi {
        // Never matches: an empty interval (lo > hi) tells the builder.
        return (1, 0, true);
    }
    (lo as u32, hi as u32, exact)
}

/// The builder's entry, the inline check and whether the check is the whole rule; `None`
/// for a rule that can never match.
pub(super) fn entry_of(rule: &CompiledRule) -> Option<(Entry, Check, bool)> {
    let mut e = Entry {
        lo: [0; DIMS],
        hi: [0; DIMS],
    };
    // Dimensions 0..4 are checked as intervals; the protocol (dimension 4) only by the
    // masked equality on the L4 word's high half below.
    let mut exact = true;
    for d in 0..DIMS {
        let (lo, hi, ex) = project(rule, d);
        if lo > hi {
            return None;
        }
        e.lo[d] = lo;
        e.hi[d] = hi;
        exact &= ex;
    }
    let mut c = Check {
        src_lo: e.lo[0],
        src_span: e.hi[0] - e.lo[0],
        dst_lo: e.lo[1],
        dst_span: e.hi[1] - e.lo[1],
        sport_lo: e.lo[2] as u16,
        sport_span: (e.hi[2] - e.lo[2]) as u16,
        dport_lo: e.lo[3] as u16,
        dport_span: (e.hi[3] - e.lo[3]) as u16,
        hi_mask: 0,
        hi_value: 0,
    };
    for w in rule.words.iter() {
        match w.word as usize {
            W_SRC_LO | W_DST_LO => exact &= w.mask >> 32 == 0,
            W_L4 => {
                c.hi_mask = (w.mask >> 32) as u32;
                c.hi_value = (w.value >> 32) as u32 & c.hi_mask;
            }
            _ => exact = false,
        }
    }
    // Ranges on the four interval dimensions are folded in exactly (or marked inexact by
    // `project`); any other range, the protocol's included, needs the full check.
    for r in rule.ranges.iter() {
        let on_dim = r.loc.hi_word.is_none()
            && (0..4).any(|d| {
                r.loc.word as usize == DIM_WORD[d]
                    && r.loc.shift as u32 == DIM_SHIFT[d]
                    && r.loc.width as u32 == DIM_WIDTH[d]
            });
        exact &= on_dim;
    }
    Some((e, c, exact))
}

/// Builds the tree of `rules` (any order). Deterministic.
pub(crate) fn build(id: u32, rules: Vec<TreeInput>) -> Tree {
    build_with(id, rules, &Params::default())
}

pub(super) fn build_with(id: u32, mut rules: Vec<TreeInput>, p: &Params) -> Tree {
    rules.sort_by_key(|r| r.1);
    let mut entries = Vec::with_capacity(rules.len());
    let mut checks = Vec::with_capacity(rules.len());
    let mut tree_rules: Vec<Meta> = Vec::with_capacity(rules.len());
    for (slot, rank, rule) in rules.iter() {
        if let Some((e, c, exact)) = entry_of(rule) {
            entries.push(e);
            checks.push(c);
            tree_rules.push(Meta {
                rank: *rank,
                slot: *slot,
                full_check: (!exact) as u32,
            });
        }
    }
    let members: Box<[(u32, Arc<CompiledRule>)]> = rules.into_iter().map(|(s, _, r)| (s, r)).collect();
    let all: Vec<u32> = (0..entries.len() as u32).collect();
    let mut subtrees = build_parts(&entries, &checks, &all, &LEVELS, p);
    for st in subtrees.iter_mut() {
        // `best_rank` holds the subtree's best entry index until here.
        st.best_rank = tree_rules.get(st.best_rank as usize).map_or(u64::MAX, |r| r.rank);
    }
    subtrees.sort_by_key(|s| s.best_rank);
    // What `Tree::meta_of` relies on: a lane either indexes `tree_rules` or never matches.
    for st in subtrees.iter() {
        assert_eq!(st.idx.len(), st.blocks.len() * leaf::LANES, "lanes of every block");
        for (at, &i) in st.idx.iter().enumerate() {
            let never = st.blocks[at / leaf::LANES].never_matches(at % leaf::LANES);
            assert!(
                (i as usize) < tree_rules.len() || i == leaf::NO_INDEX && never,
                "lane {at} holds {i}"
            );
        }
    }
    Tree {
        id,
        rules: tree_rules.into(),
        subtrees: subtrees.into_boxed_slice(),
        members,
        avx2: leaf::have_avx2(),
    }
}

/// The EffiCuts categories, level by level: (src, dst) wildness, then (sport, dport).
const LEVELS: [[usize; 2]; 2] = [[0, 1], [2, 3]];

fn budget(rules: usize, p: &Params) -> usize {
    p.items_per_rule * rules + 4096
}

/// One tree for `rules` if it fits the replication budget; otherwise one per category of
/// wildness in the first pair of `levels` (EffiCuts: rules wide in a field stop being
/// replicated by cuts on it), each split further by the next pair if it still does not
/// fit. The last resort is a tree that turns nodes into leaves once over budget.
fn build_parts(entries: &[Entry], checks: &[Check], rules: &[u32], levels: &[[usize; 2]], p: &Params) -> Vec<SubTree> {
    if let Some(st) = build_subtree(entries, checks, rules, budget(rules.len(), p), false, p) {
        return vec![st];
    }
    // Only the whole group (the first level): the parts of a big group keep the default
    // knobs, which the 10K sets were tuned with.
    let whole = levels.len() == LEVELS.len();
    if whole && p.small_fallback && rules.len() <= SMALL_RULES {
        if let Some(st) = build_subtree(
            entries,
            checks,
            rules,
            budget(rules.len(), &SMALL_SET),
            false,
            &SMALL_SET,
        ) {
            return vec![st];
        }
    }
    let Some((dims, rest)) = levels.split_first() else {
        return build_subtree(entries, checks, rules, budget(rules.len(), p), true, p)
            .into_iter()
            .collect();
    };
    let mut parts: Vec<Vec<u32>> = vec![Vec::new(); 4];
    for &i in rules {
        let e = &entries[i as usize];
        let wide = |d: usize| (e.hi[d] - e.lo[d]) as u64 + 1 > 1u64 << (DIM_WIDTH[d] - 1);
        parts[wide(dims[0]) as usize | (wide(dims[1]) as usize) << 1].push(i);
    }
    parts
        .iter()
        .filter(|p| !p.is_empty())
        .flat_map(|part| build_parts(entries, checks, part, rest, p))
        .collect()
}

/// `None` when the replication budget is exceeded, unless `soft` (then over-budget nodes
/// become leaves).
/// The subtree's `best_rank` is its best entry's index (`u64::MAX`: empty) until [`build`]
/// replaces it by the rank.
fn build_subtree(
    entries: &[Entry],
    checks: &[Check],
    rules: &[u32],
    budget: usize,
    soft: bool,
    p: &Params,
) -> Option<SubTree> {
    let mut b = Builder {
        p: *p,
        entries,
        checks,
        nodes: Vec::new(),
        children: Vec::new(),
        items: 0,
        blocks: vec![Block::EMPTY],
        idx: vec![leaf::NO_INDEX; leaf::LANES],
        leaves: Default::default(),
        budget,
        soft,
        scratch: Vec::new(),
    };
    let root_region = [(0u32, 0u32); DIMS];
    let root = b.node(rules, &root_region, 0)?;
    // Leaves were built with their first block in `a`; they now point at their own slot,
    // past the cut nodes' children (see `SubTree::children`).
    let base = b.children.len() as u32;
    let fix = |n: Node| if n.is_leaf() { Node { a: n.a + base, ..n } } else { n };
    let mut children: Vec<Node> = b.children.iter().map(|&c| fix(b.nodes[c as usize])).collect();
    let empty = fix(Node::leaf(0, 0));
    children.resize(children.len() + b.blocks.len(), empty);
    for &n in b.leaves.values() {
        let n = fix(n);
        children[n.a as usize] = n;
    }
    let st = SubTree {
        best_rank: rules.iter().min().map_or(u64::MAX, |&i| i as u64),
        root: fix(b.nodes[root as usize]),
        children: children.into_boxed_slice(),
        base,
        blocks: b.blocks.into_boxed_slice(),
        idx: b.idx.into_boxed_slice(),
    };
    check_bounds(&st);
    Some(st)
}

/// Asserts what the descent's unchecked loads rely on: every node's children (a cut node's
/// `a..a + (1 << len)`, a leaf's own slot, which holds the leaf) are in `children`, and every
/// leaf's blocks in `blocks`.
fn check_bounds(st: &SubTree) {
    for n in st.children.iter().chain([&st.root]) {
        if n.is_leaf() {
            assert_eq!(st.children.get(n.a as usize), Some(n), "a leaf is its own child");
            assert_eq!(n.dim(), LEAF_DIM as usize, "a leaf reads the field that is 0");
            assert!(
                st.blocks_of(n).end <= st.blocks.len() && n.a >= st.base,
                "leaf blocks in bounds"
            );
        } else {
            assert!(
                n.dim() < LEAF_DIM as usize && n.a as usize + n.fanout() <= st.children.len(),
                "children in bounds"
            );
        }
    }
}

struct Builder<'a> {
    p: Params,
    entries: &'a [Entry],
    /// Nodes by id; `children` holds ids, turned into node copies at the end.
    nodes: Vec<Node>,
    children: Vec<u32>,
    checks: &'a [Check],
    /// Rule copies in leaves so far (the replication the budget limits).
    items: usize,
    blocks: Vec<Block>,
    idx: Vec<u32>,
    /// Leaves built so far, by rule list.
    leaves: ahash::AHashMap<Vec<u32>, Node>,
    budget: usize,
    soft: bool,
    scratch: Vec<i64>,
}

impl Builder<'_> {
    fn leaf(&mut self, rules: &[u32]) -> Option<u32> {
        if self.items + rules.len() > self.budget && !self.soft {
            return None;
        }
        // Cuts on different dimensions reach the same rule list by many paths: such leaves
        // share their blocks (the cache holds one copy).
        let node = match self.leaves.get(rules) {
            _ if rules.is_empty() => Node::leaf(0, 0), // the sentinel block
            Some(&n) => n,
            None => {
                self.items += rules.len();
                let a = self.blocks.len() as u32;
                let count = leaf::pack(rules, self.checks, &mut self.blocks, &mut self.idx);
                let n = Node::leaf(a, count);
                self.leaves.insert(rules.to_vec(), n);
                n
            }
        };
        self.nodes.push(node);
        Some((self.nodes.len() - 1) as u32)
    }

    /// The child index range `rule` covers when the region's dimension `d` is cut in
    /// `2^k` (`region` = (low value, bits already fixed)).
    #[inline]
    fn span(&self, rule: u32, region: (u32, u32), d: usize, k: u32) -> (usize, usize) {
        let e = &self.entries[rule as usize];
        let size_bits = DIM_WIDTH[d] - region.1;
        let rlo = region.0 as u64;
        let rhi = rlo + ones64(size_bits);
        let child_shift = size_bits - k;
        let a = (e.lo[d] as u64).max(rlo) - rlo;
        let b = (e.hi[d] as u64).min(rhi) - rlo;
        ((a >> child_shift) as usize, (b >> child_shift) as usize)
    }

    /// (largest child, total rule copies) of a cut.
    fn evaluate(&mut self, rules: &[u32], region: (u32, u32), d: usize, k: u32) -> (usize, usize) {
        let n = 1usize << k;
        self.scratch.clear();
        self.scratch.resize(n + 1, 0);
        let mut total = 0;
        for &r in rules {
            let (a, b) = self.span(r, region, d, k);
            self.scratch[a] += 1;
            self.scratch[b + 1] -= 1;
            total += b - a + 1;
        }
        let (mut run, mut max) = (0i64, 0i64);
        for c in &self.scratch[..n] {
            run += c;
            max = max.max(run);
        }
        (max as usize, total)
    }

    fn node(&mut self, rules: &[u32], region: &[(u32, u32); DIMS], depth: u32) -> Option<u32> {
        if rules.len() <= self.p.binth || depth >= MAX_DEPTH || self.items > self.budget {
            return self.leaf(rules);
        }
        let n = rules.len();
        // (largest child, copies, dim, bits)
        let mut best: Option<(usize, usize, usize, u32)> = None;
        for d in 0..DIMS {
            let free = DIM_WIDTH[d] - region[d].1;
            let mut pick = None;
            for k in 1..=free.min(self.p.max_cut_bits) {
                let (maxc, total) = self.evaluate(rules, region[d], d, k);
                if k > 1 && total + (1 << k) > self.p.spfac * n {
                    break;
                }
                pick = Some((maxc, total, d, k));
                if maxc <= self.p.binth / 2 {
                    break;
                }
            }
            if let Some(p) = pick {
                if best.is_none_or(|b| (p.0, p.1) < (b.0, b.1)) {
                    best = Some(p);
                }
            }
        }
        let Some((_, _, d, k)) = best.filter(|b| b.0 < n) else {
            return self.leaf(rules);
        };
        let count = 1usize << k;
        let mut lists: Vec<Vec<u32>> = vec![Vec::new(); count];
        for &r in rules {
            let (a, b) = self.span(r, region[d], d, k);
            for l in &mut lists[a..=b] {
                l.push(r);
            }
        }
        let me = self.nodes.len() as u32;
        let size_bits = DIM_WIDTH[d] - region[d].1;
        let child_shift = size_bits - k;
        self.nodes
            .push(Node::cut(d, child_shift, k, self.children.len() as u32));
        let base = self.children.len();
        self.children.resize(base + count, 0);
        let mut prev: Option<(usize, u32)> = None;
        for c in 0..count {
            let id = match prev {
                Some((p, id)) if lists[p] == lists[c] => id,
                _ => {
                    let mut sub = *region;
                    sub[d] = (region[d].0 + ((c as u32) << child_shift), region[d].1 + k);
                    let list = std::mem::take(&mut lists[c]);
                    let id = self.node(&list, &sub, depth + 1)?;
                    lists[c] = list;
                    id
                }
            };
            self.children[base + c] = id;
            prev = Some((c, id));
        }
        Some(me)
    }
}
