//! Recording files as a user meets them, through the `morc` binary: a
//! recording never replaces a file (runs in a row, two processes at once,
//! an explicit path that exists), says where it went, and is complete and
//! readable by h5py whenever a run has returned — after a fault, after
//! Ctrl-C, when the program ends with a run still going or leaves through
//! `os.exit`, and while a child process the program started lives on.
//!
//! Needs python3 with h5py and numpy (`pip install h5py numpy`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value as Json;

/// A fresh folder for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("morc-record-files-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn morc() -> Command {
    Command::new(env!("CARGO_BIN_EXE_morc"))
}

fn text(out: &Output) -> (String, String) {
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The .h5 files in `dir`, sorted.
fn h5_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "h5")).collect();
    files.sort();
    files
}

fn python() -> String {
    std::env::var("MORC_PYTHON").unwrap_or_else(|_| "python3".into())
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/check_recording.py")
}

/// What h5py finds in `path` (tests/python/check_recording.py), or h5py's complaint.
fn h5py(path: &Path) -> Result<Json, String> {
    let probe = Command::new(python()).args(["-c", "import h5py, numpy"]).output();
    match probe {
        Ok(o) if o.status.success() => {}
        _ => panic!("this test reads recordings with Python's h5py: install python3, then `pip install h5py numpy`"),
    }
    let out = Command::new(python()).arg(script()).arg(path).output().unwrap();
    if !out.status.success() {
        return Err(format!("h5py could not read {}: {}", path.display(), String::from_utf8_lossy(&out.stderr)));
    }
    Ok(serde_json::from_slice(&out.stdout).unwrap())
}

/// Checks that h5py reads `path` as a recording that was closed cleanly and
/// holds as many rows as it says; returns the number of rows.
fn complete(path: &Path) -> u64 {
    let f = h5py(path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(f["attrs"]["complete"], 1, "{} was closed cleanly", path.display());
    let samples = f["attrs"]["samples"].as_u64().unwrap();
    assert_eq!(f["datasets"]["time"]["shape"], serde_json::json!([samples]), "{}: every row it counts is in it", path.display());
    samples
}

/// A program that records `n` runs of 100 ticks into the folder given by
/// `--record` and `n` more into the file `shared`, printing what each run says it wrote.
fn runs_program(dir: &Path, shared: &Path, n: usize) -> PathBuf {
    let prog = dir.join("runs.lua");
    std::fs::write(
        &prog,
        format!(
            r#"local function assembly(name, path)
  local a = morc.assembly {{ name, duration = 0.1 }}
  a:add("s", "sine", {{ amplitude = 1, frequency = 1 }})
  a:record {{ "s.y", path = path }}
  return a
end
for _ = 1, {n} do
  local r = morc.engine:run(assembly("tour"))
  assert(r.ok, tostring(r))
  print("file " .. r.recordings[1])
  r = morc.engine:run(assembly("fixed", "{shared}"))
  print("file " .. r.recordings[1])
end
"#,
            shared = shared.display()
        ),
    )
    .unwrap();
    prog
}

#[test]
fn runs_in_a_row_and_two_processes_at_once_leave_distinct_files() {
    let dir = scratch("distinct");
    let shared = dir.join("shared.h5");
    let prog = runs_program(&dir, &shared, 5);
    // Two processes at once, each with five runs into the folder and five into the same named file.
    let spawn = || morc().arg("--record").arg(&dir).arg("run").arg(&prog).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let (a, b) = (spawn(), spawn());
    let outputs = [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()];
    let mut printed = Vec::new();
    for out in &outputs {
        let (stdout, stderr) = text(out);
        assert!(out.status.success(), "{stdout}\n{stderr}");
        for line in stdout.lines() {
            let path = line.strip_prefix("file ").unwrap_or_else(|| panic!("{line}"));
            // Each file is said on stderr as it is written, and put in the run's result.
            assert!(stderr.contains(&format!("recorded {path} (100 samples)")), "{path} not announced:\n{stderr}");
            printed.push(PathBuf::from(path));
        }
        // The named file was taken: the run says where it recorded instead.
        assert!(stderr.contains(&format!("{} exists: recording to", shared.display())), "{stderr}");
    }
    assert_eq!(printed.len(), 20);
    let distinct: BTreeSet<&PathBuf> = printed.iter().collect();
    assert_eq!(distinct.len(), 20, "every run its own file: {printed:?}");
    let files = h5_files(&dir);
    assert_eq!(files.len(), 20, "nothing overwritten: {files:?}");
    assert_eq!(files.iter().collect::<BTreeSet<_>>(), distinct, "the files written are the ones the runs named");
    assert!(files.contains(&shared) && files.contains(&dir.join("shared-009.h5")), "{files:?}");
    for f in &files {
        assert_eq!(complete(f), 100, "{}", f.display());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A recorded 1 s assembly whose Lua component fails at 0.05 s, and the path it records to.
const FAULTING: &str = r#"local broken = morc.component { name = "broken", inputs = { "u" }, outputs = { "y" },
  step = function(self, inp, out, t)
    if t >= 0.05 then error("sensor out of range") end
    out.y = inp.u
  end }
local function faulting(path)
  local a = morc.assembly { "faulting", duration = 1 }
  a:add("s", "sine", { amplitude = 1, frequency = 1 })
  a:add("b", broken)
  a:connect("s.y", "b.u")
  a:record { "s.y", "b.y", path = path }
  return a
end
"#;

/// An endless recorded assembly (ends when cancelled).
const ENDLESS: &str = r#"local function endless(path)
  local a = morc.assembly { "endless" }
  a:add("s", "sine", { n = 6, amplitude = 0.01 })
  a:connect("s.y", "robot.q_cmd")
  a:record { "s.y", "robot.q", path = path }
  return a
end
"#;

#[test]
fn a_recording_is_closed_when_its_run_returns_even_with_a_child_process_alive() {
    let dir = scratch("closed");
    let (faulted, cancelled, pidfile) = (dir.join("faulted.h5"), dir.join("cancelled.h5"), dir.join("child.pid"));
    let check = |path: &Path| format!("{} {} {} >/dev/null", python(), script().display(), path.display());
    // A child process started while recording lives on after the run (here a `sleep`
    // in the background). The program then reads its recordings with h5py at once,
    // while morc still runs: no lock may be left on them.
    let prog = dir.join("closed.lua");
    std::fs::write(
        &prog,
        format!(
            r#"{FAULTING}{ENDLESS}
local t0 = morc.engine:tick()
local h = morc.engine:start(endless("{cancelled}"))
assert(os.execute("sleep 60 </dev/null >/dev/null 2>&1 & echo $! > {pidfile}"))
-- Some rows recorded before the cancel, however slow the machine: the run starts on its own thread.
repeat until morc.engine:tick() >= t0 + 20
h:cancel()
local r = h:wait()
assert(r.outcome == "cancelled", tostring(r))
assert(os.execute("{check_cancelled}"), "h5py could not read the cancelled run's recording")
r = morc.engine:run(faulting("{faulted}"))
assert(r.outcome == "fault", tostring(r))
assert(os.execute("{check_faulted}"), "h5py could not read the faulted run's recording")
print("read both")
"#,
            cancelled = cancelled.display(),
            faulted = faulted.display(),
            pidfile = pidfile.display(),
            check_cancelled = check(&cancelled),
            check_faulted = check(&faulted),
        ),
    )
    .unwrap();
    let out = morc().arg("run").arg(&prog).output().unwrap();
    if let Ok(pid) = std::fs::read_to_string(&pidfile) {
        // SAFETY: ends the `sleep` this test's program started.
        unsafe { libc::kill(pid.trim().parse().unwrap(), libc::SIGTERM) };
    }
    let (stdout, stderr) = text(&out);
    assert!(stdout.contains("read both"), "{stdout}\n{stderr}");
    assert!(complete(&cancelled) > 0);
    // The faulted run's file holds every step up to the fault.
    let f = h5py(&faulted).unwrap();
    assert_eq!(f["attrs"]["complete"], 1);
    let samples = f["attrs"]["samples"].as_u64().unwrap();
    assert!((49..=51).contains(&samples), "the 50 steps before the fault at 0.05 s: {samples}");
    assert_eq!(f["attrs"]["dropped_samples"], 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_program_that_ends_or_exits_mid_run_leaves_a_closed_file() {
    let dir = scratch("exit");
    for (name, ending) in [("ends", ""), ("os_exit", "os.exit(0)\n"), ("os_exit_error", "os.exit(false)\n"), ("error", "error(\"the program fails\")\n")] {
        let path = dir.join(format!("{name}.h5"));
        let prog = dir.join(format!("{name}.lua"));
        // The run goes on (an endless assembly) when the program ends, fails or exits.
        std::fs::write(
            &prog,
            format!("{ENDLESS}\nlocal h = morc.engine:start(endless(\"{}\"))\nlocal t0 = morc.engine:tick()\nwhile morc.engine:tick() < t0 + 100 do end\nprint(\"started\")\n{ending}", path.display()),
        )
        .unwrap();
        let out = morc().arg("run").arg(&prog).output().unwrap();
        let (stdout, stderr) = text(&out);
        assert!(stdout.contains("started"), "{name}: {stdout}\n{stderr}");
        assert!(complete(&path) > 0, "{name}: {stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ctrl_c_leaves_a_closed_file() {
    let dir = scratch("ctrl_c");
    let path = dir.join("interrupted.h5");
    let prog = dir.join("interrupted.lua");
    std::fs::write(
        &prog,
        // Ctrl-C comes once 100 ticks are recorded.
        format!(
            "{ENDLESS}\nlocal h = morc.engine:start(endless(\"{}\"))\nlocal t0 = morc.engine:tick()\nwhile morc.engine:tick() < t0 + 100 do end\nprint(\"started\")\nio.stdout:flush()\nprint(h:wait())\n",
            path.display()
        ),
    )
    .unwrap();
    let mut child = morc().args(["--clock", "wall", "run"]).arg(&prog).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    // Ctrl-C once the run is recording (the program says so), however long that takes.
    let mut stdout = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 256];
    while !String::from_utf8_lossy(&seen).contains("started") {
        use std::io::Read;
        let n = stdout.read(&mut buf).unwrap();
        assert!(n > 0, "the program ended before recording: {}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buf[..n]);
    }
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let (_, stderr) = text(&out);
    assert!(complete(&path) > 0, "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_simulation_faster_than_the_disk_loses_no_sample() {
    let dir = scratch("fast_sim");
    let path = dir.join("fast.h5");
    let prog = dir.join("fast.lua");
    // A cheap assembly on the virtual clock runs far faster than real time: 20 s of
    // samples reach the recorder in a fraction of that, more than its buffer holds.
    std::fs::write(
        &prog,
        format!(
            "local a = morc.assembly {{ \"fast\", duration = 20 }}\na:add(\"s\", \"sine\", {{ amplitude = 1, frequency = 1 }})\na:record {{ \"s.y\", path = \"{}\" }}\n\
             local r = morc.engine:run(a)\nprint(r.data[\"rec.samples\"], r.data[\"rec.dropped\"])\n",
            path.display()
        ),
    )
    .unwrap();
    let out = morc().arg("run").arg(&prog).output().unwrap();
    let (stdout, stderr) = text(&out);
    assert_eq!(stdout.trim(), "20000\t0", "{stderr}");
    assert_eq!(complete(&path), 20000);
    let f = h5py(&path).unwrap();
    assert_eq!(f["attrs"]["dropped_samples"], 0);
    let _ = std::fs::remove_dir_all(&dir);
}
