//! `ksweep export`: every task result as CSV or JSON lines.

use std::io::Write;

use anyhow::Result;
use clap::{Args, ValueEnum};
use ksweep_proto::v1 as pb;
use sweep::csv;

use crate::connect::SourceArgs;
use crate::source::Source;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ExportFormat {
    Csv,
    Jsonl,
}

/// Write every task result, sorted by (configuration, start, method).
#[derive(Debug, Args)]
pub struct ExportArgs {
    pub id: Option<String>,
    #[command(flatten)]
    pub source: SourceArgs,
    #[arg(long, value_enum, default_value_t = ExportFormat::Csv)]
    pub format: ExportFormat,
}

const CSV_COLUMNS: [&str; 10] =
    ["rule", "dims", "shape", "method", "start", "success", "outcome", "attempts", "visited", "micros"];

pub async fn run(args: ExportArgs, out: &mut impl Write) -> Result<()> {
    let mut source = Source::open(&args.source).await?;
    // Find the sweep before writing anything: a bad id leaves stdout empty.
    let mut pages = source.export(args.id.as_deref()).await?;
    if matches!(args.format, ExportFormat::Csv) {
        out.write_all(csv::record(CSV_COLUMNS).as_bytes())?;
    }
    while let Some(page) = pages.next_page().await? {
        for r in &page {
            write_row(r, args.format, out)?;
        }
    }
    Ok(())
}

fn outcome_name(code: i32) -> &'static str {
    ksweep_proto::convert::outcome(code, "ResultRow.outcome").ok().flatten().map_or("", tour::Outcome::name)
}

fn write_row(r: &pb::ResultRow, format: ExportFormat, out: &mut impl Write) -> Result<()> {
    let start = r.start.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    match format {
        ExportFormat::Csv => {
            let (dims, attempts, visited, micros) =
                (r.dims.to_string(), r.attempts.to_string(), r.visited.to_string(), r.micros.to_string());
            let success = if r.success { "1" } else { "0" };
            let fields = [
                r.moves.as_str(),
                &dims,
                &r.shape,
                &r.method,
                &start,
                success,
                outcome_name(r.outcome),
                &attempts,
                &visited,
                &micros,
            ];
            out.write_all(csv::record(fields).as_bytes())?;
        }
        ExportFormat::Jsonl => {
            let v = serde_json::json!({
                "rule": r.moves, "dims": r.dims, "shape": r.shape, "method": r.method, "start": r.start,
                "success": r.success, "outcome": outcome_name(r.outcome), "attempts": r.attempts,
                "visited": r.visited, "micros": r.micros,
            });
            writeln!(out, "{v}")?;
        }
    }
    Ok(())
}
