//! The block construction for boards with both sides >= 5.
//!
//! The board is cut into a grid of blocks by cutting each side into parts of
//! 5 to 11 cells. Every block of even area gets a structured closed tour
//! (`pieces::structured`), and neighbouring blocks are merged along a spanning
//! tree of the block grid by Parberry's edge swap (Parberry 1997, Discrete
//! Applied Mathematics 73:251-260): block X holds the edge a-b, its neighbour
//! Y the edge c-d = (a-b) shifted by a knight's move, so a-c and b-d are
//! moves; dropping a-b and c-d and adding a-c and b-d turns two cycles into
//! one, whatever their orientation. The swaps use disjoint edges (one per
//! side of a block), so they never interfere and always apply.
//!
//! * Both sides even, or one odd (even area): one closed tour of the whole
//!   board, walked from the start (a closed tour can start anywhere).
//! * Both sides odd: the part containing the start's row is odd (5..=11) and
//!   every other part even, likewise for columns, so the start's block is the
//!   only block of odd area. It gets an open path from the start that ends a
//!   knight's move from the rest (`pieces::piece`), the rest one closed tour;
//!   the path steps into the rest at c and walks its cycle, dropping one of
//!   c's cycle edges. When the start's block spans the board's height (or
//!   width) and splits the rest in two, the path takes a detour through one
//!   half, in and out by one of its corner edges, and ends in the other.
//!
//! Why it cannot fail: every side >= 5 has a cut (`cut`, `cut_around`; for
//! sides >= 33 `cut_around` only depends on the start's cell, see the tests);
//! every block shape has its structured tour and every `PieceKey` the cuts
//! produce has its piece (finite sets, all solved by the tests, and the
//! searches are deterministic); each swap finds its edges, as the corner
//! edges are in every closed tour, L and U were searched for, and no edge
//! serves two swaps; and joins along a tree merge distinct cycles. `walk`
//! still refuses a structure that is not one path, so a bug would surface as
//! an error, never as a wrong tour.

use super::pieces::{piece, structured, Detour, PieceKey, DOWN, LEFT, RIGHT, UP};

const NONE: u32 = u32::MAX;

/// Cuts an even `k` (0 or >= 6) into parts of 6 and 8, or 10 alone.
pub(super) fn evens(k: u32) -> Option<Vec<u32>> {
    if k == 10 {
        return Some(vec![10]);
    }
    if k % 2 == 1 || (k > 0 && k < 6) {
        return None;
    }
    // k/2 = 3a + 4b with b = (k/2) mod 3 eights.
    let eights = (k / 2) % 3;
    if 8 * eights > k {
        return None;
    }
    let sixes = (k - 8 * eights) / 6;
    Some([vec![6; sixes as usize], vec![8; eights as usize]].concat())
}

/// Cuts a side `m` >= 5 into block sides, at most one of them odd.
pub(super) fn cut(m: u32) -> Option<Vec<u32>> {
    if m.is_multiple_of(2) {
        evens(m)
    } else if m <= 9 {
        Some(vec![m])
    } else {
        Some([vec![5], evens(m - 5)?].concat())
    }
}

/// Cuts an odd side `m` >= 5 so that cell `r` (at most (m-1)/2) lies in its
/// only odd part: returns the parts and the index of the odd one. The odd
/// part is as small as possible, then as far from 0 as possible.
pub(super) fn cut_around(m: u32, r: u32) -> Option<(Vec<u32>, usize)> {
    let fits = |k: u32| k == 0 || (k >= 6 && k.is_multiple_of(2));
    for o in [5, 7, 9, 11] {
        let mut a = r - r % 2;
        loop {
            if a + o > r && a + o <= m && fits(a) && fits(m - a - o) {
                let before = evens(a)?;
                let index = before.len();
                return Some(([before, vec![o], evens(m - a - o)?].concat(), index));
            }
            if a < 2 || a - 2 + o <= r {
                break;
            }
            a -= 2;
        }
    }
    None
}

/// How a board is built.
pub(super) struct Plan {
    rows: Vec<u32>,
    cols: Vec<u32>,
    /// Reflections from the plan's frame to the board.
    flip_rows: bool,
    flip_cols: bool,
    /// The start's block (band indices) and its piece, on odd x odd boards.
    piece: Option<(usize, usize, PieceKey)>,
    /// The start in the plan's frame.
    start: (u32, u32),
}

impl Plan {
    /// The plan for the m x n board (both >= 5) from (r, c); on odd x odd
    /// boards (r, c) must be on the majority colour.
    pub(super) fn new(m: u32, n: u32, r: u32, c: u32) -> Option<Plan> {
        if m.is_multiple_of(2) || n.is_multiple_of(2) {
            let (rows, cols) = (cut(m)?, cut(n)?);
            return Some(Plan { rows, cols, flip_rows: false, flip_cols: false, piece: None, start: (r, c) });
        }
        // Reflect so the start lies in the first half of each side.
        let (flip_rows, flip_cols) = (r > (m - 1) / 2, c > (n - 1) / 2);
        let r = if flip_rows { m - 1 - r } else { r };
        let c = if flip_cols { n - 1 - c } else { c };
        let (rows, bi) = cut_around(m, r)?;
        let (cols, bj) = cut_around(n, c)?;
        let (r0, c0) = (rows[..bi].iter().sum::<u32>(), cols[..bj].iter().sum::<u32>());
        let (up, down, left, right) = (bi > 0, bi + 1 < rows.len(), bj > 0, bj + 1 < cols.len());
        let side = |flag: bool, bit: u8| if flag { bit } else { 0 };
        let (exits, detour) = match (rows.len() > 1, cols.len() > 1) {
            (true, true) => (side(up, UP) | side(down, DOWN) | side(left, LEFT) | side(right, RIGHT), Detour::None),
            (false, true) if left && right => (RIGHT, Detour::Left),
            (true, false) if up && down => (DOWN, Detour::Up),
            _ => (side(up, UP) | side(down, DOWN) | side(left, LEFT) | side(right, RIGHT), Detour::None),
        };
        let key =
            PieceKey { h: rows[bi] as u8, w: cols[bj] as u8, start: ((r - r0) as u8, (c - c0) as u8), exits, detour };
        Some(Plan { rows, cols, flip_rows, flip_cols, piece: Some((bi, bj, key)), start: (r, c) })
    }

    /// The piece the plan needs, if any.
    #[cfg(test)]
    pub(super) fn piece_key(&self) -> Option<PieceKey> {
        self.piece.map(|(_, _, key)| key)
    }

    /// Builds the tour (cell indices of the board, from the start). Fails
    /// only if a base tour is missing, which the tests rule out.
    pub(super) fn build(&self) -> Result<Vec<u64>, String> {
        Net::build(self)
    }
}

/// The tour under construction: up to two neighbours per cell (board index).
struct Net {
    nb: Vec<[u32; 2]>,
    /// Board index of frame row i is row_base[i] + col_index[j].
    row_base: Vec<u32>,
    col_index: Vec<u32>,
    ok: bool,
}

impl Net {
    fn build(plan: &Plan) -> Result<Vec<u64>, String> {
        let (m, n) = (plan.rows.iter().sum::<u32>(), plan.cols.iter().sum::<u32>());
        let flip = |f: bool, k: u32, i: u32| if f { k - 1 - i } else { i };
        let mut net = Net {
            nb: vec![[NONE; 2]; m as usize * n as usize],
            row_base: (0..m).map(|i| flip(plan.flip_rows, m, i) * n).collect(),
            col_index: (0..n).map(|j| flip(plan.flip_cols, n, j)).collect(),
            ok: true,
        };
        let offsets =
            |parts: &[u32]| -> Vec<u32> { parts.iter().scan(0, |s, &p| Some(std::mem::replace(s, *s + p))).collect() };
        let (row_off, col_off) = (offsets(&plan.rows), offsets(&plan.cols));
        let hole = plan.piece.map(|(i, j, _)| (i, j));

        net.lay_blocks(plan, &row_off, &col_off, hole)?;
        net.join_blocks(plan, &row_off, &col_off, hole);
        if let Some((bi, bj, key)) = plan.piece {
            net.place_piece(key, row_off[bi] as i32, col_off[bj] as i32)?;
        }
        if !net.ok {
            return Err("an edge swap did not apply".into());
        }
        net.walk(net.cell(plan.start.0, plan.start.1))
    }

    /// Structured tours on every block but the start's (`hole`), which
    /// start at frame rows `row_off` and columns `col_off`.
    fn lay_blocks(
        &mut self,
        plan: &Plan,
        row_off: &[u32],
        col_off: &[u32],
        hole: Option<(usize, usize)>,
    ) -> Result<(), String> {
        let mut local = Vec::with_capacity(121);
        for (bi, &h) in plan.rows.iter().enumerate() {
            for (bj, &w) in plan.cols.iter().enumerate() {
                if hole == Some((bi, bj)) {
                    continue;
                }
                let cycle = structured(h, w).ok_or_else(|| format!("no structured tour of {h}x{w}"))?;
                local.clear();
                for i in row_off[bi]..row_off[bi] + h {
                    let base = self.row_base[i as usize];
                    local.extend(
                        self.col_index[col_off[bj] as usize..(col_off[bj] + w) as usize].iter().map(|&j| base + j),
                    );
                }
                for (&cell, &[p, q]) in local.iter().zip(cycle.iter()) {
                    self.nb[cell as usize] = [local[p as usize], local[q as usize]];
                }
            }
        }
        Ok(())
    }

    /// Joins the blocks' tours along a spanning tree of the blocks: along
    /// every band, down the first column, and around the start's block.
    fn join_blocks(&mut self, plan: &Plan, row_off: &[u32], col_off: &[u32], hole: Option<(usize, usize)>) {
        let (rn, cn) = (plan.rows.len(), plan.cols.len());
        let free = |i: usize, j: usize| hole != Some((i, j));
        for (i, &row) in row_off.iter().enumerate() {
            for (j, &col) in col_off.iter().enumerate().skip(1) {
                if free(i, j - 1) && free(i, j) {
                    self.join_across(row, col);
                }
            }
        }
        let down = |net: &mut Net, i: usize, j: usize| net.join_down(row_off[i + 1], col_off[j], plan.cols[j]);
        for i in 0..rn - 1 {
            if free(i, 0) && free(i + 1, 0) {
                down(self, i, 0);
            }
        }
        if let Some((bi, bj)) = hole.filter(|_| rn > 1 && cn > 1) {
            if bj == 0 {
                // The rest of the start's band hangs from both neighbours.
                if bi > 0 {
                    down(self, bi - 1, 1);
                }
                if bi + 1 < rn {
                    down(self, bi, 1);
                }
            } else if bj + 1 < cn {
                down(self, bi.saturating_sub(1), bj + 1);
            }
        }
    }

    /// The start's piece (`key`) in its block, whose first frame cell is
    /// (`r0`, `c0`): its cells, its detour and its exit.
    fn place_piece(&mut self, key: PieceKey, r0: i32, c0: i32) -> Result<(), String> {
        let found = piece(key).ok_or_else(|| format!("no piece for {key:?}"))?;
        let at = |net: &Net, (i, j): (i32, i32)| net.cell((r0 + i) as u32, (c0 + j) as u32);
        let cells: Vec<(i32, i32)> = found.cells.iter().map(|&(i, j)| (i as i32, j as i32)).collect();
        for (k, pair) in cells.windows(2).enumerate() {
            let (p, q) = (at(self, pair[0]), at(self, pair[1]));
            match key.detour_edge().filter(|_| found.detour_at == Some(k)) {
                Some([a, b]) => {
                    let (ga, gb) = (at(self, a), at(self, b));
                    self.remove(ga, gb);
                    if is_move(pair[0], a) && is_move(pair[1], b) {
                        self.add(p, ga);
                        self.add(q, gb);
                    } else {
                        self.add(p, gb);
                        self.add(q, ga);
                    }
                }
                None => self.add(p, q),
            }
        }
        if let Some(&(i, j)) = cells.last().filter(|_| key.exits != 0) {
            let target = key.exits_from(i, j).ok_or("piece ends off the exits")?;
            let (e, t) = (at(self, (i, j)), at(self, target));
            let next = self.nb[t as usize][0];
            self.remove(t, next);
            self.add(e, t);
        }
        Ok(())
    }

    /// Board index of frame cell (i, j).
    fn cell(&self, i: u32, j: u32) -> u32 {
        self.row_base[i as usize] + self.col_index[j as usize]
    }

    fn add(&mut self, a: u32, b: u32) {
        for (x, y) in [(a, b), (b, a)] {
            let slot = &mut self.nb[x as usize];
            if slot[0] == NONE {
                slot[0] = y;
            } else if slot[1] == NONE {
                slot[1] = y;
            } else {
                self.ok = false;
            }
        }
    }

    fn remove(&mut self, a: u32, b: u32) {
        for (x, y) in [(a, b), (b, a)] {
            let slot = &mut self.nb[x as usize];
            if slot[1] == y {
                slot[1] = NONE;
            } else if slot[0] == y {
                *slot = [slot[1], NONE];
            } else {
                self.ok = false;
            }
        }
    }

    /// Merges the block left of column `col` with the one right of it (the
    /// band starting at `row`): the left block's top right corner edge and
    /// the right block's edge L, shifted by (1, 2).
    fn join_across(&mut self, row: u32, col: u32) {
        let a = self.cell(row, col - 1);
        let b = self.cell(row + 2, col - 2);
        let c = self.cell(row + 1, col + 1);
        let d = self.cell(row + 3, col);
        self.swap(a, b, c, d);
    }

    /// Merges the block above row `row` with the one below (the band of
    /// columns col..col+w): the upper block's bottom right corner edge and the
    /// lower block's edge U, shifted by (2, -1).
    fn join_down(&mut self, row: u32, col: u32, w: u32) {
        let a = self.cell(row - 1, col + w - 1);
        let b = self.cell(row - 2, col + w - 3);
        let c = self.cell(row + 1, col + w - 2);
        let d = self.cell(row, col + w - 4);
        self.swap(a, b, c, d);
    }

    fn swap(&mut self, a: u32, b: u32, c: u32, d: u32) {
        self.remove(a, b);
        self.remove(c, d);
        self.add(a, c);
        self.add(b, d);
    }

    /// Follows the path (or cycle) from `start` through every cell. Stops
    /// when the structure ends or closes, so a broken one is an error, never
    /// a path that repeats cells.
    fn walk(&self, start: u32) -> Result<Vec<u64>, String> {
        let mut path = Vec::with_capacity(self.nb.len());
        let (mut prev, mut cur) = (NONE, start);
        while path.len() < self.nb.len() {
            path.push(cur as u64);
            let [p, q] = self.nb[cur as usize];
            (prev, cur) = (cur, if p != prev { p } else { q });
            if cur == NONE || cur == start {
                break;
            }
        }
        if path.len() == self.nb.len() {
            Ok(path)
        } else {
            Err(format!("the walk stopped after {} of {} cells", path.len(), self.nb.len()))
        }
    }
}

fn is_move(a: (i32, i32), b: (i32, i32)) -> bool {
    let (x, y) = ((a.0 - b.0).abs(), (a.1 - b.1).abs());
    (x, y) == (1, 2) || (x, y) == (2, 1)
}
