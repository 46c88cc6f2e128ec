//! The host side of the testbed: the RX rings, the poll-mode NF core that drains them in
//! bursts (and runs a same-core installer between bursts), TX and the generator's receiver,
//! which timestamps and counts what comes back.

use super::installer::Control;
use super::max_ns;
use super::nic::Nic;
use crate::connectx::params::ConnectxParams;
use nicbench_sim::{Fifo, LatencyHistogram, SimTime, Timeline};

/// A packet in an RX ring. No padding (`frame_bytes` is a u64): copying a padded struct
/// reloads stored halves with wider loads, which stalls store forwarding on the hot path.
#[derive(Clone, Copy)]
pub(super) struct Pkt {
    pub(super) gen_ns: u64,
    pub(super) ready_ns: f64,
    pub(super) frame_bytes: u64,
}

/// The poll-mode NF core and its rings.
pub(super) struct Core {
    pub(super) t_ns: f64,
    /// Packets waiting per ring, in DMA order (ready times non-decreasing).
    pub(super) rings: Vec<Fifo<Pkt>>,
    /// Ring index + 1 per queue id (0: no ring yet); a flat table, looked up per packet.
    pub(super) ring_of_queue: Vec<u32>,
    pub(super) queue_of_ring: Vec<u16>,
    pub(super) rr: usize,
    pub(super) burst: usize,
    pub(super) tx_free_ns: f64,
    pub(super) busy_ns: f64,
    /// Packets in all rings.
    pub(super) queued: usize,
}

/// Measurement at the generator's receiver.
pub(super) struct Rx {
    pub(super) warmup_ns: u64,
    pub(super) window_end_ns: f64,
    pub(super) return_ns: f64,
    pub(super) wire_ns_per_byte: f64,
    pub(super) packets: u64,
    pub(super) wire_bytes: u64,
    pub(super) hist: LatencyHistogram,
    pub(super) timeline: Timeline,
    /// Received packets per ring (ring → queue id in `Core::queue_of_ring`).
    pub(super) per_ring: Vec<u64>,
    pub(super) latency: bool,
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
        let r = self.rings.len() - 1;
        self.ring_of_queue[usize::from(queue)] = r as u32 + 1;
        r
    }
}

/// Forwards a burst of `ring_index` ending at `t_ns` towards the generator: TX
/// serialization, return link, timestamps and counters at the receiver.
#[inline]
pub(super) fn transmit(burst: &[Pkt], t_ns: f64, tx_free_ns: &mut f64, ring_index: usize, rx: &mut Rx) {
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

/// The first ring (round robin from `core.rr`) whose head is ready at `core.t_ns`, else
/// the earliest head's ready time (∞ when every ring is empty).
#[inline]
pub(super) fn ready_ring(core: &Core) -> Result<usize, f64> {
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

pub(super) fn advance_core(core: &mut Core, until_ns: f64, nic: &mut Nic, ctl: &mut Control, rx: &mut Rx, p: &ConnectxParams) {
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

