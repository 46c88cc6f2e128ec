//! OpenFlow rules as `ovs-ofctl add-flow` / `add-flows FILE` take them and as
//! `ovs-ofctl dump-flows` prints them.
//!
//! A line is `[key=value|shorthand][, ...] actions=ACTION[,ACTION...]`: pieces before
//! `actions=` are separated by commas or blanks; statistics that `dump-flows` prints
//! (`duration=`, `n_packets=`, `n_bytes=`, `idle_age=`, `hard_age=`) and flow-mod flags
//! (`send_flow_rem`, `check_overlap`, `reset_counts`, ...) are read and ignored because they
//! do not change forwarding. `NXST_FLOW reply` / `OFPST_FLOW reply` header lines, blank lines
//! and `#` comments are skipped.
//!
//! Where nicbench is stricter than `ovs-ofctl` (on purpose, tested both ways in
//! `tests/ovs_oracle.rs`): an explicit mask with value bits outside it, `nw_tos` with ECN bits,
//! and a field whose prerequisite is missing (`tp_dst=80` without `tcp`) are errors, where
//! `ovs-ofctl` silently clears the bits or drops the field.

use super::fields::{self, FieldName, SHORTHANDS};
use super::ofctl_actions::parse_actions;
use super::{FieldMatch, OfAction, OfField, OfMatch, OfRule, PortRef};
use crate::error::{LineError, ParseError, ParseReport};
use crate::lex::{is_blank_or_comment, parse_c_uint};

/// Priority `ovs-ofctl` gives a flow without `priority=`.
pub const DEFAULT_PRIORITY: u16 = 32768;

/// Parses one flow.
pub fn parse_rule(line: &str) -> Result<OfRule, ParseError> {
    parse_line(line).map_err(|e| e.at("<input>", 1))
}

/// Parses an `add-flows` file or `dump-flows` output, stopping at the first error.
pub fn parse_file(text: &str, file: &str) -> Result<Vec<OfRule>, ParseError> {
    let report = parse_file_all(text, file);
    match report.errors.into_iter().next() {
        Some(e) => Err(e),
        None => Ok(report.parsed.into_iter().map(|(_, r)| r).collect()),
    }
}

/// Parses an `add-flows` file or `dump-flows` output, collecting every error.
pub fn parse_file_all(text: &str, file: &str) -> ParseReport<OfRule> {
    // A UTF-8 byte-order mark (Windows editors write one) is no part of the first rule.
    let text = crate::ruleset::strip_bom(text);
    let mut report = ParseReport {
        parsed: Vec::new(),
        errors: Vec::new(),
    };
    for (i, line) in text.lines().enumerate() {
        if is_blank_or_comment(line) || is_reply_header(line) {
            continue;
        }
        match parse_line(line) {
            Ok(r) => report.parsed.push((i + 1, r)),
            Err(e) => report.errors.push(e.at(file, i + 1)),
        }
    }
    report
}

/// Whether a file reads as OpenFlow rules (`ovs-ofctl add-flows` or `dump-flows` output):
/// its first meaningful line is a flow-stats reply header or carries `actions=`.
pub fn looks_like_openflow(text: &str) -> bool {
    let Some(first) = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
    else {
        return false;
    };
    is_reply_header(first) || find_actions(first).is_some_and(|(_, body)| first.as_bytes()[body - 1] == b'=')
}

/// `NXST_FLOW reply (xid=0x4):`, `OFPST_FLOW reply (OF1.3) (xid=0x2):`.
fn is_reply_header(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("NXST_FLOW reply") || t.starts_with("OFPST_FLOW reply")
}

/// A piece of a line with its 1-based character column.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Piece<'a> {
    pub text: &'a str,
    pub column: usize,
}

impl Piece<'_> {
    pub fn err(&self, message: impl Into<String>) -> LineError {
        LineError {
            column: self.column,
            message: message.into(),
        }
    }
}

/// Column (1-based, in characters) of byte offset `byte` of `line`.
pub(crate) fn column_of(line: &str, byte: usize) -> usize {
    line[..byte].chars().count() + 1
}

/// Splits `line[start..end]` at commas and blanks outside parentheses.
pub(crate) fn split_pieces(line: &str, start: usize, end: usize, blanks_split: bool) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut piece_start: Option<usize> = None;
    let bytes = line.as_bytes();
    for i in start..end {
        let c = bytes[i];
        let sep = depth == 0 && (c == b',' || (blanks_split && (c == b' ' || c == b'\t' || c == b'\r')));
        if sep {
            if let Some(s) = piece_start.take() {
                out.push(Piece {
                    text: line[s..i].trim(),
                    column: column_of(line, s),
                });
            }
            continue;
        }
        if c == b'(' {
            depth += 1;
        } else if c == b')' {
            depth = depth.saturating_sub(1);
        }
        if piece_start.is_none() && !(c == b' ' || c == b'\t' || c == b'\r') {
            piece_start = Some(i);
        }
    }
    if let Some(s) = piece_start {
        out.push(Piece {
            text: line[s..end].trim(),
            column: column_of(line, s),
        });
    }
    out
}

/// Byte offset of `actions=` (or `action=`, `actions:`) where a piece starts.
fn find_actions(line: &str) -> Option<(usize, usize)> {
    let bytes = line.as_bytes();
    let mut from = 0;
    while let Some(off) = line[from..].find("action") {
        let at = from + off;
        let boundary = at == 0 || matches!(bytes[at - 1], b',' | b' ' | b'\t');
        let mut j = at + "action".len();
        if bytes.get(j) == Some(&b's') {
            j += 1;
        }
        if boundary && matches!(bytes.get(j), Some(b'=') | Some(b':')) {
            return Some((at, j + 1));
        }
        from = at + 1;
    }
    None
}

/// `key=value`, `key:value` or `key`.
pub(crate) fn key_value(text: &str) -> (&str, Option<&str>) {
    match text.find(['=', ':']) {
        Some(i) => (&text[..i], Some(&text[i + 1..])),
        None => (text, None),
    }
}

/// OpenFlow 1.0 reserved port numbers (OVS keeps ports 16 bits wide in `ovs-ofctl` output).
const RESERVED_PORTS: &[(&str, u32)] = &[
    ("IN_PORT", 0xfff8),
    ("TABLE", 0xfff9),
    ("NORMAL", 0xfffa),
    ("FLOOD", 0xfffb),
    ("ALL", 0xfffc),
    ("CONTROLLER", 0xfffd),
    ("LOCAL", 0xfffe),
    ("NONE", 0xffff),
];

/// The longest port name OpenFlow carries \[characters\]: `OFP_MAX_PORT_NAME_LEN` (16) with
/// its NUL; a longer name can never resolve to a port of the bridge.
pub const MAX_PORT_NAME_CHARS: usize = 15;

/// `text` cut to a length an error line can show.
fn shortened(text: &str) -> String {
    const SHOWN: usize = 24;
    if text.chars().count() <= SHOWN {
        return text.to_string();
    }
    format!("{}…", text.chars().take(SHOWN).collect::<String>())
}

/// A port as `ovs-ofctl` reads it: a number (reserved numbers become their names), a
/// reserved name in any case, or a port name for the bridge to resolve.
pub(crate) fn parse_port(text: &str) -> Result<PortRef, String> {
    if text.is_empty() {
        return Err("expected a port number or name".into());
    }
    if text.starts_with(|c: char| c.is_ascii_digit()) {
        let n = parse_c_uint(text)
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| format!("bad port number '{text}'"))?;
        if let Some((name, _)) = RESERVED_PORTS.iter().find(|(_, num)| *num == n) {
            return Ok(PortRef::Reserved(name.to_string()));
        }
        if n >= 0xff00 {
            return Err(format!("port {n} is in OpenFlow's reserved range 0xff00..0xffff"));
        }
        return Ok(PortRef::Number(n));
    }
    let upper = text.to_ascii_uppercase();
    if let Some((name, _)) = RESERVED_PORTS.iter().find(|(name, _)| *name == upper) {
        return Ok(PortRef::Reserved(name.to_string()));
    }
    let chars = text.chars().count();
    if chars > MAX_PORT_NAME_CHARS {
        return Err(format!(
            "port name '{}' has {chars} characters: OpenFlow port names have at most {MAX_PORT_NAME_CHARS} \
             (OFP_MAX_PORT_NAME_LEN, 16 bytes with the terminating NUL; Linux's IFNAMSIZ is the same)",
            shortened(text)
        ));
    }
    if let Some(c) = text
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return Err(format!(
            "port name '{text}' has '{c}' (names are letters, digits, '_', '-', '.')"
        ));
    }
    Ok(PortRef::Name(text.to_string()))
}

pub(crate) fn reserved_port(name: &str) -> bool {
    RESERVED_PORTS.iter().any(|(n, _)| n.eq_ignore_ascii_case(name))
}

/// Merges `(value, mask)` bits into the entry for `field`; later bits win, as when OVS
/// applies match fields in order.
pub(crate) fn merge_field(fields: &mut Vec<FieldMatch>, field: OfField, value: u128, mask: u128) {
    match fields.iter_mut().find(|f| f.field == field) {
        Some(f) => {
            f.value = (f.value & !mask) | value;
            f.mask |= mask;
        }
        None => {
            fields.push(FieldMatch { field, value, mask });
            fields.sort_by_key(|f| f.field);
        }
    }
}

fn number<T: TryFrom<u64>>(p: &Piece, key: &str, v: Option<&str>, what: &str) -> Result<T, LineError> {
    let v = v.ok_or_else(|| p.err(format!("'{key}' needs a value ({what})")))?;
    parse_c_uint(v)
        .and_then(|n| T::try_from(n).ok())
        .ok_or_else(|| p.err(format!("bad {key} '{v}' (expected {what})")))
}

/// Flow-mod flags and `dump-flows` statistics: read, not modelled.
const IGNORED_KEYS: &[&str] = &["duration", "n_packets", "n_bytes", "idle_age", "hard_age", "importance"];
const IGNORED_FLAGS: &[&str] = &[
    "send_flow_rem",
    "check_overlap",
    "reset_counts",
    "no_packet_counts",
    "no_byte_counts",
    "no_readonly_table",
];

fn parse_line(line: &str) -> Result<OfRule, LineError> {
    let Some((act_at, act_body)) = find_actions(line) else {
        return Err(LineError {
            column: line.trim_end().chars().count() + 1,
            message: "missing 'actions=' (every flow ends with actions=..., e.g. actions=drop)".into(),
        });
    };
    let mut rule = OfRule {
        table: 0,
        priority: DEFAULT_PRIORITY,
        cookie: 0,
        idle_timeout_s: 0,
        hard_timeout_s: 0,
        matches: OfMatch::default(),
        actions: Vec::new(),
    };
    // Field pieces with their position, for prerequisite errors after the whole match is read.
    let mut used: Vec<(Piece, &'static FieldName)> = Vec::new();
    for p in split_pieces(line, 0, act_at, true) {
        let (key, value) = key_value(p.text);
        if let Some(&(_, dl_type, nw_proto)) = SHORTHANDS.iter().find(|(n, _, _)| *n == key) {
            if value.is_some() {
                return Err(p.err(format!("protocol '{key}' takes no value")));
            }
            merge_field(&mut rule.matches.fields, OfField::DlType, dl_type as u128, 0xffff);
            if let Some(proto) = nw_proto {
                merge_field(&mut rule.matches.fields, OfField::NwProto, proto as u128, 0xff);
            }
            continue;
        }
        match key {
            "table" => rule.table = number::<u8>(&p, key, value, "a table number 0..254")?,
            "priority" => rule.priority = number(&p, key, value, "0..65535")?,
            "cookie" => {
                if value.is_some_and(|v| v.contains('/')) {
                    return Err(
                        p.err("a cookie mask only selects flows to modify or delete; add-flow takes 'cookie=V'")
                    );
                }
                rule.cookie = number(&p, key, value, "a 64-bit number")?;
            }
            "idle_timeout" => rule.idle_timeout_s = number(&p, key, value, "seconds, 0..65535")?,
            "hard_timeout" => rule.hard_timeout_s = number(&p, key, value, "seconds, 0..65535")?,
            "in_port" => {
                let v = value.ok_or_else(|| p.err("'in_port' needs a port number or name"))?;
                rule.matches.in_port = Some(parse_port(v).map_err(|m| p.err(format!("in_port: {m}")))?);
            }
            _ if IGNORED_KEYS.contains(&key) && value.is_some() => {}
            _ if IGNORED_FLAGS.contains(&key) && value.is_none() => {}
            _ => {
                let Some(name) = fields::lookup(key) else {
                    return Err(p.err(format!(
                        "unknown match field '{key}' (allowed: table, priority, cookie, idle_timeout, hard_timeout, in_port, {}, or a protocol: {})",
                        fields::names_list(),
                        SHORTHANDS.iter().map(|s| s.0).collect::<Vec<_>>().join(", ")
                    )));
                };
                let v = value.ok_or_else(|| p.err(format!("'{key}' needs a value ('{key}=VALUE')")))?;
                let (value, mask) = fields::parse_value(name, v).map_err(|m| p.err(format!("{key}: {m}")))?;
                merge_field(&mut rule.matches.fields, name.field, value, mask);
                used.push((p, name));
            }
        }
    }
    for (p, name) in used {
        check_prerequisite(&rule.matches, name).map_err(|m| p.err(m))?;
    }
    rule.actions = parse_actions(line, act_body, line.len(), &rule.matches)?;
    check_goto_forward(&rule).map_err(|message| LineError {
        column: column_of(line, act_at),
        message,
    })?;
    Ok(rule)
}

/// OVS's add-time check (`ofpacts_check`): `goto_table` only moves forward, to a table after
/// the flow's own (a flow without `table=` is in table 0); `resubmit(,T)` is the way back.
fn check_goto_forward(rule: &OfRule) -> Result<(), String> {
    for a in &rule.actions {
        if let OfAction::GotoTable { table } = a {
            if *table <= rule.table {
                return Err(format!(
                    "goto_table:{table} in a flow of table {}: OVS refuses a goto_table to the same or an earlier \
                     table (OFPBIC_BAD_TABLE_ID, 'actions are invalid with specified match'); use resubmit(,{table}) to go back",
                    rule.table
                ));
            }
        }
    }
    Ok(())
}

pub(crate) fn exact(m: &OfMatch, field: OfField) -> Option<u128> {
    m.fields
        .iter()
        .find(|f| f.field == field && f.mask == field.full_mask())
        .map(|f| f.value)
}

/// OVS's prerequisites (ovs-fields(7)): an L3 field needs its `dl_type`, an L4 field its
/// `nw_proto`. OVS drops a field whose prerequisite is missing; nicbench says so instead.
pub(crate) fn check_prerequisite(m: &OfMatch, name: &FieldName) -> Result<(), String> {
    use OfField::*;
    let dl = exact(m, DlType);
    let proto = exact(m, NwProto);
    let is_ip = matches!(dl, Some(0x0800) | Some(0x86dd));
    let (ok, need) = match name.field {
        NwSrc | NwDst => (
            matches!(dl, Some(0x0800) | Some(0x0806) | Some(0x8035)),
            "'ip' or 'arp'",
        ),
        Ipv6Src | Ipv6Dst => (dl == Some(0x86dd), "'ipv6'"),
        NwProto => (
            is_ip || matches!(dl, Some(0x0806) | Some(0x8035)),
            "'ip', 'ipv6' or 'arp'",
        ),
        NwTos | NwTtl | NwFrag => (is_ip, "'ip' or 'ipv6'"),
        TpSrc | TpDst if name.name.starts_with("icmp") => {
            (is_ip && matches!(proto, Some(1) | Some(58)), "'icmp' or 'icmp6'")
        }
        TpSrc | TpDst => (
            is_ip && matches!(proto, Some(6) | Some(17) | Some(132)),
            "'tcp', 'udp' or 'sctp' (or their '6' forms)",
        ),
        TcpFlags => (is_ip && proto == Some(6), "'tcp' or 'tcp6'"),
        _ => (true, ""),
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "'{}' needs {need} in the same flow (ovs-ofctl would silently ignore it)",
            name.name
        ))
    }
}
