//! The step watchdog of the stepping threads' Lua states: a step (or an `init`) that runs past
//! its time limit is stopped with an error, even when it catches errors in a loop, so that an
//! endless loop cannot keep the engine's thread (which also cycles the bus and holds the robot)
//! from its next tick.
//!
//! No hook runs while steps run normally: a count hook armed during every step (a look at the
//! clock every 1000 instructions) made plain Lua code about twice as slow. Instead each state
//! publishes with plain atomic stores when its current step started and its deadline
//! ([`Watch::begin`], [`Watch::end`]). One thread per process looks at them; for a step past its
//! deadline it arms a count hook from its own thread, which Lua allows (see [`Watch::look`]). The
//! hook raises the error at every instruction of that step until the step ends, so a `pcall` in
//! the way cannot swallow it, and disarms itself in any other step.
//!
//! Races:
//! - A generation counter, odd while a step runs, names the step the hook was armed for; the
//!   hook raises only in that step ([`hook`]).
//! - `lua_sethook` calls on one state from the watchdog and from the state's own thread are
//!   serialised by a lock of the state's; the state's own thread takes it only when the hook was
//!   armed, or when a coroutine is resumed.
//! - The watchdog touches a state only while it holds its registry's lock, and a state leaves the
//!   registry ([`unregister`]) before it is closed.
//! - Coroutines: a hook belongs to one Lua thread, and a coroutine caught in a loop never returns
//!   to the thread the watchdog armed. `coroutine.resume` (and so `coroutine.wrap`) in these
//!   states publishes the coroutine it runs, and the watchdog arms that one as well.

use std::ffi::CStr;
use std::os::raw::c_int;
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use mlua::ffi;
use morc_kernel::{monotonic_ns, thread_cpu_ns};

/// The error a step past its time limit fails with (`%I`: how long it had run, in ms).
const MESSAGE: &CStr = c"ran past its time limit (a step: 10 periods, at least 20 ms; init: 10 s; stopped after %I ms): an endless loop? The robot holds";

/// How often the watchdog looks at the states when no step it has seen running is near its
/// deadline. Below the shortest limit (20 ms), so a runaway step is seen running before its
/// deadline and then stopped at the deadline itself.
const POLL_NS: u64 = 10_000_000;

/// What one Lua state publishes for the watchdog, and what the watchdog arms in it.
pub(crate) struct Watch {
    /// The state's main thread.
    state: *mut ffi::lua_State,
    /// Bumped at the start and at the end of each step: odd while a step runs. Written only by
    /// the state's own thread.
    generation: AtomicU64,
    /// When the current step started (monotonic ns).
    started_ns: AtomicU64,
    /// When the current step must have ended (monotonic ns).
    deadline_ns: AtomicU64,
    /// The generation the hook was armed for (0: not armed).
    armed: AtomicU64,
    /// The generation whose CPU time the hook marked, and the thread's CPU time then (ns):
    /// written by the hook, on the state's own thread.
    cpu_marked: AtomicU64,
    cpu_mark_ns: AtomicU64,
    /// The generation the hook raised [`MESSAGE`] in (written by the hook, on the state's own
    /// thread): that step was stopped for its time limit, whatever else it ran into meanwhile.
    stopped: AtomicU64,
    /// The coroutine that runs now, inside the main thread (null: the main thread itself).
    running: AtomicPtr<ffi::lua_State>,
    /// Serialises `lua_sethook` on this state's Lua threads and changes of `running`.
    arming: Mutex<()>,
}

// SAFETY: the raw Lua threads are only handed to lua_sethook (documented as safe from another
// thread, see `look`), under `arming`, while the state is registered (so not closed).
unsafe impl Send for Watch {}
unsafe impl Sync for Watch {}

impl Watch {
    /// The watch of `state` (a fresh state with the standard libraries, nothing run in it yet):
    /// kept in the state's extra space, where coroutines find it too (Lua copies the main
    /// thread's extra space into every new thread), and `coroutine.resume`/`coroutine.wrap`
    /// replaced by ones that tell the watchdog which coroutine runs. The caller registers it
    /// ([`register`]) and keeps it alive as long as the state.
    ///
    /// # Safety
    /// `state` is a fresh state of the caller's with the standard libraries open.
    pub(crate) unsafe fn install(state: *mut ffi::lua_State) -> Result<Arc<Watch>, String> {
        let watch = Arc::new(Watch {
            state,
            generation: AtomicU64::new(0),
            started_ns: AtomicU64::new(0),
            deadline_ns: AtomicU64::new(0),
            armed: AtomicU64::new(0),
            cpu_marked: AtomicU64::new(0),
            cpu_mark_ns: AtomicU64::new(0),
            stopped: AtomicU64::new(0),
            running: AtomicPtr::new(ptr::null_mut()),
            arming: Mutex::new(()),
        });
        *(ffi::lua_getextraspace(state) as *mut *const Watch) = Arc::as_ptr(&watch);
        let top = ffi::lua_gettop(state);
        ffi::lua_getglobal(state, c"coroutine".as_ptr());
        let co = ffi::lua_gettop(state);
        ffi::lua_getfield(state, co, c"resume".as_ptr());
        ffi::lua_pushcclosure(state, resume, 1);
        ffi::lua_setfield(state, co, c"resume".as_ptr());
        let status = ffi::luaL_loadbufferx(state, WRAP.as_ptr() as *const _, WRAP.len(), c"=morc.coroutine.wrap".as_ptr(), c"t".as_ptr());
        if status == ffi::LUA_OK {
            for f in [c"create", c"resume", c"status", c"close"] {
                ffi::lua_getfield(state, co, f.as_ptr());
            }
            if ffi::lua_pcall(state, 4, 1, 0) == ffi::LUA_OK {
                ffi::lua_setfield(state, co, c"wrap".as_ptr());
                ffi::lua_settop(state, top);
                return Ok(watch);
            }
        }
        let text = ffi::lua_tolstring(state, -1, ptr::null_mut());
        let message = if text.is_null() { String::from("(no message)") } else { CStr::from_ptr(text).to_string_lossy().into_owned() };
        ffi::lua_settop(state, top);
        Err(format!("cannot set up the step watchdog of a stepping thread's Lua state: {message}"))
    }

    /// A step (or an `init`) starts on the state's own thread, to be stopped past `limit_ns`.
    /// The real-time path: a clock read and three stores.
    #[inline]
    pub(crate) fn begin(&self, limit_ns: u64) {
        let now = monotonic_ns();
        self.started_ns.store(now, Ordering::Relaxed);
        self.deadline_ns.store(now.saturating_add(limit_ns), Ordering::Release);
        // Release: a watchdog that sees the odd generation sees this step's deadline.
        self.generation.store(self.generation.load(Ordering::Relaxed) + 1, Ordering::Release);
    }

    /// The step started by [`Watch::begin`] has ended (on the state's own thread): the hook goes
    /// if the watchdog armed it. Should the watchdog arm it only now, for the step that just
    /// ended, the hook disarms itself at the next instruction it sees. Returns whether the step
    /// ran past its time limit (the hook stopped it with [`MESSAGE`]).
    #[inline]
    pub(crate) fn end(&self) -> bool {
        let generation = self.generation.load(Ordering::Relaxed);
        let overran = self.stopped.load(Ordering::Relaxed) == generation;
        self.generation.store(generation + 1, Ordering::Release);
        if self.armed.load(Ordering::Relaxed) != 0 {
            let _arming = self.lock();
            self.armed.store(0, Ordering::Relaxed);
            // SAFETY: our own state, on its own thread; the watchdog's lua_sethook is held off.
            unsafe { ffi::lua_sethook(self.state, None, 0, 0) };
        }
        overran
    }

    fn lock(&self) -> MutexGuard<'_, ()> {
        self.arming.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The watchdog's look at the state at `now`: arms the hook when the step running is past
    /// its deadline, and returns the deadline of a step still within it (to look again then).
    ///
    /// Lua 5.4 allows lua_sethook from another thread. ldebug.c of the vendored Lua (5.4.7),
    /// above lua_sethook: "This function can be called during a signal, under 'reasonable'
    /// assumptions. Fields 'basehookcount' and 'hookcount' (set by 'resethookcount') are for
    /// debug only, and it is no problem if they get arbitrary values (causes at most one wrong
    /// hook call). 'hookmask' is an atomic value. We assume that pointers are atomic too (e.g.,
    /// gcc ensures that for all platforms where it runs). Moreover, 'hook' is always checked
    /// before being called (see 'luaD_hook')." The traps it sets in the running frames
    /// (settraps) are made for the same use.
    ///
    /// # Safety
    /// The state is registered (not closed), and the registry's lock is held.
    unsafe fn look(&self, now: u64) -> Option<u64> {
        let generation = self.generation.load(Ordering::Acquire);
        if generation & 1 == 0 {
            return None;
        }
        let deadline = self.deadline_ns.load(Ordering::Acquire);
        if now <= deadline {
            return Some(deadline);
        }
        let _arming = self.lock();
        // Still that step (it may have ended since), and not armed for it yet.
        if self.generation.load(Ordering::Acquire) != generation || self.armed.load(Ordering::Relaxed) == generation {
            return None;
        }
        self.armed.store(generation, Ordering::Relaxed);
        ffi::lua_sethook(self.state, Some(hook), ffi::LUA_MASKCOUNT, 1);
        let co = self.running.load(Ordering::Relaxed);
        if !co.is_null() {
            ffi::lua_sethook(co, Some(hook), ffi::LUA_MASKCOUNT, 1);
        }
        None
    }

    /// Whether the hook is armed for the step running now (on the state's own thread).
    fn overdue(&self) -> bool {
        let generation = self.generation.load(Ordering::Relaxed);
        generation & 1 == 1 && self.armed.load(Ordering::Relaxed) == generation
    }

    /// `th` (the main thread or a coroutine) runs from now on; armed too if the step is overdue.
    ///
    /// # Safety
    /// On the state's own thread; `th` is a live thread of the state.
    unsafe fn switch_to(&self, th: *mut ffi::lua_State) {
        let _arming = self.lock();
        self.running.store(if th == self.state { ptr::null_mut() } else { th }, Ordering::Relaxed);
        if self.overdue() {
            ffi::lua_sethook(th, Some(hook), ffi::LUA_MASKCOUNT, 1);
        }
    }
}

/// The [`Watch`] of a state or of one of its coroutines.
///
/// # Safety
/// `l` belongs to a state set up by [`Watch::install`], which is still open.
unsafe fn watch_of<'a>(l: *mut ffi::lua_State) -> &'a Watch {
    &**(ffi::lua_getextraspace(l) as *const *const Watch)
}

/// The count hook the watchdog arms: in the overdue step, the error (again at every instruction,
/// so that a `pcall` in a loop cannot swallow it); anywhere else, it disarms itself.
unsafe extern "C-unwind" fn hook(l: *mut ffi::lua_State, _: *mut ffi::lua_Debug) {
    let watch = watch_of(l);
    if !watch.overdue() {
        let _arming = watch.lock();
        // Armed for a step that had ended: the watchdog cannot arm this step meanwhile.
        if !watch.overdue() {
            ffi::lua_sethook(l, None, 0, 0);
            return;
        }
    }
    // Past the deadline on the wall clock, but a thread the machine did not run (another build
    // on it, a loaded CI) has not looped: only the CPU time the step used counts. The first
    // call marks the thread's CPU time and looks again every 1000 instructions; the step is
    // stopped once it has used its limit of CPU since.
    let generation = watch.generation.load(Ordering::Relaxed);
    let cpu = thread_cpu_ns();
    if watch.cpu_marked.load(Ordering::Relaxed) != generation {
        watch.cpu_marked.store(generation, Ordering::Relaxed);
        watch.cpu_mark_ns.store(cpu, Ordering::Relaxed);
        let _arming = watch.lock();
        ffi::lua_sethook(l, Some(hook), ffi::LUA_MASKCOUNT, 1000);
        return;
    }
    let limit = watch.deadline_ns.load(Ordering::Relaxed).saturating_sub(watch.started_ns.load(Ordering::Relaxed));
    if cpu.saturating_sub(watch.cpu_mark_ns.load(Ordering::Relaxed)) < limit {
        return;
    }
    {
        // From now on at every instruction, so that a pcall in a loop cannot swallow the error.
        let _arming = watch.lock();
        ffi::lua_sethook(l, Some(hook), ffi::LUA_MASKCOUNT, 1);
    }
    watch.stopped.store(generation, Ordering::Relaxed);
    let ran_ms = monotonic_ns().saturating_sub(watch.started_ns.load(Ordering::Relaxed)) / 1_000_000;
    // No Rust value with a destructor is alive here: luaL_error does not return.
    ffi::luaL_error(l, MESSAGE.as_ptr(), ran_ms as ffi::lua_Integer);
}

/// `coroutine.resume` of a stepping thread's state: Lua's own (upvalue 1), with the watchdog
/// told which coroutine runs.
unsafe extern "C-unwind" fn resume(l: *mut ffi::lua_State) -> c_int {
    let co = ffi::lua_tothread(l, 1);
    if co.is_null() {
        // Lua's own message, naming this function (Lua's, called from here, would be '?').
        let got = ffi::lua_typename(l, ffi::lua_type(l, 1));
        let message = ffi::lua_pushfstring(l, c"coroutine expected, got %s".as_ptr(), got);
        return ffi::luaL_argerror(l, 1, message);
    }
    let watch = watch_of(l);
    watch.switch_to(co);
    let n = ffi::lua_gettop(l);
    ffi::lua_pushvalue(l, ffi::lua_upvalueindex(1));
    ffi::lua_insert(l, 1);
    // Protected, so that `running` is put back whatever happens.
    let status = ffi::lua_pcall(l, n, ffi::LUA_MULTRET, 0);
    watch.switch_to(l);
    if status != ffi::LUA_OK {
        ffi::lua_error(l);
    }
    ffi::lua_gettop(l)
}

/// `coroutine.wrap` on the `coroutine.resume` above, as Lua's own behaves: results, or the error
/// raised again (a string with the caller's position), the coroutine closed.
const WRAP: &str = r#"
local create, resume, status, close = ...
local function finish(co, ok, ...)
  if ok then return ... end
  local e = ...
  if status(co) == "dead" then
    local closed, why = close(co)
    if not closed then e = why end
  end
  error(e, 2)
end
return function(f)
  local co = create(f)
  return function(...) return finish(co, resume(co, ...)) end
end
"#;

/// The states the watchdog looks at, and the signal that there are some.
struct Registry {
    watches: Mutex<Vec<Arc<Watch>>>,
    changed: Condvar,
}

static REGISTRY: OnceLock<Registry> = OnceLock::new();

fn registry() -> &'static Registry {
    REGISTRY.get_or_init(|| {
        let _ = std::thread::Builder::new().name("morc-lua-watchdog".into()).spawn(watch_loop);
        Registry { watches: Mutex::new(Vec::new()), changed: Condvar::new() }
    })
}

/// The watchdog looks at `watch`'s state from now on.
pub(crate) fn register(watch: &Arc<Watch>) {
    let r = registry();
    r.watches.lock().unwrap_or_else(|e| e.into_inner()).push(watch.clone());
    r.changed.notify_all();
}

/// The watchdog no longer looks at `watch`'s state (before the state is closed): when this
/// returns, it is not touching it either.
pub(crate) fn unregister(watch: &Arc<Watch>) {
    let Some(r) = REGISTRY.get() else { return };
    r.watches.lock().unwrap_or_else(|e| e.into_inner()).retain(|w| !Arc::ptr_eq(w, watch));
}

/// The watchdog thread: looks at every registered state every [`POLL_NS`], or at the deadline
/// of a step it saw running if that comes first; sleeps while there is none.
fn watch_loop() {
    let r = registry();
    let mut watches = r.watches.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        if watches.is_empty() {
            watches = r.changed.wait(watches).unwrap_or_else(|e| e.into_inner());
            continue;
        }
        let now = monotonic_ns();
        let mut next = now + POLL_NS;
        for w in watches.iter() {
            // SAFETY: registered, and the registry's lock is held.
            if let Some(deadline) = unsafe { w.look(now) } {
                next = next.min(deadline + 1);
            }
        }
        let wait = Duration::from_nanos(next.saturating_sub(monotonic_ns()).max(1));
        watches = r.changed.wait_timeout(watches, wait).unwrap_or_else(|e| e.into_inner()).0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A state with the standard libraries and a watch, not registered (the tests look by hand).
    struct State {
        l: *mut ffi::lua_State,
        watch: Arc<Watch>,
    }

    impl State {
        fn new() -> State {
            unsafe {
                let l = ffi::luaL_newstate();
                ffi::luaL_openlibs(l);
                let watch = Watch::install(l).unwrap();
                State { l, watch }
            }
        }
        /// Runs `code`; the error's text if it fails.
        fn run(&self, code: &str) -> Result<(), String> {
            unsafe {
                let top = ffi::lua_gettop(self.l);
                let mut status = ffi::luaL_loadbufferx(self.l, code.as_ptr() as *const _, code.len(), c"=test".as_ptr(), ptr::null());
                if status == ffi::LUA_OK {
                    status = ffi::lua_pcall(self.l, 0, 0, 0);
                }
                let r = if status == ffi::LUA_OK { Ok(()) } else { Err(CStr::from_ptr(ffi::lua_tolstring(self.l, -1, ptr::null_mut())).to_string_lossy().into_owned()) };
                ffi::lua_settop(self.l, top);
                r
            }
        }
        fn hooked(&self) -> bool {
            unsafe { ffi::lua_gethookmask(self.l) != 0 }
        }
    }

    impl Drop for State {
        fn drop(&mut self) {
            unsafe { ffi::lua_close(self.l) };
        }
    }

    #[test]
    fn no_hook_while_steps_run_within_their_limit() {
        let s = State::new();
        s.watch.begin(1_000_000_000);
        assert!(unsafe { s.watch.look(monotonic_ns()) }.is_some(), "a step running is seen with its deadline");
        s.run("local x = 0 for i = 1, 1000 do x = x + i end").unwrap();
        assert!(!s.hooked());
        s.watch.end();
        assert_eq!(unsafe { s.watch.look(u64::MAX) }, None, "no step runs: nothing to arm");
        assert!(!s.hooked());
    }

    #[test]
    fn an_overdue_step_is_stopped_even_when_it_catches_errors() {
        let s = State::new();
        s.watch.begin(0);
        unsafe { s.watch.look(monotonic_ns() + 1) };
        assert!(s.hooked(), "armed for the overdue step");
        let e = s.run("while true do pcall(function() for i = 1, 100 do end end) end").unwrap_err();
        assert!(e.contains("ran past its time limit"), "{e}");
        s.watch.end();
        assert!(!s.hooked(), "disarmed when the step ends");
        s.run("for i = 1, 100 do end").unwrap();
    }

    #[test]
    fn a_hook_armed_for_a_step_that_ended_does_not_stop_the_next() {
        let s = State::new();
        s.watch.begin(0);
        // The watchdog saw step 1 running, then arms it just after it ended.
        s.watch.generation.store(2, Ordering::Release);
        {
            let _arming = s.watch.lock();
            s.watch.armed.store(1, Ordering::Relaxed);
            unsafe { ffi::lua_sethook(s.l, Some(hook), ffi::LUA_MASKCOUNT, 1) };
        }
        s.watch.begin(1_000_000_000);
        s.run("local x = 0 for i = 1, 100 do x = x + i end").unwrap();
        assert!(!s.hooked(), "the stale hook disarmed itself");
        s.watch.end();
        // Not armed for a step that has ended.
        s.watch.begin(0);
        let generation = s.watch.generation.load(Ordering::Relaxed);
        s.watch.end();
        assert_eq!(unsafe { s.watch.look(u64::MAX) }, None);
        assert_ne!(s.watch.armed.load(Ordering::Relaxed), generation);
        assert!(!s.hooked());
    }

    #[test]
    fn a_coroutine_in_an_endless_loop_is_stopped_too() {
        let s = State::new();
        // The watchdog thread for real: a step of 50 ms spinning inside a coroutine, resumed by
        // coroutine.wrap inside a pcall.
        register(&s.watch);
        let start = monotonic_ns();
        s.watch.begin(50_000_000);
        let e = s.run("local f = coroutine.wrap(function() while true do end end) while true do pcall(f) end").unwrap_err();
        s.watch.end();
        unregister(&s.watch);
        let took_ms = (monotonic_ns() - start) / 1_000_000;
        assert!(e.contains("ran past its time limit"), "{e}");
        assert!(took_ms >= 50, "stopped after {took_ms} ms, before its deadline");
        assert!(!s.hooked());
    }

    #[test]
    fn wrap_and_resume_behave_as_lua_s_own() {
        let s = State::new();
        s.run(
            r##"
            local gen = coroutine.wrap(function(a) local b = coroutine.yield(a + 1) return b * 2, "done" end)
            assert(gen(1) == 2)
            local x, y = gen(5)
            assert(x == 10 and y == "done")
            local ok, e = pcall(gen)
            assert(not ok and e:find("cannot resume dead coroutine"), e)
            local bad = coroutine.wrap(function() error("boom") end)
            ok, e = pcall(bad)
            assert(not ok and e:find("test:%d+: boom"), e)
            local t = {}
            ok, e = pcall(coroutine.wrap(function() error(t) end))
            assert(not ok and e == t, "a table error goes through as is")
            local co = coroutine.create(function(...) return select("#", ...), ... end)
            local r = table.pack(coroutine.resume(co, 1, nil, 3))
            assert(r[1] == true and r[2] == 3 and r[3] == 1 and r[5] == 3)
            assert(select(2, coroutine.resume(co)) == "cannot resume dead coroutine")
            ok, e = pcall(coroutine.resume, 42)
            assert(not ok and e:find("bad argument #1 to 'coroutine.resume' (coroutine expected, got number)", 1, true), e)
            "##,
        )
        .unwrap();
        assert!(s.watch.running.load(Ordering::Relaxed).is_null(), "back on the main thread");
    }
}
