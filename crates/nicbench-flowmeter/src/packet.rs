//! Per-packet extraction: everything the flow table needs from one frame
//! (addresses, ports, protocol, VLAN, VNI, TCP flags, ICMP type/code, DNS
//! transaction id, ICMP echo identifier and sequence).
//!
//! The common case (Ethernet, ≤ 2 VLAN tags, IPv4 not fragmented / IPv6
//! without extension headers, TCP / UDP / ICMP / ICMPv6) is read by
//! `nicbench_wire`'s fast path ([`flow_headers`]); everything else (VXLAN,
//! fragments, extension headers, truncation, raw IP link types) goes through
//! `nicbench_wire::parse_ethernet` / `parse_ip`. Invariant (tested here for the
//! meter's fields, in `nicbench-wire` for the headers): when the fast path
//! answers, it equals the general path.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use nicbench_wire::parse::{flow_headers, ip_proto, FlowHeaders, Layers, ParsedFrame, Tunnel, L4};
use nicbench_wire::{parse_ethernet_into, parse_ip, FlowKey};

/// Where the network layer starts in a captured frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum L2 {
    Ethernet,
    /// Raw IP (pcap LINKTYPE_RAW, Linux SLL…) at this byte offset.
    Ip(u16),
}

const DNS_PORT: u16 = 53;

/// What one packet contributes to a flow, as seen on the wire (not canonical).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PacketInfo {
    /// Addresses, IPv4 in the first 4 bytes (rest 0).
    pub src: [u8; 16],
    pub dst: [u8; 16],
    pub v6: bool,
    pub proto: u8,
    pub src_port: u16,
    pub dst_port: u16,
    pub vlan: Option<u16>,
    pub vni: Option<u32>,
    /// TCP flags byte (0 for non-TCP).
    pub tcp_flags: u8,
    pub icmp: Option<(u8, u8)>,
    /// First two payload bytes of a UDP packet with port 53 on either side.
    pub dns_txid: Option<u16>,
    /// Identifier of an ICMP/ICMPv6 echo request or reply.
    pub icmp_echo_id: Option<u16>,
    /// Its sequence number (0 when not an echo).
    pub icmp_echo_seq: u16,
}

/// Echo request/reply types: ICMP 8/0, ICMPv6 128/129.
fn is_echo(v6: bool, icmp_type: u8) -> bool {
    if v6 {
        matches!(icmp_type, 128 | 129)
    } else {
        matches!(icmp_type, 8 | 0)
    }
}

/// Reads the packet's fields; `None` when there is no IP header (non-IP).
/// (The inline table calls the two paths itself, see `FlowTable::process_l2`.)
#[inline(always)]
pub(crate) fn extract(data: &[u8], l2: L2, scratch: &mut ParsedFrame) -> Option<PacketInfo> {
    match fast_extract(data, l2) {
        Some(info) => Some(info),
        None => general_extract(data, l2, scratch),
    }
}

/// The fast path alone: `None` when the general parser must decide.
#[inline(always)]
pub(crate) fn fast_extract(data: &[u8], l2: L2) -> Option<PacketInfo> {
    if l2 != L2::Ethernet {
        return None;
    }
    flow_headers(data).map(|headers| fast_info(&headers))
}

/// The meter's fields from the fast path's headers: the DNS id and the echo
/// identifier and sequence come from the transport bytes (bounded by the IP
/// length, as the fast path gives them).
#[inline(always)]
fn fast_info(h: &FlowHeaders<'_>) -> PacketInfo {
    let dns = h.proto == ip_proto::UDP && (h.src_port == DNS_PORT || h.dst_port == DNS_PORT);
    // `icmp` is set only with the whole 8-byte ICMP header in `l4`.
    let echo = h.icmp.is_some_and(|(icmp_type, _)| is_echo(h.v6, icmp_type));
    PacketInfo {
        src: h.src,
        dst: h.dst,
        v6: h.v6,
        proto: h.proto,
        src_port: h.src_port,
        dst_port: h.dst_port,
        vlan: h.vlan,
        vni: None,
        tcp_flags: h.tcp_flags,
        icmp: h.icmp,
        dns_txid: if dns { be16(h.l4, 8) } else { None },
        icmp_echo_id: if echo { be16(h.l4, 4) } else { None },
        icmp_echo_seq: if echo { be16(h.l4, 6).unwrap_or(0) } else { 0 },
    }
}

#[inline(always)]
fn be16(b: &[u8], at: usize) -> Option<u16> {
    match b.get(at..at + 2) {
        Some(&[x, y]) => Some(u16::from_be_bytes([x, y])),
        _ => None,
    }
}

#[cold]
#[inline(never)]
pub(crate) fn general_extract(data: &[u8], l2: L2, scratch: &mut ParsedFrame) -> Option<PacketInfo> {
    match l2 {
        L2::Ethernet => parse_ethernet_into(data, scratch),
        L2::Ip(offset) => *scratch = parse_ip(data.get(usize::from(offset)..)?),
    }
    let frame = &*scratch;
    let key = FlowKey::from_frame(frame)?;
    // The header stack the key came from: the inner one for VXLAN with inner IP.
    let layers: &Layers = match (frame.tunnel, frame.inner.as_ref()) {
        (Some(Tunnel::Vxlan { .. }), Some(inner)) if inner.ip.is_some() => inner,
        _ => &frame.outer,
    };
    let (v6, src, dst) = match (key.src, key.dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => (false, v4_bytes(s), v4_bytes(d)),
        (s, d) => (true, v6_bytes(s), v6_bytes(d)),
    };
    let mut info = PacketInfo {
        src,
        dst,
        v6,
        proto: key.proto,
        src_port: key.src_port,
        dst_port: key.dst_port,
        vlan: key.vlan,
        vni: key.vni,
        tcp_flags: 0,
        icmp: None,
        dns_txid: None,
        icmp_echo_id: None,
        icmp_echo_seq: 0,
    };
    let first_fragment = layers.ip.is_some_and(|ip| !ip.is_non_first_fragment());
    match layers.l4 {
        Some(L4::Tcp(t)) if first_fragment => info.tcp_flags = t.flags,
        Some(L4::Icmpv4(i)) | Some(L4::Icmpv6(i)) if first_fragment => {
            info.icmp = Some((i.icmp_type, i.code));
            if is_echo(v6, i.icmp_type) {
                let at = layers.l4_offset + l2_offset(l2);
                info.icmp_echo_id = be16(data, at + 4);
                info.icmp_echo_seq = be16(data, at + 6).unwrap_or(0);
            }
        }
        Some(L4::Udp(u)) if first_fragment && (u.src_port == DNS_PORT || u.dst_port == DNS_PORT) => {
            info.dns_txid = be16(data, layers.payload_offset + l2_offset(l2));
        }
        _ => {}
    }
    Some(info)
}

fn l2_offset(l2: L2) -> usize {
    match l2 {
        L2::Ethernet => 0,
        L2::Ip(offset) => usize::from(offset),
    }
}

fn v4_bytes(a: Ipv4Addr) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[..4].copy_from_slice(&a.octets());
    out
}

fn v6_bytes(a: IpAddr) -> [u8; 16] {
    match a {
        IpAddr::V6(a) => a.octets(),
        // Mixed families cannot come from the parser; map to keep a total function.
        IpAddr::V4(a) => a.to_ipv6_mapped().octets(),
    }
}

pub(crate) fn to_ip(bytes: &[u8; 16], v6: bool) -> IpAddr {
    if v6 {
        IpAddr::V6(Ipv6Addr::from(*bytes))
    } else {
        IpAddr::V4(Ipv4Addr::new(bytes[0], bytes[1], bytes[2], bytes[3]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nicbench_wire::builder::{FrameSpec, L4Spec, TcpFlags, VlanTags, VxlanSpec};

    fn frames() -> Vec<Vec<u8>> {
        let v6a: IpAddr = "2001:db8::1".parse().unwrap();
        let v6b: IpAddr = "2001:db8::2".parse().unwrap();
        let specs = [
            FrameSpec::default(),
            FrameSpec {
                l4: L4Spec::tcp(1234, 80, TcpFlags::SYN | TcpFlags::ACK),
                ..FrameSpec::default()
            },
            FrameSpec {
                vlan: VlanTags::Single(7),
                l4: L4Spec::udp(53, 999),
                ..FrameSpec::default()
            },
            FrameSpec {
                vlan: VlanTags::Double { outer: 5, inner: 6 },
                ..FrameSpec::default()
            },
            FrameSpec {
                l4: L4Spec::IcmpEcho { id: 1, seq: 2 },
                ..FrameSpec::default()
            },
            FrameSpec {
                ip_src: v6a,
                ip_dst: v6b,
                l4: L4Spec::IcmpEcho { id: 1, seq: 2 },
                frame_size_bytes: 90,
                ..FrameSpec::default()
            },
            FrameSpec {
                ip_src: v6a,
                ip_dst: v6b,
                l4: L4Spec::tcp(5, 6, TcpFlags::FIN),
                frame_size_bytes: 90,
                ..FrameSpec::default()
            },
            FrameSpec {
                vxlan: Some(VxlanSpec::new(42)),
                frame_size_bytes: 120,
                ..FrameSpec::default()
            },
        ];
        specs.iter().map(|s| s.build().unwrap()).collect()
    }

    #[test]
    fn test_fast_path_agrees_with_general_path() {
        let mut scratch = ParsedFrame::default();
        for (i, f) in frames().into_iter().enumerate() {
            let general = general_extract(&f, L2::Ethernet, &mut scratch).expect("IP frame");
            if let Some(fast) = flow_headers(&f).map(|h| fast_info(&h)) {
                assert_eq!(fast, general, "frame {i}");
            }
            // Every prefix: never panics, and agreement whenever the fast path answers.
            for cut in 0..f.len() {
                let prefix = &f[..cut];
                if let Some(fast) = flow_headers(prefix).map(|h| fast_info(&h)) {
                    assert_eq!(
                        Some(fast),
                        general_extract(prefix, L2::Ethernet, &mut scratch),
                        "frame {i} cut {cut}"
                    );
                }
            }
        }
    }

    /// The fast path's one documented difference with the general parser
    /// (`nicbench_wire::parse::flow_headers`): an ICMP timestamp of the wrong
    /// size keeps its type and code here, as the meter always recorded it.
    #[test]
    fn test_odd_sized_icmp_timestamp_keeps_its_type_on_the_fast_path() {
        let mut scratch = ParsedFrame::default();
        let mut frame = FrameSpec {
            l4: L4Spec::IcmpEcho { id: 1, seq: 2 },
            ..FrameSpec::default()
        }
        .build()
        .unwrap();
        frame[14 + 20] = 14; // timestamp reply, code 0; the ICMP message is 26 bytes, not 20
        let fast = extract(&frame, L2::Ethernet, &mut scratch).unwrap();
        let general = general_extract(&frame, L2::Ethernet, &mut scratch).unwrap();
        assert_eq!((fast.icmp, general.icmp), (Some((14, 0)), None));
        assert_eq!(PacketInfo { icmp: None, ..fast }, general, "all else agrees");
    }

    #[test]
    fn test_extract_fields() {
        let mut scratch = ParsedFrame::default();
        let f = frames();
        let syn_ack = extract(&f[1], L2::Ethernet, &mut scratch).unwrap();
        assert_eq!(
            (syn_ack.proto, syn_ack.src_port, syn_ack.dst_port, syn_ack.tcp_flags),
            (6, 1234, 80, 0x12)
        );
        let dns = extract(&f[2], L2::Ethernet, &mut scratch).unwrap();
        assert_eq!((dns.vlan, dns.dns_txid), (Some(7), Some(0)));
        let qinq = extract(&f[3], L2::Ethernet, &mut scratch).unwrap();
        assert_eq!(qinq.vlan, Some(5));
        let icmp = extract(&f[4], L2::Ethernet, &mut scratch).unwrap();
        assert_eq!((icmp.icmp, icmp.icmp_echo_id), (Some((8, 0)), Some(1)));
        assert_eq!(
            general_extract(&f[4], L2::Ethernet, &mut scratch).unwrap().icmp_echo_id,
            Some(1)
        );
        let icmp6 = extract(&f[5], L2::Ethernet, &mut scratch).unwrap();
        assert_eq!(
            (icmp6.v6, icmp6.icmp, icmp6.icmp_echo_id),
            (true, Some((128, 0)), Some(1))
        );
        let vx = extract(&f[7], L2::Ethernet, &mut scratch).unwrap();
        assert_eq!((vx.vni, vx.src_port), (Some(42), 1024));
        // Raw IP at an offset: the IPv4 packet of frame 0 behind a fake 16-byte header.
        let mut raw = vec![0u8; 16];
        raw.extend_from_slice(&f[1][14..]);
        let r = extract(&raw, L2::Ip(16), &mut scratch).unwrap();
        assert_eq!((r.src_port, r.tcp_flags), (1234, 0x12));
        // ARP and garbage: non-IP.
        let mut arp = f[0].clone();
        arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        assert_eq!(extract(&arp, L2::Ethernet, &mut scratch), None);
        assert_eq!(extract(&[1, 2, 3], L2::Ethernet, &mut scratch), None);
        assert_eq!(extract(&[], L2::Ip(16), &mut scratch), None);
    }
}
