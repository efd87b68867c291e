//! FMI: FMUs as morc components (import), and morc's blocks as FMUs (export).

pub mod archive;
pub mod component;
pub mod description;
mod error;
pub mod export;
pub mod export_description;
pub mod fmi2;
pub mod fmi3;
pub mod instance;
mod library;
pub mod log;
pub mod solver;
pub mod values;

pub use component::{factory, Fmu, FmuComponent};
pub use error::FmiError;
