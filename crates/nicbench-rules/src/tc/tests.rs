use super::*;
use crate::model::{Attr, Ipv4Item};

fn round_trip(line: &str, devices: &mut DeviceTable) -> TcCommand {
    let cmd = parse_command(line, devices).unwrap_or_else(|e| panic!("{line}: {e}"));
    let written = command_to_string(&cmd, devices).unwrap_or_else(|e| panic!("{line}: {e}"));
    let again = parse_command(&written, devices).unwrap_or_else(|e| panic!("{written}: {e}"));
    assert_eq!(again, cmd, "{line}\n -> {written}");
    cmd
}

#[test]
fn test_parse_brief_example() {
    let mut dev = DeviceTable::new();
    let cmd = round_trip(
        "tc filter add dev eth0 ingress protocol ip prio 1 flower skip_sw dst_ip 10.0.0.0/24 ip_proto udp dst_port 80 action drop",
        &mut dev,
    );
    assert_eq!(cmd.dev, "eth0");
    assert!(cmd.skip_sw && !cmd.skip_hw);
    assert_eq!(
        cmd.rule.attr,
        Attr {
            priority: 0,
            ingress: true,
            ..Default::default()
        },
        "tc prio 1 is rte_flow priority 0"
    );
    assert_eq!(
        cmd.rule.pattern,
        vec![
            Item::Eth(EthItem::default()),
            Item::Ipv4(Ipv4Item {
                dst: Field::prefix(Ipv4Addr::new(10, 0, 0, 0), 24),
                ..Default::default()
            }),
            Item::Udp(UdpItem {
                dst: Some(Field::exact(80)),
                ..Default::default()
            }),
        ]
    );
    assert_eq!(cmd.rule.actions, vec![Action::Drop]);
}

#[test]
fn test_devices_first_seen_order() {
    let mut dev = DeviceTable::new();
    let cmd = round_trip(
        "tc filter add dev eth0 ingress protocol all flower action mirred egress redirect dev eth1",
        &mut dev,
    );
    assert_eq!(cmd.rule.actions, vec![Action::PortId { id: 1 }]);
    assert_eq!((dev.name(0), dev.name(1)), (Some("eth0"), Some("eth1")));
    let unknown = TcCommand {
        rule: Rule {
            actions: vec![Action::PortId { id: 9 }],
            ..cmd.rule.clone()
        },
        ..cmd
    };
    assert!(command_to_string(&unknown, &dev).unwrap_err().0.contains("port id 9"));
}

#[test]
fn test_vlan_tunnel_and_actions() {
    let mut dev = DeviceTable::new();
    let cmd = round_trip("tc filter add dev vxlan0 ingress protocol 802.1q chain 2 flower enc_key_id 42 enc_dst_ip 192.0.2.1 enc_dst_port 4789 vlan_id 10 vlan_prio 3 vlan_ethtype ip ip_proto tcp src_port 1000-2000 tcp_flags 0x02/0x12 action vlan pop action tunnel_key unset action goto chain 3", &mut dev);
    assert_eq!(cmd.rule.attr.group, 2);
    assert_eq!(cmd.rule.pattern.len(), 8);
    let Item::Vlan(v) = &cmd.rule.pattern[5] else {
        panic!("{:?}", cmd.rule.pattern)
    };
    assert_eq!((v.vid(), v.pcp()), (Some((10, 0xfff)), Some((3, 7))));
    let Item::Tcp(t) = &cmd.rule.pattern[7] else { panic!() };
    assert_eq!(t.src, Some(Field::range(1000, 2000)));
    assert_eq!(t.flags, Field::new(0x02, 0x12, None));
    round_trip("tc filter add dev eth0 egress protocol ipv6 flower src_ip 2001:db8::/32 ip_proto icmpv6 type 128 code 0 action pedit ex munge ip6 dst set 2001:db8::1 munge ip6 hoplimit dec pipe action vlan push id 5 priority 2 protocol 802.1ad action skbedit mark 7 action pass", &mut dev);
    round_trip("tc filter add dev eth0 ingress protocol ip flower ip_proto udp action tunnel_key set src_ip 10.0.0.1 dst_ip 10.0.0.2 id 42 dst_port 4789 action mirred egress redirect dev vxlan0", &mut dev);
}

#[test]
fn test_errors_name_the_token() {
    let mut dev = DeviceTable::new();
    let e = parse_command(
        "tc filter add dev eth0 ingress protocol ip flower action ct commit",
        &mut dev,
    )
    .unwrap_err();
    assert_eq!(e.message, "tc action 'ct' has no rte_flow equivalent");
    assert_eq!(e.column, 58);
    let e = parse_command(
        "tc filter add dev eth0 ingress protocol ip flower dst_port 80 action drop",
        &mut dev,
    )
    .unwrap_err();
    assert!(e.message.contains("'dst_port' needs 'ip_proto"), "{}", e.message);
    let e = parse_command(
        "tc filter add dev eth0 ingress protocol ip flower ct_state +trk action drop",
        &mut dev,
    )
    .unwrap_err();
    assert!(e.message.starts_with("tc flower key 'ct_state'"), "{}", e.message);
    let queue = TcCommand {
        dev: "eth0".into(),
        rule: Rule {
            attr: Attr {
                ingress: true,
                ..Default::default()
            },
            pattern: vec![],
            actions: vec![Action::Queue { index: 1 }],
        },
        skip_sw: false,
        skip_hw: false,
    };
    assert!(command_to_string(&queue, &dev).unwrap_err().0.contains("rx queue"));
}

#[test]
fn test_filters_without_prio_get_the_kernels_automatic_priorities() {
    // tcf_auto_prio: 49152 for a chain's first filter, then one below the lowest so far, so the
    // last line added matches first; an explicit prio counts; chains and devices are separate.
    let text = "tc filter add dev eth0 ingress protocol ip flower dst_ip 10.0.0.1 action drop\n\
                tc filter add dev eth0 ingress protocol ip flower dst_ip 10.0.0.2 action drop\n\
                tc filter add dev eth0 ingress protocol ip prio 100 flower dst_ip 10.0.0.3 action drop\n\
                tc filter add dev eth0 ingress protocol ip flower dst_ip 10.0.0.4 action drop\n\
                tc filter add dev eth0 ingress protocol ip chain 1 flower dst_ip 10.0.0.5 action drop\n\
                tc filter add dev eth1 ingress protocol ip prio 0 flower dst_ip 10.0.0.6 action drop\n";
    let mut dev = DeviceTable::new();
    let cmds = parse_file(text, "f.tc", &mut dev).expect("parses");
    let prios: Vec<u32> = cmds.iter().map(|c| c.rule.attr.priority + 1).collect();
    assert_eq!(prios, [49152, 49151, 100, 99, 49152, 49152]);
    // Written back, every filter names its prio: the order no longer depends on what came before.
    for c in &cmds {
        let line = command_to_string(c, &dev).expect("writes");
        assert!(line.contains(&format!(" prio {} ", c.rule.attr.priority + 1)), "{line}");
    }
    let low = "tc filter add dev eth0 ingress protocol ip prio 1 flower action drop\n\
               tc filter add dev eth0 ingress protocol ip flower action drop\n";
    let e = parse_file(low, "f.tc", &mut dev).expect_err("nothing below prio 1");
    assert!(
        e.to_string().contains("f.tc:2") && e.to_string().contains("below prio 1"),
        "{e}"
    );
}
