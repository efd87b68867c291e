//! What morc asks of one FMU instance, whatever its FMI version ([`Instance`],
//! used by the component and the model-exchange solver), and the one
//! implementation of it, [`FmuInstance`], generic over the version's C API
//! ([`Api`], implemented by `fmi2.rs` and `fmi3.rs`): instantiation, the
//! status checks, the event loop, model exchange and freeing are written
//! once here; a version gives only the calls whose C signatures differ.
//!
//! Threading: the standard does not require an FMU to be thread-safe, only
//! that calls into one instance never overlap ("FMI functions of one instance
//! do not need to be thread-safe … the multi-threaded target simulator … must
//! guarantee that there are no race conditions", FMI 3.0 §2.2.1, and the same
//! in FMI 2.0 §2.1). An instance is owned by one component, which is owned by
//! one task at a time and handed between the preparing thread, the Coordinator
//! and an Updater through channels, so its calls are serialised and each
//! sees the previous one's effects: instances are `Send`, and every call
//! happens on the thread that steps the component, without a hand-off.

use std::ffi::{c_void, CString};
use std::path::Path;
use std::sync::Arc;

use super::description::{FmiVersion, ModelDescription};
use super::log::{LogSink, Status};
use super::values::Group;
use super::{FmiError, Fmu};

/// Event iterations before giving up on an FMU that never settles.
pub const MAX_EVENT_ITERATIONS: usize = 1000;

/// An instance as the C API sees it (fmi2Component, fmi3Instance).
pub type Handle = *mut c_void;
/// A value reference (fmi2ValueReference is an unsigned int, fmi3ValueReference a uint32).
pub type Vr = u32;

/// What one discrete-state update reports (fmi2EventInfo, the out-arguments of
/// fmi3UpdateDiscreteStates), or a whole event iteration (see
/// [`Instance::settle_discrete_states`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EventInfo {
    /// Another update is needed (newDiscreteStatesNeeded, discreteStatesNeedUpdate).
    pub again: bool,
    /// The FMU asks to end the simulation.
    pub terminate: bool,
    /// The nominal values of the continuous states changed.
    pub nominals_changed: bool,
    /// The values of the continuous states changed: the importer reads them again.
    pub values_changed: bool,
    /// The next time event, when the FMU has one.
    pub next_event_time: Option<f64>,
}

/// Co-simulation or model exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interface {
    /// The FMU steps itself (doStep).
    CoSimulation,
    /// morc integrates the FMU's continuous states.
    ModelExchange,
}

/// One FMU instance. Errors name the FMU, the call and what the FMU logged.
pub trait Instance: Send {
    /// Sets the values of one type group.
    fn set(&mut self, group: &Group) -> Result<(), FmiError>;
    /// Reads the values of one type group.
    fn get(&mut self, group: &mut Group) -> Result<(), FmiError>;
    /// Enters initialisation mode with the experiment starting at `start`.
    fn enter_initialization_mode(&mut self, start: f64) -> Result<(), FmiError>;
    /// Leaves initialisation mode (for step mode, or model exchange's event mode).
    fn exit_initialization_mode(&mut self) -> Result<(), FmiError>;
    /// Co-simulation: one communication step from `t` to `t + h`; `Some(t_end)` when the FMU
    /// ended the simulation itself, its last successful time `t_end` (FMI 2: Discard with
    /// fmi2Terminated; FMI 3: terminateSimulation). Not a fault: FMPy ends such a run normally.
    fn do_step(&mut self, t: f64, h: f64) -> Result<Option<f64>, FmiError>;
    /// Ends the simulation (the instance is freed when dropped).
    fn terminate(&mut self) -> Result<(), FmiError>;

    // Model exchange.
    /// Enters event mode.
    fn enter_event_mode(&mut self) -> Result<(), FmiError>;
    /// Event mode: updates discrete states until the FMU needs no more iterations
    /// or asks to end. The result says whether it asked to end, whether the state
    /// values or nominals changed in any iteration, and the last next event time.
    fn settle_discrete_states(&mut self) -> Result<EventInfo, FmiError>;
    /// Enters continuous-time mode.
    fn enter_continuous_time_mode(&mut self) -> Result<(), FmiError>;
    /// Returns (enter event mode, terminate simulation).
    fn completed_integrator_step(&mut self) -> Result<(bool, bool), FmiError>;
    /// Sets the independent variable.
    fn set_time(&mut self, t: f64) -> Result<(), FmiError>;
    /// Sets the continuous states.
    fn set_continuous_states(&mut self, x: &[f64]) -> Result<(), FmiError>;
    /// Reads the states' derivatives.
    fn get_derivatives(&mut self, dx: &mut [f64]) -> Result<(), FmiError>;
    /// Reads the continuous states.
    fn get_continuous_states(&mut self, x: &mut [f64]) -> Result<(), FmiError>;
    /// Reads the event indicators.
    fn get_event_indicators(&mut self, z: &mut [f64]) -> Result<(), FmiError>;
}

/// A C function and its FMI name (for messages).
pub type Named<F> = (Option<F>, &'static str);
type Call0 = unsafe extern "C" fn(Handle) -> Status;
type States = unsafe extern "C" fn(Handle, *mut f64, usize) -> Status;

/// The functions FMI 2.0 and 3.0 declare with the same C signature (under
/// their own names), taken from a version's loaded library.
#[derive(Clone, Copy)]
pub struct Common {
    /// fmiXFreeInstance (called on drop; no status).
    pub free_instance: Option<unsafe extern "C" fn(Handle)>,
    /// fmiXExitInitializationMode.
    pub exit_initialization_mode: Named<Call0>,
    /// fmiXTerminate.
    pub terminate: Named<Call0>,
    /// fmiXEnterEventMode (model exchange).
    pub enter_event_mode: Named<Call0>,
    /// fmiXEnterContinuousTimeMode (model exchange).
    pub enter_continuous_time_mode: Named<Call0>,
    /// fmiXSetTime (model exchange).
    pub set_time: Named<unsafe extern "C" fn(Handle, f64) -> Status>,
    /// fmiXSetContinuousStates (model exchange).
    pub set_continuous_states: Named<unsafe extern "C" fn(Handle, *const f64, usize) -> Status>,
    /// fmi2GetDerivatives, fmi3GetContinuousStateDerivatives (model exchange).
    pub get_derivatives: Named<States>,
    /// fmiXGetContinuousStates (model exchange).
    pub get_continuous_states: Named<States>,
    /// fmiXGetEventIndicators (model exchange; needed only by FMUs that have event indicators).
    pub get_event_indicators: Named<States>,
}

impl Common {
    /// Which of these `interface` needs, as (name, present) for [`Api::check`].
    pub fn required(&self, interface: Interface) -> Vec<(&'static str, bool)> {
        fn p<F>((f, name): Named<F>) -> (&'static str, bool) {
            (name, f.is_some())
        }
        let mut present = vec![p(self.exit_initialization_mode), p(self.terminate)];
        if interface == Interface::ModelExchange {
            present.extend([p(self.enter_event_mode), p(self.enter_continuous_time_mode), p(self.set_time), p(self.set_continuous_states), p(self.get_derivatives), p(self.get_continuous_states)]);
        }
        present
    }
}

/// What instantiation passes to the FMU.
pub struct Instantiation<'a> {
    /// Co-simulation or model exchange.
    pub interface: Interface,
    /// The instance's name (the component's).
    pub instance_name: &'a CString,
    /// FMI 2 guid or FMI 3 instantiationToken.
    pub token: &'a CString,
    /// The extracted FMU's folder (each version writes its resources location its own way).
    pub folder: &'a Path,
    /// Ask the FMU for debug logging.
    pub logging: bool,
    /// The instance's [`LogSink`], for the FMU's logger callback.
    pub environment: *mut c_void,
}

/// One FMI version's C API, loaded from an FMU's shared library: the calls
/// whose C signatures differ between FMI 2.0 and 3.0.
pub trait Api: Sized + Send + 'static {
    /// Kept alive with the instance (FMI 2's callback table, which the FMU may point to).
    type Keep;
    /// Loads the library and looks up its functions.
    fn load(binary: &Path) -> Result<Self, FmiError>;
    /// The functions both versions declare alike.
    fn common(&self) -> Common;
    /// Errs naming the functions `interface` needs that the binary lacks.
    fn check(&self, interface: Interface, binary: &Path) -> Result<(), FmiError>;
    /// Calls the instantiate function: the handle (null if it failed), the call's name, and
    /// what must outlive the instance.
    fn instantiate(&self, args: &Instantiation) -> Result<(Handle, &'static str, Self::Keep), FmiError>;
    /// Sets a group's values.
    fn set(&self, c: &Calls, group: &Group) -> Result<(), FmiError>;
    /// Reads a group's values.
    fn get(&self, c: &Calls, group: &mut Group) -> Result<(), FmiError>;
    /// Enters initialisation mode (FMI 2 sets the experiment up first).
    fn enter_initialization_mode(&self, c: &Calls, start: f64) -> Result<(), FmiError>;
    /// One communication step; `Some(last successful time)` when the FMU ended the simulation.
    fn do_step(&self, c: &Calls, t: f64, h: f64) -> Result<Option<f64>, FmiError>;
    /// One discrete-state update.
    fn update_discrete_states(&self, c: &Calls) -> Result<EventInfo, FmiError>;
    /// Name of the call [`Api::update_discrete_states`] makes.
    const UPDATE_DISCRETE_STATES: &'static str;
    /// Returns (enter event mode, terminate simulation).
    fn completed_integrator_step(&self, c: &Calls) -> Result<(bool, bool), FmiError>;
}

/// An instance's handle and log, and the checked calls every version makes through them.
pub struct Calls {
    handle: Handle,
    log: Box<LogSink>,
    /// How messages name the FMU: its file.
    label: String,
}

impl Calls {
    /// The instance handle.
    pub fn handle(&self) -> Handle {
        self.handle
    }

    /// Ok, or an error naming the FMU, the call and what it logged.
    #[inline]
    pub fn check(&self, call: &'static str, status: Status) -> Result<(), FmiError> {
        self.log.check(&self.label, call, status)
    }

    /// The function `f`, or an error naming it.
    #[inline]
    pub fn function<F>(&self, (f, name): Named<F>) -> Result<F, FmiError> {
        f.ok_or_else(|| FmiError::Binary(format!("{}: the binary has no {name}", self.label)))
    }

    /// Calls a function of the instance alone.
    #[inline]
    fn call(&self, f: Named<Call0>) -> Result<(), FmiError> {
        let call = self.function(f)?;
        // SAFETY: `self.handle` is the non-null instance made in `FmuInstance::new` and freed only in its Drop, so it is live here.
        self.check(f.1, unsafe { call(self.handle) })
    }

    /// Calls a function that reads or writes the continuous states (or their derivatives).
    #[inline]
    fn states(&self, f: Named<States>, x: *mut f64, n: usize) -> Result<(), FmiError> {
        let call = self.function(f)?;
        // SAFETY: the handle is live (see `call`); the callers pass a slice's pointer and its length.
        self.check(f.1, unsafe { call(self.handle, x, n) })
    }

    /// An error for a group of a type this version has no functions for.
    pub fn unsupported(&self, version: &str, group: &Group) -> FmiError {
        FmiError::Description(format!("{}: {version} has no {:?} variables", self.label, group.ty))
    }
}

/// One instance of an FMU of either version.
pub struct FmuInstance<A: Api> {
    api: A,
    common: Common,
    calls: Calls,
    _keep: A::Keep,
}

// SAFETY: calls into one instance are serialised by its owner (see the module's doc); FMI asks no more.
unsafe impl<A: Api> Send for FmuInstance<A> {}

impl<A: Api> FmuInstance<A> {
    /// Loads the binary, checks it has what `interface` needs and instantiates it with the
    /// model description's GUID or instantiation token (the FMU checks it).
    pub fn new(fmu: &Fmu, binary: &Path, interface: Interface, instance_name: &str, logging: bool) -> Result<Self, FmiError> {
        let label = fmu.label.as_str();
        let api = A::load(binary).map_err(|e| e.prefixed(label))?;
        api.check(interface, binary).map_err(|e| e.prefixed(label))?;
        let cstr = |s: &str| CString::new(s).map_err(|_| FmiError::Description(format!("{label}: text contains a NUL byte: {s:?}")));
        let (name, token) = (cstr(instance_name)?, cstr(&fmu.description.token)?);
        let log = Box::<LogSink>::default();
        let args = Instantiation { interface, instance_name: &name, token: &token, folder: &fmu.folder, logging, environment: &*log as *const LogSink as *mut c_void };
        let (handle, call, keep) = api.instantiate(&args).map_err(|e| e.prefixed(label))?;
        if handle.is_null() {
            return Err(FmiError::Call { call, message: format!("{label}: {call} failed (returned NULL){}", log.quote("")) });
        }
        let common = api.common();
        Ok(FmuInstance { api, common, calls: Calls { handle, log, label: label.into() }, _keep: keep })
    }

    /// The C functions and the instance handle, for callers that measure
    /// the raw API (the benchmark's floor).
    pub fn api(&self) -> &A {
        &self.api
    }
    /// The instance handle the C functions take.
    pub fn handle(&self) -> Handle {
        self.calls.handle
    }
}

impl<A: Api> Instance for FmuInstance<A> {
    #[inline]
    fn set(&mut self, g: &Group) -> Result<(), FmiError> {
        if g.is_empty() {
            return Ok(());
        }
        self.api.set(&self.calls, g)
    }
    #[inline]
    fn get(&mut self, g: &mut Group) -> Result<(), FmiError> {
        if g.is_empty() {
            return Ok(());
        }
        self.api.get(&self.calls, g)
    }
    fn enter_initialization_mode(&mut self, start: f64) -> Result<(), FmiError> {
        self.api.enter_initialization_mode(&self.calls, start)
    }
    fn exit_initialization_mode(&mut self) -> Result<(), FmiError> {
        self.calls.call(self.common.exit_initialization_mode)
    }
    #[inline]
    fn do_step(&mut self, t: f64, h: f64) -> Result<Option<f64>, FmiError> {
        self.api.do_step(&self.calls, t, h)
    }
    fn terminate(&mut self) -> Result<(), FmiError> {
        self.calls.call(self.common.terminate)
    }
    fn enter_event_mode(&mut self) -> Result<(), FmiError> {
        self.calls.call(self.common.enter_event_mode)
    }
    fn settle_discrete_states(&mut self) -> Result<EventInfo, FmiError> {
        let (mut values_changed, mut nominals_changed) = (false, false);
        for _ in 0..MAX_EVENT_ITERATIONS {
            let info = self.api.update_discrete_states(&self.calls)?;
            // A change in any iteration counts: the states are read once, after the last.
            values_changed |= info.values_changed;
            nominals_changed |= info.nominals_changed;
            if info.terminate || !info.again {
                return Ok(EventInfo { again: false, values_changed, nominals_changed, ..info });
            }
        }
        let call = A::UPDATE_DISCRETE_STATES;
        Err(FmiError::Call { call, message: format!("{}: {call} still needs iterations after {MAX_EVENT_ITERATIONS}", self.calls.label) })
    }
    fn enter_continuous_time_mode(&mut self) -> Result<(), FmiError> {
        self.calls.call(self.common.enter_continuous_time_mode)
    }
    #[inline]
    fn completed_integrator_step(&mut self) -> Result<(bool, bool), FmiError> {
        self.api.completed_integrator_step(&self.calls)
    }
    #[inline]
    fn set_time(&mut self, t: f64) -> Result<(), FmiError> {
        let f = self.common.set_time;
        let call = self.calls.function(f)?;
        // SAFETY: the handle is live (see `Calls::call`).
        self.calls.check(f.1, unsafe { call(self.calls.handle, t) })
    }
    #[inline]
    fn set_continuous_states(&mut self, x: &[f64]) -> Result<(), FmiError> {
        let f = self.common.set_continuous_states;
        let call = self.calls.function(f)?;
        // SAFETY: the handle is live (see `Calls::call`); the FMU reads x.len() elements from `x`.
        self.calls.check(f.1, unsafe { call(self.calls.handle, x.as_ptr(), x.len()) })
    }
    #[inline]
    fn get_derivatives(&mut self, dx: &mut [f64]) -> Result<(), FmiError> {
        self.calls.states(self.common.get_derivatives, dx.as_mut_ptr(), dx.len())
    }
    fn get_continuous_states(&mut self, x: &mut [f64]) -> Result<(), FmiError> {
        self.calls.states(self.common.get_continuous_states, x.as_mut_ptr(), x.len())
    }
    #[inline]
    fn get_event_indicators(&mut self, z: &mut [f64]) -> Result<(), FmiError> {
        self.calls.states(self.common.get_event_indicators, z.as_mut_ptr(), z.len())
    }
}

impl<A: Api> Drop for FmuInstance<A> {
    fn drop(&mut self) {
        if let Some(free) = self.common.free_instance {
            // SAFETY: the handle is the non-null instance made in `new`; Drop runs once, so it is freed once and never used after.
            unsafe { free(self.calls.handle) };
        }
    }
}

/// Loads the FMU's binary for `interface` and instantiates it.
pub fn instantiate(fmu: &Arc<Fmu>, interface: Interface, instance_name: &str, logging: bool) -> Result<Box<dyn Instance>, FmiError> {
    let md: &ModelDescription = &fmu.description;
    let identifier = match interface {
        Interface::CoSimulation => md.co_simulation.as_deref(),
        Interface::ModelExchange => md.model_exchange.as_deref(),
    };
    let binary = fmu.binary(identifier.unwrap_or_default())?;
    Ok(match md.version {
        FmiVersion::V2 => Box::new(super::fmi2::Instance::new(fmu, &binary, interface, instance_name, logging)?),
        FmiVersion::V3 => Box::new(super::fmi3::Instance::new(fmu, &binary, interface, instance_name, logging)?),
    })
}
