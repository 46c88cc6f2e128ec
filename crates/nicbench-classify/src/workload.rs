//! Workloads for measuring the classifier: rule sets and packet keys that hit them.
//!
//! Shared by the crate's benches and by the harness targets (`classifier.lookup`,
//! `classifier.update`), so both measure the same thing. Traces follow ClassBench's
//! trace_generator: 90% of packets are a random point inside a random filter, 10% random.
//! Everything is seeded (ChaCha8), so a workload is the same on every machine.

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use nicbench_rules::classbench::{self, ClassBenchFilter};
use nicbench_rules::generate::{generate, RuleSetKind};
use nicbench_rules::{Action, Item, Rule};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::PacketKey;

/// Exact 5-tuple rules (queue actions) and one key hitting each.
pub fn exact5(count: usize, seed: u64) -> (Vec<Rule>, Vec<PacketKey>) {
    let rules = generate(RuleSetKind::Exact5, count, 0, seed);
    let keys = rules
        .iter()
        .map(|r| {
            // generate(Exact5, …) writes `eth / ipv4 src dst / tcp|udp src dst`, every field exact.
            let (Item::Ipv4(ip), l4) = (&r.pattern[1], &r.pattern[2]) else {
                unreachable!("exact5 layout")
            };
            let (sp, dp, proto) = match l4 {
                Item::Tcp(t) => (t.src.map_or(0, |f| f.value), t.dst.map_or(0, |f| f.value), 6),
                Item::Udp(u) => (u.src.map_or(0, |f| f.value), u.dst.map_or(0, |f| f.value), 17),
                _ => unreachable!("exact5 layout"),
            };
            let src = ip.src.map_or(Ipv4Addr::UNSPECIFIED, |f| f.value);
            let dst = ip.dst.map_or(Ipv4Addr::UNSPECIFIED, |f| f.value);
            PacketKey::ipv4_5tuple(src, dst, sp, dp, proto, 64)
        })
        .collect();
    (rules, keys)
}

/// Where the ClassBench filter sets are: `$NICBENCH_CLASSBENCH`, else the project's shared data
/// folder next to the checkout (`<checkout>/../shared/data/classbench`).
pub fn classbench_dir() -> PathBuf {
    match std::env::var_os("NICBENCH_CLASSBENCH") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/classbench"),
    }
}

/// A ClassBench file's filters, or `None` when the file is absent.
pub fn classbench_filters(name: &str) -> Option<Vec<ClassBenchFilter>> {
    let text = std::fs::read_to_string(classbench_dir().join(name)).ok()?;
    classbench::parse_file(&text, name).ok()
}

/// Filters of a generated ClassBench-like set (generate() maps them to rules in order).
pub fn generated_filters(kind: RuleSetKind, count: usize, seed: u64) -> Vec<ClassBenchFilter> {
    // Rebuild the filters from the rules: prefixes and port ranges are all that matters.
    generate(kind, count, 0, seed).iter().map(filter_of_rule).collect()
}

fn filter_of_rule(r: &Rule) -> ClassBenchFilter {
    let mut f = ClassBenchFilter {
        src: Ipv4Addr::UNSPECIFIED,
        src_prefix_len: 0,
        dst: Ipv4Addr::UNSPECIFIED,
        dst_prefix_len: 0,
        src_ports: (0, u16::MAX),
        dst_ports: (0, u16::MAX),
        proto: 0,
        proto_mask: 0,
    };
    let port =
        |p: Option<nicbench_rules::Field<u16>>| p.map_or((0, u16::MAX), |p| (p.value, p.last.unwrap_or(p.value)));
    for item in &r.pattern {
        match item {
            Item::Ipv4(ip) => {
                if let Some(s) = ip.src {
                    f.src = s.value;
                    f.src_prefix_len = s.prefix_len().unwrap_or(32) as u8;
                }
                if let Some(d) = ip.dst {
                    f.dst = d.value;
                    f.dst_prefix_len = d.prefix_len().unwrap_or(32) as u8;
                }
                if let Some(p) = ip.proto {
                    f.proto = p.value;
                    f.proto_mask = p.mask;
                }
            }
            Item::Tcp(t) => {
                f.proto = 6;
                f.proto_mask = 0xff;
                f.src_ports = port(t.src);
                f.dst_ports = port(t.dst);
            }
            Item::Udp(u) => {
                f.proto = 17;
                f.proto_mask = 0xff;
                f.src_ports = port(u.src);
                f.dst_ports = port(u.dst);
            }
            _ => {}
        }
    }
    f
}

/// Rules of filters: priority = line, queue = line % 16.
pub fn rules_of(filters: &[ClassBenchFilter]) -> Vec<Rule> {
    filters
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let mut r = f.to_rule(i as u32);
            r.actions = vec![Action::Queue { index: (i % 16) as u16 }];
            r
        })
        .collect()
}

/// One trace packet: (src, dst, sport, dport, proto).
pub type Tuple = (u32, u32, u16, u16, u8);

/// ClassBench-trace_generator-like: 90% a random point inside a random filter, 10% random.
pub fn trace(filters: &[ClassBenchFilter], n: usize, seed: u64) -> Vec<Tuple> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            if i % 10 == 9 || filters.is_empty() {
                return (
                    rng.random(),
                    rng.random(),
                    rng.random(),
                    rng.random(),
                    [6u8, 17][rng.random_range(0..2)],
                );
            }
            let f = &filters[rng.random_range(0..filters.len())];
            let pick = |rng: &mut ChaCha8Rng, a: Ipv4Addr, len: u8| {
                let m = if len == 0 { 0 } else { u32::MAX << (32 - len as u32) };
                (u32::from(a) & m) | (rng.random::<u32>() & !m)
            };
            let proto = if f.proto_mask == 0 {
                [6u8, 17][rng.random_range(0..2)]
            } else {
                f.proto | (rng.random::<u8>() & !f.proto_mask)
            };
            (
                pick(&mut rng, f.src, f.src_prefix_len),
                pick(&mut rng, f.dst, f.dst_prefix_len),
                rng.random_range(f.src_ports.0..=f.src_ports.1),
                rng.random_range(f.dst_ports.0..=f.dst_ports.1),
                proto,
            )
        })
        .collect()
}

pub fn keys_of(trace: &[Tuple]) -> Vec<PacketKey> {
    trace
        .iter()
        .map(|&(s, d, sp, dp, p)| PacketKey::ipv4_5tuple(Ipv4Addr::from(s), Ipv4Addr::from(d), sp, dp, p, 64))
        .collect()
}

/// Packets in the traces of [`named`] workloads.
pub const TRACE_PACKETS: usize = 1 << 17;

/// A workload by name: `exact5` (exact 5-tuples, one key per rule), `acl`/`fw`/`ipc`
/// (generated ClassBench-like sets of `count` rules), or a ClassBench file name such as
/// `acl1_10k` (from [`classbench_dir`]; `count` is ignored). Rules get queue actions.
pub fn named(kind: &str, count: usize, seed: u64) -> Result<(Vec<Rule>, Vec<PacketKey>), String> {
    let generated = |kind| {
        let filters = generated_filters(kind, count, seed);
        (rules_of(&filters), keys_of(&trace(&filters, TRACE_PACKETS, seed)))
    };
    match kind {
        "exact5" => Ok(exact5(count, seed)),
        "acl" => Ok(generated(RuleSetKind::Acl)),
        "fw" => Ok(generated(RuleSetKind::Fw)),
        "ipc" => Ok(generated(RuleSetKind::Ipc)),
        file => {
            let filters = classbench_filters(file).ok_or_else(|| {
                format!(
                    "unknown workload {file:?}: expected exact5, acl, fw, ipc or a ClassBench file in {}",
                    classbench_dir().display()
                )
            })?;
            Ok((rules_of(&filters), keys_of(&trace(&filters, TRACE_PACKETS, seed))))
        }
    }
}
