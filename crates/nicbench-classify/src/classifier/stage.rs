//! The writer's update path: validate a batch, then place every operation (exact tables in
//! place, or left-right operations), then publish one version; and the reclamation of what
//! older versions used.
//!
//! Exact 5-tuple rules whose action packs into the entry never allocate here beyond the
//! caller's `Rule`: they are lowered on the stack ([`crate::compile::lower`]) and their
//! actions move into the slot's bookkeeping.

use super::{Classifier, Update, UpdateError, MAX_RULE_SLOTS};
use crate::compile::{lower, lower_exact5, CompiledRule, Exact5, Fate};
use crate::group::exact::{pack_action, ExactWriter, ACT_SLOW};
use crate::group::Algorithm;
use crate::state::{Op, RuleId};
use crate::table::prefetch_read;
use crate::version::{next_version, MAX_LAG_VERSIONS, SWEEP_VERSIONS};
use nicbench_rules::{Action, Rule};
use std::sync::Arc;

/// Operations of a batch looked ahead to prefetch what they will touch.
const LOOKAHEAD: usize = 8;
/// Batch planning buffers up to this many operations are kept for the next batch (~2 MB);
/// larger ones (bulk loads) are freed.
const KEEP_PLAN_OPS: usize = 16_384;

/// A rule slot as the writer tracks it.
#[derive(Default)]
pub(super) struct SlotMeta {
    pub gen: u32,
    /// Insertion order (the tie-break), kept by modifies.
    pub seq: u32,
    pub rule: Option<Installed>,
    /// Version up to which each of the slot's two rank cells may still be read by an older
    /// entry (`u64::MAX`: the live entry's cell).
    cell_busy: [u64; 2],
}

/// What a rule is, once placed.
pub(super) struct Installed {
    pub head: Head,
    pub actions: Vec<Action>,
    /// The compiled rule, for rules the left-right copies hold.
    pub compiled: Option<Arc<CompiledRule>>,
    /// The rule's entry in an exact table.
    exact: Option<ExactLoc>,
    /// Whether the rule has the exact 5-tuple shape (wherever it went: such rules never
    /// enter a decision tree).
    exact_shape: bool,
}

impl Installed {
    /// Whether a change of this rule calls for a decision-tree rebuild.
    pub fn wild(&self) -> bool {
        !self.exact_shape
    }

    pub fn heap_bytes(&self) -> usize {
        let actions = self.actions.capacity() * std::mem::size_of::<Action>();
        actions
            + self.compiled.as_ref().map_or(0, |r| {
                std::mem::size_of::<CompiledRule>() + r.words.len() * 24 + r.ranges.len() * 64 + r.actions.len() * 32
            })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Head {
    pub group: u32,
    pub priority: u32,
    pub fate: Fate,
    pub jump: Option<u32>,
    pub mark: Option<u32>,
}

#[derive(Clone, Copy, Debug)]
struct ExactLoc {
    /// Index into the classifier's exact tables.
    table: u32,
    key: [u32; 3],
    cell: u32,
    /// The version the entry was made at.
    since: u64,
}

/// A validated new rule (its pattern already dropped).
pub(super) struct NewRule {
    actions: Vec<Action>,
    head: Head,
    form: Form,
}

pub(super) enum Form {
    /// Exact 5-tuple with an inline action: not compiled unless it must go elsewhere.
    /// `table`: its exact table if it exists already.
    Exact {
        e: Exact5,
        act: u32,
        table: Option<u32>,
    },
    General(Arc<CompiledRule>),
}

/// Jump-edge changes of a batch: (edge, +1/-1, operation). Inline up to two (a single
/// operation), so single updates do not allocate.
#[derive(Default)]
struct EdgeDelta {
    inline: [((u32, u32), i64, usize); 2],
    len: usize,
    more: Vec<((u32, u32), i64, usize)>,
}

impl EdgeDelta {
    fn push(&mut self, e: ((u32, u32), i64, usize)) {
        if self.len < 2 && self.more.is_empty() {
            self.inline[self.len] = e;
            self.len += 1;
        } else {
            if self.more.is_empty() {
                self.more.extend_from_slice(&self.inline[..self.len]);
            }
            self.more.push(e);
        }
    }
    fn is_empty(&self) -> bool {
        self.len == 0 && self.more.is_empty()
    }
    fn as_slice(&self) -> &[((u32, u32), i64, usize)] {
        if self.more.is_empty() {
            &self.inline[..self.len]
        } else {
            &self.more
        }
    }
}

/// One validated operation of a batch.
pub(super) enum Planned {
    Insert(NewRule),
    Delete(RuleId),
    Modify(RuleId, NewRule),
}

impl Classifier {
    pub(super) fn live_rule(&self, id: RuleId) -> Option<&Installed> {
        let m = self.slots.get(id.slot() as usize)?;
        if m.gen != id.gen() {
            return None;
        }
        m.rule.as_ref()
    }

    fn exact_enabled(&self) -> bool {
        self.config.exact_match && self.config.algorithm != Algorithm::TupleSpace
    }

    /// Lowers and checks one rule, without allocating for exact 5-tuple rules.
    fn plan_rule(&self, rule: Rule, op: usize) -> Result<NewRule, UpdateError> {
        let (group, priority) = (rule.attr.group, rule.attr.priority);
        let exact = |e: Exact5, act: u32, actions: Vec<Action>| {
            let head = Head {
                group,
                priority,
                fate: e.fate,
                jump: e.jump,
                mark: e.mark,
            };
            let table = self.exact_index.get(&(group, e.hi_mask, e.hi_value)).copied();
            NewRule {
                actions,
                head,
                form: Form::Exact { e, act, table },
            }
        };
        let inline = |e: &Exact5| Some(pack_action(e.fate, e.jump, e.mark)).filter(|&a| a != ACT_SLOW);
        let fast = self.exact_enabled().then(|| lower_exact5(&rule)).flatten();
        if let Some(e) = fast {
            if let Some(act) = inline(&e) {
                return Ok(exact(e, act, rule.actions));
            }
        }
        let l = lower(&rule).map_err(|source| UpdateError::Compile { op, source })?;
        if self.exact_enabled() && fast.is_none() {
            // Other spellings of an exact 5-tuple.
            if let Some((hi_mask, hi_value, key)) = l.exact() {
                let e = Exact5 {
                    hi_mask,
                    hi_value,
                    key,
                    fate: l.fate,
                    jump: l.jump,
                    mark: l.mark,
                };
                if let Some(act) = inline(&e) {
                    return Ok(exact(e, act, rule.actions));
                }
            }
        }
        let head = Head {
            group,
            priority,
            fate: l.fate,
            jump: l.jump,
            mark: l.mark,
        };
        let c = Arc::new(l.into_compiled(&rule));
        Ok(NewRule {
            actions: rule.actions,
            head,
            form: Form::General(c),
        })
    }

    /// Validates operation `op` of a batch (`touched`: what the batch did before it to the
    /// rules it named — deleted (`None`) or modified into a rule with this head); appends its
    /// jump-edge changes to `edges`. A rule's head is its latest in the batch: a modify then
    /// a delete of one rule removes the modified rule's jump edge, not the original's twice.
    fn plan_op(
        &self,
        op: usize,
        u: Update,
        touched: Option<&ahash::AHashMap<RuleId, Option<Head>>>,
        edges: &mut EdgeDelta,
    ) -> Result<Planned, UpdateError> {
        let existing = |id: RuleId| {
            let head = match touched.and_then(|t| t.get(&id)) {
                Some(latest) => *latest,
                None => self.live_rule(id).map(|r| r.head),
            };
            head.ok_or(UpdateError::UnknownRule { op, id })
        };
        Ok(match u {
            Update::Insert(r) => {
                let n = self.plan_rule(r, op)?;
                if let Some(j) = n.head.jump {
                    edges.push(((n.head.group, j), 1, op));
                }
                Planned::Insert(n)
            }
            Update::Delete(id) => {
                let old = existing(id)?;
                if let Some(j) = old.jump {
                    edges.push(((old.group, j), -1, op));
                }
                Planned::Delete(id)
            }
            Update::Modify(id, r) => {
                let old = existing(id)?;
                let n = self.plan_rule(r, op)?;
                if let Some(j) = old.jump {
                    edges.push(((old.group, j), -1, op));
                }
                if let Some(j) = n.head.jump {
                    edges.push(((n.head.group, j), 1, op));
                }
                Planned::Modify(id, n)
            }
        })
    }

    /// Refuses `inserts` more rules if the slots would run out.
    fn check_room(&mut self, inserts: usize) -> Result<(), UpdateError> {
        if self.slots.len() + inserts > MAX_RULE_SLOTS + self.free.len() {
            self.reclaim();
            if self.slots.len() + inserts > MAX_RULE_SLOTS + self.free.len() {
                return Err(UpdateError::TooManyRules);
            }
        }
        Ok(())
    }

    /// Validates the batch `updates`, then stages its operations (visible at the next
    /// publish). Leaves `updates` empty (its capacity kept for the caller), whatever the
    /// outcome.
    pub(super) fn stage(&mut self, updates: &mut Vec<Update>) -> Result<Vec<RuleId>, UpdateError> {
        // The planning buffers live in the classifier: a steady stream of batches then
        // allocates nothing large here (with glibc each allocation of 1 KB or more first
        // consolidates the fast bins, which every modify's small frees refill).
        let mut plan = std::mem::take(&mut self.plan);
        let mut touched = std::mem::take(&mut self.touched);
        let out = self.stage_with(updates, &mut plan, &mut touched);
        updates.clear();
        plan.clear();
        touched.clear();
        // A bulk load's buffers are not worth keeping.
        if plan.capacity() <= KEEP_PLAN_OPS {
            self.plan = plan;
        }
        if touched.capacity() <= KEEP_PLAN_OPS {
            self.touched = touched;
        }
        out
    }

    /// [`stage`](Self::stage) with its buffers (empty on entry; left to the caller to clear).
    fn stage_with(
        &mut self,
        updates: &mut [Update],
        plan: &mut Vec<Planned>,
        touched: &mut ahash::AHashMap<RuleId, Option<Head>>,
    ) -> Result<Vec<RuleId>, UpdateError> {
        let ops = updates.len();
        // 1. Validate and lower, without touching anything.
        plan.reserve(ops);
        let mut edges = EdgeDelta::default();
        let mut inserts = 0usize;
        for op in 0..ops {
            // The rule slots a few operations ahead: their misses overlap this one's work.
            if let Some(Update::Delete(id) | Update::Modify(id, _)) = updates.get(op + LOOKAHEAD) {
                if let Some(m) = self.slots.get(id.slot() as usize) {
                    prefetch_read(m as *const SlotMeta as *const u8);
                }
            }
            let u = std::mem::replace(&mut updates[op], Update::Delete(RuleId(0)));
            let p = self.plan_op(op, u, Some(touched), &mut edges)?;
            match &p {
                Planned::Insert(_) => inserts += 1,
                Planned::Delete(id) => {
                    touched.insert(*id, None);
                }
                Planned::Modify(id, n) => {
                    touched.insert(*id, Some(n.head));
                }
            }
            plan.push(p);
        }
        self.check_room(inserts)?;
        if !edges.is_empty() {
            self.apply_edges(edges.as_slice())?;
        }
        // 2. Place every operation at the staged version.
        let mut ids = Vec::with_capacity(inserts);
        for i in 0..plan.len() {
            if let Some(ahead) = plan.get(i + LOOKAHEAD) {
                self.prefetch_planned(ahead);
            }
            let p = std::mem::replace(&mut plan[i], Planned::Delete(RuleId(0)));
            let inserted = matches!(p, Planned::Insert(_));
            let id = self.apply_planned(p);
            if inserted {
                ids.push(id);
            }
        }
        self.end_stage(ops);
        Ok(ids)
    }

    /// Brings the exact-table lines a planned operation will touch towards the cache.
    fn prefetch_planned(&self, p: &Planned) {
        let rule = match p {
            Planned::Delete(id) | Planned::Modify(id, _) => {
                self.slots.get(id.slot() as usize).and_then(|m| m.rule.as_ref())
            }
            Planned::Insert(_) => None,
        };
        if let Some(r) = rule.filter(|r| r.actions.capacity() > 0) {
            // The old actions' buffer is freed (by a modify too: the caller's new one is
            // kept), and the allocator reads its header, just below it: long untouched, a
            // miss per operation unless started ahead.
            prefetch_read((r.actions.as_ptr() as *const u8).wrapping_sub(8));
        }
        let old = rule.and_then(|r| r.exact);
        if let Some(loc) = old {
            self.exact[loc.table as usize].prefetch(&loc.key);
        }
        if let Planned::Insert(n) | Planned::Modify(_, n) = p {
            if let Form::Exact { e, table: Some(xi), .. } = &n.form {
                if old.is_none_or(|o| o.key != e.key) {
                    self.exact[*xi as usize].prefetch(&e.key);
                }
            }
        }
    }

    /// Starts the cache misses of one operation together instead of one after the other:
    /// the new rule's pattern and actions (the caller's, read by the lowering), the rule
    /// slot of the rule it deletes or modifies, and that rule's exact-table line.
    fn prefetch_update(&self, u: &Update) {
        if let Update::Insert(r) | Update::Modify(_, r) = u {
            prefetch_read(r.pattern.as_ptr() as *const u8);
            prefetch_read(r.actions.as_ptr() as *const u8);
        }
        if let Update::Delete(id) | Update::Modify(id, _) = u {
            if let Some(loc) = self
                .slots
                .get(id.slot() as usize)
                .and_then(|m| m.rule.as_ref())
                .and_then(|r| r.exact)
            {
                if let Some(x) = self.exact.get(loc.table as usize) {
                    x.prefetch(&loc.key);
                }
            }
        }
    }

    /// [`stage`](Self::stage) of a one-operation batch, without its allocations. Returns the
    /// id of the rule inserted, deleted or modified.
    pub(super) fn stage_one(&mut self, u: Update) -> Result<RuleId, UpdateError> {
        self.prefetch_update(&u);
        let mut edges = EdgeDelta::default();
        let p = self.plan_op(0, u, None, &mut edges)?;
        if matches!(p, Planned::Insert(_)) {
            self.check_room(1)?;
        }
        if !edges.is_empty() {
            self.apply_edges(edges.as_slice())?;
        }
        let id = self.apply_planned(p);
        self.end_stage(1);
        Ok(id)
    }

    /// The exact table, key and packed action of a rule the single-update fast path can
    /// take: exact 5-tuple shape, inline action, no jump (no group-graph change), and its
    /// exact table exists already.
    #[inline]
    fn fast_form(&mut self, rule: &Rule) -> Option<(Exact5, u32, u32)> {
        if !self.exact_enabled() {
            return None;
        }
        let e = lower_exact5(rule).filter(|e| e.jump.is_none())?;
        let act = pack_action(e.fate, e.jump, e.mark);
        if act == ACT_SLOW {
            return None;
        }
        let at = (rule.attr.group, e.hi_mask, e.hi_value);
        // Consecutive updates mostly hit the same table: skip the hash lookup then.
        let xi = match self.last_exact {
            Some((k, xi)) if k == at => xi,
            _ => {
                let xi = *self.exact_index.get(&at)?;
                self.last_exact = Some((at, xi));
                xi
            }
        };
        Some((e, act, xi))
    }

    /// [`stage_one`](Self::stage_one) of an insert, for the PAM'21 case: an exact 5-tuple
    /// rule ([`fast_form`](Self::fast_form)). It ends exactly as the general path does
    /// (same slot, rank cell, entry, bookkeeping; a rule already live on the key sends this
    /// one to the general tables) without the general path's plan structures, and orders
    /// the work so that the entry's cache miss overlaps the rest. `Err(rule)`, with nothing
    /// changed, when it does not apply: the caller takes the general path.
    pub(super) fn stage_insert_fast(&mut self, rule: Rule) -> Result<RuleId, Rule> {
        // The actions' miss overlaps the pattern's (the lowering reads both).
        prefetch_read(rule.actions.as_ptr() as *const u8);
        let Some((e, act, xi)) = self.fast_form(&rule) else {
            return Err(rule);
        };
        if self.slots.len() >= MAX_RULE_SLOTS + self.free.len() {
            return Err(rule); // the general path reclaims or refuses
        }
        self.exact[xi as usize].prefetch(&e.key);
        // Committed from here on. The pattern is lowered: free it while the line comes.
        let Rule { attr, pattern, actions } = rule;
        drop(pattern);
        let (slot, gen, seq) = self.new_slot();
        let head = Head {
            group: attr.group,
            priority: attr.priority,
            fate: e.fate,
            jump: None,
            mark: e.mark,
        };
        let staged = self.staged;
        let inst = match self.exact[xi as usize].place(&e.key, staged, self.min_pinned) {
            Some(at) => {
                let cell = self.take_cell(slot, ((head.priority as u64) << 32) | seq as u64, None);
                self.exact[xi as usize].fill(at, &e.key, act, slot, cell, gen, staged);
                let exact = Some(ExactLoc {
                    table: xi,
                    key: e.key,
                    cell,
                    since: staged,
                });
                Installed {
                    head,
                    actions,
                    compiled: None,
                    exact,
                    exact_shape: true,
                }
            }
            // A rule is live on the key: the general path's placement (general tables).
            None => self.place(
                slot,
                NewRule {
                    actions,
                    head,
                    form: Form::Exact {
                        e,
                        act,
                        table: Some(xi),
                    },
                },
                None,
            ),
        };
        if self.config.algorithm == Algorithm::Hybrid && inst.wild() {
            *self.changes.entry(inst.head.group).or_insert(0) += 1;
        }
        self.slots[slot as usize].rule = Some(inst);
        self.live += 1;
        self.end_stage(1);
        Ok(RuleId::new(slot, gen))
    }

    /// [`stage_one`](Self::stage_one) of a modify of a rule that lives only in an exact
    /// table, without a jump, into an exact 5-tuple rule (see
    /// [`stage_insert_fast`](Self::stage_insert_fast)): the old entry is deleted and the new
    /// one made at the staged version, as the general path does. `Err(rule)`, with nothing
    /// changed, when it does not apply.
    pub(super) fn stage_modify_fast(&mut self, id: RuleId, rule: Rule) -> Result<(), Rule> {
        let slot = id.slot();
        let Some(old) = self.live_rule(id) else {
            return Err(rule);
        };
        let Some(oloc) = old.exact.filter(|_| old.compiled.is_none() && old.head.jump.is_none()) else {
            return Err(rule);
        };
        let old_priority = old.head.priority;
        // The old entry's miss and the new actions' overlap the lowering.
        if let Some(x) = self.exact.get(oloc.table as usize) {
            x.prefetch(&oloc.key);
        }
        prefetch_read(rule.actions.as_ptr() as *const u8);
        let Some((e, act, xi)) = self.fast_form(&rule) else {
            return Err(rule);
        };
        if xi != oloc.table || e.key != oloc.key {
            self.exact[xi as usize].prefetch(&e.key);
        }
        // Committed from here on.
        let Rule { attr, pattern, actions } = rule;
        drop(pattern);
        self.kill_exact(slot, oloc);
        let head = Head {
            group: attr.group,
            priority: attr.priority,
            fate: e.fate,
            jump: None,
            mark: e.mark,
        };
        let prev = Some((oloc, old_priority));
        let staged = self.staged;
        match self.exact[xi as usize].place(&e.key, staged, self.min_pinned) {
            Some(at) => {
                let m = &self.slots[slot as usize];
                let (gen, rank) = (m.gen, ((head.priority as u64) << 32) | m.seq as u64);
                let cell = self.take_cell(slot, rank, prev);
                self.exact[xi as usize].fill(at, &e.key, act, slot, cell, gen, staged);
                // Still an exact-only rule: update the slot's record in place.
                if let Some(inst) = self.slots[slot as usize].rule.as_mut() {
                    inst.head = head;
                    inst.actions = actions;
                    inst.exact = Some(ExactLoc {
                        table: xi,
                        key: e.key,
                        cell,
                        since: staged,
                    });
                }
            }
            // Another rule is live on the new key: the general path's placement (general
            // tables).
            None => {
                let old = self.slots[slot as usize].rule.take();
                let inst = self.place(
                    slot,
                    NewRule {
                        actions,
                        head,
                        form: Form::Exact {
                            e,
                            act,
                            table: Some(xi),
                        },
                    },
                    prev,
                );
                if self.config.algorithm == Algorithm::Hybrid && inst.wild() {
                    *self.changes.entry(inst.head.group).or_insert(0) += 1;
                }
                self.slots[slot as usize].rule = Some(inst);
                drop(old);
            }
        }
        self.end_stage(1);
        Ok(())
    }

    fn end_stage(&mut self, ops: usize) {
        if self.config.algorithm == Algorithm::Hybrid
            && (self.lr_dirty || self.build.is_some() || !self.changes.is_empty())
        {
            self.maintain_trees();
        }
        self.deferred_ops += ops;
        self.since_reclaim += ops;
    }

    /// Places one validated operation at the staged version; returns its rule's id.
    fn apply_planned(&mut self, p: Planned) -> RuleId {
        let hybrid = self.config.algorithm == Algorithm::Hybrid;
        match p {
            Planned::Insert(n) => {
                let (slot, gen, _) = self.new_slot();
                let inst = self.place(slot, n, None);
                if hybrid && inst.wild() {
                    *self.changes.entry(inst.head.group).or_insert(0) += 1;
                }
                self.slots[slot as usize].rule = Some(inst);
                self.live += 1;
                RuleId::new(slot, gen)
            }
            Planned::Delete(id) => {
                let slot = id.slot();
                let Some(old) = self.slots[slot as usize].rule.take() else {
                    return id;
                };
                if hybrid && old.wild() {
                    *self.changes.entry(old.head.group).or_insert(0) += 1;
                }
                if let Some(loc) = old.exact {
                    self.kill_exact(slot, loc);
                }
                if old.compiled.is_some() {
                    self.w.append(Op::Remove { slot });
                    self.lr_dirty = true;
                }
                self.retiring.push_back((self.staged, slot));
                self.live -= 1;
                id
            }
            Planned::Modify(id, n) => {
                let slot = id.slot();
                let Some(old) = self.slots[slot as usize].rule.take() else {
                    return id;
                };
                if let Some(loc) = old.exact {
                    self.kill_exact(slot, loc);
                }
                let inst = self.place(slot, n, old.exact.map(|l| (l, old.head.priority)));
                if hybrid {
                    let (a, b) = (
                        old.wild().then_some(old.head.group),
                        inst.wild().then_some(inst.head.group),
                    );
                    for g in a.into_iter().chain(b.filter(|&g| Some(g) != a)) {
                        *self.changes.entry(g).or_insert(0) += 1;
                    }
                }
                if old.compiled.is_some() && inst.compiled.is_none() {
                    self.w.append(Op::Remove { slot });
                    self.lr_dirty = true;
                }
                self.slots[slot as usize].rule = Some(inst);
                id
            }
        }
    }

    /// Applies the jump-edge changes of a batch, refusing one that closes a cycle.
    fn apply_edges(&mut self, edge_delta: &[((u32, u32), i64, usize)]) -> Result<(), UpdateError> {
        if edge_delta.iter().any(|&(_, d, _)| d > 0) {
            let mut edges = self.edges.clone();
            for &(e, d, _) in edge_delta {
                let c = edges.entry(e).or_insert(0);
                *c = (*c as i64 + d).max(0) as u32;
            }
            edges.retain(|_, c| *c > 0);
            if let Some((from, to)) = find_cycle(&edges) {
                let op = edge_delta
                    .iter()
                    .find(|&&(e, d, _)| e == (from, to) && d > 0)
                    .map_or(0, |x| x.2);
                return Err(UpdateError::JumpCycle { op, from, to });
            }
            self.edges = edges;
        } else {
            for &(e, d, _) in edge_delta {
                if let Some(c) = self.edges.get_mut(&e) {
                    *c = (*c as i64 + d).max(0) as u32;
                }
            }
            self.edges.retain(|_, c| *c > 0);
        }
        Ok(())
    }

    /// A rule slot for a new rule, its counters zeroed, with a new generation and the next
    /// insertion order: (slot, generation, insertion order).
    fn new_slot(&mut self) -> (u32, u32, u32) {
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.slots.push(SlotMeta::default());
                (self.slots.len() - 1) as u32
            }
        };
        self.counters.ensure(slot);
        self.counters.reset(slot);
        let m = &mut self.slots[slot as usize];
        m.gen = m.gen.wrapping_add(1);
        m.seq = self.next_seq;
        m.cell_busy = [0, 0];
        self.next_seq = self.next_seq.saturating_add(1);
        (slot, m.gen, m.seq)
    }

    /// The exact table of `(group, hi_mask, hi_value)`, created (and listed in the copies by
    /// this publish) if needed.
    fn exact_table(&mut self, group: u32, hi_mask: u64, hi_value: u64) -> u32 {
        if let Some(&xi) = self.exact_index.get(&(group, hi_mask, hi_value)) {
            return xi;
        }
        let x = ExactWriter::new(hi_mask, hi_value, self.staged);
        self.w.append(Op::AddExact {
            group,
            table: x.table.clone(),
        });
        self.lr_dirty = true;
        self.exact.push(x);
        let xi = (self.exact.len() - 1) as u32;
        self.exact_index.insert((group, hi_mask, hi_value), xi);
        xi
    }

    /// Deletes a rule's exact entry at the staged version.
    fn kill_exact(&mut self, slot: u32, loc: ExactLoc) {
        self.exact[loc.table as usize].kill(&loc.key, slot, self.staged);
        // An entry made in this very version was never visible: its rank cell is free now.
        self.slots[slot as usize].cell_busy[loc.cell as usize] = if loc.since == self.staged { 0 } else { self.staged };
    }

    /// The rank cell for a new exact entry of `slot` with `rank`; `old`: the rule's entry
    /// this one replaces (already killed). The cell an older version may still read is
    /// never overwritten (waiting for readers if a rule's priority changes twice within
    /// one reader burst).
    fn take_cell(&mut self, slot: u32, rank: u64, old: Option<(ExactLoc, u32)>) -> u32 {
        let busy = self.slots[slot as usize].cell_busy;
        let seq = self.slots[slot as usize].seq;
        let old_rank = |p: u32| ((p as u64) << 32) | seq as u64;
        let old = old.map(|(o, p)| (o, old_rank(p)));
        if let Some((o, _)) = old.filter(|&(_, r)| r == rank) {
            // Same rank: share the cell with the entry being replaced.
            self.slots[slot as usize].cell_busy[o.cell as usize] = u64::MAX;
            return o.cell;
        }
        let c = match old {
            // Made in this very version, never visible: its cell is free.
            Some((o, _)) if o.since == self.staged => o.cell,
            Some((o, _)) => 1 - o.cell,
            None => (busy[0] > busy[1]) as u32,
        };
        let need = busy[c as usize];
        if need > self.min_pinned && need != 0 {
            self.min_pinned = self.clock.min_pinned();
            if need > self.min_pinned {
                self.min_pinned = self.clock.wait_for(need);
            }
        }
        self.ranks.set(slot, c, rank);
        self.slots[slot as usize].cell_busy[c as usize] = u64::MAX;
        c
    }

    /// Places a new rule (or the new version of a modified one) in `slot`.
    fn place(&mut self, slot: u32, n: NewRule, old: Option<(ExactLoc, u32)>) -> Installed {
        let m = &self.slots[slot as usize];
        let (gen, seq) = (m.gen, m.seq);
        let rank = ((n.head.priority as u64) << 32) | seq as u64;
        let NewRule { actions, head, form } = n;
        let (compiled, act, shape) = match form {
            Form::Exact { e, act, table } => {
                let xi = table.unwrap_or_else(|| self.exact_table(head.group, e.hi_mask, e.hi_value));
                let key = e.key;
                let (staged, min) = (self.staged, self.min_pinned);
                if let Some(at) = self.exact[xi as usize].place(&key, staged, min) {
                    let cell = self.take_cell(slot, rank, old);
                    self.exact[xi as usize].fill(at, &key, act, slot, cell, gen, staged);
                    let loc = ExactLoc {
                        table: xi,
                        key,
                        cell,
                        since: self.staged,
                    };
                    return Installed {
                        head,
                        actions,
                        compiled: None,
                        exact: Some(loc),
                        exact_shape: true,
                    };
                }
                // A second rule on this key: the general tables.
                let c = CompiledRule::from_exact5(&e, head.group, head.priority, &actions);
                (Arc::new(c), act, Some((e.hi_mask, e.hi_value, key)))
            }
            Form::General(c) => {
                let shape = if self.exact_enabled() { c.exact() } else { None };
                let act = pack_action(c.fate, c.jump, c.mark);
                (c, act, shape)
            }
        };
        // Exact shape whose action does not fit the entry: the entry points readers at the
        // rule entry of the copies (ACT_SLOW).
        let mut exact = None;
        if let Some((hi_mask, hi_value, key)) = shape {
            let xi = self.exact_table(head.group, hi_mask, hi_value);
            let (staged, min) = (self.staged, self.min_pinned);
            if let Some(at) = self.exact[xi as usize].place(&key, staged, min) {
                let cell = self.take_cell(slot, rank, old);
                self.exact[xi as usize].fill(at, &key, act, slot, cell, gen, staged);
                exact = Some(ExactLoc {
                    table: xi,
                    key,
                    cell,
                    since: self.staged,
                });
            }
        }
        self.w.append(Op::Put {
            slot,
            gen,
            seq,
            rule: compiled.clone(),
            exact: exact.is_some(),
        });
        self.lr_dirty = true;
        Installed {
            head,
            actions,
            compiled: Some(compiled),
            exact,
            exact_shape: shape.is_some(),
        }
    }

    /// Makes the staged version visible: a left-right publish first if the copies changed
    /// (with the version as their floor), then the version store.
    pub(super) fn publish(&mut self) {
        let v = self.staged;
        if self.lr_dirty {
            // Readers still entering the copy being left must not pin `v` or later there
            // (they would see this batch's exact entries with the old copy): they retry.
            if let Some(old) = self.w.enter() {
                old.until.set(v);
            }
            self.w.append(Op::Floor(v));
            self.w.publish();
            self.lr_dirty = false;
        }
        self.clock.publish(v, self.live);
        self.staged = next_version(v);
        self.deferred_ops = 0;
        self.deferred_since = None;
        self.since_reclaim += 64;
        if self.since_reclaim >= 4096 || self.staged - self.min_pinned >= MAX_LAG_VERSIONS {
            self.reclaim();
        }
    }

    /// Frees what no reader can use any more: slots of deleted rules, replaced table
    /// buffers; rebuilds tables whose stored versions grow old; waits for a reader that
    /// lags too far behind (see [`crate::version`]).
    pub(super) fn reclaim(&mut self) {
        self.since_reclaim = 0;
        self.min_pinned = self.clock.min_pinned();
        if self.staged - self.min_pinned >= MAX_LAG_VERSIONS {
            self.min_pinned = self.clock.wait_for(self.staged - MAX_LAG_VERSIONS / 2);
        }
        while let Some(&(v, slot)) = self.retiring.front() {
            if v > self.min_pinned {
                break;
            }
            self.retiring.pop_front();
            self.free.push(slot);
        }
        let (min, staged) = (self.min_pinned, self.staged);
        for x in &mut self.exact {
            if staged - x.built_at >= SWEEP_VERSIONS {
                x.rebuild(min, staged);
            }
            if x.has_retired() {
                x.free_retired(min);
            }
        }
    }
}

/// A cycle edge of the jump graph, if there is a cycle: the rule files' own check
/// (`nicbench_rules::checks`), so `rules check` and the classifier agree.
fn find_cycle(edges: &ahash::AHashMap<(u32, u32), u32>) -> Option<(u32, u32)> {
    nicbench_rules::checks::find_jump_cycle(edges.keys().copied())
}
