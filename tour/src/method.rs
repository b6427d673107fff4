//! The tour methods: the Warnsdorff family of docs/methods.md, and the seeds' other
//! solvers (exact backtracking, a construction, a neural network).

use std::fmt;
use std::str::FromStr;

use crate::board::Board;
use crate::error::{Error, Result};
use crate::moves::Moves;
use crate::neural::Remedy;
use crate::walk::Tiebreak;

/// A tour method, named as docs/methods.md and the report name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Method {
    /// One walk by rule W.
    W,
    /// One walk by rule W+ (Roth's centre-distance tiebreak).
    WPlus,
    /// W walks with the move order rotated r = 0..K-1; first success stops.
    Aw,
    /// The same with rule W+.
    AwPlus,
    /// For each rotation r: a W walk, then a W+ walk; first success stops.
    Mw,
    /// One walk, ties broken uniformly at random (seeded).
    Wr,
    /// One walk, ties by distance, then uniformly at random (seeded).
    WrPlus,
    /// Exact depth-first search with Warnsdorff-ordered children and sound
    /// pruning, within a node budget (seed 002).
    Bt,
    /// A deterministic construction for 2D knight's tours from any start
    /// (seed 001).
    Construct,
    /// The Takefuji-Lee neural network for closed tours, with one of the
    /// Aoba-Takefuji remedies (seed 004).
    Nn(Remedy),
    /// A tour wherever one exists: proofs, rotation-extension, then
    /// exhaustive search within a budget ([`crate::solve`]).
    Solve,
}

/// Largest board the `nn` methods take: the network holds about 60 bytes
/// per move-graph edge.
pub const NN_MAX_CELLS: u64 = 1_000_000;

impl Method {
    /// Every method, in the order tables list them.
    pub const ALL: [Method; 14] = [
        Method::W,
        Method::WPlus,
        Method::Aw,
        Method::AwPlus,
        Method::Mw,
        Method::Wr,
        Method::WrPlus,
        Method::Bt,
        Method::Construct,
        Method::Nn(Remedy::None),
        Method::Nn(Remedy::Cut),
        Method::Nn(Remedy::Connect),
        Method::Nn(Remedy::Both),
        Method::Solve,
    ];

    /// The Warnsdorff-rule methods of docs/methods.md: walks, rotations, attempts.
    pub const WARNSDORFF: [Method; 7] =
        [Method::W, Method::WPlus, Method::Aw, Method::AwPlus, Method::Mw, Method::Wr, Method::WrPlus];

    /// Every method's name, comma-separated in [`Method::ALL`]'s order: for
    /// help texts and errors, which then cannot miss a method.
    pub fn names() -> String {
        Method::ALL.map(Method::name).join(", ")
    }

    /// The method's name as users and result files write it.
    pub fn name(self) -> &'static str {
        match self {
            Method::W => "w",
            Method::WPlus => "w+",
            Method::Aw => "aw",
            Method::AwPlus => "aw+",
            Method::Mw => "mw",
            Method::Wr => "wr",
            Method::WrPlus => "wr+",
            Method::Bt => "bt",
            Method::Construct => "construct",
            Method::Nn(Remedy::None) => "nn",
            Method::Nn(Remedy::Cut) => "nn-cut",
            Method::Nn(Remedy::Connect) => "nn-connect",
            Method::Nn(Remedy::Both) => "nn-both",
            Method::Solve => "solve",
        }
    }

    /// The method's name as the research report prints it: W, W+, AW, AW+,
    /// MW, WR, WR+; the seeds' other solvers keep their command-line names.
    pub fn report_name(self) -> &'static str {
        match self {
            Method::W => "W",
            Method::WPlus => "W+",
            Method::Aw => "AW",
            Method::AwPlus => "AW+",
            Method::Mw => "MW",
            Method::Wr => "WR",
            Method::WrPlus => "WR+",
            other => other.name(),
        }
    }

    /// Checks that the method can run on `moves` over `board`, without
    /// running it: `construct` covers 2D knight's boards only (see
    /// [`crate::construct::covers`]) and the `nn` methods boards of at most
    /// NN_MAX_CELLS cells. The others run anywhere.
    pub fn supports(self, board: &Board, moves: &Moves) -> Result<()> {
        let unsupported = |reason: String| Err(Error::Unsupported { method: self.name(), reason });
        match self {
            Method::Construct => crate::construct::covers(board, moves).or_else(|e| unsupported(e.0)),
            Method::Nn(_) if board.cells() > NN_MAX_CELLS => unsupported(format!(
                "the board has {} cells, over the limit of {NN_MAX_CELLS} for the network",
                board.cells()
            )),
            Method::Solve => match crate::layout::Layout::new(board, moves) {
                Ok(l) if (l.len() as u64) < crate::solve::SOLVE_MAX_PADDED => Ok(()),
                _ => unsupported(format!(
                    "the board {board} with its border is over {} cells, the limit of solve's 32-bit cell numbers",
                    crate::solve::SOLVE_MAX_PADDED
                )),
            },
            _ => Ok(()),
        }
    }

    /// True for the methods that can look for a closed tour (`--closed`):
    /// `solve` and `bt` on request, the `nn` methods always.
    pub fn finds_closed(self) -> bool {
        matches!(self, Method::Solve | Method::Bt | Method::Nn(_))
    }

    /// True when a task of this method looks for a closed tour, given
    /// whether one was asked for (`--closed`).
    pub fn seeks_closed(self, asked: bool) -> bool {
        matches!(self, Method::Nn(_)) || asked && self.finds_closed()
    }

    /// True for the methods whose failure can be a proof that no tour
    /// exists from the start (exhaustive search, solve's refutations, the
    /// construction's theorems). The others may say `no-tour` only where the
    /// colour rule or a theorem rules the tour out for every method.
    pub fn proves_absence(self) -> bool {
        matches!(self, Method::Bt | Method::Solve | Method::Construct)
    }

    /// True for the Warnsdorff-rule methods (walks with rotations).
    pub fn is_warnsdorff(self) -> bool {
        Method::WARNSDORFF.contains(&self)
    }

    /// True for the methods with a walk by rule W+ (deterministic ties).
    pub fn walks_w_plus(self) -> bool {
        self.walks(Tiebreak::Distance)
    }

    /// True for the Warnsdorff methods with a walk of this tiebreak.
    pub fn walks(self, tiebreak: Tiebreak) -> bool {
        self.is_warnsdorff() && (0..self.max_attempts(2)).any(|a| self.attempt(a).1 == tiebreak)
    }

    /// True for the methods that draw from the task's random stream.
    pub fn is_random(self) -> bool {
        matches!(self, Method::Wr | Method::WrPlus | Method::Nn(_))
    }

    /// The version of the method's definition in this engine: part of a
    /// task's identity (docs/identity.md), so results stored by a build
    /// whose definition differs are never reused for this one. Bumped
    /// whenever a change could alter any task's success, outcome, attempts
    /// or visited: its walk, tiebreak or move order, its random stream, its
    /// budget's meaning, or a proof the engine gives for every method
    /// (docs/methods.md lists what counts). Speed-ups that leave every
    /// result as it was do not bump it.
    pub fn engine_version(self) -> u32 {
        match self {
            Method::W
            | Method::WPlus
            | Method::Aw
            | Method::AwPlus
            | Method::Mw
            | Method::Wr
            | Method::WrPlus
            | Method::Bt
            | Method::Construct
            | Method::Nn(_)
            | Method::Solve => 1,
        }
    }

    /// Most walks a Warnsdorff method makes with K moves (1 for the others).
    pub fn max_attempts(self, k: usize) -> usize {
        match self {
            Method::Aw | Method::AwPlus => k,
            Method::Mw => 2 * k,
            _ => 1,
        }
    }

    /// The `attempt`-th walk (0-based) of a Warnsdorff method as (rotation,
    /// tiebreak); `attempt` must be below `max_attempts(k)`. The other
    /// methods make no walks; they answer rotation 0, rule W.
    pub fn attempt(self, attempt: usize) -> (usize, Tiebreak) {
        match self {
            Method::WPlus => (0, Tiebreak::Distance),
            Method::Wr => (0, Tiebreak::Random),
            Method::WrPlus => (0, Tiebreak::DistanceRandom),
            Method::Aw => (attempt, Tiebreak::First),
            Method::AwPlus => (attempt, Tiebreak::Distance),
            Method::Mw => (attempt / 2, if attempt.is_multiple_of(2) { Tiebreak::First } else { Tiebreak::Distance }),
            _ => (0, Tiebreak::First),
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Method {
    type Err = Error;

    /// Parses a method name, case-insensitively (`AW+` = `aw+`).
    fn from_str(s: &str) -> std::result::Result<Method, Error> {
        let lower = s.trim().to_ascii_lowercase();
        Method::ALL
            .into_iter()
            .find(|m| m.name() == lower)
            .ok_or_else(|| Error::UnknownMethod { name: s.to_string(), known: Method::names() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for m in Method::ALL {
            assert_eq!(m.name().parse::<Method>().unwrap(), m);
        }
        assert_eq!("AW+".parse::<Method>().unwrap(), Method::AwPlus);
        for m in Method::ALL {
            assert_eq!(m.report_name().parse::<Method>().unwrap(), m, "report names parse back");
        }
        assert_eq!("nn-both".parse::<Method>().unwrap(), Method::Nn(Remedy::Both));
        let e = "warnsdorff".parse::<Method>().unwrap_err();
        assert_eq!(e.field(), "method");
        assert!(e.to_string().contains("aw+"));
        assert!(e.to_string().contains("nn-both"), "every method listed: {e}");
        assert!(Method::WARNSDORFF.iter().all(|m| m.is_warnsdorff()));
        assert!(!Method::Bt.is_warnsdorff());
    }

    #[test]
    fn mw_alternates_w_and_w_plus_per_rotation() {
        let seq: Vec<_> = (0..4).map(|a| Method::Mw.attempt(a)).collect();
        assert_eq!(seq, [(0, Tiebreak::First), (0, Tiebreak::Distance), (1, Tiebreak::First), (1, Tiebreak::Distance)]);
        assert_eq!(Method::Mw.max_attempts(8), 16);
    }

    #[test]
    fn the_methods_with_rule_w_plus_walks() {
        let plus: Vec<_> = Method::WARNSDORFF.iter().filter(|m| m.walks_w_plus()).map(|m| m.name()).collect();
        assert_eq!(plus, ["w+", "aw+", "mw"]);
        assert!(!Method::Solve.walks_w_plus() && !Method::WrPlus.walks_w_plus());
    }
}
