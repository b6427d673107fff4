//! The walks of one Warnsdorff task, made one after another on the
//! workspace: their sequence (rotations and tiebreaks, from the method) and
//! the walk on the degrees or on a group kernel alone; apart from the
//! runner's entry points and the batches in `group`.

use super::{Runner, TaskOptions, TaskResult, Workspace};
use crate::layout::{BoardCell, Degree, Degrees, MoveTable, Padded};
use crate::method::Method;
use crate::outcome::Outcome;
use crate::seed::Rng;
use crate::walk::select::{Held, Visit};
use crate::walk::{walk, Tiebreak, WalkMoves};

impl Runner {
    pub(super) fn run_walks(
        &self,
        ws: &mut Workspace,
        start: u64,
        method: Method,
        options: &TaskOptions,
    ) -> TaskResult {
        let mut rng = Rng::new(options.seed);
        let padded_start = self.layout.board_cell(start);
        let mut walks = Walks::new(method, self.config.moves().len(), self.config.board().cells());
        while let Some(walk) = walks.next() {
            self.rotate(ws, walk.rotation);
            ws.path.clear();
            let w_plus = if walk.tiebreak == Tiebreak::Distance { self.kernels.w_plus() } else { None };
            let lone =
                LoneWalk { runner: self, ws: &mut *ws, start: padded_start, walk, record_path: options.record_path };
            let visited = match w_plus.and_then(|k| k.visit(lone)) {
                Some(visited) => visited,
                None => self.walk_degrees(
                    ws,
                    padded_start,
                    walk.tiebreak,
                    &mut rng,
                    options.record_path,
                    walk.stop_when_doomed,
                ),
            };
            walks.record(visited);
        }
        // Converted in place (usize and u64 have one layout here, so the
        // collect reuses the buffer): a path costs 8 bytes a cell, not 16.
        let path = options.record_path.then(|| {
            let mut padded = std::mem::take(&mut ws.path);
            padded.iter_mut().for_each(|p| *p = self.layout.unpadded(*p) as usize);
            padded.into_iter().map(|p| p as u64).collect()
        });
        TaskResult { path, ..walks.result() }
    }

    /// One walk on the workspace's degrees, in its current move order.
    fn walk_degrees(
        &self,
        ws: &mut Workspace,
        start: BoardCell,
        tiebreak: Tiebreak,
        rng: &mut Rng,
        record_path: bool,
        stop_when_doomed: bool,
    ) -> u64 {
        if ws.dirty {
            ws.degrees.reset_from(&self.pristine);
        }
        ws.dirty = true;
        let path = record_path.then_some(&mut ws.path);
        let Workspace { degrees, moves, xy, .. } = ws;
        match degrees {
            Degrees::Narrow(deg) => self.walk_on(deg, (moves, xy), start, tiebreak, rng, path, stop_when_doomed),
            Degrees::Wide(deg) => self.walk_on(deg, (moves, xy), start, tiebreak, rng, path, stop_when_doomed),
        }
    }

    /// One walk on `deg` (reset by the caller), in the move order of
    /// `moves`, with `xy` for the start's coordinates.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn walk_on<T: Degree>(
        &self,
        deg: &mut Padded<T>,
        (moves, xy): (&MoveTable, &mut [i64]),
        start: BoardCell,
        tiebreak: Tiebreak,
        rng: &mut Rng,
        path: Option<&mut Vec<usize>>,
        stop_when_doomed: bool,
    ) -> u64 {
        let walk_moves = WalkMoves::new(&self.layout, moves, self.predecessors.as_ref());
        walk(deg, &walk_moves, start, self.kernels.degree_kernel(tiebreak), rng, xy, path, stop_when_doomed)
    }
}

/// A lone task's W+ walk on its group kernel, on the workspace's first
/// cells: `None` where the kernel walks alone on the byte degrees.
struct LoneWalk<'s> {
    runner: &'s Runner,
    ws: &'s mut Workspace,
    start: BoardCell,
    walk: Walk,
    record_path: bool,
}

impl Visit for LoneWalk<'_> {
    type Out = Option<u64>;

    fn visit<G: Held>(self) -> Option<u64> {
        let LoneWalk { runner, ws, start, walk, record_path } = self;
        if G::ALONE_ON_DEGREES {
            return None;
        }
        let shared = runner.shared::<G>();
        let Workspace { degrees, group, moves, path, .. } = ws;
        let (Degrees::Narrow(own), Degrees::Narrow(pristine)) = (degrees, &runner.pristine) else {
            unreachable!("group kernels are for byte degrees")
        };
        let cells = G::slots(group, own).next().expect("a slot");
        G::reset(shared, pristine, cells);
        let path = record_path.then_some(path);
        Some(G::walk(shared, (cells, &*moves), start, path, walk.stop_when_doomed))
    }
}

/// The walks of one Warnsdorff task: which comes next, and how the last went.
#[derive(Debug)]
pub(super) struct Walks {
    method: Method,
    max_attempts: usize,
    attempts: usize,
    visited: u64,
    cells: u64,
}

/// One walk of a task.
#[derive(Debug, Clone, Copy)]
pub(super) struct Walk {
    pub(super) rotation: usize,
    pub(super) tiebreak: Tiebreak,
    /// Only the last walk's length is recorded, so an earlier one may stop
    /// once it cannot succeed.
    pub(super) stop_when_doomed: bool,
}

impl Walks {
    pub(super) fn new(method: Method, moves: usize, cells: u64) -> Walks {
        Walks { method, max_attempts: method.max_attempts(moves), attempts: 0, visited: 0, cells }
    }

    /// The next walk to make, or `None` when the task is done: a walk found
    /// a tour, or every attempt is made.
    pub(super) fn next(&self) -> Option<Walk> {
        if self.attempts == self.max_attempts || (self.attempts > 0 && self.visited == self.cells) {
            return None;
        }
        let (rotation, tiebreak) = self.method.attempt(self.attempts);
        Some(Walk { rotation, tiebreak, stop_when_doomed: self.attempts + 1 < self.max_attempts })
    }

    /// Records the cells the walk [`Walks::next`] gave visited.
    pub(super) fn record(&mut self, visited: u64) {
        self.attempts += 1;
        self.visited = visited;
    }

    /// The task's figures (no path, no time).
    pub(super) fn result(&self) -> TaskResult {
        let success = self.visited == self.cells;
        let outcome = if success { Outcome::Tour } else { Outcome::GaveUp };
        TaskResult { success, outcome, attempts: self.attempts as u32, visited: self.visited, micros: 0, path: None }
    }
}
