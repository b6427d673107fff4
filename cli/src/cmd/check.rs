//! `ksweep check`: validate a sweep spec and say what it would run, without
//! running anything.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use ksweep_coordinator::store::{Fact, Store};
use sweep::Sweep;
use tour::exists::Claim;
use tour::Eligibility;

/// Validate a sweep spec and print its id, configurations and task count.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The sweep spec (TOML).
    pub spec: PathBuf,
    /// Also say how many of its tasks this database already holds (read
    /// only, never changed: an older file is upgraded in memory): what a
    /// submit to it would take instead of running.
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
}

pub fn run(args: CheckArgs, out: &mut impl Write) -> Result<()> {
    let text = crate::spec_file::load(&args.spec)?;
    let sweep = Sweep::parse(&text)?;
    let configs = sweep.configurations();
    let methods: Vec<&str> = sweep.methods().iter().map(|m| m.name()).collect();
    writeln!(out, "name            {}", sweep.name())?;
    writeln!(out, "id              {}", sweep.id())?;
    writeln!(out, "methods         {}", methods.join(", "))?;
    match sweep.precision() {
        Some(p) => {
            let looks: Vec<String> = p.checkpoints().iter().map(u64::to_string).collect();
            writeln!(
                out,
                "starts          until each cell's {:.0} % interval is within +/-{:.1} points, at most {} per \
                 configuration\n                (looks at {} starts; the error level spent over them)",
                100.0 * p.confidence,
                100.0 * p.half_width,
                p.cap,
                looks.join(", ")
            )?;
            writeln!(
                out,
                "                a cell near 0 or 100 % stops at about {}, one near 50 % at about {}",
                p.expected_stop(0.0),
                p.expected_stop(0.5)
            )?;
        }
        None => writeln!(out, "starts          {} per configuration", sweep.starts_per_config())?,
    }
    writeln!(out, "{}", impossible_lines(configs))?;
    match sweep.precision() {
        Some(_) => writeln!(
            out,
            "tasks           {} to {} (every cell stopping at its first look, or at its cap)",
            sweep.least_tasks(),
            sweep.total_tasks()
        )?,
        None => writeln!(out, "tasks           {}", sweep.total_tasks())?,
    }
    // What a worker must fit: the board whose tasks need the most memory.
    let largest = configs
        .iter()
        .filter(|c| c.eligibility() != Eligibility::Impossible)
        .map(|c| (c.configuration().memory_need_for(sweep.methods(), false), c))
        .max_by_key(|(need, _)| need.with_threads(1));
    if let Some((need, c)) = largest {
        writeln!(out, "memory          {need}, board {}", c.shape_label())?;
    }
    let (reused, model) = (sweep::Reused::none(), sweep::CostModel::new());
    let duration = |micros: f64| sweep::format_duration(std::time::Duration::from_secs_f64(micros / 1e6));
    let most = duration(sweep::micros_to_run(&sweep, &reused, &model));
    let range = match sweep.precision() {
        Some(_) => format!("{} to {most}", duration(sweep::least_micros_to_run(&sweep, &reused, &model))),
        None => most,
    };
    writeln!(
        out,
        "cpu time        about {range} on one core (a prior per method, within a few times; results refine it)"
    )?;
    if let Some(db) = &args.db {
        known(&sweep, db, out)?;
    }
    Ok(())
}

/// The configurations, and those on which no open tour can exist, by why:
/// the colour rule (nothing is planned there) or a proof (planned and run
/// all the same).
fn impossible_lines(configs: &[sweep::ConfigEntry]) -> String {
    let impossible = configs.iter().filter(|c| c.impossible()).count();
    let mut text = match impossible {
        0 => format!("configurations  {} (0 impossible)", configs.len()),
        n => format!("configurations  {} ({n} impossible: no open tour can exist on them)", configs.len()),
    };
    let by_colour = configs.iter().filter(|c| c.eligibility() == Eligibility::Impossible).count();
    if by_colour > 0 {
        text.push_str(&format!(
            "\n                {by_colour} by the colour rule (no move changes colour): none of their starts is run"
        ));
    }
    // A proof (a theorem, the atlas, the move graph) does not change what
    // is planned: the planner reads the colour rule only.
    let by_proof = impossible - by_colour;
    if by_proof > 0 {
        text.push_str(&format!(
            "\n                {by_proof} by a proof (a theorem, the atlas or the board's moves; `ksweep exists` names \
             it): their starts\n                are run all the same, so tables show how each method fails there \
             (marked *), and a\n                sweep keeps the same tasks whatever a later release can prove"
        ));
    }
    text
}

/// What the database `db` holds of `sweep`: the sweep itself, or the tasks
/// a submit would take from other sweeps' results and what is left to run.
fn known(sweep: &Sweep, db: &Path, out: &mut impl Write) -> Result<()> {
    if !db.exists() {
        writeln!(out, "known           nothing: there is no database {} yet", db.display())?;
        return Ok(());
    }
    let store = Store::open_unchanged(db).with_context(|| format!("--db: cannot open {}", db.display()))?;
    stored_or_known(sweep, &store, out)?;
    facts(sweep, &store, out)
}

/// The sweep as stored, or what a submit would take from the results.
fn stored_or_known(sweep: &Sweep, store: &Store, out: &mut impl Write) -> Result<()> {
    if let Some(stored) = store.sweep_by_id(&sweep.id())? {
        writeln!(
            out,
            "stored          as sweep {} ({}, {} of {} tasks done): submitting it again resumes it",
            stored.id,
            ksweep_coordinator::status_of(&stored).state,
            stored.tasks_done,
            stored.tasks_total
        )?;
        return Ok(());
    }
    let known = store.known(sweep)?;
    let from: Vec<String> = known
        .from
        .iter()
        .map(|&(key, n)| match store.record_of(key) {
            Ok(r) => format!("{} {}: {n}", r.name, sweep::short_id(&r.id)),
            Err(_) => format!("key {}: {n}", key.0),
        })
        .collect();
    let line = crate::cmd::submit::plan_line(sweep.total_tasks(), known.tasks, Some(known.micros_to_run / 1e6));
    writeln!(out, "known           {line}")?;
    if !from.is_empty() {
        writeln!(out, "                computed by {}", from.join(", "))?;
    }
    Ok(())
}

/// What the database's existence facts (docs/identity.md) prove of open
/// tours on the spec's boards where no theorem does: the tables will mark
/// those boards so, whatever the sweep's own results.
fn facts(sweep: &Sweep, store: &Store, out: &mut impl Write) -> Result<()> {
    let mut keys = std::collections::BTreeSet::new();
    let (mut unknown, mut exists, mut impossible) = (0, 0, 0);
    for c in sweep.configurations() {
        let config = c.configuration();
        let key = sweep::board_moves(config.board().sides(), config.moves());
        // A board the spec names twice is counted (and proven) once.
        if !keys.insert(key.clone()) || tour::exists::proven(config.board(), config.moves()).open != Claim::Unknown {
            continue;
        }
        unknown += 1;
        match store.facts(&key)?.open {
            Some(Fact::Exists(_)) => exists += 1,
            Some(Fact::Impossible(_)) => impossible += 1,
            None => {}
        }
    }
    if unknown > 0 {
        let boards = if unknown == 1 { "board" } else { "boards" };
        writeln!(
            out,
            "facts           of {unknown} {boards} no theorem settles, stored results prove an open tour on {exists} \
             and none on {impossible} (`ksweep exists --db` says how)"
        )?;
    }
    Ok(())
}
