//! Lazy planning: a sweep's tasks are cut into shards from a cursor, one
//! shard at a time, so a sweep of 10^10 tasks never exists as a list. A
//! shard is a range of one configuration's start indices, run with every
//! method of the sweep (so methods are compared on the same starts) that
//! the configuration did not take from stored results ([`Reused`]).

use std::sync::Arc;

use crate::cursor::Cursor;
use crate::precision::Standing;
use crate::reuse::{MethodSet, Reused};
use crate::sweep::Sweep;

/// Start indices `[start_lo, start_hi)` of one configuration's start list
/// (see [`Planner::starts`]), each run with every method of the sweep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardPlan {
    /// Index of the configuration.
    pub config: u32,
    /// First start index, inclusive.
    pub start_lo: u64,
    /// Last start index, exclusive.
    pub start_hi: u64,
}

impl ShardPlan {
    /// Starts in the shard.
    pub fn start_count(&self) -> u64 {
        self.start_hi - self.start_lo
    }
}

/// Cuts shards from a cursor and lists configurations' starts. It holds no
/// state of its own: the cursor is the caller's, and a caller that reuses
/// start lists (the coordinator) keeps its own cache of them.
#[derive(Debug, Clone, Copy)]
pub struct Planner<'a> {
    sweep: &'a Sweep,
    reused: Option<&'a Reused>,
}

impl<'a> Planner<'a> {
    /// A planner over `sweep`, every task of which runs.
    pub fn new(sweep: &'a Sweep) -> Self {
        Planner { sweep, reused: None }
    }

    /// A planner over `sweep` that plans only the methods each
    /// configuration did not take from stored results.
    pub fn reusing(sweep: &'a Sweep, reused: &'a Reused) -> Self {
        Planner { sweep, reused: Some(reused) }
    }

    /// The methods a shard of configuration `config` runs.
    pub fn methods_to_run(&self, config: u32) -> MethodSet {
        let methods = self.sweep.methods().len();
        self.reused.map_or(MethodSet::all(methods), |r| r.to_run(config, methods))
    }

    /// Starts of configuration `config` that the cursor's shards cover:
    /// none when every method was taken from stored results; with
    /// precision, those before the first look (the coordinator plans the
    /// rest from the looks, [`Planner::next_stage`]).
    fn planned_starts(&self, config: u32) -> u64 {
        if self.methods_to_run(config).is_empty() {
            return 0;
        }
        self.sweep.first_starts(config)
    }

    /// Cuts the next shard at `cursor` and advances it; None when every
    /// configuration is planned. Impossible configurations have no starts
    /// and are skipped, as are configurations with no method left to run. The shard holds about `target_cost / (methods x
    /// cost_per_task)` starts (at least 1), never crossing a configuration,
    /// and the rest of a configuration is split into equal shards rather
    /// than leaving a small one at the end.
    pub fn next_shard(&self, cursor: &mut Cursor, target_cost: f64) -> Option<ShardPlan> {
        loop {
            self.sweep.configurations().get(cursor.config as usize)?;
            let count = self.planned_starts(cursor.config);
            if cursor.start >= count {
                *cursor = Cursor { config: cursor.config + 1, start: 0 };
                continue;
            }
            let size = self.shard_size(cursor.config, count - cursor.start, target_cost);
            let shard = ShardPlan { config: cursor.config, start_lo: cursor.start, start_hi: cursor.start + size };
            cursor.start = shard.start_hi;
            if cursor.start == count {
                *cursor = Cursor { config: cursor.config + 1, start: 0 };
            }
            return Some(shard);
        }
    }

    /// Starts in the next shard of `remaining` starts of `config`: about
    /// `target_cost / (methods x cost_per_task)` (at least 1), evened out so
    /// the range ends in equal shards rather than a small one at the end.
    fn shard_size(&self, config: u32, remaining: u64, target_cost: f64) -> u64 {
        self.shard_size_for(config, self.methods_to_run(config).len(), remaining, target_cost)
    }

    /// [`Planner::shard_size`] for a shard running `methods` methods.
    fn shard_size_for(&self, config: u32, methods: usize, remaining: u64, target_cost: f64) -> u64 {
        let entry = &self.sweep.configurations()[config as usize];
        let methods = methods.max(1) as f64;
        let wanted = (target_cost / (methods * entry.cost_per_task())).round();
        // NaN and anything below one start give one start; +inf gives all.
        let wanted = if wanted >= 1.0 { wanted as u64 } else { 1 };
        let shards = remaining.div_ceil(wanted.min(remaining));
        remaining.div_ceil(shards)
    }

    /// Shards (sized as [`Planner::next_shard`] sizes them) for every start
    /// planned before `upto` that no range of `covered` holds: what a
    /// coordinator re-plans when its stored shards or results do not tile
    /// what its cursor says was planned. `covered` may overlap and come in
    /// any order.
    pub fn uncovered(&self, covered: &[ShardPlan], upto: Cursor, target_cost: f64) -> Vec<ShardPlan> {
        let mut covered = covered.to_vec();
        covered.sort_unstable_by_key(|p| (p.config, p.start_lo));
        let configs = self.sweep.configurations();
        let mut out = Vec::new();
        let mut ranges = covered.iter().peekable();
        for config in 0..configs.len().min(upto.config as usize + 1) as u32 {
            let count = self.planned_starts(config);
            let limit = if config < upto.config { count } else { upto.start.min(count) };
            let mut gap = |lo: u64, hi: u64| {
                let mut at = lo;
                while at < hi {
                    let size = self.shard_size(config, hi - at, target_cost);
                    out.push(ShardPlan { config, start_lo: at, start_hi: at + size });
                    at += size;
                }
            };
            let mut at = 0;
            while let Some(r) = ranges.next_if(|r| r.config <= config) {
                if r.config < config {
                    continue;
                }
                gap(at, r.start_lo.min(limit));
                at = at.max(r.start_hi);
            }
            gap(at, limit);
        }
        out
    }

    /// Shards for what configuration `config` of a sweep with precision
    /// needs before its cells' next looks, from where each method stands
    /// (`standings[m]`; a method taken whole from stored results stands
    /// settled):
    /// every going method runs the starts from its last complete prefix to
    /// its next checkpoint. A method whose range meets one of `failed`
    /// (shards that failed for good) cannot look again and is left out,
    /// so a failed shard is never planned over and over.
    pub fn next_stage(
        &self,
        config: u32,
        standings: &[Standing],
        failed: &[ShardPlan],
        target_cost: f64,
    ) -> Vec<(ShardPlan, MethodSet)> {
        let mut methods = MethodSet::EMPTY;
        let (mut lo, mut hi) = (u64::MAX, 0);
        for (m, standing) in standings.iter().enumerate() {
            let Standing::Going { upto, n, .. } = *standing else { continue };
            if failed.iter().any(|f| f.config == config && f.start_lo < upto && n < f.start_hi) {
                continue;
            }
            methods.insert(m);
            (lo, hi) = (lo.min(n), hi.max(upto));
        }
        if methods.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::new();
        let mut at = lo;
        while at < hi {
            let size = self.shard_size_for(config, methods.len(), hi - at, target_cost);
            out.push((ShardPlan { config, start_lo: at, start_hi: at + size }, methods));
            at += size;
        }
        out
    }

    /// The configuration's start cells: the spec's explicit starts in the
    /// order given, or the ones docs/methods.md draws
    /// (`tour::Configuration::starts(S, sweep seed)`), sorted, or with
    /// precision in the seeded order whose prefixes are uniform samples
    /// (`starts_in_order`). A shard's start index `i` is the cell
    /// `starts(config)[i]`.
    ///
    /// Panics if `config` is not an index of `Sweep::configurations`.
    pub fn starts(&self, config: u32) -> Arc<Vec<u64>> {
        let entry = &self.sweep.configurations()[config as usize];
        if let Some(cells) = entry.explicit_starts() {
            return Arc::new(cells.to_vec());
        }
        let (configuration, s, seed) = (entry.configuration(), self.sweep.starts_per_config(), self.sweep.seed());
        let starts = match self.sweep.precision() {
            Some(_) => configuration.starts_in_order(s, seed),
            None => configuration.starts(s, seed),
        }
        .expect("S was checked against tour::MAX_STARTS at parse time");
        Arc::new(starts.cells)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep(grids: &str, starts: u64, methods: &str) -> Sweep {
        Sweep::parse(&format!("name = \"p\"\nseed = 11\nstarts = {starts}\nmethods = {methods}\n{grids}")).unwrap()
    }

    /// Walks the planner to the end, checking every start of every
    /// configuration is planned exactly once, in order, within one config.
    fn walk_all(sweep: &Sweep, target_cost: f64) -> Vec<ShardPlan> {
        let planner = Planner::new(sweep);
        let mut cursor = Cursor::default();
        let mut shards = Vec::new();
        let mut expected = Cursor::default();
        while let Some(shard) = planner.next_shard(&mut cursor, target_cost) {
            // Skip configurations with no starts, as the planner must.
            while sweep.configurations()[expected.config as usize].start_count(sweep.starts_per_config()) == 0 {
                expected.config += 1;
            }
            assert_eq!((shard.config, shard.start_lo), (expected.config, expected.start), "no gap, no overlap");
            let count = sweep.configurations()[shard.config as usize].start_count(sweep.starts_per_config());
            assert!(shard.start_lo < shard.start_hi && shard.start_hi <= count);
            expected = if shard.start_hi == count {
                Cursor { config: shard.config + 1, start: 0 }
            } else {
                Cursor { config: shard.config, start: shard.start_hi }
            };
            assert_eq!(cursor, expected, "the cursor moved past the shard");
            shards.push(shard);
        }
        let rest = &sweep.configurations()[expected.config as usize..];
        assert!(rest.iter().all(|c| c.start_count(sweep.starts_per_config()) == 0), "planning stopped early");
        assert_eq!(planner.next_shard(&mut cursor, target_cost), None, "stays done");
        shards
    }

    const MIXED: &str = r#"
        [[grid]]
        rule = [2, 1]
        dims = [2, 3]
        n_range = { from = 3, to = 12 }
        [[grid]]
        rule = [3, 1]
        dims = [2]
        n = [4, 5, 1]
        [[grid]]
        rule = [1, 2, 2]
        shapes = [[5, 6, 7], [1, 1, 1]]
    "#;

    #[test]
    fn the_planner_covers_every_task_once() {
        let s = sweep(MIXED, 30, r#"["w", "w+", "aw+"]"#);
        for target in [0.0, 1.0, 5e3, 3e4, 1e6, f64::INFINITY, f64::NAN] {
            let shards = walk_all(&s, target);
            let tasks: u64 = shards.iter().map(|p| p.start_count() * 3).sum();
            assert_eq!(tasks, s.total_tasks(), "target {target}");
        }
        assert_eq!(walk_all(&s, 0.0).len() as u64, s.total_tasks() / 3, "one start per shard");
    }

    #[test]
    fn uncovered_finds_every_start_no_range_holds() {
        let s = sweep(MIXED, 30, r#"["w", "aw"]"#);
        let planner = Planner::new(&s);
        let all = walk_all(&s, 2e4);
        let end = Cursor { config: s.configurations().len() as u32, start: 0 };
        assert_eq!(planner.uncovered(&all, end, 2e4), vec![], "a full plan has no gap");
        let tasks = |plans: &[ShardPlan]| plans.iter().map(ShardPlan::start_count).sum::<u64>();
        assert_eq!(tasks(&planner.uncovered(&[], end, 2e4)) * 2, s.total_tasks(), "nothing covered: all of it");
        // Drop shards 3 and 7, shuffle and duplicate the rest: exactly those come back.
        let mut kept: Vec<ShardPlan> =
            all.iter().enumerate().filter(|(i, _)| *i != 3 && *i != 7).map(|(_, p)| p.clone()).collect();
        kept.reverse();
        kept.push(kept[0].clone());
        let gaps = planner.uncovered(&kept, end, 2e4);
        assert_eq!(gaps, vec![all[3].clone(), all[7].clone()]);
        // Only what was planned before `upto` counts.
        let upto = Cursor { config: all[7].config, start: all[7].start_lo };
        assert_eq!(planner.uncovered(&kept, upto, 2e4), vec![all[3].clone()]);
        // A gap larger than a shard is cut to size.
        let one_shard = planner.uncovered(&[], end, f64::INFINITY);
        assert!(planner.uncovered(&[], end, 0.0).len() > one_shard.len());
    }

    #[test]
    fn taken_methods_are_not_planned() {
        let s = sweep("[[grid]]\nrule = [2, 1]\ndims = [2]\nn = [5, 6, 7]", 4, r#"["w", "aw"]"#);
        let mut second = MethodSet::EMPTY;
        second.insert(1);
        // 5x5: both methods stored; 6x6: aw stored; 7x7: nothing.
        let reused = Reused::new(vec![MethodSet::all(2), second]);
        let planner = Planner::reusing(&s, &reused);
        let mut cursor = Cursor::default();
        let mut shards = Vec::new();
        while let Some(p) = planner.next_shard(&mut cursor, 0.0) {
            shards.push(p);
        }
        assert!(shards.iter().all(|p| p.config != 0), "nothing of 5x5 runs: {shards:?}");
        assert_eq!(shards.iter().filter(|p| p.config == 1).count(), 4, "every start of 6x6, for w");
        assert_eq!(planner.methods_to_run(1).nth(0), Some(0));
        assert_eq!(planner.methods_to_run(1).len(), 1);
        assert_eq!(planner.methods_to_run(2).len(), 2);
        let end = Cursor { config: 3, start: 0 };
        assert_eq!(planner.uncovered(&shards, end, 0.0), vec![], "a taken configuration is no gap");
        assert_eq!(Planner::new(&s).uncovered(&shards, end, 0.0).len(), 4, "without reuse, 5x5 is missing");
    }

    #[test]
    fn impossible_configurations_are_skipped() {
        let s = sweep("[[grid]]\nrule = [3, 1]\ndims = [2, 3]\nn_range = { from = 2, to = 9 }", 100, r#"["w"]"#);
        assert_eq!(s.configurations().len(), 16);
        assert_eq!(s.total_tasks(), 0);
        let planner = Planner::new(&s);
        let mut cursor = Cursor::default();
        assert_eq!(planner.next_shard(&mut cursor, 1e6), None);
        assert_eq!(cursor.config, 16, "the cursor ends past the last configuration");
    }

    #[test]
    fn planner_starts_are_the_engines() {
        let s = sweep(MIXED, 30, r#"["w"]"#);
        let planner = Planner::new(&s);
        for c in s.configurations() {
            let expected = c.configuration().starts(30, 11).unwrap().cells;
            let got = planner.starts(c.index);
            assert_eq!(*got, expected, "{}", c.shape_label());
            assert_eq!(got.len() as u64, c.start_count(30));
        }
    }

    #[test]
    fn shard_size_follows_cost() {
        // 5x5: 13 starts of 25 cells x 8 moves; everything in one shard.
        let tiny = sweep("[[grid]]\nrule = [2, 1]\ndims = [2]\nn = [5]", 100, r#"["w", "aw"]"#);
        let mut cursor = Cursor::default();
        let shard = Planner::new(&tiny).next_shard(&mut cursor, 1e6).unwrap();
        assert_eq!(shard.start_count(), 13);
        // 3000x3000: one start costs 2 x 9e6 x 8 = 1.44e8, over the target.
        let huge = sweep("[[grid]]\nrule = [2, 1]\ndims = [2]\nn = [3000]", 100, r#"["w", "aw"]"#);
        let planner = Planner::new(&huge);
        let mut cursor = Cursor::default();
        let sizes: Vec<u64> =
            std::iter::from_fn(|| planner.next_shard(&mut cursor, 1e6)).map(|p| p.start_count()).collect();
        assert_eq!(sizes, vec![1; 100]);
        // 100 starts at about 30 per shard: four even shards, not 30+30+30+10.
        let target = 30.0 * 2.0 * huge.configurations()[0].cost_per_task();
        let mut cursor = Cursor::default();
        let sizes: Vec<u64> =
            std::iter::from_fn(|| planner.next_shard(&mut cursor, target)).map(|p| p.start_count()).collect();
        assert_eq!(sizes, vec![25; 4]);
    }

    #[test]
    fn a_saved_cursor_resumes_the_same_plan() {
        let s = sweep(MIXED, 30, r#"["w", "mw"]"#);
        let all = walk_all(&s, 2e4);
        let planner = Planner::new(&s);
        let mut cursor = Cursor::default();
        let mut first: Vec<ShardPlan> = (0..7).map_while(|_| planner.next_shard(&mut cursor, 2e4)).collect();
        let saved = serde_json::to_string(&cursor).unwrap();
        let mut resumed: Cursor = serde_json::from_str(&saved).unwrap();
        let fresh = Planner::new(&s);
        first.extend(std::iter::from_fn(|| fresh.next_shard(&mut resumed, 2e4)));
        assert_eq!(first, all);
    }

    #[test]
    fn a_sweep_of_1e8_tasks_plans_lazily() {
        // 1001 boards of 1000^2..2000^2 cells, 100,000 starts each.
        let s = sweep("[[grid]]\nrule = [2, 1]\ndims = [2]\nn_range = { from = 1000, to = 2000 }", 100_000, r#"["w"]"#);
        assert_eq!(s.total_tasks(), 100_100_000);
        let planner = Planner::new(&s);
        let mut cursor = Cursor::default();
        let target = 1000.0 * s.configurations()[0].cost_per_task();
        let mut planned = 0;
        for _ in 0..300 {
            let shard = planner.next_shard(&mut cursor, target).unwrap();
            assert!(shard.start_count() <= 1000);
            planned += shard.start_count();
            let cells = planner.starts(shard.config);
            assert_eq!(cells.len(), 100_000);
        }
        assert_eq!(cursor.config, 2, "about 100 shards a configuration: 3 of 1001 touched");
        // Cutting the rest needs no start lists at all.
        let mut shards = 300;
        while let Some(shard) = planner.next_shard(&mut cursor, f64::INFINITY) {
            shards += 1;
            planned += shard.start_count();
        }
        assert_eq!(planned, s.total_tasks());
        assert_eq!(shards, 300 + 1001 - 2, "the rest of config 2, then one shard each");
    }
}
