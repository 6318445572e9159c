//! Summary statistics of a set of measurements: min, median, mean, p90, max
//! and standard deviation, with the method of each stated so a report can
//! say how a figure was calculated.

use serde::Serialize;

/// How the statistics are computed, for the reports.
pub const METHOD: &str = "median and p90 interpolate linearly between the closest ranks \
(p90 = value at rank 0.9 x (n - 1) of the sorted values); standard deviation is the sample \
standard deviation (n - 1 in the denominator; 0 for a single run)";

/// Statistics of `n` values.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub n: usize,
    pub min: f64,
    pub median: f64,
    pub mean: f64,
    pub p90: f64,
    pub max: f64,
    pub stddev: f64,
}

impl Summary {
    /// Statistics of the finite values in `values`; `None` when there are none.
    pub fn of(values: &[f64]) -> Option<Summary> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let mean = v.iter().sum::<f64>() / n as f64;
        let var = if n > 1 { v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64 } else { 0.0 };
        Some(Summary { n, min: v[0], median: quantile(&v, 0.5), mean, p90: quantile(&v, 0.9), max: v[n - 1], stddev: var.sqrt() })
    }
}

/// Quantile `q` of sorted, non-empty `v` by linear interpolation (type 7).
fn quantile(v: &[f64], q: f64) -> f64 {
    let pos = q * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// Median of the finite values, or `None`.
pub fn median(values: &[f64]) -> Option<f64> {
    Summary::of(values).map(|s| s.median)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_hand() {
        let s = Summary::of(&[5.0, 1.0, 3.0, 2.0, 4.0]).expect("values");
        assert_eq!((s.n, s.min, s.median, s.mean, s.max), (5, 1.0, 3.0, 3.0, 5.0));
        assert!((s.p90 - 4.6).abs() < 1e-12);
        assert!((s.stddev - 2.5f64.sqrt()).abs() < 1e-12);
        let even = Summary::of(&[1.0, 2.0, 3.0, 4.0]).expect("values");
        assert_eq!(even.median, 2.5);
    }

    #[test]
    fn edge_cases() {
        assert_eq!(Summary::of(&[]), None);
        assert_eq!(Summary::of(&[f64::NAN]), None);
        let one = Summary::of(&[7.0]).expect("one");
        assert_eq!((one.median, one.p90, one.stddev), (7.0, 7.0, 0.0));
    }
}
