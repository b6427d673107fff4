//! Several tasks' walks advanced together ([`Runner::run_tasks`]): each
//! slot holds a task and makes its walks; whenever busy slots stand in
//! walks that advance together (on a [`GroupKernel`]: W+ on 16-bit cells or
//! W on byte degrees in 2D, up to six at once; W+ on keyed cells in 2D or
//! rule W on scaled degrees in 3D, two at once), those of the kind most
//! busy slots stand in go on together until one ends (the others wait
//! their turn). The other walks run alone. Each slot keeps its walks in
//! buffers of its own, so a walk paused in one slot is never touched by
//! another's. Nothing here names a kernel: each runs through
//! [`GroupKernel::visit`].

use std::time::{Duration, Instant};

use super::walks::{Walk, Walks};
use super::{Runner, Task, TaskResult, Workspace};
use crate::layout::{BoardCell, Degrees, MoveTable, Padded};
use crate::seed::Rng;
use crate::walk::kernel::WALKS_AT_ONCE;
use crate::walk::select::{GroupKernel, Held, Visit};
use crate::walk::{BufferedWalk, PausedWalk, Tiebreak};

impl Runner {
    /// The tasks `indices` of `tasks` (all of which [`Runner::groups`]),
    /// several at a time. Returns (index, result) per task.
    pub(super) fn run_grouped(
        &self,
        ws: &mut Workspace,
        tasks: &[Task],
        indices: &[usize],
    ) -> Vec<(usize, TaskResult)> {
        // Each group kernel the tasks' walks take, at its width (timed on
        // first use).
        let used = |t: Tiebreak| {
            let walked = indices.iter().any(|&i| tasks[i].method.walks(t));
            self.kernels.grouped(t).filter(|_| walked && indices.len() > 1).map(|k| (k, self.group_width(k)))
        };
        let widths = [used(Tiebreak::Distance), used(Tiebreak::First)];
        let width = |k: GroupKernel| widths.iter().flatten().find(|&&(j, _)| j == k).map_or(2, |&(_, n)| n);
        self.run_grouped_at(ws, (tasks, indices), &width)
    }

    /// [`Runner::run_grouped`] with at most `width(kind)` walks of each
    /// group kernel advancing together.
    pub(super) fn run_grouped_at(
        &self,
        ws: &mut Workspace,
        (tasks, indices): (&[Task], &[usize]),
        width: &dyn Fn(GroupKernel) -> usize,
    ) -> Vec<(usize, TaskResult)> {
        let at_once = |k: GroupKernel| k.at_once().min(width(k)).max(1);
        let kinds = [self.kernels.w_plus(), self.kernels.grouped(Tiebreak::First)];
        let slots = kinds.into_iter().flatten().map(at_once).max().unwrap_or(2);
        let mut done = Vec::with_capacity(indices.len());
        let mut queue = indices.iter().copied().peekable();
        let mut slots: Vec<Option<Slot>> = (0..slots).map(|_| None).collect();
        let others_busy =
            |slots: &[Option<Slot>], i: usize| slots.iter().enumerate().any(|(j, s)| j != i && s.is_some());
        loop {
            for i in 0..slots.len() {
                while slots[i].is_none() {
                    let Some(index) = queue.next() else { break };
                    let began = Instant::now();
                    let mut s = Slot::new(self, index, &tasks[index]);
                    let partnered = queue.peek().is_some() || others_busy(&slots, i);
                    let ready = self.next_grouped_walk(ws, i, &mut s, partnered);
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
            let at_once = kind.map_or(1, at_once);
            let group: Vec<usize> =
                (0..slots.len()).filter(|&i| slots[i].as_ref().is_some_and(|s| s.kind == kind)).take(at_once).collect();
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
                let ready = self.next_grouped_walk(ws, i, s, partnered);
                s.charge(began.elapsed());
                if !ready {
                    let s = slots[i].take().expect("the slot holds a task");
                    done.push(self.finish(tasks, s));
                }
            }
        }
    }

    /// Makes a slot's walks up to its next walk that advances together,
    /// which it sets up on the slot's buffer; false when the task has no
    /// walk left. The walks before it run alone, on the slot's own
    /// buffers; so do all of them when no partner is left (`partnered`
    /// false), on the kernels that are fastest alone.
    fn next_grouped_walk(&self, ws: &mut Workspace, slot: usize, s: &mut Slot, partnered: bool) -> bool {
        while let Some(walk) = s.walks.next() {
            self.rotate(ws, walk.rotation);
            let kind = self.kernels.grouped(walk.tiebreak);
            let next = Next { runner: self, ws: &mut *ws, slot, s: &mut *s, walk, partnered };
            let ready = match kind {
                Some(k) => k.visit(next),
                None => next.on_degrees(),
            };
            if ready {
                s.moves.copy_from(&ws.moves);
                (s.kind, s.stop_when_doomed) = (kind, walk.stop_when_doomed);
                return true;
            }
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
        let kernel = kind.expect("a busy slot stands in a walk that advances together");
        let out = kernel.visit(Together { runner: self, ws, slots, kind, at_once: group.len() });
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

    /// A grouped task's result.
    fn finish(&self, tasks: &[Task], s: Slot) -> (usize, TaskResult) {
        let t = &tasks[s.index];
        let micros = (s.nanos / 1000) as u64;
        (s.index, self.settle(t.start, t.method, &t.options, TaskResult { micros, ..s.walks.result() }))
    }
}

/// A slot's next walk on its group kernel: set up to advance together
/// (true), or run alone to its end.
struct Next<'a> {
    runner: &'a Runner,
    ws: &'a mut Workspace,
    slot: usize,
    s: &'a mut Slot,
    walk: Walk,
    partnered: bool,
}

impl Next<'_> {
    /// The walk alone on the slot's byte degrees, where rule W is fastest
    /// alone and walks that group in no way run.
    fn on_degrees(self) -> bool {
        let Next { runner, ws, slot, s, walk, .. } = self;
        ws.dirty = true;
        let Workspace { degrees, group, moves, xy, .. } = ws;
        let (Degrees::Narrow(own), Degrees::Narrow(pristine)) = (degrees, &runner.pristine) else {
            unreachable!("walks that advance together have byte degrees")
        };
        let degrees = group.degrees(own, slot, runner.own_degrees());
        degrees.copy_from(pristine);
        // Tasks that advance together are deterministic (no random draw)
        // and record no path.
        let mut rng = Rng::new(0);
        let visited =
            runner.walk_on(degrees, (&*moves, xy), s.start, walk.tiebreak, &mut rng, None, walk.stop_when_doomed);
        s.walks.record(visited);
        false
    }
}

impl Visit for Next<'_> {
    type Out = bool;

    fn visit<G: Held>(self) -> bool {
        if !self.partnered && G::ALONE_ON_DEGREES {
            return self.on_degrees();
        }
        let Next { runner, ws, slot, s, walk, partnered } = self;
        let shared = runner.shared::<G>();
        ws.dirty = true;
        let Workspace { degrees, group, moves, .. } = ws;
        let (Degrees::Narrow(own), Degrees::Narrow(pristine)) = (degrees, &runner.pristine) else {
            unreachable!("walks that advance together have byte degrees")
        };
        let cells = G::slots(group, own).nth(slot).expect("a buffer a slot");
        G::reset(shared, pristine, cells);
        if partnered {
            s.progress = G::begin(cells, s.start);
            true
        } else {
            s.walks.record(G::walk(shared, (cells, &*moves), s.start, None, walk.stop_when_doomed));
            false
        }
    }
}

/// The walks of the busy slots that stand in walks of `kind`, advanced
/// together on its kernel, each on its slot's cells.
struct Together<'a> {
    runner: &'a Runner,
    ws: &'a mut Workspace,
    slots: &'a mut [Option<Slot>],
    kind: Option<GroupKernel>,
    /// Walks of `kind` that go on: the first busy slots' standing in it.
    at_once: usize,
}

impl Visit for Together<'_> {
    type Out = [bool; WALKS_AT_ONCE];

    fn visit<G: Held>(self) -> Self::Out {
        let Together { runner, ws, slots, kind, at_once } = self;
        let shared = runner.shared::<G>();
        ws.dirty = true;
        let Workspace { degrees, group, .. } = ws;
        let Degrees::Narrow(own) = degrees else { unreachable!("walks that advance together have byte degrees") };
        // Each kernel checks that each slot's walk is one it began on the
        // slot's buffer, in moves of the same layout.
        let mut walks: Vec<BufferedWalk<'_, G::Cell, G::Kind>> = slots
            .iter_mut()
            .zip(G::slots(group, own))
            .filter_map(|(s, cells)| Some(s.as_mut().filter(|s| s.kind == kind)?.buffered(cells)))
            .take(at_once)
            .collect();
        G::run(shared, &mut walks)
    }
}

/// A task [`Runner::run_tasks`] is running in one of its slots.
#[derive(Debug)]
struct Slot {
    /// The task's place in the batch.
    index: usize,
    /// The start's board cell.
    start: BoardCell,
    walks: Walks,
    /// The current walk: the kernel it advances together on, its move order (a row of offsets
    /// per phase), where it stands, whether it may stop when doomed.
    kind: Option<GroupKernel>,
    moves: MoveTable,
    progress: PausedWalk,
    stop_when_doomed: bool,
    /// Time charged to the task so far.
    nanos: u128,
}

impl Slot {
    fn new(runner: &Runner, index: usize, task: &Task) -> Slot {
        let config = &runner.config;
        Slot {
            index,
            start: runner.layout.board_cell(task.start),
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
