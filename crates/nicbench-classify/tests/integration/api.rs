//! Behaviour of the public API: jump cycles, ties, modify, counters, pcap report.

use nicbench_classify::{
    classify_pcap, workload, Batch, Classifier, ClassifierConfig, Fate, FiveTuple, PacketKey, UpdateError, Verdict,
};
use nicbench_rules::model::{EthItem, Ipv4Item, UdpItem};
use nicbench_rules::{Action, Attr, Field, Item, Rule};
use std::net::Ipv4Addr;

pub(crate) fn rule(group: u32, priority: u32, pattern: Vec<Item>, actions: Vec<Action>) -> Rule {
    Rule {
        attr: Attr {
            group,
            priority,
            ingress: true,
            ..Default::default()
        },
        pattern,
        actions,
    }
}
fn any() -> Vec<Item> {
    vec![Item::Eth(EthItem::default())]
}
fn udp_dst(port: u16) -> Vec<Item> {
    vec![
        Item::Eth(EthItem::default()),
        Item::Ipv4(Ipv4Item::default()),
        Item::Udp(UdpItem {
            dst: Some(Field::exact(port)),
            src: None,
        }),
    ]
}
fn key(dport: u16) -> PacketKey {
    PacketKey::ipv4_5tuple(Ipv4Addr::new(1, 1, 1, 1), Ipv4Addr::new(2, 2, 2, 2), 9, dport, 17, 100)
}

/// A batch that modifies a jump rule (dropping its jump) and then deletes it takes the
/// edge away once, not twice: another rule with the same edge keeps it counted, so a
/// later reverse jump is still refused. (Found by the oracle proptest: the delete used
/// to see the rule as it was before the batch.)
#[test]
fn test_modify_then_delete_in_one_batch_keeps_the_jump_graph_right() {
    let mut c = Classifier::default();
    let a = c.insert(rule(1, 0, any(), vec![Action::Jump { group: 0 }])).unwrap();
    c.insert(rule(1, 1, any(), vec![Action::Jump { group: 0 }])).unwrap();
    let mut b = Batch::new();
    b.modify(a, rule(1, 0, any(), vec![Action::Queue { index: 1 }]));
    b.delete(a);
    c.apply(b).unwrap();
    assert_eq!(c.len(), 1);
    let e = c
        .insert(rule(0, 0, any(), vec![Action::Jump { group: 1 }]))
        .unwrap_err();
    assert!(
        matches!(
            e,
            UpdateError::JumpCycle { from: 0, to: 1, .. } | UpdateError::JumpCycle { from: 1, to: 0, .. }
        ),
        "{e}"
    );
    // Two modifies of one rule in a batch: the second replaces the first's jump, once.
    let x = c.insert(rule(2, 0, any(), vec![Action::Jump { group: 1 }])).unwrap();
    let mut b = Batch::new();
    b.modify(x, rule(2, 0, any(), vec![Action::Jump { group: 3 }]));
    b.modify(x, rule(2, 0, any(), vec![Action::Queue { index: 2 }]));
    c.apply(b).unwrap();
    assert!(
        c.insert(rule(1, 2, any(), vec![Action::Jump { group: 2 }])).is_ok(),
        "2 no longer jumps anywhere"
    );
    assert!(
        matches!(
            c.insert(rule(0, 1, any(), vec![Action::Jump { group: 1 }])),
            Err(UpdateError::JumpCycle { .. })
        ),
        "1 -> 0 still counted"
    );
}

#[test]
fn test_jump_cycle_refused_and_nothing_applied() {
    let mut c = Classifier::default();
    c.insert(rule(0, 0, any(), vec![Action::Jump { group: 1 }])).unwrap();
    c.insert(rule(1, 0, any(), vec![Action::Jump { group: 2 }])).unwrap();
    let e = c
        .insert(rule(2, 0, any(), vec![Action::Jump { group: 0 }]))
        .unwrap_err();
    assert!(matches!(e, UpdateError::JumpCycle { .. }), "{e}");
    assert!(matches!(
        c.insert(rule(3, 0, any(), vec![Action::Jump { group: 3 }])),
        Err(UpdateError::JumpCycle { .. })
    ));
    // A refused batch leaves no trace, even its valid parts.
    let mut b = Batch::new();
    b.insert(rule(2, 0, any(), vec![Action::Queue { index: 5 }]));
    b.insert(rule(2, 1, any(), vec![Action::Jump { group: 1 }]));
    // 2 -> 1 closes the cycle 1 -> 2 -> 1.
    assert!(matches!(c.apply(b), Err(UpdateError::JumpCycle { .. })));
    assert_eq!(c.len(), 2);
    let o = c.reader().lookup(&key(1));
    assert_eq!(
        (o.verdict, o.groups_traversed, o.last_group),
        (Verdict::Unmatched, 3, 2)
    );
    // Deleting the edge that closed the cycle makes the back edge legal.
    let ids = c.rule_ids();
    c.delete(ids[1]).unwrap();
    c.insert(rule(2, 0, any(), vec![Action::Jump { group: 0 }])).unwrap();
}

/// The exact 5-tuple rule `1.1.1.1:9 -> 2.2.2.2:dport` over UDP (what [`key`] carries).
fn exact_udp(dport: u16) -> Vec<Item> {
    let ip = Ipv4Item {
        src: Some(Field::exact(Ipv4Addr::new(1, 1, 1, 1))),
        dst: Some(Field::exact(Ipv4Addr::new(2, 2, 2, 2))),
        ..Default::default()
    };
    vec![
        Item::Eth(EthItem::default()),
        Item::Ipv4(ip),
        Item::Udp(UdpItem {
            src: Some(Field::exact(9)),
            dst: Some(Field::exact(dport)),
        }),
    ]
}

/// Single inserts and modifies of exact 5-tuple rules (their fast path) onto a key another
/// rule holds: the second rule goes to the general tables and priorities still decide.
#[test]
fn test_single_exact_updates_onto_a_held_key() {
    let mut c = Classifier::default();
    let r = c.reader();
    let q = |i: u16| Verdict::Fate(Fate::Queue { index: i });
    let a = c
        .insert(rule(0, 1, exact_udp(1), vec![Action::Queue { index: 1 }]))
        .unwrap();
    let b = c
        .insert(rule(0, 0, exact_udp(1), vec![Action::Queue { index: 2 }]))
        .unwrap();
    assert_eq!(r.lookup(&key(1)).verdict, q(2), "the duplicate, higher priority, wins");
    c.delete(b).unwrap();
    assert_eq!(r.lookup(&key(1)).verdict, q(1));
    let d = c
        .insert(rule(0, 0, exact_udp(2), vec![Action::Queue { index: 4 }]))
        .unwrap();
    assert_eq!(r.lookup(&key(2)).verdict, q(4));
    c.modify(d, rule(0, 0, exact_udp(1), vec![Action::Queue { index: 5 }]))
        .unwrap();
    assert_eq!(
        (r.lookup(&key(1)).verdict, r.lookup(&key(2)).verdict),
        (q(5), Verdict::Unmatched),
        "moved onto a's key"
    );
    c.modify(d, rule(0, 2, exact_udp(1), vec![Action::Queue { index: 6 }]))
        .unwrap();
    assert_eq!(r.lookup(&key(1)).verdict, q(1), "now below a");
    c.modify(d, rule(0, 0, exact_udp(2), vec![Action::Queue { index: 6 }]))
        .unwrap();
    c.modify(a, rule(0, 1, exact_udp(1), vec![Action::Queue { index: 7 }]))
        .unwrap();
    assert_eq!((r.lookup(&key(1)).verdict, r.lookup(&key(2)).verdict), (q(7), q(6)));
    assert_eq!(
        c.rule_info(a).map(|i| i.actions),
        Some(vec![Action::Queue { index: 7 }])
    );
    assert_eq!(c.len(), 2);
}

#[test]
fn test_priority_then_insertion_order_and_modify_keeps_place() {
    let mut c = Classifier::default();
    let a = c
        .insert(rule(0, 1, udp_dst(53), vec![Action::Queue { index: 1 }]))
        .unwrap();
    let b = c
        .insert(rule(0, 1, udp_dst(53), vec![Action::Queue { index: 2 }]))
        .unwrap();
    let r = c.reader();
    assert_eq!(r.lookup(&key(53)).rule, Some(a), "tie: earlier rule wins");
    c.insert(rule(0, 0, udp_dst(53), vec![Action::Drop])).unwrap();
    assert_eq!(
        r.lookup(&key(53)).verdict,
        Verdict::Fate(Fate::Drop),
        "lower number wins"
    );
    let ids = c.rule_ids();
    c.delete(ids[2]).unwrap();
    // Modify a: same id, new actions, still first among equals.
    c.modify(a, rule(0, 1, udp_dst(53), vec![Action::Queue { index: 7 }]))
        .unwrap();
    let o = r.lookup(&key(53));
    assert_eq!((o.rule, o.verdict), (Some(a), Verdict::Fate(Fate::Queue { index: 7 })));
    // Modify a's pattern away: b takes over.
    c.modify(a, rule(0, 1, udp_dst(54), vec![Action::Queue { index: 7 }]))
        .unwrap();
    assert_eq!(r.lookup(&key(53)).rule, Some(b));
    assert_eq!(r.lookup(&key(54)).rule, Some(a));
    assert!(matches!(
        c.delete(nicbench_classify::RuleId(12345)),
        Err(UpdateError::UnknownRule { .. })
    ));
}

#[test]
fn test_counters_and_stale_ids() {
    let mut c = Classifier::default();
    let a = c
        .insert(rule(0, 0, udp_dst(53), vec![Action::Jump { group: 1 }]))
        .unwrap();
    let b = c
        .insert(rule(
            1,
            0,
            any(),
            vec![Action::Mark { id: 9 }, Action::Queue { index: 3 }],
        ))
        .unwrap();
    let r = c.reader();
    let keys = vec![key(53); 70];
    let mut out = vec![r.lookup(&key(1)); 70];
    r.lookup_burst(&keys, &mut out);
    assert!(out
        .iter()
        .all(|o| o.verdict == Verdict::Fate(Fate::Queue { index: 3 }) && o.mark == Some(9) && o.groups_traversed == 2));
    assert_eq!(c.counters(a), Some((70, 7000)));
    assert_eq!(c.counters(b), Some((70, 7000)));
    c.delete(a).unwrap();
    assert_eq!(c.counters(a), None);
    // The slot is reused after another commit; the old id stays dead, the new rule starts at 0.
    c.insert(rule(0, 5, any(), vec![Action::Drop])).unwrap();
    let n = c.insert(rule(0, 0, udp_dst(53), vec![Action::Drop])).unwrap();
    assert_eq!(c.counters(a), None);
    assert_eq!(c.counters(n), Some((0, 0)));
    let stats = c.stats();
    assert_eq!((stats.rules, stats.groups), (3, 2));
    assert!(stats.memory_bytes > 0);
    assert_eq!(stats.memory_bytes_per_rule, stats.memory_bytes as f64 / 3.0);
}

#[test]
fn test_classify_pcap_report() {
    let dir = std::env::temp_dir().join(format!("nicbench-classify-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.pcap");
    let mut w = nicbench_pcap::PcapWriter::create(&path, 65535).unwrap();
    // Eth/IPv4/UDP to port 53 and to port 80, plus a runt.
    let frame = |dport: u16| {
        let mut f = vec![0u8; 42];
        f[12] = 0x08;
        f[14] = 0x45;
        f[16..18].copy_from_slice(&28u16.to_be_bytes());
        f[22] = 64;
        f[23] = 17;
        f[36..38].copy_from_slice(&dport.to_be_bytes());
        f[38..40].copy_from_slice(&8u16.to_be_bytes());
        f
    };
    for i in 0..10u64 {
        w.write_packet(i, 42, &frame(53)).unwrap();
    }
    w.write_packet(11, 42, &frame(80)).unwrap();
    w.write_packet(12, 5, &[1, 2, 3, 4, 5]).unwrap();
    w.finish().unwrap();
    let mut c = Classifier::default();
    let q = c
        .insert(rule(0, 0, udp_dst(53), vec![Action::Queue { index: 4 }]))
        .unwrap();
    c.insert(rule(0, 1, udp_dst(80), vec![Action::Drop])).unwrap();
    let mut progress = Vec::new();
    let rep = classify_pcap(&c, &path, 1, &mut |done| progress.push(done)).unwrap();
    assert_eq!((rep.packets, rep.bytes), (12, 10 * 42 + 42 + 5));
    assert_eq!(rep.per_queue_packets.get(&4), Some(&10));
    assert_eq!((rep.dropped, rep.unmatched), (1, 1));
    let hits = rep.rules.iter().find(|h| h.rule_id == q).unwrap();
    assert_eq!((hits.hits, hits.bytes, hits.priority), (10, 420, 0));
    // 12 packets are less than one burst: one progress report, at the end.
    assert_eq!(progress, [12]);
    assert!(serde_json::to_string(&rep).unwrap().contains("per_queue_packets"));
    let missing = classify_pcap(&c, &dir.join("missing.pcap"), 1, &mut |_| {}).unwrap_err();
    assert!(missing.to_string().starts_with("reading the capture: "), "{missing}");
    assert!(
        missing.to_string().contains("missing.pcap"),
        "names the file: {missing}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn test_deferred_updates_become_visible_together() {
    let mut c = Classifier::default();
    let r = c.reader();
    let one = |rule: Rule| Batch {
        updates: vec![nicbench_classify::Update::Insert(rule)],
    };
    let id = c
        .apply_deferred(one(rule(0, 0, udp_dst(53), vec![Action::Queue { index: 1 }])))
        .unwrap()[0];
    assert_eq!(r.lookup(&key(53)).verdict, Verdict::Unmatched, "not published yet");
    assert_eq!(c.deferred_ops(), 1);
    assert!(
        matches!(
            c.apply_deferred(Batch {
                updates: vec![nicbench_classify::Update::Delete(nicbench_classify::RuleId(999))]
            }),
            Err(UpdateError::UnknownRule { .. })
        ),
        "validation errors are immediate"
    );
    c.flush();
    assert_eq!((c.deferred_ops(), r.lookup(&key(53)).rule), (0, Some(id)));
    // Many single deferred updates publish on their own, in order.
    for p in 1000..3000u16 {
        c.apply_deferred(one(rule(0, 1, udp_dst(p), vec![Action::Queue { index: 2 }])))
            .unwrap();
    }
    assert!(c.deferred_ops() < 2000, "published along the way");
    assert_eq!(r.lookup(&key(1000)).verdict, Verdict::Fate(Fate::Queue { index: 2 }));
    c.flush();
    assert_eq!(r.lookup(&key(2999)).verdict, Verdict::Fate(Fate::Queue { index: 2 }));
    assert_eq!(c.len(), 2001);
}

/// The compact-key burst lookup gives what the per-key lookup gives, across bursts, on
/// exact TCP and UDP tables (disjoint: one probe per key), with a higher-priority wildcard
/// rule and an exact rule that also pins TCP flags (an overlapping exact table: the
/// per-table path), for hits, misses and other protocols.
#[test]
fn test_tuple_burst_lookup_agrees_with_single_lookups() {
    let (mut rules, keys) = workload::exact5(3000, 5);
    let mut tuples: Vec<FiveTuple> = keys
        .iter()
        .map(|k| FiveTuple {
            frame_bytes: 64,
            ..FiveTuple::of_key(k)
        })
        .collect();
    // Misses (another source port), and protocols no exact table holds.
    let n = tuples.len();
    for i in (0..n).step_by(7) {
        let mut t = tuples[i];
        t.src_port ^= 0x5a5a;
        t.proto = [6, 17, 1, 47][i % 4];
        tuples.push(t);
    }
    // A wildcard that beats the exact rules on UDP port 53.
    rules.push(Rule {
        attr: Attr {
            priority: 0,
            ingress: true,
            ..Default::default()
        },
        pattern: udp_dst(53),
        actions: vec![Action::Drop],
    });
    let t0 = tuples[0];
    tuples.push(FiveTuple {
        dst_port: 53,
        proto: 17,
        ..t0
    });
    // The first TCP rule again, inserted first (ties go to it) and also requiring SYN
    // clear: a second exact table that overlaps the TCP one.
    let tcp = rules
        .iter()
        .position(|r| matches!(r.pattern.get(2), Some(Item::Tcp(_))))
        .expect("a TCP rule");
    let mut flagged = rules[tcp].clone();
    if let Some(Item::Tcp(t)) = flagged.pattern.get_mut(2) {
        t.flags = Some(Field {
            value: 0,
            mask: 0x02,
            last: None,
        });
    }
    flagged.attr.priority = 0;
    flagged.actions = vec![Action::Queue { index: 7 }];
    for (exact_match, with_flagged) in [(true, false), (true, true), (false, true)] {
        let set = if with_flagged {
            std::iter::once(flagged.clone()).chain(rules.iter().cloned()).collect()
        } else {
            rules.clone()
        };
        let (c, _) = Classifier::with_rules(
            ClassifierConfig {
                exact_match,
                ..Default::default()
            },
            set,
        )
        .unwrap();
        let r = c.reader();
        let mut out = vec![r.lookup(&key(1)); tuples.len()];
        r.lookup_burst_tuples(&tuples, &mut out);
        let mut hits = 0;
        for (t, o) in tuples.iter().zip(&out) {
            assert_eq!(*o, r.lookup(&t.key()), "{t:?} exact_match={exact_match}");
            hits += o.rule.is_some() as usize;
        }
        if with_flagged {
            assert_eq!(
                out[tcp].verdict,
                Verdict::Fate(Fate::Queue { index: 7 }),
                "the flagged rule wins"
            );
        }
        assert!(hits >= n, "every generated key hits: {hits}");
    }
}
