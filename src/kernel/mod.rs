//! The real-time kernel: values, components, assemblies, the clocked engine.

pub mod assembly;
pub mod base;
pub mod clock;
pub mod component;
pub mod data;
pub mod engine;
pub(crate) mod interpolate;
pub mod multirate;
pub mod ode;
pub mod rt;
pub mod stats;
pub(crate) mod task;
pub mod value;
