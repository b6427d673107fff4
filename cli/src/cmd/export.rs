//! `ksweep export`: every task result as CSV, JSON lines or Parquet, with
//! the columns of docs/export.md.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};
use ksweep_coordinator::export_format::{write_jsonl, CsvWriter, ExportRow, ExportRows, ParquetWriter};
use sweep::Progress;

use crate::connect::SourceArgs;
use crate::output_file::Partial;
use crate::source::Source;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// CSV with a header; lists as JSON text (`[5,5]`).
    Csv,
    /// One JSON object a line.
    Jsonl,
    /// Typed columns for pandas and arrow (`pandas.read_parquet`); needs -o.
    Parquet,
}

/// Write every task result, sorted by (configuration, start, method).
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The sweep: its id, a unique prefix of it, or its name (default: the
    /// only sweep there is).
    pub id: Option<String>,
    #[command(flatten)]
    pub source: SourceArgs,
    #[arg(long, value_enum, default_value_t = ExportFormat::Csv)]
    pub format: ExportFormat,
    /// Write this file (whole, or not at all: a failed export leaves no
    /// partial file); without it, stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub async fn run(args: ExportArgs, out: &mut impl Write) -> Result<()> {
    let mut source = Source::open(&args.source).await?;
    // Find the sweep before writing anything: a bad id leaves stdout empty.
    let status = source.status(args.id.as_deref()).await?;
    let progress = Progress::from(&status);
    if let Some(warning) = progress.warning() {
        eprintln!("warning: {warning}");
    }
    let state = progress.state_label().to_string();
    let sweep = source.sweep(&status)?;
    let mut exporter = ExportRows::new(&sweep, &status.sweep_id, &state);
    let mut pages = source.export(Some(&status.sweep_id)).await?;
    let mut next = async || -> Result<Option<Vec<ExportRow>>> {
        let page = pages.next_page().await?;
        Ok(page.map(|rows| rows.into_iter().map(|r| exporter.row(r)).collect()))
    };
    match (args.format, args.output.as_deref()) {
        (ExportFormat::Parquet, None) => bail!("--format parquet: a Parquet file needs -o FILE"),
        (ExportFormat::Parquet, Some(path)) => {
            let partial = Partial::create(path)?;
            let mut writer = ParquetWriter::new(partial.file()?)?;
            while let Some(rows) = next().await? {
                writer.write(&rows)?;
            }
            writer.finish()?;
            partial.commit()
        }
        (format, Some(path)) => {
            let partial = Partial::create(path)?;
            let mut file = BufWriter::new(partial.file()?);
            write_text(format, &mut next, &mut file).await?;
            file.flush()?;
            partial.commit()
        }
        (format, None) => write_text(format, &mut next, out).await,
    }
}

async fn write_text(
    format: ExportFormat,
    next: &mut impl AsyncFnMut() -> Result<Option<Vec<ExportRow>>>,
    out: &mut impl Write,
) -> Result<()> {
    if format == ExportFormat::Csv {
        CsvWriter::header(out)?;
    }
    while let Some(rows) = next().await? {
        for r in &rows {
            match format {
                ExportFormat::Csv => CsvWriter::write(r, out)?,
                _ => write_jsonl(r, out)?,
            }
        }
    }
    Ok(())
}
