//! What `status`, `table` and `export` read: a coordinator over gRPC or,
//! with `--db`, its database file directly; the same domain types either
//! way (a coordinator's messages decoded by `ksweep_proto::convert`).
//!
//! [`DbSource`] is the one place the CLI reads a database file: it asks the
//! coordinator's query layer, the same code the coordinator's service
//! answers with, so the offline answer cannot drift from the online one.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use ksweep_coordinator::query::{Export, ExportCursor, Query};
use ksweep_coordinator::store::{Store, SweepRecord};
use ksweep_proto::v1 as pb;
use sweep::{AggregateRow, ResultRow, Sweep, SweepState, SweepStatus};

use crate::connect::{status_error, Client, SourceArgs};

/// Rows read per page of an offline export.
const EXPORT_PAGE: usize = 8192;

/// A coordinator, or a database file read offline.
pub enum Source {
    /// A connected coordinator.
    Coordinator(Client),
    /// A database file (`--db`).
    Db(DbSource),
}

impl Source {
    /// Opens `--db` when given, else connects to the coordinator.
    pub async fn open(args: &SourceArgs) -> Result<Source> {
        match &args.offline_db()? {
            Some(path) => Ok(Source::Db(DbSource::open(path)?)),
            None => Ok(Source::Coordinator(args.connect.connect().await?)),
        }
    }

    /// The status of one sweep (the only one, when `id` is `None`).
    pub async fn status(&mut self, id: Option<&str>) -> Result<SweepStatus> {
        match self {
            Source::Db(db) => db.status(id),
            Source::Coordinator(client) => crate::connect::sweep_status(client, id.unwrap_or_default()).await,
        }
    }

    /// The status of every sweep.
    pub async fn list(&mut self) -> Result<Vec<SweepStatus>> {
        match self {
            Source::Db(db) => db.list(),
            Source::Coordinator(client) => {
                let reply = client.list(pb::ListRequest {}).await.map_err(status_error)?.into_inner();
                reply.sweeps.into_iter().map(decode_status).collect()
            }
        }
    }

    /// The aggregate rows of a sweep's tables.
    pub async fn table_rows(&mut self, id: Option<&str>) -> Result<Vec<AggregateRow>> {
        match self {
            Source::Db(db) => db.table_rows(id),
            Source::Coordinator(client) => {
                let sweep = pb::SweepRef { sweep_id: id.unwrap_or_default().to_string() };
                let reply = client.table(sweep).await.map_err(status_error)?;
                Ok(reply.into_inner().rows.into_iter().map(AggregateRow::from).collect())
            }
        }
    }

    /// The parsed spec of the sweep `status` describes: the database's own
    /// parse offline, else the status's spec text parsed here.
    pub fn sweep(&self, status: &SweepStatus) -> Result<Arc<Sweep>> {
        let sweep: Result<Arc<Sweep>> = match self {
            Source::Db(db) => db.query.sweep(Some(&status.sweep_id)).map_err(Into::into),
            Source::Coordinator(_) => Sweep::parse(&status.spec_toml).map(Arc::new).map_err(Into::into),
        };
        sweep.context("the sweep's stored spec")
    }

    /// A sweep's status, parsed spec and export pages together. A file
    /// answers from the export's own look-up, not a second status that
    /// sums every result (the CPU time and contributors an export does
    /// not need).
    pub async fn export_with_status(&mut self, id: Option<&str>) -> Result<(SweepStatus, Arc<Sweep>, ExportPages<'_>)> {
        match self {
            Source::Db(db) => {
                let (status, sweep, pages) = db.export_with_status(id)?;
                Ok((status, sweep, ExportPages::Db(Box::new(pages))))
            }
            Source::Coordinator(client) => {
                let status = crate::connect::sweep_status(client, id.unwrap_or_default()).await?;
                let sweep = Arc::new(Sweep::parse(&status.spec_toml).context("the sweep's stored spec")?);
                let reference = pb::SweepRef { sweep_id: status.sweep_id.clone() };
                let stream = client.export(reference).await.map_err(status_error)?.into_inner();
                Ok((status, sweep, ExportPages::Coordinator(Box::new(stream))))
            }
        }
    }

    /// Every task result of a sweep, page by page. Fails here, before the
    /// first page, when the sweep does not exist.
    pub async fn export(&mut self, id: Option<&str>) -> Result<ExportPages<'_>> {
        match self {
            Source::Db(db) => Ok(ExportPages::Db(Box::new(db.export(id)?))),
            Source::Coordinator(client) => {
                let sweep = pb::SweepRef { sweep_id: id.unwrap_or_default().to_string() };
                Ok(ExportPages::Coordinator(Box::new(client.export(sweep).await.map_err(status_error)?.into_inner())))
            }
        }
    }
}

/// A coordinator's status message as the CLI reads it; a state this build
/// does not know is an error naming the field.
pub fn decode_status(status: pb::SweepStatus) -> Result<SweepStatus> {
    Ok(SweepStatus::try_from(status)?)
}

/// The task results of one sweep, sorted by (configuration, start, method).
pub enum ExportPages<'a> {
    /// The coordinator's export stream.
    Coordinator(Box<tonic::Streaming<pb::ExportBatch>>),
    /// Pages of a database file.
    Db(Box<DbExport<'a>>),
}

impl ExportPages<'_> {
    /// The next page of rows; `None` after the last.
    pub async fn next_page(&mut self) -> Result<Option<Vec<ResultRow>>> {
        match self {
            ExportPages::Coordinator(stream) => match stream.message().await.map_err(status_error)? {
                Some(batch) => Ok(Some(batch.rows.into_iter().map(ResultRow::try_from).collect::<Result<_, _>>()?)),
                None => Ok(None),
            },
            ExportPages::Db(db) => db.next_page(),
        }
    }
}

/// A coordinator's database file, opened read-only, answered by the
/// coordinator's own query layer: the offline answer is the served one.
pub struct DbSource {
    query: Query,
    /// Whether a coordinator or `ksweep run` had the file open for writing
    /// when it was opened here.
    served: bool,
}

impl DbSource {
    /// Opens an existing database file; never creates one.
    pub fn open(path: &Path) -> Result<DbSource> {
        if !path.exists() {
            return Err(crate::failure::missing("--db", path));
        }
        let query = Query::open_read_only(path).with_context(|| format!("--db: cannot open {}", path.display()))?;
        Ok(DbSource { query, served: Store::is_served(path) })
    }

    /// The status of one sweep (the only one, when `id` is `None`).
    pub fn status(&self, id: Option<&str>) -> Result<SweepStatus> {
        Ok(self.as_read(self.query.status(id).map_err(|e| self.read_error(e))?))
    }

    /// The status of every sweep.
    pub fn list(&self) -> Result<Vec<SweepStatus>> {
        Ok(self.query.sweeps()?.into_iter().map(|s| self.as_read(s)).collect())
    }

    /// The status as this file reads ([`unserved_status`] unless served).
    fn as_read(&self, status: SweepStatus) -> SweepStatus {
        match self.served {
            true => status,
            false => unserved_status(status),
        }
    }

    /// A query's error as read from this file: the sweeps it lists to
    /// choose from are `stopped`, not running, when nothing serves it.
    fn read_error(&self, e: ksweep_coordinator::Error) -> anyhow::Error {
        match self.served {
            true => e.into(),
            false => unserved(e).into(),
        }
    }

    /// The aggregate rows of a sweep's tables.
    pub fn table_rows(&self, id: Option<&str>) -> Result<Vec<AggregateRow>> {
        self.query.table_rows(id).map_err(|e| self.read_error(e))
    }

    /// The task results of a sweep, page by page.
    pub fn export(&self, id: Option<&str>) -> Result<DbExport<'_>> {
        Ok(self.export_with_status(id)?.2)
    }

    /// The task results of a sweep, page by page, with its status (as
    /// this file reads) and parsed spec.
    pub fn export_with_status(&self, id: Option<&str>) -> Result<(SweepStatus, Arc<Sweep>, DbExport<'_>)> {
        let export = self.query.export(id).map_err(|e| self.read_error(e))?;
        let (status, sweep) = (self.as_read(export.status.clone()), export.shared_sweep());
        Ok((status, sweep, DbExport { query: &self.query, export, after: None, done: false }))
    }
}

/// A database error as read from a file nothing serves: the sweeps it
/// lists to choose from that are stored as running are `stopped`.
pub fn unserved(e: ksweep_coordinator::Error) -> ksweep_coordinator::Error {
    use ksweep_coordinator::Error;
    match e {
        Error::AmbiguousSweep(listing) => Error::AmbiguousSweep(listing.unserved()),
        Error::AmbiguousId(text, listing) => Error::AmbiguousId(text, listing.unserved()),
        e => e,
    }
}

/// A database file opened for writing (`rm`, `rename` with `--db`): one
/// writer per file, so nothing serves it meanwhile.
pub fn open_writer(path: &Path) -> Result<Store> {
    if !path.exists() {
        return Err(crate::failure::missing("--db", path));
    }
    Store::open(path).with_context(|| format!("--db: cannot open {}", path.display()))
}

/// The sweep `id` names in a file this process writes, with the state an
/// offline read gives it (running is `stopped`: nothing serves the file).
pub fn resolve_unserved(store: &Store, id: &str) -> Result<(SweepRecord, SweepStatus)> {
    let record = store.resolve(Some(id)).map_err(unserved)?;
    let status = unserved_status(ksweep_coordinator::status_of(&record));
    Ok((record, status))
}

/// A sweep's status as read from a file nothing serves: stored as
/// running, it is `stopped` (its run was interrupted; running it again
/// resumes it).
pub fn unserved_status(mut status: SweepStatus) -> SweepStatus {
    if status.state == SweepState::Running {
        status.state = SweepState::Stopped;
    }
    status
}

/// The pages of an offline export.
pub struct DbExport<'a> {
    query: &'a Query,
    export: Export,
    after: Option<ExportCursor>,
    done: bool,
}

impl DbExport<'_> {
    /// The next page of results, `None` after the last.
    pub fn next_page(&mut self) -> Result<Option<Vec<ResultRow>>> {
        if self.done {
            return Ok(None);
        }
        let page = self.query.export_page(&self.export, self.after.take(), EXPORT_PAGE)?;
        self.after = page.next;
        self.done = self.after.is_none();
        Ok((!page.rows.is_empty()).then_some(page.rows))
    }
}
