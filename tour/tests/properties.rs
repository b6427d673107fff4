//! Properties every engine result must have, whatever the board, rule,
//! start, method or seed: the figures a sweep reports are self-consistent
//! (a success is a verified tour, attempts stay within the method's bounds,
//! the last walk is a legal walk that stopped only when stuck), the methods
//! compose as docs/methods.md's table says (mw is aw interleaved with aw+), the
//! starts of a configuration follow docs/methods.md's colour rule, and reruns are
//! bit-identical however workspaces are reused.
//!
//! `tests/reference.rs` checks the exact flags against an independent
//! implementation; this file checks the invariants on a wider spread of
//! inputs, including the random methods WR and WR+.

use std::collections::{BTreeSet, HashSet};

use proptest::prelude::*;
use proptest::sample::Index;
use tour::{verify, Board, Configuration, Eligibility, Method, Moves, Runner, Task, TaskOptions, TaskResult};

// ---------------------------------------------------------------------------
// Inputs.
// ---------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum MoveSpec {
    Rule(Vec<u32>),
    Explicit(Vec<Vec<i64>>),
}

/// A configuration as plain data, so proptest can print and shrink it.
#[derive(Debug, Clone)]
struct Shape {
    sides: Vec<u32>,
    moves: MoveSpec,
}

impl Shape {
    fn configuration(&self) -> Configuration {
        let dims = self.sides.len();
        let moves = match &self.moves {
            MoveSpec::Rule(rule) => Moves::from_rule(rule, dims).unwrap(),
            MoveSpec::Explicit(list) => Moves::explicit(list, dims).unwrap(),
        };
        Configuration::new(Board::new(&self.sides).unwrap(), moves).unwrap()
    }

    fn runner(&self) -> Runner {
        Runner::new(self.configuration()).unwrap()
    }

    fn cells(&self) -> u64 {
        self.sides.iter().map(|&n| n as u64).product()
    }
}

/// Boards of 1 to 3 axes with sides 1..=8; mostly rules with entries 0..=4,
/// sometimes an explicit list of up to 8 moves with components in -3..=3
/// (often not closed under negation, and of mixed colour).
fn shape() -> impl Strategy<Value = Shape> {
    (1usize..=3).prop_flat_map(|dims| {
        let sides = prop::collection::vec(1u32..=8, dims);
        let rule = prop::collection::vec(0u32..=4, 1..=dims)
            .prop_filter("a rule needs a non-zero entry", |r| r.iter().any(|&a| a != 0))
            .prop_map(MoveSpec::Rule);
        let explicit = prop::collection::vec(prop::collection::vec(-3i64..=3, dims), 1..=8)
            .prop_map(|list| {
                let mut distinct: Vec<Vec<i64>> = Vec::new();
                for mv in list {
                    if mv.iter().any(|&c| c != 0) && !distinct.contains(&mv) {
                        distinct.push(mv);
                    }
                }
                distinct
            })
            .prop_filter("a list needs a non-zero move", |l| !l.is_empty())
            .prop_map(MoveSpec::Explicit);
        (sides, prop_oneof![3 => rule, 1 => explicit]).prop_map(|(sides, moves)| Shape { sides, moves })
    })
}

// ---------------------------------------------------------------------------
// Helpers.
// ---------------------------------------------------------------------------

/// Everything a result reports except its wall time.
fn flags(r: &TaskResult) -> (bool, u32, u64, Option<Vec<u64>>) {
    (r.success, r.attempts, r.visited, r.path.clone())
}

/// Checks that `path` is a walk the rules allow: it starts at `start`,
/// visits no cell twice, every step is a move, and it ends only where no
/// move leads to an unvisited cell.
fn check_walk(config: &Configuration, start: u64, path: &[u64]) -> Result<(), String> {
    let board = config.board();
    let moves: HashSet<Vec<i64>> = config.moves().iter().map(|m| m.iter().map(|&c| c as i64).collect()).collect();
    let coords = |cell: u64| -> Vec<i64> { board.coords(cell).iter().map(|&x| x as i64).collect() };
    if path.first() != Some(&start) {
        return Err(format!("path starts at {:?}, not {start}", path.first()));
    }
    let mut seen = HashSet::new();
    for (step, &cell) in path.iter().enumerate() {
        if cell >= board.cells() || !seen.insert(cell) {
            return Err(format!("step {step}: cell {cell} is off the board or repeated"));
        }
        if step > 0 {
            let (a, b) = (coords(path[step - 1]), coords(cell));
            let diff: Vec<i64> = a.iter().zip(&b).map(|(x, y)| y - x).collect();
            if !moves.contains(&diff) {
                return Err(format!("step {step}: {diff:?} is not a move"));
            }
        }
    }
    let last = coords(*path.last().unwrap());
    for mv in &moves {
        let next: Vec<i64> = last.iter().zip(mv).map(|(x, m)| x + m).collect();
        let on_board = next.iter().zip(board.sides()).all(|(&x, &n)| x >= 0 && x < n as i64);
        if on_board {
            let next_u64: Vec<u64> = next.iter().map(|&x| x as u64).collect();
            if !seen.contains(&board.index_of(&next_u64).unwrap()) {
                return Err(format!("walk stopped at {last:?} but {next:?} is unvisited"));
            }
        }
    }
    Ok(())
}

/// The eligible starts by docs/methods.md's colour rule, computed cell by cell;
/// `None` when the configuration is impossible.
fn spec_eligible(config: &Configuration) -> Option<Vec<u64>> {
    let board = config.board();
    let odd = |m: &[i32]| m.iter().map(|&c| c as i64).sum::<i64>() % 2 != 0;
    let every_move_changes = config.moves().iter().all(odd);
    let no_move_changes = !config.moves().iter().any(odd);
    if no_move_changes && board.cells() > 1 {
        return None;
    }
    let even_only = every_move_changes && board.cells() % 2 == 1;
    let cells = (0..board.cells()).filter(|&i| !even_only || board.coords(i).iter().sum::<u32>() % 2 == 0).collect();
    Some(cells)
}

// ---------------------------------------------------------------------------
// Properties.
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Every method's result is self-consistent, and a success is a tour.
    #[test]
    fn results_are_consistent_and_successes_verify(
        shape in shape(),
        start in any::<Index>(),
        seed in any::<u64>(),
    ) {
        let runner = shape.runner();
        let config = runner.config();
        let k = config.moves().len();
        let cells = shape.cells();
        let start = start.index(cells as usize) as u64;
        let mut ws = runner.workspace();
        for method in Method::WARNSDORFF {
            let r = runner.run(&mut ws, start, method, seed, true);
            let path = r.path.as_ref().expect("asked for the path");
            prop_assert_eq!(r.visited, path.len() as u64, "{}", method);
            prop_assert_eq!(r.success, r.visited == cells, "{}", method);
            prop_assert!(
                (1..=method.max_attempts(k) as u32).contains(&r.attempts),
                "{}: {} attempts with K = {}", method, r.attempts, k
            );
            if !r.success {
                // A failure means every walk the method may make was made.
                prop_assert_eq!(r.attempts as usize, method.max_attempts(k), "{}", method);
            }
            if let Err(e) = check_walk(config, start, path) {
                return Err(TestCaseError::fail(format!("{method}: {e}")));
            }
            if r.success {
                if let Err(e) = verify(config.board(), config.moves(), path) {
                    return Err(TestCaseError::fail(format!("{method}: {e}")));
                }
            }
        }
    }

    /// aw and aw+ stop at their first walk when it succeeds, and mw is aw and
    /// aw+ interleaved: it succeeds iff one of them does, after exactly the
    /// walks that interleaving implies.
    #[test]
    fn methods_compose_as_the_spec_table_says(
        shape in shape(),
        start in any::<Index>(),
    ) {
        let runner = shape.runner();
        let k = runner.config().moves().len() as u32;
        let start = start.index(shape.cells() as usize) as u64;
        let mut ws = runner.workspace();
        let mut run = |method| runner.run(&mut ws, start, method, 0, true);
        let (w, w_plus) = (run(Method::W), run(Method::WPlus));
        let (aw, aw_plus, mw) = (run(Method::Aw), run(Method::AwPlus), run(Method::Mw));

        if w.success {
            prop_assert_eq!(aw.attempts, 1);
            prop_assert_eq!(&aw.path, &w.path);
        }
        if w_plus.success {
            prop_assert_eq!(aw_plus.attempts, 1);
            prop_assert_eq!(&aw_plus.path, &w_plus.path);
        }
        prop_assert!(mw.attempts <= 2 * k);
        prop_assert_eq!(mw.success, aw.success || aw_plus.success);
        // aw's walk a (1-based) is mw's walk 2a - 1; aw+'s walk b is mw's 2b.
        let via_aw = if aw.success { 2 * aw.attempts - 1 } else { u32::MAX };
        let via_aw_plus = if aw_plus.success { 2 * aw_plus.attempts } else { u32::MAX };
        let expected = via_aw.min(via_aw_plus).min(2 * k);
        prop_assert_eq!(mw.attempts, expected);
        // Its last walk is the one that succeeded, or aw+'s last when none did.
        let last = if via_aw < via_aw_plus { &aw.path } else { &aw_plus.path };
        prop_assert_eq!(&mw.path, last);
    }

    /// The starts of a configuration follow docs/methods.md's colour rule and its
    /// exhaustive-or-sampled rule, and depend only on the seed.
    #[test]
    fn starts_follow_the_colour_rule(
        shape in shape(),
        per_config in any::<Index>(),
        seed in any::<u64>(),
    ) {
        let config = shape.configuration();
        let cells = shape.cells();
        let per_config = per_config.index(cells as usize + 3) as u64;
        let expected = spec_eligible(&config);

        prop_assert_eq!(config.eligibility() == Eligibility::Impossible, expected.is_none());
        let eligible = expected.unwrap_or_default();
        prop_assert_eq!(config.eligible_count(), eligible.len() as u64);
        let eligible_set: BTreeSet<u64> = eligible.iter().copied().collect();
        for cell in 0..cells {
            prop_assert_eq!(config.is_eligible(cell), eligible_set.contains(&cell), "cell {}", cell);
        }

        let starts = config.starts(per_config, seed).unwrap();
        prop_assert!(starts.cells.windows(2).all(|w| w[0] < w[1]), "sorted, distinct");
        prop_assert!(starts.cells.iter().all(|c| eligible_set.contains(c)));
        prop_assert_eq!(starts.cells.len() as u64, per_config.min(eligible.len() as u64));
        prop_assert_eq!(starts.exhaustive, eligible.len() as u64 <= per_config);
        if starts.exhaustive {
            prop_assert_eq!(&starts.cells, &eligible);
        }
        prop_assert_eq!(&starts, &config.starts(per_config, seed).unwrap());
    }

    /// The same (start, method, seed) gives the same result in a fresh
    /// workspace, in a second fresh one, and in a workspace another task has
    /// just used (rotated move order, consumed degrees).
    #[test]
    fn reruns_are_identical_in_fresh_and_reused_workspaces(
        shape in shape(),
        start in any::<Index>(),
        other_start in any::<Index>(),
        seed in any::<u64>(),
    ) {
        let runner = shape.runner();
        let cells = shape.cells() as usize;
        let (start, other_start) = (start.index(cells) as u64, other_start.index(cells) as u64);
        let mut reused = runner.workspace();
        for method in Method::WARNSDORFF {
            let fresh = runner.run(&mut runner.workspace(), start, method, seed, true);
            let fresh_again = runner.run(&mut runner.workspace(), start, method, seed, true);
            prop_assert_eq!(flags(&fresh), flags(&fresh_again), "{}", method);

            // Leave the reused workspace as a long, different task left it.
            runner.run(&mut reused, other_start, Method::Mw, seed ^ 1, false);
            let after_other = runner.run(&mut reused, start, method, seed, true);
            prop_assert_eq!(flags(&fresh), flags(&after_other), "{}", method);
            let after_itself = runner.run(&mut reused, start, method, seed, true);
            prop_assert_eq!(flags(&fresh), flags(&after_itself), "{}", method);

            // The path is only recorded on request; the flags do not depend on it.
            let unrecorded = runner.run(&mut reused, start, method, seed, false);
            prop_assert_eq!(unrecorded.path, None);
            prop_assert_eq!(
                (unrecorded.success, unrecorded.attempts, unrecorded.visited),
                (fresh.success, fresh.attempts, fresh.visited),
                "{}", method
            );
        }
    }
}

/// Each task of `tasks` run alone in a fresh workspace against the same
/// task in one `run_tasks` batch: every figure but the time is the same.
fn batch_matches_alone(runner: &Runner, tasks: &[Task]) -> Result<(), TestCaseError> {
    let batch = runner.run_tasks(&mut runner.workspace(), tasks);
    prop_assert_eq!(batch.len(), tasks.len());
    for (t, r) in tasks.iter().zip(&batch) {
        let alone = runner.run_task(&mut runner.workspace(), t.start, t.method, &t.options);
        prop_assert_eq!((flags(r), r.outcome), (flags(&alone), alone.outcome), "{} from {}", t.method, t.start);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// A batch gives every task the result it gets alone, however its
    /// tasks' W+ walks pair up (they do on 2D boards of 8 moves).
    #[test]
    fn a_batch_gives_each_task_its_own_result(
        shape in shape(),
        starts in prop::collection::vec(any::<Index>(), 1..6),
        record in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let runner = shape.runner();
        let cells = shape.cells() as usize;
        let options = TaskOptions { seed, record_path: record, ..TaskOptions::default() };
        let tasks: Vec<Task> = starts
            .iter()
            .flat_map(|s| Method::WARNSDORFF.map(|method| Task { start: s.index(cells) as u64, method, options }))
            .collect();
        batch_matches_alone(&runner, &tasks)?;
    }
}

/// Long walks of all lengths in pairs: the walks of two tasks end at
/// different steps (stuck, doomed or a tour), mw's other walks run alone
/// between them (W on 2D boards, W+ on 3D ones), and the batch still
/// gives each task its own result.
#[test]
fn batches_of_long_walks_give_each_task_its_own_result() {
    let cases: [(&[u32], &[u32]); 5] = [
        (&[3, 2], &[40, 37]),
        (&[2, 1], &[31, 29]),
        (&[4, 1], &[26, 26]),
        (&[2, 1], &[13, 11, 12]),
        (&[1, 2, 2], &[10, 9, 11]),
    ];
    for (rule, sides) in cases {
        let shape = Shape { sides: sides.to_vec(), moves: MoveSpec::Rule(rule.to_vec()) };
        let runner = shape.runner();
        let cells = shape.cells();
        let options = TaskOptions::default();
        let tasks: Vec<Task> = (0..cells)
            .step_by(7)
            .flat_map(|start| {
                [Method::AwPlus, Method::Mw, Method::WPlus, Method::W].map(|method| Task { start, method, options })
            })
            .collect();
        if let Err(e) = batch_matches_alone(&runner, &tasks) {
            panic!("{rule:?} on {sides:?}: {e}");
        }
    }
}

// ---------------------------------------------------------------------------
// Statistical checks (fixed inputs, many seeds).
// ---------------------------------------------------------------------------

/// WR and WR+ really draw from their seed: over many seeds they make
/// several different walks, yet each seed reproduces its own.
#[test]
fn random_methods_depend_on_their_seed() {
    let shape = Shape { sides: vec![8, 8], moves: MoveSpec::Rule(vec![2, 1]) };
    let runner = shape.runner();
    let mut ws = runner.workspace();
    for method in [Method::Wr, Method::WrPlus] {
        let mut paths = HashSet::new();
        for seed in 0..64 {
            let r = runner.run(&mut ws, 0, method, seed, true);
            assert_eq!(flags(&r), flags(&runner.run(&mut ws, 0, method, seed, true)));
            paths.insert(r.path.unwrap());
        }
        assert!(paths.len() >= 8, "{method}: only {} distinct walks over 64 seeds", paths.len());
    }
}

/// Sampled starts are uniform: over many sweep seeds every eligible cell is
/// drawn about equally often, and every pair of cells too.
#[test]
fn sampled_starts_are_uniform() {
    // 5x5 with (2,1): odd cell count, so 13 eligible (even-sum) cells.
    let config = Shape { sides: vec![5, 5], moves: MoveSpec::Rule(vec![2, 1]) }.configuration();
    let eligible: Vec<u64> = (0..25).filter(|&i| config.is_eligible(i)).collect();
    assert_eq!(eligible.len(), 13);
    let (draws, per_config) = (20_000u64, 4u64);
    let mut counts = std::collections::HashMap::new();
    for seed in 0..draws {
        let starts = config.starts(per_config, seed).unwrap();
        assert!(!starts.exhaustive);
        for c in starts.cells {
            *counts.entry(c).or_insert(0u64) += 1;
        }
    }
    let expected = (draws * per_config) as f64 / 13.0; // about 6154, sd about 65
    for &c in &eligible {
        let n = counts.get(&c).copied().unwrap_or(0) as f64;
        assert!((n - expected).abs() < 0.05 * expected, "cell {c} drawn {n} times, expected about {expected}");
    }
    assert_eq!(counts.len(), 13, "only eligible cells are drawn");

    // 2 of 6 cells (2x3, unit moves: every cell eligible): 15 pairs.
    let config = Shape { sides: vec![2, 3], moves: MoveSpec::Rule(vec![1]) }.configuration();
    let draws = 30_000u64;
    let mut pairs = std::collections::HashMap::new();
    for seed in 0..draws {
        let starts = config.starts(2, seed).unwrap();
        *pairs.entry(starts.cells).or_insert(0u64) += 1;
    }
    assert_eq!(pairs.len(), 15);
    let expected = draws as f64 / 15.0; // 2000, sd about 44
    for (pair, &n) in &pairs {
        assert!(
            (n as f64 - expected).abs() < 0.1 * expected,
            "pair {pair:?} drawn {n} times, expected about {expected}"
        );
    }
}
