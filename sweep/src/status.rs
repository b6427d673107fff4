//! A sweep's status as the coordinator and the CLI read it: the one read
//! model behind `ksweep status`, `watch`, tables, exports and the
//! dashboard. The wire carries it as `ksweep.v1.SweepStatus`; the
//! conversions live in `ksweep_proto::convert` and nowhere else.

use std::fmt;
use std::time::Duration;

use crate::{format_duration, format_utc, Progress, Work};

/// Where a sweep is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SweepState {
    /// Shards are queued or running.
    Running,
    /// Every shard finished.
    Done,
    /// Stopped by a user; `ksweep resume` runs the rest.
    Cancelled,
    /// Finished, but some shards failed on every retry.
    Failed,
    /// Stored as running, but nothing serves its database (its `ksweep run`
    /// or coordinator was stopped): running it again resumes it. Only an
    /// offline read says so; a coordinator serving it says `running`.
    Stopped,
}

impl SweepState {
    /// The state as users read it: `running`, `done`, `cancelled`, `failed`.
    pub fn name(self) -> &'static str {
        match self {
            SweepState::Running => "running",
            SweepState::Done => "done",
            SweepState::Cancelled => "cancelled",
            SweepState::Failed => "failed",
            SweepState::Stopped => "stopped",
        }
    }

    /// True once nothing more will run.
    pub fn is_terminal(self) -> bool {
        self != SweepState::Running
    }
}

impl fmt::Display for SweepState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A shard that failed on every retry: its part of the grid and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailedShard {
    /// The shard's id in the coordinator.
    pub shard_id: u64,
    /// Index of its configuration in the sweep.
    pub config: u32,
    /// Its board and moves as tables label them (`8x8`, `2,1`).
    pub board: String,
    /// Its moves, as tables label them.
    pub moves: String,
    /// Its starts: indices `start_lo..start_hi` of the configuration's starts.
    pub start_lo: u64,
    /// End (exclusive) of its starts.
    pub start_hi: u64,
    /// Its last attempt's error.
    pub error: String,
}

impl FailedShard {
    /// Its starts for people: `start 4`, `starts 0..10`.
    pub fn starts_text(&self) -> String {
        match self.start_hi.saturating_sub(self.start_lo) {
            1 => format!("start {}", self.start_lo),
            _ => format!("starts {}..{}", self.start_lo, self.start_hi),
        }
    }
}

/// Queued shards that no registered worker can run (too little memory, or
/// labels missing): they wait, not fail, until such a worker registers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Waiting {
    /// How many; 0 when every queued shard has a worker able to run it.
    pub shards: u64,
    /// The most memory one of their tasks needs, in bytes.
    pub memory_bytes: u64,
    /// Every label some of them require.
    pub labels: Vec<String>,
    /// Besides those: shards that the workers able to run them may not take
    /// for a while, having stalled on or failed them.
    pub excluded: u64,
    /// When none of its shards runs though work is left, and nothing above
    /// holds it back: the workers registered, every one busy with other
    /// sweeps' shards (`Some(0)`: no worker is registered at all).
    pub behind: Option<u64>,
}

impl Waiting {
    /// What they wait for: "2 shards wait for a worker with >= 687.0 MiB
    /// and labels bigmem", and why others wait; None when none waits.
    pub fn text(&self) -> Option<String> {
        let waits = |n: u64| if n == 1 { "shard waits" } else { "shards wait" };
        let mut parts = Vec::new();
        if self.shards > 0 {
            let (n, memory) = (self.shards, tour::format_bytes(self.memory_bytes));
            let mut line = format!("{n} {} for a worker with >= {memory}", waits(n));
            if !self.labels.is_empty() {
                line.push_str(&format!(" and labels {}", self.labels.join(", ")));
            }
            parts.push(line);
        }
        if self.excluded > 0 {
            let (n, them) = (self.excluded, if self.excluded == 1 { "it" } else { "them" });
            parts.push(format!(
                "{n} {} out the cooldown of the only workers able to run {them}, which stalled on or failed {them}",
                waits(n)
            ));
        }
        match self.behind {
            Some(0) => parts.push("nothing runs: no worker is registered (start one with `ksweep worker`)".into()),
            Some(1) => parts.push("queued behind other sweeps: the one worker here is busy with their shards".into()),
            Some(n) => {
                parts.push(format!("queued behind other sweeps: all {n} workers here are busy with their shards"))
            }
            None => {}
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    /// What it waits for in a few words, for one-line lists.
    pub fn short(&self) -> Option<&'static str> {
        match self.behind {
            _ if self.shards > 0 && !self.labels.is_empty() => Some("waits for labels"),
            _ if self.shards > 0 => Some("waits for memory"),
            _ if self.excluded > 0 => Some("cooling down"),
            Some(0) => Some("no worker"),
            Some(_) => Some("queued behind others"),
            None => None,
        }
    }
}

/// A build as people read it, `0.1.0 (abc123def456)`: a release and the
/// commit it was built from; empty where neither was recorded.
pub fn build_label(version: &str, commit: &str) -> String {
    match (version, commit) {
        ("", _) => String::new(),
        (v, "") => v.to_string(),
        (v, c) => format!("{v} ({c})"),
    }
}

/// A worker whose results a sweep holds: what it ran, on what machine, and
/// how much of the sweep it did. Registrations of one worker with the same
/// build and machine (a restarted worker) count as one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Contributor {
    /// The worker's name.
    pub name: String,
    /// Its ksweep release (`0.1.0`); empty where not recorded (results of a
    /// database older than schema version 3).
    pub version: String,
    /// The git commit it was built from (`abc123def456`, `...-dirty`,
    /// `unknown`).
    pub build: String,
    /// Its machine's host name.
    pub host: String,
    /// Its CPU model, as the operating system names it.
    pub cpu: String,
    /// The CPU features its engine's kernels used (none: scalar).
    pub features: Vec<String>,
    /// Its results in the sweep.
    pub tasks: u64,
    /// The CPU time they took, in microseconds.
    pub cpu_micros: u64,
}

impl Contributor {
    /// Its build as [`build_label`] writes it; empty where not recorded.
    pub fn build_label(&self) -> String {
        build_label(&self.version, &self.build)
    }
}

/// A sweep's status: counts from the database, and live figures (rate,
/// ETA, waiting shards) that only a running coordinator can fill in.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepStatus {
    /// The sweep's content id.
    pub sweep_id: String,
    /// The spec's name.
    pub name: String,
    /// Where it is in its life.
    pub state: SweepState,
    /// Tasks in the sweep.
    pub tasks_total: u64,
    /// Tasks with a result.
    pub tasks_done: u64,
    /// Tasks that found a tour.
    pub successes: u64,
    /// Configurations (board and moves) in the grid.
    pub configurations: u64,
    /// Of those, the ones where no tour can exist.
    pub impossible_configurations: u64,
    /// Shards that failed on every retry (their tasks have no result).
    pub shards_failed: u64,
    /// When it was first submitted, in milliseconds since the Unix epoch.
    pub created_unix_ms: u64,
    /// The spec's seed, in lists too: with the submission time, what tells
    /// two sweeps of one name apart. None from a coordinator too old to send it.
    pub seed: Option<u64>,
    /// When its first result was stored; None before, and where a database
    /// older than schema version 3 held results already.
    pub started_unix_ms: Option<u64>,
    /// When it last ended (done, failed or cancelled); None while it runs,
    /// and for a sweep that ended before schema version 3.
    pub finished_unix_ms: Option<u64>,
    /// Its runs, whose wall times add up to its own (a sweep cancelled or
    /// stopped and run again does not count the time between).
    pub runs: RunTimes,
    /// The CPU time of its results (their micros summed, those it took
    /// from other sweeps included): set by a single sweep's status only,
    /// like the spec, as it reads every result.
    pub cpu_micros: Option<u64>,
    /// Of [`SweepStatus::cpu_micros`], the time of the results it took from
    /// other sweeps (computed by them, not by its own runs).
    pub reused_cpu_micros: Option<u64>,
    /// The workers whose results it holds, most tasks first: a single
    /// sweep's status only.
    pub contributors: Vec<Contributor>,
    /// Why the sweep failed, when it did.
    pub error: Option<String>,
    /// The canonical spec text: set by a single sweep's status only (lists,
    /// watch streams and submit replies stay small whatever the spec).
    pub spec_toml: String,
    /// Tasks a second over the last minute; None until measured, after the
    /// sweep ended, and always offline.
    pub rate_per_sec: Option<f64>,
    /// Time left at that rate; None like the rate.
    pub eta: Option<Duration>,
    /// The first failed shards (a single sweep's status only), at most a
    /// few of `shards_failed`.
    pub failed_shards: Vec<FailedShard>,
    /// Live, for a running sweep: the shards no worker can run now.
    pub waiting: Waiting,
    /// What it took from results other sweeps computed.
    pub reuse: Reuse,
    /// Its estimated CPU time, done and in all ([`Work`]): set where it was
    /// estimated (a running sweep's live status, a single sweep's status).
    pub work: Option<Work>,
}

/// A sweep's runs: from its (first) submission to its end, or from a
/// resume to the next end. Their wall times are its wall time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunTimes {
    /// Wall time of its ended runs, in milliseconds.
    pub ended_ms: u64,
    /// When its current run stored its first result; None between runs
    /// (and before schema version 6).
    pub current_from_unix_ms: Option<u64>,
    /// When it last stored a result: where a run whose process stopped
    /// without ending the sweep ended.
    pub last_result_unix_ms: Option<u64>,
}

/// A sweep's results that came from other sweeps (docs/identity.md).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reuse {
    /// Tasks taken from stored results when it was submitted.
    pub tasks: u64,
    /// The sweeps that computed its results, other than itself, with how
    /// many each (a single sweep's status only).
    pub from: Vec<ReusedFrom>,
    /// Reruns whose result disagreed with the stored one (a single sweep's
    /// status only).
    pub conflicts: u64,
    /// True when it was submitted with `--no-reuse`: every task ran again.
    pub no_reuse: bool,
}

/// A sweep some of another sweep's results came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReusedFrom {
    /// The other sweep's id.
    pub sweep_id: String,
    /// Its name.
    pub name: String,
    /// How many of this sweep's results it computed.
    pub tasks: u64,
}

impl Reuse {
    /// `taken 1892 of 3000 tasks from stored results (quick 3675248c: 1892)`,
    /// or None when nothing came from elsewhere and nothing disagreed.
    pub fn summary(&self, tasks_total: u64) -> Option<String> {
        let mut parts = Vec::new();
        if self.no_reuse {
            parts.push("every task run again (--no-reuse)".to_string());
        } else if self.tasks > 0 {
            parts.push(format!("{} of {tasks_total} tasks taken from stored results", self.tasks));
        }
        if !self.from.is_empty() {
            let from: Vec<String> =
                self.from.iter().map(|f| format!("{} {}: {}", f.name, short_id(&f.sweep_id), f.tasks)).collect();
            parts.push(format!("results computed by {}", from.join(", ")));
        }
        if self.conflicts > 0 {
            parts.push(format!(
                "{} reruns DISAGREED with the stored result (a bug, or a method changed without a new version)",
                self.conflicts
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// The first 8 hex digits of a sweep id, as lists show it.
pub fn short_id(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

impl SweepStatus {
    /// Percent of the tasks with a result; 100 for a sweep without tasks.
    pub fn percent_done(&self) -> f64 {
        if self.tasks_total > 0 {
            100.0 * self.tasks_done as f64 / self.tasks_total as f64
        } else {
            100.0
        }
    }

    /// Its estimated work while tasks remain: once every task has its
    /// result, the task count says all there is.
    pub fn unfinished_work(&self) -> Option<Work> {
        self.work.filter(|_| self.tasks_done < self.tasks_total)
    }

    /// Percent of the estimated work done where it was estimated, else of
    /// the tasks: what a progress bar fills to.
    pub fn percent_of_work(&self) -> f64 {
        self.unfinished_work().map_or_else(|| self.percent_done(), |work| work.percent())
    }

    /// How far it is, for people: `12.4 % of the work (113375/166665
    /// tasks)`, or `113375/166665 tasks (68.0 %)` where the work was not
    /// estimated.
    pub fn progress_text(&self) -> String {
        match self.unfinished_work() {
            Some(Work { adaptive: Some(cells), .. }) => format!(
                "{:.1} % of the estimated work ({}/{} cells stopped, {} tasks)",
                self.percent_of_work(),
                cells.settled,
                cells.cells,
                self.tasks_done
            ),
            Some(work) => {
                format!("{:.1} % of the work ({}/{} tasks)", work.percent(), self.tasks_done, self.tasks_total)
            }
            None => format!("{}/{} tasks ({:.1} %)", self.tasks_done, self.tasks_total, self.percent_done()),
        }
    }

    /// Failed shards counted but not listed in [`SweepStatus::failed_shards`].
    pub fn unlisted_failed_shards(&self) -> u64 {
        self.shards_failed.saturating_sub(self.failed_shards.len() as u64)
    }

    /// The status with the workers whose results it holds, and so with its
    /// CPU time: theirs, summed.
    pub fn with_contributors(self, contributors: Vec<Contributor>) -> SweepStatus {
        let cpu_micros = Some(contributors.iter().map(|c| c.cpu_micros).sum());
        SweepStatus { cpu_micros, contributors, ..self }
    }

    /// Wall time of its runs, each from its first result to its end: to
    /// `now_unix_ms` for a run going on (from its submission, while a first
    /// run has no result yet), to its last result for a run whose process
    /// stopped. None where its end was not recorded (a sweep that ended
    /// before schema version 3).
    pub fn wall_time(&self, now_unix_ms: u64) -> Option<Duration> {
        if self.state.is_terminal() && self.state != SweepState::Stopped && self.finished_unix_ms.is_none() {
            return None;
        }
        let current = match (self.runs.current_from_unix_ms, self.state) {
            (Some(from), SweepState::Running) => now_unix_ms.saturating_sub(from),
            (Some(from), _) => self.runs.last_result_unix_ms.unwrap_or(from).saturating_sub(from),
            (None, SweepState::Running) if self.runs.ended_ms == 0 && self.started_unix_ms.is_none() => {
                now_unix_ms.saturating_sub(self.created_unix_ms)
            }
            (None, _) => 0,
        };
        Some(Duration::from_millis(self.runs.ended_ms + current))
    }

    /// When it ran, as (label, text) lines for people: submitted, started,
    /// finished, wall time and, where known, CPU time; then, where some of
    /// its results came from other sweeps, how many and whose
    /// ([`Reuse::summary`]). Times not recorded (by a database older than
    /// schema version 3) say so rather than read as 1970.
    pub fn time_lines(&self, now_unix_ms: u64) -> Vec<(&'static str, String)> {
        const NOT_RECORDED: &str = "not recorded";
        let utc = |ms: Option<u64>| ms.filter(|&ms| ms > 0).map(format_utc);
        let running = !self.state.is_terminal();
        let started = match utc(self.started_unix_ms) {
            Some(at) => at,
            // Results taken from other sweeps were not computed by this one.
            None if self.tasks_done <= self.reuse.tasks => "no result yet".into(),
            None => NOT_RECORDED.into(),
        };
        let finished = match utc(self.finished_unix_ms) {
            // A resumed sweep's last end is not its finish.
            _ if running => "not yet".into(),
            Some(at) => at,
            None if self.state == SweepState::Stopped => "not yet: stopped, running it again resumes it".into(),
            None => NOT_RECORDED.into(),
        };
        let wall = match self.wall_time(now_unix_ms) {
            Some(d) if running => format!("{} so far", format_duration(d)),
            Some(d) if self.state == SweepState::Stopped => format!("{} until its last result", format_duration(d)),
            Some(d) => format_duration(d),
            None => NOT_RECORDED.into(),
        };
        let mut lines = vec![
            ("submitted", utc(Some(self.created_unix_ms)).unwrap_or_else(|| NOT_RECORDED.into())),
            ("started", started),
            ("finished", finished),
            ("wall time", wall),
        ];
        if let Some(micros) = self.cpu_micros {
            let reused = self.reused_cpu_micros.unwrap_or(0).min(micros);
            let own = format_duration(Duration::from_micros(micros - reused));
            lines.push(match reused {
                0 => ("CPU time", own),
                _ => (
                    "CPU time",
                    format!(
                        "{own} (its own tasks; the {} results it reused took {} more when computed)",
                        self.reuse.tasks,
                        format_duration(Duration::from_micros(reused))
                    ),
                ),
            });
        }
        if let Some(reuse) = self.reuse.summary(self.tasks_total) {
            lines.push(("reused", reuse));
        }
        lines
    }
}

impl From<&SweepStatus> for Progress {
    fn from(s: &SweepStatus) -> Progress {
        Progress {
            state: s.state.name().to_string(),
            tasks_done: s.tasks_done,
            tasks_total: s.tasks_total,
            shards_failed: s.shards_failed,
        }
    }
}

#[cfg(test)]
mod tests;
