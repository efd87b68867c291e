//! The operator's view of the robot on the engine: `robot:state()` (what it measures, is
//! commanded and does, from the engine's last tick), and the override, pause and resume of its
//! motions. Reading takes a consistent copy of the tick without stopping the real-time path.

use mlua::{AnyUserData, Lua, Table};

use super::engine::{LastOutcome, LuaEngine};
use super::robot::LuaRobot;
use super::robot_params::Units;
use crate::error::{raise, ErrorKind};
use morc_kernel::{Outcome, Value};
use morc_model::rpy_from_rotation;
use morc_robot::operator::{JogCommand, JogFrame, JogStop};

/// Joint numbers in Lua's units (°, mm; per second for velocities); torques stay N·m (N).
fn joints_lua(lua: &Lua, robot: &morc_robot::Robot, v: &Value, scaled: bool) -> mlua::Result<mlua::Value> {
    match v {
        Value::Vector(xs) => {
            let t = lua.create_table_with_capacity(xs.len(), 0)?;
            for (i, x) in xs.iter().enumerate() {
                let s = if scaled && i < robot.dof() { 1.0 / Units::LUA.joint(robot, i) } else { 1.0 };
                t.raw_set(i + 1, x * s)?;
            }
            Ok(mlua::Value::Table(t))
        }
        other => crate::convert::from_value(lua, other),
    }
}

/// Ports whose numbers are joint positions or velocities (scaled to ° / mm).
fn is_joint_motion(name: &str) -> bool {
    matches!(name, "q" | "qd" | "q_cmd" | "qd_cmd" | "qd_ff")
}

/// `robot:state()`.
pub(crate) fn state(lua: &Lua, ud: &AnyUserData) -> mlua::Result<Table> {
    let origin = super::origin::caller(lua);
    let robot = ud.borrow::<LuaRobot>()?.0.clone();
    let morc: Table = lua.globals().get("morc")?;
    let on_engine = matches!(morc.get::<mlua::Value>("current_robot")?, mlua::Value::UserData(current) if current.to_pointer() == ud.to_pointer());
    if !on_engine {
        return Err(raise(ErrorKind::Robot, format!("{origin}: robot '{}' is not on the engine: morc.use_robot(r) puts it there", robot.name)));
    }
    let engine_ud: AnyUserData = morc.get("engine")?;
    let busy = || raise(ErrorKind::Engine, format!("{origin}: robot:state(): morc.engine is busy"));
    let (mut snapshot, period, bus, idle) = {
        let engine = engine_ud.borrow::<LuaEngine>().map_err(|_| busy())?;
        let idle = !engine.0.is_running() || engine.0.run_finished();
        (engine.0.snapshot(), engine.0.config().period, engine.0.bus().cloned(), idle)
    };
    if !snapshot.written {
        // An engine on the virtual clock has not ticked since it started: one tick of nothing
        // (the robot holds) measures where it is.
        let mut engine = engine_ud.borrow_mut::<LuaEngine>().map_err(|_| busy())?;
        if !engine.0.is_running() {
            let mut spec = morc_kernel::AssemblySpec::new("state");
            spec.duration = Some(period);
            engine.0.run(&spec, &morc_kernel::AssemblyData::new()).map_err(crate::error::typed)?;
            snapshot = engine.0.snapshot();
        }
    }
    if idle {
        // Nothing runs (an engine on the virtual clock does not tick then: its last tick may be
        // the end of the last run): the robot holds.
        snapshot.running = None;
        snapshot.holding = true;
        snapshot.stopping = false;
        snapshot.commanded.clear();
    }
    let t = lua.create_table()?;
    t.set("tick", snapshot.tick)?;
    t.set("time", snapshot.tick as f64 * period)?;
    t.set("holding", snapshot.holding)?;
    t.set("stopping", snapshot.stopping)?;
    let io = lua.create_table()?;
    let mut q_measured = None;
    for p in &snapshot.measured {
        let v = joints_lua(lua, &robot, &p.value, is_joint_motion(&p.name))?;
        match p.name.as_str() {
            "q" | "qd" | "tau" => t.set(p.name.as_str(), v)?,
            _ => io.set(p.name.as_str(), v)?,
        }
        if p.name == "q" {
            q_measured = Some(p.value.as_slice().to_vec());
        }
    }
    t.set("io", io)?;
    let commanded = lua.create_table()?;
    for p in &snapshot.commanded {
        commanded.set(p.name.as_str(), joints_lua(lua, &robot, &p.value, is_joint_motion(&p.name))?)?;
    }
    t.set("commanded", commanded)?;
    // The tool where the measured joints put it.
    if let Some(q) = q_measured.filter(|q| q.len() == robot.dof()) {
        let model_ud = super::model::robot_model(lua, ud, &robot.model)?;
        let p = model_ud.borrow_mut::<super::model::LuaModel>()?.placement(&q, robot.tool_frame);
        let tool = lua.create_table()?;
        tool.set("pos", lua.create_sequence_from(p.translation.iter().map(|x| x * 1e3))?)?;
        tool.set("rpy", lua.create_sequence_from(rpy_from_rotation(&p.rotation).iter().map(|x| x.to_degrees()))?)?;
        tool.set("frame", robot.model.frames()[robot.tool_frame].name.clone())?;
        t.set("tool", tool)?;
    }
    t.set("payload", robot.payload)?;
    let operator = &robot.operator;
    t.set("override", operator.override_setting() * 100.0)?;
    t.set("paused", operator.paused())?;
    if let Some((name, ticks)) = snapshot.running {
        let c = lua.create_table()?;
        c.set("name", name)?;
        c.set("elapsed", ticks as f64 * period)?;
        if let Some(progress) = operator.progress() {
            c.set("progress", progress)?;
            c.set("override", operator.override_now() * 100.0)?;
        }
        t.set("command", c)?;
    }
    let faults = lua.create_table()?;
    if let Some(bus) = bus.filter(|b| b.faulted()) {
        faults.push(format!("the bus holds a latched fault ({} since start): engine:reset_faults() after the cause is gone", bus.faults()))?;
    }
    if let Some(LastOutcome(Outcome::Fault(f))) = lua.app_data_ref::<LastOutcome>().as_deref() {
        faults.push(format!("the last run faulted: {}", f.message))?;
    }
    t.set("faults", faults)?;
    Ok(t)
}

/// `robot:override([percent])`: sets the speed override of this robot's motions (0–100 %; the
/// running one changes smoothly) and returns it.
pub(crate) fn set_override(lua: &Lua, robot: &morc_robot::Robot, percent: Option<f64>) -> mlua::Result<f64> {
    if let Some(p) = percent {
        if !(0.0..=100.0).contains(&p) {
            return Err(raise(ErrorKind::Robot, format!("{}: robot:override({p}): give a percentage from 0 to 100", super::origin::caller(lua))));
        }
        robot.operator.set_override(p / 100.0).map_err(|e| raise(ErrorKind::Robot, e))?;
    }
    Ok(robot.operator.override_setting() * 100.0)
}

/// The jog a Lua table asks for: `{ joint = i | axis = "x"…"c", frame = "base"|"tool", dir = ±1,
/// step = ° or mm, time = s, speed = % }`.
fn jog_command(robot: &morc_robot::Robot, t: &Table, what: &str) -> Result<JogCommand, String> {
    let joint: Option<usize> = t.get("joint").map_err(|e| format!("{what}: joint: {e}"))?;
    let axis: Option<String> = t.get("axis").map_err(|e| format!("{what}: axis: {e}"))?;
    let frame: Option<String> = t.get("frame").map_err(|e| format!("{what}: frame: {e}"))?;
    let number = |key: &str, default: f64| -> Result<f64, String> { Ok(t.get::<Option<f64>>(key).map_err(|e| format!("{what}: {key}: {e}"))?.unwrap_or(default)) };
    let mut c = JogCommand::default();
    match (joint, axis.as_deref()) {
        (Some(j), None) if (1..=robot.dof()).contains(&j) => {
            c.frame = JogFrame::Joint;
            c.axis = j - 1;
        }
        (Some(j), None) => return Err(format!("{what}: joint {j}: robot '{}' has joints 1 to {}", robot.name, robot.dof())),
        (None, Some(a)) => {
            c.axis = ["x", "y", "z", "a", "b", "c"]
                .iter()
                .position(|x| *x == a)
                .ok_or_else(|| format!("{what}: axis \"{a}\": give x, y, z (along) or a, b, c (about x, y, z)"))?;
            c.frame = match frame.as_deref().unwrap_or("base") {
                "base" => JogFrame::Base,
                "tool" => JogFrame::Tool,
                f => return Err(format!("{what}: frame \"{f}\": give \"base\" or \"tool\"")),
            };
        }
        _ => return Err(format!("{what}: give joint = 1…{} or axis = \"x\"…\"c\" (not both)", robot.dof())),
    }
    let step = number("step", 0.0)?;
    let dir = number("dir", if step < 0.0 { -1.0 } else { 1.0 })?;
    if dir != 1.0 && dir != -1.0 {
        return Err(format!("{what}: dir must be 1 or -1, got {dir}"));
    }
    c.direction = dir;
    let speed = number("speed", 10.0)?;
    if !(speed > 0.0 && speed <= 100.0) {
        return Err(format!("{what}: speed is a percentage from 0 to 100, got {speed}"));
    }
    c.speed = speed / 100.0;
    // Increments in Lua's units: ° for joints and rotations, mm for prismatic joints and lengths.
    let to_si = match c.frame {
        JogFrame::Joint => Units::LUA.joint(robot, c.axis),
        _ if c.axis < 3 => Units::LUA.length,
        _ => Units::LUA.angle,
    };
    c.step = step.abs() * to_si;
    c.time = number("time", 0.0)?;
    if c.step == 0.0 && c.time <= 0.0 {
        return Err(format!("{what}: give step = ° or mm (an increment) or time = s (moving that long)"));
    }
    Ok(c)
}

/// The metatable of `robot:jog`'s result: one line, as a skill result prints (lua/morc/skill.lua).
const JOG_RESULT: &str = r#"return { __tostring = function(r)
  local line = ("jog %s  %.3g s"):format(r.ok and "✓" or "✗", r.duration or 0)
  if not r.ok then return line .. "   " .. tostring(r.reason) end
  if r.stopped then line = line .. "   " .. r.stopped end
  local q = {}
  for i, x in ipairs(r.q or {}) do q[i] = ("%.4g"):format(x) end
  return line .. "   q = { " .. table.concat(q, ", ") .. " }"
end }"#;

/// `robot:jog { … }`: jogs on the engine and returns when the robot is still again.
pub(crate) fn jog(lua: &Lua, ud: &AnyUserData, t: Table) -> mlua::Result<Table> {
    let origin = super::origin::caller(lua);
    let robot = ud.borrow::<LuaRobot>()?.0.clone();
    let what = format!("{origin}: robot:jog");
    let command = jog_command(&robot, &t, &what).map_err(|e| raise(ErrorKind::Robot, e))?;
    robot.operator.jog(command);
    let make: mlua::Function = lua.load("return require 'stdlib.assemblies.jog'").set_name("=morc.jog").eval()?;
    let a: AnyUserData = make.call((ud.clone(), mlua::Value::Nil))?;
    let run: mlua::Function = lua.load("return function(a) return morc.engine:run(a) end").set_name("=morc.jog").eval()?;
    let result = run.call::<Table>(a);
    // Whatever happened (Ctrl-C, a fault), nothing is left asking to move.
    robot.operator.stop_jog();
    let result = result?;
    let after = state(lua, ud)?;
    let out = lua.create_table()?;
    out.set("ok", result.get::<bool>("ok")?)?;
    out.set("reason", result.get::<mlua::Value>("reason")?)?;
    out.set("duration", result.get::<mlua::Value>("duration")?)?;
    out.set("q", after.get::<mlua::Value>("q")?)?;
    out.set("tool", after.get::<mlua::Value>("tool")?)?;
    if let Some(why) = jog_stop_text(&robot) {
        out.set("stopped", why)?;
    }
    // Printed as a skill's result is: "jog ✓  0.21 s   …".
    let meta: Table = lua.load(JOG_RESULT).set_name("=morc.jog").eval()?;
    out.set_metatable(Some(meta));
    Ok(out)
}

/// Why the last jog stopped by itself, in words.
pub(crate) fn jog_stop_text(robot: &morc_robot::Robot) -> Option<String> {
    match robot.operator.jog_stopped() {
        JogStop::None => None,
        JogStop::Limit(j) => Some(format!("joint {} stops before its limit", robot.joints[j].name)),
        JogStop::Singularity => Some("the tool is near a singularity: jog a joint to move away from it".into()),
    }
}
