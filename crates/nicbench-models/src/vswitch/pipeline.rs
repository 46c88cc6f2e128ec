//! The OpenFlow pipeline walk of one packet (ofproto-dpif-xlate.c `xlate_actions`): from
//! table 0 through `resubmit`/`goto_table`, field changes applied to the key for later
//! lookups, datapath actions collected, and every bit the walk consulted un-wildcarded.
//!
//! What the walk always un-wildcards (`xlate_wc_init`): `recirc_id`, `in_port`, `dl_type`,
//! and `nw_frag` for IP, the VLAN id of a tagged packet (the ingress VLAN check). Actions add their own: `set_field` the bits it sets (and its
//! prerequisites: `nw_proto` for ports), `push_vlan` on a tagged packet the whole TCI,
//! an output after `pop_vlan` the popped TCI (`commit_vlan_action`), `dec_ttl` the TTL,
//! `normal` the MAC addresses and the VLAN id (`xlate_normal`).
//!
//! Tunnels: a port with VXLAN options (`PortInfo::tunnel`) is a native (userspace) tunnel
//! port: output to it pushes the header (`tnl_push`), a packet from it carries the tunnel key
//! (see `tunnel.rs`); `set_tunnel` changes `tun_id` for later matches and for that push.
//!
//! Modelled simply, and said so: one VLAN tag; `ct(...)` ends the
//! walk with `ct(...)` and, with `table=`, `recirc(...)` (the recirculated pass is not
//! walked); `normal` learns MACs only on upcalls (OVS also revalidates flows on a change).

use std::collections::{BTreeMap, HashMap};

use nicbench_rules::openflow::{DpAction, OfAction, OfField, OfRule, PortRef};
use serde::{Deserialize, Serialize};

use super::key::{self, Fields};
use super::megaflow::{Classifier, ClsRule, LookupConfig};
use super::tunnel::{self, Underlay, UnderlayBridge, VxlanOptions};
use crate::ModelError;

/// `OFPP_LOCAL`: the bridge's own port.
pub const OFPP_LOCAL: u32 = 0xfffe;
/// OVS's limits on a walk (ofproto-dpif-xlate.c `MAX_DEPTH`, `MAX_RESUBMITS`).
const MAX_DEPTH: u32 = 64;
const MAX_RESUBMITS: u32 = 64 * 64;

/// A bridge port: its name, OpenFlow port number and datapath port number.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PortInfo {
    pub name: String,
    pub ofport: u32,
    pub dp_port: u32,
    /// A VXLAN port's options (`type=vxlan`); absent for every other port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tunnel: Option<VxlanOptions>,
}

/// The result of one walk.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Xlate {
    pub actions: Vec<DpAction>,
    /// Every bit consulted (before `finish_wildcards`).
    pub wc: Fields,
    /// (table, rule index in the request's list) of every rule that matched, in order.
    pub rules: Vec<(u8, usize)>,
}

/// The OpenFlow tables of one bridge, and its MAC learning table (for `normal`).
pub struct Bridge {
    tables: BTreeMap<u8, Classifier>,
    ports: Vec<PortInfo>,
    local_dp_port: Option<u32>,
    /// (MAC, VLAN id) → OpenFlow port.
    macs: HashMap<(u128, u128), u32>,
    actions: Vec<Vec<OfAction>>,
    /// The underlay bridge the tunnel ports send through and receive from.
    underlay: Option<UnderlayBridge>,
}

fn prereqs_ok(field: OfField, flow: &Fields, wc: &mut Fields) -> bool {
    use OfField::*;
    match field {
        NwSrc | NwDst => flow[DlType] == key::ETH_TYPE_IP,
        Ipv6Src | Ipv6Dst => flow[DlType] == key::ETH_TYPE_IPV6,
        NwProto | NwTos | NwTtl | NwFrag => key::is_ip_any(flow),
        TpSrc | TpDst | TcpFlags => {
            if !key::is_ip_any(flow) {
                return false;
            }
            wc[NwProto] = 0xff;
            key::has_ports(flow)
        }
        _ => true,
    }
}

impl Bridge {
    /// Builds the tables. Rules name ports by number or by a name of `ports`.
    pub fn new(rules: &[OfRule], ports: &[PortInfo], config: &LookupConfig) -> Result<Bridge, ModelError> {
        let mut by_table: BTreeMap<u8, Vec<ClsRule>> = BTreeMap::new();
        let mut seen: HashMap<(u8, u16, Fields, Fields), usize> = HashMap::new();
        let mut bridge = Bridge {
            tables: BTreeMap::new(),
            ports: ports.to_vec(),
            local_dp_port: ports.iter().find(|p| p.ofport == OFPP_LOCAL).map(|p| p.dp_port),
            macs: HashMap::new(),
            actions: Vec::new(),
            underlay: None,
        };
        for (i, r) in rules.iter().enumerate() {
            let (mut value, mut mask) = Fields::from_matches(&r.matches.fields);
            if let Some(p) = &r.matches.in_port {
                value[OfField::InPort] = u128::from(
                    bridge
                        .resolve(p)
                        .map_err(|e| ModelError::Rules(format!("rule {i}: {e}")))?,
                );
                mask[OfField::InPort] = OfField::InPort.full_mask();
            }
            for a in &r.actions {
                if let OfAction::Output { port } | OfAction::Resubmit { port: Some(port), .. } = a {
                    bridge
                        .resolve(port)
                        .map_err(|e| ModelError::Rules(format!("rule {i}: {e}")))?;
                }
            }
            // A rule with the match and priority of an earlier one replaces it, as `ovs-ofctl
            // add-flow(s)` modifies the existing flow.
            // Found by a hash index: a linear search made loading the study's 128K-rule sets quadratic.
            let table = by_table.entry(r.table).or_default();
            let value = value.and(&mask);
            match seen.entry((r.table, r.priority, mask, value)) {
                std::collections::hash_map::Entry::Occupied(at) => table[*at.get()].id = i,
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(table.len());
                    table.push(ClsRule {
                        priority: r.priority,
                        value,
                        mask,
                        id: i,
                    });
                }
            }
            bridge.actions.push(r.actions.clone());
        }
        bridge.tables = by_table
            .into_iter()
            .map(|(t, rs)| (t, Classifier::new(config, rs)))
            .collect();
        Ok(bridge)
    }

    pub fn ports(&self) -> &[PortInfo] {
        &self.ports
    }

    /// Adds the underlay bridge; needed (and only allowed) when a port is a tunnel.
    pub fn set_underlay(&mut self, underlay: Option<&Underlay>) -> Result<(), ModelError> {
        let tunnels: Vec<&PortInfo> = self.ports.iter().filter(|p| p.tunnel.is_some()).collect();
        match underlay {
            None if tunnels.is_empty() => Ok(()),
            None => Err(ModelError::Scenario(format!(
                "port '{}' is a vxlan port: the request needs an underlay (the physical port, IP and MAC the \
                 tunnel sends through)",
                tunnels[0].name
            ))),
            Some(u) => {
                if let Some(p) = self.ports.iter().find(|p| p.name == u.port) {
                    return Err(ModelError::Scenario(format!(
                        "underlay port '{}' is also a port of the OpenFlow bridge (it belongs to the underlay bridge)",
                        p.name
                    )));
                }
                let dst_ports: Vec<u16> = tunnels
                    .iter()
                    .filter_map(|p| p.tunnel.as_ref())
                    .map(|t| t.dst_port)
                    .collect();
                for t in tunnels {
                    let dst_port = t.tunnel.as_ref().map(|o| o.dst_port).unwrap_or_default();
                    if t.dp_port != u32::from(dst_port) {
                        return Err(ModelError::Scenario(format!(
                            "vxlan port '{}': its datapath port is its UDP port {dst_port} in OVS's userspace datapath, \
                             found {}",
                            t.name, t.dp_port
                        )));
                    }
                    if let Some(o) = &t.tunnel {
                        tunnel::parse_mac(&o.remote_mac)
                            .map_err(|e| ModelError::Scenario(format!("vxlan port '{}': remote_mac: {e}", t.name)))?;
                    }
                }
                self.underlay = Some(UnderlayBridge::new(u, &dst_ports).map_err(ModelError::Scenario)?);
                Ok(())
            }
        }
    }

    pub fn underlay_mut(&mut self) -> Option<&mut UnderlayBridge> {
        self.underlay.as_mut()
    }

    /// The tunnel port that accepts a decapsulated packet (`tnl_find`): its UDP port, its
    /// `remote_ip` as the outer source, and a fixed key equal to the VNI (or `key=flow`).
    pub fn tunnel_port_for(&self, dst_port: u16, src: u32, vni: u64) -> Option<&PortInfo> {
        self.ports.iter().find(|p| {
            p.tunnel.as_ref().is_some_and(|t| {
                t.dst_port == dst_port && u32::from(t.remote_ip) == src && t.key.is_none_or(|k| k == vni)
            })
        })
    }

    /// The OpenFlow port number a rule's port reference names.
    pub fn resolve(&self, port: &PortRef) -> Result<u32, String> {
        match port {
            PortRef::Number(n) => Ok(*n),
            PortRef::Name(name) => self
                .ports
                .iter()
                .find(|p| &p.name == name)
                .map(|p| p.ofport)
                .ok_or_else(|| format!("port '{name}' is not on the bridge (ports: {})", self.port_names())),
            PortRef::Reserved(r) => match r.to_ascii_uppercase().as_str() {
                "LOCAL" => Ok(OFPP_LOCAL),
                "IN_PORT" => Ok(0xfff8),
                "NORMAL" => Ok(0xfffa),
                "FLOOD" => Ok(0xfffb),
                "ALL" => Ok(0xfffc),
                "CONTROLLER" => Ok(0xfffd),
                "NONE" => Ok(0xffff),
                other => Err(format!("unknown reserved port '{other}'")),
            },
        }
    }

    fn port_names(&self) -> String {
        self.ports
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub fn dp_port(&self, ofport: u32) -> Option<u32> {
        self.ports.iter().find(|p| p.ofport == ofport).map(|p| p.dp_port)
    }

    /// Walks the pipeline for `key` (an upcall: `normal` learns the source MAC).
    pub fn xlate(&mut self, key: &Fields) -> Xlate {
        let mut wc = Fields::default();
        use OfField::*;
        wc[RecircId] = RecircId.full_mask();
        wc[InPort] = InPort.full_mask();
        wc[DlType] = DlType.full_mask();
        if key::is_ip_any(key) {
            wc[NwFrag] = key::NW_FRAG_MASK;
        }
        // A tagged packet's VLAN id is checked against the ingress port's VLAN mode before any
        // table (OVS 3.1's dump shows `vlan(vid=V,...)` exact for every tagged packet).
        if key[VlanTci] & key::VLAN_CFI != 0 {
            wc[VlanTci] |= key::VLAN_VID_MASK | key::VLAN_CFI;
        }
        let from_tunnel = self
            .ports
            .iter()
            .any(|p| p.tunnel.is_some() && u128::from(p.ofport) == key[InPort]);
        if from_tunnel {
            tunnel::tunnel_wildcards(key, &mut wc);
        }
        let mut walk = Walk {
            flow: *key,
            base: *key,
            wc,
            actions: Vec::new(),
            rules: Vec::new(),
            depth: 0,
            resubmits: 0,
            stopped: false,
        };
        self.lookup_and_run(&mut walk, 0, None);
        let mut actions = walk.actions;
        if actions.is_empty() {
            actions.push(DpAction::Drop);
        }
        Xlate {
            actions,
            wc: walk.wc,
            rules: walk.rules,
        }
    }

    /// Looks `table` up (with `in_port` replaced for the lookup only, as `resubmit(PORT,T)` does:
    /// `rule_dpif_lookup_from_table` restores it before the actions run) and runs the rule's actions.
    fn lookup_and_run(&mut self, w: &mut Walk, table: u8, lookup_in_port: Option<u32>) {
        if w.depth >= MAX_DEPTH || w.resubmits >= MAX_RESUBMITS || w.stopped {
            return;
        }
        let Some(cls) = self.tables.get(&table) else { return };
        let saved = w.flow[OfField::InPort];
        if let Some(p) = lookup_in_port {
            w.flow[OfField::InPort] = u128::from(p);
        }
        let found = cls.lookup(&w.flow, &mut w.wc);
        w.flow[OfField::InPort] = saved;
        let Some(r) = found else { return };
        let id = cls.rule(r).id;
        w.rules.push((table, id));
        let actions = self.actions[id].clone();
        w.depth += 1;
        self.run_actions(w, table, &actions);
        w.depth -= 1;
    }

    fn run_actions(&mut self, w: &mut Walk, table: u8, actions: &[OfAction]) {
        use OfField::*;
        for a in actions {
            if w.stopped {
                return;
            }
            match a {
                OfAction::Output { port } => {
                    let Ok(p) = self.resolve(port) else { continue };
                    self.output(w, p, matches!(port, PortRef::Reserved(_)));
                }
                OfAction::Normal => self.normal(w),
                OfAction::Drop => {}
                OfAction::SetField { field, value, mask } => {
                    if prereqs_ok(*field, &w.flow, &mut w.wc) {
                        let m = *mask & field.full_mask();
                        w.wc[*field] |= m;
                        w.flow[*field] = (w.flow[*field] & !m) | (value & m);
                    }
                }
                OfAction::PushVlan { .. } => {
                    if w.flow[VlanTci] & key::VLAN_CFI != 0 {
                        w.wc[VlanTci] = VlanTci.full_mask();
                    }
                    w.flow[VlanTci] = key::VLAN_CFI;
                }
                OfAction::PopVlan => w.flow[VlanTci] = 0,
                OfAction::SetTunnel { id } => w.flow[TunId] = u128::from(*id),
                OfAction::Resubmit { port, table: t } => {
                    w.resubmits += 1;
                    let in_port = port
                        .as_ref()
                        .and_then(|p| self.resolve(p).ok())
                        .filter(|n| *n != 0xfff8);
                    self.lookup_and_run(w, t.unwrap_or(table), in_port);
                }
                OfAction::GotoTable { table: t } => self.lookup_and_run(w, *t, None),
                OfAction::Ct {
                    commit,
                    zone,
                    table: t,
                    other,
                } => {
                    self.commit(w);
                    let mut parts = Vec::new();
                    if *commit {
                        parts.push("commit".to_string());
                    }
                    if let Some(z) = zone {
                        parts.push(format!("zone={z}"));
                    }
                    parts.extend(other.iter().cloned());
                    w.actions.push(DpAction::Ct {
                        text: format!("ct({})", parts.join(",")),
                    });
                    if let Some(t) = t {
                        w.actions.push(DpAction::Recirc { id: u32::from(*t) + 1 });
                        w.stopped = true;
                    }
                }
                OfAction::DecTtl => {
                    if key::is_ip_any(&w.flow) {
                        w.wc[NwTtl] = 0xff;
                        if w.flow[NwTtl] > 1 {
                            w.flow[NwTtl] -= 1;
                        } else {
                            w.stopped = true; // OVS sends the packet to the controller instead
                        }
                    }
                }
                OfAction::Controller => {
                    self.commit(w);
                    w.actions.push(DpAction::Other {
                        text: "userspace(pid=0,controller)".into(),
                    });
                }
            }
        }
    }

    /// Emits the datapath actions that turn the packet as it is (`base`) into the packet as
    /// the walk changed it (`flow`), in `commit_odp_actions` order: Ethernet, VLAN, L3, L4.
    fn commit(&self, w: &mut Walk) {
        use OfField::*;
        for f in [DlSrc, DlDst] {
            if w.flow[f] != w.base[f] {
                w.actions.push(DpAction::Set {
                    field: f,
                    value: w.flow[f],
                    mask: f.full_mask(),
                });
            }
        }
        if w.flow[VlanTci] != w.base[VlanTci] {
            if w.base[VlanTci] & key::VLAN_CFI != 0 {
                w.actions.push(DpAction::PopVlan);
                w.wc[VlanTci] = VlanTci.full_mask();
            }
            if w.flow[VlanTci] & key::VLAN_CFI != 0 {
                w.actions.push(DpAction::PushVlan {
                    tpid: 0x8100,
                    tci: w.flow[VlanTci] as u16,
                });
            }
        }
        for f in [NwSrc, NwDst, Ipv6Src, Ipv6Dst, NwTos, NwTtl, TpSrc, TpDst] {
            if w.flow[f] != w.base[f] {
                w.actions.push(DpAction::Set {
                    field: f,
                    value: w.flow[f],
                    mask: f.full_mask(),
                });
            }
        }
        let tun = w.flow[TunId];
        w.base = w.flow;
        w.base[TunId] = tun;
    }

    fn output(&mut self, w: &mut Walk, ofport: u32, reserved: bool) {
        match ofport {
            0xfffa => return self.normal(w),
            0xfffb | 0xfffc => return self.flood(w),
            0xfffd => {
                self.commit(w);
                w.actions.push(DpAction::Other {
                    text: "userspace(pid=0,controller)".into(),
                });
                return;
            }
            0xffff => return,
            _ => {}
        }
        let in_port = w.flow[OfField::InPort] as u32;
        let target = if ofport == 0xfff8 { in_port } else { ofport };
        // OpenFlow: output to the ingress port is dropped unless it says IN_PORT.
        if target == in_port && !(reserved && ofport == 0xfff8) {
            return;
        }
        if let Some(opts) = self
            .ports
            .iter()
            .find(|p| p.ofport == target)
            .and_then(|p| p.tunnel.clone())
        {
            return self.tunnel_output(w, &opts);
        }
        let Some(dp) = self
            .dp_port(target)
            .or(if target == OFPP_LOCAL { self.local_dp_port } else { None })
        else {
            return;
        };
        self.commit(w);
        w.actions.push(DpAction::Output { port: dp });
    }

    /// Output to a VXLAN port (`native_tunnel_output`): the changes so far, then the header
    /// push and the underlay bridge's NORMAL out of its physical port. The underlay walk works
    /// on a copy of the wildcards in OVS, so it adds nothing to the megaflow.
    fn tunnel_output(&mut self, w: &mut Walk, opts: &VxlanOptions) {
        use OfField::*;
        let Some(u) = &self.underlay else { return };
        let ecn = key::is_ip_any(&w.flow).then(|| {
            w.wc[NwTos] |= 0x03;
            w.flow[NwTos] & 0x03
        });
        let remote_mac = tunnel::parse_mac(&opts.remote_mac).unwrap_or(0);
        let text = u.push_text(opts, remote_mac, w.flow[TunId] as u64, ecn);
        let phy = u.cfg.dp_port;
        self.commit(w);
        w.actions.push(DpAction::Tunnel { text });
        w.actions.push(DpAction::Output { port: phy });
    }

    fn flood(&mut self, w: &mut Walk) {
        let in_port = w.flow[OfField::InPort] as u32;
        let mut ports: Vec<u32> = self
            .ports
            .iter()
            .filter(|p| p.ofport != in_port)
            .map(|p| p.dp_port)
            .collect();
        ports.sort_unstable();
        for dp in ports {
            self.commit(w);
            w.actions.push(DpAction::Output { port: dp });
        }
    }

    fn normal(&mut self, w: &mut Walk) {
        use OfField::*;
        w.wc[DlSrc] = DlSrc.full_mask();
        w.wc[DlDst] = DlDst.full_mask();
        w.wc[VlanTci] |= key::VLAN_VID_MASK | key::VLAN_CFI;
        let vid = w.flow[VlanTci] & key::VLAN_VID_MASK;
        let in_port = w.flow[InPort] as u32;
        let src = w.flow[DlSrc];
        if src >> 40 & 1 == 0 {
            self.macs.insert((src, vid), in_port);
        }
        let dst = w.flow[DlDst];
        let multicast = dst >> 40 & 1 == 1;
        match (multicast, self.macs.get(&(dst, vid)).copied()) {
            (false, Some(p)) if p == in_port => {}
            (false, Some(p)) => self.output(w, p, false),
            _ => self.flood(w),
        }
    }
}

struct Walk {
    flow: Fields,
    base: Fields,
    wc: Fields,
    actions: Vec<DpAction>,
    rules: Vec<(u8, usize)>,
    depth: u32,
    resubmits: u32,
    stopped: bool,
}

#[cfg(test)]
mod tests {
    //! Hand-worked pipeline walks.

    use super::*;
    use nicbench_rules::openflow::{FieldMatch, OfMatch};
    use OfField::*;

    pub(crate) fn fm(field: OfField, value: u128, mask: u128) -> FieldMatch {
        FieldMatch { field, value, mask }
    }

    pub(crate) fn of_rule(
        table: u8,
        priority: u16,
        in_port: Option<&str>,
        fields: Vec<FieldMatch>,
        actions: Vec<OfAction>,
    ) -> OfRule {
        let mut fields = fields;
        fields.sort_by_key(|f| f.field);
        OfRule {
            table,
            priority,
            cookie: 0,
            idle_timeout_s: 0,
            hard_timeout_s: 0,
            matches: OfMatch {
                in_port: in_port.map(|p| PortRef::Name(p.into())),
                fields,
            },
            actions,
        }
    }

    pub(crate) fn out(name: &str) -> OfAction {
        OfAction::Output {
            port: PortRef::Name(name.into()),
        }
    }

    /// The dummy bridge of the OVS oracle: br0 LOCAL (dp 1), p0 (of 1, dp 2), p1 (of 2, dp 3).
    pub(crate) fn ports() -> Vec<PortInfo> {
        vec![
            PortInfo {
                name: "br0".into(),
                ofport: OFPP_LOCAL,
                dp_port: 1,
                tunnel: None,
            },
            PortInfo {
                name: "p0".into(),
                ofport: 1,
                dp_port: 2,
                tunnel: None,
            },
            PortInfo {
                name: "p1".into(),
                ofport: 2,
                dp_port: 3,
                tunnel: None,
            },
        ]
    }

    fn udp_key(src: u32, dst: u32, dport: u16) -> Fields {
        let mut k = Fields::default();
        k[InPort] = 1;
        k[DlType] = 0x0800;
        k[NwSrc] = u128::from(src);
        k[NwDst] = u128::from(dst);
        k[NwProto] = 17;
        k[TpDst] = u128::from(dport);
        k
    }

    #[test]
    fn test_table_miss_is_drop_and_still_unwildcards_the_always_fields() {
        let mut b = Bridge::new(&[], &ports(), &LookupConfig::default()).expect("bridge");
        let x = b.xlate(&udp_key(1, 2, 3));
        assert_eq!(x.actions, vec![DpAction::Drop]);
        let wc: Vec<_> = x.wc.nonzero().collect();
        assert_eq!(
            wc,
            vec![
                (RecircId, 0xffff_ffff),
                (InPort, 0xffff_ffff),
                (DlType, 0xffff),
                (NwFrag, 3)
            ]
        );
    }

    #[test]
    fn test_resubmit_and_set_field_change_the_next_lookup() {
        // table 0: udp → set nw_dst 10.9.9.9, resubmit(,1); table 1: nw_dst=10.9.9.9 → p1.
        let rules = vec![
            of_rule(
                0,
                100,
                Some("p0"),
                vec![fm(DlType, 0x0800, 0xffff), fm(NwProto, 17, 0xff)],
                vec![
                    OfAction::SetField {
                        field: NwDst,
                        value: 0x0a09_0909,
                        mask: 0xffff_ffff,
                    },
                    OfAction::Resubmit {
                        port: None,
                        table: Some(1),
                    },
                ],
            ),
            of_rule(
                1,
                100,
                None,
                vec![fm(DlType, 0x0800, 0xffff), fm(NwDst, 0x0a09_0909, 0xffff_ffff)],
                vec![out("p1")],
            ),
        ];
        let mut b = Bridge::new(&rules, &ports(), &LookupConfig::default()).expect("bridge");
        let x = b.xlate(&udp_key(0x0a00_0001, 0x0a00_0002, 53));
        assert_eq!(x.rules, vec![(0, 0), (1, 1)]);
        assert_eq!(
            x.actions,
            vec![
                DpAction::Set {
                    field: NwDst,
                    value: 0x0a09_0909,
                    mask: 0xffff_ffff
                },
                DpAction::Output { port: 3 }
            ]
        );
        assert_eq!(x.wc[NwDst], 0xffff_ffff, "set_field un-wildcards what it sets");
        assert_eq!(x.wc[NwProto], 0xff);
    }

    #[test]
    fn test_goto_table_and_output_to_in_port_is_skipped() {
        let rules = vec![
            of_rule(0, 1, None, vec![], vec![OfAction::GotoTable { table: 3 }]),
            of_rule(3, 1, None, vec![], vec![out("p0"), out("p1")]),
        ];
        let mut b = Bridge::new(&rules, &ports(), &LookupConfig::default()).expect("bridge");
        let x = b.xlate(&udp_key(1, 2, 3));
        assert_eq!(x.actions, vec![DpAction::Output { port: 3 }], "p0 is the ingress port");
    }

    #[test]
    fn test_vlan_push_pop_and_mod_vid() {
        let rules = vec![of_rule(
            0,
            1,
            None,
            vec![],
            vec![
                OfAction::PushVlan { tpid: 0x8100 },
                OfAction::SetField {
                    field: VlanTci,
                    value: 0x1000 | 20,
                    mask: 0x1fff,
                },
                out("p1"),
            ],
        )];
        let mut b = Bridge::new(&rules, &ports(), &LookupConfig::default()).expect("bridge");
        let x = b.xlate(&udp_key(1, 2, 3));
        assert_eq!(
            x.actions,
            vec![
                DpAction::PushVlan {
                    tpid: 0x8100,
                    tci: 0x1000 | 20
                },
                DpAction::Output { port: 3 }
            ]
        );
        let rules = vec![of_rule(0, 1, None, vec![], vec![OfAction::PopVlan, out("p1")])];
        let mut b = Bridge::new(&rules, &ports(), &LookupConfig::default()).expect("bridge");
        let mut tagged = udp_key(1, 2, 3);
        tagged[VlanTci] = 0x1000 | 10;
        let x = b.xlate(&tagged);
        assert_eq!(x.actions, vec![DpAction::PopVlan, DpAction::Output { port: 3 }]);
        assert_eq!(x.wc[VlanTci], 0xffff, "popping a tag needs the whole TCI");
    }

    #[test]
    fn test_unknown_port_name_is_an_error_naming_the_rule() {
        let rules = vec![of_rule(0, 1, None, vec![], vec![out("nope")])];
        let err = Bridge::new(&rules, &ports(), &LookupConfig::default())
            .err()
            .expect("error")
            .to_string();
        assert!(
            err.contains("rule 0") && err.contains("'nope'") && err.contains("p0"),
            "{err}"
        );
    }

    #[test]
    fn test_normal_floods_then_learns() {
        let rules = vec![of_rule(0, 0, None, vec![], vec![OfAction::Normal])];
        let mut b = Bridge::new(&rules, &ports(), &LookupConfig::default()).expect("bridge");
        let mut a_to_b = udp_key(1, 2, 3);
        a_to_b[DlSrc] = 0x02_00_00_00_00_0a;
        a_to_b[DlDst] = 0x02_00_00_00_00_0b;
        let x = b.xlate(&a_to_b);
        assert_eq!(
            x.actions,
            vec![DpAction::Output { port: 1 }, DpAction::Output { port: 3 }],
            "flood: LOCAL and p1"
        );
        let mut b_to_a = a_to_b;
        b_to_a[InPort] = 2;
        b_to_a[DlSrc] = a_to_b[DlDst];
        b_to_a[DlDst] = a_to_b[DlSrc];
        let x = b.xlate(&b_to_a);
        assert_eq!(x.actions, vec![DpAction::Output { port: 2 }], "a was learned on p0");
        assert_eq!(x.wc[VlanTci], 0x1fff);
    }

    #[test]
    fn test_same_match_and_priority_replaces_the_earlier_rule() {
        let m = || vec![fm(DlType, 0x0800, 0xffff)];
        let rules = vec![
            of_rule(0, 5, None, m(), vec![OfAction::Drop]),
            of_rule(0, 5, None, m(), vec![out("p1")]),
        ];
        let mut b = Bridge::new(&rules, &ports(), &LookupConfig::default()).expect("bridge");
        let x = b.xlate(&udp_key(1, 2, 3));
        assert_eq!((x.rules, x.actions), (vec![(0, 1)], vec![DpAction::Output { port: 3 }]));
    }
}
