//! The Lua surface of morc: the `morc` module, exposed through userdata.
//! What can be written in Lua lives in `lua/` (loaded from here at start).

#![deny(clippy::missing_safety_doc)]
#![warn(missing_docs)]

mod assembly;
pub mod base;
mod bus;
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
pub mod live;
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

pub use base::start_engine;
pub use engine::{CheckOnly, LastOutcome};
pub use kinds::definition::LuaKind;
pub use kinds::instance::{lua_error_text, KindSource, LuaComponent, LuaComponentDef};
pub use robot::LuaRobot;
pub use thread_state::{set_gc_mode, GcMode, DEFAULT_POOL_BYTES};

use std::path::{Path, PathBuf};

use mlua::{Lua, LuaOptions, StdLib, Table};

use assembly::LuaAssembly;
use convert::table_to_data;
use data::LuaData;
use engine::LuaEngine;
use morc_kernel::AssemblySpec;
use morc_kernel::Engine;
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

    morc.set("kind", lua.create_function(kinds::kind_info)?)?;
    morc.set("component", lua.create_function(kinds::definition::define_lua_component)?)?;
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
