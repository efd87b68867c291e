//! `morc check FILE…`: loads and validates scripts without moving anything.
//! Each file runs in a Lua state of its own whose `engine:run` only checks the
//! assembly (as a run would before it starts) and answers "checked".

use std::path::PathBuf;

use super::{exit, start_engine};
use crate::kernel::engine::EngineConfig;

pub fn main(files: &[PathBuf]) -> i32 {
    let mut failed = 0;
    for file in files {
        match check_file(file) {
            Ok(()) => println!("{}: OK", file.display()),
            Err(e) => {
                failed += 1;
                println!("{}: FAILED\n{}", file.display(), indent(&e));
            }
        }
    }
    if failed > 0 {
        eprintln!("morc check: {failed} of {} file(s) failed", files.len());
        exit::SCRIPT_ERROR
    } else {
        exit::OK
    }
}

/// Runs `file` with the engine in check mode (virtual clock, simulated robot: nothing moves).
pub fn check_file(file: &PathBuf) -> Result<(), String> {
    let engine = start_engine(EngineConfig::default())?;
    let lua = crate::lua::new_state().map_err(|e| e.to_string())?;
    lua.set_app_data(crate::lua::engine::CheckOnly);
    crate::lua::install(&lua, engine).map_err(|e| e.to_string())?;
    super::run::run_file(&lua, file, &[])
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n")
}
