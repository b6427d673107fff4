//! Two tasks' walks advanced together ([`Solver::run_tasks`]): each of two
//! slots holds a task and makes its walks; whenever both slots stand in a
//! walk that pairs ([`Paired`]: W+ on keyed cells in 2D, rule W on scaled
//! degrees in 3D), [`run_pair`] takes both on until one ends. The other
//! walks run alone. Each slot keeps its walks in buffers of its own (keyed
//! cells and degrees), so a walk paused in one slot is never touched by the
//! other's.

use std::time::{Duration, Instant};

use super::{Paired, Solver, Task, TaskResult, Walks, Workspace};
use crate::layout::{copy_into, Degrees};
use crate::seed::Rng;
use crate::walk::{plus_cells, run_pair, scaled, Lane, Progress};

impl Solver {
    /// The tasks `indices` of `tasks` (all of which [`Solver::pairs`]), two
    /// at a time. Returns (index, result) per task.
    pub(super) fn run_paired(&self, ws: &mut Workspace, tasks: &[Task], indices: &[usize]) -> Vec<(usize, TaskResult)> {
        let mut done = Vec::with_capacity(indices.len());
        let mut queue = indices.iter().copied().peekable();
        let mut slots: [Option<Slot>; 2] = [None, None];
        loop {
            for i in 0..2 {
                while slots[i].is_none() {
                    let Some(index) = queue.next() else { break };
                    let began = Instant::now();
                    let mut s = Slot::new(self, index, &tasks[index]);
                    let partnered = queue.peek().is_some() || slots[1 - i].is_some();
                    let ready = self.next_paired_walk(ws, i, &mut s, partnered);
                    s.charge(began.elapsed());
                    if ready {
                        slots[i] = Some(s);
                    } else {
                        done.push(self.finish(tasks, s));
                    }
                }
            }
            let began = Instant::now();
            let ended = match &mut slots {
                [Some(a), Some(b)] => {
                    let ended = self.pair(ws, a, b);
                    let half = began.elapsed() / 2;
                    a.charge(half);
                    b.charge(half);
                    ended
                }
                [Some(a), None] => {
                    self.alone(ws, 0, a);
                    a.charge(began.elapsed());
                    [true, false]
                }
                [None, Some(b)] => {
                    self.alone(ws, 1, b);
                    b.charge(began.elapsed());
                    [false, true]
                }
                [None, None] => return done,
            };
            for i in (0..2).filter(|&i| ended[i]) {
                let partnered = queue.peek().is_some() || slots[1 - i].is_some();
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

    /// Makes a slot's walks up to its next walk that pairs, which it sets
    /// up on the slot's buffer; false when the task has no walk left. The
    /// walks before it run alone, on the slot's own buffers; so do all of
    /// them when no partner is left (`partnered` false), on the kernels
    /// that are fastest alone.
    fn next_paired_walk(&self, ws: &mut Workspace, slot: usize, s: &mut Slot, partnered: bool) -> bool {
        let Degrees::Narrow(pristine) = &self.pristine else { unreachable!("walks that pair have byte degrees") };
        while let Some(walk) = s.walks.next() {
            self.rotate(ws, walk.rotation);
            let kind = self.paired(walk.tiebreak);
            let Buffers { keyed, degrees, offsets, vectors, xy } = Buffers::of(ws, slot, self.degree_pairs);
            match (kind, partnered) {
                (Some(Paired::KeyedCells), false) => {
                    copy_into(keyed, self.plus_pristine());
                    let visited = plus_cells::walk(keyed, offsets, s.start, None, walk.stop_when_doomed);
                    s.walks.record(visited);
                    continue;
                }
                (None, _) | (Some(Paired::Degrees), false) => {
                    copy_into(degrees, pristine);
                    // Tasks that pair are deterministic (no random draw)
                    // and record no path.
                    let mut rng = Rng::new(0);
                    let moves = (offsets, vectors, &mut xy[..]);
                    let visited =
                        self.walk_on(degrees, moves, s.start, walk.tiebreak, &mut rng, None, walk.stop_when_doomed);
                    s.walks.record(visited);
                    continue;
                }
                (Some(Paired::KeyedCells), true) => {
                    copy_into(keyed, self.plus_pristine());
                    s.progress = plus_cells::begin(keyed, s.start);
                }
                (Some(Paired::Degrees), true) => {
                    copy_into(degrees, pristine);
                    s.progress = scaled::begin(degrees, s.start);
                }
            }
            copy_into(&mut s.offsets, offsets);
            (s.kind, s.stop_when_doomed) = (kind, walk.stop_when_doomed);
            return true;
        }
        false
    }

    /// Both slots' walks, together, until one ends.
    fn pair(&self, ws: &mut Workspace, a: &mut Slot, b: &mut Slot) -> [bool; 2] {
        let mask = self.layout.phase_mask();
        let [(ka, da), (kb, db)] = Buffers::both(ws);
        match (a.kind, b.kind) {
            (Some(Paired::KeyedCells), Some(Paired::KeyedCells)) => run_pair(keyed(a, ka), keyed(b, kb)),
            (Some(Paired::Degrees), Some(Paired::Degrees)) => {
                run_pair(scaled::Pointers::of(a.lane(da), mask), scaled::Pointers::of(b.lane(db), mask))
            }
            kinds => unreachable!("walks of one configuration pair as {kinds:?}"),
        }
    }

    /// One slot's walk, alone, to its end.
    fn alone(&self, ws: &mut Workspace, slot: usize, s: &mut Slot) {
        let mask = self.layout.phase_mask();
        let Buffers { keyed, degrees, .. } = Buffers::of(ws, slot, self.degree_pairs);
        match s.kind {
            Some(Paired::KeyedCells) => plus_cells::run(keyed, &s.offsets, &mut s.progress, None, s.stop_when_doomed),
            Some(Paired::Degrees) => scaled::run(s.lane(degrees), mask, None),
            kind => unreachable!("a slot stands in a walk that pairs, not {kind:?}"),
        }
    }

    /// A paired task's result.
    fn finish(&self, tasks: &[Task], s: Slot) -> (usize, TaskResult) {
        let t = &tasks[s.index];
        let micros = (s.nanos / 1000) as u64;
        (s.index, self.settle(t.start, t.method, &t.options, TaskResult { micros, ..s.walks.result() }))
    }
}

/// A walk on keyed cells, ready to pair.
fn keyed<'a>(s: &'a mut Slot, cells: &'a mut [u32]) -> (plus_cells::Pointers, &'a mut Progress) {
    plus_cells::Pointers::of(s.lane(cells))
}

/// A slot's buffers in the workspace: slot 0 walks on the workspace's own
/// keyed cells and degrees (marked dirty, so the next lone task resets
/// them), slot 1 on `plus_pair`, and on `degrees_pair` where walks pair on
/// degrees (elsewhere no walk on degrees is ever paused, and slot 1's run
/// on the workspace's own); the move order they share is set afresh
/// before each walk.
struct Buffers<'w> {
    keyed: &'w mut Vec<u32>,
    degrees: &'w mut Vec<u8>,
    offsets: &'w [isize],
    vectors: &'w [i32],
    xy: &'w mut [i64],
}

impl<'w> Buffers<'w> {
    fn of(ws: &'w mut Workspace, slot: usize, degree_pairs: bool) -> Buffers<'w> {
        ws.dirty = true;
        let Workspace { degrees, plus, plus_pair, degrees_pair, offsets, vectors, xy, .. } = ws;
        let Degrees::Narrow(own) = degrees else { unreachable!("walks that pair have byte degrees") };
        let keyed = if slot == 0 { plus } else { plus_pair };
        let degrees = if slot == 0 || !degree_pairs { own } else { degrees_pair };
        Buffers { keyed, degrees, offsets, vectors, xy }
    }

    /// Both slots' (keyed cells, degrees).
    fn both(ws: &'w mut Workspace) -> [(&'w mut Vec<u32>, &'w mut Vec<u8>); 2] {
        ws.dirty = true;
        let Workspace { degrees, plus, plus_pair, degrees_pair, .. } = ws;
        let Degrees::Narrow(own) = degrees else { unreachable!("walks that pair have byte degrees") };
        [(plus, own), (plus_pair, degrees_pair)]
    }
}

/// A task [`Solver::run_tasks`] is running in one of its two slots.
#[derive(Debug)]
struct Slot {
    /// The task's place in the batch.
    index: usize,
    /// The padded start.
    start: usize,
    walks: Walks,
    /// The current walk: how it pairs, its move order (a row of offsets
    /// per phase), where it stands, whether it may stop when doomed.
    kind: Option<Paired>,
    offsets: Vec<isize>,
    progress: Progress,
    stop_when_doomed: bool,
    /// Time charged to the task so far.
    nanos: u128,
}

impl Slot {
    fn new(solver: &Solver, index: usize, task: &Task) -> Slot {
        let config = &solver.config;
        Slot {
            index,
            start: solver.layout.padded(task.start),
            walks: Walks::new(task.method, config.moves().len(), config.board().cells()),
            kind: None,
            offsets: Vec::new(),
            progress: Progress::default(),
            stop_when_doomed: false,
            nanos: 0,
        }
    }

    fn charge(&mut self, time: Duration) {
        self.nanos += time.as_nanos();
    }

    /// The current walk as a lane of a pair, on `cells`.
    fn lane<'a, C>(&'a mut self, cells: &'a mut [C]) -> Lane<'a, C> {
        Lane { cells, offsets: &self.offsets, progress: &mut self.progress, stop_when_doomed: self.stop_when_doomed }
    }
}
