//! `morc.data { … }`: Assembly Data from Lua, indexed like a table.

use mlua::{Lua, UserData, UserDataMethods};

use super::convert::{from_value, to_value};
use morc_kernel::AssemblyData;

/// The `morc.data { … }` userdata: Assembly Data read and written like a table.
pub struct LuaData(pub AssemblyData);

impl UserData for LuaData {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method("__index", |lua, this, key: String| match this.0.get(&key) {
            Some(v) => from_value(lua, v),
            None => Ok(mlua::Value::Nil),
        });
        methods.add_meta_method_mut("__newindex", |_, this, (key, value): (String, mlua::Value)| {
            if value.is_nil() {
                this.0.remove(&key);
            } else {
                this.0.set(&key, to_value(&value, &key)?);
            }
            Ok(())
        });
        methods.add_meta_method("__len", |_, this, ()| Ok(this.0.len()));
        methods.add_meta_method("__pairs", |lua, this, ()| {
            let t = to_table(lua, &this.0)?;
            let next: mlua::Function = lua.globals().get("next")?;
            Ok((next, t, mlua::Value::Nil))
        });
        methods.add_meta_method("__tostring", |_, this, ()| {
            let items: Vec<String> = this.0.iter().map(|(k, v)| format!("{k} = {v}")).collect();
            Ok(format!("morc.data {{ {} }}", items.join(", ")))
        });
    }
}

/// Assembly Data as a plain Lua table, name → value.
pub fn to_table(lua: &Lua, data: &AssemblyData) -> mlua::Result<mlua::Table> {
    let t = lua.create_table()?;
    for (k, v) in data.iter() {
        t.set(k.as_str(), from_value(lua, v)?)?;
    }
    Ok(t)
}
