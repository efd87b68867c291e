//! The library machinery's Rust half: where libraries are searched, and the
//! folder listing Lua lacks. The rest is `lua/morc/lib.lua`.

use std::path::{Path, PathBuf};

use mlua::{Lua, Table};

const LIB_LUA: &str = include_str!("../../lua/morc/lib.lua");

/// The user library folder: `$MORC_LIB`, else `$XDG_DATA_HOME/morc/lib`, else `~/.local/share/morc/lib`.
pub fn user_lib_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("MORC_LIB") {
        return PathBuf::from(d);
    }
    let data = std::env::var_os("XDG_DATA_HOME").map(PathBuf::from).or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")));
    data.unwrap_or_else(|| PathBuf::from(".")).join("morc/lib")
}

/// Folders searched for libraries, in order: MORC_PATH (':'-separated), the user
/// library folder, then morc's own lua/, stdlib/, skills/ and robots/.
pub fn library_roots(home: &Path) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = Vec::new();
    if let Some(extra) = std::env::var_os("MORC_PATH") {
        roots.extend(std::env::split_paths(&extra).filter(|p| !p.as_os_str().is_empty()));
    }
    roots.push(user_lib_dir());
    for d in ["lua", "stdlib", "skills", "robots"] {
        roots.push(home.join(d));
    }
    roots
}

/// Sorted entry names of a folder; empty when it does not exist.
fn list_dir(dir: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    names.sort();
    names
}

/// Installs `morc.lib` into the `morc` table (needs `morc.doc` from the prelude).
pub fn register(lua: &Lua, morc: &Table, home: &Path) -> mlua::Result<Table> {
    let lib = lua.create_table()?;
    let roots: Vec<String> = library_roots(home).iter().map(|p| p.display().to_string()).collect();
    lib.set("path", lua.create_sequence_from(roots)?)?;
    lib.set("user_dir", user_lib_dir().display().to_string())?;
    lib.set("files", lua.create_function(|_, dir: String| Ok(list_dir(&dir)))?)?;
    morc.set("lib", lib.clone())?;
    lua.load(LIB_LUA).set_name("@lua/morc/lib.lua").exec()?;
    Ok(lib)
}

/// A Lua state with just enough of `morc` to read manifests (`morc.version`,
/// `morc.doc`, `morc.lib`): for `morc lib` commands, which need no engine.
pub fn manifest_state() -> mlua::Result<Lua> {
    let lua = super::new_state()?;
    let morc = lua.create_table()?;
    morc.set("version", env!("CARGO_PKG_VERSION"))?;
    // Doc strings are only for help; here they are dropped.
    morc.set("doc", lua.create_function(|_, (v, _text): (mlua::Value, mlua::Value)| Ok(v))?)?;
    lua.globals().set("morc", morc.clone())?;
    register(&lua, &morc, &super::home())?;
    Ok(lua)
}
