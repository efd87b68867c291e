//! An FMU's shared library as a table of its C functions: each looked up
//! once at load, missing ones None (the interface check names them).

/// Declares `struct $name` with one optional function pointer per symbol and
/// `$name::load(path)`.
macro_rules! functions {
    ($(#[$doc:meta])* $name:ident, $( $field:ident : $sym:literal = fn($($arg:ty),*) -> $ret:ty ;)*) => {
        $(#[$doc])*
        pub struct $name {
            $(
                /// The C function named in the declaration; None when the library does not export it.
                pub $field: Option<unsafe extern "C" fn($($arg),*) -> $ret>,
            )*
            /// Keeps the functions above valid.
            _library: libloading::Library,
        }
        impl $name {
            /// Loads `path` and looks up every function; missing ones are None.
            pub fn load(path: &std::path::Path) -> Result<$name, $crate::FmiError> {
                // SAFETY: loading runs the library's initialisers: that is what importing an FMU means.
                let library = unsafe { libloading::Library::new(path) }
                    .map_err(|e| $crate::FmiError::Binary(format!("cannot load the FMU binary {}: {e}", path.display())))?;
                // SAFETY: the symbol types are the FMI standard's, as declared by the caller.
                unsafe {
                    Ok($name {
                        $( $field: library.get::<unsafe extern "C" fn($($arg),*) -> $ret>($sym).ok().map(|s| *s), )*
                        _library: library,
                    })
                }
            }
        }
    };
}

pub(crate) use functions;

/// Names the functions an interface needs that the binary lacks.
pub fn require(binary: &std::path::Path, present: &[(&str, bool)]) -> Result<(), crate::FmiError> {
    let missing: Vec<&str> = present.iter().filter(|(_, ok)| !ok).map(|(n, _)| *n).collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(crate::FmiError::Binary(format!("the FMU binary {} does not export {}", binary.display(), missing.join(", "))))
    }
}
