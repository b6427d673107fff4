//! One line of the atlas: a kind of tour on one board of one leaper, and
//! its verdict with the evidence, as `atlas/atlas.tsv` writes it:
//!
//! ```text
//! 2,1   5x6  open    tour     start=7 seed=7 budget=1000000
//! 4,1   8x8  closed  none     search:804 sat:3750
//! 4,3   24x24 open   unknown  budget=10s starts=64 ...
//! ```
//!
//! (tab-separated). A tour is re-derived from its start, seed and work
//! budget by `solve`, which is deterministic; `closed` in place of them
//! means the closed tour of the same board with its closing step dropped.

use std::fmt;

/// A method that proved there is no tour, with its effort where it has
/// one (search nodes, SAT conflicts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proof {
    /// The colour, lattice, odd-count or move-graph argument
    /// ([`crate::exists::argued`]).
    Argument,
    /// The knight's theorems ([`crate::exists::known`]).
    Theorem,
    /// The move graph walked breadth first: in pieces, or two classes of
    /// sizes no tour can alternate between.
    Census,
    /// Half the cells with no move among them that are not a colour class,
    /// which a closed tour would alternate with (Schwenk's 4 x n argument).
    Alternation,
    /// No cover of the board by cycles (a maximum degree-2 matching).
    Cover,
    /// The search route of `solve::refute`, nodes spent.
    Search(u64),
    /// The SAT route of `solve::refute`, conflicts spent.
    Sat(u64),
}

impl Proof {
    /// The proof a refutation route of `solve::refute` gave, by its name
    /// and effort ([`crate::exists::Decision::Refuted`]).
    pub fn of_route((name, effort): (&str, u64)) -> Proof {
        if name == crate::solve::refute::SAT_ROUTE {
            Proof::Sat(effort)
        } else {
            Proof::Search(effort)
        }
    }

    /// The name the atlas and `exists` print.
    pub fn name(self) -> &'static str {
        match self {
            Proof::Argument => "argument",
            Proof::Theorem => "theorem",
            Proof::Census => "census",
            Proof::Alternation => "alternation",
            Proof::Cover => "cover",
            Proof::Search(_) => "search",
            Proof::Sat(_) => "sat",
        }
    }

    fn parse(word: &str) -> Option<Proof> {
        let (name, effort) = match word.split_once(':') {
            Some((n, e)) => (n, Some(e.parse().ok()?)),
            None => (word, None),
        };
        Some(match (name, effort) {
            ("argument", None) => Proof::Argument,
            ("theorem", None) => Proof::Theorem,
            ("census", None) => Proof::Census,
            ("alternation", None) => Proof::Alternation,
            ("cover", None) => Proof::Cover,
            ("search", Some(e)) => Proof::Search(e),
            ("sat", Some(e)) => Proof::Sat(e),
            _ => return None,
        })
    }
}

impl fmt::Display for Proof {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Proof::Search(e) | Proof::Sat(e) => write!(f, "{}:{e}", self.name()),
            _ => f.write_str(self.name()),
        }
    }
}

/// What the atlas says of one kind of tour on one board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// `solve` finds one from `start` (a cell index) with `seed` under a
    /// work budget of `budget`.
    Tour {
        /// The start, a cell index.
        start: u64,
        /// The task seed.
        seed: u64,
        /// The work budget.
        budget: u64,
    },
    /// The board's closed tour, its closing step dropped (open tours only).
    FromClosed,
    /// No tour: two methods that share no reasoning proved it.
    None([Proof; 2]),
    /// Neither, with what was tried, in words.
    Unknown(String),
}

impl Verdict {
    /// `tour`, `none` or `unknown`.
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Tour { .. } | Verdict::FromClosed => "tour",
            Verdict::None(_) => "none",
            Verdict::Unknown(_) => "unknown",
        }
    }
}

/// One line of the atlas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The leaper, entries descending and without zeros: `2,1` is the
    /// knight in any dimension, `2,2,1` the authors' (1,2,2).
    pub rule: Vec<u32>,
    /// The board's sides, ascending.
    pub sides: Vec<u32>,
    /// Closed tours, else open ones.
    pub closed: bool,
    /// What is known.
    pub verdict: Verdict,
}

/// A line of the atlas that does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("atlas line {line}: {what}")]
pub struct ParseError {
    /// 1-based.
    pub line: usize,
    /// What is wrong with it.
    pub what: String,
}

/// Numbers joined by `sep`.
fn joined(v: &[u32], sep: &str) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(sep)
}

fn numbers(text: &str, sep: char) -> Option<Vec<u32>> {
    text.split(sep).map(|n| n.parse().ok()).collect()
}

impl fmt::Display for Entry {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let kind = if self.closed { "closed" } else { "open" };
        write!(f, "{}\t{}\t{kind}\t{}\t", joined(&self.rule, ","), joined(&self.sides, "x"), self.verdict.word())?;
        match &self.verdict {
            Verdict::Tour { start, seed, budget } => write!(f, "start={start} seed={seed} budget={budget}"),
            Verdict::FromClosed => f.write_str("closed"),
            Verdict::None([a, b]) => write!(f, "{a} {b}"),
            Verdict::Unknown(tried) => f.write_str(tried),
        }
    }
}

impl Entry {
    /// Reads one line written by `Display`; `line` numbers the error.
    pub fn parse(text: &str, line: usize) -> Result<Entry, ParseError> {
        let err = |what: &str| ParseError { line, what: format!("{what}: {text:?}") };
        let fields: Vec<&str> = text.split('\t').collect();
        let &[rule, board, kind, word, evidence] = &fields[..] else {
            return Err(err("expected 5 tab-separated fields"));
        };
        let rule = numbers(rule, ',').ok_or_else(|| err("the rule is not numbers"))?;
        let sides = numbers(board, 'x').ok_or_else(|| err("the board is not sides"))?;
        let closed = match kind {
            "open" => false,
            "closed" => true,
            _ => return Err(err("the kind is neither open nor closed")),
        };
        let verdict = match word {
            "tour" if evidence == "closed" => Verdict::FromClosed,
            "tour" => {
                let value = |key: &str| -> Option<u64> {
                    evidence.split(' ').find_map(|kv| kv.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
                };
                match (value("start"), value("seed"), value("budget")) {
                    (Some(start), Some(seed), Some(budget)) => Verdict::Tour { start, seed, budget },
                    _ => return Err(err("a tour needs start=, seed= and budget=")),
                }
            }
            "none" => {
                let proofs: Option<Vec<Proof>> = evidence.split(' ').map(Proof::parse).collect();
                match proofs.as_deref() {
                    Some(&[a, b]) if a.name() != b.name() => Verdict::None([a, b]),
                    _ => return Err(err("no tour needs two different proofs")),
                }
            }
            "unknown" => Verdict::Unknown(evidence.to_string()),
            _ => return Err(err("the verdict is none of tour, none, unknown")),
        };
        Ok(Entry { rule, sides, closed, verdict })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_read_back() {
        for verdict in [
            Verdict::Tour { start: 7, seed: 99, budget: 1_000 },
            Verdict::FromClosed,
            Verdict::None([Proof::Search(804), Proof::Sat(3_750)]),
            Verdict::None([Proof::Argument, Proof::Census]),
            Verdict::Unknown("budget=10s starts=64".to_string()),
        ] {
            let e = Entry { rule: vec![4, 1], sides: vec![8, 8], closed: true, verdict };
            assert_eq!(Entry::parse(&e.to_string(), 1).unwrap(), e);
        }
        assert!(Entry::parse("4,1\t8x8\tclosed\tnone\tsat:1 sat:2", 3).is_err(), "one method twice");
        assert!(Entry::parse("4,1\t8x8\tclosed\tnone\tsat:1", 3).is_err(), "one proof");
        assert!(Entry::parse("4,1\t8x8\tclosed\ttour\tstart=1", 3).is_err());
        assert!(Entry::parse("4,1\t8x8\tboth\tnone\tsat:1 census", 3).is_err());
    }
}
