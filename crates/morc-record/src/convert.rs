//! A whole recording in memory, read from HDF5 or MCAP and written as
//! either: `morc rec convert A.h5 B.mcap` and back. The writing goes through
//! the same file writers as a run's recording, so a converted file is laid
//! out as a recorded one.

use std::path::Path;

use hdf5_metno as hdf5;

use super::recorder::{ComponentMetadata, RecordingMetadata};
use super::writer::{create_sink, is_mcap, FileHeader, SignalColumn, TimingEntry};
use crate::RecordError;
use morc_kernel::{Value, ValueType};

/// A recording as read back: its header, signals, rows and timing.
#[derive(Clone, Debug)]
pub(crate) struct Contents {
    pub header: FileHeader,
    pub columns: Vec<SignalColumn>,
    /// Row-major, `width` samples a row: time, then each column.
    pub rows: Vec<f64>,
    pub width: usize,
    pub dropped: u64,
    /// Whether the file was closed cleanly.
    pub complete: bool,
    /// Why its recording stopped early (a full disk); empty: it did not.
    pub write_error: String,
    pub timing: Vec<TimingEntry>,
}

impl Contents {
    /// Rows held.
    pub fn samples(&self) -> usize {
        self.rows.len() / self.width.max(1)
    }
}

/// "real", "integer", "boolean", "vector[n]" as `ValueType` writes them.
pub(crate) fn parse_type(text: &str) -> Option<ValueType> {
    match text {
        "real" => Some(ValueType::Real),
        "integer" => Some(ValueType::Integer),
        "boolean" => Some(ValueType::Boolean),
        _ => text.strip_prefix("vector[")?.strip_suffix(']')?.parse().ok().map(ValueType::Vector),
    }
}

/// Lays out `signals` (name, type, unit, description) as ring columns; time is column 0.
pub(crate) fn columns_of(signals: Vec<(String, ValueType, String, String)>) -> (Vec<SignalColumn>, usize) {
    let mut offset = 1;
    let columns = signals
        .into_iter()
        .map(|(name, ty, unit, description)| {
            let width = match ty {
                ValueType::Vector(n) => n,
                _ => 1,
            };
            let c = SignalColumn { name, ty, unit, element_units: Vec::new(), element_names: Vec::new(), description, offset, width };
            offset += width;
            c
        })
        .collect();
    (columns, offset)
}

/// Reads the whole recording at `path`, HDF5 or MCAP by its extension.
pub(crate) fn read(path: &Path) -> Result<Contents, RecordError> {
    if is_mcap(path) {
        crate::mcap::read(path)
    } else {
        read_hdf5(path, false)
    }
}

/// Reads what can be read of the recording at `path`, for `morc rec
/// repair`: an MCAP file up to its first broken record; of an HDF5 file the
/// rows every dataset holds readably (a dataset is read chunk by chunk up to
/// its first broken chunk) with times increasing. The contents say whether
/// the file was complete and nothing was missing.
pub(crate) fn read_what_is_readable(path: &Path) -> Result<Contents, RecordError> {
    if is_mcap(path) {
        crate::mcap::read(path)
    } else {
        read_hdf5(path, true)
    }
}

/// All of `ds` as f64, or with `tolerant` its rows up to the first that do not read.
fn read_rows(ds: &hdf5::Dataset, path: &Path, tolerant: bool) -> Result<Vec<f64>, String> {
    match super::read::read_reals(ds, path) {
        Ok(v) => Ok(v),
        Err(e) if !tolerant => Err(e),
        Err(_) => {
            let shape = ds.shape();
            let rows = shape.first().copied().unwrap_or(0);
            let step = ds.chunk().and_then(|c| c.first().copied()).unwrap_or(4096).max(1);
            let mut out = Vec::new();
            for start in (0..rows).step_by(step) {
                let end = (start + step).min(rows);
                let part = match shape.len() {
                    1 => ds.read_slice_1d::<f64, _>(start..end).map(|a| a.to_vec()),
                    2 => ds.read_slice_2d::<f64, _>((start..end, ..)).map(|a| a.iter().copied().collect()),
                    _ => break,
                };
                match part {
                    Ok(p) => out.extend(p),
                    Err(_) => break,
                }
            }
            Ok(out)
        }
    }
}

fn read_hdf5(path: &Path, tolerant: bool) -> Result<Contents, RecordError> {
    let file = super::read::open(path)?;
    let err = |e: String| RecordError::Read(format!("reading {}: {e}", path.display()));
    let text = |loc: &hdf5::Location, name: &str| super::read::text_attr(loc, name);
    let number = |loc: &hdf5::Location, name: &str| text(loc, name).parse::<f64>().unwrap_or(0.0);
    let time_ds = file.dataset("time").map_err(|e| err(format!("no readable /time dataset ({e}): not a morc recording?")))?;
    let mut time = read_rows(&time_ds, path, tolerant).map_err(err)?;
    let mut names: Vec<String> = file.datasets().map_err(|e| err(e.to_string()))?.iter().map(|d| d.name().trim_start_matches('/').to_string()).filter(|n| n != "time").collect();
    names.sort();
    let mut signals = Vec::new();
    let mut elements = Vec::new();
    let mut data = Vec::new();
    for name in names {
        let ds = file.dataset(&name).map_err(|e| err(e.to_string()))?;
        let shape = ds.shape();
        let ty = parse_type(&text(&ds, "type")).unwrap_or(if shape.len() == 2 { ValueType::Vector(shape[1]) } else { ValueType::Real });
        let values = read_rows(&ds, path, tolerant).map_err(err)?;
        signals.push((name, ty, text(&ds, "unit"), text(&ds, "description")));
        elements.push((super::read::string_list(&ds, "element_units"), super::read::string_list(&ds, "element_names")));
        data.push(values);
    }
    let (mut columns, width) = columns_of(signals);
    for (c, (units, names)) in columns.iter_mut().zip(elements) {
        (c.element_units, c.element_names) = (units, names);
    }
    let mut complete = text(&file, "complete") == "1";
    if tolerant {
        // The rows every dataset holds, with times that increase (no garbage).
        let mut n = columns.iter().zip(&data).map(|(c, v)| v.len() / c.width.max(1)).fold(time.len(), usize::min);
        if let Some(bad) = time[..n].windows(2).position(|w| w[1].partial_cmp(&w[0]) != Some(std::cmp::Ordering::Greater)) {
            n = bad + 1;
        }
        if time.first().is_some_and(|t| !t.is_finite()) {
            n = 0;
        }
        complete &= n == time_ds.shape().first().copied().unwrap_or(0);
        time.truncate(n);
    }
    let n = time.len();
    for (c, values) in columns.iter().zip(&data) {
        if values.len() < n * c.width {
            return Err(err(format!("'{}' holds {} samples, /time {n}: a damaged file?", c.name, values.len() / c.width.max(1))));
        }
    }
    let mut rows = vec![0.0; n * width];
    for (i, t) in time.iter().enumerate() {
        let row = &mut rows[i * width..(i + 1) * width];
        row[0] = *t;
        for (c, values) in columns.iter().zip(&data) {
            row[c.offset..c.offset + c.width].copy_from_slice(&values[i * c.width..(i + 1) * c.width]);
        }
    }
    let mut components = Vec::new();
    if let Ok(assembly) = file.group("assembly") {
        for g in super::read::sorted_groups(&assembly).map_err(|e| err(e.to_string()))? {
            let name = g.name().rsplit('/').next().unwrap_or_default().to_string();
            let params = g.group("parameters").map(|p| super::read::attribute_values(&p)).unwrap_or_default();
            components.push(ComponentMetadata { name, kind: text(&g, "kind"), every: number(&g, "every") as u32, params });
        }
    }
    let mut timing = Vec::new();
    if let Ok(group) = file.group("timing") {
        for g in super::read::sorted_groups(&group).map_err(|e| err(e.to_string()))? {
            let name = g.name().rsplit('/').next().unwrap_or_default().to_string();
            let int = |k: &str| number(&g, k) as u64;
            timing.push(TimingEntry {
                name,
                kind: text(&g, "kind"),
                every: number(&g, "every") as i64,
                steps: int("steps"),
                count: int("count"),
                mean: number(&g, "mean"),
                p50: number(&g, "p50"),
                p99: number(&g, "p99"),
                max: number(&g, "max"),
                overruns: int("overruns"),
            });
        }
    }
    let metadata = RecordingMetadata {
        path: path.to_path_buf(),
        robot: text(&file, "robot"),
        assembly: text(&file, "assembly"),
        base_period: number(&file, "base_period"),
        notes: text(&file, "notes"),
        components,
        ..Default::default()
    };
    let header = FileHeader {
        metadata,
        sample_period: number(&file, "sample_period"),
        decimation: number(&file, "decimation").max(1.0) as u32,
        recorder: text(&file, "recorder"),
        utc_start: Some(text(&file, "utc_start")),
        robot: None,
    };
    Ok(Contents { header, columns, rows, width, dropped: number(&file, "dropped_samples") as u64, complete, write_error: text(&file, "write_error"), timing })
}

/// Writes `contents` to `to` (HDF5 or MCAP by its extension), which must not exist yet.
pub(crate) fn write(contents: &Contents, to: &Path) -> Result<(), RecordError> {
    if to.exists() {
        return Err(RecordError::Write(format!("{} exists: a conversion never replaces a file; name another", to.display())));
    }
    let mut header = contents.header.clone();
    header.metadata.path = to.to_path_buf();
    if let Some(dir) = to.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| RecordError::Write(format!("cannot create directory {}: {e}", dir.display())))?;
    }
    std::fs::OpenOptions::new().write(true).create_new(true).open(to).map_err(|e| RecordError::Write(format!("cannot create {}: {e}", to.display())))?;
    let result = (|| {
        let mut sink = create_sink(&header, contents.columns.clone(), to)?;
        sink.append(&contents.rows, contents.width)?;
        sink.close(contents.dropped, contents.complete, &contents.write_error)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(to);
        return Err(RecordError::Write(format!("writing {}: {e}", to.display())));
    }
    if !contents.timing.is_empty() {
        super::writer::write_timing_entries(to, &contents.timing)?;
    }
    Ok(())
}

/// Converts the recording `from` into `to`, each HDF5 or MCAP by its
/// extension (`.mcap`, else HDF5). Returns the number of samples written.
pub fn convert(from: &Path, to: &Path) -> Result<usize, RecordError> {
    let contents = read(from)?;
    write(&contents, to)?;
    Ok(contents.samples())
}

/// A parameter's value from its text in an MCAP file: a number, a boolean, `{a, b}` a vector, else the text.
pub(crate) fn value_of_text(text: &str) -> Value {
    if let Ok(i) = text.parse::<i64>() {
        return Value::Integer(i);
    }
    if let Ok(x) = text.parse::<f64>() {
        return Value::Real(x);
    }
    match text {
        "true" => return Value::Boolean(true),
        "false" => return Value::Boolean(false),
        _ => {}
    }
    if let Some(inner) = text.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
        let parts: Result<Vec<f64>, _> = inner.split(',').map(str::trim).filter(|p| !p.is_empty()).map(str::parse::<f64>).collect();
        if let Ok(v) = parts {
            return Value::Vector(v);
        }
    }
    Value::String(text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_read_back_as_written() {
        for ty in [ValueType::Real, ValueType::Integer, ValueType::Boolean, ValueType::Vector(6)] {
            assert_eq!(parse_type(&ty.to_string()), Some(ty));
        }
        assert_eq!(parse_type("vector[x]"), None);
    }

    #[test]
    fn parameter_texts_read_back_as_values() {
        for v in [Value::Integer(3), Value::Real(0.25), Value::Boolean(true), Value::Vector(vec![1.0, -2.5])] {
            assert_eq!(value_of_text(&v.to_string()), v);
        }
        assert_eq!(value_of_text("runs/x.h5"), Value::String("runs/x.h5".into()));
    }
}
