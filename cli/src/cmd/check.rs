//! `ksweep check`: validate a sweep spec and say what it would run, without
//! running anything.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use sweep::Sweep;
use tour::Eligibility;

/// Validate a sweep spec and print its id, configurations and task count.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The sweep spec (TOML).
    pub spec: PathBuf,
}

pub fn run(args: CheckArgs, out: &mut impl Write) -> Result<()> {
    let text = crate::spec_file::load(&args.spec)?;
    let sweep = Sweep::parse(&text)?;
    let configs = sweep.configurations();
    let impossible = configs.iter().filter(|c| c.eligibility() == Eligibility::Impossible).count();
    let methods: Vec<&str> = sweep.methods().iter().map(|m| m.name()).collect();
    writeln!(out, "name            {}", sweep.name())?;
    writeln!(out, "id              {}", sweep.id())?;
    writeln!(out, "methods         {}", methods.join(", "))?;
    writeln!(out, "starts          {} per configuration", sweep.starts_per_config())?;
    writeln!(out, "configurations  {} ({impossible} impossible)", configs.len())?;
    writeln!(out, "tasks           {}", sweep.total_tasks())?;
    // What a worker must fit: the board whose tasks need the most memory.
    let largest = configs
        .iter()
        .filter(|c| c.eligibility() != Eligibility::Impossible)
        .map(|c| (c.configuration().memory_need_for(sweep.methods(), false), c))
        .max_by_key(|(need, _)| need.with_threads(1));
    if let Some((need, c)) = largest {
        writeln!(out, "memory          {need}, board {}", c.shape_label())?;
    }
    Ok(())
}
