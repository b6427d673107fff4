//! A checked spec expanded into its configurations, each validated by the
//! engine: boards, move sets, explicit starts and the methods that must
//! run on them.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tour::{Board, Configuration, Eligibility, Method, Moves};

use super::{ConfigEntry, MoveSpec};
use crate::error::SpecError;
use crate::spec::{Limits, SweepSpec};

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
pub(super) fn expand(spec: &SweepSpec) -> Result<Vec<ConfigEntry>, SpecError> {
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
                existence: tour::exists::for_tables(config.board(), config.moves()),
                explicit_starts,
                moves: key.0.clone(),
                label: grid.label.as_deref().map(Arc::from),
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
pub(super) fn shape(sides: &[u32]) -> String {
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
pub(super) fn check_methods(spec: &SweepSpec, configurations: &[ConfigEntry]) -> Result<(), SpecError> {
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
