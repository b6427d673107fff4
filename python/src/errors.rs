//! Errors and panics as Python exceptions: the CLI's one-line message, in
//! the class of `knight_sweep.errors` its kind calls for. A panic becomes a
//! `KsweepError` here, so none reaches the interpreter.

use std::panic::{catch_unwind, AssertUnwindSafe};

use ksweep::failure::Kind;
use pyo3::prelude::*;
use pyo3::types::PyType;

/// Runs `work` with the GIL released (the walks and the network run while
/// other Python threads go on), its error or panic as an exception.
pub fn detached<T: Send>(py: Python<'_>, work: impl FnOnce() -> anyhow::Result<T> + Send) -> PyResult<T> {
    let outcome = py.detach(|| catch_unwind(AssertUnwindSafe(work)));
    match outcome {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(to_py(py, &e)),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".to_string());
            Err(raise(py, "KsweepError", format!("internal error (please report it): {what}")))
        }
    }
}

/// `e` as the exception of its kind, with the CLI's message.
pub fn to_py(py: Python<'_>, e: &anyhow::Error) -> PyErr {
    let class = match ksweep::failure::kind(e) {
        Kind::NotFound => "NotFoundError",
        Kind::Unreachable => "UnreachableError",
        Kind::Unauthenticated => "TokenError",
        Kind::Invalid => "InvalidInputError",
        Kind::Other => "KsweepError",
    };
    raise(py, class, ksweep::error_text(e))
}

/// An instance of `knight_sweep.errors.CLASS` carrying `message`.
fn raise(py: Python<'_>, class: &str, message: String) -> PyErr {
    let class =
        py.import("knight_sweep.errors").and_then(|m| m.getattr(class)).and_then(|c| Ok(c.cast_into::<PyType>()?));
    match class {
        Ok(class) => PyErr::from_type(class, message),
        Err(e) => e,
    }
}
