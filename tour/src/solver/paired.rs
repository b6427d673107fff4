//! Two tasks' W+ walks advanced together ([`Solver::run_tasks`]): each of
//! two slots holds a task and makes its walks, rule W ones alone, W+ ones
//! on the slot's own keyed cells; whenever both slots stand in a W+ walk,
//! [`plus_cells::run_pair`] takes both on until one ends.

use std::time::{Duration, Instant};

use super::{reset_plus, Solver, Task, TaskResult, Walks, Workspace};
use crate::seed::Rng;
use crate::walk::{plus_cells, Tiebreak};

impl Solver {
    /// The tasks `indices` of `tasks` (all of which [`Solver::pairs`]), two
    /// at a time. Returns (index, result) per task.
    pub(super) fn run_paired(&self, ws: &mut Workspace, tasks: &[Task], indices: &[usize]) -> Vec<(usize, TaskResult)> {
        let mut done = Vec::with_capacity(indices.len());
        let mut queue = indices.iter().copied();
        let mut slots: [Option<Slot>; 2] = [None, None];
        loop {
            for (i, slot) in slots.iter_mut().enumerate() {
                while slot.is_none() {
                    let Some(index) = queue.next() else { break };
                    let began = Instant::now();
                    let mut s = Slot::new(self, index, &tasks[index]);
                    let ready = self.next_plus_walk(ws, i, &mut s);
                    s.charge(began.elapsed());
                    if ready {
                        *slot = Some(s);
                    } else {
                        done.push(self.finish(tasks, s));
                    }
                }
            }
            let began = Instant::now();
            let ended = match &mut slots {
                [Some(a), Some(b)] => {
                    let (first, second) = (&mut ws.plus, &mut ws.plus_pair);
                    let ended = plus_cells::run_pair(a.lane(first), b.lane(second));
                    let half = began.elapsed() / 2;
                    a.charge(half);
                    b.charge(half);
                    ended
                }
                [Some(a), None] => {
                    plus_cells::run(&mut ws.plus, &a.offsets, &mut a.progress, None, a.stop_when_doomed);
                    a.charge(began.elapsed());
                    [true, false]
                }
                [None, Some(b)] => {
                    plus_cells::run(&mut ws.plus_pair, &b.offsets, &mut b.progress, None, b.stop_when_doomed);
                    b.charge(began.elapsed());
                    [false, true]
                }
                [None, None] => return done,
            };
            for (i, slot) in slots.iter_mut().enumerate() {
                let Some(s) = slot.as_mut().filter(|_| ended[i]) else { continue };
                let began = Instant::now();
                s.walks.record(s.progress.visited());
                let ready = self.next_plus_walk(ws, i, s);
                s.charge(began.elapsed());
                if !ready {
                    let s = slot.take().expect("the slot holds a task");
                    done.push(self.finish(tasks, s));
                }
            }
        }
    }

    /// Makes a slot's walks up to its next W+ walk, which it sets up on the
    /// slot's keyed cells (`ws.plus` for slot 0, `ws.plus_pair` for slot
    /// 1); false when the task has no walk left.
    fn next_plus_walk(&self, ws: &mut Workspace, slot: usize, s: &mut Slot) -> bool {
        while let Some(walk) = s.walks.next() {
            if walk.tiebreak != Tiebreak::Distance {
                // Rule W (mw's even attempts), which draws nothing from the
                // random stream and records no path here.
                self.rotate(ws, walk.rotation);
                let mut rng = Rng::new(0);
                let visited = self.walk_degrees(ws, s.start, walk.tiebreak, &mut rng, false, walk.stop_when_doomed);
                s.walks.record(visited);
                continue;
            }
            let pristine = self.plus_pristine();
            let cells = if slot == 0 { &mut ws.plus } else { &mut ws.plus_pair };
            reset_plus(cells, pristine);
            let row = self.layout.offset_rows();
            let k = s.offsets.len();
            for (i, o) in s.offsets.iter_mut().enumerate() {
                *o = row[(i + walk.rotation) % k];
            }
            s.progress = plus_cells::Progress::begin(cells, s.start);
            s.stop_when_doomed = walk.stop_when_doomed;
            return true;
        }
        false
    }

    /// A paired task's result.
    fn finish(&self, tasks: &[Task], s: Slot) -> (usize, TaskResult) {
        let t = &tasks[s.index];
        let micros = (s.nanos / 1000) as u64;
        (s.index, self.settle(t.start, t.method, &t.options, TaskResult { micros, ..s.walks.result() }))
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
    /// The current W+ walk: its move order, where it stands, whether it may
    /// stop when doomed.
    offsets: [isize; plus_cells::K],
    progress: plus_cells::Progress,
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
            offsets: [0; plus_cells::K],
            progress: plus_cells::Progress::default(),
            stop_when_doomed: false,
            nanos: 0,
        }
    }

    fn charge(&mut self, time: Duration) {
        self.nanos += time.as_nanos();
    }

    /// The current walk as a lane of [`plus_cells::run_pair`], on `cells`.
    fn lane<'a>(&'a mut self, cells: &'a mut [u32]) -> plus_cells::Lane<'a> {
        plus_cells::Lane {
            cells,
            offsets: &self.offsets,
            progress: &mut self.progress,
            stop_when_doomed: self.stop_when_doomed,
        }
    }
}
