//! [`RecordError`]: what can go wrong creating, writing, reading or plotting a recording, with
//! the same message a person reads (naming the file and what to do).

use std::fmt;

/// An error of a recording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordError {
    /// A recording cannot be created or written (no such folder, no permission, disk full).
    Write(String),
    /// A recording cannot be opened or read: no such file, not HDF5, not a morc recording,
    /// damaged.
    Read(String),
    /// Signal patterns that select nothing in the recording (the message lists what there is).
    Signals(String),
    /// A plot cannot be drawn or written.
    Plot(String),
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordError::Write(m) | RecordError::Read(m) | RecordError::Signals(m) | RecordError::Plot(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for RecordError {}

/// For callers that still pass errors on as text.
impl From<RecordError> for String {
    fn from(e: RecordError) -> Self {
        e.to_string()
    }
}
