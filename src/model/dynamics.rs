//! Rigid-body dynamics: RNEA (inverse dynamics), CRBA (mass matrix), ABA (forward dynamics).
//!
//! All three include the drive-train terms of [`DriveTrain`](super::DriveTrain): armature
//! adds `armature·a` to the torque (and to the mass-matrix diagonal), friction adds
//! `viscous·v + coulomb·sign(v)`. So `rnea(q, v, a) = M(q) a + nle(q, v)` and
//! `aba(q, v, rnea(q, v, a)) = a` hold with or without them. Gravity enters as a fictitious
//! upward acceleration of the universe, as in Pinocchio.

use nalgebra::DVector;

use super::kinematics::{check_len, joint_local_placement};
use super::spatial::{Force, Motion};
use super::{Data, Model};

/// `sign(v)` with `sign(0) = 0`, so a joint at rest carries no Coulomb torque.
#[inline]
fn sign(v: f64) -> f64 {
    if v > 0.0 {
        1.0
    } else if v < 0.0 {
        -1.0
    } else {
        0.0
    }
}

#[inline]
fn friction_torque(model: &Model, dof: usize, velocity: f64) -> f64 {
    let drive = &model.drives[dof];
    drive.viscous_friction * velocity + drive.coulomb_friction * sign(velocity)
}

/// RNEA with zero velocity and/or acceleration skipped rather than multiplied through.
fn rnea_impl<'a>(model: &Model, data: &'a mut Data, q: &[f64], v: Option<&[f64]>, a: Option<&[f64]>) -> &'a DVector<f64> {
    check_len("q", q.len(), model.nq());
    if let Some(v) = v {
        check_len("v", v.len(), model.nv());
    }
    if let Some(a) = a {
        check_len("a", a.len(), model.nv());
    }
    let gravity_bias = Motion::new(-model.gravity, nalgebra::Vector3::zeros());
    for i in 1..model.njoints() {
        let local = joint_local_placement(model, i, q[i - 1]);
        let parent = model.parents[i];
        let s = &model.subspaces[i];
        let (parent_velocity, parent_acceleration) =
            if parent == 0 { (Motion::zero(), gravity_bias) } else { (data.velocities[parent], data.accelerations[parent]) };
        let mut acceleration = local.inv_act_motion(&parent_acceleration);
        if let Some(a) = a {
            acceleration = acceleration.add(&s.scaled(a[i - 1]));
        }
        let inertia = &model.inertias[i];
        let force = if let Some(v) = v {
            let joint_velocity = s.scaled(v[i - 1]);
            let velocity = if parent == 0 { joint_velocity } else { local.inv_act_motion(&parent_velocity).add(&joint_velocity) };
            acceleration = acceleration.add(&velocity.cross_motion(&joint_velocity));
            data.velocities[i] = velocity;
            let mut f = inertia.mul_motion(&acceleration);
            f.add_assign(&velocity.cross_force(&inertia.mul_motion(&velocity)));
            f
        } else {
            data.velocities[i] = Motion::zero();
            inertia.mul_motion(&acceleration)
        };
        data.accelerations[i] = acceleration;
        data.forces[i] = force;
        data.local_placements[i] = local;
    }
    for i in (1..model.njoints()).rev() {
        let force = data.forces[i];
        let mut torque = model.subspaces[i].dot(&force);
        if let Some(a) = a {
            torque += model.drives[i - 1].armature * a[i - 1];
        }
        if let Some(v) = v {
            if model.has_friction {
                torque += friction_torque(model, i - 1, v[i - 1]);
            }
        }
        data.tau[i - 1] = torque;
        let parent = model.parents[i];
        if parent != 0 {
            let transmitted = data.local_placements[i].act_force(&force);
            data.forces[parent].add_assign(&transmitted);
        }
    }
    &data.tau
}

/// Inverse dynamics: the joint torques `tau = M(q) a + C(q, v) v + g(q)` (+ drive-train
/// terms), written to `data.tau` and returned.
///
/// # Panics
/// If a vector's length does not match the model.
pub fn rnea<'a>(model: &Model, data: &'a mut Data, q: &[f64], v: &[f64], a: &[f64]) -> &'a DVector<f64> {
    rnea_impl(model, data, q, Some(v), Some(a))
}

/// Gravity torques `g(q)`, written to `data.tau` and returned.
pub fn gravity<'a>(model: &Model, data: &'a mut Data, q: &[f64]) -> &'a DVector<f64> {
    rnea_impl(model, data, q, None, None)
}

/// Nonlinear effects `C(q, v) v + g(q)` plus friction, i.e. `rnea(q, v, 0)`, written to
/// `data.tau` and returned.
pub fn nle<'a>(model: &Model, data: &'a mut Data, q: &[f64], v: &[f64]) -> &'a DVector<f64> {
    rnea_impl(model, data, q, Some(v), None)
}

/// The joint-space mass matrix `M(q)` (full and symmetric, armature on the diagonal),
/// written to `data.mass_matrix` and returned.
///
/// # Panics
/// If `q.len() != model.nq()`.
pub fn crba<'a>(model: &Model, data: &'a mut Data, q: &[f64]) -> &'a nalgebra::DMatrix<f64> {
    check_len("q", q.len(), model.nq());
    // Joints on different branches do not couple; those entries stay zero.
    data.mass_matrix.fill(0.0);
    for i in 1..model.njoints() {
        data.local_placements[i] = joint_local_placement(model, i, q[i - 1]);
        data.composite_inertias[i] = model.inertias[i];
    }
    // Children have larger indices, so a subtree is complete when the backward loop reaches it.
    for i in (1..model.njoints()).rev() {
        let mut force = data.composite_inertias[i].mul_motion(&model.subspaces[i]);
        data.mass_matrix[(i - 1, i - 1)] = model.subspaces[i].dot(&force) + model.drives[i - 1].armature;
        let mut j = i;
        while model.parents[j] != 0 {
            force = data.local_placements[j].act_force(&force);
            j = model.parents[j];
            let entry = model.subspaces[j].dot(&force);
            data.mass_matrix[(j - 1, i - 1)] = entry;
            data.mass_matrix[(i - 1, j - 1)] = entry;
        }
        let parent = model.parents[i];
        if parent != 0 {
            let carried = data.local_placements[i].act_inertia(&data.composite_inertias[i]);
            data.composite_inertias[parent] = data.composite_inertias[parent].added(&carried);
        }
    }
    &data.mass_matrix
}

/// Forward dynamics: the joint accelerations for torques `tau` (Featherstone's
/// articulated-body algorithm), written to `data.ddq` and returned.
///
/// # Panics
/// If a vector's length does not match the model.
pub fn aba<'a>(model: &Model, data: &'a mut Data, q: &[f64], v: &[f64], tau: &[f64]) -> &'a DVector<f64> {
    check_len("q", q.len(), model.nq());
    check_len("v", v.len(), model.nv());
    check_len("tau", tau.len(), model.nv());
    let nj = model.njoints();
    for i in 1..nj {
        let local = joint_local_placement(model, i, q[i - 1]);
        let parent = model.parents[i];
        let joint_velocity = model.subspaces[i].scaled(v[i - 1]);
        let (velocity, bias_acceleration) = if parent == 0 {
            (joint_velocity, Motion::zero())
        } else {
            let velocity = local.inv_act_motion(&data.velocities[parent]).add(&joint_velocity);
            (velocity, velocity.cross_motion(&joint_velocity))
        };
        let inertia = &model.inertias[i];
        data.velocities[i] = velocity;
        data.bias_accelerations[i] = bias_acceleration;
        data.articulated_inertias[i] = inertia.to_matrix();
        data.bias_forces[i] = velocity.cross_force(&inertia.mul_motion(&velocity));
        data.local_placements[i] = local;
    }
    for i in (1..nj).rev() {
        let s = model.subspaces[i].to_vector();
        let inertia = data.articulated_inertias[i];
        let u_vector = inertia * s;
        let inv_d = 1.0 / (s.dot(&u_vector) + model.drives[i - 1].armature);
        let mut u = tau[i - 1] - s.dot(&data.bias_forces[i].to_vector());
        if model.has_friction {
            u -= friction_torque(model, i - 1, v[i - 1]);
        }
        data.aba_u_vectors[i] = u_vector;
        data.aba_inv_d[i] = inv_d;
        data.aba_u[i] = u;
        let parent = model.parents[i];
        if parent != 0 {
            let reduced = inertia - u_vector * u_vector.transpose() * inv_d;
            let bias = data.bias_forces[i].to_vector()
                + reduced * data.bias_accelerations[i].to_vector()
                + u_vector * (u * inv_d);
            let local = &data.local_placements[i];
            data.articulated_inertias[parent] += local.act_articulated_inertia(&reduced);
            let transmitted = local.act_force(&Force::from_vector(&bias));
            data.bias_forces[parent].add_assign(&transmitted);
        }
    }
    let gravity_bias = Motion::new(-model.gravity, nalgebra::Vector3::zeros());
    for i in 1..nj {
        let parent = model.parents[i];
        let parent_acceleration = if parent == 0 { gravity_bias } else { data.accelerations[parent] };
        let acceleration = data.local_placements[i]
            .inv_act_motion(&parent_acceleration)
            .add(&data.bias_accelerations[i]);
        let ddq = (data.aba_u[i] - data.aba_u_vectors[i].dot(&acceleration.to_vector())) * data.aba_inv_d[i];
        data.ddq[i - 1] = ddq;
        data.accelerations[i] = acceleration.add(&model.subspaces[i].scaled(ddq));
    }
    &data.ddq
}
