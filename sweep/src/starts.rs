//! Start cells written as text, one per line (`x,y` or `x y`; blank lines
//! and `#` comments skipped): how `ksweep eval` reads stdin and how a spec's
//! `starts_file` is read, so both accept exactly the same files.

use thiserror::Error;

/// What is wrong with a line of a start list. Its message quotes the
/// coordinate at fault; [`StartLineError::redacted`] says the same without it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum StartLineError {
    /// A coordinate that is not a non-negative integer.
    #[error("{text:?} is not a non-negative integer")]
    NotAnInteger {
        /// Its place on the line, from 1.
        position: usize,
        /// What was written there.
        text: String,
    },
    /// Separators only.
    #[error("no coordinates")]
    NoCoordinates,
}

impl StartLineError {
    /// The message without the line's text, for files the user may not have
    /// written (a spec's `starts_file` may name any readable file, and its
    /// content must not reach a terminal or a log).
    pub fn redacted(&self) -> String {
        match self {
            StartLineError::NotAnInteger { position, .. } => {
                format!("coordinate {position} is not a non-negative integer")
            }
            StartLineError::NoCoordinates => self.to_string(),
        }
    }
}

/// One line of a start list: `None` for a blank or comment line, else the
/// coordinates; the error says what is wrong with the line.
pub fn parse_start_line(line: &str) -> Result<Option<Vec<u64>>, StartLineError> {
    let text = line.trim();
    if text.is_empty() || text.starts_with('#') {
        return Ok(None);
    }
    let coords = text
        .split([',', ' ', '\t'])
        .filter(|v| !v.is_empty())
        .enumerate()
        .map(|(i, v)| v.parse::<u64>().map_err(|_| StartLineError::NotAnInteger { position: i + 1, text: v.into() }))
        .collect::<Result<Vec<u64>, StartLineError>>()?;
    if coords.is_empty() {
        return Err(StartLineError::NoCoordinates);
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
        let negative = parse_start_line("4,-5").unwrap_err();
        assert_eq!(negative.to_string(), "\"-5\" is not a non-negative integer");
        assert_eq!(negative.redacted(), "coordinate 2 is not a non-negative integer");
        assert_eq!(parse_start_line(",,"), Err(StartLineError::NoCoordinates));
        assert_eq!(StartLineError::NoCoordinates.to_string(), "no coordinates");
    }

    #[test]
    fn redacted_errors_hold_nothing_of_the_line() {
        let secret = "root:$6$salt$hash:19000:0:99999:7:::";
        let e = parse_start_line(secret).unwrap_err();
        assert!(e.to_string().contains("root"), "the plain message quotes the text: {e}");
        assert_eq!(e.redacted(), "coordinate 1 is not a non-negative integer");
    }
}
