//! Which of a sweep's tasks a database already holds: per configuration, the
//! methods whose every start has a stored result of the same identity
//! (docs/identity.md). The planner cuts shards for the other methods only,
//! and skips a configuration with none left.

/// A set of a sweep's methods, by their index in its method list (a spec
/// lists at most `tour::Method::ALL.len()` methods, no repeats).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MethodSet(u32);

impl MethodSet {
    /// No method.
    pub const EMPTY: MethodSet = MethodSet(0);

    /// Methods `0..count`.
    pub fn all(count: usize) -> MethodSet {
        MethodSet(if count >= 32 { u32::MAX } else { (1u32 << count) - 1 })
    }

    /// The set whose bit `i` is method `i` (as [`MethodSet::bits`] stores it).
    pub fn from_bits(bits: u32) -> MethodSet {
        MethodSet(bits)
    }

    /// Bit `i` set when method `i` is in the set.
    pub fn bits(self) -> u32 {
        self.0
    }

    /// Adds method `index`.
    pub fn insert(&mut self, index: usize) {
        self.0 |= 1 << index;
    }

    /// True when method `index` is in the set.
    pub fn contains(self, index: usize) -> bool {
        index < 32 && self.0 & (1 << index) != 0
    }

    /// How many methods.
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// True when it holds no method.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The methods of `self` not in `other`.
    pub fn without(self, other: MethodSet) -> MethodSet {
        MethodSet(self.0 & !other.0)
    }

    /// The member indices, ascending.
    pub fn indices(self) -> impl Iterator<Item = usize> {
        (0..32).filter(move |&i| self.contains(i))
    }

    /// The `k`-th member (0-based): a shard's method `k` is the sweep's
    /// method `nth(k)`.
    pub fn nth(self, k: usize) -> Option<usize> {
        self.indices().nth(k)
    }
}

/// Per configuration, the methods a sweep took whole from stored results
/// when it was submitted. Fixed from then on, so a coordinator restarted
/// mid-sweep plans exactly the shards it planned before.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reused {
    /// Index: configuration. Configurations past the end took nothing.
    taken: Vec<MethodSet>,
}

impl Reused {
    /// Nothing taken: every task runs.
    pub fn none() -> Reused {
        Reused::default()
    }

    /// From each configuration's taken methods, in configuration order.
    pub fn new(taken: Vec<MethodSet>) -> Reused {
        Reused { taken }
    }

    /// The methods configuration `config` took from stored results.
    pub fn taken(&self, config: u32) -> MethodSet {
        self.taken.get(config as usize).copied().unwrap_or_default()
    }

    /// The methods configuration `config` runs, of a sweep of `methods`.
    pub fn to_run(&self, config: u32, methods: usize) -> MethodSet {
        MethodSet::all(methods).without(self.taken(config))
    }

    /// True when nothing was taken.
    pub fn is_none(&self) -> bool {
        self.taken.iter().all(|m| m.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_numbers_its_methods_in_sweep_order() {
        let mut taken = MethodSet::EMPTY;
        taken.insert(1);
        let reused = Reused::new(vec![MethodSet::EMPTY, taken]);
        assert_eq!(reused.to_run(0, 3), MethodSet::all(3));
        let run = reused.to_run(1, 3);
        assert_eq!((run.len(), run.nth(0), run.nth(1), run.nth(2)), (2, Some(0), Some(2), None));
        assert_eq!(reused.to_run(7, 3), MethodSet::all(3), "past the end: nothing taken");
        assert!(!reused.is_none() && Reused::none().is_none());
        assert_eq!(MethodSet::all(14).len(), 14);
    }
}
