//! `ksweep db`: which schema a database file has and whether it is whole,
//! and bringing one an older release wrote up to this release's
//! (docs/database.md).

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use ksweep_coordinator::store::{schema::SCHEMA_VERSION, Store};

/// Inspect or upgrade a database file.
#[derive(Debug, Args)]
pub struct DbArgs {
    #[command(subcommand)]
    command: DbCommand,
}

#[derive(Debug, Subcommand)]
enum DbCommand {
    /// Print the file's schema version, the build that last wrote it and
    /// whether SQLite's quick check finds it whole, without changing it. A
    /// damaged file is said so and the command fails (exit 1). The check
    /// reads the whole file.
    Info {
        /// The database file.
        #[arg(long, value_name = "FILE")]
        db: PathBuf,
    },
    /// Bring a database an older release wrote up to this release's
    /// schema, in one transaction, after copying the file as it was beside
    /// it (`FILE.schema-vN.bak`). Any command that opens the file does the
    /// same; this one says what it did.
    ///
    /// Example: ksweep db upgrade --db ksweep.db
    Upgrade {
        /// The database file.
        #[arg(long, value_name = "FILE")]
        db: PathBuf,
    },
}

pub fn run(args: DbArgs, out: &mut impl Write) -> Result<()> {
    match args.command {
        DbCommand::Info { db } => {
            let (version, writer) = Store::schema_of(&db).with_context(|| format!("reading {}", db.display()))?;
            let verdict = match version.cmp(&SCHEMA_VERSION) {
                std::cmp::Ordering::Equal => "current".to_string(),
                std::cmp::Ordering::Less => "older: `ksweep db upgrade` (or any command) brings it up to date".into(),
                std::cmp::Ordering::Greater => format!("newer than this ksweep {} reads", env!("CARGO_PKG_VERSION")),
            };
            writeln!(out, "file            {}", db.display())?;
            writeln!(out, "schema version  {version} ({verdict}); this build writes version {SCHEMA_VERSION}")?;
            writeln!(
                out,
                "written by      ksweep {}",
                writer.as_deref().unwrap_or("(not recorded before schema version 3)")
            )?;
            let damage = Store::damage_of(&db).with_context(|| format!("checking {}", db.display()))?;
            match &damage {
                None => writeln!(out, "integrity       ok (SQLite's quick check)")?,
                Some(found) => writeln!(out, "integrity       DAMAGED: {found}")?,
            }
            if let Some(found) = damage {
                // Fails, so a script that checks files notices.
                anyhow::bail!(
                    "{} is damaged ({found}); restore a backup, or salvage what is readable with sqlite3's .recover",
                    db.display()
                );
            }
        }
        DbCommand::Upgrade { db } => {
            anyhow::ensure!(db.is_file(), "--db {}: no such database file", db.display());
            let store = Store::open(&db).with_context(|| format!("upgrading {}", db.display()))?;
            match store.upgraded() {
                Some(u) => {
                    writeln!(
                        out,
                        "upgraded {} from schema version {} to {}; the file as it was: {}",
                        db.display(),
                        u.from,
                        SCHEMA_VERSION,
                        u.backup.display()
                    )?;
                    if let Some(warning) = &u.warning {
                        writeln!(out, "warning: {warning}")?;
                    }
                }
                None => writeln!(out, "{} is already at schema version {SCHEMA_VERSION}", db.display())?,
            }
        }
    }
    Ok(())
}
