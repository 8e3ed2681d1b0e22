//! A small seeded random generator and a zipfian distribution.
//!
//! Tests and benchmarks need reproducible randomness: every randomised test prints its
//! seed through [`test_seed`] and reruns identically with `TARN_SEED=<seed>`. The
//! generator is SplitMix64: tiny, fast and good enough for workloads and test cases
//! (not for cryptography).

use std::time::{SystemTime, UNIX_EPOCH};

#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng { state: seed }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A value in `0..bound` (`bound > 0`), by multiply-shift.
    #[inline]
    pub fn below(&mut self, bound: u64) -> u64 {
        debug_assert!(bound > 0);
        ((u128::from(self.next_u64()) * u128::from(bound)) >> 64) as u64
    }

    /// A value in `[0, 1)`.
    #[inline]
    pub fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `percent / 100`.
    #[inline]
    pub fn percent(&mut self, percent: u32) -> bool {
        self.below(100) < u64::from(percent)
    }

    pub fn fill(&mut self, bytes: &mut [u8]) {
        for chunk in bytes.chunks_mut(8) {
            let word = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
    }
}

/// The seed for a randomised test: `TARN_SEED` if set, else derived from the clock.
/// Always printed, so any failure can be replayed.
pub fn test_seed(test_name: &str) -> u64 {
    let seed = std::env::var("TARN_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0x5eed)
        });
    eprintln!("{test_name}: seed {seed} (rerun with TARN_SEED={seed})");
    seed
}

/// Zipfian ranks over `0..n` with skew `theta` (0 < theta < 1), by the method of Gray
/// et al., "Quickly generating billion-record synthetic databases" (as in YCSB).
/// [`Zipf::sample_scrambled`] hashes the rank so that hot items are spread over the
/// key space instead of clustered at its start.
#[derive(Clone, Debug)]
pub struct Zipf {
    n: u64,
    theta: f64,
    alpha: f64,
    zeta_n: f64,
    eta: f64,
}

impl Zipf {
    pub fn new(n: u64, theta: f64) -> Self {
        assert!(n >= 2 && theta > 0.0 && theta < 1.0);
        let zeta = |count: u64| {
            (1..=count)
                .map(|i| 1.0 / (i as f64).powf(theta))
                .sum::<f64>()
        };
        let zeta_2 = zeta(2);
        let zeta_n = zeta(n);
        let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta_2 / zeta_n);
        Zipf {
            n,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zeta_n,
            eta,
        }
    }

    /// A rank in `0..n`; rank 0 is the most frequent.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let u = rng.unit_f64();
        let uz = u * self.zeta_n;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return 1;
        }
        let rank = (self.n as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64;
        rank.min(self.n - 1)
    }

    /// A zipfian item in `0..n` whose popularity is independent of its position.
    pub fn sample_scrambled(&self, rng: &mut Rng) -> u64 {
        fnv1a_u64(self.sample(rng)) % self.n
    }
}

fn fnv1a_u64(value: u64) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for byte in value.to_le_bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence_and_below_stays_in_bounds() {
        let (mut a, mut b) = (Rng::new(42), Rng::new(42));
        for _ in 0..1000 {
            let x = a.below(7);
            assert_eq!(x, b.below(7));
            assert!(x < 7);
        }
    }

    #[test]
    fn zipf_is_skewed_toward_low_ranks() {
        let zipf = Zipf::new(10_000, 0.99);
        let mut rng = Rng::new(test_seed("zipf_is_skewed_toward_low_ranks"));
        let samples = 100_000;
        let top_100 = (0..samples).filter(|_| zipf.sample(&mut rng) < 100).count();
        // The top 1% of ranks draws roughly half of all samples at theta 0.99.
        assert!(
            top_100 > samples * 35 / 100,
            "top 1% drew {top_100} of {samples}"
        );
        assert!(
            top_100 < samples * 75 / 100,
            "top 1% drew {top_100} of {samples}"
        );
    }
}
