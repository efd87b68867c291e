//! Ctrl-C while a program or a REPL command runs: the running assembly is
//! cancelled (the robot holds) and, where no run is in progress — or always,
//! for a program — the Lua code is interrupted with an error.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use mlua::{AnyUserData, HookTriggers, Lua, VmState};

use crate::kernel::engine::Canceller;
use crate::lua::engine::{LuaEngine, RUNS_IN_PROGRESS};

/// What Ctrl-C ends.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The running command: a run is cancelled and the session goes on.
    Repl,
    /// The whole program: the run is cancelled and the program stops.
    Program,
}

/// Set by Ctrl-C: the Lua hook raises "interrupted" at the next check.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// Cancels the engine's run from the SIGINT handler.
static CANCELLER: OnceLock<Canceller> = OnceLock::new();
static STOP_PROGRAM: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_signal: libc::c_int) {
    // Only atomics here: this runs in a signal handler.
    let running = RUNS_IN_PROGRESS.load(Ordering::SeqCst) > 0;
    if running {
        if let Some(c) = CANCELLER.get() {
            c.cancel();
        }
    }
    if !running || STOP_PROGRAM.load(Ordering::SeqCst) {
        INTERRUPTED.store(true, Ordering::SeqCst);
    }
}

/// Routes SIGINT to the engine of `lua` and installs the hook that lets
/// Ctrl-C stop Lua code that loops without calling the engine.
pub fn install(lua: &Lua, engine: &AnyUserData, mode: Mode) -> Result<(), String> {
    let canceller = engine.borrow::<LuaEngine>().map_err(|e| e.to_string())?.0.canceller();
    let _ = CANCELLER.set(canceller);
    STOP_PROGRAM.store(mode == Mode::Program, Ordering::SeqCst);
    // SAFETY: a plain sigaction with a handler that only touches atomics.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigint as extern "C" fn(libc::c_int) as usize;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        if libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut()) != 0 {
            return Err(format!("cannot install the Ctrl-C handler: {}", std::io::Error::last_os_error()));
        }
    }
    // A program stops at its next line; the REPL checks less often (it may run heavy code).
    let triggers = match mode {
        Mode::Program => HookTriggers::new().every_line(),
        Mode::Repl => HookTriggers::new().every_nth_instruction(1000),
    };
    lua.set_hook(triggers, |_, _| {
        if INTERRUPTED.swap(false, Ordering::SeqCst) {
            Err(mlua::Error::runtime("interrupted (Ctrl-C); the robot holds"))
        } else {
            Ok(VmState::Continue)
        }
    });
    Ok(())
}

/// Forgets a Ctrl-C that came between commands (the REPL clears it before each).
pub fn clear() {
    INTERRUPTED.store(false, Ordering::SeqCst);
}
