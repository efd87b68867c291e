//! Inverse kinematics: damped least squares on a frame ([`DlsIk`]).

use nalgebra::{DVector, Matrix6, Vector6};

use super::kinematics::{check_len, frame_jacobian, frame_placement, update_joint_placements};
use super::spatial::{log3, Se3};
use super::{Data, FrameIndex, Model};

/// How a solve ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IkOutcome {
    pub converged: bool,
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
    pub max_iterations: usize,
    pub tolerance: f64,
    pub damping: f64,
    pub max_step: f64,
    pub clamp_to_limits: bool,
    q: DVector<f64>,
    dq: DVector<f64>,
}

impl DlsIk {
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
            let error = Vector6::new(
                position_error.x,
                position_error.y,
                position_error.z,
                rotation_error.x,
                rotation_error.y,
                rotation_error.z,
            );
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
