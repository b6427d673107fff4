//! The move graph walked breadth first from one cell, its second
//! proof for the atlas's "no tour": a graph in pieces has no tour, and a
//! graph two-coloured by the walk has a closed tour only with classes of
//! equal size, an open one only with sizes at most one apart. It reads
//! the moves as offsets and nothing else, so it shares no reasoning with
//! the colour and lattice arguments of [`crate::exists`] it checks.

use std::collections::VecDeque;

/// What the walk found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Census {
    /// Cells the walk from cell 0 reached.
    pub reached: u64,
    /// The board's cells.
    pub cells: u64,
    /// The sizes of the two classes when the walk two-coloured the graph
    /// (no move joins two cells of one class).
    pub classes: Option<[u64; 2]>,
    /// Each cell's class by the walk (None: out of reach).
    colour: Vec<Option<bool>>,
}

impl Census {
    /// Walks the graph of `moves` (offsets, one per move) on a board of
    /// `sides`, first axis most significant.
    pub(super) fn take<'m>(sides: &[u32], moves: impl Iterator<Item = &'m [i32]> + Clone) -> Census {
        let cells: u64 = sides.iter().map(|&n| u64::from(n)).product();
        let mut colour: Vec<Option<bool>> = vec![None; cells as usize];
        let mut queue = VecDeque::from([0u64]);
        colour[0] = Some(false);
        let (mut reached, mut two_coloured) = (1u64, true);
        while let Some(c) = queue.pop_front() {
            let at = cell_of(sides, c);
            let here = colour[c as usize] == Some(true);
            for m in moves.clone() {
                let Some(next) = step(sides, &at, m) else { continue };
                match colour[next as usize] {
                    None => {
                        colour[next as usize] = Some(!here);
                        reached += 1;
                        queue.push_back(next);
                    }
                    Some(other) => two_coloured &= other != here,
                }
            }
        }
        let odd = colour.iter().filter(|&&c| c == Some(true)).count() as u64;
        let classes = (two_coloured && reached == cells).then_some([cells - odd, odd]);
        Census { reached, cells, classes, colour }
    }

    /// Cell `c`'s class by the walk, None where the walk did not reach it.
    pub(super) fn colour(&self, c: u64) -> Option<bool> {
        self.colour[c as usize]
    }

    /// Whether this proves there is no tour of the kind.
    pub(super) fn refutes(&self, closed: bool) -> bool {
        if self.cells < 2 {
            return false;
        }
        if self.reached < self.cells {
            return true;
        }
        match self.classes {
            Some([a, b]) if closed => a != b,
            Some([a, b]) => a.abs_diff(b) > 1,
            None => false,
        }
    }
}

/// The coordinates of cell `c` on a board of `sides`, first axis most
/// significant.
pub(super) fn cell_of(sides: &[u32], c: u64) -> Vec<u32> {
    let mut at = vec![0u32; sides.len()];
    let mut rest = c;
    for (x, &n) in at.iter_mut().zip(sides).rev() {
        *x = (rest % u64::from(n)) as u32;
        rest /= u64::from(n);
    }
    at
}

/// The cell one move from `at`, if it is on the board.
fn step(sides: &[u32], at: &[u32], m: &[i32]) -> Option<u64> {
    let mut index = 0u64;
    for ((&x, &d), &n) in at.iter().zip(m).zip(sides) {
        let y = i64::from(x) + i64::from(d);
        if y < 0 || y >= i64::from(n) {
            return None;
        }
        index = index * u64::from(n) + y as u64;
    }
    Some(index)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Moves;

    fn census(rule: &[u32], sides: &[u32]) -> Census {
        let moves = Moves::from_rule(rule, sides.len()).unwrap();
        let offsets: Vec<&[i32]> = moves.iter().collect();
        Census::take(sides, offsets.iter().copied())
    }

    #[test]
    fn pieces_and_classes() {
        // 3x3 knight: the centre is out of reach.
        assert_eq!(census(&[2, 1], &[3, 3]).reached, 8);
        assert!(census(&[2, 1], &[3, 3]).refutes(false));
        // 8x8 knight: one piece, 32 and 32.
        let c = census(&[2, 1], &[8, 8]);
        assert_eq!((c.reached, c.classes), (64, Some([32, 32])));
        assert!(!c.refutes(true) && !c.refutes(false));
        // 5x5 knight: 13 and 12, so no closed tour, an open one allowed.
        let c = census(&[2, 1], &[5, 5]);
        assert!(c.refutes(true) && !c.refutes(false));
        // (1,1) keeps colours: in pieces.
        assert!(census(&[1, 1], &[4, 4]).refutes(false));
        // (2,2): a lattice, in pieces.
        assert!(census(&[2, 2], &[9, 9]).refutes(false));
        // The null move set on one cell says nothing.
        assert!(!Census::take(&[1, 1], std::iter::empty()).refutes(true));
        // No (1,2,2) move fits on 2x2x2.
        assert!(census(&[1, 2, 2], &[2, 2, 2]).refutes(false));
    }
}
