//! Integration tests of the virtual ConnectX NICs: the PAM'21 qualitative claims hold
//! with the profiles' initial values, runs reproduce, bad scenarios get clear errors.

mod claims;
mod contract;
mod fuzz_regressions;
mod invariants;
mod scenario;

use nicbench_models::connectx::result::Result as SimResult;
use nicbench_models::run_json;
use serde_json::{json, Value};

pub fn profiles_dir() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../profiles").to_string()
}

/// A Fig. 2-style scenario: 10k UDP flows of `size` B at `gbps`, `count` exact rules over `groups`.
pub fn fig2(count: u64, groups: u32, size: u32, gbps: f64, duration_ms: u64) -> Value {
    json!({
        "nic": "connectx5",
        "profiles_dir": profiles_dir(),
        "seed": 1,
        "duration_ns": duration_ms * 1_000_000,
        "traffic": {"flows": 10000, "size": {"fixed": size}, "rate": {"gbps": gbps}},
        "rules": {"generated": {"kind": "exact5", "count": count, "groups": groups, "seed": 1, "hit_fraction": 0.0}},
        "measure": {"timeline_bin_ns": 1_000_000, "latency": true, "queues": true}
    })
}

pub fn run(scenario: &Value) -> SimResult {
    let json = run_json("connectx", &scenario.to_string(), &mut |_| {}).expect("scenario runs");
    serde_json::from_str(&json).expect("result parses")
}
mod snapshot;
mod snapshot_cases;
