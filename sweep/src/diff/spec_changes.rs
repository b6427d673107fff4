//! What differs between two sweeps' specs, field by field (`starts: 100 ->
//! 200`), so a diff of two sweeps named alike says what was changed.
//! Both are compared in their canonical form (defaults filled in, N lists
//! sorted), so two ways of writing the same spec do not differ.

use std::collections::BTreeSet;

use serde::Serialize;
use toml::Value;

use crate::SweepSpec;

/// One spec field whose value differs between the sweeps.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SpecChange {
    /// Its path as a spec error names it: `seed`, `grid[0].n`,
    /// `limits.max_tasks`.
    pub field: String,
    /// Its value in sweep A, as TOML writes it (cut short past
    /// `MAX_VALUE_CHARS`); `(not set)` where A does not give it.
    pub a: String,
    /// Its value in sweep B, likewise.
    pub b: String,
}

/// What a field missing from one spec shows.
const NOT_SET: &str = "(not set)";

/// Longest value shown: a grid's explicit starts may run to a megabyte.
const MAX_VALUE_CHARS: usize = 60;

/// The fields whose values differ, sorted by key within each table (the
/// grids in order); empty when the specs are the same.
pub fn spec_changes(a: &SweepSpec, b: &SweepSpec) -> Vec<SpecChange> {
    let mut changes = Vec::new();
    compare(String::new(), Some(&as_value(a)), Some(&as_value(b)), &mut changes);
    changes
}

fn as_value(spec: &SweepSpec) -> Value {
    // A parsed spec serialises back (SweepSpec::to_canonical_toml).
    Value::try_from(spec.canonical()).expect("a parsed spec serialises to TOML")
}

/// Compares tables key by key and arrays of tables (the grids) item by
/// item; any other value is compared whole.
fn compare(path: String, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<SpecChange>) {
    match (a, b) {
        (Some(Value::Table(a)), Some(Value::Table(b))) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for key in keys {
                let field = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
                compare(field, a.get(key), b.get(key), out);
            }
        }
        (Some(Value::Array(a)), Some(Value::Array(b))) if tables(a) && tables(b) => {
            for i in 0..a.len().max(b.len()) {
                compare(format!("{path}[{i}]"), a.get(i), b.get(i), out);
            }
        }
        _ if a == b => {}
        _ => out.push(SpecChange { field: path, a: shown(a), b: shown(b) }),
    }
}

/// An array of tables, as `[[grid]]` is; an empty one counts too.
fn tables(items: &[Value]) -> bool {
    items.iter().all(Value::is_table)
}

/// A value as TOML writes it inline, cut short past [`MAX_VALUE_CHARS`]
/// with how many items a cut array holds.
pub(super) fn shown(value: Option<&Value>) -> String {
    let Some(value) = value else { return NOT_SET.to_string() };
    let text = value.to_string();
    if text.chars().count() <= MAX_VALUE_CHARS {
        return text;
    }
    let head: String = text.chars().take(MAX_VALUE_CHARS).collect();
    match value {
        Value::Array(items) => format!("{head}... ({} items)", items.len()),
        _ => format!("{head}..."),
    }
}
