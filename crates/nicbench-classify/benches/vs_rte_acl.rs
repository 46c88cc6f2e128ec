//! Side by side with DPDK's rte_acl (`dpdk-test-acl`, SSE) on the ClassBench sets: the same
//! rules and the same 131072-packet trace for both; prints both lookup rates and the
//! ratio, plus update cost (nicbench: atomic update of one rule / a 100-rule batch;
//! rte_acl: it must rebuild, measured as the wall time of a `--iter=1` run, which also
//! includes EAL start-up — an upper bound).
//!
//! Both sides read the trace from memory in a compact form: rte_acl its 5-tuple records,
//! nicbench 16-byte [`FiveTuple`]s (`Reader::lookup_burst_tuples`); the `PacketKey` column
//! is the same lookup fed from full 216-byte keys (a 28 MiB stream for this trace). Every
//! nicbench figure is the best of [`PASSES`] passes over the trace after one warm-up pass,
//! so the algorithms are measured alike and a pass preempted by the shared machine's other
//! work does not count. rte_acl is run [`ACL_RUNS`] times, interleaved with the nicbench
//! measurements (before the Hybrid, between Hybrid and the others, after them), and its
//! best run counts: on a loaded machine a single run of either side can land in a busy
//! moment (rte_acl alone moved 5–24 Mpps on acl1_1k between runs), and best against best
//! is the comparison that load distorts least.
//! Skips with a message when `dpdk-test-acl` or the ClassBench files are absent.
//!
//! `cargo bench -p nicbench-classify --bench vs_rte_acl [-- SET… ] [--no-acl] [--hybrid-only]`
//! (SET: a set name or part of one, e.g. `1k`; `--no-acl` skips the rte_acl runs,
//! `--hybrid-only` the TupleMerge and TupleSpace columns).

mod common;

use nicbench_classify::{Algorithm, Batch, Classifier, ClassifierConfig, FiveTuple, Outcome, PacketKey, Verdict};
use std::io::Write;
use std::process::Command;
use std::time::Instant;

const TRACE: usize = 131_072;
const ITER: usize = 20;
const PASSES: usize = 5;
/// rte_acl lookup runs per set; the best counts.
const ACL_RUNS: usize = 3;

fn run_acl(rules: &str, trace: &str, iter: usize) -> Option<(f64, f64)> {
    let t = Instant::now();
    let out = Command::new("dpdk-test-acl")
        .args(["--no-huge", "--no-pci", "-m", "2048", "-l", "0", "--", &format!("--rulesf={rules}"), &format!("--tracef={trace}"),
            &format!("--tracenum={TRACE}"), &format!("--iter={iter}"), "--alg=sse", "--verbose=1"])
        .output()
        .ok()?;
    let wall = t.elapsed().as_secs_f64();
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    let line = text.lines().find(|l| l.starts_with("search_ip5tuples ") && l.contains("pkt/sec"))?;
    let pps: f64 = line.split(',').next_back()?.split_whitespace().next()?.parse().ok()?;
    Some((pps / 1e6, wall))
}

const UNMATCHED: Outcome = Outcome { verdict: Verdict::Unmatched, mark: None, groups_traversed: 0, last_group: 0, rule: None };

/// Best rate \[Mpps\] of [`PASSES`] timed passes of `pass` over `n` packets, after a warm-up.
fn best_mpps(n: usize, mut pass: impl FnMut()) -> f64 {
    pass();
    (0..PASSES)
        .map(|_| {
            let t = Instant::now();
            pass();
            n as f64 / t.elapsed().as_secs_f64() / 1e6
        })
        .fold(0.0, f64::max)
}

/// (Mpps from tuples, Mpps from keys, memory [B/rule]) of one algorithm.
fn measure(algorithm: Algorithm, rules: &[nicbench_rules::Rule], tuples: &[FiveTuple], keys: &[PacketKey]) -> (f64, f64, f64) {
    let (c, _) = Classifier::with_rules(ClassifierConfig { algorithm, count: false, ..Default::default() }, rules.iter().cloned()).unwrap();
    let reader = c.reader();
    let mut out = vec![UNMATCHED; keys.len()];
    let from_tuples = best_mpps(tuples.len(), || {
        reader.lookup_burst_tuples(tuples, &mut out);
        std::hint::black_box(&out);
    });
    let from_keys = best_mpps(keys.len(), || {
        reader.lookup_burst(keys, &mut out);
        std::hint::black_box(&out);
    });
    (from_tuples, from_keys, c.stats().memory_bytes_per_rule)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let have_acl = !args.iter().any(|a| a == "--no-acl") && Command::new("dpdk-test-acl").arg("--help").output().is_ok();
    if !have_acl {
        println!("dpdk-test-acl not run (--no-acl, or not found: Debian package dpdk-dev): nicbench figures only");
    }
    println!("| set | rules | rte_acl Mpps | nicbench Hybrid Mpps | ratio | Hybrid from PacketKeys | TupleMerge Mpps | TupleSpace Mpps | Hybrid B/rule | rte_acl run --iter=1 wall [ms] | nicbench update 1 rule [us] | nicbench batch of 100 [us] |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let dir = std::env::temp_dir().join(format!("nicbench-acl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["acl1_1k", "acl1_10k", "fw1_1k", "fw1_10k", "ipc1_1k", "ipc1_10k"] {
        if !filters.is_empty() && !filters.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        let Some(cb) = common::classbench_filters(name) else {
            println!("| {name} | skipped: not in {} | | | | | | | | | | |", common::classbench_dir().display());
            continue;
        };
        let trace = common::trace(&cb, TRACE, 42);
        let trace_path = dir.join(format!("{name}.trace"));
        let mut f = std::io::BufWriter::new(std::fs::File::create(&trace_path).unwrap());
        for (s, d, sp, dp, p) in &trace {
            writeln!(f, "{s}\t{d}\t{sp}\t{dp}\t{p}").unwrap();
        }
        drop(f);
        let rules_path = format!("{}/{name}", common::classbench_dir().display());
        let mut acl_runs: Vec<f64> = Vec::new();
        let trace_str = trace_path.to_str().unwrap();
        // One rte_acl lookup run into `runs`; false when it could not run.
        let acl_run = |runs: &mut Vec<f64>| have_acl && run_acl(&rules_path, trace_str, ITER).map(|(m, _)| runs.push(m)).is_some();
        acl_run(&mut acl_runs);
        let acl_once = if have_acl { run_acl(&rules_path, trace_str, 1) } else { None };

        let rules = common::rules_of(&cb);
        let keys = common::keys_of(&trace);
        let tuples: Vec<FiveTuple> =
            trace.iter().map(|&(s, d, sp, dp, p)| FiveTuple { src: s, dst: d, src_port: sp, dst_port: dp, proto: p, frame_bytes: 64 }).collect();
        let (ours, ours_keys, bytes_per_rule) = measure(Algorithm::Hybrid, &rules, &tuples, &keys);
        acl_run(&mut acl_runs);
        let others = !args.iter().any(|a| a == "--hybrid-only");
        let (tm, _, _) = if others { measure(Algorithm::TupleMerge, &rules, &tuples, &keys) } else { (f64::NAN, 0.0, 0.0) };
        let (tss, _, _) = if others { measure(Algorithm::TupleSpace, &rules, &tuples, &keys) } else { (f64::NAN, 0.0, 0.0) };
        while acl_runs.len() < ACL_RUNS && acl_run(&mut acl_runs) {}
        let acl = acl_runs.iter().copied().reduce(f64::max);

        // Update cost: modify one rule in place; then a batch of 100 modifies.
        let (mut c, ids) = Classifier::with_rules(ClassifierConfig { count: false, ..Default::default() }, rules.iter().cloned()).unwrap();
        let t = Instant::now();
        c.modify(ids[ids.len() / 2], rules[ids.len() / 2].clone()).unwrap();
        let one_us = t.elapsed().as_secs_f64() * 1e6;
        let mut b = Batch::new();
        for (id, r) in ids.iter().zip(&rules).take(100) {
            b.modify(*id, r.clone());
        }
        let t = Instant::now();
        c.apply(b).unwrap();
        let batch_us = t.elapsed().as_secs_f64() * 1e6;
        let (acl_mpps, ratio) = match acl {
            Some(m) => (format!("{m:.2}"), format!("{:.3}", ours / m)),
            None => ("n/a".into(), "n/a".into()),
        };
        let wall = acl_once.map_or("n/a".into(), |(_, w)| format!("{:.0}", w * 1e3));
        println!(
            "| {name} | {} | {acl_mpps} | {ours:.2} | {ratio} | {ours_keys:.2} | {tm:.2} | {tss:.2} | {bytes_per_rule:.0} | {wall} | {one_us:.1} | {batch_us:.1} |",
            rules.len()
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}
