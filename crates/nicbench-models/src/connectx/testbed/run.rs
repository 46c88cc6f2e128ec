//! The run: the generator's bursts through the testbed's stages, packet by packet with
//! arithmetic on timestamps (see the module doc of [`super`]), until the source ends; then the
//! packets in flight drain.

use super::host::{advance_core, transmit, Pkt};
use super::nic::{buffer_fit_bytes, FlowState, SteerCost};
use super::{Testbed, BURST_SPAN_NS, CORE_DEFER, CORE_DEFER_PACKETS, DRAIN, PROGRESS_EVERY_NS, RX_BURST_MAX, UNKNOWN};
use crate::connectx::result::{Dropped, PacketAccount};
use crate::error::ModelError;
use nicbench_sim::{Fifo, SimDuration, SimTime};
use nicbench_traffic::PacketMeta;

/// What a run counted, for the summary.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counts {
    /// Packets the source produced (simulated).
    pub packets: u64,
    /// Packets and wire bytes offered after the warm-up (sent at or after it).
    pub offered_packets: u64,
    pub offered_wire_bytes: u64,
    /// Packets that went through the steering pipeline.
    pub steered: u64,
    /// Tables traversed, summed over steered packets (an integer: the f64 sum would be exact too).
    pub sum_tables: u64,
    /// Sums over steered packets: cache hit rate, firmware time, fast-table time, PCIe time.
    pub sum_hit: f64,
    pub sum_fw: SimDuration,
    pub sum_fast: SimDuration,
    /// Steering latency summed over the steered packets (the pipeline's and the root table's).
    pub sum_steer_latency: SimDuration,
    pub sum_pcie: SimDuration,
    pub dropped: Dropped,
    /// When the last packet left the generator's port (≥ the end of the duration).
    pub sent_end: SimTime,
    /// Longest a packet waited at the generator's port for the line (traffic above line rate).
    pub paced_max: SimDuration,
    /// Where the measured packets (sent at or after the warm-up) ended up.
    pub account: PacketAccount,
}

impl Testbed {
    /// Runs the source to its end (the scenario's duration), then drains the packets in flight.
    /// `progress(simulated_ns)` is called every [`PROGRESS_EVERY_NS`] of simulated time.
    pub fn run(&mut self, progress: &mut dyn FnMut(u64)) -> Result<Counts, ModelError> {
        let duration_ns = self.duration_ns;
        let end = SimTime::from_ns(duration_ns);
        let Testbed {
            ref p,
            ref mut source,
            ref mut nic,
            ref mut core,
            ref mut rx,
            ref mut ctl,
            defer_core,
            flow_blind,
            ..
        } = *self;
        // Without an installer the rules never change, so a NIC whose flows all share one
        // state now keeps it to the end (`Nic::uniform`): a packet's flow cannot matter.
        source.set_flow_blind(flow_blind && ctl.installer.is_none() && nic.uniform().is_some());
        let wire = rx.wire;
        let propagation = SimDuration::from_ns_f64(p.link_propagation_ns);
        let one_packet = core.cost.burst(1);
        let ring_size = p.rx_ring_descriptors.max(1.0) as usize;
        let buffer_fit_bytes = buffer_fit_bytes(p.nic_buffer_bytes);
        let pcie_ps_per_byte = 8_000.0 / p.pcie.gbps();
        let mut dropped = Dropped::default();
        // The same, for the measured packets only (the packet account; `dropped` is the whole run's).
        let mut measured_dropped = Dropped::default();
        let warmup = rx.warmup;
        // Packets in the NIC buffer: (DMA done, bytes), in DMA order.
        let mut nic_queue: Fifo<(SimTime, u64)> = Fifo::with_capacity(1024);
        let mut nic_queue_bytes = 0u64;
        let (mut link_free, mut steer_free, mut last_done, mut pcie_free) =
            (SimTime::ZERO, SimTime::ZERO, SimTime::ZERO, SimTime::ZERO);
        let (mut offered_packets, mut offered_wire_bytes, mut packets, mut steered) = (0u64, 0u64, 0u64, 0u64);
        let mut sum_tables = 0u64;
        let mut sum_hit = 0.0;
        let (mut sum_fw, mut sum_fast, mut sum_pcie) = (SimDuration::ZERO, SimDuration::ZERO, SimDuration::ZERO);
        let mut sum_steer_latency = SimDuration::ZERO;
        let mut next_progress = PROGRESS_EVERY_NS;
        let (mut pcie_size, mut pcie_cached) = (0u32, SimDuration::ZERO);
        // Packets pushed to the rings since the core last advanced, and when that was: the
        // core is advanced lazily (exact: advancing only pops, so a ring below its size cannot
        // overflow before the core catches up; bursts see the same ready times).
        let (mut deferred, mut core_synced) = (0u32, SimTime::ZERO);
        let mut burst: Vec<PacketMeta> = Vec::with_capacity(RX_BURST_MAX);
        let stale = FlowState {
            epoch: UNKNOWN,
            path: UNKNOWN,
            queue: 0,
            drop: false,
        };
        let mut arrivals = [SimTime::ZERO; RX_BURST_MAX];
        let mut sent_at = [SimTime::ZERO; RX_BURST_MAX];
        let mut paced_max = SimDuration::ZERO;
        let mut states = [stale; RX_BURST_MAX];
        loop {
            // Stage 0: the generator's next burst (bounded in simulated time, so control-plane
            // and bookkeeping checks done once per burst stay fine-grained at low rates).
            source.next_burst(RX_BURST_MAX, BURST_SPAN_NS, &mut burst);
            let Some(first_gen_ns) = burst.first().map(|m| m.ts_ns) else {
                break;
            };
            packets += burst.len() as u64;
            if first_gen_ns >= next_progress {
                progress(first_gen_ns);
                next_progress = first_gen_ns + PROGRESS_EVERY_NS;
            }
            // Stage 1: the link (serialization at line rate, then propagation). The generator's
            // port paces what comes faster than the line rate (a trace replayed at its own
            // timestamps): a packet leaves when the port is free, and that is when the generator
            // timestamps it (latency is the DUT's, not the generator's backlog).
            let n_burst = burst.len().min(RX_BURST_MAX);
            let burst = &burst[..n_burst];
            for ((m, arrival), sent) in burst.iter().zip(arrivals.iter_mut()).zip(sent_at.iter_mut()) {
                let wire_bytes = nicbench_wire::builder::wire_bytes(m.frame_size_bytes);
                let due = SimTime::from_ns(m.ts_ns);
                let start = link_free.max(due);
                // Measured from when it was sent, as everything downstream (drops, latency, the
                // receiver) judges the warm-up: a paced packet due before it but sent after it
                // is measured everywhere or nowhere.
                if start >= warmup {
                    offered_packets += 1;
                    offered_wire_bytes += wire_bytes;
                }
                paced_max = paced_max.max(start - due);
                link_free = start + wire.time(wire_bytes);
                *sent = start;
                *arrival = link_free + propagation;
            }
            // Packets sent late still count if they arrive within the drain after they were sent.
            rx.window_end = rx.window_end.max(link_free + DRAIN);
            // Once per burst, at its first arrival: the control plane's events due by now.
            ctl.process_due(arrivals[0], nic);
            // With several cores, core 0 may get no packets for a while: run its same-core
            // installer operations when they are due, not when its next packet comes.
            if core.cpus.len() > 1 && ctl.same_core_due(arrivals[0]).is_some() {
                advance_core(core, 0, arrivals[0], nic, ctl, rx);
            }
            // Stage 2: per packet, steering (functional verdict + timing), NIC buffer, DMA, RX
            // ring. `steer!` is one packet's path from the NIC buffer on, given its flow's
            // state and path cost; a macro so that the two loops below share it verbatim.
            macro_rules! steer {
                ($sent:expr, $frame_bytes:expr, $arrive:expr, $drop:expr, $cost:expr, $ring:expr, $on_steered:block) => {{
                    let (gen, frame_bytes, arrive): (SimTime, u32, SimTime) = ($sent, $frame_bytes, $arrive);
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
                            measured_dropped.nic += u64::from(gen >= warmup);
                            continue;
                        }
                    }
                    let cost: &SteerCost = $cost;
                    $on_steered
                    sum_hit += nic.hit_rate;
                    sum_fw += cost.fw;
                    sum_fast += cost.fast;
                    sum_steer_latency += cost.latency;
                    let start = arrive.max(steer_free);
                    steer_free = start + cost.service;
                    let done = (start + cost.latency).max(last_done);
                    last_done = done;
                    if $drop {
                        dropped.rule += 1;
                        measured_dropped.rule += u64::from(gen >= warmup);
                        continue;
                    }
                    if frame_bytes != pcie_size {
                        pcie_size = frame_bytes;
                        pcie_cached = SimDuration::from_ps_f64(p.pcie.dma_bytes(f64::from(frame_bytes)) * pcie_ps_per_byte);
                    }
                    let pcie = pcie_cached;
                    sum_pcie += pcie;
                    let dma = done.max(pcie_free) + pcie;
                    pcie_free = dma;
                    nic_queue.push((dma, u64::from(frame_bytes)));
                    nic_queue_bytes += u64::from(frame_bytes);
                    let r: usize = $ring;
                    let c = core.cpu_of_ring[r] as usize;
                    core.cpus[c].arrived += u64::from(gen >= rx.warmup);
                    deferred += 1;
                    if !defer_core || deferred >= CORE_DEFER_PACKETS || dma >= core_synced + CORE_DEFER || core.rings[r].len() >= ring_size {
                        advance_core(core, c, dma, nic, ctl, rx);
                        deferred = 0;
                        core_synced = dma;
                        if core.rings[r].len() >= ring_size {
                            dropped.imissed += 1;
                            measured_dropped.imissed += u64::from(gen >= warmup);
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
                    let cpu = &mut core.cpus[c];
                    if defer_core && cpu.queued == 0 && cpu.t <= dma && (c != 0 || ctl.next_due.is_none_or(|d| d > dma + one_packet)) {
                        cpu.t = dma + one_packet;
                        cpu.busy += one_packet;
                        cpu.rr = core.pos_in_cpu[r] as usize + 1;
                        let pkt = Pkt { gen, ready: dma, frame_bytes: u64::from(frame_bytes) };
                        transmit(std::slice::from_ref(&pkt), cpu.t, &mut cpu.tx_free, r, rx);
                        continue;
                    }
                    cpu.queued += 1;
                    core.rings[r].push(Pkt { gen, ready: dma, frame_bytes: u64::from(frame_bytes) });
                }};
            }
            let max_flow = burst.iter().map(|m| m.flow_index).max().unwrap_or(0);
            match nic.uniform().filter(|_| (max_flow as usize) < nic.flows.len()) {
                // Every flow has the same state: no per-packet flow lookup, one path cost, one
                // ring; the per-packet counts are added once per burst (integers: exact).
                Some(fs) => {
                    let cost = nic.paths.get(fs.path as usize).map(|p| p.steer).unwrap_or_default();
                    // The ring is looked up (created) where the general path would: at the first
                    // packet that reaches it.
                    let mut ring = None;
                    let mut n_steered = 0u64;
                    for ((m, &arrive), &sent) in burst.iter().zip(&arrivals).zip(&sent_at) {
                        steer!(
                            sent,
                            m.frame_size_bytes,
                            arrive,
                            fs.drop,
                            &cost,
                            *ring.get_or_insert_with(|| core.ring(fs.queue, rx)),
                            {
                                n_steered += 1;
                            }
                        );
                    }
                    steered += n_steered;
                    nic.fw_window_packets += n_steered * u64::from(cost.root);
                    sum_tables += n_steered * u64::from(cost.tables);
                }
                None => {
                    // The burst's flow states, read in one pass (independent loads overlap their
                    // cache misses); a state found stale is looked up again, in order, below.
                    for (m, state) in burst.iter().zip(states.iter_mut()) {
                        *state = nic.flows.get(m.flow_index as usize).copied().unwrap_or(stale);
                    }
                    for (((m, &arrive), &gathered), &sent) in burst.iter().zip(&arrivals).zip(&states).zip(&sent_at) {
                        let flow = m.flow_index;
                        let fs = if gathered.epoch == nic.epoch {
                            gathered
                        } else {
                            if flow as usize >= nic.flows.len() {
                                nic.add_flows(source.keys());
                            }
                            nic.flow(flow as usize)
                        };
                        let cost = nic.paths.get(fs.path as usize).map(|p| p.steer).unwrap_or_default();
                        steer!(
                            sent,
                            m.frame_size_bytes,
                            arrive,
                            fs.drop,
                            &cost,
                            core.ring(fs.queue, rx),
                            {
                                steered += 1;
                                nic.fw_window_packets += u64::from(cost.root);
                                sum_tables += u64::from(cost.tables);
                            }
                        );
                    }
                }
            }
        }
        if let Some(e) = source.error() {
            return Err(ModelError::Trace(e.to_string()));
        }
        // The run ends when the source's duration is over or, if the port was still sending
        // a backlog then, when the last packet left.
        let sent_end = end.max(link_free);
        let drain_end = sent_end + DRAIN;
        for c in 0..core.cpus.len() {
            advance_core(core, c, drain_end, nic, ctl, rx);
        }
        // What the receiver set aside as arriving after its window as it stood then counts if it
        // arrived within the final one (the window grows while the port sends a paced backlog);
        // the rest is counted where it was when the drain ended.
        let mut in_flight = rx.settle_late();
        // Whatever is still in a ring was never taken by a core: DMA'd by the drain's end (in the
        // ring) or not yet (in the NIC: its pipeline, buffer or DMA; a packet's ring slot is
        // taken when its DMA is scheduled).
        for ring in &core.rings {
            for pkt in ring.as_slice().iter().filter(|p| p.gen >= warmup) {
                if pkt.ready > drain_end {
                    in_flight.nic += 1;
                } else {
                    in_flight.rx_rings += 1;
                }
            }
        }
        let account = PacketAccount {
            offered: offered_packets,
            delivered: rx.packets,
            dropped: measured_dropped,
            in_flight_at_end: in_flight.nic + in_flight.rx_rings + in_flight.returning,
            in_flight,
        };
        nic.apply_due(SimTime::MAX);
        nic.refresh(end);
        rx.timeline.extend_to(end);
        for (t, what) in &ctl.log {
            rx.timeline.mark(*t, what);
        }
        Ok(Counts {
            packets,
            offered_packets,
            offered_wire_bytes,
            steered,
            sum_tables,
            sum_hit,
            sum_fw,
            sum_fast,
            sum_steer_latency,
            sum_pcie,
            dropped,
            sent_end,
            paced_max,
            account,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::build::tests::testbed;

    use nicbench_sim::SimDuration;
    use serde_json::{json, Value};

    /// The result of a run with the NF core advanced lazily (normal) or at every packet.
    fn result(extra: Value, defer_core: bool) -> crate::connectx::result::Result {
        let mut tb = testbed(extra);
        tb.defer_core = defer_core;
        let counts = tb.run(&mut |_| {}).expect("runs");
        let mut r = tb.summary(&counts, 0.0);
        r.sim.sim_packets_per_s = 0.0;
        r
    }

    #[test]
    fn test_deferral_on_and_off_give_identical_results() {
        let text = "flow create 0 ingress group 0 priority 0 pattern eth / ipv4 src spec 10.0.0.0 src mask 255.128.0.0 / end actions drop / end\n\
                    flow create 0 ingress group 0 priority 1 pattern eth / ipv4 src spec 10.128.0.0 src mask 255.192.0.0 / end actions queue index 3 / end\n\
                    flow create 0 ingress group 0 priority 2 pattern eth / end actions queue index 1 / end\n";
        type Check = fn(&crate::connectx::result::Result) -> bool;
        let cases: [(Value, Check); 7] = [
            // The core saturates (64 B at line rate): rings fill, imissed.
            (
                json!({"traffic": {"flows": 100, "size": {"fixed": 64}, "rate": {"gbps": 100.0}, "seed": 5}}),
                |r| r.dropped.imissed > 0,
            ),
            // The steering pipeline saturates (16 chained tables) and the NIC buffer drops.
            (
                json!({"rules": {"generated": {"kind": "exact5", "count": 20000, "groups": 16, "seed": 2}}}),
                |r| r.dropped.nic > 0,
            ),
            // A same-core batch stalls the core (rings overflow while it runs) ...
            (
                json!({"install": {"mode": "batch", "count": 20, "start_ns": 300_000, "group": 0, "core": "same"}}),
                |r| r.dropped.imissed > 0 && r.install.as_ref().is_some_and(|i| i.rules == 20),
            ),
            // ... a distinct-core rate installer changes the tables while packets flow.
            (
                json!({"install": {"mode": "rate", "rate_per_s": 500_000.0, "group": 1, "core": "distinct"}}),
                |r| r.install.as_ref().is_some_and(|i| i.rules > 100),
            ),
            // Several queues and a drop rule, at a load the core keeps up with.
            (
                json!({"rules": {"text": text}, "traffic": {"flows": 50, "size": {"fixed": 512}, "rate": {"gbps": 20.0}, "seed": 5}}),
                |r| r.queues.len() == 2 && r.dropped.rule > 0 && r.loss_ratio < 1.0,
            ),
            // Three cores (queue 3 on core 0, queue 1 on core 1), overloaded at 64 B (the NIC's
            // pipeline keeps up with line rate; the two busy cores do not) ...
            (
                json!({"rules": {"text": text}, "cores": 3, "traffic": {"flows": 50, "size": {"fixed": 64}, "rate": {"gbps": 100.0}, "seed": 5}}),
                |r| r.cores.len() == 3 && r.cores[0].queues == [3] && r.cores[1].queues == [1] && r.dropped.imissed > 0,
            ),
            // ... and with a same-core installer stalling core 0 only.
            (
                json!({"rules": {"text": text}, "cores": 2, "install": {"mode": "batch", "count": 20, "start_ns": 300_000, "group": 0, "core": "same"},
                    "traffic": {"flows": 50, "size": {"fixed": 512}, "rate": {"gbps": 50.0}, "seed": 5}}),
                |r| r.cores.len() == 2 && r.install.as_ref().is_some_and(|i| i.rules == 20),
            ),
        ];
        for (case, exercised) in cases {
            let (lazy, eager) = (result(case.clone(), true), result(case.clone(), false));
            assert_eq!(lazy, eager, "{case}");
            assert!(
                exercised(&lazy),
                "{case}: the case does not exercise what it claims: {:?} {:?}",
                lazy.dropped,
                lazy.queues
            );
        }
    }

    #[test]
    fn test_round_robin_traffic_sees_the_cyclic_scan_cache() {
        // 100K exact rules over 4 tables, 10K flows on the default path: a working set past the
        // steering cache. Taking turns, the flows meet the cyclic-scan hit rate (random
        // replacement); drawn independently, Che's. The two must differ, and equal their formulas.
        let run = |popularity: Value| {
            let case = json!({"rules": {"generated": {"kind": "exact5_tcp", "count": 100_000, "groups": 4, "seed": 2}},
                "traffic": {"flows": 10_000, "proto": "tcp", "popularity": popularity, "size": {"fixed": 1500}, "rate": {"gbps": 100.0}, "seed": 5}});
            let mut tb = testbed(case);
            let counts = tb.run(&mut |_| {}).expect("runs");
            let tables = &tb.nic.inst.tables;
            let expected = tables.mean_hit_rate(&if tables.round_robin {
                tables.cache_hit_rates_round_robin()
            } else {
                tables.cache_hit_rates()
            });
            (
                tb.summary(&counts, 0.0).model.steering_cache_hit_rate,
                expected,
                tables.round_robin,
            )
        };
        let (turns, turns_formula, rr) = run(json!("round_robin"));
        let (drawn, drawn_formula, random) = run(json!("uniform"));
        assert!(rr && !random);
        assert!((turns - turns_formula).abs() < 1e-9 && (drawn - drawn_formula).abs() < 1e-9);
        assert!(
            turns < 0.999 && (turns - drawn).abs() > 0.01,
            "round robin {turns}, random {drawn}"
        );
    }

    #[test]
    fn test_skipping_flow_draws_gives_identical_results_and_only_when_flows_cannot_matter() {
        // (scenario, whether the flow draws are skipped)
        let cases = [
            // The Fig. 2 scenario: exact rules no flow matches, every flow on the default path.
            (
                json!({"rules": {"generated": {"kind": "exact5", "count": 1000, "groups": 1, "seed": 2}}}),
                true,
            ),
            // No rules, 64 B at line rate: the core saturates (imissed), RSS spreads nothing.
            (
                json!({"rules": null, "traffic": {"flows": 100, "size": {"fixed": 64}, "rate": {"gbps": 100.0}, "seed": 5}}),
                true,
            ),
            // Zipf popularity with fixed sizes, a warm-up and 4 port queues but no rule: RSS per flow
            // gives flows different queues, so the flows are drawn.
            (
                json!({"rules": null, "port_queues": 4, "warmup_ns": 300_000,
                    "traffic": {"flows": 100, "popularity": {"zipf": {"s": 1.1}}, "size": {"fixed": 512}, "rate": {"gbps": 50.0}, "seed": 5}}),
                false,
            ),
            // Sizes drawn (IMIX): they share the RNG with the flows, so the flows are drawn.
            (
                json!({"rules": null, "traffic": {"flows": 100, "size": "imix", "rate": {"gbps": 50.0}, "seed": 5}}),
                false,
            ),
            // Half the flows hit an exact rule: paths differ.
            (json!({}), false),
            // An installer changes the rules during the run.
            (
                json!({"rules": {"generated": {"kind": "exact5", "count": 1000, "groups": 1, "seed": 2}},
                    "install": {"mode": "rate", "rate_per_s": 500_000.0, "group": 1, "core": "distinct"}}),
                false,
            ),
        ];
        for (case, blind) in cases {
            let run = |flow_blind: bool| {
                let mut tb = testbed(case.clone());
                tb.flow_blind = flow_blind;
                let counts = tb.run(&mut |_| {}).expect("runs");
                let mut r = tb.summary(&counts, 0.0);
                r.sim.sim_packets_per_s = 0.0;
                (r, tb.source.is_flow_blind())
            };
            let ((skipping, skipped), (drawing, drew_blind)) = (run(true), run(false));
            assert_eq!(skipped, blind, "{case}");
            assert!(!drew_blind, "{case}");
            assert!(skipping.rx_mpps > 1.0, "{case}: {}", skipping.rx_mpps);
            assert_eq!(skipping, drawing, "{case}");
        }
    }

    #[test]
    fn test_a_queue_map_puts_queues_on_the_cores_it_names_and_the_installer_on_queue_0s_core() {
        // Rules send to queues 1 and 3; the port's default RSS over 4 queues takes the rest.
        let text = "flow create 0 ingress group 0 priority 0 pattern eth / ipv4 src spec 10.0.0.0 src mask 255.128.0.0 / end actions queue index 3 / end\n\
                    flow create 0 ingress group 0 priority 1 pattern eth / ipv4 src spec 10.128.0.0 src mask 255.128.0.0 / end actions queue index 1 / end\n";
        let traffic = json!({"flows": 200, "size": {"fixed": 512}, "rate": {"gbps": 20.0}, "seed": 5});
        let map = json!({"0": 2, "1": 2, "2": 0, "3": 0});
        let r = result(
            json!({"rules": {"text": text}, "cores": 3, "port_queues": 4, "queue_map": map, "traffic": traffic}),
            true,
        );
        let polled: Vec<Vec<u16>> = r
            .cores
            .iter()
            .map(|c| {
                let mut q = c.queues.clone();
                q.sort();
                q
            })
            .collect();
        assert_eq!(polled[0], [3], "{polled:?}");
        assert!(polled[1].is_empty(), "core 1 polls nothing: {polled:?}");
        assert_eq!(polled[2], [1], "{polled:?}");
        assert_eq!(r.cores[1].packets, 0);
        // A same-core installer runs on the core of queue 0 (core 2 here): its busy time grows, core 0's does not.
        let install = json!({"mode": "batch", "count": 200, "start_ns": 100_000, "group": 0, "core": "same"});
        let with = result(
            json!({"rules": {"text": text}, "cores": 3, "port_queues": 4, "queue_map": map, "traffic": traffic,
                                 "install": install}),
            true,
        );
        assert!(
            with.cores[2].busy_ratio > r.cores[2].busy_ratio + 1e-3,
            "{:?} vs {:?}",
            with.cores[2],
            r.cores[2]
        );
        assert!(
            (with.cores[0].busy_ratio - r.cores[0].busy_ratio).abs() < 1e-3,
            "{:?} vs {:?}",
            with.cores[0],
            r.cores[0]
        );
        // Refused: a queue a rule names without a core; a core beyond `cores`; a port queue unmapped.
        use crate::connectx::request::Request;
        use crate::profile::{tests::dir, Profile};
        let profile = Profile::load("connectx5", &dir()).expect("profile");
        let err = |extra: Value| {
            let mut s = json!({"nic": "connectx5", "duration_ns": 1_000_000, "traffic": traffic});
            s.as_object_mut()
                .expect("object")
                .extend(extra.as_object().expect("object").clone());
            match Request::from_json(&s.to_string()) {
                Err(e) => e.to_string(),
                Ok(s) => super::super::Testbed::build(&s, &profile)
                    .err()
                    .map(|e| e.to_string())
                    .unwrap_or_default(),
            }
        };
        let msg = err(json!({"rules": {"text": text}, "cores": 2, "port_queues": 2, "queue_map": {"0": 0, "1": 1}}));
        assert!(
            msg.contains("queue 3, which a rule in group 0 sends packets to, has no core"),
            "{msg}"
        );
        let msg = err(json!({"cores": 2, "queue_map": {"0": 2}}));
        assert!(msg.contains("queue 0 on core 2, but there are 2 cores"), "{msg}");
        let msg = err(json!({"cores": 2, "port_queues": 2, "queue_map": {"0": 1}}));
        assert!(msg.contains("queue 1 of the port's 2 queues has no core"), "{msg}");
    }

    #[test]
    fn test_every_offered_packet_is_received_or_dropped_by_a_named_cause() {
        let text = "flow create 0 ingress group 0 priority 0 pattern eth / ipv4 src spec 10.0.0.0 src mask 255.128.0.0 / end actions drop / end\n\
                    flow create 0 ingress group 0 priority 1 pattern eth / end actions queue index 2 / end\n";
        for extra in [
            json!({"rules": {"text": text}, "traffic": {"flows": 50, "size": {"fixed": 512}, "rate": {"gbps": 20.0}, "seed": 5}}),
            json!({"traffic": {"flows": 100, "size": {"fixed": 64}, "rate": {"gbps": 100.0}, "seed": 5}}),
        ] {
            let mut tb = testbed(extra.clone());
            let counts = tb.run(&mut |_| {}).expect("runs");
            let d = &counts.dropped;
            assert_eq!(
                counts.offered_packets, counts.packets,
                "no warm-up: every packet is offered"
            );
            assert_eq!(
                counts.packets,
                tb.rx.packets + d.imissed + d.nic + d.rule,
                "{extra}: {d:?}"
            );
            assert_eq!(counts.steered, counts.packets - d.nic, "{extra}");
        }
        // The drop rule takes exactly the packets of its flows, and nothing else is lost at 20 Gb/s.
        let mut tb = testbed(
            json!({"rules": {"text": text}, "traffic": {"flows": 50, "size": {"fixed": 512}, "rate": {"gbps": 20.0}, "seed": 5}}),
        );
        let counts = tb.run(&mut |_| {}).expect("runs");
        assert!(
            counts.dropped.rule > 0 && counts.dropped.imissed == 0 && counts.dropped.nic == 0,
            "{:?}",
            counts.dropped
        );
        assert_eq!(tb.rx.per_ring.iter().sum::<u64>(), tb.rx.packets);
        assert_eq!(
            tb.core.queue_of_ring,
            [2],
            "one ring: the queue of the rule that matched"
        );
    }

    /// Runs `tb` and checks its packet account: every term counted, and they add up.
    fn account_of(tb: &mut super::super::Testbed) -> crate::connectx::result::Result {
        let counts = tb.run(&mut |_| {}).expect("runs");
        let r = tb.summary(&counts, 0.0);
        let a = &r.packets;
        let d = &a.dropped;
        assert_eq!(
            a.offered,
            a.delivered + d.imissed + d.nic + d.rule + a.in_flight_at_end,
            "{a:?}"
        );
        let f = &a.in_flight;
        assert_eq!(a.in_flight_at_end, f.nic + f.rx_rings + f.returning, "{a:?}");
        assert_eq!(a.delivered, tb.rx.packets);
        assert_eq!(a.delivered, r.queues.values().map(|q| q.packets).sum::<u64>());
        // The received rate over its window is the delivered count.
        let from_rate = r.rx_mpps * 1e6 * r.rx_window_s;
        assert!(
            (from_rate - a.delivered as f64).abs() <= 1e-6 * a.delivered as f64,
            "{from_rate} vs {}",
            a.delivered
        );
        r
    }

    #[test]
    fn test_packets_in_flight_at_the_end_are_counted_where_they_are() {
        let traffic = json!({"flows": 100, "size": {"fixed": 64}, "rate": {"gbps": 20.0}, "seed": 5});
        // Nothing in flight: 1 ms at 20 Gb/s of 64 B, which the default path keeps up with.
        let mut tb = testbed(json!({"traffic": traffic, "duration_ns": 1_000_000}));
        let r = account_of(&mut tb);
        assert_eq!(r.packets.in_flight_at_end, 0, "{:?}", r.packets);
        assert!(r.packets.delivered > 0);
        let calm = r.packets.offered;
        // A core 100x slower: its rings stay full past the 10 ms drain (a ring of 1024 at 20 µs per
        // packet takes 20 ms), so packets are still in the rings when the drain ends.
        let mut tb = testbed(json!({"traffic": traffic, "duration_ns": 1_000_000}));
        tb.core.cost.per_packet = SimDuration::from_us(20);
        let r = account_of(&mut tb);
        let f = &r.packets.in_flight;
        assert!(f.rx_rings > 0 && f.nic == 0 && f.returning == 0, "{f:?}");
        assert!(r.packets.dropped.imissed > 0, "the rings overflowed: {:?}", r.packets);
        assert_eq!(r.packets.offered, calm, "the same traffic");
        // A return path of 15 ms (the receiver's window ends 10 ms after the 1 ms run): every packet
        // forwarded is still on its way back, none delivered.
        let mut tb = testbed(json!({"traffic": traffic, "duration_ns": 1_000_000}));
        tb.rx.return_time = SimDuration::from_ms(15);
        let r = account_of(&mut tb);
        let (a, d) = (&r.packets, &r.packets.dropped);
        assert_eq!(a.delivered, 0);
        assert_eq!(a.in_flight.returning, a.offered - d.imissed - d.nic - d.rule, "{a:?}");
        assert!(a.in_flight.returning > 0, "{a:?}");
        // A root table overflowed by 60,000 rules (PAM'21 Fig. 2a past the knee): each lookup walks the
        // firmware's overflow list, the NIC buffer fills, and what it holds at the end is still in
        // the NIC when the drain ends, though the lazily advanced core has already taken some of it
        // (their DMA completes after the drain's end).
        let mut tb = testbed(json!({
            "traffic": {"flows": 10000, "size": {"fixed": 64}, "rate": {"gbps": 3.5}, "seed": 5},
            "rules": {"generated": {"kind": "exact5", "count": 60000, "groups": 0, "seed": 2}},
            "duration_ns": 5_000_000,
        }));
        let r = account_of(&mut tb);
        let f = &r.packets.in_flight;
        assert!(f.nic > 0 && r.packets.dropped.nic > 0, "{:?}", r.packets);
    }

    #[test]
    fn test_a_packet_late_for_the_window_as_it_stood_counts_if_within_the_final_one() {
        // 20,000 frames of 1500 B due at t = 0 in a 100 µs run: the port sends them until 2.432 ms
        // (121.6 ns each), so the receiver's window grows to 12.432 ms. With a 12 ms return path each
        // packet comes back after the window as it stood when it was forwarded (10 ms after what the
        // port had sent by then), but those arriving by 12.432 ms count: the ones sent in the first
        // ~0.43 ms, less their time through the NIC and the core.
        let mut tb = testbed(
            json!({"traffic": {"flows": 10, "size": {"fixed": 1500}, "rate": "unlimited",
                                                 "packets": 20_000, "seed": 5}, "rules": null, "duration_ns": 100_000}),
        );
        tb.rx.return_time = SimDuration::from_ms(12);
        let r = account_of(&mut tb);
        let a = &r.packets;
        let through_ns = r.latency_us.p50 * 1e3 - 12e6;
        let want = (432_000.0 - through_ns) / 121.6;
        assert!(
            (a.delivered as f64 - want).abs() <= 2.0,
            "{} delivered, {want:.1} expected ({through_ns} ns through the NIC and the core)",
            a.delivered
        );
        assert_eq!(a.delivered + a.in_flight.returning, a.offered, "{a:?}");
    }

    #[test]
    fn test_the_account_covers_packets_sent_after_the_warmup() {
        // 64 B at line rate: the NIC buffer and the rings drop from the start, warm-up included.
        let traffic = json!({"flows": 100, "size": {"fixed": 64}, "rate": {"gbps": 100.0}, "seed": 5});
        let mut tb = testbed(json!({"traffic": traffic, "duration_ns": 1_000_000, "warmup_ns": 400_000}));
        let r = account_of(&mut tb);
        let (a, d) = (&r.packets, &r.dropped);
        // 60% of 1 ms of 64 B frames at 100 Gb/s (84 B on the wire: 6.72 ns each).
        let want = (600_000.0 / 6.72) as u64;
        assert!(a.offered.abs_diff(want) <= 1, "{} vs {want}", a.offered);
        assert!(r.sim.packets > a.offered + 50_000, "{} produced", r.sim.packets);
        // The top-level drops count the warm-up too.
        let total = d.imissed + d.nic + d.rule;
        let measured = a.dropped.imissed + a.dropped.nic + a.dropped.rule;
        assert!(measured > 0 && total > measured, "{d:?} vs {:?}", a.dropped);
        assert!(
            a.dropped.imissed <= d.imissed && a.dropped.nic <= d.nic && a.dropped.rule <= d.rule,
            "{d:?} vs {:?}",
            a.dropped
        );
        assert!((r.loss_ratio - (1.0 - a.delivered as f64 / a.offered as f64)).abs() < 1e-12);
    }

    #[test]
    fn test_a_paced_packet_is_measured_from_when_the_port_sent_it() {
        // Every packet due at t = 0 and a warm-up of 100 µs: the port sends them back to back, so
        // those it sends after the warm-up are measured, though all were due before it.
        let mut tb = testbed(
            json!({"traffic": {"flows": 10, "size": {"fixed": 1500}, "rate": "unlimited",
                                                 "packets": 2_000, "seed": 5}, "rules": null, "warmup_ns": 100_000}),
        );
        let r = account_of(&mut tb);
        // 1520 B on the wire at 100 Gb/s: 121.6 ns each, 822 of them (823 started) by 100 µs.
        assert_eq!(r.packets.offered, 2_000 - 823, "{:?}", r.packets);
        assert_eq!(r.packets.delivered, r.packets.offered, "{:?}", r.packets);
    }

    #[test]
    fn test_traffic_faster_than_the_line_is_paced_by_the_port_not_queued_in_the_dut() {
        // Every packet due at t = 0 (no pacing by the source, as a trace replayed faster than the
        // link): the port sends them back to back, nothing arrives above the line rate, the
        // DUT's latency stays that of an unloaded path, and the wait is reported as pacing.
        let mut tb = testbed(
            json!({"traffic": {"flows": 10, "size": {"fixed": 1500}, "rate": "unlimited",
                                                 "packets": 20_000, "seed": 5}, "rules": null}),
        );
        let counts = tb.run(&mut |_| {}).expect("runs");
        let r = tb.summary(&counts, 0.0);
        let link = tb.p.link_gbps;
        assert!(
            r.rx_gbps <= link * (1.0 + 1e-9) && r.offered_gbps <= link * (1.0 + 1e-9),
            "{} {}",
            r.rx_gbps,
            r.offered_gbps
        );
        let d = &counts.dropped;
        assert_eq!(counts.packets, tb.rx.packets + d.imissed + d.nic + d.rule, "{d:?}");
        // 20,000 frames of 1520 B on the wire take 2.43 ms at 100 Gb/s: the last waited that long.
        let paced_us = 20_000.0 * 1520.0 * 8.0 / (link * 1e3);
        assert!(
            (r.sim.link_paced_max_us - paced_us).abs() < 0.01 * paced_us,
            "{} vs {paced_us}",
            r.sim.link_paced_max_us
        );
        assert!(
            r.latency_us.max < 100.0,
            "latency is the DUT's, not the port's backlog: {:?}",
            r.latency_us
        );
    }
}
