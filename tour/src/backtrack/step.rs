//! The incremental counts of the module doc's rules: a step, its undo, and
//! the children a node's forced rules allow, apart from the search that
//! drives them.

use super::{Saved, Search, BLOCKED};

impl<const SYM: bool> Search<'_, SYM> {
    /// Steps from the current cell `c` to its unvisited successor `v`.
    #[inline]
    pub(super) fn advance(&mut self, c: usize, v: usize) -> Saved {
        let offsets = self.grid.offsets();
        let saved = Saved { deg: self.deg[v], indeg: if SYM { 0 } else { self.indeg[v] } };
        self.deg[v] = BLOCKED;
        if SYM {
            // v leaves U (d(v) >= 1: c is its neighbour).
            self.ends -= (saved.deg == 1) as u64;
            // c leaves U ∪ {current}: its unvisited neighbours lose one. Each
            // had d >= 1 (c counts), so no underflow.
            for &o in offsets {
                let u = c.wrapping_add_signed(o);
                let d = self.deg[u];
                if d != BLOCKED {
                    self.deg[u] = d - 1;
                    match d - 1 {
                        1 => self.ends += 1,
                        0 => {
                            self.ends -= 1;
                            self.isolated += 1;
                        }
                        _ => {}
                    }
                }
            }
        } else {
            // v leaves U (in(v) >= 1: c can move onto it).
            self.ends -= (saved.deg == 0) as u64;
            // Its unvisited predecessors lose a successor in U (v counted).
            for &o in &self.predecessors {
                let p = v.wrapping_add_signed(o);
                let d = self.deg[p];
                if d != BLOCKED {
                    self.deg[p] = d - 1;
                    self.ends += (d == 1) as u64;
                }
            }
            // c leaves U ∪ {current}: its unvisited successors lose a
            // predecessor (c counted).
            for &o in offsets {
                let s = c.wrapping_add_signed(o);
                if self.deg[s] != BLOCKED {
                    self.indeg[s] -= 1;
                    self.isolated += (self.indeg[s] == 0) as u64;
                }
            }
        }
        saved
    }

    /// Undoes `advance(c, v)`, which returned `saved`; everything after it
    /// has been undone already.
    #[inline]
    pub(super) fn retreat(&mut self, c: usize, v: usize, saved: Saved) {
        let offsets = self.grid.offsets();
        if SYM {
            for &o in offsets {
                let u = c.wrapping_add_signed(o);
                let d = self.deg[u];
                if d != BLOCKED {
                    match d {
                        1 => self.ends -= 1,
                        0 => {
                            self.isolated -= 1;
                            self.ends += 1;
                        }
                        _ => {}
                    }
                    self.deg[u] = d + 1;
                }
            }
            self.ends += (saved.deg == 1) as u64;
        } else {
            for &o in offsets {
                let s = c.wrapping_add_signed(o);
                if self.deg[s] != BLOCKED {
                    self.isolated -= (self.indeg[s] == 0) as u64;
                    self.indeg[s] += 1;
                }
            }
            for &o in &self.predecessors {
                let p = v.wrapping_add_signed(o);
                let d = self.deg[p];
                if d != BLOCKED {
                    self.ends -= (d == 0) as u64;
                    self.deg[p] = d + 1;
                }
            }
            self.ends += (saved.deg == 0) as u64;
            self.indeg[v] = saved.indeg;
        }
        self.deg[v] = saved.deg;
    }

    /// Appends the children of current cell `v` to `children`, sorted
    /// Warnsdorff-first, as keys `degree << 16 | move`. `remaining` = |U|.
    /// False when the forced rules prove the node dead (or it has no child).
    #[inline]
    pub(super) fn expand(&self, v: usize, remaining: u64, children: &mut Vec<u32>) -> bool {
        let first = children.len();
        let mut forced = None;
        // SYM: the first child with d = 2 (in move order), and how many.
        let mut first_two = 0u32;
        let mut twos = 0;
        for (k, &o) in self.grid.offsets().iter().enumerate() {
            let u = v.wrapping_add_signed(o);
            let d = self.deg[u];
            if d == BLOCKED {
                continue;
            }
            // K <= MAX_MOVES = 2^14, so both fields fit in 16 bits.
            let key = (d as u32) << 16 | k as u32;
            if SYM {
                if d == 1 && remaining >= 2 {
                    return false;
                }
                if d == 2 && remaining >= 2 {
                    twos += 1;
                    // Only q1 and qm can have d = 2, and qm is taken when a
                    // d = 1 cell exists.
                    if twos == 3 || (twos == 2 && self.ends > 0) {
                        return false;
                    }
                    if twos == 1 {
                        first_two = key;
                    }
                }
            } else if self.indeg[u] == 1 {
                if forced.is_some() {
                    return false;
                }
                forced = Some(key);
            }
            children.push(key);
        }
        if SYM && twos > 0 && !self.closed {
            forced = Some(first_two);
        }
        if let Some(key) = forced {
            children.truncate(first);
            children.push(key);
        }
        children[first..].sort_unstable();
        children.len() > first
    }
}
