//! `ksweep report`: one file to hand round: the sweep's spec, state, every
//! table and every figure, as self-contained HTML or as Markdown with the
//! SVGs beside it.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use figures::report;

use crate::cmd::plot::{failures, found_some, start_results, sweep_map};
use crate::connect::SourceArgs;
use crate::output_file::write_whole;
use crate::source::Source;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// One HTML file, figures inline: nothing else to send.
    Html,
    /// Markdown; the figures go to a folder beside it (`NAME-figures/`).
    Md,
}

/// Write a sweep's report.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The sweep: its id, a unique prefix of it, or its name (default: the
    /// only sweep there is).
    pub id: Option<String>,
    #[command(flatten)]
    pub source: SourceArgs,
    /// The report file.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// html, or md; by default the output's extension decides (.md: md).
    #[arg(long, value_enum)]
    pub format: Option<ReportFormat>,
    /// Failure maps to include: the 2D and 3D boards with the most failures.
    #[arg(long, default_value_t = 2)]
    pub maps: usize,
}

pub async fn run(args: ReportArgs, _out: &mut impl Write) -> Result<()> {
    let format = args.format.unwrap_or(match args.output.extension().and_then(|e| e.to_str()) {
        Some("md") => ReportFormat::Md,
        _ => ReportFormat::Html,
    });
    let mut source = Source::open(&args.source).await?;
    let status = source.status(args.id.as_deref()).await?;
    let rows = source.table_rows(Some(&status.sweep_id)).await?;
    let sweep = source.sweep(&status)?;

    // The boards with the most failures where some start found a tour, at
    // most one per (rule, D).
    let mut boards: Vec<_> = sweep
        .configurations()
        .iter()
        .filter(|e| (2..=3).contains(&e.dims()) && failures(&rows, e.index) > 0 && found_some(&rows, e.index))
        .collect();
    boards.sort_by_key(|e| (std::cmp::Reverse(failures(&rows, e.index)), e.index));
    let mut seen = Vec::new();
    boards.retain(|e| {
        let key = (e.moves_label(), e.dims());
        let first = !seen.contains(&key);
        seen.push(key);
        first
    });
    boards.truncate(args.maps);
    let indices: Vec<u32> = boards.iter().map(|e| e.index).collect();
    let results = start_results(&mut source, &status.sweep_id, &indices).await?;
    let maps = boards.iter().zip(results).map(|(e, r)| sweep_map(e, &status, r)).collect::<Result<Vec<_>>>()?;

    let input = ksweep_coordinator::query::report_input(&status, rows, maps);
    match format {
        ReportFormat::Html => write_whole(&args.output, report::html(&input)?.as_bytes())?,
        ReportFormat::Md => {
            let stem = args.output.file_stem().and_then(|s| s.to_str()).unwrap_or("report");
            let dir_name = format!("{stem}-figures");
            let (text, files) = report::markdown(&input, &dir_name)?;
            let dir = args.output.with_file_name(&dir_name);
            std::fs::create_dir_all(&dir).with_context(|| format!("-o: cannot create {}", dir.display()))?;
            for (name, svg) in files {
                write_whole(&dir.join(name), svg.as_bytes())?;
            }
            write_whole(&args.output, text.as_bytes())?;
        }
    }
    eprintln!("wrote {}", args.output.display());
    Ok(())
}
