//! The real-time kernel of morc: values, components, assemblies, the clocked engine, real-time
//! setup, and the native control blocks with the registry of component kinds.

#![deny(clippy::missing_safety_doc)]

pub mod assembly;
pub mod base;
pub mod blocks;
pub mod clock;
pub mod component;
pub mod data;
pub mod engine;
pub mod error;
pub mod ideal_axes;
pub(crate) mod interpolate;
pub mod multirate;
pub mod ode;
pub mod probe;
pub mod registry;
pub mod rt;
pub mod stats;
pub(crate) mod task;
pub mod value;
