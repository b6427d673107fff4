//! Start cells written as text, one per line (`x,y` or `x y`; blank lines
//! and `#` comments skipped): how `ksweep eval` reads stdin and how a spec's
//! `starts_file` is read, so both accept exactly the same files.

/// One line of a start list: `None` for a blank or comment line, else the
/// coordinates; the error says what is wrong with the line.
pub fn parse_start_line(line: &str) -> Result<Option<Vec<u64>>, String> {
    let text = line.trim();
    if text.is_empty() || text.starts_with('#') {
        return Ok(None);
    }
    let coords = text
        .split([',', ' ', '\t'])
        .filter(|v| !v.is_empty())
        .map(|v| v.parse::<u64>().map_err(|_| format!("{v:?} is not a non-negative integer")))
        .collect::<Result<Vec<u64>, String>>()?;
    if coords.is_empty() {
        return Err("no coordinates".into());
    }
    Ok(Some(coords))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_as_eval_reads_them() {
        assert_eq!(parse_start_line("46,39"), Ok(Some(vec![46, 39])));
        assert_eq!(parse_start_line(" 4  5\t6 "), Ok(Some(vec![4, 5, 6])));
        assert_eq!(parse_start_line("  "), Ok(None));
        assert_eq!(parse_start_line("# 1,2"), Ok(None));
        assert_eq!(parse_start_line("4,-5"), Err("\"-5\" is not a non-negative integer".into()));
        assert_eq!(parse_start_line(",,"), Err("no coordinates".into()));
    }
}
