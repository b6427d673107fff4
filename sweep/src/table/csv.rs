//! CSV: one file for all tables, and the RFC 4180 quoting every CSV of
//! knight-sweep uses (the tables here, `ksweep export`).

use super::layout::{Table, ROW_HEADER};
use super::TableLayout;

/// One CSV: the group keys, N, then the union of every table's columns.
pub(super) fn csv(tables: &[Table], layout: TableLayout) -> String {
    let mut columns: Vec<&(usize, String)> = tables.iter().flat_map(|t| &t.columns).collect();
    columns.sort();
    columns.dedup();
    let second = match layout {
        TableLayout::ByDims => "method",
        TableLayout::ByMethods => "dims",
    };
    let mut out =
        record(["moves", second, ROW_HEADER].into_iter().chain(columns.iter().map(|(_, label)| label.as_str())));
    for t in tables {
        for (label, cells) in &t.rows {
            let value =
                |c: &&(usize, String)| t.columns.iter().position(|tc| tc == *c).map_or("", |i| cells[i].as_str());
            out.push_str(&record(
                [t.keys[0].as_str(), t.keys[1].as_str(), label.as_str()].into_iter().chain(columns.iter().map(value)),
            ));
        }
    }
    out
}

/// One CSV line, its newline included: the fields quoted as [`field`] does,
/// joined by commas.
pub fn record<'f>(fields: impl IntoIterator<Item = &'f str>) -> String {
    let mut line = fields.into_iter().map(field).collect::<Vec<_>>().join(",");
    line.push('\n');
    line
}

/// RFC 4180 quoting: only fields with a comma, quote or line break are
/// quoted, and their quotes doubled.
pub fn field(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}
