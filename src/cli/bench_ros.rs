//! `morc bench ros`: what ROS 2 costs the real-time path, and how late its messages reach a peer.
//!
//! At 1 kHz on the wall clock, with morc on ROS 2 (the domain of `ROS_DOMAIN_ID`), the same
//! engine runs an assembly without topic components, then one with 10 `ros.publish` and 10
//! `ros.subscribe` (the same 10 topics, one of each message family, so the bridge carries every
//! row out and every message back in). It prints the 20 components' summed step cost per tick
//! (their work on the real-time path), the tick work and the late ticks of both runs.
//!
//! The Int64 topic carries the tick's CLOCK_MONOTONIC time: a subscriber in ROS 2's own Python
//! client (rclpy, another process) takes how long after the tick its callback ran. In the same
//! run a plain rclpy publisher, stamping the same way at 1 kHz, sends to the same subscriber:
//! the latency of a ROS 2 pair with no morc, which morc's is printed beside, with their ratio.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use morc_kernel::rt::RtPolicy;
use morc_kernel::{human_ns, monotonic_ns, Histogram, Summary};
use morc_kernel::{AssemblyData, AssemblySpec, ClockKind, Component, ComponentInfo, Engine, EngineConfig, IdealAxes, Outcome, RunResult};
use morc_kernel::{InitContext, PortInfo, Step, StepContext, Value, ValueType};

/// A topic: its name, message type, and extra parameters.
type Topic = (&'static str, &'static str, &'static [(&'static str, Value)]);
/// A component stepped directly, with its inputs and outputs.
type Stepped = (Box<dyn Component>, Vec<Value>, Vec<Value>);

/// The topics, published and subscribed alike.
const TOPICS: &[Topic] = &[
    ("/morc_bench/f64", "std_msgs/msg/Float64", &[]),
    ("/morc_bench/f32", "std_msgs/msg/Float32", &[]),
    ("/morc_bench/i32", "std_msgs/msg/Int32", &[]),
    ("/morc_bench/tick", "std_msgs/msg/Int64", &[]),
    ("/morc_bench/flag", "std_msgs/msg/Bool", &[]),
    ("/morc_bench/array", "std_msgs/msg/Float64MultiArray", &[("size", Value::Integer(6))]),
    ("/morc_bench/pose", "geometry_msgs/msg/PoseStamped", &[]),
    ("/morc_bench/twist", "geometry_msgs/msg/Twist", &[]),
    ("/morc_bench/wrench", "geometry_msgs/msg/WrenchStamped", &[]),
    ("/morc_bench/joints", "sensor_msgs/msg/JointState", &[("size", Value::Integer(6))]),
];
/// The topic morc's tick time goes out on.
const TICK_TOPIC: &str = "/morc_bench/tick";
/// The plain rclpy publisher's topic.
const RCLPY_TOPIC: &str = "/morc_bench/rclpy_tick";
/// Messages of each stream left out of the latency while the endpoints match.
const WARM_UP: usize = 200;

/// Runs the benchmark, `seconds` per configuration.
pub fn ros(seconds: f64, policy: RtPolicy) -> Result<(), String> {
    let period = 1e-3;
    let started_here = morc_ros::bridge().is_none();
    if started_here {
        let options = morc_ros::BridgeOptions { domain_id: morc_ros::domain_from_env()?, namespace: "/".into(), name: "morc_bench".into(), parameters: None };
        morc_ros::start(&options)?;
    }
    let result = measure(seconds, period, policy);
    if started_here {
        morc_ros::stop();
    }
    result
}

fn measure(seconds: f64, period: f64, policy: RtPolicy) -> Result<(), String> {
    let peers = Peers::start();
    println!("morc bench ros — 10 topics published and the same 10 subscribed, 1 kHz wall clock, {seconds} s per configuration, ROS 2 domain {}", morc_ros::domain_from_env()?);
    println!("cost: the 20 topic components' steps per tick (the real-time path's share of ROS 2); work: the tick's whole work\n");
    println!("{:<24} | {:>9} {:>9} {:>9} | {:>9} {:>9} | {:>5} | {:>7} {:>7} {:>8}", "configuration", "cost mean", "p99", "max", "work mean", "work p99", "late", "sent", "dropped", "received");
    let mut plain = AssemblySpec::new("no-topics");
    plain.duration = Some(seconds);
    plain.add("clock", "monotonic_clock", 1, Arc::new(|| Ok(Box::new(MonotonicClock::new()) as Box<dyn Component>)));
    let without = run(&plain, period, policy)?;
    row("without topic components", &without, None);

    let mut spec = plain.clone();
    spec.name = "ten-topics".into();
    for (i, (topic, ty, extra)) in TOPICS.iter().enumerate() {
        for (name, kind) in [(format!("pub{i}"), morc_ros::pubsub::PUBLISH), (format!("sub{i}"), morc_ros::pubsub::SUBSCRIBE)] {
            let factory: morc_kernel::Factory = if kind == morc_ros::pubsub::PUBLISH {
                Arc::new(|| Ok(Box::new(morc_ros::pubsub::RosPublish::new()) as Box<dyn Component>))
            } else {
                Arc::new(|| Ok(Box::new(morc_ros::pubsub::RosSubscribe::new()) as Box<dyn Component>))
            };
            spec.add(&name, kind, 1, factory);
            let c = spec.components.last_mut().expect("just added");
            c.params = [("topic", Value::String(topic.to_string())), ("type", Value::String(ty.to_string()))]
                .into_iter()
                .chain(extra.iter().cloned())
                .map(|(k, v)| (k.to_string(), v))
                .collect();
        }
        if *topic == TICK_TOPIC {
            spec.connect("clock.ns", &format!("pub{i}.data"));
        }
    }
    let with = run(&spec, period, policy)?;
    row("10 out + 10 in", &with, Some(&topic_cost(&with)));
    // The components' results, summed over the 10: `prefix` is "pub" or "sub".
    let count = |prefix: &str, result: &str| (0..TOPICS.len()).filter_map(|i| with.data.get(&format!("{prefix}{i}.{result}"))).map(|v| v.integer()).sum::<i64>();
    let (sent, dropped, received) = (count("pub", "sent"), count("pub", "dropped"), count("sub", "received"));
    println!("{:<24} | {:>9} {:>9} {:>9} | {:>9} {:>9} | {:>5} | {:>7} {:>7} {:>8}", "", "", "", "", "", "", "", sent, dropped, received);
    let late_added = with.engine.late_ticks.saturating_sub(without.engine.late_ticks);
    let latencies = latency(peers);
    let direct = stepped_directly(seconds, period, policy)?;
    println!("\nthe same 20 components stepped directly, once a millisecond on a thread with the engine's scheduling, {} ticks:", direct.total.count);
    println!("  per tick: mean {} p99 {} max {} (goal < 1 µs mean)", human_ns(direct.total.mean), human_ns(direct.total.p99 as f64), human_ns(direct.total.max as f64));
    for (i, (_, ty, _)) in TOPICS.iter().enumerate() {
        println!("  {ty:<34} ros.publish {:>9}  ros.subscribe {:>9}", human_ns(direct.steps[2 * i]), human_ns(direct.steps[2 * i + 1]));
    }
    let peer = match latencies {
        Some((morc, rclpy)) => format!(
            "; tick to an rclpy callback p50 {} p99 {}, an rclpy pair's p50 {} p99 {} (morc/rclpy p50 {:.2}×, p99 {:.2}×)",
            human_ns(morc.p50 as f64),
            human_ns(morc.p99 as f64),
            human_ns(rclpy.p50 as f64),
            human_ns(rclpy.p99 as f64),
            morc.p50 as f64 / rclpy.p50 as f64,
            morc.p99 as f64 / rclpy.p99 as f64
        ),
        None => "; latency not measured".into(),
    };
    println!("morc bench ros: 10 out + 10 in cost {} per tick, {late_added} late ticks added{peer}", human_ns(direct.total.mean));
    Ok(())
}

fn run(spec: &AssemblySpec, period: f64, policy: RtPolicy) -> Result<RunResult, String> {
    let config = EngineConfig { period, clock: ClockKind::Wall, rt: policy };
    let mut engine = Engine::start(config, Box::new(IdealAxes::new(&[0.0; 6], period, 1.0))).map_err(|e| e.to_string())?;
    let r = engine.run(spec, &AssemblyData::new()).map_err(|e| e.to_string())?;
    match &r.outcome {
        Outcome::Fault(f) => Err(format!("{}: {f:?}", spec.name)),
        _ => Ok(r),
    }
}

/// What the topic components cost stepped directly: per tick, and each one's mean step (ns), in
/// [`TOPICS`] order, publisher then subscriber.
struct Direct {
    total: Summary,
    steps: Vec<f64>,
}

/// The 20 topic components stepped as the engine steps them, one tick a period on a thread with
/// the engine's scheduling (the bridge carrying their rows out and messages in meanwhile): for
/// half the ticks the tick's 20 steps timed together (one clock pair per tick, its own cost taken
/// off), for the other half each step on its own. Without the engine's per-component timing,
/// which the table's figures include.
fn stepped_directly(seconds: f64, period: f64, policy: RtPolicy) -> Result<Direct, String> {
    let made = std::thread::spawn(move || -> Result<Direct, String> {
        morc_kernel::rt::apply_to_current_thread(policy, "benchmark");
        let data = AssemblyData::new();
        let thread = morc_kernel::StepThread::default();
        let ctx = |name| InitContext { name, period, base_period: period, data: &data, thread: &thread, base_latency: 0 };
        let mut steps: Vec<Stepped> = Vec::new();
        for (topic, ty, extra) in TOPICS {
            for mut c in [Box::new(morc_ros::pubsub::RosPublish::new()) as Box<dyn Component>, Box::new(morc_ros::pubsub::RosSubscribe::new())] {
                c.set_parameter("topic", &Value::String(topic.to_string()))?;
                c.set_parameter("type", &Value::String(ty.to_string()))?;
                for (k, v) in extra.iter() {
                    c.set_parameter(k, v)?;
                }
                c.configure()?;
                let inputs: Vec<Value> = c.info().inputs.iter().map(PortInfo::initial_value).collect();
                let mut outputs: Vec<Value> = c.info().outputs.iter().map(PortInfo::initial_value).collect();
                c.initialize(&ctx("bench"), &mut outputs)?;
                steps.push((c, inputs, outputs));
            }
        }
        let clock_pair = {
            let t0 = monotonic_ns();
            for _ in 0..10_000 {
                std::hint::black_box(monotonic_ns());
            }
            (monotonic_ns() - t0) / 10_000
        };
        let period_ns = (period * 1e9) as u64;
        let ticks = (seconds / period) as u64;
        let mut total = Histogram::new();
        let mut each = vec![0u64; steps.len()];
        let mut deadline = monotonic_ns() + period_ns;
        for k in 0..ticks {
            morc_kernel::sleep_until(deadline);
            deadline += period_ns;
            let step = StepContext { step: k, time: k as f64 * period, period };
            for (_, inputs, _) in steps.iter_mut() {
                for v in inputs.iter_mut() {
                    v.set_real(k as f64);
                }
            }
            if k % 2 == 0 {
                let t0 = monotonic_ns();
                for (c, inputs, outputs) in steps.iter_mut() {
                    std::hint::black_box(c.step(&step, inputs, outputs));
                }
                total.record((monotonic_ns() - t0).saturating_sub(clock_pair));
            } else {
                for ((c, inputs, outputs), ns) in steps.iter_mut().zip(each.iter_mut()) {
                    let t0 = monotonic_ns();
                    std::hint::black_box(c.step(&step, inputs, outputs));
                    *ns += (monotonic_ns() - t0).saturating_sub(clock_pair);
                }
            }
        }
        let mut results = AssemblyData::new();
        for (c, _, _) in steps.iter_mut() {
            c.terminate(&mut morc_kernel::AssemblyResults::new("bench", &mut results));
        }
        let timed = (ticks / 2).max(1) as f64;
        Ok(Direct { total: total.summary(), steps: each.iter().map(|&ns| ns as f64 / timed).collect() })
    });
    made.join().map_err(|_| "the stepping thread panicked".to_string())?
}

/// The topic components' summed step time per tick: their means and percentiles added (an
/// upper bound of the sum's percentiles: their worst steps need not fall on one tick).
fn topic_cost(r: &RunResult) -> Summary {
    let mut sum = Summary::default();
    for c in r.components.iter().filter(|c| c.kind.starts_with("ros.")) {
        sum.count = c.exec.count;
        sum.mean += c.exec.mean;
        sum.p99 += c.exec.p99;
        sum.max += c.exec.max;
    }
    sum
}

fn row(label: &str, r: &RunResult, cost: Option<&Summary>) {
    let ns = |f: fn(&Summary) -> f64| cost.map_or_else(|| "-".to_string(), |c| human_ns(f(c)));
    println!(
        "{label:<24} | {:>9} {:>9} {:>9} | {:>9} {:>9} | {:>5} |",
        ns(|c| c.mean),
        ns(|c| c.p99 as f64),
        ns(|c| c.max as f64),
        human_ns(r.engine.cycle.mean),
        human_ns(r.engine.cycle.p99 as f64),
        r.engine.late_ticks
    );
}

/// The rclpy subscriber and publisher, or why there are none.
struct Peers {
    subscriber: Result<Child, String>,
    publisher: Option<Child>,
}

impl Peers {
    fn start() -> Peers {
        let subscriber = peer(&["sub", TICK_TOPIC, RCLPY_TOPIC]);
        let publisher = subscriber.as_ref().ok().and_then(|_| peer(&["pub", RCLPY_TOPIC, "1000"]).ok());
        // Let the peers' participants and morc's discover each other before the runs.
        std::thread::sleep(std::time::Duration::from_secs(1));
        Peers { subscriber, publisher }
    }
}

/// A peer process (`bench_ros_peer.py` with `args`) once it said it is ready.
fn peer(args: &[&str]) -> Result<Child, String> {
    let python = std::env::var("MORC_PYTHON").unwrap_or_else(|_| "python3".into());
    let mut child = Command::new(&python)
        .arg("-c")
        .arg(include_str!("bench_ros_peer.py"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {python}: {e}"))?;
    let mut first = String::new();
    let _ = BufReader::new(child.stdout.as_mut().expect("piped")).read_line(&mut first);
    if first.trim() == "ready" {
        return Ok(child);
    }
    let _ = child.kill();
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let why = String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("it printed nothing").to_string();
    Err(format!("rclpy did not start ({why}); scripts/setup --test installs it (ros-jazzy-rclpy from PyPI)"))
}

/// Ends the peers and prints the latencies the subscriber took: morc's and the rclpy pair's.
fn latency(peers: Peers) -> Option<(Summary, Summary)> {
    println!("\nlatency from the tick to an rclpy subscriber's callback (std_msgs/msg/Int64 at 1 kHz, another process):");
    let mut subscriber = match peers.subscriber {
        Ok(s) => s,
        Err(e) => {
            println!("  not measured: {e}");
            return None;
        }
    };
    if let Some(mut p) = peers.publisher {
        drop(p.stdin.take());
        let _ = p.wait();
    }
    drop(subscriber.stdin.take());
    let out = match subscriber.wait_with_output() {
        Ok(out) => out,
        Err(e) => {
            println!("  not measured: {e}");
            return None;
        }
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let Ok(json) = serde_json::from_str::<serde_json::Value>(text.lines().last().unwrap_or_default()) else {
        println!("  not measured: the subscriber printed {text:?} ({})", String::from_utf8_lossy(&out.stderr).trim());
        return None;
    };
    let summary = |topic: &str| {
        let mut h = Histogram::new();
        for ns in json[topic].as_array().map_or(&[][..], |a| a.as_slice()).iter().skip(WARM_UP).filter_map(|v| v.as_u64()) {
            h.record(ns);
        }
        h.summary()
    };
    let (morc, rclpy) = (summary(TICK_TOPIC), summary(RCLPY_TOPIC));
    for (label, s) in [("morc ros.publish → rclpy", &morc), ("rclpy → rclpy", &rclpy)] {
        println!("  {label:<26} p50 {:>9}  p99 {:>9}  max {:>9}  ({} messages)", human_ns(s.p50 as f64), human_ns(s.p99 as f64), human_ns(s.max as f64), s.count);
    }
    if morc.count == 0 || rclpy.count == 0 {
        println!("  too few messages to compare (discovery took the whole run? try --seconds 5)");
        return None;
    }
    Some((morc, rclpy))
}

/// A source of the tick's CLOCK_MONOTONIC time (ns), the clock Python's time.monotonic_ns reads.
struct MonotonicClock {
    info: ComponentInfo,
}

impl MonotonicClock {
    fn new() -> Self {
        let info = ComponentInfo::new("monotonic_clock", "the tick's CLOCK_MONOTONIC time").output(PortInfo::new("ns", ValueType::Integer).unit("ns"));
        MonotonicClock { info }
    }
}

impl Component for MonotonicClock {
    fn info(&self) -> &ComponentInfo {
        &self.info
    }
    fn info_mut(&mut self) -> &mut ComponentInfo {
        &mut self.info
    }
    fn initialize(&mut self, _ctx: &InitContext, _outputs: &mut [Value]) -> Result<(), String> {
        Ok(())
    }
    fn step(&mut self, _ctx: &StepContext, _inputs: &[Value], outputs: &mut [Value]) -> Step {
        outputs[0] = Value::Integer(monotonic_ns() as i64);
        Step::Continue
    }
}
