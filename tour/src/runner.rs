//! A configuration prepared for many tasks: the padded layout and starting
//! degrees are built once and shared; each thread owns a [`Workspace`].

use std::sync::OnceLock;
use std::time::Instant;

use crate::cancel::{uncancelled, Cancel, Cancelled};
use crate::config::Configuration;
use crate::error::Result;
use crate::exists::{known, Claim, Existence};
use crate::layout::{Degrees, Layout, MoveTable};
use crate::method::Method;
use crate::outcome::Outcome;
use crate::walk::cpu::Cpu;
use crate::walk::select::{Buffers, Held, Kernels, Tables};
use crate::walk::w_3d_scaled::Scan;
use crate::walk::Tiebreak;

mod group;
mod group_width;
mod layout_choice;
#[cfg(test)]
mod tests;
mod walks;

/// The outcome of one task (one start, one method).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskResult {
    /// A tour was found (open; closed for the nn methods, and for solve
    /// and bt when asked).
    pub success: bool,
    /// Tour, proven no-tour (colour rule, exhaustive search, construction),
    /// or gave up.
    pub outcome: Outcome,
    /// Effort: walks made (Warnsdorff methods), search nodes (bt,
    /// saturating), network iterations (nn), 1 (construct), rotations
    /// plus search nodes (solve, saturating).
    pub attempts: u32,
    /// Cells visited by the last walk (the tour's length for the others,
    /// 0 when they found none).
    pub visited: u64,
    /// Time one thread spent on the whole task in microseconds, reset and
    /// every attempt included. [`Runner::run_tasks`] advances several
    /// tasks' walks together and charges each an equal share of the time
    /// they share.
    pub micros: u64,
    /// The last walk's cells in order, as cell indices, when asked for.
    pub path: Option<Vec<u64>>,
}

/// A configuration ready to run tasks. Cheap to share across threads
/// (`&Runner` is `Sync`); the buffers that change live in a [`Workspace`].
#[derive(Debug)]
pub struct Runner {
    config: Configuration,
    layout: Layout,
    /// Starting degrees, copied into a workspace before each walk.
    pristine: Degrees,
    /// The CPU features the kernels may use.
    cpu: Cpu,
    /// Which kernels the walks run on ([`Kernels::choose`]).
    kernels: Kernels,
    /// What the walks on those kernels share, built by the first walk that
    /// needs it.
    tables: Tables,
    /// The negated moves, when the move set is not closed under negation.
    predecessors: Option<MoveTable>,
    /// What theorems prove about tours here, to tell "gave up" from "none".
    existence: Existence,
    /// What `solve` keeps across this board's tasks.
    solve_shared: crate::solve::Shared,
    /// Walks W+'s and rule W's window kernels advance together at most,
    /// each timed by the first batch that groups them (`group_width`).
    widths: [OnceLock<usize>; 2],
}

impl Workspace {
    /// Bytes of board state this workspace holds (the path buffer aside).
    pub fn board_bytes(&self) -> usize {
        self.degrees.bytes() + self.group.bytes()
    }
}

/// Settings of one task beyond its start and method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskOptions {
    /// The task seed (random methods); see [`Configuration::task_seed`].
    pub seed: u64,
    /// Keep the tour (or the last walk) as a path.
    pub record_path: bool,
    /// Node budget of `bt`, work budget of `solve`.
    pub budget: u64,
    /// Iteration cap of the `nn` methods (seed 004 uses 100).
    pub iterations: u32,
    /// Ask `solve` and `bt` for a closed tour (the `nn` methods always
    /// look for one; the walks never do).
    pub closed: bool,
}

impl Default for TaskOptions {
    fn default() -> Self {
        TaskOptions {
            seed: 0,
            record_path: false,
            budget: DEFAULT_BUDGET,
            iterations: DEFAULT_ITERATIONS,
            closed: false,
        }
    }
}

/// Most tasks [`Runner::tasks_at_once`] hands a batch: aw+ (3,2) N=400,
/// 200 starts on one thread, 1.09-1.24 ms a task in batches of 32 against
/// 1.21-1.27 in batches of 8 (the batch's last walks advance with fewer
/// partners).
pub(crate) const MAX_TASKS_AT_ONCE: usize = 32;

/// Default budget of `bt` (nodes) and `solve` (units of work): seconds of
/// search, not hours.
pub const DEFAULT_BUDGET: u64 = 100_000_000;
/// Default iteration cap of the `nn` methods, as in seed 004.
pub const DEFAULT_ITERATIONS: u32 = 100;

/// Per-thread scratch: the degree buffer a walk consumes, the rotated move
/// order and the path buffer. Reused across tasks of one runner.
#[derive(Debug)]
pub struct Workspace {
    degrees: Degrees,
    /// False until the first walk, so a fresh buffer skips its reset.
    dirty: bool,
    /// The cells of walks on the group kernels, alone or advancing
    /// together ([`Runner::run_tasks`]), empty until used.
    group: Buffers,
    /// The moves in the current walk's order.
    moves: MoveTable,
    xy: Vec<i64>,
    path: Vec<usize>,
}

impl Runner {
    /// Builds the padded layout and starting degrees. Costs one pass over
    /// the board per move; do it once per configuration.
    pub fn new(config: Configuration) -> Result<Runner> {
        Runner::on_cpu(config, Cpu::detect())
    }

    /// [`Runner::new`] with the kernels `cpu` allows (tests turn features
    /// off to run the fallbacks).
    pub(crate) fn on_cpu(config: Configuration, cpu: Cpu) -> Result<Runner> {
        layout_choice::runner(config, cpu)
    }

    /// [`Runner::on_cpu`] with rule-W walks on the window scan `windows`
    /// (a row-major layout) or, `None`, on a tiled one.
    fn on_layout(config: Configuration, cpu: Cpu, windows: Option<Scan>) -> Result<Runner> {
        let tile_bits = crate::walk::select::tile_bits(config.board(), windows);
        let layout = Layout::with_tiles(config.board(), config.moves(), tile_bits)?;
        let pristine = if config.moves().len() < u8::MAX as usize {
            Degrees::Narrow(layout.degree_buffer::<u8>())
        } else {
            Degrees::Wide(layout.degree_buffer::<u16>())
        };
        let predecessors = (!config.moves().closed_under_negation()).then(|| layout.predecessors());
        let existence = known(config.board(), config.moves());
        let kernels = Kernels::on_layout(config.board(), config.moves(), cpu, windows);
        Ok(Runner {
            config,
            layout,
            pristine,
            cpu,
            kernels,
            tables: Tables::default(),
            predecessors,
            existence,
            solve_shared: Default::default(),
            widths: Default::default(),
        })
    }

    /// The configuration this runner runs.
    pub fn config(&self) -> &Configuration {
        &self.config
    }

    /// How its board lies in memory: `row-major`, or `tiled` (4x4x4
    /// tiles on 3D boards), which `ksweep bench` reports where a runner
    /// chose by timing (`layout_choice`).
    pub fn layout_name(&self) -> &'static str {
        if self.layout.phase_mask() == 0 {
            "row-major"
        } else {
            "tiled"
        }
    }

    /// The kernels its walks run on.
    #[cfg(test)]
    pub(crate) fn kernels(&self) -> Kernels {
        self.kernels
    }

    /// A fresh workspace for one thread.
    pub fn workspace(&self) -> Workspace {
        Workspace {
            degrees: self.pristine.clone(),
            dirty: false,
            group: Buffers::default(),
            moves: MoveTable::default(),
            xy: vec![0; self.config.board().dims()],
            path: Vec::new(),
        }
    }

    /// Bytes of board state the runner holds (shared by all workspaces).
    pub fn board_bytes(&self) -> usize {
        self.pristine.bytes() + self.tables.bytes()
    }

    /// Runs `method` from the start at cell index `start` with default
    /// options (see [`Runner::run_task`]).
    pub fn run(&self, ws: &mut Workspace, start: u64, method: Method, seed: u64, record_path: bool) -> TaskResult {
        self.run_task(ws, start, method, &TaskOptions { seed, record_path, ..TaskOptions::default() })
    }

    /// Checks that `method` can run on this configuration; see
    /// [`Method::supports`].
    pub fn supports(&self, method: Method) -> Result<()> {
        method.supports(self.config.board(), self.config.moves())
    }

    /// Runs `method` from the start at cell index `start` (which must be on
    /// the board; see [`crate::Board::index_of`]).
    pub fn run_task(&self, ws: &mut Workspace, start: u64, method: Method, options: &TaskOptions) -> TaskResult {
        uncancelled(self.run_task_cancellable(ws, start, method, options, Cancel::NEVER))
    }

    /// [`Runner::run_task`], stopped within milliseconds once `cancel` is
    /// raised: `bt`, `solve` and the `nn` methods poll it as they work (the
    /// walks, bounded by the board, do not). A task that ends with the flag
    /// raised, or starts with it raised, has no result (it may have stopped
    /// part way): `Err(Cancelled)`. A flag once raised must stay so.
    pub fn run_task_cancellable(
        &self,
        ws: &mut Workspace,
        start: u64,
        method: Method,
        options: &TaskOptions,
        cancel: Cancel,
    ) -> Result<TaskResult, Cancelled> {
        let began = Instant::now();
        assert!(start < self.config.board().cells(), "start {start} is off the board");
        if cancel.is_raised() {
            return Err(Cancelled);
        }
        let result = if method.is_warnsdorff() {
            self.run_walks(ws, start, method, options)
        } else {
            self.run_solver(start, method, options, cancel)
        };
        if cancel.is_raised() {
            return Err(Cancelled);
        }
        let micros = began.elapsed().as_micros() as u64;
        Ok(self.settle(start, method, options, TaskResult { micros, ..result }))
    }

    /// Runs `tasks` on one thread: the same results as [`Runner::run_task`]
    /// on each in turn, but for `micros`. Several tasks' walks advance
    /// together, a step of each in turn, which hides each walk's latency
    /// behind the others' work (no path asked for): W+ walks on 16-bit
    /// cells up to six at a time (w+, aw+ and mw on the 2D leapers' boards;
    /// aw+ (3,2) N=400, 1.07-1.15 ms a task four at a time against
    /// 1.56-1.80 for keyed cells in pairs, `ksweep bench`), and rule W
    /// walks on those boards' byte degrees up to six at a time; W+ walks on
    /// keyed cells two at a time where those do not fit (7.8 ns a step
    /// alone against 5.7 ns in a pair), and rule W walks of 24 moves on 3D
    /// boards two at a time (w, aw and mw; (2,1) N=140, 19.5 against 15.2
    /// ns). Each task is charged
    /// its own work and an equal share of the time its walks shared with
    /// others'.
    pub fn run_tasks(&self, ws: &mut Workspace, tasks: &[Task]) -> Vec<TaskResult> {
        uncancelled(self.run_tasks_cancellable(ws, tasks, Cancel::NEVER))
    }

    /// [`Runner::run_tasks`], stopped once `cancel` is raised (see
    /// [`Runner::run_task_cancellable`]): then no task of the batch has a
    /// result.
    pub fn run_tasks_cancellable(
        &self,
        ws: &mut Workspace,
        tasks: &[Task],
        cancel: Cancel,
    ) -> Result<Vec<TaskResult>, Cancelled> {
        let mut results: Vec<Option<TaskResult>> = vec![None; tasks.len()];
        let mut grouped = Vec::new();
        for (i, t) in tasks.iter().enumerate() {
            assert!(t.start < self.config.board().cells(), "start {} is off the board", t.start);
            if self.groups(t) {
                grouped.push(i);
            } else {
                results[i] = Some(self.run_task_cancellable(ws, t.start, t.method, &t.options, cancel)?);
            }
        }
        if cancel.is_raised() {
            return Err(Cancelled);
        }
        for (i, r) in self.run_grouped(ws, tasks, &grouped) {
            results[i] = Some(r);
        }
        Ok(results.into_iter().map(|r| r.expect("every task ran")).collect())
    }

    /// How many tasks a thread should hand [`Runner::run_tasks`] at once
    /// when `threads` share `tasks`: at least two, so walks can advance
    /// together, and up to 32 (`MAX_TASKS_AT_ONCE`), so that the six walks of
    /// 16-bit cells rarely run short of partners before a batch ends, but
    /// no more than leaves every thread about four batches to balance the
    /// load with (a lone thread takes them all); one each when there are
    /// too few tasks to give every thread two.
    pub fn tasks_at_once(tasks: usize, threads: usize) -> usize {
        let threads = threads.max(1);
        if tasks < 2 * threads {
            1
        } else if threads == 1 {
            tasks.min(MAX_TASKS_AT_ONCE)
        } else {
            (tasks / (4 * threads)).clamp(2, MAX_TASKS_AT_ONCE)
        }
    }

    /// Whether [`Runner::run_tasks`] advances this task's walks together
    /// with others': some of them run on a group kernel, and no path is
    /// asked for.
    fn groups(&self, task: &Task) -> bool {
        let m = task.method;
        let grouped = |t: Tiebreak| self.kernels.grouped(t).is_some() && m.walks(t);
        (grouped(Tiebreak::Distance) || grouped(Tiebreak::First)) && !task.options.record_path
    }

    /// A finished task's outcome: a failure is a proof of absence when the
    /// colour rule excludes the start or a theorem rules the tour out
    /// (closed tours for nn).
    fn settle(&self, start: u64, method: Method, options: &TaskOptions, mut result: TaskResult) -> TaskResult {
        if result.outcome == Outcome::GaveUp {
            let claim = if method.seeks_closed(options.closed) { self.existence.closed } else { self.existence.open };
            if !self.config.is_eligible(start) || matches!(claim, Claim::Impossible(_)) {
                result.outcome = Outcome::NoTour;
            }
        }
        result
    }

    /// The non-walking methods; they keep their own memory. Those that
    /// can run long give up early once `cancel` is raised.
    fn run_solver(&self, start: u64, method: Method, options: &TaskOptions, cancel: Cancel) -> TaskResult {
        let (board, moves) = (self.config.board(), self.config.moves());
        let (closed, seed, budget) = (options.closed, options.seed, options.budget);
        let (outcome, path, attempts) = match method {
            Method::Bt => {
                let r = crate::backtrack::search_within(board, moves, start, closed, budget, cancel);
                (r.outcome, r.path, r.nodes.min(u32::MAX as u64) as u32)
            }
            Method::Solve => {
                let r = self.solve_shared.solve_within(board, moves, start, closed, seed, budget, cancel);
                (r.outcome, r.path, r.repairs.min(u32::MAX as u64) as u32)
            }
            Method::Construct => match crate::construct::construct(board, moves, start) {
                Ok(c) => (c.outcome, c.path, 1),
                Err(_) => (Outcome::GaveUp, None, 0),
            },
            Method::Nn(remedy) => {
                let r = crate::neural::solve_within(board, moves, start, remedy, seed, options.iterations, cancel);
                (r.outcome, r.path, r.iterations)
            }
            _ => unreachable!("walking methods run in run_walks"),
        };
        let success = outcome == Outcome::Tour;
        let visited = path.as_ref().map_or(0, |p| p.len() as u64);
        TaskResult { success, outcome, attempts, visited, micros: 0, path: path.filter(|_| options.record_path) }
    }

    /// Kernel `G`'s shared state, built by the first walk that needs it.
    fn shared<G: Held>(&self) -> &G::Shared {
        let Degrees::Narrow(d) = &self.pristine else { unreachable!("group kernels are for byte degrees") };
        self.tables.get::<G>(&self.layout, self.config.moves(), d, self.cpu)
    }

    /// Sets the workspace's move order to the canonical one rotated left by
    /// `rotation` (the first move becomes the last, `rotation` times).
    fn rotate(&self, ws: &mut Workspace, rotation: usize) {
        self.layout.rotated_moves(rotation, &mut ws.moves);
    }
}

/// One task of [`Runner::run_tasks`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Task {
    /// The start's cell index.
    pub start: u64,
    /// The method to run from it.
    pub method: Method,
    /// Its seed, budget and the rest.
    pub options: TaskOptions,
}
