//! The tuple fast path of `Reader::lookup_burst_tuples` (a settled Hybrid start group looked
//! up on compact 5-tuple keys) gives exactly what the general path gives: the per-key lookup
//! of the tuple's full `PacketKey`. Random rules of every shape (tree rules whose inline
//! check is partial and need the full check, exact 5-tuple rules, jumps to other groups,
//! marks) and random tuples; and the switch between the paths as updates fill the Hybrid
//! delta (general path) and a settle empties it (fast path again).

use crate::agree_with_oracle::{exact_rule, rule, V4};
use crate::api::rule as rule_at;
use nicbench_classify::{Algorithm, Classifier, ClassifierConfig, FiveTuple, Outcome, Reader, Verdict};
use nicbench_rules::model::{Ipv4Item, TcpItem};
use nicbench_rules::{Action, Field, Item, Rule};
use proptest::prelude::*;
use std::net::Ipv4Addr;

/// Tuples on the rules' small address and port space (so that many hit), some with
/// protocols without ports and some with random addresses.
fn tuple() -> impl Strategy<Value = FiveTuple> {
    let addr = prop_oneof![3 => (0..V4.len()).prop_map(|i| u32::from(Ipv4Addr::from(V4[i]))), 1 => any::<u32>()];
    (
        addr.clone(),
        addr,
        0u16..8,
        0u16..8,
        prop::sample::select(vec![6u8, 17, 1, 47]),
        64u16..1500,
    )
        .prop_map(|(src, dst, src_port, dst_port, proto, frame_bytes)| FiveTuple {
            src,
            dst,
            src_port,
            dst_port,
            proto,
            frame_bytes,
        })
}

/// Two rules in three in the start group (0), so that it usually has the TupleMerge tables
/// a tree is built for; the rest in group 1, which the jumps reach.
fn start_heavy(rules: impl Strategy<Value = Rule>) -> impl Strategy<Value = Rule> {
    rules.prop_map(|mut r| {
        r.attr.group %= 2;
        r
    })
}

/// An outcome no lookup gives, to fill the output with.
const UNSET: Outcome = Outcome {
    verdict: Verdict::Unmatched,
    mark: Some(u32::MAX),
    groups_traversed: u32::MAX,
    last_group: u32::MAX,
    rule: None,
};

/// Asserts that the burst lookup of `tuples` equals the per-key lookup of each tuple's key;
/// returns how many matched a rule.
fn assert_agree(r: &Reader, tuples: &[FiveTuple], what: &str) -> Result<usize, TestCaseError> {
    let mut out = vec![UNSET; tuples.len()];
    r.lookup_burst_tuples(tuples, &mut out);
    for (t, o) in tuples.iter().zip(&out) {
        prop_assert_eq!(*o, r.lookup(&t.key()), "{} {:?}", what, t);
    }
    Ok(out.iter().filter(|o| o.rule.is_some()).count())
}

/// Whether the start group's Hybrid delta is empty, i.e. the tuple fast path serves it.
fn fast_path(c: &Classifier) -> bool {
    c.stats().tables_per_group.get(&0).copied().unwrap_or(0) == 0
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Settled Hybrid classifiers (fast path) agree with the per-key lookup, counting or
    /// not; then single updates fill the delta (general path) and a settle empties it.
    #[test]
    fn prop_tuple_fast_path_agrees_with_general_path(
        rules in prop::collection::vec(prop_oneof![3 => start_heavy(rule()), 1 => exact_rule()], 1..60),
        more in prop::collection::vec(rule(), 1..8),
        tuples in prop::collection::vec(tuple(), 1..100),
        count in any::<bool>(),
    ) {
        let config = ClassifierConfig { algorithm: Algorithm::Hybrid, count, ..Default::default() };
        let Ok((mut c, _)) = Classifier::with_rules(config, rules) else { return Ok(()) };
        let r = c.reader();
        // Which path serves group 0 (a tree is built for a few rules and up) is whatever
        // the updates leave: the outcomes must not depend on it.
        assert_agree(&r, &tuples, "settled")?;
        for m in more {
            let _ = c.insert(m);
            assert_agree(&r, &tuples, "after an update")?;
        }
        c.settle();
        assert_agree(&r, &tuples, "settled again")?;
    }
}

/// The switch between the paths on a fixed set, checked to happen: a tree with rules of
/// every kind the fast path hands on (a partial inline check: TTL; a jump to a group the
/// general walk then serves; a mark), then a rule inserted into the delta (general path for
/// the whole group), then settled (fast path again), with every tuple's outcome equal to its
/// per-key lookup throughout and the counters equal to the hits.
#[test]
fn test_tuple_fast_path_switches_with_the_delta() {
    let v4 = |a: [u8; 4], len: u32| Field::prefix(Ipv4Addr::from(a), len);
    let ip = |src, dst| {
        Item::Ipv4(Ipv4Item {
            src,
            dst,
            ..Default::default()
        })
    };
    let rules = vec![
        // TTL is not in the tree's inline check: this rule needs the full check.
        rule_at(
            0,
            0,
            vec![Item::Ipv4(Ipv4Item {
                src: v4([10, 1, 0, 0], 16),
                ttl: Some(Field::exact(64)),
                ..Default::default()
            })],
            vec![Action::Queue { index: 1 }],
        ),
        rule_at(
            0,
            1,
            vec![ip(v4([10, 2, 0, 0], 16), None)],
            vec![Action::Jump { group: 1 }],
        ),
        rule_at(
            0,
            1,
            vec![ip(v4([10, 3, 0, 0], 16), None)],
            vec![Action::Mark { id: 7 }, Action::Queue { index: 2 }],
        ),
        rule_at(
            0,
            2,
            vec![
                ip(None, None),
                Item::Tcp(TcpItem {
                    dst: Some(Field::range(0, 99)),
                    ..Default::default()
                }),
            ],
            vec![Action::Queue { index: 3 }],
        ),
        rule_at(1, 0, vec![ip(None, v4([192, 168, 0, 0], 16))], vec![Action::Drop]),
    ];
    let (mut c, ids) = Classifier::with_rules(ClassifierConfig::default(), rules).unwrap();
    let reader = c.reader();
    let t = |src: [u8; 4], dst: [u8; 4], dport: u16, proto: u8| {
        FiveTuple::new(Ipv4Addr::from(src), Ipv4Addr::from(dst), 5, dport, proto, 100)
    };
    // 70 tuples: more than two bursts, the last one partial.
    let base = [
        t([10, 1, 2, 3], [1, 1, 1, 1], 80, 6),
        t([10, 2, 2, 3], [192, 168, 1, 1], 80, 17),
        t([10, 2, 2, 3], [8, 8, 8, 8], 80, 17),
        t([10, 3, 0, 1], [1, 1, 1, 1], 443, 6),
        t([11, 0, 0, 1], [1, 1, 1, 1], 53, 6),
        t([11, 0, 0, 1], [1, 1, 1, 1], 53, 1),
        t([11, 0, 0, 1], [1, 1, 1, 1], 500, 6),
    ];
    let tuples: Vec<FiveTuple> = (0..70).map(|i| base[i % base.len()]).collect();
    let check = |what: &str| {
        let mut out = vec![UNSET; tuples.len()];
        reader.lookup_burst_tuples(&tuples, &mut out);
        for (t, o) in tuples.iter().zip(&out) {
            assert_eq!(*o, reader.lookup(&t.key()), "{what} {t:?}");
        }
        out
    };
    assert!(fast_path(&c));
    let out = check("settled");
    let first: Vec<Option<u32>> = out[..base.len()]
        .iter()
        .map(|o| o.rule.map(|id| ids.iter().position(|&x| x == id).unwrap() as u32))
        .collect();
    // TTL 64 rule; jump then drop in group 1; jump, then unmatched in group 1; mark; TCP range; ICMP: no ports, no match; TCP port out of range.
    assert_eq!(first, [Some(0), Some(4), None, Some(2), Some(3), None, None]);
    assert_eq!(
        (out[1].groups_traversed, out[2].groups_traversed, out[3].mark),
        (2, 2, Some(7))
    );
    // The counters count the fast path's hits (100 bytes each), reading each tuple's length.
    let (hits, bytes) = c.counters(ids[0]).unwrap();
    assert_eq!(
        (hits, bytes),
        (10 * 2, 10 * 2 * 100),
        "10 tuples, looked up in burst and singly"
    );

    let extra = c
        .insert(rule_at(
            0,
            0,
            vec![ip(v4([11, 0, 0, 0], 8), None)],
            vec![Action::Queue { index: 9 }],
        ))
        .unwrap();
    assert!(
        !fast_path(&c),
        "the new rule is in the delta: the general path serves the group"
    );
    let out = check("with a delta");
    assert_eq!(out[4].rule, Some(extra));
    assert_eq!(out[5].rule, Some(extra), "the delta rule has no ports: ICMP matches");
    c.settle();
    assert!(fast_path(&c));
    let out = check("settled again");
    assert_eq!((out[4].rule, out[0].rule), (Some(extra), Some(ids[0])));
}
