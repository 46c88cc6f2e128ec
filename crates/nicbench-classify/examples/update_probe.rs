//! Quick A/B probe of the update path: CPU time per single insert, modify and delete, and
//! per rule in atomic batches, into a table of exact 5-tuple rules (1M by default), with
//! one idle reader registered. Rules are built before the clock starts (the `updates`
//! bench also counts the caller's `Rule` clones).
//!
//! `cargo run --release -p nicbench-classify --example update_probe [rules [ops]]`

use nicbench_classify::{workload, Batch, Classifier, ClassifierConfig, RuleId, Update};
use nicbench_rules::{Action, Rule};
use std::time::Instant;

fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid out-pointer; CLOCK_THREAD_CPUTIME_ID is always available on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Runs `f`, prints wall and CPU rates for `n` operations.
fn timed(name: &str, n: usize, f: impl FnOnce()) {
    let (t0, c0) = (Instant::now(), thread_cpu_s());
    f();
    let (wall, cpu) = (t0.elapsed().as_secs_f64(), thread_cpu_s() - c0);
    println!("{name:<28} {:>6.2} M/s wall {:>6.2} M/s cpu ({:.0} ns/op cpu)", n as f64 / wall / 1e6, n as f64 / cpu / 1e6, cpu * 1e9 / n as f64);
}

fn main() {
    let arg = |i: usize, d: usize| std::env::args().nth(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let (n, ops) = (arg(1, 1_000_000), arg(2, 100_000));
    let (all, _) = workload::exact5(n + 2 * ops, 9);
    let (base, extra) = all.split_at(n);
    let (mut c, _) = Classifier::with_rules(ClassifierConfig { count: false, ..Default::default() }, base.iter().cloned()).expect("load");
    let _reader = c.reader();
    let dropped = |r: &Rule| {
        let mut r = r.clone();
        r.actions = vec![Action::Drop];
        r
    };
    let singles: Vec<Rule> = extra[..ops].to_vec();
    let mut ids: Vec<RuleId> = Vec::with_capacity(ops);
    timed("insert, single", ops, || ids.extend(singles.into_iter().map(|r| c.insert(r).expect("insert"))));
    let mods: Vec<Rule> = extra[..ops].iter().map(dropped).collect();
    timed("modify, single", ops, || ids.iter().zip(mods).for_each(|(id, r)| c.modify(*id, r).expect("modify")));
    timed("delete, single", ops, || ids.iter().for_each(|id| c.delete(*id).expect("delete")));
    let batches: Vec<Batch> = extra[ops..].chunks(1000).map(|ch| Batch { updates: ch.iter().cloned().map(Update::Insert).collect() }).collect();
    let mut bids: Vec<RuleId> = Vec::with_capacity(ops);
    timed("insert, batches of 1000", ops, || batches.into_iter().for_each(|b| bids.extend(c.apply(b).expect("batch"))));
    let batches: Vec<Batch> = bids
        .chunks(1000)
        .zip(extra[ops..].chunks(1000))
        .map(|(ids, rs)| Batch { updates: ids.iter().zip(rs).map(|(id, r)| Update::Modify(*id, dropped(r))).collect() })
        .collect();
    timed("modify, batches of 1000", ops, || batches.into_iter().for_each(|b| drop(c.apply(b).expect("batch"))));
    let batches: Vec<Batch> = bids.chunks(1000).map(|ids| Batch { updates: ids.iter().map(|id| Update::Delete(*id)).collect() }).collect();
    timed("delete, batches of 1000", ops, || batches.into_iter().for_each(|b| drop(c.apply(b).expect("batch"))));
    assert_eq!(c.len(), n);
}
