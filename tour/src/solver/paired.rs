//! Two tasks' walks advanced together ([`Solver::run_tasks`]): each of two
//! slots holds a task and makes its walks; whenever both slots stand in a
//! walk of the kind that pairs here ([`Pairing`]), that kind's pair kernel
//! takes both on until one ends. Every other walk runs alone, on buffers
//! no paused walk is using.

use std::time::{Duration, Instant};

use super::{Pairing, Solver, Task, TaskResult, Walks, Workspace};
use crate::layout::{copy_into, Degrees};
use crate::seed::Rng;
use crate::walk::{plus_cells, w24, Lane, Progress};

impl Solver {
    /// The tasks `indices` of `tasks` (all of which [`Solver::pairs`]), two
    /// at a time. Returns (index, result) per task.
    pub(super) fn run_paired(&self, ws: &mut Workspace, tasks: &[Task], indices: &[usize]) -> Vec<(usize, TaskResult)> {
        let Some(pairing) = self.pairing else {
            debug_assert!(indices.is_empty(), "only tasks that pair come here");
            return Vec::new();
        };
        let mut done = Vec::with_capacity(indices.len());
        let mut queue = indices.iter().copied();
        let mut slots: [Option<Slot>; 2] = [None, None];
        loop {
            for (i, slot) in slots.iter_mut().enumerate() {
                while slot.is_none() {
                    let Some(index) = queue.next() else { break };
                    let began = Instant::now();
                    let mut s = Slot::new(self, index, &tasks[index]);
                    let ready = self.next_paired_walk(ws, pairing, i, &mut s);
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
                    let ended = self.run_pair(ws, pairing, a, b);
                    let half = began.elapsed() / 2;
                    a.charge(half);
                    b.charge(half);
                    ended
                }
                [Some(a), None] => {
                    self.run_alone(ws, pairing, 0, a);
                    a.charge(began.elapsed());
                    [true, false]
                }
                [None, Some(b)] => {
                    self.run_alone(ws, pairing, 1, b);
                    b.charge(began.elapsed());
                    [false, true]
                }
                [None, None] => return done,
            };
            for (i, slot) in slots.iter_mut().enumerate() {
                let Some(s) = slot.as_mut().filter(|_| ended[i]) else { continue };
                let began = Instant::now();
                s.walks.record(s.progress.visited());
                let ready = self.next_paired_walk(ws, pairing, i, s);
                s.charge(began.elapsed());
                if !ready {
                    let s = slot.take().expect("the slot holds a task");
                    done.push(self.finish(tasks, s));
                }
            }
        }
    }

    /// Makes a slot's walks up to its next walk of the kind that pairs,
    /// which it sets up on the slot's buffer; false when the task has no
    /// walk left. The walks between run alone: on the workspace's degrees
    /// when pairs walk on keyed cells, on the slot's own degrees when pairs
    /// walk on degrees (the other slot's paused walk holds the other).
    fn next_paired_walk(&self, ws: &mut Workspace, pairing: Pairing, slot: usize, s: &mut Slot) -> bool {
        while let Some(walk) = s.walks.next() {
            self.rotate(ws, walk.rotation);
            // What runs alone here is deterministic (pairs take no random
            // method, see `pairs`) and records no path.
            let mut rng = Rng::new(0);
            let alone = walk.tiebreak != pairing.tiebreak();
            match pairing {
                Pairing::PlusCells if alone => {
                    let visited = self.walk_degrees(ws, s.start, walk.tiebreak, &mut rng, false, walk.stop_when_doomed);
                    s.walks.record(visited);
                    continue;
                }
                Pairing::PlusCells => {
                    let cells = if slot == 0 { &mut ws.plus } else { &mut ws.plus_pair };
                    copy_into(cells, self.plus_pristine());
                    s.progress = plus_cells::begin(cells, s.start);
                }
                Pairing::W24 => {
                    let Degrees::Narrow(pristine) = &self.pristine else { unreachable!("24 moves have byte degrees") };
                    let Workspace { degrees, degrees_pair, offsets, vectors, xy, dirty, .. } = &mut *ws;
                    *dirty = true;
                    let deg = slot_degrees(degrees, degrees_pair, slot);
                    copy_into(deg, pristine);
                    if alone {
                        let moves = (&offsets[..], &vectors[..], &mut xy[..]);
                        let visited =
                            self.walk_on(deg, moves, s.start, walk.tiebreak, &mut rng, None, walk.stop_when_doomed);
                        s.walks.record(visited);
                        continue;
                    }
                    s.progress = w24::begin(deg, s.start);
                }
            }
            copy_into(&mut s.offsets, &ws.offsets);
            s.stop_when_doomed = walk.stop_when_doomed;
            return true;
        }
        false
    }

    /// Both slots' walks, together, until one ends.
    fn run_pair(&self, ws: &mut Workspace, pairing: Pairing, a: &mut Slot, b: &mut Slot) -> [bool; 2] {
        match pairing {
            Pairing::PlusCells => plus_cells::run_pair(a.lane(&mut ws.plus), b.lane(&mut ws.plus_pair)),
            Pairing::W24 => {
                ws.dirty = true;
                let Degrees::Narrow(first) = &mut ws.degrees else { unreachable!("24 moves have byte degrees") };
                w24::run_pair(a.lane(first), b.lane(&mut ws.degrees_pair), self.layout.phase_mask())
            }
        }
    }

    /// One slot's walk, alone, to its end.
    fn run_alone(&self, ws: &mut Workspace, pairing: Pairing, slot: usize, s: &mut Slot) {
        match pairing {
            Pairing::PlusCells => {
                let cells = if slot == 0 { &mut ws.plus } else { &mut ws.plus_pair };
                plus_cells::run(cells, &s.offsets, &mut s.progress, None, s.stop_when_doomed);
            }
            Pairing::W24 => {
                ws.dirty = true;
                let deg = slot_degrees(&mut ws.degrees, &mut ws.degrees_pair, slot);
                w24::run(s.lane(deg), self.layout.phase_mask(), None);
            }
        }
    }

    /// A paired task's result.
    fn finish(&self, tasks: &[Task], s: Slot) -> (usize, TaskResult) {
        let t = &tasks[s.index];
        let micros = (s.nanos / 1000) as u64;
        (s.index, self.settle(t.start, t.method, &t.options, TaskResult { micros, ..s.walks.result() }))
    }
}

/// Slot `slot`'s degree buffer for walks that pair on degrees: the
/// workspace's own for slot 0 (marked dirty, so the next lone walk resets
/// it), `pair` for slot 1.
fn slot_degrees<'w>(degrees: &'w mut Degrees, pair: &'w mut Vec<u8>, slot: usize) -> &'w mut Vec<u8> {
    match (slot, degrees) {
        (0, Degrees::Narrow(deg)) => deg,
        (0, Degrees::Wide(_)) => unreachable!("24 moves have byte degrees"),
        _ => pair,
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
    /// The current walk: its move order (a row of offsets per phase),
    /// where it stands, whether it may stop when doomed.
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
            offsets: Vec::new(),
            progress: Progress::default(),
            stop_when_doomed: false,
            nanos: 0,
        }
    }

    fn charge(&mut self, time: Duration) {
        self.nanos += time.as_nanos();
    }

    /// The current walk as a lane of a pair kernel, on `cells`.
    fn lane<'a, C>(&'a mut self, cells: &'a mut [C]) -> Lane<'a, C> {
        Lane { cells, offsets: &self.offsets, progress: &mut self.progress, stop_when_doomed: self.stop_when_doomed }
    }
}
