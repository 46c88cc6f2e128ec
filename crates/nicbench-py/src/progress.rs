//! Long native calls: without the GIL, reporting to an optional Python progress callback, and
//! stopped by Ctrl-C.
//!
//! The core crates report progress through a plain `FnMut(u64)`, every few thousand packets or
//! simulated milliseconds. Python's SIGINT handler only runs when the main thread checks for
//! signals with the GIL held, so each report takes the GIL (without a callback: at most every
//! [`SIGNAL_CHECK_EVERY`], so a hot loop does not pay for it) and calls `check_signals`. A
//! KeyboardInterrupt, or any error the callback raises, stops the work: the report unwinds out
//! of it with `resume_unwind`, which runs every destructor on the way (an unfinished output's
//! temporary file is removed, see `nicbench_traffic::atomic`) and skips the panic hook (no
//! message), and [`run`] turns that unwind back into the Python error. One mechanism for every
//! command, and the core crates' signatures stay free of it.

use std::panic::{self, AssertUnwindSafe};
use std::time::{Duration, Instant};

use pyo3::prelude::*;

/// Without a callback, signals are looked at no more often than this (Ctrl-C answered well within 1 s).
const SIGNAL_CHECK_EVERY: Duration = Duration::from_millis(50);

/// The unwind payload of a stopped run (its error is in [`Progress::error`]).
struct Stop;

/// Wraps an optional Python callable as a Rust `FnMut(u64)` that also looks for Ctrl-C.
struct Progress {
    callback: Option<PyObject>,
    error: Option<PyErr>,
    last_check: Instant,
}

impl Progress {
    fn report(&mut self, done: u64) {
        if self.callback.is_none() {
            if self.last_check.elapsed() < SIGNAL_CHECK_EVERY {
                return;
            }
            self.last_check = Instant::now();
        }
        let error = Python::with_gil(|py| {
            let called = match &self.callback {
                Some(callback) => callback.call1(py, (done,)).err(),
                None => None,
            };
            called.or_else(|| py.check_signals().err())
        });
        if let Some(e) = error {
            self.error = Some(e);
            panic::resume_unwind(Box::new(Stop));
        }
    }
}

/// Runs `work` without the GIL, its progress reports going to `callback` (called with the GIL);
/// returns what `work` returns, or the KeyboardInterrupt (or the callback's error) that stopped it.
pub fn run<T: Send>(
    py: Python<'_>,
    callback: Option<PyObject>,
    work: impl FnOnce(&mut dyn FnMut(u64)) -> T + Send,
) -> PyResult<T> {
    let mut reporter = Progress {
        callback,
        error: None,
        last_check: Instant::now(),
    };
    let outcome = py.allow_threads(|| {
        // AssertUnwindSafe: after a stop nothing of the work is used again (only its error).
        panic::catch_unwind(AssertUnwindSafe(|| work(&mut |done| reporter.report(done))))
    });
    match outcome {
        Ok(value) => Ok(value),
        Err(payload) if payload.is::<Stop>() => Err(reporter.error.take().expect("a stopped run keeps its error")),
        Err(payload) => panic::resume_unwind(payload),
    }
}
