//! The CLI's commands run in this process: what `ksweep ARGS` would print,
//! as bytes; its errors as exceptions.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors::{detached, to_py};

/// Runs `ksweep ARGS` here (the GIL released) with `stdin` as its input;
/// returns what it writes to stdout.
#[pyfunction]
#[pyo3(signature = (args, stdin=None))]
pub fn invoke<'py>(py: Python<'py>, args: Vec<String>, stdin: Option<Vec<u8>>) -> PyResult<Bound<'py, PyBytes>> {
    let out = detached(py, move || {
        let mut out = Vec::new();
        let argv = std::iter::once("ksweep".to_string()).chain(args);
        ksweep::invoke(argv, stdin.as_deref().unwrap_or_default(), &mut out)?;
        Ok(out)
    })?;
    Ok(PyBytes::new(py, &out))
}

/// A spec given as JSON (a Python dict dumped) as TOML text, checked as a
/// sweep spec: a bad field is refused here, before anything runs.
#[pyfunction]
pub fn spec_toml(py: Python<'_>, json: &str) -> PyResult<String> {
    let text = || -> anyhow::Result<String> {
        let value: serde_json::Value = serde_json::from_str(json)?;
        let text = toml::to_string(&value).map_err(|e| anyhow::anyhow!("spec: {e}"))?;
        sweep::Sweep::parse(&text)?;
        Ok(text)
    };
    text().map_err(|e| to_py(py, &e))
}
