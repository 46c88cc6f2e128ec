//! Simulation speed for the PAM'21 Fig. 2 scenario (1500 B, 10k flows, 100 Gb/s):
//! target ≥ 20 M simulated packets per wall second on one core.
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use nicbench_models::run_json;
use serde_json::json;

fn scenario(groups: u32, count: u64, duration_ns: u64) -> String {
    json!({
        "nic": "connectx5",
        "profiles_dir": concat!(env!("CARGO_MANIFEST_DIR"), "/../../profiles"),
        "duration_ns": duration_ns,
        "traffic": {"flows": 10000, "size": {"fixed": 1500}, "rate": {"gbps": 100.0}},
        "rules": {"generated": {"kind": "exact5", "count": count, "groups": groups}},
    })
    .to_string()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("fig2");
    g.sample_size(10);
    g.measurement_time(std::time::Duration::from_secs(8));
    // 200 ms of virtual 100 GbE = 1.64 M packets of 1500 B.
    g.throughput(Throughput::Elements(1_644_737));
    for (name, groups, count) in [
        ("table0_1k", 0, 1000),
        ("table1_1k", 1, 1000),
        ("tables16_100k", 16, 100_000),
    ] {
        let s = scenario(groups, count, 200_000_000);
        g.bench_function(name, |b| {
            b.iter(|| run_json("connectx", &s, &mut |_| {}).map(|r| r.len()).unwrap_or(0))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
