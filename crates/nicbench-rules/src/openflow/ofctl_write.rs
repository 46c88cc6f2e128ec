//! Writes [`OfRule`]s as `ovs-ofctl add-flow` text that parses back to the same rule.
//!
//! Canonical form: `table=T,priority=P[,cookie=C][,idle_timeout=S][,hard_timeout=S]`, the
//! protocol shorthand when `dl_type`/`nw_proto` are one (`tcp`, `udp6`, ...), `in_port`, then
//! the fields in [`OfField`] order with the names `ovs-ofctl` prints (`dl_vlan`, `nw_src`
//! with a prefix when the mask is one, `tcp_flags=+syn-ack`, ...), then `actions=`.

use super::fields::{FRAG_NAMES, SHORTHANDS, VLAN_CFI, VLAN_PCP_MASK, VLAN_VID_MASK};
use super::values::{self, fmt_flags_plus_minus, hex, mask_prefix_len, Addr, CT_STATE_FLAGS, TCP_FLAGS};
use super::{FieldMatch, OfAction, OfField, OfRule, PortRef};
use crate::error::WriteError;

/// One rule in `ovs-ofctl add-flow` syntax.
pub fn rule_to_string(rule: &OfRule) -> Result<String, WriteError> {
    let mut parts = vec![format!("table={}", rule.table), format!("priority={}", rule.priority)];
    if rule.cookie != 0 {
        parts.push(format!("cookie={:#x}", rule.cookie));
    }
    if rule.idle_timeout_s != 0 {
        parts.push(format!("idle_timeout={}", rule.idle_timeout_s));
    }
    if rule.hard_timeout_s != 0 {
        parts.push(format!("hard_timeout={}", rule.hard_timeout_s));
    }
    let fields = &rule.matches.fields;
    let get = |f: OfField| fields.iter().find(|m| m.field == f);
    let exact = |f: OfField| get(f).filter(|m| m.mask == f.full_mask()).map(|m| m.value);
    let dl_type = exact(OfField::DlType);
    let nw_proto = exact(OfField::NwProto);
    let shorthand = SHORTHANDS
        .iter()
        .find(|(_, t, p)| Some(*t as u128) == dl_type && *p == nw_proto.map(|p| p as u8))
        .or_else(|| {
            SHORTHANDS
                .iter()
                .find(|(_, t, p)| Some(*t as u128) == dl_type && p.is_none())
        });
    let (mut wrote_type, mut wrote_proto) = (false, false);
    if let Some((name, _, p)) = shorthand {
        parts.push(name.to_string());
        wrote_type = true;
        wrote_proto = p.is_some();
    }
    if let Some(port) = &rule.matches.in_port {
        parts.push(format!("in_port={}", port_text(port)?));
    }
    for m in fields {
        if (m.field == OfField::DlType && wrote_type) || (m.field == OfField::NwProto && wrote_proto) {
            continue;
        }
        parts.push(match_text(m, nw_proto)?);
    }
    let actions = rule.actions.iter().map(action_text).collect::<Result<Vec<_>, _>>()?;
    if actions.len() > 1 && rule.actions.contains(&OfAction::Drop) {
        return Err(WriteError("'drop' cannot be combined with other actions".into()));
    }
    Ok(format!(
        "{},actions={}",
        parts.join(","),
        if actions.is_empty() {
            "drop".into()
        } else {
            actions.join(",")
        }
    ))
}

/// Rules one per line.
pub fn rules_to_string(rules: &[OfRule]) -> Result<String, WriteError> {
    let mut out = String::new();
    for r in rules {
        out.push_str(&rule_to_string(r)?);
        out.push('\n');
    }
    Ok(out)
}

fn port_text(p: &PortRef) -> Result<String, WriteError> {
    Ok(match p {
        PortRef::Number(n) if *n < 0xff00 => n.to_string(),
        PortRef::Number(n) => return Err(WriteError(format!("port {n} is in OpenFlow's reserved range"))),
        PortRef::Name(n) => {
            let ok = !n.is_empty()
                && !n.starts_with(|c: char| c.is_ascii_digit())
                && !super::ofctl::reserved_port(n)
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
            if !ok {
                return Err(WriteError(format!(
                    "port name '{n}' cannot be written (letters, digits, '_', '-', '.'; not a number or reserved name)"
                )));
            }
            n.clone()
        }
        PortRef::Reserved(r) if super::ofctl::reserved_port(r) => r.to_ascii_uppercase(),
        PortRef::Reserved(r) => return Err(WriteError(format!("'{r}' is not a reserved OpenFlow port"))),
    })
}

fn addr(name: &str, kind: Addr, m: &FieldMatch) -> String {
    let bits = kind.bits();
    if m.mask == values::ones(bits) {
        return format!("{name}={}", kind.format(m.value));
    }
    match mask_prefix_len(bits, m.mask) {
        Some(len) if kind != Addr::Mac => format!("{name}={}/{len}", kind.format(m.value)),
        _ => format!("{name}={}/{}", kind.format(m.value), kind.format(m.mask)),
    }
}

fn int(name: &str, m: &FieldMatch, maskable: bool) -> Result<String, WriteError> {
    if m.mask == m.field.full_mask() {
        Ok(format!("{name}={}", m.value))
    } else if maskable {
        Ok(format!("{name}={}/{}", hex(m.value), hex(m.mask)))
    } else {
        Err(WriteError(format!(
            "{name} cannot be masked in OpenFlow (mask {})",
            hex(m.mask)
        )))
    }
}

fn inside(m: &FieldMatch) -> Result<(), WriteError> {
    if m.value & !m.mask != 0 || m.mask & !m.field.full_mask() != 0 {
        return Err(WriteError(format!(
            "{:?}: value {} has bits outside mask {}",
            m.field,
            hex(m.value),
            hex(m.mask)
        )));
    }
    Ok(())
}

fn match_text(m: &FieldMatch, nw_proto: Option<u128>) -> Result<String, WriteError> {
    use OfField::*;
    inside(m)?;
    let icmp = matches!(nw_proto, Some(1) | Some(58));
    Ok(match m.field {
        DlSrc => addr("dl_src", Addr::Mac, m),
        DlDst => addr("dl_dst", Addr::Mac, m),
        DlType if m.mask == 0xffff => format!("dl_type={:#06x}", m.value),
        DlType => return Err(WriteError(format!("dl_type cannot be masked (mask {})", hex(m.mask)))),
        VlanTci => vlan_text(m.value, m.mask),
        NwSrc => addr("nw_src", Addr::V4, m),
        NwDst => addr("nw_dst", Addr::V4, m),
        Ipv6Src => addr("ipv6_src", Addr::V6, m),
        Ipv6Dst => addr("ipv6_dst", Addr::V6, m),
        NwProto => int("nw_proto", m, false)?,
        NwTos => match m.mask {
            0xfc => format!("nw_tos={}", m.value),
            0x03 => format!("nw_ecn={}", m.value),
            0xff => format!("nw_tos={},nw_ecn={}", m.value & 0xfc, m.value & 0x03),
            _ => {
                return Err(WriteError(format!(
                    "TOS mask {} is neither DSCP (0xfc), ECN (0x03) nor both",
                    hex(m.mask)
                )))
            }
        },
        NwTtl => int("nw_ttl", m, false)?,
        NwFrag => match FRAG_NAMES.iter().find(|(_, v, k)| *v == m.value && *k == m.mask) {
            Some((n, _, _)) => format!("nw_frag={n}"),
            None => return Err(WriteError(format!("nw_frag {}/{} has no name", m.value, m.mask))),
        },
        TpSrc | TpDst if icmp => {
            let v6 = nw_proto == Some(58);
            let name = match (m.field == TpSrc, v6) {
                (true, false) => "icmp_type",
                (true, true) => "icmpv6_type",
                (false, false) => "icmp_code",
                (false, true) => "icmpv6_code",
            };
            if m.mask != 0xff {
                return Err(WriteError(format!(
                    "{name} is one byte matched exactly (mask 0xff), found mask {}",
                    hex(m.mask)
                )));
            }
            format!("{name}={}", m.value)
        }
        TpSrc => int("tp_src", m, true)?,
        TpDst => int("tp_dst", m, true)?,
        TcpFlags => match fmt_flags_plus_minus(m.value, m.mask, TCP_FLAGS) {
            Some(s) => format!("tcp_flags={s}"),
            None => format!("tcp_flags={}/{}", hex(m.value), hex(m.mask)),
        },
        TunId => masked_hex("tun_id", m),
        TunSrc => addr("tun_src", Addr::V4, m),
        TunDst => addr("tun_dst", Addr::V4, m),
        CtState => match fmt_flags_plus_minus(m.value, m.mask, CT_STATE_FLAGS) {
            Some(s) => format!("ct_state={s}"),
            None => format!("ct_state={}/{}", hex(m.value), hex(m.mask)),
        },
        CtZone => int("ct_zone", m, false)?,
        CtMark => masked_hex("ct_mark", m),
        Metadata => masked_hex("metadata", m),
        RecircId | InPort => {
            return Err(WriteError(format!(
                "{:?} is a datapath key, not an OpenFlow match field",
                m.field
            )))
        }
    })
}

fn masked_hex(name: &str, m: &FieldMatch) -> String {
    if m.mask == m.field.full_mask() {
        format!("{name}={}", hex(m.value))
    } else {
        format!("{name}={}/{}", hex(m.value), hex(m.mask))
    }
}

/// `dl_vlan`/`dl_vlan_pcp` when the TCI match is a tagged packet's VID and/or PCP, else
/// `vlan_tci=V/M` (as OVS's `match_format` chooses).
fn vlan_text(value: u128, mask: u128) -> String {
    let vid_mask = mask & VLAN_VID_MASK;
    let pcp_mask = mask & VLAN_PCP_MASK;
    let tagged = mask & VLAN_CFI != 0 && value & VLAN_CFI != 0;
    if tagged
        && (vid_mask == 0 || vid_mask == VLAN_VID_MASK)
        && (pcp_mask == 0 || pcp_mask == VLAN_PCP_MASK)
        && (vid_mask | pcp_mask) != 0
    {
        let mut s = Vec::new();
        if vid_mask != 0 {
            s.push(format!("dl_vlan={}", value & VLAN_VID_MASK));
        }
        if pcp_mask != 0 {
            s.push(format!("dl_vlan_pcp={}", (value & VLAN_PCP_MASK) >> 13));
        }
        return s.join(",");
    }
    if mask == 0xffff {
        format!("vlan_tci={value:#06x}")
    } else {
        format!("vlan_tci={value:#06x}/{mask:#06x}")
    }
}

fn action_text(a: &OfAction) -> Result<String, WriteError> {
    Ok(match a {
        OfAction::Output {
            port: PortRef::Reserved(r),
        } if r == "IN_PORT" => "in_port".into(),
        OfAction::Output { port } => format!("output:{}", port_text(port)?),
        OfAction::Drop => "drop".into(),
        OfAction::Normal => "normal".into(),
        OfAction::Controller => "controller".into(),
        OfAction::SetField { field, value, mask } => set_field_text(*field, *value, *mask)?,
        OfAction::PushVlan { tpid } if *tpid == 0x8100 || *tpid == 0x88a8 => format!("push_vlan:{tpid:#06x}"),
        OfAction::PushVlan { tpid } => {
            return Err(WriteError(format!(
                "push_vlan TPID {tpid:#06x} is neither 0x8100 nor 0x88a8"
            )))
        }
        OfAction::PopVlan => "pop_vlan".into(),
        OfAction::SetTunnel { id } => format!("set_tunnel64:{id:#x}"),
        OfAction::Resubmit {
            port: None,
            table: None,
        } => return Err(WriteError("resubmit needs a port or a table".into())),
        OfAction::Resubmit { port, table } => {
            let port = port.as_ref().map(port_text).transpose()?.unwrap_or_default();
            match table {
                Some(t) => format!("resubmit({port},{})", table_text(*t)?),
                None => format!("resubmit:{port}"),
            }
        }
        OfAction::GotoTable { table } => format!("goto_table:{}", table_text(*table)?),
        OfAction::Ct {
            commit,
            zone,
            table,
            other,
        } => {
            let mut opts = Vec::new();
            if *commit {
                opts.push("commit".to_string());
            }
            if let Some(z) = zone {
                opts.push(format!("zone={z}"));
            }
            if let Some(t) = table {
                opts.push(format!("table={}", table_text(*t)?));
            }
            for o in other {
                if o.is_empty()
                    || o == "commit"
                    || o.starts_with("table=")
                    || o.split_once('=')
                        .is_some_and(|(k, v)| k == "zone" && v.starts_with(|c: char| c.is_ascii_digit()))
                {
                    return Err(WriteError(format!("ct option '{o}' belongs in the typed fields")));
                }
                opts.push(o.clone());
            }
            format!("ct({})", opts.join(","))
        }
        OfAction::DecTtl => "dec_ttl".into(),
    })
}

fn table_text(t: u8) -> Result<String, WriteError> {
    if t == 255 {
        return Err(WriteError("table 255 is not a table (0..254)".into()));
    }
    Ok(t.to_string())
}

fn set_field_text(field: OfField, value: u128, mask: u128) -> Result<String, WriteError> {
    use OfField::*;
    let m = FieldMatch { field, value, mask };
    inside(&m)?;
    let full = mask == field.full_mask();
    let v = |kind: Addr| {
        if full {
            kind.format(value)
        } else {
            format!("{}/{}", kind.format(value), kind.format(mask))
        }
    };
    let n = |name: &str| {
        if full {
            format!("set_field:{}->{name}", hex(value))
        } else {
            format!("set_field:{}/{}->{name}", hex(value), hex(mask))
        }
    };
    // The mod_* forms where they exist: unlike set_field they need no protocol in the match.
    Ok(match field {
        DlSrc if full => format!("mod_dl_src:{}", v(Addr::Mac)),
        DlDst if full => format!("mod_dl_dst:{}", v(Addr::Mac)),
        NwSrc if full => format!("mod_nw_src:{}", v(Addr::V4)),
        NwDst if full => format!("mod_nw_dst:{}", v(Addr::V4)),
        DlSrc => format!("set_field:{}->eth_src", v(Addr::Mac)),
        DlDst => format!("set_field:{}->eth_dst", v(Addr::Mac)),
        NwSrc => format!("set_field:{}->ip_src", v(Addr::V4)),
        NwDst => format!("set_field:{}->ip_dst", v(Addr::V4)),
        TunSrc => format!("set_field:{}->tun_src", v(Addr::V4)),
        TunDst => format!("set_field:{}->tun_dst", v(Addr::V4)),
        Ipv6Src => format!("set_field:{}->ipv6_src", v(Addr::V6)),
        Ipv6Dst => format!("set_field:{}->ipv6_dst", v(Addr::V6)),
        VlanTci if mask == VLAN_CFI | VLAN_VID_MASK && value & VLAN_CFI != 0 => {
            format!("mod_vlan_vid:{}", value & VLAN_VID_MASK)
        }
        VlanTci if mask == VLAN_CFI | VLAN_PCP_MASK && value & VLAN_CFI != 0 => {
            format!("mod_vlan_pcp:{}", (value & VLAN_PCP_MASK) >> 13)
        }
        VlanTci if mask == VLAN_CFI | VLAN_VID_MASK => format!("set_field:{value}->vlan_vid"),
        VlanTci => n("vlan_tci"),
        NwTos if mask == 0xfc => format!("mod_nw_tos:{value}"),
        NwTos if mask == 0x03 => format!("mod_nw_ecn:{value}"),
        NwTos => {
            return Err(WriteError(format!(
                "a TOS set with mask {} is neither DSCP nor ECN",
                hex(mask)
            )))
        }
        NwTtl if full => format!("mod_nw_ttl:{value}"),
        TpSrc if full => format!("mod_tp_src:{value}"),
        TpDst if full => format!("mod_tp_dst:{value}"),
        DlType | NwProto | NwTtl | NwFrag | TpSrc | TpDst | CtState | CtZone | RecircId | InPort => {
            return Err(WriteError(format!(
                "{field:?} cannot be set{} in OpenFlow",
                if full { "" } else { " under a mask" }
            )))
        }
        TunId => n("tun_id"),
        Metadata => n("metadata"),
        TcpFlags | CtMark => return Err(WriteError(format!("{field:?} cannot be set by set_field"))),
    })
}
