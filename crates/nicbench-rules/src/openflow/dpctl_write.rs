//! Writes [`DpFlow`]s in `dpctl/dump-flows` syntax (the userspace datapath's key order and
//! value formats, [`super::dpctl_keys`]), so that a dump parsed by nicbench is written back
//! as OVS printed it, and the virtual OVS datapath prints its megaflows the same way.

use super::dpctl_keys::{self as keys, Fmt, Sub, FRAG};
use super::ofctl::split_pieces;
use super::values::{self, fmt_flags_plus_minus, hex};
use super::{DpAction, DpFlow, FieldMatch, OfField};
use crate::error::WriteError;

/// One flow line.
pub fn dp_flow_to_string(flow: &DpFlow) -> Result<String, WriteError> {
    let mut out = String::new();
    if let Some(u) = &flow.ufid {
        out.push_str(&format!("ufid:{u}, "));
    }
    out.push_str(&keys_text(flow)?);
    out.push_str(&format!(", packets:{}, bytes:{}", flow.packets, flow.bytes));
    if let Some(u) = &flow.used {
        out.push_str(&format!(", used:{u}"));
    }
    if let Some(f) = &flow.tcp_flags_seen {
        out.push_str(&format!(", flags:{f}"));
    }
    if let Some(o) = flow.placement.offloaded {
        out.push_str(if o { ", offloaded:yes" } else { ", offloaded:no" });
    }
    if let Some(dp) = &flow.placement.dp {
        out.push_str(&format!(", dp:{dp}"));
    }
    out.push_str(", actions:");
    out.push_str(&actions_text(flow)?);
    if let Some(x) = &flow.dp_extra_info {
        out.push_str(&format!(", dp-extra-info:{x}"));
    }
    Ok(out)
}

/// Flows one per line.
pub fn dp_flows_to_string(flows: &[DpFlow]) -> Result<String, WriteError> {
    let mut out = String::new();
    for f in flows {
        out.push_str(&dp_flow_to_string(f)?);
        out.push('\n');
    }
    Ok(out)
}

fn exact(flow_keys: &[FieldMatch], f: OfField) -> Option<u128> {
    flow_keys
        .iter()
        .find(|m| m.field == f && m.mask == f.full_mask())
        .map(|m| m.value)
}

/// The datapath key a field is printed in, given the flow's other keys.
fn key_of(field: OfField, flow_keys: &[FieldMatch]) -> Result<&'static str, WriteError> {
    use OfField::*;
    let v6 = exact(flow_keys, DlType) == Some(0x86dd);
    Ok(match field {
        RecircId => "recirc_id",
        InPort => "in_port",
        DlSrc | DlDst => "eth",
        DlType => "eth_type",
        VlanTci => "vlan",
        NwSrc | NwDst => "ipv4",
        Ipv6Src | Ipv6Dst => "ipv6",
        NwProto | NwTos | NwTtl | NwFrag => {
            if v6 {
                "ipv6"
            } else {
                "ipv4"
            }
        }
        TpSrc | TpDst => match exact(flow_keys, NwProto) {
            Some(6) => "tcp",
            Some(17) => "udp",
            Some(132) => "sctp",
            Some(1) => "icmp",
            Some(58) => "icmpv6",
            other => {
                return Err(WriteError(format!(
                    "a datapath transport port needs an exact ipv4/ipv6 proto of tcp, udp, sctp, icmp or icmpv6 (found {other:?})"
                )))
            }
        },
        TcpFlags => "tcp_flags",
        TunId | TunSrc | TunDst => "tunnel",
        CtState => "ct_state",
        CtZone => "ct_zone",
        CtMark => "ct_mark",
        Metadata => return Err(WriteError("OpenFlow metadata is not a datapath key".into())),
    })
}

/// `V` or `V/M` of one value.
pub(crate) fn sub_text(sub: &Sub, value: u128, mask: u128) -> Result<String, WriteError> {
    let full = values::ones(sub.bits);
    let is_exact = mask == full;
    Ok(match sub.fmt {
        Fmt::Mac | Fmt::V4 | Fmt::V6 => {
            let f = match sub.fmt {
                Fmt::Mac => values::fmt_mac,
                Fmt::V4 => values::fmt_ipv4,
                _ => values::fmt_ipv6,
            };
            if is_exact {
                f(value)
            } else {
                format!("{}/{}", f(value), f(mask))
            }
        }
        Fmt::Dec => {
            if is_exact {
                value.to_string()
            } else {
                format!("{value}/{}", hex(mask))
            }
        }
        Fmt::Hex => {
            if is_exact {
                hex(value)
            } else {
                format!("{}/{}", hex(value), hex(mask))
            }
        }
        Fmt::Hex4 => {
            if is_exact {
                format!("{value:#06x}")
            } else {
                format!("{value:#06x}/{mask:#06x}")
            }
        }
        Fmt::Frag => {
            let name = FRAG
                .iter()
                .find(|(_, v)| *v == value)
                .map(|(n, _)| *n)
                .ok_or_else(|| WriteError(format!("frag value {value} is none of no (0), first (1), later (3)")))?;
            if mask == 3 {
                name.to_string()
            } else {
                format!("{name}/{}", hex(mask & 3))
            }
        }
        Fmt::Flags(names) => {
            if is_exact {
                let named: u128 = names.iter().map(|(_, b)| b).sum();
                if value == 0 {
                    "0".into()
                } else if value & !named == 0 {
                    names
                        .iter()
                        .filter(|(_, b)| value & b != 0)
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join("|")
                } else {
                    format!("{}/{}", hex(value), hex(mask))
                }
            } else {
                match fmt_flags_plus_minus(value, mask, names).filter(|_| value & !mask == 0) {
                    Some(s) => s,
                    None => format!("{}/{}", hex(value), hex(mask)),
                }
            }
        }
    })
}

fn vlan_text(value: u128, mask: u128) -> Result<String, WriteError> {
    if mask & 0x1000 == 0 {
        return Err(WriteError(
            "a datapath vlan(...) key matches the CFI bit exactly (mask 0x1000)".into(),
        ));
    }
    let (vid, vid_m) = (value & 0xfff, mask & 0xfff);
    let (pcp, pcp_m) = ((value >> 13) & 7, (mask >> 13) & 7);
    let mut parts = Vec::new();
    if vid != 0 || vid_m != 0 {
        parts.push(if vid_m == 0xfff {
            format!("vid={vid}")
        } else {
            format!("vid={vid}/{vid_m:#x}")
        });
    }
    if pcp != 0 || pcp_m != 0 {
        parts.push(if pcp_m == 7 {
            format!("pcp={pcp}")
        } else {
            format!("pcp={pcp}/{pcp_m:#x}")
        });
    }
    if value & 0x1000 == 0 {
        parts.push("cfi=0".into());
    }
    Ok(format!("vlan({})", parts.join(",")))
}

/// Sub-field name of a residue piece (`ttl=64` → `ttl`, `flags(..)` → `flags`).
fn residue_name(s: &str) -> &str {
    s.split(['=', '(']).next().unwrap_or(s)
}

fn keys_text(flow: &DpFlow) -> Result<String, WriteError> {
    // (rank, text) of each top-level key.
    let mut entries: Vec<(usize, String)> = Vec::new();
    let mut structured: Vec<(&'static str, Vec<(usize, String)>)> = Vec::new();
    let add_sub =
        |structured: &mut Vec<(&'static str, Vec<(usize, String)>)>, key: &'static str, pos: usize, text: String| {
            match structured.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => v.push((pos, text)),
                None => structured.push((key, vec![(pos, text)])),
            }
        };
    let vlan = flow.keys.iter().find(|k| k.field == OfField::VlanTci);
    for m in &flow.keys {
        let key = key_of(m.field, &flow.keys)?;
        if key == "vlan" {
            continue;
        }
        if let Some(spec) = keys::single(key) {
            entries.push((keys::rank(key), format!("{key}({})", sub_text(&spec, m.value, m.mask)?)));
            continue;
        }
        let spec = keys::structured(key).expect("structured key");
        let (pos, sub) = spec
            .iter()
            .enumerate()
            .find(|(_, s)| s.field == Some(m.field))
            .ok_or_else(|| WriteError(format!("{:?} has no place in {key}(...)", m.field)))?;
        add_sub(
            &mut structured,
            key,
            pos,
            format!("{}={}", sub.name, sub_text(sub, m.value, m.mask)?),
        );
    }
    let mut empty_encap = false;
    for o in &flow.other_keys {
        let name = o.split('(').next().unwrap_or(o);
        if o == "encap()" {
            empty_encap = true;
            continue;
        }
        match keys::structured(name).filter(|_| name != "vlan") {
            Some(spec) => {
                let key = keys::KEY_ORDER
                    .iter()
                    .copied()
                    .find(|k| *k == name)
                    .expect("structured keys are ordered");
                let inner = o
                    .strip_prefix(name)
                    .and_then(|r| r.strip_prefix('('))
                    .and_then(|r| r.strip_suffix(')'));
                let inner = inner.ok_or_else(|| WriteError(format!("other key '{o}' is not NAME(...)")))?;
                if inner.is_empty() && !structured.iter().any(|(k, _)| *k == key) {
                    structured.push((key, Vec::new()));
                }
                for piece in split_pieces(inner, 0, inner.len(), false) {
                    let pos = spec
                        .iter()
                        .position(|s| s.name == residue_name(piece.text))
                        .unwrap_or(spec.len());
                    add_sub(&mut structured, key, pos, piece.text.to_string());
                }
            }
            None => {
                if !o.ends_with(')') || !o.contains('(') {
                    return Err(WriteError(format!("other key '{o}' is not NAME(...)")));
                }
                entries.push((keys::rank(name), o.clone()));
            }
        }
    }
    for (key, mut subs) in structured {
        subs.sort_by_key(|(pos, _)| *pos);
        let text = subs.into_iter().map(|(_, t)| t).collect::<Vec<_>>().join(",");
        entries.push((keys::rank(key), format!("{key}({text})")));
    }
    entries.sort_by_key(|(r, _)| *r);
    let Some(v) = vlan else {
        if empty_encap {
            return Err(WriteError("encap() without a vlan key".into()));
        }
        return Ok(entries.into_iter().map(|(_, t)| t).collect::<Vec<_>>().join(","));
    };
    let (outer, inner): (Vec<_>, Vec<_>) = entries.into_iter().partition(|(r, _)| *r < keys::encap_rank());
    let mut parts: Vec<String> = outer.into_iter().map(|(_, t)| t).collect();
    parts.push("eth_type(0x8100)".into());
    parts.push(vlan_text(v.value, v.mask)?);
    if !inner.is_empty() || empty_encap {
        parts.push(format!(
            "encap({})",
            inner.into_iter().map(|(_, t)| t).collect::<Vec<_>>().join(",")
        ));
    }
    Ok(parts.join(","))
}

/// A set() being built: its key, the last field in it, and (sub-field position, text)s.
type PendingSet = Option<(&'static str, OfField, Vec<(usize, String)>)>;

fn actions_text(flow: &DpFlow) -> Result<String, WriteError> {
    let mut out: Vec<String> = Vec::new();
    // Consecutive Sets of one key, fields in increasing order, are one set() (as OVS commits them).
    let mut pending: PendingSet = None;
    let flush = |out: &mut Vec<String>, pending: &mut PendingSet| {
        if let Some((key, _, subs)) = pending.take() {
            out.push(format!(
                "set({key}({}))",
                subs.into_iter().map(|(_, t)| t).collect::<Vec<_>>().join(",")
            ));
        }
    };
    for a in &flow.actions {
        if let DpAction::Set { field, value, mask } = a {
            let key = key_of(*field, &flow.keys)?;
            let spec = keys::structured(key).filter(|_| key != "vlan").ok_or_else(|| {
                WriteError(format!(
                    "{field:?} cannot be set with set(...) (use push_vlan/pop_vlan for VLANs)"
                ))
            })?;
            let (pos, sub) = spec
                .iter()
                .enumerate()
                .find(|(_, s)| s.field == Some(*field))
                .expect("field in its key");
            let text = format!("{}={}", sub.name, sub_text(sub, *value, *mask)?);
            match &mut pending {
                Some((k, last, subs)) if *k == key && *last < *field => {
                    subs.push((pos, text));
                    *last = *field;
                }
                _ => {
                    flush(&mut out, &mut pending);
                    pending = Some((key, *field, vec![(pos, text)]));
                }
            }
            continue;
        }
        flush(&mut out, &mut pending);
        out.push(match a {
            DpAction::Output { port } => port.to_string(),
            DpAction::Drop => "drop".into(),
            DpAction::PushVlan { tpid, tci } => {
                let mut s = String::from("push_vlan(");
                if *tpid != 0x8100 {
                    s.push_str(&format!("tpid={tpid:#06x},"));
                }
                s.push_str(&format!("vid={},pcp={}", tci & 0xfff, tci >> 13));
                if tci & 0x1000 == 0 {
                    s.push_str(",cfi=0");
                }
                s.push(')');
                s
            }
            DpAction::PopVlan => "pop_vlan".into(),
            DpAction::SetTunnel { id, src, dst } => format!(
                "set(tunnel(tun_id={},src={},dst={}))",
                hex(*id as u128),
                values::fmt_ipv4(*src as u128),
                values::fmt_ipv4(*dst as u128)
            ),
            DpAction::Recirc { id } => format!("recirc({})", hex(*id as u128)),
            DpAction::Tunnel { text } => checked_text(text, &["tnl_push(", "tnl_pop("])?,
            DpAction::Ct { text } => checked_text(text, &["ct(", "ct"])?,
            DpAction::Other { text } => checked_text(text, &[""])?,
            DpAction::Set { .. } => unreachable!("handled above"),
        });
    }
    flush(&mut out, &mut pending);
    if out.is_empty() {
        return Ok("drop".into());
    }
    Ok(out.join(","))
}

/// A text action must start as its kind does and keep its parentheses balanced, or the
/// line would not parse back.
fn checked_text(text: &str, prefixes: &[&str]) -> Result<String, WriteError> {
    let mut depth = 0i32;
    let ok_parens = text.chars().all(|c| {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        depth >= 0
    }) && depth == 0;
    let top_comma = {
        let mut d = 0;
        text.chars().any(|c| {
            match c {
                '(' => d += 1,
                ')' => d -= 1,
                _ => {}
            }
            d == 0 && (c == ',' || c == ' ')
        })
    };
    if text.is_empty() || !ok_parens || top_comma || !prefixes.iter().any(|p| text.starts_with(p)) {
        return Err(WriteError(format!(
            "datapath action text '{text}' cannot be written as one action"
        )));
    }
    Ok(text.to_string())
}
