//! Quick A/B probe of the exact-match lookup path: wall and lookup-thread CPU-time Mpps on
//! exact 5-tuple sets (1M rules: DRAM-bound; 16K: in cache), 32-packet bursts, no counting.
//!
//! `cargo run --release -p nicbench-classify --example exact_probe [seconds [rules…]]`

use nicbench_classify::{workload, Classifier, ClassifierConfig, FiveTuple, Outcome, PacketKey, Reader};
use std::time::{Duration, Instant};

fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid out-pointer; CLOCK_THREAD_CPUTIME_ID is always available on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1.5);
    let sizes: Vec<usize> = std::env::args().skip(2).filter_map(|s| s.parse().ok()).collect();
    let sizes = if sizes.is_empty() {
        vec![1_000_000usize, 16_384]
    } else {
        sizes
    };
    for n in sizes {
        let (rules, keys) = workload::exact5(n, 1);
        let trace: Vec<PacketKey> = (0..1usize << 16)
            .map(|i| keys[i.wrapping_mul(2654435761) % n])
            .collect();
        let (cl, _) = Classifier::with_rules(
            ClassifierConfig {
                count: false,
                ..Default::default()
            },
            rules,
        )
        .unwrap();
        let reader = cl.reader();
        let tuples: Vec<FiveTuple> = trace.iter().map(FiveTuple::of_key).collect();
        assert!(tuples.iter().zip(&trace).all(|(t, k)| t.key() == *k));
        run(&format!("exact5_{n} PacketKey trace"), secs, &reader, |r, out| {
            for (k, o) in trace.chunks(32).zip(out.chunks_mut(32)) {
                r.lookup_burst(k, o);
            }
        });
        run(&format!("exact5_{n} FiveTuple trace"), secs, &reader, |r, out| {
            r.lookup_burst_tuples(&tuples, out)
        });
    }
}

fn run(name: &str, secs: f64, reader: &Reader, f: impl Fn(&Reader, &mut [Outcome])) {
    let mut out = vec![reader.lookup(&PacketKey::default()); 1 << 16];
    // Warm up, then check every packet matched.
    f(reader, &mut out);
    assert!(out.iter().all(|o| o.rule.is_some()), "every key hits its rule");
    let (t0, c0) = (Instant::now(), thread_cpu_s());
    let mut done = 0u64;
    while t0.elapsed() < Duration::from_secs_f64(secs) {
        f(reader, &mut out);
        done += out.len() as u64;
    }
    let (wall, cpu) = (t0.elapsed().as_secs_f64(), thread_cpu_s() - c0);
    std::hint::black_box(&out);
    println!(
        "{name}: {:.1} Mpps wall, {:.1} Mpps cpu ({:.1} ns/pkt cpu)",
        done as f64 / wall / 1e6,
        done as f64 / cpu / 1e6,
        cpu * 1e9 / done as f64
    );
}
