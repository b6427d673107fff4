//! Human-readable text of a walk: the numbered board of the classic
//! Warnsdorff programs, generalised to any D as a stack of 2D slices, and
//! the one-based line format of seed 001. (The SVG picture is
//! `figures::TourPicture`.)

use std::fmt::Write;

use tour::Board;

/// Step numbers (1-based) laid out on the board, `.` where the walk never
/// went. 2D prints rows of axis 0; D >= 3 prints one slice per leading
/// coordinate prefix, headed by that prefix.
pub fn numbered_board(board: &Board, path: &[u64]) -> String {
    let mut step = vec![0u64; board.cells() as usize];
    for (i, &cell) in path.iter().enumerate() {
        step[cell as usize] = i as u64 + 1;
    }
    let width = board.cells().to_string().len();
    let sides = board.sides();
    let row = *sides.last().expect("a board has an axis") as usize;
    let rows_per_slice = if sides.len() >= 2 { sides[sides.len() - 2] as usize } else { 1 };
    let mut out = String::new();
    for (r, chunk) in step.chunks(row).enumerate() {
        if sides.len() >= 3 && r % rows_per_slice == 0 {
            let prefix = &board.coords((r * row) as u64)[..sides.len() - 2];
            if r > 0 {
                out.push('\n');
            }
            let _ = writeln!(out, "slice {prefix:?}");
        }
        let line: Vec<String> =
            chunk.iter().map(|&s| if s == 0 { format!("{:>width$}", ".") } else { format!("{s:>width$}") }).collect();
        let _ = writeln!(out, "{}", line.join(" "));
    }
    out
}

/// The tour as the competitive-programming problem of seed 001 prints it:
/// one "row col" line per cell, 1-based.
pub fn lines(board: &Board, path: &[u64]) -> String {
    let mut out = String::with_capacity(path.len() * 8);
    for &i in path {
        let c = board.coords(i);
        let coords: Vec<String> = c.iter().map(|x| (x + 1).to_string()).collect();
        let _ = writeln!(out, "{}", coords.join(" "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_cells_in_walk_order() {
        let b = Board::new(&[2, 3]).unwrap();
        assert_eq!(numbered_board(&b, &[0, 5, 1]), "1 3 .\n. . 2\n");
        let b3 = Board::new(&[2, 1, 2]).unwrap();
        assert_eq!(numbered_board(&b3, &[3, 0]), "slice [0]\n2 .\n\nslice [1]\n. 1\n");
    }

    #[test]
    fn lines_are_one_based_row_col() {
        let b = Board::new(&[3, 4]).unwrap();
        assert_eq!(lines(&b, &[0, 6]), "1 1\n2 3\n");
    }
}
