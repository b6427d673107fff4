//! A throwaway cgroup with a memory limit, to run a child under: in the
//! cgroup v2 hierarchy where it has the memory controller, else in cgroup
//! v1's memory hierarchy. Needs root and a writable cgroup file system;
//! [`MemoryCgroup::create`] says why not where it cannot.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::sleep;
use std::time::{Duration, Instant};

static SEQ: AtomicUsize = AtomicUsize::new(0);

/// A cgroup directory this test created; removed when dropped (after the
/// processes in it are gone).
pub struct MemoryCgroup {
    pub dir: PathBuf,
    /// The file its limit was written to (memory.max or memory.limit_in_bytes).
    pub limit_file: PathBuf,
}

impl MemoryCgroup {
    /// A new cgroup limited to `limit` bytes, or why one cannot be made here.
    pub fn create(limit: u64) -> Result<MemoryCgroup, String> {
        let mountinfo =
            std::fs::read_to_string("/proc/self/mountinfo").map_err(|e| format!("/proc/self/mountinfo: {e}"))?;
        let mut why = Vec::new();
        for (fstype, point, options) in mountinfo.lines().filter_map(mount) {
            let attempt = match fstype {
                "cgroup2" => MemoryCgroup::v2(Path::new(point), limit),
                "cgroup" if options.split(',').any(|o| o == "memory") => MemoryCgroup::v1(Path::new(point), limit),
                _ => continue,
            };
            match attempt {
                Ok(cgroup) => return Ok(cgroup),
                Err(e) => why.push(e),
            }
        }
        if why.is_empty() {
            why.push("no cgroup file system is mounted".into());
        }
        Err(why.join("; "))
    }

    /// The file a process writes its pid to, to move in.
    pub fn procs(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }

    fn v2(mount: &Path, limit: u64) -> Result<MemoryCgroup, String> {
        let controllers = read(&mount.join("cgroup.controllers"))?;
        if !controllers.split_whitespace().any(|c| c == "memory") {
            return Err(format!("cgroup v2 at {}: no memory controller ({controllers:?})", mount.display()));
        }
        let subtree = mount.join("cgroup.subtree_control");
        if !read(&subtree)?.split_whitespace().any(|c| c == "memory") {
            write(&subtree, "+memory")?;
        }
        MemoryCgroup::make(mount, "memory.max", limit)
    }

    fn v1(mount: &Path, limit: u64) -> Result<MemoryCgroup, String> {
        MemoryCgroup::make(mount, "memory.limit_in_bytes", limit)
    }

    fn make(parent: &Path, file: &str, limit: u64) -> Result<MemoryCgroup, String> {
        let name = format!("ksweep-e2e-{}-{}", std::process::id(), SEQ.fetch_add(1, Ordering::Relaxed));
        let dir = parent.join(name);
        std::fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let cgroup = MemoryCgroup { limit_file: dir.join(file), dir };
        write(&cgroup.limit_file, &limit.to_string())?;
        Ok(cgroup)
    }
}

impl Drop for MemoryCgroup {
    /// A killed child may take a moment to leave; the directory goes once
    /// it is empty.
    fn drop(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while let Err(e) = std::fs::remove_dir(&self.dir) {
            if Instant::now() > deadline {
                eprintln!("cannot remove the test cgroup {}: {e}", self.dir.display());
                return;
            }
            sleep(Duration::from_millis(50));
        }
    }
}

/// (fstype, mount point, super options) of a /proc/self/mountinfo line.
fn mount(line: &str) -> Option<(&str, &str, &str)> {
    let (before, after) = line.split_once(" - ")?;
    let point = before.split(' ').nth(4)?;
    let mut after = after.split(' ');
    let fstype = after.next()?;
    Some((fstype, point, after.nth(1)?))
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {text:?} to {}: {e}", path.display()))
}
