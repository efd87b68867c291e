//! morc-motion in Lua (`morc.motion`), in SI units (rad, m, s) as `morc.model`: rest-to-rest
//! profiles, via-point splines, trajectories timed by their points, Cartesian paths, blended
//! move sequences planned on a robot's or a model's kinematics, and the Fourier excitation of a
//! dynamic identification. Each is a userdata over the Rust type with its sample buffers, so a
//! Lua planner builds it off the real-time path (planning allocates) and samples it in a step:
//! `sample(t)` returns numbers, the `_to` forms write into morc vectors or Lua tables in place
//! (the port tables of a Lua component), and none of them allocates.
//!
//! Errors name the call and the argument: a vector of the wrong size, a number that is not
//! finite, a limit that is not > 0, an object sampled before it is planned. Times outside an
//! object's span are clamped as the Rust types do (before the start: the start; after the end:
//! the end), never an error.

use mlua::{AnyUserData, Lua, MetaMethod, Table, UserData, UserDataFields, UserDataMethods, Value};
use nalgebra::{DVector, Matrix3, Vector3};

use crate::keys;
use crate::linalg::{doc, mat_in, mat_out, real, Arg, LuaMat, LuaVec, VecIn};
use crate::model::LuaModel;
use crate::robot::LuaRobot;
use morc_model::{rotation_from_rpy, rpy_from_rotation, Se3};
use morc_motion::{CartesianPath, FourierExcitation, Kinematics, ModelKinematics, MotionLimits, Move, MoveSpec, Profile, QuinticSpline, Sequence, TimedPoint, TimedTrajectory};
use morc_robot::RobotKinematics;

fn err(message: String) -> mlua::Error {
    mlua::Error::runtime(message)
}

/// A finite number argument.
fn finite(v: &Value, what: Arg) -> mlua::Result<f64> {
    let x = real(v, || what.to_string())?;
    if !x.is_finite() {
        return Err(err(format!("{what} must be a finite number, is {x}")));
    }
    Ok(x)
}

/// A time argument: finite (times outside the object's span are clamped, not refused).
fn time(v: &Value, what: &str) -> mlua::Result<f64> {
    finite(v, Arg(what, "t"))
}

/// Writes `src` into the destination `dest`: a morc vector of the same length, or a Lua table
/// (entries 1..n set in place); nil skips it. Allocates nothing (a table that already has the
/// entries keeps its storage).
fn write(dest: &Value, src: &[f64], what: Arg) -> mlua::Result<()> {
    match dest {
        Value::Nil => Ok(()),
        Value::Table(t) => {
            for (i, x) in src.iter().enumerate() {
                t.raw_set(i + 1, *x)?;
            }
            Ok(())
        }
        Value::UserData(ud) if ud.is::<LuaVec>() => {
            let mut v = ud.borrow_mut::<LuaVec>().map_err(|_| err(format!("{what}: the vector is written twice by this call (pass a different vector)")))?;
            if v.0.len() != src.len() {
                return Err(err(format!("{what} has {} entries, needs {}", v.0.len(), src.len())));
            }
            v.0.copy_from_slice(src);
            Ok(())
        }
        other => Err(err(format!("{what} must be a morc vector, a table or nil, got a {}", other.type_name()))),
    }
}

/// Writes q, q̇, q̈ into the three destinations of a `sample_to(q, qd, qdd, t)`.
fn write3(dest: [&Value; 3], src: [&[f64]; 3], what: &str) -> mlua::Result<()> {
    write(dest[0], src[0], Arg(what, "q"))?;
    write(dest[1], src[1], Arg(what, "qd"))?;
    write(dest[2], src[2], Arg(what, "qdd"))
}

/// A vector argument of `n` finite numbers (a morc vector or a table).
fn vector(v: &Value, n: usize, what: Arg) -> mlua::Result<Vec<f64>> {
    let x = VecIn::of(v, what)?;
    if x.len() != n {
        return Err(err(format!("{what} has {} entries, needs {n}", x.len())));
    }
    let mut out = vec![0.0; n];
    x.copy_to(&mut out, what)?;
    if let Some(i) = out.iter().position(|x| !x.is_finite()) {
        return Err(err(format!("{what}[{}] = {} is not a finite number", i + 1, out[i])));
    }
    Ok(out)
}

/// A vector argument of any length (finite numbers).
fn any_vector(v: &Value, what: Arg) -> mlua::Result<Vec<f64>> {
    let n = VecIn::of(v, what)?.len();
    vector(v, n, what)
}

/// Per-joint limits: one number for every joint or one per joint, each > 0 (∞ where `infinite`).
fn limits(v: &Value, n: usize, infinite: bool, what: Arg) -> mlua::Result<Vec<f64>> {
    let x = match v {
        Value::Integer(_) | Value::Number(_) => vec![real(v, || what.to_string())?; n],
        _ => {
            let x = VecIn::of(v, what)?;
            if x.len() != n {
                return Err(err(format!("{what} has {} entries, needs one number or {n} (one per joint)", x.len())));
            }
            let mut out = vec![0.0; n];
            x.copy_to(&mut out, what)?;
            out
        }
    };
    if let Some(i) = x.iter().position(|x| !(*x > 0.0 && (x.is_finite() || infinite))) {
        let bound = if infinite { "> 0 (math.huge: none)" } else { "a finite number > 0" };
        return Err(err(format!("{what}: limit {} is {}, must be {bound}", i + 1, x[i])));
    }
    Ok(x)
}

fn unplanned(what: &str, how: &str) -> mlua::Error {
    err(format!("{what}: not planned yet: call {how} first"))
}

// ---------------------------------------------------------------------------------------------
// Poses

/// A rotation matrix from a morc matrix or a table of three rows, checked orthonormal.
fn rotation(v: &Value, what: Arg) -> mlua::Result<Matrix3<f64>> {
    let r = match v {
        Value::UserData(_) => {
            let m = mat_in(v, what)?;
            if m.m.shape() != (3, 3) {
                return Err(err(format!("{what} is {}×{}, a rotation is 3×3", m.m.nrows(), m.m.ncols())));
            }
            Matrix3::from_iterator(m.m.iter().copied())
        }
        Value::Table(rows) => {
            let mut r = Matrix3::zeros();
            for i in 0..3 {
                let row = vector(&rows.raw_get::<Value>(i + 1)?, 3, what).map_err(|_| err(format!("{what}: a rotation is a 3×3 morc matrix or three rows of three numbers")))?;
                for j in 0..3 {
                    r[(i, j)] = row[j];
                }
            }
            r
        }
        other => return Err(err(format!("{what} must be a 3×3 morc matrix or three rows of three numbers, got a {}", other.type_name()))),
    };
    if !r.iter().all(|x| x.is_finite()) || (r.transpose() * r - Matrix3::identity()).norm() > 1e-6 || r.determinant() <= 0.0 {
        return Err(err(format!("{what} is not a rotation matrix (orthonormal, determinant 1)")));
    }
    Ok(r)
}

/// A pose: `{ pos = {x, y, z}, rot = R }` (as model:frame_placement gives it), `{ pos = …, rpy = {roll, pitch, yaw} }`
/// or `{ x, y, z, roll, pitch, yaw }` (m, rad).
fn pose(v: &Value, what: Arg) -> mlua::Result<Se3> {
    let bad = || err(format!("{what}: a pose is {{ pos = {{x, y, z}}, rot = R (3×3) }}, {{ pos = …, rpy = {{roll, pitch, yaw}} }} or {{x, y, z, roll, pitch, yaw}} (m, rad)"));
    match v {
        Value::Table(t) if t.contains_key("pos")? => {
            keys::check(t, &format!("in the pose {what}"), &["pos", "rot", "rpy"], 0).map_err(err)?;
            let p = vector(&t.get("pos")?, 3, Arg(what.0, "pos"))?;
            let (rot, rpy) = (t.get::<Value>("rot")?, t.get::<Value>("rpy")?);
            let r = match (&rot, &rpy) {
                (Value::Nil, Value::Nil) => Matrix3::identity(),
                (_, Value::Nil) => rotation(&rot, Arg(what.0, "rot"))?,
                (Value::Nil, _) => {
                    let a = vector(&rpy, 3, Arg(what.0, "rpy"))?;
                    rotation_from_rpy(a[0], a[1], a[2])
                }
                _ => return Err(err(format!("{what}: give rot or rpy, not both"))),
            };
            Ok(Se3::new(r, Vector3::new(p[0], p[1], p[2])))
        }
        Value::Table(_) | Value::UserData(_) => {
            let x = any_vector(v, what).map_err(|_| bad())?;
            if x.len() != 6 {
                return Err(bad());
            }
            Ok(Se3::new(rotation_from_rpy(x[3], x[4], x[5]), Vector3::new(x[0], x[1], x[2])))
        }
        _ => Err(bad()),
    }
}

/// A point {x, y, z} (m), or the position of a pose.
fn point(v: &Value, what: Arg) -> mlua::Result<Vector3<f64>> {
    if let Value::Table(t) = v {
        if t.contains_key("pos")? || t.raw_len() == 6 {
            return Ok(pose(v, what)?.translation);
        }
    }
    let p = vector(v, 3, what)?;
    Ok(Vector3::new(p[0], p[1], p[2]))
}

fn pose_vector(p: &Se3) -> [f64; 6] {
    let rpy = rpy_from_rotation(&p.rotation);
    [p.translation.x, p.translation.y, p.translation.z, rpy.x, rpy.y, rpy.z]
}

// ---------------------------------------------------------------------------------------------
// Profile

/// `morc.motion.profile(length, v, a [, j])`.
#[derive(Clone, Copy)]
pub struct LuaProfile(Profile);

fn new_profile(_: &Lua, (length, v, a, j): (Value, Value, Value, Value)) -> mlua::Result<LuaProfile> {
    let what = "morc.motion.profile(length, v, a [, j])";
    let length = finite(&length, Arg(what, "length"))?;
    if length < 0.0 {
        return Err(err(format!("{what}: length is {length}, must be ≥ 0 (a rest-to-rest profile runs s from 0 to length)")));
    }
    let mut lim = [0.0; 3];
    for (k, (x, name)) in [(&v, "v"), (&a, "a"), (&j, "j")].into_iter().enumerate() {
        lim[k] = match x {
            Value::Nil if name == "j" => f64::INFINITY,
            _ => real(x, || format!("{what}: {name}"))?,
        };
        if !(lim[k] > 0.0 && (lim[k].is_finite() || name == "j")) {
            return Err(err(format!("{what}: {name} is {}, must be {}", lim[k], if name == "j" { "> 0 (nil or math.huge: no jerk limit)" } else { "a finite number > 0" })));
        }
    }
    Ok(LuaProfile(Profile::plan(length, lim[0], lim[1], lim[2])))
}

impl UserData for LuaProfile {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("duration", |_, this| Ok(this.0.duration()));
        fields.add_field_method_get("length", |_, this| Ok(this.0.length()));
        fields.add_field_method_get("ramp", |_, this| Ok(this.0.ramp_time()));
    }
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method(MetaMethod::ToString, |_, this, ()| {
            let (v, a) = this.0.peaks();
            Ok(format!("motion profile (length {}, {:.6} s, peak velocity {v:.6}, peak acceleration {a:.6})", this.0.length(), this.0.duration()))
        });
        methods.add_method("sample", |_, this, t: Value| Ok(this.0.sample(time(&t, "profile:sample(t)")?)));
        methods.add_method("peaks", |_, this, ()| Ok(this.0.peaks()));
        methods.add_method("stretched", |_, this, f: Value| {
            let f = finite(&f, Arg("profile:stretched(f)", "f"))?;
            Ok(LuaProfile(this.0.stretched(f)))
        });
    }
}

// ---------------------------------------------------------------------------------------------
// Joint trajectories: spline, timed points, Fourier excitation

/// Sample buffers of one joint trajectory (q, q̇, q̈), dof long.
#[derive(Clone)]
struct Buffers {
    q: Vec<f64>,
    qd: Vec<f64>,
    qdd: Vec<f64>,
}

impl Buffers {
    fn new(n: usize) -> Buffers {
        Buffers { q: vec![0.0; n], qd: vec![0.0; n], qdd: vec![0.0; n] }
    }

    fn write(&self, q: &Value, qd: &Value, qdd: &Value, what: &str) -> mlua::Result<()> {
        write3([q, qd, qdd], [&self.q, &self.qd, &self.qdd], what)
    }
}

fn vec_of(x: &[f64]) -> LuaVec {
    LuaVec(DVector::from_column_slice(x))
}

/// `morc.motion.spline(dof, points)`, planned by `sp:plan(start, v, a)`.
#[derive(Clone)]
pub struct LuaSpline {
    spline: QuinticSpline,
    planned: bool,
    start: Vec<f64>,
    buffers: Buffers,
}

fn new_spline(_: &Lua, (dof, points): (Value, Value)) -> mlua::Result<LuaSpline> {
    let what = "morc.motion.spline(dof, points)";
    let n = dof_arg(&dof, what)?;
    let Value::Table(list) = points else {
        return Err(err(format!("{what}: points must be a list of joint vectors {{ q1, q2, … }}, got a {}", points.type_name())));
    };
    let mut flat = Vec::new();
    for i in 1..=list.raw_len() {
        flat.extend(vector(&list.raw_get(i)?, n, Arg(what, &format!("points[{i}]")))?);
    }
    if flat.is_empty() {
        return Err(err(format!("{what}: a spline needs one point at least (where it ends)")));
    }
    Ok(LuaSpline { spline: QuinticSpline::new(n, &flat), planned: false, start: vec![0.0; n], buffers: Buffers::new(n) })
}

/// A number of joints ≥ 1.
fn dof_arg(v: &Value, what: &str) -> mlua::Result<usize> {
    match v {
        Value::Integer(n) if *n >= 1 => Ok(*n as usize),
        Value::Number(x) if *x >= 1.0 && x.fract() == 0.0 && *x < 1e6 => Ok(*x as usize),
        other => Err(err(format!("{what}: dof must be a whole number ≥ 1 (the number of joints), got {}", other.to_string().unwrap_or_else(|_| other.type_name().into())))),
    }
}

impl LuaSpline {
    fn dof(&self) -> usize {
        self.start.len()
    }
}

impl UserData for LuaSpline {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("dof", |_, this| Ok(this.dof()));
        fields.add_field_method_get("pieces", |_, this| Ok(this.spline.pieces()));
        fields.add_field_method_get("duration", |_, this| {
            if !this.planned {
                return Err(unplanned("spline.duration", "sp:plan(start, v, a)"));
            }
            Ok(this.spline.duration())
        });
        fields.add_field_method_get("first", |_, this| {
            if !this.planned {
                return Err(unplanned("spline.first", "sp:plan(start, v, a)"));
            }
            Ok(vec_of(&this.start))
        });
        fields.add_field_method_get("last", |_, this| Ok(vec_of(this.spline.end())));
    }
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method(MetaMethod::ToString, |_, this, ()| {
            let planned = if this.planned { format!("{:.6} s", this.spline.duration()) } else { "not planned".into() };
            Ok(format!("motion spline ({} joints, {} pieces, {planned})", this.dof(), this.spline.pieces()))
        });
        methods.add_function("plan", |_, (ud, start, v, a): (AnyUserData, Value, Value, Value)| {
            {
                let what = "spline:plan(start, v, a)";
                let mut this = ud.borrow_mut::<LuaSpline>()?;
                let n = this.dof();
                let start = vector(&start, n, Arg(what, "start"))?;
                let (v, a) = (limits(&v, n, false, Arg(what, "v"))?, limits(&a, n, true, Arg(what, "a"))?);
                this.spline.plan(&start, &v, &a);
                this.start = start;
                this.planned = true;
            }
            Ok(ud)
        });
        methods.add_method_mut("sample_to", |_, this, (q, qd, qdd, t): (Value, Value, Value, Value)| {
            let what = "spline:sample_to(q, qd, qdd, t)";
            if !this.planned {
                return Err(unplanned(what, "sp:plan(start, v, a)"));
            }
            let t = time(&t, what)?;
            let b = &mut this.buffers;
            this.spline.sample(t, &mut b.q, &mut b.qd, &mut b.qdd);
            b.write(&q, &qd, &qdd, what)
        });
    }
}

/// `morc.motion.timed { { time = 0, q = … }, … }`.
#[derive(Clone)]
pub struct LuaTimed {
    trajectory: TimedTrajectory,
    buffers: Buffers,
}

fn new_timed(_: &Lua, points: Value) -> mlua::Result<LuaTimed> {
    let what = "morc.motion.timed(points)";
    let Value::Table(list) = points else {
        return Err(err(format!("{what}: give a list of points {{ {{ time = 0, q = {{…}} }}, {{ time = 1.5, q = {{…}}, qd = {{…}}, qdd = {{…}} }}, … }}, got a {}", points.type_name())));
    };
    let mut dof = None;
    let mut out = Vec::with_capacity(list.raw_len());
    for i in 1..=list.raw_len() {
        let place = format!("points[{i}]");
        let Value::Table(p) = list.raw_get::<Value>(i)? else {
            return Err(err(format!("{what}: {place} must be a table {{ time = s, q = {{…}} [, qd = {{…}}, qdd = {{…}}] }}")));
        };
        keys::check(&p, &format!("in {what} {place}"), &["time", "q", "qd", "qdd"], 0).map_err(err)?;
        let q = any_vector(&p.get("q")?, Arg(what, &format!("{place}.q")))?;
        let n = *dof.get_or_insert(q.len());
        let optional = |key: &str| -> mlua::Result<Vec<f64>> {
            match p.get::<Value>(key)? {
                Value::Nil => Ok(Vec::new()),
                v => vector(&v, n, Arg(what, &format!("{place}.{key}"))),
            }
        };
        let at = finite(&p.get("time")?, Arg(what, &format!("{place}.time")))?;
        out.push(TimedPoint { time: at, positions: q, velocities: optional("qd")?, accelerations: optional("qdd")? });
    }
    let n = dof.unwrap_or(0);
    let trajectory = TimedTrajectory::new(n, &out).map_err(|e| err(format!("{what}: {e}")))?;
    Ok(LuaTimed { trajectory, buffers: Buffers::new(n) })
}

impl UserData for LuaTimed {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("dof", |_, this| Ok(this.buffers.q.len()));
        fields.add_field_method_get("duration", |_, this| Ok(this.trajectory.duration()));
        fields.add_field_method_get("first", |_, this| Ok(vec_of(this.trajectory.start())));
        fields.add_field_method_get("last", |_, this| Ok(vec_of(this.trajectory.end())));
    }
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method(MetaMethod::ToString, |_, this, ()| Ok(format!("timed trajectory ({} joints, {:.6} s)", this.buffers.q.len(), this.trajectory.duration())));
        methods.add_method_mut("sample_to", |_, this, (q, qd, qdd, t): (Value, Value, Value, Value)| {
            let what = "timed:sample_to(q, qd, qdd, t)";
            let t = time(&t, what)?;
            let b = &mut this.buffers;
            this.trajectory.sample(t, &mut b.q, &mut b.qd, &mut b.qdd);
            b.write(&q, &qd, &qdd, what)
        });
    }
}

/// `morc.motion.fourier { omega, q0, a, b, periods }`.
#[derive(Clone)]
pub struct LuaFourier {
    excitation: FourierExcitation,
    buffers: Buffers,
}

fn new_fourier(_: &Lua, t: Table) -> mlua::Result<LuaFourier> {
    let what = "morc.motion.fourier { omega, q0, a, b [, periods = 1] }";
    // id:excite's whole result is welcome: its other keys are read by no one here.
    keys::check(&t, &format!("in {what}"), &["omega", "q0", "a", "b", "periods", "order", "period", "start", "condition", "evaluations"], 0).map_err(err)?;
    let omega = finite(&t.get("omega")?, Arg(what, "omega"))?;
    let q0 = any_vector(&t.get("q0")?, Arg(what, "q0"))?;
    let (a, b) = (any_vector(&t.get("a")?, Arg(what, "a"))?, any_vector(&t.get("b")?, Arg(what, "b"))?);
    let periods = match t.get::<Value>("periods")? {
        Value::Nil => 1.0,
        v => finite(&v, Arg(what, "periods"))?,
    };
    let excitation = FourierExcitation::from_coefficients(omega, &q0, &a, &b, periods).map_err(|e| err(format!("{what}: {e}")))?;
    if let Some(order) = t.get::<Option<f64>>("order")? {
        if order != excitation.order() as f64 {
            return Err(err(format!("{what}: order = {order}, but a and b hold {} coefficients per joint", excitation.order())));
        }
    }
    let n = excitation.dof();
    Ok(LuaFourier { excitation, buffers: Buffers::new(n) })
}

impl UserData for LuaFourier {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("dof", |_, this| Ok(this.excitation.dof()));
        fields.add_field_method_get("order", |_, this| Ok(this.excitation.order()));
        fields.add_field_method_get("omega", |_, this| Ok(this.excitation.series().omega));
        fields.add_field_method_get("period", |_, this| Ok(this.excitation.period()));
        fields.add_field_method_get("periods", |_, this| Ok(this.excitation.periods()));
        fields.add_field_method_get("duration", |_, this| Ok(this.excitation.duration()));
        fields.add_field_method_get("first", |_, this| Ok(vec_of(this.excitation.start())));
        fields.add_field_method_get("last", |_, this| Ok(vec_of(this.excitation.end())));
    }
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method(MetaMethod::ToString, |_, this, ()| {
            let e = &this.excitation;
            Ok(format!("Fourier excitation ({} joints, order {}, {} × {:.6} s)", e.dof(), e.order(), e.periods(), e.period()))
        });
        methods.add_method_mut("sample_to", |_, this, (q, qd, qdd, t): (Value, Value, Value, Value)| {
            let what = "fourier:sample_to(q, qd, qdd, t)";
            let t = time(&t, what)?;
            let b = &mut this.buffers;
            this.excitation.sample(t, &mut b.q, &mut b.qd, &mut b.qdd);
            b.write(&q, &qd, &qdd, what)
        });
    }
}

// ---------------------------------------------------------------------------------------------
// Cartesian paths

/// `morc.motion.line(from, to)` or `morc.motion.arc(from, via, to)`.
#[derive(Clone, Copy)]
pub struct LuaPath(CartesianPath);

impl UserData for LuaPath {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("length", |_, this| Ok(this.0.length()));
        fields.add_field_method_get("angle", |_, this| Ok(this.0.rotation_angle()));
    }
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method(MetaMethod::ToString, |_, this, ()| Ok(format!("Cartesian path ({:.6} m, turning {:.6} rad)", this.0.length(), this.0.rotation_angle())));
        methods.add_method("pose", |lua, this, u: Value| {
            let p = this.0.pose(finite(&u, Arg("path:pose(u)", "u"))?);
            let t = lua.create_table()?;
            t.set("pos", vec_of(p.translation.as_slice()))?;
            t.set("rot", LuaMat::new(nalgebra::DMatrix::from_column_slice(3, 3, p.rotation.as_slice())))?;
            Ok(t)
        });
        methods.add_method("pose_to", |_, this, (pos, rot, u): (Value, Value, Value)| {
            let what = "path:pose_to(pos, rot, u)";
            let p = this.0.pose(finite(&u, Arg(what, "u"))?);
            write(&pos, p.translation.as_slice(), Arg(what, "pos"))?;
            match &rot {
                Value::Nil => Ok(()),
                _ => {
                    let mut r = mat_out(&rot, Arg(what, "rot"))?;
                    if r.m.shape() != (3, 3) {
                        return Err(err(format!("{what}: rot is {}×{}, needs 3×3", r.m.nrows(), r.m.ncols())));
                    }
                    r.m.copy_from(&p.rotation);
                    Ok(())
                }
            }
        });
    }
}

// ---------------------------------------------------------------------------------------------
// Sequences

/// `morc.motion.sequence(arm, moves [, limits])`, planned by `seq:plan(start)`.
pub struct LuaSequence {
    sequence: Sequence,
    arm: Box<dyn Kinematics + Send>,
    planned: bool,
    buffers: Buffers,
}

const SEQUENCE: &str = "morc.motion.sequence(arm, moves [, limits])";

/// A move `{ "ptp", q }`, `{ "lin", pose }`, `{ "circ", via, pose }`, `{ "spline", q1, q2, … }`,
/// with `blend = m` and `speed = %` (SI otherwise).
fn parse_move(t: &Table, n: usize, place: &str) -> mlua::Result<MoveSpec> {
    let kind: String = match t.raw_get::<Value>(1)? {
        Value::String(s) => s.to_str()?.to_string(),
        _ => return Err(err(format!("{SEQUENCE}: {place} starts with its kind: {{ \"ptp\" | \"lin\" | \"circ\" | \"spline\", … }}"))),
    };
    let arg = |i: usize| t.raw_get::<Value>(i);
    let at = |what: &str| format!("{place} ({kind}) {what}");
    let positional = match kind.as_str() {
        "ptp" | "lin" => 2,
        "circ" => 3,
        _ => t.raw_len(),
    };
    keys::check(t, &format!("in {place}"), &["blend", "speed"], positional).map_err(|e| err(format!("{SEQUENCE}: {e}")))?;
    let motion = match kind.as_str() {
        "ptp" => Move::Ptp { target: vector(&arg(2)?, n, Arg(SEQUENCE, &at("target")))? },
        "lin" => Move::Lin { target: pose_vector(&pose(&arg(2)?, Arg(SEQUENCE, &at("target")))?) },
        "circ" => Move::Circ { via: point(&arg(2)?, Arg(SEQUENCE, &at("via")))?.into(), target: pose_vector(&pose(&arg(3)?, Arg(SEQUENCE, &at("target")))?) },
        "spline" => {
            let mut points = Vec::new();
            for i in 2..=t.raw_len() {
                points.extend(vector(&arg(i)?, n, Arg(SEQUENCE, &format!("{place} (spline) point {}", i - 1)))?);
            }
            if points.is_empty() {
                return Err(err(format!("{SEQUENCE}: {place}: a spline needs one point at least: {{ \"spline\", q1, q2, … }}")));
            }
            Move::Spline { points }
        }
        other => return Err(err(format!("{SEQUENCE}: {place}: unknown move kind '{other}' (ptp, lin, circ, spline)"))),
    };
    let blend = match t.get::<Value>("blend")? {
        Value::Nil => 0.0,
        v => finite(&v, Arg(SEQUENCE, &format!("{place}: blend")))?,
    };
    let speed = match t.get::<Value>("speed")? {
        Value::Nil => 100.0,
        v => finite(&v, Arg(SEQUENCE, &format!("{place}: speed")))?,
    };
    if !(blend >= 0.0 && speed > 0.0 && speed <= 100.0) {
        return Err(err(format!("{SEQUENCE}: {place}: blend must be ≥ 0 m and speed in (0, 100] %, are {blend} and {speed}")));
    }
    Ok(MoveSpec { motion, blend, velocity_scale: speed / 100.0 })
}

/// Cartesian limits `{ v, a [, j] }` (v, a finite and > 0; j > 0, math.huge: none); nil when not given.
fn cartesian_limits(v: &Value, what: Arg) -> mlua::Result<Option<[f64; 3]>> {
    if v.is_nil() {
        return Ok(None);
    }
    let bad = || err(format!("{what} must be {{ v, a [, j] }}: finite velocity and acceleration > 0, jerk > 0 (math.huge: none)"));
    let x = VecIn::of(v, what).map_err(|_| bad())?;
    let mut out = [0.0, 0.0, f64::INFINITY];
    if !(x.len() == 2 || x.len() == 3) {
        return Err(bad());
    }
    x.copy_to(&mut out[..x.len()], what)?;
    if !(out[0] > 0.0 && out[0].is_finite() && out[1] > 0.0 && out[1].is_finite() && out[2] > 0.0) {
        return Err(bad());
    }
    Ok(Some(out))
}

/// The tool frame of a bare model: `tool` when named, else "tool", "tool0" or "flange" (as a
/// robot picks it), else the last frame.
fn tool_frame(model: &LuaModel, tool: &Value) -> mlua::Result<usize> {
    if !tool.is_nil() {
        return model.frame(tool, SEQUENCE);
    }
    Ok(["tool", "tool0", "flange"].iter().find_map(|name| model.frame_index(name.as_bytes())).unwrap_or(model.model.frames().len() - 1))
}

/// What a sequence plans on, and the limits the arm brings where the caller gives none.
struct Arm {
    kinematics: Box<dyn Kinematics + Send>,
    /// Per joint (SI), when the arm knows them.
    velocity: Option<Vec<f64>>,
    acceleration: Option<Vec<f64>>,
    /// The tool's linear and angular { v, a, j }.
    tool: Option<[[f64; 3]; 2]>,
}

/// A robot (its tool frame, joint and tool limits) or a model (its frame `tool`, its URDF
/// velocity limits when every joint has one).
fn arm_of(arm: &Value, opts: &Table) -> mlua::Result<Arm> {
    match arm {
        Value::UserData(ud) if ud.is::<LuaRobot>() => {
            if !opts.get::<Value>("tool")?.is_nil() {
                return Err(err(format!("{SEQUENCE}: tool is for a model; a robot moves its own tool frame")));
            }
            let robot = ud.borrow::<LuaRobot>()?.0.clone();
            let c = robot.cartesian;
            Ok(Arm {
                velocity: Some(robot.joints.iter().map(|j| j.limits.velocity).collect()),
                acceleration: Some(robot.joints.iter().map(|j| j.limits.acceleration).collect()),
                tool: Some([[c.velocity, c.acceleration, f64::INFINITY], [c.angular_velocity, c.angular_acceleration, f64::INFINITY]]),
                kinematics: Box::new(RobotKinematics::new(robot)),
            })
        }
        Value::UserData(ud) if ud.is::<LuaModel>() => {
            let model = ud.borrow::<LuaModel>()?;
            let frame = tool_frame(&model, &opts.get("tool")?)?;
            let v: Vec<f64> = model.model.limits().iter().map(|l| l.velocity).collect();
            Ok(Arm {
                velocity: v.iter().all(|x| *x > 0.0 && x.is_finite()).then_some(v),
                acceleration: None,
                tool: None,
                kinematics: Box::new(ModelKinematics::new(model.model.clone(), frame)),
            })
        }
        other => Err(err(format!("{SEQUENCE}: arm must be a robot (morc.robot, require \"robots.…\") or a model (morc.model, robot.model), got a {}", other.type_name()))),
    }
}

fn new_sequence(lua: &Lua, (arm, moves, opts): (Value, Value, Option<Table>)) -> mlua::Result<LuaSequence> {
    let opts = match opts {
        Some(t) => t,
        None => lua.create_table()?,
    };
    keys::check(&opts, &format!("in {SEQUENCE}'s limits"), &["velocity", "acceleration", "jerk", "linear", "angular", "tool"], 0).map_err(|e| err(format!("{SEQUENCE}: {e}")))?;
    let Arm { kinematics: arm, velocity: default_velocity, acceleration: default_acceleration, tool: default_cartesian } = arm_of(&arm, &opts)?;
    let n = arm.dof();
    let joint = |key: &str, default: Option<Vec<f64>>, infinite: bool| -> mlua::Result<Vec<f64>> {
        match (opts.get::<Value>(key)?, default) {
            (Value::Nil, Some(d)) => Ok(d),
            (Value::Nil, None) if infinite => Ok(vec![f64::INFINITY; n]),
            (Value::Nil, None) => Err(err(format!("{SEQUENCE}: the model gives no joint {key} limits: give {key} = number or {{ one per joint }} (SI)"))),
            (v, _) => limits(&v, n, infinite, Arg(SEQUENCE, key)),
        }
    };
    let velocity = joint("velocity", default_velocity, false)?;
    let acceleration = joint("acceleration", default_acceleration, false)?;
    let jerk = joint("jerk", None, true)?;
    let Value::Table(list) = moves else {
        return Err(err(format!("{SEQUENCE}: moves must be a list {{ {{ \"ptp\", q }}, {{ \"lin\", pose, blend = m }}, … }}, got a {}", moves.type_name())));
    };
    let mut specs = Vec::new();
    for i in 1..=list.raw_len() {
        let place = format!("move {i}");
        let Value::Table(m) = list.raw_get::<Value>(i)? else {
            return Err(err(format!("{SEQUENCE}: {place} must be a table {{ \"ptp\", q }} …")));
        };
        specs.push(parse_move(&m, n, &place)?);
    }
    if specs.is_empty() {
        return Err(err(format!("{SEQUENCE}: moves is empty: give one move at least")));
    }
    let cartesian = specs.iter().any(|m| matches!(m.motion, Move::Lin { .. } | Move::Circ { .. }));
    let mut tool = [[f64::INFINITY; 3]; 2];
    for (k, key) in ["linear", "angular"].into_iter().enumerate() {
        tool[k] = match (cartesian_limits(&opts.get(key)?, Arg(SEQUENCE, key))?, default_cartesian) {
            (Some(x), _) => x,
            (None, Some(d)) => d[k],
            (None, None) if cartesian => return Err(err(format!("{SEQUENCE}: lin and circ moves on a model need the tool's limits: {key} = {{ v, a [, j] }} (m or rad per s, s², s³)"))),
            (None, None) => [1.0, 1.0, f64::INFINITY],
        };
    }
    let limits = MotionLimits { velocity, acceleration, jerk, linear: tool[0], angular: tool[1] };
    Ok(LuaSequence { sequence: Sequence::new(specs, limits), arm, planned: false, buffers: Buffers::new(n) })
}

impl UserData for LuaSequence {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("dof", |_, this| Ok(this.buffers.q.len()));
        fields.add_field_method_get("duration", |_, this| {
            if !this.planned {
                return Err(unplanned("sequence.duration", "seq:plan(start)"));
            }
            Ok(this.sequence.duration())
        });
        fields.add_field_method_get("last", |_, this| {
            if !this.planned {
                return Err(unplanned("sequence.last", "seq:plan(start)"));
            }
            Ok(vec_of(this.sequence.end()))
        });
    }
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method(MetaMethod::Len, |_, this, ()| Ok(this.sequence.len()));
        methods.add_meta_method(MetaMethod::ToString, |_, this, ()| {
            let planned = if this.planned { format!("{:.6} s", this.sequence.duration()) } else { "not planned".into() };
            Ok(format!("motion sequence ({} moves, {} joints, {planned})", this.sequence.len(), this.buffers.q.len()))
        });
        methods.add_function("plan", |_, (ud, start): (AnyUserData, Value)| {
            {
                let what = "sequence:plan(start)";
                let mut guard = ud.borrow_mut::<LuaSequence>()?;
                let this = &mut *guard;
                let start = vector(&start, this.buffers.q.len(), Arg(what, "start"))?;
                this.planned = false;
                this.sequence.plan(this.arm.as_mut(), &start).map_err(|e| err(format!("{what}: {e}")))?;
                this.planned = true;
            }
            Ok(ud)
        });
        methods.add_method("timing", |_, this, k: Value| {
            let what = "sequence:timing(k)";
            if !this.planned {
                return Err(unplanned(what, "seq:plan(start)"));
            }
            let k = match k {
                Value::Integer(k) if k >= 1 && (k as usize) <= this.sequence.len() => k as usize,
                other => return Err(err(format!("{what}: k must be a move's number, 1 to {}, got {}", this.sequence.len(), other.to_string().unwrap_or_else(|_| other.type_name().into())))),
            };
            Ok(this.sequence.timing(k - 1))
        });
        methods.add_method_mut("sample_to", |_, this, (q, qd, qdd, t): (Value, Value, Value, Value)| {
            let what = "sequence:sample_to(q, qd, qdd, t)";
            if !this.planned {
                return Err(unplanned(what, "seq:plan(start)"));
            }
            let t = time(&t, what)?;
            let b = &mut this.buffers;
            this.sequence.sample(this.arm.as_mut(), t, &mut b.q, &mut b.qd, &mut b.qdd).map_err(|e| err(format!("{what}: {e}")))?;
            b.write(&q, &qd, &qdd, what)
        });
    }
}

// ---------------------------------------------------------------------------------------------
// Registration and documentation

const MOTION_DOC: &str = r#"morc.motion — motion planning in Lua (morc-motion), in SI units as morc.model (rad, m, s; poses in m and rad).
Plan off the real-time path (building and planning allocate), sample in a step: profile:sample(t) returns numbers and
the _to forms write into morc vectors or Lua tables (a Lua component's port tables) in place, allocating nothing.
Times outside an object's span are clamped: before it, its start; after it, its end (at rest, unless a timed
trajectory's last point gives a velocity).
  morc.motion.profile(length, v, a [, j]) → profile   rest-to-rest time profile of s from 0 to length within v, a and
    jerk j (nil or math.huge: trapezoid; double S otherwise): p.duration, p.length, p.ramp (acceleration phase, s),
    p:sample(t) → s, ṡ, s̈   p:peaks() → peak ṡ, s̈   p:stretched(f) → the same shape f ≥ 1 times slower
  morc.motion.spline(dof, { q1, q2, … }) → spline   quintic segments through via points, at rest at both ends;
    sp:plan(start, v, a) → sp  times it within per-joint velocity and acceleration limits (numbers or one per joint;
    a = math.huge: velocity alone, the minimum-jerk quintic of each piece)
  morc.motion.timed { { time = 0, q = … [, qd = …, qdd = …] }, … } → timed   a trajectory through timed points
    (what MoveIt plans): quintics through their positions and, where given, velocities and accelerations
  morc.motion.fourier { omega, q0, a, b [, periods = 1] } → fourier   the Fourier series of id:excite (a, b joint by
    joint) run for `periods` periods, then held at rest: q_j = q0_j + Σ_l a_jl/(l·ω)·sin(l·ω·t) − b_jl/(l·ω)·cos(l·ω·t)
  x:sample_to(q, qd, qdd, t)   position, velocity and acceleration at t into vectors or tables (nil skips one), for
    spline, timed, fourier and sequence; x.duration, x.dof, x.first, x.last (start and end positions, new vectors)
  morc.motion.line(from, to) → path   morc.motion.arc(from, via, to) → path   the tool's straight line or circular arc
    through the point via, orientation by slerp: path.length (m), path.angle (rad), path:pose(u) → { pos, rot },
    path:pose_to(pos, rot, u) in place (u ∈ [0, 1]; walk it with a profile: u = s / length)
    a pose is { pos = {x, y, z}, rot = R } (as model:frame_placement gives it), { pos = …, rpy = {…} } or { x, y, z, roll, pitch, yaw }
  morc.motion.sequence(arm, moves [, limits]) → sequence   moves one after the other with blending, on a robot's
    kinematics (its joint and tool limits) or a model's (its frame `tool`, else tool/tool0/flange, else the last one):
      moves = { { "ptp", q }, { "lin", pose, blend = m }, { "circ", via, pose }, { "spline", q1, q2, … }, speed = % }
      limits = { velocity = v, acceleration = a, jerk = j, linear = { v, a [, j] }, angular = { v, a [, j] }, tool = "frame" }
    (numbers for every joint or one per joint; a model needs acceleration, and linear and angular for lin and circ)
    seq:plan(start) → seq (an error names the move and what is wrong)   seq:timing(k) → start, duration of move k   #seq
Types:
  morc.motion.profile(length: number, v: number, a: number, j?: number) → motion_profile
  morc.motion.spline(dof: integer, points: (vec|number[])[]) → motion_spline
  morc.motion.timed(points: { time: number, q: vec|number[], qd?: vec|number[], qdd?: vec|number[] }[]) → motion_timed
  morc.motion.fourier(coefficients: { omega: number, q0: number[], a: number[], b: number[], periods?: number }) → motion_fourier
  morc.motion.line(from: table, to: table) → motion_path   morc.motion.arc(from: table, via: vec|number[], to: table) → motion_path
  morc.motion.sequence(arm: robot|model, moves: table[], limits?: { velocity?: number|number[], acceleration?: number|number[], jerk?: number|number[], linear?: number[], angular?: number[], tool?: string }) → motion_sequence
  motion_profile.duration: number   motion_profile.length: number   motion_profile.ramp: number
  motion_profile:sample(t: number) → number, number, number   motion_profile:peaks() → number, number
  motion_profile:stretched(f: number) → motion_profile
  motion_spline.dof: integer   motion_spline.pieces: integer   motion_spline.duration: number   motion_spline.first: vec   motion_spline.last: vec
  motion_spline:plan(start: vec|number[], v: number|number[], a: number|number[]) → motion_spline
  motion_spline:sample_to(q: vec|number[]?, qd: vec|number[]?, qdd: vec|number[]?, t: number)
  motion_timed.dof: integer   motion_timed.duration: number   motion_timed.first: vec   motion_timed.last: vec
  motion_timed:sample_to(q: vec|number[]?, qd: vec|number[]?, qdd: vec|number[]?, t: number)
  motion_fourier.dof: integer   motion_fourier.order: integer   motion_fourier.omega: number   motion_fourier.period: number
  motion_fourier.periods: number   motion_fourier.duration: number   motion_fourier.first: vec   motion_fourier.last: vec
  motion_fourier:sample_to(q: vec|number[]?, qd: vec|number[]?, qdd: vec|number[]?, t: number)
  motion_path.length: number   motion_path.angle: number   motion_path:pose(u: number) → { pos: vec, rot: mat }
  motion_path:pose_to(pos: vec|number[], rot: mat?, u: number)
  motion_sequence.dof: integer   motion_sequence.duration: number   motion_sequence.last: vec
  motion_sequence:plan(start: vec|number[]) → motion_sequence   motion_sequence:timing(k: integer) → number, number
  motion_sequence:sample_to(q: vec|number[]?, qd: vec|number[]?, qdd: vec|number[]?, t: number)"#;

/// Installs `morc.motion`.
pub(crate) fn install(lua: &Lua, morc: &Table) -> mlua::Result<()> {
    let t = lua.create_table()?;
    let functions: [(&str, mlua::Function, &str); 7] = [
        (
            "profile",
            lua.create_function(new_profile)?,
            "morc.motion.profile(length: number, v: number, a: number, j?: number) → motion_profile  the time-optimal rest-to-rest profile of s from 0 to length within velocity v, acceleration a and jerk j (nil: none, a trapezoid): duration, sample(t) → s, ṡ, s̈, peaks(), stretched(f)",
        ),
        (
            "spline",
            lua.create_function(new_spline)?,
            "morc.motion.spline(dof: integer, points: (vec|number[])[]) → motion_spline  quintic segments through the via points (the last is where it ends), at rest at both ends; sp:plan(start, v, a) times it within the joints' velocity and acceleration limits, then sp:sample_to(q, qd, qdd, t)",
        ),
        (
            "timed",
            lua.create_function(new_timed)?,
            "morc.motion.timed(points: { time: number, q: vec|number[], qd?: vec|number[], qdd?: vec|number[] }[]) → motion_timed  a trajectory through points at given times (the first at 0): quintics through their positions and, where given, velocities and accelerations; sample_to(q, qd, qdd, t)",
        ),
        (
            "fourier",
            lua.create_function(new_fourier)?,
            "morc.motion.fourier(coefficients: { omega: number, q0: number[], a: number[], b: number[], periods?: number }) → motion_fourier  id:excite's Fourier series (a, b joint by joint, order = #a / #q0) for `periods` periods (default 1), then held at rest; sample_to(q, qd, qdd, t) analytically",
        ),
        ("line", lua.create_function(|_, (from, to): (Value, Value)| Ok(LuaPath(CartesianPath::line(&pose(&from, Arg("morc.motion.line(from, to)", "from"))?, &pose(&to, Arg("morc.motion.line(from, to)", "to"))?))))?,
            "morc.motion.line(from: table, to: table) → motion_path  the tool's straight line between two poses, orientation by slerp: length, angle, pose(u), pose_to(pos, rot, u) for u ∈ [0, 1]"),
        (
            "arc",
            lua.create_function(|_, (from, via, to): (Value, Value, Value)| {
                let what = "morc.motion.arc(from, via, to)";
                let (from, via, to) = (pose(&from, Arg(what, "from"))?, point(&via, Arg(what, "via"))?, pose(&to, Arg(what, "to"))?);
                CartesianPath::arc(&from, &via, &to).map(LuaPath).map_err(|e| err(format!("{what}: {e}")))
            })?,
            "morc.motion.arc(from: table, via: vec|number[], to: table) → motion_path  the circular arc from a pose through the point via (m) to a pose, orientation by slerp from start to end; an error when the three points are on one line",
        ),
        (
            "sequence",
            lua.create_function(new_sequence)?,
            "morc.motion.sequence(arm: robot|model, moves: table[], limits?: { velocity?: number|number[], acceleration?: number|number[], jerk?: number|number[], linear?: number[], angular?: number[], tool?: string }) → motion_sequence  ptp, lin, circ and spline moves with blending on a robot's or a model's kinematics (SI: rad, m; blend in m, speed in %); seq:plan(start), then seq.duration and seq:sample_to(q, qd, qdd, t) (see morc.motion)",
        ),
    ];
    let mut docs = Vec::new();
    for (name, f, text) in functions {
        t.set(name, f.clone())?;
        docs.push((f, text));
    }
    morc.set("motion", t.clone())?;
    doc(morc, t, MOTION_DOC)?;
    for (f, text) in docs {
        doc(morc, f, text)?;
    }
    Ok(())
}
