//! FMI conformance of FMUs morc did not write (issue 16): C FMUs of our own
//! (tests/fmu_support/c) run by `morc fmu sim` and by FMPy, the reference
//! importer, which must agree; and what morc must say or do where they
//! cannot (string columns, bad arguments, scheduled execution).
//! Needs python3 with FMPy (`scripts/setup --test` installs it).

mod fmu_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use fmu_support::*;

fn conform2() -> PathBuf {
    build_c_fmu("conform2", "{morc-conform2-token}", "conform2.fmu")
}

fn types3() -> PathBuf {
    build_c_fmu("types3", "{morc-types3-token}", "types3.fmu")
}

/// A CSV as (header, rows of cells).
fn table(csv: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut lines = csv.lines();
    let header = lines.next().unwrap_or_default().split(',').map(|h| h.trim_matches('"').to_string()).collect();
    (header, lines.map(|l| l.split(',').map(str::to_string).collect()).collect())
}

/// Every column of FMPy's CSV is in morc's, in the same order, with the same rows: equal as
/// text or within 1e-12. Returns morc's columns that FMPy does not write.
fn assert_morc_has_fmpy(label: &str, morc: &str, fmpy: &str) -> Vec<String> {
    let ((mh, mr), (fh, fr)) = (table(morc), table(fmpy));
    assert_eq!(mr.len(), fr.len(), "{label}: morc wrote {} rows, FMPy {}\nmorc:\n{morc}\nFMPy:\n{fmpy}", mr.len(), fr.len());
    let at: Vec<usize> = fh.iter().map(|h| mh.iter().position(|m| m == h).unwrap_or_else(|| panic!("{label}: morc has no column {h}: {mh:?}"))).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{label}: FMPy's columns {fh:?} are in another order in morc's {mh:?}");
    for (k, (m, f)) in mr.iter().zip(&fr).enumerate() {
        for (j, &i) in at.iter().enumerate() {
            let (x, y) = (&m[i], &f[j]);
            if x == y {
                continue;
            }
            let close = x.split(' ').zip(y.split(' ')).all(|(a, b)| match (a.parse::<f64>(), b.parse::<f64>()) {
                (Ok(a), Ok(b)) => (a - b).abs() <= 1e-12 * (1.0 + b.abs()),
                _ => false,
            });
            assert!(close, "{label}: row {}, column {}: morc {x} vs FMPy {y}", k + 1, fh[j]);
        }
    }
    mh.into_iter().filter(|h| !fh.contains(h)).collect()
}

/// The column `name` of a CSV, as text.
fn column(csv: &str, name: &str) -> Vec<String> {
    let (h, rows) = table(csv);
    let i = h.iter().position(|c| c == name).unwrap_or_else(|| panic!("no column {name} in {h:?}"));
    rows.into_iter().map(|r| r[i].clone()).collect()
}

fn numbers(csv: &str, name: &str) -> Vec<f64> {
    column(csv, name).iter().map(|x| x.parse().unwrap()).collect()
}

fn dir(name: &str) -> PathBuf {
    let d = scratch().join(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn inputs_start_at_their_start_values_from_the_default_experiments_start_time() {
    let (fmu, d) = (conform2(), dir("start-values"));
    let m = morc_ok(&fmu, &[], &d.join("morc.csv"));
    // startTime = 1, stopTime = 2, stepSize 0.1: rows 1.0 … 2.0, the FMU's own time with them.
    let t = numbers(&m, "time");
    assert_eq!(t.len(), 11, "{m}");
    assert_eq!((t[0], t[10]), (1.0, 2.0));
    assert!(numbers(&m, "t_fmu").iter().zip(&t).all(|(a, b)| (a - b).abs() < 1e-12), "the FMU's time is the run's:\n{m}");
    // Unset inputs hold their start values: u = 2.5, mode = 2, s_in = "Set me!".
    assert!(numbers(&m, "y").iter().all(|y| *y == 5.0), "y = k·u with u's start 2.5:\n{m}");
    assert!(column(&m, "mode_out").iter().all(|c| c == "2"), "{m}");
    assert!(column(&m, "s_out").iter().all(|c| c == "Set me!"), "{m}");
    let x = numbers(&m, "x");
    assert!((x[10] - (0.5 + 2.5)).abs() < 1e-12, "x integrates u from its start 0.5: {x:?}");
    let extra = assert_morc_has_fmpy("conform2", &m, &fmpy_sim(&fmu, &[], &d.join("fmpy.csv")));
    assert_eq!(extra, ["s_out"], "FMPy leaves strings out; morc writes them last");
}

#[test]
fn an_input_table_applies_from_initialisation_and_strings_come_from_it() {
    let (fmu, d) = (conform2(), dir("input-table"));
    let input = d.join("in.csv");
    std::fs::write(&input, "\"time\",\"u\",\"mode\",\"s_in\"\n1,4,3,first\n1.5,6,1,second\n").unwrap();
    let m = morc_ok(&fmu, &["--input", input.to_str().unwrap(), "--param", "x=3"], &d.join("morc.csv"));
    let y = numbers(&m, "y");
    assert_eq!(y[0], 8.0, "the first row sees the table's u = 4 (set in initialisation mode):\n{m}");
    // A row holds the outputs after the step from the row before, which saw the inputs then.
    assert_eq!(y[5], 11.2, "u interpolated to 5.6 at t = 1.4:\n{m}");
    assert_eq!(y[6], 12.0, "u = 6 from t = 1.5:\n{m}");
    assert_eq!(column(&m, "mode_out")[5], "3");
    assert_eq!(column(&m, "mode_out")[6], "1");
    assert_eq!(column(&m, "s_out")[5], "first");
    assert_eq!(column(&m, "s_out")[6], "second");
    assert_eq!(numbers(&m, "x")[0], 3.0, "--param sets a state's start value, as its help says");
    // FMPy reads the numeric columns of the same table.
    let numeric = d.join("numeric.csv");
    std::fs::write(&numeric, "\"time\",\"u\",\"mode\"\n1,4,3\n1.5,6,1\n").unwrap();
    let m = morc_ok(&fmu, &["--input", numeric.to_str().unwrap(), "--param", "x=3"], &d.join("morc2.csv"));
    let f = fmpy_sim(&fmu, &["--input-file", numeric.to_str().unwrap(), "--start-values", "x", "3"], &d.join("fmpy.csv"));
    assert_morc_has_fmpy("conform2 with inputs", &m, &f);
}

#[test]
fn an_fmu_that_ends_the_simulation_itself_ends_the_run_normally() {
    let (fmu, d) = (conform2(), dir("terminates"));
    let (o, m) = morc_sim(&fmu, &["--param", "stop_at=1.5"], &d.join("morc.csv"));
    assert!(o.status.success(), "fmi2Discard with fmi2Terminated is the end, not a fault:\n{}", String::from_utf8_lossy(&o.stderr));
    let t = numbers(&m, "time");
    assert_eq!(*t.last().unwrap(), 1.5, "the last row is at the FMU's last successful time:\n{m}");
    assert_morc_has_fmpy("conform2 ending at 1.5 s", &m, &fmpy_sim(&fmu, &["--start-values", "stop_at", "1.5"], &d.join("fmpy.csv")));
}

#[test]
fn bad_arguments_exit_2_and_say_what_to_change() {
    let (fmu, d) = (conform2(), dir("usage"));
    let out = d.join("never.csv");
    for (args, says) in [
        (&["--param", "nosuch=1"][..], "--param nosuch: the FMU has no such parameter"),
        (&["--param", "k=abc"][..], "--param k=abc: expected real"),
        (&["--step", "1e-300"][..], "more than the 1e8 morc fmu sim takes: give a larger --step"),
        (&["--step=-0.1"][..], "--step must be a positive time"),
        (&["--stop", "0.5"][..], "must come after the start time"),
        (&["--input", "/no/such/file.csv"][..], "cannot read /no/such/file.csv"),
    ] {
        let (o, _) = morc_sim(&fmu, args, &out);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!out.exists(), "{args:?} left an empty result behind");
    }
    // What the FMU refuses is the FMU's fault (3), in its own words.
    let zero = d.join("mode0.csv");
    std::fs::write(&zero, "time,mode\n1,0\n").unwrap();
    let (o, _) = morc_sim(&fmu, &["--input", zero.to_str().unwrap()], &out);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("mode = 0 is no item of Mode"), "{stderr}");
}

#[test]
fn fmi3_enumerations_aliases_units_arrays_and_binaries() {
    let (fmu, d) = (types3(), dir("types3"));
    let info = Command::new(env!("CARGO_BIN_EXE_morc")).args(["fmu", "info", fmu.to_str().unwrap()]).env("MORC_FMU_CACHE", scratch().join("cache")).output().unwrap();
    let info = String::from_utf8_lossy(&info.stdout);
    let line = |name: &str| info.lines().find(|l| l.split_whitespace().next() == Some(name)).unwrap_or_else(|| panic!("no {name} in:\n{info}")).to_string();
    assert!(line("level").contains("Enumeration(Level)"), "{info}");
    assert!(line("blob").contains("Binary"), "{info}");
    assert!(line("pos").contains(" m "), "pos inherits unit m from Position:\n{info}");
    assert!(line("y_alias").contains("output"), "{info}");
    let m = morc_ok(&fmu, &[], &d.join("morc.csv"));
    assert!(column(&m, "level").iter().all(|c| c == "2"), "the enumeration read through fmi3GetInt64:\n{m}");
    assert_eq!(column(&m, "y_alias"), column(&m, "y"));
    assert_eq!(column(&m, "v3")[0], "1.5 3 0.5", "array cells as FMPy writes them");
    assert_eq!(column(&m, "f")[0], "0.5");
    assert!(column(&m, "s_out").iter().all(|c| c == "Set me!"));
    let extra = assert_morc_has_fmpy("types3", &m, &fmpy_sim(&fmu, &[], &d.join("fmpy.csv")));
    assert_eq!(extra, ["s_out"], "FMPy leaves strings out");
}

#[test]
fn scheduled_execution_alone_is_named_not_mistaken_for_a_missing_interface() {
    let d = dir("scheduled");
    let built = types3();
    let so = std::fs::read(scratch().join("types3").join("types3.fmu.so")).unwrap();
    let _ = built;
    let xml = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fmu_support/c/scheduled3.xml"))
        .unwrap()
        .replace("{morc-types3-token}", "{morc-scheduled3}");
    let fmu = d.join("scheduled3.fmu");
    let platform = morc_fmi::export::platform_tuple().unwrap();
    zip_file(&fmu, &[("modelDescription.xml", xml.as_bytes()), (&format!("binaries/{platform}/types3.so"), &so)]);
    let (o, _) = morc_sim(&fmu, &[], &d.join("out.csv"));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(stderr.contains("only scheduled execution") && stderr.contains("not scheduled execution yet"), "{stderr}");
}

/// The C FMUs of the tests that FMPy can load, co-simulation ones; then the model-exchange ones,
/// which run with FMPy's Euler and morc's mode that reproduces it (tests/fmu_me_events.rs).
const CS_FMUS: &[&str] = &["conform2", "types3", "feedthrough3", "fails_at"];
const ME_FMUS: &[&str] = &["bounce2", "bounce3", "stairs2", "array3", "dinput2"];

#[test]
fn every_test_fmu_runs_in_morc_as_in_fmpy() {
    let d = dir("every");
    let c_fmu = |stem: &&str| build_c_fmu(stem, &format!("{{morc-{stem}-token}}"), &format!("{stem}.fmu"));
    let mut runs: Vec<(PathBuf, Vec<&str>, Vec<&str>)> = CS_FMUS.iter().map(|s| (c_fmu(s), vec![], vec![])).collect();
    for block in morc_fmi::export::EXPORTED {
        runs.push((fmu_path(block.model_identifier), vec![], vec![]));
        runs.push((fmu3_path(block.model_identifier), vec![], vec![]));
    }
    let euler_morc = vec!["--step", "0.001", "--param", "me_solver=euler", "--param", "me_events=step_end"];
    let euler_fmpy = vec!["--solver", "Euler", "--step-size", "0.001", "--output-interval", "0.001", "--dont-record-events"];
    runs.extend(ME_FMUS.iter().map(|s| (c_fmu(s), euler_morc.clone(), euler_fmpy.clone())));
    for (fmu, morc_args, fmpy_args) in &runs {
        let label = fmu.file_name().unwrap().to_string_lossy().into_owned();
        let m = morc_ok(fmu, morc_args, &d.join(format!("{label}.morc.csv")));
        let f = fmpy_sim(fmu, fmpy_args, &d.join(format!("{label}.fmpy.csv")));
        assert_morc_has_fmpy(&label, &m, &f);
    }
}

#[test]
fn an_unconnected_fmu_input_holds_its_start_value_in_an_assembly() {
    let mut spec = morc_kernel::AssemblySpec::new("start-values");
    add_fmu(&mut spec, "c", &conform2(), 1, &[]);
    probe(&mut spec, "py", "c.y");
    spec.duration = Some(0.005);
    let r = run(&spec, morc_kernel::ClockKind::Virtual);
    assert!(r.outcome == morc_kernel::Outcome::Finished("duration".into()), "{}", r.report());
    assert_eq!(samples(&r, "py"), vec![5.0; 5], "y = k·u with u at its start 2.5, not 0");
}

#[test]
fn ctrl_c_ends_a_long_simulation_with_its_rows_written() {
    let (fmu, d) = (types3(), dir("ctrl-c"));
    let out = d.join("long.csv");
    let mut child = Command::new(env!("CARGO_BIN_EXE_morc"))
        .args(["fmu", "sim", fmu.to_str().unwrap(), "--stop", "900000", "--step", "0.01", "-o", out.to_str().unwrap()])
        .env("MORC_FMU_CACHE", scratch().join("cache"))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Rows stream to the file while it runs (9·10⁷ steps would take many minutes).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::fs::metadata(&out).map_or(0, |m| m.len()) < 100_000 {
        assert!(std::time::Instant::now() < deadline, "no rows written within 60 s");
        assert!(child.try_wait().unwrap().is_none(), "ended before Ctrl-C");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: a plain kill(2) of our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("stopped at t = ") && stderr.contains("rows up to there are written"), "{stderr}");
    let csv = std::fs::read_to_string(&out).unwrap();
    assert!(csv.ends_with('\n'), "the last row is whole");
    let rows = csv.lines().count() - 1;
    assert!(stderr.contains(&format!("the {rows} rows")), "{rows} rows in the file: {stderr}");
}
