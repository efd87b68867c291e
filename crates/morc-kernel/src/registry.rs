//! The open registry of component kinds: every kind an assembly can name — the native blocks,
//! a robot's components, FMUs, Lua components, a library's kinds — is an entry with a name, one
//! line of documentation, its origin and a factory. Providers register into a [`KindRegistry`]
//! through the one [`KindRegistry::register`]; names are unique in a registry, and registering a
//! taken name is an error naming both origins, so no kind silently shadows another.
//!
//! Factories run when an assembly is built, never while it steps.

use std::sync::{Arc, OnceLock};

use crate::assembly::Factory;
use crate::component::Component;
use crate::{blocks, probe};

/// The origin of the kinds that ship with morc.
pub const NATIVE: &str = "native";

/// A factory without state: a function making a component with default parameters.
pub type MakeFn = fn() -> Box<dyn Component>;

/// One registered component kind.
#[derive(Clone)]
pub struct KindEntry {
    /// The name an assembly uses for it (`"gain"`, `"mylib.filter"`).
    pub name: String,
    /// One line of documentation.
    pub doc: String,
    /// Who registered it: `"native"`, `"robot kr16"`, `"fmu pid.fmu"`, `"lua library mylib (file:line)"`.
    pub origin: String,
    /// Makes a component of the kind with default parameters; may carry state (a robot, an FMU).
    pub make: Factory,
}

/// Component kinds by name, listed in the order they were registered.
#[derive(Clone, Default)]
pub struct KindRegistry {
    entries: Vec<KindEntry>,
}

impl KindRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// A registry holding the native kinds (a copy of [`natives`], to which more can be added).
    pub fn with_natives() -> Self {
        natives().clone()
    }

    /// Adds kind `name`; a name already taken is an error naming both origins.
    pub fn register(&mut self, name: &str, doc: &str, origin: &str, make: Factory) -> Result<(), String> {
        if name.is_empty() {
            return Err(format!("a component kind needs a name (registered by {origin})"));
        }
        if let Some(old) = self.get(name) {
            return Err(format!("component kind '{name}' is already registered by {}; {origin} cannot register it again (choose another name)", old.origin));
        }
        self.entries.push(KindEntry { name: name.into(), doc: doc.into(), origin: origin.into(), make });
        Ok(())
    }

    /// Adds a kind whose factory is a plain function (the native blocks).
    pub fn register_fn(&mut self, name: &str, doc: &str, origin: &str, make: MakeFn) -> Result<(), String> {
        self.register(name, doc, origin, Arc::new(move || Ok(make())))
    }

    /// The kind named `name`.
    pub fn get(&self, name: &str) -> Option<&KindEntry> {
        self.entries.iter().find(|k| k.name == name)
    }

    /// Every kind, in registration order.
    pub fn kinds(&self) -> impl Iterator<Item = &KindEntry> {
        self.entries.iter()
    }

    /// How many kinds there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there is no kind.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The factory of `name`, or an error listing the kinds there are.
    pub fn factory(&self, name: &str) -> Result<Factory, String> {
        self.get(name).map(|k| k.make.clone()).ok_or_else(|| self.unknown(name))
    }

    /// A component of kind `name` with default parameters.
    pub fn create(&self, name: &str) -> Result<Box<dyn Component>, String> {
        (self.factory(name)?)()
    }

    /// The message for an unknown kind: the name and the kinds known.
    pub fn unknown(&self, name: &str) -> String {
        let known: Vec<&str> = self.entries.iter().map(|k| k.name.as_str()).collect();
        format!("unknown component kind '{name}' (known kinds: {})", known.join(", "))
    }
}

/// Registers the kinds that ship with the kernel: the native blocks, then the tools (`probe`).
pub fn register_natives(registry: &mut KindRegistry) -> Result<(), String> {
    blocks::register(registry)?;
    registry.register_fn("probe", "keeps every sample of a signal in memory and returns them in Assembly Data", NATIVE, || Box::new(probe::Probe::new()))
}

/// The native kinds, registered once on first use.
pub fn natives() -> &'static KindRegistry {
    static NATIVES: OnceLock<KindRegistry> = OnceLock::new();
    NATIVES.get_or_init(|| {
        let mut r = KindRegistry::new();
        // The native names are fixed in the source and tested unique, so this cannot fail.
        register_natives(&mut r).expect("native kind names are unique");
        r
    })
}

/// Every native kind, in the order `morc.components()` lists them.
pub fn kinds() -> impl Iterator<Item = &'static KindEntry> {
    natives().kinds()
}

/// Instantiates a native kind with its default parameters.
pub fn create(kind: &str) -> Option<Box<dyn Component>> {
    natives().create(kind).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natives_are_listed_in_order_and_found_by_name() {
        let names: Vec<&str> = kinds().map(|k| k.name.as_str()).collect();
        assert_eq!(names.first(), Some(&"constant"));
        assert_eq!(names.last(), Some(&"probe"));
        assert!(names.contains(&"pid") && names.contains(&"gain"));
        assert!(kinds().all(|k| k.origin == NATIVE));
        assert_eq!(create("gain").expect("gain").info().kind, "gain");
        assert!(create("nope").is_none());
    }

    #[test]
    fn a_clash_names_both_origins_and_keeps_the_first() {
        let mut r = KindRegistry::with_natives();
        let before = r.len();
        let e = r.register_fn("gain", "another gain", "lua library mylib", || Box::new(probe::Probe::new())).unwrap_err();
        assert!(e.contains("'gain'") && e.contains("native") && e.contains("lua library mylib"), "{e}");
        assert_eq!(r.len(), before);
        assert_eq!(r.create("gain").unwrap().info().kind, "gain");
        assert!(r.register_fn("", "x", "test", || Box::new(probe::Probe::new())).unwrap_err().contains("needs a name"));
    }

    #[test]
    fn added_kinds_carry_state_and_are_listed_after_the_natives() {
        let mut r = KindRegistry::with_natives();
        let made = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = made.clone();
        let factory: Factory = Arc::new(move || {
            count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Ok(Box::new(probe::Probe::new()) as Box<dyn Component>)
        });
        r.register("mylib.keep", "keeps samples", "lua library mylib", factory).unwrap();
        let last = r.kinds().last().unwrap();
        assert_eq!((last.name.as_str(), last.doc.as_str(), last.origin.as_str()), ("mylib.keep", "keeps samples", "lua library mylib"));
        r.create("mylib.keep").unwrap();
        r.factory("mylib.keep").unwrap()().unwrap();
        assert_eq!(made.load(std::sync::atomic::Ordering::Relaxed), 2);
        // The shared native list is not changed by a copy's additions.
        assert!(natives().get("mylib.keep").is_none());
    }

    #[test]
    fn an_unknown_kind_lists_the_known() {
        let mut r = KindRegistry::new();
        r.register_fn("probe", "p", NATIVE, || Box::new(probe::Probe::new())).unwrap();
        let e = r.factory("gian").err().unwrap();
        assert_eq!(e, "unknown component kind 'gian' (known kinds: probe)");
    }
}
