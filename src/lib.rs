//! morc — a modular, vendor-agnostic robot controller: the command line and the REPL.
//!
//! The layers below are crates of their own (see docs/architecture.md): `morc-kernel` runs
//! assemblies of components on one clock; `morc-lua` is the Lua surface researchers use.

#![warn(missing_docs)]
#![deny(clippy::missing_safety_doc)]

pub mod cli;
