//! Lua components: kinds defined by `morc.component { … }`, stepped on the engine's own
//! threads in each thread's Lua state (see thread_state.rs).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::object_params::{ObjectParam, Shared};
use crate::thread_state::{Instance, ThreadLua, DEFAULT_POOL_BYTES};
use morc_kernel::*;
use morc_kernel::{Value, ValueType};

/// Where a Lua component kind's code comes from, for the stepping thread's Lua state to load it.
pub enum KindSource {
    /// Defined by a module (a file loaded by `require`, e.g. a library's `components/x.lua`):
    /// the stepping thread's state requires the same module, so the functions keep their
    /// upvalues and the module's own `require`s, and an edited file is what runs next.
    Module {
        /// The module name `require` was given ("lib.NAME.components.x", "mycontrollers").
        module: String,
        /// The file it was loaded from, for messages.
        file: String,
        /// `package.path` when it was defined, so `require` finds the same files.
        package_path: String,
        /// `morc.lib.path` when it was defined, so the same libraries are found.
        library_path: Vec<String>,
    },
    /// Defined in a program's own chunk or typed in the REPL: the functions travel as bytecode
    /// (`string.dump`), so they may not capture local variables.
    Inline {
        /// `init(self, out)`, if the definition has one.
        init: Option<Vec<u8>>,
        /// `step(self, inp, out, t)`, required.
        step: Vec<u8>,
        /// `terminate(self)`, if the definition has one.
        terminate: Option<Vec<u8>>,
        /// `migrate(self, old)`, if the definition has one.
        migrate: Option<Vec<u8>>,
    },
}

/// A Lua component kind as defined by `morc.component { … }`.
pub struct LuaComponentDef {
    /// The kind's name, the definition's `name`: what assemblies add it as.
    pub kind: String,
    /// One line on what it does, the definition's `doc` (shown by `help`).
    pub doc: String,
    /// Input ports, parsed from the definition's `inputs` ("u", "q[6]", "n:integer" …).
    pub inputs: Vec<PortInfo>,
    /// Output ports, from the definition's `outputs`.
    pub outputs: Vec<PortInfo>,
    /// Parameters with their defaults, from the definition's `params`, sorted by name.
    pub params: Vec<ParamInfo>,
    /// The parameters that take a robot or a model (`params = { robot = morc.ROBOT }`): strings
    /// in `params` (a module's name), objects when `a:add` hands them (crate::object_params).
    pub objects: Vec<ObjectParam>,
    /// Vector ports sized by an integer parameter ("q[n]"): (is an output, port index, parameter).
    pub sized_by: Vec<(bool, usize, String)>,
    /// Where its code comes from.
    pub source: KindSource,
    /// The library that defined the component, when one did: its functions then run with
    /// only that library's capabilities (the same environment as its code in the program).
    pub sandbox: Option<std::sync::Arc<crate::library::Trust>>,
}

/// An instance of a Lua component kind, stepped in the Lua state of the thread that steps it.
pub struct LuaComponent {
    info: ComponentInfo,
    def: Arc<LuaComponentDef>,
    placed: Option<(Arc<ThreadLua>, Instance)>,
    /// Whether the collector is this component's to run (no thread loop runs it).
    collects: bool,
    /// The robots and models handed to its object parameters, by parameter name.
    handed: Vec<(String, Shared)>,
}

impl LuaComponent {
    /// An instance of `def`, with its ports and parameters; it gets its Lua state at initialize.
    pub fn new(def: Arc<LuaComponentDef>) -> Self {
        let mut info = ComponentInfo::new(&def.kind, &def.doc);
        info.inputs = def.inputs.clone();
        info.outputs = def.outputs.clone();
        info.params = def.params.clone();
        // Sized by the parameters' defaults until configured, so its description (`morc doc`)
        // shows what a default instance has, not a placeholder size.
        for (output, index, param) in &def.sized_by {
            if let Some(Value::Integer(n)) = info.params.iter().find(|p| &p.name == param).map(|p| &p.value) {
                let ports = if *output { &mut info.outputs } else { &mut info.inputs };
                ports[*index].ty = ValueType::Vector((*n).max(1) as usize);
            }
        }
        LuaComponent { info, def, placed: None, collects: false, handed: Vec::new() }
    }

    /// Its kind's definition.
    pub fn def(&self) -> &Arc<LuaComponentDef> {
        &self.def
    }

    /// With `robot` handed to its parameter `param` (declared `morc.ROBOT`, or `morc.MODEL`:
    /// then the robot's model): the component's state sees it as `self.param`, read-only, the
    /// robot shared, not loaded again.
    pub fn with_robot(self, param: &str, robot: Arc<morc_robot::Robot>) -> Self {
        let wants_model = self.def.objects.iter().any(|p| p.name == param && p.wants == crate::object_params::Wants::Model);
        let object = if wants_model { Shared::Model(robot.model.clone()) } else { Shared::Robot(robot) };
        self.handed(vec![(param.to_string(), object)])
    }

    /// With `objects` handed to its object parameters (by name).
    pub(crate) fn handed(mut self, objects: Vec<(String, Shared)>) -> Self {
        for (name, object) in objects {
            self.handed.retain(|(n, _)| *n != name);
            self.handed.push((name, object));
        }
        self
    }
}

impl Component for LuaComponent {
    morc_kernel::component_info!(info);

    fn configure(&mut self) -> Result<(), String> {
        for (output, index, param) in &self.def.sized_by {
            let n = self.info.integer(param);
            if n < 1 {
                return Err(format!("parameter '{param}' sizes a vector port and must be at least 1, got {n}"));
            }
            let ports = if *output { &mut self.info.outputs } else { &mut self.info.inputs };
            let port = &mut ports[*index];
            port.ty = ValueType::Vector(n as usize);
            for (key, list) in [("unit", &port.element_units), ("elements", &port.element_names)] {
                if !list.is_empty() && list.len() != n as usize {
                    return Err(format!("port '{}[{param}]': {key} has {} entries for its {n} elements ({param} = {n}); give one per element", port.name, list.len()));
                }
            }
        }
        Ok(())
    }

    fn initialize(&mut self, ctx: &InitContext, outputs: &mut [Value]) -> Result<(), String> {
        crate::print_queue::start();
        let pool = ctx.thread.memory().unwrap_or(DEFAULT_POOL_BYTES);
        let thread = ctx.thread.shared(|| ThreadLua::new(pool))?;
        if ctx.thread.runs_slack() && !thread.slack_registered.swap(true, Ordering::Relaxed) {
            ctx.thread.on_slack(thread.clone());
        }
        self.collects = !ctx.thread.runs_slack();
        let mut params: Vec<(String, Value)> = self.info.params.iter().map(|p| (p.name.clone(), p.value.clone())).collect();
        // self.period: the component's sample period h in seconds (unless a parameter has the name).
        if self.info.param_value("period").is_none() {
            params.push(("period".into(), Value::Real(ctx.period)));
        }
        let instance = thread.add_instance(&self.def, &self.info, ctx.name, &params, &self.handed, outputs)?;
        self.placed = Some((thread, instance));
        Ok(())
    }

    fn step(&mut self, ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        let Some((thread, instance)) = &self.placed else {
            return Step::Fault("not initialised".into());
        };
        thread.step(instance, &self.info, ctx, inputs, outputs, self.collects)
    }

    /// A reload: the old instance of the same kind hands its state over (see
    /// [`ThreadLua::take_over`]); one of another kind hands nothing over.
    fn take_over(&mut self, old: &mut dyn Component) -> Result<(), String> {
        let Some(old) = old.as_any_mut().and_then(|a| a.downcast_mut::<LuaComponent>()) else { return Ok(()) };
        if old.def.kind != self.def.kind {
            return Ok(());
        }
        let (Some((thread, instance)), Some((old_thread, old_instance))) = (&self.placed, &old.placed) else { return Ok(()) };
        let mut keep: Vec<&str> = self.info.params.iter().map(|p| p.name.as_str()).collect();
        keep.extend(["name", "period"]);
        thread.take_over(instance, &keep, &self.info.outputs, old_thread, old_instance)
    }

    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }

    fn terminate(&mut self, results: &mut AssemblyResults) {
        if let Some((thread, instance)) = self.placed.take() {
            thread.terminate(&instance, results);
            thread.release(&instance);
        }
    }
}

impl Drop for LuaComponent {
    fn drop(&mut self) {
        if let Some((thread, instance)) = self.placed.take() {
            thread.release(&instance);
        }
    }
}

/// A Lua error as one readable message (with the traceback's first lines).
pub fn lua_error_text(e: &mlua::Error) -> String {
    match e {
        mlua::Error::CallbackError { traceback, cause } => format!("{}\n{traceback}", lua_error_text(cause)),
        mlua::Error::RuntimeError(m) | mlua::Error::SyntaxError { message: m, .. } => m.clone(),
        other => other.to_string(),
    }
}

/// Parses a port declaration: "u", "q[6]", "q[n]" (sized by the integer parameter n),
/// "n:integer", "on:boolean", "msg:string". A vector sized by a parameter is returned with size
/// 1 and the parameter's name; the component sizes it at configure.
pub fn parse_port(decl: &str) -> Result<(PortInfo, Option<String>), String> {
    let (name, ty) = match decl.split_once(':') {
        Some((n, t)) => (n.trim(), t.trim()),
        None => (decl.trim(), "real"),
    };
    let mut sized_by = None;
    let (name, ty) = match name.split_once('[') {
        Some((n, rest)) => {
            let Some(inside) = rest.trim_end().strip_suffix(']') else {
                return Err(format!("port '{decl}': the size in [ ] needs its closing bracket, as in 'q[6]' or 'q[n]'"));
            };
            let inside = inside.trim();
            let size = match inside.parse::<usize>() {
                Ok(size) => size,
                Err(_) if !inside.is_empty() && inside.chars().all(|c| c.is_alphanumeric() || c == '_') && !inside.starts_with(|c: char| c.is_ascii_digit()) => {
                    sized_by = Some(inside.to_string());
                    1
                }
                Err(_) => return Err(format!("port '{decl}': the size in [ ] must be a whole number or the name of an integer parameter")),
            };
            if size == 0 {
                return Err(format!("port '{decl}': a vector needs at least one element"));
            }
            (n.trim(), ValueType::Vector(size))
        }
        None => (
            name,
            match ty {
                "real" | "number" => ValueType::Real,
                "integer" | "int" => ValueType::Integer,
                "boolean" | "bool" => ValueType::Boolean,
                "string" => ValueType::String,
                other => return Err(format!("port '{decl}': unknown type '{other}' (real, integer, boolean, string, or name[n] for a vector)")),
            },
        ),
    };
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return Err(format!("port name '{name}' must be letters, digits and _"));
    }
    Ok((PortInfo::new(name, ty), sized_by))
}

/// Parses a port as a Lua component declares it: a declaration string (see [`parse_port`]),
/// or a table with it first and, as skill parameters declare theirs, `unit` (one for every
/// element, or a list with one per element of a vector), `elements` (a name per element,
/// e.g. { "x", "y", "z" }) and `doc`: `{ "f[3]", unit = "N", elements = { "x", "y", "z" } }`.
pub fn lua_port(decl: &mlua::Value) -> Result<(PortInfo, Option<String>), String> {
    let t = match decl {
        mlua::Value::String(s) => return parse_port(&s.to_string_lossy()),
        mlua::Value::Table(t) => t,
        other => return Err(format!("a port is a declaration (\"q[6]\") or a table {{ \"q[6]\", unit = \"rad\", elements = {{ … }} }}, got a {}", other.type_name())),
    };
    let first: Option<String> = t.get(1).map_err(|_| "a port table's first entry is its declaration, as in { \"f[3]\", unit = \"N\" }".to_string())?;
    let Some(first) = first else { return Err("a port table needs its declaration first, as in { \"f[3]\", unit = \"N\" }".into()) };
    let (mut port, sized_by) = parse_port(&first)?;
    let name = port.name.clone();
    let strings = |key: &str, v: mlua::Value| -> Result<Vec<String>, String> {
        match v {
            mlua::Value::Table(list) => list.sequence_values::<String>().collect::<mlua::Result<_>>().map_err(|_| format!("port '{name}': {key} must be a list of strings")),
            other => Err(format!("port '{name}': {key} must be a list of strings, got a {}", other.type_name())),
        }
    };
    // A vector sized by a parameter has its size only at configure: its lists are checked there.
    let size = match (port.ty, &sized_by) {
        (ValueType::Vector(n), None) => Some(n),
        (ValueType::Vector(_), Some(_)) => None,
        _ => Some(1),
    };
    let check = |key: &str, list: &[String]| match size {
        Some(n) if list.len() != n => Err(format!("port '{name}': {key} has {} entries for its {n} elements (one per element)", list.len())),
        _ => Ok(()),
    };
    match t.get::<mlua::Value>("unit").map_err(|e| e.to_string())? {
        mlua::Value::Nil => {}
        mlua::Value::String(u) => port = port.unit(&u.to_string_lossy()),
        v => {
            let units = strings("unit", v)?;
            check("unit", &units)?;
            port = port.units(&units);
        }
    }
    match t.get::<mlua::Value>("elements").map_err(|e| e.to_string())? {
        mlua::Value::Nil => {}
        v => {
            let names = strings("elements", v)?;
            check("elements", &names)?;
            port = port.elements(&names);
        }
    }
    if let Some(doc) = t.get::<Option<String>>("doc").map_err(|_| format!("port '{name}': doc must be a string"))? {
        port = port.doc(&doc);
    }
    Ok((port, sized_by))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_declarations() {
        let (p, by) = parse_port("q[6]").unwrap();
        assert_eq!((p.name.as_str(), p.ty, by), ("q", ValueType::Vector(6), None));
        let (p, by) = parse_port(" q [ n ] ").unwrap();
        assert_eq!((p.name.as_str(), p.ty, by.as_deref()), ("q", ValueType::Vector(1), Some("n")));
        assert_eq!(parse_port("on:boolean").unwrap().0.ty, ValueType::Boolean);
        for (bad, says) in [
            ("q[n", "needs its closing bracket"),
            ("q[6]]", "whole number or the name"),
            ("q[0]", "at least one element"),
            ("q[2x]", "whole number or the name"),
            ("u:complex", "unknown type 'complex'"),
            ("a-b", "letters, digits and _"),
        ] {
            let e = parse_port(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
