//! The testbed's control plane on the engine's event queue: the rule installer's operations,
//! the functional updates they leave (the classifier changes when one completes), the
//! refresh of the steering costs, and the window of the root-table packet rate.
//!
//! Events run at the first packet arrival at or after their time (the steering pipeline's
//! clock): rule changes are seen by the packets that arrive after them. Updates are applied
//! and costs refreshed at most every [`APPLY_EVERY`] (batched, as the model has always done:
//! a finer grain changes nothing measurable and costs a classifier epoch per update).
//!
//! A same-core installer is not an event: its operations are work of the NF core, which
//! polls the installer's timer between bursts (as a DPDK application does in its main
//! loop) and forwards nothing while one runs ([`Control::same_core_due`]).

use super::nic::Nic;
use super::{APPLY_EVERY, RATE_WINDOW};
use crate::connectx::control::{ControlCtx, Installer};
use crate::connectx::setup::GroupTargets;
use nicbench_sim::{EventQueue, SimTime};

/// Control-plane work scheduled on the event queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ControlEvent {
    /// The distinct-core installer's next operation starts (its start time is the event's).
    InstallerOp,
    /// Pending functional updates are due: the classifier changes, flows are reclassified.
    ApplyUpdates,
    /// Matcher flow counts, the steering-cache hit rate and every path's cost are recomputed.
    RefreshCosts,
    /// The window over which the root-table packet rate is measured closes.
    RootRateWindow,
}

/// The installer (if any), on which core it runs, the event queue and what happened.
pub(super) struct Control {
    pub(super) installer: Option<Installer>,
    pub(super) same_core: bool,
    /// No operation starts at or after the end of the run.
    pub(super) end: SimTime,
    /// When the same-core installer's next operation is due (`None`: none before the end);
    /// cached because the NF core asks between every two bursts.
    pub(super) next_due: Option<SimTime>,
    pub(super) queue: EventQueue<ControlEvent>,
    apply_scheduled: bool,
    refresh_scheduled: bool,
    /// What happened, for the timeline's markers and the result's events.
    pub(super) log: Vec<(SimTime, String)>,
    empty_targets: GroupTargets,
}

impl Control {
    pub(super) fn new(installer: Option<Installer>, same_core: bool, end: SimTime) -> Control {
        let mut ctl = Control {
            installer,
            same_core,
            end,
            next_due: None,
            queue: EventQueue::new(),
            apply_scheduled: false,
            refresh_scheduled: false,
            log: Vec::new(),
            empty_targets: GroupTargets::default(),
        };
        ctl.queue
            .push(SimTime::ZERO + RATE_WINDOW, ControlEvent::RootRateWindow);
        ctl.schedule_installer(SimTime::ZERO);
        ctl
    }

    /// The installer's next operation, if any before the end: cached for a same-core
    /// installer, an event for a distinct-core one (not before `busy_until`).
    fn schedule_installer(&mut self, busy_until: SimTime) {
        let due = self
            .installer
            .as_ref()
            .and_then(Installer::next_due)
            .filter(|&d| d < self.end);
        if self.same_core {
            self.next_due = due;
        } else if let Some(due) = due {
            self.queue.push(due.max(busy_until), ControlEvent::InstallerOp);
        }
    }

    /// When the same-core installer's next operation is due, if at or before `limit`.
    #[inline]
    pub(super) fn same_core_due(&self, limit: SimTime) -> Option<SimTime> {
        self.next_due.filter(|&d| d <= limit)
    }

    /// Runs one installer operation from `start`; returns its end.
    fn run_installer(&mut self, start: SimTime, nic: &mut Nic) -> SimTime {
        let Some(inst) = self.installer.as_mut() else {
            return start;
        };
        let group = inst.spec().group;
        let targets = nic.inst.targets.get_mut(&group).unwrap_or(&mut self.empty_targets);
        let mut ctx = ControlCtx {
            tables: &mut nic.inst.tables,
            targets,
            pending: &mut nic.pending,
            events: &mut self.log,
            fw_pps: nic.fw_pps,
        };
        let end = inst.run_one(start, &mut ctx);
        nic.timing_dirty = true;
        nic.probe_cache.clear();
        end
    }

    /// The same-core installer's operation due at `start` (the NF core calls it).
    pub(super) fn run_same_core(&mut self, start: SimTime, nic: &mut Nic) -> SimTime {
        let end = self.run_installer(start, nic);
        self.schedule_installer(end);
        end
    }

    /// Runs every event due at or before `now` (a packet arrival), in time order, scheduling
    /// the functional updates and cost refreshes the NIC needs on the way.
    pub(super) fn process_due(&mut self, now: SimTime, nic: &mut Nic) {
        loop {
            self.schedule_nic_work(now, nic);
            let Some((at, event)) = self.queue.pop_due(now) else {
                return;
            };
            match event {
                ControlEvent::InstallerOp => {
                    let end = self.run_installer(at, nic);
                    self.schedule_installer(end);
                }
                ControlEvent::ApplyUpdates => {
                    self.apply_scheduled = false;
                    nic.apply_due(now);
                }
                ControlEvent::RefreshCosts => {
                    self.refresh_scheduled = false;
                    nic.refresh(now);
                }
                ControlEvent::RootRateWindow => {
                    nic.close_rate_window(now);
                    self.queue.push(now + RATE_WINDOW, ControlEvent::RootRateWindow);
                }
            }
        }
    }

    /// Functional updates are applied when the first is due, at most every [`APPLY_EVERY`];
    /// costs are refreshed when something changed, at most as often.
    fn schedule_nic_work(&mut self, now: SimTime, nic: &Nic) {
        if !self.apply_scheduled {
            if let Some(first) = nic.pending.first() {
                let at = nic.last_apply.map_or(first.at, |t| first.at.max(t + APPLY_EVERY));
                self.queue.push(at, ControlEvent::ApplyUpdates);
                self.apply_scheduled = true;
            }
        }
        if nic.timing_dirty && !self.refresh_scheduled {
            self.queue
                .push(now.max(nic.last_refresh + APPLY_EVERY), ControlEvent::RefreshCosts);
            self.refresh_scheduled = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::build::tests::testbed;
    use super::*;
    use crate::connectx::control::PendingUpdate;
    use nicbench_classify::{RuleId, Update};
    use nicbench_sim::SimDuration;
    use serde_json::json;

    fn ms(x: f64) -> SimTime {
        SimTime::from_ns_f64(x * 1e6)
    }

    fn pending(at: SimTime) -> PendingUpdate {
        // A delete of an id no rule has: refused by the classifier, but applied as a batch.
        PendingUpdate {
            at,
            update: Update::Delete(RuleId(u64::MAX - 1)),
            insert_of: None,
            group: 1,
        }
    }

    #[test]
    fn test_updates_apply_when_due_at_most_every_apply_every() {
        let mut tb = testbed(json!({}));
        let epoch = tb.nic.epoch;
        tb.nic.pending.push(pending(ms(2.5)));
        tb.ctl.process_due(ms(2.0), &mut tb.nic);
        assert_eq!((tb.nic.epoch, tb.nic.pending.len()), (epoch, 1), "not due yet");
        tb.ctl.process_due(ms(2.6), &mut tb.nic);
        assert_eq!(
            (tb.nic.epoch, tb.nic.last_apply),
            (epoch + 1, Some(ms(2.6))),
            "applied at the first arrival after"
        );
        tb.nic.pending.push(pending(ms(2.7)));
        tb.ctl.process_due(ms(3.0), &mut tb.nic);
        assert_eq!(
            tb.nic.epoch,
            epoch + 1,
            "due, but the last batch was less than APPLY_EVERY ago"
        );
        tb.ctl.process_due(ms(2.6) + APPLY_EVERY, &mut tb.nic);
        assert_eq!((tb.nic.epoch, tb.nic.pending.len()), (epoch + 2, 0));
    }

    #[test]
    fn test_root_rate_window_measures_packets_per_second() {
        let mut tb = testbed(json!({}));
        tb.nic.fw_window_packets = 2_000;
        tb.ctl.process_due(ms(0.5), &mut tb.nic);
        assert_eq!(tb.nic.fw_pps, 0.0, "the window is still open");
        tb.ctl.process_due(ms(1.0), &mut tb.nic);
        assert_eq!(
            (tb.nic.fw_pps, tb.nic.fw_window_packets),
            (2e6, 0),
            "2,000 packets in 1 ms"
        );
        assert_eq!(tb.ctl.queue.peek_time(), Some(ms(1.0) + RATE_WINDOW), "the next window");
    }

    #[test]
    fn test_distinct_core_operations_run_at_their_own_times() {
        let mut tb = testbed(
            json!({"install": {"mode": "batch", "count": 3, "start_ns": 1_000_000, "group": 1, "core": "distinct"}}),
        );
        tb.ctl.process_due(ms(0.5), &mut tb.nic);
        assert_eq!(tb.ctl.installer.as_ref().map(|i| i.completed), Some(0));
        tb.ctl.process_due(ms(10.0), &mut tb.nic);
        let inst = tb.ctl.installer.as_ref().expect("installer");
        assert_eq!(
            (inst.completed, inst.first_start),
            (3, Some(ms(1.0))),
            "started at its due time, not at the arrival"
        );
        assert_eq!(inst.last_end - ms(1.0), inst.busy, "back to back");
        assert!(
            tb.ctl
                .log
                .iter()
                .any(|(t, what)| *t == ms(1.0) && what.contains("batch of 3")),
            "{:?}",
            tb.ctl.log
        );
    }

    #[test]
    fn test_same_core_operations_are_the_cores_work_not_events() {
        let mut tb = testbed(
            json!({"install": {"mode": "rate", "rate_per_s": 1e5, "start_ns": 200_000, "group": 1, "core": "same"}}),
        );
        assert_eq!(tb.ctl.queue.len(), 1, "only the rate window's timer");
        assert_eq!(tb.ctl.same_core_due(SimTime::MAX), Some(SimTime::from_ns(200_000)));
        let end = tb.ctl.run_same_core(SimTime::from_ns(200_000), &mut tb.nic);
        // Re-armed when the operation returns: 10 µs after its end (PAM'21's installer).
        assert_eq!(tb.ctl.same_core_due(SimTime::MAX), Some(end + SimDuration::from_us(10)));
        assert_eq!(tb.ctl.queue.len(), 1);
    }
}
