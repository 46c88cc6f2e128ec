//! Write/parse identity on random rules and datapath flows: parse(write(x)) == x.

use super::*;
use proptest::prelude::*;

fn masked(bits: u32) -> impl Strategy<Value = (u128, u128)> {
    let full = if bits == 128 { u128::MAX } else { (1u128 << bits) - 1 };
    (any::<u128>(), any::<u128>(), any::<bool>()).prop_map(move |(v, m, exact)| {
        let m = if exact { full } else { m & full };
        (v & m, m)
    })
}

fn fm((field, (value, mask)): (OfField, (u128, u128))) -> FieldMatch {
    FieldMatch { field, value, mask }
}

fn of_port() -> impl Strategy<Value = PortRef> {
    prop_oneof![
        (0u32..0xff00).prop_map(PortRef::Number),
        "[a-z][a-z0-9_]{0,6}"
            .prop_filter("not a reserved name", |n| !ofctl::reserved_port(n))
            .prop_map(PortRef::Name),
        prop::sample::select(vec!["IN_PORT", "LOCAL", "FLOOD", "ALL", "TABLE", "NONE"])
            .prop_map(|r| PortRef::Reserved(r.to_string())),
    ]
}

/// A protocol (dl_type, nw_proto) and the fields it allows.
fn of_match() -> impl Strategy<Value = OfMatch> {
    let proto = prop::sample::select(vec![
        (None, None),
        (Some(0x0800u16), None),
        (Some(0x86dd), None),
        (Some(0x0806), None),
        (Some(0x1234), None),
        (Some(0x0800), Some(6u8)),
        (Some(0x86dd), Some(6)),
        (Some(0x0800), Some(17)),
        (Some(0x0800), Some(132)),
        (Some(0x0800), Some(1)),
        (Some(0x0800), Some(47)),
        (Some(0x86dd), Some(6)),
        (Some(0x86dd), Some(58)),
    ]);
    let generic = prop::collection::vec(
        prop_oneof![
            masked(48).prop_map(|vm| (OfField::DlSrc, vm)),
            masked(48).prop_map(|vm| (OfField::DlDst, vm)),
            masked(16).prop_map(|vm| (OfField::VlanTci, vm)),
            masked(64).prop_map(|vm| (OfField::TunId, vm)),
            masked(32).prop_map(|vm| (OfField::TunSrc, vm)),
            masked(32).prop_map(|vm| (OfField::TunDst, vm)),
            masked(32).prop_map(|vm| (OfField::CtState, vm)),
            masked(8).prop_map(|vm| (OfField::CtState, vm)),
            any::<u16>().prop_map(|z| (OfField::CtZone, (z as u128, 0xffff))),
            masked(32).prop_map(|vm| (OfField::CtMark, vm)),
            masked(64).prop_map(|vm| (OfField::Metadata, vm)),
        ],
        0..4,
    );
    let l3 = prop::collection::vec(
        prop_oneof![
            masked(32).prop_map(|vm| (OfField::NwSrc, vm)),
            masked(32).prop_map(|vm| (OfField::NwDst, vm)),
            masked(128).prop_map(|vm| (OfField::Ipv6Src, vm)),
            masked(128).prop_map(|vm| (OfField::Ipv6Dst, vm)),
            prop::sample::select(vec![0xfcu128, 0x03, 0xff])
                .prop_flat_map(|m| any::<u8>().prop_map(move |v| (OfField::NwTos, (v as u128 & m, m)))),
            any::<u8>().prop_map(|v| (OfField::NwTtl, (v as u128, 0xff))),
            prop::sample::select(fields::FRAG_NAMES.to_vec()).prop_map(|(_, v, m)| (OfField::NwFrag, (v, m))),
            masked(16).prop_map(|vm| (OfField::TpSrc, vm)),
            masked(16).prop_map(|vm| (OfField::TpDst, vm)),
            any::<u8>().prop_map(|v| (OfField::TpSrc, (v as u128, 0xff))),
            any::<u8>().prop_map(|v| (OfField::TpDst, (v as u128, 0xff))),
            masked(12).prop_map(|vm| (OfField::TcpFlags, vm)),
            masked(9).prop_map(|vm| (OfField::TcpFlags, vm)),
            masked(9).prop_map(|vm| (OfField::TcpFlags, vm)),
        ],
        0..5,
    );
    (proto, generic, l3, proptest::option::of(of_port())).prop_map(|((dl, proto), generic, l3, in_port)| {
        let mut fields: Vec<FieldMatch> = Vec::new();
        let mut put = |f: FieldMatch| {
            if !fields.iter().any(|g| g.field == f.field) {
                fields.push(f);
            }
        };
        if let Some(dl) = dl {
            put(FieldMatch {
                field: OfField::DlType,
                value: dl as u128,
                mask: 0xffff,
            });
        }
        if let Some(p) = proto {
            put(FieldMatch {
                field: OfField::NwProto,
                value: p as u128,
                mask: 0xff,
            });
        }
        for f in generic.into_iter().map(fm) {
            put(f);
        }
        let (v4, v6) = (dl == Some(0x0800), dl == Some(0x86dd));
        for f in l3.into_iter().map(fm) {
            use OfField::*;
            let icmp = matches!(proto, Some(1) | Some(58));
            let ok = match f.field {
                NwSrc | NwDst => v4,
                Ipv6Src | Ipv6Dst => v6,
                NwTos | NwTtl | NwFrag => v4 || v6,
                TpSrc | TpDst if f.mask == 0xff && icmp => true,
                TpSrc | TpDst => !icmp && matches!(proto, Some(6) | Some(17) | Some(132)) && (v4 || v6),
                TcpFlags => proto == Some(6),
                _ => false,
            };
            if ok {
                put(f);
            }
        }
        fields.sort_by_key(|f| f.field);
        OfMatch { in_port, fields }
    })
}

fn of_action() -> impl Strategy<Value = OfAction> {
    use OfAction::*;
    let set = prop_oneof![
        // Sets that need no protocol in the match (mod_* forms, or fields without one).
        masked(48).prop_map(|(v, m)| (OfField::DlSrc, v, m)),
        masked(48).prop_map(|(v, m)| (OfField::DlDst, v, m)),
        any::<u32>().prop_map(|v| (OfField::NwSrc, v as u128, 0xffff_ffff)),
        (0u128..0x1000).prop_map(|vid| (OfField::VlanTci, 0x1000 | vid, 0x1fff)),
        (0u128..8).prop_map(|p| (OfField::VlanTci, 0x1000 | p << 13, 0xf000)),
        (0u128..64).prop_map(|d| (OfField::NwTos, d << 2, 0xfc)),
        (0u128..4).prop_map(|e| (OfField::NwTos, e, 0x03)),
        any::<u8>().prop_map(|t| (OfField::NwTtl, t as u128, 0xff)),
        any::<u16>().prop_map(|p| (OfField::TpDst, p as u128, 0xffff)),
        masked(64)
            .prop_filter("full tun_id is set_tunnel", |(_, m)| *m != u64::MAX as u128)
            .prop_map(|(v, m)| (OfField::TunId, v, m)),
        masked(32).prop_map(|(v, m)| (OfField::TunSrc, v, m)),
        masked(64).prop_map(|(v, m)| (OfField::Metadata, v, m)),
    ]
    .prop_map(|(field, value, mask)| SetField { field, value, mask });
    prop_oneof![
        of_port()
            .prop_filter(
                "normal/controller are their own actions",
                |p| !matches!(p, PortRef::Reserved(r) if r == "NORMAL" || r == "CONTROLLER")
            )
            .prop_map(|port| Output { port }),
        Just(Normal),
        Just(Controller),
        set,
        prop::sample::select(vec![0x8100u16, 0x88a8]).prop_map(|tpid| PushVlan { tpid }),
        Just(PopVlan),
        any::<u64>().prop_map(|id| SetTunnel { id }),
        (proptest::option::of(of_port()), proptest::option::of(0u8..255))
            .prop_filter("resubmit needs a port or a table", |(p, t)| p.is_some() || t.is_some())
            .prop_map(|(port, table)| Resubmit { port, table }),
        (0u8..255).prop_map(|table| GotoTable { table }),
        (
            any::<bool>(),
            proptest::option::of(any::<u16>()),
            proptest::option::of(0u8..255),
            prop::sample::subsequence(
                vec![
                    "nat",
                    "nat(src=10.0.0.1-10.0.0.9)",
                    "exec(set_field:1->ct_mark)",
                    "zone=NXM_NX_REG0[0..15]"
                ],
                0..3
            )
        )
            .prop_map(|(commit, zone, table, other)| Ct {
                commit,
                zone,
                table,
                other: other.into_iter().map(String::from).collect()
            }),
        Just(DecTtl),
    ]
}

fn of_rule() -> impl Strategy<Value = OfRule> {
    (
        0u8..255,
        any::<u16>(),
        any::<u64>(),
        any::<u16>(),
        any::<u16>(),
        of_match(),
        prop::collection::vec(of_action(), 0..5),
    )
        .prop_map(
            |(table, priority, cookie, idle_timeout_s, hard_timeout_s, matches, actions)| OfRule {
                table,
                priority,
                cookie,
                idle_timeout_s,
                hard_timeout_s,
                matches,
                // OVS refuses a goto_table that does not move forward (ofctl::check_goto_forward):
                // such a rule is no valid input, so generated gotos go past the rule's table.
                actions: if actions.is_empty() {
                    vec![OfAction::Drop]
                } else {
                    actions
                        .into_iter()
                        .map(|a| match a {
                            OfAction::GotoTable { table: t } if t <= table && table < 254 => {
                                OfAction::GotoTable { table: table + 1 }
                            }
                            other => other,
                        })
                        .filter(|a| !matches!(a, OfAction::GotoTable { table: t } if *t <= table))
                        .collect::<Vec<_>>()
                },
            },
        )
}

fn nonzero_masked(bits: u32) -> impl Strategy<Value = (u128, u128)> {
    let full = if bits == 128 { u128::MAX } else { (1u128 << bits) - 1 };
    // Datapath values keep the packet's bits outside the mask.
    (any::<u128>(), any::<u128>(), any::<bool>())
        .prop_map(move |(v, m, exact)| (v & full, if exact { full } else { m & full }))
        .prop_filter("a zero mask is an absent key", |(_, m)| *m != 0)
}

fn dp_flow() -> impl Strategy<Value = DpFlow> {
    use OfField::*;
    let l2 = (
        proptest::option::of(prop::sample::select(vec![0x0800u128, 0x86dd, 0x0806])),
        proptest::option::of(nonzero_masked(16).prop_map(|(v, m)| (v, m | 0x1000))),
        proptest::option::of(prop::sample::select(vec![6u128, 17, 132, 1, 58, 47])),
    );
    let common = prop::collection::vec(
        prop_oneof![
            any::<u32>().prop_map(|v| (RecircId, (v as u128, 0xffff_ffff))),
            any::<u32>().prop_map(|v| (InPort, (v as u128, 0xffff_ffff))),
            nonzero_masked(48).prop_map(|vm| (DlSrc, vm)),
            nonzero_masked(48).prop_map(|vm| (DlDst, vm)),
            nonzero_masked(64).prop_map(|vm| (TunId, vm)),
            nonzero_masked(32).prop_map(|vm| (TunSrc, vm)),
            nonzero_masked(32).prop_map(|vm| (CtState, vm)),
            nonzero_masked(8).prop_map(|(v, m)| (CtState, (v & m, m))),
            nonzero_masked(16).prop_map(|vm| (CtZone, vm)),
            nonzero_masked(32).prop_map(|vm| (CtMark, vm)),
            nonzero_masked(8).prop_map(|vm| (NwTos, vm)),
            nonzero_masked(8).prop_map(|vm| (NwTtl, vm)),
            (prop::sample::select(vec![0u128, 1, 3]), 1u128..4).prop_map(|(v, m)| (NwFrag, (v, m))),
            nonzero_masked(12).prop_map(|(v, m)| (TcpFlags, (v & m, m))),
            nonzero_masked(12).prop_map(|(_, m)| (TcpFlags, (m, 0xfff))),
        ],
        0..6,
    );
    let addrs = prop::collection::vec(
        prop_oneof![
            nonzero_masked(32).prop_map(|vm| (NwSrc, vm)),
            nonzero_masked(32).prop_map(|vm| (NwDst, vm)),
            nonzero_masked(128).prop_map(|vm| (Ipv6Src, vm)),
            nonzero_masked(128).prop_map(|vm| (Ipv6Dst, vm)),
            nonzero_masked(16).prop_map(|vm| (TpSrc, vm)),
            nonzero_masked(16).prop_map(|vm| (TpDst, vm)),
        ],
        0..4,
    );
    let other = prop::sample::subsequence(
        vec![
            "skb_priority(0x1)",
            "skb_mark(0/0)",
            "ct_label(0x1/0x1)",
            "dp_hash(0x5/0xf)",
            "packet_type(ns=0,id=0)",
            "arp(sip=1.2.3.4)",
        ],
        0..4,
    );
    let actions = prop::collection::vec(
        prop_oneof![
            any::<u32>().prop_map(|port| DpAction::Output { port }),
            Just(DpAction::Drop),
            (prop::sample::select(vec![0x8100u16, 0x88a8]), any::<u16>())
                .prop_map(|(tpid, tci)| DpAction::PushVlan { tpid, tci }),
            Just(DpAction::PopVlan),
            nonzero_masked(48).prop_map(|(value, mask)| DpAction::Set {
                field: DlSrc,
                value,
                mask
            }),
            nonzero_masked(32).prop_map(|(value, mask)| DpAction::Set {
                field: NwDst,
                value,
                mask
            }),
            nonzero_masked(32).prop_map(|(value, mask)| DpAction::Set {
                field: NwSrc,
                value,
                mask
            }),
            nonzero_masked(128).prop_map(|(value, mask)| DpAction::Set {
                field: Ipv6Dst,
                value,
                mask
            }),
            (any::<u64>(), any::<u32>(), any::<u32>()).prop_map(|(id, src, dst)| DpAction::SetTunnel { id, src, dst }),
            any::<u32>().prop_map(|id| DpAction::Recirc { id }),
            Just(DpAction::Tunnel {
                text: "tnl_pop(4)".into()
            }),
            Just(DpAction::Ct {
                text: "ct(commit,zone=5,nat(src=10.0.0.1))".into()
            }),
            Just(DpAction::Other {
                text: "userspace(pid=0,slow_path(controller))".into()
            }),
            Just(DpAction::Other {
                text: "clone(pop_vlan,3)".into()
            }),
        ],
        1..6,
    );
    let stats = (
        any::<u64>(),
        any::<u64>(),
        proptest::option::of(prop::sample::select(vec!["never", "0.512s"])),
        proptest::option::of(Just("S.")),
        proptest::option::of(any::<bool>()),
        proptest::option::of(prop::sample::select(vec!["ovs", "tc"])),
        proptest::option::of(Just("f16948cb-7e53-460d-897d-f8e3e52f907c")),
        proptest::option::of(Just("miniflow_bits(4,2)")),
    );
    (l2, common, addrs, other, actions, stats).prop_map(|((dl, vlan, proto), common, addrs, other, actions, st)| {
        let mut keys: Vec<FieldMatch> = Vec::new();
        let mut put = |f: FieldMatch| {
            if !keys.iter().any(|g| g.field == f.field) {
                keys.push(f);
            }
        };
        if let Some(t) = dl {
            put(FieldMatch {
                field: DlType,
                value: t,
                mask: 0xffff,
            });
        }
        if let Some((v, m)) = vlan {
            put(FieldMatch {
                field: VlanTci,
                value: v,
                mask: m,
            });
        }
        if let Some(p) = proto {
            put(FieldMatch {
                field: NwProto,
                value: p,
                mask: 0xff,
            });
        }
        for f in common.into_iter().map(fm) {
            put(f);
        }
        let l4_ok = matches!(proto, Some(6) | Some(17) | Some(132));
        for f in addrs.into_iter().map(fm) {
            if !matches!(f.field, TpSrc | TpDst) || l4_ok {
                put(f);
            }
        }
        keys.sort_by_key(|f| f.field);
        DpFlow {
            ufid: st.6.map(String::from),
            keys,
            other_keys: other.into_iter().map(String::from).collect(),
            packets: st.0,
            bytes: st.1,
            used: st.2.map(String::from),
            placement: DpPlacement {
                offloaded: st.4,
                dp: st.5.map(String::from),
            },
            actions,
            tcp_flags_seen: st.3.map(String::from),
            dp_extra_info: st.7.map(String::from),
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn prop_openflow_write_parse_identity(rule in of_rule()) {
        let text = rule_to_string(&rule).unwrap();
        let back = parse_rule(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        prop_assert_eq!(back, rule, "{}", text);
    }

    #[test]
    fn prop_dpctl_write_parse_identity(flow in dp_flow()) {
        let text = dp_flow_to_string(&flow).unwrap();
        let back = parse_dp_flow(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        prop_assert_eq!(&back, &flow, "{}", text);
        // and the text itself is stable
        prop_assert_eq!(dp_flow_to_string(&back).unwrap(), text);
    }

    #[test]
    fn prop_parsers_never_panic(line in "[a-z_0-9=,:()/.+|\\- >]{0,80}") {
        let _ = parse_rule(&line);
        let _ = parse_dp_flow(&line);
    }

    /// Lines built from real syntax pieces: whatever parses writes back to the same model.
    #[test]
    fn prop_parsed_lines_round_trip(pieces in prop::collection::vec(prop::sample::select(vec![
        "ip", "tcp", "udp6", "arp", "in_port=3", "in_port=LOCAL", "dl_vlan=5", "dl_vlan_pcp=2", "vlan_tci=0x1000/0x1000",
        "nw_src=10.0.0.1/8", "nw_tos=8", "nw_ecn=1", "ip_dscp=3", "tp_dst=80", "tp_src=0x10/0xf0", "tcp_flags=+syn",
        "ct_state=+trk-new", "nw_frag=later", "icmp_type=3", "tun_id=5", "metadata=0x1/0x1", "priority=5", "table=3",
    ]), 0..7), actions in prop::collection::vec(prop::sample::select(vec![
        "output:1", "drop", "normal", "in_port", "mod_vlan_vid:3", "mod_vlan_pcp:1", "set_field:5->tun_id",
        "set_field:0x1/0x3->metadata", "mod_nw_tos:4", "mod_nw_ecn:2", "resubmit(,2)", "ct(commit,zone=1)", "strip_vlan",
    ]), 0..4)) {
        let line = format!("{},actions={}", pieces.join(","), actions.join(","));
        if let Ok(rule) = parse_rule(&line) {
            let written = rule_to_string(&rule).unwrap();
            prop_assert_eq!(parse_rule(&written).unwrap(), rule, "{} -> {}", line, written);
        }
    }
}
