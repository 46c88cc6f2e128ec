//! ClassBench filter sets from the shared data beside the checkout classify like the oracle.
//! Missing data fails under CI=true and skips with the reason otherwise (nicbench-testenv).

use crate::oracle;
use nicbench_classify::{Algorithm, Classifier, ClassifierConfig, PacketKey};
use nicbench_rules::classbench;
use nicbench_rules::{Action, Rule};
use nicbench_wire::parse::{Eth, Ip, Ipv4, Layers, ParsedFrame, Tcp, Udp, L4};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::net::Ipv4Addr;

fn frame(src: u32, dst: u32, sp: u16, dp: u16, proto: u8) -> ParsedFrame {
    let mut l = Layers {
        eth: Some(Eth {
            dst: [0; 6],
            src: [0; 6],
            ethertype: 0x0800,
        }),
        ..Default::default()
    };
    l.ip = Some(Ip::V4(Ipv4 {
        src: Ipv4Addr::from(src),
        dst: Ipv4Addr::from(dst),
        proto,
        upper_proto: proto,
        tos: 0,
        ttl: 64,
        ihl: 5,
        total_len: 40,
        id: 0,
        dont_frag: false,
        more_frags: false,
        frag_offset: 0,
    }));
    l.l4 = match proto {
        6 => Some(L4::Tcp(Tcp {
            src_port: sp,
            dst_port: dp,
            seq: 0,
            ack: 0,
            flags: 0,
            header_len: 20,
            window: 0,
        })),
        17 => Some(L4::Udp(Udp {
            src_port: sp,
            dst_port: dp,
            len: 8,
        })),
        _ => None,
    };
    ParsedFrame {
        outer: l,
        frame_len: 64,
        ..Default::default()
    }
}

#[test]
fn test_classbench_files_match_oracle() {
    let Some(dir) = nicbench_testenv::classbench_or_skip("test_classbench_files_match_oracle") else {
        return;
    };
    let files = ["acl1_1k", "fw1_1k", "ipc1_1k"];
    let mut compared = 0;
    for name in files {
        // The folder is there: a set missing from it is broken data, never a skip.
        let path = dir.join(name);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let filters = classbench::parse_file(&text, name).unwrap();
        let rules: Vec<Rule> = filters
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let mut r = f.to_rule(i as u32);
                r.actions = vec![Action::Queue { index: (i % 16) as u16 }];
                r
            })
            .collect();
        let mut rng = StdRng::seed_from_u64(5);
        let frames: Vec<ParsedFrame> = (0..400)
            .map(|i| {
                if i % 4 == 3 {
                    return frame(
                        rng.random(),
                        rng.random(),
                        rng.random(),
                        rng.random(),
                        [6, 17, 1, 47][rng.random_range(0..4)],
                    );
                }
                // A point inside a random filter.
                let f = &filters[rng.random_range(0..filters.len())];
                let pick = |rng: &mut StdRng, a: Ipv4Addr, len: u8| {
                    let m = if len == 0 { 0 } else { u32::MAX << (32 - len as u32) };
                    (u32::from(a) & m) | (rng.random::<u32>() & !m)
                };
                let proto = if f.proto_mask == 0 {
                    [6, 17][rng.random_range(0..2)]
                } else {
                    f.proto
                };
                frame(
                    pick(&mut rng, f.src, f.src_prefix_len),
                    pick(&mut rng, f.dst, f.dst_prefix_len),
                    rng.random_range(f.src_ports.0..=f.src_ports.1),
                    rng.random_range(f.dst_ports.0..=f.dst_ports.1),
                    proto,
                )
            })
            .collect();
        let seqd: Vec<(usize, &Rule)> = rules.iter().enumerate().collect();
        // Three frames in four are points inside a filter: the oracle must match every one of
        // them (at that filter or a higher-priority one), so the comparison covers hits.
        let inside_hits = frames
            .iter()
            .enumerate()
            .filter(|(i, f)| i % 4 != 3 && oracle::classify(&seqd, f, 0).1[0].is_some())
            .count();
        assert_eq!(
            inside_hits, 300,
            "{name}: points inside filters that the oracle matched"
        );
        for algorithm in [Algorithm::Hybrid, Algorithm::TupleMerge, Algorithm::TupleSpace] {
            let (c, ids) = Classifier::with_rules(
                ClassifierConfig {
                    algorithm,
                    ..Default::default()
                },
                rules.clone(),
            )
            .unwrap();
            let r = c.reader();
            for f in &frames {
                let (verdict, path, _) = oracle::classify(&seqd, f, 0);
                let got = r.lookup(&PacketKey::from_frame(f));
                assert_eq!(got.verdict, verdict, "{name} {algorithm:?}");
                assert_eq!(got.rule, path[0].map(|i| ids[i]), "{name} {algorithm:?}");
                compared += 1;
            }
            let st = c.stats();
            eprintln!(
                "{name} {algorithm:?}: tables {:?} subtrees {:?}",
                st.tables_per_group, st.subtrees_per_group
            );
            if algorithm == Algorithm::Hybrid {
                assert_eq!(st.subtrees_per_group.len(), 1, "{name}: the settled group has a tree");
                assert_eq!(
                    st.tables_per_group.get(&0).copied().unwrap_or(0),
                    0,
                    "{name}: empty delta after settle"
                );
            }
        }
    }
    // Every set, every algorithm, every frame was compared with the oracle.
    assert_eq!(compared, files.len() * 3 * 400);
}

/// The classifier's workloads (benches, harness targets) find the ClassBench sets where the
/// tests do: both rules name the same folder.
#[test]
fn test_workload_and_tests_look_in_the_same_classbench_folder() {
    fn lexical(p: std::path::PathBuf) -> std::path::PathBuf {
        let mut out = std::path::PathBuf::new();
        for c in p.components() {
            match c {
                std::path::Component::ParentDir => assert!(out.pop(), "{} climbs above /", p.display()),
                std::path::Component::CurDir => {}
                other => out.push(other),
            }
        }
        out
    }
    assert_eq!(
        lexical(nicbench_classify::workload::classbench_dir()),
        lexical(nicbench_testenv::classbench_dir())
    );
}
