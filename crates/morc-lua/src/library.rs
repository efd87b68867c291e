//! The library machinery's Rust half: where libraries are searched, and the
//! folder listing Lua lacks. The rest is `lua/morc/lib.lua`.

use std::path::{Path, PathBuf};

use mlua::{Lua, Table};

const LIB_LUA: &str = include_str!("../../../lua/morc/lib.lua");

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
pub(crate) fn library_roots(home: &Path) -> Vec<PathBuf> {
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
    let mut names: Vec<String> = std::fs::read_dir(dir).map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect()).unwrap_or_default();
    names.sort();
    names
}

/// Installs `morc.lib` into the `morc` table (needs `morc.doc` from the prelude).
pub(crate) fn register(lua: &Lua, morc: &Table, home: &Path) -> mlua::Result<Table> {
    let lib = lua.create_table()?;
    let roots: Vec<String> = library_roots(home).iter().map(|p| p.display().to_string()).collect();
    lib.set("path", lua.create_sequence_from(roots)?)?;
    lib.set("user_dir", user_lib_dir().display().to_string())?;
    lib.set(
        "files",
        lua.create_function(|lua, dir: String| {
            check_read(lua, Path::new(&dir), "morc.lib.files")?;
            Ok(list_dir(&dir))
        })?,
    )?;
    lib.set(
        "manifest",
        lua.create_function(|lua, dir: String| {
            let m = read_manifest(Path::new(&dir)).map_err(mlua::Error::runtime)?;
            manifest_table(lua, &m, &dir)
        })?,
    )?;
    morc.set("lib", lib.clone())?;
    // What only morc.lib's own code gets (passed to the chunk, in no table a library can reach):
    // the unchecked folder listing, and the environment a library's code runs in.
    let private = lua.create_table()?;
    private.set("files", lua.create_function(|_, dir: String| Ok(list_dir(&dir)))?)?;
    private.set(
        "env_for",
        lua.create_function(|lua, dir: String| {
            let m = read_manifest(Path::new(&dir)).map_err(mlua::Error::runtime)?;
            let trust = std::sync::Arc::new(Trust::for_load(lua, Path::new(&dir), &m));
            let canonical = trust.dir.display().to_string();
            let guard = guard_table(lua, trust, true)?;
            let env: Table = sandbox_builder(lua)?.call(guard)?;
            Ok((env, canonical))
        })?,
    )?;
    lua.load(LIB_LUA).set_name("@lua/morc/lib.lua").call::<()>(private)?;
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

// ---------------------------------------------------------------------------------------------
// Manifests, read without trusting them
// ---------------------------------------------------------------------------------------------

/// What a library may be granted beyond running skills on the engine and reading its own
/// folder: name, and what it lets the library do (the words of the refusal message).
pub const CAPABILITIES: [(&str, &str); 5] = [
    ("io", "use io outside its folder (read files elsewhere, write or remove any file)"),
    ("process", "start processes and end morc (os.execute, io.popen, os.exit)"),
    ("network", "use a network interface (an EtherCAT bus on a real interface)"),
    ("bus", "access the bus directly (start an engine on a bus, engine.bus, engine:reset_faults)"),
    ("binary", "load binary code (Lua bytecode, C modules, FMU binaries)"),
];

/// The largest manifest read, and the most memory and Lua instructions it may use: a manifest
/// is a table literal; anything more is refused before it costs anything.
const MANIFEST_MAX_BYTES: usize = 256 * 1024;
const MANIFEST_MAX_MEMORY: usize = 16 * 1024 * 1024;
const MANIFEST_MAX_INSTRUCTIONS: u32 = 2_000_000;

/// A library's manifest (`morc-lib.lua`), checked.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Manifest {
    /// The library's name, as the manifest gives it (the folder `morc lib install` makes).
    pub name: String,
    /// The library's version, which other libraries' `depends` constrain.
    pub version: String,
    /// The morc versions it works with (a constraint), if it says.
    pub morc: Option<String>,
    /// Other libraries it needs: name → version constraint, sorted by name.
    pub depends: Vec<(String, String)>,
    /// One line on what the library does.
    pub doc: Option<String>,
    /// The capabilities it declares (names from [`CAPABILITIES`]), sorted, no duplicates.
    pub capabilities: Vec<String>,
}

/// Reads and checks `dir/morc-lib.lua`.
pub fn read_manifest(dir: &Path) -> Result<Manifest, String> {
    let path = dir.join("morc-lib.lua");
    let shown = path.display().to_string();
    let meta = std::fs::metadata(&path).map_err(|e| format!("{shown}: {e}"))?;
    if meta.len() > MANIFEST_MAX_BYTES as u64 {
        return Err(format!("{shown}: the manifest is {} bytes; a manifest is a short table (at most {MANIFEST_MAX_BYTES} bytes)", meta.len()));
    }
    let source = std::fs::read(&path).map_err(|e| format!("{shown}: {e}"))?;
    parse_manifest(&shown, &source)
}

/// Runs a manifest's text in a Lua state of its own — no io, os, load, require or debug, capped
/// in memory and instructions — and checks what it returns. `shown` names it in errors.
/// A manifest comes from strangers: this runs before anyone granted the library anything.
pub fn parse_manifest(shown: &str, source: &[u8]) -> Result<Manifest, String> {
    let fail = |what: String| format!("{shown}: {what}");
    if source.len() > MANIFEST_MAX_BYTES {
        return Err(fail(format!("the manifest is {} bytes; a manifest is a short table (at most {MANIFEST_MAX_BYTES} bytes)", source.len())));
    }
    let lua = Lua::new_with(mlua::StdLib::STRING | mlua::StdLib::TABLE | mlua::StdLib::MATH, mlua::LuaOptions::default()).map_err(|e| fail(e.to_string()))?;
    lua.set_memory_limit(MANIFEST_MAX_MEMORY).map_err(|e| fail(e.to_string()))?;
    let steps = std::sync::atomic::AtomicU32::new(0);
    lua.set_hook(mlua::HookTriggers::new().every_nth_instruction(1000), move |_, _| {
        if steps.fetch_add(1000, std::sync::atomic::Ordering::Relaxed) > MANIFEST_MAX_INSTRUCTIONS {
            return Err(mlua::Error::runtime("the manifest runs too long (a manifest only returns a table)"));
        }
        Ok(mlua::VmState::Continue)
    });
    let run = || -> mlua::Result<mlua::Value> {
        let g = lua.globals();
        let env = lua.create_table()?;
        for k in ["string", "table", "math", "pairs", "ipairs", "next", "select", "tostring", "tonumber", "type", "error", "assert", "pcall", "rawget", "rawlen", "rawequal"] {
            env.raw_set(k, g.raw_get::<mlua::Value>(k)?)?;
        }
        lua.load(source).set_name(format!("@{shown}")).set_mode(mlua::ChunkMode::Text).set_environment(env).eval()
    };
    let value = run().map_err(|e| fail(first_line(&e.to_string())))?;
    let bad = |what: &str| fail(format!("the manifest {what}; it returns {{ name = \"…\", version = \"1.0.0\", morc = \">=0.1\", depends = {{ … }}, capabilities = {{ … }}, doc = \"…\" }}"));
    let mlua::Value::Table(t) = value else { return Err(bad("must return a table")) };
    let string = |key: &str| -> Result<Option<String>, String> {
        match t.raw_get::<mlua::Value>(key).map_err(|e| fail(e.to_string()))? {
            mlua::Value::Nil => Ok(None),
            mlua::Value::String(s) => Ok(Some(s.to_string_lossy())),
            _ => Err(bad(&format!("'{key}' must be a string"))),
        }
    };
    let name = string("name").map_err(|_| bad("needs a name (letters, digits, _ and -)"))?.unwrap_or_default();
    let mut chars = name.chars();
    if !chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') || name.len() > 100 {
        return Err(bad("needs a name (letters, digits, _ and -)"));
    }
    let version = string("version").map_err(|_| bad("needs a version such as \"1.0.0\""))?.unwrap_or_default();
    if !version.trim_start().starts_with(|c: char| c.is_ascii_digit()) {
        return Err(bad("needs a version such as \"1.0.0\""));
    }
    let morc = string("morc")?;
    let doc = string("doc").map_err(|_| bad("'doc' must be a string"))?;
    let mut depends = Vec::new();
    match t.raw_get::<mlua::Value>("depends").map_err(|e| fail(e.to_string()))? {
        mlua::Value::Nil => {}
        mlua::Value::Table(d) => {
            for pair in d.pairs::<mlua::Value, mlua::Value>() {
                match pair.map_err(|e| fail(e.to_string()))? {
                    (mlua::Value::String(k), mlua::Value::String(v)) => depends.push((k.to_string_lossy(), v.to_string_lossy())),
                    _ => return Err(bad("'depends' must be a table name = \"constraint\"")),
                }
            }
        }
        _ => return Err(bad("'depends' must be a table name = \"constraint\"")),
    }
    depends.sort();
    let mut capabilities = Vec::new();
    let known = || CAPABILITIES.iter().map(|(c, _)| *c).collect::<Vec<_>>().join(", ");
    match t.raw_get::<mlua::Value>("capabilities").map_err(|e| fail(e.to_string()))? {
        mlua::Value::Nil => {}
        mlua::Value::Table(list) => {
            for v in list.sequence_values::<mlua::Value>() {
                let mlua::Value::String(s) = v.map_err(|e| fail(e.to_string()))? else { return Err(bad(&format!("'capabilities' must be a list of names ({})", known()))) };
                let s = s.to_string_lossy();
                if !CAPABILITIES.iter().any(|(c, _)| *c == s) {
                    return Err(fail(format!("unknown capability '{s}' in the manifest (known: {})", known())));
                }
                capabilities.push(s);
            }
        }
        _ => return Err(bad(&format!("'capabilities' must be a list of names ({})", known()))),
    }
    capabilities.sort();
    capabilities.dedup();
    Ok(Manifest { name, version, morc, depends, doc, capabilities })
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").to_string()
}

/// The manifest as the Lua table `morc.lib.manifest` returns.
fn manifest_table(lua: &Lua, m: &Manifest, dir: &str) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set("name", m.name.as_str())?;
    t.set("version", m.version.as_str())?;
    t.set("morc", m.morc.as_deref())?;
    t.set("doc", m.doc.as_deref())?;
    let depends = lua.create_table()?;
    for (k, v) in &m.depends {
        depends.set(k.as_str(), v.as_str())?;
    }
    t.set("depends", depends)?;
    t.set("capabilities", lua.create_sequence_from(m.capabilities.iter().map(String::as_str))?)?;
    t.set("dir", dir)?;
    t.set("path", format!("{dir}/morc-lib.lua"))?;
    Ok(t)
}

// ---------------------------------------------------------------------------------------------
// Grants and the library sandbox
// ---------------------------------------------------------------------------------------------

/// Where `morc lib install` records what the user granted a library: outside the library's
/// folder, which the library may read.
pub fn grant_file(name: &str) -> PathBuf {
    user_lib_dir().join(".grants").join(name)
}

/// The capabilities granted to installed library `name` (none when no grant was recorded).
pub(crate) fn granted(name: &str) -> Vec<String> {
    std::fs::read_to_string(grant_file(name))
        .map(|t| t.split([',', '\n', ' ']).filter(|s| !s.is_empty()).map(str::to_string).collect())
        .unwrap_or_default()
}

/// What a loaded library may do, and how a refusal says so.
#[derive(Debug, Clone)]
pub struct Trust {
    /// The library's name, from its manifest.
    pub name: String,
    /// The library's folder, canonical.
    pub dir: PathBuf,
    /// Path of its `morc-lib.lua`, for refusal messages.
    pub manifest: String,
    /// The capabilities its manifest declares.
    pub declared: Vec<String>,
    /// Some for a library installed in the user library folder: what `--grant` recorded.
    /// None for one used from MORC_PATH, morc's folders or a folder path: it gets what it declares.
    pub granted: Option<Vec<String>>,
    /// A library that another library's code loaded from outside the library path (a folder it
    /// ships, say) has at most what that library has: (its name, what it may do).
    pub ceiling: Option<(String, Vec<String>)>,
}

impl Trust {
    /// What the library in `dir`, with manifest `m`, may do: its declared capabilities, limited to those granted if it is installed in the user library folder.
    pub fn new(dir: &Path, m: &Manifest) -> Trust {
        let canon = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        let installed = user_lib_dir().canonicalize().ok().is_some_and(|u| canon.parent() == Some(u.as_path()));
        Trust {
            name: m.name.clone(),
            manifest: dir.join("morc-lib.lua").display().to_string(),
            dir: canon,
            declared: m.capabilities.clone(),
            granted: installed.then(|| granted(&m.name)),
            ceiling: None,
        }
    }

    /// As [`Trust::new`], for a library being loaded now: one outside the library path (loaded by
    /// folder) that library code asked for gets no more than the libraries on the stack have, so
    /// a library cannot lend itself capabilities through a manifest it ships.
    pub(crate) fn for_load(lua: &Lua, dir: &Path, m: &Manifest) -> Trust {
        let mut trust = Trust::new(dir, m);
        let roots: Vec<PathBuf> = library_roots(&super::home()).iter().filter_map(|r| r.canonicalize().ok()).collect();
        let in_library_path = trust.dir.parent().is_some_and(|p| roots.iter().any(|r| r == p));
        if !in_library_path {
            if let Some(lender) = libraries_on_stack(lua).into_iter().next() {
                let caps = CAPABILITIES.iter().map(|(c, _)| c.to_string()).filter(|c| libraries_on_stack(lua).iter().all(|t| t.allows(c))).collect();
                trust.ceiling = Some((lender.name.clone(), caps));
            }
        }
        trust
    }

    /// Whether the library may use capability `cap`: declared, granted (if installed) and within its ceiling.
    pub fn allows(&self, cap: &str) -> bool {
        self.declared.iter().any(|c| c == cap) && self.granted.as_ref().is_none_or(|g| g.iter().any(|c| c == cap)) && self.ceiling.as_ref().is_none_or(|(_, c)| c.iter().any(|c| c == cap))
    }

    /// The refusal: the library, what it tried, the capability and what to do.
    pub(crate) fn denial(&self, cap: &str, what: &str) -> String {
        let (name, manifest) = (&self.name, &self.manifest);
        if let Some((lender, caps)) = &self.ceiling {
            if !caps.iter().any(|c| c == cap) {
                return format!("library '{name}' may not {what} (capability '{cap}': it was loaded from a folder by library '{lender}', which does not have it either)");
            }
        }
        if !self.declared.iter().any(|c| c == cap) {
            let todo = if self.granted.is_some() { format!("declare it and reinstall with --grant {cap}") } else { format!("declare it in the manifest: capabilities = {{ \"{cap}\" }}") };
            format!("library '{name}' may not {what} (capability '{cap}' not declared in its manifest {manifest}); {todo}")
        } else {
            format!("library '{name}' may not {what} (capability '{cap}' declared in its manifest {manifest} but not granted when it was installed); if you trust it with that, reinstall it: morc lib install --force --grant {cap} SOURCE")
        }
    }

    /// Whether `path` (existing) lies in the library's folder, symbolic links followed.
    pub(crate) fn contains(&self, path: &Path) -> bool {
        path.canonicalize().is_ok_and(|p| p.starts_with(&self.dir))
    }
}

/// The libraries loaded in a Lua state, for the checks in morc's own functions.
#[derive(Default)]
struct Sandboxes(Vec<std::sync::Arc<Trust>>);

/// Registry key of the table coroutine → library name, for coroutines libraries create.
const THREADS_KEY: &str = "morc.lib.threads";

/// The libraries whose code is on the Lua call stack now (innermost first): a frame's chunk
/// name is the file it came from, and library code is loaded only under its folder's name
/// (morc.lib's loader and the sandbox's load both name chunks so). A coroutine a library made
/// counts as the library's even when its body is one of morc's functions.
pub(crate) fn libraries_on_stack(lua: &Lua) -> Vec<std::sync::Arc<Trust>> {
    let Some(sandboxes) = lua.app_data_ref::<Sandboxes>() else { return Vec::new() };
    if sandboxes.0.is_empty() {
        return Vec::new();
    }
    let mut found: Vec<std::sync::Arc<Trust>> = Vec::new();
    let mut add = |t: &std::sync::Arc<Trust>| {
        if !found.iter().any(|f| std::sync::Arc::ptr_eq(f, t)) {
            found.push(t.clone());
        }
    };
    for level in 0.. {
        let Some(frame) = lua.inspect_stack(level) else { break };
        let source = frame.source();
        if let Some(path) = source.source.as_deref().and_then(|s| s.strip_prefix('@')) {
            // Every library whose folder holds the file (a library's folder may hold another's).
            for t in sandboxes.0.iter().filter(|t| Path::new(path).starts_with(&t.dir)) {
                add(t);
            }
        }
    }
    if let Ok(threads) = lua.named_registry_value::<Table>(THREADS_KEY) {
        if let Ok(Some(name)) = threads.get::<Option<String>>(lua.current_thread()) {
            if let Some(t) = sandboxes.0.iter().find(|t| t.name == name) {
                add(t);
            }
        }
    }
    found
}

/// For morc's own functions: refuses `what` when library code on the stack lacks `cap`.
pub(crate) fn check(lua: &Lua, cap: &str, what: &str) -> mlua::Result<()> {
    match libraries_on_stack(lua).into_iter().find(|t| !t.allows(cap)) {
        Some(t) => Err(crate::error::raise(crate::error::ErrorKind::Library, t.denial(cap, what))),
        None => Ok(()),
    }
}

/// For morc's own functions that read a file: a library may read its own folder; elsewhere it needs `io`.
pub(crate) fn check_read(lua: &Lua, path: &Path, what: &str) -> mlua::Result<()> {
    match libraries_on_stack(lua).into_iter().find(|t| !t.allows("io") && !t.contains(path)) {
        Some(t) => Err(crate::error::raise(crate::error::ErrorKind::Library, t.denial("io", &format!("use io outside its folder ({what} {})", path.display())))),
        None => Ok(()),
    }
}

/// The library whose code defines something now (innermost on the stack), if any.
pub(crate) fn defining_library(lua: &Lua) -> Option<std::sync::Arc<Trust>> {
    libraries_on_stack(lua).into_iter().next()
}

/// The Lua-side handle of a library's trust, which lua/morc/sandbox.lua builds the
/// library's environment from. `register` records the library for [`check`].
pub(crate) fn guard_table(lua: &Lua, trust: std::sync::Arc<Trust>, register: bool) -> mlua::Result<Table> {
    if register {
        if lua.app_data_ref::<Sandboxes>().is_none() {
            lua.set_app_data(Sandboxes::default());
        }
        // Kept, never replaced: a frame of any library loaded so far must still be recognised.
        if let Some(mut s) = lua.app_data_mut::<Sandboxes>() {
            s.0.push(trust.clone());
        }
    }
    let g = lua.create_table()?;
    g.set("name", trust.name.as_str())?;
    g.set("dir", trust.dir.display().to_string())?;
    let t = trust.clone();
    g.set("allows", lua.create_function(move |_, cap: String| Ok(t.allows(&cap)))?)?;
    let t = trust.clone();
    g.set("denial", lua.create_function(move |_, (cap, what): (String, String)| Ok(t.denial(&cap, &what)))?)?;
    let t = trust.clone();
    g.set("readable", lua.create_function(move |_, path: String| Ok(t.allows("io") || t.contains(Path::new(&path))))?)?;
    let t = trust.clone();
    // The name a chunk loaded from `path` gets: the file itself inside the folder, else a name
    // under the folder, so that code the library loads from elsewhere still counts as its own.
    g.set(
        "chunkname",
        lua.create_function(move |_, (how, path): (String, String)| {
            Ok(match Path::new(&path).canonicalize() {
                Ok(p) if p.starts_with(&t.dir) => format!("@{}", p.display()),
                _ => format!("@{}/({how}) {path}", t.dir.display()),
            })
        })?,
    )?;
    let home_dirs: Vec<PathBuf> = ["lua", "stdlib", "skills", "robots"].iter().filter_map(|d| super::home().join(d).canonicalize().ok()).collect();
    g.set("is_morc_code", lua.create_function(move |_, path: String| Ok(Path::new(&path).canonicalize().is_ok_and(|p| home_dirs.iter().any(|h| p.starts_with(h)))))?)?;
    Ok(g)
}

const SANDBOX_LUA: &str = include_str!("../../../lua/morc/sandbox.lua");

/// The function that builds a library's environment from its guard table (lua/morc/sandbox.lua).
pub(crate) fn sandbox_builder(lua: &Lua) -> mlua::Result<mlua::Function> {
    let threads = match lua.named_registry_value::<Option<Table>>(THREADS_KEY)? {
        Some(t) => t,
        None => {
            let t = lua.create_table()?;
            let meta = lua.create_table()?;
            meta.set("__mode", "k")?;
            t.set_metatable(Some(meta));
            lua.set_named_registry_value(THREADS_KEY, &t)?;
            t
        }
    };
    let register_thread = lua.create_function(move |_, (th, name): (mlua::Thread, String)| threads.set(th, name))?;
    lua.load(SANDBOX_LUA).set_name("@lua/morc/sandbox.lua").call((lua.globals(), register_thread))
}
