//! Rigid-body dynamics: RNEA (inverse dynamics), CRBA (mass matrix), ABA (forward dynamics),
//! exactly as Pinocchio's of the same names, and the drives' [`friction`] beside them.
//!
//! The rigid-body algorithms include the rotor inertia of [`DriveTrain`](super::DriveTrain)
//! as Pinocchio's `model.armature` does: `armature·a` on the torque, `armature` on the
//! mass-matrix diagonal. They do not include friction, as Pinocchio's do not (its URDF
//! `damping` and `friction` are data the algorithms leave alone): `rnea(q, v, a) = M(q) a +
//! nle(q, v)`, `nle = C(q, v) v + g(q)`, `aba(q, v, rnea(q, v, a)) = a`. A drive's friction
//! torque `viscous·v + coulomb·sign(v)` is [`friction`]'s; what models a real drive adds it
//! explicitly: the torque a motion needs is `rnea(q, v, a) + friction(v)`, and a plant driven
//! by `tau` moves as `aba(q, v, tau − friction(v))`. Gravity enters as a fictitious upward
//! acceleration of the universe, as in Pinocchio.

use nalgebra::DVector;

use super::joint::matrix_times_motion;
use super::kinematics::{check_len, joint_local_placement};
use super::spatial::{Force, Motion};
use super::{Data, Model};

/// `sign(v)` with `sign(0) = 0`, so a joint at rest carries no Coulomb torque.
#[inline]
pub(crate) fn sign(v: f64) -> f64 {
    if v > 0.0 {
        1.0
    } else if v < 0.0 {
        -1.0
    } else {
        0.0
    }
}

/// The drives' friction torques `viscous·v + coulomb·sign(v)` per coordinate (URDF `<dynamics
/// damping friction>`, a DH row's `B`, a robot's drive `viscous`/`coulomb`), written to
/// `data.friction` and returned. Not part of [`rnea`], [`nle`] or [`aba`] (Pinocchio's are
/// rigid-body only): add it to their torque for the drives' share. `sign(0) = 0`: a joint at
/// rest carries no Coulomb torque. Allocates nothing.
///
/// # Panics
/// If `v.len() != model.nv()`.
pub fn friction<'a>(model: &Model, data: &'a mut Data, v: &[f64]) -> &'a DVector<f64> {
    check_len("v", v.len(), model.nv());
    if !model.has_friction {
        data.friction.fill(0.0);
        return &data.friction;
    }
    for ((f, drive), &v) in data.friction.iter_mut().zip(&model.drives).zip(v) {
        *f = drive.friction(v);
    }
    &data.friction
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
        let joint = &model.motions[i];
        let local = joint_local_placement(model, i, model.joint_q(i, q));
        let parent = model.parents[i];
        let parent_acceleration = if parent == 0 { gravity_bias } else { data.accelerations[parent] };
        let mut acceleration = local.inv_act_motion(&parent_acceleration);
        if let Some(a) = a {
            acceleration = acceleration.add(&joint.motion(model.joint_v(i, a)));
        }
        let inertia = &model.inertias[i];
        let force = if let Some(v) = v {
            let vi = model.joint_v(i, v);
            let joint_velocity = joint.motion(vi);
            let velocity = if parent == 0 { joint_velocity } else { local.inv_act_motion(&data.velocities[parent]).add(&joint_velocity) };
            acceleration = acceleration.add(&joint.motion_cross(&velocity, vi));
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
    if model.has_mimic_joints() {
        // Mimic joints add their torque to their master's coordinate (tau = G tau_full).
        data.tau.fill(0.0);
    }
    for i in (1..model.njoints()).rev() {
        let force = data.forces[i];
        let dof = model.idx_v[i];
        let mut torque = model.motions[i].dot_force(&force);
        if model.mimics[i].is_some() {
            data.tau[dof] += model.scaling[i] * torque;
        } else {
            if let Some(a) = a {
                torque += model.drives[dof].armature * a[dof];
            }
            if model.has_mimic_joints() {
                data.tau[dof] += torque;
            } else {
                data.tau[dof] = torque;
            }
        }
        let parent = model.parents[i];
        if parent != 0 {
            let transmitted = data.local_placements[i].act_force(&force);
            data.forces[parent].add_assign(&transmitted);
        }
    }
    &data.tau
}

/// Inverse dynamics, Pinocchio's `rnea`: the joint torques `tau = M(q) a + C(q, v) v + g(q)`
/// (armature in `M`, no friction: add [`friction`] for the drives'), written to `data.tau`
/// and returned.
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

/// Nonlinear effects `C(q, v) v + g(q)`, i.e. `rnea(q, v, 0)` (Pinocchio's `nonLinearEffects`;
/// no friction), written to `data.tau` and returned.
pub fn nle<'a>(model: &Model, data: &'a mut Data, q: &[f64], v: &[f64]) -> &'a DVector<f64> {
    rnea_impl(model, data, q, Some(v), None)
}

/// Places every joint in the world and fills ABA's world-frame terms: motion subspaces and
/// body inertias (6×6) about the world origin.
#[inline(always)]
fn world_placements_and_inertias(model: &Model, data: &mut Data, q: &[f64]) {
    for i in 1..model.njoints() {
        let local = joint_local_placement(model, i, model.joint_q(i, q));
        let parent = model.parents[i];
        let placement = if parent == 0 { local } else { data.joint_placements[parent].compose(&local) };
        data.world_subspaces[i] = model.motions[i].subspace_in(&placement);
        data.articulated_inertias[i] = placement.act_inertia(&model.inertias[i]).to_matrix();
        data.local_placements[i] = local;
        data.joint_placements[i] = placement;
    }
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
        data.local_placements[i] = joint_local_placement(model, i, model.joint_q(i, q));
        data.composite_inertias[i] = model.inertias[i];
    }
    // Children have larger indices, so a subtree is complete when the backward loop reaches it.
    for i in (1..model.njoints()).rev() {
        let joint = &model.motions[i];
        // With mimic joints entries accumulate, several joints sharing a coordinate (M = G M_full Gᵀ);
        // otherwise each is written once onto the zeroed matrix.
        let mut force = data.composite_inertias[i].mul_motion(&joint.motion(1.0));
        let mut j = i;
        if model.has_mimic_joints() {
            let (di, si) = (model.idx_v[i], model.scaling[i]);
            data.mass_matrix[(di, di)] += si * si * joint.dot_force(&force);
            while model.parents[j] != 0 {
                force = data.local_placements[j].act_force(&force);
                j = model.parents[j];
                let entry = si * model.scaling[j] * model.motions[j].dot_force(&force);
                let dj = model.idx_v[j];
                data.mass_matrix[(dj, di)] += entry;
                data.mass_matrix[(di, dj)] += entry;
            }
        } else {
            data.mass_matrix[(i - 1, i - 1)] = joint.dot_force(&force) + model.drives[i - 1].armature;
            while model.parents[j] != 0 {
                force = data.local_placements[j].act_force(&force);
                j = model.parents[j];
                let entry = model.motions[j].dot_force(&force);
                data.mass_matrix[(j - 1, i - 1)] = entry;
                data.mass_matrix[(i - 1, j - 1)] = entry;
            }
        }
        let parent = model.parents[i];
        if parent != 0 {
            let carried = data.local_placements[i].act_inertia(&data.composite_inertias[i]);
            data.composite_inertias[parent] = data.composite_inertias[parent].added(&carried);
        }
    }
    if model.has_mimic_joints() {
        for (dof, drive) in model.drives.iter().enumerate() {
            data.mass_matrix[(dof, dof)] += drive.armature;
        }
    }
    &data.mass_matrix
}

/// Forward dynamics, Pinocchio's `aba`: the joint accelerations `M(q)⁻¹ (tau − C(q, v) v −
/// g(q))` for torques `tau` (Featherstone's articulated-body algorithm, in world coordinates;
/// armature in `M`, no friction: for a drive's, pass `tau − friction(v)`), written to
/// `data.ddq` and returned.
/// Also places the joints; leaves `data.velocities` and `data.accelerations` alone.
///
/// # Panics
/// If a vector's length does not match the model.
pub fn aba<'a>(model: &Model, data: &'a mut Data, q: &[f64], v: &[f64], tau: &[f64]) -> &'a DVector<f64> {
    check_len("q", q.len(), model.nq());
    check_len("v", v.len(), model.nv());
    check_len("tau", tau.len(), model.nv());
    if model.has_mimic_joints() {
        return aba_dense(model, data, q, v, tau);
    }
    let nj = model.njoints();
    world_placements_and_inertias(model, data, q);
    for i in 1..nj {
        let parent = model.parents[i];
        let joint_velocity = data.world_subspaces[i].scaled(v[i - 1]);
        // The subspace moves with the body: d(S qd)/dt = v × S qd, and v_parent × S qd
        // equals it since S qd × S qd = 0.
        let (velocity, bias_acceleration) = if parent == 0 {
            (joint_velocity, Motion::zero())
        } else {
            let parent_velocity = data.world_velocities[parent];
            (parent_velocity.add(&joint_velocity), parent_velocity.cross_motion(&joint_velocity))
        };
        let momentum = Force::from_vector(&matrix_times_motion(&data.articulated_inertias[i], &velocity));
        data.world_velocities[i] = velocity;
        data.bias_accelerations[i] = bias_acceleration;
        data.bias_forces[i] = velocity.cross_force(&momentum);
    }
    for i in (1..nj).rev() {
        let s = data.world_subspaces[i];
        let u_vector = matrix_times_motion(&data.articulated_inertias[i], &s);
        let inv_d = 1.0 / (s.to_vector().dot(&u_vector) + model.drives[i - 1].armature);
        let u = tau[i - 1] - s.dot(&data.bias_forces[i]);
        data.aba_u_vectors[i] = u_vector;
        data.aba_inv_d[i] = inv_d;
        data.aba_u[i] = u;
        let parent = model.parents[i];
        if parent != 0 {
            // Pass on Ia − U Uᵀ/D and pA + (Ia − U Uᵀ/D) c + U u/D, both already in world
            // coordinates; the rank-1 term is applied without forming the reduced matrix.
            let c = data.bias_accelerations[i];
            let inertia_c = matrix_times_motion(&data.articulated_inertias[i], &c);
            let scale = (u - u_vector.dot(&c.to_vector())) * inv_d;
            let bias = data.bias_forces[i].to_vector() + inertia_c + u_vector * scale;
            data.bias_forces[parent].add_assign(&Force::from_vector(&bias));
            let (child, parent_inertia) = pair_mut(&mut data.articulated_inertias, i, parent);
            *parent_inertia += *child;
            parent_inertia.ger(-inv_d, &u_vector, &u_vector, 1.0);
        }
    }
    let gravity_bias = Motion::new(-model.gravity, nalgebra::Vector3::zeros());
    for i in 1..nj {
        let parent = model.parents[i];
        let parent_acceleration = if parent == 0 { gravity_bias } else { data.world_accelerations[parent] };
        let acceleration = parent_acceleration.add(&data.bias_accelerations[i]);
        let ddq = (data.aba_u[i] - data.aba_u_vectors[i].dot(&acceleration.to_vector())) * data.aba_inv_d[i];
        data.ddq[i - 1] = ddq;
        data.world_accelerations[i] = acceleration.add(&data.world_subspaces[i].scaled(ddq));
    }
    &data.ddq
}

/// Forward dynamics of a model with mimic joints, whose coupled coordinates the recursive ABA
/// does not handle (two fingers on sibling branches following one coordinate): `M ddq = tau −
/// nle` solved by Cholesky in `data.dense_factor`, in place. Allocates nothing.
fn aba_dense<'a>(model: &Model, data: &'a mut Data, q: &[f64], v: &[f64], tau: &[f64]) -> &'a DVector<f64> {
    super::kinematics::update_joint_placements(model, data, q);
    crba(model, data, q);
    nle(model, data, q, v);
    let n = model.nv();
    let l = &mut data.dense_factor;
    l.copy_from(&data.mass_matrix);
    // Cholesky–Banachiewicz, lower triangle; the mass matrix is symmetric positive definite
    // for a model that passed check_mass_matrix.
    for j in 0..n {
        let mut d = l[(j, j)];
        for k in 0..j {
            d -= l[(j, k)] * l[(j, k)];
        }
        let d = d.max(f64::MIN_POSITIVE).sqrt();
        l[(j, j)] = d;
        for i in j + 1..n {
            let mut s = l[(i, j)];
            for k in 0..j {
                s -= l[(i, k)] * l[(j, k)];
            }
            l[(i, j)] = s / d;
        }
    }
    for i in 0..n {
        let mut s = tau[i] - data.tau[i];
        for k in 0..i {
            s -= l[(i, k)] * data.ddq[k];
        }
        data.ddq[i] = s / l[(i, i)];
    }
    for i in (0..n).rev() {
        let mut s = data.ddq[i];
        for k in i + 1..n {
            s -= l[(k, i)] * data.ddq[k];
        }
        data.ddq[i] = s / l[(i, i)];
    }
    &data.ddq
}

/// `(&items[child], &mut items[parent])` for `parent < child`.
#[inline(always)]
fn pair_mut<T>(items: &mut [T], child: usize, parent: usize) -> (&T, &mut T) {
    let (head, tail) = items.split_at_mut(child);
    (&tail[0], &mut head[parent])
}

#[cfg(test)]
mod tests {
    use nalgebra::{Matrix3, Vector3};

    use super::*;
    use crate::{DriveTrain, Inertia, JointKind, JointLimits, ModelBuilder, Se3};

    /// A revolute–prismatic–revolute chain whose drives have armature and friction, or only
    /// armature.
    fn chain(with_friction: bool) -> Model {
        let mut b = ModelBuilder::new("chain");
        let up = Se3::from_translation(Vector3::new(0.1, 0.0, 0.3));
        let j1 = b.add_joint("j1", 0, up, JointKind::Revolute, Vector3::z(), JointLimits::UNBOUNDED).unwrap();
        let j2 = b.add_joint("j2", j1, up, JointKind::Prismatic, Vector3::x(), JointLimits::UNBOUNDED).unwrap();
        let j3 = b.add_joint("j3", j2, up, JointKind::Revolute, Vector3::y(), JointLimits::UNBOUNDED).unwrap();
        for j in [j1, j2, j3] {
            b.append_body_inertia(j, &Inertia::new(2.0, Vector3::new(0.05, 0.02, 0.1), Matrix3::from_diagonal(&Vector3::new(0.03, 0.04, 0.02)))).unwrap();
        }
        let mut model = b.build();
        for j in [j1, j2, j3] {
            let (viscous, coulomb) = if with_friction { (0.5 * j as f64, 0.2) } else { (0.0, 0.0) };
            model.set_drive_train(j, DriveTrain { armature: 0.1 * j as f64, viscous_friction: viscous, coulomb_friction: coulomb, ..Default::default() }).unwrap();
        }
        model
    }

    /// rnea, nle and aba are rigid-body only (armature in, friction out), as Pinocchio's; the
    /// drives' friction is `friction(v)`, with `sign(0) = 0`.
    #[test]
    fn friction_is_the_drives_and_not_in_the_rigid_body_algorithms() {
        let (damped, rigid) = (chain(true), chain(false));
        let (mut dd, mut dr) = (Data::new(&damped), Data::new(&rigid));
        let (q, v, a) = ([0.3, 0.1, -0.7], [0.8, -0.4, 0.0], [1.0, -2.0, 0.5]);
        assert_eq!(rnea(&damped, &mut dd, &q, &v, &a), rnea(&rigid, &mut dr, &q, &v, &a));
        assert_eq!(nle(&damped, &mut dd, &q, &v), nle(&rigid, &mut dr, &q, &v));
        let tau = [4.0, -3.0, 2.0];
        assert_eq!(aba(&damped, &mut dd, &q, &v, &tau), aba(&rigid, &mut dr, &q, &v, &tau));
        // Armature is in: aba undoes rnea.
        let tau = rnea(&damped, &mut dd, &q, &v, &a).clone();
        assert!((aba(&damped, &mut dd, &q, &v, tau.as_slice()) - DVector::from_row_slice(&a)).amax() < 1e-12);
        assert_eq!(friction(&damped, &mut dd, &v).as_slice(), &[0.5 * 0.8 + 0.2, 1.0 * -0.4 - 0.2, 0.0]);
        assert_eq!(friction(&rigid, &mut dr, &v).as_slice(), &[0.0; 3]);
    }
}
