//! The FMI 2.0 and 3.0 C APIs over any morc block (see `morc_fmi::export`).
//! One shared library serves every exported model and both versions: the
//! instantiate functions find the model by its GUID or instantiation token.
//!
//! Every entry point catches panics and checks its instance pointer, so a
//! bug or a misuse gives an Error/Fatal status and a log message, never an
//! unwind into C or an abort of the host.

#![allow(non_snake_case)]
#![deny(clippy::missing_safety_doc)]

mod fmi2;
mod fmi3;
mod model;

use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use model::{Model, Phase, Status, FATAL};

/// Runs `f` on the model behind `instance`, turning a null pointer or a
/// panic into an error status instead of undefined behaviour or an abort.
fn with_model(instance: *mut c_void, call: &str, f: impl FnOnce(&mut Model) -> Status) -> Status {
    if instance.is_null() {
        return model::ERROR;
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
            model::OK
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
                model::OK
            }
            None => m.error(&format!("{call}: null array")),
        }
    })
}

unsafe fn text(s: *const c_char) -> String {
    if s.is_null() {
        String::new()
    } else {
        CStr::from_ptr(s).to_string_lossy().into_owned()
    }
}
