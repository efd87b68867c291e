//! Models made from Lua: `morc.model.urdf "file"` (and `morc.model "file"`), `morc.model.dh { … }`
//! and `morc.model.build { … }`, in Lua's units (mm, degrees; kg, kg·m²), and the readers of
//! numbers, vectors and inertias from Lua tables that robot definitions share.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mlua::{Lua, Table};
use nalgebra::{Matrix3, Vector3};

use super::convert::to_value;
use super::model::LuaModel;
use super::origin::caller;
use crate::error::{message_of, raise, ErrorKind};
use crate::keys;
use morc_kernel::Value;
use morc_model::rotation_from_rpy;
use morc_model::{DhConvention, DhLink, DhTable, FrameKind, Inertia, JointKind, JointLimits, ModelBuilder, Se3};

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

/// The number `key` of `t`, else `default` (an error naming `what` when there is none);
/// NaN and infinities refused.
pub(crate) fn number(t: &Table, key: &str, default: Option<f64>, what: &str) -> mlua::Result<f64> {
    match t.get::<mlua::Value>(key)? {
        mlua::Value::Nil => default.ok_or_else(|| mlua::Error::runtime(format!("{what}: '{key}' is missing"))),
        mlua::Value::Integer(i) => Ok(i as f64),
        mlua::Value::Number(x) => keys::finite(x, &format!("{what}: '{key}'")).map_err(mlua::Error::runtime),
        other => Err(mlua::Error::runtime(format!("{what}: '{key}' must be a number, got a {}", other.type_name()))),
    }
}

/// An optional number of `t` (NaN and infinities refused, naming `key`).
pub(crate) fn optional_number(t: &Table, key: &str, what: &str) -> mlua::Result<Option<f64>> {
    match t.get::<mlua::Value>(key)? {
        mlua::Value::Nil => Ok(None),
        _ => number(t, key, None, what).map(Some),
    }
}

/// `n` numbers from a Lua value (a list, a morc vector, or one number when `n` is 1), `what`
/// naming it in errors.
pub(crate) fn numbers(v: mlua::Value, n: usize, what: &str) -> mlua::Result<Vec<f64>> {
    match to_value(&v, what)? {
        Value::Vector(x) if x.len() == n => Ok(x),
        Value::Real(x) if n == 1 => Ok(vec![x]),
        Value::Integer(x) if n == 1 => Ok(vec![x as f64]),
        _ => Err(mlua::Error::runtime(format!("{what}: expected {n} numbers"))),
    }
}

/// The point `key` of `t`, `{x, y, z}` in mm, in metres; the origin when not given.
pub(crate) fn vec3_mm(t: &Table, key: &str, what: &str) -> mlua::Result<Vector3<f64>> {
    match t.get::<mlua::Value>(key)? {
        mlua::Value::Nil => Ok(Vector3::zeros()),
        v => {
            let x = numbers(v, 3, &format!("{what}.{key} (mm)"))?;
            Ok(Vector3::new(x[0], x[1], x[2]) * 1e-3)
        }
    }
}

/// `{ ixx, iyy, izz, ixy, ixz, iyz }` in kg·m² → a symmetric matrix.
pub(crate) fn inertia_matrix(t: &Table, what: &str) -> mlua::Result<Matrix3<f64>> {
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
pub(crate) fn model_dh(lua: &Lua, t: Table) -> mlua::Result<LuaModel> {
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
pub(crate) fn model_build(lua: &Lua, t: Table) -> mlua::Result<LuaModel> {
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
