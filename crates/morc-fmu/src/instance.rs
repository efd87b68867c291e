//! One instance of an exported morc block, whatever the FMI version that
//! drives it: FMI's state machine, the variable table, co-simulation steps
//! and the model-exchange view of ODE blocks. `fmi2.rs` and `fmi3.rs` only
//! translate C calls into these methods.

use std::ffi::{c_char, c_int, c_void, CString};
use std::ptr;

use morc_fmi::description::FmiVersion;
use morc_fmi::export::{self, ExportVariable, ExportedBlock, Role};
use morc_kernel::AssemblyData;
use morc_kernel::{Component, InitContext, Step, StepContext};
use morc_kernel::{Value, ValueType};

pub type Status = c_int;
pub const OK: Status = 0;
pub const DISCARD: Status = 2;
pub const ERROR: Status = 3;
pub const FATAL: Status = 4;

/// The FMI 2 logger: printf-style and variadic, so messages go through as literal formats.
pub type Fmi2Logger = Option<unsafe extern "C" fn(*mut c_void, *const c_char, Status, *const c_char, *const c_char, ...)>;
/// The FMI 3 logger: plain text.
pub type Fmi3Logger = Option<unsafe extern "C" fn(*mut c_void, Status, *const c_char, *const c_char)>;

/// Where log messages go.
#[derive(Clone, Copy)]
pub enum Logger {
    Fmi2(Fmi2Logger),
    Fmi3(Fmi3Logger),
}

/// Co-simulation (the block steps itself) or model exchange (the importer integrates it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interface {
    CoSimulation,
    ModelExchange,
}

/// Where the instance is in FMI's state machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Instantiated,
    Initialization,
    /// Co-simulation step mode, or model exchange's event and continuous-time modes.
    Running,
    Terminated,
    /// After an error: only get, reset, terminate and free are allowed.
    Failed,
}

pub struct Model {
    pub block: &'static ExportedBlock,
    pub interface: Interface,
    name: CString,
    logger: Logger,
    environment: *mut c_void,
    pub logging_on: bool,
    pub phase: Phase,
    component: Box<dyn Component>,
    variables: Vec<ExportVariable>,
    pub sample_period: f64,
    inputs: Vec<Value>,
    outputs: Vec<Value>,
    /// Steps made so far: the block's time is steps · sample_period.
    pub steps: u64,
    /// The block asked to end the simulation (Step::Finish).
    pub finished: bool,
    /// Strings handed out by a getter stay valid until the next call.
    returned_strings: Vec<CString>,
    /// Model exchange: the time the importer set, and scratch for derivatives.
    time: f64,
    derivatives: Vec<f64>,
}

/// A message as a printf format that prints it literally: the FMI 2 logger
/// is printf-style, and passing the text itself (not "%s" plus an argument)
/// reads well in importers that do not format (FMPy prints the raw text).
fn printf_literal(message: &str) -> CString {
    CString::new(message.replace('\0', " ").replace('%', "%%")).unwrap_or_default()
}

/// Logs through `logger` before an instance exists (instantiation errors).
pub fn log_to(logger: Logger, environment: *mut c_void, name: &CString, status: Status, category: &str, message: &str) {
    let category = CString::new(category).unwrap_or_default();
    match logger {
        Logger::Fmi2(Some(f)) => {
            let message = printf_literal(message);
            // SAFETY: the importer gave a valid logger; the message has no conversions, so no arguments.
            unsafe { f(environment, name.as_ptr(), status, category.as_ptr(), message.as_ptr()) }
        }
        Logger::Fmi3(Some(f)) => {
            let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
            // SAFETY: `f` is the importer's non-null logMessage callback, called with its own instanceEnvironment;
            // `category` and `message` are NUL-terminated CStrings alive for the call.
            unsafe { f(environment, status, category.as_ptr(), message.as_ptr()) }
        }
        _ => {}
    }
}

/// Finds the model whose description (of `version`) has `token` as GUID or instantiation token.
pub fn find_model(token: &str, version: FmiVersion) -> Option<&'static ExportedBlock> {
    export::EXPORTED.iter().find(|block| export::model_description(block, version).is_ok_and(|(_, t)| t == token))
}

impl Model {
    #[allow(clippy::too_many_arguments)]
    pub fn new(block: &'static ExportedBlock, version: FmiVersion, interface: Interface, name: CString, logger: Logger, environment: *mut c_void, logging_on: bool) -> Result<Model, String> {
        let mut component = export::instantiate(block)?;
        if interface == Interface::ModelExchange && component.ode().is_none() {
            return Err(format!("{} supports co-simulation only", block.model_identifier));
        }
        let variables = export::variables(&mut *component, version);
        let info = component.info();
        Ok(Model {
            block,
            interface,
            name,
            logger,
            environment,
            logging_on,
            phase: Phase::Instantiated,
            inputs: info.inputs.iter().map(|p| Value::zero(p.ty)).collect(),
            outputs: info.outputs.iter().map(|p| Value::zero(p.ty)).collect(),
            variables,
            component,
            sample_period: export::DEFAULT_SAMPLE_PERIOD,
            steps: 0,
            finished: false,
            returned_strings: Vec::new(),
            time: 0.0,
            derivatives: Vec::new(),
        })
    }

    pub fn log(&self, status: Status, category: &str, message: &str) {
        if status == OK && !self.logging_on {
            return;
        }
        log_to(self.logger, self.environment, &self.name, status, category, message);
    }

    /// Logs an error and returns the error status.
    pub fn error(&mut self, message: &str) -> Status {
        self.log(ERROR, "logStatusError", message);
        ERROR
    }

    pub fn check_phase(&mut self, call: &str, allowed: &[Phase]) -> Result<(), Status> {
        if allowed.contains(&self.phase) {
            Ok(())
        } else {
            let phase = self.phase;
            Err(self.error(&format!("{call} is not allowed in phase {phase:?}")))
        }
    }

    pub fn check_interface(&mut self, call: &str, interface: Interface) -> Result<(), Status> {
        if self.interface == interface {
            Ok(())
        } else {
            let what = self.interface;
            Err(self.error(&format!("{call} is not available: this instance is {what:?}")))
        }
    }

    /// Frees strings handed out earlier (a getter's strings live until the next call).
    pub fn forget_strings(&mut self) {
        self.returned_strings.clear();
    }

    /// Keeps `s` alive until the next step and returns a pointer to it.
    pub fn lend_string(&mut self, s: &str) -> *const c_char {
        self.returned_strings.push(CString::new(s.replace('\0', " ")).unwrap_or_default());
        self.returned_strings.last().map_or(ptr::null(), |s| s.as_ptr())
    }

    /// The role and type of variable `vr` (steps call this: no copies).
    fn variable(&mut self, vr: u32) -> Result<(Role, ValueType), Status> {
        match self.variables.get(vr as usize) {
            Some(v) => Ok((v.role, v.ty)),
            None => {
                let n = self.variables.len();
                Err(self.error(&format!("unknown value reference {vr} (this model has 0..{n})")))
            }
        }
    }

    pub fn get(&mut self, vr: u32, ty: ValueType) -> Result<Value, Status> {
        if self.phase == Phase::Instantiated {
            return Err(self.error("getting values is not allowed before initialisation mode"));
        }
        let (role, vty) = self.variable(vr)?;
        if vty != ty {
            let name = self.variables[vr as usize].name.clone();
            return Err(self.error(&format!("variable {name} (vr {vr}) is {vty}, not {ty}")));
        }
        Ok(match role {
            Role::Input(i) => self.inputs[i].clone(),
            Role::Output(i) => self.outputs[i].clone(),
            Role::Parameter(i) => self.component.info().params[i].value.clone(),
            Role::SamplePeriod => Value::Real(self.sample_period),
            Role::Time if self.interface == Interface::ModelExchange => Value::Real(self.time),
            Role::Time => Value::Real(self.steps as f64 * self.sample_period),
            Role::Derivative(k) => {
                self.compute_derivatives();
                Value::Real(self.derivatives.get(k).copied().unwrap_or(0.0))
            }
        })
    }

    pub fn set(&mut self, vr: u32, value: Value) -> Result<(), Status> {
        if matches!(self.phase, Phase::Terminated | Phase::Failed) {
            return Err(self.error("setting values is not allowed after termination or an error"));
        }
        let (role, vty) = self.variable(vr)?;
        let name = || self.variables[vr as usize].name.clone();
        if vty != value.ty() {
            return Err(self.error(&format!("variable {} (vr {vr}) is {vty}, not {}", name(), value.ty())));
        }
        let fixed = !matches!(self.phase, Phase::Instantiated | Phase::Initialization);
        match role {
            Role::Input(i) => {
                self.inputs[i].copy_from(&value);
                Ok(())
            }
            Role::Parameter(_) | Role::SamplePeriod if fixed => Err(self.error(&format!("parameter {} is fixed: set it before initialisation ends", name()))),
            Role::Parameter(_) => {
                let name = name();
                self.component.set_parameter(&name, &value).map_err(|e| self.error(&e))
            }
            Role::SamplePeriod => {
                let h = value.real();
                if !(h.is_finite() && h > 0.0) {
                    return Err(self.error(&format!("{} must be a positive number of seconds, got {h}", name())));
                }
                self.sample_period = h;
                Ok(())
            }
            Role::Output(_) | Role::Time | Role::Derivative(_) => Err(self.error(&format!("variable {} is calculated and cannot be set", name()))),
        }
    }

    pub fn enter_initialization(&mut self, call: &str, start_time: f64) -> Status {
        if let Err(s) = self.check_phase(call, &[Phase::Instantiated]) {
            return s;
        }
        if start_time != 0.0 {
            return self.error(&format!("start time {start_time}: morc blocks start at t = 0"));
        }
        self.phase = Phase::Initialization;
        OK
    }

    pub fn exit_initialization(&mut self, call: &str) -> Status {
        if let Err(s) = self.check_phase(call, &[Phase::Initialization]) {
            return s;
        }
        if let Err(e) = self.component.configure() {
            self.phase = Phase::Failed;
            return self.error(&e);
        }
        let data = AssemblyData::new();
        let name = self.name.to_string_lossy().into_owned();
        let ctx = InitContext { name: &name, period: self.sample_period, base_period: self.sample_period, data: &data, thread: &Default::default(), base_latency: 0 };
        if let Err(e) = self.component.initialize(&ctx, &mut self.outputs) {
            self.phase = Phase::Failed;
            return self.error(&e);
        }
        let states = self.component.ode().map_or(0, |o| o.state_count());
        self.derivatives = vec![0.0; states];
        self.phase = Phase::Running;
        OK
    }

    pub fn terminate(&mut self, call: &str) -> Status {
        if let Err(s) = self.check_phase(call, &[Phase::Running, Phase::Failed]) {
            return s;
        }
        self.phase = Phase::Terminated;
        OK
    }

    /// Back to the instantiated state with default parameters.
    pub fn reset(&mut self) -> Status {
        match export::instantiate(self.block) {
            Ok(component) => {
                self.component = component;
                self.inputs.iter_mut().for_each(|v| *v = Value::zero(v.ty()));
                self.outputs.iter_mut().for_each(|v| *v = Value::zero(v.ty()));
                self.sample_period = export::DEFAULT_SAMPLE_PERIOD;
                self.steps = 0;
                self.finished = false;
                self.time = 0.0;
                self.phase = Phase::Instantiated;
                OK
            }
            Err(e) => self.error(&e.to_string()),
        }
    }

    /// Co-simulation: the block's steps from `current` over `size` (whole sample periods).
    pub fn do_step(&mut self, call: &str, current: f64, size: f64) -> Status {
        if let Err(s) = self.check_interface(call, Interface::CoSimulation).and_then(|_| self.check_phase(call, &[Phase::Running])) {
            return s;
        }
        self.forget_strings();
        let h = self.sample_period;
        let expected = self.steps as f64 * h;
        // The importer's time is a running sum: allow its rounding, not a skipped step.
        if (current - expected).abs() > 1e-6 * h.max(expected.abs() * 1e-9) + 1e-9 * h {
            return self.error(&format!("doStep at t = {current} s, but the block is at t = {expected} s (step {} of {h} s)", self.steps));
        }
        let ratio = size / h;
        let count = ratio.round();
        if !(count >= 1.0 && (ratio - count).abs() < 1e-6) {
            return self.error(&format!("doStep of {size} s is not a whole number of sample periods ({h} s); set {} or use steps of k·{h} s", export::SAMPLE_PERIOD));
        }
        for _ in 0..count as u64 {
            let ctx = StepContext { step: self.steps, time: self.steps as f64 * h, period: h };
            match self.component.step(&ctx, &self.inputs, &mut self.outputs) {
                Step::Continue => {}
                Step::Finish(reason) => {
                    self.finished = true;
                    self.log(OK, "logEvents", &format!("the block finished: {reason}"));
                }
                Step::Fault(reason) => {
                    self.phase = Phase::Failed;
                    return self.error(&format!("step {} failed: {reason}", self.steps));
                }
            }
            self.steps += 1;
        }
        OK
    }

    // Model exchange: the importer owns time and state; the block is an ODE.

    /// Checks a model-exchange call; Ok with the number of states.
    pub fn model_exchange(&mut self, call: &str) -> Result<usize, Status> {
        self.check_interface(call, Interface::ModelExchange)?;
        self.check_phase(call, &[Phase::Running])?;
        Ok(self.derivatives.len())
    }

    pub fn set_time(&mut self, t: f64) {
        self.time = t;
    }

    pub fn states(&mut self, x: &mut [f64]) {
        if let Some(ode) = self.component.ode() {
            ode.states(x);
        }
    }

    /// Sets the state; the state outputs follow it.
    pub fn set_states(&mut self, x: &[f64]) {
        let Some(ode) = self.component.ode() else { return };
        ode.set_states(x);
        for (k, &port) in ode.state_outputs().iter().enumerate() {
            if let (Some(out), Some(xk)) = (self.outputs.get_mut(port), x.get(k)) {
                out.set_real(*xk);
            }
        }
    }

    fn compute_derivatives(&mut self) {
        if let Some(ode) = self.component.ode() {
            ode.derivatives(&self.inputs, &mut self.derivatives);
        }
    }

    pub fn derivatives(&mut self, dx: &mut [f64]) {
        self.compute_derivatives();
        for (d, x) in dx.iter_mut().zip(&self.derivatives) {
            *d = *x;
        }
    }
}
