//! Lua's units: a number in Lua is in degrees, millimetres and their rates (deg/s, mm/s², …);
//! morc computes in SI (rad, m, …). This table is the one place that says so: the conversion of
//! robot parameters by the unit each declares (robot_params.rs) and `morc.units`, for Lua code
//! that converts (a Lua component, a skill reporting in degrees), both read it.
//!
//! A joint's Lua unit follows the joint: "deg" for a revolute joint, "mm" for a prismatic one
//! (its rates likewise: the same factor).

use mlua::{Lua, Table};

use crate::linalg::doc;
use morc_robot::Robot;

/// Degrees → rad.
pub const DEG: f64 = std::f64::consts::PI / 180.0;
/// Millimetres → m.
pub const MM: f64 = 1e-3;

/// What a unit measures, where Lua's numbers differ from SI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dimension {
    /// Angles and their rates: degrees in Lua.
    Angle,
    /// Lengths and their rates: millimetres in Lua.
    Length,
}

/// Every unit `morc.units` knows: its name, the SI unit it converts to, the factor to SI and
/// what it measures. Lua's own units come first, then the SI units themselves (factor 1).
const UNITS: &[(&str, &str, f64, Dimension)] = &[
    ("deg", "rad", DEG, Dimension::Angle),
    ("deg/s", "rad/s", DEG, Dimension::Angle),
    ("deg/s²", "rad/s²", DEG, Dimension::Angle),
    ("mm", "m", MM, Dimension::Length),
    ("mm/s", "m/s", MM, Dimension::Length),
    ("mm/s²", "m/s²", MM, Dimension::Length),
    ("rad", "rad", 1.0, Dimension::Angle),
    ("rad/s", "rad/s", 1.0, Dimension::Angle),
    ("rad/s²", "rad/s²", 1.0, Dimension::Angle),
    ("m", "m", 1.0, Dimension::Length),
    ("m/s", "m/s", 1.0, Dimension::Length),
    ("m/s²", "m/s²", 1.0, Dimension::Length),
];

/// Other spellings of the same units: ° for deg, s2 or s^2 for s².
fn canonical(unit: &str) -> String {
    let u = unit.trim().replace('°', "deg");
    match u.strip_suffix("s2").or_else(|| u.strip_suffix("s^2")) {
        Some(head) if head.ends_with('/') => format!("{head}s²"),
        _ => u,
    }
}

/// `unit`'s factor to SI and its SI unit ("deg" → π/180, "rad"), or None for a unit not known.
pub fn to_si(unit: &str) -> Option<(f64, &'static str)> {
    // The names themselves without allocating (a component may convert in its step).
    let find = |u: &str| UNITS.iter().find(|e| e.0 == u).map(|e| (e.2, e.1));
    find(unit).or_else(|| find(&canonical(unit)))
}

/// What SI unit `si` measures, if Lua's numbers for it differ from SI ("rad/s" → angle).
pub fn dimension(si: &str) -> Option<Dimension> {
    UNITS.iter().find(|e| e.1 == si && e.2 == 1.0).map(|e| e.3)
}

/// The unit names `morc.units` knows, Lua's first.
pub fn names() -> Vec<&'static str> {
    UNITS.iter().map(|e| e.0).collect()
}

/// The unit Lua's numbers for joint `i` of `robot` are in: "mm" for a prismatic joint, "deg"
/// for a revolute one.
pub fn joint_unit(robot: &Robot, i: usize) -> &'static str {
    if robot.is_prismatic(i) {
        "mm"
    } else {
        "deg"
    }
}

/// `unit`'s factor to SI, or an error naming the unit and the known ones.
fn factor(unit: &str, what: &str) -> mlua::Result<f64> {
    to_si(unit).map(|(f, _)| f).ok_or_else(|| mlua::Error::runtime(format!("{what}: unknown unit {unit:?} (known: {})", names().join(", "))))
}

/// The factor to SI of each element: one unit for all, a list of units, or a robot (its joints').
enum Factors {
    All(f64),
    Each(Vec<f64>),
}

impl Factors {
    fn of(unit: &mlua::Value, what: &str) -> mlua::Result<Factors> {
        match unit {
            mlua::Value::String(s) => Ok(Factors::All(factor(&s.to_str()?, what)?)),
            mlua::Value::Table(list) => {
                let mut each = Vec::with_capacity(list.raw_len());
                for u in list.clone().sequence_values::<mlua::Value>() {
                    match u? {
                        mlua::Value::String(s) => each.push(factor(&s.to_str()?, what)?),
                        other => return Err(mlua::Error::runtime(format!("{what}: a list of units holds unit names, got a {}", other.type_name()))),
                    }
                }
                Ok(Factors::Each(each))
            }
            mlua::Value::UserData(ud) if ud.is::<crate::LuaRobot>() => {
                let robot = ud.borrow::<crate::LuaRobot>()?.0.clone();
                Ok(Factors::Each((0..robot.dof()).map(|i| to_si(joint_unit(&robot, i)).map_or(1.0, |(f, _)| f)).collect()))
            }
            other => Err(mlua::Error::runtime(format!("{what}: the unit is a name (\"deg\", \"mm/s\", …), a list of names or a robot (its joints' units), got a {}", other.type_name()))),
        }
    }

    /// `x` (a number or a list of numbers) times the factors (`invert`: divided by them).
    fn apply(&self, lua: &Lua, x: &mlua::Value, invert: bool, what: &str) -> mlua::Result<mlua::Value> {
        let scale = |f: f64, x: f64| if invert { x / f } else { x * f };
        let number = |v: &mlua::Value, i: usize| -> mlua::Result<f64> {
            match v {
                mlua::Value::Integer(n) => Ok(*n as f64),
                mlua::Value::Number(n) => Ok(*n),
                other if i == 0 => Err(mlua::Error::runtime(format!("{what}: expected a number or a list of numbers, got a {}", other.type_name()))),
                other => Err(mlua::Error::runtime(format!("{what}: element {i} is a {}, expected a number", other.type_name()))),
            }
        };
        match (x, self) {
            (mlua::Value::Table(list), _) => {
                let n = list.raw_len();
                if let Factors::Each(f) = self {
                    if f.len() != n {
                        return Err(mlua::Error::runtime(format!("{what}: {n} numbers for {} units (one per element)", f.len())));
                    }
                }
                let out = lua.create_table_with_capacity(n, 0)?;
                for i in 1..=n {
                    let f = match self {
                        Factors::All(f) => *f,
                        Factors::Each(f) => f[i - 1],
                    };
                    out.raw_set(i, scale(f, number(&list.raw_get(i)?, i)?))?;
                }
                Ok(mlua::Value::Table(out))
            }
            (x, Factors::All(f)) => Ok(mlua::Value::Number(scale(*f, number(x, 0)?))),
            (_, Factors::Each(_)) => Err(mlua::Error::runtime(format!("{what}: a list of units (or a robot) converts a list of numbers, one per element"))),
        }
    }
}

const UNITS_DOC: &str = "morc.units — Lua's numbers and SI. A number in Lua is in degrees, millimetres and their rates; morc computes in SI \
(rad, m). morc.units.to_si(x, \"deg\") and morc.units.from_si(x, \"mm/s\") convert a number or a list of numbers; the unit may be a list \
of units (one per element) or a robot: its joints' units, \"deg\" for a revolute joint and \"mm\" for a prismatic one (and their rates \
alike: the same factors). morc.units.list() names the known units; an unknown unit is an error naming them. \
morc.units.joint_scales(robot) gives the factors SI → Lua per joint, for code that converts at every step without a call.";

/// Installs `morc.units`.
pub(crate) fn install(lua: &Lua, morc: &Table) -> mlua::Result<()> {
    let units = lua.create_table()?;
    let lua_to_si = lua.create_function(|lua, (x, unit): (mlua::Value, mlua::Value)| Factors::of(&unit, "morc.units.to_si")?.apply(lua, &x, false, "morc.units.to_si"))?;
    let lua_from_si = lua.create_function(|lua, (x, unit): (mlua::Value, mlua::Value)| Factors::of(&unit, "morc.units.from_si")?.apply(lua, &x, true, "morc.units.from_si"))?;
    let lua_list = lua.create_function(|lua, ()| lua.create_sequence_from(names()))?;
    let lua_si = lua.create_function(|_, unit: String| {
        let (f, si) = to_si(&unit).ok_or_else(|| mlua::Error::runtime(format!("morc.units.si: unknown unit {unit:?} (known: {})", names().join(", "))))?;
        Ok((si, f))
    })?;
    let robot_of = |ud: &mlua::AnyUserData, what: &str| -> mlua::Result<std::sync::Arc<Robot>> {
        Ok(ud.borrow::<crate::LuaRobot>().map_err(|_| mlua::Error::runtime(format!("{what} expects a robot (morc.robot {{ … }})")))?.0.clone())
    };
    let lua_joint_units = lua.create_function(move |lua, ud: mlua::AnyUserData| {
        let robot = robot_of(&ud, "morc.units.joint_units")?;
        lua.create_sequence_from((0..robot.dof()).map(|i| joint_unit(&robot, i)))
    })?;
    let lua_joint_scales = lua.create_function(move |lua, ud: mlua::AnyUserData| {
        let robot = robot_of(&ud, "morc.units.joint_scales")?;
        lua.create_sequence_from((0..robot.dof()).map(|i| 1.0 / to_si(joint_unit(&robot, i)).map_or(1.0, |(f, _)| f)))
    })?;
    for (name, f) in [("to_si", &lua_to_si), ("from_si", &lua_from_si), ("list", &lua_list), ("si", &lua_si), ("joint_units", &lua_joint_units), ("joint_scales", &lua_joint_scales)] {
        units.set(name, f.clone())?;
    }
    morc.set("units", units.clone())?;
    doc(morc, units, UNITS_DOC)?;
    doc(morc, lua_to_si, "morc.units.to_si(x: number|number[], unit: string|string[]|robot) → number|number[] — x in unit (\"deg\", \"mm/s\", …; a list: one per element; a robot: its joints') in SI: to_si(90, \"deg\") → π/2")?;
    doc(morc, lua_from_si, "morc.units.from_si(x: number|number[], unit: string|string[]|robot) → number|number[] — x in SI in unit (a list: one per element; a robot: its joints', degrees or mm): from_si(0.25, \"mm/s\") → 250")?;
    doc(morc, lua_list, "morc.units.list() → string[] — the units morc.units knows: Lua's (deg, mm and their rates /s, /s²; ° and s2 are taken too) and the SI ones")?;
    doc(morc, lua_si, "morc.units.si(unit: string) → string, number — the SI unit of unit and the factor to it: si(\"deg/s\") → \"rad/s\", π/180")?;
    doc(morc, lua_joint_units, "morc.units.joint_units(robot: robot) → string[] — each joint's unit in Lua: \"deg\" for a revolute joint, \"mm\" for a prismatic one")?;
    doc(morc, lua_joint_scales, "morc.units.joint_scales(robot: robot) → number[] — per joint the factor from SI to Lua's numbers (180/π for a revolute joint, 1000 for a prismatic one): positions, velocities and accelerations alike")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_their_other_spellings() {
        assert_eq!(to_si("deg"), Some((DEG, "rad")));
        assert_eq!(to_si("°"), Some((DEG, "rad")));
        assert_eq!(to_si("mm/s2"), Some((MM, "m/s²")));
        assert_eq!(to_si("deg/s^2"), Some((DEG, "rad/s²")));
        assert_eq!(to_si("rad/s"), Some((1.0, "rad/s")));
        assert_eq!(to_si("furlong"), None);
        assert_eq!((dimension("rad/s²"), dimension("m"), dimension("s"), dimension("N·m")), (Some(Dimension::Angle), Some(Dimension::Length), None, None));
    }
}
