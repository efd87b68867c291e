//! Native components built around a [`Robot`]: they need its model and limits, so they are
//! made by factories that hold the robot ([`factory`]), not by the kind registry.
//!
//! - `ptp`: synchronised trapezoidal point-to-point trajectory in joint space.
//! - `rnea`: rigid-body feed-forward (computed torque) τ = RNEA(q, q̇, q̈).
//! - `monitor`: following error and limits → fault naming the joint; completion → finish.

use std::sync::Arc;

use crate::kernel::assembly::Factory;
use crate::kernel::component::*;
use crate::kernel::value::{Value, ValueType};
use crate::model::{self, Data};

use super::Robot;

/// The robot component kinds, with one line of documentation each.
pub const KINDS: &[(&str, &str)] = &[
    ("ptp", "synchronised trapezoidal PTP: all axes arrive together within velocity/acceleration limits (× scaling); outputs q, qd, qdd, done"),
    ("rnea", "rigid-body feed-forward: tau = RNEA(q, qd, qdd) of the robot's model (gravity, inertia, drive train)"),
    ("monitor", "following error and position/velocity/torque limits → fault naming the joint; target reached → finish"),
];

/// A factory for robot component `kind`, or `None` if there is no such kind.
pub fn factory(robot: &Arc<Robot>, kind: &str) -> Option<Factory> {
    let robot = robot.clone();
    let make: fn(Arc<Robot>) -> Box<dyn Component> = match kind {
        "ptp" => |r| Box::new(PtpTrajectory::new(r)),
        "rnea" => |r| Box::new(RigidBodyFeedForward::new(r)),
        "monitor" => |r| Box::new(Monitor::new(r)),
        _ => return None,
    };
    Some(Arc::new(move || Ok(make(robot.clone()))))
}

/// Synchronised trapezoidal PTP. The path is the straight line q(t) = q₀ + (q₁ − q₀)·s(t) in
/// joint space, so all axes start, cruise, brake and arrive together; s(t) is a trapezoid
/// whose velocity and acceleration are the largest every axis allows (time-optimal for the
/// line). Planned at the first step from input `start` (connect the robot's q).
pub struct PtpTrajectory {
    info: ComponentInfo,
    robot: Arc<Robot>,
    start: Vec<f64>,
    distance: Vec<f64>,
    /// Path acceleration, cruise velocity, acceleration time and total time (s units).
    accel: f64,
    cruise: f64,
    t_accel: f64,
    t_total: f64,
    settle_steps: u64,
    planned: bool,
}

impl PtpTrajectory {
    pub fn new(robot: Arc<Robot>) -> Self {
        let n = robot.dof();
        let ty = ValueType::Vector(n);
        let info = ComponentInfo::new("ptp", KINDS[0].1)
            .input(PortInfo::new("start", ty).unit("rad").doc("where the motion starts, read at the first step (connect robot.q)").required())
            .output(PortInfo::new("q", ty).unit("rad").doc("reference position"))
            .output(PortInfo::new("qd", ty).unit("rad/s").doc("reference velocity"))
            .output(PortInfo::new("qdd", ty).unit("rad/s²").doc("reference acceleration"))
            .output(PortInfo::new("done", ValueType::Boolean).doc("the reference has arrived"))
            .param(ParamInfo::new("target", Value::Vector(vec![0.0; n])).unit("rad").doc("target joint positions"))
            .param(ParamInfo::new("vel_scale", Value::Real(1.0)).doc("fraction of the joints' velocity limits (0, 1]"))
            .param(ParamInfo::new("acc_scale", Value::Real(1.0)).doc("fraction of the joints' acceleration limits (0, 1]"))
            .param(ParamInfo::new("settle", Value::Real(0.2)).unit("s").doc("time after arrival before the trajectory finishes (< 0: never finishes)"));
        PtpTrajectory {
            info,
            start: vec![0.0; n],
            distance: vec![0.0; n],
            accel: 0.0,
            cruise: 0.0,
            t_accel: 0.0,
            t_total: 0.0,
            settle_steps: 0,
            planned: false,
            robot,
        }
    }

    /// Duration of the planned motion (s).
    pub fn duration(&self) -> f64 {
        self.t_total
    }

    fn plan(&mut self, start: &[f64]) {
        self.start.copy_from_slice(start);
        let target = match self.info.param_value("target") {
            Some(Value::Vector(t)) => t,
            _ => unreachable!("target is a vector parameter"),
        };
        let (vs, as_) = (self.info.real("vel_scale"), self.info.real("acc_scale"));
        let (mut v, mut a) = (f64::INFINITY, f64::INFINITY);
        for ((d, (&t, &s)), j) in self.distance.iter_mut().zip(target.iter().zip(start)).zip(&self.robot.joints) {
            *d = t - s;
            if d.abs() > 0.0 {
                v = v.min(j.limits.velocity * vs / d.abs());
                a = a.min(j.limits.acceleration * as_ / d.abs());
            }
        }
        if !v.is_finite() {
            (self.accel, self.cruise, self.t_accel, self.t_total) = (0.0, 0.0, 0.0, 0.0);
        } else if v * v / a >= 1.0 {
            // Triangle: never reaches cruise velocity.
            let ta = (1.0 / a).sqrt();
            (self.accel, self.cruise, self.t_accel, self.t_total) = (a, a * ta, ta, 2.0 * ta);
        } else {
            (self.accel, self.cruise, self.t_accel, self.t_total) = (a, v, v / a, 1.0 / v + v / a);
        }
        self.planned = true;
    }

    /// Path position, velocity and acceleration at time t.
    fn path(&self, t: f64) -> (f64, f64, f64) {
        let (a, v, ta, tt) = (self.accel, self.cruise, self.t_accel, self.t_total);
        if t >= tt {
            (1.0, 0.0, 0.0)
        } else if t < ta {
            (0.5 * a * t * t, a * t, a)
        } else if t < tt - ta {
            (0.5 * a * ta * ta + v * (t - ta), v, 0.0)
        } else {
            let r = tt - t;
            (1.0 - 0.5 * a * r * r, a * r, -a)
        }
    }
}

impl Component for PtpTrajectory {
    fn info(&self) -> &ComponentInfo {
        &self.info
    }
    fn info_mut(&mut self) -> &mut ComponentInfo {
        &mut self.info
    }
    fn configure(&mut self) -> Result<(), String> {
        let n = self.robot.dof();
        let target = self.info.vector("target", n).map_err(|e| format!("ptp: target: {e} (the robot has {n} joints)"))?;
        if let Some(i) = self.robot.outside_limits(&target) {
            let j = &self.robot.joints[i];
            return Err(format!(
                "ptp: target of joint {} is {:.3}°, outside its limits [{:.1}°, {:.1}°]",
                j.name,
                target[i].to_degrees(),
                j.limits.lower.to_degrees(),
                j.limits.upper.to_degrees()
            ));
        }
        self.info.set_param("target", &Value::Vector(target))?;
        for p in ["vel_scale", "acc_scale"] {
            let s = self.info.real(p);
            if !(s > 0.0 && s <= 1.0) {
                return Err(format!("ptp: {p} must be in (0, 1], got {s}"));
            }
        }
        Ok(())
    }
    fn initialize(&mut self, ctx: &InitContext, _outputs: &mut [Value]) -> Result<(), String> {
        let settle = self.info.real("settle");
        self.settle_steps = if settle < 0.0 { u64::MAX } else { (settle / ctx.period).round() as u64 };
        self.planned = false;
        Ok(())
    }
    fn step(&mut self, ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        if !self.planned {
            self.plan(inputs[0].as_slice());
        }
        let (s, sd, sdd) = self.path(ctx.time);
        let [q, qd, qdd, done] = outputs else { unreachable!("four outputs") };
        for (i, d) in self.distance.iter().enumerate() {
            q.as_mut_slice()[i] = self.start[i] + d * s;
            qd.as_mut_slice()[i] = d * sd;
            qdd.as_mut_slice()[i] = d * sdd;
        }
        let arrived = ctx.time >= self.t_total;
        *done = Value::Boolean(arrived);
        if arrived && self.settle_steps != u64::MAX {
            let arrival_step = (self.t_total / ctx.period).ceil() as u64;
            if ctx.step >= arrival_step.saturating_add(self.settle_steps) {
                return Step::Finish(format!("ptp: arrived after {:.3} s, settled {:.3} s", self.t_total, self.info.real("settle")));
            }
        }
        Step::Continue
    }
    fn terminate(&mut self, results: &mut AssemblyResults) {
        results.set("duration", Value::Real(self.t_total));
    }
}

/// Rigid-body feed-forward: the torque the model says the reference motion needs.
pub struct RigidBodyFeedForward {
    info: ComponentInfo,
    robot: Arc<Robot>,
    data: Data,
}

impl RigidBodyFeedForward {
    pub fn new(robot: Arc<Robot>) -> Self {
        let ty = ValueType::Vector(robot.dof());
        let info = ComponentInfo::new("rnea", KINDS[1].1)
            .input(PortInfo::new("q", ty).unit("rad").required())
            .input(PortInfo::new("qd", ty).unit("rad/s").required())
            .input(PortInfo::new("qdd", ty).unit("rad/s²").required())
            .output(PortInfo::new("tau", ty).unit("N·m").doc("feed-forward torque"));
        RigidBodyFeedForward { info, data: Data::new(&robot.model), robot }
    }
}

impl Component for RigidBodyFeedForward {
    fn info(&self) -> &ComponentInfo {
        &self.info
    }
    fn info_mut(&mut self) -> &mut ComponentInfo {
        &mut self.info
    }
    fn initialize(&mut self, _: &InitContext, _: &mut [Value]) -> Result<(), String> {
        Ok(())
    }
    fn step(&mut self, _: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        let tau = model::rnea(&self.robot.model, &mut self.data, inputs[0].as_slice(), inputs[1].as_slice(), inputs[2].as_slice());
        outputs[0].as_mut_slice().copy_from_slice(tau.as_slice());
        Step::Continue
    }
}

/// Watches a motion: following error |q_ref − q| and the joints' position, velocity and
/// torque limits (fault naming the joint), and completion: `done` and every joint within
/// `tolerance` of the reference (finish). Reports the peak and final following errors.
pub struct Monitor {
    info: ComponentInfo,
    robot: Arc<Robot>,
    peak: Vec<f64>,
    last: Vec<f64>,
    max_error: f64,
    tolerance: f64,
    check_torque: bool,
}

impl Monitor {
    pub fn new(robot: Arc<Robot>) -> Self {
        let n = robot.dof();
        let ty = ValueType::Vector(n);
        let info = ComponentInfo::new("monitor", KINDS[2].1)
            .input(PortInfo::new("q_ref", ty).unit("rad").required())
            .input(PortInfo::new("q", ty).unit("rad").required())
            .input(PortInfo::new("qd", ty).unit("rad/s"))
            .input(PortInfo::new("tau", ty).unit("N·m"))
            .input(PortInfo::new("done", ValueType::Boolean).doc("the reference has arrived (connect ptp.done); unconnected: never"))
            .output(PortInfo::new("error", ty).unit("rad").doc("following error q_ref − q"))
            .param(ParamInfo::new("max_error", Value::Real(5f64.to_radians())).unit("rad").doc("largest following error allowed"))
            .param(ParamInfo::new("tolerance", Value::Real(0.0)).unit("rad").doc("completion: done and every joint this close (0: the monitor does not finish)"))
            .param(ParamInfo::new("check_torque", Value::Boolean(true)).doc("fault when a drive saturates at its torque limit"));
        Monitor { info, peak: vec![0.0; n], last: vec![0.0; n], max_error: 0.0, tolerance: 0.0, check_torque: true, robot }
    }
}

impl Component for Monitor {
    fn info(&self) -> &ComponentInfo {
        &self.info
    }
    fn info_mut(&mut self) -> &mut ComponentInfo {
        &mut self.info
    }
    fn initialize(&mut self, _: &InitContext, _: &mut [Value]) -> Result<(), String> {
        self.max_error = self.info.real("max_error");
        self.tolerance = self.info.real("tolerance");
        self.check_torque = self.info.boolean("check_torque");
        self.peak.fill(0.0);
        Ok(())
    }
    fn step(&mut self, ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        let (q_ref, q, qd, tau) = (inputs[0].as_slice(), inputs[1].as_slice(), inputs[2].as_slice(), inputs[3].as_slice());
        let done = inputs[4].boolean();
        let mut settled = done;
        for (i, j) in self.robot.joints.iter().enumerate() {
            let e = q_ref[i] - q[i];
            outputs[0].as_mut_slice()[i] = e;
            self.last[i] = e;
            self.peak[i] = self.peak[i].max(e.abs());
            settled &= e.abs() <= self.tolerance;
            let l = &j.limits;
            let fault = |what: String| Step::Fault(format!("monitor: joint {} at t = {:.3} s: {what}", j.name, ctx.time));
            if e.is_nan() || e.abs() > self.max_error {
                return fault(format!("following error {:.3}° exceeds {:.3}°", e.to_degrees(), self.max_error.to_degrees()));
            }
            if !(q[i] >= l.lower && q[i] <= l.upper) {
                return fault(format!("position {:.3}° outside [{:.1}°, {:.1}°]", q[i].to_degrees(), l.lower.to_degrees(), l.upper.to_degrees()));
            }
            if qd[i].abs() > l.velocity {
                return fault(format!("velocity {:.2}°/s exceeds {:.1}°/s", qd[i].to_degrees(), l.velocity.to_degrees()));
            }
            if self.check_torque && tau[i].abs() >= l.torque {
                return fault(format!("torque {:.1} N·m at the drive's limit {:.1} N·m", tau[i], l.torque));
            }
        }
        if settled && self.tolerance > 0.0 {
            let worst = self.last.iter().fold(0.0f64, |m, e| m.max(e.abs()));
            return Step::Finish(format!("monitor: target reached, final error {:.4}°", worst.to_degrees()));
        }
        Step::Continue
    }
    fn terminate(&mut self, results: &mut AssemblyResults) {
        results.set("peak_error", Value::Vector(self.peak.clone()));
        results.set("final_error", Value::Vector(self.last.clone()));
        results.set("peak_error_max", Value::Real(self.peak.iter().fold(0.0, |m: f64, e| m.max(*e))));
    }
}
