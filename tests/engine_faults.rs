//! Overruns, faults and cancellation: counted or handled by policy, the
//! robot held, the reason named.

use morc_test_support::doubles as common;

use std::time::Duration;

use common::{func, RecordingBase};
use morc_kernel::rt::RtPolicy;
use morc_kernel::AssemblyData;
use morc_kernel::ComponentRef;
use morc_kernel::Step;
use morc_kernel::{monotonic_ns, ClockKind};
use morc_kernel::{AssemblySpec, OverrunPolicy};
use morc_kernel::{Engine, EngineConfig, Fault, FaultSource, Outcome};

fn engine(clock: ClockKind) -> (Engine, std::sync::Arc<std::sync::Mutex<common::BaseLog>>) {
    let (base, log) = RecordingBase::new(0.001);
    (Engine::start(EngineConfig { period: 0.001, clock, rt: RtPolicy::default() }, Box::new(base)).unwrap(), log)
}

/// A component every 2 ticks that computes for 5 ms: it cannot keep up.
fn overrunning(policy: OverrunPolicy) -> AssemblySpec {
    let mut a = AssemblySpec::new("overrun");
    a.add(
        "v",
        "test",
        1,
        func(&[], &["y"], || {
            Box::new(|_, _, o| {
                o[0].set_real(0.1);
                Step::Continue
            })
        }),
    );
    a.add(
        "slow",
        "test",
        2,
        func(&[], &["y"], || {
            Box::new(|_, _, o| {
                let start = monotonic_ns();
                while monotonic_ns() - start < 5_000_000 {
                    std::hint::spin_loop();
                }
                o[0].set_real(1.0);
                Step::Continue
            })
        }),
    );
    a.connect("v.y", "robot.v_cmd");
    a.duration = Some(0.1);
    a.overrun = policy;
    a
}

#[test]
fn overruns_are_counted_under_warn() {
    let (mut e, _) = engine(ClockKind::Wall);
    let r = e.run(&overrunning(OverrunPolicy::Warn), &AssemblyData::new()).unwrap();
    assert_eq!(r.outcome, Outcome::Finished("duration".into()));
    let slow = r.components.iter().find(|c| c.name == "slow").unwrap();
    assert!(slow.overruns >= 5, "{}", r.report());
    // Skipped releases: it ran far fewer than the 50 steps it was due.
    assert!(slow.steps < 30, "{}", r.report());
    assert!(r.report().contains("overruns"));
}

#[test]
fn overrun_faults_under_fault_policy() {
    let (mut e, log) = engine(ClockKind::Wall);
    let r = e.run(&overrunning(OverrunPolicy::Fault), &AssemblyData::new()).unwrap();
    let Outcome::Fault(Fault { source, message: m }) = &r.outcome else { panic!("{:?}", r.outcome) };
    assert!(m.contains("overrun") && m.contains("every 2 ticks"), "{m}");
    assert_eq!(*source, FaultSource::Assembly, "an overrun is the assembly's");
    assert_eq!(r.ticks, 2, "faulted at the first deadline");
    // The robot was held from the fault on.
    let log = log.lock().unwrap();
    let last = log.commands.iter().rposition(|c| c.is_some()).unwrap();
    assert!(log.commands[last + 1..].iter().all(|c| c.is_none()));
}

#[test]
fn a_component_fault_ends_the_run_and_the_robot_holds() {
    let (mut e, log) = engine(ClockKind::Virtual);
    let mut a = AssemblySpec::new("faulty");
    a.add(
        "v",
        "test",
        1,
        func(&[], &["y"], || {
            Box::new(|ctx, _, o| {
                o[0].set_real(1.0);
                if ctx.step == 7 {
                    Step::Fault("following error 12° exceeds 5°".into())
                } else {
                    Step::Continue
                }
            })
        }),
    );
    a.connect("v.y", "robot.v_cmd");
    let r = e.run(&a, &AssemblyData::new()).unwrap();
    // The fault names the component in its message and, for a program to act on, in its source.
    let message = "component 'v' (test) at t = 0.007 s: following error 12° exceeds 5°".to_string();
    assert_eq!(r.outcome, Outcome::Fault(Fault { source: FaultSource::Component(ComponentRef { name: "v".into(), kind: "test".into() }), message }));
    let log = log.lock().unwrap();
    assert_eq!(log.commands[..7], [Some(1.0); 7]);
    assert_eq!(log.commands[7], None, "the fault tick itself sends no command");
    drop(log);
    // The engine is usable again.
    let mut ok = AssemblySpec::new("after");
    ok.duration = Some(0.002);
    assert!(e.run(&ok, &AssemblyData::new()).unwrap().outcome.is_ok());
}

#[test]
fn a_base_fault_is_named() {
    let (mut base, _log) = RecordingBase::new(0.001);
    base.fail_at = Some(3);
    let mut e = Engine::start(EngineConfig { period: 0.001, clock: ClockKind::Virtual, rt: RtPolicy::default() }, Box::new(base)).unwrap();
    let mut a = AssemblySpec::new("busfault");
    a.add(
        "v",
        "test",
        1,
        func(&[], &["y"], || {
            Box::new(|_, _, o| {
                o[0].set_real(1.0);
                Step::Continue
            })
        }),
    );
    a.connect("v.y", "robot.v_cmd");
    let r = e.run(&a, &AssemblyData::new()).unwrap();
    assert_eq!(r.outcome, Outcome::Fault(Fault::base("robot", "robot: drive 3 reports an over-current fault")));
}

#[test]
fn cancel_from_another_thread_holds_the_robot() {
    for clock in [ClockKind::Virtual, ClockKind::Wall] {
        let (mut e, log) = engine(clock);
        let mut a = AssemblySpec::new("endless");
        // The canceller acts once the run steps (a cancel before the run began would be no test).
        let stepping = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stepped = stepping.clone();
        a.add(
            "v",
            "test",
            1,
            func(&[], &["y"], move || {
                let stepped = stepped.clone();
                Box::new(move |ctx, _, o| {
                    o[0].set_real(1.0);
                    if ctx.step == 10 {
                        stepped.store(true, std::sync::atomic::Ordering::SeqCst);
                    }
                    Step::Continue
                })
            }),
        );
        a.add("slow", "test", 10, func(&[], &["y"], || Box::new(|_, _, _| Step::Continue)));
        a.connect("v.y", "robot.v_cmd");
        let canceller = e.canceller();
        let t = std::thread::spawn(move || {
            while !stepping.load(std::sync::atomic::Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
            canceller.cancel();
        });
        let r = e.run(&a, &AssemblyData::new()).unwrap();
        t.join().unwrap();
        assert_eq!(r.outcome, Outcome::Cancelled, "{clock}");
        assert!(r.ticks > 0);
        let log = log.lock().unwrap();
        assert_eq!(log.commands.last(), Some(&None), "{clock}: held after cancel");
    }
}

#[test]
fn a_second_run_while_busy_is_refused() {
    let (mut e, _) = engine(ClockKind::Virtual);
    let mut a = AssemblySpec::new("first");
    a.duration = Some(0.01);
    let handle = e.start_run(&a, &AssemblyData::new()).unwrap();
    let err = e.start_run(&a, &AssemblyData::new()).err().unwrap();
    assert!(err.to_string().contains("busy running 'first'"), "{err}");
    assert!(e.wait(handle).unwrap().outcome.is_ok());
}

#[test]
fn base_inputs_an_assembly_does_not_drive_hold() {
    use morc_kernel::IdealAxes;
    use morc_kernel::Value;
    let config = EngineConfig { period: 0.001, clock: ClockKind::Virtual, rt: RtPolicy::default() };
    let mut e = Engine::start(config, Box::new(IdealAxes::new(&[0.3, -0.2], 0.001, 1.0))).unwrap();
    // Watches the robot but commands nothing: the axes must stay, not go to 0.
    let mut a = AssemblySpec::new("watch");
    a.add_native("p", "probe", 1, &[("n", Value::Integer(2))]);
    a.connect("robot.q", "p.u");
    a.duration = Some(0.1);
    let r = e.run(&a, &AssemblyData::new()).unwrap();
    let Some(Value::Vector(q)) = r.data.get("p.u") else { panic!() };
    assert_eq!(&q[q.len() - 2..], &[0.3, -0.2]);
}

#[test]
fn a_reader_gets_the_running_assemblys_timing_while_it_runs() {
    let (mut e, _) = engine(ClockKind::Virtual);
    let cell = e.timing_cell();
    assert!(cell.latest().is_none(), "nothing ran yet");
    let mut a = AssemblySpec::new("endless");
    for (name, every) in [("fast", 1), ("slower", 4)] {
        a.add(
            name,
            "test",
            every,
            func(&[], &["y"], || {
                Box::new(|_, _, o| {
                    o[0].set_real(1.0);
                    Step::Continue
                })
            }),
        );
    }
    // The slower task stays on its Updater, which has it at every tick's end (when the copy is
    // made): its timing is copied when it comes home.
    a.keep_updaters = true;
    let handle = e.start_run(&a, &AssemblyData::new()).unwrap();
    // Copies as asked, each later than the one before: the run goes on (until cancelled).
    let copy = |after: u64| {
        let start = std::time::Instant::now();
        loop {
            cell.request();
            std::thread::sleep(Duration::from_millis(1));
            if let Some(t) = cell.latest().filter(|t| t.ticks > after) {
                return t;
            }
            assert!(start.elapsed() < Duration::from_secs(60), "no copy with more than {after} ticks");
        }
    };
    let first = copy(0);
    let second = copy(first.ticks);
    assert_eq!(second.assembly, "endless");
    assert_eq!(second.run, first.run);
    let names: Vec<&str> = second.components.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["fast", "slower"]);
    let fast = &second.components[0];
    assert!(fast.steps > 0 && fast.exec.count() == fast.steps && fast.steps <= second.ticks, "{} steps, {} timed, {} ticks", fast.steps, fast.exec.count(), second.ticks);
    assert!(second.components[1].steps > 0 && second.components[1].every == 4, "the slower task's component timed too");
    assert_eq!(second.cycle.count(), second.ticks);
    assert_eq!(second.late_ticks, 0, "the virtual clock counts none");
    e.cancel();
    let r = e.wait(handle).unwrap();
    assert_eq!(r.outcome, Outcome::Cancelled);
    assert!(r.ticks >= second.ticks);
}

/// One axis that rings after a fault: from the first stop on, its velocity is
/// `0.2·e^(−t/decay)·cos(2π·10 Hz·t)` rad/s (decay `None`: it never dies out), judged by the
/// standstill test the real bases use (0.5 % of a 2 rad/s limit: 0.01 rad/s).
struct RingingBase {
    info: morc_kernel::ComponentInfo,
    decay: Option<f64>,
    /// Stop ticks so far.
    stopped_for: u64,
    velocity: f64,
    standstill: morc_kernel::Standstill,
}

impl RingingBase {
    fn new(decay: Option<f64>) -> Self {
        use morc_kernel::{PortInfo, ValueType};
        let info = morc_kernel::ComponentInfo::new("ringing", "test base").output(PortInfo::new("qd", ValueType::Real)).input(PortInfo::new("v_cmd", ValueType::Real));
        let standstill = morc_kernel::Standstill::new(vec![morc_kernel::standstill_speed(2.0, 0.0)], 0.001);
        RingingBase { info, decay, stopped_for: 0, velocity: 0.0, standstill }
    }
}

impl morc_kernel::Base for RingingBase {
    fn info(&self) -> &morc_kernel::ComponentInfo {
        &self.info
    }
    fn sense(&mut self, _: u64, outputs: &mut [morc_kernel::Value]) -> Step {
        outputs[0].set_real(self.velocity);
        Step::Continue
    }
    fn actuate(&mut self, _: u64, _: Option<morc_kernel::Commands>) -> Step {
        Step::Continue
    }
    fn stop(&mut self, _: u64) -> Step {
        let t = self.stopped_for as f64 * 0.001;
        let envelope = self.decay.map_or(1.0, |tau| (-t / tau).exp());
        self.velocity = 0.2 * envelope * (std::f64::consts::TAU * 10.0 * t).cos();
        self.stopped_for += 1;
        self.standstill.observe([self.velocity]);
        Step::Continue
    }
    fn is_still(&self) -> bool {
        self.standstill.is_still()
    }
}

/// An assembly that faults at its 4th step.
fn faulting_at_step_3() -> AssemblySpec {
    let mut a = AssemblySpec::new("faulty");
    a.add("v", "test", 1, func(&[], &["y"], || Box::new(|ctx, _, _| if ctx.step == 3 { Step::Fault("following error".into()) } else { Step::Continue })));
    a
}

#[test]
fn a_robot_that_keeps_moving_after_a_fault_is_reported_after_the_stop_limit() {
    let config = EngineConfig { period: 0.001, clock: ClockKind::Virtual, rt: RtPolicy::default() };
    let mut e = Engine::start(config, Box::new(RingingBase::new(None))).unwrap();
    let r = e.run(&faulting_at_step_3(), &AssemblyData::new()).unwrap();
    let ticks = e.tick();
    let Outcome::Fault(f) = &r.outcome else { panic!("{:?}", r.outcome) };
    // Its velocity crosses zero every 50 ms: a crossing is no standstill.
    assert!(f.message.contains("the robot did not come to a standstill within 5.0 s"), "{}", f.message);
    assert!((5000..5010).contains(&ticks), "handed back after the 5 s limit: {ticks} ticks");
}

#[test]
fn a_ringing_robot_is_still_when_it_has_died_down_not_at_its_first_zero_crossing() {
    let config = EngineConfig { period: 0.001, clock: ClockKind::Virtual, rt: RtPolicy::default() };
    let mut e = Engine::start(config, Box::new(RingingBase::new(Some(0.05)))).unwrap();
    let r = e.run(&faulting_at_step_3(), &AssemblyData::new()).unwrap();
    let ticks = e.tick();
    let Outcome::Fault(f) = &r.outcome else { panic!("{:?}", r.outcome) };
    assert!(!f.message.contains("standstill"), "{}", f.message);
    // The velocity first crosses zero at 25 ms (an instantaneous test would hand back there);
    // the envelope falls below 0.01 rad/s at 0.05·ln 20 = 150 ms, and 20 ms of standstill
    // around a late crossing come a little earlier: handed back at 140 ms.
    assert!((100..200).contains(&ticks), "handed back after {ticks} ticks");
}
