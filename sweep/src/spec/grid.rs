//! One `[[grid]]` of a spec: a move set times a set of boards, with its
//! own starts if it gives them, and the checks of its fields.

use serde::{Deserialize, Serialize};

use crate::error::SpecError;

/// One `[[grid]]`: a move set (rule or explicit list) times a set of boards.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GridSpec {
    /// A leaper rule, padded with zeros to each D.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<Vec<u32>>,
    /// An explicit move list; its order is the move order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moves: Option<Vec<Vec<i64>>>,
    /// The name tables, plots and `--rule` use for the grid's move set in
    /// place of the move list (`"(3,2) authors' order"`). Presentation only:
    /// not part of the sweep id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The D values of the regular boards (`n`, `n_range`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dims: Vec<usize>,
    /// N values of regular N^D boards.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub n: Vec<u32>,
    /// A range of N values of regular boards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n_range: Option<NRange>,
    /// Explicit board shapes, each with its own D.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shapes: Vec<Vec<u32>>,
    /// Explicit starts (coordinates), run on every board of the grid in
    /// place of the sampled ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starts: Option<Vec<Vec<u64>>>,
    /// A file of starts, one per line; the client reads it into `starts`
    /// ([`SweepSpec::read_start_files`](super::SweepSpec::read_start_files)) before the spec goes anywhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starts_file: Option<String>,
    /// Labels a worker must carry to run this grid's boards (`requires =
    /// ["bigmem"]`, matched against `ksweep worker --label`). Placement
    /// only: results do not depend on it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<String>,
}

/// Longest grid `label`, in characters: it titles tables and plot panels.
pub const MAX_GRID_LABEL_CHARS: usize = 60;

/// `n_range = { from, to, step }`: from, from + step, .. up to `to` inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NRange {
    /// The first N.
    pub from: u32,
    /// The last N, inclusive.
    pub to: u32,
    /// The step between N values (default 1).
    #[serde(default = "default_step")]
    pub step: u32,
}

fn default_step() -> u32 {
    1
}

impl NRange {
    /// Number of values in the range (0 if `to < from`, which `check` refuses).
    pub fn len(&self) -> u64 {
        if self.to < self.from || self.step == 0 {
            return 0;
        }
        u64::from((self.to - self.from) / self.step) + 1
    }

    /// True when the range holds no value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values, ascending.
    pub fn values(&self) -> impl Iterator<Item = u32> {
        let NRange { from, step, .. } = *self;
        (0..self.len()).map(move |i| from + (i as u32) * step)
    }
}

impl GridSpec {
    /// The D values regular boards (`n`, `n_range`) are built in: `dims`, or
    /// for an explicit move list without `dims`, the length of its moves.
    pub fn regular_dims(&self) -> Vec<usize> {
        match (&self.moves, self.dims.is_empty()) {
            (Some(list), true) => list.first().map(Vec::len).into_iter().collect(),
            _ => self.dims.clone(),
        }
    }

    /// The distinct N of the regular boards, ascending.
    pub fn regular_ns(&self) -> Vec<u32> {
        let mut ns: Vec<u32> = self.n.clone();
        ns.extend(self.n_range.iter().flat_map(NRange::values));
        ns.sort_unstable();
        ns.dedup();
        ns
    }

    /// Number of distinct N, without listing them (ranges can be long).
    pub(super) fn regular_n_count(&self) -> u64 {
        let range = self.n_range.unwrap_or(NRange { from: 1, to: 0, step: 1 });
        let in_range =
            |n: u32| range.step > 0 && n >= range.from && n <= range.to && (n - range.from).is_multiple_of(range.step);
        let mut extra: Vec<u32> = self.n.iter().copied().filter(|&n| !in_range(n)).collect();
        extra.sort_unstable();
        extra.dedup();
        range.len() + extra.len() as u64
    }

    /// Configurations the grid gives before removing repeats of other grids.
    pub fn configuration_count(&self) -> u64 {
        let regular = self.regular_dims().len() as u64 * self.regular_n_count();
        regular + self.shapes.len() as u64
    }

    /// The same grid written the canonical way: N listed ascending once.
    pub(super) fn normalized(&self) -> GridSpec {
        let mut n = self.n.clone();
        n.sort_unstable();
        n.dedup();
        GridSpec { n, ..self.clone() }
    }

    /// Structural checks; the engine checks the rule, moves and boards later.
    pub(super) fn check(&self, path: &str) -> Result<(), SpecError> {
        let field = |name: &str, message: String| SpecError::field(format!("{path}.{name}"), message);
        match (&self.rule, &self.moves) {
            (Some(_), Some(_)) => return Err(SpecError::field(path, "has both rule and moves; give exactly one")),
            (None, None) => {
                return Err(SpecError::field(path, "has neither rule nor moves; give exactly one (e.g. rule = [2, 1])"))
            }
            _ => {}
        }
        self.check_label(&field)?;
        self.check_boards(path, &field)?;
        self.check_starts(path, &field)?;
        self.check_shapes(&field)?;
        Ok(())
    }

    /// The label: one line of text, not empty, within the limit.
    fn check_label(&self, field: &impl Fn(&str, String) -> SpecError) -> Result<(), SpecError> {
        if let Some(label) = &self.label {
            if label.trim().is_empty() {
                return Err(field("label", "is empty; name the move set or drop the key".into()));
            }
            let chars = label.chars().count();
            if chars > MAX_GRID_LABEL_CHARS {
                return Err(field("label", format!("has {chars} characters, over the limit {MAX_GRID_LABEL_CHARS}")));
            }
            // A line break would end a heading or a comment wherever the
            // label is written; no escaping of every format can be relied on.
            if label.chars().any(char::is_control) {
                return Err(field(
                    "label",
                    "has a control character (a line break, a tab); one line of text only".into(),
                ));
            }
        }
        Ok(())
    }

    /// D and N: within the engine's limits, and some board given.
    fn check_boards(&self, path: &str, field: &impl Fn(&str, String) -> SpecError) -> Result<(), SpecError> {
        if let Some(&d) = self.dims.iter().find(|&&d| d == 0 || d > tour::MAX_DIMS) {
            return Err(field("dims", format!("{d} is outside the allowed 1..={}", tour::MAX_DIMS)));
        }
        if self.n.is_empty() && self.n_range.is_none() && self.shapes.is_empty() {
            return Err(SpecError::field(path, "gives no boards; add n, n_range or shapes"));
        }
        if self.n.contains(&0) {
            return Err(field("n", "0 is below the minimum 1".into()));
        }
        if let Some(r) = self.n_range {
            if r.step == 0 {
                return Err(field("n_range.step", "must be at least 1".into()));
            }
            if r.from == 0 {
                return Err(field("n_range.from", "0 is below the minimum 1".into()));
            }
            if r.to < r.from {
                return Err(field("n_range.to", format!("{} is below from = {}", r.to, r.from)));
            }
        }
        Ok(())
    }

    /// The starts listed (read from `starts_file` first) and the labels
    /// required.
    fn check_starts(&self, path: &str, field: &impl Fn(&str, String) -> SpecError) -> Result<(), SpecError> {
        match (&self.starts, &self.starts_file) {
            (Some(_), Some(_)) => {
                return Err(SpecError::field(path, "has both starts and starts_file; give at most one"))
            }
            (None, Some(_)) => {
                return Err(field(
                    "starts_file",
                    "was not read; a client reads it into starts (ksweep does) before submitting".into(),
                ))
            }
            (Some(list), None) if list.is_empty() => {
                return Err(field("starts", "is empty; list at least one start or drop the key".into()))
            }
            (Some(list), None) if list.len() as u64 > tour::MAX_STARTS => {
                return Err(field("starts", format!("has {} starts, over the limit {}", list.len(), tour::MAX_STARTS)))
            }
            _ => {}
        }
        match crate::labels::labels(&self.requires) {
            Err(crate::labels::LabelError::TooMany(n)) => {
                return Err(field("requires", format!("has {n} labels, over the limit {}", crate::labels::MAX_LABELS)))
            }
            Err(crate::labels::LabelError::Malformed(i)) => {
                return Err(field(&format!("requires[{}]", i - 1), format!("must be {}", crate::labels::LABEL_RULE)))
            }
            Ok(_) => {}
        }
        Ok(())
    }

    /// D given with N, and every shape's sides within the limit and D.
    fn check_shapes(&self, field: &impl Fn(&str, String) -> SpecError) -> Result<(), SpecError> {
        let has_regular = !self.n.is_empty() || self.n_range.is_some();
        if has_regular && self.regular_dims().is_empty() {
            return Err(field("dims", "is required with n and n_range (e.g. dims = [2, 3])".into()));
        }
        for (i, shape) in self.shapes.iter().enumerate() {
            let len = shape.len();
            if len == 0 || len > tour::MAX_DIMS {
                return Err(field(
                    &format!("shapes[{i}]"),
                    format!("has {len} sides; a board has 1..={} sides", tour::MAX_DIMS),
                ));
            }
            if !self.dims.is_empty() && !self.dims.contains(&len) {
                return Err(field(
                    &format!("shapes[{i}]"),
                    format!("has {len} sides but dims lists only {:?}", self.dims),
                ));
            }
        }
        Ok(())
    }
}
