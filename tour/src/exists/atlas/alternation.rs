//! Schwenk's argument for 4 x n, made general: a proof of no closed tour
//! from a second set a tour would have to alternate with.
//!
//! A closed tour on a two-coloured board of n cells alternates colours. If
//! some set A of exactly n/2 cells has no move inside it, the tour (n cells
//! in a cycle, no two A cells in a row) must alternate A and the rest too,
//! so A is the cells at even places of the tour: a colour class. An A that
//! is not a colour class proves there is no closed tour. The sets tried are
//! unions of whole layers across one axis (the knight's outer rows of
//! 4 x n, or the (1,2,2) leaper's outer planes of 4 x m x n): no search,
//! only the moves' offsets and the census's colours.

use super::census::{cell_of, Census};

/// Longest side whose layer sets are tried: C(16, 8) = 12,870 of them.
const MAX_SIDE: u32 = 16;

/// Some union of layers across one axis is a set of half the cells with
/// no move inside it that is not a colour class: no closed tour.
pub(super) fn refutes_closed<'m>(
    sides: &[u32],
    moves: impl Iterator<Item = &'m [i32]> + Clone,
    census: &Census,
) -> bool {
    let Some([even, odd]) = census.classes else { return false };
    if even != odd || census.cells < 4 {
        return false;
    }
    (0..sides.len()).any(|axis| {
        let side = sides[axis];
        if side % 2 == 1 || side > MAX_SIDE {
            return false;
        }
        // The steps along `axis` of the moves that fit the other axes.
        let fits = |m: &&[i32]| m.iter().zip(sides).enumerate().all(|(j, (&d, &n))| j == axis || d.unsigned_abs() < n);
        let steps: Vec<i32> = moves.clone().filter(fits).map(|m| m[axis]).collect();
        if steps.contains(&0) {
            return false; // a move inside a layer: no union of layers is free of moves
        }
        layer_sets(side).any(|set| free_of_moves(set, side, &steps) && !is_colour_class(sides, axis, set, census))
    })
}

/// Every set of `side / 2` of the values `0..side`, as a bit mask.
fn layer_sets(side: u32) -> impl Iterator<Item = u32> {
    (0u32..1 << side).filter(move |s| s.count_ones() == side / 2)
}

/// No step leads from a layer of `set` to another of it.
fn free_of_moves(set: u32, side: u32, steps: &[i32]) -> bool {
    (0..side as i32).filter(|v| set >> v & 1 == 1).all(|v| {
        steps.iter().all(|&d| {
            let w = v + d;
            !(0..side as i32).contains(&w) || set >> w & 1 == 0
        })
    })
}

/// The layers `set` across `axis` are all of one colour (being half the
/// cells, then a colour class).
fn is_colour_class(sides: &[u32], axis: usize, set: u32, census: &Census) -> bool {
    let mut colours = (0..census.cells).filter(|&c| set >> cell_of(sides, c)[axis] & 1 == 1).map(|c| census.colour(c));
    let first = colours.next();
    colours.all(|c| Some(c) == first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Moves;

    fn refutes(rule: &[u32], sides: &[u32]) -> bool {
        let moves = Moves::from_rule(rule, sides.len()).unwrap();
        let offsets: Vec<&[i32]> = moves.iter().collect();
        let census = Census::take(sides, offsets.iter().copied());
        refutes_closed(sides, offsets.iter().copied(), &census)
    }

    #[test]
    fn schwenks_four_by_n_and_nothing_with_a_tour() {
        // The knight's 4 x n: outer rows against inner rows, whatever n.
        for n in [4, 6, 10, 40, 400] {
            assert!(refutes(&[2, 1], &[4, n]), "4x{n}");
        }
        // Boards with closed tours are never refuted (Schwenk; the atlas).
        for (rule, sides) in [([2, 1], [6, 6]), ([2, 1], [8, 8]), ([2, 1], [6, 8]), ([3, 2], [10, 10])] {
            assert!(!refutes(&rule, &sides), "{rule:?} {sides:?}");
        }
    }

    /// Sound against every closed tour the atlas holds.
    #[test]
    fn no_board_with_a_closed_tour_is_refuted() {
        let atlas = crate::exists::atlas::Atlas::embedded().unwrap();
        let mut checked = 0;
        for e in atlas.entries().iter().filter(|e| e.closed && matches!(e.verdict, super::super::Verdict::Tour { .. }))
        {
            assert!(!refutes(&e.rule, &e.sides), "{:?} {:?} has a closed tour", e.rule, e.sides);
            checked += 1;
        }
        assert!(checked >= 800, "{checked}");
    }
}
