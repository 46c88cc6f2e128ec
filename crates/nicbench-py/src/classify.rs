//! `classify_pcap`: load a rule file into the software classifier and classify a capture.

use std::collections::BTreeMap;
use std::path::PathBuf;

use pyo3::prelude::*;

use nicbench_classify::{classify_pcap as classify, Classifier, ClassifierConfig, ClassifyError, UpdateError};
use nicbench_rules::ruleset::{self, Syntax};

use crate::errors::{invalid, pcap_error, RuleError};
use crate::progress::Progress;

#[derive(serde::Serialize)]
struct Output {
    #[serde(flatten)]
    report: nicbench_classify::ClassifyReport,
    /// Rule id → line of the rule file it came from.
    rule_lines: BTreeMap<u64, usize>,
    rules_loaded: usize,
}

/// Classify every packet of `pcap` with the rules of `rules_path`; returns the report as JSON.
#[pyfunction]
#[pyo3(signature = (rules_path, pcap, syntax=None, progress=None))]
fn classify_pcap(
    py: Python<'_>,
    rules_path: PathBuf,
    pcap: PathBuf,
    syntax: Option<&str>,
    progress: Option<PyObject>,
) -> PyResult<String> {
    let text = std::fs::read_to_string(&rules_path)
        .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("{}: {e}", rules_path.display())))?;
    let syntax = match syntax {
        Some(name) => Syntax::from_name(name).ok_or_else(|| invalid(format!("unknown rule syntax {name:?}")))?,
        None => Syntax::detect(&rules_path, &text)
            .ok_or_else(|| RuleError::new_err(format!("{}: cannot tell the rule syntax; pass --syntax", rules_path.display())))?,
    };
    let name = rules_path.display().to_string();
    let file = ruleset::load(&text, &name, syntax, false)
        .map_err(|errs| RuleError::new_err(errs.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")))?;
    let lines: Vec<usize> = file.rules.iter().map(|r| r.line).collect();
    let (classifier, ids) = Classifier::with_rules(ClassifierConfig::default(), file.rules.into_iter().map(|r| r.rule))
        .map_err(|e| {
            let line = match &e {
                UpdateError::Compile { op, .. } | UpdateError::UnknownRule { op, .. } | UpdateError::JumpCycle { op, .. } => {
                    lines.get(*op).copied()
                }
                _ => None,
            };
            match line {
                Some(line) => RuleError::new_err(format!("{name}:{line}: {e}")),
                None => RuleError::new_err(format!("{name}: {e}")),
            }
        })?;
    let mut reporter = Progress::new(progress);
    // The classifier's writer half is Send but not Sync: move it into the GIL-free section.
    let (result, reporter) = py.allow_threads(move || {
        let result = classify(&classifier, &pcap, &mut |done| reporter.report(done));
        (result, reporter)
    });
    reporter.finish()?;
    let report = result.map_err(|ClassifyError::Pcap { source, .. }| pcap_error(source))?;
    let rule_lines = ids.iter().zip(&lines).map(|(id, line)| (id.0, *line)).collect();
    let output = Output { report, rule_lines, rules_loaded: lines.len() };
    serde_json::to_string(&output).map_err(invalid)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(classify_pcap, m)?)?;
    Ok(())
}
