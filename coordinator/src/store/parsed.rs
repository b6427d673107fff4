//! Stored specs, parsed once: parsing a spec expands its whole grid, so the
//! services, the settling of sweeps and the queries ask here for a sweep's
//! [`Sweep`] instead of parsing its stored TOML again at each step. The
//! writer and its readers share one cache; the database keeps the text.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use sweep::Sweep;

use super::SweepRecord;
use crate::error::Result;
use crate::ids::SweepKey;

/// Parsed sweeps kept besides the ones the scheduler runs (which it holds
/// itself): enough for the tables and exports a dashboard reads at once.
const KEPT: usize = 64;

/// Each recently used sweep's parsed spec, by key, most recent last.
#[derive(Debug, Default)]
pub struct ParsedSweeps {
    recent: Mutex<VecDeque<(SweepKey, String, Arc<Sweep>)>>,
}

impl ParsedSweeps {
    /// The parsed spec of a stored sweep: kept from an earlier parse (or
    /// from its submission), else parsed from the record's text now.
    pub fn of(&self, record: &SweepRecord) -> Result<Arc<Sweep>> {
        if let Some(sweep) = self.take(record.key, &record.id) {
            self.keep(record.key, &record.id, sweep.clone());
            return Ok(sweep);
        }
        let sweep = Arc::new(Sweep::parse(&record.spec)?);
        self.keep(record.key, &record.id, sweep.clone());
        Ok(sweep)
    }

    /// Keeps `sweep` as the parse of the stored sweep `key` (its id `id`).
    pub fn keep(&self, key: SweepKey, id: &str, sweep: Arc<Sweep>) {
        let mut recent = self.recent.lock().unwrap_or_else(|p| p.into_inner());
        recent.retain(|(k, _, _)| *k != key);
        recent.push_back((key, id.to_string(), sweep));
        while recent.len() > KEPT {
            recent.pop_front();
        }
    }

    /// Removes and returns the kept parse of `key`, if it is of sweep `id`.
    fn take(&self, key: SweepKey, id: &str) -> Option<Arc<Sweep>> {
        let mut recent = self.recent.lock().unwrap_or_else(|p| p.into_inner());
        let at = recent.iter().position(|(k, i, _)| *k == key && i == id)?;
        recent.remove(at).map(|(_, _, sweep)| sweep)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    const SPEC: &str = r#"
        name = "parsed"
        seed = 1
        methods = ["w"]
        starts = 2
        [[grid]]
        rule = [2, 1]
        dims = [2]
        n = [5]
    "#;

    /// A stored sweep is parsed on first use only, by the writer and its
    /// readers alike; a key that names another sweep is parsed anew.
    #[test]
    fn a_stored_spec_is_parsed_once() {
        let mut store = Store::in_memory().unwrap();
        let (record, _) = store.insert_sweep(&Sweep::parse(SPEC).unwrap()).unwrap();
        let first = store.sweep_of(&record).unwrap();
        assert!(Arc::ptr_eq(&first, &store.sweep_of(&record).unwrap()));
        let other = SweepRecord { id: "another".into(), ..record.clone() };
        assert!(!Arc::ptr_eq(&first, &store.sweep_of(&other).unwrap()));
        for key in 0..KEPT as i64 + 1 {
            store.parsed().keep(SweepKey(key + 1000), "x", first.clone());
        }
        assert!(store.parsed().take(record.key, &record.id).is_none(), "at most {KEPT} kept");
    }
}
