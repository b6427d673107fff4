//! Rule W+ on cells that carry their own key: each cell of a 2D board with
//! 8 moves holds a `u32` of (degree, distance from the centre), so a
//! candidate's W+ key is one load instead of a degree plus a per-move
//! distance term kept up to date every step ([`super::walk_plus_8`]). The
//! board costs 4 bytes a cell instead of 1, so only W+ walks use it, and only
//! where the distance fits the cell.
//!
//! Measured on aw+ (3,2) 400x400, 30 starts (2.6 walks a task), six runs
//! alternating with the byte kernel's binary: 69.9-88.1 ms against
//! 82.3-107.3 ms, 1.14-1.22x run by run.

use super::{cell, doomed, set_cell, tree_min};
use crate::board::Board;
use crate::layout::{self, Layout};
use crate::moves::Moves;

/// Moves a cell-keyed walk takes (2D leapers).
const K: usize = 8;
/// Bits of a cell below its degree: `FIELD - dist2`, where dist2 is the
/// squared doubled distance from the centre (larger is farther).
const DISTANCE_BITS: u32 = 24;
/// Bits of the padded cell in a key; the move index sits above them.
const CELL_BITS: u32 = 28;
/// A blocked (border or visited) cell: degree 255, distance bits clear.
/// Every neighbour of the walk loses one per visit, blocked cells included
/// (branch-free), so a blocked cell never falls below 255 - K.
const BLOCKED: u32 = 0xff << DISTANCE_BITS;
/// One degree.
const ONE: u32 = 1 << DISTANCE_BITS;

/// Whether walks on this board and move set can run on keyed cells: 2D, 8
/// moves closed under negation (a row-major layout whose neighbours are
/// their own predecessors), the largest squared doubled distance below
/// 2^24 (a square board up to 2,897 a side) and the padded board below
/// 2^28 cells.
pub(crate) fn fits(board: &Board, moves: &Moves) -> bool {
    let sides = board.sides();
    if sides.len() != 2 || moves.len() != K || !moves.closed_under_negation() {
        return false;
    }
    let far: u64 = sides.iter().map(|&n| (u64::from(n) - 1).pow(2)).sum();
    let tile_bits = layout::walk_tile_bits(2);
    let padded = layout::padded_len(sides.iter().map(|&n| u64::from(n)), moves.reach(), tile_bits);
    tile_bits == 0 && far < 1 << DISTANCE_BITS && padded < 1 << CELL_BITS
}

/// The starting cells of a board that [`fits`]: each board cell's starting
/// degree (from `degrees`, the layout's byte degrees) and distance term,
/// every border cell [`BLOCKED`]. One pass, no division per cell: it is
/// part of the first W+ task's time.
pub(crate) fn starting_cells(layout: &Layout, degrees: &[u8]) -> Vec<u32> {
    let sides = layout.sides();
    let (rows, cols) = (sides[0] as i64, sides[1] as i64);
    let far = (rows - 1).pow(2) + (cols - 1).pow(2);
    let mut out = vec![BLOCKED; degrees.len()];
    // Row-major: a board row is a run of padded cells.
    for x in 0..rows {
        let first = layout.padded((x * cols) as u64);
        let r = 2 * x - (rows - 1);
        let run = first..first + cols as usize;
        for ((o, &d), y) in out[run.clone()].iter_mut().zip(&degrees[run]).zip(0..) {
            let s = 2 * y - (cols - 1);
            *o = (d as u32) << DISTANCE_BITS | (far - r * r - s * s) as u32;
        }
    }
    out
}

/// One W+ walk from padded cell `start` on `cells` (from
/// [`starting_cells`]), `offsets` the 8 moves in the current order; returns
/// cells visited. The same walk as [`super::walk`]'s with rule W+, the doom
/// cut included (see [`doomed`]).
///
/// A candidate's key is (cell before its decrement, move index, cell): each
/// neighbour loses the same one, so the least key is the same, and the key
/// does not wait on the subtraction.
pub(crate) fn walk(
    cells: &mut [u32],
    offsets: &[isize],
    start: usize,
    mut path: Option<&mut Vec<usize>>,
    stop_when_doomed: bool,
) -> u64 {
    let mut offset = [0isize; K];
    offset.copy_from_slice(&offsets[..K]);
    let mut cur = start;
    set_cell(cells, cur, BLOCKED);
    let (mut visited, mut forced) = (1u64, 0u32);
    if let Some(p) = path.as_deref_mut() {
        p.push(cur);
    }
    loop {
        let mut keys = [0u64; K];
        for k in 0..K {
            let n = cur.wrapping_add_signed(offset[k]);
            let before = cell(cells, n);
            set_cell(cells, n, before.wrapping_sub(ONE));
            keys[k] = (before as u64) << 32 | (k << CELL_BITS | n) as u64;
        }
        let best = tree_min(keys);
        // The least candidate's degree before this step's decrement: an
        // open cell's is at most K, a blocked one's at least 255 - K.
        let least = best >> (32 + DISTANCE_BITS);
        if least > K as u64 {
            return visited;
        }
        let next = (best & ((1 << CELL_BITS) - 1)) as usize;
        // As in the byte kernel: a cell left behind can doom the walk only
        // if it has at most one unvisited neighbour (then so has `next`).
        if stop_when_doomed
            && least < 3
            && doomed(cells, |c| (c >> DISTANCE_BITS) as u8, (&offset, 0, K), cur, next, &mut forced)
        {
            return visited;
        }
        cur = next;
        set_cell(cells, cur, BLOCKED);
        visited += 1;
        if let Some(p) = path.as_deref_mut() {
            p.push(cur);
        }
    }
}
