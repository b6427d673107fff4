//! Replays of published experiments: a file of the report authors' tasks
//! (move order, method, start, their flag and time) becomes sweep specs that
//! run exactly those tasks, and the results are compared flag for flag.
//!
//! The file format (data/replay/README.md) is a TSV with `# key: value`
//! header lines (columns tab-separated, shown here with spaces):
//!
//! ```text
//! # experiment: accu-more-w-3d
//! # source: <repository>, data/accu-more/data_just_degree/3D
//! # program: data/accu-more/just_degree/3D.cpp
//! # rule: 2,1
//! # dims: 3
//! # moves: -2,-1,0 -1,-2,0 ...      (or `canonical`)
//! # note: free text, repeatable
//! n   method  start   success micros
//! 10  w       3,0,7   1       123
//! ```

use std::collections::{BTreeMap, HashMap};

use thiserror::Error;
use tour::Method;

use crate::spec::{GridSpec, Limits, SweepSpec};

/// A replay file that cannot be read; the line is 1-based.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ReplayError {
    /// A line of the file is malformed.
    #[error("line {line}: {message}")]
    Line {
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// A required header is missing.
    #[error("header: `# {0}:` is missing")]
    MissingHeader(&'static str),
    /// A header's value is malformed.
    #[error("header {key}: {message}")]
    Header {
        /// The header's key.
        key: &'static str,
        /// What is wrong with its value.
        message: String,
    },
    /// The file has no task rows.
    #[error("the file has no rows")]
    Empty,
}

/// One published task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishedTask {
    /// N of the N^D board.
    pub n: u32,
    /// The method the authors' program implements.
    pub method: Method,
    /// The start's coordinates, in knight-sweep's axis order.
    pub start: Vec<u64>,
    /// Their success flag.
    pub success: bool,
    /// Their time for the task, when they recorded one.
    pub micros: Option<u64>,
}

/// A parsed replay file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replay {
    /// A short name for the experiment.
    pub experiment: String,
    /// Where the data came from.
    pub source: String,
    /// The authors' program that wrote it.
    pub program: String,
    /// The leaper rule, unpadded.
    pub rule: Vec<u32>,
    /// D.
    pub dims: usize,
    /// The program's move order; `None` when it is the canonical order.
    pub moves: Option<Vec<Vec<i64>>>,
    /// Free-text notes.
    pub notes: Vec<String>,
    /// Every published task, in file order.
    pub tasks: Vec<PublishedTask>,
}

/// Which tasks to replay.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReplayOptions {
    /// Replay at most this many distinct starts per (N, method), the first
    /// ones in file order; `None` replays all.
    pub sample: Option<usize>,
    /// Sample only boards with more cells than this (0: every board).
    pub sample_above: u64,
    /// Skip boards with more cells than this.
    pub max_cells: Option<u64>,
}

/// What one replay sweep found for one published task; keyed by (N, start).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replayed {
    /// knight-sweep's success flag.
    pub success: bool,
    /// knight-sweep's time for the task.
    pub micros: u64,
}

/// The comparison for one (N, method).
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayRow {
    /// N of the N^D board.
    pub n: u32,
    /// The method.
    pub method: Method,
    /// Published tasks compared (rows of the file, repeats included).
    pub tasks: u64,
    /// Published successes among them.
    pub published_successes: u64,
    /// knight-sweep's successes on the same tasks.
    pub successes: u64,
    /// Starts whose flags differ: (start, published flag).
    pub differing: Vec<(Vec<u64>, bool)>,
    /// Sum of the authors' times, in microseconds (tasks with a time only).
    pub published_micros: u64,
    /// Tasks that had a published time.
    pub timed_tasks: u64,
    /// Sum of knight-sweep's times over every task compared.
    pub micros: u64,
    /// Sum of knight-sweep's times over the tasks with a published time,
    /// to set against `published_micros`.
    pub micros_timed: u64,
    /// Published tasks from starts no tour can have (the colour rule): not
    /// run, compared as no tour.
    pub ineligible: u64,
}

impl Replay {
    /// Parses a replay file's text.
    pub fn parse(text: &str) -> Result<Replay, ReplayError> {
        let mut headers: HashMap<&str, String> = HashMap::new();
        let mut notes = Vec::new();
        let mut tasks = Vec::new();
        let mut column_line_seen = false;
        for (i, line) in text.lines().enumerate() {
            let err = |message: String| ReplayError::Line { line: i + 1, message };
            if let Some(header) = line.strip_prefix('#') {
                let Some((key, value)) = header.split_once(':') else { continue };
                let (key, value) = (key.trim(), value.trim().to_string());
                if key == "note" {
                    notes.push(value);
                } else {
                    headers.insert(key_name(key).ok_or_else(|| err(format!("unknown header {key:?}")))?, value);
                }
                continue;
            }
            if line.trim().is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split('\t').collect();
            if !column_line_seen {
                if fields != ["n", "method", "start", "success", "micros"] {
                    return Err(err(format!("expected the columns n, method, start, success, micros, got {line:?}")));
                }
                column_line_seen = true;
                continue;
            }
            if fields.len() != 5 {
                return Err(err(format!("has {} fields, expected 5", fields.len())));
            }
            let n = fields[0].parse().map_err(|_| err(format!("n: {:?} is not a board size", fields[0])))?;
            let method = fields[1].parse().map_err(|_| err(format!("method: {:?} is not a method", fields[1])))?;
            let start = crate::parse_start_line(fields[2])
                .map_err(|e| err(format!("start: {e}")))?
                .ok_or_else(|| err("start: is empty".into()))?;
            let success = match fields[3] {
                "1" => true,
                "0" => false,
                other => return Err(err(format!("success: {other:?} is neither 1 nor 0"))),
            };
            let micros = match fields[4] {
                "-" => None,
                t => Some(t.parse().map_err(|_| err(format!("micros: {t:?} is not a whole number or -")))?),
            };
            tasks.push(PublishedTask { n, method, start, success, micros });
        }
        let mut take = |key: &'static str| headers.remove(key).ok_or(ReplayError::MissingHeader(key));
        let experiment = take("experiment")?;
        let source = take("source")?;
        let program = take("program")?;
        let rule_text = take("rule")?;
        let dims_text = take("dims")?;
        let moves_text = take("moves")?;
        let header_err = |key: &'static str, message: String| ReplayError::Header { key, message };
        let rule = rule_text
            .split(',')
            .map(|v| v.trim().parse::<u32>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| header_err("rule", format!("{rule_text:?} is not a list of whole numbers")))?;
        let dims: usize =
            dims_text.parse().map_err(|_| header_err("dims", format!("{dims_text:?} is not a whole number")))?;
        let moves = if moves_text == "canonical" {
            None
        } else {
            let list = moves_text
                .split_whitespace()
                .map(|mv| mv.split(',').map(|c| c.parse::<i64>()).collect::<Result<Vec<_>, _>>())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| header_err("moves", "is neither `canonical` nor a list of vectors".into()))?;
            Some(list)
        };
        if tasks.is_empty() {
            return Err(ReplayError::Empty);
        }
        Ok(Replay { experiment, source, program, rule, dims, moves, notes, tasks })
    }

    /// The methods the file holds, in the order tables list them.
    pub fn methods(&self) -> Vec<Method> {
        let mut methods: Vec<Method> = self.tasks.iter().map(|t| t.method).collect();
        methods.sort_unstable();
        methods.dedup();
        methods
    }

    /// True when a tour may start at `start` on the N^D board: their data
    /// has starts the colour rule excludes (no tour can start there), which
    /// a spec refuses; those are not run and count as "no tour".
    fn eligible(&self, n: u32, start: &[u64]) -> bool {
        let config = (|| {
            let board = tour::Board::with_max_cells(&vec![n; self.dims], u64::MAX).ok()?;
            let moves = match &self.moves {
                Some(list) => tour::Moves::explicit(list, self.dims).ok()?,
                None => tour::Moves::from_rule(&self.rule, self.dims).ok()?,
            };
            tour::Configuration::new(board, moves).ok()
        })();
        config.is_some_and(|c| c.board().index_of(start).is_ok_and(|cell| c.is_eligible(cell)))
    }

    /// The tasks `options` keeps, per (method, N): their distinct eligible
    /// starts in file order.
    fn selected(&self, options: &ReplayOptions) -> BTreeMap<(Method, u32), Vec<Vec<u64>>> {
        let mut out: BTreeMap<(Method, u32), Vec<Vec<u64>>> = BTreeMap::new();
        let mut eligible: HashMap<(u32, Vec<u64>), bool> = HashMap::new();
        for t in &self.tasks {
            let cells = u64::from(t.n).checked_pow(self.dims as u32).unwrap_or(u64::MAX);
            if options.max_cells.is_some_and(|max| cells > max) {
                continue;
            }
            let limit = options.sample.filter(|_| cells > options.sample_above);
            let starts = out.entry((t.method, t.n)).or_default();
            if !*eligible.entry((t.n, t.start.clone())).or_insert_with(|| self.eligible(t.n, &t.start)) {
                continue;
            }
            if !starts.contains(&t.start) && limit.is_none_or(|k| starts.len() < k) {
                starts.push(t.start.clone());
            }
        }
        out
    }

    /// One sweep spec per method, with one grid per N listing exactly the
    /// published starts (repeats run once): the tasks run through the normal
    /// sweep path, deterministic whatever the sweep seed.
    pub fn specs(&self, options: &ReplayOptions) -> Vec<(Method, SweepSpec)> {
        let selected = self.selected(options);
        self.methods()
            .into_iter()
            .filter_map(|method| {
                let grids: Vec<GridSpec> = selected
                    .iter()
                    .filter(|((m, _), starts)| *m == method && !starts.is_empty())
                    .map(|((_, n), starts)| GridSpec {
                        rule: self.moves.is_none().then(|| self.rule.clone()),
                        moves: self.moves.clone(),
                        dims: vec![self.dims],
                        n: vec![*n],
                        starts: Some(starts.clone()),
                        ..GridSpec::default()
                    })
                    .collect();
                (!grids.is_empty()).then(|| {
                    let spec = SweepSpec {
                        name: format!("replay {} {}", self.experiment, method.name()),
                        seed: 0,
                        starts: 1,
                        precision: None,
                        confidence: None,
                        min_starts: None,
                        methods: vec![method],
                        budget: None,
                        iterations: None,
                        closed: false,
                        grids,
                        limits: Limits { max_cells: u64::MAX >> 1, ..Limits::default() },
                    };
                    (method, spec)
                })
            })
            .collect()
    }

    /// Compares the published tasks `options` kept with knight-sweep's
    /// results (`found(method, n, start)`), per (N, method). A task with no
    /// result counts as differing.
    pub fn compare(
        &self,
        options: &ReplayOptions,
        found: impl Fn(Method, u32, &[u64]) -> Option<Replayed>,
    ) -> Vec<ReplayRow> {
        let selected = self.selected(options);
        let mut rows: BTreeMap<(u32, Method), ReplayRow> = BTreeMap::new();
        for t in &self.tasks {
            let Some(starts) = selected.get(&(t.method, t.n)) else { continue };
            let ineligible = !starts.contains(&t.start) && !self.eligible(t.n, &t.start);
            if !starts.contains(&t.start) && !ineligible {
                continue; // sampled out
            }
            let row = rows.entry((t.n, t.method)).or_insert_with(|| ReplayRow {
                n: t.n,
                method: t.method,
                tasks: 0,
                published_successes: 0,
                successes: 0,
                differing: Vec::new(),
                published_micros: 0,
                timed_tasks: 0,
                micros: 0,
                micros_timed: 0,
                ineligible: 0,
            });
            row.tasks += 1;
            row.published_successes += u64::from(t.success);
            // No tour can start on an ineligible cell: knight-sweep's answer
            // without running anything.
            row.ineligible += u64::from(ineligible);
            let ours =
                if ineligible { Some(Replayed { success: false, micros: 0 }) } else { found(t.method, t.n, &t.start) };
            if let Some(r) = ours {
                row.successes += u64::from(r.success);
                row.micros += r.micros;
            }
            if ours.map(|r| r.success) != Some(t.success) {
                row.differing.push((t.start.clone(), t.success));
            }
            if let (Some(theirs), Some(r)) = (t.micros, ours) {
                row.published_micros += theirs;
                row.timed_tasks += 1;
                row.micros_timed += r.micros;
            }
        }
        rows.into_values().collect()
    }
}

/// The header keys a replay file may have (besides `note`).
fn key_name(key: &str) -> Option<&'static str> {
    ["experiment", "source", "program", "rule", "dims", "moves"].into_iter().find(|&k| k == key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::Sweep;

    const FILE: &str = "# experiment: t-2d\n# source: somewhere, data/x\n# program: data/x/2D.cpp\n# rule: 2,1\n\
# dims: 2\n# moves: canonical\n# note: a test file\nn\tmethod\tstart\tsuccess\tmicros\n\
8\tw\t0,0\t1\t30\n8\tw\t0,0\t1\t32\n8\tw\t3,4\t0\t-\n5\tw\t0,0\t1\t9\n5\taw+\t2,2\t1\t8\n";

    #[test]
    fn parses_and_builds_one_spec_per_method() {
        let r = Replay::parse(FILE).unwrap();
        assert_eq!(
            (r.experiment.as_str(), r.rule.as_slice(), r.dims, r.moves.is_none()),
            ("t-2d", &[2, 1][..], 2, true)
        );
        assert_eq!(r.notes, ["a test file"]);
        assert_eq!(r.tasks.len(), 5);
        assert_eq!(r.tasks[2].micros, None);
        let specs = r.specs(&ReplayOptions::default());
        assert_eq!(specs.iter().map(|(m, _)| *m).collect::<Vec<_>>(), [Method::W, Method::AwPlus]);
        let sweep = Sweep::new(specs[0].1.clone()).unwrap();
        // N = 5 then 8, the repeated start once.
        let starts: Vec<u64> = sweep.configurations().iter().map(|c| c.start_count(1)).collect();
        assert_eq!(starts, [1, 2]);
        let sampled = r.specs(&ReplayOptions { sample: Some(1), max_cells: Some(30), sample_above: 0 });
        let sweep = Sweep::new(sampled[0].1.clone()).unwrap();
        assert_eq!(sweep.configurations().len(), 1, "8x8 is over max_cells");
        let big_only = r.specs(&ReplayOptions { sample: Some(1), max_cells: None, sample_above: 30 });
        let sweep = Sweep::new(big_only[0].1.clone()).unwrap();
        let starts: Vec<u64> = sweep.configurations().iter().map(|c| c.start_count(1)).collect();
        assert_eq!(starts, [1, 1], "5x5 is under sample_above: kept whole; 8x8 sampled");
    }

    #[test]
    fn compare_counts_repeats_and_differences() {
        let r = Replay::parse(FILE).unwrap();
        let rows = r.compare(&ReplayOptions::default(), |m, n, start| {
            let success = !(m == Method::W && n == 8 && start == [0, 0]);
            Some(Replayed { success, micros: 2 })
        });
        let row = rows.iter().find(|row| row.n == 8).unwrap();
        assert_eq!((row.tasks, row.published_successes, row.successes), (3, 2, 1));
        assert_eq!(row.differing, vec![(vec![0, 0], true), (vec![0, 0], true), (vec![3, 4], false)]);
        assert_eq!((row.published_micros, row.timed_tasks, row.micros_timed, row.micros), (62, 2, 4, 6));
        let missing = r.compare(&ReplayOptions::default(), |_, _, _| None);
        assert_eq!(missing.iter().map(|row| row.differing.len()).sum::<usize>(), 5);
    }

    #[test]
    fn malformed_files_name_the_line() {
        let cases = [
            (FILE.replace("8\tw\t3,4\t0", "8\tq\t3,4\t0"), "line 11: method: \"q\" is not a method"),
            (FILE.replace("\t0\t-", "\t2\t-"), "line 11: success: \"2\" is neither 1 nor 0"),
            (FILE.replace("\t9\n", "\tx\n"), "line 12: micros: \"x\" is not a whole number or -"),
            (FILE.replace("# dims: 2\n", ""), "header: `# dims:` is missing"),
            (FILE.replace("n\tmethod", "n\tmeth"), "line 8: expected the columns"),
        ];
        for (text, expected) in cases {
            let e = Replay::parse(&text).unwrap_err().to_string();
            assert!(e.starts_with(expected), "{e:?} does not start with {expected:?}");
        }
    }
}
