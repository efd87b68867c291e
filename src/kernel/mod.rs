//! The real-time kernel: values, components, assemblies, the clocked engine.

pub mod component;
pub mod data;
pub mod value;
