//! Native components built around a [`Robot`]: they need its model and limits, so each robot
//! registers them into a [`KindRegistry`] ([`register`]) with factories that hold the robot.
//!
//! - `ptp`, `lin`, `circ`, `spline`, `path`: the trajectory generator ([`trajectory`]).
//! - `rnea`: rigid-body feed-forward (computed torque) τ = RNEA(q, q̇, q̈) + the drives' friction(q̇).
//! - `elastic_feed_forward`: the motors' reference of an arm with elastic gears ([`elastic_feed_forward`]).
//! - `elastic_links`: where an elastic arm's links rest, from its motors ([`elastic_links`]).
//! - `monitor`: following error and limits → fault naming the joint; completion → finish.
//! - `cartesian_velocity`: a frame velocity law, damped pseudo-inverse and null-space term.
//! - `time_optimal`: through joint waypoints as fast as velocity, acceleration and torque limits allow (TOPP-RA).
//! - `joint_trajectory`: a timed trajectory as a FollowJointTrajectory goal gives one ([`joint_trajectory`]).
//! - `joint_stream`: following joint positions another controller streams, within the limits ([`joint_stream`]).
//! - `tracker`: a laser tracker measuring the tool from outside the robot ([`tracker`]).
//! - `jog`: jogging a joint or the tool, as the robot's operator asks ([`crate::Operator`]).

mod cartesian_velocity;
pub mod elastic_feed_forward;
pub mod elastic_links;
mod feed_forward;
mod jog;
pub mod joint_stream;
pub mod joint_trajectory;
mod monitor;
mod time_optimal;
pub mod tracker;
pub mod trajectory;

use std::sync::Arc;

use morc_kernel::registry::KindRegistry;
use morc_kernel::Component;
use morc_kernel::Factory;

use super::Robot;
pub use cartesian_velocity::CartesianVelocity;
pub use elastic_feed_forward::ElasticFeedForward;
pub use elastic_links::ElasticLinks;
pub use feed_forward::RigidBodyFeedForward;
pub use jog::Jog;
pub use joint_stream::JointStream;
pub use joint_trajectory::JointTrajectory;
pub use monitor::Monitor;
pub use time_optimal::TimeOptimal;
pub use tracker::Tracker;
pub use trajectory::MotionTrajectory;

/// Makes a component of one robot kind for a robot.
type Make = fn(Arc<Robot>) -> Box<dyn Component>;

/// The robot component kinds: name, one line of documentation, maker.
const KINDS: &[(&str, &str, Make)] = &[
    ("ptp", "synchronised PTP in joint space: all axes arrive together within velocity/acceleration (and jerk, with ramp > 0) limits; outputs q, qd, qdd, tcp, done", |r| {
        Box::new(MotionTrajectory::new(r, "ptp"))
    }),
    ("lin", "straight line of the tool to a pose, orientation interpolated (slerp), within Cartesian and joint limits", |r| Box::new(MotionTrajectory::new(r, "lin"))),
    ("circ", "circular arc of the tool through a via point to a pose, orientation interpolated", |r| Box::new(MotionTrajectory::new(r, "circ"))),
    ("spline", "quintic segments through via points in joint space (position, velocity, acceleration continuous)", |r| Box::new(MotionTrajectory::new(r, "spline"))),
    ("path", "a sequence of ptp/lin/circ/spline moves, blended within each move's approximation radius", |r| Box::new(MotionTrajectory::new(r, "path"))),
    ("time_optimal", "through joint waypoints as fast as the joints' velocity, acceleration and (torque_scale > 0) torque limits allow: a spline timed by TOPP-RA", |r| Box::new(TimeOptimal::new(r))),
    (
        "joint_trajectory",
        "a timed joint trajectory as trajectory_msgs/JointTrajectory gives one (MoveIt's plans): quintic segments through each point's position, velocity and acceleration at its time",
        |r| Box::new(JointTrajectory::new(r)),
    ),
    (
        "joint_stream",
        "follows joint positions another controller streams (ros2_control's topic_based_ros2_control, a teleoperation master): from where the robot is, a line from sample to sample within the velocity and acceleration limits; a sample outside the limits or max_jump away faults",
        |r| Box::new(JointStream::new(r)),
    ),
    ("rnea", "rigid-body feed-forward: tau = RNEA(q, qd, qdd) + friction(qd) of the robot's model (gravity, inertia and armature; the drives' viscous and Coulomb friction)", |r| {
        Box::new(RigidBodyFeedForward::new(r))
    }),
    (
        "elastic_feed_forward",
        "feed-forward of an arm with elastic gears: from the links' reference (q, qd, qdd, smooth to the 4th derivative: Bessel-filtered), the motors' position, velocity and torque through the inverse of Spong's model; rnea on rigid joints",
        |r| Box::new(ElasticFeedForward::new(r)),
    ),
    (
        "elastic_links",
        "where the links of an elastic arm at rest are, from its motors' positions: q = θ − g(q)/K (a motion in the links' space starts there)",
        |r| Box::new(ElasticLinks::new(r)),
    ),
    ("jog", "jogging as on a pendant: a joint, or the tool along/about a base or tool axis, while held or by an increment, within the limits (robot:jog)", |r| Box::new(Jog::new(r))),
    ("monitor", "following error (q against the reference delayed by the bus's latency) and position/velocity/torque limits → fault naming the joint; target reached → finish", |r| {
        Box::new(Monitor::new(r))
    }),
    (
        "tracker",
        "a laser tracker: the tool's position measured from the links' positions (robot.q_link of an elastic arm) at its rate (Hz) with Gaussian noise (mm), held between measurements",
        |r| Box::new(Tracker::new(r)),
    ),
    (
        "cartesian_velocity",
        "qd = J⁺(v_ref + K·e) + (I − J⁺J)(−k_null (q − q_rest)): a frame's velocity and pose reference to joint velocities, J⁺ = Jᵀ(JJᵀ + λ²I)⁻¹ (λ = damping)",
        |r| Box::new(CartesianVelocity::new(r)),
    ),
];

/// The one-line documentation of a kind.
pub fn kind_doc(kind: &str) -> &'static str {
    KINDS.iter().find(|k| k.0 == kind).map_or("", |k| k.1)
}

/// The origin robot kinds are registered under: `robot NAME`.
pub fn origin(robot: &Robot) -> String {
    format!("robot {}", robot.name)
}

/// Registers the robot's component kinds into `registry`, each named `prefix` followed by the
/// kind (`""` gives `ptp`, `"kr16."` gives `kr16.ptp`); the factories hold the robot.
pub fn register(registry: &mut KindRegistry, robot: &Arc<Robot>, prefix: &str) -> Result<(), String> {
    let origin = origin(robot);
    for &(kind, doc, make) in KINDS {
        let robot = robot.clone();
        registry.register(&format!("{prefix}{kind}"), doc, &origin, Arc::new(move || Ok(make(robot.clone()))))?;
    }
    Ok(())
}

/// The robot's kinds alone, by their bare names (`ptp`, `monitor`, …).
pub fn kinds(robot: &Arc<Robot>) -> KindRegistry {
    let mut registry = KindRegistry::new();
    // Fixed, distinct names into an empty registry: registering cannot clash.
    register(&mut registry, robot, "").expect("robot kind names are distinct");
    registry
}

/// A factory for robot component `kind`, or `None` if there is no such kind.
pub fn factory(robot: &Arc<Robot>, kind: &str) -> Option<Factory> {
    kinds(robot).get(kind).map(|k| k.make.clone())
}
