//! Tables checked for the keys morc reads: a key it does not know is an error naming the key
//! and the nearest known one (`morc_kernel::names`), never silently ignored — a typo
//! (`sped`) or a setting morc does not have (`drive = { mode = "cst" }`) would otherwise do
//! nothing. Lua code checks with `morc.unknown_key` (lua/morc/skill.lua).

use mlua::{Lua, Table};

use morc_kernel::names;

/// The first key of `t` that is not in `known` (nor one of its first `positional` list
/// entries), as the "unknown key … did you mean" message; `place` says where, with its
/// preposition ("in joint A1's drive").
pub fn check(t: &Table, place: &str, known: &[&str], positional: usize) -> Result<(), String> {
    let mut unknown = Vec::new();
    for (k, _) in t.clone().pairs::<mlua::Value, mlua::Value>().flatten() {
        match k {
            mlua::Value::Integer(i) if i >= 1 && i as usize <= positional => {}
            mlua::Value::String(s) => {
                let s = s.to_string_lossy();
                if !known.contains(&s.as_str()) {
                    unknown.push(s);
                }
            }
            other => unknown.push(other.to_string().unwrap_or_else(|_| other.type_name().to_string())),
        }
    }
    // The same key first whatever order the table iterates in.
    unknown.sort();
    match unknown.first() {
        Some(k) => Err(names::unknown("key", k, place, known)),
        None => Ok(()),
    }
}

/// A number from Lua is finite: NaN and infinities are refused where they enter, naming
/// `what` (the key or argument).
pub fn finite(x: f64, what: &str) -> Result<f64, String> {
    if x.is_finite() {
        Ok(x)
    } else {
        Err(format!("{what} is {x}: give a finite number"))
    }
}

/// Registers `morc.unknown_key(key, known, place)`.
pub fn install(lua: &Lua, morc: &Table) -> mlua::Result<()> {
    morc.set(
        "unknown_key",
        lua.create_function(|_, (key, known, place): (String, Vec<String>, String)| {
            let known: Vec<&str> = known.iter().map(String::as_str).collect();
            Ok(names::unknown("key", &key, &place, &known))
        })?,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_key_is_named_with_the_nearest_known_one() {
        let lua = Lua::new();
        let t: Table = lua.load(r#"return { "A1", slave = 1, mode = "cst" }"#).eval().unwrap();
        assert_eq!(check(&t, "in joint A1's drive", &["slave", "gear", "model"], 1).unwrap_err(), "unknown key 'mode' in joint A1's drive; did you mean 'model'?");
        assert!(check(&t, "in joint A1's drive", &["slave", "mode"], 1).is_ok());
        assert!(check(&t, "in joint A1's drive", &["slave", "mode"], 0).unwrap_err().contains("unknown key '1'"));
    }

    #[test]
    fn nan_and_infinities_are_refused() {
        assert_eq!(finite(f64::NAN, "speed").unwrap_err(), "speed is NaN: give a finite number");
        assert!(finite(f64::INFINITY, "gear").unwrap_err().contains("gear is inf"));
        assert_eq!(finite(2.0, "gear"), Ok(2.0));
    }
}
