//! A recording the disk cannot hold fails the run: the real `morc` binary records onto a 1 MiB
//! tmpfs until it is full, in HDF5 and in MCAP. The run must fault with error kind `record`,
//! `morc run` exit non-zero, the message name the file and the cause (`No space left on
//! device`); the file must close whole (h5py and Foxglove's `mcap` read it, every sample it
//! counts is in it, and it says why it stopped: `write_error`), and `morc rec info` must tell
//! that from a crash.
//!
//! Mounting a tmpfs needs root (CI runs as root; so do our machines). Needs python3 with h5py
//! and mcap (scripts/setup --test).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value as Json;

/// A run that records far more than 1 MiB: 13 numbers a millisecond for 60 s.
const PROGRAM: &str = r#"
local a = morc.assembly { "fill", duration = 60 }
a:add("ref", "sine", { n = 6, amplitude = 0.2, frequency = 0.5 })
a:connect("ref.y", "robot.q_cmd")
a:record { "robot.q", "ref.y" }
local r = morc.engine:run(a)
print(("ok=%s kind=%s"):format(tostring(r.ok), tostring(r.error and r.error.kind)))
print(("duration=%.3f"):format(r.duration))
"#;

/// A tmpfs of `size`, unmounted when dropped.
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount(name: &str, size: &str) -> SmallDisk {
        let dir = std::env::temp_dir().join(format!("morc-full-disk-{}-{name}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let out = Command::new("mount").args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"]).arg(&dir).output().expect("mount");
        assert!(out.status.success(), "this test fills a small tmpfs and needs root to mount it: {}", String::from_utf8_lossy(&out.stderr));
        SmallDisk(dir)
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

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

fn morc(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_morc")).current_dir(dir).args(args).output().unwrap()
}

fn said(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// Records in `format` onto a full disk and checks the run, the file and `morc rec info`.
fn fill(format: &str) {
    let disk = SmallDisk::mount(format, "1m");
    let work = std::env::temp_dir().join(format!("morc-full-disk-{}-{format}-work", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("fill.lua"), PROGRAM).unwrap();
    let runs = disk.0.join("runs");
    let out = morc(&work, &["--record", runs.to_str().unwrap(), "--record-format", format, "run", "fill.lua"]);
    let text = said(&out);

    // The run failed, as a recording error, and said where and why.
    assert!(!out.status.success(), "{format}: a run whose recording filled the disk exits non-zero: {text}");
    assert!(text.contains("ok=false kind=record"), "{format}: r.ok is false with error kind record: {text}");
    let files: Vec<PathBuf> = std::fs::read_dir(&runs).unwrap().map(|e| e.unwrap().path()).filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.')).collect();
    assert_eq!(files.len(), 1, "{format}: one recording: {files:?}");
    let file = &files[0];
    assert!(text.contains(&format!("cannot write {}: No space left on device", file.display())), "{format}: the message names the file and the cause: {text}");
    let duration: f64 = text.lines().find_map(|l| l.strip_prefix("duration=")).and_then(|d| d.parse().ok()).expect("the program printed the duration");
    assert!(duration < 60.0, "{format}: the run stopped when the disk was full, at {duration} s");
    let leftovers: Vec<_> = std::fs::read_dir(&runs).unwrap().map(|e| e.unwrap().file_name()).filter(|n| n.to_string_lossy().starts_with('.')).collect();
    assert!(leftovers.is_empty(), "{format}: no partial file left: {leftovers:?}");

    // The file closed whole, holding what it counts, saying why it ended.
    let found = check(file);
    assert!(found.get("error").is_none(), "{format}: the standard reader reads the file: {found}");
    assert_eq!(found["problems"].as_array().unwrap().len(), 0, "{format}: {found}");
    assert_eq!(found["complete"], 1, "{format}: the file was closed: {found}");
    assert_eq!(found["write_error"], "No space left on device", "{format}: the file says why it stopped: {found}");
    let samples = found["samples"].as_u64().unwrap();
    assert!(samples > 1000, "{format}: the file holds what fitted, {samples} samples: {found}");
    for (signal, rows) in found["rows"].as_object().unwrap() {
        if signal == "time" || signal.starts_with("robot.") || signal.starts_with("ref.") {
            assert_eq!(rows.as_u64(), Some(samples), "{format}: {signal} holds the {samples} samples counted: {found}");
        }
    }
    assert!(text.contains(&format!("the file holds the first {samples} samples")), "{format}: the message says what the file holds: {text}");
    let last = found["last_time"].as_f64().unwrap();
    assert!(last < duration + 1e-9, "{format}: the file ends at {last} s, the run at {duration} s");

    // morc rec info tells a write error from a crash.
    let info = morc(&work, &["rec", "info", file.to_str().unwrap()]);
    let info = said(&info);
    assert!(info.contains(&format!("stopped early: writing failed (No space left on device); the run closed the file with the {samples} samples")), "{format}: {info}");
    assert!(!info.contains("cut short"), "{format}: not a crash: {info}");
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn a_full_disk_fails_the_run_and_the_file_closes_whole_hdf5() {
    fill("hdf5");
}

#[test]
fn a_full_disk_fails_the_run_and_the_file_closes_whole_mcap() {
    fill("mcap");
}
