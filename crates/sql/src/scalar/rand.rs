//! `RAND()` and `RAND(N)`.
//!
//! `RAND(N)` is MySQL's generator exactly (`my_rnd` in mysys/my_rnd.cc, seeded as
//! `Item_func_rand::seed_random` does), so a seeded sequence gives MySQL's (and
//! MariaDB's) numbers: `RAND(1)` is 0.40540353712197724. With a seed that is constant
//! for the statement (a literal or a parameter) the generator is seeded once per
//! statement and each row takes the next number ([`SeededRand`], one per call site);
//! with a seed that varies by row (a column) every row is seeded afresh. A parallel
//! scan hands rows to its workers in no fixed order, so which row gets which number of
//! a constant-seed sequence is fixed only for a serial scan (as in MySQL, where the
//! order is the scan's).
//!
//! `RAND()` without a seed takes numbers from a per-thread generator seeded from the
//! operating system's randomness (MySQL's comes from the session's); its numbers are
//! in [0, 1) but are not MySQL's sequence, which depends on the server's start.

use std::cell::RefCell;
use std::hash::BuildHasher;

use parking_lot::Mutex;
use tarn_common::rng::Rng;

/// MySQL's `rand_struct`: two 30-bit seeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MyRnd {
    seed1: u64,
    seed2: u64,
}

const MAX_VALUE: u64 = 0x3FFF_FFFF;

impl MyRnd {
    /// `randominit`.
    pub fn new(seed1: u64, seed2: u64) -> MyRnd {
        MyRnd {
            seed1: seed1 % MAX_VALUE,
            seed2: seed2 % MAX_VALUE,
        }
    }

    /// The generator of `RAND(n)`: `n` is taken as a 32-bit unsigned integer and the
    /// seeds are computed in 64 bits and cut to 32, as MySQL's `seed_random`.
    pub fn from_seed(n: i64) -> MyRnd {
        let n = u64::from(n as u32);
        let seed1 = n.wrapping_mul(0x10001).wrapping_add(55_555_555) as u32;
        let seed2 = n.wrapping_mul(0x1000_0001) as u32;
        MyRnd::new(u64::from(seed1), u64::from(seed2))
    }

    /// `my_rnd`: the next number, in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        self.seed1 = (self.seed1 * 3 + self.seed2) % MAX_VALUE;
        self.seed2 = (self.seed1 + self.seed2 + 33) % MAX_VALUE;
        self.seed1 as f64 / MAX_VALUE as f64
    }
}

/// The generator of one `RAND(constant)` call site, seeded by the first statement
/// execution that evaluates it and again by each later one (a prepared statement
/// executed twice repeats its sequence, as in MySQL).
#[derive(Debug, Default)]
pub struct SeededRand {
    /// The statement ([`super::FnContext::statement`]) the generator was seeded for.
    state: Mutex<Option<(u64, MyRnd)>>,
}

impl SeededRand {
    /// `count` numbers of the sequence for statement `statement`; `seed` gives the
    /// seed when the statement has not seeded it yet.
    pub fn take(&self, statement: u64, count: usize, seed: impl FnOnce() -> i64) -> Vec<f64> {
        let mut state = self.state.lock();
        let rnd = match &mut *state {
            Some((s, rnd)) if *s == statement => rnd,
            other => &mut other.insert((statement, MyRnd::from_seed(seed()))).1,
        };
        (0..count).map(|_| rnd.next_f64()).collect()
    }
}

thread_local! {
    static UNSEEDED: RefCell<Rng> = RefCell::new(Rng::new(os_random()));
}

/// A number from the operating system's randomness (the standard library seeds its
/// hash keys from it).
pub fn os_random() -> u64 {
    std::collections::hash_map::RandomState::new().hash_one(0x7a72_6e5f_u64)
}

/// `RAND()`: a number in [0, 1) from this thread's generator.
pub fn unseeded() -> f64 {
    UNSEEDED.with(|r| r.borrow_mut().unit_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MySQL 8.0 and MariaDB 10.11 both answer these.
    #[test]
    fn mysql_sequences() {
        assert_eq!(MyRnd::from_seed(1).next_f64(), 0.40540353712197724);
        assert_eq!(MyRnd::from_seed(3).next_f64(), 0.9057697559760601);
        assert_eq!(MyRnd::from_seed(0).next_f64(), 0.15522042769493574);
        let mut r = MyRnd::from_seed(1);
        r.next_f64();
        assert_eq!(r.next_f64(), 0.8716141803857071);
        assert_eq!(r.next_f64(), 0.1418603212962489);
    }

    #[test]
    fn a_statement_seeds_once() {
        let site = SeededRand::default();
        let first = site.take(7, 3, || 1);
        assert_eq!(first[0], 0.40540353712197724);
        let more = site.take(7, 1, || panic!("seeded already"));
        assert_ne!(more[0], first[0]);
        assert_eq!(site.take(8, 1, || 1)[0], first[0]);
    }

    #[test]
    fn unseeded_is_a_unit_interval() {
        let xs: Vec<f64> = (0..1000).map(|_| unseeded()).collect();
        assert!(xs.iter().all(|x| (0.0..1.0).contains(x)));
        assert!(xs.windows(2).any(|w| w[0] != w[1]));
    }
}
