//! Figures drawn from hand-made rows, read back: the SVG parses as XML and
//! holds the series, bands and labels it should; the PNG decodes to the
//! size the figure claims.

use figures::{Chart, ChartSpec, FailureMap, Figure, FigureError, Quantity, StartResult};
use sweep::{AggregateRow, TableLayout};

fn row(config: u32, dims: u32, n: u32, method: &str, tasks: u64, successes: u64) -> AggregateRow {
    AggregateRow {
        config,
        moves: "3,2".into(),
        dims,
        shape: vec![n.to_string(); dims as usize].join("x"),
        n: Some(n),
        method: method.into(),
        impossible: false,
        tasks,
        successes,
        no_tour: 0,
        refuted: 0,
        unsettled: None,
        closed: false,
        mean_micros: 40.0 * f64::from(n),
        median_micros: 30.0 * f64::from(n),
        mean_attempts: if method == "w" { 1.0 } else { 1.0 + f64::from(n) / 10.0 },
        open_tour: "unknown".into(),
        closed_tour: "unknown".into(),
        precision: None,
    }
}

/// Two D (2 and 3), three N each, methods w and aw+; one cell without
/// results, which must not become a point.
fn rows() -> Vec<AggregateRow> {
    let mut rows = Vec::new();
    for (i, (dims, n)) in [(2, 10), (2, 20), (2, 30), (3, 10), (3, 20), (3, 30)].into_iter().enumerate() {
        rows.push(row(i as u32, dims, n, "w", 20, 20 - n as u64 / 2));
        rows.push(row(i as u32, dims, n, "aw+", if n == 30 && dims == 3 { 0 } else { 20 }, 20));
    }
    rows
}

fn spec(quantity: Quantity, layout: TableLayout) -> ChartSpec {
    ChartSpec { quantity, layout, moves: None, title: "test sweep".into(), warning: None }
}

/// Every text node of the SVG, parsed as XML.
fn texts(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).expect("the SVG is well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(|t| t.trim().to_string()))
        .collect()
}

fn count_tag(svg: &str, tag: &str) -> usize {
    let doc = roxmltree::Document::parse(svg).unwrap();
    doc.descendants().filter(|n| n.has_tag_name(tag)).count()
}

#[test]
fn accuracy_has_a_panel_per_rule_and_d_a_line_per_method_and_bands() {
    let chart = Chart::new(&rows(), &spec(Quantity::Accuracy, TableLayout::ByMethods)).unwrap();
    let titles: Vec<&str> = chart.panels.iter().map(|p| p.title.as_str()).collect();
    assert_eq!(titles, ["(3,2) 2D", "(3,2) 3D"]);
    let labels: Vec<&str> = chart.panels[0].series.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels, ["W", "AW+"], "report names, in the rows' order");
    let w = &chart.panels[0].series[0];
    assert_eq!(w.points.iter().map(|p| p.n).collect::<Vec<_>>(), [10, 20, 30]);
    assert_eq!(w.points[0].y, 75.0);
    let (lo, hi) = w.points[0].band.unwrap();
    assert!(lo < 75.0 && 75.0 < hi && hi < 100.0, "({lo}, {hi})");
    assert_eq!(chart.panels[1].series[1].points.len(), 2, "the empty cell is not a point");

    let svg = Figure::Chart(chart).svg().unwrap();
    let texts = texts(&svg);
    for expected in ["W", "AW+", "accuracy (%)", "N (board side)", "(3,2) 2D", "(3,2) 3D", "100"] {
        assert!(texts.iter().any(|t| t == expected), "no text {expected:?} in {texts:?}");
    }
    // One band per series of more than one point: 2 panels x 2 methods.
    assert_eq!(count_tag(&svg, "polygon"), 4);
}

#[test]
fn by_dims_draws_a_line_per_d() {
    let chart = Chart::new(&rows(), &spec(Quantity::Accuracy, TableLayout::ByDims)).unwrap();
    let titles: Vec<&str> = chart.panels.iter().map(|p| p.title.as_str()).collect();
    assert_eq!(titles, ["(3,2) W", "(3,2) AW+"]);
    let labels: Vec<&str> = chart.panels[0].series.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels, ["2D", "3D"]);
}

#[test]
fn time_is_on_a_log_axis_with_units() {
    let chart = Chart::new(&rows(), &spec(Quantity::Time, TableLayout::ByMethods)).unwrap();
    let svg = Figure::Chart(chart).svg().unwrap();
    let texts = texts(&svg);
    assert!(texts.iter().any(|t| t == "mean time per task (log)"));
    assert!(texts.iter().any(|t| t.ends_with(" ms")), "ticks carry units: {texts:?}");
    assert_eq!(count_tag(&svg, "polygon"), 0, "no intervals for times");
}

#[test]
fn attempts_chart_only_the_methods_that_retry() {
    let chart = Chart::new(&rows(), &spec(Quantity::Attempts, TableLayout::ByMethods)).unwrap();
    for panel in &chart.panels {
        let labels: Vec<&str> = panel.series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["AW+"]);
    }
    let only_w: Vec<AggregateRow> = rows().into_iter().filter(|r| r.method == "w").collect();
    let err = Chart::new(&only_w, &spec(Quantity::Attempts, TableLayout::ByMethods)).unwrap_err();
    assert!(matches!(err, FigureError::Empty(_)), "{err}");
}

#[test]
fn a_filter_that_matches_nothing_is_an_error_not_an_empty_picture() {
    let mut spec = spec(Quantity::Accuracy, TableLayout::ByMethods);
    spec.moves = Some("2,1".into());
    let err = Chart::new(&rows(), &spec).unwrap_err();
    assert_eq!(err.to_string(), "nothing to plot: no results on an N^D board of rule 2,1 yet");
}

#[test]
fn an_unfinished_sweep_is_said_on_the_figure() {
    let mut spec = spec(Quantity::Accuracy, TableLayout::ByMethods);
    spec.warning = Some("UNFINISHED sweep (running): 3 of 12 tasks".into());
    let svg = Figure::Chart(Chart::new(&rows(), &spec).unwrap()).svg().unwrap();
    assert!(texts(&svg).iter().any(|t| t.starts_with("UNFINISHED sweep (running)")));
}

/// Width and height from a PNG, decoded whole.
fn png_size(path: &std::path::Path) -> (u32, u32) {
    let decoder = png::Decoder::new(std::fs::File::open(path).unwrap());
    let mut reader = decoder.read_info().expect("a PNG header");
    let mut pixels = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut pixels).expect("the PNG decodes");
    (info.width, info.height)
}

#[test]
fn png_decodes_to_the_figures_size() {
    let dir = tempfile::tempdir().unwrap();
    let chart = Figure::Chart(Chart::new(&rows(), &spec(Quantity::Accuracy, TableLayout::ByMethods)).unwrap());
    let path = dir.path().join("accuracy.png");
    chart.png(&path).unwrap();
    assert_eq!(png_size(&path), chart.size());
    assert_eq!(chart.size(), (1120, 452), "two panels side by side under the title and legend bands");

    let map = Figure::Map(FailureMap::new("map".into(), None, &[6, 6], starts()).unwrap());
    let path = dir.path().join("map.png");
    map.png(&path).unwrap();
    assert_eq!(png_size(&path), map.size());
}

fn result(start: [u32; 2], method: &str, success: bool) -> StartResult {
    StartResult { start: start.to_vec(), method: method.into(), success, no_tour: false }
}

fn starts() -> Vec<StartResult> {
    vec![
        result([0, 0], "w", false),
        result([0, 0], "aw+", true),
        result([1, 2], "w", false),
        result([1, 2], "aw+", false),
        result([5, 5], "w", true),
        result([5, 5], "aw+", true),
        result([3, 1], "w", false),
        result([3, 1], "aw+", true),
    ]
}

#[test]
fn a_failure_map_classes_starts_by_the_methods_that_failed() {
    let map = FailureMap::new("map".into(), None, &[6, 6], starts()).unwrap();
    assert_eq!(map.start_count(), 4);
    let classes: Vec<(String, usize)> = map.classes().into_iter().map(|(b, n)| (map.class_label(b), n)).collect();
    assert_eq!(
        classes,
        [("no method failed".to_string(), 1), ("failed: W".to_string(), 2), ("every method failed".to_string(), 1)]
    );
    let svg = Figure::Map(map).svg().unwrap();
    let texts = texts(&svg);
    for expected in ["no method failed (1)", "failed: W (2)", "every method failed (1)", "not a start", "4 starts"] {
        assert!(texts.iter().any(|t| t == expected), "no {expected:?} in {texts:?}");
    }
}

/// 7x7: the 24 squares of the minority colour admit no open tour (the
/// colour rule); they are shown as impossible, not as every method failing.
/// Boards carry their coordinates, and a method set keeps its colour.
#[test]
fn a_map_shows_impossible_starts_coordinates_and_set_colours() {
    let mut results = Vec::new();
    for r in 0..7u32 {
        for c in 0..7u32 {
            let impossible = (r + c) % 2 == 1;
            let w_fails = impossible || (r, c) == (0, 0);
            results.push(StartResult { start: vec![r, c], method: "w".into(), success: !w_fails, no_tour: impossible });
            results.push(StartResult {
                start: vec![r, c],
                method: "aw+".into(),
                success: !impossible,
                no_tour: impossible,
            });
        }
    }
    let map = FailureMap::new("7x7".into(), None, &[7, 7], results.clone()).unwrap();
    let classes: Vec<(String, usize)> = map.classes().into_iter().map(|(b, n)| (map.class_label(b), n)).collect();
    assert_eq!(
        classes,
        [
            ("no method failed".to_string(), 24),
            ("failed: W".to_string(), 1),
            ("no tour from here (proven impossible)".to_string(), 24)
        ]
    );
    let svg = Figure::Map(map).svg().unwrap();
    let shown = texts(&svg);
    assert!(!shown.iter().any(|t| t.starts_with("every method failed")), "{shown:?}");
    assert!(shown.contains(&"no tour from here (proven impossible) (24)".to_string()), "{shown:?}");
    // Row and column numbers 0..6.
    for k in 0..7 {
        assert_eq!(shown.iter().filter(|t| **t == k.to_string()).count(), 2, "{k} once per axis: {shown:?}");
    }
    // W's failures are W's chart colour on this map and on one with more classes.
    let w_blue = "#1F77B4";
    assert!(svg.to_uppercase().contains(w_blue), "W's colour on the map");
    let mut more = results;
    more.push(StartResult { start: vec![0, 2], method: "aw+".into(), success: false, no_tour: false });
    more.push(StartResult { start: vec![2, 2], method: "aw+".into(), success: false, no_tour: false });
    let svg = Figure::Map(FailureMap::new("7x7".into(), None, &[7, 7], more).unwrap()).svg().unwrap();
    assert!(svg.to_uppercase().contains(w_blue), "W's colour does not depend on the classes beside it");
}

#[test]
fn a_3d_map_draws_a_slice_per_first_coordinate() {
    let results =
        (0..3).map(|s| StartResult { start: vec![s, 1, 1], method: "w".into(), success: s != 1, no_tour: false });
    let svg = Figure::Map(FailureMap::new("cube".into(), None, &[3, 3, 3], results).unwrap()).svg().unwrap();
    let texts = texts(&svg);
    for s in 0..3 {
        assert!(texts.contains(&format!("slice {s}")), "{texts:?}");
    }
}

#[test]
fn a_map_refuses_what_it_cannot_draw() {
    let err = FailureMap::new("x".into(), None, &[4, 4, 4, 4], Vec::new()).unwrap_err();
    assert_eq!(err.to_string(), "a failure map draws 2D and 3D boards; this board is 4D");
    let err = FailureMap::new("x".into(), None, &[4, 4], vec![result([4, 0], "w", true)]).unwrap_err();
    assert_eq!(err.to_string(), "start [4, 0] is off the board [4, 4]");
    let err = FailureMap::new("x".into(), None, &[4, 4], Vec::new()).unwrap_err();
    assert!(matches!(err, FigureError::Empty(_)));
}

fn walk(sides: &[u32], path: Vec<u64>) -> figures::TourPicture {
    figures::TourPicture {
        title: "(2,1) test · W from (0,0) · tour".into(),
        sides: sides.to_vec(),
        path,
        closed: false,
    }
}

#[test]
fn a_small_tour_is_titled_and_numbered_by_step() {
    let svg = walk(&[3, 4], vec![0, 6, 3]).svg().unwrap();
    let texts = texts(&svg);
    assert_eq!(texts[0], "(2,1) test · W from (0,0) · tour", "the title line");
    for step in ["1", "2", "3"] {
        assert!(texts.iter().any(|t| t == step), "step {step} numbered: {texts:?}");
    }
    assert!(texts
        .iter()
        .any(|t| t == "3 of 12 cells visited; start green, end red; 9 cells never reached (shaded red)"));
    assert!(svg.contains(r#"points="20.0,20.0 100.0,60.0 140.0,20.0""#), "{svg}");
    assert_eq!(count_tag(&svg, "circle"), 2, "start and end");
    // Nine squares never reached, one shaded path of them.
    let shaded = svg.lines().find(|l| l.contains("fill=\"#d9534f\"")).expect("unreached cells are shaded");
    assert_eq!(shaded.matches('M').count(), 9);
}

#[test]
fn a_complete_tour_marks_nothing_unreached_and_a_closed_one_dashes_its_closing_step() {
    let mut picture = walk(&[2, 2], vec![0, 1, 3, 2]);
    assert!(!picture.svg().unwrap().contains("#d9534f"));
    picture.closed = true;
    assert!(picture.svg().unwrap().contains("stroke-dasharray"));
}

#[test]
fn a_large_walk_is_coloured_by_step_with_a_scale() {
    let path: Vec<u64> = (0..100 * 100).collect();
    let svg = walk(&[100, 100], path).svg().unwrap();
    let texts = texts(&svg);
    assert!(!texts.iter().any(|t| t == "5000"), "no numbers on a 100x100 board");
    assert!(texts.iter().any(|t| t == "step 10000"));
    assert!(count_tag(&svg, "polyline") > 100, "the path in coloured segments");
    assert!(svg.contains("stroke=\"#440154\""), "the first steps in the scale's first colour");
    assert!(svg.contains("stop-color=\"rgb(253,231,37)\""), "the scale runs to its last colour");
}

#[test]
fn a_3d_walk_draws_slices_and_a_4d_one_is_refused() {
    let svg = walk(&[2, 2, 2], vec![0, 5, 3, 6]).svg().unwrap();
    let texts = texts(&svg);
    assert!(texts.contains(&"slice 0".to_string()) && texts.contains(&"slice 1".to_string()));
    assert_eq!(count_tag(&svg, "polyline"), 0, "no lines between slices");
    let err = walk(&[2, 2, 2, 2], vec![0]).svg().unwrap_err();
    assert_eq!(err.to_string(), "a tour picture draws 2D and 3D boards; this board is 4D");
}

#[test]
fn panel_titles_name_a_move_list_by_its_label_or_leaper() {
    assert_eq!(figures::rule_name("3,2"), "(3,2)");
    // `*` is the tables' mark for a board without an open tour; a list is †.
    assert_eq!(figures::rule_name("3,2,0 -3,2,0 0,2,-3"), "(3,2)†", "one leaper's moves in a given order");
    assert_eq!(figures::rule_name("1,0 0,1"), "(1)†");
    assert_eq!(figures::rule_name("2,1 1,1"), "2 moves");
    assert_eq!(figures::rule_name("(3,2) authors' order"), "(3,2) authors' order", "a grid label as given");
}

/// A panel of an unlabelled move list carries the † mark, and the legend
/// says what it means; a labelled one is titled by its label, with no note.
#[test]
fn a_mark_in_a_panel_title_is_explained_in_the_legend() {
    let mut rows = rows();
    for r in &mut rows {
        r.moves = if r.dims == 2 { "3,2 -3,2 2,3".into() } else { "(3,2) authors' order".into() };
    }
    let svg =
        Figure::Chart(Chart::new(&rows, &spec(Quantity::Accuracy, TableLayout::ByMethods)).unwrap()).svg().unwrap();
    let shown = texts(&svg);
    assert!(
        shown.contains(&"(3,2)† 2D".to_string()) && shown.contains(&"(3,2) authors' order 3D".to_string()),
        "{shown:?}"
    );
    assert!(shown.iter().any(|t| t.starts_with("† the leaper's moves as an explicit list")), "{shown:?}");
    rows.retain(|r| r.dims == 3);
    let svg =
        Figure::Chart(Chart::new(&rows, &spec(Quantity::Accuracy, TableLayout::ByMethods)).unwrap()).svg().unwrap();
    assert!(!texts(&svg).iter().any(|t| t.contains('†')), "no mark, no note");
}

/// A report of a sweep whose spec chose a hostile name: neither the HTML
/// nor the Markdown holds a tag of it, and the spec's code block is not
/// closed by backticks in the name.
#[test]
fn a_report_escapes_the_sweep_name() {
    let name = "<script>alert(1)</script><img src=x onerror=alert(2)> *b* [l](http://e) ``` |";
    let input = figures::report::ReportInput {
        name: name.into(),
        id: "0123456789abcdef".into(),
        progress: sweep::Progress { state: "done".into(), tasks_done: 240, tasks_total: 240, shards_failed: 0 },
        successes: 200,
        configurations: 6,
        spec_toml: format!("name = {name:?}\nseed = 1\n"),
        rows: rows(),
        maps: Vec::new(),
        times: Vec::new(),
        contributors: vec![sweep::Contributor { name: name.into(), host: "<b>h</b>".into(), ..Default::default() }],
        generator: "ksweep test".into(),
    };
    let html = figures::report::html(&input).unwrap();
    for tag in ["<script", "<img", "<b>"] {
        assert!(!html.contains(tag), "{tag} in the HTML report");
    }
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "the name is shown, escaped");

    let (md, _) = figures::report::markdown(&input, "figures").unwrap();
    let (text, spec) = md.split_once("## Spec\n\n").unwrap();
    for markup in ["<script", "<img", "[l](", "*b*"] {
        assert!(!text.contains(markup), "{markup} in the Markdown report:\n{text}");
    }
    assert!(text.starts_with("# knight-sweep report: &lt;script&gt;alert(1)&lt;/script&gt;&lt;img"), "{text}");
    assert!(text.contains("| sweep | &lt;script&gt;"), "the summary's name is escaped too:\n{text}");
    // The spec is code, as written; the name's three backticks sit inside
    // a four-backtick fence, so they cannot close it.
    let fenced = spec.strip_prefix("````toml\n").and_then(|s| s.split_once("\n````\n")).map(|(code, _)| code);
    assert_eq!(fenced, Some(input.spec_toml.trim_end()), "{spec}");
}

/// The provenance section: when the sweep ran, the builds and each
/// worker's machine, tasks and CPU time, in HTML and Markdown alike.
#[test]
fn a_report_says_what_made_its_results_and_when() {
    let worker = |name: &str, build: &str, features: &[&str], tasks, cpu_micros| sweep::Contributor {
        name: name.into(),
        version: "0.1.0".into(),
        build: build.into(),
        host: format!("{name}.lab"),
        cpu: "AMD EPYC 7B13".into(),
        features: features.iter().map(|f| f.to_string()).collect(),
        tasks,
        cpu_micros,
    };
    let input = figures::report::ReportInput {
        name: "prov".into(),
        id: "0123456789abcdef".into(),
        progress: sweep::Progress { state: "done".into(), tasks_done: 240, tasks_total: 240, shards_failed: 0 },
        successes: 200,
        configurations: 6,
        spec_toml: "name = \"prov\"\n".into(),
        rows: rows(),
        maps: Vec::new(),
        times: vec![
            ("submitted", "2025-03-01 14:00:00 UTC".into()),
            ("started", "not recorded".into()),
            ("wall time", "2 min 13 s".into()),
        ],
        contributors: vec![
            worker("a", "abc123", &["sse4.1", "ssse3"], 150, 133_000_000),
            worker("b", "abc123-dirty", &[], 60, 1_500_000),
            worker("c", "abc123", &["sse4.1"], 30, 400_000),
        ],
        generator: "ksweep test".into(),
    };
    let html = figures::report::html(&input).unwrap();
    let section = &html[html.find("<section id=\"provenance\">").expect("a provenance section")..];
    let section = &section[..section.find("</section>").unwrap()];
    for want in [
        "<td>started</td><td>not recorded</td>",
        "<td>wall time</td><td>2 min 13 s</td>",
        "<td>0.1.0 (abc123)</td><td class=\"num\">2</td><td class=\"num\">180</td><td class=\"num\">75.0 %</td>",
        "<td>0.1.0 (abc123-dirty)</td><td class=\"num\">1</td>",
        "<td>a</td><td>0.1.0 (abc123)</td><td>a.lab</td><td>AMD EPYC 7B13</td><td>sse4.1 ssse3</td><td class=\"num\">150</td><td class=\"num\">2 min 13 s</td>",
        "<td>none (scalar)</td>",
    ] {
        assert!(section.contains(want), "{want} not in:\n{section}");
    }
    assert!(html.find("id=\"provenance\"") < html.find("id=\"spec\""), "before the spec");

    let (md, _) = figures::report::markdown(&input, "figures").unwrap();
    let section = &md[md.find("## Provenance").unwrap()..md.find("## Spec").unwrap()];
    for want in [
        "| started | not recorded |",
        "| 0.1.0 (abc123) | 2 | 180 | 75.0 % |",
        "| a | 0.1.0 (abc123) | a.lab | AMD EPYC 7B13 | sse4.1 ssse3 | 150 | 2 min 13 s |",
        "| b | 0.1.0 (abc123-dirty) | b.lab | AMD EPYC 7B13 | none (scalar) | 60 | 1.5 s |",
    ] {
        assert!(section.contains(want), "{want} not in:\n{section}");
    }

    let old = sweep::Contributor { version: String::new(), build: String::new(), ..worker("old", "", &[], 5, 10) };
    let unrecorded = figures::report::ReportInput { contributors: vec![old], ..input.clone() };
    let html = figures::report::html(&unrecorded).unwrap();
    assert!(
        html.contains("<td>old</td><td>not recorded</td><td>old.lab</td><td>AMD EPYC 7B13</td><td>not recorded</td>"),
        "features an older database did not record are not 'none':\n{html}"
    );

    let none = figures::report::ReportInput { contributors: Vec::new(), ..input };
    assert!(figures::report::html(&none).unwrap().contains("<p>No results yet.</p>"));
}
