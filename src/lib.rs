//! morc — a modular, vendor-agnostic robot controller.
//!
//! A small real-time kernel ([`kernel`]) runs assemblies of components on one
//! clock; everything a researcher touches is Lua on top ([`lua`]).

#![deny(clippy::missing_safety_doc)]

pub mod bus;
pub mod cli;
pub mod components;
pub mod fmi;
pub mod kernel;
pub mod lua;
pub mod model;
pub mod motion;
pub mod record;
pub mod robot;
