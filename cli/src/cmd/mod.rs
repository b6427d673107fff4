//! One module per subcommand; each exposes its clap `Args` and the `run`
//! function that carries it out.

pub mod atlas;
pub mod bench;
pub mod cancel;
pub mod check;
pub mod coordinator;
pub mod db;
pub mod diff;
pub mod drain;
pub mod eval;
pub mod exists;
pub mod export;
pub mod health;
pub mod merge;
pub mod plot;
pub mod rename;
pub mod replay;
pub mod report;
pub mod resume;
pub mod rm;
pub mod run;
pub mod slurm;
pub mod status;
pub mod submit;
pub mod table;
pub mod tour;
pub mod watch;
pub mod worker;
