//! OpenFlow actions as `ovs-ofctl` takes them (ovs-actions(7)), normalized so that the
//! spellings OVS treats as one action are one [`OfAction`]: `mod_vlan_vid:5` and
//! `set_field:4101->vlan_vid`, `set_tunnel:5` and `set_field:5->tun_id`, `strip_vlan` and
//! `pop_vlan`, `output:LOCAL` and `local`, `in_port` and `output:IN_PORT`.
//!
//! VLAN sets are `SetField { VlanTci, 0x1000 | vid, 0x1fff }` (VID) and
//! `SetField { VlanTci, 0x1000 | pcp << 13, 0xf000 }` (PCP): the CFI ("present") bit is in
//! the mask and set, i.e. the packet is tagged afterwards. OVS's `mod_vlan_vid` and
//! `mod_vlan_pcp` push a tag on an untagged packet first (`push_vlan_if_needed`; OpenFlow
//! 1.3+ dumps print that as `push_vlan:0x8100,set_field:..` when the rule's match does not
//! guarantee a tag, checked in `tests/ovs_oracle.rs`); `set_field` on a VLAN field needs a
//! tag already (matched or pushed). A datapath model should read the set that way.

use super::fields::{self, VLAN_CFI, VLAN_PCP_MASK, VLAN_VID_MASK};
use super::ofctl::check_prerequisite;
use super::ofctl::{parse_port, reserved_port, split_pieces, Piece};
use super::values::{self, Addr};
use super::{OfAction, OfField, OfMatch, PortRef};
use crate::error::LineError;
use crate::lex::parse_c_uint;

pub(crate) const ACTIONS_ALLOWED: &str = "output:PORT, output(port=PORT), a port number, drop, normal, in_port, controller, local, flood, all, mod_dl_src:, mod_dl_dst:, mod_nw_src:, mod_nw_dst:, mod_nw_tos:, mod_nw_ecn:, mod_nw_ttl:, mod_tp_src:, mod_tp_dst:, mod_vlan_vid:, mod_vlan_pcp:, set_field:V->FIELD, push_vlan:TPID, strip_vlan, pop_vlan, set_tunnel:, set_tunnel64:, resubmit:PORT, resubmit(PORT,TABLE), goto_table:T, ct(...), dec_ttl";

/// Parses the action list `line[start..end]` of a rule matching `m`.
pub(crate) fn parse_actions(line: &str, start: usize, end: usize, m: &OfMatch) -> Result<Vec<OfAction>, LineError> {
    let pieces = split_pieces(line, start, end, true);
    let mut out = Vec::new();
    let mut drop_at: Option<Piece> = None;
    for p in &pieces {
        if p.text.eq_ignore_ascii_case("drop") {
            drop_at = Some(*p);
            continue;
        }
        let action = parse_action(p)?;
        if p.text.starts_with("set_field:") {
            let pushed = out.iter().any(|a| matches!(a, OfAction::PushVlan { .. }));
            set_field_prerequisite(m, &action, pushed).map_err(|msg| p.err(msg))?;
        }
        out.push(action);
    }
    if let Some(p) = drop_at {
        if !out.is_empty() {
            return Err(p.err("\"drop\" must not be accompanied by any other action"));
        }
    }
    // An empty list drops, as `ovs-ofctl` prints it.
    if out.is_empty() {
        out.push(OfAction::Drop);
    }
    Ok(out)
}

/// `name:arg`, `name(arg)` or `name`.
fn split_action(text: &str) -> Result<(&str, Option<&str>, bool), String> {
    match text.find([':', '(']) {
        None => Ok((text, None, false)),
        Some(i) if text.as_bytes()[i] == b':' => Ok((&text[..i], Some(&text[i + 1..]), false)),
        Some(i) => {
            if !text.ends_with(')') {
                return Err(format!(
                    "'{}(' is not closed by ')' at the end of the action",
                    &text[..i]
                ));
            }
            Ok((&text[..i], Some(&text[i + 1..text.len() - 1]), true))
        }
    }
}

fn parse_action(p: &Piece) -> Result<OfAction, LineError> {
    let (name, arg, parens) = split_action(p.text).map_err(|m| p.err(m))?;
    let lname = name.to_ascii_lowercase();
    let need = |what: &str| p.err(format!("'{name}' needs {what}"));
    let e = |m: String| p.err(format!("{name}: {m}"));
    let set = |field: OfField, value: u128, mask: u128| OfAction::SetField { field, value, mask };
    let full = |field: OfField| field.full_mask();
    Ok(match (lname.as_str(), arg) {
        // `output(port=P)`: output:P. ovs-ofctl 3.1 takes the parenthesized form only with
        // `max_len` (truncation, not modelled): nicbench is more lenient here, on purpose.
        ("output", Some(a)) if parens => {
            let port = a
                .strip_prefix("port=")
                .ok_or_else(|| need("'port=PORT' (other output options are not modelled)"))?;
            if port.contains(',') {
                return Err(p.err("output(...): only 'port=PORT' is modelled (max_len truncation is not)"));
            }
            output(parse_port(port).map_err(e)?)
        }
        ("output", Some(a)) => output(parse_port(a).map_err(e)?),
        ("output", None) => return Err(need("a port: output:PORT")),
        ("normal", None) => OfAction::Normal,
        ("controller", None) => OfAction::Controller,
        // `ovs-ofctl` prints the default controller action as CONTROLLER:65535.
        ("controller", Some("65535")) => OfAction::Controller,
        ("controller", Some(_)) => {
            return Err(p.err("controller: only the default (controller or controller:65535) is modelled"))
        }
        ("in_port" | "local" | "flood" | "all", None) => output(PortRef::Reserved(lname.to_ascii_uppercase())),
        ("mod_dl_src", Some(a)) => set(OfField::DlSrc, values::mac(a).map_err(e)?, full(OfField::DlSrc)),
        ("mod_dl_dst", Some(a)) => set(OfField::DlDst, values::mac(a).map_err(e)?, full(OfField::DlDst)),
        ("mod_nw_src", Some(a)) => set(OfField::NwSrc, values::ipv4(a).map_err(e)?, full(OfField::NwSrc)),
        ("mod_nw_dst", Some(a)) => set(OfField::NwDst, values::ipv4(a).map_err(e)?, full(OfField::NwDst)),
        ("mod_nw_tos", Some(a)) => {
            let (v, m) = fields::parse_value(fields::lookup("nw_tos").expect("nw_tos"), a).map_err(e)?;
            set(OfField::NwTos, v, m)
        }
        ("mod_nw_ecn", Some(a)) => set(OfField::NwTos, values::uint(a, 2).map_err(e)?, 0x03),
        ("mod_nw_ttl", Some(a)) => set(OfField::NwTtl, values::uint(a, 8).map_err(e)?, 0xff),
        ("mod_tp_src", Some(a)) => set(OfField::TpSrc, values::uint(a, 16).map_err(e)?, 0xffff),
        ("mod_tp_dst", Some(a)) => set(OfField::TpDst, values::uint(a, 16).map_err(e)?, 0xffff),
        ("mod_vlan_vid", Some(a)) => {
            let vid = values::uint(a, 12).map_err(e)?;
            set(OfField::VlanTci, VLAN_CFI | vid, VLAN_CFI | VLAN_VID_MASK)
        }
        ("mod_vlan_pcp", Some(a)) => {
            let pcp = values::uint(a, 3).map_err(e)?;
            set(OfField::VlanTci, VLAN_CFI | (pcp << 13), VLAN_CFI | VLAN_PCP_MASK)
        }
        ("set_field", Some(a)) => parse_set_field(a).map_err(e)?,
        ("push_vlan", Some(a)) => {
            let tpid = parse_c_uint(a).unwrap_or(0);
            if tpid != 0x8100 && tpid != 0x88a8 {
                return Err(p.err(format!("push_vlan: TPID '{a}' is neither 0x8100 nor 0x88a8")));
            }
            OfAction::PushVlan { tpid: tpid as u16 }
        }
        ("strip_vlan" | "pop_vlan", None) => OfAction::PopVlan,
        ("set_tunnel", Some(a)) => OfAction::SetTunnel {
            id: values::uint(a, 32).map_err(e)? as u64,
        },
        ("set_tunnel64", Some(a)) => OfAction::SetTunnel {
            id: values::uint(a, 64).map_err(e)? as u64,
        },
        ("resubmit", Some(a)) if parens => {
            let parts: Vec<&str> = a.split(',').map(str::trim).collect();
            if parts.len() > 2 {
                return Err(p.err("resubmit(PORT,TABLE): the ',ct' form is not modelled"));
            }
            let port = match parts[0] {
                "" => None,
                s => Some(parse_port(s).map_err(e)?),
            };
            let table = match parts.get(1) {
                None | Some(&"") => None,
                Some(t) => Some(table_number(t).map_err(e)?),
            };
            if port.is_none() && table.is_none() {
                return Err(need("a port or a table: resubmit(PORT,TABLE)"));
            }
            OfAction::Resubmit { port, table }
        }
        ("resubmit", Some(a)) => OfAction::Resubmit {
            port: Some(parse_port(a).map_err(e)?),
            table: None,
        },
        ("goto_table", Some(a)) => OfAction::GotoTable {
            table: table_number(a).map_err(e)?,
        },
        ("ct", arg) => parse_ct(arg.unwrap_or("")).map_err(e)?,
        ("dec_ttl", None) => OfAction::DecTtl,
        ("dec_ttl", Some(_)) => return Err(p.err("dec_ttl(ID,...): controller ids are not modelled; write dec_ttl")),
        (_, None) if name.starts_with(|c: char| c.is_ascii_digit()) => output(parse_port(name).map_err(e)?),
        (_, None) if reserved_port(name) => output(parse_port(name).map_err(e)?),
        (_, Some(_)) if is_known(&lname) => return Err(p.err(format!("'{name}' takes no argument"))),
        (_, None) if is_known(&lname) => return Err(need("an argument")),
        _ => {
            return Err(p.err(format!(
                "unknown action '{name}' (allowed: {ACTIONS_ALLOWED}; a port given by name needs output:NAME)"
            )))
        }
    })
}

fn is_known(name: &str) -> bool {
    ACTIONS_ALLOWED.split(", ").any(|a| {
        a.trim_end_matches(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .split([':', '('])
            .next()
            == Some(name)
    })
}

/// `output:NORMAL`/`output:CONTROLLER` are the `normal`/`controller` actions.
fn output(port: PortRef) -> OfAction {
    match &port {
        PortRef::Reserved(n) if n == "NORMAL" => OfAction::Normal,
        PortRef::Reserved(n) if n == "CONTROLLER" => OfAction::Controller,
        _ => OfAction::Output { port },
    }
}

fn table_number(t: &str) -> Result<u8, String> {
    parse_c_uint(t)
        .and_then(|n| u8::try_from(n).ok())
        .filter(|&n| n < 255)
        .ok_or_else(|| format!("bad table '{t}' (expected 0..254)"))
}

/// `set_field` needs the field's protocol in the match, or a VLAN (matched or pushed before)
/// for VLAN fields: `ovs-ofctl` rejects it otherwise ("actions are invalid with specified
/// match"). The `mod_*` actions have no such prerequisite (they do nothing to a packet
/// without the header).
fn set_field_prerequisite(m: &OfMatch, action: &OfAction, pushed_vlan: bool) -> Result<(), String> {
    let field = match action {
        OfAction::SetField { field, .. } => *field,
        _ => return Ok(()),
    };
    if field == OfField::VlanTci {
        let tagged = m
            .fields
            .iter()
            .any(|f| f.field == OfField::VlanTci && f.mask & VLAN_CFI != 0 && f.value & VLAN_CFI != 0);
        return if tagged || pushed_vlan {
            Ok(())
        } else {
            Err("setting a VLAN field needs a VLAN: match one (dl_vlan=..) or push_vlan first (ovs-ofctl: actions are invalid with specified match)".into())
        };
    }
    let name = fields::FIELDS.iter().find(|f| {
        f.field == field
            && matches!(
                f.name,
                "nw_src" | "nw_dst" | "ipv6_src" | "ipv6_dst" | "nw_tos" | "nw_ttl" | "tp_src" | "tp_dst"
            )
    });
    match name {
        Some(name) => check_prerequisite(m, name).map_err(|e| {
            format!("set_field: {e}").replace(
                "(ovs-ofctl would silently ignore it)",
                "(ovs-ofctl: actions are invalid with specified match)",
            )
        }),
        None => Ok(()),
    }
}

/// `VALUE[/MASK]->FIELD`.
fn parse_set_field(arg: &str) -> Result<OfAction, String> {
    let (v, f) = arg
        .rsplit_once("->")
        .ok_or("expected VALUE->FIELD (e.g. set_field:10.0.0.1->nw_dst)")?;
    let name = fields::lookup(f).ok_or_else(|| format!("unknown field '{f}' (allowed: {})", fields::names_list()))?;
    if matches!(name.field, OfField::CtState | OfField::CtZone | OfField::CtMark) {
        return Err(format!(
            "{f} cannot be set outside of ct(...) (e.g. ct(commit,exec(set_field:1->ct_mark)))"
        ));
    }
    if name.field == OfField::TcpFlags {
        return Err("tcp_flags is read-only".into());
    }
    let v_is_addr = matches!(name.syntax, fields::Syntax::Addr(Addr::V4 | Addr::V6));
    let (value, mask) = fields::parse_value(name, v)?;
    if v_is_addr && v.contains('/') {
        // set_field masks are bit masks, not prefixes: bits outside are an error here too.
        let (raw, _) = values::addr_masked(if name.field.bits() == 32 { Addr::V4 } else { Addr::V6 }, v)?;
        if raw & !mask != 0 {
            return Err(format!("value {} has bits outside the mask", v));
        }
    }
    if name.field == OfField::TunId && mask == OfField::TunId.full_mask() {
        return Ok(OfAction::SetTunnel { id: value as u64 });
    }
    Ok(OfAction::SetField {
        field: name.field,
        value,
        mask,
    })
}

/// `ct(commit,zone=N,table=T,...)`: options other than these kept as text, in order.
fn parse_ct(arg: &str) -> Result<OfAction, String> {
    let (mut commit, mut zone, mut table, mut other) = (false, None, None, Vec::new());
    let line = arg;
    for p in split_pieces(line, 0, line.len(), false) {
        match p.text.split_once('=') {
            None if p.text == "commit" => commit = true,
            Some(("zone", z)) if z.starts_with(|c: char| c.is_ascii_digit()) => {
                zone = Some(
                    parse_c_uint(z)
                        .and_then(|n| u16::try_from(n).ok())
                        .ok_or_else(|| format!("bad zone '{z}' (0..65535)"))?,
                )
            }
            Some(("table", t)) => table = Some(table_number(t)?),
            _ => other.push(p.text.to_string()),
        }
    }
    Ok(OfAction::Ct {
        commit,
        zone,
        table,
        other,
    })
}
