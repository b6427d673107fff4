//! The cover's second stage: its cycles joined into one by two-edge
//! exchanges (step 2 of [`super`]'s outline), and walks along them.

use std::sync::Arc;

use super::{shuffle, Cover, NONE};
use crate::seed::Rng;

impl Cover<'_> {
    /// Joins the cover's cycles by two-edge exchanges; true when one is left.
    pub(super) fn merge(&mut self, rng: &mut Rng) -> bool {
        let len = self.mate.len();
        // Label the cycles.
        let mut cycle = vec![NONE; len];
        let mut count = 0u32;
        // The board's cells and the virtual ones (no sort of the board's:
        // the order is shuffled below anyway).
        let mut virtuals: Vec<u32> =
            self.pins.iter().flat_map(|&(p, q)| [p, q]).filter(|&c| self.is_virtual(c)).collect();
        virtuals.sort_unstable();
        virtuals.dedup();
        let mut cells: Vec<u32> = self.parts.even.iter().chain(&self.parts.odd).chain(&virtuals).copied().collect();
        for &c in &cells {
            if cycle[c as usize] != NONE {
                continue;
            }
            let (mut prev, mut cur) = (NONE, c);
            loop {
                cycle[cur as usize] = count;
                (prev, cur) = (cur, self.beyond(prev, cur));
                if cur == c {
                    break;
                }
            }
            count += 1;
        }
        self.work += cells.len() as u64;
        let mut parent: Vec<u32> = (0..count).collect();
        let mut left = count;
        shuffle(&mut cells, rng);
        self.join_cycles(&cells, &cycle, &mut parent, &mut left)
    }

    /// The merging passes of [`Cover::merge`] over the labelled cycles.
    fn join_cycles(&mut self, cells: &[u32], cycle: &[u32], parent: &mut [u32], left: &mut u32) -> bool {
        fn find(parent: &mut [u32], mut x: u32) -> u32 {
            while parent[x as usize] != x {
                parent[x as usize] = parent[parent[x as usize] as usize];
                x = parent[x as usize];
            }
            x
        }
        let parts = Arc::clone(&self.parts);
        let adj = &parts.adj;
        while *left > 1 {
            let mut merged = false;
            for &a in cells {
                // Exchanges at a virtual cell are found from its real
                // partner's side, without listing its many neighbours.
                if self.is_virtual(a) {
                    continue;
                }
                if self.stopped() {
                    return false;
                }
                let mut joined = false;
                let nbrs = adj.of(a);
                self.work += nbrs.len() as u64;
                for slot in 0..2 {
                    let b = self.mate[a as usize][slot];
                    if self.is_pinned(a, b) {
                        continue;
                    }
                    let ca = find(parent, cycle[a as usize]);
                    for &c in nbrs {
                        if c == b || find(parent, cycle[c as usize]) == ca {
                            continue;
                        }
                        let exchange =
                            self.mate[c as usize].into_iter().find(|&d| !self.is_pinned(c, d) && self.adjacent(b, d));
                        if let Some(d) = exchange {
                            self.unlink(a, b);
                            self.unlink(c, d);
                            self.link(a, c);
                            self.link(b, d);
                            let cc = find(parent, cycle[c as usize]);
                            parent[cc as usize] = ca;
                            *left -= 1;
                            (merged, joined) = (true, true);
                            break;
                        }
                    }
                    if *left == 1 {
                        return true;
                    }
                    // `a`'s partners changed; the other slot is looked at
                    // in the next pass.
                    if joined {
                        break;
                    }
                }
            }
            if !merged {
                return false;
            }
        }
        true
    }

    /// The partner of `cur` that is not `prev`: one step along a cycle.
    pub(super) fn beyond(&self, prev: u32, cur: u32) -> u32 {
        let [p, q] = self.mate[cur as usize];
        if p != prev {
            p
        } else {
            q
        }
    }

    /// Cells on the cycle through `from`.
    pub(super) fn cycle_len(&self, from: u32) -> usize {
        let (mut prev, mut cur, mut len) = (from, self.mate[from as usize][0], 1);
        while cur != from {
            (prev, cur) = (cur, self.beyond(prev, cur));
            len += 1;
        }
        len
    }
}
