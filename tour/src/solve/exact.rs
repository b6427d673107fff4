//! Exhaustive search pruned by cycle covers, for small bipartite boards
//! (every move changes colour, the move set closed under negation).
//!
//! A node is a path from the start ending at `c` with unvisited cells `U`.
//! The node holds a tour iff `c, q1, .., qm` walks through `U` (and, for a
//! closed tour, `qm` is next to the start). Such a path is one
//! structure of degrees: `c` has one partner in `U`, every cell of `U` two
//! in `U ∪ {c, z}`, and `z` one, where `z` is the path's far end marker: a
//! virtual cell next to every cell of `U` of the last cell's colour (which
//! is fixed by the start and the board: a path alternates colours), or for
//! a closed tour the start itself, through its real moves. An edge from `c`
//! to `z` is left out (`c` is `qm` only once `U` is empty). So a node
//! without such a degree-constrained subgraph (a b-matching of the
//! bipartite move graph, by augmenting paths) holds no tour, nor does one
//! where some cell of `U` cannot be reached from `c` through `U`. These two
//! checks subsume `bt`'s degree rules and prune far more: the matching sees
//! every cell's share of its neighbours at once.
//!
//! The matching is kept from node to node: stepping `c -> v` frees `c`'s
//! partners and asks one partner fewer of `v`, which at most two augmenting
//! paths repair, and every change is logged so that backtracking restores
//! it exactly. Children are tried with `c`'s partner in the matching first
//! (the cover's suggestion), then by fewest unvisited neighbours.

use super::failures::Failures;
use super::graph::{next_stamp, Graph};
use crate::cancel::{Cancel, Poll};
use crate::outcome::Outcome;

const NONE: u32 = u32::MAX;

/// What a cell is to the current node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Border, or on the path behind its end.
    Out,
    /// In `U`: two partners.
    Free,
    /// The path's end `c`: one partner.
    End,
    /// The far end marker `z` (virtual, or the start of a closed tour): one
    /// partner.
    Anchor,
    /// The start of a closed tour at the root: the end and the anchor at
    /// once, two partners.
    EndAnchor,
}

impl Role {
    fn demand(self) -> usize {
        match self {
            Role::Out => 0,
            Role::End | Role::Anchor => 1,
            Role::Free | Role::EndAnchor => 2,
        }
    }
}

/// The result of a search.
pub(super) struct Found {
    /// Tour (with `path`), NoTour (every branch pruned or exhausted) or
    /// GaveUp (budget).
    pub(super) outcome: Outcome,
    /// Padded cells from the start.
    pub(super) path: Option<Vec<u32>>,
    /// Nodes expanded.
    pub(super) nodes: u64,
}

/// A search over one graph: roles, the matching and its undo log.
struct Search<'g> {
    g: &'g Graph,
    role: Vec<Role>,
    /// True for cells of the start's colour (the virtual cell: the colour
    /// its neighbours are not).
    start_colour: Vec<bool>,
    /// Colour of the path's last cell, relative to the start's.
    last_like_start: bool,
    /// The anchor: the virtual cell (index `g.out_degree.len()`) for an
    /// open tour, the start for a closed one.
    z: u32,
    virtual_z: bool,
    mate: Vec<[u32; 2]>,
    /// (cell, slot, old value) of every change to `mate`.
    log: Vec<(u32, u8, u32)>,
    free: usize,
    /// Scratch of the searches.
    from: Vec<u32>,
    seen: Vec<u32>,
    stamp: u32,
    queue: Vec<u32>,
    nbrs: Vec<u32>,
    /// Depth-first search state of [`Search::blocks`]: discovery order,
    /// low point, the cells below and those of the start's colour, and
    /// the subtrees cut off below a cell.
    disc: Vec<u32>,
    low: Vec<u32>,
    below: Vec<u32>,
    below_like_start: Vec<u32>,
    cut_off: Vec<u8>,
    stack: Vec<(u32, u32)>,
    /// The residual digraph of the matching (arcs of `x` in
    /// `arcs[arc_start[x]..arc_start[x + 1]]`) and its strongly connected
    /// components, Tarjan's state beside them.
    arc_start: Vec<u32>,
    arcs: Vec<u32>,
    comp: Vec<u32>,
    tarjan_index: Vec<u32>,
    tarjan_low: Vec<u32>,
    on_stack: Vec<bool>,
    tarjan_stack: Vec<u32>,
    calls: Vec<(u32, u32)>,
    /// Board index of every padded cell (for the failure table's bitset).
    index: Vec<u32>,
    failures: Failures,
}

/// One level of the depth-first search.
struct Frame {
    cell: u32,
    /// This level's children, in `children[first..]` of the shared stack.
    first: usize,
    next: usize,
    /// Length of the undo log when this level was entered.
    log: usize,
}

/// Searches for a tour from padded cell `start` (closed when `closed`)
/// expanding at most `budget` nodes, giving up early once `cancel` is
/// raised. The graph must be symmetric and bipartite; the caller checks.
pub(super) fn search(g: &Graph, start: usize, closed: bool, budget: u64, cancel: Cancel) -> Found {
    let len = g.out_degree.len();
    let s_even = g.is_even(start);
    let mut start_colour = vec![false; len + 1];
    let mut role = vec![Role::Out; len + 1];
    let mut index = vec![NONE; len + 1];
    for (i, c) in g.board_cells().enumerate() {
        start_colour[c] = g.is_even(c) == s_even;
        role[c] = Role::Free;
        index[c] = i as u32;
    }
    // A path of `cells` cells ends on the start's colour iff it has an odd
    // number of cells.
    let last_like_start = g.cells % 2 == 1;
    let (z, virtual_z) = if closed { (start as u32, false) } else { (len as u32, true) };
    // The virtual anchor sits opposite the last cell's colour.
    start_colour[len] = !last_like_start;
    role[start] = if closed { Role::EndAnchor } else { Role::End };
    if virtual_z {
        role[len] = Role::Anchor;
    }
    let mut s = Search {
        g,
        role,
        start_colour,
        last_like_start,
        z,
        virtual_z,
        mate: vec![[NONE; 2]; len + 1],
        log: Vec::new(),
        free: g.cells - 1,
        from: vec![NONE; len + 1],
        seen: vec![0; len + 1],
        stamp: 0,
        queue: Vec::new(),
        nbrs: Vec::new(),
        disc: vec![0; len + 1],
        low: vec![0; len + 1],
        below: vec![0; len + 1],
        below_like_start: vec![0; len + 1],
        cut_off: vec![0; len + 1],
        stack: Vec::new(),
        arc_start: vec![0; len + 2],
        arcs: Vec::new(),
        comp: vec![0; len + 1],
        tarjan_index: vec![NONE; len + 1],
        tarjan_low: vec![0; len + 1],
        on_stack: vec![false; len + 1],
        tarjan_stack: Vec::new(),
        calls: Vec::new(),
        index,
        failures: Failures::new(g.cells),
    };
    s.failures.flip(s.index[start] as usize);
    s.run(start as u32, closed, budget, Poll::new(cancel))
}

impl Search<'_> {
    fn run(&mut self, start: u32, closed: bool, budget: u64, mut poll: Poll) -> Found {
        let node_work = super::exact_node_work(self.g.cells as u64);
        let mut nodes = 1;
        // The root: a cover from scratch, every cell short of its partners.
        let all: Vec<u32> = (0..self.role.len() as u32).filter(|&c| self.role[c as usize] != Role::Out).collect();
        if !self.complete(&all) || !self.blocks(start) {
            return Found { outcome: Outcome::NoTour, path: None, nodes };
        }
        self.log.clear();
        let mut children = Vec::new();
        let mut frames = vec![Frame { cell: start, first: 0, next: 0, log: 0 }];
        self.push_children(start, &mut children);
        loop {
            let Some(top) = frames.last_mut() else {
                return Found { outcome: Outcome::NoTour, path: None, nodes };
            };
            let c = top.cell;
            if top.next == children.len() {
                // Every child tried: back to the parent, undoing this level.
                let done = frames.pop().expect("a frame");
                children.truncate(done.first);
                if let Some(parent) = frames.last() {
                    self.failures.remember(self.index[c as usize] as usize);
                    self.retreat(parent.cell, c, done.log);
                }
                continue;
            }
            let v = children[top.next];
            top.next += 1;
            if nodes >= budget || poll.stop(nodes.saturating_mul(node_work)) {
                return Found { outcome: Outcome::GaveUp, path: None, nodes };
            }
            nodes += 1;
            let mark = self.log.len();
            if self.free == 1 {
                // The last cell: a tour, if it closes when it must.
                let closes =
                    !closed || self.g.succ.iter().any(|&o| (v as usize).wrapping_add_signed(o) == start as usize);
                if closes {
                    let path = frames.iter().map(|f| f.cell).chain([v]).collect();
                    return Found { outcome: Outcome::Tour, path: Some(path), nodes };
                }
                continue;
            }
            let at = self.index[v as usize] as usize;
            self.failures.flip(at);
            if self.failures.known(at) {
                self.failures.flip(at);
                continue;
            }
            if self.advance(c, v) && self.blocks(v) {
                let first = children.len();
                frames.push(Frame { cell: v, first, next: first, log: mark });
                self.push_children(v, &mut children);
            } else {
                self.retreat(c, v, mark);
            }
        }
    }

    /// The unvisited neighbours of the end `c`, its partner first, then by
    /// fewest unvisited neighbours of their own.
    fn push_children(&mut self, c: u32, children: &mut Vec<u32>) {
        let first = children.len();
        for &o in &self.g.succ {
            let v = (c as usize).wrapping_add_signed(o);
            if self.role[v] == Role::Free {
                children.push(v as u32);
            }
        }
        let mate = self.mate[c as usize];
        let key = |s: &Search, v: u32| {
            let free = s.g.succ.iter().filter(|&&o| s.role[(v as usize).wrapping_add_signed(o)] == Role::Free).count();
            (!mate.contains(&v), free)
        };
        let mut keyed: Vec<_> = children[first..].iter().map(|&v| (key(self, v), v)).collect();
        keyed.sort_unstable();
        for (slot, (_, v)) in children[first..].iter_mut().zip(keyed) {
            *slot = v;
        }
    }

    /// Steps from `c` to `v`: `c` leaves the matching (or keeps its closing
    /// partner), `v` keeps one partner; false when the matching cannot be
    /// repaired (no tour below).
    fn advance(&mut self, c: u32, v: u32) -> bool {
        let mut short = Vec::with_capacity(4);
        if self.role[c as usize] == Role::EndAnchor {
            // The closed tour's start keeps one partner as its closing edge.
            self.role[c as usize] = Role::Anchor;
            let drop = if self.mate[c as usize].contains(&v) { v } else { self.mate[c as usize][0] };
            if drop != NONE {
                self.unlink(c, drop);
                short.push(drop);
            }
        } else {
            self.role[c as usize] = Role::Out;
            for p in self.mate[c as usize] {
                if p != NONE {
                    self.unlink(c, p);
                    short.push(p);
                }
            }
        }
        self.role[v as usize] = Role::End;
        self.free -= 1;
        // The end may not keep the anchor, nor more than one partner.
        for p in self.mate[v as usize] {
            if p != NONE && self.role[p as usize] == Role::Anchor {
                self.unlink(v, p);
                short.push(p);
            }
        }
        if self.partners(v) > 1 {
            let p = self.mate[v as usize][0];
            self.unlink(v, p);
            short.push(p);
        }
        short.push(v);
        self.complete(&short)
    }

    /// Undoes [`Search::advance`]`(c, v)` and any matching changes since `mark`.
    fn retreat(&mut self, c: u32, v: u32, mark: usize) {
        while self.log.len() > mark {
            let (x, slot, old) = self.log.pop().expect("logged");
            self.mate[x as usize][slot as usize] = old;
        }
        self.failures.flip(self.index[v as usize] as usize);
        self.role[v as usize] = Role::Free;
        self.free += 1;
        let at_closed_root = self.role[c as usize] == Role::Anchor && !self.virtual_z && c == self.z;
        self.role[c as usize] = if at_closed_root { Role::EndAnchor } else { Role::End };
    }

    /// Augments until every cell of `cells` has its partners; false when
    /// one cannot (the matching is then maximum, so no cover exists).
    fn complete(&mut self, cells: &[u32]) -> bool {
        for &x in cells {
            while self.partners(x) < self.role[x as usize].demand() {
                if !self.augment(x) {
                    return false;
                }
            }
        }
        true
    }

    fn partners(&self, x: u32) -> usize {
        let [p, q] = self.mate[x as usize];
        usize::from(p != NONE) + usize::from(q != NONE)
    }

    fn set(&mut self, x: u32, slot: usize, value: u32) {
        self.log.push((x, slot as u8, self.mate[x as usize][slot]));
        self.mate[x as usize][slot] = value;
    }

    fn link(&mut self, a: u32, b: u32) {
        for (x, y) in [(a, b), (b, a)] {
            let slot = self.mate[x as usize].iter().position(|&m| m == NONE).expect("a free slot");
            self.set(x, slot, y);
        }
    }

    fn unlink(&mut self, a: u32, b: u32) {
        for (x, y) in [(a, b), (b, a)] {
            let slot = self.mate[x as usize].iter().position(|&m| m == y).expect("linked");
            self.set(x, slot, NONE);
        }
    }

    /// The cells `x` may be matched with at this node.
    fn neighbours(&self, x: u32, out: &mut Vec<u32>) {
        out.clear();
        let rx = self.role[x as usize];
        if self.virtual_z && x == self.z {
            // Every unvisited cell of the last cell's colour.
            let want = self.last_like_start;
            out.extend(
                self.g
                    .board_cells()
                    .filter(|&c| self.role[c] == Role::Free && self.start_colour[c] == want)
                    .map(|c| c as u32),
            );
            return;
        }
        for &o in &self.g.succ {
            let u = (x as usize).wrapping_add_signed(o);
            let ru = self.role[u];
            // The end's edge to the anchor closes the path only once
            // nothing is left.
            let allowed = !matches!((rx, ru), (_, Role::Out) | (Role::End, Role::Anchor) | (Role::Anchor, Role::End));
            if allowed {
                out.push(u as u32);
            }
        }
        if self.virtual_z && rx == Role::Free && self.start_colour[x as usize] == self.last_like_start {
            out.push(self.z);
        }
    }

    /// One augmenting path from `root` (short of partners) to a cell of the
    /// other colour short of partners, through unused and used edges
    /// alternately; applied when found.
    fn augment(&mut self, root: u32) -> bool {
        let stamp = next_stamp(&mut self.stamp, &mut self.seen);
        self.queue.clear();
        self.queue.push(root);
        self.seen[root as usize] = stamp;
        let mut nbrs = std::mem::take(&mut self.nbrs);
        let mut head = 0;
        let mut found = None;
        'bfs: while let Some(&a) = self.queue.get(head) {
            head += 1;
            self.neighbours(a, &mut nbrs);
            for &b in &nbrs {
                if self.seen[b as usize] == stamp || self.mate[a as usize].contains(&b) {
                    continue;
                }
                self.seen[b as usize] = stamp;
                self.from[b as usize] = a;
                if self.partners(b) < self.role[b as usize].demand() {
                    found = Some(b);
                    break 'bfs;
                }
                for a2 in self.mate[b as usize] {
                    if a2 != NONE && self.seen[a2 as usize] != stamp {
                        self.seen[a2 as usize] = stamp;
                        self.from[a2 as usize] = b;
                        self.queue.push(a2);
                    }
                }
            }
        }
        self.nbrs = nbrs;
        let Some(mut b) = found else { return false };
        loop {
            let a = self.from[b as usize];
            if a == root {
                self.link(a, b);
                return true;
            }
            let b_prev = self.from[a as usize];
            self.unlink(a, b_prev);
            self.link(a, b);
            b = b_prev;
        }
    }

    /// False when the unvisited cells cannot be walked from the end `c` for
    /// their shape alone: some cell is out of reach, or a cut cell `a`
    /// (whose removal leaves cells that `c` reaches only through `a`) cuts
    /// off more than one part, or a part whose colours cannot be walked.
    ///
    /// Why: the path reaches `a` once, after every cell on `c`'s side and
    /// before every cell cut off, and never comes back, so the cut-off
    /// cells are one part `B` that the path walks last, from a neighbour of
    /// `a` to its last cell. A walk alternates colours, so `B` holds as many
    /// cells of `a`'s colour as of the other, or one fewer; and it ends on
    /// the last cell's colour (which the start fixes). A depth-first search
    /// from `c` finds every cut cell and its parts with their colour counts
    /// (low points, as for articulation points).
    fn blocks(&mut self, c: u32) -> bool {
        self.components();
        let stamp = next_stamp(&mut self.stamp, &mut self.seen);
        let mut order = 0u32;
        let mut reached = 0usize;
        let succ = &self.g.succ;
        self.stack.clear();
        self.stack.push((c, 0));
        self.seen[c as usize] = stamp;
        self.disc[c as usize] = order;
        self.low[c as usize] = order;
        (self.below[c as usize], self.below_like_start[c as usize], self.cut_off[c as usize]) = (0, 0, 0);
        while let Some(&mut (x, ref mut next)) = self.stack.last_mut() {
            if let Some(&o) = succ.get(*next as usize) {
                *next += 1;
                let y = (x as usize).wrapping_add_signed(o);
                if self.role[y] != Role::Free && y != c as usize || !self.usable(x, y as u32) {
                    continue;
                }
                if self.seen[y] == stamp {
                    self.low[x as usize] = self.low[x as usize].min(self.disc[y]);
                    continue;
                }
                order += 1;
                reached += 1;
                self.seen[y] = stamp;
                (self.disc[y], self.low[y]) = (order, order);
                self.below[y] = 1;
                self.below_like_start[y] = self.start_colour[y] as u32;
                self.cut_off[y] = 0;
                self.stack.push((y as u32, 0));
                continue;
            }
            // `x` is done: fold it into its parent.
            self.stack.pop();
            let Some(&(p, _)) = self.stack.last() else { break };
            let (x, p) = (x as usize, p as usize);
            self.low[p] = self.low[p].min(self.low[x]);
            self.below[p] += self.below[x];
            self.below_like_start[p] += self.below_like_start[x];
            if p != c as usize && self.low[x] >= self.disc[p] {
                // `x`'s subtree is a part that only `p` joins to the rest.
                self.cut_off[p] += 1;
                if self.cut_off[p] > 1 || !self.walkable(p, x) {
                    return false;
                }
            }
        }
        reached == self.free
    }

    /// True when the edge `x-y` is in some completion of the matching: it is
    /// in the matching, or an alternating cycle runs through it (both ends
    /// in one strongly connected component of the residual digraph). The
    /// path from `c` with its edge to `z` is such a completion, so it uses
    /// only these edges, and [`Search::blocks`] may look at them alone
    /// (which sees obstructions the matching cannot, such as a second
    /// colouring that a walk would have to alternate as well).
    fn usable(&self, x: u32, y: u32) -> bool {
        self.comp[x as usize] == self.comp[y as usize] || self.mate[x as usize].contains(&y)
    }

    /// Strongly connected components of the residual digraph: an unused
    /// edge leads from a cell of the start's colour to the other colour,
    /// a used one back (Tarjan's algorithm, without recursion).
    fn components(&mut self) {
        let len = self.role.len();
        let mut nbrs = std::mem::take(&mut self.nbrs);
        self.arcs.clear();
        for x in 0..len {
            self.arc_start[x] = self.arcs.len() as u32;
            self.tarjan_index[x] = NONE;
            if self.role[x] == Role::Out {
                continue;
            }
            if self.start_colour[x] {
                self.neighbours(x as u32, &mut nbrs);
                let mate = self.mate[x];
                self.arcs.extend(nbrs.iter().filter(|y| !mate.contains(y)));
            } else {
                self.arcs.extend(self.mate[x].iter().filter(|&&m| m != NONE));
            }
        }
        self.arc_start[len] = self.arcs.len() as u32;
        self.nbrs = nbrs;
        let mut next_index = 0u32;
        for root in 0..len as u32 {
            if self.role[root as usize] == Role::Out || self.tarjan_index[root as usize] != NONE {
                continue;
            }
            self.open(root, &mut next_index);
            while let Some(&mut (v, ref mut pos)) = self.calls.last_mut() {
                let end = self.arc_start[v as usize + 1];
                if *pos < end {
                    let w = self.arcs[*pos as usize];
                    *pos += 1;
                    if self.tarjan_index[w as usize] == NONE {
                        self.open(w, &mut next_index);
                    } else if self.on_stack[w as usize] {
                        let low = self.tarjan_low[v as usize].min(self.tarjan_index[w as usize]);
                        self.tarjan_low[v as usize] = low;
                    }
                    continue;
                }
                self.calls.pop();
                if let Some(&(parent, _)) = self.calls.last() {
                    let low = self.tarjan_low[parent as usize].min(self.tarjan_low[v as usize]);
                    self.tarjan_low[parent as usize] = low;
                }
                if self.tarjan_low[v as usize] == self.tarjan_index[v as usize] {
                    while let Some(w) = self.tarjan_stack.pop() {
                        self.on_stack[w as usize] = false;
                        self.comp[w as usize] = v;
                        if w == v {
                            break;
                        }
                    }
                }
            }
        }
    }

    /// Tarjan: enters `v`.
    fn open(&mut self, v: u32, next_index: &mut u32) {
        self.tarjan_index[v as usize] = *next_index;
        self.tarjan_low[v as usize] = *next_index;
        *next_index += 1;
        self.tarjan_stack.push(v);
        self.on_stack[v as usize] = true;
        self.calls.push((v, self.arc_start[v as usize]));
    }

    /// True when the part below `x`, cut off by `a`, can be walked from a
    /// neighbour of `a` to the path's last cell (see [`Search::blocks`]).
    fn walkable(&self, a: usize, x: usize) -> bool {
        let (size, like_start) = (self.below[x], self.below_like_start[x]);
        let like_a = if self.start_colour[a] { like_start } else { size - like_start };
        let unlike_a = size - like_a;
        // Colours alternate from a cell unlike `a`: as many of each, or one
        // more unlike `a`, which is then also the last cell's colour.
        let last_unlike_a = self.start_colour[a] != self.last_like_start;
        match unlike_a.checked_sub(like_a) {
            Some(0) => !last_unlike_a,
            Some(1) => last_unlike_a,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests;
