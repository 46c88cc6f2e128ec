//! The writer side: [`Classifier`] owns the rule set and applies inserts, deletes and
//! in-place modifies, singly or in atomic [`Batch`]es; [`Reader`]s look packets up from
//! any thread.
//!
//! Concurrency (left-right: two copies plus an operation log): a commit appends its
//! operations and publishes them with one pointer swap, so a reader's snapshot has all of
//! a batch or none of it. Readers never block or retry; the writer waits only for readers
//! still inside the copy it is about to update (at most one burst each), then replays the
//! log there. Each operation is applied once per copy: O(changed rules), never a copy of the
//! rule set.
//!
//! Validation happens before anything is published: a batch with an unknown rule id, an
//! unsupported pattern, or a jump that would close a cycle in the group graph (refused, as
//! NICs do) changes nothing.

use crate::compile::{compile, CompileError, CompiledRule, Fate};
use crate::counters::{Counters, MAX_RULE_SLOTS};
use crate::group::exact::exact_form;
use crate::group::{tree, Algorithm, Tree};
use crate::key::{FiveTuple, PacketKey};
use crate::state::{Hop, Op, Outcome, RuleId, State};
use nicbench_rules::{Action, Rule};
use std::sync::Arc;

/// Why an update was refused (nothing of the batch was applied).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpdateError {
    #[error("operation {op}: {source}")]
    Compile { op: usize, source: CompileError },
    #[error("operation {op}: no rule {id}")]
    UnknownRule { op: usize, id: RuleId },
    #[error("operation {op}: jump from group {from} to group {to} would close a cycle")]
    JumpCycle { op: usize, from: u32, to: u32 },
    #[error("too many rules (at most {MAX_RULE_SLOTS})")]
    TooManyRules,
}

/// Classifier settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ClassifierConfig {
    pub algorithm: Algorithm,
    /// Group lookups start in.
    pub start_group: u32,
    /// Whether readers update the per-rule hit/byte counters.
    pub count: bool,
    /// Whether rules that pin the whole outer IPv4 5-tuple go to dedicated exact-match
    /// tables (one cache line per lookup, action inline) instead of the general ones
    /// (TupleMerge and Hybrid; TupleSpace never uses them). On by default; off only to
    /// measure what they bring.
    #[serde(default = "yes")]
    pub exact_match: bool,
}

fn yes() -> bool {
    true
}

impl Default for ClassifierConfig {
    fn default() -> Self {
        ClassifierConfig { algorithm: Algorithm::Hybrid, start_group: 0, count: true, exact_match: true }
    }
}

/// One operation of a batch.
#[derive(Clone, Debug)]
pub enum Update {
    Insert(Rule),
    Delete(RuleId),
    /// Replace pattern, actions and attributes of a rule, keeping its id, its counters and
    /// its place in the insertion order (the tie-break).
    Modify(RuleId, Rule),
}

/// Updates applied atomically by [`Classifier::apply`].
#[derive(Clone, Debug, Default)]
pub struct Batch {
    pub updates: Vec<Update>,
}

impl Batch {
    pub fn new() -> Batch {
        Batch::default()
    }
    pub fn insert(&mut self, rule: Rule) -> &mut Self {
        self.updates.push(Update::Insert(rule));
        self
    }
    pub fn delete(&mut self, id: RuleId) -> &mut Self {
        self.updates.push(Update::Delete(id));
        self
    }
    pub fn modify(&mut self, id: RuleId, rule: Rule) -> &mut Self {
        self.updates.push(Update::Modify(id, rule));
        self
    }
    pub fn len(&self) -> usize {
        self.updates.len()
    }
    pub fn is_empty(&self) -> bool {
        self.updates.is_empty()
    }
}

/// Public description of an installed rule.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RuleInfo {
    pub id: RuleId,
    pub group: u32,
    pub priority: u32,
    pub fate: Fate,
    pub jump: Option<u32>,
    pub actions: Vec<Action>,
}

#[derive(Clone, Default)]
struct SlotMeta {
    gen: u32,
    seq: u32,
    rule: Option<Arc<CompiledRule>>,
}

/// The match-action classifier (writer handle). See the module doc.
pub struct Classifier {
    w: left_right::WriteHandle<State, Op>,
    counters: Arc<Counters>,
    config: ClassifierConfig,
    slots: Vec<SlotMeta>,
    /// Slots safe to reuse: their delete was published in an earlier commit.
    free: Vec<u32>,
    /// Slots deleted in the current commit.
    pending_free: Vec<u32>,
    next_seq: u32,
    /// Jump edges of the group graph with their multiplicity.
    edges: ahash::AHashMap<(u32, u32), u32>,
    live: usize,
    /// [`Algorithm::Hybrid`] bookkeeping: the tree build in flight, and per group the rule
    /// changes since its last tree snapshot and the rules that snapshot held.
    build: Option<PendingBuild>,
    changes: ahash::AHashMap<u32, usize>,
    tree_rules: ahash::AHashMap<u32, usize>,
    last_tree_id: u32,
    /// Operations staged since the last publish, and when the first deferred one was.
    deferred_ops: usize,
    deferred_since: Option<std::time::Instant>,
}

/// [`Classifier::apply_deferred`] publishes once this many operations are pending...
pub const DEFERRED_MAX_OPS: usize = 1024;
/// ... or once the oldest pending one is this old (checked at each deferred call).
pub const DEFERRED_MAX_DELAY: std::time::Duration = std::time::Duration::from_micros(500);

/// A decision tree being built on another thread.
struct PendingBuild {
    group: u32,
    handle: std::thread::JoinHandle<Tree>,
}

/// A group gets a decision tree once its TupleMerge tables number at least this many (with
/// fewer, the hash tables are as fast).
const TREE_MIN_TABLES: usize = 3;
/// A group's tree is rebuilt after this many rule changes, or a quarter of its tree's rules
/// if more (amortises the O(n log n) build over the updates).
const TREE_MIN_CHANGES: usize = 64;

impl Default for Classifier {
    fn default() -> Self {
        Classifier::new(ClassifierConfig::default())
    }
}

impl Classifier {
    pub fn new(config: ClassifierConfig) -> Classifier {
        let counters = Arc::new(Counters::default());
        let (w, _r) = left_right::new_from_empty(State::new(config.algorithm, config.exact_match, counters.clone()));
        let mut c = Classifier {
            w,
            counters,
            config,
            slots: Vec::new(),
            free: Vec::new(),
            pending_free: Vec::new(),
            next_seq: 0,
            edges: Default::default(),
            live: 0,
            build: None,
            changes: Default::default(),
            tree_rules: Default::default(),
            last_tree_id: tree::NO_TREE,
            deferred_ops: 0,
            deferred_since: None,
        };
        c.w.publish();
        c
    }

    /// A classifier holding `rules`, installed as one batch.
    pub fn with_rules(config: ClassifierConfig, rules: impl IntoIterator<Item = Rule>) -> Result<(Classifier, Vec<RuleId>), UpdateError> {
        let mut c = Classifier::new(config);
        let batch = Batch { updates: rules.into_iter().map(Update::Insert).collect() };
        let ids = c.apply(batch)?;
        c.settle();
        Ok((c, ids))
    }

    /// Brings the second copy up to date now. left-right replays a commit onto the copy
    /// readers just left at the *next* commit, so after a bulk load the next single update
    /// would pay for the whole load; calling this once after bulk loads keeps update
    /// latency steady. Waits for readers to leave the old copy (one burst each).
    /// With [`Algorithm::Hybrid`] it also finishes any tree build in flight and (re)builds,
    /// here and now, the tree of every group changed since its last build, so lookups run
    /// at full speed afterwards.
    pub fn settle(&mut self) {
        self.publish();
        if self.config.algorithm == Algorithm::Hybrid {
            let mut installed = self.finish_build(true);
            for group in self.groups_wanting_tree(1) {
                self.changes.remove(&group);
                let t = tree::build(self.next_tree_id(), self.snapshot(group));
                self.install(group, t);
                installed = true;
            }
            if installed {
                // Once for the copy readers are leaving, once more for the other one.
                self.publish();
                self.publish();
            }
        }
    }

    fn next_tree_id(&mut self) -> u32 {
        self.last_tree_id = self.last_tree_id.wrapping_add(1).max(1);
        self.last_tree_id
    }

    /// Installs the finished background build, if any (waiting for it when `wait`).
    fn finish_build(&mut self, wait: bool) -> bool {
        match self.build.take() {
            Some(b) if wait || b.handle.is_finished() => match b.handle.join() {
                Ok(t) => {
                    self.install(b.group, t);
                    true
                }
                Err(_) => false, // the build panicked: keep the delta, a later build retries
            },
            other => {
                self.build = other;
                false
            }
        }
    }

    fn install(&mut self, group: u32, t: Tree) {
        self.tree_rules.insert(group, t.members.len());
        self.w.append(Op::InstallTree { group, tree: Arc::new(t) });
    }

    /// Groups (ascending) with at least `min_changes` changes and past their rebuild
    /// threshold that either have a tree or have enough tables to want one.
    fn groups_wanting_tree(&mut self, min_changes: usize) -> Vec<u32> {
        let Some(state) = self.w.enter() else { return Vec::new() };
        let mut out: Vec<u32> = self
            .changes
            .iter()
            .filter(|&(g, &n)| {
                let built = self.tree_rules.get(g).copied().unwrap_or(0);
                n >= min_changes.max(if min_changes > 1 { built / 4 } else { 1 })
                    && state.groups.get(g).is_some_and(|grp| grp.subtree_count() > 0 || grp.table_count() >= TREE_MIN_TABLES)
            })
            .map(|(g, _)| *g)
            .collect();
        out.sort_unstable();
        out
    }

    /// The group's live rules as the tree builder takes them.
    fn snapshot(&self, group: u32) -> Vec<tree::TreeInput> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(slot, m)| {
                // Exact 5-tuple rules live in the group's exact tables, never in a tree.
                let r = m.rule.as_ref().filter(|r| r.group == group && !(self.config.exact_match && exact_form(r).is_some()))?;
                Some((slot as u32, ((r.priority as u64) << 32) | m.seq as u64, r.clone()))
            })
            .collect()
    }

    /// After a commit's operations are appended: install a finished build, start the next.
    fn maintain_trees(&mut self) {
        self.finish_build(false);
        if self.build.is_some() {
            return;
        }
        let Some(&group) = self.groups_wanting_tree(TREE_MIN_CHANGES).first() else { return };
        self.changes.remove(&group);
        let rules = self.snapshot(group);
        let id = self.next_tree_id();
        match std::thread::Builder::new().name("nicbench-tree".into()).spawn(move || tree::build(id, rules)) {
            Ok(handle) => self.build = Some(PendingBuild { group, handle }),
            Err(_) => {
                let t = tree::build(id, self.snapshot(group));
                self.install(group, t);
            }
        }
    }

    pub fn config(&self) -> ClassifierConfig {
        self.config
    }

    /// Installed rules.
    pub fn len(&self) -> usize {
        self.live
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// A reader handle (`Send`; clone it for more threads).
    pub fn reader(&self) -> Reader {
        Reader { h: (*self.w).clone(), counters: self.counters.clone(), start_group: self.config.start_group, count: self.config.count }
    }

    pub fn insert(&mut self, rule: Rule) -> Result<RuleId, UpdateError> {
        let ids = self.apply(Batch { updates: vec![Update::Insert(rule)] })?;
        Ok(ids[0])
    }

    pub fn delete(&mut self, id: RuleId) -> Result<(), UpdateError> {
        self.apply(Batch { updates: vec![Update::Delete(id)] }).map(|_| ())
    }

    pub fn modify(&mut self, id: RuleId, rule: Rule) -> Result<(), UpdateError> {
        self.apply(Batch { updates: vec![Update::Modify(id, rule)] }).map(|_| ())
    }

    fn live_rule(&self, id: RuleId) -> Option<&Arc<CompiledRule>> {
        let m = self.slots.get(id.slot() as usize)?;
        if m.gen != id.gen() {
            return None;
        }
        m.rule.as_ref()
    }

    /// Applies a batch atomically: readers see all of it or none of it. Returns the ids of
    /// the inserted rules, in order.
    pub fn apply(&mut self, batch: Batch) -> Result<Vec<RuleId>, UpdateError> {
        let ids = self.stage(batch)?;
        self.publish();
        Ok(ids)
    }

    /// Like [`apply`](Self::apply), but the batch only becomes visible at the next publish:
    /// any [`apply`](Self::apply) or [`flush`](Self::flush), or automatically once
    /// `DEFERRED_MAX_OPS` operations or `DEFERRED_MAX_DELAY` have accumulated. Batches are
    /// never split (readers see a batch whole or not at all, and deferred batches in the
    /// order they were made), and validation errors are reported here, at once. This is
    /// how single updates reach millions per second: one publish (a pointer swap plus
    /// waiting for readers to leave the old copy) serves many updates.
    pub fn apply_deferred(&mut self, batch: Batch) -> Result<Vec<RuleId>, UpdateError> {
        let ids = self.stage(batch)?;
        match self.deferred_since {
            None => self.deferred_since = Some(std::time::Instant::now()),
            Some(t) if self.deferred_ops >= DEFERRED_MAX_OPS || t.elapsed() >= DEFERRED_MAX_DELAY => self.publish(),
            Some(_) => {}
        }
        Ok(ids)
    }

    /// Publishes the deferred updates now (no-op when there are none).
    pub fn flush(&mut self) {
        if self.deferred_since.is_some() {
            self.publish();
        }
    }

    /// Updates made with [`apply_deferred`](Self::apply_deferred) not yet visible.
    pub fn deferred_ops(&self) -> usize {
        self.deferred_ops
    }

    fn publish(&mut self) {
        self.w.publish();
        self.free.append(&mut self.pending_free);
        self.deferred_ops = 0;
        self.deferred_since = None;
    }

    /// Validates `batch`, then appends its operations to the log (not yet published).
    fn stage(&mut self, batch: Batch) -> Result<Vec<RuleId>, UpdateError> {
        let ops = batch.updates.len();
        // 1. Validate and compile, without touching anything.
        enum Planned {
            Insert(Arc<CompiledRule>),
            Delete(RuleId),
            Modify(RuleId, Arc<CompiledRule>),
        }
        let mut plan = Vec::with_capacity(batch.updates.len());
        let mut deleted = ahash::AHashSet::new();
        let mut edge_delta: Vec<((u32, u32), i64, usize)> = Vec::new();
        let mut inserts = 0usize;
        for (op, u) in batch.updates.into_iter().enumerate() {
            let comp = |r: &Rule| compile(r).map(Arc::new).map_err(|source| UpdateError::Compile { op, source });
            let existing = |id: RuleId, deleted: &ahash::AHashSet<RuleId>| {
                self.live_rule(id).filter(|_| !deleted.contains(&id)).cloned().ok_or(UpdateError::UnknownRule { op, id })
            };
            match u {
                Update::Insert(r) => {
                    let c = comp(&r)?;
                    if let Some(j) = c.jump {
                        edge_delta.push(((c.group, j), 1, op));
                    }
                    inserts += 1;
                    plan.push(Planned::Insert(c));
                }
                Update::Delete(id) => {
                    let old = existing(id, &deleted)?;
                    if let Some(j) = old.jump {
                        edge_delta.push(((old.group, j), -1, op));
                    }
                    deleted.insert(id);
                    plan.push(Planned::Delete(id));
                }
                Update::Modify(id, r) => {
                    let old = existing(id, &deleted)?;
                    let c = comp(&r)?;
                    if let Some(j) = old.jump {
                        edge_delta.push(((old.group, j), -1, op));
                    }
                    if let Some(j) = c.jump {
                        edge_delta.push(((c.group, j), 1, op));
                    }
                    plan.push(Planned::Modify(id, c));
                }
            }
        }
        if self.slots.len() + inserts > MAX_RULE_SLOTS + self.free.len() {
            return Err(UpdateError::TooManyRules);
        }
        if edge_delta.iter().any(|&(_, d, _)| d > 0) {
            let mut edges = self.edges.clone();
            for &(e, d, _) in &edge_delta {
                let c = edges.entry(e).or_insert(0);
                *c = (*c as i64 + d).max(0) as u32;
            }
            edges.retain(|_, c| *c > 0);
            if let Some((from, to)) = find_cycle(&edges) {
                let op = edge_delta.iter().find(|&&(e, d, _)| e == (from, to) && d > 0).map_or(0, |x| x.2);
                return Err(UpdateError::JumpCycle { op, from, to });
            }
            self.edges = edges;
        } else {
            for &(e, d, _) in &edge_delta {
                if let Some(c) = self.edges.get_mut(&e) {
                    *c = (*c as i64 + d).max(0) as u32;
                }
            }
            self.edges.retain(|_, c| *c > 0);
        }
        // 2. Apply: append every operation, then publish once.
        let hybrid = self.config.algorithm == Algorithm::Hybrid;
        let mut ids = Vec::with_capacity(inserts);
        for p in plan {
            if hybrid {
                // Changes of exact 5-tuple rules do not call for a tree rebuild (they never
                // enter a tree).
                let exact = self.config.exact_match;
                let wild = |r: &CompiledRule| (!exact || exact_form(r).is_none()).then_some(r.group);
                let (old, new) = match &p {
                    Planned::Insert(r) => (None, wild(r)),
                    Planned::Delete(id) => (self.live_rule(*id).and_then(|r| wild(r)), None),
                    Planned::Modify(id, r) => (self.live_rule(*id).and_then(|r| wild(r)), wild(r)),
                };
                for g in old.into_iter().chain(new.filter(|&n| Some(n) != old)) {
                    *self.changes.entry(g).or_insert(0) += 1;
                }
            }
            match p {
                Planned::Insert(rule) => {
                    let slot = match self.free.pop() {
                        Some(s) => s,
                        None => {
                            self.slots.push(SlotMeta::default());
                            (self.slots.len() - 1) as u32
                        }
                    };
                    self.counters.ensure(slot);
                    let m = &mut self.slots[slot as usize];
                    m.gen = m.gen.wrapping_add(1);
                    m.seq = self.next_seq;
                    self.next_seq = self.next_seq.saturating_add(1);
                    m.rule = Some(rule.clone());
                    self.w.append(Op::Put { slot, gen: m.gen, seq: m.seq, rule, fresh: true });
                    self.live += 1;
                    ids.push(RuleId::new(slot, m.gen));
                }
                Planned::Delete(id) => {
                    let slot = id.slot();
                    self.slots[slot as usize].rule = None;
                    self.pending_free.push(slot);
                    self.w.append(Op::Remove { slot });
                    self.live -= 1;
                }
                Planned::Modify(id, rule) => {
                    let m = &mut self.slots[id.slot() as usize];
                    m.rule = Some(rule.clone());
                    self.w.append(Op::Put { slot: id.slot(), gen: m.gen, seq: m.seq, rule, fresh: false });
                }
            }
        }
        if hybrid {
            self.maintain_trees();
        }
        self.deferred_ops += ops;
        Ok(ids)
    }

    /// (hits, bytes) of a rule since it was inserted.
    pub fn counters(&self, id: RuleId) -> Option<(u64, u64)> {
        self.live_rule(id)?;
        Some(self.counters.get(id.slot()))
    }

    pub fn rule_info(&self, id: RuleId) -> Option<RuleInfo> {
        let r = self.live_rule(id)?;
        Some(RuleInfo { id, group: r.group, priority: r.priority, fate: r.fate, jump: r.jump, actions: r.actions.to_vec() })
    }

    /// Ids of all installed rules, in slot order.
    pub fn rule_ids(&self) -> Vec<RuleId> {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, m)| m.rule.is_some())
            .map(|(s, m)| RuleId::new(s as u32, m.gen))
            .collect()
    }

    /// Statistics of the published rule set.
    pub fn stats(&self) -> ClassifierStats {
        let Some(g) = self.w.enter() else { return ClassifierStats::default() };
        let mut tables = std::collections::BTreeMap::new();
        let mut subtrees = std::collections::BTreeMap::new();
        let mut bytes = g.rules.capacity() * std::mem::size_of::<crate::group::RuleEntry>();
        for (id, grp) in g.groups.iter() {
            tables.insert(*id, grp.table_count());
            if grp.subtree_count() > 0 {
                subtrees.insert(*id, grp.subtree_count());
            }
            bytes += grp.memory_bytes();
        }
        // Constraints behind the Arcs (shared by both copies, counted once).
        let shared: usize = self
            .slots
            .iter()
            .filter_map(|m| m.rule.as_ref())
            .map(|r| std::mem::size_of::<CompiledRule>() + r.words.len() * 24 + r.ranges.len() * 64 + r.actions.len() * 32)
            .sum();
        let total = 2 * bytes + shared + self.slots.capacity() * std::mem::size_of::<SlotMeta>();
        ClassifierStats {
            rules: self.live,
            groups: g.groups.len(),
            tables_per_group: tables,
            subtrees_per_group: subtrees,
            memory_bytes: total,
            memory_bytes_per_rule: if self.live == 0 { 0.0 } else { total as f64 / self.live as f64 },
        }
    }
}

/// Size and shape of a classifier.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ClassifierStats {
    pub rules: usize,
    pub groups: usize,
    /// Non-empty hash tables per group (for [`Algorithm::Hybrid`], the delta's).
    pub tables_per_group: std::collections::BTreeMap<u32, usize>,
    /// Decision subtrees per group that has a tree ([`Algorithm::Hybrid`]).
    pub subtrees_per_group: std::collections::BTreeMap<u32, usize>,
    /// Estimated heap bytes: both copies, shared rule constraints, writer bookkeeping.
    pub memory_bytes: usize,
    pub memory_bytes_per_rule: f64,
}

/// A cycle edge of the jump graph, if there is a cycle.
fn find_cycle(edges: &ahash::AHashMap<(u32, u32), u32>) -> Option<(u32, u32)> {
    let mut adj: std::collections::BTreeMap<u32, Vec<u32>> = Default::default();
    for &(a, b) in edges.keys() {
        adj.entry(a).or_default().push(b);
    }
    // Iterative DFS, colours: absent = white, 1 = on stack, 2 = done.
    let mut colour: ahash::AHashMap<u32, u8> = Default::default();
    for &root in adj.keys() {
        if colour.contains_key(&root) {
            continue;
        }
        let mut stack: Vec<(u32, usize)> = vec![(root, 0)];
        colour.insert(root, 1);
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            let succ = adj.get(&node).map_or(&[][..], |v| v.as_slice());
            if let Some(&to) = succ.get(*next) {
                *next += 1;
                match colour.get(&to) {
                    Some(1) => return Some((node, to)),
                    Some(_) => {}
                    None => {
                        colour.insert(to, 1);
                        stack.push((to, 0));
                    }
                }
            } else {
                colour.insert(node, 2);
                stack.pop();
            }
        }
    }
    None
}

/// A lookup handle, usable from another thread. Lookups never block.
///
/// If the [`Classifier`] was dropped, every lookup is `Unmatched` with no group traversed.
#[derive(Clone)]
pub struct Reader {
    h: left_right::ReadHandle<State>,
    counters: Arc<Counters>,
    start_group: u32,
    count: bool,
}

impl Reader {
    /// Whether this reader updates the rule counters (the classifier's setting by default).
    pub fn set_counting(&mut self, count: bool) {
        self.count = count;
    }

    fn counters(&self) -> Option<&Counters> {
        self.count.then_some(&*self.counters)
    }

    pub fn lookup(&self, key: &PacketKey) -> Outcome {
        match self.h.enter() {
            Some(s) => s.lookup(key, self.start_group, self.counters()),
            None => Outcome::START,
        }
    }

    /// Looks up every key under one snapshot (one read guard): all results come from the
    /// same rule set. Work is done 32 packets at a time with prefetching.
    pub fn lookup_burst(&self, keys: &[PacketKey], out: &mut [Outcome]) {
        match self.h.enter() {
            Some(s) => s.lookup_burst(keys, out, self.start_group, self.counters()),
            None => out.iter_mut().for_each(|o| *o = Outcome::START),
        }
    }

    /// [`lookup_burst`](Self::lookup_burst) for compact IPv4 5-tuples ([`FiveTuple`]), under
    /// one snapshot: the same lookup, fed from a trace 14× smaller than its `PacketKey`s.
    /// `out[i]` is the outcome of `tuples[i]`'s key ([`FiveTuple::key`]).
    pub fn lookup_burst_tuples(&self, tuples: &[FiveTuple], out: &mut [Outcome]) {
        match self.h.enter() {
            Some(s) => s.lookup_burst_tuples(tuples, out, self.start_group, self.counters()),
            None => out.iter_mut().for_each(|o| *o = Outcome::START),
        }
    }

    /// The full path of one lookup (no counting).
    pub fn trace(&self, key: &PacketKey) -> (Vec<Hop>, Outcome) {
        match self.h.enter() {
            Some(s) => s.trace(key, self.start_group),
            None => (Vec::new(), Outcome::START),
        }
    }

    /// Runs `f` with a snapshot: every lookup inside sees the same rule set.
    pub fn with_snapshot<R>(&self, f: impl FnOnce(&Snapshot<'_>) -> R) -> R {
        let guard = self.h.enter();
        let snap = Snapshot { state: guard.as_deref(), reader: self };
        f(&snap)
    }
}

/// A consistent view of the rule set (see [`Reader::with_snapshot`]).
pub struct Snapshot<'a> {
    state: Option<&'a State>,
    reader: &'a Reader,
}

impl Snapshot<'_> {
    pub fn lookup(&self, key: &PacketKey) -> Outcome {
        self.state.map_or(Outcome::START, |s| s.lookup(key, self.reader.start_group, self.reader.counters()))
    }
    pub fn lookup_burst(&self, keys: &[PacketKey], out: &mut [Outcome]) {
        match self.state {
            Some(s) => s.lookup_burst(keys, out, self.reader.start_group, self.reader.counters()),
            None => out.iter_mut().for_each(|o| *o = Outcome::START),
        }
    }
    /// Rules installed in this snapshot.
    pub fn rule_count(&self) -> usize {
        self.state.map_or(0, |s| s.groups.values().map(|g| g.len()).sum())
    }
}
