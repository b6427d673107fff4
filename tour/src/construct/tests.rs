//! The finite facts the construction rests on: every structured block tour
//! and every piece the cuts can ask for exists, and the cuts of large sides
//! repeat those of small ones, so checking sides up to 45 covers all boards.

use std::collections::HashSet;

use super::blocks::{cut, cut_around, evens, Plan};
use super::pieces::{piece, structured, PieceKey, MAX_SIDE, MIN_SIDE};
use super::search::{hamiltonian, Graph, Problem};

fn is_move(a: usize, b: usize, w: usize) -> bool {
    let (x, y) = ((a / w).abs_diff(b / w), (a % w).abs_diff(b % w));
    (x, y) == (1, 2) || (x, y) == (2, 1)
}

#[test]
fn every_structured_block_tour_exists() {
    for h in MIN_SIDE..=MAX_SIDE {
        for w in MIN_SIDE..=MAX_SIDE {
            let found = structured(h, w);
            if h * w % 2 == 1 {
                assert!(found.is_none(), "{h}x{w} has odd area");
                continue;
            }
            let cycle = found.unwrap_or_else(|| panic!("no structured tour of {h}x{w}"));
            let (h, w) = (h as usize, w as usize);
            // One cycle through every cell, by knight's moves.
            let (mut prev, mut cur, mut seen) = (usize::MAX, 0usize, vec![false; h * w]);
            for _ in 0..h * w {
                assert!(!std::mem::replace(&mut seen[cur], true), "{h}x{w}: cell {cur} twice");
                let [p, q] = cycle[cur].map(usize::from);
                assert!(is_move(cur, p, w) && is_move(cur, q, w) && p != q, "{h}x{w}: bad edges at {cur}");
                (prev, cur) = (cur, if p != prev { p } else { q });
            }
            assert_eq!(cur, 0, "{h}x{w}: not one cycle");
            // The four join edges: L, U and the two right-hand corner edges.
            let has = |(a, b): ((usize, usize), (usize, usize))| {
                let (x, y) = (a.0 * w + a.1, b.0 * w + b.1);
                cycle[x].contains(&(y as u8))
            };
            assert!(has(((1, 1), (3, 0))), "{h}x{w}: L");
            assert!(has(((1, w - 2), (0, w - 4))), "{h}x{w}: U");
            assert!(has(((0, w - 1), (2, w - 2))), "{h}x{w}: top right corner");
            assert!(has(((h - 1, w - 1), (h - 2, w - 3))), "{h}x{w}: bottom right corner");
        }
    }
}

#[test]
fn cuts_are_valid() {
    let valid = |parts: &[u32], m: u32| {
        parts.iter().sum::<u32>() == m
            && parts.iter().all(|&p| (MIN_SIDE..=MAX_SIDE).contains(&p))
            && parts.iter().filter(|&&p| p % 2 == 1).count() == (m % 2) as usize
    };
    assert_eq!(evens(2), None);
    assert_eq!(evens(4), None);
    for k in (0..=600).step_by(2).filter(|&k| k == 0 || k >= 6) {
        assert!(valid(&evens(k).unwrap(), k), "evens({k})");
    }
    for m in 5..=600 {
        assert!(valid(&cut(m).unwrap(), m), "cut({m})");
    }
    for m in (5..=601).step_by(2) {
        for r in 0..=(m - 1) / 2 {
            let (parts, i) = cut_around(m, r).unwrap_or_else(|| panic!("cut_around({m}, {r})"));
            let before: u32 = parts[..i].iter().sum();
            assert!(valid(&parts, m) && parts[i] % 2 == 1, "cut_around({m}, {r}) = {parts:?}");
            assert!((before..before + parts[i]).contains(&r), "cut_around({m}, {r}) = {parts:?} misses r");
        }
    }
}

/// What a piece sees of one side: (odd part, offset of the start in it,
/// parts before, parts after).
fn band_key(m: u32, r: u32) -> (u32, u32, bool, bool) {
    let (parts, i) = cut_around(m, r).unwrap();
    let before: u32 = parts[..i].iter().sum();
    (parts[i], r - before, i > 0, i + 1 < parts.len())
}

/// Sides up to 45 show every band key there is: for m >= 33 the cut only
/// depends on r (the part after the odd one is then >= 12, so it never
/// constrains), and m = 33 already shows all of those. Checked to 2001.
#[test]
fn large_sides_repeat_small_band_keys() {
    let small: HashSet<_> = (5..=45).step_by(2).flat_map(|m| (0..=(m - 1) / 2).map(move |r| band_key(m, r))).collect();
    for m in (47..=2001).step_by(2) {
        for r in 0..=(m - 1) / 2 {
            assert!(small.contains(&band_key(m, r)), "m = {m}, r = {r}: {:?} is new", band_key(m, r));
        }
    }
}

/// Every piece of every odd x odd board with sides 5..=45 (so, by the test
/// above, of any odd x odd board) exists. Squares and rectangles alike.
#[test]
fn every_piece_exists() {
    let mut keys: HashSet<PieceKey> = HashSet::new();
    for m in (5..=45).step_by(2) {
        for n in (5..=45).step_by(2) {
            for r in 0..=(m - 1) / 2 {
                for c in (r % 2..=(n - 1) / 2).step_by(2) {
                    let plan = Plan::new(m, n, r, c).unwrap_or_else(|| panic!("no plan for {m}x{n} from ({r}, {c})"));
                    keys.insert(plan.piece_key().expect("odd x odd boards have a piece"));
                }
            }
        }
    }
    for &key in &keys {
        let found = piece(key).unwrap_or_else(|| panic!("no piece for {key:?}"));
        let (h, w) = (key.h as usize, key.w as usize);
        assert_eq!(found.cells.len(), h * w);
        assert_eq!(found.cells[0], key.start);
        let cells: Vec<usize> = found.cells.iter().map(|&(i, j)| i as usize * w + j as usize).collect();
        assert_eq!(cells.iter().collect::<HashSet<_>>().len(), h * w);
        for (k, pair) in cells.windows(2).enumerate() {
            assert!(found.detour_at == Some(k) || is_move(pair[0], pair[1], w), "{key:?}: step {k}");
        }
        assert_eq!(found.detour_at.is_some(), key.detour_edge().is_some(), "{key:?}");
        if key.exits != 0 {
            let &(i, j) = found.cells.last().unwrap();
            assert!(key.exits_from(i as i32, j as i32).is_some(), "{key:?}: ends off the exits");
        }
    }
    println!("{} pieces", keys.len());
}

/// The search is exact: it finds no path where the colour rule forbids one
/// and finds the known open tours of 3x4.
#[test]
fn search_is_exhaustive() {
    let g = Graph::knight(5, 5);
    for start in [1u16, 3, 7, 11] {
        let p = Problem { graph: &g, start, end_ok: vec![true; 25], forced: vec![], cycle: false };
        assert_eq!(hamiltonian(&p), None, "5x5 from minority cell {start}");
    }
    let g = Graph::knight(4, 4);
    for start in 0..16 {
        let p = Problem { graph: &g, start, end_ok: vec![true; 16], forced: vec![], cycle: false };
        assert_eq!(hamiltonian(&p), None, "4x4 has no tour");
    }
    let g = Graph::knight(3, 4);
    let p = Problem { graph: &g, start: 0, end_ok: vec![true; 12], forced: vec![], cycle: false };
    assert!(hamiltonian(&p).is_some());
}
