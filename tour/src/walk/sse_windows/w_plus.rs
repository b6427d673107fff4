//! Rule W+ on 16-bit cells: the plan its walks share (windows, gather
//! and rank tables, the starting cells with each cell's sector class) and
//! its step, apart from the windows and the loop every kind shares.

use std::collections::HashMap;

use super::{
    back, begin, cell_bytes, chosen, rotation, shared_bytes, windows, Row, WindowCells, WindowKernel, Windows, BORDER,
    CLASSES, DEGREE_SHIFT, K, ONE, RANK_SHIFT, SLACK, VISITED,
};
use crate::layout::{BoardCell, Layout, LayoutId, MoveTable, Padded};
use crate::moves::Moves;
use crate::walk::cpu::{Cpu, Sse41};
use crate::walk::kernel::{GroupWalk, WALKS_AT_ONCE};
use crate::walk::{BufferedWalk, PausedWalk};

/// Rule W+ on 16-bit cells: what its walks share, the windows, the tables
/// a step reads, and the starting cells (2 bytes a padded cell).
#[derive(Debug)]
pub(crate) struct WPlusTables {
    /// Offset of each window's first cell from the current cell.
    windows: [isize; 4],
    /// `pshufb` controls: each window's two neighbours to their key lanes.
    gather: [[u8; 16]; 4],
    /// What a step subtracts from each window, by the lane the walk came in
    /// through: a degree from each neighbour, and the visited bit added to
    /// the previous cell.
    decrements: [[Row; 4]; K + 1],
    /// Each key lane's padded offset.
    offsets: [isize; K],
    /// Each key lane's canonical move index.
    moves: [usize; K],
    /// Rank rows (rank << 8 per lane), [`CLASSES`] per rotation of the move
    /// order (a fixed size, so a board's need is known before it is built).
    ranks: Vec<Row>,
    /// The starting cells, 16 bits a cell.
    initial: Padded<u16, WindowCells>,
    sse41: Sse41,
}

impl WPlusTables {
    /// The plan of a board, from the layout's byte degrees, where it
    /// [`fits`](super::fits) on `cpu`. One pass over the board, a few sectors a row.
    pub(crate) fn new(layout: &Layout, moves: &Moves, degrees: &Padded<u8>, cpu: Cpu) -> Option<WPlusTables> {
        // The windows are placed by `moves`, and must lie in the layout's
        // border, which its own moves set.
        assert!(layout.has_moves(moves), "the layout's moves");
        let sse41 = Sse41::new(cpu)?;
        let sides: Vec<u32> = layout.sides().iter().map(|&n| n as u32).collect();
        let w = windows(&sides, moves)?;
        let offsets = w.lanes.map(|(k, _, _)| layout.offsets()[k]);
        let mut gather = [[0x80u8; 16]; 4];
        let mut decrements = [[Row::default(); 4]; K + 1];
        for (t, &(_, window, e)) in w.lanes.iter().enumerate() {
            gather[window][2 * t] = 2 * e as u8;
            gather[window][2 * t + 1] = 2 * e as u8 + 1;
            decrements.iter_mut().for_each(|d| d[window].0[e] = ONE);
        }
        for (came, d) in decrements.iter_mut().take(K).enumerate() {
            let (_, window, e) = w.lanes[back(&offsets, came)];
            d[window].0[e] = ONE.wrapping_add(VISITED);
        }
        let (initial, dense) = starting_cells(layout, moves, &w, degrees);
        let lane_moves = w.lanes.map(|(k, _, _)| k);
        let mut ranks = vec![Row::default(); K * CLASSES];
        for (rotation, table) in ranks.chunks_exact_mut(CLASSES).enumerate() {
            for (row, d) in table.iter_mut().zip(&dense) {
                let mut order: [usize; K] = std::array::from_fn(|t| t);
                order.sort_by_key(|&t| (d[t], (lane_moves[t] + K - rotation) % K));
                for (rank, &t) in order.iter().enumerate() {
                    row.0[t] = (rank as u16) << RANK_SHIFT;
                }
            }
        }
        Some(WPlusTables { windows: w.starts, gather, decrements, offsets, moves: lane_moves, ranks, initial, sse41 })
    }

    /// The starting cells, copied before each walk.
    pub(crate) fn starting_cells(&self) -> &Padded<u16, WindowCells> {
        &self.initial
    }

    /// Bytes the plan holds: [`shared_bytes`].
    pub(crate) fn bytes(&self) -> usize {
        self.initial.bytes() + self.ranks.capacity() * std::mem::size_of::<Row>()
    }
}

// SAFETY: made from its layout, whose moves place the windows (checked in
// `WPlusTables::new`), which lie in the border and slack from a board cell.
unsafe impl WindowKernel for WPlusTables {
    type Cell = u16;
    type Kind = WindowCells;
    const VISITED: u16 = VISITED;
    const DOOM_CHECK: u16 = 2 * ONE;

    fn sse41(&self) -> Sse41 {
        self.sse41
    }

    fn layout(&self) -> LayoutId {
        self.initial.layout()
    }

    fn offsets(&self) -> &[isize; K] {
        &self.offsets
    }

    fn buffer_len(&self) -> usize {
        self.initial.len()
    }

    fn ranks(&self, offsets: &[isize]) -> &[Row] {
        &self.ranks[rotation(&self.offsets, &self.moves, offsets) * CLASSES..][..CLASSES]
    }

    fn first_key(cell: u16) -> u32 {
        u32::from(cell & 0xff)
    }

    fn degree(cell: u16) -> u8 {
        if cell & VISITED != 0 {
            u8::MAX
        } else {
            (cell >> DEGREE_SHIFT) as u8
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn step(&self, p: *mut u16, key: u32, ranks: *const Row) -> (*mut u16, std::arch::x86_64::__m128i) {
        use std::arch::x86_64::*;
        // SAFETY: (the whole body) the windows of a board cell lie in the
        // buffer (border, then slack, see `windows`), the tables are the
        // plan's own, `key >> 16` is a lane or NONE (decrements has K + 1
        // rows) and `key & 0xff` twice one of the plan's classes.
        unsafe {
            let d = self.decrements.as_ptr().add((key >> 16) as usize).cast::<__m128i>();
            let at = |w: usize| p.offset(self.windows[w]).cast::<__m128i>();
            let w0 = _mm_sub_epi16(_mm_loadu_si128(at(0)), _mm_load_si128(d));
            let w1 = _mm_sub_epi16(_mm_loadu_si128(at(1)), _mm_load_si128(d.add(1)));
            let w2 = _mm_sub_epi16(_mm_loadu_si128(at(2)), _mm_load_si128(d.add(2)));
            let w3 = _mm_sub_epi16(_mm_loadu_si128(at(3)), _mm_load_si128(d.add(3)));
            _mm_storeu_si128(at(0), w0);
            _mm_storeu_si128(at(1), w1);
            _mm_storeu_si128(at(2), w2);
            _mm_storeu_si128(at(3), w3);
            let g = |w: usize| _mm_loadu_si128(self.gather[w].as_ptr().cast());
            let keys = _mm_or_si128(
                _mm_or_si128(_mm_shuffle_epi8(w0, g(0)), _mm_shuffle_epi8(w1, g(1))),
                _mm_or_si128(_mm_shuffle_epi8(w2, g(2)), _mm_shuffle_epi8(w3, g(3))),
            );
            // The class byte is twice the class: half a row's offset.
            let row = ranks.cast::<u64>().add((key & 0xff) as usize);
            chosen(p, &self.offsets, _mm_or_si128(keys, _mm_load_si128(row.cast())))
        }
    }
}

/// W+ walks on 16-bit cells as a [`GroupWalk`]: the plan is what they
/// share.
impl GroupWalk for WPlusTables {
    type Cell = u16;
    type Kind = WindowCells;
    type Shared = WPlusTables;
    const AT_ONCE: usize = WALKS_AT_ONCE;
    const ALONE_ON_DEGREES: bool = false;

    fn shared(layout: &Layout, moves: &Moves, degrees: &Padded<u8>, cpu: Cpu) -> WPlusTables {
        WPlusTables::new(layout, moves, degrees, cpu).expect("chosen where it fits")
    }

    fn shared_bytes(shared: &WPlusTables) -> usize {
        shared.bytes()
    }

    /// The starting cells and the tables shared, and a thread's working
    /// copy for each walk it advances together.
    fn need(padded: u128) -> (u128, u128) {
        (shared_bytes(padded), cell_bytes(padded).saturating_mul(WALKS_AT_ONCE as u128))
    }

    fn reset(shared: &WPlusTables, _: &Padded<u8>, cells: &mut Padded<u16, WindowCells>) {
        cells.copy_from(shared.starting_cells());
    }

    fn begin(cells: &mut Padded<u16, WindowCells>, start: BoardCell) -> PausedWalk {
        begin::<WPlusTables>(cells, start)
    }

    fn walk(
        shared: &WPlusTables,
        cells: (&mut Padded<u16, WindowCells>, &MoveTable),
        start: BoardCell,
        path: Option<&mut Vec<usize>>,
        stop_when_doomed: bool,
    ) -> u64 {
        WindowKernel::walk(shared, cells, start, path, stop_when_doomed)
    }

    fn run(shared: &WPlusTables, walks: &mut [BufferedWalk<'_, u16, WindowCells>]) -> [bool; WALKS_AT_ONCE] {
        WindowKernel::run(shared, walks)
    }
}

/// The starting cells (degree and class; [`BORDER`] around) and each
/// class's dense distance ranks by lane (0 the farthest).
///
/// Two moves' distances from the centre compare, along a row, as a linear
/// function of the column does with 0, so each changes at most once a
/// row: the cells between consecutive changes share a class, which is
/// looked up once per run of cells rather than per cell.
fn starting_cells(
    layout: &Layout,
    moves: &Moves,
    w: &Windows,
    degrees: &Padded<u8>,
) -> (Padded<u16, WindowCells>, Vec<[u8; K]>) {
    assert_eq!(degrees.layout(), layout.id(), "degrees of this layout");
    let degrees = degrees.as_slice();
    let (rows, cols) = (layout.sides()[0] as i128, layout.sides()[1] as i128);
    let v: [(i128, i128); K] = w.lanes.map(|(k, _, _)| (i128::from(moves.get(k)[0]), i128::from(moves.get(k)[1])));
    // The squared doubled distance from the centre of each lane's target.
    let far = |x: i128, y: i128| -> [i128; K] {
        v.map(|(dx, dy)| (2 * (x + dx) - (rows - 1)).pow(2) + (2 * (y + dy) - (cols - 1)).pow(2))
    };
    let mut cells = vec![BORDER; layout.len() + SLACK];
    let mut dense: Vec<[u8; K]> = Vec::new();
    let mut ids: HashMap<[u8; K], u16> = HashMap::new();
    let mut cuts = Vec::with_capacity(4 * K * K);
    for x in 0..rows {
        let (at0, at1) = (far(x, 0), far(x, 1));
        cuts.clear();
        cuts.push(0);
        for s in 0..K {
            for t in s + 1..K {
                let (a, b) = (at0[s] - at0[t], (at1[s] - at1[t]) - (at0[s] - at0[t]));
                if b != 0 {
                    // a + b y changes sign at -a / b: around its floor.
                    let z = if b > 0 { (-a).div_euclid(b) } else { a.div_euclid(-b) };
                    cuts.extend([z, z + 1].into_iter().filter(|&y| (1..cols).contains(&y)));
                }
            }
        }
        cuts.sort_unstable();
        cuts.dedup();
        let row = layout.padded((x * cols) as u64);
        for (i, &from) in cuts.iter().enumerate() {
            let to = cuts.get(i + 1).copied().unwrap_or(cols);
            let d = far(x, from);
            let id = *ids.entry(dense_ranks(&d)).or_insert_with_key(|r| {
                dense.push(*r);
                (dense.len() - 1) as u16
            });
            let run = row + from as usize..row + to as usize;
            for (cell, &deg) in cells[run.clone()].iter_mut().zip(&degrees[run]) {
                *cell = (u16::from(deg) << DEGREE_SHIFT) | (2 * id);
            }
        }
    }
    assert!(dense.len() <= CLASSES, "{} sectors", dense.len());
    // SAFETY: border cells and the slack BORDER (visited), board cells
    // their degree and class: a walk's first step may take them.
    (unsafe { layout.buffer(cells) }, dense)
}

/// Each lane's place among the distinct distances, farthest first.
fn dense_ranks(d: &[i128; K]) -> [u8; K] {
    let mut distinct = *d;
    distinct.sort_unstable_by(|a, b| b.cmp(a));
    let mut n = 0;
    for i in 1..K {
        if distinct[i] != distinct[n] {
            n += 1;
            distinct[n] = distinct[i];
        }
    }
    d.map(|f| distinct[..=n].iter().position(|&g| g == f).expect("a distance of the row") as u8)
}
