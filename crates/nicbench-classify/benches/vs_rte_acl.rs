//! Side by side with DPDK's rte_acl (`dpdk-test-acl`, SSE) on the ClassBench sets: the same
//! rules and the same 131072-packet trace for both; prints both lookup rates and the
//! ratio, plus update cost (nicbench: atomic update of one rule / a 100-rule batch;
//! rte_acl: it must rebuild, measured as the wall time of a `--iter=1` run, which also
//! includes EAL start-up — an upper bound).
//! Skips with a message when `dpdk-test-acl` or the ClassBench files are absent.
//!
//! `cargo bench -p nicbench-classify --bench vs_rte_acl`

mod common;

use nicbench_classify::{Algorithm, Batch, Classifier, ClassifierConfig, Outcome, Verdict};
use std::io::Write;
use std::process::Command;
use std::time::Instant;

const TRACE: usize = 131_072;
const ITER: usize = 20;

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

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let have_acl = Command::new("dpdk-test-acl").arg("--help").output().is_ok();
    if !have_acl {
        println!("dpdk-test-acl not found (Debian package dpdk-dev): printing nicbench figures only");
    }
    println!("| set | rules | rte_acl Mpps | nicbench Hybrid Mpps | ratio | TupleMerge Mpps | TupleSpace Mpps | rte_acl run --iter=1 wall [ms] | nicbench update 1 rule [us] | nicbench batch of 100 [us] |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let dir = std::env::temp_dir().join(format!("nicbench-acl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["acl1_1k", "acl1_10k", "fw1_1k", "fw1_10k", "ipc1_1k", "ipc1_10k"] {
        let Some(filters) = common::classbench_filters(name) else {
            println!("| {name} | skipped: not in {} | | | | | | |", common::classbench_dir().display());
            continue;
        };
        let trace = common::trace(&filters, TRACE, 42);
        let trace_path = dir.join(format!("{name}.trace"));
        let mut f = std::io::BufWriter::new(std::fs::File::create(&trace_path).unwrap());
        for (s, d, sp, dp, p) in &trace {
            writeln!(f, "{s}\t{d}\t{sp}\t{dp}\t{p}").unwrap();
        }
        drop(f);
        let rules_path = format!("{}/{name}", common::classbench_dir().display());
        let acl = if have_acl { run_acl(&rules_path, trace_path.to_str().unwrap(), ITER) } else { None };
        let acl_once = if have_acl { run_acl(&rules_path, trace_path.to_str().unwrap(), 1) } else { None };

        let rules = common::rules_of(&filters);
        let keys = common::keys_of(&trace);
        // The other algorithms, one pass over the trace each (for the comparison columns).
        let other = |algorithm: Algorithm| {
            let (c, _) = Classifier::with_rules(ClassifierConfig { algorithm, count: false, ..Default::default() }, rules.iter().cloned()).unwrap();
            let mut out = vec![Outcome { verdict: Verdict::Unmatched, mark: None, groups_traversed: 0, last_group: 0, rule: None }; keys.len()];
            let t = Instant::now();
            c.reader().lookup_burst(&keys, &mut out);
            keys.len() as f64 / t.elapsed().as_secs_f64() / 1e6
        };
        let (tm, tss) = (other(Algorithm::TupleMerge), other(Algorithm::TupleSpace));
        let (mut c, ids) = Classifier::with_rules(ClassifierConfig { count: false, ..Default::default() }, rules.iter().cloned()).unwrap();
        let reader = c.reader();
        let mut out = vec![Outcome { verdict: Verdict::Unmatched, mark: None, groups_traversed: 0, last_group: 0, rule: None }; keys.len()];
        let t = Instant::now();
        for _ in 0..ITER.min(5) {
            reader.lookup_burst(&keys, &mut out);
        }
        let ours = (ITER.min(5) * keys.len()) as f64 / t.elapsed().as_secs_f64() / 1e6;
        std::hint::black_box(&out);
        // Update cost: modify one rule in place; then a batch of 100 modifies.
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
            Some((m, _)) => (format!("{m:.2}"), format!("{:.3}", ours / m)),
            None => ("n/a".into(), "n/a".into()),
        };
        let wall = acl_once.map_or("n/a".into(), |(_, w)| format!("{:.0}", w * 1e3));
        println!("| {name} | {} | {acl_mpps} | {ours:.2} | {ratio} | {tm:.2} | {tss:.2} | {wall} | {one_us:.1} | {batch_us:.1} |", rules.len());
    }
    std::fs::remove_dir_all(&dir).ok();
}
