//! One pass of a trace through the datapath: a [`Pass`] takes packets one at a time (from a
//! pcap, or frames a caller made, such as the VM's side of a PVP run) and ends in a
//! [`result::Result`]. Several passes over one trace share one [`Setup`] (the rules, read once)
//! and keep their own state (bridge, cache, counters): two passes fed in turn give what two runs
//! one after the other would.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet, VecDeque};

use nicbench_rules::openflow::{DpAction, DpFlow, DpPlacement, OfField, OfRule, PortRef};
use nicbench_sim::{SimDuration, SimTime};

use super::key::{self, Fields};
use super::result::{self, MegaflowOut};
use super::tunnel::{self, TunnelAction, Underlay};
use super::{cache, megaflow, offload, pipeline};
use super::{CacheConfig, HostCosts, LookupConfig, OffloadCaps, PortInfo, TcPolicy};
use crate::ModelError;

/// Packets between two progress reports of a pass.
pub const PROGRESS_EVERY_PACKETS: u64 = 1 << 16;

/// What every pass of a run shares.
pub struct Setup {
    pub rules: Vec<OfRule>,
    pub lookup: LookupConfig,
    pub cache: CacheConfig,
    /// `other_config:hw-offload`.
    pub hw_offload: bool,
    pub tc_policy: TcPolicy,
    /// The NIC whose capabilities decide offload.
    pub caps: Option<OffloadCaps>,
    pub costs: HostCosts,
}

impl Setup {
    /// `n-handler-threads`: the request's, else one per core the host gives the datapath.
    pub fn handler_threads(&self) -> u32 {
        self.cache
            .handler_threads
            .unwrap_or(self.costs.host_datapath_cores.value.max(1.0) as u32)
            .max(1)
    }
}

/// Per-pass state: the bridge, the cache, its flows' counters, the offload bookkeeping.
pub struct Pass<'a> {
    setup: &'a Setup,
    bridge: pipeline::Bridge,
    /// The underlay's physical port is where the packets arrive (VXLAN is then decapsulated).
    from_underlay: bool,
    in_ofport: u32,
    in_dp: u32,
    cache: cache::MegaflowCache,
    /// Per entry: packets, bytes, last used, first packet.
    stats: Vec<(u64, u64, SimTime, u64)>,
    masks_hw: HashSet<Vec<(OfField, u128)>>,
    refusals: BTreeMap<String, u64>,
    upcalls: u64,
    handlers: Handlers,
    limit_hits: u64,
    hw_packets: u64,
    sw_packets: u64,
    packets: u64,
    bytes: u64,
    first_ts: Option<u64>,
    now: SimTime,
}

/// An upcall a handler is working on or has queued: its megaflow goes in when it finishes.
struct PendingFlow {
    key: Fields,
    mask: Fields,
    value: Fields,
    flow: DpFlow,
    index: u64,
}

/// The handler threads (`n-handler-threads`): per thread the finish times of the upcalls it holds
/// (queued or in service, FIFO), when it is free next, and its busy time; the megaflows of
/// upcalls not yet finished, in finish order, and by mask (what a later miss is a duplicate of).
struct Handlers {
    upcall: SimDuration,
    queue_bound: usize,
    threads: Vec<(VecDeque<SimTime>, SimTime)>,
    busy: SimDuration,
    /// `busy` at the last revalidator dump.
    busy_at_dump: SimDuration,
    pending: BinaryHeap<Reverse<(SimTime, u64)>>,
    flows: HashMap<u64, PendingFlow>,
    by_mask: Vec<(Fields, HashMap<Fields, u32>)>,
    next_id: u64,
    handled: u64,
    duplicates: u64,
    lost: u64,
    max_queue: usize,
    first_upcall: Option<SimTime>,
    last_install: Option<SimTime>,
    installed: u64,
}

impl Handlers {
    fn new(threads: u32, upcall_us: f64, queue_bound: f64) -> Handlers {
        Handlers {
            upcall: SimDuration::from_ps_f64(upcall_us.max(0.0) * 1e6),
            queue_bound: queue_bound.max(0.0) as usize,
            threads: vec![(VecDeque::new(), SimTime::ZERO); threads.max(1) as usize],
            busy: SimDuration::ZERO,
            busy_at_dump: SimDuration::ZERO,
            pending: BinaryHeap::new(),
            flows: HashMap::new(),
            by_mask: Vec::new(),
            next_id: 0,
            handled: 0,
            duplicates: 0,
            lost: 0,
            max_queue: 0,
            first_upcall: None,
            last_install: None,
            installed: 0,
        }
    }

    /// True when a queued, unfinished upcall's megaflow covers `ck`.
    fn covers(&self, ck: &Fields) -> bool {
        self.by_mask.iter().any(|(m, v)| v.contains_key(&ck.and(m)))
    }

    /// Queues an upcall of key `ck` at `now` on its handler: its finish time, or `None` when the
    /// handler's queue is full (the upcall is lost).
    fn enqueue(&mut self, ck: &Fields, now: SimTime) -> Option<SimTime> {
        let n = self.threads.len() as u64;
        let (queue, free) = &mut self.threads[(key_hash(ck) % n) as usize];
        while queue.front().is_some_and(|&t| t <= now) {
            queue.pop_front();
        }
        if queue.len() >= self.queue_bound {
            self.lost += 1;
            return None;
        }
        let finish = (*free).max(now) + self.upcall;
        *free = finish;
        queue.push_back(finish);
        self.max_queue = self.max_queue.max(queue.len());
        self.busy += self.upcall;
        self.handled += 1;
        self.first_upcall.get_or_insert(now);
        Some(finish)
    }

    fn add_pending(&mut self, finish: SimTime, flow: PendingFlow) {
        let id = self.next_id;
        self.next_id += 1;
        let pos = self
            .by_mask
            .iter()
            .position(|(m, _)| *m == flow.mask)
            .unwrap_or_else(|| {
                self.by_mask.push((flow.mask, HashMap::new()));
                self.by_mask.len() - 1
            });
        *self.by_mask[pos].1.entry(flow.value).or_default() += 1;
        self.pending.push(Reverse((finish, id)));
        self.flows.insert(id, flow);
    }

    /// The next upcall to finish, if it finishes by `until`.
    fn pop_due(&mut self, until: SimTime) -> Option<(SimTime, PendingFlow)> {
        let Reverse((at, id)) = *self.pending.peek().filter(|Reverse((at, _))| *at <= until)?;
        self.pending.pop();
        let flow = self.flows.remove(&id)?;
        if let Some((_, v)) = self.by_mask.iter_mut().find(|(m, _)| *m == flow.mask) {
            if let Some(c) = v.get_mut(&flow.value) {
                *c -= 1;
                if *c == 0 {
                    v.remove(&flow.value);
                }
            }
        }
        Some((at, flow))
    }

    fn next_finish(&self) -> Option<SimTime> {
        self.pending.peek().map(|Reverse((at, _))| *at)
    }
}

/// FNV-1a over the key's fields: which handler a flow's upcalls go to (fixed across platforms and
/// Rust releases, unlike std's hasher, so runs are reproducible).
fn key_hash(k: &Fields) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in k.0.iter().flat_map(|w| w.to_le_bytes()) {
        h = (h ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Where a datapath pass's key comes from: the OpenFlow bridge, or the underlay bridge.
enum Walker {
    Bridge,
    Underlay,
}

impl<'a> Pass<'a> {
    /// A pass of packets arriving on `in_port` (a port of `ports`, or `underlay`'s physical port).
    pub fn new(
        setup: &'a Setup,
        ports: &[PortInfo],
        underlay: Option<&Underlay>,
        in_port: &str,
    ) -> Result<Pass<'a>, ModelError> {
        let mut bridge = pipeline::Bridge::new(&setup.rules, ports, &setup.lookup)?;
        bridge.set_underlay(underlay)?;
        let underlay_in = underlay.filter(|u| u.port == in_port);
        let (in_ofport, in_dp) = match underlay_in {
            Some(u) => (u.dp_port, u.dp_port),
            None => {
                let of = bridge
                    .resolve(&PortRef::Name(in_port.to_string()))
                    .map_err(|e| ModelError::Scenario(format!("in_port: {e}")))?;
                (of, bridge.dp_port(of).unwrap_or(of))
            }
        };
        Ok(Pass {
            setup,
            bridge,
            from_underlay: underlay_in.is_some(),
            in_ofport,
            in_dp,
            cache: cache::MegaflowCache::new(&setup.cache, setup.costs.revalidate_flow_us.value)
                .with_cores(setup.costs.host_datapath_cores.value),
            stats: Vec::new(),
            masks_hw: HashSet::new(),
            refusals: BTreeMap::new(),
            upcalls: 0,
            handlers: Handlers::new(
                setup.handler_threads(),
                setup.costs.upcall_us.value,
                setup.costs.upcall_queue.value,
            ),
            limit_hits: 0,
            hw_packets: 0,
            sw_packets: 0,
            packets: 0,
            bytes: 0,
            first_ts: None,
            now: SimTime::ZERO,
        })
    }

    /// Packets taken so far.
    pub fn packets(&self) -> u64 {
        self.packets
    }

    /// One Ethernet frame (`data`, captured) of `orig_len` bytes at `ts_ns`, in trace order;
    /// simulated time is the timestamps relative to the first packet's.
    pub fn packet(&mut self, ts_ns: u64, orig_len: u32, data: &[u8]) {
        let first = *self.first_ts.get_or_insert(ts_ns);
        self.now = SimTime::from_ns(ts_ns.saturating_sub(first));
        let now = self.now;
        self.advance(now);
        let len = u64::from(orig_len);
        let k = key::flow_key(data, self.in_ofport);
        let index = self.packets;
        self.packets += 1;
        self.bytes += len;
        if !self.from_underlay {
            self.pass(Walker::Bridge, &k, self.in_dp, len, now, index);
            return;
        }
        let actions = self.pass(Walker::Underlay, &k, self.in_dp, len, now, index);
        // tnl_pop: the inner packet goes through the datapath again, from the tunnel port.
        let Some(udp_port) = actions.iter().find_map(|a| match tunnel::tunnel_action(a) {
            Some(TunnelAction::Pop(port)) => Some(port),
            _ => None,
        }) else {
            return;
        };
        let Some(d) = tunnel::parse_vxlan(data, udp_port) else {
            return;
        };
        let Some(port) = self.bridge.tunnel_port_for(udp_port, d.src, d.vni).cloned() else {
            return;
        };
        let inner = tunnel::overlay_key(&d, port.ofport);
        let inner_len = len.saturating_sub(tunnel::VXLAN_HEADER_BYTES as u64);
        self.pass(Walker::Bridge, &inner, port.dp_port, inner_len, now, index);
    }

    /// One pass of a packet through the datapath: the megaflow cache, or an upcall queued to a
    /// handler thread (lost when its queue is full) that walks the pipeline now and installs the
    /// megaflow when it finishes (nothing for a duplicate of a pending upcall). `k` has the
    /// OpenFlow in_port; the cache and the megaflow use the datapath port `in_dp` (unique across
    /// bridges, as in OVS). Returns the datapath actions the packet got.
    fn pass(&mut self, walker: Walker, k: &Fields, in_dp: u32, len: u64, now: SimTime, index: u64) -> Vec<DpAction> {
        let mut ck = *k;
        ck[OfField::InPort] = u128::from(in_dp);
        if let Some(i) = self.cache.lookup(&ck) {
            let e = &mut self.cache.entries[i];
            e.last_used = now;
            self.stats[i].0 += 1;
            self.stats[i].1 += len;
            self.stats[i].2 = now;
            if e.offloaded {
                self.hw_packets += 1;
            } else {
                self.sw_packets += 1;
            }
            return e.flow.actions.clone();
        }
        self.upcalls += 1;
        let duplicate = self.handlers.covers(&ck);
        let Some(finish) = self.handlers.enqueue(&ck, now) else {
            return vec![DpAction::Drop]; // lost: the queue is full, the packet goes
        };
        self.sw_packets += 1; // the upcalled packet itself is executed in software, by the handler
        let (wc, actions) = match walker {
            Walker::Bridge => {
                let x = self.bridge.xlate(k);
                (x.wc, x.actions)
            }
            Walker::Underlay => match self.bridge.underlay_mut() {
                Some(u) => u.xlate(k),
                None => (Fields::default(), vec![DpAction::Drop]),
            },
        };
        if duplicate {
            // The handler finds the flow's ukey there (`handler_duplicate_upcall`) and installs nothing.
            self.handlers.duplicates += 1;
            return actions;
        }
        let mask = megaflow::finish_wildcards(k, &wc);
        let mut flow = megaflow::to_dp_flow(k, &mask, in_dp, actions.clone());
        tunnel::print_tunnel_meta(&mut flow);
        let value = ck.and(&mask);
        self.handlers.add_pending(
            finish,
            PendingFlow {
                key: *k,
                mask,
                value,
                flow,
                index,
            },
        );
        actions
    }

    /// Runs the handlers' flow installs and the revalidators' dumps due up to `now`, in time order.
    fn advance(&mut self, now: SimTime) {
        loop {
            let dump = self.cache.next_dump();
            match self.handlers.next_finish() {
                Some(at) if at <= now && at <= dump => {
                    if let Some((at, f)) = self.handlers.pop_due(at) {
                        self.install(at, f);
                    }
                }
                _ if dump <= now => {
                    let busy = self.handlers.busy - self.handlers.busy_at_dump;
                    self.handlers.busy_at_dump = self.handlers.busy;
                    let cores = busy.as_secs_f64() / self.cache.period().as_secs_f64();
                    self.cache.dump_next(cores);
                }
                _ => return,
            }
        }
    }

    /// A finished upcall's megaflow, installed at `at` unless the datapath is at its flow limit.
    fn install(&mut self, at: SimTime, f: PendingFlow) {
        let PendingFlow {
            key: k,
            mask,
            value,
            mut flow,
            index,
        } = f;
        if !self.cache.may_install() {
            self.limit_hits += 1;
            return;
        }
        let setup = self.setup;
        let decision = match &setup.caps {
            None if !setup.hw_offload => offload::decide(false, setup.tc_policy, None, || None),
            _ => {
                let ovs = offload::ovs_tc_refusal(&k, &mask, &flow.actions);
                let offloaded_now = self.cache.n_offloaded();
                let (caps, masks_hw) = (&setup.caps, &self.masks_hw);
                offload::decide(setup.hw_offload, setup.tc_policy, ovs, || {
                    caps.as_ref()
                        .and_then(|c| offload::nic_refusal(c, &k, &flow, masks_hw, offloaded_now))
                })
            }
        };
        if decision.offloaded {
            self.masks_hw.insert(offload::mask_signature(&flow));
        }
        if let Some(r) = &decision.reason {
            *self.refusals.entry(r.clone()).or_default() += 1;
        }
        if setup.hw_offload {
            flow.placement = DpPlacement {
                offloaded: Some(decision.offloaded),
                dp: Some(decision.dp.to_string()),
            };
        }
        self.cache.install(cache::Entry {
            mask,
            value,
            flow,
            created: at,
            last_used: at,
            offloaded: decision.offloaded,
            dp: decision.dp,
            reason: decision.reason,
            alive: true,
        });
        self.handlers.installed += 1;
        self.handlers.last_install = Some(at);
        self.stats.push((0, 0, at, index)); // as OVS: the upcalled packet is not counted on the flow
    }

    /// The pass's outcome. Upcalls still queued at the last packet finish first (their flows are
    /// installed; no revalidator dump runs after the last packet).
    pub fn finish(mut self) -> result::Result {
        self.advance(self.now);
        while let Some((at, f)) = self.handlers.pop_due(SimTime::MAX) {
            self.install(at, f);
        }
        let Pass {
            setup,
            cache,
            stats,
            refusals,
            upcalls,
            handlers,
            limit_hits,
            hw_packets,
            sw_packets,
            packets,
            bytes,
            now,
            ..
        } = self;
        let duration_s = now.as_secs_f64();
        let megaflows: Vec<MegaflowOut> = cache
            .entries
            .iter()
            .zip(&stats)
            .map(|(e, s)| {
                let mut flow = e.flow.clone();
                flow.packets = s.0;
                flow.bytes = s.1;
                flow.used = Some(format!("{:.3}s", now.since(s.2).as_secs_f64()));
                MegaflowOut {
                    // The shared dpctl writer, so megaflows print exactly as parsed dumps are written back.
                    text: nicbench_rules::openflow::dp_flow_to_string(&flow)
                        .unwrap_or_else(|e| format!("(megaflow not expressible in dpctl syntax: {e})")),
                    flow,
                    reason: e.reason.clone(),
                    installed: e.alive,
                    first_packet: s.3,
                }
            })
            .collect();
        let offloaded_flows = cache.entries.iter().filter(|e| e.offloaded).count() as u64;
        let costs = &setup.costs;
        let handler_busy_s = handlers.busy.as_secs_f64();
        let revalidator_busy_s = cache.stats.dump_ms_total * 1e-3 * f64::from(setup.cache.revalidator_threads.max(1)); // dump wall time × threads
        let host_busy_core_s =
            sw_packets as f64 * costs.sw_packet_ns.value * 1e-9 + handler_busy_s + revalidator_busy_s;
        let per_s = |v: f64| (duration_s > 0.0).then(|| v / duration_s);
        let n_handlers = handlers.threads.len() as u32;
        let setup_span = match (handlers.first_upcall, handlers.last_install) {
            (Some(a), Some(b)) if b > a => Some(b.since(a).as_secs_f64()),
            _ => None,
        };
        let flow_setup = result::FlowSetup {
            handler_threads: n_handlers,
            upcalls_handled: handlers.handled,
            duplicate_upcalls: handlers.duplicates,
            lost_upcalls: handlers.lost,
            flows_set_up: handlers.installed,
            setup_per_s: setup_span.map(|s| handlers.installed as f64 / s),
            max_queued: handlers.max_queue as u64,
            handler_busy_s,
            handler_utilization: per_s(handler_busy_s / f64::from(n_handlers)),
            revalidator_busy_s,
            revalidator_utilization: per_s(revalidator_busy_s / f64::from(setup.cache.revalidator_threads.max(1))),
            setup_cores_busy: per_s(handler_busy_s + revalidator_busy_s),
        };
        result::Result {
            not_offloaded_flows: cache.entries.len() as u64 - offloaded_flows,
            offloaded_flows,
            megaflows,
            refusals,
            packets,
            bytes,
            duration_s,
            upcalls,
            upcalls_per_s: per_s(upcalls as f64),
            flow_limit_hits: limit_hits,
            flow_setup,
            hw_packets,
            sw_packets,
            revalidators: cache.stats.clone(),
            host_busy_core_s,
            host_cores_busy: per_s(host_busy_core_s),
            costs: costs.clone(),
            caps: setup.caps.clone(),
            in_port_unmatched: None,
        }
    }
}

/// Reads trace `path` record by record into `take(ts_ns, orig_len, frame)`: Ethernet frames
/// only (OpenFlow keys start at the Ethernet header: dl_src, dl_dst, dl_type, which cooked,
/// loopback and raw-IP captures do not record); errors name the trace and the packet.
pub fn read_trace(
    path: &str,
    mut take: impl FnMut(u64, u32, &[u8]) -> Result<(), ModelError>,
) -> Result<u64, ModelError> {
    let mut src = nicbench_pcap::PcapSource::open(path).map_err(|e| ModelError::trace(path, e))?;
    let mut packets = 0u64;
    while let Some(p) = src.next_packet() {
        let p = p.map_err(|e| ModelError::trace(path, crate::connectx::traffic::packet_error(packets, &e)))?;
        if p.linktype != nicbench_pcap::LinkType::ETHERNET {
            return Err(ModelError::trace(
                path,
                format!(
                    "packet {packets}: link type {}: the virtual OVS datapath needs Ethernet frames (EN10MB (1))",
                    p.linktype
                ),
            ));
        }
        take(p.ts_ns, p.orig_len, p.data)?;
        packets += 1;
    }
    Ok(packets)
}
