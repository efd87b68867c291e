//! The FMI 3.0 C API, loaded from an FMU's shared library, and one instance
//! of it (co-simulation or model exchange). Every call checks the status and
//! turns Error, Fatal and Discard into a message naming the FMU, the call
//! and what the FMU logged.

use std::ffi::{c_char, c_void, CString};
use std::path::Path;

use super::instance::{self, Calls, Common, EventInfo, FmuInstance, Handle, Instantiation, Interface, Named, Vr};
use super::log::{self, Status};
use super::values::{read_c_strings, with_c_strings, Data, Group};
use super::FmiError;
type LogMessage = unsafe extern "C" fn(*mut c_void, Status, *const c_char, *const c_char);

super::library::functions! {
    /// The functions of one loaded FMI 3.0 library (fmi3Functions.h).
    Api,
    instantiate_co_simulation: b"fmi3InstantiateCoSimulation\0" = fn(*const c_char, *const c_char, *const c_char, bool, bool, bool, bool, *const Vr, usize, *mut c_void, Option<LogMessage>, *const c_void) -> Handle;
    instantiate_model_exchange: b"fmi3InstantiateModelExchange\0" = fn(*const c_char, *const c_char, *const c_char, bool, bool, *mut c_void, Option<LogMessage>) -> Handle;
    free_instance: b"fmi3FreeInstance\0" = fn(Handle) -> ();
    enter_initialization_mode: b"fmi3EnterInitializationMode\0" = fn(Handle, bool, f64, f64, bool, f64) -> Status;
    exit_initialization_mode: b"fmi3ExitInitializationMode\0" = fn(Handle) -> Status;
    terminate: b"fmi3Terminate\0" = fn(Handle) -> Status;
    get_float64: b"fmi3GetFloat64\0" = fn(Handle, *const Vr, usize, *mut f64, usize) -> Status;
    get_float32: b"fmi3GetFloat32\0" = fn(Handle, *const Vr, usize, *mut f32, usize) -> Status;
    get_int8: b"fmi3GetInt8\0" = fn(Handle, *const Vr, usize, *mut i8, usize) -> Status;
    get_uint8: b"fmi3GetUInt8\0" = fn(Handle, *const Vr, usize, *mut u8, usize) -> Status;
    get_int16: b"fmi3GetInt16\0" = fn(Handle, *const Vr, usize, *mut i16, usize) -> Status;
    get_uint16: b"fmi3GetUInt16\0" = fn(Handle, *const Vr, usize, *mut u16, usize) -> Status;
    get_int32: b"fmi3GetInt32\0" = fn(Handle, *const Vr, usize, *mut i32, usize) -> Status;
    get_uint32: b"fmi3GetUInt32\0" = fn(Handle, *const Vr, usize, *mut u32, usize) -> Status;
    get_int64: b"fmi3GetInt64\0" = fn(Handle, *const Vr, usize, *mut i64, usize) -> Status;
    get_uint64: b"fmi3GetUInt64\0" = fn(Handle, *const Vr, usize, *mut u64, usize) -> Status;
    get_boolean: b"fmi3GetBoolean\0" = fn(Handle, *const Vr, usize, *mut bool, usize) -> Status;
    get_string: b"fmi3GetString\0" = fn(Handle, *const Vr, usize, *mut *const c_char, usize) -> Status;
    set_float64: b"fmi3SetFloat64\0" = fn(Handle, *const Vr, usize, *const f64, usize) -> Status;
    set_float32: b"fmi3SetFloat32\0" = fn(Handle, *const Vr, usize, *const f32, usize) -> Status;
    set_int8: b"fmi3SetInt8\0" = fn(Handle, *const Vr, usize, *const i8, usize) -> Status;
    set_uint8: b"fmi3SetUInt8\0" = fn(Handle, *const Vr, usize, *const u8, usize) -> Status;
    set_int16: b"fmi3SetInt16\0" = fn(Handle, *const Vr, usize, *const i16, usize) -> Status;
    set_uint16: b"fmi3SetUInt16\0" = fn(Handle, *const Vr, usize, *const u16, usize) -> Status;
    set_int32: b"fmi3SetInt32\0" = fn(Handle, *const Vr, usize, *const i32, usize) -> Status;
    set_uint32: b"fmi3SetUInt32\0" = fn(Handle, *const Vr, usize, *const u32, usize) -> Status;
    set_int64: b"fmi3SetInt64\0" = fn(Handle, *const Vr, usize, *const i64, usize) -> Status;
    set_uint64: b"fmi3SetUInt64\0" = fn(Handle, *const Vr, usize, *const u64, usize) -> Status;
    set_boolean: b"fmi3SetBoolean\0" = fn(Handle, *const Vr, usize, *const bool, usize) -> Status;
    set_string: b"fmi3SetString\0" = fn(Handle, *const Vr, usize, *const *const c_char, usize) -> Status;
    do_step: b"fmi3DoStep\0" = fn(Handle, f64, f64, bool, *mut bool, *mut bool, *mut bool, *mut f64) -> Status;
    enter_event_mode: b"fmi3EnterEventMode\0" = fn(Handle) -> Status;
    update_discrete_states: b"fmi3UpdateDiscreteStates\0" = fn(Handle, *mut bool, *mut bool, *mut bool, *mut bool, *mut bool, *mut f64) -> Status;
    enter_continuous_time_mode: b"fmi3EnterContinuousTimeMode\0" = fn(Handle) -> Status;
    completed_integrator_step: b"fmi3CompletedIntegratorStep\0" = fn(Handle, bool, *mut bool, *mut bool) -> Status;
    set_time: b"fmi3SetTime\0" = fn(Handle, f64) -> Status;
    set_continuous_states: b"fmi3SetContinuousStates\0" = fn(Handle, *const f64, usize) -> Status;
    get_derivatives: b"fmi3GetContinuousStateDerivatives\0" = fn(Handle, *mut f64, usize) -> Status;
    get_continuous_states: b"fmi3GetContinuousStates\0" = fn(Handle, *mut f64, usize) -> Status;
    get_event_indicators: b"fmi3GetEventIndicators\0" = fn(Handle, *mut f64, usize) -> Status;
}

impl Api {
    /// Calls a getter or setter `f` named `call` with `n` values behind `values`.
    #[inline]
    fn values<T>(c: &Calls, f: Named<unsafe extern "C" fn(Handle, *const Vr, usize, T, usize) -> Status>, vrs: &[Vr], values: T, n: usize) -> Result<(), FmiError> {
        let call = c.function(f)?;
        // SAFETY: the handle is live (see instance.rs); `values` points at `n` elements, the total size of the variables in `vrs`.
        c.check(f.1, unsafe { call(c.handle(), vrs.as_ptr(), vrs.len(), values, n) })
    }
}

/// Receives the FMU's log messages (FMI 3 messages are plain text).
unsafe extern "C" fn collect_log(environment: *mut c_void, status: Status, category: *const c_char, message: *const c_char) {
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: the importer passed this instance's LogSink as instanceEnvironment, and the instance (which owns
        // the sink) outlives every call the FMU makes into this callback.
        if let Some(sink) = unsafe { log::sink(environment) } {
            // SAFETY: FMI 3.0 logMessage: category and message are null or NUL-terminated, valid for this call.
            let (category, message) = unsafe { (log::text(category), log::text(message)) };
            sink.push(status, &category, &message);
        }
    });
}

/// One instance of an FMI 3.0 FMU.
pub type Instance = FmuInstance<Api>;

impl instance::Api for Api {
    type Keep = ();
    const UPDATE_DISCRETE_STATES: &'static str = "fmi3UpdateDiscreteStates";

    fn load(binary: &Path) -> Result<Self, FmiError> {
        Api::load(binary)
    }

    fn common(&self) -> Common {
        Common {
            free_instance: self.free_instance,
            exit_initialization_mode: (self.exit_initialization_mode, "fmi3ExitInitializationMode"),
            terminate: (self.terminate, "fmi3Terminate"),
            enter_event_mode: (self.enter_event_mode, "fmi3EnterEventMode"),
            enter_continuous_time_mode: (self.enter_continuous_time_mode, "fmi3EnterContinuousTimeMode"),
            set_time: (self.set_time, "fmi3SetTime"),
            set_continuous_states: (self.set_continuous_states, "fmi3SetContinuousStates"),
            get_derivatives: (self.get_derivatives, "fmi3GetContinuousStateDerivatives"),
            get_continuous_states: (self.get_continuous_states, "fmi3GetContinuousStates"),
            get_event_indicators: (self.get_event_indicators, "fmi3GetEventIndicators"),
        }
    }

    /// Getters and setters other than Float64's are checked when a variable of their type is used.
    fn check(&self, interface: Interface, binary: &Path) -> Result<(), FmiError> {
        let mut present = vec![
            ("fmi3FreeInstance", self.free_instance.is_some()),
            ("fmi3EnterInitializationMode", self.enter_initialization_mode.is_some()),
            ("fmi3GetFloat64", self.get_float64.is_some()),
            ("fmi3SetFloat64", self.set_float64.is_some()),
        ];
        match interface {
            Interface::CoSimulation => present.extend([("fmi3InstantiateCoSimulation", self.instantiate_co_simulation.is_some()), ("fmi3DoStep", self.do_step.is_some())]),
            Interface::ModelExchange => present.extend([
                ("fmi3InstantiateModelExchange", self.instantiate_model_exchange.is_some()),
                ("fmi3UpdateDiscreteStates", self.update_discrete_states.is_some()),
                ("fmi3CompletedIntegratorStep", self.completed_integrator_step.is_some()),
            ]),
        }
        present.extend(self.common().required(interface));
        super::library::require(binary, &present)
    }

    fn instantiate(&self, a: &Instantiation) -> Result<(Handle, &'static str, ()), FmiError> {
        // FMI 3 passes the resources folder as a path ending in a separator.
        let resources = CString::new(format!("{}/resources/", a.folder.display())).map_err(|_| FmiError::Description(format!("the folder {} contains a NUL byte", a.folder.display())))?;
        let (name, token, logging, environment) = (a.instance_name.as_ptr(), a.token.as_ptr(), a.logging, a.environment);
        Ok(match a.interface {
            Interface::CoSimulation => {
                let f = self.instantiate_co_simulation.ok_or_else(|| FmiError::Binary("no fmi3InstantiateCoSimulation".into()))?;
                // SAFETY: valid strings; the log sink outlives the instance; no intermediate variables, no event mode, no early return.
                let h = unsafe { f(name, token, resources.as_ptr(), false, logging, false, false, std::ptr::null(), 0, environment, Some(collect_log), std::ptr::null()) };
                (h, "fmi3InstantiateCoSimulation", ())
            }
            Interface::ModelExchange => {
                let f = self.instantiate_model_exchange.ok_or_else(|| FmiError::Binary("no fmi3InstantiateModelExchange".into()))?;
                // SAFETY: valid strings; the log sink outlives the instance.
                let h = unsafe { f(name, token, resources.as_ptr(), false, logging, environment, Some(collect_log)) };
                (h, "fmi3InstantiateModelExchange", ())
            }
        })
    }

    #[inline]
    fn set(&self, c: &Calls, g: &Group) -> Result<(), FmiError> {
        let vrs = &g.vrs;
        macro_rules! set {
            ($f:ident, $call:literal, $v:expr) => {
                Self::values(c, (self.$f, $call), vrs, $v.as_ptr(), $v.len())
            };
        }
        match &g.data {
            Data::F64(v) => set!(set_float64, "fmi3SetFloat64", v),
            Data::F32(v) => set!(set_float32, "fmi3SetFloat32", v),
            Data::I8(v) => set!(set_int8, "fmi3SetInt8", v),
            Data::U8(v) => set!(set_uint8, "fmi3SetUInt8", v),
            Data::I16(v) => set!(set_int16, "fmi3SetInt16", v),
            Data::U16(v) => set!(set_uint16, "fmi3SetUInt16", v),
            Data::I32(v) => set!(set_int32, "fmi3SetInt32", v),
            Data::U32(v) => set!(set_uint32, "fmi3SetUInt32", v),
            Data::I64(v) => set!(set_int64, "fmi3SetInt64", v),
            Data::U64(v) => set!(set_uint64, "fmi3SetUInt64", v),
            Data::Bool(v) => set!(set_boolean, "fmi3SetBoolean", v),
            Data::Str { values, .. } => with_c_strings(values, |p| Self::values(c, (self.set_string, "fmi3SetString"), vrs, p, values.len())),
        }
    }

    #[inline]
    fn get(&self, c: &Calls, g: &mut Group) -> Result<(), FmiError> {
        let vrs = &g.vrs;
        macro_rules! get {
            ($f:ident, $call:literal, $v:expr) => {
                Self::values(c, (self.$f, $call), vrs, $v.as_mut_ptr(), $v.len())
            };
        }
        match &mut g.data {
            Data::F64(v) => get!(get_float64, "fmi3GetFloat64", v),
            Data::F32(v) => get!(get_float32, "fmi3GetFloat32", v),
            Data::I8(v) => get!(get_int8, "fmi3GetInt8", v),
            Data::U8(v) => get!(get_uint8, "fmi3GetUInt8", v),
            Data::I16(v) => get!(get_int16, "fmi3GetInt16", v),
            Data::U16(v) => get!(get_uint16, "fmi3GetUInt16", v),
            Data::I32(v) => get!(get_int32, "fmi3GetInt32", v),
            Data::U32(v) => get!(get_uint32, "fmi3GetUInt32", v),
            Data::I64(v) => get!(get_int64, "fmi3GetInt64", v),
            Data::U64(v) => get!(get_uint64, "fmi3GetUInt64", v),
            Data::Bool(v) => get!(get_boolean, "fmi3GetBoolean", v),
            Data::Str { values, pointers } => {
                get!(get_string, "fmi3GetString", pointers)?;
                // SAFETY: the getter just wrote one NUL-terminated string per element, valid until the next call.
                unsafe { read_c_strings(pointers, values) };
                Ok(())
            }
        }
    }

    fn enter_initialization_mode(&self, c: &Calls, start: f64) -> Result<(), FmiError> {
        let f = c.function((self.enter_initialization_mode, "fmi3EnterInitializationMode"))?;
        // SAFETY: the handle is live (see instance.rs); the rest are plain values (no tolerance, no stop time).
        c.check("fmi3EnterInitializationMode", unsafe { f(c.handle(), false, 0.0, start, false, 0.0) })
    }

    #[inline]
    fn do_step(&self, c: &Calls, t: f64, h: f64) -> Result<Option<f64>, FmiError> {
        let f = c.function((self.do_step, "fmi3DoStep"))?;
        let (mut event, mut terminate, mut early, mut last) = (false, false, false, t + h);
        // SAFETY: the handle is live (see instance.rs); the out-pointers are live locals of the declared types.
        let status = unsafe { f(c.handle(), t, h, true, &mut event, &mut terminate, &mut early, &mut last) };
        if terminate && (status == log::OK || status == log::WARNING || status == log::DISCARD) {
            // The FMU ended the simulation: at its last successful time when it returned early.
            return Ok(Some(if early && last.is_finite() { last } else { t + h }));
        }
        c.check("fmi3DoStep", status)?;
        Ok(None)
    }

    fn update_discrete_states(&self, c: &Calls) -> Result<EventInfo, FmiError> {
        let f = c.function((self.update_discrete_states, "fmi3UpdateDiscreteStates"))?;
        let (mut again, mut terminate, mut nominals, mut values, mut next_defined, mut next) = (false, false, false, false, false, 0.0);
        // SAFETY: the handle is live (see instance.rs); the out-pointers are live locals of the declared types.
        c.check("fmi3UpdateDiscreteStates", unsafe { f(c.handle(), &mut again, &mut terminate, &mut nominals, &mut values, &mut next_defined, &mut next) })?;
        Ok(EventInfo { again, terminate, nominals_changed: nominals, values_changed: values, next_event_time: next_defined.then_some(next) })
    }

    #[inline]
    fn completed_integrator_step(&self, c: &Calls) -> Result<(bool, bool), FmiError> {
        let f = c.function((self.completed_integrator_step, "fmi3CompletedIntegratorStep"))?;
        let (mut event, mut terminate) = (false, false);
        // SAFETY: the handle is live (see instance.rs); the out-pointers are live locals of the declared types.
        c.check("fmi3CompletedIntegratorStep", unsafe { f(c.handle(), true, &mut event, &mut terminate) })?;
        Ok((event, terminate))
    }
}
