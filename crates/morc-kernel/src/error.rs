//! The kernel's errors where other crates meet it: building an assembly ([`AssemblyError`]),
//! asking the engine for a run ([`EngineError`]), and why a run faulted ([`Fault`]: who and what).
//!
//! A component's own methods (`Component::initialize`, `Step::Fault`) keep a plain message:
//! the kernel adds the component's name, kind and time when it reports it, so a block author
//! writes "following error 12° exceeds 5°" and nothing else.

use std::fmt;

/// A validation or preparation error of an assembly: one message that says where and what
/// to do (unknown port, type mismatch, a component that would not configure or initialise).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssemblyError {
    /// The message, starting with the place in the program that built the assembly.
    pub message: String,
    /// The component that refused to configure or initialise, when one did: its kind tells a
    /// recorder's unwritable file from an FMU that would not load.
    pub component: Option<ComponentRef>,
}

impl AssemblyError {
    /// The same error, said to come from component `name` of kind `kind`.
    pub fn in_component(mut self, name: &str, kind: &str) -> Self {
        self.component = Some(ComponentRef { name: name.to_string(), kind: kind.to_string() });
        self
    }
}

impl fmt::Display for AssemblyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for AssemblyError {}

/// A component of an assembly, by name and kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentRef {
    /// The component's name in the assembly.
    pub name: String,
    /// Its kind ("pid", "fmu", "recorder", a Lua component's name, …).
    pub kind: String,
}

/// Asking the engine for a run failed.
#[derive(Debug, Clone, PartialEq)]
pub enum EngineError {
    /// The assembly cannot be built (unknown port, type mismatch, …).
    Assembly(AssemblyError),
    /// Another assembly is running; the name is that assembly's.
    Busy(String),
    /// The engine's Coordinator has stopped, and why.
    Stopped(String),
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineError::Assembly(e) => write!(f, "{e}"),
            EngineError::Busy(name) => write!(f, "the engine is busy running '{name}': wait for it or cancel it first"),
            EngineError::Stopped(why) => write!(f, "the engine has stopped: {why}"),
        }
    }
}

impl std::error::Error for EngineError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            EngineError::Assembly(e) => Some(e),
            _ => None,
        }
    }
}

impl From<AssemblyError> for EngineError {
    fn from(e: AssemblyError) -> Self {
        EngineError::Assembly(e)
    }
}

impl From<EngineError> for String {
    fn from(e: EngineError) -> Self {
        e.to_string()
    }
}

impl From<AssemblyError> for String {
    fn from(e: AssemblyError) -> Self {
        e.message
    }
}

/// Who raised a run's fault.
#[derive(Debug, Clone, PartialEq)]
pub enum FaultSource {
    /// The engine's base (the robot, the bus, the ideal axes), by its name.
    Base {
        /// The base's name, as `engine.base` gives it (e.g. "robot", "axes").
        name: String,
    },
    /// A component of the assembly.
    Component(ComponentRef),
    /// The assembly itself: a non-finite command, an overrun, an Updater thread.
    Assembly,
}

/// Why a run faulted: the message (the same text a person reads in the report) and its source.
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    /// Who raised it.
    pub source: FaultSource,
    /// What happened and what to do, naming the component or device.
    pub message: String,
}

impl Fault {
    /// A fault raised by the base named `base`.
    pub fn base(base: &str, message: impl Into<String>) -> Self {
        Fault { source: FaultSource::Base { name: base.to_string() }, message: message.into() }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Fault {}

impl From<Fault> for String {
    fn from(f: Fault) -> Self {
        f.message
    }
}
