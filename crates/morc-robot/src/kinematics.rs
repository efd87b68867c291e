//! A robot's tool kinematics for the motion planner: forward kinematics of the tool frame and
//! inverse kinematics — closed form for 6R arms with a spherical wrist (all solutions, the
//! nearest to the previous configuration taken), damped least squares seeded with the
//! previous configuration otherwise. Workspaces are allocated once, in [`RobotKinematics::new`].

use std::sync::Arc;

use morc_model::{AnalyticIk, Data, DlsIk, Se3};
use morc_motion::Kinematics;

use super::Robot;

enum Solver {
    Analytic(Box<AnalyticIk>),
    LeastSquares(DlsIk),
    /// Not a 6-DoF arm: Cartesian moves are refused with this reason.
    None(String),
}

/// Tool-frame FK and IK of one robot for the motion planner (closed form for 6R spherical-wrist arms, else damped least squares).
pub struct RobotKinematics {
    robot: Arc<Robot>,
    data: Data,
    solver: Solver,
}

/// Largest pose error (position m + rotation rad, stacked norm) accepted from the iterative solver.
const LEAST_SQUARES_TOLERANCE: f64 = 1e-9;

impl RobotKinematics {
    /// Picks the solver the arm allows and allocates its workspace.
    pub fn new(robot: Arc<Robot>) -> RobotKinematics {
        let solver = if robot.dof() != 6 {
            Solver::None(format!("Cartesian moves need an arm of 6 joints; robot '{}' has {}", robot.name, robot.dof()))
        } else {
            match AnalyticIk::new(&robot.model, robot.tool_frame) {
                Ok(ik) => Solver::Analytic(Box::new(ik)),
                Err(_) => {
                    let mut ik = DlsIk::new(&robot.model);
                    ik.tolerance = 1e-11;
                    ik.max_iterations = 100;
                    Solver::LeastSquares(ik)
                }
            }
        };
        RobotKinematics { data: Data::new(&robot.model), robot, solver }
    }

    /// "closed form", "damped least squares" or why there is none.
    pub fn solver_name(&self) -> &str {
        match &self.solver {
            Solver::Analytic(_) => "closed form",
            Solver::LeastSquares(_) => "damped least squares",
            Solver::None(why) => why,
        }
    }

    /// Whether Cartesian moves are possible, and if not why.
    pub fn cartesian(&self) -> Result<(), crate::RobotError> {
        match &self.solver {
            Solver::None(why) => Err(crate::RobotError::NoCartesian(why.clone())),
            _ => Ok(()),
        }
    }

    /// The smallest singular value of the tool Jacobian at q: how far the arm is from a
    /// singularity (0 at one). Position rows in m, orientation rows in rad.
    pub fn singularity_distance(&mut self, q: &[f64]) -> f64 {
        let jacobian = morc_model::compute_frame_jacobian(&self.robot.model, &mut self.data, q, self.robot.tool_frame);
        let square = jacobian * jacobian.transpose();
        let eigen = nalgebra::SymmetricEigen::new(square);
        eigen.eigenvalues.iter().fold(f64::INFINITY, |m, &e| m.min(e.max(0.0).sqrt()))
    }
}

impl Kinematics for RobotKinematics {
    fn dof(&self) -> usize {
        self.robot.dof()
    }

    fn tool_pose(&mut self, q: &[f64]) -> Se3 {
        morc_model::forward_kinematics_placements(&self.robot.model, &mut self.data, q);
        morc_model::update_frame_placements(&self.robot.model, &mut self.data);
        morc_model::frame_placement(&self.robot.model, &self.data, self.robot.tool_frame)
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
                let outcome = ik.solve(&self.robot.model, &mut self.data, self.robot.tool_frame, target, seed);
                q.copy_from_slice(ik.solution());
                outcome.error < LEAST_SQUARES_TOLERANCE && self.robot.outside_limits(q).is_none()
            }
            Solver::None(_) => false,
        }
    }
}
