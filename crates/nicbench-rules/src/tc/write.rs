//! Writes a [`TcCommand`] back as a `tc filter add ... flower` line; the output parses back
//! to the same command. Whatever tc flower cannot express (rx queues, RSS, ranges on
//! addresses, arbitrary masks on ports, unsupported items or fields) is a [`WriteError`]
//! naming it. `count` is written as nothing: every tc action keeps counters anyway.

use super::{DeviceTable, TcCommand, ETH_P_8021AD, ETH_P_IP, ETH_P_IPV6};
use crate::error::WriteError;
use crate::model::{ones, Action, EthItem, Field, FieldBits, Item, VlanItem};
use std::fmt::Write;

fn err<T>(msg: impl Into<String>) -> Result<T, WriteError> {
    Err(WriteError(msg.into()))
}

/// The command as one tc line, with port ids named through `devices`.
pub fn command_to_string(cmd: &TcCommand, devices: &DeviceTable) -> Result<String, WriteError> {
    let rule = &cmd.rule;
    let a = &rule.attr;
    let mut s = format!("tc filter add dev {}", cmd.dev);
    match (a.ingress, a.egress) {
        (true, false) => s.push_str(" ingress"),
        (false, true) => s.push_str(" egress"),
        _ => return err("tc needs exactly one of ingress or egress"),
    }
    if a.transfer {
        return err("tc has no 'transfer' attribute");
    }
    let mut items: &[Item] = &rule.pattern;
    let mut keys = String::new();
    if let Some(vx) = items.iter().position(|i| matches!(i, Item::Vxlan(_))) {
        if vx != 3 {
            return err(
                "tc flower expresses a vxlan item only as 'eth / ipv4|ipv6 / udp / vxlan' before the inner headers",
            );
        }
        write_enc(&mut keys, &items[..4])?;
        items = &items[4..];
    }
    let mut rest = items.iter().peekable();
    let eth = match rest.peek() {
        Some(Item::Eth(e)) => {
            rest.next();
            e.clone()
        }
        _ => EthItem::default(),
    };
    let vlan = match rest.peek() {
        Some(Item::Vlan(v)) => {
            rest.next();
            Some(v.clone())
        }
        _ => None,
    };
    let l3 = rest.next_if(|i| matches!(i, Item::Ipv4(_) | Item::Ipv6(_)));
    let l4 = rest.next_if(|i| {
        matches!(
            i,
            Item::Tcp(_) | Item::Udp(_) | Item::Sctp(_) | Item::Icmp(_) | Item::Icmp6(_)
        )
    });
    if let Some(extra) = rest.next() {
        return err(format!(
            "tc flower cannot express item '{}' at this place in the pattern",
            extra.kind().name()
        ));
    }
    if l4.is_some() && l3.is_none() {
        return err("tc flower needs an ipv4 or ipv6 item before an L4 item");
    }
    let l3_type = match l3 {
        Some(Item::Ipv4(_)) => Some(ETH_P_IP),
        Some(Item::Ipv6(_)) => Some(ETH_P_IPV6),
        _ => None,
    };
    let eth_type = exact(&eth.ether_type.map(|f| f.to_raw()), 16, "eth type")?.map(|v| v as u16);
    // protocol
    let protocol = match (&vlan, eth_type, l3_type) {
        (Some(_), None, _) => "802.1q".to_string(),
        (Some(_), Some(ETH_P_8021AD), _) => "802.1ad".to_string(),
        (Some(_), Some(t), _) => return err(format!("tc flower cannot match eth type {t:#06x} before a vlan item")),
        (None, t, Some(l3)) => {
            if t.is_some_and(|t| t != l3) {
                return err(format!("eth type {:#06x} contradicts the L3 item", t.unwrap_or(0)));
            }
            if l3 == ETH_P_IP {
                "ip".into()
            } else {
                "ipv6".into()
            }
        }
        (None, Some(t), None) => format!("{t:#06x}"),
        (None, None, None) => "all".into(),
    };
    write!(s, " protocol {protocol}").ok();
    // Always explicit: without `prio` the kernel would pick one (below the chain's first) and the
    // rule's place in the order would depend on what was added before. tc prio = priority + 1.
    if a.priority >= u16::MAX as u32 {
        return err(format!(
            "tc prio is 16 bits (1-65535); priority {} does not fit",
            a.priority
        ));
    }
    write!(s, " prio {}", a.priority + 1).ok();
    if a.group != 0 {
        write!(s, " chain {}", a.group).ok();
    }
    s.push_str(" flower");
    s.push_str(&keys);
    write_eth(&mut s, &eth)?;
    if let Some(v) = &vlan {
        write_vlan(&mut s, v, l3_type)?;
    }
    write_l3_l4(&mut s, l3, l4)?;
    if cmd.skip_sw {
        s.push_str(" skip_sw");
    }
    if cmd.skip_hw {
        s.push_str(" skip_hw");
    }
    write_actions(&mut s, &rule.actions, devices, l3, l4)?;
    Ok(s)
}

/// Exact value of an optional `width`-bit field, or an error if it is masked or a range.
fn exact(f: &Option<Field<u128>>, width: u32, what: &str) -> Result<Option<u128>, WriteError> {
    match f {
        None => Ok(None),
        Some(f) if f.last.is_none() && f.mask == ones(width) => Ok(Some(f.value)),
        Some(_) => err(format!("tc flower matches {what} only exactly")),
    }
}

fn none(present: bool, what: &str) -> Result<(), WriteError> {
    if present {
        err(format!("tc flower cannot match {what}"))
    } else {
        Ok(())
    }
}

fn write_prefix<T: FieldBits + std::fmt::Display>(
    s: &mut String,
    key: &str,
    f: &Option<Field<T>>,
) -> Result<(), WriteError> {
    let Some(f) = f else { return Ok(()) };
    match f.prefix_len() {
        Some(len) if len == T::BITS => write!(s, " {key} {}", f.value).ok(),
        Some(len) => write!(s, " {key} {}/{len}", f.value).ok(),
        None => {
            return err(format!(
                "tc flower '{key}' takes a prefix; mask or range not expressible"
            ))
        }
    };
    Ok(())
}

fn write_enc(s: &mut String, outer: &[Item]) -> Result<(), WriteError> {
    let before = s.len();
    let (Item::Eth(eth), Item::Udp(udp), Item::Vxlan(vx)) = (&outer[0], &outer[2], &outer[3]) else {
        return err("tc flower expresses a vxlan item only as 'eth / ipv4|ipv6 / udp / vxlan'");
    };
    none(
        !Item::Eth(eth.clone()).is_presence_only(),
        "fields of the outer eth item",
    )?;
    none(udp.src.is_some(), "the outer udp source port")?;
    none(vx.last_rsvd.is_some(), "vxlan last_rsvd")?;
    if let Some(vni) = exact(&vx.vni.map(|f| f.to_raw()), 24, "the vni")? {
        write!(s, " enc_key_id {vni}").ok();
    }
    match &outer[1] {
        Item::Ipv4(ip) => {
            let mut rest = ip.clone();
            rest.src = None;
            rest.dst = None;
            none(rest != Default::default(), "outer ipv4 fields other than src and dst")?;
            write_prefix(s, "enc_src_ip", &ip.src)?;
            write_prefix(s, "enc_dst_ip", &ip.dst)?;
        }
        Item::Ipv6(ip) => {
            let mut rest = ip.clone();
            rest.src = None;
            rest.dst = None;
            none(rest != Default::default(), "outer ipv6 fields other than src and dst")?;
            write_prefix(s, "enc_src_ip", &ip.src)?;
            write_prefix(s, "enc_dst_ip", &ip.dst)?;
        }
        _ => return err("tc flower expresses a vxlan item only as 'eth / ipv4|ipv6 / udp / vxlan'"),
    }
    if let Some(p) = exact(&udp.dst.map(|f| f.to_raw()), 16, "the outer udp port")? {
        write!(s, " enc_dst_port {p}").ok();
    }
    if s.len() == before {
        return err("tc flower needs at least one enc_* key to express the outer headers");
    }
    Ok(())
}

fn write_eth(s: &mut String, eth: &EthItem) -> Result<(), WriteError> {
    none(eth.has_vlan.is_some(), "eth has_vlan")?;
    for (key, f) in [("src_mac", &eth.src), ("dst_mac", &eth.dst)] {
        let Some(f) = f else { continue };
        if f.last.is_some() {
            return err(format!("tc flower cannot match a range on '{key}'"));
        }
        match f.prefix_len() {
            Some(48) => write!(s, " {key} {}", f.value),
            Some(len) => write!(s, " {key} {}/{len}", f.value),
            None => write!(s, " {key} {}/{}", f.value, f.mask),
        }
        .ok();
    }
    Ok(())
}

fn write_vlan(s: &mut String, v: &VlanItem, l3_type: Option<u16>) -> Result<(), WriteError> {
    none(v.has_more_vlan.is_some(), "vlan has_more_vlan")?;
    if let Some(tci) = v.tci {
        let (vid_m, pcp_m) = (tci.mask & 0x0fff, tci.mask & 0xe000);
        if tci.last.is_some() || tci.mask & 0x1000 != 0 || !matches!(vid_m, 0 | 0x0fff) || !matches!(pcp_m, 0 | 0xe000)
        {
            return err("tc flower matches vlan id and priority only exactly (no DEI, masks or ranges)");
        }
        if vid_m != 0 {
            write!(s, " vlan_id {}", tci.value & 0x0fff).ok();
        }
        if pcp_m != 0 {
            write!(s, " vlan_prio {}", tci.value >> 13).ok();
        }
    }
    let inner = exact(&v.inner_type.map(|f| f.to_raw()), 16, "the vlan inner type")?;
    match (l3_type, inner) {
        (Some(t), None) => write!(s, " vlan_ethtype {}", if t == ETH_P_IP { "ip" } else { "ipv6" }).ok(),
        (None, Some(t)) => write!(s, " vlan_ethtype {t:#06x}").ok(),
        (None, None) => None,
        (Some(_), Some(_)) => return err("vlan inner_type together with an L3 item is not expressible in tc"),
    };
    Ok(())
}

fn write_u8(s: &mut String, key: &str, f: &Option<Field<u8>>, hex: bool) -> Result<(), WriteError> {
    let Some(f) = f else { return Ok(()) };
    if f.last.is_some() {
        return err(format!("tc flower cannot match a range on '{key}'"));
    }
    match (hex, f.mask) {
        (true, 0xff) => write!(s, " {key} {:#04x}", f.value),
        (false, 0xff) => write!(s, " {key} {}", f.value),
        (true, m) => write!(s, " {key} {:#04x}/{m:#04x}", f.value),
        (false, m) => write!(s, " {key} {}/{m:#04x}", f.value),
    }
    .ok();
    Ok(())
}

fn write_port(s: &mut String, key: &str, f: &Option<Field<u16>>) -> Result<(), WriteError> {
    let Some(f) = f else { return Ok(()) };
    match (f.mask, f.last) {
        (0xffff, None) => write!(s, " {key} {}", f.value).ok(),
        (0xffff, Some(hi)) if hi >= f.value => write!(s, " {key} {}-{hi}", f.value).ok(),
        _ => {
            return err(format!(
                "tc flower '{key}' takes a port or an ascending range, not a mask"
            ))
        }
    };
    Ok(())
}

fn write_l3_l4(s: &mut String, l3: Option<&Item>, l4: Option<&Item>) -> Result<(), WriteError> {
    let proto_name = match l4 {
        Some(Item::Tcp(_)) => Some("tcp"),
        Some(Item::Udp(_)) => Some("udp"),
        Some(Item::Sctp(_)) => Some("sctp"),
        Some(Item::Icmp(_)) => Some("icmp"),
        Some(Item::Icmp6(_)) => Some("icmpv6"),
        _ => None,
    };
    match l3 {
        Some(Item::Ipv4(ip)) => {
            none(ip.version_ihl.is_some(), "ipv4 version_ihl")?;
            none(ip.packet_id.is_some(), "ipv4 packet_id")?;
            none(ip.fragment_offset.is_some(), "ipv4 fragment_offset")?;
            write_ip_proto(s, proto_name, &ip.proto)?;
            write_prefix(s, "src_ip", &ip.src)?;
            write_prefix(s, "dst_ip", &ip.dst)?;
            write_u8(s, "ip_tos", &ip.tos, true)?;
            write_u8(s, "ip_ttl", &ip.ttl, false)?;
        }
        Some(Item::Ipv6(ip)) => {
            none(ip.flow_label.is_some(), "the ipv6 flow label")?;
            none(ip.has_frag_ext.is_some(), "ipv6 has_frag_ext")?;
            write_ip_proto(s, proto_name, &ip.proto)?;
            write_prefix(s, "src_ip", &ip.src)?;
            write_prefix(s, "dst_ip", &ip.dst)?;
            write_u8(s, "ip_tos", &ip.tc, true)?;
            write_u8(s, "ip_ttl", &ip.hop_limit, false)?;
        }
        _ => {}
    }
    match l4 {
        Some(Item::Tcp(t)) => {
            write_port(s, "src_port", &t.src)?;
            write_port(s, "dst_port", &t.dst)?;
            write_u8(s, "tcp_flags", &t.flags, true)?;
        }
        Some(Item::Udp(u)) => {
            write_port(s, "src_port", &u.src)?;
            write_port(s, "dst_port", &u.dst)?;
        }
        Some(Item::Sctp(u)) => {
            none(u.tag.is_some() || u.cksum.is_some(), "sctp tag or checksum")?;
            write_port(s, "src_port", &u.src)?;
            write_port(s, "dst_port", &u.dst)?;
        }
        Some(Item::Icmp(i)) => {
            none(i.ident.is_some() || i.seq.is_some(), "icmp ident or seq")?;
            write_u8(s, "type", &i.icmp_type, false)?;
            write_u8(s, "code", &i.code, false)?;
        }
        Some(Item::Icmp6(i)) => {
            write_u8(s, "type", &i.icmp_type, false)?;
            write_u8(s, "code", &i.code, false)?;
        }
        _ => {}
    }
    Ok(())
}

fn write_ip_proto(s: &mut String, l4_name: Option<&str>, proto: &Option<Field<u8>>) -> Result<(), WriteError> {
    let value = exact(&proto.map(|f| f.to_raw()), 8, "ip_proto")?;
    match (l4_name, value) {
        (Some(name), None) => write!(s, " ip_proto {name}").ok(),
        (None, Some(v)) => write!(s, " ip_proto {v}").ok(),
        (None, None) => None,
        (Some(name), Some(_)) => return err(format!("an ip proto field next to a '{name}' item is redundant for tc")),
    };
    Ok(())
}

fn write_actions(
    s: &mut String,
    actions: &[Action],
    devices: &DeviceTable,
    l3: Option<&Item>,
    l4: Option<&Item>,
) -> Result<(), WriteError> {
    let mut i = 0;
    while i < actions.len() {
        let a = &actions[i];
        i += 1;
        let text = match a {
            Action::Drop => "drop".to_string(),
            Action::Passthru => "pass".to_string(),
            // Every tc filter keeps packet and byte counters (`tc -s filter show`): nothing to write.
            Action::Count => continue,
            Action::Jump { group } => format!("goto chain {group}"),
            Action::Mark { id } => format!("skbedit mark {id}"),
            Action::PortId { id } => match devices.name(*id) {
                Some(name) => format!("mirred egress redirect dev {name}"),
                None => return err(format!("port id {id} has no device name in the device table")),
            },
            Action::SetMacSrc { mac } => format!("pedit ex munge eth src set {mac}"),
            Action::SetMacDst { mac } => format!("pedit ex munge eth dst set {mac}"),
            Action::SetIpv4Src { addr } => format!("pedit ex munge ip src set {addr}"),
            Action::SetIpv4Dst { addr } => format!("pedit ex munge ip dst set {addr}"),
            Action::SetIpv6Src { addr } => format!("pedit ex munge ip6 src set {addr}"),
            Action::SetIpv6Dst { addr } => format!("pedit ex munge ip6 dst set {addr}"),
            Action::SetTpSrc { port } | Action::SetTpDst { port } => {
                let hdr = match l4 {
                    Some(Item::Tcp(_)) => "tcp",
                    Some(Item::Udp(_)) => "udp",
                    _ => return err("set_tp_src/dst needs a tcp or udp item in the pattern for tc pedit"),
                };
                let field = if matches!(a, Action::SetTpSrc { .. }) { "sport" } else { "dport" };
                format!("pedit ex munge {hdr} {field} set {port}")
            }
            Action::DecTtl => match l3 {
                Some(Item::Ipv6(_)) => "pedit ex munge ip6 hoplimit dec".to_string(),
                _ => "pedit ex munge ip ttl dec".to_string(),
            },
            Action::OfPopVlan => "vlan pop".to_string(),
            Action::OfPushVlan { ethertype } => {
                let Some(Action::OfSetVlanVid { vid }) = actions.get(i) else {
                    return err("tc 'vlan push' needs the of_push_vlan to be followed by of_set_vlan_vid");
                };
                i += 1;
                let mut t = format!("vlan push id {vid}");
                if let Some(Action::OfSetVlanPcp { pcp }) = actions.get(i) {
                    i += 1;
                    write!(t, " priority {pcp}").ok();
                }
                match *ethertype {
                    0x8100 => {}
                    ETH_P_8021AD => t.push_str(" protocol 802.1ad"),
                    other => return err(format!("tc 'vlan push' takes 802.1q or 802.1ad, not {other:#06x}")),
                }
                t
            }
            Action::OfSetVlanVid { vid } => {
                if *vid > 0x0fff {
                    return err(format!("tc vlan id {vid} is above 4095"));
                }
                let mut t = format!("vlan modify id {vid}");
                if let Some(Action::OfSetVlanPcp { pcp }) = actions.get(i) {
                    i += 1;
                    write!(t, " priority {pcp}").ok();
                }
                t
            }
            Action::OfSetVlanPcp { .. } => return err("tc sets the vlan priority only together with the id"),
            Action::VxlanDecap => "tunnel_key unset".to_string(),
            Action::VxlanEncap { tunnel: Some(t) } => {
                let mut out = "tunnel_key set".to_string();
                if let Some(a) = t.src_ip {
                    write!(out, " src_ip {a}").ok();
                }
                if let Some(a) = t.dst_ip {
                    write!(out, " dst_ip {a}").ok();
                }
                if let Some(v) = t.vni {
                    write!(out, " id {v}").ok();
                }
                if let Some(p) = t.dst_port {
                    write!(out, " dst_port {p}").ok();
                }
                out
            }
            Action::VxlanEncap { tunnel: None } => return err("tc 'tunnel_key set' needs the tunnel headers inline"),
            Action::Queue { .. } => return err("tc flower cannot steer to an rx queue (rte_flow 'queue')"),
            Action::Rss(_) => return err("tc flower has no RSS action (the kernel spreads packets by the port's RSS, set with ethtool -X/-N, not per rule)"),
        };
        write!(s, " action {text}").ok();
    }
    Ok(())
}
