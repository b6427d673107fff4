//! The sweep spec: a TOML file that names every configuration, method and
//! the number of starts, checked field by field before anything runs.
//!
//! ```toml
//! name = "report-3-2"          # required: how reports and the coordinator show it
//! seed = 2025                  # required: the start sampling and task seeds derive from it
//! starts = 100                 # S starts per configuration (default 100, 1..=2^24)
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

/// Hard cap on `limits.max_configurations`: configurations are held in
/// memory and numbered with a u32.
pub const MAX_CONFIGURATIONS: u64 = 1 << 24;

/// Largest spec text accepted: a spec names ranges, not configurations one by one.
pub const MAX_SPEC_BYTES: usize = 1 << 20;

/// The parsed spec, as written (see the module docs for the format).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepSpec {
    /// How reports and the coordinator show the sweep.
    pub name: String,
    /// The seed start sampling and task seeds derive from.
    pub seed: u64,
    /// S: starts per configuration.
    #[serde(default = "default_starts")]
    pub starts: u64,
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

/// One `[[grid]]`: a move set (rule or explicit list) times a set of boards.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GridSpec {
    /// A leaper rule, padded with zeros to each D.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<Vec<u32>>,
    /// An explicit move list; its order is the move order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moves: Option<Vec<Vec<i64>>>,
    /// The D values of the regular boards (`n`, `n_range`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dims: Vec<usize>,
    /// N values of regular N^D boards.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub n: Vec<u32>,
    /// A range of N values of regular boards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n_range: Option<NRange>,
    /// Explicit board shapes, each with its own D.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shapes: Vec<Vec<u32>>,
    /// Explicit starts (coordinates), run on every board of the grid in
    /// place of the sampled ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starts: Option<Vec<Vec<u64>>>,
    /// A file of starts, one per line; the client reads it into `starts`
    /// ([`SweepSpec::read_start_files`]) before the spec goes anywhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starts_file: Option<String>,
    /// Labels a worker must carry to run this grid's boards (`requires =
    /// ["bigmem"]`, matched against `ksweep worker --label`). Placement
    /// only: results do not depend on it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<String>,
}

/// `n_range = { from, to, step }`: from, from + step, .. up to `to` inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NRange {
    /// The first N.
    pub from: u32,
    /// The last N, inclusive.
    pub to: u32,
    /// The step between N values (default 1).
    #[serde(default = "default_step")]
    pub step: u32,
}

/// Upper bounds a spec sets on itself, so a typo cannot ask for years of work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Cells of one board.
    pub max_cells: u64,
    /// Starts x methods over the whole sweep.
    pub max_tasks: u64,
    /// (move set, board) pairs.
    pub max_configurations: u64,
    /// `budget` of one `bt` or `solve` task: a task runs until its budget
    /// is spent, pinning a worker's thread (1e10 is about an hour of `bt`
    /// on a board of 144 cells).
    pub max_budget: u64,
    /// `iterations` of one `nn` task (at most [`MAX_ITERATIONS`]).
    pub max_iterations: u32,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_cells: tour::DEFAULT_MAX_CELLS,
            max_tasks: 10_000_000_000,
            max_configurations: 1_000_000,
            max_budget: 100 * tour::DEFAULT_BUDGET,
            max_iterations: 100 * tour::DEFAULT_ITERATIONS,
        }
    }
}

impl Limits {
    /// Each limit lowered to at most `caps`'s: what a server that accepts
    /// specs from others (the coordinator) allows whatever a spec asks for.
    pub fn capped(self, caps: &Limits) -> Limits {
        Limits {
            max_cells: self.max_cells.min(caps.max_cells),
            max_tasks: self.max_tasks.min(caps.max_tasks),
            max_configurations: self.max_configurations.min(caps.max_configurations),
            max_budget: self.max_budget.min(caps.max_budget),
            max_iterations: self.max_iterations.min(caps.max_iterations),
        }
    }
}

fn default_starts() -> u64 {
    100
}

fn default_step() -> u32 {
    1
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

impl NRange {
    /// Number of values in the range (0 if `to < from`, which `check` refuses).
    pub fn len(&self) -> u64 {
        if self.to < self.from || self.step == 0 {
            return 0;
        }
        u64::from((self.to - self.from) / self.step) + 1
    }

    /// True when the range holds no value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values, ascending.
    pub fn values(&self) -> impl Iterator<Item = u32> {
        let NRange { from, step, .. } = *self;
        (0..self.len()).map(move |i| from + (i as u32) * step)
    }
}

impl GridSpec {
    /// The D values regular boards (`n`, `n_range`) are built in: `dims`, or
    /// for an explicit move list without `dims`, the length of its moves.
    pub fn regular_dims(&self) -> Vec<usize> {
        match (&self.moves, self.dims.is_empty()) {
            (Some(list), true) => list.first().map(Vec::len).into_iter().collect(),
            _ => self.dims.clone(),
        }
    }

    /// The distinct N of the regular boards, ascending.
    pub fn regular_ns(&self) -> Vec<u32> {
        let mut ns: Vec<u32> = self.n.clone();
        ns.extend(self.n_range.iter().flat_map(NRange::values));
        ns.sort_unstable();
        ns.dedup();
        ns
    }

    /// Number of distinct N, without listing them (ranges can be long).
    fn regular_n_count(&self) -> u64 {
        let range = self.n_range.unwrap_or(NRange { from: 1, to: 0, step: 1 });
        let in_range =
            |n: u32| range.step > 0 && n >= range.from && n <= range.to && (n - range.from).is_multiple_of(range.step);
        let mut extra: Vec<u32> = self.n.iter().copied().filter(|&n| !in_range(n)).collect();
        extra.sort_unstable();
        extra.dedup();
        range.len() + extra.len() as u64
    }

    /// Configurations the grid gives before removing repeats of other grids.
    pub fn configuration_count(&self) -> u64 {
        let regular = self.regular_dims().len() as u64 * self.regular_n_count();
        regular + self.shapes.len() as u64
    }

    /// The same grid written the canonical way: N listed ascending once.
    fn normalized(&self) -> GridSpec {
        let mut n = self.n.clone();
        n.sort_unstable();
        n.dedup();
        GridSpec { n, ..self.clone() }
    }

    /// Structural checks; the engine checks the rule, moves and boards later.
    fn check(&self, path: &str) -> Result<(), SpecError> {
        let field = |name: &str, message: String| SpecError::field(format!("{path}.{name}"), message);
        match (&self.rule, &self.moves) {
            (Some(_), Some(_)) => return Err(SpecError::field(path, "has both rule and moves; give exactly one")),
            (None, None) => {
                return Err(SpecError::field(path, "has neither rule nor moves; give exactly one (e.g. rule = [2, 1])"))
            }
            _ => {}
        }
        if let Some(&d) = self.dims.iter().find(|&&d| d == 0 || d > tour::MAX_DIMS) {
            return Err(field("dims", format!("{d} is outside the allowed 1..={}", tour::MAX_DIMS)));
        }
        if self.n.is_empty() && self.n_range.is_none() && self.shapes.is_empty() {
            return Err(SpecError::field(path, "gives no boards; add n, n_range or shapes"));
        }
        if self.n.contains(&0) {
            return Err(field("n", "0 is below the minimum 1".into()));
        }
        if let Some(r) = self.n_range {
            if r.step == 0 {
                return Err(field("n_range.step", "must be at least 1".into()));
            }
            if r.from == 0 {
                return Err(field("n_range.from", "0 is below the minimum 1".into()));
            }
            if r.to < r.from {
                return Err(field("n_range.to", format!("{} is below from = {}", r.to, r.from)));
            }
        }
        match (&self.starts, &self.starts_file) {
            (Some(_), Some(_)) => {
                return Err(SpecError::field(path, "has both starts and starts_file; give at most one"))
            }
            (None, Some(_)) => {
                return Err(field(
                    "starts_file",
                    "was not read; a client reads it into starts (ksweep does) before submitting".into(),
                ))
            }
            (Some(list), None) if list.is_empty() => {
                return Err(field("starts", "is empty; list at least one start or drop the key".into()))
            }
            (Some(list), None) if list.len() as u64 > tour::MAX_STARTS => {
                return Err(field("starts", format!("has {} starts, over the limit {}", list.len(), tour::MAX_STARTS)))
            }
            _ => {}
        }
        match crate::labels::labels(&self.requires) {
            Err(crate::labels::LabelError::TooMany(n)) => {
                return Err(field("requires", format!("has {n} labels, over the limit {}", crate::labels::MAX_LABELS)))
            }
            Err(crate::labels::LabelError::Malformed(i)) => {
                return Err(field(&format!("requires[{}]", i - 1), format!("must be {}", crate::labels::LABEL_RULE)))
            }
            Ok(_) => {}
        }
        let has_regular = !self.n.is_empty() || self.n_range.is_some();
        if has_regular && self.regular_dims().is_empty() {
            return Err(field("dims", "is required with n and n_range (e.g. dims = [2, 3])".into()));
        }
        for (i, shape) in self.shapes.iter().enumerate() {
            let len = shape.len();
            if len == 0 || len > tour::MAX_DIMS {
                return Err(field(
                    &format!("shapes[{i}]"),
                    format!("has {len} sides; a board has 1..={} sides", tour::MAX_DIMS),
                ));
            }
            if !self.dims.is_empty() && !self.dims.contains(&len) {
                return Err(field(
                    &format!("shapes[{i}]"),
                    format!("has {len} sides but dims lists only {:?}", self.dims),
                ));
            }
        }
        Ok(())
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
            SpecError::Field { path, message }
        })
    }

    /// Checks every value that does not need the engine: name, starts,
    /// methods, limits and each grid's structure.
    pub fn check(&self) -> Result<(), SpecError> {
        if self.name.trim().is_empty() {
            return Err(SpecError::field("name", "is empty"));
        }
        if self.name.len() > MAX_NAME_BYTES || self.name.chars().any(char::is_control) {
            return Err(SpecError::field(
                "name",
                format!("must be at most {MAX_NAME_BYTES} bytes with no control characters"),
            ));
        }
        if self.starts == 0 {
            return Err(SpecError::field("starts", "0 is below the minimum 1"));
        }
        if self.starts > tour::MAX_STARTS {
            return Err(SpecError::field("starts", format!("{} is over the limit {}", self.starts, tour::MAX_STARTS)));
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

    /// [`SweepSpec::canonical`] as TOML: what a coordinator stores.
    pub fn to_canonical_toml(&self) -> String {
        // Every integer came from TOML (so fits an i64) and there are no
        // maps with non-string keys: serialising cannot fail.
        toml::to_string(&self.canonical()).expect("a parsed spec serialises back to TOML")
    }
}

/// Largest `iterations` accepted for the nn methods.
pub const MAX_ITERATIONS: u32 = 1_000_000;

/// Longest accepted `name`, in bytes.
const MAX_NAME_BYTES: usize = 200;

/// A one-line TOML error: "line 3, column 7: <what went wrong>".
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
