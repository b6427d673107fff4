//! The keyed kernel against the generic one, and the doom cut against
//! walks run to the end.

use super::generic::walk_with;
use super::keyed::KEY_W;
use super::*;
use crate::board::Board;
use crate::layout::{BoardCell, Layout, MoveTable, Padded};
use crate::moves::Moves;
use crate::walk::cpu::Cpu;
use crate::walk::select::{self, Kernels};

/// One walk's inputs, rotated by `rotation` like an aw attempt.
struct Case {
    layout: Layout,
    /// Rows of offsets, one per phase of the walks' layout, and the vectors.
    table: MoveTable,
    pristine: Padded<u8>,
    cells: u64,
    /// The kernels this configuration's walks run on.
    kernels: Kernels,
}

impl Case {
    /// The case on the layout the runner gives it on this CPU.
    fn new(rule: &[u32], sides: &[u32], rotation: usize) -> Case {
        let (board, moves) = (Board::new(sides).unwrap(), Moves::from_rule(rule, sides.len()).unwrap());
        Case::with_tiles(rule, sides, rotation, select::walk_tile_bits(&board, &moves, Cpu::detect()))
    }

    /// The case on the layout of [`Layout::for_walks`]: tiled in 3D.
    fn tiled(rule: &[u32], sides: &[u32], rotation: usize) -> Case {
        Case::with_tiles(rule, sides, rotation, crate::layout::walk_tile_bits(sides.len()))
    }

    fn with_tiles(rule: &[u32], sides: &[u32], rotation: usize, tile_bits: u32) -> Case {
        let board = Board::new(sides).unwrap();
        let moves = Moves::from_rule(rule, sides.len()).unwrap();
        let layout = Layout::with_tiles(&board, &moves, tile_bits).unwrap();
        let mut table = MoveTable::default();
        layout.rotated_moves(rotation, &mut table);
        let pristine = layout.degree_buffer::<u8>();
        let kernels = Kernels::choose(&board, &moves, Cpu::detect());
        Case { layout, table, pristine, cells: board.cells(), kernels }
    }

    fn moves(&self) -> WalkMoves<'_> {
        WalkMoves::new(&self.layout, &self.table, None)
    }

    /// (visited, path) of the dispatching walk (the keyed kernel here, or
    /// rule W's on scaled degrees).
    fn keyed(&self, start: u64, tiebreak: Tiebreak, stop_when_doomed: bool) -> (u64, Vec<usize>) {
        let kernel = self.kernels.degree_kernel(tiebreak);
        assert!(matches!(kernel, DegreeKernel::Keyed(_) | DegreeKernel::Scaled3d(_)), "{kernel:?}");
        self.on(kernel, start, stop_when_doomed)
    }

    /// (visited, path) of a walk on `kernel`.
    fn on(&self, kernel: DegreeKernel, start: u64, stop_when_doomed: bool) -> (u64, Vec<usize>) {
        let (mut deg, mut path, mut xy) = (self.pristine.clone(), Vec::new(), vec![0; self.layout.sides().len()]);
        let start = self.layout.board_cell(start);
        let mut rng = Rng::new(0);
        let moves = self.moves();
        let visited = walk(&mut deg, &moves, start, kernel, &mut rng, &mut xy, Some(&mut path), stop_when_doomed);
        (visited, path)
    }

    /// (visited, path) of the generic kernel, which never stops early.
    fn generic(&self, start: u64, plus: bool) -> (u64, Vec<usize>) {
        let (mut deg, mut path, mut xy) = (self.pristine.clone(), Vec::new(), vec![0; self.layout.sides().len()]);
        let padded = self.layout.padded(start);
        self.layout.coords(padded, &mut xy);
        let mut rng = Rng::new(0);
        let moves = self.moves();
        // SAFETY: the generic kernel below keeps the buffer walkable.
        let a = (unsafe { deg.cells_mut() }, &moves, padded, &mut rng, &mut xy[..], Some(&mut path));
        let visited = if plus {
            // SAFETY: the case's buffer, its layout's offsets and a padded board cell.
            unsafe { walk_with::<u8, true, false, true, false>(a) }
        } else {
            // SAFETY: the case's buffer, its layout's offsets and a padded board cell.
            unsafe { walk_with::<u8, false, false, true, false>(a) }
        };
        (visited, path)
    }
}

/// (visited, path) of a W+ walk on keyed cells (2D, 8 moves).
fn distance_cells_walk(case: &Case, start: u64, stop_when_doomed: bool) -> (u64, Vec<usize>) {
    let mut cells = distance_cells::starting_cells(&case.layout, &case.pristine);
    let mut path = Vec::new();
    let start = case.layout.board_cell(start);
    let visited = distance_cells::walk(&mut cells, &case.table, start, Some(&mut path), stop_when_doomed);
    (visited, path)
}

/// Walks checked against the generic kernel, by how they ended.
#[derive(Debug, Default)]
struct Tally {
    walks: u32,
    tours: u32,
    stopped_early: u32,
}

impl Tally {
    /// Checks a kernel's walk of `case` from `start`, made by `walk(stop
    /// when doomed)` as (visited, path): run to its end, it takes the
    /// generic kernel's path (W+ if `plus`); cut by the doom check, it is a
    /// prefix of that path and no shorter when the full walk is a tour.
    fn check(&mut self, case: &Case, start: u64, plus: bool, label: &str, walk: impl Fn(bool) -> (u64, Vec<usize>)) {
        let full = walk(false);
        assert_eq!(full, case.generic(start, plus), "{label}");
        let (visited, path) = walk(true);
        assert!(visited <= full.0 && path[..] == full.1[..path.len()], "{label}");
        assert_eq!(visited == case.cells, full.0 == case.cells, "{label}: a tour was cut short");
        self.walks += 1;
        self.tours += (full.0 == case.cells) as u32;
        self.stopped_early += (visited < full.0) as u32;
    }

    /// The test means something only if both kinds of walk occur.
    fn assert_at_least(&self, tours: u32, stopped_early: u32) {
        assert!(self.tours > tours && self.stopped_early > stopped_early, "{self:?}");
    }
}

/// 1D to 4D boards (8, 24 and 48 moves: both unrolled shapes and the
/// general one), square and not, for several leapers.
fn cases() -> Vec<(Vec<u32>, Vec<u32>)> {
    let mut out = Vec::new();
    for rule in [vec![2, 1], vec![3, 2], vec![4, 1], vec![1, 1]] {
        for sides in [[5, 5], [6, 7], [8, 8], [12, 9], [17, 17], [30, 30]] {
            out.push((rule.clone(), sides.to_vec()));
        }
    }
    for rule in [vec![2, 1], vec![1, 2, 2], vec![3, 1]] {
        for sides in [[4, 4, 4], [5, 6, 4], [8, 8, 8], [11, 9, 10]] {
            out.push((rule.clone(), sides.to_vec()));
        }
    }
    out.push((vec![2, 1], vec![4, 4, 4, 4]));
    out.push((vec![2, 1], vec![5, 4, 6, 5]));
    out.push((vec![2], vec![9]));
    out
}

/// The cases of [`cases`] whose walks take the 3D scaled-degree kernels
/// (24 moves in 3D), with their boards and moves.
fn scaled_3d_cases() -> impl Iterator<Item = (Vec<u32>, Vec<u32>, Board, Moves)> {
    cases().into_iter().filter_map(|(rule, sides)| {
        let (board, moves) = (Board::new(&sides).unwrap(), Moves::from_rule(&rule, sides.len()).unwrap());
        w_3d_scaled::fits(&board, &moves).then_some((rule, sides, board, moves))
    })
}

#[test]
fn the_keyed_walk_takes_the_generic_walks_path_and_the_doom_cut_never_stops_a_tour() {
    let mut tally = Tally::default();
    for (rule, sides) in cases() {
        for rotation in [0, 1, 3] {
            let case = Case::new(&rule, &sides, rotation);
            // Every start on small boards, a spread of them on larger ones.
            let step = (case.cells / 60).max(1) as usize;
            for start in (0..case.cells).step_by(step) {
                for (tiebreak, plus) in [(Tiebreak::First, false), (Tiebreak::Distance, true)] {
                    let label = format!("rule {rule:?} board {sides:?} rotation {rotation} start {start} {tiebreak:?}");
                    tally.check(&case, start, plus, &label, |stop| case.keyed(start, tiebreak, stop));
                }
            }
        }
    }
    tally.assert_at_least(100, 100);
}

#[test]
fn rule_w_on_3d_boards_takes_the_generic_walks_path_on_every_scan() {
    let mut tally = Tally::default();
    let scans = w_3d_scaled::Scan::all(Cpu::detect());
    for cpu in Cpu::feature_sets() {
        let fastest = w_3d_scaled::Scan::fastest(cpu);
        assert!(w_3d_scaled::Scan::all(cpu).contains(&fastest), "{cpu:?}: {fastest:?}");
    }
    for (rule, sides, ..) in scaled_3d_cases() {
        for rotation in [0, 2, 5] {
            let case = Case::tiled(&rule, &sides, rotation);
            let step = (case.cells / 40).max(1) as usize;
            for start in (0..case.cells).step_by(step) {
                for &scan in &scans {
                    let label = format!("rule {rule:?} board {sides:?} rotation {rotation} start {start} {scan:?}");
                    tally.check(&case, start, false, &label, |stop| {
                        case.on(
                            DegreeKernel::Scaled3d(w_3d_scaled::Rule::W(w_3d_scaled::ScanChoice::Fixed(scan))),
                            start,
                            stop,
                        )
                    });
                }
            }
        }
    }
    tally.assert_at_least(100, 20);
}

#[test]
fn a_doomed_walk_stops_at_the_second_stranded_cell() {
    // Rule W fails from some starts of the 7x7 knight's board; at least one
    // of those walks strands two cells before it ends.
    let case = Case::new(&[2, 1], &[7, 7], 0);
    let mut shorter = 0;
    for start in 0..case.cells {
        let full = case.keyed(start, Tiebreak::First, false);
        let cut = case.keyed(start, Tiebreak::First, true);
        if full.0 < case.cells {
            shorter += (cut.0 < full.0) as u32;
        }
    }
    assert!(shorter > 0, "no failed W walk on 7x7 was recognised as doomed");
}

#[test]
fn w_plus_on_keyed_cells_takes_the_generic_walks_path_and_the_doom_cut_never_stops_a_tour() {
    let mut tally = Tally::default();
    for (rule, sides) in cases().into_iter().filter(|(rule, sides)| rule.len() == 2 && sides.len() == 2) {
        let (board, moves) = (Board::new(&sides).unwrap(), Moves::from_rule(&rule, 2).unwrap());
        if moves.len() != 8 {
            continue;
        }
        assert!(distance_cells::fits(&board, &moves), "rule {rule:?} board {sides:?}");
        for rotation in [0, 1, 3, 6] {
            let case = Case::new(&rule, &sides, rotation);
            let step = (case.cells / 60).max(1) as usize;
            for start in (0..case.cells).step_by(step) {
                let label = format!("rule {rule:?} board {sides:?} rotation {rotation} start {start}");
                tally.check(&case, start, true, &label, |stop| distance_cells_walk(&case, start, stop));
            }
        }
    }
    tally.assert_at_least(100, 50);
}

#[test]
fn keyed_cells_need_2d_eight_moves_and_room_for_the_distance() {
    let fits = |rule: &[u32], sides: &[u32]| {
        distance_cells::fits(&Board::new(sides).unwrap(), &Moves::from_rule(rule, sides.len()).unwrap())
    };
    assert!(fits(&[3, 2], &[400, 400]) && fits(&[2, 1], &[2897, 2897]));
    // (n - 1)^2 summed over both axes must stay below 2^24.
    assert!(!fits(&[2, 1], &[2898, 2898]) && !fits(&[2, 1], &[5000, 3]));
    // 3D, a rule of more than 8 moves in 2D, a 1D board.
    assert!(!fits(&[2, 1], &[6, 6, 6]) && !fits(&[2], &[9]));
}

/// Two walks of a pair kernel, advanced together until one ends.
type Pair<C, Kind> = fn(BufferedWalk<'_, C, Kind>, BufferedWalk<'_, C, Kind>) -> [bool; 2];

/// A pair kernel and its lone twin, for [`walks_in_pairs_are_the_walks_made_alone`].
struct PairKernel<C, Kind> {
    starting: Padded<C, Kind>,
    begin: fn(&mut Padded<C, Kind>, BoardCell) -> PausedWalk,
    run: fn(BufferedWalk<'_, C, Kind>),
    pair: Pair<C, Kind>,
}

fn buffered<'a, C, Kind>(
    case: &'a Case,
    cells: &'a mut Padded<C, Kind>,
    progress: &'a mut PausedWalk,
    stop_when_doomed: bool,
) -> BufferedWalk<'a, C, Kind> {
    BufferedWalk { cells, offsets: &case.table, progress, stop_when_doomed }
}

/// Each walk of `case` (every third start) is advanced in pairs with a
/// string of partners, each of which ends somewhere along it, so it
/// changes partner (and finishes alone after three) at many steps: its
/// length and the cells it leaves must be those of the walk `kernel`
/// makes alone, doom cut on or off, in either lane. Returns (walks,
/// changes of partner).
fn walks_in_pairs_are_the_walks_made_alone<C: Copy + PartialEq, Kind>(
    case: &Case,
    kernel: &PairKernel<C, Kind>,
) -> (u32, u32) {
    let (mut walks, mut resumed) = (0, 0);
    let starts: Vec<BoardCell> = (0..case.cells).step_by(3).map(|s| case.layout.board_cell(s)).collect();
    for stop in [false, true] {
        for (i, &start) in starts.iter().enumerate() {
            let mut alone = kernel.starting.clone();
            let mut progress = (kernel.begin)(&mut alone, start);
            (kernel.run)(buffered(case, &mut alone, &mut progress, stop));
            let visited = progress.visited();

            let mut cells = kernel.starting.clone();
            let mut progress = (kernel.begin)(&mut cells, start);
            let mut partners = starts.iter().cycle().skip(i + 1).take(3);
            let mut ended = false;
            while !ended {
                let Some(&partner) = partners.next() else {
                    (kernel.run)(buffered(case, &mut cells, &mut progress, stop));
                    break;
                };
                let mut other = kernel.starting.clone();
                let mut theirs = (kernel.begin)(&mut other, partner);
                let (mine, theirs) =
                    (buffered(case, &mut cells, &mut progress, stop), buffered(case, &mut other, &mut theirs, !stop));
                ended = if i % 2 == 0 { (kernel.pair)(mine, theirs)[0] } else { (kernel.pair)(theirs, mine)[1] };
                resumed += u32::from(!ended);
            }
            let label = format!("{:?} start {start:?} stop {stop}", case.layout.sides());
            assert_eq!(progress.visited(), visited, "{label}");
            assert!(cells.as_slice() == alone.as_slice(), "{label}: the cells left differ");
            walks += 1;
        }
    }
    (walks, resumed)
}

#[test]
fn w_plus_walks_in_pairs_are_the_walks_made_alone() {
    let (mut walks, mut resumed) = (0, 0);
    for (rule, sides) in cases().into_iter().filter(|(rule, sides)| rule.len() == 2 && sides.len() == 2) {
        if Moves::from_rule(&rule, 2).unwrap().len() != 8 {
            continue;
        }
        for rotation in [0, 5] {
            let case = Case::new(&rule, &sides, rotation);
            let kernel = PairKernel {
                starting: distance_cells::starting_cells(&case.layout, &case.pristine),
                begin: distance_cells::begin,
                run: |l| distance_cells::run(l, None),
                pair: |a, b| run_pair(distance_cells::Pointers::of(a), distance_cells::Pointers::of(b)),
            };
            let (w, r) = walks_in_pairs_are_the_walks_made_alone(&case, &kernel);
            (walks, resumed) = (walks + w, resumed + r);
        }
    }
    assert!(walks > 1000 && resumed > 1000, "{walks} walks, {resumed} changes of partner");
}

#[test]
fn w_walks_on_3d_boards_in_pairs_are_the_walks_made_alone() {
    let (mut walks, mut resumed) = (0, 0);
    for (rule, sides, ..) in scaled_3d_cases() {
        for rotation in [0, 7] {
            let case = Case::tiled(&rule, &sides, rotation);
            assert_eq!(case.layout.phase_mask(), 63, "3D walks run on tiles");
            for scan in 0..w_3d_scaled::Scan::all(Cpu::detect()).len() {
                let kernel = match scan {
                    0 => scaled_pairs::<0>(&case),
                    1 => scaled_pairs::<1>(&case),
                    _ => scaled_pairs::<2>(&case),
                };
                let (w, r) = walks_in_pairs_are_the_walks_made_alone(&case, &kernel);
                (walks, resumed) = (walks + w, resumed + r);
            }
        }
    }
    // Most walks here are tours, which end with their partner; still some
    // hundred walks change partner.
    assert!(walks > 5000 && resumed > 100, "{walks} walks, {resumed} changes of partner");
}

/// The 3D scaled-degree kernel on the `S`th scan this CPU runs
/// ([`w_3d_scaled::Scan::all`]): its walks alone and in pairs.
fn scaled_pairs<const S: usize>(case: &Case) -> PairKernel<u8, ()> {
    fn scan<const S: usize>() -> w_3d_scaled::Scan {
        w_3d_scaled::Scan::all(Cpu::detect())[S]
    }
    PairKernel {
        starting: case.pristine.clone(),
        begin: w_3d_scaled::begin,
        run: |l| w_3d_scaled::run(scan::<S>(), l, None),
        pair: |a, b| w_3d_scaled::pair(scan::<S>(), a, b),
    }
}

/// Every window scan this CPU has, the one walks choose first: the SSE
/// step also where the VBMI one is chosen, so a VBMI machine tests both.
fn window_scans(test: &str) -> Vec<w_3d_scaled::Scan> {
    use w_3d_scaled::Scan;
    let cpu = Cpu::detect();
    let mut out: Vec<Scan> = cpu::Avx512Vbmi::new(cpu).map(Scan::Windows).into_iter().collect();
    out.extend(cpu::Sse41::new(cpu).map(Scan::SseWindows));
    if out.is_empty() {
        println!("{test}: skipped, this CPU (or KSWEEP_SIMD) has no SSE4.1");
    }
    out
}

#[test]
fn w_and_w_plus_on_row_major_3d_boards_take_the_generic_walks_path_on_the_window_scans() {
    let scans = window_scans("window scans");
    let Some(&chosen) = scans.first() else { return };
    let mut tally = Tally::default();
    let mut walks = vec![0; scans.len()];
    for (rule, sides, board, moves) in scaled_3d_cases() {
        let scan = w_3d_scaled::window_scan(&board, &moves, Cpu::detect());
        assert_eq!(scan, Some(chosen), "rule {rule:?} board {sides:?}");
        for rotation in [0, 2, 5, 11] {
            let case = Case::new(&rule, &sides, rotation);
            assert_eq!(case.layout.phase_mask(), 0, "the window scans' boards are row-major");
            let w = |scan| DegreeKernel::Scaled3d(w_3d_scaled::Rule::W(w_3d_scaled::ScanChoice::Fixed(scan)));
            assert_eq!(case.kernels.degree_kernel(Tiebreak::First), w(chosen));
            let chosen_plus = DegreeKernel::Scaled3d(w_3d_scaled::Rule::Plus(Some(chosen)));
            assert_eq!(case.kernels.degree_kernel(Tiebreak::Distance), chosen_plus);
            let plus = |scan| DegreeKernel::Scaled3d(w_3d_scaled::Rule::Plus(Some(scan)));
            let step = (case.cells / 40).max(1) as usize;
            for start in (0..case.cells).step_by(step) {
                let label = format!("rule {rule:?} board {sides:?} rotation {rotation} start {start}");
                for (&scan, walks) in scans.iter().zip(&mut walks) {
                    for (kernel, is_plus) in [(w(scan), false), (plus(scan), true)] {
                        tally.check(&case, start, is_plus, &format!("{label} {kernel:?}"), |stop| {
                            case.on(kernel, start, stop)
                        });
                    }
                    *walks += 1;
                }
            }
        }
    }
    tally.assert_at_least(100, 20);
    assert!(walks.iter().all(|&w| w > 500), "walks a scan: {walks:?}");
}

#[test]
fn w_walks_on_row_major_3d_boards_in_pairs_on_the_window_scans_are_the_walks_made_alone() {
    thread_local! {
        /// The scan under test: the pair kernel's functions capture nothing.
        static SCAN: std::cell::Cell<Option<w_3d_scaled::Scan>> = const { std::cell::Cell::new(None) };
    }
    fn scan() -> w_3d_scaled::Scan {
        SCAN.get().expect("set for the case")
    }
    for chosen in window_scans("window pairs") {
        SCAN.set(Some(chosen));
        let (mut walks, mut resumed) = (0, 0);
        for (rule, sides, ..) in scaled_3d_cases() {
            for rotation in [0, 7] {
                let case = Case::new(&rule, &sides, rotation);
                let kernel = PairKernel {
                    starting: case.pristine.clone(),
                    begin: w_3d_scaled::begin,
                    run: |l| w_3d_scaled::run(scan(), l, None),
                    pair: |a, b| w_3d_scaled::pair(scan(), a, b),
                };
                let (w, r) = walks_in_pairs_are_the_walks_made_alone(&case, &kernel);
                (walks, resumed) = (walks + w, resumed + r);
            }
        }
        assert!(walks > 5000 && resumed > 100, "{chosen:?}: {walks} walks, {resumed} changes of partner");
    }
}

#[test]
fn w_plus_walks_on_the_row_windows_in_pairs_are_the_walks_made_alone() {
    use kernel::GroupWalk;
    use w_3d_scaled::{PlusShared, ScaledPlus3d};
    // Each window scan this CPU has: the SSE one is chosen on a CPU capped
    // at SSE4.1.
    let cpus: Vec<Cpu> =
        [Cpu::detect(), Cpu::detect().capped(cpu::Level::Sse41)].into_iter().filter(|c| c.has_sse41()).collect();
    if cpus.is_empty() {
        println!("W+ window pairs: skipped, this CPU (or KSWEEP_SIMD) has no SSE4.1");
    }
    thread_local! {
        /// The case's shared state: the pair kernel's functions capture
        /// nothing.
        static SHARED: std::cell::RefCell<Option<PlusShared>> = const { std::cell::RefCell::new(None) };
    }
    fn with<T>(f: impl FnOnce(&PlusShared) -> T) -> T {
        SHARED.with_borrow(|s| f(s.as_ref().expect("set for the case")))
    }
    for cpu in cpus {
        let (mut walks, mut resumed) = (0, 0);
        for (rule, sides, _, moves) in scaled_3d_cases() {
            for rotation in [0, 5, 7, 13] {
                let case = Case::new(&rule, &sides, rotation);
                assert_eq!(case.kernels.w_plus(), Some(select::GroupKernel::WPlusScaled3d));
                let shared = ScaledPlus3d::shared(&case.layout, &moves, &case.pristine, cpu);
                SHARED.set(Some(shared));
                let kernel = PairKernel {
                    starting: case.pristine.clone(),
                    begin: ScaledPlus3d::begin,
                    run: |mut l| {
                        with(|s| ScaledPlus3d::run(s, std::slice::from_mut(&mut l)));
                    },
                    pair: |a, b| {
                        let ended = with(|s| ScaledPlus3d::run(s, &mut [a, b]));
                        [ended[0], ended[1]]
                    },
                };
                let (w, r) = walks_in_pairs_are_the_walks_made_alone(&case, &kernel);
                (walks, resumed) = (walks + w, resumed + r);
                // The lone walk is the degree kernel's (the generic one's path).
                for start in (0..case.cells).step_by(7) {
                    let mut cells = case.pristine.clone();
                    let mut path = Vec::new();
                    let walk = with(|s| {
                        ScaledPlus3d::walk(
                            s,
                            (&mut cells, &case.table),
                            case.layout.board_cell(start),
                            Some(&mut path),
                            false,
                        )
                    });
                    assert_eq!((walk, path), case.generic(start, true), "rule {rule:?} board {sides:?} start {start}");
                }
            }
        }
        assert!(walks > 5000 && resumed > 100, "{cpu:?}: {walks} walks, {resumed} changes of partner");
    }
}

#[test]
#[cfg(target_arch = "x86_64")]
fn the_window_scan_takes_moves_whose_rows_fit_eight_bytes_and_boards_whose_rows_do_not_overlap() {
    let fits = |rule: &[u32], sides: &[u32]| {
        w_3d_scaled::windows::fits(&Board::new(sides).unwrap(), &Moves::from_rule(rule, sides.len()).unwrap())
    };
    // 16 rows ((a,b,0)) and 12 ((a,a,b)), a last component at most 3 long.
    assert!(fits(&[2, 1], &[140, 140, 140]) && fits(&[1, 2, 2], &[100, 100, 100]) && fits(&[3, 2], &[9, 9, 9]));
    // Up to 4 Mi padded cells: 161^3 + 64 slack is under, 162^3 over.
    assert!(fits(&[2, 1], &[157, 157, 157]) && !fits(&[2, 1], &[158, 158, 158]));
    assert!(!fits(&[1, 2, 2], &[300, 300, 300]) && !fits(&[2, 1], &[400, 100, 100]));
    assert!(fits(&[3, 1], &[4, 4, 2]), "a padded last side of 2 + 6 = 8: rows 8 bytes apart");
    assert!(!fits(&[2, 1], &[4, 4, 3]), "a padded last side of 3 + 4 = 7: windows would overlap");
    assert!(!fits(&[4, 1], &[20, 20, 20]), "moves 4 either way span 9 bytes of a row");
    // Not 24 moves in 3D: 48, or 8 in 2D, or 4D.
    assert!(fits(&[2, 1, 1], &[9, 9, 9]), "(a,a,b): 24 moves in 12 rows");
    assert!(!fits(&[3, 2, 1], &[9, 9, 9]) && !fits(&[2, 1], &[9, 9]) && !fits(&[2, 1], &[6, 6, 6, 6]));
    // The layout follows: row-major where the scan runs, tiled elsewhere.
    let cpu = Cpu::detect();
    for (rule, sides) in [(vec![2, 1], vec![8, 8, 8]), (vec![2, 1], vec![4, 4, 3]), (vec![2, 1], vec![8, 8])] {
        let (board, moves) = (Board::new(&sides).unwrap(), Moves::from_rule(&rule, sides.len()).unwrap());
        let windows = w_3d_scaled::window_scan(&board, &moves, cpu).is_some();
        let expected = if windows { 0 } else { crate::layout::walk_tile_bits(sides.len()) };
        assert_eq!(select::walk_tile_bits(&board, &moves, cpu), expected, "{sides:?}");
        assert_eq!(windows, cpu.has_sse41() && fits(&rule, &sides), "{sides:?}");
    }
}

/// The 2D cases whose walks run on [`sse_windows`]'s lanes, with their plans:
/// W+ on 16-bit cells, W on byte degrees. Empty where this CPU lacks
/// SSE4.1 (or `KSWEEP_NO_SIMD` is set): the plans refuse to be made there.
fn sse_windows_cases(rotations: &[usize]) -> Vec<(Case, sse_windows::WPlusTables, sse_windows::w_bytes::WTables)> {
    let cpu = Cpu::detect();
    let mut out = Vec::new();
    for (rule, sides) in cases().into_iter().filter(|(rule, sides)| rule.len() == 2 && sides.len() == 2) {
        let (board, moves) = (Board::new(&sides).unwrap(), Moves::from_rule(&rule, 2).unwrap());
        if !sse_windows::windows_fit(&board, &moves) {
            continue;
        }
        assert!(sse_windows::w_bytes::windows_fit(&board, &moves), "{rule:?} {sides:?}");
        assert_eq!(sse_windows::fits(&board, &moves, cpu), cpu.has_sse41(), "{rule:?} {sides:?}");
        for &rotation in rotations {
            let case = Case::new(&rule, &sides, rotation);
            let plan = sse_windows::WPlusTables::new(&case.layout, &moves, &case.pristine, cpu);
            let bytes = sse_windows::w_bytes::WTables::new(&case.layout, &moves, cpu);
            match (plan, bytes) {
                (Some(plan), Some(bytes)) if cpu.has_sse41() => out.push((case, plan, bytes)),
                (None, None) if !cpu.has_sse41() => {}
                _ => panic!("{rule:?} {sides:?}: plans made where {cpu:?} cannot run them, or not where it can"),
            }
        }
    }
    out
}

#[test]
fn w_plus_on_16_bit_cells_and_w_on_byte_lanes_take_the_generic_walks_path_and_the_doom_cut_never_stops_a_tour() {
    let mut tally = Tally::default();
    let cases = sse_windows_cases(&[0, 1, 3, 6]);
    // (2,1) and (3,2) on every board here; (4,1)'s row moves are 9 cells
    // apart. None without SSE4.1 (see `sse_windows_cases`).
    let sse41 = Cpu::detect().has_sse41();
    assert_eq!(cases.len(), if sse41 { 2 * 6 * 4 } else { 0 });
    if !sse41 {
        return;
    }
    fn walk_on<P: sse_windows::WindowKernel>(
        plan: &P,
        starting: &Padded<P::Cell, P::Kind>,
        case: &Case,
        start: u64,
        stop: bool,
    ) -> (u64, Vec<usize>) {
        let (mut cells, mut path) = (starting.clone(), Vec::new());
        let visited = plan.walk((&mut cells, &case.table), case.layout.board_cell(start), Some(&mut path), stop);
        (visited, path)
    }
    for (case, plan, bytes) in &cases {
        let step = (case.cells / 60).max(1) as usize;
        for start in (0..case.cells).step_by(step) {
            let label = format!("board {:?} offsets {:?} start {start}", case.layout.sides(), case.table.rows());
            tally.check(case, start, true, &format!("{label} W+"), |stop| {
                walk_on(plan, plan.starting_cells(), case, start, stop)
            });
            tally.check(case, start, false, &format!("{label} W"), |stop| {
                walk_on(bytes, &case.pristine, case, start, stop)
            });
        }
    }
    tally.assert_at_least(200, 100);
}

/// Walks of `plan` (on cells reset from `starting`) in groups of two to
/// six against the same walks alone: each walk of `case` from every third
/// cell, its partners walks in the move order `other` (another rotation
/// of the same layout's moves) that change as they end. Returns (walks,
/// changes of partner).
fn walks_together_are_the_walks_made_alone<P: sse_windows::WindowKernel>(
    plan: &P,
    starting: &Padded<P::Cell, P::Kind>,
    case: &Case,
    other: &MoveTable,
) -> (u32, u32)
where
    P::Cell: PartialEq + std::fmt::Debug,
{
    let (mut walks, mut resumed) = (0, 0);
    let starts: Vec<BoardCell> = (0..case.cells).step_by(3).map(|s| case.layout.board_cell(s)).collect();
    for stop in [false, true] {
        for (i, &start) in starts.iter().enumerate() {
            let mut alone = starting.clone();
            let visited = plan.walk((&mut alone, &case.table), start, None, stop);

            let mut cells = starting.clone();
            let mut progress = sse_windows::begin::<P>(&mut cells, start);
            let (size, mine) = (2 + i % 5, i % 6);
            let mut partners = starts.iter().cycle().skip(i + 1).take(3 * size);
            let mut ended = false;
            while !ended {
                let theirs: Vec<BoardCell> = partners.by_ref().take(size - 1).copied().collect();
                let mut other_cells: Vec<Padded<P::Cell, P::Kind>> = theirs.iter().map(|_| starting.clone()).collect();
                let mut other_progress: Vec<PausedWalk> =
                    theirs.iter().zip(&mut other_cells).map(|(&s, c)| sse_windows::begin::<P>(c, s)).collect();
                let mut group: Vec<BufferedWalk<'_, P::Cell, P::Kind>> = other_cells
                    .iter_mut()
                    .zip(&mut other_progress)
                    .map(|(cells, progress)| BufferedWalk { cells, offsets: other, progress, stop_when_doomed: !stop })
                    .collect();
                let at = mine.min(group.len());
                group.insert(at, buffered(case, &mut cells, &mut progress, stop));
                let alone_now = group.len() == 1;
                ended = plan.run(&mut group)[at];
                resumed += u32::from(!ended && !alone_now);
            }
            let label = format!("{:?} start {start:?} stop {stop} group {size}", case.layout.sides());
            assert_eq!(progress.visited(), visited, "{label}");
            assert!(cells.as_slice() == alone.as_slice(), "{label}: the cells left differ");
            walks += 1;
        }
    }
    (walks, resumed)
}

#[test]
fn walks_on_16_bit_cells_and_byte_lanes_in_groups_of_two_to_six_are_the_walks_made_alone() {
    let (mut walks, mut resumed) = ([0; 2], [0; 2]);
    let cases = sse_windows_cases(&[0, 5]);
    for pair in cases.chunks_exact(2) {
        let [(case, plan, bytes), (_, _, _)] = pair else { unreachable!() };
        // The second case's rotation, of the first case's layout (a buffer
        // and its moves must be of one layout).
        let mut other = MoveTable::default();
        case.layout.rotated_moves(5, &mut other);
        let other = &other;
        let (w, r) = walks_together_are_the_walks_made_alone(plan, plan.starting_cells(), case, other);
        (walks[0], resumed[0]) = (walks[0] + w, resumed[0] + r);
        let (w, r) = walks_together_are_the_walks_made_alone(bytes, &case.pristine, case, other);
        (walks[1], resumed[1]) = (walks[1] + w, resumed[1] + r);
    }
    // Without SSE4.1 there are no cases (see `sse_windows_cases`).
    for kernel in (0..2).filter(|_| Cpu::detect().has_sse41()) {
        assert!(walks[kernel] > 1000 && resumed[kernel] > 1000, "{walks:?} walks, {resumed:?} changes of partner");
    }
}

#[test]
fn lanes_need_a_leapers_rows_within_one_window() {
    let fits = |rule: &[u32], sides: &[u32]| {
        let (board, moves) = (Board::new(sides).unwrap(), Moves::from_rule(rule, sides.len()).unwrap());
        let fits = sse_windows::windows_fit(&board, &moves);
        assert_eq!(sse_windows::w_bytes::windows_fit(&board, &moves), fits, "{rule:?} {sides:?}");
        for cpu in Cpu::feature_sets() {
            assert_eq!(sse_windows::fits(&board, &moves, cpu), fits && cpu.has_sse41(), "{rule:?} {sides:?} {cpu:?}");
            assert_eq!(
                sse_windows::w_bytes::fits(&board, &moves, cpu),
                fits && cpu.has_sse41(),
                "{rule:?} {sides:?} {cpu:?}"
            );
        }
        assert!(!sse_windows::fits(&board, &moves, Cpu::detect().without_sse41()), "{rule:?} {sides:?}");
        fits
    };
    assert!(fits(&[3, 2], &[400, 400]) && fits(&[2, 1], &[5, 5]) && fits(&[3, 1], &[3000, 7]));
    // (4,1): two moves 8 cells apart in a row; 3D; 4 or 16 moves.
    assert!(!fits(&[4, 1], &[20, 20]) && !fits(&[2, 1], &[6, 6, 6]));
    assert!(!fits(&[1, 1], &[9, 9]) && !fits(&[2, 0], &[9, 9]));
    // Rows too narrow for the windows: (2,1)'s need 5 columns, (3,2)'s 3,
    // (3,1)'s any.
    assert!(!fits(&[2, 1], &[9, 4]) && !fits(&[3, 2], &[9, 2]));
    assert!(fits(&[3, 2], &[9, 3]) && fits(&[3, 1], &[9, 1]));
}

/// AddressSanitizer (tests/asan.sh) sees a kernel's step past its buffer
/// only where the buffer's allocation ends where its cells do: spare
/// capacity past them would be addressable, and a read of it pass
/// unseen. So every buffer the kernels walk on, as its layout or plan
/// makes it, copied, or reset into an empty one (a workspace's first
/// reset), holds exactly its cells: the padded board, and the 16-bit
/// cells' slack.
#[test]
fn the_buffers_walks_run_on_end_where_their_allocations_do() {
    fn exact<T: Copy, Kind>(label: &str, cells: &Padded<T, Kind>, len: usize) {
        assert_eq!(cells.len(), len, "{label}");
        let mut reset = Padded::default();
        reset.copy_from(cells);
        for (how, b) in [("made", cells), ("copied", &cells.clone()), ("reset", &reset)] {
            assert_eq!(b.bytes(), len * std::mem::size_of::<T>(), "{label}, {how}: spare capacity past the cells");
        }
    }
    let mut window_cells = 0;
    for (rule, sides) in cases() {
        let (board, moves) = (Board::new(&sides).unwrap(), Moves::from_rule(&rule, sides.len()).unwrap());
        let case = Case::new(&rule, &sides, 0);
        let (label, len) = (format!("rule {rule:?} board {sides:?}"), case.layout.len());
        exact(&format!("{label}: byte degrees"), &case.pristine, len);
        exact(&format!("{label}: 16-bit degrees"), &case.layout.degree_buffer::<u16>(), len);
        if distance_cells::fits(&board, &moves) {
            exact(&format!("{label}: keyed cells"), &distance_cells::starting_cells(&case.layout, &case.pristine), len);
        }
        if let Some(plan) = sse_windows::WPlusTables::new(&case.layout, &moves, &case.pristine, Cpu::detect()) {
            let with_slack = sse_windows::cell_bytes(len as u128) as usize / 2;
            exact(&format!("{label}: 16-bit cells"), plan.starting_cells(), with_slack);
            window_cells += 1;
        }
    }
    assert!(window_cells > 0 || !Cpu::detect().has_sse41(), "no 16-bit cells checked");
}

/// A walk of `case` from cell 0 on `deg`, by rule W on the keyed kernel.
fn walk_w(case: &Case, deg: &mut Padded<u8>, start: BoardCell) -> u64 {
    let (mut rng, mut xy) = (Rng::new(0), vec![0; case.layout.sides().len()]);
    let kernel = case.kernels.degree_kernel(Tiebreak::First);
    walk(deg, &case.moves(), start, kernel, &mut rng, &mut xy, None, false)
}

#[test]
#[should_panic(expected = "a buffer of the moves' layout")]
fn a_walk_refuses_a_buffer_of_another_layout() {
    // The same geometry, but another layout's buffer: refused all the same.
    let (case, other) = (Case::new(&[2, 1], &[8, 8], 0), Case::new(&[2, 1], &[8, 8], 0));
    walk_w(&case, &mut other.pristine.clone(), case.layout.board_cell(0));
}

#[test]
#[should_panic(expected = "a start of this buffer's layout")]
fn a_walk_refuses_a_start_of_another_layout() {
    let (case, other) = (Case::new(&[2, 1], &[8, 8], 0), Case::new(&[2, 1], &[5, 5], 0));
    walk_w(&case, &mut case.pristine.clone(), other.layout.board_cell(24));
}

#[test]
#[should_panic(expected = "a walk begins on a fresh buffer")]
fn a_walk_refuses_a_buffer_another_walk_left() {
    let case = Case::new(&[2, 1], &[8, 8], 0);
    let mut deg = case.pristine.clone();
    walk_w(&case, &mut deg, case.layout.board_cell(0));
    // Its copy is spent too, until reset from a fresh buffer.
    let mut copy = deg.clone();
    copy.copy_from(&case.pristine);
    assert_eq!(walk_w(&case, &mut copy, case.layout.board_cell(0)), case.cells);
    walk_w(&case, &mut deg.clone(), case.layout.board_cell(0));
}

#[test]
#[should_panic(expected = "a walk begun on these cells")]
fn a_paused_walk_goes_on_only_on_the_cells_it_was_begun_on() {
    let case = Case::new(&[3, 2], &[9, 9], 0);
    let starting = distance_cells::starting_cells(&case.layout, &case.pristine);
    let (mut mine, mut theirs) = (starting.clone(), starting.clone());
    let mut progress = distance_cells::begin(&mut mine, case.layout.board_cell(0));
    distance_cells::run(buffered(&case, &mut theirs, &mut progress, false), None);
}

#[test]
#[should_panic(expected = "a walk that has not ended")]
fn an_ended_walk_does_not_go_on() {
    let case = Case::tiled(&[2, 1], &[6, 6, 6], 0);
    let mut deg = case.pristine.clone();
    let mut progress = w_3d_scaled::begin(&mut deg, case.layout.board_cell(0));
    let scan = *w_3d_scaled::Scan::all(Cpu::detect()).last().unwrap();
    w_3d_scaled::run(scan, buffered(&case, &mut deg, &mut progress, false), None);
    w_3d_scaled::run(scan, buffered(&case, &mut deg, &mut progress, false), None);
}

#[test]
fn walks_on_degrees_take_the_keyed_kernel_where_its_keys_hold_and_the_generic_one_elsewhere() {
    let generic = |tiebreak, branch_free| DegreeKernel::Generic { tiebreak, symmetric: true, branch_free };
    let (board, moves) = (Board::new(&[8, 8]).unwrap(), Moves::from_rule(&[2, 1], 2).unwrap());
    let k = Kernels::choose(&board, &moves, Cpu::detect());
    assert_eq!(k.degree_kernel(Tiebreak::First), DegreeKernel::Keyed(KEY_W));
    assert_eq!(k.degree_kernel(Tiebreak::Distance), DegreeKernel::Keyed(KEY_PACKED));
    assert_eq!(k.degree_kernel(Tiebreak::Random), generic(Tiebreak::Random, false));
    assert_eq!(k.degree_kernel(Tiebreak::DistanceRandom), generic(Tiebreak::DistanceRandom, false));
    // 256 moves in 8D: 16-bit degrees, and rule W picks branch-free.
    let (board, moves) = (Board::new(&[3; 8]).unwrap(), Moves::from_rule(&[1; 8], 8).unwrap());
    let k = Kernels::choose(&board, &moves, Cpu::detect());
    assert_eq!(k.degree_kernel(Tiebreak::First), generic(Tiebreak::First, true));
    assert_eq!(k.degree_kernel(Tiebreak::Distance), generic(Tiebreak::Distance, true));
}
