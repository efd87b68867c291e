//! The FMI 2.0 C API, loaded from an FMU's shared library, and one instance
//! of it. Every call checks the status and turns Error, Fatal and Discard
//! into a message naming the FMU, the call and what the FMU logged.

use std::ffi::{c_char, c_int, c_uint, c_void, CString};
use std::path::Path;
use std::sync::Arc;

use super::description::VarType;
use super::instance::{self, Interface, MAX_EVENT_ITERATIONS};
use super::log::{self, LogSink, Status};
use super::values::{Data, Group};
use super::Fmu;

pub const MODEL_EXCHANGE: c_int = 0;
pub const CO_SIMULATION: c_int = 1;

type Component = *mut c_void;
type Vr = c_uint;
/// The logger as the FMU calls it: variadic, printf-style.
type Logger = unsafe extern "C" fn(*mut c_void, *const c_char, Status, *const c_char, *const c_char, ...);

#[repr(C)]
pub struct CallbackFunctions {
    logger: Option<Logger>,
    allocate_memory: Option<unsafe extern "C" fn(usize, usize) -> *mut c_void>,
    free_memory: Option<unsafe extern "C" fn(*mut c_void)>,
    step_finished: Option<unsafe extern "C" fn(*mut c_void, Status)>,
    component_environment: *mut c_void,
}

#[repr(C)]
#[derive(Default)]
pub struct EventInfo {
    pub new_discrete_states_needed: c_int,
    pub terminate_simulation: c_int,
    pub nominals_of_continuous_states_changed: c_int,
    pub values_of_continuous_states_changed: c_int,
    pub next_event_time_defined: c_int,
    pub next_event_time: f64,
}

super::library::functions! {
    /// The functions of one loaded FMI 2.0 library (fmi2Functions.h).
    Api,
    get_version: b"fmi2GetVersion\0" = fn() -> *const c_char;
    instantiate: b"fmi2Instantiate\0" = fn(*const c_char, c_int, *const c_char, *const c_char, *const CallbackFunctions, c_int, c_int) -> Component;
    free_instance: b"fmi2FreeInstance\0" = fn(Component) -> ();
    setup_experiment: b"fmi2SetupExperiment\0" = fn(Component, c_int, f64, f64, c_int, f64) -> Status;
    enter_initialization_mode: b"fmi2EnterInitializationMode\0" = fn(Component) -> Status;
    exit_initialization_mode: b"fmi2ExitInitializationMode\0" = fn(Component) -> Status;
    terminate: b"fmi2Terminate\0" = fn(Component) -> Status;
    get_real: b"fmi2GetReal\0" = fn(Component, *const Vr, usize, *mut f64) -> Status;
    get_integer: b"fmi2GetInteger\0" = fn(Component, *const Vr, usize, *mut c_int) -> Status;
    get_boolean: b"fmi2GetBoolean\0" = fn(Component, *const Vr, usize, *mut c_int) -> Status;
    get_string: b"fmi2GetString\0" = fn(Component, *const Vr, usize, *mut *const c_char) -> Status;
    set_real: b"fmi2SetReal\0" = fn(Component, *const Vr, usize, *const f64) -> Status;
    set_integer: b"fmi2SetInteger\0" = fn(Component, *const Vr, usize, *const c_int) -> Status;
    set_boolean: b"fmi2SetBoolean\0" = fn(Component, *const Vr, usize, *const c_int) -> Status;
    set_string: b"fmi2SetString\0" = fn(Component, *const Vr, usize, *const *const c_char) -> Status;
    do_step: b"fmi2DoStep\0" = fn(Component, f64, f64, c_int) -> Status;
    enter_event_mode: b"fmi2EnterEventMode\0" = fn(Component) -> Status;
    new_discrete_states: b"fmi2NewDiscreteStates\0" = fn(Component, *mut EventInfo) -> Status;
    enter_continuous_time_mode: b"fmi2EnterContinuousTimeMode\0" = fn(Component) -> Status;
    completed_integrator_step: b"fmi2CompletedIntegratorStep\0" = fn(Component, c_int, *mut c_int, *mut c_int) -> Status;
    set_time: b"fmi2SetTime\0" = fn(Component, f64) -> Status;
    set_continuous_states: b"fmi2SetContinuousStates\0" = fn(Component, *const f64, usize) -> Status;
    get_derivatives: b"fmi2GetDerivatives\0" = fn(Component, *mut f64, usize) -> Status;
    get_continuous_states: b"fmi2GetContinuousStates\0" = fn(Component, *mut f64, usize) -> Status;
}

impl Api {
    /// Checks that the functions an interface needs are all there.
    pub fn check(&self, interface: Interface, binary: &Path) -> Result<(), String> {
        let mut present = vec![
            ("fmi2Instantiate", self.instantiate.is_some()),
            ("fmi2FreeInstance", self.free_instance.is_some()),
            ("fmi2SetupExperiment", self.setup_experiment.is_some()),
            ("fmi2EnterInitializationMode", self.enter_initialization_mode.is_some()),
            ("fmi2ExitInitializationMode", self.exit_initialization_mode.is_some()),
            ("fmi2Terminate", self.terminate.is_some()),
            ("fmi2GetReal", self.get_real.is_some()),
            ("fmi2SetReal", self.set_real.is_some()),
            ("fmi2GetInteger", self.get_integer.is_some()),
            ("fmi2SetInteger", self.set_integer.is_some()),
            ("fmi2GetBoolean", self.get_boolean.is_some()),
            ("fmi2SetBoolean", self.set_boolean.is_some()),
            ("fmi2GetString", self.get_string.is_some()),
            ("fmi2SetString", self.set_string.is_some()),
        ];
        match interface {
            Interface::CoSimulation => present.push(("fmi2DoStep", self.do_step.is_some())),
            Interface::ModelExchange => present.extend([
                ("fmi2EnterEventMode", self.enter_event_mode.is_some()),
                ("fmi2NewDiscreteStates", self.new_discrete_states.is_some()),
                ("fmi2EnterContinuousTimeMode", self.enter_continuous_time_mode.is_some()),
                ("fmi2CompletedIntegratorStep", self.completed_integrator_step.is_some()),
                ("fmi2SetTime", self.set_time.is_some()),
                ("fmi2SetContinuousStates", self.set_continuous_states.is_some()),
                ("fmi2GetDerivatives", self.get_derivatives.is_some()),
                ("fmi2GetContinuousStates", self.get_continuous_states.is_some()),
            ]),
        }
        super::library::require(binary, &present)
    }
}

/// Receives the FMU's log messages. The FMU calls it as variadic; it is
/// declared with the five fixed arguments, which the x86-64 and AArch64
/// Linux calling conventions pass identically, so the printf arguments are
/// not formatted (as FMPy does): the message is kept as written.
unsafe extern "C" fn collect_log(environment: *mut c_void, _instance: *const c_char, status: Status, category: *const c_char, message: *const c_char) {
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: the environment is the LogSink this instance was created with; the strings are the FMU's.
        let (Some(sink), category, message) = (unsafe { log::sink(environment) }, unsafe { log::text(category) }, unsafe { log::text(message) }) else {
            return;
        };
        // Without the variadic arguments only "%%" can be formatted; other conversions stay as written.
        let message = if message.contains('%') && !message.replace("%%", "").contains('%') { message.replace("%%", "%") } else { message };
        sink.push(status, &category, &message);
    });
}

/// One instance of an FMI 2.0 FMU.
pub struct Instance {
    api: Arc<Api>,
    component: Component,
    /// The FMU may keep pointers to these for the instance's lifetime.
    _callbacks: Box<CallbackFunctions>,
    log: Box<LogSink>,
    /// How messages name the FMU: its file.
    label: String,
}

// SAFETY: calls into one instance are serialised by its owner (see instance.rs); FMI 2.0 asks no more.
unsafe impl Send for Instance {}

impl Instance {
    /// Loads the binary and calls fmi2Instantiate.
    pub fn new(fmu: &Fmu, binary: &Path, interface: Interface, instance_name: &str, logging: bool) -> Result<Instance, String> {
        let label = fmu.label.as_str();
        let api = Api::load(binary).map_err(|e| format!("{label}: {e}"))?;
        api.check(interface, binary).map_err(|e| format!("{label}: {e}"))?;
        let resources = format!("file://{}/resources", fmu.folder.display());
        Self::instantiate(Arc::new(api), label, instance_name, interface, &fmu.description.token, &resources, logging)
    }

    /// fmi2Instantiate on a loaded library.
    pub fn instantiate(api: Arc<Api>, label: &str, instance_name: &str, interface: Interface, guid: &str, resource_uri: &str, logging_on: bool) -> Result<Instance, String> {
        let log = Box::<LogSink>::default();
        // SAFETY: collect_log reads only the five fixed arguments of the variadic logger (see there).
        let logger: Logger = unsafe { std::mem::transmute::<unsafe extern "C" fn(*mut c_void, *const c_char, Status, *const c_char, *const c_char), Logger>(collect_log) };
        let callbacks = Box::new(CallbackFunctions {
            logger: Some(logger),
            allocate_memory: Some(libc::calloc),
            free_memory: Some(libc::free),
            step_finished: None,
            component_environment: &*log as *const LogSink as *mut c_void,
        });
        let cstr = |s: &str| CString::new(s).map_err(|_| format!("{label}: text contains a NUL byte: {s:?}"));
        let (name, guid_c, resources) = (cstr(instance_name)?, cstr(guid)?, cstr(resource_uri)?);
        let instantiate = api.instantiate.ok_or_else(|| format!("{label}: no fmi2Instantiate"))?;
        let kind = match interface {
            Interface::CoSimulation => CO_SIMULATION,
            Interface::ModelExchange => MODEL_EXCHANGE,
        };
        // SAFETY: every pointer is valid for the call; callbacks and log outlive the instance.
        let component = unsafe { instantiate(name.as_ptr(), kind, guid_c.as_ptr(), resources.as_ptr(), &*callbacks, 0, c_int::from(logging_on)) };
        if component.is_null() {
            return Err(format!("{label}: fmi2Instantiate failed (returned NULL){}", log.quote("")));
        }
        Ok(Instance { api, component, _callbacks: callbacks, log, label: label.into() })
    }

    /// The C functions and the instance handle, for callers that measure
    /// the raw API (the benchmark's floor).
    pub fn api(&self) -> &Api {
        &self.api
    }
    pub fn handle(&self) -> *mut c_void {
        self.component
    }

    #[inline]
    fn check(&self, call: &str, status: Status) -> Result<(), String> {
        self.log.check(&self.label, call, status)
    }

    #[inline]
    fn function<T>(&self, f: Option<T>, name: &str) -> Result<T, String> {
        f.ok_or_else(|| format!("{}: the binary has no {name}", self.label))
    }

    /// Calls a getter or setter `f` named `call` on a group's references and values.
    #[inline]
    fn values<T>(&self, f: Option<unsafe extern "C" fn(Component, *const Vr, usize, T) -> Status>, call: &str, vrs: &[Vr], values: T) -> Result<(), String> {
        let f = self.function(f, call)?;
        // SAFETY: `values` points at vrs.len() elements (a group holds one per reference in FMI 2).
        self.check(call, unsafe { f(self.component, vrs.as_ptr(), vrs.len(), values) })
    }

    fn unsupported(&self, group: &Group) -> Result<(), String> {
        Err(format!("{}: FMI 2.0 has no {:?} variables", self.label, group.ty))
    }
}

impl instance::Instance for Instance {
    #[inline]
    fn set(&mut self, g: &Group) -> Result<(), String> {
        if g.is_empty() {
            return Ok(());
        }
        let a = &self.api;
        match (&g.data, g.ty) {
            (Data::F64(v), _) => self.values(a.set_real, "fmi2SetReal", &g.vrs, v.as_ptr()),
            (Data::I32(v), VarType::Boolean) => self.values(a.set_boolean, "fmi2SetBoolean", &g.vrs, v.as_ptr()),
            (Data::I32(v), _) => self.values(a.set_integer, "fmi2SetInteger", &g.vrs, v.as_ptr()),
            (Data::Str { values, .. }, _) => {
                // Allocates: string inputs are off the allocation-free path.
                let owned: Vec<CString> = values.iter().map(|s| CString::new(s.replace('\0', " ")).unwrap_or_default()).collect();
                let pointers: Vec<*const c_char> = owned.iter().map(|s| s.as_ptr()).collect();
                self.values(a.set_string, "fmi2SetString", &g.vrs, pointers.as_ptr())
            }
            _ => self.unsupported(g),
        }
    }

    #[inline]
    fn get(&mut self, g: &mut Group) -> Result<(), String> {
        if g.is_empty() {
            return Ok(());
        }
        let a = &self.api;
        match (&mut g.data, g.ty) {
            (Data::F64(v), _) => self.values(a.get_real, "fmi2GetReal", &g.vrs, v.as_mut_ptr()),
            (Data::I32(v), VarType::Boolean) => self.values(a.get_boolean, "fmi2GetBoolean", &g.vrs, v.as_mut_ptr()),
            (Data::I32(v), _) => self.values(a.get_integer, "fmi2GetInteger", &g.vrs, v.as_mut_ptr()),
            (Data::Str { values, pointers }, _) => {
                self.values(a.get_string, "fmi2GetString", &g.vrs, pointers.as_mut_ptr())?;
                for (p, v) in pointers.iter().zip(values.iter_mut()) {
                    v.clear();
                    // SAFETY: the FMU returns NUL-terminated strings valid until its next call.
                    v.push_str(&unsafe { log::text(*p) });
                }
                Ok(())
            }
            _ => Err(format!("{}: FMI 2.0 has no {:?} variables", self.label, g.ty)),
        }
    }

    fn enter_initialization_mode(&mut self, start: f64) -> Result<(), String> {
        let f = self.function(self.api.setup_experiment, "fmi2SetupExperiment")?;
        // SAFETY: `self.component` is the non-null instance made in `new` and freed only in Drop, so it is live here.
        self.check("fmi2SetupExperiment", unsafe { f(self.component, 0, 0.0, start, 0, 0.0) })?;
        let f = self.function(self.api.enter_initialization_mode, "fmi2EnterInitializationMode")?;
        // SAFETY: `self.component` is the non-null instance made in `new` and freed only in Drop, so it is live here.
        self.check("fmi2EnterInitializationMode", unsafe { f(self.component) })
    }
    fn exit_initialization_mode(&mut self) -> Result<(), String> {
        let f = self.function(self.api.exit_initialization_mode, "fmi2ExitInitializationMode")?;
        // SAFETY: `self.component` is the non-null instance made in `new` and freed only in Drop, so it is live here.
        self.check("fmi2ExitInitializationMode", unsafe { f(self.component) })
    }
    fn terminate(&mut self) -> Result<(), String> {
        let f = self.function(self.api.terminate, "fmi2Terminate")?;
        // SAFETY: `self.component` is the non-null instance made in `new` and freed only in Drop, so it is live here.
        self.check("fmi2Terminate", unsafe { f(self.component) })
    }
    #[inline]
    fn do_step(&mut self, t: f64, h: f64) -> Result<bool, String> {
        let f = self.function(self.api.do_step, "fmi2DoStep")?;
        // SAFETY: `self.component` is the non-null instance made in `new` and freed only in Drop, so it is live here.
        self.check("fmi2DoStep", unsafe { f(self.component, t, h, 1) })?;
        // FMI 2 reports a wish to terminate through fmi2GetBooleanStatus, which morc does not poll.
        Ok(false)
    }
    fn enter_event_mode(&mut self) -> Result<(), String> {
        let f = self.function(self.api.enter_event_mode, "fmi2EnterEventMode")?;
        // SAFETY: `self.component` is the non-null instance made in `new` and freed only in Drop, so it is live here.
        self.check("fmi2EnterEventMode", unsafe { f(self.component) })
    }
    fn settle_discrete_states(&mut self) -> Result<bool, String> {
        let f = self.function(self.api.new_discrete_states, "fmi2NewDiscreteStates")?;
        for _ in 0..MAX_EVENT_ITERATIONS {
            let mut info = EventInfo { new_discrete_states_needed: 1, ..Default::default() };
            // SAFETY: `self.component` is the non-null instance made in `new` and freed only in Drop, so it is live here; `info` is a live #[repr(C)] fmi2EventInfo.
            self.check("fmi2NewDiscreteStates", unsafe { f(self.component, &mut info) })?;
            if info.terminate_simulation != 0 {
                return Ok(true);
            }
            if info.new_discrete_states_needed == 0 {
                return Ok(false);
            }
        }
        Err(format!("{}: fmi2NewDiscreteStates still needs iterations after {MAX_EVENT_ITERATIONS}", self.label))
    }
    fn enter_continuous_time_mode(&mut self) -> Result<(), String> {
        let f = self.function(self.api.enter_continuous_time_mode, "fmi2EnterContinuousTimeMode")?;
        // SAFETY: `self.component` is the non-null instance made in `new` and freed only in Drop, so it is live here.
        self.check("fmi2EnterContinuousTimeMode", unsafe { f(self.component) })
    }
    #[inline]
    fn completed_integrator_step(&mut self) -> Result<(bool, bool), String> {
        let f = self.function(self.api.completed_integrator_step, "fmi2CompletedIntegratorStep")?;
        let (mut event, mut terminate) = (0, 0);
        // SAFETY: `self.component` is the non-null instance made in `new` and freed only in Drop, so it is live here; the out-pointers are live locals of the declared types.
        self.check("fmi2CompletedIntegratorStep", unsafe { f(self.component, 1, &mut event, &mut terminate) })?;
        Ok((event != 0, terminate != 0))
    }
    #[inline]
    fn set_time(&mut self, t: f64) -> Result<(), String> {
        let f = self.function(self.api.set_time, "fmi2SetTime")?;
        // SAFETY: `self.component` is the non-null instance made in `new` and freed only in Drop, so it is live here.
        self.check("fmi2SetTime", unsafe { f(self.component, t) })
    }
    #[inline]
    fn set_continuous_states(&mut self, x: &[f64]) -> Result<(), String> {
        let f = self.function(self.api.set_continuous_states, "fmi2SetContinuousStates")?;
        // SAFETY: `self.component` is the non-null instance made in `new` and freed only in Drop, so it is live here; the FMU reads x.len() elements from `x`.
        self.check("fmi2SetContinuousStates", unsafe { f(self.component, x.as_ptr(), x.len()) })
    }
    #[inline]
    fn get_derivatives(&mut self, dx: &mut [f64]) -> Result<(), String> {
        let f = self.function(self.api.get_derivatives, "fmi2GetDerivatives")?;
        // SAFETY: `self.component` is the non-null instance made in `new` and freed only in Drop, so it is live here; the FMU writes dx.len() elements into `dx`.
        self.check("fmi2GetDerivatives", unsafe { f(self.component, dx.as_mut_ptr(), dx.len()) })
    }
    fn get_continuous_states(&mut self, x: &mut [f64]) -> Result<(), String> {
        let f = self.function(self.api.get_continuous_states, "fmi2GetContinuousStates")?;
        // SAFETY: `self.component` is the non-null instance made in `new` and freed only in Drop, so it is live here; the FMU writes x.len() elements into `x`.
        self.check("fmi2GetContinuousStates", unsafe { f(self.component, x.as_mut_ptr(), x.len()) })
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if let Some(free) = self.api.free_instance {
            // SAFETY: `self.component` is the non-null instance made in `new`; Drop runs once, so it is freed once and never used after.
            unsafe { free(self.component) };
        }
    }
}
