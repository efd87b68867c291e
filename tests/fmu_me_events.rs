//! Model exchange with events, walked as a user walks it: small C FMUs of our own
//! (tests/fmu_support/c: a bouncing ball in FMI 2 and 3, a staircase of time events,
//! a 3-element state array with a 3-element indicator array in FMI 3, a discrete
//! input) simulated with `morc fmu sim` and with `fmpy simulate`, and both read back
//! from their CSV files. morc's default (RK4, state events located in the step) is
//! held against the exact solution and against FMPy's CVode; morc's Euler with
//! `me_events=step_end` against FMPy's Euler to 1e-12.
//! Needs python3 with FMPy (`python3 -m pip install fmpy`) and a C compiler.

mod fmu_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use fmu_support::*;
use morc_kernel::AssemblyData;
use morc_kernel::Value;
use morc_kernel::{InitContext, Step, StepContext};
use morc_test_support::alloc::{allocates_nothing, CountingAllocator};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// FMPy's CVode runs at this relative tolerance; on these models it stays within 1e-7
/// of the exact solution, so morc's default must agree with it to [`CVODE_AGREEMENT`].
const CVODE_TOLERANCE: &str = "1e-9";
const CVODE_AGREEMENT: f64 = 1e-6;
/// morc's Euler against FMPy's: the same arithmetic but for FMPy's summed step times.
const EULER_AGREEMENT: f64 = 1e-12;
/// morc's default against the exact solution (RK4 is exact on the ball's parabolas,
/// events are located to about 1e-14 s).
const EXACT_AGREEMENT: f64 = 1e-9;
/// Step and output interval of every run (s).
const STEP: &str = "0.001";

/// The C FMU `stem` (its source in tests/fmu_support/c), packaged.
fn fmu(stem: &str) -> PathBuf {
    build_c_fmu(stem, &format!("{{morc-{stem}-token}}"), &format!("{stem}.fmu"))
}

fn out(name: &str) -> PathBuf {
    let dir = scratch().join("me-events");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// `morc fmu sim FMU ARGS -o <name>.csv`; the table it wrote.
fn morc(fmu: &Path, args: &[&str], name: &str) -> Table {
    let csv = out(&format!("{name}.csv"));
    let o = Command::new(env!("CARGO_BIN_EXE_morc"))
        .args(["fmu", "sim", fmu.to_str().unwrap(), "--step", STEP])
        .args(args)
        .args(["-o", csv.to_str().unwrap()])
        .env("MORC_FMU_CACHE", scratch().join("cache"))
        .output()
        .unwrap();
    assert!(o.status.success(), "morc fmu sim {} {args:?} failed:\n{}", fmu.display(), String::from_utf8_lossy(&o.stderr));
    Table::read(&csv)
}

/// `fmpy simulate FMU ARGS` with morc's step as output interval and no extra rows at events.
fn fmpy(fmu: &Path, args: &[&str], name: &str) -> Table {
    let csv = out(&format!("{name}.csv"));
    let o = Command::new("python3")
        .args(["-m", "fmpy", "simulate", fmu.to_str().unwrap(), "--output-interval", STEP, "--dont-record-events"])
        .args(args)
        .args(["--output-file", csv.to_str().unwrap()])
        .output()
        .unwrap_or_else(|e| panic!("cannot run python3 ({e}): install Python 3 and FMPy (python3 -m pip install fmpy)"));
    assert!(o.status.success(), "fmpy simulate {} {args:?} failed (python3 -m pip install fmpy):\n{}", fmu.display(), String::from_utf8_lossy(&o.stderr));
    Table::read(&csv)
}

fn fmpy_euler(fmu: &Path, args: &[&str], name: &str) -> Table {
    fmpy(fmu, &[&["--solver", "Euler", "--step-size", STEP], args].concat(), name)
}

fn fmpy_cvode(fmu: &Path, name: &str) -> Table {
    fmpy(fmu, &["--solver", "CVode", "--relative-tolerance", CVODE_TOLERANCE], name)
}

/// morc's exact mode: Euler, state events at step ends.
const MORC_EULER: [&str; 4] = ["--param", "me_solver=euler", "--param", "me_events=step_end"];

/// A CSV file as `morc fmu sim` and `fmpy simulate` write it: header, then numbers.
struct Table {
    file: PathBuf,
    names: Vec<String>,
    rows: Vec<Vec<f64>>,
}

impl Table {
    fn read(path: &Path) -> Table {
        let text = std::fs::read_to_string(path).unwrap();
        let mut lines = text.lines();
        let names = lines.next().unwrap().split(',').map(|n| n.trim_matches('"').to_string()).collect();
        let rows = lines.map(|l| l.split(',').map(|c| c.parse().unwrap_or_else(|_| panic!("{}: {c:?} is no number", path.display()))).collect()).collect();
        Table { file: path.to_path_buf(), names, rows }
    }

    fn column(&self, name: &str) -> Vec<f64> {
        let j = self.names.iter().position(|n| n == name).unwrap_or_else(|| panic!("{}: no column {name}", self.file.display()));
        self.rows.iter().map(|r| r[j]).collect()
    }

    /// Same header and times; every value within `tolerance` · (1 + |reference|).
    fn assert_agrees(&self, reference: &Table, tolerance: f64) {
        assert_eq!(self.names, reference.names, "{} against {}", self.file.display(), reference.file.display());
        assert_eq!(self.rows.len(), reference.rows.len(), "rows of {} against {}", self.file.display(), reference.file.display());
        for (a, b) in self.rows.iter().zip(&reference.rows) {
            for (j, (x, y)) in a.iter().zip(b).enumerate() {
                assert!(
                    (x - y).abs() <= tolerance * (1.0 + y.abs()),
                    "{} at t = {}: {} = {x}, {} has {y} (tolerance {tolerance:e})",
                    self.file.display(),
                    a[0],
                    self.names[j],
                    reference.file.display()
                );
            }
        }
    }

    /// Every row against `exact(t)` (one value per column after time), within `tolerance`.
    fn assert_exact(&self, columns: &[&str], exact: impl Fn(f64) -> Vec<f64>, tolerance: f64) {
        let values: Vec<Vec<f64>> = columns.iter().map(|c| self.column(c)).collect();
        for (k, row) in self.rows.iter().enumerate() {
            let t = row[0];
            for (j, want) in exact(t).iter().enumerate() {
                let got = values[j][k];
                assert!((got - want).abs() <= tolerance * (1.0 + want.abs()), "{} at t = {t}: {} = {got}, exactly {want}", self.file.display(), columns[j]);
            }
        }
    }
}

/// The ball of bounce2.c: from 1 m at rest, g = 9.81, e = 0.7, resting below 0.1 m/s.
fn ball(t: f64) -> (f64, f64) {
    let g: f64 = 9.81;
    let first = (2.0 / g).sqrt();
    if t < first {
        return (1.0 - 0.5 * g * t * t, -g * t);
    }
    let (mut at, mut v) = (first, 0.7 * g * first);
    while v >= 0.1 {
        let flight = 2.0 * v / g;
        if t < at + flight {
            let s = t - at;
            return (v * s - 0.5 * g * s * s, v - g * s);
        }
        at += flight;
        v *= 0.7;
    }
    (0.0, 0.0)
}

#[test]
fn a_bouncing_ball_bounces_in_fmi_2_and_3() {
    for stem in ["bounce2", "bounce3"] {
        let path = fmu(stem);
        let located = morc(&path, &[], &format!("{stem}-morc"));
        // It stays above the floor (before events it fell to h = -43 m by t = 3 s).
        assert!(located.column("h").iter().all(|h| *h >= 0.0), "{stem}: the ball went through the floor");
        // Exact until the bounces come closer than the step (the ball rests from about 2.5 s).
        let flying = Table { rows: located.rows.iter().filter(|r| r[0] < 2.3).cloned().collect(), ..Table::read(&located.file) };
        flying.assert_exact(&["h", "v"], |t| vec![ball(t).0, ball(t).1], EXACT_AGREEMENT);
        located.assert_agrees(&fmpy_cvode(&path, &format!("{stem}-cvode")), CVODE_AGREEMENT);
        // Euler finds the floor at the end of a step, as FMPy's does.
        let euler = morc(&path, &MORC_EULER, &format!("{stem}-morc-euler"));
        euler.assert_agrees(&fmpy_euler(&path, &[], &format!("{stem}-euler")), EULER_AGREEMENT);
    }
}

#[test]
fn time_events_end_steps_exactly_on_the_stairs() {
    let path = fmu("stairs2");
    let period = 0.1234;
    // count rises at each multiple of the period; x integrates it.
    let exact = |t: f64| {
        let events: Vec<f64> = (1..).map(|j| j as f64 * period).take_while(|te| *te <= t + 1e-9).collect();
        vec![1.0 + events.len() as f64, t + events.iter().map(|te| t - te).sum::<f64>()]
    };
    let located = morc(&path, &[], "stairs2-morc");
    // Before time events, count stayed 1.
    located.assert_exact(&["count", "x"], exact, 1e-12);
    located.assert_agrees(&fmpy_cvode(&path, "stairs2-cvode"), CVODE_AGREEMENT);
    // Time events cut the step alike in both modes.
    let fmpy = fmpy_euler(&path, &[], "stairs2-euler");
    for (name, args) in [("stairs2-morc-euler", &MORC_EULER[..]), ("stairs2-morc-euler-locate", &MORC_EULER[..2])] {
        morc(&path, args, name).assert_agrees(&fmpy, EULER_AGREEMENT);
    }
}

#[test]
fn a_state_array_counts_its_elements_in_fmi_3() {
    let path = fmu("array3");
    // x[i] decays at rate k[i] = i + 1 from 1 and is set back to 1 at 0.5.
    let exact = |t: f64| {
        (1..=3)
            .map(|k| {
                let k = k as f64;
                (-k * (t % (std::f64::consts::LN_2 / k))).exp()
            })
            .collect()
    };
    // Before, the FMU refused a state vector of 1 ("expected nx=3").
    let located = morc(&path, &[], "array3-morc");
    located.assert_exact(&["y1", "y2", "y3"], exact, EXACT_AGREEMENT);
    located.assert_agrees(&fmpy_cvode(&path, "array3-cvode"), CVODE_AGREEMENT);
    morc(&path, &MORC_EULER, "array3-morc-euler").assert_agrees(&fmpy_euler(&path, &[], "array3-euler"), EULER_AGREEMENT);
}

#[test]
fn a_discrete_input_is_set_in_event_mode() {
    let path = fmu("dinput2");
    // n steps at 0.3 s and 0.6 s (discrete); u ramps (continuous, held over each step by morc and FMPy's Euler alike).
    let input = out("dinput2-in.csv");
    std::fs::write(&input, "\"time\",\"n\",\"u\"\n0,0,0\n0.3,0,1\n0.3,2,1\n0.6,2,-1\n0.6,-1,-1\n1,-1,0.5\n").unwrap();
    let input = input.to_str().unwrap();
    // Before, fmi2SetInteger in continuous-time mode returned fmi2Error and the run failed.
    let fmpy = fmpy_euler(&path, &["--input-file", input], "dinput2-euler");
    for (name, events) in [("dinput2-morc-euler-locate", &[][..]), ("dinput2-morc-euler", &["--param", "me_events=step_end"][..])] {
        let morc = morc(&path, &[&["--input", input, "--param", "me_solver=euler"], events].concat(), name);
        let (x, fmpy_x) = (morc.column("x"), fmpy.column("x"));
        assert_eq!(x.len(), fmpy_x.len());
        for (k, (a, b)) in x.iter().zip(&fmpy_x).enumerate() {
            assert!((a - b).abs() <= EULER_AGREEMENT * (1.0 + b.abs()), "{name} row {k}: x = {a}, FMPy {b}");
        }
        // The input for the step from t is set in event mode at t, at the start of that step: morc's
        // row t (the outputs the step before ended with) shows m before it, FMPy's (which reads the
        // input file ahead) after it. So morc's m is FMPy's one row later.
        let (m, fmpy_m) = (morc.column("m"), fmpy.column("m"));
        assert_eq!(m[1..], fmpy_m[..fmpy_m.len() - 1], "{name}: m against FMPy's one row later");
        assert!(m.contains(&2.0) && m.contains(&-1.0), "{name}: m = {m:?}");
    }
}

/// Stepping with events (bounces: located, states re-initialised, indicators re-read) allocates nothing.
#[test]
fn events_do_not_allocate() {
    let path = fmu("bounce2");
    for events in ["locate", "step_end"] {
        let mut c = morc_fmi::factory(&path).unwrap()().unwrap();
        c.set_parameter("me_events", &Value::String(events.into())).unwrap();
        c.configure().unwrap();
        let mut outputs = vec![Value::Real(0.0), Value::Real(0.0)];
        let data = AssemblyData::new();
        c.initialize(&InitContext { name: "ball", period: 1e-3, base_period: 1e-3, data: &data, thread: &Default::default(), base_latency: 0 }, &mut outputs)
            .unwrap();
        let mut step = |k: u64, outputs: &mut Vec<Value>| {
            let s = c.step(&StepContext { step: k, time: k as f64 * 1e-3, period: 1e-3 }, &[], outputs);
            assert!(matches!(s, Step::Continue), "{events}: step {k}: {s:?}");
        };
        step(0, &mut outputs);
        let mut bounces = 0;
        allocates_nothing(&format!("{events}: 2000 steps with bounces"), || {
            for k in 1..2000 {
                let v = outputs[1].real();
                step(k, &mut outputs);
                bounces += usize::from(v < 0.0 && outputs[1].real() > 0.0);
            }
        });
        assert!(bounces >= 3, "{events}: {bounces} bounces");
    }
}

/// A mode that does not exist is refused, naming the parameter and the modes there are.
#[test]
fn an_unknown_event_mode_is_refused() {
    let o = Command::new(env!("CARGO_BIN_EXE_morc"))
        .args(["fmu", "sim", fmu("bounce2").to_str().unwrap(), "--param", "me_events=fmpy"])
        .env("MORC_FMU_CACHE", scratch().join("cache"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(stderr.contains("bounce2.fmu: parameter me_events must be \"locate\" or \"step_end\", got \"fmpy\""), "{stderr}");
}

/// An FMU that asks to end (terminateSimulation from its event iteration) ends the run
/// normally: exit 0, the rows up to the step in which it asked (Euler bounces a few ms late).
#[test]
fn terminate_simulation_ends_the_run_normally() {
    let path = fmu("bounce2");
    let second_bounce = (2.0f64 / 9.81).sqrt() * (1.0 + 2.0 * 0.7);
    for (name, args) in [("bounce2-end", &[][..]), ("bounce2-end-euler", &MORC_EULER[..])] {
        let table = morc(&path, &[&["--param", "max_bounces=2"], args].concat(), name);
        let last = table.rows.last().unwrap()[0];
        assert!(last >= second_bounce && last < second_bounce + 0.01, "{name}: the last row is at t = {last}, the second bounce at {second_bounce}");
        assert!(table.column("v").last().unwrap() > &0.0, "{name}: it ended after the bounce");
    }
}
