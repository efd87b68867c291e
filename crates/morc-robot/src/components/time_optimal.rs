//! The time-optimal motion through joint waypoints (kind `time_optimal`): a natural cubic
//! spline through them — or, given a `target` pose, the tool's straight line (a `via` point: its
//! arc) from the first waypoint to it through the inverse kinematics (a time-optimal LIN or CIRC) —
//! timed by TOPP-RA (`morc_motion::toppra`) within the joints' velocity
//! and acceleration limits and — with `torque_scale` > 0 — their torque limits through the
//! robot's dynamics. Planned in `configure` (off the real-time path); a step only samples it,
//! so it drops in for the trajectory generator: outputs q, q̇, q̈, the tool position and `done`.

use std::sync::Arc;

use crate::{per_joint_unit, Robot, RobotKinematics};
use morc_kernel::*;
use morc_kernel::{Value, ValueType};
use morc_motion::toppra::{cartesian_path, parameterize, spline_path, PathLimits, PathPoint, TimedPath};
use morc_motion::Kinematics;
use morc_motion::{pose_from_vector, CartesianPath};

use super::kind_doc;
use super::trajectory::PLANNED_VELOCITY_SHARE;

/// Grid points of the path (its timing is exact at them; between them q follows the path's
/// second-order expansion).
const GRID_POINTS: usize = 2001;

/// The time-optimal motion component.
pub struct TimeOptimal {
    info: ComponentInfo,
    robot: Arc<Robot>,
    kinematics: RobotKinematics,
    path: Vec<PathPoint>,
    timed: Option<TimedPath>,
    settle_steps: u64,
    arrival_step: Option<u64>,
}

impl TimeOptimal {
    /// A `time_optimal` component of `robot`.
    pub fn new(robot: Arc<Robot>) -> Self {
        let n = robot.dof();
        let info = ComponentInfo::new("time_optimal", kind_doc("time_optimal"))
            .input(robot.joint_port("start", "rad", "m").doc("where the robot is at the first step: the first waypoint, within 0.5° (connect robot.q)").required())
            .output(robot.joint_port("q", "rad", "m").doc("reference position"))
            .output(robot.joint_port("qd", "rad/s", "m/s").doc("reference velocity"))
            .output(robot.joint_port("qdd", "rad/s²", "m/s²").doc("reference acceleration"))
            .output(PortInfo::new("done", ValueType::Boolean).doc("the reference has arrived"))
            .output(PortInfo::position("tcp").doc("tool position of the reference (world frame)"))
            .output(PortInfo::new("active", ValueType::Integer).doc("the limit the motion rides: 0 none, 100 + j velocity, 200 + j acceleration, 300 + j torque of joint j, 400 the tool's speed"))
            .param(
                ParamInfo::new("points", Value::Vector(vec![0.0; 2 * n]))
                    .unit(&per_joint_unit("rad", "m"))
                    .doc("the waypoints, the first where the robot is, joint positions one after the other"),
            )
            .param(
                ParamInfo::new("target", Value::Vector(Vec::new()))
                    .unit("m, rad")
                    .doc("a tool pose [x, y, z (m), roll, pitch, yaw (rad)]: the tool's straight line (or arc, with via) there from the first waypoint (the only one then), instead of a spline"),
            )
            .param(
                ParamInfo::new("via", Value::Vector(Vec::new()))
                    .unit("m")
                    .doc("with target: a point [x, y, z] the tool's path passes, a circular arc instead of the line"),
            )
            .param(ParamInfo::new("vel_scale", Value::Real(1.0)).doc("fraction of the velocity limits (0, 1]"))
            .param(
                ParamInfo::new("acc_scale", Value::Real(1.0))
                    .doc("fraction of the acceleration limits (0, 1]; 0: none, the torque limits bound the accelerations through the dynamics (needs torque_scale > 0)"),
            )
            .param(ParamInfo::new("torque_scale", Value::Real(0.0)).doc("fraction of the torque limits the dynamics may use (0: no torque limit)"))
            .param(
                ParamInfo::new("ramp", Value::Real(0.0))
                    .unit("s")
                    .doc("jerk limit: the path's acceleration ramps over this time instead of switching at once (the motion takes that much longer; 0: none)"),
            )
            .param(ParamInfo::new("settle", Value::Real(0.2)).unit("s").doc("time after arrival before it finishes (< 0: never)"));
        TimeOptimal { info, kinematics: RobotKinematics::new(robot.clone()), robot, path: Vec::new(), timed: None, settle_steps: 0, arrival_step: None }
    }

    /// Duration of the planned motion (s).
    pub fn duration(&self) -> f64 {
        self.timed.as_ref().map_or(0.0, TimedPath::duration)
    }

    /// The time-optimal timing averaged over `ramp` (a jerk limit, [`TimedPath::with_ramp`]),
    /// checked every 0.5 ms against the joints' velocity, acceleration and torque limits; where
    /// the averaging leaves one, the limits are planned 5 % lower and it is tried again.
    fn jerk_limited(&self, grid: &[f64], path: &[PathPoint], limits: PathLimits, ramp: f64) -> Result<TimedPath, String> {
        let model = &self.robot.model;
        let mut data = morc_model::Data::new(model);
        let n = self.robot.dof();
        let (mut q, mut qd, mut qdd) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        let mut planned = limits.clone();
        for _ in 0..12 {
            let timed = parameterize(grid, path, &planned, Some(model))?.with_ramp(ramp);
            let steps = (timed.duration() / 5e-4).ceil() as usize;
            let mut worst = 0.0f64;
            for k in 0..=steps {
                sample(path, &timed, k as f64 * 5e-4, &mut q, &mut qd, &mut qdd);
                let torque = !limits.torque.is_empty();
                if torque {
                    // What the drives must give: the rigid-body torque plus their own friction.
                    morc_model::rnea(model, &mut data, &q, &qd, &qdd);
                    morc_model::friction(model, &mut data, &qd);
                }
                for j in 0..n {
                    worst = worst.max(qd[j].abs() / limits.velocity[j]);
                    if let Some(a) = limits.acceleration.get(j) {
                        worst = worst.max(qdd[j].abs() / a);
                    }
                    if torque {
                        worst = worst.max((data.tau[j] + data.friction[j]).abs() / limits.torque[j]);
                    }
                }
            }
            if worst <= 1.0 + 1e-9 {
                return Ok(timed);
            }
            for x in planned.velocity.iter_mut().chain(&mut planned.acceleration).chain(&mut planned.torque) {
                *x *= 0.95;
            }
        }
        Err(format!("time_optimal: no jerk-limited timing with ramp {ramp} s stays within the limits: try a shorter ramp"))
    }
}

/// The reference at `time`: (s, ṡ, s̈) of `timed` mapped through the path's second-order
/// expansion about the grid point before s.
fn sample(path: &[PathPoint], timed: &TimedPath, time: f64, q: &mut [f64], qd: &mut [f64], qdd: &mut [f64]) {
    let (s, sd, sdd) = timed.at(time);
    let i = timed.s.partition_point(|x| *x <= s).saturating_sub(1).min(path.len() - 1);
    let (p, ds) = (&path[i], s - timed.s[i]);
    for j in 0..q.len() {
        let dq = p.dq[j] + p.ddq[j] * ds;
        q[j] = p.q[j] + p.dq[j] * ds + 0.5 * p.ddq[j] * ds * ds;
        qd[j] = dq * sd;
        qdd[j] = dq * sdd + p.ddq[j] * sd * sd;
    }
}

impl Component for TimeOptimal {
    morc_kernel::component_info!(info);

    fn configure(&mut self) -> Result<(), String> {
        let n = self.robot.dof();
        let points = match self.info.param_value("points") {
            Some(Value::Vector(v)) if v.len() >= n && v.len() % n == 0 => v.clone(),
            _ => return Err(format!("points: at least two waypoints of {n} joint positions each (or one and a target pose)")),
        };
        let waypoints: Vec<Vec<f64>> = points.chunks(n).map(<[f64]>::to_vec).collect();
        for (i, w) in waypoints.iter().enumerate() {
            if let Some(j) = self.robot.outside_limits(w) {
                return Err(format!("waypoint {} puts joint {} outside its limits", i + 1, self.robot.joints[j].name));
            }
        }
        let scale = |name: &str| -> Result<f64, String> {
            let x = self.info.real(name);
            if (0.0..=1.0).contains(&x) && (x > 0.0 || name != "vel_scale") {
                Ok(x)
            } else {
                Err(format!("{name} must be in (0, 1], got {x}"))
            }
        };
        let (vs, as_, ts) = (scale("vel_scale")?, scale("acc_scale")?, scale("torque_scale")?);
        if as_ == 0.0 && ts == 0.0 {
            return Err("acc_scale = 0 leaves the accelerations to the torque limits: give torque_scale > 0".into());
        }
        let (grid, path, path_speed) = match self.info.param_value("target") {
            Some(Value::Vector(t)) if t.len() == 6 => {
                if waypoints.len() != 1 {
                    return Err("with a target pose, points is the start alone (one waypoint)".into());
                }
                let target: [f64; 6] = t.as_slice().try_into().expect("six");
                let (start, end) = (self.kinematics.tool_pose(&waypoints[0]), pose_from_vector(&target));
                let line = match self.info.param_value("via") {
                    Some(Value::Vector(v)) if v.len() == 3 => CartesianPath::arc(&start, &nalgebra::Vector3::new(v[0], v[1], v[2]), &end)?,
                    Some(Value::Vector(v)) if !v.is_empty() => return Err(format!("via: a point of 3 numbers, got {}", v.len())),
                    _ => CartesianPath::line(&start, &end),
                };
                // The tool keeps its Cartesian speed limits; its accelerations are the joints'.
                let c = self.robot.cartesian;
                let speed = (c.velocity * vs / line.length()).min(c.angular_velocity * vs / line.rotation_angle());
                let (grid, path) = cartesian_path(&mut self.kinematics, &line, &waypoints[0], GRID_POINTS)?;
                (grid, path, Some(speed))
            }
            Some(Value::Vector(t)) if !t.is_empty() => return Err(format!("target: a tool pose of 6 numbers, got {}", t.len())),
            _ if waypoints.len() < 2 => return Err(format!("points: at least two waypoints of {n} joint positions each (or one and a target pose)")),
            _ => {
                let (grid, path) = spline_path(&waypoints, GRID_POINTS)?;
                (grid, path, None)
            }
        };
        let joints = &self.robot.joints;
        let limits = PathLimits {
            // Headroom for the drives' following, as the other planners leave.
            velocity: joints.iter().map(|j| j.limits.velocity * PLANNED_VELOCITY_SHARE * vs).collect(),
            acceleration: if as_ > 0.0 { joints.iter().map(|j| j.limits.acceleration * as_).collect() } else { Vec::new() },
            torque: if ts > 0.0 { joints.iter().map(|j| j.limits.torque * ts).collect() } else { Vec::new() },
            path_speed,
        };
        // The spline may leave the limits between waypoints.
        if let Some((k, j)) = path.iter().enumerate().find_map(|(k, p)| self.robot.outside_limits(&p.q).map(|j| (k, j))) {
            return Err(format!("the spline through the waypoints takes joint {} outside its limits at s = {:.3}: add a waypoint there", joints[j].name, grid[k]));
        }
        let ramp = self.info.real("ramp");
        if !(ramp >= 0.0 && ramp.is_finite()) {
            return Err(format!("ramp must be ≥ 0 s, got {ramp}"));
        }
        self.timed = Some(if ramp == 0.0 { parameterize(&grid, &path, &limits, Some(&self.robot.model))? } else { self.jerk_limited(&grid, &path, limits, ramp)? });
        self.path = path;
        Ok(())
    }

    fn initialize(&mut self, ctx: &InitContext, _outputs: &mut [Value]) -> Result<(), String> {
        let settle = self.info.real("settle");
        self.settle_steps = if settle < 0.0 { u64::MAX } else { (settle / ctx.period).round() as u64 };
        self.arrival_step = None;
        Ok(())
    }

    fn step(&mut self, ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        let Some(timed) = &self.timed else { return Step::Fault("time_optimal: not configured".into()) };
        if ctx.step == 0 {
            let start = inputs[0].as_slice();
            if let Some(j) = (0..start.len()).find(|&j| (start[j] - self.path[0].q[j]).abs() > 0.5f64.to_radians()) {
                let (scale, unit) = crate::joint_unit(self.robot.is_prismatic(j));
                return Step::Fault(format!(
                    "time_optimal: the robot is not at the first waypoint (joint {} at {:.2}{unit}, the waypoint {:.2}{unit}): move there first",
                    self.robot.joints[j].name,
                    start[j] * scale,
                    self.path[0].q[j] * scale
                ));
            }
        }
        let [q, qd, qdd, done, tcp, active] = outputs else { unreachable!("six outputs") };
        *active = Value::Integer(timed.active_at(ctx.time).code());
        let (q, qd, qdd) = (q.as_mut_slice(), qd.as_mut_slice(), qdd.as_mut_slice());
        sample(&self.path, timed, ctx.time, q, qd, qdd);
        tcp.as_mut_slice().copy_from_slice(self.kinematics.tool_pose(q).translation.as_slice());
        let arrived = ctx.time >= timed.duration();
        *done = Value::Boolean(arrived);
        if arrived && self.arrival_step.is_none() {
            self.arrival_step = Some(ctx.step);
        }
        if let Some(arrival) = self.arrival_step {
            if self.settle_steps != u64::MAX && ctx.step >= arrival.saturating_add(self.settle_steps) {
                return Step::Finish(format!("time_optimal: arrived after {:.3} s", timed.duration()));
            }
        }
        Step::Continue
    }

    fn terminate(&mut self, results: &mut AssemblyResults) {
        results.set("duration", Value::Real(self.duration()));
        if let Some(last) = self.path.last() {
            results.set("end", Value::Vector(last.q.clone()));
        }
    }
}
