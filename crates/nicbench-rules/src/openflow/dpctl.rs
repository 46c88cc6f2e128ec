//! Datapath flows (megaflows) as `ovs-appctl dpctl/dump-flows` prints them:
//!
//! ```text
//! [ufid:UUID, ]KEY(..),KEY(..),..., packets:N, bytes:N, used:T[, flags:F][, offloaded:yes][, dp:ovs], actions:A,A,...[, dp-extra-info:..]
//! ```
//!
//! Keys nicbench has an [`OfField`] for become [`FieldMatch`]es (see [`super::dpctl_keys`]);
//! everything else is kept as printed in [`DpFlow::other_keys`] so the flow is written back
//! identically. Datapath ports must be numbers: dump with `--no-names` (`-m` prints names).
//! `flow-dump from ...` header lines, blank lines and `#` comments are skipped.

use super::dpctl_keys::{self as keys, Fmt, Sub, FRAG};
use super::ofctl::{column_of, split_pieces, Piece};
use super::values::{self, Addr};
use super::{DpAction, DpFlow, DpPlacement, FieldMatch, OfField};
use crate::error::{LineError, ParseError, ParseReport};
use crate::lex::{is_blank_or_comment, parse_c_uint};

/// Parses one datapath flow line.
pub fn parse_dp_flow(line: &str) -> Result<DpFlow, ParseError> {
    parse_line(line).map_err(|e| e.at("<input>", 1))
}

/// Parses `dpctl/dump-flows` output, stopping at the first error.
pub fn parse_dp_flows(text: &str, file: &str) -> Result<Vec<DpFlow>, ParseError> {
    let report = parse_dp_flows_all(text, file);
    match report.errors.into_iter().next() {
        Some(e) => Err(e),
        None => Ok(report.parsed.into_iter().map(|(_, f)| f).collect()),
    }
}

/// Parses `dpctl/dump-flows` output, collecting every error.
pub fn parse_dp_flows_all(text: &str, file: &str) -> ParseReport<DpFlow> {
    let mut report = ParseReport {
        parsed: Vec::new(),
        errors: Vec::new(),
    };
    for (i, line) in text.lines().enumerate() {
        if is_blank_or_comment(line) || line.trim_start().starts_with("flow-dump from") {
            continue;
        }
        match parse_line(line) {
            Ok(f) => report.parsed.push((i + 1, f)),
            Err(e) => report.errors.push(e.at(file, i + 1)),
        }
    }
    report
}

/// Where `actions:` starts: (byte of the piece, byte after the colon).
fn find_actions(line: &str) -> Option<(usize, usize)> {
    let mut depth = 0i32;
    let bytes = line.as_bytes();
    for i in 0..bytes.len() {
        match bytes[i] {
            b'(' => depth += 1,
            b')' => depth -= 1,
            b'a' if depth == 0 && line[i..].starts_with("actions:") => {
                let before = line[..i].trim_end();
                if before.is_empty() || before.ends_with(',') {
                    return Some((i, i + "actions:".len()));
                }
            }
            _ => {}
        }
    }
    None
}

/// Keys being collected.
#[derive(Default)]
struct KeyAcc {
    fields: Vec<FieldMatch>,
    other: Vec<String>,
    outer_eth_type: Option<(u128, u128, usize)>,
    inner_eth_type: Option<(u128, u128)>,
    vlan_seen: bool,
}

impl KeyAcc {
    fn push(&mut self, p: &Piece, fm: FieldMatch) -> Result<(), LineError> {
        if fm.mask == 0 {
            return Ok(()); // fully wildcarded (as `-m` prints them): absent
        }
        if self.fields.iter().any(|f| f.field == fm.field) {
            return Err(p.err(format!("{:?} is matched twice", fm.field)));
        }
        self.fields.push(fm);
        Ok(())
    }
}

fn parse_line(line: &str) -> Result<DpFlow, LineError> {
    let eol = LineError {
        column: line.trim_end().chars().count() + 1,
        message: String::new(),
    };
    let Some((act_at, act_body)) = find_actions(line) else {
        return Err(LineError {
            message: "missing 'actions:' (a dpctl/dump-flows line ends with actions:...)".into(),
            ..eol
        });
    };
    let mut flow = DpFlow {
        ufid: None,
        keys: Vec::new(),
        other_keys: Vec::new(),
        packets: 0,
        bytes: 0,
        used: None,
        placement: DpPlacement::default(),
        actions: Vec::new(),
        tcp_flags_seen: None,
        dp_extra_info: None,
    };
    let mut acc = KeyAcc::default();
    let mut in_stats = false;
    let (mut saw_packets, mut saw_bytes) = (false, false);
    for p in split_pieces(line, 0, act_at, false) {
        let stat = |k: &str| p.text.strip_prefix(k);
        if let Some(u) = stat("ufid:") {
            if !acc.fields.is_empty() || !acc.other.is_empty() || in_stats {
                return Err(p.err("'ufid:' must come first"));
            }
            flow.ufid = Some(u.to_string());
        } else if let Some(v) = stat("packets:") {
            in_stats = true;
            saw_packets = true;
            flow.packets = v.parse().map_err(|_| p.err(format!("bad packets count '{v}'")))?;
        } else if let Some(v) = stat("bytes:") {
            in_stats = true;
            saw_bytes = true;
            flow.bytes = v.parse().map_err(|_| p.err(format!("bad bytes count '{v}'")))?;
        } else if let Some(v) = stat("used:") {
            in_stats = true;
            flow.used = Some(v.to_string());
        } else if let Some(v) = stat("flags:") {
            in_stats = true;
            flow.tcp_flags_seen = Some(v.to_string());
        } else if let Some(v) = stat("offloaded:") {
            in_stats = true;
            flow.placement.offloaded = Some(match v {
                "yes" => true,
                "no" => false,
                _ => return Err(p.err(format!("offloaded:'{v}' is neither yes nor no"))),
            });
        } else if let Some(v) = stat("dp:") {
            in_stats = true;
            flow.placement.dp = Some(v.to_string());
        } else if in_stats {
            return Err(p.err(format!("unexpected '{}' after the statistics (expected packets:, bytes:, used:, flags:, offloaded:, dp: or actions:)", p.text)));
        } else {
            parse_key(&p, &mut acc, false)?;
        }
    }
    if !(saw_packets && saw_bytes) {
        return Err(LineError {
            column: column_of(line, act_at),
            message: "expected 'packets:N, bytes:N' before 'actions:'".into(),
        });
    }
    finish_keys(&mut flow, acc).map_err(|m| LineError { column: 1, message: m })?;
    let mut act_end = line.trim_end().len();
    if let Some(off) = line[act_body..].find(", dp-extra-info:") {
        let at = act_body + off;
        flow.dp_extra_info = Some(line[at + ", dp-extra-info:".len()..].trim_end().to_string());
        act_end = at;
    }
    flow.actions = parse_actions(line, act_body, act_end)?;
    Ok(flow)
}

/// `name(inner)` of a piece.
fn name_inner<'a>(p: &Piece<'a>) -> Result<(&'a str, &'a str, usize), LineError> {
    let Some(open) = p.text.find('(') else {
        return Err(p.err(format!("expected KEY(VALUE), found '{}'", p.text)));
    };
    if !p.text.ends_with(')') {
        return Err(p.err(format!("'{}(' is not closed by ')'", &p.text[..open])));
    }
    let name = &p.text[..open];
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(p.err(format!("bad key name '{name}'")));
    }
    Ok((name, &p.text[open + 1..p.text.len() - 1], open + 1))
}

fn sub_pieces<'a>(p: &Piece<'a>, inner: &'a str, inner_off: usize) -> Vec<Piece<'a>> {
    split_pieces(inner, 0, inner.len(), false)
        .into_iter()
        .map(|s| Piece {
            text: s.text,
            column: p.column + inner_off + s.column - 1,
        })
        .collect()
}

fn parse_key(p: &Piece, acc: &mut KeyAcc, in_encap: bool) -> Result<(), LineError> {
    let (name, inner, off) = name_inner(p)?;
    if name == "encap" {
        if in_encap {
            return Err(p.err("nested encap(...) (QinQ) is not modelled"));
        }
        let subs = sub_pieces(p, inner, off);
        if subs.is_empty() {
            acc.other.push("encap()".into());
        }
        for s in subs {
            parse_key(&s, acc, true)?;
        }
        return Ok(());
    }
    if let Some(spec) = keys::single(name) {
        if name == "in_port" && !inner.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(p.err(format!(
                "in_port({inner}): datapath ports must be numbers (dump with --no-names)"
            )));
        }
        let (value, mask) = sub_value(&spec, inner).map_err(|m| p.err(format!("{name}: {m}")))?;
        if name == "eth_type" {
            if in_encap {
                acc.inner_eth_type = Some((value, mask));
            } else {
                acc.outer_eth_type = Some((value, mask, p.column));
            }
            return Ok(());
        }
        return acc.push(
            p,
            FieldMatch {
                field: spec.field.expect("single keys have a field"),
                value,
                mask,
            },
        );
    }
    if name == "vlan" {
        acc.vlan_seen = true;
        let (value, mask) = parse_vlan(p, inner, off)?;
        return acc.push(
            p,
            FieldMatch {
                field: OfField::VlanTci,
                value,
                mask,
            },
        );
    }
    let Some(spec) = keys::structured(name) else {
        acc.other.push(p.text.to_string());
        return Ok(());
    };
    let mut residue = Vec::new();
    let mut known = 0;
    for s in sub_pieces(p, inner, off) {
        let sub_name = s.text.split(['=', '(']).next().unwrap_or("");
        match spec.iter().find(|x| x.name == sub_name && x.field.is_some()) {
            Some(sub) => {
                let v = s.text[sub_name.len()..]
                    .strip_prefix('=')
                    .ok_or_else(|| s.err(format!("expected {sub_name}=VALUE")))?;
                let (value, mask) = sub_value(sub, v).map_err(|m| s.err(format!("{name}({sub_name}): {m}")))?;
                acc.push(
                    &s,
                    FieldMatch {
                        field: sub.field.expect("checked"),
                        value,
                        mask,
                    },
                )?;
                known += 1;
            }
            None => residue.push(s.text),
        }
    }
    if !residue.is_empty() || (known == 0 && inner.trim().is_empty()) {
        acc.other.push(format!("{name}({})", residue.join(",")));
    }
    Ok(())
}

/// `vid=V[/M],pcp=P[/M][,cfi=C]`: the TCI with the CFI bit exact (OVS prints `cfi=0` only
/// when the tag's CFI bit is clear).
fn parse_vlan(p: &Piece, inner: &str, off: usize) -> Result<(u128, u128), LineError> {
    let (mut value, mut mask) = (0x1000u128, 0x1000u128);
    for s in sub_pieces(p, inner, off) {
        let (k, v) = s
            .text
            .split_once('=')
            .ok_or_else(|| s.err("expected vid=, pcp= or cfi="))?;
        let (shift, bits) = match k {
            "vid" => (0, 12),
            "pcp" => (13, 3),
            "cfi" => (12, 1),
            _ => return Err(s.err(format!("unknown vlan field '{k}' (allowed: vid, pcp, cfi)"))),
        };
        let (x, m) = values::uint_masked(v, bits).map_err(|m| s.err(format!("vlan({k}): {m}")))?;
        if k == "cfi" {
            value = (value & !0x1000) | (x << 12);
        } else {
            value |= x << shift;
            mask |= m << shift;
        }
    }
    Ok((value, mask))
}

/// A sub-field's `V` or `V/M`.
pub(crate) fn sub_value(sub: &Sub, text: &str) -> Result<(u128, u128), String> {
    let full = values::ones(sub.bits);
    match sub.fmt {
        Fmt::Mac | Fmt::V4 | Fmt::V6 => {
            let kind = match sub.fmt {
                Fmt::Mac => Addr::Mac,
                Fmt::V4 => Addr::V4,
                _ => Addr::V6,
            };
            values::addr_masked(kind, text)
        }
        Fmt::Dec | Fmt::Hex | Fmt::Hex4 => {
            let (v, m) = values::uint_masked(text, sub.bits)?;
            Ok((v, if text.contains('/') { m } else { full }))
        }
        Fmt::Frag => {
            let (name, m) = match text.split_once('/') {
                Some((n, m)) => (n, values::uint(m, 8)? & 3),
                None => (text, 3),
            };
            let v = FRAG
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| *v)
                .ok_or_else(|| format!("bad frag '{name}' (allowed: no, first, later)"))?;
            Ok((v, m))
        }
        Fmt::Flags(names) => {
            if text.starts_with(['+', '-']) {
                values::flags_plus_minus(text, names)
            } else if text.starts_with(|c: char| c.is_ascii_digit()) {
                let (v, m) = values::uint_masked(text, sub.bits)?;
                Ok((v, if text.contains('/') { m } else { full }))
            } else {
                let mut v = 0;
                for n in text.split('|') {
                    let bit = names.iter().find(|(x, _)| *x == n).map(|(_, b)| *b).ok_or_else(|| {
                        format!(
                            "unknown flag '{n}' (allowed: {})",
                            names.iter().map(|x| x.0).collect::<Vec<_>>().join(", ")
                        )
                    })?;
                    v |= bit;
                }
                Ok((v, full))
            }
        }
    }
}

fn finish_keys(flow: &mut DpFlow, mut acc: KeyAcc) -> Result<(), String> {
    if acc.vlan_seen {
        if let Some((v, m, _)) = acc.outer_eth_type {
            if v != 0x8100 || m != 0xffff {
                return Err(format!(
                    "a vlan(...) key needs eth_type(0x8100) before it, found {v:#06x}"
                ));
            }
        }
        if let Some((v, m)) = acc.inner_eth_type {
            acc.fields.push(FieldMatch {
                field: OfField::DlType,
                value: v,
                mask: m,
            });
        }
    } else {
        if acc.inner_eth_type.is_some() {
            return Err("encap(eth_type(..)) without a vlan(...) key".into());
        }
        if let Some((v, m, _)) = acc.outer_eth_type {
            if m != 0 {
                acc.fields.push(FieldMatch {
                    field: OfField::DlType,
                    value: v,
                    mask: m,
                });
            }
        }
    }
    acc.fields.sort_by_key(|f| f.field);
    flow.keys = acc.fields;
    flow.other_keys = acc.other;
    Ok(())
}

/// Bare datapath actions nicbench keeps as text.
const BARE_OTHER: &[&str] = &["ct_clear", "pop_eth", "pop_nsh", "pop_mpls", "lb_output"];

fn parse_actions(line: &str, start: usize, end: usize) -> Result<Vec<DpAction>, LineError> {
    let mut out = Vec::new();
    for p in split_pieces(line, start, end, false) {
        out.extend(parse_action(&p)?);
    }
    if out.is_empty() {
        return Err(LineError {
            column: column_of(line, start),
            message: "empty action list (OVS prints actions:drop)".into(),
        });
    }
    Ok(out)
}

fn parse_action(p: &Piece) -> Result<Vec<DpAction>, LineError> {
    let t = p.text;
    if t.starts_with("set(") && t.ends_with(')') && balanced(t) {
        return parse_set(p, &t[4..t.len() - 1], 4);
    }
    parse_one_action(p).map(|a| vec![a])
}

fn parse_one_action(p: &Piece) -> Result<DpAction, LineError> {
    let t = p.text;
    if t.chars().all(|c| c.is_ascii_digit()) {
        let port = t.parse().map_err(|_| p.err(format!("bad port '{t}'")))?;
        return Ok(DpAction::Output { port });
    }
    match t {
        "drop" => return Ok(DpAction::Drop),
        "pop_vlan" => return Ok(DpAction::PopVlan),
        _ => {}
    }
    if BARE_OTHER.contains(&t) || BARE_OTHER.iter().any(|b| t.starts_with(&format!("{b}:"))) {
        return Ok(DpAction::Other { text: t.into() });
    }
    let Some(open) = t.find('(') else {
        return Err(p.err(format!(
            "unknown datapath action '{t}' (allowed: a port number, drop, pop_vlan, push_vlan(..), set(..), tnl_push(..), tnl_pop(N), ct(..), recirc(N), userspace(..), clone(..), ...; dump with --no-names for port numbers)"
        )));
    };
    if !t.ends_with(')') || !balanced(t) {
        return Err(p.err(format!("'{}(' is not closed by ')'", &t[..open])));
    }
    let (name, inner) = (&t[..open], &t[open + 1..t.len() - 1]);
    let inner_off = open + 1;
    Ok(match name {
        "push_vlan" => {
            let (mut tpid, mut tci) = (0x8100u128, 0x1000u128);
            for s in sub_pieces(p, inner, inner_off) {
                let (k, v) = s
                    .text
                    .split_once('=')
                    .ok_or_else(|| s.err("expected tpid=, vid=, pcp= or cfi="))?;
                let (shift, bits) = match k {
                    "tpid" => {
                        tpid = values::uint(v, 16).map_err(|m| s.err(format!("push_vlan(tpid): {m}")))?;
                        continue;
                    }
                    "vid" => (0, 12),
                    "pcp" => (13, 3),
                    "cfi" => (12, 1),
                    _ => return Err(s.err(format!("unknown push_vlan field '{k}' (allowed: tpid, vid, pcp, cfi)"))),
                };
                let x = values::uint(v, bits).map_err(|m| s.err(format!("push_vlan({k}): {m}")))?;
                tci = if k == "cfi" {
                    (tci & !0x1000) | (x << 12)
                } else {
                    tci | (x << shift)
                };
            }
            DpAction::PushVlan {
                tpid: tpid as u16,
                tci: tci as u16,
            }
        }
        "recirc" => DpAction::Recirc {
            id: parse_c_uint(inner)
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| p.err(format!("recirc: bad id '{inner}'")))?,
        },
        "ct" => DpAction::Ct { text: t.into() },
        "tnl_push" | "tnl_pop" => DpAction::Tunnel { text: t.into() },
        _ if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !name.is_empty() => {
            DpAction::Other { text: t.into() }
        }
        _ => return Err(p.err(format!("bad datapath action '{t}'"))),
    })
}

fn balanced(t: &str) -> bool {
    let mut depth = 0i32;
    for c in t.chars() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}

/// `set(KEY(..))`: one [`DpAction::Set`] per field when nicbench reads every sub-field,
/// `SetTunnel` for a tunnel of just id, src and dst; otherwise kept as text.
fn parse_set(p: &Piece, inner: &str, off: usize) -> Result<Vec<DpAction>, LineError> {
    let kp = Piece {
        text: inner,
        column: p.column + off,
    };
    let mut acc = KeyAcc::default();
    parse_key(&kp, &mut acc, false)?;
    let (name, _, _) = name_inner(&kp)?;
    let text = vec![DpAction::Other { text: p.text.into() }];
    if !acc.other.is_empty() || acc.fields.is_empty() || acc.outer_eth_type.is_some() || name == "vlan" {
        return Ok(text);
    }
    if name == "tunnel" {
        let get = |f: OfField| {
            acc.fields
                .iter()
                .find(|m| m.field == f && m.mask == f.full_mask())
                .map(|m| m.value)
        };
        if let (Some(id), Some(src), Some(dst), 3) = (
            get(OfField::TunId),
            get(OfField::TunSrc),
            get(OfField::TunDst),
            acc.fields.len(),
        ) {
            return Ok(vec![DpAction::SetTunnel {
                id: id as u64,
                src: src as u32,
                dst: dst as u32,
            }]);
        }
    }
    // One Set per field, in the key's sub-field order; the writer joins consecutive Sets of
    // one key back into one set(), as OVS commits them.
    Ok(acc
        .fields
        .iter()
        .map(|f| DpAction::Set {
            field: f.field,
            value: f.value,
            mask: f.mask,
        })
        .collect())
}
