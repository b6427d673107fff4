//! `ksweep exists`: what is proven about open and closed tours of a
//! configuration, with the reason or the theorem behind each verdict.

use std::io::Write;

use anyhow::Result;
use clap::Args;
use tour::exists::known;

use crate::board_args::BoardArgs;

/// Print what is proven about open and closed tours of a configuration.
#[derive(Debug, Args)]
pub struct ExistsArgs {
    #[command(flatten)]
    pub board: BoardArgs,
}

pub fn run(args: ExistsArgs, out: &mut impl Write) -> Result<()> {
    let config = args.board.configuration()?;
    let e = known(config.board(), config.moves());
    writeln!(
        out,
        "board   {} ({} cells), moves {}",
        config.board(),
        config.board().cells(),
        config.moves().describe()
    )?;
    for (kind, claim) in [("open", e.open), ("closed", e.closed)] {
        let because = claim.because();
        if because.is_empty() {
            writeln!(out, "{kind:<7} {}", claim.verdict())?;
        } else {
            writeln!(out, "{kind:<7} {}: {because}", claim.verdict())?;
        }
    }
    Ok(())
}
