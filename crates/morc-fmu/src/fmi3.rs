//! The FMI 3.0 entry points (co-simulation and model exchange). morc's
//! value types map to Float64, Int64, Boolean and String; no arrays yet.

use std::ffi::{c_char, c_void, CString};

use morc_fmi::description::FmiVersion;
use morc_kernel::{Value, ValueType};

use crate::instance::{find_model, log_to, Fmi3Logger, Interface, Logger, Model, Phase, Status, ERROR, OK};
use crate::{completed_integrator_step, free, get_values, instantiate, set_debug_logging, set_values, text, with_model};

type Instance = *mut c_void;
type Vr = u32;

/// fmi3GetVersion: "3.0".
#[no_mangle]
pub extern "C" fn fmi3GetVersion() -> *const c_char {
    c"3.0".as_ptr()
}

unsafe fn new_model(interface: Interface, instance_name: *const c_char, token: *const c_char, logging_on: bool, environment: *mut c_void, log_message: Fmi3Logger) -> Instance {
    instantiate(|| {
        let logger = Logger::Fmi3(log_message);
        let name = CString::new(text(instance_name)).unwrap_or_default();
        // Logs why instantiation fails; the caller returns null.
        let fail = |message: String| log_to(logger, environment, &name, ERROR, "logStatusError", &message);
        let token = text(token);
        let Some(block) = find_model(&token, FmiVersion::V3) else {
            fail(format!("instantiation token {token} matches no model of this binary (morc {}): the FMU's modelDescription.xml and binary differ", env!("CARGO_PKG_VERSION")));
            return Err(());
        };
        Model::new(block, FmiVersion::V3, interface, name.clone(), logger, environment, logging_on).map_err(fail)
    })
}

/// fmi3InstantiateCoSimulation: a new co-simulation instance of the model whose instantiation token is given.
///
/// # Safety
/// `instance_name` and `token` are null or NUL-terminated strings; `log_message` is null or a
/// callback that stays valid, with `environment`, for the instance's lifetime (FMI 3.0, section 2.3.1).
#[no_mangle]
pub unsafe extern "C" fn fmi3InstantiateCoSimulation(
    instance_name: *const c_char,
    token: *const c_char,
    _resource_path: *const c_char,
    _visible: bool,
    logging_on: bool,
    event_mode_used: bool,
    early_return_allowed: bool,
    _required_intermediate: *const Vr,
    _n_required_intermediate: usize,
    environment: *mut c_void,
    log_message: Fmi3Logger,
    _intermediate_update: *const c_void,
) -> Instance {
    if event_mode_used || early_return_allowed {
        let name = CString::new(text(instance_name)).unwrap_or_default();
        log_to(Logger::Fmi3(log_message), environment, &name, ERROR, "logStatusError", "event mode and early return are not supported (hasEventMode and mightReturnEarlyFromDoStep are false)");
        return std::ptr::null_mut();
    }
    new_model(Interface::CoSimulation, instance_name, token, logging_on, environment, log_message)
}

/// fmi3InstantiateModelExchange: a new model-exchange instance of the model whose instantiation token is given.
///
/// # Safety
/// `instance_name` and `token` are null or NUL-terminated strings; `log_message` is null or a
/// callback that stays valid, with `environment`, for the instance's lifetime (FMI 3.0, section 2.3.1).
#[no_mangle]
pub unsafe extern "C" fn fmi3InstantiateModelExchange(
    instance_name: *const c_char,
    token: *const c_char,
    _resource_path: *const c_char,
    _visible: bool,
    logging_on: bool,
    environment: *mut c_void,
    log_message: Fmi3Logger,
) -> Instance {
    new_model(Interface::ModelExchange, instance_name, token, logging_on, environment, log_message)
}

/// fmi3FreeInstance: frees an instance and everything it holds.
///
/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; it is not used after this call.
#[no_mangle]
pub unsafe extern "C" fn fmi3FreeInstance(c: Instance) {
    free(c)
}

/// fmi3SetDebugLogging: switches debug messages to the logger on or off.
///
/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi3SetDebugLogging(c: Instance, logging_on: bool, _n: usize, _categories: *const *const c_char) -> Status {
    set_debug_logging(c, "fmi3SetDebugLogging", logging_on)
}

/// fmi3EnterInitializationMode: takes start time, stop time and tolerance.
///
/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi3EnterInitializationMode(c: Instance, _tolerance_defined: bool, _tolerance: f64, start_time: f64, _stop_time_defined: bool, _stop_time: f64) -> Status {
    with_model(c, "fmi3EnterInitializationMode", |m| m.enter_initialization("fmi3EnterInitializationMode", start_time))
}

/// fmi3ExitInitializationMode: ends initialisation.
///
/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi3ExitInitializationMode(c: Instance) -> Status {
    with_model(c, "fmi3ExitInitializationMode", |m| m.exit_initialization("fmi3ExitInitializationMode"))
}

/// fmi3Terminate: ends the simulation run.
///
/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi3Terminate(c: Instance) -> Status {
    with_model(c, "fmi3Terminate", |m| m.terminate("fmi3Terminate"))
}

/// fmi3Reset: back to the state after instantiation.
///
/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi3Reset(c: Instance) -> Status {
    with_model(c, "fmi3Reset", Model::reset)
}

/// Getters and setters of scalars (nValues must equal nValueReferences): the shared bodies in lib.rs.
macro_rules! getter {
    ($fn:ident, $c_ty:ty, $value_ty:expr, $convert:expr) => {
        #[doc = concat!(stringify!($fn), ": reads the variables with the given value references.")]
        ///
        /// # Safety
        /// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
        /// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
        #[no_mangle]
        pub unsafe extern "C" fn $fn(c: Instance, vr: *const Vr, nvr: usize, value: *mut $c_ty, n: usize) -> Status {
            get_values(c, stringify!($fn), vr, nvr, value, n, $value_ty, $convert)
        }
    };
}

macro_rules! setter {
    ($fn:ident, $c_ty:ty, $convert:expr) => {
        #[doc = concat!(stringify!($fn), ": writes the variables with the given value references.")]
        ///
        /// # Safety
        /// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
        /// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
        #[no_mangle]
        pub unsafe extern "C" fn $fn(c: Instance, vr: *const Vr, nvr: usize, value: *const $c_ty, n: usize) -> Status {
            set_values(c, stringify!($fn), vr, nvr, value, n, $convert)
        }
    };
}

getter!(fmi3GetFloat64, f64, ValueType::Real, |_: &mut Model, v: Value| v.real());
getter!(fmi3GetInt64, i64, ValueType::Integer, |_: &mut Model, v: Value| v.integer());
getter!(fmi3GetBoolean, bool, ValueType::Boolean, |_: &mut Model, v: Value| v.boolean());
getter!(fmi3GetString, *const c_char, ValueType::String, |m: &mut Model, v: Value| m.lend_string(v.str()));

setter!(fmi3SetFloat64, f64, Value::Real);
setter!(fmi3SetInt64, i64, Value::Integer);
setter!(fmi3SetBoolean, bool, Value::Boolean);
setter!(fmi3SetString, *const c_char, |x: *const c_char| Value::String(text(x)));

/// fmi3DoStep: advances the block over one communication step.
///
/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi3DoStep(
    c: Instance,
    current: f64,
    size: f64,
    _no_set_prior: bool,
    event_handling_needed: *mut bool,
    terminate_simulation: *mut bool,
    early_return: *mut bool,
    last_successful_time: *mut f64,
) -> Status {
    with_model(c, "fmi3DoStep", |m| {
        let status = m.do_step("fmi3DoStep", current, size);
        let out = [event_handling_needed, early_return];
        if out.iter().any(|p| p.is_null()) || terminate_simulation.is_null() || last_successful_time.is_null() {
            return m.error("fmi3DoStep: null out-pointer");
        }
        out.iter().for_each(|p| **p = false);
        *terminate_simulation = m.finished;
        *last_successful_time = m.steps as f64 * m.sample_period;
        status
    })
}

// Model exchange.

model_exchange_functions!(
    fmi3SetTime,
    fmi3SetContinuousStates,
    fmi3GetContinuousStates,
    fmi3GetContinuousStateDerivatives,
    fmi3GetNominalsOfContinuousStates,
    fmi3GetEventIndicators,
    fmi3EnterEventMode,
    fmi3EnterContinuousTimeMode
);

/// fmi3GetNumberOfContinuousStates: the block's ODE states (model exchange).
///
/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi3GetNumberOfContinuousStates(c: Instance, n: *mut usize) -> Status {
    with_model(c, "fmi3GetNumberOfContinuousStates", |m| match (m.model_exchange("fmi3GetNumberOfContinuousStates"), n.as_mut()) {
        (Ok(states), Some(n)) => {
            *n = states;
            OK
        }
        (Err(s), _) => s,
        (_, None) => m.error("fmi3GetNumberOfContinuousStates: null pointer"),
    })
}

/// fmi3GetNumberOfEventIndicators: always 0.
///
/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi3GetNumberOfEventIndicators(c: Instance, n: *mut usize) -> Status {
    with_model(c, "fmi3GetNumberOfEventIndicators", |m| match n.as_mut() {
        Some(n) => {
            *n = 0;
            OK
        }
        None => m.error("fmi3GetNumberOfEventIndicators: null pointer"),
    })
}

/// fmi3UpdateDiscreteStates: event iteration in model exchange.
///
/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi3UpdateDiscreteStates(
    c: Instance,
    discrete_states_need_update: *mut bool,
    terminate_simulation: *mut bool,
    nominals_changed: *mut bool,
    values_changed: *mut bool,
    next_event_time_defined: *mut bool,
    next_event_time: *mut f64,
) -> Status {
    with_model(c, "fmi3UpdateDiscreteStates", |m| {
        if let Err(s) = m.model_exchange("fmi3UpdateDiscreteStates") {
            return s;
        }
        let flags = [discrete_states_need_update, terminate_simulation, nominals_changed, values_changed, next_event_time_defined];
        if flags.iter().any(|p| p.is_null()) || next_event_time.is_null() {
            return m.error("fmi3UpdateDiscreteStates: null pointer");
        }
        flags.iter().for_each(|p| **p = false);
        *next_event_time = 0.0;
        OK
    })
}

/// fmi3CompletedIntegratorStep: called by the importer's solver after each accepted step.
///
/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi3CompletedIntegratorStep(c: Instance, _no_set_prior: bool, event: *mut bool, terminate: *mut bool) -> Status {
    completed_integrator_step(c, "fmi3CompletedIntegratorStep", event, terminate)
}

/// Step mode entered with event mode: not used (hasEventMode is false).
///
/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi3EnterStepMode(c: Instance) -> Status {
    with_model(c, "fmi3EnterStepMode", |m| if m.phase == Phase::Running { OK } else { m.error("fmi3EnterStepMode is only allowed after initialisation") })
}

// Types it has no variables of, clocks, FMU state, derivatives, scheduled execution (see `unsupported!`).
type P = *const c_void;

unsupported! {
    fmi3GetFloat32(vr: P, nvr: usize, v: P, n: usize) "the model has no Float32 variables";
    fmi3GetInt8(vr: P, nvr: usize, v: P, n: usize) "the model has no Int8 variables";
    fmi3GetUInt8(vr: P, nvr: usize, v: P, n: usize) "the model has no UInt8 variables";
    fmi3GetInt16(vr: P, nvr: usize, v: P, n: usize) "the model has no Int16 variables";
    fmi3GetUInt16(vr: P, nvr: usize, v: P, n: usize) "the model has no UInt16 variables";
    fmi3GetInt32(vr: P, nvr: usize, v: P, n: usize) "the model has no Int32 variables";
    fmi3GetUInt32(vr: P, nvr: usize, v: P, n: usize) "the model has no UInt32 variables";
    fmi3GetUInt64(vr: P, nvr: usize, v: P, n: usize) "the model has no UInt64 variables";
    fmi3GetBinary(vr: P, nvr: usize, sizes: P, v: P, n: usize) "the model has no Binary variables";
    fmi3GetClock(vr: P, nvr: usize, v: P) "the model has no clocks";
    fmi3SetFloat32(vr: P, nvr: usize, v: P, n: usize) "the model has no Float32 variables";
    fmi3SetInt8(vr: P, nvr: usize, v: P, n: usize) "the model has no Int8 variables";
    fmi3SetUInt8(vr: P, nvr: usize, v: P, n: usize) "the model has no UInt8 variables";
    fmi3SetInt16(vr: P, nvr: usize, v: P, n: usize) "the model has no Int16 variables";
    fmi3SetUInt16(vr: P, nvr: usize, v: P, n: usize) "the model has no UInt16 variables";
    fmi3SetInt32(vr: P, nvr: usize, v: P, n: usize) "the model has no Int32 variables";
    fmi3SetUInt32(vr: P, nvr: usize, v: P, n: usize) "the model has no UInt32 variables";
    fmi3SetUInt64(vr: P, nvr: usize, v: P, n: usize) "the model has no UInt64 variables";
    fmi3SetBinary(vr: P, nvr: usize, sizes: P, v: P, n: usize) "the model has no Binary variables";
    fmi3SetClock(vr: P, nvr: usize, v: P) "the model has no clocks";
    fmi3GetNumberOfVariableDependencies(vr: u32, n: P) "dependencies are not provided";
    fmi3GetVariableDependencies(vr: u32, a: P, b: P, c2: P, d: P, n: usize) "dependencies are not provided";
    fmi3GetFMUState(state: P) "canGetAndSetFMUState is false";
    fmi3SetFMUState(state: P) "canGetAndSetFMUState is false";
    fmi3FreeFMUState(state: P) "canGetAndSetFMUState is false";
    fmi3SerializedFMUStateSize(state: P, size: P) "canSerializeFMUState is false";
    fmi3SerializeFMUState(state: P, bytes: P, size: usize) "canSerializeFMUState is false";
    fmi3DeserializeFMUState(bytes: P, size: usize, state: P) "canSerializeFMUState is false";
    fmi3GetDirectionalDerivative(u: P, nu: usize, k: P, nk: usize, s: P, ns: usize, r: P, nr: usize) "providesDirectionalDerivatives is false";
    fmi3GetAdjointDerivative(u: P, nu: usize, k: P, nk: usize, s: P, ns: usize, r: P, nr: usize) "providesAdjointDerivatives is false";
    fmi3EnterConfigurationMode() "the model has no structural parameters";
    fmi3ExitConfigurationMode() "the model has no structural parameters";
    fmi3GetIntervalDecimal(vr: P, nvr: usize, i: P, q: P) "the model has no clocks";
    fmi3GetIntervalFraction(vr: P, nvr: usize, c2: P, r: P, q: P) "the model has no clocks";
    fmi3GetShiftDecimal(vr: P, nvr: usize, s: P) "the model has no clocks";
    fmi3GetShiftFraction(vr: P, nvr: usize, c2: P, r: P) "the model has no clocks";
    fmi3SetIntervalDecimal(vr: P, nvr: usize, i: P) "the model has no clocks";
    fmi3SetIntervalFraction(vr: P, nvr: usize, c2: P, r: P) "the model has no clocks";
    fmi3SetShiftDecimal(vr: P, nvr: usize, s: P) "the model has no clocks";
    fmi3SetShiftFraction(vr: P, nvr: usize, c2: P, r: P) "the model has no clocks";
    fmi3EvaluateDiscreteStates() "the model has no discrete states";
    fmi3GetOutputDerivatives(vr: P, nvr: usize, orders: P, v: P, n: usize) "maxOutputDerivativeOrder is 0";
    fmi3ActivateModelPartition(clock: u32, t: f64) "scheduled execution is not supported";
}

/// Scheduled execution is not supported: no instance.
///
/// # Safety
/// `instance_name` is null or a NUL-terminated string; `log_message` is null or a callback
/// valid with `environment` for this call.
#[no_mangle]
pub unsafe extern "C" fn fmi3InstantiateScheduledExecution(
    instance_name: *const c_char,
    _token: *const c_char,
    _resource_path: *const c_char,
    _visible: bool,
    _logging_on: bool,
    environment: *mut c_void,
    log_message: Fmi3Logger,
    _clock_update: P,
    _lock: P,
    _unlock: P,
) -> Instance {
    let name = CString::new(text(instance_name)).unwrap_or_default();
    log_to(Logger::Fmi3(log_message), environment, &name, ERROR, "logStatusError", "scheduled execution is not supported");
    std::ptr::null_mut()
}
