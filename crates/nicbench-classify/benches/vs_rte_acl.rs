//! Side by side with DPDK's rte_acl (`dpdk-test-acl`, SSE) on the ClassBench sets and on the
//! generated 100K-rule sets (`nicbench rules gen --kind acl|fw|ipc --count 100k --seed 3`'s
//! filters, written out in ClassBench form for rte_acl): the same rules and the same
//! 131072-packet trace for both; prints both lookup rates and the ratio, plus update cost
//! (nicbench: atomic update of one rule / a 100-rule batch; rte_acl: it must rebuild, measured
//! as the wall time and peak RSS of a `--iter=1` run, which also includes EAL start-up — an
//! upper bound). A run that fails or exceeds the time limit is reported with its error.
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
//! is the comparison that load distorts least. TupleSpace is not run on the 100K sets
//! (minutes per pass).
//! Skips with a message when `dpdk-test-acl` or the ClassBench files are absent.
//!
//! `cargo bench -p nicbench-classify --bench vs_rte_acl [-- SET… ] [--no-acl] [--hybrid-only]
//! [--acl-timeout=SECONDS] [--check] [--keep-files]` (SET: a set name or part of one, e.g. `1k` or `gen`;
//! `--no-acl` skips the rte_acl runs, `--hybrid-only` the TupleMerge and TupleSpace columns;
//! `--acl-timeout` bounds each dpdk-test-acl run, default 900 s; `--check` also compares
//! the rule each side picks for the trace's first 5,000 packets; `--keep-files` keeps the
//! rule and trace files written, e.g. to profile dpdk-test-acl on them by hand).

mod common;

use nicbench_classify::{Algorithm, Batch, Classifier, ClassifierConfig, FiveTuple, Outcome, PacketKey, Verdict};
use nicbench_rules::generate::RuleSetKind;
use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

const TRACE: usize = 131_072;
const ITER: usize = 20;
const PASSES: usize = 5;
/// rte_acl lookup runs per set; the best counts.
const ACL_RUNS: usize = 3;

/// One dpdk-test-acl run.
struct AclRun {
    mpps: f64,
    wall_s: f64,
    /// The process's peak resident set: the ACL build's scratch plus the EAL's `-m` arena pages touched.
    peak_rss_mib: f64,
}

/// Runs dpdk-test-acl on `rules` (`rule_count` lines) and `trace`; Err: why it gave no rate
/// (its last words, or the time limit), with the wall time and peak RSS it reached.
fn run_acl(
    rules: &str,
    rule_count: usize,
    trace: &str,
    iter: usize,
    log: &Path,
    timeout_s: u64,
) -> Result<AclRun, String> {
    run_acl_with(rules, rule_count, trace, TRACE, iter, 1, log, timeout_s)
}

/// [`run_acl`] on the first `tracenum` packets (the file must hold exactly that many:
/// test-acl 22.11 dies with SIGSEGV when the file has more) at `--verbose=verbose` (2 prints every
/// packet's result; then there is no rate line and the run counts as failed, `log` holds it).
#[allow(clippy::too_many_arguments)]
fn run_acl_with(
    rules: &str,
    rule_count: usize,
    trace: &str,
    tracenum: usize,
    iter: usize,
    verbose: u32,
    log: &Path,
    timeout_s: u64,
) -> Result<AclRun, String> {
    let out = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let t = Instant::now();
    let mut child = Command::new("dpdk-test-acl")
        .args(["--no-huge", "--no-pci", "-m", "2048", "-l", "0"])
        // No --file-prefix: each prefix leaves ~25 MB of EAL runtime files behind in DPDK's
        // runtime directory; the default prefix's are reused run after run.
        .arg("--")
        .args([
            format!("--rulesf={rules}"),
            format!("--tracef={trace}"),
            format!("--tracenum={tracenum}"),
        ])
        // test-acl loads at most --rulenum lines (default 65536) and silently drops the rest.
        .args([
            format!("--rulenum={}", rule_count.max(1 << 16)),
            format!("--iter={iter}"),
        ])
        .args(["--alg=sse".to_string(), format!("--verbose={verbose}")])
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("dpdk-test-acl: {e}"))?;
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 fills it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let timed_out = loop {
        // SAFETY: waits for our own child only; WNOHANG so the time limit can be enforced.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break false;
        }
        if r < 0 {
            return Err(format!("wait4: {}", std::io::Error::last_os_error()));
        }
        if t.elapsed().as_secs() >= timeout_s {
            let _ = child.kill();
            // SAFETY: as above, now blocking to reap the killed child.
            unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
            break true;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    };
    let wall_s = t.elapsed().as_secs_f64();
    let peak_rss_mib = usage.ru_maxrss as f64 / 1024.0;
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let rate = text
        .lines()
        .find(|l| l.starts_with("search_ip5tuples ") && l.contains("pkt/sec"))
        .and_then(|line| {
            line.split(',')
                .next_back()?
                .split_whitespace()
                .next()?
                .parse::<f64>()
                .ok()
        });
    match rate {
        _ if verbose >= 2 && !timed_out && status == 0 => Ok(AclRun {
            mpps: f64::NAN,
            wall_s,
            peak_rss_mib,
        }),
        Some(pps) if !timed_out => Ok(AclRun {
            mpps: pps / 1e6,
            wall_s,
            peak_rss_mib,
        }),
        _ => {
            let why = if timed_out {
                format!("killed at the {timeout_s} s limit")
            } else {
                let last: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
                format!(
                    "exit status {status:#x}: {}",
                    last[last.len().saturating_sub(2)..].join(" / ")
                )
            };
            Err(format!("{why} (wall {wall_s:.1} s, peak RSS {peak_rss_mib:.0} MiB)"))
        }
    }
}

const UNMATCHED: Outcome = Outcome {
    verdict: Verdict::Unmatched,
    mark: None,
    groups_traversed: 0,
    last_group: 0,
    rule: None,
};

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
fn measure(
    algorithm: Algorithm,
    rules: &[nicbench_rules::Rule],
    tuples: &[FiveTuple],
    keys: &[PacketKey],
) -> (f64, f64, f64) {
    let (c, _) = Classifier::with_rules(
        ClassifierConfig {
            algorithm,
            count: false,
            ..Default::default()
        },
        rules.iter().cloned(),
    )
    .unwrap();
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

/// Writes `tuples` as a dpdk-test-acl trace file (`--tracef`): one tab-separated 5-tuple a line.
fn write_acl_trace(path: &Path, tuples: &[common::Tuple]) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for (s, d, sp, dp, p) in tuples {
        writeln!(f, "{s}\t{d}\t{sp}\t{dp}\t{p}").unwrap();
    }
}

/// Packets of the trace whose rule rte_acl and nicbench's Hybrid must agree on (`--check`).
const CHECK_PACKETS: usize = 5_000;

/// `--check`: rte_acl's rule for each of the first [`CHECK_PACKETS`] packets (test-acl
/// `--verbose=2` prints "ipv4_5tuple: N, category: 0, result: LINE", LINE 0-based,
/// u32::MAX for none) against the Hybrid's; "agree on X of Y" or why it could not tell.
fn check_same_rules(
    rules_path: &str,
    rules: &[nicbench_rules::Rule],
    trace: &[common::Tuple],
    keys: &[PacketKey],
    log: &Path,
    timeout_s: u64,
) -> String {
    let n = CHECK_PACKETS.min(keys.len());
    let trace_path = log.with_extension("check.trace");
    write_acl_trace(&trace_path, &trace[..n]);
    if let Err(e) = run_acl_with(
        rules_path,
        rules.len(),
        trace_path.to_str().unwrap(),
        n,
        1,
        2,
        log,
        timeout_s,
    ) {
        return format!("rte_acl --verbose=2 failed: {e}");
    }
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let mut theirs: Vec<Option<Option<usize>>> = vec![None; n];
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("ipv4_5tuple: ") else {
            continue;
        };
        let f: Vec<&str> = rest.split(", ").collect();
        let (Some(i), Some(r)) = (
            f.first().and_then(|x| x.parse::<usize>().ok()),
            f.get(2).and_then(|x| x.strip_prefix("result: ")?.parse::<u32>().ok()),
        ) else {
            return format!("unexpected dpdk-test-acl line: {line}");
        };
        if let Some(slot) = theirs.get_mut(i.wrapping_sub(1)) {
            *slot = Some((r != u32::MAX).then_some(r as usize));
        }
    }
    let (c, ids) = Classifier::with_rules(
        ClassifierConfig {
            count: false,
            ..Default::default()
        },
        rules.iter().cloned(),
    )
    .unwrap();
    let line_of: std::collections::HashMap<_, usize> = ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
    let reader = c.reader();
    let agree = keys[..n]
        .iter()
        .zip(&theirs)
        .filter(|(k, t)| **t == Some(reader.lookup(k).rule.map(|id| line_of[&id])))
        .count();
    let matched = theirs.iter().filter(|t| matches!(t, Some(Some(_)))).count();
    format!("rte_acl and nicbench Hybrid pick the same rule for {agree} of {n} packets (rte_acl matched {matched})")
}

/// The ClassBench files compared, then the generated sets (kind, rules, seed as in the `lookup` bench).
const CLASSBENCH_SETS: [&str; 6] = ["acl1_1k", "acl1_10k", "fw1_1k", "fw1_10k", "ipc1_1k", "ipc1_10k"];
const GENERATED_SETS: [(RuleSetKind, &str); 3] = [
    (RuleSetKind::Acl, "gen_acl_100k"),
    (RuleSetKind::Fw, "gen_fw_100k"),
    (RuleSetKind::Ipc, "gen_ipc_100k"),
];
const GENERATED_RULES: usize = 100_000;
const GENERATED_SEED: u64 = 3;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let timeout_s: u64 = match args.iter().find_map(|a| a.strip_prefix("--acl-timeout=")) {
        None => 900,
        Some(v) => v.parse().unwrap_or_else(|_| {
            eprintln!("nicbench: error: --acl-timeout={v}: expected whole seconds (e.g. 900)");
            std::process::exit(2)
        }),
    };
    let have_acl =
        !args.iter().any(|a| a == "--no-acl") && Command::new("dpdk-test-acl").arg("--help").output().is_ok();
    if !have_acl {
        println!("dpdk-test-acl not run (--no-acl, or not found: Debian package dpdk-dev): nicbench figures only");
    }
    println!("| set | rules | rte_acl Mpps | nicbench Hybrid Mpps | ratio | Hybrid from PacketKeys | TupleMerge Mpps | TupleSpace Mpps | Hybrid B/rule | rte_acl run --iter=1 wall [ms] | rte_acl --iter=1 peak RSS [MiB] | nicbench update 1 rule [us] | nicbench batch of 100 [us] |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let dir = std::env::temp_dir().join(format!("nicbench-acl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let check = args.iter().any(|a| a == "--check");
    let mut errors: Vec<String> = Vec::new();
    let sets = CLASSBENCH_SETS
        .iter()
        .map(|&n| (n, None))
        .chain(GENERATED_SETS.iter().map(|&(k, n)| (n, Some(k))));
    for (name, generated) in sets {
        if !filters.is_empty() && !filters.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        let (cb, rules_path) = match generated {
            Some(kind) => {
                let cb = common::generated_filters(kind, GENERATED_RULES, GENERATED_SEED);
                let path = dir.join(format!("{name}.rules"));
                let text: String = cb.iter().map(|f| format!("{f}\n")).collect();
                std::fs::write(&path, text).unwrap();
                (cb, path.to_str().unwrap().to_string())
            }
            None => {
                let Some(cb) = common::classbench_filters(name) else {
                    println!(
                        "| {name} | skipped: not in {} | | | | | | | | | | | |",
                        common::classbench_dir().display()
                    );
                    continue;
                };
                (cb, format!("{}/{name}", common::classbench_dir().display()))
            }
        };
        let trace = common::trace(&cb, TRACE, 42);
        let trace_path = dir.join(format!("{name}.trace"));
        write_acl_trace(&trace_path, &trace);
        let mut acl_runs: Vec<f64> = Vec::new();
        let trace_str = trace_path.to_str().unwrap();
        let log = dir.join(format!("{name}.acl.log"));
        // One rte_acl lookup run into `runs`; false when it could not run (its error kept once).
        let mut acl_run = |runs: &mut Vec<f64>| {
            have_acl
                && match run_acl(&rules_path, cb.len(), trace_str, ITER, &log, timeout_s) {
                    Ok(r) => {
                        runs.push(r.mpps);
                        true
                    }
                    Err(e) => {
                        errors.push(format!("{name}: dpdk-test-acl --iter={ITER}: {e}"));
                        false
                    }
                }
        };
        let acl_ok = acl_run(&mut acl_runs);
        let acl_once = if have_acl && acl_ok {
            Some(run_acl(&rules_path, cb.len(), trace_str, 1, &log, timeout_s))
        } else {
            None
        };

        let rules = common::rules_of(&cb);
        let keys = common::keys_of(&trace);
        let tuples: Vec<FiveTuple> = trace
            .iter()
            .map(|&(s, d, sp, dp, p)| FiveTuple {
                src: s,
                dst: d,
                src_port: sp,
                dst_port: dp,
                proto: p,
                frame_bytes: 64,
            })
            .collect();
        let (ours, ours_keys, bytes_per_rule) = measure(Algorithm::Hybrid, &rules, &tuples, &keys);
        if acl_ok {
            acl_run(&mut acl_runs);
        }
        let others = !args.iter().any(|a| a == "--hybrid-only");
        let (tm, _, _) = if others {
            measure(Algorithm::TupleMerge, &rules, &tuples, &keys)
        } else {
            (f64::NAN, 0.0, 0.0)
        };
        let (tss, _, _) = if others && generated.is_none() {
            measure(Algorithm::TupleSpace, &rules, &tuples, &keys)
        } else {
            (f64::NAN, 0.0, 0.0)
        };
        while acl_ok && acl_runs.len() < ACL_RUNS && acl_run(&mut acl_runs) {}
        let acl = acl_runs.iter().copied().reduce(f64::max);

        // Update cost: modify one rule in place; then a batch of 100 modifies.
        let (mut c, ids) = Classifier::with_rules(
            ClassifierConfig {
                count: false,
                ..Default::default()
            },
            rules.iter().cloned(),
        )
        .unwrap();
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
        if check && have_acl {
            errors.push(format!(
                "{name}: {}",
                check_same_rules(&rules_path, &rules, &trace, &keys, &log, timeout_s)
            ));
        }
        let (acl_mpps, ratio) = match acl {
            Some(m) => (format!("{m:.2}"), format!("{:.3}", ours / m)),
            None => ("n/a".into(), "n/a".into()),
        };
        let (wall, rss) = match acl_once {
            Some(Ok(r)) => (format!("{:.0}", r.wall_s * 1e3), format!("{:.0}", r.peak_rss_mib)),
            Some(Err(e)) => {
                errors.push(format!("{name}: dpdk-test-acl --iter=1: {e}"));
                ("n/a".into(), "n/a".into())
            }
            None => ("n/a".into(), "n/a".into()),
        };
        println!(
            "| {name} | {} | {acl_mpps} | {ours:.2} | {ratio} | {ours_keys:.2} | {tm:.2} | {tss:.2} | {bytes_per_rule:.0} | {wall} | {rss} | {one_us:.1} | {batch_us:.1} |",
            rules.len()
        );
    }
    for e in &errors {
        println!("{e}");
    }
    if args.iter().any(|a| a == "--keep-files") {
        println!("rule and trace files kept in {}", dir.display());
    } else {
        std::fs::remove_dir_all(&dir).ok();
    }
}
