//! Update rates into a 1M-rule exact-match table, and lookup throughput while updates run
//! (the software analogue of PAM'21 Fig. 4): on another core, and interleaved on the same
//! core. Prints tables; run with `cargo bench -p nicbench-classify --bench updates`.
//! `NICBENCH_UPDATES_RULES` overrides the table size (default 1,000,000).

mod common;

use nicbench_classify::{Batch, Classifier, ClassifierConfig, Outcome, PacketKey, RuleId};
use nicbench_rules::Rule;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const OPS: usize = 100_000;
const BATCH: usize = 1_000;
const PHASE: Duration = Duration::from_millis(1500);

fn rate(n: usize, t: Duration) -> f64 {
    n as f64 / t.as_secs_f64()
}

fn lookup_loop(reader: &nicbench_classify::Reader, keys: &[PacketKey], stop: &AtomicBool) -> f64 {
    let mut out = vec![Outcome { verdict: nicbench_classify::Verdict::Unmatched, mark: None, groups_traversed: 0, last_group: 0, rule: None }; 32];
    let start = Instant::now();
    let mut done = 0u64;
    'outer: loop {
        for k in keys.chunks(32) {
            reader.lookup_burst(k, &mut out[..k.len()]);
            done += k.len() as u64;
            if stop.load(Ordering::Relaxed) {
                break 'outer;
            }
        }
    }
    std::hint::black_box(&out);
    done as f64 / start.elapsed().as_secs_f64() / 1e6
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

    // Lookups while updating. Keys hit the base rules, in scattered order.
    let keys: Vec<PacketKey> = (0..1 << 16).map(|i: usize| all_keys[i.wrapping_mul(2654435761) % n]).collect();
    let keys = Arc::new(keys);
    println!("\n| update rate target (rules/s) | updates achieved (rules/s) | lookup Mpps, updates on other core | degradation | lookup Mpps, same core interleaved | degradation |\n|---|---|---|---|---|---|");
    let mut baseline = (0.0, 0.0);
    for target in [0u64, 10_000, 100_000, 1_000_000] {
        // Other core: a reader thread looks up; this thread updates in 1 ms ticks (one
        // atomic batch of target/1000 modifies per tick).
        let stop = Arc::new(AtomicBool::new(false));
        let reader = c.reader();
        let (k2, s2) = (keys.clone(), stop.clone());
        let h = std::thread::spawn(move || lookup_loop(&reader, &k2, &s2));
        let done = AtomicU64::new(0);
        let start = Instant::now();
        let mut i = 0usize;
        while start.elapsed() < PHASE {
            let due = (target as f64 * start.elapsed().as_secs_f64()) as u64;
            let have = done.load(Ordering::Relaxed);
            if due > have {
                let k = ((due - have) as usize).min(10_000);
                let mut b = Batch::new();
                for _ in 0..k {
                    let j = i % n;
                    b.modify(ids[j], if (i / n) % 2 == 0 { modified(&base[j]) } else { base[j].clone() });
                    i += 1;
                }
                c.apply(b).unwrap();
                done.fetch_add(k as u64, Ordering::Relaxed);
            } else {
                std::thread::sleep(Duration::from_micros(200));
            }
        }
        stop.store(true, Ordering::Relaxed);
        let other = h.join().unwrap();
        let achieved = rate(done.load(Ordering::Relaxed) as usize, start.elapsed());
        // Same core: lookups and updates interleaved on this thread.
        let reader = c.reader();
        let mut out = vec![reader.lookup(&keys[0]); 32];
        let start = Instant::now();
        let (mut looked, mut upd) = (0u64, 0u64);
        let mut lookup_time = Duration::ZERO;
        while start.elapsed() < PHASE {
            let t0 = Instant::now();
            for k in keys.chunks(32).take(256) {
                reader.lookup_burst(k, &mut out);
                looked += 32;
            }
            lookup_time += t0.elapsed();
            let due = (target as f64 * start.elapsed().as_secs_f64()) as u64;
            if due > upd {
                let k = ((due - upd) as usize).min(10_000);
                let mut b = Batch::new();
                for _ in 0..k {
                    let j = i % n;
                    b.modify(ids[j], if (i / n) % 2 == 0 { modified(&base[j]) } else { base[j].clone() });
                    i += 1;
                }
                c.apply(b).unwrap();
                upd += k as u64;
            }
        }
        let same = looked as f64 / start.elapsed().as_secs_f64() / 1e6;
        std::hint::black_box(&out);
        let _ = lookup_time;
        if target == 0 {
            baseline = (other, same);
        }
        let deg = |x: f64, b: f64| if b > 0.0 { format!("{:.1}%", 100.0 * (1.0 - x / b)) } else { "-".into() };
        println!("| {target} | {achieved:.0} | {other:.2} | {} | {same:.2} | {} |", deg(other, baseline.0), deg(same, baseline.1));
    }
}
