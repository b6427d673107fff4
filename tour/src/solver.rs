//! A configuration prepared for many tasks: the padded layout and starting
//! degrees are built once and shared; each thread owns a [`Workspace`].

use std::time::Instant;

use crate::config::Configuration;
use crate::error::Result;
use crate::layout::{Degrees, Layout};
use crate::method::Method;
use crate::seed::Rng;
use crate::walk::{walk, WalkMoves};

/// The outcome of one task (one start, one method).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskResult {
    /// The last walk visited every cell: an open tour.
    pub success: bool,
    /// Walks made.
    pub attempts: u32,
    /// Cells visited by the last walk.
    pub visited: u64,
    /// Wall time of the whole task in microseconds, reset and every attempt
    /// included, on one thread.
    pub micros: u64,
    /// The last walk's cells in order, as cell indices, when asked for.
    pub path: Option<Vec<u64>>,
}

/// A configuration ready to run tasks. Cheap to share across threads
/// (`&Solver` is `Sync`); the buffers that change live in a [`Workspace`].
#[derive(Debug)]
pub struct Solver {
    config: Configuration,
    layout: Layout,
    /// Starting degrees, copied into a workspace before each walk.
    pristine: Degrees,
    /// Negated offsets, when the move set is not closed under negation.
    predecessors: Option<Vec<isize>>,
}

impl Workspace {
    /// Bytes of board state this workspace holds (the path buffer aside).
    pub fn board_bytes(&self) -> usize {
        self.degrees.bytes()
    }
}

/// Per-thread scratch: the degree buffer a walk consumes, the rotated move
/// order and the path buffer. Reused across tasks of one solver.
#[derive(Debug)]
pub struct Workspace {
    degrees: Degrees,
    /// False until the first walk, so a fresh buffer skips its reset.
    dirty: bool,
    offsets: Vec<isize>,
    vectors: Vec<i32>,
    xy: Vec<i64>,
    path: Vec<usize>,
}

impl Solver {
    /// Builds the padded layout and starting degrees. Costs one pass over
    /// the board per move; do it once per configuration.
    pub fn new(config: Configuration) -> Result<Solver> {
        let layout = Layout::new(config.board(), config.moves())?;
        let pristine = if config.moves().len() < u8::MAX as usize {
            Degrees::Narrow(layout.initial_degrees::<u8>())
        } else {
            Degrees::Wide(layout.initial_degrees::<u16>())
        };
        let moves = config.moves();
        let symmetric = moves.iter().all(|m| {
            let neg: Vec<i32> = m.iter().map(|c| -c).collect();
            moves.iter().any(|o| o == neg.as_slice())
        });
        let predecessors = (!symmetric).then(|| layout.offsets().iter().map(|&o| -o).collect());
        Ok(Solver { config, layout, pristine, predecessors })
    }

    /// The configuration this solver runs.
    pub fn config(&self) -> &Configuration {
        &self.config
    }

    /// A fresh workspace for one thread.
    pub fn workspace(&self) -> Workspace {
        Workspace {
            degrees: self.pristine.clone(),
            dirty: false,
            offsets: Vec::with_capacity(self.config.moves().len()),
            vectors: Vec::with_capacity(self.config.moves().len() * self.config.board().dims()),
            xy: vec![0; self.config.board().dims()],
            path: Vec::new(),
        }
    }

    /// Bytes of board state the solver holds (shared by all workspaces).
    pub fn board_bytes(&self) -> usize {
        self.pristine.bytes()
    }

    /// Runs `method` from the start at cell index `start` (which must be on
    /// the board; see [`crate::Board::index_of`]). `seed` feeds the random
    /// methods; `record_path` keeps the last walk's cells.
    pub fn run(&self, ws: &mut Workspace, start: u64, method: Method, seed: u64, record_path: bool) -> TaskResult {
        let began = Instant::now();
        assert!(start < self.config.board().cells(), "start {start} is off the board");
        let k = self.config.moves().len();
        let cells = self.config.board().cells();
        let mut rng = Rng::new(seed);
        let padded_start = self.layout.padded(start);
        let mut attempts = 0u32;
        let mut visited = 0u64;
        for attempt in 0..method.max_attempts(k) {
            let (rotation, tiebreak) = method.attempt(attempt);
            self.rotate(ws, rotation);
            if ws.dirty {
                ws.degrees.reset_from(&self.pristine);
            }
            ws.dirty = true;
            ws.path.clear();
            self.layout.coords(padded_start, &mut ws.xy);
            let walk_moves = WalkMoves {
                offsets: &ws.offsets,
                vectors: &ws.vectors,
                predecessors: self.predecessors.as_deref(),
                sides: self.layout.sides(),
            };
            let path = record_path.then_some(&mut ws.path);
            visited = match &mut ws.degrees {
                Degrees::Narrow(deg) => walk(deg, &walk_moves, padded_start, tiebreak, &mut rng, &mut ws.xy, path),
                Degrees::Wide(deg) => walk(deg, &walk_moves, padded_start, tiebreak, &mut rng, &mut ws.xy, path),
            };
            attempts += 1;
            if visited == cells {
                break;
            }
        }
        let path = record_path.then(|| ws.path.iter().map(|&p| self.layout.unpadded(p)).collect());
        TaskResult { success: visited == cells, attempts, visited, micros: began.elapsed().as_micros() as u64, path }
    }

    /// Sets the workspace's move order to the canonical one rotated left by
    /// `rotation` (the first move becomes the last, `rotation` times).
    fn rotate(&self, ws: &mut Workspace, rotation: usize) {
        let moves = self.config.moves();
        let k = moves.len();
        ws.offsets.clear();
        ws.vectors.clear();
        for i in 0..k {
            let j = (i + rotation) % k;
            ws.offsets.push(self.layout.offsets()[j]);
            ws.vectors.extend_from_slice(moves.get(j));
        }
    }
}
