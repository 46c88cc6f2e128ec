//! The classifier's data as one left-right copy, the operations that change it, and the
//! lookup over it (group walk with jumps).
//!
//! Both copies receive the same operations in the same order and every decision in them
//! is deterministic (tables are chosen by scanning vectors, never by hash-map iteration),
//! so the copies stay identical. Operations carry an already compiled rule behind an
//! `Arc`, so applying one costs O(entries of that rule), twice (once per copy).
//!
//! The exact-match tables are outside the copies (shared, multi-versioned, updated by the
//! writer in place): a copy only lists them per group. A lookup reads them at the version
//! its reader pinned ([`XCtx`]), which is at least the copy's `floor` (the version whose
//! batch changed this copy last) and below its `until` (the version of the next batch that
//! changes the copies, set on the copy readers are leaving just before the swap): so the
//! copy and the exact tables always show one version.

use crate::compile::{CompiledRule, Fate};
use crate::counters::Counters;
use crate::group::exact::{unpack_action, ExactTable, Ranks, ACT_SLOW};
use crate::group::{Algorithm, Group, Hit, RuleEntry, Tree, XCtx, BURST, NO_JUMP, NO_TREE};
use crate::key::{FiveTuple, PacketKey};
use std::sync::Arc;

/// Identifies an installed rule: slot in the low 32 bits, slot generation in the high 32.
/// Stable across [`modify`](crate::Classifier::modify); never reused after a delete.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct RuleId(pub u64);

impl RuleId {
    pub(crate) fn new(slot: u32, gen: u32) -> RuleId {
        RuleId(slot as u64 | ((gen as u64) << 32))
    }
    pub(crate) fn slot(self) -> u32 {
        self.0 as u32
    }
    pub(crate) fn gen(self) -> u32 {
        (self.0 >> 32) as u32
    }
}

impl std::fmt::Display for RuleId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.slot(), self.gen())
    }
}

/// What happened to a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// The last rule of the path decided this fate.
    Fate(Fate),
    /// No rule of the last group traversed matched (a NIC drops or uses its default).
    Unmatched,
}

/// Result of one lookup: the fate plus what the NIC model needs to cost it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Outcome {
    pub verdict: Verdict,
    /// The last `mark` action on the path.
    pub mark: Option<u32>,
    /// Groups (tables) looked up, including the last one.
    pub groups_traversed: u32,
    /// The group the walk ended in.
    pub last_group: u32,
    /// The rule that decided the fate (`None` when unmatched).
    pub rule: Option<RuleId>,
}

impl Outcome {
    pub(crate) const START: Outcome = Outcome {
        verdict: Verdict::Unmatched,
        mark: None,
        groups_traversed: 0,
        last_group: 0,
        rule: None,
    };
}

/// One step of a lookup's path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Hop {
    pub group: u32,
    /// The winning rule in this group, `None` if none matched.
    pub rule: Option<RuleId>,
}

pub(crate) enum Op {
    /// Install `rule` in `slot` (`exact`: the writer put its entry in one of the group's
    /// exact tables; the copy keeps the rule entry for what does not fit the entry).
    Put {
        slot: u32,
        gen: u32,
        seq: u32,
        rule: Arc<CompiledRule>,
        exact: bool,
    },
    Remove {
        slot: u32,
    },
    /// Install a decision tree built by the writer for `group` (shared by both copies).
    InstallTree {
        group: u32,
        tree: Arc<Tree>,
    },
    /// List a new exact table of `group` (shared by both copies, filled by the writer).
    AddExact {
        group: u32,
        table: Arc<ExactTable>,
    },
    /// The version of the batch this copy now reflects.
    Floor(u64),
}

#[derive(Clone, Debug)]
pub(crate) struct State {
    pub rules: Vec<RuleEntry>,
    pub groups: ahash::AHashMap<u32, Group>,
    pub algorithm: Algorithm,
    /// Ranks of the rules in exact tables (shared).
    pub ranks: Arc<Ranks>,
    /// Lookups in this copy read the exact tables at this version or a newer one...
    pub floor: u64,
    /// ... and older than this one (`u64::MAX` while this copy is the newest).
    pub until: Until,
}

/// The first version a copy no longer shows (see the module doc). Atomic because the writer
/// sets it on the copy readers are using; a clone is a separate cell (one per copy).
#[derive(Debug)]
pub(crate) struct Until(std::sync::atomic::AtomicU64);

impl Until {
    const NONE: u64 = u64::MAX;

    pub fn get(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Called by the writer before it publishes a copy changed at version `v`.
    pub fn set(&self, v: u64) {
        self.0.store(v, std::sync::atomic::Ordering::SeqCst)
    }
}

impl Default for Until {
    fn default() -> Self {
        Until(std::sync::atomic::AtomicU64::new(Until::NONE))
    }
}

impl Clone for Until {
    fn clone(&self) -> Self {
        Until(std::sync::atomic::AtomicU64::new(self.get()))
    }
}

impl State {
    pub fn new(algorithm: Algorithm, ranks: Arc<Ranks>) -> State {
        State {
            rules: Vec::new(),
            groups: Default::default(),
            algorithm,
            ranks,
            floor: 0,
            until: Until::default(),
        }
    }

    fn remove(&mut self, slot: u32) {
        let Some(e) = self.rules.get(slot as usize) else { return };
        let Some(rule) = &e.rule else { return };
        if let Some(g) = self.groups.get_mut(&rule.group) {
            g.remove(slot, e);
        }
        self.rules[slot as usize] = RuleEntry::FREE;
    }

    fn put(&mut self, slot: u32, gen: u32, seq: u32, rule: &Arc<CompiledRule>, exact: bool) {
        self.remove(slot);
        let s = slot as usize;
        if s >= self.rules.len() {
            let cap = self.rules.capacity();
            self.rules.resize(s + 1, RuleEntry::FREE);
            if self.rules.capacity() != cap {
                let bytes = self.rules.capacity() * std::mem::size_of::<RuleEntry>();
                crate::table::advise_huge(self.rules.as_ptr() as *const u8, bytes);
            }
        }
        self.rules[s] = RuleEntry {
            rank: ((rule.priority as u64) << 32) | seq as u64,
            fate: rule.fate,
            jump: rule.jump.unwrap_or(NO_JUMP),
            mark: rule.mark,
            table: crate::group::NO_TABLE,
            gen,
            tree: NO_TREE,
            rule: Some(rule.clone()),
        };
        let group = self.groups.entry(rule.group).or_default();
        let table = group.insert(slot, &self.rules, self.algorithm, exact);
        self.rules[s].table = table;
    }

    fn install_tree(&mut self, group: u32, tree: &Arc<Tree>) {
        let algo = self.algorithm;
        let g = self.groups.entry(group).or_default();
        g.install_tree(tree.clone(), &mut self.rules, algo);
    }

    fn apply(&mut self, op: &Op) {
        match op {
            Op::Put {
                slot,
                gen,
                seq,
                rule,
                exact,
            } => self.put(*slot, *gen, *seq, rule, *exact),
            Op::Remove { slot } => self.remove(*slot),
            Op::InstallTree { group, tree } => self.install_tree(*group, tree),
            Op::AddExact { group, table } => self.groups.entry(*group).or_default().add_exact(table.clone()),
            Op::Floor(v) => {
                self.floor = *v;
                self.until.set(Until::NONE);
            }
        }
    }

    fn id(&self, slot: u32) -> RuleId {
        RuleId::new(slot, self.rules.get(slot as usize).map_or(0, |e| e.gen))
    }

    /// Applies the winning rule of one group to an outcome; returns the next group. An
    /// exact-table hit carries its action inline: the rule entry is not read.
    #[inline(always)]
    fn step(&self, out: &mut Outcome, group: u32, hit: Hit, bytes: u32, counters: Option<&Counters>) -> Option<u32> {
        out.groups_traversed += 1;
        out.last_group = group;
        let slot = hit.slot;
        if hit.act != ACT_SLOW && slot != u32::MAX {
            if let Some(c) = counters {
                c.add(slot, bytes);
            }
            out.rule = Some(RuleId::new(slot, hit.gen));
            let (fate, jump) = unpack_action(hit.act);
            if jump.is_some() {
                return jump;
            }
            out.verdict = Verdict::Fate(fate);
            return None;
        }
        let Some(e) = self.rules.get(slot as usize) else {
            out.verdict = Verdict::Unmatched;
            out.rule = None;
            return None;
        };
        if let Some(c) = counters {
            c.add(slot, bytes);
        }
        out.rule = Some(self.id(slot));
        if e.mark.is_some() {
            out.mark = e.mark;
        }
        if e.jump != NO_JUMP {
            return Some(e.jump);
        }
        out.verdict = Verdict::Fate(e.fate);
        None
    }

    /// Longest walk: each group at most once (the jump graph is acyclic), plus one for an
    /// empty target group.
    fn max_hops(&self) -> u32 {
        self.groups.len() as u32 + 1
    }

    pub fn lookup(&self, key: &PacketKey, start: u32, counters: Option<&Counters>, x: XCtx<'_>) -> Outcome {
        let mut out = Outcome::START;
        let mut group = start;
        for _ in 0..self.max_hops() {
            let hit = self
                .groups
                .get(&group)
                .and_then(|g| g.lookup(key, &self.rules, x))
                .unwrap_or(Hit::NONE);
            match self.step(&mut out, group, hit, key.frame_bytes, counters) {
                Some(next) => group = next,
                None => break,
            }
        }
        out
    }

    pub fn trace(&self, key: &PacketKey, start: u32, x: XCtx<'_>) -> (Vec<Hop>, Outcome) {
        let mut out = Outcome::START;
        let mut hops = Vec::new();
        let mut group = start;
        for _ in 0..self.max_hops() {
            let hit = self.groups.get(&group).and_then(|g| g.lookup(key, &self.rules, x));
            // An exact hit carries its generation (the copy may not hold the rule entry).
            hops.push(Hop {
                group,
                rule: hit.map(|h| {
                    if h.act != ACT_SLOW {
                        RuleId::new(h.slot, h.gen)
                    } else {
                        self.id(h.slot)
                    }
                }),
            });
            match self.step(&mut out, group, hit.unwrap_or(Hit::NONE), key.frame_bytes, None) {
                Some(next) => group = next,
                None => break,
            }
        }
        (hops, out)
    }

    /// [`lookup_burst`](Self::lookup_burst) of compact IPv4 5-tuples: each burst's keys are
    /// written into one reused buffer (only their non-zero words), which stays in L1.
    ///
    /// Fast path: with nothing counted and a start group of (few, disjoint) exact tables,
    /// the tuples are probed there directly in one software pipeline
    /// ([`Group::exact_tuples`]); a hit whose action is inline and ends the walk is its
    /// `Outcome`, anything else (miss, jump, mark) takes the single-packet lookup.
    ///
    /// Tuple fast path: when the start group has no TupleMerge table (a settled Hybrid
    /// group: tree and exact tables only), its lookup runs on the tuples' compact keys
    /// ([`Group::tuple_burst`]) and no `PacketKey` is written unless a key jumps on to
    /// another group ([`tuple_first_hop`](Self::tuple_first_hop)). Otherwise (a delta
    /// after updates, TupleMerge or TupleSpace) every burst goes through the general path.
    pub fn lookup_burst_tuples(
        &self,
        tuples: &[FiveTuple],
        out: &mut [Outcome],
        start: u32,
        counters: Option<&Counters>,
        x: XCtx<'_>,
    ) {
        let n = tuples.len().min(out.len());
        if let Some(g) = self
            .groups
            .get(&start)
            .filter(|g| counters.is_none() && g.exact_pipelinable())
        {
            let mut slow = false;
            let out = &mut out[..n];
            g.exact_tuples(&tuples[..n], x, |i, h| {
                if h.act != ACT_SLOW {
                    if let (fate, None) = unpack_action(h.act) {
                        out[i] = Outcome {
                            verdict: Verdict::Fate(fate),
                            mark: None,
                            groups_traversed: 1,
                            last_group: start,
                            rule: Some(RuleId::new(h.slot, h.gen)),
                        };
                        return;
                    }
                }
                // Resolved below; `groups_traversed == 0` marks it (a fast hit has 1).
                out[i] = Outcome::START;
                slow = true;
            });
            if slow {
                for (o, t) in out.iter_mut().zip(tuples) {
                    if o.groups_traversed == 0 {
                        *o = self.lookup(&t.key(), start, None, x);
                    }
                }
            }
            return;
        }
        if let Some(g) = self.groups.get(&start).filter(|g| g.tuple_ready()) {
            for (ts, os) in tuples[..n].chunks(BURST).zip(out[..n].chunks_mut(BURST)) {
                self.tuple_first_hop(g, ts, os, start, counters, x);
            }
            return;
        }
        let mut buf = [PacketKey::default(); BURST];
        for (ts, os) in tuples.chunks(BURST).zip(out.chunks_mut(BURST)) {
            for (k, t) in buf.iter_mut().zip(ts) {
                t.write_key(k);
            }
            self.lookup_burst(&buf[..ts.len()], os, start, counters, x);
        }
    }

    /// Burst lookup: packets that are in the same group go through it together.
    ///
    /// Fast path: when the start group holds exact tables only and nothing is counted (the
    /// one-rule-per-flow workload), a burst is probed there directly and a hit whose action
    /// is inline and ends the walk is written straight into its `Outcome`; only misses,
    /// jumps and actions kept in the rule entry (marks) take the general walk, starting
    /// from the step already made.
    pub fn lookup_burst(
        &self,
        keys: &[PacketKey],
        out: &mut [Outcome],
        start: u32,
        counters: Option<&Counters>,
        x: XCtx<'_>,
    ) {
        let n = keys.len().min(out.len());
        let exact_start = if counters.is_none() {
            self.groups.get(&start).filter(|g| g.exact_only())
        } else {
            None
        };
        for base in (0..n).step_by(BURST) {
            let m = (n - base).min(BURST);
            let keys = &keys[base..base + m];
            // Keys come from memory (a trace bigger than the cache, or fresh packets): ask
            // for all their first lines (the 5-tuple words) at once.
            for k in keys {
                crate::table::prefetch_read(k as *const PacketKey as *const u8);
            }
            let out = &mut out[base..base + m];
            match exact_start {
                Some(g) => self.exact_start_burst(g, keys, out, start, x),
                None => self.first_hop_burst(keys, out, start, counters, x),
            }
        }
    }

    /// The first hop of the general walk for one burst (at most [`BURST`] keys): every key
    /// is in the start group, so they go through it together without the walk's grouping
    /// scan; only keys that jump on take [`walk_burst`](Self::walk_burst). The ClassBench
    /// sets (one group, no jumps) end here.
    #[inline(always)]
    fn first_hop_burst(
        &self,
        keys: &[PacketKey],
        out: &mut [Outcome],
        start: u32,
        counters: Option<&Counters>,
        x: XCtx<'_>,
    ) {
        let m = keys.len().min(out.len()).min(BURST);
        if m == 0 {
            return;
        }
        let mut hits = [Hit::NONE; BURST];
        if let Some(g) = self.groups.get(&start) {
            let refs: [&PacketKey; BURST] = std::array::from_fn(|i| &keys[i.min(m - 1)]);
            g.lookup_burst(&refs[..m], &self.rules, &mut hits[..m], x);
        }
        if let Some(c) = counters {
            for h in &hits[..m] {
                c.prefetch(h.slot);
            }
        }
        let mut onward = Onward::new(start);
        for i in 0..m {
            // The length sits in the key's last line: read only when counting.
            let bytes = if counters.is_some() { keys[i].frame_bytes } else { 0 };
            out[i] = self.first_step(start, i, hits[i], bytes, counters, &mut onward);
        }
        if onward.any {
            self.walk_burst(&keys[..m], &mut out[..m], onward.current, onward.pending, counters, x);
        }
    }

    /// The tuple fast path for one burst (at most [`BURST`] tuples) whose start group `g` is
    /// [`Group::tuple_ready`]: as [`first_hop_burst`](Self::first_hop_burst), on the tuples'
    /// compact keys. Keys that jump on take the general walk from the step already made,
    /// on full keys written for this burst only then.
    #[inline(always)]
    fn tuple_first_hop(
        &self,
        g: &Group,
        tuples: &[FiveTuple],
        out: &mut [Outcome],
        start: u32,
        counters: Option<&Counters>,
        x: XCtx<'_>,
    ) {
        let m = tuples.len().min(out.len()).min(BURST);
        let mut hits = [Hit::NONE; BURST];
        g.tuple_burst(&tuples[..m], &self.rules, &mut hits[..m], x);
        if let Some(c) = counters {
            for h in &hits[..m] {
                c.prefetch(h.slot);
            }
        }
        let mut onward = Onward::new(start);
        for i in 0..m {
            let (h, bytes) = (hits[i], tuples[i].frame_bytes as u32);
            // A tree hit that ends the walk (the ClassBench case): what `step` writes for
            // it, in one store (a miss has no entry, an exact hit carries its action).
            if h.act == ACT_SLOW {
                if let Some(e) = self.rules.get(h.slot as usize).filter(|e| e.jump == NO_JUMP) {
                    if let Some(c) = counters {
                        c.add(h.slot, bytes);
                    }
                    let rule = Some(RuleId::new(h.slot, e.gen));
                    out[i] = Outcome {
                        verdict: Verdict::Fate(e.fate),
                        mark: e.mark,
                        groups_traversed: 1,
                        last_group: start,
                        rule,
                    };
                    continue;
                }
            }
            out[i] = self.first_step(start, i, h, bytes, counters, &mut onward);
        }
        if onward.any {
            let mut keys = [PacketKey::default(); BURST];
            for (k, t) in keys.iter_mut().zip(&tuples[..m]) {
                t.write_key(k);
            }
            self.walk_burst(&keys[..m], &mut out[..m], onward.current, onward.pending, counters, x);
        }
    }

    /// Key `i`'s outcome after its first hop (group `start`, hit `h`), noting in `onward`
    /// where it goes next if it jumps on.
    #[inline(always)]
    fn first_step(
        &self,
        start: u32,
        i: usize,
        h: Hit,
        bytes: u32,
        counters: Option<&Counters>,
        onward: &mut Onward,
    ) -> Outcome {
        let mut o = Outcome::START;
        if let Some(next) = self.step(&mut o, start, h, bytes, counters) {
            if o.groups_traversed < self.max_hops() {
                onward.current[i] = next;
                onward.pending[i] = true;
                onward.any = true;
            }
        }
        o
    }

    /// The fast path of [`lookup_burst`](Self::lookup_burst) for one burst (at most
    /// [`BURST`] keys) whose start group `g` is exact-only; no counting.
    #[inline(always)]
    fn exact_start_burst(&self, g: &Group, keys: &[PacketKey], out: &mut [Outcome], start: u32, x: XCtx<'_>) {
        let m = keys.len().min(out.len()).min(BURST);
        let mut hits = [Hit::NONE; BURST];
        g.exact_hits_burst(&keys[..m], &mut hits[..m], x);
        let mut onward = Onward::new(start);
        for i in 0..m {
            let h = hits[i];
            // `act` is ACT_SLOW for a miss (Hit::NONE) and for actions kept in the rule entry.
            if h.act != ACT_SLOW {
                let (fate, jump) = unpack_action(h.act);
                if jump.is_none() {
                    // What `step` writes for this hit, in one store.
                    out[i] = Outcome {
                        verdict: Verdict::Fate(fate),
                        mark: None,
                        groups_traversed: 1,
                        last_group: start,
                        rule: Some(RuleId::new(h.slot, h.gen)),
                    };
                    continue;
                }
            }
            out[i] = self.first_step(start, i, h, 0, None, &mut onward);
        }
        if onward.any {
            self.walk_burst(&keys[..m], &mut out[..m], onward.current, onward.pending, None, x);
        }
    }

    /// The general group walk of one burst (at most [`BURST`] keys): packet `i` is in group
    /// `current[i]` with `out[i]` so far while `pending[i]`; packets in the same group go
    /// through it together.
    fn walk_burst(
        &self,
        keys: &[PacketKey],
        out: &mut [Outcome],
        mut current: [u32; BURST],
        mut pending: [bool; BURST],
        counters: Option<&Counters>,
        x: XCtx<'_>,
    ) {
        let m = keys.len().min(out.len()).min(BURST);
        if m == 0 {
            return;
        }
        let mut idx = [0usize; BURST];
        let mut refs: [&PacketKey; BURST] = [&keys[0]; BURST];
        let mut hits = [Hit::NONE; BURST];
        for _ in 0..(self.max_hops() as usize * m) {
            let Some(first) = (0..m).find(|&i| pending[i]) else {
                break;
            };
            let group = current[first];
            let mut k = 0;
            for i in first..m {
                if pending[i] && current[i] == group {
                    idx[k] = i;
                    refs[k] = &keys[i];
                    k += 1;
                }
            }
            match self.groups.get(&group) {
                Some(g) => g.lookup_burst(&refs[..k], &self.rules, &mut hits[..k], x),
                None => hits[..k].fill(Hit::NONE),
            }
            if let Some(c) = counters {
                for h in &hits[..k] {
                    c.prefetch(h.slot);
                }
            }
            for j in 0..k {
                let i = idx[j];
                // The length sits in the key's last line: read only when counting.
                let bytes = if counters.is_some() { keys[i].frame_bytes } else { 0 };
                match self.step(&mut out[i], group, hits[j], bytes, counters) {
                    Some(next) if out[i].groups_traversed < self.max_hops() => current[i] = next,
                    _ => pending[i] = false,
                }
            }
        }
    }
}

/// The keys of a burst that jump on from their first group: where each goes next, for
/// [`State::walk_burst`].
struct Onward {
    current: [u32; BURST],
    pending: [bool; BURST],
    any: bool,
}

impl Onward {
    #[inline(always)]
    fn new(start: u32) -> Onward {
        Onward {
            current: [start; BURST],
            pending: [false; BURST],
            any: false,
        }
    }
}

impl left_right::Absorb<Op> for State {
    fn absorb_first(&mut self, op: &mut Op, _other: &Self) {
        self.apply(op)
    }

    fn absorb_second(&mut self, op: Op, _other: &Self) {
        self.apply(&op)
    }

    fn sync_with(&mut self, first: &Self) {
        *self = first.clone();
    }
}
