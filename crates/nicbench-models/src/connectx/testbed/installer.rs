//! The rule installer's schedule on the testbed: when its next operation is due, and running
//! one operation against the NIC's tables and pending functional updates.

use super::nic::Nic;
use crate::connectx::control::{ControlCtx, Installer};
use crate::connectx::setup::GroupTargets;

/// The installer (if any), on which core it runs, and what it logged.
pub(super) struct Control {
    pub(super) installer: Option<Installer>,
    pub(super) same_core: bool,
    pub(super) end_ns: f64,
    /// When the installer's next operation is due (∞: none before the end of the run);
    /// cached because the NF core asks between every two bursts, and only
    /// [`Control::run_one`] changes it.
    pub(super) next_due_ns: f64,
    pub(super) events: Vec<(f64, String)>,
    pub(super) empty_targets: GroupTargets,
}

impl Control {
    pub(super) fn new(installer: Option<Installer>, same_core: bool, end_ns: f64) -> Control {
        let mut ctl =
            Control { installer, same_core, end_ns, next_due_ns: f64::INFINITY, events: Vec::new(), empty_targets: GroupTargets::default() };
        ctl.update_due();
        ctl
    }

    pub(super) fn update_due(&mut self) {
        let due = self.installer.as_ref().and_then(|i| i.next_due_ns());
        self.next_due_ns = due.filter(|&d| d < self.end_ns).unwrap_or(f64::INFINITY);
    }

    #[inline]
    pub(super) fn due(&self, limit_ns: f64) -> Option<f64> {
        (self.next_due_ns <= limit_ns && self.next_due_ns.is_finite()).then_some(self.next_due_ns)
    }

    pub(super) fn run_one(&mut self, now_ns: f64, nic: &mut Nic) -> f64 {
        let Some(inst) = self.installer.as_mut() else { return now_ns };
        let group = inst.spec().group;
        let targets = nic.inst.targets.get_mut(&group).unwrap_or(&mut self.empty_targets);
        let mut ctx = ControlCtx {
            tables: &mut nic.inst.tables,
            targets,
            pending: &mut nic.pending,
            events: &mut self.events,
            fw_pps: nic.fw_pps,
        };
        let end = inst.run_one(now_ns, &mut ctx);
        nic.timing_dirty = true;
        nic.probe_cache.clear();
        self.update_due();
        end
    }
}

