//! The robot model layer, after Pinocchio: an immutable [`Model`] (tree structure and
//! parameters, built once from URDF, a DH table or by hand with [`ModelBuilder`]) and a
//! preallocated [`Data`] workspace. Algorithms are free functions over `(&Model, &mut Data)`
//! and allocate nothing once `Data::new` has run, so they are fit for the real-time path.
//!
//! ```no_run
//! use morc_model::{load_urdf, rnea, Data};
//! let robot = load_urdf("ur5_robot.urdf").unwrap();
//! let mut data = Data::new(&robot);
//! let q = [0.0, -1.0, 1.0, 0.0, 0.5, 0.0];
//! let tau = rnea(&robot, &mut data, &q, &[0.0; 6], &[0.0; 6]);
//! ```
//!
//! [`rnea`], [`nle`], [`gravity`], [`crba`] and [`aba`] are Pinocchio's rigid-body algorithms
//! (a drive's armature in, as Pinocchio's `model.armature`; friction out); the drives'
//! friction (URDF `<dynamics damping friction>`) is [`friction`], added where a drive is meant.
//!
//! Conventions: spatial vectors are (linear, angular); joint `i ≥ 1` moves `q[i − 1]`, except
//! that mimic joints have no coordinate of their own (see [`Mimic`]; then `Model::idx_v`);
//! frame Jacobians are LOCAL_WORLD_ALIGNED (the frame origin's velocity and the angular
//! velocity, both in world axes).

#![deny(clippy::missing_safety_doc)]
#![warn(missing_docs)]

mod calibration;
mod data;
mod dense;
mod dh;
mod dynamics;
mod elastic;
mod fourier;
mod ft_load;
mod identification;
mod ik;
mod joint;
mod kinematics;
mod regressor;
mod spatial;
mod structure;
mod urdf;
mod urdf_write;

pub use calibration::{Calibrated, CalibrationParameter, GeometricCalibration, Identification, ObservabilityIndex, PoseSelection};
pub use data::Data;
pub use dense::{lu_factor, lu_solve, DampedPinv, PinvError};
pub use dh::{DhConvention, DhLink, DhTable};
pub use dynamics::{aba, crba, friction, gravity, nle, rnea};
pub use elastic::{fit_stiffness, links_at_rest, ElasticInverse, StiffnessFit};
pub use fourier::FourierTrajectory;
pub use ft_load::{FtIdentification, FtLoad, FtLoadError, GRAVITY, MIN_POSES, RANK_TOLERANCE};
pub use identification::{
    parameter_count, parameter_names, perturbed_dynamics, regressor_with_drives, standard_parameters, BaseParameters, Estimate, Excitation, ExcitationOptions, JointBounds, Measurements,
    BASE_TOLERANCE, DRIVE_PARAMETERS,
};
pub use ik::{AnalyticIk, DlsIk, IkOutcome};
pub use kinematics::{
    compute_frame_jacobian, forward_kinematics, forward_kinematics_joints, forward_kinematics_placements, frame_jacobian, frame_jacobian_in, frame_placement, update_frame_placements, ReferenceFrame,
};
pub use regressor::{dynamic_parameters, joint_torque_regressor, PARAMETERS_PER_BODY};
pub use spatial::{log3, rotation_from_rpy, rpy_from_rotation, Force, Inertia, Motion, Se3};
pub use structure::{DriveTrain, Frame, FrameIndex, FrameKind, JointIndex, JointKind, JointLimits, Mimic, Model, ModelBuilder};
pub use urdf::{load_urdf, parse_urdf, to_urdf, MAX_MOVING_JOINTS};
pub use urdf_write::{display_urdf, LinkTree, TreeJoint, TreeMotion};

use std::fmt;

/// Why a model could not be built: the file or model it concerns, and what is wrong.
#[derive(Debug)]
pub enum ModelError {
    /// The file could not be read.
    Io {
        /// The file that could not be read.
        path: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The robot description is malformed or inconsistent.
    Invalid {
        /// The file or model concerned (path, or the model's name).
        origin: String,
        /// What is wrong, naming the joint, link or element.
        message: String,
    },
}

impl ModelError {
    pub(crate) fn invalid(origin: impl Into<String>, message: impl Into<String>) -> Self {
        ModelError::Invalid { origin: origin.into(), message: message.into() }
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::Io { path, source } => write!(f, "{path}: cannot read: {source}"),
            ModelError::Invalid { origin, message } => write!(f, "{origin}: {message}"),
        }
    }
}

impl std::error::Error for ModelError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ModelError::Io { source, .. } => Some(source),
            ModelError::Invalid { .. } => None,
        }
    }
}
