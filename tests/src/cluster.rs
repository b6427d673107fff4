//! A coordinator and its workers on loopback, in a temporary directory:
//! started, driven and killed, their logs printed when a test fails.

use std::path::{Path, PathBuf};
use std::thread::sleep;
use std::time::{Duration, Instant};

use serde_json::Value;
use tempfile::TempDir;

use crate::{
    assert_lines_equal, assert_tables_equal, listening_port, parse_statuses, reference, run_ksweep, strip_timing,
    write_test_pki, Export, Output, Proc, Status, CLIENT_TIMEOUT,
};

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
