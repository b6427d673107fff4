//! `ksweep diff`: two sweeps compared per (configuration, method).

use std::io::Write;

use anyhow::Result;
use clap::{Args, ValueEnum};
use sweep::{DiffBuilder, Side, SweepLine};

use crate::connect::SourceArgs;
use crate::source::Source;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DiffFormat {
    /// A line per (configuration, method), then the differing starts.
    Text,
    /// One JSON document, every differing start with both flags.
    Json,
    /// A row per (configuration, method), the differing starts in a column.
    Csv,
}

/// Compare two sweeps: the spec fields that differ, then for each
/// (configuration, method) both have results of, the accuracy in each, the
/// difference (B - A, in points, `*` where the 95 % intervals do not
/// overlap) and the starts both ran whose flags differ, with a count of the
/// equal and differing pairs. Configurations match by board and move list,
/// methods by name (docs/identity.md).
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// Sweep A: its id, a unique prefix of it, or its name.
    pub a: String,
    /// Sweep B, likewise.
    pub b: String,
    #[command(flatten)]
    pub source: SourceArgs,
    #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
    pub format: DiffFormat,
    /// List only the pairs that differ (in accuracy or in some start's
    /// flags); the counts still cover every pair.
    #[arg(long)]
    pub only_differences: bool,
}

pub async fn run(args: DiffArgs, out: &mut impl Write) -> Result<()> {
    let mut source = Source::open(&args.source).await?;
    let (a, b) = (source.status(Some(&args.a)).await?, source.status(Some(&args.b)).await?);
    let mut diff = DiffBuilder::new(&*source.sweep(&a)?, &*source.sweep(&b)?);
    for (side, status) in [(Side::A, &a), (Side::B, &b)] {
        let mut pages = source.export(Some(&status.sweep_id)).await?;
        while let Some(rows) = pages.next_page().await? {
            for row in &rows {
                diff.add(side, row);
            }
        }
    }
    let diff = diff.finish(SweepLine::from(&a), SweepLine::from(&b));
    let text = match args.format {
        DiffFormat::Text => diff.text(args.only_differences),
        DiffFormat::Json => diff.json(args.only_differences),
        DiffFormat::Csv => diff.csv(args.only_differences),
    };
    out.write_all(text.as_bytes())?;
    Ok(())
}
