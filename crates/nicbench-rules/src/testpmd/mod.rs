//! dpdk-testpmd `flow` commands (DPDK 22.11 grammar): `create`, `validate`, `destroy`,
//! `flush`; files of such lines with `#` comments and blank lines.
//!
//! Acceptance follows testpmd's own parser (checked against `dpdk-testpmd` by
//! `tests/testpmd_oracle.rs`): numbers are C `strtoumax` base 0 (`0x` hex, leading-`0`
//! octal), keywords are case-sensitive, `/` and `end` are separate tokens.
//!
//! Spec/mask semantics are resolved at parse time the way rte_flow defines them, so the
//! model holds what the rule really matches: a field given with `spec` only is masked by
//! the item's default mask when no field of the item has a mask (`is`, `mask`, `prefix`),
//! and by the all-zero mask (i.e. ignored) otherwise; `mask`/`last` without any `spec`
//! in the item match nothing specific (the item means "protocol present").

mod fields;
mod write;

pub use write::{command_to_string, rule_to_string};
pub(crate) use write::{write_command, write_rule};

use crate::error::{LineError, ParseError, ParseReport};
use crate::lex::{self, parse_c_uint, Cursor};
use crate::model::{
    ones, Action, Attr, Command, Field, Item, ItemKind, MacAddr, RawSlots, RssAction, RssFunc, RssType, Rule, MAX_SLOTS,
};
use fields::{item_kind, read_prefix, read_value, tokens};
use std::net::{Ipv4Addr, Ipv6Addr};

/// Parses one `flow ...` command line.
pub fn parse_command(line: &str) -> Result<Command, ParseError> {
    parse_line(line).map_err(|e| e.at("<input>", 1))
}

/// Parses a file of commands, stopping at the first error.
pub fn parse_file(text: &str, file: &str) -> Result<Vec<Command>, ParseError> {
    lex::parse_lines_first(text, file, parse_line)
}

/// Parses a file of commands, collecting every error (`--keep-going`).
pub fn parse_file_all(text: &str, file: &str) -> ParseReport<Command> {
    lex::parse_lines_all(text, file, parse_line)
}

/// Parses a rule written as [`Rule`]'s `Display` does (attributes, pattern, actions, without
/// `flow create PORT`).
pub fn parse_rule(text: &str) -> Result<Rule, ParseError> {
    let mut c = Cursor::new(text);
    let rule = parse_rule_body(&mut c).and_then(|r| c.expect_end().map(|_| r));
    rule.map_err(|e| e.at("<input>", 1))
}

pub(crate) fn parse_line(line: &str) -> Result<Command, LineError> {
    let mut c = Cursor::new(line);
    c.expect("flow", "")?;
    let verb = c.word("'create', 'validate', 'destroy' or 'flush'")?;
    let cmd = match verb.text {
        "create" | "validate" => {
            let port = read_uint(&mut c, "a port id", 16)? as u16;
            let rule = parse_rule_body(&mut c)?;
            if verb.text == "create" {
                Command::Create { port, rule }
            } else {
                Command::Validate { port, rule }
            }
        }
        "destroy" => {
            let port = read_uint(&mut c, "a port id", 16)? as u16;
            let mut rule_ids = Vec::new();
            c.expect("rule", " after the port id")?;
            loop {
                rule_ids.push(read_uint(&mut c, "a rule id", 32)? as u32);
                if !c.eat("rule") {
                    break;
                }
            }
            Command::Destroy { port, rule_ids }
        }
        "flush" => Command::Flush {
            port: read_uint(&mut c, "a port id", 16)? as u16,
        },
        other => {
            return Err(c.error_prev(format!(
                "expected 'create', 'validate', 'destroy' or 'flush', found '{other}'"
            )))
        }
    };
    c.expect_end()?;
    Ok(cmd)
}

/// Reads an unsigned number of at most `bits` bits.
fn read_uint(c: &mut Cursor<'_>, what: &str, bits: u32) -> Result<u64, LineError> {
    let t = c.word(what)?;
    match parse_c_uint(t.text) {
        Some(v) if (v as u128) <= ones(bits) => Ok(v),
        Some(_) => Err(c.error_prev(format!("{what} {} does not fit in {bits} bits", t.text))),
        None => Err(c.error_prev(format!("expected {what}, found '{}'", t.text))),
    }
}

fn parse_rule_body(c: &mut Cursor<'_>) -> Result<Rule, LineError> {
    let mut attr = Attr::default();
    loop {
        match c.peek_text() {
            Some("group") => {
                c.next();
                attr.group = read_uint(c, "a group number", 32)? as u32;
            }
            Some("priority") => {
                c.next();
                attr.priority = read_uint(c, "a priority level", 32)? as u32;
            }
            Some("ingress") => attr.ingress = c.next().is_some(),
            Some("egress") => attr.egress = c.next().is_some(),
            Some("transfer") => attr.transfer = c.next().is_some(),
            Some("pattern") => {
                c.next();
                break;
            }
            _ => return Err(c.expected("'group', 'priority', 'ingress', 'egress', 'transfer' or 'pattern'")),
        }
    }
    let pattern = parse_pattern(c)?;
    c.expect("actions", " after the pattern")?;
    let actions = parse_actions(c)?;
    Ok(Rule { attr, pattern, actions })
}

/// The spec/last/mask buffers of one item while its fields are read.
struct RawItem {
    spec: [u128; MAX_SLOTS],
    last: [u128; MAX_SLOTS],
    mask: [u128; MAX_SLOTS],
    spec_set: bool,
    last_set: bool,
    mask_set: bool,
}

impl RawItem {
    fn resolve(&self, kind: ItemKind) -> Item {
        let mut slots: RawSlots = [None; MAX_SLOTS];
        if self.spec_set {
            for (i, desc) in kind.slots().iter().enumerate() {
                let mask = if self.mask_set { self.mask[i] } else { desc.default_mask };
                let last = self.last_set.then_some(self.last[i]);
                slots[i] = Field::<u128>::canonical(self.spec[i], mask, last);
            }
        }
        Item::from_slots(kind, &slots)
    }
}

fn deposit(word: &mut u128, shift: u32, width: u32, value: u128) {
    let m = ones(width) << shift;
    *word = (*word & !m) | ((value << shift) & m);
}

fn item_names() -> String {
    ItemKind::ALL.iter().map(|k| k.name()).collect::<Vec<_>>().join(", ")
}

fn parse_pattern(c: &mut Cursor<'_>) -> Result<Vec<Item>, LineError> {
    let mut items = Vec::new();
    loop {
        let t = c.word("a pattern item or 'end'")?;
        if t.text == "end" {
            return Ok(items);
        }
        let Some(kind) = item_kind(t.text) else {
            return Err(c.error_prev(format!(
                "unknown pattern item '{}'; expected one of {} or 'end'",
                t.text,
                item_names()
            )));
        };
        let toks = tokens(kind);
        let slots = kind.slots();
        let mut raw = RawItem {
            spec: [0; MAX_SLOTS],
            last: [0; MAX_SLOTS],
            mask: [0; MAX_SLOTS],
            spec_set: false,
            last_set: false,
            mask_set: false,
        };
        loop {
            if c.eat("/") {
                break;
            }
            let field_tok = c.peek();
            let Some(tok) = field_tok.and_then(|ft| toks.iter().find(|d| d.name == ft.text)) else {
                let names: Vec<_> = toks.iter().map(|d| d.name).collect();
                return Err(c.expected(&format!("a field of '{}' ({}) or '/'", kind.name(), names.join(", "))));
            };
            c.next();
            let desc = &slots[tok.slot];
            let how = match c.peek_text() {
                Some(w @ ("is" | "spec" | "last" | "mask" | "prefix")) => w,
                _ => {
                    return Err(c.expected(&format!(
                        "'is', 'spec', 'mask', 'last' or 'prefix' after field '{}'",
                        tok.name
                    )))
                }
            };
            c.next();
            let v = c.word(&format!("a value for field '{}'", tok.name))?;
            let value = if how == "prefix" {
                read_prefix(tok, v.text)
            } else {
                read_value(tok, desc, v.text)
            }
            .map_err(|m| c.error_prev(m))?;
            let s = tok.slot;
            match how {
                "is" => {
                    deposit(&mut raw.spec[s], tok.shift, tok.width, value);
                    deposit(&mut raw.mask[s], tok.shift, tok.width, ones(tok.width));
                    raw.spec_set = true;
                    raw.mask_set = true;
                }
                "spec" => {
                    deposit(&mut raw.spec[s], tok.shift, tok.width, value);
                    raw.spec_set = true;
                }
                "last" => {
                    deposit(&mut raw.last[s], tok.shift, tok.width, value);
                    raw.last_set = true;
                }
                _ => {
                    // "mask" and "prefix" both write the mask buffer.
                    deposit(&mut raw.mask[s], tok.shift, tok.width, value);
                    raw.mask_set = true;
                }
            }
        }
        items.push(raw.resolve(kind));
    }
}

const ACTION_NAMES: &str = "queue, rss, jump, drop, mark, count, port_id, passthru, set_mac_src, \
set_mac_dst, set_ipv4_src, set_ipv4_dst, set_ipv6_src, set_ipv6_dst, set_tp_src, set_tp_dst, dec_ttl, \
of_push_vlan, of_pop_vlan, of_set_vlan_vid, of_set_vlan_pcp, vxlan_encap, vxlan_decap";

fn parse_actions(c: &mut Cursor<'_>) -> Result<Vec<Action>, LineError> {
    let mut actions = Vec::new();
    loop {
        let t = c.word("an action or 'end'")?;
        let name = t.text;
        // Parameters are optional in testpmd; absent ones keep the zero default.
        let action = match name {
            "end" => return Ok(actions),
            "queue" => {
                let mut index = 0;
                params(c, name, &["index"], |c, _| {
                    index = read_uint(c, "a queue index", 16)? as u16;
                    Ok(())
                })?;
                Action::Queue { index }
            }
            "rss" => Action::Rss(Box::new(parse_rss(c)?)),
            "jump" => {
                let mut group = 0;
                params(c, name, &["group"], |c, _| {
                    group = read_uint(c, "a group number", 32)? as u32;
                    Ok(())
                })?;
                Action::Jump { group }
            }
            "mark" => {
                let mut id = 0;
                params(c, name, &["id"], |c, _| {
                    id = read_uint(c, "a mark id", 32)? as u32;
                    Ok(())
                })?;
                Action::Mark { id }
            }
            "port_id" => {
                let mut id = 0;
                params(c, name, &["id"], |c, _| {
                    id = read_uint(c, "a port id", 32)? as u32;
                    Ok(())
                })?;
                Action::PortId { id }
            }
            "set_mac_src" | "set_mac_dst" => {
                let mut mac = MacAddr::default();
                params(c, name, &["mac_addr"], |c, _| {
                    let v = c.word("a MAC address")?;
                    mac = v.text.parse().map_err(|e: String| c.error_prev(e))?;
                    Ok(())
                })?;
                if name == "set_mac_src" {
                    Action::SetMacSrc { mac }
                } else {
                    Action::SetMacDst { mac }
                }
            }
            "set_ipv4_src" | "set_ipv4_dst" => {
                let mut addr = Ipv4Addr::UNSPECIFIED;
                params(c, name, &["ipv4_addr"], |c, _| {
                    let v = c.word("an IPv4 address")?;
                    addr = v
                        .text
                        .parse()
                        .map_err(|_| c.error_prev(format!("expected an IPv4 address, found '{}'", v.text)))?;
                    Ok(())
                })?;
                if name == "set_ipv4_src" {
                    Action::SetIpv4Src { addr }
                } else {
                    Action::SetIpv4Dst { addr }
                }
            }
            "set_ipv6_src" | "set_ipv6_dst" => {
                let mut addr = Ipv6Addr::UNSPECIFIED;
                params(c, name, &["ipv6_addr"], |c, _| {
                    let v = c.word("an IPv6 address")?;
                    addr = v
                        .text
                        .parse()
                        .map_err(|_| c.error_prev(format!("expected an IPv6 address, found '{}'", v.text)))?;
                    Ok(())
                })?;
                if name == "set_ipv6_src" {
                    Action::SetIpv6Src { addr }
                } else {
                    Action::SetIpv6Dst { addr }
                }
            }
            "set_tp_src" | "set_tp_dst" => {
                let mut port = 0;
                params(c, name, &["port"], |c, _| {
                    port = read_uint(c, "a port number", 16)? as u16;
                    Ok(())
                })?;
                if name == "set_tp_src" {
                    Action::SetTpSrc { port }
                } else {
                    Action::SetTpDst { port }
                }
            }
            "of_push_vlan" => {
                let mut ethertype = 0;
                params(c, name, &["ethertype"], |c, _| {
                    ethertype = read_uint(c, "an ethertype", 16)? as u16;
                    Ok(())
                })?;
                Action::OfPushVlan { ethertype }
            }
            "of_set_vlan_vid" => {
                let mut vid = 0;
                params(c, name, &["vlan_vid"], |c, _| {
                    vid = read_uint(c, "a VLAN id", 16)? as u16;
                    Ok(())
                })?;
                Action::OfSetVlanVid { vid }
            }
            "of_set_vlan_pcp" => {
                let mut pcp = 0;
                params(c, name, &["vlan_pcp"], |c, _| {
                    pcp = read_uint(c, "a VLAN priority", 8)? as u8;
                    Ok(())
                })?;
                Action::OfSetVlanPcp { pcp }
            }
            "drop" | "count" | "passthru" | "dec_ttl" | "of_pop_vlan" | "vxlan_encap" | "vxlan_decap" => {
                params(c, name, &[], |_, _| Ok(()))?;
                match name {
                    "drop" => Action::Drop,
                    "count" => Action::Count,
                    "passthru" => Action::Passthru,
                    "dec_ttl" => Action::DecTtl,
                    "of_pop_vlan" => Action::OfPopVlan,
                    "vxlan_encap" => Action::VxlanEncap { tunnel: None },
                    _ => Action::VxlanDecap,
                }
            }
            other => {
                return Err(c.error_prev(format!(
                    "unknown action '{other}'; expected one of {ACTION_NAMES} or 'end'"
                )))
            }
        };
        actions.push(action);
    }
}

/// Reads `name value` parameters of an action until `/`.
fn params<'a>(
    c: &mut Cursor<'a>,
    action: &str,
    allowed: &[&str],
    mut read: impl FnMut(&mut Cursor<'a>, &str) -> Result<(), LineError>,
) -> Result<(), LineError> {
    loop {
        if c.eat("/") {
            return Ok(());
        }
        match c.peek_text() {
            Some(p) if allowed.contains(&p) => {
                c.next();
                read(c, p)?;
            }
            _ => {
                let mut what: Vec<String> = allowed.iter().map(|p| format!("'{p}'")).collect();
                what.push("'/'".into());
                return Err(c.expected(&format!("{} after action '{action}'", what.join(" or "))));
            }
        }
    }
}

fn parse_rss(c: &mut Cursor<'_>) -> Result<RssAction, LineError> {
    let mut rss = RssAction::default();
    params(
        c,
        "rss",
        &["func", "level", "types", "key", "key_len", "queues"],
        |c, p| {
            match p {
                "func" => {
                    let t = c.word("an RSS function")?;
                    rss.func = Some(RssFunc::ALL.into_iter().find(|f| f.name() == t.text).ok_or_else(|| {
                        c.error_prev(format!(
                            "expected 'default', 'toeplitz', 'simple_xor' or 'symmetric_toeplitz', found '{}'",
                            t.text
                        ))
                    })?);
                }
                "level" => rss.level = Some(read_uint(c, "an encapsulation level", 32)? as u32),
                "types" => {
                    let mut types = Vec::new();
                    loop {
                        let t = c.word("an RSS type or 'end'")?;
                        if t.text == "end" {
                            break;
                        }
                        types.push(
                            RssType::from_name(t.text)
                                .ok_or_else(|| c.error_prev(format!("unknown RSS type '{}'", t.text)))?,
                        );
                    }
                    rss.types = Some(types);
                }
                "key" => {
                    let t = c.word("an RSS key in hex")?;
                    rss.key = Some(read_hex_key(t.text).map_err(|m| c.error_prev(m))?);
                    // testpmd's ACTION_RSS_KEY writes key_len too: an earlier key_len is void.
                    rss.key_len = None;
                }
                "key_len" => {
                    // testpmd's ACTION_RSS_KEY_LEN: ARGS_ENTRY_ARB_BOUNDED(0, RSS_HASH_KEY_LENGTH = 64).
                    let len = read_uint(c, "a key length in bytes", 32)?;
                    if len > MAX_RSS_KEY_BYTES as u64 {
                        return Err(c.error_prev(format!(
                            "RSS key_len {len} is out of range (0..={MAX_RSS_KEY_BYTES} bytes)"
                        )));
                    }
                    rss.key_len = Some(len as u32);
                }
                _ => {
                    let mut queues = Vec::new();
                    while !c.eat("end") {
                        if queues.len() == 128 {
                            return Err(c.expected("'end' (at most 128 queues)"));
                        }
                        queues.push(read_uint(c, "a queue index or 'end'", 16)? as u16);
                    }
                    rss.queues = Some(queues);
                }
            }
            Ok(())
        },
    )?;
    Ok(rss)
}

/// testpmd's longest RSS key \[bytes\] (`RSS_HASH_KEY_LENGTH` in cmdline_flow.c).
const MAX_RSS_KEY_BYTES: usize = 64;

/// testpmd's hex string: optional `0x`, at most 64 bytes; an odd digit count makes the
/// first digit a byte of its own (as testpmd's `parse_hex_string` does).
fn read_hex_key(text: &str) -> Result<Vec<u8>, String> {
    let hex = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .unwrap_or(text);
    if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("expected an RSS key in hex, found '{text}'"));
    }
    if hex.len() > 128 {
        return Err(format!("RSS key '{text}' is longer than 64 bytes"));
    }
    let padded = if hex.len() % 2 == 1 {
        format!("0{hex}")
    } else {
        hex.to_string()
    };
    (0..padded.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&padded[i..i + 2], 16).map_err(|e| e.to_string()))
        .collect()
}

#[cfg(test)]
mod tests;
