//! Motion planning, independent of any particular arm: time profiles ([`profile`]), tool
//! paths in Cartesian space ([`cartesian`]), via-point splines ([`spline`]) and sequences of
//! moves with blending ([`sequence`]). An arm enters through the [`Kinematics`] trait; the
//! trajectory component that runs a sequence on the engine is in `robot::components`.

mod cartesian;
mod profile;
mod sequence;
mod spline;

pub use cartesian::CartesianPath;
pub use profile::Profile;
pub use sequence::{pose_from_vector, Kinematics, MotionLimits, Move, MoveSpec, Sequence};
pub use spline::QuinticSpline;
