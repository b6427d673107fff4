//! The cover's first stage: every cell two partners, a degree-2
//! b-matching grown greedily and completed by augmenting paths (step 1 of
//! [`super`]'s outline), apart from the merging of its cycles.

use std::sync::Arc;

use super::{shuffle, Cover, NONE};
use crate::seed::Rng;
use crate::solve::graph::next_stamp;

impl Cover<'_> {
    /// Gives every cell two partners; false when no 2-factor exists.
    pub(super) fn cover(&mut self, rng: &mut Rng) -> bool {
        for m in &mut self.mate {
            *m = [NONE; 2];
        }
        for (p, q) in self.pins.clone() {
            self.link(p, q);
        }
        self.greedy(rng);
        // Both sides hold the same number of partner slots, so the roots'
        // side full means the other side is full too.
        let parts = Arc::clone(&self.parts);
        for &a in &parts.roots {
            while self.partners(a) < 2 {
                if !self.augment(a) {
                    return false;
                }
            }
        }
        true
    }

    /// Gives out partners greedily, most constrained cell first (in the
    /// manner of Karp and Sipser): the cell whose neighbours still open to
    /// it exceed its missing partners by the least takes the neighbour of
    /// least such slack, random among equals. A random order instead
    /// leaves some 6 % of the partners missing, each found by an augmenting
    /// path that grows long as they get rare (on (4,3) 177x177: 1,850
    /// paths searching 1.3 M cells, 60 ms); this leaves none or a few.
    fn greedy(&mut self, rng: &mut Rng) {
        const CAP: usize = 64;
        let mut members: Vec<u32> = self.parts.even.iter().chain(&self.parts.odd).copied().collect();
        if let Some((j, _)) = self.joiner {
            members.push(j);
        }
        shuffle(&mut members, rng);
        let parts = Arc::clone(&self.parts);
        let adj = &parts.adj;
        let need = |s: &Self, c: u32| 2 - s.partners(c);
        let slack = |open: &[u32], s: &Self, c: u32| (open[c as usize] as usize).saturating_sub(need(s, c)).min(CAP);
        let (mut open, mut buckets) = self.greedy_start(&members, CAP);
        let mut choice = Vec::new();
        let mut level = 0;
        while level <= CAP && !self.stopped() {
            let Some(c) = buckets[level].pop() else {
                level += 1;
                continue;
            };
            // Stale entries: full cells, or cells whose slack fell since.
            if need(self, c) == 0 || slack(&open, self, c) != level {
                continue;
            }
            // The work counted: the last list read.
            let mut read = adj.of(c).len();
            choice.clear();
            let mut least = usize::MAX;
            for &u in adj.of(c) {
                if need(self, u) == 0 || self.mate[c as usize].contains(&u) {
                    continue;
                }
                let su = slack(&open, self, u);
                if su < least {
                    least = su;
                    choice.clear();
                }
                if su == least {
                    choice.push(u);
                }
            }
            if choice.is_empty() {
                // No partner left for `c`: augmenting paths will find one.
                continue;
            }
            let u = choice[rng.below(choice.len() as u64) as usize];
            self.link(c, u);
            // The edge is used: one fewer open neighbour each side.
            open[c as usize] -= 1;
            open[u as usize] -= 1;
            for x in [c, u] {
                if need(self, x) == 0 {
                    // Full: no longer open to its neighbours.
                    read = adj.of(x).len();
                    for &w in adj.of(x) {
                        if need(self, w) > 0 && !self.mate[x as usize].contains(&w) {
                            open[w as usize] -= 1;
                            let sw = slack(&open, self, w);
                            buckets[sw].push(w);
                            level = level.min(sw);
                        }
                    }
                } else {
                    let sx = slack(&open, self, x);
                    buckets[sx].push(x);
                    level = level.min(sx);
                }
            }
            self.work += read as u64;
        }
    }

    /// The greedy's first state: each cell's neighbours still short of
    /// partners and not yet its partners (`open`), and the cells short of
    /// partners bucketed by their slack, capped at `cap`.
    fn greedy_start(&self, members: &[u32], cap: usize) -> (Vec<u32>, Vec<Vec<u32>>) {
        let adj = &self.parts.adj;
        let need = |c: u32| 2 - self.partners(c);
        let mut open = vec![0u32; self.mate.len()];
        for &c in members {
            if need(c) == 0 {
                continue;
            }
            open[c as usize] =
                adj.of(c).iter().filter(|&&u| need(u) > 0 && !self.mate[c as usize].contains(&u)).count() as u32;
        }
        let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); cap + 1];
        for &c in members {
            if need(c) > 0 {
                buckets[(open[c as usize] as usize).saturating_sub(need(c)).min(cap)].push(c);
            }
        }
        (open, buckets)
    }

    /// One augmenting path from `root` (a cell short of partners, on the
    /// side the greedy fills) to a cell of the other side short of them.
    pub(super) fn augment(&mut self, root: u32) -> bool {
        let stamp = next_stamp(&mut self.stamp, &mut self.seen);
        self.queue.clear();
        self.queue.push(root);
        self.seen[root as usize] = stamp;
        let mut head = 0;
        let parts = Arc::clone(&self.parts);
        let adj = &parts.adj;
        let mut found = None;
        'bfs: while let Some(&a) = self.queue.get(head) {
            if self.stopped() {
                return false;
            }
            head += 1;
            self.work += 1;
            // From a root-side cell along an unused edge to the other side.
            for &b in adj.of(a) {
                if self.seen[b as usize] == stamp || self.mate[a as usize].contains(&b) {
                    continue;
                }
                self.seen[b as usize] = stamp;
                self.from[b as usize] = a;
                if self.partners(b) < 2 {
                    found = Some(b);
                    break 'bfs;
                }
                // Along a used edge back to the root side.
                for a2 in self.mate[b as usize] {
                    if self.seen[a2 as usize] != stamp && !self.is_pinned(a2, b) {
                        self.seen[a2 as usize] = stamp;
                        self.from[a2 as usize] = b;
                        self.queue.push(a2);
                    }
                }
            }
        }
        found.map(|b| self.flip(root, b)).is_some()
    }

    /// The kept edges may not be given up.
    pub(super) fn is_pinned(&self, x: u32, y: u32) -> bool {
        self.pins.iter().any(|&(p, q)| (p, q) == (x, y) || (q, p) == (x, y))
    }

    /// Applies the path found by `augment`, ending at `b`.
    fn flip(&mut self, root: u32, mut b: u32) {
        loop {
            let a = self.from[b as usize];
            if a == root {
                self.link(a, b);
                return;
            }
            // `a` swaps the partner it was reached through for `b`.
            let b_prev = self.from[a as usize];
            self.unlink(a, b_prev);
            self.link(a, b);
            b = b_prev;
        }
    }
}
