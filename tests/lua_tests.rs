//! Runs every Lua test file in tests/lua/ on a fresh engine (virtual clock,
//! simulated axes). Each file uses `morc.testing` and returns its summary.

use std::path::Path;

use morc::cli::start_engine;
use morc::kernel::engine::EngineConfig;

fn run_lua_file(path: &Path) -> Result<String, String> {
    let engine = start_engine(EngineConfig::default()).map_err(|e| e.to_string())?;
    let lua = morc::lua::new_state().map_err(|e| e.to_string())?;
    morc::lua::install(&lua, engine).map_err(|e| e.to_string())?;
    let code = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let name = path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(path).display().to_string();
    let (summary, ok): (String, bool) = lua
        .load(code)
        .set_name(format!("@{name}"))
        .call(())
        .map_err(|e| morc::components::lua_component::lua_error_text(&e))?;
    if ok { Ok(summary) } else { Err(summary) }
}

#[test]
fn lua_tests() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lua");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "lua")).collect();
    files.sort();
    assert!(!files.is_empty(), "no Lua tests in {}", dir.display());
    let mut failed = Vec::new();
    for f in &files {
        match run_lua_file(f) {
            Ok(summary) => eprintln!("{}: {}", f.display(), summary.lines().next().unwrap_or("")),
            Err(e) => failed.push(format!("{}: {e}", f.display())),
        }
    }
    assert!(failed.is_empty(), "Lua tests failed:\n{}", failed.join("\n\n"));
}
