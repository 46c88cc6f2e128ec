//! `gen_for_rules`: traffic that meets a chosen share of a rule file's rules
//! (`nicbench_classify::witness` finds a frame per rule, `nicbench_traffic` writes the stream).

use std::path::PathBuf;

use pyo3::prelude::*;

use nicbench_classify::witness::{pick_targets, witnesses, Miss};
use nicbench_classify::{Classifier, ClassifierConfig};
use nicbench_rules::ruleset;
use nicbench_traffic::{write_pcap_for_frames, Summary, TrafficConfig, TrafficError};

use crate::errors::{classifier_error, invalid, json_error, rules_load_error, traffic_error};
use crate::progress;
use crate::rules::syntax_arg;

#[derive(serde::Serialize)]
struct Missed {
    line: usize,
    #[serde(flatten)]
    miss: Miss,
    reason: String,
}

#[derive(serde::Serialize)]
struct Output {
    summary: Summary,
    rules_total: usize,
    /// Rules the traffic meets: the targets and the jump rules on their way.
    rules_met: usize,
    /// Rules some frame meets (the most a share can reach).
    rules_reachable: usize,
    /// Lines of the rules given a flow, in flow order (flow 0 is the most popular under Zipf).
    target_lines: Vec<usize>,
    unreachable: Vec<Missed>,
}

/// Write to `path` a stream (`config_json`: a `TrafficConfig`; `flows` is ignored) whose flows
/// meet `hit_share` of the rules of `rules_path`, one flow per target rule; returns the
/// summary, the rules met and every rule no frame meets, with its reason, as JSON.
#[pyfunction]
#[pyo3(signature = (rules_path, syntax, config_json, hit_share, path, progress=None))]
fn gen_for_rules(
    py: Python<'_>,
    rules_path: PathBuf,
    syntax: Option<&str>,
    config_json: &str,
    hit_share: f64,
    path: PathBuf,
    progress: Option<PyObject>,
) -> PyResult<String> {
    let config: TrafficConfig = serde_json::from_str(config_json).map_err(json_error)?;
    let name = rules_path.display().to_string();
    let file = ruleset::load_path(&rules_path, syntax_arg(syntax)?, false).map_err(rules_load_error)?;
    let lines: Vec<usize> = file.rules.iter().map(|r| r.line).collect();
    let rules: Vec<_> = file.rules.into_iter().map(|r| r.rule).collect();
    let (classifier, ids) = Classifier::with_rules(ClassifierConfig::default(), rules.iter().cloned())
        .map_err(|e| classifier_error(&name, &lines, e))?;
    let found = witnesses(&classifier, &rules, &ids, config.seed);
    let name_rule = |i: usize| format!("line {}", lines[i]);
    let (targets, rules_met) = pick_targets(&found, hit_share, config.seed);
    if targets.is_empty() {
        return Err(invalid(format!(
            "{name}: no frame the generator can write meets any of its {} rules (first reason: {})",
            rules.len(),
            found
                .iter()
                .zip(&lines)
                .find_map(|(w, line)| w
                    .as_ref()
                    .err()
                    .map(|m| format!("line {line}: {}", m.describe(name_rule))))
                .unwrap_or_else(|| "no rules".into())
        )));
    }
    let specs: Vec<_> = targets
        .iter()
        .filter_map(|&t| found[t].as_ref().ok().map(|w| w.spec))
        .collect();
    let summary = progress::run(py, progress, |report| {
        write_pcap_for_frames(&config, &specs, &path, report)
    })?;
    let summary = summary.map_err(|e| match e {
        TrafficError::FlowFrame { flow, source } => invalid(format!(
            "{name}:{}: the frame that meets this rule: {source}",
            lines[targets[flow]]
        )),
        other => traffic_error(other),
    })?;
    let unreachable = found
        .iter()
        .zip(&lines)
        .filter_map(|(w, &line)| {
            w.as_ref().err().map(|miss| Missed {
                line,
                reason: miss.describe(name_rule),
                miss: miss.clone(),
            })
        })
        .collect();
    let output = Output {
        summary,
        rules_total: rules.len(),
        rules_met,
        rules_reachable: found.iter().filter(|w| w.is_ok()).count(),
        target_lines: targets.iter().map(|&t| lines[t]).collect(),
        unreachable,
    };
    serde_json::to_string(&output).map_err(invalid)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(gen_for_rules, m)?)?;
    Ok(())
}
