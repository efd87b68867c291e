//! Values between Lua and the kernel: numbers, integers, booleans, strings
//! and lists of numbers (vectors).

use mlua::{Lua, Table};

use morc_kernel::AssemblyData;
use morc_kernel::Value;

/// A Lua value as a kernel value; `what` names it in the error. NaN and infinities are
/// refused here, where numbers from Lua enter morc (robot definitions, component and robot
/// parameters, Assembly Data), so no caller has to check them again.
pub fn to_value(v: &mlua::Value, what: &str) -> mlua::Result<Value> {
    let value = to_value_any(v, what)?;
    match non_finite(&value) {
        Some((None, x)) => Err(mlua::Error::runtime(format!("{what} is {x}: give a finite number"))),
        Some((Some(i), x)) => Err(mlua::Error::runtime(format!("{what}: element {} is {x}: give finite numbers", i + 1))),
        None => Ok(value),
    }
}

/// The first number of `v` that is NaN or infinite: its place in a vector (None for a
/// scalar) and itself.
pub fn non_finite(v: &Value) -> Option<(Option<usize>, f64)> {
    match v {
        Value::Real(x) if !x.is_finite() => Some((None, *x)),
        Value::Vector(xs) => xs.iter().position(|x| !x.is_finite()).map(|i| (Some(i), xs[i])),
        _ => None,
    }
}

/// A Lua value as a kernel value, NaN and infinities let through: what a component reports
/// (a result not measured is NaN) and parameter defaults that mean "no limit" (±math.huge).
pub fn to_value_any(v: &mlua::Value, what: &str) -> mlua::Result<Value> {
    Ok(match v {
        mlua::Value::Integer(i) => Value::Integer(*i),
        mlua::Value::Number(x) => Value::Real(*x),
        mlua::Value::Boolean(b) => Value::Boolean(*b),
        mlua::Value::String(s) => Value::String(s.to_str()?.to_string()),
        mlua::Value::Table(t) => {
            let mut out = Vec::with_capacity(t.raw_len());
            for (i, x) in t.clone().sequence_values::<mlua::Value>().enumerate() {
                match x? {
                    mlua::Value::Integer(n) => out.push(n as f64),
                    mlua::Value::Number(n) => out.push(n),
                    other => return Err(mlua::Error::runtime(format!("{what}: element {} is a {}, expected a number", i + 1, other.type_name()))),
                }
            }
            Value::Vector(out)
        }
        other => return Err(mlua::Error::runtime(format!("{what}: expected a number, boolean, string or list of numbers, got a {}", other.type_name()))),
    })
}

/// A kernel value as a Lua value: a number, integer, boolean, string or list of numbers.
pub fn from_value(lua: &Lua, v: &Value) -> mlua::Result<mlua::Value> {
    Ok(match v {
        Value::Real(x) => mlua::Value::Number(*x),
        Value::Integer(i) => mlua::Value::Integer(*i),
        Value::Boolean(b) => mlua::Value::Boolean(*b),
        Value::String(s) => mlua::Value::String(lua.create_string(s)?),
        Value::Vector(v) => mlua::Value::Table(lua.create_sequence_from(v.iter().copied())?),
    })
}

/// A Lua table of key → value as Assembly Data.
pub fn table_to_data(t: &Table, what: &str) -> mlua::Result<AssemblyData> {
    let mut data = AssemblyData::new();
    for pair in t.clone().pairs::<String, mlua::Value>() {
        let (k, v) = pair?;
        data.set(&k, to_value(&v, &format!("{what}.{k}"))?);
    }
    Ok(data)
}
