//! Shared by the robot tests: a UR5 robot straight from its URDF, engines on a simulated
//! robot, and a component that keeps every sample of a vector signal.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use morc_kernel::rt::RtPolicy;
use morc_kernel::ClockKind;
use morc_kernel::Factory;
use morc_kernel::*;
use morc_kernel::{Engine, EngineConfig};
use morc_kernel::{Value, ValueType};
use morc_robot::{JointDrive, Limits, Robot, RobotJoint, SimulatedRobot};

pub const T: f64 = 0.001;

pub fn ur5() -> Arc<Robot> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/robots/ur5/ur5_robot.urdf");
    let model = morc_model::load_urdf(path).unwrap();
    let joints = model.joint_names()[1..]
        .iter()
        .zip(model.limits())
        .enumerate()
        .map(|(i, (name, l))| RobotJoint {
            name: name.clone(),
            drive: JointDrive { slave: i as u32 + 1, gear: 101.0, counts: Some(524288.0), offset: 0.0, direction: 1.0, ..Default::default() },
            limits: Limits { lower: l.lower, upper: l.upper, velocity: l.velocity, acceleration: 8.0, torque: l.effort },
        })
        .collect();
    Arc::new(Robot::new("UR5", model, joints, "tests").unwrap())
}

pub fn engine(robot: &Arc<Robot>, q0: &[f64], clock: ClockKind) -> Engine {
    let base = SimulatedRobot::new(robot.clone(), q0, T).unwrap();
    Engine::start(EngineConfig { period: T, clock, rt: RtPolicy::default() }, Box::new(base)).unwrap()
}

/// Samples of a vector input, shared with the test.
pub type Trace = Arc<Mutex<Vec<Vec<f64>>>>;

struct TraceComponent {
    info: ComponentInfo,
    trace: Trace,
}

impl Component for TraceComponent {
    morc_kernel::component_info!(info);
    fn initialize(&mut self, _: &InitContext, _: &mut [Value]) -> Result<(), String> {
        Ok(())
    }
    fn step(&mut self, _: &StepContext, inputs: &[Value], _: &mut [Value]) -> Step {
        self.trace.lock().unwrap().push(inputs[0].as_slice().to_vec());
        Step::Continue
    }
}

/// A component that appends every sample of its vector input `u` to the returned trace.
pub fn tracer(n: usize) -> (Factory, Trace) {
    let trace: Trace = Arc::default();
    let t = trace.clone();
    let factory: Factory = Arc::new(move || {
        let info = ComponentInfo::new("trace", "keeps samples").input(PortInfo::new("u", ValueType::Vector(n)).required());
        Ok(Box::new(TraceComponent { info, trace: t.clone() }) as Box<dyn Component>)
    });
    (factory, trace)
}
