//! Crash-safe recordings: the real `morc` binary records a long run and is
//! killed with SIGKILL at seeded moments, 20 times for each clock (virtual,
//! wall) and format (HDF5, MCAP); after each kill the standard readers read
//! the file — h5py every dataset whole, Foxglove's `mcap` library through
//! `make_reader(f).iter_messages()` — and what they find must hold together:
//! counts no larger than the data, times exactly a sample period apart from
//! 0, values in range, and (wall clock) every sample the run had made up to
//! 1 s before the kill. Then `morc rec info` on a cut-short file and `morc
//! rec repair` on files as older versions left them.
//!
//! Pass or fail does not depend on the machine's speed: any kill moment is
//! accepted, only the invariants are checked, and the "1 s before" check
//! compares with the data times the program itself printed (with when the
//! test read them), not with a guess of how fast it runs.
//!
//! Needs python3 with h5py, mcap and numpy (scripts/setup --test).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value as Json;

const KILLS: usize = 20;

/// A long run that records; the program prints the engine's data time every 50 ms (wall).
const PROGRAM: &str = r#"
local a = morc.assembly { "long", duration = 100000 }
a:add("ref", "sine", { n = 6, amplitude = 0.2, frequency = 3 })
a:connect("ref.y", "robot.q_cmd")
a:record { "robot.q", "ref.y" }
local h = morc.engine:start(a)
while h:status() == "running" do
  print(("t %.6f"):format(morc.engine:time()))
  io.stdout:flush()
  os.execute("sleep 0.05")
end
"#;

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("morc-record-crash-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn python() -> String {
    let python = std::env::var("MORC_PYTHON").unwrap_or_else(|_| "python3".into());
    match Command::new(&python).args(["-c", "import mcap, h5py, numpy"]).output() {
        Ok(o) if o.status.success() => python,
        _ => panic!("this test reads recordings with Python's h5py and mcap: run scripts/setup --test (pip install mcap h5py numpy)"),
    }
}

/// What tests/python/check_crash.py finds in `files`, one object per file.
fn check(files: &[PathBuf]) -> Vec<Json> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/check_crash.py");
    let out = Command::new(python()).arg(script).args(files).output().unwrap();
    assert!(out.status.success(), "check_crash.py failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice::<Vec<Json>>(&out.stdout).unwrap()
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

/// One killed run: its recording, and the data times it printed with when the test read each.
struct Killed {
    file: PathBuf,
    printed: Vec<(f64, Instant)>,
    killed_at: Instant,
}

/// Runs PROGRAM in `dir` and kills it `delay` after it printed its first data time (the run records by then).
fn run_and_kill(dir: &Path, clock: &str, format: &str, delay: Duration) -> Killed {
    std::fs::write(dir.join("long.lua"), PROGRAM).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_morc"))
        .current_dir(dir)
        .args(["--clock", clock, "--record", "runs", "--record-format", format, "run", "long.lua"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let printed = Arc::new(Mutex::new(Vec::new()));
    let (first_tx, first_rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    let lines = printed.clone();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(t) = line.strip_prefix("t ").and_then(|t| t.parse::<f64>().ok()) {
                lines.lock().unwrap().push((t, Instant::now()));
                let _ = first_tx.send(());
            }
        }
    });
    if first_rx.recv_timeout(Duration::from_secs(120)).is_err() {
        let _ = child.kill();
        panic!("morc run in {} printed no data time within 120 s", dir.display());
    }
    std::thread::sleep(delay);
    let killed_at = Instant::now();
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGKILL), "the run died by SIGKILL, not otherwise: {status:?}");
    reader.join().unwrap();
    let files: Vec<PathBuf> = std::fs::read_dir(dir.join("runs")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "one recording: {files:?}");
    let printed = printed.lock().unwrap().clone();
    Killed { file: files[0].clone(), printed, killed_at }
}

/// 20 kills on `clock` in `format`, each read back and judged.
fn kills(clock: &str, format: &str, seed: u64, max_delay: f64) {
    let base = scratch(&format!("{clock}-{format}"));
    let mut seeded = Seeded(seed);
    let mut with_data = 0;
    let mut checked_1s = 0;
    for k in 0..KILLS {
        let dir = base.join(format!("kill-{k:02}"));
        std::fs::create_dir_all(&dir).unwrap();
        let delay = Duration::from_secs_f64(seeded.next() * max_delay);
        let run = run_and_kill(&dir, clock, format, delay);
        let f = &check(std::slice::from_ref(&run.file))[0];
        let what = format!("{clock} clock, {format}, killed {delay:?} after the first data time: {}", run.file.display());
        assert!(f.get("error").is_none(), "{what}: the reader failed: {}", f["error"]);
        assert_eq!(f["problems"], serde_json::json!([]), "{what}: {f}");
        assert_eq!(f["complete"], 0, "{what}: the file says it was not closed");
        let rows: Vec<u64> = f["rows"].as_object().unwrap().values().map(|n| n.as_u64().unwrap()).collect();
        if format == "hdf5" {
            assert_eq!(rows.len(), 3, "{what}: time and the two signals, each a dataset: {f}");
        } else {
            // (A run killed before its first flush has no message: that is a valid file too.)
            assert!(rows.iter().all(|&n| n == rows[0]), "{what}: every channel holds the same rows (a chunk is committed whole): {f}");
        }
        if !rows.is_empty() && rows.iter().all(|&n| n > 0) {
            with_data += 1;
        }
        if clock == "wall" {
            // Every sample the run had made 1 s before the kill is in the file.
            let period = f["sample_period"].as_f64().unwrap();
            let made = run.printed.iter().filter(|(_, at)| *at + Duration::from_secs(1) <= run.killed_at).map(|(t, _)| *t).fold(f64::NAN, f64::max);
            if made.is_finite() {
                checked_1s += 1;
                let last = f["last_time"].as_f64().unwrap_or(-1.0);
                assert!(last >= made - period * 1.5, "{what}: the run was at t = {made} s 1 s before the kill, the file ends at t = {last} s: {f}");
            }
        }
        // The simulation records fast: keep one file on the disk at a time.
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(with_data >= KILLS / 2, "{clock}/{format}: only {with_data} of {KILLS} killed runs left samples: the kills came too early to test anything");
    if clock == "wall" {
        assert!(checked_1s >= KILLS / 5, "{clock}/{format}: only {checked_1s} kills came 1 s after a printed data time");
    }
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn kill_9_leaves_files_the_standard_readers_read() {
    // The four cases at once (each is mostly waiting); the seeds fix the kill moments.
    let cases = [("virtual", "hdf5", 1u64, 0.4), ("virtual", "mcap", 2, 0.4), ("wall", "hdf5", 3, 1.6), ("wall", "mcap", 4, 1.6)];
    let threads: Vec<_> = cases.iter().map(|&(clock, format, seed, max)| std::thread::spawn(move || kills(clock, format, seed, max))).collect();
    let mut failures = Vec::new();
    for (t, case) in threads.into_iter().zip(cases) {
        if let Err(e) = t.join() {
            let msg = e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
            failures.push(format!("{case:?}: {msg}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn morc(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_morc")).current_dir(dir).args(args).output().unwrap()
}

fn said(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

#[test]
fn rec_info_says_a_file_was_cut_short_and_how_much_it_holds() {
    for format in ["hdf5", "mcap"] {
        let dir = scratch(&format!("info-{format}"));
        let run = run_and_kill(&dir, "virtual", format, Duration::from_millis(300));
        let f = &check(std::slice::from_ref(&run.file))[0];
        let info = morc(&dir, &["rec", "info", run.file.to_str().unwrap()]);
        let text = said(&info);
        assert!(info.status.success(), "{text}");
        // HDF5 says what its count promises; MCAP what it holds.
        let samples = if format == "hdf5" { f["samples"].as_u64().unwrap() } else { f["rows"]["robot.q"].as_u64().unwrap() };
        assert!(text.contains(&format!("cut short: the run did not close this file (a crash or kill); it holds {samples} samples")), "{format}: {text}");
        assert!(text.contains("morc rec repair"), "{text}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn rec_repair_mends_what_older_versions_left() {
    let dir = scratch("repair");
    let python = python();

    // MCAP as the old writer left it after a kill: records, then a chunk whose length was never written.
    let run = run_and_kill(&dir, "virtual", "mcap", Duration::from_millis(300));
    let bytes = std::fs::read(&run.file).unwrap();
    // Cut at the provisional end (DataEnd, Footer without summary) the new writer keeps after its data.
    let tail = [0x0Fu8, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 20];
    let at = bytes.windows(tail.len()).position(|w| w == tail).expect("the provisional end");
    let mut old = bytes[..at].to_vec();
    old.push(0x06); // CHUNK
    old.extend_from_slice(&u64::MAX.to_le_bytes());
    old.extend_from_slice(&[0x55; 3000]);
    let broken = dir.join("old.mcap");
    std::fs::write(&broken, &old).unwrap();
    let before = &check(std::slice::from_ref(&broken))[0];
    assert!(before["error"].as_str().is_some_and(|e| e.contains("18446744073709551615") || e.contains("exceeds limit")), "the old file breaks the reader: {before}");
    let out = morc(&dir, &["rec", "repair", "old.mcap"]);
    assert!(out.status.success() && said(&out).contains("old.mcap mended"), "{}", said(&out));
    let after = &check(std::slice::from_ref(&broken))[0];
    assert!(after.get("error").is_none() && after["problems"] == serde_json::json!([]), "{after}");
    assert!(after["rows"]["robot.q"].as_u64().unwrap() > 0, "{after}");
    assert!(dir.join("old.mcap.broken").exists(), "the file as it was is kept");
    let again = morc(&dir, &["rec", "repair", "old.mcap"]);
    assert!(said(&again).contains("old.mcap.broken exists"), "a second repair does not overwrite the kept file: {}", said(&again));

    // HDF5 as the old writer left it: deflated chunks, the last one overwritten after the
    // last flush ("filter returned failure during read"), and a count larger than the data.
    let h5 = dir.join("old.h5");
    let make = r#"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "w") as f:
    for k, v in dict(sample_period=0.001, base_period=0.001, decimation=1, samples=5000, dropped_samples=0, complete=0).items():
        f.attrs[k] = v
    for k in ["robot", "assembly", "recorder", "notes", "utc_start", "morc_version", "git_commit"]:
        f.attrs[k] = "x"
    n = 3000
    t = f.create_dataset("time", data=np.arange(n) * 0.001, chunks=(1000,), maxshape=(None,), compression="gzip", shuffle=True)
    y = f.create_dataset("ref.y", data=0.1 * np.sin(np.arange(n * 6).reshape(n, 6) * 0.01), chunks=(500, 6), maxshape=(None, 6), compression="gzip", shuffle=True)
    for d, ty in ((t, "real"), (y, "vector[6]")):
        d.attrs["type"] = ty
        d.attrs["unit"] = "s" if d is t else "rad"
with h5py.File(sys.argv[1], "r") as f:
    info = f["time"].id.get_chunk_info(2)
with open(sys.argv[1], "r+b") as raw:
    raw.seek(info.byte_offset)
    raw.write(b"\xff" * info.size)
"#;
    let out = Command::new(&python).args(["-c", make]).arg(&h5).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let before = &check(std::slice::from_ref(&h5))[0];
    assert!(before["error"].as_str().is_some_and(|e| e.contains("filter")), "the old file breaks h5py: {before}");
    let out = morc(&dir, &["rec", "repair", "old.h5"]);
    assert!(out.status.success() && said(&out).contains("old.h5 mended: 2000 samples"), "{}", said(&out));
    let after = &check(std::slice::from_ref(&h5))[0];
    assert!(after.get("error").is_none() && after["problems"] == serde_json::json!([]), "{after}");
    assert_eq!(after["samples"], 2000, "the count says what is there: {after}");
    assert_eq!(after["rows"], serde_json::json!({"time": 2000, "ref.y": 2000}));
    assert_eq!(after["complete"], 0, "still says it was cut short");
    let info = said(&morc(&dir, &["rec", "info", "old.h5"]));
    assert!(info.contains("cut short") && info.contains("holds 2000 samples"), "{info}");

    // A whole file is left alone.
    let whole = dir.join("whole.lua");
    std::fs::write(&whole, PROGRAM.replace("duration = 100000", "duration = 0.2").replace("\"ref.y\" }", "\"ref.y\", path = \"whole.h5\" }")).unwrap();
    let out = morc(&dir, &["run", "whole.lua"]);
    assert!(out.status.success(), "{}", said(&out));
    let out = morc(&dir, &["rec", "repair", "whole.h5"]);
    assert!(said(&out).contains("whole.h5 is whole (200 samples): nothing to mend"), "{}", said(&out));
    assert!(!dir.join("whole.h5.broken").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
