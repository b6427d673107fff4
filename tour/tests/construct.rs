//! `construct`: tours from every start, NoTour exactly where the colour rule
//! says, refusals for what it does not cover, determinism, and the n = 666
//! benchmark.

use std::time::Instant;

use tour::construct::{construct, Constructed, Unsupported};

/// Boards with a side below 5 and at most this many cells are searched
/// exhaustively by `construct`; larger ones are unsupported.
const SMALL_CELLS: u64 = 32;
use tour::{verify, Board, Moves, Outcome};

fn knight() -> Moves {
    Moves::from_rule(&[2, 1], 2).unwrap()
}

/// Checks `construct` on one start: a verified tour from `start`, or NoTour
/// exactly when `expect_tour` is false.
fn check(board: &Board, moves: &Moves, start: u64, expect_tour: bool) {
    let got = construct(board, moves, start).unwrap_or_else(|e| panic!("{board} from {start}: {e}"));
    if expect_tour {
        assert_eq!(got.outcome, Outcome::Tour, "{board} from {start}");
        let path = got.path.as_deref().expect("a tour has a path");
        assert_eq!(path.first(), Some(&start), "{board}: the tour must begin at the start");
        verify(board, moves, path).unwrap_or_else(|e| panic!("{board} from {start}: {e}"));
    } else {
        assert_eq!(got, Constructed { outcome: Outcome::NoTour, path: None }, "{board} from {start}");
    }
}

/// False exactly on the minority colour (odd coordinate sum) of odd x odd
/// boards, where no tour can start.
fn colour_allows(m: u32, n: u32, r: u64, c: u64) -> bool {
    !(m % 2 == 1 && n % 2 == 1 && (r + c) % 2 == 1)
}

/// Every start of the n x n board: NoTour exactly on the minority colour of
/// odd boards. Returns the number of starts.
fn every_start(n: u32) -> u64 {
    let (board, moves) = (Board::regular(2, n).unwrap(), knight());
    for start in 0..board.cells() {
        let (r, c) = (start / n as u64, start % n as u64);
        check(&board, &moves, start, colour_allows(n, n, r, c));
    }
    board.cells()
}

#[test]
fn every_start_small_squares() {
    let t = Instant::now();
    let starts: u64 = (5..=12).map(every_start).sum();
    println!("n = 5..=12: {starts} starts in {:?}", t.elapsed());
}

#[test]
#[cfg_attr(not(optimized), ignore = "slow tier: runs in optimised builds (--release, --profile checked)")]
fn every_start_squares_to_40() {
    let t = Instant::now();
    let starts: u64 = (5..=40).map(every_start).sum();
    println!("n = 5..=40: {starts} starts in {:?}", t.elapsed());
}

/// Every start of the m x n board: NoTour exactly on the minority colour of
/// odd x odd boards. Returns the number of starts.
fn every_start_rect(m: u32, n: u32) -> u64 {
    let (board, moves) = (Board::new(&[m, n]).unwrap(), knight());
    for start in 0..board.cells() {
        let (r, c) = (start / n as u64, start % n as u64);
        check(&board, &moves, start, colour_allows(m, n, r, c));
    }
    board.cells()
}

#[test]
fn every_start_small_rectangles() {
    let t = Instant::now();
    let starts: u64 = (5..=9).flat_map(|m| (5..=9).map(move |n| every_start_rect(m, n))).sum();
    println!("m, n = 5..=9: {starts} starts in {:?}", t.elapsed());
}

/// Rectangles with sides 5..=24: odd x odd ones with one band (the start's
/// block spans a side, with a detour) and every kind of cut.
#[test]
#[cfg_attr(not(optimized), ignore = "slow tier: runs in optimised builds (--release, --profile checked)")]
fn every_start_rectangles_to_24() {
    let t = Instant::now();
    let starts: u64 = (5..=24).flat_map(|m| (5..=24).map(move |n| every_start_rect(m, n))).sum();
    println!("m, n = 5..=24: {starts} starts in {:?}", t.elapsed());
}

/// A fixed pseudo-random stream (splitmix64).
struct Stream(u64);

impl Stream {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, k: u64) -> u64 {
        self.next() % k
    }
}

#[test]
#[cfg_attr(not(optimized), ignore = "slow tier: runs in optimised builds (--release, --profile checked)")]
fn random_starts_up_to_666() {
    let mut rng = Stream(2025);
    let moves = knight();
    let mut sides: Vec<(u32, u32)> = vec![(41, 41), (99, 99), (100, 100), (665, 665), (666, 666), (5, 666), (665, 7)];
    for _ in 0..24 {
        let m = 5 + rng.below(662) as u32;
        // Half squares, half rectangles.
        let n = if rng.below(2) == 0 { m } else { 5 + rng.below(662) as u32 };
        sides.push((m, n));
    }
    let t = Instant::now();
    let mut checked = 0;
    for (m, n) in sides {
        let board = Board::new(&[m, n]).unwrap();
        for _ in 0..3 {
            let start = rng.below(board.cells());
            let (r, c) = (start / n as u64, start % n as u64);
            check(&board, &moves, start, colour_allows(m, n, r, c));
            checked += 1;
        }
    }
    println!("{checked} random starts on boards up to 666 in {:?}", t.elapsed());
}

/// Boards with a side below 5 are searched exhaustively: tours verified, and
/// NoTour agreeing with a plain independent search on the smaller ones.
#[test]
fn small_boards_exactly() {
    fn plain(adj: &[Vec<usize>], seen: &mut [bool], cur: usize, left: usize) -> bool {
        if left == 0 {
            return true;
        }
        for &v in &adj[cur] {
            if !seen[v] {
                seen[v] = true;
                if plain(adj, seen, v, left - 1) {
                    return true;
                }
                seen[v] = false;
            }
        }
        false
    }
    let moves = knight();
    let mut tours = 0;
    for m in 1..=4u32 {
        for n in 1..=SMALL_CELLS as u32 {
            let board = Board::new(&[m, n]).unwrap();
            if board.cells() > SMALL_CELLS {
                continue;
            }
            let (m, n) = (m as usize, n as usize);
            let adj: Vec<Vec<usize>> = (0..m * n)
                .map(|k| {
                    let (i, j) = ((k / n) as i64, (k % n) as i64);
                    [(1, 2), (2, 1), (-1, 2), (-2, 1), (1, -2), (2, -1), (-1, -2), (-2, -1)]
                        .iter()
                        .map(|&(a, b)| (i + a, j + b))
                        .filter(|&(a, b)| (0..m as i64).contains(&a) && (0..n as i64).contains(&b))
                        .map(|(a, b)| a as usize * n + b as usize)
                        .collect()
                })
                .collect();
            for start in 0..board.cells() {
                let got = construct(&board, &moves, start).unwrap();
                if got.outcome == Outcome::Tour {
                    tours += 1;
                    check(&board, &moves, start, true);
                } else if m * n <= 20 {
                    let mut seen = vec![false; m * n];
                    seen[start as usize] = true;
                    assert!(!plain(&adj, &mut seen, start as usize, m * n - 1), "{m}x{n} from {start} has a tour");
                }
            }
        }
    }
    // 1x1, and the open tours of 3x4, 4x3, 3x7, 3x8, 4x5, 4x6, 4x7, 4x8 and
    // their transposes.
    assert!(tours > 0);
    let board = Board::regular(2, 1).unwrap();
    check(&board, &moves, 0, true);
    for n in 2..=4 {
        let board = Board::regular(2, n).unwrap();
        for start in 0..board.cells() {
            check(&board, &moves, start, false);
        }
    }
}

#[test]
fn unsupported_configurations() {
    let unsupported = |board: &Board, moves: &Moves, start: u64, what: &str| {
        let Unsupported(why) = construct(board, moves, start).unwrap_err();
        assert!(why.contains(what), "{why:?} should name {what:?}");
    };
    let b8 = Board::regular(2, 8).unwrap();
    unsupported(&b8, &Moves::from_rule(&[3, 1], 2).unwrap(), 0, "moves 3,1");
    unsupported(&b8, &Moves::from_rule(&[1, 1], 2).unwrap(), 0, "moves");
    // Seven knight moves, and eight with one replaced, are not the knight.
    let mut list: Vec<Vec<i64>> = knight().iter().map(|m| m.iter().map(|&x| x as i64).collect()).collect();
    list.pop();
    unsupported(&b8, &Moves::explicit(&list, 2).unwrap(), 0, "moves");
    list.push(vec![3, 3]);
    unsupported(&b8, &Moves::explicit(&list, 2).unwrap(), 0, "moves");
    let b3 = Board::regular(3, 8).unwrap();
    unsupported(&b3, &Moves::from_rule(&[2, 1], 3).unwrap(), 0, "3D");
    unsupported(&Board::new(&[4, 100]).unwrap(), &knight(), 0, "4x100");
    unsupported(&b8, &knight(), 64, "off the");
    // The knight's moves in another order are fine.
    let mut list: Vec<Vec<i64>> = knight().iter().map(|m| m.iter().map(|&x| x as i64).collect()).collect();
    list.reverse();
    check(&b8, &Moves::explicit(&list, 2).unwrap(), 9, true);
}

#[test]
fn deterministic() {
    let moves = knight();
    for (m, n, start) in [(8u32, 8u32, 9u64), (9, 9, 40), (11, 11, 60), (21, 13, 100), (64, 65, 2000)] {
        let board = Board::new(&[m, n]).unwrap();
        let first = construct(&board, &moves, start).unwrap();
        let again = std::thread::spawn(move || construct(&board, &knight(), start).unwrap()).join().unwrap();
        assert_eq!(first, again, "{m}x{n} from {start}");
    }
}

/// The n = 665 and 666 benchmark: printed, not asserted (run with
/// `--nocapture` in release mode to see it).
#[test]
#[cfg_attr(not(optimized), ignore = "slow tier: runs in optimised builds (--release, --profile checked)")]
fn timing_666() {
    let moves = knight();
    for n in [666u32, 665] {
        let board = Board::regular(2, n).unwrap();
        let starts = [0, n as u64 + 1, (n as u64 / 2) * (n as u64 + 1), board.cells() - 1];
        let mut times = Vec::new();
        for round in 0..5 {
            for &start in &starts {
                let t = Instant::now();
                let got = construct(&board, &moves, start).unwrap();
                times.push(t.elapsed());
                assert_eq!(got.outcome, Outcome::Tour);
                if round == 0 {
                    verify(&board, &moves, got.path.as_deref().unwrap()).unwrap();
                }
            }
        }
        let first = times[0];
        times.sort();
        println!(
            "n = {n}: first call {first:?}, then min {:?} / median {:?} / max {:?} over {} calls",
            times[0],
            times[times.len() / 2],
            times[times.len() - 1],
            times.len()
        );
    }
}
