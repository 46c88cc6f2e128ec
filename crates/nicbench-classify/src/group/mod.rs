//! One group (table) of rules: a set of hash tables, each over one mask of the key,
//! visited in order of the best priority they hold, with early exit.
//!
//! Two placement policies share the lookup code:
//! - [`Algorithm::TupleSpace`] (the baseline, as in OVS): one table per distinct rule mask;
//!   ranges are expanded into prefixes so every entry is an exact masked match.
//! - [`Algorithm::TupleMerge`] (Daly & Torng, 2017; the default): a rule goes into any
//!   table whose mask is a subset of the bits it fixes (range bounds contribute their
//!   common leading bits); new tables get a *relaxed* mask (address prefixes rounded down
//!   to whole bytes, port ranges dropped), so ClassBench-style sets need a few dozen tables
//!   instead of thousands. Entries that do not pin every constraint are verified against
//!   the full rule (ranges are always checked exactly). A hash bucket holds at most
//!   [`COLLISION_LIMIT`] rules before a rule is sent to a more specific table.
//!
//! Ranks: `priority << 32 | insertion sequence`, lower wins, so equal priorities go to the
//! earlier rule. A table's `best_rank` is a lower bound on the ranks it holds (it is not
//! raised on delete, which keeps deletes O(1) and the early exit correct).
//!
//! - [`Algorithm::Hybrid`] (the default): a decision tree (`tree`) built from the whole
//!   group, plus TupleMerge tables as the *delta* holding rules changed since the tree was
//!   built. Rules deleted or modified since are ignored by the tree (their rule entry no
//!   longer carries the tree's id). The lookup takes the better of tree and delta. The
//!   tree is rebuilt by the writer (in the background, or on `settle`) and installed by one
//!   operation, which moves its members out of the delta.
//!
//! - Exact 5-tuple rules (TupleMerge and Hybrid): `exact` tables, probed first; the
//!   general structures above hold everything else (and a second rule on an exact key).
//!   Exact tables are not part of a left-right copy: both copies share them, the writer
//!   updates them in place (`exact::ExactWriter`) and a lookup reads them at its pinned
//!   version (`XCtx`).
//!
//! Every update is O(entries of the rule): O(1) for TupleMerge, O(prefix expansion) for
//! the baseline; a tree install is O(rules of the group).

use crate::compile::{ones128, CompiledRule, Fate};
use crate::key::{
    ones64, FiveTuple, PacketKey, INNER_BASE, KEY_WORDS, PRESENCE_SHIFT, W_DST_HI, W_DST_LO, W_L4, W_SRC_HI, W_SRC_LO,
};
use crate::key_view::{BurstKey, Tuple5};
use crate::table::{hash_key, prefetch_read, HashKey, HashTable, HASH_WORDS};
use std::sync::Arc;

pub(crate) mod exact;
pub(crate) mod tree;
use crate::version::Pinned;
use exact::{ExactTable, Ranks, ACT_SLOW};

/// What a lookup needs to read the exact tables: its pinned version and the rank cells.
#[derive(Clone, Copy, Debug)]
pub(crate) struct XCtx<'a> {
    pub pin: Pinned<'a>,
    pub ranks: &'a Ranks,
}
pub(crate) use tree::{Tree, NO_TREE};

/// How rules are laid out in tables (see the module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Algorithm {
    /// Tuple space search with prefix expansion of ranges (baseline).
    TupleSpace,
    /// TupleMerge: relaxed table masks, exact verification.
    TupleMerge,
    /// Decision tree rebuilt from the group, TupleMerge delta for recent changes.
    #[default]
    Hybrid,
}

/// Most rules one TupleMerge hash bucket holds before new rules go elsewhere.
pub const COLLISION_LIMIT: usize = 8;

const LIST_BIT: u32 = 1 << 31;
const VERIFY_BIT: u32 = 1 << 30;
pub(crate) const NO_TABLE: u32 = u32::MAX;
pub(crate) const NO_JUMP: u32 = u32::MAX;
/// Marks a [`RuleEntry::table`] of a rule whose entry is in one of the group's (shared)
/// exact tables.
const EXACT_TABLE: u32 = 1 << 30;

/// Whether a [`RuleEntry::table`] says the rule is in an exact table.
fn in_exact(table: u32) -> bool {
    table != NO_TABLE && table & EXACT_TABLE != 0
}

/// What a group lookup found: the winning rule's slot (`u32::MAX`: none) and, when it came
/// from an exact table, its generation and packed action ([`exact::pack_action`]) so the
/// caller need not read the rule entry; otherwise `act` is [`exact::ACT_SLOW`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Hit {
    pub slot: u32,
    pub gen: u32,
    pub act: u32,
}

impl Hit {
    pub const NONE: Hit = Hit {
        slot: u32::MAX,
        gen: 0,
        act: ACT_SLOW,
    };

    /// The hit for `best` (rank, slot): the exact table's if that is what won.
    #[inline(always)]
    fn of(best: (u64, u32), exact: &Hit) -> Hit {
        if best.1 == exact.slot {
            *exact
        } else {
            Hit {
                slot: best.1,
                gen: 0,
                act: ACT_SLOW,
            }
        }
    }
}

/// A rule as the lookup sees it: rank and fate inline, the constraints behind the `Arc`.
#[derive(Clone, Debug)]
pub(crate) struct RuleEntry {
    /// `u64::MAX` for a free slot.
    pub rank: u64,
    pub fate: Fate,
    pub jump: u32,
    pub mark: Option<u32>,
    /// The TupleMerge table holding the rule (`NO_TABLE` for the baseline's expansions).
    pub table: u32,
    /// Slot generation (the high half of the rule id).
    pub gen: u32,
    /// Id of the group's tree holding this rule, [`NO_TREE`] when it is in the tables.
    pub tree: u32,
    pub rule: Option<Arc<CompiledRule>>,
}

impl RuleEntry {
    pub const FREE: RuleEntry = RuleEntry {
        rank: u64::MAX,
        fate: Fate::NoFate,
        jump: NO_JUMP,
        mark: None,
        table: NO_TABLE,
        gen: 0,
        tree: NO_TREE,
        rule: None,
    };
}

#[derive(Clone, Debug)]
struct MaskTable {
    words: [u8; HASH_WORDS],
    masks: [u64; HASH_WORDS],
    /// Outer presence bits every entry requires (compiled rules require a header with a
    /// presence bit set to one, so an entry's value there equals the mask): a key without
    /// them cannot hit, and the probe is skipped (TCP keys skip the UDP table).
    require: u64,
    best_rank: u64,
    rules: usize,
    hash: HashTable,
    /// Collision lists: (rank, slot, needs verification), sorted by rank.
    lists: Vec<Vec<(u64, u32, bool)>>,
    free_lists: Vec<u32>,
}

impl MaskTable {
    fn new(words: [u8; HASH_WORDS], masks: [u64; HASH_WORDS]) -> MaskTable {
        let require = (0..HASH_WORDS)
            .filter(|&i| words[i] as usize == W_L4)
            .map(|i| masks[i] & (0xffffu64 << PRESENCE_SHIFT))
            .fold(0, |a, b| a | b);
        MaskTable {
            words,
            masks,
            require,
            best_rank: u64::MAX,
            rules: 0,
            hash: HashTable::default(),
            lists: Vec::new(),
            free_lists: Vec::new(),
        }
    }

    #[inline(always)]
    fn extract(&self, key: &PacketKey) -> HashKey {
        [
            key.words[self.words[0] as usize] & self.masks[0],
            key.words[self.words[1] as usize] & self.masks[1],
            key.words[self.words[2] as usize] & self.masks[2],
        ]
    }

    fn extract_words(&self, words: &[u64; KEY_WORDS]) -> HashKey {
        [
            words[self.words[0] as usize] & self.masks[0],
            words[self.words[1] as usize] & self.masks[1],
            words[self.words[2] as usize] & self.masks[2],
        ]
    }

    fn fits(&self, hashable: &[u64; KEY_WORDS]) -> bool {
        (0..HASH_WORDS).all(|i| self.masks[i] & !hashable[self.words[i] as usize] == 0)
    }

    fn bits(&self) -> u32 {
        self.masks.iter().map(|m| m.count_ones()).sum()
    }

    fn bucket_len(&self, hk: &HashKey) -> usize {
        match self.hash.get(hk) {
            None => 0,
            Some(p) if p & LIST_BIT != 0 => self.lists[(p & !LIST_BIT) as usize].len(),
            Some(_) => 1,
        }
    }

    fn add(&mut self, hk: HashKey, rank: u64, slot: u32, verify: bool, rules: &[RuleEntry]) {
        let single = slot | if verify { VERIFY_BIT } else { 0 };
        match self.hash.get(&hk) {
            None => {
                self.hash.insert(hk, single);
            }
            Some(p) if p & LIST_BIT != 0 => {
                let list = &mut self.lists[(p & !LIST_BIT) as usize];
                let at = list.partition_point(|e| e.0 < rank);
                list.insert(at, (rank, slot, verify));
            }
            Some(p) => {
                // Second rule on this key: switch the bucket to a list.
                let first_slot = p & !VERIFY_BIT;
                let first_rank = rules.get(first_slot as usize).map_or(u64::MAX, |e| e.rank);
                let first = (first_rank, first_slot, p & VERIFY_BIT != 0);
                let li = match self.free_lists.pop() {
                    Some(li) => {
                        self.lists[li as usize] = vec![first];
                        li
                    }
                    None => {
                        self.lists.push(vec![first]);
                        (self.lists.len() - 1) as u32
                    }
                };
                self.hash.set(&hk, li | LIST_BIT);
                let list = &mut self.lists[li as usize];
                let at = list.partition_point(|e| e.0 < rank);
                list.insert(at, (rank, slot, verify));
            }
        }
        self.rules += 1;
        self.best_rank = self.best_rank.min(rank);
    }

    fn remove(&mut self, hk: &HashKey, slot: u32) {
        let Some(p) = self.hash.get(hk) else { return };
        if p & LIST_BIT == 0 {
            if p & !VERIFY_BIT == slot {
                self.hash.remove(hk);
                self.rules -= 1;
            }
            return;
        }
        let li = (p & !LIST_BIT) as usize;
        let list = &mut self.lists[li];
        let Some(at) = list.iter().position(|e| e.1 == slot) else {
            return;
        };
        list.remove(at);
        self.rules -= 1;
        if list.len() == 1 {
            let (_, s, v) = list[0];
            list.clear();
            self.free_lists.push(li as u32);
            self.hash.set(hk, s | if v { VERIFY_BIT } else { 0 });
        }
    }

    /// Resolves a hit payload against the key; updates `best` if a better rule matches.
    #[inline(always)]
    fn resolve(&self, payload: u32, key: &PacketKey, rules: &[RuleEntry], best: &mut (u64, u32)) {
        if payload & LIST_BIT == 0 {
            let slot = payload & !VERIFY_BIT;
            let e = &rules[slot as usize];
            if e.rank < best.0 && (payload & VERIFY_BIT == 0 || e.rule.as_ref().is_some_and(|r| r.matches(key))) {
                *best = (e.rank, slot);
            }
        } else {
            for &(rank, slot, verify) in &self.lists[(payload & !LIST_BIT) as usize] {
                if rank >= best.0 {
                    break;
                }
                if !verify || rules[slot as usize].rule.as_ref().is_some_and(|r| r.matches(key)) {
                    *best = (rank, slot);
                    break;
                }
            }
        }
    }
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Group {
    /// Exact 5-tuple tables (TupleMerge and Hybrid), probed before anything else; shared
    /// with the other copy and the writer.
    exact: Vec<Arc<ExactTable>>,
    tables: Vec<MaskTable>,
    /// Indices of non-empty tables by ascending `(best_rank, index)`, kept incrementally.
    order: Vec<u32>,
    rules: usize,
    /// The decision tree ([`Algorithm::Hybrid`]); the tables are then its delta.
    tree: Option<Arc<Tree>>,
}

/// Burst size of the table-by-table lookup.
pub(crate) const BURST: usize = 32;
/// Most exact tables [`Group::exact_tuples`] handles (one per protocol and flag pattern).
pub(crate) const PIPE_TABLES: usize = 4;
/// How many tuples ahead [`Group::exact_tuples`] prefetches (about the misses a core keeps
/// in flight).
const PIPE_DISTANCE: usize = 16;

impl Group {
    /// Non-empty hash tables (the delta, for [`Algorithm::Hybrid`]).
    pub fn table_count(&self) -> usize {
        self.order.len()
    }

    /// Subtrees of the group's decision tree (0 without a tree).
    pub fn subtree_count(&self) -> usize {
        self.tree.as_ref().map_or(0, |t| t.subtree_count())
    }

    pub fn memory_bytes(&self) -> usize {
        self.tables
            .iter()
            .map(|t| t.hash.memory_bytes() + t.lists.iter().map(|l| l.capacity() * 16 + 24).sum::<usize>())
            .sum::<usize>()
            + self.tables.len() * std::mem::size_of::<MaskTable>()
            + self.tree.as_ref().map_or(0, |t| t.memory_bytes())
    }

    /// Adds an exact table (created by the writer, which fills it).
    pub fn add_exact(&mut self, table: Arc<ExactTable>) {
        self.exact.push(table);
    }

    fn find_or_add_table(&mut self, words: [u8; HASH_WORDS], masks: [u64; HASH_WORDS]) -> usize {
        if let Some(i) = self.tables.iter().position(|t| t.words == words && t.masks == masks) {
            return i;
        }
        self.tables.push(MaskTable::new(words, masks));
        self.tables.len() - 1
    }

    /// Puts table `ti` at its place in `order` after its `best_rank` or emptiness changed.
    fn reposition(&mut self, ti: u32) {
        if let Some(at) = self.order.iter().position(|&i| i == ti) {
            self.order.remove(at);
        }
        let t = &self.tables[ti as usize];
        if t.rules == 0 {
            return;
        }
        let key = (t.best_rank, ti);
        let tables = &self.tables;
        let at = self.order.partition_point(|&i| (tables[i as usize].best_rank, i) < key);
        self.order.insert(at, ti);
    }

    /// Adds the rule in `slot` (already stored in `rules`); returns its TupleMerge table.
    /// `exact`: the writer put the rule's entry in one of the group's exact tables (it is
    /// only counted here).
    pub fn insert(&mut self, slot: u32, rules: &[RuleEntry], algo: Algorithm, exact: bool) -> u32 {
        let table = if exact {
            EXACT_TABLE
        } else {
            self.insert_tables(slot, rules, algo)
        };
        self.rules += 1;
        table
    }

    fn insert_tables(&mut self, slot: u32, rules: &[RuleEntry], algo: Algorithm) -> u32 {
        let e = &rules[slot as usize];
        let Some(rule) = e.rule.clone() else { return NO_TABLE };
        let rank = e.rank;
        match algo {
            Algorithm::TupleMerge | Algorithm::Hybrid => {
                let hashable = rule.hashable_mask();
                let values = rule.value_words();
                let ti = self.pick_tm_table(&hashable, &values);
                let t = &mut self.tables[ti];
                let hk = t.extract_words(&values);
                let verify = needs_verify(&rule, t);
                let (was_empty, old_best) = (t.rules == 0, t.best_rank);
                t.add(hk, rank, slot, verify, rules);
                if was_empty || t.best_rank != old_best {
                    self.reposition(ti as u32);
                }
                ti as u32
            }
            Algorithm::TupleSpace => {
                for (masks, values) in expand(&rule) {
                    let (words, m) = top_words(&masks);
                    let ti = self.find_or_add_table(words, m);
                    let t = &mut self.tables[ti];
                    let hk = t.extract_words(&values);
                    let (was_empty, old_best) = (t.rules == 0, t.best_rank);
                    t.add(hk, rank, slot, true, rules);
                    if was_empty || t.best_rank != old_best {
                        self.reposition(ti as u32);
                    }
                }
                NO_TABLE
            }
        }
    }

    pub fn remove(&mut self, slot: u32, entry: &RuleEntry) {
        if entry.rule.is_none() {
            return;
        }
        // A tree member needs nothing: resetting its rule entry makes the tree ignore it.
        if entry.tree == NO_TREE {
            self.remove_from_tables(slot, entry);
        }
        self.rules -= 1;
    }

    fn remove_from_tables(&mut self, slot: u32, entry: &RuleEntry) {
        let Some(rule) = &entry.rule else { return };
        if in_exact(entry.table) {
            // The writer deletes the entry in the shared table.
        } else if entry.table != NO_TABLE {
            let ti = entry.table;
            let t = &mut self.tables[ti as usize];
            let hk = t.extract_words(&rule.value_words());
            t.remove(&hk, slot);
            if t.rules == 0 {
                t.best_rank = u64::MAX;
                self.reposition(ti);
            }
        } else {
            for (masks, values) in expand(rule) {
                let (words, m) = top_words(&masks);
                if let Some(ti) = self.tables.iter().position(|t| t.words == words && t.masks == m) {
                    let t = &mut self.tables[ti];
                    let hk = t.extract_words(&values);
                    t.remove(&hk, slot);
                    if t.rules == 0 {
                        t.best_rank = u64::MAX;
                        self.reposition(ti as u32);
                    }
                }
            }
        }
    }

    /// Installs a freshly built tree: its members that still hold the rule it was built
    /// from leave the tables (or the previous tree); the rest stay where they are.
    pub fn install_tree(&mut self, tree: Arc<Tree>, rules: &mut [RuleEntry], algo: Algorithm) {
        let old = self.tree.as_ref().map_or(NO_TREE, |t| t.id);
        for (slot, rule) in tree.members.iter() {
            let Some(e) = rules.get(*slot as usize) else { continue };
            if !e.rule.as_ref().is_some_and(|r| Arc::ptr_eq(r, rule)) {
                continue;
            }
            if e.tree == NO_TREE {
                if in_exact(e.table) {
                    continue; // exact tables beat any tree: the rule stays there
                }
                self.remove_from_tables(*slot, e);
            } else if e.tree != old {
                continue;
            }
            rules[*slot as usize].tree = tree.id;
        }
        // Members of the old tree the new one does not hold go back to the tables.
        if let Some(prev) = self.tree.take() {
            for (slot, _) in prev.members.iter() {
                if rules
                    .get(*slot as usize)
                    .is_some_and(|e| e.tree == old && e.rule.is_some())
                {
                    rules[*slot as usize].tree = NO_TREE;
                    let t = self.insert_tables(*slot, rules, algo);
                    rules[*slot as usize].table = t;
                }
            }
        }
        self.tree = Some(tree);
    }

    fn pick_tm_table(&mut self, hashable: &[u64; KEY_WORDS], values: &[u64; KEY_WORDS]) -> usize {
        let mut best: Option<(u32, usize)> = None;
        for (i, t) in self.tables.iter().enumerate() {
            if t.fits(hashable) && t.bucket_len(&t.extract_words(values)) < COLLISION_LIMIT {
                let bits = t.bits();
                if best.is_none_or(|(b, _)| bits > b) {
                    best = Some((bits, i));
                }
            }
        }
        if let Some((_, i)) = best {
            return i;
        }
        let (words, masks) = top_words(&relax(hashable));
        if !self.tables.iter().any(|t| t.words == words && t.masks == masks) {
            return self.find_or_add_table(words, masks);
        }
        let (words, masks) = top_words(hashable);
        self.find_or_add_table(words, masks)
    }

    /// Best matching rule of this group for one key.
    #[inline]
    pub fn lookup(&self, key: &PacketKey, rules: &[RuleEntry], x: XCtx<'_>) -> Option<Hit> {
        let mut best = (u64::MAX, u32::MAX);
        let mut exact_hit = Hit::NONE;
        let need_rank = self.needs_rank();
        for t in &self.exact {
            let Some(k) = t.key_of(key) else { continue };
            if let Some(h) = t.view(x.pin).get(&k, exact::hash3(&k), x.pin.v) {
                let rank = if need_rank { x.ranks.get(h.slot, h.cell) } else { 0 };
                if rank < best.0 {
                    best = (rank, h.slot);
                    exact_hit = Hit {
                        slot: h.slot,
                        gen: h.gen,
                        act: h.act,
                    };
                }
            }
        }
        if let Some(tree) = &self.tree {
            tree.lookup(key, rules, &mut best);
        }
        for &ti in &self.order {
            let t = &self.tables[ti as usize];
            if t.best_rank >= best.0 {
                break;
            }
            if key.words[W_L4] & t.require != t.require {
                continue;
            }
            let hk = t.extract(key);
            if let Some(p) = t.hash.get_hashed(&hk, hash_key(&hk)) {
                t.resolve(p, key, rules, &mut best);
            }
        }
        (best.1 != u32::MAX).then(|| Hit::of(best, &exact_hit))
    }

    /// [`lookup`](Self::lookup) for up to [`BURST`] keys at once, table by table, with the
    /// hash slots and rule entries prefetched a stage ahead. `out[i]` gets the hit or
    /// [`Hit::NONE`].
    #[inline]
    pub fn lookup_burst(&self, keys: &[&PacketKey], rules: &[RuleEntry], out: &mut [Hit], x: XCtx<'_>) {
        let n = keys.len().min(BURST).min(out.len());
        let mut best = [(u64::MAX, u32::MAX); BURST];
        let mut exact_hits = [Hit::NONE; BURST];
        if !self.exact.is_empty() {
            self.exact_burst(&keys[..n], &mut best[..n], &mut exact_hits[..n], x);
        }
        if let Some(tree) = &self.tree {
            tree.lookup_burst(&keys[..n], rules, &mut best[..n]);
        }
        if !self.order.is_empty() {
            self.tables_burst(&keys[..n], rules, &mut best[..n]);
        }
        for i in 0..n {
            out[i] = Hit::of(best[i], &exact_hits[i]);
        }
    }

    /// Whether [`tuple_burst`](Self::tuple_burst) can serve this group: no TupleMerge
    /// table (the Hybrid delta is empty), so the tree and the exact tables, which read only
    /// the 5-tuple words, are the whole group.
    #[inline]
    pub fn tuple_ready(&self) -> bool {
        self.order.is_empty()
    }

    /// [`lookup_burst`](Self::lookup_burst) of up to [`BURST`] IPv4 5-tuples for a group that
    /// is [`tuple_ready`](Self::tuple_ready): each tuple's key words are extracted once into a
    /// 16-byte [`Tuple5`] and the exact tables and the tree run on those, with no
    /// [`PacketKey`] written. `out[i]` gets the hit or [`Hit::NONE`].
    #[inline]
    pub fn tuple_burst(&self, tuples: &[FiveTuple], rules: &[RuleEntry], out: &mut [Hit], x: XCtx<'_>) {
        debug_assert!(self.tuple_ready());
        let n = tuples.len().min(BURST).min(out.len());
        let mut keys = [Tuple5::default(); BURST];
        for i in 0..n {
            keys[i] = Tuple5::of(&tuples[i]);
        }
        let mut best = [(u64::MAX, u32::MAX); BURST];
        let mut exact_hits = [Hit::NONE; BURST];
        if !self.exact.is_empty() {
            self.exact_burst(&keys[..n], &mut best[..n], &mut exact_hits[..n], x);
        }
        if let Some(tree) = &self.tree {
            tree.lookup_burst(&keys[..n], rules, &mut best[..n]);
        }
        for i in 0..n {
            out[i] = Hit::of(best[i], &exact_hits[i]);
        }
    }

    /// Whether the group holds exact tables only (no tree, no general table): its burst
    /// lookup is then [`exact_hits_burst`](Self::exact_hits_burst) alone.
    #[inline]
    pub fn exact_only(&self) -> bool {
        self.tree.is_none() && self.order.is_empty() && !self.exact.is_empty()
    }

    /// [`lookup_burst`](Self::lookup_burst) of a group that is [`exact_only`](Self::exact_only),
    /// on keys in place (no array of references). `hits[i]` must come in as [`Hit::NONE`];
    /// it gets the exact hit, if any.
    #[inline]
    pub fn exact_hits_burst(&self, keys: &[PacketKey], hits: &mut [Hit], x: XCtx<'_>) {
        let n = keys.len().min(BURST).min(hits.len());
        let mut best = [(u64::MAX, u32::MAX); BURST];
        self.exact_burst(&keys[..n], &mut best[..n], &mut hits[..n], x);
    }

    /// Whether [`exact_tuples`](Self::exact_tuples) may serve this group: exact tables only,
    /// at most [`PIPE_TABLES`] of them, no key in two (so no hit needs a rank).
    #[inline]
    pub fn exact_pipelinable(&self) -> bool {
        self.exact_only() && self.exact.len() <= PIPE_TABLES && self.exact_disjoint()
    }

    /// The exact hit of every tuple, in order, as `f(i, hit)` ([`Hit::NONE`] for a miss),
    /// for a group that is [`exact_pipelinable`](Self::exact_pipelinable). Software
    /// pipeline over the whole slice: tuple `i + PIPE_DISTANCE`'s home line is prefetched
    /// while tuple `i` is probed, so the misses of consecutive bursts overlap too (a burst
    /// at a time waits one full memory latency per burst), and no [`PacketKey`] is built.
    #[inline(always)]
    pub fn exact_tuples(&self, tuples: &[FiveTuple], x: XCtx<'_>, mut f: impl FnMut(usize, Hit)) {
        const RING: usize = 32;
        const _: () = assert!(PIPE_DISTANCE < RING && RING.is_power_of_two());
        debug_assert!(self.exact_pipelinable());
        let nt = self.exact.len().min(PIPE_TABLES);
        // One pointer load per table for the whole slice (no buffer is freed while pinned).
        let mut views: [Option<&exact::Buf>; PIPE_TABLES] = [None; PIPE_TABLES];
        let (mut hm, mut hv) = ([0u64; PIPE_TABLES], [u64::MAX; PIPE_TABLES]);
        for (j, t) in self.exact.iter().take(nt).enumerate() {
            views[j] = Some(t.view(x.pin));
            (hm[j], hv[j]) = (t.hi_mask, t.hi_value);
        }
        let mut ks = [[0u32; 3]; RING];
        let mut hs = [0u64; RING];
        let mut sel = [None; RING];
        let n = tuples.len();
        for i in 0..n + PIPE_DISTANCE {
            if let Some(t) = tuples.get(i) {
                let l4 = t.l4_word();
                let mut s = None;
                for j in 0..nt {
                    if l4 & hm[j] == hv[j] {
                        s = views[j];
                    }
                }
                let r = i % RING;
                ks[r] = [t.src, t.dst, l4 as u32];
                hs[r] = exact::hash3(&ks[r]);
                sel[r] = s;
                if let Some(b) = s {
                    b.prefetch(hs[r]);
                }
            }
            if i >= PIPE_DISTANCE {
                let (j, r) = (i - PIPE_DISTANCE, (i - PIPE_DISTANCE) % RING);
                let hit = sel[r].and_then(|b| b.get(&ks[r], hs[r], x.pin.v));
                f(
                    j,
                    hit.map_or(Hit::NONE, |h| Hit {
                        slot: h.slot,
                        gen: h.gen,
                        act: h.act,
                    }),
                );
            }
        }
    }

    /// Whether an exact hit must be ranked: something else in the group (a tree, a general
    /// table, an overlapping exact table) could match the same key.
    #[inline(always)]
    fn needs_rank(&self) -> bool {
        !self.exact_only() || !self.exact_disjoint()
    }

    /// Whether no key can be in two exact tables: every pair disagrees on a bit of the L4
    /// word that both constrain, or requires a different L4 header (a key has at most one
    /// of the TCP, UDP, SCTP, ICMP, ICMPv6 presence bits: both key writers in
    /// [`crate::key`] set one per parsed L4 header). A few tables at most (one per protocol
    /// and flag pattern), so the pairwise check costs less than a pass per table.
    #[inline(always)]
    fn exact_disjoint(&self) -> bool {
        use crate::key::presence::{ICMP, ICMP6, SCTP, TCP, UDP};
        const L4X: u64 = (TCP | UDP | SCTP | ICMP | ICMP6) << PRESENCE_SHIFT;
        let x = &self.exact;
        let apart = |a: &ExactTable, b: &ExactTable| {
            let (pa, pb) = (a.hi_value & a.hi_mask & L4X, b.hi_value & b.hi_mask & L4X);
            (a.hi_value ^ b.hi_value) & a.hi_mask & b.hi_mask != 0 || (pa != 0 && pb != 0 && pa & pb == 0)
        };
        (0..x.len()).all(|a| (a + 1..x.len()).all(|b| apart(&x[a], &x[b])))
    }

    /// The one exact table a key can hit (`usize::MAX`: none) when the tables are
    /// [`exact_disjoint`](Self::exact_disjoint), chosen without a branch, and the key's
    /// exact-table key.
    #[inline(always)]
    fn select_exact<K: BurstKey>(&self, key: &K) -> (usize, [u32; 3]) {
        let l4 = key.l4();
        let mut s = usize::MAX;
        for (j, t) in self.exact.iter().enumerate() {
            s = if l4 & t.hi_mask == t.hi_value { j } else { s };
        }
        (s, [key.src(), key.dst(), l4 as u32])
    }

    /// The exact-table part of [`lookup_burst`](Self::lookup_burst): improves `best`, and
    /// `hits[i]` gets the exact hit. Hash every key and prefetch its home line, then probe:
    /// the misses overlap. When no two tables can hold the same key (they disagree on a
    /// bit both constrain, as TCP and UDP tables do on the protocol), a key selects at most
    /// one table by its L4 word, so each key is hashed and probed once, with no pass per
    /// table and no branch on its protocol.
    #[inline(always)]
    fn exact_burst<K: BurstKey>(&self, keys: &[K], best: &mut [(u64, u32)], hits: &mut [Hit], x: XCtx<'_>) {
        let n = keys.len().min(BURST).min(best.len()).min(hits.len());
        let mut ks = [[0u32; 3]; BURST];
        let mut hs = [0u64; BURST];
        // One pointer load per table and burst (the buffer cannot be freed while pinned).
        let mut views: [Option<&exact::Buf>; 4] = [None; 4];
        for (v, t) in views.iter_mut().zip(&self.exact) {
            *v = Some(t.view(x.pin));
        }
        let view = |j: usize| {
            views
                .get(j)
                .copied()
                .flatten()
                .unwrap_or_else(|| self.exact[j].view(x.pin))
        };
        let ranked = !self.exact_only();
        if self.exact_disjoint() {
            // `sel[i]`: the one table key `i` can hit (`usize::MAX`: none). The keys that
            // select a table are listed in `idx[..cnt]` without a branch: whether a key
            // selects one depends on its protocol, which a mixed trace makes unpredictable
            // (a branch per key mispredicted about every other key on ipc1).
            let mut sel = [usize::MAX; BURST];
            let mut idx = [0u8; BURST];
            let mut cnt = 0usize;
            let Some(last) = self.exact.len().checked_sub(1) else {
                return;
            };
            if ranked {
                // Beside a tree or hash tables the exact tables are often small (ipc1 1K has
                // two exact rules): their key filter lets most keys skip the hash and the
                // probe. Pass 1 lists the keys that select a table and pass its filter; the
                // hash and the prefetch follow for those only.
                for i in 0..n {
                    let s;
                    (s, ks[i]) = self.select_exact(&keys[i]);
                    sel[i] = s;
                    // `&`, not `&&`: no branch on the protocol (see above).
                    let pass = (s < self.exact.len()) & view(s.min(last)).may_hold(&ks[i]);
                    idx[cnt] = i as u8;
                    cnt += pass as usize;
                }
                for &i in &idx[..cnt] {
                    let i = i as usize;
                    hs[i] = exact::hash3(&ks[i]);
                    view(sel[i]).prefetch(hs[i]);
                }
            } else {
                for i in 0..n {
                    let s;
                    (s, ks[i]) = self.select_exact(&keys[i]);
                    hs[i] = exact::hash3(&ks[i]);
                    sel[i] = s;
                    // Prefetch now, overlapping the miss with the next keys' hashing (a
                    // separate pass cost 1M-rule tables ~10%); a key that selects no table
                    // prefetches a line of the last one, harmless, rather than branch.
                    view(s.min(last)).prefetch(hs[i]);
                    // `cnt <= i < BURST`: in bounds.
                    idx[cnt] = i as u8;
                    cnt += (s < self.exact.len()) as usize;
                }
            }
            for &i in &idx[..cnt] {
                let i = i as usize;
                if let Some(h) = view(sel[i]).get(&ks[i], hs[i], x.pin.v) {
                    // Alone in the group, a hit needs no rank: nothing else can match.
                    let rank = if ranked { x.ranks.get(h.slot, h.cell) } else { 0 };
                    if rank < best[i].0 {
                        best[i] = (rank, h.slot);
                        hits[i] = Hit {
                            slot: h.slot,
                            gen: h.gen,
                            act: h.act,
                        };
                    }
                }
            }
            return;
        }
        let mut probe = [false; BURST];
        // Exact-only group: rank a key's hit only when a second table also hits it.
        let mut cells = [0u32; BURST];
        for (j, t) in self.exact.iter().enumerate() {
            let buf = view(j);
            for i in 0..n {
                probe[i] = false;
                if let Some(k) = t.key_of(&keys[i]) {
                    ks[i] = k;
                    hs[i] = exact::hash3(&k);
                    buf.prefetch(hs[i]);
                    probe[i] = true;
                }
            }
            for i in 0..n {
                if !probe[i] {
                    continue;
                }
                if let Some(h) = buf.get(&ks[i], hs[i], x.pin.v) {
                    if !ranked {
                        if best[i].1 == u32::MAX {
                            best[i] = (0, h.slot);
                            cells[i] = h.cell;
                            hits[i] = Hit {
                                slot: h.slot,
                                gen: h.gen,
                                act: h.act,
                            };
                            continue;
                        }
                        if best[i].0 == 0 {
                            best[i].0 = x.ranks.get(best[i].1, cells[i]);
                        }
                    }
                    let rank = x.ranks.get(h.slot, h.cell);
                    if rank < best[i].0 {
                        best[i] = (rank, h.slot);
                        hits[i] = Hit {
                            slot: h.slot,
                            gen: h.gen,
                            act: h.act,
                        };
                    }
                }
            }
        }
    }

    /// The hash-table part of [`lookup_burst`](Self::lookup_burst): improves `best`.
    #[inline(never)]
    fn tables_burst(&self, keys: &[&PacketKey], rules: &[RuleEntry], best: &mut [(u64, u32)]) {
        let n = keys.len().min(BURST).min(best.len());
        let mut hks = [[0u64; HASH_WORDS]; BURST];
        let mut hashes = [0u64; BURST];
        let mut payloads = [u32::MAX; BURST];
        let mut probe = [false; BURST];
        for &ti in &self.order {
            let t = &self.tables[ti as usize];
            if !best[..n].iter().any(|b| b.0 > t.best_rank) {
                break;
            }
            for i in 0..n {
                probe[i] = best[i].0 > t.best_rank && keys[i].words[W_L4] & t.require == t.require;
                if probe[i] {
                    hks[i] = t.extract(keys[i]);
                    hashes[i] = hash_key(&hks[i]);
                    t.hash.prefetch(hashes[i]);
                }
            }
            for i in 0..n {
                payloads[i] = u32::MAX;
                if probe[i] {
                    if let Some(p) = t.hash.get_hashed(&hks[i], hashes[i]) {
                        payloads[i] = p;
                        if p & LIST_BIT == 0 {
                            if let Some(e) = rules.get((p & !VERIFY_BIT) as usize) {
                                prefetch_read(e as *const RuleEntry as *const u8);
                            }
                        }
                    }
                }
            }
            for i in 0..n {
                if payloads[i] != u32::MAX {
                    t.resolve(payloads[i], keys[i], rules, &mut best[i]);
                }
            }
        }
    }
}

/// Whether a table entry must re-check the rule: it does unless the table's mask is exactly
/// the rule's equality constraints and the rule has no range.
fn needs_verify(rule: &CompiledRule, t: &MaskTable) -> bool {
    if !rule.ranges.is_empty() {
        return true;
    }
    let mut covered = 0;
    for w in rule.words.iter() {
        match (0..HASH_WORDS).find(|&i| t.words[i] == w.word && t.masks[i] != 0) {
            Some(i) if t.masks[i] == w.mask => covered += 1,
            _ => return true,
        }
    }
    covered != t.masks.iter().filter(|&&m| m != 0).count()
}

/// The (up to) [`HASH_WORDS`] words with the most mask bits; unused positions get mask 0.
fn top_words(masks: &[u64; KEY_WORDS]) -> ([u8; HASH_WORDS], [u64; HASH_WORDS]) {
    let mut idx: Vec<usize> = (0..KEY_WORDS).filter(|&w| masks[w] != 0).collect();
    // Stable order: most bits first, then lower word index (the 5-tuple words).
    idx.sort_by_key(|&w| (std::cmp::Reverse(masks[w].count_ones()), w));
    idx.truncate(HASH_WORDS);
    idx.sort_unstable();
    let mut words = [0u8; HASH_WORDS];
    let mut m = [0u64; HASH_WORDS];
    for (i, &w) in idx.iter().enumerate() {
        words[i] = w as u8;
        m[i] = masks[w];
    }
    (words, m)
}

/// TupleMerge's relaxation of a rule's hashable mask into a new table's mask.
fn relax(h: &[u64; KEY_WORDS]) -> [u64; KEY_WORDS] {
    let mut out = *h;
    for base in [0, INNER_BASE] {
        for w in [W_SRC_LO, W_DST_LO, W_SRC_HI, W_DST_HI] {
            let m = h[base + w];
            // Keep the leading run of ones (the prefix), rounded down to whole bytes.
            let width = if w == W_SRC_LO || w == W_DST_LO { 32 } else { 64 };
            let top = (m << (64 - width)).leading_ones();
            let keep = top / 8 * 8;
            out[base + w] = if keep == 0 {
                0
            } else {
                (ones64(width) & !ones64(width - keep)) & m
            } | (m & !ones64(width));
        }
        // L4 word: keep presence and protocol; keep a port only when it is exact.
        let m = h[base + W_L4];
        let mut l4 = m & (0xffffu64 << PRESENCE_SHIFT | 0xff << 32);
        for shift in [0, 16] {
            if (m >> shift) & 0xffff == 0xffff {
                l4 |= 0xffff << shift;
            }
        }
        out[base + W_L4] = l4;
    }
    out
}

/// The baseline's expansion: every range with a full mask over a narrow field becomes a set
/// of prefixes; the result is the cross product, as (mask, value) word arrays. Ranges that
/// cannot be expanded (partial mask, 128-bit) are left to verification.
fn expand(rule: &CompiledRule) -> Vec<([u64; KEY_WORDS], [u64; KEY_WORDS])> {
    let mut base_m = [0u64; KEY_WORDS];
    let mut base_v = [0u64; KEY_WORDS];
    for w in rule.words.iter() {
        base_m[w.word as usize] |= w.mask;
        base_v[w.word as usize] |= w.value;
    }
    let mut out = vec![(base_m, base_v)];
    for r in rule.ranges.iter() {
        let width = r.loc.width as u32;
        if r.loc.hi_word.is_some() || r.mask != ones128(width) {
            continue;
        }
        let prefixes = range_to_prefixes(r.lo as u64, r.hi as u64, width);
        let mut next = Vec::with_capacity(out.len() * prefixes.len());
        for (m, v) in &out {
            for &(pv, pm) in &prefixes {
                let (mut m2, mut v2) = (*m, *v);
                r.loc.place(pm as u128, pv as u128, &mut m2, &mut v2);
                next.push((m2, v2));
            }
        }
        out = next;
    }
    out
}

/// Minimal prefix cover of `lo..=hi` in a `width`-bit field: (value, mask) pairs.
pub(crate) fn range_to_prefixes(lo: u64, hi: u64, width: u32) -> Vec<(u64, u64)> {
    let full = ones64(width);
    let mut out = Vec::new();
    let mut cur = lo as u128;
    let hi = hi as u128;
    while cur <= hi {
        // Largest aligned block starting at `cur` that stays within `hi`.
        let mut size_bits = if cur == 0 {
            width
        } else {
            (cur.trailing_zeros()).min(width)
        };
        while size_bits > 0 && cur + (1u128 << size_bits) - 1 > hi {
            size_bits -= 1;
        }
        let mask = full & !ones64(size_bits);
        out.push((cur as u64, mask));
        cur += 1u128 << size_bits;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_range_to_prefixes_covers_exactly() {
        for &(lo, hi) in &[
            (0u64, 65535u64),
            (1024, 65535),
            (1, 1),
            (3, 12),
            (1000, 2000),
            (0, 0),
            (65535, 65535),
        ] {
            let p = range_to_prefixes(lo, hi, 16);
            for x in (0..=65535u64)
                .step_by(7)
                .chain([lo, hi, lo.saturating_sub(1), (hi + 1).min(65535)])
            {
                let covered = p.iter().filter(|&&(v, m)| x & m == v).count();
                assert_eq!(covered, (lo..=hi).contains(&x) as usize, "{lo}-{hi} at {x}");
            }
        }
        assert_eq!(range_to_prefixes(0, 65535, 16), vec![(0, 0)]);
        assert_eq!(range_to_prefixes(1024, 65535, 16).len(), 6);
        assert!(range_to_prefixes(1, 65534, 16).len() <= 30);
    }

    #[test]
    fn test_relax_rounds_prefixes_to_bytes() {
        let mut h = [0u64; KEY_WORDS];
        h[W_SRC_LO] = 0xffff_fff0; // /28
        h[W_DST_LO] = 0xffff_ffff;
        h[W_L4] = (0x1ff << PRESENCE_SHIFT) | (0xff << 32) | 0xffff_f800;
        let r = relax(&h);
        assert_eq!(r[W_SRC_LO], 0xffff_ff00);
        assert_eq!(r[W_DST_LO], 0xffff_ffff);
        assert_eq!(
            r[W_L4],
            (0x1ff << PRESENCE_SHIFT) | (0xff << 32) | 0xffff_0000,
            "exact dport kept, partial sport dropped"
        );
    }
}
