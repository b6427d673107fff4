//! Worker labels (`--label bigmem`, `--label site=lab`): free-form names a
//! worker advertises at registration, and a spec's grid may require
//! (`requires = ["bigmem"]`), for placing work by them. One rule, checked by
//! the worker's CLI, by the coordinator and by spec validation.

use std::collections::BTreeSet;

use thiserror::Error;

/// Most labels one worker may advertise.
pub const MAX_LABELS: usize = 32;
/// Longest label, in characters.
pub const MAX_LABEL_CHARS: usize = 64;
/// What a label may be, for error messages.
pub const LABEL_RULE: &str = "1 to 64 characters of A-Z a-z 0-9 . _ = -";

/// Why labels were refused. Neither variant echoes the label: the
/// coordinator's refusal goes back to a peer it does not trust.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LabelError {
    /// More labels than [`MAX_LABELS`]; how many.
    #[error("at most {MAX_LABELS} labels, got {0}")]
    TooMany(usize),
    /// The label at this position (from 1) breaks [`LABEL_RULE`].
    #[error("label {0}: {LABEL_RULE}")]
    Malformed(usize),
}

/// Checks one label against [`LABEL_RULE`] (no spaces or control
/// characters, which would blur a listing or forge a log line).
pub fn label_ok(label: &str) -> bool {
    (1..=MAX_LABEL_CHARS).contains(&label.len())
        && label.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'=' | b'-'))
}

/// A worker's labels as a set (repeats fold), or why they are refused;
/// errors number labels from 1, in the order given.
pub fn labels<S: AsRef<str>>(given: &[S]) -> Result<BTreeSet<String>, LabelError> {
    if given.len() > MAX_LABELS {
        return Err(LabelError::TooMany(given.len()));
    }
    given
        .iter()
        .enumerate()
        .map(|(i, l)| if label_ok(l.as_ref()) { Ok(l.as_ref().to_string()) } else { Err(LabelError::Malformed(i + 1)) })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_bounded_names_and_repeats_fold() {
        let set = labels(&["bigmem", "site=lab", "gpu.v100_x-2", "bigmem"]).unwrap();
        assert_eq!(set.into_iter().collect::<Vec<_>>(), ["bigmem", "gpu.v100_x-2", "site=lab"]);
        assert_eq!(labels::<&str>(&[]), Ok(BTreeSet::new()));
        let longest = "x".repeat(MAX_LABEL_CHARS);
        assert!(label_ok(&longest));
        assert!(!label_ok(&format!("{longest}x")));
        for bad in ["", "two words", "a\nINFO forged", "é", "site:lab", "a/b"] {
            assert_eq!(labels(&["ok", bad]), Err(LabelError::Malformed(2)), "{bad:?}");
        }
        let many: Vec<String> = (0..=MAX_LABELS).map(|i| format!("l{i}")).collect();
        assert_eq!(labels(&many), Err(LabelError::TooMany(MAX_LABELS + 1)));
        assert_eq!(labels(&many[..MAX_LABELS]).map(|s| s.len()), Ok(MAX_LABELS));
        assert_eq!(LabelError::TooMany(40).to_string(), "at most 32 labels, got 40");
        assert!(LABEL_RULE.starts_with(&format!("1 to {MAX_LABEL_CHARS} characters")));
    }
}
