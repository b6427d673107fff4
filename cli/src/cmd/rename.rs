//! `ksweep rename`: give a sweep another name.

use std::io::Write;

use anyhow::Result;
use clap::Args;
use ksweep_proto::v1 as pb;
use sweep::short_id;

use crate::connect::SourceArgs;
use crate::source::{open_writer, resolve_unserved};

/// Give a sweep another name (as a spec's: not empty, at most 200 bytes,
/// no control characters). Its id stays, and so does its stored spec: the
/// spec file run again still resumes it, under the new name.
#[derive(Debug, Args)]
pub struct RenameArgs {
    /// The sweep: its id, a unique prefix of it, or its name.
    pub id: String,
    /// Its new name.
    pub name: String,
    #[command(flatten)]
    pub source: SourceArgs,
}

pub async fn run(args: RenameArgs, out: &mut impl Write) -> Result<()> {
    let (id, was, name) = match args.source.offline_db()? {
        Some(db) => {
            let mut store = open_writer(&db)?;
            let (record, _) = resolve_unserved(&store, &args.id)?;
            let renamed = store.rename_sweep(record.key, &args.name)?;
            (renamed.id, record.name, renamed.name)
        }
        None => {
            let mut client = args.source.connect.connect().await?;
            let was = crate::connect::sweep_status(&mut client, &args.id).await?;
            let request = pb::RenameRequest { sweep_id: was.sweep_id.clone(), name: args.name };
            let renamed = crate::connect::answered(client.rename(request).await)?;
            (renamed.sweep_id, was.name, renamed.name)
        }
    };
    writeln!(out, "renamed sweep {} from {was:?} to {name:?}", short_id(&id))?;
    Ok(())
}
