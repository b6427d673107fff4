//! `ksweep` child processes: client commands run to completion within a
//! timeout, and long-running services killed and reaped when dropped.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::binary::{ksweep_command, scrubbed};
use crate::KSWEEP;

static SEQ: AtomicUsize = AtomicUsize::new(0);

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
    pub(crate) fn report(&mut self) -> String {
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
