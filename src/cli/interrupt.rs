//! Signals while a program or a REPL command runs. Ctrl-C (SIGINT) cancels the runs of every
//! engine — the robot holds within a tick, whichever engine `morc.use_robot` started — and
//! interrupts the Lua code (see [`morc_lua::interrupt`]): a program ends (exit 130) unless
//! it takes the interruption with `morc.catch_interrupt`; the REPL returns to its prompt.
//! SIGTERM and SIGHUP do the same and then end the program or the REPL (exit 143 / 129),
//! so recordings are closed and the bus is left holding, not cut mid-motion. At the REPL's
//! prompt, where no Lua runs, SIGTERM and SIGHUP end the process at once, unless a run goes on
//! in the background (`engine:start`): then it is stopped and the REPL ends cleanly.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use mlua::Lua;

use morc_lua::interrupt;

/// The signal that asks the process to end (SIGTERM, SIGHUP), or 0.
static TERMINATING: AtomicI32 = AtomicI32::new(0);
/// The thread (Linux task id) that reads the REPL's prompt: the one that installed the handler.
static REPL_THREAD: AtomicI32 = AtomicI32::new(0);
/// Whether Lua code runs now (false while the REPL waits at its prompt).
static BUSY: AtomicBool = AtomicBool::new(true);

extern "C" fn on_signal(signal: libc::c_int) {
    // Only atomics and async-signal-safe calls here: this runs in a signal handler.
    if signal != libc::SIGINT {
        TERMINATING.store(signal, Ordering::SeqCst);
        if !BUSY.load(Ordering::SeqCst) && morc_kernel::runs_in_progress() > 0 {
            // The REPL's prompt, with a run going on in the background: stop it and wake the
            // line editor through its Ctrl-C (the REPL then ends as after Ctrl-D, closing the
            // recordings with the robot holding).
            morc_kernel::cancel_all_runs();
            // To the REPL's thread, whose blocking read only a signal to it interrupts.
            // SAFETY: a raw tgkill, async-signal-safe, to a thread of this process.
            unsafe { libc::syscall(libc::SYS_tgkill, libc::getpid(), REPL_THREAD.load(Ordering::SeqCst), libc::SIGINT) };
            return;
        }
        if !BUSY.load(Ordering::SeqCst) {
            // Nothing runs (the REPL's prompt): end as the signal would have, without a handler.
            // SAFETY: signal and raise are async-signal-safe.
            unsafe {
                libc::signal(signal, libc::SIG_DFL);
                libc::raise(signal);
            }
            return;
        }
    }
    interrupt::request_by(signal);
}

/// The signal a tool without Lua (`morc fmu sim`) was asked to stop by, or 0.
static STOP_SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_stop_signal(signal: libc::c_int) {
    // Only an atomic store: this runs in a signal handler.
    STOP_SIGNAL.store(signal, Ordering::SeqCst);
}

/// For a tool that runs a loop without Lua: SIGINT, SIGTERM and SIGHUP only set a flag, which
/// the loop reads ([`stop_signal`]) to end cleanly (its output flushed) instead of dying mid-row.
pub fn install_stop_flag() -> Result<(), String> {
    set_handler(on_stop_signal, &[libc::SIGINT, libc::SIGTERM, libc::SIGHUP], true)
}

/// The signal a tool was asked to stop by (see [`install_stop_flag`]), if any.
pub fn stop_signal() -> Option<i32> {
    Some(STOP_SIGNAL.load(Ordering::Relaxed)).filter(|s| *s != 0)
}

/// Routes SIGINT, SIGTERM and SIGHUP to the engines and to the Lua code of `lua`.
pub fn install(lua: &Lua) -> Result<(), String> {
    // SAFETY: gettid has no preconditions.
    REPL_THREAD.store(unsafe { libc::gettid() }, Ordering::SeqCst);
    set_handler(on_signal, &[libc::SIGINT, libc::SIGTERM, libc::SIGHUP], true)?;
    interrupt::install_hook(lua);
    Ok(())
}

/// `handler` for `signals`; with `restart`, a system call they interrupt is restarted.
fn set_handler(handler: extern "C" fn(libc::c_int), signals: &[libc::c_int], restart: bool) -> Result<(), String> {
    for &signal in signals {
        // SAFETY: a plain sigaction with a handler that only touches atomics (and re-raises).
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = handler as usize;
            action.sa_flags = if restart { libc::SA_RESTART } else { 0 };
            libc::sigemptyset(&mut action.sa_mask);
            if libc::sigaction(signal, &action, std::ptr::null_mut()) != 0 {
                return Err(format!("cannot install the Ctrl-C handler: {}", std::io::Error::last_os_error()));
            }
        }
    }
    Ok(())
}

/// Whether the REPL runs a command now (false while it waits at its prompt).
pub fn busy() -> bool {
    BUSY.load(Ordering::SeqCst)
}

/// The REPL is at its prompt (`false`) or runs a command (`true`).
pub fn set_busy(busy: bool) {
    BUSY.store(busy, Ordering::SeqCst);
    // At the prompt, SIGTERM and SIGHUP interrupt the line editor's read (no restart), so a
    // REPL with a run in the background can end cleanly (see `on_signal`).
    let _ = set_handler(on_signal, &[libc::SIGTERM, libc::SIGHUP], busy);
}

/// The terminating signal received (SIGTERM, SIGHUP), if any.
pub fn terminating() -> Option<i32> {
    match TERMINATING.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}
