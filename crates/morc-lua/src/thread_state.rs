//! The Lua state of a stepping thread: every Lua component of one rate of an assembly lives in
//! the Lua state of the thread that steps it (the engine's Coordinator for the base rate, an
//! Updater for a slower one), and is stepped there directly, with no hand-off.
//!
//! - Memory: the state allocates from a [`Pool`] of its own (TLSF), never from the system
//!   allocator; a step that finds the pool full faults its component by name.
//! - Collector: stopped during steps; it runs in steps in the thread's slack after the tick's
//!   work ([`SlackWork`]), within the slack's deadline on the wall clock and a bounded number of
//!   steps on the virtual clock, incremental (default) or generational.
//! - Kinds: a kind defined by a module (`return morc.component { … }` in a file loaded by
//!   `require`, a library's `components/x.lua`) is loaded here by its module name, so its
//!   closures, upvalues and `require`s work as anywhere in Lua, and an edited module is what the
//!   next prepared assembly runs. A kind defined in a program's own chunk or the REPL travels
//!   as bytecode (its functions may not capture locals).
//! - The step itself goes through Lua's C API on preallocated tables: inputs are written into
//!   `inp`, vector ports are tables of numbers reused every step (`out.y[i] = …` writes in place).
//! - Watchdog: a step that runs past its time limit is stopped by an error; no hook runs while
//!   steps keep to it (see [`crate::watchdog`]).

use std::ffi::CStr;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use mlua::{ffi, Function, Lua, Table};

use crate::convert::{from_carried, from_value, to_carried, to_value_any, Carried};
use crate::kinds::instance::{lua_error_text, KindSource, LuaComponentDef};
use crate::object_params::Shared;
use crate::pool::{self, Pool};
use crate::watchdog::{self, Watch};
use morc_kernel::{monotonic_ns, thread_cpu_ns, AssemblyResults, SlackWork, StepContext, Value, STRING_PORT_CAPACITY};

/// The pool of a stepping thread when the assembly does not say (`morc.assembly { memory = MB }`):
/// 8 MB, some twenty times what a state with morc's surface and a controller uses, and quick to
/// prepare (every page of the pool is touched when the assembly is prepared).
pub const DEFAULT_POOL_BYTES: usize = 8 << 20;

/// Where the definitions captured while a module loads are kept in the state's registry.
const CAPTURED: &str = "morc.thread.kinds";

/// How the collector of a stepping thread's Lua state works.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GcMode {
    /// Lua's incremental collector, advanced a small step at a time (1 kB of work per step).
    Incremental,
    /// Lua's generational collector: a minor collection when the young generation has grown.
    Generational,
}

static GC_MODE_GENERATIONAL: AtomicBool = AtomicBool::new(false);

/// Sets the collector mode of the stepping threads' Lua states prepared from now on.
pub fn set_gc_mode(mode: GcMode) {
    GC_MODE_GENERATIONAL.store(mode == GcMode::Generational, Ordering::Relaxed);
}

fn gc_mode() -> GcMode {
    if GC_MODE_GENERATIONAL.load(Ordering::Relaxed) {
        GcMode::Generational
    } else {
        GcMode::Incremental
    }
}

/// Collector figures of one state, readable from any thread.
#[derive(Default)]
pub struct GcStats {
    /// The longest single collector step (ns, wall clock: preemption included).
    pub worst_step_ns: AtomicU64,
    /// The most CPU time a single collector step used (ns: what the step itself costs).
    pub worst_step_cpu_ns: AtomicU64,
    /// Collector steps taken.
    pub steps: AtomicU64,
    /// Whole cycles completed (incremental) or minor collections (generational).
    pub cycles: AtomicU64,
}

/// A stepping thread's Lua state, shared by the Lua components that thread steps.
pub(crate) struct ThreadLua {
    inner: Mutex<Inner>,
    /// Whether the state's collector is registered as the thread's slack work.
    pub slack_registered: AtomicBool,
    pub stats: GcStats,
}

struct Inner {
    /// mlua's handle, for everything off the real-time path. Dropped before the state closes.
    lua: Option<Lua>,
    state: *mut ffi::lua_State,
    /// Declared after `state`'s users; freed in Drop after `lua_close`.
    pool: Box<Pool>,
    /// What the watchdog sees of the steps (registered with it while the state is open).
    watch: Arc<Watch>,
    /// Whether the last step was stopped by the watchdog for its time limit: that is then its
    /// fault, even if it also filled the pool meanwhile (which of the two comes first depends
    /// on the machine's speed; the time limit is what stopped it).
    overran: bool,
    gc: Collector,
    /// CPU time of each collector step (ns): the distribution, beside the worst in [`GcStats`].
    gc_steps_cpu: morc_kernel::Histogram,
}

// SAFETY: the Lua state and its pool are only touched behind the mutex; the state never
// leaves this structure, and the mlua handle is built with mlua's `send` feature.
unsafe impl Send for Inner {}

struct Collector {
    mode: GcMode,
    in_cycle: bool,
    /// Bytes in use after the last completed collection.
    live: usize,
    /// Bytes in use at which the next cycle (or minor collection) starts.
    threshold: usize,
}

impl Collector {
    fn settle(&mut self, used: usize, capacity: usize) {
        self.live = used;
        let grow = match self.mode {
            // A cycle every ~1/8 of the live heap (at least 32 kB) of new garbage: the atomic
            // phase frees the dead objects at the head of the heap list in one go (Lua's
            // entersweep), so the less garbage a cycle finds there, the shorter that one step
            // (callgrind: with 256 kB per cycle it was most of the long step's work).
            GcMode::Incremental => (used / 16).max(16 << 10),
            GcMode::Generational => (used / 5).max(64 << 10),
        };
        // Never wait past three quarters of the pool: the cycle must end before it is full.
        self.threshold = (used + grow).min(capacity / 4 * 3).max(used + 1);
    }
}

/// A port's keys and preallocated table in the state's registry.
struct PortRef {
    key: c_int,
    /// The vector's table (LUA_NOREF for scalars).
    table: c_int,
}

/// One Lua component's place in its thread's state: registry references to its functions,
/// `self`, `inp` and `out`, and to its ports' keys and vector tables.
pub(crate) struct Instance {
    step: c_int,
    terminate: c_int,
    /// `migrate(self, old)`, when the kind has one (LUA_NOREF otherwise).
    migrate: c_int,
    this: c_int,
    inp: c_int,
    out: c_int,
    inputs: Vec<PortRef>,
    outputs: Vec<PortRef>,
}

/// An instance's tables and ports as made off the real-time path, before they are referenced.
struct Setup {
    this: Table,
    inp: Table,
    out: Table,
    inputs: Vec<PortRef>,
    outputs: Vec<PortRef>,
    init: Option<Function>,
}

impl ThreadLua {
    /// A new state with a pool of `pool_bytes` and the morc surface a component may use (no
    /// engine: a component does not start runs).
    pub fn new(pool_bytes: usize) -> Result<ThreadLua, String> {
        let mut pool = Pool::new(pool_bytes)?;
        // SAFETY: the pool outlives the state: Inner's Drop closes the state first.
        let state = unsafe { pool::new_state(&mut pool)? };
        // SAFETY: a fresh state of ours, with the standard libraries; the watch lives in Inner
        // as long as the state.
        let watch = unsafe {
            ffi::lua_pushcfunction(state, crate::print_queue::lua_print);
            ffi::lua_setglobal(state, c"print".as_ptr());
            Watch::install(state)
        };
        let watch = match watch {
            Ok(w) => w,
            Err(e) => {
                // SAFETY: ours, not handed to anyone yet.
                unsafe { ffi::lua_close(state) };
                return Err(e);
            }
        };
        watchdog::register(&watch);
        let mut inner = Inner {
            lua: None,
            state,
            pool,
            watch,
            overran: false,
            gc_steps_cpu: morc_kernel::Histogram::new(),
            gc: Collector { mode: gc_mode(), in_cycle: false, live: 0, threshold: 0 },
        };
        // SAFETY: a fresh state of ours; mlua keeps its bookkeeping in the state's registry.
        let lua = unsafe { Lua::init_from_ptr(state) };
        crate::set_search_path(&lua, &crate::home()).map_err(|e| e.to_string())?;
        crate::install_for_components(&lua).map_err(|e| format!("cannot set up the Lua state of a stepping thread: {}", lua_error_text(&e)))?;
        lua.set_app_data(ThreadStateMarker);
        inner.lua = Some(lua);
        unsafe {
            ffi::lua_gc(state, ffi::LUA_GCCOLLECT);
            ffi::lua_gc(state, ffi::LUA_GCSTOP);
            match inner.gc.mode {
                // The smallest steps Lua takes (about one object marked or a few swept each), so
                // a step fits any slack; only the atomic phase is one longer step.
                GcMode::Incremental => ffi::lua_gc(state, ffi::LUA_GCINC, 0, 0, INCREMENTAL_STEP_LOG2),
                GcMode::Generational => ffi::lua_gc(state, ffi::LUA_GCGEN, 0, 0),
            };
        }
        let (used, capacity) = (inner.pool.used, inner.pool.capacity);
        inner.gc.settle(used, capacity);
        Ok(ThreadLua { inner: Mutex::new(inner), slack_registered: AtomicBool::new(false), stats: GcStats::default() })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Places an instance of `def` named `name` with parameters `params` (and the robots and
    /// models `handed` to its object parameters) in the state, runs its `init` and writes its
    /// initial outputs. Off the real-time path.
    pub fn add_instance(
        &self,
        def: &LuaComponentDef,
        info: &morc_kernel::ComponentInfo,
        name: &str,
        params: &[(String, Value)],
        handed: &[(String, Shared)],
        outputs: &mut [Value],
    ) -> Result<Instance, String> {
        let mut inner = self.lock();
        let kind = inner.load_kind(def)?;
        let lua = inner.lua.clone().expect("state set up");
        let state = inner.state;
        let setup = || -> mlua::Result<Setup> {
            let this = lua.create_table()?;
            this.set("name", name)?;
            for (k, v) in params {
                this.set(k.as_str(), from_value(&lua, v)?)?;
            }
            // self.robot: the robot handed, made in this state (its model shared), or the module
            // the parameter names.
            for p in &def.objects {
                let module = match params.iter().find(|(k, _)| *k == p.name) {
                    Some((_, Value::String(m))) => m.as_str(),
                    _ => "",
                };
                let given = handed.iter().find(|(k, _)| *k == p.name).map(|(_, o)| o);
                this.set(p.name.as_str(), crate::object_params::in_state(&lua, p, given, module).map_err(mlua::Error::runtime)?)?;
            }
            let ports = |t: &Table, list: &[morc_kernel::PortInfo], values: Option<&[Value]>| -> mlua::Result<Vec<PortRef>> {
                let mut refs = Vec::new();
                for (i, p) in list.iter().enumerate() {
                    let key = inner_ref(&lua, mlua::Value::String(lua.create_string(&p.name)?))?;
                    let table = match p.ty {
                        morc_kernel::ValueType::Vector(n) => {
                            let v = lua.create_table_with_capacity(n, 0)?;
                            for j in 1..=n {
                                v.raw_set(j, 0.0)?;
                            }
                            t.raw_set(p.name.as_str(), v.clone())?;
                            inner_ref(&lua, mlua::Value::Table(v))?
                        }
                        _ => {
                            let initial = values.map_or(mlua::Value::Nil, |vs| from_value(&lua, &vs[i]).unwrap_or(mlua::Value::Nil));
                            t.raw_set(p.name.as_str(), initial)?;
                            ffi::LUA_NOREF
                        }
                    };
                    refs.push(PortRef { key, table });
                }
                Ok(refs)
            };
            let inp = lua.create_table()?;
            let out = lua.create_table()?;
            let inputs = ports(&inp, &info.inputs, None)?;
            let outs = ports(&out, &info.outputs, Some(outputs))?;
            let init: Option<Function> = kind.get("init")?;
            Ok(Setup { this, inp, out, inputs, outputs: outs, init })
        };
        let Setup { this, inp, out, inputs, outputs: outs, init } = setup().map_err(|e| lua_error_text(&e))?;
        if let Some(init) = init {
            // An endless loop in init must not keep the program from its prompt either.
            inner.watch.begin(INIT_LIMIT_NS);
            inner.pool.user_code = true;
            let result = init.call::<()>((this.clone(), out.clone()));
            inner.pool.user_code = false;
            inner.watch.end();
            result.map_err(|e| lua_error_text(&e))?;
        }
        let r = |v: mlua::Value| inner_ref(&lua, v).map_err(|e| lua_error_text(&e));
        let step = r(kind.get::<mlua::Value>("step").map_err(|e| e.to_string())?)?;
        let terminate = r(kind.get::<mlua::Value>("terminate").map_err(|e| e.to_string())?)?;
        let migrate = r(kind.get::<mlua::Value>("migrate").map_err(|e| e.to_string())?)?;
        let instance = Instance {
            step,
            terminate,
            migrate,
            this: r(mlua::Value::Table(this))?,
            inp: r(mlua::Value::Table(inp))?,
            out: r(mlua::Value::Table(out))?,
            inputs,
            outputs: outs,
        };
        // SAFETY: our state, locked; the references were made above.
        if let Err(e) = unsafe { inner.read_outputs(&instance, &info.outputs, outputs) } {
            inner.release(&instance);
            return Err(e);
        }
        // The garbage of loading and init is collected now, off the real-time path, so the
        // collector's first cycle in the slack has only the steps' own to deal with.
        // SAFETY: our state, locked; a full collection, then stopped again for the steps.
        unsafe {
            ffi::lua_gc(state, ffi::LUA_GCCOLLECT);
            ffi::lua_gc(state, ffi::LUA_GCSTOP);
        }
        let (used, capacity) = (inner.pool.used, inner.pool.capacity);
        inner.gc.in_cycle = false;
        inner.gc.settle(used, capacity);
        Ok(instance)
    }

    /// One step of `instance`: inputs into `inp`, `step(self, inp, out, t)`, outputs back. The
    /// real-time path: Lua's C API on preallocated tables, memory from the pool. When
    /// `collect` is set (no thread loop runs the collector), a bounded collector step follows.
    pub fn step(&self, instance: &Instance, info: &morc_kernel::ComponentInfo, ctx: &StepContext, inputs: &[Value], outputs: &mut [Value], collect: bool) -> morc_kernel::Step {
        let mut inner = self.lock();
        let refused = inner.pool.refused;
        // SAFETY: our state, locked for the whole step; the stack is restored before returning.
        let result = unsafe { inner.step(instance, info, ctx, inputs, outputs) };
        // A step the watchdog stopped was stopped for its time limit, even if the pool also ran
        // out meanwhile (Lua's emergency collection then freed the step's garbage and it looped on).
        let exhausted = inner.pool.refused != refused && !inner.overran;
        if collect {
            inner.collect(None, &self.stats);
        }
        if exhausted {
            let (capacity, peak) = (inner.pool.capacity, inner.pool.peak);
            return morc_kernel::Step::Fault(format!(
                "its thread's Lua memory pool ({}, {} at most in use) is exhausted: allocate less per step, or give the assembly a larger pool (morc.assembly {{ …, memory = MB }})",
                megabytes(capacity),
                megabytes(peak)
            ));
        }
        result
    }

    /// Runs `terminate(self)` and writes what it returns (a table) into the results. Off the
    /// real-time path.
    pub fn terminate(&self, instance: &Instance, results: &mut AssemblyResults) {
        let inner = self.lock();
        let lua = inner.lua.clone().expect("state set up");
        let get = |r: c_int| from_ref(&lua, r);
        if let (Ok(mlua::Value::Function(t)), Ok(this)) = (get(instance.terminate), get(instance.this)) {
            // terminate may draw on the reserve: a component that filled its pool still gets
            // to report (nothing of morc's needs Lua memory after it).
            match t.call::<mlua::Value>(this) {
                Ok(mlua::Value::Table(r)) => {
                    for (k, v) in r.pairs::<String, mlua::Value>().flatten() {
                        if let Ok(v) = to_value_any(&v, &k) {
                            results.set(&k, v);
                        }
                    }
                }
                Ok(_) => {}
                Err(e) => log::warn!("terminate of a Lua component failed: {}", lua_error_text(&e)),
            }
        }
        let (capacity, peak, _) = (inner.pool.capacity, inner.pool.peak, inner.pool.used);
        results.set("lua_memory_pool", Value::Integer(capacity as i64));
        results.set("lua_memory_peak", Value::Integer(peak as i64));
        results.set("lua_gc_worst_step_ns", Value::Integer(self.stats.worst_step_ns.load(Ordering::Relaxed) as i64));
        results.set("lua_gc_worst_step_cpu_ns", Value::Integer(self.stats.worst_step_cpu_ns.load(Ordering::Relaxed) as i64));
        let steps = inner.gc_steps_cpu.summary();
        results.set("lua_gc_step_cpu_p99_ns", Value::Integer(steps.p99 as i64));
        results.set("lua_gc_step_cpu_p999_ns", Value::Integer(steps.p999 as i64));
        results.set("lua_gc_steps", Value::Integer(self.stats.steps.load(Ordering::Relaxed) as i64));
    }

    /// At a swap, before `instance`'s first step: it carries on from `old_instance` (in
    /// `old`, the replaced assembly's state, after its last step). The old `self` crosses as
    /// data ([`crate::convert::to_carried`]: functions and userdata stay behind); then the
    /// kind's `migrate(self, old)` runs, or without one every entry of the old `self` but its
    /// name and parameters (`keep`: those of the new instance stand) replaces the new one's.
    /// The old outputs go into `out` too. On the Coordinator, between two ticks.
    pub fn take_over(&self, instance: &Instance, keep: &[&str], outputs: &[morc_kernel::PortInfo], old: &ThreadLua, old_instance: &Instance) -> Result<(), String> {
        let (state, out) = {
            let inner = old.lock();
            let lua = inner.lua.clone().expect("state set up");
            let carry = |r: c_int, what: &str| -> mlua::Result<Option<Carried>> { to_carried(&from_ref(&lua, r)?, what) };
            (carry(old_instance.this, "self").map_err(|e| lua_error_text(&e))?, carry(old_instance.out, "out").map_err(|e| lua_error_text(&e))?)
        };
        let mut inner = self.lock();
        let lua = inner.lua.clone().expect("state set up");
        let old_this = match &state {
            Some(c) => from_carried(&lua, c).map_err(|e| lua_error_text(&e))?,
            None => mlua::Value::Nil,
        };
        let this: Table = from_ref(&lua, instance.this).and_then(|v| lua.unpack(v)).map_err(|e| lua_error_text(&e))?;
        let migrate = from_ref(&lua, instance.migrate).map_err(|e| lua_error_text(&e))?;
        let result = match (migrate, &old_this) {
            (mlua::Value::Function(migrate), _) => {
                inner.watch.begin(STEP_LIMIT_MIN_NS as u64);
                inner.pool.user_code = true;
                let r = migrate.call::<()>((this.clone(), old_this.clone()));
                inner.pool.user_code = false;
                inner.watch.end();
                r.map_err(|e| format!("migrate(self, old) failed: {}", tidy_traceback(&lua_error_text(&e))))
            }
            (_, mlua::Value::Table(old_this)) => (|| -> mlua::Result<()> {
                for pair in old_this.pairs::<mlua::Value, mlua::Value>() {
                    let (k, v) = pair?;
                    if let mlua::Value::String(name) = &k {
                        if keep.iter().any(|p| name.as_bytes() == p.as_bytes()) {
                            continue;
                        }
                    }
                    this.raw_set(k, v)?;
                }
                Ok(())
            })()
            .map_err(|e| lua_error_text(&e)),
            _ => Ok(()),
        };
        result?;
        // The old outputs, written into the port tables the steps reuse (a vector's table stays).
        if let Some(Carried::Table(entries)) = &out {
            let out: Table = from_ref(&lua, instance.out).and_then(|v| lua.unpack(v)).map_err(|e| lua_error_text(&e))?;
            let write = || -> mlua::Result<()> {
                for p in outputs {
                    let Some((_, value)) = entries.iter().find(|(k, _)| matches!(k, Carried::Value(Value::String(n)) if *n == p.name)) else { continue };
                    match (out.raw_get::<mlua::Value>(p.name.as_str())?, value) {
                        (mlua::Value::Table(t), Carried::Table(xs)) if t.raw_len() == xs.len() => {
                            for (k, x) in xs {
                                t.raw_set(from_carried(&lua, k)?, from_carried(&lua, x)?)?;
                            }
                        }
                        (mlua::Value::Table(_), _) => {}
                        (_, v) => out.raw_set(p.name.as_str(), from_carried(&lua, v)?)?,
                    }
                }
                Ok(())
            };
            write().map_err(|e| lua_error_text(&e))?;
        }
        // The carried copy's garbage is the slack collector's to free.
        let (used, capacity) = (inner.pool.used, inner.pool.capacity);
        if used >= capacity / 4 * 3 {
            return Err(format!(
                "its thread's Lua memory pool ({}) is three quarters full after taking the old state over: give the assembly a larger pool (morc.assembly {{ …, memory = MB }})",
                megabytes(capacity)
            ));
        }
        Ok(())
    }

    /// Releases an instance's references.
    pub fn release(&self, instance: &Instance) {
        self.lock().release(instance);
    }
}

impl SlackWork for ThreadLua {
    fn run(&self, until_ns: Option<u64>) {
        self.lock().collect(until_ns, &self.stats);
    }
}

/// An error's text without its traceback: where loading a module failed is in its first part
/// (file:line); the traceback would only walk through the library loader.
fn first_part(text: &str) -> &str {
    text.split_once("\nstack traceback:").map_or(text, |(first, _)| first)
}

/// `bytes` in MB for a message: "8 MB", "0.25 MB", "1.94 MB".
fn megabytes(bytes: usize) -> String {
    let mb = bytes as f64 / (1u64 << 20) as f64;
    if bytes.is_multiple_of(1 << 20) {
        format!("{mb} MB")
    } else {
        format!("{mb:.2} MB")
    }
}

/// Marks a state as a stepping thread's: `morc.component` there keeps what it defines, for the
/// loader below to pick up by kind name.
pub(crate) struct ThreadStateMarker;

/// Called by `morc.component` in every state: in a stepping thread's state, keeps the
/// definition table (with its live functions) under the kind's name.
pub(crate) fn capture(lua: &Lua, kind: &str, definition: &Table) -> mlua::Result<()> {
    if lua.app_data_ref::<ThreadStateMarker>().is_none() {
        return Ok(());
    }
    capture_into(lua, kind, definition)
}

fn capture_into(lua: &Lua, kind: &str, definition: &Table) -> mlua::Result<()> {
    let captured = match lua.named_registry_value::<Option<Table>>(CAPTURED)? {
        Some(t) => t,
        None => {
            let t = lua.create_table()?;
            lua.set_named_registry_value(CAPTURED, t.clone())?;
            t
        }
    };
    captured.raw_set(kind, definition.clone())
}

/// A registry reference (luaL_ref) to `v`, for the C API's use on the real-time path. In
/// protected mode: a full pool fails it with an error, not an abort.
fn inner_ref(lua: &Lua, v: mlua::Value) -> mlua::Result<c_int> {
    if v.is_nil() {
        return Ok(ffi::LUA_NOREF);
    }
    let mut r = ffi::LUA_NOREF;
    // SAFETY: `v` is pushed as the one argument; luaL_ref pops it (the stack is balanced).
    unsafe { lua.exec_raw::<()>(v, |l| r = ffi::luaL_ref(l, ffi::LUA_REGISTRYINDEX))? };
    Ok(r)
}

/// The value a registry reference made by [`inner_ref`] refers to, as an mlua value.
fn from_ref(lua: &Lua, r: c_int) -> mlua::Result<mlua::Value> {
    // SAFETY: pushes the referenced value, which exec_raw returns.
    unsafe {
        lua.exec_raw::<mlua::Value>((), |l| {
            ffi::lua_rawgeti(l, ffi::LUA_REGISTRYINDEX, r as ffi::lua_Integer);
        })
    }
}

impl Inner {
    /// The definition table of `def`'s kind in this state, loading its module the first time.
    fn load_kind(&mut self, def: &LuaComponentDef) -> Result<Table, String> {
        let lua = self.lua.clone().expect("state set up");
        let captured = || -> mlua::Result<Option<Table>> {
            Ok(match lua.named_registry_value::<Option<Table>>(CAPTURED)? {
                Some(t) => t.raw_get(def.kind.as_str())?,
                None => None,
            })
        };
        if let Some(t) = captured().map_err(|e| e.to_string())? {
            return Ok(t);
        }
        match &def.source {
            KindSource::Module { module, file, package_path, library_path } => {
                let paths = || -> mlua::Result<()> {
                    lua.globals().get::<Table>("package")?.set("path", package_path.as_str())?;
                    lua.globals().get::<Table>("morc")?.get::<Table>("lib")?.set("path", lua.create_sequence_from(library_path.iter().map(String::as_str))?)
                };
                paths().map_err(|e| e.to_string())?;
                // A library loaded from a folder (not found through the path) is loaded the same way.
                if let Some(trust) = &def.sandbox {
                    let load = || -> mlua::Result<()> { lua.globals().get::<Table>("morc")?.get::<Table>("lib")?.get::<Function>("load")?.call(trust.dir.display().to_string()) };
                    load().map_err(|e| format!("loading library {} ({}) into the stepping thread's Lua state: {}", trust.name, trust.dir.display(), first_part(&lua_error_text(&e))))?;
                }
                let require: Function = lua.globals().get("require").map_err(|e| e.to_string())?;
                require
                    .call::<mlua::Value>(module.as_str())
                    .map_err(|e| format!("loading its module '{module}' ({file}) into the stepping thread's Lua state: {}", first_part(&lua_error_text(&e))))?;
                let t = captured()
                    .map_err(|e| e.to_string())?
                    .ok_or_else(|| format!("its module '{module}' ({file}) no longer defines the component '{}' (morc.component {{ name = \"{}\", … }})", def.kind, def.kind))?;
                check_unchanged(&lua, def, &t, file)?;
                Ok(t)
            }
            KindSource::Inline { init, step, terminate, migrate } => {
                let t = (|| -> mlua::Result<Table> {
                    let load = |code: &[u8], what: &str| lua.load(code).set_name(format!("={}.{what}", def.kind)).set_mode(mlua::ChunkMode::Binary).into_function();
                    let t = lua.create_table()?;
                    let step = load(step, "step")?;
                    let init = init.as_deref().map(|c| load(c, "init")).transpose()?;
                    let terminate = terminate.as_deref().map(|c| load(c, "terminate")).transpose()?;
                    let migrate = migrate.as_deref().map(|c| load(c, "migrate")).transpose()?;
                    if let Some(trust) = &def.sandbox {
                        let guard = crate::library::guard_table(&lua, trust.clone(), false)?;
                        let env: Table = crate::library::sandbox_builder(&lua)?.call(guard)?;
                        for f in [Some(&step), init.as_ref(), terminate.as_ref(), migrate.as_ref()].into_iter().flatten() {
                            f.set_environment(env.clone())?;
                        }
                    }
                    t.set("step", step)?;
                    t.set("init", init)?;
                    t.set("terminate", terminate)?;
                    t.set("migrate", migrate)?;
                    capture_into(&lua, &def.kind, &t)?;
                    Ok(t)
                })()
                .map_err(|e| lua_error_text(&e))?;
                Ok(t)
            }
        }
    }

    /// The real-time step (see [`ThreadLua::step`]).
    ///
    /// # Safety
    /// The state is ours and locked; `instance` was made in it.
    unsafe fn step(&mut self, instance: &Instance, info: &morc_kernel::ComponentInfo, ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> morc_kernel::Step {
        let l = self.state;
        let top = ffi::lua_gettop(l);
        ffi::lua_pushcfunction(l, traceback);
        ffi::lua_rawgeti(l, ffi::LUA_REGISTRYINDEX, instance.step as ffi::lua_Integer);
        ffi::lua_rawgeti(l, ffi::LUA_REGISTRYINDEX, instance.this as ffi::lua_Integer);
        ffi::lua_rawgeti(l, ffi::LUA_REGISTRYINDEX, instance.inp as ffi::lua_Integer);
        let inp = ffi::lua_gettop(l);
        for (port, v) in instance.inputs.iter().zip(inputs) {
            if port.table != ffi::LUA_NOREF {
                ffi::lua_rawgeti(l, ffi::LUA_REGISTRYINDEX, port.key as ffi::lua_Integer);
                ffi::lua_rawgeti(l, ffi::LUA_REGISTRYINDEX, port.table as ffi::lua_Integer);
                for (j, x) in v.as_slice().iter().enumerate() {
                    ffi::lua_pushnumber(l, *x);
                    ffi::lua_rawseti(l, -2, j as ffi::lua_Integer + 1);
                }
                // inp.u is the port's table again, should the step have replaced it.
                ffi::lua_rawset(l, inp);
                continue;
            }
            ffi::lua_rawgeti(l, ffi::LUA_REGISTRYINDEX, port.key as ffi::lua_Integer);
            match v {
                Value::Real(x) => ffi::lua_pushnumber(l, *x),
                Value::Integer(i) => ffi::lua_pushinteger(l, *i),
                Value::Boolean(b) => ffi::lua_pushboolean(l, c_int::from(*b)),
                Value::String(s) => {
                    ffi::lua_pushlstring(l, s.as_ptr() as *const _, s.len());
                }
                Value::Vector(_) => ffi::lua_pushnil(l),
                Value::List(_) | Value::Record(_) => unreachable!("a Lua component's ports are never lists or records"),
            }
            ffi::lua_rawset(l, inp);
        }
        ffi::lua_rawgeti(l, ffi::LUA_REGISTRYINDEX, instance.out as ffi::lua_Integer);
        ffi::lua_pushnumber(l, ctx.time);
        let limit_ns = (ctx.period * 1e9 * STEP_LIMIT_PERIODS).max(STEP_LIMIT_MIN_NS);
        self.watch.begin(limit_ns as u64);
        self.pool.user_code = true;
        let status = ffi::lua_pcall(l, 4, 1, top + 1);
        self.pool.user_code = false;
        self.overran = self.watch.end();
        if status != ffi::LUA_OK {
            let message = if status == ffi::LUA_ERRMEM { String::from("not enough memory") } else { tidy_traceback(&text_at(l, -1)) };
            ffi::lua_settop(l, top);
            return morc_kernel::Step::Fault(message);
        }
        // A step may return a string to end the assembly: its reason (allocated once, at the end).
        let finish = if ffi::lua_type(l, -1) == ffi::LUA_TSTRING { Some(text_at(l, -1)) } else { None };
        ffi::lua_settop(l, top);
        if let Err(e) = self.read_outputs(instance, &info.outputs, outputs) {
            return morc_kernel::Step::Fault(e);
        }
        match finish {
            Some(reason) => morc_kernel::Step::Finish(reason),
            None => morc_kernel::Step::Continue,
        }
    }

    /// Reads every output from `out`, checking types and sizes (messages only on error).
    ///
    /// # Safety
    /// As for [`Inner::step`].
    unsafe fn read_outputs(&mut self, instance: &Instance, ports: &[morc_kernel::PortInfo], outputs: &mut [Value]) -> Result<(), String> {
        let l = self.state;
        let top = ffi::lua_gettop(l);
        ffi::lua_rawgeti(l, ffi::LUA_REGISTRYINDEX, instance.out as ffi::lua_Integer);
        let out = ffi::lua_gettop(l);
        let mut result = Ok(());
        for ((port, info), o) in instance.outputs.iter().zip(ports).zip(outputs.iter_mut()) {
            ffi::lua_rawgeti(l, ffi::LUA_REGISTRYINDEX, port.key as ffi::lua_Integer);
            let ty = ffi::lua_rawget(l, out);
            if ty == ffi::LUA_TNIL {
                ffi::lua_settop(l, out);
                continue;
            }
            result = read_value(l, &info.name, o);
            ffi::lua_settop(l, out);
            if result.is_err() {
                break;
            }
        }
        ffi::lua_settop(l, top);
        result
    }

    /// Releases the registry references of an instance.
    fn release(&mut self, instance: &Instance) {
        let l = self.state;
        let ports = instance.inputs.iter().chain(&instance.outputs).flat_map(|p| [p.key, p.table]);
        let refs = [instance.step, instance.terminate, instance.migrate, instance.this, instance.inp, instance.out].into_iter().chain(ports);
        for r in refs {
            if r != ffi::LUA_NOREF {
                // SAFETY: our state, locked; each reference is released once.
                unsafe { ffi::luaL_unref(l, ffi::LUA_REGISTRYINDEX, r) };
            }
        }
    }

    /// Collector work in the slack: see the module's documentation.
    fn collect(&mut self, until_ns: Option<u64>, stats: &GcStats) {
        let l = self.state;
        let mut steps = 0u32;
        let mut longest = 0u64;
        // At most this much of the slack per tick: the rest is the machine's.
        let until_ns = until_ns.map(|u| u.min(monotonic_ns() + SLACK_BUDGET_NS));
        loop {
            let used = self.pool.used;
            if !self.gc.in_cycle {
                if used < self.gc.threshold {
                    return;
                }
                self.gc.in_cycle = self.gc.mode == GcMode::Incremental;
            }
            let start = monotonic_ns();
            let cpu_start = thread_cpu_ns();
            // SAFETY: our state, locked; LUA_GCSTEP runs one step even while the collector is
            // stopped for the real-time steps. In generational mode a step is a minor collection,
            // and past half the pool a major one, which Lua does in one go (that is the mode's
            // cost; the incremental mode has no such step).
            let major = self.gc.mode == GcMode::Generational && used > self.pool.capacity / 2;
            let finished = unsafe { ffi::lua_gc(l, ffi::LUA_GCSTEP, if major { c_int::MAX / 1024 } else { 0 }) } != 0;
            let took = monotonic_ns().saturating_sub(start);
            let cpu = thread_cpu_ns().saturating_sub(cpu_start);
            stats.worst_step_cpu_ns.fetch_max(cpu, Ordering::Relaxed);
            self.gc_steps_cpu.record(cpu);
            longest = longest.max(took);
            stats.steps.fetch_add(1, Ordering::Relaxed);
            stats.worst_step_ns.fetch_max(took, Ordering::Relaxed);
            steps += 1;
            if finished || self.gc.mode == GcMode::Generational {
                self.gc.in_cycle = false;
                let (used, capacity) = (self.pool.used, self.pool.capacity);
                self.gc.settle(used, capacity);
                stats.cycles.fetch_add(1, Ordering::Relaxed);
                return;
            }
            let more = match until_ns {
                // Another step only if one as long as the longest so far still fits.
                Some(until) => monotonic_ns() + longest < until,
                // Virtual clock: a bounded amount of work, the same whatever the machine's speed.
                None => steps < VIRTUAL_STEPS,
            };
            if !more {
                return;
            }
        }
    }
}

/// Lua's incremental step size as log2 of bytes: 8 bytes, i.e. the smallest step (measured with
/// `morc bench lua-gc`: with 2^10 a cycle took one or two steps of ~100 µs; with 2^3, hundreds of
/// steps, the longest being the atomic phase).
const INCREMENTAL_STEP_LOG2: c_int = 3;

/// The most of a slack the collector takes per tick on the wall clock (ns).
const SLACK_BUDGET_NS: u64 = 50_000;

/// Collector steps per slack on the virtual clock.
const VIRTUAL_STEPS: u32 = 16;

/// Reads the value at the top of the stack into output `o` (named `name`).
///
/// # Safety
/// `l` is a locked state with the value at its top.
unsafe fn read_value(l: *mut ffi::lua_State, name: &str, o: &mut Value) -> Result<(), String> {
    let ty = ffi::lua_type(l, -1);
    match o {
        Value::Vector(xs) => {
            if ty != ffi::LUA_TTABLE {
                return Err(format!("output '{name}' must be a table of {} numbers, got a {}", xs.len(), type_name(l, -1)));
            }
            let n = ffi::lua_rawlen(l, -1);
            if n != xs.len() {
                return Err(format!("output '{name}' must have {} elements, got {n}", xs.len()));
            }
            for (j, x) in xs.iter_mut().enumerate() {
                ffi::lua_rawgeti(l, -1, j as ffi::lua_Integer + 1);
                let mut ok = 0;
                *x = ffi::lua_tonumberx(l, -1, &mut ok);
                ffi::lua_pop(l, 1);
                if ok == 0 {
                    return Err(format!("output '{name}'[{}] is not a number", j + 1));
                }
            }
        }
        Value::Real(x) => {
            let mut ok = 0;
            *x = ffi::lua_tonumberx(l, -1, &mut ok);
            if ok == 0 {
                return Err(format!("output '{name}' must be a number, got a {}", type_name(l, -1)));
            }
        }
        Value::Integer(i) => {
            let mut ok = 0;
            let x = ffi::lua_tonumberx(l, -1, &mut ok);
            if ok == 0 || x.fract() != 0.0 {
                return Err(format!("output '{name}' must be an integer, got {}", text_or_type(l, -1)));
            }
            *i = x as i64;
        }
        Value::Boolean(b) => {
            if ty != ffi::LUA_TBOOLEAN {
                return Err(format!("output '{name}' must be a boolean, got a {}", type_name(l, -1)));
            }
            *b = ffi::lua_toboolean(l, -1) != 0;
        }
        Value::String(s) => {
            if ty != ffi::LUA_TSTRING {
                return Err(format!("output '{name}' must be a string, got a {}", type_name(l, -1)));
            }
            let mut len = 0usize;
            let p = ffi::lua_tolstring(l, -1, &mut len);
            let bytes = std::slice::from_raw_parts(p as *const u8, len.min(STRING_PORT_CAPACITY));
            s.clear();
            s.push_str(&String::from_utf8_lossy(bytes));
        }
        // The port types a Lua component declares have none (the assembly refuses them).
        Value::List(_) | Value::Record(_) => return Err(format!("output '{name}' is a {}: a port cannot carry one", o.ty())),
    }
    Ok(())
}

unsafe fn type_name(l: *mut ffi::lua_State, index: c_int) -> String {
    CStr::from_ptr(ffi::lua_typename(l, ffi::lua_type(l, index))).to_string_lossy().into_owned()
}

unsafe fn text_or_type(l: *mut ffi::lua_State, index: c_int) -> String {
    if ffi::lua_type(l, index) == ffi::LUA_TNUMBER {
        format!("{}", ffi::lua_tonumberx(l, index, std::ptr::null_mut()))
    } else {
        format!("a {}", type_name(l, index))
    }
}

/// A step's error with its traceback, without the C frames that say nothing to a Lua author.
fn tidy_traceback(text: &str) -> String {
    text.lines().filter(|l| !l.trim_start().starts_with("[C]:")).collect::<Vec<_>>().join("\n")
}

/// The module's definition as loaded now must have the ports and parameters the assembly was
/// planned with (from the definition loaded by the program earlier).
fn check_unchanged(_lua: &Lua, def: &LuaComponentDef, now: &Table, file: &str) -> Result<(), String> {
    let names = |key: &str| -> Vec<mlua::Value> { now.get::<Option<Table>>(key).ok().flatten().map(|t| t.sequence_values::<mlua::Value>().filter_map(|s| s.ok()).collect()).unwrap_or_default() };
    let before = |ports: &[morc_kernel::PortInfo]| -> Vec<String> { ports.iter().map(|p| p.name.clone()).collect() };
    let strip = |decls: Vec<mlua::Value>| -> Vec<String> { decls.iter().filter_map(|d| crate::kinds::instance::lua_port(d).ok()).map(|(p, _)| p.name).collect() };
    let (inputs, outputs) = (strip(names("inputs")), strip(names("outputs")));
    if inputs != before(&def.inputs) || outputs != before(&def.outputs) {
        return Err(format!(
            "{file} changed the ports of '{}' since the program loaded it (inputs {} → {}, outputs {} → {}): reload it (`reload` in the REPL) and rebuild the assembly",
            def.kind,
            before(&def.inputs).join(", "),
            inputs.join(", "),
            before(&def.outputs).join(", "),
            outputs.join(", ")
        ));
    }
    Ok(())
}

/// A step that runs longer than this many of its periods (and at least
/// [`STEP_LIMIT_MIN_NS`]) is stopped with an error: an endless loop must not keep the engine's
/// thread, which also cycles the bus and holds the robot, from its next tick.
const STEP_LIMIT_PERIODS: f64 = 10.0;
const STEP_LIMIT_MIN_NS: f64 = 20e6;
/// The time limit of a component's `init` (off the real-time path, but an endless loop there
/// would keep the program from going on).
const INIT_LIMIT_NS: u64 = 10_000_000_000;

/// Message handler of the real-time step's `lua_pcall`: the error with a traceback.
unsafe extern "C-unwind" fn traceback(state: *mut ffi::lua_State) -> c_int {
    let msg = ffi::luaL_tolstring(state, 1, std::ptr::null_mut());
    ffi::luaL_traceback(state, state, msg, 1);
    1
}

/// The text of a C string on the stack (lossy), for messages.
unsafe fn text_at(state: *mut ffi::lua_State, index: c_int) -> String {
    let p = ffi::lua_tolstring(state, index, std::ptr::null_mut());
    if p.is_null() {
        return String::from("(error object is not a string)");
    }
    CStr::from_ptr(p).to_string_lossy().into_owned()
}

impl Drop for Inner {
    fn drop(&mut self) {
        // mlua's handle first (it collects), then the watchdog lets go of the state, then the
        // state, then (as a field) the pool.
        drop(self.lua.take());
        watchdog::unregister(&self.watch);
        // SAFETY: the state is ours and nothing refers to it any more.
        unsafe { ffi::lua_close(self.state) };
    }
}
