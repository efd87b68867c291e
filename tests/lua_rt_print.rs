//! `print` in a Lua component's step, which runs on the engine's thread, goes through a queue to
//! the console: the lines arrive, in order, before what the program prints after the run.

use std::process::Command;

#[test]
fn prints_from_a_step_reach_the_console_before_the_run_returns() {
    let dir = std::env::temp_dir().join(format!("morc-rt-print-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let program = dir.join("talk.lua");
    std::fs::write(
        &program,
        r#"package.path = "tests/lua/modules/?.lua;" .. package.path
local mods = require "rt_modules"
local a = morc.assembly { "talk", duration = 0.005 }
a:add("t", mods.talker)
local r = morc.engine:run(a)
print("after run", r.ok)
"#,
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_morc")).arg("run").arg(&program).current_dir(env!("CARGO_MANIFEST_DIR")).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines, ["talker step\t1\tt=0.000", "talker step\t3\tt=0.002", "after run\ttrue"], "{stdout}");
    std::fs::remove_dir_all(&dir).unwrap();
}
