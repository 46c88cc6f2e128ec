//! A decision tree over the outer 5-tuple (HiCuts-style equal-size cuts, EffiCuts-style
//! partitioning when one tree would replicate too much), compiled into flat arrays.
//!
//! The tree only *narrows* the candidates: every leaf entry is checked against the key
//! (5-tuple intervals plus the masked presence/flag bits of the L4 word inline, and the
//! full compiled rule when the inline check does not cover all of the rule's constraints).
//! A rule is projected onto each dimension as an interval that contains every value it can
//! match, so any rule shape is accepted; prefixes, exact values and full-mask ranges are
//! exact intervals, which is what ClassBench-style sets are made of.
//!
//! Invariants:
//! - `entries` are sorted by rank and leaves list entry indices in ascending order, so the
//!   first entry of a leaf that matches is that subtree's best rule;
//! - subtrees are ordered by the best rank they hold (early exit across subtrees);
//! - a tree is immutable once built. It is shared by both left-right copies and is only
//!   *valid for a rule* while the rule entry in the copy carries the tree's id: a delete or
//!   modify resets the entry, so a changed rule is ignored by the tree (a tombstone for
//!   free) and lives in the group's TupleMerge delta instead.

use super::RuleEntry;
use crate::compile::CompiledRule;
use crate::key::{ones64, PacketKey, W_DST_LO, W_L4, W_SRC_LO};
use std::sync::Arc;

/// Tree id of a rule that is not in a tree (ids start at 1).
pub(crate) const NO_TREE: u32 = 0;

const DIMS: usize = 5;
const DIM_WORD: [usize; DIMS] = [W_SRC_LO, W_DST_LO, W_L4, W_L4, W_L4];
const DIM_SHIFT: [u32; DIMS] = [0, 0, 0, 16, 32];
const DIM_WIDTH: [u32; DIMS] = [32, 32, 16, 16, 8];
/// Bits of the L4 word covered by dimensions 2..5 (ports, protocol).
const L4_DIM_BITS: u64 = (1 << 40) - 1;

/// A leaf holds at most this many rules unless no cut separates them.
const BINTH: usize = 4;
/// Most bits one cut consumes (256 children).
const MAX_CUT_BITS: u32 = 8;
/// HiCuts space factor: a cut may replicate rules up to `SPFAC` × the node's rules.
const SPFAC: usize = 8;
const MAX_DEPTH: u32 = 24;
/// Replication budget of one build: leaf slots per rule (plus a constant). A single tree
/// that exceeds it is rebuilt as one subtree per (src wide?, dst wide?) category.
const ITEMS_PER_RULE: usize = 24;

/// A rule as the tree sees it: the 5-tuple part inline (one cache line and a bit).
#[derive(Clone, Copy, Debug)]
struct Entry {
    rank: u64,
    lo: [u32; DIMS],
    hi: [u32; DIMS],
    slot: u32,
    /// Non-zero when the inline check is not the whole rule.
    full_check: u32,
    /// Equality constraints on the L4 word outside the dimensions (presence bits, flags).
    l4_mask: u64,
    l4_value: u64,
}

/// A rule's inline check as a leaf holds it: leaves store copies, so a leaf scan reads one
/// contiguous run of memory. `idx` is the rule's index in `Tree::entries` (its rank order).
#[derive(Clone, Copy, Debug)]
struct LeafEntry {
    lo: [u32; DIMS],
    hi: [u32; DIMS],
    /// The L4 word's bits above the dimensions (presence, TCP flags), shifted down by 40.
    l4_mask: u32,
    l4_value: u32,
    idx: u32,
}

impl LeafEntry {
    #[inline(always)]
    fn matches(&self, d: &[u32; DIMS], l4_high: u32) -> bool {
        let mut ok = l4_high & self.l4_mask == self.l4_value;
        for i in 0..DIMS {
            ok &= self.lo[i] <= d[i] && d[i] <= self.hi[i];
        }
        ok
    }
}

/// A leaf with no entries: what keys that skip a subtree walk.
static EMPTY_LEAF: Node = Node { dim: 0, shift: 0, bits: 0, leaf: true, a: 0, b: 0 };

#[derive(Clone, Copy, Debug)]
struct Node {
    dim: u8,
    shift: u8,
    bits: u8,
    leaf: bool,
    /// Leaf: first item; cut: first child.
    a: u32,
    /// Leaf: item count.
    b: u32,
}

#[derive(Debug)]
struct SubTree {
    best_rank: u64,
    root: Node,
    /// Children of the cut nodes, as node copies: a cut node's children are
    /// `children[a..a + 2^bits]`, so a step down the tree is one load.
    children: Box<[Node]>,
    leaves: Box<[LeafEntry]>,
}

impl SubTree {
    #[inline(always)]
    fn child(&self, n: &Node, d: &[u32; DIMS]) -> &Node {
        let c = (d[n.dim as usize % DIMS] >> n.shift) & ((1u32 << n.bits) - 1);
        &self.children[(n.a + c) as usize]
    }
}

/// One group's decision tree (see the module doc).
#[derive(Debug)]
pub(crate) struct Tree {
    pub id: u32,
    entries: Box<[Entry]>,
    subtrees: Box<[SubTree]>,
    /// The rules the tree was built from: a rule is in the tree only while its slot still
    /// holds this very `Arc` (checked when the tree is installed).
    pub members: Box<[(u32, Arc<CompiledRule>)]>,
}

/// One rule to build from: (slot, rank, rule).
pub(crate) type TreeInput = (u32, u64, Arc<CompiledRule>);

#[inline(always)]
fn dims_of(key: &PacketKey) -> [u32; DIMS] {
    let l4 = key.words[W_L4];
    [key.words[W_SRC_LO] as u32, key.words[W_DST_LO] as u32, l4 as u32 & 0xffff, (l4 >> 16) as u32 & 0xffff, (l4 >> 32) as u32 & 0xff]
}

impl Tree {
    /// Tree lookup: improves `best` (rank, slot) with the best valid rule of the tree.
    #[inline]
    pub fn lookup(&self, key: &PacketKey, rules: &[RuleEntry], best: &mut (u64, u32)) {
        let d = dims_of(key);
        let l4_high = (key.words[W_L4] >> 40) as u32;
        for st in self.subtrees.iter() {
            if st.best_rank >= best.0 {
                break;
            }
            let mut n = &st.root;
            while !n.leaf {
                n = st.child(n, &d);
            }
            self.scan_leaf(st, n, &d, l4_high, key, rules, best);
        }
    }

    /// Leaf entries ascend in rank: the first valid match is the subtree's best.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn scan_leaf(&self, st: &SubTree, n: &Node, d: &[u32; DIMS], l4_high: u32, key: &PacketKey, rules: &[RuleEntry], best: &mut (u64, u32)) {
        for le in &st.leaves[n.a as usize..(n.a + n.b) as usize] {
            if le.matches(d, l4_high) {
                let e = &self.entries[le.idx as usize];
                if e.rank >= best.0 {
                    break;
                }
                if self.valid(e, key, rules) {
                    *best = (e.rank, e.slot);
                    break;
                }
            }
        }
    }

    /// [`lookup`](Self::lookup) for a burst, walking the keys down each subtree in lockstep
    /// so the node loads of different keys overlap (each step prefetches the next level).
    #[inline]
    pub fn lookup_burst(&self, keys: &[&PacketKey], rules: &[RuleEntry], best: &mut [(u64, u32)]) {
        const B: usize = super::BURST;
        let n = keys.len().min(B).min(best.len());
        let mut d = [[0u32; DIMS]; B];
        let mut l4_high = [0u32; B];
        for i in 0..n {
            d[i] = dims_of(keys[i]);
            l4_high[i] = (keys[i].words[W_L4] >> 40) as u32;
        }
        let mut cur: [&Node; B] = [&EMPTY_LEAF; B];
        for st in self.subtrees.iter() {
            let mut active = false;
            for i in 0..n {
                cur[i] = if best[i].0 > st.best_rank {
                    active = true;
                    &st.root
                } else {
                    &EMPTY_LEAF
                };
            }
            if !active {
                break;
            }
            loop {
                let mut inner = false;
                for i in 0..n {
                    if !cur[i].leaf {
                        let next = st.child(cur[i], &d[i]);
                        crate::table::prefetch_read(next as *const Node as *const u8);
                        cur[i] = next;
                        inner = true;
                    }
                }
                if !inner {
                    break;
                }
            }
            for i in 0..n {
                if let Some(le) = st.leaves.get(cur[i].a as usize) {
                    crate::table::prefetch_read(le as *const LeafEntry as *const u8);
                }
            }
            for i in 0..n {
                self.scan_leaf(st, cur[i], &d[i], l4_high[i], keys[i], rules, &mut best[i]);
            }
        }
    }

    /// Whether the entry's rule is still this tree's (not deleted or modified since) and,
    /// when the inline check is partial, whether the whole rule matches.
    #[inline(always)]
    fn valid(&self, e: &Entry, key: &PacketKey, rules: &[RuleEntry]) -> bool {
        match rules.get(e.slot as usize) {
            Some(r) if r.tree == self.id => e.full_check == 0 || r.rule.as_ref().is_some_and(|rule| rule.matches(key)),
            _ => false,
        }
    }

    pub fn subtree_count(&self) -> usize {
        self.subtrees.len()
    }

    pub fn memory_bytes(&self) -> usize {
        self.entries.len() * std::mem::size_of::<Entry>()
            + self.members.len() * 16
            + self
                .subtrees
                .iter()
                .map(|s| s.children.len() * std::mem::size_of::<Node>() + s.leaves.len() * std::mem::size_of::<LeafEntry>())
                .sum::<usize>()
    }
}

/// The interval of dimension `d` that holds every value the rule can match there, and
/// whether the rule's constraints on those bits are exactly that interval.
fn project(rule: &CompiledRule, d: usize) -> (u32, u32, bool) {
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

fn entry_of(slot: u32, rank: u64, rule: &CompiledRule) -> Option<Entry> {
    let mut e = Entry { rank, lo: [0; DIMS], hi: [0; DIMS], slot, full_check: 0, l4_mask: 0, l4_value: 0 };
    let mut full = false;
    for d in 0..DIMS {
        let (lo, hi, exact) = project(rule, d);
        if lo > hi {
            return None;
        }
        e.lo[d] = lo;
        e.hi[d] = hi;
        full |= !exact;
    }
    for w in rule.words.iter() {
        match w.word as usize {
            W_SRC_LO | W_DST_LO => full |= w.mask >> 32 != 0,
            W_L4 => {
                e.l4_mask = w.mask & !L4_DIM_BITS;
                e.l4_value = w.value & !L4_DIM_BITS;
            }
            _ => full = true,
        }
    }
    // Ranges on the dimensions were folded in exactly (or marked inexact above); any other
    // range needs the full check.
    for r in rule.ranges.iter() {
        let on_dim = r.loc.hi_word.is_none()
            && (0..DIMS).any(|d| r.loc.word as usize == DIM_WORD[d] && r.loc.shift as u32 == DIM_SHIFT[d] && r.loc.width as u32 == DIM_WIDTH[d]);
        full |= !on_dim;
    }
    e.full_check = full as u32;
    Some(e)
}

/// Builds the tree of `rules` (any order). Deterministic.
pub(crate) fn build(id: u32, mut rules: Vec<TreeInput>) -> Tree {
    rules.sort_by_key(|r| r.1);
    let entries: Vec<Entry> = rules.iter().filter_map(|(slot, rank, rule)| entry_of(*slot, *rank, rule)).collect();
    let members: Box<[(u32, Arc<CompiledRule>)]> = rules.into_iter().map(|(s, _, r)| (s, r)).collect();
    let all: Vec<u32> = (0..entries.len() as u32).collect();
    let mut subtrees = build_parts(&entries, &all, &[[0, 1], [2, 3]]);
    subtrees.sort_by_key(|s| s.best_rank);
    Tree { id, entries: entries.into_boxed_slice(), subtrees: subtrees.into_boxed_slice(), members }
}

fn budget(rules: usize) -> usize {
    ITEMS_PER_RULE * rules + 4096
}

/// One tree for `rules` if it fits the replication budget; otherwise one per category of
/// wildness in the first pair of `levels` (EffiCuts: rules wide in a field stop being
/// replicated by cuts on it), each split further by the next pair if it still does not
/// fit. The last resort is a tree that turns nodes into leaves once over budget.
fn build_parts(entries: &[Entry], rules: &[u32], levels: &[[usize; 2]]) -> Vec<SubTree> {
    if let Some(st) = build_subtree(entries, rules, budget(rules.len()), false) {
        return vec![st];
    }
    let Some((dims, rest)) = levels.split_first() else {
        return build_subtree(entries, rules, budget(rules.len()), true).into_iter().collect();
    };
    let mut parts: Vec<Vec<u32>> = vec![Vec::new(); 4];
    for &i in rules {
        let e = &entries[i as usize];
        let wide = |d: usize| (e.hi[d] - e.lo[d]) as u64 + 1 > 1u64 << (DIM_WIDTH[d] - 1);
        parts[wide(dims[0]) as usize | (wide(dims[1]) as usize) << 1].push(i);
    }
    parts.iter().filter(|p| !p.is_empty()).flat_map(|p| build_parts(entries, p, rest)).collect()
}

/// `None` when the replication budget is exceeded, unless `soft` (then over-budget nodes
/// become leaves).
fn build_subtree(entries: &[Entry], rules: &[u32], budget: usize, soft: bool) -> Option<SubTree> {
    let mut b = Builder { entries, nodes: Vec::new(), children: Vec::new(), items: Vec::new(), budget, soft, scratch: Vec::new() };
    let root_region = [(0u32, 0u32); DIMS];
    b.nodes.push(Node { dim: 0, shift: 0, bits: 0, leaf: true, a: 0, b: 0 }); // root placeholder
    let root = b.node(rules, &root_region, 0)?;
    Some(SubTree {
        best_rank: rules.first().map_or(u64::MAX, |&i| entries[i as usize].rank),
        root: b.nodes[root as usize],
        children: b.children.iter().map(|&c| b.nodes[c as usize]).collect(),
        leaves: b
            .items
            .iter()
            .map(|&i| {
                let e = &entries[i as usize];
                LeafEntry { lo: e.lo, hi: e.hi, l4_mask: (e.l4_mask >> 40) as u32, l4_value: (e.l4_value >> 40) as u32, idx: i }
            })
            .collect(),
    })
}

struct Builder<'a> {
    entries: &'a [Entry],
    nodes: Vec<Node>,
    children: Vec<u32>,
    items: Vec<u32>,
    budget: usize,
    soft: bool,
    scratch: Vec<i64>,
}

impl Builder<'_> {
    fn leaf(&mut self, rules: &[u32]) -> Option<u32> {
        if self.items.len() + rules.len() > self.budget && !self.soft {
            return None;
        }
        let a = self.items.len() as u32;
        self.items.extend_from_slice(rules);
        self.nodes.push(Node { dim: 0, shift: 0, bits: 0, leaf: true, a, b: rules.len() as u32 });
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
        if rules.len() <= BINTH || depth >= MAX_DEPTH || self.items.len() > self.budget {
            return self.leaf(rules);
        }
        let n = rules.len();
        // (largest child, copies, dim, bits)
        let mut best: Option<(usize, usize, usize, u32)> = None;
        for d in 0..DIMS {
            let free = DIM_WIDTH[d] - region[d].1;
            let mut pick = None;
            for k in 1..=free.min(MAX_CUT_BITS) {
                let (maxc, total) = self.evaluate(rules, region[d], d, k);
                if k > 1 && total + (1 << k) > SPFAC * n {
                    break;
                }
                pick = Some((maxc, total, d, k));
                if maxc <= BINTH / 2 {
                    break;
                }
            }
            if let Some(p) = pick {
                if best.is_none_or(|b| (p.0, p.1) < (b.0, b.1)) {
                    best = Some(p);
                }
            }
        }
        let Some((maxc, _, d, k)) = best.filter(|b| b.0 < n) else { return self.leaf(rules) };
        let _ = maxc;
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
        self.nodes.push(Node { dim: d as u8, shift: child_shift as u8, bits: k as u8, leaf: false, a: self.children.len() as u32, b: 0 });
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::compile;
    use nicbench_rules::model::{EthItem, Ipv4Item, TcpItem};
    use nicbench_rules::{Action, Attr, Field, Item, Rule};
    use std::net::Ipv4Addr;

    fn rule(prio: u32, src: (Ipv4Addr, u32), dports: (u16, u16)) -> Arc<CompiledRule> {
        let r = Rule {
            attr: Attr { priority: prio, ..Default::default() },
            pattern: vec![
                Item::Eth(EthItem::default()),
                Item::Ipv4(Ipv4Item { src: Field::prefix(src.0, src.1), ..Default::default() }),
                Item::Tcp(TcpItem { dst: Some(Field::range(dports.0, dports.1)), ..Default::default() }),
            ],
            actions: vec![Action::Drop],
        };
        Arc::new(compile(&r).unwrap())
    }

    #[test]
    fn test_project_prefix_and_range_exactly() {
        let r = rule(0, (Ipv4Addr::new(10, 1, 0, 0), 16), (1000, 2000));
        assert_eq!(project(&r, 0), (0x0a01_0000, 0x0a01_ffff, true));
        assert_eq!(project(&r, 1), (0, u32::MAX, true));
        assert_eq!(project(&r, 3), (1000, 2000, true));
        assert_eq!(project(&r, 4), (0, 255, true), "a tcp item sets the presence bit, not the protocol");
        let e = entry_of(3, 9, &r).unwrap();
        assert_eq!(e.full_check, 0);
        assert_ne!(e.l4_mask, 0, "presence bits are checked inline");
    }

    #[test]
    fn test_build_splits_and_keeps_rank_order() {
        let rules: Vec<TreeInput> = (0..200u32)
            .map(|i| (i, (i as u64) << 32, rule(i, (Ipv4Addr::from(0x0a00_0000 + (i << 8)), 24), (i as u16 * 10, i as u16 * 10 + 5))))
            .collect();
        let t = build(1, rules);
        assert_eq!(t.subtrees.len(), 1);
        assert!(!t.subtrees[0].root.leaf, "200 rules do not fit one leaf");
        for st in t.subtrees.iter() {
            for n in st.children.iter().chain([&st.root]).filter(|n| n.leaf) {
                let items = &st.leaves[n.a as usize..(n.a + n.b) as usize];
                assert!(items.windows(2).all(|w| w[0].idx < w[1].idx), "leaf items ascend");
                assert!(items.len() <= BINTH, "distinct /24s separate");
            }
        }
        assert!(t.entries.windows(2).all(|w| w[0].rank < w[1].rank));
    }
}

#[cfg(test)]
mod shape {
    use super::*;
    use crate::compile::compile;

    impl Tree {
        pub(crate) fn describe(&self) -> String {
            let mut s = format!("{} entries, {} full-check;", self.entries.len(), self.entries.iter().filter(|e| e.full_check != 0).count());
            for st in self.subtrees.iter() {
                let leaves: Vec<u32> = st.children.iter().filter(|n| n.leaf).map(|n| n.b).collect();
                let max = leaves.iter().max().copied().unwrap_or(0);
                let avg = leaves.iter().map(|&b| b as f64).sum::<f64>() / leaves.len().max(1) as f64;
                s += &format!(" [best {} nodes {} items {} leaf avg {avg:.1} max {max}]", st.best_rank >> 32, st.children.len(), st.leaves.len());
            }
            s
        }
    }

    #[test]
    fn print_classbench_shapes() {
        for name in ["acl1_1k", "fw1_1k", "ipc1_1k", "acl1_10k", "fw1_10k", "ipc1_10k"] {
            let Ok(text) = std::fs::read_to_string(format!("/work/shared/data/classbench/{name}")) else { continue };
            let filters = nicbench_rules::classbench::parse_file(&text, name).unwrap();
            let input: Vec<TreeInput> = filters.iter().enumerate().map(|(i, f)| (i as u32, (i as u64) << 32, Arc::new(compile(&f.to_rule(i as u32)).unwrap()))).collect();
            let t0 = std::time::Instant::now();
            let t = build(1, input);
            eprintln!("{name}: built in {:?}: {}", t0.elapsed(), t.describe());
        }
    }
}
