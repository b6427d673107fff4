//! Existence facts (docs/identity.md#existence-facts): what the stored
//! results prove about open and closed tours of a board and move set, kept
//! per [`sweep::board_moves`] key so `ksweep exists`, tables, `check` and
//! the status read them without a pass over the results.
//!
//! A tour found proves one exists; `no-tour` from every start a tour can
//! begin on proves none does. Facts are written as results land
//! ([`Store::record`] calls [`note`] with what its batch brought), by the
//! upgrade to schema version 5 and by a merge ([`derive_all`]). A proof stays
//! when the sweep that found it is removed.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use rusqlite::{params, Connection, OptionalExtension};
use tour::exists::{Claim, Existence};
use tour::Outcome;

use super::{now_ms, Store};
use crate::codes::StoredOutcome;
use crate::error::Result;

/// Which tour a fact is about (`facts.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TourKind {
    Open = 0,
    Closed = 1,
}

/// A stored fact's verdict (`facts.verdict`).
const EXISTS: i64 = 1;
const IMPOSSIBLE: i64 = 2;

/// What the stored results prove about one kind of tour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fact {
    /// A tour was found; the evidence says where and by what.
    Exists(String),
    /// No tour exists; the evidence says which proofs show it.
    Impossible(String),
}

impl Fact {
    /// `exists` or `impossible`, as [`Claim::verdict`] writes them.
    pub fn verdict(&self) -> &'static str {
        match self {
            Fact::Exists(_) => Claim::Exists("").verdict(),
            Fact::Impossible(_) => Claim::Impossible("").verdict(),
        }
    }

    /// What proves it.
    pub fn evidence(&self) -> &str {
        match self {
            Fact::Exists(e) | Fact::Impossible(e) => e,
        }
    }
}

/// The stored facts of one board and move set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    pub open: Option<Fact>,
    pub closed: Option<Fact>,
}

impl Facts {
    /// `known` where it says something, else these facts: the theorems
    /// come first, a stored result fills what they leave unknown.
    pub fn fill(&self, known: Existence) -> (Option<&Fact>, Option<&Fact>) {
        fn gap(claim: Claim, fact: &Option<Fact>) -> Option<&Fact> {
            fact.as_ref().filter(|_| claim == Claim::Unknown)
        }
        (gap(known.open, &self.open), gap(known.closed, &self.closed))
    }
}

impl Store {
    /// The facts stored for `key` ([`sweep::board_moves`]).
    pub fn facts(&self, key: &str) -> Result<Facts> {
        let mut out = Facts::default();
        let mut stmt = self.conn.prepare_cached("SELECT kind, verdict, evidence FROM facts WHERE board_moves = ?1")?;
        let mut rows = stmt.query([key])?;
        while let Some(r) = rows.next()? {
            let (kind, verdict, evidence): (i64, i64, String) = (r.get(0)?, r.get(1)?, r.get(2)?);
            let fact = if verdict == EXISTS { Fact::Exists(evidence) } else { Fact::Impossible(evidence) };
            if kind == TourKind::Open as i64 {
                out.open = Some(fact);
            } else {
                out.closed = Some(fact);
            }
        }
        Ok(out)
    }

    /// The verdicts stored for each configuration index of a sweep that
    /// has any: (open, closed), each `exists`, `impossible` or None.
    pub(super) fn sweep_facts(&self, sweep_key: i64) -> Result<HashMap<u32, [Option<bool>; 2]>> {
        let mut out: HashMap<u32, [Option<bool>; 2]> = HashMap::new();
        let mut stmt = self.conn.prepare_cached(
            "SELECT sc.config, f.kind, f.verdict FROM sweep_configs sc
             JOIN configs c ON c.key = sc.config_key JOIN facts f ON f.board_moves = c.board_moves
             WHERE sc.sweep = ?1",
        )?;
        let mut rows = stmt.query([sweep_key])?;
        while let Some(r) = rows.next()? {
            let (config, kind, verdict): (u32, i64, i64) = (r.get(0)?, r.get(1)?, r.get(2)?);
            out.entry(config).or_default()[(kind == TourKind::Closed as i64) as usize] = Some(verdict == EXISTS);
        }
        Ok(out)
    }
}

impl Store {
    /// How many configurations of a sweep the stored facts prove have no
    /// open tour where [`sweep::ConfigEntry::impossible`] does not: what the
    /// status adds to the sweep's count of impossible configurations.
    pub fn impossible_by_facts(&self, sweep_key: i64, sweep: &sweep::Sweep) -> Result<u64> {
        let facts = self.sweep_facts(sweep_key)?;
        let configs = sweep.configurations();
        Ok(facts
            .iter()
            .filter(|(&c, f)| f[0] == Some(false) && configs.get(c as usize).is_some_and(|e| !e.impossible()))
            .count() as u64)
    }
}

/// Fills `configs.board_moves` of every configuration that lacks it (a new
/// one, or all of them on the upgrade), from its identity; '' for an
/// identity that names no board (an unparsed sweep's).
pub(super) fn key_configs(conn: &Connection) -> rusqlite::Result<()> {
    let missing: Vec<(i64, String)> = conn
        .prepare_cached("SELECT key, identity FROM configs WHERE board_moves IS NULL")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut set = conn.prepare_cached("UPDATE configs SET board_moves = ?2 WHERE key = ?1")?;
    for (key, identity) in missing {
        set.execute(params![key, sweep::board_moves_of(&identity).unwrap_or_default()])?;
    }
    Ok(())
}

/// A batch's results that may prove something: the first tour of each
/// configuration, and the new `no-tour` results of each.
#[derive(Default)]
pub(super) struct Proofs {
    tours: HashMap<i64, (i64, u64, i64)>,
    /// Per configuration: new `no-tour` results, and their methods.
    refuted: BTreeMap<i64, (u64, BTreeSet<i64>)>,
}

/// Per board ([`sweep::board_moves`] key), at least as many `no-tour`
/// results as it has (counted from the database once per store, then
/// bumped by each batch's new ones), and how many starts a tour can begin
/// on (0: a theorem settles it, nothing to count). Its starts are counted
/// only once the bound reaches them: a sweep of sampled starts on a large
/// board would otherwise read all its refutations every batch.
#[derive(Default)]
pub(super) struct Bounds(HashMap<String, (u64, u64)>);

impl Proofs {
    /// Notes a result new to the database: configuration and method keys,
    /// start cell, computing sweep, outcome.
    pub(super) fn add(&mut self, config: i64, method: i64, cell: u64, sweep: i64, outcome: Outcome) {
        match outcome {
            Outcome::Tour => {
                self.tours.entry(config).or_insert((method, cell, sweep));
            }
            Outcome::NoTour => {
                let (rows, methods) = self.refuted.entry(config).or_default();
                *rows += 1;
                methods.insert(method);
            }
            Outcome::GaveUp => {}
        }
    }
}

/// Writes the facts a batch's results prove that are not stored yet: a
/// lookup per configuration with a tour (an insert for the first), and a
/// count of its refuted starts per configuration with a new `no-tour`.
pub(super) fn note(conn: &Connection, proofs: &Proofs, bounds: &mut Bounds) -> rusqlite::Result<()> {
    let mut about = conn.prepare_cached(
        "SELECT c.board_moves, m.identity, s.id,
                EXISTS (SELECT 1 FROM facts f WHERE f.board_moves = c.board_moves AND f.kind = 0),
                EXISTS (SELECT 1 FROM facts f WHERE f.board_moves = c.board_moves AND f.kind = 1)
         FROM configs c, methods m LEFT JOIN sweeps s ON s.key = ?3 WHERE c.key = ?1 AND m.key = ?2",
    )?;
    for (&config, &(method, cell, sweep)) in &proofs.tours {
        let found: Option<(String, String, Option<String>, bool, bool)> = about
            .query_row(params![config, method, sweep], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
            .optional()?;
        let Some((key, method, sweep, has_open, has_closed)) = found else { continue };
        let closed = sweep::identity_seeks_closed(&method);
        if has_open && (has_closed || !closed) {
            continue;
        }
        let Some(config) = sweep::board_moves_configuration(&key) else { continue };
        let what = if closed { "closed tour" } else { "tour" };
        let evidence = format!(
            "a {what} from {} found by `{method}`{}",
            cell_name(&config, cell),
            sweep.map_or(String::new(), |s| format!(" in sweep {s}"))
        );
        if !has_open {
            insert(conn, &key, TourKind::Open, EXISTS, &evidence)?;
        }
        if closed && !has_closed {
            insert(conn, &key, TourKind::Closed, EXISTS, &evidence)?;
        }
    }
    let mut key_of = conn.prepare_cached("SELECT board_moves FROM configs WHERE key = ?1")?;
    let mut method_of = conn.prepare_cached("SELECT identity FROM methods WHERE key = ?1")?;
    // Per board: new `no-tour` results, and whether any sought a closed tour.
    let mut keys: BTreeMap<String, (u64, bool)> = BTreeMap::new();
    for (&config, (rows, methods)) in &proofs.refuted {
        let Some(key) = key_of.query_row([config], |r| r.get::<_, String>(0)).optional()? else { continue };
        let mut closed = false;
        for &m in methods {
            let identity = method_of.query_row([m], |r| r.get::<_, String>(0)).optional()?;
            closed |= identity.is_some_and(|i| sweep::identity_seeks_closed(&i));
        }
        let at = keys.entry(key).or_default();
        *at = (at.0 + rows, at.1 || closed);
    }
    for (key, (rows, closed)) in keys {
        let (bound, eligible) = match bounds.0.get_mut(&key) {
            Some(b) => {
                b.0 += rows;
                *b
            }
            None => {
                // Counted now, this batch's rows included.
                let b = (refutations(conn, &key)?, starts_to_refute(&key));
                *bounds.0.entry(key.clone()).or_insert(b)
            }
        };
        let open = eligible > 0 && bound >= eligible;
        if open || closed {
            refute(conn, &key, open, closed)?;
        }
    }
    Ok(())
}

/// The `no-tour` results stored for board `key`, of any method.
fn refutations(conn: &Connection, key: &str) -> rusqlite::Result<u64> {
    conn.prepare_cached(
        "SELECT COUNT(*) FROM tasks WHERE outcome = ?2
         AND config_key IN (SELECT key FROM configs WHERE board_moves = ?1)",
    )?
    .query_row(params![key, StoredOutcome(Outcome::NoTour)], |r| r.get::<_, i64>(0))
    .map(|n| n as u64)
}

/// How many starts refuted prove board `key` has no open tour; 0 where a
/// theorem already says so (its every result may be `no-tour`, of any
/// method) or the key names no board.
fn starts_to_refute(key: &str) -> u64 {
    match sweep::board_moves_configuration(key) {
        Some(c) if !matches!(tour::exists::known(c.board(), c.moves()).open, Claim::Impossible(_)) => {
            c.eligible_count()
        }
        _ => 0,
    }
}

/// Every fact the stored results prove, for every board: the upgrade to
/// version 5 and a merge (whose results land without [`note`]).
pub(super) fn derive_all(conn: &Connection) -> rusqlite::Result<()> {
    key_configs(conn)?;
    let mut proofs = Proofs::default();
    let mut stmt = conn.prepare(
        "SELECT config_key, method_key, start_cell, sweep, outcome FROM tasks WHERE outcome IN (?1, ?2)
         ORDER BY id",
    )?;
    let mut rows = stmt.query(params![StoredOutcome(Outcome::Tour), StoredOutcome(Outcome::NoTour)])?;
    while let Some(r) = rows.next()? {
        let outcome: StoredOutcome = r.get(4)?;
        proofs.add(r.get(0)?, r.get(1)?, r.get::<_, i64>(2)? as u64, r.get(3)?, outcome.0);
    }
    note(conn, &proofs, &mut Bounds::default())
}

/// The impossibility facts of `key` not stored yet, from its `no-tour`
/// results of every configuration and method sharing it: no open tour when
/// every start a tour can begin on (docs/methods.md's colour rule) is
/// refuted by a method seeking open tours; no closed tour when any start
/// is refuted by one seeking closed tours (a closed tour passes through
/// every cell), or when there is no open tour. `open`: its refutations
/// may cover its starts; `closed`: the batch refuted a closed tour.
fn refute(conn: &Connection, key: &str, open: bool, closed: bool) -> rusqlite::Result<()> {
    let stored = |kind: TourKind| -> rusqlite::Result<bool> {
        conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM facts WHERE board_moves = ?1 AND kind = ?2)")?
            .query_row(params![key, kind as i64], |r| r.get(0))
    };
    let (has_open, has_closed) = (stored(TourKind::Open)?, stored(TourKind::Closed)?);
    if (!open || has_open) && (!closed || has_closed) {
        return Ok(());
    }
    let Some(config) = sweep::board_moves_configuration(key) else { return Ok(()) };
    let mut stmt = conn.prepare_cached(
        "SELECT t.start_cell, m.identity, COALESCE(s.id, '') FROM tasks t
         JOIN configs c ON c.key = t.config_key JOIN methods m ON m.key = t.method_key
         LEFT JOIN sweeps s ON s.key = t.sweep
         WHERE c.board_moves = ?1 AND t.outcome = ?2",
    )?;
    let refuted: Vec<(u64, String, String)> = stmt
        .query_map(params![key, StoredOutcome(Outcome::NoTour)], |r| {
            Ok((r.get::<_, i64>(0)? as u64, r.get(1)?, r.get(2)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let (by_closed, by_open): (Vec<_>, Vec<_>) = refuted.iter().partition(|(_, m, _)| sweep::identity_seeks_closed(m));
    let open_cells: BTreeSet<u64> = by_open.iter().map(|(c, _, _)| *c).filter(|&c| config.is_eligible(c)).collect();
    let eligible = config.eligible_count();
    let no_open = open && !has_open && eligible > 0 && open_cells.len() as u64 == eligible;
    if no_open {
        let methods: BTreeSet<&str> = by_open.iter().map(|(_, m, _)| m.as_str()).collect();
        let sweeps: BTreeSet<&str> = by_open.iter().map(|(_, _, s)| s.as_str()).filter(|s| !s.is_empty()).collect();
        let starts = if eligible == config.board().cells() {
            format!("all {eligible} starts")
        } else {
            format!("all {eligible} starts a tour can begin on (the colour rule excludes the others)")
        };
        let evidence = format!(
            "no open tour from {starts}, proven by {}{}",
            list(methods.iter().map(|m| format!("`{m}`"))),
            if sweeps.is_empty() { String::new() } else { format!(" in sweep {}", list(sweeps.iter())) }
        );
        insert(conn, key, TourKind::Open, IMPOSSIBLE, &evidence)?;
        if !has_closed {
            insert(conn, key, TourKind::Closed, IMPOSSIBLE, "there is no open tour, so no closed one")?;
            return Ok(());
        }
    }
    if let (false, Some((cell, method, sweep))) = (has_closed, by_closed.first()) {
        let evidence = format!(
            "`{method}` proved no closed tour passes through {}{}, and a closed tour passes through every cell",
            cell_name(&config, *cell),
            if sweep.is_empty() { String::new() } else { format!(" (sweep {sweep})") }
        );
        insert(conn, key, TourKind::Closed, IMPOSSIBLE, &evidence)?;
    }
    Ok(())
}

/// Stores a fact unless one of its kind is stored: the first proof stays.
fn insert(conn: &Connection, key: &str, kind: TourKind, verdict: i64, evidence: &str) -> rusqlite::Result<()> {
    if let Some(proved) = against_atlas(key, kind, verdict) {
        let what = format!(
            "the results' fact about {} tours of {key} ({evidence}) contradicts the atlas ({proved}): a bug, not stored",
            if kind == TourKind::Closed { "closed" } else { "open" }
        );
        // The one rusqlite error that carries a message of ours.
        return Err(rusqlite::Error::ToSqlConversionFailure(what.into()));
    }
    conn.prepare_cached(
        "INSERT OR IGNORE INTO facts (board_moves, kind, verdict, evidence, at_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![key, kind as i64, verdict, evidence, now_ms() as i64])?;
    Ok(())
}

/// What the shipped atlas proves against a fact of board `key`, if it
/// does: a fact stored against it would be a bug in one of them.
fn against_atlas(key: &str, kind: TourKind, verdict: i64) -> Option<&'static str> {
    let config = sweep::board_moves_configuration(key)?;
    let claims = tour::exists::atlas::Atlas::embedded().ok()?.claims(config.board(), config.moves());
    let claim = if kind == TourKind::Closed { claims.closed } else { claims.open };
    match (claim, verdict) {
        (Claim::Impossible(why), EXISTS) | (Claim::Exists(why), IMPOSSIBLE) => Some(why),
        _ => None,
    }
}

/// `(x,y)`, the cell's coordinates.
fn cell_name(config: &tour::Configuration, cell: u64) -> String {
    let coords: Vec<String> = config.board().coords(cell).iter().map(u32::to_string).collect();
    format!("({})", coords.join(","))
}

/// `a`, `a and b`, `a, b and c`.
fn list<S: AsRef<str>>(items: impl Iterator<Item = S>) -> String {
    let items: Vec<String> = items.map(|s| s.as_ref().to_string()).collect();
    match items.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        Some((last, _)) => last.clone(),
        None => String::new(),
    }
}
