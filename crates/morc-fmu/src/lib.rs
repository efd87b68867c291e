//! The FMI 2.0 and 3.0 C APIs over any morc block (see `morc_fmi::export`).
//! One shared library serves every exported model and both versions: the
//! instantiate functions find the model by its GUID or instantiation token.
//!
//! Every entry point catches panics and checks its instance pointer, so a
//! bug or a misuse gives an Error/Fatal status and a log message, never an
//! unwind into C or an abort of the host.

#![allow(non_snake_case)]
#![deny(clippy::missing_safety_doc)]
#![warn(missing_docs)]

/// Optional capabilities this FMU declares it does not have: each entry point
/// returns an error with a message, as the standard asks (importers bind every
/// function of their FMI version when they load the library).
macro_rules! unsupported {
    ($($fn:ident ( $($arg:ident : $ty:ty),* ) $what:literal;)*) => {
        $(
            #[doc = concat!(stringify!($fn), ": not supported; returns an error with a message.")]
            ///
            /// # Safety
            /// `c` is null or a live instance returned by this library's instantiate function and not yet freed; the other arguments are not read.
            #[no_mangle]
            pub unsafe extern "C" fn $fn(c: *mut std::ffi::c_void, $($arg: $ty),*) -> $crate::instance::Status {
                $(let _ = $arg;)*
                $crate::with_model(c, stringify!($fn), |m| m.error(concat!(stringify!($fn), ": ", $what)))
            }
        )*
    };
}

/// The model-exchange entry points FMI 2.0 and 3.0 declare alike, under each version's names.
macro_rules! model_exchange_functions {
    ($set_time:ident, $set_states:ident, $get_states:ident, $derivatives:ident, $nominals:ident, $indicators:ident, $event_mode:ident, $continuous_mode:ident) => {
        #[doc = concat!(stringify!($set_time), ": sets the independent variable, time (s) (model exchange).")]
        ///
        /// # Safety
        /// `c` is null or a live instance returned by this library's instantiate function and not yet freed; calls into one instance are not concurrent.
        #[no_mangle]
        pub unsafe extern "C" fn $set_time(c: *mut std::ffi::c_void, t: f64) -> $crate::instance::Status {
            $crate::set_time(c, stringify!($set_time), t)
        }
        #[doc = concat!(stringify!($set_states), ": sets the continuous states (model exchange).")]
        ///
        /// # Safety
        /// As for the time; `x` is null or points at `n` values.
        #[no_mangle]
        pub unsafe extern "C" fn $set_states(c: *mut std::ffi::c_void, x: *const f64, n: usize) -> $crate::instance::Status {
            $crate::with_states(c, stringify!($set_states), x as *mut f64, n, |m, x| m.set_states(x))
        }
        #[doc = concat!(stringify!($get_states), ": reads the continuous states (model exchange).")]
        ///
        /// # Safety
        /// As for the time; `x` is null or points at `n` writable values.
        #[no_mangle]
        pub unsafe extern "C" fn $get_states(c: *mut std::ffi::c_void, x: *mut f64, n: usize) -> $crate::instance::Status {
            $crate::with_states(c, stringify!($get_states), x, n, |m, x| m.states(x))
        }
        #[doc = concat!(stringify!($derivatives), ": the derivatives of the continuous states (model exchange).")]
        ///
        /// # Safety
        /// As for the time; `dx` is null or points at `n` writable values.
        #[no_mangle]
        pub unsafe extern "C" fn $derivatives(c: *mut std::ffi::c_void, dx: *mut f64, n: usize) -> $crate::instance::Status {
            $crate::with_states(c, stringify!($derivatives), dx, n, |m, dx| m.derivatives(dx))
        }
        #[doc = concat!(stringify!($nominals), ": nominal values of the continuous states, all 1 (model exchange).")]
        ///
        /// # Safety
        /// As for the time; `x` is null or points at `n` writable values.
        #[no_mangle]
        pub unsafe extern "C" fn $nominals(c: *mut std::ffi::c_void, x: *mut f64, n: usize) -> $crate::instance::Status {
            $crate::with_states(c, stringify!($nominals), x, n, |_, x| x.fill(1.0))
        }
        #[doc = concat!(stringify!($indicators), ": event indicators (the blocks have none) (model exchange).")]
        ///
        /// # Safety
        /// As for the time; `_z` is not read.
        #[no_mangle]
        pub unsafe extern "C" fn $indicators(c: *mut std::ffi::c_void, _z: *mut f64, n: usize) -> $crate::instance::Status {
            $crate::event_indicators(c, stringify!($indicators), n)
        }
        #[doc = concat!(stringify!($event_mode), ": enters event mode (model exchange).")]
        ///
        /// # Safety
        /// As for the time.
        #[no_mangle]
        pub unsafe extern "C" fn $event_mode(c: *mut std::ffi::c_void) -> $crate::instance::Status {
            $crate::model_exchange_mode(c, stringify!($event_mode))
        }
        #[doc = concat!(stringify!($continuous_mode), ": enters continuous-time mode (model exchange).")]
        ///
        /// # Safety
        /// As for the time.
        #[no_mangle]
        pub unsafe extern "C" fn $continuous_mode(c: *mut std::ffi::c_void) -> $crate::instance::Status {
            $crate::model_exchange_mode(c, stringify!($continuous_mode))
        }
    };
}

mod fmi2;
mod fmi3;
mod instance;

use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use instance::{Model, Phase, Status, FATAL};
use morc_kernel::{Value, ValueType};

/// Runs `f` on the model behind `instance`, turning a null pointer or a
/// panic into an error status instead of undefined behaviour or an abort.
fn with_model(instance: *mut c_void, call: &str, f: impl FnOnce(&mut Model) -> Status) -> Status {
    if instance.is_null() {
        return instance::ERROR;
    }
    // SAFETY: non-null instances are only made by the instantiate functions and freed by the free function.
    let model = unsafe { &mut *(instance as *mut Model) };
    match catch_unwind(AssertUnwindSafe(|| f(model))) {
        Ok(status) => status,
        Err(panic) => {
            let what = panic.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| panic.downcast_ref::<String>().cloned()).unwrap_or_default();
            let _ = catch_unwind(AssertUnwindSafe(|| {
                model.phase = Phase::Failed;
                model.log(FATAL, "logStatusFatal", &format!("{call}: internal error (panic): {what}"));
            }));
            FATAL
        }
    }
}

/// Boxes a model for C, or null (after logging why) on failure or panic.
fn instantiate(make: impl FnOnce() -> Result<Model, ()>) -> *mut c_void {
    match catch_unwind(AssertUnwindSafe(make)) {
        Ok(Ok(model)) => Box::into_raw(Box::new(model)) as *mut c_void,
        _ => std::ptr::null_mut(),
    }
}

/// Frees a model made by [`instantiate`].
unsafe fn free(instance: *mut c_void) {
    if !instance.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| drop(Box::from_raw(instance as *mut Model))));
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

/// fmiXSetTime of both versions: model exchange only.
fn set_time(c: *mut c_void, call: &str, t: f64) -> Status {
    with_model(c, call, |m| match m.model_exchange(call) {
        Ok(_) => {
            m.set_time(t);
            instance::OK
        }
        Err(s) => s,
    })
}

/// A model-exchange call on an array of the states' size (both FMI versions).
unsafe fn with_states<T>(c: *mut c_void, call: &str, p: *mut T, n: usize, f: impl FnOnce(&mut Model, &mut [T])) -> Status {
    with_model(c, call, |m| {
        let states = match m.model_exchange(call) {
            Ok(states) => states,
            Err(s) => return s,
        };
        if n != states {
            return m.error(&format!("{call}: {n} values given, the model has {states} states"));
        }
        match slice_mut(p, n) {
            Some(values) => {
                f(m, values);
                instance::OK
            }
            None => m.error(&format!("{call}: null array")),
        }
    })
}

/// A getter of either version: `n` values for `nvr` references (scalars only, so
/// they must be equal; FMI 2 passes `nvr` for both), each read as `ty` and converted.
#[allow(clippy::too_many_arguments)]
unsafe fn get_values<T>(c: *mut c_void, call: &str, vr: *const u32, nvr: usize, value: *mut T, n: usize, ty: ValueType, convert: impl Fn(&mut Model, Value) -> T) -> Status {
    with_model(c, call, |m| {
        if n != nvr {
            return m.error(&format!("{call}: nValues differs from nValueReferences, but this model has no arrays"));
        }
        let (Some(vrs), Some(values)) = (slice(vr, nvr), slice_mut(value, n)) else {
            return m.error(&format!("{call}: null array"));
        };
        for (vr, out) in vrs.iter().zip(values.iter_mut()) {
            match m.get(*vr, ty) {
                Ok(v) => *out = convert(m, v),
                Err(s) => return s,
            }
        }
        instance::OK
    })
}

/// A setter of either version (see [`get_values`]).
unsafe fn set_values<T: Copy>(c: *mut c_void, call: &str, vr: *const u32, nvr: usize, value: *const T, n: usize, convert: impl Fn(T) -> Value) -> Status {
    with_model(c, call, |m| {
        if n != nvr {
            return m.error(&format!("{call}: nValues differs from nValueReferences, but this model has no arrays"));
        }
        let (Some(vrs), Some(values)) = (slice(vr, nvr), slice(value, n)) else {
            return m.error(&format!("{call}: null array"));
        };
        for (vr, v) in vrs.iter().zip(values) {
            if let Err(s) = m.set(*vr, convert(*v)) {
                return s;
            }
        }
        instance::OK
    })
}

/// fmiXSetDebugLogging of both versions (categories are not told apart).
fn set_debug_logging(c: *mut c_void, call: &str, on: bool) -> Status {
    with_model(c, call, |m| {
        m.logging_on = on;
        instance::OK
    })
}

/// Event and continuous-time mode: morc's ODE blocks have no events, so these only check the state machine.
fn model_exchange_mode(c: *mut c_void, call: &str) -> Status {
    with_model(c, call, |m| m.model_exchange(call).map_or_else(|s| s, |_| instance::OK))
}

/// fmiXGetEventIndicators of both versions: the models have none.
fn event_indicators(c: *mut c_void, call: &str, n: usize) -> Status {
    with_model(c, call, |m| if n == 0 { instance::OK } else { m.error(&format!("{call}: the model has no event indicators")) })
}

/// fmiXCompletedIntegratorStep of both versions: never an event, never the end.
unsafe fn completed_integrator_step<T: From<bool>>(c: *mut c_void, call: &str, event: *mut T, terminate: *mut T) -> Status {
    with_model(c, call, |m| {
        if let Err(s) = m.model_exchange(call) {
            return s;
        }
        if event.is_null() || terminate.is_null() {
            return m.error(&format!("{call}: null pointer"));
        }
        *event = T::from(false);
        *terminate = T::from(false);
        instance::OK
    })
}

unsafe fn text(s: *const c_char) -> String {
    if s.is_null() {
        String::new()
    } else {
        CStr::from_ptr(s).to_string_lossy().into_owned()
    }
}
