//! Builder tests: byte fixtures for the emitted headers, error messages, and
//! property tests (etherparse as oracle for checksums; templates patched to a
//! new size equal a fresh build; build → parse gives the spec's flow key).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use etherparse::{Ipv4HeaderSlice, Ipv6HeaderSlice, TcpHeaderSlice, UdpHeaderSlice};
use proptest::prelude::*;

use super::*;

fn v6(last: u16) -> IpAddr {
    IpAddr::V6(Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, last))
}

#[test]
fn test_emit_default_ipv4_udp_64() {
    let frame = FrameSpec::default().build().expect("default spec builds");
    assert_eq!(frame.len(), 60, "64 B frame = 60 captured bytes (no FCS)");
    #[rustfmt::skip]
    let headers: [u8; 42] = [
        // Ethernet: dst, src, IPv4
        0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x00,
        // IPv4: ver/ihl, tos, total 46, id 0, DF, ttl 64, UDP, checksum, src, dst
        0x45, 0x00, 0x00, 46, 0x00, 0x00, 0x40, 0x00, 64, 17, 0x26, 0xbd,
        10, 0, 0, 1, 10, 0, 0, 2,
        // UDP: 1024 -> 1024, length 26, checksum
        0x04, 0x00, 0x04, 0x00, 0x00, 26, 0xe3, 0xb7,
    ];
    // Checksums computed by hand (ones' complement sums); also cross-checked
    // against etherparse's own calculation.
    let ip = Ipv4HeaderSlice::from_slice(&frame[14..]).expect("ipv4");
    assert_eq!(ip.header_checksum(), ip.to_header().calc_header_checksum());
    assert_eq!(&frame[..42], &headers[..]);
    assert!(frame[42..].iter().all(|&b| b == 0), "payload is zero-filled");
}

#[test]
fn test_header_lengths() {
    let base = FrameSpec::default();
    assert_eq!(base.header_len_bytes(), 42);
    let v6_tcp_vxlan = FrameSpec {
        ip_src: v6(1),
        ip_dst: v6(2),
        l4: L4Spec::tcp(1, 2, TcpFlags::SYN),
        vxlan: Some(VxlanSpec::new(7)),
        ..base
    };
    assert_eq!(v6_tcp_vxlan.header_len_bytes(), 124);
    assert_eq!(v6_tcp_vxlan.min_frame_size_bytes(), 128);
    let qinq = FrameSpec {
        vlan: VlanTags::Double { outer: 1, inner: 2 },
        ..base
    };
    assert_eq!(qinq.header_len_bytes(), 50);
    assert_eq!(qinq.min_frame_size_bytes(), 64);
}

#[test]
fn test_too_small_names_both_numbers() {
    let spec = FrameSpec {
        ip_src: v6(1),
        ip_dst: v6(2),
        l4: L4Spec::tcp(1, 2, TcpFlags::ACK),
        vxlan: Some(VxlanSpec::new(7)),
        ..FrameSpec::default()
    };
    let err = spec.build().unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.starts_with("64 B frame cannot hold IPv6+TCP+VXLAN headers (124 B)"),
        "{msg}"
    );
    assert!(msg.contains("128 B"), "{msg}");
    assert!(FrameSpec {
        frame_size_bytes: 128,
        ..spec
    }
    .build()
    .is_ok());
}

#[test]
fn test_invalid_fields_are_errors() {
    let base = FrameSpec::default();
    for size in [0, 63, 9019, u32::MAX] {
        assert_eq!(
            FrameSpec {
                frame_size_bytes: size,
                ..base
            }
            .build(),
            Err(BuildError::FrameSizeOutOfRange { frame_size_bytes: size })
        );
    }
    assert!(matches!(
        FrameSpec { ip_dst: v6(2), ..base }.build(),
        Err(BuildError::MixedIpFamilies { .. })
    ));
    assert_eq!(
        FrameSpec {
            vlan: VlanTags::Single(4096),
            ..base
        }
        .build(),
        Err(BuildError::VlanIdOutOfRange(4096))
    );
    assert_eq!(
        FrameSpec {
            vxlan: Some(VxlanSpec::new(1 << 24)),
            ..base
        }
        .build(),
        Err(BuildError::VniOutOfRange(1 << 24))
    );
    assert_eq!(
        FrameSpec {
            frame_size_bytes: 9018,
            ..base
        }
        .build()
        .map(|f| f.len()),
        Ok(9014)
    );
}

#[test]
fn test_emit_qinq_tpids() {
    let spec = FrameSpec {
        vlan: VlanTags::Double { outer: 100, inner: 200 },
        ..FrameSpec::default()
    };
    let f = spec.build().expect("builds");
    assert_eq!(&f[12..22], &[0x88, 0xa8, 0x00, 100, 0x81, 0x00, 0x00, 200, 0x08, 0x00]);
    assert_eq!(spec.flow_key().vlan, Some(100));
}

#[test]
fn test_emit_vxlan_layout() {
    let spec = FrameSpec {
        vlan: VlanTags::Single(42),
        vxlan: Some(VxlanSpec {
            vni: 0x123456,
            ..VxlanSpec::new(0)
        }),
        frame_size_bytes: 128,
        ..FrameSpec::default()
    };
    let f = spec.build().expect("builds");
    assert_eq!(f.len(), 124);
    // Outer: Ethernet + tag 42 + IPv4 (total = 124 - 18) + UDP → 4789 with zero checksum.
    assert_eq!(&f[12..18], &[0x81, 0x00, 0x00, 42, 0x08, 0x00]);
    let outer_ip = Ipv4HeaderSlice::from_slice(&f[18..]).expect("outer ipv4");
    assert_eq!(outer_ip.total_len(), 106);
    assert_eq!(outer_ip.header_checksum(), outer_ip.to_header().calc_header_checksum());
    let outer_udp = UdpHeaderSlice::from_slice(&f[38..]).expect("outer udp");
    assert_eq!(
        (outer_udp.destination_port(), outer_udp.length(), outer_udp.checksum()),
        (4789, 86, 0)
    );
    assert_eq!(&f[46..54], &[0x08, 0, 0, 0, 0x12, 0x34, 0x56, 0]);
    // Inner frame: untagged Ethernet then IPv4/UDP with a valid UDP checksum.
    assert_eq!(&f[66..68], &[0x08, 0x00]);
    let inner_ip = Ipv4HeaderSlice::from_slice(&f[68..]).expect("inner ipv4");
    assert_eq!(inner_ip.total_len(), 124 - 68);
    let inner_udp = UdpHeaderSlice::from_slice(&f[88..]).expect("inner udp");
    let payload = &f[96..];
    let expect = inner_udp
        .to_header()
        .calc_checksum_ipv4(&inner_ip.to_header(), payload)
        .expect("csum");
    assert_eq!(inner_udp.checksum(), expect);
    let key = spec.flow_key();
    assert_eq!((key.vlan, key.vni), (Some(42), Some(0x123456)));
}

#[test]
fn test_emit_tcp_flags_and_tos() {
    let spec = FrameSpec {
        ip_src: v6(1),
        ip_dst: v6(2),
        tos: 0xb8, // DSCP EF
        ttl: 3,
        l4: L4Spec::tcp(80, 443, TcpFlags::SYN | TcpFlags::ACK),
        frame_size_bytes: 100,
        ..FrameSpec::default()
    };
    let f = spec.build().expect("builds");
    let ip = Ipv6HeaderSlice::from_slice(&f[14..]).expect("ipv6");
    assert_eq!(
        (ip.traffic_class(), ip.hop_limit(), ip.payload_length()),
        (0xb8, 3, 96 - 54)
    );
    let tcp = TcpHeaderSlice::from_slice(&f[54..]).expect("tcp");
    assert!(tcp.syn() && tcp.ack() && !tcp.fin() && !tcp.rst());
    let expect = tcp
        .to_header()
        .calc_checksum_ipv6(&ip.to_header(), &f[74..])
        .expect("csum");
    assert_eq!(tcp.checksum(), expect);
}

#[test]
fn test_checksum_replace_rfc1624_example() {
    // RFC 1624 §4: HC = 0xDD2F, m = 0x5555 → m' = 0x3285 gives HC' = 0x0000.
    assert_eq!(template::checksum_replace(0xDD2F, 0x5555, 0x3285), 0x0000);
    // Replacing a word by itself changes nothing.
    assert_eq!(template::checksum_replace(0x1234, 0x0042, 0x0042), 0x1234);
}

#[test]
fn test_template_errors() {
    let t = FrameTemplate::new(&FrameSpec::default()).expect("template");
    let mut small = [0u8; 10];
    assert_eq!(
        t.write_headers(64, &mut small),
        Err(BuildError::BufferTooSmall {
            needed_bytes: 60,
            got_bytes: 10
        })
    );
    let mut buf = [0u8; 200];
    assert_eq!(
        t.write_headers(63, &mut buf),
        Err(BuildError::FrameSizeOutOfRange { frame_size_bytes: 63 })
    );
    let vx = FrameSpec {
        vxlan: Some(VxlanSpec::new(1)),
        frame_size_bytes: 200,
        ..FrameSpec::default()
    };
    let tv = FrameTemplate::new(&vx).expect("template");
    assert!(matches!(
        tv.write_headers(64, &mut buf),
        Err(BuildError::FrameTooSmall { header_bytes: 92, .. })
    ));
    // A set must be one shape.
    let specs = [
        FrameSpec::default(),
        FrameSpec {
            l4: L4Spec::tcp(1, 2, TcpFlags::SYN),
            ..FrameSpec::default()
        },
    ];
    assert!(matches!(
        TemplateSet::new(&specs),
        Err(BuildError::ShapeMismatch { index: 1 })
    ));
    assert!(matches!(
        TemplateSet::new(&[]),
        Err(BuildError::ShapeMismatch { index: 0 })
    ));
    let set = TemplateSet::new(&specs[..1]).expect("set");
    assert_eq!(
        set.write_headers(1, 64, &mut buf),
        Err(BuildError::IndexOutOfRange { index: 1 })
    );
}

prop_compose! {
    fn arb_spec()(
        ipv6 in any::<bool>(),
        a in any::<u32>(), b in any::<u32>(),
        ttl in any::<u8>(), tos in any::<u8>(),
        l4_kind in 0u8..3, sp in any::<u16>(), dp in any::<u16>(), flags in any::<u8>(),
        vlan_kind in 0u8..3, vid1 in 0u16..4096, vid2 in 0u16..4096,
        vni in prop::option::of(0u32..=MAX_VNI), vx_port in any::<u16>(),
        size in 64u32..=1518,
    ) -> FrameSpec {
        let (ip_src, ip_dst) = if ipv6 {
            (IpAddr::V6(Ipv6Addr::from(u128::from(a) << 64 | 0xfd00)), IpAddr::V6(Ipv6Addr::from(u128::from(b))))
        } else {
            (IpAddr::V4(Ipv4Addr::from(a)), IpAddr::V4(Ipv4Addr::from(b)))
        };
        let l4 = match l4_kind {
            0 => L4Spec::udp(sp, dp),
            1 => L4Spec::Tcp { src_port: sp, dst_port: dp, flags: TcpFlags(flags), seq: a, ack: b, window: sp },
            _ => L4Spec::IcmpEcho { id: sp, seq: dp },
        };
        let vlan = match vlan_kind {
            0 => VlanTags::None,
            1 => VlanTags::Single(vid1),
            _ => VlanTags::Double { outer: vid1, inner: vid2 },
        };
        let vxlan = vni.map(|vni| VxlanSpec { vni, outer_src_port: vx_port, ..VxlanSpec::new(0) });
        let spec = FrameSpec { ip_src, ip_dst, ttl, tos, l4, vlan, vxlan, frame_size_bytes: 64, ..FrameSpec::default() };
        FrameSpec { frame_size_bytes: size.max(spec.min_frame_size_bytes()), ..spec }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// A template built at one size and emitted at another is byte-identical
    /// to what etherparse builds at that size (lengths and all checksums).
    #[test]
    fn prop_template_patch_equals_fresh_build(spec in arb_spec(), other in 64u32..=9018) {
        let other = other.max(spec.min_frame_size_bytes());
        let template = FrameTemplate::new(&spec).expect("valid spec");
        let fresh = FrameSpec { frame_size_bytes: other, ..spec }.build().expect("valid spec");
        let mut out = vec![0xAAu8; 9014];
        let n = template.write_frame(other, &mut out).expect("fits");
        prop_assert_eq!(&out[..n], &fresh[..]);
        let set = TemplateSet::new(&[spec, spec]).expect("same shape");
        let mut out2 = vec![0u8; 9014];
        let n2 = set.write_headers(1, other, &mut out2).expect("fits");
        prop_assert_eq!(&out2[..n2], &fresh[..]);
    }

    /// Build → parse yields the spec's flow key.
    #[test]
    fn prop_build_parse_round_trip(spec in arb_spec()) {
        let frame = spec.build().expect("valid spec");
        prop_assert_eq!(frame.len(), captured_len(spec.frame_size_bytes));
        let key = crate::parse::flow_key(&frame);
        prop_assert_eq!(key, Ok(spec.flow_key()));
    }
}

#[test]
fn test_wire_overhead_is_ieee_802_3_preamble_sfd_and_gap() {
    // 64 B frames at 10 Gb/s: 14,880,952 frames per second (84 B of line time each).
    assert_eq!(WIRE_OVERHEAD_BYTES, 20);
    assert_eq!(wire_bytes(64), 84);
    assert_eq!(10_000_000_000 / (wire_bytes(64) * 8), 14_880_952);
}
