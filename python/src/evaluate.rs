//! `ks.eval`'s engine: starts as a NumPy array in, flags, outcomes and
//! counters as arrays out; the walks run on the CLI's `Evaluator` (the same
//! tasks `ksweep eval` runs) with the GIL released.

use numpy::{PyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tour::Outcome;

use ksweep::failure::Invalid;

use crate::errors::{detached, to_py};

/// A board, its methods and limits, parsed once from `ksweep eval`'s flags.
#[pyclass(frozen, module = "knight_sweep._native")]
pub struct Evaluator {
    inner: ksweep::Evaluator,
}

/// Outcomes by code, as `run` returns them.
const OUTCOMES: [Outcome; 3] = [Outcome::Tour, Outcome::NoTour, Outcome::GaveUp];

#[pymethods]
impl Evaluator {
    /// The evaluator of `ksweep eval ARGS` (`["--rule", "2,1", ...]`).
    #[new]
    fn new(py: Python<'_>, args: Vec<String>) -> PyResult<Evaluator> {
        detached(py, move || Ok(Evaluator { inner: ksweep::Evaluator::parse(args)? }))
    }

    /// The board's sides.
    #[getter]
    fn shape(&self) -> Vec<u32> {
        self.inner.board().sides().to_vec()
    }

    /// The methods' names, in the order of each start's results.
    #[getter]
    fn methods(&self) -> Vec<&'static str> {
        self.inner.methods().iter().map(|m| m.name()).collect()
    }

    /// The names of the outcome codes `run` returns.
    #[getter]
    fn outcomes(&self) -> Vec<&'static str> {
        OUTCOMES.iter().map(|o| o.name()).collect()
    }

    /// Runs every method from each start (a row of `starts`, one column per
    /// axis): a dict of flat arrays, start-major, methods in `methods`
    /// order: success, outcome (codes into `outcomes`), attempts, visited,
    /// micros.
    fn run<'py>(&self, py: Python<'py>, starts: PyReadonlyArray2<'py, i64>) -> PyResult<Bound<'py, PyDict>> {
        let starts = starts.as_array();
        let board = self.inner.board();
        let mut cells = Vec::with_capacity(starts.nrows());
        let mut coords = Vec::with_capacity(starts.ncols());
        for (row, start) in starts.outer_iter().enumerate() {
            coords.clear();
            for &c in start {
                let c = u64::try_from(c).map_err(|_| Invalid(format!("starts: row {row}: coordinate {c} is negative")));
                coords.push(c.map_err(|e| to_py(py, &e.into()))?);
            }
            let cell = board.index_of(&coords).map_err(|e| anyhow::Error::new(e).context(format!("starts: row {row}")));
            cells.push(cell.map_err(|e| to_py(py, &e))?);
        }
        let results = detached(py, || Ok(self.inner.run_cells(&cells)))?;
        let code = |o: Outcome| OUTCOMES.iter().position(|&x| x == o).unwrap_or(OUTCOMES.len()) as u8;
        let out = PyDict::new(py);
        out.set_item("success", PyArray1::from_iter(py, results.iter().map(|r| r.success)))?;
        out.set_item("outcome", PyArray1::from_iter(py, results.iter().map(|r| code(r.outcome))))?;
        out.set_item("attempts", PyArray1::from_iter(py, results.iter().map(|r| r.attempts)))?;
        out.set_item("visited", PyArray1::from_iter(py, results.iter().map(|r| r.visited)))?;
        out.set_item("micros", PyArray1::from_iter(py, results.iter().map(|r| r.micros)))?;
        Ok(out)
    }
}
