//! The control path: rule insertions, deletions and updates during a run, costed on the
//! core that performs them.
//!
//! Cost model (per operation, CPU time on the installing core):
//! - firmware tables (root; every group on ConnectX-4): a firmware command per rule,
//!   `root_insert_ipv4_us` (also for VLAN and tunnel matches) or `root_insert_ipv6_us`; a
//!   non-IPv6 rule also pays `root_insert_overflow_us_per_entry` per entry in the root table's
//!   overflow list (the firmware searches it) and `root_insert_spill_us` times the chance that
//!   its own entry spills there (the expected growth of the overflow list by this insertion:
//!   once the collision pool is exhausted, every insertion into a taken bucket spills). IPv6
//!   rules pay neither (PAM'21 Fig. 5a: their rate stays flat past the knee); deletion
//!   `root_delete_us`. Firmware
//!   commands are serialized with the root-table lookups of the traffic: under a root
//!   packet rate λ they stretch by 1 / (1 − λ·`root_cmd_ns_per_packet`) (hypothesis: why
//!   PAM'21's runtime insertions under 100 Gb/s, Fig. 3/4, are ~8× slower than its
//!   idle-NIC batch insertions, Fig. 5a).
//! - fast tables: direct STE writes, `nonroot_insert_<match>_us`; a matcher whose collisions
//!   and used buckets reach its increase threshold (`ste_rehash_load` of its buckets, see
//!   [`super::steering`]) is rehashed (`ste_rehash_growth`× larger), costing
//!   `rehash_ns_per_ste` per STE of the new table; deletion `nonroot_delete_us`.
//! - each action beyond the first: `insert_per_extra_action_us`; each batch call:
//!   `install_batch_overhead_us`.
//! - rate mode re-arms its timer when an operation returns ([`Pacing::AfterCompletion`]).
//! - `update` = delete + insert (non-atomic: the rule is absent between the two);
//!   `update_inplace` = the in-place API (`nonroot_update_inplace_us`; a firmware modify
//!   command on firmware tables).
//!
//! Invariant: an operation changes the tables when it starts and the classifier when it
//! completes (the functional change is handed to the caller with its completion time).

use super::params::ConnectxParams;
use super::request::{InstallMode, InstallOp, InstallSpec, MatchType, Pacing};
use super::setup::{exact_flow_rule, rule_signature, GroupTargets};
use super::steering::{MatcherId, Tables};
use nicbench_classify::{RuleId, Update};
use nicbench_rules::model::{EthItem, Ipv4Item, Ipv6Item, TcpItem, UdpItem, VlanItem, VxlanItem};
use nicbench_rules::{Field, Item, Rule};
use nicbench_sim::{SimDuration, SimTime};
use nicbench_wire::FlowKey;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A functional change the classifier must apply at `at`.
pub struct PendingUpdate {
    pub at: SimTime,
    pub update: Update,
    /// For inserts: the matcher of the rule and the target slot whose id it replaces.
    pub insert_of: Option<(MatcherId, usize)>,
    pub group: u32,
}

/// Everything an operation may change.
pub struct ControlCtx<'a> {
    pub tables: &'a mut Tables,
    pub targets: &'a mut GroupTargets,
    pub pending: &'a mut Vec<PendingUpdate>,
    pub events: &'a mut Vec<(SimTime, String)>,
    /// Recent rate of packets traversing the firmware-managed root table [packets/s].
    pub fw_pps: f64,
}

/// A template rule of a match type (only its mask matters: the rules the installer adds
/// are random and match no traffic flow).
pub fn template_rule(match_type: MatchType, group: u32) -> Rule {
    let flow = FlowKey {
        src: IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1)),
        dst: IpAddr::V4(Ipv4Addr::new(198, 51, 100, 1)),
        proto: 17,
        src_port: 1,
        dst_port: 2,
        vlan: None,
        vni: None,
    };
    let ipv4 = || {
        Item::Ipv4(Ipv4Item {
            src: Some(Field::exact(Ipv4Addr::new(192, 0, 2, 1))),
            dst: Some(Field::exact(Ipv4Addr::new(198, 51, 100, 1))),
            ..Default::default()
        })
    };
    let tcp = || {
        Item::Tcp(TcpItem {
            src: Some(Field::exact(1)),
            dst: Some(Field::exact(2)),
            flags: None,
        })
    };
    let mut rule = exact_flow_rule(&flow, group, 0, 0);
    rule.pattern = match match_type {
        MatchType::Ipv4 => rule.pattern,
        MatchType::Ipv6 => vec![
            Item::Eth(EthItem::default()),
            Item::Ipv6(Box::new(Ipv6Item {
                src: Some(Field::exact(Ipv6Addr::LOCALHOST)),
                dst: Some(Field::exact(Ipv6Addr::LOCALHOST)),
                ..Default::default()
            })),
            Item::Udp(UdpItem {
                src: Some(Field::exact(1)),
                dst: Some(Field::exact(2)),
            }),
        ],
        MatchType::Vlan => vec![
            Item::Eth(EthItem::default()),
            Item::Vlan(VlanItem {
                tci: Some(Field::exact(7)),
                ..Default::default()
            }),
            ipv4(),
            tcp(),
        ],
        MatchType::Tunnel => vec![
            Item::Eth(EthItem::default()),
            Item::Ipv4(Ipv4Item::default()),
            Item::Udp(UdpItem::default()),
            Item::Vxlan(VxlanItem {
                vni: Some(Field::exact(42)),
                ..Default::default()
            }),
            Item::Eth(EthItem::default()),
            ipv4(),
            tcp(),
        ],
    };
    rule
}

/// Rule updates of an [`InstallSpec`], one operation at a time.
pub struct Installer {
    spec: InstallSpec,
    params: ConnectxParams,
    matcher: MatcherId,
    fw: bool,
    /// Operations to issue (u64::MAX: unbounded).
    total: u64,
    issued: u64,
    /// Operations whose target was missing or refused by a full firmware table.
    pub refused: u64,
    /// End of the last operation on the installer's own clock.
    pub busy_until: SimTime,
    pub first_start: Option<SimTime>,
    pub last_end: SimTime,
    pub completed: u64,
    /// Core time spent installing.
    pub busy: SimDuration,
    /// Next counted target to delete or update, and next functional target.
    cursor: usize,
    /// Rate mode: when the first of the operations that have all started more than one period
    /// late was due (at the asked rate); `None` while the last one started on time.
    late_since: Option<SimTime>,
}

impl Installer {
    pub fn new(spec: &InstallSpec, params: &ConnectxParams, tables: &mut Tables) -> Installer {
        let rule = template_rule(spec.match_type, spec.group);
        let (sig, varies) = rule_signature(&rule);
        let matcher = tables.matcher(spec.group, &sig, 0, varies);
        let total = spec.count.unwrap_or(u64::MAX);
        Installer {
            spec: spec.clone(),
            params: params.clone(),
            matcher,
            fw: tables.is_fw_group(spec.group),
            total,
            issued: 0,
            refused: 0,
            busy_until: SimTime::ZERO,
            first_start: None,
            last_end: SimTime::ZERO,
            completed: 0,
            busy: SimDuration::ZERO,
            cursor: 0,
            late_since: None,
        }
    }

    pub fn spec(&self) -> &InstallSpec {
        &self.spec
    }

    /// When the next operation becomes due; `None` when all were issued.
    pub fn next_due(&self) -> Option<SimTime> {
        if self.issued >= self.total {
            return None;
        }
        Some(self.due_of_next())
    }

    /// Operations per burst (rate mode; a batch is one burst).
    fn burst(&self) -> u64 {
        self.spec.burst.max(1)
    }

    /// Rate mode: the time between two bursts at the asked rate, `burst / rate` \[ns\].
    fn gap_ns(&self) -> f64 {
        self.burst() as f64 * 1e9 / self.spec.rate_per_s.unwrap_or(1.0).max(1e-9)
    }

    /// When operation `i` is due at the asked rate however long the earlier ones took: bursts of
    /// `burst` operations, `burst / rate` apart, from the start (a batch: all at the start).
    /// From the start, not from the previous due time: no rounding builds up.
    pub fn scheduled_due(&self, i: u64) -> SimTime {
        let start = SimTime::from_ns(self.spec.start_ns);
        match self.spec.mode {
            InstallMode::Batch => start,
            InstallMode::Rate => start + SimDuration::from_ns_f64((i / self.burst()) as f64 * self.gap_ns()),
        }
    }

    /// When the next operation is (or would be, past `count`) due.
    fn due_of_next(&self) -> SimTime {
        // Inside a burst each operation follows the previous one (due at once).
        let in_burst = self.issued % self.burst() != 0;
        match (self.spec.mode, self.spec.pacing) {
            (InstallMode::Batch, _) | (InstallMode::Rate, Pacing::Schedule) => self.scheduled_due(self.issued),
            (InstallMode::Rate, Pacing::AfterCompletion) if self.issued == 0 => self.scheduled_due(0),
            (InstallMode::Rate, Pacing::AfterCompletion) if in_burst => self.last_end,
            (InstallMode::Rate, Pacing::AfterCompletion) => self.last_end + SimDuration::from_ns_f64(self.gap_ns()),
        }
    }

    /// Operations due before `end` at the asked rate ([`Installer::scheduled_due`]), at most
    /// `count`: what was asked of the installer by then. The installer never starts one
    /// before that time, so it has run at most these.
    pub fn requested_before(&self, end: SimTime) -> u64 {
        if self.scheduled_due(0) >= end {
            return 0;
        }
        if self.spec.mode == InstallMode::Batch {
            return self.total;
        }
        let burst = self.burst();
        // Bursts due before the end: estimated, then settled on the same rounding as the schedule.
        let span_ns = (end - self.scheduled_due(0)).as_ns_f64();
        let mut bursts = ((span_ns / self.gap_ns()).ceil() as u64).max(1);
        while bursts > 1 && self.scheduled_due((bursts - 1).saturating_mul(burst)) >= end {
            bursts -= 1;
        }
        while self.scheduled_due(bursts.saturating_mul(burst)) < end {
            bursts += 1;
        }
        bursts.saturating_mul(burst).min(self.total)
    }

    /// Rate mode: the operations run over the installer's cycles, from its asked start to when
    /// its next operation would have been due (or its last end, if later): each operation with
    /// its period, comparable with the asked rate (at most it). A batch: operations back to back
    /// \[rules/s\].
    pub fn achieved_rate(&self) -> f64 {
        let Some(first) = self.first_start else {
            return 0.0;
        };
        // In ns, unrounded: the schedule's due times are rounded to the picosecond, which would let
        // a few operations read a hair above the asked rate.
        let window_ns = match self.spec.mode {
            InstallMode::Batch => (self.last_end - first).as_ns_f64(),
            InstallMode::Rate => {
                let ran_ns = (self.last_end - self.scheduled_due(0)).as_ns_f64();
                let next_cycle_ns = match self.spec.pacing {
                    // The next burst's due time (a burst cut short still owns its period).
                    Pacing::Schedule => self.issued.div_ceil(self.burst()) as f64 * self.gap_ns(),
                    // Re-armed after the last return: a lower bound when the burst was cut short.
                    Pacing::AfterCompletion => ran_ns + self.gap_ns(),
                };
                ran_ns.max(next_cycle_ns)
            }
        };
        if window_ns > 0.0 {
            self.completed as f64 / (window_ns * 1e-9)
        } else {
            0.0
        }
    }

    /// Rate mode: since when the installer could not keep up at `end` — when the operation was due
    /// from which on every one started more than one period late (an operation not started by
    /// `end` counts as late) — if the operations asked for and not started by then exceed one
    /// burst; `None` when it kept up, and for a batch.
    pub fn saturated_since(&self, end: SimTime) -> Option<SimTime> {
        if self.spec.mode != InstallMode::Rate {
            return None;
        }
        let backlog = self.requested_before(end).saturating_sub(self.completed);
        (backlog > self.burst()).then(|| self.late_since.unwrap_or_else(|| self.scheduled_due(self.issued)))
    }

    /// Stretch of firmware commands by the root-table lookups of the traffic (they are
    /// serialized with them): 1 / (1 − u), u = root pps × `root_cmd_ns_per_packet`, u ≤ 0.99.
    fn fw_stretch(&self, fw_pps: f64) -> f64 {
        if !self.fw {
            return 1.0;
        }
        let u = (fw_pps * self.params.root_cmd_ns_per_packet * 1e-9).clamp(0.0, 0.99);
        1.0 / (1.0 - u)
    }

    fn insert_us(&self, tables: &Tables, fw_pps: f64) -> f64 {
        let p = &self.params;
        let per_match = if self.fw {
            match self.spec.match_type {
                // PAM'21 measured no VLAN or tunnel rules in the root table: the firmware
                // command is taken to cost what an IPv4 rule's does (a prediction, not a fit).
                MatchType::Ipv4 | MatchType::Vlan | MatchType::Tunnel => p.root_insert_ipv4_us,
                MatchType::Ipv6 => p.root_insert_ipv6_us,
            }
        } else {
            match self.spec.match_type {
                MatchType::Ipv4 => p.nonroot_insert_ipv4_us,
                MatchType::Ipv6 => p.nonroot_insert_ipv6_us,
                MatchType::Vlan => p.nonroot_insert_vlan_us,
                MatchType::Tunnel => p.nonroot_insert_tunnel_us,
            }
        };
        let overflow = if self.fw && self.spec.match_type != MatchType::Ipv6 {
            let group = self.spec.group;
            p.root_insert_overflow_us_per_entry * tables.spilled_entries(group)
                + p.root_insert_spill_us * tables.spill_chance(group)
        } else {
            0.0
        };
        (per_match + f64::from(self.spec.actions.saturating_sub(1)) * p.insert_per_extra_action_us + overflow)
            * self.fw_stretch(fw_pps)
    }

    fn delete_us(&self, fw_pps: f64) -> f64 {
        if self.fw {
            self.params.root_delete_us * self.fw_stretch(fw_pps)
        } else {
            self.params.nonroot_delete_us
        }
    }

    /// Adds one entry to the target matcher; returns the extra rehash time \[ns\].
    fn add_entry(&mut self, ctx: &mut ControlCtx<'_>, at: SimTime) -> f64 {
        if self.fw && ctx.tables.group_entries(self.spec.group) >= self.params.root_table_capacity as u64 {
            self.refused += 1;
            return 0.0;
        }
        match ctx.tables.add_entry(self.matcher) {
            Some(r) => {
                ctx.events.push((
                    at,
                    format!("matcher rehash to {} entries (group {})", r.new_buckets, r.group),
                ));
                r.new_buckets as f64 * self.params.rehash_ns_per_ste
            }
            None => 0.0,
        }
    }

    /// Picks the next rule to delete/update: classifier rules first, then counted ones.
    /// Returns (functional slot, matcher); `None` when the group has nothing left.
    fn next_target(&mut self, ctx: &mut ControlCtx<'_>, consume: bool) -> Option<(Option<usize>, MatcherId)> {
        let nf = ctx.targets.functional.len();
        let counted: u64 = ctx.targets.counted.iter().map(|c| c.1).sum();
        if nf == 0 && counted == 0 {
            return None;
        }
        let slot = self.cursor % (nf + usize::from(counted > 0));
        self.cursor += 1;
        if slot < nf {
            let m = ctx.targets.functional[slot].2;
            return Some((Some(slot), m));
        }
        let entry = ctx.targets.counted.iter_mut().find(|c| c.1 > 0)?;
        if consume {
            entry.1 -= 1;
        }
        Some((None, entry.0))
    }

    /// Runs the next operation starting no earlier than `now`; returns its end. Its cost is
    /// summed in ns (f64, from the profile's µs costs) and rounded once per timestamp.
    pub fn run_one(&mut self, now: SimTime, ctx: &mut ControlCtx<'_>) -> SimTime {
        let due = self.next_due().unwrap_or(now);
        let start = now.max(due);
        if self.spec.mode == InstallMode::Rate {
            // More than one period behind the asked rate: late (a backlog builds up).
            let scheduled = self.scheduled_due(self.issued);
            if start > scheduled + SimDuration::from_ns_f64(self.gap_ns()) {
                self.late_since.get_or_insert(scheduled);
            } else {
                self.late_since = None;
            }
        }
        let at = |cost_ns: f64| start + SimDuration::from_ns_f64(cost_ns);
        let mut cost_ns = 0.0;
        if self.issued == 0 || self.spec.mode == InstallMode::Batch && self.first_start.is_none() {
            let what = match self.spec.mode {
                InstallMode::Batch => format!("batch of {} {:?} operations starts", self.total, self.spec.op),
                InstallMode::Rate => format!(
                    "{:?} operations at {} rules/s start",
                    self.spec.op,
                    self.spec.rate_per_s.unwrap_or(0.0)
                ),
            };
            let core = match self.spec.core {
                super::request::InstallCore::Same => "same core",
                super::request::InstallCore::Distinct => "distinct core",
            };
            ctx.events.push((
                start,
                format!("{what} (group {}, {core})", self.spec.group).to_lowercase(),
            ));
        }
        if self.spec.mode == InstallMode::Batch && self.issued == 0 {
            cost_ns += self.params.install_batch_overhead_us * 1e3;
        }
        self.first_start.get_or_insert(start);
        self.issued += 1;
        let group = self.spec.group;
        match self.spec.op {
            InstallOp::Insert => {
                cost_ns += self.insert_us(ctx.tables, ctx.fw_pps) * 1e3;
                cost_ns += self.add_entry(ctx, start);
            }
            InstallOp::Delete => {
                cost_ns += self.delete_us(ctx.fw_pps) * 1e3;
                match self.next_target(ctx, true) {
                    Some((slot, m)) => {
                        ctx.tables.remove_entry(m);
                        if let Some(slot) = slot {
                            let (id, _, _) = ctx.targets.functional.remove(slot);
                            ctx.pending.push(PendingUpdate {
                                at: at(cost_ns),
                                update: Update::Delete(id),
                                insert_of: None,
                                group,
                            });
                        }
                    }
                    None => self.refused += 1,
                }
            }
            InstallOp::Update => {
                cost_ns += self.delete_us(ctx.fw_pps) * 1e3;
                let deleted_at = at(cost_ns);
                cost_ns += self.insert_us(ctx.tables, ctx.fw_pps) * 1e3;
                match self.next_target(ctx, false) {
                    Some((slot, _m)) => {
                        if let Some(slot) = slot {
                            let (id, rule, m) = ctx.targets.functional[slot].clone();
                            ctx.pending.push(PendingUpdate {
                                at: deleted_at,
                                update: Update::Delete(id),
                                insert_of: None,
                                group,
                            });
                            ctx.pending.push(PendingUpdate {
                                at: at(cost_ns),
                                update: Update::Insert(rule),
                                insert_of: Some((m, slot)),
                                group,
                            });
                            // Until the re-insert lands, the slot's id is stale: park a dead id.
                            ctx.targets.functional[slot].0 = RuleId(u64::MAX);
                        }
                    }
                    None => self.refused += 1,
                }
            }
            InstallOp::UpdateInplace => {
                cost_ns += if self.fw {
                    self.insert_us(ctx.tables, ctx.fw_pps)
                } else {
                    self.params.nonroot_update_inplace_us
                } * 1e3;
                match self.next_target(ctx, false) {
                    Some((Some(slot), _)) => {
                        let (id, rule, _) = ctx.targets.functional[slot].clone();
                        if id != RuleId(u64::MAX) {
                            ctx.pending.push(PendingUpdate {
                                at: at(cost_ns),
                                update: Update::Modify(id, rule),
                                insert_of: None,
                                group,
                            });
                        }
                    }
                    Some((None, _)) => {}
                    None => self.refused += 1,
                }
            }
        }
        let end = at(cost_ns);
        self.busy += end - start;
        self.busy_until = end;
        self.last_end = end;
        self.completed += 1;
        if self.issued == self.total && self.spec.mode == InstallMode::Batch {
            ctx.events
                .push((end, format!("batch of {} operations done (group {group})", self.total)));
        }
        end
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connectx::params::tests::test_params;
    use crate::connectx::request::InstallCore;

    fn spec(op: InstallOp, group: u32, count: u64) -> InstallSpec {
        InstallSpec {
            mode: InstallMode::Batch,
            count: Some(count),
            rate_per_s: None,
            start_ns: 1000,
            group,
            core: InstallCore::Same,
            op,
            match_type: MatchType::Ipv4,
            actions: 1,
            pacing: Pacing::default(),
            burst: 1,
        }
    }

    /// A rate-mode installer of `count` IPv4 inserts into `group`, and its tables.
    fn rate_installer(group: u32, count: u64, rate_per_s: f64, burst: u64) -> (Installer, Tables) {
        let p = test_params();
        let mut tables = Tables::new(&p);
        let mut spec = spec(InstallOp::Insert, group, count);
        spec.mode = InstallMode::Rate;
        spec.rate_per_s = Some(rate_per_s);
        spec.burst = burst;
        let inst = Installer::new(&spec, &p, &mut tables);
        (inst, tables)
    }

    /// What an operation writes besides the tables, with no traffic in the root table.
    #[derive(Default)]
    struct Side {
        targets: GroupTargets,
        pending: Vec<PendingUpdate>,
        events: Vec<(SimTime, String)>,
    }

    impl Side {
        fn ctx<'a>(&'a mut self, tables: &'a mut Tables) -> ControlCtx<'a> {
            ControlCtx {
                tables,
                targets: &mut self.targets,
                pending: &mut self.pending,
                events: &mut self.events,
                fw_pps: 0.0,
            }
        }
    }

    fn run(
        op: InstallOp,
        group: u32,
        count: u64,
        targets: &mut GroupTargets,
    ) -> (Installer, Tables, Vec<(SimTime, String)>) {
        let p = test_params();
        let mut tables = Tables::new(&p);
        let mut inst = Installer::new(&spec(op, group, count), &p, &mut tables);
        let (mut pending, mut events) = (Vec::new(), Vec::new());
        let mut t = SimTime::ZERO;
        while inst.next_due().is_some() {
            let mut ctx = ControlCtx {
                tables: &mut tables,
                targets,
                pending: &mut pending,
                events: &mut events,
                fw_pps: 0.0,
            };
            t = inst.run_one(t, &mut ctx);
        }
        (inst, tables, events)
    }

    #[test]
    fn test_root_inserts_cost_firmware_time_and_stop_at_capacity() {
        let p = test_params();
        let (inst, tables, events) = run(InstallOp::Insert, 0, 1000, &mut GroupTargets::default());
        let want_ns = p.install_batch_overhead_us * 1e3 + 1000.0 * p.root_insert_ipv4_us * 1e3;
        assert!(
            (inst.busy.as_ns_f64() - want_ns).abs() < 1.0,
            "{:?} vs {want_ns}",
            inst.busy
        );
        assert_eq!(tables.group_entries(0), 1000);
        assert!(
            events[0]
                .1
                .contains("batch of 1000 insert operations starts (group 0, same core)"),
            "{events:?}"
        );
        let (inst, tables, _) = run(InstallOp::Insert, 0, 70_000, &mut GroupTargets::default());
        assert_eq!(tables.group_entries(0), p.root_table_capacity as u64);
        assert_eq!(inst.refused, 70_000 - p.root_table_capacity as u64);
    }

    #[test]
    fn test_rate_pacing_rearms_after_completion() {
        let p = test_params();
        let (mut inst, mut tables) = rate_installer(0, 3, 1000.0, 1);
        assert_eq!(inst.next_due(), Some(SimTime::from_ns(1000)));
        let mut side = Side::default();
        let end = inst.run_one(SimTime::from_ns(1000), &mut side.ctx(&mut tables));
        assert_eq!(
            end,
            SimTime::from_ns(1000) + SimDuration::from_ns_f64(p.root_insert_ipv4_us * 1e3)
        );
        // The timer is re-armed when the insertion returns: 1 ms after its end, not after its start.
        assert_eq!(inst.next_due(), Some(end + SimDuration::from_ms(1)));
        inst.spec.pacing = Pacing::Schedule;
        assert_eq!(inst.next_due(), Some(SimTime::from_ns(1000) + SimDuration::from_ms(1)));
    }

    #[test]
    fn test_rate_bursts_run_back_to_back_and_rearm_after_the_last() {
        let (mut inst, mut tables) = rate_installer(1, 9, 3000.0, 3);
        let mut side = Side::default();
        let mut ctx = side.ctx(&mut tables);
        let mut ends = Vec::new();
        let mut t = SimTime::ZERO;
        while let Some(due) = inst.next_due() {
            let start = t.max(due);
            if ends.len() % 3 != 0 {
                assert_eq!(
                    start,
                    *ends.last().unwrap(),
                    "inside a burst: right after the previous operation"
                );
            }
            t = inst.run_one(start, &mut ctx);
            ends.push(t);
        }
        assert_eq!(ends.len(), 9);
        // A burst of 3 at 3000 ops/s: the next burst 1 ms after the last one returned (after
        // completion, as single operations 1/rate after the previous one returned).
        assert_eq!(inst.completed, 9);
        let second_start = ends[2] + SimDuration::from_ms(1);
        assert!(ends[3] > second_start && ends[3] - second_start < SimDuration::from_ms(1));
        inst.spec.pacing = Pacing::Schedule;
        inst.issued = 4;
        assert_eq!(inst.next_due(), Some(SimTime::from_ns(1000) + SimDuration::from_ms(1)));
    }

    /// Runs `inst` alone (no traffic) until its next operation is due at or after `end`.
    fn run_until(inst: &mut Installer, tables: &mut Tables, end: SimTime) {
        let mut side = Side::default();
        let mut ctx = side.ctx(tables);
        let mut t = SimTime::ZERO;
        while let Some(due) = inst.next_due().filter(|&d| d < end) {
            t = inst.run_one(t.max(due), &mut ctx);
        }
    }

    #[test]
    fn test_an_installer_that_cannot_keep_up_reports_its_backlog_and_since_when() {
        let p = test_params();
        let end = SimTime::from_ns(20_000_000);
        // Root-table inserts (root_insert_ipv4_us each, more than the 10 µs period) asked at
        // 100,000/s from 1 µs, for 20 ms: 2,000 operations due before the end (the last at 19.991 ms).
        let (mut inst, mut tables) = rate_installer(0, u64::MAX, 100_000.0, 1);
        assert_eq!(inst.requested_before(end), 2_000);
        assert_eq!(
            inst.requested_before(SimTime::from_ns(1000)),
            0,
            "nothing due before the start"
        );
        assert_eq!(inst.requested_before(SimTime::from_ns(1001)), 1);
        run_until(&mut inst, &mut tables, end);
        // Re-armed after each return: 1 / (cost + 1 / rate) is what it achieves.
        let cost_s = p.root_insert_ipv4_us * 1e-6;
        assert!(
            cost_s > 10e-6,
            "{cost_s}: the test needs operations longer than their period"
        );
        let want = 1.0 / (cost_s + 1.0 / 100_000.0);
        let achieved = inst.achieved_rate();
        assert!((achieved - want).abs() < 1e-6 * want, "{achieved} vs {want}");
        assert_eq!(inst.completed, (20e-3 / (cost_s + 10e-6)).ceil() as u64);
        // The second operation was due at 11 µs and started at 1 µs + cost + 10 µs: more than one
        // period late, and every later one more so.
        assert_eq!(inst.saturated_since(end), Some(SimTime::from_ns(11_000)));
        // Schedule pacing keeps up while operations cost less than their period on average (a
        // rehash now and then puts a few behind; the next ones run back to back and catch up).
        let (mut fast, mut tables) = rate_installer(1, u64::MAX, 100_000.0, 1);
        fast.spec.pacing = Pacing::Schedule;
        assert!(p.nonroot_insert_ipv4_us < 10.0);
        run_until(&mut fast, &mut tables, end);
        assert_eq!((fast.completed, fast.requested_before(end)), (2_000, 2_000));
        assert_eq!(fast.saturated_since(end), None);
        // 2,000 operations over 2,000 periods: the asked rate, where first start to last end (1,999
        // periods and one operation) reads above it.
        assert!(
            (fast.achieved_rate() - 100_000.0).abs() < 1e-6,
            "{}",
            fast.achieved_rate()
        );
        let back_to_back = fast.completed as f64 / (fast.last_end - fast.first_start.unwrap()).as_secs_f64();
        assert!(back_to_back > 100_000.0, "{back_to_back}");
    }

    #[test]
    fn test_bursts_are_asked_for_whole_and_a_batch_all_at_its_start() {
        // Bursts of 4 at 1,000/s (one every 4 ms) from 1 µs, asked until 10 ms: bursts at 1 µs, 4 ms
        // and 8 ms, so 12 operations; at most `count`.
        let (inst, _) = rate_installer(1, u64::MAX, 1000.0, 4);
        let end = SimTime::from_ns(10_000_000);
        assert_eq!(inst.requested_before(end), 12);
        let (inst, _) = rate_installer(1, 10, 1000.0, 4);
        assert_eq!(inst.requested_before(end), 10);
        // A batch asks for everything at its start, and has no rate to fall behind.
        let p = test_params();
        let mut tables = Tables::new(&p);
        let batch = Installer::new(&spec(InstallOp::Insert, 1, 50), &p, &mut tables);
        assert_eq!(batch.requested_before(end), 50);
        assert_eq!(batch.requested_before(SimTime::from_ns(1000)), 0);
        assert_eq!(batch.saturated_since(end), None);
    }

    #[test]
    fn test_root_commands_stretch_under_root_traffic_and_spills_cost_ipv4_only() {
        let p = test_params();
        let mut tables = Tables::new(&p);
        let mut inst = Installer::new(&spec(InstallOp::Insert, 0, 10), &p, &mut tables);
        let idle = inst.insert_us(&tables, 0.0);
        let fw_pps = 5e6;
        let u = fw_pps * p.root_cmd_ns_per_packet * 1e-9;
        assert!(u > 0.0 && u < 0.99, "{u}");
        assert!((inst.insert_us(&tables, fw_pps) - idle / (1.0 - u)).abs() < 1e-9);
        assert!((inst.delete_us(fw_pps) - p.root_delete_us / (1.0 - u)).abs() < 1e-9);
        // Saturation is capped: commands slow down 100x at most, never stop.
        assert!(inst.insert_us(&tables, 1e12) <= idle * 100.0 + 1e-9);
        // Non-root (direct rule writes) are not firmware commands.
        let fast = Installer::new(&spec(InstallOp::Insert, 1, 10), &p, &mut tables);
        assert_eq!(fast.insert_us(&tables, fw_pps), fast.insert_us(&tables, 0.0));
        // Below the knee nothing spills; above it, IPv4 pays the overflow search and the spill, IPv6 neither.
        let m = tables.matcher(0, "x", 0, true);
        tables.set_entries(m, 40_000);
        assert_eq!(tables.spill_chance(0), 0.0);
        assert_eq!(inst.insert_us(&tables, 0.0), p.root_insert_ipv4_us);
        tables.set_entries(m, p.root_table_capacity as u64);
        let (spilled, chance) = (tables.spilled_entries(0), tables.spill_chance(0));
        assert!(spilled > 0.0 && chance > 0.5 && chance < 1.0, "{spilled} {chance}");
        let v4 = inst.insert_us(&tables, 0.0);
        inst.spec.match_type = MatchType::Ipv6;
        let v6 = inst.insert_us(&tables, 0.0);
        let want =
            p.root_insert_ipv4_us + p.root_insert_overflow_us_per_entry * spilled + p.root_insert_spill_us * chance;
        assert!((v4 - want).abs() < 1e-6);
        assert_eq!(v6, p.root_insert_ipv6_us);
    }

    #[test]
    fn test_fast_inserts_rehash_and_inplace_beats_delete_insert() {
        let (inst, tables, events) = run(InstallOp::Insert, 1, 10_000, &mut GroupTargets::default());
        assert!(events.iter().any(|e| e.1.starts_with("matcher rehash")), "{events:?}");
        assert_eq!(tables.group_entries(1), 10_000);
        let fast_ns = inst.busy.as_ns_f64();
        let (root, _, _) = run(InstallOp::Insert, 0, 10_000, &mut GroupTargets::default());
        // Firmware commands vs direct rule writes: the calibrated costs (Fig. 5a/5b) make the root
        // table several times slower even with the fast table's rehashes counted.
        assert!(
            root.busy.as_ns_f64() > 5.0 * fast_ns,
            "root {:?} vs fast {}",
            root.busy,
            fast_ns
        );
        let mut targets = GroupTargets {
            functional: vec![],
            counted: vec![(0, 5_000)],
        };
        let (di, _, _) = run(InstallOp::Update, 1, 5_000, &mut targets);
        let (ip, _, _) = run(InstallOp::UpdateInplace, 1, 5_000, &mut targets);
        assert!(
            ip.busy.as_ns_f64() < di.busy.as_ns_f64() * 0.7,
            "in-place {:?} vs delete+insert {:?}",
            ip.busy,
            di.busy
        );
    }
}
