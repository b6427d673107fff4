//! Where the cells of a sweep with adaptive precision stand, read from its
//! stored results in start order ([`sweep::precision::Standing`]): what
//! plans its next shards and cuts its tables at each cell's last look, so
//! a result past it (a rerun, one reused from another sweep) changes
//! nothing.

use rusqlite::params;
use sweep::precision::Standing;
use sweep::{Cursor, MethodSet, Planner, ShardPlan, Sweep};

use super::Store;
use crate::error::{Error, Result};
use crate::ids::SweepKey;
use crate::model::OpenShard;

/// One configuration's standings, one per method of the sweep.
pub type ConfigStandings = (u32, Vec<Standing>);

impl Store {
    /// Each (configuration, method) cell's standing, configurations in
    /// order (only `config` when given, none impossible); empty for a sweep
    /// of a fixed S.
    pub fn standings(&self, key: SweepKey, sweep: &Sweep, config: Option<u32>) -> Result<Vec<ConfigStandings>> {
        if sweep.precision().is_none() {
            return Ok(Vec::new());
        }
        let methods = sweep.methods().len();
        let configs: Vec<u32> = match config {
            Some(c) => vec![c],
            None => (0..sweep.configurations().len() as u32).collect(),
        };
        let mut out = Vec::new();
        let mut stmt = self
            .conn
            .prepare_cached("SELECT method, start_index, success FROM results WHERE sweep = ?1 AND config = ?2")?;
        for c in configs {
            let (Some(entry), Some(precision)) = (sweep.configurations().get(c as usize), sweep.cell_precision(c))
            else {
                continue;
            };
            if precision.cap == 0 {
                continue;
            }
            let mut flags = vec![vec![None; precision.cap as usize]; methods];
            let mut q = stmt.query(params![key.0, c])?;
            while let Some(r) = q.next()? {
                let (m, i): (u32, i64) = (r.get(0)?, r.get(1)?);
                let slot = flags.get_mut(m as usize).and_then(|f| f.get_mut(i as usize)).ok_or_else(|| {
                    Error::Corrupt(format!("a result of configuration {c}, method {m}, start {i}: outside the sweep"))
                })?;
                *slot = Some(r.get::<_, bool>(2)?);
            }
            let exhaustive = precision.cap == entry.eligible_count();
            let standings = flags.iter().map(|f| precision.standing(exhaustive, |i| f[i as usize])).collect();
            out.push((c, standings));
        }
        Ok(out)
    }

    /// The shards a sweep with adaptive precision needs before its cells'
    /// next looks, for `config` (every configuration when None): each
    /// going method's starts from its last complete prefix to its next
    /// checkpoint, never over a shard that failed for good
    /// ([`Planner::next_stage`]). Empty once every cell has stopped.
    pub fn next_stages(
        &self,
        key: SweepKey,
        sweep: &Sweep,
        config: Option<u32>,
        target_cost: f64,
    ) -> Result<Vec<(ShardPlan, MethodSet)>> {
        let standings = self.standings(key, sweep, config)?;
        self.stages_of(key, sweep, &standings, |_| true, target_cost)
    }

    /// What a coordinator taking in a sweep with adaptive precision needs
    /// beyond its stored shards: the methods of each open shard of a later
    /// stage (those going on over its starts; stored shards do not keep
    /// them), and the next stage of every configuration the cursor passed
    /// that has no open shard (a crash between a stage's end and its next
    /// cut). Nothing for a fixed S.
    pub fn stages_at_load(
        &self,
        key: SweepKey,
        sweep: &Sweep,
        open: &mut [OpenShard],
        cursor: Cursor,
        target_cost: f64,
    ) -> Result<Vec<(ShardPlan, MethodSet)>> {
        let standings = self.standings(key, sweep, None)?;
        for shard in open.iter_mut() {
            let config = shard.plan.config;
            if shard.plan.start_lo < sweep.first_starts(config) {
                continue;
            }
            let Some((_, cells)) = standings.iter().find(|(c, _)| *c == config) else { continue };
            let mut going = MethodSet::EMPTY;
            for (m, standing) in cells.iter().enumerate() {
                if let Standing::Going { upto, n, .. } = *standing {
                    if n <= shard.plan.start_lo && shard.plan.start_lo < upto {
                        going.insert(m);
                    }
                }
            }
            // A shard no cell needs any more runs what its configuration
            // runs: its results count nothing, but it settles.
            shard.methods = (!going.is_empty()).then_some(going);
        }
        let quiet = |c: u32| c < cursor.config && !open.iter().any(|s| s.plan.config == c);
        self.stages_of(key, sweep, &standings, quiet, target_cost)
    }

    /// The next stages of the configurations `wanted` admits.
    fn stages_of(
        &self,
        key: SweepKey,
        sweep: &Sweep,
        standings: &[ConfigStandings],
        wanted: impl Fn(u32) -> bool,
        target_cost: f64,
    ) -> Result<Vec<(ShardPlan, MethodSet)>> {
        if standings.is_empty() {
            return Ok(Vec::new());
        }
        let failed: Vec<ShardPlan> = self.failed_shards(key, usize::MAX)?.into_iter().map(|f| f.plan).collect();
        let planner = Planner::new(sweep);
        let mut out = Vec::new();
        for (c, cells) in standings.iter().filter(|(c, _)| wanted(*c)) {
            out.extend(planner.next_stage(*c, cells, &failed, target_cost));
        }
        Ok(out)
    }
}
