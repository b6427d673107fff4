//! Where a sweep stands, as every table, export and figure says it: a
//! table of a half-done sweep must not read as a finished one.

use serde::{Deserialize, Serialize};

/// A sweep's state and task counts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    /// `running`, `done`, `cancelled` or `failed`.
    pub state: String,
    /// Tasks with a result.
    pub tasks_done: u64,
    /// Tasks in the sweep.
    pub tasks_total: u64,
    /// Shards that failed (their tasks have no result).
    pub shards_failed: u64,
}

impl Progress {
    /// Done, with every task's result and no failed shard.
    pub fn is_finished(&self) -> bool {
        self.state == "done" && self.tasks_done >= self.tasks_total && self.shards_failed == 0
    }

    /// The state as data columns carry it: the state's name, except that a
    /// sweep marked done with results missing is `incomplete`.
    pub fn state_label(&self) -> &str {
        if self.state == "done" && !self.is_finished() {
            "incomplete"
        } else {
            &self.state
        }
    }

    /// One line saying the sweep is unfinished and how far it got; None
    /// when it is finished.
    pub fn warning(&self) -> Option<String> {
        if self.is_finished() {
            return None;
        }
        let pct = if self.tasks_total > 0 { 100.0 * self.tasks_done as f64 / self.tasks_total as f64 } else { 0.0 };
        let failed = match self.shards_failed {
            0 => String::new(),
            1 => "; 1 shard failed".into(),
            n => format!("; {n} shards failed"),
        };
        Some(format!(
            "UNFINISHED sweep ({}): {} of {} tasks have results ({pct:.1} %){failed}; figures cover only those",
            self.state_label(),
            self.tasks_done,
            self.tasks_total
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progress(state: &str, done: u64, total: u64, failed: u64) -> Progress {
        Progress { state: state.into(), tasks_done: done, tasks_total: total, shards_failed: failed }
    }

    #[test]
    fn only_a_done_sweep_with_every_result_is_finished() {
        assert_eq!(progress("done", 40, 40, 0).warning(), None);
        for p in [progress("running", 10, 40, 0), progress("cancelled", 40, 40, 0), progress("done", 39, 40, 0)] {
            assert!(!p.is_finished(), "{p:?}");
        }
        let w = progress("failed", 30, 40, 2).warning().unwrap();
        assert!(w.contains("UNFINISHED sweep (failed): 30 of 40 tasks have results (75.0 %); 2 shards failed"), "{w}");
        assert_eq!(progress("done", 39, 40, 0).state_label(), "incomplete");
        assert_eq!(progress("done", 40, 40, 0).state_label(), "done");
    }
}
