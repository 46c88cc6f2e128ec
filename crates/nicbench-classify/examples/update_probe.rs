//! Quick A/B probe of the update path: CPU time per single insert, modify and delete, and
//! per rule in atomic batches, into a table of exact 5-tuple rules (1M by default), with
//! one idle reader registered. Rules are built before the clock starts (the `updates`
//! bench also counts the caller's `Rule` clones).
//!
//! Last, the Fig. 4 updater as the `updates` bench runs it ([`measure::modify_at_rate`]:
//! the caller's batch building included) at 1M rules/s for `rate_ms`, on a thread named
//! `updater` (`perf report --comms updater` isolates it).
//!
//! Before it, the updater's work without its clock (deterministic, for callgrind): `ops`
//! modifies of the base rules in batches of 200 (1M/s in 200 µs ticks) built as the
//! updater builds them, in a new `Batch` each time and in one refilled `Batch`.
//!
//! Phases worth isolating under callgrind are functions of their own:
//! `valgrind --tool=callgrind --toggle-collect='update_probe::modify_batches' …` counts the
//! batched modifies only (divide by `ops`), `…='update_probe::caller_batches'` the two
//! updater-like phases (divide by `2 * ops`), `…='update_probe::updater_at_1m'` the
//! updater (divide by the updates it prints).
//!
//! `cargo run --release -p nicbench-classify --example update_probe [rules [ops [rate_ms]]]`

use nicbench_classify::{measure, workload, Batch, Classifier, ClassifierConfig, RuleId, Update};
use nicbench_rules::{Action, Rule};
use std::time::{Duration, Instant};

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
    println!(
        "{name:<28} {:>6.2} M/s wall {:>6.2} M/s cpu ({:.0} ns/op cpu)",
        n as f64 / wall / 1e6,
        n as f64 / cpu / 1e6,
        cpu * 1e9 / n as f64
    );
}

fn main() {
    let arg = |i: usize, d: usize| std::env::args().nth(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let (n, ops, rate_ms) = (arg(1, 1_000_000), arg(2, 100_000), arg(3, 1000));
    let (all, _) = workload::exact5(n + 2 * ops, 9);
    let (base, extra) = all.split_at(n);
    let (mut c, base_ids) = Classifier::with_rules(
        ClassifierConfig {
            count: false,
            ..Default::default()
        },
        base.iter().cloned(),
    )
    .expect("load");
    let _reader = c.reader();
    let dropped = |r: &Rule| {
        let mut r = r.clone();
        r.actions = vec![Action::Drop];
        r
    };
    let singles: Vec<Rule> = extra[..ops].to_vec();
    let mut ids: Vec<RuleId> = Vec::with_capacity(ops);
    timed("insert, single", ops, || {
        ids.extend(singles.into_iter().map(|r| c.insert(r).expect("insert")))
    });
    let mods: Vec<Rule> = extra[..ops].iter().map(dropped).collect();
    timed("modify, single", ops, || {
        ids.iter()
            .zip(mods)
            .for_each(|(id, r)| c.modify(*id, r).expect("modify"))
    });
    timed("delete, single", ops, || {
        ids.iter().for_each(|id| c.delete(*id).expect("delete"))
    });
    let batches: Vec<Batch> = extra[ops..]
        .chunks(1000)
        .map(|ch| Batch {
            updates: ch.iter().cloned().map(Update::Insert).collect(),
        })
        .collect();
    let mut bids: Vec<RuleId> = Vec::with_capacity(ops);
    timed("insert, batches of 1000", ops, || {
        batches
            .into_iter()
            .for_each(|b| bids.extend(c.apply(b).expect("batch")))
    });
    let batches: Vec<Batch> = bids
        .chunks(1000)
        .zip(extra[ops..].chunks(1000))
        .map(|(ids, rs)| Batch {
            updates: ids
                .iter()
                .zip(rs)
                .map(|(id, r)| Update::Modify(*id, dropped(r)))
                .collect(),
        })
        .collect();
    timed("modify, batches of 1000", ops, || modify_batches(&mut c, batches));
    let batches: Vec<Batch> = bids
        .chunks(1000)
        .map(|ids| Batch {
            updates: ids.iter().map(|id| Update::Delete(*id)).collect(),
        })
        .collect();
    timed("delete, batches of 1000", ops, || {
        batches.into_iter().for_each(|b| drop(c.apply(b).expect("batch")))
    });
    assert_eq!(c.len(), n);
    timed("modify, new batches of 200", ops, || {
        caller_batches(&mut c, &base_ids, base, ops, false)
    });
    timed("modify, refilled batch of 200", ops, || {
        caller_batches(&mut c, &base_ids, base, ops, true)
    });
    let (applied, cpu_s) = std::thread::scope(|s| {
        let updater = std::thread::Builder::new().name("updater".into());
        let h = updater
            .spawn_scoped(s, || {
                updater_at_1m(&mut c, &base_ids, base, Duration::from_millis(rate_ms as u64))
            })
            .expect("spawn");
        h.join().expect("updater")
    });
    println!(
        "{:<28} {applied} updates in {rate_ms} ms, {:.0} ns/op cpu",
        "updater at 1M/s (measure)",
        cpu_s * 1e9 / applied.max(1) as f64
    );
    assert_eq!(c.len(), n);
}

#[inline(never)]
fn modify_batches(c: &mut Classifier, batches: Vec<Batch>) {
    batches.into_iter().for_each(|b| drop(c.apply(b).expect("batch")));
}

/// `ops` modifies of `rules` (installed as `ids`) in batches of 200, each rule alternating
/// between `drop` and its own actions, built as `measure`'s updater does (owned rules,
/// cloned from `rules`); `reuse`: one `Batch` refilled ([`Classifier::apply_from`]).
#[inline(never)]
fn caller_batches(c: &mut Classifier, ids: &[RuleId], rules: &[Rule], ops: usize, reuse: bool) {
    const BATCH: usize = 200;
    let mut b = Batch::new();
    for start in (0..ops).step_by(BATCH) {
        if !reuse {
            b = Batch::new();
        }
        for k in start..(start + BATCH).min(ops) {
            let (id, rule) = measure::nth_modify(ids, rules, k);
            b.modify(id, rule);
        }
        if reuse {
            c.apply_from(&mut b).expect("batch");
        } else {
            c.apply(std::mem::take(&mut b)).expect("batch");
        }
    }
}

/// `measure::modify_at_rate` at 1M/s: (updates applied, thread CPU seconds).
#[inline(never)]
fn updater_at_1m(c: &mut Classifier, ids: &[RuleId], rules: &[Rule], duration: Duration) -> (u64, f64) {
    let c0 = thread_cpu_s();
    let (applied, _) = measure::modify_at_rate(c, ids, rules, 1_000_000.0, duration).expect("modifies");
    (applied, thread_cpu_s() - c0)
}
