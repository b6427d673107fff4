//! Comparing runs: tables without timing, exports parsed, and the
//! embedded (`ksweep run`) reference a distributed sweep must equal.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::Value;

use crate::{parse_statuses, run_ksweep, Status, CLIENT_TIMEOUT};

/// A table's JSON rows without the timing fields (mean_micros, median_micros).
pub fn strip_timing(json: &str) -> Value {
    let mut v: Value =
        serde_json::from_str(json).unwrap_or_else(|e| panic!("table --format json is not JSON ({e}):\n{json}"));
    let rows = v.as_array_mut().unwrap_or_else(|| panic!("table JSON is not an array:\n{json}"));
    assert!(!rows.is_empty(), "the table has no rows");
    for row in rows {
        let obj = row.as_object_mut().expect("a table row is an object");
        for key in ["mean_micros", "median_micros"] {
            assert!(obj.remove(key).is_some(), "row lacks {key}: {obj:?}");
        }
    }
    v
}

/// The fields of a CSV line (double-quoted fields may hold commas).
pub fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                fields.last_mut().unwrap().push('"');
            }
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(String::new()),
            c => fields.last_mut().unwrap().push(c),
        }
    }
    fields
}

/// An export: its header's column names and its rows' fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Export {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Export {
    /// Parses `ksweep export --format csv` output.
    pub fn parse(text: &str) -> Export {
        let mut lines = text.lines();
        let header = lines.next().unwrap_or_else(|| panic!("empty export"));
        let columns = csv_fields(header);
        for name in ["sweep", "rule", "moves", "start", "method", "success", "micros"] {
            assert!(columns.iter().any(|c| c == name), "export header {header:?} lacks {name}");
        }
        let rows: Vec<Vec<String>> = lines.map(csv_fields).collect();
        for r in &rows {
            assert_eq!(r.len(), columns.len(), "row {r:?} vs header {columns:?}");
        }
        Export { columns, rows }
    }

    pub fn column(&self, name: &str) -> usize {
        self.columns.iter().position(|c| c == name).unwrap_or_else(|| panic!("no column {name} in {:?}", self.columns))
    }

    /// The rows without the columns that differ between two runs of the
    /// same sweep (micros, and which worker ran a task and on what:
    /// `worker` and the `worker_*` provenance; which sweep computed it,
    /// another where a run took stored results), as `|`-joined lines.
    pub fn without_micros(&self) -> Vec<String> {
        let dropped: Vec<usize> = (self.columns.iter().enumerate())
            .filter(|(_, name)| *name == "micros" || *name == "computed_by" || name.starts_with("worker"))
            .map(|(i, _)| i)
            .collect();
        let line = |r: &Vec<String>| {
            let kept = r.iter().enumerate().filter(|(i, _)| !dropped.contains(i));
            kept.map(|(_, f)| f.as_str()).collect::<Vec<_>>().join("|")
        };
        std::iter::once(line(&self.columns)).chain(self.rows.iter().map(line)).collect()
    }

    /// A row's task: every column before `success` (rule, dims, n, shape,
    /// method, start).
    pub fn task_key(&self, row: &[String]) -> String {
        row[..self.column("success")].join("|")
    }

    /// Rows whose success column is true.
    pub fn successes(&self) -> u64 {
        let i = self.column("success");
        self.rows.iter().filter(|r| r[i] == "true").count() as u64
    }

    /// Asserts exactly `tasks` rows, each task once.
    #[track_caller]
    pub fn assert_complete(&self, tasks: u64) {
        assert_eq!(self.rows.len() as u64, tasks, "export rows vs tasks_total");
        let mut seen = HashSet::new();
        for r in &self.rows {
            assert!(seen.insert(self.task_key(r)), "task exported twice: {r:?}");
        }
    }
}

/// Asserts two line lists are equal, showing the first difference.
#[track_caller]
pub fn assert_lines_equal(got: &[String], want: &[String], what: &str) {
    if let Some(i) = (0..got.len().min(want.len())).find(|&i| got[i] != want[i]) {
        panic!("{what}: first difference at line {i}:\n  got:  {}\n  want: {}", got[i], want[i]);
    }
    assert_eq!(got.len(), want.len(), "{what}: same prefix but {} lines vs {} expected", got.len(), want.len());
}

/// Asserts two tables (timing stripped) are equal, showing the first
/// differing row.
#[track_caller]
pub fn assert_tables_equal(got: &Value, want: &Value, what: &str) {
    let (g, w) = (got.as_array().expect("rows"), want.as_array().expect("rows"));
    if let Some(i) = (0..g.len().min(w.len())).find(|&i| g[i] != w[i]) {
        panic!("{what}: first differing row {i}:\n  got:  {}\n  want: {}", g[i], w[i]);
    }
    assert_eq!(g.len(), w.len(), "{what}: row counts differ");
}

/// What `ksweep run` (everything in one process) computed for a spec.
#[derive(Debug)]
pub struct Reference {
    pub status: Status,
    /// Table rows, timing stripped.
    pub table: Value,
    /// Export lines (fields `|`-joined), micros dropped.
    pub csv: Vec<String>,
}

/// The embedded run of `spec`, computed once per test binary and shared by
/// the tests that compare with it.
pub fn reference(spec: &str) -> Arc<Reference> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<Reference>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    // Held while computing: a second test wanting the same spec waits for it.
    let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(r) = cache.get(spec) {
        return r.clone();
    }
    let dir = tempfile::Builder::new().prefix("ksweep-e2e-embedded-").tempdir().expect("temp dir");
    let spec_path = dir.path().join("spec.toml");
    std::fs::write(&spec_path, spec).expect("write spec");
    let db = dir.path().join("A.db");
    let (spec_arg, db_arg) = (spec_path.to_str().unwrap(), db.to_str().unwrap());
    let d = dir.path();
    run_ksweep(d, &["run", spec_arg, "--db", db_arg, "--threads", "2"], Duration::from_secs(240)).ok();
    let status = parse_statuses(&run_ksweep(d, &["status", "--long", "--db", db_arg], CLIENT_TIMEOUT).ok().stdout);
    assert_eq!(status.len(), 1, "the embedded database holds one sweep");
    let status = status.into_iter().next().unwrap();
    assert_eq!(status.state, "done", "embedded run: {status:?}");
    assert_eq!(status.tasks_done, status.tasks_total, "embedded run: {status:?}");
    let table =
        strip_timing(&run_ksweep(d, &["table", "--db", db_arg, "--format", "json"], CLIENT_TIMEOUT).ok().stdout);
    let export =
        Export::parse(&run_ksweep(d, &["export", "--db", db_arg, "--format", "csv"], CLIENT_TIMEOUT).ok().stdout);
    export.assert_complete(status.tasks_total);
    let r = Arc::new(Reference { status, table, csv: export.without_micros() });
    cache.insert(spec.to_string(), r.clone());
    r
}
