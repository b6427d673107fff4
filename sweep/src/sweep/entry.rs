//! One configuration of a sweep (a move set on a board shape) and its move
//! set as the spec gave it.

use std::sync::Arc;

use tour::exists::Existence;
use tour::{Board, Configuration, Eligibility, Moves};

use super::expand::shape;
use super::id::IdHasher;

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
    /// Position in [`Sweep::configurations`](super::Sweep::configurations).
    pub index: u32,
    /// The `[[grid]]` it came from (0-based).
    pub grid: u32,
    /// The move set as the spec gave it.
    pub moves: MoveSpec,
    /// The grid's `label`, naming the move set in place of its list.
    pub label: Option<Arc<str>>,
    /// The board's side lengths.
    pub sides: Vec<u32>,
    // Computed once at parse time, so planning never rebuilds move sets.
    pub(super) cells: u64,
    pub(super) move_count: u32,
    pub(super) eligibility: Eligibility,
    pub(super) eligible: u64,
    pub(super) existence: Existence,
    /// The grid's explicit starts as cell indices, in the order given;
    /// `None` when the starts are sampled.
    pub(super) explicit_starts: Option<Arc<[u64]>>,
}

/// What a moves label ([`ConfigEntry::moves_label`]) names, read back
/// from its text, so every output names a move set the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MovesKind {
    /// A leaper rule, `"3,2"`.
    Rule(Vec<u32>),
    /// An explicit move list without a grid label, `"3,2,0 -3,2,0 .."`.
    List(Vec<Vec<i64>>),
    /// A grid's `label`.
    Named,
}

impl MovesKind {
    /// Reads `label`: a rule, a move list, or else a grid's label.
    pub fn of(label: &str) -> MovesKind {
        let numbers = |m: &str| -> Option<Vec<i64>> { m.split(',').map(|c| c.trim().parse().ok()).collect() };
        if let Some(rule) = label.split(',').map(|c| c.parse::<u32>().ok()).collect::<Option<Vec<u32>>>() {
            return MovesKind::Rule(rule);
        }
        match label.split(' ').map(numbers).collect::<Option<Vec<_>>>() {
            Some(list) => MovesKind::List(list),
            None => MovesKind::Named,
        }
    }
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

    pub(super) fn hash_into(&self, h: &mut IdHasher) {
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

    /// The move set's name in tables, plots and `--rule`: the grid's
    /// `label` where it has one, else [`ConfigEntry::moves_list`].
    pub fn moves_label(&self) -> String {
        self.label.as_deref().map_or_else(|| self.moves.label(), str::to_string)
    }

    /// The move set itself: `"2,1"` or `"2,1 1,2 .."`.
    pub fn moves_list(&self) -> String {
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

    /// What [`tour::exists::for_tables`] proves about tours on this board:
    /// the theorems, and the move graph on small boards.
    pub fn existence(&self) -> Existence {
        self.existence
    }

    /// No start has an open tour: the colour rule says so (no start is
    /// planned, tables print `n/a`), or a proof does (a theorem, or the move
    /// graph: an isolated cell, pieces; tables mark the figures `*`).
    /// `check` and the status count both; a proven board's planned tasks
    /// still run (the planner reads [`ConfigEntry::eligibility`] only), so a
    /// stored sweep keeps every task it had.
    pub fn impossible(&self) -> bool {
        self.eligibility == Eligibility::Impossible || matches!(self.existence.open, tour::exists::Claim::Impossible(_))
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
