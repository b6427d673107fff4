//! The sweep spec: a TOML file that names every configuration, method and
//! the number of starts, checked field by field before anything runs.
//!
//! ```toml
//! name = "report-3-2"          # required: how reports and the coordinator show it
//! seed = 2025                  # required: the start sampling and task seeds derive from it
//! starts = 100                 # S starts per configuration (default 100, 1..=2^24);
//!                              # with precision, the cap no cell goes past
//! # precision = 0.02           # or: starts until each (configuration, method) cell's
//! #                            # interval half-width is at most this share (0 < x < 0.5)
//! # confidence = 0.95          # the interval's confidence, whatever the looks (default 0.95)
//! # min_starts = 32            # starts before a cell's first look (default 32)
//! methods = ["w", "w+", "aw", "aw+", "mw"]   # any of w, w+, aw, aw+, mw, wr, wr+; no repeats
//!
//! [[grid]]                     # one or more; each is a move set times some boards
//! rule = [3, 2]                # a leaper rule, padded with zeros to each D, or:
//! # moves = [[3, 2], [3, -2]]  # an explicit move list (its order is the move order)
//! dims = [2, 3, 4]             # D values for n / n_range (with moves: defaults to the moves' length)
//! n = [5, 6, 7]                # regular N^D boards: a list, and/or
//! n_range = { from = 5, to = 199, step = 1 }   # to is inclusive, step defaults to 1
//! # shapes = [[100, 80], [4, 4, 6]]  # explicit boards; they carry their own D (if dims is
//! #                                  # given too, each shape's length must be one of them)
//! # starts = [[0, 0], [3, 4]]        # explicit starts, run on every board of the grid instead
//! #                                  # of S sampled ones: on the board, eligible, no repeats
//! # starts_file = "starts.txt"       # or the same read from a file, one start per line as
//! #                                  # `ksweep eval` reads them (relative to the spec's folder)
//!
//! [limits]                     # optional; refuse a spec that asks for too much
//! max_cells = 4294967296       # cells of one board (default tour::DEFAULT_MAX_CELLS)
//! max_tasks = 10000000000      # starts x methods over the sweep (default 1e10)
//! max_configurations = 1000000 # (rule or moves, board) pairs (default 1e6)
//! max_budget = 10000000000     # budget of one bt or solve task (default 1e10, 100x the default budget)
//! max_iterations = 10000       # iterations of one nn task (default 1e4, at most 1e6)
//! ```
//!
//! Unknown keys are errors, so a typo (`n_rang`) is not silently ignored.
//! Configurations are listed grid by grid; within a grid, D in `dims` order
//! with N ascending, then `shapes` in the given order; a configuration that
//! an earlier grid already gave is dropped.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use tour::Method;

use crate::error::SpecError;
use crate::precision::{Precision, DEFAULT_MIN_STARTS};

mod grid;
mod limits;

pub use grid::{GridSpec, NRange};
pub use limits::{Limits, MAX_ITERATIONS};

/// Hard cap on `limits.max_configurations`: configurations are held in
/// memory and numbered with a u32.
pub const MAX_CONFIGURATIONS: u64 = 1 << 24;

/// Largest spec text accepted: a spec names ranges, not configurations one by one.
pub const MAX_SPEC_BYTES: usize = 1 << 20;

/// The parsed spec, as written (see the module docs for the format).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepSpec {
    /// How reports and the coordinator show the sweep.
    pub name: String,
    /// The seed start sampling and task seeds derive from.
    pub seed: u64,
    /// S: starts per configuration.
    #[serde(default = "default_starts")]
    pub starts: u64,
    /// Starts until each cell's interval is this tight (a half-width, as a
    /// share): `starts` is then the cap ([`crate::precision`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<f64>,
    /// The confidence of those intervals (default 0.95); only with `precision`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// Starts before a cell's first look (default
    /// [`crate::precision::DEFAULT_MIN_STARTS`]); only with `precision`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_starts: Option<u64>,
    /// The methods every start runs, in table order.
    #[serde(deserialize_with = "method_names::deserialize", serialize_with = "method_names::serialize")]
    pub methods: Vec<Method>,
    /// Node budget of `bt`, work budget of `solve`, per task (default
    /// tour::DEFAULT_BUDGET).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<u64>,
    /// Ask for closed tours (`solve`, `bt`; the `nn` methods always do).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub closed: bool,
    /// Iteration cap of the `nn` methods (default 100, as in seed 004).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u32>,
    /// The `[[grid]]` tables, in order.
    #[serde(rename = "grid", default)]
    pub grids: Vec<GridSpec>,
    /// What the spec allows itself (`[limits]`).
    #[serde(default)]
    pub limits: Limits,
}

fn default_starts() -> u64 {
    100
}

/// Methods are written by name (`"aw+"`); `tour::Method` has no serde of its own.
mod method_names {
    use super::*;

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Method>, D::Error> {
        let names = Vec::<String>::deserialize(d)?;
        names
            .iter()
            .map(|name| {
                name.parse().map_err(|_| {
                    serde::de::Error::custom(format!("unknown method {name:?}; expected one of {}", Method::names()))
                })
            })
            .collect()
    }

    pub fn serialize<S: Serializer>(methods: &[Method], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(methods.iter().map(|m| m.name()))
    }
}

impl SweepSpec {
    /// Reads a spec from TOML text: the size limit, TOML syntax, unknown
    /// keys and types. Does not check values; see [`SweepSpec::check`].
    pub fn from_toml(text: &str) -> Result<SweepSpec, SpecError> {
        if text.len() > MAX_SPEC_BYTES {
            return Err(SpecError::TooLarge { bytes: text.len(), max: MAX_SPEC_BYTES });
        }
        let document = toml::Deserializer::parse(text).map_err(|e| SpecError::Syntax(describe_toml_error(text, &e)))?;
        serde_path_to_error::deserialize(document).map_err(|e| {
            let path = match e.path().to_string() {
                p if p == "." => "spec".to_string(),
                p => p,
            };
            let message = describe_toml_error(text, e.inner());
            let mut error = SpecError::Field { path: path.clone(), message };
            if e.inner().message().starts_with("unknown field") {
                let others = other_unknown_keys(text, &path);
                if let (false, SpecError::Field { message, .. }) = (others.is_empty(), &mut error) {
                    message.push_str(&format!("; also unknown: {}", others.join(", ")));
                }
            }
            error
        })
    }

    /// Checks every value that does not need the engine: name, starts,
    /// methods, limits and each grid's structure.
    pub fn check(&self) -> Result<(), SpecError> {
        check_name(&self.name)?;
        if self.starts == 0 {
            return Err(SpecError::field("starts", "0 is below the minimum 1"));
        }
        if self.starts > tour::MAX_STARTS {
            return Err(SpecError::field("starts", format!("{} is over the limit {}", self.starts, tour::MAX_STARTS)));
        }
        if let Some((half_width, confidence, min_starts)) = self.precision_fields()? {
            Precision::check(half_width, confidence, min_starts, self.starts)?;
        }
        if self.methods.is_empty() {
            return Err(SpecError::field("methods", format!("is empty; give at least one of {}", Method::names())));
        }
        if let Some(m) = self.methods.iter().find(|m| self.closed && !m.finds_closed()) {
            return Err(SpecError::field(
                "closed",
                format!(
                    "method {} only finds open tours; closed tours are asked of solve, bt and the nn methods",
                    m.name()
                ),
            ));
        }
        self.check_effort()?;
        for (i, m) in self.methods.iter().enumerate() {
            if self.methods[..i].contains(m) {
                return Err(SpecError::field("methods", format!("lists {:?} twice", m.name())));
            }
        }
        for (name, value) in [
            ("max_cells", self.limits.max_cells),
            ("max_tasks", self.limits.max_tasks),
            ("max_configurations", self.limits.max_configurations),
            ("max_budget", self.limits.max_budget),
            ("max_iterations", u64::from(self.limits.max_iterations)),
        ] {
            if value == 0 {
                return Err(SpecError::field(format!("limits.{name}"), "0 is below the minimum 1"));
            }
        }
        if self.limits.max_configurations > MAX_CONFIGURATIONS {
            return Err(SpecError::field(
                "limits.max_configurations",
                format!("{} is over the hard limit {MAX_CONFIGURATIONS}", self.limits.max_configurations),
            ));
        }
        if self.grids.is_empty() {
            return Err(SpecError::field("grid", "no grids; add at least one [[grid]] table"));
        }
        for (i, grid) in self.grids.iter().enumerate() {
            grid.check(&format!("grid[{i}]"))?;
        }
        let count = self.grids.iter().map(GridSpec::configuration_count).fold(0u64, u64::saturating_add);
        if count > self.limits.max_configurations {
            return Err(SpecError::TooManyConfigurations { count, max: self.limits.max_configurations });
        }
        Ok(())
    }

    /// The adaptive precision the spec asks for, checked; None for a sweep
    /// of a fixed `starts` per configuration.
    pub fn precision(&self) -> Result<Option<Precision>, SpecError> {
        match self.precision_fields()? {
            Some((half_width, confidence, min_starts)) => {
                Precision::new(half_width, confidence, min_starts, self.starts).map(Some)
            }
            None => Ok(None),
        }
    }

    /// The precision fields with their defaults, checked against the rest
    /// of the spec (not their own ranges: [`Precision::check`]).
    fn precision_fields(&self) -> Result<Option<(f64, f64, u64)>, SpecError> {
        let Some(half_width) = self.precision else {
            for (name, given) in [("confidence", self.confidence.is_some()), ("min_starts", self.min_starts.is_some())]
            {
                if given {
                    return Err(SpecError::field(name, "is only used with precision; set precision or remove it"));
                }
            }
            return Ok(None);
        };
        let (confidence, min_starts) =
            (self.confidence.unwrap_or(0.95), self.min_starts.unwrap_or(DEFAULT_MIN_STARTS.min(self.starts)));
        if let Some(g) = self.grids.iter().position(|g| g.starts.is_some() || g.starts_file.is_some()) {
            return Err(SpecError::field(
                format!("grid[{g}].starts"),
                "explicit starts are not a sample; precision draws its starts (remove one of them)",
            ));
        }
        Ok(Some((half_width, confidence, min_starts)))
    }

    /// `budget` and `iterations` within 1 and their limits, where a method
    /// spends them (the default counts when they are not given): a task
    /// runs until its budget is spent, and cancelling its sweep is the only
    /// other way to stop it.
    fn check_effort(&self) -> Result<(), SpecError> {
        if self.limits.max_iterations > MAX_ITERATIONS {
            return Err(SpecError::field(
                "limits.max_iterations",
                format!("{} is over the hard limit {MAX_ITERATIONS}", self.limits.max_iterations),
            ));
        }
        let uses_budget = self.methods.iter().any(|m| matches!(m, Method::Bt | Method::Solve));
        let uses_iterations = self.methods.iter().any(|m| matches!(m, Method::Nn(_)));
        for (field, value, default, limit, uses) in [
            ("budget", self.budget, tour::DEFAULT_BUDGET, self.limits.max_budget, uses_budget),
            (
                "iterations",
                self.iterations.map(u64::from),
                u64::from(tour::DEFAULT_ITERATIONS),
                u64::from(self.limits.max_iterations),
                uses_iterations,
            ),
        ] {
            if value == Some(0) {
                return Err(SpecError::field(field, "0 is below the minimum 1"));
            }
            let effective = value.unwrap_or(default);
            if uses && effective > limit {
                let given = if value.is_some() { "" } else { " (the default)" };
                return Err(SpecError::field(
                    field,
                    format!(
                        "{effective}{given} is over the limit {limit} (limits.max_{field}, which a coordinator \
                         holds to its --max-{field})"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The same spec written the canonical way: `n` lists sorted without
    /// repeats (defaults are already filled in by parsing).
    pub fn canonical(&self) -> SweepSpec {
        SweepSpec { grids: self.grids.iter().map(GridSpec::normalized).collect(), ..self.clone() }
    }

    /// Reads every grid's `starts_file` into its `starts` with `read` (given
    /// the file name as written, it returns the file's text), so the spec
    /// carries its starts wherever it is sent. Lines are parsed as `ksweep
    /// eval` reads them ([`crate::parse_start_line`]); an error names the
    /// line and what is wrong with it, never its text (the file may be any
    /// file the user can read).
    pub fn read_start_files(&mut self, mut read: impl FnMut(&str) -> Result<String, String>) -> Result<(), SpecError> {
        for (g, grid) in self.grids.iter_mut().enumerate() {
            let Some(file) = grid.starts_file.take() else { continue };
            let path = format!("grid[{g}].starts_file");
            if grid.starts.is_some() {
                return Err(SpecError::field(
                    format!("grid[{g}]"),
                    "has both starts and starts_file; give at most one",
                ));
            }
            let text = read(&file).map_err(|e| SpecError::field(&path, format!("cannot read {file:?}: {e}")))?;
            let mut starts = Vec::new();
            for (number, line) in text.lines().enumerate() {
                match crate::parse_start_line(line) {
                    Ok(Some(start)) => starts.push(start),
                    Ok(None) => {}
                    Err(e) => {
                        return Err(SpecError::field(&path, format!("{file:?} line {}: {}", number + 1, e.redacted())))
                    }
                }
            }
            grid.starts = Some(starts);
        }
        Ok(())
    }

    /// The seed of a stored spec's text, read without parsing the rest
    /// (a list of sweeps reads every one's; the spec may be a megabyte of
    /// explicit starts): canonical TOML writes the top-level keys first,
    /// one a line. None where it is not there.
    pub fn seed_of(spec_toml: &str) -> Option<u64> {
        spec_toml
            .lines()
            .take_while(|line| !line.starts_with('['))
            .find_map(|line| line.strip_prefix("seed = ")?.trim().parse().ok())
    }

    /// [`SweepSpec::canonical`] as TOML: what a coordinator stores.
    pub fn to_canonical_toml(&self) -> String {
        // Every integer came from TOML (so fits an i64) and there are no
        // maps with non-string keys: serialising cannot fail.
        toml::to_string(&self.canonical()).expect("a parsed spec serialises back to TOML")
    }
}

/// Longest accepted `name`, in bytes.
const MAX_NAME_BYTES: usize = 200;

/// Checks a sweep's name, as a spec gives it or `ksweep rename` sets it:
/// not blank, at most 200 bytes, no control characters, and not shaped
/// like a sweep id (16 hex digits): commands take an id or a name in one
/// place, so a sweep renamed to another's id would pass for it in every
/// listing.
pub fn check_name(name: &str) -> Result<(), SpecError> {
    if name.trim().is_empty() {
        return Err(SpecError::field("name", "is empty"));
    }
    if name.len() == 16 && name.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(SpecError::field(
            "name",
            format!("{name} is shaped like a sweep id (16 hex digits); choose a name"),
        ));
    }
    if name.len() > MAX_NAME_BYTES || name.chars().any(char::is_control) {
        return Err(SpecError::field(
            "name",
            format!("must be at most {MAX_NAME_BYTES} bytes with no control characters"),
        ));
    }
    Ok(())
}

/// A one-line TOML error: "line 3, column 7: <what went wrong>".
/// Every unknown key of the spec besides `first`, so a spec with several
/// typos is fixed in one round: each found is removed and the rest parsed
/// again (at most a few dozen times, within MAX_SPEC_BYTES).
fn other_unknown_keys(text: &str, first: &str) -> Vec<String> {
    let Ok(mut table) = text.parse::<toml::Table>() else { return Vec::new() };
    let mut found = Vec::new();
    let mut path = first.to_string();
    for _ in 0..32 {
        if !remove_at(&mut table, &path) {
            break;
        }
        let again: Result<SweepSpec, _> = serde_path_to_error::deserialize(toml::Value::Table(table.clone()));
        match again {
            Err(e) if e.inner().message().starts_with("unknown field") => {
                path = e.path().to_string();
                found.push(path.clone());
            }
            _ => break,
        }
    }
    found
}

/// Removes the key at a path as serde_path_to_error writes it
/// (`grid[0].n_rang`, `limits.max_cels`); false when there is none.
fn remove_at(table: &mut toml::Table, path: &str) -> bool {
    let mut parts: Vec<&str> = path.split('.').collect();
    let Some(last) = parts.pop() else { return false };
    let mut at = table;
    for part in parts {
        let (key, index) = match part.split_once('[') {
            Some((key, rest)) => (key, rest.trim_end_matches(']').parse::<usize>().ok()),
            None => (part, None),
        };
        let value = match (at.get_mut(key), index) {
            (Some(toml::Value::Array(items)), Some(i)) => items.get_mut(i),
            (Some(v), None) => Some(v),
            _ => None,
        };
        match value {
            Some(toml::Value::Table(t)) => at = t,
            _ => return false,
        }
    }
    at.remove(last).is_some()
}

fn describe_toml_error(text: &str, e: &toml::de::Error) -> String {
    match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            format!("line {line}, column {column}: {}", e.message())
        }
        None => e.message().to_string(),
    }
}

#[cfg(test)]
mod tests;
