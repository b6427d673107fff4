//! Black-box tests of the `ksweep` binary: what a user types, what they see.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use tour::{verify, Board, Moves};

fn ksweep(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ksweep"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ksweep starts");
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    assert!(o.status.success(), "ksweep failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn tour_json_path_is_a_verified_tour() {
    let o = ksweep(&["tour", "--rule", "2,1", "--dims", "2", "--n", "8", "--start", "0,0", "--format", "json"], "");
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["success"], true);
    assert_eq!(v["attempts"], 1);
    assert_eq!(v["visited"], 64);
    let board = Board::regular(2, 8).unwrap();
    let path: Vec<u64> = v["path"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let xy: Vec<u64> = c.as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect();
            board.index_of(&xy).unwrap()
        })
        .collect();
    assert_eq!(path[0], 0, "the path starts at the start");
    verify(&board, &Moves::from_rule(&[2, 1], 2).unwrap(), &path).unwrap();
}

#[test]
fn tour_text_shows_the_numbered_board() {
    let o =
        ksweep(&["tour", "--rule", "2,1", "--shape", "5x5", "--start", "0 0", "--method", "w", "--format", "text"], "");
    let text = stdout(&o);
    assert!(text.contains("success   true"), "{text}");
    let rows: Vec<&str> = text.lines().rev().take(5).collect();
    let mut numbers: Vec<u32> = rows.iter().flat_map(|r| r.split_whitespace()).map(|n| n.parse().unwrap()).collect();
    numbers.sort_unstable();
    assert_eq!(numbers, (1..=25).collect::<Vec<_>>(), "every cell numbered once");
    assert!(rows.last().unwrap().trim_start().starts_with("1 "), "the start (0,0) is step 1: {text}");
}

#[test]
fn eval_keeps_input_order_and_is_the_same_for_any_thread_count() {
    let starts: String = (0..500).map(|i| format!("{} {}\n", (i * 7) % 9, (i * 5) % 9)).collect();
    let input = format!("# a comment\n\n{starts}");
    let run = |threads: &str| {
        let o = ksweep(
            &[
                "eval",
                "--rule",
                "2,1",
                "--dims",
                "2",
                "--n",
                "9",
                "--method",
                "w,aw+,wr",
                "--seed",
                "3",
                "--threads",
                threads,
            ],
            &input,
        );
        let lines: Vec<Value> = stdout(&o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        lines
    };
    let one = run("1");
    let two = run("2");
    assert_eq!(one.len(), 1500, "one line per start and method");
    let strip = |v: &[Value]| -> Vec<Value> {
        v.iter()
            .map(|l| {
                let mut l = l.clone();
                l.as_object_mut().unwrap().remove("micros");
                l
            })
            .collect()
    };
    assert_eq!(strip(&one), strip(&two));
    assert_eq!(one[3]["start"], serde_json::json!([7, 5]), "second start, first method");
    assert_eq!(one[3]["method"], "w");
    assert_eq!(one[4]["method"], "aw+");
    // 9x9 with a knight: odd cell count, so only even-sum starts can succeed.
    for l in &one {
        let s = l["start"].as_array().unwrap();
        let sum = s[0].as_u64().unwrap() + s[1].as_u64().unwrap();
        if sum % 2 == 1 {
            assert_eq!(l["success"], false, "{l}");
        }
    }
    assert!(one.iter().any(|l| l["success"] == true));
}

#[test]
fn eval_with_one_method_has_no_method_field() {
    let o = ksweep(&["eval", "--rule", "2,1", "--dims", "2", "--n", "8"], "0,0\n");
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert!(v.get("method").is_none(), "{v}");
    assert_eq!(v["start"], serde_json::json!([0, 0]));
}

/// Bad input exits non-zero with a message naming the field.
#[test]
fn bad_input_names_the_field() {
    let base = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = ["tour", "--start", "0,0"].iter().map(|s| s.to_string()).collect();
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let cases: &[(&[&str], &str)] = &[
        (&["--rule", "0,0", "--dims", "2", "--n", "8"], "rule"),
        (&["--rule", "2,1,1", "--dims", "2", "--n", "8"], "rule"),
        (&["--rule", "2,1", "--dims", "0", "--n", "8"], "dims"),
        (&["--rule", "2,1", "--shape", "8x0"], "shape"),
        (&["--rule", "2,1", "--dims", "3", "--n", "100000"], "max-cells"),
        (&["--rule", "2,1", "--dims", "2", "--n", "8", "--method", "warnsdorff"], "method"),
        (&["--moves", "2,1 2,x", "--dims", "2", "--n", "8"], "moves"),
        (&["--moves", "2,1 1,2 2,1", "--dims", "2", "--n", "8"], "moves: move 2 repeats move 0"),
        (&["--moves", "2,1 0,0", "--dims", "2", "--n", "8"], "moves: move 1 is all zeros"),
        (&["--rule", "x", "--dims", "2", "--n", "8"], "--rule"),
    ];
    for (extra, want) in cases {
        let o = ksweep(&base(extra).iter().map(String::as_str).collect::<Vec<_>>(), "");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{extra:?} should fail");
        assert!(err.contains(want), "{extra:?}: stderr {err:?} should name {want:?}");
    }
    let off = ksweep(&["tour", "--rule", "2,1", "--dims", "2", "--n", "8", "--start", "8,0"], "");
    assert!(String::from_utf8_lossy(&off.stderr).contains("start: coordinate 0 is 8, off the board"));
    let short = ksweep(&["tour", "--rule", "2,1", "--dims", "3", "--n", "8", "--start", "1,1"], "");
    assert!(String::from_utf8_lossy(&short.stderr).contains("start: has 2 coordinates, expected 3"));
    let bad_line = ksweep(&["eval", "--rule", "2,1", "--dims", "2", "--n", "8"], "0,0\n1,x\n");
    assert!(!bad_line.status.success());
    assert!(String::from_utf8_lossy(&bad_line.stderr).contains("stdin line 2: start"));
}

#[test]
fn exists_cites_the_theorem() {
    let o = ksweep(&["exists", "--rule", "2,1", "--shape", "3x4"], "");
    let text = stdout(&o);
    assert!(text.contains("open    exists"), "{text}");
    assert!(text.contains("closed  impossible: Schwenk 1991"), "{text}");
    let o = ksweep(&["exists", "--rule", "3,1", "--dims", "2", "--n", "8"], "");
    assert!(stdout(&o).contains("open    impossible: no move changes the colour"));
    // No theorem covers (4,3) on 16 x 16: the atlas gives its two proofs;
    // set aside, no cycle cover exists there.
    let o = ksweep(&["exists", "--rule", "4,3", "--dims", "2", "--n", "16"], "");
    assert!(stdout(&o).contains("closed  impossible: the atlas"), "{}", stdout(&o));
    let o = ksweep(&["exists", "--rule", "4,3", "--dims", "2", "--n", "16", "--no-atlas"], "");
    assert!(stdout(&o).contains("closed  impossible: no cover of the board by cycles"), "{}", stdout(&o));
    let o = ksweep(&["exists", "--rule", "4,3", "--dims", "2", "--n", "22", "--budget", "0", "--no-atlas"], "");
    assert!(
        stdout(&o).contains("closed  unknown: no theorem or argument settles it, and --budget 0"),
        "{}",
        stdout(&o)
    );
}

/// Where no theorem speaks, `exists` searches: a tour it writes out and
/// that checks move by move, or a refutation two routes agree on.
#[test]
fn exists_decides_with_a_tour_or_two_refutations() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tour.txt");
    let o = ksweep(&["exists", "--rule", "4,1", "--shape", "10x10", "--tour", file.to_str().unwrap()], "");
    let text = stdout(&o);
    assert!(text.contains("open    exists: solve found one from ("), "{text}");
    assert!(text.contains("closed  exists: solve found one from (") && text.contains("verify_closed"), "{text}");
    let cells: Vec<Vec<i64>> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(cells.len(), 100);
    let distinct: std::collections::HashSet<&Vec<i64>> = cells.iter().collect();
    assert_eq!(distinct.len(), 100, "every cell once");
    for (a, b) in cells.iter().zip(cells.iter().skip(1).chain(cells.first())) {
        let mut d = [(a[0] - b[0]).abs(), (a[1] - b[1]).abs()];
        d.sort_unstable();
        assert_eq!(d, [1, 4], "{a:?} -> {b:?} is a (4,1) move, the closing one too");
    }
    let svg = dir.path().join("tour.svg");
    ksweep(&["exists", "--rule", "4,1", "--shape", "10x10", "--tour", svg.to_str().unwrap()], "");
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));

    let o = ksweep(&["exists", "--rule", "4,3", "--shape", "20x20"], "");
    let text = stdout(&o);
    assert!(
        text.contains("open    impossible: the atlas (atlas/atlas.tsv, made by ksweep atlas): the search route (")
            && text.contains("and the SAT route ("),
        "{text}"
    );
    let o = ksweep(&["exists", "--rule", "4,3", "--shape", "20x20", "--no-atlas"], "");
    let text = stdout(&o);
    assert!(
        text.contains("open    impossible: the cover-pruned exact search (")
            && text.contains("and the SAT route (")
            && text.contains("from every one of the 400 cells"),
        "{text}"
    );
    let o = ksweep(&["exists", "--rule", "4,3", "--shape", "20x20", "--budget", "2d"], "");
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--budget") && err.contains("over the limit of 1d"), "{err}");
}

#[test]
fn bt_proves_no_tour_from_a_minority_colour_start_and_lines_say_so() {
    let o = ksweep(&["tour", "--rule", "2,1", "--shape", "5x5", "--start", "0,1", "--method", "bt"], "");
    let text = stdout(&o);
    assert!(text.contains("outcome   no-tour"), "{text}");
    let o = ksweep(
        &["tour", "--rule", "2,1", "--shape", "5x5", "--start", "0,1", "--method", "bt", "--format", "lines"],
        "",
    );
    assert_eq!(stdout(&o), "-1 -1\n");
    // From a corner bt finds a tour: 25 lines, 1-based, starting at "1 1".
    let o = ksweep(
        &["tour", "--rule", "2,1", "--shape", "5x5", "--start", "0,0", "--method", "bt", "--format", "lines"],
        "",
    );
    let text = stdout(&o);
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows.len(), 25);
    assert_eq!(rows[0], "1 1");
    // W from the same minority start fails, and the colour rule makes it a proof.
    let o = ksweep(&["eval", "--rule", "2,1", "--dims", "2", "--n", "5", "--method", "w"], "0,1\n");
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["outcome"], "no-tour");
    assert_eq!(v["success"], false);
}

#[test]
fn solve_finds_closed_tours_and_proves_none_where_no_cycle_cover_exists() {
    let o = ksweep(
        &["tour", "--rule", "4,3", "--dims", "2", "--n", "22", "--start", "3,5", "--method", "solve", "--closed"],
        "",
    );
    let text = stdout(&o);
    assert!(text.contains("outcome   tour"), "{text}");
    assert!(text.contains("closed"), "{text}");
    let o = ksweep(
        &[
            "tour", "--rule", "4,3", "--dims", "2", "--n", "16", "--start", "0,0", "--method", "solve", "--format",
            "json",
        ],
        "",
    );
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["outcome"], "no-tour", "{v}");
    // eval: (4,3) on 21 x 21, where W+ and AW+ find nothing, solve finds tours.
    let o = ksweep(&["eval", "--rule", "4,3", "--dims", "2", "--n", "21", "--method", "aw+,solve"], "0,0\n10,10\n");
    let rows: Vec<Value> = stdout(&o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let solved = rows.iter().filter(|r| r["method"] == "solve" && r["success"] == true).count();
    assert_eq!(solved, 2, "{rows:?}");
    // A walk cannot be asked for a closed tour.
    let o = ksweep(&["tour", "--rule", "2,1", "--dims", "2", "--n", "8", "--start", "0,0", "--closed"], "");
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--closed: method w only finds open tours"), "{}", stderr(&o));
}

#[test]
fn svg_is_written_to_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tour.svg");
    let path = file.to_str().unwrap();
    let o = ksweep(
        &["tour", "--rule", "2,1", "--dims", "2", "--n", "8", "--start", "0,0", "--format", "svg", "-o", path],
        "",
    );
    assert!(stdout(&o).is_empty(), "the picture goes to the file");
    let svg = std::fs::read_to_string(&file).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert_eq!(svg.matches("<circle").count(), 2, "start and end marked");
    assert!(svg.contains("<title>(2,1) 8x8 · W from (0,0) · tour</title>"), "the picture titles itself");
    let cube = stdout(&ksweep(
        &["tour", "--rule", "2,1", "--dims", "3", "--n", "4", "--start", "0,0,0", "--format", "svg"],
        "",
    ));
    assert!(cube.contains(">slice 3</text>"), "a 3D board as its slices");
    let o = ksweep(&["tour", "--rule", "2,1", "--dims", "4", "--n", "3", "--start", "0,0,0,0", "--format", "svg"], "");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--format svg: a tour picture draws 2D and 3D boards; this board is 4D"), "{err}");
}

/// Writes `dir/s.toml`: a sweep named "s", seed 1, of the knight on 2D
/// boards of sides `n`, with `starts` starts and `methods`; returns its path.
fn knight_spec(dir: &std::path::Path, starts: u32, methods: &[&str], n: &[u32]) -> std::path::PathBuf {
    let spec = dir.join("s.toml");
    let methods: Vec<String> = methods.iter().map(|m| format!("\"{m}\"")).collect();
    let n: Vec<String> = n.iter().map(u32::to_string).collect();
    let text = format!(
        "name = \"s\"\nseed = 1\nstarts = {starts}\nmethods = [{}]\n[[grid]]\nrule = [2, 1]\ndims = [2]\nn = [{}]\n",
        methods.join(", "),
        n.join(", ")
    );
    std::fs::write(&spec, text).unwrap();
    spec
}

/// `check --db` says what the database's existence facts prove of the
/// spec's boards that no theorem settles: here a tour `solve` found on
/// 10x10 (3,2) and every start of 12x12 refuted; 13x13 is unknown.
#[test]
fn check_with_a_database_counts_the_boards_its_facts_settle() {
    let dir = tempfile::tempdir().unwrap();
    let (db, proofs, spec) = (dir.path().join("f.db"), dir.path().join("f.toml"), dir.path().join("g.toml"));
    let grid = |n: &str| format!("[[grid]]\nrule = [3, 2]\ndims = [2]\nn = {n}\n");
    let proved = format!("name = \"f\"\nseed = 1\nstarts = 144\nmethods = [\"solve\"]\n{}", grid("[10, 12]"));
    std::fs::write(&proofs, proved).unwrap();
    std::fs::write(&spec, format!("name = \"g\"\nseed = 2\nstarts = 5\nmethods = [\"w\"]\n{}", grid("[10, 12, 13]")))
        .unwrap();
    let (db, spec) = (db.to_str().unwrap(), spec.to_str().unwrap());
    let line = |text: &str| text.lines().find(|l| l.starts_with("facts")).map(str::to_string);
    let before = stdout(&ksweep(&["check", spec, "--db", db], ""));
    assert_eq!(line(&before), None, "no database, no facts: {before}");
    let ran = ksweep(&["run", proofs.to_str().unwrap(), "--db", db], "");
    assert!(ran.status.success(), "{}", stderr(&ran));
    let text = stdout(&ksweep(&["check", spec, "--db", db], ""));
    let want = "facts           of 3 boards no theorem settles, stored results prove an open tour on 1 and none on 1 \
                (`ksweep exists --db` says how)";
    assert_eq!(line(&text).as_deref(), Some(want), "{text}");
}

#[test]
fn check_summarises_a_spec_and_refuses_a_bad_one() {
    let dir = tempfile::tempdir().unwrap();
    let spec = knight_spec(dir.path(), 5, &["w", "bt"], &[5, 6]);
    let text = stdout(&ksweep(&["check", spec.to_str().unwrap()], ""));
    assert!(text.contains("configurations  2 (0 impossible)"), "{text}");
    assert!(text.contains("tasks           20"), "{text}");
    // 3x3: the centre has no knight's move. It counts as impossible, and
    // its starts are planned as before.
    let small_dir = tempfile::tempdir().unwrap();
    let small = knight_spec(small_dir.path(), 5, &["w"], &[3, 5]);
    let small = stdout(&ksweep(&["check", small.to_str().unwrap()], ""));
    let note = "configurations  2 (1 impossible: no open tour can exist on them)\n                1 by a proof \
                (a theorem, the atlas or the board's moves; `ksweep exists` names it): their starts\n                \
                are run all the same";
    assert!(small.contains(note) && small.contains("tasks           10"), "{small}");
    assert!(!small.contains("colour rule"), "no board here is impossible by colour: {small}");
    // (1,1): no move changes colour, so nothing on 5x5 runs.
    std::fs::write(&spec, std::fs::read_to_string(&spec).unwrap().replace("rule = [2, 1]", "rule = [1, 1]")).unwrap();
    let colour = stdout(&ksweep(&["check", spec.to_str().unwrap()], ""));
    let note = "                2 by the colour rule (no move changes colour): none of their starts is run\n";
    assert!(colour.contains(note) && colour.contains("tasks           0"), "{colour}");
    // The engine's need on the CPU running this: 6x6 padded by 2 on each
    // side, 100 bytes shared, 100 a thread, and with SSE4.1 five more a
    // thread for the rule-W walks it advances six at a time.
    let six = tour::Configuration::new(tour::Board::new(&[6, 6]).unwrap(), tour::Moves::from_rule(&[2, 1], 2).unwrap());
    let need = six.unwrap().memory_need_for(&[tour::Method::W, tour::Method::Bt], false);
    assert!(need.shared == 100 && [100, 600].contains(&need.per_thread), "{need}");
    assert!(text.contains(&format!("memory          {need}, board 6x6")), "{text}");
    std::fs::write(&spec, "name = \"s\"\nseed = 1\nstarts = 0\nmethods = [\"w\"]\n").unwrap();
    let o = ksweep(&["check", spec.to_str().unwrap()], "");
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("starts: 0 is below the minimum 1"));
}

/// `ksweep run` then `ksweep table --db`: the bt column of a 3..6 sweep
/// shows 4x4's failures as the board's (no open tour, Conrad et al.) and
/// the JSON rows carry the claims.
#[test]
fn run_marks_boards_without_an_open_tour() {
    let dir = tempfile::tempdir().unwrap();
    let spec = knight_spec(dir.path(), 8, &["bt"], &[4, 5]);
    let db = dir.path().join("s.db");
    let (spec, db) = (spec.to_str().unwrap(), db.to_str().unwrap());
    stdout(&ksweep(&["run", spec, "--db", db, "--threads", "1"], ""));
    let text = stdout(&ksweep(&["table", "--db", db], ""));
    let cells: Vec<Vec<&str>> = text.lines().map(|l| l.split_whitespace().collect()).collect();
    assert!(cells.contains(&vec!["4", "0.0*"]), "{text}");
    assert!(cells.contains(&vec!["5", "100.0"]), "8 starts of 5x5, all on the majority colour: {text}");
    assert!(text.contains("* no open tour exists on this board"), "{text}");
    let rows: Value = serde_json::from_str(&stdout(&ksweep(&["table", "--db", db, "--format", "json"], ""))).unwrap();
    let claims: Vec<(&str, &str)> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["open_tour"].as_str().unwrap(), r["closed_tour"].as_str().unwrap()))
        .collect();
    assert_eq!(claims, [("impossible", "impossible"), ("exists", "impossible")]);
}

/// `ksweep run --format csv|json|latex` writes the data alone to stdout
/// (status to stderr), and takes `table`'s --metric, --rule and --by.
#[test]
fn run_with_a_data_format_writes_only_the_data_to_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let spec = knight_spec(dir.path(), 3, &["w", "aw"], &[5, 6]);
    let spec = spec.to_str().unwrap();
    let db = dir.path().join("s.db");
    let db = db.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", spec, "--db", db, "--threads", "1"];
        args.extend_from_slice(extra);
        ksweep(&args, "")
    };
    let o = run(&["--format", "csv"]);
    let csv = stdout(&o);
    assert_eq!(csv.lines().next(), Some("moves,dims,N,w,aw,sweep_state"), "{csv}");
    assert_eq!(csv.lines().count(), 3, "the header and one line per N: {csv}");
    assert!(csv.lines().skip(1).all(|l| l.ends_with(",done")), "a finished sweep says so: {csv}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("state           done"));
    let json: Value = serde_json::from_str(&stdout(&run(&["--format", "json"]))).unwrap();
    assert_eq!(json.as_array().unwrap().len(), 4);
    let latex = stdout(&run(&["--format", "latex", "--metric", "time", "--by", "dims", "--rule", "2,1"]));
    assert!(latex.starts_with("% ksweep tables") && latex.contains("Mean time per task"), "{latex}");
    assert!(!latex.contains("state"), "{latex}");
    // Text keeps the status above the tables.
    assert!(stdout(&run(&[])).starts_with("sweep "));
}

/// A small spec run to completion into a database file, for the offline
/// readers.
fn finished_db(dir: &std::path::Path) -> String {
    let spec = knight_spec(dir, 3, &["w"], &[5]);
    let db = dir.join("s.db");
    stdout(&ksweep(&["run", spec.to_str().unwrap(), "--db", db.to_str().unwrap(), "--threads", "1"], ""));
    db.to_str().unwrap().to_string()
}

#[test]
fn export_of_an_unknown_sweep_writes_nothing_to_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let db = finished_db(dir.path());
    let good = stdout(&ksweep(&["export", "--db", &db], ""));
    assert_eq!(good.lines().count(), 1 + 3, "the header and one row per task: {good}");
    let o = ksweep(&["export", "ffffffffffffffff", "--db", &db], "");
    assert!(!o.status.success());
    assert_eq!(String::from_utf8_lossy(&o.stdout), "", "no header before the id is known");
    assert!(!o.stderr.is_empty());
}

#[test]
fn a_refused_connection_names_each_cause_once() {
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}");
    let o = ksweep(&["status", "--coordinator", &url], "");
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&format!("cannot connect to {url}")), "{err}");
    let causes: Vec<&str> = err.trim().split(": ").collect();
    for pair in causes.windows(2) {
        assert_ne!(pair[0], pair[1], "a cause repeated: {err}");
    }
}

#[test]
fn logs_written_to_a_pipe_have_no_colour() {
    let dir = tempfile::tempdir().unwrap();
    let spec = knight_spec(dir.path(), 2, &["w"], &[5]);
    let db = dir.path().join("s.db");
    let o = Command::new(env!("CARGO_BIN_EXE_ksweep"))
        .args(["run", spec.to_str().unwrap(), "--db", db.to_str().unwrap(), "--threads", "1"])
        .env("RUST_LOG", "info")
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("INFO"), "RUST_LOG=info logs something: {err}");
    assert!(!err.contains('\x1b'), "no ANSI escapes in a pipe: {err:?}");
}

#[test]
fn starts_and_moves_may_begin_with_a_minus() {
    // A negative start reaches the start parser, which names the field.
    let o = ksweep(&["tour", "--rule", "2,1", "--dims", "2", "--n", "8", "--start", "-1,0"], "");
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--start") && err.contains("\"-1\" is not a non-negative integer"), "{err}");
    // A move list whose first move is negative is a move list.
    let knight = "-2,1 -1,2 1,2 2,1 2,-1 1,-2 -1,-2 -2,-1";
    let o = ksweep(&["tour", "--moves", knight, "--dims", "2", "--n", "8", "--start", "0,0", "--format", "json"], "");
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["moves"].as_str().unwrap().split_whitespace().next(), Some("-2,1"), "{v}");
}

#[test]
fn help_lists_every_method() {
    for command in ["tour", "eval"] {
        let help = stdout(&ksweep(&[command, "--help"], ""));
        for m in tour::Method::ALL {
            assert!(help.contains(m.name()), "ksweep {command} --help misses {m}: {help}");
        }
    }
}

/// `--version` names the commit as `status` names a worker's build, and a
/// method typed as a command gets a tip naming the commands that run one.
#[test]
fn version_names_the_commit_and_a_method_is_not_a_command() {
    let version = stdout(&ksweep(&["--version"], ""));
    let build = ksweep_proto::build::Build::current().to_string();
    assert_eq!(version, format!("ksweep {build}\n"));
    assert!(version.starts_with(&format!("ksweep {} (", env!("CARGO_PKG_VERSION"))), "{version}");
    let o = ksweep(&["solve"], "");
    assert_eq!(o.status.code(), Some(2), "clap's usage error");
    let err = stderr(&o);
    assert!(err.contains("unrecognized subcommand 'solve'"), "{err}");
    assert!(
        err.contains("tip: solve is a method, not a command: run it from one start with `ksweep tour --method solve"),
        "{err}"
    );
}

/// A worker given a URL it cannot use says so once, before it logs
/// anything or starts its threads.
#[test]
fn a_worker_refuses_a_bad_coordinator_url_at_once() {
    let o = ksweep(&["worker", "--coordinator", "BAD-URL"], "");
    assert!(!o.status.success());
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "one line, no logs before it: {err}");
    assert!(err.starts_with("error: coordinator: \"BAD-URL\" has no scheme: did you mean http://BAD-URL"), "{err}");
    assert_eq!(err.matches("has no scheme").count(), 1, "said once: {err}");
}

/// Two sweeps of one name: the list tells them apart by seed and
/// submission time, and `diff` says which spec fields differ, counts the
/// equal and differing pairs and, asked, lists only those that differ.
#[test]
fn sweeps_named_alike_are_told_apart_and_compared() {
    let dir = tempfile::tempdir().unwrap();
    // Every start of 5x5 (13 eligible) and 6x6 (36) in both: w, which has
    // no seed, gives the same flags in both.
    let spec = knight_spec(dir.path(), 40, &["w", "wr"], &[5, 6]);
    let other = dir.path().join("other.toml");
    let text = std::fs::read_to_string(&spec).unwrap();
    std::fs::write(&other, text.replace("seed = 1", "seed = 2").replace("starts = 40", "starts = 50")).unwrap();
    let db = dir.path().join("s.db");
    let db = db.to_str().unwrap();
    for spec in [&spec, &other] {
        stdout(&ksweep(&["run", spec.to_str().unwrap(), "--db", db, "--threads", "1"], ""));
    }
    let list = stdout(&ksweep(&["status", "--db", db], ""));
    let lines: Vec<Vec<&str>> = list.lines().map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(lines[0], ["ID", "NAME", "SEED", "SUBMITTED", "(UTC)", "STATE", "TASKS", "RATE"], "{list}");
    let seeds: Vec<&str> = lines[1..].iter().map(|l| l[2]).collect();
    assert_eq!(seeds, ["1", "2"], "{list}");
    // The submission time: a date and a time to the minute.
    assert!(lines[1][3].len() == 10 && lines[1][4].len() == 5 && lines[1][4].contains(':'), "{list}");
    let (a, b) = (lines[1][0], lines[2][0]);
    let diff = stdout(&ksweep(&["diff", a, b, "--db", db], ""));
    assert!(diff.contains("specs differ (A -> B):\n  seed: 1 -> 2\n  starts: 40 -> 50\n"), "{diff}");
    assert!(diff.contains("4 (configuration, method) pairs in both; 0 only in A, 0 only in B"), "{diff}");
    // Rows: MOVES BOARD METHOD ...; w's are equal.
    let methods = |text: &str| -> Vec<String> {
        let rows = text.lines().skip_while(|l| !l.starts_with("MOVES")).skip(1).take_while(|l| !l.is_empty());
        rows.filter_map(|l| l.split_whitespace().nth(2).map(str::to_string)).collect()
    };
    assert_eq!(methods(&diff), ["w", "wr", "w", "wr"], "{diff}");
    let differ = diff.lines().find(|l| l.starts_with("4 pairs: ")).expect("a summary line");
    let equal: usize = differ["4 pairs: ".len()..].split(' ').next().unwrap().parse().unwrap();
    assert!(equal >= 2, "w's pairs are equal: {diff}");
    let only = stdout(&ksweep(&["diff", a, b, "--db", db, "--only-differences"], ""));
    assert!(methods(&only).iter().all(|m| m == "wr"), "{only}");
    assert!(only.contains(&format!("the {equal} equal pairs are not listed (--only-differences)")), "{only}");
}

/// An interrupted `ksweep run` exits as shells expect of a process a signal
/// stopped: 128 + the signal's number.
#[cfg(unix)]
#[test]
fn an_interrupted_run_exits_128_plus_the_signal() {
    for (signal, code) in [("INT", 130), ("TERM", 143)] {
        let dir = tempfile::tempdir().unwrap();
        // Far more work than the test waits for.
        let spec = knight_spec(dir.path(), 1000, &["aw+"], &[300, 400, 500]);
        let db = dir.path().join("s.db");
        let child = Command::new(env!("CARGO_BIN_EXE_ksweep"))
            .args(["run", spec.to_str().unwrap(), "--db", db.to_str().unwrap(), "--threads", "1"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The database file appears after the signal handlers are in place.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !db.exists() {
            assert!(std::time::Instant::now() < deadline, "ksweep run never created its database");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let sent = Command::new("kill").args([&format!("-{signal}"), &child.id().to_string()]).status().unwrap();
        assert!(sent.success());
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "SIG{signal}: {err}");
        assert!(err.contains("run the same command again to resume"), "{err}");
    }
}

/// A sweep interrupted after its first results are stored: still running,
/// most tasks missing (a 5x5 board finishes at once; 300x300 takes a
/// minute, so 600x600 has not begun).
#[cfg(unix)]
fn unfinished_db(dir: &std::path::Path) -> String {
    let spec = knight_spec(dir, 1000, &["w", "aw+"], &[5, 6, 300, 600]);
    let db = dir.join("s.db");
    let db_arg = db.to_str().unwrap().to_string();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ksweep"))
        .args(["run", spec.to_str().unwrap(), "--db", &db_arg, "--threads", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        assert!(std::time::Instant::now() < deadline, "no results within the deadline");
        std::thread::sleep(std::time::Duration::from_millis(100));
        let o = ksweep(&["export", "--db", &db_arg], "");
        if o.status.success() && String::from_utf8_lossy(&o.stdout).lines().count() > 10 {
            break;
        }
    }
    let _ = Command::new("kill").args(["-INT", &child.id().to_string()]).status();
    let _ = child.wait();
    db_arg
}

#[cfg(unix)]
#[test]
fn an_unfinished_sweep_is_marked_in_every_table_export_plot_and_report() {
    let dir = tempfile::tempdir().unwrap();
    let db = unfinished_db(dir.path());
    let status = stdout(&ksweep(&["status", "--db", &db], ""));
    let line = status.lines().nth(1).unwrap();
    assert!(line.contains(" s ") && line.contains(" stopped "), "one line per sweep: {status}");
    let long = stdout(&ksweep(&["status", "s", "--db", &db], ""));
    assert!(long.contains("state           stopped"), "a sweep named by its name: {long}");

    for format in ["text", "md", "latex", "html"] {
        let out = stdout(&ksweep(&["table", "--db", &db, "--format", format], ""));
        assert!(out.contains("UNFINISHED sweep (stopped)"), "{format}: {out}");
    }
    let csv = stdout(&ksweep(&["table", "--db", &db, "--format", "csv"], ""));
    assert!(csv.lines().next().unwrap().ends_with(",sweep_state"), "{csv}");
    assert!(csv.lines().skip(1).all(|l| l.ends_with(",stopped")), "{csv}");
    let json: Vec<Value> =
        serde_json::from_str(&stdout(&ksweep(&["table", "--db", &db, "--format", "json"], ""))).unwrap();
    assert!(json.iter().all(|r| r["sweep_state"] == "stopped"));
    assert!(json.iter().any(|r| r["tasks"] == 0 && r["mean_micros"].is_null()), "empty cells are null, not 0");

    let o = ksweep(&["export", "--db", &db], "");
    let export = stdout(&o);
    assert!(export.lines().skip(1).all(|l| l.ends_with(",stopped")));
    assert!(String::from_utf8_lossy(&o.stderr).contains("warning: UNFINISHED sweep (stopped)"));
    let jsonl = stdout(&ksweep(&["export", "--db", &db, "--format", "jsonl"], ""));
    assert!(jsonl.lines().all(|l| serde_json::from_str::<Value>(l).unwrap()["sweep_state"] == "stopped"));

    let svg = stdout(&ksweep(&["plot", "--db", &db], ""));
    assert!(svg_texts(&svg).iter().any(|t| t.starts_with("UNFINISHED sweep (stopped)")));
    let map = stdout(&ksweep(&["plot", "--db", &db, "--kind", "failures", "--n", "6"], ""));
    assert!(svg_texts(&map).iter().any(|t| t.starts_with("UNFINISHED sweep (stopped)")));
    let report = dir.path().join("r.html");
    stdout(&ksweep(&["report", "--db", &db, "-o", report.to_str().unwrap()], ""));
    let html = std::fs::read_to_string(report).unwrap();
    assert!(html.contains("<p class=\"warning\">UNFINISHED sweep (stopped)"), "{html}");
}

/// The trimmed text of every `<text>` of an SVG, which must parse as XML.
fn svg_texts(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).expect("the SVG parses");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(|t| t.trim().to_string()))
        .collect()
}

/// A finished sweep over several N, two methods that differ.
fn sweep_db(dir: &std::path::Path) -> String {
    let spec = knight_spec(dir, 12, &["w", "w+", "aw"], &[5, 6, 7, 8]);
    let db = dir.join("s.db");
    stdout(&ksweep(&["run", spec.to_str().unwrap(), "--db", db.to_str().unwrap(), "--threads", "2"], ""));
    db.to_str().unwrap().to_string()
}

#[test]
fn plots_are_svg_with_their_series_or_png_of_their_size() {
    let dir = tempfile::tempdir().unwrap();
    let db = sweep_db(dir.path());
    let svg = stdout(&ksweep(&["plot", "--db", &db], ""));
    let texts = svg_texts(&svg);
    for label in ["W", "W+", "AW", "accuracy (%)", "N (board side)", "(2,1) 2D"] {
        assert!(texts.iter().any(|t| t == label), "no {label:?} in {texts:?}");
    }
    let time = stdout(&ksweep(&["plot", "--db", &db, "--kind", "time"], ""));
    assert!(svg_texts(&time).iter().any(|t| t == "mean time per task (log)"));
    let attempts = stdout(&ksweep(&["plot", "--db", &db, "--kind", "attempts"], ""));
    let texts = svg_texts(&attempts);
    assert!(texts.iter().any(|t| t == "AW") && !texts.iter().any(|t| t == "W+"), "only retrying methods: {texts:?}");

    let png = dir.path().join("a.png");
    let o = ksweep(&["plot", "--db", &db, "--kind", "failures", "--n", "7", "-o", png.to_str().unwrap()], "");
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "{err}");
    let said: Vec<u32> = err
        .split_once("wrote ")
        .and_then(|(_, rest)| rest.split_once(" (").map(|(_, size)| size.trim_end().trim_end_matches(')').to_string()))
        .unwrap()
        .split('x')
        .map(|v| v.parse().unwrap())
        .collect();
    let mut reader = png::Decoder::new(std::fs::File::open(&png).unwrap()).read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut pixels).expect("the PNG decodes");
    assert_eq!(vec![info.width, info.height], said);

    // Every square, run now: a 7x7 board has 49 starts on the map.
    let all = stdout(&ksweep(&["plot", "--db", &db, "--kind", "failures", "--n", "7", "--all-starts"], ""));
    assert!(svg_texts(&all).iter().any(|t| t == "49 starts"), "{:?}", svg_texts(&all));

    let o = ksweep(&["plot", "--db", &db, "-o", dir.path().join("a.gif").to_str().unwrap()], "");
    assert!(String::from_utf8_lossy(&o.stderr).contains("-o: cannot tell the format from .gif"));
    let o = ksweep(&["plot", "--db", &db, "--kind", "failures", "--n", "9"], "");
    assert!(String::from_utf8_lossy(&o.stderr).contains("no 2D or 3D board of the sweep matches --rule/--dims/--n"));
}

#[test]
fn the_report_has_every_section_in_html_and_markdown() {
    let dir = tempfile::tempdir().unwrap();
    let db = sweep_db(dir.path());
    let html_path = dir.path().join("report.html");
    stdout(&ksweep(&["report", "--db", &db, "-o", html_path.to_str().unwrap()], ""));
    let html = std::fs::read_to_string(&html_path).unwrap();
    for id in ["summary", "accuracy", "time", "walks-per-task", "failure-maps", "spec"] {
        assert!(html.contains(&format!("<section id=\"{id}\">")), "no section {id}");
    }
    assert_eq!(html.matches("<svg").count(), 4, "accuracy, time, walks, one map (one rule, one D)");
    assert!(html.contains("<caption>accuracy (%) — moves 2,1, 2D</caption>"));
    assert!(!html.contains("<script") && !html.contains("src=\"http"), "self-contained");
    assert!(!html.contains("UNFINISHED"));

    let md_path = dir.path().join("report.md");
    stdout(&ksweep(&["report", "--db", &db, "-o", md_path.to_str().unwrap()], ""));
    let md = std::fs::read_to_string(&md_path).unwrap();
    for heading in ["## Summary", "## Accuracy", "## Time", "## Walks per task", "## Failure maps", "## Spec"] {
        assert!(md.contains(heading), "no {heading}");
    }
    for file in ["accuracy.svg", "time.svg", "attempts.svg", "failures-1.svg"] {
        assert!(md.contains(&format!("(report-figures/{file})")), "no link to {file}");
        let svg = std::fs::read_to_string(dir.path().join("report-figures").join(file)).unwrap();
        svg_texts(&svg);
    }
}

#[test]
fn parquet_export_round_trips_to_the_csv_export() {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{UInt32Type, UInt64Type};
    use arrow_array::Array;
    let dir = tempfile::tempdir().unwrap();
    let db = sweep_db(dir.path());
    let csv = stdout(&ksweep(&["export", "--db", &db], ""));
    let path = dir.path().join("r.parquet");
    let o = ksweep(&["export", "--db", &db, "--format", "parquet"], "");
    assert!(String::from_utf8_lossy(&o.stderr).contains("--format parquet: a Parquet file needs -o FILE"));
    stdout(&ksweep(&["export", "--db", &db, "--format", "parquet", "-o", path.to_str().unwrap()], ""));

    let file = std::fs::File::open(&path).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file).unwrap().build().unwrap();
    let mut lines = Vec::new();
    let mut moves_written = 0;
    for batch in reader {
        let b = batch.unwrap();
        let schema = b.schema();
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names.join(","), csv.lines().next().unwrap(), "the same columns, in order");
        let text = |i: usize, row: usize| b.column(i).as_string::<i32>().value(row).to_string();
        let u32s = |i: usize, row: usize| b.column(i).as_primitive::<UInt32Type>().value(row).to_string();
        let list = |i: usize, row: usize| {
            let values = b.column(i).as_list::<i32>().value(row);
            let values: Vec<String> = values.as_primitive::<UInt32Type>().values().iter().map(u32::to_string).collect();
            format!("\"[{}]\"", values.join(","))
        };
        for row in 0..b.num_rows() {
            let n = b.column(4).as_primitive::<UInt32Type>();
            let moves = b.column(2).as_string::<i32>();
            let mut fields = vec![
                text(0, row),
                format!("\"{}\"", text(1, row)),
                // The move list, once per configuration: null on its other rows.
                if moves.is_null(row) { String::new() } else { format!("\"{}\"", moves.value(row)) },
                u32s(3, row),
                if n.is_null(row) { String::new() } else { n.value(row).to_string() },
                list(5, row),
                text(6, row),
                list(7, row),
                b.column(8).as_boolean().value(row).to_string(),
                text(9, row),
                u32s(10, row),
                b.column(11).as_primitive::<UInt64Type>().value(row).to_string(),
                b.column(12).as_primitive::<UInt64Type>().value(row).to_string(),
            ];
            fields.extend((13..20).map(|i| text(i, row)));
            moves_written += usize::from(!moves.is_null(row));
            lines.push(fields.join(","));
        }
    }
    let want: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(lines, want);
    assert_eq!(lines.len(), 4 * 12 * 3, "4 boards x 12 starts x 3 methods");
    assert_eq!(moves_written, 4, "the move list once per configuration");
}

#[test]
fn bench_names_the_authors_program_it_cannot_find_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let o = ksweep(&["bench", "--quick", "--authors", dir.path().to_str().unwrap()], "");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("w+++-2d") && err.contains("data/(3,2)/W+++/2D.cpp"), "{err}");
    assert!(o.stdout.is_empty(), "nothing measured first: {}", String::from_utf8_lossy(&o.stdout));
}

#[test]
fn bench_times_the_authors_programs_on_the_same_starts() {
    use std::os::unix::fs::PermissionsExt;
    // Stand-ins for the authors' programs: each reports a tour in 1,000 µs
    // in their format (every start of the quick rows has one).
    let dir = tempfile::tempdir().unwrap();
    let script = "#!/bin/sh\nn=$1\nshift\nprintf 'Success: 1 Fail: 0\\nStart position: %s - Success Execution time: 1 ms (1000 \\316\\274s)\\n' \"$*\" > \"Dimension=$#_N=$n.txt\"\nexit 1\n";
    for name in ["w+++-2d", "accu-more-3d", "221-500-3d", "dd-3d"] {
        let path = dir.path().join(name);
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let o = ksweep(&["bench", "--quick", "--authors", dir.path().to_str().unwrap()], "");
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{out}\n{err}");
    let rows: Vec<&str> =
        out.lines().filter(|l| ["aw+ (3,2)", "w (", "w+ ("].iter().any(|p| l.starts_with(p))).collect();
    assert_eq!(rows.len(), 4, "{out}");
    for row in rows {
        // engine ms, baseline ms, then the stand-ins' 1.000 ms a start.
        let authors_ms = row.split_whitespace().skip_while(|w| !w.ends_with("starts")).nth(3);
        assert_eq!(authors_ms, Some("1.000"), "{row}");
        assert!(!row.contains("DISAGREE"), "{row}");
    }
}

/// `merge` checks every result of an input as a coordinator checks a
/// worker's: one edited to claim a no-tour proof W cannot give is refused,
/// naming the input and the row, and -o is not written. The same file
/// named twice (here through a symlink) is refused, naming both.
#[test]
fn merge_refuses_forged_results_and_the_same_file_twice() {
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let (good, other) = (finished_db(dir.path()), finished_db(&other));
    let forged = dir.path().join("forged.db");
    std::fs::copy(&good, &forged).unwrap();
    let conn = rusqlite::Connection::open(&forged).unwrap();
    let (id, cell): (String, i64) = conn
        .query_row(
            "SELECT s.id, t.start_cell FROM sweep_tasks st JOIN sweeps s ON s.key = st.sweep
             JOIN tasks t ON t.id = st.task ORDER BY st.start_index LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    conn.execute("UPDATE tasks SET success = 0, outcome = 2 WHERE start_cell = ?1", [cell]).unwrap();
    drop(conn);
    let output = dir.path().join("all.db");
    let o = ksweep(&["merge", forged.to_str().unwrap(), &other, "-o", output.to_str().unwrap()], "");
    let err = stderr(&o);
    assert!(!o.status.success(), "{err}");
    for part in ["forged.db", "refused", &format!("sweep {id} (s)"), "5x5 rule 2,1", "`w v1`"] {
        assert!(err.contains(part), "{part:?} is not in {err}");
    }
    assert!(err.contains(&format!("start cell {cell}")) && err.contains("is not a proof"), "{err}");
    let left: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(!output.exists() && left.iter().all(|f| !f.contains("merging")), "nothing written: {left:?}");

    let link = dir.path().join("link.db");
    std::os::unix::fs::symlink(&good, &link).unwrap();
    let o = ksweep(&["merge", &good, &other, link.to_str().unwrap(), "-o", output.to_str().unwrap()], "");
    let err = stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains(&good) && err.contains("link.db") && err.contains("the same file"), "{err}");
    assert!(!output.exists());
}

/// A disk that fills while `db upgrade` copies the file leaves no backup
/// (no empty or partial `.bak` to take for one) and the file not upgraded;
/// the next upgrade writes the backup under its own name.
#[cfg(unix)]
#[test]
fn a_full_disk_during_the_backup_leaves_no_partial_backup() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/schema");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    std::fs::copy(fixtures.join("v4.db"), &db).unwrap();
    let backups = || -> Vec<String> {
        let mut found: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|f| f.contains("schema-v"))
            .collect();
        found.sort();
        found
    };
    // Files may grow to 80 KiB (160 blocks of 512 bytes): the 120 KiB copy
    // fails part way, as on a full disk (SIGXFSZ ignored, so writes fail
    // with EFBIG).
    let o = Command::new("sh")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 160; exec \"$0\" db upgrade --db \"$1\"")
        .arg(env!("CARGO_BIN_EXE_ksweep"))
        .arg(&db)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("f.db.schema-v4.bak") && err.contains("not upgraded"), "{err}");
    assert_eq!(backups(), Vec::<String>::new(), "no partial backup left");
    let version: i64 =
        rusqlite::Connection::open(&db).unwrap().query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(version, 4, "not upgraded");
    let text = stdout(&ksweep(&["db", "upgrade", "--db", db.to_str().unwrap()], ""));
    assert!(text.contains("f.db.schema-v4.bak"), "{text}");
    assert_eq!(backups(), ["f.db.schema-v4.bak"]);
}

/// An upgrade that committed is reported done even when a later write
/// fails (here recording the writer, refused by a trigger as a full disk
/// would): the failure is said as a warning, and the exit is 0.
#[test]
fn an_upgrade_that_committed_is_not_reported_as_failed() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/schema");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    std::fs::copy(fixtures.join("v3.db"), &db).unwrap();
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER full_insert BEFORE INSERT ON about BEGIN SELECT RAISE(FAIL, 'disk full, says a test'); END;
             CREATE TRIGGER full_update BEFORE UPDATE ON about BEGIN SELECT RAISE(FAIL, 'disk full, says a test'); END;",
        )
        .unwrap();
    let text = stdout(&ksweep(&["db", "upgrade", "--db", db.to_str().unwrap()], ""));
    assert!(text.contains("from schema version 3 to"), "{text}");
    assert!(
        text.contains("warning: the upgrade is done, but recording") && text.contains("disk full, says a test"),
        "{text}"
    );
    let version: i64 =
        rusqlite::Connection::open(&db).unwrap().query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert!(version > 3, "upgraded: version {version}");
}

/// `check --db` (and `exists --db`) reads a database an older release
/// wrote without changing it: upgraded in memory, the file byte for byte
/// as it was, no backup.
#[test]
fn check_with_an_older_database_leaves_the_file_as_it_was() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/schema");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("v4.db");
    std::fs::copy(fixtures.join("v4.db"), &db).unwrap();
    let before = std::fs::read(&db).unwrap();
    let spec = fixtures.join("spec-v4.toml");
    let text = stdout(&ksweep(&["check", spec.to_str().unwrap(), "--db", db.to_str().unwrap()], ""));
    assert!(text.contains("stored          as sweep"), "{text}");
    assert!(std::fs::read(&db).unwrap() == before, "the file is unchanged");
    // Version 5's facts, derived in memory: `solve` refuted every start.
    let text = stdout(&ksweep(
        &[
            "exists",
            "--rule",
            "3,2",
            "--dims",
            "2",
            "--n",
            "6",
            "--budget",
            "0",
            "--no-atlas",
            "--db",
            db.to_str().unwrap(),
        ],
        "",
    ));
    assert!(text.contains("open    impossible") && text.contains("solve"), "{text}");
    assert!(std::fs::read(&db).unwrap() == before, "the file is unchanged");
    let left: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(left.iter().all(|f| !f.contains(".bak")), "no backup: {left:?}");
}

/// `db info` runs SQLite's quick check: a whole file says so, a damaged
/// one gets a warning and a failing exit.
#[test]
fn db_info_warns_of_a_damaged_file() {
    let dir = tempfile::tempdir().unwrap();
    let spec = knight_spec(dir.path(), 400, &["w", "aw"], &[20, 21, 22]);
    let db = dir.path().join("s.db");
    let db_arg = db.to_str().unwrap();
    stdout(&ksweep(&["run", spec.to_str().unwrap(), "--db", db_arg, "--threads", "1"], ""));
    let whole = stdout(&ksweep(&["db", "info", "--db", db_arg], ""));
    assert!(whole.contains("integrity       ok"), "{whole}");
    // Scribble over pages of results, not the schema's first pages.
    let mut bytes = std::fs::read(&db).unwrap();
    let page = 4096;
    assert!(bytes.len() > 8 * page, "{} bytes", bytes.len());
    let end = bytes.len() - page;
    bytes[end - 2 * page..end].fill(0x5a);
    std::fs::write(&db, bytes).unwrap();
    let o = ksweep(&["db", "info", "--db", db_arg], "");
    let (out, err) = (String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(!o.status.success(), "{out}");
    assert!(out.contains("schema version  ") && out.contains("integrity       DAMAGED"), "{out}");
    assert!(err.contains("s.db") && err.contains("damaged") && err.contains(".recover"), "{err}");
}

/// A small sweep with adaptive precision, end to end: `check` gives the
/// range of work, `run` stops cells at their looks and marks those the cap
/// stopped, and merged with a database of another sweep over some of the
/// same boards it gives the same table, cell for cell.
#[test]
fn adaptive_precision_from_check_to_a_merged_table() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("adaptive.toml");
    let text = "name = \"adaptive\"\nseed = 3\nstarts = 60\nprecision = 0.08\nmin_starts = 12\n\
                methods = [\"w\", \"aw+\"]\n[[grid]]\nrule = [3, 2]\ndims = [2]\nn_range = { from = 10, to = 18 }\n";
    std::fs::write(&spec, text).unwrap();
    let spec = spec.to_str().unwrap();
    let check = stdout(&ksweep(&["check", spec], ""));
    assert!(check.contains("until each cell's 95 % interval is within +/-8.0 points, at most 60"), "{check}");
    assert!(check.contains("tasks           216 to 1080"), "{check}");
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let whole = stdout(&ksweep(&["run", spec, "--db", &path("whole.db"), "--intervals"], ""));
    assert!(whole.contains("Starts per cell adapt to a half-width of 8.0 points"), "{whole}");
    assert!(whole.contains('\u{2021}'), "some cell stops at the cap: {whole}");
    // Merged after a database whose sweep shares the boards up to 14 (its
    // results come first): the table is the one run alone.
    let half = text.replace("to = 18", "to = 14");
    let half_spec = dir.path().join("half.toml");
    std::fs::write(&half_spec, half.replace("name = \"adaptive\"", "name = \"half\"")).unwrap();
    stdout(&ksweep(&["run", half_spec.to_str().unwrap(), "--db", &path("a.db")], ""));
    stdout(&ksweep(&["run", spec, "--db", &path("b.db")], ""));
    stdout(&ksweep(&["merge", &path("a.db"), &path("b.db"), "-o", &path("m.db")], ""));
    let merged = stdout(&ksweep(&["table", "adaptive", "--db", &path("m.db"), "--intervals"], ""));
    let whole_table = stdout(&ksweep(&["table", "adaptive", "--db", &path("whole.db"), "--intervals"], ""));
    let table = |t: &str| {
        t.lines()
            .take_while(|l| !l.starts_with("results computed by"))
            .collect::<Vec<_>>()
            .join("\n")
            .trim()
            .to_string()
    };
    assert!(merged.contains("results computed by half"), "the merge took the other sweep's results: {merged}");
    assert_eq!(table(&merged), table(&whole_table));
}

#[test]
fn a_simd_cap_is_checked_before_any_walk() {
    let tour = |cap: &str| {
        Command::new(env!("CARGO_BIN_EXE_ksweep"))
            .args(["tour", "--rule", "2,1", "--dims", "3", "--n", "6", "--start", "0,0,0", "--format", "json"])
            .env("KSWEEP_SIMD", cap)
            .env_remove("KSWEEP_NO_SIMD")
            .output()
            .unwrap()
    };
    let o = tour("avx3");
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim(), "error: KSWEEP_SIMD=\"avx3\": not a level (one of scalar, sse4.1, avx2, avx512)");
    // Every level runs, and walks the same cells.
    let outputs: Vec<Value> = ["scalar", "sse4.1", "avx2", "avx512", ""]
        .iter()
        .map(|cap| {
            let o = tour(cap);
            assert!(o.status.success(), "{cap}: {}", String::from_utf8_lossy(&o.stderr));
            let mut v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
            v.as_object_mut().unwrap().retain(|k, _| k != "micros" && k != "millis" && k != "seconds");
            v
        })
        .collect();
    assert!(outputs.windows(2).all(|w| w[0] == w[1]), "{outputs:?}");
}
