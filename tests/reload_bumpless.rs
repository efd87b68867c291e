//! A controller reloaded on a moving arm is bumpless (issue 26, item 5): a robot program on the
//! simulated KR 16-2 (virtual clock) drives the arm through a Lua integrator and a Lua low-pass
//! filter, rewrites both modules on disk mid-motion, as a user edits them, and swaps the new code
//! in. The commands go on without a jump, every joint keeps to its limits, and the recordings'
//! time goes on across the swap. New code whose first command would jerk the arm faults instead,
//! and the robot holds.
//!
//! Deterministic on a loaded machine: the program swaps once the run's virtual time has passed
//! 0.5 s (its exact tick depends on the machine, so every check holds whichever tick it is: the
//! motion never ends and never nears the start).

use std::path::{Path, PathBuf};

use morc_kernel::EngineConfig;

/// The integrator: q = q0 + ∫v dt, forward Euler with the input of each step; keeps the input.
const INTEGRATOR_V1: &str = r#"
return morc.component { name = "integ", inputs = { "v[6]" }, outputs = { "q[6]" }, params = { q0 = { 0, 0, 0, 0, 0, 0 } },
  init = function(self, out)
    self.q, self.v = {}, {}
    for i = 1, 6 do self.q[i], self.v[i] = self.q0[i], 0 end
    for i = 1, 6 do out.q[i] = self.q[i] end
  end,
  step = function(self, inp, out)
    for i = 1, 6 do
      self.q[i] = self.q[i] + self.period * inp.v[i]
      self.v[i] = inp.v[i]
      out.q[i] = self.q[i]
    end
  end }
"#;

/// Edited: trapezoidal, using the input kept by the old code (no migrate: the state carries over).
const INTEGRATOR_V2: &str = r#"
return morc.component { name = "integ", inputs = { "v[6]" }, outputs = { "q[6]" }, params = { q0 = { 0, 0, 0, 0, 0, 0 } },
  init = function(self, out)
    self.q, self.v = {}, {}
    for i = 1, 6 do self.q[i], self.v[i] = self.q0[i], 0 end
  end,
  step = function(self, inp, out)
    for i = 1, 6 do
      self.q[i] = self.q[i] + self.period * 0.5 * (inp.v[i] + self.v[i])
      self.v[i] = inp.v[i]
      out.q[i] = self.q[i]
    end
  end }
"#;

/// The low-pass filter: first order, corner fc, starting from its first input.
const LOWPASS_V1: &str = r#"
return morc.component { name = "lowp", inputs = { "u[6]" }, outputs = { "y[6]" }, params = { fc = 5 },
  step = function(self, inp, out)
    local a = 1 - math.exp(-2 * math.pi * self.fc * self.period)
    if self.y == nil then
      self.y = {}
      for i = 1, 6 do self.y[i] = inp.u[i] end
    end
    for i = 1, 6 do
      self.y[i] = self.y[i] + a * (inp.u[i] - self.y[i])
      out.y[i] = self.y[i]
    end
  end }
"#;

/// Edited: the state renamed (y → state), started at zero; migrate carries the old y over.
const LOWPASS_V2: &str = r#"
local function corner(self) return 1 - math.exp(-2 * math.pi * self.fc * self.period) end
return morc.component { name = "lowp", inputs = { "u[6]" }, outputs = { "y[6]" }, params = { fc = 5 },
  init = function(self) self.state = { 0, 0, 0, 0, 0, 0 } end,
  migrate = function(self, old)
    for i = 1, 6 do self.state[i] = old.y[i] end
  end,
  step = function(self, inp, out)
    local a = corner(self)
    for i = 1, 6 do
      self.state[i] = self.state[i] + a * (inp.u[i] - self.state[i])
      out.y[i] = self.state[i]
    end
  end }
"#;

/// Edited badly: the state renamed and started at zero, and no migrate (the old `y` is carried
/// over, but nothing reads it): its first command jumps towards 0.
const LOWPASS_BAD: &str = r#"
return morc.component { name = "lowp", inputs = { "u[6]" }, outputs = { "y[6]" }, params = { fc = 5 },
  init = function(self) self.state = { 0, 0, 0, 0, 0, 0 } end,
  step = function(self, inp, out)
    local a = 1 - math.exp(-2 * math.pi * self.fc * self.period)
    for i = 1, 6 do
      self.state[i] = self.state[i] + a * (inp.u[i] - self.state[i])
      out.y[i] = self.state[i]
    end
  end }
"#;

/// The program: the arm at its start, a velocity reference (a sine per joint) integrated and
/// filtered into the position command, recorded; edits the modules once the run has passed
/// 0.5 s and swaps; returns what the test checks.
const PROGRAM: &str = r#"
local dir, lowpass_new, integrator_new, bus = ...
package.path = dir .. "/?.lua;" .. package.path
morc.record_dir = dir
local kr16 = require "robots.kr16"
local start = { 10, -80, 80, 5, 40, 5 }
morc.use_robot(kr16, { q0 = start, bus = bus })
local q0 = {}
for i = 1, 6 do q0[i] = math.rad(start[i]) end
local a = morc.assembly "bumpless"
-- 0.3 rad/s peak at 0.5 Hz from rest: up to 0.19 rad from the start, well inside every limit.
a:add("vref", "sine", { n = 6, amplitude = 0.3, frequency = 0.5 })
a:add("integ", require "integ", { q0 = q0 })
a:add("lp", require "lowp", { fc = 5 })
a:connect("vref.y", "integ.v")
a:connect("integ.q", "lp.u")
a:connect("lp.y", "robot.q_cmd")
a:record { "lp.y", "robot.q", "robot.qd" }
local engine = morc.engine
local h = engine:start(a)
-- Mid-motion for sure: the run's virtual time is past 0.5 s (virtual time runs on meanwhile).
while engine:time() < 0.5 do end
local function write(name, code)
  local f = assert(io.open(dir .. "/" .. name .. ".lua", "w"))
  f:write(code)
  f:close()
end
write("lowp", lowpass_new)
write("integ", integrator_new)
local ok, old, h2 = pcall(engine.swap, engine, a, { duration = 0.3 })
if not ok then
  return { refused = tostring(old), time = engine:time() }
end
local new = h2:wait()
return { old_ok = old.ok, old_reason = old.reason, old_file = old.recordings[1], old_t_end = old.t_end,
         new_ok = new.ok, new_reason = new.reason, new_file = new.recordings[1], new_t_start = new.t_start }
"#;

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("reload-bumpless-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("integ.lua"), INTEGRATOR_V1).unwrap();
    std::fs::write(dir.join("lowp.lua"), LOWPASS_V1).unwrap();
    dir
}

/// Runs the program with the edited low-pass `lowpass`; its result table.
fn run(dir: &Path, lowpass: &str) -> (mlua::Lua, mlua::Table) {
    run_on(dir, lowpass, None)
}

/// As [`run`], the robot on `bus` ("sim": its drives through the real master) when given.
fn run_on(dir: &Path, lowpass: &str, bus: Option<&str>) -> (mlua::Lua, mlua::Table) {
    let lua = morc_lua::new_state().unwrap();
    morc_lua::install(&lua, morc_lua::start_engine(EngineConfig::default()).unwrap()).unwrap();
    let t: mlua::Table = lua.load(PROGRAM).set_name("@reload_program.lua").call((dir.display().to_string(), lowpass, INTEGRATOR_V2, bus)).unwrap_or_else(|e| panic!("{e}"));
    (lua, t)
}

/// A recording's time and a signal (rows of `width`).
fn read(path: &str, signal: &str) -> (Vec<f64>, Vec<Vec<f64>>) {
    let p = Path::new(path);
    let f = morc_record::read::open(p).unwrap();
    let time = morc_record::read::read_reals(&f.dataset("time").unwrap(), p).unwrap();
    let ds = f.dataset(signal).unwrap_or_else(|e| panic!("{path}: no '{signal}' ({e}): {:?}", f.member_names()));
    let width = ds.shape().get(1).copied().unwrap_or(1);
    let flat = morc_record::read::read_reals(&ds, p).unwrap();
    (time, flat.chunks(width).map(<[f64]>::to_vec).collect())
}

/// The KR 16-2's joint velocity and acceleration limits (rad/s, rad/s²).
fn limits() -> (Vec<f64>, Vec<f64>) {
    let lua = morc_lua::new_state().unwrap();
    morc_lua::install(&lua, morc_lua::start_engine(EngineConfig::default()).unwrap()).unwrap();
    let ud: mlua::AnyUserData = lua.load("return require 'robots.kr16'").eval().unwrap();
    let robot = ud.borrow::<morc_lua::LuaRobot>().unwrap().0.clone();
    (robot.joints.iter().map(|j| j.limits.velocity).collect(), robot.joints.iter().map(|j| j.limits.acceleration).collect())
}

#[test]
fn reloading_a_running_lowpass_and_integrator_is_bumpless() {
    let dir = scratch("ok");
    let (_lua, r) = run(&dir, LOWPASS_V2);
    let get = |k: &str| r.get::<mlua::Value>(k).unwrap();
    assert!(r.get::<Option<String>>("refused").unwrap().is_none(), "the swap was refused: {:?}", get("refused"));
    assert!(r.get::<bool>("old_ok").unwrap(), "{:?}", get("old_reason"));
    assert!(r.get::<bool>("new_ok").unwrap(), "{:?}", get("new_reason"));
    let (old_file, new_file): (String, String) = (r.get("old_file").unwrap(), r.get("new_file").unwrap());
    let (t_old, y_old) = read(&old_file, "lp.y");
    let (t_new, y_new) = read(&new_file, "lp.y");
    let period = 0.001;
    assert!(t_old.len() > 500 && t_new.len() == 300, "{} samples before, {} after", t_old.len(), t_new.len());

    // Time goes on: the new recording starts one period after the old one's last sample.
    let (last, first) = (*t_old.last().unwrap(), t_new[0]);
    assert!((first - last - period).abs() < 1e-9, "time jumps at the swap: {last} s, then {first} s");
    assert!((r.get::<f64>("old_t_end").unwrap() - first).abs() < 1e-9 && (r.get::<f64>("new_t_start").unwrap() - first).abs() < 1e-9);
    for w in t_old.windows(2).chain(t_new.windows(2)) {
        assert!((w[1] - w[0] - period).abs() < 1e-9, "a gap in the recorded time: {} → {}", w[0], w[1]);
    }

    // The command at the swap changes by no more than a normal step does around it.
    let step = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
    let n = y_old.len();
    // The steps of the 100 ticks on either side (the motion speeds up or slows down through them).
    let before = (n - 100..n).map(|k| step(&y_old[k], &y_old[k - 1]));
    let normal = before.chain((1..100).map(|k| step(&y_new[k], &y_new[k - 1]))).fold(0.0, f64::max);
    let at_swap = step(&y_new[0], &y_old[n - 1]);
    eprintln!("swap at t = {first:.3} s: the command moved {at_swap:.3e} rad (normal steps up to {normal:.3e} rad)");
    assert!(at_swap <= 1.05 * normal, "the command jumped {at_swap} rad at the swap; a normal step is at most {normal} rad");

    // Every joint within its limits throughout: measured velocities, and the commands' velocity
    // and acceleration, one period apart (the joints' own figures).
    let (v_max, a_max) = limits();
    let (_, qd_old) = read(&old_file, "robot.qd");
    let (_, qd_new) = read(&new_file, "robot.qd");
    for qd in qd_old.iter().chain(&qd_new) {
        for (j, v) in qd.iter().enumerate() {
            assert!(v.abs() <= v_max[j], "A{} at {v} rad/s, past its limit {}", j + 1, v_max[j]);
        }
    }
    let commands: Vec<&Vec<f64>> = y_old.iter().chain(&y_new).collect();
    for k in 2..commands.len() {
        for j in 0..6 {
            let v = (commands[k][j] - commands[k - 1][j]) / period;
            let a = (v - (commands[k - 1][j] - commands[k - 2][j]) / period) / period;
            assert!(v.abs() <= v_max[j] && a.abs() <= a_max[j], "command {k}: A{} at {v} rad/s, {a} rad/s²", j + 1);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn new_code_whose_first_command_jumps_faults_and_the_robot_holds() {
    let dir = scratch("bad");
    let (lua, r) = run(&dir, LOWPASS_BAD);
    let refused: String = r.get::<Option<String>>("refused").unwrap().expect("the swap must fault");
    eprintln!("{refused}");
    for says in ["swap: the first command of the new assembly's component 'lp' (output 'y') to robot.q_cmd moves A", "past its limit", "the robot holds"] {
        assert!(refused.contains(says), "'{says}' missing from: {refused}");
    }
    // The arm held: its last recorded state, then the robot as it stands now, within its limits.
    let (v_max, _) = limits();
    let recordings = std::fs::read_dir(&dir).unwrap().filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "h5")).collect::<Vec<_>>();
    assert!(!recordings.is_empty(), "the old run's recording is in {}", dir.display());
    for file in &recordings {
        let (_, qd) = read(file.to_str().unwrap(), "robot.qd");
        for v in &qd {
            for (j, x) in v.iter().enumerate() {
                assert!(x.abs() <= v_max[j], "{}: A{} at {x} rad/s, past its limit {}", file.display(), j + 1, v_max[j]);
            }
        }
    }
    // Nothing runs any more, and the robot stands.
    let status: String = lua.load("local ok, e = pcall(morc.engine.swap, morc.engine); return tostring(e)").eval().unwrap();
    assert!(status.contains("none is running"), "{status}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// On the drives (the virtual segment through the real master) the same swap is refused the
/// same way: the bus checks the first position commands against the last that went out.
#[test]
fn on_the_bus_new_code_whose_first_command_jumps_faults_too() {
    let dir = scratch("bad-bus");
    let (_lua, r) = run_on(&dir, LOWPASS_BAD, Some("sim"));
    let refused: String = r.get::<Option<String>>("refused").unwrap().expect("the swap on the bus must fault");
    eprintln!("{refused}");
    for says in ["the first command of the new assembly's component 'lp' (output 'y')", "past its limit", "the robot holds"] {
        assert!(refused.contains(says), "'{says}' missing from: {refused}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
