//! The engine against an independent, deliberately slow reference of docs/methods.md.
//!
//! The engine earns its speed with tricks (a padded layout without bounds
//! checks, degrees kept incrementally in 8 or 16 bits, a separate kernel for
//! move sets that are not closed under negation, a branch-free choice above
//! 32 moves, monomorphised tiebreaks). Each trick is a place where it could
//! drift from the spec without any published flag noticing, because the
//! published data covers only 2D (3,2), (4,1) and (4,3).
//! This file re-implements docs/methods.md plainly, from its text alone, and compares
//! the two flag for flag (success, attempts, cells visited, and the last
//! walk's path) on thousands of random boards in 1 to 4 dimensions, random
//! rules and explicit move lists, for every deterministic method. It also
//! replays the random methods' walks to check every step is a legal choice,
//! and compares the engine with `tour::baseline` on a subset.
//!
//! The reference uses coordinates as `Vec<i64>`, an explicit bounds check per
//! neighbour, a `Vec<bool>` of visited cells and degrees recounted from
//! scratch each time. It shares no code with the engine.
//!
//! The cases come from a fixed-seed generator, so a failure reproduces; set
//! `KSWEEP_REFERENCE_SEED` to explore other cases.

use std::collections::HashMap;

use tour::{verify, Board, Configuration, Method, Moves, Runner};

// ---------------------------------------------------------------------------
// A small deterministic random stream (SplitMix64), independent of the engine's.
// ---------------------------------------------------------------------------

struct TestRng(u64);

impl TestRng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform-enough integer in `lo..=hi` (tiny ranges; modulo bias is harmless here).
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

fn base_seed() -> u64 {
    std::env::var("KSWEEP_REFERENCE_SEED")
        .ok()
        .map(|s| s.parse().expect("KSWEEP_REFERENCE_SEED must be a u64"))
        .unwrap_or(0x5eed_2024)
}

// ---------------------------------------------------------------------------
// The reference: moves, walks and methods exactly as docs/methods.md words them.
// ---------------------------------------------------------------------------

/// Every permutation of `values` (duplicates included), by recursion.
fn permutations(values: &[i64]) -> Vec<Vec<i64>> {
    if values.is_empty() {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for i in 0..values.len() {
        let mut rest = values.to_vec();
        let first = rest.remove(i);
        for mut tail in permutations(&rest) {
            tail.insert(0, first);
            out.push(tail);
        }
    }
    out
}

/// The sign patterns of `n` non-zero coordinates in lexicographic order,
/// first coordinate most significant, + before -.
fn sign_patterns(n: usize) -> Vec<Vec<i64>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for first in [1, -1] {
        for tail in sign_patterns(n - 1) {
            let mut pattern = vec![first];
            pattern.extend(tail);
            out.push(pattern);
        }
    }
    out
}

/// docs/methods.md's canonical move order for a rule padded to `dims` axes: the
/// distinct magnitude permutations in descending lexicographic order, and
/// within each the sign patterns over its non-zero coordinates.
fn canonical_moves(rule: &[u32], dims: usize) -> Vec<Vec<i64>> {
    let mut padded: Vec<i64> = rule.iter().map(|&a| a as i64).collect();
    while padded.len() < dims {
        padded.push(0);
    }
    let mut magnitudes = permutations(&padded);
    magnitudes.sort();
    magnitudes.dedup();
    magnitudes.reverse();

    let mut moves = Vec::new();
    for magnitude in magnitudes {
        let nonzero = magnitude.iter().filter(|&&a| a != 0).count();
        for signs in sign_patterns(nonzero) {
            let mut next_sign = signs.iter();
            let mv = magnitude.iter().map(|&a| if a == 0 { 0 } else { a * next_sign.next().unwrap() }).collect();
            moves.push(mv);
        }
    }
    moves
}

/// The move order rotated left `r` times: each time the first move becomes the last.
fn rotated(order: &[Vec<i64>], r: usize) -> Vec<Vec<i64>> {
    let mut order = order.to_vec();
    for _ in 0..r {
        let first = order.remove(0);
        order.push(first);
    }
    order
}

/// A board for the reference: sides and cell numbering (row-major, axis 0
/// most significant, the numbering `tour::Board` documents).
struct RefBoard {
    sides: Vec<i64>,
}

impl RefBoard {
    fn cells(&self) -> usize {
        self.sides.iter().product::<i64>() as usize
    }

    fn index(&self, x: &[i64]) -> usize {
        let mut index = 0;
        for (axis, &xi) in x.iter().enumerate() {
            index = index * self.sides[axis] + xi;
        }
        index as usize
    }

    fn coords(&self, mut index: usize) -> Vec<i64> {
        let mut x = vec![0; self.sides.len()];
        for axis in (0..self.sides.len()).rev() {
            x[axis] = index as i64 % self.sides[axis];
            index /= self.sides[axis] as usize;
        }
        x
    }

    /// The index of `x + mv`, or `None` when that is off the board.
    fn neighbour(&self, x: &[i64], mv: &[i64]) -> Option<usize> {
        let mut index = 0;
        for axis in 0..x.len() {
            let c = x[axis] + mv[axis];
            if c < 0 || c >= self.sides[axis] {
                return None;
            }
            index = index * self.sides[axis] + c;
        }
        Some(index as usize)
    }

    /// Unvisited cells one move from `x`, counted from scratch.
    fn degree(&self, moves: &[Vec<i64>], visited: &[bool], x: &[i64]) -> usize {
        let mut count = 0;
        for mv in moves {
            if let Some(next) = self.neighbour(x, mv) {
                if !visited[next] {
                    count += 1;
                }
            }
        }
        count
    }

    /// Squared distance from the centre ((n_i - 1)/2 per axis), doubled on
    /// every axis to stay in integers: sum of (2 x_i - (n_i - 1))^2.
    fn doubled_distance(&self, x: &[i64]) -> i64 {
        let mut sum = 0;
        for (&xi, &n) in x.iter().zip(&self.sides) {
            let t = 2 * xi - (n - 1);
            sum += t * t;
        }
        sum
    }

    /// The candidates of one step: unvisited cells one move from `x`, in move
    /// order, with their degree and doubled centre distance.
    fn candidates(&self, order: &[Vec<i64>], visited: &[bool], x: &[i64]) -> Vec<(Vec<i64>, usize, i64)> {
        let mut out = Vec::new();
        for mv in order {
            if let Some(index) = self.neighbour(x, mv) {
                if !visited[index] {
                    let next: Vec<i64> = (0..x.len()).map(|axis| x[axis] + mv[axis]).collect();
                    let degree = self.degree(order, visited, &next);
                    let distance = self.doubled_distance(&next);
                    out.push((next, degree, distance));
                }
            }
        }
        out
    }

    /// One walk from `start` by rule W (`plus` false) or W+ (`plus` true);
    /// returns the visited cells in order.
    fn walk(&self, order: &[Vec<i64>], start: &[i64], plus: bool) -> Vec<usize> {
        let mut visited = vec![false; self.cells()];
        let mut current = start.to_vec();
        visited[self.index(&current)] = true;
        let mut path = vec![self.index(&current)];
        loop {
            let mut best: Option<(Vec<i64>, usize, i64)> = None;
            for candidate in self.candidates(order, &visited, &current) {
                let better = match &best {
                    None => true,
                    Some((_, degree, distance)) => {
                        candidate.1 < *degree || (plus && candidate.1 == *degree && candidate.2 > *distance)
                    }
                };
                if better {
                    best = Some(candidate);
                }
            }
            let Some((next, _, _)) = best else {
                return path;
            };
            visited[self.index(&next)] = true;
            path.push(self.index(&next));
            current = next;
        }
    }

    /// Checks that `path` is a walk rule WR (`plus` false) or WR+ could make:
    /// every step goes to a candidate of least degree (and, for WR+, of
    /// greatest distance among those), and the walk stops only when no
    /// candidate is left.
    fn check_random_walk(&self, order: &[Vec<i64>], path: &[usize], plus: bool) -> Result<(), String> {
        let mut visited = vec![false; self.cells()];
        visited[path[0]] = true;
        let mut current = self.coords(path[0]);
        for (step, &cell) in path.iter().enumerate().skip(1) {
            let candidates = self.candidates(order, &visited, &current);
            let least = candidates.iter().map(|c| c.1).min();
            let allowed: Vec<usize> = candidates
                .iter()
                .filter(|c| Some(c.1) == least)
                .filter(|c| !plus || candidates.iter().filter(|o| Some(o.1) == least).all(|o| o.2 <= c.2))
                .map(|c| self.index(&c.0))
                .collect();
            if !allowed.contains(&cell) {
                return Err(format!("step {step} went to cell {cell}; the rule allows {allowed:?}"));
            }
            visited[cell] = true;
            current = self.coords(cell);
        }
        let left = self.candidates(order, &visited, &current).len();
        if left > 0 {
            return Err(format!("walk stopped with {left} candidates left"));
        }
        Ok(())
    }
}

/// What a method reports, per docs/methods.md's table.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Outcome {
    success: bool,
    attempts: u32,
    visited: u64,
    path: Vec<u64>,
}

/// The reference's walks for one (board, moves, start), each made once:
/// the methods share their walks (aw's first is w's, mw interleaves both).
struct RefCase<'a> {
    board: &'a RefBoard,
    order: &'a [Vec<i64>],
    start: &'a [i64],
    walks: HashMap<(usize, bool), Vec<usize>>,
}

impl RefCase<'_> {
    fn walk(&mut self, rotation: usize, plus: bool) -> Vec<usize> {
        let (board, order, start) = (self.board, self.order, self.start);
        self.walks.entry((rotation, plus)).or_insert_with(|| board.walk(&rotated(order, rotation), start, plus)).clone()
    }

    /// Walks `(rotation, plus)` in turn until one visits every cell.
    fn attempts(&mut self, plan: &[(usize, bool)]) -> Outcome {
        let mut attempts = 0;
        let mut last = Vec::new();
        for &(rotation, plus) in plan {
            attempts += 1;
            last = self.walk(rotation, plus);
            if last.len() == self.board.cells() {
                break;
            }
        }
        Outcome {
            success: last.len() == self.board.cells(),
            attempts,
            visited: last.len() as u64,
            path: last.iter().map(|&c| c as u64).collect(),
        }
    }

    fn run(&mut self, method: Method) -> Outcome {
        let k = self.order.len();
        let plan: Vec<(usize, bool)> = match method {
            Method::W => vec![(0, false)],
            Method::WPlus => vec![(0, true)],
            Method::Aw => (0..k).map(|r| (r, false)).collect(),
            Method::AwPlus => (0..k).map(|r| (r, true)).collect(),
            Method::Mw => (0..k).flat_map(|r| [(r, false), (r, true)]).collect(),
            Method::Wr | Method::WrPlus => unreachable!("random methods are replayed, not rerun"),
            other => unreachable!("{other} is not a Warnsdorff method; it has tests of its own"),
        };
        self.attempts(&plan)
    }
}

// ---------------------------------------------------------------------------
// Cases and the comparison.
// ---------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum MoveSpec {
    Rule(Vec<u32>),
    Explicit(Vec<Vec<i64>>),
}

#[derive(Debug, Clone)]
struct Case {
    sides: Vec<u32>,
    moves: MoveSpec,
    start: Vec<i64>,
}

const DETERMINISTIC: [Method; 5] = [Method::W, Method::WPlus, Method::Aw, Method::AwPlus, Method::Mw];

/// Rules docs/methods.md and the report name; a quarter of the random rules are one.
const NAMED_RULES: [&[u32]; 5] = [&[2, 1], &[1, 2, 2], &[3, 2], &[4, 1], &[4, 3]];

/// Largest board the cases use.
const MAX_CELLS: u64 = 2000;

/// The reference's cost for aw, aw+ and mw grows about as cells x K^2 (up to
/// 2K walks of at most `cells` steps, each step trying K moves), so a case
/// with many moves gets a small board, which keeps a debug run fast.
const WORK_BUDGET: u64 = 300_000;

/// The baseline runs every method separately and allocates per neighbour;
/// it only gets the cases below this cells x K^2.
const BASELINE_WORK_BUDGET: u64 = 40_000;

/// The most cells a case with `k` moves may have (at least 16).
fn cell_limit(k: usize) -> u64 {
    (WORK_BUDGET / (k * k) as u64).clamp(16, MAX_CELLS)
}

/// D in 1..=4, weighted away from 1D, where few rules have tours.
fn random_dims(rng: &mut TestRng) -> usize {
    match rng.range(0, 19) {
        0 => 1,
        1..=8 => 2,
        9..=15 => 3,
        _ => 4,
    }
}

/// Random sides of `dims` axes in 1..=9 with at most `max_cells` cells.
fn random_sides(rng: &mut TestRng, dims: usize, max_cells: u64) -> Vec<u32> {
    loop {
        let sides: Vec<u32> = (0..dims).map(|_| rng.range(1, 9) as u32).collect();
        if sides.iter().map(|&n| n as u64).product::<u64>() <= max_cells {
            return sides;
        }
    }
}

fn random_rule(rng: &mut TestRng, dims: usize) -> Vec<u32> {
    if rng.chance(25) {
        let named: Vec<&[u32]> = NAMED_RULES.iter().copied().filter(|r| r.len() <= dims).collect();
        if !named.is_empty() {
            return named[rng.range(0, named.len() as i64 - 1) as usize].to_vec();
        }
    }
    loop {
        let len = rng.range(1, dims as i64) as usize;
        let rule: Vec<u32> = (0..len).map(|_| rng.range(0, 4) as u32).collect();
        if rule.iter().any(|&a| a != 0) {
            return rule;
        }
    }
}

/// Distinct non-zero moves with components in -3..=3: usually 1..=8 of
/// them, sometimes 33..=64 (the engine picks W's move branch-free above 32
/// moves). A third of the lists are closed under negation (the engine's
/// symmetric kernel), the rest usually are not (its predecessor kernel).
fn random_explicit(rng: &mut TestRng, dims: usize) -> Vec<Vec<i64>> {
    let want = if rng.chance(15) { rng.range(33, 64) } else { rng.range(1, 8) } as usize;
    let symmetric = rng.chance(33);
    let mut list: Vec<Vec<i64>> = Vec::new();
    for _ in 0..1000 {
        if list.len() >= want {
            break;
        }
        let mv: Vec<i64> = (0..dims).map(|_| rng.range(-3, 3)).collect();
        if mv.iter().all(|&c| c == 0) || list.contains(&mv) {
            continue;
        }
        if symmetric {
            let neg: Vec<i64> = mv.iter().map(|c| -c).collect();
            list.push(mv);
            if !list.contains(&neg) {
                list.push(neg);
            }
        } else {
            list.push(mv);
        }
    }
    if symmetric {
        // Shuffle so a move and its negation are not always neighbours in the order.
        for i in (1..list.len()).rev() {
            let j = rng.range(0, i as i64) as usize;
            list.swap(i, j);
        }
    }
    list
}

fn random_start(rng: &mut TestRng, sides: &[u32]) -> Vec<i64> {
    sides.iter().map(|&n| rng.range(0, n as i64 - 1)).collect()
}

fn rule_case(rng: &mut TestRng) -> Case {
    let dims = random_dims(rng);
    let rule = random_rule(rng, dims);
    let k = canonical_moves(&rule, dims).len();
    let sides = random_sides(rng, dims, cell_limit(k));
    let start = random_start(rng, &sides);
    Case { sides, moves: MoveSpec::Rule(rule), start }
}

fn explicit_case(rng: &mut TestRng) -> Case {
    let dims = random_dims(rng);
    let list = random_explicit(rng, dims);
    let sides = random_sides(rng, dims, cell_limit(list.len()));
    let start = random_start(rng, &sides);
    Case { sides, moves: MoveSpec::Explicit(list), start }
}

/// Tallies of what a batch of cases compared.
#[derive(Debug, Default)]
struct Tally {
    /// Cases (board, moves, start) run.
    cases: u64,
    /// (case, deterministic method) results compared with the reference.
    comparisons: u64,
    /// Of those, the successes.
    successes: u64,
    /// Successful paths checked with `tour::verify`, random methods included.
    verified: u64,
    /// WR and WR+ walks replayed step by step.
    random_replays: u64,
    /// (case, method) results compared with `tour::baseline`.
    baseline: u64,
    /// Cases with more than 32 moves (the engine's branch-free W choice).
    many_moves: u64,
    /// Cases with 255+ moves (the engine's 16-bit degree buffer).
    wide: u64,
}

/// Runs one case on the engine and the reference and compares every
/// method; also on the baseline when `with_baseline` and it is affordable.
fn compare(case: &Case, with_baseline: bool, tally: &mut Tally) {
    let dims = case.sides.len();
    let board = Board::new(&case.sides).unwrap();
    let (moves, order) = match &case.moves {
        MoveSpec::Rule(rule) => (Moves::from_rule(rule, dims).unwrap(), canonical_moves(rule, dims)),
        MoveSpec::Explicit(list) => (Moves::explicit(list, dims).unwrap(), list.clone()),
    };
    let engine_order: Vec<Vec<i64>> = moves.iter().map(|m| m.iter().map(|&c| c as i64).collect()).collect();
    assert_eq!(engine_order, order, "move order differs for {case:?}");
    let (k, cells) = (order.len() as u64, board.cells());
    if k > 32 {
        tally.many_moves += 1;
    }
    if k >= 255 {
        tally.wide += 1;
    }
    let with_baseline = with_baseline && cells * k * k <= BASELINE_WORK_BUDGET;

    let runner = Runner::new(Configuration::new(board.clone(), moves.clone()).unwrap()).unwrap();
    let mut ws = runner.workspace();
    let start_u64: Vec<u64> = case.start.iter().map(|&x| x as u64).collect();
    let start = board.index_of(&start_u64).unwrap();

    let ref_board = RefBoard { sides: case.sides.iter().map(|&n| n as i64).collect() };
    assert_eq!(ref_board.index(&case.start) as u64, start);
    let mut reference = RefCase { board: &ref_board, order: &order, start: &case.start, walks: HashMap::new() };

    for method in DETERMINISTIC {
        let got = runner.run(&mut ws, start, method, 0, true);
        let want = reference.run(method);
        let got_outcome = Outcome {
            success: got.success,
            attempts: got.attempts,
            visited: got.visited,
            path: got.path.clone().expect("asked for the path"),
        };
        assert_eq!(got_outcome, want, "engine (left) and reference (right) disagree: method {method}, {case:?}");
        tally.comparisons += 1;
        if got.success {
            tally.successes += 1;
            verify(&board, &moves, got.path.as_ref().unwrap())
                .unwrap_or_else(|e| panic!("method {method}, {case:?}: {e}"));
            tally.verified += 1;
        }
        if with_baseline {
            let start_u32: Vec<u32> = case.start.iter().map(|&x| x as u32).collect();
            let baseline = tour::baseline::run(&board, &moves, &start_u32, method).expect("deterministic method");
            assert_eq!(
                (got.success, got.attempts),
                baseline,
                "engine (left) and baseline (right) disagree: method {method}, {case:?}"
            );
            tally.baseline += 1;
        }
    }

    for (method, plus) in [(Method::Wr, false), (Method::WrPlus, true)] {
        let seed = runner.config().task_seed(7, start, method);
        let got = runner.run(&mut ws, start, method, seed, true);
        let path: Vec<usize> = got.path.as_ref().unwrap().iter().map(|&c| c as usize).collect();
        assert_eq!(got.attempts, 1);
        assert_eq!(got.visited, path.len() as u64);
        assert_eq!(path[0] as u64, start);
        ref_board
            .check_random_walk(&order, &path, plus)
            .unwrap_or_else(|e| panic!("method {method}, seed {seed}, {case:?}: {e}"));
        assert_eq!(got.success, path.len() == ref_board.cells());
        if got.success {
            verify(&board, &moves, got.path.as_ref().unwrap())
                .unwrap_or_else(|e| panic!("method {method}, {case:?}: {e}"));
            tally.verified += 1;
        }
        tally.random_replays += 1;
    }
    tally.cases += 1;
}

// ---------------------------------------------------------------------------
// Tests.
// ---------------------------------------------------------------------------

/// The reference's own move order reproduces docs/methods.md's worked examples, so
/// agreement with it means agreement with the spec.
#[test]
fn reference_move_order_matches_spec_examples() {
    let v = |m: &[&[i64]]| m.iter().map(|x| x.to_vec()).collect::<Vec<_>>();
    assert_eq!(
        canonical_moves(&[2, 1], 2),
        v(&[&[2, 1], &[2, -1], &[-2, 1], &[-2, -1], &[1, 2], &[1, -2], &[-1, 2], &[-1, -2]])
    );
    let three = canonical_moves(&[2, 1], 3);
    assert_eq!(three[..5], v(&[&[2, 1, 0], &[2, -1, 0], &[-2, 1, 0], &[-2, -1, 0], &[2, 0, 1]])[..]);
    let leaders: Vec<Vec<i64>> = three.iter().step_by(4).cloned().collect();
    assert_eq!(leaders, v(&[&[2, 1, 0], &[2, 0, 1], &[1, 2, 0], &[1, 0, 2], &[0, 2, 1], &[0, 1, 2]]));
    for d in 2..=5 {
        assert_eq!(canonical_moves(&[2, 1], d).len(), 4 * d * (d - 1));
    }
    assert_eq!(canonical_moves(&[1, 2, 2], 3).len(), 24);
    assert_eq!(rotated(&v(&[&[1], &[2], &[3]]), 1), v(&[&[2], &[3], &[1]]));
}

/// The engine's move order equals the reference's for every rule with
/// entries 0..=4 in 1 to 4 dimensions.
#[test]
fn canonical_order_agrees_for_every_small_rule() {
    let mut compared = 0;
    for dims in 1..=4usize {
        for len in 1..=dims {
            for code in 0..5u32.pow(len as u32) {
                let rule: Vec<u32> = (0..len).map(|i| code / 5u32.pow(i as u32) % 5).collect();
                if rule.iter().all(|&a| a == 0) {
                    continue;
                }
                let engine: Vec<Vec<i64>> = Moves::from_rule(&rule, dims)
                    .unwrap()
                    .iter()
                    .map(|m| m.iter().map(|&c| c as i64).collect())
                    .collect();
                assert_eq!(engine, canonical_moves(&rule, dims), "rule {rule:?}, D={dims}");
                compared += 1;
            }
        }
    }
    println!("canonical order: {compared} (rule, D) pairs compared");
    assert_eq!(compared, 4 + (4 + 24) + (4 + 24 + 124) + (4 + 24 + 124 + 624));
}

/// Hand-picked cases: docs/methods.md's rules on their usual boards, a 1-cell board,
/// 1D boards, non-symmetric explicit lists (3 moves, and 40 moves: the
/// branch-free W choice) and a rule with 384 moves (16-bit degrees).
#[test]
fn engine_matches_reference_on_named_cases() {
    let rule = |r: &[u32]| MoveSpec::Rule(r.to_vec());
    let explicit = MoveSpec::Explicit(vec![vec![1, 2], vec![2, -1], vec![-1, 0]]);
    // Every (a, b) in -4..=4 squared that is lexicographically above (0, 0):
    // one of each pair (v, -v), so no move's negation is a move.
    let half_plane: Vec<Vec<i64>> =
        (-4..=4).flat_map(|a| (-4..=4).map(move |b| vec![a, b])).filter(|v| (v[0], v[1]) > (0, 0)).collect();
    assert_eq!(half_plane.len(), 40);
    let half_plane = MoveSpec::Explicit(half_plane);
    let cases = [
        (vec![8, 8], rule(&[2, 1]), vec![0, 0]),
        (vec![8, 8], rule(&[2, 1]), vec![3, 4]),
        (vec![5, 5], rule(&[2, 1]), vec![1, 0]),
        (vec![10, 10], rule(&[3, 2]), vec![0, 0]),
        (vec![9, 9], rule(&[4, 1]), vec![4, 4]),
        (vec![12, 12], rule(&[4, 3]), vec![2, 7]),
        (vec![5, 5, 5], rule(&[2, 1]), vec![0, 0, 0]),
        (vec![5, 5, 5], rule(&[1, 2, 2]), vec![2, 2, 2]),
        (vec![1], rule(&[1]), vec![0]),
        (vec![7], rule(&[1]), vec![3]),
        (vec![6], rule(&[2]), vec![0]),
        (vec![1, 1], rule(&[2, 1]), vec![0, 0]),
        (vec![6, 7], explicit.clone(), vec![0, 0]),
        (vec![6, 7], explicit, vec![5, 6]),
        (vec![9, 9], half_plane.clone(), vec![0, 0]),
        (vec![7, 8], half_plane, vec![3, 3]),
        (vec![5, 4, 3, 2], rule(&[1, 2, 3, 4]), vec![0, 0, 0, 0]),
    ];
    let mut tally = Tally::default();
    for (sides, moves, start) in cases {
        let case = Case { sides, moves, start };
        compare(&case, true, &mut tally);
    }
    println!("named cases: {tally:?}");
    assert_eq!(tally.comparisons, 17 * DETERMINISTIC.len() as u64);
    assert!(tally.successes > 0, "some named case must find a tour");
    assert_eq!((tally.many_moves, tally.wide), (3, 1));
}

/// Random rules on random boards in 1 to 4 dimensions.
#[test]
fn engine_matches_reference_on_random_rules() {
    const CASES: u64 = 2500;
    let mut rng = TestRng(base_seed());
    let mut tally = Tally::default();
    for i in 0..CASES {
        let case = rule_case(&mut rng);
        compare(&case, i % 4 == 0, &mut tally);
    }
    println!("random rules: {tally:?}");
    assert_eq!(tally.cases, CASES);
    assert_eq!(tally.comparisons, CASES * DETERMINISTIC.len() as u64);
    assert!(tally.successes >= CASES / 4, "too few tours to be a test: {tally:?}");
    assert!(tally.baseline > 0 && tally.many_moves > 0, "{tally:?}");
}

/// Explicit move lists, many not closed under negation: the engine walks
/// those with a separate kernel.
#[test]
fn engine_matches_reference_on_explicit_lists() {
    const CASES: u64 = 2000;
    let mut rng = TestRng(base_seed() ^ 0xe4_91c1);
    let mut tally = Tally::default();
    for i in 0..CASES {
        let case = explicit_case(&mut rng);
        compare(&case, i % 4 == 0, &mut tally);
    }
    println!("explicit lists: {tally:?}");
    assert_eq!(tally.cases, CASES);
    assert_eq!(tally.comparisons, CASES * DETERMINISTIC.len() as u64);
    assert!(tally.successes > 0, "too few tours to be a test: {tally:?}");
    assert!(tally.baseline > 0 && tally.many_moves > 0, "{tally:?}");
}
