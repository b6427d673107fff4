//! The board's symmetries: maps of cells that permute axes of equal sides
//! and reflect axes, under which the move set is unchanged. Each carries
//! tours to tours, so a search for a tour from anywhere need only look at
//! tours with an end that is the least of its orbit.

use std::collections::HashSet;

use super::graph::Graph;
use crate::moves::Moves;

/// Boards of more axes than this are searched without symmetries: their
/// D! 2^D candidate maps (3,840 at 5 axes) outgrow what they save.
const MAX_AXES: usize = 5;

/// Axis `i` of a cell goes to axis `to[i]`, reflected when `flip[i]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Symmetry {
    to: Vec<usize>,
    flip: Vec<bool>,
}

impl Symmetry {
    /// The image of `x` on a board of `sides`.
    pub(super) fn apply(&self, sides: &[usize], x: &[i64], out: &mut [i64]) {
        for (i, &xi) in x.iter().enumerate() {
            out[self.to[i]] = if self.flip[i] { sides[i] as i64 - 1 - xi } else { xi };
        }
    }

    /// Whether every cell keeps its colour (the parity of its coordinate
    /// sum): reflecting an axis of even side changes it.
    pub(super) fn keeps_colour(&self, sides: &[usize]) -> bool {
        self.flip.iter().zip(sides).filter(|&(&f, &n)| f && n % 2 == 0).count() % 2 == 0
    }
}

/// Every symmetry of a board of `sides` (the identity first) that maps
/// `moves` onto itself; the identity alone past MAX_AXES axes.
pub(super) fn symmetries(sides: &[usize], moves: &Moves) -> Vec<Symmetry> {
    let d = sides.len();
    let identity = Symmetry { to: (0..d).collect(), flip: vec![false; d] };
    if d > MAX_AXES || moves.dims() != d {
        return vec![identity];
    }
    let set: HashSet<&[i32]> = moves.iter().collect();
    let mut found = Vec::new();
    let mut image = vec![0i32; d];
    for to in permutations(d) {
        if (0..d).any(|i| sides[to[i]] != sides[i]) {
            continue;
        }
        for mask in 0..1u32 << d {
            let flip: Vec<bool> = (0..d).map(|i| mask >> i & 1 == 1).collect();
            let keeps_moves = moves.iter().all(|v| {
                for i in 0..d {
                    image[to[i]] = if flip[i] { -v[i] } else { v[i] };
                }
                set.contains(&image[..])
            });
            if keeps_moves {
                found.push(Symmetry { to: to.clone(), flip });
            }
        }
    }
    // The identity is among them; put it first.
    found.sort_by_key(|s| *s != identity);
    found
}

/// The symmetries of [`symmetries`] that keep every cell's colour. On a
/// bipartite board of even cells an open tour joins an even end to an odd
/// one, and one of these carries any tour to one whose even end is the
/// least of its orbit under them (under all symmetries that end could be
/// odd, and would never be searched).
pub(super) fn keeping_colours(sides: &[usize], moves: &Moves) -> Vec<Symmetry> {
    symmetries(sides, moves).into_iter().filter(|s| s.keeps_colour(sides)).collect()
}

/// All orderings of 0..d.
fn permutations(d: usize) -> Vec<Vec<usize>> {
    if d == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for shorter in permutations(d - 1) {
        for at in 0..=shorter.len() {
            let mut p = shorter.clone();
            p.insert(at, d - 1);
            out.push(p);
        }
    }
    out
}

/// Whether padded cell `c` is the least of its orbit under `syms`
/// (comparing coordinates lexicographically).
pub(super) fn least_of_orbit(g: &Graph, syms: &[Symmetry], c: usize) -> bool {
    let sides = g.layout.sides();
    let mut x = vec![0i64; sides.len()];
    g.layout.coords(c, &mut x);
    let mut y = vec![0i64; sides.len()];
    syms.iter().all(|s| {
        s.apply(sides, &x, &mut y);
        y >= x
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Layout;
    use crate::{Board, Moves};

    fn count(rule: &[u32], sides: &[u32]) -> (usize, usize) {
        let moves = Moves::from_rule(rule, sides.len()).unwrap();
        let sides: Vec<usize> = sides.iter().map(|&n| n as usize).collect();
        let syms = symmetries(&sides, &moves);
        assert_eq!(syms[0], Symmetry { to: (0..sides.len()).collect(), flip: vec![false; sides.len()] });
        (syms.len(), syms.iter().filter(|s| s.keeps_colour(&sides)).count())
    }

    /// The square's 8 (4 keep colours on an even side, all 8 on an odd
    /// one), the rectangle's 4, the cube's 48; an explicit move set
    /// without mirror images keeps fewer.
    #[test]
    fn counts_the_maps_that_keep_the_moves() {
        assert_eq!(count(&[2, 1], &[8, 8]), (8, 4));
        assert_eq!(count(&[4, 3], &[7, 7]), (8, 8));
        assert_eq!(count(&[2, 1], &[4, 6]), (4, 2));
        assert_eq!(count(&[2, 1], &[3, 3, 3]), (48, 48));
        assert_eq!(count(&[1, 2, 2], &[4, 4, 4]), (48, 24));
        // One knight's move and its reverse: only the half turn keeps them.
        let moves = Moves::explicit(&[vec![2, 1], vec![-2, -1]], 2).unwrap();
        assert_eq!(symmetries(&[5, 5], &moves).len(), 2);
        let six = Moves::from_rule(&[2, 1], 6).unwrap();
        assert_eq!(symmetries(&[2; 6], &six).len(), 1, "past MAX_AXES: the identity alone");
    }

    /// Every orbit has exactly one least cell, and the maps keep the moves:
    /// a move's image joins the images of its ends.
    #[test]
    fn orbits_have_one_least_cell_and_maps_keep_moves() {
        let board = Board::new(&[6, 6]).unwrap();
        let moves = Moves::from_rule(&[3, 2], 2).unwrap();
        let g = Graph::new(Layout::new(&board, &moves).unwrap(), true);
        let syms = symmetries(g.layout.sides(), &moves);
        let least: Vec<usize> = g.board_cells().filter(|&c| least_of_orbit(&g, &syms, c)).collect();
        // 36 cells: 12 on the diagonals in 3 orbits of 4, 24 off them in 3
        // orbits of 8.
        assert_eq!(least.len(), 6);
        let sides = g.layout.sides();
        let (mut x, mut y, mut a, mut b) = ([0i64; 2], [0i64; 2], [0i64; 2], [0i64; 2]);
        for c in g.board_cells() {
            g.layout.coords(c, &mut x);
            for &o in &g.succ {
                let u = c.wrapping_add_signed(o);
                if !g.on_board(u) {
                    continue;
                }
                g.layout.coords(u, &mut y);
                for s in &syms {
                    s.apply(sides, &x, &mut a);
                    s.apply(sides, &y, &mut b);
                    let delta = [(b[0] - a[0]) as i32, (b[1] - a[1]) as i32];
                    assert!(moves.iter().any(|m| m == delta), "{s:?} maps {x:?}->{y:?} to {a:?}->{b:?}");
                }
            }
        }
    }
}
