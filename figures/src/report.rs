//! The report a researcher mails to a co-author: a sweep's spec, state,
//! every table and every figure, laid out like the results section of the
//! research report (accuracy, then time, then walks, then failure maps).
//! As one self-contained HTML file (inline SVG and CSS, nothing fetched),
//! or as Markdown with the SVGs written beside it.

use std::time::Duration;

use sweep::{
    format_duration, html_escape, markdown_text, render, AggregateRow, Contributor, Metric, Progress, TableFormat,
    TableLayout, TableOptions,
};

use crate::{Chart, ChartSpec, FailureMap, Figure, FigureError, Quantity};

/// What a report shows.
#[derive(Clone, Debug)]
pub struct ReportInput {
    /// The sweep's name and id.
    pub name: String,
    pub id: String,
    /// Where it stands.
    pub progress: Progress,
    /// Successes so far, configurations, and those with no tour possible.
    pub successes: u64,
    pub configurations: u64,
    /// The spec as stored.
    pub spec_toml: String,
    /// The table rows.
    pub rows: Vec<AggregateRow>,
    /// Failure maps to show (none is fine).
    pub maps: Vec<FailureMap>,
    /// When it ran, as [`sweep::SweepStatus::time_lines`] words it.
    pub times: Vec<(&'static str, String)>,
    /// The workers whose results it holds, most tasks first.
    pub contributors: Vec<Contributor>,
    /// Who made it (`ksweep 0.1.0`).
    pub generator: String,
}

/// One section: a heading, an introduction, figures and tables.
struct Section {
    heading: &'static str,
    intro: String,
    figures: Vec<(String, Figure)>,
    /// Tables in the chosen format.
    tables: String,
}

/// The report's sections, in the research report's order; `format` is the
/// tables' (HTML or Markdown).
fn sections(input: &ReportInput, format: TableFormat) -> Result<Vec<Section>, FigureError> {
    let warning = input.progress.warning();
    let chart = |quantity| {
        let spec = ChartSpec {
            quantity,
            layout: TableLayout::ByMethods,
            moves: None,
            title: format!("{} · sweep {}", quantity.title_of(&input.rows), input.name),
            warning: warning.clone(),
        };
        match Chart::new(&input.rows, &spec) {
            Ok(chart) => Ok(Some(Figure::Chart(chart))),
            Err(FigureError::Empty(_)) => Ok(None),
            Err(e) => Err(e),
        }
    };
    // The tables say the sweep is unfinished once, at the top of the page.
    let tables = |metric, intervals| {
        let opts =
            TableOptions { layout: TableLayout::ByMethods, format, moves: None, metric, intervals, progress: None };
        render(&input.rows, &opts)
    };
    let mut out = vec![Section {
        heading: "Accuracy",
        intro: "Share of starts from which each method found an open tour, by board side N; bands and \
                bracketed ranges are 95 % Wilson intervals, n the starts behind a cell."
            .into(),
        figures: chart(Quantity::Accuracy)?.into_iter().map(|f| ("accuracy".to_string(), f)).collect(),
        tables: tables(Metric::Accuracy, true),
    }];
    // Where proofs left starts out, the accuracy over the rest.
    if input.rows.iter().any(|r| !r.impossible && r.starts_refuted() > 0) {
        out.push(Section {
            heading: "Accuracy where a tour exists",
            intro: "Share of the starts from which a tour exists that each method found one from: a start is left \
                    out when a method proved no tour from it (solve, bt, construct, the colour rule) or the board \
                    has none; starts no method settled stay in, so each figure is a lower bound. Each table says \
                    how many starts it left out."
                .into(),
            figures: chart(Quantity::AccuracyExists)?.into_iter().map(|f| ("accuracy-exists".to_string(), f)).collect(),
            tables: tables(Metric::AccuracyPossible, true),
        });
    }
    out.push(Section {
        heading: "Time",
        intro: "Mean wall time per task on its worker (log scale in the figure), in microseconds.".into(),
        figures: chart(Quantity::Time)?.into_iter().map(|f| ("time".to_string(), f)).collect(),
        tables: tables(Metric::MeanMicros, false),
    });
    if let Some(figure) = chart(Quantity::Attempts)? {
        out.push(Section {
            heading: "Walks per task",
            intro: "Mean walks an AW, AW+ or MW task made before a tour or the last rotation.".into(),
            figures: vec![("attempts".to_string(), figure)],
            tables: String::new(),
        });
    }
    if !input.maps.is_empty() {
        out.push(Section {
            heading: "Failure maps",
            intro: "Start squares coloured by which methods failed from them, on the boards with the most failures."
                .into(),
            figures: input
                .maps
                .iter()
                .enumerate()
                .map(|(i, m)| (format!("failures-{}", i + 1), Figure::Map(m.clone())))
                .collect(),
            tables: String::new(),
        });
    }
    Ok(out)
}

/// The summary lines: (label, value).
fn summary(input: &ReportInput) -> Vec<(&'static str, String)> {
    let p = &input.progress;
    vec![
        ("sweep", format!("{} ({})", input.name, input.id)),
        ("state", p.state_label().to_string()),
        ("tasks", format!("{} of {}", p.tasks_done, p.tasks_total)),
        ("successes", input.successes.to_string()),
        ("configurations", input.configurations.to_string()),
        ("shards failed", p.shards_failed.to_string()),
    ]
}

/// The provenance section's introduction.
const PROVENANCE_INTRO: &str = "The builds and machines that computed these results, and when. Wall time runs \
     from the first result to the end; CPU time adds up each task's time on its worker's thread.";

/// A worker's text that an older database did not record.
fn or_not_recorded(text: &str) -> String {
    if text.is_empty() {
        "not recorded".into()
    } else {
        text.to_string()
    }
}

/// The builds the results came from: (build, workers, tasks), most tasks
/// first.
fn builds(contributors: &[Contributor]) -> Vec<(String, usize, u64)> {
    let mut out: Vec<(String, usize, u64)> = Vec::new();
    for c in contributors {
        let build = or_not_recorded(&c.build_label());
        match out.iter_mut().find(|(b, _, _)| *b == build) {
            Some(entry) => {
                entry.1 += 1;
                entry.2 += c.tasks;
            }
            None => out.push((build, 1, c.tasks)),
        }
    }
    out.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    out
}

/// A share of the tasks, `62.5 %`.
fn share(tasks: u64, of: u64) -> String {
    format!("{:.1} %", if of > 0 { 100.0 * tasks as f64 / of as f64 } else { 0.0 })
}

/// A contributor's cells: worker, build, host, CPU, features, tasks, CPU time.
fn worker_cells(c: &Contributor) -> [String; 7] {
    let recorded = !c.build_label().is_empty();
    let features = match (recorded, c.features.is_empty()) {
        (false, _) => "not recorded".to_string(),
        (true, true) => "none (scalar)".to_string(),
        (true, false) => c.features.join(" "),
    };
    [
        c.name.clone(),
        or_not_recorded(&c.build_label()),
        or_not_recorded(&c.host),
        or_not_recorded(&c.cpu),
        features,
        c.tasks.to_string(),
        format_duration(Duration::from_micros(c.cpu_micros)),
    ]
}

/// A table of the provenance section: its id, caption, column heads, and
/// how many of its last columns are numbers.
struct PlainTable {
    id: &'static str,
    caption: &'static str,
    heads: &'static [&'static str],
    rows: Vec<Vec<String>>,
    numeric: usize,
}

/// The provenance section's tables: the builds, then each worker with its
/// machine, tasks and CPU time; none without results.
fn provenance_tables(contributors: &[Contributor]) -> Vec<PlainTable> {
    if contributors.is_empty() {
        return Vec::new();
    }
    let total: u64 = contributors.iter().map(|c| c.tasks).sum();
    let builds = builds(contributors)
        .into_iter()
        .map(|(b, workers, tasks)| vec![b, workers.to_string(), tasks.to_string(), share(tasks, total)])
        .collect();
    vec![
        PlainTable {
            id: "builds",
            caption: "Builds",
            heads: &["ksweep build", "workers", "tasks", "share"],
            rows: builds,
            numeric: 3,
        },
        PlainTable {
            id: "workers",
            caption: "Workers and their machines",
            heads: &["worker", "build", "host", "CPU", "CPU features", "tasks", "CPU time"],
            rows: contributors.iter().map(|c| worker_cells(c).to_vec()).collect(),
            numeric: 2,
        },
    ]
}

/// The provenance section as HTML: times, builds, workers.
fn provenance_html(input: &ReportInput) -> String {
    let mut out = format!("<section id=\"provenance\">\n<h2>Provenance</h2>\n<p>{PROVENANCE_INTRO}</p>\n");
    out.push_str("<table class=\"summary\" id=\"times\">\n");
    for (label, value) in &input.times {
        out.push_str(&format!("<tr><td>{label}</td><td>{}</td></tr>\n", html_escape(value)));
    }
    out.push_str("</table>\n");
    let tables = provenance_tables(&input.contributors);
    if tables.is_empty() {
        out.push_str("<p>No results yet.</p>\n");
    }
    for t in &tables {
        out.push_str(&format!(
            "<table class=\"ksweep-table provenance\" id=\"{}\">\n<caption>{}</caption>\n<thead><tr>",
            t.id, t.caption
        ));
        for (i, h) in t.heads.iter().enumerate() {
            let class = if i >= t.heads.len() - t.numeric { " class=\"num\"" } else { "" };
            out.push_str(&format!("<th{class}>{h}</th>"));
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for row in &t.rows {
            out.push_str("<tr>");
            for (i, cell) in row.iter().enumerate() {
                let class = if i >= t.heads.len() - t.numeric { " class=\"num\"" } else { "" };
                out.push_str(&format!("<td{class}>{}</td>", html_escape(cell)));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n</table>\n");
    }
    out.push_str("</section>\n");
    out
}

/// The provenance section as Markdown: times, builds, workers.
fn provenance_markdown(input: &ReportInput) -> String {
    let mut out = format!("\n## Provenance\n\n{PROVENANCE_INTRO}\n\n| | |\n|---|---|\n");
    for (label, value) in &input.times {
        out.push_str(&format!("| {label} | {} |\n", markdown_text(value)));
    }
    let tables = provenance_tables(&input.contributors);
    if tables.is_empty() {
        out.push_str("\nNo results yet.\n");
    }
    for t in &tables {
        out.push_str(&format!("\n#### {}\n\n| {} |\n|", t.caption, t.heads.join(" | ")));
        for i in 0..t.heads.len() {
            out.push_str(if i >= t.heads.len() - t.numeric { "---:|" } else { "---|" });
        }
        out.push('\n');
        for row in &t.rows {
            let cells: Vec<String> = row.iter().map(|c| markdown_text(c)).collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
    }
    out
}

const STYLE: &str =
    "body{font-family:'DejaVu Sans',Verdana,sans-serif;max-width:1180px;margin:2em auto;padding:0 1em;color:#222}\
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}\
.warning{background:#fde8e8;border:1px solid #d33;color:#a00;padding:.6em 1em;font-weight:bold}\
table.summary td{padding:.1em 1em .1em 0}\
table.ksweep-table{border-collapse:collapse;margin:1em 0 .3em;font-size:.9em}\
table.ksweep-table caption{text-align:left;font-weight:bold;padding:.3em 0}\
table.ksweep-table th,table.ksweep-table td{padding:.15em .7em;border-bottom:1px solid #eee}\
table.ksweep-table thead th{border-bottom:2px solid #444}\
table.provenance th{text-align:left}table.provenance th.num{text-align:right}td.num{text-align:right;font-variant-numeric:tabular-nums}\
.legend{font-size:.85em;color:#555}figure{margin:1em 0}figure svg{max-width:100%;height:auto}\
pre{background:#f6f6f6;padding:1em;overflow-x:auto;font-size:.85em}footer{margin-top:3em;color:#888;font-size:.8em}";

/// The report as one self-contained HTML page.
pub fn html(input: &ReportInput) -> Result<String, FigureError> {
    let mut out = String::new();
    let title = format!("knight-sweep report: {}", html_escape(&input.name));
    out.push_str(&format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{title}</h1>\n"
    ));
    if let Some(w) = input.progress.warning() {
        out.push_str(&format!("<p class=\"warning\">{}</p>\n", html_escape(&w)));
    }
    out.push_str("<section id=\"summary\">\n<h2>Summary</h2>\n<table class=\"summary\">\n");
    for (label, value) in summary(input) {
        out.push_str(&format!("<tr><td>{label}</td><td>{}</td></tr>\n", html_escape(&value)));
    }
    out.push_str("</table>\n</section>\n");
    for section in sections(input, TableFormat::Html)? {
        let id = section.heading.to_lowercase().replace(' ', "-");
        out.push_str(&format!(
            "<section id=\"{id}\">\n<h2>{}</h2>\n<p>{}</p>\n",
            section.heading,
            html_escape(&section.intro)
        ));
        for (name, figure) in &section.figures {
            let svg = figure.svg()?;
            // The SVG goes in as markup; only its XML declaration, if any, goes.
            let svg = svg.trim_start_matches(|c| c != '<').trim_start();
            let svg = if svg.starts_with("<?xml") { &svg[svg.find("?>").map_or(0, |i| i + 2)..] } else { svg };
            out.push_str(&format!("<figure id=\"figure-{name}\">\n{svg}\n</figure>\n"));
        }
        out.push_str(&section.tables);
        out.push_str("</section>\n");
    }
    out.push_str(&provenance_html(input));
    out.push_str(&format!(
        "<section id=\"spec\">\n<h2>Spec</h2>\n<pre>{}</pre>\n</section>\n<footer>made by {}</footer>\n</body>\n</html>\n",
        html_escape(&input.spec_toml),
        html_escape(&input.generator)
    ));
    Ok(out)
}

/// The report as Markdown, and the figures it links to as (file name,
/// SVG); the links point into `figures_dir`, a path relative to the
/// Markdown file. The sweep's name is whatever its spec says, so it is
/// escaped ([`markdown_text`]): renderers that pass HTML through must not
/// get a `<script>` from it.
pub fn markdown(input: &ReportInput, figures_dir: &str) -> Result<(String, Vec<(String, String)>), FigureError> {
    let mut out = format!("# knight-sweep report: {}\n\n", markdown_text(&input.name));
    if let Some(w) = input.progress.warning() {
        out.push_str(&format!("> **{w}**\n\n"));
    }
    out.push_str("## Summary\n\n| | |\n|---|---|\n");
    for (label, value) in summary(input) {
        out.push_str(&format!("| {label} | {} |\n", markdown_text(&value)));
    }
    let mut files = Vec::new();
    for section in sections(input, TableFormat::Markdown)? {
        out.push_str(&format!("\n## {}\n\n{}\n\n", section.heading, section.intro));
        for (name, figure) in &section.figures {
            let file = format!("{name}.svg");
            out.push_str(&format!("![{} figure]({figures_dir}/{file})\n\n", section.heading.to_lowercase()));
            files.push((file, figure.svg()?));
        }
        // Table titles become level-4 headings under the section.
        let tables = section.tables.replace("\n### ", "\n#### ");
        out.push_str(&if tables.starts_with("### ") { format!("#{tables}") } else { tables });
    }
    out.push_str(&provenance_markdown(input));
    let fence = code_fence(&input.spec_toml);
    out.push_str(&format!(
        "\n## Spec\n\n{fence}toml\n{}\n{fence}\n\n---\nmade by {}\n",
        input.spec_toml.trim_end(),
        markdown_text(&input.generator)
    ));
    Ok((out, files))
}

/// A code fence longer than any run of backticks in `text`, so nothing in
/// it (a name holding "```") closes the block early.
fn code_fence(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}
