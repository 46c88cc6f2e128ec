//! The writer side: [`Classifier`] owns the rule set and applies inserts, deletes and
//! in-place modifies, singly or in atomic [`Batch`]es; [`Reader`]s look packets up from
//! any thread.
//!
//! Concurrency: every publish is a new version ([`crate::version`]); a batch's changes are
//! all stamped with the version that publishes them, so a reader, which pins the version
//! once per burst, sees all of a batch or none of it. Readers never block; a reader that
//! enters a left-right copy just as the writer swaps it out (and would pin a version that
//! copy does not show) enters the new copy instead.
//! - Exact 5-tuple rules whose action fits the entry (the PAM'21 workload) live only in
//!   the shared multi-version exact tables ([`crate::group::exact`]): the writer updates
//!   them in place, allocation-free, and a batch of them is published by one version store.
//!   That is the fast path: no left-right publish, no wait for readers.
//! - Everything else goes through left-right (two copies plus an operation log): the
//!   batch's operations are appended, with the batch's version as the copy's `floor`, and
//!   published with one pointer swap (the writer waits for readers still inside the copy
//!   it is about to update, at most one burst each), then the version is stored. Before
//!   the swap the copy being left gets the version as its `until`: a reader there never
//!   pins it (it would see the batch's exact entries next to the copy's old rules).
//!
//! Rule slots, exact entries and table buffers a reader of an older version may still use
//! are reused or freed once every reader has moved past that version.
//!
//! Validation happens before anything is published: a batch with an unknown rule id, an
//! unsupported pattern, or a jump that would close a cycle in the group graph (refused, as
//! NICs do) changes nothing.

mod reader;
mod stage;

pub use reader::{Reader, Snapshot};

use crate::compile::{CompileError, Fate};
use crate::counters::{Counters, MAX_RULE_SLOTS};
use crate::group::exact::{ExactWriter, Ranks};
use crate::group::{tree, Algorithm, Tree};
use crate::state::{Op, RuleId, State};
use crate::version::{next_version, Clock};
use nicbench_rules::{Action, Rule};
use stage::{Head, Planned, SlotMeta};
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

impl UpdateError {
    /// The index of the batch operation the error is about, if it is about one.
    pub fn op(&self) -> Option<usize> {
        match self {
            UpdateError::Compile { op, .. }
            | UpdateError::UnknownRule { op, .. }
            | UpdateError::JumpCycle { op, .. } => Some(*op),
            UpdateError::TooManyRules => None,
        }
    }
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
        ClassifierConfig {
            algorithm: Algorithm::Hybrid,
            start_group: 0,
            count: true,
            exact_match: true,
        }
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

/// The match-action classifier (writer handle). See the module doc.
pub struct Classifier {
    w: left_right::WriteHandle<State, Op>,
    counters: Arc<Counters>,
    ranks: Arc<Ranks>,
    clock: Arc<Clock>,
    config: ClassifierConfig,
    slots: Vec<SlotMeta>,
    /// Slots safe to reuse.
    free: Vec<u32>,
    /// Slots of deleted rules, with the version of the delete: reusable once no reader is
    /// older.
    retiring: std::collections::VecDeque<(u64, u32)>,
    next_seq: u32,
    /// Jump edges of the group graph with their multiplicity.
    edges: ahash::AHashMap<(u32, u32), u32>,
    live: usize,
    /// The exact tables, and their index by (group, `hi_mask`, `hi_value`).
    exact: Vec<ExactWriter>,
    exact_index: ahash::AHashMap<(u32, u64, u64), u32>,
    /// The last `exact_index` hit of the single-update fast path (tables are never removed,
    /// so it stays valid).
    last_exact: Option<((u32, u64, u64), u32)>,
    /// The version being staged (published by the next publish).
    staged: u64,
    /// The oldest version a reader may use, as last computed (only ever too low: safe).
    min_pinned: u64,
    /// Whether left-right operations wait to be published.
    lr_dirty: bool,
    /// Publishes and operations since the last reclamation pass.
    since_reclaim: usize,
    /// [`Algorithm::Hybrid`] bookkeeping: the tree build in flight, and per group the rule
    /// changes since its last tree snapshot and the rules that snapshot held.
    build: Option<PendingBuild>,
    changes: ahash::AHashMap<u32, usize>,
    tree_rules: ahash::AHashMap<u32, usize>,
    last_tree_id: u32,
    /// Operations staged since the last publish, and when the first deferred one was.
    deferred_ops: usize,
    deferred_since: Option<std::time::Instant>,
    /// Batch planning buffers, empty between batches (kept to spare the allocator).
    plan: Vec<Planned>,
    touched: ahash::AHashMap<RuleId, Option<Head>>,
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
        let ranks = Arc::new(Ranks::default());
        let (w, _r) = left_right::new_from_empty(State::new(config.algorithm, ranks.clone()));
        let clock = Arc::new(Clock::default());
        let staged = next_version(clock.published());
        let mut c = Classifier {
            w,
            counters,
            ranks,
            clock,
            config,
            slots: Vec::new(),
            free: Vec::new(),
            retiring: Default::default(),
            next_seq: 0,
            edges: Default::default(),
            live: 0,
            exact: Vec::new(),
            exact_index: Default::default(),
            last_exact: None,
            staged,
            min_pinned: 0,
            lr_dirty: false,
            since_reclaim: 0,
            build: None,
            changes: Default::default(),
            tree_rules: Default::default(),
            last_tree_id: tree::NO_TREE,
            deferred_ops: 0,
            deferred_since: None,
            plan: Vec::new(),
            touched: Default::default(),
        };
        c.w.publish();
        c
    }

    /// A classifier holding `rules`, installed as one batch.
    pub fn with_rules(
        config: ClassifierConfig,
        rules: impl IntoIterator<Item = Rule>,
    ) -> Result<(Classifier, Vec<RuleId>), UpdateError> {
        let mut c = Classifier::new(config);
        let batch = Batch {
            updates: rules.into_iter().map(Update::Insert).collect(),
        };
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
        self.lr_dirty = true;
        self.publish();
        self.reclaim();
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
                self.lr_dirty = true;
                self.publish();
                self.lr_dirty = true;
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
        self.w.append(Op::InstallTree {
            group,
            tree: Arc::new(t),
        });
        self.lr_dirty = true;
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
                    && state
                        .groups
                        .get(g)
                        .is_some_and(|grp| grp.subtree_count() > 0 || grp.table_count() >= TREE_MIN_TABLES)
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
                let r = m.rule.as_ref().filter(|r| r.head.group == group && r.wild())?;
                Some((
                    slot as u32,
                    ((r.head.priority as u64) << 32) | m.seq as u64,
                    r.compiled.clone()?,
                ))
            })
            .collect()
    }

    /// After a commit's operations are appended: install a finished build, start the next.
    fn maintain_trees(&mut self) {
        self.finish_build(false);
        if self.build.is_some() {
            return;
        }
        let Some(&group) = self.groups_wanting_tree(TREE_MIN_CHANGES).first() else {
            return;
        };
        self.changes.remove(&group);
        let rules = self.snapshot(group);
        let id = self.next_tree_id();
        match std::thread::Builder::new()
            .name("nicbench-tree".into())
            .spawn(move || tree::build(id, rules))
        {
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
        Reader::new(self)
    }

    /// Inserts one rule (published at once). Single updates take no allocation beyond the
    /// caller's `Rule` for exact 5-tuple rules.
    pub fn insert(&mut self, rule: Rule) -> Result<RuleId, UpdateError> {
        let id = match self.stage_insert_fast(rule) {
            Ok(id) => id,
            Err(rule) => self.stage_one(Update::Insert(rule))?,
        };
        self.publish();
        Ok(id)
    }

    pub fn delete(&mut self, id: RuleId) -> Result<(), UpdateError> {
        self.stage_one(Update::Delete(id))?;
        self.publish();
        Ok(())
    }

    /// Replaces a rule in place, atomically (see [`Update::Modify`]).
    pub fn modify(&mut self, id: RuleId, rule: Rule) -> Result<(), UpdateError> {
        if let Err(rule) = self.stage_modify_fast(id, rule) {
            self.stage_one(Update::Modify(id, rule))?;
        }
        self.publish();
        Ok(())
    }

    /// Applies a batch atomically: readers see all of it or none of it. Returns the ids of
    /// the inserted rules, in order.
    pub fn apply(&mut self, mut batch: Batch) -> Result<Vec<RuleId>, UpdateError> {
        self.apply_from(&mut batch)
    }

    /// [`apply`](Self::apply) that takes the batch's updates and leaves `batch` empty, its
    /// buffer kept (also on error): a caller that refills the same `Batch` makes a stream
    /// of batches without allocating one buffer per batch.
    pub fn apply_from(&mut self, batch: &mut Batch) -> Result<Vec<RuleId>, UpdateError> {
        let ids = self.stage(&mut batch.updates)?;
        self.publish();
        Ok(ids)
    }

    /// Like [`apply`](Self::apply), but the batch only becomes visible at the next publish:
    /// any [`apply`](Self::apply) or [`flush`](Self::flush), or automatically once
    /// `DEFERRED_MAX_OPS` operations or `DEFERRED_MAX_DELAY` have accumulated. Batches are
    /// never split (readers see a batch whole or not at all, and deferred batches in the
    /// order they were made), and validation errors are reported here, at once. One
    /// publish then serves many updates (for rules outside the exact tables, a left-right
    /// publish: a pointer swap plus waiting for readers to leave the old copy).
    pub fn apply_deferred(&mut self, mut batch: Batch) -> Result<Vec<RuleId>, UpdateError> {
        let ids = self.stage(&mut batch.updates)?;
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

    /// (hits, bytes) of a rule since it was inserted.
    pub fn counters(&self, id: RuleId) -> Option<(u64, u64)> {
        self.live_rule(id)?;
        Some(self.counters.get(id.slot()))
    }

    pub fn rule_info(&self, id: RuleId) -> Option<RuleInfo> {
        let r = self.live_rule(id)?;
        let h = r.head;
        Some(RuleInfo {
            id,
            group: h.group,
            priority: h.priority,
            fate: h.fate,
            jump: h.jump,
            actions: r.actions.to_vec(),
        })
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
        let Some(g) = self.w.enter() else {
            return ClassifierStats::default();
        };
        let mut tables = std::collections::BTreeMap::new();
        let mut subtrees = std::collections::BTreeMap::new();
        let mut bytes = g.rules.capacity() * std::mem::size_of::<crate::group::RuleEntry>();
        // Shared by both copies, counted once.
        let exact_bytes: usize = self.exact.iter().map(|x| x.table.memory_bytes()).sum();
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
            .map(|r| r.heap_bytes())
            .sum();
        let total = 2 * bytes + exact_bytes + shared + self.slots.capacity() * std::mem::size_of::<SlotMeta>();
        ClassifierStats {
            rules: self.live,
            groups: g.groups.len(),
            tables_per_group: tables,
            subtrees_per_group: subtrees,
            memory_bytes: total,
            memory_bytes_per_rule: if self.live == 0 {
                0.0
            } else {
                total as f64 / self.live as f64
            },
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
    /// Estimated heap bytes: both copies, the shared exact tables, shared rule constraints,
    /// writer bookkeeping.
    pub memory_bytes: usize,
    pub memory_bytes_per_rule: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::exact5;
    use crate::Verdict;

    #[test]
    fn test_apply_from_empties_the_batch_keeps_its_buffer_and_leaves_no_state_behind() {
        let (rules, keys) = exact5(300, 3);
        let (mut c, ids) = Classifier::with_rules(ClassifierConfig::default(), rules[..200].to_vec()).expect("load");
        let mut b = Batch::new();
        for (id, r) in ids.iter().zip(&rules) {
            b.modify(
                *id,
                Rule {
                    actions: vec![Action::Drop],
                    ..r.clone()
                },
            );
        }
        let cap = b.updates.capacity();
        assert!(c.apply_from(&mut b).expect("modifies").is_empty());
        assert!(b.is_empty());
        assert_eq!(b.updates.capacity(), cap);
        let reader = c.reader();
        let drops = |keys: &[crate::PacketKey]| {
            keys.iter()
                .filter(|k| reader.lookup(k).verdict == Verdict::Fate(Fate::Drop))
                .count()
        };
        assert_eq!(drops(&keys[..200]), 200);
        // Refused (the second delete names a rule the batch deleted): nothing applied, the
        // batch emptied all the same.
        b.delete(ids[0]).delete(ids[0]);
        assert!(matches!(
            c.apply_from(&mut b),
            Err(UpdateError::UnknownRule { op: 1, .. })
        ));
        assert!(b.is_empty());
        assert_eq!(c.len(), 200);
        // What the refused batch touched did not outlive it.
        b.delete(ids[0]);
        c.apply_from(&mut b).expect("delete");
        assert_eq!(c.len(), 199);
        rules[200..].iter().for_each(|r| {
            b.insert(r.clone());
        });
        assert_eq!(c.apply_from(&mut b).expect("inserts").len(), 100);
        assert_eq!(c.len(), 299);
        assert_eq!(drops(&keys[1..200]), 199);
        assert_eq!(drops(&keys[200..]), 0);
    }
}
