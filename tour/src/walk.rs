//! The walk kernel: one Warnsdorff walk on a padded degree buffer. This is
//! the inner loop every figure of a sweep is made of, so it is monomorphised
//! per tiebreak and move-set symmetry and touches each neighbour once.
//!
//! The kernels here and in this module's children index the padded buffer
//! without bounds checks (they and [`crate::layout`]'s buffer type are the
//! one place in the workspace that holds unsafe code). The types carry the
//! proof, memchr's pattern: a buffer ([`Padded`]) is at least its layout's
//! length and keeps its border blocked, a start ([`BoardCell`]) is one of
//! its layout's board cells, and the moves ([`MoveTable`]) are its
//! layout's; only the layout makes any of them. So the entry points
//! ([`walk`], [`run_pair`], the kernels' `walk` and `run`) are safe: they
//! check once per walk that their arguments come from one layout (a compare
//! or two) and that a paused walk goes on only on the cells it was begun
//! on, and the unsafe blocks inside cite those invariants. Every remaining
//! `unsafe fn` (a kernel's internals, and the buffer's two unchecked doors,
//! `Padded::cells_mut` and `Layout::buffer`) says what its caller proves
//! under `# Safety`.

// The workspace denies unsafe code; the walk kernels are the exception.
#![allow(unsafe_code)]

use std::any::TypeId;

use crate::layout::{phase_row, BoardCell, Degree, Layout, MoveTable, Padded};
use crate::seed::Rng;

/// How a walk breaks ties among candidates of least degree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tiebreak {
    /// W: first in the current move order.
    First,
    /// W+ (Roth): greatest squared distance from the centre, then first.
    Distance,
    /// WR (Squirrel and Cull): uniformly at random.
    Random,
    /// WR+: greatest distance, then uniformly at random.
    DistanceRandom,
}

/// Above this many moves rule W picks its move branch-free in the generic
/// kernel (16-bit degrees); byte degrees always take the keyed kernel.
pub(super) const BRANCH_FREE_MIN_MOVES: usize = 32;

/// What a walk needs to know besides the degree buffer, in the current
/// (possibly rotated) move order: all of one layout ([`WalkMoves::new`]).
pub(crate) struct WalkMoves<'a> {
    /// The layout the moves are of.
    layout: &'a Layout,
    /// Offset of each move in the padded layout, from a cell of each phase
    /// (one row of K per phase, see [`crate::layout::Layout::phase_mask`]).
    offsets: &'a [isize],
    /// `cell & phase_mask` is the row of offsets that holds from `cell`.
    phase_mask: usize,
    /// Move vectors, K x D, same order (W+ distance only).
    vectors: &'a [i32],
    /// Offsets from a cell to the cells that can move onto it (the negated
    /// moves), which lose a neighbour when it is visited, in rows like
    /// `offsets`; `None` for sets closed under negation, whose predecessors
    /// are their successors.
    predecessors: Option<&'a [isize]>,
    /// Board sides (W+ distance only).
    sides: &'a [usize],
}

impl<'a> WalkMoves<'a> {
    /// The moves of `table` (and `predecessors`, for a move set not closed
    /// under negation) on `layout`, which made them (else this panics).
    pub(crate) fn new(layout: &'a Layout, table: &'a MoveTable, predecessors: Option<&'a MoveTable>) -> WalkMoves<'a> {
        assert_eq!(table.layout(), layout.id(), "moves of this layout");
        assert!(predecessors.is_none_or(|p| p.layout() == layout.id()), "predecessors of this layout");
        WalkMoves {
            layout,
            offsets: table.rows(),
            phase_mask: table.phase_mask(),
            vectors: table.vectors(),
            predecessors: predecessors.map(MoveTable::rows),
            sides: layout.sides(),
        }
    }

    /// Moves per cell, K.
    fn count(&self) -> usize {
        self.offsets.len() / (self.phase_mask + 1)
    }
}

/// Runs one walk from board cell `start` on the fresh buffer `deg` (made
/// by the layout of `moves`, or reset from one that was) on the kernel
/// `kernel` (chosen for this configuration and the walk's tiebreak by
/// [`select::Kernels::degree_kernel`]); returns cells visited. `xy` gets
/// the start's coordinates (used by the distance tiebreaks).
///
/// With `stop_when_doomed` the walk may stop early, returning fewer cells
/// than it would have visited, once it can no longer become a tour (see
/// [`doomed`]): for walks whose length nobody reads, such as every attempt
/// of aw, aw+ and mw but the last.
///
/// Panics if `deg`, `moves` and `start` are not of one layout, `deg` is
/// not fresh, or the keyed kernel's keys cannot hold this board.
#[allow(clippy::too_many_arguments)]
pub(crate) fn walk<T: Degree>(
    deg: &mut Padded<T>,
    moves: &WalkMoves<'_>,
    start: BoardCell,
    kernel: DegreeKernel,
    rng: &mut Rng,
    xy: &mut [i64],
    path: Option<&mut Vec<usize>>,
    stop_when_doomed: bool,
) -> u64 {
    let layout = moves.layout;
    assert_eq!(deg.layout(), layout.id(), "a buffer of the moves' layout");
    deg.begin_walk(start);
    assert_eq!(xy.len(), moves.sides.len(), "a coordinate an axis");
    layout.coords(start.index(), xy);
    let start = start.index();
    // SAFETY: only the kernels below write to the buffer, and they leave it
    // as a walk may find it: border cells blocked, a walk's cells as its
    // steps leave them.
    let deg = unsafe { deg.cells_mut() };
    match kernel {
        DegreeKernel::Keyed(key) => {
            let deg = T::narrow(deg).expect("keyed walks are chosen for byte degrees");
            // A key that carries the cell must hold every cell of the
            // buffer, one with a distance term every distance of the board,
            // and a blocked cell must stay above every open one.
            assert!(key_holds_cells(key, deg.len() as u128), "key {key} on {} cells", deg.len());
            let bias = match key {
                KEY_PACKED => PACKED_BIAS,
                KEY_PLUS => BIAS,
                _ => i64::MAX,
            };
            assert!(layout.distance_bound() < bias as u128, "key {key}: distances past its bias");
            assert!(moves.count() <= KEYED_MAX_MOVES, "{} moves for the keyed kernel", moves.count());
            // SAFETY: `deg` is a buffer of the layout of `moves`, at least
            // its length (`Padded`), and `start` a board cell of it
            // (`BoardCell`), both checked above, as are the keys.
            unsafe { walk_keyed(deg, moves, start, key, xy, path, stop_when_doomed) }
        }
        // SAFETY: as above.
        DegreeKernel::Generic { tiebreak, symmetric, branch_free } => unsafe {
            walk_generic((deg, moves, start, rng, xy, path), (tiebreak, symmetric, branch_free))
        },
    }
}

/// The generic kernel for this tiebreak, symmetry and branch-free choice.
///
/// # Safety
/// What [`walk`] checks: `deg` is a buffer of the layout of `moves`, at
/// least its length, and `start` a board cell of it.
#[inline(never)]
unsafe fn walk_generic<T: Degree>(a: WalkArgs<'_, '_, '_, T>, kernel: (Tiebreak, bool, bool)) -> u64 {
    use Tiebreak::*;
    // SAFETY: the caller's.
    unsafe {
        match kernel {
            (First, true, false) => walk_with::<T, false, false, true, false>(a),
            (First, false, false) => walk_with::<T, false, false, false, false>(a),
            (First, true, true) => walk_with::<T, false, false, true, true>(a),
            (First, false, true) => walk_with::<T, false, false, false, true>(a),
            (Distance, true, _) => walk_with::<T, true, false, true, false>(a),
            (Distance, false, _) => walk_with::<T, true, false, false, false>(a),
            (Random, true, _) => walk_with::<T, false, true, true, false>(a),
            (Random, false, _) => walk_with::<T, false, true, false, false>(a),
            (DistanceRandom, true, _) => walk_with::<T, true, true, true, false>(a),
            (DistanceRandom, false, _) => walk_with::<T, true, true, false, false>(a),
        }
    }
}

/// The kernel a walk on the degree buffer runs on ([`walk`]), for one
/// tiebreak: chosen once per configuration by [`select::Kernels`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DegreeKernel {
    /// One integer key a candidate, the least wins ([`walk_keyed`]), in
    /// this key layout (`KEY_W`, `KEY_W_SMALL`, `KEY_PACKED`, `KEY_PLUS`):
    /// byte degrees, a move set closed under negation of at most 127
    /// moves, and a deterministic tiebreak.
    Keyed(u8),
    /// The generic kernel ([`walk_with`]): the tiebreak, whether the move
    /// set is closed under negation, and whether rule W picks its move
    /// branch-free (many moves).
    Generic { tiebreak: Tiebreak, symmetric: bool, branch_free: bool },
}

/// The arguments of one walk, passed as one value to the monomorphised kernels.
type WalkArgs<'d, 'm, 'a, T> =
    (&'d mut [T], &'m WalkMoves<'a>, usize, &'d mut Rng, &'d mut [i64], Option<&'d mut Vec<usize>>);

// The kernels index without bounds checks. Sound because of the padded
// layout's invariant, which its types carry: the walk starts on a board
// cell (`BoardCell`) and only ever steps to open cells, which are board
// cells (border cells stay blocked, `Padded`); every board cell is at least
// `reach` cells from the array's edge on every axis, and no offset of the
// layout (`MoveTable`), nor its negation, reaches further than `reach` on
// any axis; so a neighbour or predecessor index is always inside a buffer
// of the layout, which is at least the layout's length (`Padded`). Debug
// builds assert it.

/// The value at `n`, unchecked.
///
/// # Safety
/// `n < deg.len()`: in the kernels, `n` is a board cell of the layout
/// `deg` is a buffer of, or a neighbour or predecessor of one.
#[inline(always)]
unsafe fn cell<T: Copy>(deg: &[T], n: usize) -> T {
    debug_assert!(n < deg.len());
    // SAFETY: the caller's.
    unsafe { *deg.get_unchecked(n) }
}

/// Sets the value at `n`, unchecked.
///
/// # Safety
/// As for [`cell`].
#[inline(always)]
unsafe fn set_cell<T: Copy>(deg: &mut [T], n: usize, value: T) {
    debug_assert!(n < deg.len());
    // SAFETY: the caller's.
    unsafe { *deg.get_unchecked_mut(n) = value }
}

/// The generic kernel, for the tiebreak and move set the parameters say.
///
/// # Safety
/// As for [`walk_generic`].
#[inline(always)]
unsafe fn walk_with<T: Degree, const PLUS: bool, const RANDOM: bool, const SYMMETRIC: bool, const BRANCH_FREE: bool>(
    (deg, moves, start, rng, xy, mut path): WalkArgs<'_, '_, '_, T>,
) -> u64 {
    let (mask, k) = (moves.phase_mask, moves.count());
    let dims = xy.len();
    let mut cur = start;
    // SAFETY: `cur` is a board cell: the start, or the open cell a step chose.
    unsafe { set_cell(deg, cur, T::BLOCKED) };
    let mut visited = 1u64;
    if let Some(p) = path.as_deref_mut() {
        p.push(cur);
    }
    loop {
        if !SYMMETRIC {
            for &o in moves.predecessors.map_or(&[][..], |p| phase_row(p, mask, k, cur)) {
                let n = cur.wrapping_add_signed(o);
                // SAFETY: `n` is a neighbour (or predecessor) of the board cell `cur`, inside the buffer (`BoardCell`, `MoveTable`, `Padded`).
                let d = unsafe { cell(deg, n) };
                if d != T::BLOCKED {
                    // SAFETY: `n` is a neighbour (or predecessor) of the board cell `cur`, inside the buffer (`BoardCell`, `MoveTable`, `Padded`).
                    unsafe { set_cell(deg, n, d.decrement()) };
                }
            }
        }
        let offsets = phase_row(moves.offsets, mask, k, cur);
        let chosen = if BRANCH_FREE {
            // SAFETY: `cur` is a board cell, `offsets` its row.
            unsafe { choose_first_branch_free::<T, SYMMETRIC>(deg, offsets, cur) }
        } else {
            // SAFETY: as above.
            unsafe { choose::<T, PLUS, RANDOM, SYMMETRIC>(deg, moves, offsets, cur, rng, xy) }
        };
        let Some(chosen) = chosen else {
            return visited;
        };
        cur = cur.wrapping_add_signed(offsets[chosen]);
        // SAFETY: `cur` is a board cell: the start, or the open cell a step chose.
        unsafe { set_cell(deg, cur, T::BLOCKED) };
        visited += 1;
        if PLUS {
            let v = &moves.vectors[chosen * dims..(chosen + 1) * dims];
            for (x, &c) in xy.iter_mut().zip(v) {
                *x += c as i64;
            }
        }
        if let Some(p) = path.as_deref_mut() {
            p.push(cur);
        }
    }
}

/// Picks the next move from `cur` by the rule's tiebreak, or `None` when no
/// unvisited cell is one move away. With SYMMETRIC it first does the visit's
/// bookkeeping in the same pass: `cur` was just visited, so each unvisited
/// neighbour loses one unvisited neighbour.
///
/// # Safety
/// `cur` is a board cell of the layout `deg` is a buffer of, `offsets` its
/// row of move offsets.
#[inline(always)]
unsafe fn choose<T: Degree, const PLUS: bool, const RANDOM: bool, const SYMMETRIC: bool>(
    deg: &mut [T],
    moves: &WalkMoves<'_>,
    offsets: &[isize],
    cur: usize,
    rng: &mut Rng,
    xy: &[i64],
) -> Option<usize> {
    let mut best = T::BLOCKED;
    // usize::MAX for "none yet": an Option here measurably slows the loop.
    let mut chosen = usize::MAX;
    // Lazily computed distance of `chosen`, and how many candidates tie
    // with it so far (for a uniform reservoir choice).
    let mut chosen_distance: Option<u128> = None;
    let mut ties = 0u64;
    for (k, &o) in offsets.iter().enumerate() {
        let n = cur.wrapping_add_signed(o);
        // SAFETY: `n` is a neighbour (or predecessor) of the board cell `cur`, inside the buffer (`BoardCell`, `MoveTable`, `Padded`).
        let mut d = unsafe { cell(deg, n) };
        if d == T::BLOCKED {
            continue;
        }
        if SYMMETRIC {
            d = d.decrement();
            // SAFETY: `n` is a neighbour (or predecessor) of the board cell `cur`, inside the buffer (`BoardCell`, `MoveTable`, `Padded`).
            unsafe { set_cell(deg, n, d) };
        }
        if d < best {
            best = d;
            chosen = k;
            chosen_distance = None;
            ties = 1;
        } else if (PLUS || RANDOM) && d == best {
            if PLUS {
                let bd = *chosen_distance.get_or_insert_with(|| centre_distance(moves, xy, chosen));
                let cd = centre_distance(moves, xy, k);
                if cd > bd {
                    chosen = k;
                    chosen_distance = Some(cd);
                    ties = 1;
                    continue;
                }
                if cd < bd {
                    continue;
                }
            }
            if RANDOM {
                ties += 1;
                if rng.below(ties) == 0 {
                    chosen = k;
                }
            }
        }
    }
    (chosen != usize::MAX).then_some(chosen)
}

/// Rule W's choice without data-dependent branches: the least
/// (degree, move index) key. Blocked cells are written back unchanged so the
/// decrement needs no branch either.
///
/// # Safety
/// As for [`choose`].
#[inline(always)]
unsafe fn choose_first_branch_free<T: Degree, const SYMMETRIC: bool>(
    deg: &mut [T],
    offsets: &[isize],
    cur: usize,
) -> Option<usize> {
    let mut best_key = u32::MAX;
    for (k, &o) in offsets.iter().enumerate() {
        let n = cur.wrapping_add_signed(o);
        // SAFETY: `n` is a neighbour (or predecessor) of the board cell `cur`, inside the buffer (`BoardCell`, `MoveTable`, `Padded`).
        let mut d = unsafe { cell(deg, n) };
        if SYMMETRIC {
            if d != T::BLOCKED {
                d = d.decrement();
            }
            // SAFETY: `n` is a neighbour (or predecessor) of the board cell `cur`, inside the buffer (`BoardCell`, `MoveTable`, `Padded`).
            unsafe { set_cell(deg, n, d) };
        }
        best_key = best_key.min(d.to_u32() << 16 | k as u32);
    }
    (best_key < T::BLOCKED.to_u32() << 16).then_some((best_key & 0xffff) as usize)
}

/// Squared distance of candidate `k` from the centre, doubled on every axis
/// so the centre (n-1)/2 stays an integer: sum of (2x - (n-1))^2.
#[inline]
fn centre_distance(moves: &WalkMoves<'_>, xy: &[i64], k: usize) -> u128 {
    let dims = xy.len();
    let v = &moves.vectors[k * dims..(k + 1) * dims];
    let mut sum = 0u128;
    for a in 0..dims {
        let t = (2 * (xy[a] + v[a] as i64) - (moves.sides[a] as i64 - 1)).unsigned_abs() as u128;
        sum += t * t;
    }
    sum
}

// The key layouts of [`walk_keyed`], high bits first; each is ordered as
// its rule ranks candidates, the move index breaking the last ties. They
// are `u8`s so they can be const parameters of the kernel.

/// Rule W on boards of at most 2^32 padded cells: degree 8 bits, move
/// index 8, padded cell 32. Carrying the cell takes the move table's load
/// off the step's critical path: 2D (2,1) N=1000, 131 -> 158 M steps/s.
const KEY_W: u8 = 0;
/// Rule W elsewhere, and for move counts the kernel is not unrolled for:
/// degree 8, move index 8.
const KEY_W_SMALL: u8 = 3;
/// Bits of the padded cell in a W key.
const W_CELL_BITS: u32 = 32;
/// Rule W+ on boards of at most 2^28 padded cells and |rel| < 2^19:
/// degree 8, BIAS - rel 20, move index 8, padded cell 28.
const KEY_PACKED: u8 = 1;
/// Rule W+ elsewhere: degree 8, BIAS - rel 48, move index 8; the cell is
/// looked up from the move index.
const KEY_PLUS: u8 = 2;

/// Offset of the distance part of a wide W+ key, so that `BIAS - rel` is positive.
const BIAS: i64 = 1 << 47;
/// The same for a packed W+ key.
const PACKED_BIAS: i64 = 1 << 19;
/// Bits of the padded cell in a packed W+ key.
const PACKED_CELL_BITS: u32 = 28;

/// Whether keys of layout `key` hold every cell of a buffer of `cells`:
/// those of W and packed W+ carry the cell in their low bits.
fn key_holds_cells(key: u8, cells: u128) -> bool {
    match key {
        KEY_W => cells <= 1 << W_CELL_BITS,
        KEY_PACKED => cells <= 1 << PACKED_CELL_BITS,
        _ => true,
    }
}

/// The walk for byte degrees, a move set closed under negation and a
/// deterministic tiebreak: every candidate gets one integer key and the
/// least key wins, so no branch depends on the board. Rule W's key is
/// (degree, move index); W+'s is (degree, -distance, move index), with the
/// centre distance of candidate k compared through
/// rel(k) = sum_a v_a (c_a + v_a), where c = 2x - (n - 1): the squared
/// doubled distance is sum c^2 + 4 rel(k), so a larger rel is farther.
/// Specialised for the common move counts (8 in 2D, 24 in 3D) so the loop
/// over moves unrolls.
///
/// # Safety
/// What [`walk`] checks: `deg` is a buffer of the layout of `moves`, at
/// least its length, `start` a board cell of it, and `key` holds its cells
/// and distances with at most [`KEYED_MAX_MOVES`] moves.
unsafe fn walk_keyed(
    deg: &mut [u8],
    moves: &WalkMoves<'_>,
    start: usize,
    key: u8,
    xy: &mut [i64],
    path: Option<&mut Vec<usize>>,
    stop_when_doomed: bool,
) -> u64 {
    for (x, &n) in xy.iter_mut().zip(moves.sides) {
        *x = 2 * *x - (n as i64 - 1);
    }
    let shape = (moves.count(), xy.len(), key);
    let a = (deg, moves, start, xy, path, stop_when_doomed);
    // SAFETY: the caller's.
    unsafe {
        match shape {
            (8, 2, KEY_W) => walk_keyed_with::<8, 2, KEY_W>(a),
            (8, 2, KEY_PACKED) if moves.phase_mask == 0 => walk_plus_8(a),
            (w_3d_scaled::K, 3, KEY_W) => w_3d_scaled::walk(a.0, a.1, a.2, a.4, a.5),
            (24, 3, KEY_PACKED) => walk_keyed_with::<24, 3, KEY_PACKED>(a),
            // Past the unrolled shapes a step is bound by its K keys, not by
            // its latency, so the key with fewer instructions.
            (_, _, KEY_W | KEY_W_SMALL) => walk_keyed_with::<0, 0, KEY_W_SMALL>(a),
            (_, _, KEY_PACKED) => walk_keyed_with::<0, 0, KEY_PACKED>(a),
            _ => walk_keyed_with::<0, 0, KEY_PLUS>(a),
        }
    }
}

/// The arguments of [`walk_keyed_with`], passed as one value.
type KeyedArgs<'d, 'm, 'a> = (&'d mut [u8], &'m WalkMoves<'a>, usize, &'d mut [i64], Option<&'d mut Vec<usize>>, bool);

/// Independent running minima per step: the minimum over K keys is the
/// critical path of a step, and a tree of eight chains makes it ~K/8 + 3
/// compare-and-select deep instead of K.
const MINIMA_CHAINS: usize = 8;

/// [`walk_keyed`] for K moves in D dimensions (0: as many as given).
///
/// # Safety
/// As for [`walk_keyed`].
#[inline(always)]
unsafe fn walk_keyed_with<const K: usize, const D: usize, const KEY: u8>(
    (deg, moves, start, centred, mut path, stop_when_doomed): KeyedArgs<'_, '_, '_>,
) -> u64 {
    const BLOCKED: u8 = u8::MAX;
    const OPEN: u8 = KEYED_MAX_MOVES as u8 + 1;
    // A packed W+ key carries the neighbour's padded index, so the next
    // cell needs no lookup.
    const PACKED_CELLS: u64 = (1 << PACKED_CELL_BITS) - 1;
    let plus = KEY != KEY_W && KEY != KEY_W_SMALL;
    let k_count = if K == 0 { moves.count() } else { K };
    let dims = if D == 0 { centred.len() } else { D };
    let (table, mask) = (moves.offsets, moves.phase_mask);
    let vectors = &moves.vectors[..k_count * dims];
    // W+: each candidate's key less its degree and cell, (BIAS - rel, k) in
    // place, kept up to date by subtracting, per step, the chosen move's row
    // of dot2[j][k] = 2 v_j . v_k (the centre offset c grows by 2 v_j), so a
    // candidate's key costs no multiply.
    let (bias, rel_shift, k_shift) = match KEY {
        KEY_PACKED => (PACKED_BIAS, 36, PACKED_CELL_BITS),
        _ => (BIAS, 8, 0),
    };
    let (mut base_fixed, mut base_any, mut dot2) = ([0u64; K], Vec::new(), Vec::new());
    if plus {
        if K == 0 {
            base_any = vec![0; k_count];
        }
        let v = |k: usize| &vectors[k * dims..(k + 1) * dims];
        let base: &mut [u64] = if K > 0 { &mut base_fixed } else { &mut base_any };
        for (k, b) in base.iter_mut().enumerate() {
            let rel = rel(v(k), &centred[..dims]);
            *b = ((bias - rel) as u64) << rel_shift | (k as u64) << k_shift;
        }
        dot2 =
            (0..k_count * k_count).map(|jk| (dot2_of(v(jk / k_count), v(jk % k_count)) as u64) << rel_shift).collect();
    }
    let base: &mut [u64] = if K > 0 { &mut base_fixed } else { &mut base_any };
    let mut cur = start;
    // SAFETY: `cur` is a board cell: the start, or the open cell a step chose.
    unsafe { set_cell(deg, cur, BLOCKED) };
    let mut visited = 1u64;
    let mut forced = 0u32;
    if let Some(p) = path.as_deref_mut() {
        p.push(cur);
    }
    let fixed = &table[..k_count];
    loop {
        // Row-major layouts have one row (a branch the loop hoists).
        let offsets = if mask == 0 { fixed } else { phase_row(table, mask, k_count, cur) };
        let mut key_of = |k: usize| {
            let n = cur.wrapping_add_signed(offsets[k]);
            // `cur` was just visited: each unvisited neighbour loses one.
            // Blocked cells lose one too, which keeps this branch-free: a
            // cell is decremented at most once per neighbour, so a blocked
            // cell (255 when blocked) never falls below 255 - K >= OPEN.
            // SAFETY: `n` is a neighbour (or predecessor) of the board cell `cur`, inside the buffer (`BoardCell`, `MoveTable`, `Padded`).
            let d = (unsafe { cell(deg, n) } as u32).wrapping_sub(1);
            // SAFETY: `n` is a neighbour (or predecessor) of the board cell `cur`, inside the buffer (`BoardCell`, `MoveTable`, `Padded`).
            unsafe { set_cell(deg, n, d as u8) };
            if KEY == KEY_W {
                return ((d as u64) << (W_CELL_BITS + 8)) | (((k as u64) << W_CELL_BITS) + n as u64);
            }
            if KEY == KEY_W_SMALL {
                return (d << 8 | k as u32) as u64;
            }
            let d = d as u8;
            if KEY == KEY_PACKED {
                (d as u64) << 56 | (base[k] + n as u64)
            } else {
                (d as u64) << 56 | base[k]
            }
        };
        // Whole rounds of MINIMA_CHAINS keys (unrolled, the minima in registers),
        // then the rest.
        let mut chains = [u64::MAX; MINIMA_CHAINS];
        let rounds = k_count / MINIMA_CHAINS;
        for round in 0..rounds {
            for (j, chain) in chains.iter_mut().enumerate() {
                *chain = (*chain).min(key_of(round * MINIMA_CHAINS + j));
            }
        }
        for (chain, k) in chains.iter_mut().zip(rounds * MINIMA_CHAINS..k_count) {
            *chain = (*chain).min(key_of(k));
        }
        let best = tree_min(chains);
        let least = match KEY {
            KEY_W => (best >> (W_CELL_BITS + 8)) as u8,
            KEY_W_SMALL => (best >> 8) as u8,
            _ => (best >> 56) as u8,
        };
        if least >= OPEN {
            return visited;
        }
        let chosen = match KEY {
            KEY_W => (best >> W_CELL_BITS) & 0xff,
            KEY_PACKED => (best >> PACKED_CELL_BITS) & 0xff,
            _ => best & 0xff,
        } as usize;
        let next = match KEY {
            KEY_PACKED => (best & PACKED_CELLS) as usize,
            KEY_W => best as u32 as usize,
            _ => cur.wrapping_add_signed(offsets[chosen]),
        };
        // A cell left behind can doom the walk only if it has at most one
        // unvisited neighbour, and then so has the least-degree candidate.
        if stop_when_doomed
            && least < 2
            // SAFETY: `cur` is a board cell, `table` the layout's rows of offsets.
            && unsafe { doomed(deg, |d| d, (table, mask, k_count), cur, next, &mut forced) }
        {
            return visited;
        }
        if plus {
            for (b, &d) in base.iter_mut().zip(&dot2[chosen * k_count..(chosen + 1) * k_count]) {
                *b = b.wrapping_sub(d);
            }
        }
        cur = next;
        // SAFETY: `cur` is a board cell: the start, or the open cell a step chose.
        unsafe { set_cell(deg, cur, BLOCKED) };
        visited += 1;
        if let Some(p) = path.as_deref_mut() {
            p.push(cur);
        }
    }
}

/// Rule W+ with a packed key for 8 moves on a row-major layout (2D leapers
/// on boards too wide for [`distance_cells`], which the solver uses where the
/// distance fits a cell): [`walk_keyed_with`]'s
/// walk with every per-move quantity a local the compiler keeps in
/// registers: about 120 instructions a step on (3,2) N=400, against 213. The
/// neighbour's address comes from the offset, not the key part: the part
/// waits on the chosen move's row of `dot2`, the address only on the cell.
///
/// # Safety
/// As for [`walk_keyed`], with 8 moves in 2D on a row-major layout.
unsafe fn walk_plus_8((deg, moves, start, centred, mut path, stop_when_doomed): KeyedArgs<'_, '_, '_>) -> u64 {
    const K: usize = 8;
    const OPEN: u64 = KEYED_MAX_MOVES as u64 + 1;
    // Key bits, high first: degree 8, PACKED_BIAS - rel 20, move index 4,
    // padded cell 32: the cell is the low half, so the next step needs no
    // mask.
    const REL_SHIFT: u32 = 36;
    const MOVE_SHIFT: u32 = 32;
    let v = |k: usize| &moves.vectors[2 * k..2 * k + 2];
    let mut parts = [0u64; K];
    let mut dot2 = [[0u64; K]; K];
    let mut offsets = [0isize; K];
    offsets.copy_from_slice(&moves.offsets[..K]);
    for (k, part) in parts.iter_mut().enumerate() {
        *part = ((PACKED_BIAS - rel(v(k), centred)) as u64) << REL_SHIFT | (k as u64) << MOVE_SHIFT;
        for (j, row) in dot2.iter_mut().enumerate() {
            row[k] = (dot2_of(v(j), v(k)) as u64) << REL_SHIFT;
        }
    }
    let mut cur = start;
    // SAFETY: `cur` is a board cell: the start, or the open cell a step chose.
    unsafe { set_cell(deg, cur, u8::MAX) };
    let (mut visited, mut forced) = (1u64, 0u32);
    if let Some(p) = path.as_deref_mut() {
        p.push(cur);
    }
    loop {
        let mut keys = [0u64; K];
        for ((key, &part), &o) in keys.iter_mut().zip(&parts).zip(&offsets) {
            let n = cur.wrapping_add_signed(o);
            // As in walk_keyed_with: every neighbour loses one, branch-free
            // (and never from 0: `cur` was one of its unvisited neighbours,
            // or it is blocked), so the wide decrement needs no widening.
            // SAFETY: `n` is a neighbour (or predecessor) of the board cell `cur`, inside the buffer (`BoardCell`, `MoveTable`, `Padded`).
            let d = (unsafe { cell(deg, n) } as u64).wrapping_sub(1);
            // SAFETY: `n` is a neighbour (or predecessor) of the board cell `cur`, inside the buffer (`BoardCell`, `MoveTable`, `Padded`).
            unsafe { set_cell(deg, n, d as u8) };
            *key = d << 56 | (part + n as u64);
        }
        let best = tree_min(keys);
        let least = best >> 56;
        if least >= OPEN {
            return visited;
        }
        let next = best as u32 as usize;
        let chosen = ((best >> MOVE_SHIFT) as usize) & (K - 1);
        // SAFETY: `cur` is a board cell, the offsets the layout's.
        if stop_when_doomed && least < 2 && unsafe { doomed(deg, |d| d, (moves.offsets, 0, K), cur, next, &mut forced) }
        {
            return visited;
        }
        for (part, &d) in parts.iter_mut().zip(&dot2[chosen]) {
            *part = part.wrapping_sub(d);
        }
        cur = next;
        // SAFETY: `cur` is a board cell: the start, or the open cell a step chose.
        unsafe { set_cell(deg, cur, u8::MAX) };
        visited += 1;
        if let Some(p) = path.as_deref_mut() {
            p.push(cur);
        }
    }
}

/// Most moves the keyed kernel takes: open cells' degrees stay at most K and
/// blocked cells' values at least 255 - K, apart while K < 128.
const KEYED_MAX_MOVES: usize = 127;

/// W+'s rel for move `v` from a cell whose doubled centre offset is
/// `centred` (see [`walk_keyed`]): sum_a v_a (c_a + v_a).
fn rel(v: &[i32], centred: &[i64]) -> i64 {
    v.iter().zip(centred).map(|(&v, &c)| v as i64 * (c + v as i64)).sum()
}

/// 2 a . b: what moving by `a` adds to rel of move `b` (c grows by 2a).
fn dot2_of(a: &[i32], b: &[i32]) -> i64 {
    2 * a.iter().zip(b).map(|(&a, &b)| a as i64 * b as i64).sum::<i64>()
}

/// The least of the chains' minima, as a tree of pairwise minima (3 deep, not 7).
#[inline(always)]
fn tree_min(l: [u64; MINIMA_CHAINS]) -> u64 {
    let quarter = [l[0].min(l[1]), l[2].min(l[3]), l[4].min(l[5]), l[6].min(l[7])];
    quarter[0].min(quarter[1]).min(quarter[2].min(quarter[3]))
}

/// Whether the walk, about to move from `cur` to `next`, can no longer
/// become a tour. Called with `cur`'s neighbours' degrees up to date;
/// `degree` reads a cell's degree from its stored value.
///
/// An unvisited cell n can only be entered from the cell the walk stands on
/// or from an unvisited neighbour. So once the walk is not next to n: with
/// no unvisited neighbour n is never reached (doomed); with exactly one, u,
/// n is entered from u and has nowhere to go after, so n must be the tour's
/// last cell; two such cells cannot both be last (doomed). A cell's degree
/// only drops while it is next to the walk, so every such cell is seen
/// here, when the walk moves away from it; `forced` counts the last-cell
/// candidates seen so far. A counted cell is examined again only when the
/// walk stands on its u, and then the walk ends at the next step anyway.
///
/// # Safety
/// `cur` is a board cell of the layout `deg` is a buffer of, and `table`
/// holds that layout's offsets (one row of `k` per phase of `mask`).
#[cold]
#[inline(never)]
unsafe fn doomed<C: Copy>(
    deg: &[C],
    degree: impl Fn(C) -> u8,
    (table, mask, k): (&[isize], usize, usize),
    cur: usize,
    next: usize,
    forced: &mut u32,
) -> bool {
    for &o in phase_row(table, mask, k, cur) {
        let n = cur.wrapping_add_signed(o);
        // SAFETY: `n` is a neighbour (or predecessor) of the board cell `cur`, inside the buffer (`BoardCell`, `MoveTable`, `Padded`).
        let d = degree(unsafe { cell(deg, n) });
        if n == next || d >= 2 {
            continue;
        }
        if phase_row(table, mask, k, next).iter().any(|&p| next.wrapping_add_signed(p) == n) {
            continue;
        }
        if d == 0 {
            return true;
        }
        *forced += 1;
        if *forced >= 2 {
            return true;
        }
    }
    false
}

/// A walk between two steps, so that it can go on in another call or
/// another kernel's loop (see [`run_pair`]): it stands on `cur`, which is
/// blocked, and `cur`'s neighbours have not lost it yet. Made only by a
/// kernel's `begin`, on the buffer it walks on, and neither `Clone` nor
/// `Copy`: so a kernel goes on with it only on that buffer (checked by
/// [`BufferedWalk::check`]), from where the walk last stopped.
#[derive(Debug, Default)]
pub(crate) struct PausedWalk {
    cur: usize,
    visited: u64,
    /// Last-cell candidates seen so far (see [`doomed`]).
    forced: u32,
    /// The walk's number on its buffer ([`Padded::begin_walk`]); 0 for no
    /// walk.
    walk: u64,
    /// The kernel that began it ([`kernel::GroupWalk`]), which alone goes
    /// on with it.
    kernel: Option<TypeId>,
    /// Whether the walk has ended (stuck, or stopped doomed).
    ended: bool,
}

impl PausedWalk {
    /// A walk of kernel `G` standing on `start` of `cells`, a fresh buffer
    /// of its layout (else this panics); the kernel blocks `start`.
    fn begin<G: 'static, C, Kind>(cells: &mut Padded<C, Kind>, start: BoardCell) -> PausedWalk {
        let walk = cells.begin_walk(start);
        let kernel = Some(TypeId::of::<G>());
        PausedWalk { cur: start.index(), visited: 1, forced: 0, walk, kernel, ended: false }
    }

    /// Cells visited so far (all of them once the walk has ended).
    pub(crate) fn visited(&self) -> u64 {
        self.visited
    }
}

/// One of the walks a group kernel advances: its own cells, its move
/// order (one row of offsets per phase), where it stands.
pub(crate) struct BufferedWalk<'a, C, Kind = ()> {
    pub cells: &'a mut Padded<C, Kind>,
    pub offsets: &'a MoveTable,
    pub progress: &'a mut PausedWalk,
    pub stop_when_doomed: bool,
}

impl<C, Kind> BufferedWalk<'_, C, Kind> {
    /// The same walk, borrowed for less long: the pair kernels take their
    /// walks by value from a group's slice.
    pub(crate) fn reborrow(&mut self) -> BufferedWalk<'_, C, Kind> {
        BufferedWalk {
            cells: &mut *self.cells,
            offsets: self.offsets,
            progress: &mut *self.progress,
            stop_when_doomed: self.stop_when_doomed,
        }
    }

    /// Checks, once per call of a kernel, what makes its walk safe to go
    /// on: the cells and offsets are of one layout, and the walk was begun
    /// on these cells by kernel `G`, has not ended, and they have not been
    /// reset since. Panics if not.
    fn check<G: 'static>(&self) {
        assert_eq!(self.cells.layout(), self.offsets.layout(), "cells and moves of one layout");
        assert!(self.cells.walk_of(self.progress.walk), "a walk begun on these cells");
        assert_eq!(self.progress.kernel, Some(TypeId::of::<G>()), "a walk of this kernel");
        assert!(!self.progress.ended, "a walk that has not ended");
    }
}

/// One walk's step, by a kernel that can run beside another's: the
/// walk's buffer as raw pointers, each kernel its own layout and keys.
///
/// # Safety
/// [`Stepper::step`] from a board cell of the stepper's buffer stays
/// inside the buffer and returns a board cell of it, or `None`.
pub(crate) unsafe trait Stepper {
    /// One step from `cur` (with the walk's doom counter): the next cell,
    /// now blocked, or `None` when the walk is stuck or doomed.
    ///
    /// # Safety
    /// `cur` is a board cell of the stepper's buffer, and no reference to
    /// the buffer is live.
    unsafe fn step(&self, cur: usize, forced: &mut u32) -> Option<usize>;
}

/// A walk ready to advance beside another ([`run_pair`]): its kernel's
/// stepper and the walk, which stands on a board cell of the stepper's
/// buffer. Made only by a kernel's `Pointers::of`, which checks that.
pub(crate) struct Paired<'a, S> {
    stepper: S,
    progress: &'a mut PausedWalk,
}

/// Advances two independent walks, each on its own buffer, a step each in
/// turn until one of them ends; returns which ended. One walk's step is a
/// chain of dependent loads and compares that leaves much of the core
/// idle; a second chain beside it fills the gaps (aw+ (3,2) N=400: 7.8 ns
/// a step alone, 5.7 in a pair). Each walk brings its own kernel, made from
/// a [`BufferedWalk`] that it checks.
///
/// Never inlined: in a large caller the loop lost registers to it
/// (callgrind, aw+ (3,2) N=400: 8 % more instructions, 1.49 -> 1.62 ms a
/// task).
#[inline(never)]
pub(crate) fn run_pair(a: Paired<'_, impl Stepper>, b: Paired<'_, impl Stepper>) -> [bool; 2] {
    let (Paired { stepper: a, progress: pa }, Paired { stepper: b, progress: pb }) = (a, b);
    let (mut x, mut y) = (pa.cur, pb.cur);
    let (mut fx, mut fy) = (pa.forced, pb.forced);
    let mut steps = 0u64;
    let [extra_a, extra_b, ended_a, ended_b] = loop {
        // SAFETY: each walk stands on a board cell of its stepper's buffer:
        // its walk's (`Paired`), or one a step returned since (`Stepper`);
        // no reference to either buffer is live while the pair runs.
        match unsafe { (a.step(x, &mut fx), b.step(y, &mut fy)) } {
            (Some(p), Some(q)) => (x, y, steps) = (p, q, steps + 1),
            (None, Some(q)) => {
                y = q;
                break [0, 1, 1, 0];
            }
            (Some(p), None) => {
                x = p;
                break [1, 0, 0, 1];
            }
            (None, None) => break [0, 0, 1, 1],
        }
    };
    for (p, cur, extra, forced, ended) in [(pa, x, extra_a, fx, ended_a), (pb, y, extra_b, fy, ended_b)] {
        (p.cur, p.visited, p.forced, p.ended) = (cur, p.visited + steps + extra, forced, ended == 1);
    }
    [ended_a == 1, ended_b == 1]
}

pub(crate) mod cpu;
pub(crate) mod distance_cells;
pub(crate) mod kernel;
pub(crate) mod select;
pub(crate) mod sse_windows;
#[cfg(test)]
mod tests;
pub(crate) mod w_3d_scaled;
