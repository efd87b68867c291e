//! The simulated robot's `sense`/`actuate` and the robot components' `step` allocate
//! nothing: a counting global allocator is armed around a steady-state loop of them.
//! Counted on the test's thread only, which is where this loop runs the real-time path: other
//! threads (the test harness's, a retired model being dropped) may allocate meanwhile.

mod robot_support;

use morc_test_support::alloc::{allocates_nothing, allocations_during, assert_allocated_nothing, control_allocation, CountingAllocator};

use morc_kernel::AssemblyData;
use morc_kernel::*;
use morc_kernel::{Base, Commands};
use morc_kernel::{Value, ValueType};
use morc_model::rpy_from_rotation;
use morc_motion::{Kinematics, Move, MoveSpec};
use morc_robot::components::trajectory::moves_value;
use morc_robot::components::{Monitor, MotionTrajectory, RigidBodyFeedForward};
use morc_robot::RobotKinematics;
use morc_robot::SimulatedRobot;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn outputs(info: &ComponentInfo) -> Vec<Value> {
    info.outputs.iter().map(|p| Value::zero(p.ty)).collect()
}

#[test]
fn simulated_robot_and_robot_components_do_not_allocate() {
    let robot = robot_support::ur5();
    let q0 = [0.0, -1.2, 1.4, -0.5, 0.3, 0.0];
    let mut base = SimulatedRobot::new(robot.clone(), &q0, robot_support::T).unwrap();
    let mut traj = MotionTrajectory::new(robot.clone(), "ptp");
    traj.set_parameter("target", &Value::Vector(vec![0.3, -1.0, 1.2, -0.3, 0.5, 0.2])).unwrap();
    traj.set_parameter("settle", &Value::Real(-1.0)).unwrap();
    traj.configure().unwrap();
    let mut ff = RigidBodyFeedForward::new(robot.clone());
    let mut mon = Monitor::new(robot.clone());
    let data = AssemblyData::new();
    let thread = StepThread::default();
    let ctx = |name| InitContext { name, period: robot_support::T, base_period: robot_support::T, data: &data, thread: &thread, base_latency: 0 };
    let (mut traj_out, mut ff_out, mut mon_out) = (outputs(traj.info()), outputs(ff.info()), outputs(mon.info()));
    traj.initialize(&ctx("traj"), &mut traj_out).unwrap();
    ff.initialize(&ctx("ff"), &mut ff_out).unwrap();
    // As on a bus: the monitor's reference delay line is stepped too.
    mon.initialize(&InitContext { base_latency: 2, ..ctx("mon") }, &mut mon_out).unwrap();
    let mut sensed = outputs(base.info());
    let mut commands = vec![Value::zero(ValueType::Vector(6)); 3];
    let driven = [true, true, true];
    let mut mon_in = vec![Value::zero(ValueType::Vector(6)); 4];
    mon_in.push(Value::Boolean(false));
    let mut loop_once = |tick: u64, commanded: bool| {
        base.sense(tick, &mut sensed);
        let step = StepContext { step: tick, time: tick as f64 * robot_support::T, period: robot_support::T };
        assert_eq!(traj.step(&step, &sensed[..1], &mut traj_out), Step::Continue);
        ff.step(&step, &traj_out[..3], &mut ff_out);
        mon_in[0].copy_from(&traj_out[0]);
        for i in 0..3 {
            mon_in[i + 1].copy_from(&sensed[i]);
        }
        assert_eq!(mon.step(&step, &mon_in, &mut mon_out), Step::Continue);
        commands[0].copy_from(&traj_out[0]);
        commands[1].copy_from(&traj_out[1]);
        commands[2].copy_from(&ff_out[0]);
        let c = if commanded { Some(Commands::new(&commands, &driven)) } else { None };
        base.actuate(tick, c);
    };
    // A blended path of PTP, LIN, CIRC and a spline plans at its first step and steps
    // through IK (UR5: damped least squares): counted from the first step on.
    let mut kinematics = RobotKinematics::new(robot.clone());
    let pose_at = |k: &mut RobotKinematics, q: &[f64]| {
        let p = k.tool_pose(q);
        let r = rpy_from_rotation(&p.rotation);
        [p.translation.x, p.translation.y, p.translation.z, r.x, r.y, r.z]
    };
    let q1 = [0.2, -1.1, 1.3, -0.4, 0.4, 0.1];
    let lin_target = pose_at(&mut kinematics, &[0.3, -1.0, 1.2, -0.3, 0.5, 0.2]);
    let circ_target = pose_at(&mut kinematics, &[0.5, -1.0, 1.1, -0.3, 0.5, 0.2]);
    let via = pose_at(&mut kinematics, &[0.4, -0.95, 1.1, -0.3, 0.5, 0.2]);
    let moves = [
        MoveSpec { motion: Move::Ptp { target: q1.to_vec() }, blend: 0.02, velocity_scale: 1.0 },
        MoveSpec { motion: Move::Lin { target: lin_target }, blend: 0.02, velocity_scale: 0.5 },
        MoveSpec { motion: Move::Circ { via: [via[0], via[1], via[2]], target: circ_target }, blend: 0.0, velocity_scale: 1.0 },
        MoveSpec { motion: Move::Spline { points: [q1, q0].concat() }, blend: 0.0, velocity_scale: 1.0 },
    ];
    let mut path = MotionTrajectory::new(robot.clone(), "path");
    path.set_parameter("moves", &moves_value(&moves)).unwrap();
    path.set_parameter("ramp", &Value::Real(0.05)).unwrap();
    path.set_parameter("filter", &Value::Real(20.0)).unwrap();
    path.set_parameter("settle", &Value::Real(-1.0)).unwrap();
    path.configure().unwrap();
    let mut path_out = outputs(path.info());
    path.initialize(&ctx("path"), &mut path_out).unwrap();
    let start = [Value::Vector(q0.to_vec())];
    let mut path_steps = 0;
    allocates_nothing("planning and stepping a path", || {
        for tick in 0..20_000u64 {
            let step = StepContext { step: tick, time: tick as f64 * robot_support::T, period: robot_support::T };
            match path.step(&step, &start, &mut path_out) {
                Step::Continue => path_steps += 1,
                other => panic!("{other:?}"),
            }
            if path_out[3].boolean() {
                break;
            }
        }
    });
    assert!(path_steps > 500, "the path ran {path_steps} steps");

    // Warm up (first steps may size things), then count over commanded and holding ticks.
    for tick in 0..10 {
        loop_once(tick, true);
    }
    let mut counted = allocations_during(|| {
        control_allocation();
        (10..200).for_each(|tick| loop_once(tick, true));
    });
    // A payload published mid-run (the publishing allocates, off the real-time path, so it is
    // not counted): plant and feed-forward pick it up at their next step without allocating.
    let mut loaded = (*robot.unloaded).clone();
    morc_robot::add_payload(&mut loaded, 3.0, nalgebra::Vector3::zeros(), nalgebra::Matrix3::zeros()).unwrap();
    robot.swapped(loaded, Some(3.0)).unwrap();
    counted += allocations_during(|| (200..600).for_each(|tick| loop_once(tick, tick < 450)));
    assert_allocated_nothing("590 ticks of the real-time path, commanded and holding, a payload published among them", counted);
}

#[test]
fn jogging_and_override_changes_do_not_allocate() {
    use morc_robot::operator::{JogCommand, JogFrame};
    // Counted per step on this thread (the other test of this binary runs meanwhile); a step
    // that ends the run may allocate its reason, so only the steps that go on are counted.
    let robot = robot_support::ur5();
    let q0 = [0.0, -1.2, 1.4, -0.5, 0.3, 0.0];
    let data = AssemblyData::new();
    let thread = StepThread::default();
    let ctx = InitContext { name: "c", period: robot_support::T, base_period: robot_support::T, data: &data, thread: &thread, base_latency: 0 };
    let start = [Value::Vector(q0.to_vec())];
    let step = |tick: u64| StepContext { step: tick, time: tick as f64 * robot_support::T, period: robot_support::T };
    // A motion whose override changes while it runs (set off the real-time path, read by the step).
    let mut traj = MotionTrajectory::new(robot.clone(), "ptp");
    traj.set_parameter("target", &Value::Vector(vec![0.3, -1.0, 1.2, -0.3, 0.5, 0.2])).unwrap();
    traj.set_parameter("settle", &Value::Real(-1.0)).unwrap();
    traj.configure().unwrap();
    let mut traj_out = outputs(traj.info());
    traj.initialize(&ctx, &mut traj_out).unwrap();
    traj.step(&step(0), &start, &mut traj_out);
    let mut allocations = allocations_during(control_allocation);
    for tick in 1..3000u64 {
        if tick == 300 || tick == 900 {
            robot.operator.set_override(if tick == 300 { 0.2 } else { 1.0 }).unwrap();
        }
        allocations += allocations_during(|| assert_eq!(traj.step(&step(tick), &start, &mut traj_out), Step::Continue));
    }
    assert_allocated_nothing("stepping a motion whose override changes", allocations);
    let mut allocations = allocations_during(control_allocation);
    // A Cartesian jog (Jacobian, pseudo-inverse, singular values, limits), then a joint jog.
    let mut jog = morc_robot::components::Jog::new(robot.clone());
    jog.configure().unwrap();
    let mut jog_out = outputs(jog.info());
    jog.initialize(&ctx, &mut jog_out).unwrap();
    robot.operator.jog(JogCommand { frame: JogFrame::Tool, axis: 1, direction: 1.0, speed: 0.5, time: 0.5, ..JogCommand::default() });
    jog.step(&step(0), &start, &mut jog_out);
    let mut steps = 0;
    for tick in 1..5000u64 {
        if tick == 400 {
            robot.operator.jog(JogCommand { frame: JogFrame::Joint, axis: 2, direction: -1.0, speed: 0.5, step: 0.1, ..JogCommand::default() });
        }
        let mut r = Step::Continue;
        let n = allocations_during(|| r = jog.step(&step(tick), &start, &mut jog_out));
        if r != Step::Continue {
            break;
        }
        allocations += n;
        steps += 1;
    }
    assert_allocated_nothing("jogging, Cartesian then joint", allocations);
    assert!(steps > 500, "the jogs ran {steps} steps");
}

/// The elastic arm's plant (motors and links, its substeps and its mass matrix factored every
/// base period) allocates nothing either.
#[test]
fn an_elastic_simulated_robot_does_not_allocate() {
    let rigid = robot_support::ur5();
    let mut model = (*rigid.model).clone();
    for j in 1..model.njoints() {
        let d = morc_model::DriveTrain { armature: 0.5, viscous_friction: 2.0, coulomb_friction: 1.0, stiffness: 2e4, damping: 20.0 };
        model.set_drive_train(j, d).unwrap();
    }
    let robot = std::sync::Arc::new(morc_robot::Robot::new("elastic UR5", model, rigid.joints.clone(), "tests").unwrap());
    let q0 = [0.0, -1.2, 1.4, -0.5, 0.3, 0.0];
    let mut base = SimulatedRobot::new(robot.clone(), &q0, robot_support::T).unwrap();
    let mut sensed = outputs(base.info());
    assert_eq!(sensed.len(), 5, "q, qd, tau, q_link, qd_link");
    let mut commands = vec![Value::Vector(q0.to_vec()), Value::zero(ValueType::Vector(6)), Value::zero(ValueType::Vector(6))];
    let driven = [true, true, false];
    for tick in 0..10 {
        base.sense(tick, &mut sensed);
        base.actuate(tick, Some(Commands::new(&commands, &driven)));
    }
    allocates_nothing("stepping the elastic arm", || {
        for tick in 10..1000u64 {
            base.sense(tick, &mut sensed);
            commands[0].as_mut_slice()[0] = 0.2 * (tick as f64 * robot_support::T).sin();
            assert_eq!(base.actuate(tick, Some(Commands::new(&commands, &driven))), Step::Continue);
        }
    });
    let (motor, link) = (sensed[0].as_slice()[0], sensed[3].as_slice()[0]);
    assert!(motor != link && (motor - link).abs() < 0.01, "the link follows its motor through the spring: {motor} vs {link}");
}
