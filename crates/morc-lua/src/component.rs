//! Lua components, for prototyping: the step function is Lua, running in a
//! Lua state of its own on a thread of its own. Each step is one round trip
//! to that thread, which is why they suit modest rates (see `morc bench lua`).

use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{bounded, Receiver, Sender};
use mlua::{Function, Lua, Table};

use crate::convert::{from_value, to_value};
use morc_kernel::*;
use morc_kernel::{Value, ValueType};

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
    /// Precompiled chunks (string.dump) of `init(self, out)`, `step(self, inp, out, t)`
    /// and `terminate(self)`: a function cannot move between Lua states, its bytecode can.
    pub init: Option<Vec<u8>>,
    /// `step(self, inp, out, t)`, required.
    pub step: Vec<u8>,
    /// `terminate(self)`, if the definition has one.
    pub terminate: Option<Vec<u8>>,
    /// The library that defined the component, when one did: its functions then run with
    /// only that library's capabilities (the same environment as its code in the program).
    pub sandbox: Option<std::sync::Arc<crate::library::Trust>>,
}

/// What travels to the Lua thread and back each step; allocated once.
struct Exchange {
    ctx: StepContext,
    inputs: Vec<Value>,
    outputs: Vec<Value>,
    /// Set by the Lua thread when the step failed or asked to finish.
    error: Option<String>,
    finish: Option<String>,
}

enum Request {
    Step(Box<Exchange>),
    Terminate,
}

enum Reply {
    Ready(Result<Box<Exchange>, String>),
    Stepped(Box<Exchange>),
    Terminated(Vec<(String, Value)>),
}

/// An instance of a Lua component kind: its Lua state runs on a thread of its own, one round trip per step.
pub struct LuaComponent {
    info: ComponentInfo,
    def: Arc<LuaComponentDef>,
    requests: Option<Sender<Request>>,
    replies: Option<Receiver<Reply>>,
    thread: Option<JoinHandle<()>>,
    exchange: Option<Box<Exchange>>,
}

impl LuaComponent {
    /// An instance of `def`, with its ports and parameters; the Lua thread starts at initialize.
    pub fn new(def: Arc<LuaComponentDef>) -> Self {
        let mut info = ComponentInfo::new(&def.kind, &def.doc);
        info.inputs = def.inputs.clone();
        info.outputs = def.outputs.clone();
        info.params = def.params.clone();
        LuaComponent { info, def, requests: None, replies: None, thread: None, exchange: None }
    }
}

impl Component for LuaComponent {
    morc_kernel::component_info!(info);

    fn initialize(&mut self, ctx: &InitContext, outputs: &mut [Value]) -> Result<(), String> {
        let (req_tx, req_rx) = bounded(1);
        let (rep_tx, rep_rx) = bounded(1);
        let def = self.def.clone();
        let params: Vec<(String, Value)> = self.info.params.iter().map(|p| (p.name.clone(), p.value.clone())).collect();
        let exchange = Box::new(Exchange {
            ctx: StepContext { step: 0, time: 0.0, period: ctx.period },
            inputs: self.info.inputs.iter().map(|p| Value::zero(p.ty)).collect(),
            outputs: self.info.outputs.iter().map(|p| Value::zero(p.ty)).collect(),
            error: None,
            finish: None,
        });
        let name = ctx.name.to_string();
        let thread = std::thread::Builder::new()
            .name(format!("morc-lua-{name}"))
            .spawn(move || lua_thread(def, name, params, exchange, req_rx, rep_tx))
            .map_err(|e| format!("cannot start its Lua thread: {e}"))?;
        self.thread = Some(thread);
        let ready = rep_rx.recv().map_err(|_| "its Lua thread ended during initialisation".to_string())?;
        self.requests = Some(req_tx);
        self.replies = Some(rep_rx);
        match ready {
            Reply::Ready(Ok(exchange)) => {
                for (o, v) in outputs.iter_mut().zip(&exchange.outputs) {
                    o.copy_from(v);
                }
                self.exchange = Some(exchange);
                Ok(())
            }
            Reply::Ready(Err(e)) => Err(e),
            _ => Err("unexpected reply from its Lua thread".into()),
        }
    }

    fn step(&mut self, ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        let (Some(requests), Some(replies), Some(mut exchange)) = (&self.requests, &self.replies, self.exchange.take()) else {
            return Step::Fault("not initialised".into());
        };
        exchange.ctx = *ctx;
        for (e, v) in exchange.inputs.iter_mut().zip(inputs) {
            e.copy_from(v);
        }
        if requests.send(Request::Step(exchange)).is_err() {
            return Step::Fault("its Lua thread has ended".into());
        }
        let Ok(Reply::Stepped(mut exchange)) = replies.recv() else {
            return Step::Fault("its Lua thread has ended".into());
        };
        for (o, v) in outputs.iter_mut().zip(&exchange.outputs) {
            o.copy_from(v);
        }
        let error = exchange.error.take();
        let finish = exchange.finish.take();
        self.exchange = Some(exchange);
        match (error, finish) {
            (Some(e), _) => Step::Fault(e),
            (None, Some(reason)) => Step::Finish(reason),
            _ => Step::Continue,
        }
    }

    fn terminate(&mut self, results: &mut AssemblyResults) {
        if let (Some(requests), Some(replies)) = (self.requests.take(), self.replies.take()) {
            if requests.send(Request::Terminate).is_ok() {
                if let Ok(Reply::Terminated(values)) = replies.recv() {
                    for (k, v) in values {
                        results.set(&k, v);
                    }
                }
            }
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for LuaComponent {
    fn drop(&mut self) {
        self.requests = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn lua_thread(def: Arc<LuaComponentDef>, name: String, params: Vec<(String, Value)>, mut exchange: Box<Exchange>, requests: Receiver<Request>, replies: Sender<Reply>) {
    morc_kernel::rt::apply_to_current_thread(morc_kernel::rt::worker_policy(), "Lua component");
    let lua = Lua::new();
    let setup = (|| -> mlua::Result<(Table, Table, Table, Function, Option<Function>)> {
        let load = |code: &[u8], what: &str| lua.load(code).set_name(format!("={}.{what}", def.kind)).set_mode(mlua::ChunkMode::Binary).into_function();
        let step = load(&def.step, "step")?;
        let init = def.init.as_deref().map(|c| load(c, "init")).transpose()?;
        let terminate = def.terminate.as_deref().map(|c| load(c, "terminate")).transpose()?;
        if let Some(trust) = &def.sandbox {
            let guard = crate::library::guard_table(&lua, trust.clone(), false)?;
            let env: Table = crate::library::sandbox_builder(&lua)?.call(guard)?;
            for f in [Some(&step), init.as_ref(), terminate.as_ref()].into_iter().flatten() {
                f.set_environment(env.clone())?;
            }
        }
        let this = lua.create_table()?;
        this.set("name", name.as_str())?;
        for (k, v) in &params {
            this.set(k.as_str(), from_value(&lua, v)?)?;
        }
        let inp = lua.create_table()?;
        let out = lua.create_table()?;
        for (p, v) in def.outputs.iter().zip(&exchange.outputs) {
            out.set(p.name.as_str(), from_value(&lua, v)?)?;
        }
        if let Some(init) = init {
            init.call::<()>((this.clone(), out.clone()))?;
        }
        read_outputs(&def, &out, &mut exchange.outputs)?;
        Ok((this, inp, out, step, terminate))
    })();
    let (this, inp, out, step, terminate) = match setup {
        Ok(s) => s,
        Err(e) => {
            let _ = replies.send(Reply::Ready(Err(lua_error_text(&e))));
            return;
        }
    };
    if replies.send(Reply::Ready(Ok(exchange))).is_err() {
        return;
    }
    while let Ok(request) = requests.recv() {
        match request {
            Request::Step(mut ex) => {
                let result = (|| -> mlua::Result<Option<String>> {
                    for (p, v) in def.inputs.iter().zip(&ex.inputs) {
                        write_input(&lua, &inp, &p.name, v)?;
                    }
                    let r: mlua::Value = step.call((this.clone(), inp.clone(), out.clone(), ex.ctx.time))?;
                    read_outputs(&def, &out, &mut ex.outputs)?;
                    // A step may return a string to end the assembly: its reason.
                    Ok(match r {
                        mlua::Value::String(s) => Some(s.to_str()?.to_string()),
                        _ => None,
                    })
                })();
                match result {
                    Ok(finish) => ex.finish = finish,
                    Err(e) => ex.error = Some(lua_error_text(&e)),
                }
                if replies.send(Reply::Stepped(ex)).is_err() {
                    return;
                }
            }
            Request::Terminate => {
                let mut values = Vec::new();
                if let Some(t) = &terminate {
                    if let Ok(mlua::Value::Table(r)) = t.call::<mlua::Value>(this.clone()) {
                        for (k, v) in r.pairs::<String, mlua::Value>().flatten() {
                            if let Ok(v) = to_value(&v, &k) {
                                values.push((k, v));
                            }
                        }
                    }
                }
                let _ = replies.send(Reply::Terminated(values));
                return;
            }
        }
    }
}

/// Writes an input into the `inp` table, reusing vector tables in place.
fn write_input(lua: &Lua, inp: &Table, name: &str, v: &Value) -> mlua::Result<()> {
    if let Value::Vector(xs) = v {
        if let Ok(t) = inp.raw_get::<Table>(name) {
            for (i, x) in xs.iter().enumerate() {
                t.raw_set(i + 1, *x)?;
            }
            return Ok(());
        }
    }
    inp.raw_set(name, from_value(lua, v)?)
}

/// Reads every output from the `out` table, checking types and sizes.
fn read_outputs(def: &LuaComponentDef, out: &Table, outputs: &mut [Value]) -> mlua::Result<()> {
    for (p, o) in def.outputs.iter().zip(outputs.iter_mut()) {
        let v: mlua::Value = out.raw_get(p.name.as_str())?;
        match (&v, o) {
            (mlua::Value::Nil, _) => {}
            (mlua::Value::Table(t), Value::Vector(xs)) => {
                if t.raw_len() != xs.len() {
                    return Err(mlua::Error::runtime(format!("output '{}' must have {} elements, got {}", p.name, xs.len(), t.raw_len())));
                }
                for (i, x) in xs.iter_mut().enumerate() {
                    *x = t.raw_get(i + 1)?;
                }
            }
            (v, o) => {
                let value = to_value(v, &format!("output '{}'", p.name))?;
                let value = value.coerce(p.ty).map_err(|e| mlua::Error::runtime(format!("output '{}': {e}", p.name)))?;
                o.copy_from(&value);
            }
        }
    }
    Ok(())
}

/// A Lua error as one readable message (with the traceback's first lines).
pub fn lua_error_text(e: &mlua::Error) -> String {
    match e {
        mlua::Error::CallbackError { traceback, cause } => format!("{}\n{traceback}", lua_error_text(cause)),
        mlua::Error::RuntimeError(m) | mlua::Error::SyntaxError { message: m, .. } => m.clone(),
        other => other.to_string(),
    }
}

/// Parses a port declaration: "u", "q[6]", "n:integer", "on:boolean", "msg:string".
pub fn parse_port(decl: &str) -> Result<PortInfo, String> {
    let (name, ty) = match decl.split_once(':') {
        Some((n, t)) => (n.trim(), t.trim()),
        None => (decl.trim(), "real"),
    };
    let (name, ty) = match name.split_once('[') {
        Some((n, rest)) => {
            let size: usize = rest.trim_end_matches(']').parse().map_err(|_| format!("port '{decl}': the size in [ ] must be a whole number"))?;
            if size == 0 {
                return Err(format!("port '{decl}': a vector needs at least one element"));
            }
            (n, ValueType::Vector(size))
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
    Ok(PortInfo::new(name, ty))
}
