//! Spatial algebra: rigid placements, motion and force vectors, rigid-body inertia.
//!
//! Conventions follow Pinocchio: 6-vectors are ordered linear first, angular second;
//! an [`Se3`] `a_m_b` maps coordinates in frame `b` to frame `a`
//! (`p_a = rotation * p_b + translation`). Everything is fixed-size and allocation-free.

use nalgebra::{Matrix3, Matrix4, Matrix6, Vector3, Vector6};

/// The skew-symmetric matrix `[v]×` with `[v]× w = v × w`.
#[inline]
pub fn skew(v: &Vector3<f64>) -> Matrix3<f64> {
    Matrix3::new(0.0, -v.z, v.y, v.z, 0.0, -v.x, -v.y, v.x, 0.0)
}

/// Rotation from roll, pitch, yaw about fixed x, y, z axes: `Rz(yaw) Ry(pitch) Rx(roll)`
/// (the URDF convention).
pub fn rotation_from_rpy(roll: f64, pitch: f64, yaw: f64) -> Matrix3<f64> {
    let (sr, cr) = roll.sin_cos();
    let (sp, cp) = pitch.sin_cos();
    let (sy, cy) = yaw.sin_cos();
    Matrix3::new(cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr, sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr, -sp, cp * sr, cp * cr)
}

/// Roll, pitch, yaw with `rotation = Rz(yaw) Ry(pitch) Rx(roll)` (inverse of
/// [`rotation_from_rpy`]); pitch in [−π/2, π/2]. At pitch ±π/2 only roll ∓ yaw is defined,
/// and yaw is set to 0.
pub fn rpy_from_rotation(rotation: &Matrix3<f64>) -> Vector3<f64> {
    let r = rotation;
    let cos_pitch = r[(0, 0)].hypot(r[(1, 0)]);
    let pitch = (-r[(2, 0)]).atan2(cos_pitch);
    // Below this, roll and yaw from the first column / last row lose precision.
    if cos_pitch > 1e-9 {
        Vector3::new(r[(2, 1)].atan2(r[(2, 2)]), pitch, r[(1, 0)].atan2(r[(0, 0)]))
    } else if pitch > 0.0 {
        // R = [.. sin(roll − yaw) ..; .. cos(roll − yaw) ..] in column 1.
        Vector3::new(r[(0, 1)].atan2(r[(1, 1)]), pitch, 0.0)
    } else {
        Vector3::new((-r[(0, 1)]).atan2(r[(1, 1)]), pitch, 0.0)
    }
}

/// Rotation by `angle` about the unit vector `axis` (Rodrigues), given its sine and cosine.
#[inline]
pub fn rotation_about_axis(axis: &Vector3<f64>, sin: f64, cos: f64) -> Matrix3<f64> {
    let (x, y, z) = (axis.x, axis.y, axis.z);
    let t = 1.0 - cos;
    let (tx, ty, tz) = (t * x, t * y, t * z);
    let (sx, sy, sz) = (sin * x, sin * y, sin * z);
    Matrix3::new(tx * x + cos, tx * y - sz, tx * z + sy, tx * y + sz, ty * y + cos, ty * z - sx, tx * z - sy, ty * z + sx, tz * z + cos)
}

/// The rotation vector (axis × angle) of a rotation matrix: the SO(3) logarithm.
pub fn log3(rotation: &Matrix3<f64>) -> Vector3<f64> {
    // Through the quaternion: robust near angle 0 and π, unlike acos of the trace.
    let r = nalgebra::Rotation3::from_matrix_unchecked(*rotation);
    nalgebra::UnitQuaternion::from_rotation_matrix(&r).scaled_axis()
}

/// A rigid placement (element of SE(3)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Se3 {
    /// Orientation of the child frame's axes in the parent frame.
    pub rotation: Matrix3<f64>,
    /// Position of the child frame's origin in the parent frame (m).
    pub translation: Vector3<f64>,
}

impl Default for Se3 {
    fn default() -> Self {
        Self::identity()
    }
}

impl Se3 {
    /// The child frame coincides with the parent frame.
    pub fn identity() -> Self {
        Self { rotation: Matrix3::identity(), translation: Vector3::zeros() }
    }

    /// From the child frame's orientation and origin (m) in the parent frame.
    pub fn new(rotation: Matrix3<f64>, translation: Vector3<f64>) -> Self {
        Self { rotation, translation }
    }

    /// A pure translation (m), axes unchanged.
    pub fn from_translation(translation: Vector3<f64>) -> Self {
        Self { rotation: Matrix3::identity(), translation }
    }

    /// A pure rotation about the parent frame's origin.
    pub fn from_rotation(rotation: Matrix3<f64>) -> Self {
        Self { rotation, translation: Vector3::zeros() }
    }

    /// From a 4×4 homogeneous transform (the bottom row is not checked).
    pub fn from_homogeneous(m: &Matrix4<f64>) -> Self {
        Self { rotation: m.fixed_view::<3, 3>(0, 0).into_owned(), translation: m.fixed_view::<3, 1>(0, 3).into_owned() }
    }

    /// As a 4×4 homogeneous transform `[R t; 0 1]`.
    pub fn to_homogeneous(&self) -> Matrix4<f64> {
        let mut m = Matrix4::identity();
        m.fixed_view_mut::<3, 3>(0, 0).copy_from(&self.rotation);
        m.fixed_view_mut::<3, 1>(0, 3).copy_from(&self.translation);
        m
    }

    /// `self * other`: placement of `other`'s frame seen from `self`'s parent frame.
    #[inline]
    pub fn compose(&self, other: &Se3) -> Se3 {
        Se3 { rotation: self.rotation * other.rotation, translation: self.rotation * other.translation + self.translation }
    }

    /// The parent frame's placement seen from the child frame.
    #[inline]
    pub fn inverse(&self) -> Se3 {
        let rt = self.rotation.transpose();
        Se3 { rotation: rt, translation: -(rt * self.translation) }
    }

    /// `self⁻¹ * other`, without forming the inverse.
    #[inline]
    pub fn inverse_compose(&self, other: &Se3) -> Se3 {
        let rt = self.rotation.transpose();
        Se3 { rotation: rt * other.rotation, translation: rt * (other.translation - self.translation) }
    }

    /// This placement seen from a frame with the same axes as the parent frame but its
    /// origin at `point` (given in the parent frame).
    #[inline]
    pub fn with_origin_at(&self, point: &Vector3<f64>) -> Se3 {
        Se3 { rotation: self.rotation, translation: self.translation - point }
    }

    /// A point given in the child frame, expressed in the parent frame (m).
    #[inline]
    pub fn act_point(&self, p: &Vector3<f64>) -> Vector3<f64> {
        self.rotation * p + self.translation
    }

    /// Motion expressed in the child frame → the same motion expressed in the parent frame.
    #[inline]
    pub fn act_motion(&self, m: &Motion) -> Motion {
        let angular = self.rotation * m.angular;
        Motion { linear: self.rotation * m.linear + self.translation.cross(&angular), angular }
    }

    /// Motion expressed in the parent frame → the same motion expressed in the child frame.
    #[inline]
    pub fn inv_act_motion(&self, m: &Motion) -> Motion {
        let rt = self.rotation.transpose();
        Motion { linear: rt * (m.linear - self.translation.cross(&m.angular)), angular: rt * m.angular }
    }

    /// Force expressed in the child frame → the same force expressed in the parent frame.
    #[inline]
    pub fn act_force(&self, f: &Force) -> Force {
        let linear = self.rotation * f.linear;
        Force { linear, angular: self.rotation * f.angular + self.translation.cross(&linear) }
    }

    /// Inertia expressed in the child frame → the same inertia expressed in the parent frame.
    #[inline]
    pub fn act_inertia(&self, inertia: &Inertia) -> Inertia {
        Inertia { mass: inertia.mass, com: self.act_point(&inertia.com), rotational: self.rotation * inertia.rotational * self.rotation.transpose() }
    }

    /// A 6×6 articulated-body inertia (maps motion to force) expressed in the child frame
    /// → the same expressed in the parent frame: `X* I X⁻¹`, done in 3×3 blocks.
    pub fn act_articulated_inertia(&self, inertia: &Matrix6<f64>) -> Matrix6<f64> {
        let r = &self.rotation;
        let rt = r.transpose();
        // Rotate: blockdiag(R) I blockdiag(Rᵀ).
        let a = r * inertia.fixed_view::<3, 3>(0, 0) * rt;
        let b = r * inertia.fixed_view::<3, 3>(0, 3) * rt;
        let c = r * inertia.fixed_view::<3, 3>(3, 3) * rt;
        // Translate by t: A' = A, B' = B − A[t], C' = C + [t]B − Bᵀ[t] − [t]A[t]
        // (and −Bᵀ[t] = ([t]B)ᵀ since [t]ᵀ = −[t]).
        let t = skew(&self.translation);
        let at = a * t;
        let b_new = b - at;
        let tb = t * b;
        let c_new = c + tb + tb.transpose() - t * at;
        let mut out = Matrix6::zeros();
        out.fixed_view_mut::<3, 3>(0, 0).copy_from(&a);
        out.fixed_view_mut::<3, 3>(0, 3).copy_from(&b_new);
        out.fixed_view_mut::<3, 3>(3, 0).copy_from(&b_new.transpose());
        out.fixed_view_mut::<3, 3>(3, 3).copy_from(&c_new);
        out
    }
}

/// A spatial motion vector (twist or spatial acceleration), in some frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Motion {
    /// Linear velocity or acceleration of the point at the frame's origin (m/s, m/s²).
    pub linear: Vector3<f64>,
    /// Angular velocity or acceleration (rad/s, rad/s²).
    pub angular: Vector3<f64>,
}

impl Motion {
    /// No motion.
    pub fn zero() -> Self {
        Self::default()
    }

    /// From its linear and angular parts.
    pub fn new(linear: Vector3<f64>, angular: Vector3<f64>) -> Self {
        Self { linear, angular }
    }

    /// As a 6-vector (linear, angular).
    #[inline]
    pub fn to_vector(&self) -> Vector6<f64> {
        Vector6::new(self.linear.x, self.linear.y, self.linear.z, self.angular.x, self.angular.y, self.angular.z)
    }

    /// From a 6-vector (linear, angular).
    #[inline]
    pub fn from_vector(v: &Vector6<f64>) -> Self {
        Self { linear: Vector3::new(v[0], v[1], v[2]), angular: Vector3::new(v[3], v[4], v[5]) }
    }

    /// Both parts multiplied by `s`.
    #[inline]
    pub fn scaled(&self, s: f64) -> Motion {
        Motion { linear: self.linear * s, angular: self.angular * s }
    }

    /// The sum of two motions expressed in the same frame.
    #[inline]
    pub fn add(&self, other: &Motion) -> Motion {
        Motion { linear: self.linear + other.linear, angular: self.angular + other.angular }
    }

    /// Spatial cross product `self × m` (the motion of a moving frame's motion).
    #[inline]
    pub fn cross_motion(&self, m: &Motion) -> Motion {
        Motion { linear: self.angular.cross(&m.linear) + self.linear.cross(&m.angular), angular: self.angular.cross(&m.angular) }
    }

    /// Dual cross product `self ×* f` (rate of change of a force carried by this motion).
    #[inline]
    pub fn cross_force(&self, f: &Force) -> Force {
        Force { linear: self.angular.cross(&f.linear), angular: self.angular.cross(&f.angular) + self.linear.cross(&f.linear) }
    }

    /// Power pairing `self · f`.
    #[inline]
    pub fn dot(&self, f: &Force) -> f64 {
        self.linear.dot(&f.linear) + self.angular.dot(&f.angular)
    }
}

/// A spatial force vector (wrench or momentum): `linear` is force, `angular` is torque.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Force {
    /// Force (N) or linear momentum (kg·m/s).
    pub linear: Vector3<f64>,
    /// Torque about the frame's origin (N·m) or angular momentum (kg·m²/s).
    pub angular: Vector3<f64>,
}

impl Force {
    /// No force.
    pub fn zero() -> Self {
        Self::default()
    }

    /// As a 6-vector (linear, angular).
    #[inline]
    pub fn to_vector(&self) -> Vector6<f64> {
        Vector6::new(self.linear.x, self.linear.y, self.linear.z, self.angular.x, self.angular.y, self.angular.z)
    }

    /// From a 6-vector (linear, angular).
    #[inline]
    pub fn from_vector(v: &Vector6<f64>) -> Self {
        Self { linear: Vector3::new(v[0], v[1], v[2]), angular: Vector3::new(v[3], v[4], v[5]) }
    }

    /// Adds a force expressed in the same frame.
    #[inline]
    pub fn add_assign(&mut self, other: &Force) {
        self.linear += other.linear;
        self.angular += other.angular;
    }
}

/// Spatial inertia of a rigid body: mass, centre of mass and rotational inertia about the
/// centre of mass, all expressed in the frame the inertia belongs to.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Inertia {
    /// Mass (kg).
    pub mass: f64,
    /// Centre of mass in the inertia's frame (m).
    pub com: Vector3<f64>,
    /// Rotational inertia about the centre of mass (symmetric).
    pub rotational: Matrix3<f64>,
}

impl Inertia {
    /// No body: zero mass and inertia.
    pub fn zero() -> Self {
        Self { mass: 0.0, com: Vector3::zeros(), rotational: Matrix3::zeros() }
    }

    /// From mass (kg), centre of mass (m) and rotational inertia about it (kg·m²).
    pub fn new(mass: f64, com: Vector3<f64>, rotational: Matrix3<f64>) -> Self {
        Self { mass, com, rotational }
    }

    /// Why no rigid body can have this inertia, or `None` when one can: the mass must be
    /// finite and ≥ 0, the centre of mass finite, and the rotational inertia symmetric with
    /// principal moments ≥ 0 that satisfy the triangle inequality (each at most the sum of the
    /// other two), as every mass distribution's do. A point mass (rotational inertia zero)
    /// passes. Rounding from merging and moving inertias is tolerated.
    pub fn physical_error(&self) -> Option<String> {
        if !(self.mass.is_finite() && self.mass >= 0.0) {
            return Some(format!("mass must be a finite number ≥ 0, is {} kg", self.mass));
        }
        if !self.com.iter().all(|x| x.is_finite()) {
            return Some(format!("centre of mass must be finite, is ({}, {}, {}) m", self.com.x, self.com.y, self.com.z));
        }
        let r = &self.rotational;
        if !r.iter().all(|x| x.is_finite()) {
            return Some("rotational inertia must be finite".into());
        }
        let scale = r.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let tolerance = 1e-9 * scale;
        if (r - r.transpose()).iter().any(|x| x.abs() > tolerance) {
            return Some("rotational inertia must be symmetric".into());
        }
        let mut moments = r.symmetric_eigenvalues();
        moments.as_mut_slice().sort_by(f64::total_cmp);
        let [smallest, middle, largest] = [moments[0], moments[1], moments[2]];
        if smallest < -tolerance {
            return Some(format!(
                "rotational inertia is not positive definite: its principal moments are {smallest:.4e}, {middle:.4e}, {largest:.4e} kg·m² (one is negative; check the signs of the products ixy, ixz, iyz)"
            ));
        }
        if largest > smallest + middle + tolerance {
            return Some(format!(
                "rotational inertia violates the triangle inequality: its largest principal moment {largest:.4e} kg·m² exceeds the sum of the other two ({smallest:.4e} + {middle:.4e}); no body has such an inertia"
            ));
        }
        None
    }

    /// Momentum `I v` of a body moving with `v` (both in this inertia's frame).
    #[inline]
    pub fn mul_motion(&self, v: &Motion) -> Force {
        // Velocity of the centre of mass, then angular momentum about the frame origin.
        let linear = (v.linear + v.angular.cross(&self.com)) * self.mass;
        Force { linear, angular: self.rotational * v.angular + self.com.cross(&linear) }
    }

    /// The sum of two inertias expressed in the same frame (parallel-axis theorem).
    pub fn added(&self, other: &Inertia) -> Inertia {
        let mass = self.mass + other.mass;
        if mass <= 0.0 {
            return Inertia { mass, com: Vector3::zeros(), rotational: self.rotational + other.rotational };
        }
        let com = (self.com * self.mass + other.com * other.mass) / mass;
        let d = self.com - other.com;
        // −[d]×² = |d|² I − d dᵀ
        let shift = (Matrix3::identity() * d.norm_squared() - d * d.transpose()) * (self.mass * other.mass / mass);
        Inertia { mass, com, rotational: self.rotational + other.rotational + shift }
    }

    /// The 6×6 matrix mapping motion (linear, angular) to force (linear, angular).
    pub fn to_matrix(&self) -> Matrix6<f64> {
        let c = skew(&self.com);
        let mc = c * self.mass;
        let mut m = Matrix6::zeros();
        m.fixed_view_mut::<3, 3>(0, 0).copy_from(&(Matrix3::identity() * self.mass));
        m.fixed_view_mut::<3, 3>(0, 3).copy_from(&(-mc));
        m.fixed_view_mut::<3, 3>(3, 0).copy_from(&mc);
        m.fixed_view_mut::<3, 3>(3, 3).copy_from(&(self.rotational - mc * c));
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_se3() -> Se3 {
        Se3::new(rotation_from_rpy(0.3, -0.7, 1.1), Vector3::new(0.2, -0.5, 0.9))
    }

    #[test]
    fn motion_and_force_actions_match_6x6_matrices() {
        let m = sample_se3();
        let r = m.rotation;
        let t = skew(&m.translation);
        let mut x_motion = Matrix6::zeros();
        x_motion.fixed_view_mut::<3, 3>(0, 0).copy_from(&r);
        x_motion.fixed_view_mut::<3, 3>(0, 3).copy_from(&(t * r));
        x_motion.fixed_view_mut::<3, 3>(3, 3).copy_from(&r);
        let v = Motion::new(Vector3::new(1.0, -2.0, 0.5), Vector3::new(0.3, 0.1, -0.4));
        assert!((m.act_motion(&v).to_vector() - x_motion * v.to_vector()).norm() < 1e-14);
        assert!((m.inv_act_motion(&m.act_motion(&v)).to_vector() - v.to_vector()).norm() < 1e-14);
        let x_force = x_motion.try_inverse().unwrap().transpose();
        let f = Force { linear: Vector3::new(0.4, 1.0, -3.0), angular: Vector3::new(2.0, 0.0, 1.0) };
        assert!((m.act_force(&f).to_vector() - x_force * f.to_vector()).norm() < 1e-13);

        let inertia = Inertia::new(2.5, Vector3::new(0.1, 0.2, -0.3), Matrix3::new(0.3, 0.01, 0.02, 0.01, 0.4, 0.03, 0.02, 0.03, 0.5));
        let x_inv = x_motion.try_inverse().unwrap();
        let expected = x_force * inertia.to_matrix() * x_inv;
        assert!((m.act_inertia(&inertia).to_matrix() - expected).norm() < 1e-12);
        assert!((m.act_articulated_inertia(&inertia.to_matrix()) - expected).norm() < 1e-12);
        assert!((inertia.mul_motion(&v).to_vector() - inertia.to_matrix() * v.to_vector()).norm() < 1e-13);
    }

    #[test]
    fn inertia_sum_matches_matrix_sum() {
        let a = Inertia::new(1.5, Vector3::new(0.1, 0.0, 0.2), Matrix3::from_diagonal(&Vector3::new(0.1, 0.2, 0.3)));
        let b = Inertia::new(0.5, Vector3::new(-0.3, 0.4, 0.0), Matrix3::from_diagonal(&Vector3::new(0.05, 0.02, 0.01)));
        assert!((a.added(&b).to_matrix() - (a.to_matrix() + b.to_matrix())).norm() < 1e-14);
    }

    #[test]
    fn rpy_round_trips_including_gimbal_lock() {
        let half_pi = std::f64::consts::FRAC_PI_2;
        for (roll, pitch, yaw) in [(0.3, -0.7, 1.1), (-3.0, 1.2, 2.5), (0.4, half_pi, -0.9), (1.3, -half_pi, 0.2), (0.0, 0.0, 0.0)] {
            let r = rotation_from_rpy(roll, pitch, yaw);
            let rpy = rpy_from_rotation(&r);
            assert!((rotation_from_rpy(rpy.x, rpy.y, rpy.z) - r).norm() < 1e-12, "{roll} {pitch} {yaw} -> {rpy}");
        }
    }

    #[test]
    fn rodrigues_and_log_agree() {
        let axis = Vector3::new(1.0, -2.0, 0.5).normalize();
        let angle: f64 = 2.9;
        let r = rotation_about_axis(&axis, angle.sin(), angle.cos());
        assert!((log3(&r) - axis * angle).norm() < 1e-12);
        let z = rotation_about_axis(&Vector3::z(), angle.sin(), angle.cos());
        assert!((z - rotation_from_rpy(0.0, 0.0, angle)).norm() < 1e-15);
    }
}
