//! Values between Lua and the kernel: numbers, integers, booleans, strings, sequences of
//! numbers (vectors) and, for parameters and Assembly Data, lists and records: a sequence of
//! tables or of mixed values is a list, a table with string keys a record.

use mlua::{Lua, Table};

use morc_kernel::AssemblyData;
use morc_kernel::Value;

/// A Lua value as a kernel value; `what` names it in the error. NaN and infinities are
/// refused here, where numbers from Lua enter morc (robot definitions, component and robot
/// parameters, Assembly Data), so no caller has to check them again.
pub fn to_value(v: &mlua::Value, what: &str) -> mlua::Result<Value> {
    let value = to_value_any(v, what)?;
    match non_finite(&value) {
        Some((path, None, x)) => Err(mlua::Error::runtime(format!("{what}{path} is {x}: give a finite number"))),
        Some((path, Some(i), x)) => Err(mlua::Error::runtime(format!("{what}{path}: element {} is {x}: give finite numbers", i + 1))),
        None => Ok(value),
    }
}

/// The first number of `v` that is NaN or infinite: where it is — the path to it inside lists
/// and records ("" for `v` itself, else e.g. "[2].blend"), its place in a vector (None for a
/// scalar) — and itself.
pub fn non_finite(v: &Value) -> Option<(String, Option<usize>, f64)> {
    match v {
        Value::Real(x) if !x.is_finite() => Some((String::new(), None, *x)),
        Value::Vector(xs) => xs.iter().position(|x| !x.is_finite()).map(|i| (String::new(), Some(i), xs[i])),
        Value::List(items) => items.iter().enumerate().find_map(|(i, x)| non_finite(x).map(|(path, at, x)| (format!("[{}]{path}", i + 1), at, x))),
        Value::Record(fields) => fields.iter().find_map(|(name, x)| non_finite(x).map(|(path, at, x)| (format!(".{name}{path}"), at, x))),
        _ => None,
    }
}

/// Tables nested deeper than this are not converted (a table that contains itself would
/// never end).
const VALUE_DEPTH: usize = 16;

/// A Lua value as a kernel value, NaN and infinities let through: what a component reports
/// (a result not measured is NaN) and parameter defaults that mean "no limit" (±math.huge).
///
/// A table is a vector when it is a sequence of numbers (`{}` too), a list when a sequence of
/// anything else (tables, mixed values) — other keys of a sequence left out, as always — and a
/// record when its keys are strings (fields in name order, so the same table gives the same
/// value); nested alike.
pub fn to_value_any(v: &mlua::Value, what: &str) -> mlua::Result<Value> {
    value_at(v, what, 0)
}

fn value_at(v: &mlua::Value, what: &str, depth: usize) -> mlua::Result<Value> {
    Ok(match v {
        mlua::Value::Integer(i) => Value::Integer(*i),
        mlua::Value::Number(x) => Value::Real(*x),
        mlua::Value::Boolean(b) => Value::Boolean(*b),
        mlua::Value::String(s) => Value::String(s.to_str()?.to_string()),
        mlua::Value::Table(t) => table_value(t, what, depth)?,
        other => return Err(mlua::Error::runtime(format!("{what}: expected a number, boolean, string or table, got a {}", other.type_name()))),
    })
}

fn table_value(t: &Table, what: &str, depth: usize) -> mlua::Result<Value> {
    if depth >= VALUE_DEPTH {
        return Err(mlua::Error::runtime(format!("{what}: tables nested deeper than {VALUE_DEPTH} (does a table contain itself?)")));
    }
    let n = t.raw_len();
    // A sequence is read as one, its other keys left out as always (a taught point's name).
    if n == 0 {
        let mut named: Vec<(String, mlua::Value)> = Vec::new();
        for pair in t.clone().pairs::<mlua::Value, mlua::Value>() {
            match pair? {
                (mlua::Value::String(k), x) => named.push((k.to_str()?.to_string(), x)),
                (other, _) => {
                    let key = other.to_string().unwrap_or_else(|_| other.type_name().to_string());
                    return Err(mlua::Error::runtime(format!("{what}: key [{key}] is neither a place of a list {{ a, b, … }} nor a field name {{ name = … }}")));
                }
            }
        }
        if !named.is_empty() {
            named.sort_by(|a, b| a.0.cmp(&b.0));
            let fields = named.iter().map(|(k, x)| Ok((k.clone(), value_at(x, &format!("{what}.{k}"), depth + 1)?))).collect::<mlua::Result<_>>()?;
            return Ok(Value::Record(fields));
        }
    }
    let items: Vec<mlua::Value> = t.clone().sequence_values::<mlua::Value>().collect::<mlua::Result<_>>()?;
    let number = |x: &mlua::Value| match x {
        mlua::Value::Integer(i) => Some(*i as f64),
        mlua::Value::Number(x) => Some(*x),
        _ => None,
    };
    if let Some(xs) = items.iter().map(number).collect::<Option<Vec<f64>>>() {
        return Ok(Value::Vector(xs));
    }
    let items = items.iter().enumerate().map(|(i, x)| value_at(x, &format!("{what}[{}]", i + 1), depth + 1)).collect::<mlua::Result<_>>()?;
    Ok(Value::List(items))
}

/// A kernel value as a Lua value: a number, integer, boolean or string; a table for a vector
/// or list (a sequence) and a record (its fields by name).
pub fn from_value(lua: &Lua, v: &Value) -> mlua::Result<mlua::Value> {
    Ok(match v {
        Value::Real(x) => mlua::Value::Number(*x),
        Value::Integer(i) => mlua::Value::Integer(*i),
        Value::Boolean(b) => mlua::Value::Boolean(*b),
        Value::String(s) => mlua::Value::String(lua.create_string(s)?),
        Value::Vector(v) => mlua::Value::Table(lua.create_sequence_from(v.iter().copied())?),
        Value::List(items) => {
            let t = lua.create_table_with_capacity(items.len(), 0)?;
            for (i, x) in items.iter().enumerate() {
                t.raw_set(i + 1, from_value(lua, x)?)?;
            }
            mlua::Value::Table(t)
        }
        Value::Record(fields) => {
            let t = lua.create_table_with_capacity(0, fields.len())?;
            for (k, x) in fields {
                t.raw_set(k.as_str(), from_value(lua, x)?)?;
            }
            mlua::Value::Table(t)
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn value(lua: &Lua, code: &str) -> mlua::Result<Value> {
        to_value(&lua.load(format!("return {code}")).eval()?, "p")
    }

    fn error(lua: &Lua, code: &str) -> String {
        value(lua, code).unwrap_err().to_string()
    }

    #[test]
    fn tables_become_vectors_lists_and_records() {
        let lua = Lua::new();
        let s = |x: &str| Value::String(x.into());
        // A sequence of numbers, `{}` too, stays a vector.
        assert_eq!(value(&lua, "{ 1, 2.5, 3 }").unwrap(), Value::Vector(vec![1.0, 2.5, 3.0]));
        assert_eq!(value(&lua, "{}").unwrap(), Value::Vector(Vec::new()));
        // A sequence's other keys are left out, as always (a taught point's name).
        assert_eq!(value(&lua, r#"{ 1, 2, name = "P1" }"#).unwrap(), Value::Vector(vec![1.0, 2.0]));
        // A sequence of tables or of mixed values is a list.
        assert_eq!(value(&lua, "{ { 1, 2 }, { 3 } }").unwrap(), Value::List(vec![Value::Vector(vec![1.0, 2.0]), Value::Vector(vec![3.0])]));
        assert_eq!(value(&lua, r#"{ "ptp", 2, true }"#).unwrap(), Value::List(vec![s("ptp"), Value::Integer(2), Value::Boolean(true)]));
        // String keys make a record, its fields in name order.
        let r = value(&lua, r#"{ kind = "lin", blend = 0.5, target = { 1, 2, 3 } }"#).unwrap();
        assert_eq!(r, Value::Record(vec![("blend".into(), Value::Real(0.5)), ("kind".into(), s("lin")), ("target".into(), Value::Vector(vec![1.0, 2.0, 3.0]))]));
        // Nested.
        let nested = value(&lua, r#"{ { kind = "ptp", via = { { 1 }, { x = 2 } } } }"#).unwrap();
        let via = nested.as_list().unwrap()[0].field("via").unwrap();
        assert_eq!(via, &Value::List(vec![Value::Vector(vec![1.0]), Value::record([("x", Value::Integer(2))])]));
    }

    #[test]
    fn values_come_back_as_the_tables_they_were() {
        let lua = Lua::new();
        for code in ["{ 1, 2, 3 }", r#"{ "a", { 1, 2 }, false }"#, r#"{ { kind = "ptp", target = { 1, 2 }, blend = 0.5 }, { kind = "lin", list = { {}, { 1 } } } }"#, r#"{ name = "x", n = 3 }"#] {
            let v = value(&lua, code).unwrap();
            let back = from_value(&lua, &v).unwrap();
            assert_eq!(to_value(&back, "p").unwrap(), v, "{code}");
        }
        let back = from_value(&lua, &value(&lua, r#"{ { kind = "ptp" }, 2 }"#).unwrap()).unwrap();
        lua.globals().set("back", back).unwrap();
        assert!(lua.load(r#"return back[1].kind == "ptp" and back[2] == 2 and #back == 2"#).eval::<bool>().unwrap());
    }

    #[test]
    fn tables_that_are_no_value_say_where() {
        let lua = Lua::new();
        assert_eq!(error(&lua, "{ [0] = 1 }"), "runtime error: p: key [0] is neither a place of a list { a, b, … } nor a field name { name = … }");
        assert!(error(&lua, "{ { a = print } }").contains("p[1].a: expected a number, boolean, string or table, got a function"));
        // NaN is refused at any depth, the message naming the place.
        assert_eq!(error(&lua, "{ { blend = 0/0 } }"), "runtime error: p[1].blend is NaN: give a finite number");
        assert_eq!(error(&lua, "{ { target = { 1, math.huge } } }"), "runtime error: p[1].target: element 2 is inf: give finite numbers");
        assert_eq!(error(&lua, "{ 1, 0/0 }"), "runtime error: p: element 2 is NaN: give finite numbers");
        // A table that contains itself ends.
        let e = error(&lua, "(function() local t = {} t[1] = t return t end)()");
        assert!(e.contains("tables nested deeper than 16"), "{e}");
    }
}
