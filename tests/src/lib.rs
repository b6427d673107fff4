//! Helpers of the end-to-end tests: `ksweep` child processes that are always
//! killed (even when a test panics), client commands bounded in time, status
//! polling with deadlines, and the embedded (`ksweep run`) reference results
//! the distributed runs are compared with.
//!
//! Every service writes its stderr (RUST_LOG=info) to a file in the test's
//! temporary directory; when a test fails, the [`Cluster`] prints them all.

pub mod cgroup;

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, OnceLock};
use std::thread::sleep;
use std::time::{Duration, Instant};

use serde_json::Value;
use tempfile::TempDir;

/// The binary under test: `KSWEEP_BIN`, or the `ksweep` beside this test's
/// own executable (`target/<profile>/`), which `cargo test --workspace`
/// builds with it. Refused when missing or older than a source file of the
/// workspace (`cargo test -p ksweep-e2e` alone does not build it), so a
/// stale binary is never what passes.
pub static KSWEEP: LazyLock<PathBuf> = LazyLock::new(|| {
    if let Some(bin) = std::env::var_os("KSWEEP_BIN") {
        return PathBuf::from(bin);
    }
    let exe = std::env::current_exe().expect("the test's own path");
    // target/<profile>/deps/<test>-<hash>
    let bin = exe.parent().and_then(Path::parent).expect("target/<profile>").join("ksweep");
    let built = std::fs::metadata(&bin).and_then(|m| m.modified()).unwrap_or_else(|e| {
        panic!("{}: {e}; build it (cargo test --workspace, or cargo build -p ksweep) or set KSWEEP_BIN", bin.display())
    });
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root");
    if let Some(newer) = newest_source(workspace).filter(|(at, _)| *at > built) {
        panic!(
            "{} is older than {}: build it again (cargo test --workspace, or cargo build -p ksweep)",
            bin.display(),
            newer.1.display()
        );
    }
    bin
});

/// The most recently changed `.rs` file under the workspace's crates.
fn newest_source(workspace: &Path) -> Option<(std::time::SystemTime, PathBuf)> {
    let mut newest: Option<(std::time::SystemTime, PathBuf)> = None;
    let mut dirs: Vec<PathBuf> = ["tour", "sweep", "figures", "proto", "coordinator", "worker", "standalone", "cli"]
        .iter()
        .map(|c| workspace.join(c).join("src"))
        .collect();
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let at = entry.metadata().and_then(|m| m.modified()).ok();
                if let Some(at) = at.filter(|at| newest.as_ref().is_none_or(|(n, _)| at > n)) {
                    newest = Some((at, path));
                }
            }
        }
    }
    newest
}

/// A sweep of a few seconds of CPU: the (2,1) knight on N^2 and N^3 boards,
/// N = 5..40, 30 starts, five methods (one of them random, seeded): 10,690
/// tasks, the late (large 3D) configurations the most expensive.
pub const SPEC_MEDIUM: &str = r#"
name = "e2e-medium"
seed = 7
starts = 30
methods = ["w", "w+", "aw", "aw+", "wr"]

[[grid]]
rule = [2, 1]
dims = [2, 3]
n_range = { from = 5, to = 40 }
"#;

/// A tiny sweep (milliseconds of work).
pub const SPEC_TINY: &str = r#"
name = "e2e-tiny"
seed = 11
starts = 6
methods = ["w", "aw+"]

[[grid]]
rule = [2, 1]
dims = [2]
n = [5, 6, 7, 8]
"#;

/// Variables the binary reads that must not leak in from the caller's shell.
const SCRUB: &[&str] =
    &["KSWEEP_TOKEN", "KSWEEP_COORDINATOR", "KSWEEP_TLS_CA", "KSWEEP_TLS_CERT", "KSWEEP_TLS_KEY", "RUST_LOG"];

/// How long one client command (submit, status, table, export...) may take.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(60);

static SEQ: AtomicUsize = AtomicUsize::new(0);

fn ksweep_command(args: &[String]) -> Command {
    let mut c = Command::new(&*KSWEEP);
    c.args(args);
    scrubbed(c)
}

/// `c` with no stdin and none of the [`SCRUB`] variables.
fn scrubbed(mut c: Command) -> Command {
    c.stdin(Stdio::null());
    for v in SCRUB {
        c.env_remove(v);
    }
    c
}

/// The last `lines` lines of a text.
pub fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    let from = all.len().saturating_sub(lines);
    let mut out = String::new();
    if from > 0 {
        out.push_str(&format!("[... {from} earlier lines]\n"));
    }
    out.push_str(&all[from..].join("\n"));
    out
}

/// Log text without the ANSI colour codes tracing puts in.
pub fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // ESC [ ... letter
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn read_lossy(path: &Path) -> String {
    std::fs::read(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_else(|e| format!("(cannot read {}: {e})", path.display()))
}

/// What a finished client command printed.
#[derive(Debug)]
pub struct Output {
    pub command: String,
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    /// Asserts exit 0.
    #[track_caller]
    pub fn ok(self) -> Output {
        assert!(
            self.status.success(),
            "`{}` failed ({}):\nstderr: {}\nstdout: {}",
            self.command,
            self.status,
            self.stderr,
            tail(&self.stdout, 20)
        );
        self
    }

    /// Asserts a non-zero exit whose stderr contains every needle.
    #[track_caller]
    pub fn fails_with(self, needles: &[&str]) -> Output {
        assert!(
            !self.status.success(),
            "`{}` should have failed but exited 0:\nstdout: {}\nstderr: {}",
            self.command,
            tail(&self.stdout, 20),
            self.stderr
        );
        for n in needles {
            assert!(
                self.stderr.contains(n),
                "`{}` failed as expected, but its stderr lacks {n:?}:\n{}",
                self.command,
                self.stderr
            );
        }
        self
    }

    /// The last non-empty line of stdout.
    pub fn last_line(&self) -> String {
        self.stdout.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string()
    }
}

/// Runs `ksweep args` to completion in `dir` (stdout and stderr go to files
/// there), killing it and failing the test if it outlives `timeout`.
pub fn run_ksweep(dir: &Path, args: &[&str], timeout: Duration) -> Output {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    let out_path = dir.join(format!("cmd-{n}.stdout"));
    let err_path = dir.join(format!("cmd-{n}.stderr"));
    let command = format!("ksweep {}", args.join(" "));
    let mut child = ksweep_command(&args)
        .stdout(File::create(&out_path).expect("create stdout file"))
        .stderr(File::create(&err_path).expect("create stderr file"))
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start `{command}`: {e}"));
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait().expect("try_wait") {
            Some(status) => break status,
            None if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "`{command}` did not finish within {timeout:?}; its stderr:\n{}",
                    tail(&read_lossy(&err_path), 40)
                );
            }
            None => sleep(Duration::from_millis(15)),
        }
    };
    Output { command, status, stdout: read_lossy(&out_path), stderr: read_lossy(&err_path) }
}

/// [`run_ksweep`] with the file names among `args` (`*.toml`, `*.db`)
/// taken in `dir`, as a user in that directory would type them.
pub fn run_ksweep_in(dir: &Path, args: &[&str], timeout: Duration) -> Output {
    let args: Vec<String> = args
        .iter()
        .map(|a| match a.ends_with(".toml") || a.ends_with(".db") {
            true => dir.join(a).to_string_lossy().into_owned(),
            false => a.to_string(),
        })
        .collect();
    run_ksweep(dir, &args.iter().map(String::as_str).collect::<Vec<_>>(), timeout)
}

/// A long-running `ksweep` child (coordinator or worker). Dropping it kills
/// it (SIGKILL) and reaps it.
pub struct Proc {
    pub name: String,
    pub log: PathBuf,
    child: Child,
    exited: Option<ExitStatus>,
    reported: bool,
}

impl Proc {
    /// Starts `ksweep args` with RUST_LOG=info, stderr to `dir/name.log`.
    pub fn spawn(name: &str, dir: &Path, args: &[String]) -> Proc {
        Proc::start(name, dir, ksweep_command(args))
    }

    /// Starts `ksweep args` inside the cgroup whose `cgroup.procs` file is
    /// `procs`: a shell moves itself in, then becomes ksweep, so ksweep
    /// runs under the cgroup's limits from its first instruction.
    pub fn spawn_in_cgroup(name: &str, dir: &Path, procs: &Path, args: &[String]) -> Proc {
        let mut c = Command::new("sh");
        c.arg("-c").arg(r#"echo $$ > "$0" && exec "$@""#).arg(procs).arg(&*KSWEEP).args(args);
        Proc::start(name, dir, scrubbed(c))
    }

    fn start(name: &str, dir: &Path, mut command: Command) -> Proc {
        let log = dir.join(format!("{name}.log"));
        let child = command
            .env("RUST_LOG", "info")
            .stdout(File::create(dir.join(format!("{name}.stdout"))).expect("create stdout file"))
            .stderr(File::create(&log).expect("create log file"))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        Proc { name: name.to_string(), log, child, exited: None, reported: false }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its stderr so far, without colour codes.
    pub fn log_text(&self) -> String {
        plain(&read_lossy(&self.log))
    }

    /// Waits until its log satisfies `pred`; returns it.
    #[track_caller]
    pub fn wait_for_log(&self, timeout: Duration, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let log = self.log_text();
            if pred(&log) {
                return log;
            }
            assert!(Instant::now() < deadline, "timed out after {timeout:?} waiting for the log of {}", self.name);
            sleep(Duration::from_millis(50));
        }
    }

    /// Its stdout so far.
    pub fn stdout_text(&self) -> String {
        read_lossy(&self.log.with_file_name(format!("{}.stdout", self.name)))
    }

    /// The exit status, if it has exited.
    pub fn try_exit(&mut self) -> Option<ExitStatus> {
        if self.exited.is_none() {
            self.exited = self.child.try_wait().expect("try_wait");
        }
        self.exited
    }

    /// Waits up to `timeout` for it to exit.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(s) = self.try_exit() {
                return Some(s);
            }
            if Instant::now() >= deadline {
                return None;
            }
            sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL (what `Child::kill` sends on Unix), then reap.
    pub fn kill(&mut self) {
        if self.try_exit().is_none() {
            let _ = self.child.kill();
            self.exited = self.child.wait().ok();
        }
    }

    /// SIGTERM, through kill(1) so the test needs no libc bindings.
    pub fn term(&mut self) {
        assert!(self.try_exit().is_none(), "{} already exited", self.name);
        let status = Command::new("kill").args(["-TERM", &self.pid().to_string()]).status().expect("run kill -TERM");
        assert!(status.success(), "kill -TERM {} failed", self.pid());
    }
}

impl Proc {
    /// Its name, exit and the tail of its log, for a failure report.
    fn report(&mut self) -> String {
        self.reported = true;
        format!(
            "\n===== {} (exit {:?}), stderr {} =====\n{}\n",
            self.name,
            self.exited,
            self.log.display(),
            tail(&self.log_text(), 120)
        )
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
        // A failing test shows what the child said (unless a Cluster did).
        if std::thread::panicking() && !self.reported {
            let report = self.report();
            eprintln!("{report}");
        }
    }
}

/// One sweep's status, as `ksweep status` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub id: String,
    pub state: String,
    pub tasks_done: u64,
    pub tasks_total: u64,
    pub successes: u64,
    pub shards_failed: u64,
}

fn field<'a>(block: &'a str, key: &str) -> &'a str {
    block
        .lines()
        .find_map(|l| l.strip_prefix(key).filter(|rest| rest.starts_with(' ')).map(str::trim))
        .unwrap_or_else(|| panic!("no {key:?} line in status output:\n{block}"))
}

fn number(text: &str, what: &str) -> u64 {
    text.trim().parse().unwrap_or_else(|_| panic!("{what}: {text:?} is not a number"))
}

/// Parses `ksweep status` output: one block per sweep, blank-line separated;
/// "no sweeps" is none.
pub fn parse_statuses(text: &str) -> Vec<Status> {
    if text.trim() == "no sweeps" {
        return Vec::new();
    }
    text.split("\n\n")
        .filter(|b| !b.trim().is_empty())
        .map(|block| {
            let sweep = field(block, "sweep");
            let tasks = field(block, "tasks");
            let (done, rest) = tasks.split_once(" / ").unwrap_or_else(|| panic!("bad tasks line {tasks:?}"));
            let total = rest.split_whitespace().next().unwrap_or("");
            Status {
                id: sweep.split_whitespace().next().unwrap_or("").to_string(),
                state: field(block, "state").to_string(),
                tasks_done: number(done, "tasks done"),
                tasks_total: number(total, "tasks total"),
                successes: number(field(block, "successes"), "successes"),
                shards_failed: number(field(block, "shards failed"), "shards failed"),
            }
        })
        .collect()
}

/// The port in a coordinator's `listening on 127.0.0.1:PORT` line, once
/// it has printed it.
pub fn listening_port(stdout: &str) -> Option<u16> {
    let line = stdout.lines().find_map(|l| l.strip_prefix("listening on "))?;
    let addr: std::net::SocketAddr =
        line.trim().parse().unwrap_or_else(|e| panic!("listening on {line:?}: not an address ({e})"));
    Some(addr.port())
}

/// Paths of the files [`write_test_pki`] wrote.
pub struct TestPki {
    pub ca: String,
    pub cert: String,
    pub key: String,
}

/// Writes `ca.pem` (a fresh CA), and `server.pem` / `server-key.pem` (a
/// certificate it issued for 127.0.0.1 and localhost) into `dir`.
pub fn write_test_pki(dir: &Path) -> TestPki {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(DnType::CommonName, "ksweep test CA");
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().expect("CA key")).expect("CA certificate");
    let key = KeyPair::generate().expect("server key");
    let params = CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()]).expect("params");
    let cert = params.signed_by(&key, &ca).expect("server certificate");
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write PEM");
        path.display().to_string()
    };
    TestPki {
        ca: write("ca.pem", ca.pem()),
        cert: write("server.pem", cert.pem()),
        key: write("server-key.pem", key.serialize_pem()),
    }
}

/// A coordinator and its workers, on loopback, in a temporary directory.
/// Dropping it kills every child; if the test is failing, it prints their
/// logs.
pub struct Cluster {
    pub dir: TempDir,
    pub port: u16,
    pub db: PathBuf,
    pub token: Option<String>,
    /// The CA file clients and workers trust, when the coordinator serves TLS.
    pub tls_ca: Option<PathBuf>,
    coordinator_flags: Vec<String>,
    pub coordinator: Option<Proc>,
    pub workers: Vec<Proc>,
    /// Children that are gone (killed, restarted) but whose logs matter.
    retired: Vec<Proc>,
    coordinator_runs: usize,
    worker_count: usize,
}

impl Cluster {
    /// A coordinator with these extra flags (e.g. `--lease-secs 2`).
    pub fn start(flags: &[&str]) -> Cluster {
        Cluster::start_with_token(flags, None)
    }

    /// A coordinator requiring `token`, when given.
    pub fn start_with_token(flags: &[&str], token: Option<&str>) -> Cluster {
        Cluster::launch(flags, token, false)
    }

    /// A coordinator serving TLS with a certificate for 127.0.0.1 and
    /// localhost, issued by a fresh throwaway CA (`ca.pem`, which every
    /// client and worker of the cluster trusts).
    pub fn start_tls(flags: &[&str]) -> Cluster {
        Cluster::launch(flags, None, true)
    }

    fn launch(flags: &[&str], token: Option<&str>, tls: bool) -> Cluster {
        let dir = tempfile::Builder::new().prefix("ksweep-e2e-").tempdir().expect("temp dir");
        let db = dir.path().join("coordinator.db");
        let mut coordinator_flags: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
        let tls_ca = tls.then(|| {
            let files = write_test_pki(dir.path());
            coordinator_flags.extend(["--tls-cert".into(), files.cert, "--tls-key".into(), files.key]);
            PathBuf::from(files.ca)
        });
        let mut cluster = Cluster {
            dir,
            port: 0,
            db,
            token: token.map(str::to_string),
            tls_ca,
            coordinator_flags,
            coordinator: None,
            workers: Vec::new(),
            retired: Vec::new(),
            coordinator_runs: 0,
            worker_count: 0,
        };
        // Port 0: the coordinator binds a free port and prints it.
        if let Err(e) = cluster.launch_coordinator() {
            panic!("the coordinator did not start:\n{e}");
        }
        cluster
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn url(&self) -> String {
        let scheme = if self.tls_ca.is_some() { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}", self.port)
    }

    fn token_args(&self) -> Vec<String> {
        match &self.token {
            Some(t) => vec!["--token".into(), t.clone()],
            None => vec![],
        }
    }

    /// What every client and worker passes to reach the coordinator: its
    /// URL, `token` if any, and the cluster's CA if it serves TLS.
    fn connect_args(&self, token: Option<&str>) -> Vec<String> {
        let mut args = vec!["--coordinator".into(), self.url()];
        if let Some(t) = token {
            args.extend(["--token".into(), t.to_string()]);
        }
        if let Some(ca) = &self.tls_ca {
            args.extend(["--tls-ca".into(), ca.display().to_string()]);
        }
        args
    }

    /// Starts a coordinator on `self.port` (0 the first time: any free
    /// port, which it prints as `listening on ADDR`, read into `self.port`)
    /// and waits until it answers health checks. Err (with its log) if it
    /// exits first or never answers.
    fn launch_coordinator(&mut self) -> Result<(), String> {
        assert!(self.coordinator.is_none(), "a coordinator is running");
        self.coordinator_runs += 1;
        let mut args: Vec<String> = vec![
            "coordinator".into(),
            "--listen".into(),
            format!("127.0.0.1:{}", self.port),
            "--db".into(),
            self.db.display().to_string(),
        ];
        args.extend(self.coordinator_flags.iter().cloned());
        args.extend(self.token_args());
        let name = format!("coordinator-{}", self.coordinator_runs);
        let mut proc = Proc::spawn(&name, self.dir.path(), &args);
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut bound = None;
        loop {
            if let Some(status) = proc.try_exit() {
                let log = proc.log_text();
                self.retired.push(proc);
                return Err(format!("{name} exited ({status}) before serving:\n{log}"));
            }
            if bound.is_none() {
                bound = listening_port(&proc.stdout_text());
                if let Some(port) = bound {
                    assert!(
                        self.port == 0 || self.port == port,
                        "{name} asked for port {} but bound {port}",
                        self.port
                    );
                    self.port = port;
                }
            }
            if bound.is_some() && self.healthy() {
                self.coordinator = Some(proc);
                return Ok(());
            }
            if Instant::now() >= deadline {
                let log = proc.log_text();
                self.retired.push(proc);
                return Err(format!("{name} did not print its address and answer health checks in 30 s:\n{log}"));
            }
            sleep(Duration::from_millis(50));
        }
    }

    /// True when `ksweep health` gets SERVING.
    pub fn healthy(&self) -> bool {
        let mut args = vec!["health".to_string()];
        args.extend(self.connect_args(self.token.as_deref()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_ksweep(self.dir.path(), &args, Duration::from_secs(20)).status.success()
    }

    /// SIGKILLs the coordinator (its log is kept).
    pub fn kill_coordinator(&mut self) {
        let mut c = self.coordinator.take().expect("a coordinator is running");
        c.kill();
        self.retired.push(c);
    }

    /// Takes the coordinator out (to signal it and watch it exit).
    pub fn take_coordinator(&mut self) -> &mut Proc {
        let c = self.coordinator.take().expect("a coordinator is running");
        self.retired.push(c);
        self.retired.last_mut().expect("just pushed")
    }

    /// Starts a coordinator again on the same port and database, retrying
    /// while the port is not yet free again.
    pub fn restart_coordinator(&mut self) {
        let mut last_error = String::new();
        for _ in 0..10 {
            match self.launch_coordinator() {
                Ok(()) => return,
                Err(e) => last_error = e,
            }
            sleep(Duration::from_millis(300));
        }
        panic!("the coordinator did not restart on port {}:\n{last_error}", self.port);
    }

    /// Starts a worker with `--threads threads`; returns its index.
    pub fn add_worker(&mut self, threads: usize) -> usize {
        self.add_worker_with(threads, self.token.clone())
    }

    /// Starts a worker presenting `token`.
    pub fn add_worker_with(&mut self, threads: usize, token: Option<String>) -> usize {
        self.spawn_worker(threads, token, &[], None)
    }

    /// Starts a worker with more flags (e.g. `--memory`).
    pub fn add_worker_with_flags(&mut self, threads: usize, flags: &[&str]) -> usize {
        self.spawn_worker(threads, self.token.clone(), flags, None)
    }

    /// Starts a worker with more flags inside the cgroup whose
    /// `cgroup.procs` file is `procs`.
    pub fn add_worker_in_cgroup(&mut self, threads: usize, procs: &Path, flags: &[&str]) -> usize {
        self.spawn_worker(threads, self.token.clone(), flags, Some(procs))
    }

    fn spawn_worker(&mut self, threads: usize, token: Option<String>, flags: &[&str], cgroup: Option<&Path>) -> usize {
        self.worker_count += 1;
        let name = format!("worker-{}", self.worker_count);
        let mut args: Vec<String> =
            vec!["worker".into(), "--threads".into(), threads.to_string(), "--name".into(), name.clone()];
        args.extend(flags.iter().map(|f| f.to_string()));
        args.extend(self.connect_args(token.as_deref()));
        self.workers.push(match cgroup {
            Some(procs) => Proc::spawn_in_cgroup(&name, self.dir.path(), procs, &args),
            None => Proc::spawn(&name, self.dir.path(), &args),
        });
        self.workers.len() - 1
    }

    /// Runs `ksweep args` in the test's directory, as given.
    pub fn ksweep(&self, args: &[&str]) -> Output {
        run_ksweep(self.dir.path(), args, CLIENT_TIMEOUT)
    }

    /// Runs a client command against this coordinator (adds --coordinator,
    /// and the token and CA, if any).
    pub fn client(&self, args: &[&str]) -> Output {
        let mut all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        all.extend(self.connect_args(self.token.as_deref()));
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        self.ksweep(&all)
    }

    /// Writes a file in the test's directory.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, text).expect("write file");
        path
    }

    /// Submits a spec file; returns the sweep id (the last line printed).
    pub fn submit(&self, spec: &Path) -> String {
        let out = self.client(&["submit", spec.to_str().expect("utf-8 path")]).ok();
        let id = out.last_line();
        assert!(
            id.len() == 16 && id.chars().all(|c| c.is_ascii_hexdigit()),
            "submit's last line should be a sweep id, got {id:?}:\n{}",
            out.stdout
        );
        id
    }

    /// One sweep's status.
    pub fn status(&self, id: &str) -> Status {
        let out = self.client(&["status", id]).ok();
        let mut all = parse_statuses(&out.stdout);
        assert_eq!(all.len(), 1, "status {id} printed:\n{}", out.stdout);
        all.remove(0)
    }

    /// Every stored sweep (`ksweep status` without an id).
    pub fn list(&self) -> Vec<Status> {
        parse_statuses(&self.client(&["status", "--long"]).ok().stdout)
    }

    /// Polls the status every 100 ms until `pred` holds; fails the test
    /// after `timeout`, or at once if the sweep ends another way.
    #[track_caller]
    pub fn wait_for(&self, id: &str, what: &str, timeout: Duration, pred: impl Fn(&Status) -> bool) -> Status {
        let deadline = Instant::now() + timeout;
        loop {
            let s = self.status(id);
            if pred(&s) {
                return s;
            }
            assert!(s.state == "running", "waiting for {what}, the sweep ended {}: {s:?}", s.state);
            assert!(Instant::now() < deadline, "timed out after {timeout:?} waiting for {what}; last status {s:?}");
            sleep(Duration::from_millis(100));
        }
    }

    /// Waits until the coordinator's log satisfies `pred`; returns it.
    #[track_caller]
    pub fn wait_for_log(&self, timeout: Duration, pred: impl Fn(&str) -> bool) -> String {
        self.coordinator.as_ref().expect("a coordinator is running").wait_for_log(timeout, pred)
    }

    /// Waits for the sweep to end `done`, with every task done.
    #[track_caller]
    pub fn wait_done(&self, id: &str, timeout: Duration) -> Status {
        let s = self.wait_for(id, "the sweep to finish", timeout, |s| s.state != "running");
        assert_eq!(s.state, "done", "the sweep ended {}: {s:?}", s.state);
        assert_eq!(s.tasks_done, s.tasks_total, "done with tasks missing: {s:?}");
        assert_eq!(s.shards_failed, 0, "{s:?}");
        s
    }

    /// `ksweep table ID --format json`, with the timing fields removed.
    pub fn table(&self, id: &str) -> Value {
        strip_timing(&self.client(&["table", id, "--format", "json"]).ok().stdout)
    }

    /// `ksweep export ID --format csv`, parsed.
    pub fn export(&self, id: &str) -> Export {
        Export::parse(&self.client(&["export", id, "--format", "csv"]).ok().stdout)
    }

    fn all_procs(&mut self) -> impl Iterator<Item = &mut Proc> {
        self.coordinator.iter_mut().chain(self.workers.iter_mut()).chain(self.retired.iter_mut())
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for p in self.all_procs() {
            p.kill();
        }
        if std::thread::panicking() {
            let dir = self.dir.path().display().to_string();
            let mut report = String::new();
            for p in self.all_procs() {
                report.push_str(&p.report());
            }
            eprintln!("----- the children's logs (test dir {dir}) -----{report}");
        }
    }
}

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

/// Asserts a finished distributed sweep equals the embedded run of `spec`:
/// status counts, the table (timing aside) and every exported task (micros
/// aside), each task exactly once.
#[track_caller]
pub fn assert_matches_reference(cluster: &Cluster, id: &str, spec: &str) {
    let want = reference(spec);
    let status = cluster.status(id);
    assert_eq!(status.state, "done", "{status:?}");
    assert_eq!(status.tasks_total, want.status.tasks_total, "tasks_total");
    assert_eq!(status.tasks_done, want.status.tasks_done, "tasks_done");
    assert_eq!(status.successes, want.status.successes, "successes");
    assert_tables_equal(&cluster.table(id), &want.table, "distributed vs embedded table");
    let export = cluster.export(id);
    export.assert_complete(status.tasks_total);
    assert_lines_equal(&export.without_micros(), &want.csv, "distributed vs embedded export");
}
