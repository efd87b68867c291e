//! A motion sequence: PTP, LIN, CIRC and via-point spline moves one after the other, with
//! blending (an approximation radius) between consecutive moves.
//!
//! Every move is planned as its own rest-to-rest segment in joint space (Cartesian moves
//! through the arm's inverse kinematics). Blending overlaps consecutive segments in time and
//! adds their displacements: q(t) = q_start + Σ_k (q_k(t − t_k) − q_k(0)). Each segment's
//! velocity is continuous and zero at its ends, so the sum is continuous and the arm does not
//! stop at a blended point; the overlap begins when the tool is `blend` metres from the point
//! (and ends when the next move has taken it `blend` metres away), so the corner is cut by
//! about that radius. Overlaps stay within the braking of one move and the acceleration of the
//! next, so at most two segments overlap and no joint exceeds its velocity limit.
//!
//! Planning happens when the start is known (the first step of the trajectory component);
//! storage is allocated in [`Sequence::new`], so planning and sampling allocate nothing.

use nalgebra::Vector3;

use super::cartesian::CartesianPath;
use super::profile::Profile;
use super::spline::QuinticSpline;
use morc_model::rotation_from_rpy;
use morc_model::Se3;

/// What the planner needs of an arm: forward and inverse kinematics of its tool.
pub trait Kinematics {
    /// Number of joints (the length of every `q`).
    fn dof(&self) -> usize;
    /// World placement of the tool at q.
    fn tool_pose(&mut self, q: &[f64]) -> Se3;
    /// A solution for `target` near `seed`, within the joint limits, written to `q`; false
    /// when the pose is out of reach.
    fn inverse(&mut self, target: &Se3, seed: &[f64], q: &mut [f64]) -> bool;
}

/// One programmed move.
#[derive(Clone, Debug, PartialEq)]
pub enum Move {
    /// Straight line in joint space to joint positions (rad).
    Ptp {
        /// Joint positions to reach (rad, or m for prismatic joints).
        target: Vec<f64>,
    },
    /// Straight line of the tool to a pose [x, y, z (m), roll, pitch, yaw (rad)].
    Lin {
        /// Tool pose to reach: x, y, z (m), roll, pitch, yaw (rad).
        target: [f64; 6],
    },
    /// Circular arc of the tool through `via` (m) to a pose.
    Circ {
        /// A point the arc passes through (m).
        via: [f64; 3],
        /// Tool pose at the arc's end: x, y, z (m), roll, pitch, yaw (rad).
        target: [f64; 6],
    },
    /// Quintic spline through joint positions (flattened, dof each; the last is the target).
    Spline {
        /// Via points, `dof` joint positions each, one after the other.
        points: Vec<f64>,
    },
}

impl Move {
    /// The move's keyword ("ptp", "lin", "circ", "spline"), as error messages and Lua name it.
    pub fn name(&self) -> &'static str {
        match self {
            Move::Ptp { .. } => "ptp",
            Move::Lin { .. } => "lin",
            Move::Circ { .. } => "circ",
            Move::Spline { .. } => "spline",
        }
    }
}

/// A move with how it is executed.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveSpec {
    /// Where the move goes and along which path.
    pub motion: Move,
    /// Approximation radius (m) at this move's end point; 0 stops there exactly.
    pub blend: f64,
    /// Fraction of the velocity limits (0, 1] for this move.
    pub velocity_scale: f64,
}

/// Limits the planner keeps (SI units). Jerk = ∞ gives trapezoidal profiles.
#[derive(Clone, Debug, PartialEq)]
pub struct MotionLimits {
    /// Per joint: velocity limit (rad/s or m/s).
    pub velocity: Vec<f64>,
    /// Per joint: acceleration limit (rad/s² or m/s²).
    pub acceleration: Vec<f64>,
    /// Per joint: jerk limit (rad/s³ or m/s³; ∞ for trapezoidal profiles).
    pub jerk: Vec<f64>,
    /// Tool path: linear velocity, acceleration, jerk (m/s, m/s², m/s³).
    pub linear: [f64; 3],
    /// Tool orientation: angular velocity, acceleration, jerk (rad/s, rad/s², rad/s³).
    pub angular: [f64; 3],
}

/// The placement of a pose given as [x, y, z (m), roll, pitch, yaw (rad)], the form moves use.
pub fn pose_from_vector(x: &[f64; 6]) -> Se3 {
    Se3::new(rotation_from_rpy(x[3], x[4], x[5]), Vector3::new(x[0], x[1], x[2]))
}

enum Shape {
    Joint,
    Spline(QuinticSpline),
    Cartesian(CartesianPath),
}

struct Segment {
    spec: MoveSpec,
    shape: Shape,
    profile: Profile,
    start_time: f64,
    duration: f64,
    start: Vec<f64>,
    end: Vec<f64>,
    /// IK continuity: the last solution of this segment.
    seed: Vec<f64>,
    /// Scratch for samples around t (Cartesian segments) and for one segment's sample.
    before: Vec<f64>,
    after: Vec<f64>,
    q: Vec<f64>,
    qd: Vec<f64>,
    qdd: Vec<f64>,
}

/// The planned sequence.
pub struct Sequence {
    segments: Vec<Segment>,
    limits: MotionLimits,
    start: Vec<f64>,
    duration: f64,
}

/// Half-width of the central differences that turn a Cartesian path into joint velocity and
/// acceleration (s): the truncation error is ~δ²·q⁗ and round-off ~1e-16/δ², both ≪ 1e-6.
const DIFFERENCE_STEP: f64 = 1e-3;
/// Samples along a Cartesian path checked at planning (reach, joint limits, continuity).
const PATH_SAMPLES: usize = 200;

impl Sequence {
    /// Storage for `moves` on an arm of `limits.velocity.len()` joints.
    pub fn new(moves: Vec<MoveSpec>, limits: MotionLimits) -> Sequence {
        let n = limits.velocity.len();
        let segments = moves
            .into_iter()
            .map(|spec| Segment {
                shape: match &spec.motion {
                    Move::Spline { points } => Shape::Spline(QuinticSpline::new(n, points)),
                    Move::Lin { target } | Move::Circ { target, .. } => Shape::Cartesian(CartesianPath::line(&pose_from_vector(target), &pose_from_vector(target))),
                    Move::Ptp { .. } => Shape::Joint,
                },
                spec,
                profile: Profile::STILL,
                start_time: 0.0,
                duration: 0.0,
                start: vec![0.0; n],
                end: vec![0.0; n],
                seed: vec![0.0; n],
                before: vec![0.0; n],
                after: vec![0.0; n],
                q: vec![0.0; n],
                qd: vec![0.0; n],
                qdd: vec![0.0; n],
            })
            .collect();
        Sequence { segments, start: vec![0.0; n], limits, duration: 0.0 }
    }

    /// Time from the first move's start to the last one's end (s), blends included; valid after planning.
    pub fn duration(&self) -> f64 {
        self.duration
    }

    /// Where the sequence ends (valid after planning).
    pub fn end(&self) -> &[f64] {
        self.segments.last().map_or(&self.start, |s| &s.end)
    }

    /// Number of moves.
    pub fn len(&self) -> usize {
        self.segments.len()
    }

    /// True when the sequence has no moves.
    pub fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }

    /// Start time and duration of move k (after planning).
    pub fn timing(&self, k: usize) -> (f64, f64) {
        (self.segments[k].start_time, self.segments[k].duration)
    }

    /// Plans every move from `start`; the error names the move and what is wrong.
    pub fn plan(&mut self, arm: &mut dyn Kinematics, start: &[f64]) -> Result<(), String> {
        self.start.copy_from_slice(start);
        for k in 0..self.segments.len() {
            let (done, rest) = self.segments.split_at_mut(k);
            let from = done.last().map_or(start, |s| &s.end[..]);
            let segment = &mut rest[0];
            segment.start.copy_from_slice(from);
            segment.plan(arm, &self.limits).map_err(|e| format!("move {} ({}): {e}", k + 1, segment.spec.motion.name()))?;
        }
        // The schedule: each move starts when the previous one is within its blend radius.
        let mut time = 0.0;
        for k in 0..self.segments.len() {
            if k > 0 {
                let overlap = self.overlap(arm, k);
                let previous = &self.segments[k - 1];
                time = previous.start_time + previous.duration - overlap;
            }
            self.segments[k].start_time = time;
        }
        self.duration = self.segments.last().map_or(0.0, |s| s.start_time + s.duration);
        Ok(())
    }

    /// How long move k overlaps move k − 1: the shorter of the time the previous move's tool
    /// spends within its blend radius of the point and the time this move needs to leave it,
    /// both at most the braking / accelerating part of the moves.
    fn overlap(&mut self, arm: &mut dyn Kinematics, k: usize) -> f64 {
        let radius = self.segments[k - 1].spec.blend;
        if radius <= 0.0 {
            return 0.0;
        }
        let (left, right) = self.segments.split_at_mut(k);
        let (previous, next) = (&mut left[k - 1], &mut right[0]);
        let corner = arm.tool_pose(&previous.end).translation;
        // Last time the previous segment is ≥ radius from the corner; first time the next is.
        let leave_previous = previous.duration - previous.time_at_distance(arm, &corner, radius, true);
        let reach_next = next.time_at_distance(arm, &corner, radius, false);
        leave_previous.min(reach_next).min(previous.ramp_time()).min(next.ramp_time()).max(0.0)
    }

    /// Position, velocity and acceleration of the reference at time t.
    pub fn sample(&mut self, arm: &mut dyn Kinematics, t: f64, q: &mut [f64], qd: &mut [f64], qdd: &mut [f64]) -> Result<(), String> {
        q.copy_from_slice(&self.start);
        qd.fill(0.0);
        qdd.fill(0.0);
        for (k, segment) in self.segments.iter_mut().enumerate() {
            let tau = t - segment.start_time;
            if tau < 0.0 {
                break;
            }
            if tau >= segment.duration {
                for ((q, end), start) in q.iter_mut().zip(&segment.end).zip(&segment.start) {
                    *q += end - start;
                }
                continue;
            }
            segment.sample(arm, tau).map_err(|e| format!("move {} ({}) at t = {t:.3} s: {e}", k + 1, segment.spec.motion.name()))?;
            for j in 0..q.len() {
                q[j] += segment.q[j] - segment.start[j];
                qd[j] += segment.qd[j];
                qdd[j] += segment.qdd[j];
            }
        }
        Ok(())
    }
}

impl Segment {
    fn plan(&mut self, arm: &mut dyn Kinematics, limits: &MotionLimits) -> Result<(), String> {
        let scale = self.spec.velocity_scale;
        let n = self.start.len();
        self.seed.copy_from_slice(&self.start);
        match (&self.spec.motion, &mut self.shape) {
            (Move::Ptp { target }, Shape::Joint) => {
                self.end.copy_from_slice(target);
                // Synchronised: the path parameter s ∈ [0, 1] gets the tightest limits of all joints.
                let (mut v, mut a, mut j) = (f64::INFINITY, f64::INFINITY, f64::INFINITY);
                for i in 0..n {
                    let d = (self.end[i] - self.start[i]).abs();
                    if d > 0.0 {
                        v = v.min(limits.velocity[i] * scale / d);
                        a = a.min(limits.acceleration[i] / d);
                        j = j.min(limits.jerk[i] / d);
                    }
                }
                self.profile = if v.is_finite() { Profile::plan(1.0, v, a, j) } else { Profile::STILL };
            }
            (Move::Spline { .. }, Shape::Spline(spline)) => {
                for i in 0..n {
                    // The scaled limits are written to `before`/`after` as scratch.
                    self.before[i] = limits.velocity[i] * scale;
                    self.after[i] = limits.acceleration[i];
                }
                spline.plan(&self.start, &self.before, &self.after);
                self.end.copy_from_slice(spline.end());
                self.duration = spline.duration();
                return Ok(());
            }
            (Move::Lin { target }, Shape::Cartesian(path)) | (Move::Circ { target, .. }, Shape::Cartesian(path)) => {
                let start_pose = arm.tool_pose(&self.start);
                let end_pose = pose_from_vector(target);
                *path = match &self.spec.motion {
                    Move::Circ { via, .. } => CartesianPath::arc(&start_pose, &Vector3::from(*via), &end_pose)?,
                    _ => CartesianPath::line(&start_pose, &end_pose),
                };
                let (length, angle) = (path.length(), path.rotation_angle());
                let (mut v, mut a, mut j) = (f64::INFINITY, f64::INFINITY, f64::INFINITY);
                for (d, l) in [(length, limits.linear), (angle, limits.angular)] {
                    if d > 1e-12 {
                        v = v.min(l[0] * scale / d);
                        a = a.min(l[1] / d);
                        j = j.min(l[2] / d);
                    }
                }
                self.profile = if v.is_finite() { Profile::plan(1.0, v, a, j) } else { Profile::STILL };
                let stretch = self.follow_path(arm, limits)?;
                self.profile = self.profile.stretched(stretch);
            }
            _ => unreachable!("shape made for its move in Sequence::new"),
        }
        self.duration = self.profile.duration();
        Ok(())
    }

    /// Walks the Cartesian path through IK from the start: every pose reachable, no jump
    /// between neighbouring samples (a singularity or a change of configuration on the way),
    /// and sets `end`. Returns by how much the profile must be stretched so that no joint
    /// exceeds its velocity or acceleration limit.
    fn follow_path(&mut self, arm: &mut dyn Kinematics, limits: &MotionLimits) -> Result<f64, String> {
        let Shape::Cartesian(path) = &self.shape else { unreachable!() };
        let n = self.start.len();
        let (peak_u_velocity, peak_u_accel) = self.profile.peaks();
        let du = 1.0 / PATH_SAMPLES as f64;
        self.before.copy_from_slice(&self.start);
        self.qd.fill(0.0); // dq/du of the previous interval
        let mut stretch: f64 = 1.0;
        for i in 1..=PATH_SAMPLES {
            let u = i as f64 * du;
            let pose = path.pose(u);
            if !arm.inverse(&pose, &self.before, &mut self.q) {
                let p = pose.translation * 1e3;
                return Err(format!("the tool pose at {:.0}% of the path ({:.1}, {:.1}, {:.1}) mm is out of reach or outside the joint limits", u * 100.0, p.x, p.y, p.z));
            }
            for j in 0..n {
                let slope = (self.q[j] - self.before[j]) / du;
                if (self.q[j] - self.before[j]).abs() > 0.2 {
                    let p = pose.translation * 1e3;
                    return Err(format!(
                        "joint {} jumps by {:.1}° near ({:.1}, {:.1}, {:.1}) mm at {:.0}% of the path: the path passes through a singularity or needs another arm configuration",
                        j + 1,
                        (self.q[j] - self.before[j]).to_degrees(),
                        p.x,
                        p.y,
                        p.z,
                        u * 100.0
                    ));
                }
                let curvature = if i > 1 { (slope - self.qd[j]) / du } else { 0.0 };
                let velocity = slope.abs() * peak_u_velocity;
                let accel = curvature.abs() * peak_u_velocity * peak_u_velocity + slope.abs() * peak_u_accel;
                stretch = stretch.max(velocity / (limits.velocity[j] * self.spec.velocity_scale)).max((accel / limits.acceleration[j]).sqrt());
                self.qd[j] = slope;
            }
            self.before.copy_from_slice(&self.q);
        }
        self.end.copy_from_slice(&self.q);
        Ok(stretch)
    }

    /// Duration of the braking (= accelerating) part, the most a blend may overlap.
    fn ramp_time(&self) -> f64 {
        match self.shape {
            Shape::Spline(_) => 0.5 * self.duration,
            _ => self.profile.ramp_time(),
        }
    }

    /// Time at which the tool is `radius` from `point`: searching from the end backwards
    /// (`from_end`) or from the start forwards. Bisection on the segment's own path.
    fn time_at_distance(&mut self, arm: &mut dyn Kinematics, point: &Vector3<f64>, radius: f64, from_end: bool) -> f64 {
        let (mut near, mut far) = if from_end { (self.duration, 0.0) } else { (0.0, self.duration) };
        if self.distance_at(arm, point, far) < radius {
            return far;
        }
        for _ in 0..50 {
            let mid = 0.5 * (near + far);
            if self.distance_at(arm, point, mid) < radius {
                near = mid;
            } else {
                far = mid;
            }
        }
        0.5 * (near + far)
    }

    fn distance_at(&mut self, arm: &mut dyn Kinematics, point: &Vector3<f64>, tau: f64) -> f64 {
        match &self.shape {
            Shape::Cartesian(path) => (path.pose(self.profile.sample(tau).0).translation - point).norm(),
            _ => {
                // Joint-space segments (no IK involved): the tool's position through forward kinematics.
                let _ = self.sample(arm, tau);
                (arm.tool_pose(&self.q).translation - point).norm()
            }
        }
    }

    /// The segment's own q, qd, qdd at τ ∈ [0, duration].
    fn sample(&mut self, arm: &mut dyn Kinematics, tau: f64) -> Result<(), String> {
        match &self.shape {
            Shape::Joint => {
                let (s, sd, sdd) = self.profile.sample(tau);
                for j in 0..self.q.len() {
                    let d = self.end[j] - self.start[j];
                    self.q[j] = self.start[j] + d * s;
                    self.qd[j] = d * sd;
                    self.qdd[j] = d * sdd;
                }
            }
            Shape::Spline(spline) => spline.sample(tau, &mut self.q, &mut self.qd, &mut self.qdd),
            Shape::Cartesian(path) => {
                let h = DIFFERENCE_STEP;
                let solve = |arm: &mut dyn Kinematics, seed: &[f64], t: f64, q: &mut [f64]| {
                    let pose = path.pose(self.profile.sample(t).0);
                    if arm.inverse(&pose, seed, q) {
                        Ok(())
                    } else {
                        let p = pose.translation * 1e3;
                        Err(format!("the tool pose ({:.1}, {:.1}, {:.1}) mm is out of reach", p.x, p.y, p.z))
                    }
                };
                solve(arm, &self.seed, tau, &mut self.q)?;
                solve(arm, &self.q, tau - h, &mut self.before)?;
                solve(arm, &self.q, tau + h, &mut self.after)?;
                for j in 0..self.q.len() {
                    self.qd[j] = (self.after[j] - self.before[j]) / (2.0 * h);
                    self.qdd[j] = (self.after[j] - 2.0 * self.q[j] + self.before[j]) / (h * h);
                }
                self.seed.copy_from_slice(&self.q);
            }
        }
        Ok(())
    }
}
