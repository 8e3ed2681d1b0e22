//! Small statistics over a bench's rounds: medians and ranges.
//!
//! Two medians are in use and they are not interchangeable:
//! - the **lower median** ([`lower_median_by`], [`lower_median`]) is always one of the
//!   values: a row built "from the median run" takes every figure of that one run;
//! - the **median** ([`median`]) averages the two middle values of an even count, for
//!   figures that are only ever summarised, never traced back to a run.

/// The lower median (the middle one of an odd count, the lower middle one of an even
/// count) of `values` by `key`; `None` when empty.
pub fn lower_median_by<T: Clone>(values: &[T], key: impl Fn(&T) -> f64) -> Option<T> {
    let mut sorted: Vec<&T> = values.iter().collect();
    sorted.sort_by(|a, b| key(a).total_cmp(&key(b)));
    sorted
        .get(values.len().saturating_sub(1) / 2)
        .map(|v| (*v).clone())
}

/// The lower median of the finite `values`; `None` when there are none.
pub fn lower_median(values: &[f64]) -> Option<f64> {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    lower_median_by(&finite, |v| *v)
}

/// The median of `values`: the middle one of an odd count, the mean of the two middle
/// ones of an even count; `None` when empty.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

/// The smallest and the largest of `values`; `None`s when empty.
pub fn min_max(values: &[f64]) -> (Option<f64>, Option<f64>) {
    let min = values.iter().copied().reduce(f64::min);
    let max = values.iter().copied().reduce(f64::max);
    (min, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lower_median_is_one_of_the_values() {
        assert_eq!(lower_median_by(&[3.0, 1.0, 2.0], |v| *v), Some(2.0));
        assert_eq!(lower_median_by(&[4.0, 1.0, 3.0, 2.0], |v| *v), Some(2.0));
        assert_eq!(lower_median_by(&[5.0], |v| *v), Some(5.0));
        assert_eq!(lower_median_by::<f64>(&[], |v| *v), None);
        assert_eq!(
            lower_median_by(&[("a", 3.0), ("b", 1.0), ("c", 2.0)], |v| v.1),
            Some(("c", 2.0))
        );
        assert_eq!(lower_median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(lower_median(&[4.0, 1.0, 2.0, 3.0]), Some(2.0));
        assert_eq!(lower_median(&[f64::NAN, 4.0, f64::INFINITY]), Some(4.0));
        assert_eq!(lower_median(&[f64::NAN]), None);
        assert_eq!(lower_median(&[]), None);
    }

    #[test]
    fn the_median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(min_max(&[2.0, 3.0, 1.0]), (Some(1.0), Some(3.0)));
        assert_eq!(min_max(&[]), (None, None));
    }
}
