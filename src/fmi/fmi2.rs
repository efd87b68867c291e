//! The FMI 2.0 C API, loaded from an FMU's shared library, and one instance
//! of it. Every call checks the status and turns Error, Fatal and Discard
//! into a message naming the FMU, the call and what the FMU logged.
//!
//! An [`Instance`] holds a raw pointer and is not `Send`: it lives and dies
//! on the one thread that made it (see `component.rs`).

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::path::Path;
use std::sync::{Arc, Mutex};

use libloading::Library;

pub type Status = c_int;
pub const OK: Status = 0;
pub const WARNING: Status = 1;
pub const DISCARD: Status = 2;
pub const ERROR: Status = 3;
pub const FATAL: Status = 4;
pub const PENDING: Status = 5;

pub const MODEL_EXCHANGE: c_int = 0;
pub const CO_SIMULATION: c_int = 1;

pub fn status_name(s: Status) -> &'static str {
    match s {
        OK => "OK",
        WARNING => "Warning",
        DISCARD => "Discard",
        ERROR => "Error",
        FATAL => "Fatal",
        PENDING => "Pending",
        _ => "an unknown status",
    }
}

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

macro_rules! api {
    ($( $field:ident : $sym:literal = fn($($arg:ty),*) -> $ret:ty ;)*) => {
        /// The functions of one loaded FMI 2.0 library.
        pub struct Api {
            $( pub $field: Option<unsafe extern "C" fn($($arg),*) -> $ret>, )*
            /// Keeps the functions above valid.
            _library: Library,
        }
        impl Api {
            /// Loads `path` and looks up every function; missing ones are None.
            pub fn load(path: &Path) -> Result<Api, String> {
                // SAFETY: loading runs the library's initialisers: that is what importing an FMU means.
                let library = unsafe { Library::new(path) }
                    .map_err(|e| format!("cannot load the FMU binary {}: {e}", path.display()))?;
                // SAFETY: the symbol types are FMI 2.0's (fmi2Functions.h).
                unsafe {
                    Ok(Api {
                        $( $field: library.get::<unsafe extern "C" fn($($arg),*) -> $ret>($sym).ok().map(|s| *s), )*
                        _library: library,
                    })
                }
            }
        }
    };
}

api! {
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
    pub fn check(&self, co_simulation: bool, binary: &Path) -> Result<(), String> {
        let common = [
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
        let cs = [("fmi2DoStep", self.do_step.is_some())];
        let me = [
            ("fmi2EnterEventMode", self.enter_event_mode.is_some()),
            ("fmi2NewDiscreteStates", self.new_discrete_states.is_some()),
            ("fmi2EnterContinuousTimeMode", self.enter_continuous_time_mode.is_some()),
            ("fmi2CompletedIntegratorStep", self.completed_integrator_step.is_some()),
            ("fmi2SetTime", self.set_time.is_some()),
            ("fmi2SetContinuousStates", self.set_continuous_states.is_some()),
            ("fmi2GetDerivatives", self.get_derivatives.is_some()),
            ("fmi2GetContinuousStates", self.get_continuous_states.is_some()),
        ];
        let specific: &[(&str, bool)] = if co_simulation { &cs } else { &me };
        let missing: Vec<&str> = common
            .iter()
            .chain(specific)
            .filter(|(_, ok)| !ok)
            .map(|(n, _)| *n)
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "the FMU binary {} does not export {}",
                binary.display(),
                missing.join(", ")
            ))
        }
    }
}

/// What the FMU logged, most recent last; bounded so a chatty FMU cannot grow it.
#[derive(Default)]
pub struct LogSink {
    messages: Mutex<Vec<String>>,
}

const MAX_LOG_MESSAGES: usize = 32;
const MAX_LOG_MESSAGE_LEN: usize = 2000;

impl LogSink {
    /// The messages so far, one per line, and clears them.
    pub fn take(&self) -> String {
        let mut m = self.messages.lock().unwrap_or_else(|e| e.into_inner());
        let text = m.join("\n");
        m.clear();
        text
    }
}

/// Receives the FMU's log messages. The FMU calls it as variadic; it is
/// declared with the five fixed arguments, which the x86-64 and AArch64
/// Linux calling conventions pass identically, so the printf arguments are
/// not formatted (as FMPy does): the message is kept as written.
unsafe extern "C" fn collect_log(
    environment: *mut c_void,
    _instance: *const c_char,
    status: Status,
    category: *const c_char,
    message: *const c_char,
) {
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: the environment is the LogSink this instance was created with.
        let Some(sink) = (unsafe { (environment as *const LogSink).as_ref() }) else {
            return;
        };
        let text = |p: *const c_char| {
            if p.is_null() {
                String::new()
            } else {
                // SAFETY: the FMU passes NUL-terminated strings.
                unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
            }
        };
        // Without the variadic arguments only "%%" can be formatted; other conversions stay as written.
        let message = text(message);
        let message = if message.contains('%') && !message.replace("%%", "").contains('%') {
            message.replace("%%", "%")
        } else {
            message
        };
        let mut line = format!("[{}] {}: {message}", status_name(status), text(category));
        if line.len() > MAX_LOG_MESSAGE_LEN {
            let mut cut = MAX_LOG_MESSAGE_LEN;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
        }
        let mut m = sink.messages.lock().unwrap_or_else(|e| e.into_inner());
        if m.len() == MAX_LOG_MESSAGES {
            m.remove(0);
        }
        m.push(line);
    });
}

/// One instance of an FMI 2.0 FMU.
pub struct Instance {
    pub api: Arc<Api>,
    component: Component,
    /// The FMU may keep pointers to these for the instance's lifetime.
    _callbacks: Box<CallbackFunctions>,
    pub log: Box<LogSink>,
    /// How messages name the FMU: its file.
    pub label: String,
}

impl Instance {
    /// fmi2Instantiate.
    pub fn new(
        api: Arc<Api>,
        label: &str,
        instance_name: &str,
        co_simulation: bool,
        guid: &str,
        resource_uri: &str,
        logging_on: bool,
    ) -> Result<Instance, String> {
        let log = Box::<LogSink>::default();
        // SAFETY: collect_log reads only the five fixed arguments of the variadic logger (see there).
        let logger: Logger = unsafe {
            std::mem::transmute::<
                unsafe extern "C" fn(*mut c_void, *const c_char, Status, *const c_char, *const c_char),
                Logger,
            >(collect_log)
        };
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
        let kind = if co_simulation { CO_SIMULATION } else { MODEL_EXCHANGE };
        // SAFETY: every pointer is valid for the call; callbacks and log outlive the instance.
        let component = unsafe {
            instantiate(
                name.as_ptr(),
                kind,
                guid_c.as_ptr(),
                resources.as_ptr(),
                &*callbacks,
                0,
                c_int::from(logging_on),
            )
        };
        if component.is_null() {
            let said = log.take();
            return Err(format!(
                "{label}: fmi2Instantiate failed (returned NULL){}",
                if said.is_empty() {
                    String::new()
                } else {
                    format!("; the FMU said:\n{said}")
                }
            ));
        }
        Ok(Instance {
            api,
            component,
            _callbacks: callbacks,
            log,
            label: label.into(),
        })
    }

    /// Turns a status into Ok or a message naming the call and what the FMU logged.
    #[inline]
    pub fn check(&self, call: &str, status: Status) -> Result<(), String> {
        if status == OK || status == WARNING {
            return Ok(());
        }
        let said = self.log.take();
        Err(format!(
            "{}: {call} returned {}{}",
            self.label,
            status_name(status),
            if said.is_empty() {
                " (the FMU logged nothing)".to_string()
            } else {
                format!("; the FMU said:\n{said}")
            }
        ))
    }

    fn function<T>(&self, f: Option<T>, name: &str) -> Result<T, String> {
        f.ok_or_else(|| format!("{}: the binary has no {name}", self.label))
    }

    pub fn setup_experiment(&mut self, start: f64, stop: Option<f64>) -> Result<(), String> {
        let f = self.function(self.api.setup_experiment, "fmi2SetupExperiment")?;
        // SAFETY: valid instance.
        let s = unsafe {
            f(
                self.component,
                0,
                0.0,
                start,
                c_int::from(stop.is_some()),
                stop.unwrap_or(0.0),
            )
        };
        self.check("fmi2SetupExperiment", s)
    }
    pub fn enter_initialization_mode(&mut self) -> Result<(), String> {
        let f = self.function(self.api.enter_initialization_mode, "fmi2EnterInitializationMode")?;
        // SAFETY: valid instance.
        self.check("fmi2EnterInitializationMode", unsafe { f(self.component) })
    }
    pub fn exit_initialization_mode(&mut self) -> Result<(), String> {
        let f = self.function(self.api.exit_initialization_mode, "fmi2ExitInitializationMode")?;
        // SAFETY: valid instance.
        self.check("fmi2ExitInitializationMode", unsafe { f(self.component) })
    }
    pub fn terminate(&mut self) -> Result<(), String> {
        let f = self.function(self.api.terminate, "fmi2Terminate")?;
        // SAFETY: valid instance.
        self.check("fmi2Terminate", unsafe { f(self.component) })
    }

    #[inline]
    pub fn set_real(&mut self, vrs: &[Vr], values: &[f64]) -> Result<(), String> {
        if vrs.is_empty() {
            return Ok(());
        }
        let f = self.function(self.api.set_real, "fmi2SetReal")?;
        // SAFETY: both slices have vrs.len() elements (checked by the caller's layout).
        self.check("fmi2SetReal", unsafe {
            f(self.component, vrs.as_ptr(), vrs.len(), values.as_ptr())
        })
    }
    #[inline]
    pub fn get_real(&mut self, vrs: &[Vr], values: &mut [f64]) -> Result<(), String> {
        if vrs.is_empty() {
            return Ok(());
        }
        let f = self.function(self.api.get_real, "fmi2GetReal")?;
        // SAFETY: both slices have vrs.len() elements.
        self.check("fmi2GetReal", unsafe {
            f(self.component, vrs.as_ptr(), vrs.len(), values.as_mut_ptr())
        })
    }
    #[inline]
    pub fn set_integer(&mut self, vrs: &[Vr], values: &[c_int]) -> Result<(), String> {
        if vrs.is_empty() {
            return Ok(());
        }
        let f = self.function(self.api.set_integer, "fmi2SetInteger")?;
        // SAFETY: as set_real.
        self.check("fmi2SetInteger", unsafe {
            f(self.component, vrs.as_ptr(), vrs.len(), values.as_ptr())
        })
    }
    #[inline]
    pub fn get_integer(&mut self, vrs: &[Vr], values: &mut [c_int]) -> Result<(), String> {
        if vrs.is_empty() {
            return Ok(());
        }
        let f = self.function(self.api.get_integer, "fmi2GetInteger")?;
        // SAFETY: as get_real.
        self.check("fmi2GetInteger", unsafe {
            f(self.component, vrs.as_ptr(), vrs.len(), values.as_mut_ptr())
        })
    }
    #[inline]
    pub fn set_boolean(&mut self, vrs: &[Vr], values: &[c_int]) -> Result<(), String> {
        if vrs.is_empty() {
            return Ok(());
        }
        let f = self.function(self.api.set_boolean, "fmi2SetBoolean")?;
        // SAFETY: as set_real.
        self.check("fmi2SetBoolean", unsafe {
            f(self.component, vrs.as_ptr(), vrs.len(), values.as_ptr())
        })
    }
    #[inline]
    pub fn get_boolean(&mut self, vrs: &[Vr], values: &mut [c_int]) -> Result<(), String> {
        if vrs.is_empty() {
            return Ok(());
        }
        let f = self.function(self.api.get_boolean, "fmi2GetBoolean")?;
        // SAFETY: as get_real.
        self.check("fmi2GetBoolean", unsafe {
            f(self.component, vrs.as_ptr(), vrs.len(), values.as_mut_ptr())
        })
    }
    /// Sets strings (allocates: string inputs are off the allocation-free path).
    pub fn set_string(&mut self, vrs: &[Vr], values: &[String]) -> Result<(), String> {
        if vrs.is_empty() {
            return Ok(());
        }
        let f = self.function(self.api.set_string, "fmi2SetString")?;
        let owned: Vec<CString> = values
            .iter()
            .map(|s| CString::new(s.replace('\0', " ")).unwrap_or_default())
            .collect();
        let pointers: Vec<*const c_char> = owned.iter().map(|s| s.as_ptr()).collect();
        // SAFETY: the strings live until the call returns.
        self.check("fmi2SetString", unsafe {
            f(self.component, vrs.as_ptr(), vrs.len(), pointers.as_ptr())
        })
    }
    /// Reads strings into `values`, reusing their storage.
    pub fn get_string(
        &mut self,
        vrs: &[Vr],
        pointers: &mut [*const c_char],
        values: &mut [String],
    ) -> Result<(), String> {
        if vrs.is_empty() {
            return Ok(());
        }
        let f = self.function(self.api.get_string, "fmi2GetString")?;
        // SAFETY: pointers has vrs.len() elements.
        self.check("fmi2GetString", unsafe {
            f(self.component, vrs.as_ptr(), vrs.len(), pointers.as_mut_ptr())
        })?;
        for (p, v) in pointers.iter().zip(values.iter_mut()) {
            v.clear();
            if !p.is_null() {
                // SAFETY: the FMU returns NUL-terminated strings valid until its next call.
                v.push_str(&unsafe { CStr::from_ptr(*p) }.to_string_lossy());
            }
        }
        Ok(())
    }
    #[inline]
    pub fn do_step(&mut self, t: f64, h: f64) -> Result<(), String> {
        let f = self.function(self.api.do_step, "fmi2DoStep")?;
        // SAFETY: valid instance.
        self.check("fmi2DoStep", unsafe { f(self.component, t, h, 1) })
    }
    pub fn enter_event_mode(&mut self) -> Result<(), String> {
        let f = self.function(self.api.enter_event_mode, "fmi2EnterEventMode")?;
        // SAFETY: valid instance.
        self.check("fmi2EnterEventMode", unsafe { f(self.component) })
    }
    /// Iterates fmi2NewDiscreteStates until the FMU needs no more; returns
    /// whether it asked to terminate.
    pub fn settle_discrete_states(&mut self) -> Result<bool, String> {
        let f = self.function(self.api.new_discrete_states, "fmi2NewDiscreteStates")?;
        for _ in 0..1000 {
            let mut info = EventInfo {
                new_discrete_states_needed: 1,
                ..Default::default()
            };
            // SAFETY: valid instance and EventInfo.
            self.check("fmi2NewDiscreteStates", unsafe { f(self.component, &mut info) })?;
            if info.terminate_simulation != 0 {
                return Ok(true);
            }
            if info.new_discrete_states_needed == 0 {
                return Ok(false);
            }
        }
        Err(format!(
            "{}: fmi2NewDiscreteStates still needs iterations after 1000",
            self.label
        ))
    }
    pub fn enter_continuous_time_mode(&mut self) -> Result<(), String> {
        let f = self.function(self.api.enter_continuous_time_mode, "fmi2EnterContinuousTimeMode")?;
        // SAFETY: valid instance.
        self.check("fmi2EnterContinuousTimeMode", unsafe { f(self.component) })
    }
    /// Returns (enter event mode, terminate simulation).
    #[inline]
    pub fn completed_integrator_step(&mut self) -> Result<(bool, bool), String> {
        let f = self.function(self.api.completed_integrator_step, "fmi2CompletedIntegratorStep")?;
        let (mut event, mut terminate) = (0, 0);
        // SAFETY: valid instance and out-pointers.
        self.check("fmi2CompletedIntegratorStep", unsafe {
            f(self.component, 1, &mut event, &mut terminate)
        })?;
        Ok((event != 0, terminate != 0))
    }
    #[inline]
    pub fn set_time(&mut self, t: f64) -> Result<(), String> {
        let f = self.function(self.api.set_time, "fmi2SetTime")?;
        // SAFETY: valid instance.
        self.check("fmi2SetTime", unsafe { f(self.component, t) })
    }
    #[inline]
    pub fn set_continuous_states(&mut self, x: &[f64]) -> Result<(), String> {
        let f = self.function(self.api.set_continuous_states, "fmi2SetContinuousStates")?;
        // SAFETY: x.len() elements.
        self.check("fmi2SetContinuousStates", unsafe {
            f(self.component, x.as_ptr(), x.len())
        })
    }
    #[inline]
    pub fn get_derivatives(&mut self, dx: &mut [f64]) -> Result<(), String> {
        let f = self.function(self.api.get_derivatives, "fmi2GetDerivatives")?;
        // SAFETY: dx.len() elements.
        self.check("fmi2GetDerivatives", unsafe {
            f(self.component, dx.as_mut_ptr(), dx.len())
        })
    }
    pub fn get_continuous_states(&mut self, x: &mut [f64]) -> Result<(), String> {
        let f = self.function(self.api.get_continuous_states, "fmi2GetContinuousStates")?;
        // SAFETY: x.len() elements.
        self.check("fmi2GetContinuousStates", unsafe {
            f(self.component, x.as_mut_ptr(), x.len())
        })
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if let Some(free) = self.api.free_instance {
            // SAFETY: the instance is valid and freed once.
            unsafe { free(self.component) };
        }
    }
}
