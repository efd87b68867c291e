//! Faults under load: a robot program on `morc --bus sim` (the KR 16 through the EtherCAT
//! master, recorded) gets one fault per run at a random tick — lost frames, a drive fault, a
//! Lua error in a component, an FMU returning an error, a NaN on the way to the drives. Every
//! fault must be detected within 3 cycles, the robot hold, the recording be complete and
//! readable by h5py, and the process never panic. `MORC_FAULT_RUNS` sets the number of runs
//! (default 100); the program is tests/programs/fault_injection.lua.

mod fmu_support;

use std::process::Command;

#[test]
fn every_injected_fault_is_caught_within_three_cycles() {
    let runs: usize = std::env::var("MORC_FAULT_RUNS").ok().and_then(|s| s.parse().ok()).unwrap_or(100);
    let fmu = fmu_support::build_c_fmu("fails_at", "{morc-fails_at-token}", "fails_at.fmu");
    let dir = fmu_support::scratch().join("fault-injection");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let program = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/fault_injection.lua");
    let out = Command::new(env!("CARGO_BIN_EXE_morc"))
        .args(["--bus", "sim", "--record"])
        .arg(&dir)
        .arg("run")
        .arg(&program)
        .arg(&fmu)
        .arg(runs.to_string())
        .arg("11")
        .env("MORC_FMU_CACHE", fmu_support::scratch().join("cache"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "morc panicked:\n{stderr}");
    assert!(out.status.success(), "the program failed ({}):\n{stdout}\n{stderr}", out.status);

    let mut files = Vec::new();
    let mut per_kind = std::collections::BTreeMap::<String, (usize, i64)>::new();
    let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with("run ")).collect();
    assert_eq!(lines.len(), runs, "one line per run:\n{stdout}");
    for line in &lines {
        let field = |key: &str| line.split_whitespace().find_map(|w| w.strip_prefix(key)).unwrap_or_else(|| panic!("no {key} in {line}"));
        let kind = line.split_whitespace().nth(2).unwrap().to_string();
        let inject: i64 = field("inject=").parse().unwrap();
        let ticks: i64 = field("ticks=").parse().unwrap();
        let held: f64 = field("held=").parse().unwrap();
        let reason = line.split_once("reason=").map(|(_, r)| r).unwrap_or_default();
        assert_eq!(field("outcome="), "fault", "{line}");
        // The fault tick is the run's last; injected at tick `inject` (1-based steps).
        let latency = ticks - inject;
        assert!((0..=3).contains(&latency), "detected {latency} cycles after the injection: {line}");
        let named = match kind.as_str() {
            "lost_frames" => reason.contains("lost"),
            "drive_fault" => reason.contains("drive") || reason.contains("fault"),
            "lua_error" => reason.contains("injected Lua error") && reason.contains("'inj'"),
            "fmu_error" => reason.contains("'inj'") && reason.contains("injected fault"),
            "nan" => reason.contains("'inj'") && (reason.contains("NaN") || reason.contains("non-finite")),
            other => panic!("unknown kind {other}"),
        };
        assert!(named, "the message does not name the cause: {line}");
        // r.error.kind says what faulted, for a program to react to.
        let error_kind = match kind.as_str() {
            "lost_frames" | "drive_fault" => "bus",
            "lua_error" => "lua",
            "fmu_error" => "fmi",
            _ => "assembly", // a NaN command: the assembly's own check
        };
        assert_eq!(field("error="), error_kind, "{line}");
        assert!(held < 0.05, "the robot moved {held}° while holding after the fault: {line}");
        let entry = per_kind.entry(kind).or_default();
        entry.0 += 1;
        entry.1 = entry.1.max(latency);
        files.push((field("file=").to_string(), ticks));
    }
    // Every recording complete and readable by an independent reader (h5py).
    let script = "import sys, json, h5py\n\
                  out = []\n\
                  for p in sys.argv[1:]:\n\
                  \x20   with h5py.File(p, 'r') as f:\n\
                  \x20       out.append([int(f.attrs['samples']), int(f.attrs.get('complete', 0)), len(f['time'])])\n\
                  print(json.dumps(out))\n";
    let reader = Command::new("python3").arg("-c").arg(script).args(files.iter().map(|(f, _)| f)).output().expect("python3 with h5py (scripts/setup --test)");
    assert!(reader.status.success(), "h5py could not read the recordings:\n{}", String::from_utf8_lossy(&reader.stderr));
    let read: Vec<[i64; 3]> = serde_json::from_slice(&reader.stdout).unwrap();
    for ((file, ticks), [samples, complete, time_len]) in files.iter().zip(&read) {
        assert_eq!(*complete, 1, "{file} is not marked complete");
        assert_eq!(samples, time_len, "{file}");
        // Every completed tick is in the file; the faulting tick too when its outputs were all
        // computed (a NaN is caught on its way to the drives, after the recorder saw it).
        assert!(*samples == *ticks || *samples == *ticks + 1, "{file}: {samples} samples for a run of {ticks} ticks");
    }
    for (kind, (count, worst)) in &per_kind {
        eprintln!("fault injection: {kind}: {count} runs, detected within {worst} cycles at worst");
    }
}
