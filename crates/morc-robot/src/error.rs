//! [`RobotError`]: a robot definition, payload or tool, or a request the robot cannot take,
//! with the same message a person reads (naming the robot, the joint and the file).

use std::fmt;

use morc_model::ModelError;

/// An error of a robot's definition or of a change to it.
#[derive(Debug)]
pub enum RobotError {
    /// The robot's definition is inconsistent: joints against the model, joint limits, drives.
    Definition(String),
    /// The model cannot be driven (its mass matrix is singular somewhere), with where it is defined.
    Model {
        /// "file:line: robot 'name'".
        context: String,
        /// What the model check found.
        source: ModelError,
    },
    /// A payload that is not physical (negative or non-finite mass, inertia).
    Payload(String),
    /// A change at runtime that would change the robot's structure (only tool and payload may).
    Structure(String),
    /// A start position that does not fit the robot.
    Start(String),
    /// Cartesian motion is not possible on this robot, and why.
    NoCartesian(String),
}

impl fmt::Display for RobotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RobotError::Definition(m) | RobotError::Payload(m) | RobotError::Structure(m) | RobotError::Start(m) | RobotError::NoCartesian(m) => f.write_str(m),
            RobotError::Model { context, source } => write!(f, "{context}: {source}"),
        }
    }
}

impl std::error::Error for RobotError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RobotError::Model { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// For callers that still pass errors on as text.
impl From<RobotError> for String {
    fn from(e: RobotError) -> Self {
        e.to_string()
    }
}
