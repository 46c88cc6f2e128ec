//! The committed JSON Schemas (`docs/contracts/<name>.schema.json`) are the ones the serde
//! types generate: a change to a request or result type must update them in the same commit
//! (`NICBENCH_BLESS=1 cargo test -p nicbench-models contract` rewrites them).

use nicbench_models::registry::{contracts, schema_json};
use std::path::PathBuf;

fn contracts_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/contracts")
}

#[test]
fn contract_schemas_in_docs_are_current() {
    let bless = std::env::var("NICBENCH_BLESS").is_ok_and(|v| v == "1");
    let mut stale = Vec::new();
    let names = contracts();
    for name in &names {
        let path = contracts_dir().join(format!("{name}.schema.json"));
        let want = schema_json(name).expect("known contract");
        if bless {
            std::fs::create_dir_all(contracts_dir()).expect("docs/contracts");
            std::fs::write(&path, &want).expect("write schema");
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(have) if have == want => {}
            Ok(_) => stale.push(format!("{} differs from the serde types", path.display())),
            Err(e) => stale.push(format!("{}: {e}", path.display())),
        }
    }
    assert!(
        stale.is_empty(),
        "stale contract schemas (rewrite with NICBENCH_BLESS=1):\n  {}",
        stale.join("\n  ")
    );
    // Every committed schema is a contract (no leftovers of a renamed type).
    for entry in std::fs::read_dir(contracts_dir()).expect("docs/contracts").flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        if let Some(name) = file.strip_suffix(".schema.json") {
            assert!(names.iter().any(|n| n == name), "{file} is not a contract of any model");
        }
    }
}
