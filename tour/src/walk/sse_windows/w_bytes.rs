//! Rule W on the byte degrees, up to six walks at once: the same loop as
//! the 16-bit cells' ([`super::WindowKernel`]) with half the bytes to carry, so
//! the walks' boards stay in cache to larger boards. A walk's byte is
//! its degree, or 255 on the border; the kernel marks a visited cell by
//! its top bit, which border cells have already and which a cell's
//! degree (at most 8) never reaches.
//!
//! A window is 8 bytes. The two windows above the current row start at
//! their leftmost neighbour and those below end at their rightmost, so no
//! window reaches past the padded board (the byte degrees have no slack),
//! and the four are loaded in pairs into two vectors. A key is the
//! neighbour's byte before this step's decrement (each loses the same one)
//! in the high byte and the move's rank in the low; the previous cell,
//! which the step marks, is marked in its key by the rank row of the lane
//! the walk came in through.
//!
//! 2D (2,1) N=1000, rule W, 8 starts, one thread (`ksweep bench`):
//! 208.6-236.5 M steps a second four at once against 128.8-142.8 M alone
//! (docs/performance/engine.md).

use super::{back, begin, rotation, windows, Row, WindowKernel, Windows, K, VISITED as VISITED_KEY};
use crate::board::Board;
use crate::layout::{BoardCell, Layout, LayoutId, MoveTable, Padded};
use crate::moves::Moves;
use crate::walk::cpu::{Cpu, Sse41};
use crate::walk::kernel::{GroupWalk, WALKS_AT_ONCE};
use crate::walk::{BufferedWalk, PausedWalk};

/// The visited bit of a byte.
const VISITED: u8 = 0x80;
/// One degree, and the visited bit with it (subtracting this from an
/// unvisited cell of degree d >= 1 leaves it visited with d - 1).
const ONE: u8 = 1;
const ONE_AND_VISITED: u8 = ONE.wrapping_add(VISITED);

/// Sixteen bytes, aligned so that a step can use them straight from memory.
#[repr(C, align(16))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Bytes([u8; 16]);

/// Whether rule-W walks on this board and move set run on byte lanes:
/// as for 16-bit cells ([`super::fits`]), the windows placed as above.
pub(crate) fn fits(board: &Board, moves: &Moves, cpu: Cpu) -> bool {
    Sse41::new(cpu).is_some() && windows_fit(board, moves)
}

/// [`fits`] on a CPU with SSE4.1: whether the board and move set have the
/// windows.
pub(crate) fn windows_fit(board: &Board, moves: &Moves) -> bool {
    byte_windows(board.sides(), moves).is_some()
}

/// The windows of [`super::windows`], those below the current row moved
/// to end at their rightmost neighbour, if they are still apart.
fn byte_windows(sides: &[u32], moves: &Moves) -> Option<Windows> {
    let mut w = windows(sides, moves)?;
    for window in 0..4 {
        let row = moves.get(w.lanes[2 * window].0)[0];
        let last = w.lanes.iter().filter(|l| l.1 == window).map(|l| l.2).max()?;
        if row > 0 {
            w.starts[window] += last as isize - 7;
            for lane in w.lanes.iter_mut().filter(|l| l.1 == window) {
                lane.2 += 7 - last;
            }
        }
    }
    w.apart().then_some(w)
}

/// What rule-W walks on byte degrees share: the windows and the tables a
/// step reads (a few hundred bytes; the starting cells are the runner's
/// byte degrees).
#[derive(Debug)]
pub(crate) struct WTables {
    /// Offset of each window's first byte from the current cell.
    windows: [isize; 4],
    /// `pshufb` controls: windows 0-1, then 2-3, to their key lanes' high
    /// bytes.
    gather: [Bytes; 2],
    /// What a step subtracts from windows 0-1, then 2-3, by the lane the
    /// walk came in through (one degree from each neighbour; the previous
    /// cell marked too).
    decrements: [[Bytes; 2]; K + 1],
    /// Each key lane's padded offset.
    offsets: [isize; K],
    /// Each key lane's canonical move index.
    moves: [usize; K],
    /// Cells of the padded board, the length of a walk's degrees.
    cells: usize,
    /// The layout the plan was made for.
    layout: LayoutId,
    /// Rank rows: the move order's rank per lane, and the visited bit on
    /// the lane back to the previous cell, K + 1 rows (by the lane the walk
    /// came in through) per rotation of the move order.
    ranks: Vec<Row>,
    sse41: Sse41,
}

impl WTables {
    /// The plan of a board, where it [`fits`] on `cpu`.
    pub(crate) fn new(layout: &Layout, moves: &Moves, cpu: Cpu) -> Option<WTables> {
        // As for 16-bit cells: the windows must lie in the layout's border.
        assert!(layout.has_moves(moves), "the layout's moves");
        let sse41 = Sse41::new(cpu)?;
        let sides: Vec<u32> = layout.sides().iter().map(|&n| n as u32).collect();
        let w = byte_windows(&sides, moves)?;
        let offsets = w.lanes.map(|(k, _, _)| layout.offsets()[k]);
        let mut gather = [Bytes([0x80; 16]); 2];
        let mut decrements = [[Bytes::default(); 2]; K + 1];
        let place = |window: usize, e: usize| (window / 2, (window % 2) * 8 + e);
        for (t, &(_, window, e)) in w.lanes.iter().enumerate() {
            let (v, byte) = place(window, e);
            gather[v].0[2 * t + 1] = byte as u8;
            decrements.iter_mut().for_each(|d| d[v].0[byte] = ONE);
        }
        for (came, d) in decrements.iter_mut().take(K).enumerate() {
            let (_, window, e) = w.lanes[back(&offsets, came)];
            let (v, byte) = place(window, e);
            d[v].0[byte] = ONE_AND_VISITED;
        }
        let lane_moves = w.lanes.map(|(k, _, _)| k);
        let mut ranks = vec![Row::default(); K * (K + 1)];
        for (rotation, table) in ranks.chunks_exact_mut(K + 1).enumerate() {
            for (came, row) in table.iter_mut().enumerate() {
                row.0 = lane_moves.map(|k| ((k + K - rotation) % K) as u16);
                if came < K {
                    row.0[back(&offsets, came)] |= VISITED_KEY;
                }
            }
        }
        Some(WTables {
            windows: w.starts,
            gather,
            decrements,
            offsets,
            moves: lane_moves,
            cells: layout.len(),
            layout: layout.id(),
            ranks,
            sse41,
        })
    }
}

/// Rule-W walks on byte degrees as a [`GroupWalk`]: the plan is what they
/// share; alone, rule W is fastest on the byte degrees' keyed kernel.
impl GroupWalk for WTables {
    type Cell = u8;
    type Kind = ();
    type Shared = WTables;
    const AT_ONCE: usize = WALKS_AT_ONCE;
    const ALONE_ON_DEGREES: bool = true;

    fn shared(layout: &Layout, moves: &Moves, _: &Padded<u8>, cpu: Cpu) -> WTables {
        WTables::new(layout, moves, cpu).expect("chosen where it fits")
    }

    /// None: the plan is a few hundred bytes, whatever the board.
    fn shared_bytes(_: &WTables) -> usize {
        0
    }

    /// A thread's byte degrees for each walk but the first, which walks on
    /// the workspace's own.
    fn need(padded: u128) -> (u128, u128) {
        (0, padded.saturating_mul(WALKS_AT_ONCE as u128 - 1))
    }

    fn reset(_: &WTables, degrees: &Padded<u8>, cells: &mut Padded<u8>) {
        cells.copy_from(degrees);
    }

    fn begin(cells: &mut Padded<u8>, start: BoardCell) -> PausedWalk {
        begin::<WTables>(cells, start)
    }

    fn walk(
        shared: &WTables,
        cells: (&mut Padded<u8>, &MoveTable),
        start: BoardCell,
        path: Option<&mut Vec<usize>>,
        stop_when_doomed: bool,
    ) -> u64 {
        WindowKernel::walk(shared, cells, start, path, stop_when_doomed)
    }

    fn run(shared: &WTables, walks: &mut [BufferedWalk<'_, u8>]) -> [bool; WALKS_AT_ONCE] {
        WindowKernel::run(shared, walks)
    }
}

// SAFETY: made from its layout, whose moves place the windows (checked in
// `WTables::new`), which lie in the padded board from a board cell.
unsafe impl WindowKernel for WTables {
    type Cell = u8;
    type Kind = ();
    const VISITED: u8 = VISITED;
    // Keys carry the degree before the step's decrement.
    const DOOM_CHECK: u16 = 3 << 8;

    fn sse41(&self) -> Sse41 {
        self.sse41
    }

    fn layout(&self) -> LayoutId {
        self.layout
    }

    fn offsets(&self) -> &[isize; K] {
        &self.offsets
    }

    fn buffer_len(&self) -> usize {
        self.cells
    }

    fn ranks(&self, offsets: &[isize]) -> &[Row] {
        &self.ranks[rotation(&self.offsets, &self.moves, offsets) * (K + 1)..][..K + 1]
    }

    fn first_key(_: u8) -> u32 {
        0
    }

    fn degree(cell: u8) -> u8 {
        if cell & VISITED != 0 {
            u8::MAX
        } else {
            cell
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn step(&self, p: *mut u8, key: u32, ranks: *const Row) -> (*mut u8, std::arch::x86_64::__m128i) {
        use std::arch::x86_64::*;
        // SAFETY: (the whole body) the windows of a board cell lie in the
        // padded board (see `WTables::new`), the tables are the plan's own and
        // `key >> 16` is a lane or NONE (decrements and each rotation's
        // ranks have K + 1 rows).
        unsafe {
            let came = (key >> 16) as usize;
            let at = |w: usize| p.offset(self.windows[w]).cast::<__m128i>();
            let low = _mm_unpacklo_epi64(_mm_loadl_epi64(at(0)), _mm_loadl_epi64(at(1)));
            let high = _mm_unpacklo_epi64(_mm_loadl_epi64(at(2)), _mm_loadl_epi64(at(3)));
            let d = self.decrements.as_ptr().add(came).cast::<__m128i>();
            let (low_left, high_left) =
                (_mm_sub_epi8(low, _mm_load_si128(d)), _mm_sub_epi8(high, _mm_load_si128(d.add(1))));
            _mm_storel_epi64(at(0), low_left);
            _mm_storeh_pd(at(1).cast(), _mm_castsi128_pd(low_left));
            _mm_storel_epi64(at(2), high_left);
            _mm_storeh_pd(at(3).cast(), _mm_castsi128_pd(high_left));
            let g = |v: usize| _mm_load_si128(self.gather[v].0.as_ptr().cast());
            let keys = _mm_or_si128(_mm_shuffle_epi8(low, g(0)), _mm_shuffle_epi8(high, g(1)));
            super::chosen(p, &self.offsets, _mm_or_si128(keys, _mm_load_si128(ranks.add(came).cast())))
        }
    }
}
