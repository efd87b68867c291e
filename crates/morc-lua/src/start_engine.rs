//! Starting the engine from Lua: `morc.start_engine { robot = r, q0 = {…}°, bus = "sim",
//! clock = "virtual"|"wall", period = s }` and `morc.use_robot(r)` read their options, check
//! what a library may reach (the bus, a network interface), open the base that
//! `base::open_base` chooses and restart `morc.engine` on it.

use mlua::{AnyUserData, Lua, Table};

use super::engine::LuaEngine;
use super::origin::caller;
use super::robot::LuaRobot;
use super::robot_define::joint_vector;
use crate::base::{open_base, BaseRequest};
use crate::error::{message_of, raise, with_prefix, ErrorKind};
use morc_ecat::virtual_bus::DEFAULT_DRIVES;
use morc_kernel::ClockKind;
use morc_kernel::{Engine, EngineConfig};

/// `morc.start_engine { robot = r, q0 = {…}°, clock = "virtual"|"wall", period = s }`: restarts
/// `morc.engine` on a new base (the simulated robot when `robot` is given, else the default).
pub(crate) fn start_engine(lua: &Lua, opts: Table) -> mlua::Result<AnyUserData> {
    let origin = caller(lua);
    let fail = |m: String| raise(ErrorKind::Lua, format!("{origin}: morc.start_engine: {m}"));
    let prefix = format!("{origin}: morc.start_engine: ");
    let morc: Table = lua.globals().get("morc")?;
    let engine_ud: AnyUserData = morc.get("engine")?;
    let engine = engine_ud.borrow_mut::<LuaEngine>().map_err(|_| fail("morc.engine is busy or not an engine".into()))?;
    if engine.0.is_running() {
        return Err(fail("an assembly is running".into()));
    }
    let mut config: EngineConfig = engine.0.config().clone();
    let asked_clock = opts.get::<Option<String>>("clock")?.map(|c| c.parse::<ClockKind>()).transpose().map_err(fail)?;
    if let Some(p) = opts.get::<Option<f64>>("period")? {
        config.period = p;
    }
    let robot_value = opts.get::<mlua::Value>("robot")?;
    let robot = match &robot_value {
        mlua::Value::Nil => None,
        mlua::Value::UserData(ud) if ud.is::<LuaRobot>() => Some(ud.borrow::<LuaRobot>()?.0.clone()),
        _ => return Err(fail("robot must be a robot made with morc.robot{…}".into())),
    };
    let q0 = match &robot {
        None => Vec::new(),
        Some(robot) => {
            let q0 = match opts.get::<mlua::Value>("q0")? {
                mlua::Value::Nil => robot.home.clone(),
                v => joint_vector(robot, v, "q0").map_err(|e| fail(message_of(&e)))?,
            };
            // A real arm may stand outside its limits (moved by hand, brakes released), so
            // its simulation may too: the base then accepts only motion back towards them.
            if q0.iter().any(|q| !q.is_finite()) {
                return Err(fail("q0 must be numbers, one per joint".into()));
            }
            q0
        }
    };
    // bus = "sim" | "eth1"; bus = false: the direct simulation; not given: the bus the program
    // was started on (`morc --bus …`, morc.bus) when it puts a robot on the engine.
    if let Some(bus) = opts.get::<Option<String>>("bus").ok().flatten() {
        crate::library::check(lua, "bus", &format!("access the bus directly (morc.start_engine {{ bus = \"{bus}\" }})"))?;
        if bus != "sim" {
            crate::library::check(lua, "network", &format!("use a network interface (the EtherCAT bus on {bus})"))?;
        }
    }
    let bus = match opts.get::<mlua::Value>("bus")? {
        mlua::Value::Nil if robot.is_some() => morc.get::<Option<String>>("bus")?,
        mlua::Value::Nil | mlua::Value::Boolean(false) => None,
        mlua::Value::String(s) => Some(s.to_str()?.to_string()),
        other => return Err(fail(format!("bus must be \"sim\", a network interface or false, got a {}", other.type_name()))),
    };
    // drives = N: the simulated segment's drives when no robot brings its own.
    let drives = if robot.is_none() && bus.is_some() { opts.get::<Option<usize>>("drives")? } else { None };
    let request = BaseRequest {
        robot,
        q0,
        bus,
        drives: drives.unwrap_or(DEFAULT_DRIVES),
        clock: asked_clock,
        checking: lua.app_data_ref::<super::engine::CheckOnly>().is_some(),
    };
    let base = open_base(&request, &mut config).map_err(|e| with_prefix(&prefix, e))?;
    let engine = replace_engine(engine, engine_ud.clone(), config, base).map_err(|m| raise(ErrorKind::Engine, format!("{prefix}{m}")))?;
    morc.set("current_robot", robot_value)?;
    Ok(engine)
}

/// Starts the engine on `base` in place of the current one (dropping the old stops its
/// Coordinator), so every reference to morc.engine follows.
fn replace_engine(mut engine: mlua::UserDataRefMut<LuaEngine>, engine_ud: AnyUserData, config: EngineConfig, base: Box<dyn morc_kernel::Base>) -> Result<AnyUserData, String> {
    if engine.0.is_running() {
        return Err("an assembly is running".into());
    }
    let new = Engine::start(config, base)?;
    let _old = std::mem::replace(&mut engine.0, new);
    drop(engine);
    Ok(engine_ud)
}

/// `morc.use_robot(robot [, opts])`: `morc.start_engine` with `robot` and the options `opts` (q0, bus, clock, period).
pub(crate) fn use_robot(lua: &Lua, (robot, opts): (mlua::Value, mlua::Value)) -> mlua::Result<AnyUserData> {
    let origin = caller(lua);
    if !matches!(&robot, mlua::Value::UserData(ud) if ud.is::<LuaRobot>()) {
        return Err(mlua::Error::runtime(format!("{origin}: morc.use_robot expects a robot (e.g. morc.use_robot(require \"robots.kr16\")), got a {}", robot.type_name())));
    }
    let opts = match opts {
        mlua::Value::Table(o) => o,
        // `morc.use_robot(require "robots.kr16")`: Lua 5.4's require also returns where it
        // found the module, a string, which is no options table.
        mlua::Value::Nil | mlua::Value::String(_) => lua.create_table()?,
        other => return Err(mlua::Error::runtime(format!("{origin}: morc.use_robot's options must be a table (q0, bus, clock, period), got a {}", other.type_name()))),
    };
    opts.set("robot", robot)?;
    start_engine(lua, opts)
}
