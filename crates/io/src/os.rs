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

/// Reads what `socket` has already received into `buf`, never waiting: `WouldBlock`
/// when nothing is there, `Ok(0)` when the peer closed its side. The socket itself
/// stays blocking (its writes still wait), since `MSG_DONTWAIT` applies to this one
/// call only.
pub fn recv_nowait(socket: &impl std::os::fd::AsFd, buf: &mut [u8]) -> std::io::Result<usize> {
    use std::os::fd::AsRawFd;
    loop {
        // SAFETY: `buf` is valid and writable for `buf.len()` bytes for the call, and
        // the descriptor stays open because `socket` borrows it.
        let rc = unsafe {
            libc::recv(
                socket.as_fd().as_raw_fd(),
                buf.as_mut_ptr().cast(),
                buf.len(),
                libc::MSG_DONTWAIT,
            )
        };
        if rc >= 0 {
            return Ok(rc as usize);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// An epoll instance that hands each readable socket to one waiting thread: sockets
/// are armed one-shot (`EPOLLONESHOT`), so an event is reported once and the socket
/// stays quiet until it is armed again. Any number of threads may wait at once; the
/// kernel wakes one of them per event.
pub struct Epoll {
    fd: std::os::fd::OwnedFd,
}

impl Epoll {
    pub fn new() -> std::io::Result<Epoll> {
        use std::os::fd::FromRawFd;
        // SAFETY: no pointers are passed; a non-negative result is a new descriptor
        // that nothing else owns.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` was just returned by epoll_create1 and is owned by no one else.
        let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
        Ok(Epoll { fd })
    }

    /// Arms `socket` for one readiness report (readable, closed or failed) carrying
    /// `token`: `first` adds it to the set, otherwise it re-arms the socket already
    /// there. Data that arrived before the call is reported at once.
    pub fn arm(
        &self,
        socket: &impl std::os::fd::AsFd,
        token: u64,
        first: bool,
    ) -> std::io::Result<()> {
        let op = if first {
            libc::EPOLL_CTL_ADD
        } else {
            libc::EPOLL_CTL_MOD
        };
        let mut event = libc::epoll_event {
            events: (libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLONESHOT) as u32,
            u64: token,
        };
        self.control(op, socket, &mut event)
    }

    /// Takes `socket` out of the set.
    pub fn remove(&self, socket: &impl std::os::fd::AsFd) -> std::io::Result<()> {
        let mut event = libc::epoll_event { events: 0, u64: 0 };
        self.control(libc::EPOLL_CTL_DEL, socket, &mut event)
    }

    fn control(
        &self,
        op: libc::c_int,
        socket: &impl std::os::fd::AsFd,
        event: &mut libc::epoll_event,
    ) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        // SAFETY: both descriptors stay open for the call (owned by `self`, borrowed
        // by `socket`), and `event` is a valid epoll_event the kernel only reads.
        let rc =
            unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), op, socket.as_fd().as_raw_fd(), event) };
        if rc < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// The token of one armed socket that became ready, waiting at most `timeout`
    /// (zero: only looks). `None` when the time passed with nothing ready.
    pub fn wait_one(&self, timeout: Duration) -> std::io::Result<Option<u64>> {
        use std::os::fd::AsRawFd;
        let timeout_ms = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
        let mut event = libc::epoll_event { events: 0, u64: 0 };
        // SAFETY: `event` is room for exactly the one event asked for (maxevents 1),
        // and the epoll descriptor is open while `self` lives.
        let rc = unsafe { libc::epoll_wait(self.fd.as_raw_fd(), &mut event, 1, timeout_ms) };
        match rc {
            0 => Ok(None),
            1 => Ok(Some(event.u64)),
            _ => {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    Ok(None)
                } else {
                    Err(e)
                }
            }
        }
    }
}

/// A Linux eventfd: a counter other threads raise to wake whoever waits on it in an
/// [`Epoll`] set. Non-blocking: [`EventFd::clear`] never waits, and a raise never
/// blocks (the counter would have to reach 2^64 - 2 first).
pub struct EventFd {
    fd: std::os::fd::OwnedFd,
}

impl EventFd {
    pub fn new() -> std::io::Result<EventFd> {
        use std::os::fd::FromRawFd;
        // SAFETY: no pointers are passed; a non-negative result is a new descriptor
        // that nothing else owns.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` was just returned by eventfd and is owned by no one else.
        let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
        Ok(EventFd { fd })
    }

    /// Makes the eventfd readable (an epoll set holding it reports it).
    pub fn raise(&self) {
        use std::os::fd::AsRawFd;
        let one: u64 = 1;
        // SAFETY: the kernel reads exactly 8 bytes from `one`, which lives for the
        // call, and the descriptor is open while `self` lives. A failed write
        // (only EAGAIN at a saturated counter) leaves the eventfd readable anyway.
        let _ = unsafe {
            libc::write(
                self.fd.as_raw_fd(),
                (&one as *const u64).cast(),
                std::mem::size_of::<u64>(),
            )
        };
    }

    /// Makes it quiet again (resets the counter), never waiting.
    pub fn clear(&self) {
        use std::os::fd::AsRawFd;
        let mut count: u64 = 0;
        // SAFETY: the kernel writes at most 8 bytes into `count`, which lives for the
        // call; the descriptor is open while `self` lives. EAGAIN (already quiet) is
        // the only expected failure and needs nothing done.
        let _ = unsafe {
            libc::read(
                self.fd.as_raw_fd(),
                (&mut count as *mut u64).cast(),
                std::mem::size_of::<u64>(),
            )
        };
    }
}

impl std::os::fd::AsFd for EventFd {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }
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

    #[test]
    fn a_raised_eventfd_is_reported_once_per_arming_until_cleared() {
        let epoll = Epoll::new().unwrap();
        let event = EventFd::new().unwrap();
        epoll.arm(&event, 7, true).unwrap();
        assert_eq!(epoll.wait_one(Duration::ZERO).unwrap(), None);
        event.raise();
        event.raise();
        assert_eq!(epoll.wait_one(Duration::ZERO).unwrap(), Some(7));
        // One-shot: quiet until armed again, and then reported again while raised.
        assert_eq!(epoll.wait_one(Duration::ZERO).unwrap(), None);
        epoll.arm(&event, 7, false).unwrap();
        assert_eq!(epoll.wait_one(Duration::ZERO).unwrap(), Some(7));
        event.clear();
        epoll.arm(&event, 7, false).unwrap();
        assert_eq!(epoll.wait_one(Duration::ZERO).unwrap(), None);
    }
}
