use super::*;

const BASE: &str = r#"
        name = "t"
        seed = 1
        methods = ["w"]
        [[grid]]
        rule = [2, 1]
        dims = [2]
        n = [5]
    "#;

/// The error of `text`, from parsing or checking.
fn error_of(text: &str) -> SpecError {
    match SweepSpec::from_toml(text) {
        Err(e) => e,
        Ok(spec) => spec.check().expect_err("spec should be refused"),
    }
}

/// Asserts the error message starts with `path: ` and contains `needle`.
fn assert_refused(text: &str, path: &str, needle: &str) {
    let e = error_of(text);
    let msg = e.to_string();
    assert!(msg.starts_with(&format!("{path}: ")), "{msg}");
    assert!(msg.contains(needle), "{msg:?} lacks {needle:?}");
    assert_eq!(e.path(), path, "{msg}");
}

#[test]
fn defaults_fill_in() {
    let spec = SweepSpec::from_toml(BASE).unwrap();
    spec.check().unwrap();
    assert_eq!(spec.starts, 100);
    assert_eq!(spec.limits, Limits::default());
    assert_eq!(spec.limits.max_tasks, 10_000_000_000);
    assert_eq!(spec.grids[0].rule, Some(vec![2, 1]));
    let with_range = BASE.replace("n = [5]", "n_range = { from = 5, to = 9 }");
    let spec = SweepSpec::from_toml(&with_range).unwrap();
    assert_eq!(spec.grids[0].n_range.unwrap().step, 1);
    assert_eq!(spec.grids[0].regular_ns(), vec![5, 6, 7, 8, 9]);
}

#[test]
fn document_errors_name_spec() {
    assert_refused("name = ", "spec", "is not valid TOML: line 1");
    assert_refused(&format!("{BASE}\n#{}", "x".repeat(MAX_SPEC_BYTES)), "spec", "over the limit of 1048576 bytes");
    assert_refused(&BASE.replace("seed = 1", ""), "spec", "missing field `seed`");
}

#[test]
fn type_and_key_errors_name_the_field() {
    assert_refused(&format!("{BASE}\nn_rang = 3"), "grid[0].n_rang", "unknown field `n_rang`");
    assert_refused(
        &BASE.replace("n = [5]", "n_range = { from = 5, to = \"x\" }"),
        "grid[0].n_range.to",
        "invalid type",
    );
    assert_refused(&BASE.replace("seed = 1", "seed = -1"), "seed", "-1");
    assert_refused(&format!("{BASE}\n[limits]\nmax_cels = 5"), "limits.max_cels", "unknown field `max_cels`");
    // Every typo at once, not one per attempt.
    let typos = format!("stars = 3\n{BASE}\nn_rang = 3\ndim = [2]\n[limits]\nmax_cels = 5");
    assert_refused(&typos, "grid[0].dim", "also unknown: grid[0].n_rang, limits.max_cels, stars");
    assert_refused(
        &BASE.replace(r#"["w"]"#, r#"["w", "foo"]"#),
        "methods",
        "unknown method \"foo\"; expected one of w, w+, aw, aw+, mw, wr, wr+",
    );
}

/// A grid label one character over [`grid::MAX_GRID_LABEL_CHARS`].
static LONG_LABEL: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| format!("n = [5]\nlabel = \"{}\"", "é".repeat(61)));

#[test]
fn a_grid_label_names_its_moves_everywhere_but_the_id() {
    let list = "moves = [[2, 1], [1, 2], [-2, -1]]\n        dims = [2]\n        n = [5]";
    let plain = crate::Sweep::parse(&BASE.replace("rule = [2, 1]\n        dims = [2]\n        n = [5]", list)).unwrap();
    let text =
        BASE.replace("rule = [2, 1]\n        dims = [2]\n        n = [5]", &format!("{list}\nlabel = \"(2,1) mine\""));
    let labelled = crate::Sweep::parse(&text).unwrap();
    let entry = &labelled.configurations()[0];
    assert_eq!(entry.moves_label(), "(2,1) mine");
    assert_eq!(entry.moves_list(), "2,1 1,2 -2,-1");
    assert_eq!(plain.configurations()[0].moves_label(), "2,1 1,2 -2,-1");
    assert_eq!(labelled.id(), plain.id(), "a label is presentation, not part of the id");
    assert_eq!(crate::MovesKind::of("(2,1) mine"), crate::MovesKind::Named);
    assert_eq!(crate::MovesKind::of("2,1"), crate::MovesKind::Rule(vec![2, 1]));
    assert_eq!(crate::MovesKind::of("2,1 -1,2"), crate::MovesKind::List(vec![vec![2, 1], vec![-1, 2]]));
}

#[test]
fn value_errors_name_the_field_and_limit() {
    let cases: &[(&str, &str, &str, &str)] = &[
        ("seed = 1", "seed = 1\nstarts = 0", "starts", "0 is below the minimum 1"),
        ("seed = 1", "seed = 1\nstarts = 16777217", "starts", "16777217 is over the limit 16777216"),
        (r#"["w"]"#, "[]", "methods", "is empty"),
        (r#"["w"]"#, r#"["w", "aw", "W"]"#, "methods", "lists \"w\" twice"),
        (r#"name = "t""#, r#"name = " ""#, "name", "is empty"),
        ("dims = [2]", "dims = [2, 33]", "grid[0].dims", "33 is outside the allowed 1..=32"),
        ("dims = [2]", "dims = [0]", "grid[0].dims", "0 is outside"),
        ("dims = [2]", "", "grid[0].dims", "is required with n"),
        ("n = [5]", "n = [5, 0]", "grid[0].n", "0 is below the minimum 1"),
        ("n = [5]", "", "grid[0]", "gives no boards"),
        ("n = [5]", "n_range = { from = 5, to = 9, step = 0 }", "grid[0].n_range.step", "must be at least 1"),
        ("n = [5]", "n_range = { from = 9, to = 5 }", "grid[0].n_range.to", "5 is below from = 9"),
        ("n = [5]", "n_range = { from = 0, to = 5 }", "grid[0].n_range.from", "0 is below the minimum 1"),
        ("rule = [2, 1]", "", "grid[0]", "has neither rule nor moves"),
        ("n = [5]", "n = [5]\nlabel = \" \"", "grid[0].label", "is empty"),
        ("n = [5]", &LONG_LABEL, "grid[0].label", "has 61 characters, over the limit 60"),
        ("n = [5]", "n = [5]\nlabel = \"a\\n# b\"", "grid[0].label", "has a control character"),
        ("rule = [2, 1]", "rule = [2, 1]\nmoves = [[1, 2]]", "grid[0]", "has both rule and moves"),
        ("n = [5]", "shapes = [[5, 5], [5, 5, 5]]", "grid[0].shapes[1]", "has 3 sides but dims lists only [2]"),
        ("dims = [2]\n        n = [5]", "shapes = [[]]", "grid[0].shapes[0]", "has 0 sides"),
        ("n = [5]", "n = [5]\n[limits]\nmax_tasks = 0", "limits.max_tasks", "0 is below the minimum 1"),
        (
            "n = [5]",
            "n = [5]\n[limits]\nmax_configurations = 16777217",
            "limits.max_configurations",
            "16777217 is over the hard limit 16777216",
        ),
        (
            "n = [5]",
            "n_range = { from = 1, to = 2000000 }",
            "limits.max_configurations",
            "the sweep has 2e6 configurations, over the limit 1e6",
        ),
        ("seed = 1", "seed = 1\nbudget = 0", "budget", "0 is below the minimum 1"),
        ("seed = 1", "seed = 1\niterations = 0", "iterations", "0 is below the minimum 1"),
        (
            r#"["w"]"#,
            "[\"bt\"]\nbudget = 10000000001",
            "budget",
            "10000000001 is over the limit 10000000000 (limits.max_budget, which a coordinator holds to its \
                 --max-budget)",
        ),
        (r#"["w"]"#, "[\"solve\"]\nbudget = 2001\n[limits]\nmax_budget = 2000", "budget", "over the limit 2000"),
        (r#"["w"]"#, "[\"nn-cut\"]\niterations = 10001", "iterations", "10001 is over the limit 10000"),
        (
            r#"["w"]"#,
            "[\"nn\"]\n[limits]\nmax_iterations = 50",
            "iterations",
            "100 (the default) is over the limit 50 (limits.max_iterations",
        ),
        ("n = [5]", "n = [5]\n[limits]\nmax_budget = 0", "limits.max_budget", "0 is below the minimum 1"),
        (
            "n = [5]",
            "n = [5]\n[limits]\nmax_iterations = 1000001",
            "limits.max_iterations",
            "1000001 is over the hard limit 1000000",
        ),
    ];
    for &(from, to, path, needle) in cases {
        let text = BASE.replacen(from, to, 1);
        assert_ne!(text, BASE, "{from:?} not in the base spec");
        assert_refused(&text, path, needle);
    }
    let second_grid = format!("{BASE}\n[[grid]]\nrule = [1]\ndims = [1]\nn_range = {{ from = 3, to = 4, step = 0 }}");
    assert_refused(&second_grid, "grid[1].n_range.step", "must be at least 1");
}

/// A budget or iteration cap is held to its limit only where a method
/// spends it, and a spec may raise its own limits (up to what a
/// coordinator allows, see `Sweep::parse_capped`).
#[test]
fn effort_limits_bind_the_methods_that_spend_it() {
    let ok = |text: &str| SweepSpec::from_toml(text).and_then(|s| s.check()).unwrap_or_else(|e| panic!("{e}"));
    ok(&BASE.replace("seed = 1", "seed = 1\nbudget = 1000000000000\niterations = 1000000"));
    ok(&BASE.replace(r#"["w"]"#, "[\"bt\", \"nn\"]\nbudget = 10000000000\niterations = 10000"));
    ok(&format!(
        "{}\n[limits]\nmax_budget = 1000000000000\nmax_iterations = 1000000",
        BASE.replace(r#"["w"]"#, "[\"solve\", \"nn-both\"]\nbudget = 1000000000000\niterations = 1000000")
    ));
}

#[test]
fn shapes_carry_their_own_dims() {
    let text = BASE.replace("dims = [2]\n        n = [5]", "shapes = [[100, 80], [4, 4, 6]]");
    let spec = SweepSpec::from_toml(&text).unwrap();
    spec.check().unwrap();
    assert_eq!(spec.grids[0].configuration_count(), 2);
    let moves = BASE.replace("rule = [2, 1]\n        dims = [2]", "moves = [[2, 1], [1, 2]]");
    let spec = SweepSpec::from_toml(&moves).unwrap();
    spec.check().unwrap();
    assert_eq!(spec.grids[0].regular_dims(), vec![2], "dims from the move length");
}

#[test]
fn configuration_count_does_not_double_count_n() {
    let grid = GridSpec {
        rule: Some(vec![2, 1]),
        dims: vec![2, 3],
        n: vec![5, 6, 6, 30, 31],
        n_range: Some(NRange { from: 5, to: 29, step: 2 }),
        shapes: vec![vec![3, 4]],
        ..GridSpec::default()
    };
    // 5, 7, .., 29 (13 values) plus 6 and 30 and 31.
    assert_eq!(grid.regular_ns().len(), 16);
    assert_eq!(grid.configuration_count(), 2 * 16 + 1);
}

#[test]
fn nonsense_precision_is_refused_naming_the_field() {
    let with = |fields: &str| BASE.replace("seed = 1", &format!("seed = 1\n{fields}"));
    assert_refused(&with("precision = 0.5"), "precision", "not in (0, 0.5)");
    assert_refused(&with("precision = 0"), "precision", "not in (0, 0.5)");
    assert_refused(&with("precision = -0.1"), "precision", "not in (0, 0.5)");
    assert_refused(&with("precision = 0.02\nconfidence = 1.0"), "confidence", "not in (0, 1)");
    assert_refused(&with("precision = 0.02\nmin_starts = 0"), "min_starts", "at least 1");
    assert_refused(
        &with("precision = 0.02\nstarts = 50\nmin_starts = 64"),
        "starts",
        "the cap 50 is below min_starts 64",
    );
    assert_refused(&with("confidence = 0.9"), "confidence", "only used with precision");
    assert_refused(&with("min_starts = 10"), "min_starts", "only used with precision");
    let explicit = with("precision = 0.02").replace("n = [5]", "n = [5]\nstarts = [[0, 0]]");
    assert_refused(&explicit, "grid[0].starts", "not a sample");
    // A small cap with the default min_starts is no error: it takes the cap.
    let spec = SweepSpec::from_toml(&with("precision = 0.1\nstarts = 10")).unwrap();
    assert_eq!(spec.precision().unwrap().unwrap().min_starts, 10);
}
