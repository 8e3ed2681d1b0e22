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

/// CPU time (user plus system) used so far by this process's children that have
/// ended and been waited for, their threads included: a benchmark reads it before
/// and after running a client program to learn what the client cost.
pub fn children_cpu_time() -> Duration {
    // SAFETY: `rusage` is plain old data; all-zero is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable `rusage` and `RUSAGE_CHILDREN` a valid
    // target.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    // getrusage fails only for a bad pointer or target, neither possible here.
    assert_eq!(rc, 0, "getrusage(RUSAGE_CHILDREN) failed");
    timeval_duration(usage.ru_utime) + timeval_duration(usage.ru_stime)
}

/// CPU time (user plus system) used so far by process `pid`, all threads included,
/// from `/proc/<pid>/stat` in clock ticks (10 ms on Linux); `None` if the process is
/// gone or the file is unreadable. The benchmarks measure the servers they start.
pub fn process_cpu_time_of(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count the
    // fields after its closing one, which start at field 3 (state).
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    // SAFETY: sysconf only reads a configuration value.
    let ticks_per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let ticks_per_second = u64::try_from(ticks_per_second).ok().filter(|&t| t > 0)?;
    let ticks = utime + stime;
    Some(
        Duration::from_secs(ticks / ticks_per_second)
            + Duration::from_nanos((ticks % ticks_per_second) * 1_000_000_000 / ticks_per_second),
    )
}

/// CPU time the calling thread has used so far, to the nanosecond: what a
/// micro-benchmark on a shared machine measures (time spent waiting for a core is
/// not the code's).
pub fn thread_cpu_time() -> Duration {
    let mut time = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec, which `time` is.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut time) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        time.tv_sec.max(0) as u64,
        time.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// True if the peer of `socket` has closed its side or the connection failed (a
/// reset): a zero-timeout `poll` for `POLLRDHUP`, which never blocks and reads
/// nothing, so bytes the peer sent before closing stay for their reader. The server
/// asks this of a client whose statement runs long, so a client that went away stops
/// its statement.
pub fn peer_closed(socket: &impl std::os::fd::AsFd) -> bool {
    use std::os::fd::AsRawFd;
    let mut poll = libc::pollfd {
        fd: socket.as_fd().as_raw_fd(),
        events: libc::POLLRDHUP,
        revents: 0,
    };
    // SAFETY: `poll` is one valid, writable pollfd, and the descriptor stays open for
    // the call because `socket` borrows it; a zero timeout returns at once.
    let rc = unsafe { libc::poll(&mut poll, 1, 0) };
    rc > 0 && poll.revents & (libc::POLLRDHUP | libc::POLLHUP | libc::POLLERR) != 0
}

fn timeval_duration(time: libc::timeval) -> Duration {
    Duration::from_secs(time.tv_sec.max(0) as u64)
        + Duration::from_micros(time.tv_usec.max(0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_process_cpu_time_is_read_from_proc() {
        let own = process_cpu_time_of(std::process::id()).expect("this process's stat");
        let mut x = 0u64;
        let started = std::time::Instant::now();
        while started.elapsed() < Duration::from_millis(150) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        let later = process_cpu_time_of(std::process::id()).expect("this process's stat");
        assert!(later > own, "{own:?} then {later:?}");
        assert_eq!(process_cpu_time_of(u32::MAX), None);
    }

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
