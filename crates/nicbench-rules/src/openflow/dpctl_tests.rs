//! Datapath flow syntax: lines printed by OVS 3.1's userspace datapath (`dpctl/dump-flows`
//! and `-m --no-names`, captured from a dummy-port bridge, VXLAN with native tunnelling)
//! parse, and are written back byte for byte.

use super::*;

/// Real `dpctl/dump-flows` output (OVS 3.1, userspace datapath).
const DUMP: &str = "flow-dump from the main thread:
recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x0800),ipv4(src=10.0.0.2/255.0.0.0,frag=no), packets:0, bytes:0, used:never, actions:2
recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x8100),vlan(vid=5,pcp=3),encap(eth_type(0x0800),ipv4(src=11.0.0.2/255.0.0.0,frag=no)), packets:0, bytes:0, used:never, actions:pop_vlan,2
ct_state(+new-est+trk),ct_zone(0x5),ct_mark(0x10/0xff),recirc_id(0x1),in_port(1),eth(src=00:00:00:00:00:01/ff:ff:00:00:00:00),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.0/255.255.255.0,proto=6,tos=0x4/0xfc,ttl=64,frag=no),tcp(src=80,dst=80/0xfff0),tcp_flags(-fin+syn+ack), packets:0, bytes:0, used:never, actions:1
recirc_id(0),in_port(1),eth(),eth_type(0x0800),ipv4(proto=1,frag=no),icmp(type=8,code=0), packets:0, bytes:0, used:never, actions:2
recirc_id(0),in_port(2),eth(),eth_type(0x8100),vlan(vid=5/0xf,pcp=2),encap(eth_type(0x86dd),ipv6(src=2001:db8::1,dst=2001:db8::/ffff:ffff::,proto=17,frag=first),udp(src=1)), packets:0, bytes:0, used:never, actions:push_vlan(vid=7,pcp=1),1,2
recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x0800),ipv4(tos=0/0x3,frag=no), packets:0, bytes:0, used:never, actions:tnl_push(tnl_port(4789),header(size=50,type=4,eth(dst=f8:bc:12:44:34:b6,src=22:48:fb:f8:e0:4b,dl_type=0x0800),ipv4(src=1.1.2.88,dst=1.1.2.92,proto=17,tos=0,ttl=64,frag=0x4000),udp(src=0,dst=4789,csum=0x0),vxlan(flags=0x8000000,vni=0x2a)),out_port(100)),3
tunnel(tun_id=0x2a,src=1.1.2.92,dst=1.1.2.88,flags(-df-csum+key)),recirc_id(0),in_port(4789),packet_type(ns=0,id=0),eth_type(0x0800),ipv4(frag=no), packets:0, bytes:0, used:never, actions:1
recirc_id(0),in_port(3),packet_type(ns=0,id=0),eth(src=f8:bc:12:44:34:b6,dst=22:48:fb:f8:e0:4b),eth_type(0x0800),ipv4(dst=1.1.2.88,proto=17,frag=no),udp(dst=4789), packets:0, bytes:0, used:never, actions:tnl_pop(4789)
";

/// The same flows as `dpctl/dump-flows -m --no-names` prints them.
const DUMP_VERBOSE: &str = "ufid:f16948cb-7e53-460d-897d-f8e3e52f907c, skb_priority(0/0),skb_mark(0/0),ct_state(0x21/0x23),ct_zone(0x5),ct_mark(0x10/0xff),ct_label(0/0),recirc_id(0x1),dp_hash(0/0),in_port(1),packet_type(ns=0/0,id=0/0),eth(src=00:00:00:00:00:01/ff:ff:00:00:00:00,dst=00:00:00:00:00:00/00:00:00:00:00:00),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.0/255.255.255.0,proto=6,tos=0x4/0xfc,ttl=64,frag=no),tcp(src=80,dst=80/0xfff0),tcp_flags(-fin+syn+ack), packets:0, bytes:0, used:never, dp:ovs, actions:1, dp-extra-info:miniflow_bits(5,4)
ufid:c582c4b4-db61-4b73-95e9-e88468dc3292, skb_priority(0/0),tunnel(tun_id=0x2a,src=1.1.2.92,dst=1.1.2.88,ttl=64/0,tp_src=51283/0,tp_dst=4789/0,flags(-df-csum+key)),skb_mark(0/0),ct_state(0/0),ct_zone(0/0),ct_mark(0/0),ct_label(0/0),recirc_id(0),dp_hash(0/0),in_port(4789),packet_type(ns=0,id=0),eth(src=50:54:00:00:00:09/00:00:00:00:00:00,dst=50:54:00:00:00:05/00:00:00:00:00:00),eth_type(0x0800),ipv4(src=10.0.0.9/0.0.0.0,dst=10.0.0.2/0.0.0.0,proto=17/0,tos=0/0,ttl=64/0,frag=no),udp(src=8/0,dst=9/0), packets:0, bytes:0, used:never, dp:ovs, actions:1, dp-extra-info:miniflow_bits(8,1)
ufid:49d9d0e3-4fdd-465c-8168-14c0edab4a7b, skb_priority(0/0),skb_mark(0/0),ct_state(0/0),ct_zone(0/0),ct_mark(0/0),ct_label(0/0),recirc_id(0),dp_hash(0/0),in_port(2),packet_type(ns=0/0,id=0/0),eth(src=00:00:00:00:00:00/00:00:00:00:00:00,dst=00:00:00:00:00:00/00:00:00:00:00:00),eth_type(0x8100),vlan(vid=5/0xf,pcp=2),encap(eth_type(0x86dd),ipv6(src=2001:db8::1,dst=2001:db8::/ffff:ffff::,label=0/0,proto=17,tclass=0/0,hlimit=0/0,frag=first),udp(src=1,dst=0/0)), packets:0, bytes:0, used:never, dp:ovs, actions:push_vlan(vid=7,pcp=1),1,2, dp-extra-info:miniflow_bits(3,5)
";

fn fm(field: OfField, value: u128, mask: u128) -> FieldMatch {
    FieldMatch { field, value, mask }
}

#[test]
fn test_real_dump_writes_back_identically() {
    for text in [DUMP, DUMP_VERBOSE] {
        let flows = parse_dp_flows(text, "dump.txt").unwrap();
        let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with("flow-dump")).collect();
        assert_eq!(flows.len(), lines.len());
        for (f, line) in flows.iter().zip(lines) {
            let written = dp_flow_to_string(f).unwrap();
            if text == DUMP {
                assert_eq!(written, line);
            }
            // -m prints wildcarded fields (`/0`), which nicbench drops: the same flow.
            assert_eq!(&parse_dp_flow(&written).unwrap(), f, "{line}\n -> {written}");
        }
    }
}

#[test]
fn test_keys_and_actions_read() {
    let flows = parse_dp_flows(DUMP, "dump.txt").unwrap();
    let f = &flows[0];
    assert_eq!(
        f.keys,
        vec![
            fm(OfField::RecircId, 0, 0xffff_ffff),
            fm(OfField::InPort, 1, 0xffff_ffff),
            fm(OfField::DlType, 0x0800, 0xffff),
            fm(OfField::NwSrc, 0x0a00_0002, 0xff00_0000),
            fm(OfField::NwFrag, 0, 3),
        ]
    );
    assert_eq!(f.masked_keys()[3], fm(OfField::NwSrc, 0x0a00_0000, 0xff00_0000));
    assert_eq!(f.other_keys, vec!["packet_type(ns=0,id=0)".to_string()]);
    assert_eq!((f.packets, f.used.as_deref()), (0, Some("never")));
    assert_eq!(f.actions, vec![DpAction::Output { port: 2 }]);
    // VLAN: TCI with CFI, the inner eth_type is the flow's dl_type.
    let v = &flows[1];
    assert!(v.keys.contains(&fm(OfField::VlanTci, 0x7005, 0xffff)));
    assert!(v.keys.contains(&fm(OfField::DlType, 0x0800, 0xffff)));
    assert_eq!(v.actions, vec![DpAction::PopVlan, DpAction::Output { port: 2 }]);
    let c = &flows[2];
    assert!(c.keys.contains(&fm(OfField::CtState, 0x21, 0x23)));
    assert!(c.keys.contains(&fm(OfField::TcpFlags, 0x12, 0x13)));
    assert!(c.keys.contains(&fm(OfField::TpDst, 80, 0xfff0)));
    assert!(flows[3].keys.contains(&fm(OfField::TpSrc, 8, 0xff)));
    assert_eq!(flows[3].other_keys, vec!["eth()".to_string()]);
    let v6 = &flows[4];
    assert!(v6.keys.contains(&fm(OfField::VlanTci, 0x5005, 0xf00f)));
    assert!(v6.keys.contains(&fm(OfField::NwFrag, 1, 3)));
    assert_eq!(
        v6.actions[0],
        DpAction::PushVlan {
            tpid: 0x8100,
            tci: 0x3007
        }
    );
    // Verbose: same keys; ufid, dp and the extra info kept.
    let verbose = parse_dp_flows(DUMP_VERBOSE, "v.txt").unwrap();
    assert_eq!(verbose[0].keys, flows[2].keys);
    assert_eq!(verbose[1].keys, flows[6].keys);
    assert_eq!(verbose[2].keys, flows[4].keys);
    // VXLAN (real userspace native tunnelling): the decapsulated flow matches the tunnel.
    let tun = &flows[6];
    assert!(tun.keys.contains(&fm(OfField::TunId, 0x2a, u64::MAX as u128)));
    assert!(tun.keys.contains(&fm(OfField::TunSrc, 0x0101_025c, 0xffff_ffff)));
    assert_eq!(
        tun.other_keys,
        vec![
            "tunnel(flags(-df-csum+key))".to_string(),
            "packet_type(ns=0,id=0)".to_string()
        ]
    );
    assert!(matches!(&flows[5].actions[0], DpAction::Tunnel { text } if text.starts_with("tnl_push(tnl_port(4789)")));
    assert_eq!(
        flows[7].actions,
        vec![DpAction::Tunnel {
            text: "tnl_pop(4789)".into()
        }]
    );
    assert_eq!(
        verbose[0].placement,
        DpPlacement {
            offloaded: None,
            dp: Some("ovs".into())
        }
    );
    assert_eq!(verbose[0].dp_extra_info.as_deref(), Some("miniflow_bits(5,4)"));
    assert_eq!(verbose[2].ufid.as_deref(), Some("49d9d0e3-4fdd-465c-8168-14c0edab4a7b"));
}

#[test]
fn test_datapath_actions() {
    let line = "ufid:1, tunnel(tun_id=0x5,src=1.1.1.1,dst=2.2.2.2,ttl=64,flags(-df+csum+key)),recirc_id(0),in_port(3),eth(src=00:00:00:00:00:01),eth_type(0x0800),ipv4(frag=no), packets:12, bytes:840, used:0.512s, flags:S., offloaded:yes, dp:tc, actions:set(ipv4(src=1.2.3.4,dst=5.6.7.8)),set(eth(dst=00:00:00:00:00:09)),set(ipv4(tos=0x8/0xfc)),set(tunnel(tun_id=0x5,src=1.1.1.1,dst=2.2.2.2)),set(tunnel(tun_id=0x6,src=1.1.1.1,dst=2.2.2.3,ttl=64,tp_dst=4789,flags(df|key))),tnl_push(tnl_port(4789),header(size=50,type=4,eth(dst=00:00:00:00:00:02,src=00:00:00:00:00:01,dl_type=0x0800),ipv4(src=1.1.1.1,dst=2.2.2.2,proto=17,tos=0,ttl=64,frag=0x4000),udp(src=0,dst=4789,csum=0x0),vxlan(flags=0x8000000,vni=0x5)),out_port(2)),tnl_pop(4),ct(commit,zone=5,nat(src=10.0.0.1)),recirc(0x2),userspace(pid=0,slow_path(controller)),clone(pop_vlan,3),push_vlan(tpid=0x88a8,vid=7,pcp=1,cfi=0),drop";
    let f = parse_dp_flow(line).unwrap();
    assert_eq!(dp_flow_to_string(&f).unwrap(), line);
    assert_eq!(
        f.placement,
        DpPlacement {
            offloaded: Some(true),
            dp: Some("tc".into())
        }
    );
    assert_eq!(f.tcp_flags_seen.as_deref(), Some("S."));
    assert_eq!(f.other_keys, vec!["tunnel(ttl=64,flags(-df+csum+key))".to_string()]);
    assert!(f.keys.contains(&fm(OfField::TunId, 5, u64::MAX as u128)));
    use DpAction::*;
    assert_eq!(
        &f.actions[..6],
        &[
            Set {
                field: OfField::NwSrc,
                value: 0x0102_0304,
                mask: 0xffff_ffff
            },
            Set {
                field: OfField::NwDst,
                value: 0x0506_0708,
                mask: 0xffff_ffff
            },
            Set {
                field: OfField::DlDst,
                value: 9,
                mask: 0xffff_ffff_ffff
            },
            Set {
                field: OfField::NwTos,
                value: 8,
                mask: 0xfc
            },
            SetTunnel {
                id: 5,
                src: 0x0101_0101,
                dst: 0x0202_0202
            },
            Other {
                text: "set(tunnel(tun_id=0x6,src=1.1.1.1,dst=2.2.2.3,ttl=64,tp_dst=4789,flags(df|key)))".into()
            },
        ]
    );
    assert!(matches!(&f.actions[6], Tunnel { text } if text.starts_with("tnl_push(")));
    assert_eq!(
        f.actions[8],
        Ct {
            text: "ct(commit,zone=5,nat(src=10.0.0.1))".into()
        }
    );
    assert_eq!(f.actions[9], Recirc { id: 2 });
    assert_eq!(
        f.actions[12],
        PushVlan {
            tpid: 0x88a8,
            tci: 0x2007
        }
    );
}

#[test]
fn test_dpctl_errors() {
    let e = parse_dp_flow("recirc_id(0),in_port(p1),eth_type(0x0800), packets:0, bytes:0, used:never, actions:p2")
        .unwrap_err();
    assert_eq!(e.column, 14);
    assert!(e.message.contains("dump with --no-names"), "{}", e.message);
    let e = parse_dp_flow("in_port(1),ipv4(src=10.0.0.300), packets:0, bytes:0, actions:1").unwrap_err();
    assert_eq!(e.column, 17);
    assert!(e.message.contains("not an IPv4 address"), "{}", e.message);
    assert!(parse_dp_flow("in_port(1), packets:0, bytes:0")
        .unwrap_err()
        .message
        .contains("missing 'actions:'"));
    assert!(parse_dp_flow("in_port(1), packets:0, bytes:0, actions:p2")
        .unwrap_err()
        .message
        .contains("unknown datapath action 'p2'"));
    assert!(
        parse_dp_flow("in_port(1),ipv4(frag=maybe), packets:0, bytes:0, actions:1")
            .unwrap_err()
            .message
            .contains("bad frag")
    );
    assert!(
        parse_dp_flow("in_port(1),tcp_flags(syn|bogus), packets:0, bytes:0, actions:1")
            .unwrap_err()
            .message
            .contains("unknown flag 'bogus'")
    );
    assert!(parse_dp_flow("in_port(1, packets:0, bytes:0, actions:1").is_err());
    assert!(parse_dp_flow("in_port(1),packets:0,bytes:0,actions:clone(1").is_err());
    let report = parse_dp_flows_all(
        "flow-dump from pmd on cpu core: 0\nin_port(1), packets:0, bytes:0, actions:1\nbad\n",
        "d.txt",
    );
    assert_eq!(report.parsed.len(), 1);
    assert_eq!((report.errors[0].line, report.errors[0].file.as_str()), (3, "d.txt"));
    for garbage in [
        "",
        "actions:",
        ",,, actions:1",
        "x(, packets:0, bytes:0, actions:1",
        "ipv4(src=), packets:0, bytes:0, actions:set(",
        "eth_type(0x8100),encap(eth_type(0x0800)), packets:0, bytes:0, actions:1",
    ] {
        let _ = parse_dp_flow(garbage);
    }
}
