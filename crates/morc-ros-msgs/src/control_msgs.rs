//! `control_msgs`: the FollowJointTrajectory action, what MoveIt's simple controller manager
//! sends a robot's controller (control_msgs 5, ROS 2 Jazzy). Field order is the `.action`
//! file's, so the serde encoding is its CDR.

use serde::{Deserialize, Serialize};

use crate::builtin_interfaces::Duration;
use crate::std_msgs::Header;
use crate::trajectory_msgs::{JointTrajectory, JointTrajectoryPoint, MultiDOFJointTrajectory, MultiDOFJointTrajectoryPoint};

/// `control_msgs/msg/JointTolerance`: how far a joint may be from the reference. 0 leaves the
/// server's default, −1 means no tolerance at all.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JointTolerance {
    /// The joint's name.
    pub name: String,
    /// Position tolerance (rad; m).
    pub position: f64,
    /// Velocity tolerance.
    pub velocity: f64,
    /// Acceleration tolerance.
    pub acceleration: f64,
}

/// `control_msgs/msg/JointComponentTolerance`: a tolerance on one component of a multi-DOF
/// joint.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JointComponentTolerance {
    /// The joint's name.
    pub joint_name: String,
    /// Which component: X_AXIS 1, Y_AXIS 2, Z_AXIS 3, TRANSLATION 4, ROTATION 5.
    pub component: u16,
    /// Position tolerance.
    pub position: f64,
    /// Velocity tolerance.
    pub velocity: f64,
    /// Acceleration tolerance.
    pub acceleration: f64,
}

/// The goal of `control_msgs/action/FollowJointTrajectory`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FollowJointTrajectoryGoal {
    /// The joint trajectory to follow.
    pub trajectory: JointTrajectory,
    /// Multi-DOF joints' trajectory (floating and planar joints).
    pub multi_dof_trajectory: MultiDOFJointTrajectory,
    /// Tolerances while it runs: outside them the goal aborts, PATH_TOLERANCE_VIOLATED.
    pub path_tolerance: Vec<JointTolerance>,
    /// Multi-DOF tolerances while it runs.
    pub component_path_tolerance: Vec<JointComponentTolerance>,
    /// Tolerances at the end: outside them the goal aborts, GOAL_TOLERANCE_VIOLATED.
    pub goal_tolerance: Vec<JointTolerance>,
    /// Multi-DOF tolerances at the end.
    pub component_goal_tolerance: Vec<JointComponentTolerance>,
    /// How long after the trajectory's end the joints may take to come within goal_tolerance.
    pub goal_time_tolerance: Duration,
}

/// The result of `control_msgs/action/FollowJointTrajectory`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FollowJointTrajectoryResult {
    /// One of the `*` codes of [`follow_joint_trajectory`].
    pub error_code: i32,
    /// What went wrong, for people.
    pub error_string: String,
}

/// The feedback of `control_msgs/action/FollowJointTrajectory`: where the joints should be, are,
/// and the difference.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FollowJointTrajectoryFeedback {
    /// When.
    pub header: Header,
    /// The joints, in the order of the points below.
    pub joint_names: Vec<String>,
    /// The reference.
    pub desired: JointTrajectoryPoint,
    /// The measurement.
    pub actual: JointTrajectoryPoint,
    /// desired − actual.
    pub error: JointTrajectoryPoint,
    /// Multi-DOF joints' names.
    pub multi_dof_joint_names: Vec<String>,
    /// Multi-DOF reference.
    pub multi_dof_desired: MultiDOFJointTrajectoryPoint,
    /// Multi-DOF measurement.
    pub multi_dof_actual: MultiDOFJointTrajectoryPoint,
    /// Multi-DOF difference.
    pub multi_dof_error: MultiDOFJointTrajectoryPoint,
}

/// The result codes of FollowJointTrajectory.
pub mod follow_joint_trajectory {
    /// The trajectory ran and ended within goal_tolerance.
    pub const SUCCESSFUL: i32 = 0;
    /// The goal cannot be run (its points, limits, start).
    pub const INVALID_GOAL: i32 = -1;
    /// Its joints are not the controller's.
    pub const INVALID_JOINTS: i32 = -2;
    /// Its header's stamp puts it wholly in the past.
    pub const OLD_HEADER_TIMESTAMP: i32 = -3;
    /// A joint left path_tolerance while it ran.
    pub const PATH_TOLERANCE_VIOLATED: i32 = -4;
    /// The joints did not come within goal_tolerance in time.
    pub const GOAL_TOLERANCE_VIOLATED: i32 = -5;
}
