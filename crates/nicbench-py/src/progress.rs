//! Calling a Python progress callback from Rust work that runs without the GIL.

use pyo3::prelude::*;

/// Wraps an optional Python callable as a Rust `FnMut(u64)`; errors raised by the
/// callback (e.g. KeyboardInterrupt) are remembered and re-raised after the work.
pub struct Progress {
    callback: Option<PyObject>,
    pub error: Option<PyErr>,
}

impl Progress {
    pub fn new(callback: Option<PyObject>) -> Self {
        Self { callback, error: None }
    }

    pub fn report(&mut self, done: u64) {
        let Some(callback) = &self.callback else { return };
        if self.error.is_some() {
            return;
        }
        Python::with_gil(|py| {
            if let Err(e) = callback.call1(py, (done,)) {
                self.error = Some(e);
            }
            // Ctrl-C while Rust runs: surface it at the next report.
            if let Err(e) = py.check_signals() {
                self.error.get_or_insert(e);
            }
        });
    }

    pub fn finish(self) -> PyResult<()> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
