//! Snapshot tests: every model gives byte-identical output for a fixed list of requests.
//!
//! Each model's results are serialized to canonical JSON (wall-clock statistics removed) and
//! compared, per case, by SHA-256 with `tests/snapshots/<model>.tsv`, which also keeps a few
//! headline numbers so that a failure says what moved. A change that is meant to change
//! results re-blesses the file (`NICBENCH_BLESS=1 cargo test -p nicbench-models snapshot`)
//! in the same commit, saying why; `NICBENCH_SNAPSHOT_DUMP=DIR` writes every case's full
//! JSON for `diff -r` between two versions.

use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One case: its name, the canonical result and the headline fields shown on a mismatch.
pub struct Case {
    pub name: String,
    pub result: Value,
    pub headline: Vec<&'static str>,
}

fn snapshot_path(model: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(format!("{model}.tsv"))
}

fn digest(v: &Value) -> String {
    let text = serde_json::to_string(v).expect("serializable");
    let hash = Sha256::digest(text.as_bytes());
    hash.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// `a.b.c` in a JSON value, rendered compactly.
fn field(v: &Value, path: &str) -> String {
    let mut cur = v;
    for part in path.split('.') {
        cur = match cur.get(part) {
            Some(x) => x,
            None => return "-".into(),
        };
    }
    cur.to_string()
}

fn headline(case: &Case) -> String {
    case.headline
        .iter()
        .map(|h| format!("{h}={}", field(&case.result, h)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Compares `cases` with the model's snapshot file (or rewrites it under `NICBENCH_BLESS=1`).
pub fn check(model: &str, cases: &[Case]) {
    if let Some(dir) = std::env::var_os("NICBENCH_SNAPSHOT_DUMP") {
        let dir = PathBuf::from(dir).join(model);
        std::fs::create_dir_all(&dir).expect("dump dir");
        for c in cases {
            let text = serde_json::to_string_pretty(&c.result).expect("json");
            std::fs::write(dir.join(format!("{}.json", c.name)), text).expect("dump");
        }
    }
    let path = snapshot_path(model);
    let lines: Vec<String> = cases
        .iter()
        .map(|c| format!("{}\t{}\t{}", c.name, digest(&c.result), headline(c)))
        .collect();
    if std::env::var("NICBENCH_BLESS").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("snapshots dir");
        let mut text = format!(
            "# {model} snapshot: case, SHA-256 (first 128 bits) of the canonical result JSON, headline numbers.\n"
        );
        text.push_str("# Rewritten by NICBENCH_BLESS=1 cargo test -p nicbench-models snapshot (see tests/integration/snapshot.rs).\n");
        for l in &lines {
            text.push_str(l);
            text.push('\n');
        }
        std::fs::write(&path, text).expect("write snapshot");
        return;
    }
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (create it with NICBENCH_BLESS=1)", path.display()));
    let want: BTreeMap<&str, (&str, &str)> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let mut it = l.splitn(3, '\t');
            Some((it.next()?, (it.next()?, it.next().unwrap_or(""))))
        })
        .collect();
    let mut problems = Vec::new();
    for (c, line) in cases.iter().zip(&lines) {
        let got_hash = line.split('\t').nth(1).unwrap_or_default();
        match want.get(c.name.as_str()) {
            None => problems.push(format!("{}: not in the snapshot (new case: bless it)", c.name)),
            Some((hash, head)) if *hash != got_hash => problems.push(format!(
                "{}: result changed\n    was: {head}\n    now: {}",
                c.name,
                headline(c)
            )),
            Some(_) => {}
        }
    }
    for name in want.keys() {
        if !cases.iter().any(|c| c.name == *name) {
            problems.push(format!("{name}: in the snapshot but no longer run"));
        }
    }
    assert!(
        problems.is_empty(),
        "{} of {} {model} cases differ from {}:\n  {}",
        problems.len(),
        cases.len(),
        path.display(),
        problems.join("\n  ")
    );
}
