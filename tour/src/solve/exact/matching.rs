//! The search's first check: a degree-constrained subgraph of the
//! unvisited cells (a b-matching, completed by augmenting paths), kept
//! from node to node through an undo log, apart from the search itself.

use super::{Role, Search, NONE};
use crate::solve::graph::next_stamp;

impl Search<'_> {
    /// Augments until every cell of `cells` has its partners; false when
    /// one cannot (the matching is then maximum, so no cover exists).
    pub(super) fn complete(&mut self, cells: &[u32]) -> bool {
        for &x in cells {
            while self.partners(x) < self.role[x as usize].demand() {
                if !self.augment(x) {
                    return false;
                }
            }
        }
        true
    }

    pub(super) fn partners(&self, x: u32) -> usize {
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

    pub(super) fn unlink(&mut self, a: u32, b: u32) {
        for (x, y) in [(a, b), (b, a)] {
            let slot = self.mate[x as usize].iter().position(|&m| m == y).expect("linked");
            self.set(x, slot, NONE);
        }
    }

    /// The cells `x` may be matched with at this node.
    pub(super) fn neighbours(&self, x: u32, out: &mut Vec<u32>) {
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
}
