//! A striped event counter for hot paths.
//!
//! Counting every buffer-pool hit in one shared atomic would make every reader of a hot
//! page write the same cache line. [`StripedCounter`] spreads additions over
//! [`LATCH_COUNTER_STRIPES`] stripes of 128 bytes (one per thread, modulo; two cache
//! lines each, as in [`crate::latch`]) and sums them on read.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::latch::thread_stripe;
use crate::limits::LATCH_COUNTER_STRIPES;

#[repr(align(128))]
#[derive(Default)]
struct Stripe(AtomicU64);

pub struct StripedCounter {
    stripes: Box<[Stripe]>,
}

impl Default for StripedCounter {
    fn default() -> Self {
        StripedCounter {
            stripes: (0..LATCH_COUNTER_STRIPES)
                .map(|_| Stripe::default())
                .collect(),
        }
    }
}

impl StripedCounter {
    #[inline]
    pub fn add(&self, amount: u64) {
        self.stripes[thread_stripe()]
            .0
            .fetch_add(amount, Ordering::Relaxed);
    }

    pub fn get(&self) -> u64 {
        self.stripes
            .iter()
            .map(|s| s.0.load(Ordering::Relaxed))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn additions_from_many_threads_all_count() {
        let counter = std::sync::Arc::new(StripedCounter::default());
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let counter = counter.clone();
                std::thread::spawn(move || (0..1000).for_each(|_| counter.add(1)))
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(counter.get(), 8000);
    }
}
