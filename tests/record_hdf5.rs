//! Recording to HDF5, checked with an independent reader: an assembly runs
//! with recorders on scalar, vector, integer and boolean signals (one
//! recorder slower and decimated); h5py then opens the files and the data
//! must equal, bit for bit, what in-memory probes saw. Also: a process
//! killed mid-recording leaves a valid file, and a full ring is counted in
//! the file rather than lost silently.
//!
//! Needs python3 with h5py and numpy (`pip install h5py numpy`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use morc_kernel::rt::RtPolicy;
use morc_kernel::AssemblyData;
use morc_kernel::AssemblySpec;
use morc_kernel::ClockKind;
use morc_kernel::IdealAxes;
use morc_kernel::*;
use morc_kernel::{Engine, EngineConfig, Outcome, RunResult};
use morc_kernel::{Value, ValueType};
use morc_record::{write_timing, ComponentMetadata, RecordedSignal, Recorder, RecorderTuning, RecordingMetadata, WriterTiming};
use serde_json::Value as Json;

const T: f64 = 0.001;
const AXES: usize = 6;

/// Test signals of every recordable type, as functions of the step.
struct Wave {
    info: ComponentInfo,
    /// Sleep this long each step (makes virtual time pass like wall time).
    sleep: Duration,
    /// Kill the whole process (SIGKILL) at this step: a crash.
    kill_at: Option<u64>,
}

impl Wave {
    fn new() -> Self {
        Wave {
            info: ComponentInfo::new("wave", "test signals")
                .output(PortInfo::new("y", ValueType::Real).unit("m"))
                .output(PortInfo::new("v", ValueType::Vector(AXES)).unit("rad"))
                .output(PortInfo::new("n", ValueType::Integer))
                .output(PortInfo::new("b", ValueType::Boolean))
                // A list parameter, as a path's moves.
                .param(ParamInfo::new("moves", Value::List(Vec::new()))),
            sleep: Duration::ZERO,
            kill_at: None,
        }
    }
    fn y(t: f64) -> f64 {
        (2.0 * std::f64::consts::PI * 3.0 * t).sin()
    }
    fn n(step: u64) -> i64 {
        3 * step as i64 - 7
    }
    fn b(step: u64) -> bool {
        step.is_multiple_of(3)
    }
}

impl Component for Wave {
    morc_kernel::component_info!(info);
    fn initialize(&mut self, _: &InitContext, _: &mut [Value]) -> Result<(), String> {
        Ok(())
    }
    fn step(&mut self, ctx: &StepContext, _: &[Value], out: &mut [Value]) -> Step {
        if Some(ctx.step) == self.kill_at {
            // SAFETY: kill() takes no pointers; SIGKILL to our own pid is the crash this test simulates.
            unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        }
        if !self.sleep.is_zero() {
            std::thread::sleep(self.sleep);
        }
        out[0].set_real(Wave::y(ctx.time));
        // A ramp the axes can follow (slower than their velocity limit).
        for (i, x) in out[1].as_mut_slice().iter_mut().enumerate() {
            *x = 0.1 * (i + 1) as f64 * ctx.time;
        }
        out[2] = Value::Integer(Wave::n(ctx.step));
        out[3] = Value::Boolean(Wave::b(ctx.step));
        Step::Continue
    }
}

fn signal(name: &str, ty: ValueType, unit: &str) -> RecordedSignal {
    RecordedSignal::new(name, ty, unit, &format!("test signal {name}"))
}

fn metadata(spec: &AssemblySpec, path: &Path) -> RecordingMetadata {
    RecordingMetadata {
        path: path.to_path_buf(),
        robot: "sim_axes".into(),
        assembly: spec.name.clone(),
        base_period: T,
        notes: "a test run — with ünïcode".into(),
        naming: Default::default(),
        components: spec.components.iter().map(|c| ComponentMetadata { name: c.name.clone(), kind: c.kind.clone(), every: c.every, params: c.params.clone() }).collect(),
    }
}

/// Adds a recorder of `signals` and connects them. Call after every other
/// component is in: the file describes the assembly as it is then.
fn add_recorder(spec: &mut AssemblySpec, name: &str, every: u32, decimation: u32, signals: Vec<RecordedSignal>, path: &Path, tuning: RecorderTuning) {
    spec.add(name, "recorder", every, Arc::new(|| Err("replaced below".into())));
    for s in &signals {
        spec.connect(&s.name, &format!("{name}.{}", Recorder::input_port(&s.name)));
    }
    let meta = metadata(spec, path);
    let recorder = spec.components.iter_mut().find(|c| c.name == name).unwrap();
    recorder.factory = Arc::new(move || Ok(Box::new(Recorder::new(signals.clone(), meta.clone(), decimation).with_tuning(tuning.clone())) as Box<dyn Component>));
}

fn wave(spec: &mut AssemblySpec, make: fn() -> Wave) {
    spec.add("wave", "wave", 1, Arc::new(move || Ok(Box::new(make()) as Box<dyn Component>)));
    spec.connect("wave.v", "robot.q_cmd");
}

fn engine() -> Engine {
    let config = EngineConfig { period: T, clock: ClockKind::Virtual, rt: RtPolicy::default() };
    Engine::start(config, Box::new(IdealAxes::new(&[0.0; AXES], T, 1.0))).unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("morc-record-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// A child process of these tests inherits no descriptor of the test
/// process: tests run in parallel, and a child forked while another test's
/// recording is open would inherit its descriptor (morc marks it
/// close-on-exec only just after HDF5 opens it) and keep HDF5's lock on it
/// for the child's life — long after that test's run closed the file, when
/// its own h5py is refused the file.
fn isolated(mut cmd: Command) -> Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: only async-signal-safe system calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            // Every descriptor from 3 up close-on-exec (std's own exec-error pipe stays usable).
            if libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, libc::CLOSE_RANGE_CLOEXEC) != 0 {
                for fd in 3..4096 {
                    libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
                }
            }
            Ok(())
        });
    }
    cmd
}

/// What h5py finds in `path`, via tests/python/check_recording.py.
fn h5py(path: &Path) -> Json {
    let python = std::env::var("MORC_PYTHON").unwrap_or_else(|_| "python3".into());
    let probe = isolated(Command::new(&python)).args(["-c", "import h5py, numpy"]).output();
    match probe {
        Err(e) => panic!("this test reads recordings with Python's h5py, but '{python}' cannot run ({e}): install python3, then `pip install h5py numpy`"),
        Ok(o) if !o.status.success() => panic!("this test reads recordings with Python's h5py: `pip install h5py numpy` ({python}: {})", String::from_utf8_lossy(&o.stderr).trim()),
        Ok(_) => {}
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/check_recording.py");
    let out = isolated(Command::new(&python)).arg(&script).arg(path).output().unwrap();
    assert!(out.status.success(), "h5py could not read {}: {}", path.display(), String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Asserts that nothing in this process holds `path` open for HDF5: its
/// lock (an exclusive flock, which conflicts across descriptors, even in
/// one process) is free the moment the run has returned.
fn assert_closed(path: &Path) {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(path).unwrap();
    // SAFETY: flock on a descriptor we own; released when `f` closes.
    let r = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    assert_eq!(r, 0, "{} is still locked (open in HDF5) after its run returned: {}", path.display(), std::io::Error::last_os_error());
}

fn floats(ds: &Json) -> Vec<f64> {
    ds["values"].as_array().unwrap().iter().map(|b| f64::from_bits(b.as_u64().unwrap())).collect()
}
fn ints(ds: &Json) -> Vec<i64> {
    ds["values"].as_array().unwrap().iter().map(|b| b.as_i64().unwrap()).collect()
}
fn shape(ds: &Json) -> Vec<u64> {
    ds["shape"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect()
}
fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn probe_samples(r: &RunResult, probe: &str) -> Vec<f64> {
    match r.data.get(&format!("{probe}.u")) {
        Some(Value::Vector(v)) => v.clone(),
        other => panic!("no samples for {probe}: {other:?}"),
    }
}

#[test]
fn recordings_hold_exactly_what_ran() {
    let fast = scratch("fast.h5");
    let slow = scratch("slow.h5");
    let mut a = AssemblySpec::new("record_test");
    a.duration = Some(2.0);
    wave(&mut a, Wave::new);
    // The recording keeps a list parameter as its text.
    a.components[0].params.push(("moves".into(), Value::List(vec![Value::record([("kind", Value::String("ptp".into())), ("blend", Value::Real(0.01))])])));
    a.add_native("p_q", "probe", 1, &[("n", Value::Integer(AXES as i64))]);
    a.add_native("p_y", "probe", 1, &[]);
    a.connect("robot.q", "p_q.u").connect("wave.y", "p_y.u");
    a.add_native("g", "gain", 1, &[("n", Value::Integer(AXES as i64)), ("k", Value::Vector(vec![2.0; AXES]))]);
    a.connect("robot.q", "g.u");
    let v6 = ValueType::Vector(AXES);
    // Slower and decimated: every 2nd base tick, every 2nd of its steps.
    add_recorder(&mut a, "rec_slow", 2, 2, vec![signal("robot.q", v6, "rad"), signal("wave.y", ValueType::Real, "m")], &slow, RecorderTuning::default());
    add_recorder(
        &mut a,
        "rec",
        1,
        1,
        vec![signal("robot.q", v6, "rad"), signal("wave.y", ValueType::Real, "m"), signal("wave.n", ValueType::Integer, ""), signal("wave.b", ValueType::Boolean, ""), signal("g.y", v6, "rad")],
        &fast,
        RecorderTuning::default(),
    );

    let mut engine = engine();
    let r = engine.run(&a, &AssemblyData::new()).unwrap();
    assert_closed(&fast);
    assert_closed(&slow);
    assert_eq!(r.outcome, Outcome::Finished("duration".into()), "{}", r.report());
    assert_eq!(r.ticks, 2000);
    assert_eq!(r.data.get("rec.samples"), Some(&Value::Integer(2000)));
    assert_eq!(r.data.get("rec.dropped"), Some(&Value::Integer(0)));
    assert_eq!(r.data.get("rec.path"), Some(&Value::String(fast.display().to_string())));
    assert_eq!(r.data.get("rec_slow.samples"), Some(&Value::Integer(500)));
    assert_eq!(r.data.get("rec.error"), None);
    write_timing(&fast, &r.components).unwrap();

    let q = probe_samples(&r, "p_q");
    let y = probe_samples(&r, "p_y");
    assert_eq!(q.len(), 2000 * AXES);
    assert!(q[1999 * AXES + 5] > 1.0, "the axes moved");

    // The full-rate file.
    let f = h5py(&fast);
    let attrs = &f["attrs"];
    assert_eq!(attrs["morc_version"], env!("CARGO_PKG_VERSION"));
    let commit = attrs["git_commit"].as_str().unwrap();
    assert!(commit == "unknown" || (commit.len() == 40 && commit.chars().all(|c| c.is_ascii_hexdigit())), "{commit}");
    let utc = attrs["utc_start"].as_str().unwrap();
    assert!(utc.len() == 24 && utc.ends_with('Z') && utc.as_bytes()[10] == b'T', "ISO 8601: {utc}");
    assert_eq!(attrs["robot"], "sim_axes");
    assert_eq!(attrs["assembly"], "record_test");
    assert_eq!(attrs["notes"], "a test run — with ünïcode");
    assert_eq!(attrs["base_period"].as_f64(), Some(T));
    assert_eq!(attrs["sample_period"].as_f64(), Some(T));
    assert_eq!(attrs["samples"], 2000);
    assert_eq!(attrs["dropped_samples"], 0);
    assert_eq!(attrs["complete"], 1);

    let ds = &f["datasets"];
    let time = &ds["time"];
    assert_eq!(shape(time), [2000]);
    assert_eq!(time["attrs"]["unit"], "s");
    assert_eq!(bits(&floats(time)), bits(&(0..2000).map(|i| i as f64 * T).collect::<Vec<_>>()));

    let rq = &ds["robot.q"];
    assert_eq!(shape(rq), [2000, AXES as u64]);
    assert_eq!(rq["dtype"], "float64");
    assert_eq!(rq["maxshape"], serde_json::json!([-1, AXES]), "resizable along time");
    assert!(rq["chunks"].is_array(), "chunked");
    assert_eq!(rq["compression"], Json::Null, "unfiltered: a crash cannot leave a half-rewritten compressed chunk");
    assert_eq!(rq["attrs"]["unit"], "rad");
    assert_eq!(rq["attrs"]["source"], "robot.q");
    assert_eq!(rq["attrs"]["description"], "test signal robot.q");
    assert_eq!(rq["attrs"]["sample_period"].as_f64(), Some(T));
    assert_eq!(bits(&floats(rq)), bits(&q), "robot.q as the probe saw it");
    let gy = floats(&ds["g.y"]);
    assert_eq!(bits(&gy), bits(&q.iter().map(|x| 2.0 * x).collect::<Vec<_>>()), "g.y = 2·robot.q");

    let wy = &ds["wave.y"];
    assert_eq!(shape(wy), [2000]);
    assert_eq!(bits(&floats(wy)), bits(&y));
    assert_eq!(bits(&y[..5]), bits(&(0..5).map(|i| Wave::y(i as f64 * T)).collect::<Vec<_>>()));

    let wn = &ds["wave.n"];
    assert_eq!(wn["dtype"], "int64");
    assert_eq!(ints(wn), (0..2000).map(Wave::n).collect::<Vec<_>>());
    let wb = &ds["wave.b"];
    assert_eq!(wb["dtype"], "uint8");
    assert_eq!(ints(wb), (0..2000).map(|s| i64::from(Wave::b(s))).collect::<Vec<_>>());

    // The assembly, described.
    let groups = &f["groups"];
    assert_eq!(groups["assembly"]["name"], "record_test");
    assert_eq!(groups["assembly/wave"]["kind"], "wave");
    assert_eq!(groups["assembly/rec_slow"]["every"], 2);
    assert_eq!(groups["assembly/rec_slow"]["sample_time"].as_f64(), Some(2.0 * T));
    assert_eq!(groups["assembly/g/parameters"]["n"], AXES);
    assert_eq!(groups["assembly/g/parameters"]["k"], serde_json::json!(vec![2.0; AXES]));
    assert_eq!(groups["assembly/p_q/parameters"]["n"], AXES);
    assert_eq!(groups["assembly/wave/parameters"]["moves"], r#"[{ kind = "ptp", blend = 0.01 }]"#);
    // Timing, added after the run.
    let tw = &groups["timing/wave"];
    assert_eq!(tw["kind"], "wave");
    assert_eq!(tw["count"], 2000);
    assert_eq!(tw["overruns"], 0);
    let (p50, p99, max) = (tw["p50"].as_f64().unwrap(), tw["p99"].as_f64().unwrap(), tw["max"].as_f64().unwrap());
    assert!(0.0 < p50 && p50 <= p99 && p99 <= max && max < 1.0, "seconds: {tw}");
    assert!(groups["timing/rec_slow"].is_object());

    // The slow, decimated file: robot.q as it was at base ticks 0, 4, 8, …
    let s = h5py(&slow);
    assert_eq!(s["attrs"]["samples"], 500);
    assert_eq!(s["attrs"]["sample_period"].as_f64(), Some(4.0 * T));
    assert_eq!(s["attrs"]["decimation"], 2);
    let sd = &s["datasets"];
    assert_eq!(sd["robot.q"]["attrs"]["sample_period"].as_f64(), Some(4.0 * T));
    assert_eq!(bits(&floats(&sd["time"])), bits(&(0..500).map(|j| (2 * j) as f64 * (2.0 * T)).collect::<Vec<_>>()));
    let expected_q: Vec<f64> = (0..500).flat_map(|j| q[4 * j * AXES..(4 * j + 1) * AXES].to_vec()).collect();
    assert_eq!(shape(&sd["robot.q"]), [500, AXES as u64]);
    assert_eq!(bits(&floats(&sd["robot.q"])), bits(&expected_q));
    let expected_y: Vec<f64> = (0..500).map(|j| y[4 * j]).collect();
    assert_eq!(bits(&floats(&sd["wave.y"])), bits(&expected_y));

    // And morc's own reader.
    let info = morc_record::read::info(&fast).unwrap();
    println!("{info}");
    assert!(info.contains("robot.q") && info.contains("[2000, 6]") && info.contains("rad"), "{info}");
    let _ = std::fs::remove_file(&fast);
    let _ = std::fs::remove_file(&slow);
    let _ = std::fs::remove_dir(fast.parent().unwrap()); // once the last test's file is gone
}

const CHILD: &str = "MORC_RECORD_CRASH_CHILD";

/// Records in real time (1 ms a step) into the file named by the
/// environment, then kills its own process with SIGKILL after 2 s. Runs
/// only as the child of `a_killed_process_leaves_a_valid_file`.
#[test]
fn crash_child() {
    let Ok(path) = std::env::var(CHILD) else {
        return;
    };
    let mut a = AssemblySpec::new("crash");
    a.duration = Some(10.0);
    wave(&mut a, || {
        let mut w = Wave::new();
        w.sleep = Duration::from_millis(1);
        w.kill_at = Some(2000);
        w
    });
    add_recorder(&mut a, "rec", 1, 1, vec![signal("robot.q", ValueType::Vector(AXES), "rad"), signal("wave.y", ValueType::Real, "m")], Path::new(&path), RecorderTuning::default());
    let _ = engine().run(&a, &AssemblyData::new());
    unreachable!("the process was to be killed at step 2000");
}

#[test]
fn a_killed_process_leaves_a_valid_file() {
    let path = scratch("crash.h5");
    let out = isolated(Command::new(std::env::current_exe().unwrap()))
        .args(["crash_child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, &path)
        .output()
        .unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(libc::SIGKILL), "the child died by SIGKILL: {out:?}");
    // Flushed every 0.5 s of data: at least the first two flushes are in.
    let f = h5py(&path);
    let n = f["attrs"]["samples"].as_u64().unwrap() as usize;
    assert!(n >= 1000, "{n} samples survived; expected at least those up to the flush at 1.0 s of the 2.0 s recorded");
    assert_eq!(f["attrs"]["complete"], 0, "the file says it was not closed");
    let ds = &f["datasets"];
    let len = shape(&ds["time"])[0] as usize;
    assert!(len >= n, "the datasets hold at least the flushed samples ({len} < {n})");
    assert_eq!(shape(&ds["robot.q"]), [len as u64, AXES as u64]);
    let time = floats(&ds["time"]);
    assert_eq!(bits(&time), bits(&(0..len).map(|i| i as f64 * T).collect::<Vec<_>>()));
    let y = floats(&ds["wave.y"]);
    assert_eq!(bits(&y), bits(&time.iter().map(|&t| Wave::y(t)).collect::<Vec<_>>()));
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_dir(path.parent().unwrap()); // once the last test's file is gone
}

#[test]
fn a_full_ring_is_counted_in_the_file() {
    let path = scratch("overflow.h5");
    let mut a = AssemblySpec::new("overflow");
    a.duration = Some(2.0);
    wave(&mut a, Wave::new);
    // 16 rows, looked at every 200 ms: the writer cannot keep up.
    let tuning = RecorderTuning { ring_rows: Some(16), writer: WriterTiming { poll_interval: Duration::from_millis(200), flush_interval: 0.5 } };
    add_recorder(&mut a, "rec", 1, 1, vec![signal("wave.y", ValueType::Real, "m")], &path, tuning);
    let r = engine().run(&a, &AssemblyData::new()).unwrap();
    assert_closed(&path);
    assert_eq!(r.outcome, Outcome::Finished("duration".into()));
    let samples = r.data.get("rec.samples").unwrap().integer();
    let dropped = r.data.get("rec.dropped").unwrap().integer();
    assert!(dropped > 0, "rows were dropped ({samples} kept)");
    assert_eq!(samples + dropped, 2000, "every step is either kept or counted");
    let f = h5py(&path);
    assert_eq!(f["attrs"]["dropped_samples"], dropped);
    assert_eq!(f["attrs"]["samples"], samples);
    assert_eq!(shape(&f["datasets"]["wave.y"]), [samples as u64]);
    // What was kept is right, with its true time stamps.
    let time = floats(&f["datasets"]["time"]);
    let y = floats(&f["datasets"]["wave.y"]);
    assert!(time.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(bits(&y), bits(&time.iter().map(|&t| Wave::y(t)).collect::<Vec<_>>()));
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_dir(path.parent().unwrap()); // once the last test's file is gone
}

#[test]
fn errors_say_what_and_where() {
    // An unwritable place.
    let mut a = AssemblySpec::new("bad_path");
    a.duration = Some(0.01);
    wave(&mut a, Wave::new);
    add_recorder(&mut a, "rec", 1, 1, vec![signal("wave.y", ValueType::Real, "m")], Path::new("/proc/morc-cannot-write/x.h5"), RecorderTuning::default());
    let e = match engine().run(&a, &AssemblyData::new()) {
        Err(e) => e.to_string(),
        Ok(r) => format!("{:?}", r.outcome),
    };
    println!("{e}");
    assert!(e.contains("cannot create") && e.contains("/proc/morc-cannot-write") && e.contains("choose another --record DIR"), "{e}");

    // A string signal.
    let mut r = Recorder::new(vec![signal("x.s", ValueType::String, "")], RecordingMetadata { path: scratch("s.h5"), ..Default::default() }, 1);
    let e = r.configure().unwrap_err();
    assert!(e.contains("string signals can't be recorded yet") && e.contains("x.s"), "{e}");
}
