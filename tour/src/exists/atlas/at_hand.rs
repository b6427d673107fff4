//! The proofs of no tour that need no search: polynomial, so every
//! "no tour" tries them first, the atlas's and the second proof of a
//! theorem's in `exists` alike.

use super::alternation;
use super::census::Census;
use super::entry::Proof;
use crate::config::Configuration;
use crate::exists::{argued, Claim};
use crate::solve::cycle_cover_exists;

/// The proofs of no open (or closed) tour that need no search, in this
/// order: the argument ([`argued`]), the census of the move graph, the
/// alternation argument (closed), the lack of a cover by cycles.
pub(crate) fn proofs_at_hand(config: &Configuration, closed: bool) -> Vec<Proof> {
    let (board, moves) = (config.board(), config.moves());
    let argument = argued(board, moves);
    let mut proofs = Vec::new();
    if let Claim::Impossible(_) = if closed { argument.closed } else { argument.open } {
        proofs.push(Proof::Argument);
    }
    let offsets: Vec<&[i32]> = moves.iter().collect();
    let census = Census::take(board.sides(), offsets.iter().copied());
    if census.refutes(closed) {
        proofs.push(Proof::Census);
    }
    if closed && alternation::refutes_closed(board.sides(), offsets.iter().copied(), &census) {
        proofs.push(Proof::Alternation);
    }
    // One cell is its own closed tour, though no cycle covers it.
    if closed && board.cells() > 1 && cycle_cover_exists(board, moves) == Some(false) {
        proofs.push(Proof::Cover);
    }
    proofs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exists::atlas::{Atlas, Verdict};

    /// Every proof needing no search that a shipped "no tour" names holds
    /// again: the atlas's text cannot claim one the code does not give.
    #[test]
    fn every_proof_at_hand_the_atlas_names_holds() {
        let atlas = Atlas::embedded().unwrap();
        let mut checked = 0;
        for e in atlas.entries() {
            let Verdict::None(named) = &e.verdict else { continue };
            let at_hand: Vec<&Proof> =
                named.iter().filter(|p| !matches!(p, Proof::Search(_) | Proof::Sat(_))).collect();
            if at_hand.is_empty() {
                continue;
            }
            let config = Configuration::leaper(&e.rule, &e.sides).unwrap();
            let found = proofs_at_hand(&config, e.closed);
            for p in at_hand {
                assert!(found.contains(p), "{e}: {p:?} not among {found:?}");
                checked += 1;
            }
        }
        assert!(checked > 13_000, "{checked}");
    }
}
