//! Link-layer dispatch and human names for header stacks.

use nicbench_pcap::LinkType;
use nicbench_wire::parse::{parse_ethernet, parse_ip, Ip, Layers, ParsedFrame, Tunnel, L4};

/// LINKTYPE_ETHERNET.
const ETHERNET: u32 = 1;
/// LINKTYPE_RAW, LINKTYPE_IPV4, LINKTYPE_IPV6: the record starts at the IP header.
const RAW_IP: [u32; 3] = [101, 228, 229];
/// LINKTYPE_LINUX_SLL: a 16-byte cooked header whose last two bytes are the EtherType.
const LINUX_SLL: u32 = 113;
const LINUX_SLL_HEADER_BYTES: usize = 16;

/// Parse a record of the given link type. Unknown link types are tried as Ethernet,
/// which is what almost every capture is; the parse stop says when that was wrong.
pub fn parse_link(linktype: LinkType, data: &[u8]) -> ParsedFrame {
    match linktype.0 {
        ETHERNET => parse_ethernet(data),
        lt if RAW_IP.contains(&lt) => parse_ip(data),
        LINUX_SLL if data.len() >= LINUX_SLL_HEADER_BYTES => parse_ip(&data[LINUX_SLL_HEADER_BYTES..]),
        _ => parse_ethernet(data),
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
