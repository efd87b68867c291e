//! Lua component kinds defined in Lua: `morc.component { name, doc, inputs, outputs, params,
//! init, step, terminate }` parsed into a [`LuaComponentDef`] (its instances are in
//! [`super::instance`]), and the [`LuaKind`] value a program holds and registers.

use std::sync::Arc;

use mlua::{Function, Lua, Table, UserData, UserDataFields, UserDataMethods};

use super::instance::{lua_port, KindSource, LuaComponentDef};
use crate::origin::caller;
use crate::{convert, library, object_params, thread_state};
use morc_kernel::ParamInfo;

/// A Lua component kind made by `morc.component { … }`.
#[derive(Clone)]
pub struct LuaKind(pub Arc<LuaComponentDef>);

impl UserData for LuaKind {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("name", |_, this| Ok(this.0.kind.clone()));
        fields.add_field_method_get("doc", |_, this| Ok(this.0.doc.clone()));
    }
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method("__tostring", |_, this, ()| Ok(format!("lua component kind '{}'", this.0.kind)));
    }
}

/// Bytecode of a function that a Lua component runs in its own state: it may
/// not capture locals (upvalues other than _ENV), which would silently be nil there.
fn dump_isolated(lua: &Lua, kind: &str, what: &str, f: &Function) -> mlua::Result<Vec<u8>> {
    let getupvalue: Function = lua.globals().get::<Table>("debug")?.get("getupvalue")?;
    for i in 1.. {
        let name: Option<String> = getupvalue.call((f.clone(), i))?;
        match name.as_deref() {
            None => break,
            Some("_ENV") => {}
            Some(other) => {
                return Err(mlua::Error::runtime(format!(
                    "Lua component '{kind}': {what} uses the local variable '{other}' from outside the function; \
                     a Lua component runs in a Lua state of its own, so pass it as a parameter (self.{other}) or define it inside"
                )))
            }
        }
    }
    Ok(f.dump(false))
}

/// The module whose loading is defining a component: (module name, file) when the chunk
/// running it was loaded by `require` (which passes both to the chunk), None for a program's
/// own chunk or the REPL.
fn defining_module(lua: &Lua) -> mlua::Result<Option<(String, String)>> {
    let find: Function = match lua.named_registry_value::<Option<Function>>("morc.defining_module")? {
        Some(f) => f,
        None => {
            let f: Function = lua
                .load(
                    r#"local getinfo, getlocal = debug.getinfo, debug.getlocal
                    return function()
                      for level = 2, 200 do
                        local info = getinfo(level, "S")
                        if not info then return nil end
                        if info.what == "main" then
                          local _, name = getlocal(level, -1)
                          local _, file = getlocal(level, -2)
                          if type(name) == "string" and type(file) == "string" and file:match("%.lua$") then return name, file end
                          return nil
                        end
                      end
                    end"#,
                )
                .set_name("=morc.component")
                .eval()?;
            lua.set_named_registry_value("morc.defining_module", f.clone())?;
            f
        }
    };
    let (name, file): (Option<String>, Option<String>) = find.call(())?;
    Ok(name.zip(file))
}

/// `morc.component { name, doc, inputs, outputs, params, init, step, terminate }`.
pub(crate) fn define_lua_component(lua: &Lua, t: Table) -> mlua::Result<LuaKind> {
    let origin = caller(lua);
    let fail = |m: String| mlua::Error::runtime(format!("{origin}: {m}"));
    let kind: String = t.get::<Option<String>>("name")?.ok_or_else(|| fail("morc.component needs a name".into()))?;
    let mut sized_by = Vec::new();
    let mut ports = |key: &str, output: bool| -> mlua::Result<Vec<morc_kernel::PortInfo>> {
        let mut out = Vec::new();
        if let Some(list) = t.get::<Option<Table>>(key)? {
            for decl in list.sequence_values::<mlua::Value>() {
                let (port, size) = lua_port(&decl?).map_err(|e| fail(format!("Lua component '{kind}', {key}: {e}")))?;
                if let Some(param) = size {
                    sized_by.push((output, out.len(), param));
                }
                out.push(port);
            }
        }
        Ok(out)
    };
    let inputs = ports("inputs", false)?;
    let outputs = ports("outputs", true)?;
    let (mut params, mut objects) = (Vec::new(), Vec::new());
    if let Some(p) = t.get::<Option<Table>>("params")? {
        for pair in p.pairs::<String, mlua::Value>() {
            let (k, v) = pair?;
            // morc.ROBOT, morc.MODEL: a parameter that takes a robot or a model (object_params.rs).
            match object_params::declared(&k, &v) {
                Some((param, object)) => {
                    params.push(param);
                    objects.push(object);
                }
                None => params.push(ParamInfo::new(&k, convert::to_value_any(&v, &format!("{kind}.{k}"))?)),
            }
        }
        params.sort_by(|a, b| a.name.cmp(&b.name));
    }
    for (output, index, param) in &sized_by {
        let port = if *output { &outputs[*index] } else { &inputs[*index] };
        match params.iter().find(|p| &p.name == param).map(|p| &p.value) {
            Some(morc_kernel::Value::Integer(n)) if *n >= 1 => {}
            _ => {
                return Err(fail(format!(
                    "Lua component '{kind}': port '{}[{param}]' is sized by the parameter '{param}', which must be an integer of at least 1 in params (params = {{ {param} = 6 }})",
                    port.name
                )))
            }
        }
    }
    let step: Function = t
        .get::<Option<Function>>("step")?
        .ok_or_else(|| fail(format!("Lua component '{kind}' needs a step function: step = function(self, inp, out, t) … end")))?;
    let sandbox = library::defining_library(lua);
    // A kind defined by a module is loaded by the stepping thread's state under the same module
    // name (closures and upvalues intact); one defined in a program's chunk travels as bytecode.
    // A library's helper module other than lib.NAME.… would run outside the library's sandbox
    // there, so it travels as bytecode too.
    let module = defining_module(lua)?.filter(|(name, _)| sandbox.is_none() || name.starts_with("lib."));
    let source = match module {
        Some((module, file)) => {
            let package_path: String = lua.globals().get::<Table>("package")?.get("path")?;
            let library_path: Vec<String> = lua.globals().get::<Table>("morc")?.get::<Table>("lib")?.get("path")?;
            KindSource::Module { module, file, package_path, library_path }
        }
        None => {
            let optional = |key: &str| -> mlua::Result<Option<Vec<u8>>> { t.get::<Option<Function>>(key)?.map(|f| dump_isolated(lua, &kind, key, &f).map_err(|e| fail(e.to_string()))).transpose() };
            KindSource::Inline {
                init: optional("init")?,
                step: dump_isolated(lua, &kind, "step", &step).map_err(|e| fail(e.to_string()))?,
                terminate: optional("terminate")?,
                migrate: optional("migrate")?,
            }
        }
    };
    thread_state::capture(lua, &kind, &t)?;
    let def = LuaComponentDef {
        doc: t.get::<Option<String>>("doc")?.unwrap_or_default(),
        inputs,
        outputs,
        params,
        objects,
        sized_by,
        source,
        kind,
        // Defined by a library: its functions run in its sandbox in the component's own state too.
        sandbox,
    };
    Ok(LuaKind(Arc::new(def)))
}
