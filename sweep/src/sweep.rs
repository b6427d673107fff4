//! A validated sweep: the spec plus the configurations it expands to, each
//! checked by the engine, with the sweep's id and task count.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use sha2::{Digest, Sha256};
use tour::exists::{Claim, Existence};
use tour::{Board, Configuration, Eligibility, Method, Moves, Outcome, TaskResult};

use crate::error::SpecError;
use crate::plan::Cursor;
use crate::spec::{Limits, SweepSpec};

/// A spec that passed every check, expanded into its configurations.
#[derive(Debug, Clone)]
pub struct Sweep {
    spec: SweepSpec,
    configurations: Vec<ConfigEntry>,
    total_tasks: u64,
    /// `cost_suffix[i]`: estimated cost of every task of configurations
    /// `i..`, so the cost left after a cursor is O(1).
    cost_suffix: Vec<f64>,
    id: String,
}

/// A configuration's move set as the spec gave it. The list is shared by
/// every configuration of its grid, so a long list times many boards costs
/// one copy.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum MoveSpec {
    /// A leaper rule, unpadded, as written.
    Rule(Vec<u32>),
    /// An explicit move list, in its order.
    List(Arc<[Vec<i64>]>),
}

/// One configuration of a sweep: a move set on one board shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigEntry {
    /// Position in [`Sweep::configurations`].
    pub index: u32,
    /// The `[[grid]]` it came from (0-based).
    pub grid: u32,
    /// The move set as the spec gave it.
    pub moves: MoveSpec,
    /// The board's side lengths.
    pub sides: Vec<u32>,
    // Computed once at parse time, so planning never rebuilds move sets.
    cells: u64,
    move_count: u32,
    eligibility: Eligibility,
    eligible: u64,
    existence: Existence,
    /// The grid's explicit starts as cell indices, in the order given;
    /// `None` when the starts are sampled.
    explicit_starts: Option<Arc<[u64]>>,
}

impl MoveSpec {
    /// The move set in `dims` dimensions (the engine validates it).
    pub fn moves(&self, dims: usize) -> tour::Result<Moves> {
        match self {
            MoveSpec::Rule(rule) => Moves::from_rule(rule, dims),
            MoveSpec::List(list) => Moves::explicit(list, dims),
        }
    }

    /// `"2,1"` for a rule, `"2,1 1,2 .."` for a list, as
    /// [`tour::Moves::describe`] writes them.
    pub fn label(&self) -> String {
        let join = |parts: Vec<String>, sep: &str| parts.join(sep);
        match self {
            MoveSpec::Rule(rule) => join(rule.iter().map(u32::to_string).collect(), ","),
            MoveSpec::List(list) => {
                join(list.iter().map(|mv| join(mv.iter().map(i64::to_string).collect(), ",")).collect(), " ")
            }
        }
    }

    fn hash_into(&self, h: &mut IdHasher) {
        match self {
            MoveSpec::Rule(rule) => {
                h.word(1).word(rule.len() as u64);
                for &a in rule {
                    h.word(a.into());
                }
            }
            MoveSpec::List(list) => {
                h.word(2).word(list.len() as u64);
                for mv in list.iter() {
                    h.word(mv.len() as u64);
                    for &c in mv {
                        h.word(c as u64);
                    }
                }
            }
        }
    }
}

impl ConfigEntry {
    /// The engine's configuration. Validated when the sweep was parsed.
    pub fn configuration(&self) -> Configuration {
        let moves = self.moves.moves(self.dims()).expect("moves were validated when the sweep was parsed");
        // The spec's own max_cells was applied at parse time.
        let board = Board::with_max_cells(&self.sides, u64::MAX).expect("board was validated at parse");
        Configuration::new(board, moves).expect("dims were matched at parse")
    }

    /// D, the number of axes.
    pub fn dims(&self) -> usize {
        self.sides.len()
    }

    /// N when every side is N (a regular board).
    pub fn n(&self) -> Option<u32> {
        let first = *self.sides.first()?;
        self.sides.iter().all(|&s| s == first).then_some(first)
    }

    /// `"8x8"`, `"100x80"`.
    pub fn shape_label(&self) -> String {
        shape(&self.sides)
    }

    /// `"2,1"` or `"2,1 1,2 .."`.
    pub fn moves_label(&self) -> String {
        self.moves.label()
    }

    /// Number of cells.
    pub fn cells(&self) -> u64 {
        self.cells
    }

    /// K, the number of moves.
    pub fn move_count(&self) -> u32 {
        self.move_count
    }

    /// What the theorems of [`tour::exists`] prove about tours on this board.
    pub fn existence(&self) -> Existence {
        self.existence
    }

    /// Which cells may start a tour (docs/methods.md).
    pub fn eligibility(&self) -> Eligibility {
        self.eligibility
    }

    /// Number of eligible starts (0 when impossible).
    pub fn eligible_count(&self) -> u64 {
        self.eligible
    }

    /// Starts the sweep runs here: the explicit starts if the spec lists
    /// them, else min(eligible, S), 0 when impossible.
    pub fn start_count(&self, per_config: u64) -> u64 {
        match &self.explicit_starts {
            Some(cells) => cells.len() as u64,
            None => self.eligible.min(per_config),
        }
    }

    /// The spec's explicit starts (cell indices, in the order given), if any.
    pub fn explicit_starts(&self) -> Option<&Arc<[u64]>> {
        self.explicit_starts.as_ref()
    }

    /// Relative cost of one walk: a walk visits up to every cell and looks
    /// at K neighbours per step. For shard sizing, not a time prediction.
    pub fn cost_per_task(&self) -> f64 {
        self.cells as f64 * f64::from(self.move_count)
    }
}

impl Sweep {
    /// Parses and validates a spec (see [`crate::spec`] for the format).
    pub fn parse(toml_text: &str) -> Result<Sweep, SpecError> {
        Sweep::new(SweepSpec::from_toml(toml_text)?)
    }

    /// [`Sweep::parse`] with the spec's limits lowered to `caps` first, so a
    /// spec cannot raise them past what the caller allows (a coordinator's
    /// own limits): a spec asking for 2^24 configurations is refused before
    /// any is built.
    pub fn parse_capped(toml_text: &str, caps: &Limits) -> Result<Sweep, SpecError> {
        let mut spec = SweepSpec::from_toml(toml_text)?;
        spec.limits = spec.limits.capped(caps);
        Sweep::new(spec)
    }

    /// Validates a spec and expands its configurations.
    pub fn new(spec: SweepSpec) -> Result<Sweep, SpecError> {
        spec.check()?;
        let configurations = expand(&spec)?;
        check_methods(&spec, &configurations)?;
        let total_tasks = configurations.iter().map(|c| c.start_count(spec.starts) * spec.methods.len() as u64).sum();
        if total_tasks > spec.limits.max_tasks {
            return Err(SpecError::TooManyTasks { tasks: total_tasks, max: spec.limits.max_tasks });
        }
        let id = content_id(&spec, &configurations);
        let methods = spec.methods.len() as f64;
        let mut cost_suffix = vec![0.0; configurations.len() + 1];
        for (i, c) in configurations.iter().enumerate().rev() {
            cost_suffix[i] = cost_suffix[i + 1] + c.start_count(spec.starts) as f64 * methods * c.cost_per_task();
        }
        Ok(Sweep { spec, configurations, total_tasks, cost_suffix, id })
    }

    /// 16 hex digits naming what the sweep computes: name, seed, S, methods
    /// and the ordered configurations. Layout, comments and limits of the
    /// text do not change it.
    pub fn id(&self) -> String {
        self.id.clone()
    }

    /// The spec's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// The sweep seed.
    pub fn seed(&self) -> u64 {
        self.spec.seed
    }

    /// S, the starts asked for per configuration.
    pub fn starts_per_config(&self) -> u64 {
        self.spec.starts
    }

    /// The methods every start runs, in table order.
    pub fn methods(&self) -> &[Method] {
        &self.spec.methods
    }

    /// True when the sweep asks for closed tours.
    pub fn closed(&self) -> bool {
        self.spec.closed
    }

    /// Node budget of `bt` (work budget of `solve`) per task.
    pub fn budget(&self) -> u64 {
        self.spec.budget.unwrap_or(tour::DEFAULT_BUDGET)
    }

    /// Iteration cap of the `nn` methods.
    pub fn iterations(&self) -> u32 {
        self.spec.iterations.unwrap_or(tour::DEFAULT_ITERATIONS)
    }

    /// The options of one task as a worker runs it: its seed, the sweep's
    /// budget and iterations, no path. Rerunning a task with these gives
    /// its recorded flags (see `ksweep plot --all-starts`).
    pub fn task_options(&self, config: &Configuration, start: u64, method: Method) -> tour::TaskOptions {
        tour::TaskOptions {
            seed: config.task_seed(self.seed(), start, method),
            record_path: false,
            budget: self.budget(),
            iterations: self.iterations(),
            closed: self.closed(),
        }
    }

    /// The limits the sweep was checked against.
    pub fn limits(&self) -> &Limits {
        &self.spec.limits
    }

    /// The spec as parsed.
    pub fn spec(&self) -> &SweepSpec {
        &self.spec
    }

    /// Grid by grid; D in `dims` order with N ascending, then shapes; repeats dropped.
    pub fn configurations(&self) -> &[ConfigEntry] {
        &self.configurations
    }

    /// Sum over configurations of min(eligible, S) x methods.
    pub fn total_tasks(&self) -> u64 {
        self.total_tasks
    }

    /// Estimated cost (cells x moves per task) of the tasks not yet planned
    /// at `cursor`.
    pub fn cost_after(&self, cursor: Cursor) -> f64 {
        let Some(entry) = self.configurations.get(cursor.config as usize) else { return 0.0 };
        let left = entry.start_count(self.spec.starts).saturating_sub(cursor.start) as f64;
        left * self.spec.methods.len() as f64 * entry.cost_per_task() + self.cost_suffix[cursor.config as usize + 1]
    }

    /// Checks that a result a worker reports for a task of configuration
    /// `config` could have come from the engine: visited within the board, a
    /// success is a whole-board tour, attempts within the method's bounds, a
    /// plausible time. A coordinator refuses a batch that fails, so a buggy
    /// or hostile worker cannot put impossible figures into the tables.
    pub fn check_result(&self, config: u32, start: u64, method: Method, r: &TaskResult) -> Result<(), String> {
        let Some(entry) = self.configurations.get(config as usize) else {
            return Err(format!("configuration {config} is not in the sweep"));
        };
        if !self.spec.methods.contains(&method) {
            return Err(format!("method {} is not in the sweep", method.name()));
        }
        let cells = entry.cells();
        if r.visited > cells {
            return Err(format!("visited {} is more than the board's {cells} cells", r.visited));
        }
        if r.success != (r.outcome == Outcome::Tour) {
            return Err(format!("success {} contradicts outcome {}", r.success, r.outcome));
        }
        if r.success && r.visited != cells {
            return Err(format!("a tour must visit all {cells} cells, not {}", r.visited));
        }
        if r.outcome == Outcome::NoTour && !method.proves_absence() {
            // A heuristic's failure proves nothing; the engine says no-tour
            // for it only where the colour rule or a theorem does.
            let claim = if method.seeks_closed(self.closed()) { entry.existence.closed } else { entry.existence.open };
            let proven = !entry.eligibility.admits(start, cells) || matches!(claim, Claim::Impossible(_));
            if !proven {
                return Err(format!(
                    "no-tour from {} on eligible start {start} is not a proof: only the colour rule, a theorem, \
                     bt, solve or construct may say no-tour",
                    method.name()
                ));
            }
        }
        let (low, high) = match method {
            m if m.is_warnsdorff() => (1, m.max_attempts(entry.move_count() as usize) as u64),
            Method::Bt => (1, self.budget().min(u64::from(u32::MAX))),
            Method::Construct => (0, 1),
            Method::Nn(_) => (0, u64::from(self.iterations())),
            _ => (0, u64::from(u32::MAX)),
        };
        if !(low..=high).contains(&u64::from(r.attempts)) {
            return Err(format!("attempts {} is outside {low}..={high} for {}", r.attempts, method.name()));
        }
        if method.is_warnsdorff() && r.visited == 0 {
            return Err("a walk visits at least its start".into());
        }
        if method.is_warnsdorff() && !r.success && u64::from(r.attempts) != high {
            return Err(format!("a failed {} makes all {high} walks, not {}", method.name(), r.attempts));
        }
        if r.micros > MAX_TASK_MICROS {
            return Err(format!("micros {} is over the bound {MAX_TASK_MICROS} (30 days)", r.micros));
        }
        Ok(())
    }

    /// The labels a worker must carry to run the boards of grid `grid`
    /// (its `requires`); none for a grid that requires none.
    pub fn required_labels(&self, grid: u32) -> std::collections::BTreeSet<String> {
        self.spec.grids.get(grid as usize).map(|g| g.requires.iter().cloned().collect()).unwrap_or_default()
    }

    /// The spec in canonical TOML; parsing it gives the same id.
    pub fn canonical_toml(&self) -> String {
        self.spec.to_canonical_toml()
    }
}

/// Longest time a task may report: 30 days, in microseconds.
pub const MAX_TASK_MICROS: u64 = 30 * 24 * 3600 * 1_000_000;

/// A board a grid asks for, and where (for error messages).
struct BoardRequest {
    sides: Vec<u32>,
    /// None for a regular board (`n`, `n_range`), else its index in `shapes`.
    shape_index: Option<usize>,
}

/// The field under a grid that asked for a board.
fn board_field(shape_index: Option<usize>) -> String {
    match shape_index {
        None => "n".into(),
        Some(i) => format!("shapes[{i}]"),
    }
}

/// Every configuration of a checked spec, validated by the engine.
fn expand(spec: &SweepSpec) -> Result<Vec<ConfigEntry>, SpecError> {
    let mut out: Vec<ConfigEntry> = Vec::new();
    let mut seen: HashSet<(MoveSpec, Vec<u32>)> = HashSet::new();
    for (g, grid) in spec.grids.iter().enumerate() {
        let engine = |error: tour::Error, context: String| SpecError::Engine { grid: g, error, context };
        let move_spec = match (&grid.rule, &grid.moves) {
            (Some(rule), _) => MoveSpec::Rule(rule.clone()),
            (None, Some(list)) => MoveSpec::List(list.clone().into()),
            (None, None) => unreachable!("checked: a grid has rule or moves"),
        };
        let ns = grid.regular_ns();
        let regular = grid
            .regular_dims()
            .into_iter()
            .flat_map(|d| ns.iter().map(move |&n| BoardRequest { sides: vec![n; d], shape_index: None }));
        let shapes = grid
            .shapes
            .iter()
            .enumerate()
            .map(|(i, shape)| BoardRequest { sides: shape.clone(), shape_index: Some(i) });
        // A move set is expanded and checked once per D, then shared.
        let mut moves_by_dims: HashMap<usize, Moves> = HashMap::new();
        for BoardRequest { sides, shape_index } in regular.chain(shapes) {
            let key = (move_spec.clone(), sides);
            if seen.contains(&key) {
                continue;
            }
            let (_, sides) = &key;
            let dims = sides.len();
            let moves = match moves_by_dims.get(&dims) {
                Some(m) => m.clone(),
                None => {
                    let m = move_spec.moves(dims).map_err(|e| engine(e, format!(" (dims {dims})")))?;
                    moves_by_dims.insert(dims, m.clone());
                    m
                }
            };
            let board = board(sides, &moves, &spec.limits).map_err(|e| match e {
                tour::Error::TooManyCells { cells, max } => SpecError::field(
                    format!("grid[{g}].{}", board_field(shape_index)),
                    format!("board {} has {cells} cells, over the limit limits.max_cells = {max}", shape(sides)),
                ),
                e => engine(e, format!(" (board {} in {})", shape(sides), board_field(shape_index))),
            })?;
            let config = Configuration::new(board, moves).map_err(|e| engine(e, String::new()))?;
            let explicit_starts = match &grid.starts {
                Some(list) => Some(explicit_starts(&config, list, g)?),
                None => None,
            };
            let index = u32::try_from(out.len()).expect("MAX_CONFIGURATIONS fits a u32");
            out.push(ConfigEntry {
                index,
                grid: g as u32,
                cells: config.board().cells(),
                move_count: config.moves().len() as u32,
                eligibility: config.eligibility(),
                eligible: config.eligible_count(),
                existence: tour::exists::known(config.board(), config.moves()),
                explicit_starts,
                moves: key.0.clone(),
                sides: key.1.clone(),
            });
            seen.insert(key);
        }
    }
    Ok(out)
}

/// A grid's explicit starts checked on one of its boards: each on the
/// board, eligible (docs/methods.md's colour rule), none repeated.
fn explicit_starts(config: &Configuration, list: &[Vec<u64>], grid: usize) -> Result<Arc<[u64]>, SpecError> {
    let label = || format!("board {} with moves {}", shape(config.board().sides()), config.moves().describe());
    if config.eligibility() == Eligibility::Impossible {
        return Err(SpecError::field(
            format!("grid[{grid}].starts"),
            format!("no tour exists on {} (no move changes a cell's colour), so it takes no starts", label()),
        ));
    }
    let mut seen: HashMap<u64, usize> = HashMap::with_capacity(list.len());
    let mut cells = Vec::with_capacity(list.len());
    for (i, coords) in list.iter().enumerate() {
        let path = format!("grid[{grid}].starts[{i}]");
        let cell = config.board().index_of(coords).map_err(|e| {
            let what = e.to_string();
            let what = what.strip_prefix("start: ").unwrap_or(&what).to_string();
            SpecError::field(&path, format!("{coords:?} {what} on {}", label()))
        })?;
        if !config.is_eligible(cell) {
            return Err(SpecError::field(
                &path,
                format!(
                    "{coords:?} is not an eligible start on {}: the board has an odd number of cells and \
                     every move changes colour, so a tour must start on a cell whose coordinates sum to an \
                     even number",
                    label()
                ),
            ));
        }
        if let Some(first) = seen.insert(cell, i) {
            return Err(SpecError::field(&path, format!("{coords:?} repeats starts[{first}]")));
        }
        cells.push(cell);
    }
    Ok(cells.into())
}

/// `"5x5"`.
fn shape(sides: &[u32]) -> String {
    let sides: Vec<String> = sides.iter().map(u32::to_string).collect();
    sides.join("x")
}

/// The board under the spec's cell limit, also refused when the engine's
/// padded layout (a border as wide as the longest move on every axis) would
/// be over `tour::MAX_PADDED_CELLS`: better at submit time than on a worker.
fn board(sides: &[u32], moves: &Moves, limits: &Limits) -> tour::Result<Board> {
    let board = Board::with_max_cells(sides, limits.max_cells)?;
    let pad = 2 * u128::from(moves.reach());
    let padded = sides.iter().fold(1u128, |acc, &n| acc.saturating_mul(u128::from(n) + pad));
    if padded > u128::from(tour::MAX_PADDED_CELLS) {
        return Err(tour::Error::PaddedTooLarge { cells: padded, max: tour::MAX_PADDED_CELLS });
    }
    Ok(board)
}

/// Refuses a method that cannot run on one of the configurations (e.g.
/// `construct` on a 3D board), naming the grid, so no shard fails later.
fn check_methods(spec: &SweepSpec, configurations: &[ConfigEntry]) -> Result<(), SpecError> {
    let limited: Vec<Method> = spec
        .methods
        .iter()
        .copied()
        .filter(|m| matches!(m, Method::Construct | Method::Nn(_) | Method::Solve))
        .collect();
    if limited.is_empty() {
        return Ok(());
    }
    for c in configurations {
        let config = c.configuration();
        for &m in &limited {
            m.supports(config.board(), config.moves()).map_err(|e| {
                SpecError::field(
                    "methods",
                    format!("{e} (grid[{}], board {}, moves {})", c.grid, c.shape_label(), c.moves_label()),
                )
            })?;
        }
    }
    Ok(())
}

/// SHA-256 over a stream of words and length-prefixed byte strings: the
/// sweep id must not be forgeable (a different spec with a victim's id).
struct IdHasher(Sha256);

impl IdHasher {
    fn new(domain: &[u8]) -> IdHasher {
        let mut h = IdHasher(Sha256::new());
        h.bytes(domain);
        h
    }

    fn word(&mut self, w: u64) -> &mut Self {
        self.0.update(w.to_le_bytes());
        self
    }

    fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.word(b.len() as u64);
        self.0.update(b);
        self
    }

    /// The first 8 bytes of the digest as 16 hex digits: 64 bits, so
    /// forging a spec for a given id takes about 2^64 hashes.
    fn finish(self) -> String {
        self.0.finalize()[..8].iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// The sweep id: a hash of everything that decides its results.
fn content_id(spec: &SweepSpec, configurations: &[ConfigEntry]) -> String {
    let mut h = IdHasher::new(b"knight-sweep id v2");
    h.bytes(spec.name.as_bytes()).word(spec.seed).word(spec.starts).word(spec.methods.len() as u64);
    for m in &spec.methods {
        h.bytes(m.name().as_bytes());
    }
    // Budgets change results; written only when set, so specs without them
    // keep the ids they had before these options existed.
    if let Some(b) = spec.budget {
        h.bytes(b"budget").word(b);
    }
    if let Some(i) = spec.iterations {
        h.bytes(b"iterations").word(i.into());
    }
    if spec.closed {
        h.bytes(b"closed");
    }
    h.word(configurations.len() as u64);
    for c in configurations {
        c.moves.hash_into(&mut h);
        h.word(c.sides.len() as u64);
        for &n in &c.sides {
            h.word(n.into());
        }
        // Written only when given, so sampled sweeps keep their ids.
        if let Some(cells) = &c.explicit_starts {
            h.bytes(b"starts").word(cells.len() as u64);
            for &cell in cells.iter() {
                h.word(cell);
            }
        }
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = r#"
        name = "t"
        seed = 2025
        starts = 20
        methods = ["w", "aw+"]

        [[grid]]
        rule = [2, 1]
        dims = [3, 2]
        n = [6, 5]
        n_range = { from = 5, to = 9, step = 2 }
        shapes = [[6, 5], [5, 5]]

        [[grid]]
        rule = [2, 1]
        dims = [2]
        n = [5, 8]
    "#;

    fn labels(sweep: &Sweep) -> Vec<String> {
        sweep.configurations().iter().map(|c| format!("{}:{}:{}", c.grid, c.moves_label(), c.shape_label())).collect()
    }

    #[test]
    fn configurations_in_grid_dims_n_order_without_repeats() {
        let sweep = Sweep::parse(SPEC).unwrap();
        assert_eq!(
            labels(&sweep),
            [
                "0:2,1:5x5x5",
                "0:2,1:6x6x6",
                "0:2,1:7x7x7",
                "0:2,1:9x9x9",
                "0:2,1:5x5",
                "0:2,1:6x6",
                "0:2,1:7x7",
                "0:2,1:9x9",
                "0:2,1:6x5", // shapes[1] = 5x5 repeats the regular 5x5
                "1:2,1:8x8", // grid 1's 5x5 repeats grid 0's
            ]
        );
        for (i, c) in sweep.configurations().iter().enumerate() {
            assert_eq!(c.index as usize, i);
        }
        // A rule written differently is another configuration (other seeds).
        let other = format!("{SPEC}\n[[grid]]\nrule = [1, 2]\ndims = [2]\nn = [5]");
        let sweep = Sweep::parse(&other).unwrap();
        assert_eq!(labels(&sweep).last().unwrap(), "2:1,2:5x5");
    }

    #[test]
    fn entries_agree_with_the_engine() {
        let sweep = Sweep::parse(SPEC).unwrap();
        for c in sweep.configurations() {
            let config = c.configuration();
            assert_eq!(config.board().sides(), c.sides.as_slice());
            assert_eq!(c.moves_label(), config.moves().describe());
            assert_eq!(c.eligibility(), config.eligibility());
            assert_eq!(c.eligible_count(), config.eligible_count());
            assert_eq!(c.cells(), config.board().cells());
            assert_eq!(c.move_count() as usize, config.moves().len());
            assert_eq!(c.cost_per_task(), (c.cells() * config.moves().len() as u64) as f64);
            assert_eq!(c.n().is_some(), config.board().is_regular());
            assert_eq!(c.existence(), tour::exists::known(config.board(), config.moves()));
        }
        let list = MoveSpec::List(vec![vec![2, 1], vec![-1, 2]].into());
        assert_eq!(list.label(), "2,1 -1,2");
        assert_eq!(list.label(), list.moves(2).unwrap().describe());
    }

    #[test]
    fn total_tasks_is_min_of_eligible_and_s_times_methods() {
        let sweep = Sweep::parse(SPEC).unwrap();
        // 5x5x5: 63 eligible, 7x7x7 and 9x9x9 too: S = 20 everywhere but
        // 5x5 (13 eligible starts: odd board, even-sum cells only).
        let per_method: u64 =
            sweep.configurations().iter().map(|c| if c.shape_label() == "5x5" { 13 } else { 20 }).sum();
        assert_eq!(sweep.total_tasks(), per_method * 2);
        assert_eq!(sweep.configurations()[4].start_count(20), 13);
    }

    #[test]
    fn impossible_configurations_count_zero() {
        let text = r#"
            name = "even"
            seed = 1
            methods = ["w", "w+", "aw"]
            [[grid]]
            rule = [3, 1]
            dims = [2]
            n_range = { from = 1, to = 6 }
        "#;
        let sweep = Sweep::parse(text).unwrap();
        let eligibility: Vec<Eligibility> = sweep.configurations().iter().map(|c| c.eligibility()).collect();
        assert_eq!(eligibility[0], Eligibility::All, "1x1: one cell, a trivial tour");
        assert!(eligibility[1..].iter().all(|&e| e == Eligibility::Impossible));
        assert_eq!(sweep.configurations()[3].start_count(100), 0);
        assert_eq!(sweep.total_tasks(), 3, "only the 1x1 board runs");
    }

    #[test]
    fn id_ignores_layout_comments_key_order_and_limits() {
        let a = Sweep::parse(SPEC).unwrap();
        assert_eq!(a.id().len(), 16);
        assert!(a.id().chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        let reordered = r#"
            # the same sweep, written differently
            methods=["w","AW+"]
            starts=20
            seed=2025
            name="t"
            [limits]
            max_tasks = 5000
            [[grid]]
            shapes=[[6,5],[5,5]]
            n_range={step=2,to=9,from=5}
            n=[5,6,6]   # repeats are harmless
            dims=[3,2]
            rule=[2,1]
            [[grid]]
            n=[8,5]
            dims=[2]
            rule=[2,1]
        "#;
        let b = Sweep::parse(reordered).unwrap();
        assert_eq!(a.id(), b.id());
        assert_eq!(a.id(), Sweep::parse(SPEC).unwrap().id(), "deterministic");
    }

    #[test]
    fn id_changes_with_anything_that_changes_results() {
        let base = Sweep::parse(SPEC).unwrap().id();
        let variants = [
            ("seed = 2025", "seed = 2026"),
            ("starts = 20", "starts = 21"),
            (r#"["w", "aw+"]"#, r#"["w", "aw"]"#),
            (r#"["w", "aw+"]"#, r#"["aw+", "w"]"#),
            (r#"name = "t""#, r#"name = "u""#),
            ("dims = [3, 2]", "dims = [2, 3]"),
            ("n = [6, 5]", "n = [6, 5, 11]"),
            ("rule = [2, 1]", "rule = [1, 2]"),
            ("shapes = [[6, 5], [5, 5]]", "shapes = [[5, 6], [5, 5]]"),
            (
                "rule = [2, 1]\n        dims = [3, 2]",
                "moves = [[2, 1], [1, 2], [-2, -1], [-1, -2]]\n        dims = [2]",
            ),
        ];
        for (from, to) in variants {
            let text = SPEC.replacen(from, to, 1);
            assert_ne!(text, SPEC, "{from:?} not found");
            let id = Sweep::parse(&text).unwrap().id();
            assert_ne!(id, base, "{from:?} -> {to:?} kept the id");
        }
    }

    #[test]
    fn canonical_toml_round_trips() {
        let sweep = Sweep::parse(SPEC).unwrap();
        let canonical = sweep.canonical_toml();
        let again = Sweep::parse(&canonical).unwrap();
        assert_eq!(again.id(), sweep.id());
        assert_eq!(again.canonical_toml(), canonical, "canonical form is a fixed point");
        assert_eq!(again.spec(), &sweep.spec().canonical());
        assert!(canonical.contains("starts = 20"), "{canonical}");
        assert!(canonical.contains("max_configurations = 1000000"), "defaults written out");
        assert!(canonical.contains("n = [5, 6]"), "N sorted: {canonical}");
        let list = r#"
            name = "list"
            seed = 3
            methods = ["mw"]
            [[grid]]
            moves = [[1, 2], [-2, 1], [2, -1]]
            n = [4]
        "#;
        let sweep = Sweep::parse(list).unwrap();
        assert_eq!(Sweep::parse(&sweep.canonical_toml()).unwrap().id(), sweep.id());
    }

    #[test]
    fn engine_errors_are_prefixed_with_the_grid() {
        let base = format!("{SPEC}\n[limits]\nmax_cells = 1000");
        let cases = [
            ("rule = [2, 1]", "rule = [0, 0]", "grid[0].rule: every entry is 0; at least one must be non-zero"),
            ("rule = [2, 1]", "rule = [2, 1, 1, 1]", "grid[0].rule: has 4 entries but the board has only 3 dims"),
            (
                "n = [6, 5]",
                "n = [6, 5, 11]",
                "grid[0].n: board 11x11x11 has 1331 cells, over the limit limits.max_cells = 1000",
            ),
            ("[[6, 5], [5, 5]]", "[[6, 5], [5, 201]]", "grid[0].shapes[1]: board 5x201 has 1005 cells"),
            (
                "[[6, 5], [5, 5]]",
                "[[6, 0]]",
                "grid[0].shape: side 1 is 0; every side must be at least 1 (board 6x0 in shapes[0])",
            ),
            (
                "rule = [2, 1]\n        dims = [2]",
                "moves = [[2, 1], [0, 0]]\n        dims = [2]",
                "grid[1].moves: move 1 is all zeros",
            ),
            ("rule = [2, 1]\n        dims = [2]", "moves = [[2, 1], [2, 1]]", "grid[1].moves: move 1 repeats move 0"),
            (
                "rule = [2, 1]\n        dims = [2]",
                "moves = [[2, 1], [1, 2, 0]]",
                "grid[1].moves: move 1 has 3 components, expected 2",
            ),
        ];
        for (from, to, expected) in cases {
            let text = base.replacen(from, to, 1);
            assert_ne!(text, base, "{from:?} not found");
            let e = Sweep::parse(&text).unwrap_err().to_string();
            assert!(e.starts_with(expected), "{e:?}\n  does not start with {expected:?}");
        }
        let padded = "name = \"p\"\nseed = 1\nmethods = [\"w\"]\n[[grid]]\nrule = [2, 1]\ndims = [32]\nn = [2]";
        let e = Sweep::parse(padded).unwrap_err();
        assert_eq!(e.path(), "grid[0].shape");
        assert!(e.to_string().contains("padded layout"), "{e}");
    }

    const EXPLICIT: &str = r#"
        name = "explicit"
        seed = 1
        starts = 2
        methods = ["w", "aw"]
        [[grid]]
        rule = [2, 1]
        dims = [2]
        n = [5, 7]
        starts = [[4, 4], [0, 0], [1, 3]]
    "#;

    #[test]
    fn explicit_starts_replace_the_sampled_ones() {
        let sweep = Sweep::parse(EXPLICIT).unwrap();
        let planner = crate::Planner::new(&sweep);
        for c in sweep.configurations() {
            assert_eq!(c.start_count(2), 3, "S does not cap an explicit list");
            let side = u64::from(c.sides[0]);
            assert_eq!(*planner.starts(c.index), vec![4 * side + 4, 0, side + 3], "in the order given");
        }
        assert_eq!(sweep.total_tasks(), 2 * 3 * 2);
        // The id covers the starts and their order; the canonical TOML keeps them.
        let other = Sweep::parse(&EXPLICIT.replace("[1, 3]]", "[3, 1]]")).unwrap();
        let reordered =
            Sweep::parse(&EXPLICIT.replace("[[4, 4], [0, 0], [1, 3]]", "[[0, 0], [4, 4], [1, 3]]")).unwrap();
        let sampled = Sweep::parse(&EXPLICIT.replace("starts = [[4, 4], [0, 0], [1, 3]]", "")).unwrap();
        let ids = [sweep.id(), other.id(), reordered.id(), sampled.id()];
        for (i, a) in ids.iter().enumerate() {
            assert!(ids[..i].iter().all(|b| b != a), "{ids:?}");
        }
        let again = Sweep::parse(&sweep.canonical_toml()).unwrap();
        assert_eq!(again.id(), sweep.id());
        assert!(sweep.canonical_toml().contains("starts = [[4, 4], [0, 0], [1, 3]]"), "{}", sweep.canonical_toml());
    }

    #[test]
    fn bad_explicit_starts_name_the_start() {
        let cases = [
            ("[1, 3]]", "[1, 3], [5, 0]]", "grid[0].starts[3]: [5, 0] coordinate 0 is 5, off the board (side 5"),
            ("[1, 3]]", "[1, 3], [1, 1, 1]]", "grid[0].starts[3]: [1, 1, 1] has 3 coordinates, expected 2"),
            ("[1, 3]]", "[1, 3], [0, 1]]", "grid[0].starts[3]: [0, 1] is not an eligible start on board 5x5"),
            ("[1, 3]]", "[1, 3], [0, 0]]", "grid[0].starts[3]: [0, 0] repeats starts[1]"),
            ("[[4, 4], [0, 0], [1, 3]]", "[]", "grid[0].starts: is empty"),
            ("rule = [2, 1]", "rule = [3, 1]", "grid[0].starts: no tour exists on board 5x5 with moves 3,1"),
            ("n = [5, 7]", "n = [5, 7]\n        starts_file = \"s.txt\"", "grid[0]: has both starts and starts_file"),
        ];
        for (from, to, expected) in cases {
            let text = EXPLICIT.replacen(from, to, 1);
            assert_ne!(text, EXPLICIT, "{from:?} not found");
            let e = Sweep::parse(&text).unwrap_err().to_string();
            assert!(e.starts_with(expected), "{e:?}\n  does not start with {expected:?}");
        }
        let unread = EXPLICIT.replace("starts = [[4, 4], [0, 0], [1, 3]]", "starts_file = \"s.txt\"");
        let e = Sweep::parse(&unread).unwrap_err();
        assert_eq!(e.path(), "grid[0].starts_file");
    }

    #[test]
    fn start_files_are_read_into_the_spec() {
        let text = EXPLICIT.replace("starts = [[4, 4], [0, 0], [1, 3]]", "starts_file = \"s.txt\"");
        let mut spec = SweepSpec::from_toml(&text).unwrap();
        spec.read_start_files(|name| {
            assert_eq!(name, "s.txt");
            Ok("# the same three\n4,4\n\n0 0\n1,3\n".into())
        })
        .unwrap();
        assert_eq!(Sweep::new(spec).unwrap().id(), Sweep::parse(EXPLICIT).unwrap().id());

        let mut spec = SweepSpec::from_toml(&text).unwrap();
        let e = spec.read_start_files(|_| Ok("4,4\n0,x\n".into())).unwrap_err().to_string();
        assert_eq!(e, "grid[0].starts_file: \"s.txt\" line 2: coordinate 2 is not a non-negative integer");
        let mut spec = SweepSpec::from_toml(&text).unwrap();
        let e = spec.read_start_files(|_| Err("No such file".into())).unwrap_err().to_string();
        assert_eq!(e, "grid[0].starts_file: cannot read \"s.txt\": No such file");
    }

    #[test]
    fn caps_bound_what_a_spec_may_ask() {
        let greedy = format!("{SPEC}\n[limits]\nmax_configurations = 16777216\nmax_cells = 1000000000000");
        assert!(Sweep::parse(&greedy).is_ok());
        let caps = Limits { max_configurations: 5, max_cells: 1000, ..Limits::default() };
        let e = Sweep::parse_capped(&greedy, &caps).unwrap_err().to_string();
        assert_eq!(e, "limits.max_configurations: the sweep has 1.2e1 configurations, over the limit 5e0");
        let caps = Limits { max_cells: 100, ..Limits::default() };
        let e = Sweep::parse_capped(&greedy, &caps).unwrap_err().to_string();
        assert!(e.starts_with("grid[0].n: board 5x5x5 has 125 cells, over the limit limits.max_cells = 100"), "{e}");
        let sweep = Sweep::parse_capped(SPEC, &Limits::default()).unwrap();
        assert_eq!(sweep.id(), Sweep::parse(SPEC).unwrap().id(), "caps do not change the id");
        // A budget or iteration cap the spec raises for itself is held to
        // the caller's (issue 34: a bt budget of 2^64 - 1 pinned a worker).
        let spec = |budget: &str, iterations: u32| {
            let methods = format!("methods = [\"bt\", \"nn\"]\n{budget}\niterations = {iterations}");
            let raised = "[limits]\nmax_budget = 18446744073709551615\nmax_iterations = 1000000";
            format!("{}\n{raised}", SPEC.replace("methods = [\"w\", \"aw+\"]", &methods))
        };
        let endless = spec("budget = 18446744073709551615", 1_000_000);
        let raised = Sweep::parse(&endless).expect("a spec may raise its own limits");
        assert!(raised.spec().to_canonical_toml().contains("max_budget = 18446744073709551615"));
        let caps = Limits { max_budget: 1_000_000, ..Limits::default() };
        let e = Sweep::parse_capped(&endless, &caps).unwrap_err().to_string();
        assert!(e.starts_with("budget: 18446744073709551615 is over the limit 1000000 (limits.max_budget"), "{e}");
        let e = Sweep::parse_capped(&spec("", 10), &caps).unwrap_err().to_string();
        assert!(e.starts_with("budget: 100000000 (the default) is over the limit 1000000"), "{e}");
        let caps = Limits { max_iterations: 500, ..Limits::default() };
        let e = Sweep::parse_capped(&spec("budget = 5", 1_000_000), &caps).unwrap_err().to_string();
        assert!(e.starts_with("iterations: 1000000 is over the limit 500"), "{e}");
    }

    #[test]
    fn implausible_results_are_refused() {
        let sweep = Sweep::parse(SPEC).unwrap();
        // Configuration 4 is 5x5 (25 cells), K = 8; methods w and aw+.
        assert_eq!(sweep.configurations()[4].shape_label(), "5x5");
        let tour =
            TaskResult { success: true, outcome: Outcome::Tour, attempts: 3, visited: 25, micros: 9, path: None };
        let stuck = TaskResult { success: false, outcome: Outcome::GaveUp, visited: 20, attempts: 8, ..tour.clone() };
        assert_eq!(sweep.check_result(4, 0, Method::AwPlus, &tour), Ok(()));
        assert_eq!(sweep.check_result(4, 0, Method::AwPlus, &stuck), Ok(()));
        assert_eq!(sweep.check_result(4, 0, Method::W, &TaskResult { attempts: 1, ..tour.clone() }), Ok(()));
        // 5x5 with (2,1): only even cells may start. A walk's failure there
        // proves nothing; from an odd cell the colour rule proves no-tour.
        let no_tour = TaskResult { outcome: Outcome::NoTour, ..stuck.clone() };
        assert_eq!(sweep.check_result(4, 1, Method::AwPlus, &no_tour), Ok(()));
        let e = sweep.check_result(4, 0, Method::AwPlus, &no_tour).unwrap_err();
        assert!(e.starts_with("no-tour from aw+ on eligible start 0 is not a proof"), "{e}");
        let bad = [
            (4, Method::W, tour.clone(), "attempts 3 is outside 1..=1 for w"),
            (4, Method::AwPlus, TaskResult { attempts: 9, ..tour.clone() }, "attempts 9 is outside 1..=8"),
            (4, Method::AwPlus, TaskResult { attempts: 0, ..stuck.clone() }, "attempts 0 is outside 1..=8"),
            (4, Method::AwPlus, TaskResult { visited: 26, ..tour.clone() }, "visited 26 is more than"),
            (4, Method::AwPlus, TaskResult { visited: 24, ..tour.clone() }, "a tour must visit all 25 cells"),
            (
                4,
                Method::AwPlus,
                TaskResult { success: false, ..tour.clone() },
                "success false contradicts outcome tour",
            ),
            (4, Method::AwPlus, TaskResult { outcome: Outcome::Tour, ..stuck.clone() }, "success false contradicts"),
            (4, Method::AwPlus, TaskResult { visited: 0, ..stuck.clone() }, "a walk visits at least its start"),
            (4, Method::AwPlus, TaskResult { attempts: 7, ..stuck.clone() }, "a failed aw+ makes all 8 walks, not 7"),
            (4, Method::AwPlus, TaskResult { micros: u64::MAX, ..tour.clone() }, "micros 18446744073709551615 is over"),
            (4, Method::Mw, tour.clone(), "method mw is not in the sweep"),
            (99, Method::W, tour.clone(), "configuration 99 is not in the sweep"),
        ];
        for (config, method, r, expected) in bad {
            let e = sweep.check_result(config, 0, method, &r).unwrap_err();
            assert!(e.starts_with(expected), "{e:?} does not start with {expected:?}");
        }
    }

    #[test]
    fn the_engines_results_pass_the_check() {
        let text = r#"
            name = "all"
            seed = 5
            starts = 12
            methods = ["w", "w+", "aw", "aw+", "mw", "wr", "wr+", "bt", "nn", "solve"]
            budget = 2000
            iterations = 30
            [[grid]]
            rule = [2, 1]
            dims = [2, 3]
            n = [3, 4, 5, 6]
        "#;
        let sweep = Sweep::parse(text).unwrap();
        let planner = crate::Planner::new(&sweep);
        let mut checked = 0;
        for c in sweep.configurations() {
            let solver = tour::Solver::new(c.configuration()).unwrap();
            let mut ws = solver.workspace();
            for &start in planner.starts(c.index).iter() {
                for &m in sweep.methods() {
                    if solver.supports(m).is_err() {
                        continue;
                    }
                    let options = sweep.task_options(solver.config(), start, m);
                    let r = solver.run_task(&mut ws, start, m, &options);
                    assert_eq!(
                        sweep.check_result(c.index, start, m, &r),
                        Ok(()),
                        "{} {} from {start}: {r:?}",
                        c.shape_label(),
                        m.name()
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 300, "{checked}");
    }

    #[test]
    fn closed_is_asked_of_the_methods_that_can_find_closed_tours() {
        let spec = |methods: &str, closed: &str| {
            format!(
                "name = \"c\"\nseed = 1\nmethods = [{methods}]\n{closed}\n[[grid]]\nrule = [2, 1]\ndims = [2]\nn = [6]"
            )
        };
        let e = Sweep::parse(&spec(r#""solve", "aw+""#, "closed = true")).unwrap_err();
        assert_eq!(e.path(), "closed");
        assert!(e.to_string().contains("method aw+ only finds open tours"), "{e}");
        let open = Sweep::parse(&spec(r#""solve", "bt""#, "")).unwrap();
        let closed = Sweep::parse(&spec(r#""solve", "bt""#, "closed = true")).unwrap();
        assert!(closed.closed() && !open.closed());
        assert_ne!(open.id(), closed.id(), "closed tours are another experiment");
        assert_eq!(Sweep::parse(&spec(r#""solve", "bt""#, "closed = false")).unwrap().id(), open.id());
        assert!(closed.canonical_toml().contains("closed = true"));
        assert!(!open.canonical_toml().contains("closed"), "ids of specs without it are kept");
        let c = closed.configurations()[0].configuration();
        assert!(closed.task_options(&c, 0, Method::Solve).closed);
    }

    #[test]
    fn too_many_tasks_names_the_limit() {
        let text = format!("{SPEC}\n[limits]\nmax_tasks = 300");
        let e = Sweep::parse(&text).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "limits.max_tasks: the sweep has {:e} tasks, over the limit 3e2",
                Sweep::parse(SPEC).unwrap().total_tasks()
            )
        );
        // 1908 even boards of at least 4096^2 cells, S = 2^24: 3.2e10 tasks.
        let huge = r#"
            name = "huge"
            seed = 1
            starts = 16777216
            methods = ["w"]
            [[grid]]
            rule = [2, 1]
            dims = [2]
            n_range = { from = 4096, to = 7910, step = 2 }
        "#;
        let e = Sweep::parse(huge).unwrap_err().to_string();
        assert_eq!(e, "limits.max_tasks: the sweep has 3.2010928128e10 tasks, over the limit 1e10");
    }
}
