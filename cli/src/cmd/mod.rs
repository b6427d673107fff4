//! One module per subcommand (or family); each exposes its clap `Args` and
//! the function that runs it.

pub mod bench;
pub mod check;
pub mod client;
pub mod eval;
pub mod exists;
pub mod health;
pub mod run;
pub mod serve;
pub mod tour;
