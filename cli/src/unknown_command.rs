//! A subcommand clap does not know that names a method (`ksweep solve`):
//! clap's error, with a tip naming the commands that run a method.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use tour::Method;

/// `e` with a tip added when it is an unknown subcommand that parses as a
/// method's name; any other error as it is.
pub fn with_tip(mut e: clap::Error) -> clap::Error {
    if e.kind() != ErrorKind::InvalidSubcommand {
        return e;
    }
    let Some(ContextValue::String(name)) = e.get(ContextKind::InvalidSubcommand) else { return e };
    let Ok(method) = name.parse::<Method>() else { return e };
    let tip = tip(method);
    let mut tips = match e.remove(ContextKind::Suggested) {
        Some(ContextValue::StyledStrs(tips)) => tips,
        _ => Vec::new(),
    };
    tips.push(tip.into());
    e.insert(ContextKind::Suggested, ContextValue::StyledStrs(tips));
    e
}

/// The commands that run `method`: one start, or starts read from stdin.
fn tip(method: Method) -> String {
    let name = method.name();
    format!(
        "{name} is a method, not a command: run it from one start with `ksweep tour --method {name} --rule 2,1 \
         --dims 2 --n 8 --start 0,0`, from many with `ksweep eval --method {name}`, or over a sweep with `ksweep run`"
    )
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser, Subcommand};

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(subcommand)]
        command: Command,
    }

    #[derive(Debug, Subcommand)]
    enum Command {
        Tour,
    }

    fn error(args: &[&str]) -> String {
        let e = Cli::command().try_get_matches_from(args).expect_err("refused");
        with_tip(e).to_string()
    }

    #[test]
    fn a_method_used_as_a_command_gets_a_tip() {
        let e = error(&["ksweep", "solve"]);
        assert!(e.contains("unrecognized subcommand 'solve'"), "{e}");
        assert!(
            e.contains("tip: solve is a method, not a command: run it from one start with `ksweep tour --method solve"),
            "{e}"
        );
        let e = error(&["ksweep", "aw+"]);
        assert!(e.contains("`ksweep eval --method aw+`"), "{e}");
        let other = error(&["ksweep", "frobnicate"]);
        assert!(!other.contains("is a method"), "{other}");
    }
}
