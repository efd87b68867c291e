//! Robots from Lua: `morc.model.urdf "file"`, `morc.model.dh { … }`, `morc.robot { … }`, and
//! `morc.start_engine { robot = r, … }` / `morc.use_robot(r)` to run the engine on a
//! simulated robot. Lua speaks degrees and millimetres; the Rust side SI units.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mlua::{AnyUserData, Lua, Table, UserData, UserDataFields, UserDataMethods};
use nalgebra::{Matrix3, Vector3};

use super::assembly::LuaAssembly;
use super::convert::to_value;
use super::engine::LuaEngine;
use super::origin::caller;
use crate::kernel::assembly::ComponentSpec;
use crate::kernel::clock::ClockKind;
use crate::kernel::engine::{Engine, EngineConfig};
use crate::kernel::value::Value;
use crate::model::spatial::{rotation_from_rpy, rpy_from_rotation};
use crate::model::{DhConvention, DhLink, DhTable, DriveTrain, Inertia, JointKind, JointLimits, Model, Se3};
use crate::robot::{self, components, JointDrive, Limits, Robot, RobotJoint, SimulatedRobot};

/// A robot model (from URDF or DH), before it becomes a robot.
#[derive(Clone)]
pub struct LuaModel(pub Model);

impl UserData for LuaModel {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("name", |_, this| Ok(this.0.name().to_string()));
        fields.add_field_method_get("dof", |_, this| Ok(this.0.nv()));
        fields.add_field_method_get("joints", |_, this| Ok(this.0.joint_names()[1..].to_vec()));
    }
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method("__tostring", |_, this, ()| Ok(format!("model '{}' ({} joints)", this.0.name(), this.0.nv())));
    }
}

/// A robot made by `morc.robot { … }`.
#[derive(Clone)]
pub struct LuaRobot(pub Arc<Robot>);

/// The full path of the Lua file that called, to resolve relative paths against.
fn caller_file(lua: &Lua) -> Option<PathBuf> {
    for level in 1..8 {
        let Some(debug) = lua.inspect_stack(level) else { break };
        if debug.curr_line() > 0 {
            let source = debug.source();
            return source.source.and_then(|s| s.strip_prefix('@').map(PathBuf::from));
        }
    }
    None
}

/// A model file named in a script: next to the script, else from the working directory,
/// else under morc's home.
fn resolve(lua: &Lua, file: &str) -> PathBuf {
    let path = Path::new(file);
    if path.is_absolute() {
        return path.to_path_buf();
    }
    let candidates = [caller_file(lua).and_then(|f| f.parent().map(|d| d.join(path))), Some(path.to_path_buf()), Some(super::home().join(path))];
    candidates.iter().flatten().find(|p| p.exists()).cloned().unwrap_or_else(|| path.to_path_buf())
}

fn number(t: &Table, key: &str, default: Option<f64>, what: &str) -> mlua::Result<f64> {
    match t.get::<mlua::Value>(key)? {
        mlua::Value::Nil => default.ok_or_else(|| mlua::Error::runtime(format!("{what}: '{key}' is missing"))),
        mlua::Value::Integer(i) => Ok(i as f64),
        mlua::Value::Number(x) => Ok(x),
        other => Err(mlua::Error::runtime(format!("{what}: '{key}' must be a number, got a {}", other.type_name()))),
    }
}

fn numbers(v: mlua::Value, n: usize, what: &str) -> mlua::Result<Vec<f64>> {
    match to_value(&v, what)? {
        Value::Vector(x) if x.len() == n => Ok(x),
        Value::Real(x) if n == 1 => Ok(vec![x]),
        Value::Integer(x) if n == 1 => Ok(vec![x as f64]),
        _ => Err(mlua::Error::runtime(format!("{what}: expected {n} numbers"))),
    }
}

fn vec3_mm(t: &Table, key: &str, what: &str) -> mlua::Result<Vector3<f64>> {
    match t.get::<mlua::Value>(key)? {
        mlua::Value::Nil => Ok(Vector3::zeros()),
        v => {
            let x = numbers(v, 3, &format!("{what}.{key} (mm)"))?;
            Ok(Vector3::new(x[0], x[1], x[2]) * 1e-3)
        }
    }
}

/// `{ ixx, iyy, izz, ixy, ixz, iyz }` in kg·m² → a symmetric matrix.
fn inertia_matrix(t: &Table, what: &str) -> mlua::Result<Matrix3<f64>> {
    match t.get::<mlua::Value>("inertia")? {
        mlua::Value::Nil => Ok(Matrix3::zeros()),
        v => {
            let x = numbers(v, 6, &format!("{what}.inertia {{ixx, iyy, izz, ixy, ixz, iyz}} (kg·m²)"))?;
            Ok(Matrix3::new(x[0], x[3], x[4], x[3], x[1], x[5], x[4], x[5], x[2]))
        }
    }
}

/// `morc.model.dh { name, convention = "standard"|"modified", { a, alpha, d, offset, flip, mass, com, inertia }, … }`:
/// lengths in mm, angles in degrees, masses in kg, inertias in kg·m² about the centre of mass.
fn model_dh(lua: &Lua, t: Table) -> mlua::Result<LuaModel> {
    let origin = caller(lua);
    let fail = |m: String| mlua::Error::runtime(format!("{origin}: morc.model.dh: {m}"));
    let convention = match t.get::<Option<String>>("convention")?.as_deref() {
        None | Some("standard") => DhConvention::Standard,
        Some("modified") => DhConvention::Modified,
        Some(other) => return Err(fail(format!("convention must be \"standard\" or \"modified\", got {other:?}"))),
    };
    let mut links = Vec::new();
    for (i, row) in t.clone().sequence_values::<Table>().enumerate() {
        let row = row.map_err(|_| fail(format!("row {} must be a table {{ a = mm, alpha = °, d = mm, offset = ° }}", i + 1)))?;
        let what = format!("row {}", i + 1);
        let mut link = DhLink::revolute(
            number(&row, "a", Some(0.0), &what).map_err(|e| fail(e.to_string()))? * 1e-3,
            number(&row, "alpha", Some(0.0), &what).map_err(|e| fail(e.to_string()))?.to_radians(),
            number(&row, "d", Some(0.0), &what).map_err(|e| fail(e.to_string()))? * 1e-3,
            number(&row, "offset", Some(0.0), &what).map_err(|e| fail(e.to_string()))?.to_radians(),
        );
        link.flip = row.get::<Option<bool>>("flip")?.unwrap_or(false);
        if let Some(mass) = row.get::<Option<f64>>("mass")? {
            let com = vec3_mm(&row, "com", &what).map_err(|e| fail(e.to_string()))?;
            let inertia = inertia_matrix(&row, &what).map_err(|e| fail(e.to_string()))?;
            link.inertia = Some(Inertia::new(mass, com, inertia));
        }
        link.kind = JointKind::Revolute;
        links.push(link);
    }
    let table = DhTable {
        name: t.get::<Option<String>>("name")?.unwrap_or_else(|| "dh".into()),
        convention,
        base: Se3::identity(),
        tool: Se3::identity(),
        links,
        gravity: Vector3::new(0.0, 0.0, -9.81),
    };
    table.to_model().map(LuaModel).map_err(|e| fail(e.to_string()))
}

fn model_urdf(lua: &Lua, file: String) -> mlua::Result<LuaModel> {
    let origin = caller(lua);
    let path = resolve(lua, &file);
    crate::model::load_urdf(&path).map(LuaModel).map_err(|e| mlua::Error::runtime(format!("{origin}: morc.model.urdf: {e}")))
}

/// The frame a payload and tool attach to: the flange ("tool"/"tool0" of the model), else the last joint.
fn flange(model: &Model) -> (usize, Se3) {
    let last = model.njoints() - 1;
    ["tool0", "tool", "flange"]
        .iter()
        .filter_map(|n| model.frame_index(n))
        .map(|f| &model.frames()[f])
        .find(|f| f.parent_joint == last)
        .map_or((last, Se3::identity()), |f| (last, f.placement))
}

fn limits_of(j: &Table, model_limits: &JointLimits, what: &str) -> mlua::Result<Limits> {
    let l: Table = j.get::<Option<Table>>("limits")?.unwrap_or(j.clone());
    let finite = |x: f64| if x.is_finite() { Some(x) } else { None };
    let pos = match l.get::<mlua::Value>("pos")? {
        mlua::Value::Nil => match (finite(model_limits.lower), finite(model_limits.upper)) {
            (Some(lo), Some(hi)) => (lo, hi),
            _ => return Err(mlua::Error::runtime(format!("{what}: needs limits.pos = {{lower, upper}} (degrees); the model has none"))),
        },
        v => {
            let x = numbers(v, 2, &format!("{what}: limits.pos {{lower, upper}} (degrees)"))?;
            (x[0].to_radians(), x[1].to_radians())
        }
    };
    let velocity = match l.get::<Option<f64>>("vel")? {
        Some(v) => v.to_radians(),
        None => finite(model_limits.velocity).ok_or_else(|| mlua::Error::runtime(format!("{what}: needs limits.vel (°/s); the model has none")))?,
    };
    let acceleration = match l.get::<Option<f64>>("acc")? {
        Some(a) => a.to_radians(),
        None => return Err(mlua::Error::runtime(format!("{what}: needs limits.acc (°/s²)"))),
    };
    let torque = match l.get::<Option<f64>>("torque")? {
        Some(t) => t,
        None => finite(model_limits.effort).ok_or_else(|| mlua::Error::runtime(format!("{what}: needs limits.torque (N·m); the model has none")))?,
    };
    Ok(Limits { lower: pos.0, upper: pos.1, velocity, acceleration, torque })
}

/// `morc.robot { name, model, joints = { { "A1", drive = {…}, limits = {…} }, … }, tool = {…}, payload = {…} }`.
fn define_robot(lua: &Lua, t: Table) -> mlua::Result<LuaRobot> {
    let origin = caller(lua).to_string();
    let fail = |m: String| mlua::Error::runtime(format!("{origin}: {m}"));
    let name: String = t.get::<Option<String>>("name")?.ok_or_else(|| fail("morc.robot needs a name".into()))?;
    let mut model = match t.get::<mlua::Value>("model")? {
        mlua::Value::UserData(ud) if ud.is::<LuaModel>() => ud.borrow::<LuaModel>()?.0.clone(),
        _ => return Err(fail(format!("robot '{name}': model must be morc.model.urdf \"file\" or morc.model.dh {{…}}"))),
    };
    let list: Table = t.get::<Option<Table>>("joints")?.ok_or_else(|| fail(format!("robot '{name}' needs joints = {{ {{ \"A1\", drive = {{…}}, limits = {{…}} }}, … }}")))?;
    let mut joints = Vec::new();
    for (i, j) in list.sequence_values::<Table>().enumerate() {
        let j = j.map_err(|_| fail(format!("robot '{name}': joint {} must be a table", i + 1)))?;
        let jname = j.get::<Option<String>>(1)?.or(j.get::<Option<String>>("name")?).unwrap_or_else(|| format!("joint {}", i + 1));
        let what = format!("robot '{name}', joint {jname}");
        if i >= model.nv() {
            return Err(fail(format!("{what}: the model has only {} joints", model.nv())));
        }
        let d: Table = j.get::<Option<Table>>("drive")?.unwrap_or(lua.create_table()?);
        let drive = JointDrive {
            slave: d.get::<Option<u32>>("slave")?.unwrap_or(i as u32 + 1),
            gear: number(&d, "gear", Some(1.0), &what).map_err(|e| fail(e.to_string()))?,
            counts: number(&d, "counts", Some(1.0), &what).map_err(|e| fail(e.to_string()))?,
            offset: number(&d, "offset", Some(0.0), &what).map_err(|e| fail(e.to_string()))?,
            direction: number(&d, "direction", Some(1.0), &what).map_err(|e| fail(e.to_string()))?,
        };
        let train = DriveTrain {
            armature: number(&d, "armature", Some(0.0), &what).map_err(|e| fail(e.to_string()))?,
            viscous_friction: number(&d, "viscous", Some(0.0), &what).map_err(|e| fail(e.to_string()))?,
            coulomb_friction: number(&d, "coulomb", Some(0.0), &what).map_err(|e| fail(e.to_string()))?,
        };
        if train.armature < 0.0 || train.viscous_friction < 0.0 || train.coulomb_friction < 0.0 {
            return Err(fail(format!("{what}: drive armature, viscous and coulomb must be ≥ 0")));
        }
        model.set_drive_train(i + 1, train).map_err(|e| fail(e.to_string()))?;
        let limits = limits_of(&j, &model.limits()[i], &what).map_err(|e| fail(e.to_string()))?;
        joints.push(RobotJoint { name: jname, drive, limits });
    }
    let (_, flange_placement) = flange(&model);
    if let Some(p) = t.get::<Option<Table>>("payload")? {
        let mass = number(&p, "mass", None, "payload").map_err(|e| fail(format!("robot '{name}': {e} (kg)")))?;
        let com = vec3_mm(&p, "com", "payload").map_err(|e| fail(e.to_string()))?;
        let rotational = inertia_matrix(&p, "payload").map_err(|e| fail(e.to_string()))?;
        let inertia = flange_placement.act_inertia(&Inertia::new(mass, com, rotational));
        robot::add_payload(&mut model, inertia.mass, inertia.com, inertia.rotational).map_err(|e| fail(format!("robot '{name}': {e}")))?;
    }
    if let Some(tool) = t.get::<Option<Table>>("tool")? {
        let xyz = vec3_mm(&tool, "xyz", "tool").map_err(|e| fail(e.to_string()))?;
        let rpy = match tool.get::<mlua::Value>("rpy")? {
            mlua::Value::Nil => vec![0.0; 3],
            v => numbers(v, 3, "tool.rpy (degrees)").map_err(|e| fail(e.to_string()))?,
        };
        let placement = Se3::new(rotation_from_rpy(rpy[0].to_radians(), rpy[1].to_radians(), rpy[2].to_radians()), xyz);
        robot::set_tool(&mut model, flange_placement.compose(&placement));
    }
    Robot::new(&name, model, joints, &origin).map(|r| LuaRobot(Arc::new(r))).map_err(mlua::Error::runtime)
}

/// Degrees (or radians with `units = "rad"`) → radians, for the robot's joints.
fn joint_vector(robot: &Robot, v: mlua::Value, what: &str) -> mlua::Result<Vec<f64>> {
    Ok(numbers(v, robot.dof(), &format!("{what} (degrees, one per joint)"))?.into_iter().map(f64::to_radians).collect())
}

/// Parameters of robot components given in degrees.
const DEGREE_PARAMS: &[&str] = &["target", "max_error", "tolerance"];

impl UserData for LuaRobot {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("name", |_, this| Ok(this.0.name.clone()));
        fields.add_field_method_get("dof", |_, this| Ok(this.0.dof()));
        fields.add_field_method_get("joints", |lua, this| {
            let list = lua.create_table()?;
            for j in &this.0.joints {
                let e = lua.create_table()?;
                e.set("name", j.name.as_str())?;
                e.set("slave", j.drive.slave)?;
                e.set("gear", j.drive.gear)?;
                e.set("counts", j.drive.counts)?;
                e.set("offset", j.drive.offset)?;
                e.set("direction", j.drive.direction)?;
                let l = lua.create_table()?;
                l.set("pos", lua.create_sequence_from([j.limits.lower.to_degrees(), j.limits.upper.to_degrees()])?)?;
                l.set("vel", j.limits.velocity.to_degrees())?;
                l.set("acc", j.limits.acceleration.to_degrees())?;
                l.set("torque", j.limits.torque)?;
                e.set("limits", l)?;
                list.push(e)?;
            }
            Ok(list)
        });
        fields.add_field_method_get("components", |lua, _| {
            let t = lua.create_table()?;
            for (k, doc) in components::KINDS {
                t.set(*k, *doc)?;
            }
            Ok(t)
        });
    }
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method("reachable", |_, this, q: mlua::Value| {
            let q = joint_vector(&this.0, q, "robot:reachable(q)")?;
            Ok(match this.0.outside_limits(&q) {
                None => (true, None),
                Some(i) => {
                    let j = &this.0.joints[i];
                    let msg = format!("joint {} at {:.3}° is outside [{:.1}°, {:.1}°]", j.name, q[i].to_degrees(), j.limits.lower.to_degrees(), j.limits.upper.to_degrees());
                    (false, Some(msg))
                }
            })
        });
        methods.add_method("fk", |lua, this, q: mlua::Value| {
            let q = joint_vector(&this.0, q, "robot:fk(q)")?;
            let p = this.0.fk(&q);
            let t = lua.create_table()?;
            t.set("pos", lua.create_sequence_from(p.translation.iter().map(|x| x * 1e3))?)?;
            t.set("rpy", lua.create_sequence_from(rpy_from_rotation(&p.rotation).iter().map(|x| x.to_degrees()))?)?;
            Ok(t)
        });
        // robot:with_payload { mass = kg, com = {x, y, z} mm, inertia = {…} }: a new robot with the
        // payload added at the flange (the model is rebuilt here, off the real-time path).
        methods.add_method("with_payload", |lua, this, p: Table| {
            let origin = caller(lua);
            let fail = |m: String| mlua::Error::runtime(format!("{origin}: robot '{}': {m}", this.0.name));
            let mut model = (*this.0.model).clone();
            let (_, flange_placement) = flange(&model);
            let mass = number(&p, "mass", None, "payload").map_err(|e| fail(format!("{e} (kg)")))?;
            let com = vec3_mm(&p, "com", "payload").map_err(|e| fail(e.to_string()))?;
            let rotational = inertia_matrix(&p, "payload").map_err(|e| fail(e.to_string()))?;
            let inertia = flange_placement.act_inertia(&Inertia::new(mass, com, rotational));
            robot::add_payload(&mut model, inertia.mass, inertia.com, inertia.rotational).map_err(fail)?;
            let name = format!("{} + {mass} kg", this.0.name);
            Robot::new(&name, model, this.0.joints.clone(), &origin.to_string()).map(|r| LuaRobot(Arc::new(r))).map_err(mlua::Error::runtime)
        });
        // robot:add(a, name, kind, params): a robot component ("ptp", "rnea", "monitor") in assembly a.
        methods.add_method("add", |lua, this, (a, name, kind, opts): (AnyUserData, String, String, Option<Table>)| {
            let origin = caller(lua);
            let fail = |m: String| mlua::Error::runtime(format!("{origin}: {m}"));
            let factory = components::factory(&this.0, &kind).ok_or_else(|| {
                let known: Vec<&str> = components::KINDS.iter().map(|k| k.0).collect();
                fail(format!("robot '{}' has no component kind '{kind}' (kinds: {})", this.0.name, known.join(", ")))
            })?;
            let mut every = 1u32;
            let mut params = Vec::new();
            let radians = opts.as_ref().map(|o| o.get::<Option<String>>("units")).transpose()?.flatten().as_deref() == Some("rad");
            if let Some(opts) = opts {
                for pair in opts.pairs::<String, mlua::Value>() {
                    let (k, v) = pair?;
                    match k.as_str() {
                        "units" => {}
                        "every" => every = u32::try_from(v.as_integer().unwrap_or(0)).ok().filter(|&e| e >= 1).ok_or_else(|| fail(format!("'every' of '{name}' must be a whole number ≥ 1")))?,
                        _ => {
                            let mut value = to_value(&v, &format!("{name}.{k}")).map_err(|e| fail(e.to_string()))?;
                            if !radians && DEGREE_PARAMS.contains(&k.as_str()) {
                                value = match value {
                                    Value::Vector(x) => Value::Vector(x.into_iter().map(f64::to_radians).collect()),
                                    Value::Real(x) => Value::Real(x.to_radians()),
                                    Value::Integer(x) => Value::Real((x as f64).to_radians()),
                                    other => other,
                                };
                            }
                            params.push((k, value));
                        }
                    }
                }
            }
            // Check parameters now, so errors point at this line.
            let mut probe = factory().map_err(fail)?;
            for (p, v) in &params {
                probe.set_parameter(p, v).map_err(|e| fail(format!("component '{name}': {e}")))?;
            }
            probe.configure().map_err(|e| fail(format!("component '{name}': {e}")))?;
            let mut assembly = a.borrow_mut::<LuaAssembly>().map_err(|_| fail("robot:add(a, name, kind, params): a must be an assembly".into()))?;
            if assembly.0.components.iter().any(|c| c.name == name) {
                return Err(fail(format!("a component named '{name}' is already in assembly '{}'", assembly.0.name)));
            }
            assembly.0.components.push(ComponentSpec { name, kind, factory, every, period: None, params, interpolate: Vec::new(), origin });
            drop(assembly);
            Ok(a)
        });
        methods.add_meta_method("__tostring", |_, this, ()| {
            let names: Vec<&str> = this.0.joints.iter().map(|j| j.name.as_str()).collect();
            Ok(format!("robot '{}' ({})", this.0.name, names.join(", ")))
        });
    }
}

/// `morc.start_engine { robot = r, q0 = {…}°, clock = "virtual"|"wall", period = s }`: restarts
/// `morc.engine` on a new base (the simulated robot when `robot` is given, else the default).
fn start_engine(lua: &Lua, opts: Table) -> mlua::Result<AnyUserData> {
    let origin = caller(lua);
    let fail = |m: String| mlua::Error::runtime(format!("{origin}: morc.start_engine: {m}"));
    let morc: Table = lua.globals().get("morc")?;
    let engine_ud: AnyUserData = morc.get("engine")?;
    let mut engine = engine_ud.borrow_mut::<LuaEngine>().map_err(|_| fail("morc.engine is busy or not an engine".into()))?;
    let mut config: EngineConfig = engine.0.config().clone();
    if let Some(c) = opts.get::<Option<String>>("clock")? {
        config.clock = c.parse::<ClockKind>().map_err(fail)?;
    }
    if let Some(p) = opts.get::<Option<f64>>("period")? {
        config.period = p;
    }
    let base: Box<dyn crate::kernel::base::Base> = match opts.get::<mlua::Value>("robot")? {
        mlua::Value::Nil => Box::new(crate::components::sim_axes::SimAxes::new(&[0.0; 6], config.period, 3.0)),
        mlua::Value::UserData(ud) if ud.is::<LuaRobot>() => {
            let robot = ud.borrow::<LuaRobot>()?.0.clone();
            let q0 = match opts.get::<mlua::Value>("q0")? {
                mlua::Value::Nil => robot.joints.iter().map(|j| 0f64.clamp(j.limits.lower, j.limits.upper)).collect(),
                v => joint_vector(&robot, v, "q0").map_err(|e| fail(e.to_string()))?,
            };
            if let Some(i) = robot.outside_limits(&q0) {
                return Err(fail(format!("q0 of joint {} is outside its limits", robot.joints[i].name)));
            }
            Box::new(SimulatedRobot::new(robot, &q0, config.period).map_err(fail)?)
        }
        _ => return Err(fail("robot must be a robot made with morc.robot{…}".into())),
    };
    if engine.0.is_running() {
        return Err(fail("an assembly is running".into()));
    }
    // The new engine replaces the old one in place (dropping it stops its Coordinator), so
    // every reference to morc.engine follows.
    let new = Engine::start(config, base).map_err(fail)?;
    let _old = std::mem::replace(&mut engine.0, new);
    drop(engine);
    Ok(engine_ud)
}

/// Registers `morc.model`, `morc.robot`, `morc.start_engine` and `morc.use_robot`.
pub fn install(lua: &Lua, morc: &Table) -> mlua::Result<()> {
    let model = lua.create_table()?;
    model.set("urdf", lua.create_function(model_urdf)?)?;
    model.set("dh", lua.create_function(model_dh)?)?;
    morc.set("model", model)?;
    morc.set("robot", lua.create_function(define_robot)?)?;
    morc.set("start_engine", lua.create_function(start_engine)?)?;
    morc.set(
        "use_robot",
        lua.create_function(|lua, (robot, opts): (AnyUserData, Option<Table>)| {
            let opts = match opts {
                Some(o) => o,
                None => lua.create_table()?,
            };
            opts.set("robot", robot)?;
            start_engine(lua, opts)
        })?,
    )?;
    Ok(())
}
