//! Rule files: `rules_check`, `rules_lint`, `rules_convert`, `rules_generate`.

use std::path::{Path, PathBuf};

use pyo3::prelude::*;

use nicbench_rules::generate::{generate, RuleSetKind};
use nicbench_rules::ruleset::{self, LoadError, Syntax};
use nicbench_rules::Rule;
use nicbench_traffic::atomic::AtomicFile;

use crate::errors::{invalid, invalid_rule, os_error, rules_load_error};

/// The `--syntax` argument: a syntax name, or `None` to detect it from the file.
pub(crate) fn syntax_arg(syntax: Option<&str>) -> PyResult<Option<Syntax>> {
    syntax
        .map(|name| {
            Syntax::from_name(name).ok_or_else(|| {
                invalid(format!(
                    "unknown rule syntax {name:?}: expected testpmd, tc or classbench"
                ))
            })
        })
        .transpose()
}

#[derive(serde::Serialize)]
struct CheckReport {
    file: String,
    syntax: Option<Syntax>,
    errors: Vec<String>,
    summary: Option<ruleset::RuleSetSummary>,
    commands: std::collections::BTreeMap<&'static str, u64>,
    widened: u64,
}

/// Validate a rule file: JSON with `errors` (empty when valid) and a `summary`.
#[pyfunction]
#[pyo3(signature = (path, syntax=None, keep_going=false))]
fn rules_check(path: PathBuf, syntax: Option<&str>, keep_going: bool) -> PyResult<String> {
    let report = match ruleset::load_path(&path, syntax_arg(syntax)?, keep_going) {
        Ok(file) => CheckReport {
            file: path.display().to_string(),
            syntax: Some(file.syntax),
            errors: Vec::new(),
            summary: Some(ruleset::summarize(file.rules.iter().map(|r| &r.rule))),
            commands: file.commands,
            widened: file.widened,
        },
        Err(LoadError::Parse(errors)) => CheckReport {
            file: path.display().to_string(),
            syntax: None,
            errors: errors.iter().map(ToString::to_string).collect(),
            summary: None,
            commands: Default::default(),
            widened: 0,
        },
        Err(other) => return Err(rules_load_error(other)),
    };
    serde_json::to_string(&report).map_err(invalid)
}

/// Every item and action of the rule file that PMD `pmd` (e.g. "mlx5") does not implement, as JSON
/// `{"pmd", "dpdk", "source", "unsupported": [{"line", "kind", "name"}]}` (`nicbench_rules::capabilities`).
#[pyfunction]
#[pyo3(signature = (path, syntax, pmd))]
fn rules_lint(path: PathBuf, syntax: Option<&str>, pmd: &str) -> PyResult<String> {
    let caps = nicbench_rules::capabilities::pmd(pmd)
        .ok_or_else(|| invalid(format!("no capability table for PMD {pmd:?}")))?;
    let file = ruleset::load_path(&path, syntax_arg(syntax)?, false).map_err(rules_load_error)?;
    let unsupported = nicbench_rules::capabilities::lint(&file.rules, &caps);
    serde_json::to_string(&serde_json::json!({
        "pmd": caps.pmd,
        "dpdk": caps.dpdk,
        "source": caps.source,
        "unsupported": unsupported,
    }))
    .map_err(invalid)
}

fn write_rules(py: Python<'_>, rules: &[Rule], to: &str, out: &Path, port: u16, dev: &str) -> PyResult<()> {
    let syntax =
        Syntax::from_name(to).ok_or_else(|| invalid(format!("unknown rule syntax {to:?}: expected testpmd or tc")))?;
    let text = py
        .allow_threads(|| ruleset::write(rules, syntax, port, dev))
        .map_err(invalid_rule)?;
    write_text(py, out, &text)
}

/// Writes a rule file through `nicbench_traffic::atomic`, looking for Ctrl-C before the file takes
/// its name: an interrupted run (formatting millions of rules takes seconds) leaves nothing.
fn write_text(py: Python<'_>, out: &Path, text: &str) -> PyResult<()> {
    use std::io::Write;
    let (output, mut file) = AtomicFile::create(out).map_err(|e| os_error(out, e))?;
    py.allow_threads(|| file.write_all(text.as_bytes()))
        .map_err(|e| os_error(out, e))?;
    py.check_signals()?;
    output.commit().map_err(|e| os_error(out, e))
}

/// Convert a rule file to `to` syntax, written to `out`; returns the number of rules.
#[pyfunction]
#[pyo3(signature = (path, to, out, syntax=None, port=0, dev="eth0"))]
fn rules_convert(
    py: Python<'_>,
    path: PathBuf,
    to: &str,
    out: PathBuf,
    syntax: Option<&str>,
    port: u16,
    dev: &str,
) -> PyResult<usize> {
    let file = ruleset::load_path(&path, syntax_arg(syntax)?, false).map_err(rules_load_error)?;
    let to_syntax =
        Syntax::from_name(to).ok_or_else(|| invalid(format!("unknown rule syntax {to:?}: expected testpmd or tc")))?;
    // Errors name the line of the rule the target syntax cannot express.
    let name = path.display().to_string();
    let text = py
        .allow_threads(|| ruleset::write_numbered(&file.rules, &name, to_syntax, port, dev))
        .map_err(invalid_rule)?;
    write_text(py, &out, &text)?;
    Ok(file.rules.len())
}

/// Generate a seeded synthetic rule set and write it; returns the number of rules written.
#[pyfunction]
#[pyo3(signature = (kind, count, groups, seed, out, to="testpmd", port=0, dev="eth0"))]
#[allow(clippy::too_many_arguments)]
fn rules_generate(
    py: Python<'_>,
    kind: &str,
    count: usize,
    groups: u32,
    seed: u64,
    out: PathBuf,
    to: &str,
    port: u16,
    dev: &str,
) -> PyResult<usize> {
    let kind: RuleSetKind = kind.parse().map_err(invalid)?;
    if count > nicbench_rules::generate::MAX_RULES {
        return Err(invalid(format!(
            "count: {count} rules is too many, at most {}",
            nicbench_rules::generate::MAX_RULES
        )));
    }
    let rules = py.allow_threads(|| generate(kind, count, groups, seed));
    write_rules(py, &rules, to, &out, port, dev)?;
    Ok(rules.len())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(rules_check, m)?)?;
    m.add_function(wrap_pyfunction!(rules_lint, m)?)?;
    m.add_function(wrap_pyfunction!(rules_convert, m)?)?;
    m.add_function(wrap_pyfunction!(rules_generate, m)?)?;
    // The rule-set kinds `rules_generate` and the ConnectX model's generated rules take.
    m.add("RULE_SET_KINDS", RuleSetKind::ALL.map(|(name, _)| name).to_vec())?;
    m.add("MAX_GENERATED_RULES", nicbench_rules::generate::MAX_RULES)?;
    Ok(())
}
