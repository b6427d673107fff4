//! `ksweep merge`: join databases computed apart (a laptop's run and a
//! cluster's) into a new one. Every input's results are checked as a
//! worker's are, and an input with one that cannot be is refused, with
//! nothing written. A task both hold must agree; where one does not, the
//! earlier database's result is kept, every disagreement listed, and the
//! command fails so a script notices.

use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use ksweep_coordinator::store::{place_new, Imported, Store};

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
    // Not `exists()`: a dangling symlink would be replaced.
    if args.output.symlink_metadata().is_ok() {
        bail!("-o {}: the file exists; merge writes a new database (choose another name)", args.output.display());
    }
    // Each input's file, to refuse one named twice (through a link, a
    // symlink or another spelling): it would join a file to itself.
    let mut files: Vec<((u64, u64), &Path)> = Vec::with_capacity(args.inputs.len());
    for input in &args.inputs {
        if !input.is_file() {
            bail!("{}: no such database file", input.display());
        }
        let meta = std::fs::metadata(input).with_context(|| format!("{}", input.display()))?;
        let file = (meta.dev(), meta.ino());
        if let Some((_, first)) = files.iter().find(|(f, _)| *f == file) {
            bail!("{} and {} are the same file; give each database once", first.display(), input.display());
        }
        files.push((file, input));
    }
    // Built beside the output and moved into place at the end: the output
    // appears complete or not at all.
    let partial = partial_path(&args.output);
    let merged = merge_into(&args.inputs, &partial, out)
        .with_context(|| format!("nothing was written to -o {}", args.output.display()))
        .and_then(|total| {
            publish(&partial, &args.output)?;
            Ok(total)
        });
    let total = match merged {
        Ok(total) => total,
        Err(e) => {
            remove_database(&partial);
            return Err(e);
        }
    };
    if total.tasks_conflicting > 0 {
        bail!(
            "{} tasks disagreed between the databases: the earlier database's results were kept, and the table \
             `conflicts` of {} lists the others",
            total.tasks_conflicting,
            args.output.display()
        );
    }
    writeln!(out, "wrote {}", args.output.display())?;
    Ok(())
}

/// `.NAME.merging-PID` beside `output`.
fn partial_path(output: &Path) -> PathBuf {
    let name = output.file_name().map_or_else(|| "merged.db".into(), |n| n.to_string_lossy().into_owned());
    output.with_file_name(format!(".{name}.merging-{}", std::process::id()))
}

/// Moves the finished file to `output`, refusing to replace a file that
/// appeared there meanwhile.
fn publish(partial: &Path, output: &Path) -> Result<()> {
    match place_new(partial, output) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            bail!("-o {}: the file appeared while merging; nothing was written there", output.display())
        }
        placed => placed.with_context(|| format!("-o {}: cannot move the merged file into place", output.display())),
    }
}

/// Removes a database file and whatever SQLite kept beside it.
fn remove_database(path: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(name));
    }
}

/// `n thing` or `n things`.
fn count(n: u64, thing: &str) -> String {
    format!("{n} {thing}{}", if n == 1 { "" } else { "s" })
}

/// What an import brought, as one line.
fn describe(i: &Imported) -> String {
    format!(
        "{} ({} new, {} joined), {} ({} new, {} already there, {} conflicting), {}",
        count(i.sweeps(), "sweep"),
        i.sweeps_new,
        i.sweeps_joined,
        count(i.tasks(), "result"),
        i.tasks_new,
        i.tasks_agreeing,
        i.tasks_conflicting,
        count(i.workers, "worker")
    )
}

/// Imports every input into a new database at `path`, printing a line
/// each (and its conflicts on stderr); returns the total.
fn merge_into(inputs: &[PathBuf], path: &Path, out: &mut impl Write) -> Result<Imported> {
    let mut store = Store::open(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut total = Imported::default();
    for input in inputs {
        let i = store.import(input).with_context(|| format!("{}", input.display()))?;
        writeln!(out, "{}: {}", input.display(), describe(&i))?;
        out.flush()?;
        for c in &i.conflicts {
            eprintln!("CONFLICT in {}: {c}", input.display());
        }
        if let Some(more) = i.tasks_conflicting.checked_sub(i.conflicts.len() as u64).filter(|&n| n > 0) {
            eprintln!("CONFLICT in {}: and {}", input.display(), count(more, "more task"));
        }
        total.add(&i);
    }
    store.keep();
    // Closing checkpoints the WAL into the file before it is moved.
    drop(store);
    writeln!(
        out,
        "total: {}, {} ({} in more than one database, {} of them conflicting), {}",
        count(total.sweeps_new, "sweep"),
        count(total.tasks_new, "result"),
        total.tasks_agreeing + total.tasks_conflicting,
        total.tasks_conflicting,
        count(total.workers, "worker")
    )?;
    Ok(total)
}
