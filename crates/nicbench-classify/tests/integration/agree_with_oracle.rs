//! Random rule sets, updates and packets: the classifier agrees with the oracle on every
//! packet, for both algorithms, singly and in burst.

use crate::oracle;
use nicbench_classify::{
    Algorithm, Batch, Classifier, ClassifierConfig, PacketKey, RuleId, Update, UpdateError, Verdict,
};
use nicbench_rules::model::{EthItem, Ipv4Item, Ipv6Item, TcpItem, UdpItem, VlanItem, VxlanItem};
use nicbench_rules::{Action, Attr, Field, Item, Rule};
use nicbench_wire::parse::{Eth, Ip, Ipv4, Ipv6, Layers, ParsedFrame, Tcp, Tunnel, Udp, Vlan, L4};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use std::net::{Ipv4Addr, Ipv6Addr};

pub(crate) const V4: [[u8; 4]; 4] = [[10, 1, 1, 1], [10, 1, 2, 3], [10, 2, 0, 1], [192, 168, 1, 1]];

fn v4_field() -> impl Strategy<Value = Option<Field<Ipv4Addr>>> {
    (0..V4.len(), prop::sample::select(vec![0u32, 8, 16, 24, 28, 32]))
        .prop_map(|(i, len)| Field::prefix(Ipv4Addr::from(V4[i]), len))
}

fn port_field() -> impl Strategy<Value = Option<Field<u16>>> {
    prop_oneof![
        2 => Just(None),
        2 => (0u16..6).prop_map(|p| Some(Field::exact(p))),
        2 => (0u16..6, 0u16..6).prop_map(|(a, b)| Some(Field::range(a.min(b), a.max(b)))),
        1 => (0u16..8, prop::sample::select(vec![0xfffcu16, 0xff00, 0x0003])).prop_map(|(v, m)| Field::new(v, m, None)),
        1 => (0u16..8, 0u16..8).prop_map(|(a, b)| Field::new(a.min(b), 0xfffe, Some(a.max(b)))),
    ]
}

fn l3l4() -> impl Strategy<Value = Vec<Item>> {
    let ip4 = (
        v4_field(),
        v4_field(),
        prop::option::of(prop::sample::select(vec![6u8, 17])),
    )
        .prop_map(|(src, dst, proto)| {
            Item::Ipv4(Ipv4Item {
                src,
                dst,
                proto: proto.map(Field::exact),
                ..Default::default()
            })
        });
    let ip6 = (0u8..3, prop::sample::select(vec![0u32, 64, 120, 128])).prop_map(|(a, len)| {
        Item::Ipv6(Box::new(Ipv6Item {
            src: Field::prefix(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, a as u16), len),
            ..Default::default()
        }))
    });
    let ip = prop::option::of(prop_oneof![4 => ip4, 1 => ip6]);
    let l4 = prop::option::of(prop_oneof![
        (port_field(), port_field()).prop_map(|(src, dst)| Item::Tcp(TcpItem { src, dst, flags: None })),
        (port_field(), port_field()).prop_map(|(src, dst)| Item::Udp(UdpItem { src, dst })),
    ]);
    (ip, l4).prop_map(|(ip, l4)| ip.into_iter().chain(l4).collect())
}

fn pattern() -> impl Strategy<Value = Vec<Item>> {
    let vlan = prop::option::of(prop::option::of(1u16..3)).prop_map(|v| {
        v.map(|vid| {
            Item::Vlan(VlanItem {
                tci: vid.and_then(|vid| Field::new(vid, 0x0fff, None)),
                ..Default::default()
            })
        })
    });
    let plain = (any::<bool>(), vlan, l3l4()).prop_map(|(eth, vlan, rest)| {
        eth.then(|| Item::Eth(EthItem::default()))
            .into_iter()
            .chain(vlan)
            .chain(rest)
            .collect::<Vec<_>>()
    });
    let tunnel = (prop::option::of(0u32..3), l3l4()).prop_map(|(vni, inner)| {
        let mut p = vec![
            Item::Eth(EthItem::default()),
            Item::Ipv4(Ipv4Item::default()),
            Item::Udp(UdpItem::default()),
        ];
        p.push(Item::Vxlan(VxlanItem {
            vni: vni.map(Field::exact),
            ..Default::default()
        }));
        p.push(Item::Eth(EthItem::default()));
        p.extend(inner);
        p
    });
    prop_oneof![4 => plain, 1 => tunnel]
}

fn actions() -> impl Strategy<Value = Vec<Action>> {
    prop_oneof![
        4 => (0u16..4).prop_map(|q| vec![Action::Queue { index: q }]),
        1 => Just(vec![Action::Drop]),
        1 => (0u32..4, 0u16..4).prop_map(|(m, q)| vec![Action::Mark { id: m }, Action::Queue { index: q }]),
        3 => (0u32..4).prop_map(|g| vec![Action::Count, Action::Jump { group: g }]),
        1 => Just(vec![]),
    ]
}

pub(crate) fn rule() -> impl Strategy<Value = Rule> {
    (0u32..3, 0u32..3, pattern(), actions()).prop_map(|(group, priority, pattern, actions)| Rule {
        attr: Attr {
            group,
            priority,
            ingress: true,
            ..Default::default()
        },
        pattern,
        actions,
    })
}

/// Exact IPv4 5-tuple rules on the frames' small address and port space (many share a
/// key: the exact tables' duplicate path), sometimes with the protocol given as well.
pub(crate) fn exact_rule() -> impl Strategy<Value = Rule> {
    let addr = || (0..2usize).prop_map(|i| Some(Field::exact(Ipv4Addr::from(V4[i]))));
    let port = || (0u16..2).prop_map(|p| Some(Field::exact(p)));
    (
        0u32..3,
        0u32..3,
        addr(),
        addr(),
        any::<bool>(),
        any::<bool>(),
        port(),
        port(),
        actions(),
    )
        .prop_map(|(group, priority, src, dst, tcp, with_proto, sp, dp, actions)| {
            let proto = with_proto.then(|| Field::exact(if tcp { 6u8 } else { 17 }));
            let l4 = if tcp {
                Item::Tcp(TcpItem {
                    src: sp,
                    dst: dp,
                    flags: None,
                })
            } else {
                Item::Udp(UdpItem { src: sp, dst: dp })
            };
            Rule {
                attr: Attr {
                    group,
                    priority,
                    ingress: true,
                    ..Default::default()
                },
                pattern: vec![
                    Item::Eth(EthItem::default()),
                    Item::Ipv4(Ipv4Item {
                        src,
                        dst,
                        proto,
                        ..Default::default()
                    }),
                    l4,
                ],
                actions,
            }
        })
}

/// Updates biased to exact 5-tuple rules, with some wildcard ones in the same groups.
fn exact_step() -> impl Strategy<Value = Step> {
    let r = || prop_oneof![4 => exact_rule(), 1 => rule()];
    prop_oneof![
        6 => r().prop_map(Step::Insert),
        2 => any::<usize>().prop_map(Step::Delete),
        2 => (any::<usize>(), r()).prop_map(|(i, r)| Step::Modify(i, r)),
    ]
}

/// Updates that keep the start group (0) to exact 5-tuple rules (mostly: a second rule on
/// one key goes to the general tables), the wildcard rules in groups 1 and 2: the burst
/// lookup's exact-only start path, with its fall-backs (misses, jumps, marks).
fn exact_start_step() -> impl Strategy<Value = Step> {
    let r = || {
        prop_oneof![
            4 => exact_rule().prop_map(|mut r| {
                r.attr.group = 0;
                r
            }),
            1 => rule().prop_map(|mut r| {
                r.attr.group = 1 + r.attr.group % 2;
                r
            }),
        ]
    };
    prop_oneof![
        6 => r().prop_map(Step::Insert),
        2 => any::<usize>().prop_map(Step::Delete),
        2 => (any::<usize>(), r()).prop_map(|(i, r)| Step::Modify(i, r)),
    ]
}

fn layers() -> impl Strategy<Value = Layers> {
    layers_in(V4.len(), 8)
}

/// Frame layers with addresses from the first `addrs` of [`V4`] and ports below `ports`.
fn layers_in(addrs: usize, ports: u16) -> impl Strategy<Value = Layers> {
    let vlans = prop::collection::vec(1u16..3, 0..3);
    let ip = prop_oneof![
        3 => (0..addrs, 0..addrs, prop::sample::select(vec![6u8, 17])).prop_map(|(s, d, p)| Some((Ip::V4(Ipv4 {
            src: Ipv4Addr::from(V4[s]), dst: Ipv4Addr::from(V4[d]), proto: p, upper_proto: p, tos: 0, ttl: 64, ihl: 5,
            total_len: 40, id: 1, dont_frag: true, more_frags: false, frag_offset: 0 }), p))),
        1 => (0u16..3).prop_map(|a| Some((Ip::V6(Ipv6 {
            src: Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, a), dst: Ipv6Addr::LOCALHOST, next_header: 6,
            header_next_header: 6, traffic_class: 0, flow_label: 0, hop_limit: 64, payload_len: 20,
            ext_headers_len: 0, fragment: None }), 6))),
        1 => Just(None),
    ];
    (vlans, ip, 0..ports, 0..ports).prop_map(|(vlans, ip, sp, dp)| {
        let mut l = Layers {
            eth: Some(Eth {
                dst: [2, 0, 0, 0, 0, 1],
                src: [2, 0, 0, 0, 0, 2],
                ethertype: 0x0800,
            }),
            ..Default::default()
        };
        for (i, vid) in vlans.iter().take(2).enumerate() {
            l.vlans[i] = Some(Vlan {
                tpid: 0x8100,
                vid: *vid,
                pcp: 0,
                dei: false,
                inner_ethertype: 0x0800,
            });
        }
        l.vlan_count = vlans.len() as u8;
        if let Some((ip, proto)) = ip {
            l.ip = Some(ip);
            l.l4 = Some(if proto == 6 {
                L4::Tcp(Tcp {
                    src_port: sp,
                    dst_port: dp,
                    seq: 0,
                    ack: 0,
                    flags: 0x10,
                    header_len: 20,
                    window: 0,
                })
            } else {
                L4::Udp(Udp {
                    src_port: sp,
                    dst_port: dp,
                    len: 8,
                })
            });
        }
        l
    })
}

pub fn frame() -> impl Strategy<Value = ParsedFrame> {
    (layers(), prop::option::of((0u32..3, layers()))).prop_map(|(mut outer, tun)| {
        let mut f = ParsedFrame {
            frame_len: 100,
            ..Default::default()
        };
        if let Some((vni, inner)) = tun {
            outer.l4 = Some(L4::Udp(Udp {
                src_port: 5,
                dst_port: 4789,
                len: 60,
            }));
            if outer.ip.is_none() {
                outer.ip = Some(Ip::V4(Ipv4 {
                    src: Ipv4Addr::from(V4[0]),
                    dst: Ipv4Addr::from(V4[1]),
                    proto: 17,
                    upper_proto: 17,
                    tos: 0,
                    ttl: 64,
                    ihl: 5,
                    total_len: 80,
                    id: 1,
                    dont_frag: false,
                    more_frags: false,
                    frag_offset: 0,
                }));
            }
            f.tunnel = Some(Tunnel::Vxlan { vni, flags: 8 });
            f.inner = Some(inner);
        }
        f.outer = outer;
        f
    })
}

/// Mostly untunnelled frames (exact 5-tuple rules match outer headers only).
fn exact_frame() -> impl Strategy<Value = ParsedFrame> {
    prop_oneof![3 => layers_in(2, 2).prop_map(|outer| ParsedFrame { frame_len: 100, outer, ..Default::default() }), 1 => frame()]
}

#[derive(Debug, Clone)]
enum Step {
    Insert(Rule),
    Delete(usize),
    Modify(usize, Rule),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => rule().prop_map(Step::Insert),
        1 => any::<usize>().prop_map(Step::Delete),
        1 => (any::<usize>(), rule()).prop_map(|(i, r)| Step::Modify(i, r)),
    ]
}

/// Live rules in insertion order: (insertion seq, id, rule).
type Live = Vec<(usize, RuleId, Rule)>;

fn check(c: &Classifier, live: &Live, frames: &[ParsedFrame]) -> Result<(), TestCaseError> {
    let rules: Vec<(usize, &Rule)> = live.iter().map(|(s, _, r)| (*s, r)).collect();
    let reader = c.reader();
    let keys: Vec<PacketKey> = frames.iter().map(PacketKey::from_frame).collect();
    let mut burst = vec![
        nicbench_classify::Outcome {
            verdict: Verdict::Unmatched,
            mark: None,
            groups_traversed: 0,
            last_group: 0,
            rule: None
        };
        keys.len()
    ];
    reader.lookup_burst(&keys, &mut burst);
    for (i, f) in frames.iter().enumerate() {
        let (verdict, path, mark) = oracle::classify(&rules, f, 0);
        let got = reader.lookup(&keys[i]);
        prop_assert_eq!(got, burst[i], "burst and single lookup differ on packet {}", i);
        prop_assert_eq!(got.verdict, verdict, "packet {}: {:?}", i, f);
        prop_assert_eq!(got.groups_traversed as usize, path.len());
        prop_assert_eq!(got.mark, mark);
        let want_rule = path
            .last()
            .copied()
            .flatten()
            .map(|seq| live.iter().find(|l| l.0 == seq).map(|l| l.1));
        prop_assert_eq!(got.rule, want_rule.flatten());
        let (hops, o) = reader.trace(&keys[i]);
        prop_assert_eq!(o.verdict, got.verdict);
        prop_assert_eq!(hops.len(), path.len());
    }
    Ok(())
}

fn run(
    algorithm: Algorithm,
    steps: Vec<Step>,
    batch_every: usize,
    frames: Vec<ParsedFrame>,
) -> Result<(), TestCaseError> {
    run_settling(algorithm, steps, batch_every, &[], frames)
}

/// [`run`], calling `settle()` (which builds the Hybrid trees) after the batches whose
/// index is in `settle_after`, and checking against the oracle right after each settle,
/// so later updates land on a tree (tombstones, delta) before the final check.
fn run_settling(
    algorithm: Algorithm,
    steps: Vec<Step>,
    batch_every: usize,
    settle_after: &[usize],
    frames: Vec<ParsedFrame>,
) -> Result<(), TestCaseError> {
    run_with(
        ClassifierConfig {
            algorithm,
            ..Default::default()
        },
        steps,
        batch_every,
        settle_after,
        frames,
    )
}

/// [`run_settling`] with any configuration.
fn run_with(
    config: ClassifierConfig,
    steps: Vec<Step>,
    batch_every: usize,
    settle_after: &[usize],
    frames: Vec<ParsedFrame>,
) -> Result<(), TestCaseError> {
    let mut c = Classifier::new(config);
    let mut live: Live = Vec::new();
    let mut seq = 0usize;
    // Apply in batches of `batch_every` (1 = single updates); a refused batch changes nothing.
    for (chunk_index, chunk) in steps.chunks(batch_every.max(1)).enumerate() {
        let mut batch = Batch::new();
        let mut next = live.clone();
        let mut new_rules = Vec::new();
        for s in chunk {
            match s {
                Step::Insert(r) => {
                    batch.insert(r.clone());
                    new_rules.push((next.len(), r.clone()));
                    next.push((seq + new_rules.len() - 1, RuleId(u64::MAX), r.clone()));
                }
                Step::Delete(i) if !next.is_empty() => {
                    let at = i % next.len();
                    if next[at].1 == RuleId(u64::MAX) {
                        continue; // inserted in this same batch: no id yet
                    }
                    batch.delete(next[at].1);
                    next.remove(at);
                }
                Step::Modify(i, r) if !next.is_empty() => {
                    let at = i % next.len();
                    if next[at].1 == RuleId(u64::MAX) {
                        continue;
                    }
                    batch.modify(next[at].1, r.clone());
                    next[at].2 = r.clone();
                }
                _ => {}
            }
        }
        // Three in four one-operation batches go through the single-update API (its own
        // fast path for exact 5-tuple rules), the rest through `apply`.
        let result = if batch.len() == 1 && chunk_index % 4 != 0 {
            match batch.updates.pop() {
                Some(Update::Insert(r)) => c.insert(r).map(|id| vec![id]),
                Some(Update::Delete(id)) => c.delete(id).map(|()| Vec::new()),
                Some(Update::Modify(id, r)) => c.modify(id, r).map(|()| Vec::new()),
                None => Ok(Vec::new()),
            }
        } else {
            c.apply(batch)
        };
        match result {
            Ok(ids) => {
                let mut ids = ids.into_iter();
                for l in next.iter_mut().filter(|l| l.1 == RuleId(u64::MAX)) {
                    l.1 = ids.next().expect("one id per insert");
                }
                seq += new_rules.len();
                live = next;
            }
            Err(UpdateError::JumpCycle { .. }) => {}
            Err(e) => return Err(TestCaseError::fail(format!("unexpected refusal: {e}"))),
        }
        if settle_after.contains(&chunk_index) {
            c.settle();
            check(&c, &live, &frames[..frames.len().min(8)])?;
        }
    }
    prop_assert_eq!(c.len(), live.len());
    check(&c, &live, &frames)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn prop_tuple_merge_agrees_with_oracle(steps in prop::collection::vec(step(), 1..40), batch in 1usize..5,
                                           frames in prop::collection::vec(frame(), 40)) {
        run(Algorithm::TupleMerge, steps, batch, frames)?;
    }

    #[test]
    fn prop_hybrid_agrees_with_oracle(steps in prop::collection::vec(step(), 1..40), batch in 1usize..5,
                                      settle_after in prop::collection::vec(0usize..20, 0..4),
                                      frames in prop::collection::vec(frame(), 40)) {
        run_settling(Algorithm::Hybrid, steps, batch, &settle_after, frames)?;
    }

    #[test]
    fn prop_exact_single_updates_agree_with_oracle(steps in prop::collection::vec(exact_step(), 1..60),
                                                   frames in prop::collection::vec(exact_frame(), 40)) {
        run(Algorithm::TupleMerge, steps.clone(), 1, frames.clone())?;
        run(Algorithm::Hybrid, steps, 1, frames)?;
    }

    #[test]
    fn prop_exact_tables_agree_with_oracle(steps in prop::collection::vec(exact_step(), 1..60), batch in 1usize..5,
                                           settle_after in prop::collection::vec(0usize..20, 0..3),
                                           frames in prop::collection::vec(exact_frame(), 40)) {
        run(Algorithm::TupleMerge, steps.clone(), batch, frames.clone())?;
        run_settling(Algorithm::Hybrid, steps, batch, &settle_after, frames)?;
    }

    #[test]
    fn prop_exact_start_group_uncounted_agrees_with_oracle(steps in prop::collection::vec(exact_start_step(), 1..60), batch in 1usize..5,
                                                          settle_after in prop::collection::vec(0usize..20, 0..3),
                                                          frames in prop::collection::vec(exact_frame(), 40)) {
        // Without counting, a start group holding only exact tables takes the burst fast path.
        for algorithm in [Algorithm::TupleMerge, Algorithm::Hybrid] {
            let config = ClassifierConfig { algorithm, count: false, ..Default::default() };
            run_with(config, steps.clone(), batch, &settle_after, frames.clone())?;
        }
    }

    #[test]
    fn prop_tuple_space_agrees_with_oracle(steps in prop::collection::vec(step(), 1..40), batch in 1usize..5,
                                           frames in prop::collection::vec(frame(), 40)) {
        run(Algorithm::TupleSpace, steps, batch, frames)?;
    }
}

/// Many rules on few keys: long TupleMerge collision lists and table splits.
#[test]
fn test_collision_lists_and_many_tables() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let rules: Vec<Rule> = (0..300)
        .map(|_| rule().new_tree(&mut runner).unwrap().current())
        .collect();
    let frames: Vec<ParsedFrame> = (0..300)
        .map(|_| frame().new_tree(&mut runner).unwrap().current())
        .collect();
    for algorithm in [Algorithm::TupleMerge, Algorithm::TupleSpace] {
        let steps: Vec<Step> = rules.iter().cloned().map(Step::Insert).collect();
        run(algorithm, steps, 17, frames.clone()).unwrap();
    }
    // Hybrid: trees built after some batches, then more inserts, deletes and modifies
    // land on them; background rebuilds (every 64 changes) run as well.
    let steps: Vec<Step> = (0..600)
        .map(|_| step().new_tree(&mut runner).unwrap().current())
        .collect();
    run_settling(Algorithm::Hybrid, steps.clone(), 7, &[10, 30, 50, 80], frames.clone()).unwrap();
    run_settling(Algorithm::Hybrid, steps, 1, &[100, 300], frames).unwrap();
    // The settles above must really have built trees for this to test anything.
    let no_jumps = rules.into_iter().map(|mut r| {
        r.actions = vec![Action::Queue { index: 0 }];
        r
    });
    let (c, _) = Classifier::with_rules(
        ClassifierConfig {
            algorithm: Algorithm::Hybrid,
            ..Default::default()
        },
        no_jumps,
    )
    .unwrap();
    assert!(
        !c.stats().subtrees_per_group.is_empty(),
        "300 random rules give some group a tree"
    );
}
