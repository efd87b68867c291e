//! The FMI 3.0 C API, loaded from an FMU's shared library, and one instance
//! of it (co-simulation or model exchange). Every call checks the status and
//! turns Error, Fatal and Discard into a message naming the FMU, the call
//! and what the FMU logged.

use std::ffi::{c_char, c_void, CString};
use std::path::Path;

use super::instance::{self, Interface};
use super::log::{self, LogSink, Status};
use super::values::{Data, Group};
use super::Fmu;

type Handle = *mut c_void;
type Vr = u32;
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
}

impl Api {
    /// Checks that the functions an interface needs are all there (getters
    /// and setters are checked when a variable of their type is used).
    pub fn check(&self, interface: Interface, binary: &Path) -> Result<(), String> {
        let mut present = vec![
            ("fmi3FreeInstance", self.free_instance.is_some()),
            ("fmi3EnterInitializationMode", self.enter_initialization_mode.is_some()),
            ("fmi3ExitInitializationMode", self.exit_initialization_mode.is_some()),
            ("fmi3Terminate", self.terminate.is_some()),
            ("fmi3GetFloat64", self.get_float64.is_some()),
            ("fmi3SetFloat64", self.set_float64.is_some()),
        ];
        match interface {
            Interface::CoSimulation => present.extend([("fmi3InstantiateCoSimulation", self.instantiate_co_simulation.is_some()), ("fmi3DoStep", self.do_step.is_some())]),
            Interface::ModelExchange => present.extend([
                ("fmi3InstantiateModelExchange", self.instantiate_model_exchange.is_some()),
                ("fmi3EnterEventMode", self.enter_event_mode.is_some()),
                ("fmi3UpdateDiscreteStates", self.update_discrete_states.is_some()),
                ("fmi3EnterContinuousTimeMode", self.enter_continuous_time_mode.is_some()),
                ("fmi3CompletedIntegratorStep", self.completed_integrator_step.is_some()),
                ("fmi3SetTime", self.set_time.is_some()),
                ("fmi3SetContinuousStates", self.set_continuous_states.is_some()),
                ("fmi3GetContinuousStateDerivatives", self.get_derivatives.is_some()),
                ("fmi3GetContinuousStates", self.get_continuous_states.is_some()),
            ]),
        }
        super::library::require(binary, &present)
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
pub struct Instance {
    api: Api,
    handle: Handle,
    log: Box<LogSink>,
    label: String,
}

// SAFETY: calls into one instance are serialised by its owner (see instance.rs); FMI 3.0 asks no more.
unsafe impl Send for Instance {}

impl Instance {
    /// Loads the binary and calls fmi3InstantiateCoSimulation or fmi3InstantiateModelExchange
    /// with the instantiation token of the model description (the FMU checks it).
    pub fn new(fmu: &Fmu, binary: &Path, interface: Interface, instance_name: &str, logging: bool) -> Result<Instance, String> {
        let label = fmu.label.clone();
        let api = Api::load(binary).map_err(|e| format!("{label}: {e}"))?;
        api.check(interface, binary).map_err(|e| format!("{label}: {e}"))?;
        let log = Box::<LogSink>::default();
        let cstr = |s: &str| CString::new(s).map_err(|_| format!("{label}: text contains a NUL byte: {s:?}"));
        // FMI 3 passes the resources folder as a path ending in a separator.
        let resources = format!("{}/resources/", fmu.folder.display());
        let (name, token, resources) = (cstr(instance_name)?, cstr(&fmu.description.token)?, cstr(&resources)?);
        let environment = &*log as *const LogSink as *mut c_void;
        let (handle, call) = match interface {
            Interface::CoSimulation => {
                let f = api.instantiate_co_simulation.ok_or_else(|| format!("{label}: no fmi3InstantiateCoSimulation"))?;
                // SAFETY: valid strings; no intermediate variables, no event mode, no early return.
                let h = unsafe { f(name.as_ptr(), token.as_ptr(), resources.as_ptr(), false, logging, false, false, std::ptr::null(), 0, environment, Some(collect_log), std::ptr::null()) };
                (h, "fmi3InstantiateCoSimulation")
            }
            Interface::ModelExchange => {
                let f = api.instantiate_model_exchange.ok_or_else(|| format!("{label}: no fmi3InstantiateModelExchange"))?;
                // SAFETY: valid strings; the log sink outlives the instance.
                let h = unsafe { f(name.as_ptr(), token.as_ptr(), resources.as_ptr(), false, logging, environment, Some(collect_log)) };
                (h, "fmi3InstantiateModelExchange")
            }
        };
        if handle.is_null() {
            return Err(format!("{label}: {call} failed (returned NULL){}", log.quote("")));
        }
        Ok(Instance { api, handle, log, label })
    }

    #[inline]
    fn check(&self, call: &str, status: Status) -> Result<(), String> {
        self.log.check(&self.label, call, status)
    }

    #[inline]
    fn function<T>(&self, f: Option<T>, name: &str) -> Result<T, String> {
        f.ok_or_else(|| format!("{}: the binary has no {name}", self.label))
    }

    /// Calls a getter or setter `f` named `call` with `n` values behind `values`.
    #[inline]
    fn values<T>(&self, f: Option<unsafe extern "C" fn(Handle, *const Vr, usize, T, usize) -> Status>, call: &str, vrs: &[Vr], values: T, n: usize) -> Result<(), String> {
        let f = self.function(f, call)?;
        // SAFETY: `values` points at `n` elements, the total size of the variables in `vrs`.
        self.check(call, unsafe { f(self.handle, vrs.as_ptr(), vrs.len(), values, n) })
    }
}

impl instance::Instance for Instance {
    #[inline]
    fn set(&mut self, g: &Group) -> Result<(), String> {
        if g.is_empty() {
            return Ok(());
        }
        let (a, vrs) = (&self.api, &g.vrs);
        macro_rules! set {
            ($f:ident, $call:literal, $v:expr) => {
                self.values(a.$f, $call, vrs, $v.as_ptr(), $v.len())
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
            Data::Str { values, .. } => {
                // Allocates: string inputs are off the allocation-free path.
                let owned: Vec<CString> = values.iter().map(|s| CString::new(s.replace('\0', " ")).unwrap_or_default()).collect();
                let pointers: Vec<*const c_char> = owned.iter().map(|s| s.as_ptr()).collect();
                set!(set_string, "fmi3SetString", pointers)
            }
        }
    }

    #[inline]
    fn get(&mut self, g: &mut Group) -> Result<(), String> {
        if g.is_empty() {
            return Ok(());
        }
        let (a, vrs) = (&self.api, &g.vrs);
        macro_rules! get {
            ($f:ident, $call:literal, $v:expr) => {
                self.values(a.$f, $call, vrs, $v.as_mut_ptr(), $v.len())
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
                for (p, v) in pointers.iter().zip(values.iter_mut()) {
                    v.clear();
                    // SAFETY: the FMU returns NUL-terminated strings valid until its next call.
                    v.push_str(&unsafe { log::text(*p) });
                }
                Ok(())
            }
        }
    }

    fn enter_initialization_mode(&mut self, start: f64) -> Result<(), String> {
        let f = self.function(self.api.enter_initialization_mode, "fmi3EnterInitializationMode")?;
        // SAFETY: `self.handle` is the non-null instance made in `new` and freed only in Drop, so it is live here; the rest are plain values (no tolerance, no stop time).
        self.check("fmi3EnterInitializationMode", unsafe { f(self.handle, false, 0.0, start, false, 0.0) })
    }
    fn exit_initialization_mode(&mut self) -> Result<(), String> {
        let f = self.function(self.api.exit_initialization_mode, "fmi3ExitInitializationMode")?;
        // SAFETY: `self.handle` is the non-null instance made in `new` and freed only in Drop, so it is live here.
        self.check("fmi3ExitInitializationMode", unsafe { f(self.handle) })
    }
    fn terminate(&mut self) -> Result<(), String> {
        let f = self.function(self.api.terminate, "fmi3Terminate")?;
        // SAFETY: `self.handle` is the non-null instance made in `new` and freed only in Drop, so it is live here.
        self.check("fmi3Terminate", unsafe { f(self.handle) })
    }
    #[inline]
    fn do_step(&mut self, t: f64, h: f64) -> Result<bool, String> {
        let f = self.function(self.api.do_step, "fmi3DoStep")?;
        let (mut event, mut terminate, mut early, mut last) = (false, false, false, 0.0);
        // SAFETY: `self.handle` is the non-null instance made in `new` and freed only in Drop, so it is live here; the out-pointers are live locals of the declared types.
        self.check("fmi3DoStep", unsafe { f(self.handle, t, h, true, &mut event, &mut terminate, &mut early, &mut last) })?;
        Ok(terminate)
    }
    fn enter_event_mode(&mut self) -> Result<(), String> {
        let f = self.function(self.api.enter_event_mode, "fmi3EnterEventMode")?;
        // SAFETY: `self.handle` is the non-null instance made in `new` and freed only in Drop, so it is live here.
        self.check("fmi3EnterEventMode", unsafe { f(self.handle) })
    }
    fn settle_discrete_states(&mut self) -> Result<bool, String> {
        let f = self.function(self.api.update_discrete_states, "fmi3UpdateDiscreteStates")?;
        for _ in 0..super::instance::MAX_EVENT_ITERATIONS {
            let (mut again, mut terminate, mut nominals, mut values, mut next_defined, mut next) = (false, false, false, false, false, 0.0);
            // SAFETY: `self.handle` is the non-null instance made in `new` and freed only in Drop, so it is live here; the out-pointers are live locals of the declared types.
            self.check("fmi3UpdateDiscreteStates", unsafe { f(self.handle, &mut again, &mut terminate, &mut nominals, &mut values, &mut next_defined, &mut next) })?;
            if terminate {
                return Ok(true);
            }
            if !again {
                return Ok(false);
            }
        }
        Err(format!("{}: fmi3UpdateDiscreteStates still needs iterations after {}", self.label, super::instance::MAX_EVENT_ITERATIONS))
    }
    fn enter_continuous_time_mode(&mut self) -> Result<(), String> {
        let f = self.function(self.api.enter_continuous_time_mode, "fmi3EnterContinuousTimeMode")?;
        // SAFETY: `self.handle` is the non-null instance made in `new` and freed only in Drop, so it is live here.
        self.check("fmi3EnterContinuousTimeMode", unsafe { f(self.handle) })
    }
    #[inline]
    fn completed_integrator_step(&mut self) -> Result<(bool, bool), String> {
        let f = self.function(self.api.completed_integrator_step, "fmi3CompletedIntegratorStep")?;
        let (mut event, mut terminate) = (false, false);
        // SAFETY: `self.handle` is the non-null instance made in `new` and freed only in Drop, so it is live here; the out-pointers are live locals of the declared types.
        self.check("fmi3CompletedIntegratorStep", unsafe { f(self.handle, true, &mut event, &mut terminate) })?;
        Ok((event, terminate))
    }
    #[inline]
    fn set_time(&mut self, t: f64) -> Result<(), String> {
        let f = self.function(self.api.set_time, "fmi3SetTime")?;
        // SAFETY: `self.handle` is the non-null instance made in `new` and freed only in Drop, so it is live here.
        self.check("fmi3SetTime", unsafe { f(self.handle, t) })
    }
    #[inline]
    fn set_continuous_states(&mut self, x: &[f64]) -> Result<(), String> {
        let f = self.function(self.api.set_continuous_states, "fmi3SetContinuousStates")?;
        // SAFETY: `self.handle` is the non-null instance made in `new` and freed only in Drop, so it is live here; the FMU reads x.len() elements from `x`.
        self.check("fmi3SetContinuousStates", unsafe { f(self.handle, x.as_ptr(), x.len()) })
    }
    #[inline]
    fn get_derivatives(&mut self, dx: &mut [f64]) -> Result<(), String> {
        let f = self.function(self.api.get_derivatives, "fmi3GetContinuousStateDerivatives")?;
        // SAFETY: `self.handle` is the non-null instance made in `new` and freed only in Drop, so it is live here; the FMU writes dx.len() elements into `dx`.
        self.check("fmi3GetContinuousStateDerivatives", unsafe { f(self.handle, dx.as_mut_ptr(), dx.len()) })
    }
    fn get_continuous_states(&mut self, x: &mut [f64]) -> Result<(), String> {
        let f = self.function(self.api.get_continuous_states, "fmi3GetContinuousStates")?;
        // SAFETY: `self.handle` is the non-null instance made in `new` and freed only in Drop, so it is live here; the FMU writes x.len() elements into `x`.
        self.check("fmi3GetContinuousStates", unsafe { f(self.handle, x.as_mut_ptr(), x.len()) })
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if let Some(free) = self.api.free_instance {
            // SAFETY: `self.handle` is the non-null instance made in `new`; Drop runs once, so it is freed once and never used after.
            unsafe { free(self.handle) };
        }
    }
}
