//! `morc doc NAME`: the documentation of a Lua function or value (`morc.assembly`)
//! or a component kind (`sine`), as `help` shows it in the REPL; `morc doc --luals DIR`:
//! the same doc strings as LuaLS annotation stubs, for completion in VS Code and Neovim.

use std::path::Path;

use mlua::{Function, Lua, Value};

use super::{exit, start_engine};
use morc_kernel::EngineConfig;

pub fn main(name: &str) -> i32 {
    match doc_text(name) {
        Ok(Some(text)) => {
            println!("{text}");
            exit::OK
        }
        Ok(None) => {
            eprintln!("morc doc: no documentation for '{name}' (try a function such as morc.assembly, or a component kind from morc.components())");
            exit::SCRIPT_ERROR
        }
        Err(e) => {
            eprintln!("morc doc: {e}");
            exit::SCRIPT_ERROR
        }
    }
}

/// `morc doc --luals DIR`: writes the stubs into DIR (made if missing; files of the same name are
/// replaced) and ends with the line that says how to point LuaLS at it.
pub fn luals(dir: &Path) -> i32 {
    let (files, problems) = match morc_lua::docs::luals() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("morc doc --luals: {e}");
            return exit::SCRIPT_ERROR;
        }
    };
    for p in &problems {
        eprintln!("morc doc --luals: warning: {p}");
    }
    if let Err(e) = clear_old_stubs(dir) {
        eprintln!("morc doc --luals: {e}");
        return exit::USAGE;
    }
    for f in &files {
        let path = dir.join(&f.path);
        let written = path.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|()| std::fs::write(&path, &f.text));
        if let Err(e) = written {
            eprintln!("morc doc --luals: cannot write {}: {e} (choose a folder you can write to)", path.display());
            return exit::SCRIPT_ERROR;
        }
    }
    let list: String = files.iter().map(|f| format!("{}\n", f.path)).collect();
    if let Err(e) = std::fs::write(dir.join(STUB_LIST), list) {
        eprintln!("morc doc --luals: cannot write {}: {e}", dir.join(STUB_LIST).display());
        return exit::SCRIPT_ERROR;
    }
    let shown = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let shown = shown.display().to_string();
    println!("wrote {} LuaLS stub files to {shown}", files.len());
    println!(
        "point LuaLS at them: in your project's .luarc.json {{ \"runtime.version\": \"Lua 5.4\", \"workspace.library\": [{shown:?}] }} \
         (VS Code: the same keys as \"Lua.…\" in settings.json; Neovim: settings = {{ Lua = {{ workspace = {{ library = {{ {shown:?} }} }} }} }})"
    );
    exit::OK
}

/// The list of the files the last `morc doc --luals` wrote into its folder.
const STUB_LIST: &str = ".morc-luals";

/// Removes the stubs an earlier run wrote (a class gone since stays gone), and refuses a folder
/// holding other files: the stubs' names (morc.lua, skills.lua, classes/) could be the user's own.
fn clear_old_stubs(dir: &Path) -> Result<(), String> {
    let Ok(mut entries) = std::fs::read_dir(dir) else { return Ok(()) };
    let list = dir.join(STUB_LIST);
    match std::fs::read_to_string(&list) {
        Ok(old) => {
            for rel in old.lines().filter(|l| !l.is_empty() && !l.contains("..")) {
                let _ = std::fs::remove_file(dir.join(rel));
            }
            let _ = std::fs::remove_dir(dir.join("classes"));
            let _ = std::fs::remove_dir(dir.join("morc"));
            Ok(())
        }
        Err(_) if entries.next().is_none() => Ok(()),
        Err(_) => Err(format!("{} holds files that morc doc --luals did not write (it has no {STUB_LIST}); give it an empty or new folder, e.g. morc doc --luals ~/morc-luals", dir.display())),
    }
}

/// What `help(NAME)` prints, or None when there is no documentation.
pub fn doc_text(name: &str) -> Result<Option<String>, String> {
    let engine = start_engine(EngineConfig::default())?;
    let lua = morc_lua::new_state().map_err(|e| e.to_string())?;
    morc_lua::install(&lua, engine).map_err(|e| e.to_string())?;
    help_text(&lua, name).map_err(|e| e.to_string())
}

/// The skill or library `name` names in the library path, or nil. Only the library whose
/// skills/NAME.lua exists is loaded (in its sandbox, as a program would load it).
fn library_subject(lua: &Lua, name: &str) -> mlua::Result<Value> {
    lua.load(
        r#"local name = ...
        local libname, skill = name:match("^([%w_%-]+)%.([%w_]+)$")
        local function skill_of(lib_name, skill_name)
          local ok, lib = pcall(morc.lib.load, lib_name)
          if ok then return lib.skills[skill_name] end
        end
        if libname then return skill_of(libname, skill) end
        for _, m in ipairs(morc.lib.list()) do
          if not m.error and #morc.lib.files(m.dir .. "/skills") > 0 then
            for _, f in ipairs(morc.lib.files(m.dir .. "/skills")) do
              if f == name .. ".lua" then
                local s = skill_of(m.name, name)
                if s then return s end
              end
            end
          end
        end
        for _, m in ipairs(morc.lib.list()) do
          if m.name == name and not m.error then
            local ok, lib = pcall(morc.lib.load, name)
            if not ok then return morc.doc({}, ("%s %s — %s\n  (cannot load it: %s)"):format(m.name, m.version, m.doc or "", lib)) end
            local names = {}
            for s in pairs(lib.skills) do names[#names + 1] = s end
            table.sort(names)
            local doc = ("%s %s — %s\n  folder %s\n  skills %s"):format(lib.name, lib.version, lib.doc, lib.dir, table.concat(names, ", "))
            return morc.doc({}, doc)
          end
        end
        return nil"#,
    )
    .set_name("=morc doc")
    .call(name)
}

fn help_text(lua: &Lua, name: &str) -> mlua::Result<Option<String>> {
    // A name that is a Lua path (morc.assembly) documents its value; any other
    // name (a component kind) goes to help as a string.
    let is_path = name.split('.').all(|part| !part.is_empty() && part.chars().all(|c| c.is_alphanumeric() || c == '_'));
    let value = if is_path {
        let mut value = Value::Table(lua.globals());
        for part in name.split('.') {
            value = match value {
                Value::Table(t) => t.get(part)?,
                _ => Value::Nil,
            };
        }
        value
    } else {
        Value::Nil
    };
    // Not a global: a skill of a library in the library path (`morc doc ptp`, as `help(ptp)`
    // after morc.lib.use "motion"), LIB.SKILL, or a library by name.
    let value = if value.is_nil() { library_subject(lua, name)? } else { value };
    let subject = if value.is_nil() { Value::String(lua.create_string(name)?) } else { value };
    let capture: Function = lua
        .load(
            r#"local subject = ...
            local out, print_ = {}, print
            print = function(...) local t = table.pack(...) for i = 1, t.n do t[i] = tostring(t[i]) end out[#out + 1] = table.concat(t, "\t") end
            local ok, err = pcall(help, subject)
            print = print_
            if not ok then error(err, 0) end
            return table.concat(out, "\n")"#,
        )
        .set_name("=morc doc")
        .into_function()?;
    let text: String = capture.call(subject)?;
    if text.is_empty() || text.starts_with("no documentation for") {
        Ok(None)
    } else {
        Ok(Some(text))
    }
}
