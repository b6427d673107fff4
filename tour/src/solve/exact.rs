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

mod matching;
mod reach;

use super::failures::Failures;
use super::graph::Graph;
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
}

#[cfg(test)]
mod tests;
