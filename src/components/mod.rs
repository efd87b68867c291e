//! Component kinds that ship with morc, found by name.

pub mod blocks;
pub mod lua_component;
pub mod sim_axes;

use crate::kernel::component::Component;

/// A native component kind: its name, one line of documentation and its factory.
pub struct Kind {
    pub name: &'static str,
    pub doc: &'static str,
    pub make: fn() -> Box<dyn Component>,
}

/// Every native kind, in the order `morc.components()` lists them.
pub fn kinds() -> &'static [Kind] {
    blocks::KINDS
}

/// Instantiates a native kind with its default parameters.
pub fn create(kind: &str) -> Option<Box<dyn Component>> {
    kinds().iter().find(|k| k.name == kind).map(|k| (k.make)())
}
