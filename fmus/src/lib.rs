//! The FMI 2.0 co-simulation C API over any morc block (see
//! `morc::fmi::export`). One shared library serves every exported model:
//! `fmi2Instantiate` finds the model by its GUID.
//!
//! Every entry point catches panics and checks its instance pointer, so a
//! bug or a misuse gives `fmi2Error`/`fmi2Fatal` and a log message, never an
//! unwind into C or an abort of the host.

#![allow(
    non_snake_case,
    non_camel_case_types,
    non_upper_case_globals,
    clippy::missing_safety_doc
)]

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use morc::fmi::export::{self, ExportVariable, ExportedBlock, Role};
use morc::kernel::component::{Component, InitContext, Step, StepContext};
use morc::kernel::data::AssemblyData;
use morc::kernel::value::{Value, ValueType};

pub type fmi2Status = c_int;
pub const fmi2OK: fmi2Status = 0;
pub const fmi2Warning: fmi2Status = 1;
pub const fmi2Discard: fmi2Status = 2;
pub const fmi2Error: fmi2Status = 3;
pub const fmi2Fatal: fmi2Status = 4;
pub const fmi2Pending: fmi2Status = 5;

pub type fmi2Component = *mut c_void;
pub type fmi2ComponentEnvironment = *mut c_void;
pub type fmi2ValueReference = c_uint;
pub type fmi2Real = f64;
pub type fmi2Integer = c_int;
pub type fmi2Boolean = c_int;
pub type fmi2String = *const c_char;
pub type fmi2Type = c_int;
pub const fmi2CoSimulation: fmi2Type = 1;

/// The importer's logger: printf-style and variadic, so messages go through "%s".
pub type fmi2CallbackLogger =
    Option<unsafe extern "C" fn(fmi2ComponentEnvironment, fmi2String, fmi2Status, fmi2String, fmi2String, ...)>;

#[repr(C)]
pub struct fmi2CallbackFunctions {
    pub logger: fmi2CallbackLogger,
    pub allocateMemory: Option<unsafe extern "C" fn(usize, usize) -> *mut c_void>,
    pub freeMemory: Option<unsafe extern "C" fn(*mut c_void)>,
    pub stepFinished: Option<unsafe extern "C" fn(fmi2ComponentEnvironment, fmi2Status)>,
    pub componentEnvironment: fmi2ComponentEnvironment,
}

/// Where the instance is in FMI 2.0's co-simulation state machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Instantiated,
    Initialization,
    StepMode,
    Terminated,
    /// After fmi2Error: only get, reset, terminate and free are allowed.
    Failed,
}

struct Instance {
    block: &'static ExportedBlock,
    name: CString,
    logger: fmi2CallbackLogger,
    environment: fmi2ComponentEnvironment,
    logging_on: bool,
    phase: Phase,
    component: Box<dyn Component>,
    variables: Vec<ExportVariable>,
    sample_period: f64,
    inputs: Vec<Value>,
    outputs: Vec<Value>,
    /// Steps made so far: the block's time is steps · sample_period.
    steps: u64,
    /// The block asked to end the simulation (Step::Finish).
    finished: bool,
    /// Strings handed out by fmi2GetString stay valid until the next call.
    returned_strings: Vec<CString>,
}

impl Instance {
    fn log(&self, status: fmi2Status, category: &str, message: &str) {
        let Some(logger) = self.logger else { return };
        if status == fmi2OK && !self.logging_on {
            return;
        }
        let category = CString::new(category).unwrap_or_default();
        let message = printf_literal(message);
        // SAFETY: the importer promised a valid logger; the message has no conversions, so no arguments.
        unsafe {
            logger(
                self.environment,
                self.name.as_ptr(),
                status,
                category.as_ptr(),
                message.as_ptr(),
            )
        };
    }

    /// Logs an error and returns fmi2Error.
    fn error(&mut self, message: &str) -> fmi2Status {
        self.log(fmi2Error, "logStatusError", message);
        fmi2Error
    }

    fn variable(&self, vr: fmi2ValueReference) -> Option<&ExportVariable> {
        self.variables.get(vr as usize)
    }

    fn check_phase(&mut self, call: &str, allowed: &[Phase]) -> Result<(), fmi2Status> {
        if allowed.contains(&self.phase) {
            Ok(())
        } else {
            let phase = self.phase;
            Err(self.error(&format!("{call} is not allowed in phase {phase:?}")))
        }
    }

    fn get(&mut self, vr: fmi2ValueReference, ty: ValueType) -> Result<Value, fmi2Status> {
        let Some(v) = self.variable(vr) else {
            let n = self.variables.len();
            return Err(self.error(&format!("unknown value reference {vr} (this model has 0..{n})")));
        };
        if v.ty != ty {
            let (name, vty) = (v.name.clone(), v.ty);
            return Err(self.error(&format!("variable {name} (vr {vr}) is {vty}, not {ty}")));
        }
        Ok(match v.role {
            Role::Input(i) => self.inputs[i].clone(),
            Role::Output(i) => self.outputs[i].clone(),
            Role::Parameter(i) => self.component.info().params[i].value.clone(),
            Role::SamplePeriod => Value::Real(self.sample_period),
        })
    }

    fn set(&mut self, vr: fmi2ValueReference, value: Value) -> Result<(), fmi2Status> {
        let Some(v) = self.variable(vr).cloned() else {
            let n = self.variables.len();
            return Err(self.error(&format!("unknown value reference {vr} (this model has 0..{n})")));
        };
        if v.ty != value.ty() {
            return Err(self.error(&format!(
                "variable {} (vr {vr}) is {}, not {}",
                v.name,
                v.ty,
                value.ty()
            )));
        }
        match v.role {
            Role::Input(i) => {
                self.inputs[i].copy_from(&value);
                Ok(())
            }
            Role::Output(_) => Err(self.error(&format!("variable {} is an output and cannot be set", v.name))),
            Role::Parameter(_) | Role::SamplePeriod
                if !matches!(self.phase, Phase::Instantiated | Phase::Initialization) =>
            {
                Err(self.error(&format!(
                    "parameter {} is fixed: set it before initialisation ends",
                    v.name
                )))
            }
            Role::Parameter(_) => self
                .component
                .set_parameter(&v.name, &value)
                .map_err(|e| self.error(&e)),
            Role::SamplePeriod => {
                let h = value.real();
                if !(h.is_finite() && h > 0.0) {
                    return Err(self.error(&format!("{} must be a positive number of seconds, got {h}", v.name)));
                }
                self.sample_period = h;
                Ok(())
            }
        }
    }

    fn exit_initialization(&mut self) -> fmi2Status {
        if let Err(e) = self.component.configure() {
            self.phase = Phase::Failed;
            return self.error(&e);
        }
        let data = AssemblyData::new();
        let name = self.name.to_string_lossy().into_owned();
        let ctx = InitContext {
            name: &name,
            period: self.sample_period,
            base_period: self.sample_period,
            data: &data,
        };
        if let Err(e) = self.component.initialize(&ctx, &mut self.outputs) {
            self.phase = Phase::Failed;
            return self.error(&e);
        }
        self.phase = Phase::StepMode;
        fmi2OK
    }

    fn do_step(&mut self, current: f64, size: f64) -> fmi2Status {
        let h = self.sample_period;
        let expected = self.steps as f64 * h;
        // The importer's time is a running sum: allow its rounding, not a skipped step.
        if (current - expected).abs() > 1e-6 * h.max(expected.abs() * 1e-9) + 1e-9 * h {
            return self.error(&format!(
                "doStep at t = {current} s, but the block is at t = {expected} s (step {} of {h} s)",
                self.steps
            ));
        }
        let ratio = size / h;
        let count = ratio.round();
        if !(count >= 1.0 && (ratio - count).abs() < 1e-6) {
            return self.error(&format!(
                "doStep of {size} s is not a whole number of sample periods ({h} s); set {} or use steps of k·{h} s",
                export::SAMPLE_PERIOD
            ));
        }
        for _ in 0..count as u64 {
            let ctx = StepContext {
                step: self.steps,
                time: self.steps as f64 * h,
                period: h,
            };
            match self.component.step(&ctx, &self.inputs, &mut self.outputs) {
                Step::Continue => {}
                Step::Finish(reason) => {
                    self.finished = true;
                    self.log(fmi2OK, "logEvents", &format!("the block finished: {reason}"));
                }
                Step::Fault(reason) => {
                    self.phase = Phase::Failed;
                    return self.error(&format!("step {} failed: {reason}", self.steps));
                }
            }
            self.steps += 1;
        }
        fmi2OK
    }
}

/// A message as a printf format that prints it literally: the logger is
/// printf-style, and passing the text itself (not "%s" plus an argument)
/// reads well in importers that do not format (FMPy prints the raw text).
fn printf_literal(message: &str) -> CString {
    CString::new(message.replace('\0', " ").replace('%', "%%")).unwrap_or_default()
}

/// Runs `f` on the instance behind `c`, turning a null pointer or a panic
/// into an error status instead of undefined behaviour or an abort.
fn with_instance(c: fmi2Component, call: &str, f: impl FnOnce(&mut Instance) -> fmi2Status) -> fmi2Status {
    if c.is_null() {
        return fmi2Error;
    }
    // SAFETY: non-null instances are only made by fmi2Instantiate and freed by fmi2FreeInstance.
    let instance = unsafe { &mut *(c as *mut Instance) };
    match catch_unwind(AssertUnwindSafe(|| f(instance))) {
        Ok(status) => status,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let _ = catch_unwind(AssertUnwindSafe(|| {
                instance.phase = Phase::Failed;
                instance.log(
                    fmi2Fatal,
                    "logStatusFatal",
                    &format!("{call}: internal error (panic): {what}"),
                );
            }));
            fmi2Fatal
        }
    }
}

/// Reads `n` elements behind a C pointer (an empty slice for n = 0).
unsafe fn slice<'a, T>(p: *const T, n: usize) -> Option<&'a [T]> {
    if n == 0 {
        Some(&[])
    } else if p.is_null() {
        None
    } else {
        Some(std::slice::from_raw_parts(p, n))
    }
}

unsafe fn slice_mut<'a, T>(p: *mut T, n: usize) -> Option<&'a mut [T]> {
    if n == 0 {
        Some(&mut [])
    } else if p.is_null() {
        None
    } else {
        Some(std::slice::from_raw_parts_mut(p, n))
    }
}

unsafe fn text(s: fmi2String) -> String {
    if s.is_null() {
        String::new()
    } else {
        CStr::from_ptr(s).to_string_lossy().into_owned()
    }
}

#[no_mangle]
pub extern "C" fn fmi2GetTypesPlatform() -> *const c_char {
    c"default".as_ptr()
}

#[no_mangle]
pub extern "C" fn fmi2GetVersion() -> *const c_char {
    c"2.0".as_ptr()
}

#[no_mangle]
pub unsafe extern "C" fn fmi2Instantiate(
    instance_name: fmi2String,
    fmu_type: fmi2Type,
    fmu_guid: fmi2String,
    _resource_location: fmi2String,
    functions: *const fmi2CallbackFunctions,
    _visible: fmi2Boolean,
    logging_on: fmi2Boolean,
) -> fmi2Component {
    let result = catch_unwind(AssertUnwindSafe(|| {
        let (logger, environment) = match functions.as_ref() {
            Some(f) => (f.logger, f.componentEnvironment),
            None => (None, ptr::null_mut()),
        };
        let name = CString::new(text(instance_name)).unwrap_or_default();
        let fail = |message: String| {
            if let Some(logger) = logger {
                let message = printf_literal(&message);
                logger(
                    environment,
                    name.as_ptr(),
                    fmi2Error,
                    c"logStatusError".as_ptr(),
                    message.as_ptr(),
                );
            }
            ptr::null_mut()
        };
        if fmu_type != fmi2CoSimulation {
            return fail("this FMU supports co-simulation only (fmi2CoSimulation)".into());
        }
        let guid = text(fmu_guid);
        let mut found = None;
        for block in export::EXPORTED {
            if let Ok((_, g)) = export::model_description(block) {
                if g == guid {
                    found = Some(block);
                }
            }
        }
        let Some(block) = found else {
            return fail(format!(
                "GUID {guid} matches no model of this binary (morc {}): the FMU's modelDescription.xml and binary differ",
                env!("CARGO_PKG_VERSION")
            ));
        };
        let component = match export::instantiate(block) {
            Ok(c) => c,
            Err(e) => return fail(e),
        };
        let info = component.info();
        let instance = Box::new(Instance {
            block,
            name: name.clone(),
            logger,
            environment,
            logging_on: logging_on != 0,
            phase: Phase::Instantiated,
            variables: export::variables(info),
            inputs: info.inputs.iter().map(|p| Value::zero(p.ty)).collect(),
            outputs: info.outputs.iter().map(|p| Value::zero(p.ty)).collect(),
            component,
            sample_period: export::DEFAULT_SAMPLE_PERIOD,
            steps: 0,
            finished: false,
            returned_strings: Vec::new(),
        });
        Box::into_raw(instance) as fmi2Component
    }));
    result.unwrap_or(ptr::null_mut())
}

#[no_mangle]
pub unsafe extern "C" fn fmi2FreeInstance(c: fmi2Component) {
    if !c.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| drop(Box::from_raw(c as *mut Instance))));
    }
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetDebugLogging(
    c: fmi2Component,
    logging_on: fmi2Boolean,
    _n_categories: usize,
    _categories: *const fmi2String,
) -> fmi2Status {
    with_instance(c, "fmi2SetDebugLogging", |i| {
        i.logging_on = logging_on != 0;
        fmi2OK
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetupExperiment(
    c: fmi2Component,
    _tolerance_defined: fmi2Boolean,
    _tolerance: fmi2Real,
    start_time: fmi2Real,
    _stop_time_defined: fmi2Boolean,
    _stop_time: fmi2Real,
) -> fmi2Status {
    with_instance(c, "fmi2SetupExperiment", |i| {
        if let Err(s) = i.check_phase("fmi2SetupExperiment", &[Phase::Instantiated]) {
            return s;
        }
        if start_time != 0.0 {
            return i.error(&format!("start time {start_time}: morc blocks start at t = 0"));
        }
        fmi2OK
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2EnterInitializationMode(c: fmi2Component) -> fmi2Status {
    with_instance(c, "fmi2EnterInitializationMode", |i| {
        if let Err(s) = i.check_phase("fmi2EnterInitializationMode", &[Phase::Instantiated]) {
            return s;
        }
        i.phase = Phase::Initialization;
        fmi2OK
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2ExitInitializationMode(c: fmi2Component) -> fmi2Status {
    with_instance(c, "fmi2ExitInitializationMode", |i| {
        if let Err(s) = i.check_phase("fmi2ExitInitializationMode", &[Phase::Initialization]) {
            return s;
        }
        i.exit_initialization()
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2Terminate(c: fmi2Component) -> fmi2Status {
    with_instance(c, "fmi2Terminate", |i| {
        if let Err(s) = i.check_phase("fmi2Terminate", &[Phase::StepMode, Phase::Failed]) {
            return s;
        }
        i.phase = Phase::Terminated;
        fmi2OK
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2Reset(c: fmi2Component) -> fmi2Status {
    with_instance(c, "fmi2Reset", |i| match export::instantiate(i.block) {
        Ok(component) => {
            i.component = component;
            i.inputs
                .iter_mut()
                .zip(&i.variables)
                .for_each(|(v, _)| *v = Value::zero(v.ty()));
            i.outputs.iter_mut().for_each(|v| *v = Value::zero(v.ty()));
            i.sample_period = export::DEFAULT_SAMPLE_PERIOD;
            i.steps = 0;
            i.finished = false;
            i.phase = Phase::Instantiated;
            fmi2OK
        }
        Err(e) => i.error(&e),
    })
}

/// Getter and setter bodies shared by the four types.
macro_rules! getter {
    ($fn:ident, $c_ty:ty, $value_ty:expr, $convert:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $fn(
            c: fmi2Component,
            vr: *const fmi2ValueReference,
            nvr: usize,
            value: *mut $c_ty,
        ) -> fmi2Status {
            with_instance(c, stringify!($fn), |i| {
                if i.phase == Phase::Instantiated {
                    return i.error(concat!(
                        stringify!($fn),
                        " is not allowed before fmi2EnterInitializationMode"
                    ));
                }
                let (Some(vrs), Some(values)) = (slice(vr, nvr), slice_mut(value, nvr)) else {
                    return i.error(concat!(stringify!($fn), ": null array"));
                };
                for (vr, out) in vrs.iter().zip(values.iter_mut()) {
                    match i.get(*vr, $value_ty) {
                        Ok(v) => *out = $convert(i, v),
                        Err(s) => return s,
                    }
                }
                fmi2OK
            })
        }
    };
}

macro_rules! setter {
    ($fn:ident, $c_ty:ty, $convert:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $fn(
            c: fmi2Component,
            vr: *const fmi2ValueReference,
            nvr: usize,
            value: *const $c_ty,
        ) -> fmi2Status {
            with_instance(c, stringify!($fn), |i| {
                if matches!(i.phase, Phase::Terminated | Phase::Failed) {
                    return i.error(concat!(
                        stringify!($fn),
                        " is not allowed after termination or an error"
                    ));
                }
                let (Some(vrs), Some(values)) = (slice(vr, nvr), slice(value, nvr)) else {
                    return i.error(concat!(stringify!($fn), ": null array"));
                };
                for (vr, v) in vrs.iter().zip(values) {
                    if let Err(s) = i.set(*vr, $convert(*v)) {
                        return s;
                    }
                }
                fmi2OK
            })
        }
    };
}

getter!(fmi2GetReal, fmi2Real, ValueType::Real, |_: &mut Instance, v: Value| v
    .real());
getter!(
    fmi2GetInteger,
    fmi2Integer,
    ValueType::Integer,
    |_: &mut Instance, v: Value| v.integer() as fmi2Integer
);
getter!(
    fmi2GetBoolean,
    fmi2Boolean,
    ValueType::Boolean,
    |_: &mut Instance, v: Value| fmi2Boolean::from(v.boolean())
);
getter!(
    fmi2GetString,
    fmi2String,
    ValueType::String,
    |i: &mut Instance, v: Value| {
        i.returned_strings
            .push(CString::new(v.str().replace('\0', " ")).unwrap_or_default());
        i.returned_strings.last().map_or(ptr::null(), |s| s.as_ptr())
    }
);

setter!(fmi2SetReal, fmi2Real, Value::Real);
setter!(fmi2SetInteger, fmi2Integer, |x: fmi2Integer| Value::Integer(i64::from(
    x
)));
setter!(fmi2SetBoolean, fmi2Boolean, |x: fmi2Boolean| Value::Boolean(x != 0));
setter!(fmi2SetString, fmi2String, |x: fmi2String| Value::String(text(x)));

#[no_mangle]
pub unsafe extern "C" fn fmi2DoStep(
    c: fmi2Component,
    current_communication_point: fmi2Real,
    communication_step_size: fmi2Real,
    _no_set_fmu_state_prior: fmi2Boolean,
) -> fmi2Status {
    with_instance(c, "fmi2DoStep", |i| {
        if let Err(s) = i.check_phase("fmi2DoStep", &[Phase::StepMode]) {
            return s;
        }
        // Strings returned earlier may be freed now (fmi2GetString's contract).
        i.returned_strings.clear();
        i.do_step(current_communication_point, communication_step_size)
    })
}

/// The status functions for asynchronous steps: morc's steps are synchronous.
#[no_mangle]
pub unsafe extern "C" fn fmi2CancelStep(c: fmi2Component) -> fmi2Status {
    with_instance(c, "fmi2CancelStep", |i| {
        i.error("fmi2CancelStep: steps are synchronous, there is nothing to cancel")
    })
}

pub type fmi2StatusKind = c_int;
const FMI2_TERMINATED: fmi2StatusKind = 3;
const FMI2_LAST_SUCCESSFUL_TIME: fmi2StatusKind = 2;

#[no_mangle]
pub unsafe extern "C" fn fmi2GetStatus(c: fmi2Component, _s: fmi2StatusKind, _value: *mut fmi2Status) -> fmi2Status {
    with_instance(c, "fmi2GetStatus", |_| fmi2Discard)
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetRealStatus(c: fmi2Component, s: fmi2StatusKind, value: *mut fmi2Real) -> fmi2Status {
    with_instance(c, "fmi2GetRealStatus", |i| {
        if s == FMI2_LAST_SUCCESSFUL_TIME && !value.is_null() {
            *value = i.steps as f64 * i.sample_period;
            fmi2OK
        } else {
            fmi2Discard
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetIntegerStatus(
    c: fmi2Component,
    _s: fmi2StatusKind,
    _v: *mut fmi2Integer,
) -> fmi2Status {
    with_instance(c, "fmi2GetIntegerStatus", |_| fmi2Discard)
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetBooleanStatus(
    c: fmi2Component,
    s: fmi2StatusKind,
    value: *mut fmi2Boolean,
) -> fmi2Status {
    with_instance(c, "fmi2GetBooleanStatus", |i| {
        if s == FMI2_TERMINATED && !value.is_null() {
            *value = fmi2Boolean::from(i.finished);
            fmi2OK
        } else {
            fmi2Discard
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetStringStatus(c: fmi2Component, _s: fmi2StatusKind, _v: *mut fmi2String) -> fmi2Status {
    with_instance(c, "fmi2GetStringStatus", |_| fmi2Discard)
}

/// Optional capabilities this FMU declares it does not have: each returns
/// fmi2Error with a message, as the standard asks.
macro_rules! unsupported {
    ($fn:ident ( $($arg:ident : $ty:ty),* ), $what:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $fn(c: fmi2Component, $($arg: $ty),*) -> fmi2Status {
            $(let _ = $arg;)*
            with_instance(c, stringify!($fn), |i| i.error(concat!(stringify!($fn), ": ", $what)))
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
        unknowns: *const fmi2ValueReference, n_unknowns: usize, knowns: *const fmi2ValueReference,
        n_knowns: usize, dv_known: *const fmi2Real, dv_unknown: *mut fmi2Real
    ),
    "providesDirectionalDerivative is false"
);
unsupported!(
    fmi2SetRealInputDerivatives(vr: *const fmi2ValueReference, nvr: usize, order: *const fmi2Integer, value: *const fmi2Real),
    "canInterpolateInputs is false"
);
unsupported!(
    fmi2GetRealOutputDerivatives(vr: *const fmi2ValueReference, nvr: usize, order: *const fmi2Integer, value: *mut fmi2Real),
    "maxOutputDerivativeOrder is 0"
);

// Keeps the unused status constants documented in one place.
const _: [fmi2Status; 2] = [fmi2Warning, fmi2Pending];
