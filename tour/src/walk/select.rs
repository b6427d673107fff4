//! Which kernels a configuration's walks run on, decided once from the
//! board, the move set and the CPU, with the memory each needs. The solver,
//! the batches of walks advancing together and
//! [`crate::Configuration::memory_need_for`] all ask this module; a new
//! kernel is a new case here.

use crate::board::Board;
use crate::layout;
use crate::moves::Moves;
use crate::walk::{distance_cells, sse_windows, w_3d_scaled, DegreeKernel, Tiebreak};

/// The CPU features the kernels use. A feature is on only where the CPU
/// running this has it ([`Cpu::detect`]); tests turn features off to run
/// the fallback kernels on any machine, never on. Setting the environment
/// variable `KSWEEP_NO_SIMD` (see [`NO_SIMD_VAR`]) turns every feature off
/// for the whole process, so a whole test suite or sweep runs the scalar
/// kernels (docs/engine.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cpu {
    /// x86-64 SSE4.1 with SSSE3 (`phminposuw`, `pshufb`).
    sse41: bool,
}

/// The environment variable that, set to any non-empty value, makes
/// [`Cpu::detect`] report no SIMD feature: the walks take the scalar
/// kernels. Read once per process.
pub(crate) const NO_SIMD_VAR: &str = "KSWEEP_NO_SIMD";

impl Cpu {
    /// The features of the CPU running this, none where [`NO_SIMD_VAR`]
    /// is set. Detected (and the variable read) once per process.
    pub(crate) fn detect() -> Cpu {
        static DETECTED: std::sync::OnceLock<Cpu> = std::sync::OnceLock::new();
        *DETECTED.get_or_init(|| Cpu::detect_with(std::env::var_os(NO_SIMD_VAR).as_deref()))
    }

    /// The features of the CPU running this, none where `no_simd` (the
    /// value of [`NO_SIMD_VAR`]) is set and not empty.
    fn detect_with(no_simd: Option<&std::ffi::OsStr>) -> Cpu {
        let simd_off = no_simd.is_some_and(|v| !v.is_empty());
        #[cfg(target_arch = "x86_64")]
        let sse41 = std::arch::is_x86_feature_detected!("sse4.1") && std::arch::is_x86_feature_detected!("ssse3");
        #[cfg(not(target_arch = "x86_64"))]
        let sse41 = false;
        Cpu { sse41: sse41 && !simd_off }
    }

    /// The names of the features on, as a result's provenance records
    /// them.
    pub(crate) fn names(self) -> Vec<&'static str> {
        if self.sse41 {
            vec!["sse4.1", "ssse3"]
        } else {
            Vec::new()
        }
    }

    /// This CPU with SSE4.1 and SSSE3 turned off: walks take the scalar
    /// kernels.
    #[cfg(test)]
    pub(crate) fn without_sse41(self) -> Cpu {
        Cpu { sse41: false }
    }

    /// Every feature set a test can run on this machine: the detected one
    /// and each with a feature turned off.
    #[cfg(test)]
    pub(crate) fn feature_sets() -> Vec<Cpu> {
        let cpu = Cpu::detect();
        let mut out = vec![cpu, cpu.without_sse41()];
        out.dedup();
        out
    }

    /// Whether SSE4.1 and SSSE3 may be used: true only where the CPU has
    /// them.
    pub(crate) fn has_sse41(self) -> bool {
        self.sse41
    }
}

/// A kernel on which several tasks' walks advance together, a step of each
/// in turn ([`crate::Solver::run_tasks`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GroupKernel {
    /// W+ on 16-bit cells ([`sse_windows::WPlusTables`]): 2D leapers, SSE4.1, up to
    /// [`sse_windows::WALKS_AT_ONCE`] walks at once.
    WPlusWindows,
    /// Rule W on byte degrees ([`sse_windows::w_bytes::WTables`]): 2D leapers,
    /// SSE4.1, up to [`sse_windows::WALKS_AT_ONCE`] walks at once.
    WWindows,
    /// W+ on cells that carry their distance ([`distance_cells::Pointers`]):
    /// 2D, 8 moves, two walks at once.
    WPlusDistanceCells,
    /// Rule W on degrees scaled by four ([`w_3d_scaled::Pointers`]): 3D, 24
    /// moves, two walks at once.
    WScaled3d,
}

impl GroupKernel {
    /// Whether a group of one walk of this kernel runs on the kernel's lone
    /// loop rather than the group's.
    pub(crate) fn pairs_only(self) -> bool {
        matches!(self, GroupKernel::WPlusDistanceCells | GroupKernel::WScaled3d)
    }
}

/// Largest padded board whose rule-W walks advance together: a group costs a
/// thread more degree buffers, which on huge boards would rather go to
/// another thread's walk.
pub(crate) const GROUPED_DEGREES_MAX: u128 = 1 << 28;

/// The kernels of one configuration's walks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Kernels {
    /// W+ walks' own kernel (alone and together), or `None` for the byte
    /// degrees' ([`super::walk`]).
    w_plus: Option<GroupKernel>,
    /// The kernel rule-W walks advance together on, or `None` where they
    /// run alone on byte degrees.
    w_grouped: Option<GroupKernel>,
    /// Cells of the padded layout.
    padded: u128,
    /// The kernel of walks on the degree buffer, by tiebreak (in
    /// [`TIEBREAKS`] order).
    degrees: [DegreeKernel; 4],
}

/// Every tiebreak, in the order [`Kernels`] keeps their degree kernels.
const TIEBREAKS: [Tiebreak; 4] = [Tiebreak::First, Tiebreak::Distance, Tiebreak::Random, Tiebreak::DistanceRandom];

/// The kernel walks of `tiebreak` on the degrees of `board` (of `padded`
/// cells) take, `symmetric` if `moves` is closed under negation: the keyed kernel for byte degrees, a move set closed under
/// negation and a deterministic tiebreak, where its keys hold the board;
/// the generic kernel elsewhere.
fn degree_kernel(board: &Board, moves: &Moves, symmetric: bool, padded: u128, tiebreak: Tiebreak) -> DegreeKernel {
    use super::{BIAS, KEYED_MAX_MOVES, KEY_PACKED, KEY_PLUS, KEY_W, KEY_W_SMALL, PACKED_BIAS};
    let narrow = moves.len() < u8::MAX as usize;
    if narrow && symmetric && moves.len() <= KEYED_MAX_MOVES {
        let holds = |key| super::key_holds_cells(key, padded);
        let key = match tiebreak {
            Tiebreak::First if holds(KEY_W) => Some(KEY_W),
            Tiebreak::First => Some(KEY_W_SMALL),
            Tiebreak::Distance => {
                let bound = distance_bound(board, moves);
                if bound < PACKED_BIAS as u128 && holds(KEY_PACKED) {
                    Some(KEY_PACKED)
                } else {
                    (bound < BIAS as u128).then_some(KEY_PLUS)
                }
            }
            _ => None,
        };
        if let Some(key) = key {
            return DegreeKernel::Keyed(key);
        }
    }
    DegreeKernel::Generic { tiebreak, symmetric, branch_free: moves.len() > super::BRANCH_FREE_MIN_MOVES }
}

/// A bound on |rel| (see [`super::walk_keyed`]) over the board:
/// D * reach * (longest side + reach).
fn distance_bound(board: &Board, moves: &Moves) -> u128 {
    let reach = u128::from(moves.reach());
    let side = board.sides().iter().copied().max().map_or(0, u128::from);
    (board.dims() as u128) * reach * (side + reach)
}

impl Kernels {
    /// The kernels walks on `board` with `moves` use on `cpu`.
    pub(crate) fn choose(board: &Board, moves: &Moves, cpu: Cpu) -> Kernels {
        let tile_bits = layout::walk_tile_bits(board.dims());
        let padded = layout::padded_len(board.sides().iter().map(|&n| u64::from(n)), moves.reach(), tile_bits);
        let w_plus = if sse_windows::fits(board, moves, cpu) {
            Some(GroupKernel::WPlusWindows)
        } else if distance_cells::fits(board, moves) {
            Some(GroupKernel::WPlusDistanceCells)
        } else {
            None
        };
        let w_grouped = if padded > GROUPED_DEGREES_MAX {
            None
        } else if w_3d_scaled::fits(board, moves) {
            Some(GroupKernel::WScaled3d)
        } else if sse_windows::w_bytes::fits(board, moves, cpu) {
            Some(GroupKernel::WWindows)
        } else {
            None
        };
        let symmetric = moves.closed_under_negation();
        let degrees = TIEBREAKS.map(|t| degree_kernel(board, moves, symmetric, padded, t));
        Kernels { w_plus, w_grouped, padded, degrees }
    }

    /// The kernel of walks of `tiebreak` on the degree buffer.
    pub(crate) fn degree_kernel(&self, tiebreak: Tiebreak) -> DegreeKernel {
        let at = TIEBREAKS.iter().position(|&t| t == tiebreak).expect("every tiebreak");
        self.degrees[at]
    }

    /// The kernel of W+ walks, `None` for the byte degrees'.
    pub(crate) fn w_plus(&self) -> Option<GroupKernel> {
        self.w_plus
    }

    /// The kernel rule-W walks advance together on, if any.
    pub(crate) fn w_grouped(&self) -> Option<GroupKernel> {
        self.w_grouped
    }

    /// The kernel a walk of this tiebreak advances together on, if any.
    pub(crate) fn grouped(&self, tiebreak: Tiebreak) -> Option<GroupKernel> {
        match tiebreak {
            Tiebreak::Distance => self.w_plus,
            Tiebreak::First => self.w_grouped,
            _ => None,
        }
    }

    /// Walks that advance together at most, and so a batch's slots.
    pub(crate) fn walks_at_once(&self) -> usize {
        let windows = |k: Option<GroupKernel>| matches!(k, Some(GroupKernel::WPlusWindows | GroupKernel::WWindows));
        if windows(self.w_plus) || windows(self.w_grouped) {
            sse_windows::WALKS_AT_ONCE
        } else {
            2
        }
    }

    /// Whether each slot of a batch walks on degrees of its own (where
    /// rule-W walks pause to advance together).
    pub(crate) fn slot_degrees(&self) -> bool {
        self.w_grouped.is_some()
    }

    /// Bytes W+ walks add to the degrees: (shared, a thread). 16-bit cells:
    /// the starting ones and the tables shared, and a thread's working copy
    /// for each walk it advances together; keyed cells, 4 bytes a padded
    /// cell, the starting ones shared and a thread's two working copies.
    pub(crate) fn w_plus_bytes(&self) -> (u128, u128) {
        let padded = self.padded;
        match self.w_plus {
            Some(GroupKernel::WPlusWindows) => (
                sse_windows::shared_bytes(padded),
                sse_windows::cell_bytes(padded).saturating_mul(sse_windows::WALKS_AT_ONCE as u128),
            ),
            Some(GroupKernel::WPlusDistanceCells) => (padded.saturating_mul(4), padded.saturating_mul(8)),
            _ => (0, 0),
        }
    }

    /// Bytes rule-W walks add a thread: the other slots' byte degrees, one
    /// more (3D pairs) or five (2D windows).
    pub(crate) fn w_bytes(&self) -> u128 {
        let more = match self.w_grouped {
            Some(GroupKernel::WScaled3d) => 1,
            Some(GroupKernel::WWindows) => sse_windows::WALKS_AT_ONCE as u128 - 1,
            _ => 0,
        };
        self.padded.saturating_mul(more)
    }
}

#[cfg(test)]
mod tests {
    use super::{Cpu, GroupKernel, Kernels};
    use crate::{Board, Configuration, Method, Moves, Solver, Task, TaskOptions, TaskResult};

    fn config(rule: &[u32], sides: &[u32]) -> Configuration {
        Configuration::new(Board::new(sides).unwrap(), Moves::from_rule(rule, sides.len()).unwrap()).unwrap()
    }

    #[test]
    fn the_no_simd_variable_turns_every_feature_off() {
        use std::ffi::OsStr;
        let on = Cpu::detect_with(None);
        assert_eq!(Cpu::detect_with(Some(OsStr::new(""))), on, "an empty value changes nothing");
        assert_eq!(Cpu::detect_with(Some(OsStr::new("1"))), on.without_sse41());
        assert_eq!(Cpu::detect_with(Some(OsStr::new("no"))), on.without_sse41(), "any value");
        // What this process runs on: `KSWEEP_NO_SIMD=1 cargo test` runs the
        // scalar kernels everywhere, and solvers choose them.
        let set = std::env::var_os(super::NO_SIMD_VAR).is_some_and(|v| !v.is_empty());
        assert_eq!(Cpu::detect(), if set { on.without_sse41() } else { on });
        if set {
            let solver = Solver::new(config(&[3, 2], &[30, 30])).unwrap();
            assert_eq!(solver.kernels().w_plus(), Some(GroupKernel::WPlusDistanceCells));
            assert_eq!(solver.kernels().w_grouped(), None);
        }
    }

    #[test]
    fn walks_on_degrees_take_the_keyed_kernel_where_its_keys_hold_and_the_generic_one_elsewhere() {
        use crate::walk::{DegreeKernel, Tiebreak, KEY_PACKED, KEY_W};
        let generic = |tiebreak, branch_free| DegreeKernel::Generic { tiebreak, symmetric: true, branch_free };
        let c = config(&[2, 1], &[8, 8]);
        let k = Kernels::choose(c.board(), c.moves(), Cpu::detect());
        assert_eq!(k.degree_kernel(Tiebreak::First), DegreeKernel::Keyed(KEY_W));
        assert_eq!(k.degree_kernel(Tiebreak::Distance), DegreeKernel::Keyed(KEY_PACKED));
        assert_eq!(k.degree_kernel(Tiebreak::Random), generic(Tiebreak::Random, false));
        assert_eq!(k.degree_kernel(Tiebreak::DistanceRandom), generic(Tiebreak::DistanceRandom, false));
        // 256 moves in 8D: 16-bit degrees, and rule W picks branch-free.
        let c = config(&[1; 8], &[3; 8]);
        let k = Kernels::choose(c.board(), c.moves(), Cpu::detect());
        assert_eq!(k.degree_kernel(Tiebreak::First), generic(Tiebreak::First, true));
        assert_eq!(k.degree_kernel(Tiebreak::Distance), generic(Tiebreak::Distance, true));
    }

    #[test]
    fn without_sse41_the_scalar_kernels_are_chosen() {
        let c = config(&[3, 2], &[30, 30]);
        let scalar = Kernels::choose(c.board(), c.moves(), Cpu::detect().without_sse41());
        assert_eq!(scalar.w_plus(), Some(GroupKernel::WPlusDistanceCells));
        assert_eq!((scalar.w_grouped(), scalar.walks_at_once()), (None, 2));
        let c = config(&[2, 1], &[6, 6, 6]);
        for cpu in Cpu::feature_sets() {
            let k = Kernels::choose(c.board(), c.moves(), cpu);
            assert_eq!((k.w_plus(), k.w_grouped()), (None, Some(GroupKernel::WScaled3d)));
        }
    }

    /// A task's figures: everything but the time.
    fn figures(r: &TaskResult) -> (bool, u32, u64) {
        (r.success, r.attempts, r.visited)
    }

    #[test]
    fn every_feature_set_gives_the_same_figures_alone_and_in_batches() {
        let cases: [(&[u32], &[u32], &[Method]); 5] = [
            (&[3, 2], &[30, 30], &[Method::AwPlus, Method::Mw, Method::Aw]),
            (&[2, 1], &[40, 40], &[Method::Aw, Method::WPlus, Method::Mw]),
            (&[4, 1], &[30, 30], &[Method::AwPlus, Method::Aw]),
            (&[2, 1], &[8, 8, 8], &[Method::Aw, Method::Mw]),
            (&[2, 1], &[7, 7], &[Method::AwPlus, Method::Aw]),
        ];
        let mut kernels_seen = Vec::new();
        for (rule, sides, methods) in cases {
            let c = config(rule, sides);
            let tasks: Vec<Task> = methods
                .iter()
                .flat_map(|&method| {
                    (0..c.board().cells()).step_by(3).map(move |start| Task {
                        start,
                        method,
                        options: TaskOptions::default(),
                    })
                })
                .collect();
            let mut expected: Option<Vec<(bool, u32, u64)>> = None;
            for cpu in Cpu::feature_sets() {
                let solver = Solver::on_cpu(c.clone(), cpu).unwrap();
                kernels_seen.push(solver.kernels());
                let mut ws = solver.workspace();
                let batch: Vec<_> = solver.run_tasks(&mut ws, &tasks).iter().map(figures).collect();
                let alone: Vec<_> =
                    tasks.iter().map(|t| figures(&solver.run_task(&mut ws, t.start, t.method, &t.options))).collect();
                assert_eq!(batch, alone, "{rule:?} {sides:?} {cpu:?}");
                let expected = expected.get_or_insert(batch.clone());
                assert_eq!(&batch, expected, "{rule:?} {sides:?} {cpu:?}");
            }
        }
        // The fallback kernels ran, whatever this machine has.
        assert!(kernels_seen.iter().any(|k| k.w_plus() == Some(GroupKernel::WPlusDistanceCells)));
        assert!(kernels_seen.iter().any(|k| k.w_grouped() == Some(GroupKernel::WScaled3d)));
    }
}
