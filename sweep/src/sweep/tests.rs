use super::*;

const SPEC: &str = r#"
        name = "t"
        seed = 2025
        starts = 20
        methods = ["w", "aw+"]

        [[grid]]
        rule = [2, 1]
        dims = [3, 2]
        n = [6, 5]
        n_range = { from = 5, to = 9, step = 2 }
        shapes = [[6, 5], [5, 5]]

        [[grid]]
        rule = [2, 1]
        dims = [2]
        n = [5, 8]
    "#;

fn labels(sweep: &Sweep) -> Vec<String> {
    sweep.configurations().iter().map(|c| format!("{}:{}:{}", c.grid, c.moves_label(), c.shape_label())).collect()
}

#[test]
fn configurations_in_grid_dims_n_order_without_repeats() {
    let sweep = Sweep::parse(SPEC).unwrap();
    assert_eq!(
        labels(&sweep),
        [
            "0:2,1:5x5x5",
            "0:2,1:6x6x6",
            "0:2,1:7x7x7",
            "0:2,1:9x9x9",
            "0:2,1:5x5",
            "0:2,1:6x6",
            "0:2,1:7x7",
            "0:2,1:9x9",
            "0:2,1:6x5", // shapes[1] = 5x5 repeats the regular 5x5
            "1:2,1:8x8", // grid 1's 5x5 repeats grid 0's
        ]
    );
    for (i, c) in sweep.configurations().iter().enumerate() {
        assert_eq!(c.index as usize, i);
    }
    // A rule written differently is another configuration (other seeds).
    let other = format!("{SPEC}\n[[grid]]\nrule = [1, 2]\ndims = [2]\nn = [5]");
    let sweep = Sweep::parse(&other).unwrap();
    assert_eq!(labels(&sweep).last().unwrap(), "2:1,2:5x5");
}

#[test]
fn entries_agree_with_the_engine() {
    let sweep = Sweep::parse(SPEC).unwrap();
    for c in sweep.configurations() {
        let config = c.configuration();
        assert_eq!(config.board().sides(), c.sides.as_slice());
        assert_eq!(c.moves_label(), config.moves().describe());
        assert_eq!(c.eligibility(), config.eligibility());
        assert_eq!(c.eligible_count(), config.eligible_count());
        assert_eq!(c.cells(), config.board().cells());
        assert_eq!(c.move_count() as usize, config.moves().len());
        assert_eq!(c.cost_per_task(), (c.cells() * config.moves().len() as u64) as f64);
        assert_eq!(c.n().is_some(), config.board().is_regular());
        assert_eq!(c.existence(), tour::exists::for_tables(config.board(), config.moves()));
    }
    let list = MoveSpec::List(vec![vec![2, 1], vec![-1, 2]].into());
    assert_eq!(list.label(), "2,1 -1,2");
    assert_eq!(list.label(), list.moves(2).unwrap().describe());
}

#[test]
fn total_tasks_is_min_of_eligible_and_s_times_methods() {
    let sweep = Sweep::parse(SPEC).unwrap();
    // 5x5x5: 63 eligible, 7x7x7 and 9x9x9 too: S = 20 everywhere but
    // 5x5 (13 eligible starts: odd board, even-sum cells only).
    let per_method: u64 = sweep.configurations().iter().map(|c| if c.shape_label() == "5x5" { 13 } else { 20 }).sum();
    assert_eq!(sweep.total_tasks(), per_method * 2);
    assert_eq!(sweep.configurations()[4].start_count(20), 13);
}

#[test]
fn impossible_configurations_count_zero() {
    let text = r#"
            name = "even"
            seed = 1
            methods = ["w", "w+", "aw"]
            [[grid]]
            rule = [3, 1]
            dims = [2]
            n_range = { from = 1, to = 6 }
        "#;
    let sweep = Sweep::parse(text).unwrap();
    let eligibility: Vec<Eligibility> = sweep.configurations().iter().map(|c| c.eligibility()).collect();
    assert_eq!(eligibility[0], Eligibility::All, "1x1: one cell, a trivial tour");
    assert!(eligibility[1..].iter().all(|&e| e == Eligibility::Impossible));
    assert_eq!(sweep.configurations()[3].start_count(100), 0);
    assert_eq!(sweep.total_tasks(), 3, "only the 1x1 board runs");
}

#[test]
fn id_ignores_layout_comments_key_order_and_limits() {
    let a = Sweep::parse(SPEC).unwrap();
    assert_eq!(a.id().len(), 16);
    assert!(a.id().chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
    let reordered = r#"
            # the same sweep, written differently
            methods=["w","AW+"]
            starts=20
            seed=2025
            name="t"
            [limits]
            max_tasks = 5000
            [[grid]]
            shapes=[[6,5],[5,5]]
            n_range={step=2,to=9,from=5}
            n=[5,6,6]   # repeats are harmless
            dims=[3,2]
            rule=[2,1]
            [[grid]]
            n=[8,5]
            dims=[2]
            rule=[2,1]
        "#;
    let b = Sweep::parse(reordered).unwrap();
    assert_eq!(a.id(), b.id());
    assert_eq!(a.id(), Sweep::parse(SPEC).unwrap().id(), "deterministic");
}

#[test]
fn id_changes_with_anything_that_changes_results() {
    let base = Sweep::parse(SPEC).unwrap().id();
    let variants = [
        ("seed = 2025", "seed = 2026"),
        ("starts = 20", "starts = 21"),
        (r#"["w", "aw+"]"#, r#"["w", "aw"]"#),
        (r#"["w", "aw+"]"#, r#"["aw+", "w"]"#),
        (r#"name = "t""#, r#"name = "u""#),
        ("dims = [3, 2]", "dims = [2, 3]"),
        ("n = [6, 5]", "n = [6, 5, 11]"),
        ("rule = [2, 1]", "rule = [1, 2]"),
        ("shapes = [[6, 5], [5, 5]]", "shapes = [[5, 6], [5, 5]]"),
        ("rule = [2, 1]\n        dims = [3, 2]", "moves = [[2, 1], [1, 2], [-2, -1], [-1, -2]]\n        dims = [2]"),
    ];
    for (from, to) in variants {
        let text = SPEC.replacen(from, to, 1);
        assert_ne!(text, SPEC, "{from:?} not found");
        let id = Sweep::parse(&text).unwrap().id();
        assert_ne!(id, base, "{from:?} -> {to:?} kept the id");
    }
}

#[test]
fn canonical_toml_round_trips() {
    let sweep = Sweep::parse(SPEC).unwrap();
    let canonical = sweep.canonical_toml();
    let again = Sweep::parse(&canonical).unwrap();
    assert_eq!(again.id(), sweep.id());
    assert_eq!(again.canonical_toml(), canonical, "canonical form is a fixed point");
    assert_eq!(again.spec(), &sweep.spec().canonical());
    assert!(canonical.contains("starts = 20"), "{canonical}");
    assert!(canonical.contains("max_configurations = 1000000"), "defaults written out");
    assert!(canonical.contains("n = [5, 6]"), "N sorted: {canonical}");
    // Lists read the seed off the stored text without parsing it all.
    assert_eq!(crate::SweepSpec::seed_of(&canonical), Some(sweep.seed()));
    assert_eq!(crate::SweepSpec::seed_of("name = \"x\"\n[limits]\nseed = 3\n"), None, "a table's key is not the seed");
    let list = r#"
            name = "list"
            seed = 3
            methods = ["mw"]
            [[grid]]
            moves = [[1, 2], [-2, 1], [2, -1]]
            n = [4]
        "#;
    let sweep = Sweep::parse(list).unwrap();
    assert_eq!(Sweep::parse(&sweep.canonical_toml()).unwrap().id(), sweep.id());
}

#[test]
fn engine_errors_are_prefixed_with_the_grid() {
    let base = format!("{SPEC}\n[limits]\nmax_cells = 1000");
    let cases = [
        ("rule = [2, 1]", "rule = [0, 0]", "grid[0].rule: every entry is 0; at least one must be non-zero"),
        ("rule = [2, 1]", "rule = [2, 1, 1, 1]", "grid[0].rule: has 4 entries but the board has only 3 dims"),
        (
            "n = [6, 5]",
            "n = [6, 5, 11]",
            "grid[0].n: board 11x11x11 has 1331 cells, over the limit limits.max_cells = 1000",
        ),
        ("[[6, 5], [5, 5]]", "[[6, 5], [5, 201]]", "grid[0].shapes[1]: board 5x201 has 1005 cells"),
        (
            "[[6, 5], [5, 5]]",
            "[[6, 0]]",
            "grid[0].shape: side 1 is 0; every side must be at least 1 (board 6x0 in shapes[0])",
        ),
        (
            "rule = [2, 1]\n        dims = [2]",
            "moves = [[2, 1], [0, 0]]\n        dims = [2]",
            "grid[1].moves: move 1 is all zeros",
        ),
        ("rule = [2, 1]\n        dims = [2]", "moves = [[2, 1], [2, 1]]", "grid[1].moves: move 1 repeats move 0"),
        (
            "rule = [2, 1]\n        dims = [2]",
            "moves = [[2, 1], [1, 2, 0]]",
            "grid[1].moves: move 1 has 3 components, expected 2",
        ),
    ];
    for (from, to, expected) in cases {
        let text = base.replacen(from, to, 1);
        assert_ne!(text, base, "{from:?} not found");
        let e = Sweep::parse(&text).unwrap_err().to_string();
        assert!(e.starts_with(expected), "{e:?}\n  does not start with {expected:?}");
    }
    let padded = "name = \"p\"\nseed = 1\nmethods = [\"w\"]\n[[grid]]\nrule = [2, 1]\ndims = [32]\nn = [2]";
    let e = Sweep::parse(padded).unwrap_err();
    assert_eq!(e.path(), "grid[0].shape");
    assert!(e.to_string().contains("padded layout"), "{e}");
}

const EXPLICIT: &str = r#"
        name = "explicit"
        seed = 1
        starts = 2
        methods = ["w", "aw"]
        [[grid]]
        rule = [2, 1]
        dims = [2]
        n = [5, 7]
        starts = [[4, 4], [0, 0], [1, 3]]
    "#;

#[test]
fn explicit_starts_replace_the_sampled_ones() {
    let sweep = Sweep::parse(EXPLICIT).unwrap();
    let planner = crate::Planner::new(&sweep);
    for c in sweep.configurations() {
        assert_eq!(c.start_count(2), 3, "S does not cap an explicit list");
        let side = u64::from(c.sides[0]);
        assert_eq!(*planner.starts(c.index), vec![4 * side + 4, 0, side + 3], "in the order given");
    }
    assert_eq!(sweep.total_tasks(), 2 * 3 * 2);
    // The id covers the starts and their order; the canonical TOML keeps them.
    let other = Sweep::parse(&EXPLICIT.replace("[1, 3]]", "[3, 1]]")).unwrap();
    let reordered = Sweep::parse(&EXPLICIT.replace("[[4, 4], [0, 0], [1, 3]]", "[[0, 0], [4, 4], [1, 3]]")).unwrap();
    let sampled = Sweep::parse(&EXPLICIT.replace("starts = [[4, 4], [0, 0], [1, 3]]", "")).unwrap();
    let ids = [sweep.id(), other.id(), reordered.id(), sampled.id()];
    for (i, a) in ids.iter().enumerate() {
        assert!(ids[..i].iter().all(|b| b != a), "{ids:?}");
    }
    let again = Sweep::parse(&sweep.canonical_toml()).unwrap();
    assert_eq!(again.id(), sweep.id());
    assert!(sweep.canonical_toml().contains("starts = [[4, 4], [0, 0], [1, 3]]"), "{}", sweep.canonical_toml());
}

#[test]
fn bad_explicit_starts_name_the_start() {
    let cases = [
        ("[1, 3]]", "[1, 3], [5, 0]]", "grid[0].starts[3]: [5, 0] coordinate 0 is 5, off the board (side 5"),
        ("[1, 3]]", "[1, 3], [1, 1, 1]]", "grid[0].starts[3]: [1, 1, 1] has 3 coordinates, expected 2"),
        ("[1, 3]]", "[1, 3], [0, 1]]", "grid[0].starts[3]: [0, 1] is not an eligible start on board 5x5"),
        ("[1, 3]]", "[1, 3], [0, 0]]", "grid[0].starts[3]: [0, 0] repeats starts[1]"),
        ("[[4, 4], [0, 0], [1, 3]]", "[]", "grid[0].starts: is empty"),
        ("rule = [2, 1]", "rule = [3, 1]", "grid[0].starts: no tour exists on board 5x5 with moves 3,1"),
        ("n = [5, 7]", "n = [5, 7]\n        starts_file = \"s.txt\"", "grid[0]: has both starts and starts_file"),
    ];
    for (from, to, expected) in cases {
        let text = EXPLICIT.replacen(from, to, 1);
        assert_ne!(text, EXPLICIT, "{from:?} not found");
        let e = Sweep::parse(&text).unwrap_err().to_string();
        assert!(e.starts_with(expected), "{e:?}\n  does not start with {expected:?}");
    }
    let unread = EXPLICIT.replace("starts = [[4, 4], [0, 0], [1, 3]]", "starts_file = \"s.txt\"");
    let e = Sweep::parse(&unread).unwrap_err();
    assert_eq!(e.path(), "grid[0].starts_file");
}

#[test]
fn start_files_are_read_into_the_spec() {
    let text = EXPLICIT.replace("starts = [[4, 4], [0, 0], [1, 3]]", "starts_file = \"s.txt\"");
    let mut spec = SweepSpec::from_toml(&text).unwrap();
    spec.read_start_files(|name| {
        assert_eq!(name, "s.txt");
        Ok("# the same three\n4,4\n\n0 0\n1,3\n".into())
    })
    .unwrap();
    assert_eq!(Sweep::new(spec).unwrap().id(), Sweep::parse(EXPLICIT).unwrap().id());

    let mut spec = SweepSpec::from_toml(&text).unwrap();
    let e = spec.read_start_files(|_| Ok("4,4\n0,x\n".into())).unwrap_err().to_string();
    assert_eq!(e, "grid[0].starts_file: \"s.txt\" line 2: coordinate 2 is not a non-negative integer");
    let mut spec = SweepSpec::from_toml(&text).unwrap();
    let e = spec.read_start_files(|_| Err("No such file".into())).unwrap_err().to_string();
    assert_eq!(e, "grid[0].starts_file: cannot read \"s.txt\": No such file");
}

#[test]
fn caps_bound_what_a_spec_may_ask() {
    let greedy = format!("{SPEC}\n[limits]\nmax_configurations = 16777216\nmax_cells = 1000000000000");
    assert!(Sweep::parse(&greedy).is_ok());
    let caps = Limits { max_configurations: 5, max_cells: 1000, ..Limits::default() };
    let e = Sweep::parse_capped(&greedy, &caps).unwrap_err().to_string();
    assert_eq!(e, "limits.max_configurations: the sweep has 1.2e1 configurations, over the limit 5e0");
    let caps = Limits { max_cells: 100, ..Limits::default() };
    let e = Sweep::parse_capped(&greedy, &caps).unwrap_err().to_string();
    assert!(e.starts_with("grid[0].n: board 5x5x5 has 125 cells, over the limit limits.max_cells = 100"), "{e}");
    let sweep = Sweep::parse_capped(SPEC, &Limits::default()).unwrap();
    assert_eq!(sweep.id(), Sweep::parse(SPEC).unwrap().id(), "caps do not change the id");
    // A budget or iteration cap the spec raises for itself is held to
    // the caller's (issue 34: a bt budget of 2^64 - 1 pinned a worker).
    let spec = |budget: &str, iterations: u32| {
        let methods = format!("methods = [\"bt\", \"nn\"]\n{budget}\niterations = {iterations}");
        let raised = "[limits]\nmax_budget = 18446744073709551615\nmax_iterations = 1000000";
        format!("{}\n{raised}", SPEC.replace("methods = [\"w\", \"aw+\"]", &methods))
    };
    let endless = spec("budget = 18446744073709551615", 1_000_000);
    let raised = Sweep::parse(&endless).expect("a spec may raise its own limits");
    assert!(raised.spec().to_canonical_toml().contains("max_budget = 18446744073709551615"));
    let caps = Limits { max_budget: 1_000_000, ..Limits::default() };
    let e = Sweep::parse_capped(&endless, &caps).unwrap_err().to_string();
    assert!(e.starts_with("budget: 18446744073709551615 is over the limit 1000000 (limits.max_budget"), "{e}");
    let e = Sweep::parse_capped(&spec("", 10), &caps).unwrap_err().to_string();
    assert!(e.starts_with("budget: 100000000 (the default) is over the limit 1000000"), "{e}");
    let caps = Limits { max_iterations: 500, ..Limits::default() };
    let e = Sweep::parse_capped(&spec("budget = 5", 1_000_000), &caps).unwrap_err().to_string();
    assert!(e.starts_with("iterations: 1000000 is over the limit 500"), "{e}");
}

#[test]
fn implausible_results_are_refused() {
    let sweep = Sweep::parse(SPEC).unwrap();
    // Configuration 4 is 5x5 (25 cells), K = 8; methods w and aw+.
    assert_eq!(sweep.configurations()[4].shape_label(), "5x5");
    let tour = TaskSummary { success: true, outcome: Outcome::Tour, attempts: 3, visited: 25, micros: 9 };
    let stuck = TaskSummary { success: false, outcome: Outcome::GaveUp, visited: 20, attempts: 8, ..tour };
    assert_eq!(sweep.check_result(4, 0, Method::AwPlus, &tour), Ok(()));
    assert_eq!(sweep.check_result(4, 0, Method::AwPlus, &stuck), Ok(()));
    assert_eq!(sweep.check_result(4, 0, Method::W, &TaskSummary { attempts: 1, ..tour }), Ok(()));
    // 5x5 with (2,1): only even cells may start. A walk's failure there
    // proves nothing; from an odd cell the colour rule proves no-tour.
    let no_tour = TaskSummary { outcome: Outcome::NoTour, ..stuck };
    assert_eq!(sweep.check_result(4, 1, Method::AwPlus, &no_tour), Ok(()));
    let e = sweep.check_result(4, 0, Method::AwPlus, &no_tour).unwrap_err();
    assert!(e.starts_with("no-tour from aw+ on eligible start 0 is not a proof"), "{e}");
    let bad = [
        (4, Method::W, tour, "attempts 3 is outside 1..=1 for w"),
        (4, Method::AwPlus, TaskSummary { attempts: 9, ..tour }, "attempts 9 is outside 1..=8"),
        (4, Method::AwPlus, TaskSummary { attempts: 0, ..stuck }, "attempts 0 is outside 1..=8"),
        (4, Method::AwPlus, TaskSummary { visited: 26, ..tour }, "visited 26 is more than"),
        (4, Method::AwPlus, TaskSummary { visited: 24, ..tour }, "a tour must visit all 25 cells"),
        (4, Method::AwPlus, TaskSummary { success: false, ..tour }, "success false contradicts outcome tour"),
        (4, Method::AwPlus, TaskSummary { outcome: Outcome::Tour, ..stuck }, "success false contradicts"),
        (4, Method::AwPlus, TaskSummary { visited: 0, ..stuck }, "a walk visits at least its start"),
        (4, Method::AwPlus, TaskSummary { attempts: 7, ..stuck }, "a failed aw+ makes all 8 walks, not 7"),
        (4, Method::AwPlus, TaskSummary { micros: u64::MAX, ..tour }, "micros 18446744073709551615 is over"),
        (4, Method::Mw, tour, "method mw is not in the sweep"),
        (99, Method::W, tour, "configuration 99 is not in the sweep"),
    ];
    for (config, method, r, expected) in bad {
        let e = sweep.check_result(config, 0, method, &r).unwrap_err();
        assert!(e.starts_with(expected), "{e:?} does not start with {expected:?}");
    }
}

#[test]
fn the_engines_results_pass_the_check() {
    let text = r#"
            name = "all"
            seed = 5
            starts = 12
            methods = ["w", "w+", "aw", "aw+", "mw", "wr", "wr+", "bt", "nn", "solve"]
            budget = 2000
            iterations = 30
            [[grid]]
            rule = [2, 1]
            dims = [2, 3]
            n = [3, 4, 5, 6]
        "#;
    let sweep = Sweep::parse(text).unwrap();
    let planner = crate::Planner::new(&sweep);
    let mut checked = 0;
    for c in sweep.configurations() {
        let runner = tour::Runner::new(c.configuration()).unwrap();
        let mut ws = runner.workspace();
        for &start in planner.starts(c.index).iter() {
            for &m in sweep.methods() {
                if runner.supports(m).is_err() {
                    continue;
                }
                let options = sweep.task_options(runner.config(), start, m);
                let r = runner.run_task(&mut ws, start, m, &options);
                assert_eq!(
                    sweep.check_result(c.index, start, m, &(&r).into()),
                    Ok(()),
                    "{} {} from {start}: {r:?}",
                    c.shape_label(),
                    m.name()
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 300, "{checked}");
}

#[test]
fn closed_is_asked_of_the_methods_that_can_find_closed_tours() {
    let spec = |methods: &str, closed: &str| {
        format!("name = \"c\"\nseed = 1\nmethods = [{methods}]\n{closed}\n[[grid]]\nrule = [2, 1]\ndims = [2]\nn = [6]")
    };
    let e = Sweep::parse(&spec(r#""solve", "aw+""#, "closed = true")).unwrap_err();
    assert_eq!(e.path(), "closed");
    assert!(e.to_string().contains("method aw+ only finds open tours"), "{e}");
    let open = Sweep::parse(&spec(r#""solve", "bt""#, "")).unwrap();
    let closed = Sweep::parse(&spec(r#""solve", "bt""#, "closed = true")).unwrap();
    assert!(closed.closed() && !open.closed());
    assert_ne!(open.id(), closed.id(), "closed tours are another experiment");
    assert_eq!(Sweep::parse(&spec(r#""solve", "bt""#, "closed = false")).unwrap().id(), open.id());
    assert!(closed.canonical_toml().contains("closed = true"));
    assert!(!open.canonical_toml().contains("closed"), "ids of specs without it are kept");
    let c = closed.configurations()[0].configuration();
    assert!(closed.task_options(&c, 0, Method::Solve).closed);
}

#[test]
fn too_many_tasks_names_the_limit() {
    let text = format!("{SPEC}\n[limits]\nmax_tasks = 300");
    let e = Sweep::parse(&text).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "limits.max_tasks: the sweep has {:e} tasks, over the limit 3e2",
            Sweep::parse(SPEC).unwrap().total_tasks()
        )
    );
    // 1908 even boards of at least 4096^2 cells, S = 2^24: 3.2e10 tasks.
    let huge = r#"
            name = "huge"
            seed = 1
            starts = 16777216
            methods = ["w"]
            [[grid]]
            rule = [2, 1]
            dims = [2]
            n_range = { from = 4096, to = 7910, step = 2 }
        "#;
    let e = Sweep::parse(huge).unwrap_err().to_string();
    assert_eq!(e, "limits.max_tasks: the sweep has 3.2010928128e10 tasks, over the limit 1e10");
}

/// Boards the move graph refutes (a cell no move reaches) count as
/// impossible in tables and check, but keep their planned tasks, so a
/// stored sweep's tasks stay the same under a newer build.
#[test]
fn boards_the_move_graph_refutes_are_impossible_and_keep_their_tasks() {
    let s = Sweep::parse(
        "name = \"g\"\nseed = 1\nstarts = 4\nmethods = [\"w\"]\n\
         [[grid]]\nrule = [3, 2]\ndims = [2]\nn = [5, 10]\n\
         [[grid]]\nrule = [2, 1]\ndims = [2]\nn = [3]\n",
    )
    .unwrap();
    let c = s.configurations();
    // 5x5 (3,2) and the 3x3 knight's board: the centre has no move;
    // 10x10 (3,2) has tours (the atlas).
    let impossible: Vec<bool> = c.iter().map(ConfigEntry::impossible).collect();
    assert_eq!(impossible, [true, false, true]);
    assert!(c.iter().all(|e| e.eligibility() != tour::Eligibility::Impossible), "planned as before");
    assert_eq!(s.total_tasks(), 12, "4 starts on each board");
}
