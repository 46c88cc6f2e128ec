//! Writes the model back as testpmd commands; the output parses back to the same model.
//!
//! Canonical field form: `name is V` for a full mask without range; otherwise
//! `name spec V [name last L] name mask M` (or `name prefix N` for address prefixes).
//! Because every written field carries a mask, the item's mask is never left to
//! rte_flow's default, so re-parsing gives back exactly the same masks.

use super::fields::{tokens, Form, TokenDesc};
use crate::error::WriteError;
use crate::model::{
    mask_prefix_len, ones, Action, Command, Field, FieldBits, Item, MacAddr, Rule, SlotDesc, ValueKind,
};
use std::fmt::{self, Write};
use std::net::{Ipv4Addr, Ipv6Addr};

/// The command in testpmd syntax; fails only for what testpmd cannot say inline (a VXLAN
/// encapsulation carrying its own tunnel headers).
pub fn command_to_string(cmd: &Command) -> Result<String, WriteError> {
    if let Some(rule) = cmd.rule() {
        check_expressible(rule)?;
    }
    Ok(cmd.to_string())
}

/// The rule (attributes, pattern, actions) in testpmd syntax.
pub fn rule_to_string(rule: &Rule) -> Result<String, WriteError> {
    check_expressible(rule)?;
    Ok(rule.to_string())
}

fn check_expressible(rule: &Rule) -> Result<(), WriteError> {
    if rule
        .actions
        .iter()
        .any(|a| matches!(a, Action::VxlanEncap { tunnel: Some(_) }))
    {
        return Err(WriteError(
            "testpmd 'vxlan_encap' takes its tunnel from 'set vxlan'; an inline tunnel cannot be written".into(),
        ));
    }
    Ok(())
}

pub(crate) fn write_command(f: &mut fmt::Formatter<'_>, cmd: &Command) -> fmt::Result {
    match cmd {
        Command::Create { port, rule } => {
            write!(f, "flow create {port} ")?;
            write_rule(f, rule)
        }
        Command::Validate { port, rule } => {
            write!(f, "flow validate {port} ")?;
            write_rule(f, rule)
        }
        Command::Destroy { port, rule_ids } => {
            write!(f, "flow destroy {port}")?;
            rule_ids.iter().try_for_each(|id| write!(f, " rule {id}"))
        }
        Command::Flush { port } => write!(f, "flow flush {port}"),
    }
}

/// `Display` of a rule. An inline VXLAN tunnel is dropped here (`Display` cannot fail);
/// [`rule_to_string`] reports it instead.
pub(crate) fn write_rule(f: &mut fmt::Formatter<'_>, rule: &Rule) -> fmt::Result {
    let a = &rule.attr;
    if a.group != 0 {
        write!(f, "group {} ", a.group)?;
    }
    if a.priority != 0 {
        write!(f, "priority {} ", a.priority)?;
    }
    for (on, word) in [
        (a.ingress, "ingress "),
        (a.egress, "egress "),
        (a.transfer, "transfer "),
    ] {
        if on {
            f.write_str(word)?;
        }
    }
    f.write_str("pattern ")?;
    for item in &rule.pattern {
        write_item(f, item)?;
        f.write_str(" / ")?;
    }
    f.write_str("end actions ")?;
    for action in &rule.actions {
        write_action(f, action)?;
        f.write_str(" / ")?;
    }
    f.write_str("end")
}

fn write_item(f: &mut fmt::Formatter<'_>, item: &Item) -> fmt::Result {
    let kind = item.kind();
    f.write_str(kind.name())?;
    let toks = tokens(kind);
    for (i, (slot, desc)) in item.to_slots().iter().zip(kind.slots()).enumerate() {
        let Some(field) = slot else { continue };
        let views: Vec<&TokenDesc> = toks
            .iter()
            .filter(|t| t.slot == i && t.width < desc.width_bits)
            .collect();
        if field.last.is_none() && !views.is_empty() {
            let covered = views.iter().filter(|t| field.mask & view_mask(t) != 0);
            let whole = covered.clone().all(|t| field.mask & view_mask(t) == view_mask(t));
            let union = covered.clone().fold(0, |acc, t| acc | view_mask(t));
            if whole && union == field.mask {
                for t in covered {
                    write!(f, " {} is {}", t.name, (field.value >> t.shift) & ones(t.width))?;
                }
                continue;
            }
        }
        let Some(tok) = toks.iter().find(|t| t.slot == i && t.width == desc.width_bits) else {
            continue; // every slot has a whole-width token (checked by a unit test)
        };
        write_field(f, tok, desc, field)?;
    }
    Ok(())
}

fn view_mask(t: &TokenDesc) -> u128 {
    ones(t.width) << t.shift
}

fn write_field(f: &mut fmt::Formatter<'_>, tok: &TokenDesc, desc: &SlotDesc, field: &Field<u128>) -> fmt::Result {
    let name = tok.name;
    let full = ones(desc.width_bits);
    if field.mask == full && field.last.is_none() {
        return write!(f, " {name} is {}", Value(desc, field.value, false));
    }
    write!(f, " {name} spec {}", Value(desc, field.value, false))?;
    if let Some(last) = field.last {
        write!(f, " {name} last {}", Value(desc, last, false))?;
    }
    let is_addr = matches!(desc.kind, ValueKind::Mac | ValueKind::Ipv4 | ValueKind::Ipv6);
    match mask_prefix_len(field.mask, desc.width_bits) {
        Some(len) if is_addr && tok.form != Form::Boolean => write!(f, " {name} prefix {len}"),
        _ => write!(f, " {name} mask {}", Value(desc, field.mask, true)),
    }
}

/// A slot value as testpmd reads it; numeric masks always in hex.
struct Value<'a>(&'a SlotDesc, u128, bool);

impl fmt::Display for Value<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Value(desc, v, is_mask) = *self;
        match desc.kind {
            ValueKind::Mac => write!(f, "{}", MacAddr::from_bits(v)),
            ValueKind::Ipv4 => write!(f, "{}", <Ipv4Addr as FieldBits>::from_bits(v)),
            ValueKind::Ipv6 => write!(f, "{}", <Ipv6Addr as FieldBits>::from_bits(v)),
            ValueKind::Hex => write!(f, "{:#0w$x}", v, w = 2 + desc.width_bits.div_ceil(4) as usize),
            ValueKind::Dec if is_mask => write!(f, "{v:#x}"),
            ValueKind::Dec => write!(f, "{v}"),
        }
    }
}

fn write_action(f: &mut fmt::Formatter<'_>, action: &Action) -> fmt::Result {
    match action {
        Action::Queue { index } => write!(f, "queue index {index}"),
        Action::Rss(rss) => {
            f.write_str("rss")?;
            if let Some(func) = rss.func {
                write!(f, " func {}", func.name())?;
            }
            if let Some(level) = rss.level {
                write!(f, " level {level}")?;
            }
            if let Some(types) = &rss.types {
                f.write_str(" types")?;
                types.iter().try_for_each(|t| write!(f, " {}", t.name()))?;
                f.write_str(" end")?;
            }
            if let Some(key) = &rss.key {
                let mut hex = String::with_capacity(2 * key.len());
                key.iter().for_each(|b| {
                    let _ = write!(hex, "{b:02x}");
                });
                // An empty key has no testpmd spelling; leave the PMD default.
                if !hex.is_empty() {
                    write!(f, " key {hex}")?;
                }
            }
            // After the key: testpmd lets the later of the two set the length.
            if let Some(len) = rss.key_len {
                write!(f, " key_len {len}")?;
            }
            if let Some(queues) = &rss.queues {
                f.write_str(" queues")?;
                queues.iter().try_for_each(|q| write!(f, " {q}"))?;
                f.write_str(" end")?;
            }
            Ok(())
        }
        Action::Jump { group } => write!(f, "jump group {group}"),
        Action::Drop => f.write_str("drop"),
        Action::Mark { id } => write!(f, "mark id {id}"),
        Action::Count => f.write_str("count"),
        Action::PortId { id } => write!(f, "port_id id {id}"),
        Action::Passthru => f.write_str("passthru"),
        Action::SetMacSrc { mac } => write!(f, "set_mac_src mac_addr {mac}"),
        Action::SetMacDst { mac } => write!(f, "set_mac_dst mac_addr {mac}"),
        Action::SetIpv4Src { addr } => write!(f, "set_ipv4_src ipv4_addr {addr}"),
        Action::SetIpv4Dst { addr } => write!(f, "set_ipv4_dst ipv4_addr {addr}"),
        Action::SetIpv6Src { addr } => write!(f, "set_ipv6_src ipv6_addr {addr}"),
        Action::SetIpv6Dst { addr } => write!(f, "set_ipv6_dst ipv6_addr {addr}"),
        Action::SetTpSrc { port } => write!(f, "set_tp_src port {port}"),
        Action::SetTpDst { port } => write!(f, "set_tp_dst port {port}"),
        Action::DecTtl => f.write_str("dec_ttl"),
        Action::OfPushVlan { ethertype } => write!(f, "of_push_vlan ethertype {ethertype:#06x}"),
        Action::OfPopVlan => f.write_str("of_pop_vlan"),
        Action::OfSetVlanVid { vid } => write!(f, "of_set_vlan_vid vlan_vid {vid}"),
        Action::OfSetVlanPcp { pcp } => write!(f, "of_set_vlan_pcp vlan_pcp {pcp}"),
        Action::VxlanEncap { .. } => f.write_str("vxlan_encap"),
        Action::VxlanDecap => f.write_str("vxlan_decap"),
    }
}
