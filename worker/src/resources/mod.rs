//! The worker's default resources: the memory its boards may take and its
//! threads, each the tightest of the limits the process really runs under,
//! with where each figure came from, so the log names what binds. Inside a
//! container, a Kubernetes pod or a Slurm job, `/proc/meminfo` and the core
//! count describe the whole host; the process's cgroup, Slurm's allocation
//! and the affinity mask say what it may use.
//!
//! Memory: the tightest of the cgroup v2 `memory.max` and v1
//! `memory.limit_in_bytes` of the process's cgroup and its parents,
//! Slurm's `SLURM_MEM_PER_NODE` or `SLURM_MEM_PER_CPU` times the task's
//! CPUs, and `MemAvailable`, less [`margin`]. Threads: the tightest of the
//! affinity mask, the cgroup CPU quota (v2 `cpu.max`, v1
//! `cpu.cfs_quota_us`) and Slurm's `SLURM_CPUS_PER_TASK`. `std::thread::available_parallelism` takes the same
//! minimum but does not say which bound it; it is the fallback where
//! neither can be read.
//!
//! Everything is read through a [`Host`] (a root directory and the
//! environment), so every rule is tested on fixture files.

mod cgroup;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::PathBuf;

use cgroup::Hierarchy;
use tour::format_bytes;

/// Share of the tightest memory limit kept back for what is not a board:
/// the worker's own code and heap, its gRPC buffers (a result batch is
/// built, encoded and sent while tasks run) and the allocator's slack.
pub const MARGIN_PERCENT: u64 = 10;
/// The least kept back: 64 MiB, however small the limit (but never more
/// than half of it).
pub const MIN_MARGIN: u64 = 64 << 20;

/// cgroup v1 writes about 2^63 for "no limit" (the largest page count
/// times the page size, which differs between machines); no machine has
/// 2^62 bytes.
const V1_UNLIMITED: u64 = 1 << 62;

/// The environment variables read: Slurm's memory allocation.
const SLURM_VARS: [&str; 4] = ["SLURM_MEM_PER_NODE", "SLURM_MEM_PER_CPU", "SLURM_CPUS_PER_TASK", "SLURM_CPUS_ON_NODE"];

/// Memory kept back from `limit`: [`MARGIN_PERCENT`], at least
/// [`MIN_MARGIN`], at most half the limit.
pub fn margin(limit: u64) -> u64 {
    let share = u128::from(limit) * u128::from(MARGIN_PERCENT) / 100;
    u64::try_from(share).unwrap_or(u64::MAX).max(MIN_MARGIN).min(limit / 2)
}

/// Where limits are read from: a root directory holding `proc/` and
/// `sys/` (`/` for real), and the environment.
#[derive(Debug, Clone)]
pub struct Host {
    root: PathBuf,
    env: BTreeMap<String, String>,
}

impl Host {
    /// This machine and this process's environment.
    pub fn this() -> Host {
        let env = SLURM_VARS.iter().filter_map(|&v| Some((v.to_string(), std::env::var(v).ok()?))).collect();
        Host { root: PathBuf::from("/"), env }
    }

    /// A host whose files lie under `root`, with these variables.
    pub fn at(root: impl Into<PathBuf>, env: BTreeMap<String, String>) -> Host {
        Host { root: root.into(), env }
    }

    /// The text of a file named by its absolute path on the host; None if
    /// absent or unreadable (no such limit here).
    fn read(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(self.root.join(path.trim_start_matches('/'))).ok()
    }

    fn var(&self, name: &str) -> Option<&str> {
        self.env.get(name).map(String::as_str)
    }
}

/// A bound on a resource and what set it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Figure {
    pub value: u64,
    pub source: String,
}

/// Every bound found on a host, and what was there but could not be read.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Bounds {
    /// Bytes.
    pub memory: Vec<Figure>,
    pub threads: Vec<Figure>,
    /// Values refused (not a number, a zero period...), each with its source.
    pub ignored: Vec<String>,
}

/// What the worker runs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decided {
    pub threads: usize,
    /// Bytes the boards of running tasks may take in all.
    pub memory: u64,
}

/// The worker's threads and memory budget: `threads` and `memory` where
/// given (`--threads`, `--memory`; 0 and None where not), else the
/// tightest bounds of this host. Logs every figure and the choice.
pub fn decide(threads: usize, memory: Option<u64>) -> Decided {
    Bounds::read(&Host::this()).decide(threads, memory)
}

impl Bounds {
    /// Every bound `host` sets on this process.
    pub fn read(host: &Host) -> Bounds {
        let mut b = Bounds::default();
        b.cgroup_memory(host);
        b.slurm_memory(host);
        b.available_memory(host);
        b.cgroup_cpus(host);
        b.affinity(host);
        b.slurm_cpus(host);
        b
    }

    /// The tightest memory limit, and the budget it leaves past [`margin`].
    pub fn memory_budget(&self) -> Option<(&Figure, u64)> {
        let tightest = self.memory.iter().min_by_key(|f| f.value)?;
        Some((tightest, tightest.value - margin(tightest.value)))
    }

    /// The tightest bound on threads.
    pub fn threads(&self) -> Option<&Figure> {
        self.threads.iter().min_by_key(|f| f.value)
    }

    /// See [`decide`].
    pub fn decide(&self, threads: usize, memory: Option<u64>) -> Decided {
        for why in &self.ignored {
            tracing::warn!(%why, "resource limit ignored");
        }
        for f in &self.memory {
            tracing::info!(bytes = f.value, size = %format_bytes(f.value), source = %f.source, "memory limit");
        }
        for f in &self.threads {
            tracing::info!(threads = f.value, source = %f.source, "thread limit");
        }
        let tightest = self.memory_budget();
        let memory = match (memory, tightest) {
            (Some(given), _) => {
                tracing::info!(memory_bytes = given, size = %format_bytes(given), source = "--memory", "memory budget");
                if let Some((limit, _)) = tightest.filter(|(limit, _)| given > limit.value) {
                    tracing::warn!(
                        limit = limit.value,
                        source = %limit.source,
                        "--memory is above the tightest memory limit: the worker may be killed before its budget is used"
                    );
                }
                given
            }
            (None, Some((limit, budget))) => {
                tracing::info!(
                    memory_bytes = budget,
                    size = %format_bytes(budget),
                    limit = limit.value,
                    margin = limit.value - budget,
                    source = %limit.source,
                    "memory budget"
                );
                budget
            }
            (None, None) => {
                tracing::warn!("no memory limit found: the memory budget is unbounded");
                u64::MAX
            }
        };
        let threads = match (threads, self.threads()) {
            (0, Some(f)) => {
                tracing::info!(threads = f.value, source = %f.source, "threads");
                usize::try_from(f.value).unwrap_or(usize::MAX).max(1)
            }
            (0, None) => {
                let n = std::thread::available_parallelism().map_or(1, usize::from);
                tracing::info!(threads = n, source = "std::thread::available_parallelism", "threads");
                n
            }
            (given, _) => {
                tracing::info!(threads = given, source = "--threads", "threads");
                given
            }
        };
        Decided { threads, memory }
    }

    /// `memory.max` (v2) and `memory.limit_in_bytes` (v1) of the process's
    /// cgroup and its parents.
    fn cgroup_memory(&mut self, host: &Host) {
        self.cgroup_limits(host, Hierarchy::Unified, "memory.max", Bound::Memory, |text, _| match text {
            "max" => Ok(None),
            _ => bytes(text).map(Some),
        });
        self.cgroup_limits(host, Hierarchy::V1("memory"), "memory.limit_in_bytes", Bound::Memory, |text, _| {
            bytes(text).map(|b| (b < V1_UNLIMITED).then_some(b))
        });
    }

    /// The CPU quota of the process's cgroup and its parents, in whole
    /// CPUs rounded up: v2 `cpu.max` ("QUOTA PERIOD" or "max PERIOD"), v1
    /// `cpu.cfs_quota_us` (-1 for none) over `cpu.cfs_period_us`.
    fn cgroup_cpus(&mut self, host: &Host) {
        self.cgroup_limits(host, Hierarchy::Unified, "cpu.max", Bound::Threads, |text, _| match text.split_once(' ') {
            Some(("max", _)) => Ok(None),
            Some((quota, period)) => cpus(quota, period).map(Some),
            None => Err("not \"QUOTA PERIOD\"".into()),
        });
        self.cgroup_limits(host, Hierarchy::V1("cpu"), "cpu.cfs_quota_us", Bound::Threads, |text, dir| {
            if text == "-1" {
                return Ok(None);
            }
            let file = format!("{dir}/cpu.cfs_period_us");
            let period = host.read(&file).ok_or_else(|| format!("{file} cannot be read"))?;
            cpus(text, period.trim()).map(Some)
        });
    }

    /// One limit file in each cgroup directory of `hierarchy` (the
    /// process's own, then its parents): `parse` gets its trimmed text and
    /// the directory, and says the limit, None for no limit, or why the
    /// text is refused. An absent file is no limit.
    fn cgroup_limits(
        &mut self,
        host: &Host,
        hierarchy: Hierarchy,
        file: &str,
        bound: Bound,
        parse: impl Fn(&str, &str) -> Result<Option<u64>, String>,
    ) {
        for dir in cgroup::dirs(host, hierarchy) {
            let path = format!("{}/{file}", dir.0);
            let Some(text) = host.read(&path) else { continue };
            let source = format!("{} {path}", hierarchy.version());
            match parse(text.trim(), &dir.0) {
                Ok(Some(value)) => self.push(bound, value, source),
                Ok(None) => {}
                Err(why) => self.ignored.push(format!("{source} = {:?}: {why}", text.trim())),
            }
        }
    }

    /// Slurm's memory for this job on this node, in MiB: the whole
    /// `SLURM_MEM_PER_NODE` (0 asks for all of the node: no bound), or
    /// `SLURM_MEM_PER_CPU` times the task's CPUs (`SLURM_CPUS_PER_TASK`,
    /// else `SLURM_CPUS_ON_NODE`).
    fn slurm_memory(&mut self, host: &Host) {
        if let Some(mib) = self.slurm_number(host, "SLURM_MEM_PER_NODE").filter(|&m| m > 0) {
            self.push_mib(mib, format!("Slurm SLURM_MEM_PER_NODE={mib} (MiB)"));
        }
        if let Some(per_cpu) = self.slurm_number(host, "SLURM_MEM_PER_CPU").filter(|&m| m > 0) {
            let cpus = ["SLURM_CPUS_PER_TASK", "SLURM_CPUS_ON_NODE"]
                .into_iter()
                .find_map(|var| Some((var, self.slurm_number(host, var).filter(|&n| n > 0)?)));
            match cpus {
                Some((var, n)) => self.push_mib(
                    per_cpu.saturating_mul(n),
                    format!("Slurm SLURM_MEM_PER_CPU={per_cpu} (MiB) x {var}={n}"),
                ),
                None => self.ignored.push(format!(
                    "Slurm SLURM_MEM_PER_CPU={per_cpu}: neither SLURM_CPUS_PER_TASK nor SLURM_CPUS_ON_NODE says how many CPUs"
                )),
            }
        }
    }

    /// A Slurm variable's whole number; a value that is not one is noted.
    fn slurm_number(&mut self, host: &Host, var: &str) -> Option<u64> {
        let text = host.var(var)?;
        match text.trim().parse() {
            Ok(n) => Some(n),
            Err(_) => {
                self.ignored.push(format!("Slurm {var}={text:?}: not a whole number"));
                None
            }
        }
    }

    fn push_mib(&mut self, mib: u64, source: String) {
        self.push(Bound::Memory, mib.saturating_mul(1 << 20), source);
    }

    /// `MemAvailable` of `/proc/meminfo` (kB, which the kernel means as KiB).
    fn available_memory(&mut self, host: &Host) {
        let Some(meminfo) = host.read("/proc/meminfo") else { return };
        let Some(line) = meminfo.lines().find_map(|l| l.strip_prefix("MemAvailable:")) else { return };
        match line.trim().strip_suffix("kB").and_then(|n| n.trim().parse::<u64>().ok()) {
            Some(kib) => self.push(Bound::Memory, kib.saturating_mul(1024), "MemAvailable in /proc/meminfo".into()),
            None => self.ignored.push(format!("MemAvailable in /proc/meminfo = {:?}: not \"N kB\"", line.trim())),
        }
    }

    /// The CPUs the process may run on: its affinity mask (what `taskset`,
    /// Slurm's task binding or a cpuset allow), as `Cpus_allowed_list` in
    /// `/proc/self/status` reads it.
    fn affinity(&mut self, host: &Host) {
        let Some(status) = host.read("/proc/self/status") else { return };
        let Some(list) = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")) else { return };
        let list = list.trim();
        match cpu_count(list) {
            Some(n) => self.push(Bound::Threads, n, format!("affinity mask (Cpus_allowed_list {list})")),
            None => self.ignored.push(format!("Cpus_allowed_list in /proc/self/status = {list:?}: not a CPU list")),
        }
    }

    /// `SLURM_CPUS_PER_TASK`: the CPUs the job asked for, a bound even
    /// where Slurm does not bind tasks to them (`TaskPlugin=task/none`)
    /// and the affinity mask shows the whole node.
    fn slurm_cpus(&mut self, host: &Host) {
        if let Some(n) = self.slurm_number(host, "SLURM_CPUS_PER_TASK").filter(|&n| n > 0) {
            self.push(Bound::Threads, n, format!("Slurm SLURM_CPUS_PER_TASK={n}"));
        }
    }

    fn push(&mut self, bound: Bound, value: u64, source: String) {
        let figures = match bound {
            Bound::Memory => &mut self.memory,
            Bound::Threads => &mut self.threads,
        };
        figures.push(Figure { value, source });
    }
}

/// Which resource a figure bounds.
#[derive(Debug, Clone, Copy)]
enum Bound {
    Memory,
    Threads,
}

fn bytes(text: &str) -> Result<u64, String> {
    text.parse().map_err(|_| "not a number of bytes".to_string())
}

/// Whole CPUs a quota per period allows, rounded up (a quota of 1.5 CPUs
/// keeps two threads busy three quarters of the time).
fn cpus(quota: &str, period: &str) -> Result<u64, String> {
    match (quota.parse::<u64>(), period.parse::<u64>()) {
        (Ok(q), Ok(p)) if q > 0 && p > 0 => Ok(q.div_ceil(p)),
        _ => Err("not a positive quota and period in microseconds".into()),
    }
}

/// How many CPUs a list such as "0-3,8,10-11" names; None unless it is
/// one, with at least one CPU.
fn cpu_count(list: &str) -> Option<u64> {
    let mut count = 0u64;
    for part in list.split(',') {
        let (first, last) = part.split_once('-').unwrap_or((part, part));
        let (first, last): (u64, u64) = (first.parse().ok()?, last.parse().ok()?);
        count += last.checked_sub(first)? + 1;
    }
    (count > 0).then_some(count)
}
