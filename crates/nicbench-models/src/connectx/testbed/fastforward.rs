//! Exact fast-forward of steady stretches: when the testbed's state, seen from the next
//! packet's send time, repeats after a whole number of bursts, the stretches after it are
//! not simulated packet by packet but added up.
//!
//! Why it is exact. The run is deterministic: from a state and the packets to come, the
//! stages do the same arithmetic whatever the absolute time, as long as no absolute time
//! enters it. Absolute times enter only through the control plane (its events and the
//! same-core installer's timer: [`Control::quiet_until`]), the warm-up, the timeline's bins
//! and the end of the source; the flows enter only when they do not all share one state
//! (`Nic::uniform`). So, at a burst boundary with every flow on one state, the stretch ahead
//! free of control work, and past the warm-up:
//! 1. *Detect*: the state relative to the next burst's first send time (a signature: every
//!    clock of the link, steering, DMA, core and TX stages, the NIC buffer's and the rings'
//!    packets, counts that steer the lazy core) is compared with the one some bursts ago;
//!    equal after P bursts: P is a candidate period, D the time it spans.
//! 2. *Confirm*: the next P bursts run normally while their input (send times, sizes) is
//!    recorded, and the totals and the latency histogram are kept from their start; at the
//!    end the signature must be equal again and nothing of the control plane have changed.
//! 3. *Skip*: the source's next bursts are drawn as usual (the generator's RNG advances by
//!    exactly its own draws: they are its draws) and compared with the confirmed period's,
//!    shifted by k·D; every whole period that matches, ends before the control plane's next
//!    work and keeps the receiver's timeline in one bin adds the confirmed period's totals
//!    once more instead of being simulated. Then every clock and queued packet is shifted by
//!    K·D, the latency histogram repeats its growth K times (its f64 sum holds whole ns, so
//!    it is an exact integer below 2^53: `LatencyHistogram::repeat_since`), the f64 sum of
//!    the steering-cache hit rate is replayed as the same adds, and the drawn bursts not
//!    covered (a partial period, a mismatch) are processed normally next.
//!
//! The NIC buffer is drained lazily by the run (only a packet that does not fit needs the
//! departures); for the signature the entries already gone by the next send time are dropped
//! first — exact for the same reason the lazy drain is (departing only frees room, and a
//! packet that does not fit computes the departures anyway).
//!
//! A test runs scenarios with the fast-forward on and off and compares the whole results.

use super::control::Control;
use super::host::{advance_core, Core, Pkt, Rx};
use super::nic::Nic;
use super::run::Counts;
use super::DRAIN;
use nicbench_sim::{Fifo, LatencyHistogram, SimDuration, SimTime};
use nicbench_traffic::PacketMeta;
use std::collections::VecDeque;

/// Longest period looked for, in bursts (the Fig. 2 scenario's is 10: the send times repeat
/// every 5 bursts of 32, the lazy core's 64-packet steps every 2).
const PERIOD_MAX_BURSTS: usize = 64;

/// Marks in a row that found no period before the fast-forward stops looking until the rules
/// change (a new classifier epoch): near saturation the NF core's busy periods drift against
/// the arrivals and the state does not repeat, and looking costs a signature per burst.
const FAILED_MARKS_MAX: u32 = 8;

/// Most bursts drawn ahead by one skip (bounds its memory; the next stretch goes on from there).
const SKIP_MAX_BURSTS: usize = 1 << 15;

/// The run's scalar state the fast-forward reads and shifts (copied out of the loop's
/// registers and back, around a boundary).
#[derive(Clone, Copy, Debug)]
pub(super) struct Clocks {
    pub(super) link_free: SimTime,
    pub(super) steer_free: SimTime,
    pub(super) last_done: SimTime,
    pub(super) pcie_free: SimTime,
    pub(super) core_synced: SimTime,
    pub(super) deferred: u32,
    pub(super) nic_queue_bytes: u64,
    pub(super) pcie_size: u32,
}

/// The parts of the testbed a boundary looks at.
pub(super) struct Parts<'a> {
    pub(super) nic: &'a mut Nic,
    pub(super) core: &'a mut Core,
    pub(super) rx: &'a mut Rx,
    pub(super) ctl: &'a mut Control,
    pub(super) nic_queue: &'a mut Fifo<(SimTime, u64)>,
    pub(super) propagation: SimDuration,
    pub(super) one_packet: SimDuration,
    pub(super) warmup_ns: u64,
}

/// What must not change across a period (absolute values, not shifted).
#[derive(Clone, Debug, PartialEq)]
struct Invariants {
    epoch: u32,
    hit_rate_bits: u64,
    fw_pps_bits: u64,
    events: usize,
    quiet: SimTime,
    rings: usize,
    paths: usize,
    flows: usize,
    uniform: (u32, u16, bool),
}

/// A boundary whose signature later boundaries are compared with.
struct Mark {
    ts_ns: u64,
    sig: Vec<u64>,
    inv: Invariants,
    /// Bursts since the mark.
    bursts: usize,
}

/// The totals a confirmed period adds.
#[derive(Clone)]
struct Totals {
    counts: Counts,
    fw_window_packets: u64,
    cpus: Vec<(SimDuration, u64)>,
    rx_packets: u64,
    rx_wire_bytes: u64,
    per_ring: Vec<u64>,
    per_ring_bytes: Vec<u64>,
}

impl Totals {
    fn of(counts: &Counts, nic: &Nic, core: &Core, rx: &Rx) -> Totals {
        Totals {
            counts: counts.clone(),
            fw_window_packets: nic.fw_window_packets,
            cpus: core.cpus.iter().map(|c| (c.busy, c.arrived)).collect(),
            rx_packets: rx.packets,
            rx_wire_bytes: rx.wire_bytes,
            per_ring: rx.per_ring.clone(),
            per_ring_bytes: rx.per_ring_bytes.clone(),
        }
    }
}

/// A period being confirmed: its start, its input as it comes, the totals and histogram then.
struct Confirm {
    mark: Mark,
    period: usize,
    /// Per burst of the period: its packets' (send time − the period's start [ns], size).
    input: Vec<Vec<(u64, u32)>>,
    totals: Totals,
    hist: LatencyHistogram,
    /// Earliest TX clock of any core at the start: every receive time in the stretch is later.
    tx_min: SimTime,
    /// The receive window's end then (no receive after it counts).
    window_end: SimTime,
}

enum Phase {
    Idle,
    Detect(Mark),
    Confirm(Box<Confirm>),
}

/// What the run does with the burst it just drew.
pub(super) enum Step {
    /// Process it as usual.
    Process,
    /// It was taken by a fast-forward (added up, or queued in [`FastForward::pending`]): draw
    /// the next burst.
    Next,
}

/// The fast-forward's state across the run.
pub(super) struct FastForward {
    on: bool,
    phase: Phase,
    /// Bursts drawn from the source but not processed yet (oldest first).
    pending: VecDeque<Vec<PacketMeta>>,
    sig: Vec<u64>,
    /// Marks in a row that found no period, and the epoch they were made in.
    failed_marks: u32,
    failed_epoch: u32,
    /// Packets whose processing was skipped (for tests and the speed figures).
    pub(super) skipped_packets: u64,
}

/// `t − reference` as a signature word (two's complement: times before the reference repeat too).
#[inline]
fn rel(t: SimTime, reference: SimTime) -> u64 {
    t.as_ps().wrapping_sub(reference.as_ps())
}

/// A clock only ever used as `max(clock, a later time)`: before the reference, its value
/// cannot matter, so it reads as the reference.
#[inline]
fn rel_floor(t: SimTime, reference: SimTime) -> u64 {
    t.max(reference).as_ps() - reference.as_ps()
}

fn shift_time(t: &mut SimTime, by: SimDuration) {
    *t += by;
}

impl FastForward {
    pub(super) fn new(on: bool) -> FastForward {
        FastForward {
            on,
            phase: Phase::Idle,
            pending: VecDeque::new(),
            sig: Vec::new(),
            failed_marks: 0,
            failed_epoch: 0,
            skipped_packets: 0,
        }
    }

    /// The next burst drawn ahead, if any, into `burst`.
    #[inline]
    pub(super) fn take_pending(&mut self, burst: &mut Vec<PacketMeta>) -> bool {
        match self.pending.pop_front() {
            Some(b) => {
                *burst = b;
                true
            }
            None => false,
        }
    }

    #[inline]
    pub(super) fn on(&self) -> bool {
        self.on
    }

    /// At a burst boundary: `burst` was just drawn (not processed), the state is the one
    /// before it. Advances the detect/confirm/skip phases; may take the burst.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn boundary(
        &mut self,
        burst: &[PacketMeta],
        clocks: &mut Clocks,
        counts: &mut Counts,
        parts: Parts<'_>,
        next_burst: &mut dyn FnMut(&mut Vec<PacketMeta>),
    ) -> Step {
        let Some(first) = burst.first() else {
            return Step::Process;
        };
        let ts_ns = first.ts_ns;
        if self.failed_marks >= FAILED_MARKS_MAX {
            if parts.nic.epoch == self.failed_epoch {
                return Step::Process;
            }
            self.failed_marks = 0;
        }
        if self.eligible(ts_ns, &parts).is_none() {
            self.phase = Phase::Idle;
            return Step::Process;
        }
        let reference = SimTime::from_ns(ts_ns);
        // The NIC buffer's entries already DMA'd by the next send time are gone, and the lazy
        // core catches up with the packets pushed so far (see the module doc): the state at a
        // boundary then no longer depends on where the lazy steps happened to fall.
        let gone: Vec<u64> = parts
            .nic_queue
            .as_slice()
            .iter()
            .take_while(|&&(t, _)| t <= reference)
            .map(|&(_, b)| b)
            .collect();
        parts.nic_queue.consume(gone.len());
        clocks.nic_queue_bytes -= gone.iter().sum::<u64>();
        // Not with a same-core installer waiting: a catch-up could run its operation before
        // this burst's control-plane events instead of after (their order matters).
        for c in 0..parts.core.cpus.len() {
            if parts.core.cpus[c].queued > 0 && parts.ctl.next_due.is_none() {
                advance_core(
                    &mut *parts.core,
                    c,
                    clocks.pcie_free,
                    &mut *parts.nic,
                    &mut *parts.ctl,
                    &mut *parts.rx,
                );
            }
        }
        if parts.ctl.next_due.is_none() {
            (clocks.deferred, clocks.core_synced) = (0, clocks.pcie_free);
        }
        let Some(inv) = self.eligible(ts_ns, &parts) else {
            self.phase = Phase::Idle;
            return Step::Process;
        };
        let phase = std::mem::replace(&mut self.phase, Phase::Idle);
        self.phase = match phase {
            Phase::Idle => self.mark(ts_ns, inv, clocks, &parts),
            Phase::Detect(m) if m.inv != inv => self.mark(ts_ns, inv, clocks, &parts),
            Phase::Detect(m) if m.bursts >= PERIOD_MAX_BURSTS => {
                self.failed_marks += 1;
                self.failed_epoch = m.inv.epoch;
                if self.failed_marks >= FAILED_MARKS_MAX {
                    return Step::Process;
                }
                self.mark(ts_ns, inv, clocks, &parts)
            }
            Phase::Detect(m) => {
                self.signature(reference, clocks, &parts);
                if m.bursts > 0 && self.sig == m.sig {
                    self.failed_marks = 0;
                    let mark = Mark {
                        ts_ns,
                        sig: self.sig.clone(),
                        inv,
                        bursts: 0,
                    };
                    let tx_min = parts.core.cpus.iter().map(|c| c.tx_free).min().unwrap_or(SimTime::ZERO);
                    Phase::Confirm(Box::new(Confirm {
                        mark,
                        period: m.bursts,
                        input: Vec::with_capacity(m.bursts),
                        totals: Totals::of(counts, parts.nic, parts.core, parts.rx),
                        hist: parts.rx.hist.clone(),
                        tx_min,
                        window_end: parts.rx.window_end,
                    }))
                } else {
                    Phase::Detect(m)
                }
            }
            Phase::Confirm(c) if c.mark.inv != inv => self.mark(ts_ns, inv, clocks, &parts),
            Phase::Confirm(c) if c.input.len() < c.period => Phase::Confirm(c),
            Phase::Confirm(c) => {
                self.signature(reference, clocks, &parts);
                // The receive window's end is an absolute time (the run's end + the drain, or a
                // backlog's): it must be past every receive of the confirmed period.
                if self.sig == c.mark.sig && ts_ns > c.mark.ts_ns && c.window_end > Self::latest(clocks, &parts) {
                    self.skip(&c, burst, clocks, counts, parts, next_burst);
                    // Whatever was skipped, the burst is taken (added up or pending): start afresh.
                    return Step::Next;
                }
                self.mark(ts_ns, inv, clocks, &parts)
            }
        };
        match &mut self.phase {
            Phase::Detect(m) => m.bursts += 1,
            Phase::Confirm(c) => {
                let start = c.mark.ts_ns;
                c.input
                    .push(burst.iter().map(|m| (m.ts_ns - start, m.frame_size_bytes)).collect());
            }
            Phase::Idle => {}
        }
        Step::Process
    }

    fn mark(&mut self, ts_ns: u64, inv: Invariants, clocks: &Clocks, parts: &Parts<'_>) -> Phase {
        self.signature(SimTime::from_ns(ts_ns), clocks, parts);
        Phase::Detect(Mark {
            ts_ns,
            sig: self.sig.clone(),
            inv,
            bursts: 0,
        })
    }

    /// The invariants now, if a stretch from here can be fast-forwarded at all: every flow on
    /// one state, the control plane quiet past this burst, the warm-up over for every packet
    /// still counted.
    fn eligible(&self, ts_ns: u64, parts: &Parts<'_>) -> Option<Invariants> {
        let fs = parts.nic.uniform()?;
        let quiet = parts.ctl.quiet_until(parts.nic);
        if quiet <= SimTime::from_ns(ts_ns) || ts_ns < parts.warmup_ns {
            return None;
        }
        let warmup = parts.rx.warmup;
        if parts
            .core
            .rings
            .iter()
            .any(|r| r.as_slice().iter().any(|p| p.gen < warmup))
        {
            return None;
        }
        Some(Invariants {
            epoch: parts.nic.epoch,
            hit_rate_bits: parts.nic.hit_rate.to_bits(),
            fw_pps_bits: parts.nic.fw_pps.to_bits(),
            events: parts.ctl.log.len(),
            quiet,
            rings: parts.core.rings.len(),
            paths: parts.nic.paths.len(),
            flows: parts.nic.flows.len(),
            uniform: (fs.path, fs.queue, fs.drop),
        })
    }

    /// The state relative to `reference` into `self.sig`.
    fn signature(&mut self, reference: SimTime, c: &Clocks, parts: &Parts<'_>) {
        let sig = &mut self.sig;
        sig.clear();
        sig.extend([
            rel(c.link_free, reference),
            rel_floor(c.steer_free, reference),
            rel_floor(c.last_done, reference),
            rel_floor(c.pcie_free, reference),
            rel(c.core_synced, reference),
            u64::from(c.deferred),
            c.nic_queue_bytes,
            u64::from(c.pcie_size),
            parts.nic_queue.len() as u64,
        ]);
        for &(t, b) in parts.nic_queue.as_slice() {
            sig.extend([rel(t, reference), b]);
        }
        for ring in &parts.core.rings {
            sig.push(ring.len() as u64);
            for p in ring.as_slice() {
                sig.extend([rel(p.gen, reference), rel(p.ready, reference), p.frame_bytes]);
            }
        }
        for cpu in &parts.core.cpus {
            sig.extend([
                rel(cpu.t, reference),
                cpu.rr as u64,
                rel(cpu.tx_free, reference),
                cpu.queued as u64,
            ]);
        }
    }

    /// The latest time the state holds: everything a period does happens by then (shifted).
    fn latest(c: &Clocks, parts: &Parts<'_>) -> SimTime {
        let mut t = (c.link_free + parts.propagation)
            .max(c.steer_free)
            .max(c.last_done)
            .max(c.pcie_free)
            .max(c.core_synced);
        for cpu in &parts.core.cpus {
            t = t.max(cpu.t).max(cpu.tx_free + parts.rx.return_time);
        }
        if let Some(&(last, _)) = parts.nic_queue.as_slice().last() {
            t = t.max(last);
        }
        t
    }

    /// The confirmed period `c` repeats from `burst` on: draws and compares bursts, adds up the
    /// periods that match, queues the rest.
    fn skip(
        &mut self,
        c: &Confirm,
        burst: &[PacketMeta],
        clocks: &mut Clocks,
        counts: &mut Counts,
        parts: Parts<'_>,
        next_burst: &mut dyn FnMut(&mut Vec<PacketMeta>),
    ) {
        let period_ns = burst[0].ts_ns - c.mark.ts_ns;
        let period = SimDuration::from_ns(period_ns);
        let latest = Self::latest(clocks, &parts);
        let quiet = c.mark.inv.quiet;
        let bin_ns = parts.rx.timeline.bin_ns();
        let bin = (c.tx_min + parts.rx.return_time).as_ns() / bin_ns;
        let flows = parts.nic.flows.len();
        let mut drawn: Vec<Vec<PacketMeta>> = vec![burst.to_vec()];
        let mut whole = 0u64;
        'periods: loop {
            let k = whole + 1;
            // Everything period k does happens by `latest + k·D`; one more period and a core
            // step of margin before the control plane's next work, and one timeline bin.
            let end = latest + period * k;
            if end + period + parts.one_packet >= quiet
                || end.as_ns() / bin_ns != bin
                || end >= parts.rx.window_end
                || drawn.len() + c.period > SKIP_MAX_BURSTS
            {
                break;
            }
            for (i, want) in c.input.iter().enumerate() {
                let at = (whole as usize) * c.period + i;
                if at >= drawn.len() {
                    let mut b = Vec::with_capacity(want.len());
                    next_burst(&mut b);
                    drawn.push(b);
                }
                let got = &drawn[at];
                let start = c.mark.ts_ns + k * period_ns;
                let same = got.len() == want.len()
                    && got.iter().zip(want).all(|(m, &(dt, size))| {
                        m.ts_ns == start + dt && m.frame_size_bytes == size && (m.flow_index as usize) < flows
                    });
                if !same {
                    break 'periods;
                }
            }
            whole = k;
        }
        let taken = if whole > 0 && parts.rx.hist.repeat_since(&c.hist, whole) {
            whole
        } else {
            0
        };
        let used = taken as usize * c.period;
        self.pending.extend(drawn.drain(used..));
        if taken == 0 {
            return;
        }
        let k = taken;
        let t0 = &c.totals;
        let n = &mut *counts;
        self.skipped_packets += (n.packets - t0.counts.packets) * k;
        let grow = |now: &mut u64, then: u64| *now += (*now - then) * k;
        let steered_per_period = n.steered - t0.counts.steered;
        grow(&mut n.packets, t0.counts.packets);
        grow(&mut n.offered_packets, t0.counts.offered_packets);
        grow(&mut n.offered_wire_bytes, t0.counts.offered_wire_bytes);
        grow(&mut n.steered, t0.counts.steered);
        grow(&mut n.sum_tables, t0.counts.sum_tables);
        grow(&mut n.dropped.imissed, t0.counts.dropped.imissed);
        grow(&mut n.dropped.nic, t0.counts.dropped.nic);
        grow(&mut n.dropped.rule, t0.counts.dropped.rule);
        let grow_d = |now: &mut SimDuration, then: SimDuration| *now += (*now - then) * k;
        grow_d(&mut n.sum_fw, t0.counts.sum_fw);
        grow_d(&mut n.sum_fast, t0.counts.sum_fast);
        grow_d(&mut n.sum_pcie, t0.counts.sum_pcie);
        // The same f64 adds, in the same order, as the skipped packets would have made.
        let hit = parts.nic.hit_rate;
        for _ in 0..steered_per_period * k {
            n.sum_hit += hit;
        }
        grow(&mut parts.nic.fw_window_packets, t0.fw_window_packets);
        for (cpu, &(busy, arrived)) in parts.core.cpus.iter_mut().zip(&t0.cpus) {
            grow_d(&mut cpu.busy, busy);
            grow(&mut cpu.arrived, arrived);
        }
        let rx = &mut *parts.rx;
        let (dp, db) = (rx.packets - t0.rx_packets, rx.wire_bytes - t0.rx_wire_bytes);
        grow(&mut rx.packets, t0.rx_packets);
        grow(&mut rx.wire_bytes, t0.rx_wire_bytes);
        for (now, &then) in rx.per_ring.iter_mut().zip(&t0.per_ring) {
            grow(now, then);
        }
        for (now, &then) in rx.per_ring_bytes.iter_mut().zip(&t0.per_ring_bytes) {
            grow(now, then);
        }
        if dp > 0 {
            // Every receive of the stretch is in the one bin checked above.
            rx.timeline.add(latest + period * k, dp * k, db * k);
        }
        // Every clock and queued packet moves on by k periods.
        let by = period * k;
        for t in [
            &mut clocks.link_free,
            &mut clocks.steer_free,
            &mut clocks.last_done,
            &mut clocks.pcie_free,
            &mut clocks.core_synced,
        ] {
            shift_time(t, by);
        }
        // As the skipped bursts would have moved it: past the link's last send by the drain.
        rx.window_end = rx.window_end.max(clocks.link_free + DRAIN);
        for (t, _) in parts.nic_queue.as_mut_slice() {
            shift_time(t, by);
        }
        for ring in &mut parts.core.rings {
            for p in ring.as_mut_slice() {
                let Pkt { gen, ready, .. } = p;
                shift_time(gen, by);
                shift_time(ready, by);
            }
        }
        for cpu in &mut parts.core.cpus {
            shift_time(&mut cpu.t, by);
            shift_time(&mut cpu.tx_free, by);
        }
    }
}
