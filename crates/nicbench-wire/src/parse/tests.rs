//! Parser tests: byte fixtures for every protocol, truncation at every
//! length, and property tests (random bytes never panic; the fast paths —
//! flow key, common-case `ParsedFrame`, flow headers — and etherparse's
//! `LaxSlicedPacket` agree with the general parser).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use etherparse::{LaxSlicedPacket, PacketBuilder};
use proptest::prelude::*;

use super::*;
use crate::FlowKey;

const MAC_SRC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
const MAC_DST: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];
const V4_SRC: [u8; 4] = [192, 0, 2, 1];
const V4_DST: [u8; 4] = [198, 51, 100, 2];
const V6_SRC: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
const V6_DST: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn eth(ethertype: u16) -> Vec<u8> {
    cat(&[&MAC_DST, &MAC_SRC, &ethertype.to_be_bytes()])
}

fn vlan_tag(pcp: u8, dei: bool, vid: u16, next: u16) -> Vec<u8> {
    let tci = (u16::from(pcp) << 13) | (u16::from(dei) << 12) | vid;
    cat(&[&tci.to_be_bytes(), &next.to_be_bytes()])
}

/// IPv4 header (tos 0xb8, id 0x1234, DF, ttl 64) + options + payload.
fn ipv4(proto: u8, options: &[u8], payload: &[u8]) -> Vec<u8> {
    let ihl = 5 + options.len() / 4;
    let total = (ihl * 4 + payload.len()) as u16;
    let mut h = vec![0x40 | ihl as u8, 0xb8];
    h.extend_from_slice(&total.to_be_bytes());
    h.extend_from_slice(&[0x12, 0x34, 0x40, 0x00, 64, proto, 0, 0]);
    h.extend_from_slice(&V4_SRC);
    h.extend_from_slice(&V4_DST);
    cat(&[&h, options, payload])
}

/// IPv6 header (traffic class 0xb8, flow label 0x12345, hop limit 64) + payload.
fn ipv6(next: u8, payload: &[u8]) -> Vec<u8> {
    let word: u32 = (6 << 28) | (0xb8 << 20) | 0x12345;
    let mut h = word.to_be_bytes().to_vec();
    h.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    h.extend_from_slice(&[next, 64]);
    cat(&[&h, &V6_SRC, &V6_DST, payload])
}

/// 8-byte-multiple IPv6 extension header (hop-by-hop / routing / dest opts).
fn ipv6_ext(next: u8, len_units: u8) -> Vec<u8> {
    let mut h = vec![0u8; (usize::from(len_units) + 1) * 8];
    h[0] = next;
    h[1] = len_units;
    h
}

fn udp(src_port: u16, dst_port: u16, payload: &[u8]) -> Vec<u8> {
    let len = (8 + payload.len()) as u16;
    cat(&[
        &src_port.to_be_bytes(),
        &dst_port.to_be_bytes(),
        &len.to_be_bytes(),
        &[0, 0],
        payload,
    ])
}

fn tcp(src_port: u16, dst_port: u16, flags: u8, options: &[u8], payload: &[u8]) -> Vec<u8> {
    let data_offset = (5 + options.len() / 4) as u8;
    let mut h = cat(&[&src_port.to_be_bytes(), &dst_port.to_be_bytes()]);
    h.extend_from_slice(&1000u32.to_be_bytes()); // seq
    h.extend_from_slice(&2000u32.to_be_bytes()); // ack
    h.extend_from_slice(&[data_offset << 4, flags, 0xff, 0xff, 0, 0, 0, 0]);
    cat(&[&h, options, payload])
}

fn vxlan(vni: u32) -> Vec<u8> {
    cat(&[&[0x08, 0, 0, 0], &(vni << 8).to_be_bytes()])
}

fn mpls_entry(label: u32, tc: u8, bos: bool, ttl: u8) -> [u8; 4] {
    ((label << 12) | (u32::from(tc) << 9) | (u32::from(bos) << 8) | u32::from(ttl)).to_be_bytes()
}

// ---- fixtures -------------------------------------------------------------

fn udp_v4_frame() -> Vec<u8> {
    cat(&[&eth(0x0800), &ipv4(17, &[], &udp(1234, 53, b"hello"))])
}

fn tcp_v6_frame() -> Vec<u8> {
    let mss = [2, 4, 0x05, 0xb4];
    cat(&[
        &eth(0x86dd),
        &ipv6(6, &tcp(443, 50000, tcp_flags::SYN | tcp_flags::ACK, &mss, b"x")),
    ])
}

fn qinq_frame() -> Vec<u8> {
    cat(&[
        &eth(0x88a8),
        &vlan_tag(5, true, 100, 0x8100),
        &vlan_tag(3, false, 200, 0x0800),
        &ipv4(17, &[], &udp(1, 2, &[])),
    ])
}

fn ipv4_options_frame() -> Vec<u8> {
    // Router alert option (4 bytes) + 4 NOP-padded bytes: IHL 7.
    let options = [0x94, 0x04, 0, 0, 1, 1, 1, 0];
    cat(&[
        &eth(0x0800),
        &ipv4(6, &options, &tcp(80, 8080, tcp_flags::FIN, &[], &[])),
    ])
}

fn ipv6_ext_frame() -> Vec<u8> {
    // hop-by-hop -> routing -> destination options -> AH -> UDP
    let ah = cat(&[
        &[17, 4, 0, 0],
        &0x1000u32.to_be_bytes(),
        &7u32.to_be_bytes(),
        &[0u8; 12],
    ]);
    let payload = cat(&[
        &ipv6_ext(43, 0),
        &ipv6_ext(60, 1),
        &ipv6_ext(51, 0),
        &ah,
        &udp(5000, 6000, b"abc"),
    ]);
    cat(&[&eth(0x86dd), &ipv6(0, &payload)])
}

fn icmpv4_frame() -> Vec<u8> {
    cat(&[&eth(0x0800), &ipv4(1, &[], &[3, 1, 0, 0, 0, 0, 0, 0, 0xaa])])
}

fn icmpv6_frame() -> Vec<u8> {
    cat(&[&eth(0x86dd), &ipv6(58, &[128, 0, 0, 0, 0, 1, 0, 1])])
}

fn sctp_frame() -> Vec<u8> {
    let sctp = cat(&[
        &2905u16.to_be_bytes(),
        &80u16.to_be_bytes(),
        &0xdeadbeefu32.to_be_bytes(),
        &[0; 4],
    ]);
    cat(&[&eth(0x0800), &ipv4(132, &[], &sctp)])
}

fn gre_key_ipv4_frame() -> Vec<u8> {
    let gre = cat(&[&[0x20, 0x00, 0x08, 0x00], &1337u32.to_be_bytes()]);
    let inner = ipv4(17, &[], &udp(7, 8, &[]));
    cat(&[&eth(0x0800), &ipv4(47, &[], &cat(&[&gre, &inner]))])
}

fn gre_teb_frame() -> Vec<u8> {
    let gre = cat(&[&[0x30, 0x00, 0x65, 0x58], &42u32.to_be_bytes(), &9u32.to_be_bytes()]);
    let inner = cat(&[&eth(0x86dd), &ipv6(17, &udp(10, 20, &[]))]);
    cat(&[&eth(0x86dd), &ipv6(47, &cat(&[&gre, &inner]))])
}

fn vxlan_frame() -> Vec<u8> {
    let inner = cat(&[
        &eth(0x0800),
        &ipv4(6, &[], &tcp(33000, 22, tcp_flags::PSH, &[], b"ssh")),
    ]);
    cat(&[
        &eth(0x8100),
        &vlan_tag(0, false, 10, 0x0800),
        &ipv4(17, &[], &udp(49152, VXLAN_UDP_PORT, &cat(&[&vxlan(0x123456), &inner]))),
    ])
}

fn mpls_frame() -> Vec<u8> {
    cat(&[
        &eth(0x8847),
        &mpls_entry(100, 1, false, 64),
        &mpls_entry(200, 2, false, 63),
        &mpls_entry(300, 3, true, 62),
        &ipv4(17, &[], &udp(3, 4, &[])),
    ])
}

/// Every fixture that parses completely.
fn complete_fixtures() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("udp_v4", udp_v4_frame()),
        ("tcp_v6", tcp_v6_frame()),
        ("qinq", qinq_frame()),
        ("ipv4_options", ipv4_options_frame()),
        ("ipv6_ext", ipv6_ext_frame()),
        ("icmpv4", icmpv4_frame()),
        ("icmpv6", icmpv6_frame()),
        ("sctp", sctp_frame()),
        ("gre_key_ipv4", gre_key_ipv4_frame()),
        ("gre_teb", gre_teb_frame()),
        ("vxlan", vxlan_frame()),
        ("mpls", mpls_frame()),
    ]
}

fn v4(p: &ParsedFrame) -> Ipv4 {
    match p.outer.ip {
        Some(Ip::V4(h)) => h,
        other => panic!("expected IPv4, got {other:?}"),
    }
}

fn v6(l: &Layers) -> Ipv6 {
    match l.ip {
        Some(Ip::V6(h)) => h,
        other => panic!("expected IPv6, got {other:?}"),
    }
}

// ---- per-protocol fixtures ------------------------------------------------

#[test]
fn test_parse_udp_ipv4() {
    let f = udp_v4_frame();
    let p = parse_ethernet(&f);
    assert_eq!(p.stop, None);
    assert_eq!(p.frame_len, f.len());
    assert_eq!(
        p.outer.eth,
        Some(Eth {
            dst: MAC_DST,
            src: MAC_SRC,
            ethertype: 0x0800
        })
    );
    assert_eq!((p.outer.vlan_count, p.outer.ethertype), (0, 0x0800));
    let h = v4(&p);
    assert_eq!((h.src, h.dst), (Ipv4Addr::from(V4_SRC), Ipv4Addr::from(V4_DST)));
    assert_eq!((h.proto, h.upper_proto, h.tos, h.ttl, h.ihl), (17, 17, 0xb8, 64, 5));
    assert_eq!(
        (h.total_len, h.id, h.dont_frag, h.more_frags, h.frag_offset),
        (33, 0x1234, true, false, 0)
    );
    assert_eq!(
        p.outer.l4,
        Some(L4::Udp(Udp {
            src_port: 1234,
            dst_port: 53,
            len: 13
        }))
    );
    assert_eq!(
        (p.outer.l3_offset, p.outer.l4_offset, p.outer.payload_offset),
        (14, 34, 42)
    );
    assert_eq!((p.tunnel, p.inner), (None, None));
    let k = FlowKey::from_frame(&p).unwrap();
    assert_eq!(k.to_string(), "192.0.2.1:1234 -> 198.51.100.2:53 proto 17");
}

#[test]
fn test_parse_tcp_ipv6_with_options() {
    let p = parse_ethernet(&tcp_v6_frame());
    assert_eq!(p.stop, None);
    let h = v6(&p.outer);
    assert_eq!((h.src, h.dst), (Ipv6Addr::from(V6_SRC), Ipv6Addr::from(V6_DST)));
    assert_eq!(
        (h.next_header, h.traffic_class, h.flow_label, h.hop_limit),
        (6, 0xb8, 0x12345, 64)
    );
    assert_eq!((h.payload_len, h.ext_headers_len, h.fragment), (25, 0, None));
    let Some(L4::Tcp(t)) = p.outer.l4 else {
        panic!("no TCP: {p:?}")
    };
    assert_eq!((t.src_port, t.dst_port, t.seq, t.ack), (443, 50000, 1000, 2000));
    assert_eq!(
        (t.flags, t.header_len, t.window),
        (tcp_flags::SYN | tcp_flags::ACK, 24, 0xffff)
    );
    assert_eq!(p.outer.payload_offset, 14 + 40 + 24);
    assert!(FlowKey::from_frame(&p).unwrap().is_ipv6());
}

#[test]
fn test_parse_qinq_and_deeper_tags() {
    let p = parse_ethernet(&qinq_frame());
    assert_eq!(p.stop, None);
    assert_eq!(p.outer.vlan_count, 2);
    assert_eq!(
        p.outer.vlans,
        [
            Some(Vlan {
                tpid: 0x88a8,
                vid: 100,
                pcp: 5,
                dei: true,
                inner_ethertype: 0x8100
            }),
            Some(Vlan {
                tpid: 0x8100,
                vid: 200,
                pcp: 3,
                dei: false,
                inner_ethertype: 0x0800
            }),
        ]
    );
    assert_eq!(p.outer.l3_offset, 22);
    assert_eq!(FlowKey::from_frame(&p).unwrap().vlan, Some(100));
    // Three tags (0x9100 outer): the third is counted, skipped, and IP still parsed.
    let f = cat(&[
        &eth(0x9100),
        &vlan_tag(0, false, 1, 0x88a8),
        &vlan_tag(0, false, 2, 0x8100),
        &vlan_tag(0, false, 3, 0x0800),
        &ipv4(17, &[], &udp(1, 2, &[])),
    ]);
    let p = parse_ethernet(&f);
    assert_eq!((p.stop, p.outer.vlan_count, p.outer.l3_offset), (None, 3, 26));
    assert_eq!(p.outer.vlans.map(|v| v.map(|v| v.vid)), [Some(1), Some(2)]);
}

#[test]
fn test_parse_ipv4_options_and_bad_ihl() {
    let p = parse_ethernet(&ipv4_options_frame());
    assert_eq!(p.stop, None);
    assert_eq!(v4(&p).ihl, 7);
    assert_eq!(p.outer.l4_offset, 14 + 28);
    let Some(L4::Tcp(t)) = p.outer.l4 else { panic!("no TCP") };
    assert_eq!((t.src_port, t.dst_port, t.flags), (80, 8080, tcp_flags::FIN));

    let mut f = udp_v4_frame();
    f[14] = 0x44; // IHL 4
    let p = parse_ethernet(&f);
    assert_eq!(p.outer.ip, None);
    assert_eq!(
        p.stop,
        Some(ParseStop {
            layer: Layer::Ipv4,
            offset: 14,
            reason: StopReason::Malformed("IPv4 IHL < 5")
        })
    );
    f[14] = 0x65; // version 6 behind EtherType IPv4
    assert!(matches!(
        parse_ethernet(&f).stop.map(|s| s.reason),
        Some(StopReason::Malformed(_))
    ));
}

#[test]
fn test_parse_ipv6_extension_headers() {
    let p = parse_ethernet(&ipv6_ext_frame());
    assert_eq!(p.stop, None);
    let h = v6(&p.outer);
    assert_eq!((h.header_next_header, h.next_header), (0, 17));
    assert_eq!(h.ext_headers_len, 8 + 16 + 8 + 24);
    assert_eq!(p.outer.l4_offset, 14 + 40 + 56);
    assert_eq!(
        p.outer.l4,
        Some(L4::Udp(Udp {
            src_port: 5000,
            dst_port: 6000,
            len: 11
        }))
    );
    assert_eq!(FlowKey::from_frame(&p).unwrap().proto, 17);
    // ESP after the extension headers: kept as a number, unsupported.
    let f = cat(&[&eth(0x86dd), &ipv6(60, &cat(&[&ipv6_ext(50, 0), &[0u8; 16]]))]);
    let p = parse_ethernet(&f);
    assert_eq!(v6(&p.outer).next_header, 50);
    assert_eq!(
        p.stop,
        Some(ParseStop {
            layer: Layer::Ipv6Ext,
            offset: 62,
            reason: StopReason::Unsupported
        })
    );
}

#[test]
fn test_parse_fragments() {
    // IPv4 first fragment (MF): transport header present and decoded.
    let mut f = udp_v4_frame();
    f[20..22].copy_from_slice(&0x2000u16.to_be_bytes());
    let p = parse_ethernet(&f);
    assert!(p.outer.ip.unwrap().is_fragment() && !p.outer.ip.unwrap().is_non_first_fragment());
    assert_eq!(FlowKey::from_frame(&p).unwrap().dst_port, 53);
    // Non-first fragment (offset 185 * 8): no transport header, not an error.
    f[20..22].copy_from_slice(&185u16.to_be_bytes());
    let p = parse_ethernet(&f);
    assert_eq!((p.stop, p.outer.l4, v4(&p).frag_offset), (None, None, 185));
    let k = FlowKey::from_frame(&p).unwrap();
    assert_eq!((k.proto, k.src_port, k.dst_port), (17, 0, 0));
    assert_eq!(flow_key(&f), Ok(k));

    // IPv6 fragment header: first fragment parses UDP, later ones do not.
    let frag = |offset: u16, more: bool| {
        let word = (offset << 3) | u16::from(more);
        cat(&[&[17, 0], &word.to_be_bytes(), &0xabcdu32.to_be_bytes()])
    };
    let first = cat(&[&eth(0x86dd), &ipv6(44, &cat(&[&frag(0, true), &udp(9, 10, b"..")]))]);
    let p = parse_ethernet(&first);
    assert_eq!(
        v6(&p.outer).fragment,
        Some(Ipv6Frag {
            offset: 0,
            more_frags: true,
            id: 0xabcd
        })
    );
    assert_eq!((p.stop, p.outer.l4.and_then(|l| l.ports())), (None, Some((9, 10))));
    let later = cat(&[&eth(0x86dd), &ipv6(44, &cat(&[&frag(100, false), b"payload..."]))]);
    let p = parse_ethernet(&later);
    assert_eq!((p.stop, p.outer.l4, v6(&p.outer).next_header), (None, None, 17));
    assert_eq!(FlowKey::from_frame(&p).map(|k| (k.proto, k.src_port)), Some((17, 0)));
}

#[test]
fn test_parse_icmp_and_icmpv6() {
    let p = parse_ethernet(&icmpv4_frame());
    assert_eq!(p.stop, None);
    assert_eq!(p.outer.l4, Some(L4::Icmpv4(Icmp { icmp_type: 3, code: 1 })));
    let k = FlowKey::from_frame(&p).unwrap();
    assert_eq!((k.proto, k.src_port, k.dst_port), (1, 0, 0));
    let p = parse_ethernet(&icmpv6_frame());
    assert_eq!(p.stop, None);
    assert_eq!(
        p.outer.l4,
        Some(L4::Icmpv6(Icmp {
            icmp_type: 128,
            code: 0
        }))
    );
    assert_eq!(
        FlowKey::from_frame(&p).map(|k| (k.proto, k.src_port, k.dst_port)),
        Some((58, 0, 0))
    );
}

#[test]
fn test_parse_sctp() {
    let p = parse_ethernet(&sctp_frame());
    assert_eq!(p.stop, None);
    assert_eq!(
        p.outer.l4,
        Some(L4::Sctp(Sctp {
            src_port: 2905,
            dst_port: 80,
            vtag: 0xdeadbeef
        }))
    );
    assert_eq!(p.outer.payload_offset, 34 + 12);
    assert_eq!(
        FlowKey::from_frame(&p).map(|k| (k.src_port, k.dst_port)),
        Some((2905, 80))
    );
}

#[test]
fn test_parse_gre_with_key_and_ip_payload() {
    let p = parse_ethernet(&gre_key_ipv4_frame());
    assert_eq!(p.stop, None);
    assert_eq!(
        p.tunnel,
        Some(Tunnel::Gre(Gre {
            protocol: 0x0800,
            key: Some(1337),
            seq: None,
            checksum_present: false,
            version: 0
        }))
    );
    assert_eq!(v4(&p).proto, 47);
    assert_eq!(p.outer.l4, None);
    let inner = p.inner.unwrap();
    assert_eq!(
        (inner.eth, inner.ethertype, p.inner_offset, inner.l3_offset),
        (None, 0x0800, 42, 42)
    );
    assert_eq!(inner.l4.and_then(|l| l.ports()), Some((7, 8)));
    // GRE frames are keyed by the outer header.
    let k = FlowKey::from_frame(&p).unwrap();
    assert_eq!((k.proto, k.src_port, k.vni), (47, 0, None));
    // Unknown GRE payload (PPP): protocol and key kept, no inner frame.
    let mut f = gre_key_ipv4_frame();
    f[36..38].copy_from_slice(&0x880bu16.to_be_bytes());
    let p = parse_ethernet(&f);
    assert!(matches!(
        p.tunnel,
        Some(Tunnel::Gre(Gre {
            protocol: 0x880b,
            key: Some(1337),
            ..
        }))
    ));
    assert_eq!(p.inner, None);
    assert_eq!(
        p.stop,
        Some(ParseStop {
            layer: Layer::Gre,
            offset: 42,
            reason: StopReason::Unsupported
        })
    );
}

#[test]
fn test_parse_gre_transparent_ethernet_bridging() {
    let p = parse_ethernet(&gre_teb_frame());
    assert_eq!(p.stop, None);
    let Some(Tunnel::Gre(g)) = p.tunnel else {
        panic!("no GRE")
    };
    assert_eq!((g.protocol, g.key, g.seq), (0x6558, Some(42), Some(9)));
    let inner = p.inner.unwrap();
    assert_eq!(p.inner_offset, 14 + 40 + 12);
    assert_eq!(inner.eth.map(|e| e.ethertype), Some(0x86dd));
    assert_eq!(
        inner.l4,
        Some(L4::Udp(Udp {
            src_port: 10,
            dst_port: 20,
            len: 8
        }))
    );
}

#[test]
fn test_parse_vxlan_inner_frame() {
    let f = vxlan_frame();
    let p = parse_ethernet(&f);
    assert_eq!(p.stop, None);
    assert_eq!(
        p.tunnel,
        Some(Tunnel::Vxlan {
            vni: 0x123456,
            flags: 0x08
        })
    );
    assert_eq!(p.outer.l4.and_then(|l| l.ports()), Some((49152, 4789)));
    assert_eq!(p.outer.payload_offset, 18 + 20 + 8);
    assert_eq!(p.inner_offset, 18 + 20 + 8 + 8);
    let inner = p.inner.unwrap();
    assert_eq!(inner.eth.map(|e| e.src), Some(MAC_SRC));
    let Some(L4::Tcp(t)) = inner.l4 else {
        panic!("no inner TCP")
    };
    assert_eq!((t.src_port, t.dst_port, t.flags), (33000, 22, tcp_flags::PSH));
    assert_eq!(inner.payload_offset, f.len() - 3);
    let k = FlowKey::from_frame(&p).unwrap();
    assert_eq!(
        k.to_string(),
        "192.0.2.1:33000 -> 198.51.100.2:22 proto 6 vlan 10 vni 1193046"
    );
    assert_eq!(flow_key(&f), Ok(k));
    // Inner frame without IP (ARP): outer key, VNI set.
    let arp = cat(&[&eth(0x0806), &[0u8; 28]]);
    let f = cat(&[
        &eth(0x0800),
        &ipv4(17, &[], &udp(1, VXLAN_UDP_PORT, &cat(&[&vxlan(5), &arp]))),
    ]);
    let p = parse_ethernet(&f);
    assert_eq!(
        p.stop,
        Some(ParseStop {
            layer: Layer::Ethernet,
            offset: 64,
            reason: StopReason::Unsupported
        })
    );
    let k = FlowKey::from_frame(&p).unwrap();
    assert_eq!((k.dst_port, k.vni), (VXLAN_UDP_PORT, Some(5)));
    // VXLAN inside VXLAN: the second level is reported, not decoded.
    let nested = cat(&[&eth(0x0800), &ipv4(17, &[], &udp(1, VXLAN_UDP_PORT, &vxlan(7)))]);
    let f = cat(&[
        &eth(0x0800),
        &ipv4(17, &[], &udp(1, VXLAN_UDP_PORT, &cat(&[&vxlan(5), &nested]))),
    ]);
    let p = parse_ethernet(&f);
    assert_eq!(
        p.stop,
        Some(ParseStop {
            layer: Layer::Vxlan,
            offset: 50 + 42,
            reason: StopReason::Unsupported
        })
    );
}

#[test]
fn test_parse_mpls_stack() {
    let p = parse_ethernet(&mpls_frame());
    assert_eq!(p.stop, None);
    assert_eq!((p.outer.ethertype, p.outer.mpls_count), (0x8847, 3));
    assert_eq!(
        p.outer.mpls[0],
        Some(MplsEntry {
            label: 100,
            tc: 1,
            bottom_of_stack: false,
            ttl: 64
        })
    );
    assert_eq!(p.outer.mpls[1].map(|e| e.label), Some(200));
    assert_eq!(
        (p.outer.l3_offset, p.outer.l4.and_then(|l| l.ports())),
        (26, Some((3, 4)))
    );
    // After the bottom label, a nibble that is neither 4 nor 6 is not decoded.
    let f = cat(&[&eth(0x8848), &mpls_entry(16, 0, true, 1), &[0u8; 4], &eth(0x0800)]);
    let p = parse_ethernet(&f);
    assert_eq!(
        p.stop,
        Some(ParseStop {
            layer: Layer::Mpls,
            offset: 18,
            reason: StopReason::Unsupported
        })
    );
    assert_eq!(p.outer.mpls_count, 1);
}

#[test]
fn test_unknown_types_are_kept_as_numbers() {
    let f = cat(&[&eth(0x0806), &[0u8; 28]]);
    let p = parse_ethernet(&f);
    assert_eq!((p.outer.ethertype, p.outer.ip), (0x0806, None));
    assert_eq!(
        p.stop,
        Some(ParseStop {
            layer: Layer::Ethernet,
            offset: 14,
            reason: StopReason::Unsupported
        })
    );
    assert_eq!(flow_key(&f), Err(p.stop.unwrap()));
    // OSPF (89) over IPv4 behind a VLAN tag.
    let f = cat(&[&eth(0x8100), &vlan_tag(0, false, 4, 0x0800), &ipv4(89, &[], &[0u8; 24])]);
    let p = parse_ethernet(&f);
    assert_eq!(v4(&p).proto, 89);
    assert_eq!(
        p.stop,
        Some(ParseStop {
            layer: Layer::Ipv4,
            offset: 38,
            reason: StopReason::Unsupported
        })
    );
    assert_eq!(FlowKey::from_frame(&p).map(|k| (k.proto, k.vlan)), Some((89, Some(4))));
}

#[test]
fn test_ethernet_padding_is_not_payload() {
    // 60-byte minimum frame: UDP with no payload, 18 padding bytes.
    let mut f = cat(&[&eth(0x0800), &ipv4(17, &[], &udp(1, 2, &[]))]);
    f.resize(60, 0xee);
    let p = parse_ethernet(&f);
    assert_eq!((p.stop, p.outer.payload_offset), (None, 42));
    // A total length that ends inside the UDP header truncates it.
    f[16..18].copy_from_slice(&24u16.to_be_bytes());
    let p = parse_ethernet(&f);
    assert_eq!(
        p.stop,
        Some(ParseStop {
            layer: Layer::Udp,
            offset: 34,
            reason: StopReason::Truncated {
                needed_bytes: 8,
                available_bytes: 4
            }
        })
    );
}

#[test]
fn test_parse_ip_raw() {
    let f = udp_v4_frame();
    let p = parse_ip(&f[14..]);
    assert_eq!(
        (p.stop, p.outer.eth, p.outer.ethertype, p.outer.l3_offset),
        (None, None, 0x0800, 0)
    );
    assert_eq!(p.outer.l4.and_then(|l| l.ports()), Some((1234, 53)));
    let f = tcp_v6_frame();
    let p = parse_ip(&f[14..]);
    assert_eq!((p.stop, p.outer.ethertype), (None, 0x86dd));
    assert!(parse_ip(&[]).stop.is_some_and(|s| s.is_truncated()));
    assert!(matches!(
        parse_ip(&[0x10; 40]).stop.map(|s| s.reason),
        Some(StopReason::Malformed(_))
    ));
}

#[test]
fn test_truncated_at_every_length() {
    for (name, f) in complete_fixtures() {
        let full = parse_ethernet(&f);
        assert_eq!(full.stop, None, "{name} should parse completely");
        let headers_end = full.inner.map_or(full.outer.payload_offset, |l| l.payload_offset);
        for n in 0..f.len() {
            let p = parse_ethernet(&f[..n]);
            assert_eq!(p.frame_len, n);
            let general = FlowKey::from_frame(&p).ok_or(p.stop);
            assert_eq!(flow_key(&f[..n]).map_err(Some), general, "{name}[..{n}]");
            check_rss_fast_path(&f[..n]).unwrap_or_else(|e| panic!("{name}[..{n}]: {e}"));
            if n >= headers_end {
                assert_eq!(p.stop, None, "{name}[..{n}]");
                continue;
            }
            let stop = p.stop.unwrap_or_else(|| panic!("{name}[..{n}] parsed without stop"));
            let StopReason::Truncated {
                needed_bytes,
                available_bytes,
            } = stop.reason
            else {
                panic!("{name}[..{n}]: {stop}");
            };
            assert!(needed_bytes > available_bytes, "{name}[..{n}]: {stop}");
            assert_eq!(stop.offset + available_bytes, n, "{name}[..{n}]: {stop}");
            // What was decoded before the cut matches the full parse.
            if p.outer.eth.is_some() {
                assert_eq!(p.outer.eth, full.outer.eth);
            }
            if let Some(ip) = p.outer.ip {
                assert_eq!(
                    (ip.src(), ip.dst()),
                    (full.outer.ip.unwrap().src(), full.outer.ip.unwrap().dst())
                );
            }
        }
    }
}

#[test]
fn test_flow_headers_common_cases_and_what_they_leave_to_the_general_parser() {
    // QinQ / UDP with Ethernet padding: the outer VID, the transport bytes end at the IP length.
    let mut qinq = qinq_frame();
    qinq.extend_from_slice(&[0xee; 6]);
    let h = flow_headers(&qinq).expect("QinQ UDP");
    assert_eq!((h.vlan, h.proto, h.src_port, h.dst_port), (Some(100), 17, 1, 2));
    assert_eq!(h.l4, &udp(1, 2, &[])[..]);
    assert_eq!(&h.src[..4], &V4_SRC);
    assert_eq!(&h.src[4..], &[0; 12]);
    let tcp6 = tcp_v6_frame();
    let h = flow_headers(&tcp6).expect("TCP/IPv6");
    assert_eq!((h.v6, h.src, h.dst), (true, V6_SRC, V6_DST));
    assert_eq!(
        (h.src_port, h.dst_port, h.tcp_flags),
        (443, 50000, tcp_flags::SYN | tcp_flags::ACK)
    );
    let opts = ipv4_options_frame();
    let h = flow_headers(&opts).expect("IPv4 options");
    assert_eq!((h.tcp_flags, h.l4.len()), (tcp_flags::FIN, 20));
    let icmp4 = icmpv4_frame();
    let h = flow_headers(&icmp4).expect("ICMP");
    assert_eq!((h.icmp, h.src_port, h.l4.len()), (Some((3, 1)), 0, 9));
    let icmp6 = icmpv6_frame();
    let h = flow_headers(&icmp6).expect("ICMPv6");
    assert_eq!((h.icmp, &h.l4[4..8]), (Some((128, 0)), &[0, 1, 0, 1][..]));
    for (name, frame) in [
        ("VXLAN", vxlan_frame()),
        ("IPv6 extension headers", ipv6_ext_frame()),
        ("SCTP", sctp_frame()),
        ("GRE", gre_key_ipv4_frame()),
        ("MPLS", mpls_frame()),
        (
            "ICMPv6 over IPv4",
            cat(&[&eth(0x0800), &ipv4(58, &[], &[128, 0, 0, 0, 0, 1, 0, 1])]),
        ),
        (
            "ICMP header cut",
            cat(&[&eth(0x0800), &ipv4(1, &[], &[8, 0, 0, 0, 0, 1, 0])]),
        ),
        (
            "three VLAN tags",
            cat(&[
                &eth(0x8100),
                &vlan_tag(0, false, 1, 0x8100),
                &vlan_tag(0, false, 2, 0x8100),
                &vlan_tag(0, false, 3, 0x0800),
                &ipv4(17, &[], &udp(1, 2, &[])),
            ]),
        ),
    ] {
        assert_eq!(flow_headers(&frame), None, "{name}");
    }
    // An ICMP timestamp reply one byte longer than its 20: the general parser
    // (etherparse) rejects it as malformed, the fast path reads its type and code.
    let timestamp = cat(&[
        &eth(0x0800),
        &ipv4(
            1,
            &[],
            &[14, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9],
        ),
    ]);
    assert_eq!(flow_headers(&timestamp).map(|h| h.icmp), Some(Some((14, 0))));
    let general = parse_ethernet(&timestamp);
    assert_eq!(
        (general.outer.l4, general.stop.map(|s| s.layer)),
        (None, Some(Layer::Icmpv4))
    );
    // Any IPv4 fragment, the first one (MF) included.
    for (flags_hi, flags_lo) in [(0x20, 0), (0, 1), (0x40 | 0x01, 0)] {
        let mut frame = udp_v4_frame();
        frame[14 + 6] = flags_hi;
        frame[14 + 7] = flags_lo;
        assert_eq!(flow_headers(&frame), None, "fragment {flags_hi:#x} {flags_lo:#x}");
    }
}

// ---- property tests ---------------------------------------------------------

/// Frames shaped like real traffic, to reach deep layers when mutated.
fn arb_structured_frame() -> impl Strategy<Value = Vec<u8>> {
    (0usize..12, proptest::collection::vec(any::<u8>(), 0..40)).prop_map(|(i, tail)| {
        let mut f = complete_fixtures().swap_remove(i).1;
        f.extend_from_slice(&tail);
        f
    })
}

fn arb_mutated_frame() -> impl Strategy<Value = Vec<u8>> {
    (
        arb_structured_frame(),
        proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        any::<prop::sample::Index>(),
    )
        .prop_map(|(mut f, edits, cut)| {
            for (at, byte) in edits {
                let i = at.index(f.len());
                f[i] = byte;
            }
            let keep = cut.index(f.len() + 1);
            f.truncate(keep.max(f.len() / 2));
            f
        })
}

fn check_general_vs_fast(f: &[u8]) -> Result<(), TestCaseError> {
    let p = engine::parse(f, engine::Start::Ethernet);
    prop_assert_eq!(parse_ethernet(f), p);
    let mut fast = ParsedFrame::default();
    if fast::parse_common(f, &mut fast) {
        prop_assert_eq!(fast, p);
    }
    let general = FlowKey::from_frame(&p).ok_or(p.stop);
    let fast = flow_key(f).map_err(Some);
    prop_assert_eq!(fast, general);
    check_rss_fast_path(f)?;
    check_flow_headers(f, &p)?;
    // Offsets never point past the frame.
    for l in [Some(p.outer), p.inner].into_iter().flatten() {
        prop_assert!(l.payload_offset <= f.len());
    }
    if let Some(s) = p.stop {
        prop_assert!(s.offset <= f.len());
    }
    Ok(())
}

/// The RSS hash straight from an IPv4 frame's bytes (`ipv4_rss_fields`,
/// `rss::hash_frame`) equals the bit-by-bit hash of `flow_key`'s key, for keys of
/// the usual lengths (40 and 52 bytes) and short ones that cut the input (8 and 12), with
/// and without ports; where `ipv4_rss_fields` answers, its fields are the key's.
fn check_rss_fast_path(f: &[u8]) -> Result<(), TestCaseError> {
    use crate::rss::{hash_frame, RssFields, RssInput, Toeplitz, MICROSOFT_KEY, SYMMETRIC_KEY_52};
    let key = flow_key(f);
    if let Some(v4) = ipv4_rss_fields(f) {
        let key = key.expect("ipv4_rss_fields answered where flow_key has no key");
        let (IpAddr::V4(src), IpAddr::V4(dst)) = (key.src, key.dst) else {
            return Err(TestCaseError::fail(format!("ipv4_rss_fields answered for {key}")));
        };
        prop_assert_eq!(key.vni, None);
        prop_assert_eq!(
            (v4.addrs, v4.proto, v4.ports),
            (
                (u64::from(src.to_bits()) << 32) | u64::from(dst.to_bits()),
                key.proto,
                (u32::from(key.src_port) << 16) | u32::from(key.dst_port)
            )
        );
    }
    let short_key: [u8; 12] = MICROSOFT_KEY[7..19].try_into().unwrap();
    for rss_key in [
        &MICROSOFT_KEY[..],
        &SYMMETRIC_KEY_52[..],
        &MICROSOFT_KEY[..8],
        &short_key[..],
    ] {
        let toeplitz = Toeplitz::new(rss_key).unwrap();
        for fields in [RssFields::Ip, RssFields::IpPorts] {
            // The bit-by-bit definition over the key's Microsoft layout.
            let expected = key.map(|k| toeplitz.hash_reference(RssInput::from_flow(&k, fields).to_bytes().as_slice()));
            prop_assert_eq!(hash_frame(&toeplitz, f, fields), expected);
        }
    }
    Ok(())
}

/// The lax end of an IP packet as the general parser applies it (oracle for
/// `FlowHeaders::l4`): a length field beyond the capture or below the header
/// falls back to the capture.
fn ip_end(ip: &Ip, l3_offset: usize, frame_len: usize) -> usize {
    let available = frame_len - l3_offset;
    let (declared, header) = match ip {
        Ip::V4(h) => (usize::from(h.total_len), usize::from(h.ihl) * 4),
        Ip::V6(h) => (40 + usize::from(h.payload_len), 41),
    };
    l3_offset
        + if declared < header || declared > available {
            available
        } else {
            declared
        }
}

/// Where `flow_headers` answers, the general parser decoded the same frame
/// completely, without a tunnel or fragment, and every field agrees.
fn check_flow_headers(f: &[u8], p: &ParsedFrame) -> Result<(), TestCaseError> {
    let Some(h) = flow_headers(f) else {
        return Ok(());
    };
    let l4_at = h.l4.as_ptr() as usize - f.as_ptr() as usize;
    // The one documented difference (see `flow_headers`): etherparse also
    // requires an ICMP timestamp (request or reply, code 0) to be exactly
    // 20 bytes; the fast path reads type and code from any 8-byte ICMP header.
    let odd_timestamp = !h.v6 && matches!(h.icmp, Some((13 | 14, 0))) && h.l4.len() != 20;
    if odd_timestamp {
        prop_assert_eq!(p.stop.map(|s| (s.layer, s.offset)), Some((Layer::Icmpv4, l4_at)));
        prop_assert_eq!(p.outer.l4, None);
    } else {
        prop_assert_eq!(p.stop, None);
    }
    prop_assert_eq!(p.tunnel, None);
    let ip = p.outer.ip.expect("an IP header");
    prop_assert!(!ip.is_fragment());
    let wide = |a: IpAddr| match a {
        IpAddr::V4(a) => u128::from(u32::from_le_bytes(a.octets())).to_le_bytes(),
        IpAddr::V6(a) => a.octets(),
    };
    prop_assert_eq!(
        (h.src, h.dst, h.v6),
        (wide(ip.src()), wide(ip.dst()), ip.src().is_ipv6())
    );
    let key = FlowKey::from_frame(p).expect("a key");
    prop_assert_eq!(
        (h.proto, h.src_port, h.dst_port, h.vlan, key.vni),
        (key.proto, key.src_port, key.dst_port, key.vlan, None)
    );
    match p.outer.l4 {
        Some(L4::Tcp(t)) => prop_assert_eq!((h.tcp_flags, h.icmp), (t.flags, None)),
        Some(L4::Udp(_)) => prop_assert_eq!((h.tcp_flags, h.icmp), (0, None)),
        Some(L4::Icmpv4(i)) | Some(L4::Icmpv6(i)) => {
            prop_assert_eq!((h.tcp_flags, h.icmp), (0, Some((i.icmp_type, i.code))))
        }
        None if odd_timestamp => prop_assert_eq!(h.tcp_flags, 0),
        other => prop_assert!(false, "flow_headers answered for {:?}", other),
    }
    prop_assert_eq!(l4_at, p.outer.l4_offset);
    prop_assert_eq!(l4_at + h.l4.len(), ip_end(&ip, p.outer.l3_offset, f.len()));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn prop_random_bytes_never_panic(f in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = parse_ip(&f);
        check_general_vs_fast(&f)?;
    }

    #[test]
    fn prop_mutated_frames_never_panic_and_fast_path_agrees(f in arb_mutated_frame()) {
        let _ = parse_ip(&f);
        check_general_vs_fast(&f)?;
    }
}

/// A frame built by etherparse plus the values it was built from.
#[derive(Debug, Clone)]
struct Built {
    frame: Vec<u8>,
    vlans: Vec<u16>,
    src: IpAddr,
    dst: IpAddr,
    proto: u8,
    ports: Option<(u16, u16)>,
}

fn arb_built() -> impl Strategy<Value = Built> {
    (
        0usize..3,
        any::<(u16, u16)>(),
        any::<bool>(),
        any::<([u8; 16], [u8; 16])>(),
        0usize..4,
        any::<(u16, u16)>(),
        proptest::collection::vec(any::<u8>(), 0..64),
    )
        .prop_map(|(n_vlans, (vid_a, vid_b), is_v6, (a, b), l4, (sp, dp), payload)| {
            let vid_a = vid_a & 0x0fff;
            let vid_b = vid_b & 0x0fff;
            // UDP to port 4789 is VXLAN to the parser (an inner frame, truncated here), not
            // the plain UDP this oracle expects (~0.7% of runs drew it and failed).
            let not_vxlan = |port: u16| if port == VXLAN_UDP_PORT { port + 1 } else { port };
            let (sp, dp) = (not_vxlan(sp), not_vxlan(dp));
            let vid = |v: u16| etherparse::VlanId::try_new(v).unwrap_or(etherparse::VlanId::ZERO);
            let link = PacketBuilder::ethernet2(MAC_SRC, MAC_DST);
            let (src, dst) = if is_v6 {
                (IpAddr::V6(a.into()), IpAddr::V6(b.into()))
            } else {
                let a4 = [a[0], a[1], a[2], a[3]];
                let b4 = [b[0], b[1], b[2], b[3]];
                (IpAddr::V4(a4.into()), IpAddr::V4(b4.into()))
            };
            // The same chain with different static builder types: a macro keeps it short.
            macro_rules! finish {
                ($ip:expr) => {{
                    let mut frame = Vec::new();
                    let (proto, ports) = match l4 {
                        0 => {
                            $ip.udp(sp, dp).write(&mut frame, &payload).unwrap();
                            (17, Some((sp, dp)))
                        }
                        1 => {
                            $ip.tcp(sp, dp, 7, 1024)
                                .syn()
                                .write(&mut frame, &payload)
                                .unwrap();
                            (6, Some((sp, dp)))
                        }
                        2 if !is_v6 => {
                            $ip.icmpv4_echo_request(sp, dp)
                                .write(&mut frame, &payload)
                                .unwrap();
                            (1, None)
                        }
                        _ if is_v6 => {
                            $ip.icmpv6_echo_request(sp, dp)
                                .write(&mut frame, &payload)
                                .unwrap();
                            (58, None)
                        }
                        _ => {
                            $ip.udp(dp, sp).write(&mut frame, &payload).unwrap();
                            (17, Some((dp, sp)))
                        }
                    };
                    (frame, proto, ports)
                }};
            }
            macro_rules! ip {
                ($l:expr) => {
                    if is_v6 {
                        finish!($l.ipv6(a, b, 32))
                    } else {
                        finish!($l.ipv4([a[0], a[1], a[2], a[3]], [b[0], b[1], b[2], b[3]], 32))
                    }
                };
            }
            let (frame, proto, ports) = match n_vlans {
                0 => ip!(link),
                1 => ip!(link.single_vlan(vid(vid_a))),
                _ => ip!(link.double_vlan(vid(vid_a), vid(vid_b))),
            };
            let vlans = [vid_a, vid_b][..n_vlans].to_vec();
            Built {
                frame,
                vlans,
                src,
                dst,
                proto,
                ports,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    /// Frames built by etherparse parse back to what they were built from,
    /// agree with etherparse's own LaxSlicedPacket, and the fast path agrees.
    #[test]
    fn prop_matches_etherparse_oracle(b in arb_built()) {
        let p = parse_ethernet(&b.frame);
        prop_assert_eq!(p.stop, None);
        let vids: Vec<u16> = p.outer.vlans.iter().flatten().map(|v| v.vid).collect();
        prop_assert_eq!(&vids, &b.vlans);
        let ip = p.outer.ip.unwrap();
        prop_assert_eq!((ip.src(), ip.dst(), ip.upper_proto()), (b.src, b.dst, b.proto));
        prop_assert_eq!(p.outer.l4.and_then(|l| l.ports()), b.ports);

        let oracle = LaxSlicedPacket::from_ethernet(&b.frame).unwrap();
        prop_assert_eq!(oracle.vlan_ids().iter().map(|v| v.value()).collect::<Vec<_>>(), vids);
        let o_payload = oracle.net.as_ref().and_then(|n| n.ip_payload_ref()).unwrap();
        prop_assert_eq!(o_payload.ip_number.0, ip.upper_proto());
        // Where etherparse found the transport payload, ours starts there too.
        let o_ports = match &oracle.transport {
            Some(etherparse::TransportSlice::Udp(u)) => Some((u.source_port(), u.destination_port())),
            Some(etherparse::TransportSlice::Tcp(t)) => Some((t.source_port(), t.destination_port())),
            _ => None,
        };
        prop_assert_eq!(o_ports, b.ports);
        let o_ip_payload_at = o_payload.payload.as_ptr() as usize - b.frame.as_ptr() as usize;
        prop_assert_eq!(o_ip_payload_at, p.outer.l4_offset);

        check_general_vs_fast(&b.frame)?;
        // Every such frame but UDP to the VXLAN port takes the flow-headers fast path,
        // whose transport bytes are etherparse's IP payload.
        let headers = flow_headers(&b.frame);
        if b.ports.is_some_and(|(_, dst_port)| dst_port == VXLAN_UDP_PORT) {
            prop_assert_eq!(headers, None);
        } else {
            let h = headers.expect("common case");
            prop_assert_eq!(h.l4, o_payload.payload);
            prop_assert_eq!((h.proto, h.vlan), (b.proto, b.vlans.first().copied()));
            prop_assert_eq!(Some((h.src_port, h.dst_port)).filter(|_| b.ports.is_some()), b.ports);
        }
        let key = FlowKey::from_frame(&p).unwrap();
        prop_assert_eq!(flow_key(&b.frame), Ok(key));
        check_rss_fast_path(&b.frame)?;
        prop_assert_eq!(key.vlan, b.vlans.first().copied());
    }
}
