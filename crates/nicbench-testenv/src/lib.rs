//! Where tests find the shared data and the peer tools, and what happens when one is missing.
//!
//! One rule for the tests of every crate, written once here (a dev-dependency only):
//!
//! - Shared data is found relative to the checkout, `<workspace>/../shared/data/...`, or
//!   through an environment override (`$NICBENCH_CLASSBENCH` for the ClassBench sets). Never
//!   through an absolute path of one machine.
//! - A test whose data or peer tool is missing **fails** when `CI` is `"true"`, naming what
//!   it looked for and where; otherwise it prints `SKIP <test>: <reason>` to stderr and
//!   returns, so a laptop without `../shared` or DPDK still runs the rest.
//!
//! ```no_run
//! # fn main() {
//! let Some(dir) = nicbench_testenv::classbench_or_skip("my_test") else { return };
//! let Some(testpmd) = nicbench_testenv::tool_or_skip("my_test", "dpdk-testpmd", "dpdk-dev") else { return };
//! # let _ = (dir, testpmd);
//! # }
//! ```

use std::path::{Path, PathBuf};

/// Overrides [`classbench_dir`]: a folder holding the ClassBench filter sets.
pub const CLASSBENCH_ENV: &str = "NICBENCH_CLASSBENCH";

/// True when the environment variable `CI` is `"true"` (GitHub Actions, GitLab and most CI
/// systems set it): missing inputs then fail tests instead of skipping them.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// The workspace root (the checkout): this crate lives in `<root>/crates/nicbench-testenv`.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The project's shared data folder beside the checkout: `<root>/../shared/data`.
pub fn shared_data_dir() -> PathBuf {
    workspace_root().join("../shared/data")
}

/// Where the ClassBench filter sets are: `$NICBENCH_CLASSBENCH`, else
/// `<root>/../shared/data/classbench`.
pub fn classbench_dir() -> PathBuf {
    match std::env::var_os(CLASSBENCH_ENV) {
        Some(dir) => PathBuf::from(dir),
        None => shared_data_dir().join("classbench"),
    }
}

/// Reports that `test` cannot run because `what` is missing: panics (the test fails) under
/// `CI=true`, otherwise prints `SKIP <test>: <what>` and returns, for the caller to return.
#[track_caller]
pub fn missing(test: &str, what: &str) {
    if in_ci() {
        panic!("{test}: {what} (CI=true: a test whose data or peer tool is missing fails)");
    }
    eprintln!("SKIP {test}: {what}");
}

/// The ClassBench folder ([`classbench_dir`]) if it exists; else [`missing`] and `None`.
#[track_caller]
pub fn classbench_or_skip(test: &str) -> Option<PathBuf> {
    let dir = classbench_dir();
    if dir.is_dir() {
        return Some(dir);
    }
    missing(
        test,
        &format!(
            "ClassBench data not found at {} (put the project's shared/ folder beside the checkout, or set {CLASSBENCH_ENV})",
            dir.display()
        ),
    );
    None
}

/// The path of executable `bin` on `$PATH`, if any.
pub fn find_on_path(bin: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(bin)).find(|p| p.is_file())
}

/// Peer tool `bin` from `$PATH`; else [`missing`] (naming the Debian `package` that has it)
/// and `None`.
#[track_caller]
pub fn tool_or_skip(test: &str, bin: &str, package: &str) -> Option<PathBuf> {
    if let Some(path) = find_on_path(bin) {
        return Some(path);
    }
    missing(
        test,
        &format!("peer tool {bin} not on PATH (Debian package {package}; `make peers` installs it)"),
    );
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_paths_are_relative_to_the_checkout() {
        // This crate's own manifest is where workspace_root says crates live.
        assert!(workspace_root().join("crates/nicbench-testenv/Cargo.toml").is_file());
        assert!(workspace_root().join("Cargo.toml").is_file());
        assert!(shared_data_dir().ends_with("../shared/data"));
    }

    /// Runs [`probe_missing_classbench`] in a child test process with `CI` set to `ci` and
    /// the ClassBench override pointing nowhere (env vars are per process: no race with the
    /// other tests of this binary).
    fn run_probe(ci: &str) -> (bool, String) {
        let out = std::process::Command::new(std::env::current_exe().expect("test binary"))
            .args([
                "--exact",
                "tests::probe_missing_classbench",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("CI", ci)
            .env(CLASSBENCH_ENV, "/nonexistent/classbench")
            .output()
            .expect("run the test binary");
        (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
    }

    #[test]
    #[ignore = "a probe run by test_missing_data_fails_in_ci_and_skips_outside in a child process"]
    fn probe_missing_classbench() {
        assert_eq!(classbench_or_skip("probe"), None);
    }

    #[test]
    fn test_missing_data_fails_in_ci_and_skips_outside() {
        let (ok, stderr) = run_probe("true");
        assert!(!ok, "CI=true must fail: {stderr}");
        assert!(
            stderr.contains("ClassBench data not found at /nonexistent/classbench"),
            "{stderr}"
        );
        let (ok, stderr) = run_probe("false");
        assert!(ok, "outside CI the probe returns: {stderr}");
        assert!(
            stderr.contains("SKIP probe: ClassBench data not found at /nonexistent/classbench"),
            "{stderr}"
        );
    }

    #[test]
    fn test_find_on_path() {
        // `sh` is on every PATH these tests run with (cargo itself runs build scripts with it).
        assert!(find_on_path("sh").is_some_and(|p| p.ends_with("sh")));
        assert_eq!(find_on_path("nicbench-no-such-tool-7f3a"), None);
    }
}
