//! Signals while a program or a REPL command runs. Ctrl-C (SIGINT) cancels the runs of every
//! engine — the robot holds within a tick, whichever engine `morc.use_robot` started — and
//! interrupts the Lua code (see [`morc_lua::interrupt`]): a program ends (exit 130) unless
//! it takes the interruption with `morc.catch_interrupt`; the REPL returns to its prompt.
//! SIGTERM and SIGHUP do the same and then end the program or the REPL (exit 143 / 129),
//! so recordings are closed and the bus is left holding, not cut mid-motion.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use mlua::Lua;

use morc_lua::interrupt;

/// The signal that asks the process to end (SIGTERM, SIGHUP), or 0.
static TERMINATING: AtomicI32 = AtomicI32::new(0);
/// Whether Lua code runs now (false while the REPL waits at its prompt).
static BUSY: AtomicBool = AtomicBool::new(true);

extern "C" fn on_signal(signal: libc::c_int) {
    // Only atomics and async-signal-safe calls here: this runs in a signal handler.
    if signal != libc::SIGINT {
        TERMINATING.store(signal, Ordering::SeqCst);
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
    interrupt::request();
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
    set_handler(on_stop_signal)
}

/// The signal a tool was asked to stop by (see [`install_stop_flag`]), if any.
pub fn stop_signal() -> Option<i32> {
    Some(STOP_SIGNAL.load(Ordering::Relaxed)).filter(|s| *s != 0)
}

/// Routes SIGINT, SIGTERM and SIGHUP to the engines and to the Lua code of `lua`.
pub fn install(lua: &Lua) -> Result<(), String> {
    set_handler(on_signal)?;
    interrupt::install_hook(lua);
    Ok(())
}

/// `handler` for SIGINT, SIGTERM and SIGHUP.
fn set_handler(handler: extern "C" fn(libc::c_int)) -> Result<(), String> {
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: a plain sigaction with a handler that only touches atomics (and re-raises).
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = handler as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            if libc::sigaction(signal, &action, std::ptr::null_mut()) != 0 {
                return Err(format!("cannot install the Ctrl-C handler: {}", std::io::Error::last_os_error()));
            }
        }
    }
    Ok(())
}

/// The REPL is at its prompt (`false`) or runs a command (`true`).
pub fn set_busy(busy: bool) {
    BUSY.store(busy, Ordering::SeqCst);
}

/// The terminating signal received (SIGTERM, SIGHUP), if any.
pub fn terminating() -> Option<i32> {
    match TERMINATING.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}
