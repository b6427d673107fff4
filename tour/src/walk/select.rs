//! Which kernels a configuration's walks run on, decided once from the
//! board, the move set and the CPU, with the memory each needs, and the one
//! table from each choice to its kernel ([`GroupKernel::visit`]) and to the
//! state its walks keep ([`Tables`], [`Buffers`]). The runner, the batches
//! of walks advancing together and [`crate::Configuration::memory_need_for`]
//! all ask this module; a new kernel is a [`GroupWalk`] in a module of its
//! own and a new case here. The kernels never import this module.

use std::sync::OnceLock;

use super::cpu::Cpu;
use super::distance_cells::{DistanceCells, KeyedCells};
use super::kernel::{GroupWalk, WALKS_AT_ONCE};
use super::sse_windows::w_bytes::WTables;
use super::sse_windows::{WPlusTables, WindowCells};
use super::w_3d_scaled::{PlusShared, Rule, Scaled3d, ScaledPlus3d, Scan, ScanChoice};
use super::{distance_cells, sse_windows, w_3d_scaled, DegreeKernel, Tiebreak};
use crate::board::Board;
use crate::layout::{self, Layout, Padded};
use crate::moves::Moves;

/// A kernel on which several tasks' walks advance together, a step of each
/// in turn ([`crate::Runner::run_tasks`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum GroupKernel {
    /// W+ on 16-bit cells ([`WPlusTables`]): 2D leapers, SSE4.1, up to
    /// [`WALKS_AT_ONCE`] walks at once.
    WPlusWindows,
    /// Rule W on byte degrees ([`WTables`]): 2D leapers, SSE4.1, up to
    /// [`WALKS_AT_ONCE`] walks at once.
    WWindows,
    /// W+ on cells that carry their distance ([`DistanceCells`]): 2D, 8
    /// moves, two walks at once.
    WPlusDistanceCells,
    /// Rule W on degrees scaled by four ([`Scaled3d`]): 3D, 24 moves, two
    /// walks at once.
    WScaled3d,
    /// W+ on the same degrees and the row windows ([`ScaledPlus3d`]): 3D
    /// boards that take the window scan, two walks at once.
    WPlusScaled3d,
}

/// Code generic over the kernel a walk or group runs on, called through
/// [`GroupKernel::visit`]: a visitor rather than a closure, since its body
/// is generic.
pub(crate) trait Visit {
    type Out;
    fn visit<G: Held>(self) -> Self::Out;
}

impl GroupKernel {
    /// Runs `v` on this choice's kernel: the one place a choice becomes
    /// code, once per walk or group (the steps inside are monomorphised).
    pub(crate) fn visit<V: Visit>(self, v: V) -> V::Out {
        match self {
            GroupKernel::WPlusWindows => v.visit::<WPlusTables>(),
            GroupKernel::WWindows => v.visit::<WTables>(),
            GroupKernel::WPlusDistanceCells => v.visit::<DistanceCells>(),
            GroupKernel::WScaled3d => v.visit::<Scaled3d>(),
            GroupKernel::WPlusScaled3d => v.visit::<ScaledPlus3d>(),
        }
    }

    /// Walks of this kernel that advance together at most.
    pub(crate) fn at_once(self) -> usize {
        struct AtOnce;
        impl Visit for AtOnce {
            type Out = usize;
            fn visit<G: Held>(self) -> usize {
                G::AT_ONCE
            }
        }
        self.visit(AtOnce)
    }

    /// Bytes its walks add on a board of `padded` cells ([`GroupWalk::need`]).
    fn need(self, padded: u128) -> (u128, u128) {
        struct Need(u128);
        impl Visit for Need {
            type Out = (u128, u128);
            fn visit<G: Held>(self) -> (u128, u128) {
                G::need(self.0)
            }
        }
        self.visit(Need(padded))
    }
}

/// Where a [`GroupWalk`]'s state lives: its shared state in a runner's
/// [`Tables`], its walks' cells in a thread's [`Buffers`].
pub(crate) trait Held: GroupWalk {
    /// The kernel's shared state, once built.
    fn cell(tables: &Tables) -> &OnceLock<Self::Shared>;

    /// Each slot's cells in order: slot `i`'s walks take the `i`th. Kernels
    /// on byte degrees take `own`, the workspace's, for slot 0.
    fn slots<'a>(
        buffers: &'a mut Buffers,
        own: &'a mut Padded<u8>,
    ) -> impl Iterator<Item = &'a mut Padded<Self::Cell, Self::Kind>>;
}

impl Held for WPlusTables {
    fn cell(tables: &Tables) -> &OnceLock<WPlusTables> {
        &tables.w_plus_windows
    }

    fn slots<'a>(b: &'a mut Buffers, _: &'a mut Padded<u8>) -> impl Iterator<Item = &'a mut Padded<u16, WindowCells>> {
        b.window_cells.iter_mut()
    }
}

impl Held for WTables {
    fn cell(tables: &Tables) -> &OnceLock<WTables> {
        &tables.w_windows
    }

    fn slots<'a>(b: &'a mut Buffers, own: &'a mut Padded<u8>) -> impl Iterator<Item = &'a mut Padded<u8>> {
        std::iter::once(own).chain(b.degrees.iter_mut())
    }
}

impl Held for DistanceCells {
    fn cell(tables: &Tables) -> &OnceLock<Padded<u32, KeyedCells>> {
        &tables.keyed
    }

    fn slots<'a>(b: &'a mut Buffers, _: &'a mut Padded<u8>) -> impl Iterator<Item = &'a mut Padded<u32, KeyedCells>> {
        b.keyed.iter_mut()
    }
}

impl Held for Scaled3d {
    fn cell(tables: &Tables) -> &OnceLock<Scan> {
        &tables.scaled
    }

    fn slots<'a>(b: &'a mut Buffers, own: &'a mut Padded<u8>) -> impl Iterator<Item = &'a mut Padded<u8>> {
        std::iter::once(own).chain(b.degrees.iter_mut())
    }
}

impl Held for ScaledPlus3d {
    fn cell(tables: &Tables) -> &OnceLock<PlusShared> {
        &tables.scaled_plus
    }

    fn slots<'a>(b: &'a mut Buffers, own: &'a mut Padded<u8>) -> impl Iterator<Item = &'a mut Padded<u8>> {
        std::iter::once(own).chain(b.degrees.iter_mut())
    }
}

/// What a configuration's group kernels share, each built by the first
/// walk that needs it (W-only sweeps never pay for W+'s cells).
#[derive(Debug, Default)]
pub(crate) struct Tables {
    w_plus_windows: OnceLock<WPlusTables>,
    w_windows: OnceLock<WTables>,
    /// Starting keyed cells.
    keyed: OnceLock<Padded<u32, KeyedCells>>,
    scaled: OnceLock<Scan>,
    scaled_plus: OnceLock<PlusShared>,
}

impl Tables {
    /// Kernel `G`'s shared state for `layout`, its `moves` and byte
    /// `degrees` on `cpu`, built on first use.
    pub(crate) fn get<G: Held>(&self, layout: &Layout, moves: &Moves, degrees: &Padded<u8>, cpu: Cpu) -> &G::Shared {
        G::cell(self).get_or_init(|| G::shared(layout, moves, degrees, cpu))
    }

    /// Bytes of board state built so far.
    pub(crate) fn bytes(&self) -> usize {
        fn of<G: Held>(t: &Tables) -> usize {
            G::cell(t).get().map_or(0, G::shared_bytes)
        }
        of::<WPlusTables>(self)
            + of::<WTables>(self)
            + of::<DistanceCells>(self)
            + of::<Scaled3d>(self)
            + of::<ScaledPlus3d>(self)
    }
}

/// A thread's cells for walks advancing together, empty until used: each
/// slot of a batch walks on cells of its own, so a walk paused in one slot
/// is never touched by another's.
#[derive(Debug, Default)]
pub(crate) struct Buffers {
    /// Byte degrees of slots 1 on, where rule-W walks pause (slot 0 walks
    /// on the workspace's own).
    degrees: [Padded<u8>; WALKS_AT_ONCE - 1],
    /// 16-bit cells of each slot; the first also a lone W+ walk's.
    window_cells: [Padded<u16, WindowCells>; WALKS_AT_ONCE],
    /// Keyed cells of the two slots; the first also a lone W+ walk's.
    keyed: [Padded<u32, KeyedCells>; 2],
}

impl Buffers {
    /// Bytes of board state these hold.
    pub(crate) fn bytes(&self) -> usize {
        self.degrees.iter().map(Padded::bytes).sum::<usize>()
            + self.window_cells.iter().map(Padded::bytes).sum::<usize>()
            + self.keyed.iter().map(Padded::bytes).sum::<usize>()
    }

    /// Slot `slot`'s byte degrees: its own where rule-W walks pause
    /// (`own_degrees`), else the workspace's, `own`, which every walk on
    /// degrees then runs on to its end.
    pub(crate) fn degrees<'a>(
        &'a mut self,
        own: &'a mut Padded<u8>,
        slot: usize,
        own_degrees: bool,
    ) -> &'a mut Padded<u8> {
        if slot == 0 || !own_degrees {
            own
        } else {
            &mut self.degrees[slot - 1]
        }
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
/// cells) take, `symmetric` if `moves` is closed under negation: W and W+
/// on scaled degrees for the 24 moves of a 3D leaper; the keyed kernel for
/// byte degrees, a move set closed under negation and a deterministic
/// tiebreak, where its keys hold the board; the generic kernel elsewhere.
fn degree_kernel(
    board: &Board,
    moves: &Moves,
    (symmetric, padded): (bool, u128),
    tiebreak: Tiebreak,
    (cpu, windows): (Cpu, Option<Scan>),
) -> DegreeKernel {
    use super::keyed::{BIAS, KEYED_MAX_MOVES, KEY_PACKED, KEY_PLUS, KEY_W, KEY_W_SMALL, PACKED_BIAS};
    if w_3d_scaled::fits(board, moves) {
        match tiebreak {
            Tiebreak::First => {
                // A gather's lanes hold offsets of 32 bits, which a board
                // of fewer cells never exceeds.
                let fits = padded <= i32::MAX as u128;
                let scan = match windows {
                    Some(scan) => ScanChoice::Fixed(scan),
                    None if fits => ScanChoice::Fastest(cpu),
                    None => ScanChoice::Fixed(Scan::Scalar),
                };
                return DegreeKernel::Scaled3d(Rule::W(scan));
            }
            Tiebreak::Distance if w_3d_scaled::plus::fits(distance_bound(board, moves)) => {
                return DegreeKernel::Scaled3d(Rule::Plus(windows));
            }
            _ => {}
        }
    }
    let narrow = moves.len() < u8::MAX as usize;
    if narrow && symmetric && moves.len() <= KEYED_MAX_MOVES {
        let holds = |key| super::keyed::key_holds_cells(key, padded);
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

/// A bound on |rel| (see [`super::keyed::walk_keyed`]) over the board:
/// D * reach * (longest side + reach).
fn distance_bound(board: &Board, moves: &Moves) -> u128 {
    let reach = u128::from(moves.reach());
    let side = board.sides().iter().copied().max().map_or(0, u128::from);
    (board.dims() as u128) * reach * (side + reach)
}

/// Bits of each coordinate a tile of the walks' layout holds
/// ([`Layout::with_tiles`](crate::layout::Layout::with_tiles)): row-major
/// where rule W takes the window scan, which reads rows; else
/// [`layout::walk_tile_bits`].
#[cfg(test)]
pub(crate) fn walk_tile_bits(board: &Board, moves: &Moves, cpu: Cpu) -> u32 {
    tile_bits(board, w_3d_scaled::window_scan(board, moves, cpu))
}

/// [`walk_tile_bits`] where the window scan the walks take, if any, is
/// known (a runner times whether to take it: `runner::layout_choice`).
pub(crate) fn tile_bits(board: &Board, windows: Option<Scan>) -> u32 {
    if windows.is_some() {
        0
    } else {
        layout::walk_tile_bits(board.dims())
    }
}

/// How a runner (`runner::layout_choice`) comes by the layout of a board:
/// row-major where its rule-W walks take a window scan, else tiled.
#[derive(Debug, Clone, Copy)]
pub(crate) enum LayoutChoice {
    /// Always this one: the window scan, or the tiles (`None`).
    Fixed(Option<Scan>),
    /// The window scan or the tiles, whichever times faster.
    Timed(Scan),
}

impl LayoutChoice {
    /// The window scans the runner may take (`None`: the tiles), so that
    /// a need for memory covers each.
    pub(crate) fn layouts(self) -> impl Iterator<Item = Option<Scan>> {
        let (first, second) = match self {
            LayoutChoice::Fixed(windows) => (windows, None),
            LayoutChoice::Timed(scan) => (Some(scan), Some(None)),
        };
        std::iter::once(first).chain(second)
    }
}

/// How a runner of walks of `moves` on `board` on `cpu` comes by its
/// layout: the windows untimed up to [`w_3d_scaled::WINDOWS_UNTIMED_PADDED`]
/// padded cells, timed against the tiles past it where they fit.
pub(crate) fn layout_choice(board: &Board, moves: &Moves, cpu: Cpu) -> LayoutChoice {
    let Some(scan) = w_3d_scaled::window_scan(board, moves, cpu) else {
        return LayoutChoice::Fixed(None);
    };
    let padded = layout::padded_len(board, moves, 0);
    if padded <= w_3d_scaled::WINDOWS_UNTIMED_PADDED {
        LayoutChoice::Fixed(Some(scan))
    } else {
        LayoutChoice::Timed(scan)
    }
}

impl Kernels {
    /// The kernels walks on `board` with `moves` use on `cpu` where they
    /// take every window scan that fits.
    #[cfg(test)]
    pub(crate) fn choose(board: &Board, moves: &Moves, cpu: Cpu) -> Kernels {
        Kernels::on_layout(board, moves, cpu, w_3d_scaled::window_scan(board, moves, cpu))
    }

    /// The kernels where rule-W walks take the window scan `windows` (on a
    /// row-major layout), or none (on [`tile_bits`]' tiles).
    pub(crate) fn on_layout(board: &Board, moves: &Moves, cpu: Cpu, windows: Option<Scan>) -> Kernels {
        let tile_bits = tile_bits(board, windows);
        let padded = layout::padded_len(board, moves, tile_bits);
        let w_plus = if sse_windows::fits(board, moves, cpu) {
            Some(GroupKernel::WPlusWindows)
        } else if distance_cells::fits(board, moves) {
            Some(GroupKernel::WPlusDistanceCells)
        } else if padded <= GROUPED_DEGREES_MAX
            && windows.is_some()
            && w_3d_scaled::plus::fits(distance_bound(board, moves))
        {
            Some(GroupKernel::WPlusScaled3d)
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
        let degrees = TIEBREAKS.map(|t| degree_kernel(board, moves, (symmetric, padded), t, (cpu, windows)));
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
    #[cfg(test)]
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

    /// Walks that advance together at most.
    #[cfg(test)]
    pub(crate) fn walks_at_once(&self) -> usize {
        [self.w_plus, self.w_grouped].into_iter().flatten().map(GroupKernel::at_once).max().unwrap_or(2)
    }

    /// Whether each slot of a batch walks on degrees of its own (where
    /// rule-W walks, or W+ walks on the row windows, pause to advance
    /// together).
    pub(crate) fn slot_degrees(&self) -> bool {
        self.w_grouped.is_some() || self.w_plus == Some(GroupKernel::WPlusScaled3d)
    }

    /// Bytes the walks of W+ (`plus`) and of rule W (`w`) add to the
    /// degrees: (shared, a thread). W+ walks on cells of their own add
    /// those; rule-W walks that advance together, the other slots' byte
    /// degrees, which W+ walks on the row windows pause on too, so that a
    /// sweep of both counts them once.
    pub(crate) fn walk_bytes(&self, plus: bool, w: bool) -> (u128, u128) {
        let (shared, own) = match self.w_plus {
            Some(k) if plus => k.need(self.padded),
            _ => (0, 0),
        };
        let w_thread = match self.w_grouped {
            Some(k) if w => k.need(self.padded).1,
            _ => 0,
        };
        if plus && self.w_plus == Some(GroupKernel::WPlusScaled3d) {
            (shared, own.max(w_thread))
        } else {
            (shared, own + w_thread)
        }
    }
}
