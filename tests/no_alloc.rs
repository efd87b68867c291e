//! No allocation on the real-time path of native components in steady
//! state: a counting global allocator, armed and disarmed from inside the
//! assembly, sees none on the Coordinator or the Updater threads.
//! One test in this binary, so no other test allocates concurrently.

use morc_test_support::alloc::{all_thread_allocations, assert_allocated_nothing, counting_all_threads, reset_all_thread_allocations, CountingAllocator};
use morc_test_support::doubles::allocation_window;

use morc_kernel::rt::RtPolicy;
use morc_kernel::AssemblyData;
use morc_kernel::AssemblySpec;
use morc_kernel::ClockKind;
use morc_kernel::IdealAxes;
use morc_kernel::Value;
use morc_kernel::{Engine, EngineConfig, Outcome};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn assembly() -> AssemblySpec {
    let mut a = AssemblySpec::new("steady");
    a.add("window", "window", 1, allocation_window(1000, 19_000));
    let n6 = ("n", Value::Integer(6));
    // A control loop of native blocks at three rates, and a probe.
    a.add_native("ref", "sine", 1, &[n6.clone(), ("amplitude", Value::Real(0.2)), ("frequency", Value::Real(0.5))]);
    a.add_native("shape", "bessel", 1, &[n6.clone(), ("fc", Value::Real(20.0)), ("order", Value::Integer(4))]);
    a.add_native("err", "sum", 1, &[n6.clone(), ("signs", Value::String("+-".into()))]);
    a.add_native("pid", "pid", 1, &[n6.clone(), ("kp", Value::Real(2.0)), ("ki", Value::Real(1.0)), ("umin", Value::Real(-1.0)), ("umax", Value::Real(1.0))]);
    a.add_native("lim", "rate_limiter", 1, &[n6.clone(), ("rising", Value::Real(5.0)), ("falling", Value::Real(5.0))]);
    a.add_native("int", "integrator", 4, std::slice::from_ref(&n6));
    a.add_native("sat", "saturation", 20, std::slice::from_ref(&n6));
    a.add_native("lp", "lowpass", 20, &[n6.clone(), ("fc", Value::Real(2.0))]);
    a.add_native("probe", "probe", 1, &[n6, ("capacity", Value::Integer(30_000))]);
    a.connect("ref.y", "shape.u")
        .connect("shape.y", "err.u1")
        .connect("robot.q", "err.u2")
        .connect("shape.y", "pid.r")
        .connect("robot.q", "pid.y")
        .connect("pid.u", "lim.u")
        .connect("lim.y", "robot.q_cmd")
        .connect("err.y", "int.u")
        .connect("int.y", "sat.u")
        .connect("sat.y", "lp.u")
        .connect("lp.y", "pid.ff")
        .connect("lim.y", "probe.u");
    // The 50 Hz low-pass reaches the 1 kHz PID interpolated: the interpolation allocates nothing either.
    a.components.iter_mut().find(|c| c.name == "pid").expect("pid").interpolate.push("ff".into());
    a.duration = Some(20.0);
    a
}

#[test]
fn steady_state_allocates_nothing() {
    let period = 0.001;
    let config = EngineConfig { period, clock: ClockKind::Virtual, rt: RtPolicy::default() };
    let mut engine = Engine::start(config, Box::new(IdealAxes::new(&[0.1; 6], period, 1.0))).unwrap();
    // A first run warms up what blocking on channels caches per thread.
    let warm = engine.run(&assembly(), &AssemblyData::new()).unwrap();
    assert_eq!(warm.outcome, Outcome::Finished("duration".into()));
    reset_all_thread_allocations();
    let r = engine.run(&assembly(), &AssemblyData::new()).unwrap();
    assert_eq!(r.outcome, Outcome::Finished("duration".into()));
    assert!(!counting_all_threads(), "the window closed");
    assert_eq!(r.ticks, 20_000);
    assert_eq!(r.data.get("probe.samples"), Some(&Value::Integer(20_000)));
    let Some(Value::Vector(q)) = r.data.get("probe.u") else { panic!("probe samples") };
    assert!(q.iter().any(|&x| x.abs() > 0.05), "the loop moved the axes");
    assert_allocated_nothing("18 000 steady-state ticks of native blocks", all_thread_allocations());
}
