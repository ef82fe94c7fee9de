//! The SNIA PTS steady-state rule (SNIA SSS PTS v2.0, section 3.x "Steady State"):
//! within a measurement window of 5 consecutive rounds
//!   1. the range of the tracked variable (max - min) is at most 20% of its average, and
//!   2. the range of the least-squares best-fit line across the window
//!      (|slope| x (window - 1)) is at most 10% of the average.
//!
//! The first window that satisfies both ends at the steady-state round.

use serde::Serialize;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SteadyState {
    pub reached: bool,
    /// Index (0-based) of the last round of the first window that met the rule.
    pub round: Option<usize>,
    /// First and last round index of that window (or of the last window examined).
    pub window: Option<(usize, usize)>,
    pub mean: Option<f64>,
    /// (max - min) / mean over the window.
    pub range_ratio: Option<f64>,
    /// |slope| x (window - 1) / mean over the window.
    pub excursion_ratio: Option<f64>,
    pub rule: SteadyRule,
}

#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct SteadyRule {
    pub window: usize,
    pub max_range: f64,
    pub max_excursion: f64,
}

impl Default for SteadyRule {
    fn default() -> Self {
        SteadyRule { window: 5, max_range: 0.20, max_excursion: 0.10 }
    }
}

/// (range/mean, excursion/mean, mean) of one window.
pub fn window_stats(y: &[f64]) -> (f64, f64, f64) {
    let n = y.len() as f64;
    let mean = y.iter().sum::<f64>() / n;
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for &v in y {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    let xm = (n - 1.0) / 2.0;
    let mut sxy = 0.0;
    let mut sxx = 0.0;
    for (i, &v) in y.iter().enumerate() {
        let dx = i as f64 - xm;
        sxy += dx * (v - mean);
        sxx += dx * dx;
    }
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let excursion = slope.abs() * (n - 1.0);
    ((hi - lo) / mean.abs(), excursion / mean.abs(), mean)
}

/// Apply the rule to `values` (one per round); `eligible[i]` false excludes round i from
/// any window (e.g. rounds before the drive left fresh-out-of-box).
pub fn detect(values: &[f64], eligible: Option<&[bool]>, rule: SteadyRule) -> SteadyState {
    let w = rule.window.max(2);
    let mut last = None;
    if values.len() >= w {
        for end in (w - 1)..values.len() {
            let start = end + 1 - w;
            let win = &values[start..=end];
            if win.iter().any(|v| !v.is_finite()) {
                continue;
            }
            if let Some(el) = eligible {
                if !el[start..=end].iter().all(|&e| e) {
                    continue;
                }
            }
            let (r, e, m) = window_stats(win);
            let ok = m != 0.0 && r <= rule.max_range && e <= rule.max_excursion;
            last = Some((start, end, m, r, e));
            if ok {
                return SteadyState {
                    reached: true,
                    round: Some(end),
                    window: Some((start, end)),
                    mean: Some(m),
                    range_ratio: Some(r),
                    excursion_ratio: Some(e),
                    rule,
                };
            }
        }
    }
    SteadyState {
        reached: false,
        round: None,
        window: last.map(|l| (l.0, l.1)),
        mean: last.map(|l| l.2),
        range_ratio: last.map(|l| l.3),
        excursion_ratio: last.map(|l| l.4),
        rule,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_series_is_steady_at_first_full_window() {
        let s = detect(&[3.0, 3.0, 3.0, 3.0, 3.0, 3.0], None, SteadyRule::default());
        assert!(s.reached);
        assert_eq!(s.round, Some(4));
    }

    #[test]
    fn rising_series_is_not_steady() {
        let v: Vec<f64> = (0..20).map(|i| 1.0 + 0.1 * i as f64).collect();
        let s = detect(&v, None, SteadyRule::default());
        assert!(!s.reached);
    }

    #[test]
    fn settles_after_transition() {
        let v = [1.0, 2.0, 3.0, 3.8, 4.0, 4.05, 3.98, 4.02, 4.0, 4.01];
        let s = detect(&v, None, SteadyRule::default());
        // [3.8, 4.0, 4.05, 3.98, 4.02]: range 6.3%, excursion 4.2% of the mean; the window
        // before it starts at 3.0 (range 28%) and fails.
        assert!(s.reached);
        assert_eq!(s.window, Some((3, 7)));
    }

    #[test]
    fn noisy_wide_range_fails_range_test() {
        // Mean 10, range 30%: fails rule 1 although it has no trend.
        let v = [10.0, 11.5, 8.5, 10.0, 10.0, 11.5, 8.5, 10.0];
        let s = detect(&v, None, SteadyRule::default());
        assert!(!s.reached);
        assert!(s.range_ratio.unwrap() > 0.2);
    }

    #[test]
    fn excursion_formula() {
        // y = 10 + i (i = 0..4): slope 1, excursion 4, mean 12.
        let (r, e, m) = window_stats(&[10.0, 11.0, 12.0, 13.0, 14.0]);
        assert!((m - 12.0).abs() < 1e-12);
        assert!((e - 4.0 / 12.0).abs() < 1e-12);
        assert!((r - 4.0 / 12.0).abs() < 1e-12);
    }

    #[test]
    fn ineligible_rounds_are_skipped() {
        let v = [1.0; 8];
        let el = [false, false, false, true, true, true, true, true];
        let s = detect(&v, Some(&el), SteadyRule::default());
        assert_eq!(s.round, Some(7));
    }
}
