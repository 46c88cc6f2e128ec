//! A virtual Open vSwitch datapath (issue 16): the OpenFlow pipeline on OVS's classifier, the
//! megaflow cache it fills (which header bits each lookup consulted become the megaflow's
//! mask), upcalls and revalidators, and `hw-offload` to a NIC through tc flower.
//!
//! ```text
//!  pcap ─▶ flow key ─▶ megaflow cache ──hit──▶ count on the flow (offloaded: NIC; else host)
//!                          │ miss (upcall, handler cost)
//!                          ▼
//!           OpenFlow tables (pipeline.rs; classifier + un-wildcarding: megaflow.rs)
//!                          │ DpFlow = key & consulted bits, datapath actions
//!                          ▼
//!           offload.rs: OVS tc layer ─▶ NIC caps ─▶ dp:tc offloaded yes/no, or dp:ovs
//!           cache.rs:   install (flow limit), revalidators (max-idle, dynamic flow limit)
//! ```
//!
//! VXLAN ports (`tunnel.rs`): packets on the underlay's physical port pass the underlay bridge
//! first; a `tnl_pop` sends the inner packet through the cache again from the tunnel port.
//!
//! One [`Request`] in, one [`result::Result`] out ([`Vswitch`], the model in the registry). Packets are taken in file
//! order; simulated time is the pcap's timestamps relative to its first packet.
//!
//! Invariants: no published result is used at run time; a run is a pure function of the
//! request (rules, ports, pcap, config, costs).

pub mod cache;
pub mod key;
pub mod megaflow;
pub mod offload;
pub mod pipeline;
pub mod result;
pub mod trie;
pub mod tunnel;

use std::collections::{BTreeMap, HashSet};

use key::Fields;
use nicbench_rules::openflow::{DpAction, DpPlacement, OfField, OfRule, PortRef};
use nicbench_sim::SimTime;
use serde::{Deserialize, Serialize};

use crate::model::Model;
use crate::ModelError;
pub use cache::CacheConfig;
pub use megaflow::LookupConfig;
pub use offload::{OffloadCaps, TcPolicy};
pub use pipeline::PortInfo;
pub use tunnel::{Underlay, VxlanOptions};

/// A cost parameter: value, unit and where the value comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CostParam {
    pub value: f64,
    pub unit: String,
    pub provenance: String,
}

/// The host's costs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostCosts {
    /// Per packet handled in software (kernel datapath or tc software) \[ns\].
    pub sw_packet_ns: CostParam,
    /// Per upcall on a handler thread (classifier walk, flow install) \[µs\].
    pub upcall_us: CostParam,
    /// Per flow per revalidator dump \[µs\].
    pub revalidate_flow_us: CostParam,
}

/// One run: rules (as `OfRule` JSON), the bridge's ports, a pcap received on `in_port`.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// OpenFlow rules (`nicbench_rules::openflow::OfRule` as JSON).
    #[schemars(with = "Vec<serde_json::Value>")]
    #[serde(deserialize_with = "rules_from_json")]
    pub rules: Vec<OfRule>,
    /// The bridge's ports (the LOCAL port has ofport 65534).
    pub ports: Vec<PortInfo>,
    /// Packets, in file order.
    pub pcap: String,
    /// The port (name) every packet of the pcap arrives on: a port of `ports`, or the
    /// underlay's physical port (VXLAN packets to the underlay IP are then decapsulated).
    pub in_port: String,
    /// The underlay bridge behind the VXLAN ports (needed when a port has `tunnel` options).
    #[serde(default)]
    pub underlay: Option<Underlay>,
    #[serde(default)]
    pub lookup: LookupConfig,
    #[serde(default)]
    pub cache: CacheConfig,
    /// `other_config:hw-offload`.
    #[serde(default)]
    pub hw_offload: bool,
    #[serde(default)]
    pub tc_policy: TcPolicy,
    /// The NIC whose capabilities decide offload (`agilio-cx-25g`, `connectx5-25g`).
    #[serde(default)]
    pub nic: Option<String>,
    pub costs: HostCosts,
}

/// `OfRule`s from JSON. `OfAction` is an internally tagged enum, and serde cannot read a `u128`
/// (the `set_field` value and mask) through the buffer such enums are read with ("u128 is not
/// supported"); so `set_field` actions are read here by hand (numbers, or strings for values
/// above 2^64), every other part by serde.
fn rules_from_json<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<OfRule>, D::Error> {
    use serde::de::Error;
    let values = Vec::<serde_json::Value>::deserialize(d)?;
    values
        .into_iter()
        .enumerate()
        .map(|(i, v)| rule_from_json(v).map_err(|e| D::Error::custom(format!("rule {i}: {e}"))))
        .collect()
}

fn u128_from_json(v: &serde_json::Value) -> Result<u128, String> {
    match v {
        serde_json::Value::Number(n) => n
            .as_u64()
            .map(u128::from)
            .ok_or_else(|| format!("{n} is not an unsigned integer below 2^64 (write larger values as strings)")),
        serde_json::Value::String(s) => {
            let parsed = match s.strip_prefix("0x") {
                Some(hex) => u128::from_str_radix(hex, 16),
                None => s.parse(),
            };
            parsed.map_err(|e| format!("'{s}': {e}"))
        }
        other => Err(format!("expected a number, found {other}")),
    }
}

fn rule_from_json(mut v: serde_json::Value) -> Result<OfRule, String> {
    use nicbench_rules::openflow::FieldMatch;
    use nicbench_rules::openflow::OfAction;
    let actions = v.get_mut("actions").map(serde_json::Value::take).unwrap_or_default();
    if let Some(obj) = v.as_object_mut() {
        obj.insert("actions".into(), serde_json::Value::Array(Vec::new()));
    }
    // Match values are u128 too (IPv6 addresses): read by hand, as set_field's below.
    let fields = v
        .get_mut("matches")
        .and_then(|m| m.get_mut("fields"))
        .map(serde_json::Value::take)
        .unwrap_or_default();
    if let Some(m) = v.get_mut("matches").and_then(serde_json::Value::as_object_mut) {
        m.insert("fields".into(), serde_json::Value::Array(Vec::new()));
    }
    let mut rule: OfRule = serde_json::from_value(v).map_err(|e| e.to_string())?;
    let fields = match fields {
        serde_json::Value::Array(f) => f,
        serde_json::Value::Null => Vec::new(),
        other => return Err(format!("matches.fields: expected a list, found {other}")),
    };
    for (j, f) in fields.into_iter().enumerate() {
        let field = serde_json::from_value(f.get("field").cloned().unwrap_or_default())
            .map_err(|e| format!("match {j}: field: {e}"))?;
        let value = u128_from_json(f.get("value").unwrap_or(&serde_json::Value::Null))
            .map_err(|e| format!("match {j}: value: {e}"))?;
        let mask = u128_from_json(f.get("mask").unwrap_or(&serde_json::Value::Null))
            .map_err(|e| format!("match {j}: mask: {e}"))?;
        rule.matches.fields.push(FieldMatch { field, value, mask });
    }
    let actions = match actions {
        serde_json::Value::Array(a) => a,
        other => return Err(format!("actions: expected a list, found {other}")),
    };
    for (j, a) in actions.into_iter().enumerate() {
        let action = if a.get("action").and_then(|t| t.as_str()) == Some("set_field") {
            let field = serde_json::from_value(a.get("field").cloned().unwrap_or_default())
                .map_err(|e| format!("action {j}: field: {e}"))?;
            let value = u128_from_json(a.get("value").unwrap_or(&serde_json::Value::Null))
                .map_err(|e| format!("action {j}: value: {e}"))?;
            let mask = u128_from_json(a.get("mask").unwrap_or(&serde_json::Value::Null))
                .map_err(|e| format!("action {j}: mask: {e}"))?;
            OfAction::SetField { field, value, mask }
        } else {
            serde_json::from_value(a).map_err(|e| format!("action {j}: {e}"))?
        };
        rule.actions.push(action);
    }
    Ok(rule)
}

impl Request {
    pub fn from_json(json: &str) -> Result<Request, ModelError> {
        serde_json::from_str(json).map_err(|e| ModelError::Scenario(format!("vswitch request: {e}")))
    }
}

/// The virtual OVS datapath in the registry: a [`Request`] (rules, ports, a trace) in, a
/// [`result::Result`] (the megaflows) out.
pub struct Vswitch;

impl Model for Vswitch {
    const NAME: &'static str = "vswitch";
    const SUMMARY: &'static str =
        "Open vSwitch's datapath: OpenFlow pipeline, megaflow un-wildcarding, revalidators, tc offload to a NIC";
    const PROFILE_KINDS: &'static [&'static str] = &[];
    type Request = Request;
    type Result = result::Result;

    fn request_from_json(text: &str) -> Result<Request, ModelError> {
        Request::from_json(text)
    }

    fn run(request: &Request, _progress: &mut dyn FnMut(u64)) -> Result<result::Result, ModelError> {
        simulate(request)
    }
}

/// Per-run state of the datapath: the cache, its flows' counters, the offload bookkeeping.
struct Datapath<'a> {
    req: &'a Request,
    caps: Option<OffloadCaps>,
    cache: cache::MegaflowCache,
    /// Per entry: packets, bytes, last used, first packet.
    stats: Vec<(u64, u64, SimTime, u64)>,
    masks_hw: HashSet<Vec<(OfField, u128)>>,
    refusals: BTreeMap<String, u64>,
    upcalls: u64,
    limit_hits: u64,
    hw_packets: u64,
    sw_packets: u64,
}

/// Where a datapath pass's key comes from: the OpenFlow bridge, or the underlay bridge.
enum Walker {
    Bridge,
    Underlay,
}

impl Datapath<'_> {
    /// One pass of a packet through the datapath: the megaflow cache, or an upcall that walks
    /// the pipeline and installs the megaflow. `k` has the OpenFlow in_port; the cache and the
    /// megaflow use the datapath port `in_dp` (unique across bridges, as in OVS). Returns the
    /// datapath actions the packet got.
    #[allow(clippy::too_many_arguments)]
    fn pass(
        &mut self,
        bridge: &mut pipeline::Bridge,
        walker: Walker,
        k: &Fields,
        in_dp: u32,
        len: u64,
        now: SimTime,
        index: u64,
    ) -> Vec<DpAction> {
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
                let x = bridge.xlate(k);
                (x.wc, x.actions)
            }
            Walker::Underlay => match bridge.underlay_mut() {
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
        let req = self.req;
        let decision = match &self.caps {
            None if !req.hw_offload => offload::decide(false, req.tc_policy, None, || None),
            _ => {
                let ovs = offload::ovs_tc_refusal(k, &mask, &flow.actions);
                let offloaded_now = self.cache.n_offloaded();
                let (caps, masks_hw) = (&self.caps, &self.masks_hw);
                offload::decide(req.hw_offload, req.tc_policy, ovs, || {
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
        if req.hw_offload {
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
}

/// The UDP port of a `tnl_pop(PORT)` action, if the actions decapsulate.
fn tnl_pop_port(actions: &[DpAction]) -> Option<u16> {
    actions.iter().find_map(|a| match a {
        DpAction::Tunnel { text } => text.strip_prefix("tnl_pop(")?.strip_suffix(')')?.parse().ok(),
        _ => None,
    })
}

/// Runs one request.
pub fn simulate(req: &Request) -> Result<result::Result, ModelError> {
    let mut bridge = pipeline::Bridge::new(&req.rules, &req.ports, &req.lookup)?;
    bridge.set_underlay(req.underlay.as_ref())?;
    let underlay_in = req.underlay.as_ref().filter(|u| u.port == req.in_port);
    let (in_ofport, in_dp) = match underlay_in {
        Some(u) => (u.dp_port, u.dp_port),
        None => {
            let of = bridge
                .resolve(&PortRef::Name(req.in_port.clone()))
                .map_err(|e| ModelError::Scenario(format!("in_port: {e}")))?;
            (of, bridge.dp_port(of).unwrap_or(of))
        }
    };
    let caps = match &req.nic {
        None => None,
        Some(n) => Some(offload::caps_by_name(n).ok_or_else(|| {
            ModelError::Scenario(format!("nic '{n}' is not known (nics: {})", offload::NICS.join(", ")))
        })?),
    };
    let mut src = nicbench_pcap::PcapSource::open(&req.pcap).map_err(|e| ModelError::trace(&req.pcap, e))?;
    let mut dp = Datapath {
        req,
        caps,
        cache: cache::MegaflowCache::new(&req.cache, req.costs.revalidate_flow_us.value),
        stats: Vec::new(),
        masks_hw: HashSet::new(),
        refusals: BTreeMap::new(),
        upcalls: 0,
        limit_hits: 0,
        hw_packets: 0,
        sw_packets: 0,
    };
    let mut first_ts: Option<u64> = None;
    let mut now = SimTime::ZERO;
    let (mut packets, mut bytes) = (0u64, 0u64);
    while let Some(p) = src.next_packet() {
        let p = p.map_err(|e| ModelError::trace(&req.pcap, crate::connectx::traffic::packet_error(packets, &e)))?;
        if p.linktype != nicbench_pcap::LinkType::ETHERNET {
            // OpenFlow keys start at the Ethernet header (dl_src, dl_dst, dl_type), which cooked,
            // loopback and raw-IP captures do not record.
            return Err(ModelError::trace(
                &req.pcap,
                format!(
                    "packet {packets}: link type {}: the virtual OVS datapath needs Ethernet frames (EN10MB (1))",
                    p.linktype
                ),
            ));
        }
        let first = *first_ts.get_or_insert(p.ts_ns);
        now = SimTime::from_ns(p.ts_ns.saturating_sub(first));
        dp.cache.revalidate_until(now);
        let len = u64::from(p.orig_len);
        let k = key::flow_key(p.data, in_ofport);
        let index = packets;
        packets += 1;
        bytes += len;
        if underlay_in.is_none() {
            dp.pass(&mut bridge, Walker::Bridge, &k, in_dp, len, now, index);
            continue;
        }
        let actions = dp.pass(&mut bridge, Walker::Underlay, &k, in_dp, len, now, index);
        // tnl_pop: the inner packet goes through the datapath again, from the tunnel port.
        let Some(udp_port) = tnl_pop_port(&actions) else {
            continue;
        };
        let Some(d) = tunnel::parse_vxlan(p.data) else { continue };
        let Some(port) = bridge.tunnel_port_for(udp_port, d.src, d.vni).cloned() else {
            continue;
        };
        let inner = tunnel::overlay_key(&d, port.ofport);
        let inner_len = len.saturating_sub(tunnel::VXLAN_HEADER_BYTES as u64);
        dp.pass(&mut bridge, Walker::Bridge, &inner, port.dp_port, inner_len, now, index);
    }
    let Datapath {
        cache,
        stats,
        refusals,
        upcalls,
        limit_hits,
        hw_packets,
        sw_packets,
        caps,
        ..
    } = dp;
    let duration_s = now.as_secs_f64();
    let megaflows: Vec<result::MegaflowOut> = cache
        .entries
        .iter()
        .zip(&stats)
        .map(|(e, s)| {
            let mut flow = e.flow.clone();
            flow.packets = s.0;
            flow.bytes = s.1;
            flow.used = Some(format!("{:.3}s", now.since(s.2).as_secs_f64()));
            result::MegaflowOut {
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
    let host_busy_core_s = sw_packets as f64 * req.costs.sw_packet_ns.value * 1e-9
        + upcalls as f64 * req.costs.upcall_us.value * 1e-6
        + cache.stats.dump_ms_total * 1e-3 * f64::from(req.cache.revalidator_threads.max(1)); // dump wall time × threads
    let per_s = |v: f64| (duration_s > 0.0).then(|| v / duration_s);
    Ok(result::Result {
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
        costs: req.costs.clone(),
        caps,
    })
}

#[cfg(test)]
#[path = "run_tests.rs"]
mod run_tests;
