//! The host side of the testbed: the RX rings, the poll-mode NF core that drains them in
//! bursts (and runs a same-core installer between bursts), TX and the generator's receiver,
//! which timestamps and counts what comes back.

use super::control::Control;
use super::nic::Nic;
use crate::connectx::result::InFlight;
use nicbench_sim::{Fifo, LatencyHistogram, SimDuration, SimTime, Timeline};
use nicbench_wire::builder::WIRE_OVERHEAD_BYTES;

/// A packet in an RX ring. No padding: copying a padded struct reloads stored halves with
/// wider loads, which stalls store forwarding on the hot path.
#[derive(Clone, Copy)]
pub(super) struct Pkt {
    /// When the generator sent it.
    pub(super) gen: SimTime,
    /// When its DMA to host memory completed.
    pub(super) ready: SimTime,
    pub(super) frame_bytes: u64,
}

/// Time on the wire of frames at a link rate: frame + [`WIRE_OVERHEAD_BYTES`] (preamble, SFD, gap).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Wire {
    /// Picoseconds per byte on the wire (8000 / Gb/s), in units of 2^-16 ps: integer
    /// arithmetic per packet, exact for the usual rates (80 ps/B at 100 Gb/s).
    ps_per_byte_q16: u64,
}

impl Wire {
    pub(super) fn new(link_gbps: f64) -> Wire {
        Wire {
            ps_per_byte_q16: (8_000.0 / link_gbps * 65_536.0).round() as u64,
        }
    }

    /// Serialization time of `wire_bytes` (frame + [`WIRE_OVERHEAD_BYTES`]), rounded to the ps.
    #[inline]
    pub(super) fn time(self, wire_bytes: u64) -> SimDuration {
        let q16 = u128::from(wire_bytes) * u128::from(self.ps_per_byte_q16);
        SimDuration::from_ps(((q16 + (1 << 15)) >> 16) as u64)
    }
}

/// The NF core's costs, as durations.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct CoreCost {
    pub(super) per_burst: SimDuration,
    pub(super) per_packet: SimDuration,
}

impl CoreCost {
    /// Core time to forward a burst of `n` packets.
    #[inline]
    pub(super) fn burst(self, n: usize) -> SimDuration {
        self.per_burst + self.per_packet * n as u64
    }
}

/// One poll-mode forwarding core: its clock, where its round robin stands, its TX queue, its
/// busy time, and the rings it polls.
pub(super) struct Cpu {
    pub(super) t: SimTime,
    /// Position of the round robin in `rings`.
    pub(super) rr: usize,
    pub(super) tx_free: SimTime,
    pub(super) busy: SimDuration,
    /// Packets in its rings.
    pub(super) queued: usize,
    /// The rings it polls (indices into [`Core::rings`]), in the order they appeared.
    pub(super) rings: Vec<usize>,
    /// Packets that reached its rings (forwarded or `imissed`): its share of the load.
    pub(super) arrived: u64,
}

impl Cpu {
    pub(super) fn new() -> Cpu {
        Cpu {
            t: SimTime::ZERO,
            rr: 0,
            tx_free: SimTime::ZERO,
            busy: SimDuration::ZERO,
            queued: 0,
            rings: Vec::new(),
            arrived: 0,
        }
    }
}

/// The host's forwarding cores and the RX rings (one per queue); queue q is polled by core
/// q mod cores, or by the core an explicit queue map names (the PAM'21 testbed: one core polls
/// every queue).
pub(super) struct Core {
    /// Packets waiting per ring, in DMA order (ready times non-decreasing).
    pub(super) rings: Vec<Fifo<Pkt>>,
    /// Ring index + 1 per queue id (0: no ring yet); a flat table, looked up per packet.
    pub(super) ring_of_queue: Vec<u32>,
    pub(super) queue_of_ring: Vec<u16>,
    /// The core polling each ring, and the ring's position among that core's rings.
    pub(super) cpu_of_ring: Vec<u32>,
    pub(super) pos_in_cpu: Vec<u32>,
    pub(super) cpus: Vec<Cpu>,
    /// Core per queue id from the scenario's `queue_map` (a flat table; every queue a packet
    /// can reach is mapped, checked at build); `None`: queue q on core q mod cores.
    pub(super) cpu_of_queue: Option<Vec<u32>>,
    /// The core a same-core installer runs on: the core of queue 0.
    pub(super) installer_cpu: usize,
    pub(super) burst: usize,
    pub(super) cost: CoreCost,
}

/// A measured packet that came back after the receive window as it stood when it was sent
/// back (see [`Rx::settle_late`]), with when it reached host memory and left its core.
#[derive(Clone, Copy)]
pub(super) struct Late {
    arrived: SimTime,
    gen: SimTime,
    ready: SimTime,
    left_core: SimTime,
    wire_bytes: u64,
    ring: usize,
}

/// Measurement at the generator's receiver.
pub(super) struct Rx {
    pub(super) warmup: SimTime,
    pub(super) window_end: SimTime,
    /// Return link and the fixed latency outside the modeled queues.
    pub(super) return_time: SimDuration,
    pub(super) wire: Wire,
    pub(super) packets: u64,
    pub(super) wire_bytes: u64,
    /// The last counted arrival and the shortest latency of any counted packet: how long after
    /// the sources stopped the buffers went on delivering (see `summary`).
    pub(super) last_arrival: SimTime,
    pub(super) min_latency: SimDuration,
    pub(super) hist: LatencyHistogram,
    pub(super) timeline: Timeline,
    /// Received packets per ring (ring → queue id in `Core::queue_of_ring`).
    pub(super) per_ring: Vec<u64>,
    /// Received frame bytes per ring.
    pub(super) per_ring_bytes: Vec<u64>,
    pub(super) latency: bool,
    /// Measured packets that arrived after `window_end` as it was when they were sent back; the
    /// window grows while the port sends a paced backlog, so they are judged at the end. Few: only
    /// a packet whose time in the testbed exceeds the drain can be late (bounded by the buffers).
    pub(super) late: Vec<Late>,
}

impl Rx {
    /// Counts one received packet (at the generator, within the window).
    #[inline]
    fn count_one(&mut self, late: Late) {
        let latency = late.arrived - late.gen;
        if self.latency {
            // As `transmit` records it (the recorder truncates to whole ns).
            self.hist.recorder().record_f64_ns(latency.as_ns_f64());
        }
        self.min_latency = self.min_latency.min(latency);
        self.last_arrival = self.last_arrival.max(late.arrived);
        self.packets += 1;
        self.wire_bytes += late.wire_bytes;
        self.timeline.add(late.arrived, 1, late.wire_bytes);
        self.per_ring[late.ring] += 1;
        self.per_ring_bytes[late.ring] += late.wire_bytes - u64::from(WIRE_OVERHEAD_BYTES);
    }

    /// At the end of the run (`window_end` final, the end of the drain): the packets set aside as
    /// late that arrived within the window are counted as received; the others were still in the
    /// testbed when the drain ended, and are counted where they were then. (The cores run ahead
    /// of the drain's end: a core is advanced to the DMA time of the packets it is handed, which a
    /// slow steering pipeline puts far beyond it.)
    pub(super) fn settle_late(&mut self) -> InFlight {
        let late = std::mem::take(&mut self.late);
        let end = self.window_end;
        let mut where_ = InFlight::default();
        for l in late {
            if l.arrived <= end {
                self.count_one(l);
            } else if l.ready > end {
                where_.nic += 1;
            } else if l.left_core > end {
                where_.rx_rings += 1;
            } else {
                where_.returning += 1;
            }
        }
        where_
    }
}

impl Core {
    #[inline]
    pub(super) fn ring(&mut self, queue: u16, rx: &mut Rx) -> usize {
        let slot = self.ring_of_queue[usize::from(queue)];
        if slot > 0 {
            return slot as usize - 1;
        }
        self.rings.push(Fifo::with_capacity(64));
        self.queue_of_ring.push(queue);
        rx.per_ring.push(0);
        rx.per_ring_bytes.push(0);
        let r = self.rings.len() - 1;
        self.ring_of_queue[usize::from(queue)] = r as u32 + 1;
        let c = match &self.cpu_of_queue {
            Some(map) => map[usize::from(queue)] as usize,
            None => usize::from(queue) % self.cpus.len().max(1),
        };
        self.cpu_of_ring.push(c as u32);
        self.pos_in_cpu.push(self.cpus[c].rings.len() as u32);
        self.cpus[c].rings.push(r);
        r
    }
}

/// Forwards a burst of `ring_index` ending at `t` towards the generator: TX serialization,
/// return link, timestamps and counters at the receiver.
#[inline]
pub(super) fn transmit(burst: &[Pkt], t: SimTime, tx_free: &mut SimTime, ring_index: usize, rx: &mut Rx) {
    let (mut burst_packets, mut burst_bytes, mut last_rx) = (0u64, 0u64, SimTime::ZERO);
    let mut min_latency = rx.min_latency;
    let (warmup, window_end, return_time, wire) = (rx.warmup, rx.window_end, rx.return_time, rx.wire);
    let mut free = *tx_free;
    let mut hist = rx.latency.then(|| rx.hist.recorder());
    for p in burst {
        let wire_bytes = p.frame_bytes + u64::from(WIRE_OVERHEAD_BYTES);
        free = free.max(t) + wire.time(wire_bytes);
        let arrived = free + return_time;
        if p.gen < warmup {
            continue;
        }
        if arrived > window_end {
            rx.late.push(Late {
                arrived,
                gen: p.gen,
                ready: p.ready,
                left_core: t,
                wire_bytes,
                ring: ring_index,
            });
            continue;
        }
        if let Some(h) = hist.as_mut() {
            h.record_f64_ns((arrived - p.gen).as_ns_f64());
        }
        burst_packets += 1;
        burst_bytes += wire_bytes;
        last_rx = arrived;
        min_latency = min_latency.min(arrived - p.gen);
    }
    drop(hist);
    *tx_free = free;
    if burst_packets > 0 {
        rx.min_latency = min_latency;
        rx.last_arrival = rx.last_arrival.max(last_rx);
        rx.packets += burst_packets;
        rx.wire_bytes += burst_bytes;
        // One timeline update per burst: a burst spans ~µs, bins are ms.
        rx.timeline.add(last_rx, burst_packets, burst_bytes);
        rx.per_ring[ring_index] += burst_packets;
        rx.per_ring_bytes[ring_index] += burst_bytes - 20 * burst_packets;
    }
}

/// The first ring of core `c` (round robin from its `rr`) whose head is ready at its clock,
/// else the earliest head's ready time (`None` when its rings are empty). Returns the ring's
/// position among the core's rings and its index into [`Core::rings`].
#[inline]
pub(super) fn ready_ring(core: &Core, c: usize) -> Result<(usize, usize), Option<SimTime>> {
    let cpu = &core.cpus[c];
    let n = cpu.rings.len();
    if n == 1 {
        // The common case (one queue per core): no round robin.
        return match core.rings[cpu.rings[0]].front() {
            Some(h) if h.ready <= cpu.t => Ok((0, cpu.rings[0])),
            Some(h) => Err(Some(h.ready)),
            None => Err(None),
        };
    }
    let mut next_ready: Option<SimTime> = None;
    let mut i = if cpu.rr >= n { 0 } else { cpu.rr };
    for _ in 0..n {
        if let Some(h) = core.rings[cpu.rings[i]].front() {
            if h.ready <= cpu.t {
                return Ok((i, cpu.rings[i]));
            }
            next_ready = Some(next_ready.map_or(h.ready, |r| r.min(h.ready)));
        }
        i += 1;
        if i == n {
            i = 0;
        }
    }
    Err(next_ready)
}

/// Advances forwarding core `c` to `until`: it polls its rings in bursts and, if it is the
/// installer's core (the core of queue 0), runs the installer's operations when they are due
/// (the forwarding stops meanwhile).
pub(super) fn advance_core(core: &mut Core, c: usize, until: SimTime, nic: &mut Nic, ctl: &mut Control, rx: &mut Rx) {
    let installs = c == core.installer_cpu;
    loop {
        let t = core.cpus[c].t;
        if installs && t < ctl.end {
            if let Some(due) = ctl.same_core_due(t) {
                let start = t.max(due);
                let end = ctl.run_same_core(start, nic);
                let cpu = &mut core.cpus[c];
                cpu.busy += end - start;
                cpu.t = end;
                continue;
            }
        }
        if t >= until {
            return;
        }
        match ready_ring(core, c) {
            Ok((i, q)) => {
                // Ready times in a ring are non-decreasing (DMA completes in order), and
                // the head is ready: the poll takes the ready prefix, up to a burst.
                let Core {
                    rings,
                    cpus,
                    burst,
                    cost,
                    ..
                } = core;
                let cpu = &mut cpus[c];
                let pending = rings[q].as_slice();
                let window = &pending[..(*burst).min(pending.len())];
                // Mostly one packet per poll when the core keeps up: check the second first.
                let n = if window.get(1).is_none_or(|h| h.ready > t) {
                    1
                } else {
                    window.iter().position(|h| h.ready > t).unwrap_or(window.len())
                };
                let spent = cost.burst(n);
                cpu.t += spent;
                cpu.busy += spent;
                cpu.rr = i + 1;
                cpu.queued -= n;
                transmit(&window[..n], cpu.t, &mut cpu.tx_free, q, rx);
                rings[q].consume(n);
            }
            Err(next_ready) => {
                let mut next = next_ready.map_or(until, |r| r.min(until));
                if installs {
                    if let Some(due) = ctl.same_core_due(SimTime::MAX) {
                        next = next.min(due);
                    }
                }
                if next <= t {
                    return;
                }
                core.cpus[c].t = next;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::build::tests::testbed;
    use super::*;
    use serde_json::json;

    fn pkt(ready_ns: u64) -> Pkt {
        Pkt {
            gen: SimTime::ZERO,
            ready: SimTime::from_ns(ready_ns),
            frame_bytes: 1500,
        }
    }

    #[test]
    fn test_core_takes_ready_packets_in_bursts_and_pays_per_burst_and_packet() {
        let mut tb = testbed(json!({}));
        let r = tb.core.ring(0, &mut tb.rx);
        // 40 packets ready at once, 10 more later: two bursts (32 + 8), then one of the later ones.
        for _ in 0..40 {
            tb.core.rings[r].push(pkt(1_000));
        }
        tb.core.rings[r].push(pkt(1_000_000));
        tb.core.cpus[0].queued = 41;
        tb.core.cpus[0].t = SimTime::from_ns(1_000);
        advance_core(
            &mut tb.core,
            0,
            SimTime::from_ns(900_000),
            &mut tb.nic,
            &mut tb.ctl,
            &mut tb.rx,
        );
        let cost = tb.core.cost;
        assert_eq!(
            tb.core.cpus[0].busy,
            cost.burst(32) + cost.burst(8),
            "two polls of the ready packets"
        );
        assert_eq!(tb.core.cpus[0].queued, 1, "the later packet waits");
        assert_eq!(tb.core.cpus[0].t, SimTime::from_ns(900_000), "idle until the horizon");
        assert_eq!(tb.rx.packets, 40);
        advance_core(
            &mut tb.core,
            0,
            SimTime::from_ns(2_000_000),
            &mut tb.nic,
            &mut tb.ctl,
            &mut tb.rx,
        );
        assert_eq!(tb.core.cpus[0].busy, cost.burst(32) + cost.burst(8) + cost.burst(1));
        assert_eq!(tb.rx.packets, 41);
        assert_eq!(tb.rx.per_ring, [41]);
    }

    #[test]
    fn test_transmit_serializes_at_line_rate_and_skips_the_warmup() {
        let mut tb = testbed(json!({"warmup_ns": 500}));
        let r = tb.core.ring(0, &mut tb.rx);
        let burst: Vec<Pkt> = (0..4)
            .map(|i| Pkt {
                gen: SimTime::from_ns(i * 300),
                ready: SimTime::ZERO,
                frame_bytes: 1500,
            })
            .collect();
        let mut free = SimTime::ZERO;
        transmit(&burst, SimTime::from_ns(10_000), &mut free, r, &mut tb.rx);
        // 1520 B at 100 Gb/s: 121.6 ns each, back to back from the burst's end.
        assert_eq!(Wire::new(100.0).time(1520), SimDuration::from_ps(121_600));
        assert_eq!(
            Wire::new(25.0).time(84),
            SimDuration::from_ps(26_880),
            "64 B at 25 Gb/s"
        );
        assert_eq!(
            Wire::new(56.0).time(1520),
            SimDuration::from_ps(217_143),
            "1520 × 8000 / 56 = 217,142.86"
        );
        assert_eq!(free, SimTime::from_ns(10_000) + SimDuration::from_ps(4 * 121_600));
        assert_eq!(
            tb.rx.packets, 2,
            "the two sent before the warm-up ended are not counted"
        );
        assert_eq!(tb.rx.wire_bytes, 2 * 1520);
    }
}
