//! Jogging, as on a pendant: one joint, or the tool along or about an axis of the base or the
//! tool, continuously while the operator holds the key (the robot's [`Operator`] carries the
//! command and its dead-man time) or by an increment. The reference starts where the robot is,
//! ramps within the acceleration limits, keeps every joint within its velocity limit and the
//! tool within the jog speed (250 mm/s by default, the collaborative speed), and stops by itself
//! — decelerating — before a joint limit or near a singularity, saying which
//! ([`Operator::jog_stopped`]). Nothing here allocates after `initialize`.

use std::sync::Arc;

use nalgebra::{DMatrix, DVector, Matrix6, Vector3};

use crate::operator::{JogCommand, JogFrame, JogStop};
use crate::Robot;
use morc_kernel::*;
use morc_kernel::{Value, ValueType};
use morc_model::{DampedPinv, Data, ReferenceFrame};

use super::kind_doc;

/// Joint limits are approached to within this much (rad or m) when a jog stops at one.
const LIMIT_MARGIN: f64 = 1e-3;

/// The jog component (kind `jog`).
pub struct Jog {
    info: ComponentInfo,
    robot: Arc<Robot>,
    data: Data,
    jacobian: DMatrix<f64>,
    pinv: DampedPinv,
    jp: DMatrix<f64>,
    twist: DVector<f64>,
    qd: DVector<f64>,
    q_ref: Vec<f64>,
    qd_prev: Vec<f64>,
    /// The speed along the jogged axis now (rad/s or m/s, signed).
    speed: f64,
    command: JogCommand,
    /// The id of the command being followed, and how far it moved (for increments).
    following: u64,
    travelled: f64,
    /// How long this command has been followed (s).
    elapsed: f64,
    /// This command hit a limit or a singularity: decelerate and ignore it from now on.
    blocked: bool,
    started: bool,
    moved: bool,
    /// Ticks still after the last motion (finish once still and not commanded).
    still_ticks: u64,
    /// The parameters, read in `configure`: tool speed (m/s), rotation speed (rad/s), the
    /// singular value that stops a Cartesian jog, and whether to finish once still.
    tool_speed: f64,
    rot_speed: f64,
    singularity: f64,
    until_still: bool,
    /// This component has told the operator a jog session runs (from `initialize` to `terminate`).
    in_session: bool,
}

impl Jog {
    /// A jog component for `robot`.
    pub fn new(robot: Arc<Robot>) -> Self {
        let n = robot.dof();
        let info = ComponentInfo::new("jog", kind_doc("jog"))
            .param(ParamInfo::new("tool_speed", Value::Real(0.25)).unit("m/s").doc("the tool's speed limit while jogging (the collaborative 250 mm/s by default)"))
            .param(ParamInfo::new("rot_speed", Value::Real(0.5)).unit("rad/s").doc("the tool's rotation speed when jogging about an axis"))
            .param(ParamInfo::new("singularity", Value::Real(0.01)).doc("the jog stops when the smallest singular value of the tool Jacobian falls below this"))
            .param(ParamInfo::new("until_still", Value::Boolean(true)).doc("finish once still and no jog is asked for (false: run until cancelled)"))
            .input(robot.joint_port("q", "rad", "m").required().doc("measured joint positions (where the jog starts)"))
            .output(robot.joint_port("q", "rad", "m").doc("reference position"))
            .output(robot.joint_port("qd", "rad/s", "m/s").doc("reference velocity"))
            .output(robot.joint_port("qdd", "rad/s²", "m/s²").doc("reference acceleration"))
            .output(PortInfo::new("moving", ValueType::Boolean).doc("the reference moves"));
        Jog {
            info,
            data: Data::new(&robot.model),
            jacobian: DMatrix::zeros(6, n),
            pinv: DampedPinv::new(6, n),
            jp: DMatrix::zeros(n, 6),
            twist: DVector::zeros(6),
            qd: DVector::zeros(n),
            q_ref: vec![0.0; n],
            qd_prev: vec![0.0; n],
            speed: 0.0,
            command: JogCommand::default(),
            following: 0,
            travelled: 0.0,
            elapsed: 0.0,
            blocked: false,
            started: false,
            moved: false,
            still_ticks: 0,
            tool_speed: 0.25,
            rot_speed: 0.5,
            singularity: 0.01,
            until_still: true,
            in_session: false,
            robot,
        }
    }

    /// Speed and acceleration limits of the jogged axis.
    fn axis_limits(&self, c: &JogCommand) -> (f64, f64) {
        let r = &self.robot;
        match c.frame {
            JogFrame::Joint => (r.joints[c.axis].limits.velocity * c.speed, r.joints[c.axis].limits.acceleration),
            _ if c.axis < 3 => (self.tool_speed * c.speed, r.cartesian.acceleration),
            _ => (self.rot_speed * c.speed, r.cartesian.angular_acceleration),
        }
    }

    /// Whether command `c` still asks to move now.
    fn active(&self, c: &JogCommand) -> bool {
        if c.direction == 0.0 || self.blocked {
            return false;
        }
        if c.step > 0.0 {
            return self.travelled < c.step - 1e-12;
        }
        (c.time <= 0.0 || self.elapsed < c.time) && (c.until_ns == 0 || monotonic_ns() < c.until_ns)
    }
}

impl Jog {
    fn end_session(&mut self) {
        if std::mem::take(&mut self.in_session) {
            self.robot.operator.end_jog_session();
        }
    }
}

impl Drop for Jog {
    fn drop(&mut self) {
        self.end_session();
    }
}

impl Component for Jog {
    morc_kernel::component_info!(info);

    fn configure(&mut self) -> Result<(), String> {
        for p in ["tool_speed", "rot_speed", "singularity"] {
            let x = self.info.real(p);
            if !(x.is_finite() && x >= 0.0) {
                return Err(format!("parameter {p} must be ≥ 0, got {x}"));
            }
        }
        self.tool_speed = self.info.real("tool_speed");
        self.rot_speed = self.info.real("rot_speed");
        self.singularity = self.info.real("singularity");
        self.until_still = self.info.boolean("until_still");
        Ok(())
    }

    fn initialize(&mut self, _: &InitContext, _: &mut [Value]) -> Result<(), String> {
        self.started = false;
        self.moved = false;
        self.speed = 0.0;
        self.still_ticks = 0;
        self.blocked = false;
        self.qd_prev.fill(0.0);
        if !self.in_session {
            self.robot.operator.begin_jog_session();
            self.in_session = true;
        }
        Ok(())
    }

    fn terminate(&mut self, _results: &mut AssemblyResults) {
        self.end_session();
    }

    fn step(&mut self, ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        let dt = ctx.period;
        let n = self.robot.dof();
        if !self.started {
            self.q_ref.copy_from_slice(inputs[0].as_slice());
            self.started = true;
            // A command waiting when the session began (robot:jog's) is followed from here;
            // one left from an earlier session was dropped then.
            self.following = u64::MAX;
        }
        if let Some(c) = self.robot.operator.jog_command() {
            self.command = c;
        }
        let c = self.command;
        if c.id != self.following {
            self.following = c.id;
            self.travelled = 0.0;
            self.elapsed = 0.0;
            self.blocked = false;
        }
        let valid_axis = match c.frame {
            JogFrame::Joint => c.axis < n,
            _ => c.axis < 6,
        };
        let active = valid_axis && self.active(&c);
        let (v_max, a_max) = if valid_axis { self.axis_limits(&c) } else { (0.0, 1.0) };
        let mut target = if active { c.direction.signum() * v_max } else { 0.0 };
        if active && c.step > 0.0 {
            // An increment: no faster than what still stops at its end.
            let remaining = (c.step - self.travelled).max(0.0);
            target = c.direction.signum() * target.abs().min((2.0 * a_max * remaining).sqrt());
        }
        let dv = a_max * dt;
        self.speed = if self.speed < target { (self.speed + dv).min(target) } else { (self.speed - dv).max(target) };

        // Where the reference is: its Jacobian, for Cartesian jogs, the tool speed limit and
        // the distance to singularities.
        let model = &self.robot.model;
        morc_model::forward_kinematics_joints(model, &mut self.data, &self.q_ref);
        let tool = morc_model::frame_placement(model, &self.data, self.robot.tool_frame);
        self.jacobian.copy_from(morc_model::frame_jacobian_in(model, &mut self.data, self.robot.tool_frame, ReferenceFrame::LocalWorldAligned));
        self.qd.fill(0.0);
        if valid_axis && self.speed != 0.0 {
            match c.frame {
                JogFrame::Joint => self.qd[c.axis] = self.speed,
                JogFrame::Base | JogFrame::Tool => {
                    let mut local = Vector3::zeros();
                    local[c.axis % 3] = self.speed;
                    // Tool axes turned into the base's; the Jacobian's twist is in base axes.
                    let world = if c.frame == JogFrame::Tool { tool.rotation * local } else { local };
                    self.twist.fill(0.0);
                    let at = if c.axis < 3 { 0 } else { 3 };
                    self.twist.rows_mut(at, 3).copy_from(&world);
                    if self.pinv.compute(&self.jacobian, &mut self.jp, 0.01).is_err() {
                        return Step::Fault("jog: the tool Jacobian is singular".into());
                    }
                    self.qd.gemv(1.0, &self.jp, &self.twist, 0.0);
                }
            }
        }
        // Near a singularity: stop (decelerating from the next step on).
        if c.frame != JogFrame::Joint && active && n >= 6 {
            // J Jᵀ in a fixed-size matrix: its eigenvalues are the squared singular values.
            let j = &self.jacobian;
            let jjt = Matrix6::from_fn(|r, c| (0..n).map(|k| j[(r, k)] * j[(c, k)]).sum::<f64>());
            let sigma_min = jjt.symmetric_eigenvalues().min().max(0.0).sqrt();
            if sigma_min < self.singularity {
                self.blocked = true;
                self.robot.operator.report_jog_stop(JogStop::Singularity);
            }
        }
        // Joint velocity limits and the tool speed limit scale the whole motion alike.
        let mut scale: f64 = 1.0;
        for (j, joint) in self.robot.joints.iter().enumerate() {
            if self.qd[j].abs() > joint.limits.velocity {
                scale = scale.min(joint.limits.velocity / self.qd[j].abs());
            }
        }
        let j = &self.jacobian;
        let tool_velocity = (0..3).map(|r| (0..n).map(|k| j[(r, k)] * self.qd[k]).sum::<f64>().powi(2)).sum::<f64>().sqrt();
        let tool_speed = self.tool_speed;
        if tool_velocity > tool_speed {
            scale = scale.min(tool_speed / tool_velocity);
        }
        if scale < 1.0 {
            self.qd *= scale;
            self.speed *= scale;
        }
        // Joint limits: stop before one, decelerating at the joint's limit.
        for (j, joint) in self.robot.joints.iter().enumerate() {
            let v = self.qd[j];
            if v == 0.0 {
                continue;
            }
            let braking = v * v / (2.0 * joint.limits.acceleration) + v.abs() * dt;
            let (lo, hi) = (joint.limits.lower + LIMIT_MARGIN, joint.limits.upper - LIMIT_MARGIN);
            let next = self.q_ref[j] + v.signum() * braking;
            if (v > 0.0 && next >= hi) || (v < 0.0 && next <= lo) {
                if !self.blocked {
                    self.robot.operator.report_jog_stop(JogStop::Limit(j));
                }
                self.blocked = true;
            }
        }
        let [q, qd, qdd, moving] = outputs else { unreachable!("four outputs") };
        let (q, qd, qdd) = (q.as_mut_slice(), qd.as_mut_slice(), qdd.as_mut_slice());
        for j in 0..n {
            let limits = &self.robot.joints[j].limits;
            // The last guard: the reference never leaves the position limits.
            self.q_ref[j] = (self.q_ref[j] + self.qd[j] * dt).clamp(limits.lower.min(self.q_ref[j]), limits.upper.max(self.q_ref[j]));
            q[j] = self.q_ref[j];
            qd[j] = self.qd[j];
            qdd[j] = (self.qd[j] - self.qd_prev[j]) / dt;
            self.qd_prev[j] = self.qd[j];
        }
        self.travelled += self.speed.abs() * dt;
        self.elapsed += dt;
        let is_moving = self.speed != 0.0;
        *moving = Value::Boolean(is_moving);
        self.moved |= is_moving;
        self.still_ticks = if is_moving || active { 0 } else { self.still_ticks + 1 };
        if (self.until_still && self.moved || c.finish) && self.still_ticks > 0 {
            return Step::Finish("still".into());
        }
        // Nothing asked and never moved: an increment of nothing, or a held key let go already.
        if self.until_still && !self.moved && !active && ctx.step > 0 {
            return Step::Finish("nothing to move".into());
        }
        Step::Continue
    }
}
