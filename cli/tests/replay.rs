//! Explicit starts in specs and `ksweep replay`, as a user runs them.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn ksweep(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ksweep")).args(args).output().expect("ksweep starts")
}

fn stdout(o: &Output) -> String {
    assert!(o.status.success(), "ksweep failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::File::create(&path).unwrap().write_all(text.as_bytes()).unwrap();
    path
}

const SPEC: &str = r#"
name = "explicit"
seed = 3
methods = ["w", "aw+"]
[[grid]]
rule = [2, 1]
dims = [2]
n = [7]
STARTS
"#;

#[test]
fn explicit_starts_run_exactly_and_files_equal_inline_lists() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "starts.txt", "# three starts\n6,6\n0 0\n\n2,4\n");
    let from_file = write(dir.path(), "file.toml", &SPEC.replace("STARTS", "starts_file = \"starts.txt\""));
    let inline = write(dir.path(), "inline.toml", &SPEC.replace("STARTS", "starts = [[6, 6], [0, 0], [2, 4]]"));
    let id = |path: &Path| {
        let text = stdout(&ksweep(&["check", path.to_str().unwrap()]));
        assert!(text.contains("tasks           6"), "{text}");
        text.lines().find(|l| l.starts_with("id")).unwrap().to_string()
    };
    assert_eq!(id(&from_file), id(&inline), "a start file is its list");

    let db = dir.path().join("k.db");
    let db = db.to_str().unwrap();
    stdout(&ksweep(&["run", from_file.to_str().unwrap(), "--db", db, "--threads", "2"]));
    let jsonl = stdout(&ksweep(&["export", "--db", db, "--format", "jsonl"]));
    let mut got: Vec<(String, String)> = jsonl
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let start: Vec<String> = v["start"].as_array().unwrap().iter().map(|x| x.to_string()).collect();
            (start.join(","), v["method"].as_str().unwrap().to_string())
        })
        .collect();
    got.sort();
    let mut expected: Vec<(String, String)> =
        ["6,6", "0,0", "2,4"].iter().flat_map(|s| ["w", "aw+"].map(|m| (s.to_string(), m.to_string()))).collect();
    expected.sort();
    assert_eq!(got, expected, "exactly the listed starts, every method");
}

#[test]
fn bad_starts_are_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("starts = [[6, 6], [0, 1]]", "grid[0].starts[1]: [0, 1] is not an eligible start on board 7x7"),
        ("starts = [[6, 6], [7, 0]]", "grid[0].starts[1]: [7, 0] coordinate 0 is 7, off the board (side 7"),
        ("starts = [[6, 6], [6, 6]]", "grid[0].starts[1]: [6, 6] repeats starts[0]"),
        ("starts_file = \"missing.txt\"", "grid[0].starts_file: cannot read \"missing.txt\""),
    ];
    for (starts, expected) in cases {
        let spec = write(dir.path(), "bad.toml", &SPEC.replace("STARTS", starts));
        let o = ksweep(&["check", spec.to_str().unwrap()]);
        assert!(!o.status.success(), "{starts} was accepted");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(expected), "{err:?} lacks {expected:?}");
    }
}

/// Replay-format text for the vendored 2D flags of one rule, N <= `max_n`.
fn replay_text(rule: &str, max_n: u32) -> String {
    let gz = std::fs::File::open(repo().join("data/report-2d-flags.tsv.gz")).unwrap();
    let mut text = format!(
        "# experiment: test-{rule}\n# source: data/report-2d-flags.tsv.gz\n# program: -\n# rule: {rule}\n\
         # dims: 2\n# moves: canonical\nn\tmethod\tstart\tsuccess\tmicros\n"
    );
    for line in BufReader::new(flate2::read::GzDecoder::new(gz)).lines() {
        let line = line.unwrap();
        let f: Vec<&str> = line.split('\t').collect();
        if f[0] == rule && f[2].parse::<u32>().is_ok_and(|n| n <= max_n) {
            text.push_str(&format!("{}\t{}\t{}\t{}\t{}\n", f[2], f[3], f[4], f[5], 100));
        }
    }
    text
}

#[test]
fn replay_reproduces_published_flags_and_names_a_difference() {
    let dir = tempfile::tempdir().unwrap();
    let text = replay_text("4,1", 14);
    let rows = text.lines().count() - 7;
    assert!(rows >= 4000, "{rows} rows");
    let good = write(dir.path(), "good.tsv", &text);
    let out = stdout(&ksweep(&["replay", good.to_str().unwrap(), "--threads", "2"]));
    assert!(out.contains(&format!("1 experiments: {rows} of {rows} published flags reproduced")), "{out}");
    assert!(out.contains(&format!("running {rows} tasks here")), "says what it ran: {out}");
    assert!(out.contains("(their machine) against ours") && out.contains("machines differ"), "{out}");
    assert!(out.contains("     14  aw+ "), "a row per (N, method): {out}");

    // Flip one published flag: the replay must say where and fail.
    let (head, tail) = text.split_at(text.find("\n14\tw\t").unwrap() + 1);
    let line_end = tail.find('\n').unwrap();
    let line = &tail[..line_end];
    let flipped = if line.ends_with("\t1\t100") {
        line.replace("\t1\t100", "\t0\t100")
    } else {
        line.replace("\t0\t100", "\t1\t100")
    };
    let start = line.split('\t').nth(2).unwrap();
    let bad = write(dir.path(), "bad.tsv", &format!("{head}{flipped}{}", &tail[line_end..]));
    let o = ksweep(&["replay", bad.to_str().unwrap(), "--threads", "2"]);
    assert!(!o.status.success(), "a differing flag must fail the replay");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains(&format!("differs at {start}")), "{out}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("published flags were not reproduced"));
}

/// Runs `ksweep replay` on `files` with `options`; asserts every flag is
/// reproduced.
fn replay_all(files: &[PathBuf], options: &[&str]) {
    let mut args: Vec<String> = ["replay", "--show", "20"].iter().chain(options).map(|s| s.to_string()).collect();
    args.extend(files.iter().map(|p| p.to_string_lossy().into_owned()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = ksweep(&args);
    let out = String::from_utf8_lossy(&o.stdout);
    println!("{out}");
    assert!(o.status.success(), "{}\n{out}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains(&format!("{} experiments: ", files.len())), "{out}");
}

/// Every replay file in data/replay/ through `ksweep replay`: every
/// published flag reproduced. Release tier, sized for CI: boards up to 10^5
/// cells replay every published start; boards up to 2 x 10^6 cells their
/// first 2 starts per (N, method); larger boards are left out, except the
/// (1,2,2) 3D boards of N = 400..550, which replay their first start.
#[test]
#[cfg_attr(not(optimized), ignore = "slow tier: runs in optimised builds (--release, --profile checked)")]
fn every_published_experiment_replays() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join("data/replay"))
        .expect("data/replay")
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".tsv.gz"))
        .collect();
    files.sort();
    assert!(files.len() >= 60, "replay files: {files:?}");
    let (big, rest): (Vec<PathBuf>, Vec<PathBuf>) =
        files.into_iter().partition(|p| p.file_name().unwrap().to_string_lossy().starts_with("r221-"));
    replay_all(&rest, &["--sample", "2", "--sample-above", "100000", "--max-cells", "2000000"]);
    replay_all(&big, &["--sample", "1", "--max-cells", "200000000"]);
}
