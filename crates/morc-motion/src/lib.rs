//! Motion planning, independent of any particular arm: time profiles ([`Profile`]), tool
//! paths in Cartesian space ([`CartesianPath`]), via-point splines ([`QuinticSpline`]), trajectories timed by their points ([`TimedTrajectory`]),
//! the Fourier excitation of a dynamic identification ([`FourierExcitation`]) and sequences of
//! moves with blending ([`Sequence`]). An arm enters through the [`Kinematics`] trait (a bare
//! model's frame: [`ModelKinematics`]); the trajectory component that runs a sequence on the
//! engine is in `morc-robot`; Lua reaches all of them as `morc.motion`.

#![deny(clippy::missing_safety_doc)]
#![warn(missing_docs)]

mod cartesian;
mod fourier;
mod model_kinematics;
mod profile;
mod sequence;
mod spline;
mod timed;
pub mod toppra;

pub use cartesian::CartesianPath;
pub use fourier::FourierExcitation;
pub use model_kinematics::ModelKinematics;
pub use profile::Profile;
pub use sequence::{pose_from_vector, Kinematics, MotionLimits, Move, MoveSpec, Sequence};
pub use spline::QuinticSpline;
pub use timed::{JointExtremes, TimedPoint, TimedTrajectory};
