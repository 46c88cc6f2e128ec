//! Shared by the benches: rule sets and traces.
#![allow(dead_code)]

use nicbench_classify::PacketKey;
use nicbench_rules::classbench::{self, ClassBenchFilter};
use nicbench_rules::generate::{generate, RuleSetKind};
use nicbench_rules::{Action, Item, Rule};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::net::Ipv4Addr;

pub const CLASSBENCH_DIR: &str = "/work/shared/data/classbench";

/// Exact 5-tuple rules (queue actions) and one key hitting each.
pub fn exact5(count: usize, seed: u64) -> (Vec<Rule>, Vec<PacketKey>) {
    let rules = generate(RuleSetKind::Exact5, count, 0, seed);
    let keys = rules
        .iter()
        .map(|r| {
            let (Item::Ipv4(ip), l4) = (&r.pattern[1], &r.pattern[2]) else { unreachable!() };
            let (sp, dp, proto) = match l4 {
                Item::Tcp(t) => (t.src.unwrap().value, t.dst.unwrap().value, 6),
                Item::Udp(u) => (u.src.unwrap().value, u.dst.unwrap().value, 17),
                _ => unreachable!(),
            };
            PacketKey::ipv4_5tuple(ip.src.unwrap().value, ip.dst.unwrap().value, sp, dp, proto, 64)
        })
        .collect();
    (rules, keys)
}

/// A ClassBench file's filters, or `None` when the file is absent.
pub fn classbench_filters(name: &str) -> Option<Vec<ClassBenchFilter>> {
    let text = std::fs::read_to_string(format!("{CLASSBENCH_DIR}/{name}")).ok()?;
    classbench::parse_file(&text, name).ok()
}

/// Filters of a generated ClassBench-like set (generate() maps them to rules in order).
pub fn generated_filters(kind: RuleSetKind, count: usize, seed: u64) -> Vec<ClassBenchFilter> {
    // Rebuild the filters from the rules: prefixes and port ranges are all that matters.
    generate(kind, count, 0, seed).iter().map(filter_of_rule).collect()
}

fn filter_of_rule(r: &Rule) -> ClassBenchFilter {
    let mut f = ClassBenchFilter {
        src: Ipv4Addr::UNSPECIFIED, src_prefix_len: 0, dst: Ipv4Addr::UNSPECIFIED, dst_prefix_len: 0,
        src_ports: (0, u16::MAX), dst_ports: (0, u16::MAX), proto: 0, proto_mask: 0,
    };
    let port = |p: Option<nicbench_rules::Field<u16>>| p.map_or((0, u16::MAX), |p| (p.value, p.last.unwrap_or(p.value)));
    for item in &r.pattern {
        match item {
            Item::Ipv4(ip) => {
                if let Some(s) = ip.src { f.src = s.value; f.src_prefix_len = s.prefix_len().unwrap_or(32) as u8; }
                if let Some(d) = ip.dst { f.dst = d.value; f.dst_prefix_len = d.prefix_len().unwrap_or(32) as u8; }
                if let Some(p) = ip.proto { f.proto = p.value; f.proto_mask = p.mask; }
            }
            Item::Tcp(t) => { f.proto = 6; f.proto_mask = 0xff; f.src_ports = port(t.src); f.dst_ports = port(t.dst); }
            Item::Udp(u) => { f.proto = 17; f.proto_mask = 0xff; f.src_ports = port(u.src); f.dst_ports = port(u.dst); }
            _ => {}
        }
    }
    f
}

/// Rules of filters: priority = line, queue = line % 16.
pub fn rules_of(filters: &[ClassBenchFilter]) -> Vec<Rule> {
    filters.iter().enumerate().map(|(i, f)| {
        let mut r = f.to_rule(i as u32);
        r.actions = vec![Action::Queue { index: (i % 16) as u16 }];
        r
    }).collect()
}

/// One trace packet: (src, dst, sport, dport, proto).
pub type Tuple = (u32, u32, u16, u16, u8);

/// ClassBench-trace_generator-like: 90% a random point inside a random filter, 10% random.
pub fn trace(filters: &[ClassBenchFilter], n: usize, seed: u64) -> Vec<Tuple> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n).map(|i| {
        if i % 10 == 9 || filters.is_empty() {
            return (rng.random(), rng.random(), rng.random(), rng.random(), [6u8, 17][rng.random_range(0..2)]);
        }
        let f = &filters[rng.random_range(0..filters.len())];
        let pick = |rng: &mut StdRng, a: Ipv4Addr, len: u8| {
            let m = if len == 0 { 0 } else { u32::MAX << (32 - len as u32) };
            (u32::from(a) & m) | (rng.random::<u32>() & !m)
        };
        let proto = if f.proto_mask == 0 { [6u8, 17][rng.random_range(0..2)] } else { f.proto | (rng.random::<u8>() & !f.proto_mask) };
        (pick(&mut rng, f.src, f.src_prefix_len), pick(&mut rng, f.dst, f.dst_prefix_len),
         rng.random_range(f.src_ports.0..=f.src_ports.1), rng.random_range(f.dst_ports.0..=f.dst_ports.1), proto)
    }).collect()
}

pub fn keys_of(trace: &[Tuple]) -> Vec<PacketKey> {
    trace.iter().map(|&(s, d, sp, dp, p)| PacketKey::ipv4_5tuple(Ipv4Addr::from(s), Ipv4Addr::from(d), sp, dp, p, 64)).collect()
}
