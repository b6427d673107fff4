//! A tour as a satisfiability problem, for small boards: one variable per
//! move (an undirected edge of the move graph), every cell on exactly two
//! chosen moves, and a cut for every subtour a solution shows, until a
//! solution is one cycle or none is left.
//!
//! An open tour from `s` is a cycle through a virtual cell `z` whose edge
//! to `s` is forced; `z` is next to every other cell that can end the path
//! (on bipartite boards the cells of the last cell's colour, which the
//! start and the board's size fix). A closed tour is a cycle of the cells
//! alone.
//!
//! Degrees alone admit covers by several cycles. A solution's cycles
//! `S_1 .. S_m` (m > 1) are each cut off: some chosen move must cross from
//! `S_i` to the rest, a clause over the moves across its boundary. These
//! clauses hold for every tour, so unsatisfiability is proof that none
//! exists. A few rounds of cuts settle boards that an exhaustive search
//! over paths does not: on (4,3) 24x24 every open start is refuted after
//! two or three solutions and about twenty cuts, where the cover-pruned
//! search gave up after 10^6 nodes. A conflict-driven solver learns from
//! the cuts what the search would rediscover in every branch.
//!
//! The solver is `batsat` (a pure-Rust MiniSat), deterministic for the same
//! clauses; its conflicts are the budget.

use batsat::{lbool, Callbacks, ClauseKind, Lit, Solver, SolverInterface, SolverOpts, Var};

use super::graph::Graph;
use crate::cancel::{Cancel, Poll};
use crate::outcome::Outcome;

const NONE: u32 = u32::MAX;

/// Bytes the solver may hold on the largest board it takes (1,000 cells),
/// with room to spare: a whole `solve` of (4,3) 24x24 from (1,22) peaked
/// at 31 MB resident after 53,000 conflicts, the exhaustive search's
/// table included (the solver prunes its learnt clauses as it goes).
pub(super) const MEMORY: u64 = 64 << 20;

/// The result of [`search`].
pub(super) struct Found {
    /// Tour (with `path`), NoTour (proof) or GaveUp (budget).
    pub(super) outcome: Outcome,
    /// Padded cells from the start.
    pub(super) path: Option<Vec<u32>>,
    /// Conflicts the solver spent.
    pub(super) conflicts: u64,
}

/// Counts conflicts (each learns a clause) and stops the solver at the
/// limit, or once the task is cancelled (polled from the conflicts' work).
struct Budget<'a> {
    conflicts: u64,
    limit: u64,
    conflict_work: u64,
    poll: Poll<'a>,
    stopped: bool,
}

impl Callbacks for Budget<'_> {
    fn on_new_clause(&mut self, _: &[Lit], kind: ClauseKind) {
        if kind == ClauseKind::Learnt {
            self.conflicts += 1;
            self.stopped = self.poll.stop(self.conflicts.saturating_mul(self.conflict_work));
        }
    }

    fn stop(&self) -> bool {
        self.conflicts >= self.limit || self.stopped
    }
}

/// The cells (dense indices, the virtual one last) and moves of the problem.
struct Problem {
    /// Padded cell of every dense index (NONE for the virtual cell).
    padded: Vec<u32>,
    /// Both ends of every edge, in dense indices; edge `e` is variable `e`.
    ends: Vec<(u32, u32)>,
    /// Edges at every dense cell.
    at: Vec<Vec<u32>>,
    /// The virtual cell's edge to the start, for an open tour.
    pinned: Option<u32>,
}

/// Searches for a tour of `g` from padded cell `start` (closed when
/// `closed`) within `budget` conflicts. On a `bipartite` board (every move
/// changes colour) the virtual cell is joined only to the cells of the
/// last cell's colour. Gives up early once `cancel` is raised. The graph
/// must be symmetric; the caller checks.
pub(super) fn search(g: &Graph, start: usize, closed: bool, bipartite: bool, budget: u64, cancel: Cancel) -> Found {
    // A path of `cells` cells ends on the start's colour iff it has an odd
    // number of cells.
    let last_like_start = g.cells % 2 == 1;
    let start_even = g.is_even(start);
    let can_end = |c: usize| c == start || !bipartite || (g.is_even(c) == start_even) == last_like_start;
    let virtual_cell = (!closed).then_some(Virtual { can_end: &can_end, pinned: true });
    let p = problem(g, start, virtual_cell);
    let (mut solver, vars) = new_solver(g, &p, budget, cancel);
    cut_rounds(&mut solver, &vars, &p, closed)
}

/// Whether `g` has an open tour from any cell to any other, both among
/// `ends` (on a bipartite board of even cells, one of each colour; of odd
/// cells, `ends` must hold majority cells only), within `budget`
/// conflicts (or until `cancel` is raised). Found the tour's existence,
/// never its path.
pub(super) fn search_anywhere(g: &Graph, ends: &[usize], bipartite: bool, budget: u64, cancel: Cancel) -> Found {
    let Some(&first) = ends.first() else {
        return Found { outcome: Outcome::NoTour, path: None, conflicts: 0 };
    };
    let mut is_end = vec![false; g.out_degree.len()];
    for &c in ends {
        is_end[c] = true;
    }
    let can_end = |c: usize| is_end[c];
    let p = problem(g, first, Some(Virtual { can_end: &can_end, pinned: false }));
    let (mut solver, vars) = new_solver(g, &p, budget, cancel);
    if bipartite && g.cells.is_multiple_of(2) {
        // A path of even cells joins the two colours: exactly one end of
        // each, pairwise (on (4,3) 24x24 the refutation took 34,000 to
        // 66,000 conflicts with these clauses, 54,000 to over 400,000
        // without).
        let z = p.padded.len() - 1;
        let mut clause = Vec::new();
        for even in [true, false] {
            let lits: Vec<Lit> = p.at[z]
                .iter()
                .filter(|&&e| g.is_even(p.padded[p.ends[e as usize].0 as usize] as usize) == even)
                .map(|&e| Lit::new(vars[e as usize], true))
                .collect();
            exactly_one(&mut solver, &lits, &mut clause);
        }
    }
    let mut found = cut_rounds(&mut solver, &vars, &p, false);
    found.path = None;
    found
}

/// A solver holding `p`'s degree constraints (and its pinned edge), and
/// the variable of every edge, stopped after `budget` conflicts or once
/// `cancel` is raised.
fn new_solver<'a>(g: &Graph, p: &Problem, budget: u64, cancel: Cancel<'a>) -> (Solver<Budget<'a>>, Vec<Var>) {
    // Geometric restarts, not Luby's: on the hardest (4,3) 24x24 starts
    // they refuted in 0.4 to 0.9 s what took 0.7 to 5.6 s.
    let opts = SolverOpts { luby_restart: false, ..SolverOpts::default() };
    let conflict_work = super::sat_conflict_work(g.cells as u64);
    let budget = Budget { conflicts: 0, limit: budget, conflict_work, poll: Poll::new(cancel), stopped: false };
    let mut solver = Solver::new(opts, budget);
    let vars: Vec<Var> = p.ends.iter().map(|_| solver.new_var_default()).collect();
    let lit = |e: u32| Lit::new(vars[e as usize], true);
    let mut clause = Vec::new();
    for edges in &p.at {
        let lits: Vec<Lit> = edges.iter().map(|&e| lit(e)).collect();
        exactly_two(&mut solver, &lits, &mut clause);
    }
    if let Some(e) = p.pinned {
        clause.clear();
        clause.push(lit(e));
        solver.add_clause_reuse(&mut clause);
    }
    (solver, vars)
}

/// Solves, cutting off every subtour a solution shows, until a solution is
/// one cycle, none is left or the budget runs out.
fn cut_rounds(solver: &mut Solver<Budget>, vars: &[Var], p: &Problem, closed: bool) -> Found {
    let lit = |e: u32| Lit::new(vars[e as usize], true);
    let mut component = vec![NONE; p.padded.len()];
    loop {
        let answer = solver.solve_limited(&[]);
        let conflicts = solver.cb().conflicts;
        if answer == lbool::FALSE {
            return Found { outcome: Outcome::NoTour, path: None, conflicts };
        }
        if answer != lbool::TRUE {
            return Found { outcome: Outcome::GaveUp, path: None, conflicts };
        }
        let chosen: Vec<bool> = vars.iter().map(|&v| solver.value_var(v) == lbool::TRUE).collect();
        let partners = partners(p, &chosen);
        let count = cycles(&partners, &mut component);
        if count == 1 {
            let path = read(p, &partners, closed);
            return Found { outcome: Outcome::Tour, path: Some(path), conflicts };
        }
        // Every cycle must be left by some chosen move.
        let mut cuts: Vec<Vec<Lit>> = vec![Vec::new(); count];
        for (e, &(a, b)) in p.ends.iter().enumerate() {
            let (ca, cb) = (component[a as usize], component[b as usize]);
            if ca != cb {
                cuts[ca as usize].push(lit(e as u32));
                cuts[cb as usize].push(lit(e as u32));
            }
        }
        for mut cut in cuts {
            if !solver.add_clause_reuse(&mut cut) {
                return Found { outcome: Outcome::NoTour, path: None, conflicts };
            }
        }
    }
}

/// The virtual cell of an open tour: next to every cell that can end
/// the path, its edge to the start forced when `pinned`.
struct Virtual<'a> {
    can_end: &'a dyn Fn(usize) -> bool,
    pinned: bool,
}

/// The cells and edges: dense index 0 is the start, the virtual cell (if
/// any) last.
fn problem(g: &Graph, start: usize, virtual_cell: Option<Virtual>) -> Problem {
    let mut dense = vec![NONE; g.out_degree.len()];
    let mut padded = vec![start as u32];
    dense[start] = 0;
    for c in g.board_cells() {
        if c != start {
            dense[c] = padded.len() as u32;
            padded.push(c as u32);
        }
    }
    let mut ends = Vec::new();
    let mut at = vec![Vec::new(); padded.len() + usize::from(virtual_cell.is_some())];
    for (i, &c) in padded.iter().enumerate() {
        for &o in &g.succ {
            let u = (c as usize).wrapping_add_signed(o);
            if g.on_board(u) && (dense[u] as usize) > i {
                let e = ends.len() as u32;
                ends.push((i as u32, dense[u]));
                at[i].push(e);
                at[dense[u] as usize].push(e);
            }
        }
    }
    let mut pinned = None;
    if let Some(v) = virtual_cell {
        let z = padded.len() as u32;
        for (i, &c) in padded.iter().enumerate() {
            if (v.can_end)(c as usize) {
                let e = ends.len() as u32;
                if i == 0 && v.pinned {
                    pinned = Some(e);
                }
                ends.push((i as u32, z));
                at[i].push(e);
                at[z as usize].push(e);
            }
        }
        padded.push(NONE);
    }
    Problem { padded, ends, at, pinned }
}

/// Exactly one of `lits`: at least one, and at most one as a clause for
/// every pair.
fn exactly_one(solver: &mut Solver<Budget>, lits: &[Lit], clause: &mut Vec<Lit>) {
    clause.clear();
    clause.extend_from_slice(lits);
    solver.add_clause_reuse(clause);
    for (i, &a) in lits.iter().enumerate() {
        for &b in &lits[i + 1..] {
            clause.clear();
            clause.extend_from_slice(&[!a, !b]);
            solver.add_clause_reuse(clause);
        }
    }
}

/// Exactly two of `lits`: at least two (every set of all but one holds a
/// true literal) and at most two (a sequential counter: `s1[i]`, `s2[i]`
/// say that at least one, two of the first i+1 are true).
fn exactly_two(solver: &mut Solver<Budget>, lits: &[Lit], clause: &mut Vec<Lit>) {
    let n = lits.len();
    if n < 2 {
        clause.clear();
        solver.add_clause_reuse(clause);
        return;
    }
    for skip in 0..n {
        clause.clear();
        clause.extend(lits.iter().enumerate().filter(|&(i, _)| i != skip).map(|(_, &l)| l));
        solver.add_clause_reuse(clause);
    }
    if n == 2 {
        return;
    }
    let mut add = |solver: &mut Solver<Budget>, c: &[Lit]| {
        clause.clear();
        clause.extend_from_slice(c);
        solver.add_clause_reuse(clause);
    };
    let s1: Vec<Lit> = (0..n - 1).map(|_| Lit::new(solver.new_var_default(), true)).collect();
    let s2: Vec<Lit> = (0..n - 1).map(|_| Lit::new(solver.new_var_default(), true)).collect();
    add(solver, &[!lits[0], s1[0]]);
    add(solver, &[!s2[0]]);
    for i in 1..n - 1 {
        add(solver, &[!lits[i], s1[i]]);
        add(solver, &[!s1[i - 1], s1[i]]);
        add(solver, &[!lits[i], !s1[i - 1], s2[i]]);
        add(solver, &[!s2[i - 1], s2[i]]);
        add(solver, &[!lits[i], !s2[i - 1]]);
    }
    add(solver, &[!lits[n - 1], !s2[n - 2]]);
}

/// Each dense cell's two partners under the chosen edges.
fn partners(p: &Problem, chosen: &[bool]) -> Vec<[u32; 2]> {
    let mut out = vec![[NONE; 2]; p.padded.len()];
    for (e, &(a, b)) in p.ends.iter().enumerate() {
        if chosen[e] {
            for (x, y) in [(a, b), (b, a)] {
                let slot = usize::from(out[x as usize][0] != NONE);
                out[x as usize][slot] = y;
            }
        }
    }
    out
}

/// Labels the cycles of a 2-regular `partners`; returns their number.
fn cycles(partners: &[[u32; 2]], component: &mut [u32]) -> usize {
    component.fill(NONE);
    let mut count = 0;
    for c in 0..partners.len() {
        if component[c] != NONE {
            continue;
        }
        let (mut prev, mut cur) = (NONE, c as u32);
        while component[cur as usize] == NONE {
            component[cur as usize] = count as u32;
            let [x, y] = partners[cur as usize];
            (prev, cur) = (cur, if x != prev { x } else { y });
        }
        count += 1;
    }
    count
}

/// The single cycle from the start (dense 0), away from the virtual cell.
fn read(p: &Problem, partners: &[[u32; 2]], closed: bool) -> Vec<u32> {
    let z = if closed { NONE } else { p.padded.len() as u32 - 1 };
    let [x, y] = partners[0];
    let (mut prev, mut cur) = (0, if x == z { y } else { x });
    let mut path = vec![p.padded[0]];
    while cur != 0 && cur != z {
        path.push(p.padded[cur as usize]);
        let [a, b] = partners[cur as usize];
        (prev, cur) = (cur, if a != prev { a } else { b });
    }
    path
}

#[cfg(test)]
mod tests;
