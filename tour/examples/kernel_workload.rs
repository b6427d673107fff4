//! A small fixed workload that runs every walk kernel once over a few
//! boards, for instruction counts before and after a change to the walks:
//!
//! ```sh
//! cargo build --release -p tour --example kernel_workload
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/kernel_workload [part]
//! ```
//!
//! It prints each part's figures (walks, cells visited, tours), which must
//! not change either.

use tour::{Board, Configuration, Method, Moves, Runner, Task, TaskOptions};

fn main() {
    let parts: [(&[u32], &[u32], Method, u64); 8] = [
        // W+ on 16-bit cells, four at a time, and W on byte lanes.
        (&[3, 2], &[60, 60], Method::AwPlus, 40),
        (&[2, 1], &[80, 80], Method::Aw, 40),
        // W+ on keyed cells in pairs ((4,1)'s rows are too far apart for lanes).
        (&[4, 1], &[60, 60], Method::AwPlus, 40),
        // Rule W on scaled degrees in 3D, in pairs.
        (&[2, 1], &[12, 12, 12], Method::Aw, 20),
        // The keyed kernels alone, 3D W+ and the generic random kernel.
        (&[2, 1], &[80, 80], Method::W, 40),
        (&[1, 2, 2], &[12, 12, 12], Method::WPlus, 20),
        (&[2, 1], &[40, 40], Method::Wr, 40),
        (&[1, 1], &[30, 30], Method::WPlus, 40),
    ];
    // An optional argument picks one part (0 to 7).
    let only: Option<usize> = std::env::args().nth(1).map(|a| a.parse().expect("a part number"));
    for (i, &(rule, sides, method, starts)) in parts.iter().enumerate() {
        if only.is_some_and(|o| o != i) {
            continue;
        }
        let board = Board::new(sides).expect("a board");
        let moves = Moves::from_rule(rule, sides.len()).expect("a rule");
        let config = Configuration::new(board, moves).expect("a configuration");
        let runner = Runner::new(config).expect("a runner");
        let mut ws = runner.workspace();
        let cells = runner.config().board().cells();
        let tasks: Vec<Task> = (0..starts)
            .map(|i| Task {
                start: i * cells / starts,
                method,
                options: TaskOptions { seed: i, ..TaskOptions::default() },
            })
            .collect();
        let results = if method == Method::W || method == Method::WPlus {
            tasks.iter().map(|t| runner.run_task(&mut ws, t.start, t.method, &t.options)).collect()
        } else {
            runner.run_tasks(&mut ws, &tasks)
        };
        let attempts: u64 = results.iter().map(|r| u64::from(r.attempts)).sum();
        let visited: u64 = results.iter().map(|r| r.visited).sum();
        let tours = results.iter().filter(|r| r.success).count();
        println!("{rule:?} {sides:?} {}: attempts {attempts} visited {visited} tours {tours}", method.name());
    }
}
