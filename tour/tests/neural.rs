//! The `nn` runner (Takefuji-Lee network with the Aoba-Takefuji remedies,
//! seed 004): every Tour is a verified closed tour from the start, runs are
//! reproducible, boards without a closed tour never yield one, and the
//! remedies turn some of the plain network's local minima into tours.
//!
//! The benchmark (seed 004's convergence-rate experiment) is an ignored test:
//! `cargo test --release -p tour --test neural -- --ignored --nocapture`.

use std::collections::BTreeSet;

use tour::neural::{solve, NeuralResult, Remedy};
use tour::{verify_closed, Board, Moves, Outcome};

const REMEDIES: [Remedy; 4] = [Remedy::None, Remedy::Cut, Remedy::Connect, Remedy::Both];
/// Seed 004's iteration cap.
const CAP: u32 = 100;

fn knight(n: u32) -> (Board, Moves) {
    (Board::regular(2, n).unwrap(), Moves::from_rule(&[2, 1], 2).unwrap())
}

/// Checks everything a result promises; returns whether it was a tour.
fn check(board: &Board, moves: &Moves, start: u64, cap: u32, r: &NeuralResult) -> bool {
    assert!(r.iterations <= cap, "{} iterations over the cap {cap}", r.iterations);
    match (r.outcome, &r.path) {
        (Outcome::Tour, Some(path)) => {
            verify_closed(board, moves, path).unwrap_or_else(|e| panic!("{board}: not a closed tour: {e}"));
            assert_eq!(path[0], start, "the tour is written from the start");
            true
        }
        (Outcome::GaveUp, None) => false,
        other => panic!("inconsistent result {other:?}"),
    }
}

/// The tour's undirected edges, to compare cycles written from different starts.
fn edges(path: &[u64]) -> BTreeSet<(u64, u64)> {
    let n = path.len();
    (0..n).map(|k| (path[k], path[(k + 1) % n])).map(|(a, b)| (a.min(b), a.max(b))).collect()
}

/// Runs every remedy on 6x6..12x12 knight boards and a few other shapes and
/// move sets, checking each result; returns (tours, runs).
fn check_many(seeds: u64, cap: u32) -> (u32, u32) {
    let (mut tours, mut runs) = (0, 0);
    let mut cases: Vec<(Board, Moves)> = (6..=12).map(knight).collect();
    // Rectangles, 3D and explicit (symmetric) move lists go through the same checks.
    let diagonal = [vec![1, 1], vec![-1, -1], vec![1, -1], vec![-1, 1]];
    cases.extend([
        (Board::new(&[6, 8]).unwrap(), Moves::from_rule(&[2, 1], 2).unwrap()),
        (Board::new(&[5, 6]).unwrap(), Moves::from_rule(&[2, 1], 2).unwrap()),
        (Board::regular(3, 4).unwrap(), Moves::from_rule(&[2, 1], 3).unwrap()),
        (Board::new(&[4, 6]).unwrap(), Moves::explicit(&diagonal, 2).unwrap()),
        (Board::new(&[4, 6]).unwrap(), Moves::from_rule(&[1], 2).unwrap()),
    ]);
    for (b, m) in &cases {
        for remedy in REMEDIES {
            for seed in 0..seeds {
                let start = seed * 7 % b.cells();
                let r = solve(b, m, start, remedy, seed, cap);
                tours += check(b, m, start, cap, &r) as u32;
                runs += 1;
            }
        }
    }
    (tours, runs)
}

#[test]
fn every_tour_passes_the_closed_tour_check() {
    let (tours, runs) = check_many(25, 2 * CAP);
    // Measured: 389 tours in 1200 runs; the checks must have had tours to check.
    assert!(tours >= 250, "only {tours} tours in {runs} runs");
}

#[test]
#[cfg_attr(not(optimized), ignore = "slow tier: runs in optimised builds (--release, --profile checked)")]
fn every_tour_passes_the_closed_tour_check_many_seeds() {
    let (tours, runs) = check_many(200, 10 * CAP);
    // Measured: 4297 tours in 9600 runs.
    assert!(tours >= 3000, "only {tours} tours in {runs} runs");
}

#[test]
fn remedies_turn_local_minima_into_tours_on_6x6_and_8x8() {
    // Measured with seeds 0..100 and the cap of 100: 6x6 None 28, Cut 64;
    // 8x8 None 28, Cut 40. The floors leave room, the comparison must hold.
    for (n, floor_none, floor_cut) in [(6, 15, 45), (8, 15, 28)] {
        let (b, m) = knight(n);
        let count =
            |remedy| (0..100u64).filter(|&seed| check(&b, &m, 0, CAP, &solve(&b, &m, 0, remedy, seed, CAP))).count();
        let (none, cut) = (count(Remedy::None), count(Remedy::Cut));
        assert!(none >= floor_none, "{n}x{n}: plain network found {none} tours");
        assert!(cut >= floor_cut, "{n}x{n}: cutting subtours found {cut} tours");
        assert!(cut > none, "{n}x{n}: cutting ({cut}) should beat the plain network ({none})");
    }
}

#[test]
fn remedies_follow_the_plain_network_until_its_first_local_minimum() {
    let (b, m) = knight(8);
    let mut minima = 0;
    for seed in 0..40u64 {
        let plain = solve(&b, &m, 0, Remedy::None, seed, CAP);
        for remedy in [Remedy::Cut, Remedy::Connect, Remedy::Both] {
            let r = solve(&b, &m, 0, remedy, seed, CAP);
            if plain.outcome == Outcome::Tour {
                assert_eq!(r, plain, "seed {seed}: same trajectory, same tour");
            } else if plain.iterations < CAP {
                // The plain network stopped on subtours; a remedy carries on.
                assert!(r.iterations > plain.iterations, "seed {seed} {remedy:?}: {r:?} vs {plain:?}");
                minima += 1;
            }
        }
    }
    assert!(minima > 0, "no seed hit a local minimum");
}

#[test]
fn same_seed_same_result() {
    let (b, m) = knight(8);
    let mut distinct = BTreeSet::new();
    for remedy in REMEDIES {
        for seed in [0u64, 1, 42, u64::MAX] {
            let a = solve(&b, &m, 5, remedy, seed, CAP);
            assert_eq!(a, solve(&b, &m, 5, remedy, seed, CAP), "{remedy:?} seed {seed}");
            distinct.insert((a.outcome, a.iterations, a.path));
        }
    }
    assert!(distinct.len() > 4, "the seed should matter: {distinct:?}");
}

#[test]
fn the_tour_starts_at_start_and_does_not_depend_on_it() {
    let (b, m) = knight(6);
    let (seed, first) = (0..100u64)
        .find_map(|seed| {
            let r = solve(&b, &m, 0, Remedy::Cut, seed, CAP);
            r.path.clone().map(|_| (seed, r))
        })
        .expect("some seed converges on 6x6");
    let cycle = edges(first.path.as_deref().unwrap_or_default());
    for start in 0..b.cells() {
        let r = solve(&b, &m, start, Remedy::Cut, seed, CAP);
        assert!(check(&b, &m, start, CAP, &r), "start {start}: {r:?}");
        assert_eq!(r.iterations, first.iterations);
        assert_eq!(edges(r.path.as_deref().unwrap_or_default()), cycle, "start {start}: the same cycle");
    }
}

#[test]
fn boards_without_a_closed_tour_never_get_one() {
    // Odd cell counts: a knight's move changes colour, so every cycle is even
    // and no set of disjoint cycles covers all cells: the network never
    // settles and runs to the cap.
    for n in [5, 7] {
        let (b, m) = knight(n);
        for remedy in REMEDIES {
            for seed in 0..25u64 {
                let r = solve(&b, &m, 0, remedy, seed, CAP);
                assert!(!check(&b, &m, 0, CAP, &r), "{n}x{n} {remedy:?} seed {seed}: {r:?}");
                assert_eq!(r.iterations, CAP, "{n}x{n} {remedy:?} seed {seed}: cannot settle");
            }
        }
    }
    // 4x4 and 3x4 have even cell counts but no closed tour (Schwenk).
    for sides in [[4, 4], [3, 4], [3, 6]] {
        let b = Board::new(&sides).unwrap();
        let m = Moves::from_rule(&[2, 1], 2).unwrap();
        for remedy in REMEDIES {
            for seed in 0..10u64 {
                assert!(!check(&b, &m, 1, CAP, &solve(&b, &m, 1, remedy, seed, CAP)), "{b} {remedy:?} {seed}");
            }
        }
    }
    // A cell with fewer than two moves (the 3x3 centre, a 1x2 board) rules a
    // cycle out before any update.
    for (b, m) in [knight(3), (Board::new(&[1, 2]).unwrap(), Moves::from_rule(&[1], 2).unwrap())] {
        let r = solve(&b, &m, 0, Remedy::Both, 0, CAP);
        assert_eq!(r, NeuralResult { outcome: Outcome::GaveUp, path: None, iterations: 0 });
    }
}

#[test]
fn bad_input_gives_up_without_running() {
    let gave_up = NeuralResult { outcome: Outcome::GaveUp, path: None, iterations: 0 };
    let (b, m) = knight(8);
    assert_eq!(solve(&b, &m, 64, Remedy::Cut, 0, CAP), gave_up, "start off the board");
    assert_eq!(solve(&b, &m, u64::MAX, Remedy::Cut, 0, CAP), gave_up, "start off the board");
    let one_way = Moves::explicit(&[vec![2, 1], vec![-1, 2], vec![-2, -1], vec![1, -2]], 2).unwrap();
    assert_eq!(solve(&b, &one_way, 0, Remedy::Cut, 0, CAP), gave_up, "moves not closed under negation");
    assert_eq!(solve(&b, &m, 0, Remedy::Cut, 0, 0), gave_up, "no iterations allowed");
}

/// Seed 004's experiment: convergence rate and iterations on 6x6..22x22.
#[test]
#[ignore = "benchmark: cargo test --release -p tour --test neural -- --ignored --nocapture"]
fn benchmark_convergence_table() {
    let m = Moves::from_rule(&[2, 1], 2).unwrap();
    for cap in [CAP, 10 * CAP] {
        println!(
            "\ncap {cap} iterations, seeds 0..100, start (0,0); tours / mean iterations over all runs / over tours"
        );
        println!("| board | none | cut | connect | both |");
        println!("|---|---|---|---|---|");
        for n in (6..=22).step_by(2) {
            let (b, _) = knight(n);
            let mut row = format!("| {n}x{n} |");
            for remedy in REMEDIES {
                let (mut tours, mut all, mut on_tours) = (0u32, 0u64, 0u64);
                for seed in 0..100u64 {
                    let r = solve(&b, &m, 0, remedy, seed, cap);
                    all += u64::from(r.iterations);
                    if check(&b, &m, 0, cap, &r) {
                        tours += 1;
                        on_tours += u64::from(r.iterations);
                    }
                }
                let mean_tours =
                    if tours > 0 { format!("{:.1}", on_tours as f64 / f64::from(tours)) } else { "-".into() };
                row += &format!(" {tours}% / {:.1} / {mean_tours} |", all as f64 / 100.0);
            }
            println!("{row}");
        }
    }
}
