//! `monitor`: following error and limits → fault naming the joint; completion → finish.

use std::sync::Arc;

use crate::{per_joint_unit, Robot};
use morc_kernel::*;
use morc_kernel::{Value, ValueType};

use super::kind_doc;

/// Watches a motion: following error |q_ref − q| and the joints' position, velocity and
/// torque limits (fault naming the joint), and completion: `done` and every joint within
/// `tolerance` of the reference (finish). Reports the peak and final following errors.
///
/// On a base whose measurements lag (a bus: [`Base::latency`] cycles), q is compared with the
/// reference of as many cycles earlier, so the error is the robot's following, not the bus's
/// delay; the run's finish message and the result `error_delay` say by how many cycles.
pub struct Monitor {
    info: ComponentInfo,
    robot: Arc<Robot>,
    /// The last `delay + 1` references, joint-major per step (a ring, sized in `initialize`).
    history: Vec<f64>,
    /// Where the current step's reference goes in `history` (in steps).
    head: usize,
    /// Cycles the reference is delayed by: the base's latency.
    delay: usize,
    peak: Vec<f64>,
    last: Vec<f64>,
    /// Per joint, in its SI unit (rad; m for a prismatic joint).
    max_error: Vec<f64>,
    tolerance: Vec<f64>,
    check_torque: bool,
    /// Per joint, how far outside its position limits it stood when the monitor started (0:
    /// within): a robot moved there by hand may move back, no further out.
    start_excess: Vec<f64>,
}

impl Monitor {
    /// The `monitor` component of `robot`, checking against its joint limits.
    pub fn new(robot: Arc<Robot>) -> Self {
        let n = robot.dof();
        let info = ComponentInfo::new("monitor", kind_doc("monitor"))
            .input(robot.joint_port("q_ref", "rad", "m").required())
            .input(robot.joint_port("q", "rad", "m").required())
            .input(robot.joint_port("qd", "rad/s", "m/s"))
            .input(robot.joint_port("tau", "N·m", "N"))
            .input(PortInfo::new("done", ValueType::Boolean).doc("the reference has arrived (connect ptp.done); unconnected: never"))
            .output(robot.joint_port("error", "rad", "m").doc("following error q_ref − q"))
            .param(
                ParamInfo::new("max_error", Value::Vector(per_joint(&robot, 5f64.to_radians(), 5e-3)))
                    .unit(&per_joint_unit("rad", "m"))
                    .doc("largest following error allowed, per joint (one value for every joint, or one per joint; 5° or 5 mm)"),
            )
            .param(
                ParamInfo::new("tolerance", Value::Real(0.0))
                    .unit(&per_joint_unit("rad", "m"))
                    .doc("completion: done and every joint this close (one value for every joint, or one per joint; 0: the monitor does not finish)"),
            )
            .param(ParamInfo::new("check_torque", Value::Boolean(true)).doc("fault when a drive saturates at its torque limit"));
        Monitor {
            info,
            history: Vec::new(),
            head: 0,
            delay: 0,
            peak: vec![0.0; n],
            last: vec![0.0; n],
            max_error: vec![0.0; n],
            tolerance: vec![0.0; n],
            check_torque: true,
            start_excess: vec![0.0; n],
            robot,
        }
    }
}

/// How far `q` is outside `limits` (0 within; NaN for NaN).
fn excess(q: f64, limits: &crate::Limits) -> f64 {
    if q.is_nan() {
        f64::NAN
    } else {
        (q - limits.upper).max(limits.lower - q).max(0.0)
    }
}

/// A value per joint of `robot`: `revolute` for a turning joint, `prismatic` for a sliding one.
fn per_joint(robot: &Robot, revolute: f64, prismatic: f64) -> Vec<f64> {
    (0..robot.dof()).map(|i| if robot.is_prismatic(i) { prismatic } else { revolute }).collect()
}

impl Monitor {
    /// Parameter `name` per joint: one value for every joint, or one per joint.
    fn per_joint(&self, name: &str) -> Result<Vec<f64>, String> {
        let n = self.robot.dof();
        match self.info.param_value(name) {
            Some(Value::Vector(x)) if x.len() == n => Ok(x.clone()),
            Some(Value::Vector(x)) if x.len() == 1 => Ok(vec![x[0]; n]),
            Some(v @ (Value::Real(_) | Value::Integer(_))) => Ok(vec![v.real(); n]),
            Some(Value::Vector(x)) => Err(format!("{name} has {} values: give one for every joint, or {n}, one per joint", x.len())),
            _ => Err(format!("{name} must be a number, or {n}: one per joint")),
        }
    }
}

impl Component for Monitor {
    morc_kernel::component_info!(info);
    fn configure(&mut self) -> Result<(), String> {
        self.per_joint("max_error")?;
        self.per_joint("tolerance")?;
        Ok(())
    }
    fn initialize(&mut self, ctx: &InitContext, _: &mut [Value]) -> Result<(), String> {
        // Preallocated here, off the real-time path; a step only overwrites it.
        self.delay = ctx.base_latency as usize;
        self.history = vec![0.0; (self.delay + 1) * self.robot.dof()];
        self.head = 0;
        (self.max_error, self.tolerance) = (self.per_joint("max_error")?, self.per_joint("tolerance")?);
        self.check_torque = self.info.boolean("check_torque");
        self.peak.fill(0.0);
        Ok(())
    }
    fn step(&mut self, ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        let (q, qd, tau) = (inputs[1].as_slice(), inputs[2].as_slice(), inputs[3].as_slice());
        let n = self.robot.dof();
        if ctx.step == 0 {
            // Before the first reference there was none: the robot held the first one.
            for k in 0..=self.delay {
                self.history[k * n..(k + 1) * n].copy_from_slice(inputs[0].as_slice());
            }
            for (i, j) in self.robot.joints.iter().enumerate() {
                self.start_excess[i] = excess(q[i], &j.limits);
            }
        }
        self.history[self.head * n..(self.head + 1) * n].copy_from_slice(inputs[0].as_slice());
        self.head = (self.head + 1) % (self.delay + 1);
        // The oldest in the ring: the reference `delay` steps ago (the current one when 0).
        let q_ref = &self.history[self.head * n..(self.head + 1) * n];
        let done = inputs[4].boolean();
        let mut settled = done;
        for (i, j) in self.robot.joints.iter().enumerate() {
            let e = q_ref[i] - q[i];
            outputs[0].as_mut_slice()[i] = e;
            self.last[i] = e;
            self.peak[i] = self.peak[i].max(e.abs());
            settled &= e.abs() <= self.tolerance[i];
            let l = &j.limits;
            let fault = |what: String| Step::Fault(format!("monitor: joint {} at t = {:.3} s: {what}", j.name, ctx.time));
            let r = &self.robot;
            if e.is_nan() || e.abs() > self.max_error[i] {
                return fault(format!("following error {} exceeds {}", r.show(i, e, 3), r.show(i, self.max_error[i], 3)));
            }
            let out = excess(q[i], l);
            if out.is_nan() || (out > 0.0 && (self.start_excess[i] == 0.0 || out > self.start_excess[i] + self.max_error[i])) {
                return fault(format!("position {} outside [{}, {}]", r.show(i, q[i], 3), r.show(i, l.lower, 1), r.show(i, l.upper, 1)));
            }
            if qd[i].abs() > l.velocity {
                return fault(format!("velocity {} exceeds {}", r.show_rate(i, qd[i], 2), r.show_rate(i, l.velocity, 1)));
            }
            if self.check_torque && tau[i].abs() >= l.torque {
                return fault(format!("torque {:.1} N·m at the drive's limit {:.1} N·m", tau[i], l.torque));
            }
        }
        if settled && self.tolerance.iter().all(|&t| t > 0.0) {
            // The worst joint relative to its tolerance, in its own unit.
            let (i, e) = self
                .last
                .iter()
                .enumerate()
                .fold((0, 0.0f64), |(wi, we), (i, e)| if e.abs() / self.tolerance[i] > we.abs() / self.tolerance[wi] { (i, *e) } else { (wi, we) });
            let delayed = if self.delay > 0 { format!(" (q against the reference {} cycles earlier: the bus's latency)", self.delay) } else { String::new() };
            return Step::Finish(format!("monitor: target reached, final error {}{delayed}", self.robot.show(i, e.abs(), 4)));
        }
        Step::Continue
    }
    fn terminate(&mut self, results: &mut AssemblyResults) {
        results.set("peak_error", Value::Vector(self.peak.clone()));
        results.set("final_error", Value::Vector(self.last.clone()));
        results.set("peak_error_max", Value::Real(self.peak.iter().fold(0.0, |m: f64, e| m.max(*e))));
        results.set("error_delay", Value::Integer(self.delay as i64));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::{JointDrive, Limits, RobotJoint};

    /// The arm of tests/data/finger_arm.urdf: three revolute joints and a prismatic finger.
    fn finger_arm() -> Arc<Robot> {
        let model = morc_model::load_urdf(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/finger_arm.urdf")).unwrap();
        let joints = (0..model.nv())
            .map(|i| RobotJoint {
                name: model.joint_names()[i + 1].clone(),
                drive: JointDrive { slave: i as u32 + 1, gear: 1.0, counts: Some(1.0), offset: 0.0, direction: 1.0, ..Default::default() },
                limits: Limits { lower: -1.0, upper: 1.0, velocity: 1.0, acceleration: 1.0, torque: 100.0 },
            })
            .collect();
        Arc::new(Robot::new("finger arm", model, joints, "tests").unwrap())
    }

    #[test]
    fn its_limits_are_per_joint_in_each_joints_si_unit() {
        let robot = finger_arm();
        assert!(robot.is_prismatic(3) && !robot.is_prismatic(0));
        let mut m = Monitor::new(robot.clone());
        let declared = &m.info().params.iter().find(|p| p.name == "max_error").unwrap().unit;
        assert_eq!((robot.unit_of_joint(declared, 0), robot.unit_of_joint(declared, 3)), ("rad", "m"));
        // 5° on the turning joints, 5 mm on the finger: no joint reads another's unit.
        m.configure().unwrap();
        assert_eq!(m.per_joint("max_error").unwrap(), [5f64.to_radians(), 5f64.to_radians(), 5f64.to_radians(), 5e-3]);
        // One number is every joint's, in its SI unit, as a Rust caller gives it.
        m.set_parameter("max_error", &Value::Real(1e-3)).unwrap();
        assert_eq!(m.per_joint("max_error").unwrap(), [1e-3; 4]);
        m.set_parameter("tolerance", &Value::Vector(vec![0.1, 0.2, 0.3, 4e-3])).unwrap();
        assert_eq!(m.per_joint("tolerance").unwrap(), [0.1, 0.2, 0.3, 4e-3]);
        m.set_parameter("tolerance", &Value::Vector(vec![0.1, 0.2])).unwrap();
        let e = m.configure().unwrap_err();
        assert!(e.contains("tolerance has 2 values") && e.contains("or 4, one per joint"), "{e}");
    }
}
