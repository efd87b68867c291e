//! An FMU as a morc component.
//!
//! The instance is made and initialised in `initialize` (on the thread that
//! prepares the assembly, before it may be swapped in) and stepped directly
//! on the thread that steps the component: FMI only asks that calls into one
//! instance never overlap, which owning it guarantees (see `instance.rs`).
//!
//! Time: step k calls doStep(t0 + k·h, h) (co-simulation) or integrates from t0 + k·h
//! to t0 + (k+1)·h (model exchange, explicit Euler or RK4 with sub-steps, inputs
//! held over the step); the outputs after it are the step's outputs. t0 is the
//! parameter `start_time` (0 in an assembly; `morc fmu sim` gives the default
//! experiment's startTime, as FMPy does).
//!
//! Inputs: an input nothing is connected to holds its declared start value (not
//! zero: an enumeration may have no legal 0, a string input its text); the
//! inputs' first values are set in initialisation mode, as FMPy does.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::archive::{extract_cached, Limits};
use super::description::{parse, parse_real, Causality, FmiVersion, ModelDescription, Variable};
use super::instance::{instantiate, Instance, Interface};
use super::solver::{EventMode, Method, Options, Solver};
use super::values::{port_type, Values};
use super::FmiError;
use morc_kernel::Factory;
use morc_kernel::*;
use morc_kernel::{Value, ValueType};

/// An FMU file, extracted and described: shared by all its instances.
pub struct Fmu {
    /// The FMU file as given.
    pub path: PathBuf,
    /// The extraction folder in the cache.
    pub folder: PathBuf,
    /// The parsed modelDescription.xml.
    pub description: ModelDescription,
    /// How messages name it: the file name.
    pub label: String,
}

impl Fmu {
    /// Extracts (once, into the cache) and reads the model description.
    pub fn open(path: &Path) -> Result<Arc<Fmu>, FmiError> {
        let label = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
        let folder = extract_cached(path, &Limits::default())?;
        let xml_path = folder.join("modelDescription.xml");
        let xml = std::fs::read_to_string(&xml_path).map_err(|e| FmiError::Archive(format!("{label}: not an FMU: it has no readable modelDescription.xml ({e})")))?;
        let description = parse(&xml).map_err(|e| e.prefixed(&label))?;
        Ok(Arc::new(Fmu { path: path.to_path_buf(), folder, description, label }))
    }

    /// The shared library for `model_identifier` on this platform.
    pub fn binary(&self, model_identifier: &str) -> Result<PathBuf, FmiError> {
        let platform = match self.description.version {
            FmiVersion::V2 => super::export::platform_folder(),
            FmiVersion::V3 => super::export::platform_tuple(),
        }
        .unwrap_or("unknown");
        let file = format!("{model_identifier}{}", std::env::consts::DLL_SUFFIX);
        let path = self.folder.join("binaries").join(platform).join(&file);
        if path.is_file() {
            return Ok(path);
        }
        let mut found: Vec<String> = std::fs::read_dir(self.folder.join("binaries"))
            .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        found.sort();
        Err(FmiError::Binary(format!(
            "{}: no binary for this platform: binaries/{platform}/{file} is missing (the FMU has binaries for: {}){}",
            self.label,
            if found.is_empty() { "none".to_string() } else { found.join(", ") },
            if self.folder.join("sources").is_dir() { "; it ships sources, which morc does not compile" } else { "" }
        )))
    }
}

/// A factory that makes instances of the FMU at `path` (opened once, now).
pub fn factory(path: &Path) -> Result<Factory, FmiError> {
    let fmu = Fmu::open(path)?;
    Ok(Arc::new(move || Ok(Box::new(FmuComponent::new(fmu.clone())) as Box<dyn Component>)))
}

/// Our own parameters, beside the FMU's (an FMU variable of the same name wins).
pub const INTERFACE: &str = "interface";
pub const SOLVER: &str = "me_solver";
pub const SUBSTEPS: &str = "me_substeps";
pub const EVENTS: &str = "me_events";
pub const LOGGING: &str = "fmu_logging";
/// The FMU's time at the component's t = 0 (s): our parameter `start_time`.
pub const START_TIME: &str = "start_time";

/// A running instance and what its steps need, all allocated at initialisation.
struct Running {
    instance: Box<dyn Instance>,
    inputs: Values,
    outputs: Values,
    /// Model exchange: the solver; co-simulation: None.
    solver: Option<Solver>,
    /// An FMU call failed: the instance may not be called again but to free it.
    failed: bool,
    /// The FMU ended the simulation itself at this time (FMU time).
    ended_at: Option<f64>,
}

/// An FMU instance as a morc component: its variables as ports and parameters, stepped by co-simulation or by a solver over model exchange.
pub struct FmuComponent {
    fmu: Arc<Fmu>,
    info: ComponentInfo,
    /// info.params[i] is FMU variable param_variables[i] (None: one of ours).
    param_variables: Vec<Option<usize>>,
    /// Parameters the user set (only these are passed to the FMU).
    user_set: Vec<bool>,
    input_variables: Vec<usize>,
    output_variables: Vec<usize>,
    running: Option<Running>,
    period: f64,
    /// The inputs' values in initialisation mode (None: their start values).
    initial_inputs: Option<Vec<Value>>,
    /// The FMU's time at t = 0 (the parameter, read at initialisation).
    start_time: f64,
}

/// A variable's start value as a morc value of port type `ty`.
pub fn start_value(v: &Variable, ty: ValueType) -> Value {
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
        // No FMI variable has one (port_type never gives them).
        ValueType::List | ValueType::Record => Value::zero(ty),
    }
}

/// A parameter's value of type `ty` written as text, as `--param NAME=VALUE` gives it:
/// numbers as FMI writes them, booleans `true`/`false`/`1`/`0`, vectors space-separated;
/// None for text that is none of these, and for lists and records.
pub fn value_from_text(ty: ValueType, text: &str) -> Option<Value> {
    Some(match ty {
        ValueType::Real => Value::Real(parse_real(text)?),
        ValueType::Integer => Value::Integer(text.trim().parse().ok()?),
        ValueType::Boolean => Value::Boolean(match text.trim() {
            "true" | "True" | "1" => true,
            "false" | "False" | "0" => false,
            _ => return None,
        }),
        ValueType::String => Value::String(text.to_string()),
        ValueType::Vector(_) => Value::Vector(text.split_whitespace().map(parse_real).collect::<Option<_>>()?),
        // An FMU has no list or record parameters; nor has a text form been defined for them.
        ValueType::List | ValueType::Record => return None,
    })
}

impl FmuComponent {
    /// A component of `fmu`, not yet instantiated (that happens at initialisation).
    pub fn new(fmu: Arc<Fmu>) -> Self {
        let md = &fmu.description;
        let mut info = ComponentInfo::new(&md.model_name, &md.description);
        let (mut param_variables, mut input_variables, mut output_variables) = (Vec::new(), Vec::new(), Vec::new());
        for (i, v) in md.variables.iter().enumerate() {
            let Some(ty) = port_type(v) else { continue };
            match v.causality {
                Causality::Input => {
                    info.inputs.push(PortInfo::new(&v.name, ty).unit(&v.unit).doc(&v.description).start(start_value(v, ty)));
                    input_variables.push(i);
                }
                Causality::Output => {
                    info.outputs.push(PortInfo::new(&v.name, ty).unit(&v.unit).doc(&v.description));
                    output_variables.push(i);
                }
                _ => {}
            }
            if settable_start(v) {
                info.params.push(ParamInfo::new(&v.name, start_value(v, ty)).unit(&v.unit).doc(&v.description));
                param_variables.push(Some(i));
            }
        }
        let default_interface = if md.co_simulation.is_some() { "cs" } else { "me" };
        let ours = [
            ParamInfo::new(INTERFACE, Value::String(default_interface.into())).doc("\"cs\" (co-simulation: the FMU's own solver) or \"me\" (model exchange: morc's solver)"),
            ParamInfo::new(SOLVER, Value::String("rk4".into())).doc("model exchange: \"euler\" or \"rk4\""),
            ParamInfo::new(SUBSTEPS, Value::Integer(1)).doc("model exchange: solver steps per sample period"),
            ParamInfo::new(EVENTS, Value::String("locate".into())).doc("model exchange: \"locate\" (state events located inside the step) or \"step_end\" (at the end of the step, as FMPy's Euler)"),
            ParamInfo::new(LOGGING, Value::Boolean(false)).doc("ask the FMU for debug logging"),
            ParamInfo::new(START_TIME, Value::Real(0.0)).unit("s").doc("the FMU's time at the component's t = 0"),
        ];
        for p in ours {
            if info.params.iter().all(|q| q.name != p.name) {
                info.params.push(p);
                param_variables.push(None);
            }
        }
        let user_set = vec![false; info.params.len()];
        FmuComponent { fmu, info, param_variables, user_set, input_variables, output_variables, running: None, period: 0.0, initial_inputs: None, start_time: 0.0 }
    }

    /// The inputs' values for initialisation mode (one per input port, in port order),
    /// instead of their start values: `morc fmu sim` gives its input table at the start time.
    pub fn set_initial_inputs(&mut self, values: Vec<Value>) {
        self.initial_inputs = Some(values);
    }

    /// When the FMU ended the simulation itself: its time then (FMU time, s).
    pub fn ended_at(&self) -> Option<f64> {
        self.running.as_ref().and_then(|r| r.ended_at)
    }

    /// The FMU it instantiates.
    pub fn fmu(&self) -> &Fmu {
        &self.fmu
    }

    fn label(&self) -> &str {
        &self.fmu.label
    }

    fn interface(&self) -> Interface {
        if self.info.param_value(INTERFACE).map_or("", Value::str) == "me" {
            Interface::ModelExchange
        } else {
            Interface::CoSimulation
        }
    }

    /// Instantiates, sets the user's parameters, initialises; returns the running instance.
    fn start(&self, name: &str) -> Result<Running, FmiError> {
        let md = &self.fmu.description;
        let interface = self.interface();
        let mut instance = instantiate(&self.fmu, interface, name, self.info.boolean(LOGGING))?;
        // Parameters and start values go in before initialisation mode (initial = exact).
        for (i, p) in self.info.params.iter().enumerate() {
            if let (Some(v), true) = (self.param_variables[i], self.user_set[i]) {
                let variable = &md.variables[v];
                let mut one = Values::new([variable], md.version);
                one.load(std::slice::from_ref(&p.value));
                for g in &one.groups {
                    instance.set(g).map_err(|e| e.suffixed(&format!(" (setting {})", variable.name)))?;
                }
            }
        }
        instance.enter_initialization_mode(self.start_time())?;
        let mut inputs = Values::new(self.input_variables.iter().map(|&i| &md.variables[i]), md.version);
        let initial: Vec<Value> = match &self.initial_inputs {
            Some(values) => values.clone(),
            None => self.info.inputs.iter().map(PortInfo::initial_value).collect(),
        };
        inputs.load(&initial);
        for g in &inputs.groups {
            instance.set(g).map_err(|e| e.suffixed(" (setting the inputs in initialisation mode)"))?;
        }
        instance.exit_initialization_mode()?;
        let solver = match interface {
            Interface::CoSimulation => None,
            Interface::ModelExchange => {
                let method = Method::parse(self.info.param_value(SOLVER).map_or("", Value::str)).unwrap_or(Method::Rk4);
                let events = EventMode::parse(self.info.param_value(EVENTS).map_or("", Value::str)).unwrap_or(EventMode::Locate);
                let options = Options { method, substeps: self.info.integer(SUBSTEPS) as usize, events };
                Some(Solver::start(&mut *instance, &self.fmu, &self.input_variables, &initial, options)?)
            }
        };
        let variables = |indices: &[usize]| indices.iter().map(|&i| &md.variables[i]).collect::<Vec<_>>();
        Ok(Running {
            instance,
            // Model exchange: the solver sets the inputs (discrete ones in event mode).
            inputs: if solver.is_some() { Values::default() } else { inputs },
            outputs: Values::new(variables(&self.output_variables), md.version),
            solver,
            failed: false,
            ended_at: None,
        })
    }

    fn start_time(&self) -> f64 {
        self.info.param_value(START_TIME).map_or(0.0, Value::real)
    }

    /// Changes a tunable parameter (causality parameter, variability tunable) while the FMU
    /// runs, between two steps: co-simulation sets it in step mode, model exchange in event
    /// mode at `t` (the run time the last step ended at), followed by the event iteration, as
    /// FMI 2.0 and 3.0 ask. Before initialisation it is [`Component::set_parameter`]. A fixed
    /// parameter is refused while running: it is set before initialisation only.
    pub fn set_tunable(&mut self, name: &str, value: &Value, t: f64) -> Result<(), String> {
        let Some(i) = self.info.params.iter().position(|p| p.name == name) else {
            return self.set_parameter(name, value);
        };
        if self.running.is_none() {
            return self.set_parameter(name, value);
        }
        let fmu = self.fmu.clone();
        let md = &fmu.description;
        let label = &fmu.label;
        let Some(variable) = self.param_variables[i].map(|v| &md.variables[v]) else {
            return Err(format!("{label}: '{name}' is set before the FMU starts only"));
        };
        if variable.causality != Causality::Parameter || variable.variability != "tunable" {
            let what = if variable.causality == Causality::Parameter { format!("a {} parameter", variable.variability) } else { "a start value".to_string() };
            return Err(format!("{label}: '{name}' is {what}: it is set before the FMU starts only (only tunable parameters change while it runs)"));
        }
        let mut one = Values::new([variable], md.version);
        let previous = self.info.params[i].value.clone();
        self.set_parameter(name, value)?;
        one.load(std::slice::from_ref(&self.info.params[i].value));
        let start_time = self.start_time;
        let Some(running) = self.running.as_mut() else { return Ok(()) };
        if running.failed {
            return Err(format!("{label}: the FMU failed earlier"));
        }
        let applied = match &mut running.solver {
            None => one.groups.iter().try_for_each(|g| running.instance.set(g)),
            Some(solver) => solver.set_in_event_mode(&mut *running.instance, &one, start_time + t).map(|terminate| {
                if terminate {
                    running.ended_at = Some(start_time + t);
                }
            }),
        };
        applied.map_err(|e| {
            let _ = self.info.set_param(name, &previous);
            format!("{label}: setting {name}: {e}")
        })
    }
}

/// Whether a variable's start value may be given before initialisation: parameters, and
/// states and other variables with an exact or approximate start (FMPy's start values).
fn settable_start(v: &Variable) -> bool {
    if v.variability == "constant" || port_type(v).is_none() {
        return false;
    }
    match v.causality {
        Causality::Parameter => true,
        Causality::Local | Causality::Output => v.start.is_some() && v.initial.as_deref() != Some("calculated"),
        _ => false,
    }
}

impl Running {
    #[inline]
    fn read_outputs(&mut self, label: &str) -> Result<(), FmiError> {
        for g in &mut self.outputs.groups {
            self.instance.get(g)?;
            if let Some((vr, x)) = g.non_finite() {
                return Err(FmiError::Behaviour(format!("{label}: output with value reference {vr} is {x} (non-finite)")));
            }
        }
        Ok(())
    }

    /// One sample period: inputs in, step or integrate, outputs out. True when the FMU ended
    /// the simulation (its time then in `ended_at`).
    #[inline]
    fn step(&mut self, label: &str, inputs: &[Value], t: f64, h: f64) -> Result<bool, FmiError> {
        self.inputs.load(inputs);
        for g in &self.inputs.groups {
            self.instance.set(g)?;
        }
        self.ended_at = match &mut self.solver {
            None => self.instance.do_step(t, h)?,
            Some(solver) => solver.advance(&mut *self.instance, inputs, t, h)?.then_some(t + h),
        };
        self.read_outputs(label)?;
        Ok(self.ended_at.is_some())
    }
}

impl Component for FmuComponent {
    morc_kernel::component_info!(info);

    fn set_parameter(&mut self, name: &str, value: &Value) -> Result<(), String> {
        let Some(i) = self.info.params.iter().position(|p| p.name == name) else {
            let known: Vec<&str> = self.info.params.iter().map(|p| p.name.as_str()).collect();
            return Err(morc_kernel::names::unknown("parameter", name, &format!("of the FMU {}", self.fmu.label), &known));
        };
        // Exact types only for FMU variables: a silent conversion would hide a wrong model.
        let expected = self.info.params[i].value.ty();
        let ok = match (expected, value) {
            (ValueType::Real, Value::Real(_) | Value::Integer(_)) => true,
            (ValueType::Vector(n), Value::Vector(v)) => v.len() == n,
            (t, v) => t == v.ty() || (t == ValueType::Integer && matches!(v, Value::Real(x) if x.fract() == 0.0)),
        };
        if !ok {
            return Err(format!("{}: parameter '{name}' is {expected}, got {} ({value})", self.fmu.label, value.ty()));
        }
        self.info.set_param(name, value).map_err(|e| format!("{}: {e}", self.fmu.label))?;
        self.user_set[i] = true;
        Ok(())
    }

    fn configure(&mut self) -> Result<(), String> {
        let interface = self.info.param_value(INTERFACE).map_or("", Value::str).to_string();
        let md = &self.fmu.description;
        if md.co_simulation.is_none() && md.model_exchange.is_none() {
            let what = if md.scheduled_execution.is_some() { "only scheduled execution (FMI 3 clocks)" } else { "no interface morc knows" };
            return Err(format!(
                "{}: the FMU offers {what}; morc runs co-simulation and model exchange, not scheduled execution yet: export the model with a co-simulation or model-exchange interface",
                self.label()
            ));
        }
        let missing = |name: &str, other: &str| format!("{}: the FMU has no {name} interface; it offers {} (interface = \"{other}\")", self.label(), md.interfaces());
        match interface.as_str() {
            "cs" if md.co_simulation.is_none() => return Err(missing("co-simulation", "me")),
            "me" if md.model_exchange.is_none() => return Err(missing("model-exchange", "cs")),
            "cs" | "me" => {}
            other => return Err(format!("{}: parameter interface must be \"cs\" or \"me\", got {other:?}", self.label())),
        }
        let start_time = self.start_time();
        if !start_time.is_finite() {
            return Err(format!("{}: parameter {START_TIME} must be a finite time in s, got {start_time}", self.label()));
        }
        let solver = self.info.param_value(SOLVER).map_or("", Value::str);
        if Method::parse(solver).is_none() {
            return Err(format!("{}: parameter {SOLVER} must be \"euler\" or \"rk4\", got {solver:?}", self.label()));
        }
        let events = self.info.param_value(EVENTS).map_or("", Value::str);
        if EventMode::parse(events).is_none() {
            return Err(format!("{}: parameter {EVENTS} must be \"locate\" or \"step_end\", got {events:?}", self.label()));
        }
        let substeps = self.info.integer(SUBSTEPS);
        if !(1..=10_000).contains(&substeps) {
            return Err(format!("{}: parameter {SUBSTEPS} must be between 1 and 10000, got {substeps}", self.label()));
        }
        Ok(())
    }

    fn initialize(&mut self, ctx: &InitContext, outputs: &mut [Value]) -> Result<(), String> {
        self.period = ctx.period;
        self.start_time = self.start_time();
        self.running = None;
        let mut running = self.start(ctx.name)?;
        running.read_outputs(self.label())?;
        running.outputs.store(outputs);
        self.running = Some(running);
        Ok(())
    }

    fn step(&mut self, ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        let Some(running) = &mut self.running else {
            return Step::Fault(format!("{}: not initialised", self.fmu.label));
        };
        if running.failed {
            return Step::Fault(format!("{}: the FMU failed earlier", self.fmu.label));
        }
        let t = self.start_time + ctx.time;
        match running.step(&self.fmu.label, inputs, t, self.period) {
            Ok(finish) => {
                running.outputs.store(outputs);
                if finish {
                    Step::Finish(format!("{} ended the simulation at t = {} s", self.fmu.label, running.ended_at.unwrap_or(t)))
                } else {
                    Step::Continue
                }
            }
            Err(e) => {
                running.failed = true;
                Step::Fault(e.into())
            }
        }
    }

    fn terminate(&mut self, results: &mut AssemblyResults) {
        if let Some(mut running) = self.running.take() {
            if !running.failed {
                if let Err(e) = running.instance.terminate() {
                    results.set("terminate_error", Value::String(e.into()));
                }
            }
        }
    }
}
