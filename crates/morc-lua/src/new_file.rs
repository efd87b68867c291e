//! Files that results are saved to are never replaced: `path` when it is free, else the next
//! free `NAME-001.ext`, `NAME-002.ext` … beside it (as recordings are named), taken
//! create-exclusive so two savers cannot race for one name.

use std::io::Write;
use std::path::Path;

use mlua::{Lua, Table};

use crate::error::{raise, ErrorKind};

/// Writes `text` to `path` or the next free name beside it; the path written. `what` names the
/// caller in errors.
pub(crate) fn write_new(path: &str, text: &str, what: &str) -> mlua::Result<String> {
    let (mut f, written) = create_new(path, what)?;
    f.write_all(text.as_bytes()).map_err(|e| raise(ErrorKind::Robot, format!("{what}: writing {written}: {e}")))?;
    Ok(written)
}

/// Creates `path` or the next free name beside it, empty, for the caller to write; the file and
/// its path. `what` names the caller in errors.
pub(crate) fn create_new(path: &str, what: &str) -> mlua::Result<(std::fs::File, String)> {
    let p = Path::new(path);
    let (stem, ext) = (p.file_stem().map_or(String::new(), |s| s.to_string_lossy().into_owned()), p.extension().map_or(String::new(), |e| format!(".{}", e.to_string_lossy())));
    for k in 0..1000 {
        let candidate = if k == 0 { p.to_path_buf() } else { p.with_file_name(format!("{stem}-{k:03}{ext}")) };
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&candidate) {
            Ok(f) => return Ok((f, candidate.to_string_lossy().into_owned())),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(raise(ErrorKind::Robot, format!("{what}: cannot write {}: {e}", candidate.display()))),
        }
    }
    Err(raise(ErrorKind::Robot, format!("{what}: {path} and its next 999 free names exist: give another path")))
}

/// Where a save to `path` goes: `path`, or under `morc check` the file of that name in the
/// check's scratch folder (a check runs the program but leaves the user's folders as they were).
pub(crate) fn checked_path(lua: &Lua, path: &str) -> String {
    match lua.app_data_ref::<crate::engine::CheckOnly>() {
        Some(check) if !Path::new(path).starts_with(&check.record_dir) => {
            let name = Path::new(path).file_name().map_or_else(|| "saved".into(), |n| n.to_os_string());
            check.record_dir.join(name).to_string_lossy().into_owned()
        }
        _ => path.to_string(),
    }
}

/// Registers `morc.write_new(path, text)`: [`write_new`] for Lua savers (a library's helpers
/// saving taught points, a program's own results), so every save in morc names files one way.
pub(crate) fn install(lua: &Lua, morc: &Table) -> mlua::Result<()> {
    let f = lua.create_function(|lua, (path, text): (mlua::Value, mlua::String)| {
        let what = format!("{}: morc.write_new", super::origin::caller(lua));
        // A number is no file name (Lua would make 0/0 the file "-nan").
        let mlua::Value::String(path) = path else {
            return Err(raise(ErrorKind::Lua, format!("{what}: the path must be a string (the file to write), got {}", path.type_name())));
        };
        let path = path.to_str()?.to_string();
        // Writing a file anywhere is a library's io capability.
        crate::library::check(lua, "io", "use io outside its folder (morc.write_new writes a file)")?;
        write_new(&checked_path(lua, &path), &text.to_str()?, &what)
    })?;
    morc.set("write_new", f.clone())?;
    crate::linalg::doc(
        morc,
        f,
        "morc.write_new(path: string, text: string) → string  writes text to a new file: path when it is free, else the next free NAME-001.ext, NAME-002.ext … beside it (as recordings are named); never replaces a file (under morc check: into the check's scratch folder). Returns the path written.",
    )
}
