//! Errors as Lua sees them: a value with a `kind` and a `message`.
//!
//! An error raised from Rust reaches Lua as mlua's error value (a userdata whose `tostring` is
//! the message and traceback, as before). [`install`] gives that value fields: `err.kind`
//! ("bus", "robot", "record", …, see [`ErrorKind`]), `err.message` (the message without the
//! traceback), the string methods on its text (`err:find(…)`, `err:match(…)`) and `..`, so a
//! program can react to a kind while code that prints or matches the text keeps working.
//!
//! Why mlua's own value rather than a table of ours: mlua raises every Rust error as that
//! userdata, whatever the callback returns, so only it reaches `pcall` from every Rust
//! function and method, and it keeps its traceback; the kind travels inside it (a
//! [`KindError`], or one of the crates' typed errors, read by [`kind_of`]). Errors Lua code
//! raises itself (`error "text"`) stay what they are: `err.kind` is `nil` for a string.

use std::fmt;

use mlua::{Function, Lua, Table};

use morc_ecat::BusError;
use morc_fmi::FmiError;
use morc_kernel::{AssemblyError, ComponentRef};
use morc_kernel::{EngineError, FaultSource};
use morc_model::ModelError;
use morc_record::RecordError;
use morc_robot::RobotError;

/// What an error is about: `err.kind` in Lua.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The EtherCAT bus: bring-up, a device's fault, the simulated segment.
    Bus,
    /// An FMU: opening, instantiating or stepping it.
    Fmi,
    /// A robot's model: URDF, DH table, mass and inertia.
    Model,
    /// A robot's definition, payload, tool, limits, components.
    Robot,
    /// A recording: creating, writing, reading, plotting.
    Record,
    /// An assembly that cannot be built or started (unknown port, type mismatch, a component
    /// that will not initialise).
    Assembly,
    /// The engine: busy with another run, stopped.
    Engine,
    /// A component of a run (a native block or a Lua component).
    Component,
    /// A library reaching beyond what it was granted.
    Library,
    /// Lua code, or how it called morc (a wrong argument).
    Lua,
    /// Ctrl-C.
    Interrupted,
    /// A bug in morc: a panic in Rust code a Lua call ran (`panics.rs`).
    Internal,
}

impl ErrorKind {
    /// The name Lua sees.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Bus => "bus",
            ErrorKind::Fmi => "fmi",
            ErrorKind::Model => "model",
            ErrorKind::Robot => "robot",
            ErrorKind::Record => "record",
            ErrorKind::Assembly => "assembly",
            ErrorKind::Engine => "engine",
            ErrorKind::Component => "component",
            ErrorKind::Library => "library",
            ErrorKind::Lua => "lua",
            ErrorKind::Interrupted => "interrupted",
            ErrorKind::Internal => "internal",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A message with its kind, raised into Lua by [`raise`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindError {
    /// What it is about.
    pub kind: ErrorKind,
    /// What happened and what to do, with the place in the program.
    pub message: String,
}

impl fmt::Display for KindError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for KindError {}

/// The error to return to Lua: `message`, of kind `kind`.
pub fn raise(kind: ErrorKind, message: impl Into<String>) -> mlua::Error {
    mlua::Error::external(KindError { kind, message: message.into() })
}

/// The kind of the crates' typed errors.
pub trait Kind {
    /// What the error is about.
    fn kind(&self) -> ErrorKind;
}

impl Kind for BusError {
    fn kind(&self) -> ErrorKind {
        ErrorKind::Bus
    }
}

impl Kind for crate::base::BaseError {
    fn kind(&self) -> ErrorKind {
        match self {
            crate::base::BaseError::Bus(e) => e.kind(),
            crate::base::BaseError::Robot(e) => e.kind(),
            // The engine cannot run the robot on that base: where it runs is what to change.
            crate::base::BaseError::Refused(_) => ErrorKind::Engine,
        }
    }
}

impl Kind for FmiError {
    fn kind(&self) -> ErrorKind {
        ErrorKind::Fmi
    }
}

impl Kind for RobotError {
    fn kind(&self) -> ErrorKind {
        match self {
            // The robot's model cannot be driven (a link without mass): the model is what to fix.
            RobotError::Model { .. } => ErrorKind::Model,
            _ => ErrorKind::Robot,
        }
    }
}

impl Kind for ModelError {
    fn kind(&self) -> ErrorKind {
        ErrorKind::Model
    }
}

impl Kind for RecordError {
    fn kind(&self) -> ErrorKind {
        ErrorKind::Record
    }
}

impl Kind for AssemblyError {
    fn kind(&self) -> ErrorKind {
        match &self.component {
            // A recorder's file or an FMU that will not load is about the recording, the FMU.
            Some(c) => match component_kind(c) {
                ErrorKind::Component => ErrorKind::Assembly,
                k => k,
            },
            None => ErrorKind::Assembly,
        }
    }
}

impl Kind for EngineError {
    fn kind(&self) -> ErrorKind {
        match self {
            EngineError::Assembly(e) => e.kind(),
            EngineError::Busy(_) | EngineError::Stopped(_) => ErrorKind::Engine,
        }
    }
}

/// A typed error as a Lua error, `prefix` (e.g. "file.lua:3: morc.start_engine: ") before its
/// message, keeping its kind.
pub fn with_prefix(prefix: &str, e: impl Kind + fmt::Display) -> mlua::Error {
    raise(e.kind(), format!("{prefix}{e}"))
}

/// A typed error as a Lua error, its message as it is.
pub fn typed(e: impl Kind + fmt::Display) -> mlua::Error {
    raise(e.kind(), e.to_string())
}

/// An error caught from a Lua call, said again after `place` ("file.lua:3"), keeping its kind.
pub fn prefixed(place: impl fmt::Display, e: mlua::Error) -> mlua::Error {
    raise(kind_of(&e), format!("{place}: {e}"))
}

/// What component kinds are about, beyond the native blocks: FMUs ("fmi") and Lua components
/// ("lua") are named by their model or definition, so the Lua layer notes them as they are
/// added to an assembly ([`note_component_kind`]).
static COMPONENT_KINDS: std::sync::Mutex<Vec<(String, ErrorKind)>> = std::sync::Mutex::new(Vec::new());

/// Notes that components of kind `name` are about `kind` (an FMU's model name: [`ErrorKind::Fmi`]).
pub fn note_component_kind(name: &str, kind: ErrorKind) {
    let mut kinds = COMPONENT_KINDS.lock().unwrap_or_else(|p| p.into_inner());
    match kinds.iter_mut().find(|(n, _)| n == name) {
        Some(entry) => entry.1 = kind,
        None => kinds.push((name.to_string(), kind)),
    }
}

/// What a component's error or fault is about, by its kind.
pub fn component_kind(c: &ComponentRef) -> ErrorKind {
    if c.kind == "recorder" {
        return ErrorKind::Record;
    }
    let kinds = COMPONENT_KINDS.lock().unwrap_or_else(|p| p.into_inner());
    kinds.iter().find(|(n, _)| *n == c.kind).map_or(ErrorKind::Component, |(_, k)| *k)
}

/// What a run's fault is about: a base fault is the bus's when the base is a bus (`on_bus`),
/// else the robot's; a component's by its kind.
pub fn fault_kind(source: &FaultSource, on_bus: bool) -> ErrorKind {
    match source {
        FaultSource::Base { .. } if on_bus => ErrorKind::Bus,
        FaultSource::Base { .. } => ErrorKind::Robot,
        FaultSource::Component(c) => component_kind(c),
        FaultSource::Assembly => ErrorKind::Assembly,
    }
}

/// The kind of an error as Lua caught it (through the causes mlua wraps around it).
pub fn kind_of(e: &mlua::Error) -> ErrorKind {
    match e {
        mlua::Error::CallbackError { cause, .. } => kind_of(cause),
        mlua::Error::WithContext { cause, .. } => kind_of(cause),
        mlua::Error::ExternalError(inner) => {
            let inner: &(dyn std::error::Error + 'static) = inner.as_ref();
            if let Some(k) = inner.downcast_ref::<KindError>() {
                k.kind
            } else if let Some(e) = inner.downcast_ref::<BusError>() {
                e.kind()
            } else if let Some(e) = inner.downcast_ref::<FmiError>() {
                e.kind()
            } else if let Some(e) = inner.downcast_ref::<RobotError>() {
                e.kind()
            } else if let Some(e) = inner.downcast_ref::<ModelError>() {
                e.kind()
            } else if let Some(e) = inner.downcast_ref::<RecordError>() {
                e.kind()
            } else if let Some(e) = inner.downcast_ref::<EngineError>() {
                e.kind()
            } else if let Some(e) = inner.downcast_ref::<AssemblyError>() {
                e.kind()
            } else {
                ErrorKind::Lua
            }
        }
        mlua::Error::RuntimeError(m) if crate::interrupt::is_interruption(m) => ErrorKind::Interrupted,
        _ => ErrorKind::Lua,
    }
}

/// The message of an error as Lua caught it: its text without mlua's traceback and prefix.
pub fn message_of(e: &mlua::Error) -> String {
    match e {
        mlua::Error::CallbackError { cause, .. } => message_of(cause),
        mlua::Error::RuntimeError(m) => m.clone(),
        other => other.to_string(),
    }
}

/// Gives mlua's error values `kind`, `message`, the string methods and `..` (see the module
/// doc). Once per Lua state, before programs run.
pub fn install(lua: &Lua) -> mlua::Result<()> {
    let debug: Table = lua.globals().get("debug")?;
    let getmetatable: Function = debug.get("getmetatable")?;
    // Any error value: they all share one metatable, which mlua keeps for the state's life.
    let probe = mlua::Value::Error(Box::new(mlua::Error::runtime("probe")));
    let meta: Table = getmetatable.call(probe)?;
    let info = lua.create_function(|_, err: mlua::Value| match err {
        mlua::Value::Error(e) => Ok((Some(kind_of(&e).name()), Some(message_of(&e)))),
        _ => Ok((None, None)),
    })?;
    // A caught panic is one of these values too, and handing it to Rust panics again: it is
    // told by its text (mlua's own tostring), and said as the call it happened in.
    let panic_text = lua.create_function(|_, text: String| Ok(crate::panics::explain(&text)))?;
    // In Lua: what it does is small, and "=morc…" chunks are left alone by the Ctrl-C hook.
    let (index, concat, tostring): (Function, Function, Function) = lua
        .load(
            r#"local info, string, panic_text, raw_tostring, internal = ...
            local function index(err, key)
              if key == "kind" or key == "message" then
                local panic = panic_text(raw_tostring(err))
                if panic then return key == "kind" and internal or panic end
              end
              if key == "kind" then return (info(err)) end
              if key == "message" then return select(2, info(err)) end
              local f = string[key]
              if type(f) == "function" then
                return function(self, ...) return f(tostring(self), ...) end
              end
            end
            local function concat(a, b) return tostring(a) .. tostring(b) end
            local function to_string(err)
              local text = raw_tostring(err)
              return panic_text(text) or text
            end
            return index, concat, to_string"#,
        )
        .set_name("=morc.error")
        .call((info, lua.globals().get::<Table>("string")?, panic_text, meta.get::<Function>("__tostring")?, ErrorKind::Internal.name()))?;
    meta.set("__index", index)?;
    meta.set("__concat", concat)?;
    meta.set("__tostring", tostring)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn kinds_survive_the_wrapping_mlua_adds() {
        let wrapped = |e: mlua::Error| mlua::Error::CallbackError { traceback: "stack traceback:".into(), cause: Arc::new(e) };
        assert_eq!(kind_of(&wrapped(mlua::Error::external(BusError::Closed))), ErrorKind::Bus);
        assert_eq!(kind_of(&wrapped(typed(RecordError::Write("x".into())))), ErrorKind::Record);
        assert_eq!(kind_of(&wrapped(raise(ErrorKind::Fmi, "f.fmu: no such file"))), ErrorKind::Fmi);
        assert_eq!(message_of(&wrapped(raise(ErrorKind::Fmi, "f.fmu: no such file"))), "f.fmu: no such file");
        assert_eq!(kind_of(&mlua::Error::runtime("plain")), ErrorKind::Lua);
    }

    #[test]
    fn a_robot_whose_model_cannot_be_driven_is_a_model_error() {
        let source = ModelError::Invalid { origin: "arm.urdf".into(), message: "link 'tool' has no mass".into() };
        let e = RobotError::Model { context: "arm.lua:3: robot 'arm'".into(), source };
        assert_eq!(e.kind(), ErrorKind::Model);
        assert_eq!(e.to_string(), "arm.lua:3: robot 'arm': arm.urdf: link 'tool' has no mass");
        assert_eq!(RobotError::Payload("payload: negative mass".into()).kind(), ErrorKind::Robot);
    }

    #[test]
    fn the_interruption_is_its_own_kind() {
        assert_eq!(kind_of(&crate::interrupt::error()), ErrorKind::Interrupted);
        let at_a_line = mlua::Error::runtime(format!("prog.lua:3: {}", crate::interrupt::MESSAGE));
        assert_eq!(kind_of(&at_a_line), ErrorKind::Interrupted);
    }

    #[test]
    fn a_component_that_will_not_initialise_is_about_what_it_is() {
        let e = AssemblyError { message: "x.lua:3: component 'rec' (recorder) failed to initialise".into(), component: None };
        assert_eq!(e.kind(), ErrorKind::Assembly);
        assert_eq!(e.clone().in_component("rec", "recorder").kind(), ErrorKind::Record);
        assert_eq!(EngineError::Assembly(e.in_component("g", "gain")).kind(), ErrorKind::Assembly);
        assert_eq!(EngineError::Busy("a".into()).kind(), ErrorKind::Engine);
    }
}
