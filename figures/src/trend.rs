//! The trend of a series with many N: the residue classes of N its values
//! split into (accuracy on a leaper's boards often alternates with N's
//! parity), and a running mean within each class, so that a dense series
//! reads as a few smooth lines instead of a zig-zag.
//!
//! Values are taken in the plot's own space (a time's logarithm), where the
//! eye judges them.

use crate::Point;

/// The moduli tried.
const MODULI: [u32; 3] = [2, 3, 4];
/// Points either side of the local mean a value is measured from: whole
/// periods of 2, 3 and 4 and then some, short enough to follow a trend.
const DETREND: usize = 6;
/// The F statistic (between the classes' mean residuals against within
/// them) a split must reach: a tail probability near 1e-4 for a hundred
/// points, so that across a chart's series and moduli noise alone almost
/// never splits one, and a few outlying N (a hard board here and there) do
/// not either, since they do not recur with the period.
const MIN_F: f64 = 15.0;
/// ... and the swing between the classes is at least this share of the
/// axis: an alternation of a point or two is not worth a second line.
const MIN_SWING: f64 = 0.04;
/// Points each class needs before a split is believed.
const MIN_CLASS_POINTS: usize = 6;

/// The modulus whose residue classes of N split the values of `points`
/// (sorted by N) clearly, if one does: each value is taken less its local
/// mean, so a trend is not a split, and the classes' means of what is left
/// are tested against the scatter within them. Of two moduli where one
/// divides the other (2 and 4), the larger is kept only if its extra
/// classes explain clearly more. `value` maps a point into plot space;
/// `span` is the axis's extent there.
pub(crate) fn residue_modulus(points: &[Point], value: impl Fn(&Point) -> f64, span: f64) -> Option<u32> {
    let local = running_mean(points, &value, DETREND);
    let residuals: Vec<(u32, f64)> = points.iter().zip(&local).map(|(p, (n, m))| (*n, value(p) - m)).collect();
    let fits: Vec<Fit> = MODULI.iter().filter_map(|&k| Fit::of(&residuals, k)).collect();
    let split = |f: &&Fit| f.f >= MIN_F && f.swing >= MIN_SWING * span;
    let best = fits.iter().filter(split).max_by(|a, b| a.f.total_cmp(&b.f))?;
    let coarser = fits.iter().filter(split).filter(|d| d.k < best.k && best.k % d.k == 0).find(|d| !best.refines(d));
    Some(coarser.unwrap_or(best).k)
}

/// How the residue classes of N mod `k` split the residuals.
struct Fit {
    k: u32,
    /// Squares of the residuals about their class's mean, and the points.
    within: f64,
    points: usize,
    f: f64,
    /// The largest difference between two classes' means.
    swing: f64,
}

impl Fit {
    fn of(residuals: &[(u32, f64)], k: u32) -> Option<Fit> {
        let classes: Vec<Vec<f64>> =
            (0..k).map(|r| residuals.iter().filter(|(n, _)| n % k == r).map(|&(_, v)| v).collect()).collect();
        if classes.iter().any(|c| c.len() < MIN_CLASS_POINTS) {
            return None;
        }
        let mean = |c: &[f64]| c.iter().sum::<f64>() / c.len() as f64;
        let all: Vec<f64> = residuals.iter().map(|&(_, v)| v).collect();
        let grand = mean(&all);
        let means: Vec<f64> = classes.iter().map(|c| mean(c)).collect();
        let between: f64 = classes.iter().zip(&means).map(|(c, m)| c.len() as f64 * (m - grand).powi(2)).sum();
        let within: f64 = classes.iter().zip(&means).map(|(c, m)| c.iter().map(|v| (v - m).powi(2)).sum::<f64>()).sum();
        let points = all.len();
        let f = ratio(between / f64::from(k - 1), within / (points - k as usize) as f64);
        let swing =
            means.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b)) - means.iter().fold(f64::INFINITY, |a, &b| a.min(b));
        Some(Fit { k, within, points, f, swing })
    }

    /// Whether this fit's classes (finer than `coarse`'s) explain clearly
    /// more than `coarse`'s do: the nested F test.
    fn refines(&self, coarse: &Fit) -> bool {
        let extra = (coarse.within - self.within) / f64::from(self.k - coarse.k);
        ratio(extra, self.within / (self.points - self.k as usize) as f64) >= MIN_F
    }
}

/// `a / b`, infinite for a positive `a` over nothing (a split without
/// scatter) and 0 for nothing over nothing.
fn ratio(a: f64, b: f64) -> f64 {
    if b > 1e-12 {
        a / b
    } else if a > 1e-12 {
        f64::INFINITY
    } else {
        0.0
    }
}

/// The running mean of `points` (sorted by N) in plot space: at each point,
/// the mean over up to `half` points either side, as many on each side so
/// the ends are not pulled inward, weighted by starts (a cell of more
/// starts knows its value better).
pub(crate) fn running_mean(points: &[Point], value: impl Fn(&Point) -> f64, half: usize) -> Vec<(u32, f64)> {
    (0..points.len())
        .map(|i| {
            let reach = half.min(i).min(points.len() - 1 - i);
            let window = &points[i - reach..=i + reach];
            let weight = |p: &Point| p.starts.max(1) as f64;
            let total: f64 = window.iter().map(weight).sum();
            let mean = window.iter().map(|p| weight(p) * value(p)).sum::<f64>() / total;
            (points[i].n, mean)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points(ys: impl IntoIterator<Item = (u32, f64)>) -> Vec<Point> {
        ys.into_iter().map(|(n, y)| Point { n, y, band: None, starts: 32, capped: false }).collect()
    }

    /// A deterministic wobble of up to +-`size`, standing in for noise.
    fn wobble(n: u32, size: f64) -> f64 {
        size * (f64::from(n.wrapping_mul(2_654_435_761) % 1000) / 500.0 - 1.0)
    }

    #[test]
    fn parity_alternation_is_found() {
        let zigzag = points((5..230).map(|n| (n, if n % 2 == 0 { 100.0 } else { 0.0 })));
        assert_eq!(residue_modulus(&zigzag, |p| p.y, 100.0), Some(2));
        let noisy = points((5..230).map(|n| (n, 60.0 - f64::from(n) / 10.0 + (n % 2) as f64 * 25.0 + wobble(n, 8.0))));
        assert_eq!(residue_modulus(&noisy, |p| p.y, 100.0), Some(2));
    }

    #[test]
    fn a_period_of_four_that_parity_explains_is_parity() {
        let almost = points((5..230).map(|n| (n, [20.0, 80.0, 21.0, 79.0][(n % 4) as usize] + wobble(n, 5.0))));
        assert_eq!(residue_modulus(&almost, |p| p.y, 100.0), Some(2));
    }

    #[test]
    fn a_period_of_three_or_four_is_found_as_such() {
        let three = points((5..230).map(|n| (n, if n % 3 == 1 { 20.0 } else { 90.0 })));
        assert_eq!(residue_modulus(&three, |p| p.y, 100.0), Some(3));
        let four = points((5..230).map(|n| (n, [10.0, 60.0, 30.0, 90.0][(n % 4) as usize])));
        assert_eq!(residue_modulus(&four, |p| p.y, 100.0), Some(4));
    }

    #[test]
    fn trends_noise_and_small_swings_are_not_split() {
        let falling = points((5..230).map(|n| (n, 100.0 - f64::from(n) / 3.0)));
        assert_eq!(residue_modulus(&falling, |p| p.y, 100.0), None);
        let noise = points((5..230).map(|n| (n, 50.0 + wobble(n, 20.0))));
        assert_eq!(residue_modulus(&noise, |p| p.y, 100.0), None);
        let slight = points((5..230).map(|n| (n, 50.0 + (n % 2) as f64 * 2.0)));
        assert_eq!(residue_modulus(&slight, |p| p.y, 100.0), None, "a 2-point swing on a 100-point axis");
        let dips = points(
            (5..230).map(|n| (n, [(7, 40.0), (10, 84.4), (16, 96.9)].iter().find(|d| d.0 == n).map_or(100.0, |d| d.1))),
        );
        assert_eq!(residue_modulus(&dips, |p| p.y, 100.0), None, "a few hard boards do not recur with a period");
        let few = points((5..16).map(|n| (n, if n % 2 == 0 { 100.0 } else { 0.0 })));
        assert_eq!(residue_modulus(&few, |p| p.y, 100.0), None, "too few points to tell");
    }

    #[test]
    fn the_running_mean_is_symmetric_at_the_ends_and_weighs_starts() {
        let mut line = points((1..=5).map(|n| (n, f64::from(n))));
        let mean = running_mean(&line, |p| p.y, 2);
        assert_eq!(mean, [(1, 1.0), (2, 2.0), (3, 3.0), (4, 4.0), (5, 5.0)], "a straight line stays straight");
        line[2].starts = 96;
        line[2].y = 7.0;
        let mean = running_mean(&line, |p| p.y, 1);
        assert_eq!(mean[1], (2, (1.0 + 2.0 + 3.0 * 7.0) / 5.0), "the third point counts three times");
        assert_eq!(mean[0], (1, 1.0), "the first point has no neighbour on its left");
    }
}
