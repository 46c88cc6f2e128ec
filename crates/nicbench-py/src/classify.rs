//! `classify_pcap`: load a rule file into the software classifier and classify a capture.

use std::collections::BTreeMap;
use std::path::PathBuf;

use pyo3::prelude::*;

use std::sync::Arc;

use nicbench_classify::measure::{lookup_rate, lookups_while_updating, LookupLoad, UpdatePlacement};
use nicbench_classify::workload::named;
use nicbench_classify::{classify_pcap as classify, Algorithm, Classifier, ClassifierConfig, ClassifyError};
use nicbench_rules::ruleset;

use crate::errors::{classifier_error, invalid, pcap_error, rss_rule_error, rules_load_error};
use crate::progress;
use crate::rules::syntax_arg;

#[derive(serde::Serialize)]
struct Output {
    #[serde(flatten)]
    report: nicbench_classify::ClassifyReport,
    /// Rule id → line of the rule file it came from.
    rule_lines: BTreeMap<u64, usize>,
    rules_loaded: usize,
    /// Lines of the rules that constrain no field (catch-alls such as a layout's defaults).
    catch_all_lines: Vec<usize>,
}

/// Classify every packet of `pcap` with the rules of `rules_path` on a port with `port_queues`
/// rx queues (its default RSS for packets no rule sends anywhere); returns the report as JSON.
#[pyfunction]
#[pyo3(signature = (rules_path, pcap, syntax=None, progress=None, port_queues=1))]
fn classify_pcap(
    py: Python<'_>,
    rules_path: PathBuf,
    pcap: PathBuf,
    syntax: Option<&str>,
    progress: Option<PyObject>,
    port_queues: u16,
) -> PyResult<String> {
    let name = rules_path.display().to_string();
    let file = ruleset::load_path(&rules_path, syntax_arg(syntax)?, false).map_err(rules_load_error)?;
    let lines: Vec<usize> = file.rules.iter().map(|r| r.line).collect();
    let catch_all_lines = file
        .rules
        .iter()
        .filter(|r| r.rule.is_catch_all())
        .map(|r| r.line)
        .collect();
    let (classifier, ids) = Classifier::with_rules(ClassifierConfig::default(), file.rules.into_iter().map(|r| r.rule))
        .map_err(|e| classifier_error(&name, &lines, e))?;
    // The classifier's writer half is Send but not Sync: move it into the GIL-free section.
    let result = progress::run(py, progress, move |report| {
        classify(&classifier, &pcap, port_queues, report)
    })?;
    let report = result.map_err(|e| match e {
        ClassifyError::Pcap { source, .. } => pcap_error(source),
        ClassifyError::Rss(e) => rss_rule_error(&name, &ids, &lines, e),
    })?;
    let rule_lines = ids.iter().zip(&lines).map(|(id, line)| (id.0, *line)).collect();
    let output = Output {
        report,
        rule_lines,
        rules_loaded: lines.len(),
        catch_all_lines,
    };
    serde_json::to_string(&output).map_err(invalid)
}

#[derive(serde::Serialize)]
struct LoadOutput {
    #[serde(flatten)]
    load: LookupLoad,
    rules: usize,
    memory_bytes_per_rule: f64,
}

fn algorithm(name: &str) -> PyResult<Algorithm> {
    match name {
        "hybrid" => Ok(Algorithm::Hybrid),
        "tuplemerge" => Ok(Algorithm::TupleMerge),
        "tss" | "tuplespace" => Ok(Algorithm::TupleSpace),
        other => Err(invalid(format!(
            "unknown classifier algorithm {other:?}: expected hybrid, tuplemerge or tss"
        ))),
    }
}

/// Lookup rate on one core for a named workload (see `nicbench_classify::workload::named`);
/// with `update_rate_per_s` > 0, while rules are modified at that rate from `placement`.
#[pyfunction]
#[pyo3(signature = (workload, count, seed, duration_s, algorithm_name="hybrid", update_rate_per_s=0.0, placement="other_core"))]
#[allow(clippy::too_many_arguments)]
fn classifier_load(
    py: Python<'_>,
    workload: &str,
    count: usize,
    seed: u64,
    duration_s: f64,
    algorithm_name: &str,
    update_rate_per_s: f64,
    placement: &str,
) -> PyResult<String> {
    let config = ClassifierConfig {
        algorithm: algorithm(algorithm_name)?,
        count: false,
        ..ClassifierConfig::default()
    };
    let placement = match placement {
        "other_core" => UpdatePlacement::OtherCore,
        "same_core" => UpdatePlacement::SameCore,
        other => {
            return Err(invalid(format!(
                "unknown placement {other:?}: expected other_core or same_core"
            )))
        }
    };
    let duration = std::time::Duration::from_secs_f64(duration_s.max(0.001));
    let workload = workload.to_string();
    let output = py.allow_threads(move || -> Result<LoadOutput, String> {
        let (rules, keys) = named(&workload, count, seed)?;
        let (mut classifier, ids) = Classifier::with_rules(config, rules.clone()).map_err(|e| e.to_string())?;
        let memory_bytes_per_rule = classifier.stats().memory_bytes_per_rule;
        let load = if update_rate_per_s > 0.0 {
            lookups_while_updating(
                &mut classifier,
                &ids,
                &rules,
                Arc::new(keys),
                update_rate_per_s,
                placement,
                duration,
            )
            .map_err(|e| e.to_string())?
        } else {
            lookup_rate(&classifier, &keys, duration)
        };
        Ok(LoadOutput {
            load,
            rules: rules.len(),
            memory_bytes_per_rule,
        })
    });
    serde_json::to_string(&output.map_err(invalid)?).map_err(invalid)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(classifier_load, m)?)?;
    m.add_function(wrap_pyfunction!(classify_pcap, m)?)?;
    Ok(())
}
