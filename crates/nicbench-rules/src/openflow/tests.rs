use super::*;
use crate::ParseError;

fn round_trip(line: &str) -> OfRule {
    let rule = parse_rule(line).unwrap_or_else(|e| panic!("{line}: {e}"));
    let written = rule_to_string(&rule).unwrap_or_else(|e| panic!("{line}: {e}"));
    let again = parse_rule(&written).unwrap_or_else(|e| panic!("{written}: {e}"));
    assert_eq!(again, rule, "{line}\n -> {written}");
    rule
}

fn fm(field: OfField, value: u128, mask: u128) -> FieldMatch {
    FieldMatch { field, value, mask }
}

#[test]
fn test_parse_add_flow_example() {
    let r = round_trip("priority=10,ip,nw_src=10.0.0.1/8,actions=output:v1p");
    assert_eq!((r.table, r.priority, r.cookie), (0, 10, 0));
    assert_eq!(
        r.matches.fields,
        vec![
            fm(OfField::DlType, 0x0800, 0xffff),
            fm(OfField::NwSrc, 0x0a00_0000, 0xff00_0000)
        ]
    );
    assert_eq!(
        r.actions,
        vec![OfAction::Output {
            port: PortRef::Name("v1p".into())
        }]
    );
    assert_eq!(parse_rule("actions=drop").unwrap().priority, DEFAULT_PRIORITY);
}

#[test]
fn test_parse_dump_flows_output() {
    let text = "NXST_FLOW reply (xid=0x4):\n cookie=0x5, duration=0.039s, table=2, n_packets=3, n_bytes=180, idle_timeout=10, idle_age=0, priority=10,tcp,in_port=1,dl_vlan=5,tp_dst=80 actions=strip_vlan,output:2\n\n# c\n cookie=0x0, duration=1.5s, table=0, n_packets=0, n_bytes=0, priority=0 actions=NORMAL\n";
    let rules = parse_file(text, "dump.txt").unwrap();
    assert_eq!(rules.len(), 2);
    let r = &rules[0];
    assert_eq!((r.table, r.priority, r.cookie, r.idle_timeout_s), (2, 10, 5, 10));
    assert_eq!(r.matches.in_port, Some(PortRef::Number(1)));
    assert_eq!(
        r.matches.fields,
        vec![
            fm(OfField::DlType, 0x0800, 0xffff),
            fm(OfField::VlanTci, 0x1005, 0x1fff),
            fm(OfField::NwProto, 6, 0xff),
            fm(OfField::TpDst, 80, 0xffff),
        ]
    );
    assert_eq!(
        r.actions,
        vec![
            OfAction::PopVlan,
            OfAction::Output {
                port: PortRef::Number(2)
            }
        ]
    );
    assert_eq!(rules[1].actions, vec![OfAction::Normal]);
}

#[test]
fn test_spellings_ovs_treats_as_one() {
    // Pairs `ovs-ofctl parse-flow` prints the same way (checked against OVS 3.1 in tests/ovs_oracle.rs).
    let same = [
        (
            "dl_vlan=5,actions=mod_vlan_vid:7",
            "vlan_tci=0x1005/0x1fff,actions=set_field:4103->vlan_vid",
        ),
        (
            "ip,actions=set_tunnel:5",
            "dl_type=0x0800,actions=set_field:0x5->tun_id",
        ),
        (
            "udp,udp_src=53,actions=strip_vlan",
            "ip,nw_proto=17,tp_src=53,actions=pop_vlan",
        ),
        (
            "ct_state=+trk-new,actions=in_port",
            "ct_state=0x20/0x21,actions=output:IN_PORT",
        ),
        (
            "ip,nw_src=10.0.0.7/255.255.255.0,actions=local",
            "ip,nw_src=10.0.0.0/24,actions=output:65534",
        ),
        ("in_port=LOCAL,actions=", "in_port=local,actions=drop"),
        (
            "tcp,tcp_flags=+syn-ack,actions=NORMAL",
            "tcp,tcp_flags=0x002/0x012,actions=output:normal",
        ),
        (
            "ip,nw_tos=16,actions=mod_nw_tos:8",
            "ip,ip_dscp=4,actions=set_field:2->ip_dscp",
        ),
        (
            "dl_vlan=0xffff,actions=controller",
            "vlan_tci=0/0x1fff,actions=CONTROLLER:65535",
        ),
    ];
    for (a, b) in same {
        assert_eq!(round_trip(a), round_trip(b), "{a} vs {b}");
    }
}

#[test]
fn test_actions_forms() {
    let r = round_trip("table=1,priority=5,cookie=0xabc,hard_timeout=30,in_port=3,ipv6,ipv6_dst=2001:db8::/32,actions=output(port=4),5,resubmit:6,resubmit(,2),resubmit(7,3),goto_table:4,ct(commit,zone=5,table=3,nat(src=10.0.0.1)),dec_ttl,push_vlan:0x8100,mod_vlan_pcp:3,set_field:00:11:22:33:44:55->eth_dst,set_field:0x10/0xff->metadata,set_tunnel64:0x1234567890");
    use OfAction::*;
    let p = |n| PortRef::Number(n);
    assert_eq!(
        r.actions,
        vec![
            Output { port: p(4) },
            Output { port: p(5) },
            Resubmit {
                port: Some(p(6)),
                table: None
            },
            Resubmit {
                port: None,
                table: Some(2)
            },
            Resubmit {
                port: Some(p(7)),
                table: Some(3)
            },
            GotoTable { table: 4 },
            Ct {
                commit: true,
                zone: Some(5),
                table: Some(3),
                other: vec!["nat(src=10.0.0.1)".into()]
            },
            DecTtl,
            PushVlan { tpid: 0x8100 },
            SetField {
                field: OfField::VlanTci,
                value: 0x7000,
                mask: 0xf000
            },
            SetField {
                field: OfField::DlDst,
                value: 0x0011_2233_4455,
                mask: 0xffff_ffff_ffff
            },
            SetField {
                field: OfField::Metadata,
                value: 0x10,
                mask: 0xff
            },
            SetTunnel { id: 0x12_3456_7890 },
        ]
    );
    round_trip("icmp,icmp_type=8,icmp_code=0,nw_ttl=3,nw_frag=first,actions=mod_nw_src:1.2.3.4,mod_tp_dst:9");
    round_trip("tun_id=0x10/0xff,tun_src=1.2.3.4,tun_dst=5.6.7.0/24,ct_zone=5,ct_mark=0x10/0xff,metadata=0x5/0xf,dl_vlan_pcp=3,dl_src=01:00:00:00:00:00/01:00:00:00:00:00,actions=drop");
}

fn err(line: &str) -> ParseError {
    match parse_rule(line) {
        Ok(r) => panic!("{line} parsed: {r:?}"),
        Err(e) => e,
    }
}

#[test]
fn test_errors_point_at_the_piece() {
    let e = err("priority=10,ip,nw_srx=10.0.0.1,actions=drop");
    assert_eq!(e.column, 16);
    assert!(
        e.message
            .starts_with("unknown match field 'nw_srx' (allowed: table, priority"),
        "{}",
        e.message
    );
    let e = err("ip,nw_src=10.0.0.1");
    assert_eq!((e.column, e.message.contains("missing 'actions='")), (19, true));
    let e = err("tcp,tp_dst=0x51/0xfff0,actions=drop");
    assert_eq!(e.column, 5);
    assert!(e.message.contains("bits outside mask"), "{}", e.message);
    let e = err("tp_dst=80,actions=drop");
    assert!(
        e.message.contains("'tp_dst' needs 'tcp', 'udp' or 'sctp'"),
        "{}",
        e.message
    );
    let e = err("ip,actions=output:1,frobnicate");
    assert_eq!(e.column, 21);
    assert!(
        e.message
            .starts_with("unknown action 'frobnicate' (allowed: output:PORT"),
        "{}",
        e.message
    );
    assert!(err("ip,actions=drop,output:1")
        .message
        .contains("\"drop\" must not be accompanied"));
    assert!(err("priority=70000,actions=drop")
        .message
        .contains("bad priority '70000'"));
    assert!(err("dl_vlan=4096,actions=drop").message.contains("neither a VLAN id"));
    assert!(err("ip,nw_tos=3,actions=drop").message.contains("multiple of 4"));
    assert!(err("ct_state=+trk+foo,actions=drop")
        .message
        .contains("unknown flag 'foo'"));
    assert!(err("actions=set_field:1->nope")
        .message
        .contains("unknown field 'nope'"));
    assert!(err("actions=set_field:1.2.3.4->ip_src")
        .message
        .contains("needs 'ip' or 'arp'"));
    assert!(err("actions=set_field:5->vlan_pcp").message.contains("needs a VLAN"));
    assert!(err("tcp,actions=set_field:0x2->tcp_flags")
        .message
        .contains("read-only"));
    assert!(err("actions=set_field:1->ct_mark")
        .message
        .contains("outside of ct(...)"));
    // mod_* have no prerequisite; set_field after push_vlan or with a VLAN match is fine.
    round_trip("actions=mod_nw_src:1.2.3.4,mod_tp_dst:80,mod_nw_tos:4,mod_vlan_pcp:3");
    round_trip("actions=push_vlan:0x8100,set_field:4101->vlan_vid");
    round_trip("dl_vlan=5,actions=set_field:5->vlan_pcp");
    assert!(err("actions=resubmit(,255)").message.contains("bad table '255'"));
    assert!(err("actions=output:v1p,mod_dl_src:zz")
        .message
        .contains("not a MAC address"));
    assert!(err("actions=ct(commit").message.contains("not closed"));
    let report = parse_file_all(
        "ip,actions=drop\nbogus,actions=drop\n\nip,actions=output:1\nip,nw_src=1.2.3.4.5,actions=drop\n",
        "r.of",
    );
    assert_eq!(report.parsed.iter().map(|(l, _)| *l).collect::<Vec<_>>(), vec![1, 4]);
    let lines: Vec<String> = report
        .errors
        .iter()
        .map(|e| format!("{}:{}:{}", e.file, e.line, e.column))
        .collect();
    assert_eq!(lines, vec!["r.of:2:1", "r.of:5:4"]);
}

#[test]
fn test_parse_never_panics_on_garbage() {
    for line in [
        "",
        "actions",
        "=,=,actions=",
        "actions=(",
        "actions=)))",
        "in_port=,actions=",
        "actions=set_field:->",
        "é,actions=drop",
        "actions=resubmit()",
        "ct_state=+,actions=drop",
        "actions=output(port=)",
        "nw_src=/,ip,actions=drop",
    ] {
        let _ = parse_rule(line);
    }
}

#[test]
fn test_looks_like_openflow() {
    assert!(looks_like_openflow("# rules\n\npriority=1,ip,actions=drop\n"));
    assert!(looks_like_openflow(
        "NXST_FLOW reply (xid=0x4):\n cookie=0x0, priority=0 actions=NORMAL\n"
    ));
    assert!(!looks_like_openflow(
        "recirc_id(0),in_port(1), packets:0, bytes:0, used:never, actions:2\n"
    ));
    assert!(!looks_like_openflow(
        "flow create 0 ingress pattern eth / end actions drop / end\n"
    ));
    let dir = std::env::temp_dir().join(format!("nicbench_of_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("rules.txt");
    std::fs::write(&path, "priority=1,ip,actions=drop\n").unwrap();
    let err = crate::ruleset::load_path(&path, None, false).unwrap_err().to_string();
    assert!(
        err.contains("Open vSwitch OpenFlow rules") && err.contains("nicbench vswitch --openflow"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn test_bom_before_the_first_rule_is_skipped() {
    let report = parse_file_all("\u{feff}priority=1,actions=drop\n", "r.of");
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(report.parsed.len(), 1);
}

#[test]
fn test_goto_table_backwards_refused_as_ovs_does() {
    // ovs-ofctl 3.1 on this machine: "actions are invalid with specified match (OFPBIC_BAD_TABLE_ID)".
    for line in [
        "table=2,actions=goto_table:1",
        "table=3,actions=goto_table:3",
        "actions=goto_table:0",
    ] {
        let e = parse_rule(line).unwrap_err().to_string();
        assert!(e.contains("OFPBIC_BAD_TABLE_ID"), "{line}: {e}");
    }
    assert!(parse_rule("table=2,actions=goto_table:3").is_ok());
    assert!(parse_rule("table=3,actions=resubmit(,1)").is_ok());
}

#[test]
fn test_port_name_beyond_openflow_limit_refused_and_shortened() {
    let long = "p".repeat(1_000_000);
    let e = parse_rule(&format!("actions=output:{long}")).unwrap_err().to_string();
    assert!(
        e.contains("1000000 characters") && e.contains("at most 15"),
        "{}",
        &e[..e.len().min(300)]
    );
    assert!(
        e.len() < 400,
        "the error line must not echo a 1 MB name: {} bytes",
        e.len()
    );
    assert!(parse_rule(&format!("actions=output:{}", "p".repeat(15))).is_ok());
}
