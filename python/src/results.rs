//! A sweep's results as Arrow batches, handed to pyarrow through the Arrow
//! C stream interface (`__arrow_c_stream__`): the columns of `ksweep
//! export`, built once in Rust, with no Python object per row.

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchIterator};
use arrow_schema::SchemaRef;
use ksweep_coordinator::export_format::{export_batch, export_schema, ExportRow};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use crate::errors::detached;
use crate::source::block_on;

/// The results of one sweep, read whole: an Arrow stream source any
/// number of times (`pyarrow.table(batches)`).
#[pyclass(frozen, module = "knight_sweep._native")]
pub struct ResultBatches {
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
}

#[pymethods]
impl ResultBatches {
    /// A fresh Arrow C stream over the batches (shared, not copied). The
    /// schema is the export's whatever is requested; pyarrow casts.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let batches = self.batches.clone().into_iter().map(Ok);
        let reader = RecordBatchIterator::new(batches, self.schema.clone());
        PyCapsule::new_with_value(py, FFI_ArrowArrayStream::new(Box::new(reader)), c"arrow_array_stream")
    }

    /// The number of results.
    fn __len__(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }
}

/// Every result of a sweep (`sweep`: id, unique prefix or name; None: the
/// only one) from the source the flags name (`--db FILE`, or
/// `--coordinator URL --token ...`), as `ksweep export` reads them.
#[pyfunction]
#[pyo3(signature = (source, sweep=None))]
pub fn results(py: Python<'_>, source: Vec<String>, sweep: Option<String>) -> PyResult<ResultBatches> {
    detached(py, move || {
        let schema = export_schema();
        // Two stages on two threads: reading pages (the database or the
        // stream, and their rows' labels) beside building the Arrow
        // batches (and freeing the rows), a page or two apart.
        let (pages, built) = std::sync::mpsc::sync_channel::<Vec<ExportRow>>(2);
        std::thread::scope(|scope| {
            let schema = &schema;
            let builder = scope.spawn(move || -> anyhow::Result<Vec<RecordBatch>> {
                built.iter().map(|page| Ok(export_batch(schema, &page)?)).collect()
            });
            let read = block_on(source, async |source| {
                let mut rows = ksweep::ExportStream::open(source, sweep.as_deref()).await?;
                while let Some(page) = rows.next_page().await? {
                    if pages.send(page).is_err() {
                        break; // the builder failed: its error is the one to say
                    }
                }
                anyhow::Ok(())
            });
            drop(pages);
            let batches = builder.join().map_err(|_| anyhow::anyhow!("building the Arrow batches panicked"))??;
            read?;
            Ok(ResultBatches { schema: schema.clone(), batches })
        })
    })
}
