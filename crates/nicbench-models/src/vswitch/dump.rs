//! Megaflows in `ovs-appctl dpctl/dump-flows` syntax (the userspace/kernel datapath's
//! `odp_flow_format`): `recirc_id(0),in_port(2),eth_type(0x0800),ipv4(src=10.0.0.0/255.0.0.0,
//! frag=no), packets:1, bytes:60, used:0.0s, actions:3`.
//!
//! MERGE NOTE: nicbench-rules' openflow writer (another branch) will print `DpFlow`s; at merge,
//! [`format_dp_flow`] should delegate to it. Until then this is nicbench's only writer.

use std::fmt::Write;
use std::net::{Ipv4Addr, Ipv6Addr};

use nicbench_rules::openflow::{DpAction, DpFlow, FieldMatch, OfField};

fn mac(v: u128) -> String {
    let b = (v as u64).to_be_bytes();
    format!(
        "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        b[2], b[3], b[4], b[5], b[6], b[7]
    )
}

fn ip4(v: u128) -> String {
    Ipv4Addr::from(v as u32).to_string()
}

fn ip6(v: u128) -> String {
    Ipv6Addr::from(v).to_string()
}

fn with_mask(k: &FieldMatch, show: fn(u128) -> String) -> String {
    if k.mask == k.field.full_mask() {
        show(k.value)
    } else {
        format!("{}/{}", show(k.value), show(k.mask))
    }
}

fn dec_or_hex_mask(k: &FieldMatch) -> String {
    if k.mask == k.field.full_mask() {
        k.value.to_string()
    } else {
        format!("{}/{:#x}", k.value, k.mask)
    }
}

fn get(keys: &[FieldMatch], f: OfField) -> Option<&FieldMatch> {
    keys.iter().find(|k| k.field == f)
}

fn group(out: &mut Vec<String>, name: &str, parts: Vec<String>) {
    if !parts.is_empty() {
        out.push(format!("{name}({})", parts.join(",")));
    }
}

/// The match part of a megaflow.
pub fn format_keys(keys: &[FieldMatch]) -> String {
    use OfField::*;
    let mut out = Vec::new();
    if let Some(k) = get(keys, RecircId) {
        out.push(format!("recirc_id({})", dec_or_hex_mask(k)));
    }
    if let Some(k) = get(keys, InPort) {
        out.push(format!("in_port({})", k.value));
    }
    let mut tun = Vec::new();
    if let Some(k) = get(keys, TunId) {
        tun.push(format!("tun_id={:#x}", k.value));
    }
    for (f, n) in [(TunSrc, "src"), (TunDst, "dst")] {
        if let Some(k) = get(keys, f) {
            tun.push(format!("{n}={}", with_mask(k, ip4)));
        }
    }
    group(&mut out, "tunnel", tun);
    for (f, n) in [(CtState, "ct_state"), (CtZone, "ct_zone"), (CtMark, "ct_mark")] {
        if let Some(k) = get(keys, f) {
            out.push(format!("{n}({:#x}/{:#x})", k.value, k.mask));
        }
    }
    let mut eth = Vec::new();
    for (f, n) in [(DlSrc, "src"), (DlDst, "dst")] {
        if let Some(k) = get(keys, f) {
            eth.push(format!("{n}={}", with_mask(k, mac)));
        }
    }
    group(&mut out, "eth", eth);
    let inner_type = get(keys, DlType).map(|k| format!("eth_type({:#06x})", k.value));
    let tagged = get(keys, VlanTci).filter(|k| k.value & 0x1000 != 0);
    let mut l3 = Vec::new();
    let v4 = get(keys, DlType).is_some_and(|k| k.value == 0x0800);
    let v6 = get(keys, DlType).is_some_and(|k| k.value == 0x86dd);
    let mut ip = Vec::new();
    if v4 || v6 {
        let show = if v4 { ip4 } else { ip6 };
        let (s, d) = if v4 { (NwSrc, NwDst) } else { (Ipv6Src, Ipv6Dst) };
        for (f, n) in [(s, "src"), (d, "dst")] {
            if let Some(k) = get(keys, f) {
                ip.push(format!("{n}={}", with_mask(k, show)));
            }
        }
        if let Some(k) = get(keys, NwProto) {
            ip.push(format!("proto={}", dec_or_hex_mask(k)));
        }
        if let Some(k) = get(keys, NwTos) {
            ip.push(format!("tos={}", dec_or_hex_mask(k)));
        }
        if let Some(k) = get(keys, NwTtl) {
            ip.push(format!("ttl={}", dec_or_hex_mask(k)));
        }
        if let Some(k) = get(keys, NwFrag) {
            let v = match k.value & k.mask {
                0 => "no",
                1 if k.mask == 3 => "first",
                _ => "later",
            };
            ip.push(format!("frag={v}"));
        }
        group(&mut l3, if v4 { "ipv4" } else { "ipv6" }, ip);
        let proto = get(keys, NwProto).map(|k| k.value);
        let l4name = match proto {
            Some(6) => "tcp",
            Some(17) => "udp",
            Some(132) => "sctp",
            Some(1) => "icmp",
            Some(58) => "icmpv6",
            _ => "l4",
        };
        let icmp = matches!(proto, Some(1) | Some(58));
        let mut l4 = Vec::new();
        for (f, n) in [
            (TpSrc, if icmp { "type" } else { "src" }),
            (TpDst, if icmp { "code" } else { "dst" }),
        ] {
            if let Some(k) = get(keys, f) {
                l4.push(format!("{n}={}", dec_or_hex_mask(k)));
            }
        }
        group(&mut l3, l4name, l4);
        if let Some(k) = get(keys, TcpFlags) {
            l3.push(format!("tcp_flags({:#x}/{:#x})", k.value, k.mask));
        }
    }
    match tagged {
        Some(k) => {
            out.push("eth_type(0x8100)".into());
            let vid = k.value & 0xfff;
            let pcp = (k.value >> 13) & 7;
            let mut v = vec![if k.mask & 0xfff == 0xfff {
                format!("vid={vid}")
            } else {
                format!("vid={vid}/{:#x}", k.mask & 0xfff)
            }];
            // OVS omits a sub-field whose value and mask are both 0 (nicbench prints value & mask).
            if k.mask & 0xe000 == 0xe000 {
                v.push(format!("pcp={pcp}"));
            } else if k.mask & 0xe000 != 0 {
                v.push(format!("pcp={pcp}/{:#x}", (k.mask >> 13) & 7));
            }
            out.push(format!("vlan({})", v.join(",")));
            let mut enc: Vec<String> = inner_type.into_iter().collect();
            enc.extend(l3);
            out.push(format!("encap({})", enc.join(",")));
        }
        None => {
            if let Some(k) = get(keys, VlanTci) {
                // Untagged with the TCI consulted: OVS writes the "no VLAN" match as a zero TCI.
                out.push(format!("vlan_tci({:#06x}/{:#06x})", k.value, k.mask));
            }
            out.extend(inner_type);
            out.extend(l3);
        }
    }
    out.join(",")
}

/// The action part (`drop`, `3`, `set(ipv4(dst=10.9.9.9,ttl=63)),3`, `pop_vlan,push_vlan(vid=20,pcp=0),3`).
/// Consecutive sets of one header print as one `set(...)`, as OVS commits them; `l4` names the
/// transport header (`tcp`, `udp`, ...) of the flow.
pub fn format_actions(actions: &[DpAction], l4: &str) -> String {
    use OfField::*;
    let header = |f: OfField| match f {
        DlSrc | DlDst => "eth",
        NwSrc | NwDst | NwTos | NwTtl => "ipv4",
        Ipv6Src | Ipv6Dst => "ipv6",
        TpSrc | TpDst => "l4",
        _ => "other",
    };
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < actions.len() {
        let text = match &actions[i] {
            DpAction::Set { field, .. } => {
                let h = header(*field);
                let mut fields = Vec::new();
                while let Some(DpAction::Set { field, value, .. }) = actions
                    .get(i)
                    .filter(|a| matches!(a, DpAction::Set { field, .. } if header(*field) == h))
                {
                    fields.push(match field {
                        DlSrc => format!("src={}", mac(*value)),
                        DlDst => format!("dst={}", mac(*value)),
                        NwSrc => format!("src={}", ip4(*value)),
                        NwDst => format!("dst={}", ip4(*value)),
                        NwTos => format!("tos={value:#x}"),
                        NwTtl => format!("ttl={value}"),
                        Ipv6Src => format!("src={}", ip6(*value)),
                        Ipv6Dst => format!("dst={}", ip6(*value)),
                        TpSrc => format!("src={value}"),
                        TpDst => format!("dst={value}"),
                        other => format!("{other:?}={value:#x}"),
                    });
                    i += 1;
                }
                let name = if h == "l4" { l4 } else { h };
                parts.push(format!("set({name}({}))", fields.join(",")));
                continue;
            }
            DpAction::Output { port } => port.to_string(),
            DpAction::Drop => "drop".into(),
            DpAction::PushVlan { tci, .. } => format!("push_vlan(vid={},pcp={})", tci & 0xfff, (tci >> 13) & 7),
            DpAction::PopVlan => "pop_vlan".into(),
            DpAction::SetTunnel { id, src, dst } => {
                format!(
                    "set(tunnel(tun_id={id:#x},src={},dst={}))",
                    ip4(u128::from(*src)),
                    ip4(u128::from(*dst))
                )
            }
            DpAction::Tunnel { text } | DpAction::Ct { text } | DpAction::Other { text } => text.clone(),
            DpAction::Recirc { id } => format!("recirc({id:#x})"),
        };
        parts.push(text);
        i += 1;
    }
    if parts.is_empty() {
        "drop".into()
    } else {
        parts.join(",")
    }
}

fn l4_name(keys: &[FieldMatch]) -> &'static str {
    match get(keys, OfField::NwProto).map(|k| k.value) {
        Some(6) => "tcp",
        Some(17) => "udp",
        Some(132) => "sctp",
        _ => "l4",
    }
}

/// One `dpctl/dump-flows` line.
pub fn format_dp_flow(flow: &DpFlow) -> String {
    let mut s = format_keys(&flow.keys);
    let _ = write!(
        s,
        ", packets:{}, bytes:{}, used:{}",
        flow.packets,
        flow.bytes,
        flow.used.as_deref().unwrap_or("never")
    );
    if let Some(o) = flow.placement.offloaded {
        let _ = write!(s, ", offloaded:{}", if o { "yes" } else { "no" });
    }
    if let Some(dp) = &flow.placement.dp {
        let _ = write!(s, ", dp:{dp}");
    }
    let _ = write!(s, ", actions:{}", format_actions(&flow.actions, l4_name(&flow.keys)));
    s
}
