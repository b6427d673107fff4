//! Sweeps: stored once per spec id, resolved by id, their state and cursor.

use std::collections::HashMap;

use rusqlite::{params, OptionalExtension};
use sweep::{Cursor, Listing, Sweep, SweepLine};

use super::{now_ms, Known, Store};
use crate::codes::SweepState;
use crate::error::{Error, Result};
use crate::ids::SweepKey;

/// A sweep's row.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepRecord {
    pub key: SweepKey,
    pub id: String,
    pub name: String,
    pub spec: String,
    pub state: SweepState,
    pub tasks_total: u64,
    pub tasks_done: u64,
    pub successes: u64,
    pub configurations: u64,
    pub impossible: u64,
    pub cursor: Cursor,
    pub shards_failed: u64,
    pub error: Option<String>,
    /// When it was submitted.
    pub created_ms: u64,
    /// When its first result was stored (None before, and for a sweep of a
    /// database older than schema version 3 that had results already).
    pub first_result_ms: Option<u64>,
    /// When it reached a terminal state (None while it runs, and for a
    /// sweep that ended before schema version 3).
    pub finished_ms: Option<u64>,
    /// False when it was submitted with `--no-reuse`: every task ran again.
    pub reuse: bool,
    /// Tasks it took from stored results when it was submitted.
    pub tasks_reused: u64,
    /// Wall time of its ended runs, in ms (schema version 6).
    pub ran_ms: u64,
    /// When its current run stored its first result; None between runs.
    pub run_from_ms: Option<u64>,
    /// When it last stored a result.
    pub last_result_ms: Option<u64>,
}

const SWEEP_COLUMNS: &str = "key, id, name, spec, state, tasks_total, tasks_done, successes, \
     configurations, impossible, cursor_config, cursor_start, shards_failed, error, created_ms, first_result_ms, finished_ms, reuse, tasks_reused, \
     ran_ms, run_from_ms, last_result_ms";

fn sweep_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SweepRecord> {
    Ok(SweepRecord {
        key: SweepKey(r.get(0)?),
        id: r.get(1)?,
        name: r.get(2)?,
        spec: r.get(3)?,
        state: r.get(4)?,
        tasks_total: r.get::<_, i64>(5)? as u64,
        tasks_done: r.get::<_, i64>(6)? as u64,
        successes: r.get::<_, i64>(7)? as u64,
        configurations: r.get::<_, i64>(8)? as u64,
        impossible: r.get::<_, i64>(9)? as u64,
        cursor: Cursor { config: r.get::<_, i64>(10)? as u32, start: r.get::<_, i64>(11)? as u64 },
        shards_failed: r.get::<_, i64>(12)? as u64,
        error: r.get(13)?,
        created_ms: r.get::<_, i64>(14)? as u64,
        first_result_ms: r.get::<_, Option<i64>>(15)?.map(|ms| ms as u64),
        finished_ms: r.get::<_, Option<i64>>(16)?.map(|ms| ms as u64),
        reuse: r.get(17)?,
        tasks_reused: r.get::<_, i64>(18)? as u64,
        ran_ms: r.get::<_, i64>(19)? as u64,
        run_from_ms: r.get::<_, Option<i64>>(20)?.map(|ms| ms as u64),
        last_result_ms: r.get::<_, Option<i64>>(21)?.map(|ms| ms as u64),
    })
}

/// Sweeps as an error lists them for a user to choose from.
fn listing(records: &[SweepRecord]) -> Listing {
    Listing::new(records.iter().map(|r| SweepLine {
        sweep_id: r.id.clone(),
        name: r.name.clone(),
        state: r.state.into(),
        tasks_done: r.tasks_done,
        tasks_total: r.tasks_total,
        created_unix_ms: r.created_ms,
    }))
}

impl Store {
    /// Stores a new sweep, taking what the database holds of it, or finds
    /// the one with the same id ([`Store::insert_sweep_with`]).
    pub fn insert_sweep(&mut self, sweep: &Sweep) -> Result<(SweepRecord, bool)> {
        self.insert_sweep_with(sweep, true).map(|(record, known)| (record, known.is_some()))
    }

    /// Stores a new sweep, or finds the one with the same id. Returns the
    /// record and, for a new sweep, what it took (nothing without `reuse`)
    /// with the estimated time of the rest. A new sweep records its task
    /// identities and, with `reuse`, takes every task the database already
    /// holds ([`Store::known`]), all in one transaction.
    pub fn insert_sweep_with(&mut self, sweep: &Sweep, reuse: bool) -> Result<(SweepRecord, Option<Known>)> {
        let id = sweep.id();
        if let Some(existing) = self.sweep_by_id(&id)? {
            // Ids are truncated hashes: the same id must also be the same
            // spec before a submit is answered with the stored sweep.
            if existing.spec != sweep.canonical_toml() {
                return Err(Error::IdCollision(id));
            }
            return Ok((existing, None));
        }
        let impossible = sweep.configurations().iter().filter(|c| c.impossible()).count();
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT INTO sweeps (id, name, spec, state, tasks_total, configurations, impossible, created_ms, reuse)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                id,
                sweep.name(),
                sweep.canonical_toml(),
                SweepState::Running,
                sweep.total_tasks() as i64,
                sweep.configurations().len() as i64,
                impossible as i64,
                now_ms() as i64,
                reuse
            ],
        )?;
        let key = SweepKey(tx.last_insert_rowid());
        super::identities::register(&tx, key.0, sweep)?;
        super::facts::key_configs(&tx)?;
        let known = match reuse {
            true => super::reuse::take_known(&tx, key, sweep)?,
            false => super::reuse::nothing_taken(&tx, sweep)?,
        };
        tx.commit()?;
        let record = self.sweep_by_id(&id)?.ok_or_else(|| Error::Internal("sweep vanished".into()))?;
        Ok((record, Some(known)))
    }

    /// The sweep with this public id.
    pub fn sweep_by_id(&self, id: &str) -> Result<Option<SweepRecord>> {
        let sql = format!("SELECT {SWEEP_COLUMNS} FROM sweeps WHERE id = ?1");
        Ok(self.conn.query_row(&sql, [id], sweep_from_row).optional()?)
    }

    /// The sweep with this key.
    pub fn record_of(&self, key: SweepKey) -> Result<SweepRecord> {
        let sql = format!("SELECT {SWEEP_COLUMNS} FROM sweeps WHERE key = ?1");
        self.conn
            .query_row(&sql, [key.0], sweep_from_row)
            .optional()?
            .ok_or_else(|| Error::Internal(format!("sweep key {} is not in the database", key.0)))
    }

    /// Resolves an id, or the only sweep when `id` is None.
    pub fn resolve(&self, id: Option<&str>) -> Result<SweepRecord> {
        match id {
            Some(id) => match self.sweep_by_id(id)? {
                Some(record) => Ok(record),
                None => self.sweep_by_prefix_or_name(id),
            },
            None => {
                let mut all = self.sweeps()?;
                match all.len() {
                    1 => all.pop().ok_or_else(|| Error::Internal("one sweep listed, none returned".into())),
                    0 => Err(Error::SweepNotFound("(none in the database)".into())),
                    _ => Err(Error::AmbiguousSweep(listing(&all))),
                }
            }
        }
    }

    /// The one sweep whose id starts with `text` or whose name is `text`.
    fn sweep_by_prefix_or_name(&self, text: &str) -> Result<SweepRecord> {
        let mut matches: Vec<SweepRecord> =
            self.sweeps()?.into_iter().filter(|r| r.id.starts_with(text) || r.name == text).collect();
        match matches.len() {
            1 => Ok(matches.remove(0)),
            0 => Err(Error::SweepNotFound(text.to_string())),
            _ => Err(Error::AmbiguousId(text.to_string(), listing(&matches))),
        }
    }

    /// Every sweep's public id, by key: what exports name a result's
    /// computing sweep by.
    pub fn sweep_ids(&self) -> Result<HashMap<SweepKey, String>> {
        let mut stmt = self.conn.prepare_cached("SELECT key, id FROM sweeps")?;
        let rows = stmt.query_map([], |r| Ok((SweepKey(r.get(0)?), r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every sweep, oldest first.
    pub fn sweeps(&self) -> Result<Vec<SweepRecord>> {
        let sql = format!("SELECT {SWEEP_COLUMNS} FROM sweeps ORDER BY key");
        let mut stmt = self.conn.prepare(&sql)?;
        let rows = stmt.query_map([], sweep_from_row)?.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// Renames sweep `key`, the name checked as a spec's is. Its id and
    /// stored spec stay, so the same spec submitted again (`ksweep run`
    /// resuming) is still this sweep, under its new name.
    pub fn rename_sweep(&mut self, key: SweepKey, name: &str) -> Result<SweepRecord> {
        sweep::spec::check_name(name)?;
        self.conn.execute("UPDATE sweeps SET name = ?2 WHERE key = ?1", params![key.0, name])?;
        self.record_of(key)
    }

    /// Ends the run a process left open when it stopped without ending the
    /// sweep (killed, or its `ksweep run` interrupted): the run lasted until
    /// its last result. A coordinator taking the sweep in calls it, so the
    /// time it sat stopped is not counted as running.
    pub fn close_stopped_run(&mut self, sweep: SweepKey) -> Result<()> {
        self.conn.execute(
            "UPDATE sweeps SET ran_ms = ran_ms + MAX(COALESCE(last_result_ms, run_from_ms) - run_from_ms, 0),
             run_from_ms = NULL
             WHERE key = ?1 AND run_from_ms IS NOT NULL",
            [sweep.0],
        )?;
        Ok(())
    }

    /// Makes the tasks a sweep with adaptive precision ran its total, once
    /// every cell stopped: until then the total is the most it could run.
    pub fn close_total(&mut self, sweep: SweepKey) -> Result<()> {
        self.conn.execute("UPDATE sweeps SET tasks_total = tasks_done WHERE key = ?1", [sweep.0])?;
        Ok(())
    }

    /// Sets a sweep's state (and error, for failed sweeps); a terminal
    /// state records when it was reached and ends the current run (its
    /// wall time added to the ended runs'), a resumed sweep clears it.
    pub fn set_state(&mut self, sweep: SweepKey, state: SweepState, error: Option<&str>) -> Result<()> {
        let finished = state.is_terminal().then(|| now_ms() as i64);
        self.conn.execute(
            "UPDATE sweeps SET state = ?2, error = ?3, finished_ms = ?4,
             ran_ms = ran_ms + COALESCE(MAX(?4 - run_from_ms, 0), 0),
             run_from_ms = CASE WHEN ?4 IS NULL THEN run_from_ms END
             WHERE key = ?1",
            params![sweep.0, state, error, finished],
        )?;
        // A stopped sweep gives back what its parse holds (see `parsed`).
        if state != SweepState::Running {
            self.parsed.forget(sweep);
        }
        Ok(())
    }
}
