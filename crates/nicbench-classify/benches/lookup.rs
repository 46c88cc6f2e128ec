//! Lookup throughput on one core, keys from memory, 32-packet bursts under one snapshot.
//! Compares TupleMerge (default) with the tuple-space-search baseline.
//!
//! `cargo bench -p nicbench-classify --bench lookup -- --quick`
//! Memory per rule is printed to stderr for every set.

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use nicbench_classify::{Algorithm, Classifier, ClassifierConfig, FiveTuple, PacketKey};
use nicbench_rules::generate::RuleSetKind;
use std::time::Duration;

const TRACE_PACKETS: usize = 1 << 16;

/// Whether a set is selected by the command line's filter (criterion only filters the
/// timed part; building a 1M-rule classifier nobody asked for wastes a minute).
fn wanted(name: &str) -> bool {
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()) || f.contains(name))
}

fn bench_set(c: &mut Criterion, name: &str, rules: &[nicbench_rules::Rule], keys: &[PacketKey], algos: &[Algorithm]) {
    let mut g = c.benchmark_group("lookup");
    g.throughput(Throughput::Elements(keys.len() as u64));
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for &algorithm in algos {
        for count in [false, true] {
            let (cl, _) = Classifier::with_rules(
                ClassifierConfig {
                    algorithm,
                    count,
                    ..Default::default()
                },
                rules.iter().cloned(),
            )
            .unwrap();
            let st = cl.stats();
            eprintln!(
                "{name} {algorithm:?}: {} rules, tables {:?}, subtrees {:?}, {:.0} B/rule",
                st.rules, st.tables_per_group, st.subtrees_per_group, st.memory_bytes_per_rule
            );
            let reader = cl.reader();
            let mut out = vec![reader.lookup(&keys[0]); keys.len()];
            let id = format!("{name}/{algorithm:?}{}", if count { "/counted" } else { "" });
            g.bench_function(BenchmarkId::from_parameter(id), |b| {
                b.iter(|| {
                    for (k, o) in keys.chunks(32).zip(out.chunks_mut(32)) {
                        reader.lookup_burst(k, o);
                    }
                    std::hint::black_box(&out);
                })
            });
            if !count {
                continue;
            }
        }
    }
    g.finish();
}

/// The same lookups with the exact-match tables switched off (the general tables hold
/// the rules): what the dedicated matcher brings, measured in the same run.
fn bench_exact_off(c: &mut Criterion, name: &str, rules: &[nicbench_rules::Rule], keys: &[PacketKey]) {
    let mut g = c.benchmark_group("lookup");
    g.throughput(Throughput::Elements(keys.len() as u64));
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    let config = ClassifierConfig {
        count: false,
        exact_match: false,
        ..Default::default()
    };
    let (cl, _) = Classifier::with_rules(config, rules.iter().cloned()).unwrap();
    eprintln!(
        "{name} Hybrid without exact tables: {:.0} B/rule",
        cl.stats().memory_bytes_per_rule
    );
    let reader = cl.reader();
    let mut out = vec![reader.lookup(&keys[0]); keys.len()];
    g.bench_function(
        BenchmarkId::from_parameter(format!("{name}/Hybrid/no_exact_tables")),
        |b| {
            b.iter(|| {
                for (k, o) in keys.chunks(32).zip(out.chunks_mut(32)) {
                    reader.lookup_burst(k, o);
                }
                std::hint::black_box(&out);
            })
        },
    );
    g.finish();
}

/// The same lookups fed from compact 16-byte 5-tuples ([`FiveTuple`]): a 64K-packet trace
/// is 1 MiB instead of 14 MiB of `PacketKey`s, so the keys stay in cache as a freshly
/// parsed packet's would; only the table probes go to DRAM.
fn bench_tuples(c: &mut Criterion, name: &str, rules: &[nicbench_rules::Rule], keys: &[PacketKey]) {
    let mut g = c.benchmark_group("lookup");
    g.throughput(Throughput::Elements(keys.len() as u64));
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    let (cl, _) = Classifier::with_rules(
        ClassifierConfig {
            count: false,
            ..Default::default()
        },
        rules.iter().cloned(),
    )
    .unwrap();
    let tuples: Vec<FiveTuple> = keys.iter().map(FiveTuple::of_key).collect();
    assert!(
        tuples.iter().zip(keys).all(|(t, k)| t.key() == *k),
        "tuples rebuild the keys"
    );
    let reader = cl.reader();
    let mut out = vec![reader.lookup(&keys[0]); keys.len()];
    g.bench_function(BenchmarkId::from_parameter(format!("{name}/Hybrid/five_tuples")), |b| {
        b.iter(|| {
            reader.lookup_burst_tuples(&tuples, &mut out);
            std::hint::black_box(&out);
        })
    });
    g.finish();
}

fn exact(c: &mut Criterion) {
    if wanted("exact5_1000000") {
        let n = 1_000_000usize;
        let (rules, keys) = common::exact5(n, 1);
        // Random order so the trace does not walk the table sequentially.
        let mut rng_keys: Vec<PacketKey> = (0..TRACE_PACKETS)
            .map(|i| keys[(i.wrapping_mul(2654435761)) % n])
            .collect();
        rng_keys.iter_mut().for_each(|k| k.frame_bytes = 64);
        bench_set(
            c,
            &format!("exact5_{n}"),
            &rules,
            &rng_keys,
            &[Algorithm::Hybrid, Algorithm::TupleMerge],
        );
        bench_tuples(c, &format!("exact5_{n}"), &rules, &rng_keys);
        bench_exact_off(c, &format!("exact5_{n}"), &rules, &rng_keys);
    }
}

fn classbench(c: &mut Criterion) {
    for name in ["acl1_1k", "acl1_10k", "fw1_1k", "fw1_10k", "ipc1_1k", "ipc1_10k"] {
        if !wanted(name) {
            continue;
        }
        let Some(filters) = common::classbench_filters(name) else {
            eprintln!("skipping {name}: not in {}", common::classbench_dir().display());
            continue;
        };
        let rules = common::rules_of(&filters);
        let keys = common::keys_of(&common::trace(&filters, TRACE_PACKETS, 7));
        bench_set(
            c,
            name,
            &rules,
            &keys,
            &[Algorithm::Hybrid, Algorithm::TupleMerge, Algorithm::TupleSpace],
        );
    }
    for (kind, name) in [
        (RuleSetKind::Acl, "gen_acl_100k"),
        (RuleSetKind::Fw, "gen_fw_100k"),
        (RuleSetKind::Ipc, "gen_ipc_100k"),
    ] {
        if !wanted(name) {
            continue;
        }
        let filters = common::generated_filters(kind, 100_000, 3);
        let rules = common::rules_of(&filters);
        let keys = common::keys_of(&common::trace(&filters, TRACE_PACKETS, 7));
        bench_set(c, name, &rules, &keys, &[Algorithm::Hybrid, Algorithm::TupleMerge]);
    }
}

criterion_group!(benches, exact, classbench);
criterion_main!(benches);
