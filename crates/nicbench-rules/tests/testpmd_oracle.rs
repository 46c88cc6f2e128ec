//! Real peer: dpdk-testpmd (DPDK 22.11, Debian `dpdk-dev`) must accept exactly the corpus
//! lines nicbench accepts. Needs no NIC: the null PMD has no rte_flow ops, so a line the
//! testpmd parser accepts ends in "Caught PMD error ... Function not implemented" (or, for
//! `destroy`/`flush` sent to port 99, "Invalid port 99"), while a rejected line prints
//! nothing in `--cmdline-file` mode. After every line we send `flow flush <10000+i>`, which
//! prints "Invalid port <10000+i>" on the same unbuffered stderr: a numbered marker that
//! maps the output back to line i. One testpmd process per corpus file (~3 s each).

use nicbench_rules::testpmd;
use std::path::Path;
use std::process::Command;

const MARKER_BASE: usize = 10_000;

/// For each command line of `text`: (line number, line, accepted by testpmd).
fn run_testpmd(text: &str, tag: &str) -> Vec<(usize, String, bool)> {
    let lines: Vec<(usize, String)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|(i, l)| (i + 1, l.to_string()))
        .collect();
    let mut script = String::new();
    for (k, (_, line)) in lines.iter().enumerate() {
        // destroy/flush on the real port 0 print nothing either way; port 99 makes an
        // accepted line say "Invalid port 99".
        let probe = line
            .replacen("flow destroy 0", "flow destroy 99", 1)
            .replacen("flow flush 0", "flow flush 99", 1);
        script.push_str(&probe);
        script.push('\n');
        script.push_str(&format!("flow flush {}\n", MARKER_BASE + k));
    }
    script.push_str("quit\n");
    let dir = std::env::temp_dir().join(format!("nicbench_oracle_{}_{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("cmds.txt");
    std::fs::write(&file, script).expect("write cmdline file");
    let out = Command::new("timeout")
        .arg("60")
        .arg("dpdk-testpmd")
        .args([
            "--no-huge",
            "-m",
            "1024",
            "--no-pci",
            "--vdev",
            "net_null0",
            "--log-level=error",
        ])
        .arg(format!("--file-prefix=nicbench_{}_{tag}", std::process::id()))
        .args(["--", "-i", "--total-num-mbufs=2048"])
        .arg(format!("--cmdline-file={}", file.display()))
        .output()
        .expect("run dpdk-testpmd");
    let _ = std::fs::remove_dir_all(&dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut accepted = vec![None; lines.len()];
    let mut seen = false;
    for l in stderr.lines() {
        if l.contains("Caught PMD error") || l.trim_end().ends_with("Invalid port 99") {
            seen = true;
        } else if let Some(n) = l
            .trim()
            .strip_prefix("Invalid port ")
            .and_then(|n| n.parse::<usize>().ok())
        {
            if let Some(slot) = n.checked_sub(MARKER_BASE).and_then(|k| accepted.get_mut(k)) {
                *slot = Some(seen);
            }
            seen = false;
        }
    }
    lines
        .into_iter()
        .zip(accepted)
        .map(|((no, line), acc)| {
            let acc = acc.unwrap_or_else(|| panic!("no testpmd marker for line {no}; stderr:\n{stderr}"));
            (no, line, acc)
        })
        .collect()
}

#[test]
fn testpmd_accepts_exactly_what_nicbench_accepts() {
    const TEST: &str = "testpmd_accepts_exactly_what_nicbench_accepts";
    // Missing peer: fails under CI=true, skips with the reason otherwise.
    if nicbench_testenv::tool_or_skip(TEST, "dpdk-testpmd", "dpdk-dev").is_none()
        || nicbench_testenv::tool_or_skip(TEST, "timeout", "coreutils").is_none()
    {
        return;
    }
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut mismatches = Vec::new();
    for (name, expect_ok) in [("testpmd_valid.flow", true), ("testpmd_invalid.flow", false)] {
        let text = std::fs::read_to_string(corpus.join(name)).expect("corpus file");
        let results = run_testpmd(&text, name.trim_end_matches(".flow"));
        // testpmd answered for every command line nicbench's file reader sees (a line
        // testpmd swallowed whole, e.g. as a continuation, would leave a marker missing).
        let report = testpmd::parse_file_all(&text, name);
        assert_eq!(results.len(), report.parsed.len() + report.errors.len(), "{name}");
        for (no, line, testpmd_ok) in results {
            let ours = testpmd::parse_command(&line);
            if ours.is_ok() != testpmd_ok || testpmd_ok != expect_ok {
                mismatches.push(format!(
                    "{name}:{no}: testpmd accepts={testpmd_ok}, nicbench={ours:?}\n  {line}"
                ));
            }
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
