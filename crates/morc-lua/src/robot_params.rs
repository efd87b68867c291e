//! Parameters of robot components as Lua writes them — degrees, millimetres, poses as
//! `{x, y, z, a, b, c}` or `{ pos = {…}, rpy = {…} }`, moves as tables — turned into the SI
//! values the components take. With `units = "rad"` numbers are taken as SI already.

use mlua::Table;

use super::convert::to_value;
use morc_kernel::Value;
use morc_motion::{Move, MoveSpec};
use morc_robot::components::trajectory::encode_moves;
use morc_robot::Robot;

/// How Lua's numbers map to SI: factors for lengths and angles.
#[derive(Clone, Copy)]
pub struct Units {
    pub length: f64,
    pub angle: f64,
}

impl Units {
    pub const LUA: Units = Units { length: 1e-3, angle: std::f64::consts::PI / 180.0 };
    pub const SI: Units = Units { length: 1.0, angle: 1.0 };

    /// The factor to SI of joint `i`'s positions: a length for a prismatic joint, an angle
    /// for a revolute one.
    pub fn joint(&self, robot: &Robot, i: usize) -> f64 {
        if robot.is_prismatic(i) {
            self.length
        } else {
            self.angle
        }
    }
}

fn err(m: String) -> mlua::Error {
    mlua::Error::runtime(m)
}

fn numbers(v: &mlua::Value, what: &str) -> mlua::Result<Vec<f64>> {
    match to_value(v, what)? {
        Value::Vector(x) => Ok(x),
        Value::Real(x) => Ok(vec![x]),
        Value::Integer(x) => Ok(vec![x as f64]),
        _ => Err(err(format!("{what}: expected numbers"))),
    }
}

/// A joint vector of the robot (° or rad; mm or m for prismatic joints) in SI.
pub fn joints(robot: &Robot, v: &mlua::Value, units: Units, what: &str) -> mlua::Result<Vec<f64>> {
    let x = numbers(v, what)?;
    if x.len() != robot.dof() {
        return Err(err(format!("{what}: expected {} joint positions (one per joint of {}), got {}", robot.dof(), robot.name, x.len())));
    }
    Ok(x.into_iter().enumerate().map(|(i, a)| a * units.joint(robot, i)).collect())
}

/// A pose `{x, y, z, a, b, c}` or `{ pos = {x, y, z}, rpy = {a, b, c} }` → [m, rad] (roll, pitch, yaw).
pub fn pose(v: &mlua::Value, units: Units, what: &str) -> mlua::Result<[f64; 6]> {
    let bad = || err(format!("{what}: a pose is {{x, y, z, a, b, c}} (mm, ° roll-pitch-yaw) or {{ pos = {{…}}, rpy = {{…}} }}"));
    let x = match v {
        mlua::Value::Table(t) if t.contains_key("pos")? => {
            let pos = numbers(&t.get("pos")?, &format!("{what}.pos"))?;
            let rpy = match t.get::<mlua::Value>("rpy")? {
                mlua::Value::Nil => vec![0.0; 3],
                r => numbers(&r, &format!("{what}.rpy"))?,
            };
            if pos.len() != 3 || rpy.len() != 3 {
                return Err(bad());
            }
            [pos, rpy].concat()
        }
        other => numbers(other, what).map_err(|_| bad())?,
    };
    if x.len() != 6 {
        return Err(bad());
    }
    Ok([x[0] * units.length, x[1] * units.length, x[2] * units.length, x[3] * units.angle, x[4] * units.angle, x[5] * units.angle])
}

/// A point `{x, y, z}` (or a pose, whose position is taken) → m.
pub fn point(v: &mlua::Value, units: Units, what: &str) -> mlua::Result<[f64; 3]> {
    if let mlua::Value::Table(t) = v {
        if t.contains_key("pos")? || t.raw_len() == 6 {
            let p = pose(v, units, what)?;
            return Ok([p[0], p[1], p[2]]);
        }
    }
    let x = numbers(v, what)?;
    if x.len() != 3 {
        return Err(err(format!("{what}: a point is {{x, y, z}} (mm)")));
    }
    Ok([x[0] * units.length, x[1] * units.length, x[2] * units.length])
}

/// `{ "ptp", q, blend = mm, speed = % }`, `{ "lin", pose, … }`, `{ "circ", via, pose, … }`,
/// `{ "spline", q1, q2, …, … }` → a move.
pub fn parse_move(robot: &Robot, t: &Table, units: Units, what: &str) -> mlua::Result<MoveSpec> {
    let kind: String = t.get::<Option<String>>(1)?.ok_or_else(|| err(format!("{what}: a move starts with its kind: {{ \"ptp\" | \"lin\" | \"circ\" | \"spline\", … }}")))?;
    let arg = |i: i64| t.get::<mlua::Value>(i);
    let motion = match kind.as_str() {
        "ptp" => Move::Ptp { target: joints(robot, &arg(2)?, units, &format!("{what} (ptp) target"))? },
        "lin" => Move::Lin { target: pose(&arg(2)?, units, &format!("{what} (lin) target"))? },
        "circ" => Move::Circ { via: point(&arg(2)?, units, &format!("{what} (circ) via"))?, target: pose(&arg(3)?, units, &format!("{what} (circ) target"))? },
        "spline" => {
            let mut points = Vec::new();
            for i in 2..=t.raw_len() as i64 {
                points.extend(joints(robot, &arg(i)?, units, &format!("{what} (spline) point {}", i - 1))?);
            }
            if points.is_empty() {
                return Err(err(format!("{what}: a spline needs at least one point: {{ \"spline\", q1, q2, … }}")));
            }
            Move::Spline { points }
        }
        other => return Err(err(format!("{what}: unknown move kind '{other}' (ptp, lin, circ, spline)"))),
    };
    let blend = t.get::<Option<f64>>("blend")?.unwrap_or(0.0) * units.length;
    let speed = t.get::<Option<f64>>("speed")?.unwrap_or(100.0);
    // NaN fails these checks too.
    if !(blend >= 0.0 && speed > 0.0 && speed <= 100.0) {
        return Err(err(format!("{what}: blend must be ≥ 0 mm and speed in (0, 100] %")));
    }
    Ok(MoveSpec { motion, blend, velocity_scale: speed / 100.0 })
}

/// One parameter of robot component `kind` from Lua to SI.
pub fn convert(robot: &Robot, kind: &str, key: &str, v: &mlua::Value, units: Units, what: &str) -> mlua::Result<Value> {
    let scaled = |factor: f64| -> mlua::Result<Value> {
        Ok(match to_value(v, what)? {
            Value::Vector(x) => Value::Vector(x.into_iter().map(|a| a * factor).collect()),
            Value::Real(x) => Value::Real(x * factor),
            Value::Integer(x) => Value::Real(x as f64 * factor),
            other => other,
        })
    };
    match (kind, key) {
        ("ptp", "target") => Ok(Value::Vector(joints(robot, v, units, what)?)),
        ("lin" | "circ" | "time_optimal", "target") => Ok(Value::Vector(pose(v, units, what)?.to_vec())),
        ("circ" | "time_optimal", "via") => Ok(Value::Vector(point(v, units, what)?.to_vec())),
        ("spline" | "time_optimal", "points") => {
            let mlua::Value::Table(list) = v else { return Err(err(format!("{what}: a list of joint vectors {{ q1, q2, … }}"))) };
            let mut points = Vec::new();
            for (i, q) in list.clone().sequence_values::<mlua::Value>().enumerate() {
                points.extend(joints(robot, &q?, units, &format!("{what}[{}]", i + 1))?);
            }
            Ok(Value::Vector(points))
        }
        ("path", "moves") => {
            let mlua::Value::Table(list) = v else { return Err(err(format!("{what}: a list of moves {{ {{ \"ptp\", q }}, {{ \"lin\", pose, blend = mm }}, … }}"))) };
            let mut moves = Vec::new();
            for (i, m) in list.clone().sequence_values::<Table>().enumerate() {
                let m = m.map_err(|_| err(format!("{what}: move {} must be a table", i + 1)))?;
                moves.push(parse_move(robot, &m, units, &format!("move {}", i + 1))?);
            }
            Ok(Value::Vector(encode_moves(&moves, robot.dof())))
        }
        ("monitor", "max_error" | "tolerance") | (_, "rot_vel" | "rot_acc") => scaled(units.angle),
        (_, "lin_vel" | "lin_acc") => scaled(units.length),
        _ => to_value(v, what),
    }
}
