//! Median, minimum and maximum of a handful of per-round numbers.

/// Median with min and max of one series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

/// Median of `values` (mean of the two middle values for even counts);
/// `None` when empty. NaN values are ignored.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    })
}

/// Median, min and max; `None` when there is no (non-NaN) value.
pub fn summarize(values: &[f64]) -> Option<Summary> {
    let median = median(values)?;
    let finite = values.iter().copied().filter(|x| !x.is_nan());
    let min = finite.clone().fold(f64::INFINITY, f64::min);
    let max = finite.fold(f64::NEG_INFINITY, f64::max);
    Some(Summary { median, min, max })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_count() {
        assert_eq!(median(&[5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(&[7.0]), Some(7.0));
        assert_eq!(median(&[9.0, 2.0, 4.0, 8.0, 1.0]), Some(4.0));
    }

    #[test]
    fn median_of_even_count() {
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[10.0, 20.0]), Some(15.0));
    }

    #[test]
    fn median_of_nothing() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[f64::NAN]), None);
        assert_eq!(summarize(&[]), None);
    }

    #[test]
    fn summary_has_min_and_max() {
        let s = summarize(&[3.0, 9.0, 1.0, f64::NAN, 4.0]).unwrap();
        assert_eq!(s.median, 3.5);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 9.0);
    }
}
