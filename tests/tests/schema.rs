//! Every schema version's fixture database (`tests/fixtures/schema/`, see
//! its README.md) opens with the `ksweep` under test: upgraded in place
//! after a backup, then printing the tables and export its own release
//! printed from it. A newer database is refused by name.

use std::path::{Path, PathBuf};
use std::time::Duration;

use ksweep_e2e::*;

const LIMIT: Duration = Duration::from_secs(60);

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/schema")
}

/// The schema versions with a fixture: `v<N>.db`.
fn versions() -> Vec<u32> {
    let mut found: Vec<u32> = std::fs::read_dir(fixtures())
        .expect("the fixture directory")
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_prefix('v')?.strip_suffix(".db")?.parse().ok()
        })
        .collect();
    found.sort();
    found
}

/// JSON table keys a later build renamed (docs/export.md): the old name's
/// value must be under the new one. `impossible` read as a verdict beside
/// `open_tour`; it only ever meant that nothing was run.
const RENAMED: &[(&str, &str)] = &[("impossible", "not_run")];

/// Every field of `want` is in `got` with the same value (a newer build may
/// add fields or rename one in RENAMED, never change or drop one). A tour
/// verdict the fixture left `unknown` may be decided by a newer build (the
/// atlas of leaper tours), never the other way.
fn assert_contains(got: &serde_json::Value, want: &serde_json::Value, at: &str) {
    use serde_json::Value;
    match (got, want) {
        (Value::Object(g), Value::Object(w)) => {
            for (k, wv) in w {
                let k = RENAMED.iter().find(|(old, _)| old == k).map_or(k.as_str(), |(_, new)| new);
                let gv = g.get(k).unwrap_or_else(|| panic!("{at}.{k} is missing"));
                let verdict = k == "open_tour" || k == "closed_tour";
                if verdict && wv == "unknown" && (gv == "exists" || gv == "impossible") {
                    continue;
                }
                assert_contains(gv, wv, &format!("{at}.{k}"));
            }
        }
        (Value::Array(g), Value::Array(w)) => {
            assert_eq!(g.len(), w.len(), "{at}: length");
            for (i, (gv, wv)) in g.iter().zip(w).enumerate() {
                assert_contains(gv, wv, &format!("{at}[{i}]"));
            }
        }
        _ => assert_eq!(got, want, "{at}"),
    }
}

/// The columns of `want`'s CSV, as `got` has them, row for row.
fn assert_csv_columns(got: &str, want: &str) {
    let split = |text: &str| -> Vec<Vec<String>> { text.lines().map(csv_fields).collect() };
    let (got, want) = (split(got), split(want));
    assert_eq!(got.len(), want.len(), "export rows");
    let columns: Vec<usize> = want[0]
        .iter()
        .map(|name| got[0].iter().position(|g| g == name).unwrap_or_else(|| panic!("export lost column {name}")))
        .collect();
    for (i, (g, w)) in got.iter().zip(&want).enumerate().skip(1) {
        let picked: Vec<&String> = columns.iter().map(|&c| &g[c]).collect();
        assert_eq!(picked, w.iter().collect::<Vec<_>>(), "export row {i}");
    }
}

/// One CSV line's fields (RFC 4180 quoting; the exports put no line break
/// inside a field).
fn csv_fields(line: &str) -> Vec<String> {
    let (mut fields, mut field, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut field)),
            _ => field.push(c),
        }
    }
    fields.push(field);
    fields
}

#[test]
fn every_released_schema_version_upgrades_and_reads_the_same() {
    let versions = versions();
    assert!(versions.contains(&1) && versions.contains(&2), "fixtures of versions 1 and 2, found {versions:?}");
    for v in versions {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("ksweep.db");
        std::fs::copy(fixtures().join(format!("v{v}.db")), &db).unwrap();
        let db_arg = db.to_str().unwrap();
        let info = run_ksweep(dir.path(), &["db", "info", "--db", db_arg], LIMIT).ok();
        assert!(info.stdout.contains(&format!("schema version  {v} (older")), "{}", info.stdout);

        let up = run_ksweep(dir.path(), &["db", "upgrade", "--db", db_arg], LIMIT).ok();
        assert!(up.stdout.contains(&format!("from schema version {v} to")), "{}", up.stdout);
        assert!(up.stderr.contains("database schema version"), "each step is logged: {}", up.stderr);
        let backup = dir.path().join(format!("ksweep.db.schema-v{v}.bak"));
        let kept = run_ksweep(dir.path(), &["db", "info", "--db", backup.to_str().unwrap()], LIMIT).ok();
        assert!(kept.stdout.contains(&format!("schema version  {v} ")), "the backup is as it was: {}", kept.stdout);
        let again = run_ksweep(dir.path(), &["db", "upgrade", "--db", db_arg], LIMIT).ok();
        assert!(again.stdout.contains("already at schema version"), "{}", again.stdout);

        let table = run_ksweep(dir.path(), &["table", "--db", db_arg, "--format", "json"], LIMIT).ok();
        let want: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(fixtures().join(format!("v{v}.table.json"))).unwrap())
                .unwrap();
        assert_contains(&serde_json::from_str(&table.stdout).unwrap(), &want, &format!("v{v} table"));
        let export = run_ksweep(dir.path(), &["export", "--db", db_arg, "--format", "csv"], LIMIT).ok();
        let want = std::fs::read_to_string(fixtures().join(format!("v{v}.export.csv"))).unwrap();
        assert_csv_columns(&export.stdout, &want);
    }
}

#[test]
fn a_read_upgrades_an_older_file_too() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ksweep.db");
    std::fs::copy(fixtures().join("v1.db"), &db).unwrap();
    let out = run_ksweep(dir.path(), &["table", "--db", db.to_str().unwrap()], LIMIT).ok();
    assert!(out.stderr.contains("upgrading the database from schema version 1"), "{}", out.stderr);
    assert!(dir.path().join("ksweep.db.schema-v1.bak").exists());
}

#[test]
fn a_newer_database_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ksweep.db");
    std::fs::copy(fixtures().join("v2.db"), &db).unwrap();
    let db_arg = db.to_str().unwrap();
    run_ksweep(dir.path(), &["db", "upgrade", "--db", db_arg], LIMIT).ok();
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(
            "PRAGMA user_version = 99; UPDATE meta SET value = 99 WHERE key = 'schema';
             UPDATE about SET value = '9.9.9 (abcdef)' WHERE key = 'written_by';",
        )
        .unwrap();
    let needles = ["schema version 99", "ksweep 9.9.9 (abcdef), which wrote it"];
    run_ksweep(dir.path(), &["table", "--db", db_arg], LIMIT).fails_with(&needles);
    let spec = fixtures().join("spec-v2.toml");
    run_ksweep(dir.path(), &["run", spec.to_str().unwrap(), "--db", db_arg], LIMIT).fails_with(&needles);
    run_ksweep(dir.path(), &["db", "upgrade", "--db", db_arg], LIMIT).fails_with(&needles);
}

/// Every fixture passes the checks `ksweep merge` applies to an input's
/// results (those a coordinator applies to a worker's): a file any release
/// wrote merges. Each is merged beside a small run of boards none has.
#[test]
fn every_released_schema_version_merges() {
    let dir = tempfile::tempdir().unwrap();
    let spec =
        "name = \"other\"\nseed = 1\nstarts = 2\nmethods = [\"w\"]\n[[grid]]\nrule = [3, 1]\ndims = [2]\nn = [8]\n";
    std::fs::write(dir.path().join("other.toml"), spec).unwrap();
    run_ksweep_in(dir.path(), &["run", "other.toml", "--db", "other.db"], LIMIT).ok();
    for v in versions() {
        let (input, output) = (format!("v{v}.db"), format!("merged-v{v}.db"));
        std::fs::copy(fixtures().join(&input), dir.path().join(&input)).unwrap();
        let merged = run_ksweep_in(dir.path(), &["merge", &input, "other.db", "-o", &output], LIMIT).ok();
        assert!(merged.stdout.contains("0 conflicting"), "{}", merged.stdout);
    }
}
