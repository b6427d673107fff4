//! The search's second check: whether the unvisited cells can be walked
//! from the path's end for their shape alone (reachability, cut cells and
//! the colours of the parts they cut off), on the edges some completion of
//! the matching uses.

use super::{Role, Search, NONE};
use crate::solve::graph::next_stamp;

impl Search<'_> {
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
    pub(super) fn blocks(&mut self, c: u32) -> bool {
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
