//! Rule W (and W+, [`plus`]) on degrees scaled by four, for the 24 moves of
//! a tiled 3D board (the report's 3D leapers: (2,1), (1,2,2), (3,1) and
//! the like). With 24 neighbours a step is bound by the work it does on
//! them, not by its latency, so each neighbour gets as few instructions as
//! the step allows (7, against 11 in [`super::keyed`]'s `walk_keyed_with`):
//!
//! - the walk reads each neighbour through a pointer per (phase, move),
//!   `cell + offset` precomputed, so its address needs no addition;
//! - the buffer holds degrees times four (255 blocked, as elsewhere), so a
//!   candidate's key, `4d * 8 + k` = (degree, move index), is one `lea`;
//! - the key does not carry the cell: the next cell is `cur + offset[k]`,
//!   one load after the least key (the latency this adds is hidden behind
//!   the 24 neighbours' work).
//!
//! The walk is the same as the keyed kernel's, cell for cell (the walk tests
//! run both kernels against the generic one). Two walks can also advance
//! together ([`Stepper`], [`super::run_pair`]). The same kernel for the 8
//! moves of a 2D board measured no faster in pairs than the keyed kernel
//! alone (400 starts of (2,1) N=300, w and aw: 0.87-0.91 s either way), so
//! 2D rule-W walks keep to the keyed kernel and do not pair.

use std::marker::PhantomData;

#[cfg(target_arch = "x86_64")]
mod gather;
pub(crate) mod plus;
#[cfg(target_arch = "x86_64")]
pub(crate) mod windows;

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::cpu::{Avx2, Avx512, Avx512Vbmi, Cpu, Level, Sse41};
use super::kernel::{self, GroupWalk, WALKS_AT_ONCE};
use super::{doomed, keyed, run_pair, tree_min, BufferedWalk, Paired, PausedWalk, Stepper, WalkMoves, MINIMA_CHAINS};
use crate::board::Board;
use crate::layout::{BoardCell, Layout, MoveTable, Padded};
use crate::moves::Moves;

/// A blocked (border or visited) cell, as in the byte buffer the walk is
/// given. Each neighbour of the walk loses [`SCALE`] per visit, blocked ones
/// included (branch-free): a blocked cell never falls below 255 - 4K = 159.
const BLOCKED: u8 = u8::MAX;
/// One degree in the scaled buffer: an open cell holds at most 4K = 96.
const SCALE: u8 = 4;
/// Moves this kernel takes.
pub(crate) const K: usize = 24;
/// A key is the scaled value shifted by this: degree << 5, which leaves the
/// low 5 bits to the move index (K < 32), added by the same `lea`.
const SHIFT: u32 = 3;
/// The move index's bits in a key.
const MOVE_MASK: u64 = 31;
/// Keys from here up are blocked cells: a scaled value of 128 or more.
const BLOCKED_KEY: u64 = 128 << SHIFT;
/// Keys below this are candidates of degree at most one after their
/// decrement (scaled value before it below 3 x 4), the only ones that can
/// doom a walk (see [`doomed`]).
const LOW_KEY: u64 = (LOW_SCALED as u64) << SHIFT;
/// The scaled value below which a candidate can doom a walk.
const LOW_SCALED: u32 = 3 * SCALE as u32;

/// How a step scans its 24 neighbours: one at a time, or as vectors
/// where the CPU has them (each carries its feature type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scan {
    /// Seven instructions a neighbour ([`Pointers`]).
    Scalar,
    /// Three 8-lane gathers and a vector minimum (`gather::Gather`).
    Avx2(Avx2),
    /// A 16-lane and an 8-lane gather.
    Avx512(Avx512),
    /// Rows of the board as 8-byte windows and a byte permute
    /// (`windows::Windows`): row-major boards only, where [`window_scan`]
    /// says so and, on larger boards, a runner's timing of the two layouts
    /// (`runner::layout_choice`); never timed here, since the others need
    /// tiles.
    Windows(Avx512Vbmi),
    /// The same windows and byte shuffles (`windows::ShuffledWindows`).
    SseWindows(Sse41),
}

impl Scan {
    /// The fastest scan on `cpu`, timed once per process and feature level
    /// on a few small walks ([`Calibration`]). Gathers are not fast
    /// everywhere: on Zen 4 the AVX2 scan, at 101 instructions a step
    /// against 198, walked 15-20 % slower (docs/performance/engine.md), so
    /// which one runs is measured, not assumed. Every scan walks the same
    /// cells (the walk tests), so the choice changes no flag.
    pub(crate) fn fastest(cpu: Cpu) -> Scan {
        static CHOSEN: [OnceLock<Scan>; Level::ALL.len()] = [const { OnceLock::new() }; Level::ALL.len()];
        let at = Level::ALL.iter().position(|&l| l == cpu.level()).expect("every level");
        *CHOSEN[at].get_or_init(|| {
            let scans = Scan::all(cpu);
            if scans.len() == 1 {
                return Scan::Scalar;
            }
            // Rounds that take each scan in turn, so that a moment's load
            // on the machine weighs on all of them alike.
            let mut least = vec![Duration::MAX; scans.len()];
            let mut walks = Calibration::new();
            for _ in 0..3 {
                for (scan, least) in scans.iter().zip(&mut least) {
                    *least = (*least).min(walks.time(*scan));
                }
            }
            let at = (0..scans.len()).min_by_key(|&i| least[i]).unwrap_or(0);
            scans[at]
        })
    }

    /// The scan's name, as `ksweep bench` prints it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Scan::Scalar => "scalar",
            Scan::Avx2(_) => "avx2",
            Scan::Avx512(_) => "avx512",
            Scan::Windows(_) => "avx512 windows",
            Scan::SseWindows(_) => "sse4.1 windows",
        }
    }

    /// Every scan `cpu` can run on a tiled board, scalar first.
    pub(crate) fn all(cpu: Cpu) -> Vec<Scan> {
        if cfg!(not(target_arch = "x86_64")) {
            return vec![Scan::Scalar];
        }
        let mut out = vec![Scan::Scalar];
        out.extend(Avx2::new(cpu).map(Scan::Avx2));
        out.extend(Avx512::new(cpu).map(Scan::Avx512));
        out
    }
}

/// The scan a configuration's walks take: a fixed one, or the fastest on
/// a CPU, timed ([`Scan::fastest`]) at the first walk that asks rather
/// than when the kernels are chosen, which a run with no rule-W method
/// also does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScanChoice {
    /// [`Scan::fastest`] on this CPU.
    Fastest(Cpu),
    /// This scan (the tests', and boards whose offsets leave 32 bits).
    Fixed(Scan),
}

impl ScanChoice {
    /// The scan, timing the CPU's on the first call for it.
    pub(crate) fn scan(self) -> Scan {
        match self {
            ScanChoice::Fastest(cpu) => Scan::fastest(cpu),
            ScanChoice::Fixed(scan) => scan,
        }
    }
}

/// Whether walks on this board and move set can run here: 3D, 24 moves
/// closed under negation (whose neighbours are their own predecessors).
pub(crate) fn fits(board: &Board, moves: &Moves) -> bool {
    board.dims() == 3 && moves.len() == K && moves.closed_under_negation()
}

/// Padded cells up to which a board takes the window scans (`windows`).
/// Row-major windows touch 16 or more cache lines a step where 4x4x4
/// tiles touch about 8, so past a few megabytes the tiles' locality is
/// worth more than the window scans' fewer instructions. (2,1) 3D, a pair of walks, the
/// windows against the tiled scalar scan, Zen 4 (1 MiB L2 a core): N=100
/// (1.1 MB) 30 % faster, N=120 16 %, N=140 (3.0 MB) 12 %, N=160 (4.4 MB)
/// even, N=200 slower; the SSE windows on Zen 1 (512 KiB L2), alone:
/// N=100 15 % faster, N=140 even; on Emerald Rapids (2 MiB L2) slower
/// from N=130 (docs/performance/engine.md). So from 1.5 Mi cells up to
/// this bound a runner times the two (`runner::layout_choice`).
pub(crate) const WINDOWS_MAX_PADDED: u128 = 4 << 20;

/// Padded cells up to which the windows are taken without timing them
/// against the tiles: every CPU measured ran them at least as fast there
/// (Emerald Rapids a third faster at 1.5 M, Zen 1 15 % at 1.1 M).
pub(crate) const WINDOWS_UNTIMED_PADDED: u128 = 3 << 19;

/// The window scan rule-W walks on `board` with `moves` take on `cpu`
/// (on a row-major layout, which the board then takes), or `None` where
/// they take the tiled scans.
pub(crate) fn window_scan(board: &Board, moves: &Moves, cpu: Cpu) -> Option<Scan> {
    #[cfg(target_arch = "x86_64")]
    return windows::scan_on(board, moves, cpu);
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (board, moves, cpu);
        None
    }
}

/// Rule-W walks on scaled degrees as a [`GroupWalk`]: two at a time, each
/// on byte degrees of its own (they share only the [`Scan`]); alone, a
/// walk goes on the byte degrees' kernel, this one's lone walk.
#[derive(Debug)]
pub(crate) struct Scaled3d;

impl GroupWalk for Scaled3d {
    type Cell = u8;
    type Kind = ();
    type Shared = Scan;
    const AT_ONCE: usize = 2;
    const ALONE_ON_DEGREES: bool = true;

    /// The window scan where the board is row-major (which it is where
    /// that scan fits), else the fastest of the tiled ones.
    fn shared(layout: &Layout, moves: &Moves, _: &Padded<u8>, cpu: Cpu) -> Scan {
        #[cfg(target_arch = "x86_64")]
        if let Some(scan) = windows::scan_of(layout, moves, cpu) {
            return scan;
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = moves;
        if layout.phase_mask() == 0 {
            Scan::Scalar
        } else {
            Scan::fastest(cpu)
        }
    }

    fn shared_bytes(_: &Scan) -> usize {
        0
    }

    /// A thread's second walk's byte degrees.
    fn need(padded: u128) -> (u128, u128) {
        (0, padded)
    }

    fn reset(_: &Scan, degrees: &Padded<u8>, cells: &mut Padded<u8>) {
        cells.copy_from(degrees);
    }

    fn begin(cells: &mut Padded<u8>, start: BoardCell) -> PausedWalk {
        begin(cells, start)
    }

    fn walk(
        &scan: &Scan,
        (cells, offsets): (&mut Padded<u8>, &MoveTable),
        start: BoardCell,
        mut path: Option<&mut Vec<usize>>,
        stop_when_doomed: bool,
    ) -> u64 {
        let mut progress = begin(cells, start);
        if let Some(p) = path.as_deref_mut() {
            p.push(start.index());
        }
        run(scan, BufferedWalk { cells, offsets, progress: &mut progress, stop_when_doomed }, path);
        progress.visited()
    }

    fn run(&scan: &Scan, walks: &mut [BufferedWalk<'_, u8>]) -> [bool; WALKS_AT_ONCE] {
        match walks {
            [a] => {
                run(scan, a.reborrow(), None);
                kernel::ended(&[true])
            }
            [a, b] => kernel::ended(&pair(scan, a.reborrow(), b.reborrow())),
            _ => panic!("scaled degrees take one or two walks, not {}", walks.len()),
        }
    }
}

/// W+ walks on the row windows as a [`GroupWalk`]: two at a time, each
/// on byte degrees of its own, where the board takes the window scan
/// ([`window_scan`]); alone, a walk goes on the byte degrees' kernel,
/// `Rule::Plus` with the same scan. A walk that goes on beside a new
/// partner finds its distance parts again from the cell it stands on.
#[derive(Debug)]
pub(crate) struct ScaledPlus3d;

/// What W+ walks on the windows share: the window scan (which holds the
/// proof of the CPU's features), and the layout, which turns a walk's
/// cell into its coordinates.
#[derive(Debug)]
pub(crate) struct PlusShared {
    scan: Scan,
    layout: Layout,
}

impl PlusShared {
    /// The doubled centre offsets of padded cell `cur` (see
    /// [`keyed::centre`]).
    fn centred(&self, cur: usize) -> [i64; 3] {
        let mut xy = [0; 3];
        self.layout.coords(cur, &mut xy);
        keyed::centre(&mut xy, self.layout.sides());
        xy
    }

    /// One walk to its end, pushing each cell it enters to `path`.
    fn alone(&self, walk: BufferedWalk<'_, u8>, path: Option<&mut Vec<usize>>) {
        let (buffer, progress) = Buffer::of_kernel::<ScaledPlus3d>(walk);
        let centred = self.centred(progress.cur);
        #[cfg(target_arch = "x86_64")]
        windows::alone_plus(buffer, &centred, self.scan, progress, path);
        #[cfg(not(target_arch = "x86_64"))]
        unreachable!("W+ windows are chosen on x86-64 only: {:?}", (buffer.len, centred, progress, path));
    }
}

impl GroupWalk for ScaledPlus3d {
    type Cell = u8;
    type Kind = ();
    type Shared = PlusShared;
    const AT_ONCE: usize = 2;
    const ALONE_ON_DEGREES: bool = true;

    /// Panics where the layout or the CPU does not take a window scan: the
    /// kernel is chosen only where they do.
    fn shared(layout: &Layout, moves: &Moves, _: &Padded<u8>, cpu: Cpu) -> PlusShared {
        #[cfg(target_arch = "x86_64")]
        let scan = windows::scan_of(layout, moves, cpu);
        #[cfg(not(target_arch = "x86_64"))]
        let scan = {
            let _ = (moves, cpu);
            None
        };
        PlusShared { scan: scan.expect("W+ windows are chosen where a window scan runs"), layout: layout.clone() }
    }

    fn shared_bytes(_: &PlusShared) -> usize {
        0
    }

    /// A thread's second walk's byte degrees.
    fn need(padded: u128) -> (u128, u128) {
        (0, padded)
    }

    fn reset(_: &PlusShared, degrees: &Padded<u8>, cells: &mut Padded<u8>) {
        cells.copy_from(degrees);
    }

    fn begin(cells: &mut Padded<u8>, start: BoardCell) -> PausedWalk {
        begin_as::<ScaledPlus3d>(cells, start)
    }

    fn walk(
        shared: &PlusShared,
        (cells, offsets): (&mut Padded<u8>, &MoveTable),
        start: BoardCell,
        mut path: Option<&mut Vec<usize>>,
        stop_when_doomed: bool,
    ) -> u64 {
        let mut progress = Self::begin(cells, start);
        if let Some(p) = path.as_deref_mut() {
            p.push(start.index());
        }
        shared.alone(BufferedWalk { cells, offsets, progress: &mut progress, stop_when_doomed }, path);
        progress.visited()
    }

    fn run(shared: &PlusShared, walks: &mut [BufferedWalk<'_, u8>]) -> [bool; WALKS_AT_ONCE] {
        match walks {
            [a] => {
                shared.alone(a.reborrow(), None);
                kernel::ended(&[true])
            }
            [a, b] => {
                let ((a, pa), (b, pb)) =
                    (Buffer::of_kernel::<ScaledPlus3d>(a.reborrow()), Buffer::of_kernel::<ScaledPlus3d>(b.reborrow()));
                let (ca, cb) = (shared.centred(pa.cur), shared.centred(pb.cur));
                #[cfg(target_arch = "x86_64")]
                return kernel::ended(&windows::pair_plus((a, pa, &ca), (b, pb, &cb), shared.scan));
                #[cfg(not(target_arch = "x86_64"))]
                unreachable!("W+ windows are chosen on x86-64 only: {:?}", (a.len, b.len, ca, cb, pa, pb));
            }
            _ => panic!("W+ windows take one or two walks, not {}", walks.len()),
        }
    }
}

/// The walks [`Scan::fastest`] times: (2,1) on a 24^3 board from two
/// starts, about 28,000 steps (well under a millisecond).
struct Calibration {
    layout: Layout,
    table: MoveTable,
    degrees: Padded<u8>,
    cells: Padded<u8>,
}

impl Calibration {
    fn new() -> Calibration {
        let board = Board::regular(3, 24).expect("a 3D board");
        let moves = Moves::from_rule(&[2, 1], 3).expect("the 3D knight");
        let layout = Layout::for_walks(&board, &moves).expect("a small layout");
        let mut table = MoveTable::default();
        layout.rotated_moves(0, &mut table);
        let degrees = layout.degree_buffer::<u8>();
        let cells = degrees.clone();
        Calibration { layout, table, degrees, cells }
    }

    /// How long `scan` takes for the walks.
    fn time(&mut self, scan: Scan) -> Duration {
        let began = Instant::now();
        for start in [0, 6_789] {
            self.cells.copy_from(&self.degrees);
            Scaled3d::walk(&scan, (&mut self.cells, &self.table), self.layout.board_cell(start), None, false);
        }
        began.elapsed()
    }
}

/// Scales the fresh byte degrees `deg` (as the layout builds them) for
/// this kernel, and marks board cell `start` visited: a walk about to leave
/// it.
pub(crate) fn begin(deg: &mut Padded<u8>, start: BoardCell) -> PausedWalk {
    begin_as::<Scaled3d>(deg, start)
}

/// [`begin`], for the kernel `G` (rule W's walks or W+'s).
fn begin_as<G: 'static>(deg: &mut Padded<u8>, start: BoardCell) -> PausedWalk {
    let progress = PausedWalk::begin::<G, _, _>(deg, start);
    // SAFETY: scales the starting degrees (border cells stay blocked, open
    // ones at most 4K) and blocks a board cell, as a step does.
    scale(unsafe { deg.cells_mut() }, start.index());
    progress
}

/// Scales `deg` and blocks `start` (see [`begin`]).
fn scale(deg: &mut [u8], start: usize) {
    for d in deg.iter_mut() {
        *d = if *d == BLOCKED { BLOCKED } else { *d * SCALE };
    }
    deg[start] = BLOCKED;
}

/// Which rule a walk on scaled degrees follows ([`walk`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rule {
    /// Rule W, scanning as the choice says.
    W(ScanChoice),
    /// W+ ([`plus`]): boards whose distance terms fit its keys
    /// ([`plus::fits`]), on the window scan where one is given (the board
    /// is then row-major, [`window_scan`]), else on the scalar one.
    Plus(Option<Scan>),
}

/// Runs one walk by `rule` from padded cell `start` on byte degrees `deg`
/// (unscaled on entry, left scaled), 24 moves in the rows of `moves`;
/// `xy` holds the start's coordinates (W+ ranks by them, and leaves them
/// centred: [`keyed::centre`]). Returns cells visited; see [`super::walk`],
/// which checks its arguments and calls this for
/// [`super::DegreeKernel::Scaled3d`].
///
/// # Safety
/// What [`super::walk`] checks: `deg` is a buffer of the layout of `moves`,
/// at least its length, and `start` a board cell of it.
pub(super) unsafe fn walk(
    deg: &mut [u8],
    moves: &WalkMoves<'_>,
    (start, xy): (usize, &mut [i64]),
    rule: Rule,
    mut path: Option<&mut Vec<usize>>,
    stop_when_doomed: bool,
) -> u64 {
    assert_eq!(moves.count(), K);
    scale(deg, start);
    if let Some(p) = path.as_deref_mut() {
        p.push(start);
    }
    let mut progress = PausedWalk { cur: start, visited: 1, ..PausedWalk::default() };
    // SAFETY: the caller's.
    let buffer = unsafe { Buffer::from_raw(deg, (moves.offsets, moves.vectors), moves.phase_mask, stop_when_doomed) };
    match rule {
        Rule::W(scan) => alone(scan.scan(), buffer, &mut progress, path),
        #[cfg(target_arch = "x86_64")]
        Rule::Plus(Some(scan)) => {
            keyed::centre(xy, moves.sides);
            windows::alone_plus(buffer, xy, scan, &mut progress, path);
        }
        Rule::Plus(_) => {
            keyed::centre(xy, moves.sides);
            let stepper = plus::Plus::new(Pointers::new(buffer), xy);
            to_the_end(Paired { stepper, progress: &mut progress }, path);
        }
    }
    progress.visited()
}

/// Takes a walk on (from [`begin`]) to its end, scanning by `scan`,
/// pushing each cell it enters to `path`.
pub(crate) fn run(scan: Scan, walk: BufferedWalk<'_, u8>, path: Option<&mut Vec<usize>>) {
    let (buffer, progress) = Buffer::of(walk);
    alone(scan, buffer, progress, path);
}

/// One walk to its end on `buffer`, where it stands as `progress` says,
/// with the stepper of `scan`.
fn alone(scan: Scan, buffer: Buffer<'_>, progress: &mut PausedWalk, path: Option<&mut Vec<usize>>) {
    match scan {
        #[cfg(target_arch = "x86_64")]
        Scan::Avx2(w) => gather::Lanes::alone(Paired { stepper: gather::Gather::new(buffer, w), progress }, path),
        #[cfg(target_arch = "x86_64")]
        Scan::Avx512(w) => gather::Lanes::alone(Paired { stepper: gather::Gather::new(buffer, w), progress }, path),
        #[cfg(target_arch = "x86_64")]
        Scan::Windows(_) | Scan::SseWindows(_) => windows::alone(buffer, scan, progress, path),
        _ => to_the_end(Paired { stepper: Pointers::new(buffer), progress }, path),
    }
}

/// Advances two walks (each from [`begin`] on its own buffer) a step each
/// in turn, scanning by `scan`, until one ends; returns which ended.
pub(crate) fn pair(scan: Scan, a: BufferedWalk<'_, u8>, b: BufferedWalk<'_, u8>) -> [bool; 2] {
    let ((a, pa), (b, pb)) = (Buffer::of(a), Buffer::of(b));
    match scan {
        #[cfg(target_arch = "x86_64")]
        Scan::Avx2(w) => gather::Lanes::pair(
            Paired { stepper: gather::Gather::new(a, w), progress: pa },
            Paired { stepper: gather::Gather::new(b, w), progress: pb },
        ),
        #[cfg(target_arch = "x86_64")]
        Scan::Avx512(w) => gather::Lanes::pair(
            Paired { stepper: gather::Gather::new(a, w), progress: pa },
            Paired { stepper: gather::Gather::new(b, w), progress: pb },
        ),
        #[cfg(target_arch = "x86_64")]
        Scan::Windows(_) | Scan::SseWindows(_) => windows::pair((a, pa), (b, pb), scan),
        _ => run_pair(
            Paired { stepper: Pointers::new(a), progress: pa },
            Paired { stepper: Pointers::new(b), progress: pb },
        ),
    }
}

/// Steps `walk` to its end, pushing each cell it enters to `path`: inlined
/// into each scan's loop (a vector scan's is compiled with its features).
#[inline(always)]
fn to_the_end(walk: Paired<'_, impl Stepper>, mut path: Option<&mut Vec<usize>>) {
    let Paired { stepper: mut walk, progress } = walk;
    let (mut cur, mut forced, mut visited) = (progress.cur, progress.forced, progress.visited);
    // SAFETY: the walk stands on a board cell of its buffer (`Paired`),
    // then on the cells its steps return (`Stepper`), and only its
    // pointers reach the buffer until it ends.
    while let Some(next) = unsafe { walk.step(cur, &mut forced) } {
        cur = next;
        visited += 1;
        if let Some(p) = path.as_deref_mut() {
            p.push(cur);
        }
    }
    (progress.cur, progress.visited, progress.forced, progress.ended) = (cur, visited, forced, true);
}

/// One walk's buffer as every scan's step reads it: every access goes
/// through `base` (or pointers made from it), none through the slice.
pub(crate) struct Buffer<'a> {
    base: *mut u8,
    len: usize,
    /// The layout's offsets, a row of K per phase.
    table: &'a [isize],
    /// The moves' vectors, 3 a move, in the table's order.
    vectors: &'a [i32],
    phase_mask: usize,
    stop_when_doomed: bool,
    /// The buffer, borrowed for as long as the view lives.
    cells: PhantomData<&'a mut [u8]>,
}

impl<'a> Buffer<'a> {
    /// The buffer of a walk from [`begin`], and where the walk stands.
    /// Panics if the walk was not begun on these cells
    /// ([`BufferedWalk::check`]) or its moves are not 24.
    fn of(walk: BufferedWalk<'a, u8>) -> (Buffer<'a>, &'a mut PausedWalk) {
        Buffer::of_kernel::<Scaled3d>(walk)
    }

    /// [`Buffer::of`] a walk begun by the kernel `G`.
    fn of_kernel<G: 'static>(walk: BufferedWalk<'a, u8>) -> (Buffer<'a>, &'a mut PausedWalk) {
        walk.check::<G>();
        assert_eq!(walk.offsets.count(), K, "{K} moves");
        let BufferedWalk { cells, offsets, progress, stop_when_doomed } = walk;
        // SAFETY: the cells are a buffer of the offsets' layout, at least
        // its length, the walk stands on a board cell of it (all checked
        // above), and only its steps write to the cells.
        let buffer = unsafe {
            Buffer::from_raw(
                cells.cells_mut(),
                (offsets.rows(), offsets.vectors()),
                offsets.phase_mask(),
                stop_when_doomed,
            )
        };
        (buffer, progress)
    }

    /// The view of `cells`.
    ///
    /// # Safety
    /// `cells` is a buffer of the layout `table` (24 moves a row, rows by
    /// `phase_mask`) comes from, at least its length, walked on by this
    /// kernel only; `vectors` are the table's moves.
    unsafe fn from_raw(
        cells: &'a mut [u8],
        (table, vectors): (&'a [isize], &'a [i32]),
        phase_mask: usize,
        stop_when_doomed: bool,
    ) -> Buffer<'a> {
        let base = cells.as_mut_ptr();
        Buffer { base, len: cells.len(), table, vectors, phase_mask, stop_when_doomed, cells: PhantomData }
    }

    /// The offsets of the moves from `cur`, by its phase.
    #[inline(always)]
    fn row(&self, cur: usize) -> &'a [isize; K] {
        let Ok(row) = <&[isize; K]>::try_from(crate::layout::phase_row(self.table, self.phase_mask, K, cur)) else {
            unreachable!("a row holds K offsets")
        };
        row
    }

    /// The end of a step from `cur` whose least key is `least`: its move
    /// index and whether it is low enough to doom the walk, or `None` when
    /// every neighbour is blocked. Returns the next cell, now blocked, or
    /// `None` when the walk is stuck or doomed.
    ///
    /// # Safety
    /// As for [`Stepper::step`], with the neighbours' decrements done.
    #[inline(always)]
    unsafe fn take(&self, cur: usize, least: Option<(usize, bool)>, forced: &mut u32) -> Option<usize> {
        // SAFETY: the caller's; the row is `cur`'s.
        unsafe { self.take_by(self.row(cur), cur, least, forced) }
    }

    /// [`Buffer::take`] with `cur`'s offsets `row` at hand: a row-major
    /// buffer has one row, which its steppers keep (the phase's lookup and
    /// its slice checks were 10 of about 121 instructions a step).
    ///
    /// # Safety
    /// As for [`Buffer::take`]; `row` is `self.row(cur)`.
    #[inline(always)]
    unsafe fn take_by(
        &self,
        row: &[isize; K],
        cur: usize,
        least: Option<(usize, bool)>,
        forced: &mut u32,
    ) -> Option<usize> {
        let (base, len) = (self.base, self.len);
        let (k, low) = least?;
        debug_assert_eq!(row, self.row(cur));
        let next = cur.wrapping_add_signed(row[k]);
        if self.stop_when_doomed && low {
            // SAFETY: no pointer writes while this view lives.
            let view = unsafe { std::slice::from_raw_parts(base, len) };
            // SAFETY: `cur` is a board cell, the table the layout's.
            if unsafe { doomed(view, |d| d / SCALE, (self.table, self.phase_mask, K), cur, next, forced) } {
                return None;
            }
        }
        debug_assert!(next < len);
        // SAFETY: `next` is a board cell (the least key is an open one).
        unsafe { *base.add(next) = BLOCKED };
        Some(next)
    }
}

/// The scalar scan's stepper: a pointer per (phase, move), so that a
/// neighbour's address needs no addition. Two of them advance together
/// through [`Stepper`] ((2,1) 3D N=140: about 19.5 ns a step alone, 15.2
/// in a pair).
pub(crate) struct Pointers<'a> {
    buffer: Buffer<'a>,
    /// `base + offset` per (phase, move): outside the buffer for negative
    /// offsets, which `wrapping_offset` allows; `cur` is added before any
    /// access, and that lands inside (the layout's invariant, see walk.rs).
    pointers: Vec<*mut u8>,
}

impl<'a> Pointers<'a> {
    /// The stepper of `buffer`.
    fn new(buffer: Buffer<'a>) -> Pointers<'a> {
        let pointers = buffer.table.iter().map(|&o| buffer.base.wrapping_offset(o)).collect();
        Pointers { buffer, pointers }
    }
}

impl Pointers<'_> {
    /// The moves' vectors, 3 a move, in the offsets' order.
    fn vectors(&self) -> &[i32] {
        self.buffer.vectors
    }

    /// Takes a degree from each neighbour of `cur` and returns the least
    /// of their keys, `key(scaled value before the decrement, move index)`:
    /// the scan rule W's step and W+'s ([`plus`]) share.
    ///
    /// # Safety
    /// As for [`Stepper::step`].
    #[inline(always)]
    unsafe fn least(&self, cur: usize, key: impl Fn(u8, usize) -> u64) -> u64 {
        let (base, len) = (self.buffer.base, self.buffer.len);
        let row = (cur & self.buffer.phase_mask) * K;
        let Ok(row_pointers) = <&[*mut u8; K]>::try_from(&self.pointers[row..row + K]) else {
            unreachable!("a row holds K pointers")
        };
        let mut chains = [u64::MAX; MINIMA_CHAINS];
        for round in 0..K / MINIMA_CHAINS {
            for (j, chain) in chains.iter_mut().enumerate() {
                let k = round * MINIMA_CHAINS + j;
                let p = row_pointers[k].wrapping_add(cur);
                debug_assert!((p as usize).wrapping_sub(base as usize) < len);
                // SAFETY: `p` is a neighbour of the board cell `cur`, inside
                // the buffer by the layout's invariant.
                let b = unsafe { *p };
                // SAFETY: as above.
                unsafe { *p = b.wrapping_sub(SCALE) };
                *chain = (*chain).min(key(b, k));
            }
        }
        tree_min(chains)
    }
}

// SAFETY: the offsets are of the buffer's layout (`Buffer::of` checked,
// or `from_raw`'s caller proved); a step from a board cell reads and writes
// its neighbours, inside the buffer, and returns an open cell, a board cell.
unsafe impl Stepper for Pointers<'_> {
    type Key = u64;

    #[inline(always)]
    unsafe fn scan(&self, cur: usize) -> u64 {
        // SAFETY: the caller's.
        unsafe { self.least(cur, |b, k| (u64::from(b) << SHIFT) + k as u64) }
    }

    #[inline(always)]
    unsafe fn take(&mut self, cur: usize, best: u64, forced: &mut u32) -> Option<usize> {
        let least = (best < BLOCKED_KEY).then_some(((best & MOVE_MASK) as usize, best < LOW_KEY));
        // SAFETY: the caller's; the least key is `cur`'s.
        unsafe { self.buffer.take(cur, least, forced) }
    }
}
