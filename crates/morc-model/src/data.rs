//! [`Data`]: the preallocated workspace every algorithm writes into.

use nalgebra::{DMatrix, DVector, Matrix6, Matrix6xX, Vector6};

use super::spatial::{Force, Inertia, Motion, Se3};
use super::Model;

/// Workspace and results of the model algorithms, sized once for one [`Model`].
/// Per-joint arrays have `njoints` entries (index 0 is the universe); per-DOF vectors `nv`.
#[derive(Clone, Debug)]
pub struct Data {
    /// Placement of each joint frame relative to its parent joint frame at the current `q`.
    pub local_placements: Vec<Se3>,
    /// Placement of each joint frame in the world.
    pub joint_placements: Vec<Se3>,
    /// Placement of each model frame in the world.
    pub frame_placements: Vec<Se3>,
    /// Spatial velocity of each joint frame, in that frame (forward kinematics, RNEA).
    pub velocities: Vec<Motion>,
    /// Spatial acceleration of each joint frame, in that frame (forward kinematics, RNEA).
    /// After RNEA it includes the fictitious upward acceleration that models gravity.
    pub accelerations: Vec<Motion>,
    /// RNEA: force each body exerts on its subtree's joint, in the joint frame.
    pub forces: Vec<Force>,
    /// CRBA: inertia of the subtree rooted at each joint, in the joint frame.
    pub composite_inertias: Vec<Inertia>,
    /// Joint-space mass matrix (full, symmetric; armature on the diagonal).
    pub mass_matrix: DMatrix<f64>,
    /// Joint torques from RNEA, gravity or nle.
    pub tau: DVector<f64>,
    /// Joint accelerations from ABA.
    pub ddq: DVector<f64>,
    /// The drives' friction torques from [`friction`](super::friction).
    pub friction: DVector<f64>,
    /// Frame Jacobian (6 × nv), LOCAL_WORLD_ALIGNED unless [`frame_jacobian_in`](super::frame_jacobian_in) asked otherwise.
    pub jacobian: Matrix6xX<f64>,
    /// Joint torque regressor (nv × 10·(njoints − 1)) from [`joint_torque_regressor`](super::joint_torque_regressor).
    pub joint_torque_regressor: DMatrix<f64>,
    // ABA works in world coordinates (as Pinocchio's WORLD convention), so that articulated
    // inertias accumulate up the tree without a 6×6 change of frame per joint.
    /// Motion subspace of each joint, about the world origin in world axes.
    pub(crate) world_subspaces: Vec<Motion>,
    pub(crate) world_velocities: Vec<Motion>,
    pub(crate) world_accelerations: Vec<Motion>,
    pub(crate) articulated_inertias: Vec<Matrix6<f64>>,
    pub(crate) bias_forces: Vec<Force>,
    pub(crate) bias_accelerations: Vec<Motion>,
    pub(crate) aba_u_vectors: Vec<Vector6<f64>>,
    pub(crate) aba_inv_d: Vec<f64>,
    pub(crate) aba_u: Vec<f64>,
    /// Cholesky factor of the mass matrix, for forward dynamics of models with mimic joints.
    pub(crate) dense_factor: DMatrix<f64>,
}

impl Data {
    /// A workspace sized for `model`: the only allocation; the algorithms allocate nothing after it.
    pub fn new(model: &Model) -> Self {
        let nj = model.njoints();
        let nv = model.nv();
        Self {
            local_placements: vec![Se3::identity(); nj],
            joint_placements: vec![Se3::identity(); nj],
            frame_placements: vec![Se3::identity(); model.frames().len()],
            velocities: vec![Motion::zero(); nj],
            accelerations: vec![Motion::zero(); nj],
            forces: vec![Force::zero(); nj],
            composite_inertias: vec![Inertia::zero(); nj],
            mass_matrix: DMatrix::zeros(nv, nv),
            tau: DVector::zeros(nv),
            ddq: DVector::zeros(nv),
            friction: DVector::zeros(nv),
            jacobian: Matrix6xX::zeros(nv),
            joint_torque_regressor: DMatrix::zeros(nv, super::regressor::PARAMETERS_PER_BODY * (nj - 1)),
            world_subspaces: vec![Motion::zero(); nj],
            world_velocities: vec![Motion::zero(); nj],
            world_accelerations: vec![Motion::zero(); nj],
            articulated_inertias: vec![Matrix6::zeros(); nj],
            bias_forces: vec![Force::zero(); nj],
            bias_accelerations: vec![Motion::zero(); nj],
            aba_u_vectors: vec![Vector6::zeros(); nj],
            aba_inv_d: vec![0.0; nj],
            aba_u: vec![0.0; nj],
            dense_factor: DMatrix::zeros(if model.has_mimic_joints() { nv } else { 0 }, if model.has_mimic_joints() { nv } else { 0 }),
        }
    }
}
