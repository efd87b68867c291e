//! One-degree-of-freedom joint motion, specialised per axis as Pinocchio's JointModelRX/RY/RZ
//! and PX/PY/PZ: when the axis is a coordinate axis of the joint frame, products with the
//! motion subspace `S` read or write one coordinate instead of multiplying through.

use nalgebra::{Matrix3, Matrix6, Vector3, Vector6};

use super::spatial::{rotation_about_axis, Force, Motion, Se3};
use super::JointKind;

/// A joint axis in its joint frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Axis {
    X,
    Y,
    Z,
    /// Any other unit vector (including −x, −y, −z).
    Unaligned(Vector3<f64>),
}

impl Axis {
    /// Classifies a unit vector; only exact coordinate axes are specialised.
    pub(crate) fn of(unit: &Vector3<f64>) -> Axis {
        if *unit == Vector3::x() {
            Axis::X
        } else if *unit == Vector3::y() {
            Axis::Y
        } else if *unit == Vector3::z() {
            Axis::Z
        } else {
            Axis::Unaligned(*unit)
        }
    }

    /// `axis · v`
    #[inline(always)]
    fn component(&self, v: &Vector3<f64>) -> f64 {
        match self {
            Axis::X => v.x,
            Axis::Y => v.y,
            Axis::Z => v.z,
            Axis::Unaligned(a) => a.dot(v),
        }
    }

    /// `axis · s`
    #[inline(always)]
    fn scaled(&self, s: f64) -> Vector3<f64> {
        match self {
            Axis::X => Vector3::new(s, 0.0, 0.0),
            Axis::Y => Vector3::new(0.0, s, 0.0),
            Axis::Z => Vector3::new(0.0, 0.0, s),
            Axis::Unaligned(a) => a * s,
        }
    }

    /// `v × (axis · s)`
    #[inline(always)]
    fn cross_from(&self, v: &Vector3<f64>, s: f64) -> Vector3<f64> {
        match self {
            Axis::X => Vector3::new(0.0, v.z * s, -v.y * s),
            Axis::Y => Vector3::new(-v.z * s, 0.0, v.x * s),
            Axis::Z => Vector3::new(v.y * s, -v.x * s, 0.0),
            Axis::Unaligned(a) => v.cross(&(a * s)),
        }
    }

    /// `r · axis`
    #[inline(always)]
    fn rotated_by(&self, r: &Matrix3<f64>) -> Vector3<f64> {
        match self {
            Axis::X => r.column(0).into_owned(),
            Axis::Y => r.column(1).into_owned(),
            Axis::Z => r.column(2).into_owned(),
            Axis::Unaligned(a) => r * a,
        }
    }

    /// `r · Rot(axis, θ)` from `sin θ`, `cos θ`: two columns mix, the third stays.
    #[inline(always)]
    fn rotate(&self, r: &Matrix3<f64>, sin: f64, cos: f64) -> Matrix3<f64> {
        let (c0, c1, c2) = (r.column(0), r.column(1), r.column(2));
        match self {
            Axis::X => Matrix3::from_columns(&[c0.into_owned(), c1 * cos + c2 * sin, c2 * cos - c1 * sin]),
            Axis::Y => Matrix3::from_columns(&[c0 * cos - c2 * sin, c1.into_owned(), c0 * sin + c2 * cos]),
            Axis::Z => Matrix3::from_columns(&[c0 * cos + c1 * sin, c1 * cos - c0 * sin, c2.into_owned()]),
            Axis::Unaligned(a) => r * rotation_about_axis(a, sin, cos),
        }
    }
}

/// How a joint moves: its kind and axis. The motion subspace `S` is the unit twist along
/// the axis (angular for revolute joints, linear for prismatic ones), in the joint frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct JointMotion {
    pub kind: JointKind,
    pub axis: Axis,
}

impl JointMotion {
    pub(crate) fn new(kind: JointKind, unit_axis: &Vector3<f64>) -> Self {
        JointMotion { kind, axis: Axis::of(unit_axis) }
    }

    /// The joint frame in its parent joint frame: `fixed` (the placement at `q = 0`) moved
    /// by the joint at position `q`.
    #[inline(always)]
    pub(crate) fn local_placement(&self, fixed: &Se3, q: f64) -> Se3 {
        match self.kind {
            JointKind::Revolute => {
                let (sin, cos) = q.sin_cos();
                Se3 { rotation: self.axis.rotate(&fixed.rotation, sin, cos), translation: fixed.translation }
            }
            JointKind::Prismatic => Se3 { rotation: fixed.rotation, translation: fixed.translation + self.axis.rotated_by(&fixed.rotation) * q },
        }
    }

    /// `Sᵀ f`
    #[inline(always)]
    pub(crate) fn dot_force(&self, f: &Force) -> f64 {
        match self.kind {
            JointKind::Revolute => self.axis.component(&f.angular),
            JointKind::Prismatic => self.axis.component(&f.linear),
        }
    }

    /// `S qd`
    #[inline(always)]
    pub(crate) fn motion(&self, qd: f64) -> Motion {
        match self.kind {
            JointKind::Revolute => Motion { linear: Vector3::zeros(), angular: self.axis.scaled(qd) },
            JointKind::Prismatic => Motion { linear: self.axis.scaled(qd), angular: Vector3::zeros() },
        }
    }

    /// `v × (S qd)`
    #[inline(always)]
    pub(crate) fn motion_cross(&self, v: &Motion, qd: f64) -> Motion {
        match self.kind {
            JointKind::Revolute => Motion { linear: self.axis.cross_from(&v.linear, qd), angular: self.axis.cross_from(&v.angular, qd) },
            JointKind::Prismatic => Motion { linear: self.axis.cross_from(&v.angular, qd), angular: Vector3::zeros() },
        }
    }

    /// `S` expressed in the frame where the joint frame sits at `placement`.
    #[inline(always)]
    pub(crate) fn subspace_in(&self, placement: &Se3) -> Motion {
        let direction = self.axis.rotated_by(&placement.rotation);
        match self.kind {
            JointKind::Revolute => Motion { linear: placement.translation.cross(&direction), angular: direction },
            JointKind::Prismatic => Motion { linear: direction, angular: Vector3::zeros() },
        }
    }
}

/// `m s` for a 6×6 matrix and a spatial motion, without the 6-vector round trip.
#[inline(always)]
pub(crate) fn matrix_times_motion(m: &Matrix6<f64>, s: &Motion) -> Vector6<f64> {
    m.fixed_columns::<3>(0) * s.linear + m.fixed_columns::<3>(3) * s.angular
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spatial::rotation_from_rpy;

    /// Every specialised product equals the general formula with the axis as a vector.
    #[test]
    fn specialised_axes_match_the_general_formulas() {
        let fixed = Se3::new(rotation_from_rpy(0.4, -0.3, 1.2), Vector3::new(0.1, -0.2, 0.3));
        let v = Motion::new(Vector3::new(0.3, -1.0, 0.7), Vector3::new(-0.2, 0.5, 1.1));
        let f = Force { linear: Vector3::new(1.5, -0.5, 2.0), angular: Vector3::new(0.25, 0.75, -1.25) };
        let (q, qd): (f64, f64) = (0.8, -1.3);
        let axes = [Vector3::x(), Vector3::y(), Vector3::z(), -Vector3::z(), Vector3::new(1.0, -2.0, 0.5).normalize()];
        for kind in [JointKind::Revolute, JointKind::Prismatic] {
            for axis in &axes {
                let joint = JointMotion::new(kind, axis);
                let s = match kind {
                    JointKind::Revolute => Motion::new(Vector3::zeros(), *axis),
                    JointKind::Prismatic => Motion::new(*axis, Vector3::zeros()),
                };
                let expected_placement = match kind {
                    JointKind::Revolute => fixed.compose(&Se3::from_rotation(rotation_about_axis(axis, q.sin(), q.cos()))),
                    JointKind::Prismatic => fixed.compose(&Se3::from_translation(axis * q)),
                };
                let placement = joint.local_placement(&fixed, q);
                let what = format!("{kind:?} {axis:?}");
                assert!((placement.to_homogeneous() - expected_placement.to_homogeneous()).norm() < 1e-15, "{what}");
                assert!((joint.dot_force(&f) - s.dot(&f)).abs() < 1e-15, "{what}");
                assert!((joint.motion(qd).to_vector() - s.scaled(qd).to_vector()).norm() < 1e-15, "{what}");
                let cross = v.cross_motion(&s.scaled(qd));
                assert!((joint.motion_cross(&v, qd).to_vector() - cross.to_vector()).norm() < 1e-15, "{what}");
                let world = fixed.act_motion(&s);
                assert!((joint.subspace_in(&fixed).to_vector() - world.to_vector()).norm() < 1e-15, "{what}");
            }
        }
        let m = Matrix6::from_fn(|r, c| (r * 6 + c) as f64 * 0.1 - 1.0);
        assert!((matrix_times_motion(&m, &v) - m * v.to_vector()).norm() < 1e-14);
    }
}
