//! FMI: FMUs as morc components (import), and morc's blocks as FMUs (export).

pub mod export;
pub mod archive;
pub mod description;
pub mod fmi2;
pub mod component;

pub use component::{factory, Fmu, FmuComponent};
