//! `ksweep exists`: what is proven about open and closed tours of a
//! configuration, with the reason or the theorem behind each verdict, and
//! with `--db` what a database's results prove where no theorem speaks.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use ksweep_coordinator::store::{Facts, Store};
use tour::exists::{proven, Claim, Existence};
use tour::solve::{cycle_cover_exists, NO_CYCLE_COVER};

use crate::board_args::BoardArgs;

/// Print what is proven about open and closed tours of a configuration.
#[derive(Debug, Args)]
pub struct ExistsArgs {
    #[command(flatten)]
    pub board: BoardArgs,
    /// Also answer from this database's results (read only, never
    /// changed: an older file is upgraded in memory) where no theorem
    /// does: a tour a method found, or every start refuted.
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
}

pub fn run(args: ExistsArgs, out: &mut impl Write) -> Result<()> {
    let config = args.board.configuration()?;
    // The database first, so that a bad --db prints nothing but its error.
    let facts = match &args.db {
        Some(db) => {
            anyhow::ensure!(db.exists(), "--db: {} does not exist", db.display());
            let store = Store::open_unchanged(db).with_context(|| format!("--db: cannot open {}", db.display()))?;
            store.facts(&sweep::board_moves(config.board().sides(), config.moves()))?
        }
        None => Facts::default(),
    };
    let e = proven(config.board(), config.moves());
    writeln!(
        out,
        "board   {} ({} cells), moves {}",
        config.board(),
        config.board().cells(),
        config.moves().describe()
    )?;
    // Where no theorem settles closed tours, a maximum degree-2 matching
    // (what solve's cycle covers start from) may prove there are none.
    let closed = match e.closed {
        Claim::Unknown if cycle_cover_exists(config.board(), config.moves()) == Some(false) => {
            Claim::Impossible(NO_CYCLE_COVER)
        }
        c => c,
    };
    let (open_fact, closed_fact) = facts.fill(Existence { open: e.open, closed });
    for (kind, claim, fact) in [("open", e.open, open_fact), ("closed", closed, closed_fact)] {
        let (verdict, because) = match fact {
            Some(f) => (f.verdict(), format!("stored results: {}", f.evidence())),
            None => (claim.verdict(), claim.because().to_string()),
        };
        if because.is_empty() {
            writeln!(out, "{kind:<7} {verdict}")?;
        } else {
            writeln!(out, "{kind:<7} {verdict}: {because}")?;
        }
    }
    Ok(())
}
