//! Parameters of robot components as Lua writes them — degrees, millimetres, poses as
//! `{x, y, z, a, b, c}` or `{ pos = {…}, rpy = {…} }`, moves as tables — turned into the SI
//! values the components take, by the unit each parameter declares (its `ParamInfo::unit`):
//!
//! - an SI unit whose Lua numbers differ (units.rs: rad, m and their rates /s, /s²): each number
//!   from degrees or millimetres; a vector in m is a point `{x, y, z}`, or a pose (its position);
//! - a per-joint unit ("rad|m", [`morc_robot::per_joint_unit`]): each joint's number in its own
//!   Lua unit, degrees or mm; one number is every joint's, `{ q1, q2, … }` joint vectors one
//!   after the other;
//! - "m, rad": a pose, x y z (mm) and roll pitch yaw (°);
//! - any other unit (s, Hz, °, mm …) or none: the numbers as given.
//!
//! Moves (`{ { "ptp", q }, { "lin", pose, blend = mm }, … }`) are told by their shape and
//! become the records the path component reads ([`moves_value`]). With `units = "rad"` numbers
//! are taken as SI already.

use mlua::Table;

use super::convert::to_value;
use super::units::{self, Dimension};
use morc_kernel::{ParamInfo, Value};
use morc_motion::{Move, MoveSpec};
use morc_robot::components::trajectory::moves_value;
use morc_robot::{is_per_joint_unit, Robot};

/// How Lua's numbers map to SI: factors for lengths and angles.
#[derive(Clone, Copy)]
pub struct Units {
    pub length: f64,
    pub angle: f64,
}

impl Units {
    pub const LUA: Units = Units { length: units::MM, angle: units::DEG };
    pub const SI: Units = Units { length: 1.0, angle: 1.0 };

    /// The factor to SI unit `si` ("rad/s", "m", "N·m") of a number given in these units.
    pub fn of(&self, si: &str) -> f64 {
        match units::dimension(si) {
            Some(Dimension::Angle) => self.angle,
            Some(Dimension::Length) => self.length,
            None => 1.0,
        }
    }

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

/// The unit of joint positions, each joint's own.
const JOINT_POSITIONS: &str = "rad|m";

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
    joints_in(robot, v, JOINT_POSITIONS, units, what)
}

/// A joint vector of the robot in per-joint unit `declared` ("rad|m", "rad/s|m/s") → SI.
fn joints_in(robot: &Robot, v: &mlua::Value, declared: &str, units: Units, what: &str) -> mlua::Result<Vec<f64>> {
    let x = numbers(v, what)?;
    if x.len() != robot.dof() {
        return Err(err(format!("{what}: expected {} joint positions (one per joint of {}), got {}", robot.dof(), robot.name, x.len())));
    }
    Ok(x.into_iter().enumerate().map(|(i, a)| a * units.of(robot.unit_of_joint(declared, i))).collect())
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

/// Parameter `param` of a robot component from Lua to what the component takes, by the unit
/// it declares (see the module's documentation).
pub fn convert(robot: &Robot, param: &ParamInfo, v: &mlua::Value, units: Units, what: &str) -> mlua::Result<Value> {
    if let Some(list) = moves(v)? {
        return moves_of(robot, &list, units, what);
    }
    // Records given as such would skip the units (mm, °, %) of the form above.
    if param.name == "moves" && matches!(param.value, Value::List(_)) && !matches!(v, mlua::Value::Table(t) if t.is_empty()) {
        return Err(err(format!("{what}: moves are {{ {{ \"ptp\", q }}, {{ \"lin\", pose, blend = mm }}, {{ \"circ\", via, pose }}, {{ \"spline\", q1, q2, … }}, … }}")));
    }
    let unit = param.unit.as_str();
    if is_per_joint_unit(unit) {
        return per_joint(robot, unit, v, units, what);
    }
    if unit == "m, rad" {
        return Ok(Value::Vector(pose(v, units, what)?.to_vec()));
    }
    if unit == "m" && matches!(param.value, Value::Vector(_)) {
        return Ok(Value::Vector(point(v, units, what)?.to_vec()));
    }
    let factor = units.of(unit);
    Ok(match to_value(v, what)? {
        Value::Vector(x) => Value::Vector(x.into_iter().map(|a| a * factor).collect()),
        Value::Real(x) if factor != 1.0 => Value::Real(x * factor),
        Value::Integer(x) if factor != 1.0 => Value::Real(x as f64 * factor),
        other => other,
    })
}

/// A parameter in a per-joint unit: one number (every joint's), a joint vector, or a list of
/// joint vectors `{ q1, q2, … }` one after the other.
fn per_joint(robot: &Robot, unit: &str, v: &mlua::Value, units: Units, what: &str) -> mlua::Result<Value> {
    let each = |x: f64| (0..robot.dof()).map(|i| x * units.of(robot.unit_of_joint(unit, i))).collect();
    match v {
        mlua::Value::Integer(x) => Ok(Value::Vector(each(*x as f64))),
        mlua::Value::Number(_) => match to_value(v, what)? {
            Value::Real(x) => Ok(Value::Vector(each(x))),
            other => Ok(other),
        },
        mlua::Value::Table(list) if matches!(list.raw_get::<mlua::Value>(1)?, mlua::Value::Table(_)) => {
            let mut points = Vec::new();
            for (i, q) in list.clone().sequence_values::<mlua::Value>().enumerate() {
                points.extend(joints_in(robot, &q?, unit, units, &format!("{what}[{}]", i + 1))?);
            }
            Ok(Value::Vector(points))
        }
        mlua::Value::Table(list) if list.raw_len() == 0 => Ok(Value::Vector(Vec::new())),
        _ => Ok(Value::Vector(joints_in(robot, v, unit, units, what)?)),
    }
}

/// The moves of `v` when it is a list of them (tables that start with their kind).
fn moves(v: &mlua::Value) -> mlua::Result<Option<Table>> {
    let mlua::Value::Table(list) = v else { return Ok(None) };
    let mlua::Value::Table(first) = list.raw_get::<mlua::Value>(1)? else { return Ok(None) };
    Ok(matches!(first.raw_get::<mlua::Value>(1)?, mlua::Value::String(_)).then(|| list.clone()))
}

/// `{ { "ptp", q }, { "lin", pose, blend = mm }, … }` as the path component reads them.
fn moves_of(robot: &Robot, list: &Table, units: Units, what: &str) -> mlua::Result<Value> {
    let mut moves = Vec::new();
    for (i, m) in list.clone().sequence_values::<mlua::Value>().enumerate() {
        let mlua::Value::Table(m) = m? else { return Err(err(format!("{what}: move {} must be a table", i + 1))) };
        moves.push(parse_move(robot, &m, units, &format!("move {}", i + 1))?);
    }
    Ok(moves_value(&moves))
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::sync::Arc;

    /// The arm of tests/data/finger_arm.urdf as `morc.robot` defines it: three revolute joints
    /// and a prismatic finger.
    fn finger_arm(lua: &mlua::Lua) -> Arc<Robot> {
        let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/finger_arm.urdf");
        let r: mlua::AnyUserData = lua
            .load(format!(r#"return morc.robot {{ name = "finger arm", model = morc.model.urdf "{file}", joints = {{ {{ "shoulder", limits = {{ acc = 300 }} }}, {{ "elbow", limits = {{ acc = 300 }} }}, {{ "wrist", limits = {{ acc = 300 }} }}, {{ "finger_joint", limits = {{ acc = 1000 }} }} }} }}"#))
            .eval()
            .unwrap();
        r.borrow::<crate::LuaRobot>().map(|robot| robot.0.clone()).unwrap()
    }

    /// `kind`'s parameter `key` of `robot` given as the Lua expression `lua_value`, converted.
    fn converted(lua: &mlua::Lua, robot: &Arc<Robot>, kind: &str, key: &str, lua_value: &str, units: Units) -> mlua::Result<Value> {
        let c = morc_robot::components::factory(robot, kind).unwrap()().unwrap();
        let param = c.info().params.iter().find(|p| p.name == key).unwrap().clone();
        let v: mlua::Value = lua.load(format!("return {lua_value}")).eval()?;
        convert(robot, &param, &v, units, &format!("{kind}.{key}"))
    }

    fn close(v: &Value, want: &[f64]) -> bool {
        let x = v.as_slice();
        x.len() == want.len() && x.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-12)
    }

    #[test]
    fn parameters_convert_by_the_unit_they_declare_joint_by_joint() {
        let lua = crate::new_state().unwrap();
        crate::install_for_components(&lua).unwrap();
        let robot = finger_arm(&lua);
        let (d, mm) = (units::DEG, units::MM);
        let c = |kind: &str, key: &str, v: &str| converted(&lua, &robot, kind, key, v, Units::LUA).unwrap();
        // rad|m: degrees for the turning joints, mm for the finger.
        assert!(close(&c("ptp", "target", "{ 10, 20, 30, 35 }"), &[10.0 * d, 20.0 * d, 30.0 * d, 35.0 * mm]));
        assert!(close(&c("spline", "points", "{ { 1, 2, 3, 4 }, { 5, 6, 7, 8 } }"), &[d, 2.0 * d, 3.0 * d, 4.0 * mm, 5.0 * d, 6.0 * d, 7.0 * d, 8.0 * mm]));
        // One number is every joint's, each in its own unit: 2° and 2 mm.
        assert!(close(&c("monitor", "max_error", "2"), &[2.0 * d, 2.0 * d, 2.0 * d, 2.0 * mm]));
        // m, rad: a pose in mm and degrees, either form.
        assert!(close(&c("lin", "target", "{ 100, 200, 300, 90, 0, 45 }"), &[0.1, 0.2, 0.3, 90.0 * d, 0.0, 45.0 * d]));
        assert!(close(&c("time_optimal", "target", "{ pos = { 100, 200, 300 }, rpy = { 0, 90, 0 } }"), &[0.1, 0.2, 0.3, 0.0, 90.0 * d, 0.0]));
        // m: a point, or a pose's position.
        assert!(close(&c("circ", "via", "{ 10, 20, 30 }"), &[0.01, 0.02, 0.03]));
        assert!(close(&c("circ", "via", "{ pos = { 10, 20, 30 }, rpy = { 1, 2, 3 } }"), &[0.01, 0.02, 0.03]));
        // Rates: deg/s and mm/s.
        assert_eq!(c("lin", "rot_vel", "90"), Value::Real(90.0 * d));
        assert_eq!(c("lin", "lin_acc", "500"), Value::Real(0.5));
        // Units Lua speaks as SI, or none: as given.
        assert_eq!(c("ptp", "settle", "0.5"), Value::Real(0.5));
        assert_eq!(c("ptp", "filter_order", "2"), Value::Integer(2));
        assert_eq!(c("tracker", "noise", "0.02"), Value::Real(0.02));
        // Moves are told by their shape and become records, in SI.
        let moves = c("path", "moves", "{ { \"ptp\", { 0, 0, 0, 10 } }, { \"lin\", { 300, 0, 400, 180, 0, 0 }, blend = 5, speed = 50 } }");
        let want = [
            MoveSpec { motion: Move::Ptp { target: vec![0.0, 0.0, 0.0, 10.0 * mm] }, blend: 0.0, velocity_scale: 1.0 },
            MoveSpec { motion: Move::Lin { target: [0.3, 0.0, 0.4, 180.0 * d, 0.0, 0.0] }, blend: 5.0 * mm, velocity_scale: 0.5 },
        ];
        assert_eq!(moves, moves_value(&want));
        assert_eq!(moves.as_list().unwrap()[1].field("blend"), Some(&Value::Real(0.005)));
        // Records given as such would be taken without units: refused, saying the form.
        let e = converted(&lua, &robot, "path", "moves", "{ { kind = \"ptp\", target = { 0, 0, 0, 10 } } }", Units::LUA).unwrap_err().to_string();
        assert!(e.contains("path.moves: moves are { { \"ptp\", q }"), "{e}");
        // units = "rad": SI already, the shapes alike.
        let si = converted(&lua, &robot, "ptp", "target", "{ 0.1, 0.2, 0.3, 0.01 }", Units::SI).unwrap();
        assert!(close(&si, &[0.1, 0.2, 0.3, 0.01]));
        // A joint vector of the wrong length says how many the robot has.
        let e = converted(&lua, &robot, "ptp", "target", "{ 1, 2, 3 }", Units::LUA).unwrap_err().to_string();
        assert!(e.contains("ptp.target: expected 4 joint positions (one per joint of finger arm), got 3"), "{e}");
    }
}
