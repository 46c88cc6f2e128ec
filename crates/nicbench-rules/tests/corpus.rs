//! Corpus, error-position, ClassBench and property tests for every syntax.

use nicbench_rules::model::{
    Action, Attr, EthItem, Field, Ipv4Item, Ipv6Item, Item, MacAddr, RssAction, RssType, Rule, TcpItem, UdpItem,
    VlanItem, VxlanItem,
};
use nicbench_rules::{classbench, tc, testpmd, Command};
use proptest::prelude::*;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::Path;

fn corpus(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn command_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
}

#[test]
fn testpmd_valid_corpus_round_trips() {
    let text = corpus("testpmd_valid.flow");
    let cmds = testpmd::parse_file(&text, "testpmd_valid.flow").unwrap();
    assert!(cmds.len() >= 50, "{}", cmds.len());
    for cmd in &cmds {
        let written = testpmd::command_to_string(cmd).unwrap();
        let again = testpmd::parse_command(&written).unwrap_or_else(|e| panic!("{written}: {e}"));
        assert_eq!(&again, cmd, "{written}");
        // serde round trip too.
        let json = serde_json::to_string(cmd).unwrap();
        assert_eq!(&serde_json::from_str::<Command>(&json).unwrap(), cmd);
    }
}

#[test]
fn testpmd_invalid_corpus_fails_with_positions() {
    let text = corpus("testpmd_invalid.flow");
    let report = testpmd::parse_file_all(&text, "testpmd_invalid.flow");
    assert!(report.parsed.is_empty(), "{:?}", report.parsed);
    let lines: Vec<usize> = command_lines(&text).map(|(n, _)| n).collect();
    assert_eq!(report.errors.iter().map(|e| e.line).collect::<Vec<_>>(), lines);
    let first = &report.errors[0];
    assert_eq!(
        first.to_string(),
        "testpmd_invalid.flow:2:46: expected 'is', 'spec', 'mask', 'last' or 'prefix' after field 'src', found 'iz'"
    );
    for e in &report.errors {
        let line = text.lines().nth(e.line - 1).unwrap();
        assert!(e.column >= 1 && e.column <= line.chars().count() + 1, "{e}");
    }
    // First-error mode stops at the same place.
    assert_eq!(&testpmd::parse_file(&text, "testpmd_invalid.flow").unwrap_err(), first);
}

#[test]
fn tc_valid_corpus_round_trips() {
    let text = corpus("tc_valid.txt");
    let mut devices = tc::DeviceTable::new();
    let cmds = tc::parse_file(&text, "tc_valid.txt", &mut devices).unwrap();
    assert!(cmds.len() >= 25);
    for cmd in &cmds {
        let written = tc::command_to_string(cmd, &devices).unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
        let again = tc::parse_command(&written, &mut devices).unwrap_or_else(|e| panic!("{written}: {e}"));
        assert_eq!(&again, cmd, "{written}");
        // serde round trip too (the inline VXLAN tunnels are only here).
        let json = serde_json::to_string(&cmd.rule).unwrap();
        assert_eq!(
            serde_json::from_str::<nicbench_rules::Rule>(&json).unwrap(),
            cmd.rule,
            "{json}"
        );
        // The same rule written as testpmd parses back too (inline tunnels aside).
        if let Ok(s) = testpmd::rule_to_string(&cmd.rule) {
            assert_eq!(testpmd::parse_rule(&s).unwrap(), cmd.rule, "{s}");
        }
    }
    assert_eq!(devices.name(0), Some("eth0"));
    assert_eq!(devices.name(1), Some("eth1"));
}

#[test]
fn tc_invalid_corpus_fails_naming_the_token() {
    let text = corpus("tc_invalid.txt");
    let mut devices = tc::DeviceTable::new();
    let report = tc::parse_file_all(&text, "tc_invalid.txt", &mut devices);
    assert!(report.parsed.is_empty(), "{:?}", report.parsed);
    assert_eq!(report.errors.len(), command_lines(&text).count());
    assert_eq!(
        report.errors[0].to_string(),
        "tc_invalid.txt:2:58: tc action 'ct' has no rte_flow equivalent"
    );
    assert!(report.errors[5].message.contains("'police'"), "{}", report.errors[5]);
    assert!(report.errors[6].message.contains("'handle'"), "{}", report.errors[6]);
}

#[test]
fn classbench_files_parse_completely() {
    let Some(dir) = nicbench_testenv::classbench_or_skip("classbench_files_parse_completely") else {
        return;
    };
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    // The published sets (shared/data/README.md): {acl1..4, fw1..4, ipc1} x {1k, 10k}.
    let mut expected: Vec<String> = ["acl1", "acl2", "acl3", "acl4", "fw1", "fw2", "fw3", "fw4", "ipc1"]
        .iter()
        .flat_map(|set| [format!("{set}_10k"), format!("{set}_1k")])
        .collect();
    expected.sort();
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, expected, "ClassBench files in {}", dir.display());
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let filters = classbench::parse_file(&text, &name).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            filters.len(),
            text.lines().filter(|l| !l.trim().is_empty()).count(),
            "{name}"
        );
        let rules = classbench::parse_rules(&text, &name).unwrap();
        assert_eq!(rules.len(), filters.len());
        assert_eq!(rules.last().unwrap().attr.priority as usize, rules.len() - 1);
        for r in rules.iter().step_by(97) {
            assert_eq!(&testpmd::parse_rule(&r.to_string()).unwrap(), r);
        }
    }
}

// ---- property tests ----

fn field_u16() -> impl Strategy<Value = Option<Field<u16>>> {
    (any::<u16>(), any::<u16>(), proptest::option::of(any::<u16>())).prop_map(|(v, m, l)| Field::new(v, m, l))
}
fn field_u8() -> impl Strategy<Value = Option<Field<u8>>> {
    (any::<u8>(), any::<u8>(), proptest::option::of(any::<u8>())).prop_map(|(v, m, l)| Field::new(v, m, l))
}
fn field_v4() -> impl Strategy<Value = Option<Field<Ipv4Addr>>> {
    (any::<u32>(), 0u32..=32, any::<bool>(), any::<u32>()).prop_map(|(v, len, arbitrary, m)| {
        if arbitrary {
            Field::new(Ipv4Addr::from(v), Ipv4Addr::from(m), None)
        } else {
            Field::prefix(Ipv4Addr::from(v), len)
        }
    })
}
fn field_v6() -> impl Strategy<Value = Option<Field<Ipv6Addr>>> {
    (any::<u128>(), 0u32..=128).prop_map(|(v, len)| Field::prefix(Ipv6Addr::from(v), len))
}

fn item() -> impl Strategy<Value = Item> {
    prop_oneof![
        (proptest::option::of(any::<[u8; 6]>()), field_u16()).prop_map(|(m, t)| Item::Eth(EthItem {
            dst: m.map(|b| Field::exact(MacAddr(b))),
            ether_type: t,
            ..Default::default()
        })),
        (field_u16(), field_u16()).prop_map(|(tci, inner)| Item::Vlan(VlanItem {
            tci,
            inner_type: inner,
            ..Default::default()
        })),
        (field_v4(), field_v4(), field_u8(), field_u8()).prop_map(|(src, dst, proto, tos)| Item::Ipv4(Ipv4Item {
            src,
            dst,
            proto,
            tos,
            ..Default::default()
        })),
        (field_v6(), field_v6(), field_u8(), (any::<u32>(), any::<u32>())).prop_map(|(src, dst, tc, (fl, fm))| {
            Item::Ipv6(Box::new(Ipv6Item {
                src,
                dst,
                tc,
                flow_label: Field::new(fl & 0xf_ffff, fm & 0xf_ffff, None),
                ..Default::default()
            }))
        }),
        (field_u16(), field_u16(), field_u8()).prop_map(|(src, dst, flags)| Item::Tcp(TcpItem { src, dst, flags })),
        (field_u16(), field_u16()).prop_map(|(src, dst)| Item::Udp(UdpItem { src, dst })),
        (0u32..1 << 24).prop_map(|v| Item::Vxlan(VxlanItem {
            vni: Field::new(v, 0xff_ffff, None),
            ..Default::default()
        })),
    ]
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        any::<u16>().prop_map(|index| Action::Queue { index }),
        any::<u32>().prop_map(|group| Action::Jump { group }),
        Just(Action::Drop),
        Just(Action::Count),
        any::<u32>().prop_map(|id| Action::Mark { id }),
        any::<u32>().prop_map(|id| Action::PortId { id }),
        any::<[u8; 6]>().prop_map(|b| Action::SetMacDst { mac: MacAddr(b) }),
        any::<u32>().prop_map(|a| Action::SetIpv4Src {
            addr: Ipv4Addr::from(a)
        }),
        any::<u16>().prop_map(|port| Action::SetTpDst { port }),
        any::<u16>().prop_map(|vid| Action::OfSetVlanVid { vid }),
        (
            proptest::option::of(proptest::collection::vec(any::<u16>(), 0..5)),
            proptest::option::of(proptest::collection::vec(any::<u8>(), 1..64)),
            proptest::option::of(proptest::sample::subsequence(RssType::ALL.to_vec(), 0..4))
        )
            .prop_map(|(queues, key, types)| Action::Rss(Box::new(RssAction {
                queues,
                key,
                types,
                ..Default::default()
            }))),
    ]
}

fn rule() -> impl Strategy<Value = Rule> {
    (
        any::<u32>(),
        any::<u32>(),
        any::<[bool; 3]>(),
        proptest::collection::vec(item(), 0..5),
        proptest::collection::vec(action(), 0..4),
    )
        .prop_map(
            |(group, priority, [ingress, egress, transfer], pattern, actions)| Rule {
                attr: Attr {
                    group,
                    priority,
                    ingress,
                    egress,
                    transfer,
                },
                pattern,
                actions,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn testpmd_write_parse_identity(r in rule(), port in any::<u16>()) {
        let cmd = Command::Create { port, rule: r };
        let text = testpmd::command_to_string(&cmd).unwrap();
        prop_assert_eq!(testpmd::parse_command(&text).map_err(|e| TestCaseError::fail(e.to_string()))?, cmd, "{}", text);
    }

    #[test]
    fn tc_write_parse_identity_when_expressible(r in rule(), skip_sw in any::<bool>()) {
        let mut devices = tc::DeviceTable::with_names((0..8).map(|i| format!("eth{i}")));
        let cmd = tc::TcCommand { dev: "eth0".into(), rule: r, skip_sw, skip_hw: false };
        // Most random models are not tc-expressible; those that are must round-trip.
        if let Ok(text) = tc::command_to_string(&cmd, &devices) {
            let back = tc::parse_command(&text, &mut devices).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let again = tc::command_to_string(&back, &devices).unwrap();
            prop_assert_eq!(&again, &text);
        }
    }

    #[test]
    fn garbage_never_panics(line in "\\PC{0,120}") {
        let _ = testpmd::parse_command(&line);
        let _ = tc::parse_command(&line, &mut tc::DeviceTable::new());
        let _ = classbench::parse_file(&line, "g");
    }

    #[test]
    fn mangled_valid_lines_never_panic(idx in 0usize..52, cut in 0usize..400, junk in "[ a-z0-9:/.x-]{0,12}") {
        let text = corpus("testpmd_valid.flow");
        let lines: Vec<&str> = command_lines(&text).map(|(_, l)| l).collect();
        let line = lines[idx % lines.len()];
        let cut = line.char_indices().map(|(i, _)| i).nth(cut % line.len().max(1)).unwrap_or(line.len());
        let mangled = format!("{}{}{}", &line[..cut], junk, &line[cut..]);
        if let Err(e) = testpmd::parse_command(&mangled) {
            prop_assert!(e.column >= 1 && e.column <= mangled.chars().count() + 1);
        }
    }
}
