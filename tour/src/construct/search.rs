//! Exhaustive depth-first search for Hamiltonian paths and cycles on small
//! graphs: the base pieces of the block construction and whole boards too
//! small for it.
//!
//! The search is exact. It tries the unvisited neighbours in Warnsdorff order
//! (fewest onward moves first) and prunes only branches that provably hold no
//! solution, so it returns a solution exactly when one exists. Warnsdorff
//! ordering is heavy-tailed, so a few budgeted passes with other tie-breaks
//! run first; the last pass has no budget. Everything is deterministic: the
//! same problem always gets the same answer.

/// "No vertex".
const NONE: u16 = u16::MAX;

/// Knight moves in a fixed order.
pub(super) const KNIGHT: [(i32, i32); 8] = [(-2, -1), (-2, 1), (-1, -2), (-1, 2), (1, -2), (1, 2), (2, -1), (2, 1)];

/// Budget (visited nodes) of each pass but the last.
const PASS_BUDGET: u64 = 20_000;
/// Tie-break passes, the last one exhaustive.
const PASSES: u8 = 4;

/// The knight's graph of an `h` x `w` grid (cells row-major), with room for
/// extra edges.
pub(super) struct Graph {
    w: usize,
    adj: Vec<Vec<u16>>,
    /// Tie-break rank: cells far from the centre first.
    far: Vec<u16>,
}

impl Graph {
    /// The knight's graph of the `h` x `w` grid (h * w < 65535).
    pub(super) fn knight(h: usize, w: usize) -> Graph {
        let mut adj = vec![Vec::with_capacity(8); h * w];
        let mut far = vec![0; h * w];
        for i in 0..h {
            for j in 0..w {
                for (di, dj) in KNIGHT {
                    let (a, b) = (i as i32 + di, j as i32 + dj);
                    if (0..h as i32).contains(&a) && (0..w as i32).contains(&b) {
                        adj[i * w + j].push((a as usize * w + b as usize) as u16);
                    }
                }
                let (y, x) = (2 * i as i64 - (h as i64 - 1), 2 * j as i64 - (w as i64 - 1));
                far[i * w + j] = (u16::MAX as i64 - (y * y + x * x)).max(0) as u16;
            }
        }
        Graph { w, adj, far }
    }

    /// Number of vertices.
    pub(super) fn len(&self) -> usize {
        self.adj.len()
    }

    /// Vertex of cell (i, j).
    pub(super) fn at(&self, i: usize, j: usize) -> u16 {
        (i * self.w + j) as u16
    }

    /// Adds the edge a-b (no-op if present).
    pub(super) fn add_edge(&mut self, a: u16, b: u16) {
        if !self.adj[a as usize].contains(&b) {
            self.adj[a as usize].push(b);
            self.adj[b as usize].push(a);
        }
    }

    /// Neighbours of `v`.
    pub(super) fn neighbours(&self, v: u16) -> &[u16] {
        &self.adj[v as usize]
    }
}

/// A Hamiltonian path (or cycle) problem.
pub(super) struct Problem<'a> {
    pub graph: &'a Graph,
    /// First vertex.
    pub start: u16,
    /// Which vertices may come last.
    pub end_ok: Vec<bool>,
    /// Edges the answer must use; for a cycle the closing edge counts.
    pub forced: Vec<(u16, u16)>,
    /// A cycle: the caller lets only neighbours of `start` end (and, when
    /// `start` has a forced edge, the first forced edge is taken first).
    pub cycle: bool,
}

/// A Hamiltonian path from `p.start` meeting `p`'s conditions, or None when
/// there is none (proven by exhausting the search).
pub(super) fn hamiltonian(p: &Problem) -> Option<Vec<u16>> {
    let n = p.graph.len();
    let mut forced = vec![[NONE; 2]; n];
    for &(a, b) in &p.forced {
        for (x, y) in [(a, b), (b, a)] {
            let slot = &mut forced[x as usize];
            if slot[0] == NONE {
                slot[0] = y;
            } else if slot[1] == NONE {
                slot[1] = y;
            } else {
                return None; // three forced edges at one vertex
            }
        }
    }
    for pass in 0..PASSES {
        let budget = if pass + 1 == PASSES { u64::MAX } else { PASS_BUDGET };
        let mut s = Dfs {
            p,
            forced: &forced,
            visited: vec![false; n],
            deg: p.graph.adj.iter().map(|a| a.len() as u16).collect(),
            path: Vec::with_capacity(n),
            nodes: 0,
            budget,
            pass,
        };
        s.visit(p.start);
        if s.dfs(NONE) {
            return Some(s.path);
        }
        if s.nodes <= budget {
            return None; // this pass was exhaustive
        }
    }
    None
}

struct Dfs<'a> {
    p: &'a Problem<'a>,
    forced: &'a [[u16; 2]],
    visited: Vec<bool>,
    /// Unvisited neighbours of each vertex.
    deg: Vec<u16>,
    path: Vec<u16>,
    nodes: u64,
    budget: u64,
    pass: u8,
}

impl Dfs<'_> {
    fn visit(&mut self, v: u16) {
        self.visited[v as usize] = true;
        self.path.push(v);
        for &u in &self.p.graph.adj[v as usize] {
            self.deg[u as usize] -= 1;
        }
    }

    fn unvisit(&mut self, v: u16) {
        self.visited[v as usize] = false;
        self.path.pop();
        for &u in &self.p.graph.adj[v as usize] {
            self.deg[u as usize] += 1;
        }
    }

    /// Every forced edge joins consecutive vertices of the full path.
    fn forced_used(&self) -> bool {
        let n = self.path.len();
        let mut pos = vec![0usize; n];
        for (i, &v) in self.path.iter().enumerate() {
            pos[v as usize] = i;
        }
        self.p.forced.iter().all(|&(a, b)| {
            let d = pos[a as usize].abs_diff(pos[b as usize]);
            d == 1 || (self.p.cycle && d == n - 1)
        })
    }

    /// Tie-break key of `w` in this pass (smaller first).
    fn tie(&self, w: u16) -> u16 {
        let far = self.p.graph.far[w as usize];
        match self.pass {
            0 => far,
            1 => w,
            2 => u16::MAX - w,
            _ => u16::MAX - far,
        }
    }

    /// Extends the path; `must_end` is a vertex left with one way in, which
    /// can only come last.
    fn dfs(&mut self, must_end: u16) -> bool {
        self.nodes += 1;
        if self.nodes > self.budget {
            return false;
        }
        let n = self.p.graph.len();
        let len = self.path.len();
        let cur = self.path[len - 1];
        if len == n {
            return self.p.end_ok[cur as usize] && self.forced_used();
        }
        let Some(required) = self.forced_next(cur, len) else {
            return false;
        };
        let mut cand = [(0u16, 0u16, 0u16); 16];
        let mut count = 0;
        for &w in &self.p.graph.adj[cur as usize] {
            if self.visited[w as usize] || (required != NONE && w != required) {
                continue;
            }
            // Entering `w` from `cur` would give it a third path edge.
            let fw = self.forced[w as usize];
            if fw[1] != NONE && fw[0] != cur && fw[1] != cur {
                continue;
            }
            if w == must_end && len + 1 != n {
                continue;
            }
            if count < cand.len() {
                cand[count] = (self.deg[w as usize], self.tie(w), w);
                count += 1;
            }
        }
        cand[..count].sort_unstable();
        for &(_, _, w) in &cand[..count] {
            let Some(end) = self.end_after(cur, w, must_end) else {
                continue;
            };
            self.visit(w);
            if self.dfs(end) {
                return true;
            }
            self.unvisit(w);
            if self.nodes > self.budget {
                return false;
            }
        }
        false
    }

    /// The vertex an unused forced edge at `cur` (the path's `len`th)
    /// decides comes next, `NONE` if none does; `None` when the forced
    /// edges rule every next vertex out.
    fn forced_next(&self, cur: u16, len: usize) -> Option<u16> {
        let prev = if len >= 2 { self.path[len - 2] } else { NONE };
        let mut required = NONE;
        for f in self.forced[cur as usize] {
            if f == NONE || f == prev {
                continue;
            }
            if self.visited[f as usize] {
                // Only the closing edge of a cycle may point back.
                if self.p.cycle && f == self.p.start {
                    continue;
                }
                return None;
            }
            if required != NONE {
                // A cycle's start takes its first forced edge now and closes
                // on the second.
                if len == 1 && self.p.cycle {
                    continue;
                }
                return None;
            }
            required = f;
        }
        Some(required)
    }

    /// The vertex that must come last once the path steps from `cur` to
    /// `w` (`must_end` so far, `NONE` for none), or `None` when that step
    /// strands a vertex. Unvisited neighbours of `cur` other than `w` keep
    /// `deg` ways in or out (`w` counts, as the next current vertex): none
    /// means unreachable, one means it must be the last vertex.
    fn end_after(&self, cur: u16, w: u16, must_end: u16) -> Option<u16> {
        let mut end = must_end;
        for &u in &self.p.graph.adj[cur as usize] {
            if u == w || self.visited[u as usize] {
                continue;
            }
            match self.deg[u as usize] {
                0 => return None,
                1 if !self.p.end_ok[u as usize] || (end != NONE && end != u) => return None,
                1 => end = u,
                _ => {}
            }
        }
        Some(end)
    }
}
