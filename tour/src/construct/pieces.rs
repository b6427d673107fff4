//! The small tours the block construction is assembled from, found once by
//! exhaustive search and cached.
//!
//! * A *structured* closed tour of an h x w block (5 <= h, w <= 11, h * w
//!   even) is one that contains the two edges the joins need besides the
//!   corner edges every closed tour has: `L` = (1,1)-(3,0) and
//!   `U` = (1,w-2)-(0,w-4) (the idea of Parberry 1997, Discrete Applied
//!   Mathematics 73:251-260, with our own choice of edges).
//! * A *piece* is an open path through the odd block that holds the start:
//!   from the start, through every cell, ending next to the rest of the board
//!   (and, in a one-band board, taking a detour through one side on the way).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use super::search::{hamiltonian, Graph, Problem, KNIGHT};

/// Smallest and largest block side.
pub(super) const MIN_SIDE: u32 = 5;
pub(super) const MAX_SIDE: u32 = 11;

/// Sides of a block, as a bit mask.
pub(super) const UP: u8 = 1;
pub(super) const DOWN: u8 = 2;
pub(super) const LEFT: u8 = 4;
pub(super) const RIGHT: u8 = 8;

/// A closed tour of a block: the two cycle neighbours of each local cell.
pub(super) type Cycle = Arc<Vec<[u8; 2]>>;

const SLOTS: usize = (MAX_SIDE - MIN_SIDE + 1) as usize;

/// The structured closed tour of the h x w block, or None when the search
/// finds none (never, for the shapes the construction uses; see the tests).
pub(super) fn structured(h: u32, w: u32) -> Option<Cycle> {
    static CACHE: [[OnceLock<Option<Cycle>>; SLOTS]; SLOTS] = [const { [const { OnceLock::new() }; SLOTS] }; SLOTS];
    if !(MIN_SIDE..=MAX_SIDE).contains(&h) || !(MIN_SIDE..=MAX_SIDE).contains(&w) || h * w % 2 == 1 {
        return None;
    }
    let slot = &CACHE[(h - MIN_SIDE) as usize][(w - MIN_SIDE) as usize];
    slot.get_or_init(|| search_structured(h as usize, w as usize)).clone()
}

fn search_structured(h: usize, w: usize) -> Option<Cycle> {
    let g = Graph::knight(h, w);
    let (l0, l1) = (g.at(1, 1), g.at(3, 0));
    let u = (g.at(1, w - 2), g.at(0, w - 4));
    // A cycle through (1,1) that leaves by L and closes on another neighbour.
    let mut end_ok = vec![false; g.len()];
    for &v in g.neighbours(l0) {
        end_ok[v as usize] = v != l1;
    }
    let p = Problem { graph: &g, start: l0, end_ok, forced: vec![(l0, l1), u], cycle: true };
    let path = hamiltonian(&p)?;
    let mut cycle = vec![[0u8; 2]; g.len()];
    for (k, &v) in path.iter().enumerate() {
        let next = path[(k + 1) % path.len()];
        cycle[v as usize][1] = next as u8;
        cycle[next as usize][0] = v as u8;
    }
    Some(Arc::new(cycle))
}

/// Which side the detour of a one-band board goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Detour {
    None,
    /// Through the blocks left of the piece, entering and leaving by the top
    /// right corner edge of the block next to it.
    Left,
    /// Through the blocks above, by the bottom right corner edge of the block
    /// next to it.
    Up,
}

/// What the path through the start's block must do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct PieceKey {
    pub h: u8,
    pub w: u8,
    /// The start, local.
    pub start: (u8, u8),
    /// Sides the path may leave by at its end (nothing: the block is the
    /// whole board).
    pub exits: u8,
    pub detour: Detour,
}

/// An open path through a block.
#[derive(Debug)]
pub(super) struct Piece {
    /// Local cells (row, column), from the start.
    pub cells: Vec<(u8, u8)>,
    /// `Some(k)`: cells k and k + 1 are joined by the detour, not a move.
    pub detour_at: Option<usize>,
}

impl PieceKey {
    /// The two ends of the rest edge the detour goes through, local (they
    /// lie outside the block).
    pub fn detour_edge(&self) -> Option<[(i32, i32); 2]> {
        let w = self.w as i32;
        match self.detour {
            Detour::None => None,
            Detour::Left => Some([(0, -1), (2, -2)]),
            Detour::Up => Some([(-1, w - 1), (-2, w - 3)]),
        }
    }

    /// The first cell (local, outside the block) a knight's move from local
    /// (i, j) reaches on a side the path may leave by.
    pub fn exits_from(&self, i: i32, j: i32) -> Option<(i32, i32)> {
        KNIGHT.iter().map(|&(di, dj)| (i + di, j + dj)).find(|&(a, b)| self.is_exit(a, b))
    }

    fn is_exit(&self, a: i32, b: i32) -> bool {
        let (h, w) = (self.h as i32, self.w as i32);
        let mut need = 0;
        if a < 0 {
            need |= UP;
        }
        if a >= h {
            need |= DOWN;
        }
        if b < 0 {
            need |= LEFT;
        }
        if b >= w {
            need |= RIGHT;
        }
        need != 0 && need & self.exits == need
    }
}

/// The path for `key`, or None when the search finds none (never, for the
/// keys the construction uses; see the tests).
pub(super) fn piece(key: PieceKey) -> Option<Arc<Piece>> {
    static CACHE: OnceLock<Mutex<HashMap<PieceKey, Option<Arc<Piece>>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(found) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return found.clone();
    }
    // Searched outside the lock; a racing thread computes the same answer.
    let found = search_piece(key).map(Arc::new);
    cache.lock().unwrap_or_else(|e| e.into_inner()).insert(key, found.clone());
    found
}

fn search_piece(key: PieceKey) -> Option<Piece> {
    let (h, w) = (key.h as usize, key.w as usize);
    let (si, sj) = (key.start.0 as usize, key.start.1 as usize);
    if si >= h || sj >= w {
        return None;
    }
    let base = Graph::knight(h, w);
    let mut end_ok = vec![key.exits == 0; h * w];
    if key.exits != 0 {
        for i in 0..h {
            for j in 0..w {
                end_ok[i * w + j] = key.exits_from(i as i32, j as i32).is_some();
            }
        }
    }
    let start = base.at(si, sj);
    let local = |v: u16| ((v as usize / w) as u8, (v as usize % w) as u8);
    let Some([a, b]) = key.detour_edge() else {
        let p = Problem { graph: &base, start, end_ok, forced: vec![], cycle: false };
        let path = hamiltonian(&p)?;
        return Some(Piece { cells: path.into_iter().map(local).collect(), detour_at: None });
    };
    // The detour enters the rest at one end of its edge and comes back from
    // the other: a forced "virtual" edge x-y with x next to a, y next to b.
    let inside = |(i, j): (i32, i32)| -> Vec<u16> {
        KNIGHT
            .iter()
            .map(|&(di, dj)| (i + di, j + dj))
            .filter(|&(x, y)| (0..h as i32).contains(&x) && (0..w as i32).contains(&y))
            .map(|(x, y)| base.at(x as usize, y as usize))
            .collect()
    };
    for &x in &inside(a) {
        for &y in &inside(b) {
            if x == y {
                continue;
            }
            let mut g = Graph::knight(h, w);
            g.add_edge(x, y);
            let p = Problem { graph: &g, start, end_ok: end_ok.clone(), forced: vec![(x, y)], cycle: false };
            if let Some(path) = hamiltonian(&p) {
                let at = path.windows(2).position(|s| (s[0] == x && s[1] == y) || (s[0] == y && s[1] == x));
                return Some(Piece { cells: path.into_iter().map(local).collect(), detour_at: at });
            }
        }
    }
    None
}
