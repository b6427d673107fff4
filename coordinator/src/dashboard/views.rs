//! A sweep's page data, computed once per version of its results and
//! shared by every page open on it: the aggregated rows, the tasks by
//! method, the table sections (one per (moves, D)) and what each page
//! asked to see of them. A section's table or a figure is rendered the
//! first time a page opens it and then served from here until the results
//! change, so the server's cost follows what is looked at, not how many
//! tables the sweep has or how many pages poll it.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use figures::{Chart, ChartSpec, Figure, FigureError, Quantity};
use serde_json::{json, Value};
use sweep::{AggregateRow, Contributor, Metric, SweepState, SweepStatus, TableFormat, TableLayout, TableOptions};

use super::Dashboard;
use crate::error::Error;
use crate::query;
use crate::state::now;

/// Fewest seconds between two computations of a running sweep's view.
const VIEW_EVERY: Duration = Duration::from_secs(2);
/// A view is computed again no sooner than this many times its cost after
/// the last: pages open on a large sweep take at most a twentieth of a core.
const VIEW_COST_SHARE: u32 = 20;

/// A part of a sweep's page rendered on request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Part {
    /// The accuracy table of one section, by its index.
    Section(usize),
    Figure(FigureKind),
}

/// The figures a sweep page shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum FigureKind {
    Accuracy,
    Time,
}

impl FigureKind {
    pub(super) fn parse(name: &str) -> Option<FigureKind> {
        match name {
            "accuracy" => Some(FigureKind::Accuracy),
            "time" => Some(FigureKind::Time),
            _ => None,
        }
    }

    fn quantity(self) -> Quantity {
        match self {
            FigureKind::Accuracy => Quantity::Accuracy,
            FigureKind::Time => Quantity::Time,
        }
    }
}

/// A sweep's page data at one version of its results.
pub(super) struct View {
    /// The (results, state) it was computed at, when, and at what cost.
    version: (u64, SweepState),
    at: Instant,
    cost: Duration,
    name: String,
    rows: Arc<Vec<AggregateRow>>,
    /// Each section's (moves, dims), in table order.
    sections: Vec<(String, u32)>,
    /// The workers whose results it holds, read with the rows.
    pub(super) contributors: Arc<Vec<Contributor>>,
    /// Tasks by method, the sections with their counts, the spec.
    pub(super) summary: Arc<Value>,
    /// Parts rendered so far; None where there is nothing to show.
    parts: Mutex<HashMap<Part, Option<Arc<str>>>>,
}

impl View {
    /// True while this view may stand for `version`: the same, or the same
    /// state with results since, within the refresh interval.
    fn serves(&self, version: (u64, SweepState), at: Instant) -> bool {
        self.version == version || (self.version.1 == version.1 && self.recent(at))
    }

    /// True while this view may stand for its sweep whatever came since
    /// (its state aside): a page's requests for parts within the refresh
    /// interval need no fresh status.
    fn recent(&self, at: Instant) -> bool {
        at.saturating_duration_since(self.at) < VIEW_EVERY.max(self.cost * VIEW_COST_SHARE)
    }

    /// A part of the page, rendered once per view: None for a section that
    /// does not exist or a figure with nothing to plot yet.
    pub(super) async fn part(self: &Arc<Self>, part: Part) -> Result<Option<Arc<str>>, Error> {
        if let Some(done) = self.parts.lock().unwrap_or_else(|p| p.into_inner()).get(&part) {
            return Ok(done.clone());
        }
        let view = self.clone();
        // Two pages asking at once may both render it; the text is the same.
        let rendered = tokio::task::spawn_blocking(move || view.render(part))
            .await
            .map_err(|e| Error::Internal(format!("rendering: {e}")))?
            .map(Arc::from);
        self.parts.lock().unwrap_or_else(|p| p.into_inner()).insert(part, rendered.clone());
        Ok(rendered)
    }

    fn render(&self, part: Part) -> Option<String> {
        match part {
            Part::Section(i) => {
                let (moves, dims) = self.sections.get(i)?;
                let rows: Vec<AggregateRow> =
                    self.rows.iter().filter(|r| &r.moves == moves && r.dims == *dims).cloned().collect();
                let options = TableOptions {
                    layout: TableLayout::ByMethods,
                    format: TableFormat::Html,
                    moves: None,
                    metric: Metric::Accuracy,
                    intervals: true,
                    progress: None,
                };
                Some(sweep::render(&rows, &options))
            }
            Part::Figure(kind) => plot(&self.rows, &self.name, kind.quantity()),
        }
    }
}

/// The view of the sweep `status` describes: the one kept, while it may
/// stand for the sweep's version, else computed now (one computation at a
/// time serves every page; a change of state shows at once).
pub(super) async fn view(d: &Dashboard, status: &SweepStatus) -> Result<Arc<View>, Error> {
    let version = (status.tasks_done, status.state);
    let mut views = d.views.lock().await;
    if let Some(view) = views.get(&status.sweep_id).filter(|v| v.serves(version, now())) {
        return Ok(view.clone());
    }
    let began = now();
    let id = status.sweep_id.clone();
    let (rows, contributors) =
        d.shared.read(move |s| Ok((query::table(s, Some(&id))?.rows, query::contributors(s, Some(&id))?))).await?;
    let sections = sections(&rows);
    let summary = json!({
        "methods": methods(&rows),
        "sections": sections.iter().enumerate().map(|(i, (moves, dims))| {
            let rows = rows.iter().filter(|r| &r.moves == moves && r.dims == *dims);
            let (mut tasks, mut successes, mut boards) = (0, 0, std::collections::BTreeSet::new());
            for r in rows {
                tasks += r.tasks;
                successes += r.successes;
                boards.insert(r.config);
            }
            json!({"index": i, "moves": moves, "dims": dims, "boards": boards.len(), "tasks": tasks, "successes": successes})
        }).collect::<Vec<_>>(),
        "spec": status.spec_toml,
    });
    let view = Arc::new(View {
        version,
        at: began,
        cost: now().saturating_duration_since(began),
        name: status.name.clone(),
        rows: Arc::new(rows),
        sections,
        contributors: Arc::new(contributors),
        summary: Arc::new(summary),
        parts: Mutex::default(),
    });
    views.insert(status.sweep_id.clone(), view.clone());
    Ok(view)
}

/// The view kept for the sweep whose full id is `id`, while it is recent.
pub(super) async fn recent_view(d: &Dashboard, id: &str) -> Option<Arc<View>> {
    d.views.lock().await.get(id).filter(|v| v.recent(now())).cloned()
}

/// The (moves, dims) of the tables, in the order the rows first name them.
fn sections(rows: &[AggregateRow]) -> Vec<(String, u32)> {
    let mut sections: Vec<(String, u32)> = Vec::new();
    for r in rows {
        if !sections.iter().any(|(m, d)| m == &r.moves && *d == r.dims) {
            sections.push((r.moves.clone(), r.dims));
        }
    }
    sections
}

/// Tasks done and tours found by method, methods in the order they appear.
fn methods(rows: &[AggregateRow]) -> Vec<Value> {
    let mut methods: BTreeMap<&str, (u64, u64, usize)> = BTreeMap::new();
    let rank = sweep::first_appearances(rows.iter().map(|r| r.method.as_str()));
    for r in rows {
        let entry = methods.entry(r.method.as_str()).or_insert((0, 0, rank[r.method.as_str()]));
        entry.0 += r.tasks;
        entry.1 += r.successes;
    }
    let mut methods: Vec<(&str, (u64, u64, usize))> = methods.into_iter().collect();
    methods.sort_by_key(|(_, (_, _, rank))| *rank);
    methods.into_iter().map(|(m, (tasks, ok, _))| json!({"method": m, "done": tasks, "successes": ok})).collect()
}

/// A chart as SVG, or None while there is nothing to plot.
fn plot(rows: &[AggregateRow], name: &str, quantity: Quantity) -> Option<String> {
    let spec = ChartSpec {
        quantity,
        layout: TableLayout::ByMethods,
        moves: None,
        title: format!("{} · sweep {name}", quantity.title_of(rows)),
        warning: None,
    };
    match Chart::new(rows, &spec).map(Figure::Chart).and_then(|f| f.svg()) {
        Ok(svg) => Some(svg),
        Err(FigureError::Empty(_)) => None,
        Err(e) => {
            tracing::warn!(error = %e, "dashboard plot failed");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(version: (u64, SweepState), at: Instant, cost: Duration) -> View {
        View {
            version,
            at,
            cost,
            name: String::new(),
            rows: Arc::default(),
            sections: Vec::new(),
            contributors: Arc::default(),
            summary: Arc::new(Value::Null),
            parts: Mutex::default(),
        }
    }

    #[test]
    fn a_view_is_computed_again_after_its_interval_or_at_once_on_a_change_of_state() {
        let at = Instant::now();
        let secs = |s: f64| at + Duration::from_secs_f64(s);
        let running = SweepState::Running;
        let fast = view((10, running), at, Duration::from_millis(50));
        assert!(fast.serves((10, running), secs(3600.0)), "nothing new");
        assert!(fast.serves((20, running), secs(1.9)), "results since, within VIEW_EVERY");
        assert!(!fast.serves((20, running), secs(2.0)));
        assert!(!fast.serves((20, SweepState::Done), secs(0.1)), "a change of state shows at once");
        let slow = view((10, running), at, Duration::from_millis(500));
        assert!(slow.serves((20, running), secs(9.9)), "twenty times its cost");
        assert!(!slow.serves((20, running), secs(10.0)));
    }
}
