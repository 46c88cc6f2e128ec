//! Result snapshots for A/B checks of the simulator (same seed ⇒ same output):
//! `cargo run --release -p nicbench-models --example sim_golden -- OUT_DIR [scenario.json ...]`
//! writes one result JSON per scenario (wall-clock statistics removed) for a built-in list of
//! scenarios, or for the given scenario files; compare two directories with `diff -r`.
use nicbench_models::simulate_json;
use serde_json::{json, Value};

fn scenario(name: &str, duration_ns: u64, traffic: Value, rules: Value, install: Value) -> (String, String) {
    let s = json!({
        "nic": "connectx5",
        "profiles_dir": concat!(env!("CARGO_MANIFEST_DIR"), "/../../profiles"),
        "duration_ns": duration_ns,
        "seed": 3,
        "traffic": traffic,
        "rules": rules,
        "install": install,
        "measure": {"timeline_bin_ns": 1_000_000, "latency": true, "queues": true},
    });
    (name.to_string(), s.to_string())
}

fn main() {
    let out = std::env::args().nth(1).unwrap_or_else(|| "/tmp/sim_golden".into());
    std::fs::create_dir_all(&out).expect("out dir");
    let t = |size: u32, rate: Value, flows: u32| json!({"flows": flows, "size": {"fixed": size}, "rate": rate, "seed": 5});
    let g = |count: u64, groups: u32, hit: f64| json!({"generated": {"kind": "exact5", "count": count, "groups": groups, "seed": 2, "hit_fraction": hit}});
    let batch = |count: u64, group: u32, core: &str, start: u64| json!({"mode": "batch", "count": count, "start_ns": start, "group": group, "core": core, "op": "insert", "match": "ipv4", "actions": 1});
    let rate = |r: f64, group: u32, core: &str| json!({"mode": "rate", "rate_per_s": r, "start_ns": 0, "group": group, "core": core, "op": "insert", "match": "ipv4", "actions": 1});
    let files: Vec<String> = std::env::args().skip(2).collect();
    let builtin = vec![
        scenario("fig2_t0_1k", 30_000_000, t(1500, json!({"gbps": 100.0}), 10000), g(1000, 0, 0.0), Value::Null),
        scenario("fig2_t1_1k", 30_000_000, t(1500, json!({"gbps": 100.0}), 10000), g(1000, 1, 0.0), Value::Null),
        scenario("fig2_t16_100k", 30_000_000, t(1500, json!({"gbps": 100.0}), 10000), g(100_000, 16, 0.0), Value::Null),
        scenario("fig2_t4_1m_hit", 30_000_000, t(1500, json!({"gbps": 100.0}), 10000), g(1_000_000, 4, 1.0), Value::Null),
        scenario("fig2_t0_60k_64b", 20_000_000, t(64, json!({"gbps": 3.5}), 10000), g(60_000, 0, 0.0), Value::Null),
        scenario("fig2_t0_57k_hit", 20_000_000, t(1500, json!({"gbps": 100.0}), 10000), g(57_000, 0, 0.5), Value::Null),
        scenario("lat_5mpps_t8", 30_000_000, t(64, json!({"mpps": 5.0}), 10000), g(100_000, 8, 0.3), Value::Null),
        scenario("line_64b", 10_000_000, t(64, json!({"gbps": 100.0}), 1000), g(10, 0, 0.0), Value::Null),
        scenario("fig3_t0_same_1k", 400_000_000, t(1500, json!({"gbps": 100.0}), 10000), g(0, 0, 0.0), batch(1000, 0, "same", 100_000_000)),
        scenario("fig3_t0_dist_1k", 300_000_000, t(1500, json!({"gbps": 100.0}), 10000), g(0, 0, 0.0), batch(1000, 0, "distinct", 100_000_000)),
        scenario("fig3_t1_same_100k", 600_000_000, t(1500, json!({"gbps": 100.0}), 10000), g(0, 1, 0.0), batch(100_000, 1, "same", 50_000_000)),
        scenario("fig3_t1_dist_10k", 200_000_000, t(1500, json!({"gbps": 100.0}), 10000), g(0, 1, 0.0), batch(10_000, 1, "distinct", 50_000_000)),
        scenario("fig4_t0_same_5k", 100_000_000, t(1500, json!({"gbps": 100.0}), 10000), g(1000, 0, 0.0), rate(5000.0, 0, "same")),
        scenario("fig4_t1_same_300k", 100_000_000, t(1500, json!({"gbps": 100.0}), 10000), g(1000, 1, 0.0), rate(300_000.0, 1, "same")),
        scenario("fig4_t1_dist_500k", 100_000_000, t(64, json!({"mpps": 5.0}), 10000), g(1000, 1, 0.0), rate(500_000.0, 1, "distinct")),
        scenario("idle_install_t0", 2_000_000_000, t(64, json!({"mpps": 0.001}), 1), g(0, 0, 0.0), batch(2000, 0, "distinct", 1_000_000)),
    ];
    let list: Vec<(String, String)> = if files.is_empty() {
        builtin
    } else {
        files
            .iter()
            .map(|f| {
                let name = std::path::Path::new(f).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                (name, std::fs::read_to_string(f).expect("scenario file"))
            })
            .collect()
    };
    for (name, s) in list {
        let wall = std::time::Instant::now();
        match simulate_json(&s, &mut |_| {}) {
            Ok(r) => {
                let mut v: Value = serde_json::from_str(&r).expect("json");
                let packets = v["sim"]["packets"].clone();
                v["sim"] = json!({"packets": packets});
                std::fs::write(format!("{out}/{name}.json"), serde_json::to_string_pretty(&v).expect("ser")).expect("write");
                println!("{name}: {:.3}s packets={packets} rx={:.3}", wall.elapsed().as_secs_f64(), v["rx_gbps"].as_f64().unwrap_or(0.0));
            }
            Err(e) => println!("{name}: error {e}"),
        }
    }
}
