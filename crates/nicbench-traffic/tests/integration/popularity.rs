//! Flow popularity: Zipf rank-1 share matches 1/H(n, s); uniform is flat.

use nicbench_traffic::{Popularity, TrafficConfig, TrafficGen};

fn flow_counts(flows: u32, popularity: Popularity, packets: u64) -> Vec<u64> {
    let config = TrafficConfig {
        flows,
        popularity,
        packets: Some(packets),
        seed: 11,
        ..TrafficConfig::default()
    };
    let mut generator = TrafficGen::new(&config).expect("config");
    let mut counts = vec![0u64; flows as usize];
    while let Some(meta) = generator.next_meta() {
        counts[meta.flow_index as usize] += 1;
    }
    counts
}

fn zipf_share(n: u32, s: f64, rank: u32) -> f64 {
    let h: f64 = (1..=n).map(|k| f64::from(k).powf(-s)).sum();
    f64::from(rank).powf(-s) / h
}

#[test]
fn zipf_top_ranks_match_theory() {
    let packets = 200_000u64;
    for s in [0.8, 1.0, 1.5] {
        let counts = flow_counts(1000, Popularity::Zipf { s }, packets);
        for rank in [1u32, 2, 10] {
            let expect = zipf_share(1000, s, rank);
            let got = counts[rank as usize - 1] as f64 / packets as f64;
            // σ = sqrt(p(1-p)/n) ≤ 0.0011 here; allow 5σ.
            let tol = 5.0 * (expect * (1.0 - expect) / packets as f64).sqrt();
            assert!((got - expect).abs() < tol, "s={s} rank {rank}: {got:.4} vs {expect:.4}");
        }
    }
}

#[test]
fn uniform_is_flat() {
    let counts = flow_counts(100, Popularity::Uniform, 100_000);
    let (min, max) = (counts.iter().min().copied(), counts.iter().max().copied());
    // Mean 1000, σ ≈ 31.
    assert!(min >= Some(850) && max <= Some(1150), "min {min:?} max {max:?}");
}
