//! ClassBench filter sets from shared/data (skipped when absent) classify like the oracle.

use crate::oracle;
use nicbench_classify::{Algorithm, Classifier, ClassifierConfig, PacketKey};
use nicbench_rules::classbench;
use nicbench_rules::{Action, Rule};
use nicbench_wire::parse::{Eth, Ip, Ipv4, Layers, ParsedFrame, Tcp, Udp, L4};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::net::Ipv4Addr;

const DIR: &str = "/work/shared/data/classbench";

fn frame(src: u32, dst: u32, sp: u16, dp: u16, proto: u8) -> ParsedFrame {
    let mut l = Layers { eth: Some(Eth { dst: [0; 6], src: [0; 6], ethertype: 0x0800 }), ..Default::default() };
    l.ip = Some(Ip::V4(Ipv4 { src: Ipv4Addr::from(src), dst: Ipv4Addr::from(dst), proto, upper_proto: proto, tos: 0, ttl: 64,
        ihl: 5, total_len: 40, id: 0, dont_frag: false, more_frags: false, frag_offset: 0 }));
    l.l4 = match proto {
        6 => Some(L4::Tcp(Tcp { src_port: sp, dst_port: dp, seq: 0, ack: 0, flags: 0, header_len: 20, window: 0 })),
        17 => Some(L4::Udp(Udp { src_port: sp, dst_port: dp, len: 8 })),
        _ => None,
    };
    ParsedFrame { outer: l, frame_len: 64, ..Default::default() }
}

#[test]
fn test_classbench_files_match_oracle() {
    let files = ["acl1_1k", "fw1_1k", "ipc1_1k"];
    let mut ran = 0;
    for name in files {
        let path = format!("{DIR}/{name}");
        let Ok(text) = std::fs::read_to_string(&path) else {
            eprintln!("skipping {path}: not present");
            continue;
        };
        let filters = classbench::parse_file(&text, name).unwrap();
        let rules: Vec<Rule> = filters.iter().enumerate().map(|(i, f)| {
            let mut r = f.to_rule(i as u32);
            r.actions = vec![Action::Queue { index: (i % 16) as u16 }];
            r
        }).collect();
        let mut rng = StdRng::seed_from_u64(5);
        let frames: Vec<ParsedFrame> = (0..400).map(|i| {
            if i % 4 == 3 {
                return frame(rng.random(), rng.random(), rng.random(), rng.random(), [6, 17, 1, 47][rng.random_range(0..4)]);
            }
            // A point inside a random filter.
            let f = &filters[rng.random_range(0..filters.len())];
            let pick = |rng: &mut StdRng, a: Ipv4Addr, len: u8| {
                let m = if len == 0 { 0 } else { u32::MAX << (32 - len as u32) };
                (u32::from(a) & m) | (rng.random::<u32>() & !m)
            };
            let proto = if f.proto_mask == 0 { [6, 17][rng.random_range(0..2)] } else { f.proto };
            frame(pick(&mut rng, f.src, f.src_prefix_len), pick(&mut rng, f.dst, f.dst_prefix_len),
                  rng.random_range(f.src_ports.0..=f.src_ports.1), rng.random_range(f.dst_ports.0..=f.dst_ports.1), proto)
        }).collect();
        let seqd: Vec<(usize, &Rule)> = rules.iter().enumerate().collect();
        for algorithm in [Algorithm::Hybrid, Algorithm::TupleMerge, Algorithm::TupleSpace] {
            let (c, ids) = Classifier::with_rules(ClassifierConfig { algorithm, ..Default::default() }, rules.clone()).unwrap();
            let r = c.reader();
            for f in &frames {
                let (verdict, path, _) = oracle::classify(&seqd, f, 0);
                let got = r.lookup(&PacketKey::from_frame(f));
                assert_eq!(got.verdict, verdict, "{name} {algorithm:?}");
                assert_eq!(got.rule, path[0].map(|i| ids[i]), "{name} {algorithm:?}");
            }
            let st = c.stats();
            eprintln!("{name} {algorithm:?}: tables {:?} subtrees {:?}", st.tables_per_group, st.subtrees_per_group);
            if algorithm == Algorithm::Hybrid {
                assert_eq!(st.subtrees_per_group.len(), 1, "{name}: the settled group has a tree");
                assert_eq!(st.tables_per_group.get(&0).copied().unwrap_or(0), 0, "{name}: empty delta after settle");
            }
        }
        ran += 1;
    }
    eprintln!("classbench files checked: {ran}");
}
