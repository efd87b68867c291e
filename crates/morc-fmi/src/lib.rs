//! FMI: FMUs as morc components (import), and morc's blocks as FMUs (export).

#![warn(missing_docs)]

pub mod archive;
mod component;
pub mod description;
mod error;
pub mod export;
mod export_description;
pub mod fmi2;
mod fmi3;
pub mod instance;
mod library;
mod log;
mod solver;
mod values;

pub use component::{factory, value_from_text, Fmu, FmuComponent, START_TIME};
pub use error::FmiError;
