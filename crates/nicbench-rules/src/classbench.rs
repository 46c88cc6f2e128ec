//! ClassBench filter sets: `@sip/len dip/len slo : shi dlo : dhi proto/mask [ignored…]`.
//!
//! A line's position is its priority (first line = priority 0 = highest). Port ranges map
//! to `spec`/`last`; `proto 0x06/0xFF` (17, 132) puts a tcp (udp, sctp) item after ipv4,
//! `0x01/0xFF` an icmp item, any other protocol an ipv4 `proto` field.
//!
//! rte_flow has no protocol-agnostic L4 port match: when the protocol is wildcarded (or is
//! not TCP/UDP/SCTP) but the ports are not, [`ClassBenchFilter::to_rule`] cannot keep the
//! ports and the rule matches more than the filter; [`ClassBenchFilter::widens_in_rte_flow`]
//! says when. [`ClassBenchFilter`] itself keeps the exact 5-tuple.

use crate::error::{LineError, ParseError, ParseReport};
use crate::lex::{self, parse_c_uint, Cursor};
use crate::model::{Action, Attr, EthItem, Field, IcmpItem, Ipv4Item, Item, Rule, SctpItem, TcpItem, UdpItem};
use serde::{Deserialize, Serialize};
use std::net::Ipv4Addr;

/// One ClassBench filter, exactly as written.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ClassBenchFilter {
    pub src: Ipv4Addr,
    pub src_prefix_len: u8,
    pub dst: Ipv4Addr,
    pub dst_prefix_len: u8,
    /// Inclusive (lo, hi).
    pub src_ports: (u16, u16),
    pub dst_ports: (u16, u16),
    pub proto: u8,
    pub proto_mask: u8,
}

/// Parses a filter file, stopping at the first error.
pub fn parse_file(text: &str, file: &str) -> Result<Vec<ClassBenchFilter>, ParseError> {
    lex::parse_lines_first(text, file, parse_line)
}

/// Parses a filter file, collecting every error.
pub fn parse_file_all(text: &str, file: &str) -> ParseReport<ClassBenchFilter> {
    lex::parse_lines_all(text, file, parse_line)
}

/// Parses a filter file into rules: line `i` (0-based among filters) gets priority `i`,
/// group 0, ingress, and no actions (callers add the fate they study).
pub fn parse_rules(text: &str, file: &str) -> Result<Vec<Rule>, ParseError> {
    let filters = parse_file(text, file)?;
    Ok(filters.iter().enumerate().map(|(i, f)| f.to_rule(i as u32)).collect())
}

const ANY_PORT: (u16, u16) = (0, u16::MAX);

impl ClassBenchFilter {
    fn l4_item(&self) -> Option<u8> {
        (self.proto_mask == 0xff && matches!(self.proto, 6 | 17 | 132)).then_some(self.proto)
    }

    /// Whether [`to_rule`](Self::to_rule) must drop a port constraint (no L4 item to hold it).
    pub fn widens_in_rte_flow(&self) -> bool {
        self.l4_item().is_none() && (self.src_ports != ANY_PORT || self.dst_ports != ANY_PORT)
    }

    /// The filter as an ingress rule in group 0 with the given priority and no actions.
    pub fn to_rule(&self, priority: u32) -> Rule {
        let port = |(lo, hi): (u16, u16)| {
            if (lo, hi) == ANY_PORT {
                None
            } else {
                Some(Field::range(lo, hi))
            }
        };
        let mut ip = Ipv4Item {
            src: Field::prefix(self.src, self.src_prefix_len as u32),
            dst: Field::prefix(self.dst, self.dst_prefix_len as u32),
            ..Default::default()
        };
        let (sp, dp) = (port(self.src_ports), port(self.dst_ports));
        let l4 = match self.l4_item() {
            Some(6) => Some(Item::Tcp(TcpItem {
                src: sp,
                dst: dp,
                flags: None,
            })),
            Some(17) => Some(Item::Udp(UdpItem { src: sp, dst: dp })),
            Some(_) => Some(Item::Sctp(SctpItem {
                src: sp,
                dst: dp,
                ..Default::default()
            })),
            None if self.proto_mask == 0xff && self.proto == 1 => Some(Item::Icmp(IcmpItem::default())),
            None => {
                ip.proto = Field::new(self.proto, self.proto_mask, None);
                None
            }
        };
        let mut pattern = vec![Item::Eth(EthItem::default()), Item::Ipv4(ip)];
        pattern.extend(l4);
        Rule {
            attr: Attr {
                priority,
                ingress: true,
                ..Default::default()
            },
            pattern,
            actions: Vec::<Action>::new(),
        }
    }
}

/// One line of a filter file, `@sip/len\tdip/len\tslo : shi\tdlo : dhi\t0xPP/0xMM`, as
/// ClassBench writes it and DPDK's `dpdk-test-acl --rulesf` reads it (no flags column: both
/// readers stop after the protocol).
impl std::fmt::Display for ClassBenchFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "@{}/{}\t{}/{}\t{} : {}\t{} : {}\t0x{:02X}/0x{:02X}",
            self.src,
            self.src_prefix_len,
            self.dst,
            self.dst_prefix_len,
            self.src_ports.0,
            self.src_ports.1,
            self.dst_ports.0,
            self.dst_ports.1,
            self.proto,
            self.proto_mask
        )
    }
}

fn parse_line(line: &str) -> Result<ClassBenchFilter, LineError> {
    let mut c = Cursor::new(line);
    let first = c.word("'@' and a source prefix")?;
    let Some(src_text) = first.text.strip_prefix('@') else {
        return Err(c.error_prev(format!("expected '@' and a source prefix, found '{}'", first.text)));
    };
    let (src, src_prefix_len) = prefix(&c, src_text, "source")?;
    let t = c.word("a destination prefix")?;
    let (dst, dst_prefix_len) = prefix(&c, t.text, "destination")?;
    let src_ports = port_range(&mut c, "source")?;
    let dst_ports = port_range(&mut c, "destination")?;
    let t = c.word("a protocol 'value/mask'")?;
    let pm = t.text.split_once('/').and_then(|(v, m)| {
        Some((
            u8::try_from(parse_c_uint(v)?).ok()?,
            u8::try_from(parse_c_uint(m)?).ok()?,
        ))
    });
    let Some((proto, proto_mask)) = pm else {
        return Err(c.error_prev(format!(
            "expected a protocol 'value/mask' such as 0x06/0xFF, found '{}'",
            t.text
        )));
    };
    // Remaining columns (TCP flags, extensions) are not part of the 5-tuple model.
    Ok(ClassBenchFilter {
        src,
        src_prefix_len,
        dst,
        dst_prefix_len,
        src_ports,
        dst_ports,
        proto,
        proto_mask,
    })
}

fn prefix(c: &Cursor<'_>, text: &str, which: &str) -> Result<(Ipv4Addr, u8), LineError> {
    let parsed = text.split_once('/').and_then(|(a, l)| {
        let len: u8 = l.parse().ok().filter(|&l| l <= 32)?;
        Some((a.parse().ok()?, len))
    });
    parsed.ok_or_else(|| c.error_prev(format!("expected a {which} prefix ADDRESS/LEN, found '{text}'")))
}

fn port_range(c: &mut Cursor<'_>, which: &str) -> Result<(u16, u16), LineError> {
    // Messages are built only on error: this runs twice per line of 10k-line files.
    let num = |c: &mut Cursor<'_>| -> Result<u16, LineError> {
        let Some(t) = c.next() else {
            return Err(c.expected(&format!("a {which} port")));
        };
        t.text
            .parse()
            .map_err(|_| c.error_prev(format!("expected a {which} port (0-65535), found '{}'", t.text)))
    };
    let lo = num(c)?;
    if !c.eat(":") {
        return Err(c.expected(&format!("':' between the {which} port bounds")));
    }
    let hi = num(c)?;
    Ok((lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ACL: &str = "@205.174.0.0/16\t0.0.0.0/0\t0 : 65535\t1521 : 1521\t0x06/0xFF\t0x1000/0x1000\t\n\
@10.0.0.1/32\t10.0.0.0/8\t1024 : 65535\t53 : 53\t0x11/0xFF\t0x0000/0x0000\t\n\
@0.0.0.0/0\t1.2.3.4/32\t0 : 65535\t80 : 80\t0x00/0x00\t0x0000/0x0000\t\n";

    #[test]
    fn test_parse_and_map() {
        let f = parse_file(ACL, "acl").unwrap();
        assert_eq!(f.len(), 3);
        assert_eq!(
            (f[0].src, f[0].src_prefix_len, f[0].dst_ports),
            (Ipv4Addr::new(205, 174, 0, 0), 16, (1521, 1521))
        );
        let rules = parse_rules(ACL, "acl").unwrap();
        assert_eq!(rules[1].attr.priority, 1);
        let Item::Ipv4(ip) = &rules[0].pattern[1] else { panic!() };
        assert_eq!(ip.dst, None, "/0 matches anything");
        assert_eq!(
            rules[0].pattern[2],
            Item::Tcp(TcpItem {
                dst: Some(Field::exact(1521)),
                ..Default::default()
            })
        );
        assert_eq!(
            rules[1].pattern[2],
            Item::Udp(UdpItem {
                src: Some(Field::range(1024, 65535)),
                dst: Some(Field::exact(53))
            })
        );
        assert!(!f[1].widens_in_rte_flow());
        assert!(f[2].widens_in_rte_flow());
        assert_eq!(rules[2].pattern.len(), 2);
        // The model's text form parses back.
        for r in &rules {
            assert_eq!(&crate::testpmd::parse_rule(&r.to_string()).unwrap(), r);
        }
    }

    #[test]
    fn test_display_parses_back() {
        let filters = parse_file(ACL, "acl").unwrap();
        let text: String = filters.iter().map(|f| format!("{f}\n")).collect();
        assert_eq!(parse_file(&text, "written").unwrap(), filters);
        assert_eq!(
            filters[1].to_string(),
            "@10.0.0.1/32\t10.0.0.0/8\t1024 : 65535\t53 : 53\t0x11/0xFF"
        );
    }

    #[test]
    fn test_errors() {
        let e = parse_file("@1.2.3.4/33\t0.0.0.0/0\t0 : 1\t0 : 1\t0x06/0xFF\n", "x").unwrap_err();
        assert_eq!((e.line, e.column), (1, 1));
        let e = parse_file("@1.2.3.4/32 0.0.0.0/0 0 - 1 0 : 1 0x06/0xFF\n", "x").unwrap_err();
        assert_eq!(
            e.to_string(),
            "x:1:25: expected ':' between the source port bounds, found '-'"
        );
        let r = parse_file_all("junk\n@1.2.3.4/32 0.0.0.0/0 0 : 1 0 : 1 0x06/0xFF\n", "x");
        assert_eq!((r.parsed.len(), r.errors.len()), (1, 1));
    }
}
