//! The trajectory generator: `ptp`, `lin`, `circ`, `spline` and `path` (a sequence of those
//! with blending) for a robot, as one component. It plans at its first step from input
//! `start` (connect the robot's q) — storage is allocated in `configure`, so planning and
//! stepping allocate nothing — and outputs the joint reference q, q̇, q̈, the tool position of
//! the reference and `done`. The reference can be smoothed by a Bessel low-pass (`filter`),
//! applied alike to q, q̇ and q̈ so that they stay each other's derivatives.

use std::sync::Arc;

use crate::{per_joint_unit, Robot, RobotKinematics};
use morc_kernel::blocks::{bessel_sections, Biquad, MAX_BESSEL_ORDER};
use morc_kernel::*;
use morc_kernel::{Value, ValueType};
use morc_motion::{Kinematics, MotionLimits, Move, MoveSpec, Sequence};

use super::kind_doc;

/// The share of each joint's velocity limit a motion at full speed is planned to: the drives
/// follow the reference with a small overshoot, and the monitor checks the measured velocity
/// against the full limit, so the plan leaves them this headroom.
pub(crate) const PLANNED_VELOCITY_SHARE: f64 = 0.98;

/// The kinds of move a `path` takes, as its records name them.
const MOVE_KINDS: &str = "ptp, lin, circ, spline";

/// The `moves` parameter of `path` for these moves: a list of records, one per move —
/// `{ kind = "ptp"|"lin"|"circ"|"spline", target = joint positions (ptp) or pose x, y, z, roll,
/// pitch, yaw (lin, circ), points = dof × k joint positions (spline), via = x, y, z (circ),
/// blend = m, velocity_scale = (0, 1] }`, in SI units.
pub fn moves_value(moves: &[MoveSpec]) -> Value {
    let moves = moves.iter().map(|m| {
        let mut fields = vec![("kind", Value::String(m.motion.name().into()))];
        match &m.motion {
            Move::Ptp { target } => fields.push(("target", Value::Vector(target.clone()))),
            Move::Lin { target } => fields.push(("target", Value::Vector(target.to_vec()))),
            Move::Circ { via, target } => fields.extend([("target", Value::Vector(target.to_vec())), ("via", Value::Vector(via.to_vec()))]),
            Move::Spline { points } => fields.push(("points", Value::Vector(points.clone()))),
        }
        fields.extend([("blend", Value::Real(m.blend)), ("velocity_scale", Value::Real(m.velocity_scale))]);
        Value::record(fields)
    });
    Value::List(moves.collect())
}

/// The moves of a `moves` parameter ([`moves_value`]'s records) for a robot of `dof` joints;
/// an error names the move, by its number from 1, and the field.
pub fn moves_from_value(v: &Value, dof: usize) -> Result<Vec<MoveSpec>, String> {
    let Some(list) = v.as_list() else {
        return Err(format!("moves must be a list of moves {{ kind = \"ptp\", target = … }}, got {} ({v})", v.ty()));
    };
    if list.is_empty() {
        return Err("moves is empty: give at least one move".into());
    }
    list.iter().enumerate().map(|(i, m)| move_from_value(m, i + 1, dof)).collect()
}

/// Move number `i` of a `moves` parameter.
fn move_from_value(m: &Value, i: usize, dof: usize) -> Result<MoveSpec, String> {
    let Some(fields) = m.as_record() else {
        return Err(format!("move {i}: expected a record {{ kind = …, … }}, got {} ({m})", m.ty()));
    };
    let kind = match m.field("kind") {
        Some(Value::String(k)) => k.as_str(),
        Some(other) => return Err(format!("move {i}: kind must be one of {MOVE_KINDS}, got {other}")),
        None => return Err(format!("move {i}: no kind ({MOVE_KINDS})")),
    };
    let known: &[&str] = match kind {
        "ptp" | "lin" => &["kind", "target", "blend", "velocity_scale"],
        "circ" => &["kind", "target", "via", "blend", "velocity_scale"],
        "spline" => &["kind", "points", "blend", "velocity_scale"],
        other => return Err(format!("move {i}: unknown kind '{other}' ({MOVE_KINDS})")),
    };
    let fail = |e: String| format!("move {i} ({kind}): {e}");
    if let Some((name, _)) = fields.iter().find(|(name, _)| !known.contains(&name.as_str())) {
        return Err(fail(format!("unknown field '{name}' (fields: {})", known.join(", "))));
    }
    // Numbers of field `name`, which must have `len` of them (None: any number, at least one).
    let numbers = |name: &str, len: Option<usize>, what: &str| -> Result<Vec<f64>, String> {
        let xs = match m.field(name) {
            Some(Value::Vector(xs)) if len.is_none_or(|n| xs.len() == n) && !xs.is_empty() => xs,
            Some(Value::Real(x)) if len.is_none_or(|n| n == 1) => std::slice::from_ref(x),
            None => return Err(fail(format!("no {name}: give {what}"))),
            Some(_) => return Err(fail(format!("{name} must be {what}"))),
        };
        match xs.iter().position(|x| !x.is_finite()) {
            Some(k) => Err(fail(format!("{name} element {} is {}: give finite numbers", k + 1, xs[k]))),
            None => Ok(xs.to_vec()),
        }
    };
    let pose = || -> Result<[f64; 6], String> {
        let x = numbers("target", Some(6), "6 numbers (x, y, z, roll, pitch, yaw)")?;
        Ok(x.try_into().expect("six numbers"))
    };
    let motion = match kind {
        "ptp" => Move::Ptp { target: numbers("target", Some(dof), &format!("{dof} joint positions, one per joint"))? },
        "lin" => Move::Lin { target: pose()? },
        "circ" => {
            let via = numbers("via", Some(3), "3 numbers (x, y, z)")?;
            Move::Circ { via: via.try_into().expect("three numbers"), target: pose()? }
        }
        _ => {
            let points = numbers("points", None, &format!("joint positions, {dof} per point"))?;
            if !points.len().is_multiple_of(dof) {
                return Err(fail(format!("points must hold whole points of {dof} joint positions, got {} numbers", points.len())));
            }
            Move::Spline { points }
        }
    };
    let real = |name: &str, default: f64| -> Result<f64, String> {
        match m.field(name) {
            None => Ok(default),
            Some(Value::Real(x)) => Ok(*x),
            Some(Value::Integer(x)) => Ok(*x as f64),
            Some(other) => Err(fail(format!("{name} must be a number, got {other}"))),
        }
    };
    let (blend, velocity_scale) = (real("blend", 0.0)?, real("velocity_scale", 1.0)?);
    // NaN fails these checks too.
    if !(blend >= 0.0 && blend.is_finite()) {
        return Err(fail(format!("blend must be ≥ 0 m, got {blend}")));
    }
    if !(velocity_scale > 0.0 && velocity_scale <= 1.0) {
        return Err(fail(format!("velocity_scale must be in (0, 1], got {velocity_scale}")));
    }
    Ok(MoveSpec { motion, blend, velocity_scale })
}

/// A Bessel low-pass over q, q̇ and q̈ of every joint.
struct ReferenceFilter {
    sections: Vec<Biquad>,
    /// Per signal (3 × dof), its sections' states.
    states: Vec<[f64; 2]>,
}

impl ReferenceFilter {
    fn rest_at(&mut self, signals: [&[f64]; 3]) {
        let m = self.sections.len();
        for (k, x) in signals.iter().flat_map(|s| s.iter()).enumerate() {
            let mut y = *x;
            for (section, state) in self.sections.iter().zip(&mut self.states[k * m..(k + 1) * m]) {
                y = section.rest_at(state, y);
            }
        }
    }
    fn apply(&mut self, signals: [&mut [f64]; 3]) {
        let m = self.sections.len();
        for (k, x) in signals.into_iter().flat_map(|s| s.iter_mut()).enumerate() {
            for (section, state) in self.sections.iter().zip(&mut self.states[k * m..(k + 1) * m]) {
                *x = section.step(state, *x);
            }
        }
    }
}

/// The robot's trajectory generator (kinds `ptp`, `lin`, `circ`, `spline`, `path`): outputs the joint reference q (rad), qd, qdd, the tool position `tcp` (m) and `done`.
pub struct MotionTrajectory {
    info: ComponentInfo,
    robot: Arc<Robot>,
    kinematics: RobotKinematics,
    sequence: Option<Sequence>,
    filter: Option<ReferenceFilter>,
    planned: bool,
    settle_steps: u64,
    arrival_step: Option<u64>,
    /// Path time τ: how far along its planned timing the motion is (s); it advances at the
    /// override's pace, dτ/dt = ov.
    path_time: f64,
    /// The override the motion moves at now (0–1), steered towards the operator's.
    speed: f64,
    /// Each joint's acceleration limit (rad/s²), which override changes keep.
    acceleration_limit: Vec<f64>,
    /// q, q', q'' of the path at τ (sampled one step ahead, as `ahead`).
    at: [Vec<f64>; 3],
    /// q, q', q'' of the path at the next step's τ: an override change is chosen knowing it.
    ahead: [Vec<f64>; 3],
    /// `at` holds the path at τ (false before the first step).
    sampled: bool,
}

impl MotionTrajectory {
    /// A trajectory component of `kind`: "ptp", "lin", "circ", "spline" or "path".
    pub fn new(robot: Arc<Robot>, kind: &str) -> Self {
        let n = robot.dof();
        let cartesian = robot.cartesian;
        let mut info = ComponentInfo::new(kind, kind_doc(kind))
            .input(robot.joint_port("start", "rad", "m").doc("where the motion starts, read at the first step (connect robot.q)").required())
            .output(robot.joint_port("q", "rad", "m").doc("reference position"))
            .output(robot.joint_port("qd", "rad/s", "m/s").doc("reference velocity"))
            .output(robot.joint_port("qdd", "rad/s²", "m/s²").doc("reference acceleration"))
            .output(PortInfo::new("done", ValueType::Boolean).doc("the reference has arrived"))
            .output(PortInfo::position("tcp").doc("tool position of the reference (world frame)"));
        info = match kind {
            "ptp" => info.param(ParamInfo::new("target", Value::Vector(vec![0.0; n])).unit(&per_joint_unit("rad", "m")).doc("target joint positions")),
            "lin" => info.param(ParamInfo::new("target", Value::Vector(vec![0.0; 6])).unit("m, rad").doc("target tool pose x, y, z, roll, pitch, yaw")),
            "circ" => info
                .param(ParamInfo::new("via", Value::Vector(vec![0.0; 3])).unit("m").doc("a point of the arc between start and target"))
                .param(ParamInfo::new("target", Value::Vector(vec![0.0; 6])).unit("m, rad").doc("target tool pose x, y, z, roll, pitch, yaw")),
            "spline" => info.param(
                ParamInfo::new("points", Value::Vector(vec![0.0; n]))
                    .unit(&per_joint_unit("rad", "m"))
                    .doc("via points then target, joint positions one after the other"),
            ),
            _ => info.param(
                ParamInfo::new("moves", Value::List(Vec::new()))
                    .doc("the moves, in order: records { kind = \"ptp\"|\"lin\"|\"circ\"|\"spline\", target, points, via, blend (m), velocity_scale } (robot:add makes them from { \"ptp\", q }, …)"),
            ),
        };
        info = info
            .param(ParamInfo::new("vel_scale", Value::Real(1.0)).doc("fraction of the velocity limits (0, 1]"))
            .param(ParamInfo::new("acc_scale", Value::Real(1.0)).doc("fraction of the acceleration limits (0, 1]"))
            .param(ParamInfo::new("ramp", Value::Real(0.0)).unit("s").doc("jerk limit as the time to reach full acceleration (0: trapezoidal profile)"))
            .param(ParamInfo::new("settle", Value::Real(0.2)).unit("s").doc("time after arrival before the trajectory finishes (< 0: never finishes)"))
            .param(ParamInfo::new("filter", Value::Real(0.0)).unit("Hz").doc("Bessel low-pass of the reference, −3 dB frequency (0: none)"))
            .param(ParamInfo::new("filter_order", Value::Integer(4)).doc("order of the reference filter, 1 to 8"));
        if kind != "ptp" && kind != "spline" {
            info = info
                .param(ParamInfo::new("lin_vel", Value::Real(cartesian.velocity)).unit("m/s").doc("tool path velocity limit"))
                .param(ParamInfo::new("lin_acc", Value::Real(cartesian.acceleration)).unit("m/s²").doc("tool path acceleration limit"))
                .param(ParamInfo::new("rot_vel", Value::Real(cartesian.angular_velocity)).unit("rad/s").doc("tool rotation velocity limit"))
                .param(ParamInfo::new("rot_acc", Value::Real(cartesian.angular_acceleration)).unit("rad/s²").doc("tool rotation acceleration limit"));
        }
        MotionTrajectory {
            info,
            kinematics: RobotKinematics::new(robot.clone()),
            robot,
            sequence: None,
            filter: None,
            planned: false,
            settle_steps: 0,
            arrival_step: None,
            path_time: 0.0,
            speed: 1.0,
            acceleration_limit: Vec::new(),
            at: Default::default(),
            ahead: Default::default(),
            sampled: false,
        }
    }

    /// Duration of the planned motion (s), once planned.
    pub(crate) fn duration(&self) -> f64 {
        self.sequence.as_ref().map_or(0.0, Sequence::duration)
    }

    fn vector(&self, name: &str) -> Result<Vec<f64>, String> {
        match self.info.param_value(name) {
            Some(Value::Vector(v)) => Ok(v.clone()),
            Some(Value::Real(x)) => Ok(vec![*x]),
            _ => Err(format!("parameter {name} must be a vector")),
        }
    }

    fn moves(&self) -> Result<Vec<MoveSpec>, String> {
        let n = self.robot.dof();
        let one = |motion| Ok(vec![MoveSpec { motion, blend: 0.0, velocity_scale: 1.0 }]);
        let six = |name: &str| -> Result<[f64; 6], String> { self.vector(name)?.try_into().map_err(|v: Vec<f64>| format!("{name} needs 6 numbers (x, y, z, roll, pitch, yaw), got {}", v.len())) };
        match self.info.kind.as_str() {
            "ptp" => one(Move::Ptp { target: self.info.vector("target", n).map_err(|e| format!("target: {e} (the robot has {n} joints)"))? }),
            "lin" => one(Move::Lin { target: six("target")? }),
            "circ" => {
                let via = self.vector("via")?;
                let via: [f64; 3] = via.try_into().map_err(|v: Vec<f64>| format!("via needs 3 numbers (x, y, z), got {}", v.len()))?;
                one(Move::Circ { via, target: six("target")? })
            }
            "spline" => {
                let points = self.vector("points")?;
                if points.is_empty() || points.len() % n != 0 {
                    return Err(format!("points must hold whole joint vectors of {n}, got {} numbers", points.len()));
                }
                one(Move::Spline { points })
            }
            _ => moves_from_value(self.info.param_value("moves").unwrap_or(&Value::List(Vec::new())), n),
        }
    }

    fn limits(&self) -> Result<MotionLimits, String> {
        let (vs, as_, ramp) = (self.info.real("vel_scale"), self.info.real("acc_scale"), self.info.real("ramp"));
        for (p, s) in [("vel_scale", vs), ("acc_scale", as_)] {
            if !(s > 0.0 && s <= 1.0) {
                return Err(format!("{p} must be in (0, 1], got {s}"));
            }
        }
        if !(ramp >= 0.0 && ramp.is_finite()) {
            return Err(format!("ramp must be ≥ 0 s, got {ramp}"));
        }
        let jerk = |a: f64| if ramp > 0.0 { a / ramp } else { f64::INFINITY };
        let acceleration: Vec<f64> = self.robot.joints.iter().map(|j| j.limits.acceleration * as_).collect();
        let cartesian = |name: &str, default: f64| {
            let x = self.info.param_value(name).map_or(default, Value::real);
            if x > 0.0 && x.is_finite() {
                Ok(x)
            } else {
                Err(format!("{name} must be > 0, got {x}"))
            }
        };
        let c = self.robot.cartesian;
        let (lin_acc, rot_acc) = (cartesian("lin_acc", c.acceleration)? * as_, cartesian("rot_acc", c.angular_acceleration)? * as_);
        Ok(MotionLimits {
            velocity: self.robot.joints.iter().map(|j| j.limits.velocity * PLANNED_VELOCITY_SHARE * vs).collect(),
            jerk: acceleration.iter().map(|a| jerk(*a)).collect(),
            acceleration,
            linear: [cartesian("lin_vel", c.velocity)? * vs, lin_acc, jerk(lin_acc)],
            angular: [cartesian("rot_vel", c.angular_velocity)? * vs, rot_acc, jerk(rot_acc)],
        })
    }
}

/// What planning a motion off-line found: see [`MotionTrajectory::survey`].
#[derive(Clone, Debug)]
pub struct Survey {
    /// Time the motion takes (s).
    pub duration: f64,
    /// Smallest singular value of the tool Jacobian along the path (∞ for robots without
    /// Cartesian kinematics): near 0 the arm is close to a singularity.
    pub singularity: f64,
    /// Joint positions at the end of the motion (rad, or m for prismatic joints).
    pub end: Vec<f64>,
}

impl MotionTrajectory {
    /// Plans the configured motion from `start` and walks it at `samples` points: every
    /// reference within the joint position and velocity limits, and how close it comes to a
    /// singularity. For preconditions, before anything moves (allocates; not real-time).
    pub fn survey(&mut self, start: &[f64], samples: usize) -> Result<Survey, String> {
        let kind = self.info.kind.clone();
        let sequence = self.sequence.as_mut().ok_or("configure first")?;
        sequence.plan(&mut self.kinematics, start).map_err(|e| format!("{kind}: {e}"))?;
        let n = self.robot.dof();
        let (mut q, mut qd, mut qdd) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        let cartesian = self.kinematics.cartesian().is_ok();
        let mut singularity = f64::INFINITY;
        let duration = sequence.duration();
        // A robot standing outside its limits (moved by hand) may move back towards them, as the
        // base's guard accepts: a joint outside is fine while it comes no further out.
        let mut previous = start.to_vec();
        for i in 0..=samples {
            let t = duration * i as f64 / samples as f64;
            sequence.sample(&mut self.kinematics, t, &mut q, &mut qd, &mut qdd).map_err(|e| format!("{kind}: {e}"))?;
            let outward = |j: usize| {
                let l = &self.robot.joints[j].limits;
                let x = q[j];
                let within = x >= l.lower && x <= l.upper;
                let back = (x > l.upper && x <= previous[j]) || (x < l.lower && x >= previous[j]);
                !(within || back)
            };
            let outside = (0..n).find(|&j| outward(j));
            previous.copy_from_slice(&q);
            if let Some(j) = outside {
                let joint = &self.robot.joints[j];
                let r = &self.robot;
                return Err(format!(
                    "{kind}: at t = {t:.3} s joint {} would be at {}, outside [{}, {}]",
                    joint.name,
                    r.show(j, q[j], 2),
                    r.show(j, joint.limits.lower, 1),
                    r.show(j, joint.limits.upper, 1)
                ));
            }
            if let Some((i, (j, v))) = self.robot.joints.iter().zip(&qd).enumerate().find(|(_, (j, v))| v.abs() > j.limits.velocity * 1.001) {
                let r = &self.robot;
                return Err(format!("{kind}: at t = {t:.3} s joint {} would move at {}, over its limit {}", j.name, r.show_rate(i, *v, 1), r.show_rate(i, j.limits.velocity, 1)));
            }
            if cartesian {
                singularity = singularity.min(self.kinematics.singularity_distance(&q));
            }
        }
        Ok(Survey { duration, singularity, end: sequence.end().to_vec() })
    }
}

impl Component for MotionTrajectory {
    morc_kernel::component_info!(info);
    fn configure(&mut self) -> Result<(), String> {
        let kind = self.info.kind.clone();
        let fail = |e: String| format!("{kind}: {e}");
        let moves = self.moves().map_err(fail)?;
        for (i, m) in moves.iter().enumerate() {
            let joint_targets: &[f64] = match &m.motion {
                Move::Ptp { target } => target,
                Move::Spline { points } => points,
                Move::Lin { .. } | Move::Circ { .. } => {
                    self.kinematics.cartesian().map_err(|e| fail(e.into()))?;
                    &[]
                }
            };
            for q in joint_targets.chunks(self.robot.dof()) {
                if let Some(j) = self.robot.outside_limits(q) {
                    let joint = &self.robot.joints[j];
                    let which = if moves.len() > 1 { format!("move {} ({}): ", i + 1, m.motion.name()) } else { String::new() };
                    let r = &self.robot;
                    return Err(fail(format!(
                        "{which}target of joint {} is {}, outside its limits [{}, {}]",
                        joint.name,
                        r.show(j, q[j], 3),
                        r.show(j, joint.limits.lower, 1),
                        r.show(j, joint.limits.upper, 1)
                    )));
                }
            }
        }
        let limits = self.limits().map_err(fail)?;
        let order = self.info.integer("filter_order");
        if !(1..=MAX_BESSEL_ORDER as i64).contains(&order) {
            return Err(fail(format!("filter_order must be 1 to {MAX_BESSEL_ORDER}, got {order}")));
        }
        self.sequence = Some(Sequence::new(moves, limits));
        Ok(())
    }
    fn initialize(&mut self, ctx: &InitContext, _outputs: &mut [Value]) -> Result<(), String> {
        let settle = self.info.real("settle");
        self.settle_steps = if settle < 0.0 { u64::MAX } else { (settle / ctx.period).round() as u64 };
        let fc = self.info.real("filter");
        self.filter = if fc > 0.0 {
            if fc >= 0.5 / ctx.period {
                return Err(format!("{}: filter {fc} Hz must be below the Nyquist frequency {} Hz", self.info.kind, 0.5 / ctx.period));
            }
            let sections = bessel_sections(self.info.integer("filter_order") as usize, fc, ctx.period);
            let states = vec![[0.0; 2]; 3 * self.robot.dof() * sections.len()];
            Some(ReferenceFilter { sections, states })
        } else {
            None
        };
        self.planned = false;
        self.arrival_step = None;
        self.path_time = 0.0;
        self.speed = self.robot.operator.target();
        self.acceleration_limit = self.robot.joints.iter().map(|j| j.limits.acceleration).collect();
        let n = self.robot.dof();
        self.at = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
        self.ahead = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
        self.sampled = false;
        Ok(())
    }
    fn step(&mut self, ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        let sequence = self.sequence.as_mut().expect("configured before stepping");
        let [q, qd, qdd, done, tcp] = outputs else { unreachable!("five outputs") };
        let (q, qd, qdd) = (q.as_mut_slice(), qd.as_mut_slice(), qdd.as_mut_slice());
        if !self.planned {
            if let Err(e) = sequence.plan(&mut self.kinematics, inputs[0].as_slice()) {
                return Step::Fault(format!("{}: {e}", self.info.kind));
            }
            self.planned = true;
            if let Some(filter) = &mut self.filter {
                qd.fill(0.0);
                qdd.fill(0.0);
                filter.rest_at([inputs[0].as_slice(), qd, qdd]);
            }
        }
        // The override: the path is sampled at τ, which runs at ov (dτ/dt = ov); the velocity
        // scales by ov and the acceleration by ov² plus the change of ov, which is chosen knowing
        // the path one step ahead so that neither leaves the acceleration limits.
        let dt = ctx.period;
        let speed = self.speed;
        if !self.sampled {
            let [aq, av, aa] = &mut self.at;
            if let Err(e) = sequence.sample(&mut self.kinematics, self.path_time, aq, av, aa) {
                return Step::Fault(format!("{}: {e}", self.info.kind));
            }
            self.sampled = true;
        }
        let [nq, nv, na] = &mut self.ahead;
        if let Err(e) = sequence.sample(&mut self.kinematics, self.path_time + speed * dt, nq, nv, na) {
            return Step::Fault(format!("{}: {e}", self.info.kind));
        }
        let [aq, av, aa] = &self.at;
        let rate = crate::operator::override_rate(speed, self.robot.operator.target(), dt, av, aa, nv, &self.acceleration_limit);
        q.copy_from_slice(aq);
        for j in 0..q.len() {
            qd[j] = speed * av[j];
            qdd[j] = speed * speed * aa[j] + rate * av[j];
        }
        let mut arrived = self.path_time >= sequence.duration();
        let duration = sequence.duration();
        self.robot.operator.report(if duration > 0.0 { (self.path_time / duration).min(1.0) } else { 1.0 }, speed);
        self.path_time += speed * dt;
        self.speed = (speed + rate * dt).clamp(0.0, 1.0);
        std::mem::swap(&mut self.at, &mut self.ahead);
        if let Some(filter) = &mut self.filter {
            filter.apply([&mut *q, &mut *qd, &mut *qdd]);
            arrived &= q.iter().zip(sequence.end()).all(|(a, b)| (a - b).abs() < 1e-7);
        }
        tcp.as_mut_slice().copy_from_slice(self.kinematics.tool_pose(q).translation.as_slice());
        *done = Value::Boolean(arrived);
        if arrived && self.arrival_step.is_none() {
            self.arrival_step = Some(ctx.step);
        }
        if let Some(arrival) = self.arrival_step {
            if self.settle_steps != u64::MAX && ctx.step >= arrival.saturating_add(self.settle_steps) {
                let settle = self.info.real("settle");
                return Step::Finish(format!("{}: arrived after {:.3} s, settled {settle:.3} s", self.info.kind, sequence.duration().max(arrival as f64 * ctx.period)));
            }
        }
        Step::Continue
    }
    fn terminate(&mut self, results: &mut AssemblyResults) {
        self.robot.operator.clear_report();
        results.set("duration", Value::Real(self.duration()));
        if let Some(sequence) = self.sequence.as_ref().filter(|_| self.planned) {
            results.set("end", Value::Vector(sequence.end().to_vec()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moves() -> Vec<MoveSpec> {
        vec![
            MoveSpec { motion: Move::Ptp { target: vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0] }, blend: 0.01, velocity_scale: 0.5 },
            MoveSpec { motion: Move::Circ { via: [0.1, 0.2, 0.3], target: [1.0, 2.0, 3.0, 0.1, 0.2, 0.3] }, blend: 0.0, velocity_scale: 1.0 },
            MoveSpec { motion: Move::Spline { points: vec![0.5; 12] }, blend: 0.02, velocity_scale: 1.0 },
            MoveSpec { motion: Move::Lin { target: [1.0, 2.0, 3.0, 0.1, 0.2, 0.3] }, blend: 0.0, velocity_scale: 1.0 },
        ]
    }

    #[test]
    fn moves_survive_their_value() {
        let v = moves_value(&moves());
        assert_eq!(moves_from_value(&v, 6).unwrap(), moves());
        // One record per move, a spline's points in one field.
        let list = v.as_list().unwrap();
        assert_eq!(list.len(), 4);
        assert_eq!(list[1].field("kind"), Some(&Value::String("circ".into())));
        assert_eq!(list[1].field("via"), Some(&Value::Vector(vec![0.1, 0.2, 0.3])));
        assert_eq!(list[2].field("points").map(|p| p.as_slice().len()), Some(12));
        assert_eq!(list[0].to_string(), r#"{ kind = "ptp", target = {1, 2, 3, 4, 5, 6}, blend = 0.01, velocity_scale = 0.5 }"#);
        // Blend and velocity scale may be left out, or given as integers.
        let ptp = Value::record([("kind", Value::String("ptp".into())), ("target", Value::Vector(vec![0.0; 6])), ("velocity_scale", Value::Integer(1))]);
        assert_eq!(moves_from_value(&Value::List(vec![ptp]), 6).unwrap(), vec![MoveSpec { motion: Move::Ptp { target: vec![0.0; 6] }, blend: 0.0, velocity_scale: 1.0 }]);
    }

    /// A record's fields, as a test edits them.
    type Fields = Vec<(String, Value)>;

    #[test]
    fn wrong_moves_say_which_and_what() {
        let error = |edit: &dyn Fn(&mut Fields), i: usize| {
            let mut v = moves_value(&moves());
            let Value::List(list) = &mut v else { unreachable!() };
            let Value::Record(fields) = &mut list[i - 1] else { unreachable!() };
            edit(fields);
            moves_from_value(&v, 6).unwrap_err()
        };
        let set = |name: &'static str, x: Value| {
            move |fields: &mut Fields| match fields.iter_mut().find(|(n, _)| n == name) {
                Some((_, v)) => *v = x.clone(),
                None => fields.push((name.into(), x.clone())),
            }
        };
        assert_eq!(error(&set("kind", Value::String("lni".into())), 2), "move 2: unknown kind 'lni' (ptp, lin, circ, spline)");
        assert_eq!(error(&set("kind", Value::Integer(1)), 1), "move 1: kind must be one of ptp, lin, circ, spline, got 1");
        assert_eq!(error(&|f| f.retain(|(n, _)| n != "kind"), 1), "move 1: no kind (ptp, lin, circ, spline)");
        assert_eq!(error(&set("via", Value::Vector(vec![1.0, 2.0])), 2), "move 2 (circ): via must be 3 numbers (x, y, z)");
        assert_eq!(error(&|f| f.retain(|(n, _)| n != "via"), 2), "move 2 (circ): no via: give 3 numbers (x, y, z)");
        assert_eq!(error(&set("via", Value::Vector(vec![1.0, 2.0])), 1), "move 1 (ptp): unknown field 'via' (fields: kind, target, blend, velocity_scale)");
        assert_eq!(error(&set("target", Value::Vector(vec![1.0; 5])), 1), "move 1 (ptp): target must be 6 joint positions, one per joint");
        assert_eq!(error(&set("target", Value::Vector(vec![1.0; 5])), 4), "move 4 (lin): target must be 6 numbers (x, y, z, roll, pitch, yaw)");
        assert_eq!(error(&set("points", Value::Vector(vec![1.0; 7])), 3), "move 3 (spline): points must hold whole points of 6 joint positions, got 7 numbers");
        assert_eq!(error(&set("points", Value::Vector(Vec::new())), 3), "move 3 (spline): points must be joint positions, 6 per point");
        assert_eq!(error(&set("target", Value::Vector(vec![1.0, 2.0, f64::NAN, 0.0, 0.0, 0.0])), 4), "move 4 (lin): target element 3 is NaN: give finite numbers");
        assert_eq!(error(&set("blend", Value::Real(f64::NAN)), 1), "move 1 (ptp): blend must be ≥ 0 m, got NaN");
        assert_eq!(error(&set("blend", Value::Real(-1.0)), 2), "move 2 (circ): blend must be ≥ 0 m, got -1");
        assert_eq!(error(&set("velocity_scale", Value::Real(1.5)), 3), "move 3 (spline): velocity_scale must be in (0, 1], got 1.5");
        assert_eq!(error(&set("blend", Value::String("5".into())), 1), "move 1 (ptp): blend must be a number, got \"5\"");
        // Not a list of records, or none.
        assert_eq!(moves_from_value(&Value::List(Vec::new()), 6).unwrap_err(), "moves is empty: give at least one move");
        assert_eq!(moves_from_value(&Value::List(vec![Value::Real(1.0)]), 6).unwrap_err(), "move 1: expected a record { kind = …, … }, got real (1)");
        assert!(moves_from_value(&Value::Vector(vec![1.0; 12]), 6).unwrap_err().starts_with("moves must be a list of moves"));
    }
}
