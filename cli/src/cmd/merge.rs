//! `ksweep merge`: join databases computed apart (a laptop's run and a
//! cluster's) into a new one. A task both hold must agree; where one does
//! not, the earlier database's result is kept, every disagreement listed,
//! and the command fails so a script notices.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use ksweep_coordinator::store::{Imported, Store};

/// Join database files into a new one.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The databases, in order: where two disagree on a task, the earlier
    /// one's result is kept.
    #[arg(required = true, num_args = 2.., value_name = "DB")]
    pub inputs: Vec<PathBuf>,
    /// The new database (must not exist yet).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
}

pub fn run(args: MergeArgs, out: &mut impl Write) -> Result<()> {
    if args.output.exists() {
        bail!("-o {}: the file exists; merge writes a new database (choose another name)", args.output.display());
    }
    for input in &args.inputs {
        if !input.is_file() {
            bail!("{}: no such database file", input.display());
        }
    }
    // Built beside the output and renamed at the end: the output appears
    // complete or not at all.
    let partial = partial_path(&args.output);
    let merged = merge_into(&args.inputs, &partial, out);
    match merged {
        Ok(conflicts) => {
            std::fs::rename(&partial, &args.output)
                .with_context(|| format!("-o {}: cannot move the merged file into place", args.output.display()))?;
            if conflicts > 0 {
                bail!(
                    "{conflicts} tasks disagreed between the databases: the earlier database's results were kept, \
                     and the table `conflicts` of {} lists the others",
                    args.output.display()
                );
            }
            writeln!(out, "wrote {}", args.output.display())?;
            Ok(())
        }
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            Err(e)
        }
    }
}

/// `.NAME.merging-PID` beside `output`.
fn partial_path(output: &Path) -> PathBuf {
    let name = output.file_name().map_or_else(|| "merged.db".into(), |n| n.to_string_lossy().into_owned());
    output.with_file_name(format!(".{name}.merging-{}", std::process::id()))
}

/// Imports every input into a new database at `path`; returns the tasks
/// that disagreed.
fn merge_into(inputs: &[PathBuf], path: &Path, out: &mut impl Write) -> Result<u64> {
    let mut store = Store::open(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut total = Imported::default();
    for input in inputs {
        let i = store.import(input).with_context(|| format!("{}", input.display()))?;
        writeln!(
            out,
            "{}: {} sweeps ({} new, {} joined), {} results ({} new, {} already there, {} conflicting), {} workers",
            input.display(),
            i.sweeps_new + i.sweeps_joined,
            i.sweeps_new,
            i.sweeps_joined,
            i.tasks_new + i.tasks_agreeing + i.tasks_conflicting,
            i.tasks_new,
            i.tasks_agreeing,
            i.tasks_conflicting,
            i.workers
        )?;
        for c in &i.conflicts {
            eprintln!("CONFLICT {}: {c}", input.display());
        }
        total.sweeps_new += i.sweeps_new;
        total.tasks_new += i.tasks_new;
        total.tasks_conflicting += i.tasks_conflicting;
    }
    store.keep();
    // Closing checkpoints the WAL into the file before it is moved.
    drop(store);
    writeln!(out, "total: {} sweeps, {} results", total.sweeps_new, total.tasks_new)?;
    Ok(total.tasks_conflicting)
}
