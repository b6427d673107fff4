//! The atlas of leaper tours: what is decided about open and closed tours
//! of every 2D leaper (a,b), 0 <= b <= a <= 6, on every m x n board up to
//! 24 x 24, and of the knight, the (3,2) leaper and the authors' (1,2,2)
//! on boxes up to 8 x 8 x 8. `ksweep atlas` computes it ([`settle_board`]);
//! the repository ships it (`atlas/atlas.tsv`, with its README and
//! pictures), and `ksweep exists` answers from it ([`Atlas::embedded`]).
//!
//! Each entry is a tour `solve` re-derives from a recorded start, seed and
//! work budget, a "no tour" two methods agree on ([`Proof`]), or unknown
//! with what was tried.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::{Claim, Existence};
use crate::board::Board;
use crate::moves::Moves;

mod alternation;
mod at_hand;
mod census;
mod entry;
mod rederive;
mod settle;

pub(crate) use at_hand::proofs_at_hand;
pub use entry::{Entry, ParseError, Proof, Verdict};
pub use rederive::{RederiveError, Rederived};
pub use settle::{settle, settle_board, SettleError};

/// Longest side of the atlas's 2D boards.
pub const MAX_SIDE_2D: u32 = 24;
/// Longest side of its 3D boxes.
pub const MAX_SIDE_3D: u32 = 8;
/// Largest leaper entry of its 2D leapers.
pub const MAX_LEAP_2D: u32 = 6;
/// Its 3D leapers: the knight, (3,2) and the authors' (1,2,2).
pub const LEAPERS_3D: [&[u32]; 3] = [&[2, 1], &[3, 2], &[2, 2, 1]];

const ATLAS_TOUR: &str = "the atlas of leaper tours (atlas/atlas.tsv): a tour solve makes again and verifies";
const ATLAS_NONE: &str = "the atlas of leaper tours (atlas/atlas.tsv): two methods that share no reasoning proved it";

/// The shipped atlas.
const SHIPPED: &str = include_str!("../../../atlas/atlas.tsv");

/// Every (rule, sides) the atlas covers, in its order: the 2D leapers by
/// (a, b), then the 3D ones, boards by sides ascending. The null leaper
/// (0,0) is left out: it is no move set (`--rule 0,0` is refused); on any
/// board but 1 x 1 it has no tour, since no move leaves a cell.
pub fn coverage() -> Vec<(Vec<u32>, Vec<u32>)> {
    let mut out = Vec::new();
    for a in 1..=MAX_LEAP_2D {
        for b in 0..=a {
            let rule = if b == 0 { vec![a] } else { vec![a, b] };
            for m in 1..=MAX_SIDE_2D {
                for n in m..=MAX_SIDE_2D {
                    out.push((rule.clone(), vec![m, n]));
                }
            }
        }
    }
    for rule in LEAPERS_3D {
        for l in 1..=MAX_SIDE_3D {
            for m in l..=MAX_SIDE_3D {
                for n in m..=MAX_SIDE_3D {
                    out.push((rule.to_vec(), vec![l, m, n]));
                }
            }
        }
    }
    out
}

/// The atlas's key of a move set: its leaper's entries, descending and
/// without zeros, when the set is exactly that leaper's moves.
pub fn leaper_of(moves: &Moves) -> Option<Vec<u32>> {
    let first = moves.iter().next()?;
    let mut rule: Vec<u32> = first.iter().map(|c| c.unsigned_abs()).filter(|&c| c > 0).collect();
    rule.sort_unstable_by(|a, b| b.cmp(a));
    let leaper = Moves::from_rule(&rule, moves.dims()).ok()?;
    let same = leaper.len() == moves.len() && leaper.iter().all(|m| moves.iter().any(|k| k == m));
    same.then_some(rule)
}

/// An atlas read into memory.
#[derive(Debug, Clone, Default)]
pub struct Atlas {
    entries: Vec<Entry>,
    index: HashMap<(Vec<u32>, Vec<u32>, bool), usize>,
    /// The `#` lines at its top: what made it.
    pub header: Vec<String>,
}

impl Atlas {
    /// Reads the atlas's text: `#` lines, a line of column names, then one
    /// [`Entry`] a line.
    pub fn parse(text: &str) -> Result<Atlas, ParseError> {
        let mut atlas = Atlas::default();
        for (i, line) in text.lines().enumerate() {
            if let Some(comment) = line.strip_prefix('#') {
                atlas.header.push(comment.trim().to_string());
            } else if !line.is_empty() && !line.starts_with("rule\t") {
                let e = Entry::parse(line, i + 1)?;
                let key = (e.rule.clone(), e.sides.clone(), e.closed);
                if atlas.index.insert(key, atlas.entries.len()).is_some() {
                    return Err(ParseError { line: i + 1, what: "a second line for the same board and kind".into() });
                }
                atlas.entries.push(e);
            }
        }
        Ok(atlas)
    }

    /// The atlas the repository ships, read once.
    pub fn embedded() -> Result<&'static Atlas, &'static ParseError> {
        static ATLAS: OnceLock<Result<Atlas, ParseError>> = OnceLock::new();
        ATLAS.get_or_init(|| Atlas::parse(SHIPPED)).as_ref()
    }

    /// Every entry, in the file's order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The entry of `moves` on `board` (sides in any order), if the atlas
    /// has one.
    pub fn get(&self, board: &Board, moves: &Moves, closed: bool) -> Option<&Entry> {
        let rule = leaper_of(moves)?;
        let mut sides = board.sides().to_vec();
        sides.sort_unstable();
        self.index.get(&(rule, sides, closed)).map(|&i| &self.entries[i])
    }

    /// What the atlas says of open and closed tours of `moves` on
    /// `board`, as claims (Unknown where it has no entry or says unknown).
    pub fn claims(&self, board: &Board, moves: &Moves) -> Existence {
        let claim = |closed| match self.get(board, moves, closed).map(|e| &e.verdict) {
            Some(Verdict::Tour { .. } | Verdict::FromClosed) => Claim::Exists(ATLAS_TOUR),
            Some(Verdict::None(_)) => Claim::Impossible(ATLAS_NONE),
            _ => Claim::Unknown,
        };
        Existence { open: claim(false), closed: claim(true) }
    }

    /// The atlas's text: `header` as `#` lines, the column names, then
    /// the entries.
    pub fn text(header: &[String], entries: &[Entry]) -> String {
        let mut out: String = header.iter().map(|h| format!("# {h}\n")).collect();
        out.push_str("rule\tboard\tkind\tverdict\tevidence\n");
        for e in entries {
            out.push_str(&format!("{e}\n"));
        }
        out
    }
}
