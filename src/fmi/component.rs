//! An FMU as a morc component.
//!
//! Threading: the FMU instance is made, stepped, terminated and freed on a
//! worker thread of its own, because morc initialises components on the
//! thread that prepares an assembly but steps them on the Coordinator or an
//! Updater thread, and many FMUs (thread-local solver state, embedded
//! interpreters) break when called from more than one thread. Each step is
//! one hand-off to that thread through preallocated buffers.
//!
//! Time: step k calls doStep(k·h, h) (co-simulation) or integrates from k·h
//! to (k+1)·h (model exchange, explicit Euler or RK4 with sub-steps, inputs
//! held over the step); the outputs after it are the step's outputs.

use std::ffi::{c_char, c_int};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{bounded, Receiver, Sender};

use super::archive::{extract_cached, Limits};
use super::description::{parse, parse_real, Causality, FmiVersion, ModelDescription, VarType, Variable};
use super::fmi2;
use crate::kernel::assembly::Factory;
use crate::kernel::component::*;
use crate::kernel::value::{Value, ValueType};

/// An FMU file, extracted and described: shared by all its instances.
pub struct Fmu {
    pub path: PathBuf,
    /// The extraction folder in the cache.
    pub folder: PathBuf,
    pub description: ModelDescription,
    /// How messages name it: the file name.
    pub label: String,
}

impl Fmu {
    /// Extracts (once, into the cache) and reads the model description.
    pub fn open(path: &Path) -> Result<Arc<Fmu>, String> {
        let label = path
            .file_name()
            .map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
        let folder = extract_cached(path, &Limits::default())?;
        let xml_path = folder.join("modelDescription.xml");
        let xml = std::fs::read_to_string(&xml_path)
            .map_err(|e| format!("{label}: not an FMU: it has no readable modelDescription.xml ({e})"))?;
        let description = parse(&xml).map_err(|e| format!("{label}: {e}"))?;
        if description.version == FmiVersion::V3 {
            return Err(format!(
                "{label}: FMI {} import is not implemented yet in morc (FMI 2.0 is)",
                description.fmi_version
            ));
        }
        Ok(Arc::new(Fmu {
            path: path.to_path_buf(),
            folder,
            description,
            label,
        }))
    }

    /// The shared library for `model_identifier` on this platform.
    pub fn binary(&self, model_identifier: &str) -> Result<PathBuf, String> {
        let platform = super::export::platform_folder().unwrap_or("unknown");
        let file = format!("{model_identifier}{}", std::env::consts::DLL_SUFFIX);
        let path = self.folder.join("binaries").join(platform).join(&file);
        if path.is_file() {
            return Ok(path);
        }
        let mut found: Vec<String> = std::fs::read_dir(self.folder.join("binaries"))
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        found.sort();
        Err(format!(
            "{}: no binary for this platform: binaries/{platform}/{file} is missing (the FMU has binaries for: {}){}",
            self.label,
            if found.is_empty() {
                "none".to_string()
            } else {
                found.join(", ")
            },
            if self.folder.join("sources").is_dir() {
                "; it ships sources, which morc does not compile"
            } else {
                ""
            }
        ))
    }
}

/// A factory that makes instances of the FMU at `path` (opened once, now).
pub fn factory(path: &Path) -> Result<Factory, String> {
    let fmu = Fmu::open(path)?;
    Ok(Arc::new(move || {
        Ok(Box::new(FmuComponent::new(fmu.clone())) as Box<dyn Component>)
    }))
}

/// Which value array of the exchange a port element lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Group {
    Real,
    Integer,
    Boolean,
    String,
}

fn group(ty: VarType) -> Group {
    match ty {
        VarType::Float64 | VarType::Float32 => Group::Real,
        VarType::Boolean => Group::Boolean,
        VarType::String => Group::String,
        _ => Group::Integer,
    }
}

fn port_type(v: &Variable) -> Option<ValueType> {
    Some(match group(v.ty) {
        _ if v.ty == VarType::Other => return None,
        Group::Real if v.len() > 1 => ValueType::Vector(v.len()),
        Group::Real => ValueType::Real,
        Group::Integer => ValueType::Integer,
        Group::Boolean => ValueType::Boolean,
        Group::String => ValueType::String,
    })
}

/// Value references and values of one direction, grouped by FMI type:
/// one FMI call per group per step.
#[derive(Default)]
struct Buffers {
    real_vrs: Vec<u32>,
    real: Vec<f64>,
    integer_vrs: Vec<u32>,
    integer: Vec<c_int>,
    boolean_vrs: Vec<u32>,
    boolean: Vec<c_int>,
    string_vrs: Vec<u32>,
    string: Vec<String>,
    string_pointers: Vec<*const c_char>,
    /// Per port: its group and where its elements start in that group.
    ports: Vec<(Group, usize)>,
}

// SAFETY: string_pointers are scratch space, only dereferenced on the worker right after the FMU filled them.
unsafe impl Send for Buffers {}

impl Buffers {
    fn add(&mut self, v: &Variable) {
        let g = group(v.ty);
        let (vrs, at) = match g {
            Group::Real => (&mut self.real_vrs, self.real.len()),
            Group::Integer => (&mut self.integer_vrs, self.integer.len()),
            Group::Boolean => (&mut self.boolean_vrs, self.boolean.len()),
            Group::String => (&mut self.string_vrs, self.string.len()),
        };
        // Array elements are consecutive value references (FMI 3 arrays come as one).
        vrs.push(v.value_reference);
        match g {
            Group::Real => self.real.resize(at + v.len(), 0.0),
            Group::Integer => self.integer.push(0),
            Group::Boolean => self.boolean.push(0),
            Group::String => {
                self.string
                    .push(String::with_capacity(crate::kernel::value::STRING_PORT_CAPACITY));
                self.string_pointers.push(std::ptr::null());
            }
        }
        self.ports.push((g, at));
    }

    /// Copies port values in (inputs).
    fn load(&mut self, values: &[Value]) {
        for (&(g, at), v) in self.ports.iter().zip(values) {
            match (g, v) {
                (Group::Real, v) => {
                    let s = v.as_slice();
                    self.real[at..at + s.len()].copy_from_slice(s);
                }
                (Group::Integer, v) => {
                    self.integer[at] = v.integer().clamp(c_int::MIN as i64, c_int::MAX as i64) as c_int
                }
                (Group::Boolean, v) => self.boolean[at] = c_int::from(v.boolean()),
                (Group::String, v) => {
                    self.string[at].clear();
                    self.string[at].push_str(v.str());
                }
            }
        }
    }

    /// Copies values out to ports (outputs).
    fn store(&self, values: &mut [Value]) {
        for (&(g, at), v) in self.ports.iter().zip(values) {
            match (g, v) {
                (Group::Real, v) => {
                    let s = v.as_mut_slice();
                    let n = s.len();
                    s.copy_from_slice(&self.real[at..at + n]);
                }
                (Group::Integer, Value::Integer(i)) => *i = i64::from(self.integer[at]),
                (Group::Boolean, Value::Boolean(b)) => *b = self.boolean[at] != 0,
                (Group::String, Value::String(s)) => {
                    s.clear();
                    s.push_str(&self.string[at]);
                }
                _ => {}
            }
        }
    }
}

/// The model-exchange solver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Solver {
    Euler,
    Rk4,
}

/// Everything the worker needs to set the instance up.
struct Setup {
    fmu: Arc<Fmu>,
    instance_name: String,
    co_simulation: bool,
    solver: Solver,
    substeps: usize,
    period: f64,
    logging: bool,
    /// Parameter and start values the user set, by variable.
    starts: Vec<(Variable, Value)>,
}

/// What travels to the worker and back each step; allocated once.
struct Exchange {
    time: f64,
    inputs: Buffers,
    outputs: Buffers,
    /// Names of the real output elements, for the non-finite message.
    error: Option<String>,
    finish: bool,
}

enum Request {
    Step(Box<Exchange>),
    Terminate,
}

enum Reply {
    Ready(Result<Box<Exchange>, String>),
    Stepped(Box<Exchange>),
    Terminated(Result<(), String>),
}

/// Our own parameters, beside the FMU's.
const INTERFACE: &str = "interface";
const SOLVER: &str = "solver";
const SUBSTEPS: &str = "substeps";
const LOGGING: &str = "logging";
const INTERPOLATE_PREFIX: &str = "interpolate_";

pub struct FmuComponent {
    fmu: Arc<Fmu>,
    info: ComponentInfo,
    /// info.params[i] is FMU variable param_variables[i] (None: one of ours).
    param_variables: Vec<Option<usize>>,
    /// Parameters the user set (only these are passed to the FMU).
    user_set: Vec<bool>,
    input_variables: Vec<usize>,
    output_variables: Vec<usize>,
    /// Per input: 0 or 1 holds; k ≥ 2 interpolates linearly over k steps.
    interpolation: Vec<u32>,
    /// Per input: the value the current ramp started from and goes to.
    ramp_from: Vec<Value>,
    ramp_to: Vec<Value>,
    interpolated: Vec<Value>,
    requests: Option<Sender<Request>>,
    replies: Option<Receiver<Reply>>,
    thread: Option<JoinHandle<()>>,
    exchange: Option<Box<Exchange>>,
    period: f64,
}

fn start_value(v: &Variable, ty: ValueType) -> Value {
    let start = v.start.as_deref().unwrap_or("");
    match ty {
        ValueType::Real => Value::Real(parse_real(start).unwrap_or(0.0)),
        ValueType::Vector(n) => {
            let mut xs: Vec<f64> = start.split_whitespace().filter_map(parse_real).collect();
            xs.resize(n, xs.last().copied().unwrap_or(0.0));
            Value::Vector(xs)
        }
        ValueType::Integer => Value::Integer(start.trim().parse().unwrap_or(0)),
        ValueType::Boolean => Value::Boolean(matches!(start.trim(), "true" | "1")),
        ValueType::String => Value::String(start.to_string()),
    }
}

impl FmuComponent {
    pub fn new(fmu: Arc<Fmu>) -> Self {
        let md = &fmu.description;
        let mut info = ComponentInfo::new(&md.model_name, &md.description);
        let (mut param_variables, mut input_variables, mut output_variables) = (Vec::new(), Vec::new(), Vec::new());
        for (i, v) in md.variables.iter().enumerate() {
            let Some(ty) = port_type(v) else { continue };
            match v.causality {
                Causality::Input => {
                    info.inputs
                        .push(PortInfo::new(&v.name, ty).unit(&v.unit).doc(&v.description));
                    input_variables.push(i);
                }
                Causality::Output => {
                    info.outputs
                        .push(PortInfo::new(&v.name, ty).unit(&v.unit).doc(&v.description));
                    output_variables.push(i);
                }
                Causality::Parameter if v.variability != "constant" => {
                    info.params.push(
                        ParamInfo::new(&v.name, start_value(v, ty))
                            .unit(&v.unit)
                            .doc(&v.description),
                    );
                    param_variables.push(Some(i));
                }
                _ => {}
            }
        }
        let default_interface = if md.co_simulation.is_some() { "cs" } else { "me" };
        let ours = [
            ParamInfo::new(INTERFACE, Value::String(default_interface.into()))
                .doc("\"cs\" (co-simulation: the FMU's own solver) or \"me\" (model exchange: morc's solver)"),
            ParamInfo::new(SOLVER, Value::String("rk4".into())).doc("model exchange: \"euler\" or \"rk4\""),
            ParamInfo::new(SUBSTEPS, Value::Integer(1)).doc("model exchange: solver steps per sample period"),
            ParamInfo::new(LOGGING, Value::Boolean(false)).doc("ask the FMU for debug logging"),
        ];
        for p in ours {
            if info.params.iter().all(|q| q.name != p.name) {
                info.params.push(p);
                param_variables.push(None);
            }
        }
        for i in &input_variables {
            let v = &md.variables[*i];
            if group(v.ty) == Group::Real {
                info.params.push(
                    ParamInfo::new(&format!("{INTERPOLATE_PREFIX}{}", v.name), Value::Integer(1)).doc(&format!(
                        "input {}: 1 holds it; k ≥ 2 interpolates linearly over k steps, for a source k times slower (one of its periods late)",
                        v.name
                    )),
                );
                param_variables.push(None);
            }
        }
        let user_set = vec![false; info.params.len()];
        FmuComponent {
            fmu,
            info,
            param_variables,
            user_set,
            input_variables,
            output_variables,
            interpolation: Vec::new(),
            ramp_from: Vec::new(),
            ramp_to: Vec::new(),
            interpolated: Vec::new(),
            requests: None,
            replies: None,
            thread: None,
            exchange: None,
            period: 0.0,
        }
    }

    pub fn fmu(&self) -> &Fmu {
        &self.fmu
    }

    fn label(&self) -> &str {
        &self.fmu.label
    }
}

impl Component for FmuComponent {
    fn info(&self) -> &ComponentInfo {
        &self.info
    }
    fn info_mut(&mut self) -> &mut ComponentInfo {
        &mut self.info
    }

    fn set_parameter(&mut self, name: &str, value: &Value) -> Result<(), String> {
        let Some(i) = self.info.params.iter().position(|p| p.name == name) else {
            let known: Vec<&str> = self.info.params.iter().map(|p| p.name.as_str()).collect();
            return Err(format!(
                "{}: the FMU has no parameter '{name}' (parameters: {})",
                self.fmu.label,
                known.join(", ")
            ));
        };
        // Exact types only for FMU variables: a silent conversion would hide a wrong model.
        let expected = self.info.params[i].value.ty();
        let ok = match (expected, value) {
            (ValueType::Real, Value::Real(_) | Value::Integer(_)) => true,
            (ValueType::Vector(n), Value::Vector(v)) => v.len() == n,
            (t, v) => t == v.ty() || (t == ValueType::Integer && matches!(v, Value::Real(x) if x.fract() == 0.0)),
        };
        if !ok {
            return Err(format!(
                "{}: parameter '{name}' is {expected}, got {} ({value})",
                self.fmu.label,
                value.ty()
            ));
        }
        self.info
            .set_param(name, value)
            .map_err(|e| format!("{}: {e}", self.fmu.label))?;
        self.user_set[i] = true;
        Ok(())
    }

    fn configure(&mut self) -> Result<(), String> {
        let interface = self.info.param_value(INTERFACE).map_or("", Value::str).to_string();
        let md = &self.fmu.description;
        match interface.as_str() {
            "cs" if md.co_simulation.is_none() => {
                return Err(format!(
                    "{}: the FMU has no co-simulation interface (interface = \"me\")",
                    self.label()
                ))
            }
            "me" if md.model_exchange.is_none() => {
                return Err(format!(
                    "{}: the FMU has no model-exchange interface (interface = \"cs\")",
                    self.label()
                ))
            }
            "cs" | "me" => {}
            other => {
                return Err(format!(
                    "{}: parameter interface must be \"cs\" or \"me\", got {other:?}",
                    self.label()
                ))
            }
        }
        let solver = self.info.param_value(SOLVER).map_or("", Value::str);
        if solver != "euler" && solver != "rk4" {
            return Err(format!(
                "{}: parameter solver must be \"euler\" or \"rk4\", got {solver:?}",
                self.label()
            ));
        }
        let substeps = self.info.integer(SUBSTEPS);
        if !(1..=10_000).contains(&substeps) {
            return Err(format!(
                "{}: parameter substeps must be between 1 and 10000, got {substeps}",
                self.label()
            ));
        }
        self.interpolation.clear();
        for i in &self.input_variables {
            let name = format!("{INTERPOLATE_PREFIX}{}", md.variables[*i].name);
            let k = self.info.param_value(&name).map_or(1, Value::integer);
            if !(0..=1_000_000).contains(&k) {
                return Err(format!(
                    "{}: parameter {name} must be 0 or 1 (hold) or a number of steps ≥ 2, got {k}",
                    self.label()
                ));
            }
            self.interpolation.push(k as u32);
        }
        Ok(())
    }

    fn initialize(&mut self, ctx: &InitContext, outputs: &mut [Value]) -> Result<(), String> {
        self.period = ctx.period;
        let md = &self.fmu.description;
        let mut starts = Vec::new();
        for (i, p) in self.info.params.iter().enumerate() {
            if let (Some(v), true) = (self.param_variables[i], self.user_set[i]) {
                starts.push((md.variables[v].clone(), p.value.clone()));
            }
        }
        let mut inputs = Buffers::default();
        for i in &self.input_variables {
            inputs.add(&md.variables[*i]);
        }
        let mut outs = Buffers::default();
        for i in &self.output_variables {
            outs.add(&md.variables[*i]);
        }
        let zeros = |ports: &[PortInfo]| ports.iter().map(|p| Value::zero(p.ty)).collect::<Vec<_>>();
        self.ramp_from = zeros(&self.info.inputs);
        self.ramp_to = zeros(&self.info.inputs);
        self.interpolated = zeros(&self.info.inputs);
        let setup = Setup {
            fmu: self.fmu.clone(),
            instance_name: ctx.name.to_string(),
            co_simulation: self.info.param_value(INTERFACE).map_or("", Value::str) == "cs",
            solver: if self.info.param_value(SOLVER).map_or("", Value::str) == "euler" {
                Solver::Euler
            } else {
                Solver::Rk4
            },
            substeps: self.info.integer(SUBSTEPS) as usize,
            period: ctx.period,
            logging: self.info.boolean(LOGGING),
            starts,
        };
        let exchange = Box::new(Exchange {
            time: 0.0,
            inputs,
            outputs: outs,
            error: None,
            finish: false,
        });
        let (request_tx, request_rx) = bounded(1);
        let (reply_tx, reply_rx) = bounded(1);
        let thread = std::thread::Builder::new()
            .name(format!("morc-fmu-{}", ctx.name))
            .spawn(move || worker(setup, exchange, request_rx, reply_tx))
            .map_err(|e| format!("{}: cannot start its thread: {e}", self.fmu.label))?;
        self.thread = Some(thread);
        let ready = reply_rx
            .recv()
            .map_err(|_| format!("{}: its thread ended during initialisation", self.fmu.label))?;
        self.requests = Some(request_tx);
        self.replies = Some(reply_rx);
        match ready {
            Reply::Ready(Ok(exchange)) => {
                exchange.outputs.store(outputs);
                self.exchange = Some(exchange);
                Ok(())
            }
            Reply::Ready(Err(e)) => Err(e),
            _ => Err(format!("{}: unexpected reply from its thread", self.fmu.label)),
        }
    }

    fn step(&mut self, ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        let (Some(requests), Some(replies), Some(mut exchange)) = (&self.requests, &self.replies, self.exchange.take())
        else {
            return Step::Fault(format!("{}: not initialised", self.fmu.label));
        };
        // Linear interpolation: a new ramp every k steps, from where the last one ended to the newest sample.
        let mut any_interpolated = false;
        for (i, input) in inputs.iter().enumerate() {
            let k = u64::from(self.interpolation.get(i).copied().unwrap_or(1));
            if k < 2 {
                continue;
            }
            any_interpolated = true;
            let phase = ctx.step % k;
            if phase == 0 {
                let (from, to) = (&mut self.ramp_from[i], &mut self.ramp_to[i]);
                if ctx.step == 0 {
                    to.copy_from(input);
                }
                from.copy_from(to);
                to.copy_from(input);
            }
            let w = phase as f64 / k as f64;
            let (from, to) = (self.ramp_from[i].as_slice(), self.ramp_to[i].as_slice());
            for ((y, a), b) in self.interpolated[i].as_mut_slice().iter_mut().zip(from).zip(to) {
                *y = a + w * (b - a);
            }
        }
        if any_interpolated {
            for (i, input) in inputs.iter().enumerate() {
                if self.interpolation.get(i).copied().unwrap_or(1) < 2 {
                    self.interpolated[i].copy_from(input);
                }
            }
            exchange.inputs.load(&self.interpolated);
        } else {
            exchange.inputs.load(inputs);
        }
        exchange.time = ctx.time;
        if requests.send(Request::Step(exchange)).is_err() {
            return Step::Fault(format!("{}: its thread has ended", self.fmu.label));
        }
        let Ok(Reply::Stepped(mut exchange)) = replies.recv() else {
            return Step::Fault(format!("{}: its thread has ended", self.fmu.label));
        };
        exchange.outputs.store(outputs);
        let error = exchange.error.take();
        let finish = std::mem::take(&mut exchange.finish);
        self.exchange = Some(exchange);
        match error {
            Some(e) => Step::Fault(e),
            None if finish => Step::Finish(format!("{} asked to terminate the simulation", self.fmu.label)),
            None => Step::Continue,
        }
    }

    fn terminate(&mut self, results: &mut AssemblyResults) {
        if let (Some(requests), Some(replies)) = (self.requests.take(), self.replies.take()) {
            if requests.send(Request::Terminate).is_ok() {
                if let Ok(Reply::Terminated(Err(e))) = replies.recv() {
                    results.set("terminate_error", Value::String(e));
                }
            }
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for FmuComponent {
    fn drop(&mut self) {
        // Closing the channel ends the worker, which frees the instance on its own thread.
        self.requests = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The per-instance state the worker keeps for model exchange.
struct Integrator {
    solver: Solver,
    substeps: usize,
    x: Vec<f64>,
    /// Scratch: stage state and the four slopes.
    stage: Vec<f64>,
    k: [Vec<f64>; 4],
}

fn worker(setup: Setup, mut exchange: Box<Exchange>, requests: Receiver<Request>, replies: Sender<Reply>) {
    // Called synchronously from a real-time task: it must not wait behind everything else.
    crate::kernel::rt::apply_to_current_thread(crate::kernel::rt::worker_policy(), "FMU instance");
    let started = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| start(&setup, &mut exchange)));
    let (mut instance, mut integrator) = match started {
        Ok(Ok(state)) => state,
        Ok(Err(e)) => {
            let _ = replies.send(Reply::Ready(Err(e)));
            return;
        }
        Err(_) => {
            let _ = replies.send(Reply::Ready(Err(format!(
                "{}: internal error while initialising",
                setup.fmu.label
            ))));
            return;
        }
    };
    if replies.send(Reply::Ready(Ok(exchange))).is_err() {
        return;
    }
    let h = setup.period;
    let mut failed = false;
    while let Ok(request) = requests.recv() {
        match request {
            Request::Step(mut ex) => {
                if failed {
                    ex.error = Some(format!("{}: the FMU failed earlier", setup.fmu.label));
                } else if let Err(e) = step(&mut instance, integrator.as_mut(), &mut ex, h) {
                    failed = true;
                    ex.error = Some(e);
                }
                if replies.send(Reply::Stepped(ex)).is_err() {
                    return;
                }
            }
            Request::Terminate => {
                let result = if failed { Ok(()) } else { instance.terminate() };
                drop(instance);
                let _ = replies.send(Reply::Terminated(result));
                return;
            }
        }
    }
    integrator.take();
}

/// Instantiates and initialises; the exchange's outputs get the initial values.
fn start(setup: &Setup, exchange: &mut Exchange) -> Result<(fmi2::Instance, Option<Integrator>), String> {
    let fmu = &setup.fmu;
    let md = &fmu.description;
    let identifier = if setup.co_simulation {
        md.co_simulation.as_deref()
    } else {
        md.model_exchange.as_deref()
    };
    let binary = fmu.binary(identifier.unwrap_or_default())?;
    let api = fmi2::Api::load(&binary).map_err(|e| format!("{}: {e}", fmu.label))?;
    api.check(setup.co_simulation, &binary)
        .map_err(|e| format!("{}: {e}", fmu.label))?;
    let resources = format!("file://{}/resources", fmu.folder.display());
    let mut instance = fmi2::Instance::new(
        Arc::new(api),
        &fmu.label,
        &setup.instance_name,
        setup.co_simulation,
        &md.token,
        &resources,
        setup.logging,
    )?;
    instance.setup_experiment(0.0, None)?;
    // Start values of non-input parameters go in before initialisation mode (FMI 2: initial = exact).
    for (v, value) in &setup.starts {
        set_value(&mut instance, v, value)?;
    }
    instance.enter_initialization_mode()?;
    instance.exit_initialization_mode()?;
    let integrator = if setup.co_simulation {
        None
    } else {
        if instance.settle_discrete_states()? {
            return Err(format!(
                "{}: the FMU asked to terminate during initialisation",
                fmu.label
            ));
        }
        instance.enter_continuous_time_mode()?;
        let n = md.states.len();
        let mut x = vec![0.0; n];
        if n > 0 {
            instance.get_continuous_states(&mut x)?;
        }
        Some(Integrator {
            solver: setup.solver,
            substeps: setup.substeps,
            x,
            stage: vec![0.0; n],
            k: [vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]],
        })
    };
    read_outputs(&mut instance, &mut exchange.outputs)?;
    Ok((instance, integrator))
}

fn set_value(instance: &mut fmi2::Instance, v: &Variable, value: &Value) -> Result<(), String> {
    let vr = [v.value_reference];
    match group(v.ty) {
        Group::Real => instance.set_real(&vr, &[value.real()]),
        Group::Integer => instance.set_integer(&vr, &[value.integer() as c_int]),
        Group::Boolean => instance.set_boolean(&vr, &[c_int::from(value.boolean())]),
        Group::String => instance.set_string(&vr, &[value.str().to_string()]),
    }
    .map_err(|e| format!("{e} (setting {})", v.name))
}

#[inline]
fn read_outputs(instance: &mut fmi2::Instance, out: &mut Buffers) -> Result<(), String> {
    instance.get_real(&out.real_vrs, &mut out.real)?;
    instance.get_integer(&out.integer_vrs, &mut out.integer)?;
    instance.get_boolean(&out.boolean_vrs, &mut out.boolean)?;
    instance.get_string(&out.string_vrs, &mut out.string_pointers, &mut out.string)?;
    if let Some(i) = out.real.iter().position(|x| !x.is_finite()) {
        return Err(format!(
            "{}: output with value reference {} is {} (non-finite)",
            instance.label,
            out.real_vrs.get(i).copied().unwrap_or(0),
            out.real[i]
        ));
    }
    Ok(())
}

/// One sample period on the worker thread.
#[inline]
fn step(
    instance: &mut fmi2::Instance,
    integrator: Option<&mut Integrator>,
    ex: &mut Exchange,
    h: f64,
) -> Result<(), String> {
    let inputs = &ex.inputs;
    instance.set_real(&inputs.real_vrs, &inputs.real)?;
    instance.set_integer(&inputs.integer_vrs, &inputs.integer)?;
    instance.set_boolean(&inputs.boolean_vrs, &inputs.boolean)?;
    if !inputs.string_vrs.is_empty() {
        instance.set_string(&inputs.string_vrs, &inputs.string)?;
    }
    match integrator {
        None => instance.do_step(ex.time, h)?,
        Some(integrator) => ex.finish = integrate(instance, integrator, ex.time, h)?,
    }
    read_outputs(instance, &mut ex.outputs)
}

/// Model exchange over [t, t + h]: fixed-step explicit Euler or RK4.
fn integrate(instance: &mut fmi2::Instance, s: &mut Integrator, t0: f64, h: f64) -> Result<bool, String> {
    let n = s.x.len();
    let dt = h / s.substeps as f64;
    for j in 0..s.substeps {
        let t = t0 + j as f64 * dt;
        if n > 0 {
            let Integrator {
                solver, x, stage, k, ..
            } = &mut *s;
            instance.set_time(t)?;
            instance.set_continuous_states(x)?;
            instance.get_derivatives(&mut k[0])?;
            match solver {
                Solver::Euler => x.iter_mut().zip(&k[0]).for_each(|(x, d)| *x += dt * d),
                Solver::Rk4 => {
                    // Stages at t + dt/2, t + dt/2, t + dt from the previous slope.
                    for (stage_index, fraction) in [(1, 0.5), (2, 0.5), (3, 1.0)] {
                        for i in 0..n {
                            stage[i] = x[i] + fraction * dt * k[stage_index - 1][i];
                        }
                        instance.set_time(t + fraction * dt)?;
                        instance.set_continuous_states(stage)?;
                        instance.get_derivatives(&mut k[stage_index])?;
                    }
                    for i in 0..n {
                        x[i] += dt / 6.0 * (k[0][i] + 2.0 * k[1][i] + 2.0 * k[2][i] + k[3][i]);
                    }
                }
            }
        }
        let t_end = t0 + (j + 1) as f64 * dt;
        instance.set_time(t_end)?;
        if n > 0 {
            instance.set_continuous_states(&s.x)?;
        }
        let (event, terminate) = instance.completed_integrator_step()?;
        if terminate {
            return Ok(true);
        }
        if event {
            instance.enter_event_mode()?;
            if instance.settle_discrete_states()? {
                return Ok(true);
            }
            instance.enter_continuous_time_mode()?;
            if n > 0 {
                instance.get_continuous_states(&mut s.x)?;
            }
        }
    }
    Ok(false)
}
