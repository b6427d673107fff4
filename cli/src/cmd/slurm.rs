//! `ksweep slurm`: a sweep on a Slurm cluster in one command.
//!
//! Writes two batch scripts into the sweep's cluster directory and submits
//! them: the coordinator as a small job of its own, which serves the sweep
//! from the directory's database on a port picked free and announces its
//! address there, and the workers as a job array that find it there. Each
//! part outlives the jobs it runs in: a worker leaves before its time limit
//! (its results delivered) and the next array task takes its place; the
//! coordinator queues its own successor (`--dependency=afterany`), which
//! resumes from the database if the job ends before the sweep does. The
//! directory must be on a file system every node sees.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use clap::Args;
use ksweep_proto::cluster_dir::{self, ClusterDir};
use sweep::Sweep;

/// Run a sweep on a Slurm cluster.
#[derive(Debug, Args)]
pub struct SlurmArgs {
    /// The sweep spec (TOML).
    pub spec: PathBuf,
    /// Workers running at once (one Slurm array task each).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub workers: u32,
    /// Array tasks in all: when one ends at its time limit the next takes
    /// its place; those not started when the sweep ends are cancelled
    /// (default: 4 x --workers).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub worker_jobs: Option<u32>,
    /// CPUs of each worker (its threads).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub cpus_per_worker: u32,
    /// Memory of each worker, as sbatch takes it (e.g. 4G); the worker
    /// budgets its boards by it. Default: the partition's.
    #[arg(long, value_name = "SIZE")]
    pub mem: Option<String>,
    /// Time limit of each job, as sbatch takes it (minutes, or e.g. 11:50:00).
    #[arg(long, value_name = "TIME")]
    pub time: Option<String>,
    /// Time limit of the coordinator's jobs (default: --time).
    #[arg(long, value_name = "TIME")]
    pub coordinator_time: Option<String>,
    #[arg(long)]
    pub partition: Option<String>,
    #[arg(long)]
    pub account: Option<String>,
    /// The sweep's cluster directory, on a file system every node sees:
    /// scripts, logs, database, token and the coordinator's address
    /// (default: ./ksweep-NAME).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// How many times a coordinator job that ended before its sweep is
    /// followed by another.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(0..=1000))]
    pub restarts: u32,
    /// The ksweep binary the jobs run, on a path every node sees (default:
    /// this one).
    #[arg(long, value_name = "FILE")]
    pub ksweep: Option<PathBuf>,
    /// Write the scripts and print them, but submit nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// What the scripts are made of.
struct Plan {
    name: String,
    dir: PathBuf,
    ksweep: PathBuf,
    workers: u32,
    worker_jobs: u32,
    cpus_per_worker: u32,
    mem: Option<String>,
    time: Option<String>,
    coordinator_time: Option<String>,
    partition: Option<String>,
    account: Option<String>,
    restarts: u32,
}

pub fn run(args: SlurmArgs, out: &mut impl Write) -> Result<()> {
    let text = crate::spec_file::load(&args.spec)?;
    let sweep = Sweep::parse(&text)?;
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from(format!("ksweep-{}", file_safe(sweep.name()))));
    std::fs::create_dir_all(&dir).with_context(|| format!("--dir: cannot create {}", dir.display()))?;
    // Jobs run elsewhere, from other working directories: absolute paths.
    let dir = dir.canonicalize().with_context(|| format!("--dir: {}", dir.display()))?;
    // sbatch reads the directory in `#SBATCH --output=` lines, which no
    // shell quoting reaches: it must need none.
    anyhow::ensure!(
        sbatch_path(&dir),
        "--dir: {:?} has characters an #SBATCH line cannot carry; use a directory whose path has only {SBATCH_PATH_CHARS}",
        dir.display().to_string()
    );
    let ksweep = match &args.ksweep {
        Some(path) => path.canonicalize().with_context(|| format!("--ksweep: {}", path.display()))?,
        None => std::env::current_exe().context("cannot tell where this ksweep binary is; give --ksweep")?,
    };
    check_values(&args)?;
    let plan = Plan {
        name: sweep.name().to_string(),
        dir: dir.clone(),
        ksweep,
        workers: args.workers,
        worker_jobs: args.worker_jobs.unwrap_or(4 * args.workers).max(args.workers),
        cpus_per_worker: args.cpus_per_worker,
        mem: args.mem,
        coordinator_time: args.coordinator_time.or_else(|| args.time.clone()),
        time: args.time,
        partition: args.partition,
        account: args.account,
        restarts: args.restarts,
    };
    let cluster = ClusterDir::new(&dir);
    write_file(&dir.join("spec.toml"), &text, 0o644)?;
    ensure_token(&cluster)?;
    let coordinator = dir.join("coordinator.sbatch");
    let workers = dir.join("workers.sbatch");
    write_file(&coordinator, &plan.coordinator_script(), 0o755)?;
    write_file(&workers, &plan.workers_script(), 0o755)?;

    if args.dry_run {
        writeln!(out, "# {}\n{}", coordinator.display(), plan.coordinator_script())?;
        writeln!(out, "# {}\n{}", workers.display(), plan.workers_script())?;
        writeln!(
            out,
            "dry run: nothing submitted; to submit: sbatch {}; sbatch {}",
            coordinator.display(),
            workers.display()
        )?;
        return Ok(());
    }
    let coordinator_job = sbatch(&coordinator, &dir)?;
    let array = sbatch(&workers, &dir)?;
    // The coordinator's job cancels the array's tasks not yet started once
    // the sweep has ended.
    write_file(&dir.join("workers.jobid"), &format!("{array}\n"), 0o644)?;
    let dir_text = dir.display();
    writeln!(out, "submitted sweep {:?}: coordinator job {coordinator_job}, worker array job {array}", plan.name)?;
    writeln!(
        out,
        "  ({} workers at once, {} array tasks in all; scripts and logs in {dir_text})",
        plan.workers, plan.worker_jobs
    )?;
    writeln!(out, "follow:  ksweep watch --dir {dir_text}")?;
    writeln!(out, "tables:  ksweep table --dir {dir_text}")?;
    writeln!(out, "stop:    scancel --name {}   (ksweep slurm again resumes it)", plan.job_name())?;
    Ok(())
}

/// The flags sbatch takes as written into `#SBATCH` lines: one word each.
fn check_values(args: &SlurmArgs) -> Result<()> {
    let values = [
        ("--mem", &args.mem),
        ("--time", &args.time),
        ("--coordinator-time", &args.coordinator_time),
        ("--partition", &args.partition),
        ("--account", &args.account),
    ];
    for (flag, value) in values {
        if let Some(v) = value {
            anyhow::ensure!(
                sbatch_word(v),
                "{flag}: {v:?} is not a value sbatch takes (letters, digits, : - _ . only)"
            );
        }
    }
    Ok(())
}

impl Plan {
    fn job_name(&self) -> String {
        format!("ksweep-{}", file_safe(&self.name))
    }

    /// The `#SBATCH` lines both scripts share, with a job's time limit.
    fn common(&self, time: &Option<String>) -> String {
        let mut lines = format!("#SBATCH --job-name={}\n", self.job_name());
        for (key, value) in [("time", time), ("partition", &self.partition), ("account", &self.account)] {
            if let Some(v) = value {
                lines.push_str(&format!("#SBATCH --{key}={v}\n"));
            }
        }
        lines
    }

    fn coordinator_script(&self) -> String {
        let (dir, ksweep) =
            (shell_word(&self.dir.display().to_string()), shell_word(&self.ksweep.display().to_string()));
        format!(
            r#"#!/bin/bash
# knight-sweep: the coordinator of sweep {name}, written by `ksweep slurm`.
# It serves the sweep from {dir}/sweeps.db on a port picked free, announces
# its address in {dir}/coordinator.url (workers and `ksweep watch --dir`
# find it there), and ends when the sweep has: workers drained, {dir}/finished
# written, the worker tasks not yet started cancelled.
# Should this job end first (time limit, node failure, scancel of this job),
# the successor it queues below starts and resumes the sweep from the
# database; at most {restarts} successors in a row.
{common}#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
#SBATCH --mem=1G
#SBATCH --requeue
#SBATCH --output={dir}/coordinator-%j.log
set -uo pipefail
dir={dir}
restart=${{KSWEEP_RESTART:-0}}

next=
if [ "$restart" -lt {restarts} ]; then
    next=$(sbatch --parsable --dependency=afterany:"$SLURM_JOB_ID" \
        --export=ALL,KSWEEP_RESTART=$((restart + 1)) "$dir/coordinator.sbatch")
fi

{ksweep} coordinator --dir "$dir" --listen 0.0.0.0:0 \
    --submit "$dir/spec.toml" --until-done
status=$?

if [ -e "$dir/finished" ]; then
    scancel $next $(cat "$dir/workers.jobid" 2>/dev/null) 2>/dev/null || true
fi
exit $status
"#,
            name = shell_word(&self.name),
            restarts = self.restarts,
            common = self.common(&self.coordinator_time),
        )
    }

    fn workers_script(&self) -> String {
        let (dir, ksweep) =
            (shell_word(&self.dir.display().to_string()), shell_word(&self.ksweep.display().to_string()));
        let mem = self.mem.as_ref().map(|m| format!("#SBATCH --mem={m}\n")).unwrap_or_default();
        format!(
            r#"#!/bin/bash
# knight-sweep: the workers of sweep {name}, written by `ksweep slurm`.
# One worker per array task, {workers} at once, {jobs} in all. Each finds the
# coordinator in {dir} (waiting while its job is pending, following it when
# it moves), uses its task's CPUs and memory, and leaves shortly before its
# time limit with its results delivered; the next array task takes its
# place. Once the sweep has ended they leave, and the coordinator's job
# cancels the tasks not yet started.
{common}#SBATCH --array=0-{last}%{workers}
#SBATCH --ntasks=1
#SBATCH --cpus-per-task={cpus}
{mem}#SBATCH --output={dir}/worker-%A_%a.log
set -euo pipefail
exec {ksweep} worker --dir {dir} \
    --name "slurm-${{SLURM_ARRAY_JOB_ID}}_${{SLURM_ARRAY_TASK_ID}}"
"#,
            name = shell_word(&self.name),
            workers = self.workers,
            jobs = self.worker_jobs,
            last = self.worker_jobs - 1,
            cpus = self.cpus_per_worker,
            common = self.common(&self.time),
        )
    }
}

/// Submits `script` and returns its job id.
fn sbatch(script: &Path, dir: &Path) -> Result<String> {
    let output = Command::new("sbatch")
        .arg("--parsable")
        .arg(script)
        .current_dir(dir)
        .output()
        .context("cannot run sbatch: is this a Slurm login node? (--dry-run writes the scripts only)")?;
    if !output.status.success() {
        bail!("sbatch {} failed: {}", script.display(), String::from_utf8_lossy(&output.stderr).trim());
    }
    // --parsable prints "jobid" or "jobid;cluster".
    let text = String::from_utf8_lossy(&output.stdout);
    let id = text.trim().split(';').next().unwrap_or_default().to_string();
    anyhow::ensure!(
        !id.is_empty() && id.chars().all(|c| c.is_ascii_digit()),
        "sbatch {} printed no job id: {text:?}",
        script.display()
    );
    Ok(id)
}

/// A fresh token in the directory, readable by its owner alone, unless one
/// is there (a sweep submitted again keeps its token): then it must be
/// trusted, ours and private (`ClusterDir::token`), never one planted.
fn ensure_token(dir: &ClusterDir) -> Result<()> {
    if dir.token().context("--dir")?.is_some() {
        return Ok(());
    }
    let token = ksweep_coordinator::random_token()?;
    write_file(&dir.token_file(), &format!("{token}\n"), 0o600)
}

/// Writes `text` to `path` with exactly the permissions `mode`.
fn write_file(path: &Path, text: &str, mode: u32) -> Result<()> {
    cluster_dir::write_file(path, text, mode).with_context(|| format!("cannot write {}", path.display()))
}

/// A sweep name as a piece of a file or job name.
fn file_safe(name: &str) -> String {
    let safe: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).take(64).collect();
    if safe.is_empty() {
        "sweep".into()
    } else {
        safe
    }
}

/// Whether `value` goes into an `#SBATCH` line as it is.
fn sbatch_word(value: &str) -> bool {
    !value.is_empty() && value.chars().all(|c| c.is_ascii_alphanumeric() || ":-_.,".contains(c))
}

/// What a path in an `#SBATCH` line may be made of, for the error.
const SBATCH_PATH_CHARS: &str = "letters, digits and / . _ - + , : @";

/// Whether `path` goes into an `#SBATCH` line as it is: sbatch splits
/// those lines itself (no shell), and `%` starts its file name patterns.
fn sbatch_path(path: &Path) -> bool {
    let text = path.to_string_lossy();
    !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+,:@".contains(c))
}

/// Any text as one bash word on one line, the only way a path or name
/// enters a script (commands and comments alike): plain text as it is,
/// anything else single-quoted, and control characters (a newline that
/// would end a comment and start a command) written as `$'\n'`-style
/// escapes, so no value can add a line or a command.
fn shell_word(text: &str) -> String {
    if !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || "/-_.+,:@".contains(c)) {
        return text.to_string();
    }
    let mut word = String::from("'");
    for c in text.chars() {
        match c {
            '\'' => word.push_str(r"'\''"),
            c if c.is_control() => {
                word.push_str("'$'");
                for unit in c.to_string().bytes() {
                    word.push_str(&format!("\\x{unit:02x}"));
                }
                word.push_str("''");
            }
            c => word.push(c),
        }
    }
    word.push('\'');
    word
}

#[cfg(test)]
mod tests;
