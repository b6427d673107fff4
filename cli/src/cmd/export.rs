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
use crate::source::{ExportPages, Source};

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
    // The sweep is found before anything is written: a bad id leaves stdout empty.
    let mut rows = ExportStream::open(&mut source, args.id.as_deref()).await?;
    match (args.format, args.output.as_deref()) {
        (ExportFormat::Parquet, None) => bail!("--format parquet: a Parquet file needs -o FILE"),
        (ExportFormat::Parquet, Some(path)) => {
            let partial = Partial::create(path)?;
            let mut writer = ParquetWriter::new(partial.file()?)?;
            while let Some(page) = rows.next_page().await? {
                writer.write(&page)?;
            }
            writer.finish()?;
            partial.commit()
        }
        (format, Some(path)) => {
            let partial = Partial::create(path)?;
            let mut file = BufWriter::new(partial.file()?);
            write_text(format, &mut rows, &mut file).await?;
            file.flush()?;
            partial.commit()
        }
        (format, None) => write_text(format, &mut rows, out).await,
    }
}

/// A sweep's export rows, page by page, in export order: each carries the
/// sweep's id and state, the first of a configuration its move list.
pub struct ExportStream<'a> {
    exporter: ExportRows,
    pages: ExportPages<'a>,
}

impl<'a> ExportStream<'a> {
    /// Finds the sweep (an error here, before any row) and warns on stderr
    /// when its results are not all there.
    pub async fn open(source: &'a mut Source, id: Option<&str>) -> Result<ExportStream<'a>> {
        let (status, sweep, pages) = source.export_with_status(id).await?;
        let progress = Progress::from(&status);
        if let Some(warning) = progress.warning() {
            eprintln!("warning: {warning}");
        }
        let exporter = ExportRows::new(&sweep, &status.sweep_id, progress.state_label());
        Ok(ExportStream { exporter, pages })
    }

    /// The next page of rows; `None` after the last.
    pub async fn next_page(&mut self) -> Result<Option<Vec<ExportRow>>> {
        let page = self.pages.next_page().await?;
        Ok(page.map(|rows| rows.into_iter().map(|r| self.exporter.row(r)).collect()))
    }
}

async fn write_text(format: ExportFormat, rows: &mut ExportStream<'_>, out: &mut impl Write) -> Result<()> {
    if format == ExportFormat::Csv {
        CsvWriter::header(out)?;
    }
    while let Some(page) = rows.next_page().await? {
        for r in &page {
            match format {
                ExportFormat::Csv => CsvWriter::write(r, out)?,
                _ => write_jsonl(r, out)?,
            }
        }
    }
    Ok(())
}
