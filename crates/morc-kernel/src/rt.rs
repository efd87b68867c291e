//! Real-time set-up of a thread: SCHED_FIFO priority, locked memory, CPU
//! affinity. When the system does not permit it, run anyway and say so once.

use std::sync::atomic::{AtomicBool, Ordering};

/// How a real-time thread should be scheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RtPolicy {
    /// Use SCHED_FIFO at all.
    pub enabled: bool,
    /// SCHED_FIFO priority (1..=99). The Coordinator gets the highest one.
    pub priority: i32,
    /// Pin to this CPU, if any.
    pub cpu: Option<usize>,
}

impl Default for RtPolicy {
    fn default() -> Self {
        RtPolicy { enabled: true, priority: 80, cpu: None }
    }
}

impl RtPolicy {
    /// The same policy a few priority levels lower (for Updater threads).
    pub fn below(self, levels: i32) -> RtPolicy {
        RtPolicy { priority: (self.priority - levels).max(1), cpu: None, ..self }
    }
}

static WARNED_SCHED: AtomicBool = AtomicBool::new(false);
static WARNED_MLOCK: AtomicBool = AtomicBool::new(false);

/// What real-time features a thread actually got.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RtStatus {
    /// Scheduled SCHED_FIFO.
    pub fifo: bool,
    /// Pinned to the requested CPU.
    pub pinned: bool,
}

/// Applies `policy` to the calling thread. Never fails: what cannot be had
/// is reported once (log warning) and the thread runs with normal priority.
pub fn apply_to_current_thread(policy: RtPolicy, what: &str) -> RtStatus {
    let mut status = RtStatus::default();
    if !policy.enabled {
        return status;
    }
    let param = libc::sched_param { sched_priority: policy.priority.clamp(1, 99) };
    // SAFETY: pthread_self() is always a valid handle of the calling thread; `param` is a live sched_param it only reads.
    let r = unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param) };
    if r == 0 {
        status.fifo = true;
    } else if !WARNED_SCHED.swap(true, Ordering::Relaxed) {
        log::warn!(
            "real-time scheduling (SCHED_FIFO) not permitted for the {what} thread ({}): running with normal priority; \
             timing will show more jitter (grant CAP_SYS_NICE or an rtprio limit to fix)",
            std::io::Error::from_raw_os_error(r)
        );
    }
    if let Some(cpu) = policy.cpu {
        // SAFETY: cpu_set_t is a plain bit array, valid all-zero; CPU_SET bounds-checks `cpu` (panics, never writes
        // outside `set`); sched_setaffinity reads exactly size_of::<cpu_set_t>() bytes of the live `set`.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            status.pinned = libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0;
        }
    }
    status
}

/// Locks current and future memory so page faults cannot stall the
/// real-time path. Returns whether it worked; warns once if not.
pub fn lock_memory() -> bool {
    // SAFETY: mlockall has no memory-safety preconditions.
    let ok = unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } == 0;
    if !ok && !WARNED_MLOCK.swap(true, Ordering::Relaxed) {
        log::warn!("could not lock memory (mlockall: {}): page faults may add latency", std::io::Error::last_os_error());
    }
    ok
}
