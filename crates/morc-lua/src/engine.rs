//! `morc.engine`: running assemblies from Lua.

use mlua::{AnyUserData, Lua, Table, UserData, UserDataFields, UserDataMethods};

use super::assembly::LuaAssembly;
use super::convert::table_to_data;
use super::data::LuaData;
use morc_kernel::AssemblyData;
use morc_kernel::Summary;
use morc_kernel::{Engine, Outcome, RunResult};

/// The `morc.engine` userdata: the engine, and the run `engine:start` left for `wait` (its handle and request).
pub struct LuaEngine(pub Engine, pub Option<(morc_kernel::RunHandle, Request)>);

/// Where `h:status()` keeps the result of a started run it saw end, for `h:wait()`.
const COLLECTED: &str = "morc.engine.collected_run";

/// `engine:start(a)`'s handle: wait, cancel, status.
pub struct LuaRunHandle(AnyUserData);

impl UserData for LuaRunHandle {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method("wait", |lua, this, ()| {
            let mut e = this.0.borrow_mut::<LuaEngine>()?;
            let Some((handle, req)) = e.1.take() else {
                // status() saw it end and collected its result: that is the result.
                if let Some(t) = lua.named_registry_value::<Option<Table>>(COLLECTED)? {
                    lua.unset_named_registry_value(COLLECTED)?;
                    return Ok(t);
                }
                return Err(mlua::Error::runtime("this run was already waited for"));
            };
            finish(lua, &mut e.0, handle, req)
        });
        methods.add_method("cancel", |_, this, ()| {
            this.0.borrow::<LuaEngine>()?.0.cancel();
            Ok(())
        });
        // "running", or how the run ended — "finished", "faulted", "cancelled" — once it has
        // (its result collected for wait()), or "done" once waited for.
        methods.add_method("status", |lua, this, ()| {
            let mut e = this.0.borrow_mut::<LuaEngine>()?;
            if e.1.is_some() && e.0.run_finished() {
                let (handle, req) = e.1.take().expect("checked");
                let t = finish(lua, &mut e.0, handle, req)?;
                lua.set_named_registry_value(COLLECTED, t)?;
            }
            if e.1.is_some() {
                return Ok("running".to_string());
            }
            Ok(match lua.named_registry_value::<Option<Table>>(COLLECTED)? {
                Some(t) => match t.get::<String>("outcome")?.as_str() {
                    "fault" => "faulted".to_string(),
                    other => other.to_string(),
                },
                None => "done".to_string(),
            })
        });
        methods.add_meta_method("__tostring", |lua, this, ()| {
            let e = this.0.borrow::<LuaEngine>()?;
            Ok(match &e.1 {
                Some((_, req)) => format!("run of '{}' ({})", req.spec.name, if e.0.run_finished() { "finished: wait() for its result" } else { "running" }),
                None => match lua.named_registry_value::<Option<Table>>(COLLECTED)? {
                    Some(t) => format!("run of '{}' ({}: wait() for its result)", t.get::<String>("assembly")?, t.get::<String>("outcome")?),
                    None => "run (done)".to_string(),
                },
            })
        });
    }
}

/// Set as the Lua state's app data by `morc check`: runs go on the simulation
/// as they would in `morc run` (check's engine is simulated, on the virtual
/// clock), so programs and skills get real results, but recordings go to
/// `record_dir` (a scratch folder the check removes) and a run without an
/// end stops after [`CHECK_MAX_SECONDS`] of simulated time.
pub struct CheckOnly {
    /// Where the check's recordings go instead of the paths the program names.
    pub record_dir: std::path::PathBuf,
}

/// The longest a run may go on under `morc check` (simulated seconds): an
/// assembly with no end of its own (one a user would stop with Ctrl-C) ends then.
pub const CHECK_MAX_SECONDS: f64 = 60.0;

/// A run as `morc check` does it: recordings into the check's scratch folder
/// (same file names), and an end for assemblies that have none.
fn for_check(check: &CheckOnly, mut req: Request) -> Request {
    if req.spec.duration.is_none_or(|d| d > CHECK_MAX_SECONDS) {
        req.spec.duration = Some(CHECK_MAX_SECONDS);
        req.capped = true;
    }
    for a in req.spec.attachments.iter_mut().filter(|a| a.kind == "recorder") {
        let (attach, dir) = (a.attach.clone(), check.record_dir.clone());
        a.attach = std::sync::Arc::new(move |view| {
            let mut attachment = attach(view)?;
            let info = attachment.component.info_mut();
            let path = info.param_value("path").map(|v| v.str().to_string()).unwrap_or_default();
            let file = std::path::Path::new(&path).file_name().map(|f| dir.join(f)).unwrap_or_else(|| dir.join("recording.h5"));
            info.set_param("path", &morc_kernel::Value::String(file.display().to_string()))?;
            Ok(attachment)
        });
    }
    req
}

/// On the virtual clock a recorder waits for its writer rather than drop
/// samples (simulated time can wait; a fast simulation outran the disk).
fn for_clock(engine: &Engine, mut req: Request) -> Request {
    if engine.config().clock != morc_kernel::ClockKind::Virtual {
        return req;
    }
    for a in req.spec.attachments.iter_mut().filter(|a| a.kind == "recorder") {
        let attach = a.attach.clone();
        a.attach = std::sync::Arc::new(move |view| {
            let mut attachment = attach(view)?;
            attachment.component.info_mut().set_param("wait_when_full", &morc_kernel::Value::Boolean(true))?;
            Ok(attachment)
        });
    }
    req
}

/// The outcome of the last `engine:run` in this Lua state, kept as app data so a program's
/// exit code can tell a fault.
#[derive(Clone, Debug, PartialEq)]
pub struct LastOutcome(pub Outcome);

impl LastOutcome {
    /// Whether the last run ended in a fault.
    pub fn is_fault(&self) -> bool {
        matches!(self.0, Outcome::Fault(_))
    }
}

fn summary_table(lua: &Lua, s: &Summary) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set("count", s.count)?;
    t.set("mean", s.mean * 1e-9)?;
    t.set("min", s.min as f64 * 1e-9)?;
    t.set("p50", s.p50 as f64 * 1e-9)?;
    t.set("p99", s.p99 as f64 * 1e-9)?;
    t.set("p999", s.p999 as f64 * 1e-9)?;
    t.set("max", s.max as f64 * 1e-9)?;
    Ok(t)
}

/// The result of a run as a Lua table (times in seconds); `tostring(r)` is the report.
/// `on_bus`: the engine's base is the EtherCAT bus (its faults are the bus's, not the robot's).
pub fn result_table(lua: &Lua, r: &RunResult, data: mlua::Value, on_bus: bool) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set("ok", r.outcome.is_ok())?;
    let (outcome, reason) = match &r.outcome {
        Outcome::Finished(reason) => ("finished", reason.clone()),
        Outcome::Fault(f) => ("fault", f.message.clone()),
        Outcome::Cancelled => ("cancelled", "cancelled".to_string()),
    };
    t.set("outcome", outcome)?;
    t.set("reason", reason)?;
    // A fault as an error value, as pcall would catch it: r.error.kind, r.error.message.
    if let Outcome::Fault(f) = &r.outcome {
        let kind = crate::error::fault_kind(&f.source, on_bus);
        t.set("error", mlua::Value::Error(Box::new(crate::error::raise(kind, f.message.clone()))))?;
    }
    t.set("assembly", r.assembly.as_str())?;
    t.set("ticks", r.ticks)?;
    t.set("duration", r.ticks as f64 * r.base_period)?;
    t.set("start_time", r.start_tick as f64 * r.base_period)?;
    // The run's own time (components' t), which goes on across swaps: where this assembly took over and ended.
    t.set("t_start", r.first_tick as f64 * r.base_period)?;
    t.set("t_end", (r.first_tick + r.ticks) as f64 * r.base_period)?;
    t.set("clock", r.clock.to_string())?;
    let engine = lua.create_table()?;
    engine.set("wake_latency", summary_table(lua, &r.engine.wake_latency)?)?;
    engine.set("cycle", summary_table(lua, &r.engine.cycle)?)?;
    engine.set("late_ticks", r.engine.late_ticks)?;
    t.set("engine", engine)?;
    let components = lua.create_table()?;
    for c in &r.components {
        let e = summary_table(lua, &c.exec)?;
        e.set("kind", c.kind.as_str())?;
        e.set("every", c.every)?;
        e.set("steps", c.steps)?;
        e.set("overruns", c.overruns)?;
        components.set(c.name.as_str(), e)?;
    }
    t.set("components", components)?;
    t.set("data", data)?;
    t.set("report", r.report())?;
    let meta = lua.create_table()?;
    meta.set("__tostring", lua.create_function(|_, t: Table| t.get::<String>("report"))?)?;
    t.set_metatable(Some(meta));
    Ok(t)
}

/// Runs `assembly` on `engine` with the options table of `engine:run`.
/// A run asked for from Lua: the assembly as it was when asked, its data,
/// and the caller's Assembly Data object to fill with the results.
pub struct Request {
    spec: morc_kernel::AssemblySpec,
    data: AssemblyData,
    data_ud: Option<AnyUserData>,
    /// `morc check` gave the run an end it did not have.
    capped: bool,
}

/// Reads `engine:run(a, opts)`'s arguments.
fn request(assembly: &AnyUserData, opts: Option<Table>) -> mlua::Result<Request> {
    let mut spec = assembly.borrow::<LuaAssembly>().map_err(|_| mlua::Error::runtime("engine:run expects an assembly made with morc.assembly"))?.0.clone();
    let mut data_ud: Option<AnyUserData> = None;
    let mut data = AssemblyData::new();
    if let Some(opts) = &opts {
        if let Some(d) = opts.get::<Option<f64>>("duration")? {
            spec.duration = Some(d);
        }
        if let Some(p) = opts.get::<Option<String>>("overrun")? {
            spec.overrun = super::assembly::parse_overrun(&p)?;
        }
        match opts.get::<mlua::Value>("data")? {
            mlua::Value::Nil => {}
            mlua::Value::UserData(ud) if ud.is::<LuaData>() => {
                data = ud.borrow::<LuaData>()?.0.clone();
                data_ud = Some(ud);
            }
            mlua::Value::Table(t) => data = table_to_data(&t, "data")?,
            other => return Err(mlua::Error::runtime(format!("run option 'data' must be morc.data{{…}} or a table, got a {}", other.type_name()))),
        }
    }
    Ok(Request { spec, data, data_ud, capped: false })
}

/// Runs `assembly` on `engine` with the options table of `engine:run`.
pub fn run(lua: &Lua, engine: &mut Engine, assembly: &AnyUserData, opts: Option<Table>) -> mlua::Result<Table> {
    let mut req = for_clock(engine, request(assembly, opts)?);
    crate::live::for_live(lua, engine, &mut req.spec.attachments)?;
    crate::ros::for_ros(lua, engine, &mut req.spec.attachments)?;
    if let Some(check) = lua.app_data_ref::<CheckOnly>() {
        req = for_check(&check, req);
    }
    // After Ctrl-C nothing new starts moving, even where Lua code caught the interruption.
    if super::interrupt::pending() {
        return Err(super::interrupt::error_in(lua));
    }
    let handle = engine.start_run(&req.spec, &req.data).map_err(crate::error::typed)?;
    finish(lua, engine, handle, req)
}

/// Waits for a started run and turns its result into the Lua result table.
fn finish(lua: &Lua, engine: &mut Engine, handle: morc_kernel::RunHandle, req: Request) -> mlua::Result<Table> {
    let result = engine.wait(handle);
    result_table_of(lua, engine, result, req)
}

/// `engine:swap(a [, opts])`: prepares `a` while the started run goes on and switches it in at a
/// tick boundary; returns the replaced run's result and the new run's handle.
fn swap(lua: &Lua, ud: &AnyUserData, assembly: Option<AnyUserData>, opts: Option<Table>) -> mlua::Result<(Table, LuaRunHandle)> {
    let mut this = ud.borrow_mut::<LuaEngine>()?;
    let Some((handle, old_req)) = this.1.take() else {
        return Err(mlua::Error::runtime("engine:swap(a) replaces a run started with engine:start(a); none is running"));
    };
    // Without an assembly: the running one again, prepared afresh (its Lua modules reloaded).
    let mut req = match &assembly {
        Some(a) => for_clock(&this.0, request(a, opts)?),
        None => Request { spec: old_req.spec.clone(), data: old_req.data.clone(), data_ud: None, capped: old_req.capped },
    };
    crate::live::for_live(lua, &this.0, &mut req.spec.attachments)?;
    crate::ros::for_ros(lua, &this.0, &mut req.spec.attachments)?;
    if let Some(check) = lua.app_data_ref::<CheckOnly>() {
        req = for_check(&check, req);
    }
    if super::interrupt::pending() {
        this.1 = Some((handle, old_req));
        return Err(super::interrupt::error_in(lua));
    }
    let (old, new_handle) = match this.0.swap(&req.spec, &req.data) {
        Ok(r) => r,
        Err(e) => {
            // Preparing the new one failed: the running one goes on, untouched.
            this.1 = Some((handle, old_req));
            return Err(crate::error::typed(e));
        }
    };
    drop(handle);
    let refused = new_handle.refused().map(str::to_string);
    let t = result_table_of(lua, &mut this.0, Ok(old), old_req)?;
    if let Some(message) = refused {
        // The new code faulted in its first tick (it would have jerked the arm, or its state
        // could not be handed over): the robot holds; said at once, as the swap's error.
        let result = this.0.wait(new_handle);
        crate::print_queue::flush();
        if let Ok(r) = &result {
            discard_recordings(&req.spec, r);
            crate::live::after_run(lua, &req.spec, r);
            lua.set_app_data(LastOutcome(r.outcome.clone()));
        }
        let hint =
            if assembly.is_none() { "; fix the component's step, or give it migrate(self, old) (old: the previous instance's self) to carry the state over as the new code needs it" } else { "" };
        let on_bus = this.0.bus().is_some();
        let kind = match result.as_ref().map(|r| r.outcome.fault()) {
            Ok(Some(f)) => crate::error::fault_kind(&f.source, on_bus),
            _ => crate::error::ErrorKind::Assembly,
        };
        return Err(crate::error::raise(kind, format!("{message}{hint}")));
    }
    this.1 = Some((new_handle, req));
    drop(this);
    Ok((t, LuaRunHandle(ud.clone())))
}

/// Removes the recordings of a swapped-in run that was refused in its first tick: they hold
/// the one sample whose commands never went out, not a run.
fn discard_recordings(spec: &morc_kernel::AssemblySpec, result: &morc_kernel::RunResult) {
    for a in spec.attachments.iter().filter(|a| a.kind == "recorder") {
        if let Some(morc_kernel::Value::String(path)) = result.data.get(&format!("{}.path", a.name)) {
            match std::fs::remove_file(path) {
                Ok(()) => log::info!("{path}: removed: the swap was refused before its first command went out"),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => log::warn!("{path}: the swap was refused, but its recording could not be removed: {e}"),
            }
        }
    }
}

/// A recording that could not be written fails the run: a writer that failed while the run
/// went on faulted it already; one that failed only as its file closed (after the last tick)
/// does so here.
fn fail_on_recording_error(spec: &morc_kernel::AssemblySpec, result: &mut morc_kernel::RunResult) {
    if !matches!(result.outcome, Outcome::Finished(_)) {
        return;
    }
    for a in spec.attachments.iter().filter(|a| a.kind == "recorder") {
        if let Some(morc_kernel::Value::String(e)) = result.data.get(&format!("{}.error", a.name)) {
            let source = morc_kernel::FaultSource::Component(morc_kernel::ComponentRef { name: a.name.clone(), kind: "recorder".into() });
            result.outcome = Outcome::Fault(morc_kernel::Fault { source, message: e.clone() });
            return;
        }
    }
}

/// A run's result as the Lua result table (recordings said, data flowed back).
fn result_table_of(lua: &Lua, engine: &mut Engine, result: Result<morc_kernel::RunResult, morc_kernel::EngineError>, req: Request) -> mlua::Result<Table> {
    let Request { spec, data_ud, capped, .. } = req;
    // What the run's Lua components printed is on the console before the program goes on.
    crate::print_queue::flush();
    let mut result = result.map_err(crate::error::typed)?;
    fail_on_recording_error(&spec, &mut result);
    crate::live::after_run(lua, &spec, &result);
    lua.set_app_data(LastOutcome(result.outcome.clone()));
    if capped && result.outcome == Outcome::Finished("duration".into()) {
        eprintln!("morc check: '{}' has no end of its own; checked for its first {CHECK_MAX_SECONDS} s", spec.name);
    }
    // Recordings get the run's timing statistics, and the report says where they are.
    let mut recordings = Vec::new();
    for a in spec.attachments.iter().filter(|a| a.kind == "recorder") {
        if let Some(morc_kernel::Value::String(path)) = result.data.get(&format!("{}.path", a.name)) {
            if let Err(e) = morc_record::write_timing(std::path::Path::new(path), &result.components) {
                log::warn!("{path}: could not add timing statistics: {e}");
            }
            // Said as it happens: a file's name is only known once it is created (never replacing one).
            if lua.app_data_ref::<CheckOnly>().is_none() {
                let samples = result.data.get(&format!("{}.samples", a.name)).map(|v| v.integer()).unwrap_or(0);
                match result.data.get(&format!("{}.error", a.name)) {
                    Some(morc_kernel::Value::String(e)) => eprintln!("recorded {path} ({samples} samples, stopped early): {e}"),
                    _ => eprintln!("recorded {path} ({samples} samples)"),
                }
            }
            recordings.push(path.clone());
        }
    }
    // Results flow back into the caller's Assembly Data.
    let data_value = match data_ud {
        Some(ud) => {
            ud.borrow_mut::<LuaData>()?.0 = result.data.clone();
            mlua::Value::UserData(ud)
        }
        None => mlua::Value::UserData(lua.create_userdata(LuaData(result.data.clone()))?),
    };
    let t = result_table(lua, &result, data_value, engine.bus().is_some())?;
    let mut report: String = t.get("report")?;
    for path in &recordings {
        report.push_str(&format!("  recorded {path}\n"));
    }
    t.set("report", report)?;
    t.set("recordings", lua.create_sequence_from(recordings)?)?;
    // Ctrl-C: the code that asked for the run must not go on to its next motion as if the
    // run had merely ended (its recordings are complete and closed by now).
    if super::interrupt::pending() {
        return Err(super::interrupt::error_in(lua));
    }
    Ok(t)
}

impl UserData for LuaEngine {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("period", |_, this| Ok(this.0.config().period));
        fields.add_field_method_get("clock", |_, this| Ok(this.0.config().clock.to_string()));
        fields.add_field_method_get("base", |_, this| Ok(this.0.base_name().to_string()));
        // The base's ports: what assemblies can read (outputs) and drive (inputs), by name.
        fields.add_field_method_get("inputs", |lua, this| lua.create_sequence_from(this.0.base_info().inputs.iter().map(|p| p.name.clone())));
        fields.add_field_method_get("outputs", |lua, this| lua.create_sequence_from(this.0.base_info().outputs.iter().map(|p| p.name.clone())));
        fields.add_field_method_get("description", |_, this| Ok(this.0.base_info().description.clone()));
        fields.add_field_method_get("bus", |lua, this| {
            crate::library::check(lua, "bus", "access the bus directly (engine.bus)")?;
            Ok(this.0.bus().cloned().map(super::bus::LuaBus))
        });
    }
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method_mut("run", |lua, this, (assembly, opts): (AnyUserData, Option<Table>)| run(lua, &mut this.0, &assembly, opts));
        methods.add_function("start", |lua, (ud, assembly, opts): (AnyUserData, AnyUserData, Option<Table>)| {
            let mut req = request(&assembly, opts)?;
            if let Some(check) = lua.app_data_ref::<CheckOnly>() {
                req = for_check(&check, req);
            }
            {
                let mut this = ud.borrow_mut::<LuaEngine>()?;
                req = for_clock(&this.0, req);
                // A started run is watched as a waited one is (live tap, operator page).
                crate::live::for_live(lua, &this.0, &mut req.spec.attachments)?;
                crate::ros::for_ros(lua, &this.0, &mut req.spec.attachments)?;
                if super::interrupt::pending() {
                    return Err(super::interrupt::error_in(lua));
                }
                let handle = this.0.start_run(&req.spec, &req.data).map_err(crate::error::typed)?;
                this.1 = Some((handle, req));
            }
            Ok(LuaRunHandle(ud))
        });
        methods.add_function("swap", |lua, (ud, assembly, opts): (AnyUserData, Option<AnyUserData>, Option<Table>)| swap(lua, &ud, assembly, opts));
        methods.add_method("cancel", |_, this, ()| {
            this.0.cancel();
            Ok(())
        });
        methods.add_method_mut("reset_faults", |lua, this, ()| {
            if this.0.bus().is_some() {
                crate::library::check(lua, "bus", "access the bus directly (engine:reset_faults re-arms the safety PLC)")?;
            }
            super::bus::reset_faults(&mut this.0)
        });
        methods.add_method("tick", |_, this, ()| Ok(this.0.tick()));
        methods.add_method("time", |_, this, ()| Ok(this.0.tick() as f64 * this.0.config().period));
        methods.add_method("check", |_, this, assembly: AnyUserData| {
            let spec = &assembly.borrow::<LuaAssembly>()?.0;
            let e = &this.0;
            morc_kernel::plan_assembly(spec, e.base_name(), e.base_info(), e.config().period, &AssemblyData::new()).map_err(crate::error::typed)?;
            Ok(true)
        });
        methods.add_meta_method("__tostring", |_, this, ()| {
            let c = this.0.config();
            Ok(format!("engine ({} clock, T = {} ms, base '{}', {})", c.clock, c.period * 1e3, this.0.base_name(), super::bus::describe(this.0.bus())))
        });
    }
}
