//! A configuration (move set, board shape): which starts are eligible, how a
//! sweep samples them, and how task seeds are derived from it.

use std::collections::HashSet;

use crate::board::Board;
use crate::error::{Error, Result};
use crate::method::Method;
use crate::moves::{Colouring, MoveSource, Moves};
use crate::seed::{Rng, SeedHasher};
use crate::walk::cpu::Cpu;
use crate::walk::select::Kernels;

/// Most starts one configuration may ask for (they are held in memory).
pub const MAX_STARTS: u64 = 1 << 24;

/// Which cells a tour may start from (docs/methods.md, "Starts of a configuration").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eligibility {
    /// Every cell.
    All,
    /// Every move changes colour and the cell count is odd: only the
    /// majority colour, cells whose coordinate sum is even.
    EvenSum,
    /// No move changes colour on a board of 2+ cells: no tour exists.
    Impossible,
}

impl Eligibility {
    /// True when a tour may start at cell `index` of a board of `cells`
    /// cells under this rule. (On an odd board, where `EvenSum` applies,
    /// every side is odd, so a cell's index has its coordinate sum's parity.)
    pub fn admits(self, index: u64, cells: u64) -> bool {
        match self {
            Eligibility::All => index < cells,
            Eligibility::EvenSum => index < cells && index.is_multiple_of(2),
            Eligibility::Impossible => false,
        }
    }
}

/// A move set on a board shape: the unit that starts and seeds belong to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Configuration {
    board: Board,
    moves: Moves,
}

/// The starts a sweep runs on one configuration, sorted by cell index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Starts {
    /// True when every eligible start is used (at most S eligible starts).
    pub exhaustive: bool,
    /// Cell indices (see [`Board::index_of`]).
    pub cells: Vec<u64>,
}

/// Memory a configuration's tasks need, in bytes (see
/// [`Configuration::memory_need`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryNeed {
    /// Held once, whatever the number of threads.
    pub shared: u64,
    /// Added by each thread running tasks at the same time.
    pub per_thread: u64,
}

impl MemoryNeed {
    /// Bytes for `threads` threads at once.
    pub fn with_threads(&self, threads: u64) -> u64 {
        self.shared.saturating_add(self.per_thread.saturating_mul(threads))
    }
}

impl std::fmt::Display for MemoryNeed {
    /// "2.0 GiB for one task (1.0 GiB shared + 1.0 GiB a thread)".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} for one task ({} shared + {} a thread)",
            format_bytes(self.with_threads(1)),
            format_bytes(self.shared),
            format_bytes(self.per_thread)
        )
    }
}

/// Bytes for people, in powers of 1024: "12 B", "512.0 MiB", "3.0 GiB".
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

impl Configuration {
    /// Pairs a board with a move set of the same dimension.
    pub fn new(board: Board, moves: Moves) -> Result<Configuration> {
        if moves.dims() != board.dims() {
            return Err(Error::DimsMismatch { moves: moves.dims(), board: board.dims() });
        }
        Ok(Configuration { board, moves })
    }

    /// The leaper `rule` on a board of `sides`, as the atlas keys them.
    pub fn leaper(rule: &[u32], sides: &[u32]) -> Result<Configuration> {
        Configuration::new(Board::new(sides)?, Moves::from_rule(rule, sides.len())?)
    }

    /// The board.
    pub fn board(&self) -> &Board {
        &self.board
    }

    /// The move set.
    pub fn moves(&self) -> &Moves {
        &self.moves
    }

    /// Bytes a [`crate::Runner`] of this configuration holds, known before
    /// it is built (a worker schedules tasks by it): the padded degree
    /// array all threads share, and what each thread running tasks adds:
    /// its own degree array, plus the path when `record_path` is asked.
    /// `bt` and the `nn` methods add their own bounded state on top.
    pub fn memory_need(&self, record_path: bool) -> MemoryNeed {
        let padded = self.padded_cells();
        let width = if self.moves.len() < u8::MAX as usize { 1 } else { 2 };
        let degrees = u64::try_from(padded.saturating_mul(width)).unwrap_or(u64::MAX);
        let path = if record_path { self.board.cells().saturating_mul(8) } else { 0 };
        MemoryNeed { shared: degrees, per_thread: degrees.saturating_add(path) }
    }

    /// [`Configuration::memory_need`] for tasks of `methods`: what the
    /// walks' kernels on this machine add (`walk::select`: W+ walks on 2D
    /// boards run on 16-bit cells or 4-byte keyed cells; rule-W walks
    /// advancing together need more byte degrees a thread); `solve` keeps
    /// its own graph, walk and cover state per thread, about 44 bytes a
    /// padded cell and 32 a board cell, on small boards its search's
    /// ([`crate::solve::search_memory`]), and on large ones the tour its
    /// tasks share ([`crate::solve::shared_memory`]).
    pub fn memory_need_for(&self, methods: &[Method], record_path: bool) -> MemoryNeed {
        let mut need = self.memory_need(record_path);
        let bytes = |b: u128| u64::try_from(b).unwrap_or(u64::MAX);
        let plus = methods.iter().any(|m| m.walks_w_plus());
        let w = methods.iter().any(|m| m.walks(crate::Tiebreak::First));
        let cpu = Cpu::detect();
        let (shared, per_thread) = self
            .walk_layouts(cpu)
            .map(|windows| Kernels::on_layout(&self.board, &self.moves, cpu, windows).walk_bytes(plus, w))
            .fold((0, 0), |(s, t), (s2, t2)| (s.max(s2), t.max(t2)));
        need.shared = need.shared.saturating_add(bytes(shared));
        need.per_thread = need.per_thread.saturating_add(bytes(per_thread));
        if methods.contains(&Method::Solve) {
            let padded = self.padded_cells();
            let solve = padded.saturating_mul(44).saturating_add(u128::from(self.board.cells()) * 32);
            let search = crate::solve::search_memory(self.board.cells(), u64::try_from(padded).unwrap_or(u64::MAX));
            let solve = u64::try_from(solve).unwrap_or(u64::MAX).saturating_add(search);
            need.per_thread = need.per_thread.saturating_add(solve);
            need.shared = need.shared.saturating_add(crate::solve::shared_memory(&self.board, &self.moves));
        }
        need
    }

    /// Cells of the padded layout, border included (of the larger, where a
    /// runner times which to take: [`Configuration::walk_layouts`]).
    pub(crate) fn padded_cells(&self) -> u128 {
        self.walk_layouts(Cpu::detect())
            .map(|windows| crate::walk::select::tile_bits(&self.board, windows))
            .map(|tile_bits| crate::layout::padded_len(&self.board, &self.moves, tile_bits))
            .max()
            .unwrap_or(0)
    }

    /// The layouts a runner on this machine may walk: the window scans'
    /// (a row-major board) or the tiles, or past a size whichever times
    /// faster (`runner::layout_choice`); a need for memory covers each.
    fn walk_layouts(&self, cpu: Cpu) -> impl Iterator<Item = Option<crate::walk::w_3d_scaled::Scan>> {
        crate::walk::select::layout_choice(&self.board, &self.moves, cpu).layouts()
    }

    /// Which cells may start a tour.
    pub fn eligibility(&self) -> Eligibility {
        match self.moves.colouring() {
            _ if self.board.cells() == 1 => Eligibility::All,
            Colouring::NeverChanges => Eligibility::Impossible,
            Colouring::AlwaysChanges if self.board.cells() % 2 == 1 => Eligibility::EvenSum,
            _ => Eligibility::All,
        }
    }

    /// Number of eligible starts.
    pub fn eligible_count(&self) -> u64 {
        match self.eligibility() {
            Eligibility::All => self.board.cells(),
            // An odd cell count means every side is odd, so every stride is odd
            // and a cell's index has the parity of its coordinate sum.
            Eligibility::EvenSum => self.board.cells().div_ceil(2),
            Eligibility::Impossible => 0,
        }
    }

    /// The `rank`-th eligible cell in index order.
    fn eligible_cell(&self, rank: u64) -> u64 {
        match self.eligibility() {
            Eligibility::EvenSum => 2 * rank,
            _ => rank,
        }
    }

    /// True when a tour may start at cell `index`.
    pub fn is_eligible(&self, index: u64) -> bool {
        self.eligibility().admits(index, self.board.cells())
    }

    /// The starts a sweep with seed `sweep_seed` and `per_config` starts per
    /// configuration uses: every eligible start when there are at most
    /// `per_config`, else `per_config` distinct ones drawn uniformly (Floyd's
    /// algorithm on a stream seeded from the sweep seed and this
    /// configuration). Empty for an impossible configuration.
    pub fn starts(&self, per_config: u64, sweep_seed: u64) -> Result<Starts> {
        if per_config > MAX_STARTS {
            return Err(Error::TooManyStarts { requested: per_config, max: MAX_STARTS });
        }
        let eligible = self.eligible_count();
        if eligible <= per_config {
            let cells = (0..eligible).map(|r| self.eligible_cell(r)).collect();
            return Ok(Starts { exhaustive: true, cells });
        }
        let mut rng = Rng::new(self.hash_into(SeedHasher::new(sweep_seed, b"starts")).finish());
        let mut chosen: HashSet<u64> = HashSet::with_capacity(per_config as usize);
        for j in eligible - per_config..eligible {
            let t = rng.below(j + 1);
            if !chosen.insert(t) {
                chosen.insert(j);
            }
        }
        let mut cells: Vec<u64> = chosen.into_iter().map(|r| self.eligible_cell(r)).collect();
        cells.sort_unstable();
        Ok(Starts { exhaustive: false, cells })
    }

    /// The same starts as [`Configuration::starts`], in the order a sweep
    /// with adaptive precision runs them: a Fisher-Yates shuffle on a stream
    /// seeded from the sweep seed and this configuration, so every prefix is
    /// a uniform sample of the eligible cells (the sorted list's prefixes
    /// are not) and a cell stopped after `n` starts has run the first `n`.
    pub fn starts_in_order(&self, per_config: u64, sweep_seed: u64) -> Result<Starts> {
        let mut starts = self.starts(per_config, sweep_seed)?;
        let mut rng = Rng::new(self.hash_into(SeedHasher::new(sweep_seed, b"start order")).finish());
        for i in (1..starts.cells.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            starts.cells.swap(i, j);
        }
        Ok(starts)
    }

    /// The seed of one task: (sweep seed, configuration, start, method). It
    /// does not depend on sharding, worker count or order.
    pub fn task_seed(&self, sweep_seed: u64, start: u64, method: Method) -> u64 {
        let mut h = self.hash_into(SeedHasher::new(sweep_seed, b"task"));
        h.word(start).bytes(method.name().as_bytes());
        h.finish()
    }

    /// Feeds the configuration's identity (shape, then rule or move list).
    fn hash_into(&self, mut h: SeedHasher) -> SeedHasher {
        h.word(self.board.dims() as u64);
        for &n in self.board.sides() {
            h.word(n as u64);
        }
        match self.moves.source() {
            MoveSource::Rule(rule) => {
                h.word(1).word(rule.len() as u64);
                for &a in rule {
                    h.word(a as u64);
                }
            }
            MoveSource::Explicit => {
                h.word(2).word(self.moves.len() as u64);
                for mv in self.moves.iter() {
                    for &c in mv {
                        h.word(c as i64 as u64);
                    }
                }
            }
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(rule: &[u32], sides: &[u32]) -> Configuration {
        Configuration::new(Board::new(sides).unwrap(), Moves::from_rule(rule, sides.len()).unwrap()).unwrap()
    }

    #[test]
    fn colour_rule() {
        assert_eq!(cfg(&[2, 1], &[5, 5]).eligibility(), Eligibility::EvenSum);
        assert_eq!(cfg(&[2, 1], &[5, 6]).eligibility(), Eligibility::All);
        assert_eq!(cfg(&[3, 1], &[6, 6]).eligibility(), Eligibility::Impossible);
        assert_eq!(cfg(&[3, 1], &[1, 1]).eligibility(), Eligibility::All);
        let c = cfg(&[2, 1], &[5, 7, 3]);
        assert_eq!(c.eligible_count(), 53);
        for i in 0..c.board().cells() {
            let sum: u32 = c.board().coords(i).iter().sum();
            assert_eq!(c.is_eligible(i), sum.is_multiple_of(2), "cell {i}");
        }
    }

    #[test]
    fn starts_in_order_are_the_same_cells_shuffled() {
        for (sides, s) in [(&[5u32, 5][..], 100), (&[8, 8][..], 20), (&[12, 9][..], 50)] {
            let c = cfg(&[2, 1], sides);
            let mut ordered = c.starts_in_order(s, 7).unwrap().cells;
            assert_eq!(ordered, c.starts_in_order(s, 7).unwrap().cells, "deterministic");
            assert_ne!(ordered, c.starts(s, 7).unwrap().cells, "shuffled");
            ordered.sort_unstable();
            assert_eq!(ordered, c.starts(s, 7).unwrap().cells, "the same cells");
        }
    }

    #[test]
    fn exhaustive_and_sampled_starts() {
        let c = cfg(&[2, 1], &[5, 5]);
        let all = c.starts(100, 7).unwrap();
        assert!(all.exhaustive);
        assert_eq!(all.cells.len(), 13);
        assert!(all.cells.iter().all(|&i| c.is_eligible(i)));

        let big = cfg(&[2, 1], &[31, 31]);
        let s = big.starts(100, 7).unwrap();
        assert!(!s.exhaustive);
        assert_eq!(s.cells.len(), 100);
        assert!(s.cells.windows(2).all(|w| w[0] < w[1]), "sorted and distinct");
        assert!(s.cells.iter().all(|&i| big.is_eligible(i)));
        assert_eq!(s, big.starts(100, 7).unwrap(), "same seed, same starts");
        assert_ne!(s, big.starts(100, 8).unwrap(), "another seed, other starts");
        assert_ne!(s.cells, cfg(&[2, 1], &[31, 33]).starts(100, 7).unwrap().cells);
    }

    #[test]
    fn task_seeds_depend_on_every_part() {
        let c = cfg(&[2, 1], &[8, 8]);
        let base = c.task_seed(1, 5, Method::Wr);
        assert_ne!(base, c.task_seed(2, 5, Method::Wr));
        assert_ne!(base, c.task_seed(1, 6, Method::Wr));
        assert_ne!(base, c.task_seed(1, 5, Method::WrPlus));
        assert_ne!(base, cfg(&[2, 1], &[8, 9]).task_seed(1, 5, Method::Wr));
        assert_ne!(base, cfg(&[1, 2], &[8, 8]).task_seed(1, 5, Method::Wr));
    }

    #[test]
    fn too_many_starts_is_refused() {
        let e = cfg(&[2, 1], &[8, 8]).starts(MAX_STARTS + 1, 0).unwrap_err();
        assert_eq!(e.field(), "starts");
    }
}
