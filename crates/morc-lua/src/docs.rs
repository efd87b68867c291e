//! The Lua API reference (docs/lua-api.md) and the LuaLS annotation stubs (`morc doc --luals`),
//! generated from the doc strings so they cannot drift: `lua/morc/docs.lua` and
//! `lua/morc/luals.lua` do the work, in a state with the full API.

const DOCS_LUA: &str = include_str!("../../../lua/morc/docs.lua");
const LUALS_LUA: &str = include_str!("../../../lua/morc/luals.lua");

/// Loads `morc.docs` (with `morc.docs.luals`) into a state where `morc` is installed.
pub(crate) fn register(lua: &mlua::Lua) -> mlua::Result<mlua::Table> {
    let docs: mlua::Table = lua.load(DOCS_LUA).set_name("@lua/morc/docs.lua").eval()?;
    // Objects that exist only once made document themselves where they are defined.
    let bus = lua.create_table()?;
    bus.set("name", "engine.bus")?;
    bus.set("doc", crate::bus::BUS_DOC)?;
    docs.set("objects", lua.create_sequence_from([bus])?)?;
    let luals: mlua::Table = lua.load(LUALS_LUA).set_name("@lua/morc/luals.lua").eval()?;
    let files: mlua::Function = luals.get("files")?;
    docs.set("luals", files.clone())?;
    let doc: mlua::Function = lua.globals().get::<mlua::Table>("morc")?.get("doc")?;
    doc.call::<()>((
        files,
        "morc.docs.luals() → { path: string, text: string }[], string[]  the LuaLS annotation stubs (`morc doc --luals DIR` writes them), \
         and the problems found: a documented function without a typed signature line, an untyped parameter, a type that names no class.\n\
         A doc string's typed signature lines are what the stubs say:\n\
         \x20 e.g. morc.lib.find(name: string) → string?  the folder of library `name`\n\
         \x20 e.g. assembly:connect(from: string, to: string, opts?: { delay?: boolean }) → assembly\n\
         \x20 e.g. run_result.ok: boolean  (CLASS:method and CLASS.field lines define the class CLASS)",
    ))?;
    Ok(docs)
}

/// A state with the full API on a started engine, and its `morc.docs`.
fn docs_state() -> Result<(mlua::Lua, mlua::Table), String> {
    let engine = crate::start_engine(morc_kernel::EngineConfig::default())?;
    let lua = super::new_state().map_err(|e| e.to_string())?;
    super::install(&lua, engine).map_err(|e| e.to_string())?;
    let docs: mlua::Table = lua.globals().get::<mlua::Table>("morc").and_then(|m| m.get("docs")).map_err(|e| e.to_string())?;
    Ok((lua, docs))
}

/// The reference as markdown, and the public names that lack a doc string.
pub fn markdown() -> Result<(String, Vec<String>), String> {
    let (_lua, docs) = docs_state()?;
    let md: String = docs.get::<mlua::Function>("markdown").and_then(|f| f.call(())).map_err(|e| e.to_string())?;
    let (_, missing): (mlua::Value, Vec<String>) = docs.get::<mlua::Function>("sections").and_then(|f| f.call(())).map_err(|e| e.to_string())?;
    Ok((md, missing))
}

/// One file of the LuaLS stubs: its path relative to the stub folder, and its text.
#[derive(Debug, Clone)]
pub struct StubFile {
    /// Relative path with `/` separators, e.g. `morc.lua`, `classes/engine.lua`.
    pub path: String,
    /// The Lua text (a `---@meta` file).
    pub text: String,
}

/// The LuaLS annotation stubs of the whole Lua surface, and the problems found in the doc strings
/// (a documented function without a typed signature, an untyped parameter, a type naming no class).
pub fn luals() -> Result<(Vec<StubFile>, Vec<String>), String> {
    let (_lua, docs) = docs_state()?;
    let (files, problems): (Vec<mlua::Table>, Vec<String>) = docs.get::<mlua::Function>("luals").and_then(|f| f.call(())).map_err(|e| e.to_string())?;
    let files = files.into_iter().map(|t| Ok(StubFile { path: t.get("path")?, text: t.get("text")? })).collect::<mlua::Result<Vec<_>>>().map_err(|e| e.to_string())?;
    Ok((files, problems))
}
