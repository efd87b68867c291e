//! The simulated robot as the engine's base: it follows a PTP, holds against gravity when
//! nothing commands it, and gives bit-identical motion on the virtual and the wall clock.

mod robot_support;

use morc_kernel::AssemblyData;
use morc_kernel::AssemblySpec;
use morc_kernel::ClockKind;
use morc_kernel::Outcome;
use morc_kernel::Value;
use morc_robot::components::factory;
use robot_support::*;

const Q0: [f64; 6] = [0.0, -1.2, 1.4, -0.5, 0.3, 0.0];

fn ptp_assembly(robot: &std::sync::Arc<morc_robot::Robot>, target: &[f64], feed_forward: bool) -> AssemblySpec {
    let mut a = AssemblySpec::new("ptp");
    a.add("traj", "ptp", 1, factory(robot, "ptp").unwrap());
    a.components.last_mut().unwrap().params = vec![("target".into(), Value::Vector(target.to_vec())), ("settle".into(), Value::Real(0.3))];
    a.add("mon", "monitor", 1, factory(robot, "monitor").unwrap());
    a.connect("robot.q", "traj.start")
        .connect("traj.q", "robot.q_cmd")
        .connect("traj.qd", "robot.qd_ff")
        .connect("traj.q", "mon.q_ref")
        .connect("robot.q", "mon.q")
        .connect("robot.qd", "mon.qd")
        .connect("robot.tau", "mon.tau");
    if feed_forward {
        a.add("ff", "rnea", 1, factory(robot, "rnea").unwrap());
        a.connect("traj.q", "ff.q").connect("traj.qd", "ff.qd").connect("traj.qdd", "ff.qdd").connect("ff.tau", "robot.tau_ff");
    }
    a
}

fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).fold(0.0, |m, (x, y)| m.max((x - y).abs()))
}

#[test]
fn ur5_ptp_reaches_its_target() {
    let robot = ur5();
    let mut engine = engine(&robot, &Q0, ClockKind::Virtual);
    let target = [0.3, -1.0, 1.2, -0.3, 0.5, 0.2];
    let (f, trace) = tracer(6);
    let mut a = ptp_assembly(&robot, &target, true);
    a.add("q", "trace", 1, f).connect("robot.q", "q.u");
    let r = engine.run(&a, &AssemblyData::new()).unwrap();
    assert!(matches!(&r.outcome, Outcome::Finished(reason) if reason.contains("ptp: arrived")), "{}", r.report());
    let last = trace.lock().unwrap().last().unwrap().clone();
    let err = max_abs_diff(&last, &target);
    assert!(err < 1e-3, "final error {err} rad at {last:?}");
    let peak = r.data.get("mon.peak_error_max").unwrap().real();
    eprintln!("UR5 PTP: {} ticks, final error {:.2e} rad, peak following error {:.2e} rad", r.ticks, err, peak);
}

#[test]
fn ur5_holds_against_gravity_when_not_commanded() {
    let robot = ur5();
    let mut engine = engine(&robot, &Q0, ClockKind::Virtual);
    // An assembly that only watches: the robot's inputs are not driven, so it holds.
    let (f, trace) = tracer(6);
    let mut a = AssemblySpec::new("watch");
    a.add("q", "trace", 1, f).connect("robot.q", "q.u");
    a.duration = Some(2.0);
    let r = engine.run(&a, &AssemblyData::new()).unwrap();
    assert_eq!(r.outcome, Outcome::Finished("duration".into()));
    let sag = trace.lock().unwrap().iter().fold(0.0, |m: f64, q| m.max(max_abs_diff(q, &Q0)));
    assert!(sag < 1e-4, "sagged {sag} rad");
    // After a motion, it holds where the motion ended (latched at the switch).
    let target = [0.2, -1.1, 1.3, -0.5, 0.3, 0.1];
    engine.run(&ptp_assembly(&robot, &target, false), &AssemblyData::new()).unwrap();
    let (f, trace) = tracer(6);
    let mut a = AssemblySpec::new("watch");
    a.add("q", "trace", 1, f).connect("robot.q", "q.u");
    a.duration = Some(2.0);
    engine.run(&a, &AssemblyData::new()).unwrap();
    let samples = trace.lock().unwrap();
    let drift = samples.iter().fold(0.0, |m: f64, q| m.max(max_abs_diff(q, &samples[0])));
    assert!(drift < 1e-4, "drifted {drift} rad while holding");
    assert!(max_abs_diff(&samples[0], &target) < 2e-3);
}

#[test]
fn motion_is_bit_identical_on_virtual_and_wall_clock() {
    let robot = ur5();
    let target = [0.05, -1.15, 1.35, -0.5, 0.3, 0.0];
    let run = |clock| {
        let mut engine = engine(&robot, &Q0, clock);
        let (f, trace) = tracer(6);
        let mut a = ptp_assembly(&robot, &target, true);
        a.add("q", "trace", 1, f).connect("robot.q", "q.u");
        let r = engine.run(&a, &AssemblyData::new()).unwrap();
        assert!(r.outcome.is_ok(), "{}", r.report());
        let t = trace.lock().unwrap().clone();
        t
    };
    let (v, w) = (run(ClockKind::Virtual), run(ClockKind::Wall));
    assert!(v.len() > 100);
    let bits = |t: &[Vec<f64>]| t.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&v), bits(&w), "virtual and wall clock differ");
}

#[test]
fn monitor_faults_naming_the_joint_and_ptp_rejects_targets_outside_limits() {
    let robot = ur5();
    let mut engine = engine(&robot, &Q0, ClockKind::Virtual);
    let mut a = ptp_assembly(&robot, &[0.5, -1.2, 1.4, -0.5, 0.3, 0.0], false);
    a.components.iter_mut().find(|c| c.name == "mon").unwrap().params = vec![("max_error".into(), Value::Real(1e-5))];
    let r = engine.run(&a, &AssemblyData::new()).unwrap();
    match &r.outcome {
        Outcome::Fault(f) => assert!(f.message.contains("joint shoulder_pan_joint") && f.message.contains("following error"), "{}", f.message),
        other => panic!("expected a fault, got {other:?}"),
    }
    let a = ptp_assembly(&robot, &[0.0, -1.2, 4.0, -0.5, 0.3, 0.0], false);
    let e = engine.run(&a, &AssemblyData::new()).err().expect("target outside the limits").to_string();
    assert!(e.contains("elbow_joint") && e.contains("outside its limits"), "{e}");
}

#[test]
fn a_payload_changed_at_runtime_reaches_the_running_plant_and_feed_forward() {
    // The change lands in the middle of a running assembly: at its step 300 a component stops
    // the engine (virtual clock) until the test has published the new model, so where it lands
    // depends on no machine's speed.
    const AT: u64 = 300;
    let robot = ur5();
    let mut engine = engine(&robot, &Q0, ClockKind::Virtual);
    let mut a = ptp_assembly(&robot, &Q0, true);
    a.components[0].params.push(("settle".into(), Value::Real(-1.0)));
    let (f, feed_forward) = tracer(6);
    a.add("tau", "trace", 1, f).connect("ff.tau", "tau.u");
    let (f, measured) = tracer(6);
    a.add("q", "trace", 1, f).connect("robot.q", "q.u");
    let (reached, at_step) = std::sync::mpsc::channel::<()>();
    let (published, publish) = std::sync::mpsc::channel::<()>();
    let pause = std::sync::Mutex::new(Some((reached, publish)));
    a.add(
        "pause",
        "pause",
        1,
        morc_test_support::doubles::func(&[], &[], move || {
            let (reached, publish) = pause.lock().unwrap().take().expect("one pause component");
            Box::new(move |ctx: &morc_kernel::StepContext, _: &[Value], _: &mut [Value]| {
                if ctx.step == AT {
                    reached.send(()).unwrap();
                    publish.recv().unwrap();
                }
                morc_kernel::Step::Continue
            })
        }),
    );
    a.duration = Some(0.8);
    let handle = engine.start_run(&a, &AssemblyData::new()).unwrap();
    at_step.recv_timeout(std::time::Duration::from_secs(60)).expect("the run reached its step 300");
    // 5 kg at the flange: the new model is built here, off the real-time path, and published.
    let mut loaded = (*robot.unloaded).clone();
    morc_robot::add_payload(&mut loaded, 5.0, nalgebra::Vector3::new(0.0, 0.0, 0.05), nalgebra::Matrix3::zeros()).unwrap();
    let swapped = robot.swapped(loaded, Some(5.0)).unwrap();
    published.send(()).unwrap();
    let result = engine.wait(handle).unwrap();
    assert_eq!(result.outcome, Outcome::Finished("duration".into()));
    let tau = feed_forward.lock().unwrap();
    let (first, last) = (&tau[5], tau.last().unwrap());
    // Shoulder and elbow carry the extra 5 kg against gravity from the swap on.
    assert!((last[1] - first[1]).abs() > 5.0 && (last[2] - first[2]).abs() > 2.0, "{first:?} → {last:?}");
    let changed_at = tau.iter().position(|t| (t[1] - first[1]).abs() > 1.0).unwrap() as u64;
    assert!((AT..=AT + 2).contains(&changed_at), "published at step {AT}, the feed-forward changed at sample {changed_at} of {}", tau.len());
    // The plant carries it too; the drives hold the arm (the sag is corrected).
    let q = measured.lock().unwrap();
    let sag = q.iter().fold(0.0, |m: f64, x| m.max(max_abs_diff(x, &Q0)));
    assert!(sag < 1e-3, "sagged {sag} rad");
    // New components built from the swapped robot start with the payload.
    assert_eq!(swapped.payload, Some(5.0));
    assert!(std::sync::Arc::ptr_eq(&swapped.live, &robot.live));
}
