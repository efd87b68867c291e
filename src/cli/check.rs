//! `morc check FILE…`: runs each program as `morc run` would, but on the
//! simulation (simulated robot, virtual clock, the simulated segment for any
//! bus: nothing real moves), so skills and programs get real results, and
//! passes only what ran cleanly. A file fails on a Lua error, on a run that
//! ended in a fault as the program's last, and on a skill that failed
//! (precondition, execute or evaluate) whose result the program never looked
//! at (`r.ok` never read). Recordings and saved files (`morc.write_new` and the
//! saves built on it) go to a scratch folder that is removed. A check joins no network: topic
//! components (`ros.publish`, `ros.subscribe`) run without ROS 2, their subscriptions silent, and
//! `morc.ros.start()` does not join it.

use std::path::{Path, PathBuf};

use super::{exit, start_engine};
use morc_kernel::EngineConfig;
use morc_lua::{CheckOnly, LastOutcome};

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

/// Runs `file` on the simulation as `morc check` does; the error says everything that failed.
pub fn check_file(file: &Path) -> Result<(), String> {
    let scratch = ScratchDir::new()?;
    let engine = start_engine(EngineConfig::default())?;
    let lua = morc_lua::new_state().map_err(|e| e.to_string())?;
    lua.set_app_data(CheckOnly { record_dir: scratch.0.clone() });
    // A check joins no network: topic components run without ROS 2 (unless `morc --ros check`).
    morc_ros::set_check_only(true);
    morc_lua::install(&lua, engine).map_err(|e| e.to_string())?;
    // Skills keep their failed results for the check (lua/morc/skill.lua).
    let morc: mlua::Table = lua.globals().get("morc").map_err(|e| e.to_string())?;
    morc.set("checking", true).map_err(|e| e.to_string())?;
    // What a program writes beside its recordings (morc.record_dir) goes to the scratch folder too.
    morc.set("record_dir", scratch.0.display().to_string()).map_err(|e| e.to_string())?;
    let mut problems = Vec::new();
    if let Err(e) = super::run::run_file(&lua, file, &[]) {
        problems.push(e);
    }
    for failure in unread_failures(&lua)? {
        problems.push(format!("{failure}\n({UNREAD})"));
    }
    if lua.app_data_ref::<LastOutcome>().is_some_and(|o| o.is_fault()) && problems.is_empty() {
        problems.push(format!("the program's last run ended in a fault (morc run would exit {})", exit::FAULT));
    }
    drop(lua); // the engine stops and every recording is closed before the scratch folder goes
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// What to do about a failed result the program never looked at.
pub(crate) const UNREAD: &str = "the program did not look at this result: handle a failure with `if not r.ok then … end`";

/// The skills' failed results the program never looked at (`r.ok` never read), in order:
/// "file:line: skill ✗ … reason" (lua/morc/skill.lua).
pub(crate) fn unread_failures(lua: &mlua::Lua) -> Result<Vec<String>, String> {
    lua.load("local ok, skill = pcall(require, 'morc.skill') return ok and skill.unread_failures and skill.unread_failures() or {}")
        .set_name("=morc check")
        .eval()
        .map_err(|e| e.to_string())
}

/// A folder for a check's recordings, removed with everything in it when dropped.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new() -> Result<ScratchDir, String> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!("morc-check-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create the check's scratch folder {}: {e}", dir.display()))?;
        Ok(ScratchDir(dir))
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n")
}
