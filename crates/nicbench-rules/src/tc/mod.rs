//! Linux `tc filter add ... flower ... action ...` lines, mapped onto the rte_flow model.
//!
//! Mapping (both directions):
//! - `ingress` / `parent ffff:` → `attr.ingress`, `egress` → `attr.egress`; `prio`/`pref` p
//!   → `attr.priority` p − 1 (same sense, lower first; tc's first usable prio is 1); no `prio`
//!   (or `prio 0`) → the kernel's automatic one (see `AutoPrio`); `chain N` → `attr.group`.
//! - Pattern: `eth` first, then `vlan` (protocol 802.1q/802.1ad), then `ipv4`/`ipv6`
//!   (protocol or vlan_ethtype ip/ipv6), then `tcp`/`udp`/`sctp`/`icmp`/`icmp6`
//!   (ip_proto). `protocol ip` is carried by the presence of the ipv4 item, not by an eth
//!   type field. Tunnel keys (`enc_*`) become an outer `eth / ipv4|ipv6 / udp / vxlan`
//!   prefix and the other keys then match the inner headers.
//! - Devices become port ids through a [`DeviceTable`]: ids are handed out in the order
//!   names are first seen (the filter's own `dev` included), starting at 0, and the same
//!   table writes them back.
//! - What has no rte_flow meaning (`ct`, `police`, `handle`, `mirred ... mirror` …) is an
//!   error naming the token, never silently dropped.

mod write;

pub use write::command_to_string;

use crate::error::{LineError, ParseError, ParseReport};
use crate::lex::{self, parse_c_uint, Cursor};
use crate::model::{
    ones, prefix_mask, Action, EthItem, Field, FieldBits, Icmp6Item, IcmpItem, Ipv4Item, Ipv6Item, Item, MacAddr, Rule,
    SctpItem, TcpItem, UdpItem, VlanItem, VxlanItem, VxlanTunnel,
};
use serde::{Deserialize, Serialize};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Device names ↔ port ids, numbered in first-seen order from 0.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceTable {
    names: Vec<String>,
}

impl DeviceTable {
    pub fn new() -> Self {
        Self::default()
    }
    /// Table with fixed names: `names[i]` is port `i`.
    pub fn with_names<S: Into<String>>(names: impl IntoIterator<Item = S>) -> Self {
        DeviceTable {
            names: names.into_iter().map(Into::into).collect(),
        }
    }
    /// Port id of `name`, registering it if new.
    pub fn port_id(&mut self, name: &str) -> u32 {
        match self.names.iter().position(|n| n == name) {
            Some(i) => i as u32,
            None => {
                self.names.push(name.to_string());
                (self.names.len() - 1) as u32
            }
        }
    }
    pub fn name(&self, port_id: u32) -> Option<&str> {
        self.names.get(port_id as usize).map(String::as_str)
    }
}

/// One `tc filter add` command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TcCommand {
    /// Device the filter is attached to.
    pub dev: String,
    pub rule: Rule,
    /// `skip_sw`: hardware only.
    pub skip_sw: bool,
    /// `skip_hw`: software only.
    pub skip_hw: bool,
}

/// Parses one `tc filter add` line.
pub fn parse_command(line: &str, devices: &mut DeviceTable) -> Result<TcCommand, ParseError> {
    parse_line(line, devices, &mut AutoPrio::default()).map_err(|e| e.at("<input>", 1))
}

/// Parses a file of tc lines, stopping at the first error.
pub fn parse_file(text: &str, file: &str, devices: &mut DeviceTable) -> Result<Vec<TcCommand>, ParseError> {
    let mut auto = AutoPrio::default();
    lex::parse_lines_first(text, file, |l| parse_line(l, devices, &mut auto))
}

/// Parses a file of tc lines, collecting every error.
pub fn parse_file_all(text: &str, file: &str, devices: &mut DeviceTable) -> ParseReport<TcCommand> {
    let mut auto = AutoPrio::default();
    lex::parse_lines_all(text, file, |l| parse_line(l, devices, &mut auto))
}

/// The priority the kernel gives a filter added without `prio` (or with `prio 0`):
/// `tcf_auto_prio()` in net/sched/cls_api.c takes one below the chain's first (numerically
/// lowest) filter, or 0xC000 = 49152 in an empty chain. So in a file of such filters the LAST
/// one added matches first; tracked per device, direction and chain as the lines are read.
#[derive(Default)]
struct AutoPrio {
    lowest: std::collections::HashMap<(String, bool, u32), u32>,
}

/// `tcf_auto_prio`'s priority for the first filter of a chain.
const TC_FIRST_AUTO_PRIO: u32 = 0xC000;

impl AutoPrio {
    /// The tc priority of a filter in (`dev`, ingress?, `chain`): `explicit` unless it is
    /// absent or 0 (automatic); records it as the chain's lowest if it is.
    fn assign(&mut self, dev: &str, ingress: bool, chain: u32, explicit: Option<u32>) -> Result<u32, String> {
        let key = (dev.to_string(), ingress, chain);
        let prio = match explicit.filter(|&p| p > 0) {
            Some(p) => p,
            None => match self.lowest.get(&key) {
                None => TC_FIRST_AUTO_PRIO,
                Some(&1) => {
                    return Err("no automatic priority is left below prio 1 in this chain: give 'prio N'".into())
                }
                Some(&low) => low - 1,
            },
        };
        let low = self.lowest.entry(key).or_insert(prio);
        *low = (*low).min(prio);
        Ok(prio)
    }
}

pub(crate) const ETH_P_IP: u16 = 0x0800;
pub(crate) const ETH_P_IPV6: u16 = 0x86dd;
pub(crate) const ETH_P_8021Q: u16 = 0x8100;
pub(crate) const ETH_P_8021AD: u16 = 0x88a8;
const ETH_P_ALL: u16 = 0x0003;

fn protocol_value(text: &str) -> Option<u16> {
    match text {
        "ip" => Some(ETH_P_IP),
        "ipv6" => Some(ETH_P_IPV6),
        "802.1q" | "802.1Q" => Some(ETH_P_8021Q),
        "802.1ad" => Some(ETH_P_8021AD),
        "arp" => Some(0x0806),
        "all" => Some(ETH_P_ALL),
        _ => parse_c_uint(text).and_then(|v| u16::try_from(v).ok()),
    }
}

/// L3 header being built.
enum L3 {
    V4(Ipv4Item),
    V6(Ipv6Item),
}

impl L3 {
    fn for_ethertype(t: u16) -> Option<L3> {
        match t {
            ETH_P_IP => Some(L3::V4(Ipv4Item::default())),
            ETH_P_IPV6 => Some(L3::V6(Ipv6Item::default())),
            _ => None,
        }
    }
    fn into_item(self) -> Item {
        match self {
            L3::V4(i) => Item::Ipv4(i),
            L3::V6(i) => Item::Ipv6(Box::new(i)),
        }
    }
}

#[derive(Default)]
struct Enc {
    l3: Option<L3>,
    dst_port: Option<u16>,
    vni: Option<u32>,
}

struct Builder {
    eth: EthItem,
    vlan: Option<VlanItem>,
    l3: Option<L3>,
    l4: Option<Item>,
    enc: Option<Enc>,
}

fn parse_line(line: &str, devices: &mut DeviceTable, auto: &mut AutoPrio) -> Result<TcCommand, LineError> {
    let mut c = Cursor::new(line);
    c.expect("tc", "")?;
    c.expect("filter", "")?;
    c.expect("add", " (only 'tc filter add' is supported)")?;
    let mut rule = Rule::default();
    let mut dev: Option<String> = None;
    let mut protocol = ETH_P_ALL;
    let mut prio: Option<u32> = None;
    loop {
        let t = c.word("'dev', 'ingress', 'egress', 'protocol', 'prio', 'chain' or 'flower'")?;
        match t.text {
            "flower" => break,
            "dev" => {
                let name = c.word("a device name")?.text;
                devices.port_id(name);
                dev = Some(name.to_string());
            }
            "ingress" => rule.attr.ingress = true,
            "egress" => rule.attr.egress = true,
            "parent" => {
                let p = c.word("a parent qdisc")?;
                if p.text != "ffff:" {
                    return Err(c.error_prev(format!("expected 'ffff:' (the ingress qdisc), found '{}'", p.text)));
                }
                rule.attr.ingress = true;
            }
            "protocol" => {
                let p = c.word("a protocol")?;
                protocol =
                    protocol_value(p.text).ok_or_else(|| c.error_prev(format!("unknown protocol '{}'", p.text)))?;
            }
            "prio" | "pref" => prio = Some(read_num(&mut c, "a priority", 16)? as u32),
            "chain" => rule.attr.group = read_num(&mut c, "a chain index", 32)? as u32,
            "handle" | "classid" | "estimate" => {
                return Err(c.error_prev(format!("tc '{}' has no rte_flow equivalent", t.text)))
            }
            other => {
                return Err(c.error_prev(format!(
                    "expected 'dev', 'ingress', 'egress', 'protocol', 'prio', 'chain' or 'flower', found '{other}'"
                )))
            }
        }
    }
    let Some(dev) = dev else {
        return Err(c.error_prev("expected 'dev NAME' before 'flower'".into()));
    };
    if !rule.attr.ingress && !rule.attr.egress {
        return Err(c.error_prev("expected 'ingress', 'egress' or 'parent ffff:' before 'flower'".into()));
    }
    // tc prio 1 is the first a filter can take (0 asks for an automatic one); rte_flow's
    // priority 0 is its first: priority = prio - 1, so conversions keep the order exactly.
    let tc_prio = auto
        .assign(&dev, rule.attr.ingress, rule.attr.group, prio)
        .map_err(|m| c.error_prev(m))?;
    rule.attr.priority = tc_prio - 1;
    let mut b = Builder {
        eth: EthItem::default(),
        vlan: None,
        l3: None,
        l4: None,
        enc: None,
    };
    match protocol {
        ETH_P_8021Q | ETH_P_8021AD => {
            b.vlan = Some(VlanItem::default());
            if protocol == ETH_P_8021AD {
                b.eth.ether_type = Some(Field::exact(ETH_P_8021AD));
            }
        }
        ETH_P_ALL => {}
        t => match L3::for_ethertype(t) {
            Some(l3) => b.l3 = Some(l3),
            None => b.eth.ether_type = Some(Field::exact(t)),
        },
    }
    let (mut skip_sw, mut skip_hw) = (false, false);
    while let Some(t) = c.peek() {
        if t.text == "action" || t.text == "actions" {
            break;
        }
        c.next();
        match t.text {
            "skip_sw" => skip_sw = true,
            "skip_hw" => skip_hw = true,
            key => flower_key(&mut c, &mut b, key)?,
        }
    }
    rule.pattern = build_pattern(b);
    rule.actions = parse_actions(&mut c, devices)?;
    Ok(TcCommand {
        dev,
        rule,
        skip_sw,
        skip_hw,
    })
}

fn read_num(c: &mut Cursor<'_>, what: &str, bits: u32) -> Result<u64, LineError> {
    let t = c.word(what)?;
    match parse_c_uint(t.text) {
        Some(v) if (v as u128) <= ones(bits) => Ok(v),
        _ => Err(c.error_prev(format!("expected {what} ({bits}-bit number), found '{}'", t.text))),
    }
}

/// `V` or `V/M` with both numbers at most `bits` wide.
fn read_masked(c: &mut Cursor<'_>, key: &str, bits: u32) -> Result<Option<Field<u128>>, LineError> {
    let t = c.word(&format!("a value for '{key}'"))?;
    let (v, m) = match t.text.split_once('/') {
        Some((v, m)) => (parse_c_uint(v), parse_c_uint(m)),
        None => (parse_c_uint(t.text), Some(ones(bits) as u64)),
    };
    match (v, m) {
        (Some(v), Some(m)) if (v as u128) <= ones(bits) && (m as u128) <= ones(bits) => {
            Ok(Field::<u128>::canonical(v as u128, m as u128, None))
        }
        _ => Err(c.error_prev(format!(
            "expected VALUE[/MASK] ({bits}-bit numbers) for '{key}', found '{}'",
            t.text
        ))),
    }
}

/// `ADDR` or `ADDR/LEN`.
fn read_ip_prefix(c: &mut Cursor<'_>, key: &str) -> Result<(IpAddr, u32), LineError> {
    let t = c.word(&format!("an address for '{key}'"))?;
    let (a, len) = match t.text.split_once('/') {
        Some((a, l)) => (a, parse_c_uint(l)),
        None => (t.text, Some(u64::MAX)),
    };
    let bad = || c.error_prev(format!("expected ADDRESS[/PREFIX_LEN] for '{key}', found '{}'", t.text));
    let addr: IpAddr = a.parse().map_err(|_| bad())?;
    let width = if addr.is_ipv4() { 32 } else { 128 };
    match len {
        Some(u64::MAX) => Ok((addr, width)),
        Some(l) if l <= width as u64 => Ok((addr, l as u32)),
        _ => Err(bad()),
    }
}

fn ip_field(addr: IpAddr, len: u32) -> Option<Field<u128>> {
    match addr {
        IpAddr::V4(a) => Field::<u128>::canonical(a.to_bits() as u128, prefix_mask(len, 32), None),
        IpAddr::V6(a) => Field::<u128>::canonical(a.to_bits(), prefix_mask(len, 128), None),
    }
}

fn set_ip(c: &Cursor<'_>, l3: &mut Option<L3>, key: &str, addr: IpAddr, len: u32, src: bool) -> Result<(), LineError> {
    if l3.is_none() {
        *l3 = Some(if addr.is_ipv4() {
            L3::V4(Ipv4Item::default())
        } else {
            L3::V6(Ipv6Item::default())
        });
    }
    let f = ip_field(addr, len);
    match (l3, addr) {
        (Some(L3::V4(ip)), IpAddr::V4(_)) => {
            let f = f.map(Field::from_raw);
            if src {
                ip.src = f
            } else {
                ip.dst = f
            }
        }
        (Some(L3::V6(ip)), IpAddr::V6(_)) => {
            let f = f.map(Field::from_raw);
            if src {
                ip.src = f
            } else {
                ip.dst = f
            }
        }
        _ => return Err(c.error_prev(format!("'{key}' address family does not match the protocol"))),
    }
    Ok(())
}

fn flower_key(c: &mut Cursor<'_>, b: &mut Builder, key: &str) -> Result<(), LineError> {
    match key {
        "src_mac" | "dst_mac" => {
            let t = c.word(&format!("a MAC address for '{key}'"))?;
            let bad = || c.error_prev(format!("expected MAC[/MASK] for '{key}', found '{}'", t.text));
            let (a, m) = t.text.split_once('/').map_or((t.text, None), |(a, m)| (a, Some(m)));
            let addr = MacAddr::parse_groups(a, 1, false).ok_or_else(bad)?;
            let mask = match m {
                None => ones(48),
                Some(m) => match (MacAddr::parse_groups(m, 1, false), parse_c_uint(m)) {
                    (Some(mac), _) => mac.to_bits(),
                    (None, Some(len)) if len <= 48 => prefix_mask(len as u32, 48),
                    _ => return Err(bad()),
                },
            };
            let f = Field::new(addr, MacAddr::from_bits(mask), None);
            if key == "src_mac" {
                b.eth.src = f
            } else {
                b.eth.dst = f
            }
        }
        "vlan_id" | "vlan_prio" => {
            let (bits, shift) = if key == "vlan_id" { (12, 0) } else { (3, 13) };
            let v = read_num(c, &format!("a value for '{key}'"), bits)? as u16;
            let Some(vlan) = b.vlan.as_mut() else {
                return Err(c.error_prev(format!("'{key}' needs 'protocol 802.1q' or 'protocol 802.1ad'")));
            };
            let old = vlan.tci.unwrap_or(Field {
                value: 0,
                mask: 0,
                last: None,
            });
            let m = (ones(bits) as u16) << shift;
            vlan.tci = Field::new((old.value & !m) | (v << shift), old.mask | m, None);
        }
        "vlan_ethtype" => {
            let t = c.word("an ethertype for 'vlan_ethtype'")?;
            let p = protocol_value(t.text).ok_or_else(|| c.error_prev(format!("unknown protocol '{}'", t.text)))?;
            let Some(vlan) = b.vlan.as_mut() else {
                return Err(c.error_prev("'vlan_ethtype' needs 'protocol 802.1q' or 'protocol 802.1ad'".into()));
            };
            match L3::for_ethertype(p) {
                Some(l3) => b.l3 = Some(l3),
                None => vlan.inner_type = Some(Field::exact(p)),
            }
        }
        "ip_proto" => {
            let t = c.word("a protocol for 'ip_proto'")?;
            let proto = match t.text {
                "tcp" => 6,
                "udp" => 17,
                "sctp" => 132,
                "icmp" => 1,
                "icmpv6" => 58,
                s => parse_c_uint(s).and_then(|v| u8::try_from(v).ok()).ok_or_else(|| {
                    c.error_prev(format!(
                        "expected tcp, udp, sctp, icmp, icmpv6 or a number, found '{s}'"
                    ))
                })?,
            };
            b.l4 = match proto {
                6 => Some(Item::Tcp(TcpItem::default())),
                17 => Some(Item::Udp(UdpItem::default())),
                132 => Some(Item::Sctp(SctpItem::default())),
                1 => Some(Item::Icmp(IcmpItem::default())),
                58 => Some(Item::Icmp6(Icmp6Item::default())),
                _ => None,
            };
            match (&mut b.l3, &b.l4) {
                (None, _) => return Err(c.error_prev("'ip_proto' needs 'protocol ip' or 'protocol ipv6'".into())),
                (Some(L3::V4(ip)), None) => ip.proto = Some(Field::exact(proto)),
                (Some(L3::V6(ip)), None) => ip.proto = Some(Field::exact(proto)),
                _ => {}
            }
        }
        "src_ip" | "dst_ip" => {
            let (addr, len) = read_ip_prefix(c, key)?;
            if b.l3.is_none() {
                return Err(c.error_prev(format!("'{key}' needs 'protocol ip' or 'protocol ipv6'")));
            }
            set_ip(c, &mut b.l3, key, addr, len, key == "src_ip")?;
        }
        "ip_tos" | "ip_ttl" => {
            let f = read_masked(c, key, 8)?.map(Field::<u8>::from_raw);
            match (&mut b.l3, key) {
                (Some(L3::V4(ip)), "ip_tos") => ip.tos = f,
                (Some(L3::V4(ip)), _) => ip.ttl = f,
                (Some(L3::V6(ip)), "ip_tos") => ip.tc = f,
                (Some(L3::V6(ip)), _) => ip.hop_limit = f,
                (None, _) => return Err(c.error_prev(format!("'{key}' needs 'protocol ip' or 'protocol ipv6'"))),
            }
        }
        "src_port" | "dst_port" => {
            let t = c.word(&format!("a port or MIN-MAX range for '{key}'"))?;
            let bad = || c.error_prev(format!("expected PORT or MIN-MAX for '{key}', found '{}'", t.text));
            let num = |s: &str| parse_c_uint(s).and_then(|v| u16::try_from(v).ok());
            let f = match t.text.split_once('-') {
                Some((lo, hi)) => match (num(lo), num(hi)) {
                    (Some(lo), Some(hi)) if lo <= hi => Field::range(lo, hi),
                    _ => return Err(bad()),
                },
                None => Field::exact(num(t.text).ok_or_else(bad)?),
            };
            let src = key == "src_port";
            match b.l4.as_mut() {
                Some(Item::Tcp(i)) => {
                    if src {
                        i.src = Some(f)
                    } else {
                        i.dst = Some(f)
                    }
                }
                Some(Item::Udp(i)) => {
                    if src {
                        i.src = Some(f)
                    } else {
                        i.dst = Some(f)
                    }
                }
                Some(Item::Sctp(i)) => {
                    if src {
                        i.src = Some(f)
                    } else {
                        i.dst = Some(f)
                    }
                }
                _ => return Err(c.error_prev(format!("'{key}' needs 'ip_proto tcp', 'udp' or 'sctp' before it"))),
            }
        }
        "tcp_flags" => {
            let f = read_masked(c, key, 8)?.map(Field::<u8>::from_raw);
            match b.l4.as_mut() {
                Some(Item::Tcp(i)) => i.flags = f,
                _ => return Err(c.error_prev("'tcp_flags' needs 'ip_proto tcp' before it".into())),
            }
        }
        "type" | "code" => {
            let f = read_masked(c, key, 8)?.map(Field::<u8>::from_raw);
            match (b.l4.as_mut(), key) {
                (Some(Item::Icmp(i)), "type") => i.icmp_type = f,
                (Some(Item::Icmp(i)), _) => i.code = f,
                (Some(Item::Icmp6(i)), "type") => i.icmp_type = f,
                (Some(Item::Icmp6(i)), _) => i.code = f,
                _ => return Err(c.error_prev(format!("'{key}' needs 'ip_proto icmp' or 'icmpv6' before it"))),
            }
        }
        "enc_key_id" => {
            let vni = read_num(c, "a VNI for 'enc_key_id'", 24)? as u32;
            b.enc.get_or_insert_with(Enc::default).vni = Some(vni);
        }
        "enc_dst_port" => {
            let port = read_num(c, "a port for 'enc_dst_port'", 16)? as u16;
            b.enc.get_or_insert_with(Enc::default).dst_port = Some(port);
        }
        "enc_src_ip" | "enc_dst_ip" => {
            let (addr, len) = read_ip_prefix(c, key)?;
            let enc = b.enc.get_or_insert_with(Enc::default);
            set_ip(c, &mut enc.l3, key, addr, len, key == "enc_src_ip")?;
        }
        other => {
            return Err(c.error_prev(format!(
                "tc flower key '{other}' has no rte_flow mapping here; expected src_mac, dst_mac, vlan_id, \
vlan_prio, vlan_ethtype, ip_proto, src_ip, dst_ip, ip_tos, ip_ttl, src_port, dst_port, tcp_flags, type, \
code, enc_key_id, enc_src_ip, enc_dst_ip, enc_dst_port, skip_sw, skip_hw or 'action'"
            )))
        }
    }
    Ok(())
}

fn build_pattern(b: Builder) -> Vec<Item> {
    let mut out = Vec::new();
    if let Some(enc) = b.enc {
        out.push(Item::Eth(EthItem::default()));
        out.push(enc.l3.unwrap_or(L3::V4(Ipv4Item::default())).into_item());
        out.push(Item::Udp(UdpItem {
            dst: enc.dst_port.map(Field::exact),
            ..Default::default()
        }));
        out.push(Item::Vxlan(VxlanItem {
            vni: enc.vni.and_then(|v| Field::new(v, 0xff_ffff, None)),
            ..Default::default()
        }));
    }
    out.push(Item::Eth(b.eth));
    out.extend(b.vlan.map(Item::Vlan));
    out.extend(b.l3.map(L3::into_item));
    out.extend(b.l4);
    out
}

fn parse_actions(c: &mut Cursor<'_>, devices: &mut DeviceTable) -> Result<Vec<Action>, LineError> {
    let mut out = Vec::new();
    while !c.at_end() {
        if !(c.eat("action") || c.eat("actions")) {
            return Err(c.expected("'action'"));
        }
        let t = c.word("an action")?;
        let name = if t.text == "gact" {
            c.word("a gact control ('drop', 'pass', 'goto')")?.text
        } else {
            t.text
        };
        match name {
            "drop" | "shot" => out.push(Action::Drop),
            "pass" | "ok" => out.push(Action::Passthru),
            "goto" => {
                c.expect("chain", " after 'goto'")?;
                out.push(Action::Jump {
                    group: read_num(c, "a chain index", 32)? as u32,
                });
            }
            "mirred" => {
                let dir = c.word("'egress'")?.text;
                let how = c.word("'redirect'")?.text;
                if (dir, how) != ("egress", "redirect") {
                    return Err(c.error_prev(format!("tc action 'mirred {dir} {how}' has no rte_flow equivalent")));
                }
                c.expect("dev", " after 'mirred egress redirect'")?;
                let dev = c.word("a device name")?.text;
                out.push(Action::PortId {
                    id: devices.port_id(dev),
                });
            }
            "pedit" => {
                c.expect("ex", " after 'pedit' (only 'pedit ex munge' is supported)")?;
                c.expect("munge", " after 'pedit ex'")?;
                loop {
                    out.push(pedit_munge(c)?);
                    if !c.eat("munge") {
                        break;
                    }
                }
            }
            "vlan" => match c.word("'push', 'pop' or 'modify'")?.text {
                "pop" => out.push(Action::OfPopVlan),
                verb @ ("push" | "modify") => {
                    let (mut vid, mut pcp, mut ethertype) = (None, None, ETH_P_8021Q);
                    loop {
                        match c.peek_text() {
                            Some("id") => {
                                c.next();
                                vid = Some(read_num(c, "a VLAN id", 12)? as u16)
                            }
                            Some("priority") => {
                                c.next();
                                pcp = Some(read_num(c, "a VLAN priority", 3)? as u8)
                            }
                            Some("protocol") => {
                                c.next();
                                let p = c.word("'802.1q' or '802.1ad'")?;
                                ethertype = match protocol_value(p.text) {
                                    Some(v @ (ETH_P_8021Q | ETH_P_8021AD)) => v,
                                    _ => {
                                        return Err(
                                            c.error_prev(format!("expected '802.1q' or '802.1ad', found '{}'", p.text))
                                        )
                                    }
                                };
                            }
                            _ => break,
                        }
                    }
                    let Some(vid) = vid else {
                        return Err(c.expected(&format!("'id' for 'vlan {verb}'")));
                    };
                    if verb == "push" {
                        out.push(Action::OfPushVlan { ethertype });
                    }
                    out.push(Action::OfSetVlanVid { vid });
                    out.extend(pcp.map(|pcp| Action::OfSetVlanPcp { pcp }));
                }
                other => return Err(c.error_prev(format!("expected 'push', 'pop' or 'modify', found '{other}'"))),
            },
            "tunnel_key" => match c.word("'set' or 'unset'")?.text {
                "unset" => out.push(Action::VxlanDecap),
                "set" => {
                    let mut tun = VxlanTunnel::default();
                    loop {
                        match c.peek_text() {
                            Some(k @ ("src_ip" | "dst_ip")) => {
                                c.next();
                                let v = c.word("an address")?;
                                let a: IpAddr = v.text.parse().map_err(|_| {
                                    c.error_prev(format!("expected an IP address for '{k}', found '{}'", v.text))
                                })?;
                                if k == "src_ip" {
                                    tun.src_ip = Some(a)
                                } else {
                                    tun.dst_ip = Some(a)
                                }
                            }
                            Some("id") => {
                                c.next();
                                tun.vni = Some(read_num(c, "a VNI", 24)? as u32)
                            }
                            Some("dst_port") => {
                                c.next();
                                tun.dst_port = Some(read_num(c, "a UDP port", 16)? as u16)
                            }
                            _ => break,
                        }
                    }
                    out.push(Action::VxlanEncap {
                        tunnel: Some(Box::new(tun)),
                    });
                }
                other => return Err(c.error_prev(format!("expected 'set' or 'unset', found '{other}'"))),
            },
            "skbedit" => {
                c.expect("mark", " after 'skbedit' (only 'skbedit mark' maps to rte_flow)")?;
                out.push(Action::Mark {
                    id: read_num(c, "a mark", 32)? as u32,
                });
            }
            other => return Err(c.error_prev(format!("tc action '{other}' has no rte_flow equivalent"))),
        }
        // `pipe` is the default control for these actions: nothing to record.
        c.eat("pipe");
    }
    Ok(out)
}

fn pedit_munge(c: &mut Cursor<'_>) -> Result<Action, LineError> {
    let hdr = c.word("a header ('eth', 'ip', 'ip6', 'tcp', 'udp')")?.text;
    let field = c.word("a header field")?.text;
    let op = c.word("'set' or 'dec'")?.text;
    if op == "dec" {
        return match (hdr, field) {
            ("ip", "ttl") | ("ip6", "hoplimit") => Ok(Action::DecTtl),
            _ => Err(c.error_prev(format!("tc pedit '{hdr} {field} dec' has no rte_flow equivalent"))),
        };
    }
    if op != "set" {
        return Err(c.error_prev(format!("expected 'set' or 'dec', found '{op}'")));
    }
    let v = c.word("a value after 'set'")?;
    let bad = |what: &str| {
        c.error_prev(format!(
            "expected {what} for 'pedit {hdr} {field} set', found '{}'",
            v.text
        ))
    };
    let mac = || MacAddr::parse_groups(v.text, 1, false).ok_or_else(|| bad("a MAC address"));
    let v4 = || v.text.parse::<Ipv4Addr>().map_err(|_| bad("an IPv4 address"));
    let v6 = || v.text.parse::<Ipv6Addr>().map_err(|_| bad("an IPv6 address"));
    let port = || {
        parse_c_uint(v.text)
            .and_then(|p| u16::try_from(p).ok())
            .ok_or_else(|| bad("a port"))
    };
    Ok(match (hdr, field) {
        ("eth", "src") => Action::SetMacSrc { mac: mac()? },
        ("eth", "dst") => Action::SetMacDst { mac: mac()? },
        ("ip", "src") => Action::SetIpv4Src { addr: v4()? },
        ("ip", "dst") => Action::SetIpv4Dst { addr: v4()? },
        ("ip6", "src") => Action::SetIpv6Src { addr: v6()? },
        ("ip6", "dst") => Action::SetIpv6Dst { addr: v6()? },
        ("tcp" | "udp", "sport") => Action::SetTpSrc { port: port()? },
        ("tcp" | "udp", "dport") => Action::SetTpDst { port: port()? },
        _ => return Err(c.error_prev(format!("tc pedit '{hdr} {field}' has no rte_flow equivalent"))),
    })
}

#[cfg(test)]
mod tests;
