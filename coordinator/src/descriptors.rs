//! The process's open-file limit, shared out. The gRPC port, the dashboard
//! and the database draw on one pool of file descriptors: once it is empty,
//! `accept` fails on both ports (1,100 idle dashboard requests left `status`
//! and `submit` waiting 20 s), so the two ports' connection bounds are sized
//! to fit under the limit together, with room kept for the rest.

use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};

/// Descriptors kept for everything but connections: the database with its
/// WAL, shared memory and lock file, its readers (three each), listeners,
/// stdio, the runtime's own, and a worker in the same process (`ksweep run`).
pub(crate) const RESERVED: u64 = 64;

/// The fewest dashboard connections kept when the limit is tight.
const MIN_DASHBOARD: usize = 8;

/// Connections served at once on each port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Split {
    pub grpc: usize,
    /// 0 when the dashboard is off.
    pub dashboard: usize,
}

/// The bounds of `wanted` that fit under `limit` open files with
/// [`RESERVED`] kept aside: the dashboard gives way first (down to a few
/// connections), then gRPC. No limit (or one that cannot be read) keeps
/// `wanted`.
pub(crate) fn split(limit: Option<u64>, wanted: Split) -> Split {
    let Some(limit) = limit else { return wanted };
    let room = usize::try_from(limit.saturating_sub(RESERVED)).unwrap_or(usize::MAX);
    if wanted.grpc.saturating_add(wanted.dashboard) <= room {
        return wanted;
    }
    let dashboard = wanted.dashboard.min(room.saturating_sub(wanted.grpc).max(MIN_DASHBOARD));
    let grpc = wanted.grpc.min(room.saturating_sub(dashboard)).max(1);
    Split { grpc, dashboard }
}

/// The open-file limit, first raised towards the hard limit as far as
/// `needed` descriptors take (many systems start processes at 1,024).
/// None when unlimited.
pub(crate) fn open_file_limit(needed: u64) -> Option<u64> {
    let limit = getrlimit(Resource::Nofile);
    let current = limit.current?;
    if current >= needed {
        return Some(current);
    }
    let raised = limit.maximum.map_or(needed, |hard| hard.min(needed));
    let wanted = Rlimit { current: Some(raised), maximum: limit.maximum };
    if raised > current && setrlimit(Resource::Nofile, wanted).is_ok() {
        return Some(raised);
    }
    Some(current)
}

#[cfg(test)]
mod tests {
    use super::*;

    const WANTED: Split = Split { grpc: 1024, dashboard: 128 };

    #[test]
    fn bounds_that_fit_are_kept() {
        assert_eq!(split(None, WANTED), WANTED);
        assert_eq!(split(Some(1024 + 128 + RESERVED), WANTED), WANTED);
        assert_eq!(split(Some(1 << 20), WANTED), WANTED);
    }

    #[test]
    fn the_dashboard_gives_way_first_then_grpc() {
        // Room for gRPC and 100 dashboard connections.
        assert_eq!(split(Some(1024 + 100 + RESERVED), WANTED), Split { grpc: 1024, dashboard: 100 });
        // Room for gRPC alone: the dashboard keeps a few, taken from gRPC.
        let s = split(Some(1024 + RESERVED), WANTED);
        assert_eq!(s, Split { grpc: 1024 - MIN_DASHBOARD, dashboard: MIN_DASHBOARD });
        // A tiny limit: still at least one gRPC connection, and never above it.
        let s = split(Some(20), WANTED);
        assert_eq!(s, Split { grpc: 1, dashboard: MIN_DASHBOARD });
        let off = split(Some(512), Split { grpc: 1024, dashboard: 0 });
        assert_eq!(off, Split { grpc: 512 - RESERVED as usize, dashboard: 0 });
    }

    #[test]
    fn every_split_fits_when_the_limit_allows() {
        for limit in [200u64, 300, 1000, 1100, 1300, 5000] {
            for wanted in [WANTED, Split { grpc: 10, dashboard: 500 }, Split { grpc: 4000, dashboard: 0 }] {
                let s = split(Some(limit), wanted);
                assert!(s.grpc <= wanted.grpc && s.dashboard <= wanted.dashboard, "{limit} {wanted:?} {s:?}");
                assert!((s.grpc + s.dashboard) as u64 + RESERVED <= limit, "{limit} {wanted:?} {s:?}");
            }
        }
    }

    #[test]
    fn the_limit_is_read() {
        let limit = open_file_limit(0);
        assert!(limit.is_none_or(|l| l > 0));
    }
}
