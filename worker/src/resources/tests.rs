use std::path::PathBuf;

use super::*;

const MIB: u64 = 1 << 20;

/// A host root in a temporary directory, removed when dropped.
struct Fixture(PathBuf);

impl Fixture {
    fn new(name: &str) -> Fixture {
        let dir = std::env::temp_dir().join(format!("ksweep-resources-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Fixture(dir)
    }

    /// Writes `text` at the host path `path`.
    fn file(&self, path: &str, text: &str) -> &Fixture {
        let at = self.0.join(path.trim_start_matches('/'));
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::fs::write(at, text).unwrap();
        self
    }

    fn host(&self, env: &[(&str, &str)]) -> Host {
        Host::at(&self.0, env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
    }

    fn bounds(&self, env: &[(&str, &str)]) -> Bounds {
        Bounds::read(&self.host(env))
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn figure(value: u64, source: &str) -> Figure {
    Figure { value, source: source.into() }
}

const V2_MOUNT: &str = "22 27 0:21 / /proc rw,relatime - proc proc rw\n\
    30 25 0:26 / /sys/fs/cgroup rw,nosuid,nodev shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n";

const V1_MOUNTS: &str = "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory\n\
    32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:6 - cgroup cgroup rw,cpu,cpuacct\n\
    41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

/// cgroup v2, a pod's limit on the parent of the container's cgroup: the
/// parent binds; the container's CPU quota of 1.5 CPUs allows 2 threads.
#[test]
fn v2_limits_come_from_the_own_cgroup_and_its_parents() {
    let f = Fixture::new("v2");
    f.file("/proc/self/cgroup", "0::/kubepods/pod1/c1\n")
        .file("/proc/self/mountinfo", V2_MOUNT)
        .file("/sys/fs/cgroup/kubepods/pod1/c1/memory.max", "max\n")
        .file("/sys/fs/cgroup/kubepods/pod1/c1/cpu.max", "150000 100000\n")
        .file("/sys/fs/cgroup/kubepods/pod1/memory.max", "314572800\n")
        .file("/sys/fs/cgroup/kubepods/pod1/cpu.max", "max 100000\n")
        .file("/sys/fs/cgroup/kubepods/memory.max", "1073741824\n")
        .file("/proc/meminfo", "MemTotal:       24683656 kB\nMemAvailable:   23687416 kB\n")
        .file("/proc/self/status", "Name:\tksweep\nCpus_allowed:\tff\nCpus_allowed_list:\t0-7\n");
    let b = f.bounds(&[]);
    assert_eq!(
        b.memory,
        [
            figure(300 * MIB, "cgroup v2 /sys/fs/cgroup/kubepods/pod1/memory.max"),
            figure(1 << 30, "cgroup v2 /sys/fs/cgroup/kubepods/memory.max"),
            figure(23687416 * 1024, "MemAvailable in /proc/meminfo"),
        ]
    );
    assert_eq!(
        b.threads,
        [
            figure(2, "cgroup v2 /sys/fs/cgroup/kubepods/pod1/c1/cpu.max"),
            figure(8, "affinity mask (Cpus_allowed_list 0-7)"),
        ]
    );
    assert!(b.ignored.is_empty(), "{:?}", b.ignored);
    let (tightest, budget) = b.memory_budget().unwrap();
    assert_eq!((tightest.value, budget), (300 * MIB, 300 * MIB - 64 * MIB), "less the 64 MiB least margin");
    assert_eq!(b.decide(0, None), Decided { threads: 2, memory: 236 * MIB });
}

/// cgroup v1 (this is how the worker ran): the memory controller's
/// own hierarchy, "no limit" written as about 2^63 on its root, the CPU
/// quota on the combined cpu,cpuacct hierarchy.
#[test]
fn v1_limits_come_from_each_controllers_hierarchy() {
    let f = Fixture::new("v1");
    f.file("/proc/self/cgroup", "9:name=systemd:/\n4:memory:/job/ksweep\n2:cpu,cpuacct:/job/ksweep\n0::/\n")
        .file("/proc/self/mountinfo", V1_MOUNTS)
        .file("/sys/fs/cgroup/memory/job/ksweep/memory.limit_in_bytes", "314572800\n")
        .file("/sys/fs/cgroup/memory/job/memory.limit_in_bytes", "9223372036854771712\n")
        .file("/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854710272\n")
        .file("/sys/fs/cgroup/cpu,cpuacct/job/ksweep/cpu.cfs_quota_us", "-1\n")
        .file("/sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_quota_us", "50000\n")
        .file("/sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_period_us", "100000\n");
    let b = f.bounds(&[]);
    assert_eq!(b.memory, [figure(300 * MIB, "cgroup v1 /sys/fs/cgroup/memory/job/ksweep/memory.limit_in_bytes")]);
    assert_eq!(b.threads, [figure(1, "cgroup v1 /sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_quota_us")], "half a CPU: 1");
    assert!(b.ignored.is_empty(), "{:?}", b.ignored);
}

/// A container sees only its part of the hierarchy: the mount's root is
/// its cgroup, so the limit sits at the mount point. A cgroup outside
/// every mount gives no directory, not a wrong one.
#[test]
fn a_containers_mount_root_is_taken_off_its_cgroup_path() {
    let f = Fixture::new("container");
    f.file("/proc/self/cgroup", "4:memory:/docker/abc\n")
        .file("/proc/self/mountinfo", "35 31 0:32 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n")
        .file("/sys/fs/cgroup/memory/memory.limit_in_bytes", "314572800\n");
    assert_eq!(f.bounds(&[]).memory, [figure(300 * MIB, "cgroup v1 /sys/fs/cgroup/memory/memory.limit_in_bytes")]);

    f.file("/proc/self/cgroup", "4:memory:/docker/abcdef\n");
    assert_eq!(f.bounds(&[]).memory, [], "/docker/abcdef is not under /docker/abc");
}

#[test]
fn slurm_memory_per_node_and_per_cpu() {
    let f = Fixture::new("slurm");
    let b = f.bounds(&[("SLURM_MEM_PER_NODE", "2048")]);
    assert_eq!(b.memory, [figure(2 << 30, "Slurm SLURM_MEM_PER_NODE=2048 (MiB)")]);
    // The task's CPUs before the node's.
    let b = f.bounds(&[("SLURM_MEM_PER_CPU", "1000"), ("SLURM_CPUS_PER_TASK", "4"), ("SLURM_CPUS_ON_NODE", "16")]);
    assert_eq!(b.memory, [figure(4000 * MIB, "Slurm SLURM_MEM_PER_CPU=1000 (MiB) x SLURM_CPUS_PER_TASK=4")]);
    let b = f.bounds(&[("SLURM_MEM_PER_CPU", "1000"), ("SLURM_CPUS_ON_NODE", "2")]);
    assert_eq!(b.memory, [figure(2000 * MIB, "Slurm SLURM_MEM_PER_CPU=1000 (MiB) x SLURM_CPUS_ON_NODE=2")]);
    // --mem=0 asks for the whole node: no bound of its own.
    assert_eq!(f.bounds(&[("SLURM_MEM_PER_NODE", "0")]), Bounds::default());
}

/// A Slurm job's CPUs bound its threads even where its tasks are not
/// bound to them (the affinity mask then shows the whole node).
#[test]
fn slurm_cpus_per_task_bounds_threads() {
    let f = Fixture::new("slurm-cpus");
    f.file("/proc/self/status", "Cpus_allowed_list:\t0-7\n");
    let b = f.bounds(&[("SLURM_CPUS_PER_TASK", "2"), ("SLURM_CPUS_ON_NODE", "8")]);
    assert_eq!(b.threads(), Some(&figure(2, "Slurm SLURM_CPUS_PER_TASK=2")));
    let b = f.bounds(&[("SLURM_CPUS_PER_TASK", "16")]);
    assert_eq!(b.threads(), Some(&figure(8, "affinity mask (Cpus_allowed_list 0-7)")), "the tighter bound wins");
}

/// Values that are not what the kernel or Slurm writes are refused, each
/// noted with its source, and bound nothing.
#[test]
fn garbage_is_noted_and_bounds_nothing() {
    let f = Fixture::new("garbage");
    f.file("/proc/self/cgroup", "0::/w\n")
        .file("/proc/self/mountinfo", V2_MOUNT)
        .file("/sys/fs/cgroup/w/memory.max", "lots\n")
        .file("/sys/fs/cgroup/w/cpu.max", "100000 0\n")
        .file("/sys/fs/cgroup/cpu.max", "-5\n")
        .file("/proc/meminfo", "MemAvailable:   many kB\n")
        .file("/proc/self/status", "Cpus_allowed_list:\t3-1\n");
    let b = f.bounds(&[("SLURM_MEM_PER_NODE", "4G"), ("SLURM_MEM_PER_CPU", "100")]);
    assert_eq!((b.memory.len(), b.threads.len()), (0, 0), "{b:?}");
    let noted = b.ignored.join("\n");
    for needle in [
        "cgroup v2 /sys/fs/cgroup/w/memory.max = \"lots\": not a number of bytes",
        "cgroup v2 /sys/fs/cgroup/w/cpu.max = \"100000 0\": not a positive quota",
        "cgroup v2 /sys/fs/cgroup/cpu.max = \"-5\": not \"QUOTA PERIOD\"",
        "MemAvailable in /proc/meminfo = \"many kB\"",
        "Cpus_allowed_list in /proc/self/status = \"3-1\"",
        "Slurm SLURM_MEM_PER_NODE=\"4G\": not a whole number",
        "Slurm SLURM_MEM_PER_CPU=100: neither SLURM_CPUS_PER_TASK nor SLURM_CPUS_ON_NODE",
    ] {
        assert!(noted.contains(needle), "{needle:?} not in\n{noted}");
    }
    assert_eq!(b.ignored.len(), 7, "{noted}");
}

#[test]
fn with_no_bound_the_flags_or_the_fallbacks_decide() {
    let f = Fixture::new("nothing");
    let b = f.bounds(&[]);
    assert_eq!(b, Bounds::default());
    let d = b.decide(0, None);
    assert_eq!(d.memory, u64::MAX, "unbounded, as before");
    assert!(d.threads >= 1);
    // The flags win over any bound.
    let b = Bounds { memory: vec![figure(300 * MIB, "x")], threads: vec![figure(2, "y")], ignored: vec![] };
    assert_eq!(b.decide(7, Some(MIB)), Decided { threads: 7, memory: MIB });
    assert_eq!(b.decide(0, Some(GIB)), Decided { threads: 2, memory: GIB }, "above the limit: warned, still used");
}

const GIB: u64 = 1 << 30;

#[test]
fn the_margin_is_a_tenth_at_least_64_mib_at_most_half() {
    assert_eq!(margin(300 * MIB), 64 * MIB);
    assert_eq!(margin(10 * GIB), GIB);
    assert_eq!(margin(100 * MIB), 50 * MIB);
    assert_eq!(margin(0), 0);
}

#[test]
fn cpu_lists_count_their_cpus() {
    assert_eq!(cpu_count("0-3,8,10-11"), Some(7));
    assert_eq!(cpu_count("5"), Some(1));
    for bad in ["", "3-1", "a", "0-", "1,,2"] {
        assert_eq!(cpu_count(bad), None, "{bad:?}");
    }
}

/// On Linux, this machine's figures read: MemAvailable and the affinity
/// mask always exist.
#[test]
fn this_host_has_figures_on_linux() {
    if cfg!(target_os = "linux") {
        let b = Bounds::read(&Host::this());
        assert!(b.memory.iter().any(|f| f.source.starts_with("MemAvailable") && f.value > 0), "{b:?}");
        assert!(b.threads.iter().any(|f| f.source.starts_with("affinity mask") && f.value > 0), "{b:?}");
        assert!(b.ignored.is_empty(), "{b:?}");
    }
}
