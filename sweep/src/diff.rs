//! Two sweeps compared (`ksweep diff A B`): for each (configuration,
//! method) both have results of, the accuracy in each, the difference, and
//! the starts both ran whose flags (success, outcome) differ.
//!
//! A configuration is matched by its identity (board, how the moves were
//! given, the move list in order: docs/identity.md), not by its label; a
//! method by its name, so `bt` of two budgets or `wr` of two seeds are
//! compared with each other. Where both sweeps have the same method
//! identity, their results are the same stored rows and no start can
//! differ: differing flags come from another seed, budget, iteration cap or
//! engine version. Accuracy is over each sweep's own results of the pair
//! (its starts may differ from the other's); a start is one cell, matched
//! by its coordinates.
//!
//! A pair differs when its accuracies do or some start's flags do, and
//! differs significantly when the two accuracies' 95 % Wilson intervals (the
//! tables' `--intervals`) do not overlap: a rule that rarely fires by chance
//! (about 0.5 % of pairs that differ only by chance, a tenth of what a test
//! at 5 % marks), as a diff of thousands of pairs needs.
//! The specs are compared too, field by field ([`SpecChange`]).

mod spec_changes;

use std::collections::HashMap;
use std::fmt::Write as _;

use serde::Serialize;

pub use spec_changes::SpecChange;

use crate::{csv, format_utc, short_id, wilson, ResultRow, Sweep, SweepLine};

/// What a task found, as a diff compares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Flags {
    success: bool,
    outcome: Option<tour::Outcome>,
}

impl Flags {
    /// `tour`, `no-tour`, `gave-up` (export's names); a result without an
    /// outcome (a worker too old to say) by its success.
    fn name(self) -> &'static str {
        match (self.outcome, self.success) {
            (Some(outcome), _) => outcome.name(),
            (None, true) => "tour",
            (None, false) => "no tour found",
        }
    }
}

/// One sweep's results of a (configuration, method).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// Its tasks with a result.
    pub tasks: u64,
    /// Of those, the ones that found a tour.
    pub successes: u64,
}

impl Tally {
    /// Percent of its tasks that found a tour.
    pub fn accuracy(&self) -> f64 {
        match self.tasks {
            0 => 0.0,
            n => 100.0 * self.successes as f64 / n as f64,
        }
    }
}

/// A start both sweeps ran whose flags differ.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StartDiff {
    /// Its coordinates.
    pub start: Vec<u32>,
    /// What sweep A's task found there (`tour`, `no-tour`, `gave-up`).
    pub a: &'static str,
    /// What sweep B's found.
    pub b: &'static str,
}

/// A (configuration, method) both sweeps have results of.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DiffRow {
    /// The moves' label, as tables show it.
    pub moves: String,
    /// The board's label (`8x8`).
    pub board: String,
    /// The board's dimensions.
    pub dims: u32,
    /// The method's name.
    pub method: String,
    /// Sweep A's results of it.
    pub a: Tally,
    /// Sweep B's.
    pub b: Tally,
    /// Starts both ran.
    pub both_ran: u64,
    /// Of those, the ones whose flags differ, in coordinate order.
    pub differing: Vec<StartDiff>,
}

impl DiffRow {
    /// B's accuracy less A's, in percentage points.
    pub fn difference(&self) -> f64 {
        self.b.accuracy() - self.a.accuracy()
    }

    /// The accuracies differ (compared exactly, not as printed), or some
    /// start both ran has other flags in each.
    pub fn differs(&self) -> bool {
        let cross = |x: Tally, y: Tally| u128::from(x.successes) * u128::from(y.tasks);
        cross(self.a, self.b) != cross(self.b, self.a) || !self.differing.is_empty()
    }

    /// The accuracies' 95 % Wilson intervals do not overlap.
    pub fn significant(&self) -> bool {
        match (wilson(self.a.successes, self.a.tasks), wilson(self.b.successes, self.b.tasks)) {
            (Some((a_low, a_high)), Some((b_low, b_high))) => a_high < b_low || b_high < a_low,
            _ => false,
        }
    }
}

/// How many pairs in both sweeps are equal, and how many differ.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DiffSummary {
    /// Pairs both sweeps have results of.
    pub pairs: usize,
    /// Of those, the ones with equal accuracies and no start of other flags.
    pub equal: usize,
    /// The others ([`DiffRow::differs`]).
    pub differ: usize,
    /// Of those, the ones whose difference is significant
    /// ([`DiffRow::significant`]).
    pub significant: usize,
}

/// Two sweeps compared.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepDiff {
    /// Sweep A.
    pub a: SweepLine,
    /// Sweep B.
    pub b: SweepLine,
    /// The spec fields whose values differ ([`SpecChange`]).
    pub spec_changes: Vec<SpecChange>,
    /// The pairs both have, in A's order.
    pub rows: Vec<DiffRow>,
    /// Pairs only A has results of.
    pub only_a: usize,
    /// Pairs only B has results of.
    pub only_b: usize,
}

/// One sweep's results of a pair, gathered.
#[derive(Debug, Default)]
struct Gathered {
    tally: Tally,
    starts: HashMap<Vec<u32>, Flags>,
}

/// Gathers two sweeps' results, page by page ([`DiffBuilder::add`]), into
/// a [`SweepDiff`]; holds a few bytes per result, never the rows.
#[derive(Debug)]
pub struct DiffBuilder {
    /// Each sweep's configuration identities, by index.
    identities: [Vec<String>; 2],
    spec_changes: Vec<SpecChange>,
    /// Each pair's labels (moves, board, dims, method), in first-seen order.
    pairs: Vec<(String, String, u32, String)>,
    at: HashMap<(String, String), usize>,
    gathered: Vec<[Gathered; 2]>,
}

/// Which of the two sweeps a result is of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The first sweep named.
    A,
    /// The second.
    B,
}

impl DiffBuilder {
    /// A comparison of sweeps `a` and `b` (their parsed specs).
    pub fn new(a: &Sweep, b: &Sweep) -> DiffBuilder {
        let identities = |s: &Sweep| s.configurations().iter().map(|c| c.identity()).collect::<Vec<_>>();
        DiffBuilder {
            identities: [identities(a), identities(b)],
            spec_changes: spec_changes::spec_changes(a.spec(), b.spec()),
            pairs: Vec::new(),
            at: HashMap::new(),
            gathered: Vec::new(),
        }
    }

    /// Adds one result of sweep `side`; one outside its grid is skipped.
    pub fn add(&mut self, side: Side, row: &ResultRow) {
        let s = side as usize;
        let Some(identity) = self.identities[s].get(row.config as usize) else { return };
        let key = (identity.clone(), row.method.clone());
        let at = *self.at.entry(key).or_insert_with(|| {
            self.pairs.push((row.moves.clone(), row.shape.clone(), row.dims, row.method.clone()));
            self.gathered.push(Default::default());
            self.pairs.len() - 1
        });
        let gathered = &mut self.gathered[at][s];
        gathered.tally.tasks += 1;
        gathered.tally.successes += u64::from(row.success);
        gathered.starts.insert(row.start.clone(), Flags { success: row.success, outcome: row.outcome });
    }

    /// The comparison, A's and B's lines heading it.
    pub fn finish(self, a: SweepLine, b: SweepLine) -> SweepDiff {
        let (mut only_a, mut only_b) = (0, 0);
        let mut rows = Vec::new();
        for ((moves, board, dims, method), [of_a, of_b]) in self.pairs.into_iter().zip(self.gathered) {
            match (of_a.tally.tasks, of_b.tally.tasks) {
                (_, 0) => only_a += 1,
                (0, _) => only_b += 1,
                _ => {
                    let mut both_ran = 0;
                    let mut differing = Vec::new();
                    for (start, fa) in &of_a.starts {
                        if let Some(fb) = of_b.starts.get(start) {
                            both_ran += 1;
                            if fa != fb {
                                differing.push(StartDiff { start: start.clone(), a: fa.name(), b: fb.name() });
                            }
                        }
                    }
                    differing.sort_by(|x, y| x.start.cmp(&y.start));
                    rows.push(DiffRow {
                        moves,
                        board,
                        dims,
                        method,
                        a: of_a.tally,
                        b: of_b.tally,
                        both_ran,
                        differing,
                    });
                }
            }
        }
        SweepDiff { a, b, spec_changes: self.spec_changes, rows, only_a, only_b }
    }
}

/// Differing starts a text diff lists at most; CSV and JSON list them all.
const TEXT_STARTS: usize = 50;

fn coords(start: &[u32]) -> String {
    start.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

impl SweepDiff {
    /// The pairs in both, equal and differing, counted.
    pub fn summary(&self) -> DiffSummary {
        let differ: Vec<&DiffRow> = self.rows.iter().filter(|r| r.differs()).collect();
        DiffSummary {
            pairs: self.rows.len(),
            equal: self.rows.len() - differ.len(),
            differ: differ.len(),
            significant: differ.iter().filter(|r| r.significant()).count(),
        }
    }

    /// The pairs an output lists: all of them, or with `only_differences`
    /// those that differ.
    fn shown_rows(&self, only_differences: bool) -> impl Iterator<Item = &DiffRow> {
        self.rows.iter().filter(move |r| !only_differences || r.differs())
    }

    /// For people: the two sweeps, the spec fields that differ, the
    /// counts, a line per pair (per differing pair with
    /// `only_differences`), then the differing starts (the first 50).
    pub fn text(&self, only_differences: bool) -> String {
        let mut out = String::new();
        for (label, s) in [("A", &self.a), ("B", &self.b)] {
            let _ = writeln!(
                out,
                "{label}  {}  {}  {}  {}/{} tasks  submitted {}",
                short_id(&s.sweep_id),
                s.name,
                s.state,
                s.tasks_done,
                s.tasks_total,
                format_utc(s.created_unix_ms)
            );
        }
        if self.spec_changes.is_empty() {
            let _ = writeln!(out, "specs: the same");
        } else {
            let _ = writeln!(out, "specs differ (A -> B):");
            for c in &self.spec_changes {
                let _ = writeln!(out, "  {}: {} -> {}", c.field, c.a, c.b);
            }
        }
        let summary = self.summary();
        let _ = writeln!(
            out,
            "{} (configuration, method) pairs in both; {} only in A, {} only in B",
            self.rows.len(),
            self.only_a,
            self.only_b
        );
        if self.rows.is_empty() {
            return out;
        }
        let _ = writeln!(
            out,
            "{} pairs: {} equal, {} differ ({} significantly: their 95 % intervals do not overlap)",
            summary.pairs, summary.equal, summary.differ, summary.significant
        );
        let shown: Vec<&DiffRow> = self.shown_rows(only_differences).collect();
        if shown.len() < self.rows.len() {
            let _ = writeln!(out, "the {} equal pairs are not listed (--only-differences)", summary.equal);
        }
        if shown.is_empty() {
            return out;
        }
        out.push('\n');
        let header = ["MOVES", "BOARD", "METHOD", "A TASKS", "A %", "B TASKS", "B %", "B - A", "BOTH RAN", "DIFFER"]
            .map(String::from);
        let cells: Vec<[String; 10]> = shown
            .iter()
            .map(|r| {
                [
                    r.moves.clone(),
                    r.board.clone(),
                    r.method.clone(),
                    r.a.tasks.to_string(),
                    format!("{:.1}", r.a.accuracy()),
                    r.b.tasks.to_string(),
                    format!("{:.1}", r.b.accuracy()),
                    format!("{:+.1}{}", r.difference(), if r.significant() { SIGNIFICANT } else { "" }),
                    r.both_ran.to_string(),
                    r.differing.len().to_string(),
                ]
            })
            .collect();
        let widths: Vec<usize> =
            (0..10).map(|i| cells.iter().chain([&header]).map(|r| r[i].chars().count()).max().unwrap_or(0)).collect();
        for row in std::iter::once(&header).chain(&cells) {
            let line: Vec<String> = row.iter().zip(&widths).map(|(c, &w)| format!("{c:<w$}")).collect();
            let _ = writeln!(out, "{}", line.join("  ").trim_end());
        }
        if summary.significant > 0 {
            let _ = writeln!(out, "{SIGNIFICANT} significant: the two 95 % Wilson intervals do not overlap");
        }
        let all: Vec<(&DiffRow, &StartDiff)> =
            shown.iter().flat_map(|r| r.differing.iter().map(move |d| (*r, d))).collect();
        if !all.is_empty() {
            let _ = writeln!(out, "\nstarts whose flags differ (A -> B):");
            for (r, d) in all.iter().take(TEXT_STARTS) {
                let _ = writeln!(
                    out,
                    "  {} {} {} start {}: {} -> {}",
                    r.moves,
                    r.board,
                    r.method,
                    coords(&d.start),
                    d.a,
                    d.b
                );
            }
            if all.len() > TEXT_STARTS {
                let _ =
                    writeln!(out, "  ... and {} more (--format csv or json lists them all)", all.len() - TEXT_STARTS);
            }
        }
        out
    }

    /// A row per pair (per differing pair with `only_differences`);
    /// `differing_starts` lists the starts as `x,y`, `;` between them
    /// (their flags: `--format json`).
    pub fn csv(&self, only_differences: bool) -> String {
        let mut out = csv::record([
            "moves",
            "board",
            "dims",
            "method",
            "a_tasks",
            "a_successes",
            "a_accuracy",
            "b_tasks",
            "b_successes",
            "b_accuracy",
            "difference",
            "significant",
            "both_ran",
            "flags_differ",
            "differing_starts",
        ]);
        for r in self.shown_rows(only_differences) {
            let starts: Vec<String> = r.differing.iter().map(|d| coords(&d.start)).collect();
            let fields = [
                r.moves.clone(),
                r.board.clone(),
                r.dims.to_string(),
                r.method.clone(),
                r.a.tasks.to_string(),
                r.a.successes.to_string(),
                format!("{:.4}", r.a.accuracy()),
                r.b.tasks.to_string(),
                r.b.successes.to_string(),
                format!("{:.4}", r.b.accuracy()),
                format!("{:.4}", r.difference()),
                r.significant().to_string(),
                r.both_ran.to_string(),
                r.differing.len().to_string(),
                starts.join(";"),
            ];
            out.push_str(&csv::record(fields.iter().map(String::as_str)));
        }
        out
    }

    /// The whole comparison as one JSON document (only the differing
    /// pairs' rows with `only_differences`; the summary counts them all).
    pub fn json(&self, only_differences: bool) -> String {
        #[derive(Serialize)]
        struct SweepJson<'a> {
            sweep_id: &'a str,
            name: &'a str,
            state: &'a str,
            tasks_done: u64,
            tasks_total: u64,
            created_unix_ms: u64,
        }
        #[derive(Serialize)]
        struct RowJson<'a> {
            #[serde(flatten)]
            row: &'a DiffRow,
            a_accuracy: f64,
            b_accuracy: f64,
            difference: f64,
            differs: bool,
            significant: bool,
        }
        #[derive(Serialize)]
        struct DiffJson<'a> {
            a: SweepJson<'a>,
            b: SweepJson<'a>,
            spec_changes: &'a [SpecChange],
            summary: DiffSummary,
            only_in_a: usize,
            only_in_b: usize,
            rows: Vec<RowJson<'a>>,
        }
        fn sweep(s: &SweepLine) -> SweepJson<'_> {
            SweepJson {
                sweep_id: &s.sweep_id,
                name: &s.name,
                state: s.state.name(),
                tasks_done: s.tasks_done,
                tasks_total: s.tasks_total,
                created_unix_ms: s.created_unix_ms,
            }
        }
        let doc = DiffJson {
            a: sweep(&self.a),
            b: sweep(&self.b),
            spec_changes: &self.spec_changes,
            summary: self.summary(),
            only_in_a: self.only_a,
            only_in_b: self.only_b,
            rows: self
                .shown_rows(only_differences)
                .map(|row| RowJson {
                    row,
                    a_accuracy: row.a.accuracy(),
                    b_accuracy: row.b.accuracy(),
                    difference: row.difference(),
                    differs: row.differs(),
                    significant: row.significant(),
                })
                .collect(),
        };
        serde_json::to_string_pretty(&doc).expect("a diff serialises") + "\n"
    }
}

/// Marks a significant difference in the text's `B - A` column.
const SIGNIFICANT: &str = "*";

#[cfg(test)]
mod tests;
