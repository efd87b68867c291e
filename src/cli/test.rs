//! `morc test [DIR|NAME]`: runs a library's Lua tests on the virtual clock: the library in
//! folder DIR, or the installed library NAME (found in the library path, as `morc lib info NAME`
//! and `morc.lib.load "NAME"` find it).

use std::path::{Path, PathBuf};

use mlua::{Function, Table};

use super::exit;

pub fn main(dir: &Path) -> i32 {
    let dir = match folder(dir) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("morc test: {e}");
            return exit::USAGE;
        }
    };
    let results = match morc_lua::testing::run_library(&dir) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("morc test: {e}");
            return exit::USAGE;
        }
    };
    let (mut passed, mut failed) = (0, 0);
    for r in &results {
        passed += r.passed;
        failed += r.failed;
        let first = r.report.lines().next().unwrap_or("");
        if r.failed == 0 {
            println!("{}: {first}", r.file.display());
        } else {
            println!("{}: FAILED\n{}", r.file.display(), r.report);
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        exit::OK
    } else {
        exit::SCRIPT_ERROR
    }
}

/// The folder to test: `what` when it is one, else the installed library of that name.
fn folder(what: &Path) -> Result<PathBuf, String> {
    if what.exists() {
        return Ok(what.to_path_buf());
    }
    let name = what.to_string_lossy();
    // A path that is not there (with a `/`, or ending in .lua) names no library.
    let is_name = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let lua = morc_lua::library::manifest_state().map_err(|e| e.to_string())?;
    let lib: Table = lua.globals().get::<Table>("morc").and_then(|m| m.get("lib")).map_err(|e| e.to_string())?;
    let found: Option<String> = if is_name { lib.get::<Function>("find").and_then(|f| f.call(name.as_ref())).map_err(|e| e.to_string())? } else { None };
    found.map(PathBuf::from).ok_or_else(|| {
        let path: Vec<String> = lib.get("path").unwrap_or_default();
        if is_name {
            format!("{name}: no such folder, and no library '{name}' in the library path ({}); `morc lib list` shows the installed libraries", path.join(", "))
        } else {
            format!("{name}: no such folder (give a library's folder, a folder of *.lua tests, or an installed library's name)")
        }
    })
}
