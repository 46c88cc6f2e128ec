//! Values worked out by hand from OVS 3.1's behaviour (lib/tnl-ports.c, `tnl_wc_init`,
//! `netdev-native-tnl.c`); the whole path against real OVS is in the Python peer tests.

use super::*;
use crate::vswitch::key::tests::ipv4_frame;

fn underlay() -> Underlay {
    Underlay {
        port: "p0".into(),
        dp_port: 1,
        bridge_dp_port: 2,
        ip: Ipv4Addr::new(172, 31, 1, 1),
        mac: "aa:55:aa:55:00:00".into(),
    }
}

/// An outer Ethernet/IPv4/UDP/VXLAN frame around `inner`, to the underlay's MAC and IP.
pub(crate) fn vxlan_frame(vni: u32, udp_dst: u16, tos: u8, csum: u16, inner: &[u8]) -> Vec<u8> {
    let mut f = vec![0xaa, 0x55, 0xaa, 0x55, 0, 0, 0xaa, 0x55, 0xaa, 0x55, 0, 2, 0x08, 0x00];
    let total = (20 + 8 + 8 + inner.len()) as u16;
    f.extend_from_slice(&[0x45, tos, (total >> 8) as u8, total as u8, 0, 1, 0x40, 0, 64, 17, 0, 0]);
    f.extend_from_slice(&[172, 31, 1, 2, 172, 31, 1, 1]);
    f.extend_from_slice(&5555u16.to_be_bytes());
    f.extend_from_slice(&udp_dst.to_be_bytes());
    f.extend_from_slice(&(total - 20).to_be_bytes());
    f.extend_from_slice(&csum.to_be_bytes());
    f.extend_from_slice(&[0x08, 0, 0, 0]);
    f.extend_from_slice(&(vni << 8).to_be_bytes());
    f.extend_from_slice(inner);
    f
}

#[test]
fn test_parse_vxlan_reads_the_outer_headers() {
    let inner = ipv4_frame([10, 0, 0, 1], [20, 0, 0, 1], 6, 1000, 80, None);
    let f = vxlan_frame(0x64, 4789, 0x20, 0xbeef, &inner);
    let d = parse_vxlan(&f, 4789).expect("vxlan");
    assert_eq!(
        (d.vni, d.src, d.dst, d.tos, d.csum),
        (0x64, 0xac1f_0102, 0xac1f_0101, 0x20, true)
    );
    assert_eq!(d.inner, &inner[..]);
    assert!(parse_vxlan(&inner, 4789).is_none(), "a TCP frame is no VXLAN frame");
    // A tunnel port on another UDP port (options:dst_port) decapsulates what the underlay popped
    // for it; the same frame is no VXLAN to 4789.
    let other = vxlan_frame(0x64, 4790, 0, 0, &inner);
    assert_eq!(parse_vxlan(&other, 4790).map(|d| d.vni), Some(0x64));
    assert!(parse_vxlan(&other, 4789).is_none());
    // VLAN-tagged underlay frames are not modelled: no decap.
    let mut tagged = f[..12].to_vec();
    tagged.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
    tagged.extend_from_slice(&f[12..]);
    assert!(nicbench_wire::parse::decapsulate_vxlan(&tagged, 4789).is_some());
    assert!(parse_vxlan(&tagged, 4789).is_none());
}

fn walk(u: &mut UnderlayBridge, frame: &[u8]) -> (Fields, Vec<DpAction>) {
    u.xlate(&key::flow_key(frame, 1))
}

#[test]
fn test_underlay_pops_vxlan_to_its_ip_and_unwildcards_the_stages_reached() {
    use OfField::*;
    let mut u = UnderlayBridge::new(&underlay(), &[4789]).expect("underlay");
    let inner = ipv4_frame([10, 0, 0, 1], [20, 0, 0, 1], 6, 1000, 80, None);
    let (wc, actions) = walk(&mut u, &vxlan_frame(100, 4789, 0, 0, &inner));
    assert_eq!(
        actions,
        vec![DpAction::Tunnel {
            text: "tnl_pop(4789)".into()
        }]
    );
    assert_eq!(
        (wc[NwDst], wc[NwProto], wc[TpDst], wc[NwSrc]),
        (0xffff_ffff, 0xff, 0xffff, 0)
    );
    // UDP to 53: the ports trie needs 4 bits to tell 53 (0x0035) from 4789 (0x12b5).
    let mut dns = vxlan_frame(100, 53, 0, 0, &inner);
    dns.truncate(14 + 20 + 8);
    let (wc, actions) = walk(&mut u, &dns);
    assert_eq!(actions, vec![DpAction::Output { port: 2 }]);
    assert_eq!((wc[NwDst], wc[TpDst]), (0xffff_ffff, 0xf000));
    // TCP to the endpoint: the L3 stage misses on nw_proto; no port bits.
    let tcp = ipv4_frame([172, 31, 1, 2], [172, 31, 1, 1], 6, 5, 4789, None);
    let mut tcp_to_us = tcp.clone();
    tcp_to_us[..6].copy_from_slice(&[0xaa, 0x55, 0xaa, 0x55, 0, 0]);
    let (wc, _) = walk(&mut u, &tcp_to_us);
    assert_eq!((wc[NwDst], wc[NwProto], wc[TpDst]), (0xffff_ffff, 0xff, 0));
    // Another destination MAC: the L2 stage misses, no IP bits at all.
    let (wc, actions) = walk(&mut u, &tcp);
    assert_eq!((wc[NwDst], wc[NwProto], wc[DlDst]), (0, 0, 0xffff_ffff_ffff));
    assert_eq!(actions, vec![DpAction::Output { port: 2 }]);
}

#[test]
fn test_overlay_key_and_its_printed_tunnel_metadata() {
    use OfField::*;
    let inner = ipv4_frame([10, 0, 0, 1], [20, 0, 0, 1], 6, 1000, 80, None);
    let f = vxlan_frame(0x65, 4789, 0x20, 0, &inner);
    let k = overlay_key(&parse_vxlan(&f, 4789).expect("vxlan"), 2);
    let mut wc = Fields::default();
    tunnel_wildcards(&k, &mut wc);
    assert_eq!(wc[NwTos], 0, "ECN of the outer header is not CE");
    let mut flow = DpFlow {
        keys: vec![
            nicbench_rules::openflow::FieldMatch {
                field: TunId,
                value: k[TunId],
                mask: wc[TunId],
            },
            nicbench_rules::openflow::FieldMatch {
                field: TunDst,
                value: k[TunDst] & wc[TunDst],
                mask: wc[TunDst],
            },
        ],
        ..DpFlow::default()
    };
    print_tunnel_meta(&mut flow);
    assert_eq!(flow.keys[1].value, 0xac1f_0101);
    assert_eq!(flow.keys[1].mask, 0xffff_ffff);
    assert_eq!(
        flow.other_keys,
        vec!["tunnel(tos=0x20,flags(-df-csum+key))".to_string()]
    );
    // Outer ECN CE: the inner ECN bits are consulted.
    let ce = overlay_key(
        &parse_vxlan(&vxlan_frame(1, 4789, 0x03, 1, &inner), 4789).expect("vxlan"),
        2,
    );
    let mut wc = Fields::default();
    tunnel_wildcards(&ce, &mut wc);
    assert_eq!(wc[NwTos], 0x03);
}

#[test]
fn test_push_header_as_ovs_prints_it() {
    let u = UnderlayBridge::new(&underlay(), &[4789]).expect("underlay");
    let port = VxlanOptions {
        remote_ip: Ipv4Addr::new(172, 31, 1, 2),
        key: None,
        dst_port: 4789,
        remote_mac: "aa:55:aa:55:00:02".into(),
    };
    // OVS 3.1, dummy datapath, `set_tunnel:100,output:vx` (recorded from dpctl/dump-flows).
    assert_eq!(
        u.push_text(&port, 0xaa55_aa55_0002, 100, Some(0)),
        "tnl_push(tnl_port(4789),header(size=50,type=4,eth(dst=aa:55:aa:55:00:02,src=aa:55:aa:55:00:00,\
         dl_type=0x0800),ipv4(src=172.31.1.1,dst=172.31.1.2,proto=17,tos=0,ttl=64,frag=0x4000),udp(src=0,\
         dst=4789,csum=0x0),vxlan(flags=0x8000000,vni=0x64)),out_port(2))"
    );
    // A fixed key wins over tun_id; inner CE becomes ECT(0) outside.
    let fixed = VxlanOptions { key: Some(7), ..port };
    let text = u.push_text(&fixed, 0, 100, Some(3));
    assert!(text.contains("vni=0x7") && text.contains("tos=0x2,"), "{text}");
}
