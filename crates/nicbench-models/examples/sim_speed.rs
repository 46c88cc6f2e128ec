//! Simulation speed of the PAM'21 Fig. 2 scenario (1500 B, 10K flows, 100 Gb/s), one
//! virtual second: `cargo run --release -p nicbench-models --example sim_speed [groups rules seconds]`,
//! or any scenario: `... --example sim_speed scenario.json` (for profiling).
//! Prints wall time, simulated packets and M packets per wall second (setup included).
use nicbench_models::run_json;
use serde_json::json;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, d: f64| args.get(i).and_then(|a| a.parse::<f64>().ok()).unwrap_or(d);
    let (groups, rules, seconds) = (arg(1, 1.0) as u32, arg(2, 1000.0) as u64, arg(3, 1.0));
    let from_file = args
        .get(1)
        .filter(|a| a.ends_with(".json"))
        .map(|path| std::fs::read_to_string(path).unwrap_or_default());
    let scenario = from_file.unwrap_or_else(|| {
        json!({
            "nic": "connectx5",
            "profiles_dir": concat!(env!("CARGO_MANIFEST_DIR"), "/../../profiles"),
            "duration_ns": (seconds * 1e9) as u64,
            "traffic": {"flows": 10000, "size": {"fixed": 1500}, "rate": {"gbps": 100.0}},
            "rules": {"generated": {"kind": "exact5", "count": rules, "groups": groups}},
        })
        .to_string()
    });
    let wall = std::time::Instant::now();
    match run_json("connectx", &scenario, &mut |_| {}) {
        Ok(out) => {
            let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
            let packets = v["sim"]["packets"].as_f64().unwrap_or(0.0);
            let s = wall.elapsed().as_secs_f64();
            println!(
                "groups={groups} rules={rules} virtual={seconds}s wall={s:.3}s packets={packets} => {:.1} M packets/s (rx {:.1} Gbps)",
                packets / s / 1e6,
                v["rx_gbps"].as_f64().unwrap_or(0.0)
            );
        }
        Err(e) => eprintln!("error: {e}"),
    }
}
