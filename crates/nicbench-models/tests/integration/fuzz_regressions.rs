//! Inputs the fuzz targets found (FUZZING.md), kept in `tests/fuzz/`: each is refused with an error
//! of one line.

use nicbench_models::run_json;
use serde_json::json;

/// `pvp-megaflows-*.json`: the `megaflows` of a PVP request (`nicbench pvp --megaflows FILE`).
#[test]
fn fuzz_found_megaflow_files_are_refused_in_one_line() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fuzz");
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).expect("tests/fuzz") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        if !name.starts_with("pvp-megaflows-") {
            continue;
        }
        let megaflows: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("JSON");
        let request = json!({
            "nic": "connectx5-25g", "flows": 1024, "frame_bytes": 64, "megaflows": megaflows,
            "profiles_dir": super::profiles_dir(),
        });
        let err = run_json("pvp", &request.to_string(), &mut |_| {})
            .expect_err(&name)
            .to_string();
        assert!(!err.contains('\n') && !err.contains('\r'), "{name}: {err:?}");
        seen += 1;
    }
    assert!(seen > 0, "no pvp-megaflows-*.json in {dir}");
}
