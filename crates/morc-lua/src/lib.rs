//! The Lua surface of morc: the `morc` module, exposed through userdata.
//! What can be written in Lua lives in `lua/` (loaded from here at start).

#![deny(clippy::missing_safety_doc)]
#![warn(missing_docs)]

mod assembly;
pub mod base;
mod bus;
mod component;
mod convert;
mod data;
pub mod docs;
mod drive_parameters;
mod dynid;
mod engine;
mod error;
mod fast;
mod fmu;
mod ft;
pub mod interrupt;
mod keys;
mod kinds;
pub mod library;
mod linalg;
mod live;
mod model;
mod model_define;
mod motion;
mod new_file;
mod object_params;
mod origin;
mod panics;
mod plot;
mod pool;
pub mod print_queue;
mod read_recording;
mod robot;
mod robot_calibration;
mod robot_define;
mod robot_groups;
mod robot_params;
mod robot_state;
pub mod ros;
mod ros_trajectory;
mod start_engine;
pub mod testing;
mod thread_state;
mod units;
mod watchdog;

pub use assembly::LuaKind;
pub use base::start_engine;
pub use component::{lua_error_text, KindSource, LuaComponent, LuaComponentDef};
pub use engine::{CheckOnly, LastOutcome};
pub use robot::LuaRobot;
pub use thread_state::{set_gc_mode, GcMode, DEFAULT_POOL_BYTES};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mlua::{Function, Lua, LuaOptions, StdLib, Table};

use crate::component::lua_port;
use assembly::LuaAssembly;
use convert::{from_value, table_to_data};
use data::LuaData;
use engine::LuaEngine;
use morc_kernel::AssemblySpec;
use morc_kernel::Engine;
use morc_kernel::ParamInfo;
use origin::caller;

/// The Lua half of the runtime, compiled in so the binary works anywhere.
const PRELUDE: &str = include_str!("../../../lua/morc/prelude.lua");
const SKILL: &str = include_str!("../../../lua/morc/skill.lua");

/// Where morc's Lua folders are: `MORC_HOME`, else the source tree it was built from (this
/// crate sits in `crates/morc-lua` of it).
pub fn home() -> PathBuf {
    std::env::var_os("MORC_HOME").map(PathBuf::from).unwrap_or_else(|| {
        let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        crate_dir.ancestors().nth(2).unwrap_or(crate_dir).to_path_buf()
    })
}

/// A Lua state with the standard libraries (and `debug`, for tracebacks).
pub fn new_state() -> mlua::Result<Lua> {
    // SAFETY: the debug library is the only unsafe one loaded; programs are the user's own.
    let lua = unsafe { Lua::unsafe_new_with(StdLib::ALL_SAFE | StdLib::DEBUG, LuaOptions::default()) };
    set_search_path(&lua, &home())?;
    panics::watch(&lua);
    Ok(lua)
}

/// `require` finds modules by path in the folders of MORC_PATH (separated by ':'),
/// the user library folder, lua/, stdlib/, skills/, robots/ and morc's own folder.
pub(crate) fn set_search_path(lua: &Lua, home: &Path) -> mlua::Result<()> {
    let mut roots: Vec<PathBuf> = library::library_roots(home);
    roots.push(home.to_path_buf());
    let mut path = String::new();
    for r in &roots {
        let r = r.display();
        path.push_str(&format!("{r}/?.lua;{r}/?/init.lua;"));
    }
    let package: Table = lua.globals().get("package")?;
    let old: String = package.get("path")?;
    package.set("path", format!("{path}{old}"))?;
    Ok(())
}

/// Installs the `morc` module (with `engine`) and the prelude.
pub fn install(lua: &Lua, engine: Engine) -> mlua::Result<()> {
    install_surface(lua, Some(engine))
}

/// The `morc` module in a stepping thread's Lua state: all of it but `morc.engine` (a
/// component does not start runs).
pub(crate) fn install_for_components(lua: &Lua) -> mlua::Result<()> {
    install_surface(lua, None)
}

fn install_surface(lua: &Lua, engine: Option<Engine>) -> mlua::Result<()> {
    kinds::install(lua);
    let morc = lua.create_table()?;
    morc.set("version", env!("CARGO_PKG_VERSION"))?;

    morc.set(
        "assembly",
        lua.create_function(|lua, arg: mlua::Value| {
            let origin = caller(lua);
            let mut spec = AssemblySpec { origin, ..Default::default() };
            match arg {
                mlua::Value::String(s) => spec.name = s.to_str()?.to_string(),
                mlua::Value::Table(t) => {
                    keys::check(&t, "in morc.assembly { … }", &["name", "duration", "overrun", "memory", "internal"], 1).map_err(|e| mlua::Error::runtime(format!("{}: {e}", spec.origin)))?;
                    spec.name = t.get::<Option<String>>(1)?.or(t.get::<Option<String>>("name")?).unwrap_or_default();
                    spec.duration = t
                        .get::<Option<f64>>("duration")?
                        .map(|d| keys::finite(d, "duration"))
                        .transpose()
                        .map_err(|e| mlua::Error::runtime(format!("{}: morc.assembly: {e}", spec.origin)))?;
                    if let Some(p) = t.get::<Option<String>>("overrun")? {
                        spec.overrun = assembly::parse_overrun(&p)?;
                    }
                    spec.internal = t.get::<Option<bool>>("internal")?.unwrap_or(false);
                    if let Some(mb) = t.get::<Option<f64>>("memory")? {
                        if !(mb.is_finite() && (0.25..=65536.0).contains(&mb)) {
                            return Err(mlua::Error::runtime(format!("{}: memory = {mb}: the Lua memory pool of each stepping thread is given in MB, from 0.25 to 65536", spec.origin)));
                        }
                        spec.memory = Some((mb * 1048576.0) as usize);
                    }
                }
                _ => return Err(mlua::Error::runtime("morc.assembly expects a name or { name, duration = s, overrun = \"warn\"|\"fault\", memory = MB }")),
            }
            if spec.name.is_empty() {
                return Err(mlua::Error::runtime(format!("{}: an assembly needs a name: morc.assembly \"name\"", spec.origin)));
            }
            Ok(LuaAssembly(spec))
        })?,
    )?;

    morc.set(
        "data",
        lua.create_function(|_, t: Option<Table>| {
            Ok(LuaData(match t {
                Some(t) => table_to_data(&t, "data")?,
                None => Default::default(),
            }))
        })?,
    )?;

    morc.set(
        "components",
        lua.create_function(|lua, ()| {
            let t = lua.create_table()?;
            let list: Vec<(String, String, String)> = kinds::with(lua, |k| k.registry.kinds().map(|k| (k.name.clone(), k.doc.clone(), k.origin.clone())).collect());
            for (name, doc, origin) in list {
                let e = lua.create_table()?;
                e.set("name", name)?;
                e.set("doc", doc)?;
                e.set("origin", origin)?;
                t.push(e)?;
            }
            Ok(t)
        })?,
    )?;
    morc.set(
        "register",
        lua.create_function(|lua, (kind, name): (mlua::Value, Option<String>)| {
            let registered = kinds::register(lua, &kind, name)?;
            Ok((kind, registered))
        })?,
    )?;

    morc.set("kind", lua.create_function(kind_info)?)?;
    morc.set("component", lua.create_function(define_lua_component)?)?;
    robot::install(lua, &morc)?;
    keys::install(lua, &morc)?;
    interrupt::install(lua, &morc)?;
    fmu::install(lua, &morc)?;

    if let Some(engine) = engine {
        morc.set("engine", lua.create_userdata(LuaEngine(engine, None))?)?;
    }
    lua.globals().set("morc", morc.clone())?;
    error::install(lua)?;
    lua.load(PRELUDE).set_name("@lua/morc/prelude.lua").exec()?;
    // After the prelude, so that their doc strings attach through morc.doc.
    linalg::register(lua, &morc)?;
    model::register(lua, &morc)?;
    units::install(lua, &morc)?;
    object_params::install(lua, &morc)?;
    motion::install(lua, &morc)?;
    ft::install(lua, &morc)?;
    dynid::install(lua, &morc)?;
    fast::install(lua)?;
    plot::install(lua)?;
    read_recording::install(lua, &morc)?;
    live::install(lua, &morc)?;
    ros::install(lua, &morc)?;
    new_file::install(lua, &morc)?;
    // `require "morc"` gives the same table; the compiled-in modules are preloaded.
    let loaded: Table = lua.globals().get::<Table>("package")?.get("loaded")?;
    let skill: Table = lua.load(SKILL).set_name("@lua/morc/skill.lua").eval()?;
    loaded.set("morc.skill", skill)?;
    loaded.set("morc.lib", library::register(lua, &morc, &home())?)?;
    loaded.set("morc.docs", docs::register(lua)?)?;
    loaded.set("morc", morc)?;
    Ok(())
}

/// `morc.kind(name)`: a registered kind's documentation, origin, ports and parameters.
fn kind_info(lua: &Lua, name: String) -> mlua::Result<Table> {
    let entry = kinds::with(lua, |k| k.registry.get(&name).cloned().ok_or_else(|| k.registry.unknown(&name))).map_err(mlua::Error::runtime)?;
    let mut c = (entry.make)().map_err(|e| mlua::Error::runtime(format!("component kind '{name}': {e}")))?;
    let objects = object_params::of_kind(&mut *c);
    let info = c.info();
    let t = lua.create_table()?;
    t.set("name", entry.name.as_str())?;
    t.set("doc", info.doc.as_str())?;
    t.set("origin", entry.origin.as_str())?;
    let ports = |ports: &[morc_kernel::PortInfo]| -> mlua::Result<Table> {
        let list = lua.create_table()?;
        for p in ports {
            let e = lua.create_table()?;
            e.set("name", p.name.as_str())?;
            e.set("type", p.ty.to_string())?;
            e.set("unit", p.unit.as_str())?;
            if !p.element_units.is_empty() {
                e.set("units", p.element_units.clone())?;
            }
            if !p.element_names.is_empty() {
                e.set("elements", p.element_names.clone())?;
            }
            e.set("doc", p.doc.as_str())?;
            e.set("required", p.required)?;
            list.push(e)?;
        }
        Ok(list)
    };
    t.set("inputs", ports(&info.inputs)?)?;
    t.set("outputs", ports(&info.outputs)?)?;
    let params = lua.create_table()?;
    for p in &info.params {
        let e = lua.create_table()?;
        e.set("name", p.name.as_str())?;
        e.set("default", object_params::shown_default(lua, &objects, &p.name)?.map_or_else(|| from_value(lua, &p.value), Ok)?)?;
        e.set("unit", p.unit.as_str())?;
        e.set("doc", p.doc.as_str())?;
        params.push(e)?;
    }
    t.set("params", params)?;
    Ok(t)
}

/// Bytecode of a function that a Lua component runs in its own state: it may
/// not capture locals (upvalues other than _ENV), which would silently be nil there.
fn dump_isolated(lua: &Lua, kind: &str, what: &str, f: &Function) -> mlua::Result<Vec<u8>> {
    let getupvalue: Function = lua.globals().get::<Table>("debug")?.get("getupvalue")?;
    for i in 1.. {
        let name: Option<String> = getupvalue.call((f.clone(), i))?;
        match name.as_deref() {
            None => break,
            Some("_ENV") => {}
            Some(other) => {
                return Err(mlua::Error::runtime(format!(
                    "Lua component '{kind}': {what} uses the local variable '{other}' from outside the function; \
                     a Lua component runs in a Lua state of its own, so pass it as a parameter (self.{other}) or define it inside"
                )))
            }
        }
    }
    Ok(f.dump(false))
}

/// The module whose loading is defining a component: (module name, file) when the chunk
/// running it was loaded by `require` (which passes both to the chunk), None for a program's
/// own chunk or the REPL.
fn defining_module(lua: &Lua) -> mlua::Result<Option<(String, String)>> {
    let find: Function = match lua.named_registry_value::<Option<Function>>("morc.defining_module")? {
        Some(f) => f,
        None => {
            let f: Function = lua
                .load(
                    r#"local getinfo, getlocal = debug.getinfo, debug.getlocal
                    return function()
                      for level = 2, 200 do
                        local info = getinfo(level, "S")
                        if not info then return nil end
                        if info.what == "main" then
                          local _, name = getlocal(level, -1)
                          local _, file = getlocal(level, -2)
                          if type(name) == "string" and type(file) == "string" and file:match("%.lua$") then return name, file end
                          return nil
                        end
                      end
                    end"#,
                )
                .set_name("=morc.component")
                .eval()?;
            lua.set_named_registry_value("morc.defining_module", f.clone())?;
            f
        }
    };
    let (name, file): (Option<String>, Option<String>) = find.call(())?;
    Ok(name.zip(file))
}

/// `morc.component { name, doc, inputs, outputs, params, init, step, terminate }`.
fn define_lua_component(lua: &Lua, t: Table) -> mlua::Result<LuaKind> {
    let origin = caller(lua);
    let fail = |m: String| mlua::Error::runtime(format!("{origin}: {m}"));
    let kind: String = t.get::<Option<String>>("name")?.ok_or_else(|| fail("morc.component needs a name".into()))?;
    let mut sized_by = Vec::new();
    let mut ports = |key: &str, output: bool| -> mlua::Result<Vec<morc_kernel::PortInfo>> {
        let mut out = Vec::new();
        if let Some(list) = t.get::<Option<Table>>(key)? {
            for decl in list.sequence_values::<mlua::Value>() {
                let (port, size) = lua_port(&decl?).map_err(|e| fail(format!("Lua component '{kind}', {key}: {e}")))?;
                if let Some(param) = size {
                    sized_by.push((output, out.len(), param));
                }
                out.push(port);
            }
        }
        Ok(out)
    };
    let inputs = ports("inputs", false)?;
    let outputs = ports("outputs", true)?;
    let (mut params, mut objects) = (Vec::new(), Vec::new());
    if let Some(p) = t.get::<Option<Table>>("params")? {
        for pair in p.pairs::<String, mlua::Value>() {
            let (k, v) = pair?;
            // morc.ROBOT, morc.MODEL: a parameter that takes a robot or a model (object_params.rs).
            match object_params::declared(&k, &v) {
                Some((param, object)) => {
                    params.push(param);
                    objects.push(object);
                }
                None => params.push(ParamInfo::new(&k, convert::to_value_any(&v, &format!("{kind}.{k}"))?)),
            }
        }
        params.sort_by(|a, b| a.name.cmp(&b.name));
    }
    for (output, index, param) in &sized_by {
        let port = if *output { &outputs[*index] } else { &inputs[*index] };
        match params.iter().find(|p| &p.name == param).map(|p| &p.value) {
            Some(morc_kernel::Value::Integer(n)) if *n >= 1 => {}
            _ => {
                return Err(fail(format!(
                    "Lua component '{kind}': port '{}[{param}]' is sized by the parameter '{param}', which must be an integer of at least 1 in params (params = {{ {param} = 6 }})",
                    port.name
                )))
            }
        }
    }
    let step: Function = t
        .get::<Option<Function>>("step")?
        .ok_or_else(|| fail(format!("Lua component '{kind}' needs a step function: step = function(self, inp, out, t) … end")))?;
    let sandbox = library::defining_library(lua);
    // A kind defined by a module is loaded by the stepping thread's state under the same module
    // name (closures and upvalues intact); one defined in a program's chunk travels as bytecode.
    // A library's helper module other than lib.NAME.… would run outside the library's sandbox
    // there, so it travels as bytecode too.
    let module = defining_module(lua)?.filter(|(name, _)| sandbox.is_none() || name.starts_with("lib."));
    let source = match module {
        Some((module, file)) => {
            let package_path: String = lua.globals().get::<Table>("package")?.get("path")?;
            let library_path: Vec<String> = lua.globals().get::<Table>("morc")?.get::<Table>("lib")?.get("path")?;
            KindSource::Module { module, file, package_path, library_path }
        }
        None => {
            let optional = |key: &str| -> mlua::Result<Option<Vec<u8>>> { t.get::<Option<Function>>(key)?.map(|f| dump_isolated(lua, &kind, key, &f).map_err(|e| fail(e.to_string()))).transpose() };
            KindSource::Inline {
                init: optional("init")?,
                step: dump_isolated(lua, &kind, "step", &step).map_err(|e| fail(e.to_string()))?,
                terminate: optional("terminate")?,
                migrate: optional("migrate")?,
            }
        }
    };
    thread_state::capture(lua, &kind, &t)?;
    let def = LuaComponentDef {
        doc: t.get::<Option<String>>("doc")?.unwrap_or_default(),
        inputs,
        outputs,
        params,
        objects,
        sized_by,
        source,
        kind,
        // Defined by a library: its functions run in its sandbox in the component's own state too.
        sandbox,
    };
    Ok(LuaKind(Arc::new(def)))
}
