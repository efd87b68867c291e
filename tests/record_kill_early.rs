//! `kill -9` in the first moments of a recording: the real `morc` binary starts a recording and
//! is killed with SIGKILL at seeded moments spread over the first 200 ms after its file is
//! created (15 kills each for HDF5 and MCAP). Whatever the moment, a file under a recording's
//! name opens with the standard reader (h5py, Foxglove's `mcap`), or `morc rec repair` mends it;
//! a kill before the file was made leaves no file under that name (only a hidden partial one,
//! which the next recording in the folder removes).
//!
//! The kill moments are measured from when the file appeared, seen by polling the folder, so
//! they fall in the same phases on a fast machine and a slow one. Needs python3 with h5py and
//! mcap (scripts/setup --test).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value as Json;

const KILLS: usize = 15;
const SPREAD: Duration = Duration::from_millis(200);

const PROGRAM: &str = r#"
local a = morc.assembly { "long", duration = 100000 }
a:add("ref", "sine", { n = 6, amplitude = 0.2, frequency = 3 })
a:connect("ref.y", "robot.q_cmd")
a:record { "robot.q", "ref.y" }
morc.engine:run(a)
"#;

fn python() -> String {
    let python = std::env::var("MORC_PYTHON").unwrap_or_else(|_| "python3".into());
    match Command::new(&python).args(["-c", "import mcap, h5py, numpy"]).output() {
        Ok(o) if o.status.success() => python,
        _ => panic!("this test reads recordings with Python's h5py and mcap: run scripts/setup --test (pip install mcap h5py numpy)"),
    }
}

/// What tests/python/check_crash.py finds in `file`.
fn check(file: &Path) -> Json {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/check_crash.py");
    let out = Command::new(python()).arg(script).arg(file).output().unwrap();
    assert!(out.status.success(), "check_crash.py failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice::<Vec<Json>>(&out.stdout).unwrap().remove(0)
}

/// The files in `dir`: (visible, hidden).
fn files(dir: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return (Vec::new(), Vec::new()) };
    entries.map(|e| e.unwrap().path()).partition(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
}

/// A seeded sequence in [0, 1) (xorshift64*): the same kill moments on every machine.
struct Seeded(u64);
impl Seeded {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Starts a recording run in `dir` and kills it `delay` after its first file appears in
/// `dir/runs`.
fn run_and_kill(dir: &Path, format: &str, delay: Duration) {
    let runs = dir.join("runs");
    let mut child = Command::new(env!("CARGO_BIN_EXE_morc"))
        .current_dir(dir)
        .args(["--record", "runs", "--record-format", format, "run", "long.lua"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    loop {
        let (visible, hidden) = files(&runs);
        if !visible.is_empty() || !hidden.is_empty() {
            break;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("morc run in {} ended ({status}) before it made a recording", dir.display());
        }
        assert!(started.elapsed() < Duration::from_secs(120), "morc run in {} made no file within 120 s", dir.display());
        std::thread::sleep(Duration::from_micros(200));
    }
    std::thread::sleep(delay);
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGKILL), "the run died by SIGKILL, not otherwise: {status:?}");
}

fn kills(format: &str, seed: u64) {
    let base = std::env::temp_dir().join(format!("morc-kill-early-{}-{format}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let mut seeded = Seeded(seed);
    let (mut visible_files, mut mended) = (0, 0);
    let mut last_dir = None;
    for k in 0..KILLS {
        let dir = base.join(format!("kill-{k:02}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("long.lua"), PROGRAM).unwrap();
        // One kill in each of KILLS equal parts of the first 200 ms, at a seeded place in it.
        let delay = SPREAD.mul_f64((k as f64 + seeded.next()) / KILLS as f64);
        run_and_kill(&dir, format, delay);
        let (visible, _hidden) = files(&dir.join("runs"));
        assert!(visible.len() <= 1, "{format}, killed {delay:?} after the file appeared: one recording at most: {visible:?}");
        for file in &visible {
            visible_files += 1;
            let found = check(file);
            if found.get("error").is_none() && found["problems"].as_array().unwrap().is_empty() {
                continue;
            }
            // Not readable as it is: `morc rec repair` must mend it.
            let out = Command::new(env!("CARGO_BIN_EXE_morc")).current_dir(&dir).args(["rec", "repair", file.to_str().unwrap()]).output().unwrap();
            let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            assert!(out.status.success(), "{format}, killed {delay:?} after the file appeared: {} reads as {found} and morc rec repair fails: {said}", file.display());
            let after = check(file);
            assert!(after.get("error").is_none() && after["problems"].as_array().unwrap().is_empty(), "{format}, killed {delay:?}: {} after repair: {after}", file.display());
            mended += 1;
        }
        last_dir = Some(dir);
    }
    assert!(visible_files >= KILLS / 2, "{format}: only {visible_files} of {KILLS} kills came after the recording was made: the kills came too early to test it");
    eprintln!("{format}: {KILLS} kills, {visible_files} left a recording, {mended} of them mended by morc rec repair");

    // The next recording in a folder removes the partial files of killed runs.
    let dir = last_dir.unwrap();
    std::fs::write(dir.join("short.lua"), "local a = morc.assembly { 'short', duration = 0.01 }\na:record { 'robot.q' }\nmorc.engine:run(a)\n").unwrap();
    let stale = dir.join("runs").join(".long.h5.morc-999999999.partial");
    std::fs::write(&stale, b"").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_morc")).current_dir(&dir).args(["--record", "runs", "--record-format", format, "run", "short.lua"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (_, hidden) = files(&dir.join("runs"));
    assert!(hidden.is_empty(), "{format}: partial files of ended runs are removed: {hidden:?}");
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn kill_9_in_the_first_200_ms_leaves_files_that_open_or_mend_hdf5() {
    kills("hdf5", 0x5eed_0004);
}

#[test]
fn kill_9_in_the_first_200_ms_leaves_files_that_open_or_mend_mcap() {
    kills("mcap", 0x5eed_0005);
}
