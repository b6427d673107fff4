//! Several tasks' walks advanced together ([`Solver::run_tasks`]): each
//! slot holds a task and makes its walks; whenever busy slots stand in
//! walks that advance together ([`GroupKernel`]: W+ on 16-bit cells or W on
//! byte degrees in 2D, up to six at once; W+ on keyed cells in 2D or rule
//! W on scaled degrees in 3D, two at once), those of the kind most busy
//! slots stand in go on together until one ends (the others wait their
//! turn). The other walks run alone. Each slot keeps its walks in buffers
//! of its own, so a walk paused in one slot is never touched by another's.

use std::time::{Duration, Instant};

use super::{Solver, Task, TaskResult, Walks, Workspace};
use crate::layout::{BoardCell, Degrees, MoveTable, Padded};
use crate::seed::Rng;
use crate::walk::distance_cells::{self, KeyedCells};
use crate::walk::select::GroupKernel;
use crate::walk::sse_windows::{self, WindowCells, WindowKernel};
use crate::walk::{run_pair, w_3d_scaled, BufferedWalk, Paired, PausedWalk};

impl Solver {
    /// The tasks `indices` of `tasks` (all of which [`Solver::pairs`]),
    /// several at a time. Returns (index, result) per task.
    pub(super) fn run_paired(&self, ws: &mut Workspace, tasks: &[Task], indices: &[usize]) -> Vec<(usize, TaskResult)> {
        let mut done = Vec::with_capacity(indices.len());
        let mut queue = indices.iter().copied().peekable();
        let mut slots: Vec<Option<Slot>> = (0..self.slots()).map(|_| None).collect();
        let others_busy =
            |slots: &[Option<Slot>], i: usize| slots.iter().enumerate().any(|(j, s)| j != i && s.is_some());
        loop {
            for i in 0..slots.len() {
                while slots[i].is_none() {
                    let Some(index) = queue.next() else { break };
                    let began = Instant::now();
                    let mut s = Slot::new(self, index, &tasks[index]);
                    let partnered = queue.peek().is_some() || others_busy(&slots, i);
                    let ready = self.next_paired_walk(ws, i, &mut s, partnered);
                    s.charge(began.elapsed());
                    if ready {
                        slots[i] = Some(s);
                    } else {
                        done.push(self.finish(tasks, s));
                    }
                }
            }
            // The kind most busy slots stand in goes first (mw's, and a
            // batch of aw and aw+ tasks, mix W+ and W walks).
            let kinds: Vec<Option<GroupKernel>> = slots.iter().flatten().map(|s| s.kind).collect();
            let Some(&kind) = kinds.iter().max_by_key(|&k| kinds.iter().filter(|&j| j == k).count()) else {
                return done;
            };
            let group: Vec<usize> =
                (0..slots.len()).filter(|&i| slots[i].as_ref().is_some_and(|s| s.kind == kind)).collect();
            let began = Instant::now();
            let ended = self.together(ws, &mut slots, (kind, &group));
            let share = began.elapsed() / group.len() as u32;
            for &i in &group {
                slots[i].as_mut().expect("a busy slot").charge(share);
            }
            for i in group.into_iter().filter(|&i| ended[i]) {
                let partnered = queue.peek().is_some() || others_busy(&slots, i);
                let Some(s) = slots[i].as_mut() else { continue };
                let began = Instant::now();
                s.walks.record(s.progress.visited());
                let ready = self.next_paired_walk(ws, i, s, partnered);
                s.charge(began.elapsed());
                if !ready {
                    let s = slots[i].take().expect("the slot holds a task");
                    done.push(self.finish(tasks, s));
                }
            }
        }
    }

    /// Slots [`Solver::run_paired`] keeps: as many walks as advance at once.
    fn slots(&self) -> usize {
        self.kernels.walks_at_once()
    }

    /// Makes a slot's walks up to its next walk that pairs, which it sets
    /// up on the slot's buffer; false when the task has no walk left. The
    /// walks before it run alone, on the slot's own buffers; so do all of
    /// them when no partner is left (`partnered` false), on the kernels
    /// that are fastest alone.
    fn next_paired_walk(&self, ws: &mut Workspace, slot: usize, s: &mut Slot, partnered: bool) -> bool {
        let Degrees::Narrow(pristine) = &self.pristine else { unreachable!("walks that pair have byte degrees") };
        while let Some(walk) = s.walks.next() {
            self.rotate(ws, walk.rotation);
            let kind = self.kernels.grouped(walk.tiebreak);
            let Buffers { cells, keyed, degrees, moves, xy } = Buffers::of(ws, slot, self.own_degrees());
            match (kind, partnered) {
                (Some(GroupKernel::WPlusWindows), false) => {
                    let visited = self.walk_sse_windows((cells, moves), s.start, None, walk.stop_when_doomed);
                    s.walks.record(visited);
                    continue;
                }
                (Some(GroupKernel::WPlusDistanceCells), false) => {
                    keyed.copy_from(self.keyed_plus_initial());
                    let visited = distance_cells::walk(keyed, moves, s.start, None, walk.stop_when_doomed);
                    s.walks.record(visited);
                    continue;
                }
                // Rule W alone is fastest on byte degrees.
                (None, _) | (Some(GroupKernel::WScaled3d | GroupKernel::WWindows), false) => {
                    degrees.copy_from(pristine);
                    // Tasks that pair are deterministic (no random draw)
                    // and record no path.
                    let mut rng = Rng::new(0);
                    let moves = (moves, &mut xy[..]);
                    let visited =
                        self.walk_on(degrees, moves, s.start, walk.tiebreak, &mut rng, None, walk.stop_when_doomed);
                    s.walks.record(visited);
                    continue;
                }
                (Some(GroupKernel::WPlusWindows), true) => {
                    cells.copy_from(self.w_plus_tables().starting_cells());
                    s.progress = sse_windows::begin::<sse_windows::WPlusTables>(cells, s.start);
                }
                (Some(GroupKernel::WWindows), true) => {
                    degrees.copy_from(pristine);
                    s.progress = sse_windows::begin::<sse_windows::w_bytes::WTables>(degrees, s.start);
                }
                (Some(GroupKernel::WPlusDistanceCells), true) => {
                    keyed.copy_from(self.keyed_plus_initial());
                    s.progress = distance_cells::begin(keyed, s.start);
                }
                (Some(GroupKernel::WScaled3d), true) => {
                    degrees.copy_from(pristine);
                    s.progress = w_3d_scaled::begin(degrees, s.start);
                }
            }
            s.moves.copy_from(moves);
            (s.kind, s.stop_when_doomed) = (kind, walk.stop_when_doomed);
            return true;
        }
        false
    }

    /// The walks of the slots `group`, which stand in walks of `kind`,
    /// together (one alone), until one ends; which slots' walks ended.
    fn together(
        &self,
        ws: &mut Workspace,
        slots: &mut [Option<Slot>],
        (kind, group): (Option<GroupKernel>, &[usize]),
    ) -> Vec<bool> {
        let mut ended = vec![false; slots.len()];
        if group.len() == 1 && kind.is_some_and(GroupKernel::pairs_only) {
            self.alone(ws, group[0], slots[group[0]].as_mut().expect("a busy slot"));
            ended[group[0]] = true;
            return ended;
        }
        ws.dirty = true;
        let Workspace { degrees, plus, plus_pair, more_degrees, window_cells, .. } = ws;
        let Degrees::Narrow(own) = degrees else { unreachable!("walks that pair have byte degrees") };
        // Each slot's degrees, as `Buffers::of` gives them where walks on
        // degrees pause.
        let mut slot_degrees = std::iter::once(own).chain(more_degrees.iter_mut());
        // The group's walks, each on its slot's cells.
        fn walks<'a, C: 'a, Kind: 'a>(
            slots: &'a mut [Option<Slot>],
            cells: impl Iterator<Item = &'a mut Padded<C, Kind>>,
            kind: Option<GroupKernel>,
        ) -> Vec<BufferedWalk<'a, C, Kind>> {
            slots
                .iter_mut()
                .zip(cells)
                .filter_map(|(s, cells)| Some(s.as_mut().filter(|s| s.kind == kind)?.buffered(cells)))
                .collect()
        }
        // Each kernel checks that each slot's walk is one it began on the
        // slot's buffer, in moves of the same layout.
        let out = match kind {
            Some(GroupKernel::WPlusWindows) => {
                let plan = self.w_plus_tables();
                plan.run(&mut walks(slots, window_cells.iter_mut(), kind))
            }
            Some(GroupKernel::WWindows) => {
                let plan = self.w_windows.as_ref().expect("chosen where it fits");
                plan.run(&mut walks(slots, slot_degrees, kind))
            }
            Some(GroupKernel::WPlusDistanceCells) => {
                let [Some(a), Some(b)] = slots else { unreachable!("keyed cells pair two slots") };
                let [x, y] = run_pair(keyed(a, plus), keyed(b, plus_pair));
                pair_ended(x, y)
            }
            Some(GroupKernel::WScaled3d) => {
                let ([Some(a), Some(b)], Some(da), Some(db)) = (slots, slot_degrees.next(), slot_degrees.next()) else {
                    unreachable!("degrees pair two slots")
                };
                let (a, b) = (w_3d_scaled::Pointers::of(a.buffered(da)), w_3d_scaled::Pointers::of(b.buffered(db)));
                let [x, y] = run_pair(a, b);
                pair_ended(x, y)
            }
            None => unreachable!("a busy slot stands in a walk that pairs"),
        };
        for (n, &i) in group.iter().enumerate() {
            ended[i] = out[n];
        }
        ended
    }

    /// Whether each slot's walks on degrees use a buffer of its own (where
    /// rule-W walks pause to advance together), not the workspace's.
    fn own_degrees(&self) -> bool {
        self.kernels.slot_degrees()
    }

    /// One slot's walk, alone, to its end.
    fn alone(&self, ws: &mut Workspace, slot: usize, s: &mut Slot) {
        let Buffers { keyed, degrees, .. } = Buffers::of(ws, slot, self.own_degrees());
        match s.kind {
            Some(GroupKernel::WPlusDistanceCells) => distance_cells::run(s.buffered(keyed), None),
            Some(GroupKernel::WScaled3d) => w_3d_scaled::run(s.buffered(degrees), None),
            kind => unreachable!("a slot stands in a walk that pairs two at a time, not {kind:?}"),
        }
    }

    /// A paired task's result.
    fn finish(&self, tasks: &[Task], s: Slot) -> (usize, TaskResult) {
        let t = &tasks[s.index];
        let micros = (s.nanos / 1000) as u64;
        (s.index, self.settle(t.start, t.method, &t.options, TaskResult { micros, ..s.walks.result() }))
    }
}

/// Which of a group's walks ended, where a pair ran.
fn pair_ended(a: bool, b: bool) -> [bool; sse_windows::WALKS_AT_ONCE] {
    let mut ended = [false; sse_windows::WALKS_AT_ONCE];
    (ended[0], ended[1]) = (a, b);
    ended
}

/// A walk on keyed cells, ready to pair.
fn keyed<'a>(s: &'a mut Slot, cells: &'a mut Padded<u32, KeyedCells>) -> Paired<'a, distance_cells::Pointers<'a>> {
    distance_cells::Pointers::of(s.buffered(cells))
}

/// A slot's buffers in the workspace: slot `i` walks on the `i`th 16-bit
/// cells; slot 0 on the workspace's own keyed cells and degrees (marked
/// dirty, so the next lone task resets them), slot 1 on `plus_pair`, and
/// slot `i` on `more_degrees[i - 1]` where walks on degrees pause
/// (elsewhere no walk on degrees is ever paused, and every slot's run on
/// the workspace's own); the move order they share is set afresh before
/// each walk.
struct Buffers<'w> {
    cells: &'w mut Padded<u16, WindowCells>,
    keyed: &'w mut Padded<u32, KeyedCells>,
    degrees: &'w mut Padded<u8>,
    moves: &'w MoveTable,
    xy: &'w mut [i64],
}

impl<'w> Buffers<'w> {
    fn of(ws: &'w mut Workspace, slot: usize, own_degrees: bool) -> Buffers<'w> {
        ws.dirty = true;
        let Workspace { degrees, plus, plus_pair, more_degrees, window_cells, moves, xy, .. } = ws;
        let Degrees::Narrow(own) = degrees else { unreachable!("walks that pair have byte degrees") };
        let keyed = if slot == 0 { plus } else { plus_pair };
        let degrees = if slot == 0 || !own_degrees { own } else { &mut more_degrees[slot - 1] };
        Buffers { cells: &mut window_cells[slot], keyed, degrees, moves, xy }
    }
}

/// A task [`Solver::run_tasks`] is running in one of its slots.
#[derive(Debug)]
struct Slot {
    /// The task's place in the batch.
    index: usize,
    /// The start's board cell.
    start: BoardCell,
    walks: Walks,
    /// The current walk: how it pairs, its move order (a row of offsets
    /// per phase), where it stands, whether it may stop when doomed.
    kind: Option<GroupKernel>,
    moves: MoveTable,
    progress: PausedWalk,
    stop_when_doomed: bool,
    /// Time charged to the task so far.
    nanos: u128,
}

impl Slot {
    fn new(solver: &Solver, index: usize, task: &Task) -> Slot {
        let config = &solver.config;
        Slot {
            index,
            start: solver.layout.board_cell(task.start),
            walks: Walks::new(task.method, config.moves().len(), config.board().cells()),
            kind: None,
            moves: MoveTable::default(),
            progress: PausedWalk::default(),
            stop_when_doomed: false,
            nanos: 0,
        }
    }

    fn charge(&mut self, time: Duration) {
        self.nanos += time.as_nanos();
    }

    /// The current walk on `cells`, ready to advance beside others.
    fn buffered<'a, C, Kind>(&'a mut self, cells: &'a mut Padded<C, Kind>) -> BufferedWalk<'a, C, Kind> {
        BufferedWalk {
            cells,
            offsets: &self.moves,
            progress: &mut self.progress,
            stop_when_doomed: self.stop_when_doomed,
        }
    }
}
