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
    let n: usize = std::env::var("NICBENCH_UPDATES_RULES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let (all, all_keys) = common::exact5(n + 3 * OPS, 9);
    let (base, extra) = all.split_at(n);
    let t = Instant::now();
    let (mut c, ids) = Classifier::with_rules(
        ClassifierConfig {
            count: false,
            ..Default::default()
        },
        base.iter().cloned(),
    )
    .unwrap();
    println!(
        "initial load: {n} rules in one batch: {:.2} s ({:.2} M rules/s), {:.0} B/rule",
        t.elapsed().as_secs_f64(),
        rate(n, t.elapsed()) / 1e6,
        c.stats().memory_bytes_per_rule
    );
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
        chunk.iter().for_each(|r| {
            b.insert(r.clone());
        });
        new_ids.extend(c.apply(b).unwrap());
    }
    let batch_ins = rate(OPS, t.elapsed());
    // Deferred: each insert validated at once, published every 1024 ops / 500 us.
    let t = Instant::now();
    let mut def_ids: Vec<RuleId> = Vec::with_capacity(OPS);
    for r in &extra[2 * OPS..3 * OPS] {
        def_ids.push(
            c.apply_deferred(one(nicbench_classify::Update::Insert(r.clone())))
                .unwrap()[0],
        );
    }
    c.flush();
    let def_ins = rate(OPS, t.elapsed());
    println!("| insert | {single_ins:.0} | {batch_ins:.0} | {def_ins:.0} |");
    // Modify in place (new actions and pattern of another rule's key space: same cost).
    let modified = |r: &Rule| {
        let mut r = r.clone();
        r.actions = vec![nicbench_rules::Action::Drop];
        r
    };
    let t = Instant::now();
    for (id, r) in new_ids[..OPS].iter().zip(&extra[..OPS]) {
        c.modify(*id, modified(r)).unwrap();
    }
    let single_mod = rate(OPS, t.elapsed());
    let t = Instant::now();
    for (ids, rs) in new_ids[OPS..].chunks(BATCH).zip(extra[OPS..].chunks(BATCH)) {
        let mut b = Batch::new();
        ids.iter().zip(rs).for_each(|(id, r)| {
            b.modify(*id, modified(r));
        });
        c.apply(b).unwrap();
    }
    let batch_mod = rate(OPS, t.elapsed());
    let t = Instant::now();
    for (id, r) in def_ids.iter().zip(&extra[2 * OPS..]) {
        c.apply_deferred(one(nicbench_classify::Update::Modify(*id, modified(r))))
            .unwrap();
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
        ids.iter().for_each(|id| {
            b.delete(*id);
        });
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
    let keys: Vec<PacketKey> = (0..1 << 16)
        .map(|i: usize| all_keys[i.wrapping_mul(2654435761) % n])
        .collect();
    let keys = Arc::new(keys);
    // Every comparison below alternates its two sides in short phases, ROUNDS times, and
    // reports the median of the paired losses with their range: this shared host's speed
    // drifts by ±10% over seconds, which one long phase per side would take for an effect.
    // Controls: what the other vCPU costs the lookups when it only spins (no memory
    // traffic; on a VM whose vCPUs share physical cores this is not zero), and when it writes
    // random lines of its own memory (no shared data). No updater on that vCPU does better
    // than the first; one that touches as much memory pays like the second.
    for (noise, what) in [
        (Noise::Spin, "spinning"),
        (Noise::RandomWrites, "writing random lines of a private 64 MiB buffer"),
    ] {
        let p = paired(
            || lookup_rate(&c, &keys, SHORT).lookup_mpps,
            || other_core_busy(noise, || lookup_rate(&c, &keys, SHORT)).lookup_mpps,
        );
        println!(
            "control: lookups alone {:.2} Mpps; with the other core {what} {:.2} Mpps ({})",
            p.alone,
            p.busy,
            p.loss()
        );
    }
    // Fig. 4. Each round looks up alone; with the updater on the other core; with the same
    // updater on the other core modifying a second classifier with the same rules, which
    // the lookups never read (its cost is interference through the machine — caches,
    // memory, the hypervisor — not the classifier's synchronization or table state); and
    // interleaved with the updates on the same core (in this order on even rounds, reversed
    // on odd ones). The alone phases see the table as the updates before them left it, so a
    // loss is that of an updater running.
    let (mut twin, twin_ids) = Classifier::with_rules(
        ClassifierConfig {
            count: false,
            ..Default::default()
        },
        base.iter().cloned(),
    )
    .unwrap();
    println!("\n| update rate target (rules/s) | lookup Mpps alone | updates achieved, other core (rules/s) | lookup Mpps | loss (range) | loss, other core updating a separate classifier (range) | updates achieved, same core (rules/s) | lookup Mpps, same core interleaved | loss (range) |\n|---|---|---|---|---|---|---|---|---|");
    for target in [10_000.0, 100_000.0, 1_000_000.0] {
        // Phase results: (lookup Mpps, updates/s) of alone, other core, separate, same core.
        let mut phases: [Vec<(f64, f64)>; 4] = Default::default();
        for round in 0..ROUNDS {
            // Even rounds run the phases in order, odd ones in reverse: under a steady drift
            // every loaded phase is as far from its alone phase on average either way.
            let order: [usize; 4] = if round % 2 == 0 { [0, 1, 2, 3] } else { [3, 2, 1, 0] };
            for p in order {
                let r = match p {
                    0 => (lookup_rate(&c, &keys, SHORT).lookup_mpps, 0.0),
                    1 | 3 => {
                        let placement = if p == 1 {
                            UpdatePlacement::OtherCore
                        } else {
                            UpdatePlacement::SameCore
                        };
                        let l = lookups_while_updating(&mut c, &ids, base, keys.clone(), target, placement, SHORT)
                            .expect("updates apply");
                        (l.lookup_mpps, l.updates_per_s)
                    }
                    _ => std::thread::scope(|s| {
                        let updater = s.spawn(|| modify_at_rate(&mut twin, &twin_ids, base, target, SHORT));
                        let load = lookup_rate(&c, &keys, SHORT);
                        let (applied, took) = updater.join().expect("updater").expect("updates apply");
                        (load.lookup_mpps, applied as f64 / took.as_secs_f64())
                    }),
                };
                phases[p].push(r);
            }
        }
        let mpps = |p: usize| phases[p].iter().map(|r| r.0).collect::<Vec<f64>>();
        let rate = |p: usize| median(&mut phases[p].iter().map(|r| r.1).collect::<Vec<f64>>());
        let (po, pt, ps) = (
            Paired::new(&mpps(0), &mpps(1)),
            Paired::new(&mpps(0), &mpps(2)),
            Paired::new(&mpps(0), &mpps(3)),
        );
        let (other_rate, same_rate) = (rate(1), rate(3));
        println!(
            "| {target:.0} | {:.2} | {other_rate:.0} | {:.2} | {} | {} | {same_rate:.0} | {:.2} | {} |",
            po.alone,
            po.busy,
            po.loss(),
            pt.loss(),
            ps.busy,
            ps.loss()
        );
    }
}

/// Rounds of each alternated comparison, and the length of one side's phase.
const ROUNDS: usize = 15;
const SHORT: Duration = Duration::from_millis(250);

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Lookup rates measured alone and beside a load, in alternated pairs.
struct Paired {
    /// Medians \[Mpps\].
    alone: f64,
    busy: f64,
    /// Loss of each pair, sorted \[fraction\].
    losses: Vec<f64>,
}

impl Paired {
    fn new(alone: &[f64], busy: &[f64]) -> Self {
        let mut losses: Vec<f64> = alone.iter().zip(busy).map(|(a, b)| 1.0 - b / a).collect();
        losses.sort_by(f64::total_cmp);
        Paired {
            alone: median(&mut alone.to_vec()),
            busy: median(&mut busy.to_vec()),
            losses,
        }
    }

    /// "median% (min% to max%)" of the paired losses.
    fn loss(&self) -> String {
        let pct = |x: f64| format!("{:.1}%", 100.0 * x);
        let mut l = self.losses.clone();
        format!("{} ({} to {})", pct(median(&mut l)), pct(l[0]), pct(l[l.len() - 1]))
    }
}

/// Alternates `alone` and `busy` (each returning Mpps) [`ROUNDS`] times, in both orders.
fn paired(mut alone: impl FnMut() -> f64, mut busy: impl FnMut() -> f64) -> Paired {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        // Odd rounds measure the loaded side first (see the Fig. 4 rounds).
        if round % 2 == 0 {
            a.push(alone());
            b.push(busy());
        } else {
            b.push(busy());
            a.push(alone());
        }
    }
    Paired::new(&a, &b)
}
