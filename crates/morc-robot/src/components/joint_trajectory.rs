//! A timed joint trajectory (kind `joint_trajectory`): the points of a
//! `trajectory_msgs/JointTrajectory` at their times from start, as MoveIt plans them and a
//! FollowJointTrajectory goal carries them ([`morc_motion::TimedTrajectory`]: quintic segments
//! through each point's position, velocity and acceleration). Built and checked against the
//! joints' position, velocity and acceleration limits in `configure`, off the real-time path;
//! a step samples it. It drops in for the trajectory generator: outputs q, q̇, q̈, the tool
//! position and `done`.

use std::sync::Arc;

use crate::{Robot, RobotKinematics};
use morc_kernel::*;
use morc_kernel::{Value, ValueType};
use morc_motion::{Kinematics, TimedPoint, TimedTrajectory};

use super::kind_doc;

/// How close the robot must be to the first point when the trajectory starts: 0.5° (rad), and
/// 0.5 mm for a prismatic joint (m).
pub fn start_tolerance(prismatic: bool) -> f64 {
    if prismatic {
        0.5e-3
    } else {
        0.5f64.to_radians()
    }
}

/// The timed trajectory component.
pub struct JointTrajectory {
    info: ComponentInfo,
    robot: Arc<Robot>,
    kinematics: RobotKinematics,
    trajectory: Option<TimedTrajectory>,
    settle_steps: u64,
    arrival_step: Option<u64>,
}

/// `trajectory` checked against `robot`'s joint limits (positions, velocities and accelerations
/// sampled every millisecond and at every point): what the first limit it breaks is, where.
pub fn check_limits(robot: &Robot, trajectory: &TimedTrajectory) -> Result<(), String> {
    for (j, e) in trajectory.extremes(1e-3).iter().enumerate() {
        let joint = &robot.joints[j];
        let (scale, unit) = crate::joint_unit(robot.is_prismatic(j));
        let at = |t: f64| format!("at {t:.3} s");
        if e.min_position.0 < joint.limits.lower || e.max_position.0 > joint.limits.upper {
            let (x, t) = if e.min_position.0 < joint.limits.lower { e.min_position } else { e.max_position };
            return Err(format!("joint {} goes to {:.3}{unit} {}, outside its limits [{:.3}, {:.3}]{unit}", joint.name, x * scale, at(t), joint.limits.lower * scale, joint.limits.upper * scale));
        }
        if e.velocity.0 > joint.limits.velocity * (1.0 + 1e-9) {
            return Err(format!("joint {} moves at {:.3}{unit}/s {}, over its velocity limit {:.3}{unit}/s", joint.name, e.velocity.0 * scale, at(e.velocity.1), joint.limits.velocity * scale));
        }
        if e.acceleration.0 > joint.limits.acceleration * (1.0 + 1e-9) {
            return Err(format!(
                "joint {} accelerates at {:.3}{unit}/s² {}, over its acceleration limit {:.3}{unit}/s²",
                joint.name,
                e.acceleration.0 * scale,
                at(e.acceleration.1),
                joint.limits.acceleration * scale
            ));
        }
    }
    Ok(())
}

/// The points of a `joint_trajectory`'s parameters: `times` (s), and `positions`, `velocities`,
/// `accelerations` one row of `dof` per point, flattened (the last two may be empty).
pub fn points_from(dof: usize, times: &[f64], positions: &[f64], velocities: &[f64], accelerations: &[f64]) -> Result<Vec<TimedPoint>, String> {
    let m = times.len();
    if positions.len() != m * dof {
        return Err(format!("positions: {m} points of {dof} joints are {} numbers, got {}", m * dof, positions.len()));
    }
    for (what, v) in [("velocities", velocities), ("accelerations", accelerations)] {
        if !v.is_empty() && v.len() != m * dof {
            return Err(format!("{what}: none, or {} numbers ({m} points of {dof} joints), got {}", m * dof, v.len()));
        }
    }
    let row = |v: &[f64], k: usize| if v.is_empty() { Vec::new() } else { v[k * dof..(k + 1) * dof].to_vec() };
    Ok((0..m)
        .map(|k| TimedPoint { time: times[k], positions: row(positions, k), velocities: row(velocities, k), accelerations: row(accelerations, k) })
        .collect())
}

impl JointTrajectory {
    /// A `joint_trajectory` component of `robot`.
    pub fn new(robot: Arc<Robot>) -> Self {
        let info = ComponentInfo::new("joint_trajectory", kind_doc("joint_trajectory"))
            .input(robot.joint_port("start", "rad", "m").doc("where the robot is at the first step: the first point, within 0.5° (0.5 mm) (connect robot.q)").required())
            .output(robot.joint_port("q", "rad", "m").doc("reference position"))
            .output(robot.joint_port("qd", "rad/s", "m/s").doc("reference velocity"))
            .output(robot.joint_port("qdd", "rad/s²", "m/s²").doc("reference acceleration"))
            .output(PortInfo::new("done", ValueType::Boolean).doc("the reference has arrived"))
            .output(PortInfo::position("tcp").doc("tool position of the reference (world frame)"))
            .param(ParamInfo::new("times", Value::Vector(Vec::new())).unit("s").doc("each point's time from the start, increasing, the first 0"))
            .param(ParamInfo::new("positions", Value::Vector(Vec::new())).doc("the points' joint positions (rad; m for prismatic joints), one point after the other"))
            .param(ParamInfo::new("velocities", Value::Vector(Vec::new())).doc("the points' joint velocities, as positions; empty: the mean of the neighbouring slopes"))
            .param(ParamInfo::new("accelerations", Value::Vector(Vec::new())).doc("the points' joint accelerations, as positions; empty: 0 at the points"))
            .param(ParamInfo::new("settle", Value::Real(0.2)).unit("s").doc("time after the last point before it finishes (< 0: never)"));
        JointTrajectory { info, kinematics: RobotKinematics::new(robot.clone()), robot, trajectory: None, settle_steps: 0, arrival_step: None }
    }

    fn vector(&self, name: &str) -> Vec<f64> {
        match self.info.param_value(name) {
            Some(Value::Vector(v)) => v.clone(),
            _ => Vec::new(),
        }
    }
}

impl Component for JointTrajectory {
    morc_kernel::component_info!(info);

    fn configure(&mut self) -> Result<(), String> {
        let n = self.robot.dof();
        let points = points_from(n, &self.vector("times"), &self.vector("positions"), &self.vector("velocities"), &self.vector("accelerations"))?;
        let trajectory = TimedTrajectory::new(n, &points)?;
        check_limits(&self.robot, &trajectory)?;
        self.trajectory = Some(trajectory);
        Ok(())
    }

    fn initialize(&mut self, ctx: &InitContext, _outputs: &mut [Value]) -> Result<(), String> {
        let settle = self.info.real("settle");
        self.settle_steps = if settle < 0.0 { u64::MAX } else { (settle / ctx.period).round() as u64 };
        self.arrival_step = None;
        Ok(())
    }

    fn step(&mut self, ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        let Some(trajectory) = &self.trajectory else { return Step::Fault("joint_trajectory: not configured".into()) };
        if ctx.step == 0 {
            let (start, first) = (inputs[0].as_slice(), trajectory.start());
            if let Some(j) = (0..start.len()).find(|&j| (start[j] - first[j]).abs() > start_tolerance(self.robot.is_prismatic(j))) {
                return Step::Fault(format!(
                    "joint_trajectory: the robot is not at the first point (joint {} at {}, the point {}): start from where the robot is",
                    self.robot.joints[j].name,
                    self.robot.show(j, start[j], 2),
                    self.robot.show(j, first[j], 2)
                ));
            }
        }
        let [q, qd, qdd, done, tcp] = outputs else { unreachable!("five outputs") };
        let (q, qd, qdd) = (q.as_mut_slice(), qd.as_mut_slice(), qdd.as_mut_slice());
        trajectory.sample(ctx.time, q, qd, qdd);
        tcp.as_mut_slice().copy_from_slice(self.kinematics.tool_pose(q).translation.as_slice());
        let arrived = ctx.time >= trajectory.duration();
        *done = Value::Boolean(arrived);
        if arrived && self.arrival_step.is_none() {
            self.arrival_step = Some(ctx.step);
        }
        if let Some(arrival) = self.arrival_step {
            if self.settle_steps != u64::MAX && ctx.step >= arrival.saturating_add(self.settle_steps) {
                return Step::Finish(format!("joint_trajectory: arrived after {:.3} s", trajectory.duration()));
            }
        }
        Step::Continue
    }

    fn terminate(&mut self, results: &mut AssemblyResults) {
        if let Some(t) = &self.trajectory {
            results.set("duration", Value::Real(t.duration()));
            results.set("end", Value::Vector(t.end().to_vec()));
        }
    }
}
