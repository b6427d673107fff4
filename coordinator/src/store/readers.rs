//! Read-only connections to a database file beside its writer. In WAL mode
//! each reads a snapshot of what was committed while the writer goes on
//! writing, so queries, exports and reports neither wait for the
//! scheduler's writes nor hold them up (they had shared the writer's
//! connection and its lock: four Parquet downloads pushed Poll's p99 to
//! 28.6 s). A bounded number, opened as first needed and kept.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};
use tokio::sync::Semaphore;

use super::{schema, ParsedSweeps, Store};
use crate::error::{Error, Result};

/// The readers of one database file.
pub struct Readers {
    path: PathBuf,
    /// Connections not in use.
    idle: Mutex<Vec<Store>>,
    /// A permit per connection in use.
    permits: Arc<Semaphore>,
    size: usize,
    /// The writer's parsed specs.
    parsed: Arc<ParsedSweeps>,
}

impl Readers {
    /// Up to `size` readers of `store`'s file; None for a store without
    /// one (in memory), whose connection alone sees its data.
    pub fn of(store: &Store, size: usize) -> Option<Readers> {
        let path = store.conn.path().filter(|p| !p.is_empty())?;
        let size = size.max(1);
        Some(Readers {
            path: PathBuf::from(path),
            idle: Mutex::new(Vec::new()),
            permits: Arc::new(Semaphore::new(size)),
            size,
            parsed: store.parsed.clone(),
        })
    }

    /// True while a reader is in use (a blocking task may outlive its caller).
    pub fn in_use(&self) -> bool {
        self.permits.available_permits() < self.size
    }

    /// Runs `f` on a reader, in one read transaction (one snapshot), on the
    /// blocking pool; waits for a free reader first.
    pub async fn read<T, F>(self: &Arc<Self>, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Store) -> Result<T> + Send + 'static,
    {
        let permit =
            self.permits.clone().acquire_owned().await.map_err(|_| Error::Internal("readers closed".into()))?;
        let readers = self.clone();
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let reader = match readers.idle.lock().unwrap_or_else(|p| p.into_inner()).pop() {
                Some(r) => r,
                None => readers.open()?,
            };
            let result = snapshot(&reader, f);
            // A reader whose transaction did not end cleanly is dropped.
            if result.as_ref().is_ok_and(|(_, clean)| *clean) {
                readers.idle.lock().unwrap_or_else(|p| p.into_inner()).push(reader);
            }
            result.map(|(value, _)| value)?
        })
        .await
        .map_err(|e| Error::Internal(format!("reader task: {e}")))?
    }

    fn open(&self) -> Result<Store> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&self.path, flags).map_err(schema::foreign)?;
        conn.busy_timeout(Duration::from_secs(10))?;
        let mut store = Store::on(conn);
        store.parsed = self.parsed.clone();
        Ok(store)
    }
}

/// `f` inside one read transaction. Returns its result and whether the
/// transaction ended cleanly.
fn snapshot<T>(reader: &Store, f: impl FnOnce(&Store) -> Result<T>) -> Result<(Result<T>, bool)> {
    reader.conn.execute_batch("BEGIN")?;
    let value = f(reader);
    let end = if value.is_ok() { "COMMIT" } else { "ROLLBACK" };
    let clean = reader.conn.execute_batch(end).is_ok();
    Ok((value, clean))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = r#"
        name = "readers"
        seed = 1
        starts = 2
        methods = ["w"]
        [[grid]]
        rule = [2, 1]
        dims = [2]
        n = [5]
    "#;

    #[test]
    fn an_in_memory_store_has_no_readers() {
        assert!(Readers::of(&Store::in_memory().unwrap(), 2).is_none());
    }

    /// A reader sees what the writer committed, and reads while the writer
    /// is inside a transaction of its own (the writer's lock is not needed).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn readers_see_commits_and_read_beside_an_open_write() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("r.db")).unwrap();
        let readers = Arc::new(Readers::of(&store, 2).unwrap());
        assert!(readers.read(|s| s.sweeps()).await.unwrap().is_empty());
        let sweep = sweep::Sweep::parse(SPEC).unwrap();
        store.insert_sweep(&sweep).unwrap();
        store.conn.execute_batch("BEGIN IMMEDIATE; UPDATE sweeps SET tasks_done = 7").unwrap();
        let seen = readers.read(|s| Ok(s.sweeps()?[0].tasks_done)).await.unwrap();
        assert_eq!(seen, 0, "the uncommitted write is not seen, and did not block the read");
        store.conn.execute_batch("COMMIT").unwrap();
        let seen = readers.read(|s| Ok(s.sweeps()?[0].tasks_done)).await.unwrap();
        assert_eq!(seen, 7);
        assert!(!readers.in_use());
        assert!(readers.read(|s| s.conn.execute_batch("DELETE FROM sweeps").map_err(Error::from)).await.is_err());
        assert_eq!(readers.read(|s| s.sweeps()).await.unwrap().len(), 1, "readers cannot write");
    }
}
