//! Which cgroup directories hold this process's limits: its own cgroup
//! (from `/proc/self/cgroup`) under the mount of its hierarchy (from
//! `/proc/self/mountinfo`), then each parent up to that mount, since a
//! parent's limit binds its children too.

use super::Host;

/// A cgroup hierarchy the process belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hierarchy<'a> {
    /// The cgroup v2 unified hierarchy (`0::/path`).
    Unified,
    /// The cgroup v1 hierarchy of one controller (`4:memory:/path`).
    V1(&'a str),
}

impl Hierarchy<'_> {
    /// "cgroup v2" or "cgroup v1", for sources.
    pub fn version(self) -> &'static str {
        match self {
            Hierarchy::Unified => "cgroup v2",
            Hierarchy::V1(_) => "cgroup v1",
        }
    }
}

/// A cgroup directory: its path as the host names it, for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dir(pub String);

/// The process's own cgroup directory in `hierarchy`, then its parents up
/// to the hierarchy's mount point; empty where the process is in no such
/// hierarchy or it is not mounted where its cgroup can be reached (a
/// container may see only part of the host's hierarchy).
pub fn dirs(host: &Host, hierarchy: Hierarchy) -> Vec<Dir> {
    let (Some(cgroups), Some(mounts)) = (host.read("/proc/self/cgroup"), host.read("/proc/self/mountinfo")) else {
        return Vec::new();
    };
    let Some(path) = cgroups.lines().find_map(|line| own_path(line, hierarchy)) else {
        return Vec::new();
    };
    for mount in mounts.lines().filter_map(Mount::parse).filter(|m| m.holds(hierarchy)) {
        if let Some(relative) = under(path, mount.root) {
            let point = mount.point.trim_end_matches('/');
            let mut out = Vec::new();
            let mut relative = relative.trim_matches('/');
            loop {
                out.push(Dir(if relative.is_empty() { point.to_string() } else { format!("{point}/{relative}") }));
                if relative.is_empty() {
                    return out;
                }
                relative = relative.rsplit_once('/').map_or("", |(parent, _)| parent);
            }
        }
    }
    Vec::new()
}

/// The cgroup path of a `/proc/self/cgroup` line ("ID:CONTROLLERS:PATH")
/// if it is of `hierarchy`.
fn own_path<'a>(line: &'a str, hierarchy: Hierarchy) -> Option<&'a str> {
    let mut fields = line.splitn(3, ':');
    let (id, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
    let matches = match hierarchy {
        Hierarchy::Unified => id == "0" && controllers.is_empty(),
        Hierarchy::V1(name) => controllers.split(',').any(|c| c == name),
    };
    (matches && path.starts_with('/')).then_some(path)
}

/// `path` relative to a mount's `root`, if the mount holds it.
fn under<'a>(path: &'a str, root: &str) -> Option<&'a str> {
    let root = root.trim_end_matches('/');
    let rest = path.strip_prefix(root)?;
    (rest.is_empty() || rest.starts_with('/')).then_some(rest)
}

/// The fields of a `/proc/self/mountinfo` line that matter here.
struct Mount<'a> {
    /// The part of the hierarchy mounted (`/` unless a container sees less).
    root: &'a str,
    point: &'a str,
    fstype: &'a str,
    /// Super options: a v1 hierarchy's controllers are among them.
    options: &'a str,
}

impl<'a> Mount<'a> {
    /// "36 35 0:30 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory"
    fn parse(line: &'a str) -> Option<Mount<'a>> {
        let (before, after) = line.split_once(" - ")?;
        let mut before = before.split(' ');
        let (root, point) = (before.nth(3)?, before.next()?);
        let mut after = after.split(' ');
        let (fstype, options) = (after.next()?, after.nth(1)?);
        Some(Mount { root, point, fstype, options })
    }

    fn holds(&self, hierarchy: Hierarchy) -> bool {
        match hierarchy {
            Hierarchy::Unified => self.fstype == "cgroup2",
            Hierarchy::V1(name) => self.fstype == "cgroup" && self.options.split(',').any(|o| o == name),
        }
    }
}
