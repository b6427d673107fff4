//! What is proven about tours on a configuration, before any search: the
//! colour and connectivity rules, and the theorems the research report's
//! Table 1 cites, each with its source. Anything not covered is `Unknown`
//! here; [`decide`] then searches, under a budget.

use crate::board::Board;
use crate::moves::{Colouring, Moves};
use crate::solve::graph::board_proof;

pub mod atlas;
mod decide;

pub use decide::{decide, decide_with, search, DecideError, Decision, SEARCH_MAX_CELLS};

/// A statement about one kind of tour on a configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// Such a tour exists (from some start; from every start for a closed
    /// tour, which can be entered anywhere).
    Exists(&'static str),
    /// No such tour exists, from any start.
    Impossible(&'static str),
    /// Nothing here proves it either way.
    Unknown,
}

impl Claim {
    /// `exists`, `impossible` or `unknown`.
    pub fn verdict(self) -> &'static str {
        match self {
            Claim::Exists(_) => "exists",
            Claim::Impossible(_) => "impossible",
            Claim::Unknown => "unknown",
        }
    }

    /// The reason or citation behind the verdict, empty when unknown.
    pub fn because(self) -> &'static str {
        match self {
            Claim::Exists(why) | Claim::Impossible(why) => why,
            Claim::Unknown => "",
        }
    }
}

/// What is proven about open and closed tours of a configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Existence {
    /// About open tours (paths through every cell).
    pub open: Claim,
    /// About closed tours (cycles through every cell).
    pub closed: Claim,
}

const ONE_CELL: &str = "a one-cell board is its own tour";
const COLOUR_NEVER: &str =
    "no move changes the colour (coordinate-sum parity) of a cell, so a walk never leaves its start's colour";
const LATTICE: &str = "every move component is a multiple of g > 1, so a walk keeps every coordinate mod g";
const ODD_CLOSED: &str =
    "every move changes colour and the cell count is odd, so a closed tour (alternating colours) cannot exist";
const SCHWENK: &str = "Schwenk 1991, Which rectangular chessboards have a knight's tour?, Math. Magazine 64:325-332";
const OPEN_2D: &str = "Conrad, Hindrichs, Morsy, Wegener 1994, Solution of the knight's Hamiltonian path problem on \
                       chessboards, Discrete Appl. Math. 50:125-134 (the m x n open-tour theorem the report cites via \
                       Chia and Ong 2005)";
const DEMAIO: &str = "DeMaio 2007, Which chessboards have a closed knight's tour within the cube?, Electron. J. \
                      Combin. 14 R32 (also Qing and Watkins 2006 for cubes and boxes)";
const ERDE: &str = "Erde, Golenia, Golenia 2012, The closed knight tour problem in higher dimensions, Electron. J. \
                    Combin. 19(4) P9";
const CLOSED_GIVES_OPEN: &str = "a closed tour exists, and dropping its closing step gives an open tour from any cell";

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// True when `moves` is the knight's (2,1) move set in `dims` dimensions,
/// whatever its order.
pub(crate) fn is_knight(moves: &Moves) -> bool {
    atlas::leaper_of(moves).as_deref() == Some(&[2, 1][..])
}

/// What is proven about tours of `moves` on `board`.
pub fn known(board: &Board, moves: &Moves) -> Existence {
    known_with(board, moves, true)
}

/// [`known`], citing the knight's theorems only with `theorems`.
fn known_with(board: &Board, moves: &Moves, theorems: bool) -> Existence {
    if board.cells() == 1 {
        return Existence { open: Claim::Exists(ONE_CELL), closed: Claim::Exists(ONE_CELL) };
    }
    if moves.colouring() == Colouring::NeverChanges {
        return Existence { open: Claim::Impossible(COLOUR_NEVER), closed: Claim::Impossible(COLOUR_NEVER) };
    }
    let g = moves.iter().flatten().fold(0u64, |g, &c| gcd(g, c.unsigned_abs() as u64));
    if g > 1 {
        return Existence { open: Claim::Impossible(LATTICE), closed: Claim::Impossible(LATTICE) };
    }
    let odd_closed = moves.colouring() == Colouring::AlwaysChanges && board.cells() % 2 == 1;
    let mut sides: Vec<u32> = board.sides().to_vec();
    sides.sort_unstable();
    let knight = theorems && is_knight(moves);
    let closed = if knight {
        knight_closed(&sides)
    } else if odd_closed {
        Claim::Impossible(ODD_CLOSED)
    } else {
        Claim::Unknown
    };
    let open = match closed {
        Claim::Exists(_) => Claim::Exists(CLOSED_GIVES_OPEN),
        _ if knight && sides.len() == 2 => knight_open_2d(sides[0], sides[1]),
        _ => Claim::Unknown,
    };
    let closed = match closed {
        Claim::Unknown if odd_closed => Claim::Impossible(ODD_CLOSED),
        c => c,
    };
    Existence { open, closed }
}

/// [`known`], and where no theorem speaks, what the move graph proves (a
/// cell no move reaches, no move that fits at all, more dead ends than a
/// path has ends: [`board_proof`]). `ksweep exists` answers from this;
/// sweeps plan from [`known`] alone, so stored results keep their meaning.
pub fn proven(board: &Board, moves: &Moves) -> Existence {
    with_graph(board, moves, known(board, moves))
}

/// [`proven`] without the knight's theorems: what the colour, lattice and
/// move-graph arguments alone prove, which the atlas holds the theorems
/// against.
pub fn argued(board: &Board, moves: &Moves) -> Existence {
    with_graph(board, moves, known_with(board, moves, false))
}

/// `e`, with what [`board_proof`] says where `e` says nothing.
fn with_graph(board: &Board, moves: &Moves, e: Existence) -> Existence {
    let Existence { open, closed } = e;
    let open = match open {
        Claim::Unknown => board_proof(board, moves, false).map_or(Claim::Unknown, Claim::Impossible),
        c => c,
    };
    let closed = match (closed, open) {
        (Claim::Unknown, Claim::Impossible(why)) => Claim::Impossible(why),
        (Claim::Unknown, _) => board_proof(board, moves, true).map_or(Claim::Unknown, Claim::Impossible),
        (c, _) => c,
    };
    Existence { open, closed }
}

/// Largest board [`for_tables`] checks the move graph of: enough for every
/// board where a side is short against the moves (a cell with no move, a
/// graph in pieces), at well under a millisecond each, so parsing a spec
/// of hundreds of boards stays fast without a cache.
pub const TABLE_PROOF_MAX_CELLS: u64 = 4096;

/// What a sweep's tables say is proven: [`proven`] on boards of at most
/// [`TABLE_PROOF_MAX_CELLS`] cells, [`known`] on larger ones, and where
/// these say nothing, the shipped atlas ([`atlas::Atlas::claims`]).
pub fn for_tables(board: &Board, moves: &Moves) -> Existence {
    let e = if board.cells() <= TABLE_PROOF_MAX_CELLS { proven(board, moves) } else { known(board, moves) };
    let Ok(atlas) = atlas::Atlas::embedded() else { return e };
    let from_atlas = atlas.claims(board, moves);
    let fill = |c: Claim, a: Claim| if c == Claim::Unknown { a } else { c };
    Existence { open: fill(e.open, from_atlas.open), closed: fill(e.closed, from_atlas.closed) }
}

/// Closed knight's tours, sides ascending.
fn knight_closed(sides: &[u32]) -> Claim {
    match sides {
        &[m, n] => {
            // Schwenk: m <= n has one unless both are odd, m is 1, 2 or 4, or
            // m = 3 and n is 4, 6 or 8.
            if (m % 2 == 1 && n % 2 == 1) || matches!(m, 1 | 2 | 4) || (m == 3 && matches!(n, 4 | 6 | 8)) {
                Claim::Impossible(SCHWENK)
            } else {
                Claim::Exists(SCHWENK)
            }
        }
        // The 3D and higher theorems are for boxes with every side >= 2
        // (a side of 1 is a lower-dimensional board).
        s if s.len() >= 3 && s[0] >= 2 => {
            let (largest, second) = (s[s.len() - 1], s[s.len() - 2]);
            let holds = s.iter().any(|n| n % 2 == 0) && largest >= 4 && second >= 3;
            let source = if s.len() == 3 { DEMAIO } else { ERDE };
            if holds {
                Claim::Exists(source)
            } else {
                Claim::Impossible(source)
            }
        }
        _ => Claim::Unknown,
    }
}

/// Open knight's tours on m x n, m <= n: exactly when m = n = 1, or m = 3
/// and n = 4 or n >= 7, or m >= 4 and n >= 5.
fn knight_open_2d(m: u32, n: u32) -> Claim {
    let holds = (m == 1 && n == 1) || (m == 3 && (n == 4 || n >= 7)) || (m >= 4 && n >= 5);
    if holds {
        Claim::Exists(OPEN_2D)
    } else {
        Claim::Impossible(OPEN_2D)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(rule: &[u32], sides: &[u32]) -> Existence {
        proven(&Board::new(sides).unwrap(), &Moves::from_rule(rule, sides.len()).unwrap())
    }

    #[test]
    fn classic_boards() {
        assert!(matches!(claim(&[2, 1], &[8, 8]).closed, Claim::Exists(_)));
        assert!(matches!(claim(&[2, 1], &[8, 8]).open, Claim::Exists(_)));
        assert!(matches!(claim(&[2, 1], &[5, 5]).closed, Claim::Impossible(_)));
        assert!(matches!(claim(&[2, 1], &[5, 5]).open, Claim::Exists(_)));
        assert!(matches!(claim(&[2, 1], &[4, 4]).open, Claim::Impossible(_)));
        assert!(matches!(claim(&[2, 1], &[3, 4]).open, Claim::Exists(_)));
        assert!(matches!(claim(&[2, 1], &[3, 4]).closed, Claim::Impossible(_)));
        assert!(matches!(claim(&[3, 1], &[8, 8]).open, Claim::Impossible(_)));
        assert!(matches!(claim(&[2, 2], &[8, 8]).open, Claim::Impossible(_)));
        assert!(matches!(claim(&[4, 2], &[9, 9]).open, Claim::Impossible(_)), "gcd 2");
        assert!(matches!(claim(&[3, 2], &[9, 9]).closed, Claim::Impossible(_)), "odd cell count");
        assert_eq!(claim(&[3, 2], &[9, 9]).open, Claim::Unknown);
        assert!(matches!(claim(&[2, 1], &[4, 4, 4]).closed, Claim::Exists(_)));
        assert!(matches!(claim(&[2, 1], &[3, 3, 3]).closed, Claim::Impossible(_)));
        assert!(matches!(claim(&[2, 1], &[4, 4, 4, 4]).closed, Claim::Exists(_)));
    }

    #[test]
    fn the_move_graph_settles_boards_no_theorem_covers() {
        // No (3,2) move fits on 2x2x2 or 3x3x3: every cell is isolated.
        for n in [2, 3] {
            let e = claim(&[3, 2], &[n, n, n]);
            assert!(matches!(e.open, Claim::Impossible(_)) && matches!(e.closed, Claim::Impossible(_)), "{n}: {e:?}");
        }
        // 5x5 (3,2): the centre has no move.
        assert!(matches!(claim(&[3, 2], &[5, 5]).open, Claim::Impossible(_)));
        // 3x3 knight: the centre again.
        assert!(matches!(claim(&[2, 1], &[3, 3]).open, Claim::Impossible(_)));
        // Boards where the graph says nothing stay unknown.
        assert_eq!(claim(&[3, 2], &[10, 10]).open, Claim::Unknown);
    }
}
