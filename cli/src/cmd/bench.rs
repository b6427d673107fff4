//! `ksweep bench`: the engine's speed and memory figures, measured in one
//! run so ratios compare like with like. Figures, not pass/fail: the targets
//! are printed beside them.

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::Args;
use tour::{baseline, Board, Configuration, Method, Moves, Outcome, Runner, Task};

mod authors;
mod engine;

use authors::{Program, Programs};
use engine::{eval_throughput, exact_and_constructive, memory, walk_throughput};

/// Measure walk throughput, the gain over the authors' algorithm,
/// memory per cell and `eval` throughput.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Shorter runs (about a tenth of the time), for a smoke check.
    #[arg(long)]
    pub quick: bool,

    /// A directory holding the report authors' own programs, built from
    /// their repository (docs/engine.md): the engine is then also timed
    /// against them, on the same starts, flags compared.
    #[arg(long, value_name = "DIR")]
    pub authors: Option<PathBuf>,
}

fn configuration(rule: &[u32], dims: usize, n: u32) -> Result<Configuration> {
    let board = Board::regular(dims, n)?;
    let moves = Moves::from_rule(rule, dims)?;
    Ok(Configuration::new(board, moves)?)
}

pub fn run(args: BenchArgs, out: &mut impl Write) -> Result<()> {
    // A missing program fails now, not after a minute of figures.
    let programs = args.authors.as_deref().map(|dir| Programs::at(dir, &authors::ALL)).transpose()?;
    let budget = if args.quick { Duration::from_millis(150) } else { Duration::from_millis(1500) };
    writeln!(out, "ksweep bench (one thread unless stated; {} per figure)", humantime(budget))?;
    let features = tour::kernel_features();
    let features = if features.is_empty() { "none".to_string() } else { features.join(" ") };
    writeln!(out, "SIMD: {features} (KSWEEP_SIMD caps them); 3D rule-W scan: {}", tour::scan_3d())?;
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let threads = std::thread::available_parallelism().map_or(0, |n| n.get());
    writeln!(out, "CPU: {}, {threads} hardware threads", cpu_name(&cpuinfo))?;

    walk_throughput(budget, out)?;

    let disagree = compare_with_authors(args.quick, programs.as_ref(), out)?;

    memory(out)?;
    exact_and_constructive(out)?;
    solve_beside_aw_plus(args.quick, out)?;

    eval_throughput(budget, out)?;
    // A disagreement is a bug in one of them, not a figure.
    anyhow::ensure!(
        disagree.is_empty(),
        "the engine, the baseline and the authors' programs disagree on flags or attempts: {}",
        disagree.join(", ")
    );
    Ok(())
}

/// Rounds of the comparison with the authors' algorithm. One round times
/// the engine, the baseline and (when given) the authors' programs on the
/// same work, back to back, so its ratios are measured in one state of the
/// machine: on a shared VM the speed of all drifts by tens of percent from
/// minute to minute. The engine's one-off set-up of a configuration (the
/// W+ keyed cells) falls in the first round.
const ROUNDS: usize = 3;

/// One round's times of the whole work, in seconds: the engine's, the
/// baseline's and the authors' programs' (0 when not run).
#[derive(Debug, Clone, Copy)]
struct Round {
    engine: f64,
    baseline: f64,
    authors: f64,
}

/// One row of the comparison with the authors' programs.
struct AuthorsWork {
    label: String,
    config: Configuration,
    method: Method,
    starts: Vec<u64>,
    program: Program,
}

/// Times the engine against the in-tree baseline and, with `--authors`,
/// against the authors' real programs; returns the rows where their flags
/// (or the baseline's attempts) differ from the engine's.
fn compare_with_authors(quick: bool, programs: Option<&Programs>, out: &mut impl Write) -> Result<Vec<String>> {
    let work = authors_work(quick)?;
    writeln!(out, "\n## Engine vs the authors' programs, their move orders (target: >= 10x)")?;
    writeln!(out, "({ROUNDS} rounds, each timing the engine, the in-tree baseline (tour::baseline) and, with")?;
    writeln!(out, "--authors, their own programs back to back; ms a start, the least over the rounds; ratios")?;
    writeln!(out, "the median of the rounds' own, then their range. Times as their programs report them: the")?;
    writeln!(out, "walks of a start, not its arrays' first set-up)")?;
    writeln!(
        out,
        "{:<38} {:>10} {:>11} {:>10} {:>19} {:>19} {:>12} {:>6}",
        "work", "engine ms", "baseline ms", "authors ms", "vs authors", "vs baseline", "base/authors", "tours"
    )?;
    let (mut disagree, mut layouts, mut widths) = (Vec::new(), Vec::new(), Vec::new());
    for work in work {
        let runner = Runner::new(work.config)?;
        if runner.config().board().dims() == 3 {
            layouts.push(format!("{}: {}", work.label, runner.layout_name()));
        }
        let mut ws = runner.workspace();
        // As a sweep runs them: a batch of tasks at a time (their walks advance together).
        let tasks: Vec<Task> =
            work.starts.iter().map(|&start| Task { start, method: work.method, options: Default::default() }).collect();
        let (board, moves) = (runner.config().board(), runner.config().moves());
        let coords: Vec<Vec<u32>> = work.starts.iter().map(|&s| board.coords(s)).collect();
        let (mut rounds, mut engine, mut slow, mut theirs) = (Vec::with_capacity(ROUNDS), vec![], vec![], vec![]);
        let mut run_engine = || -> Vec<(bool, u32)> {
            tasks
                .chunks(Runner::tasks_at_once(tasks.len(), 1))
                .flat_map(|chunk| runner.run_tasks(&mut ws, chunk))
                .map(|r| (r.success, r.attempts))
                .collect()
        };
        for _ in 0..ROUNDS {
            // Their programs fill their arrays before the clock starts; the
            // engine's are warmed by an untimed pass, as a sweep keeps them
            // warm. Untouched for a moment (the other programs' turns), a
            // page costs a virtual machine a fault of its host on the next
            // touch (docs/performance/engine.md, "Cold pages").
            run_engine();
            let began = Instant::now();
            engine = run_engine();
            let engine_secs = began.elapsed().as_secs_f64();
            let timed: Vec<baseline::Timed> = coords
                .iter()
                .map(|c| baseline::run_timed(board, moves, c, work.method).expect("deterministic method"))
                .collect();
            slow = timed.iter().map(|t| (t.success, t.attempts)).collect();
            let mut round = Round {
                engine: engine_secs,
                baseline: timed.iter().map(|t| t.walking.as_secs_f64()).sum(),
                authors: 0.0,
            };
            if let Some(programs) = programs {
                let n = board.sides()[0];
                let ran = coords.iter().map(|c| programs.run(work.program, n, c)).collect::<Result<Vec<_>>>()?;
                theirs = ran.iter().map(|r| r.0).collect();
                round.authors = ran.iter().map(|r| r.1.as_secs_f64()).sum();
            }
            rounds.push(round);
        }
        let per = |secs: f64| secs * 1e3 / work.starts.len() as f64;
        let least = |of: fn(&Round) -> f64| rounds.iter().map(of).fold(f64::INFINITY, f64::min);
        let ratio = |of: fn(&Round) -> f64, by: fn(&Round) -> f64| {
            let mut r: Vec<f64> = rounds.iter().map(|x| of(x) / by(x)).collect();
            r.sort_by(f64::total_cmp);
            format!("{:.1}x ({:.1}-{:.1})", r[r.len() / 2], r[0], r[r.len() - 1])
        };
        let with_authors = programs.is_some();
        let agree = engine == slow && (!with_authors || engine.iter().map(|e| e.0).eq(theirs.iter().copied()));
        writeln!(
            out,
            "{:<38} {:>10.3} {:>11.3} {:>10} {:>19} {:>19} {:>12} {:>3}/{:<3}{}",
            work.label,
            per(least(|r| r.engine)),
            per(least(|r| r.baseline)),
            if with_authors { format!("{:.3}", per(least(|r| r.authors))) } else { "-".into() },
            if with_authors { ratio(|r| r.authors, |r| r.engine) } else { "-".into() },
            ratio(|r| r.baseline, |r| r.engine),
            if with_authors { format!("{:.2}", least(|r| r.baseline) / least(|r| r.authors)) } else { "-".into() },
            engine.iter().filter(|r| r.0).count(),
            work.starts.len(),
            if agree { "" } else { " DISAGREE" }
        )?;
        if let Some(width) = runner.walks_together() {
            widths.push(format!("{}: {width}", work.label));
        }
        disagree.extend((!agree).then_some(work.label));
    }
    writeln!(out, "3D boards' layouts: {}", layouts.join("; "))?;
    writeln!(out, "2D walks advancing together, as timed: {}", widths.join("; "))?;
    if programs.is_none() {
        writeln!(out, "Without --authors the ratio is against the baseline only; docs/engine.md gives how far")?;
        writeln!(out, "the baseline's times are from their real programs' on this work.")?;
    }
    Ok(disagree)
}

/// The workloads of the report's authors that issue 40 times, and W+ on
/// their (2,1) 3D board: their programs, move orders and starts. Quick
/// runs take fewer starts and shrink the largest board.
fn authors_work(quick: bool) -> Result<Vec<AuthorsWork>> {
    let explicit = |list: Vec<Vec<i64>>, dims: usize, n: u32| -> Result<Configuration> {
        Ok(Configuration::new(Board::regular(dims, n)?, Moves::explicit(&list, dims)?)?)
    };
    let cells = |config: &Configuration, starts: &[&[u64]]| -> Result<Vec<u64>> {
        Ok(starts.iter().map(|s| config.board().index_of(s)).collect::<Result<_, _>>()?)
    };
    // (3,2) 2D, W+++/2D.cpp.
    let order_32 = [(3, 2), (3, -2), (-3, 2), (-3, -2), (2, 3), (2, -3), (-2, 3), (-2, -3)];
    let order_32 = order_32.iter().map(|&(a, b)| vec![a, b]).collect();
    // (2,1) 3D, accu-more/just_degree/3D.cpp: for each pair of axes (a, b) in
    // (x,y), (y,z), (z,x), signs s1, s2: (2 s1, 1 s2) then (1 s1, 2 s2).
    let mut order_21 = Vec::new();
    for axis in 0..3 {
        for s1 in [-1, 1] {
            for s2 in [-1, 1] {
                for (p, q) in [(2, 1), (1, 2)] {
                    let mut m = vec![0i64; 3];
                    m[axis] = p * s1;
                    m[(axis + 1) % 3] = q * s2;
                    order_21.push(m);
                }
            }
        }
    }
    // (1,2,2) 3D, (2,2,1)-500/just_degree/3D.cpp.
    let mut order_122 = Vec::new();
    for (a, b, c) in [(2, 2, 1), (2, 1, 2), (1, 2, 2)] {
        for sa in [-1, 1] {
            for sb in [-1, 1] {
                for sc in [-1, 1] {
                    order_122.push(vec![sa * a, sb * b, sc * c]);
                }
            }
        }
    }
    let aw = explicit(order_32, 2, 400)?;
    let w21 = explicit(order_21, 3, 140)?;
    let n122 = if quick { 120 } else { 300 };
    let w122 = explicit(order_122, 3, n122)?;
    let all_21: [&[u64]; 5] = [&[0, 0, 0], &[1, 2, 3], &[70, 70, 70], &[139, 0, 5], &[33, 77, 101]];
    let starts_21 = &all_21[..if quick { 2 } else { 5 }];
    let all_122: [&[u64]; 2] = [&[0, 0, 0], &[150, 149, 3]];
    let starts_122 = &all_122[..if quick { 1 } else { 2 }];
    Ok(vec![
        AuthorsWork {
            label: format!("aw+ (3,2) 2D N=400, {} starts", if quick { 6 } else { 30 }),
            starts: aw.starts(if quick { 6 } else { 30 }, 1)?.cells,
            config: aw,
            method: Method::AwPlus,
            program: authors::W_PLUS_2D,
        },
        AuthorsWork {
            label: format!("w (2,1) 3D N=140, {} starts", starts_21.len()),
            starts: cells(&w21, starts_21)?,
            config: w21.clone(),
            method: Method::W,
            program: authors::ACCU_MORE_3D,
        },
        AuthorsWork {
            label: format!("w (1,2,2) 3D N={n122}, {} starts", starts_122.len()),
            starts: cells(&w122, starts_122)?,
            config: w122,
            method: Method::W,
            program: authors::MOVES_221_3D,
        },
        // (2,1) accu-200/degree+distance/3D.cpp: the same move order.
        AuthorsWork {
            label: format!("w+ (2,1) 3D N=140, {} starts", starts_21.len()),
            starts: cells(&w21, starts_21)?,
            config: w21,
            method: Method::WPlus,
            program: authors::W_PLUS_3D,
        },
    ])
}

/// `solve` beside `aw+` on the same seeded starts: tours found and mean
/// time per task, on the boards where the report's heuristics give up
/// ((4,3) in 2D) and on the ones where they do not.
fn solve_beside_aw_plus(quick: bool, out: &mut impl Write) -> Result<()> {
    writeln!(out, "\n## solve beside aw+, same starts (targets: mean time within 20x of aw+; (4,3) N=199 < 1 s)")?;
    writeln!(
        out,
        "{:<22} {:>6} {:>13} {:>11} {:>13} {:>13} {:>11} {:>7}",
        "configuration", "starts", "aw+ tours", "aw+ ms", "solve tours", "solve proven", "solve ms", "ratio"
    )?;
    let starts = if quick { 3 } else { 20 };
    for (label, rule, dims, n) in [
        // Odd and even cells: a shared path, a shared closed tour.
        ("(4,3) 2D N=199", &[4, 3][..], 2, 199),
        ("(4,3) 2D N=198", &[4, 3], 2, 198),
        ("(4,3) 2D N=50", &[4, 3], 2, 50),
        ("(3,2) 2D N=100", &[3, 2], 2, 100),
        ("(2,1) 2D N=199", &[2, 1], 2, 199),
        ("(2,1) 3D N=40", &[2, 1], 3, 40),
        ("(3,2) 4D N=10", &[3, 2], 4, 10),
        // Boards with no tour, which solve proves by search.
        ("(3,2) 2D N=12", &[3, 2], 2, 12),
        ("(4,3) 2D N=24", &[4, 3], 2, 24),
        ("(1,2,2) 3D N=4", &[1, 2, 2], 3, 4),
    ] {
        let config = configuration(rule, dims, n)?;
        let cells = config.starts(starts, 1)?.cells;
        let runner = Runner::new(config)?;
        let mut ws = runner.workspace();
        let mut row = Vec::new();
        for method in [Method::AwPlus, Method::Solve] {
            let (mut tours, mut proven, mut micros) = (0u64, 0u64, 0u64);
            for &start in &cells {
                let options =
                    tour::TaskOptions { seed: runner.config().task_seed(1, start, method), ..Default::default() };
                let r = runner.run_task(&mut ws, start, method, &options);
                tours += r.success as u64;
                proven += (r.outcome == Outcome::NoTour) as u64;
                micros += r.micros;
            }
            row.push((tours, proven, micros as f64 / cells.len() as f64 / 1e3));
        }
        let ((aw_tours, _, aw_ms), (solve_tours, solve_proven, solve_ms)) = (row[0], row[1]);
        writeln!(
            out,
            "{label:<22} {:>6} {:>13} {aw_ms:>11.3} {:>13} {:>13} {solve_ms:>11.3} {:>6.1}x",
            cells.len(),
            aw_tours,
            solve_tours,
            solve_proven,
            solve_ms / aw_ms.max(1e-9)
        )?;
    }
    Ok(())
}

fn humantime(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

/// The processor as `/proc/cpuinfo`'s text names it, with its family and
/// model: hosts of one name differ by generation (a Zen 3 and a Zen 4
/// "AMD EPYC" walk at different speeds), and the figures are compared
/// across runs.
fn cpu_name(cpuinfo: &str) -> String {
    let field = |name: &str| {
        cpuinfo.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            (key.trim() == name).then(|| value.trim().to_string())
        })
    };
    match (field("model name"), field("cpu family"), field("model")) {
        (Some(name), Some(family), Some(model)) => format!("{name} (family {family}, model {model})"),
        (Some(name), _, _) => name,
        _ => "unknown (no /proc/cpuinfo)".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::cpu_name;

    #[test]
    fn cpu_name_takes_the_first_processors_name_family_and_model() {
        let info = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\n\
                    model name\t: AMD EPYC\n\nprocessor\t: 1\nmodel name\t: other\n";
        assert_eq!(cpu_name(info), "AMD EPYC (family 25, model 1)");
        assert_eq!(cpu_name("model name : Neoverse\n"), "Neoverse");
        assert_eq!(cpu_name(""), "unknown (no /proc/cpuinfo)");
    }
}
