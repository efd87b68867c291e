//! `morc bench …`: measurements printed beside their floors, in one run.
//!
//! - `engine`: wake-up latency and per-component cost of the Engine at 1, 4
//!   and 10 kHz with 1, 8 and 32 native components on the wall clock, beside
//!   a bare `clock_nanosleep` loop with the same scheduling (latency floor) and
//!   the same components stepped in a plain loop (cost floor); and the cost of
//!   handing a task to an Updater thread and back.
//! - `lua`: what a Lua component costs per step and the jitter it brings,
//!   beside the same block written natively; and the controllers library's Cartesian velocity
//!   law and elastic feed-forward on a 6-DoF arm in Lua and natively.
//! - `live`: what publishing to the live view costs on the real-time path: 50 signals (6-vectors)
//!   tapped every tick at 1 kHz, against the same assembly without the tap, late ticks of both.
//! - `lua-gc`: the worst single step of a Lua state's collector, incremental and generational,
//!   with a component that makes garbage every step.
//! - `topp`: time-optimal path parameterisation against `toppra` and the jerk-limited PTP against
//!   `ruckig`, on the same random UR5 cases (`bench_topp`).
//! - `lua-calls`: what one call from Lua into morc costs (the model's and the matrices'
//!   in-place forms, element access) inside a stepping thread's Lua state, CPU time per call.
//! - `plant`: the simulated robot's cost per base period, rigid and with elastic gears (`bench_plant`).
//! - `ros`: what 10 published and 10 subscribed ROS 2 topics cost the real-time path, and the
//!   latency from a tick to an rclpy subscriber's callback beside a plain rclpy pair's (`bench_ros`).

use std::sync::Arc;

use morc_kernel::rt::{self, RtPolicy};
use morc_kernel::AssemblyData;
use morc_kernel::AssemblySpec;
use morc_kernel::IdealAxes;
use morc_kernel::Value;
use morc_kernel::{human_ns, Histogram, Summary};
use morc_kernel::{monotonic_ns, sleep_until, ClockKind};
use morc_kernel::{Component, InitContext, StepContext};
use morc_kernel::{Engine, EngineConfig, Outcome, RunResult};

pub fn main(what: &str, seconds: f64, config: &EngineConfig) -> i32 {
    match what {
        "engine" => engine(seconds, config.rt),
        "lua" => lua(seconds, config.rt),
        "lua-gc" => lua_gc(seconds, config.rt),
        "lua-calls" => lua_calls(),
        "topp" => {
            if let Err(e) = super::bench_topp::topp() {
                eprintln!("morc bench topp: {e}");
                return super::exit::USAGE;
            }
        }
        "teach" => {
            if let Err(e) = super::bench_teach::teach(seconds, config.rt) {
                eprintln!("morc bench teach: {e}");
                return super::exit::USAGE;
            }
        }
        "bus" => return super::bus::bench(seconds, config),
        "live" => {
            if let Err(e) = live(seconds, config.rt) {
                eprintln!("morc bench live: {e}");
                return super::exit::USAGE;
            }
        }
        "plant" => {
            if let Err(e) = super::bench_plant::plant(seconds) {
                eprintln!("morc bench plant: {e}");
                return super::exit::USAGE;
            }
        }
        "ros" => {
            if let Err(e) = super::bench_ros::ros(seconds, config.rt) {
                eprintln!("morc bench ros: {e}");
                return super::exit::USAGE;
            }
        }
        other => {
            eprintln!("morc bench: unknown benchmark '{other}' (engine, lua, lua-gc, lua-calls, teach, topp, bus, live, ros, plant)");
            return super::exit::USAGE;
        }
    }
    super::exit::OK
}

/// A bare absolute-deadline sleep loop on a thread with the engine's scheduling.
fn sleep_floor(period_ns: u64, seconds: f64, policy: RtPolicy) -> Summary {
    std::thread::spawn(move || {
        rt::apply_to_current_thread(policy, "benchmark");
        let mut h = Histogram::new();
        let n = (seconds * 1e9 / period_ns as f64) as u64;
        let mut deadline = monotonic_ns() + period_ns;
        for _ in 0..n {
            sleep_until(deadline);
            h.record(monotonic_ns().saturating_sub(deadline));
            deadline += period_ns;
        }
        h.summary()
    })
    .join()
    .expect("floor thread")
}

/// A chain of `n` gain blocks on 6-vectors: robot.q → g1 → … → gn → robot.q_cmd.
fn gain_chain(n: usize, every_last: u32) -> AssemblySpec {
    let mut a = AssemblySpec::new(&format!("chain-{n}"));
    let six = ("n", Value::Integer(6));
    for i in 0..n {
        let every = if i + 1 == n { every_last } else { 1 };
        a.add_native(&format!("g{i}"), "gain", every, &[six.clone(), ("k", Value::Real(1.0))]);
        let from = if i == 0 { "robot.q".to_string() } else { format!("g{}.y", i - 1) };
        a.connect(&from, &format!("g{i}.u"));
    }
    a.connect(&format!("g{}.y", n - 1), "robot.q_cmd");
    a
}

fn run_on(clock: ClockKind, period: f64, policy: RtPolicy, spec: &AssemblySpec) -> RunResult {
    let config = EngineConfig { period, clock, rt: policy };
    let mut engine = Engine::start(config, Box::new(IdealAxes::new(&[0.0; 6], period, 1.0))).expect("engine starts");
    engine.run(spec, &AssemblyData::new()).expect("benchmark assembly runs")
}

/// ns per tick of the same `n` gains stepped directly, outputs copied to inputs.
fn plain_loop_ns(n: usize) -> f64 {
    let mut blocks: Vec<Box<dyn Component>> = Vec::new();
    for _ in 0..n {
        let mut g = morc_kernel::registry::create("gain").expect("gain exists");
        g.set_parameter("n", &Value::Integer(6)).expect("n");
        g.configure().expect("configure");
        let data = AssemblyData::new();
        g.initialize(&InitContext { name: "g", period: 1e-3, base_period: 1e-3, data: &data, thread: &Default::default(), base_latency: 0 }, &mut [])
            .expect("init");
        blocks.push(g);
    }
    let mut signals: Vec<Value> = (0..=n).map(|_| Value::Vector(vec![0.1; 6])).collect();
    let mut input = Value::Vector(vec![0.0; 6]);
    let iterations = 200_000 / n.max(1) as u64 + 1000;
    let start = monotonic_ns();
    for step in 0..iterations {
        let ctx = StepContext { step, time: step as f64 * 1e-3, period: 1e-3 };
        for (i, b) in blocks.iter_mut().enumerate() {
            let (before, after) = signals.split_at_mut(i + 1);
            input.copy_from(&before[i]);
            b.step(&ctx, std::slice::from_ref(&input), std::slice::from_mut(&mut after[0]));
        }
        std::hint::black_box(&signals);
    }
    (monotonic_ns() - start) as f64 / iterations as f64
}

fn engine(seconds: f64, policy: RtPolicy) {
    println!("morc bench engine — wall clock, {} s per configuration, SCHED_FIFO {}", seconds, if policy.enabled { "requested" } else { "off" });
    println!("latency: how late the Coordinator wakes after each deadline; floor: a bare clock_nanosleep loop, same policy");
    println!("cost: tick work of the engine minus its work with no components, per component; floor: the same blocks in a plain loop\n");
    println!(
        "{:>6} {:>4} | {:>9} {:>9} {:>9} {:>9} | {:>9} {:>9} {:>9} | {:>5} | {:>9} {:>9} {:>9}",
        "rate", "N", "mean", "p99", "p99.9", "max", "floor p99", "p99.9", "max", "late", "engine/N", "plain/N", "hand-off"
    );
    for hz in [1000u64, 4000, 10_000] {
        let period_ns = 1_000_000_000 / hz;
        let period = period_ns as f64 * 1e-9;
        let floor = sleep_floor(period_ns, seconds, policy);
        // The same engine with an empty assembly: what each tick costs without components.
        let mut empty = AssemblySpec::new("empty");
        empty.duration = Some(seconds.min(1.0));
        let base_work = run_on(ClockKind::Wall, period, policy, &empty).engine.cycle.mean;
        for n in [1usize, 8, 32] {
            let mut spec = gain_chain(n, 1);
            spec.duration = Some(seconds);
            let r = run_on(ClockKind::Wall, period, policy, &spec);
            let w = r.engine.wake_latency;
            let engine_per = (r.engine.cycle.mean - base_work).max(0.0) / n as f64;
            let plain_per = plain_loop_ns(n) / n as f64;
            println!(
                "{:>5}k {:>4} | {:>9} {:>9} {:>9} {:>9} | {:>9} {:>9} {:>9} | {:>5} | {:>9} {:>9} {:>9}",
                hz / 1000,
                n,
                human_ns(w.mean),
                human_ns(w.p99 as f64),
                human_ns(w.p999 as f64),
                human_ns(w.max as f64),
                human_ns(floor.p99 as f64),
                human_ns(floor.p999 as f64),
                human_ns(floor.max as f64),
                r.engine.late_ticks,
                human_ns(engine_per),
                human_ns(plain_per),
                human_ns((engine_per - plain_per).max(0.0)),
            );
        }
    }
    updater_handoff(policy);
}

/// `morc bench live`: 50 gain blocks (50 signals of 6 samples) at 1 kHz on the wall clock, without
/// and with the live view's tap publishing all of them every tick (the server on, no client: the
/// sending thread still encodes every row), and the tap at its default 100 Hz. With the tap, the
/// engine's timing is read for /morc/stats twice a second, as under `morc --live`.
fn live(seconds: f64, policy: RtPolicy) -> Result<(), String> {
    let period = 1e-3;
    let live_view = morc_live::Live::new();
    let address = live_view.start("127.0.0.1:0", None)?;
    println!("morc bench live — 50 signals (6-vectors), 1 kHz wall clock, {seconds} s per configuration, live view on {address}");
    println!("{:<22} | {:>9} {:>9} {:>9} | {:>9} {:>9} | {:>5} | {:>7} {:>7}", "configuration", "tap mean", "tap p99", "tap max", "work mean", "work p99", "late", "sent", "dropped");
    let mut spec = gain_chain(50, 1);
    spec.duration = Some(seconds);
    let plain = run_on(ClockKind::Wall, period, policy, &spec);
    let row = |label: &str, r: &RunResult, sent: u64, dropped: u64| {
        let tap = r.components.iter().find(|c| c.name == morc_live::TAP_NAME).map(|c| c.exec);
        let ns = |f: fn(&Summary) -> f64| tap.as_ref().map(|t| human_ns(f(t))).unwrap_or_else(|| "-".into());
        println!(
            "{label:<22} | {:>9} {:>9} {:>9} | {:>9} {:>9} | {:>5} | {:>7} {:>7}",
            ns(|t| t.mean),
            ns(|t| t.p99 as f64),
            ns(|t| t.max as f64),
            human_ns(r.engine.cycle.mean),
            human_ns(r.engine.cycle.p99 as f64),
            r.engine.late_ticks,
            sent,
            dropped
        );
    };
    row("no tap", &plain, 0, 0);
    for (label, rate) in [("tap every tick", 1000.0), ("tap at 100 Hz", 100.0)] {
        let mut with = spec.clone();
        let patterns = (0..50).map(|i| format!("g{i}.y")).collect();
        with.attachments.push(morc_kernel::AttachmentSpec {
            name: morc_live::TAP_NAME.into(),
            kind: "live".into(),
            attach: live_view.attachment(morc_live::LiveRequest { patterns, robot: None, rate }),
            origin: Default::default(),
        });
        let (sent0, dropped0) = (live_view.sent(), live_view.dropped());
        let config = EngineConfig { period, clock: ClockKind::Wall, rt: policy };
        let mut engine = Engine::start(config, Box::new(IdealAxes::new(&[0.0; 6], period, 1.0)))?;
        live_view.set_sources(Some(morc_live::Sources { timing: engine.timing_cell(), bus: None }));
        let r = engine.run(&with, &AssemblyData::new()).map_err(|e| e.to_string())?;
        live_view.set_sources(None);
        row(label, &r, live_view.sent() - sent0, live_view.dropped() - dropped0);
    }
    live_view.stop();
    Ok(())
}

/// Round trip of a task to an Updater thread and back, on the virtual clock: the same chain
/// with its last block every 2 ticks kept on its Updater (released and awaited), and left to
/// the engine (cheap, it runs inline on the Coordinator after its first runs), against all
/// blocks at the base rate.
fn updater_handoff(policy: RtPolicy) {
    let ticks = 200_000u64;
    let period = 1e-3;
    let mut base_rate = gain_chain(2, 1);
    base_rate.duration = Some(ticks as f64 * period);
    let mut on_updater = gain_chain(2, 2);
    on_updater.duration = Some(ticks as f64 * period);
    on_updater.keep_updaters = true;
    let mut left_to_engine = on_updater.clone();
    left_to_engine.keep_updaters = false;
    let time = |spec: &AssemblySpec| {
        let start = monotonic_ns();
        let r = run_on(ClockKind::Virtual, period, policy, spec);
        assert_eq!(r.ticks, ticks);
        (monotonic_ns() - start) as f64 / ticks as f64
    };
    let a = time(&base_rate);
    let b = time(&on_updater);
    let c = time(&left_to_engine);
    println!(
        "\nUpdater hand-off (virtual clock, a task every 2 ticks): {} per round trip on its Updater (tick {} vs {} at the base rate)",
        human_ns(((b - a) * 2.0).max(0.0)),
        human_ns(b),
        human_ns(a)
    );
    println!("slower task inline (its steps < 5% of T, so the engine runs it on the Coordinator): {} per release (tick {})", human_ns(((c - a) * 2.0).max(0.0)), human_ns(c));
}

fn lua(seconds: f64, policy: RtPolicy) {
    let period = 1e-3;
    println!("morc bench lua — the Cartesian velocity law, the elastic feed-forward and a 6-element gain as Lua components (stepped on the engine's thread) and natively, wall clock 1 kHz, {seconds} s each\n");
    for t in &TWINS {
        if let Err(e) = twin(t, seconds, period, policy) {
            eprintln!("morc bench lua: {} {e}", t.title);
        }
    }
    let kind = match lua_kind(GAIN) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("morc bench lua: {e}");
            return;
        }
    };
    let mut means = [0.0; 2];
    let mut lua_p99 = 0.0;
    for (i, (label, lua_kind)) in [("native gain", None), ("Lua gain", Some(kind))].into_iter().enumerate() {
        let mut spec = AssemblySpec::new("lua-bench");
        spec.duration = Some(seconds);
        match &lua_kind {
            None => {
                spec.add_native("g", "gain", 1, &[("n", Value::Integer(6))]);
            }
            Some(k) => add_lua(&mut spec, "g", k),
        }
        spec.connect("robot.q", "g.u").connect("g.y", "robot.q_cmd");
        let r = run_on(ClockKind::Wall, period, policy, &spec);
        let c = &r.components[0].exec;
        print_step(label, &r, c);
        means[i] = c.mean;
        lua_p99 = c.p99 as f64;
    }
    let ratio = means[1] / means[0].max(1.0);
    println!("lua/native step ratio: {ratio:.1} (lua mean {:.2} µs, p99 {:.2} µs)", means[1] / 1e3, lua_p99 / 1e3);
}

/// A law of the controllers library (stdlib/controllers) in Lua and natively on a robot, at 1 kHz
/// on the wall clock: step mean and p99 of each (goal for the Cartesian law: Lua p99 ≤ 20 µs).
struct Twin {
    /// What is measured, printed first.
    title: &'static str,
    /// The library's component, the robot's module, the native kind of the robot.
    component: &'static str,
    robot: &'static str,
    kind: &'static str,
    labels: [&'static str; 2],
    /// Adds the sources that feed the law (named "c") and connects them.
    wire: fn(&mut AssemblySpec),
}

const TWINS: [Twin; 2] = [
    Twin {
        title: "the Cartesian velocity law (stdlib/controllers, damped pseudo-inverse + null space) on the UR5, 6 DoF:",
        component: "cartesian_velocity",
        robot: "robots.ur5",
        kind: "cartesian_velocity",
        labels: ["native cart.", "Lua cart."],
        wire: |spec| {
            let six = |x: &[f64]| Value::Vector(x.to_vec());
            // A reference circling the tool's workspace, so the pose error and J change every step.
            spec.add_native("x_ref", "sine", 1, &[("n", Value::Integer(6)), ("amplitude", Value::Real(0.05)), ("frequency", Value::Real(0.5)), ("offset", six(&[0.4, 0.1, 0.4, 3.0, 0.1, 0.2]))]);
            spec.add_native("v_ref", "sine", 1, &[("n", Value::Integer(6)), ("amplitude", Value::Real(0.1)), ("frequency", Value::Real(0.5))]);
            spec.connect("robot.q", "c.q").connect("x_ref.y", "c.x_ref").connect("v_ref.y", "c.v_ref").connect("robot.q", "c.q_rest");
        },
    },
    Twin {
        title: "the elastic feed-forward (stdlib/controllers, inverse of Spong's model) on the KR 16 with elastic A1–A3:",
        component: "elastic_feed_forward",
        robot: "robots.kr16_elastic",
        kind: "elastic_feed_forward",
        labels: ["native elast.", "Lua elast."],
        wire: |spec| {
            // A reference moving every joint, its acceleration changing every step.
            spec.add_native("qdd_ref", "sine", 1, &[("n", Value::Integer(6)), ("amplitude", Value::Real(2.0)), ("frequency", Value::Real(1.5))]);
            spec.connect("robot.q", "c.q").connect("robot.qd", "c.qd").connect("qdd_ref.y", "c.qdd");
        },
    },
];

fn twin(t: &Twin, seconds: f64, period: f64, policy: RtPolicy) -> mlua::Result<()> {
    let lua = morc_lua::new_state()?;
    let engine = super::start_engine(EngineConfig::default()).map_err(mlua::Error::runtime)?;
    morc_lua::install(&lua, engine)?;
    let (kind, robot): (mlua::AnyUserData, mlua::AnyUserData) = lua
        .load(format!(r#"morc.lib.load "controllers"; return require "lib.controllers.components.{}", require "{}""#, t.component, t.robot))
        .set_name("=bench")
        .eval()?;
    let kind = kind.borrow::<morc_lua::LuaKind>()?.0.clone();
    let robot = robot.borrow::<morc_lua::LuaRobot>()?.0.clone();
    let native = morc_robot::components::factory(&robot, t.kind).ok_or_else(|| mlua::Error::runtime(format!("no native {}", t.kind)))?;
    println!("{}", t.title);
    for (label, lua_kind) in [(t.labels[0], None), (t.labels[1], Some(&kind))] {
        let mut spec = AssemblySpec::new("lua-bench-twin");
        spec.duration = Some(seconds);
        match lua_kind {
            None => {
                spec.add("c", t.kind, 1, native.clone());
            }
            Some(k) => {
                // Handed the robot (its params' robot = morc.ROBOT), the model shared.
                let (def, robot) = (k.clone(), robot.clone());
                spec.add("c", &k.kind, 1, Arc::new(move || Ok(Box::new(morc_lua::LuaComponent::new(def.clone()).with_robot("robot", robot.clone())) as Box<dyn Component>)));
            }
        }
        (t.wire)(&mut spec);
        let r = run_on(ClockKind::Wall, period, policy, &spec);
        if let Outcome::Fault(f) = &r.outcome {
            return Err(mlua::Error::runtime(format!("{label}: {f:?}")));
        }
        let c = r.components.iter().find(|c| c.name == "c").map(|c| &c.exec).ok_or_else(|| mlua::Error::runtime("no step figures"))?;
        print_step(label, &r, c);
    }
    println!();
    Ok(())
}

fn print_step(label: &str, r: &RunResult, c: &Summary) {
    println!(
        "{label:<12} step mean {:>9} p99 {:>9} p99.9 {:>9} max {:>9} | tick work p99 {:>9} | wake p99 {:>9} | late ticks {}",
        human_ns(c.mean),
        human_ns(c.p99 as f64),
        human_ns(c.p999 as f64),
        human_ns(c.max as f64),
        human_ns(r.engine.cycle.p99 as f64),
        human_ns(r.engine.wake_latency.p99 as f64),
        r.engine.late_ticks
    );
}

/// `morc bench lua-gc`: a Lua component that makes a table every step runs for `seconds` of
/// wall clock at 1 kHz with each collector mode; the worst single collector step is the figure.
fn lua_gc(seconds: f64, policy: RtPolicy) {
    let period = 1e-3;
    println!("morc bench lua-gc — a Lua component making a table every step, wall clock 1 kHz, {seconds} s per collector mode\n");
    let kind = match lua_kind(GARBAGE) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("morc bench lua-gc: {e}");
            return;
        }
    };
    let mut worst = Vec::new();
    for mode in [morc_lua::GcMode::Incremental, morc_lua::GcMode::Generational] {
        morc_lua::set_gc_mode(mode);
        let mut spec = AssemblySpec::new("lua-gc-bench");
        spec.duration = Some(seconds);
        add_lua(&mut spec, "g", &kind);
        spec.connect("robot.q", "g.u").connect("g.y", "robot.q_cmd");
        let r = run_on(ClockKind::Wall, period, policy, &spec);
        let get = |k: &str| r.data.get(&format!("g.{k}")).map(Value::integer).unwrap_or(0);
        let label = format!("{mode:?}").to_lowercase();
        print_step(&label, &r, &r.components[0].exec);
        println!(
            "{:<12} collector steps CPU p99 {:>9} p99.9 {:>9} worst {:>9} ({:>9} wall, preemption included), {} steps, pool peak {:.2} MB of {} MB",
            "",
            human_ns(get("lua_gc_step_cpu_p99_ns") as f64),
            human_ns(get("lua_gc_step_cpu_p999_ns") as f64),
            human_ns(get("lua_gc_worst_step_cpu_ns") as f64),
            human_ns(get("lua_gc_worst_step_ns") as f64),
            get("lua_gc_steps"),
            get("lua_memory_peak") as f64 / 1048576.0,
            get("lua_memory_pool") >> 20
        );
        worst.push((label, get("lua_gc_worst_step_cpu_ns"), get("lua_gc_worst_step_ns")));
    }
    morc_lua::set_gc_mode(morc_lua::GcMode::Incremental);
    let parts: Vec<String> = worst.iter().map(|(m, cpu, wall)| format!("{m} {:.1} µs CPU ({:.1} µs wall)", *cpu as f64 / 1e3, *wall as f64 / 1e3)).collect();
    println!("worst collector step: {} over {seconds} s each", parts.join(", "));
}

/// `morc bench lua-calls`: a component's `init` (run in its stepping thread's Lua state, watched
/// as steps are: no hook unless it overruns) times 100 000 calls of each kind a real-time
/// controller makes, with `os.clock` (CPU time): the cost of one call from Lua into morc.
fn lua_calls() {
    let run = || -> mlua::Result<()> {
        let lua = morc_lua::new_state()?;
        let engine = super::start_engine(EngineConfig::default()).map_err(mlua::Error::runtime)?;
        morc_lua::install(&lua, engine)?;
        lua.load(LUA_CALLS).set_name("=bench").exec()
    };
    println!("morc bench lua-calls — one call from Lua into morc, in a stepping thread's Lua state (CPU time, 100 000 calls each), UR5\n");
    if let Err(e) = run() {
        eprintln!("morc bench lua-calls: {e}");
    }
}

const LUA_CALLS: &str = r##"
local kind = morc.component { name = "lua_calls", outputs = { "y" },
  init = function(self, out)
    morc.lib.load "controllers"
    local pose = require "lib.controllers.helpers.pose"
    local model = require("robots.ur5").model
    local J, Jp, M = morc.mat(6, 6), morc.mat(6, 6), morc.mat(6, 6)
    local pos, rot, qd, jz, tau = morc.vec(3), morc.mat(3, 3), morc.vec(6), morc.vec(6), morc.vec(6)
    local q, w = { 0.1, 0.2, 0.3, 0.4, 0.5, 0.6 }, { 1, 2, 3, 4, 5, 6 }
    local qv = morc.vec(q)
    local pos_t, rot_t = { 0, 0, 0 }, { { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 } }
    local e, x_ref, y = { 0, 0, 0, 0, 0, 0 }, { 0.4, 0.1, 0.4, 3.0, 0.1, 0.2 }, { 0, 0, 0, 0, 0, 0 }
    local N = 100000
    local function t(label, f)
      f()
      local c = os.clock()
      for _ = 1, N do f() end
      print(("%-46s %7.0f ns"):format(label, (os.clock() - c) / N * 1e9))
    end
    t("an empty Lua function", function() end)
    t('model:frame_jacobian_to(J, q, "tool0")', function() model:frame_jacobian_to(J, q, "tool0") end)
    t('model:frame_placement_to(pos, rot, q, "tool0")', function() model:frame_placement_to(pos, rot, q, "tool0") end)
    t("model:rnea_to(tau, q, v, a) (tables)", function() model:rnea_to(tau, q, w, w) end)
    t("model:gravity_to(tau, q) (a vector)", function() model:gravity_to(tau, qv) end)
    t("model:crba_to(M, q)", function() model:crba_to(M, q) end)
    t("J:pinv_to(Jp, 0.01)", function() J:pinv_to(Jp, 0.01) end)
    t("pos:totable(t)", function() pos:totable(pos_t) end)
    t("rot:totable(rows)", function() rot:totable(rot_t) end)
    t("qd:gemv(Jp, w) (w a table)", function() qd:gemv(Jp, w) end)
    t("qd:gemv(Jp, jz, -1, 1) (a vector)", function() qd:gemv(Jp, jz, -1, 1) end)
    t("qd:axpy(1, w)", function() qd:axpy(1, w) end)
    t("J.rows", function() return J.rows end)
    t("J:get(2, 3)", function() return J:get(2, 3) end)
    t("J:set(2, 3, x)", function() J:set(2, 3, 0.5) end)
    t("v[i]", function() return qd[3] end)
    t("v[i] = x", function() qd[3] = 1.5 end)
    t("#v", function() return #qd end)
    pos:totable(pos_t)
    rot:totable(rot_t)
    t("pose.error_to (plain Lua)", function() pose.error_to(e, pos_t, rot_t, x_ref) end)
    t("for i = 1, 6 do y[i] = k * u[i] end (plain Lua)", function() for i = 1, 6 do y[i] = 1.5 * w[i] end end)
    out.y = 0
  end,
  step = function(self, inp, out) out.y = 1 end }
local a = morc.assembly { "lua-calls", duration = 0.002 }
a:add("t", kind)
local r = morc.engine:run(a)
if not r.ok then error(r.reason, 0) end
"##;

fn add_lua(spec: &mut AssemblySpec, name: &str, kind: &Arc<morc_lua::LuaComponentDef>) {
    let k = kind.clone();
    spec.add(name, &kind.kind, 1, Arc::new(move || Ok(Box::new(morc_lua::LuaComponent::new(k.clone())) as Box<dyn Component>)));
}

const GAIN: &str = r#"return morc.component { name = "lua_gain", inputs = { "u[6]" }, outputs = { "y[6]" }, params = { k = 1.0 },
                 step = function(self, inp, out) for i = 1, 6 do out.y[i] = self.k * inp.u[i] end end }"#;

const GARBAGE: &str = r#"return morc.component { name = "lua_garbage", inputs = { "u[6]" }, outputs = { "y[6]" },
                 step = function(self, inp, out, t)
                   local scratch = { t, t, t, t, t, t, label = "step" }   -- a new table every step
                   for i = 1, 6 do out.y[i] = inp.u[i] + 0 * scratch[i] end
                 end }"#;

/// A Lua component kind from `code` (a chunk returning `morc.component { … }`).
fn lua_kind(code: &str) -> mlua::Result<Arc<morc_lua::LuaComponentDef>> {
    let lua = morc_lua::new_state()?;
    let engine = super::start_engine(EngineConfig::default()).map_err(mlua::Error::runtime)?;
    morc_lua::install(&lua, engine)?;
    let kind: mlua::AnyUserData = lua.load(code).set_name("=bench").eval()?;
    let def = kind.borrow::<morc_lua::LuaKind>()?.0.clone();
    Ok(def)
}
