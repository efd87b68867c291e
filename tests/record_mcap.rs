//! MCAP recordings beside HDF5, through the `morc` binary as a user meets
//! them: `--record-format mcap`, `a:record { format = "mcap" }`, `morc rec
//! info` and `morc rec convert` both ways. Foxglove's own `mcap` Python
//! library reads the MCAP files and h5py the HDF5 file of the same run
//! (tests/python/compare_mcap.py): the same signals, sample for sample.
//!
//! Needs python3 with mcap, h5py and numpy (scripts/setup --test).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value as Json;

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("morc-record-mcap-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn morc(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_morc")).current_dir(dir).args(args).output().unwrap()
}

fn ok(out: &Output, what: &str) -> String {
    let (o, e) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{what} failed ({:?}):\n{o}\n{e}", out.status);
    format!("{o}{e}")
}

/// What tests/python/compare_mcap.py finds comparing `mcap` with `h5`, or its complaint.
fn compare(mcap: &Path, h5: &Path) -> Result<Json, String> {
    let python = std::env::var("MORC_PYTHON").unwrap_or_else(|_| "python3".into());
    match Command::new(&python).args(["-c", "import mcap, h5py, numpy"]).output() {
        Ok(o) if o.status.success() => {}
        _ => panic!("this test reads recordings with Python's mcap and h5py: run scripts/setup --test (pip install mcap h5py numpy)"),
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/compare_mcap.py");
    let out = Command::new(&python).arg(script).arg(mcap).arg(h5).output().unwrap();
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(serde_json::from_slice(&out.stdout).unwrap())
}

/// A run of the simulated arm following a sine, with a step: vectors and reals.
const PROGRAM: &str = r#"
local a = morc.assembly { "wave", duration = 0.3 }
a:add("ref", "sine", { n = 6, amplitude = 0.2, frequency = 3 })
a:add("st", "step", { time = 0.1, final = 2.5 })
a:connect("ref.y", "robot.q_cmd")
a:record { "robot.q", "ref.y", "st.y", path = "both.h5" }
a:record { "robot.q", "ref.y", "st.y", path = "both", format = "mcap", name = "rec_mcap" }
local r = morc.engine:run(a)
assert(r.ok, r.reason)
print("mcap " .. r.data["rec_mcap.path"] .. " " .. r.data["rec_mcap.samples"])
"#;

fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == ext)).collect();
    v.sort();
    v
}

#[test]
fn one_run_recorded_as_hdf5_and_mcap_holds_the_same_samples() {
    let dir = scratch("both");
    std::fs::write(dir.join("wave.lua"), PROGRAM).unwrap();
    let said = ok(&morc(&dir, &["run", "wave.lua"]), "morc run");
    assert!(said.contains("mcap both.mcap 300"), "{said}");
    let found = compare(&dir.join("both.mcap"), &dir.join("both.h5")).unwrap();
    assert_eq!(found["signals"], serde_json::json!(["ref.y", "robot.q", "st.y"]));
    assert_eq!(found["samples"], 300);
    assert_eq!(found["last"]["st.y"], 2.5, "{found}");
    assert_eq!(found["end"]["complete"], "1");
    assert_eq!(found["end"]["dropped_samples"], "0");
    // The run's timing went into the MCAP file too (rewritten after the run).
    assert_eq!(found["timing"], serde_json::json!(["rec", "rec_mcap", "ref", "st"]), "{found}");
    assert_eq!(found["components"], serde_json::json!(["rec", "ref", "st"]));

    let info = ok(&morc(&dir, &["rec", "info", "both.mcap"]), "morc rec info");
    assert!(info.contains("both.mcap (MCAP)"), "{info}");
    assert!(info.contains("robot.q") && info.contains("vector[6]") && info.contains("rad"), "{info}");
    assert!(info.contains("samples          300"), "{info}");
    assert!(info.contains("sine") && info.contains("rec_mcap"), "{info}");
}

#[test]
fn record_format_flag_makes_every_recording_mcap() {
    let dir = scratch("flag");
    let program = PROGRAM.replace("path = \"both.h5\"", "name = \"rec1\"").replace(", path = \"both\", format = \"mcap\", name = \"rec_mcap\"", ", name = \"rec_mcap\"");
    std::fs::write(dir.join("wave.lua"), program).unwrap();
    ok(&morc(&dir, &["--record-format", "mcap", "--record", "runs", "run", "wave.lua"]), "morc --record-format mcap run");
    let runs = dir.join("runs");
    assert_eq!(files(&runs, "mcap").len(), 2, "two recorders, two MCAP files: {:?}", std::fs::read_dir(&runs).unwrap().collect::<Vec<_>>());
    assert!(files(&runs, "h5").is_empty());
    // Same run without the flag: HDF5, and the same samples as the MCAP files.
    std::fs::rename(&runs, dir.join("mcap-runs")).unwrap();
    ok(&morc(&dir, &["--record", "runs", "run", "wave.lua"]), "morc run");
    let h5 = files(&runs, "h5");
    assert_eq!(h5.len(), 2);
    compare(&files(&dir.join("mcap-runs"), "mcap")[0], &h5[0]).unwrap();

    let bad = morc(&dir, &["--record-format", "csv", "run", "wave.lua"]);
    assert_eq!(bad.status.code(), Some(2), "a usage error");
    let e = String::from_utf8_lossy(&bad.stderr);
    assert!(e.contains("csv") && e.contains("hdf5") && e.contains("mcap"), "{e}");
}

#[test]
fn convert_goes_both_ways_and_keeps_every_sample() {
    let dir = scratch("convert");
    std::fs::write(dir.join("wave.lua"), PROGRAM).unwrap();
    ok(&morc(&dir, &["run", "wave.lua"]), "morc run");
    let said = ok(&morc(&dir, &["rec", "convert", "both.h5", "out/from_h5.mcap"]), "convert h5 → mcap");
    assert!(said.contains("300 samples"), "{said}");
    compare(&dir.join("out/from_h5.mcap"), &dir.join("both.h5")).unwrap();
    ok(&morc(&dir, &["rec", "convert", "both.mcap", "from_mcap.h5"]), "convert mcap → h5");
    let found = compare(&dir.join("both.mcap"), &dir.join("from_mcap.h5")).unwrap();
    assert_eq!(found["samples"], 300);
    // The converted HDF5 file carries the assembly and the timing.
    let info = ok(&morc(&dir, &["rec", "info", "from_mcap.h5"]), "morc rec info");
    assert!(info.contains("assembly 'wave'") && info.contains("timing") && info.contains("rec_mcap"), "{info}");

    // A conversion never replaces a file.
    let again = morc(&dir, &["rec", "convert", "both.h5", "from_mcap.h5"]);
    assert!(!again.status.success());
    let e = String::from_utf8_lossy(&again.stderr);
    assert!(e.contains("from_mcap.h5 exists"), "{e}");
    // Not a recording: the error names the file.
    std::fs::write(dir.join("junk.mcap"), b"not mcap at all").unwrap();
    let junk = morc(&dir, &["rec", "convert", "junk.mcap", "junk.h5"]);
    assert!(!junk.status.success());
    let e = String::from_utf8_lossy(&junk.stderr);
    assert!(e.contains("junk.mcap") && e.contains("not an MCAP file"), "{e}");
    assert!(!dir.join("junk.h5").exists());
}
