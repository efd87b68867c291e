//! The FMI 2.0 entry points (co-simulation and model exchange).

use std::ffi::{c_char, c_int, c_uint, c_void, CString};
use std::ptr;

use morc_fmi::description::FmiVersion;
use morc_kernel::{Value, ValueType};

use crate::instance::{find_model, log_to, Fmi2Logger, Interface, Logger, Model, Phase, Status, DISCARD, ERROR, OK};
use crate::{completed_integrator_step, free, get_values, instantiate, set_debug_logging, set_values, text, with_model};

type Instance = *mut c_void;
type Vr = c_uint;

#[repr(C)]
pub struct CallbackFunctions {
    pub logger: Fmi2Logger,
    pub allocate_memory: Option<unsafe extern "C" fn(usize, usize) -> *mut c_void>,
    pub free_memory: Option<unsafe extern "C" fn(*mut c_void)>,
    pub step_finished: Option<unsafe extern "C" fn(*mut c_void, Status)>,
    pub component_environment: *mut c_void,
}

#[repr(C)]
pub struct EventInfo {
    new_discrete_states_needed: c_int,
    terminate_simulation: c_int,
    nominals_of_continuous_states_changed: c_int,
    values_of_continuous_states_changed: c_int,
    next_event_time_defined: c_int,
    next_event_time: f64,
}

const MODEL_EXCHANGE: c_int = 0;
const CO_SIMULATION: c_int = 1;

/// fmi2GetTypesPlatform: the types platform of the headers this library was built against, "default" (FMI 2.0 §2.1.4).
#[no_mangle]
pub extern "C" fn fmi2GetTypesPlatform() -> *const c_char {
    c"default".as_ptr()
}

/// fmi2GetVersion: "2.0" (FMI 2.0 §2.1.4).
#[no_mangle]
pub extern "C" fn fmi2GetVersion() -> *const c_char {
    c"2.0".as_ptr()
}

/// fmi2Instantiate: a new instance of the model whose guid is given, for co-simulation or model exchange (FMI 2.0 §2.1.5).
///
/// # Safety
/// `instance_name`, `guid` and `_resource_location` are null or NUL-terminated strings; `functions` is
/// null or points to a valid fmi2CallbackFunctions whose logger and environment stay valid for the
/// instance's lifetime (FMI 2.0, section 2.1.5).
#[no_mangle]
pub unsafe extern "C" fn fmi2Instantiate(
    instance_name: *const c_char,
    fmu_type: c_int,
    guid: *const c_char,
    _resource_location: *const c_char,
    functions: *const CallbackFunctions,
    _visible: c_int,
    logging_on: c_int,
) -> Instance {
    instantiate(|| {
        let (logger, environment) = match functions.as_ref() {
            Some(f) => (f.logger, f.component_environment),
            None => (None, ptr::null_mut()),
        };
        let logger = Logger::Fmi2(logger);
        let name = CString::new(text(instance_name)).unwrap_or_default();
        // Logs why instantiation fails; the caller returns null.
        let fail = |message: String| log_to(logger, environment, &name, ERROR, "logStatusError", &message);
        let interface = match fmu_type {
            CO_SIMULATION => Interface::CoSimulation,
            MODEL_EXCHANGE => Interface::ModelExchange,
            other => {
                fail(format!("unknown fmi2Type {other}"));
                return Err(());
            }
        };
        let guid = text(guid);
        let Some(block) = find_model(&guid, FmiVersion::V2) else {
            fail(format!("GUID {guid} matches no model of this binary (morc {}): the FMU's modelDescription.xml and binary differ", env!("CARGO_PKG_VERSION")));
            return Err(());
        };
        Model::new(block, FmiVersion::V2, interface, name.clone(), logger, environment, logging_on != 0).map_err(fail)
    })
}

/// fmi2FreeInstance: frees an instance and everything it holds (FMI 2.0 §2.1.5).
///
/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; it is not used after this call.
#[no_mangle]
pub unsafe extern "C" fn fmi2FreeInstance(c: Instance) {
    free(c)
}

/// fmi2SetDebugLogging: switches debug messages to the logger on or off (FMI 2.0 §2.1.5).
///
/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2SetDebugLogging(c: Instance, logging_on: c_int, _n: usize, _categories: *const *const c_char) -> Status {
    set_debug_logging(c, "fmi2SetDebugLogging", logging_on != 0)
}

/// fmi2SetupExperiment: start time, stop time and tolerance before initialisation (FMI 2.0 §2.1.6).
///
/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2SetupExperiment(c: Instance, _tolerance_defined: c_int, _tolerance: f64, start_time: f64, _stop_time_defined: c_int, _stop_time: f64) -> Status {
    with_model(c, "fmi2SetupExperiment", |m| {
        if let Err(s) = m.check_phase("fmi2SetupExperiment", &[Phase::Instantiated]) {
            return s;
        }
        if start_time != 0.0 {
            return m.error(&format!("start time {start_time}: morc blocks start at t = 0"));
        }
        OK
    })
}

/// fmi2EnterInitializationMode (FMI 2.0 §2.1.6).
///
/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2EnterInitializationMode(c: Instance) -> Status {
    with_model(c, "fmi2EnterInitializationMode", |m| m.enter_initialization("fmi2EnterInitializationMode", 0.0))
}

/// fmi2ExitInitializationMode: ends initialisation (FMI 2.0 §2.1.6).
///
/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2ExitInitializationMode(c: Instance) -> Status {
    with_model(c, "fmi2ExitInitializationMode", |m| m.exit_initialization("fmi2ExitInitializationMode"))
}

/// fmi2Terminate: ends the simulation run (FMI 2.0 §2.1.6).
///
/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2Terminate(c: Instance) -> Status {
    with_model(c, "fmi2Terminate", |m| m.terminate("fmi2Terminate"))
}

/// fmi2Reset: back to the state after instantiation (FMI 2.0 §2.1.6).
///
/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2Reset(c: Instance) -> Status {
    with_model(c, "fmi2Reset", Model::reset)
}

/// Getters and setters: the shared bodies in lib.rs, one line a type.
macro_rules! getter {
    ($fn:ident, $c_ty:ty, $value_ty:expr, $convert:expr) => {
        #[doc = concat!(stringify!($fn), ": reads the variables with the given value references (FMI 2.0 §2.1.7).")]
        ///
        /// # Safety
        /// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
        /// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
        #[no_mangle]
        pub unsafe extern "C" fn $fn(c: Instance, vr: *const Vr, nvr: usize, value: *mut $c_ty) -> Status {
            get_values(c, stringify!($fn), vr, nvr, value, nvr, $value_ty, $convert)
        }
    };
}

macro_rules! setter {
    ($fn:ident, $c_ty:ty, $convert:expr) => {
        #[doc = concat!(stringify!($fn), ": writes the variables with the given value references (FMI 2.0 §2.1.7).")]
        ///
        /// # Safety
        /// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
        /// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
        #[no_mangle]
        pub unsafe extern "C" fn $fn(c: Instance, vr: *const Vr, nvr: usize, value: *const $c_ty) -> Status {
            set_values(c, stringify!($fn), vr, nvr, value, nvr, $convert)
        }
    };
}

getter!(fmi2GetReal, f64, ValueType::Real, |_: &mut Model, v: Value| v.real());
getter!(fmi2GetInteger, c_int, ValueType::Integer, |_: &mut Model, v: Value| v.integer() as c_int);
getter!(fmi2GetBoolean, c_int, ValueType::Boolean, |_: &mut Model, v: Value| c_int::from(v.boolean()));
getter!(fmi2GetString, *const c_char, ValueType::String, |m: &mut Model, v: Value| m.lend_string(v.str()));

setter!(fmi2SetReal, f64, Value::Real);
setter!(fmi2SetInteger, c_int, |x: c_int| Value::Integer(i64::from(x)));
setter!(fmi2SetBoolean, c_int, |x: c_int| Value::Boolean(x != 0));
setter!(fmi2SetString, *const c_char, |x: *const c_char| Value::String(text(x)));

/// fmi2DoStep: advances the block over one communication step (FMI 2.0 §4.2.2).
///
/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2DoStep(c: Instance, current: f64, size: f64, _no_set_prior: c_int) -> Status {
    with_model(c, "fmi2DoStep", |m| m.do_step("fmi2DoStep", current, size))
}

/// The status functions for asynchronous steps: morc's steps are synchronous.
///
/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2CancelStep(c: Instance) -> Status {
    with_model(c, "fmi2CancelStep", |m| m.error("fmi2CancelStep: steps are synchronous, there is nothing to cancel"))
}

const FMI2_LAST_SUCCESSFUL_TIME: c_int = 2;
const FMI2_TERMINATED: c_int = 3;

/// fmi2GetStatus (FMI 2.0 §4.2.3).
///
/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2GetStatus(c: Instance, _s: c_int, _value: *mut Status) -> Status {
    with_model(c, "fmi2GetStatus", |_| DISCARD)
}

/// fmi2GetRealStatus (FMI 2.0 §4.2.3).
///
/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2GetRealStatus(c: Instance, s: c_int, value: *mut f64) -> Status {
    with_model(c, "fmi2GetRealStatus", |m| {
        if s == FMI2_LAST_SUCCESSFUL_TIME && !value.is_null() {
            *value = m.steps as f64 * m.sample_period;
            OK
        } else {
            DISCARD
        }
    })
}

/// fmi2GetIntegerStatus (FMI 2.0 §4.2.3).
///
/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2GetIntegerStatus(c: Instance, _s: c_int, _v: *mut c_int) -> Status {
    with_model(c, "fmi2GetIntegerStatus", |_| DISCARD)
}

/// fmi2GetBooleanStatus (FMI 2.0 §4.2.3).
///
/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2GetBooleanStatus(c: Instance, s: c_int, value: *mut c_int) -> Status {
    with_model(c, "fmi2GetBooleanStatus", |m| {
        if s == FMI2_TERMINATED && !value.is_null() {
            *value = c_int::from(m.finished);
            OK
        } else {
            DISCARD
        }
    })
}

/// fmi2GetStringStatus (FMI 2.0 §4.2.3).
///
/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2GetStringStatus(c: Instance, _s: c_int, _v: *mut *const c_char) -> Status {
    with_model(c, "fmi2GetStringStatus", |_| DISCARD)
}

// Model exchange.

model_exchange_functions!(
    fmi2SetTime,
    fmi2SetContinuousStates,
    fmi2GetContinuousStates,
    fmi2GetDerivatives,
    fmi2GetNominalsOfContinuousStates,
    fmi2GetEventIndicators,
    fmi2EnterEventMode,
    fmi2EnterContinuousTimeMode
);

/// fmi2NewDiscreteStates: event iteration in model exchange (FMI 2.0 §3.2.2).
///
/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2NewDiscreteStates(c: Instance, info: *mut EventInfo) -> Status {
    with_model(c, "fmi2NewDiscreteStates", |m| {
        if let Err(s) = m.model_exchange("fmi2NewDiscreteStates") {
            return s;
        }
        let Some(info) = info.as_mut() else { return m.error("fmi2NewDiscreteStates: null event info") };
        *info = EventInfo {
            new_discrete_states_needed: 0,
            terminate_simulation: 0,
            nominals_of_continuous_states_changed: 0,
            values_of_continuous_states_changed: 0,
            next_event_time_defined: 0,
            next_event_time: 0.0,
        };
        OK
    })
}

/// fmi2CompletedIntegratorStep: called by the importer's solver after each accepted step (FMI 2.0 §3.2.2).
///
/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2CompletedIntegratorStep(c: Instance, _no_set_prior: c_int, event: *mut c_int, terminate: *mut c_int) -> Status {
    completed_integrator_step(c, "fmi2CompletedIntegratorStep", event, terminate)
}

type P = *const c_void;

unsupported! {
    fmi2GetFMUstate(state: P) "canGetAndSetFMUstate is false";
    fmi2SetFMUstate(state: P) "canGetAndSetFMUstate is false";
    fmi2FreeFMUstate(state: P) "canGetAndSetFMUstate is false";
    fmi2SerializedFMUstateSize(state: P, size: P) "canSerializeFMUstate is false";
    fmi2SerializeFMUstate(state: P, bytes: P, size: usize) "canSerializeFMUstate is false";
    fmi2DeSerializeFMUstate(bytes: P, size: usize, state: P) "canSerializeFMUstate is false";
    fmi2GetDirectionalDerivative(unknowns: P, n_unknowns: usize, knowns: P, n_knowns: usize, dv_known: P, dv_unknown: P) "providesDirectionalDerivative is false";
    fmi2SetRealInputDerivatives(vr: P, nvr: usize, order: P, value: P) "canInterpolateInputs is false";
    fmi2GetRealOutputDerivatives(vr: P, nvr: usize, order: P, value: P) "maxOutputDerivativeOrder is 0";
}
