//! Round trips through the frame builder: `FrameSpec` → bytes → `ParsedFrame`
//! gives back every field the spec set (and the spec's own flow key).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use proptest::prelude::*;

use super::*;
use crate::builder::{captured_len, FrameSpec, L4Spec, TcpFlags, VlanTags, VxlanSpec};
use crate::FlowKey;

const MAX_VNI: u32 = (1 << 24) - 1;

prop_compose! {
    fn arb_spec()(
        ipv6 in any::<bool>(),
        a in any::<u128>(), b in any::<u128>(),
        macs in any::<([u8; 6], [u8; 6])>(),
        ttl in any::<u8>(), tos in any::<u8>(),
        l4_kind in 0u8..3, sp in any::<u16>(), dp in any::<u16>(), flags in any::<u8>(),
        seq in any::<(u32, u32)>(),
        vlan_kind in 0u8..3, vid1 in 0u16..4096, vid2 in 0u16..4096,
        vxlan in prop::option::of((0u32..=MAX_VNI, any::<u16>(), any::<(u32, u32)>(), 1u8..=255)),
        size in 64u32..=1518,
    ) -> FrameSpec {
        let (ip_src, ip_dst) = if ipv6 {
            (IpAddr::V6(Ipv6Addr::from(a)), IpAddr::V6(Ipv6Addr::from(b)))
        } else {
            (IpAddr::V4(Ipv4Addr::from(a as u32)), IpAddr::V4(Ipv4Addr::from(b as u32)))
        };
        let l4 = match l4_kind {
            0 => L4Spec::udp(sp, dp),
            1 => L4Spec::Tcp { src_port: sp, dst_port: dp, flags: TcpFlags(flags), seq: seq.0, ack: seq.1, window: dp },
            _ => L4Spec::IcmpEcho { id: sp, seq: dp },
        };
        let vlan = match vlan_kind {
            0 => VlanTags::None,
            1 => VlanTags::Single(vid1),
            _ => VlanTags::Double { outer: vid1, inner: vid2 },
        };
        let vxlan = vxlan.map(|(vni, port, (vtep_a, vtep_b), outer_ttl)| VxlanSpec {
            vni,
            outer_src_port: port,
            outer_ip_src: Ipv4Addr::from(vtep_a),
            outer_ip_dst: Ipv4Addr::from(vtep_b),
            outer_ttl,
            ..VxlanSpec::new(0)
        });
        let spec = FrameSpec {
            eth_src: macs.0, eth_dst: macs.1, ip_src, ip_dst, ttl, tos, l4, vlan, vxlan,
            frame_size_bytes: 64,
        };
        FrameSpec { frame_size_bytes: size.max(spec.min_frame_size_bytes()), ..spec }
    }
}

fn check_round_trip(spec: &FrameSpec) -> Result<(), TestCaseError> {
    let frame = spec.build().expect("valid spec");
    let p = parse_ethernet(&frame);
    prop_assert_eq!(p.stop, None);
    prop_assert_eq!(p.frame_len, captured_len(spec.frame_size_bytes));

    // VLAN tags sit on the outermost Ethernet header.
    let tags = p.outer.vlans.map(|v| v.map(|v| (v.tpid, v.vid)));
    let expected_tags = match spec.vlan {
        VlanTags::None => [None, None],
        VlanTags::Single(vid) => [Some((0x8100, vid)), None],
        VlanTags::Double { outer, inner } => [Some((0x88a8, outer)), Some((0x8100, inner))],
    };
    prop_assert_eq!(tags, expected_tags);

    let flow = match spec.vxlan {
        None => {
            prop_assert_eq!(p.tunnel, None);
            p.outer
        }
        Some(vx) => {
            prop_assert_eq!(
                p.tunnel,
                Some(Tunnel::Vxlan {
                    vni: vx.vni,
                    flags: 0x08
                })
            );
            let outer_eth = p.outer.eth.unwrap();
            prop_assert_eq!((outer_eth.src, outer_eth.dst), (vx.outer_eth_src, vx.outer_eth_dst));
            let Some(Ip::V4(outer_ip)) = p.outer.ip else {
                return Err(TestCaseError::fail("outer not IPv4"));
            };
            prop_assert_eq!(
                (outer_ip.src, outer_ip.dst, outer_ip.ttl),
                (vx.outer_ip_src, vx.outer_ip_dst, vx.outer_ttl)
            );
            prop_assert_eq!(
                p.outer.l4.and_then(|l| l.ports()),
                Some((vx.outer_src_port, VXLAN_UDP_PORT))
            );
            let inner = p.inner.expect("inner frame");
            prop_assert_eq!(inner.vlan_count, 0);
            inner
        }
    };
    let eth = flow.eth.unwrap();
    prop_assert_eq!((eth.src, eth.dst), (spec.eth_src, spec.eth_dst));
    let ip = flow.ip.unwrap();
    prop_assert_eq!((ip.src(), ip.dst()), (spec.ip_src, spec.ip_dst));
    match ip {
        Ip::V4(h) => prop_assert_eq!((h.ttl, h.tos), (spec.ttl, spec.tos)),
        Ip::V6(h) => prop_assert_eq!((h.hop_limit, h.traffic_class), (spec.ttl, spec.tos)),
    }
    let l4 = flow.l4.unwrap();
    match (spec.l4, l4) {
        (L4Spec::Udp { src_port, dst_port }, L4::Udp(u)) => {
            prop_assert_eq!((u.src_port, u.dst_port), (src_port, dst_port));
        }
        (
            L4Spec::Tcp {
                src_port,
                dst_port,
                flags,
                seq,
                ack,
                window,
            },
            L4::Tcp(t),
        ) => {
            prop_assert_eq!((t.src_port, t.dst_port, t.flags), (src_port, dst_port, flags.0));
            prop_assert_eq!((t.seq, t.ack, t.window), (seq, ack, window));
        }
        (L4Spec::IcmpEcho { .. }, L4::Icmpv4(i)) => prop_assert_eq!((i.icmp_type, i.code), (8, 0)),
        (L4Spec::IcmpEcho { .. }, L4::Icmpv6(i)) => prop_assert_eq!((i.icmp_type, i.code), (128, 0)),
        (want, got) => return Err(TestCaseError::fail(format!("L4 {want:?} parsed as {got:?}"))),
    }
    prop_assert_eq!(FlowKey::from_frame(&p), Some(spec.flow_key()));
    prop_assert_eq!(flow_key(&frame), Ok(spec.flow_key()));
    Ok(())
}

#[test]
fn test_default_spec_round_trip() {
    check_round_trip(&FrameSpec::default()).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn prop_build_parse_same_fields(spec in arb_spec()) {
        check_round_trip(&spec)?;
    }
}
