//! Every example spec in the repository's specs/ folder must parse: they are
//! what people copy, so a broken one is a bug.

use std::path::PathBuf;

use sweep::{Cursor, Planner, Sweep};

fn specs_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../specs")
}

fn example_specs() -> Vec<(String, Sweep)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(specs_dir())
        .expect("specs/ beside sweep/")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("readable spec");
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            let sweep = Sweep::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (stem, sweep)
        })
        .collect()
}

#[test]
fn every_example_spec_parses() {
    let specs = example_specs();
    let names: Vec<&str> = specs.iter().map(|(stem, _)| stem.as_str()).collect();
    for expected in ["quick", "report-1-2-2", "report-2-1", "report-3-2", "report-4-1", "report-4-3"] {
        assert!(names.contains(&expected), "specs/{expected}.toml is missing");
    }
    for (stem, sweep) in &specs {
        assert_eq!(sweep.name(), stem, "a spec is named after its file");
        assert!(sweep.total_tasks() > 0, "{stem} has nothing to run");
        let again = Sweep::parse(&sweep.canonical_toml()).unwrap();
        assert_eq!(again.id(), sweep.id(), "{stem}: canonical form keeps the id");
        println!(
            "{stem}: id {}, {} configurations, {} tasks",
            sweep.id(),
            sweep.configurations().len(),
            sweep.total_tasks()
        );
    }
}

#[test]
fn the_quick_spec_is_small() {
    let (_, quick) = example_specs().into_iter().find(|(stem, _)| stem == "quick").expect("specs/quick.toml");
    assert!(quick.total_tasks() < 5_000, "{}", quick.total_tasks());
    assert!(quick.configurations().iter().all(|c| c.cells() <= 4096));
    let planner = Planner::new(&quick);
    let mut cursor = Cursor::default();
    let mut tasks = 0;
    while let Some(shard) = planner.next_shard(&mut cursor, 1e6) {
        tasks += shard.start_count() * quick.methods().len() as u64;
    }
    assert_eq!(tasks, quick.total_tasks());
}

#[test]
fn a_method_that_cannot_run_on_a_configuration_is_refused() {
    let spec = r#"
        name = "x"
        seed = 1
        methods = ["w", "construct"]
        [[grid]]
        rule = [2, 1]
        dims = [2, 3]
        n = [6]
    "#;
    let e = sweep::Sweep::parse(spec).unwrap_err();
    let text = e.to_string();
    assert!(text.starts_with("methods: method: construct cannot run here"), "{text}");
    assert!(text.contains("grid[0], board 6x6x6"), "{text}");
    assert!(sweep::Sweep::parse(&spec.replace("dims = [2, 3]", "dims = [2]")).is_ok());
}
