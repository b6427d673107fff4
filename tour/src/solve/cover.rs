//! A 2-factor, merged: the cycle-cover route to a tour on bipartite leaper
//! graphs (every move changes colour).
//!
//! 1. **Cover.** Every cell gets exactly two partners, neighbours of the
//!    other colour: a degree-2 b-matching, grown greedily with the most
//!    constrained cell first (random among equals) and completed by
//!    augmenting paths (a breadth-first search from a cell
//!    short of partners, through unused and used edges alternately, to a
//!    cell of the other colour short of partners). The partners form
//!    disjoint cycles covering the board. A cell of degree 2 gets both its
//!    edges, which is what Warnsdorff walks on small leaper boards get
//!    wrong.
//! 2. **Merge.** Two edges `a-b` and `c-d` on different cycles with `a-c`
//!    and `b-d` moves are exchanged for those two: the cycles become one.
//!    Repeated until one cycle is left, or no exchange joins two cycles
//!    (then the attempt fails and another random cover is tried).
//!
//! An open tour from `s` is a cycle through virtual cells: on a board of
//! odd cells (`s` on the majority colour) one cell `v` next to `s` and to
//! every majority cell, with the edge `s-v` kept; on a board of even cells
//! two, `y` next to `s` and `x` only, and `x` next to every cell of the
//! colour `s` is not, with `s-y-x` kept. The cycle read from `s` away from
//! the virtual cells is a path from `s` through every cell. So no cover
//! proves no open tour from `s`, as it proves no closed one without them.

mod matching;
mod merge;

use std::sync::Arc;

use super::graph::Graph;
use crate::cancel::{Cancel, Poll};
use crate::seed::Rng;

const NONE: u32 = u32::MAX;

/// How an attempt ended.
pub(super) enum Attempt {
    /// The cells in tour order, from the start.
    Tour(Vec<u32>),
    /// The cover's cycles could not all be joined: the start's cycle
    /// opened at the start (as [`Cover::read`] gives it) is `Stuck(first)`,
    /// and [`Cover::mates`] holds the rest.
    Stuck(Vec<u32>),
    /// No cover exists: proof that no cycle (and, with the virtual cell,
    /// no path from the start) covers the board. A maximum b-matching
    /// leaves a cell short only when no augmenting path reaches it, and then
    /// none ever will.
    NoCover,
}

/// One attempt's state: partners of every cell (and of the virtual ones).
pub(super) struct Cover<'g> {
    g: &'g Graph,
    /// Two partners per padded cell, NONE where missing, then the virtual
    /// cells' (`x` at `mate.len() - 2`, `y` at `mate.len() - 1`).
    mate: Vec<[u32; 2]>,
    /// The virtual cell next to every cell of one colour (`v` or `x`), and
    /// whether that colour is even.
    joiner: Option<(u32, bool)>,
    /// Edges every cover keeps (`s-v`, or `s-y` and `y-x`).
    pins: Vec<(u32, u32)>,
    /// What covers of the board share whatever the start: colours, roots
    /// and neighbour lists.
    parts: Arc<Parts>,
    /// Search scratch.
    from: Vec<u32>,
    seen: Vec<u32>,
    stamp: u32,
    queue: Vec<u32>,
    pub(super) work: u64,
    /// Polled from `work`: once cancelled, an attempt stops where it is
    /// (and may look like a proof: only a task that was not cancelled
    /// reports what it found).
    poll: Poll<'g>,
}

/// The board's side of a cover builder, the same for every attempt (and,
/// through [`Cover::with_cycle`], for every start).
pub(super) struct Parts {
    /// Board cells of even and odd coordinate sum, as padded cells, sorted.
    even: Vec<u32>,
    odd: Vec<u32>,
    /// True for the even cells, by padded index: the colour is asked of
    /// every neighbour of every cell a search visits.
    is_even: Vec<bool>,
    /// Cells of the side augmenting paths start from: the even cells and a
    /// virtual cell of that side.
    roots: Vec<u32>,
    /// The cells every cell may be matched with, listed once: every search
    /// of every attempt asks for them.
    adj: Adjacency,
}

/// Neighbour lists in one array: those of `c` are
/// `list[start[c]..start[c + 1]]` (off-board cells have none).
#[derive(Default)]
struct Adjacency {
    start: Vec<u32>,
    list: Vec<u32>,
}

impl Adjacency {
    fn of(&self, c: u32) -> &[u32] {
        &self.list[self.start[c as usize] as usize..self.start[c as usize + 1] as usize]
    }
}

impl<'g> Cover<'g> {
    /// A cover builder for `g`: for a closed tour with `open_start` None,
    /// for an open one from that (padded) start with the virtual cells.
    pub(super) fn new(g: &'g Graph, open_start: Option<usize>) -> Cover<'g> {
        let (even, odd) = colours(g);
        let (x, y) = virtuals(g);
        let (mut joiner, mut pins, mut extra_root) = (None, Vec::new(), None);
        if let Some(s) = open_start {
            let s = s as u32;
            let s_even = even.binary_search(&s).is_ok();
            if even.len() != odd.len() {
                // v (= x here) is of the minority (odd) colour.
                joiner = Some((x, true));
                pins.push((s, x));
            } else {
                // x has s's colour, y the other.
                joiner = Some((x, !s_even));
                pins.extend([(s, y), (y, x)]);
                extra_root = Some(if s_even { x } else { y });
            }
        }
        Cover::build(g, even, odd, joiner, pins, extra_root)
    }

    /// A cover builder for open tours from any start on a board of odd
    /// cells: `v` next to every cell of the majority (even) colour, no edge
    /// kept. Its single cycle is a path between two majority cells, which
    /// [`Cover::with_cycle`] turns into a cover for a given start.
    pub(super) fn anywhere(g: &'g Graph) -> Cover<'g> {
        let (even, odd) = colours(g);
        debug_assert_eq!(even.len(), odd.len() + 1, "a board of odd cells, even the majority");
        let (x, _) = virtuals(g);
        Cover::build(g, even, odd, Some((x, true)), Vec::new(), None)
    }

    fn build(
        g: &'g Graph,
        even: Vec<u32>,
        odd: Vec<u32>,
        joiner: Option<(u32, bool)>,
        pins: Vec<(u32, u32)>,
        extra_root: Option<u32>,
    ) -> Cover<'g> {
        let len = g.out_degree.len() + 2;
        let mut is_even = vec![false; len];
        for &c in &even {
            is_even[c as usize] = true;
        }
        let mut roots = even.clone();
        roots.extend(extra_root);
        let parts = Parts { even, odd, is_even, roots, adj: Adjacency::default() };
        let mut cover = Cover::with_parts(g, Arc::new(parts), vec![[NONE; 2]; len], joiner, pins);
        let mut adj = Adjacency { start: Vec::with_capacity(len + 1), list: Vec::new() };
        let mut out = Vec::new();
        for c in 0..len as u32 {
            adj.start.push(adj.list.len() as u32);
            if cover.is_virtual(c) || g.on_board(c as usize) {
                cover.list_neighbours(c, &mut out);
                adj.list.extend_from_slice(&out);
            }
        }
        adj.start.push(adj.list.len() as u32);
        Arc::get_mut(&mut cover.parts).expect("not shared yet").adj = adj;
        cover
    }

    /// A builder over `parts` with these partners, virtual cells and kept
    /// edges, and fresh search scratch.
    fn with_parts(
        g: &'g Graph,
        parts: Arc<Parts>,
        mate: Vec<[u32; 2]>,
        joiner: Option<(u32, bool)>,
        pins: Vec<(u32, u32)>,
    ) -> Cover<'g> {
        let len = mate.len();
        Cover {
            g,
            mate,
            joiner,
            pins,
            parts,
            from: vec![NONE; len],
            seen: vec![0; len],
            stamp: 0,
            queue: Vec::new(),
            work: 0,
            poll: Poll::new(Cancel::NEVER),
        }
    }

    /// The same builder, its attempts stopped once `cancel` is raised.
    pub(super) fn cancelled_by(self, cancel: Cancel<'g>) -> Cover<'g> {
        Cover { poll: Poll::new(cancel), ..self }
    }

    /// True once the task is cancelled (polled from `work`).
    pub(super) fn stopped(&mut self) -> bool {
        self.poll.stop(self.work)
    }

    /// The board's side of this builder, to share with [`Cover::with_cycle`].
    pub(super) fn parts(&self) -> Arc<Parts> {
        Arc::clone(&self.parts)
    }

    /// One attempt of an [`Cover::anywhere`] builder: true when its cover
    /// merged into a single cycle (then in [`Cover::mates`]).
    pub(super) fn single_cycle(&mut self, rng: &mut Rng) -> bool {
        self.cover(rng) && self.merge(rng)
    }

    /// A cover for an open tour from the (majority) `start`, made from
    /// `cycle`, the single cycle of an [`Cover::anywhere`] builder with
    /// these `parts`: `v`'s edge to one end is moved to `start`, which gives
    /// up one of its partners, an augmenting path pairs the two cells left
    /// short, and the cycles that leaves are merged. A few hundred cells'
    /// work where a cover from scratch takes the whole board's, many times.
    pub(super) fn with_cycle(
        g: &'g Graph,
        parts: Arc<Parts>,
        cycle: &[[u32; 2]],
        start: usize,
        rng: &mut Rng,
    ) -> Attempt {
        let (x, _) = virtuals(g);
        let s = start as u32;
        let mut cover = Cover::with_parts(g, parts, cycle.to_vec(), Some((x, true)), vec![(s, x)]);
        if !cover.mate[start].contains(&x) {
            let end = cover.mate[x as usize][rng.below(2) as usize];
            let partner = cover.mate[start][rng.below(2) as usize];
            cover.unlink(x, end);
            cover.unlink(s, partner);
            cover.link(s, x);
            if !cover.augment(end) {
                return Attempt::NoCover;
            }
            // Often the repair leaves one cycle (the board's cells and v):
            // then there is nothing to merge.
            let nodes = cover.parts.even.len() + cover.parts.odd.len() + 1;
            if cover.cycle_len(s) != nodes && !cover.merge(rng) {
                return Attempt::Stuck(cover.read(start));
            }
        }
        Attempt::Tour(cover.read(start))
    }

    /// One attempt: a random cover, merged into one cycle, read from
    /// `start`.
    pub(super) fn attempt(&mut self, start: usize, rng: &mut Rng) -> Attempt {
        if !self.cover(rng) {
            return Attempt::NoCover;
        }
        if !self.merge(rng) {
            return Attempt::Stuck(self.read(start));
        }
        Attempt::Tour(self.read(start))
    }

    fn is_virtual(&self, c: u32) -> bool {
        c as usize >= self.mate.len() - 2
    }

    fn is_even(&self, c: u32) -> bool {
        self.parts.is_even[c as usize]
    }

    /// The cells of the colour the joiner is next to.
    fn joined(&self, even: bool) -> &[u32] {
        if even {
            &self.parts.even
        } else {
            &self.parts.odd
        }
    }

    /// The cells `c` may be matched with: board neighbours, kept edges and
    /// the joiner's.
    fn list_neighbours(&self, c: u32, out: &mut Vec<u32>) {
        out.clear();
        out.extend(self.pins.iter().filter_map(|&(p, q)| (p == c).then_some(q).or((q == c).then_some(p))));
        match self.joiner {
            Some((j, even)) if j == c => out.extend_from_slice(self.joined(even)),
            _ if self.is_virtual(c) => {}
            joiner => {
                out.extend(
                    self.g
                        .succ
                        .iter()
                        .map(|&o| (c as usize).wrapping_add_signed(o))
                        .filter(|&u| self.g.on_board(u))
                        .map(|u| u as u32),
                );
                if let Some((j, even)) = joiner {
                    if self.is_even(c) == even && !out.contains(&j) {
                        out.push(j);
                    }
                }
            }
        }
    }

    fn adjacent(&self, x: u32, y: u32) -> bool {
        if self.is_pinned(x, y) {
            return true;
        }
        match self.joiner {
            Some((j, even)) if x == j || y == j => {
                let other = if x == j { y } else { x };
                !self.is_virtual(other) && self.is_even(other) == even
            }
            _ if self.is_virtual(x) || self.is_virtual(y) => false,
            _ => self.g.succ.iter().any(|&o| (x as usize).wrapping_add_signed(o) == y as usize),
        }
    }

    fn partners(&self, c: u32) -> usize {
        let [p, q] = self.mate[c as usize];
        usize::from(p != NONE) + usize::from(q != NONE)
    }

    fn link(&mut self, a: u32, b: u32) {
        for (x, y) in [(a, b), (b, a)] {
            let slot = self.mate[x as usize].iter().position(|&m| m == NONE).expect("a free slot");
            self.mate[x as usize][slot] = y;
        }
    }

    fn unlink(&mut self, a: u32, b: u32) {
        for (x, y) in [(a, b), (b, a)] {
            let slot = self.mate[x as usize].iter().position(|&m| m == y).expect("linked");
            self.mate[x as usize][slot] = NONE;
        }
    }

    /// True when a cover exists (the search is the same whatever the seed).
    pub(super) fn exists(&mut self) -> bool {
        self.cover(&mut Rng::new(0))
    }

    /// Every cell's two partners in the last cover.
    pub(super) fn mates(&self) -> &[[u32; 2]] {
        &self.mate
    }

    /// The single cycle read from `start`, away from the virtual cells if
    /// there are any (which are then left out).
    fn read(&self, start: usize) -> Vec<u32> {
        let start = start as u32;
        let [x, y] = self.mate[start as usize];
        let first = if self.is_virtual(x) { y } else { x };
        let mut out = vec![start];
        let (mut prev, mut cur) = (start, first);
        while cur != start && !self.is_virtual(cur) {
            out.push(cur);
            (prev, cur) = (cur, self.beyond(prev, cur));
        }
        out
    }
}

/// The board's cells of even and odd coordinate sum, as padded cells, sorted.
fn colours(g: &Graph) -> (Vec<u32>, Vec<u32>) {
    let (mut even, mut odd) = (Vec::new(), Vec::new());
    for c in g.board_cells() {
        if g.is_even(c) {
            even.push(c as u32);
        } else {
            odd.push(c as u32);
        }
    }
    (even, odd)
}

/// The virtual cells `x` and `y`, after the padded cells.
fn virtuals(g: &Graph) -> (u32, u32) {
    let len = g.out_degree.len();
    (len as u32, len as u32 + 1)
}

/// Fisher-Yates on the seeded stream.
fn shuffle(v: &mut [u32], rng: &mut Rng) {
    for i in (1..v.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
    }
}
