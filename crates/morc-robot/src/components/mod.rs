//! Native components built around a [`Robot`]: they need its model and limits, so they are
//! made by factories that hold the robot ([`factory`]), not by the kind registry.
//!
//! - `ptp`, `lin`, `circ`, `spline`, `path`: the trajectory generator ([`trajectory`]).
//! - `rnea`: rigid-body feed-forward (computed torque) τ = RNEA(q, q̇, q̈).
//! - `monitor`: following error and limits → fault naming the joint; completion → finish.

mod feed_forward;
mod monitor;
pub mod trajectory;

use std::sync::Arc;

use morc_kernel::assembly::Factory;
use morc_kernel::component::Component;

use super::Robot;
pub use feed_forward::RigidBodyFeedForward;
pub use monitor::Monitor;
pub use trajectory::MotionTrajectory;

/// The robot component kinds, with one line of documentation each.
pub const KINDS: &[(&str, &str)] = &[
    ("ptp", "synchronised PTP in joint space: all axes arrive together within velocity/acceleration (and jerk, with ramp > 0) limits; outputs q, qd, qdd, tcp, done"),
    ("lin", "straight line of the tool to a pose, orientation interpolated (slerp), within Cartesian and joint limits"),
    ("circ", "circular arc of the tool through a via point to a pose, orientation interpolated"),
    ("spline", "quintic segments through via points in joint space (position, velocity, acceleration continuous)"),
    ("path", "a sequence of ptp/lin/circ/spline moves, blended within each move's approximation radius"),
    ("rnea", "rigid-body feed-forward: tau = RNEA(q, qd, qdd) of the robot's model (gravity, inertia, drive train)"),
    ("monitor", "following error and position/velocity/torque limits → fault naming the joint; target reached → finish"),
];

/// The one-line documentation of a kind.
pub fn kind_doc(kind: &str) -> &'static str {
    KINDS.iter().find(|k| k.0 == kind).map_or("", |k| k.1)
}

/// A factory for robot component `kind`, or `None` if there is no such kind.
pub fn factory(robot: &Arc<Robot>, kind: &str) -> Option<Factory> {
    let robot = robot.clone();
    let kind: &'static str = KINDS.iter().find(|k| k.0 == kind)?.0;
    Some(Arc::new(move || {
        Ok(match kind {
            "rnea" => Box::new(RigidBodyFeedForward::new(robot.clone())) as Box<dyn Component>,
            "monitor" => Box::new(Monitor::new(robot.clone())),
            trajectory => Box::new(MotionTrajectory::new(robot.clone(), trajectory)),
        })
    }))
}
