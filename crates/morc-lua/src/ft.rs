//! Force/torque sensors in Lua: the tool's load and the sensor's bias identified from static
//! poses and compensated at every step (`morc.ft`, on `morc_model::FtLoad`), and a simulated
//! ATI Net F/T streaming over UDP (`morc.sim.netft`, on `morc_netft::SimNetFt`). Registers the
//! `netft` component kind.

use std::sync::Mutex;

use mlua::{Lua, Table, UserData, UserDataFields, UserDataMethods, Value};
use morc_model::{FtLoad, FtLoadError};
use morc_netft::{SimConfig, SimLoad, SimNetFt};
use nalgebra::Matrix3;

use crate::linalg::{doc, mat_in, real, vec_out, Arg, VecIn};
use crate::origin::caller;

/// A load on a force/torque sensor, and how well it fitted the poses it was identified from.
#[derive(Clone, Copy, Debug)]
pub struct LuaFtLoad {
    load: FtLoad,
    /// (force N, torque N·m) residual RMS; None for a load made by hand.
    residual: Option<(f64, f64)>,
}

fn runtime(message: String) -> mlua::Error {
    mlua::Error::runtime(message)
}

/// A 3×3 orientation from a morc matrix or a table of three rows; allocates nothing.
fn rotation(v: &Value, what: impl std::fmt::Display + Copy) -> mlua::Result<Matrix3<f64>> {
    match v {
        Value::Table(rows) => {
            if rows.raw_len() != 3 {
                return Err(runtime(format!("{what} must have 3 rows of 3 numbers, got {} rows", rows.raw_len())));
            }
            let mut m = Matrix3::zeros();
            for r in 0..3 {
                let row: Value = rows.raw_get(r + 1)?;
                let Value::Table(row) = row else { return Err(runtime(format!("{what}[{}] must be a row of 3 numbers, got a {}", r + 1, row.type_name()))) };
                if row.raw_len() != 3 {
                    return Err(runtime(format!("{what}[{}] must have 3 numbers, got {}", r + 1, row.raw_len())));
                }
                for c in 0..3 {
                    m[(r, c)] = real(&row.raw_get::<Value>(c + 1)?, || format!("{what}[{}][{}]", r + 1, c + 1))?;
                }
            }
            Ok(m)
        }
        _ => {
            let m = mat_in(v, what)?;
            if m.m.shape() != (3, 3) {
                return Err(runtime(format!("{what} must be a 3×3 matrix, got {}×{}", m.m.nrows(), m.m.ncols())));
            }
            Ok(Matrix3::from_fn(|r, c| m.m[(r, c)]))
        }
    }
}

/// Six numbers from a morc vector or a table; allocates nothing.
fn wrench(v: &Value, what: impl std::fmt::Display + Copy) -> mlua::Result<[f64; 6]> {
    let mut w = [0.0; 6];
    VecIn::of(v, what)?.copy_to(&mut w, what)?;
    Ok(w)
}

/// Three or six numbers of a `morc.ft.load{…}` field; `default` when absent.
fn numbers<const N: usize>(t: &Table, key: &str, default: [f64; N], at: &str) -> mlua::Result<[f64; N]> {
    let v: Value = t.get(key)?;
    if v.is_nil() {
        return Ok(default);
    }
    let what = format!("{at}: morc.ft.load: {key}");
    let mut out = [0.0; N];
    VecIn::of(&v, what.as_str())?.copy_to(&mut out, what.as_str())?;
    Ok(out)
}

fn numbers_table(lua: &Lua, xs: &[f64]) -> mlua::Result<Table> {
    lua.create_sequence_from(xs.iter().copied())
}

impl UserData for LuaFtLoad {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("mass", |_, this| Ok(this.load.mass));
        fields.add_field_method_get("com", |lua, this| numbers_table(lua, &this.load.com));
        fields.add_field_method_get("bias", |lua, this| numbers_table(lua, &this.load.bias));
        fields.add_field_method_get("residual", |lua, this| match this.residual {
            Some((force, torque)) => {
                let t = lua.create_table()?;
                t.set("force", force)?;
                t.set("torque", torque)?;
                Ok(Some(t))
            }
            None => Ok(None),
        });
    }
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method("__tostring", |_, this, ()| {
            let c = this.load.com;
            Ok(format!("F/T load: {:.3} kg at ({:.4}, {:.4}, {:.4}) m", this.load.mass, c[0], c[1], c[2]))
        });
        methods.add_method("compensate_to", |_, this, (out, rot, raw): (Value, Value, Value)| {
            let w = this
                .load
                .compensate(&rotation(&rot, Arg("load:compensate_to(out, rot, raw)", "rot"))?, &wrench(&raw, Arg("load:compensate_to(out, rot, raw)", "raw"))?);
            match &out {
                // A table of six is written in place: the caller's own array, no new one.
                Value::Table(t) => {
                    for (i, x) in w.iter().enumerate() {
                        t.raw_set(i + 1, *x)?;
                    }
                }
                _ => {
                    let mut v = vec_out(&out, Arg("load:compensate_to(out, rot, raw)", "out"))?;
                    if v.0.len() != 6 {
                        return Err(runtime(format!("load:compensate_to(out, rot, raw): out has {} entries, needs 6 (morc.vec(6))", v.0.len())));
                    }
                    v.0.as_mut_slice().copy_from_slice(&w);
                }
            }
            Ok(())
        });
        methods.add_method("compensate", |lua, this, (rot, raw): (Value, Value)| {
            let w = this.load.compensate(&rotation(&rot, Arg("load:compensate(rot, raw)", "rot"))?, &wrench(&raw, Arg("load:compensate(rot, raw)", "raw"))?);
            numbers_table(lua, &w)
        });
    }
}

/// `morc.ft.identify(samples)`.
fn identify(lua: &Lua, samples: Value) -> mlua::Result<LuaFtLoad> {
    let at = caller(lua);
    let Value::Table(samples) = samples else {
        return Err(runtime(format!("{at}: morc.ft.identify expects a list of samples {{ rot = <3×3>, wrench = {{fx, fy, fz, tx, ty, tz}} }}, got a {}", samples.type_name())));
    };
    let mut poses = Vec::new();
    for (i, s) in samples.sequence_values::<Value>().enumerate() {
        let s = s?;
        let what = |k: &str| format!("{at}: morc.ft.identify: samples[{}].{k}", i + 1);
        let Value::Table(s) = s else { return Err(runtime(format!("{at}: morc.ft.identify: samples[{}] must be {{ rot = …, wrench = … }}, got a {}", i + 1, s.type_name()))) };
        let rot: Value = s.get("rot")?;
        let w: Value = s.get("wrench")?;
        if rot.is_nil() || w.is_nil() {
            return Err(runtime(format!("{}: each sample needs rot (the sensor's orientation in the base frame) and wrench (the raw reading)", what(if rot.is_nil() { "rot" } else { "wrench" }))));
        }
        poses.push((rotation(&rot, what("rot").as_str())?, wrench(&w, what("wrench").as_str())?));
    }
    match FtLoad::identify(&poses) {
        Ok(fit) => Ok(LuaFtLoad { load: fit.load, residual: Some((fit.force_rms, fit.torque_rms)) }),
        Err(FtLoadError::BadPose { index, message }) => Err(runtime(format!("{at}: morc.ft.identify: samples[{}]: {message}", index + 1))),
        Err(e) => Err(runtime(format!("{at}: morc.ft.identify: {e}"))),
    }
}

/// `morc.ft.load { mass, com, bias }`.
fn load(lua: &Lua, t: Table) -> mlua::Result<LuaFtLoad> {
    let at = caller(lua);
    let mass: f64 = t
        .get::<Option<f64>>("mass")?
        .ok_or_else(|| runtime(format!("{at}: morc.ft.load needs mass (kg): morc.ft.load {{ mass = 1.2, com = {{0, 0, 0.05}} }}")))?;
    if !(mass.is_finite() && mass >= 0.0) {
        return Err(runtime(format!("{at}: morc.ft.load: mass = {mass}: give the tool's mass in kg, at least 0")));
    }
    let load = FtLoad { mass, com: numbers(&t, "com", [0.0; 3], &at.to_string())?, bias: numbers(&t, "bias", [0.0; 6], &at.to_string())? };
    Ok(LuaFtLoad { load, residual: None })
}

/// A simulated Net F/T and the handle that sets its load.
pub struct LuaSimNetFt {
    sim: Mutex<Option<SimNetFt>>,
    load: SimLoad,
    address: String,
}

impl UserData for LuaSimNetFt {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("address", |_, this| Ok(this.address.clone()));
        fields.add_field_method_get("sent", |_, this| Ok(this.sim.lock().unwrap_or_else(|p| p.into_inner()).as_ref().map_or(0, |s| s.sent())));
    }
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method("set_load", |_, this, w: Value| {
            this.load.set(wrench(&w, Arg("sim:set_load(w)", "w"))?);
            Ok(())
        });
        methods.add_method("stop", |_, this, ()| {
            if let Some(mut s) = this.sim.lock().unwrap_or_else(|p| p.into_inner()).take() {
                s.stop();
            }
            Ok(())
        });
        methods.add_meta_method("__tostring", |_, this, ()| Ok(format!("simulated Net F/T at {}", this.address)));
    }
}

/// `morc.sim.netft { rate, noise, drop_every, counts_per_force, counts_per_torque }`.
fn sim_netft(lua: &Lua, t: Option<Table>) -> mlua::Result<LuaSimNetFt> {
    let at = caller(lua);
    let mut c = SimConfig::default();
    if let Some(t) = t {
        c.rate = t.get::<Option<f64>>("rate")?.unwrap_or(c.rate);
        c.noise = t.get::<Option<f64>>("noise")?.unwrap_or(c.noise);
        c.drop_every = t.get::<Option<u32>>("drop_every")?.unwrap_or(c.drop_every);
        c.counts_per_force = t.get::<Option<f64>>("counts_per_force")?.unwrap_or(c.counts_per_force);
        c.counts_per_torque = t.get::<Option<f64>>("counts_per_torque")?.unwrap_or(c.counts_per_torque);
    }
    let sim = SimNetFt::start(c).map_err(|e| runtime(format!("{at}: {e}")))?;
    Ok(LuaSimNetFt { load: sim.load(), address: sim.address().to_string(), sim: Mutex::new(Some(sim)) })
}

const FT_DOC: &str = r#"morc.ft — a wrist force/torque sensor's own load, in SI units (kg, m, N, N·m; wrenches are {fx, fy, fz, tx, ty, tz} in the sensor frame):
a sensor at orientation R (its axes in the base frame, z up) reads raw = external + load(R) + bias, the tool's weight giving
f = m·Rᵀg and t = com × f (g = (0, 0, −9.81)).
  morc.ft.identify(samples) → load   from static poses with nothing touching the tool, each { rot = R (morc.mat 3×3 or
    {{…},{…},{…}}), wrench = raw }; at least 3, tilted about two horizontal axes (turns about the vertical tell nothing);
    poses that cannot determine the load are an error naming what stays unknown
  morc.ft.load { mass = kg, com = {x, y, z} m, bias = {6} } → load   one made by hand
  load.mass (kg), load.com (m, sensor frame), load.bias, load.residual = { force = N, torque = N·m } RMS of the fit (nil by hand)
  load:compensate(rot, raw) → {6}   the external wrench; load:compensate_to(out, rot, raw) writes it into out (morc.vec(6)
    or a table of 6), allocating nothing: for a Lua component at the bus rate
Types:
  ft_load.mass: number   ft_load.com: number[]   ft_load.bias: number[]   ft_load.residual: table?
  ft_load:compensate(rot: mat|number[][], raw: vec|number[]) → number[]
  ft_load:compensate_to(out: vec|number[], rot: mat|number[][], raw: vec|number[])"#;

const SIM_DOC: &str = r#"morc.sim.netft { rate = 7000, noise = 0, drop_every = 0, counts_per_force = 1e6, counts_per_torque = 1e6 } → sim
A simulated ATI Net F/T on 127.0.0.1: answers RDT requests like the sensor and streams records at rate (Hz) of the load set
with sim:set_load, plus noise (standard deviation, N and N·m) and every drop_every-th record left out (0: none).
Give sim.address to a `netft` component: a:add("ft", "netft", { address = sim.address }).
  sim:set_load {fx, fy, fz, tx, ty, tz} (N, N·m) allocates nothing and never blocks: call it at every step
  sim.sent (records sent so far), sim:stop() (the sensor falls silent)
Types:
  morc.sim.netft(t?: { rate?: number, noise?: number, drop_every?: integer, counts_per_force?: number, counts_per_torque?: number }) → sim_netft
  sim_netft.address: string   sim_netft.sent: integer
  sim_netft:set_load(w: vec|number[])   sim_netft:stop()"#;

/// Registers the `netft` kind and installs `morc.ft` and `morc.sim.netft`.
pub(crate) fn install(lua: &Lua, morc: &Table) -> mlua::Result<()> {
    crate::kinds::with(lua, |k| morc_netft::register(&mut k.registry)).map_err(runtime)?;
    let ft = lua.create_table()?;
    let identify = lua.create_function(identify)?;
    let load = lua.create_function(load)?;
    ft.set("identify", identify.clone())?;
    ft.set("load", load.clone())?;
    morc.set("ft", ft.clone())?;
    doc(morc, ft, FT_DOC)?;
    doc(morc, identify, "morc.ft.identify(samples: { rot: mat|number[][], wrench: vec|number[] }[]) → ft_load  the load and bias from static poses (see morc.ft)")?;
    doc(morc, load, "morc.ft.load(t: { mass: number, com?: number[], bias?: number[] }) → ft_load  a load given by hand: mass kg, com m in the sensor frame, bias N and N·m")?;
    let sim = match morc.get::<Option<Table>>("sim")? {
        Some(t) => t,
        None => {
            let t = lua.create_table()?;
            morc.set("sim", t.clone())?;
            t
        }
    };
    let netft = lua.create_function(sim_netft)?;
    sim.set("netft", netft.clone())?;
    doc(morc, netft, SIM_DOC)?;
    Ok(())
}
