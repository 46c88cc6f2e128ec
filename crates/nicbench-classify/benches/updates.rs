//! Update rates into a 1M-rule exact-match table, and lookup throughput while updates run
//! (the software analogue of PAM'21 Fig. 4): on another core, and interleaved on the same
//! core. Prints tables; run with `cargo bench -p nicbench-classify --bench updates`.
//! `NICBENCH_UPDATES_RULES` overrides the table size (default 1,000,000).

mod common;

use nicbench_classify::measure::{lookup_rate, lookups_while_updating, modify_at_rate, UpdatePlacement};
use nicbench_classify::{Batch, Classifier, ClassifierConfig, PacketKey, RuleId};
use nicbench_rules::Rule;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const OPS: usize = 100_000;
const BATCH: usize = 1_000;
const PHASE: Duration = Duration::from_millis(1500);

fn rate(n: usize, t: Duration) -> f64 {
    n as f64 / t.as_secs_f64()
}

/// What the other thread does in a control run.
#[derive(Clone, Copy)]
enum Noise {
    /// Arithmetic on registers only.
    Spin,
    /// Random cache-line writes over a private 64 MiB buffer (no data shared with the
    /// lookups): the memory traffic of an updater without its synchronization.
    RandomWrites,
}

/// Runs `f` while another thread makes `noise`.
fn other_core_busy<T>(noise: Noise, f: impl FnOnce() -> T) -> T {
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut x = 1u64;
            let mut buf = match noise {
                Noise::Spin => Vec::new(),
                Noise::RandomWrites => vec![0u64; 8 << 20],
            };
            let lines = (buf.len() / 8) as u64;
            while !stop.load(Ordering::Relaxed) {
                for _ in 0..1024 {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                    if lines > 0 {
                        buf[((x >> 33) % lines) as usize * 8] += 1;
                    }
                }
            }
            std::hint::black_box(&buf);
        });
        let out = f();
        stop.store(true, Ordering::Relaxed);
        out
    })
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let n: usize = std::env::var("NICBENCH_UPDATES_RULES").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000);
    let (all, all_keys) = common::exact5(n + 3 * OPS, 9);
    let (base, extra) = all.split_at(n);
    let t = Instant::now();
    let (mut c, ids) = Classifier::with_rules(ClassifierConfig { count: false, ..Default::default() }, base.iter().cloned()).unwrap();
    println!("initial load: {n} rules in one batch: {:.2} s ({:.2} M rules/s), {:.0} B/rule", t.elapsed().as_secs_f64(), rate(n, t.elapsed()) / 1e6, c.stats().memory_bytes_per_rule);
    let _reader = c.reader(); // an idle reader registered, as in a real deployment

    println!("\n| operation (table of {n}) | single (rules/s) | batches of {BATCH} (rules/s) | single, deferred publish (rules/s) |\n|---|---|---|---|");
    let one = |u: nicbench_classify::Update| Batch { updates: vec![u] };
    // Insert.
    let t = Instant::now();
    let mut new_ids: Vec<RuleId> = extra[..OPS].iter().map(|r| c.insert(r.clone()).unwrap()).collect();
    let single_ins = rate(OPS, t.elapsed());
    let t = Instant::now();
    for chunk in extra[OPS..2 * OPS].chunks(BATCH) {
        let mut b = Batch::new();
        chunk.iter().for_each(|r| { b.insert(r.clone()); });
        new_ids.extend(c.apply(b).unwrap());
    }
    let batch_ins = rate(OPS, t.elapsed());
    // Deferred: each insert validated at once, published every 1024 ops / 500 us.
    let t = Instant::now();
    let mut def_ids: Vec<RuleId> = Vec::with_capacity(OPS);
    for r in &extra[2 * OPS..3 * OPS] {
        def_ids.push(c.apply_deferred(one(nicbench_classify::Update::Insert(r.clone()))).unwrap()[0]);
    }
    c.flush();
    let def_ins = rate(OPS, t.elapsed());
    println!("| insert | {single_ins:.0} | {batch_ins:.0} | {def_ins:.0} |");
    // Modify in place (new actions and pattern of another rule's key space: same cost).
    let modified = |r: &Rule| { let mut r = r.clone(); r.actions = vec![nicbench_rules::Action::Drop]; r };
    let t = Instant::now();
    for (id, r) in new_ids[..OPS].iter().zip(&extra[..OPS]) {
        c.modify(*id, modified(r)).unwrap();
    }
    let single_mod = rate(OPS, t.elapsed());
    let t = Instant::now();
    for (ids, rs) in new_ids[OPS..].chunks(BATCH).zip(extra[OPS..].chunks(BATCH)) {
        let mut b = Batch::new();
        ids.iter().zip(rs).for_each(|(id, r)| { b.modify(*id, modified(r)); });
        c.apply(b).unwrap();
    }
    let batch_mod = rate(OPS, t.elapsed());
    let t = Instant::now();
    for (id, r) in def_ids.iter().zip(&extra[2 * OPS..]) {
        c.apply_deferred(one(nicbench_classify::Update::Modify(*id, modified(r)))).unwrap();
    }
    c.flush();
    let def_mod = rate(OPS, t.elapsed());
    println!("| modify | {single_mod:.0} | {batch_mod:.0} | {def_mod:.0} |");
    let t = Instant::now();
    for id in &new_ids[..OPS] {
        c.delete(*id).unwrap();
    }
    let single_del = rate(OPS, t.elapsed());
    let t = Instant::now();
    for ids in new_ids[OPS..].chunks(BATCH) {
        let mut b = Batch::new();
        ids.iter().for_each(|id| { b.delete(*id); });
        c.apply(b).unwrap();
    }
    let batch_del = rate(OPS, t.elapsed());
    let t = Instant::now();
    for id in &def_ids {
        c.apply_deferred(one(nicbench_classify::Update::Delete(*id))).unwrap();
    }
    c.flush();
    let def_del = rate(OPS, t.elapsed());
    println!("| delete | {single_del:.0} | {batch_del:.0} | {def_del:.0} |");

    // Lookups while updating (nicbench_classify::measure, shared with the harness targets).
    // Keys hit the base rules, in scattered order.
    let keys: Vec<PacketKey> = (0..1 << 16).map(|i: usize| all_keys[i.wrapping_mul(2654435761) % n]).collect();
    let keys = Arc::new(keys);
    // Controls: what the other vCPU costs the lookups when it only spins (no memory
    // traffic; on a VM whose vCPUs share physical cores this is not zero), and when it writes
    // random lines of its own memory (no shared data). No updater on that vCPU does better
    // than the first; one that touches as much memory pays like the second.
    // Alternated three times, best of each: a single 1.5 s phase swings by ±10% here.
    let short = PHASE / 3;
    for (noise, what) in [(Noise::Spin, "spinning"), (Noise::RandomWrites, "writing random lines of a private 64 MiB buffer")] {
        let (mut alone, mut busy) = (0.0f64, 0.0f64);
        for _ in 0..3 {
            alone = alone.max(lookup_rate(&c, &keys, short).lookup_mpps);
            busy = busy.max(other_core_busy(noise, || lookup_rate(&c, &keys, short)).lookup_mpps);
        }
        println!("control: lookups alone {alone:.2} Mpps; with the other core {what} {busy:.2} Mpps ({:.1}% lower)", 100.0 * (1.0 - busy / alone));
    }
    // Third control: the updater's whole load without any sharing — the other core modifies
    // a second classifier with the same rules at the 1M/s setting, which the lookups never
    // read. What this costs is interference through the machine (caches, memory, the
    // hypervisor), not the classifier's synchronization or table state.
    {
        let (mut twin, twin_ids) = Classifier::with_rules(ClassifierConfig { count: false, ..Default::default() }, base.iter().cloned()).unwrap();
        let (mut alone, mut busy, mut achieved) = (0.0f64, 0.0f64, 0.0f64);
        for _ in 0..3 {
            alone = alone.max(lookup_rate(&c, &keys, short).lookup_mpps);
            let (load, (applied, took)) = std::thread::scope(|s| {
                let updater = s.spawn(|| modify_at_rate(&mut twin, &twin_ids, base, 1_000_000.0, short));
                let load = lookup_rate(&c, &keys, short);
                (load, updater.join().expect("updater").expect("updates apply"))
            });
            busy = busy.max(load.lookup_mpps);
            achieved = achieved.max(applied as f64 / took.as_secs_f64());
        }
        println!(
            "control: lookups alone {alone:.2} Mpps; with the other core modifying a separate {n}-rule classifier ({achieved:.0} updates/s) {busy:.2} Mpps ({:.1}% lower)",
            100.0 * (1.0 - busy / alone)
        );
    }
    // The last column separates the two effects of updates: lookups alone, right after the
    // phase, see the table as the updates left it (deleted entries that still lengthen probe
    // runs until reused or rebuilt), without an updater running.
    println!("\n| update rate target (rules/s) | updates achieved (rules/s) | lookup Mpps, updates on other core | degradation | lookup Mpps, same core interleaved | degradation | lookup Mpps alone right after | degradation |\n|---|---|---|---|---|---|---|---|");
    let mut baseline = (0.0, 0.0, 0.0);
    for target in [0.0, 10_000.0, 100_000.0, 1_000_000.0] {
        let run = |c: &mut Classifier, placement| {
            lookups_while_updating(c, &ids, base, keys.clone(), target, placement, PHASE).expect("updates apply")
        };
        let other = run(&mut c, UpdatePlacement::OtherCore);
        let same = run(&mut c, UpdatePlacement::SameCore);
        let after = lookup_rate(&c, &keys, PHASE / 2);
        if target == 0.0 {
            baseline = (other.lookup_mpps, same.lookup_mpps, after.lookup_mpps);
        }
        let deg = |x: f64, b: f64| if b > 0.0 { format!("{:.1}%", 100.0 * (1.0 - x / b)) } else { "-".into() };
        println!(
            "| {target:.0} | {:.0} | {:.2} | {} | {:.2} | {} | {:.2} | {} |",
            other.updates_per_s,
            other.lookup_mpps,
            deg(other.lookup_mpps, baseline.0),
            same.lookup_mpps,
            deg(same.lookup_mpps, baseline.1),
            after.lookup_mpps,
            deg(after.lookup_mpps, baseline.2)
        );
    }
}
