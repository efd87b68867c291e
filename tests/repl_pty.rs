//! The REPL driven through a pseudo-terminal (tmux), as a person would type,
//! and the command line's check/doc/run exit codes.
//!
//! Needs tmux (Debian/Ubuntu: `apt-get install -y tmux`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const MORC: &str = env!("CARGO_BIN_EXE_morc");

fn scratch_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("repl_pty-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A tmux server of its own running one command in a detached 200×60 terminal.
struct Terminal {
    socket: String,
}

impl Terminal {
    fn start(command: &str) -> Terminal {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let socket = format!("morc-test-{}-{}", std::process::id(), COUNT.fetch_add(1, Ordering::SeqCst));
        let version = Command::new("tmux").arg("-V").output();
        assert!(version.is_ok_and(|o| o.status.success()), "these tests drive the REPL through tmux, which is not installed: apt-get install -y tmux");
        let terminal = Terminal { socket };
        // Keep the pane after the command ends, so its exit code can be read; the shell
        // traps (not ignores) SIGINT, so Ctrl-C meant for morc does not end the shell.
        let status = terminal
            .tmux(&["-f", "/dev/null", "new-session", "-d", "-x", "200", "-y", "60", "sh", "-c", &format!("trap true INT; {command}; echo EXIT=$?; sleep 600")])
            .status()
            .unwrap();
        assert!(status.success(), "tmux new-session failed");
        terminal
    }

    fn tmux(&self, args: &[&str]) -> Command {
        let mut c = Command::new("tmux");
        c.env("TERM", "xterm-256color").arg("-L").arg(&self.socket).args(args);
        c
    }

    /// Types `text` literally (no key names), without Enter.
    fn type_text(&self, text: &str) {
        assert!(self.tmux(&["send-keys", "-t", "0", "-l", text]).status().unwrap().success());
    }

    /// Presses keys by name: "Enter", "Tab", "C-c", "C-d".
    fn press(&self, key: &str) {
        assert!(self.tmux(&["send-keys", "-t", "0", key]).status().unwrap().success());
    }

    fn type_line(&self, text: &str) {
        self.type_text(text);
        self.press("Enter");
    }

    /// The whole scroll-back, with blank lines dropped.
    fn screen(&self) -> String {
        let out = self.tmux(&["capture-pane", "-p", "-J", "-t", "0", "-S", "-1000"]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).lines().filter(|l| !l.trim().is_empty()).collect::<Vec<_>>().join("\n")
    }

    /// Waits until the screen satisfies `ready`; fails with the screen after `seconds`.
    fn wait_until(&self, what: &str, seconds: f64, ready: impl Fn(&str) -> bool) -> String {
        // `seconds` is what a person would wait on a quiet machine; a loaded CI machine (builds
        // beside the tests) gets six times that, at least a minute. Waiting ends as soon as the
        // screen is ready, so a generous bound costs nothing when it is.
        let deadline = Instant::now() + Duration::from_secs_f64((seconds * 6.0).max(60.0));
        loop {
            let screen = self.screen();
            if ready(&screen) {
                return screen;
            }
            if Instant::now() > deadline {
                panic!("timed out waiting for {what}; the terminal shows:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn wait_for(&self, needle: &str, seconds: f64) -> String {
        self.wait_until(&format!("{needle:?}"), seconds, |s| s.contains(needle))
    }

    /// Waits for `needle` to appear after the screen's current text.
    fn wait_for_new(&self, before: &str, needle: &str, seconds: f64) -> String {
        let skip = before.len();
        self.wait_until(&format!("{needle:?} (new)"), seconds, |s| s.get(skip..).is_some_and(|rest| rest.contains(needle)))
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]).status();
    }
}

#[test]
fn repl_as_a_person_types() {
    let dir = scratch_dir("session");
    let history = dir.join("history");
    let term = Terminal::start(&format!("cd {} && MORC_HISTORY={} {MORC} --clock wall", dir.display(), history.display()));
    term.wait_for("morc> ", 20.0);

    // An expression is printed.
    let before = term.screen();
    term.type_line("1+1");
    term.wait_for_new(&before, "\n2\nmorc> ", 10.0);

    // A multi-line chunk continues on the next line.
    let before = term.screen();
    term.type_line("for i=1,3 do");
    term.wait_for_new(&before, "   …> ", 10.0);
    term.type_line("print(i * 10)");
    term.type_line("end");
    term.wait_for_new(&before, "10\n20\n30\nmorc> ", 10.0);

    // Tables print sorted and nested, vectors on one line.
    let before = term.screen();
    term.type_line("{ b = { 1.5, 2, 3 }, a = \"x\" }");
    term.wait_for_new(&before, "{ a = \"x\", b = { 1.5, 2, 3 } }", 10.0);

    // help shows doc strings.
    let before = term.screen();
    term.type_line("help(morc.assembly)");
    term.wait_for_new(&before, "Describes an assembly", 10.0);

    // Tab completes globals' fields…
    let before = term.screen();
    term.type_text("morc.ass");
    term.press("Tab");
    term.wait_for_new(&before, "morc.assembly", 10.0);
    // …and Ctrl-C at the prompt clears the line.
    term.press("C-c");
    term.type_line("2+3");
    let screen = term.wait_for_new(&before, "\n5\nmorc> ", 10.0);
    assert!(!screen[before.len()..].contains("morc.assembly2+3"), "Ctrl-C did not clear the line:\n{screen}");

    // …and userdata methods.
    let before = term.screen();
    term.type_line("a = morc.assembly{\"long\"}; a:add(\"s\",\"sine\"); a:add(\"p\",\"probe\"); a:connect(\"s.y\",\"p.u\")");
    term.wait_for_new(&before, "morc> ", 10.0);
    let before = term.screen();
    term.type_text("a:con");
    term.press("Tab");
    term.wait_for_new(&before, "a:connect", 10.0);
    term.press("C-c");
    // After `:` only methods: the engine's field `period` is no method to call.
    let before = term.screen();
    term.type_text("morc.engine:p");
    term.press("Tab");
    term.press("C-c");
    term.type_text("morc.engine:ru");
    term.press("Tab");
    let screen = term.wait_for_new(&before, "morc.engine:run", 10.0);
    assert!(!screen[before.len()..].contains("morc.engine:period"), "a field offered after ':':\n{screen}");
    term.press("C-c");

    // A long run (wall clock, no end of its own) is cancelled by Ctrl-C; the REPL stays.
    let before = term.screen();
    term.type_line("r = morc.engine:run(a)");
    term.wait_for_new(&before, "r = morc.engine:run(a)", 10.0);
    std::thread::sleep(Duration::from_millis(1500));
    let running = term.screen();
    assert!(!running.ends_with("morc> "), "the run ended by itself:\n{running}");
    term.press("C-c");
    let screen = term.wait_until("the prompt after Ctrl-C", 10.0, |s| s.len() > running.len() && s.ends_with("morc> "));
    assert!(screen[running.len()..].contains("interrupted (Ctrl-C); the robot holds"), "{screen}");

    // Ctrl-C also interrupts Lua code that never calls the engine.
    let before = term.screen();
    term.type_line("while true do end");
    std::thread::sleep(Duration::from_millis(300));
    term.press("C-c");
    term.wait_for_new(&before, "interrupted", 10.0);

    // Ctrl-D exits cleanly, the history is written.
    term.wait_until("the prompt", 10.0, |s| s.ends_with("morc> "));
    term.press("C-d");
    let screen = term.wait_for("EXIT=", 20.0);
    assert!(screen.contains("EXIT=0"), "Ctrl-D did not exit with 0:\n{screen}");
    let saved = std::fs::read_to_string(&history).expect("history file written");
    assert!(saved.contains("1+1") && saved.contains("r = morc.engine:run(a)"), "history:\n{saved}");
}

/// The README's REPL session: a robot, a motion, Ctrl-C during a long LIN inside a loop. The
/// loop does not go on to its next motion, the prompt comes back, the robot holds; lines typed
/// while a command runs are kept for the next prompts.
#[test]
fn ctrl_c_stops_a_robot_motion_at_the_repl() {
    let dir = scratch_dir("robot");
    let term = Terminal::start(&format!("cd {} && MORC_HISTORY={} {MORC} --clock wall", dir.display(), dir.join("history").display()));
    term.wait_for("morc> ", 20.0);
    // The README's first line: `require` returns two values in Lua 5.4.
    let before = term.screen();
    term.type_line("morc.use_robot(require \"robots.kr16\")");
    term.wait_for_new(&before, "engine (wall clock", 20.0);
    term.wait_until("the prompt", 10.0, |s| s.ends_with("morc> "));
    let before = term.screen();
    term.type_line("morc.lib.use \"motion\"");
    // Loading a library is silent: the next prompt follows the line typed.
    let screen = term.wait_for_new(&before, "morc.lib.use \"motion\"\nmorc> ", 20.0);
    assert!(screen[before.len()..].lines().count() <= 2, "morc.lib.use printed something:\n{}", &screen[before.len()..]);

    // Typed ahead while a motion runs: every line runs afterwards, in order.
    term.wait_until("the prompt", 10.0, |s| s.ends_with("morc> "));
    let before = term.screen();
    term.type_line("ptp { 0, -80, 100, 0, 70, 0 }");
    term.wait_for_new(&before, "ptp { 0, -80, 100, 0, 70, 0 }", 10.0);
    term.type_line("print(\"one\")");
    term.type_line("print(\"two\")");
    term.type_line("print(\"three\")");
    term.wait_for_new(&before, "ptp ✓", 30.0);
    term.wait_for_new(&before, "\nthree\nmorc> ", 20.0);
    let screen = term.screen();
    let after = &screen[before.len()..];
    assert!(after.contains("\none\n") && after.contains("\ntwo\n"), "typed-ahead lines were lost:\n{after}");

    // A long LIN in a loop, interrupted: the prompt comes back at once, not after three LINs.
    term.type_line("p = morc.current_robot:fk { 0, -80, 100, 0, 70, 0 }; cmd = require \"stdlib.motion.command\"");
    term.type_line("function y() return morc.current_robot:fk(cmd.position({ engine = morc.engine }, morc.current_robot)).pos[2] end");
    term.wait_until("the prompt", 10.0, |s| s.ends_with("morc> "));
    let before = term.screen();
    term.type_line("for i = 1, 3 do lin({ pos = { p.pos[1], p.pos[2] + 300, p.pos[3] }, rpy = p.rpy }, { speed = 0.5 }); print(\"next lin\") end");
    term.wait_for_new(&before, "print(\"next lin\") end", 10.0);
    std::thread::sleep(Duration::from_millis(2500));
    let running = term.screen();
    assert!(!running.ends_with("morc> "), "the motion ended by itself:\n{running}");
    term.press("C-c");
    let screen = term.wait_until("the prompt after Ctrl-C", 20.0, |s| s.len() > running.len() && s.ends_with("morc> "));
    let after = &screen[before.len()..];
    assert!(after.contains("stdin:1: interrupted (Ctrl-C); the robot holds"), "{after}");
    assert!(!after.contains("\nnext lin"), "the loop went on after Ctrl-C:\n{after}");

    // The robot holds where it stopped.
    let before = term.screen();
    term.type_line("y1 = y(); t0 = os.time(); while os.time() - t0 < 2 do end; print((\"held %.4f\"):format(math.abs(y() - y1)))");
    let screen = term.wait_for_new(&before, "\nheld ", 20.0);
    let held: f64 = screen[before.len()..].lines().find_map(|l| l.strip_prefix("held ")).and_then(|t| t.trim().parse().ok()).unwrap_or_else(|| panic!("{screen}"));
    assert!(held < 0.05, "the tool moved {held} mm after Ctrl-C");
    term.press("C-d");
    let screen = term.wait_for("EXIT=", 20.0);
    assert!(screen.contains("EXIT=0"), "{screen}");
}

#[test]
fn reload_swaps_in_an_edited_controller_while_it_runs() {
    let dir = scratch_dir("reload");
    let module = |gain: f64| {
        format!("local gain = {gain}\nreturn morc.component {{ name = \"live_gain\", inputs = {{ \"u\" }}, outputs = {{ \"y\" }},\n  step = function(self, inp, out) out.y = gain * inp.u end }}\n")
    };
    write(&dir, "live_gain.lua", &module(2.0));
    let term = Terminal::start(&format!("cd {} && MORC_HISTORY={} {MORC} --clock wall", dir.display(), dir.join("history").display()));
    term.wait_for("morc> ", 20.0);
    term.type_line("package.path = \"./?.lua;\" .. package.path; k = require \"live_gain\"");
    term.type_line("a = morc.assembly \"live\"; a:add(\"one\", \"constant\", { value = 1.5 }); a:add(\"g\", k); a:add(\"p\", \"probe\"); a:connect(\"one.y\", \"g.u\"); a:connect(\"g.y\", \"p.u\")");
    term.type_line("h = morc.engine:start(a)");
    term.wait_until("the prompt", 10.0, |s| s.ends_with("morc> "));
    // The controller is edited while it runs; `reload` swaps the new code in.
    write(&dir, "live_gain.lua", &module(5.0));
    let before = term.screen();
    term.type_line("reload");
    let screen = term.wait_for_new(&before, "reloaded 'live': the new code carries on from t = ", 20.0);
    assert!(!screen[before.len()..].contains("error"), "{}", &screen[before.len()..]);
    // Ctrl-C at the prompt stops the run going on in the background (no signal is raised
    // while the line editor reads: the REPL stops it itself).
    term.wait_until("the prompt", 10.0, |s| s.ends_with("morc> "));
    let before = term.screen();
    term.press("C-c");
    term.wait_for_new(&before, "Ctrl-C: stopped the assembly running in the background; the robot holds", 10.0);
    let before = term.screen();
    term.type_line("r = h:wait(); print(\"new gain output \" .. r.data[\"p.u\"][1] .. \", \" .. r.outcome)");
    term.wait_for_new(&before, "new gain output 7.5, cancelled", 20.0);
    // With nothing running, Ctrl-C at the prompt only clears the line.
    let before = term.screen();
    term.press("C-c");
    term.type_line("print(\"after\")");
    let screen = term.wait_for_new(&before, "\nafter\n", 10.0);
    assert!(!screen[before.len()..].contains("stopped"), "{}", &screen[before.len()..]);
    // Nothing started: reload says what it needs.
    let before = term.screen();
    term.type_line("reload");
    term.wait_for_new(&before, "replaces a run started with engine:start(a); none is running", 20.0);
    term.press("C-d");
    let screen = term.wait_for("EXIT=", 20.0);
    assert!(screen.contains("EXIT=0"), "{screen}");
}

/// A run started in the background that faults says so at the prompt at once, without a key
/// pressed, and its handle says `faulted` (it once sat silent until someone asked).
#[test]
fn a_background_run_that_faults_says_so_at_the_prompt() {
    let dir = scratch_dir("background_fault");
    let term = Terminal::start(&format!("cd {} && MORC_HISTORY={} {MORC}", dir.display(), dir.join("history").display()));
    term.wait_for("morc> ", 20.0);
    term.type_line("boom = morc.component { name = \"boom\", outputs = { \"y\" }, step = function(self, inp, out, t) if t > 0.2 then error(\"boom at t > 0.2\") end out.y = t end }");
    let before = term.screen();
    term.type_line("a = morc.assembly \"bg\"; a:add(\"b\", boom); a:add(\"p\", \"probe\"); a:connect(\"b.y\", \"p.u\"); h = morc.engine:start(a)");
    let screen = term.wait_for_new(&before, "a run in the background faulted; the robot holds", 20.0);
    assert!(!screen[before.len()..].contains("Ctrl-C"), "{}", &screen[before.len()..]);
    let before = term.screen();
    term.type_line("print(\"status \" .. h:status())");
    term.wait_for_new(&before, "status faulted", 10.0);
    let before = term.screen();
    term.type_line("r = h:wait(); print(r.outcome, r.reason)");
    term.wait_for_new(&before, "boom at t > 0.2", 10.0);
    // A command's own fault is the command's to report: no second notice after it.
    let before = term.screen();
    term.type_line("r2 = morc.engine:run(a); print(\"own \" .. r2.outcome)");
    term.wait_for_new(&before, "own fault", 20.0);
    // What proves the watcher looked after that command: its notice of a fault that came later.
    // A second notice (of the command's own fault) would come before it, or with it.
    term.wait_until("the prompt", 10.0, |s| s.ends_with("morc> "));
    term.type_line("h2 = morc.engine:start(a)");
    let after = term.wait_for_new(&before, "a run in the background faulted; the robot holds", 20.0);
    let notices = after[before.len()..].matches("in the background faulted").count();
    assert_eq!(notices, 1, "the command's own fault was announced too:\n{}", &after[before.len()..]);
    // Leaving is clean whatever the last run did: its fault was reported when it happened.
    term.press("C-d");
    let screen = term.wait_for("EXIT=", 20.0);
    assert!(screen.contains("EXIT=0"), "Ctrl-D after a faulted run: {screen}");
}

/// SIGTERM (a supervisor stopping morc) while the REPL waits at its prompt with a run going on
/// in the background: the run is stopped, the robot holds, its recording is closed complete,
/// and morc ends with 143 — not killed mid-run with the recording's tail lost.
#[test]
fn sigterm_at_the_prompt_ends_a_background_run_cleanly() {
    let dir = scratch_dir("sigterm");
    let term = Terminal::start(&format!("cd {} && MORC_HISTORY={} {MORC} --clock wall", dir.display(), dir.join("history").display()));
    term.wait_for("morc> ", 20.0);
    term.type_line(
        "a = morc.assembly \"bg\"; a:add(\"s\", \"sine\", { n = 6, amplitude = 0.1 }); a:connect(\"s.y\", \"robot.q_cmd\"); a:record { \"s.y\", path = \"bg.h5\" }; h = morc.engine:start(a)",
    );
    term.wait_until("the prompt", 10.0, |s| s.ends_with("morc> "));
    std::thread::sleep(Duration::from_millis(500));
    let pane = term.tmux(&["list-panes", "-t", "0", "-F", "#{pane_pid}"]).output().unwrap();
    let shell = String::from_utf8_lossy(&pane.stdout).trim().to_string();
    let child = Command::new("pgrep").args(["-P", &shell, "-x", "morc"]).output().unwrap();
    let pid = String::from_utf8_lossy(&child.stdout).trim().to_string();
    assert!(!pid.is_empty(), "no morc process under the pane's shell {shell}");
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let screen = term.wait_for("EXIT=", 20.0);
    assert!(screen.contains("EXIT=143"), "{screen}");
    let (code, info, err) = morc(&["rec", "info", dir.join("bg.h5").to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(info.lines().any(|l| l.split_whitespace().eq(["complete", "1"])), "the recording was not closed complete:\n{info}");
}

#[test]
fn jog_mode_moves_the_robot_while_a_key_is_held_and_stops_when_it_is_let_go() {
    let dir = scratch_dir("jog");
    let term = Terminal::start(&format!("cd {} && MORC_HISTORY={} {MORC}", dir.display(), dir.join("history").display()));
    term.wait_for("morc> ", 20.0);
    // Without a robot on the engine, jog says how to get one.
    let before = term.screen();
    term.type_line("jog");
    term.wait_for_new(&before, "jog: no robot on the engine: morc.use_robot(", 20.0);
    term.type_line("kr = require \"robots.kr16\"; morc.use_robot(kr, { clock = \"wall\" })");
    let before = term.screen();
    term.type_line("jog");
    term.wait_for_new(&before, "jog joints 10% held | A1 0.00", 20.0);
    // The key held down: its repeats keep A1 moving (q: A1 +).
    for _ in 0..25 {
        term.type_text("q");
        std::thread::sleep(Duration::from_millis(30));
    }
    std::thread::sleep(Duration::from_millis(1500));
    let before = term.screen();
    term.press("Escape");
    term.wait_for_new(&before, "morc> ", 20.0);
    let a1 = |term: &Terminal| -> f64 {
        let before = term.screen();
        term.type_line("print(\"A1 at \" .. kr:state().q[1])");
        let screen = term.wait_for_new(&before, "\nmorc> ", 20.0);
        let line = screen[before.len()..].lines().find(|l| l.starts_with("A1 at ")).unwrap_or_else(|| panic!("{screen}")).to_string();
        line["A1 at ".len()..].trim().parse().unwrap()
    };
    let moved = a1(&term);
    assert!(moved > 1.0, "A1 moved {moved}° while the key was held");
    std::thread::sleep(Duration::from_millis(500));
    let later = a1(&term);
    assert!((later - moved).abs() < 1e-3, "the robot stopped when the key was let go: A1 {moved}° then {later}°");
    term.press("C-d");
    let screen = term.wait_for("EXIT=", 20.0);
    assert!(screen.contains("EXIT=0"), "{screen}");
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn morc(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(MORC).args(args).env("MORC_HISTORY", "/dev/null").output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

const GOOD: &str = r#"local a = morc.assembly { "good", duration = 0.2 }
a:add("s", "sine")
a:add("p", "probe")
a:connect("s.y", "p.u")
local r = morc.engine:run(a)
assert(r.ok, r.reason)
print("outcome " .. r.outcome)
"#;

const BAD: &str = r#"local a = morc.assembly { "bad", duration = 0.2 }
a:add("s", "sine")
a:connect("s.y", "nothere.u")
morc.engine:run(a)
"#;

const FAILING: &str = r#"local function fail() error("this program fails") end
fail()
"#;

const FAULTING: &str = r#"local broken = morc.component { name = "broken", outputs = { "y" }, step = function(self, inp, out, t) error("boom") end }
local a = morc.assembly { "faulty", duration = 1 }
a:add("b", broken)
local r = morc.engine:run(a)
assert(r.ok, r.reason)
"#;

#[test]
fn check_validates_without_moving() {
    let dir = scratch_dir("check");
    let good = write(&dir, "good.lua", GOOD);
    let bad = write(&dir, "bad.lua", BAD);
    let (code, out, _) = morc(&["check", good.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("outcome finished"), "engine:run ran on the simulation, as in morc run:\n{out}");
    assert!(out.contains("good.lua: OK"), "{out}");
    let (code, out, _) = morc(&["check", good.to_str().unwrap(), bad.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("good.lua: OK") && out.contains("bad.lua: FAILED"), "{out}");
    assert!(out.contains("bad.lua:3: no component 'nothere'"), "the error names file:line:\n{out}");
}

#[test]
fn doc_prints_documentation() {
    let (code, out, _) = morc(&["doc", "morc.assembly"]);
    assert_eq!(code, 0);
    assert!(out.contains("Describes an assembly"), "{out}");
    let (code, out, _) = morc(&["doc", "sine"]);
    assert_eq!(code, 0);
    assert!(out.contains("param  frequency"), "{out}");
    let (code, _, err) = morc(&["doc", "no.such.thing"]);
    assert_eq!(code, 1);
    assert!(err.contains("no documentation"), "{err}");
}

#[test]
fn exit_codes() {
    let dir = scratch_dir("exit");
    let (code, out, err) = morc(&["run", write(&dir, "good.lua", GOOD).to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("outcome finished"));

    let (code, _, err) = morc(&["run", write(&dir, "failing.lua", FAILING).to_str().unwrap()]);
    assert_eq!(code, 1, "script error → 1:\n{err}");
    assert!(err.contains("failing.lua:1: this program fails"), "file:line:\n{err}");
    assert!(err.contains("stack traceback:") && err.contains("failing.lua:2: in main chunk"), "traceback:\n{err}");

    let (code, _, err) = morc(&["run", write(&dir, "faulting.lua", FAULTING).to_str().unwrap()]);
    assert_eq!(code, 3, "robot fault → 3:\n{err}");
    assert!(err.contains("boom"), "{err}");

    let (code, _, _) = morc(&["--no-such-option"]);
    assert_eq!(code, 2, "usage → 2");
    let (code, _, _) = morc(&["run", "--bus", "sim", "--sim", "x.lua"]);
    assert_eq!(code, 2, "--bus and --sim conflict");
}
