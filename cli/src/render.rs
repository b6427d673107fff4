//! Human-readable pictures of a walk: the numbered board of the classic
//! Warnsdorff programs, generalised to any D as a stack of 2D slices.

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

/// An SVG picture of a 2D walk, like the turtle drawing of seed 002: the
/// checkered board, the path through the cell centres, the start (green)
/// and the end (red); a closed tour's closing step is drawn dashed. Boards
/// are scaled to at most about 1200 pixels a side.
pub fn svg_tour(board: &Board, path: &[u64], closed: bool) -> Option<String> {
    let [rows, cols] = <[u32; 2]>::try_from(board.sides()).ok()?;
    let cell = (1200 / rows.max(cols)).clamp(2, 40) as f64;
    let (w, h) = (cols as f64 * cell, rows as f64 * cell);
    let centre = |i: u64| {
        let c = board.coords(i);
        ((c[1] as f64 + 0.5) * cell, (c[0] as f64 + 0.5) * cell)
    };
    let mut svg = String::new();
    let _ = writeln!(svg, r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}">"#);
    let _ = writeln!(svg, r##"<rect width="{w}" height="{h}" fill="#f0d9b5"/>"##);
    let _ = write!(svg, r##"<path fill="#b58863" d=""##);
    for r in 0..rows {
        for c in (r % 2..cols).step_by(2) {
            let _ = write!(svg, "M{} {}h{cell}v{cell}h-{cell}z", c as f64 * cell, r as f64 * cell);
        }
    }
    let _ = writeln!(svg, r#""/>"#);
    let stroke = (cell / 8.0).max(0.5);
    if path.len() > 1 {
        let points: Vec<String> = path
            .iter()
            .map(|&i| {
                let (x, y) = centre(i);
                format!("{x:.1},{y:.1}")
            })
            .collect();
        let _ = writeln!(
            svg,
            r##"<polyline fill="none" stroke="#1f4e9c" stroke-width="{stroke}" stroke-linejoin="round" points="{}"/>"##,
            points.join(" ")
        );
        if closed {
            let ((x1, y1), (x2, y2)) = (centre(path[path.len() - 1]), centre(path[0]));
            let _ = writeln!(
                svg,
                r##"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="#1f4e9c" stroke-width="{stroke}" stroke-dasharray="{stroke} {stroke}"/>"##
            );
        }
    }
    let radius = (cell / 4.0).max(1.0);
    for (&i, colour) in
        [(path.first(), "#2e8b57"), (path.last(), "#c0392b")].iter().filter_map(|(i, c)| i.map(|i| (i, *c)))
    {
        let (x, y) = centre(i);
        let _ = writeln!(svg, r#"<circle cx="{x:.1}" cy="{y:.1}" r="{radius}" fill="{colour}"/>"#);
    }
    svg.push_str("</svg>\n");
    Some(svg)
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
    fn svg_marks_start_and_end_and_refuses_3d() {
        let b = Board::new(&[3, 4]).unwrap();
        let svg = svg_tour(&b, &[0, 6, 3], false).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains(r#"points="20.0,20.0 100.0,60.0 140.0,20.0""#), "{svg}");
        assert_eq!(svg.matches("<circle").count(), 2);
        assert!(!svg.contains("stroke-dasharray"));
        assert!(svg_tour(&b, &[0, 6, 3], true).unwrap().contains("stroke-dasharray"));
        assert!(svg_tour(&Board::new(&[2, 2, 2]).unwrap(), &[0], false).is_none());
    }

    #[test]
    fn lines_are_one_based_row_col() {
        let b = Board::new(&[3, 4]).unwrap();
        assert_eq!(lines(&b, &[0, 6]), "1 1\n2 3\n");
    }
}
