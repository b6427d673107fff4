//! `ksweep rm`: remove a sweep, asking first on a terminal.

use std::io::{BufRead, IsTerminal, Write};

use anyhow::{bail, Result};
use clap::Args;
use ksweep_proto::v1 as pb;
use sweep::{short_id, Removal, SweepState, SweepStatus};

use crate::connect::{status_error, SourceArgs};
use crate::source::{open_writer, resolve_unserved};

/// Remove a sweep: its shards, its task list and the results no other
/// sweep has (results other sweeps also have stay: docs/identity.md). A
/// running sweep is refused; cancel it first.
#[derive(Debug, Args)]
pub struct RmArgs {
    /// The sweep: its id, a unique prefix of it, or its name.
    pub id: String,
    /// Remove without asking (needed off a terminal: in scripts).
    #[arg(long, short)]
    pub yes: bool,
    #[command(flatten)]
    pub source: SourceArgs,
}

pub async fn run(args: RmArgs, out: &mut impl Write) -> Result<()> {
    let removal = match args.source.offline_db()? {
        // The writer lock is held from the look-up to the removal: what
        // was shown is what goes, and nothing serves the file meanwhile.
        Some(db) => {
            let mut store = open_writer(&db)?;
            let (record, status) = resolve_unserved(&store, &args.id)?;
            confirm(&status, args.yes)?;
            store.remove_sweep(record.key)?
        }
        None => {
            let mut client = args.source.connect.connect().await?;
            let status = crate::connect::sweep_status(&mut client, &args.id).await?;
            // Refused before asking, as the coordinator would refuse it.
            if status.state == SweepState::Running {
                let (id, name) = (status.sweep_id, status.name);
                return Err(ksweep_coordinator::Error::SweepRunning { id, name }.into());
            }
            confirm(&status, args.yes)?;
            let sweep = pb::SweepRef { sweep_id: status.sweep_id.clone() };
            Removal::from(client.remove(sweep).await.map_err(status_error)?.into_inner())
        }
    };
    writeln!(out, "{}", removal.text())?;
    Ok(())
}

/// Asks on the terminal before a sweep is removed, unless `--yes`; off a
/// terminal (a script, a pipe) without `--yes`, refuses.
fn confirm(status: &SweepStatus, yes: bool) -> Result<()> {
    if yes {
        return Ok(());
    }
    let what = format!(
        "sweep {} ({}, {}, {}/{} tasks)",
        short_id(&status.sweep_id),
        status.name,
        status.state,
        status.tasks_done,
        status.tasks_total
    );
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        bail!("not removing {what} without confirmation: stdin is not a terminal; give --yes to remove it");
    }
    eprint!("remove {what}? [y/N] ");
    std::io::stderr().flush()?;
    let mut answer = String::new();
    stdin.lock().read_line(&mut answer)?;
    match is_yes(&answer) {
        true => Ok(()),
        false => bail!("{what} not removed"),
    }
}

/// `y` or `yes`, in any case; anything else (an empty line too) is no.
fn is_yes(answer: &str) -> bool {
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_yes_removes() {
        for yes in ["y\n", "YES\n", " yes "] {
            assert!(is_yes(yes), "{yes:?}");
        }
        for no in ["\n", "", "n\n", "no", "yess", "maybe"] {
            assert!(!is_yes(no), "{no:?}");
        }
    }
}
