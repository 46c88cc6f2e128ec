//! Link-layer dispatch and human names for header stacks.

use nicbench_pcap::{L3Start, LinkType};
use nicbench_wire::parse::{parse_ethernet, parse_ip, Ip, Layers, ParsedFrame, Tunnel, L4};

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

/// "IPv4/UDP", "VLAN IPv6/TCP", "VXLAN IPv4/UDP", "ARP", "EtherType 0x88cc", …
pub fn stack_name(frame: &ParsedFrame) -> String {
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
