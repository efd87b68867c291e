//! Dynamic identification from Lua (`morc.dynid`, on morc-model's [`BaseParameters`]): the
//! base parameters of a robot, an exciting Fourier trajectory within its limits, estimation
//! and validation from recorded runs (read back with `morc.dynid.read`), the parameters saved
//! to a file, and `morc.dynid.perturbed`, a robot whose dynamics differ from the nominal
//! one: the hidden "true" robot of a simulated identification. SI units throughout (rad,
//! rad/s, N·m, kg, m), as morc.model's.

use std::sync::Arc;

use mlua::{Lua, Table, UserData, UserDataFields, UserDataMethods, Value};
use morc_model::{BaseParameters, ExcitationOptions, FourierTrajectory, JointBounds, Measurements, Model};
use morc_robot::Robot;

use super::linalg::{doc, LuaMat, VecIn};
use super::origin::caller;
use super::robot::LuaRobot;
use crate::error::{raise, ErrorKind};

/// A robot's base parameters, and the limits its trajectories keep to.
pub struct LuaDynId {
    robot: Arc<Robot>,
    base: BaseParameters,
    bounds: JointBounds,
}

fn bounds_of(robot: &Robot) -> JointBounds {
    let l = |f: fn(&morc_robot::Limits) -> f64| robot.joints.iter().map(|j| f(&j.limits)).collect::<Vec<f64>>();
    JointBounds { lower: l(|x| x.lower), upper: l(|x| x.upper), velocity: l(|x| x.velocity), acceleration: l(|x| x.acceleration), torque: l(|x| x.torque) }
}

fn robot_arg(v: &Value, what: &str) -> mlua::Result<Arc<Robot>> {
    match v {
        Value::UserData(u) => Ok(u.borrow::<LuaRobot>().map_err(|_| raise(ErrorKind::Lua, format!("{what}: give a robot (morc.robot {{ … }} or require \"robots.NAME\")")))?.0.clone()),
        _ => Err(raise(ErrorKind::Lua, format!("{what}: give a robot (morc.robot {{ … }} or require \"robots.NAME\"), got a {}", v.type_name()))),
    }
}

fn opt<T: mlua::FromLua>(t: &Option<Table>, key: &str, default: T) -> mlua::Result<T> {
    Ok(match t {
        Some(t) => t.get::<Option<T>>(key)?.unwrap_or(default),
        None => default,
    })
}

/// `morc.dynid.base(robot, { samples, seed, tolerance })`.
fn base(lua: &Lua, (robot, opts): (Value, Option<Table>)) -> mlua::Result<LuaDynId> {
    let origin = caller(lua);
    let what = format!("{origin}: morc.dynid.base");
    let robot = robot_arg(&robot, &what)?;
    let bounds = bounds_of(&robot);
    let names: Vec<String> = robot.joints.iter().map(|j| j.name.clone()).collect();
    let samples = opt(&opts, "samples", 100usize)?;
    let seed = opt(&opts, "seed", 1u64)?;
    let tolerance = opt(&opts, "tolerance", morc_model::BASE_TOLERANCE)?;
    let base = BaseParameters::new(&robot.model, &names, &bounds, samples, seed, tolerance).map_err(|e| raise(ErrorKind::Robot, format!("{what}: robot '{}': {e}", robot.name)))?;
    Ok(LuaDynId { robot, base, bounds })
}

/// `morc.dynid.perturbed(robot, { seed, inertial, drive })`.
fn perturbed(lua: &Lua, (robot, opts): (Value, Option<Table>)) -> mlua::Result<LuaRobot> {
    let origin = caller(lua);
    let robot = robot_arg(&robot, &format!("{origin}: morc.dynid.perturbed"))?;
    let (seed, inertial, drive) = (opt(&opts, "seed", 1u64)?, opt(&opts, "inertial", 0.1)?, opt(&opts, "drive", 0.2)?);
    if !(0.0..1.0).contains(&inertial) || !(0.0..1.0).contains(&drive) {
        return Err(raise(ErrorKind::Robot, format!("{origin}: morc.dynid.perturbed: inertial = {inertial}, drive = {drive}: give fractions in [0, 1)")));
    }
    let change = |m: &Model| morc_model::perturbed_dynamics(m, seed, inertial, drive);
    Ok(LuaRobot(Arc::new(super::robot_calibration::regeometried(&robot, change, &origin.to_string())?)))
}

/// `morc.dynid.stiffness(robot, path)`: the elastic gears' stiffness and damping fitted to a
/// recorded run that measured the links (robot.q_link), or why they cannot be seen.
fn stiffness(lua: &Lua, (robot, path): (Value, String)) -> mlua::Result<Table> {
    let origin = caller(lua);
    let what = format!("{origin}: morc.dynid.stiffness");
    let robot = robot_arg(&robot, &what)?;
    let fail = |m: String| raise(ErrorKind::Record, format!("{what}: {m}"));
    let elastic: Vec<usize> = robot.model.drive_trains().iter().enumerate().filter(|(_, d)| d.is_elastic()).map(|(i, _)| i).collect();
    if elastic.is_empty() {
        return Err(raise(ErrorKind::Robot, format!("{what}: robot '{}' has no elastic gears (no drive stiffness): there is nothing to fit", robot.name)));
    }
    let loaded = morc_record::plot::load(std::path::Path::new(&path), &["robot.q*"]).map_err(|e| fail(e.to_string()))?;
    if !loaded.signals.iter().any(|s| s.name == "robot.q_link") {
        let names: Vec<&str> = elastic.iter().map(|&i| robot.joints[i].name.as_str()).collect();
        return Err(fail(format!(
            "{path} has no link-side measurement (robot.q_link), so the stiffness of {} cannot be seen: the motors alone show the gears' deflection only as a torque error. Record robot.q_link (a link encoder) or derive it from a tracker",
            names.join(", ")
        )));
    }
    let (_, q) = flat(&loaded, "robot.q_link", &path).map_err(&fail)?;
    let (_, theta) = flat(&loaded, "robot.q", &path).map_err(&fail)?;
    let t = &loaded.time;
    if t.len() < 10 {
        return Err(fail(format!("{path} holds {} samples: record a run that moves the arm", t.len())));
    }
    let dt = (t[t.len() - 1] - t[0]) / (t.len() - 1) as f64;
    let mut data = morc_model::Data::new(&robot.model);
    let fits = morc_model::fit_stiffness(&robot.model, &mut data, &q, &theta, dt);
    let out = lua.create_table()?;
    for &i in &elastic {
        let e = lua.create_table()?;
        e.set("joint", robot.joints[i].name.as_str())?;
        match fits[i] {
            Some(f) => {
                e.set("stiffness", f.stiffness)?;
                e.set("damping", f.damping)?;
                e.set("residual", f.residual)?;
            }
            None => e.set("unseen", "its gear's deflection did not change in the run: move the joint against its load")?,
        }
        out.push(e)?;
    }
    Ok(out)
}

/// The signal `name` of a loaded recording as flat samples (sample by sample).
fn flat(loaded: &morc_record::plot::Loaded, name: &str, path: &str) -> Result<(usize, Vec<f64>), String> {
    let s = loaded.signals.iter().find(|s| s.name == name).ok_or_else(|| format!("{path} has no signal {name}: record robot.q, robot.qd and robot.tau"))?;
    let n = s.columns.len();
    let len = s.columns.first().map_or(0, Vec::len);
    Ok((n, (0..len).flat_map(|i| s.columns.iter().map(move |c| c[i])).collect()))
}

/// A recording's robot.q, robot.qd and robot.tau with its sample period.
struct Recorded {
    nv: usize,
    q: Vec<f64>,
    qd: Vec<f64>,
    tau: Vec<f64>,
    dt: f64,
}

fn read_recording(path: &str) -> Result<Recorded, String> {
    let loaded = morc_record::plot::load(std::path::Path::new(path), &["robot.q", "robot.qd", "robot.tau"]).map_err(|e| e.to_string())?;
    let (nv, q) = flat(&loaded, "robot.q", path)?;
    let (_, qd) = flat(&loaded, "robot.qd", path)?;
    let (_, tau) = flat(&loaded, "robot.tau", path)?;
    let t = &loaded.time;
    if t.len() < 3 {
        return Err(format!("{path} holds {} samples: record a run", t.len()));
    }
    let dt = (t[t.len() - 1] - t[0]) / (t.len() - 1) as f64;
    // The accelerations are velocity differences over one sample: a gap would spoil them.
    if let Some(k) = t.windows(2).position(|w| ((w[1] - w[0]) - dt).abs() > 1e-6 * dt.max(1e-9)) {
        return Err(format!("{path}: the samples are not evenly spaced (between samples {} and {}): record every cycle, without gaps", k + 1, k + 2));
    }
    Ok(Recorded { nv, q, qd, tau, dt })
}

/// `morc.dynid.read(path)`.
fn read(lua: &Lua, path: String) -> mlua::Result<Table> {
    let origin = caller(lua);
    let r = read_recording(&path).map_err(|e| raise(ErrorKind::Record, format!("{origin}: morc.dynid.read: {e}")))?;
    let t = lua.create_table()?;
    t.set("q", lua.create_sequence_from(r.q)?)?;
    t.set("qd", lua.create_sequence_from(r.qd)?)?;
    t.set("tau", lua.create_sequence_from(r.tau)?)?;
    t.set("dt", r.dt)?;
    t.set("n", r.nv)?;
    t.set("path", path)?;
    Ok(t)
}

impl LuaDynId {
    /// Measurements from a recording's path or a table { q, qd, tau, dt } (flat, nv per sample).
    fn measurements(&self, source: &Value, every: usize, what: &str) -> mlua::Result<Measurements> {
        let nv = self.robot.dof();
        let fail = |m: String| raise(ErrorKind::Record, format!("{what}: {m}"));
        let r = match source {
            Value::String(s) => read_recording(&s.to_str()?).map_err(fail)?,
            Value::Table(t) => {
                let get =
                    |k: &str| -> mlua::Result<Vec<f64>> { t.get::<Option<Vec<f64>>>(k)?.ok_or_else(|| fail(format!("the data needs {k} (flat, {nv} values per sample; morc.dynid.read gives it)"))) };
                let (q, qd, tau) = (get("q")?, get("qd")?, get("tau")?);
                let dt = t.get::<Option<f64>>("dt")?.ok_or_else(|| fail("the data needs dt, the sample period (s)".into()))?;
                Recorded { nv, q, qd, tau, dt }
            }
            _ => return Err(fail(format!("give a recording's path or {{ q, qd, tau, dt }}, got a {}", source.type_name()))),
        };
        if r.nv != nv {
            return Err(fail(format!("the recording has {} joints, robot '{}' {nv}", r.nv, self.robot.name)));
        }
        Measurements::from_drive_record(nv, &r.q, &r.qd, &r.tau, r.dt, every).map_err(fail)
    }

    /// β from a table: a list of numbers, or an estimate ({ beta = … }).
    fn beta(&self, v: &Value, what: &str) -> mlua::Result<Vec<f64>> {
        let t = match v {
            Value::Table(t) => t.get::<Option<Table>>("beta")?.unwrap_or_else(|| t.clone()),
            _ => return Err(raise(ErrorKind::Lua, format!("{what}: give the base parameters (a list, or an estimate with beta), got a {}", v.type_name()))),
        };
        let beta: Vec<f64> = t.sequence_values::<f64>().collect::<mlua::Result<_>>()?;
        if beta.len() != self.base.count() {
            return Err(raise(ErrorKind::Lua, format!("{what}: {} base parameters given, robot '{}' has {}", beta.len(), self.robot.name, self.base.count())));
        }
        Ok(beta)
    }
}

fn excitation_table(lua: &Lua, t: &FourierTrajectory, condition: f64, evaluations: usize, robot: &Robot) -> mlua::Result<Table> {
    let out = lua.create_table()?;
    out.set("condition", condition)?;
    out.set("evaluations", evaluations)?;
    out.set("order", t.order())?;
    out.set("omega", t.omega)?;
    out.set("period", t.period())?;
    out.set("q0", lua.create_sequence_from(t.q0.iter().copied())?)?;
    out.set("a", lua.create_sequence_from(t.a.iter().flatten().copied())?)?;
    out.set("b", lua.create_sequence_from(t.b.iter().flatten().copied())?)?;
    let start = t.start();
    out.set("start", lua.create_sequence_from(start.iter().enumerate().map(|(j, x)| x / super::robot_params::Units::LUA.joint(robot, j)))?)?;
    Ok(out)
}

fn trajectory_of(t: &Table, n: usize, what: &str) -> mlua::Result<FourierTrajectory> {
    let fail = |m: &str| raise(ErrorKind::Lua, format!("{what}: {m}"));
    let omega: f64 = t.get::<Option<f64>>("omega")?.ok_or_else(|| fail("the excitation needs omega (id:excite gives it)"))?;
    let q0: Vec<f64> = t.get::<Option<Vec<f64>>>("q0")?.ok_or_else(|| fail("the excitation needs q0"))?;
    let a: Vec<f64> = t.get::<Option<Vec<f64>>>("a")?.ok_or_else(|| fail("the excitation needs a"))?;
    let b: Vec<f64> = t.get::<Option<Vec<f64>>>("b")?.ok_or_else(|| fail("the excitation needs b"))?;
    if q0.len() != n || a.is_empty() || !a.len().is_multiple_of(n) || a.len() != b.len() {
        return Err(fail(&format!("q0 needs {n} values and a, b order × {n} each")));
    }
    let order = a.len() / n;
    Ok(FourierTrajectory { omega, q0, a: a.chunks(order).map(<[f64]>::to_vec).collect(), b: b.chunks(order).map(<[f64]>::to_vec).collect() })
}

/// Writes the estimate as a Lua file at `path`, or beside it when it exists; returns the file.
fn save(id: &LuaDynId, path: &str, estimate: &Table, what: &str) -> mlua::Result<String> {
    let beta = id.beta(&Value::Table(estimate.clone()), what)?;
    let std: Vec<f64> = estimate.get::<Option<Vec<f64>>>("relative_std")?.unwrap_or_default();
    let mut text = format!(
        "-- Identified dynamic parameters of {} (morc.dynid): the base parameters β in SI units (kg, kg·m, kg·m²,\n-- N·m·s/rad, N·m), τ = Y_b(q, q̇, q̈)·β; std_percent is each one's standard deviation in % of it.\n-- Names: linkJ.m, .mx/.my/.mz (first moments), .Ixx … .Izz (about the joint frame's origin); JOINT.Ia (motor inertia),\n-- .fv (viscous), .fc (Coulomb friction).\nreturn {{\n  robot = {:?},\n",
        id.robot.name, id.robot.name
    );
    for key in ["condition", "samples"] {
        if let Some(x) = estimate.get::<Option<f64>>(key)? {
            text += &format!("  {key} = {x},\n");
        }
    }
    text += "  parameters = {\n";
    for (i, (name, b)) in id.base.names().iter().zip(&beta).enumerate() {
        let s = std.get(i).map_or(String::new(), |s| format!(", std_percent = {s:.3}"));
        text += &format!("    {{ name = {name:?}, value = {b:e}{s} }},\n");
    }
    text += "  },\n}\n";
    crate::new_file::write_new(path, &text, what)
}

impl UserData for LuaDynId {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("count", |_, this| Ok(this.base.count()));
        fields.add_field_method_get("names", |lua, this| lua.create_sequence_from(this.base.names().iter().cloned()));
        fields.add_field_method_get("standard_names", |lua, this| lua.create_sequence_from(this.base.standard_names().iter().cloned()));
        fields.add_field_method_get("dropped", |lua, this| {
            let out = lua.create_table()?;
            for (name, r, combined) in this.base.dependent() {
                let t = lua.create_table()?;
                t.set("name", name)?;
                t.set("r", r)?;
                t.set("combined", combined)?;
                out.push(t)?;
            }
            Ok(out)
        });
    }
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method("__tostring", |_, this, ()| Ok(format!("dynamic identification of robot '{}': {} base parameters", this.robot.name, this.base.count())));
        methods.add_method("parameters", |lua, this, robot: Option<Value>| {
            let robot = match robot {
                Some(v) if !v.is_nil() => robot_arg(&v, &format!("{}: id:parameters(robot)", caller(lua)))?,
                _ => this.robot.clone(),
            };
            if robot.dof() != this.robot.dof() || morc_model::parameter_count(&robot.model) != this.base.standard_names().len() {
                return Err(raise(ErrorKind::Robot, format!("{}: id:parameters: robot '{}' is not built as '{}'", caller(lua), robot.name, this.robot.name)));
            }
            lua.create_sequence_from(this.base.base_of(&morc_model::standard_parameters(&robot.model)))
        });
        methods.add_method("standard_parameters", |lua, this, ()| lua.create_sequence_from(morc_model::standard_parameters(&this.robot.model)));
        methods.add_method("regressor", |lua, this, (q, v, a): (Value, Value, Value)| {
            let n = this.robot.dof();
            let what = format!("{}: id:regressor(q, v, a)", caller(lua));
            let mut x = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
            for (out, (val, name)) in x.iter_mut().zip([(&q, "q"), (&v, "v"), (&a, "a")]) {
                let vin = VecIn::of(val, super::linalg::Arg(&what, name))?;
                if vin.len() != n {
                    return Err(raise(ErrorKind::Lua, format!("{what}: {name} has {} entries, the robot {n} joints", vin.len())));
                }
                vin.copy_to(out, super::linalg::Arg(&what, name))?;
            }
            let model = &this.robot.model;
            let mut data = morc_model::Data::new(model);
            let mut y = nalgebra::DMatrix::zeros(n, morc_model::parameter_count(model));
            morc_model::regressor_with_drives(model, &mut data, &x[0], &x[1], &x[2], &mut y);
            Ok(LuaMat::new(y))
        });
        methods.add_method("excite", |lua, this, opts: Option<Table>| {
            let what = format!("{}: id:excite", caller(lua));
            let d = ExcitationOptions::default();
            let floor: Option<f64> = match &opts {
                Some(t) => match t.get::<Value>("floor")? {
                    Value::Nil => d.floor,
                    Value::Boolean(false) => None,
                    Value::Number(x) => Some(x * 1e-3),
                    Value::Integer(x) => Some(x as f64 * 1e-3),
                    v => return Err(raise(ErrorKind::Lua, format!("{what}: floor must be a height in mm (or false: none), got a {}", v.type_name()))),
                },
                None => d.floor,
            };
            let o = ExcitationOptions {
                order: opt(&opts, "order", d.order)?,
                base_frequency: opt(&opts, "frequency", d.base_frequency)?,
                samples: opt(&opts, "samples", d.samples)?,
                evaluations: opt(&opts, "evaluations", d.evaluations)?,
                restarts: opt(&opts, "restarts", d.restarts)?,
                seed: opt(&opts, "seed", d.seed)?,
                margin: opt(&opts, "margin", d.margin)?,
                floor,
            };
            let e = this.base.excite(&this.robot.model, &this.bounds, &o).map_err(|e| raise(ErrorKind::Robot, format!("{what}: robot '{}': {e}", this.robot.name)))?;
            excitation_table(lua, &e.trajectory, e.condition, e.evaluations, &this.robot)
        });
        methods.add_method("condition", |lua, this, (excitation, samples): (Table, Option<usize>)| {
            let t = trajectory_of(&excitation, this.robot.dof(), &format!("{}: id:condition", caller(lua)))?;
            Ok(this.base.condition_along(&this.robot.model, &t, samples.unwrap_or(60)))
        });
        methods.add_method("estimate", |lua, this, (source, opts): (Value, Option<Table>)| {
            let what = format!("{}: id:estimate", caller(lua));
            let m = this.measurements(&source, opt(&opts, "every", 1usize)?, &what)?;
            let e = this.base.estimate(&this.robot.model, &m, opt(&opts, "weighted", true)?).map_err(|e| raise(ErrorKind::Robot, format!("{what}: {e}")))?;
            let out = lua.create_table()?;
            out.set("beta", lua.create_sequence_from(e.beta)?)?;
            out.set("names", lua.create_sequence_from(this.base.names().iter().cloned())?)?;
            out.set("sigma", lua.create_sequence_from(e.sigma)?)?;
            out.set("relative_std", lua.create_sequence_from(e.relative_std)?)?;
            out.set("condition", e.condition)?;
            out.set("samples", e.samples)?;
            out.set("weighted", e.weighted)?;
            Ok(out)
        });
        methods.add_method("validate", |lua, this, (beta, source, opts): (Value, Value, Option<Table>)| {
            let what = format!("{}: id:validate", caller(lua));
            let beta = this.beta(&beta, &what)?;
            let m = this.measurements(&source, opt(&opts, "every", 1usize)?, &what)?;
            let predicted = this.base.predict(&this.robot.model, &beta, &m);
            let nv = this.robot.dof();
            let (mut err, mut meas) = (vec![0.0; nv], vec![0.0; nv]);
            for (k, (p, t)) in predicted.iter().zip(&m.tau).enumerate() {
                err[k % nv] += (p - t).powi(2);
                meas[k % nv] += t * t;
            }
            let out = lua.create_table()?;
            out.set("rms_error", 100.0 * (err.iter().sum::<f64>() / meas.iter().sum::<f64>().max(f64::MIN_POSITIVE)).sqrt())?;
            out.set("joints", lua.create_sequence_from(err.iter().zip(&meas).map(|(e, m)| 100.0 * (e / m.max(f64::MIN_POSITIVE)).sqrt()))?)?;
            out.set("samples", m.len())?;
            out.set("predicted", lua.create_sequence_from(predicted)?)?;
            out.set("measured", lua.create_sequence_from(m.tau)?)?;
            Ok(out)
        });
        methods.add_method("save", |lua, this, (path, estimate): (String, Table)| save(this, &crate::new_file::checked_path(lua, &path), &estimate, &format!("{}: id:save", caller(lua))));
    }
}

const DYNID_DOC: &str = r#"morc.dynid — dynamic identification of a robot (SI units: rad, rad/s, rad/s², N·m, kg, m):
τ = Y(q, q̇, q̈)·π with π each link's 10 inertial parameters (m, mx, my, mz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz about the joint
frame's origin, as model:dynamic_parameters) and each joint's motor inertia Ia, viscous fv and Coulomb friction fc.
  morc.dynid.base(robot, { samples = 100, seed = 1, tolerance = 1e-8 }) → id   the base parameters β = π_b + K·π_d by QR
    with column pivoting of Y stacked over random states (id.count, id.names such as "link2.Izz + 0.3906·link3.m",
    id.dropped = { { name, r, combined } }: the parameters combined into others or acting on nothing)
  id:excite { order = 5, frequency = 0.1 Hz, samples = 60, evaluations = 2000, restarts = 2, seed = 1, margin = 0.8,
    floor = 0 mm (false: none) } → excitation   a Fourier series per joint (rest at its start, whole periods) minimising
    the condition number of the base regressor along it, within margin × the joints' limits (position range,
    speed, acceleration, the model's torque) and every joint origin above the floor: { condition, period, start (°),
    omega, q0, a, b, order, evaluations }; run it with the identify library's fourier component
  id:condition(excitation [, samples]) → number   the condition number along an excitation
  morc.dynid.read(path) → data   a recording's robot.q, robot.qd, robot.tau (flat, n per sample) and dt
  id:estimate(path|data, { every = 1, weighted = true }) → estimate   least squares, each joint weighted by its residual
    deviation from an ordinary pass: { beta, names, sigma (per joint, N·m), relative_std (%), condition, samples }.
    A drive's torque at sample k is what it applied since sample k − 1, so the acceleration is (q̇_k − q̇_{k−1})/dt at
    sample k − 1's state: record every cycle
  id:validate(estimate|beta, path|data, { every = 1 }) → { rms_error (% of the measured torque's rms), joints, samples,
    predicted, measured }
  id:parameters([robot]) → β of a robot's model (the nominal one, or a perturbed "true" robot); id:standard_parameters() → π
  id:regressor(q, v, a) → mat   Y with the drive columns (n × (10·links + 3·n))
  id:save(path, estimate) → file   a Lua file returning { robot, condition, samples, parameters = { { name, value,
    std_percent } } }; an existing file is never replaced: then NAME-001.lua, NAME-002.lua … beside it (the file written)
  morc.dynid.perturbed(robot, { seed = 1, inertial = 0.1, drive = 0.2 }) → robot   masses, centres of mass, inertias
    and drive trains off by up to those fractions: a hidden "true" robot to simulate an identification
  morc.dynid.stiffness(robot, path) → { { joint, stiffness, damping, residual } } per elastic gear, fitted to a recorded
    run that measured the links (robot.q_link): τ_s = K·φ + D·φ̇, φ = θ − q; without robot.q_link an error saying the
    stiffness cannot be seen from the motors
Types:
  morc.dynid.base(robot: robot, opts?: { samples?: integer, seed?: integer, tolerance?: number }) → dynid
  morc.dynid.read(path: string) → dynid_data
  morc.dynid.perturbed(robot: robot, opts?: { seed?: integer, inertial?: number, drive?: number }) → robot
  morc.dynid.stiffness(robot: robot, path: string) → table[]
  dynid.count: integer   dynid.names: string[]   dynid.standard_names: string[]   dynid.dropped: table[]
  dynid:excite(opts?: { order?: integer, frequency?: number, samples?: integer, evaluations?: integer, restarts?: integer, seed?: integer, margin?: number, floor?: number|boolean }) → table
  dynid:condition(excitation: table, samples?: integer) → number
  dynid:estimate(source: string|dynid_data, opts?: { every?: integer, weighted?: boolean }) → table
  dynid:validate(estimate: table, source: string|dynid_data, opts?: { every?: integer }) → table
  dynid:parameters(robot?: robot) → number[]   dynid:standard_parameters() → number[]
  dynid:regressor(q: vec|number[], v: vec|number[], a: vec|number[]) → mat   dynid:save(path: string, estimate: table) → string
  dynid_data.q: number[]   dynid_data.qd: number[]   dynid_data.tau: number[]   dynid_data.dt: number   dynid_data.n: integer"#;

/// Installs `morc.dynid`.
pub(crate) fn install(lua: &Lua, morc: &Table) -> mlua::Result<()> {
    let t = lua.create_table()?;
    let base_fn = lua.create_function(base)?;
    let read_fn = lua.create_function(read)?;
    let perturbed_fn = lua.create_function(perturbed)?;
    t.set("base", base_fn.clone())?;
    t.set("read", read_fn.clone())?;
    t.set("perturbed", perturbed_fn.clone())?;
    let stiffness_fn = lua.create_function(stiffness)?;
    t.set("stiffness", stiffness_fn.clone())?;
    morc.set("dynid", t.clone())?;
    doc(morc, t, DYNID_DOC)?;
    doc(morc, base_fn, "morc.dynid.base(robot: robot, opts?: { samples?: integer, seed?: integer, tolerance?: number }) → dynid  the robot's base parameters (see morc.dynid)")?;
    doc(morc, read_fn, "morc.dynid.read(path: string) → dynid_data  a recording's robot.q, robot.qd, robot.tau (flat) and its sample period dt")?;
    doc(
        morc,
        stiffness_fn,
        "morc.dynid.stiffness(robot: robot, path: string) → { { joint: string, stiffness?: number, damping?: number, residual?: number, unseen?: string } }  the elastic gears' stiffness (N·m/rad) and damping fitted to a recorded run that measured the links (robot.q_link): τ_s = K·φ + D·φ̇ per elastic joint, τ_s from the links' model (identify it first), residual in % of τ_s's rms; without robot.q_link it says the stiffness cannot be seen",
    )?;
    doc(
        morc,
        perturbed_fn,
        "morc.dynid.perturbed(robot: robot, opts?: { seed?: integer, inertial?: number, drive?: number }) → robot  a robot whose dynamics differ from robot's (a hidden \"true\" robot)",
    )?;
    Ok(())
}
