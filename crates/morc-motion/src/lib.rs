//! Motion planning, independent of any particular arm: time profiles ([`Profile`]), tool
//! paths in Cartesian space ([`CartesianPath`]), via-point splines ([`QuinticSpline`]), trajectories timed by their points ([`TimedTrajectory`]) and sequences of
//! moves with blending ([`Sequence`]). An arm enters through the [`Kinematics`] trait; the
//! trajectory component that runs a sequence on the engine is in `morc-robot`.

#![deny(clippy::missing_safety_doc)]
#![warn(missing_docs)]

mod cartesian;
mod profile;
mod sequence;
mod spline;
mod timed;
pub mod toppra;

pub use cartesian::CartesianPath;
pub use profile::Profile;
pub use sequence::{pose_from_vector, Kinematics, MotionLimits, Move, MoveSpec, Sequence};
pub use spline::QuinticSpline;
pub use timed::{JointExtremes, TimedPoint, TimedTrajectory};
