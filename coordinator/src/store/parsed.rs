//! Stored specs, parsed once: parsing a spec expands its whole grid, so the
//! services, the settling of sweeps and the queries ask here for a sweep's
//! [`Sweep`] instead of parsing its stored TOML again at each step. The
//! writer and its readers share one cache; the database keeps the text.
//!
//! A parsed sweep costs a few hundred bytes per configuration, so the cache
//! is bounded by configurations as well as by sweeps, and a sweep that
//! ends or is cancelled leaves it at once ([`ParsedSweeps::forget`]): what
//! a submitted spec costs the coordinator is given back when it stops.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};
use sweep::Sweep;

use super::SweepRecord;
use crate::error::Result;
use crate::ids::SweepKey;

/// Parsed sweeps kept besides the ones the scheduler runs (which it holds
/// itself): enough for the tables and exports a dashboard reads at once.
const KEPT: usize = 64;

/// Configurations kept in all (about 40 MB): the oldest sweeps go first,
/// though the one used last is always kept, so a large sweep being read
/// is not parsed again at each read.
const KEPT_CONFIGURATIONS: usize = 100_000;

/// The SHA-256 of a spec's text.
type TextDigest = [u8; 32];

fn digest(text: &str) -> TextDigest {
    Sha256::digest(text.as_bytes()).into()
}

/// Each recently used sweep's parsed spec, by key, most recent last.
#[derive(Debug, Default)]
pub struct ParsedSweeps {
    recent: Mutex<VecDeque<(SweepKey, String, Arc<Sweep>)>>,
    /// A spec the process that owns this coordinator parsed before
    /// submitting it ([`ParsedSweeps::offer`]), by the SHA-256 of its text:
    /// the text itself is on its way to the coordinator already.
    offered: Mutex<Option<(TextDigest, Arc<Sweep>)>>,
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
        let configurations = |recent: &VecDeque<(SweepKey, String, Arc<Sweep>)>| -> usize {
            recent.iter().map(|(_, _, s)| s.configurations().len()).sum()
        };
        while recent.len() > KEPT || (recent.len() > 1 && configurations(&recent) > KEPT_CONFIGURATIONS) {
            recent.pop_front();
        }
    }

    /// Drops the parse of sweep `key`, if kept: it ended, was cancelled or
    /// removed, and a later read parses it again.
    pub fn forget(&self, key: SweepKey) {
        self.recent.lock().unwrap_or_else(|p| p.into_inner()).retain(|(k, _, _)| *k != key);
    }

    /// Offers `sweep`, the parse of `text` under its own limits, to the next
    /// submission of `text`: a program that starts a coordinator in its own
    /// process (`ksweep run`) parsed the spec to check it and need not have
    /// it parsed again. Replaces an earlier offer.
    pub fn offer(&self, text: &str, sweep: Arc<Sweep>) {
        *self.offered.lock().unwrap_or_else(|p| p.into_inner()) = Some((digest(text), sweep));
    }

    /// The offered parse, taken, if it is of `text` and what parsing `text`
    /// under `caps` would give: its own limits are within them.
    pub fn take_offered(&self, text: &str, caps: &sweep::Limits) -> Option<Arc<Sweep>> {
        let mut offered = self.offered.lock().unwrap_or_else(|p| p.into_inner());
        let fits = |(d, s): &(TextDigest, Arc<Sweep>)| *d == digest(text) && s.limits().capped(caps) == *s.limits();
        if offered.as_ref().is_some_and(fits) {
            return offered.take().map(|(_, sweep)| sweep);
        }
        None
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
    use crate::codes::SweepState;
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

    /// A sweep that stops running leaves the cache; large sweeps push the
    /// oldest out past the configuration budget, the last one used staying.
    #[test]
    fn stopped_sweeps_leave_and_configurations_are_bounded() {
        let mut store = Store::in_memory().unwrap();
        let (record, _) = store.insert_sweep(&Sweep::parse(SPEC).unwrap()).unwrap();
        let first = store.sweep_of(&record).unwrap();
        store.set_state(record.key, SweepState::Cancelled, None).unwrap();
        assert!(!Arc::ptr_eq(&first, &store.sweep_of(&record).unwrap()), "parsed again after it stopped");
        store.set_state(record.key, SweepState::Running, None).unwrap();
        let kept = store.sweep_of(&record).unwrap();
        assert!(Arc::ptr_eq(&kept, &store.sweep_of(&record).unwrap()));

        // `configurations` boards of the knight, the (3,1) and the (3,2) leaper.
        let large = |configurations: usize| {
            let mut text = SPEC.split("[[grid]]").next().unwrap().to_string();
            for rule in ["2, 1", "3, 1", "3, 2"] {
                let to = configurations.div_ceil(3);
                text.push_str(&format!("[[grid]]\nrule = [{rule}]\ndims = [2]\nn_range = {{ from = 1, to = {to} }}\n"));
            }
            Arc::new(Sweep::parse(&text).unwrap())
        };
        let big = large(KEPT_CONFIGURATIONS / 2 + 1);
        store.parsed().keep(SweepKey(1000), "big", big.clone());
        assert!(store.parsed().take(record.key, &record.id).is_some(), "both fit");
        store.parsed().keep(record.key, &record.id, kept.clone());
        store.parsed().keep(SweepKey(1001), "bigger", big.clone());
        assert!(store.parsed().take(SweepKey(1000), "big").is_none(), "the oldest large one went");
        let huge = large(KEPT_CONFIGURATIONS + 1);
        store.parsed().keep(SweepKey(1002), "huge", huge);
        assert!(store.parsed().take(SweepKey(1002), "huge").is_some(), "the last one used stays");
    }

    /// An offered parse is taken once, for its own text, and only where the
    /// caps would not lower its limits (a parse under them could differ).
    #[test]
    fn an_offered_parse_is_taken_for_its_text_within_the_caps() {
        let parsed = ParsedSweeps::default();
        let sweep = Arc::new(Sweep::parse(SPEC).unwrap());
        let uncapped = sweep::Limits::UNCAPPED;
        parsed.offer(SPEC, sweep.clone());
        assert!(parsed.take_offered("name = \"other\"", &uncapped).is_none(), "another text");
        let tight = sweep::Limits { max_tasks: 1, ..uncapped };
        assert!(parsed.take_offered(SPEC, &tight).is_none(), "caps below its limits");
        let taken = parsed.take_offered(SPEC, sweep.limits()).expect("its own limits");
        assert!(Arc::ptr_eq(&taken, &sweep));
        assert!(parsed.take_offered(SPEC, &uncapped).is_none(), "taken once");
    }
}
