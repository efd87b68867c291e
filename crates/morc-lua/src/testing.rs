//! Runs Lua test files (each uses `morc.testing` and returns its summary) on a
//! fresh engine on the virtual clock: `cargo test` (tests/lua_tests.rs) and
//! `morc test DIR` share this one implementation.

use std::path::{Path, PathBuf};

use morc_kernel::EngineConfig;

/// The outcome of one test file.
pub struct FileResult {
    /// The test file run.
    pub file: PathBuf,
    /// Tests that passed.
    pub passed: usize,
    /// Tests that failed; at least 1 when the file did not run to its end or declared no test.
    pub failed: usize,
    /// "N passed, M failed" and the failures, or the error that stopped the file.
    pub report: String,
}

/// Runs one file on a fresh engine (virtual clock, simulated axes); `libraries`
/// are folders put first in the library path (the library under test's parent).
pub fn run_file(path: &Path, libraries: &[PathBuf]) -> FileResult {
    let failed = |report: String| FileResult { file: path.to_path_buf(), passed: 0, failed: 1, report };
    let engine = match crate::start_engine(EngineConfig::default()) {
        Ok(e) => e,
        Err(e) => return failed(format!("cannot start the engine: {e}")),
    };
    let result = (|| -> mlua::Result<(String, bool)> {
        let lua = super::new_state()?;
        super::install(&lua, engine)?;
        let lib_path: mlua::Table = lua.globals().get::<mlua::Table>("morc")?.get::<mlua::Table>("lib")?.get("path")?;
        for (i, dir) in libraries.iter().enumerate() {
            lib_path.raw_insert(i as i64 + 1, dir.display().to_string())?;
        }
        let code = std::fs::read_to_string(path).map_err(|e| mlua::Error::runtime(format!("cannot read {}: {e}", path.display())))?;
        lua.load(code).set_name(format!("@{}", display_name(path))).call(())
    })();
    match result {
        Ok((summary, ok)) => {
            let (passed, failed) = counts(&summary);
            if passed + failed == 0 {
                // A file that tests nothing proves nothing: it fails rather than pass with "0 passed".
                let report = format!("{summary}\n{}: declares no test: add T.test(\"name\", function() … end) before `return T.summary()`", display_name(path));
                return FileResult { file: path.to_path_buf(), passed: 0, failed: 1, report };
            }
            FileResult { file: path.to_path_buf(), passed, failed: if ok { failed } else { failed.max(1) }, report: summary }
        }
        Err(e) => failed(crate::kinds::instance::lua_error_text(&e)),
    }
}

/// A path relative to the current folder when it is under it (shorter messages).
fn display_name(path: &Path) -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    path.strip_prefix(&cwd).unwrap_or(path).display().to_string()
}

/// Reads "N passed, M failed" from a summary's first line.
fn counts(summary: &str) -> (usize, usize) {
    let first = summary.lines().next().unwrap_or("");
    let mut words = first.split_whitespace();
    let passed = words.next().and_then(|w| w.parse().ok()).unwrap_or(0);
    let failed = first.split(", ").nth(1).and_then(|w| w.split_whitespace().next()).and_then(|w| w.parse().ok()).unwrap_or(0);
    (passed, failed)
}

/// The `*.lua` files of a folder, sorted.
pub fn test_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let rd = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = rd.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "lua")).collect();
    files.sort();
    Ok(files)
}

/// Runs the tests of a library folder (`DIR/tests/*.lua`, or DIR's own `*.lua`
/// when it has no tests/), with the library findable by name.
pub fn run_library(dir: &Path) -> Result<Vec<FileResult>, String> {
    let dir = dir.canonicalize().map_err(|e| format!("{}: {e}", dir.display()))?;
    let is_library = dir.join("morc-lib.lua").exists();
    let tests = if dir.join("tests").is_dir() || is_library { dir.join("tests") } else { dir.clone() };
    if !tests.is_dir() {
        return Err(format!("{}: the library has no tests/ folder (add tests/NAME.lua files using morc.testing)", dir.display()));
    }
    let files = test_files(&tests)?;
    if files.is_empty() {
        return Err(format!("{}: no tests (*.lua files using morc.testing)", tests.display()));
    }
    let libraries: Vec<PathBuf> = if is_library { dir.parent().map(Path::to_path_buf).into_iter().collect() } else { Vec::new() };
    Ok(files.iter().map(|f| run_file(f, &libraries)).collect())
}
