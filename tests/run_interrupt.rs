//! Ctrl-C during `morc run`: the running assembly is cancelled (the robot
//! holds) and the program stops with a message, exit code 1.

use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn ctrl_c_cancels_the_run_and_stops_the_program() {
    let dir = std::env::temp_dir().join(format!("morc-run-interrupt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prog = dir.join("endless.lua");
    std::fs::write(
        &prog,
        "local a = morc.assembly \"endless\"\n\
         a:add(\"s\", \"sine\", { n = 6, amplitude = 0.01 })\n\
         a:connect(\"s.y\", \"robot.q_cmd\")\n\
         local r = morc.engine:run(a)\n\
         print(\"after run: \" .. r.outcome)\n\
         print(\"the program went on\")\n",
    )
    .unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_morc"))
        .args(["--clock", "wall", "run"])
        .arg(&prog)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: sending a signal to our own child process.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) }, 0);
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stdout: {stdout}\nstderr: {stderr}");
    // The program stops at its next line, before it can go on.
    assert!(!stdout.contains("the program went on"), "{stdout}");
    assert!(stderr.contains("interrupted (Ctrl-C); the robot holds"), "{stderr}");
    assert!(stderr.contains("endless.lua:5"), "{stderr}");
}
