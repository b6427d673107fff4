//! `bt` (`tour::backtrack::search`) against a plain brute-force DFS.
//!
//! The search earns its speed with Warnsdorff ordering, incremental degrees
//! and pruning rules; any unsound rule would turn a tour start into a
//! "proof" of no tour. The brute force below has none of that: adjacency
//! built from coordinates, children in move order, no pruning, no colour
//! shortcut. On every start of every board of up to 25 cells (2D and 3D,
//! several rules and directed move lists) the two must agree exactly, and
//! every tour `bt` returns must pass `tour::verify`.

use std::time::Instant;

use tour::backtrack::{search, SearchResult};
use tour::{verify, Board, Configuration, Method, Moves, Outcome, Runner};

/// Cells up to which debug builds run the brute-force comparison; the rest
/// (5x5-sized boards, whose no-tour starts the brute force enumerates
/// exhaustively) runs in the release tier.
const DEBUG_MAX_CELLS: u64 = 20;
const MAX_CELLS: u64 = 25;

// ---------------------------------------------------------------------------
// The brute force.
// ---------------------------------------------------------------------------

/// Successors of every cell, in move order, from coordinates alone.
fn adjacency(sides: &[u32], moves: &[Vec<i64>]) -> Vec<Vec<usize>> {
    let cells: usize = sides.iter().map(|&n| n as usize).product();
    let decode = |mut i: usize| {
        let mut x = vec![0i64; sides.len()];
        for a in (0..sides.len()).rev() {
            x[a] = (i % sides[a] as usize) as i64;
            i /= sides[a] as usize;
        }
        x
    };
    let encode = |x: &[i64]| x.iter().zip(sides).fold(0usize, |acc, (&v, &n)| acc * n as usize + v as usize);
    (0..cells)
        .map(|i| {
            let x = decode(i);
            moves
                .iter()
                .filter_map(|m| {
                    let y: Vec<i64> = x.iter().zip(m).map(|(a, b)| a + b).collect();
                    y.iter().zip(sides).all(|(&v, &n)| v >= 0 && v < n as i64).then(|| encode(&y))
                })
                .collect()
        })
        .collect()
}

/// True iff an open tour starts at `start`: every self-avoiding path is tried.
fn brute_force(adj: &[Vec<usize>], start: usize) -> bool {
    fn dfs(adj: &[Vec<usize>], cell: usize, visited: &mut [bool], depth: usize) -> bool {
        if depth == adj.len() {
            return true;
        }
        for &n in &adj[cell] {
            if !visited[n] {
                visited[n] = true;
                if dfs(adj, n, visited, depth + 1) {
                    return true;
                }
                visited[n] = false;
            }
        }
        false
    }
    let mut visited = vec![false; adj.len()];
    visited[start] = true;
    dfs(adj, start, &mut visited, 1)
}

// ---------------------------------------------------------------------------
// Helpers.
// ---------------------------------------------------------------------------

fn rule(r: &[u32], dims: usize) -> Moves {
    Moves::from_rule(r, dims).unwrap()
}

fn list(moves: &[&[i64]]) -> Moves {
    let v: Vec<Vec<i64>> = moves.iter().map(|m| m.to_vec()).collect();
    Moves::explicit(&v, moves[0].len()).unwrap()
}

/// Every shape n1 x .. x nD (each side >= 1) with at most `max` cells.
fn shapes(dims: usize, max: u64) -> Vec<Vec<u32>> {
    let mut out = vec![vec![]];
    for _ in 0..dims {
        let mut next = Vec::new();
        for s in &out {
            let cells: u64 = s.iter().map(|&n| n as u64).product();
            for n in 1..=max / cells {
                let mut t = s.clone();
                t.push(n as u32);
                next.push(t);
            }
        }
        out = next;
    }
    out
}

/// Checks the invariants every result has, whatever the outcome.
fn check_result(board: &Board, moves: &Moves, start: u64, r: &SearchResult, budget: u64) {
    assert!(r.nodes <= budget, "{board} {}: {} nodes over budget {budget}", moves.describe(), r.nodes);
    match r.outcome {
        Outcome::Tour => {
            let path = r.path.as_ref().expect("a tour comes with its path");
            assert_eq!(path[0], start);
            verify(board, moves, path).unwrap_or_else(|e| panic!("{board} {} start {start}: {e}", moves.describe()));
            assert!(r.nodes >= board.cells(), "placing every cell costs a node each");
        }
        Outcome::NoTour | Outcome::GaveUp => assert!(r.path.is_none()),
    }
}

/// Runs `bt` with an unlimited budget and the brute force on every start;
/// returns (tours, no-tours, bt nodes, brute-force-agreeing starts).
fn agree_on_every_start(sides: &[u32], moves: &Moves) -> (usize, usize, u64) {
    let board = Board::new(sides).unwrap();
    let vectors: Vec<Vec<i64>> = moves.iter().map(|m| m.iter().map(|&c| c as i64).collect()).collect();
    let adj = adjacency(sides, &vectors);
    let (mut tours, mut none, mut nodes) = (0, 0, 0);
    for start in 0..board.cells() {
        let r = search(&board, moves, start, u64::MAX);
        check_result(&board, moves, start, &r, u64::MAX);
        let expect = if brute_force(&adj, start as usize) { Outcome::Tour } else { Outcome::NoTour };
        assert_eq!(
            r.outcome,
            expect,
            "{board} moves {} start {:?}: bt says {}, brute force {}",
            moves.describe(),
            board.coords(start),
            r.outcome,
            expect
        );
        tours += (expect == Outcome::Tour) as usize;
        none += (expect == Outcome::NoTour) as usize;
        nodes += r.nodes;
    }
    (tours, none, nodes)
}

/// The king's eight moves, as a list.
const KING: [&[i64]; 8] = [&[1, 0], &[1, 1], &[0, 1], &[-1, 1], &[-1, 0], &[-1, -1], &[0, -1], &[1, -1]];

/// The 3D knight without the four moves that lead with +2 on axis 0:
/// directed, and rich enough to have tours on small boards.
fn directed_knight_3d() -> Moves {
    let knight = rule(&[2, 1], 3);
    let kept: Vec<Vec<i64>> =
        knight.iter().filter(|m| m[0] != 2).map(|m| m.iter().map(|&c| c as i64).collect()).collect();
    Moves::explicit(&kept, 3).unwrap()
}

fn move_sets_2d() -> Vec<Moves> {
    vec![
        rule(&[2, 1], 2),
        rule(&[3, 2], 2),
        rule(&[1, 1], 2),
        rule(&[1], 2),
        // Knight moves in a scrambled explicit order (closed under negation).
        list(&[&[-1, 2], &[2, 1], &[1, -2], &[-2, -1], &[2, -1], &[-1, -2], &[1, 2], &[-2, 1]]),
        // The king: closed under negation, mixed colours (no colour proof).
        list(&KING),
        // Directed knight subsets: six, five and four of the eight moves.
        list(&[&[2, 1], &[1, 2], &[-1, 2], &[-2, 1], &[-2, -1], &[1, -2]]),
        list(&[&[2, 1], &[1, 2], &[-1, 2], &[-2, -1], &[2, -1]]),
        list(&[&[2, 1], &[-1, 2], &[-2, -1], &[1, -2]]),
        // Directed, mixed colours: five king moves; a wazir that may also
        // step diagonally back.
        list(&KING[..5]),
        list(&[&[1, 0], &[0, 1], &[-1, 0], &[-1, -1]]),
        // Directed, colour-changing: up, right, and two knight moves back.
        list(&[&[0, 1], &[1, 0], &[-2, -1], &[-1, -2]]),
    ]
}

fn move_sets_3d() -> Vec<Moves> {
    vec![
        rule(&[2, 1], 3),
        rule(&[1, 2, 2], 3),
        rule(&[1], 3),
        rule(&[1, 1], 3),
        directed_knight_3d(),
        // Directed, mixed colours: unit steps forward, face diagonals back.
        list(&[&[1, 0, 0], &[0, 1, 0], &[0, 0, 1], &[-1, -1, 0], &[0, -1, -1], &[-1, 0, -1]]),
    ]
}

fn agree_on_all_boards(dims: usize, sets: &[Moves], min_cells: u64, max_cells: u64) {
    let t = Instant::now();
    let mut boards = 0;
    for moves in sets {
        let (mut tours, mut none, mut nodes) = (0, 0, 0);
        for sides in shapes(dims, max_cells) {
            let cells: u64 = sides.iter().map(|&n| n as u64).product();
            if cells < min_cells {
                continue;
            }
            let (t, n, k) = agree_on_every_start(&sides, moves);
            tours += t;
            none += n;
            nodes += k;
            boards += 1;
        }
        println!("{dims}D {:>40}: {tours:5} tour starts, {none:5} no-tour starts, {nodes} bt nodes", moves.describe());
    }
    println!("{boards} (board, moves) pairs with {min_cells}..={max_cells} cells in {:?}", t.elapsed());
}

// ---------------------------------------------------------------------------
// Agreement with the brute force.
// ---------------------------------------------------------------------------

#[test]
fn agrees_with_brute_force_2d_small() {
    agree_on_all_boards(2, &move_sets_2d(), 1, DEBUG_MAX_CELLS);
}

#[test]
fn agrees_with_brute_force_3d_small() {
    agree_on_all_boards(3, &move_sets_3d(), 1, DEBUG_MAX_CELLS);
}

#[test]
#[cfg_attr(not(optimized), ignore = "slow tier: runs in optimised builds (--release, --profile checked)")]
fn agrees_with_brute_force_2d_up_to_25_cells() {
    agree_on_all_boards(2, &move_sets_2d(), DEBUG_MAX_CELLS + 1, MAX_CELLS);
}

#[test]
#[cfg_attr(not(optimized), ignore = "slow tier: runs in optimised builds (--release, --profile checked)")]
fn agrees_with_brute_force_3d_up_to_25_cells() {
    agree_on_all_boards(3, &move_sets_3d(), DEBUG_MAX_CELLS + 1, MAX_CELLS);
}

/// The brute force itself must be able to say both things, or agreeing
/// with it would prove nothing.
#[test]
fn brute_force_knows_tours_from_no_tours() {
    let knight =
        [vec![2, 1], vec![1, 2], vec![-1, 2], vec![-2, 1], vec![-2, -1], vec![-1, -2], vec![1, -2], vec![2, -1]];
    let adj = adjacency(&[3, 4], &knight);
    assert!(brute_force(&adj, 0), "3x4 has an open tour from a corner");
    let adj = adjacency(&[3, 3], &knight);
    assert!((0..9).all(|s| !brute_force(&adj, s)), "the 3x3 centre is unreachable");
}

// ---------------------------------------------------------------------------
// Colour proofs and edge cases.
// ---------------------------------------------------------------------------

#[test]
fn colour_rule_answers_without_search() {
    let b = Board::new(&[5, 5]).unwrap();
    let knight = rule(&[2, 1], 2);
    let odd = b.index_of(&[0, 1]).unwrap();
    assert_eq!(search(&b, &knight, odd, 1000), SearchResult { outcome: Outcome::NoTour, path: None, nodes: 0 });
    let r = search(&b, &rule(&[1, 1], 2), 0, 1000);
    assert_eq!((r.outcome, r.nodes), (Outcome::NoTour, 0), "(1,1) never changes colour");
    // The majority colour is searched, not dismissed.
    let r = search(&b, &knight, 0, u64::MAX);
    assert_eq!(r.outcome, Outcome::Tour);
}

#[test]
fn one_cell_board_is_a_tour() {
    for moves in [rule(&[2, 1], 2), rule(&[1, 1], 2)] {
        let b = Board::new(&[1, 1]).unwrap();
        let r = search(&b, &moves, 0, 10);
        assert_eq!(r, SearchResult { outcome: Outcome::Tour, path: Some(vec![0]), nodes: 1 });
    }
}

#[test]
fn bad_input_gives_up_without_panicking() {
    let b = Board::new(&[4, 4]).unwrap();
    let r = search(&b, &rule(&[2, 1], 2), 16, 1000);
    assert_eq!((r.outcome, r.nodes), (Outcome::GaveUp, 0), "start off the board");
    let r = search(&b, &rule(&[2, 1], 3), 0, 1000);
    assert_eq!((r.outcome, r.nodes), (Outcome::GaveUp, 0), "moves of another dimension");
}

// ---------------------------------------------------------------------------
// Budget.
// ---------------------------------------------------------------------------

#[test]
fn budget_is_respected_exactly() {
    // 4x6 knight from (1,0): no tour, and no colour proof (24 cells), so
    // the proof needs a real search.
    let b = Board::new(&[4, 6]).unwrap();
    let m = rule(&[2, 1], 2);
    let start = b.index_of(&[1, 0]).unwrap();
    let full = search(&b, &m, start, u64::MAX);
    assert_eq!(full.outcome, Outcome::NoTour);
    assert!(full.nodes > 10, "{} nodes", full.nodes);
    for budget in [0, 1, 2, 10, full.nodes - 1] {
        let r = search(&b, &m, start, budget);
        assert_eq!(r, SearchResult { outcome: Outcome::GaveUp, path: None, nodes: budget }, "budget {budget}");
    }
    assert_eq!(search(&b, &m, start, full.nodes), full, "exactly enough budget");

    // The same for a search that ends in a tour: 6x6 needs 36 nodes at least.
    let b = Board::new(&[6, 6]).unwrap();
    let full = search(&b, &m, 0, u64::MAX);
    assert_eq!(full.outcome, Outcome::Tour);
    let r = search(&b, &m, 0, 35);
    assert_eq!((r.outcome, r.nodes, r.path), (Outcome::GaveUp, 35, None));
    assert_eq!(search(&b, &m, 0, full.nodes), full);
}

// ---------------------------------------------------------------------------
// Known boards.
// ---------------------------------------------------------------------------

/// Classifies every start; panics on GaveUp. Returns (tours, no-tours, nodes).
fn classify(board: &Board, moves: &Moves, budget: u64) -> (Vec<u64>, Vec<u64>, u64) {
    let (mut tours, mut none, mut nodes) = (Vec::new(), Vec::new(), 0);
    for start in 0..board.cells() {
        let r = search(board, moves, start, budget);
        check_result(board, moves, start, &r, budget);
        match r.outcome {
            Outcome::Tour => tours.push(start),
            Outcome::NoTour => none.push(start),
            Outcome::GaveUp => panic!("{board} {} start {:?}: gave up", moves.describe(), board.coords(start)),
        }
        nodes += r.nodes;
    }
    (tours, none, nodes)
}

#[test]
fn knight_5x5_tours_start_exactly_where_the_brute_force_says() {
    let b = Board::new(&[5, 5]).unwrap();
    let m = rule(&[2, 1], 2);
    let (tours, none, nodes) = classify(&b, &m, 10_000);
    println!("5x5 (2,1): tours from {:?}; no tour from {} starts; {nodes} nodes", coords(&b, &tours), none.len());
    // Re-derived by the brute force: every self-avoiding knight path from
    // each of the 25 squares.
    let knight: Vec<Vec<i64>> = m.iter().map(|v| v.iter().map(|&c| c as i64).collect()).collect();
    let adj = adjacency(&[5, 5], &knight);
    let brute: Vec<u64> = (0..25).filter(|&s| brute_force(&adj, s as usize)).collect();
    assert_eq!(tours, brute);
    // And what that is: open tours start on all 13 squares of the majority
    // colour (even coordinate sum), none on the 12 others.
    let even: Vec<u64> = (0..25).filter(|&s| b.coords(s).iter().sum::<u32>() % 2 == 0).collect();
    assert_eq!(tours, even);
}

fn coords(b: &Board, cells: &[u64]) -> Vec<Vec<u32>> {
    cells.iter().map(|&c| b.coords(c)).collect()
}

#[test]
fn knight_6x6_every_start_has_a_tour() {
    let b = Board::new(&[6, 6]).unwrap();
    let (tours, none, nodes) = classify(&b, &rule(&[2, 1], 2), 10_000);
    println!("6x6 (2,1): {} tours, {} no-tours, {nodes} nodes", tours.len(), none.len());
    assert_eq!((tours.len(), none.len()), (36, 0));
}

#[test]
fn knight_4x4x4_every_start_is_classified() {
    let b = Board::regular(3, 4).unwrap();
    let m = rule(&[2, 1], 3);
    assert_eq!(m.len(), 24);
    let t = Instant::now();
    // Generous: a start needs 64 nodes when its first descent succeeds.
    let (tours, none, nodes) = classify(&b, &m, 10_000);
    let elapsed = t.elapsed();
    println!(
        "4x4x4 (2,1,0): {} tours, {} no-tours, {nodes} nodes, {elapsed:?}{}",
        tours.len(),
        none.len(),
        if cfg!(debug_assertions) { " (debug build)" } else { "" }
    );
    assert_eq!(tours.len() + none.len(), 64);
}

/// A path of thousands of cells: the explicit stack must not overflow and
/// the path must come back whole.
#[test]
fn large_boards_use_no_recursion() {
    for (sides, r) in [(vec![60u32, 60], vec![2u32, 1]), (vec![12, 12, 12], vec![2, 1])] {
        let b = Board::new(&sides).unwrap();
        let m = rule(&r, sides.len());
        // The first descent (the W walk) succeeds here; a little slack.
        let budget = 2 * b.cells();
        let res = search(&b, &m, 0, budget);
        check_result(&b, &m, 0, &res, budget);
        assert_eq!(res.outcome, Outcome::Tour, "{b}");
    }
}

/// Children are tried in rule W's order (least degree, ties by move order),
/// and sound pruning never cuts a branch holding a tour, so wherever the W
/// walk succeeds, `bt`'s first descent is that walk: one node per cell and
/// the same path.
#[test]
fn first_descent_is_the_w_walk() {
    let cases = [
        (Board::new(&[8, 8]).unwrap(), rule(&[2, 1], 2)),
        (Board::new(&[4, 5, 6]).unwrap(), rule(&[2, 1], 3)),
        (Board::new(&[4, 4, 4, 4]).unwrap(), rule(&[2, 1], 4)),
        (Board::new(&[5, 5, 5]).unwrap(), rule(&[2, 1], 3)),
        // Directed: the knight plus one diagonal step.
        (
            Board::new(&[8, 8]).unwrap(),
            list(&[&[2, 1], &[1, 2], &[-1, 2], &[-2, 1], &[-2, -1], &[-1, -2], &[1, -2], &[2, -1], &[1, 1]]),
        ),
        (Board::new(&[5, 5, 5]).unwrap(), directed_knight_3d()),
        (Board::new(&[6, 7]).unwrap(), list(&KING)),
    ];
    for (board, moves) in cases {
        let runner = Runner::new(Configuration::new(board.clone(), moves.clone()).unwrap()).unwrap();
        let mut ws = runner.workspace();
        let mut compared = 0;
        for start in 0..board.cells() {
            let w = runner.run(&mut ws, start, Method::W, 0, true);
            if !w.success {
                continue;
            }
            let r = search(&board, &moves, start, u64::MAX);
            assert_eq!((r.outcome, r.nodes), (Outcome::Tour, board.cells()), "{board} {}", moves.describe());
            assert_eq!(r.path, w.path, "{board} {} start {:?}", moves.describe(), board.coords(start));
            compared += 1;
        }
        assert!(compared > 0, "{board} {}: W never succeeded, nothing compared", moves.describe());
    }
}
