//! The command line as a shell user meets it: output into a closed pipe (`| head`), usage
//! errors and their exit code, `morc doc` on a library skill, and which options each
//! subcommand's `--help` offers (the run options in both documented places).

use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn morc() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_morc"));
    c.env_remove("MORC_PATH").env_remove("MORC_LIB").env_remove("RUST_BACKTRACE");
    c
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs morc with stdout a pipe whose reading end is already closed: every write fails with
/// EPIPE, deterministically (as `| head -2` does once head has what it wants).
fn into_closed_pipe(args: &[&str]) -> Output {
    let mut fds = [0; 2];
    // SAFETY: `fds` is a live [c_int; 2], exactly the two slots pipe() writes.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both descriptors were just made by pipe() and are owned here.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(read);
    let mut cmd = morc();
    cmd.args(args).stdout(Stdio::from(write)).stderr(Stdio::piped());
    cmd.output().unwrap()
}

#[test]
fn output_into_a_closed_pipe_ends_quietly() {
    let sweep = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/libs/sweep");
    let sweep = sweep.to_str().unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/first_assembly.lua");
    let example = example.to_str().unwrap();
    for args in [
        &["check", example][..],
        &["bus", "scan", "--sim"],
        &["lib", "info", "motion"],
        &["lib", "list"],
        &["doc", "morc.assembly"],
        &["doc", "ptp"],
        &["--help"],
        &["lib", "--help"],
        &["test", sweep],
        &["fmu", "--help"],
    ] {
        let out = into_closed_pipe(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "morc {args:?} into a closed pipe: {err}");
        assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "morc {args:?}: {err}");
    }
}

#[test]
fn a_bad_period_is_a_usage_error() {
    let dir = scratch("cli-period");
    let prog = dir.join("p.lua");
    std::fs::write(&prog, "print('ran')\n").unwrap();
    let prog = prog.to_str().unwrap();
    for args in [&["--period-ms", "0", "run", prog][..], &["run", "--period-ms", "0", prog], &["run", prog, "--period-ms=-1"], &["--period-ms", "NaN"], &["--period-ms", "5000", "run", prog]] {
        let out = morc().args(args).stdin(Stdio::null()).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "morc {args:?}: {}", text(&out));
        assert!(text(&out).contains("--period-ms") && text(&out).contains("between 0.001 ms"), "{}", text(&out));
        assert!(!text(&out).contains("ran"));
    }
    let out = morc().args(["--period-ms", "2", "run", prog]).output().unwrap();
    assert!(out.status.success() && text(&out).contains("ran"), "{}", text(&out));
}

#[test]
fn morc_doc_finds_library_skills_and_libraries() {
    let out = morc().args(["doc", "ptp"]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).starts_with("ptp — moves the robot's joints") && text(&out).contains("params"), "{}", text(&out));
    let out = morc().args(["doc", "motion.lin"]).output().unwrap();
    assert!(out.status.success() && text(&out).starts_with("lin — "), "{}", text(&out));
    let out = morc().args(["doc", "motion"]).output().unwrap();
    assert!(out.status.success() && text(&out).contains("skills circ, home, lin, move, path, ptp"), "{}", text(&out));
    // The example library through MORC_PATH, and a name nothing documents.
    let out = morc().env("MORC_PATH", Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/libs")).args(["doc", "sweep"]).output().unwrap();
    assert!(out.status.success() && text(&out).contains("sweep — "), "{}", text(&out));
    let out = morc().args(["doc", "no_such_thing"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("no documentation for 'no_such_thing'"), "{}", text(&out));
}

const RUN_OPTIONS: [&str; 8] = ["--clock", "--period-ms", "--no-rt", "--verbose", "--quiet", "--sim", "--bus", "--record"];

#[test]
fn only_running_commands_offer_the_run_options() {
    for sub in [&["lib"][..], &["lib", "info"], &["doc"], &["rec"], &["fmu"], &["check"], &["test"], &["plot"]] {
        let out = morc().args(sub).arg("--help").output().unwrap();
        assert!(out.status.success(), "{}", text(&out));
        let help = String::from_utf8_lossy(&out.stdout);
        for opt in RUN_OPTIONS {
            assert!(!help.contains(opt), "morc {} --help lists {opt}:\n{help}", sub.join(" "));
        }
    }
    for sub in [&["run"][..], &[]] {
        let out = morc().args(sub).arg("--help").output().unwrap();
        let help = String::from_utf8_lossy(&out.stdout);
        for opt in RUN_OPTIONS {
            assert!(help.contains(opt), "morc {} --help lacks {opt}:\n{help}", sub.join(" "));
        }
    }
}

#[test]
fn run_options_work_before_and_after_run() {
    let dir = scratch("cli-run-options");
    let prog = dir.join("p.lua");
    std::fs::write(&prog, "print('bus=' .. tostring(morc.bus) .. ' record=' .. tostring(morc.record_dir) .. ' period=' .. morc.engine.period)\n").unwrap();
    let prog = prog.to_str().unwrap();
    let rec = dir.join("recs");
    let rec = rec.to_str().unwrap();
    // The forms README, docs/guide.md and docs/robots.md show.
    for args in [
        &["--bus", "sim", "--record", rec, "run", prog][..],
        &["run", "--bus", "sim", "--record", rec, prog],
        &["--bus", "sim", "run", "--record", rec, prog],
        &["run", prog, "--bus", "sim", "--record", rec],
    ] {
        let out = morc().args(args).output().unwrap();
        assert!(out.status.success(), "morc {args:?}: {}", text(&out));
        assert!(text(&out).contains(&format!("bus=sim record={rec}")), "morc {args:?}: {}", text(&out));
    }
    let out = morc().args(["--period-ms", "4", "run", "--clock", "wall", prog]).output().unwrap();
    assert!(out.status.success() && text(&out).contains("bus=nil record=nil period=0.004"), "{}", text(&out));
    // After the subcommand the run's own value wins; --sim and --bus still exclude each other.
    let out = morc().args(["--period-ms", "4", "run", "--period-ms", "2", prog]).output().unwrap();
    assert!(out.status.success() && text(&out).contains("period=0.002"), "{}", text(&out));
    let out = morc().args(["--sim", "run", "--bus", "sim", prog]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

#[test]
fn the_calibration_example_calibrates_the_simulated_rx130l() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/calibration.lua");
    let dir = scratch("calibration");
    let out = morc().current_dir(&dir).args(["run", example.to_str().unwrap()]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let last = stdout.lines().last().unwrap_or_default();
    // "calibration: observability gain G x over a linear scan, position error rms X mm -> Y mm"
    let rest = last.strip_prefix("calibration: observability gain ").unwrap_or_else(|| panic!("{last}"));
    let numbers: Vec<f64> = rest.split(|c: char| !(c.is_ascii_digit() || c == '.')).filter_map(|w| w.parse().ok()).collect();
    assert!(numbers.len() == 3 && rest.contains(" x over a linear scan, position error rms ") && rest.ends_with(" mm"), "{last}");
    let (gain, before, after) = (numbers[0], numbers[1], numbers[2]);
    assert!(gain > 1.0, "the chosen poses observe better than a linear scan: {last}");
    // The tracker's noise is σ = 0.05 mm per axis, 0.087 mm in 3-D: within twice that after fitting.
    assert!(before > 1.0 && after < 2.0 * 0.05 * 3f64.sqrt(), "{last}");
    // The residuals' picture, beside where recordings go.
    assert!(std::fs::metadata(dir.join("runs/calibration_residuals.png")).is_ok_and(|m| m.len() > 10_000), "{stdout}");
}

#[test]
fn the_hand_guiding_example_reproduces_the_papers_admittance_figures() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/hand_guiding.lua");
    let dir = scratch("hand_guiding");
    let out = morc().current_dir(&dir).args(["run", example.to_str().unwrap()]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let last = stdout.lines().last().unwrap_or_default();
    // "hand guiding: v_ss X m/s (expected 0.200), tau Y ms (expected 20.0), orientation drift Z deg"
    assert!(last.starts_with("hand guiding: v_ss "), "{last}");
    let numbers: Vec<f64> = last.split(|c: char| !(c.is_ascii_digit() || c == '.')).filter_map(|w| w.parse().ok()).collect();
    let (v, tau, drift) = (numbers[0], numbers[2], numbers[4]);
    assert!((v - 0.2).abs() <= 0.2 * 0.02, "v_ss {v}: {last}");
    // Both within 2 % of the paper's, the orientation within 0.01°.
    assert!((tau - 20.0).abs() <= 20.0 * 0.02, "tau {tau}: {last}");
    assert!(drift < 0.01, "drift {drift}: {last}");
    // Recorded, with the run's notes.
    let line = stdout.lines().find_map(|l| l.strip_prefix("recorded to ")).unwrap();
    let (h5, png) = line.split_once(", plotted to ").unwrap();
    assert!(dir.join(h5).exists() && dir.join(png).exists(), "{line}");
}

#[test]
fn the_direct_teaching_example_teaches_five_points_and_replays_them() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/direct_teaching.lua");
    let dir = scratch("direct_teaching");
    let out = morc().current_dir(&dir).args(["run", example.to_str().unwrap()]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let last = stdout.lines().last().unwrap_or_default();
    // "direct teaching: N points taught, replay max deviation X mm"
    let numbers: Vec<f64> = last.split(|c: char| !(c.is_ascii_digit() || c == '.')).filter_map(|w| w.parse().ok()).collect();
    assert!(last.starts_with("direct teaching: ") && numbers == [numbers[0], numbers[1]] && numbers[0] == 5.0 && numbers[1] < 0.5, "{last}");
    // The points file a person can edit, beside the recordings: a header, five named points of five joints.
    let saved = stdout
        .lines()
        .find_map(|l| l.strip_prefix("saved to "))
        .and_then(|l| l.split_once(" and read back"))
        .map(|(f, _)| f)
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(saved.starts_with("runs/"), "{saved}");
    let points = std::fs::read_to_string(dir.join(saved)).unwrap();
    let rows: Vec<&str> = points.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(rows.len(), 5, "{points}");
    assert!(rows.iter().all(|r| r.split(',').count() == 6), "{points}");
}

#[test]
fn the_time_optimal_example_is_faster_and_holds_every_limit() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/time_optimal.lua");
    let dir = scratch("time_optimal");
    let out = morc().current_dir(&dir).args(["run", example.to_str().unwrap()]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let last = stdout.lines().last().unwrap_or_default();
    // time-optimal: LIN T1 s -> T2 s, PTP T3 s -> T4 s, all limits held
    let times: Vec<f64> = last
        .strip_prefix("time-optimal: LIN ")
        .and_then(|s| s.strip_suffix(", all limits held"))
        .map(|s| s.split(|c: char| !(c.is_ascii_digit() || c == '.')).filter_map(|w| w.parse().ok()).collect())
        .unwrap_or_else(|| panic!("{last}"));
    assert_eq!(times.len(), 4, "{last}");
    assert!(times[1] < times[0] && times[3] < times[2], "{last}");
}

#[test]
fn the_stacker_cycle_example_stacks_with_both_arms_at_once() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/stacker_cycle.lua");
    let dir = scratch("stacker_cycle");
    let out = morc().current_dir(&dir).args(["run", example.to_str().unwrap()]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let last = stdout.lines().last().unwrap_or_default();
    let stacks: u32 = last.strip_prefix("stacker: ").and_then(|s| s.strip_suffix(" stacks per minute")).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("{last}"));
    // The paper's 20 per minute at least, both arms working.
    assert!(stacks >= 20, "{last}");
    assert!(stdout.contains("left arm: ") && stdout.contains("right arm: "), "{stdout}");
    // The same program through the EtherCAT master onto the virtual segment's drives.
    let out = morc().current_dir(&dir).args(["--bus", "sim", "run", example.to_str().unwrap()]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "--bus sim: {stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.lines().last().unwrap_or_default().ends_with(" stacks per minute"), "{stdout}");
}

#[test]
fn hand_guiding_and_direct_teaching_run_unchanged_on_the_virtual_ethercat_segment() {
    // The F/T sensor and the handle's inputs are devices on the segment, fed by the simulated
    // hand; the program reads them through the real master as the robot's ft, enable, button.
    for (example, want) in [("hand_guiding", "hand guiding: v_ss 0.200 m/s"), ("direct_teaching", "direct teaching: 5 points taught")] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("examples/{example}.lua"));
        let out = morc().current_dir(scratch(&format!("{example}_bus"))).args(["--bus", "sim", "run", path.to_str().unwrap()]).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{example} on --bus sim: {stdout}\n{}", String::from_utf8_lossy(&out.stderr));
        let last = stdout.lines().last().unwrap_or_default();
        assert!(last.starts_with(want), "{example} on --bus sim: {last}");
    }
}

/// A program that ends with a run it started still going is told so: the run is stopped (the
/// robot holds, its recording closed) rather than cut off without a word.
#[test]
fn a_program_ending_with_a_run_going_says_it_was_stopped() {
    let dir = scratch("background");
    let program = dir.join("bg.lua");
    std::fs::write(&program, "local a = morc.assembly { \"bg\", duration = 30 }\na:add(\"s\", \"sine\", { n = 6, amplitude = 0.1 })\na:connect(\"s.y\", \"robot.q_cmd\")\nh = morc.engine:start(a)\n")
        .unwrap();
    let out = morc().args(["--clock", "wall", "run"]).arg(&program).output().unwrap();
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    assert!(all.contains("bg.lua ended with a run still going (started with engine:start): it is stopped now and the robot holds"), "{all}");
    // A program that waits for its run is not told anything.
    std::fs::write(&program, "local a = morc.assembly { \"bg\", duration = 0.01 }\na:add(\"s\", \"sine\")\nh = morc.engine:start(a)\nh:wait()\n").unwrap();
    let out = morc().args(["run"]).arg(&program).output().unwrap();
    let all = text(&out);
    assert!(out.status.success() && !all.contains("still going"), "{all}");
}

/// A skill that failed while the program went on without looking at its result (`r.ok`) is
/// no success: `morc run` names the call and exits 4, as `morc check` fails the file; a program
/// that looks at the result and handles it exits 0.
#[test]
fn a_failed_skill_whose_result_no_one_read_is_exit_4() {
    let dir = scratch("unread_failure");
    let program = dir.join("unread.lua");
    let skill = "local s = morc.skill { name = \"fails\", doc = \"always fails\", execute = function() return { ok = false, reason = \"it broke\" } end }\n";
    std::fs::write(&program, format!("{skill}s()\nprint(\"done\")\n")).unwrap();
    let out = morc().args(["run"]).arg(&program).output().unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(4), "{all}");
    assert!(all.contains("unread.lua:2: fails ✗") && all.contains("it broke") && all.contains("the program did not look at this result"), "{all}");
    let checked = morc().args(["check"]).arg(&program).output().unwrap();
    assert!(!checked.status.success(), "{}", text(&checked));
    std::fs::write(&program, format!("{skill}local r = s()\nif not r.ok then print(\"handled: \" .. r.reason) end\n")).unwrap();
    let out = morc().args(["run"]).arg(&program).output().unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(all.contains("handled: it broke"), "{all}");
}

/// A call with nothing to work on (calibrating from no poses, which panicked in nalgebra until
/// issue 39) is an error naming the program's line, the call and what to give, exit 1, with no
/// panic text (how a panic would be reported: crates/morc-lua/src/panics.rs).
#[test]
fn a_call_with_empty_input_is_an_error_naming_the_call_not_a_panic() {
    let dir = scratch("panic_call");
    let program = dir.join("panics.lua");
    std::fs::write(&program, "local r = require \"robots.kr16\"\nr:calibrate { poses = {}, measured = {} }\n").unwrap();
    let out = morc().args(["run"]).arg(&program).output().unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(all.contains("panics.lua:2: robot:calibrate: poses is empty: give poses = { q°, … } and measured = { { x, y, z } mm, … }"), "{all}");
    for panic in ["internal error", "panicked at", "RUST_BACKTRACE", ".cargo/registry"] {
        assert!(!all.contains(panic), "no panic text ({panic}): {all}");
    }
}

#[test]
fn morc_doc_shows_a_lua_kinds_list_parameters_and_its_ports_units_and_elements() {
    // Issue 25, item 6: `morc doc teach.admittance` printed `table: 0x…` for box_max.
    let out = morc().args(["doc", "teach.admittance"]).output().unwrap();
    let doc = text(&out);
    assert!(out.status.success(), "{doc}");
    assert!(!doc.contains("table: 0x"), "{doc}");
    assert!(doc.contains("box_max      = { 1000.0, 1000.0, 1000.0 }"), "{doc}");
    // The robot it is handed, declared morc.ROBOT and documented so.
    assert!(doc.contains("robot        = morc.ROBOT") && doc.contains("self.robot is that robot, read-only"), "{doc}");
    assert!(doc.contains("output f            vector[3]  [x, y, z: N]"), "{doc}");
    // A port sized by a parameter as a default instance has it (n = 6).
    assert!(doc.contains("output q            vector[6]"), "{doc}");
}

#[test]
fn the_hand_guiding_example_computes_its_expected_figures_and_plots_the_measured_drift() {
    // Issue 25, item 6: "(expected 20.0)" was a string constant; the drift panel the law's own.
    let source = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/hand_guiding.lua")).unwrap();
    let (given, heavier) = ("local M, D = 1, 50", "local M, D = 1.5, 50");
    assert!(source.contains(given), "the example names its M and D once");
    let dir = scratch("hand_guiding_params");
    let example = dir.join("hand_guiding.lua");
    std::fs::write(&example, source.replace(given, heavier).replace("\".png\")))", "\".svg\")))")).unwrap();
    let out = morc().current_dir(&dir).args(["run", example.to_str().unwrap()]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let last = stdout.lines().last().unwrap_or_default();
    assert!(last.contains("(expected 0.200)") && last.contains("(expected 30.0)"), "M/D = 30 ms: {last}");
    let numbers: Vec<f64> = last.split(|c: char| !(c.is_ascii_digit() || c == '.')).filter_map(|w| w.parse().ok()).collect();
    assert!((numbers[2] - 30.0).abs() <= 30.0 * 0.02, "the arm follows the heavier law: {last}");
    let picture = stdout.lines().find_map(|l| l.split("plotted to ").nth(1)).unwrap_or_else(|| panic!("{stdout}"));
    assert!(picture.ends_with(".svg"), "{picture}");
    let svg = std::fs::read_to_string(dir.join(picture)).unwrap();
    for label in ["orientation drift, measured [°]", "adm.f [N]", "adm.v [m/s]", "M_d = 1.5 kg"] {
        assert!(svg.contains(label), "the plot shows '{label}'");
    }
}
