//! The PAM'21 testbed as a simulation: generator → link → DUT NIC (steering pipeline,
//! PCIe DMA, RX rings) → single-core poll-mode NF (+ optional rule installer) → TX →
//! link → generator RX, which timestamps and counts per queue.
//!
//! Packets are processed in arrival order with per-packet arithmetic on timestamps
//! (Lindley recursions for the FIFO stages, no per-packet events): the steering engine
//! is a FIFO server with a finite packet buffer (overflow → `dropped.nic`), DMA is a
//! FIFO server at the PCIe rate, and a packet finding its RX ring full is `imissed`.
//! The NF core takes up to `rx_burst_packets` from a ring per poll, paying per-burst
//! and per-packet time; a same-core installer runs its operations between bursts, so
//! the rings fill while it works. Control-plane changes reach the classifier (and so
//! the per-flow cache, via an epoch) at most every [`APPLY_EVERY_NS`], and the steering
//! costs are recomputed at most as often.
//!
//! Speed (burst-level processing, per-packet accounting): the generator hands over
//! bursts of up to `RX_BURST_MAX` packets spanning at most `BURST_SPAN_NS`; each
//! stage runs over the whole burst, and the control-plane / bookkeeping checks run once
//! per burst at its first arrival. The NF core is advanced lazily (every
//! `CORE_DEFER_PACKETS` packets, `CORE_DEFER_NS`, or when a ring looks full) — exact,
//! because advancing the core only removes packets from rings, so a ring below its size
//! cannot overflow before the core catches up, and a burst only takes packets whose DMA
//! completed by its start. Flow classification is cached per flow (invalidated by epoch).

use super::control::{ControlCtx, Installer, PendingUpdate};
use crate::error::ModelError;
use super::params::ConnectxParams;
use crate::profile::Profile;
use super::result::{Dropped, Event, InstallResult, ModelSummary, SimResult, SimStats};
use super::scenario::{InstallCore, Scenario};
use super::setup::{install, Flows, GroupTargets, Installed};
use super::steering::{MatcherId, PathCost};
use super::traffic::Source;
use ahash::AHashMap;
use nicbench_classify::{Batch, Fate, PacketKey, Update, Verdict};
use nicbench_sim::{Fifo, LatencyHistogram, SimDuration, SimTime, Timeline};
use nicbench_traffic::PacketMeta;
use std::collections::BTreeMap;

/// Granularity of functional updates and steering-cost refreshes \[ns\].
pub const APPLY_EVERY_NS: f64 = 1_000_000.0;
/// Packets still in flight this long after the end of the run are counted \[ns\].
const DRAIN_NS: f64 = 10_000_000.0;
/// Progress is reported every this much simulated time \[ns\].
const PROGRESS_EVERY_NS: u64 = 10_000_000;
/// The NF core is advanced at least every this many packets pushed to its rings …
const CORE_DEFER_PACKETS: u32 = 64;
/// … and at least every this much simulated time \[ns\] (or when a ring looks full).
const CORE_DEFER_NS: f64 = 20_000.0;
/// Window over which the root-table packet rate (firmware command contention) is measured \[ns\].
const FW_RATE_WINDOW_NS: f64 = 1_000_000.0;
/// Packets the generator hands over at once (a DPDK tx burst) …
const RX_BURST_MAX: usize = 32;
/// … unless they span more simulated time than this \[ns\].
const BURST_SPAN_NS: u64 = 10_000;
const UNKNOWN: u32 = u32::MAX;

/// `a.max(b)` for the simulator's times, which are never NaN: one `maxsd` instead of
/// `f64::max`'s NaN handling (the same value for every non-NaN pair).
#[inline(always)]
fn max_ns(a: f64, b: f64) -> f64 {
    if a > b {
        a
    } else {
        b
    }
}

type Hops = Vec<(u32, Vec<MatcherId>)>;

struct Path {
    hops: Hops,
    flows: u64,
    cost: PathCost,
}

#[derive(Clone, Copy, PartialEq, Eq)]
struct FlowState {
    epoch: u32,
    path: u32,
    queue: u16,
    drop: bool,
}

/// The path cost as the per-packet steering stage uses it (derived values precomputed:
/// the same f64 results as computing them per packet).
#[derive(Clone, Copy, Default)]
struct SteerCost {
    fw_ns: f64,
    /// `service_ns - fw_ns`: fast-table time.
    fast_ns: f64,
    service_ns: f64,
    /// `latency_ns.max(service_ns)`.
    latency_ns: f64,
    tables: u32,
}

impl SteerCost {
    #[inline]
    fn of(c: &PathCost) -> SteerCost {
        SteerCost {
            fw_ns: c.fw_ns,
            fast_ns: c.service_ns - c.fw_ns,
            service_ns: c.service_ns,
            latency_ns: c.latency_ns.max(c.service_ns),
            tables: c.tables,
        }
    }
}

/// The most bytes the NIC buffer holds as an integer: `bytes as f64 > buffer_bytes` ⟺
/// `bytes > buffer_fit_bytes(buffer_bytes)` for every byte count below 2^53 (the float
/// comparison per packet needed a u64 → f64 conversion). A negative size holds nothing
/// (packets have ≥ 1 byte), NaN everything (as the float comparison did).
fn buffer_fit_bytes(buffer_bytes: f64) -> u64 {
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
fn state_without_epoch(path: u32, queue: u16, drop: bool) -> FlowState {
    FlowState { epoch: 0, path, queue, drop }
}

/// A packet in an RX ring. No padding (`frame_bytes` is a u64): copying a padded struct
/// reloads stored halves with wider loads, which stalls store forwarding on the hot path.
#[derive(Clone, Copy)]
struct Pkt {
    gen_ns: u64,
    ready_ns: f64,
    frame_bytes: u64,
}

/// The functional + timing state of the DUT NIC.
struct Nic {
    inst: Installed,
    reader: nicbench_classify::Reader,
    keys: Vec<PacketKey>,
    flows: Vec<FlowState>,
    paths: Vec<Path>,
    path_ids: AHashMap<Hops, u32>,
    probe_cache: AHashMap<u32, Vec<MatcherId>>,
    epoch: u32,
    /// Flows classified at the current epoch, the first such state, and whether a later
    /// one differed from it (path, queue or drop): when every flow is classified and none
    /// differed, the flow of a packet does not matter ([`Nic::uniform`]).
    fresh_flows: usize,
    first_fresh: FlowState,
    mixed: bool,
    hit_rate: f64,
    timing_dirty: bool,
    last_refresh_ns: f64,
    pending: Vec<PendingUpdate>,
    last_apply_ns: f64,
    /// Packets through the firmware-managed root table: rate of the last window [packets/s],
    /// count and start of the current window.
    fw_pps: f64,
    fw_window_packets: u64,
    fw_window_start_ns: f64,
}

impl Nic {
    fn classify(&mut self, flow: usize) -> FlowState {
        let Some(key) = self.keys.get(flow) else {
            return FlowState { epoch: self.epoch, path: 0, queue: 0, drop: false };
        };
        let (hops, outcome) = self.reader.trace(key);
        let mut path: Hops = Vec::with_capacity(hops.len());
        for hop in &hops {
            let order = self.probe_cache.entry(hop.group).or_insert_with(|| self.inst.tables.probe_order(hop.group));
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
        let (queue, drop) = match outcome.verdict {
            Verdict::Fate(Fate::Queue { index }) => (index, false),
            Verdict::Fate(Fate::Drop) => (0, true),
            _ => (0, false),
        };
        let next = self.paths.len() as u32;
        let id = *self.path_ids.entry(path.clone()).or_insert(next);
        if id == next {
            self.paths.push(Path { hops: path, flows: 0, cost: PathCost::default() });
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
        let state = FlowState { epoch: self.epoch, path: id, queue, drop };
        self.flows[flow] = state;
        state
    }

    /// Makes room for flows a streamed trace discovered since (their keys: `keys`).
    #[cold]
    fn add_flows(&mut self, keys: &[PacketKey]) {
        if let Some(new) = keys.get(self.keys.len()..) {
            self.keys.extend_from_slice(new);
            self.flows.resize(self.keys.len(), FlowState { epoch: UNKNOWN, path: UNKNOWN, queue: 0, drop: false });
        }
    }

    /// The state every flow has, if all are classified at the current epoch alike.
    #[inline]
    fn uniform(&self) -> Option<FlowState> {
        (!self.mixed && self.fresh_flows == self.flows.len() && self.fresh_flows > 0)
            .then_some(FlowState { epoch: self.epoch, ..self.first_fresh })
    }

    #[inline]
    fn flow(&mut self, flow: usize) -> FlowState {
        match self.flows.get(flow) {
            Some(s) if s.epoch == self.epoch => *s,
            Some(_) => self.classify(flow),
            None => FlowState { epoch: self.epoch, path: 0, queue: 0, drop: false },
        }
    }

    /// Recomputes matcher flow counts, the cache hit rate and every path's cost.
    fn refresh(&mut self, now_ns: f64) {
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
        let rates = tables.cache_hit_rates();
        for p in self.paths.iter_mut() {
            p.cost = tables.path_cost(&p.hops, &rates);
        }
        self.timing_dirty = false;
        self.last_refresh_ns = now_ns;
    }

    /// Applies the functional updates due by `now_ns` (at most every APPLY_EVERY_NS).
    fn apply_due(&mut self, now_ns: f64, force: bool) {
        if self.pending.is_empty() || !force && now_ns < self.last_apply_ns + APPLY_EVERY_NS {
            return;
        }
        let due = self.pending.iter().take_while(|u| u.at_ns <= now_ns).count();
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
                    if let Some(t) = self.inst.targets.get_mut(&group).and_then(|t| t.functional.get_mut(slot)) {
                        t.0 = id;
                    }
                }
            }
        }
        self.epoch = self.epoch.wrapping_add(1);
        self.fresh_flows = 0;
        self.mixed = false;
        self.probe_cache.clear();
        self.last_apply_ns = now_ns;
        self.timing_dirty = true;
    }
}

/// The poll-mode NF core and its rings.
struct Core {
    t_ns: f64,
    /// Packets waiting per ring, in DMA order (ready times non-decreasing).
    rings: Vec<Fifo<Pkt>>,
    /// Ring index + 1 per queue id (0: no ring yet); a flat table, looked up per packet.
    ring_of_queue: Vec<u32>,
    queue_of_ring: Vec<u16>,
    rr: usize,
    burst: usize,
    tx_free_ns: f64,
    busy_ns: f64,
    /// Packets in all rings.
    queued: usize,
}

/// Measurement at the generator's receiver.
struct Rx {
    warmup_ns: u64,
    window_end_ns: f64,
    return_ns: f64,
    wire_ns_per_byte: f64,
    packets: u64,
    wire_bytes: u64,
    hist: LatencyHistogram,
    timeline: Timeline,
    /// Received packets per ring (ring → queue id in `Core::queue_of_ring`).
    per_ring: Vec<u64>,
    latency: bool,
}

impl Core {
    #[inline]
    fn ring(&mut self, queue: u16, rx: &mut Rx) -> usize {
        let slot = self.ring_of_queue[usize::from(queue)];
        if slot > 0 {
            return slot as usize - 1;
        }
        self.rings.push(Fifo::with_capacity(64));
        self.queue_of_ring.push(queue);
        rx.per_ring.push(0);
        let r = self.rings.len() - 1;
        self.ring_of_queue[usize::from(queue)] = r as u32 + 1;
        r
    }
}

/// Forwards a burst of `ring_index` ending at `t_ns` towards the generator: TX
/// serialization, return link, timestamps and counters at the receiver.
#[inline]
fn transmit(burst: &[Pkt], t_ns: f64, tx_free_ns: &mut f64, ring_index: usize, rx: &mut Rx) {
    let (mut burst_packets, mut burst_bytes, mut last_rx_ns) = (0u64, 0u64, 0.0f64);
    let (warmup_ns, window_end_ns, return_ns, wire_ns_per_byte) =
        (rx.warmup_ns, rx.window_end_ns, rx.return_ns, rx.wire_ns_per_byte);
    let mut tx_free = *tx_free_ns;
    let mut hist = rx.latency.then(|| rx.hist.recorder());
    for p in burst {
        let wire_bytes = p.frame_bytes + 20;
        tx_free = max_ns(tx_free, t_ns) + wire_bytes as i64 as f64 * wire_ns_per_byte;
        let rx_ns = tx_free + return_ns;
        if p.gen_ns < warmup_ns || rx_ns > window_end_ns {
            continue;
        }
        if let Some(h) = hist.as_mut() {
            // Via i64: the native conversion (simulated times stay far below 2^63 ns).
            h.record_f64_ns(rx_ns - p.gen_ns as i64 as f64);
        }
        burst_packets += 1;
        burst_bytes += wire_bytes;
        last_rx_ns = rx_ns;
    }
    drop(hist);
    *tx_free_ns = tx_free;
    if burst_packets > 0 {
        rx.packets += burst_packets;
        rx.wire_bytes += burst_bytes;
        // One timeline update per burst: a burst spans ~µs, bins are ms.
        rx.timeline.add(SimTime(last_rx_ns as u64), burst_packets, burst_bytes);
        rx.per_ring[ring_index] += burst_packets;
    }
}

struct Control {
    installer: Option<Installer>,
    same_core: bool,
    end_ns: f64,
    /// When the installer's next operation is due (∞: none before the end of the run);
    /// cached because the NF core asks between every two bursts, and only
    /// [`Control::run_one`] changes it.
    next_due_ns: f64,
    events: Vec<(f64, String)>,
    empty_targets: GroupTargets,
}

impl Control {
    fn new(installer: Option<Installer>, same_core: bool, end_ns: f64) -> Control {
        let mut ctl =
            Control { installer, same_core, end_ns, next_due_ns: f64::INFINITY, events: Vec::new(), empty_targets: GroupTargets::default() };
        ctl.update_due();
        ctl
    }

    fn update_due(&mut self) {
        let due = self.installer.as_ref().and_then(|i| i.next_due_ns());
        self.next_due_ns = due.filter(|&d| d < self.end_ns).unwrap_or(f64::INFINITY);
    }

    #[inline]
    fn due(&self, limit_ns: f64) -> Option<f64> {
        (self.next_due_ns <= limit_ns).then_some(self.next_due_ns)
    }

    fn run_one(&mut self, now_ns: f64, nic: &mut Nic) -> f64 {
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

/// The first ring (round robin from `core.rr`) whose head is ready at `core.t_ns`, else
/// the earliest head's ready time (∞ when every ring is empty).
#[inline]
fn ready_ring(core: &Core) -> Result<usize, f64> {
    let n = core.rings.len();
    if n == 1 {
        // The common case (one queue): no round robin.
        return match core.rings[0].front() {
            Some(h) if h.ready_ns <= core.t_ns => Ok(0),
            Some(h) => Err(h.ready_ns),
            None => Err(f64::INFINITY),
        };
    }
    let mut next_ready = f64::INFINITY;
    let mut q = if core.rr >= n { 0 } else { core.rr };
    for _ in 0..n {
        if let Some(h) = core.rings[q].front() {
            if h.ready_ns <= core.t_ns {
                return Ok(q);
            }
            next_ready = next_ready.min(h.ready_ns);
        }
        q += 1;
        if q == n {
            q = 0;
        }
    }
    Err(next_ready)
}

fn advance_core(core: &mut Core, until_ns: f64, nic: &mut Nic, ctl: &mut Control, rx: &mut Rx, p: &ConnectxParams) {
    loop {
        if ctl.same_core && core.t_ns < ctl.end_ns {
            if let Some(due) = ctl.due(core.t_ns) {
                let start = core.t_ns.max(due);
                let end = ctl.run_one(start, nic);
                core.busy_ns += end - start;
                core.t_ns = end;
                continue;
            }
        }
        if core.t_ns >= until_ns {
            return;
        }
        match ready_ring(core) {
            Ok(q) => {
                // Ready times in a ring are non-decreasing (DMA completes in order), and
                // the head is ready: the poll takes the ready prefix, up to a burst.
                let pending = core.rings[q].as_slice();
                let window = &pending[..core.burst.min(pending.len())];
                let t_ns = core.t_ns;
                // Mostly one packet per poll when the core keeps up: check the second first.
                let n = if window.get(1).is_none_or(|h| h.ready_ns > t_ns) {
                    1
                } else {
                    window.iter().position(|h| h.ready_ns > t_ns).unwrap_or(window.len())
                };
                let cost = p.nf_burst_ns + n as f64 * p.nf_packet_ns;
                core.t_ns += cost;
                core.busy_ns += cost;
                core.rr = q + 1;
                core.queued -= n;
                transmit(&window[..n], core.t_ns, &mut core.tx_free_ns, q, rx);
                core.rings[q].consume(n);
            }
            Err(next_ready) => {
                let mut next = until_ns.min(next_ready);
                if ctl.same_core {
                    if let Some(due) = ctl.due(f64::INFINITY) {
                        next = next.min(due);
                    }
                }
                if next <= core.t_ns {
                    return;
                }
                core.t_ns = next;
            }
        }
    }
}

/// Runs one scenario on one profile.
pub fn simulate(scn: &Scenario, profile: &Profile, progress: &mut dyn FnMut(u64)) -> Result<SimResult, ModelError> {
    let wall = std::time::Instant::now();
    scn.validate()?;
    let p: ConnectxParams = profile.params()?;
    let mut source = Source::new(scn)?;
    let flows = Flows { keys: source.keys().to_vec(), flow_keys: source.flow_keys().to_vec() };
    let inst = install(scn.rules.as_ref(), &flows, &p)?;
    let rules_refused = inst.refused;
    let n_flows = flows.keys.len();
    let reader = inst.classifier.reader();
    let mut nic = Nic {
        inst,
        reader,
        keys: flows.keys,
        flows: vec![FlowState { epoch: UNKNOWN, path: UNKNOWN, queue: 0, drop: false }; n_flows],
        paths: Vec::new(),
        path_ids: AHashMap::new(),
        probe_cache: AHashMap::new(),
        epoch: 0,
        fresh_flows: 0,
        first_fresh: state_without_epoch(0, 0, false),
        mixed: false,
        hit_rate: 1.0,
        timing_dirty: true,
        last_refresh_ns: 0.0,
        pending: Vec::new(),
        last_apply_ns: f64::NEG_INFINITY,
        fw_pps: 0.0,
        fw_window_packets: 0,
        fw_window_start_ns: 0.0,
    };
    let end_ns = scn.duration_ns as f64;
    let mut ctl = Control::new(
        scn.install.as_ref().map(|s| Installer::new(s, &p, &mut nic.inst.tables)),
        scn.install.as_ref().is_some_and(|s| s.core == InstallCore::Same),
        end_ns,
    );
    for f in 0..n_flows {
        nic.classify(f);
    }
    nic.refresh(0.0);
    let wire_ns_per_byte = 8.0 / p.link_gbps;
    let mut rx = Rx {
        warmup_ns: scn.warmup_ns,
        window_end_ns: end_ns + DRAIN_NS,
        return_ns: p.link_propagation_ns + p.fixed_latency_ns,
        wire_ns_per_byte,
        packets: 0,
        wire_bytes: 0,
        hist: LatencyHistogram::new(),
        timeline: Timeline::new(SimDuration(scn.measure.timeline_bin_ns)),
        per_ring: Vec::new(),
        latency: scn.measure.latency,
    };
    let mut core = Core {
        t_ns: 0.0,
        rings: Vec::new(),
        ring_of_queue: vec![0; 1 << 16],
        queue_of_ring: Vec::new(),
        rr: 0,
        burst: p.rx_burst_packets.max(1.0) as usize,
        tx_free_ns: 0.0,
        busy_ns: 0.0,
        queued: 0,
    };
    let nf_one_packet_ns = p.nf_burst_ns + 1.0 * p.nf_packet_ns;
    let ring_size = p.rx_ring_descriptors.max(1.0) as usize;
    let buffer_fit_bytes = buffer_fit_bytes(p.nic_buffer_bytes);
    let pcie_ns_per_byte = 8.0 / p.pcie_gbps();
    let mut dropped = Dropped::default();
    // Packets in the NIC buffer: (DMA done, bytes), in DMA order.
    let mut nic_queue: Fifo<(f64, u64)> = Fifo::with_capacity(1024);
    let mut nic_queue_bytes = 0u64;
    let (mut link_free, mut steer_free, mut last_done, mut pcie_free) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    let (mut offered_packets, mut offered_wire_bytes, mut packets, mut steered) = (0u64, 0u64, 0u64, 0u64);
    // Tables traversed summed as an integer: the f64 sum of these small integers would be exact too.
    let mut sum_tables = 0u64;
    let (mut sum_hit, mut sum_fw_ns, mut sum_fast_ns, mut sum_pcie_ns) = (0.0, 0.0, 0.0, 0.0);
    let mut next_progress = PROGRESS_EVERY_NS;
    let (mut pcie_size, mut pcie_ns_cached) = (0u32, 0.0f64);
    // Packets pushed to the rings since the core last advanced, and when that was: the
    // core is advanced lazily (exact: advancing only pops, so a ring below its size cannot
    // overflow before the core catches up; bursts see the same ready times).
    let (mut deferred, mut core_synced_ns) = (0u32, 0.0f64);
    // Next arrival at which a distinct-core installer operation can start.
    let mut ctl_next_ns = if ctl.same_core { f64::INFINITY } else { ctl.due(f64::INFINITY).unwrap_or(f64::INFINITY) };
    let mut burst: Vec<PacketMeta> = Vec::with_capacity(RX_BURST_MAX);
    let stale = FlowState { epoch: UNKNOWN, path: UNKNOWN, queue: 0, drop: false };
    let mut arrivals = [0.0f64; RX_BURST_MAX];
    let mut states = [stale; RX_BURST_MAX];
    loop {
        // Stage 0: the generator's next burst (bounded in simulated time, so control-plane
        // and bookkeeping checks done once per burst stay fine-grained at low rates).
        source.next_burst(RX_BURST_MAX, BURST_SPAN_NS, &mut burst);
        let Some(first_gen_ns) = burst.first().map(|m| m.ts_ns) else { break };
        packets += burst.len() as u64;
        if first_gen_ns >= next_progress {
            progress(first_gen_ns);
            next_progress = first_gen_ns + PROGRESS_EVERY_NS;
        }
        // Stage 1: the link (serialization at line rate, then propagation).
        let n_burst = burst.len().min(RX_BURST_MAX);
        let burst = &burst[..n_burst];
        for (m, arrival) in burst.iter().zip(arrivals.iter_mut()) {
            let wire_bytes = u64::from(m.frame_size_bytes) + 20;
            if m.ts_ns >= scn.warmup_ns {
                offered_packets += 1;
                offered_wire_bytes += wire_bytes;
            }
            link_free = max_ns(link_free, m.ts_ns as i64 as f64) + wire_bytes as i64 as f64 * wire_ns_per_byte;
            *arrival = link_free + p.link_propagation_ns;
        }
        // Once per burst, at its first arrival: control plane on its own core, the
        // root-table packet rate, functional/timing updates due by now.
        let arrive0 = arrivals[0];
        if arrive0 >= ctl_next_ns {
            ctl_next_ns = f64::INFINITY;
            while let Some(due) = ctl.due(f64::INFINITY) {
                let start = due.max(ctl.installer.as_ref().map_or(0.0, |i| i.busy_until_ns));
                if start > arrive0 {
                    ctl_next_ns = start;
                    break;
                }
                ctl.run_one(start, &mut nic);
            }
        }
        if arrive0 >= nic.fw_window_start_ns + FW_RATE_WINDOW_NS {
            nic.fw_pps = nic.fw_window_packets as f64 * 1e9 / (arrive0 - nic.fw_window_start_ns);
            nic.fw_window_packets = 0;
            nic.fw_window_start_ns = arrive0;
        }
        nic.apply_due(arrive0, false);
        if nic.timing_dirty && arrive0 >= nic.last_refresh_ns + APPLY_EVERY_NS {
            nic.refresh(arrive0);
        }
        // Stage 2: per packet, steering (functional verdict + timing), NIC buffer, DMA, RX
        // ring. `steer!` is one packet's path from the NIC buffer on, given its flow's
        // state and path cost; a macro so that the two loops below share it verbatim.
        macro_rules! steer {
            ($gen_ns:expr, $frame_bytes:expr, $arrive:expr, $drop:expr, $cost:expr, $ring:expr, $on_steered:block) => {{
                let (gen_ns, frame_bytes, arrive): (u64, u32, f64) = ($gen_ns, $frame_bytes, $arrive);
                // NIC buffer in front of the steering engine: packets leave it once DMA'd.
                // Lazily: only a packet that would not fit needs the departures up to now
                // (departing only frees room, so the verdict for a fitting packet is the same).
                if nic_queue_bytes + u64::from(frame_bytes) > buffer_fit_bytes {
                    let departed = nic_queue.as_slice().iter().take_while(|&&(t, _)| t <= arrive);
                    let (mut n_departed, mut departed_bytes) = (0usize, 0u64);
                    for &(_, b) in departed {
                        n_departed += 1;
                        departed_bytes += b;
                    }
                    nic_queue.consume(n_departed);
                    nic_queue_bytes -= departed_bytes;
                    if nic_queue_bytes + u64::from(frame_bytes) > buffer_fit_bytes {
                        dropped.nic += 1;
                        continue;
                    }
                }
                let cost: &SteerCost = $cost;
                $on_steered
                sum_hit += nic.hit_rate;
                sum_fw_ns += cost.fw_ns;
                sum_fast_ns += cost.fast_ns;
                let start = max_ns(arrive, steer_free);
                steer_free = start + cost.service_ns;
                let done = max_ns(start + cost.latency_ns, last_done);
                last_done = done;
                if $drop {
                    dropped.rule += 1;
                    continue;
                }
                if frame_bytes != pcie_size {
                    pcie_size = frame_bytes;
                    pcie_ns_cached = p.pcie_bytes(frame_bytes) * pcie_ns_per_byte;
                }
                let pcie_ns = pcie_ns_cached;
                sum_pcie_ns += pcie_ns;
                let dma = max_ns(done, pcie_free) + pcie_ns;
                pcie_free = dma;
                nic_queue.push((dma, u64::from(frame_bytes)));
                nic_queue_bytes += u64::from(frame_bytes);
                let r: usize = $ring;
                deferred += 1;
                if deferred >= CORE_DEFER_PACKETS || dma >= core_synced_ns + CORE_DEFER_NS || core.rings[r].len() >= ring_size {
                    advance_core(&mut core, dma, &mut nic, &mut ctl, &mut rx, &p);
                    deferred = 0;
                    core_synced_ns = dma;
                    if core.rings[r].len() >= ring_size {
                        dropped.imissed += 1;
                        continue;
                    }
                }
                // (The packet is built in each branch: a value shared by both would live on
                // the stack and be copied with mismatched widths, stalling store forwarding.)
                // Fast lane (exact): with every ring empty, the core idle by `dma` and no
                // same-core installer operation due before this packet's burst ends, the
                // core's next steps are fixed — take this packet alone at `dma` — and nothing
                // pushed later can change them (later packets are ready later); so do them
                // now instead of queueing the packet for the next advance_core.
                if core.queued == 0 && core.t_ns <= dma && (!ctl.same_core || ctl.next_due_ns > dma + nf_one_packet_ns) {
                    core.t_ns = dma + nf_one_packet_ns;
                    core.busy_ns += nf_one_packet_ns;
                    core.rr = r + 1;
                    let pkt = Pkt { gen_ns, ready_ns: dma, frame_bytes: u64::from(frame_bytes) };
                    transmit(std::slice::from_ref(&pkt), core.t_ns, &mut core.tx_free_ns, r, &mut rx);
                    continue;
                }
                core.rings[r].push(Pkt { gen_ns, ready_ns: dma, frame_bytes: u64::from(frame_bytes) });
                core.queued += 1;
            }};
        }
        let max_flow = burst.iter().map(|m| m.flow_index).max().unwrap_or(0);
        match nic.uniform().filter(|_| (max_flow as usize) < nic.flows.len()) {
            // Every flow has the same state: no per-packet flow lookup, one path cost, one
            // ring; the per-packet counts are added once per burst (integers: exact).
            Some(fs) => {
                let cost = nic.paths.get(fs.path as usize).map(|p| SteerCost::of(&p.cost)).unwrap_or_default();
                // The ring is looked up (created) where the general path would: at the first
                // packet that reaches it.
                let mut ring = None;
                let mut n_steered = 0u64;
                for (m, &arrive) in burst.iter().zip(&arrivals) {
                    steer!(m.ts_ns, m.frame_size_bytes, arrive, fs.drop, &cost, *ring.get_or_insert_with(|| core.ring(fs.queue, &mut rx)), {
                        n_steered += 1;
                    });
                }
                steered += n_steered;
                nic.fw_window_packets += n_steered * u64::from(cost.fw_ns > 0.0);
                sum_tables += n_steered * u64::from(cost.tables);
            }
            None => {
                // The burst's flow states, read in one pass (independent loads overlap their
                // cache misses); a state found stale is looked up again, in order, below.
                for (m, state) in burst.iter().zip(states.iter_mut()) {
                    *state = nic.flows.get(m.flow_index as usize).copied().unwrap_or(stale);
                }
                for ((m, &arrive), &gathered) in burst.iter().zip(&arrivals).zip(&states) {
                    let flow = m.flow_index;
                    let fs = if gathered.epoch == nic.epoch {
                        gathered
                    } else {
                        if flow as usize >= nic.flows.len() {
                            nic.add_flows(source.keys());
                        }
                        nic.flow(flow as usize)
                    };
                    let cost = nic.paths.get(fs.path as usize).map(|p| SteerCost::of(&p.cost)).unwrap_or_default();
                    steer!(m.ts_ns, m.frame_size_bytes, arrive, fs.drop, &cost, core.ring(fs.queue, &mut rx), {
                        steered += 1;
                        nic.fw_window_packets += u64::from(cost.fw_ns > 0.0);
                        sum_tables += u64::from(cost.tables);
                    });
                }
            }
        }
    }
    if let Some(e) = source.error() {
        return Err(ModelError::Trace(e.to_string()));
    }
    advance_core(&mut core, end_ns + DRAIN_NS, &mut nic, &mut ctl, &mut rx, &p);
    nic.apply_due(f64::INFINITY, true);
    nic.refresh(end_ns);
    rx.timeline.extend_to(SimTime(scn.duration_ns));

    let measured_s = (scn.duration_ns - scn.warmup_ns) as f64 * 1e-9;
    let gbps = |wire_bytes: u64| wire_bytes as f64 * 8.0 / measured_s / 1e9;
    let mpps = |pkts: u64| pkts as f64 / measured_s / 1e6;
    let counted = steered.max(1) as f64;
    let installer_busy = ctl.installer.as_ref().map_or(0.0, |i| i.busy_ns);
    let offered_pps = offered_packets as f64 / measured_s;
    let mut utilization = BTreeMap::new();
    utilization.insert("link".to_string(), gbps(offered_wire_bytes) / p.link_gbps);
    utilization.insert("root_table".to_string(), offered_pps * sum_fw_ns / counted * 1e-9);
    utilization.insert("nic_pipeline".to_string(), offered_pps * sum_fast_ns / counted * 1e-9);
    utilization.insert("pcie".to_string(), offered_pps * sum_pcie_ns / counted * 1e-9);
    let core_demand_ns = p.nf_packet_ns + p.nf_burst_ns / p.rx_burst_packets.max(1.0);
    let same_core_install = if ctl.same_core { installer_busy.min(end_ns) / end_ns } else { 0.0 };
    utilization.insert("host_core".to_string(), offered_pps * core_demand_ns * 1e-9 + same_core_install);
    let bottleneck = utilization
        .iter()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(k, _)| k.clone())
        .unwrap_or_default();
    let install = ctl.installer.as_ref().map(|i| {
        let duration_s = (i.last_end_ns - i.first_start_ns.unwrap_or(0.0)).max(0.0) * 1e-9;
        InstallResult {
            rules: i.completed,
            duration_s,
            rate_rules_per_s: if duration_s > 0.0 { i.completed as f64 / duration_s } else { 0.0 },
            refused: i.refused,
        }
    });
    let mut events: Vec<Event> = Vec::new();
    for (t, what) in &ctl.events {
        rx.timeline.mark(SimTime(*t as u64), what);
        if events.len() < 1000 {
            events.push(Event { t_s: t * 1e-9, what: what.clone() });
        }
    }
    let wall_s = wall.elapsed().as_secs_f64();
    let rx_gbps = gbps(rx.wire_bytes);
    Ok(SimResult {
        nic: profile.name.clone(),
        offered_gbps: gbps(offered_wire_bytes),
        offered_mpps: mpps(offered_packets),
        rx_gbps,
        rx_mpps: mpps(rx.packets),
        tx_gbps: rx_gbps,
        loss_ratio: if offered_packets > 0 { 1.0 - (rx.packets as f64 / offered_packets as f64).min(1.0) } else { 0.0 },
        dropped,
        latency_us: rx.hist.summary_us(),
        queues: if scn.measure.queues {
            let mut by_queue: BTreeMap<String, u64> = BTreeMap::new();
            for (r, n) in rx.per_ring.iter().enumerate() {
                *by_queue.entry(core.queue_of_ring[r].to_string()).or_default() += n;
            }
            by_queue
        } else {
            BTreeMap::new()
        },
        timeline: rx.timeline.bins().into_iter().filter(|b| b.t_s <= scn.duration_ns as f64 * 1e-9 + 1e-12).collect(),
        events,
        install,
        model: ModelSummary {
            root_table_occupancy: nic.inst.tables.occupancy(0),
            tables_traversed_mean: sum_tables as f64 / counted,
            steering_cache_hit_rate: sum_hit / counted,
            bottleneck,
            utilization,
            steering_working_set_stes: nic.inst.tables.working_set_stes(),
            rules_refused,
        },
        sim: SimStats { packets, wall_s, sim_packets_per_s: packets as f64 / wall_s.max(1e-9) },
    })
}
