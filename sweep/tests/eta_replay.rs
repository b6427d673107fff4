//! The ETA against the true end of a recorded run (tests/data/eta-run.tsv:
//! a real `ksweep run` of (3,2) 2D and (2,1) 3D boards, every (configuration,
//! method) cell with its measured CPU time). The cells are replayed in the
//! order the planner runs them, 50 tasks at a time, wall time passing as
//! their CPU time over the run's two threads; the ETA a status would show
//! (the work left over the work done a second in the last minute, both
//! priced by the model fitted so far) is read every 2 s, as the coordinator
//! samples it, and compared with the time the replay still takes.

use std::time::Duration;

use sweep::{Reused, Sweep, WorkRate, WorkTally};

const RUN: &str = include_str!("data/eta-run.tsv");

/// Threads of the recorded run.
const THREADS: f64 = 2.0;

/// One recorded cell: configuration, method index, tasks, successes, micros.
type Cell = (u32, u32, u64, u64, f64);

fn recorded() -> (Sweep, Vec<Cell>) {
    let spec: String = RUN.lines().filter_map(|l| l.strip_prefix("#! ")).map(|l| format!("{l}\n")).collect();
    let sweep = Sweep::parse(&spec).expect("the recorded spec");
    let cells = RUN
        .lines()
        .filter(|l| !l.starts_with('#'))
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
                f[4].parse().unwrap(),
            )
        })
        .collect();
    (sweep, cells)
}

#[test]
fn the_eta_of_a_recorded_run_is_within_30_percent_of_the_truth_from_a_tenth_on() {
    let (sweep, cells) = recorded();
    assert_eq!(cells.iter().map(|c| c.2).sum::<u64>(), sweep.total_tasks(), "every task of the run");
    let end = cells.iter().map(|c| c.4).sum::<f64>() / THREADS;
    let mut tally = WorkTally::new(&sweep, Reused::none());
    let mut rate = WorkRate::new(Duration::from_secs(60));
    let (mut clock, mut next_sample) = (0.0, 0.0);
    let marks = [0.10, 0.25, 0.50, 0.75];
    let mut errors: Vec<(f64, f64)> = Vec::new();
    for &(config, method, tasks, successes, micros) in &cells {
        let chunks = tasks.div_ceil(50);
        for k in 0..chunks {
            let t = (tasks - k * 50).min(50);
            let s = if k + 1 == chunks { successes } else { 0 };
            let m = micros * t as f64 / tasks as f64;
            tally.add(config, method, t, s, m);
            clock += m / THREADS;
            while clock >= next_sample {
                next_sample += 2e6;
                let now = tally.now(&sweep);
                rate.observe(Duration::from_secs_f64(clock / 1e6), now.done);
                let Some(&mark) = marks.get(errors.len()) else { continue };
                if clock < mark * end {
                    continue;
                }
                let eta = rate.eta(now.work.remaining_micros(), &now.model).expect("an ETA once work is done");
                let left = (end - clock) / 1e6;
                errors.push((clock / end, eta.as_secs_f64() / left - 1.0));
            }
        }
    }
    eprintln!("ETA error at a share of the run (share, error): {errors:.3?}");
    assert_eq!(errors.len(), marks.len(), "every mark reached");
    for (at, error) in errors {
        assert!(error.abs() <= 0.30, "at {:.0} % of the run the ETA is off by {:+.0} %", at * 100.0, error * 100.0);
    }
}
