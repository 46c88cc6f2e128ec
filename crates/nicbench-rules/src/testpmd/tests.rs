use super::*;
use crate::model::{EthItem, Ipv4Item, UdpItem, VlanItem};

fn rule_of(line: &str) -> Rule {
    match parse_command(line) {
        Ok(Command::Create { rule, .. } | Command::Validate { rule, .. }) => rule,
        other => panic!("{line}: {other:?}"),
    }
}

fn round_trip(line: &str) -> Command {
    let cmd = parse_command(line).unwrap_or_else(|e| panic!("{line}: {e}"));
    let written = cmd.to_string();
    let again = parse_command(&written).unwrap_or_else(|e| panic!("{written}: {e}"));
    assert_eq!(again, cmd, "{line}\n -> {written}");
    cmd
}

#[test]
fn test_parse_brief_example() {
    let r = rule_of("flow create 0 group 1 priority 0 ingress pattern eth / ipv4 src is 10.0.0.1 dst spec 10.0.0.0 dst mask 255.255.255.0 / udp dst is 4789 / vxlan vni is 42 / end actions queue index 3 / count / end");
    assert_eq!(
        r.attr,
        Attr {
            group: 1,
            priority: 0,
            ingress: true,
            ..Default::default()
        }
    );
    assert_eq!(r.pattern[0], Item::Eth(EthItem::default()));
    let Item::Ipv4(ip) = &r.pattern[1] else { panic!() };
    assert_eq!(ip.src, Some(Field::exact(Ipv4Addr::new(10, 0, 0, 1))));
    assert_eq!(ip.dst, Field::prefix(Ipv4Addr::new(10, 0, 0, 0), 24));
    assert_eq!(
        r.pattern[2],
        Item::Udp(UdpItem {
            dst: Some(Field::exact(4789)),
            ..Default::default()
        })
    );
    let Item::Vxlan(vx) = &r.pattern[3] else { panic!() };
    assert_eq!(vx.vni.map(|f| (f.value, f.mask)), Some((42, 0xff_ffff)));
    assert_eq!(r.actions, vec![Action::Queue { index: 3 }, Action::Count]);
    assert_eq!(
        r.to_string(),
        "group 1 ingress pattern eth / ipv4 src is 10.0.0.1 dst spec 10.0.0.0 dst prefix 24 / udp dst is 4789 / vxlan vni is 42 / end actions queue index 3 / count / end"
    );
}

#[test]
fn test_spec_without_mask_uses_default_mask() {
    // No mask anywhere in the item: rte_flow's default ipv4 mask (src, dst) applies, so
    // `proto spec 6` is ignored, `src spec` is exact and -- the classic rte_flow gotcha --
    // the unset dst is matched against 0.0.0.0.
    let r = rule_of("flow create 0 pattern ipv4 src spec 1.2.3.4 proto spec 6 / end actions drop / end");
    assert_eq!(
        r.pattern[0],
        Item::Ipv4(Ipv4Item {
            src: Some(Field::exact(Ipv4Addr::new(1, 2, 3, 4))),
            dst: Some(Field::exact(Ipv4Addr::UNSPECIFIED)),
            ..Default::default()
        })
    );
    // With a mask on another field the item mask is explicit: spec-only fields drop out.
    let r = rule_of("flow create 0 pattern ipv4 src spec 1.2.3.4 ttl is 64 / end actions drop / end");
    let Item::Ipv4(ip) = &r.pattern[0] else { panic!() };
    assert_eq!((ip.src, ip.ttl), (None, Some(Field::exact(64))));
    // mask without spec: presence only.
    let r = rule_of("flow create 0 pattern udp dst mask 0xffff / end actions drop / end");
    assert_eq!(r.pattern[0], Item::Udp(UdpItem::default()));
}

#[test]
fn test_ranges_and_prefixes() {
    let r = rule_of("flow create 0 pattern udp dst spec 1000 dst last 2000 dst mask 0xffff / end actions drop / end");
    assert_eq!(
        r.pattern[0],
        Item::Udp(UdpItem {
            dst: Some(Field::range(1000, 2000)),
            ..Default::default()
        })
    );
    // Without a mask the default udp mask also pins src to 0.
    let r = rule_of("flow create 0 pattern udp dst spec 1000 dst last 2000 / end actions drop / end");
    assert_eq!(
        r.pattern[0],
        Item::Udp(UdpItem {
            src: Some(Field::exact(0)),
            dst: Some(Field::range(1000, 2000))
        })
    );
    let r = rule_of("flow create 0 pattern ipv4 src prefix 16 src spec 10.1.2.3 / end actions drop / end");
    let Item::Ipv4(ip) = &r.pattern[0] else { panic!() };
    assert_eq!(ip.src, Field::prefix(Ipv4Addr::new(10, 1, 0, 0), 16));
    round_trip("flow create 0 pattern udp dst spec 1000 dst last 2000 / end actions drop / end");
    round_trip("flow create 0 pattern ipv6 src spec 2001:db8:: src prefix 32 flow is 5 / end actions drop / end");
    round_trip("flow create 0 pattern tcp flags spec 0x02 flags mask 0x12 / end actions drop / end");
}

#[test]
fn test_vlan_bitfields() {
    let r = rule_of("flow create 0 pattern vlan vid is 4097 pcp is 3 / end actions drop / end");
    let Item::Vlan(v) = &r.pattern[0] else { panic!() };
    assert_eq!(v.tci, Field::new(0x6001, 0xefff, None));
    assert_eq!(v.vid(), Some((1, 0xfff)));
    assert!(r.to_string().contains("vlan pcp is 3 vid is 1 /"), "{r}");
    let r = rule_of("flow create 0 pattern vlan tci spec 0x0005 tci mask 0x0f0f / end actions drop / end");
    assert_eq!(
        r.pattern[0],
        Item::Vlan(VlanItem {
            tci: Field::new(5, 0x0f0f, None),
            ..Default::default()
        })
    );
    round_trip("flow create 0 pattern vlan tci spec 0x0005 tci mask 0x0f0f / end actions drop / end");
    round_trip("flow create 0 pattern gre c_bit is on k_bit is 1 protocol is 0x6558 / gre_key value is 7 / end actions drop / end");
}

#[test]
fn test_actions_round_trip() {
    let cmd = round_trip("flow create 0 ingress pattern end actions rss func toeplitz level 1 types ipv4-udp l3-src-only end key 0x6d5a queues 0 1 2 end / mark id 0x10 / count / end");
    let Some(Action::Rss(rss)) = cmd.rule().map(|r| &r.actions[0]) else {
        panic!()
    };
    assert_eq!(rss.key.as_deref(), Some(&[0x6d, 0x5a][..]));
    assert_eq!(rss.queues, Some(vec![0, 1, 2]));
    round_trip("flow validate 0 pattern eth / end actions set_mac_src mac_addr 00:11:22:33:44:55 / set_ipv4_dst ipv4_addr 1.2.3.4 / set_ipv6_src ipv6_addr 2001::1 / set_tp_dst port 443 / dec_ttl / of_push_vlan ethertype 0x8100 / of_set_vlan_vid vlan_vid 10 / of_set_vlan_pcp vlan_pcp 3 / of_pop_vlan / vxlan_encap / vxlan_decap / port_id id 1 / jump group 2 / passthru / drop / end");
    assert_eq!(
        rule_of("flow create 0 pattern end actions queue / end").actions,
        vec![Action::Queue { index: 0 }]
    );
    assert_eq!(read_hex_key("6d5a5"), Ok(vec![0x06, 0xd5, 0xa5]));
}

#[test]
fn test_rss_key_len_as_testpmd_orders_it() {
    // key then key_len: the length given last wins (cmdline_flow.c ACTION_RSS_KEY_LEN).
    let cmd = round_trip(
        "flow create 0 ingress pattern end actions rss key 6d5a6d5a6d5a6d5a key_len 40 queues 0 1 end / end",
    );
    let Some(Action::Rss(rss)) = cmd.rule().map(|r| &r.actions[0]) else {
        panic!()
    };
    assert_eq!((rss.key.as_ref().map(Vec::len), rss.key_len), (Some(8), Some(40)));
    // key_len then key: the key sets the length again, so the earlier key_len is void.
    let r = rule_of("flow create 0 pattern end actions rss key_len 40 key 6d5a6d5a6d5a6d5a / end");
    let Action::Rss(rss) = &r.actions[0] else { panic!() };
    assert_eq!(rss.key_len, None);
    round_trip("flow create 0 pattern end actions rss key_len 0 / end");
    let e = parse_command("flow create 0 pattern end actions rss key_len 65 / end").unwrap_err();
    assert!(e.message.contains("0..=64"), "{}", e.message);
    assert!(parse_command("flow create 0 pattern end actions rss key_len x / end").is_err());
}

#[test]
fn test_other_commands() {
    assert_eq!(
        round_trip("flow destroy 0 rule 5 rule 6"),
        Command::Destroy {
            port: 0,
            rule_ids: vec![5, 6]
        }
    );
    assert_eq!(round_trip("flow flush 3"), Command::Flush { port: 3 });
    assert!(parse_command("flow destroy 0").is_err());
}

#[test]
fn test_error_positions() {
    let e = parse_command("flow create 0 pattern eth / ipv4 dst iz 10.0.0.1 / end actions drop / end").unwrap_err();
    assert_eq!((e.line, e.column), (1, 38));
    assert_eq!(
        e.message,
        "expected 'is', 'spec', 'mask', 'last' or 'prefix' after field 'dst', found 'iz'"
    );
    let e = parse_command("flow create 0 pattern udp dst is 65536 / end actions drop / end").unwrap_err();
    assert_eq!(e.column, 34);
    assert!(e.message.contains("does not fit"), "{}", e.message);
    let e = parse_command("flow create 0 pattern eth / end actions drop").unwrap_err();
    assert_eq!(
        (e.column, e.message.as_str()),
        (45, "expected '/' after action 'drop', found end of line")
    );
    let e = parse_command("flow create 0 pattern foo / end actions end").unwrap_err();
    assert_eq!(e.column, 23);
    assert!(e.message.starts_with("unknown pattern item 'foo'"));
    let report = parse_file_all("# c\nflow flush 0\nflow flush x\n\nflow bogus\n", "r.flow");
    assert_eq!(report.parsed.len(), 1);
    let errs: Vec<String> = report.errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        errs,
        vec![
            "r.flow:3:12: expected a port id, found 'x'",
            "r.flow:5:6: expected 'create', 'validate', 'destroy' or 'flush', found 'bogus'",
        ]
    );
    assert_eq!(
        parse_file("flow flush 0\nflow flush x\nflow x\n", "f")
            .unwrap_err()
            .line,
        2
    );
}
