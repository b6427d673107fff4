//! Files: what opening refuses (foreign, damaged, not a file), one writer
//! per file, read-only directories, and how SQLite is built.

use super::*;

#[test]
fn an_unknown_stored_state_is_an_error_not_a_default() {
    let mut store = Store::in_memory().unwrap();
    let (rec, _) = store.insert_sweep(&Sweep::parse(SPEC).unwrap()).unwrap();
    store.conn.execute("UPDATE sweeps SET state = 9 WHERE key = ?1", [rec.key.0]).unwrap();
    let e = store.resolve(None).unwrap_err();
    assert!(e.to_string().contains("unknown sweep state code 9"), "{e}");
    store.conn.execute("UPDATE sweeps SET state = 1 WHERE key = ?1", [rec.key.0]).unwrap();
    store.record(&[result(rec.key, 0, 0, 0, true, 1)]).unwrap();
    store.conn.execute("UPDATE tasks SET outcome = 7", []).unwrap();
    let e = store.results_page(rec.key, None, 10).unwrap_err();
    assert!(e.to_string().contains("unknown outcome code 7"), "{e}");
    let shards = vec![(ShardId(1), ShardPlan { config: 0, start_lo: 0, start_hi: 1 })];
    store.cut_shards(&[NewShards { sweep: rec.key, shards, cursor: Cursor::default() }]).unwrap();
    store.conn.execute("UPDATE shards SET state = 5", []).unwrap();
    let e = store.open_shards(rec.key).unwrap_err();
    assert!(e.to_string().contains("unknown shard state code 5"), "{e}");
}

#[test]
fn a_result_outside_the_grid_is_an_error_not_a_panic() {
    let mut store = Store::in_memory().unwrap();
    let sweep = Sweep::parse(SPEC).unwrap();
    let (rec, _) = store.insert_sweep(&sweep).unwrap();
    let e = store.record(&[result(rec.key, 17, 0, 0, true, 1)]).unwrap_err();
    assert!(e.to_string().contains("no configuration 17"), "{e}");
    // One in the file all the same (damaged, or written by hand).
    store.record(&[result(rec.key, 0, 0, 0, true, 1)]).unwrap();
    store.conn.execute("UPDATE sweep_tasks SET config = 17", []).unwrap();
    assert!(matches!(store.aggregates(&rec, &sweep), Err(Error::Corrupt(_))));
}

#[test]
fn foreign_files_are_refused_clearly_and_left_alone() {
    let dir = temp();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "not a database at all, just some text that is long enough to have a header").unwrap();
    let before = std::fs::read(&text).unwrap();
    for e in [Store::open_read_only(&text).err().unwrap(), Store::open(&text).err().unwrap()] {
        assert!(matches!(e, Error::NotADatabase(_)), "{e}");
    }
    assert_eq!(std::fs::read(&text).unwrap(), before, "untouched");
    let other = dir.path().join("other.db");
    rusqlite::Connection::open(&other).unwrap().execute_batch("CREATE TABLE t (x INTEGER);").unwrap();
    for e in [Store::open_read_only(&other).err().unwrap(), Store::open(&other).err().unwrap()] {
        assert!(matches!(e, Error::NotADatabase(_)), "{e}");
    }
    let tables: i64 = rusqlite::Connection::open(&other)
        .unwrap()
        .query_row("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(tables, 1, "no tables added to a foreign database");
}

#[test]
fn one_writer_per_file_and_the_error_names_it() {
    let dir = temp();
    let path = dir.path().join("s.db");
    let mut first = Store::open(&path).unwrap();
    first.insert_sweep(&Sweep::parse(SPEC).unwrap()).unwrap();
    let e = Store::open(&path).err().unwrap();
    let pid = format!("pid {}", std::process::id());
    assert!(matches!(&e, Error::Locked { holder, .. } if holder.contains(&pid)), "{e}");
    // Readers are welcome while it runs.
    assert_eq!(Store::open_read_only(&path).unwrap().sweeps().unwrap().len(), 1);
    drop(first);
    assert!(!lock::lock_path(&path).exists(), "the lock file goes with its holder");
    Store::open(&path).unwrap();
}

#[test]
fn a_new_file_left_empty_is_removed_and_a_used_one_kept() {
    let dir = temp();
    let path = dir.path().join("new.db");
    drop(Store::open(&path).unwrap());
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "nothing left behind: {left:?}");
    let mut store = Store::open(&path).unwrap();
    store.insert_sweep(&Sweep::parse(SPEC).unwrap()).unwrap();
    drop(store);
    assert!(path.exists());
    // An existing file is never removed, even empty of sweeps.
    let other = dir.path().join("existing.db");
    drop(Store::open(&other).unwrap());
    std::fs::write(&other, b"").unwrap();
    drop(Store::open(&other).unwrap());
    assert!(other.exists());
}

/// `--db` on a database in a directory this user cannot write: SQLite
/// cannot make its WAL index there (SQLITE_READONLY_DIRECTORY), so the read
/// path opens it immutable.
#[test]
fn a_database_in_a_read_only_directory_is_readable() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = temp();
    let path = dir.path().join("s.db");
    {
        let mut store = Store::open(&path).unwrap();
        store.insert_sweep(&Sweep::parse(SPEC).unwrap()).unwrap();
    }
    assert!(!dir.path().join("s.db-wal").exists(), "closed cleanly: no WAL beside it");
    released_database(&dir.path().join("old.db"), 2);
    let root = std::fs::metadata("/proc/self").unwrap().uid() == 0;
    if root {
        // Root writes anywhere: read as an unprivileged user instead.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::set_permissions(dir.path().join("old.db"), std::fs::Permissions::from_mode(0o644)).unwrap();
        let status = std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(std::env::current_exe().unwrap())
            .args(["--exact", "store::tests::files::read_only_directory_reader", "--ignored", "--quiet"])
            .env("KSWEEP_READ_ONLY_DB", &path)
            .status()
            .expect("setpriv runs the reader as nobody");
        assert!(status.success(), "the unprivileged reader failed");
    } else {
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
        let read = Store::open_read_only(&path).and_then(|s| s.sweeps());
        let old = Store::open_read_only(&dir.path().join("old.db")).and_then(|s| s.resolve(None));
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(read.unwrap().len(), 1);
        assert_eq!(old.unwrap().tasks_done, 2, "an older database is read through an upgraded copy");
    }
}

/// The reader half of the test above, run as another user.
#[test]
#[ignore = "run by a_database_in_a_read_only_directory_is_readable"]
fn read_only_directory_reader() {
    let path = std::env::var_os("KSWEEP_READ_ONLY_DB").expect("set by the parent test");
    let path = std::path::Path::new(&path);
    assert!(std::fs::write(path.with_extension("probe"), b"").is_err(), "the directory must be read-only here");
    let store = Store::open_read_only(path).unwrap();
    assert_eq!(store.sweeps().unwrap().len(), 1);
    // An older database here is read through an upgraded copy in memory.
    let old = path.with_file_name("old.db");
    let store = Store::open_read_only(&old).unwrap();
    assert_eq!(store.resolve(None).unwrap().tasks_done, 2);
    let version: i64 = rusqlite::Connection::open_with_flags(&old, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap()
        .query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, 2, "the file itself is left as it was");
}

#[test]
fn a_stored_id_answers_only_the_same_spec() {
    let mut store = Store::in_memory().unwrap();
    let sweep = Sweep::parse(SPEC).unwrap();
    let (rec, created) = store.insert_sweep(&sweep).unwrap();
    assert!(created);
    assert_eq!(store.insert_sweep(&sweep).unwrap(), (rec.clone(), false), "the same spec finds its sweep");
    // A forged row: another spec under this id (a truncated hash collides).
    store.conn.execute("UPDATE sweeps SET spec = 'name = \"forged\"' WHERE key = ?1", [rec.key.0]).unwrap();
    let e = store.insert_sweep(&sweep).unwrap_err();
    assert!(matches!(e, Error::IdCollision(ref id) if *id == rec.id), "{e}");
}

#[test]
fn a_damaged_database_is_refused_at_start() {
    let dir = temp();
    let path = dir.path().join("d.db");
    {
        let mut store = Store::open(&path).unwrap();
        let (rec, _) = store.insert_sweep(&Sweep::parse(SPEC).unwrap()).unwrap();
        let rows: Vec<ResultRecord> = (0..2000).map(|i| result(rec.key, 0, i, 0, true, 1)).collect();
        store.record(&rows).unwrap();
        store.conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
    }
    // Scribble over the last pages: results, not the schema's pages.
    let mut bytes = std::fs::read(&path).unwrap();
    let page = 4096;
    assert!(bytes.len() > 8 * page, "{} bytes", bytes.len());
    let end = bytes.len() - page;
    bytes[end - 2 * page..end].fill(0x5a);
    std::fs::write(&path, bytes).unwrap();
    let e = Store::open(&path).map(drop).unwrap_err();
    assert!(matches!(e, Error::Corrupt(_)), "{e}");
    assert!(e.to_string().contains("d.db: ") && e.to_string().contains("it is neither served nor read"), "{e}");
    // Offline queries (`--db`) check as the coordinator does: no counters
    // from a file whose results are damaged.
    let e = Store::open_read_only(&path).map(drop).unwrap_err();
    assert!(matches!(e, Error::Corrupt(_)), "{e}");
}

/// A directory or a device named as the database says what it is; a
/// missing file is "no such database file" for reading only.
#[test]
fn a_path_that_is_no_database_file_says_what_it_is() {
    let dir = temp();
    for open in [Store::open_read_only, Store::open] {
        let e = open(dir.path()).map(drop).unwrap_err().to_string();
        assert!(e.contains("is a directory, not a database file") && e.contains("ksweep.db"), "{e}");
        let e = open(Path::new("/dev/null")).map(drop).unwrap_err().to_string();
        assert_eq!(e, "/dev/null: is a device, not a database file");
    }
    let missing = dir.path().join("missing.db");
    let e = Store::open_read_only(&missing).map(drop).unwrap_err().to_string();
    assert!(e.ends_with("missing.db: no such database file"), "{e}");
    assert!(!missing.exists(), "reading creates nothing");
}

#[cfg(unix)]
#[test]
fn an_unwritable_shared_memory_file_is_refused_at_start() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp();
    let path = dir.path().join("s.db");
    drop(Store::open(&path).unwrap());
    let shm = dir.path().join("s.db-shm");
    std::fs::write(&shm, [0u8; 32768]).unwrap();
    std::fs::set_permissions(&shm, std::fs::Permissions::from_mode(0o444)).unwrap();
    if std::fs::OpenOptions::new().write(true).open(&shm).is_ok() {
        return; // root ignores file modes: nothing to test here
    }
    let e = Store::open(&path).map(drop).unwrap_err();
    assert!(e.to_string().contains("s.db-shm") && e.to_string().contains("not writable"), "{e}");
}

/// The SQLite this workspace builds is the one `.cargo/config.toml` asks
/// for: no process-wide page cache behind one mutex, no allocation
/// statistics (docs/performance/coordinator.md, "The writer's SQLite build"). A build
/// that lost the setting still works, only slower, so nothing else would
/// notice.
#[test]
fn sqlite_is_built_without_the_shared_page_cache_and_memory_statistics() {
    let store = Store::in_memory().unwrap();
    let options: Vec<String> = store
        .conn
        .prepare("PRAGMA compile_options")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert!(
        !options.iter().any(|o| o == "ENABLE_MEMORY_MANAGEMENT"),
        "SQLite built with ENABLE_MEMORY_MANAGEMENT (was LIBSQLITE3_FLAGS set otherwise?): {options:?}"
    );
    assert!(
        options.iter().any(|o| o == "DEFAULT_MEMSTATUS=0"),
        "SQLite built with memory statistics on (was LIBSQLITE3_FLAGS set otherwise?): {options:?}"
    );
}
