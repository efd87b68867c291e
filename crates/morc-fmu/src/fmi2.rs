//! The FMI 2.0 entry points (co-simulation and model exchange).

use std::ffi::{c_char, c_int, c_uint, c_void, CString};
use std::ptr;

use morc_fmi::description::FmiVersion;
use morc_kernel::{Value, ValueType};

use crate::model::{find_model, log_to, Fmi2Logger, Interface, Logger, Model, Phase, Status, DISCARD, ERROR, OK};
use crate::{free, instantiate, set_time, slice, slice_mut, text, with_model, with_states};

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

#[no_mangle]
pub extern "C" fn fmi2GetTypesPlatform() -> *const c_char {
    c"default".as_ptr()
}

#[no_mangle]
pub extern "C" fn fmi2GetVersion() -> *const c_char {
    c"2.0".as_ptr()
}

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

/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; it is not used after this call.
#[no_mangle]
pub unsafe extern "C" fn fmi2FreeInstance(c: Instance) {
    free(c)
}

/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2SetDebugLogging(c: Instance, logging_on: c_int, _n: usize, _categories: *const *const c_char) -> Status {
    with_model(c, "fmi2SetDebugLogging", |m| {
        m.logging_on = logging_on != 0;
        OK
    })
}

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

/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2EnterInitializationMode(c: Instance) -> Status {
    with_model(c, "fmi2EnterInitializationMode", |m| m.enter_initialization("fmi2EnterInitializationMode", 0.0))
}

/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2ExitInitializationMode(c: Instance) -> Status {
    with_model(c, "fmi2ExitInitializationMode", |m| m.exit_initialization("fmi2ExitInitializationMode"))
}

/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2Terminate(c: Instance) -> Status {
    with_model(c, "fmi2Terminate", |m| m.terminate("fmi2Terminate"))
}

/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2Reset(c: Instance) -> Status {
    with_model(c, "fmi2Reset", Model::reset)
}

/// Getter and setter bodies shared by the four types.
macro_rules! getter {
    ($fn:ident, $c_ty:ty, $value_ty:expr, $convert:expr) => {
        /// # Safety
        /// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
        /// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
        #[no_mangle]
        pub unsafe extern "C" fn $fn(c: Instance, vr: *const Vr, nvr: usize, value: *mut $c_ty) -> Status {
            with_model(c, stringify!($fn), |m| {
                let (Some(vrs), Some(values)) = (slice(vr, nvr), slice_mut(value, nvr)) else {
                    return m.error(concat!(stringify!($fn), ": null array"));
                };
                for (vr, out) in vrs.iter().zip(values.iter_mut()) {
                    match m.get(*vr, $value_ty) {
                        Ok(v) => *out = $convert(m, v),
                        Err(s) => return s,
                    }
                }
                OK
            })
        }
    };
}

macro_rules! setter {
    ($fn:ident, $c_ty:ty, $convert:expr) => {
        /// # Safety
        /// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
        /// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
        #[no_mangle]
        pub unsafe extern "C" fn $fn(c: Instance, vr: *const Vr, nvr: usize, value: *const $c_ty) -> Status {
            with_model(c, stringify!($fn), |m| {
                let (Some(vrs), Some(values)) = (slice(vr, nvr), slice(value, nvr)) else {
                    return m.error(concat!(stringify!($fn), ": null array"));
                };
                for (vr, v) in vrs.iter().zip(values) {
                    if let Err(s) = m.set(*vr, $convert(*v)) {
                        return s;
                    }
                }
                OK
            })
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

/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2GetStatus(c: Instance, _s: c_int, _value: *mut Status) -> Status {
    with_model(c, "fmi2GetStatus", |_| DISCARD)
}

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

/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2GetIntegerStatus(c: Instance, _s: c_int, _v: *mut c_int) -> Status {
    with_model(c, "fmi2GetIntegerStatus", |_| DISCARD)
}

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

/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2GetStringStatus(c: Instance, _s: c_int, _v: *mut *const c_char) -> Status {
    with_model(c, "fmi2GetStringStatus", |_| DISCARD)
}

// Model exchange.

/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2SetTime(c: Instance, t: f64) -> Status {
    set_time(c, "fmi2SetTime", t)
}

/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2SetContinuousStates(c: Instance, x: *const f64, n: usize) -> Status {
    with_states(c, "fmi2SetContinuousStates", x as *mut f64, n, |m, x| m.set_states(x))
}

/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2GetContinuousStates(c: Instance, x: *mut f64, n: usize) -> Status {
    with_states(c, "fmi2GetContinuousStates", x, n, |m, x| m.states(x))
}

/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2GetDerivatives(c: Instance, dx: *mut f64, n: usize) -> Status {
    with_states(c, "fmi2GetDerivatives", dx, n, |m, dx| m.derivatives(dx))
}

/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2GetNominalsOfContinuousStates(c: Instance, x: *mut f64, n: usize) -> Status {
    with_states(c, "fmi2GetNominalsOfContinuousStates", x, n, |_, x| x.fill(1.0))
}

/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2GetEventIndicators(c: Instance, _z: *mut f64, n: usize) -> Status {
    with_model(c, "fmi2GetEventIndicators", |m| if n == 0 { OK } else { m.error("fmi2GetEventIndicators: the model has no event indicators") })
}

/// Event handling: morc's ODE blocks have no events, so these only keep the state machine.
///
/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2EnterEventMode(c: Instance) -> Status {
    with_model(c, "fmi2EnterEventMode", |m| m.model_exchange("fmi2EnterEventMode").map_or_else(|s| s, |_| OK))
}

/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2EnterContinuousTimeMode(c: Instance) -> Status {
    with_model(c, "fmi2EnterContinuousTimeMode", |m| m.model_exchange("fmi2EnterContinuousTimeMode").map_or_else(|s| s, |_| OK))
}

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

/// # Safety
/// `c` is null or a live instance returned by this library's instantiate function and not yet freed; every pointer argument is null or valid for the
/// number of elements the FMI standard gives it, and calls into one instance are not concurrent.
#[no_mangle]
pub unsafe extern "C" fn fmi2CompletedIntegratorStep(c: Instance, _no_set_prior: c_int, event: *mut c_int, terminate: *mut c_int) -> Status {
    with_model(c, "fmi2CompletedIntegratorStep", |m| {
        if let Err(s) = m.model_exchange("fmi2CompletedIntegratorStep") {
            return s;
        }
        if event.is_null() || terminate.is_null() {
            return m.error("fmi2CompletedIntegratorStep: null pointer");
        }
        *event = 0;
        *terminate = 0;
        OK
    })
}

/// Optional capabilities this FMU declares it does not have: each returns
/// an error with a message, as the standard asks.
macro_rules! unsupported {
    ($fn:ident ( $($arg:ident : $ty:ty),* ), $what:expr) => {
        /// # Safety
        /// `c` is null or a live instance returned by this library's instantiate function and not yet freed; the other arguments are not read.
        #[no_mangle]
        pub unsafe extern "C" fn $fn(c: Instance, $($arg: $ty),*) -> Status {
            $(let _ = $arg;)*
            with_model(c, stringify!($fn), |m| m.error(concat!(stringify!($fn), ": ", $what)))
        }
    };
}

unsupported!(fmi2GetFMUstate(state: *mut *mut c_void), "canGetAndSetFMUstate is false");
unsupported!(fmi2SetFMUstate(state: *mut c_void), "canGetAndSetFMUstate is false");
unsupported!(fmi2FreeFMUstate(state: *mut *mut c_void), "canGetAndSetFMUstate is false");
unsupported!(fmi2SerializedFMUstateSize(state: *mut c_void, size: *mut usize), "canSerializeFMUstate is false");
unsupported!(fmi2SerializeFMUstate(state: *mut c_void, bytes: *mut c_char, size: usize), "canSerializeFMUstate is false");
unsupported!(fmi2DeSerializeFMUstate(bytes: *const c_char, size: usize, state: *mut *mut c_void), "canSerializeFMUstate is false");
unsupported!(
    fmi2GetDirectionalDerivative(
        unknowns: *const Vr, n_unknowns: usize, knowns: *const Vr,
        n_knowns: usize, dv_known: *const f64, dv_unknown: *mut f64
    ),
    "providesDirectionalDerivative is false"
);
unsupported!(
    fmi2SetRealInputDerivatives(vr: *const Vr, nvr: usize, order: *const c_int, value: *const f64),
    "canInterpolateInputs is false"
);
unsupported!(
    fmi2GetRealOutputDerivatives(vr: *const Vr, nvr: usize, order: *const c_int, value: *mut f64),
    "maxOutputDerivativeOrder is 0"
);
