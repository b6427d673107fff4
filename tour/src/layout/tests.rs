//! The tiled layout against the row-major one: the same cells, moves and
//! starting degrees on every tiling the walks use.

use super::*;

/// Boards of every tiling the walks use, with sides that do and do not
/// fill whole tiles, and move sets with long and asymmetric moves.
fn cases() -> Vec<(Board, Moves)> {
    let rule = |r: &[u32], sides: &[u32]| (Board::new(sides).unwrap(), Moves::from_rule(r, sides.len()).unwrap());
    vec![
        rule(&[2, 1], &[5, 7]),
        rule(&[3, 2], &[9, 4]),
        rule(&[2, 1], &[5, 6, 7]),
        rule(&[1, 2, 2], &[8, 3, 9]),
        rule(&[3, 1], &[4, 5, 6]),
        rule(&[2, 1], &[3, 4, 3, 5]),
        (Board::new(&[6, 5, 4]).unwrap(), Moves::explicit(&[vec![2, 1, 0], vec![-1, 0, 3]], 3).unwrap()),
        // Inner cells (every move stays on the board) on every tiling.
        (Board::new(&[9, 8, 10]).unwrap(), Moves::explicit(&[vec![2, 1, 0], vec![-1, 0, 3]], 3).unwrap()),
        rule(&[2, 1], &[12, 9]),
        // Whole tiles of middle cells.
        rule(&[2, 1], &[13, 12, 14]),
        // Sides shorter than two paddings, one and many axes.
        rule(&[3, 2], &[4, 2]),
        rule(&[2, 1], &[1, 7, 2]),
        rule(&[1], &[6]),
        rule(&[2, 1], &[3, 2, 4, 3, 2]),
        (Board::new(&[7, 3]).unwrap(), Moves::explicit(&[vec![4, 0], vec![0, -1], vec![-2, 2]], 2).unwrap()),
    ]
}

#[test]
fn tiled_and_row_major_layouts_agree_on_cells_moves_and_degrees() {
    for (board, moves) in cases() {
        for layout in [Layout::new(&board, &moves).unwrap(), Layout::for_walks(&board, &moves).unwrap()] {
            let k = moves.len();
            let walk_bits = if layout.phase_mask() > 0 { walk_tile_bits(board.dims()) } else { 0 };
            assert_eq!(layout.len() as u128, padded_len(&board, &moves, walk_bits), "{board}");
            let degrees = layout.initial_degrees::<u8>();
            assert!(degrees[layout.len() - layout.slack()..].iter().all(|&d| d == u8::BLOCKED), "{board}: the slack");
            let cells: Vec<usize> = layout.board_cells().collect();
            assert_eq!(cells.len() as u64, board.cells());
            let mut xy = vec![0i64; board.dims()];
            for (i, &c) in cells.iter().enumerate() {
                let i = i as u64;
                assert_eq!(layout.padded(i), c, "{board}: cell {i}");
                assert_eq!(layout.unpadded(c), i);
                layout.coords(c, &mut xy);
                let coords: Vec<i64> = board.coords(i).iter().map(|&x| i64::from(x)).collect();
                assert_eq!(xy, coords, "{board}: cell {i}");
                assert_eq!(layout.offsets_from(c).len(), k);
                let mut on_board = 0;
                for (v, &o) in moves.iter().zip(layout.offsets_from(c)) {
                    let to: Vec<i64> = coords.iter().zip(v).map(|(&x, &d)| x + i64::from(d)).collect();
                    let target = c.wrapping_add_signed(o);
                    let tiled = layout.phase_mask() > 0;
                    assert!(
                        !tiled || target + 3 < layout.len(),
                        "{board}: a gather's word from {target} leaves the buffer"
                    );
                    if to.iter().zip(board.sides()).all(|(&x, &n)| (0..i64::from(n)).contains(&x)) {
                        on_board += 1;
                        let j = board.index_of(&to.iter().map(|&x| x as u64).collect::<Vec<_>>()).unwrap();
                        assert_eq!(target, layout.padded(j), "{board}: move {v:?} from cell {i}");
                    } else {
                        assert_eq!(degrees[target], u8::BLOCKED, "{board}: move {v:?} from {i} leaves the board");
                    }
                }
                assert_eq!(degrees[c], on_board, "{board}: degree of cell {i}");
            }
        }
    }
}

#[test]
fn walks_tile_3d_boards_only() {
    let three = Layout::for_walks(&Board::regular(3, 10).unwrap(), &Moves::from_rule(&[2, 1], 3).unwrap()).unwrap();
    assert_eq!(three.phase_mask(), 63, "4x4x4 tiles");
    assert_eq!(three.len(), 16 * 16 * 16 + VECTOR_SLACK, "10 + 2 x 2 rounds up to 16, then the slack");
    let two = Layout::for_walks(&Board::regular(2, 10).unwrap(), &Moves::from_rule(&[2, 1], 2).unwrap()).unwrap();
    assert_eq!(two.phase_mask(), 0);
    assert_eq!(two.len(), 14 * 14, "no slack without tiles");
}
