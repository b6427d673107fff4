//! Board, move and seed options shared by `tour`, `eval` and `bench`, and
//! their conversion into an engine [`Configuration`].

use anyhow::{bail, Context, Result};
use clap::Args;
use tour::{
    Board, Configuration, Method, Moves, Runner, TaskOptions, DEFAULT_BUDGET, DEFAULT_ITERATIONS, DEFAULT_MAX_CELLS,
};

/// The configuration a command runs on.
#[derive(Debug, Clone, Args)]
pub struct BoardArgs {
    /// Leaper rule, padded with zeros to D entries: `2,1` (knight), `1,2,2`, `3,2`.
    #[arg(long, value_name = "A,B,..", conflicts_with = "moves", required_unless_present = "moves")]
    pub rule: Option<String>,

    /// Explicit move list instead of a rule, in the order to use:
    /// "2,1 2,-1 -2,1 ..." (moves separated by spaces or ';'); it may start
    /// with a minus: `--moves "-2,1 ..."`.
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub moves: Option<String>,

    /// Number of axes D of a regular board N^D.
    #[arg(long, value_name = "D", required_unless_present = "shape")]
    pub dims: Option<usize>,

    /// Side length N of a regular board N^D.
    #[arg(long, value_name = "N", required_unless_present = "shape", conflicts_with = "shape")]
    pub n: Option<u32>,

    /// Per-axis sides of a board, e.g. `100x80` or `4x4x6`, instead of --dims/--n.
    #[arg(long, value_name = "N1xN2x..")]
    pub shape: Option<String>,

    /// Refuse boards with more cells than this.
    #[arg(long, value_name = "CELLS", default_value_t = DEFAULT_MAX_CELLS)]
    pub max_cells: u64,

    /// Sweep seed: feeds the random methods (wr, wr+) through the task seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

/// Limits of the exact and neural methods, shared by `tour` and `eval`.
#[derive(Debug, Clone, Args)]
pub struct RunnerArgs {
    /// Node budget of `bt`, work budget of `solve`; past it the task gives up.
    #[arg(long, default_value_t = DEFAULT_BUDGET)]
    pub budget: u64,
    /// Iteration cap of the `nn` methods (seed 004 uses 100).
    #[arg(long, default_value_t = DEFAULT_ITERATIONS)]
    pub iterations: u32,
    /// Ask for a closed tour (the last cell one move from the first):
    /// solve and bt; the nn methods always look for one.
    #[arg(long)]
    pub closed: bool,
}

impl RunnerArgs {
    /// Task options with these limits, for one task seed.
    pub fn options(&self, seed: u64, record_path: bool) -> TaskOptions {
        TaskOptions { seed, record_path, budget: self.budget, iterations: self.iterations, closed: self.closed }
    }

    /// Refuses `--closed` for a method that only finds open tours.
    pub fn check(&self, method: Method) -> Result<()> {
        if self.closed && !method.finds_closed() {
            bail!(
                "--closed: method {method} only finds open tours; closed tours are asked of solve, bt and the nn methods"
            );
        }
        Ok(())
    }
}

impl BoardArgs {
    /// Validates the options and builds the configuration.
    /// The engine for `methods` on this board, run by `threads` threads at
    /// once, refused before it allocates when it needs more memory than
    /// this process may have (cgroup, Slurm, MemAvailable): raising
    /// `--max-cells` must not end in an allocation failure that aborts.
    pub fn runner(&self, methods: &[Method], threads: usize, record_path: bool) -> Result<Runner> {
        let config = self.configuration()?;
        let need = config.memory_need_for(methods, record_path).with_threads(threads.max(1) as u64);
        let bounds = ksweep_worker::resources::Bounds::read(&ksweep_worker::resources::Host::this());
        if let Some(limit) = bounds.memory.iter().min_by_key(|f| f.value).filter(|limit| need > limit.value) {
            bail!(
                "the board needs {} for {} thread(s), more than this process may use ({}, from {}); \
                 choose a smaller board or fewer threads",
                tour::format_bytes(need),
                threads.max(1),
                tour::format_bytes(limit.value),
                limit.source
            );
        }
        Ok(Runner::new(config)?)
    }

    pub fn configuration(&self) -> Result<Configuration> {
        let board = match (&self.shape, self.dims, self.n) {
            (Some(shape), dims, _) => {
                let sides = parse_shape(shape)?;
                if let Some(d) = dims.filter(|&d| d != sides.len()) {
                    bail!("--dims: {d} disagrees with --shape {shape}, which has {} sides", sides.len());
                }
                Board::with_max_cells(&sides, self.max_cells)?
            }
            (None, Some(dims), Some(n)) => Board::regular_with_max_cells(dims, n, self.max_cells)?,
            _ => bail!("give --shape, or both --dims and --n"),
        };
        let moves = match (&self.rule, &self.moves) {
            (Some(rule), _) => Moves::from_rule(&parse_rule(rule)?, board.dims())?,
            (None, Some(list)) => Moves::explicit(&parse_move_list(list)?, board.dims())?,
            (None, None) => bail!("give --rule or --moves"),
        };
        Ok(Configuration::new(board, moves)?)
    }
}

/// `"3,2"` -> `[3, 2]`.
pub fn parse_rule(s: &str) -> Result<Vec<u32>> {
    s.split(',')
        .map(|v| v.trim().parse::<u32>())
        .collect::<Result<_, _>>()
        .with_context(|| format!("--rule: {s:?} is not a comma-separated list of non-negative integers"))
}

/// `"100x80"` -> `[100, 80]`.
pub fn parse_shape(s: &str) -> Result<Vec<u32>> {
    s.split(['x', 'X', ','])
        .map(|v| v.trim().parse::<u32>())
        .collect::<Result<_, _>>()
        .with_context(|| format!("--shape: {s:?} is not of the form N1xN2x.. with integer sides"))
}

/// `"2,1 2,-1; -2,1"` -> moves.
pub fn parse_move_list(s: &str) -> Result<Vec<Vec<i64>>> {
    s.split([' ', ';', '\n', '\t'])
        .filter(|m| !m.is_empty())
        .enumerate()
        .map(|(i, m)| {
            m.split(',')
                .map(|v| v.trim().parse::<i64>())
                .collect::<Result<Vec<_>, _>>()
                .with_context(|| format!("--moves: move {i} ({m:?}) is not a comma-separated list of integers"))
        })
        .collect()
}

/// A start as users write it: `"46,39"` or `"46 39"`; checked against the
/// board later, when the board is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Start(pub Vec<u64>);

impl std::str::FromStr for Start {
    type Err = String;

    fn from_str(s: &str) -> Result<Start, String> {
        sweep::parse_start_line(s).map_err(|e| e.to_string())?.map(Start).ok_or_else(|| "no coordinates".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists() {
        assert_eq!(parse_rule("3, 2").unwrap(), vec![3, 2]);
        assert!(parse_rule("3,-2").is_err());
        assert_eq!(parse_shape("100x80").unwrap(), vec![100, 80]);
        assert_eq!(parse_move_list("2,1 -1,2;0,3").unwrap(), vec![vec![2, 1], vec![-1, 2], vec![0, 3]]);
        assert!(parse_move_list("2,1 2,x").unwrap_err().to_string().contains("move 1"));
        assert_eq!("46,39".parse::<Start>().unwrap(), Start(vec![46, 39]));
        assert_eq!(" 4  5 ".parse::<Start>().unwrap(), Start(vec![4, 5]));
        assert!("4,-5".parse::<Start>().is_err());
        assert!("  ".parse::<Start>().is_err());
    }
}
