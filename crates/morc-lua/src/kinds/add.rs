//! The one way a component is made for an assembly: `a:add(name, kind, params)` and
//! `robot:add(a, name, kind, params)` both come here, then hand it to the assembly. The kind is resolved (a registered name,
//! a kind value, `"fmu"` with a path), the scheduling options (`every`, `period`,
//! `interpolate`) are read once, and the parameters are checked on an instance now so that
//! errors point at the calling line: as given, handed over (a robot or a model to a Lua
//! component), or converted from Lua's units by the robot for a robot's kinds.

use mlua::{Lua, Table};

use super::definition::LuaKind;
use super::robot_kind::{robot_kind, units_of, RobotKind};
use super::Resolved;
use crate::convert::to_value_any;
use crate::error::{message_of, note_component_kind, prefixed, raise, ErrorKind};
use crate::fmu::FmuKind;
use crate::origin::caller;
use crate::robot_params::{self, Units};
use morc_kernel::{ComponentSpec, ParamInfo, Value};
use morc_robot::Robot;
use std::sync::Arc;

/// Resolves what `a:add` was given as kind: a registered name, a kind value, or `"fmu"` with
/// the `path` option (the same kind as `morc.fmu(path)`).
fn resolve(lua: &Lua, kind: &mlua::Value, fmu_path: Option<&str>) -> mlua::Result<Resolved> {
    match kind {
        mlua::Value::String(s) if s.to_str()? == "fmu" => {
            let path = fmu_path.ok_or_else(|| mlua::Error::runtime("kind \"fmu\" needs the FMU file: a:add(name, \"fmu\", { path = \"model.fmu\", … })"))?;
            crate::library::check(lua, "binary", &format!("load binary code (the FMU {path})"))?;
            let kind = crate::fmu::open(lua, path)?;
            Ok(Resolved::Kind(super::fmu_entry(&kind, &format!("FMU {path}"))))
        }
        mlua::Value::String(s) => super::find(lua, &s.to_str()?).map_err(mlua::Error::runtime),
        mlua::Value::UserData(ud) if ud.is::<FmuKind>() => Ok(Resolved::Kind(super::fmu_entry(&*ud.borrow::<FmuKind>()?, "morc.fmu"))),
        mlua::Value::UserData(ud) if ud.is::<LuaKind>() => Ok(Resolved::Kind(super::lua_entry(&*ud.borrow::<LuaKind>()?, "morc.component"))),
        mlua::Value::UserData(ud) if ud.is::<RobotKind>() => Ok(Resolved::Robot(ud.borrow::<RobotKind>()?.clone())),
        other => Err(mlua::Error::runtime(format!(
            "a component kind is a name (\"gain\", see morc.components()), \"fmu\" with a path, a kind made with morc.component{{…}}, morc.fmu(path) or robot:component \"ptp\", got a {}",
            other.type_name()
        ))),
    }
}

/// `{ "u", "v" }`: the inputs named in an `interpolate` option.
fn input_names(v: &mlua::Value, what: &str) -> mlua::Result<Vec<String>> {
    match v {
        mlua::Value::Table(t) => t.clone().sequence_values::<String>().collect(),
        _ => Err(mlua::Error::runtime(format!("{what} is a list of input names, e.g. interpolate = {{ \"u\" }}"))),
    }
}

/// The component named `name` of `kind` with the options `opts`, checked, for an assembly to
/// take ([`crate::assembly::push`]).
pub fn component(lua: &Lua, name: String, kind: mlua::Value, opts: Option<Table>) -> mlua::Result<ComponentSpec> {
    let origin = caller(lua);
    let is_fmu_path = matches!(&kind, mlua::Value::String(s) if s.to_str().is_ok_and(|s| s == "fmu"));
    let fmu_path = match &opts {
        Some(o) if is_fmu_path => o.get::<Option<String>>("path")?,
        _ => None,
    };
    // A robot's kinds convert their parameters from Lua's units; their errors are the robot's.
    let mut converting: Option<(Arc<Robot>, Units)> = None;
    let fail = |robot: bool, m: String| if robot { raise(ErrorKind::Robot, format!("{origin}: {m}")) } else { mlua::Error::runtime(format!("{origin}: {m}")) };
    let (kind_name, mut factory) = match resolve(lua, &kind, fmu_path.as_deref()).map_err(|e| prefixed(&origin, e))? {
        Resolved::Robot(k) => {
            let factory = robot_kind(&k.robot, &k.kind).map_err(|m| fail(true, m))?;
            converting = Some((k.robot.clone(), units_of(opts.as_ref()).map_err(|e| fail(true, message_of(&e)))?));
            (k.kind, factory)
        }
        Resolved::Kind(entry) => (entry.name, entry.make),
    };
    let robot = converting.is_some();
    let fail = |m: String| fail(robot, m);
    // FMU and Lua kinds are named by their model and definition: what their faults are about
    // (kinds registered by name are noted by morc.register).
    match &kind {
        _ if fmu_path.is_some() => note_component_kind(&kind_name, ErrorKind::Fmi),
        mlua::Value::UserData(k) if k.is::<FmuKind>() => note_component_kind(&kind_name, ErrorKind::Fmi),
        mlua::Value::UserData(k) if k.is::<LuaKind>() => note_component_kind(&kind_name, ErrorKind::Lua),
        _ => {}
    }
    let (mut every, mut period, mut interpolate) = (1u32, None, Vec::new());
    let mut params = Vec::new();
    let mut probe = factory().map_err(&fail)?;
    // A Lua component's parameters that take a robot or a model: handed to it, not converted.
    let objects = crate::object_params::of_kind(&mut *probe);
    let mut handed = Vec::new();
    let component = format!("component '{name}' ({kind_name})");
    if let Some(opts) = opts {
        for pair in opts.pairs::<String, mlua::Value>() {
            let (k, v) = pair?;
            match k.as_str() {
                "path" if fmu_path.is_some() => {}
                "units" if robot => {}
                "interpolate" => interpolate = input_names(&v, &format!("{origin}: 'interpolate' of '{name}'"))?,
                "every" => match v {
                    mlua::Value::Integer(i) if i >= 1 && i <= i64::from(u32::MAX) => every = i as u32,
                    _ => return Err(fail(format!("'every' of '{name}' must be a whole number ≥ 1 of base periods"))),
                },
                "period" => match v {
                    mlua::Value::Number(x) => period = Some(x),
                    mlua::Value::Integer(i) => period = Some(i as f64),
                    _ => return Err(fail(format!("'period' of '{name}' must be a number of seconds"))),
                },
                _ => match (objects.iter().find(|p| p.name == k), &converting) {
                    (Some(p), _) => handed.push((k.clone(), crate::object_params::take(lua, p, &v, &component).map_err(&fail)?)),
                    (None, Some((robot, units))) => {
                        crate::object_params::refuse(&v, &k, &format!("component '{name}'")).map_err(&fail)?;
                        // An unknown name is set_parameter's to say (naming the known ones).
                        let declared = probe.info().params.iter().find(|p| p.name == k).cloned().unwrap_or_else(|| ParamInfo::new(&k, Value::Real(0.0)));
                        let value = robot_params::convert(robot, &declared, &v, *units, &format!("{name}.{k}")).map_err(|e| fail(message_of(&e)))?;
                        params.push((k, value));
                    }
                    (None, None) => {
                        crate::object_params::refuse(&v, &k, &component).map_err(&fail)?;
                        params.push((k.clone(), to_value_any(&v, &format!("{origin}: {name}.{k}"))?));
                    }
                },
            }
        }
    }
    // Not given: the robot on the engine.
    for p in &objects {
        if !handed.iter().any(|(n, _)| *n == p.name) {
            handed.push((p.name.clone(), crate::object_params::default(lua, p, &component).map_err(&fail)?));
        }
    }
    if !handed.is_empty() {
        factory = crate::object_params::handing(&mut *probe, handed).ok_or_else(|| fail(format!("{component}: only a Lua component takes robots")))?;
    }
    // NaN never; an infinity only where the kind's own default is one ("no limit").
    let unbounded: Vec<String> = probe.info().params.iter().filter(|d| crate::convert::non_finite(&d.value).is_some_and(|(_, _, x)| x.is_infinite())).map(|d| d.name.clone()).collect();
    for (p, v) in &params {
        probe.set_parameter(p, v).map_err(|e| fail(format!("component '{name}': {e}")))?;
        match crate::convert::non_finite(v) {
            Some((path, at, x)) if x.is_nan() || !unbounded.contains(p) => {
                let element = at.map_or(String::new(), |i| format!(" (element {})", i + 1));
                return Err(fail(format!("component '{name}': parameter '{p}{path}'{element} is {x}: give a finite number")));
            }
            _ => {}
        }
    }
    // A robot's kinds check their parameters against the robot now (cheap); other kinds'
    // configuration (an FMU's instantiation) waits for the run.
    if robot {
        probe.configure().map_err(|e| fail(format!("component '{name}': {e}")))?;
    }
    Ok(ComponentSpec { name, kind: kind_name, factory, every, period, params, interpolate, origin })
}
