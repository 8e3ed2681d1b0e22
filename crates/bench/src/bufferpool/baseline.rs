//! The A/B baselines' statistics: the samples of alternating rounds ([`Sample`],
//! [`AbRound`]), the comparison computed from their sums ([`AbComparison`]), the
//! round order ([`b_first`]); the per-round median and range are [`crate::stats`]'s.

use serde::Serialize;

use crate::report::ratio;

/// Operations, wall time and process CPU time of one window of an A/B comparison.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Sample {
    pub ops: u64,
    pub seconds: f64,
    pub cpu_seconds: f64,
}

impl Sample {
    /// Operations per wall-clock second.
    pub fn rate(&self) -> Option<f64> {
        (self.seconds > 0.0).then(|| self.ops as f64 / self.seconds)
    }

    /// Operations per second of this process's CPU time: unlike [`Sample::rate`], it
    /// hardly moves when other work on the machine takes CPUs away from the bench.
    pub fn cpu_rate(&self) -> Option<f64> {
        (self.cpu_seconds > 0.0).then(|| self.ops as f64 / self.cpu_seconds)
    }

    fn plus(self, other: Sample) -> Sample {
        Sample {
            ops: self.ops + other.ops,
            seconds: self.seconds + other.seconds,
            cpu_seconds: self.cpu_seconds + other.cpu_seconds,
        }
    }
}

/// One round of an A/B comparison: one window in each mode.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct AbRound {
    pub a: Sample,
    pub b: Sample,
    /// True if B ran first in this round.
    pub b_first: bool,
}

/// Two modes measured in alternating rounds. Rates come from the operations and
/// seconds summed over all rounds of a mode, so that a slow round weighs what it
/// measured; the per-round ratios show the spread. The same from CPU time is a check
/// that survives other load on the machine.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AbComparison {
    pub a_ops_per_s: f64,
    pub b_ops_per_s: f64,
    /// a rate / b rate from the sums.
    pub ratio: f64,
    /// a rate / b rate of each round.
    pub round_ratios: Vec<f64>,
    /// Operations per CPU-second of each mode, and their ratio, from the sums.
    pub a_ops_per_cpu_s: Option<f64>,
    pub b_ops_per_cpu_s: Option<f64>,
    pub cpu_ratio: Option<f64>,
}

impl AbComparison {
    pub fn from_rounds(rounds: &[AbRound]) -> Option<AbComparison> {
        let sum = |pick: fn(&AbRound) -> Sample| {
            rounds
                .iter()
                .map(pick)
                .fold(Sample::default(), Sample::plus)
        };
        let (a, b) = (sum(|r| r.a), sum(|r| r.b));
        let (a_rate, b_rate) = (a.rate()?, b.rate()?);
        let ratio = ratio(Some(a_rate), Some(b_rate))?;
        Some(AbComparison {
            a_ops_per_s: a_rate,
            b_ops_per_s: b_rate,
            ratio,
            round_ratios: rounds
                .iter()
                .filter_map(|r| ratio_of(r.a.rate(), r.b.rate()))
                .collect(),
            a_ops_per_cpu_s: a.cpu_rate(),
            b_ops_per_cpu_s: b.cpu_rate(),
            cpu_ratio: ratio_of(a.cpu_rate(), b.cpu_rate()),
        })
    }

    /// `(b - a) / b * 100`: what mode A costs relative to mode B, in percent.
    pub fn a_cost_pct(&self) -> f64 {
        cost_pct(self.ratio)
    }

    /// The same from operations per CPU-second.
    pub fn a_cpu_cost_pct(&self) -> Option<f64> {
        self.cpu_ratio.map(cost_pct)
    }

    /// The per-round costs, in percent.
    pub fn round_costs_pct(&self) -> Vec<f64> {
        self.round_ratios.iter().map(|&r| cost_pct(r)).collect()
    }
}

fn ratio_of(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    ratio(a, b)
}

/// `(b - a) / b * 100` for `a / b = ratio`.
fn cost_pct(ratio: f64) -> f64 {
    (1.0 - ratio) * 100.0
}

/// Whether round `round` runs mode B first: the order flips every round (AB, BA, AB,
/// ...) so that a linear drift in the machine's speed cancels over each pair.
pub fn b_first(round: u32) -> bool {
    round % 2 == 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::min_max;

    #[test]
    fn ab_comparisons_use_summed_operations_and_keep_the_per_round_spread() {
        let s = |ops, seconds| Sample {
            ops,
            seconds,
            cpu_seconds: seconds * 2.0,
        };
        let rounds = [
            AbRound {
                a: s(970, 1.0),
                b: s(1000, 1.0),
                b_first: false,
            },
            AbRound {
                a: s(1990, 2.0),
                b: s(2000, 2.0),
                b_first: true,
            },
        ];
        let c = AbComparison::from_rounds(&rounds).unwrap();
        assert_eq!(c.a_ops_per_s, 2960.0 / 3.0);
        assert_eq!(c.b_ops_per_s, 1000.0);
        // Summed: (1000 - 986.67) / 1000 = 1.33%, not the mean of 3% and 0.5%.
        assert!(
            (c.a_cost_pct() - 4.0 / 3.0).abs() < 1e-9,
            "{}",
            c.a_cost_pct()
        );
        let costs = c.round_costs_pct();
        assert!((costs[0] - 3.0).abs() < 1e-9 && (costs[1] - 0.5).abs() < 1e-9);
        assert_eq!(min_max(&costs), (Some(costs[1]), Some(costs[0])));
        assert_eq!(
            c.cpu_ratio.map(|r| (r * 1e9).round()),
            Some((c.ratio * 1e9).round())
        );
        assert!(AbComparison::from_rounds(&[]).is_none());
        assert!(
            AbComparison::from_rounds(&[AbRound {
                a: s(5, 1.0),
                b: s(0, 1.0),
                b_first: false
            }])
            .is_none()
        );
        assert_eq!(
            (0..4).map(b_first).collect::<Vec<_>>(),
            [false, true, false, true]
        );
    }
}
