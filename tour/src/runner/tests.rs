//! The runner's batches and kernel choices: tasks run together give the
//! figures of tasks run alone, on every CPU feature set.

use super::{Runner, Task, TaskOptions, TaskResult, MAX_TASKS_AT_ONCE};
use crate::board::Board;
use crate::config::{format_bytes, Configuration};
use crate::method::Method;
use crate::moves::Moves;
use crate::walk::cpu::{Cpu, NO_SIMD_VAR};
use crate::walk::kernel::WALKS_AT_ONCE;
use crate::walk::select::{GroupKernel, Kernels};

#[test]
fn batches_balance_threads_and_keep_the_walks_partnered() {
    // One thread takes every task at once, up to the cap.
    assert_eq!(Runner::tasks_at_once(30, 1), 30);
    assert_eq!(Runner::tasks_at_once(1000, 1), MAX_TASKS_AT_ONCE);
    // Several leave each thread about four batches, two tasks at least.
    assert_eq!(Runner::tasks_at_once(100, 2), 12);
    assert_eq!(Runner::tasks_at_once(10_000, 16), MAX_TASKS_AT_ONCE);
    assert_eq!(Runner::tasks_at_once(40, 16), 2);
    // Too few to give every thread two: one at a time.
    assert_eq!(Runner::tasks_at_once(20, 16), 1);
}

fn config(rule: &[u32], sides: &[u32]) -> Configuration {
    Configuration::new(Board::new(sides).unwrap(), Moves::from_rule(rule, sides.len()).unwrap()).unwrap()
}

#[test]
fn without_simd_the_solver_chooses_the_scalar_kernels() {
    // `KSWEEP_NO_SIMD=1 cargo test` runs the scalar kernels everywhere.
    if std::env::var_os(NO_SIMD_VAR).is_some_and(|v| !v.is_empty()) {
        let runner = Runner::new(config(&[3, 2], &[30, 30])).unwrap();
        assert_eq!(runner.kernels().w_plus(), Some(GroupKernel::WPlusDistanceCells));
        assert_eq!(runner.kernels().w_grouped(), None);
    }
}

#[test]
fn without_sse41_the_scalar_kernels_are_chosen() {
    let c = config(&[3, 2], &[30, 30]);
    let scalar = Kernels::choose(c.board(), c.moves(), Cpu::detect().without_sse41());
    assert_eq!(scalar.w_plus(), Some(GroupKernel::WPlusDistanceCells));
    assert_eq!((scalar.w_grouped(), scalar.walks_at_once()), (None, 2));
    // 3D: W+ walks pair on the row windows, which need SSE4.1.
    let c = config(&[2, 1], &[6, 6, 6]);
    for cpu in Cpu::feature_sets() {
        let k = Kernels::choose(c.board(), c.moves(), cpu);
        let plus = cpu.has_sse41().then_some(GroupKernel::WPlusScaled3d);
        assert_eq!((k.w_plus(), k.w_grouped()), (plus, Some(GroupKernel::WScaled3d)), "{cpu:?}");
    }
}

/// A task's figures: everything but the time.
fn figures(r: &TaskResult) -> (bool, u32, u64) {
    (r.success, r.attempts, r.visited)
}

#[test]
fn every_feature_set_gives_the_same_figures_alone_and_in_batches() {
    let cases: [(&[u32], &[u32], &[Method]); 5] = [
        (&[3, 2], &[30, 30], &[Method::AwPlus, Method::Mw, Method::Aw]),
        (&[2, 1], &[40, 40], &[Method::Aw, Method::WPlus, Method::Mw]),
        (&[4, 1], &[30, 30], &[Method::AwPlus, Method::Aw]),
        (&[2, 1], &[8, 8, 8], &[Method::Aw, Method::Mw]),
        (&[2, 1], &[7, 7], &[Method::AwPlus, Method::Aw]),
    ];
    let mut kernels_seen = Vec::new();
    for (rule, sides, methods) in cases {
        let c = config(rule, sides);
        let tasks: Vec<Task> = methods
            .iter()
            .flat_map(|&method| {
                (0..c.board().cells()).step_by(3).map(move |start| Task {
                    start,
                    method,
                    options: TaskOptions::default(),
                })
            })
            .collect();
        let mut expected: Option<Vec<(bool, u32, u64)>> = None;
        for cpu in Cpu::feature_sets() {
            let runner = Runner::on_cpu(c.clone(), cpu).unwrap();
            kernels_seen.push(runner.kernels());
            let mut ws = runner.workspace();
            let batch: Vec<_> = runner.run_tasks(&mut ws, &tasks).iter().map(figures).collect();
            let alone: Vec<_> =
                tasks.iter().map(|t| figures(&runner.run_task(&mut ws, t.start, t.method, &t.options))).collect();
            assert_eq!(batch, alone, "{rule:?} {sides:?} {cpu:?}");
            let expected = expected.get_or_insert(batch.clone());
            assert_eq!(&batch, expected, "{rule:?} {sides:?} {cpu:?}");
        }
    }
    // The fallback kernels ran, whatever this machine has.
    assert!(kernels_seen.iter().any(|k| k.w_plus() == Some(GroupKernel::WPlusDistanceCells)));
    assert!(kernels_seen.iter().any(|k| k.w_grouped() == Some(GroupKernel::WScaled3d)));
}

/// (runner, workspace) bytes held after one batch of `methods` from
/// starts 0 to `starts` - 1, at the widest groups, which a need covers
/// whatever width the runner times.
fn held_after(c: &Configuration, methods: &[Method], starts: u64) -> (u64, u64) {
    let runner = Runner::new(c.clone()).unwrap();
    runner.widths.iter().for_each(|w| w.set(WALKS_AT_ONCE).unwrap());
    let mut ws = runner.workspace();
    let tasks: Vec<_> = methods
        .iter()
        .flat_map(|&method| (0..starts).map(move |start| Task { start, method, options: Default::default() }))
        .collect();
    runner.run_tasks(&mut ws, &tasks);
    (runner.board_bytes() as u64, ws.board_bytes() as u64)
}

#[test]
fn memory_need_is_what_the_solver_and_its_workspaces_hold() {
    // Narrow (8 moves) and wide (1,1,1,1,1,1,1,1 in 8D: 256 moves) degrees.
    for c in [config(&[2, 1], &[9, 7]), config(&[3, 2], &[5, 6, 4]), config(&[1; 8], &[3; 8])] {
        let need = c.memory_need(false);
        let runner = Runner::new(c.clone()).unwrap();
        assert_eq!(need.shared, runner.board_bytes() as u64, "{}", c.board());
        assert_eq!(need.per_thread, runner.workspace().board_bytes() as u64, "{}", c.board());
        let with_path = c.memory_need(true);
        assert_eq!(with_path.per_thread, need.per_thread + 8 * c.board().cells());
        assert_eq!(need.with_threads(3), need.shared + 3 * need.per_thread);
    }
    // 3D N = 1000 with (2,1): about 1 GB a walk.
    let big = config(&[2, 1], &[1000, 1000, 1000]).memory_need(false);
    assert_eq!(big.per_thread, 1004u64.pow(3) + crate::layout::VECTOR_SLACK as u64);
    assert_eq!(big.to_string(), "1.9 GiB for one task (965.2 MiB shared + 965.2 MiB a thread)");
    assert_eq!(format_bytes(12), "12 B");
    // W+ walks on a 2D leaper's board run on 16-bit cells where the CPU
    // has SSE4.1, built by the first one: shared starting cells (and 8
    // of slack) with 8 rotations' 128 rank rows of 16 bytes, and a
    // thread's six copies, one per walk advancing together. Elsewhere
    // on keyed cells, 4 bytes a cell: the shared starting cells and a
    // thread's two copies.
    let sse41 = Cpu::detect().has_sse41();
    let c = config(&[3, 2], &[40, 30]);
    let (plain, plus) = (c.memory_need(false), c.memory_need_for(&[Method::AwPlus], false));
    let padded = 46 * 36;
    let cells = (padded + 8) * 2;
    let (w_plus_shared, w_plus_thread) =
        if sse41 { (cells + 8 * 128 * 16, 6 * cells) } else { (4 * padded, 8 * padded) };
    assert_eq!(plus.shared, plain.shared + w_plus_shared);
    assert_eq!(plus.per_thread, plain.per_thread + w_plus_thread);
    let ran = |methods: &[Method]| held_after(&c, methods, 16);
    assert_eq!(ran(&[Method::AwPlus]), (plus.shared, plus.per_thread));
    // Rule-W walks there advance six at a time on byte degrees with
    // SSE4.1: five more a thread; mw's W and W+ walks each on theirs.
    // Without, they run alone on the workspace's.
    let w_thread = if sse41 { 5 * padded } else { 0 };
    let walking = c.memory_need_for(&[Method::W], false);
    assert_eq!((walking.shared, walking.per_thread), (plain.shared, plain.per_thread + w_thread));
    assert_eq!(ran(&[Method::W]), (walking.shared, walking.per_thread));
    let both = c.memory_need_for(&[Method::Mw], false);
    assert_eq!((both.shared, both.per_thread), (plus.shared, plus.per_thread + w_thread));
    assert_eq!(ran(&[Method::Mw]), (both.shared, both.per_thread));
    // Where 16-bit cells do not fit, keyed cells do, 4 bytes a cell and
    // two copies a thread: (4,1)'s row moves are 9 cells apart.
    let c = config(&[4, 1], &[40, 30]);
    let (plain, plus) = (c.memory_need(false), c.memory_need_for(&[Method::AwPlus], false));
    assert_eq!((plus.shared, plus.per_thread), (plain.shared + 48 * 38 * 4, plain.per_thread + 2 * 48 * 38 * 4));
    assert_eq!(held_after(&c, &[Method::AwPlus], 4), (plus.shared, plus.per_thread));
    // Boards too narrow for 16-bit cells' rows and too far across for
    // the keyed cells' distance bits walk on bytes.
    let c = config(&[2, 1], &[5000, 3]);
    assert_eq!(c.memory_need_for(&[Method::AwPlus], false), c.memory_need(false), "{}", c.board());
    // Rule-W walks of 24 moves on 3D boards pair on a second degree
    // buffer a thread, up to 2^28 padded cells; so do W+ walks where they
    // take the row windows (SSE4.1 or wider), on the same buffer.
    let c = config(&[2, 1], &[6, 6, 6]);
    let paired = c.memory_need_for(&[Method::W], false);
    assert_eq!(paired.per_thread, 2 * c.memory_need(false).per_thread);
    assert_eq!(held_after(&c, &[Method::Aw], 2), (paired.shared, paired.per_thread));
    let windows = Cpu::detect().has_sse41();
    let plus = c.memory_need_for(&[Method::WPlus], false);
    assert_eq!(plus, if windows { paired } else { c.memory_need(false) });
    assert_eq!(held_after(&c, &[Method::AwPlus], 2), (plus.shared, plus.per_thread));
    assert_eq!(c.memory_need_for(&[Method::Mw], false), paired, "mw's W and W+ walks share the buffer");
    assert_eq!(held_after(&c, &[Method::Mw], 2), (paired.shared, paired.per_thread));
    let huge = config(&[2, 1], &[1000, 1000, 1000]);
    assert_eq!(huge.memory_need_for(&[Method::W], false), huge.memory_need(false));
    // As on 40x30 above, rule-W walks of aw on 2D leapers' boards
    // advance six at a time on byte degrees (with SSE4.1).
    let c = config(&[2, 1], &[100, 100]);
    let (plain, walking) = (c.memory_need(false), c.memory_need_for(&[Method::W], false));
    let w_thread = if sse41 { 5 * 104 * 104 } else { 0 };
    assert_eq!((walking.shared, walking.per_thread), (plain.shared, plain.per_thread + w_thread));
    assert_eq!(held_after(&c, &[Method::Aw], 8), (walking.shared, walking.per_thread));
    // solve adds its own state, a thread's worth, where it runs, and
    // the tour its tasks share: a closed one, 12 bytes a cell.
    let solving = c.memory_need_for(&[Method::W, Method::Solve], false);
    assert_eq!(solving.shared, walking.shared + 100 * 100 * 12);
    // On a board of odd cells, the shared path with its graph and lists.
    let odd = config(&[2, 1], &[101, 101]);
    let path = 105 * 105 * 28 + 101 * 101 * (8 + 4 * 8);
    assert_eq!(odd.memory_need_for(&[Method::Solve], false).shared, odd.memory_need(false).shared + path);
    assert_eq!(solving.per_thread, walking.per_thread + 104 * 104 * 44 + 100 * 100 * 32);
    // A board small enough for the exhaustive search holds its table too.
    let small = config(&[2, 1], &[10, 10]);
    let (plain, solving) = (small.memory_need(false), small.memory_need_for(&[Method::Solve], false));
    let search = crate::solve::search_memory(100, 14 * 14);
    assert!(search > 32 << 20);
    assert_eq!(solving.per_thread, plain.per_thread + 14 * 14 * 44 + 100 * 32 + search);
}

/// A (2,1) 3D board just past the size up to which the windows are taken
/// untimed (117^3 padded cells), where the runner times the two layouts.
fn timed_layout_config() -> Configuration {
    let c = config(&[2, 1], &[113, 113, 113]);
    assert!(c.padded_cells() > crate::walk::w_3d_scaled::WINDOWS_UNTIMED_PADDED);
    c
}

#[test]
fn the_timed_layouts_give_the_same_figures_and_the_need_covers_both() {
    let c = timed_layout_config();
    let cpu = Cpu::detect();
    let Some(scan) = crate::walk::w_3d_scaled::window_scan(c.board(), c.moves(), cpu) else {
        println!("skipped: this CPU has no window scan, so the runner has one layout");
        return;
    };
    let methods = [Method::W, Method::WPlus, Method::Aw];
    let need = c.memory_need_for(&methods, false);
    let starts = [0, c.board().index_of(&[56, 56, 56]).unwrap(), c.board().index_of(&[3, 110, 17]).unwrap()];
    let tasks: Vec<Task> = methods
        .into_iter()
        .flat_map(|method| starts.map(|start| Task { start, method, options: TaskOptions::default() }))
        .collect();
    let mut figures_by_layout = Vec::new();
    for (windows, row_major) in [(Some(scan), true), (None, false)] {
        let runner = Runner::on_layout(c.clone(), cpu, windows).unwrap();
        assert_eq!(runner.layout.phase_mask() == 0, row_major);
        let mut ws = runner.workspace();
        figures_by_layout.push(runner.run_tasks(&mut ws, &tasks).iter().map(figures).collect::<Vec<_>>());
        // The budget holds whichever layout the runner takes.
        let held = (runner.board_bytes() as u64, ws.board_bytes() as u64);
        assert!(held.0 <= need.shared && held.1 <= need.per_thread, "row-major {row_major}: {held:?} > {need:?}");
    }
    assert_eq!(figures_by_layout[0], figures_by_layout[1]);
    assert!(figures_by_layout[0].iter().any(|f| f.0), "some walk must finish its tour");
}

#[test]
fn the_runner_times_its_layout_once_and_walks_the_one_it_chose() {
    let c = timed_layout_config();
    let cpu = Cpu::detect();
    let first = Runner::on_cpu(c.clone(), cpu).unwrap();
    let rows = first.layout.phase_mask() == 0;
    let windows = crate::walk::w_3d_scaled::window_scan(c.board(), c.moves(), cpu).is_some();
    assert!(rows <= windows, "the rows only where the windows fit");
    if windows {
        assert_eq!(super::layout_choice::remembered(&c, cpu), Some(rows));
    }
    // The next runner takes the remembered layout, with its kernels.
    for runner in [first, Runner::on_cpu(c, cpu).unwrap()] {
        assert_eq!(runner.layout.phase_mask() == 0, rows);
        assert_eq!(runner.kernels().w_plus() == Some(GroupKernel::WPlusScaled3d), rows);
    }
}

#[test]
fn every_width_of_the_windows_gives_the_same_figures_within_the_need() {
    // aw+ and mw on a 2D leaper's board: W+ and rule-W walks on the
    // windows, from starts enough for full groups and their ends.
    let c = config(&[3, 2], &[44, 37]);
    let need = c.memory_need_for(&[Method::Mw], false);
    let tasks: Vec<Task> = [Method::AwPlus, Method::Mw, Method::Aw]
        .into_iter()
        .flat_map(|method| {
            (0..c.board().cells()).step_by(7).map(move |start| Task { start, method, options: TaskOptions::default() })
        })
        .collect();
    let runner = Runner::on_cpu(c.clone(), Cpu::detect()).unwrap();
    let indices: Vec<usize> = (0..tasks.len()).filter(|&i| runner.groups(&tasks[i])).collect();
    assert!(!indices.is_empty(), "W+ walks group on every CPU");
    let mut ws = runner.workspace();
    let alone: Vec<_> = indices
        .iter()
        .map(|&i| figures(&runner.run_task(&mut ws, tasks[i].start, tasks[i].method, &tasks[i].options)))
        .collect();
    for width in 2..=WALKS_AT_ONCE {
        let mut ws = runner.workspace();
        let mut batch = runner.run_grouped_at(&mut ws, (&tasks, &indices), &|_| width);
        batch.sort_by_key(|r| r.0);
        let batch: Vec<_> = batch.iter().map(|(_, r)| figures(r)).collect();
        assert_eq!(batch, alone, "{width} walks together");
        let held = (runner.board_bytes() as u64, ws.board_bytes() as u64);
        assert!(held.0 <= need.shared && held.1 <= need.per_thread, "{width}: {held:?} > {need:?}");
    }
    assert!(alone.iter().any(|f| f.0) && alone.iter().any(|f| !f.0), "tours found and missed");
}

/// The W+ kernel of `runner` if it advances more than two walks together.
fn wide_plus(runner: &Runner) -> Option<GroupKernel> {
    runner.kernels().w_plus().filter(|k| k.at_once() > 2)
}

#[test]
fn the_runner_times_its_width_once_and_remembers_it() {
    let c = config(&[3, 2], &[60, 52]);
    let cpu = Cpu::detect();
    let runner = Runner::on_cpu(c.clone(), cpu).unwrap();
    assert_eq!(runner.walks_together(), None, "not timed before a batch");
    let tasks: Vec<Task> = (0..8)
        .map(|start| Task { start: start * 301, method: Method::AwPlus, options: TaskOptions::default() })
        .collect();
    let mut ws = runner.workspace();
    let batch: Vec<_> = runner.run_tasks(&mut ws, &tasks).iter().map(figures).collect();
    let Some(kind) = wide_plus(&runner) else {
        assert_eq!(runner.walks_together(), None);
        println!("skipped: no kernel here groups more than two walks");
        return;
    };
    let width = runner.walks_together().expect("timed by the batch");
    assert!((3..=WALKS_AT_ONCE).contains(&width), "{width}");
    assert_eq!(super::group_width::remembered(c.moves(), cpu.level(), kind), Some(width));
    // Another runner of the moves takes it untimed, to the same figures.
    let again = Runner::on_cpu(c, cpu).unwrap();
    let mut ws = again.workspace();
    assert_eq!(again.run_tasks(&mut ws, &tasks).iter().map(figures).collect::<Vec<_>>(), batch);
    assert_eq!(again.walks_together(), Some(width));
}

#[test]
fn the_moves_width_is_timed_once_for_every_board_they_walk() {
    // Timed on a board of its own, not on the runner's: a board too
    // large to walk a few dozen times takes it too, its buffers unused.
    let cpu = Cpu::detect();
    let large = config(&[2, 1], &[600, 500]);
    let runner = Runner::on_cpu(large.clone(), cpu).unwrap();
    let Some(kind) = wide_plus(&runner) else {
        println!("skipped: no kernel here groups more than two walks");
        return;
    };
    let ws = runner.workspace();
    let width = runner.group_width(kind);
    assert_eq!(ws.board_bytes(), runner.workspace().board_bytes());
    assert_eq!(super::group_width::remembered(large.moves(), cpu.level(), kind), Some(width));
    let small = Runner::on_cpu(config(&[2, 1], &[30, 41]), cpu).unwrap();
    assert_eq!(small.group_width(kind), width);
    // Rule W's kernel is timed apart, on its own walks.
    if let Some(w) = small.kernels().w_grouped().filter(|k| k.at_once() > 2) {
        assert!((3..=WALKS_AT_ONCE).contains(&small.group_width(w)));
        assert!(super::group_width::remembered(large.moves(), cpu.level(), w).is_some());
    }
}
