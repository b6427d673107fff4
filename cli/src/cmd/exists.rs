//! `ksweep exists`: what is proven about open and closed tours of a
//! configuration, with the reason or the theorem behind each verdict.

use std::io::Write;

use anyhow::Result;
use clap::Args;
use tour::exists::{proven, Claim};
use tour::solve::{cycle_cover_exists, NO_CYCLE_COVER};

use crate::board_args::BoardArgs;

/// Print what is proven about open and closed tours of a configuration.
#[derive(Debug, Args)]
pub struct ExistsArgs {
    #[command(flatten)]
    pub board: BoardArgs,
}

pub fn run(args: ExistsArgs, out: &mut impl Write) -> Result<()> {
    let config = args.board.configuration()?;
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
    for (kind, claim) in [("open", e.open), ("closed", closed)] {
        let because = claim.because();
        if because.is_empty() {
            writeln!(out, "{kind:<7} {}", claim.verdict())?;
        } else {
            writeln!(out, "{kind:<7} {}: {because}", claim.verdict())?;
        }
    }
    Ok(())
}
