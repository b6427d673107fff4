//! Sweeps' statuses as Python dicts: what `ksweep status` shows, as fields
//! a DataFrame or a progress bar reads.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use sweep::SweepStatus;

use crate::errors::detached;
use crate::source::block_on;

/// The status of every sweep in the source the flags name.
#[pyfunction]
pub fn sweeps<'py>(py: Python<'py>, source: Vec<String>) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let list = detached(py, move || block_on(source, async |s| s.list().await))?;
    list.iter().map(|s| as_dict(py, s)).collect()
}

/// The status of one sweep (id, unique prefix or name; None: the only one).
#[pyfunction]
#[pyo3(signature = (source, sweep=None))]
pub fn status<'py>(py: Python<'py>, source: Vec<String>, sweep: Option<String>) -> PyResult<Bound<'py, PyDict>> {
    let status = detached(py, move || block_on(source, async |s| s.status(sweep.as_deref()).await))?;
    as_dict(py, &status)
}

fn as_dict<'py>(py: Python<'py>, s: &SweepStatus) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("sweep", &s.sweep_id)?;
    d.set_item("name", &s.name)?;
    d.set_item("state", s.state.name())?;
    d.set_item("tasks_done", s.tasks_done)?;
    d.set_item("tasks_total", s.tasks_total)?;
    d.set_item("successes", s.successes)?;
    d.set_item("configurations", s.configurations)?;
    d.set_item("seed", s.seed)?;
    d.set_item("created_unix_ms", s.created_unix_ms)?;
    d.set_item("started_unix_ms", s.started_unix_ms)?;
    d.set_item("finished_unix_ms", s.finished_unix_ms)?;
    d.set_item("shards_failed", s.shards_failed)?;
    d.set_item("error", s.error.as_deref())?;
    d.set_item("percent_of_work", s.percent_of_work())?;
    d.set_item("progress", s.progress_text())?;
    d.set_item("eta_seconds", s.eta.map(|e| e.as_secs_f64()))?;
    d.set_item("rate_per_sec", s.rate_per_sec)?;
    Ok(d)
}
