//! Plots of recordings: a short run is recorded to HDF5, then plotted to PNG
//! and SVG from Rust and from the command line. The PNG must decode at the
//! size asked for; the SVG must carry the axis labels with units and one
//! polyline per plotted line. An unknown signal is an error naming the ones
//! there are.
//!
//! Needs a TrueType font: Debian's fonts-dejavu-core (or MORC_PLOT_FONT).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};

use morc_kernel::rt::RtPolicy;
use morc_kernel::AssemblyData;
use morc_kernel::AssemblySpec;
use morc_kernel::ClockKind;
use morc_kernel::IdealAxes;
use morc_kernel::*;
use morc_kernel::{Engine, EngineConfig, Outcome};
use morc_kernel::{Value, ValueType};
use morc_record::plot::{plot, PlotOptions};
use morc_record::{ComponentMetadata, RecordError, RecordedSignal, Recorder, RecordingMetadata};

const T: f64 = 0.001;
const AXES: usize = 6;
const STEPS: u64 = 3000;

/// A sine, a vector ramp, a counter and a flag: one of every recordable type.
struct Wave {
    info: ComponentInfo,
}

impl Component for Wave {
    morc_kernel::component_info!(info);
    fn initialize(&mut self, _: &InitContext, _: &mut [Value]) -> Result<(), String> {
        Ok(())
    }
    fn step(&mut self, ctx: &StepContext, _: &[Value], out: &mut [Value]) -> Step {
        let t = ctx.time;
        // A narrow spike at 1.5 s: decimation for drawing must keep it.
        let spike = if ctx.step == 1500 { 3.0 } else { 0.0 };
        out[0].set_real((2.0 * std::f64::consts::PI * 2.0 * t).sin() + spike);
        for (i, x) in out[1].as_mut_slice().iter_mut().enumerate() {
            *x = 0.1 * (i + 1) as f64 * t;
        }
        out[2] = Value::Integer((ctx.step / 500) as i64);
        out[3] = Value::Boolean((ctx.step / 700) % 2 == 1);
        Step::Continue
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("morc-plot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The recording all tests plot, made once.
fn recording() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let path = scratch("run.h5");
        let mut a = AssemblySpec::new("plot_test");
        a.duration = Some(STEPS as f64 * T);
        a.add(
            "wave",
            "wave",
            1,
            Arc::new(|| {
                let info = ComponentInfo::new("wave", "test signals")
                    .output(PortInfo::new("y", ValueType::Real).unit("m"))
                    .output(PortInfo::new("v", ValueType::Vector(AXES)).unit("rad"))
                    .output(PortInfo::new("n", ValueType::Integer))
                    .output(PortInfo::new("b", ValueType::Boolean));
                Ok(Box::new(Wave { info }) as Box<dyn Component>)
            }),
        );
        a.connect("wave.v", "robot.q_cmd");
        let v = ValueType::Vector(AXES);
        let signals = vec![
            RecordedSignal::new("robot.q", v, "rad", "joint positions"),
            RecordedSignal::new("wave.v", v, "rad", "commanded positions"),
            RecordedSignal::new("wave.y", ValueType::Real, "m", "a sine with a spike"),
            RecordedSignal::new("wave.n", ValueType::Integer, "", "a counter"),
            RecordedSignal::new("wave.b", ValueType::Boolean, "", "a flag"),
        ];
        a.add("rec", "recorder", 1, Arc::new(|| Err("replaced below".into())));
        for s in &signals {
            a.connect(&s.name, &format!("rec.{}", Recorder::input_port(&s.name)));
        }
        let meta = RecordingMetadata {
            path: path.clone(),
            robot: "sim_axes".into(),
            assembly: a.name.clone(),
            base_period: T,
            notes: String::new(),
            naming: Default::default(),
            components: a.components.iter().map(|c| ComponentMetadata { name: c.name.clone(), kind: c.kind.clone(), every: c.every, params: c.params.clone() }).collect(),
        };
        let rec = a.components.iter_mut().find(|c| c.name == "rec").unwrap();
        rec.factory = Arc::new(move || Ok(Box::new(Recorder::new(signals.clone(), meta.clone(), 1)) as Box<dyn Component>));

        let config = EngineConfig { period: T, clock: ClockKind::Virtual, rt: RtPolicy::default() };
        let mut engine = Engine::start(config, Box::new(IdealAxes::new(&[0.0; AXES], T, 1.0))).unwrap();
        let r = engine.run(&a, &AssemblyData::new()).unwrap();
        assert_eq!(r.outcome, Outcome::Finished("duration".into()), "{}", r.report());
        assert_eq!(r.data.get("rec.samples"), Some(&Value::Integer(STEPS as i64)));
        path
    })
}

/// (width, height) from a PNG file, decoding every pixel.
fn png_size(path: &Path) -> (u32, u32) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut pixels).unwrap();
    (frame.width, frame.height)
}

#[test]
fn png_has_the_size_of_its_panels() {
    let out = scratch("all.png");
    let options = PlotOptions::default();
    let summary = plot(recording(), &[], &out, &options).unwrap();
    let labels: Vec<&str> = summary.panels.iter().map(|p| p.0.as_str()).collect();
    assert_eq!(labels, ["robot.q [rad]", "wave.b", "wave.n", "wave.v [rad]", "wave.y [m]"], "one panel per signal, all by default");
    assert_eq!(summary.panels[0].1, ["q[1]", "q[2]", "q[3]", "q[4]", "q[5]", "q[6]"]);
    assert_eq!(png_size(&out), (summary.width, summary.height));
    assert_eq!(summary.width, options.width);
    assert!(summary.height > 5 * options.panel_height, "{}", summary.height);
    println!("look at {}", out.display());
    // A narrow one, to look at without scaling.
    let narrow = scratch("narrow.png");
    plot(recording(), &["robot.q", "wave.y"], &narrow, &PlotOptions { width: 700, panel_height: 220, ..Default::default() }).unwrap();
    println!("look at {}", narrow.display());
}

#[test]
fn svg_has_units_on_axes_and_one_polyline_per_line() {
    let out = scratch("some.svg");
    let summary = plot(recording(), &["robot.*", "wave.y"], &out, &PlotOptions::default()).unwrap();
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(svg.starts_with("<svg") || svg.contains("<svg"), "an SVG");
    for label in ["robot.q [rad]", "wave.y [m]", "time [s]", "q[6]", "plot_test"] {
        assert!(svg.contains(label), "the SVG shows '{label}'");
    }
    let lines: usize = summary.panels.iter().map(|p| p.1.len()).sum();
    assert_eq!(lines, AXES + 1);
    // Grid and axes are black polylines; data lines are coloured.
    let coloured = svg.split("<polyline").skip(1).filter(|p| !p.split('>').next().unwrap().contains("stroke=\"#000000\"")).count();
    assert_eq!(coloured, lines, "one polyline per line");
}

#[test]
fn shared_units_put_signals_in_one_panel() {
    let out = scratch("shared.svg");
    let summary = plot(recording(), &["robot.q", "wave.v"], &out, &PlotOptions { share_units: true, ..Default::default() }).unwrap();
    assert_eq!(summary.panels.len(), 1);
    assert_eq!(summary.panels[0].0, "robot.q, wave.v [rad]");
    assert_eq!(summary.panels[0].1.len(), 2 * AXES);
    assert!(summary.panels[0].1.contains(&"wave.v v[3]".to_string()), "{:?}", summary.panels[0].1);
}

#[test]
fn long_lines_are_decimated_without_losing_the_spike() {
    let out = scratch("spike.svg");
    plot(recording(), &["wave.y"], &out, &PlotOptions { width: 400, ..Default::default() }).unwrap();
    let svg = std::fs::read_to_string(&out).unwrap();
    let line = svg.split("<polyline").find(|p| p.split('>').next().unwrap().contains("stroke=\"#1F77B4\"")).unwrap();
    let points = line.split("points=\"").nth(1).unwrap().split('"').next().unwrap();
    let ys: Vec<f64> = points.split_whitespace().map(|p| p.split(',').nth(1).unwrap().parse().unwrap()).collect();
    assert!(ys.len() < STEPS as usize / 2, "{} points drawn for {STEPS} samples", ys.len());
    // The spike (3 m above a ±1 m sine) is the topmost point, far above the rest.
    let top = ys.iter().cloned().fold(f64::INFINITY, f64::min);
    let second = ys.iter().cloned().filter(|&y| y > top + 1.0).fold(f64::INFINITY, f64::min);
    assert!(second - top > 30.0, "the spike is drawn: top {top}, next {second}");
}

#[test]
fn unknown_signal_lists_the_available_ones() {
    // The variant says what failed; the message, what there is and what to do.
    let RecordError::Signals(e) = plot(recording(), &["robot.tau"], &scratch("none.png"), &PlotOptions::default()).unwrap_err() else { panic!("not a signal error") };
    assert!(e.contains("'robot.tau'"), "{e}");
    assert!(e.contains("robot.q, wave.b, wave.n, wave.v, wave.y"), "lists what there is: {e}");
    let RecordError::Plot(e) = plot(recording(), &[], &scratch("x.jpg"), &PlotOptions::default()).unwrap_err() else { panic!("not a plot error") };
    assert!(e.contains(".png or .svg"), "{e}");
    let RecordError::Read(e) = plot(Path::new("/nonexistent/run.h5"), &[], &scratch("y.png"), &PlotOptions::default()).unwrap_err() else { panic!("not a read error") };
    assert!(e.contains("no file /nonexistent/run.h5"), "{e}");
}

#[test]
fn command_line_plots_with_default_and_given_output() {
    let morc = env!("CARGO_BIN_EXE_morc");
    let copy = scratch("cli.h5");
    std::fs::copy(recording(), &copy).unwrap();
    let out = Command::new(morc).args(["rec", "plot"]).arg(&copy).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let default = copy.with_extension("png");
    assert!(default.exists(), "FILE with .png by default");
    png_size(&default);

    let svg = scratch("cli.svg");
    let out = Command::new(morc).arg("plot").arg(&copy).args(["wave.y", "-o"]).arg(&svg).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(std::fs::read_to_string(&svg).unwrap().contains("wave.y [m]"));

    let out = Command::new(morc).args(["rec", "plot"]).arg(&copy).arg("nope").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no signal 'nope'") && err.contains("robot.q"), "{err}");
}

#[test]
fn lua_plot_takes_a_path_or_a_run_result() {
    let config = EngineConfig { period: T, clock: ClockKind::Virtual, rt: RtPolicy::default() };
    let engine = Engine::start(config, Box::new(IdealAxes::new(&[0.0; AXES], T, 1.0))).unwrap();
    let lua = morc_lua::new_state().unwrap();
    morc_lua::install(&lua, engine).unwrap();
    let svg = scratch("lua.svg");
    lua.globals().set("recording", recording().display().to_string()).unwrap();
    lua.globals().set("svg", svg.display().to_string()).unwrap();
    let out: String = lua.load(r#"return plot({ recordings = { recording } }, { "wave.y" }, svg)"#).eval().unwrap();
    assert_eq!(out, svg.display().to_string());
    assert!(std::fs::read_to_string(&svg).unwrap().contains("wave.y [m]"));
    let png: String = lua.load("return plot(recording)").eval().unwrap();
    assert!(png.ends_with("run.png"), "{png}");
    let e = lua.load(r#"plot({ recordings = {} })"#).exec().unwrap_err().to_string();
    assert!(e.contains("recorded nothing"), "{e}");
    let e = lua.load(r#"plot(recording, { "nope" }, svg)"#).exec().unwrap_err().to_string();
    assert!(e.contains("no signal 'nope'") && e.contains("wave.y"), "{e}");
    // A picture is never drawn over an existing file (the user's, or an earlier plot), and a
    // plot that failed leaves no empty file behind (so the 'nope' plot's name is free again).
    let again: String = lua.load(r#"return plot(recording, { "robot.q" }, svg)"#).eval().unwrap();
    assert_eq!(again, svg.with_file_name("lua-001.svg").display().to_string());
    assert!(std::fs::read_to_string(&svg).unwrap().contains("wave.y [m]"), "the first picture is as it was");
}

#[test]
fn data_that_is_no_recording_plots_over_its_own_x_and_a_short_line_is_refused() {
    use morc_record::plot::{plot_data, Loaded, Signal};
    let x: Vec<f64> = (0..50).map(|k| k as f64).collect();
    let residual = |scale: f64| -> Vec<f64> { x.iter().map(|k| scale * (k * 0.3).sin()).collect() };
    let data = |columns: Vec<Vec<f64>>| Loaded {
        title: "calibration residuals".into(),
        time: x.clone(),
        signals: vec![Signal { name: "residual".into(), unit: "mm".into(), labels: vec!["before".into(), "after".into()], columns }],
    };
    let out = scratch("data.svg");
    let summary = plot_data(data(vec![residual(3.0), residual(0.05)]), "pose", &out, &PlotOptions::default()).unwrap();
    assert_eq!(summary.panels, vec![("residual [mm]".to_string(), vec!["before".to_string(), "after".to_string()])]);
    let svg = std::fs::read_to_string(&out).unwrap();
    // The SVG backend writes each text on a line of its own.
    assert!(svg.lines().any(|l| l.trim() == "pose") && !svg.contains("time [s]"), "the x axis is labelled as given");
    let e = plot_data(data(vec![residual(1.0), vec![0.0; 10]]), "pose", &scratch("short.svg"), &PlotOptions::default()).unwrap_err();
    assert!(e.to_string().contains("every line needs 50 values"), "{e}");
}

#[test]
fn a_lua_components_port_units_and_element_names_go_to_the_recording_and_the_plot() {
    // Issue 25, item 6: Lua ports declare units (as skill parameters do) and element names.
    let config = EngineConfig { period: T, clock: ClockKind::Virtual, rt: RtPolicy::default() };
    let engine = Engine::start(config, Box::new(IdealAxes::new(&[0.0; AXES], T, 1.0))).unwrap();
    let lua = morc_lua::new_state().unwrap();
    morc_lua::install(&lua, engine).unwrap();
    let (h5, svg) = (scratch("lua_units.h5"), scratch("lua_units.svg"));
    lua.globals().set("h5", h5.display().to_string()).unwrap();
    lua.globals().set("svg", svg.display().to_string()).unwrap();
    let panels: Vec<(String, Vec<String>)> = lua
        .load(
            r#"local push = morc.component {
  name = "push",
  outputs = { { "f[3]", unit = "N", elements = { "x", "y", "z" } },
              { "w[6]", unit = { "N", "N", "N", "N·m", "N·m", "N·m" }, elements = { "Fx", "Fy", "Fz", "Tx", "Ty", "Tz" } } },
  step = function(self, inp, out, t) out.f[1] = t; out.w[4] = 2 * t end,
}
local a = morc.assembly { "units", duration = 0.05 }
a:add("p", push)
a:record { "p.*", path = h5 }
assert(morc.engine:run(a).ok)
plot(h5, { "p.*" }, svg)
return true"#,
        )
        .eval::<bool>()
        .map(|_| morc_record::plot::plot(&h5, &["p.*"], &svg, &PlotOptions::default()).unwrap().panels)
        .unwrap();
    let xyz = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(panels, vec![("p.f [N]".to_string(), xyz(&["x", "y", "z"])), ("p.w [N]".to_string(), xyz(&["Fx", "Fy", "Fz"])), ("p.w [N·m]".to_string(), xyz(&["Tx", "Ty", "Tz"])),]);
    let svg_text = std::fs::read_to_string(&svg).unwrap();
    for label in ["p.f [N]", "p.w [N·m]", "Tz"] {
        assert!(svg_text.contains(label), "the SVG shows '{label}'");
    }
    // One unit per element, or the declaration names the port and what to give.
    let e = lua.load(r#"morc.component { name = "bad", outputs = { { "f[3]", unit = { "N", "N" } } }, step = function() end }"#).exec().unwrap_err().to_string();
    assert!(e.contains("port 'f': unit has 2 entries for its 3 elements"), "{e}");
}
