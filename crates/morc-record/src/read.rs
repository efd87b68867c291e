//! Reading recordings back: a summary for people (`morc rec info FILE`), and
//! the checked reads the plots use. Files come from anywhere: whatever they
//! hold, the answer is the content or an error naming the file, never a
//! panic or an allocation the file's size does not justify
//! (tests/fuzz_recording.rs).

use crate::RecordError;
use std::fmt::Write;
use std::path::Path;

use hdf5::types::{FloatSize, TypeDescriptor, VarLenAscii, VarLenUnicode};
use hdf5::{Attribute, Dataset, File, Group, Location};
use hdf5_metno as hdf5;

/// A description of the recording at `path`: its attributes, every dataset
/// (shape, type, unit, description), the assembly and its timing.
pub fn info(path: &Path) -> Result<String, RecordError> {
    if crate::is_mcap(path) {
        return crate::mcap::info(path);
    }
    let file = open(path)?;
    describe(&file, path).map_err(|e| RecordError::Read(format!("reading {}: {e}", path.display())))
}

/// Opens the recording at `path` for reading; the error names the file.
pub fn open(path: &Path) -> Result<File, RecordError> {
    if path.is_dir() {
        return Err(RecordError::Read(format!("{} is a folder, not a recording", path.display())));
    }
    let file = File::open(path).map_err(|e| {
        RecordError::Read(if path.exists() { format!("cannot read {} as HDF5 ({e}): not a recording, or a damaged one", path.display()) } else { format!("no file {}", path.display()) })
    })?;
    // As the writer's: a child process must not inherit HDF5's lock on it (writer.rs).
    crate::writer::close_on_exec(&file).map_err(|e| RecordError::Read(format!("{}: {e}", path.display())))?;
    Ok(file)
}

/// How long a reading of an outside file may take in [`isolated`] before it
/// counts as hung: far beyond any real recording's read.
pub const READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Runs `read` (which reads the recording at `path` and gives an exit code)
/// in a child process, and answers its exit code — or, when the HDF5 C
/// library crashes or loops on a damaged file (libhdf5 1.10 does on some,
/// see tests/fuzz_recording.rs), an error naming the file and what happened.
/// The child's output goes where this process's goes.
///
/// Call it only while this process uses HDF5 on no other thread (the child
/// inherits the library's lock as it was): the command line's `morc rec
/// info` and `morc plot`.
pub fn isolated(path: &Path, timeout: std::time::Duration, read: impl FnOnce() -> i32) -> Result<i32, String> {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: the child only runs `read`, flushes and leaves with _exit (no
    // destructors, no atexit handlers of the parent's).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("cannot read {}: cannot start a reader process: {}", path.display(), std::io::Error::last_os_error()));
    }
    if pid == 0 {
        let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(read)).unwrap_or(101);
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
        // SAFETY: _exit takes no pointers and never returns; in the forked child it skips the parent's
        // destructors and atexit handlers, which must not run twice.
        unsafe { libc::_exit(code) };
    }
    let start = std::time::Instant::now();
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: `status` is a live c_int for waitpid to write; `pid` is our own child, reaped only here.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            if libc::WIFEXITED(status) {
                return Ok(libc::WEXITSTATUS(status));
            }
            let signal = if libc::WIFSIGNALED(status) { libc::WTERMSIG(status) } else { 0 };
            return Err(format!("cannot read {}: the HDF5 library crashed on it (signal {signal}): the file is damaged or not a recording", path.display()));
        }
        if r < 0 {
            return Err(format!("cannot read {}: lost the reader process: {}", path.display(), std::io::Error::last_os_error()));
        }
        if start.elapsed() > timeout {
            // SAFETY: `pid` is our own child, not yet reaped (so the pid cannot have been reused); `status` is a live c_int.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            return Err(format!("cannot read {}: the HDF5 library was still reading it after {} s (a loop in a damaged file); stopped", path.display(), timeout.as_secs()));
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

/// Least room a dataset may take when read, whatever its file's size.
const MIN_READ_BYTES: u64 = 64 << 20;
/// How much larger than its file a dataset may be: deflate compresses by
/// 1032:1 at most, so a real dataset is never larger than this.
const MAX_EXPANSION: u64 = 1100;

/// All of `ds` as f64 (integers and booleans converted). Its size, and its
/// chunks' size, are checked against what the file could hold before
/// anything is allocated: a small damaged or crafted file cannot make the
/// reader allocate gigabytes.
pub fn read_reals(ds: &Dataset, path: &Path) -> Result<Vec<f64>, String> {
    let name = ds.name().trim_start_matches('/').to_string();
    let file_bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let limit = file_bytes.saturating_mul(MAX_EXPANSION).max(MIN_READ_BYTES);
    let bytes = |dims: &[usize]| dims.iter().try_fold(8u64, |n, &d| n.checked_mul(d as u64));
    let too_big = |what: &str, dims: &[usize]| format!("'{name}' in {}: its {what} {dims:?} is more than the file ({file_bytes} bytes) can hold: a damaged file?", path.display());
    let shape = ds.shape();
    if bytes(&shape).is_none_or(|b| b > limit) {
        return Err(too_big("shape", &shape));
    }
    if let Some(chunk) = ds.chunk() {
        if bytes(&chunk).is_none_or(|b| b > limit) {
            return Err(too_big("chunk shape", &chunk));
        }
    }
    let numeric = ds
        .dtype()
        .and_then(|t| t.to_descriptor())
        .is_ok_and(|d| matches!(d, TypeDescriptor::Float(_) | TypeDescriptor::Integer(_) | TypeDescriptor::Unsigned(_) | TypeDescriptor::Boolean));
    if !numeric {
        return Err(format!("'{name}' in {} does not hold numbers: not a recorded signal", path.display()));
    }
    ds.read_raw::<f64>().map_err(|e| format!("reading '{name}' in {}: {e}", path.display()))
}

fn describe(file: &File, path: &Path) -> hdf5::Result<String> {
    let mut s = String::new();
    let _ = writeln!(s, "{}", path.display());
    let _ = writeln!(s, "attributes:");
    for (name, value) in attributes(file)? {
        let _ = writeln!(s, "  {name:<16} {value}");
    }
    let write_error = text_attr(file, "write_error");
    if !write_error.is_empty() {
        let samples = text_attr(file, "samples").parse::<u64>().unwrap_or(0);
        let period = file.attr("sample_period").and_then(|a| a.read_scalar::<f64>()).unwrap_or(0.0);
        let _ = writeln!(s, "{}", stopped_early(&write_error, samples, samples as f64 * period));
    } else if text_attr(file, "complete") != "1" {
        let samples = text_attr(file, "samples").parse::<u64>().unwrap_or(0);
        let period = file.attr("sample_period").and_then(|a| a.read_scalar::<f64>()).unwrap_or(0.0);
        let _ = writeln!(s, "{}", cut_short(path, samples, samples as f64 * period));
    }

    let mut rows = Vec::new();
    for ds in file.datasets()? {
        let name = ds.name().trim_start_matches('/').to_string();
        let shape = format!("{:?}", ds.shape());
        let dtype = ds.dtype()?.to_descriptor().map(|d| d.to_string()).unwrap_or_else(|_| "?".into());
        let unit = text_attr(&ds, "unit");
        let doc = text_attr(&ds, "description");
        rows.push((name, shape, dtype, unit, doc));
    }
    // Time first, then signals by name.
    rows.sort_by(|a, b| (a.0 != "time", &a.0).cmp(&(b.0 != "time", &b.0)));
    let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(4).max(7);
    let _ = writeln!(s, "datasets:");
    let _ = writeln!(s, "  {:<w$} {:<14} {:<9} {:<10} description", "name", "shape", "dtype", "unit");
    for (name, shape, dtype, unit, doc) in &rows {
        let _ = writeln!(s, "  {name:<w$} {shape:<14} {dtype:<9} {unit:<10} {doc}");
    }

    if let Ok(assembly) = file.group("assembly") {
        let _ = writeln!(s, "assembly '{}':", text_attr(&assembly, "name"));
        for c in sorted_groups(&assembly)? {
            let name = c.name().rsplit('/').next().unwrap_or_default().to_string();
            let params = c
                .group("parameters")
                .ok()
                .and_then(|p| attributes(&p).ok())
                .map(|a| a.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "))
                .unwrap_or_default();
            let _ = writeln!(s, "  {name:<16} {:<12} every {:<4} ({} s)  {params}", text_attr(&c, "kind"), text_attr(&c, "every"), text_attr(&c, "sample_time"));
        }
    }
    if let Ok(timing) = file.group("timing") {
        let _ = writeln!(s, "timing (execution time per step):");
        let _ = writeln!(s, "  {:<16} {:>8} {:>10} {:>10} {:>10} {:>8}", "component", "steps", "mean", "p99", "max", "overruns");
        for c in sorted_groups(&timing)? {
            let name = c.name().rsplit('/').next().unwrap_or_default().to_string();
            let secs = |k: &str| c.attr(k).and_then(|a| a.read_scalar::<f64>()).map(human_s).unwrap_or_default();
            let _ = writeln!(s, "  {name:<16} {:>8} {:>10} {:>10} {:>10} {:>8}", text_attr(&c, "count"), secs("mean"), secs("p99"), secs("max"), text_attr(&c, "overruns"));
        }
    }
    Ok(s)
}

/// The line `morc rec info` gives a file whose recording stopped because writing failed.
pub(crate) fn stopped_early(cause: &str, samples: u64, seconds: f64) -> String {
    format!("stopped early: writing failed ({cause}); the run closed the file with the {samples} samples ({seconds:.3} s) written before — not a crash, nothing to repair")
}

/// The line `morc rec info` gives a file its run did not close.
pub(crate) fn cut_short(path: &Path, samples: u64, seconds: f64) -> String {
    format!("cut short: the run did not close this file (a crash or kill); it holds {samples} samples ({seconds:.3} s) — if a reader refuses it, `morc rec repair {}`", path.display())
}

pub(crate) fn sorted_groups(g: &Group) -> hdf5::Result<Vec<Group>> {
    let mut groups = g.groups()?;
    groups.sort_by_key(|g| g.name());
    Ok(groups)
}

pub(crate) fn human_s(x: f64) -> String {
    if x < 1e-6 {
        format!("{:.0} ns", x * 1e9)
    } else if x < 1e-3 {
        format!("{:.1} µs", x * 1e6)
    } else {
        format!("{:.2} ms", x * 1e3)
    }
}

/// The names of `loc`'s attributes, asked one by one. (hdf5-metno's
/// `attr_names` converts each attribute's character-set code into a Rust
/// enum unchecked: a damaged file's stray code made it allocate without
/// bound — tests/fuzz_recording.rs.) At most 10 000 names of 64 KiB each.
fn attr_names(loc: &Location) -> Vec<String> {
    use hdf5_metno_sys::h5::{H5_index_t, H5_iter_order_t};
    let mut names = Vec::new();
    for idx in 0..10_000u64 {
        let name = hdf5::sync::sync(|| {
            let get = |buf: *mut libc::c_char, size: usize| {
                // SAFETY: a valid location id, "." (the object itself), and a buffer of `size` bytes (or none).
                unsafe { hdf5_metno_sys::h5a::H5Aget_name_by_idx(loc.id(), c".".as_ptr(), H5_index_t::H5_INDEX_NAME, H5_iter_order_t::H5_ITER_INC, idx, buf, size, hdf5_metno_sys::h5p::H5P_DEFAULT) }
            };
            let len = get(std::ptr::null_mut(), 0);
            if !(0..=65_536).contains(&len) {
                return None;
            }
            let mut buf = vec![0u8; len as usize + 1];
            if get(buf.as_mut_ptr().cast(), buf.len()) < 0 {
                return None;
            }
            buf.truncate(len as usize);
            Some(String::from_utf8_lossy(&buf).into_owned())
        });
        match name {
            Some(n) => names.push(n),
            None => break,
        }
    }
    names
}

/// Every attribute of `loc` as (name, value as text), sorted by name.
fn attributes(loc: &Location) -> hdf5::Result<Vec<(String, String)>> {
    let mut names = attr_names(loc);
    names.sort();
    Ok(names
        .into_iter()
        .map(|n| {
            let v = loc.attr(&n).map(|a| attr_text(&a)).unwrap_or_else(|e| format!("<{e}>"));
            (n, v)
        })
        .collect())
}

/// Every attribute of `loc` as a value (numbers, integers, text, vectors of numbers), sorted by name.
pub(crate) fn attribute_values(loc: &Location) -> Vec<(String, morc_kernel::Value)> {
    use morc_kernel::Value;
    let mut names = attr_names(loc);
    names.sort();
    names
        .into_iter()
        .filter_map(|n| {
            let a = loc.attr(&n).ok()?;
            let desc = a.dtype().and_then(|t| t.to_descriptor()).ok()?;
            let v = match desc {
                TypeDescriptor::Float(_) if a.is_scalar() => Value::Real(a.read_scalar::<f64>().ok()?),
                TypeDescriptor::Float(_) => Value::Vector(a.read_raw::<f64>().ok()?),
                TypeDescriptor::Integer(_) => Value::Integer(a.read_scalar::<i64>().ok()?),
                // Booleans are stored as u8.
                TypeDescriptor::Unsigned(_) => Value::Boolean(a.read_scalar::<u8>().ok()? != 0),
                TypeDescriptor::VarLenUnicode | TypeDescriptor::VarLenAscii => Value::String(attr_text(&a)),
                _ => return None,
            };
            Some((n, v))
        })
        .collect()
}

/// An attribute's value as text ("" when absent).
/// A list-of-strings attribute (`element_units`, `element_names`); empty when absent.
pub(crate) fn string_list(loc: &Location, name: &str) -> Vec<String> {
    let Ok(a) = loc.attr(name) else { return Vec::new() };
    a.read_raw::<VarLenUnicode>()
        .map(|v| v.iter().map(|s| s.to_string()).collect())
        .or_else(|_| a.read_raw::<VarLenAscii>().map(|v| v.iter().map(|s| s.to_string()).collect()))
        .unwrap_or_default()
}

pub(crate) fn text_attr(loc: &Location, name: &str) -> String {
    loc.attr(name).map(|a| attr_text(&a)).unwrap_or_default()
}

fn attr_text(a: &Attribute) -> String {
    let Ok(desc) = a.dtype().and_then(|t| t.to_descriptor()) else {
        return "<unreadable type>".into();
    };
    let scalar = a.is_scalar();
    let joined = |v: Vec<String>| if scalar { v.join("") } else { format!("[{}]", v.join(", ")) };
    let r = match desc {
        TypeDescriptor::Float(FloatSize::U8) | TypeDescriptor::Float(_) => a.read_raw::<f64>().map(|v| joined(v.iter().map(|x| x.to_string()).collect())),
        TypeDescriptor::Integer(_) => a.read_raw::<i64>().map(|v| joined(v.iter().map(|x| x.to_string()).collect())),
        TypeDescriptor::Unsigned(_) => a.read_raw::<u64>().map(|v| joined(v.iter().map(|x| x.to_string()).collect())),
        TypeDescriptor::VarLenUnicode => a.read_raw::<VarLenUnicode>().map(|v| joined(v.iter().map(|x| x.to_string()).collect())),
        TypeDescriptor::VarLenAscii => a.read_raw::<VarLenAscii>().map(|v| joined(v.iter().map(|x| x.to_string()).collect())),
        other => return format!("<{other}>"),
    };
    r.unwrap_or_else(|e| format!("<{e}>"))
}
