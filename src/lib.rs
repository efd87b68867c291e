//! morc — a modular, vendor-agnostic robot controller.
//!
//! A small real-time kernel ([`kernel`]) runs assemblies of components on one
//! clock; everything a researcher touches is Lua on top ([`lua`]).

pub mod bus;
pub mod components;
pub mod kernel;
