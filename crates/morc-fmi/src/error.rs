//! [`FmiError`]: what can go wrong opening, instantiating, calling or exporting an FMU, with the
//! message a person reads (naming the FMU file, the FMI call and what the FMU logged); the
//! variant says which step failed, so a caller can react to it without reading the text.

use std::fmt;

/// An error of morc-fmi's public API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FmiError {
    /// The `.fmu` file cannot be read or extracted: not a zip archive, rejected as hostile
    /// (paths outside the folder, a zip bomb), or the extraction cache cannot be written.
    Archive(String),
    /// modelDescription.xml is missing, not well-formed, of an FMI version morc does not run,
    /// or describes a variable morc cannot take.
    Description(String),
    /// The FMU's shared library: none for this platform, it does not load, or it lacks a
    /// function the chosen interface needs.
    Binary(String),
    /// A call into the FMU failed (returned Error, Fatal or Discard, or instantiation returned
    /// NULL), or could not be made; the message quotes what the FMU logged.
    Call {
        /// The FMI function, e.g. "fmi2DoStep".
        call: &'static str,
        /// The whole message, starting with the FMU's file name.
        message: String,
    },
    /// The FMU did what morc cannot go on with: a non-finite output, a request to end the
    /// simulation while initialising.
    Behaviour(String),
    /// Exporting a block as an FMU failed (unknown kind, the library or the output folder).
    Export(String),
}

impl FmiError {
    /// The same error with `prefix: ` in front of its message (the FMU's file name, usually).
    pub fn prefixed(self, prefix: &str) -> FmiError {
        self.map(|m| format!("{prefix}: {m}"))
    }

    /// The same error with `suffix` after its message.
    pub fn suffixed(self, suffix: &str) -> FmiError {
        self.map(|m| format!("{m}{suffix}"))
    }

    fn map(self, p: impl FnOnce(String) -> String) -> FmiError {
        match self {
            FmiError::Archive(m) => FmiError::Archive(p(m)),
            FmiError::Description(m) => FmiError::Description(p(m)),
            FmiError::Binary(m) => FmiError::Binary(p(m)),
            FmiError::Call { call, message } => FmiError::Call { call, message: p(message) },
            FmiError::Behaviour(m) => FmiError::Behaviour(p(m)),
            FmiError::Export(m) => FmiError::Export(p(m)),
        }
    }
}

impl fmt::Display for FmiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FmiError::Archive(m) | FmiError::Description(m) | FmiError::Binary(m) | FmiError::Behaviour(m) | FmiError::Export(m) => f.write_str(m),
            FmiError::Call { message, .. } => f.write_str(message),
        }
    }
}

impl std::error::Error for FmiError {}

/// For callers that still pass errors on as text (a component's methods, the CLI).
impl From<FmiError> for String {
    fn from(e: FmiError) -> Self {
        e.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixed_keeps_the_kind_and_reads_as_before() {
        let e = FmiError::Call { call: "fmi2DoStep", message: "fmi2DoStep returned Error".into() }.prefixed("a.fmu");
        assert_eq!(e.to_string(), "a.fmu: fmi2DoStep returned Error");
        assert!(matches!(e, FmiError::Call { call: "fmi2DoStep", .. }));
        let s: String = FmiError::Binary("b".into()).prefixed("x.fmu").into();
        assert_eq!(s, "x.fmu: b");
    }
}
