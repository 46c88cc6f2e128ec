//! One pass of a trace through the datapath: a [`Pass`] takes packets one at a time (from a
//! pcap, or frames a caller made, such as the VM's side of a PVP run) and ends in a
//! [`result::Result`]. Several passes over one trace share one [`Setup`] (the rules, read once)
//! and keep their own state (bridge, cache, counters): two passes fed in turn give what two runs
//! one after the other would.

use std::collections::{BTreeMap, HashSet};

use nicbench_rules::openflow::{DpAction, DpPlacement, OfField, OfRule, PortRef};
use nicbench_sim::SimTime;

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
    limit_hits: u64,
    hw_packets: u64,
    sw_packets: u64,
    packets: u64,
    bytes: u64,
    first_ts: Option<u64>,
    now: SimTime,
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
            cache: cache::MegaflowCache::new(&setup.cache, setup.costs.revalidate_flow_us.value),
            stats: Vec::new(),
            masks_hw: HashSet::new(),
            refusals: BTreeMap::new(),
            upcalls: 0,
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
        self.cache.revalidate_until(now);
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

    /// One pass of a packet through the datapath: the megaflow cache, or an upcall that walks
    /// the pipeline and installs the megaflow. `k` has the OpenFlow in_port; the cache and the
    /// megaflow use the datapath port `in_dp` (unique across bridges, as in OVS). Returns the
    /// datapath actions the packet got.
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
        self.sw_packets += 1; // the upcalled packet itself is executed in software
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
        let mask = megaflow::finish_wildcards(k, &wc);
        let mut flow = megaflow::to_dp_flow(k, &mask, in_dp, actions.clone());
        tunnel::print_tunnel_meta(&mut flow);
        if !self.cache.may_install() {
            self.limit_hits += 1;
            return actions;
        }
        let setup = self.setup;
        let decision = match &setup.caps {
            None if !setup.hw_offload => offload::decide(false, setup.tc_policy, None, || None),
            _ => {
                let ovs = offload::ovs_tc_refusal(k, &mask, &flow.actions);
                let offloaded_now = self.cache.n_offloaded();
                let (caps, masks_hw) = (&setup.caps, &self.masks_hw);
                offload::decide(setup.hw_offload, setup.tc_policy, ovs, || {
                    caps.as_ref()
                        .and_then(|c| offload::nic_refusal(c, k, &flow, masks_hw, offloaded_now))
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
        let value = ck.and(&mask);
        self.cache.install(cache::Entry {
            mask,
            value,
            flow,
            created: now,
            last_used: now,
            offloaded: decision.offloaded,
            dp: decision.dp,
            reason: decision.reason,
            alive: true,
        });
        self.stats.push((0, 0, now, index)); // as OVS: the upcalled packet is not counted on the flow
        actions
    }

    /// The pass's outcome.
    pub fn finish(self) -> result::Result {
        let Pass {
            setup,
            cache,
            stats,
            refusals,
            upcalls,
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
        let host_busy_core_s = sw_packets as f64 * costs.sw_packet_ns.value * 1e-9
            + upcalls as f64 * costs.upcall_us.value * 1e-6
            + cache.stats.dump_ms_total * 1e-3 * f64::from(setup.cache.revalidator_threads.max(1)); // dump wall time × threads
        let per_s = |v: f64| (duration_s > 0.0).then(|| v / duration_s);
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
