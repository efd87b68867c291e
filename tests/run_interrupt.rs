//! Ctrl-C during `morc run`: the running assembly is cancelled (the robot
//! holds) and the program stops with a message, exit code 130 — on every engine a
//! program may start (`morc.use_robot` replaces the first one), directly and on the bus.
//! SIGTERM does the same, exit code 143.

use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn ctrl_c_cancels_the_run_and_stops_the_program() {
    use std::io::{BufRead, BufReader, Read};
    let dir = std::env::temp_dir().join(format!("morc-run-interrupt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prog = dir.join("endless.lua");
    // A component says when the run has made its 100th step: the test signals then, not after a
    // guess at how long starting takes (a loaded machine may not have begun the run at all).
    std::fs::write(
        &prog,
        "local started = morc.component { name = \"started\", outputs = { \"y\" }, init = function(self) self.n = 0 end,\n\
           step = function(self, inp, out) self.n = self.n + 1 if self.n == 100 then print(\"running\") end out.y = self.n end }\n\
         local a = morc.assembly \"endless\"\n\
         a:add(\"s\", \"sine\", { n = 6, amplitude = 0.01 }); a:add(\"go\", started)\n\
         a:connect(\"s.y\", \"robot.q_cmd\")\n\
         local r = morc.engine:run(a)\n\
         print(\"after run: \" .. r.outcome)\n\
         print(\"the program went on\")\n",
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_morc")).args(["--clock", "wall", "run"]).arg(&prog).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    while !seen.contains("running") {
        let mut line = String::new();
        if stdout.read_line(&mut line).unwrap() == 0 {
            let out = child.wait_with_output().unwrap();
            panic!("the program ended before its run got going ({}): {seen}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
        }
        seen.push_str(&line);
    }
    // SAFETY: sending a signal to our own child process.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) }, 0);
    stdout.read_to_string(&mut seen).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "stdout: {seen}\nstderr: {stderr}");
    // The run's line fails with the interruption: the program cannot go on.
    assert!(!seen.contains("the program went on") && !seen.contains("after run"), "{seen}");
    assert!(stderr.contains("endless.lua:6: interrupted (Ctrl-C); the robot holds"), "{stderr}");
}

/// A robot program with a long LIN (300 mm at 0.5 % speed: about a minute), started with
/// `args`, signalled once the motion runs. Returns the exit code, stdout, stderr and the
/// seconds from the signal to the exit.
fn interrupt_robot_program(name: &str, body: &str, args: &[&str], signal: libc::c_int) -> (Option<i32>, String, String, f64) {
    use std::io::{BufRead, BufReader};
    let dir = std::env::temp_dir().join(format!("morc-run-interrupt-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prog = dir.join("prog.lua");
    // The README's first line (require returns two values in Lua 5.4).
    let program = format!(
        "morc.use_robot(require \"robots.kr16\")\n\
         morc.lib.use \"motion\"\n\
         local robot = morc.current_robot\n\
         local p = robot:fk {{ 0, -80, 100, 0, 70, 0 }}\n\
         local r0 = ptp {{ 0, -80, 100, 0, 70, 0 }}\n\
         assert(r0.ok, tostring(r0))\n\
         local target = {{ pos = {{ p.pos[1], p.pos[2] + 300, p.pos[3] }}, rpy = p.rpy }}\n\
         local function y() return robot:fk(require(\"stdlib.motion.command\").position({{ engine = morc.engine }}, robot)).pos[2] end\n\
         print(\"moving\")\n\
         {body}\n"
    );
    std::fs::write(&prog, program).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_morc"))
        .args(args)
        .args(["--clock", "wall", "run"])
        .arg(&prog)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        if stdout.read_line(&mut line).unwrap() == 0 {
            let out = child.wait_with_output().unwrap();
            panic!("the program ended before moving ({}): {seen}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
        }
        seen.push_str(&line);
        if line.trim() == "moving" {
            break;
        }
    }
    // Let the motion get going.
    std::thread::sleep(Duration::from_millis(1500));
    let signalled = std::time::Instant::now();
    // SAFETY: sending a signal to our own child process.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let out = child.wait_with_output().unwrap();
    let seconds = signalled.elapsed().as_secs_f64();
    (out.status.code(), seen + &rest, String::from_utf8_lossy(&out.stderr).into_owned(), seconds)
}

const LONG_LIN: &str = "local r = lin(target, { speed = 0.5 })\nprint(\"after lin: \" .. tostring(r))\nprint(\"the program went on\")";

#[test]
fn ctrl_c_stops_a_robot_program_on_the_engine_use_robot_started() {
    let (code, stdout, stderr, seconds) = interrupt_robot_program("robot", LONG_LIN, &[], libc::SIGINT);
    assert_eq!(code, Some(130), "stdout: {stdout}\nstderr: {stderr}");
    assert!(!stdout.contains("the program went on") && !stdout.contains("after lin"), "{stdout}");
    assert!(stderr.contains("prog.lua:10: interrupted (Ctrl-C); the robot holds"), "{stderr}");
    // The motion would take a minute; a stop ends it at once (generous bound for a loaded machine).
    assert!(seconds < 20.0, "the program took {seconds:.1} s to end after Ctrl-C");
}

#[test]
fn ctrl_c_stops_a_robot_program_on_the_bus() {
    let (code, stdout, stderr, seconds) = interrupt_robot_program("bus", LONG_LIN, &["--bus", "sim"], libc::SIGINT);
    assert_eq!(code, Some(130), "stdout: {stdout}\nstderr: {stderr}");
    assert!(!stdout.contains("the program went on"), "{stdout}");
    assert!(stderr.contains("interrupted (Ctrl-C); the robot holds"), "{stderr}");
    assert!(seconds < 20.0, "the program took {seconds:.1} s to end after Ctrl-C");
}

/// The robot really holds: a program that takes the interruption explicitly reads where the
/// tool stopped, far from the target, and finds it there a second later.
fn holds_after_ctrl_c(args: &[&str]) {
    let body = "local ok, err = morc.catch_interrupt(lin, target, { speed = 0.5 })\n\
                print(\"caught: \" .. tostring(ok) .. \" \" .. tostring(err))\n\
                local a = y()\n\
                local t0 = os.time()\n\
                while os.time() - t0 < 2 do end\n\
                local b = y()\n\
                print((\"stopped %.3f mm short; moved %.4f mm since\"):format(p.pos[2] + 300 - a, math.abs(b - a)))";
    let (code, stdout, stderr, _) = interrupt_robot_program(&format!("hold{}", args.len()), body, args, libc::SIGINT);
    assert_eq!(code, Some(0), "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("caught: false") && stdout.contains("interrupted (Ctrl-C)"), "{stdout}");
    let line = stdout.lines().find(|l| l.starts_with("stopped")).unwrap_or_else(|| panic!("{stdout}"));
    let numbers: Vec<f64> = line.split_whitespace().filter_map(|w| w.parse().ok()).collect();
    assert!(numbers[0] > 200.0, "the tool went on towards the target: {line}");
    assert!(numbers[1] < 0.05, "the tool did not hold: {line}");
}

#[test]
fn the_robot_holds_after_ctrl_c() {
    holds_after_ctrl_c(&[]);
}

#[test]
fn the_robot_holds_after_ctrl_c_on_the_bus() {
    holds_after_ctrl_c(&["--bus", "sim"]);
}

#[test]
fn sigterm_stops_the_robot_and_ends_the_program() {
    let (code, stdout, stderr, seconds) = interrupt_robot_program("term", LONG_LIN, &[], libc::SIGTERM);
    assert_eq!(code, Some(143), "stdout: {stdout}\nstderr: {stderr}");
    assert!(!stdout.contains("the program went on"), "{stdout}");
    assert!(seconds < 20.0, "the program took {seconds:.1} s to end after SIGTERM");
    // A stop asked by a service manager or `kill` is said as such, not as a Ctrl-C.
    assert!(stderr.contains("prog.lua:10: terminated (SIGTERM); the robot holds"), "{stderr}");
    assert!(!stderr.contains("Ctrl-C"), "{stderr}");
}

#[test]
fn an_interruption_names_the_users_line_in_a_file_whose_path_lua_shortens() {
    // Past Lua's 60 characters for a source name: its tracebacks say "...end/of/prog.lua:10:",
    // and the interruption was reported at the skill library's line instead.
    let name = "a_long_folder_name_as_a_lab_keeps_its_programs_in";
    let (code, stdout, stderr, _) = interrupt_robot_program(name, LONG_LIN, &[], libc::SIGINT);
    assert_eq!(code, Some(130), "stdout: {stdout}\nstderr: {stderr}");
    assert!(stderr.contains(&format!("{name}-{}/prog.lua:10: interrupted (Ctrl-C); the robot holds", std::process::id())), "{stderr}");
    assert!(!stderr.contains("lua/morc/"), "{stderr}");
}

/// The Ctrl-C hook of a program's Lua state is a count hook (a line hook made every instruction
/// of planners' Lua work out its line: ~6× slower), and still a stop stops: Ctrl-C ends a loop
/// whose every iteration runs in a `pcall` that would swallow the error, with exit code 130.
#[test]
fn ctrl_c_stops_a_loop_that_swallows_errors_and_the_hook_counts_instructions() {
    use std::io::{BufRead, BufReader};
    let dir = std::env::temp_dir().join(format!("morc-run-interrupt-pcall-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prog = dir.join("swallow.lua");
    std::fs::write(
        &prog,
        "local _, mask, count = debug.gethook()\n\
         print(\"hook mask '\" .. mask .. \"' count \" .. count)\n\
         print(\"looping\")\n\
         local n = 0\n\
         while true do pcall(function() for i = 1, 1e5 do n = n + i end end) end\n",
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_morc")).arg("run").arg(&prog).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    while !seen.contains("looping") {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "the program ended before looping: {seen}");
        seen.push_str(&line);
    }
    assert!(seen.contains("hook mask '' count 10000"), "not a count hook: {seen}");
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: sending a signal to our own child process.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) }, 0);
    // A swallowed interruption would loop for ever: give up (and fail) after a generous wait.
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(30) {
            child.kill().unwrap();
            panic!("Ctrl-C did not stop the loop (a pcall swallowed the interruption)");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "stderr: {stderr}");
    assert!(stderr.contains("swallow.lua:5: interrupted (Ctrl-C); the robot holds"), "{stderr}");
}
