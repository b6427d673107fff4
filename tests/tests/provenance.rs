//! Provenance as a user reads it: `ksweep run` ends with the sweep's wall
//! and CPU time, and `status` and `report` (HTML and Markdown) name when
//! it ran and the build and machine of the worker that ran it. A sweep of
//! a database older than schema version 3 says its times were not
//! recorded, never 1970.

use std::path::Path;
use std::time::Duration;

use ksweep_e2e::*;
use ksweep_proto::build::Provenance;

const LIMIT: Duration = Duration::from_secs(120);

/// The value of a `status` line (`label   value`), or a panic naming it.
fn line<'a>(text: &'a str, label: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.strip_prefix(label).filter(|rest| rest.starts_with("  ")).map(str::trim))
        .unwrap_or_else(|| panic!("no {label:?} line in:\n{text}"))
}

/// `2026-03-01 14:02:11 UTC`: a date of this century, in UTC.
fn is_utc_time(text: &str) -> bool {
    let b = text.as_bytes();
    text.len() == 23 && text.starts_with("20") && text.ends_with(" UTC") && b[4] == b'-' && b[10] == b' '
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn run_status_and_report_say_when_a_sweep_ran_and_what_ran_it() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("tiny.toml");
    std::fs::write(&spec, SPEC_TINY).unwrap();
    let db = dir.path().join("prov.db");
    let (spec, db) = (spec.to_str().unwrap(), db.to_str().unwrap());
    let here = Provenance::here();
    let version = env!("CARGO_PKG_VERSION");

    let run = run_ksweep(dir.path(), &["run", spec, "--db", db, "--threads", "2"], LIMIT).ok();
    for label in ["wall time", "CPU time"] {
        let value = line(&run.stdout, label);
        assert!(value.ends_with(" ms") || value.ends_with(" s"), "{label}: {value}");
    }

    let status = run_ksweep(dir.path(), &["status", "e2e-tiny", "--db", db], LIMIT).ok().stdout;
    for label in ["submitted", "started", "finished"] {
        assert!(is_utc_time(line(&status, label)), "{label}: {}", line(&status, label));
    }
    assert!(line(&status, "started") <= line(&status, "finished"), "{status}");
    assert!(!status.contains("not recorded") && !status.contains("so far"), "{status}");
    let worker = line(&status, "worker");
    assert!(worker.contains(&format!("ksweep {version} (")), "this build's version: {worker}");
    assert!(worker.contains(&format!(" on {} ({}", here.host, here.cpu)), "this machine: {worker}");
    let tasks: u64 = worker.split_once(": ").and_then(|(_, r)| r.split(' ').next()).unwrap().parse().unwrap();
    assert_eq!(tasks, 4 * 6 * 2, "every task of the sweep, one worker: {worker}");

    let html_path = dir.path().join("report.html");
    run_ksweep(dir.path(), &["report", "--db", db, "-o", html_path.to_str().unwrap()], LIMIT).ok();
    let html = read(&html_path);
    let section = html.split_once("<section id=\"provenance\">").expect("a provenance section").1;
    let section = section.split_once("</section>").unwrap().0;
    for want in [
        format!("<td>submitted</td><td>{}</td>", line(&status, "submitted")),
        format!("<td>finished</td><td>{}</td>", line(&status, "finished")),
        format!("<td>wall time</td><td>{}</td>", line(&status, "wall time")),
        format!("<td>CPU time</td><td>{}</td>", line(&status, "CPU time")),
        format!("<td>{}</td><td>{}</td>", html_escape(&here.host), html_escape(&here.cpu)),
        format!("<td>{version} ("),
        format!("<td class=\"num\">{tasks}</td>"),
    ] {
        assert!(section.contains(&want), "{want} not in the report's provenance:\n{section}");
    }

    let md_path = dir.path().join("report.md");
    run_ksweep(dir.path(), &["report", "--db", db, "-o", md_path.to_str().unwrap()], LIMIT).ok();
    let md = read(&md_path);
    let section = md.split_once("## Provenance").expect("a provenance section").1;
    assert!(section.contains(&format!("| started | {} |", line(&status, "started"))), "{section}");
    assert!(section.contains(&format!(" | {version} (")), "{section}");
    assert!(section.contains(&format!(" | {} | ", here.host)), "{section}");
}

#[test]
fn times_an_older_database_did_not_record_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ksweep.db");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/schema/v2.db");
    std::fs::copy(fixture, &db).unwrap();
    let db = db.to_str().unwrap();
    let status = run_ksweep(dir.path(), &["status", "--long", "--db", db], LIMIT).ok().stdout;
    for label in ["started", "finished", "wall time"] {
        assert_eq!(line(&status, label), "not recorded", "{status}");
    }
    assert!(is_utc_time(line(&status, "submitted")), "{status}");
    assert!(!status.contains("1970"), "{status}");

    let html_path = dir.path().join("old.html");
    run_ksweep(dir.path(), &["report", "--db", db, "-o", html_path.to_str().unwrap()], LIMIT).ok();
    let html = read(&html_path);
    assert!(html.contains("<td>finished</td><td>not recorded</td>"), "the report says so too");
    assert!(html.contains("<td>embedded-22308</td><td>not recorded</td>"), "its worker's build too");
    assert!(!html.contains("1970"));
}

/// Text as HTML shows it (a CPU model may hold `(R)`, never markup here).
fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}
