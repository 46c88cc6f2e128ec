//! Open vSwitch flows: `openflow_load` (an `ovs-ofctl add-flows`/`dump-flows` file to JSON),
//! `dpflows_parse` (`dpctl/dump-flows` text to JSON) and `dpflows_format` (JSON back to
//! `dpctl/dump-flows` text).

use std::path::PathBuf;

use pyo3::prelude::*;

use nicbench_rules::openflow::{self, DpFlow, OfRule};

use crate::errors::{invalid_rule, json_error, os_error, parse_errors};

#[derive(serde::Serialize)]
struct NumberedRule {
    line: usize,
    rule: OfRule,
}

/// Every rule of an OpenFlow file as JSON `[{"line": N, "rule": {...}}]`; any syntax error
/// raises `RuleError` (`file:line:col: message`).
#[pyfunction]
fn openflow_load(path: PathBuf) -> PyResult<String> {
    let text = std::fs::read_to_string(&path).map_err(|e| match e.kind() {
        std::io::ErrorKind::InvalidData => invalid_rule(format!(
            "{}: not a text file (OpenFlow rules are text: ovs-ofctl add-flows or dump-flows)",
            path.display()
        )),
        _ => os_error(&path, e),
    })?;
    let report = openflow::parse_file_all(&text, &path.display().to_string());
    if !report.errors.is_empty() {
        return Err(parse_errors(&report.errors));
    }
    let rules: Vec<NumberedRule> = report
        .parsed
        .into_iter()
        .map(|(line, rule)| NumberedRule { line, rule })
        .collect();
    serde_json::to_string(&rules).map_err(invalid_rule)
}

/// `dpctl/dump-flows` text as a JSON list of flows; `source` names it in errors.
#[pyfunction]
#[pyo3(signature = (text, source="<text>"))]
fn dpflows_parse(text: &str, source: &str) -> PyResult<String> {
    let report = openflow::parse_dp_flows_all(text, source);
    if !report.errors.is_empty() {
        return Err(parse_errors(&report.errors));
    }
    let flows: Vec<DpFlow> = report.parsed.into_iter().map(|(_, f)| f).collect();
    serde_json::to_string(&flows).map_err(invalid_rule)
}

/// A JSON list of flows as `dpctl/dump-flows` text, one flow a line.
#[pyfunction]
fn dpflows_format(flows_json: &str) -> PyResult<String> {
    let flows: Vec<DpFlow> = serde_json::from_str(flows_json).map_err(json_error)?;
    openflow::dp_flows_to_string(&flows).map_err(invalid_rule)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(openflow_load, m)?)?;
    m.add_function(wrap_pyfunction!(dpflows_parse, m)?)?;
    m.add_function(wrap_pyfunction!(dpflows_format, m)?)?;
    Ok(())
}
