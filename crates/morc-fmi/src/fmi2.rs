//! The FMI 2.0 C API, loaded from an FMU's shared library, and one instance
//! of it. Every call checks the status and turns Error, Fatal and Discard
//! into a message naming the FMU, the call and what the FMU logged.

use std::ffi::{c_char, c_int, c_void, CString};
use std::path::Path;

use super::description::VarType;
use super::instance::{self, Calls, Common, EventInfo as Events, FmuInstance, Handle, Instantiation, Interface, Named, Vr};
use super::log::{self, Status};
use super::values::{read_c_strings, with_c_strings, Data, Group};
use super::FmiError;

pub(crate) const MODEL_EXCHANGE: c_int = 0;
pub(crate) const CO_SIMULATION: c_int = 1;

type Component = Handle;
/// The logger as the FMU calls it: variadic, printf-style.
type Logger = unsafe extern "C" fn(*mut c_void, *const c_char, Status, *const c_char, *const c_char, ...);

/// fmi2CallbackFunctions (FMI 2.0 §2.1.5): the logger and environment morc passes to an FMU.
#[repr(C)]
pub struct CallbackFunctions {
    logger: Option<Logger>,
    allocate_memory: Option<unsafe extern "C" fn(usize, usize) -> *mut c_void>,
    free_memory: Option<unsafe extern "C" fn(*mut c_void)>,
    step_finished: Option<unsafe extern "C" fn(*mut c_void, Status)>,
    component_environment: *mut c_void,
}

/// fmi2EventInfo (FMI 2.0 §3.2.2), filled by fmi2NewDiscreteStates.
#[repr(C)]
#[derive(Default)]
pub struct EventInfo {
    /// fmi2True when another event iteration is needed.
    pub new_discrete_states_needed: c_int,
    /// fmi2True when the FMU asks to end the simulation.
    pub terminate_simulation: c_int,
    /// fmi2True when the nominal values of the states changed.
    pub nominals_of_continuous_states_changed: c_int,
    /// fmi2True when the values of the continuous states changed.
    pub values_of_continuous_states_changed: c_int,
    /// fmi2True when next_event_time holds a time event.
    pub next_event_time_defined: c_int,
    /// Time of the next time event (s), when defined.
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
    get_boolean_status: b"fmi2GetBooleanStatus\0" = fn(Component, c_int, *mut c_int) -> Status;
    get_real_status: b"fmi2GetRealStatus\0" = fn(Component, c_int, *mut f64) -> Status;
    enter_event_mode: b"fmi2EnterEventMode\0" = fn(Component) -> Status;
    new_discrete_states: b"fmi2NewDiscreteStates\0" = fn(Component, *mut EventInfo) -> Status;
    enter_continuous_time_mode: b"fmi2EnterContinuousTimeMode\0" = fn(Component) -> Status;
    completed_integrator_step: b"fmi2CompletedIntegratorStep\0" = fn(Component, c_int, *mut c_int, *mut c_int) -> Status;
    set_time: b"fmi2SetTime\0" = fn(Component, f64) -> Status;
    set_continuous_states: b"fmi2SetContinuousStates\0" = fn(Component, *const f64, usize) -> Status;
    get_derivatives: b"fmi2GetDerivatives\0" = fn(Component, *mut f64, usize) -> Status;
    get_continuous_states: b"fmi2GetContinuousStates\0" = fn(Component, *mut f64, usize) -> Status;
    get_event_indicators: b"fmi2GetEventIndicators\0" = fn(Component, *mut f64, usize) -> Status;
}

/// fmi2StatusKind values of fmi2GetBooleanStatus / fmi2GetRealStatus.
const LAST_SUCCESSFUL_TIME: c_int = 2;
const TERMINATED: c_int = 3;

impl Api {
    /// After a discarded step from `t`: the last successful time when the FMU says it
    /// terminated (fmi2Terminated), else None.
    fn terminated(&self, c: &Calls, t: f64) -> Option<f64> {
        let get_boolean_status = self.get_boolean_status?;
        let mut terminated = 0;
        // SAFETY: the handle is live (see instance.rs); the out-pointer is a live c_int.
        if unsafe { get_boolean_status(c.handle(), TERMINATED, &mut terminated) } != log::OK || terminated == 0 {
            return None;
        }
        let mut last = t;
        if let Some(get_real_status) = self.get_real_status {
            // SAFETY: as above; the out-pointer is a live f64. Without an answer `t` stands.
            if unsafe { get_real_status(c.handle(), LAST_SUCCESSFUL_TIME, &mut last) } != log::OK {
                last = t;
            }
        }
        Some(last)
    }

    /// The functions every interface needs beside the common ones.
    fn required(&self, interface: Interface) -> Vec<(&'static str, bool)> {
        let mut present = vec![
            ("fmi2Instantiate", self.instantiate.is_some()),
            ("fmi2FreeInstance", self.free_instance.is_some()),
            ("fmi2SetupExperiment", self.setup_experiment.is_some()),
            ("fmi2EnterInitializationMode", self.enter_initialization_mode.is_some()),
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
            Interface::ModelExchange => present.extend([("fmi2NewDiscreteStates", self.new_discrete_states.is_some()), ("fmi2CompletedIntegratorStep", self.completed_integrator_step.is_some())]),
        }
        present
    }

    /// Calls a getter or setter `f` named `call` on a group's references and values.
    #[inline]
    fn values<T>(c: &Calls, f: Named<unsafe extern "C" fn(Handle, *const Vr, usize, T) -> Status>, vrs: &[Vr], values: T) -> Result<(), FmiError> {
        let call = c.function(f)?;
        // SAFETY: the handle is live (see instance.rs); `values` points at vrs.len() elements (a group holds one per reference in FMI 2).
        c.check(f.1, unsafe { call(c.handle(), vrs.as_ptr(), vrs.len(), values) })
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
pub type Instance = FmuInstance<Api>;

impl instance::Api for Api {
    type Keep = Box<CallbackFunctions>;
    const UPDATE_DISCRETE_STATES: &'static str = "fmi2NewDiscreteStates";

    fn load(binary: &Path) -> Result<Self, FmiError> {
        Api::load(binary)
    }

    fn common(&self) -> Common {
        Common {
            free_instance: self.free_instance,
            exit_initialization_mode: (self.exit_initialization_mode, "fmi2ExitInitializationMode"),
            terminate: (self.terminate, "fmi2Terminate"),
            enter_event_mode: (self.enter_event_mode, "fmi2EnterEventMode"),
            enter_continuous_time_mode: (self.enter_continuous_time_mode, "fmi2EnterContinuousTimeMode"),
            set_time: (self.set_time, "fmi2SetTime"),
            set_continuous_states: (self.set_continuous_states, "fmi2SetContinuousStates"),
            get_derivatives: (self.get_derivatives, "fmi2GetDerivatives"),
            get_continuous_states: (self.get_continuous_states, "fmi2GetContinuousStates"),
            get_event_indicators: (self.get_event_indicators, "fmi2GetEventIndicators"),
        }
    }

    fn check(&self, interface: Interface, binary: &Path) -> Result<(), FmiError> {
        let mut present = self.required(interface);
        present.extend(self.common().required(interface));
        super::library::require(binary, &present)
    }

    fn instantiate(&self, a: &Instantiation) -> Result<(Handle, &'static str, Self::Keep), FmiError> {
        // SAFETY: collect_log reads only the five fixed arguments of the variadic logger (see there).
        let logger: Logger = unsafe { std::mem::transmute::<unsafe extern "C" fn(*mut c_void, *const c_char, Status, *const c_char, *const c_char), Logger>(collect_log) };
        let callbacks = Box::new(CallbackFunctions {
            logger: Some(logger),
            allocate_memory: Some(libc::calloc),
            free_memory: Some(libc::free),
            step_finished: None,
            component_environment: a.environment,
        });
        let resources = CString::new(format!("file://{}/resources", a.folder.display())).map_err(|_| FmiError::Description(format!("the folder {} contains a NUL byte", a.folder.display())))?;
        let kind = match a.interface {
            Interface::CoSimulation => CO_SIMULATION,
            Interface::ModelExchange => MODEL_EXCHANGE,
        };
        let instantiate = self.instantiate.ok_or_else(|| FmiError::Binary("no fmi2Instantiate".into()))?;
        // SAFETY: every pointer is valid for the call; the callbacks (kept with the instance) and the log sink outlive it.
        let component = unsafe { instantiate(a.instance_name.as_ptr(), kind, a.token.as_ptr(), resources.as_ptr(), &*callbacks, 0, c_int::from(a.logging)) };
        Ok((component, "fmi2Instantiate", callbacks))
    }

    #[inline]
    fn set(&self, c: &Calls, g: &Group) -> Result<(), FmiError> {
        match (&g.data, g.ty) {
            (Data::F64(v), _) => Self::values(c, (self.set_real, "fmi2SetReal"), &g.vrs, v.as_ptr()),
            (Data::I32(v), VarType::Boolean) => Self::values(c, (self.set_boolean, "fmi2SetBoolean"), &g.vrs, v.as_ptr()),
            (Data::I32(v), _) => Self::values(c, (self.set_integer, "fmi2SetInteger"), &g.vrs, v.as_ptr()),
            (Data::Str { values, .. }, _) => with_c_strings(values, |p| Self::values(c, (self.set_string, "fmi2SetString"), &g.vrs, p)),
            _ => Err(c.unsupported("FMI 2.0", g)),
        }
    }

    #[inline]
    fn get(&self, c: &Calls, g: &mut Group) -> Result<(), FmiError> {
        match (&mut g.data, g.ty) {
            (Data::F64(v), _) => Self::values(c, (self.get_real, "fmi2GetReal"), &g.vrs, v.as_mut_ptr()),
            (Data::I32(v), VarType::Boolean) => Self::values(c, (self.get_boolean, "fmi2GetBoolean"), &g.vrs, v.as_mut_ptr()),
            (Data::I32(v), _) => Self::values(c, (self.get_integer, "fmi2GetInteger"), &g.vrs, v.as_mut_ptr()),
            (Data::Str { values, pointers }, _) => {
                Self::values(c, (self.get_string, "fmi2GetString"), &g.vrs, pointers.as_mut_ptr())?;
                // SAFETY: the getter just wrote one NUL-terminated string per reference, valid until the next call.
                unsafe { read_c_strings(pointers, values) };
                Ok(())
            }
            _ => Err(c.unsupported("FMI 2.0", g)),
        }
    }

    fn enter_initialization_mode(&self, c: &Calls, start: f64) -> Result<(), FmiError> {
        let f = c.function((self.setup_experiment, "fmi2SetupExperiment"))?;
        // SAFETY: the handle is live (see instance.rs); the rest are plain values (no tolerance, no stop time).
        c.check("fmi2SetupExperiment", unsafe { f(c.handle(), 0, 0.0, start, 0, 0.0) })?;
        let f = c.function((self.enter_initialization_mode, "fmi2EnterInitializationMode"))?;
        // SAFETY: the handle is live (see instance.rs).
        c.check("fmi2EnterInitializationMode", unsafe { f(c.handle()) })
    }

    #[inline]
    fn do_step(&self, c: &Calls, t: f64, h: f64) -> Result<Option<f64>, FmiError> {
        let f = c.function((self.do_step, "fmi2DoStep"))?;
        // SAFETY: the handle is live (see instance.rs).
        let status = unsafe { f(c.handle(), t, h, 1) };
        if status == log::DISCARD {
            // An FMU that ends the simulation itself discards the step and says so in
            // fmi2Terminated; any other discard is a failure.
            if let Some(t_end) = self.terminated(c, t) {
                return Ok(Some(t_end));
            }
        }
        c.check("fmi2DoStep", status)?;
        Ok(None)
    }

    fn update_discrete_states(&self, c: &Calls) -> Result<Events, FmiError> {
        let f = c.function((self.new_discrete_states, "fmi2NewDiscreteStates"))?;
        let mut info = EventInfo { new_discrete_states_needed: 1, ..Default::default() };
        // SAFETY: the handle is live (see instance.rs); `info` is a live #[repr(C)] fmi2EventInfo.
        c.check("fmi2NewDiscreteStates", unsafe { f(c.handle(), &mut info) })?;
        Ok(Events {
            again: info.new_discrete_states_needed != 0,
            terminate: info.terminate_simulation != 0,
            nominals_changed: info.nominals_of_continuous_states_changed != 0,
            values_changed: info.values_of_continuous_states_changed != 0,
            next_event_time: (info.next_event_time_defined != 0).then_some(info.next_event_time),
        })
    }

    #[inline]
    fn completed_integrator_step(&self, c: &Calls) -> Result<(bool, bool), FmiError> {
        let f = c.function((self.completed_integrator_step, "fmi2CompletedIntegratorStep"))?;
        let (mut event, mut terminate) = (0, 0);
        // SAFETY: the handle is live (see instance.rs); the out-pointers are live locals of the declared types.
        c.check("fmi2CompletedIntegratorStep", unsafe { f(c.handle(), 1, &mut event, &mut terminate) })?;
        Ok((event != 0, terminate != 0))
    }
}
