//! [`Kinematics`] of one frame of a bare model (no robot around it): forward kinematics, and
//! inverse kinematics in closed form for 6R arms with a spherical wrist (the solution nearest
//! the seed), damped least squares seeded with the previous configuration otherwise, within the
//! model's joint limits. What `morc.motion.sequence` plans with when given a model rather than
//! a robot; a robot's own planner is morc-robot's `RobotKinematics` (the same solvers).
//! Workspaces are allocated in [`ModelKinematics::new`]: FK and IK allocate nothing.

use std::sync::Arc;

use morc_model::{AnalyticIk, Data, DlsIk, FrameIndex, Model, Se3};

use crate::sequence::Kinematics;

enum Solver {
    Analytic(Box<AnalyticIk>),
    LeastSquares(DlsIk),
}

/// Tool-frame FK and IK of a model.
pub struct ModelKinematics {
    model: Arc<Model>,
    data: Data,
    frame: FrameIndex,
    solver: Solver,
}

/// Largest pose error (position m + rotation rad, stacked norm) accepted from the iterative solver.
const LEAST_SQUARES_TOLERANCE: f64 = 1e-9;

impl ModelKinematics {
    /// The kinematics of `frame` of `model`, with the solver the arm allows.
    pub fn new(model: Arc<Model>, frame: FrameIndex) -> ModelKinematics {
        let solver = match AnalyticIk::new(&model, frame) {
            Ok(ik) if model.nq() == 6 => Solver::Analytic(Box::new(ik)),
            _ => {
                let mut ik = DlsIk::new(&model);
                ik.tolerance = 1e-11;
                ik.max_iterations = 100;
                Solver::LeastSquares(ik)
            }
        };
        ModelKinematics { data: Data::new(&model), model, frame, solver }
    }

    /// "closed form" or "damped least squares".
    pub fn solver_name(&self) -> &'static str {
        match self.solver {
            Solver::Analytic(_) => "closed form",
            Solver::LeastSquares(_) => "damped least squares",
        }
    }

    /// The model.
    pub fn model(&self) -> &Arc<Model> {
        &self.model
    }
}

impl Kinematics for ModelKinematics {
    fn dof(&self) -> usize {
        self.model.nq()
    }

    fn tool_pose(&mut self, q: &[f64]) -> Se3 {
        morc_model::forward_kinematics_placements(&self.model, &mut self.data, q);
        morc_model::update_frame_placements(&self.model, &mut self.data);
        morc_model::frame_placement(&self.model, &self.data, self.frame)
    }

    fn inverse(&mut self, target: &Se3, seed: &[f64], q: &mut [f64]) -> bool {
        match &mut self.solver {
            Solver::Analytic(ik) => {
                let mut near = [0.0; 6];
                near.copy_from_slice(seed);
                match ik.nearest(target, &near) {
                    Some(solution) => {
                        q.copy_from_slice(&solution);
                        true
                    }
                    None => false,
                }
            }
            Solver::LeastSquares(ik) => {
                let outcome = ik.solve(&self.model, &mut self.data, self.frame, target, seed);
                q.copy_from_slice(ik.solution());
                outcome.error < LEAST_SQUARES_TOLERANCE && self.model.limits().iter().zip(q.iter()).all(|(l, x)| *x >= l.lower && *x <= l.upper)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use morc_model::{DhConvention, DhLink, DhTable};
    use nalgebra::Vector3;

    /// A planar 3R arm (links 0.5, 0.4, 0.3 m): no closed form, least squares.
    fn planar() -> ModelKinematics {
        let table = DhTable {
            name: "planar".into(),
            convention: DhConvention::Standard,
            base: Se3::identity(),
            tool: Se3::identity(),
            links: [0.5, 0.4, 0.3].iter().map(|a| DhLink::revolute(*a, 0.0, 0.0, 0.0)).collect(),
            gravity: Vector3::new(0.0, 0.0, -9.81),
        };
        let model = table.to_model().unwrap();
        let tool = model.frame_index("tool").unwrap();
        ModelKinematics::new(Arc::new(model), tool)
    }

    #[test]
    fn inverse_undoes_forward() {
        let mut arm = planar();
        assert_eq!((arm.dof(), arm.solver_name()), (3, "damped least squares"));
        let q = [0.3, -0.6, 0.9];
        let pose = arm.tool_pose(&q);
        // The planar tip is at the sum of the links' directions.
        let x = 0.5 * 0.3f64.cos() + 0.4 * (-0.3f64).cos() + 0.3 * 0.6f64.cos();
        assert!((pose.translation.x - x).abs() < 1e-12, "{} vs {x}", pose.translation.x);
        let mut found = [0.0; 3];
        assert!(arm.inverse(&pose, &[0.25, -0.5, 0.8], &mut found));
        assert!(found.iter().zip(&q).all(|(a, b)| (a - b).abs() < 1e-8), "{found:?}");
        let far = Se3::new(pose.rotation, pose.translation * 10.0);
        assert!(!arm.inverse(&far, &q, &mut found), "out of reach");
    }
}
