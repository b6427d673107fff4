//! `knight_sweep._native`: the Rust under `import knight_sweep`. Each
//! function here is a thin door onto the CLI's library, so Python and the
//! shell run the same code; the Pythonic face (DataFrames, progress bars,
//! notebook pictures) lives in the `knight_sweep` package beside it.

use pyo3::prelude::*;

mod commands;
mod embedded;
mod errors;
mod evaluate;
mod results;
mod source;
mod status;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(commands::invoke, m)?)?;
    m.add_function(wrap_pyfunction!(commands::spec_toml, m)?)?;
    m.add_function(wrap_pyfunction!(results::results, m)?)?;
    m.add_class::<results::ResultBatches>()?;
    m.add_function(wrap_pyfunction!(status::sweeps, m)?)?;
    m.add_function(wrap_pyfunction!(status::status, m)?)?;
    m.add_class::<evaluate::Evaluator>()?;
    m.add_class::<embedded::Embedded>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
