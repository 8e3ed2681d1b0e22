//! Small operating-system queries that layers above need without unsafe code of
//! their own (the benchmarks measure CPU time per I/O with [`process_cpu_time`]).

use std::time::Duration;

/// CPU time (user plus system) used so far by this process, all threads included,
/// with microsecond resolution.
pub fn process_cpu_time() -> Duration {
    // SAFETY: `rusage` is plain old data; all-zero is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable `rusage` and `RUSAGE_SELF` a valid target.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    // getrusage fails only for a bad pointer or target, neither possible here.
    assert_eq!(rc, 0, "getrusage(RUSAGE_SELF) failed");
    timeval_duration(usage.ru_utime) + timeval_duration(usage.ru_stime)
}

fn timeval_duration(time: libc::timeval) -> Duration {
    Duration::from_secs(time.tv_sec.max(0) as u64)
        + Duration::from_micros(time.tv_usec.max(0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_grows_while_the_process_computes() {
        let before = process_cpu_time();
        let mut x = 0u64;
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_millis(30) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        assert!(process_cpu_time() > before, "{x}");
    }
}
