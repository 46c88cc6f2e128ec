//! A megaflow counts file (`nicbench pvp --megaflows FILE`) as the PVP model gets it: the bytes,
//! when they are JSON (the CLI's `json.loads` refuses the rest), become the request's `megaflows`
//! for each datapath (tc-offload, kernel, dpdk), deserialized and run by the Rust model
//! (`registry::run_json("pvp", ...)`). The Python target `megaflow_json` drives the CLI's reading
//! of the same files; this one sees the coverage of the model, which atheris cannot.
//!
//! Checks: no panic (arithmetic overflow included: fuzz builds keep debug assertions); every error
//! is one line; a result's rates, loss, latency and host cores are finite, and its offloaded plus
//! software megaflows are the file's megaflows.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nicbench_models::registry;

fuzz_target!(|data: &[u8]| {
    let Ok(megaflows) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    for datapath in ["tc-offload", "kernel", "dpdk"] {
        let request = serde_json::json!({
            "nic": "connectx5-25g",
            "flows": 1024,
            "frame_bytes": 64,
            "datapath": datapath,
            "megaflows": megaflows,
            "profiles_dir": concat!(env!("CARGO_MANIFEST_DIR"), "/../profiles"),
        });
        let result = match registry::run_json("pvp", &request.to_string(), &mut |_| {}) {
            Ok(result) => result,
            Err(e) => {
                let text = e.to_string();
                assert!(!text.contains('\n'), "an error is one line: {text}");
                continue;
            }
        };
        let result: serde_json::Value = serde_json::from_str(&result).expect("the result is JSON");
        for key in ["mpps", "gbps", "loss", "latency_us", "host_cores_busy"] {
            let v = result[key].as_f64().unwrap_or(f64::NAN);
            assert!(v.is_finite(), "{key} = {} for {megaflows}", result[key]);
        }
        if let Some(masks) = megaflows.get("masks").and_then(|m| m.as_array()) {
            let total: u128 = masks.iter().filter_map(|m| m["megaflows"].as_u64()).map(u128::from).sum();
            let counted = u128::from(result["megaflows_offloaded"].as_u64().expect("a count"))
                + u128::from(result["megaflows_software"].as_u64().expect("a count"));
            assert_eq!(counted, total, "megaflows of {megaflows} on {datapath}");
        }
    }
});
