//! The Lua API reference (docs/lua-api.md), generated from the doc strings so it
//! cannot drift: `lua/morc/docs.lua` does the work, in a state with the full API.

const DOCS_LUA: &str = include_str!("../../../lua/morc/docs.lua");

/// Loads `morc.docs` into a state where `morc` is installed.
pub(crate) fn register(lua: &mlua::Lua) -> mlua::Result<mlua::Table> {
    lua.load(DOCS_LUA).set_name("@lua/morc/docs.lua").eval()
}

/// The reference as markdown, and the public names that lack a doc string.
pub fn markdown() -> Result<(String, Vec<String>), String> {
    let engine = crate::start_engine(morc_kernel::EngineConfig::default())?;
    let lua = super::new_state().map_err(|e| e.to_string())?;
    super::install(&lua, engine).map_err(|e| e.to_string())?;
    let docs: mlua::Table = lua.globals().get::<mlua::Table>("morc").and_then(|m| m.get("docs")).map_err(|e| e.to_string())?;
    let md: String = docs.get::<mlua::Function>("markdown").and_then(|f| f.call(())).map_err(|e| e.to_string())?;
    let (_, missing): (mlua::Value, Vec<String>) = docs.get::<mlua::Function>("sections").and_then(|f| f.call(())).map_err(|e| e.to_string())?;
    Ok((md, missing))
}
