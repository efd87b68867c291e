//! Forward kinematics, frame placements and frame Jacobians.

use nalgebra::Matrix6xX;

use super::spatial::Se3;
use super::{Data, FrameIndex, JointIndex, Model};

/// Placement of joint `joint` relative to its parent joint frame at joint position `qi`.
#[inline(always)]
pub(crate) fn joint_local_placement(model: &Model, joint: JointIndex, qi: f64) -> Se3 {
    model.motions[joint].local_placement(&model.joint_placements[joint], qi)
}

#[inline]
pub(crate) fn check_len(what: &str, got: usize, expected: usize) {
    assert!(got == expected, "{what} has {got} entries, the model needs {expected}");
}

/// Joint placements (local and world) only; frames are left as they were.
pub(crate) fn update_joint_placements(model: &Model, data: &mut Data, q: &[f64]) {
    check_len("q", q.len(), model.nq());
    for i in 1..model.njoints() {
        let local = joint_local_placement(model, i, model.joint_q(i, q));
        let parent = model.parents[i];
        data.joint_placements[i] = if parent == 0 { local } else { data.joint_placements[parent].compose(&local) };
        data.local_placements[i] = local;
    }
}

/// Places every joint (not the frames) in the world for configuration `q`: Pinocchio's
/// `forwardKinematics(q)`. Use [`forward_kinematics_placements`] to place the frames too.
///
/// # Panics
/// If `q.len() != model.nq()` (a programming error, not a runtime condition).
pub fn forward_kinematics_joints(model: &Model, data: &mut Data, q: &[f64]) {
    update_joint_placements(model, data, q);
}

/// Places every joint and every frame in the world for configuration `q`.
///
/// # Panics
/// If `q.len() != model.nq()` (a programming error, not a runtime condition).
pub fn forward_kinematics_placements(model: &Model, data: &mut Data, q: &[f64]) {
    update_joint_placements(model, data, q);
    update_frame_placements(model, data);
}

/// Places every joint and frame, and computes each joint frame's spatial velocity and
/// acceleration (in its own frame; no gravity) for `(q, v, a)`.
///
/// # Panics
/// If a vector's length does not match the model.
pub fn forward_kinematics(model: &Model, data: &mut Data, q: &[f64], v: &[f64], a: &[f64]) {
    check_len("v", v.len(), model.nv());
    check_len("a", a.len(), model.nv());
    update_joint_placements(model, data, q);
    for i in 1..model.njoints() {
        let parent = model.parents[i];
        let joint = &model.motions[i];
        let (vi, ai) = (model.joint_v(i, v), model.joint_v(i, a));
        let joint_velocity = joint.motion(vi);
        let local = &data.local_placements[i];
        let (vel, acc) = if parent == 0 {
            (joint_velocity, joint.motion(ai))
        } else {
            let vel = local.inv_act_motion(&data.velocities[parent]).add(&joint_velocity);
            let acc = local.inv_act_motion(&data.accelerations[parent]).add(&joint.motion(ai)).add(&joint.motion_cross(&vel, vi));
            (vel, acc)
        };
        data.velocities[i] = vel;
        data.accelerations[i] = acc;
    }
    update_frame_placements(model, data);
}

/// Recomputes every frame's world placement from the joint placements in `data`.
pub fn update_frame_placements(model: &Model, data: &mut Data) {
    for (placement, frame) in data.frame_placements.iter_mut().zip(&model.frames) {
        *placement = data.joint_placements[frame.parent_joint].compose(&frame.placement);
    }
}

/// World placement of `frame` from the joint placements in `data` (after forward kinematics).
pub fn frame_placement(model: &Model, data: &Data, frame: FrameIndex) -> Se3 {
    let f = &model.frames[frame];
    data.joint_placements[f.parent_joint].compose(&f.placement)
}

/// The LOCAL_WORLD_ALIGNED Jacobian of `frame` from the joint placements in `data`
/// (call a forward kinematics first): column `j` holds the linear velocity of the frame
/// origin (rows 0–2) and the angular velocity (rows 3–5), in world axes, per unit `v[j]`.
pub fn frame_jacobian<'a>(model: &Model, data: &'a mut Data, frame: FrameIndex) -> &'a Matrix6xX<f64> {
    let f = &model.frames[frame];
    let origin = data.joint_placements[f.parent_joint].act_point(&f.placement.translation);
    data.jacobian.fill(0.0);
    let mut joint = f.parent_joint;
    while joint != 0 {
        // The joint's twist seen at the frame origin, in world axes.
        let column = model.motions[joint].subspace_in(&data.joint_placements[joint].with_origin_at(&origin));
        // Accumulated: a mimic joint's column adds to its master's, scaled (J = J_full Gᵀ).
        let s = model.scaling[joint];
        let mut col = data.jacobian.column_mut(model.idx_v[joint]);
        col.fixed_rows_mut::<3>(0).axpy(s, &column.linear, 1.0);
        col.fixed_rows_mut::<3>(3).axpy(s, &column.angular, 1.0);
        joint = model.parents[joint];
    }
    &data.jacobian
}

/// Joint placements for `q`, then the LOCAL_WORLD_ALIGNED Jacobian of `frame` (see
/// [`frame_jacobian`]).
///
/// # Panics
/// If `q.len() != model.nq()`.
pub fn compute_frame_jacobian<'a>(model: &Model, data: &'a mut Data, q: &[f64], frame: FrameIndex) -> &'a Matrix6xX<f64> {
    update_joint_placements(model, data, q);
    frame_jacobian(model, data, frame)
}

/// The frame a Jacobian's twist is expressed in, as Pinocchio's `ReferenceFrame`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReferenceFrame {
    /// The frame origin's linear velocity and the angular velocity, in world axes.
    LocalWorldAligned,
    /// The same twist in the frame's own axes (`oRfᵀ` applied to both halves).
    Local,
    /// The spatial velocity at the world origin, in world axes: linear part `v_p + p × ω`.
    World,
}

impl ReferenceFrame {
    /// Pinocchio's lower-case names: `"local_world_aligned"`, `"local"`, `"world"`.
    pub fn from_name(name: &str) -> Option<ReferenceFrame> {
        match name {
            "local_world_aligned" | "LOCAL_WORLD_ALIGNED" => Some(ReferenceFrame::LocalWorldAligned),
            "local" | "LOCAL" => Some(ReferenceFrame::Local),
            "world" | "WORLD" => Some(ReferenceFrame::World),
            _ => None,
        }
    }
}

/// The Jacobian of `frame` in `reference` from the joint placements in `data` (call a
/// forward kinematics first), written to `data.jacobian`: rows 0–2 linear, 3–5 angular, as
/// Pinocchio's `getFrameJacobian`. Allocates nothing.
pub fn frame_jacobian_in<'a>(model: &Model, data: &'a mut Data, frame: FrameIndex, reference: ReferenceFrame) -> &'a Matrix6xX<f64> {
    frame_jacobian(model, data, frame);
    let f = &model.frames[frame];
    let placement = data.joint_placements[f.parent_joint].compose(&f.placement);
    match reference {
        ReferenceFrame::LocalWorldAligned => {}
        ReferenceFrame::Local => {
            let rt = placement.rotation.transpose();
            for mut col in data.jacobian.column_iter_mut() {
                let linear = rt * col.fixed_rows::<3>(0);
                let angular = rt * col.fixed_rows::<3>(3);
                col.fixed_rows_mut::<3>(0).copy_from(&linear);
                col.fixed_rows_mut::<3>(3).copy_from(&angular);
            }
        }
        ReferenceFrame::World => {
            let p = placement.translation;
            for mut col in data.jacobian.column_iter_mut() {
                let shift = p.cross(&col.fixed_rows::<3>(3).into_owned());
                let linear = col.fixed_rows::<3>(0) + shift;
                col.fixed_rows_mut::<3>(0).copy_from(&linear);
            }
        }
    }
    &data.jacobian
}
