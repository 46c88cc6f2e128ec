//! Link-layer dispatch and human names for header stacks.

use nicbench_pcap::{L3Start, LinkType};
use nicbench_wire::parse::{flow_key, parse_ethernet, parse_ethernet_into, parse_ip, Ip, ParsedFrame, Tunnel, L4};
use nicbench_wire::FlowKey;

/// Parse a record of the given link type, from where its network layer starts
/// ([`LinkType::l3_start`], the one link-layer dispatch). A record that carries no IP packet
/// (ARP in a cooked capture) parses as an empty, truncated packet: it has no flow key.
pub fn parse_link(linktype: LinkType, data: &[u8]) -> ParsedFrame {
    match linktype.l3_start(data) {
        L3Start::Ethernet => parse_ethernet(data),
        L3Start::Ip(offset) => parse_ip(&data[offset..]),
        L3Start::NotIp => parse_ip(&[]),
    }
}

/// [`parse_link`] into a caller's frame (all of it overwritten): a loop that reuses one frame
/// saves the copy of the result (a `ParsedFrame` is a few hundred bytes).
#[inline]
pub fn parse_link_into(linktype: LinkType, data: &[u8], out: &mut ParsedFrame) {
    match linktype.l3_start(data) {
        L3Start::Ethernet => parse_ethernet_into(data, out),
        _ => *out = parse_link(linktype, data),
    }
}

/// The flow key RSS hashes for a record: the outer headers' (what a NIC's default RSS sees),
/// or the inner ones of a tunnelled frame when `inner`. Ethernet frames go through the
/// parser's fast path ([`flow_key`]), which answers exactly as the general parser does; a
/// VXLAN frame hashed on its outer headers, and other link types, take the general parser.
#[inline]
pub fn rss_flow_key(linktype: LinkType, data: &[u8], inner: bool) -> Option<FlowKey> {
    if let L3Start::Ethernet = linktype.l3_start(data) {
        match flow_key(data) {
            Ok(key) if inner || key.vni.is_none() => return Some(key),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
    rss_key_of_frame(&parse_link(linktype, data), inner)
}

/// The key RSS hashes in a parsed frame (see [`rss_flow_key`]).
#[cold]
pub fn rss_key_of_frame(frame: &ParsedFrame, inner: bool) -> Option<FlowKey> {
    if inner || frame.tunnel.is_none() {
        return FlowKey::from_frame(frame);
    }
    let mut outer_only = *frame;
    outer_only.tunnel = None;
    outer_only.inner = None;
    FlowKey::from_frame(&outer_only)
}

/// "IPv4/UDP", "VLAN IPv6/TCP", "VXLAN IPv4/UDP", "ARP", "EtherType 0x88cc", …
pub fn stack_name(frame: &ParsedFrame) -> String {
    StackKey::of(frame).name()
}

/// What [`stack_name`] depends on, as a small `Copy` value: counting packets per protocol
/// stack by this key and naming each key once at the end costs no allocation per packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StackKey {
    tunnel: TunnelKind,
    /// VLAN tags of the outer frame (0, 1 or "2 or more"); 0 for a tunnelled frame.
    vlan_tags: u8,
    /// The network layer's EtherType; named only when there is no IP header.
    ethertype: u16,
    l3: L3Kind,
    l4: L4Kind,
    /// IP protocol number, named only when there is no decoded transport header.
    proto: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum TunnelKind {
    None,
    Vxlan,
    Gre,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum L3Kind {
    None,
    V4,
    V6,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum L4Kind {
    Tcp,
    Udp,
    Icmp,
    Icmpv6,
    Sctp,
    Fragment,
    /// An IP packet whose transport header was not decoded: named by `proto`.
    Other,
    /// No IP header: named by the EtherType.
    NoIp,
}

impl StackKey {
    /// The key of the stack [`stack_name`] names: the innermost layers, and the tunnel.
    #[inline]
    pub fn of(frame: &ParsedFrame) -> StackKey {
        let tunnel = match frame.tunnel {
            Some(Tunnel::Vxlan { .. }) => TunnelKind::Vxlan,
            Some(Tunnel::Gre(_)) => TunnelKind::Gre,
            None => TunnelKind::None,
        };
        let layers = frame.innermost();
        let vlan_tags = if frame.inner.is_none() {
            layers.vlan_count.min(2)
        } else {
            0
        };
        let (l3, proto) = match layers.ip {
            Some(Ip::V4(_)) => (L3Kind::V4, layers.ip.map_or(0, |ip| ip.upper_proto())),
            Some(Ip::V6(_)) => (L3Kind::V6, layers.ip.map_or(0, |ip| ip.upper_proto())),
            None => (L3Kind::None, 0),
        };
        let l4 = match (layers.ip, layers.l4) {
            (None, _) => L4Kind::NoIp,
            (Some(_), Some(L4::Tcp(_))) => L4Kind::Tcp,
            (Some(_), Some(L4::Udp(_))) => L4Kind::Udp,
            (Some(_), Some(L4::Icmpv4(_))) => L4Kind::Icmp,
            (Some(_), Some(L4::Icmpv6(_))) => L4Kind::Icmpv6,
            (Some(_), Some(L4::Sctp(_))) => L4Kind::Sctp,
            (Some(ip), None) if ip.is_non_first_fragment() => L4Kind::Fragment,
            (Some(_), None) => L4Kind::Other,
        };
        // Only what the name shows is kept, so that stacks with one name have one key.
        let ethertype = if l3 == L3Kind::None { layers.ethertype } else { 0 };
        let proto = if l4 == L4Kind::Other { proto } else { 0 };
        StackKey {
            tunnel,
            vlan_tags,
            ethertype,
            l3,
            l4,
            proto,
        }
    }

    /// "IPv4/UDP", "VLAN IPv6/TCP", "VXLAN IPv4/UDP", "ARP", "EtherType 0x88cc", …
    pub fn name(&self) -> String {
        let mut name = String::new();
        match self.tunnel {
            TunnelKind::Vxlan => name.push_str("VXLAN "),
            TunnelKind::Gre => name.push_str("GRE "),
            TunnelKind::None => {}
        }
        match self.vlan_tags {
            0 => {}
            1 => name.push_str("VLAN "),
            _ => name.push_str("QinQ "),
        }
        let l3 = match self.l3 {
            L3Kind::V4 => "IPv4",
            L3Kind::V6 => "IPv6",
            L3Kind::None => {
                name.push_str(&match self.ethertype {
                    0x0806 => "ARP".to_string(),
                    0 => "unknown".to_string(),
                    other => format!("EtherType 0x{other:04x}"),
                });
                return name;
            }
        };
        let l4 = match self.l4 {
            L4Kind::Tcp => "TCP".to_string(),
            L4Kind::Udp => "UDP".to_string(),
            L4Kind::Icmp => "ICMP".to_string(),
            L4Kind::Icmpv6 => "ICMPv6".to_string(),
            L4Kind::Sctp => "SCTP".to_string(),
            L4Kind::Fragment => "fragment".to_string(),
            L4Kind::Other | L4Kind::NoIp => format!("proto {}", self.proto),
        };
        name.push_str(l3);
        name.push('/');
        name.push_str(&l4);
        name
    }
}

#[cfg(test)]
mod tests {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

    use nicbench_pcap::LinkType;
    use nicbench_wire::parse::{Ip, Layers, ParsedFrame, Tunnel, L4};
    use nicbench_wire::{FrameSpec, L4Spec, VlanTags, VxlanSpec};

    use super::*;

    /// The naming as it was before [`StackKey`] (a string built from the parsed frame, per
    /// packet), kept as the oracle of `StackKey::of(frame).name()`.
    fn name_from_frame(frame: &ParsedFrame) -> String {
        let mut name = String::new();
        match frame.tunnel {
            Some(Tunnel::Vxlan { .. }) => name.push_str("VXLAN "),
            Some(Tunnel::Gre(_)) => name.push_str("GRE "),
            None => {}
        }
        let layers = frame.innermost();
        if layers.vlan_count > 0 && frame.inner.is_none() {
            name.push_str(if layers.vlan_count > 1 { "QinQ " } else { "VLAN " });
        }
        name.push_str(&layers_name(layers));
        name
    }

    fn layers_name(layers: &Layers) -> String {
        let l3 = match layers.ip {
            Some(Ip::V4(_)) => "IPv4",
            Some(Ip::V6(_)) => "IPv6",
            None => {
                return match layers.ethertype {
                    0x0806 => "ARP".to_string(),
                    0 => "unknown".to_string(),
                    other => format!("EtherType 0x{other:04x}"),
                }
            }
        };
        let l4 = match layers.l4 {
            Some(L4::Tcp(_)) => "TCP".to_string(),
            Some(L4::Udp(_)) => "UDP".to_string(),
            Some(L4::Icmpv4(_)) => "ICMP".to_string(),
            Some(L4::Icmpv6(_)) => "ICMPv6".to_string(),
            Some(L4::Sctp(_)) => "SCTP".to_string(),
            None => match layers.ip {
                Some(ip) if ip.is_non_first_fragment() => "fragment".to_string(),
                Some(ip) => format!("proto {}", ip.upper_proto()),
                None => unreachable!("handled above"),
            },
        };
        format!("{l3}/{l4}")
    }

    /// Frames of many stacks: built ones (IPv4/IPv6, TCP/UDP/ICMP, VLAN/QinQ, VXLAN), then
    /// each with single bytes of its first 96 overwritten by values that matter to a parser
    /// (EtherTypes, IP versions, protocol numbers, fragment bits, VXLAN flags, lengths).
    fn frames() -> Vec<Vec<u8>> {
        let v4 = (
            IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
            IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
        );
        let v6 = (
            IpAddr::V6(Ipv6Addr::LOCALHOST),
            IpAddr::V6(Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 2)),
        );
        let mut built = Vec::new();
        for (ip_src, ip_dst) in [v4, v6] {
            for l4 in [
                L4Spec::udp(1024, 80),
                L4Spec::tcp(1, 2, Default::default()),
                L4Spec::IcmpEcho { id: 1, seq: 2 },
            ] {
                for vlan in [
                    VlanTags::None,
                    VlanTags::Single(5),
                    VlanTags::Double { outer: 6, inner: 7 },
                ] {
                    for vxlan in [
                        None,
                        Some(VxlanSpec {
                            vni: 42,
                            ..VxlanSpec::new(0)
                        }),
                    ] {
                        let spec = FrameSpec {
                            ip_src,
                            ip_dst,
                            l4,
                            vlan,
                            vxlan,
                            frame_size_bytes: 160,
                            ..FrameSpec::default()
                        };
                        built.push(spec.build().expect("the spec builds"));
                    }
                }
            }
        }
        let values = [
            0x00u8, 0x01, 0x06, 0x08, 0x11, 0x12, 0x20, 0x2c, 0x2f, 0x3a, 0x45, 0x60, 0x81, 0x84, 0x86, 0x88, 0xa8,
            0xdd, 0xff,
        ];
        let mut out = built.clone();
        for frame in &built {
            for at in 0..96.min(frame.len()) {
                for value in values {
                    let mut mutated = frame.clone();
                    mutated[at] = value;
                    out.push(mutated);
                }
            }
        }
        out
    }

    #[test]
    fn test_stack_key_names_as_before_and_keys_match_names() {
        let mut names_by_key = std::collections::HashMap::new();
        let mut distinct_names = std::collections::HashSet::new();
        for linktype in [LinkType::ETHERNET, LinkType::RAW] {
            for frame in frames() {
                let parsed = parse_link(linktype, &frame);
                let key = StackKey::of(&parsed);
                let expected = name_from_frame(&parsed);
                assert_eq!(key.name(), expected, "frame {frame:02x?}");
                distinct_names.insert(expected.clone());
                assert_eq!(names_by_key.entry(key).or_insert_with(|| expected.clone()), &expected);
            }
        }
        // One key per name: counting by key then naming merges nothing and splits nothing.
        assert_eq!(names_by_key.len(), distinct_names.len(), "{distinct_names:?}");
        assert!(
            distinct_names.len() >= 12,
            "the fixture covers many stacks: {distinct_names:?}"
        );
    }

    #[test]
    fn test_rss_flow_key_agrees_with_the_general_parser() {
        let (mut with_key, mut tunnelled) = (0, 0);
        for linktype in [LinkType::ETHERNET, LinkType::RAW] {
            for frame in frames() {
                let mut parsed = ParsedFrame::default();
                parse_link_into(linktype, &frame, &mut parsed);
                assert_eq!(parsed, parse_link(linktype, &frame));
                tunnelled += usize::from(parsed.tunnel.is_some());
                for inner in [false, true] {
                    let got = rss_flow_key(linktype, &frame, inner);
                    assert_eq!(
                        got,
                        rss_key_of_frame(&parsed, inner),
                        "inner {inner}, frame {frame:02x?}"
                    );
                    with_key += usize::from(got.is_some());
                }
            }
        }
        assert!(
            with_key > 1000 && tunnelled > 100,
            "{with_key} keyed, {tunnelled} tunnelled"
        );
    }
}
