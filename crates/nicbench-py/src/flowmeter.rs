//! `flows_meter`: run the flow meter (`nicbench-flowmeter`) on a pcap or a live interface.
//!
//! Thin delegation: the configuration is built from plain arguments, the sinks from paths, and
//! the run statistics come back as JSON. The run releases the GIL; every progress tick (~100 ms,
//! from the calling thread) takes the GIL, calls the optional Python callback and checks for
//! signals. Ctrl-C (or a `KeyboardInterrupt` raised by the callback) sets the meter's stop flag:
//! the meter flushes every active flow to the sinks and the call returns normally with
//! `"interrupted": true` — a user never loses the records of an interrupted run.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;

use nicbench_flowmeter::{
    run_live, run_pcap, Compat, CsvSink, FlowError, FlowSink, IpfixSink, JsonlSink, MeterConfig, NullSink,
    Progress as MeterProgress, RunStats, TeeSink, Timeouts,
};

use crate::errors::{flow_error, invalid};

/// Python-side arguments that shape the meter; built into a `MeterConfig` (validated by the crate).
struct Settings {
    compat: Compat,
    workers: usize,
    max_flows: Option<usize>,
    idle_ns: Option<u64>,
    active_ns: Option<u64>,
    no_active: bool,
}

impl Settings {
    fn config(&self) -> PyResult<MeterConfig> {
        let mut config = MeterConfig::for_compat(self.compat);
        config.workers = self.workers;
        if let Some(max_flows) = self.max_flows {
            config.max_flows = max_flows;
        }
        let active_ns = if self.no_active {
            None
        } else {
            self.active_ns.or(config.timeouts.active_ns)
        };
        config.timeouts = match self.idle_ns {
            // One idle timeout for every protocol (`--idle`), as Argus' `-T` style override.
            Some(idle_ns) => Timeouts::uniform_idle(idle_ns, active_ns),
            None => Timeouts {
                active_ns,
                ..config.timeouts
            },
        };
        config.validate().map_err(flow_error)?;
        Ok(config)
    }
}

/// Output sinks, opened inside the GIL-free section (sinks are not `Send`).
fn open_sinks(out: Option<&PathBuf>, format: &str, ipfix: Option<&str>) -> Result<Box<dyn FlowSink>, FlowError> {
    let mut sinks: Vec<Box<dyn FlowSink>> = Vec::new();
    if let Some(path) = out {
        match format {
            "jsonl" => sinks.push(Box::new(JsonlSink::create(path)?)),
            _ => sinks.push(Box::new(CsvSink::create(path)?)),
        }
    }
    if let Some(collector) = ipfix {
        sinks.push(Box::new(IpfixSink::connect(collector, 1)?));
    }
    Ok(match sinks.len() {
        0 => Box::<NullSink>::default(),
        1 => sinks.pop().expect("one sink"),
        _ => Box::new(TeeSink(sinks)),
    })
}

/// What the progress ticks learned; read after the run.
#[derive(Default)]
struct Ticks {
    /// Ctrl-C (or KeyboardInterrupt from the callback) stopped the run: not an error.
    interrupted_by_user: bool,
    /// Any other exception raised by the callback: the run stops, the error is re-raised.
    error: Option<PyErr>,
}

impl Ticks {
    fn tick(&mut self, callback: Option<&PyObject>, progress: &MeterProgress, live: bool, stop: &AtomicBool) {
        Python::with_gil(|py| {
            if let Some(callback) = callback {
                if self.error.is_none() && !self.interrupted_by_user {
                    // pcap: bytes of input read (a file-size progress bar); live: packets.
                    let done = if live {
                        progress.packets
                    } else {
                        progress.input_bytes_read
                    };
                    if let Err(e) = callback.call1(py, (done, progress.packets, progress.records)) {
                        self.note(py, e);
                    }
                }
            }
            if let Err(e) = py.check_signals() {
                self.note(py, e);
            }
        });
        if self.interrupted_by_user || self.error.is_some() {
            stop.store(true, Ordering::Relaxed);
        }
    }

    fn note(&mut self, py: Python<'_>, err: PyErr) {
        if err.is_instance_of::<PyKeyboardInterrupt>(py) {
            self.interrupted_by_user = true;
        } else {
            self.error.get_or_insert(err);
        }
    }
}

/// Meter `source` (a pcap path, or an interface name with `live=True`); returns the run's
/// statistics as JSON (`RunStats` fields plus `compat`, `config`).
///
/// `out` + `format` ("csv" | "jsonl") write the records; `ipfix` ("host:port") exports them over
/// UDP as well. `progress(done, packets, records)` is called about every 100 ms; `done` is the
/// input bytes read (pcap) or packets (live).
#[pyfunction]
#[pyo3(signature = (source, live=false, compat="nicbench", workers=1, max_flows=None, idle_ns=None,
                    active_ns=None, no_active=false, duration_ns=None, out=None, format="csv",
                    ipfix=None, progress=None))]
#[allow(clippy::too_many_arguments)]
fn flows_meter(
    py: Python<'_>,
    source: String,
    live: bool,
    compat: &str,
    workers: usize,
    max_flows: Option<usize>,
    idle_ns: Option<u64>,
    active_ns: Option<u64>,
    no_active: bool,
    duration_ns: Option<u64>,
    out: Option<PathBuf>,
    format: &str,
    ipfix: Option<String>,
    progress: Option<PyObject>,
) -> PyResult<String> {
    // The flow meter's own parse (its error names the modes), without its error-kind prefix.
    let compat_value: Compat = compat.parse().map_err(|e: FlowError| match e {
        FlowError::Config(text) => invalid(text),
        other => invalid(other),
    })?;
    if !matches!(format, "csv" | "jsonl") {
        return Err(invalid(format!(
            "unknown record format {format:?}: expected csv or jsonl"
        )));
    }
    let settings = Settings {
        compat: compat_value,
        workers,
        max_flows,
        idle_ns,
        active_ns,
        no_active,
    };
    let config = settings.config()?;
    let format = format.to_string();
    let (result, ticks) = py.allow_threads(move || {
        let stop = AtomicBool::new(false);
        let mut ticks = Ticks::default();
        let result = open_sinks(out.as_ref(), &format, ipfix.as_deref()).and_then(|mut sink| {
            let mut on_progress = |p: &MeterProgress| ticks.tick(progress.as_ref(), p, live, &stop);
            // A truncated pcap is not an error here: the run returns Ok with `input_error` set,
            // after flushing the records of every packet before the bad one.
            let stats = if live {
                let duration = duration_ns.map(Duration::from_nanos);
                run_live(&source, duration, &config, sink.as_mut(), &stop, &mut on_progress)
            } else {
                run_pcap(
                    std::path::Path::new(&source),
                    &config,
                    sink.as_mut(),
                    &stop,
                    &mut on_progress,
                )
            };
            stats.map(|s| (s, sink.counters()))
        });
        (result.map(|(stats, counters)| (stats, counters, config)), ticks)
    });
    if let Some(err) = ticks.error {
        return Err(err);
    }
    let (stats, counters, config): (RunStats, Vec<(&str, u64)>, MeterConfig) = result.map_err(flow_error)?;
    let mut value = serde_json::to_value(&stats).map_err(invalid)?;
    if let Some(map) = value.as_object_mut() {
        for (name, count) in counters {
            map.insert(name.into(), count.into());
        }
        map.insert("compat".into(), compat.into());
        map.insert(
            "interrupted".into(),
            (stats.interrupted || ticks.interrupted_by_user).into(),
        );
        map.insert("mpps".into(), stats.mpps().into());
        map.insert(
            "config".into(),
            serde_json::json!({
                "workers": config.workers,
                "max_flows": config.max_flows,
                "tcp_idle_ns": config.timeouts.tcp_idle_ns,
                "udp_idle_ns": config.timeouts.udp_idle_ns,
                "icmp_idle_ns": config.timeouts.icmp_idle_ns,
                "other_idle_ns": config.timeouts.other_idle_ns,
                "active_ns": config.timeouts.active_ns,
            }),
        );
    }
    serde_json::to_string(&value).map_err(invalid)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(flows_meter, m)?)?;
    // Table memory per active flow [bytes] (working-set models, e.g. the Napatech host model).
    m.add("FLOW_RECORD_BYTES", nicbench_flowmeter::RECORD_BYTES)?;
    Ok(())
}
