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

/// A Lua value as plain data, to carry from one Lua state to another (a component's state
/// across a swap: each stepping thread has a state of its own). Numbers, integers, booleans,
/// strings and tables of them (keys: strings, numbers, booleans); see [`to_carried`].
#[derive(Clone, Debug, PartialEq)]
pub enum Carried {
    /// A number, integer, boolean or string.
    Value(Value),
    /// A table: its entries in the order `pairs` gave them.
    Table(Vec<(Carried, Carried)>),
}

/// Tables nested deeper than this are not carried (an error says where).
const CARRY_DEPTH: usize = 16;
/// The most entries carried in all (the hand-over runs between two ticks).
const CARRY_ENTRIES: usize = 100_000;

/// `v` as data, or None for what cannot leave its Lua state (a function, a userdata, a
/// coroutine): those are left out, as are table entries holding them. `what` names `v` in the
/// error: a table that contains itself, nested deeper than 16 or larger than 100 000 entries.
pub fn to_carried(v: &mlua::Value, what: &str) -> mlua::Result<Option<Carried>> {
    let mut path = Vec::new();
    let mut entries = 0;
    carry(v, what, &mut path, &mut entries)
}

fn carry(v: &mlua::Value, what: &str, path: &mut Vec<*const std::ffi::c_void>, entries: &mut usize) -> mlua::Result<Option<Carried>> {
    Ok(Some(match v {
        mlua::Value::Integer(i) => Carried::Value(Value::Integer(*i)),
        mlua::Value::Number(x) => Carried::Value(Value::Real(*x)),
        mlua::Value::Boolean(b) => Carried::Value(Value::Boolean(*b)),
        mlua::Value::String(s) => Carried::Value(Value::String(s.to_str()?.to_string())),
        mlua::Value::Table(t) => {
            let p = t.to_pointer();
            if path.contains(&p) {
                return Err(mlua::Error::runtime(format!("{what} contains the table it is in: a table that refers to itself cannot be carried to the new code")));
            }
            if path.len() >= CARRY_DEPTH {
                return Err(mlua::Error::runtime(format!("{what}: tables nested deeper than {CARRY_DEPTH} cannot be carried to the new code")));
            }
            path.push(p);
            let mut out = Vec::new();
            for pair in t.clone().pairs::<mlua::Value, mlua::Value>() {
                let (k, x) = pair?;
                *entries += 1;
                if *entries > CARRY_ENTRIES {
                    return Err(mlua::Error::runtime(format!("{what}: more than {CARRY_ENTRIES} entries to carry to the new code (the hand-over runs between two ticks): keep less in self")));
                }
                let name = match &k {
                    mlua::Value::String(s) => format!("{what}.{}", s.to_string_lossy()),
                    other => format!("{what}[{}]", other.to_string().unwrap_or_default()),
                };
                let key = match &k {
                    mlua::Value::String(_) | mlua::Value::Integer(_) | mlua::Value::Number(_) | mlua::Value::Boolean(_) => carry(&k, &name, path, entries)?,
                    _ => None,
                };
                if let (Some(key), Some(x)) = (key, carry(&x, &name, path, entries)?) {
                    out.push((key, x));
                }
            }
            path.pop();
            Carried::Table(out)
        }
        _ => return Ok(None),
    }))
}

/// Carried data as a Lua value of `lua`'s state.
pub fn from_carried(lua: &Lua, c: &Carried) -> mlua::Result<mlua::Value> {
    Ok(match c {
        Carried::Value(v) => from_value(lua, v)?,
        Carried::Table(entries) => {
            let t = lua.create_table_with_capacity(0, entries.len())?;
            for (k, v) in entries {
                t.raw_set(from_carried(lua, k)?, from_carried(lua, v)?)?;
            }
            mlua::Value::Table(t)
        }
    })
}
