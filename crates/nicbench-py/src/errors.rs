//! The one place where Rust errors become Python exceptions.
//!
//! `NicbenchError` (a `ValueError`) is the base of every bad-input error; the
//! Python package re-exports these classes from `nicbench.errors`.

use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::PyErr;

create_exception!(
    _native,
    NicbenchError,
    PyValueError,
    "Bad input or an impossible request."
);
create_exception!(
    _native,
    PcapError,
    NicbenchError,
    "A pcap/pcapng file could not be read or written."
);
create_exception!(_native, RuleError, NicbenchError, "A rule or rule file is invalid.");

pub fn pcap_error(err: nicbench_pcap::PcapError) -> PyErr {
    // I/O errors carry the path in their message already; keep them OSErrors for callers that care.
    if matches!(
        err,
        nicbench_pcap::PcapError::Open { .. } | nicbench_pcap::PcapError::Io { .. }
    ) {
        return PyOSError::new_err(err.to_string());
    }
    PcapError::new_err(err.to_string())
}

pub fn trace_error(err: nicbench_trace::TraceError) -> PyErr {
    match err {
        nicbench_trace::TraceError::Pcap(e) => pcap_error(e),
        nicbench_trace::TraceError::Invalid(msg) => NicbenchError::new_err(msg),
    }
}

pub fn traffic_error(err: nicbench_traffic::TrafficError) -> PyErr {
    match err {
        nicbench_traffic::TrafficError::Pcap(e) => pcap_error(e),
        other => NicbenchError::new_err(other.to_string()),
    }
}

pub fn invalid(err: impl std::fmt::Display) -> PyErr {
    NicbenchError::new_err(err.to_string())
}

pub fn json_error(err: serde_json::Error) -> PyErr {
    NicbenchError::new_err(format!("invalid configuration: {err}"))
}

pub fn model_error(err: nicbench_models::ModelError) -> PyErr {
    NicbenchError::new_err(err.to_string())
}

/// A rule file that could not be loaded: unreadable → `OSError`, otherwise `RuleError`.
pub fn rules_load_error(err: nicbench_rules::ruleset::LoadError) -> PyErr {
    match err {
        nicbench_rules::ruleset::LoadError::Io(msg) => PyOSError::new_err(msg),
        other => RuleError::new_err(other.to_string()),
    }
}

/// A rule the target syntax or the classifier cannot take.
pub fn invalid_rule(err: impl std::fmt::Display) -> PyErr {
    RuleError::new_err(err.to_string())
}

/// A rule of a file the classifier refused: `file:line: why` (the line of the refused operation).
pub fn classifier_error(file: &str, lines: &[usize], err: nicbench_classify::UpdateError) -> PyErr {
    match err.op().and_then(|op| lines.get(op)) {
        Some(line) => RuleError::new_err(format!("{file}:{line}: {err}")),
        None => RuleError::new_err(format!("{file}: {err}")),
    }
}

/// An `rss` action the classifier cannot resolve to queues: `file:line: rss ...` (the rule's
/// line; `ids[i]` came from line `lines[i]`), or the port's default RSS.
pub fn rss_rule_error(
    file: &str,
    ids: &[nicbench_classify::RuleId],
    lines: &[usize],
    err: nicbench_classify::RssRuleError,
) -> PyErr {
    let line = err
        .rule
        .and_then(|id| ids.iter().position(|&i| i == id))
        .and_then(|i| lines.get(i));
    match line {
        Some(line) => RuleError::new_err(format!("{file}:{line}: {}", err.source)),
        None => invalid(format!("--queues: {}", err.source)),
    }
}

/// An operating-system error about `path` (an `OSError` naming it).
pub fn os_error(path: &std::path::Path, err: std::io::Error) -> PyErr {
    PyOSError::new_err(format!("{}: {err}", path.display()))
}

/// A flow-meter run that could not start or read its input.
pub fn flow_error(err: nicbench_flowmeter::FlowError) -> PyErr {
    use nicbench_flowmeter::FlowError;
    match err {
        FlowError::Pcap(e) => pcap_error(e),
        FlowError::Config(msg) => invalid(msg),
        other @ (FlowError::Io { .. } | FlowError::Live { .. }) => PyOSError::new_err(other.to_string()),
        other => invalid(other.to_string()),
    }
}

/// Syntax errors of a file (at least one): a `RuleError` with the first
/// (`file:line:col: message`) and how many more there are.
pub fn parse_errors(errors: &[nicbench_rules::ParseError]) -> PyErr {
    let first = errors
        .first()
        .map(ToString::to_string)
        .unwrap_or_else(|| "no error".into());
    match errors.len() {
        0 | 1 => RuleError::new_err(first),
        n => RuleError::new_err(format!(
            "{first} (and {} more error{})",
            n - 1,
            if n == 2 { "" } else { "s" }
        )),
    }
}
