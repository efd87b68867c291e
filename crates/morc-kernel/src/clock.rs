//! The one clock. Only the Coordinator reads it; everything else follows.

use std::fmt;

/// Which time the engine runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockKind {
    /// Wall time: absolute deadlines with `clock_nanosleep` on CLOCK_MONOTONIC.
    Wall,
    /// Virtual time: ticks follow each other as fast as the work allows,
    /// and time stands still while the engine has nothing to run.
    Virtual,
}

impl fmt::Display for ClockKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ClockKind::Wall => "wall",
            ClockKind::Virtual => "virtual",
        })
    }
}

impl std::str::FromStr for ClockKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "wall" | "real" => Ok(ClockKind::Wall),
            "virtual" | "sim" => Ok(ClockKind::Virtual),
            _ => Err(format!("unknown clock '{s}': use \"wall\" or \"virtual\"")),
        }
    }
}

/// CLOCK_MONOTONIC in nanoseconds (a vDSO read, no real system call).
#[inline]
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CPU time the calling thread has used, in ns: unlike [`monotonic_ns`] it does not advance
/// while the thread is preempted, so it tells what a piece of work costs on a loaded machine.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid timespec to write into.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleeps until the absolute CLOCK_MONOTONIC time `deadline_ns`; returns at
/// once when it has passed. Retries when a signal interrupts the sleep.
#[inline]
pub fn sleep_until(deadline_ns: u64) {
    let ts = libc::timespec { tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t, tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long };
    loop {
        // SAFETY: ts is a valid timespec; a null remainder is allowed with TIMER_ABSTIME.
        let r = unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) };
        if r != libc::EINTR {
            return;
        }
    }
}
