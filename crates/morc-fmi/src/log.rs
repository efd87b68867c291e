//! What an FMU logs, kept per instance and quoted in error messages; and the
//! status check every FMI call goes through (FMI 2 and 3 share the codes).

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::Mutex;

use super::FmiError;

pub type Status = c_int;
pub const OK: Status = 0;
pub const WARNING: Status = 1;
pub const DISCARD: Status = 2;
pub const ERROR: Status = 3;
pub const FATAL: Status = 4;
/// FMI 2 only (asynchronous co-simulation steps).
pub const PENDING: Status = 5;

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

    /// "; the FMU said: …" with what it logged, or `otherwise`.
    pub fn quote(&self, otherwise: &str) -> String {
        let said = self.take();
        if said.is_empty() {
            otherwise.to_string()
        } else {
            format!("; the FMU said:\n{said}")
        }
    }

    /// Turns a status into Ok or a message naming the FMU, the call and what the FMU logged.
    #[inline]
    pub fn check(&self, label: &str, call: &'static str, status: Status) -> Result<(), FmiError> {
        if status == OK || status == WARNING {
            return Ok(());
        }
        Err(FmiError::Call { call, message: format!("{label}: {call} returned {}{}", status_name(status), self.quote(" (the FMU logged nothing)")) })
    }

    /// Records one message (called from the FMU's logger callbacks).
    pub fn push(&self, status: Status, category: &str, message: &str) {
        let mut line = format!("[{}] {category}: {message}", status_name(status));
        if line.len() > MAX_LOG_MESSAGE_LEN {
            let mut cut = MAX_LOG_MESSAGE_LEN;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
        }
        let mut m = self.messages.lock().unwrap_or_else(|e| e.into_inner());
        if m.len() == MAX_LOG_MESSAGES {
            m.remove(0);
        }
        m.push(line);
    }
}

/// A C string from the FMU as text ("" for null).
///
/// # Safety
/// `p` is null or NUL-terminated.
pub unsafe fn text(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

/// The sink behind an FMU's environment pointer.
///
/// # Safety
/// `environment` is null or the `LogSink` the instance was created with.
pub unsafe fn sink<'a>(environment: *mut c_void) -> Option<&'a LogSink> {
    (environment as *const LogSink).as_ref()
}
