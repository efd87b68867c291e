//! Component kinds that ship with morc, found by name.

use crate::component::Component;
use crate::{blocks, probe};

/// A native component kind: its name, one line of documentation and its factory.
pub struct Kind {
    pub name: &'static str,
    pub doc: &'static str,
    pub make: fn() -> Box<dyn Component>,
}

static TOOLS: &[Kind] = &[Kind { name: "probe", doc: "keeps every sample of a signal in memory and returns them in Assembly Data", make: || Box::new(probe::Probe::new()) }];

/// Every native kind, in the order `morc.components()` lists them.
pub fn kinds() -> impl Iterator<Item = &'static Kind> {
    blocks::KINDS.iter().chain(TOOLS)
}

/// Instantiates a native kind with its default parameters.
pub fn create(kind: &str) -> Option<Box<dyn Component>> {
    kinds().find(|k| k.name == kind).map(|k| (k.make)())
}
