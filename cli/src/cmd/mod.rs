//! One module per subcommand; each exposes its clap `Args` and a `run`.

pub mod bench;
pub mod eval;
pub mod tour;
