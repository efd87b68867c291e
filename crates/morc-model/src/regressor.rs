//! The joint torque regressor for identification, as Pinocchio's `computeJointTorqueRegressor`:
//! `rnea(q, v, a) = Y(q, v, a) · π`, with π the bodies' dynamic parameters stacked joint by joint.

use nalgebra::{Matrix3, Vector3};

use super::spatial::{Force, Inertia, Motion};
use super::{Data, Model};

/// Parameters per body in π: `[m, m·cx, m·cy, m·cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`.
pub const PARAMETERS_PER_BODY: usize = 10;

/// A body's dynamic parameters in Pinocchio's order (`Inertia::toDynamicParameters`):
/// `[m, m·c (3), Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`, the rotational inertia taken about the
/// frame origin (`I_C + m·[c]×ᵀ[c]×`), not the centre of mass. Units kg, kg·m, kg·m².
pub fn dynamic_parameters(inertia: &Inertia) -> [f64; PARAMETERS_PER_BODY] {
    let (m, c) = (inertia.mass, inertia.com);
    let i = inertia.rotational + (Matrix3::identity() * c.norm_squared() - c * c.transpose()) * m;
    [m, m * c.x, m * c.y, m * c.z, i[(0, 0)], i[(0, 1)], i[(1, 1)], i[(0, 2)], i[(1, 2)], i[(2, 2)]]
}

/// `I(π) · x` for the spatial inertia with dynamic parameters π (mass, first moment h = m·c,
/// rotational inertia Ī about the frame origin); linear in π.
#[inline]
fn inertia_times(p: &[f64; PARAMETERS_PER_BODY], x: &Motion) -> Force {
    let (m, h) = (p[0], Vector3::new(p[1], p[2], p[3]));
    let ibar = Matrix3::new(p[4], p[5], p[7], p[5], p[6], p[8], p[7], p[8], p[9]);
    Force { linear: x.linear * m + x.angular.cross(&h), angular: ibar * x.angular + h.cross(&x.linear) }
}

/// Fills `data.joint_torque_regressor` (nv × 10·(njoints − 1)) for `(q, v, a)` and returns it:
/// column block `j − 1` belongs to joint `j`'s body, in [`dynamic_parameters`]' order, so that
/// `Y · π = rnea(q, v, a)` without the drive-train terms (armature, friction), as Pinocchio's.
/// Allocates nothing.
///
/// # Panics
/// If a vector's length does not match the model.
pub fn joint_torque_regressor<'a>(model: &Model, data: &'a mut Data, q: &[f64], v: &[f64], a: &[f64]) -> &'a nalgebra::DMatrix<f64> {
    // RNEA's forward pass leaves each body's velocity and acceleration (gravity included) in
    // its joint frame, and the local placements to carry forces to the ancestors.
    super::rnea(model, data, q, v, a);
    data.joint_torque_regressor.fill(0.0);
    for j in 1..model.njoints() {
        let (vel, acc) = (data.velocities[j], data.accelerations[j]);
        for k in 0..PARAMETERS_PER_BODY {
            let mut unit = [0.0; PARAMETERS_PER_BODY];
            unit[k] = 1.0;
            let mut force = inertia_times(&unit, &acc);
            force.add_assign(&vel.cross_force(&inertia_times(&unit, &vel)));
            let column = (j - 1) * PARAMETERS_PER_BODY + k;
            let mut i = j;
            loop {
                // Accumulated: a mimic joint's row is its master's coordinate, scaled.
                data.joint_torque_regressor[(model.idx_v[i], column)] += model.scaling[i] * model.motions[i].dot_force(&force);
                let parent = model.parents[i];
                if parent == 0 {
                    break;
                }
                force = data.local_placements[i].act_force(&force);
                i = parent;
            }
        }
    }
    &data.joint_torque_regressor
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spatial::rotation_from_rpy;
    use crate::{JointKind, JointLimits, ModelBuilder, Se3};

    /// Y·π reproduces RNEA on a branched tree with revolute and prismatic joints.
    #[test]
    fn regressor_times_parameters_is_rnea() {
        let mut b = ModelBuilder::new("tree");
        let place = |x: f64, y: f64, z: f64, r: f64| Se3::new(rotation_from_rpy(r, 0.3 * r, -0.2), Vector3::new(x, y, z));
        let j1 = b.add_joint("j1", 0, place(0.0, 0.0, 0.3, 0.1), JointKind::Revolute, Vector3::z(), JointLimits::UNBOUNDED).unwrap();
        let j2 = b.add_joint("j2", j1, place(0.2, 0.0, 0.1, 0.4), JointKind::Revolute, Vector3::new(0.3, 1.0, 0.2), JointLimits::UNBOUNDED).unwrap();
        let j3 = b.add_joint("j3", j1, place(-0.1, 0.2, 0.0, -0.7), JointKind::Prismatic, Vector3::x(), JointLimits::UNBOUNDED).unwrap();
        let j4 = b.add_joint("j4", j2, place(0.0, 0.3, 0.1, 0.9), JointKind::Revolute, Vector3::y(), JointLimits::UNBOUNDED).unwrap();
        for (j, m) in [(j1, 2.0), (j2, 1.5), (j3, 0.7), (j4, 0.4)] {
            let rot = Matrix3::new(0.05, 0.001, 0.002, 0.001, 0.04, 0.003, 0.002, 0.003, 0.03) * m;
            b.append_body_inertia(j, &Inertia::new(m, Vector3::new(0.01 * m, -0.02, 0.05), rot)).unwrap();
        }
        let model = b.build();
        let mut data = Data::new(&model);
        let (q, v, a) = ([0.3, -0.8, 0.12, 1.1], [0.5, -0.4, 0.2, 0.9], [-1.0, 0.7, 0.3, -0.2]);
        let pi: Vec<f64> = (1..model.njoints()).flat_map(|j| dynamic_parameters(&model.inertias()[j])).collect();
        let y = joint_torque_regressor(&model, &mut data, &q, &v, &a).clone();
        assert_eq!((y.nrows(), y.ncols()), (4, 40));
        let tau = crate::rnea(&model, &mut data, &q, &v, &a).clone();
        let product = y * nalgebra::DVector::from_vec(pi);
        assert!((product - tau).norm() < 1e-12);
    }
}
