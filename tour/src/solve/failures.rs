//! States the exhaustive search has already exhausted: the path's end and
//! the set of visited cells, which alone decide whether the rest of the
//! board can still be walked (the path's order does not matter). Many
//! orders of the same cells reach the same state, so remembering failures
//! cuts the search tree by orders of magnitude on small boards.
//!
//! Keys are exact (the visited set as a bitset, with the end), so a hit is
//! proof and never a hash collision; the table is a cache that forgets
//! (a slot holds the newest of the states that map to it), bounded by
//! [`MAX_BYTES`] and grown from small as the search needs it.

use crate::seed::Rng;

/// Most bytes the table takes (per search, so per thread).
pub const MAX_BYTES: usize = 32 << 20;
/// Slots at first: tasks that settle fast allocate little.
const FIRST_SLOTS: usize = 1 << 10;

/// Visited cells, their hash, and the failed states.
pub(super) struct Failures {
    /// Visited board cells, a bit each.
    visited: Vec<u64>,
    /// Random word of every board cell, and of every cell as the end.
    cell_key: Vec<u64>,
    end_key: Vec<u64>,
    hash: u64,
    /// `slot_words` words a slot: the end + 1 (0: empty), then the bitset.
    slots: Vec<u64>,
    slot_words: usize,
    stored: usize,
}

impl Failures {
    /// A table for a board of `cells` cells, nothing visited.
    pub(super) fn new(cells: usize) -> Failures {
        let words = cells.div_ceil(64);
        let mut rng = Rng::new(0x6b6e_6967_6874);
        let cell_key = (0..cells).map(|_| rng.next_u64()).collect();
        let end_key = (0..cells).map(|_| rng.next_u64()).collect();
        let slot_words = words + 1;
        Failures {
            visited: vec![0; words],
            cell_key,
            end_key,
            hash: 0,
            slots: vec![0; FIRST_SLOTS * slot_words],
            slot_words,
            stored: 0,
        }
    }

    /// Marks board cell `i` visited or not (the hash follows).
    pub(super) fn flip(&mut self, i: usize) {
        self.visited[i / 64] ^= 1 << (i % 64);
        self.hash ^= self.cell_key[i];
    }

    fn slot(&self, end: usize) -> usize {
        let count = self.slots.len() / self.slot_words;
        ((self.hash ^ self.end_key[end]) as usize & (count - 1)) * self.slot_words
    }

    /// True when the current visited set with the path ending at `end`
    /// was exhausted before.
    pub(super) fn known(&self, end: usize) -> bool {
        let at = self.slot(end);
        self.slots[at] == end as u64 + 1 && self.slots[at + 1..at + self.slot_words] == self.visited[..]
    }

    /// Remembers that the current state, ending at `end`, holds no tour.
    pub(super) fn remember(&mut self, end: usize) {
        let count = self.slots.len() / self.slot_words;
        if self.stored >= count / 2 && (count * 2 * self.slot_words * 8) <= MAX_BYTES {
            self.grow();
        }
        let at = self.slot(end);
        if self.slots[at] == 0 {
            self.stored += 1;
        }
        self.slots[at] = end as u64 + 1;
        self.slots[at + 1..at + self.slot_words].copy_from_slice(&self.visited);
    }

    /// Twice the slots, every stored state placed again.
    fn grow(&mut self) {
        let doubled = vec![0; self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, doubled);
        let (hash, visited) = (self.hash, std::mem::take(&mut self.visited));
        self.stored = 0;
        for entry in old.chunks_exact(self.slot_words).filter(|e| e[0] != 0) {
            let end = (entry[0] - 1) as usize;
            self.visited = entry[1..].to_vec();
            self.hash = self.visited_hash();
            let at = self.slot(end);
            if self.slots[at] == 0 {
                self.stored += 1;
            }
            self.slots[at..at + self.slot_words].copy_from_slice(entry);
        }
        (self.hash, self.visited) = (hash, visited);
    }

    /// The hash of `visited`, from scratch.
    fn visited_hash(&self) -> u64 {
        let mut h = 0;
        for (w, &word) in self.visited.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                h ^= self.cell_key[w * 64 + bits.trailing_zeros() as usize];
                bits &= bits - 1;
            }
        }
        h
    }
}
