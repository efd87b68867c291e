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
use super::model::LuaModel;
use super::origin::caller;
use super::robot_params::{self, Units};
use crate::base::{open_base, BaseRequest};
use crate::error::{message_of, raise, typed, with_prefix, ErrorKind};
use crate::keys;
use morc_ecat::virtual_bus::DEFAULT_DRIVES;
use morc_kernel::ClockKind;
use morc_kernel::Component;
use morc_kernel::Value;
use morc_kernel::{ComponentSpec, Factory};
use morc_kernel::{Engine, EngineConfig};
use morc_model::{rotation_from_rpy, rpy_from_rotation};
use morc_model::{DhConvention, DhLink, DhTable, DriveTrain, FrameKind, Inertia, JointKind, JointLimits, Model, ModelBuilder, Se3};
use morc_motion::pose_from_vector;
use morc_motion::Kinematics;
use morc_robot::{components, CartesianLimits, JointDrive, Limits, Robot, RobotJoint, RobotKinematics};

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

pub(crate) fn number(t: &Table, key: &str, default: Option<f64>, what: &str) -> mlua::Result<f64> {
    match t.get::<mlua::Value>(key)? {
        mlua::Value::Nil => default.ok_or_else(|| mlua::Error::runtime(format!("{what}: '{key}' is missing"))),
        mlua::Value::Integer(i) => Ok(i as f64),
        mlua::Value::Number(x) => keys::finite(x, &format!("{what}: '{key}'")).map_err(mlua::Error::runtime),
        other => Err(mlua::Error::runtime(format!("{what}: '{key}' must be a number, got a {}", other.type_name()))),
    }
}

/// An optional number of `t` (NaN and infinities refused, naming `key`).
fn optional_number(t: &Table, key: &str, what: &str) -> mlua::Result<Option<f64>> {
    match t.get::<mlua::Value>(key)? {
        mlua::Value::Nil => Ok(None),
        _ => number(t, key, None, what).map(Some),
    }
}

/// The keys of a drive, of a joint's limits, and of a joint entry in `morc.robot { joints = … }`.
const DRIVE_KEYS: [&str; 12] = ["slave", "gear", "counts", "offset", "direction", "mode", "rated_torque", "armature", "viscous", "coulomb", "stiffness", "damping"];
const LIMIT_KEYS: [&str; 5] = ["pos", "vel", "acc", "torque", "unit"];
const JOINT_KEYS: [&str; 5] = ["name", "drive", "limits", "kind", "unit"];

pub(crate) fn numbers(v: mlua::Value, n: usize, what: &str) -> mlua::Result<Vec<f64>> {
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
    let fail = |m: String| raise(ErrorKind::Model, format!("{origin}: morc.model.dh: {m}"));
    keys::check(&t, "in morc.model.dh { … }", &["name", "convention"], t.raw_len()).map_err(fail)?;
    let convention = match t.get::<Option<String>>("convention")?.as_deref() {
        None | Some("standard") => DhConvention::Standard,
        Some("modified") => DhConvention::Modified,
        Some(other) => return Err(fail(format!("convention must be \"standard\" or \"modified\", got {other:?}"))),
    };
    let mut links = Vec::new();
    for (i, row) in t.clone().sequence_values::<Table>().enumerate() {
        let row = row.map_err(|_| fail(format!("row {} must be a table {{ a = mm, alpha = °, d = mm, offset = ° }}", i + 1)))?;
        let what = format!("row {}", i + 1);
        keys::check(&row, &format!("in {what}"), &["a", "alpha", "d", "offset", "flip", "mass", "com", "inertia"], 0).map_err(fail)?;
        let mut link = DhLink::revolute(
            number(&row, "a", Some(0.0), &what).map_err(|e| fail(message_of(&e)))? * 1e-3,
            number(&row, "alpha", Some(0.0), &what).map_err(|e| fail(message_of(&e)))?.to_radians(),
            number(&row, "d", Some(0.0), &what).map_err(|e| fail(message_of(&e)))? * 1e-3,
            number(&row, "offset", Some(0.0), &what).map_err(|e| fail(message_of(&e)))?.to_radians(),
        );
        link.flip = row.get::<Option<bool>>("flip")?.unwrap_or(false);
        if let Some(mass) = optional_number(&row, "mass", &what).map_err(|e| fail(message_of(&e)))? {
            let com = vec3_mm(&row, "com", &what).map_err(|e| fail(message_of(&e)))?;
            let inertia = inertia_matrix(&row, &what).map_err(|e| fail(message_of(&e)))?;
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
    let model = table.to_model().map_err(|e| fail(e.to_string()))?;
    model.check_mass_matrix().map_err(|e| fail(e.to_string()))?;
    Ok(LuaModel::new(Arc::new(model)))
}

/// `morc.model.build { name, { "J1", parent = "universe", type = "revolute"|"prismatic", axis = {x, y, z},
/// xyz = {mm}, rpy = {°}, mass = kg, com = {mm}, inertia = {…} }, …, frames = { { "tool", parent = "J3", xyz, rpy }, … } }`:
/// a model composed from primitives — joints placed in their parent joint's frame at q = 0,
/// each carrying the body given with it (centre of mass and inertia in the joint frame).
fn model_build(lua: &Lua, t: Table) -> mlua::Result<LuaModel> {
    let origin = caller(lua);
    let fail = |m: String| raise(ErrorKind::Model, format!("{origin}: morc.model.build: {m}"));
    keys::check(&t, "in morc.model.build { … }", &["name", "frames"], t.raw_len()).map_err(fail)?;
    let name = t.get::<Option<String>>("name")?.unwrap_or_else(|| "model".into());
    let mut builder = ModelBuilder::new(name.clone());
    let placement = |row: &Table, what: &str| -> mlua::Result<Se3> {
        let xyz = vec3_mm(row, "xyz", what)?;
        let rpy = match row.get::<mlua::Value>("rpy")? {
            mlua::Value::Nil => vec![0.0; 3],
            v => numbers(v, 3, &format!("{what}.rpy (degrees)"))?,
        };
        Ok(Se3::new(rotation_from_rpy(rpy[0].to_radians(), rpy[1].to_radians(), rpy[2].to_radians()), xyz))
    };
    let parent_of = |builder: &ModelBuilder, row: &Table, what: &str| -> mlua::Result<usize> {
        match row.get::<Option<String>>("parent")? {
            None => Ok(builder.njoints() - 1),
            Some(p) if p == "universe" => Ok(0),
            Some(p) => builder.joint_index(&p).ok_or_else(|| mlua::Error::runtime(format!("{what}: parent '{p}' is not a joint defined before it"))),
        }
    };
    for (i, row) in t.clone().sequence_values::<Table>().enumerate() {
        let row = row.map_err(|_| fail(format!("joint {} must be a table {{ \"name\", parent = …, axis = {{…}}, xyz = {{…}} }}", i + 1)))?;
        let jname: String = row.get::<Option<String>>(1)?.ok_or_else(|| fail(format!("joint {} needs a name first: {{ \"J1\", … }}", i + 1)))?;
        let what = format!("joint {jname}");
        keys::check(&row, &format!("in {what}"), &["parent", "type", "axis", "xyz", "rpy", "mass", "com", "inertia"], 1).map_err(fail)?;
        let kind = match row.get::<Option<String>>("type")?.as_deref() {
            None | Some("revolute") => JointKind::Revolute,
            Some("prismatic") => JointKind::Prismatic,
            Some(other) => return Err(fail(format!("{what}: type {other:?}: joints are \"revolute\" (degrees) or \"prismatic\" (mm)"))),
        };
        let parent = parent_of(&builder, &row, &what).map_err(|e| fail(message_of(&e)))?;
        let axis = match row.get::<mlua::Value>("axis")? {
            mlua::Value::Nil => Vector3::z(),
            v => {
                let a = numbers(v, 3, &format!("{what}.axis")).map_err(|e| fail(message_of(&e)))?;
                Vector3::new(a[0], a[1], a[2])
            }
        };
        let at = placement(&row, &what).map_err(|e| fail(message_of(&e)))?;
        let index = builder.add_joint(jname, parent, at, kind, axis, JointLimits::UNBOUNDED).map_err(|e| fail(e.to_string()))?;
        if let Some(mass) = optional_number(&row, "mass", &what).map_err(|e| fail(message_of(&e)))? {
            let com = vec3_mm(&row, "com", &what).map_err(|e| fail(message_of(&e)))?;
            let inertia = inertia_matrix(&row, &what).map_err(|e| fail(message_of(&e)))?;
            builder.append_body_inertia(index, &Inertia::new(mass, com, inertia)).map_err(|e| fail(e.to_string()))?;
        }
    }
    if builder.njoints() < 2 {
        return Err(fail("a model needs at least one joint".into()));
    }
    if let Some(frames) = t.get::<Option<Table>>("frames")? {
        for f in frames.sequence_values::<Table>() {
            let f = f?;
            let fname: String = f.get::<Option<String>>(1)?.ok_or_else(|| fail("a frame needs a name first: { \"tool\", parent = \"J3\", xyz = {…} }".into()))?;
            let what = format!("frame {fname}");
            keys::check(&f, &format!("in {what}"), &["parent", "xyz", "rpy"], 1).map_err(fail)?;
            let parent = parent_of(&builder, &f, &what).map_err(|e| fail(message_of(&e)))?;
            let at = placement(&f, &what).map_err(|e| fail(message_of(&e)))?;
            builder.add_frame(fname, parent, at, FrameKind::Operational).map_err(|e| fail(e.to_string()))?;
        }
    }
    let model = builder.build();
    model.check_mass_matrix().map_err(|e| fail(e.to_string()))?;
    Ok(LuaModel::new(Arc::new(model)))
}

/// `morc.model.urdf "file"` (and `morc.model "file"`).
pub(crate) fn model_urdf(lua: &Lua, file: String) -> mlua::Result<LuaModel> {
    let origin = caller(lua);
    let path = resolve(lua, &file);
    crate::library::check_read(lua, &path, "morc.model.urdf")?;
    let fail = |e: String| raise(ErrorKind::Model, format!("{origin}: morc.model.urdf: {e}"));
    let model = morc_model::load_urdf(&path).map_err(|e| fail(e.to_string()))?;
    // The file's parser takes kinematics-only URDFs; a robot also needs its dynamics.
    model.check_mass_matrix().map_err(|e| fail(format!("{}: {e}", path.display())))?;
    Ok(LuaModel::new(Arc::new(model)))
}

/// The frame a payload and tool attach to: the flange ("tool0"/"flange" of the model, else the
/// "tool" a DH table ends in, before any tool is set), else the last joint.
fn flange(model: &Model) -> (usize, Se3) {
    let last = model.njoints() - 1;
    ["tool0", "flange", "tool"]
        .iter()
        .filter_map(|n| model.frame_index(n))
        .map(|f| &model.frames()[f])
        .find(|f| f.parent_joint == last)
        .map_or((last, Se3::identity()), |f| (last, f.placement))
}

/// A joint's limits from its Lua table (degrees, or mm for a `prismatic` joint), else its model's.
fn limits_of(j: &Table, model_limits: &JointLimits, prismatic: bool, what: &str) -> mlua::Result<Limits> {
    let l: Table = j.get::<Option<Table>>("limits")?.unwrap_or(j.clone());
    let finite = |x: f64| if x.is_finite() { Some(x) } else { None };
    let (si, unit, force) = if prismatic { (1e-3, "mm", "N") } else { (1f64.to_radians(), "°", "N·m") };
    let pos = match l.get::<mlua::Value>("pos")? {
        mlua::Value::Nil => match (finite(model_limits.lower), finite(model_limits.upper)) {
            (Some(lo), Some(hi)) => (lo, hi),
            _ => return Err(mlua::Error::runtime(format!("{what}: needs limits.pos = {{lower, upper}} ({unit}); the model has none"))),
        },
        v => {
            let x = numbers(v, 2, &format!("{what}: limits.pos {{lower, upper}} ({unit})"))?;
            (x[0] * si, x[1] * si)
        }
    };
    let velocity = match optional_number(&l, "vel", what)? {
        Some(v) => v * si,
        None => finite(model_limits.velocity).ok_or_else(|| mlua::Error::runtime(format!("{what}: needs limits.vel ({unit}/s); the model has none")))?,
    };
    let acceleration = match optional_number(&l, "acc", what)? {
        Some(a) => a * si,
        None => return Err(mlua::Error::runtime(format!("{what}: needs limits.acc ({unit}/s²)"))),
    };
    let torque = match optional_number(&l, "torque", what)? {
        Some(t) => t,
        None => finite(model_limits.effort).ok_or_else(|| mlua::Error::runtime(format!("{what}: needs limits.torque ({force}); the model has none")))?,
    };
    Ok(Limits { lower: pos.0, upper: pos.1, velocity, acceleration, torque })
}

/// A joints entry against the model's joint `i` (0-based): its name (the model's at that
/// position; a DH table's generated "jointN" takes any), its `kind` and `unit` when given.
fn check_joint_against_model(model: &Model, i: usize, given: Option<&str>, j: &Table, limits: Option<&Table>, what: &str) -> Result<(), String> {
    let names = model.joint_names();
    let kind_of = |k: usize| if model.joint_kinds()[k] == JointKind::Prismatic { ("prismatic", "mm") } else { ("revolute", "deg") };
    let here = &names[i + 1];
    let (kind, unit) = kind_of(i + 1);
    if let Some(g) = given {
        let generated = *here == format!("joint{}", i + 1);
        if g != here && !generated {
            return Err(match names.iter().skip(1).position(|n| n == g) {
                Some(k) => format!(
                    "{what}: entry {} is '{g}', but the model's joint {} is '{here}' ({kind}, {unit}) and '{g}' is its joint {} ({}): list the joints in the model's order",
                    i + 1,
                    i + 1,
                    k + 1,
                    kind_of(k + 1).0
                ),
                None => {
                    let near = morc_kernel::names::nearest(g, names.iter().skip(1).map(String::as_str)).map_or(String::new(), |n| format!("; did you mean '{n}'?"));
                    format!("{what}: the model has no joint '{g}' (its joint {} is '{here}'){near}: name the joints as the model does, in its order", i + 1)
                }
            });
        }
    }
    if let Some(k) = j.get::<Option<String>>("kind").map_err(|e| e.to_string())? {
        if k != kind {
            return Err(format!("{what}: kind = \"{k}\", but the model's joint {} ('{here}') is {kind}: fix the kind, or the joint's place in joints", i + 1));
        }
    }
    for t in std::iter::once(j).chain(limits) {
        if let Some(u) = t.get::<Option<String>>("unit").map_err(|e| e.to_string())? {
            let same = u == unit || (unit == "deg" && u == "°");
            if !same {
                return Err(format!("{what}: unit = \"{u}\", but the model's joint {} ('{here}') is {kind}: its limits are in {unit}", i + 1));
            }
        }
    }
    Ok(())
}

/// `morc.robot { name, model, joints = { { "A1", drive = {…}, limits = {…} }, … }, tool = {…}, payload = {…} }`.
fn define_robot(lua: &Lua, t: Table) -> mlua::Result<LuaRobot> {
    let origin = caller(lua).to_string();
    let fail = |m: String| raise(ErrorKind::Robot, format!("{origin}: {m}"));
    let name: String = t.get::<Option<String>>("name")?.ok_or_else(|| fail("morc.robot needs a name".into()))?;
    keys::check(&t, &format!("in robot '{name}'"), &["name", "model", "joints", "home", "cartesian", "tool", "payload", "groups", "ft", "bus"], 0).map_err(fail)?;
    let mut model = match t.get::<mlua::Value>("model")? {
        mlua::Value::UserData(ud) if ud.is::<LuaModel>() => (*ud.borrow::<LuaModel>()?.model).clone(),
        _ => return Err(fail(format!("robot '{name}': model must be morc.model.urdf \"file\" or morc.model.dh {{…}}"))),
    };
    if model.has_mimic_joints() {
        let mimics: Vec<&str> = (1..model.njoints()).filter(|&j| model.mimic(j).is_some()).map(|j| model.joint_names()[j].as_str()).collect();
        return Err(fail(format!(
            "robot '{name}': the model has mimic joints ({}), and a robot's joints are its drives one to one: remove the <mimic> joints from the robot's URDF (morc.model still loads the full model for dynamics)",
            mimics.join(", ")
        )));
    }
    let list: Table = t.get::<Option<Table>>("joints")?.ok_or_else(|| fail(format!("robot '{name}' needs joints = {{ {{ \"A1\", drive = {{…}}, limits = {{…}} }}, … }}")))?;
    let mut joints = Vec::new();
    for (i, j) in list.sequence_values::<Table>().enumerate() {
        let j = j.map_err(|_| fail(format!("robot '{name}': joint {} must be a table", i + 1)))?;
        let given = j.get::<Option<String>>(1)?.or(j.get::<Option<String>>("name")?);
        let jname = given.clone().unwrap_or_else(|| format!("joint {}", i + 1));
        let what = format!("robot '{name}', joint {jname}");
        if i >= model.nv() {
            return Err(fail(format!("{what}: the model has only {} joints", model.nv())));
        }
        // Drive and limit settings sit in drive = {…} and limits = {…}, or beside the name
        // (the form robot.joints reads back), not both.
        let (drive_table, limits_table) = (j.get::<Option<Table>>("drive")?, j.get::<Option<Table>>("limits")?);
        let mut known: Vec<&str> = JOINT_KEYS.to_vec();
        known.extend(if drive_table.is_none() { &DRIVE_KEYS[..] } else { &[] });
        known.extend(if limits_table.is_none() { &LIMIT_KEYS[..4] } else { &[] });
        keys::check(&j, &format!("in joint {jname} of robot '{name}'"), &known, 1).map_err(fail)?;
        check_joint_against_model(&model, i, given.as_deref(), &j, limits_table.as_ref(), &what).map_err(fail)?;
        if let Some(d) = &drive_table {
            keys::check(d, &format!("in the drive of joint {jname}"), &DRIVE_KEYS, 0).map_err(fail)?;
        }
        if let Some(l) = &limits_table {
            keys::check(l, &format!("in the limits of joint {jname}"), &LIMIT_KEYS, 0).map_err(fail)?;
        }
        let d: Table = drive_table.unwrap_or(j.clone());
        let drive = JointDrive {
            slave: d.get::<Option<u32>>("slave")?.unwrap_or(i as u32 + 1),
            gear: number(&d, "gear", Some(1.0), &what).map_err(|e| fail(message_of(&e)))?,
            counts: number(&d, "counts", Some(1.0), &what).map_err(|e| fail(message_of(&e)))?,
            offset: number(&d, "offset", Some(0.0), &what).map_err(|e| fail(message_of(&e)))?,
            direction: number(&d, "direction", Some(1.0), &what).map_err(|e| fail(message_of(&e)))?,
            mode: match d.get::<Option<String>>("mode").map_err(|_| fail(format!("{what}: drive mode must be \"csp\", \"csv\" or \"cst\"")))? {
                Some(m) => morc_robot::CommandMode::parse(&m).map_err(|e| fail(format!("{what}: {e}")))?,
                None => morc_robot::CommandMode::Position,
            },
            rated_torque: match optional_number(&d, "rated_torque", &what).map_err(|e| fail(message_of(&e)))? {
                Some(t) if t <= 0.0 => return Err(fail(format!("{what}: the drive's rated_torque must be > 0 N·m (the motor's rated torque), got {t}"))),
                t => t,
            },
        };
        let train = DriveTrain {
            armature: number(&d, "armature", Some(0.0), &what).map_err(|e| fail(message_of(&e)))?,
            viscous_friction: number(&d, "viscous", Some(0.0), &what).map_err(|e| fail(message_of(&e)))?,
            coulomb_friction: number(&d, "coulomb", Some(0.0), &what).map_err(|e| fail(message_of(&e)))?,
            stiffness: number(&d, "stiffness", Some(0.0), &what).map_err(|e| fail(message_of(&e)))?,
            damping: number(&d, "damping", Some(0.0), &what).map_err(|e| fail(message_of(&e)))?,
        };
        if [train.armature, train.viscous_friction, train.coulomb_friction, train.stiffness, train.damping].iter().any(|x| !(x.is_finite() && *x >= 0.0)) {
            return Err(fail(format!("{what}: drive armature, viscous, coulomb, stiffness and damping must be finite and ≥ 0")));
        }
        if train.stiffness > 0.0 && train.armature <= 0.0 {
            return Err(fail(format!("{what}: an elastic drive (stiffness) needs the motor's inertia: armature > 0 (kg·m² seen at the joint)")));
        }
        model.set_drive_train(i + 1, train).map_err(|e| fail(e.to_string()))?;
        let prismatic = model.joint_kinds()[i + 1] == JointKind::Prismatic;
        let limits = limits_of(&j, &model.limits()[i], prismatic, &what).map_err(|e| fail(message_of(&e)))?;
        joints.push(RobotJoint { name: jname, drive, limits });
    }
    let (_, flange_placement) = flange(&model);
    if let Some(tool) = t.get::<Option<Table>>("tool")? {
        let placement = tool_placement(&tool).map_err(|e| fail(message_of(&e)))?;
        morc_robot::set_tool(&mut model, flange_placement.compose(&placement));
    }
    let mut robot = Robot::new(&name, model, joints, &origin).map_err(typed)?;
    if let Some(g) = t.get::<Option<Table>>("groups")? {
        for (group, v) in g.clone().pairs::<mlua::Value, mlua::Value>().flatten() {
            if let mlua::Value::Table(v) = v {
                let group = group.to_string().unwrap_or_default();
                keys::check(&v, &format!("in group '{group}' of robot '{name}'"), &["joints", "tool"], 0).map_err(fail)?;
            }
        }
        robot.groups = super::robot_groups::parse_groups(&robot, &g).map_err(|e| fail(message_of(&e)))?;
    }
    if let Some(ft) = t.get::<Option<Table>>("ft")? {
        let sim_keys = ["load", "bias", "noise"];
        let sim = ft.get::<Option<Table>>("sim")?;
        let mut known = vec!["frame", "sim"];
        known.extend(if sim.is_none() { &sim_keys[..] } else { &[] });
        keys::check(&ft, &format!("in the ft sensor of robot '{name}'"), &known, 0).map_err(fail)?;
        if let Some(sim) = &sim {
            keys::check(sim, &format!("in the simulated ft sensor of robot '{name}'"), &sim_keys, 0).map_err(fail)?;
        }
        if let Some(load) = sim.as_ref().unwrap_or(&ft).get::<Option<Table>>("load")? {
            keys::check(&load, &format!("in the ft sensor's load of robot '{name}'"), &["mass", "com"], 0).map_err(fail)?;
        }
        robot.ft = Some(super::robot_groups::parse_ft(&robot, &ft).map_err(|e| fail(message_of(&e)))?);
    }
    if let Some(bus) = t.get::<Option<Table>>("bus")? {
        robot.bus = bus_devices(&robot, &bus).map_err(fail)?;
    }
    if let Some(p) = t.get::<Option<Table>>("payload")? {
        let (loaded, mass) = with_payload_table(&robot.unloaded, &p).map_err(|e| fail(format!("robot '{name}': {e}")))?;
        robot = robot.loaded(loaded, Some(mass));
    }
    if let Some(home) = t.get::<Option<mlua::Value>>("home")? {
        let q = joint_vector(&robot, home, &format!("robot '{name}': home")).map_err(|e| fail(message_of(&e)))?;
        if let Some(i) = robot.outside_limits(&q) {
            return Err(fail(format!("robot '{name}': home of joint {} is outside its limits", robot.joints[i].name)));
        }
        robot.home = q;
    }
    if let Some(c) = t.get::<Option<Table>>("cartesian")? {
        let what = format!("robot '{name}': cartesian");
        keys::check(&c, &format!("in the cartesian limits of robot '{name}'"), &["vel", "acc", "rot_vel", "rot_acc"], 0).map_err(fail)?;
        let limit = |key: &str, default: f64, factor: f64| -> mlua::Result<f64> {
            let x = number(&c, key, Some(default / factor), &what)? * factor;
            if x > 0.0 && x.is_finite() {
                Ok(x)
            } else {
                Err(fail(format!("{what}.{key} must be > 0")))
            }
        };
        let (deg, mm) = (1f64.to_radians(), 1e-3);
        robot.cartesian = CartesianLimits {
            velocity: limit("vel", robot.cartesian.velocity, mm)?,
            acceleration: limit("acc", robot.cartesian.acceleration, mm)?,
            angular_velocity: limit("rot_vel", robot.cartesian.angular_velocity, deg)?,
            angular_acceleration: limit("rot_acc", robot.cartesian.angular_acceleration, deg)?,
        };
    }
    Ok(LuaRobot(Arc::new(robot)))
}

/// `unloaded` with the payload `{ mass = kg, com = {mm}, inertia = {…} }` (in the flange frame) added.
fn with_payload_table(unloaded: &Model, p: &Table) -> mlua::Result<(Model, f64)> {
    keys::check(p, "in the payload", &["mass", "com", "inertia"], 0).map_err(|e| raise(ErrorKind::Robot, e))?;
    let mut model = unloaded.clone();
    let inertia = flange_body(&model, p, "payload")?;
    morc_robot::add_payload(&mut model, inertia.mass, inertia.com, inertia.rotational).map_err(typed)?;
    Ok((model, inertia.mass))
}

/// `{ mass = kg, com = {mm}, inertia = {…} }` (com and inertia in the flange's frame) as an
/// inertia in the last joint's frame; `what` names it in errors.
fn flange_body(model: &Model, p: &Table, what: &str) -> mlua::Result<Inertia> {
    let (_, flange_placement) = flange(model);
    let mass = number(p, "mass", None, what).map_err(|e| raise(ErrorKind::Robot, format!("{e} (kg)")))?;
    let com = vec3_mm(p, "com", what)?;
    let rotational = inertia_matrix(p, what)?;
    Ok(flange_placement.act_inertia(&Inertia::new(mass, com, rotational)))
}

/// `{ xyz = {mm}, rpy = {°} }` → the tool's placement at the flange.
fn tool_placement(tool: &Table) -> mlua::Result<Se3> {
    keys::check(tool, "in the tool", &["xyz", "rpy"], 0).map_err(mlua::Error::runtime)?;
    tool_frame_of(tool)
}

/// The placement at the flange of a table's `xyz` (mm) and `rpy` (°), its keys checked by the caller.
fn tool_frame_of(tool: &Table) -> mlua::Result<Se3> {
    let xyz = vec3_mm(tool, "xyz", "tool")?;
    let rpy = match tool.get::<mlua::Value>("rpy")? {
        mlua::Value::Nil => vec![0.0; 3],
        v => numbers(v, 3, "tool.rpy (degrees)")?,
    };
    Ok(Se3::new(rotation_from_rpy(rpy[0].to_radians(), rpy[1].to_radians(), rpy[2].to_radians()), xyz))
}

/// `robot` with its tool at `placement` from the flange (a new robot: its own live model).
fn tooled_robot(robot: &Robot, placement: &Se3, origin: &str) -> mlua::Result<Robot> {
    let tooled = |model: &Model| {
        let mut model = model.clone();
        let (_, flange_placement) = flange(&model);
        morc_robot::set_tool(&mut model, flange_placement.compose(placement));
        model
    };
    let mut r = Robot::new(&robot.name, tooled(&robot.unloaded), robot.joints.clone(), origin).map_err(typed)?;
    (r.cartesian, r.home) = (robot.cartesian, robot.home.clone());
    (r.groups, r.ft, r.hand) = (robot.groups.clone(), robot.ft.clone(), robot.hand.clone());
    Ok(r.loaded(tooled(&robot.model), robot.payload))
}

/// Lua units unless `units = "rad"` (then SI: m, rad).
fn units_of(opts: Option<&Table>) -> mlua::Result<Units> {
    Ok(match opts.map(|o| o.get::<Option<String>>("units")).transpose()?.flatten().as_deref() {
        Some("rad") | Some("si") => Units::SI,
        None | Some("deg") => Units::LUA,
        Some(other) => return Err(mlua::Error::runtime(format!("units must be \"deg\" (degrees, mm) or \"rad\" (radians, m), got {other:?}"))),
    })
}

/// A robot component kind for `a:add(name, robot:component "ptp", params)`.
#[derive(Clone)]
pub struct RobotKind {
    /// The robot whose component it is.
    pub robot: Arc<Robot>,
    /// The kind's name among the robot's kinds ("ptp", "rnea", "monitor", …).
    pub kind: String,
}

impl UserData for RobotKind {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method("__tostring", |_, this, ()| Ok(format!("{} of robot '{}'", this.kind, this.robot.name)));
    }
}

/// The factory of the robot's kind `kind`, or an error naming the robot and its kinds.
fn robot_kind(robot: &Arc<Robot>, kind: &str) -> Result<Factory, String> {
    let kinds = components::kinds(robot);
    kinds.factory(kind).map_err(|_| {
        let known: Vec<&str> = kinds.kinds().map(|k| k.name.as_str()).collect();
        format!("robot '{}' has no component kind '{kind}' (kinds: {})", robot.name, known.join(", "))
    })
}

/// Adds robot component `kind` named `name` to assembly `a`, its parameters converted from
/// Lua's units and checked now so that errors point at the calling line.
pub fn add_component(lua: &Lua, robot: &Arc<Robot>, a: AnyUserData, name: String, kind: &str, opts: Option<Table>) -> mlua::Result<AnyUserData> {
    let origin = caller(lua);
    let fail = |m: String| raise(ErrorKind::Robot, format!("{origin}: {m}"));
    let factory = robot_kind(robot, kind).map_err(fail)?;
    let mut probe = factory().map_err(fail)?;
    let mut every = 1u32;
    let mut params = Vec::new();
    let mut interpolate = Vec::new();
    let units = units_of(opts.as_ref()).map_err(|e| fail(message_of(&e)))?;
    if let Some(opts) = opts {
        for pair in opts.pairs::<String, mlua::Value>() {
            let (k, v) = pair?;
            match k.as_str() {
                "units" => {}
                "interpolate" => interpolate = super::assembly::input_names(&v, &format!("{origin}: 'interpolate' of '{name}'"))?,
                "every" => every = u32::try_from(v.as_integer().unwrap_or(0)).ok().filter(|&e| e >= 1).ok_or_else(|| fail(format!("'every' of '{name}' must be a whole number ≥ 1")))?,
                _ => {
                    crate::object_params::refuse(&v, &k, &format!("component '{name}'")).map_err(&fail)?;
                    // An unknown name is set_parameter's to say (naming the known ones).
                    let declared = probe.info().params.iter().find(|p| p.name == k).cloned().unwrap_or_else(|| morc_kernel::ParamInfo::new(&k, Value::Real(0.0)));
                    let value = robot_params::convert(robot, &declared, &v, units, &format!("{name}.{k}")).map_err(|e| fail(message_of(&e)))?;
                    params.push((k, value));
                }
            }
        }
    }
    for (p, v) in &params {
        probe.set_parameter(p, v).map_err(|e| fail(format!("component '{name}': {e}")))?;
    }
    probe.configure().map_err(|e| fail(format!("component '{name}': {e}")))?;
    let mut assembly = a.borrow_mut::<LuaAssembly>().map_err(|_| fail("robot:add(a, name, kind, params): a must be an assembly".into()))?;
    if assembly.0.components.iter().any(|c| c.name == name) {
        return Err(fail(format!("a component named '{name}' is already in assembly '{}'", assembly.0.name)));
    }
    assembly.0.components.push(ComponentSpec { name, kind: kind.to_string(), factory, every, period: None, params, interpolate, origin });
    drop(assembly);
    Ok(a)
}

/// `robot:plan(start, moves, opts)`: plans moves from `start` as the trajectory component
/// would, without moving, and reports what a precondition needs.
fn plan(lua: &Lua, robot: &Arc<Robot>, start: mlua::Value, list: Table, opts: Option<Table>) -> mlua::Result<Table> {
    let units = units_of(opts.as_ref())?;
    let start = robot_params::joints(robot, &start, units, "robot:plan start")?;
    let mut moves = Vec::new();
    for (i, m) in list.sequence_values::<Table>().enumerate() {
        moves.push(robot_params::parse_move(robot, &m?, units, &format!("move {}", i + 1))?);
    }
    let out = lua.create_table()?;
    let mut trajectory = components::MotionTrajectory::new(robot.clone(), "path");
    let mut check = || -> Result<(), String> {
        trajectory.set_parameter("moves", &Value::Vector(components::trajectory::encode_moves(&moves, robot.dof())))?;
        if let Some(o) = &opts {
            for key in ["vel_scale", "acc_scale", "ramp"] {
                if let Ok(Some(x)) = o.get::<Option<f64>>(key) {
                    trajectory.set_parameter(key, &Value::Real(x))?;
                }
            }
        }
        trajectory.configure()
    };
    if let Err(e) = check() {
        out.set("ok", false)?;
        out.set("reason", e)?;
        return Ok(out);
    }
    match trajectory.survey(&start, 200) {
        Ok(s) => {
            out.set("ok", true)?;
            out.set("duration", s.duration)?;
            out.set("singularity", s.singularity)?;
            out.set("end", lua.create_sequence_from(s.end.iter().enumerate().map(|(i, x)| x / units.joint(robot, i)))?)?;
        }
        Err(e) => {
            // Said of the one move the caller gave, the sequence's own prefix is noise.
            let mut reason = e.strip_prefix("path: ").unwrap_or(&e);
            if moves.len() == 1 {
                reason = reason.split_once("): ").filter(|(head, _)| head.starts_with("move 1 (")).map_or(reason, |(_, rest)| rest);
            }
            out.set("ok", false)?;
            out.set("reason", reason)?;
        }
    }
    Ok(out)
}

/// Degrees (mm for prismatic joints) → SI, for the robot's joints.
fn joint_vector(robot: &Robot, v: mlua::Value, what: &str) -> mlua::Result<Vec<f64>> {
    let x = numbers(v, robot.dof(), &format!("{what} (degrees, mm for prismatic joints; one per joint)"))?;
    Ok(x.into_iter().enumerate().map(|(i, a)| a * Units::LUA.joint(robot, i)).collect())
}

/// SI → Lua's numbers (degrees, mm for prismatic joints), for the robot's joints.
fn lua_joints(robot: &Robot, q: &[f64]) -> Vec<f64> {
    q.iter().enumerate().map(|(i, x)| x / Units::LUA.joint(robot, i)).collect()
}

impl UserData for LuaRobot {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("name", |_, this| Ok(this.0.name.clone()));
        fields.add_field_method_get("dof", |_, this| Ok(this.0.dof()));
        fields.add_field_method_get("joints", |lua, this| {
            let list = lua.create_table()?;
            for (i, j) in this.0.joints.iter().enumerate() {
                let e = lua.create_table()?;
                let to_lua = 1.0 / Units::LUA.joint(&this.0, i);
                e.set("name", j.name.as_str())?;
                e.set("kind", if this.0.is_prismatic(i) { "prismatic" } else { "revolute" })?;
                e.set("unit", if this.0.is_prismatic(i) { "mm" } else { "deg" })?;
                e.set("slave", j.drive.slave)?;
                e.set("gear", j.drive.gear)?;
                e.set("counts", j.drive.counts)?;
                e.set("offset", j.drive.offset)?;
                e.set("direction", j.drive.direction)?;
                e.set("mode", j.drive.mode.name())?;
                if let Some(t) = j.drive.rated_torque {
                    e.set("rated_torque", t)?;
                }
                if let Some(train) = this.0.model.drive_trains().get(i) {
                    e.set("armature", train.armature)?;
                    e.set("viscous", train.viscous_friction)?;
                    e.set("coulomb", train.coulomb_friction)?;
                    e.set("stiffness", train.stiffness)?;
                    e.set("damping", train.damping)?;
                }
                let l = lua.create_table()?;
                l.set("pos", lua.create_sequence_from([j.limits.lower * to_lua, j.limits.upper * to_lua])?)?;
                l.set("vel", j.limits.velocity * to_lua)?;
                l.set("acc", j.limits.acceleration * to_lua)?;
                l.set("torque", j.limits.torque)?;
                e.set("limits", l)?;
                list.push(e)?;
            }
            Ok(list)
        });
        fields.add_field_method_get("home", |lua, this| lua.create_sequence_from(lua_joints(&this.0, &this.0.home)));
        // robot.model: the robot's model (SI units, tool and payload included) with a workspace, the same each time.
        fields.add_field_function_get("model", |lua, ud| {
            let model = ud.borrow::<LuaRobot>()?.0.model.clone();
            super::model::robot_model(lua, &ud, &model)
        });
        fields.add_field_method_get("payload", |_, this| Ok(this.0.payload));
        fields.add_field_method_get("cartesian", |lua, this| {
            let c = this.0.cartesian;
            let t = lua.create_table()?;
            t.set("vel", c.velocity * 1e3)?;
            t.set("acc", c.acceleration * 1e3)?;
            t.set("rot_vel", c.angular_velocity.to_degrees())?;
            t.set("rot_acc", c.angular_acceleration.to_degrees())?;
            Ok(t)
        });
        fields.add_field_method_get("groups", |lua, this| {
            let t = lua.create_table()?;
            for g in &this.0.groups {
                let names: Vec<&str> = g.joints.iter().map(|&i| this.0.joints[i].name.as_str()).collect();
                let group = lua.create_table()?;
                group.set("joints", lua.create_sequence_from(g.joints.iter().map(|i| i + 1))?)?;
                group.set("names", names)?;
                group.set("tool", this.0.model.frames()[g.tool].name.as_str())?;
                t.set(g.name.as_str(), group)?;
            }
            Ok(t)
        });
        fields.add_field_method_get("origin", |_, this| Ok(this.0.origin.clone()));
        fields.add_field_method_get("ft", |lua, this| {
            this.0
                .ft
                .as_ref()
                .map(|ft| -> mlua::Result<Table> {
                    let t = lua.create_table()?;
                    t.set("frame", this.0.model.frames()[ft.frame].name.as_str())?;
                    let joints = super::robot_groups::joints_moving(&this.0, ft.frame);
                    t.set("names", joints.iter().map(|&i| this.0.joints[i].name.as_str()).collect::<Vec<_>>())?;
                    t.set("joints", lua.create_sequence_from(joints.iter().map(|i| i + 1))?)?;
                    Ok(t)
                })
                .transpose()
        });
        fields.add_field_method_get("components", |lua, this| {
            let t = lua.create_table()?;
            for k in components::kinds(&this.0).kinds() {
                t.set(k.name.as_str(), k.doc.as_str())?;
            }
            Ok(t)
        });
    }
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        // A group by its name (r.left): a Lua object for the group's commands, and r:together
        // for several groups' motions at once (stdlib/motion/group.lua).
        methods.add_meta_function(mlua::MetaMethod::Index, |lua, (ud, key): (AnyUserData, mlua::Value)| {
            let name = match &key {
                mlua::Value::String(s) => s.to_str()?.to_string(),
                _ => return Ok(mlua::Value::Nil),
            };
            let is_group = ud.borrow::<LuaRobot>()?.0.groups.iter().any(|g| g.name == name);
            if !is_group && name != "together" {
                return Ok(mlua::Value::Nil);
            }
            let module: Table = lua.globals().get::<mlua::Function>("require")?.call("stdlib.motion.group")?;
            if !is_group {
                // r:together { left = moves, right = moves }: the groups' motions at the same time.
                return module.get("together");
            }
            module.get::<mlua::Function>("of")?.call((ud, name))
        });
        methods.add_method("sim_hand", |lua, this, t: Table| super::robot_groups::sim_hand(lua, &this.0, t));
        methods.add_method("sim_hand_duration", |_, this, ()| Ok(this.0.hand.current().duration()));
        methods.add_method("reachable", |_, this, q: mlua::Value| {
            let q = joint_vector(&this.0, q, "robot:reachable(q)")?;
            Ok(match this.0.outside_limits(&q) {
                None => (true, None),
                Some(i) => {
                    let j = &this.0.joints[i];
                    let r = &this.0;
                    let msg = format!("joint {} at {} is outside [{}, {}]", j.name, r.show(i, q[i], 3), r.show(i, j.limits.lower, 1), r.show(i, j.limits.upper, 1));
                    (false, Some(msg))
                }
            })
        });
        // robot:fk(q° [, "frame"]): the tool frame's (or the named frame's) pose, in the workspace
        // of the robot's model userdata (robot.model) rather than a workspace per call.
        methods.add_function("fk", |lua, (ud, q, frame): (AnyUserData, mlua::Value, Option<mlua::Value>)| {
            let robot = ud.borrow::<LuaRobot>()?.0.clone();
            let q = joint_vector(&robot, q, "robot:fk(q)")?;
            let model_ud = super::model::robot_model(lua, &ud, &robot.model)?;
            let mut model = model_ud.borrow_mut::<LuaModel>()?;
            let frame = match frame {
                None | Some(mlua::Value::Nil) => robot.tool_frame,
                Some(name) => model.frame(&name, "robot:fk(q, frame)")?,
            };
            let p = model.placement(&q, frame);
            let t = lua.create_table()?;
            t.set("pos", lua.create_sequence_from(p.translation.iter().map(|x| x * 1e3))?)?;
            t.set("rpy", lua.create_sequence_from(rpy_from_rotation(&p.rotation).iter().map(|x| x.to_degrees()))?)?;
            Ok(t)
        });
        // The operator's seat: what the robot does now, the override, pause and resume.
        methods.add_function("state", |lua, ud: AnyUserData| super::robot_state::state(lua, &ud));
        methods.add_method("override", |lua, this, percent: Option<f64>| super::robot_state::set_override(lua, &this.0, percent));
        methods.add_function("jog", |lua, (ud, t): (AnyUserData, Table)| super::robot_state::jog(lua, &ud, t));
        // Geometric calibration, and a perturbed "true" robot to simulate one.
        methods.add_method("calibrate", |lua, this, t: Table| super::robot_calibration::calibrate(lua, &this.0, t));
        methods.add_method("perturbed", |lua, this, t: Option<Table>| super::robot_calibration::perturbed(lua, &this.0, t));
        methods.add_method("calibrated", |lua, this, errors: Table| super::robot_calibration::calibrated(lua, &this.0, errors));
        methods.add_method("save_calibration", |lua, this, (path, result): (String, Table)| super::robot_calibration::save_calibration(lua, &this.0, path, result));
        methods.add_method("measurement_poses", |lua, this, t: Table| super::robot_calibration::measurement_poses(lua, &this.0, t));
        methods.add_method("pause", |_, this, ()| {
            this.0.operator.pause();
            Ok(())
        });
        methods.add_method("resume", |_, this, ()| {
            this.0.operator.resume();
            Ok(())
        });
        // robot:with_payload { mass = kg, com = {x, y, z} mm, inertia = {…} }: a new robot with the
        // payload added at the flange (the model is rebuilt here, off the real-time path).
        methods.add_method("with_payload", |lua, this, p: Table| {
            let origin = caller(lua);
            let (model, mass) = with_payload_table(&this.0.unloaded, &p).map_err(|e| raise(ErrorKind::Robot, format!("{origin}: robot '{}': {e}", this.0.name)))?;
            Ok(LuaRobot(Arc::new(this.0.loaded(model, Some(mass)))))
        });
        // robot:add(a, name, kind, params): a robot component in assembly a.
        methods.add_method("add", |lua, this, (a, name, kind, opts): (AnyUserData, String, String, Option<Table>)| add_component(lua, &this.0, a, name, &kind, opts));
        // robot:component(kind): the kind for a:add(name, robot:component "ptp", params).
        methods.add_method("component", |lua, this, kind: String| {
            robot_kind(&this.0, &kind).map_err(|e| raise(ErrorKind::Robot, format!("{}: {e}", caller(lua))))?;
            Ok(RobotKind { robot: this.0.clone(), kind })
        });
        // robot:ik(pose, seed) → q (degrees) nearest to seed, or nil and why.
        methods.add_method("ik", |lua, this, (pose, seed, opts): (mlua::Value, Option<mlua::Value>, Option<Table>)| {
            let units = units_of(opts.as_ref())?;
            let target = robot_params::pose(&pose, units, "robot:ik(pose)")?;
            let seed = match seed {
                Some(s) if !s.is_nil() => robot_params::joints(&this.0, &s, units, "robot:ik seed")?,
                _ => this.0.joints.iter().map(|j| 0f64.clamp(j.limits.lower, j.limits.upper)).collect(),
            };
            let mut kinematics = RobotKinematics::new(this.0.clone());
            kinematics.cartesian().map_err(typed)?;
            let mut q = vec![0.0; this.0.dof()];
            if kinematics.inverse(&pose_from_vector(&target), &seed, &mut q) {
                let q: Vec<f64> = q.iter().enumerate().map(|(i, x)| x / units.joint(&this.0, i)).collect();
                Ok((Some(lua.create_sequence_from(q)?), None))
            } else {
                Ok((None, Some(format!("the pose is out of reach of {} or outside its joint limits", this.0.name))))
            }
        });
        // robot:set_payload { mass, com, inertia } (nil: none): changes this robot's payload now.
        methods.add_method_mut("set_payload", |lua, this, p: Option<Table>| {
            crate::object_params::check_writable(lua, &this.0, "set_payload")?;
            let origin = caller(lua);
            let fail = |m: String| raise(ErrorKind::Robot, format!("{origin}: robot '{}': set_payload: {m}", this.0.name));
            let (model, mass) = match p {
                None => ((*this.0.unloaded).clone(), None),
                Some(p) => {
                    let (model, mass) = with_payload_table(&this.0.unloaded, &p).map_err(|e| fail(message_of(&e)))?;
                    (model, Some(mass))
                }
            };
            this.0 = Arc::new(this.0.swapped(model, mass).map_err(|e| fail(e.to_string()))?);
            Ok(())
        });
        // robot:plan(start, moves, opts) → { ok, reason, duration, singularity, end } without moving.
        methods.add_method("plan", |lua, this, (start, moves, opts): (mlua::Value, Table, Option<Table>)| plan(lua, &this.0, start, moves, opts));
        // robot:with_tool { xyz = {mm}, rpy = {°} }: a new robot with this tool at the flange.
        // robot:set_tool { xyz, rpy }: this robot's tool changes now, for every motion planned
        // from here on (a running one keeps the tool it was planned with).
        methods.add_method_mut("set_tool", |lua, this, tool: Table| {
            crate::object_params::check_writable(lua, &this.0, "set_tool")?;
            let origin = caller(lua);
            let placement = tool_placement(&tool).map_err(|e| raise(ErrorKind::Robot, format!("{origin}: {e}")))?;
            this.0 = Arc::new(tooled_robot(&this.0, &placement, &origin.to_string())?.sharing_live(&this.0));
            Ok(())
        });
        // robot:change_tool { xyz, rpy, mass, com, inertia }: the tool changes now, geometry and
        // mass: a running plant and feed-forward carry the new tool from their next step.
        methods.add_method_mut("change_tool", |lua, this, tool: Table| {
            crate::object_params::check_writable(lua, &this.0, "change_tool")?;
            let origin = caller(lua);
            let fail = |m: String| raise(ErrorKind::Robot, format!("{origin}: robot '{}': change_tool: {m}", this.0.name));
            keys::check(&tool, "in the tool", &["xyz", "rpy", "mass", "com", "inertia"], 0).map_err(&fail)?;
            let placement = tool_frame_of(&tool).map_err(|e| fail(message_of(&e)))?;
            let (_, flange_placement) = flange(&this.0.model);
            let body = match tool.get::<mlua::Value>("mass")? {
                mlua::Value::Nil => None,
                _ => Some(flange_body(&this.0.model, &tool, "tool").map_err(|e| fail(message_of(&e)))?),
            };
            this.0 = Arc::new(this.0.tool_changed(flange_placement.compose(&placement), body).map_err(|e| fail(e.to_string()))?);
            Ok(())
        });
        methods.add_method("with_tool", |lua, this, tool: Table| {
            let origin = caller(lua);
            let placement = tool_placement(&tool).map_err(|e| raise(ErrorKind::Robot, format!("{origin}: {e}")))?;
            Ok(LuaRobot(Arc::new(tooled_robot(&this.0, &placement, &origin.to_string())?)))
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
            if let Some(i) = robot.outside_limits(&q0) {
                return Err(fail(format!("q0 of joint {} is outside its limits", robot.joints[i].name)));
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

/// The devices of a robot file's `bus = { ft = { slave = 8, class = "ati_axia" }, safety = { slave = 9 } }`:
/// each bound by its position on the line, which no drive may hold.
fn bus_devices(robot: &Robot, bus: &Table) -> Result<Vec<morc_robot::BusDevice>, String> {
    let name = &robot.name;
    keys::check(bus, &format!("in the bus of robot '{name}'"), &["ft", "safety"], 0)?;
    let mut devices = Vec::new();
    for (role, default_class) in [("ft", "ati_axia"), ("safety", "safety_plc")] {
        let Some(d) = bus.get::<Option<Table>>(role).map_err(|_| format!("robot '{name}': bus.{role} must be a table {{ slave = N, class = \"…\" }}"))? else { continue };
        let what = format!("robot '{name}', bus.{role}");
        keys::check(&d, &format!("in the {role} device of robot '{name}'"), &["slave", "class"], 0)?;
        let slave = match d.get::<mlua::Value>("slave").map_err(|e| e.to_string())? {
            mlua::Value::Integer(n) if n >= 0 => n as u32,
            other => {
                return Err(format!("{what}: slave must be the device's position on the line (0 = first after the master), got {}", other.to_string().unwrap_or_else(|_| other.type_name().into())))
            }
        };
        if let Some(j) = robot.joints.iter().find(|j| j.drive.slave == slave) {
            return Err(format!("{what}: slave {slave} is joint {}'s drive", j.name));
        }
        if let Some(other) = devices.iter().find(|o: &&morc_robot::BusDevice| o.slave == slave) {
            return Err(format!("{what}: slave {slave} is already bus.{}", other.role));
        }
        let class = d.get::<Option<String>>("class").map_err(|_| format!("{what}: class must be a string"))?.unwrap_or_else(|| default_class.to_string());
        morc_ecat::devices::DeviceClassChoice::by_name(&class).map_err(|e| format!("{what}: {e}"))?;
        devices.push(morc_robot::BusDevice { role: role.to_string(), slave, class });
    }
    Ok(devices)
}

/// Registers `morc.model`, `morc.robot`, `morc.start_engine` and `morc.use_robot`.
pub fn install(lua: &Lua, morc: &Table) -> mlua::Result<()> {
    let model = lua.create_table()?;
    model.set("urdf", lua.create_function(model_urdf)?)?;
    model.set("dh", lua.create_function(model_dh)?)?;
    model.set("build", lua.create_function(model_build)?)?;
    morc.set("model", model)?;
    morc.set("robot", lua.create_function(define_robot)?)?;
    morc.set("start_engine", lua.create_function(start_engine)?)?;
    morc.set(
        "use_robot",
        lua.create_function(|lua, (robot, opts): (mlua::Value, mlua::Value)| {
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
        })?,
    )?;
    Ok(())
}
