//! Inverse kinematics: damped least squares on any frame ([`DlsIk`]), and closed form for
//! 6R arms with a spherical wrist ([`AnalyticIk`]).

use nalgebra::{DVector, Matrix6, Vector3, Vector6};

use super::kinematics::{check_len, frame_jacobian, frame_placement, update_joint_placements};
use super::spatial::{log3, rotation_about_axis, Se3};
use super::{Data, FrameIndex, JointKind, Model, ModelError};

/// How a solve ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IkOutcome {
    /// Whether the pose error fell below the tolerance.
    pub converged: bool,
    /// Iterations taken (0 when the seed was already a solution).
    pub iterations: usize,
    /// Norm of the final pose error (position in m and rotation vector in rad, stacked).
    pub error: f64,
}

/// Damped-least-squares IK of one frame's pose, with its workspace preallocated.
///
/// Each iteration takes `dq = Jᵀ (J Jᵀ + λ² I)⁻¹ e`, where `e` stacks the frame origin's
/// position error and the rotation vector from the current to the target orientation,
/// both in world axes (matching the LOCAL_WORLD_ALIGNED Jacobian). The damping grows with
/// the error, `λ² = damping² + ½|e|²` (Sugihara's Levenberg–Marquardt rule): robust far from
/// the target and near singularities, and vanishing at the solution so convergence is fast. Steps are limited to
/// `max_step` per joint and, when `clamp_to_limits` is set, the result to the joint limits.
#[derive(Clone, Debug)]
pub struct DlsIk {
    /// Iterations before giving up (default 200).
    pub max_iterations: usize,
    /// Pose-error norm at which the solve has converged (default 1e-12).
    pub tolerance: f64,
    /// Base damping λ₀ of `λ² = λ₀² + ½|e|²` (default 1e-4).
    pub damping: f64,
    /// Largest change of any joint per iteration (rad or m; default 0.5).
    pub max_step: f64,
    /// Keep every iterate within the model's position limits (default true).
    pub clamp_to_limits: bool,
    q: DVector<f64>,
    dq: DVector<f64>,
}

impl DlsIk {
    /// A solver with the defaults above and its workspace sized for `model`.
    pub fn new(model: &Model) -> Self {
        DlsIk {
            max_iterations: 200,
            tolerance: 1e-12,
            damping: 1e-4,
            max_step: 0.5,
            clamp_to_limits: true,
            q: DVector::zeros(model.nq()),
            dq: DVector::zeros(model.nv()),
        }
    }

    /// The configuration the last solve ended at.
    pub fn solution(&self) -> &[f64] {
        self.q.as_slice()
    }

    /// Moves `frame` to `target` (its world placement), starting from `seed`.
    ///
    /// # Panics
    /// If `seed.len() != model.nq()` or the workspace was made for another model size.
    pub fn solve(&mut self, model: &Model, data: &mut Data, frame: FrameIndex, target: &Se3, seed: &[f64]) -> IkOutcome {
        check_len("seed", seed.len(), model.nq());
        check_len("IK workspace", self.q.len(), model.nq());
        self.q.copy_from_slice(seed);
        let mut outcome = IkOutcome { converged: false, iterations: 0, error: f64::INFINITY };
        for iteration in 0..=self.max_iterations {
            update_joint_placements(model, data, self.q.as_slice());
            let current = frame_placement(model, data, frame);
            let position_error = target.translation - current.translation;
            let rotation_error = log3(&(target.rotation * current.rotation.transpose()));
            let error = Vector6::new(position_error.x, position_error.y, position_error.z, rotation_error.x, rotation_error.y, rotation_error.z);
            outcome.iterations = iteration;
            outcome.error = error.norm();
            if outcome.error < self.tolerance {
                outcome.converged = true;
                break;
            }
            if iteration == self.max_iterations {
                break;
            }
            let jacobian = frame_jacobian(model, data, frame);
            let mut jjt = Matrix6::identity() * (self.damping * self.damping + 0.5 * outcome.error * outcome.error);
            for column in jacobian.column_iter() {
                let c = Vector6::from_iterator(column.iter().copied());
                jjt += c * c.transpose();
            }
            let Some(cholesky) = jjt.cholesky() else { break };
            let weights = cholesky.solve(&error);
            self.dq.gemv_tr(1.0, jacobian, &weights, 0.0);
            let largest = self.dq.amax();
            if largest > self.max_step {
                self.dq *= self.max_step / largest;
            }
            self.q += &self.dq;
            if self.clamp_to_limits {
                for (qi, limits) in self.q.iter_mut().zip(model.limits()) {
                    *qi = qi.clamp(limits.lower, limits.upper);
                }
            }
        }
        outcome
    }
}

/// Why an arm does not fit [`AnalyticIk`].
fn unfit(model: &Model, reason: impl Into<String>) -> ModelError {
    ModelError::invalid(model.name(), format!("analytic IK needs a 6R chain with axes 2 ∥ 3 and a spherical wrist: {}", reason.into()))
}

/// Closed-form IK for 6R arms whose last three axes meet in one point (a spherical wrist)
/// and whose second and third axes are parallel: KUKA KR, ABB IRB, Fanuc, Puma and the like
/// (not UR arms, whose wrist axes do not meet). Up to 8 solutions: shoulder × elbow × wrist.
///
/// Works on the product of exponentials of the model at `q = 0` (so it applies to any
/// model of such an arm, URDF or DH), with Paden–Kahan subproblems: the wrist centre fixes
/// joint 1 (its height along axis 2 is set by joint 1 alone), then joint 3 (distance from
/// axis 2), then joint 2; the wrist orientation gives joints 4, 5 (subproblem 2) and 6.
#[derive(Clone, Debug)]
pub struct AnalyticIk {
    frame: FrameIndex,
    /// Joint axes and points on them, in world coordinates at `q = 0`.
    axes: [Vector3<f64>; 6],
    points: [Vector3<f64>; 6],
    /// World placement of the frame at `q = 0`.
    home: Se3,
    wrist_centre: Vector3<f64>,
    lower: [f64; 6],
    upper: [f64; 6],
}

/// Rotation about the line through `point` along unit `axis` by `angle`, applied to `x`.
fn rotate_about(axis: &Vector3<f64>, point: &Vector3<f64>, angle: f64, x: &Vector3<f64>) -> Vector3<f64> {
    let (s, c) = angle.sin_cos();
    point + rotation_about_axis(axis, s, c) * (x - point)
}

/// Paden–Kahan subproblem 1: the angle about `axis` taking vector `from` to vector `to`
/// (their components across the axis).
fn subproblem1(axis: &Vector3<f64>, from: &Vector3<f64>, to: &Vector3<f64>) -> f64 {
    let u = from - axis * axis.dot(from);
    let v = to - axis * axis.dot(to);
    axis.dot(&u.cross(&v)).atan2(u.dot(&v))
}

impl AnalyticIk {
    /// Checks the arm's structure and precomputes its geometry at `q = 0`.
    pub fn new(model: &Model, frame: FrameIndex) -> Result<Self, ModelError> {
        if model.nv() != 6 {
            return Err(unfit(model, format!("the model has {} joints", model.nv())));
        }
        for joint in 1..=6 {
            if model.parent(joint) != joint - 1 || model.joint_kinds()[joint] != JointKind::Revolute {
                return Err(unfit(model, format!("joint {joint} is not a revolute joint following joint {}", joint - 1)));
            }
        }
        if frame >= model.frames().len() || model.frames()[frame].parent_joint != 6 {
            return Err(unfit(model, "the frame must be attached to the sixth joint"));
        }
        let mut data = Data::new(model);
        update_joint_placements(model, &mut data, &[0.0; 6]);
        let mut axes = [Vector3::zeros(); 6];
        let mut points = [Vector3::zeros(); 6];
        for i in 0..6 {
            let placement = &data.joint_placements[i + 1];
            axes[i] = placement.rotation * model.joint_axes()[i + 1];
            points[i] = placement.translation;
        }
        const TOLERANCE: f64 = 1e-9;
        if axes[1].cross(&axes[2]).norm() > TOLERANCE {
            return Err(unfit(model, "axes 2 and 3 are not parallel"));
        }
        // The wrist centre: where axes 4 and 5 meet; axis 6 must pass through it too.
        let (a, b) = (axes[3], axes[4]);
        let normal = a.cross(&b);
        if normal.norm() < TOLERANCE {
            return Err(unfit(model, "axes 4 and 5 are parallel"));
        }
        let offset = points[4] - points[3];
        if offset.dot(&normal).abs() > TOLERANCE * normal.norm() {
            return Err(unfit(model, "axes 4 and 5 do not intersect"));
        }
        let along_a = offset.cross(&b).dot(&normal) / normal.norm_squared();
        let wrist_centre = points[3] + a * along_a;
        if (wrist_centre - points[5]).cross(&axes[5]).norm() > TOLERANCE {
            return Err(unfit(model, "axis 6 does not pass through the intersection of axes 4 and 5"));
        }
        let mut lower = [0.0; 6];
        let mut upper = [0.0; 6];
        for (i, limits) in model.limits().iter().enumerate() {
            lower[i] = limits.lower;
            upper[i] = limits.upper;
        }
        Ok(AnalyticIk { frame, axes, points, home: frame_placement(model, &data, frame), wrist_centre, lower, upper })
    }

    /// The frame this solver places (the one given when it was built).
    pub fn frame(&self) -> FrameIndex {
        self.frame
    }

    /// All solutions for the world placement `target` of the frame, written to `solutions`;
    /// returns how many (0 when out of reach). Angles are in (−π, π]; limits are not applied.
    pub fn solve(&self, target: &Se3, solutions: &mut [[f64; 6]; 8]) -> usize {
        let [w1, w2, w3, w4, w5, w6] = &self.axes;
        let [p1, p2, p3, ..] = &self.points;
        // e^{ξ1 q1} ⋯ e^{ξ6 q6} = target · home⁻¹; the wrist joints leave the wrist centre still.
        let product = target.compose(&self.home.inverse());
        let wrist_target = product.act_point(&self.wrist_centre);
        let mut count = 0;

        // Joint 1: rotating about axis 1 must put the wrist centre at the height along axis 2
        // that joints 2 and 3 cannot change: A cos q1 + B sin q1 = C.
        let u = wrist_target - p1;
        let (u_along, w12) = (u.dot(w1), w1.dot(w2));
        let a = u.dot(w2) - u_along * w12;
        let b = u.dot(&w1.cross(w2));
        let c = (self.wrist_centre - p2).dot(w2) - (p1 - p2).dot(w2) - u_along * w12;
        let radius_squared = a * a + b * b;
        if radius_squared < c * c || radius_squared == 0.0 {
            return 0;
        }
        let base_angle = b.atan2(a);
        let spread = (radius_squared - c * c).sqrt().atan2(c);
        for q1 in [base_angle + spread, base_angle - spread] {
            let wrist_in_1 = rotate_about(w1, p1, -q1, &wrist_target);
            // Joint 3: the wrist centre's distance from axis 2 depends on joint 3 alone.
            let distance_squared = {
                let d = wrist_in_1 - p2;
                (d - w2 * w2.dot(&d)).norm_squared()
            };
            let uu = self.wrist_centre - p3;
            let vv = p2 - p3;
            let u_perp = uu - w3 * w3.dot(&uu);
            let v_perp = vv - w3 * w3.dot(&vv);
            // Across axis 2 (= across axis 3, they are parallel): |R u⊥ − v⊥|² = target.
            let (nu, nv) = (u_perp.norm(), v_perp.norm());
            if nu == 0.0 || nv == 0.0 {
                continue;
            }
            let cos_relative = (nu * nu + nv * nv - distance_squared) / (2.0 * nu * nv);
            if cos_relative.abs() > 1.0 + 1e-12 {
                continue;
            }
            let angle_between = w3.dot(&u_perp.cross(&v_perp)).atan2(u_perp.dot(&v_perp));
            let relative = cos_relative.clamp(-1.0, 1.0).acos();
            for q3 in [angle_between - relative, angle_between + relative] {
                let elbow = rotate_about(w3, p3, q3, &self.wrist_centre);
                let q2 = subproblem1(w2, &(elbow - p2), &(wrist_in_1 - p2));
                // The wrist's rotation: what remains of the product after joints 1–3.
                let arm = [(w1, q1), (w2, q2), (w3, q3)].iter().fold(nalgebra::Matrix3::<f64>::identity(), |acc, (w, q)| {
                    let (s, c) = q.sin_cos();
                    acc * rotation_about_axis(w, s, c)
                });
                let wrist = arm.transpose() * product.rotation;
                // Joints 4, 5 (subproblem 2): e^{ω4 q4} e^{ω5 q5} ω6 = wrist · ω6.
                let (p, q) = (*w6, wrist * w6);
                let w45 = w4.dot(w5);
                let denominator = w45 * w45 - 1.0;
                let alpha = (w45 * w5.dot(&p) - w4.dot(&q)) / denominator;
                let beta = (w45 * w4.dot(&q) - w5.dot(&p)) / denominator;
                let cross = w4.cross(w5);
                let gamma_squared = (p.norm_squared() - alpha * alpha - beta * beta - 2.0 * alpha * beta * w45) / cross.norm_squared();
                if gamma_squared < -1e-12 {
                    continue;
                }
                let gamma = gamma_squared.max(0.0).sqrt();
                for sign in [1.0, -1.0] {
                    let z = w4 * alpha + w5 * beta + cross * (sign * gamma);
                    let q4 = subproblem1(w4, &z, &q);
                    let q5 = subproblem1(w5, &p, &z);
                    let (s4, c4) = q4.sin_cos();
                    let (s5, c5) = q5.sin_cos();
                    let remaining = (rotation_about_axis(w4, s4, c4) * rotation_about_axis(w5, s5, c5)).transpose() * wrist;
                    // Joint 6 turns any vector across its axis, e.g. axis 4's.
                    let reference = if w4.cross(w6).norm() > 1e-6 { *w4 } else { *w5 };
                    let q6 = subproblem1(w6, &reference, &(remaining * reference));
                    if count < solutions.len() {
                        solutions[count] = [q1, q2, q3, q4, q5, q6].map(wrap_to_pi);
                        count += 1;
                    }
                    if gamma == 0.0 {
                        break;
                    }
                }
            }
        }
        count
    }

    /// The solution nearest to `seed` (each angle shifted by whole turns towards the seed,
    /// within the joint limits), or `None` when the pose is out of reach or limits.
    pub fn nearest(&self, target: &Se3, seed: &[f64; 6]) -> Option<[f64; 6]> {
        let mut solutions = [[0.0; 6]; 8];
        let count = self.solve(target, &mut solutions);
        let mut best: Option<([f64; 6], f64)> = None;
        'candidates: for candidate in &solutions[..count] {
            let mut shifted = [0.0; 6];
            for i in 0..6 {
                let turns = ((seed[i] - candidate[i]) / std::f64::consts::TAU).round();
                let mut angle = candidate[i] + turns * std::f64::consts::TAU;
                // Back into the limits if a whole turn allows it.
                if angle > self.upper[i] {
                    angle -= std::f64::consts::TAU;
                } else if angle < self.lower[i] {
                    angle += std::f64::consts::TAU;
                }
                if angle < self.lower[i] || angle > self.upper[i] {
                    continue 'candidates;
                }
                shifted[i] = angle;
            }
            let distance: f64 = shifted.iter().zip(seed).map(|(a, b)| (a - b) * (a - b)).sum();
            if best.is_none_or(|(_, d)| distance < d) {
                best = Some((shifted, distance));
            }
        }
        best.map(|(q, _)| q)
    }
}

fn wrap_to_pi(angle: f64) -> f64 {
    let wrapped = angle.rem_euclid(std::f64::consts::TAU);
    if wrapped > std::f64::consts::PI {
        wrapped - std::f64::consts::TAU
    } else {
        wrapped
    }
}
