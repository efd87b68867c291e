//! `ros.publish` and `ros.subscribe` allocate nothing on the real-time path: with morc on ROS 2,
//! 10 publishers and 10 subscriptions to the same 10 topics (one of each message type family:
//! std_msgs scalars and an array, a stamped pose, a twist, a stamped wrench, joint states), a
//! counting global allocator armed only on the stepping thread sees no allocation in 5000
//! steady-state ticks of all 20, while the bridge's thread carries every row out as a message
//! and every message back in (every subscription takes messages within the counted ticks, and
//! what it holds is a row some publisher sent).
//!
//! The components are stepped here as the engine steps them (as tests/live_no_alloc.rs does
//! with the live tap), one tick every millisecond; between ticks the counter is disarmed. The
//! bridge runs in a network namespace of its own (tests/ros_support): needs root. One test in
//! this binary, so no other test allocates on its thread.

mod ros_support;

use morc_kernel::*;
use morc_ros::pubsub::{RosPublish, RosSubscribe};
use morc_test_support::alloc::{assert_allocated_nothing, control_allocation, watch_this_thread, watched_allocations, CountingAllocator};
use ros_support::RosNet;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// A topic: its name, type, and extra parameters.
type Topic = (&'static str, &'static str, &'static [(&'static str, &'static str)]);

/// The topics.
const TOPICS: &[Topic] = &[
    ("/na/f64", "std_msgs/msg/Float64", &[]),
    ("/na/f32", "std_msgs/msg/Float32", &[]),
    ("/na/i32", "std_msgs/msg/Int32", &[]),
    ("/na/i64", "std_msgs/msg/Int64", &[]),
    ("/na/flag", "std_msgs/msg/Bool", &[]),
    ("/na/array", "std_msgs/msg/Float64MultiArray", &[("size", "6")]),
    ("/na/pose", "geometry_msgs/msg/PoseStamped", &[]),
    ("/na/twist", "geometry_msgs/msg/Twist", &[]),
    ("/na/wrench", "geometry_msgs/msg/WrenchStamped", &[]),
    ("/na/joints", "sensor_msgs/msg/JointState", &[("names", "a1,a2,a3,a4,a5,a6")]),
];

fn configured<C: Component>(mut c: C, topic: &str, ty: &str, extra: &[(&str, &str)]) -> C {
    c.set_parameter("topic", &Value::String(topic.into())).unwrap();
    c.set_parameter("type", &Value::String(ty.into())).unwrap();
    for (k, v) in extra {
        let value = v.parse::<i64>().map_or_else(|_| Value::String(v.to_string()), Value::Integer);
        c.set_parameter(k, &value).unwrap();
    }
    c.configure().unwrap();
    c
}

fn values(ports: &[PortInfo]) -> Vec<Value> {
    ports.iter().map(PortInfo::initial_value).collect()
}

#[test]
fn ten_topics_out_and_in_allocate_nothing_per_tick() {
    const TICKS: u64 = 5000;
    let period = 0.001;
    let net = RosNet::new(0);
    net.enter();
    morc_ros::start(&morc_ros::BridgeOptions { domain_id: 0, namespace: "/".into(), name: "morc_no_alloc".into(), parameters: None }).unwrap();

    let data = AssemblyData::new();
    let thread = StepThread::default();
    let ctx = |name| InitContext { name, period, base_period: period, data: &data, thread: &thread, base_latency: 0 };
    let mut publishers = Vec::new();
    let mut subscribers = Vec::new();
    for (topic, ty, extra) in TOPICS {
        let mut p = configured(RosPublish::new(), topic, ty, extra);
        p.initialize(&ctx("pub"), &mut []).unwrap();
        let inputs = values(&p.info().inputs);
        publishers.push((p, inputs));
        let mut s = configured(RosSubscribe::new(), topic, ty, extra);
        let mut outputs = values(&s.info().outputs);
        s.initialize(&ctx("sub"), &mut outputs).unwrap();
        subscribers.push((s, outputs));
    }

    // One tick: every publisher sends the tick's number in every element, every subscription
    // reads; returns which subscriptions took a message.
    let mut tick = |k: u64, fresh: &mut [u64]| {
        let step = StepContext { step: k, time: k as f64 * period, period };
        for (p, inputs) in publishers.iter_mut() {
            for v in inputs.iter_mut() {
                v.set_real(k as f64);
            }
            assert_eq!(p.step(&step, inputs, &mut []), Step::Continue);
        }
        for (i, (s, outputs)) in subscribers.iter_mut().enumerate() {
            assert_eq!(s.step(&step, &[], outputs), Step::Continue);
            if outputs.last() == Some(&Value::Integer(0)) {
                fresh[i] += 1;
            }
        }
    };

    // Until every subscription has matched its publisher and taken a message (discovery).
    let mut warm = vec![0u64; TOPICS.len()];
    let start = std::time::Instant::now();
    let mut k = 0;
    while warm.contains(&0) {
        assert!(start.elapsed().as_secs() < 120, "subscriptions without a message after 120 s: {:?}", TOPICS.iter().zip(&warm).filter(|(_, n)| **n == 0).map(|(t, _)| t.0).collect::<Vec<_>>());
        tick(k, &mut warm);
        k += 1;
        std::thread::sleep(std::time::Duration::from_millis(1));
    }

    let mut fresh = vec![0u64; TOPICS.len()];
    let mut stepping = std::time::Duration::ZERO;
    watch_this_thread(true);
    control_allocation();
    watch_this_thread(false);
    for _ in 0..TICKS {
        let t0 = std::time::Instant::now();
        watch_this_thread(true);
        tick(k, &mut fresh);
        watch_this_thread(false);
        stepping += t0.elapsed();
        k += 1;
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert_allocated_nothing(&format!("{TICKS} ticks of 10 publishers and 10 subscriptions"), watched_allocations());
    for ((topic, _, _), got) in TOPICS.iter().zip(&fresh) {
        assert!(*got > 0, "{topic}: no message taken in the counted ticks");
    }
    // What each subscription holds is a tick's number some publisher sent (a boolean: its parity).
    for ((topic, ty, _), (_, outputs)) in TOPICS.iter().zip(&subscribers) {
        let first = &outputs[0];
        let x = match first {
            Value::Boolean(_) => continue,
            Value::Integer(i) => *i as f64,
            v => v.as_slice()[0],
        };
        assert!(x.fract() == 0.0 && x > 0.0 && x < k as f64, "{topic} ({ty}): holds {first}, not a tick below {k}");
        for v in &outputs[..outputs.len() - 1] {
            assert!(v.as_slice().iter().all(|e| *e == x) || matches!(v, Value::Integer(_)), "{topic}: {v} is not one row");
        }
    }
    let mut results = AssemblyData::new();
    for (p, _) in publishers.iter_mut() {
        p.terminate(&mut AssemblyResults::new("pub", &mut results));
        let sent = results.get("pub.sent").unwrap().integer() as u64;
        let dropped = results.get("pub.dropped").unwrap().integer() as u64;
        assert_eq!(sent + dropped, k, "every row pushed is sent or counted as dropped");
    }
    for (s, _) in subscribers.iter_mut() {
        s.terminate(&mut AssemblyResults::new("sub", &mut results));
        assert!(results.get("sub.received").unwrap().integer() > 0);
        assert_eq!(results.get("sub.dropped").unwrap().integer(), 0, "no message of another size was sent");
    }
    println!("10 ros.publish + 10 ros.subscribe steps: {:.0} ns per tick (test profile)", stepping.as_nanos() as f64 / TICKS as f64);
    morc_ros::stop();
}
