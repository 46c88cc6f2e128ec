//! The DUT NIC's functional and timing state: each flow's classification (cached per
//! flow, invalidated by an epoch when the rules change), the lookup paths and their steering
//! costs, the pending functional updates of the control plane.

use super::UNKNOWN;
use crate::connectx::control::PendingUpdate;
use crate::connectx::setup::Installed;
use crate::connectx::steering::{MatcherId, PathCost};
use ahash::AHashMap;
use nicbench_classify::{Batch, PacketKey, QueueResolver, RuleId, Update};
use nicbench_sim::{SimDuration, SimTime};

pub(super) type Hops = Vec<(u32, Vec<MatcherId>)>;

pub(super) struct Path {
    pub(super) hops: Hops,
    pub(super) flows: u64,
    pub(super) cost: PathCost,
    /// `cost` as the steering stage uses it (durations), derived at each refresh.
    pub(super) steer: SteerCost,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct FlowState {
    pub(super) epoch: u32,
    pub(super) path: u32,
    pub(super) queue: u16,
    pub(super) drop: bool,
}

/// The path cost as the per-packet steering stage uses it: durations (rounded to the ps once
/// per path, when the costs are refreshed), derived values precomputed.
#[derive(Clone, Copy, Default)]
pub(super) struct SteerCost {
    /// Firmware (root-table) part of the service time.
    pub(super) fw: SimDuration,
    /// `service - fw`: fast-table time.
    pub(super) fast: SimDuration,
    /// Time the pipeline is busy with the packet.
    pub(super) service: SimDuration,
    /// From entering the pipeline to leaving it: `latency.max(service)`.
    pub(super) latency: SimDuration,
    pub(super) tables: u32,
    /// The path visits the firmware-managed root table (its packets' lookups are serialized
    /// with the firmware's commands, `root_cmd_ns_per_packet`), whatever their lookups cost.
    pub(super) root: bool,
}

impl SteerCost {
    pub(super) fn of(c: &PathCost) -> SteerCost {
        let fw = SimDuration::from_ns_f64(c.fw_ns);
        let service = SimDuration::from_ns_f64(c.service_ns);
        SteerCost {
            fw,
            fast: service - fw,
            service,
            latency: SimDuration::from_ns_f64(c.latency_ns).max(service),
            tables: c.tables,
            root: c.root,
        }
    }
}

/// The most bytes the NIC buffer holds as an integer: `bytes as f64 > buffer_bytes` ⟺
/// `bytes > buffer_fit_bytes(buffer_bytes)` for every byte count below 2^53 (the float
/// comparison per packet needed a u64 → f64 conversion). A negative size holds nothing
/// (packets have ≥ 1 byte), NaN everything (as the float comparison did).
pub(super) fn buffer_fit_bytes(buffer_bytes: f64) -> u64 {
    if buffer_bytes.is_nan() {
        u64::MAX
    } else if buffer_bytes < 0.0 {
        0
    } else {
        // Saturating: ≥ 2^64 holds everything.
        buffer_bytes.floor() as u64
    }
}

/// A flow state as compared by [`Nic::uniform`] (the epoch is the current one).
pub(super) fn state_without_epoch(path: u32, queue: u16, drop: bool) -> FlowState {
    FlowState {
        epoch: 0,
        path,
        queue,
        drop,
    }
}

/// The functional + timing state of the DUT NIC.
pub(super) struct Nic {
    pub(super) inst: Installed,
    pub(super) reader: nicbench_classify::Reader,
    /// Queue of each outcome: `queue`, `rss` per flow, the port's default RSS.
    pub(super) rss: QueueResolver,
    pub(super) keys: Vec<PacketKey>,
    pub(super) flows: Vec<FlowState>,
    pub(super) paths: Vec<Path>,
    pub(super) path_ids: AHashMap<Hops, u32>,
    pub(super) probe_cache: AHashMap<u32, Vec<MatcherId>>,
    pub(super) epoch: u32,
    /// Flows classified at the current epoch, the first such state, and whether a later
    /// one differed from it (path, queue or drop): when every flow is classified and none
    /// differed, the flow of a packet does not matter ([`Nic::uniform`]).
    pub(super) fresh_flows: usize,
    pub(super) first_fresh: FlowState,
    pub(super) mixed: bool,
    pub(super) hit_rate: f64,
    pub(super) timing_dirty: bool,
    pub(super) last_refresh: SimTime,
    /// Functional updates in completion order, not yet applied to the classifier.
    pub(super) pending: Vec<PendingUpdate>,
    pub(super) last_apply: Option<SimTime>,
    /// Packets through the firmware-managed root table: rate of the last window [packets/s],
    /// count and start of the current window.
    pub(super) fw_pps: f64,
    pub(super) fw_window_packets: u64,
    pub(super) fw_window_start: SimTime,
    /// Rules of the user's file some flow's lookup met (ids of `inst.file_rules`).
    pub(super) file_rules_met: ahash::AHashSet<RuleId>,
}

impl Nic {
    pub(super) fn classify(&mut self, flow: usize) -> FlowState {
        let Some(key) = self.keys.get(flow) else {
            return FlowState {
                epoch: self.epoch,
                path: 0,
                queue: 0,
                drop: false,
            };
        };
        let (hops, outcome) = self.reader.trace(key);
        if let Some(file) = &self.inst.file_rules {
            for r in hops.iter().filter_map(|h| h.rule) {
                if file.installed.contains_key(&r) {
                    self.file_rules_met.insert(r);
                }
            }
        }
        let mut path: Hops = Vec::with_capacity(hops.len());
        for hop in &hops {
            let order = self
                .probe_cache
                .entry(hop.group)
                .or_insert_with(|| self.inst.tables.probe_order(hop.group));
            let upto = hop
                .rule
                .and_then(|r| self.inst.rule_matcher.get(&r))
                .and_then(|m| order.iter().position(|x| x == m))
                .map_or(order.len(), |i| i + 1);
            path.push((hop.group, order[..upto].to_vec()));
        }
        if path.is_empty() {
            path.push((0, Vec::new()));
        }
        // RSS hashes at most the 5-tuple, so a flow has one queue. Drops and other ports get
        // no queue: counted as rule drops (port_id is not modelled as a second port).
        // An Err needs an rss rule installed after `build` (which checked every rule): the
        // installer installs queue rules only, so the port's default RSS stands in.
        let queue = match self.rss.queue(&self.inst.classifier, &outcome, key) {
            Ok(q) => q,
            Err(_) => Some(0),
        };
        let (queue, drop) = match (queue, outcome.verdict) {
            (Some(q), _) => (q, false),
            (None, nicbench_classify::Verdict::Fate(nicbench_classify::Fate::Drop)) => (0, true),
            (None, _) => (0, false),
        };
        let next = self.paths.len() as u32;
        let id = *self.path_ids.entry(path.clone()).or_insert(next);
        if id == next {
            // A path is priced when a flow first takes it, with the tables' current hit rates
            // (the periodic refresh then follows the flow counts): a replayed trace's flows meet
            // the steering tables from their first packet, as do the flows of a rule just
            // installed, instead of passing free until the next refresh.
            let cost = self.inst.tables.path_cost(&path, &self.inst.tables.hit_rates());
            self.paths.push(Path {
                hops: path,
                flows: 0,
                cost,
                steer: SteerCost::of(&cost),
            });
        }
        let old = self.flows[flow];
        if old.epoch != self.epoch {
            if self.fresh_flows == 0 {
                self.first_fresh = state_without_epoch(id, queue, drop);
            } else if self.first_fresh != state_without_epoch(id, queue, drop) {
                self.mixed = true;
            }
            self.fresh_flows += 1;
        }
        if old.path != UNKNOWN {
            self.paths[old.path as usize].flows -= 1;
        }
        self.paths[id as usize].flows += 1;
        if old.path != id {
            self.timing_dirty = true;
        }
        let state = FlowState {
            epoch: self.epoch,
            path: id,
            queue,
            drop,
        };
        self.flows[flow] = state;
        state
    }

    /// Makes room for flows a streamed trace discovered since (their keys: `keys`).
    #[cold]
    pub(super) fn add_flows(&mut self, keys: &[PacketKey]) {
        if let Some(new) = keys.get(self.keys.len()..) {
            self.keys.extend_from_slice(new);
            self.flows.resize(
                self.keys.len(),
                FlowState {
                    epoch: UNKNOWN,
                    path: UNKNOWN,
                    queue: 0,
                    drop: false,
                },
            );
        }
    }

    /// The state every flow has, if all are classified at the current epoch alike.
    #[inline]
    pub(super) fn uniform(&self) -> Option<FlowState> {
        (!self.mixed && self.fresh_flows == self.flows.len() && self.fresh_flows > 0).then_some(FlowState {
            epoch: self.epoch,
            ..self.first_fresh
        })
    }

    #[inline]
    pub(super) fn flow(&mut self, flow: usize) -> FlowState {
        match self.flows.get(flow) {
            Some(s) if s.epoch == self.epoch => *s,
            Some(_) => self.classify(flow),
            None => FlowState {
                epoch: self.epoch,
                path: 0,
                queue: 0,
                drop: false,
            },
        }
    }

    /// Recomputes matcher flow counts, the cache hit rate and every path's cost.
    pub(super) fn refresh(&mut self, now: SimTime) {
        let tables = &mut self.inst.tables;
        for m in tables.matchers.iter_mut() {
            m.flows = 0;
        }
        for p in &self.paths {
            for (_, probed) in &p.hops {
                for &m in probed {
                    tables.matchers[m as usize].flows += p.flows;
                }
            }
        }
        tables.total_flows = self.flows.len() as u64;
        self.hit_rate = tables.cache_hit_rate();
        let rates = tables.hit_rates();
        for p in self.paths.iter_mut() {
            p.cost = tables.path_cost(&p.hops, &rates);
            p.steer = SteerCost::of(&p.cost);
        }
        self.timing_dirty = false;
        self.last_refresh = now;
    }

    /// The root-table packet rate over the window ending `now`; a new window starts.
    pub(super) fn close_rate_window(&mut self, now: SimTime) {
        let span = now - self.fw_window_start;
        if span > SimDuration::ZERO {
            self.fw_pps = self.fw_window_packets as f64 * 1e12 / span.as_ps() as f64;
        }
        self.fw_window_packets = 0;
        self.fw_window_start = now;
    }

    /// Applies the functional updates due by `now` to the classifier (one batch, one epoch).
    pub(super) fn apply_due(&mut self, now: SimTime) {
        let due = self.pending.iter().take_while(|u| u.at <= now).count();
        if due == 0 {
            return;
        }
        let mut batch = Batch::new();
        let mut inserts = Vec::new();
        // Moved, not cloned: a batch of in-place updates carries a whole rule each.
        for op in self.pending.drain(..due) {
            if matches!(op.update, Update::Insert(_)) {
                inserts.push((op.insert_of, op.group));
            }
            batch.updates.push(op.update);
        }
        // A refused batch (e.g. unknown id after a failed insert) changes nothing; the
        // timing model already counted the entries, which is what the hardware would do.
        if let Ok(ids) = self.inst.classifier.apply(batch) {
            for (id, (of, group)) in ids.into_iter().zip(inserts) {
                if let Some((m, slot)) = of {
                    self.inst.rule_matcher.insert(id, m);
                    if let Some(t) = self
                        .inst
                        .targets
                        .get_mut(&group)
                        .and_then(|t| t.functional.get_mut(slot))
                    {
                        t.0 = id;
                    }
                }
            }
        }
        self.epoch = self.epoch.wrapping_add(1);
        self.fresh_flows = 0;
        self.mixed = false;
        self.probe_cache.clear();
        self.last_apply = Some(now);
        self.timing_dirty = true;
    }
}
