//! The Lua state's component kinds: one [`KindRegistry`] that starts with the native kinds and
//! to which `morc.register(kind [, name])` adds Lua components, FMUs and robot kinds. `a:add`
//! finds a kind given by name there; a kind value (`morc.component{…}`, `morc.fmu(path)`,
//! `robot:component "ptp"`) becomes the same kind of entry without a name being taken.
//!
//! Naming: names are unique in a state, and a clash is an error naming both origins. A kind
//! registered by a library's code is named `LIBRARY.name` (the prefix is added when missing), so
//! libraries neither shadow the native kinds nor each other.
//!
//! Everything about kinds lives in this module: Lua kinds' definition ([`definition`]) and
//! instances ([`instance`]), a robot's kinds as values ([`robot_kind`]), this registry, and the
//! one path by which a component of any kind joins an assembly ([`add`]).

use std::collections::HashMap;
use std::sync::Arc;

use mlua::{AnyUserData, Lua, Table};

pub mod add;
pub mod definition;
pub mod instance;
pub mod robot_kind;

use crate::fmu::FmuKind;
use crate::origin::caller;
use definition::LuaKind;
use instance::LuaComponent;
use morc_kernel::registry::{KindEntry, KindRegistry};
use morc_kernel::Component;
use robot_kind::RobotKind;

/// The kinds of one Lua state.
pub struct LuaKinds {
    /// Every kind by name.
    pub registry: KindRegistry,
    /// The registered names that are robot kinds: their parameters are given in Lua's units
    /// (degrees, mm) and converted by the robot, so `a:add` hands them to the robot's adder.
    robots: HashMap<String, RobotKind>,
}

/// What a kind given to `a:add` resolves to.
pub enum Resolved {
    /// A kind whose parameters are taken as they are.
    Kind(KindEntry),
    /// A robot's kind, whose parameters the robot converts.
    Robot(RobotKind),
}

/// Installs the state's registry with the native kinds.
pub fn install(lua: &Lua) {
    lua.set_app_data(LuaKinds { registry: KindRegistry::with_natives(), robots: HashMap::new() });
}

/// Runs `f` on the state's registry (installed on first use, for states made without `install`).
pub fn with<R>(lua: &Lua, f: impl FnOnce(&mut LuaKinds) -> R) -> R {
    if lua.app_data_ref::<LuaKinds>().is_none() {
        install(lua);
    }
    let mut kinds = lua.app_data_mut::<LuaKinds>().expect("installed above");
    f(&mut kinds)
}

/// The entry a Lua component kind makes (not registered).
pub fn lua_entry(kind: &LuaKind, origin: &str) -> KindEntry {
    let def = kind.0.clone();
    KindEntry {
        name: def.kind.clone(),
        doc: def.doc.clone(),
        origin: origin.into(),
        make: Arc::new(move || Ok(Box::new(LuaComponent::new(def.clone())) as Box<dyn Component>)),
    }
}

/// The entry an FMU kind makes (not registered).
pub fn fmu_entry(kind: &FmuKind, origin: &str) -> KindEntry {
    let d = &kind.0.description;
    KindEntry { name: d.model_name.clone(), doc: d.description.clone(), origin: origin.into(), make: kind.factory() }
}

/// The kind named `name` in the state.
pub fn find(lua: &Lua, name: &str) -> Result<Resolved, String> {
    with(lua, |k| match k.robots.get(name) {
        Some(r) => Ok(Resolved::Robot(r.clone())),
        None => k.registry.get(name).cloned().map(Resolved::Kind).ok_or_else(|| k.registry.unknown(name)),
    })
}

/// `morc.register(kind [, name])`: adds a kind value to the state under `name` (default: the
/// kind's own name; `ROBOT.kind` for a robot's); returns the name it is registered under.
pub fn register(lua: &Lua, kind: &mlua::Value, name: Option<String>) -> mlua::Result<String> {
    let at = caller(lua);
    let not_a_kind = || mlua::Error::runtime(format!("{at}: morc.register expects a component kind: morc.component{{…}}, morc.fmu(path) or robot:component \"ptp\", got a {}", kind.type_name()));
    let kind: &AnyUserData = kind.as_userdata().ok_or_else(not_a_kind)?;
    let library = crate::library::defining_library(lua);
    let by = match &library {
        Some(lib) => format!("library {} ({at})", lib.name),
        None => format!("{at}"),
    };
    let (entry, robot) = if let Ok(k) = kind.borrow::<LuaKind>() {
        (lua_entry(&k, &format!("Lua component of {by}")), None)
    } else if let Ok(k) = kind.borrow::<FmuKind>() {
        (fmu_entry(&k, &format!("FMU {} of {by}", k.0.path.display())), None)
    } else if let Ok(k) = kind.borrow::<RobotKind>() {
        let make = morc_robot::components::factory(&k.robot, &k.kind).ok_or_else(|| mlua::Error::runtime(format!("{at}: robot '{}' has no component kind '{}'", k.robot.name, k.kind)))?;
        let entry = KindEntry {
            name: format!("{}.{}", k.robot.name, k.kind),
            doc: morc_robot::components::kind_doc(&k.kind).into(),
            origin: format!("{} of {by}", morc_robot::components::origin(&k.robot)),
            make,
        };
        (entry, Some(k.clone()))
    } else {
        return Err(not_a_kind());
    };
    let mut name = name.unwrap_or_else(|| entry.name.clone());
    if let Some(lib) = &library {
        let prefix = format!("{}.", lib.name);
        if !name.starts_with(&prefix) {
            name = format!("{prefix}{name}");
        }
    }
    // What the kind's errors and faults are about (err.kind, r.error.kind).
    if kind.is::<LuaKind>() {
        crate::error::note_component_kind(&name, crate::error::ErrorKind::Lua);
    } else if kind.is::<FmuKind>() {
        crate::error::note_component_kind(&name, crate::error::ErrorKind::Fmi);
    }
    with(lua, |k| {
        k.registry.register(&name, &entry.doc, &entry.origin, entry.make)?;
        if let Some(r) = robot {
            k.robots.insert(name.clone(), r);
        }
        Ok::<_, String>(())
    })
    .map_err(|e| mlua::Error::runtime(format!("{at}: {e}")))?;
    Ok(name)
}

/// `morc.kind(name)`: a registered kind's documentation, origin, ports and parameters.
pub(crate) fn kind_info(lua: &Lua, name: String) -> mlua::Result<Table> {
    let entry = with(lua, |k| k.registry.get(&name).cloned().ok_or_else(|| k.registry.unknown(&name))).map_err(mlua::Error::runtime)?;
    let mut c = (entry.make)().map_err(|e| mlua::Error::runtime(format!("component kind '{name}': {e}")))?;
    let objects = crate::object_params::of_kind(&mut *c);
    let info = c.info();
    let t = lua.create_table()?;
    t.set("name", entry.name.as_str())?;
    t.set("doc", info.doc.as_str())?;
    t.set("origin", entry.origin.as_str())?;
    let ports = |ports: &[morc_kernel::PortInfo]| -> mlua::Result<Table> {
        let list = lua.create_table()?;
        for p in ports {
            let e = lua.create_table()?;
            e.set("name", p.name.as_str())?;
            e.set("type", p.ty.to_string())?;
            e.set("unit", p.unit.as_str())?;
            if !p.element_units.is_empty() {
                e.set("units", p.element_units.clone())?;
            }
            if !p.element_names.is_empty() {
                e.set("elements", p.element_names.clone())?;
            }
            e.set("doc", p.doc.as_str())?;
            e.set("required", p.required)?;
            list.push(e)?;
        }
        Ok(list)
    };
    t.set("inputs", ports(&info.inputs)?)?;
    t.set("outputs", ports(&info.outputs)?)?;
    let params = lua.create_table()?;
    for p in &info.params {
        let e = lua.create_table()?;
        e.set("name", p.name.as_str())?;
        e.set("default", crate::object_params::shown_default(lua, &objects, &p.name)?.map_or_else(|| crate::convert::from_value(lua, &p.value), Ok)?)?;
        e.set("unit", p.unit.as_str())?;
        e.set("doc", p.doc.as_str())?;
        params.push(e)?;
    }
    t.set("params", params)?;
    Ok(t)
}
