//! Starts until the interval is tight: when a (configuration, method) cell
//! has enough starts for the precision a spec asks.
//!
//! A cell is looked at only at fixed checkpoints of its start sequence
//! (`min_starts`, then [`GROWTH`] times more each, then the cap), each time
//! from the complete results of that prefix, so the decision is the same
//! on any number of workers. Looking more than once and stopping when the
//! interval is narrow would make a plain 95 % interval too narrow (optional
//! stopping), so the error level is spent over the checkpoints (each look
//! gets a share of `1 - confidence` in proportion to its starts, see
//! [`Precision::checkpoints`]) and each look's interval is Clopper-Pearson,
//! whose coverage is at least its level for every true accuracy. By the
//! union bound the interval reported where a cell stops covers the true
//! accuracy with at least the stated confidence, whatever the stopping
//! rule; `tests` checks it by simulation across (0, 1), ends included.

use crate::error::SpecError;

/// Starts a cell gets before its first look, unless the spec says.
pub const DEFAULT_MIN_STARTS: u64 = 32;

/// How much each checkpoint exceeds the one before: small enough that a
/// cell overshoots the starts it needs by little, large enough that the
/// looks stay few.
pub const GROWTH: f64 = 1.5;

/// What a spec asks of every cell: a two-sided interval of half-width at
/// most `half_width` at `confidence`, from at least `min_starts` and at
/// most `cap` starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Precision {
    /// The half-width asked for, as a share (0.01 is one point).
    pub half_width: f64,
    /// The confidence the reported interval keeps, whatever the looks.
    pub confidence: f64,
    /// Starts before the first look.
    pub min_starts: u64,
    /// Starts a cell never goes past (the spec's `starts`).
    pub cap: u64,
    /// The looks, in order.
    looks: Vec<Checkpoint>,
}

/// One look of a schedule.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Checkpoint {
    /// Starts it looks at.
    starts: u64,
    /// The error level its interval spends.
    level: f64,
    /// A cell stops here when its successes are at most this many from 0
    /// or from `starts` (the interval is widest at `starts / 2` and
    /// narrows towards both ends); None when none does.
    stops_within: Option<u64>,
}

impl Checkpoint {
    fn new(starts: u64, level: f64, half_width: f64) -> Checkpoint {
        let narrow = |k: u64| {
            let (low, high) = clopper_pearson(k, starts, level);
            (high - low) / 2.0 <= half_width
        };
        // The largest k <= starts / 2 whose interval is narrow enough.
        let stops_within = narrow(0).then(|| {
            let (mut lo, mut hi) = (0, starts / 2);
            while lo < hi {
                let mid = (lo + hi).div_ceil(2);
                if narrow(mid) {
                    lo = mid;
                } else {
                    hi = mid - 1;
                }
            }
            lo
        });
        Checkpoint { starts, level, stops_within }
    }

    /// True when `successes` of its starts stop a cell.
    fn stops(&self, successes: u64) -> bool {
        let k = successes.min(self.starts - successes.min(self.starts));
        self.stops_within.is_some_and(|w| k <= w)
    }

    /// True when every outcome stops a cell.
    fn always_stops(&self) -> bool {
        self.stops_within.is_some_and(|w| w >= self.starts / 2)
    }
}

/// What a look at a checkpoint decides.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Look {
    /// The interval is tight enough (or the cap is reached): stop here.
    Stop {
        /// The interval, as shares, at this look's level.
        interval: (f64, f64),
        /// False when the cap stopped the cell short of the precision.
        reached: bool,
    },
    /// Run the starts up to this checkpoint, then look again.
    GoOnTo(u64),
}

impl Precision {
    /// Checks the spec's figures, naming the field and its limit, and
    /// lays out the looks ([`Precision::checkpoints`]).
    pub fn new(half_width: f64, confidence: f64, min_starts: u64, cap: u64) -> Result<Precision, SpecError> {
        Precision::check(half_width, confidence, min_starts, cap)?;
        let mut p = Precision { half_width, confidence, min_starts, cap, looks: Vec::new() };
        p.looks = p.lay_out_looks();
        Ok(p)
    }

    /// The checks of [`Precision::new`] without laying out the looks (which
    /// takes milliseconds): what a spec's check needs.
    pub fn check(half_width: f64, confidence: f64, min_starts: u64, cap: u64) -> Result<(), SpecError> {
        if !(half_width > 0.0 && half_width < 0.5) {
            return Err(SpecError::field(
                "precision",
                format!("{half_width} is not in (0, 0.5): a half-width as a share"),
            ));
        }
        if !(confidence > 0.0 && confidence < 1.0) {
            return Err(SpecError::field("confidence", format!("{confidence} is not in (0, 1)")));
        }
        if min_starts == 0 {
            return Err(SpecError::field("min_starts", "must be at least 1"));
        }
        if cap < min_starts {
            return Err(SpecError::field("starts", format!("the cap {cap} is below min_starts {min_starts}")));
        }
        Ok(())
    }

    /// The same precision for a configuration with only `count` starts.
    pub fn with_cap(&self, count: u64) -> Precision {
        let (min_starts, cap) = (self.min_starts.min(count), self.cap.min(count));
        if (min_starts, cap) == (self.min_starts, self.cap) {
            return self.clone();
        }
        // A schedule that ends where every cell stops, before `count`, is
        // the same under the lower cap.
        if let Some(last) = self.looks.last().filter(|c| c.always_stops() && c.starts <= count) {
            debug_assert!(last.starts <= cap && min_starts == self.min_starts);
            return Precision { cap, ..self.clone() };
        }
        let mut p = Precision { min_starts, cap, looks: Vec::new(), ..*self };
        p.looks = p.lay_out_looks();
        p
    }

    /// The looks and the error level each spends. Checkpoints grow by
    /// [`GROWTH`] from `min_starts` to the cap; the level `1 - confidence`
    /// is shared among them in proportion to their starts (a cell near 0
    /// or 1 stops early whatever its level, a cell near 1/2 late, where the
    /// level matters most); and the schedule ends at the first look where
    /// every outcome stops, since no cell can reach a later one, so a
    /// large cap costs no level.
    fn lay_out_looks(&self) -> Vec<Checkpoint> {
        let mut at = vec![self.min_starts];
        while let Some(&last) = at.last() {
            if last >= self.cap {
                break;
            }
            at.push(((last as f64 * GROWTH).ceil() as u64).max(last + 1).min(self.cap));
        }
        let alpha = 1.0 - self.confidence;
        loop {
            let total: f64 = at.iter().map(|&n| n as f64).sum();
            let looks: Vec<Checkpoint> =
                at.iter().map(|&n| Checkpoint::new(n, alpha * n as f64 / total, self.half_width)).collect();
            match looks.iter().position(Checkpoint::always_stops) {
                Some(k) if k + 1 < at.len() => at.truncate(k + 1),
                _ => return looks,
            }
        }
    }

    /// The checkpoints: `min_starts`, growing, to the cap or the first
    /// look where every cell stops.
    pub fn checkpoints(&self) -> Vec<u64> {
        self.looks.iter().map(|c| c.starts).collect()
    }

    /// The error level the look at `n` starts spends (the next look's
    /// between two, the last's past the schedule).
    pub fn level_at(&self, n: u64) -> f64 {
        let look = self.looks.iter().find(|c| c.starts >= n).or(self.looks.last());
        look.map_or(1.0 - self.confidence, |c| c.level)
    }

    /// The look at checkpoint `n` (one of [`Precision::checkpoints`]) with
    /// `successes` among its first `n` starts.
    pub fn look(&self, successes: u64, n: u64) -> Look {
        let interval = clopper_pearson(successes, n, self.level_at(n));
        let reached = match self.looks.iter().find(|c| c.starts == n) {
            Some(c) => c.stops(successes),
            None => (interval.1 - interval.0) / 2.0 <= self.half_width,
        };
        match self.looks.iter().find(|c| c.starts > n) {
            Some(next) if !reached => Look::GoOnTo(next.starts),
            _ => Look::Stop { interval, reached },
        }
    }
}

/// Where one (configuration, method) cell stands, from its results in
/// start order ([`Precision::standing`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Standing {
    /// Stopped after its first `n` starts: the table counts those only.
    Settled {
        /// Starts counted.
        n: u64,
        /// Successes among them.
        successes: u64,
        /// The interval at the stopping look's level (a point when `n` is
        /// every eligible cell).
        interval: (f64, f64),
        /// False when the cap stopped it short of the precision.
        reached: bool,
    },
    /// Its next look needs every start below `upto`; `n` of the first
    /// starts are complete (the last look's prefix).
    Going {
        /// The checkpoint it runs to.
        upto: u64,
        /// Starts of the last complete prefix looked at.
        n: u64,
        /// Successes among them.
        successes: u64,
    },
}

impl Standing {
    /// Starts the table counts: the settled prefix, or the complete one.
    pub fn counted(&self) -> (u64, u64) {
        match *self {
            Standing::Settled { n, successes, .. } | Standing::Going { n, successes, .. } => (n, successes),
        }
    }

    /// True once the cell stopped.
    pub fn is_settled(&self) -> bool {
        matches!(self, Standing::Settled { .. })
    }
}

impl Precision {
    /// Where a cell stands, given `result(i)`, the success flag of its
    /// start `i` (None while not in): it looks at each checkpoint whose
    /// prefix is complete, in order, and stops at the first that says so.
    /// `exhaustive` says the cap is every eligible cell, so the last look
    /// is the exact share, not an estimate. Results past the stopping
    /// checkpoint (a rerun, a reused result) never change it.
    pub fn standing(&self, exhaustive: bool, result: impl Fn(u64) -> Option<bool>) -> Standing {
        let (mut n, mut successes) = (0, 0);
        for checkpoint in self.checkpoints() {
            for i in n..checkpoint {
                match result(i) {
                    Some(ok) => successes += u64::from(ok),
                    None => return Standing::Going { upto: checkpoint, n, successes },
                }
            }
            n = checkpoint;
            if exhaustive && n == self.cap {
                let share = successes as f64 / n.max(1) as f64;
                return Standing::Settled { n, successes, interval: (share, share), reached: true };
            }
            if let Look::Stop { interval, reached } = self.look(successes, n) {
                return Standing::Settled { n, successes, interval, reached };
            }
        }
        Standing::Settled { n, successes, interval: clopper_pearson(successes, n, self.level_at(n)), reached: false }
    }

    /// The checkpoint a cell whose accuracy is `share` is expected to stop
    /// at: what progress estimates the remaining work from.
    pub fn expected_stop(&self, share: f64) -> u64 {
        self.looks
            .iter()
            .find(|c| c.stops((share.clamp(0.0, 1.0) * c.starts as f64).round() as u64))
            .map_or(self.cap, |c| c.starts)
    }
}

/// The Clopper-Pearson interval of `successes` in `n` trials, as shares,
/// with error level `alpha` split between the two tails: (0, 1) with no
/// trials.
pub fn clopper_pearson(successes: u64, n: u64, alpha: f64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let k = successes.min(n) as f64;
    let n = n as f64;
    let low = if k == 0.0 { 0.0 } else { beta_quantile(alpha / 2.0, k, n - k + 1.0) };
    let high = if k == n { 1.0 } else { beta_quantile(1.0 - alpha / 2.0, k + 1.0, n - k) };
    (low, high)
}

/// The x with I_x(a, b) = q, by bisection (I is increasing in x).
fn beta_quantile(q: f64, a: f64, b: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    // 64 halvings: well past a double's 53 bits of a share.
    for _ in 0..64 {
        let mid = (lo + hi) / 2.0;
        if incomplete_beta(mid, a, b) < q {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

/// The regularized incomplete beta function I_x(a, b), by its continued
/// fraction, on the side of x where it converges fast.
fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = a * x.ln() + b * (1.0 - x).ln() - ln_beta(a, b);
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_fraction(x, a, b) / a
    } else {
        1.0 - ln_front.exp() * beta_fraction(1.0 - x, b, a) / b
    }
}

/// The continued fraction 1 / (1 + d1 / (1 + d2 / ...)) of the incomplete
/// beta function, by the modified Lentz method.
fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let guard = |v: f64| if v.abs() < TINY { TINY } else { v };
    let mut c = 1.0;
    let mut d = 1.0 / guard(1.0 - (a + b) * x / (a + 1.0));
    let mut f = d;
    for m in 1..10_000 {
        let m = f64::from(m);
        // The even term d_2m, then the odd term d_2m+1.
        let even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        let odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        for term in [even, odd] {
            d = 1.0 / guard(1.0 + term * d);
            c = guard(1.0 + term / c);
            f *= c * d;
        }
        if (c * d - 1.0).abs() < 1e-15 {
            break;
        }
    }
    f
}

/// ln B(a, b).
fn ln_beta(a: f64, b: f64) -> f64 {
    ln_gamma(a) + ln_gamma(b) - ln_gamma(a + b)
}

/// ln Γ(x) for x > 0: Stirling's series from x >= 16 on, the recurrence
/// Γ(x + 1) = x Γ(x) below; about 1e-13 relative.
fn ln_gamma(mut x: f64) -> f64 {
    let mut shift = 0.0;
    while x < 16.0 {
        shift -= x.ln();
        x += 1.0;
    }
    let inv = 1.0 / x;
    let inv2 = inv * inv;
    let series = inv * (1.0 / 12.0 - inv2 * (1.0 / 360.0 - inv2 * (1.0 / 1260.0 - inv2 / 1680.0)));
    shift + (x - 0.5) * x.ln() - x + 0.5 * (2.0 * std::f64::consts::PI).ln() + series
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn nonsense_is_refused_naming_the_field() {
        let field = |r: Result<Precision, SpecError>| r.unwrap_err().to_string();
        assert!(field(Precision::new(0.0, 0.95, 32, 1000)).contains("precision"));
        assert!(field(Precision::new(0.5, 0.95, 32, 1000)).contains("precision"));
        assert!(field(Precision::new(0.01, 1.0, 32, 1000)).contains("confidence"));
        assert!(field(Precision::new(0.01, 0.95, 0, 1000)).contains("min_starts"));
        assert!(field(Precision::new(0.01, 0.95, 64, 32)).contains("starts"));
    }

    #[test]
    fn checkpoints_grow_to_the_cap_or_the_look_where_every_cell_stops() {
        let p = Precision::new(0.02, 0.95, 32, 1000).unwrap();
        assert_eq!(p.checkpoints(), [32, 48, 72, 108, 162, 243, 365, 548, 822, 1000]);
        assert_eq!(Precision::new(0.02, 0.95, 32, 32).unwrap().checkpoints(), [32]);
        // The levels add up to the error level, in proportion to the starts.
        let spent: f64 = p.checkpoints().iter().map(|&n| p.level_at(n)).sum();
        assert!((spent - 0.05).abs() < 1e-12, "{spent}");
        assert!((p.level_at(48) / p.level_at(32) - 1.5).abs() < 1e-12);
        // A cap of 10^6 stops where a cell at 1/2 must stop: no level spent past it.
        let wide = Precision::new(0.02, 0.95, 32, 1_000_000).unwrap();
        let last = *wide.checkpoints().last().unwrap();
        assert!(last < 10_000, "{:?}", wide.checkpoints());
        assert!(wide.looks.last().unwrap().always_stops());
        assert_eq!(wide.with_cap(1000).checkpoints(), p.checkpoints());
    }

    #[test]
    fn the_special_functions_match_known_values() {
        // Γ(5) = 24, Γ(0.5) = √π.
        assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-12);
        assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-12);
        // I_x(1, 1) = x; I_x(a, 1) = x^a; symmetry I_x(a, b) = 1 - I_{1-x}(b, a).
        assert!((incomplete_beta(0.3, 1.0, 1.0) - 0.3).abs() < 1e-12);
        assert!((incomplete_beta(0.7, 3.0, 1.0) - 0.343).abs() < 1e-12);
        assert!((incomplete_beta(0.2, 2.5, 7.0) + incomplete_beta(0.8, 7.0, 2.5) - 1.0).abs() < 1e-12);
        // Clopper-Pearson at 0 of n: the upper bound is 1 - (alpha/2)^(1/n).
        let (low, high) = clopper_pearson(0, 50, 0.05);
        assert_eq!(low, 0.0);
        assert!((high - (1.0 - 0.025f64.powf(1.0 / 50.0))).abs() < 1e-9, "{high}");
        // 5 of 10 at 95 %: (0.187086, 0.812914), as published tables give.
        let (low, high) = clopper_pearson(5, 10, 0.05);
        assert!((low - 0.187_086).abs() < 1e-5 && (high - 0.812_914).abs() < 1e-5, "{low} {high}");
    }

    /// A small deterministic generator (SplitMix64) for the simulation.
    fn uniform(state: &mut u64) -> f64 {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) as f64 / u64::MAX as f64
    }

    /// Runs one cell under `p`'s looks with true accuracy `truth`: its
    /// final interval and the starts it took. `seen` keeps the looks
    /// already computed, which many cells share.
    fn run_cell(p: &Precision, truth: f64, state: &mut u64, seen: &mut HashMap<(u64, u64), Look>) -> ((f64, f64), u64) {
        let (mut n, mut successes) = (0u64, 0u64);
        let mut target = p.min_starts;
        loop {
            while n < target {
                successes += u64::from(uniform(state) < truth);
                n += 1;
            }
            match *seen.entry((successes, n)).or_insert_with(|| p.look(successes, n)) {
                Look::Stop { interval, .. } => return (interval, n),
                Look::GoOnTo(next) => target = next,
            }
        }
    }

    /// Stopping on the interval keeps its coverage: across true accuracies
    /// from 0 to 1, the share of cells whose final interval holds the truth
    /// is at least the confidence asked.
    #[test]
    fn the_stopped_interval_keeps_its_coverage() {
        let p = Precision::new(0.05, 0.95, 16, 4096).unwrap();
        let (mut state, mut seen) = (61, HashMap::new());
        const CELLS: u32 = 2000;
        for truth in [0.0, 0.001, 0.01, 0.05, 0.1, 0.3, 0.5, 0.7, 0.9, 0.95, 0.99, 0.999, 1.0] {
            let mut covered = 0;
            for _ in 0..CELLS {
                let ((low, high), _) = run_cell(&p, truth, &mut state, &mut seen);
                covered += u32::from(low <= truth && truth <= high);
            }
            let share = f64::from(covered) / f64::from(CELLS);
            eprintln!("true accuracy {truth}: coverage {share}");
            assert!(share >= 0.95, "true accuracy {truth}: coverage {share}");
        }
    }

    /// Cells near 0 or 1 stop early; one near a half runs on.
    #[test]
    fn work_goes_where_the_estimate_needs_it() {
        let p = Precision::new(0.02, 0.95, 32, 100_000).unwrap();
        let (mut state, mut seen) = (7, HashMap::new());
        let (_, at_end) = run_cell(&p, 1.0, &mut state, &mut seen);
        let (_, at_half) = run_cell(&p, 0.5, &mut state, &mut seen);
        assert!(at_end <= 256, "{at_end}");
        assert!(at_half >= 4096, "{at_half}");
    }

    #[test]
    fn a_look_stops_exactly_where_its_interval_is_narrow_enough() {
        let p = Precision::new(0.05, 0.95, 20, 2000).unwrap();
        for c in &p.looks {
            for k in 0..=c.starts {
                let (low, high) = clopper_pearson(k, c.starts, c.level);
                assert_eq!(c.stops(k), (high - low) / 2.0 <= p.half_width, "{k} of {}", c.starts);
            }
        }
    }

    #[test]
    fn standing_reads_complete_prefixes_only() {
        let p = Precision::new(0.1, 0.95, 16, 256).unwrap();
        let at = p.checkpoints();
        assert_eq!(at[..5], [16, 24, 36, 54, 81]);
        // All failures: 16 starts leave too wide an interval; a later look stops it.
        let none = p.standing(false, |_| Some(false));
        let Standing::Settled { n: stop, successes: 0, reached: true, .. } = none else { panic!("{none:?}") };
        assert!(stop > 16 && at.contains(&stop), "{none:?}");
        // Results past the stop change nothing.
        assert_eq!(p.standing(false, |i| Some(i >= stop)), none);
        // A gap in the first prefix: going to 16 with nothing counted.
        assert_eq!(p.standing(false, |i| (i != 3).then_some(false)), Standing::Going { upto: 16, n: 0, successes: 0 });
        // Half successes, results up to the fourth look: going on to the fifth.
        let half = p.standing(false, |i| (i < 54).then_some(i % 2 == 0));
        assert_eq!(half, Standing::Going { upto: 81, n: 54, successes: 27 });
        assert_eq!(half.counted(), (54, 27));
        // At the cap short of the precision: stopped, not reached.
        let tight = Precision::new(0.01, 0.95, 16, 256).unwrap();
        let capped = tight.standing(false, |i| Some(i % 2 == 0));
        assert!(matches!(capped, Standing::Settled { n: 256, successes: 128, reached: false, .. }), "{capped:?}");
        // Every eligible cell counted: the exact share.
        let exact = tight.standing(true, |i| Some(i % 2 == 0));
        assert_eq!(exact, Standing::Settled { n: 256, successes: 128, interval: (0.5, 0.5), reached: true });
    }

    #[test]
    fn the_expected_stop_grows_towards_one_half() {
        let p = Precision::new(0.02, 0.95, 32, 100_000).unwrap();
        let at = |share| p.expected_stop(share);
        assert!(
            at(0.0) < at(0.05) && at(0.05) < at(0.2) && at(0.2) <= at(0.5),
            "{} {} {} {}",
            at(0.0),
            at(0.05),
            at(0.2),
            at(0.5)
        );
        assert_eq!(at(1.0), at(0.0));
        // The price of looking: more than the 2,401 starts a single 95 % look needs at 1/2.
        assert!((2401..10_000).contains(&at(0.5)), "{}", at(0.5));
        assert!(at(0.0) < 400, "{}", at(0.0));
    }
}
