//! Files that results are saved to are never replaced: `path` when it is free, else the next
//! free `NAME-001.ext`, `NAME-002.ext` … beside it (as recordings are named), taken
//! create-exclusive so two savers cannot race for one name.

use std::io::Write;
use std::path::Path;

use crate::error::{raise, ErrorKind};

/// Writes `text` to `path` or the next free name beside it; the path written. `what` names the
/// caller in errors.
pub(crate) fn write_new(path: &str, text: &str, what: &str) -> mlua::Result<String> {
    let p = Path::new(path);
    let (stem, ext) = (p.file_stem().map_or(String::new(), |s| s.to_string_lossy().into_owned()), p.extension().map_or(String::new(), |e| format!(".{}", e.to_string_lossy())));
    for k in 0..1000 {
        let candidate = if k == 0 { p.to_path_buf() } else { p.with_file_name(format!("{stem}-{k:03}{ext}")) };
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&candidate) {
            Ok(mut f) => {
                f.write_all(text.as_bytes()).map_err(|e| raise(ErrorKind::Robot, format!("{what}: writing {}: {e}", candidate.display())))?;
                return Ok(candidate.to_string_lossy().into_owned());
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(raise(ErrorKind::Robot, format!("{what}: cannot write {}: {e}", candidate.display()))),
        }
    }
    Err(raise(ErrorKind::Robot, format!("{what}: {path} and its next 999 free names exist: give another path")))
}
