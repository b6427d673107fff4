//! The reachability rule of the module doc: the full check and the cheap
//! one after a step, searches through the unvisited cells.

use super::{Search, BLOCKED};

impl<const SYM: bool> Search<'_, SYM> {
    /// Two fresh stamps: `target` and `seen`.
    fn fresh_stamps(&mut self) -> (u32, u32) {
        if self.mark.is_empty() || self.stamp >= u32::MAX - 2 {
            self.mark = vec![0; self.grid.len()];
            self.stamp = 0;
        }
        self.stamp += 2;
        (self.stamp - 1, self.stamp)
    }

    /// Right after `advance(c, v)`: true when some unvisited successor of
    /// `c` cannot be reached from `v` through unvisited cells, so it can
    /// never be visited. Stops as soon as all of them are reached.
    pub(super) fn cut_off(&mut self, c: usize, v: usize) -> bool {
        let (target, seen) = self.fresh_stamps();
        let offsets = self.grid.offsets();
        let mut targets = 0usize;
        for &o in offsets {
            let u = c.wrapping_add_signed(o);
            if self.deg[u] != BLOCKED {
                self.mark[u] = target;
                targets += 1;
            }
        }
        if targets == 0 {
            return false;
        }
        self.queue.clear();
        self.queue.push(v);
        self.mark[v] = seen;
        let mut head = 0;
        while head < self.queue.len() {
            let x = self.queue[head];
            head += 1;
            for &o in offsets {
                let u = x.wrapping_add_signed(o);
                let m = self.mark[u];
                if self.deg[u] == BLOCKED || m == seen {
                    continue;
                }
                if m == target {
                    targets -= 1;
                    if targets == 0 {
                        return false;
                    }
                }
                self.mark[u] = seen;
                self.queue.push(u);
            }
        }
        true
    }

    /// True when fewer than `unvisited` unvisited cells can be reached from
    /// the current cell `from` through unvisited cells.
    pub(super) fn unreached(&mut self, from: usize, unvisited: u64) -> bool {
        let (_, seen) = self.fresh_stamps();
        self.queue.clear();
        self.queue.push(from);
        self.mark[from] = seen;
        let mut head = 0;
        while head < self.queue.len() {
            let x = self.queue[head];
            head += 1;
            for &o in self.grid.offsets() {
                let u = x.wrapping_add_signed(o);
                if self.deg[u] != BLOCKED && self.mark[u] != seen {
                    self.mark[u] = seen;
                    self.queue.push(u);
                }
            }
        }
        ((self.queue.len() - 1) as u64) < unvisited
    }
}
