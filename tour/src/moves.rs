//! Move sets: a leaper rule expanded in docs/methods.md's canonical order, or an
//! explicit list whose order is kept as given.

use std::collections::HashMap;

use crate::error::{Error, Result};

/// Most moves a set may hold. Degrees are stored in at most 16 bits, and a
/// walk's cost grows with K, so a rule that explodes into millions of moves
/// is refused up front.
pub const MAX_MOVES: usize = 16_384;
/// Largest absolute move component; keeps the padded board layout bounded.
pub const MAX_COMPONENT: u32 = 1 << 20;

/// Where a move set came from; part of a configuration's identity.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum MoveSource {
    /// A leaper rule such as (2,1) or (1,2,2), unpadded as the user gave it.
    Rule(Vec<u32>),
    /// An explicit list; its order is the move order.
    Explicit,
}

/// How the moves act on the chessboard colouring (coordinate-sum parity).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Colouring {
    /// Every move changes colour (every move's component sum is odd).
    AlwaysChanges,
    /// No move changes colour: no tour exists on a board of 2+ cells.
    NeverChanges,
    /// Some moves change colour and some do not.
    Mixed,
}

/// An ordered, validated set of K distinct non-zero moves in D dimensions.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Moves {
    dims: usize,
    /// K x D components, move-major.
    components: Vec<i32>,
    source: MoveSource,
}

impl Moves {
    /// Expands a rule (a_1..a_m), m <= D, in the canonical order: distinct
    /// magnitude permutations in descending lexicographic order, and within
    /// each the sign patterns over the non-zero axes, + before -, first axis
    /// most significant.
    pub fn from_rule(rule: &[u32], dims: usize) -> Result<Moves> {
        if rule.is_empty() {
            return Err(Error::RuleEmpty);
        }
        if rule.len() > dims {
            return Err(Error::RuleTooLong { len: rule.len(), dims });
        }
        if rule.iter().all(|&a| a == 0) {
            return Err(Error::RuleAllZero);
        }
        if let Some(&value) = rule.iter().find(|&&a| a > MAX_COMPONENT) {
            return Err(Error::RuleEntry { value, max: MAX_COMPONENT });
        }
        let mut padded: Vec<u32> = rule.to_vec();
        padded.resize(dims, 0);
        let count = move_count(&padded);
        if count > MAX_MOVES as u128 {
            return Err(Error::TooManyMoves { count, max: MAX_MOVES });
        }

        padded.sort_unstable_by(|a, b| b.cmp(a));
        let nonzero = padded.iter().filter(|&&a| a != 0).count();
        let mut components = Vec::with_capacity(count as usize * dims);
        loop {
            for signs in 0u32..(1 << nonzero) {
                // Bit (nonzero-1-j) set means the j-th non-zero axis is negative,
                // so counting up walks the patterns in + before - order.
                let mut j = 0;
                for &a in &padded {
                    if a == 0 {
                        components.push(0);
                    } else {
                        let negative = signs >> (nonzero - 1 - j) & 1 == 1;
                        components.push(if negative { -(a as i32) } else { a as i32 });
                        j += 1;
                    }
                }
            }
            if !prev_permutation(&mut padded) {
                break;
            }
        }
        Ok(Moves { dims, components, source: MoveSource::Rule(rule.to_vec()) })
    }

    /// Validates an explicit list: D components each, none all-zero, no
    /// duplicates, components within ±MAX_COMPONENT. Order is kept.
    pub fn explicit(list: &[Vec<i64>], dims: usize) -> Result<Moves> {
        if list.is_empty() {
            return Err(Error::NoMoves);
        }
        if list.len() > MAX_MOVES {
            return Err(Error::TooManyMoves { count: list.len() as u128, max: MAX_MOVES });
        }
        let mut seen: HashMap<&[i64], usize> = HashMap::with_capacity(list.len());
        let mut components = Vec::with_capacity(list.len() * dims);
        for (index, mv) in list.iter().enumerate() {
            if mv.len() != dims {
                return Err(Error::MoveLength { index, len: mv.len(), dims });
            }
            if mv.iter().all(|&c| c == 0) {
                return Err(Error::ZeroMove { index });
            }
            if let Some(&value) = mv.iter().find(|c| c.unsigned_abs() > MAX_COMPONENT as u64) {
                return Err(Error::MoveComponent { index, value, max: MAX_COMPONENT });
            }
            if let Some(&first) = seen.get(mv.as_slice()) {
                return Err(Error::DuplicateMove { index, first });
            }
            seen.insert(mv, index);
            components.extend(mv.iter().map(|&c| c as i32));
        }
        Ok(Moves { dims, components, source: MoveSource::Explicit })
    }

    /// Number of moves K.
    pub fn len(&self) -> usize {
        self.components.len() / self.dims
    }

    /// Always false: a validated set has at least one move.
    pub fn is_empty(&self) -> bool {
        self.components.is_empty()
    }

    /// Dimension D of every move.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// Move `k` as its D components.
    pub fn get(&self, k: usize) -> &[i32] {
        &self.components[k * self.dims..(k + 1) * self.dims]
    }

    /// The moves in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[i32]> + '_ {
        self.components.chunks_exact(self.dims)
    }

    /// Where the set came from (a rule, or an explicit list).
    pub fn source(&self) -> &MoveSource {
        &self.source
    }

    /// Largest absolute component over all moves: the board padding a walk needs.
    pub fn reach(&self) -> u32 {
        self.components.iter().map(|c| c.unsigned_abs()).max().unwrap_or(0)
    }

    /// True when every move's negation is also a move: the move graph is
    /// then undirected (every rule-generated set is), which the solvers'
    /// stronger rules need.
    pub fn closed_under_negation(&self) -> bool {
        let set: std::collections::HashSet<&[i32]> = self.iter().collect();
        self.iter().all(|m| set.contains(m.iter().map(|&c| -c).collect::<Vec<_>>().as_slice()))
    }

    /// How the moves act on the colouring by coordinate-sum parity.
    pub fn colouring(&self) -> Colouring {
        let odd = self.iter().filter(|m| m.iter().map(|&c| c as i64).sum::<i64>() % 2 != 0).count();
        match odd {
            0 => Colouring::NeverChanges,
            n if n == self.len() => Colouring::AlwaysChanges,
            _ => Colouring::Mixed,
        }
    }

    /// `"2,1"` for a rule, `"2,1 2,-1 ..."` for an explicit list: how a user
    /// writes the set on the command line.
    pub fn describe(&self) -> String {
        match &self.source {
            MoveSource::Rule(rule) => rule.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
            MoveSource::Explicit => self
                .iter()
                .map(|m| m.iter().map(i32::to_string).collect::<Vec<_>>().join(","))
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}

/// Distinct signed vectors a padded rule expands to: the multinomial count of
/// distinct permutations times 2^(non-zero entries). Saturates instead of
/// overflowing, so a huge rule is refused rather than wrapped.
fn move_count(padded: &[u32]) -> u128 {
    let mut counts: HashMap<u32, u32> = HashMap::new();
    for &a in padded {
        *counts.entry(a).or_default() += 1;
    }
    // Multinomial built incrementally: C(placed + m, m) per value, exact at each step.
    let mut perms: u128 = 1;
    let mut placed: u128 = 0;
    for &m in counts.values() {
        for i in 1..=m as u128 {
            placed += 1;
            perms = perms.saturating_mul(placed) / i;
        }
    }
    let nonzero = padded.iter().filter(|&&a| a != 0).count() as u32;
    perms.saturating_mul(1u128.checked_shl(nonzero).unwrap_or(u128::MAX))
}

/// Steps to the previous permutation in lexicographic order; false when the
/// slice was already the smallest (ascending).
fn prev_permutation(v: &mut [u32]) -> bool {
    let Some(i) = (1..v.len()).rev().find(|&i| v[i - 1] > v[i]) else {
        return false;
    };
    let j = (i..v.len()).rev().find(|&j| v[j] < v[i - 1]).expect("v[i] < v[i-1] exists");
    v.swap(i - 1, j);
    v[i..].reverse();
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(m: &Moves) -> Vec<Vec<i32>> {
        m.iter().map(|v| v.to_vec()).collect()
    }

    #[test]
    fn canonical_order_2d() {
        let m = Moves::from_rule(&[2, 1], 2).unwrap();
        let want = [[2, 1], [2, -1], [-2, 1], [-2, -1], [1, 2], [1, -2], [-1, 2], [-1, -2]];
        assert_eq!(list(&m), want.iter().map(|v| v.to_vec()).collect::<Vec<_>>());
    }

    #[test]
    fn canonical_order_3d() {
        let m = Moves::from_rule(&[2, 1], 3).unwrap();
        let got = list(&m);
        let head = [[2, 1, 0], [2, -1, 0], [-2, 1, 0], [-2, -1, 0], [2, 0, 1]];
        assert_eq!(&got[..5], &head.iter().map(|v| v.to_vec()).collect::<Vec<_>>()[..]);
        // Group leaders (all-plus patterns) every 4 moves, in descending lex order.
        let leaders: Vec<Vec<i32>> = got.iter().step_by(4).cloned().collect();
        let want = [[2, 1, 0], [2, 0, 1], [1, 2, 0], [1, 0, 2], [0, 2, 1], [0, 1, 2]];
        assert_eq!(leaders, want.iter().map(|v| v.to_vec()).collect::<Vec<_>>());
    }

    #[test]
    fn move_counts() {
        for d in 2..=6 {
            assert_eq!(Moves::from_rule(&[2, 1], d).unwrap().len(), 4 * d * (d - 1), "d={d}");
        }
        assert_eq!(Moves::from_rule(&[1, 2, 2], 3).unwrap().len(), 24);
        assert_eq!(Moves::from_rule(&[1], 3).unwrap().len(), 6);
        assert_eq!(Moves::from_rule(&[2, 2], 2).unwrap().len(), 4);
        // Counting agrees with generation, and no move repeats.
        for rule in [&[3u32, 2][..], &[1, 2, 2, 2], &[4, 0, 1], &[1, 1, 1]] {
            let m = Moves::from_rule(rule, 4).unwrap();
            let mut padded = rule.to_vec();
            padded.resize(4, 0);
            assert_eq!(m.len() as u128, move_count(&padded));
            let mut seen = std::collections::HashSet::new();
            assert!(m.iter().all(|v| seen.insert(v.to_vec())));
        }
    }

    #[test]
    fn rule_errors() {
        assert_eq!(Moves::from_rule(&[0, 0], 2), Err(Error::RuleAllZero));
        assert_eq!(Moves::from_rule(&[2, 1, 1], 2), Err(Error::RuleTooLong { len: 3, dims: 2 }));
        assert_eq!(Moves::from_rule(&[], 2), Err(Error::RuleEmpty));
        assert!(matches!(Moves::from_rule(&[1, 2, 3, 4, 5, 6], 32), Err(Error::TooManyMoves { .. })));
    }

    #[test]
    fn explicit_errors_and_order() {
        let m = Moves::explicit(&[vec![1, 2], vec![-2, 1]], 2).unwrap();
        assert_eq!(list(&m), vec![vec![1, 2], vec![-2, 1]]);
        assert_eq!(Moves::explicit(&[vec![1, 2], vec![0, 0]], 2), Err(Error::ZeroMove { index: 1 }));
        assert_eq!(Moves::explicit(&[vec![1, 2], vec![1]], 2), Err(Error::MoveLength { index: 1, len: 1, dims: 2 }));
        assert_eq!(
            Moves::explicit(&[vec![1, 2], vec![2, 1], vec![1, 2]], 2),
            Err(Error::DuplicateMove { index: 2, first: 0 })
        );
    }

    #[test]
    fn colouring() {
        assert_eq!(Moves::from_rule(&[2, 1], 3).unwrap().colouring(), Colouring::AlwaysChanges);
        assert_eq!(Moves::from_rule(&[1, 2, 2], 3).unwrap().colouring(), Colouring::AlwaysChanges);
        assert_eq!(Moves::from_rule(&[3, 1], 2).unwrap().colouring(), Colouring::NeverChanges);
        let mixed = Moves::explicit(&[vec![1, 0], vec![1, 1]], 2).unwrap();
        assert_eq!(mixed.colouring(), Colouring::Mixed);
    }
}
