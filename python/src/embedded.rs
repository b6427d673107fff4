//! A coordinator and a worker serving a database file in this process, as
//! `ksweep run` starts them: a file handle submits, watches and cancels
//! through it over loopback gRPC, the same calls as a remote coordinator.

use std::sync::Mutex;

use pyo3::prelude::*;

use crate::errors::detached;

/// A running in-process cluster; `stop` ends it (the file keeps every
/// result stored so far).
#[pyclass(frozen, module = "knight_sweep._native")]
pub struct Embedded {
    runtime: tokio::runtime::Runtime,
    cluster: Mutex<Option<ksweep::Embedded>>,
    url: String,
    token: String,
}

#[pymethods]
impl Embedded {
    /// Opens (or creates) `db` and starts a coordinator and a worker of
    /// `threads` threads (0: every core) on it.
    #[new]
    #[pyo3(signature = (db, threads=0, reuse=true))]
    fn new(py: Python<'_>, db: std::path::PathBuf, threads: usize, reuse: bool) -> PyResult<Embedded> {
        detached(py, move || {
            let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
            let reuse = ksweep::ReuseArg { no_reuse: !reuse };
            let cluster = runtime.block_on(ksweep::Embedded::start(&db, threads, None, reuse))?;
            let (url, token) = cluster.address();
            let (url, token) = (url.to_string(), token.to_string());
            Ok(Embedded { runtime, cluster: Mutex::new(Some(cluster)), url, token })
        })
    }

    /// The coordinator's loopback URL.
    #[getter]
    fn url(&self) -> &str {
        &self.url
    }

    /// The token it requires.
    #[getter]
    fn token(&self) -> &str {
        &self.token
    }

    /// Stops the worker (it delivers what it finished), then the
    /// coordinator; a second call does nothing.
    fn stop(&self, py: Python<'_>) -> PyResult<()> {
        let cluster = self.cluster.lock().map(|mut c| c.take()).unwrap_or(None);
        match cluster {
            Some(cluster) => detached(py, || self.runtime.block_on(cluster.stop())),
            None => Ok(()),
        }
    }
}
