//! Recordings as MCAP (`.mcap`), the log format Foxglove and PlotJuggler
//! open, beside HDF5: the same rows, one channel per signal.
//!
//! The file:
//! ```text
//! metadata "morc"              morc_version, git_commit, utc_start, robot, assembly, base_period,
//!                              sample_period, decimation, recorder, notes (as text)
//! metadata "assembly/<name>"   kind, every, sample_time, parameters.<p> (one per parameter)
//! channel  "<component.port>"  message encoding json, schema morc.<type> (jsonschema);
//!                              channel metadata: unit, description, source, sample_period, type,
//!                              element_names, element_units (JSON lists, when the port has them)
//! message                      {"time": t, "value": x}: x a number, an integer, true/false or
//!                              an array; log and publish time t in ns; sequence = row index
//! metadata "morc.end"          samples, dropped_samples, complete = 1 (written when closed)
//! metadata "timing/<name>"     written after the run by write_timing: kind, every, steps,
//!                              count, mean, p50, p99, max (s), overruns
//! ```
//! Messages sit in uncompressed chunks, each finished at every flush and
//! committed so that the file ends in a Footer at every moment (see
//! `mcap_sink`): a file a crash cut short reads, with the standard readers,
//! up to its last flush. Such a file has no "morc.end" record.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::mcap_sink::CommitFile;
use super::recorder::ComponentMetadata;
use super::writer::{FileHeader, SignalColumn, Sink, TimingEntry};
use crate::RecordError;
use morc_kernel::{Value, ValueType};

/// An MCAP recording being written.
pub(crate) struct McapFile {
    path: PathBuf,
    writer: mcap::Writer<CommitFile>,
    /// Tells the sink that the writer's next flush ends the file.
    closing: Arc<AtomicBool>,
    sample_period: f64,
    /// Each signal's column and channel id.
    channels: Vec<(SignalColumn, u16)>,
    rows: u64,
    /// One message's JSON, reused.
    json: String,
}

fn mcap_error(path: &Path, e: impl std::fmt::Display) -> String {
    format!("{}: {e}", path.display())
}

/// The jsonschema of a signal's messages.
fn schema(ty: ValueType) -> (String, String) {
    let value = match ty {
        ValueType::Integer => r#"{"type":"integer"}"#.to_string(),
        ValueType::Boolean => r#"{"type":"boolean"}"#.to_string(),
        ValueType::Vector(n) => format!(r#"{{"type":"array","items":{{"type":"number"}},"minItems":{n},"maxItems":{n}}}"#),
        ValueType::Real | ValueType::String => r#"{"type":"number"}"#.to_string(),
    };
    let name = match ty {
        ValueType::Vector(n) => format!("morc.vector{n}"),
        other => format!("morc.{other}"),
    };
    (name, format!(r#"{{"type":"object","properties":{{"time":{{"type":"number","description":"s since the start of the assembly"}},"value":{value}}}}}"#))
}

/// The text of a number that reads back as the same f64 (JSON has no NaN or infinity: null).
fn push_number(out: &mut String, x: f64) {
    if x.is_finite() {
        let _ = write!(out, "{x:?}");
    } else {
        out.push_str("null");
    }
}

fn metadata(name: &str, fields: Vec<(String, String)>) -> mcap::records::Metadata {
    mcap::records::Metadata { name: name.into(), metadata: fields.into_iter().collect() }
}

/// The header's fields as the "morc" metadata record holds them.
fn header_fields(h: &FileHeader) -> Vec<(String, String)> {
    let m = &h.metadata;
    let utc = h.utc_start.clone().unwrap_or_else(super::writer::utc_now_iso8601);
    vec![
        ("morc_version".into(), env!("CARGO_PKG_VERSION").into()),
        ("git_commit".into(), env!("MORC_GIT_COMMIT").into()),
        ("utc_start".into(), utc),
        ("robot".into(), m.robot.clone()),
        ("assembly".into(), m.assembly.clone()),
        ("base_period".into(), m.base_period.to_string()),
        ("sample_period".into(), h.sample_period.to_string()),
        ("decimation".into(), h.decimation.to_string()),
        ("recorder".into(), h.recorder.clone()),
        ("notes".into(), m.notes.clone()),
    ]
}

fn component_fields(c: &ComponentMetadata, base_period: f64) -> Vec<(String, String)> {
    let mut f = vec![("kind".into(), c.kind.clone()), ("every".into(), c.every.to_string()), ("sample_time".into(), (f64::from(c.every) * base_period).to_string())];
    for (name, value) in &c.params {
        let text = match value {
            Value::String(s) => s.clone(),
            // With its decimal point or exponent ("1.0", not "1"), so it reads back as a real.
            Value::Real(x) => format!("{x:?}"),
            other => other.to_string(),
        };
        f.push((format!("parameters.{name}"), text));
    }
    f
}

impl McapFile {
    /// Creates the file (already reserved, empty) with its header, component and channel records.
    pub(crate) fn create(header: &FileHeader, columns: Vec<SignalColumn>) -> Result<McapFile, String> {
        let path = header.metadata.path.clone();
        let fail = |e: mcap::McapError| format!("cannot create {}: {e} — choose another --record DIR", path.display());
        let file = std::fs::OpenOptions::new().write(true).truncate(true).open(&path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        // No automatic chunk ends: a chunk ends (and is committed) at each flush.
        // No data-section CRC: the sink pads the data section behind the writer's back.
        let options = mcap::WriteOptions::new()
            .compression(None)
            .chunk_size(None)
            .calculate_data_section_crc(false)
            .profile("")
            .library(format!("morc {}", env!("CARGO_PKG_VERSION")));
        let closing = Arc::new(AtomicBool::new(false));
        let mut writer = options.create(CommitFile::new(file, closing.clone())).map_err(fail)?;
        writer.write_metadata(&metadata("morc", header_fields(header))).map_err(fail)?;
        for c in &header.metadata.components {
            writer.write_metadata(&metadata(&format!("assembly/{}", c.name), component_fields(c, header.metadata.base_period))).map_err(fail)?;
        }
        let mut channels = Vec::with_capacity(columns.len());
        for c in columns {
            let (name, body) = schema(c.ty);
            let schema_id = writer.add_schema(&name, "jsonschema", body.as_bytes()).map_err(fail)?;
            let mut meta: BTreeMap<String, String> =
                [("unit", c.unit.clone()), ("description", c.description.clone()), ("source", c.name.clone()), ("sample_period", header.sample_period.to_string()), ("type", c.ty.to_string())]
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect();
            // Lists as JSON arrays of strings, as the HDF5 file's list attributes.
            for (key, list) in [("element_units", &c.element_units), ("element_names", &c.element_names)] {
                if !list.is_empty() {
                    meta.insert(key.to_string(), serde_json::to_string(list).unwrap_or_default());
                }
            }
            let id = writer.add_channel(schema_id, &c.name, "json", &meta).map_err(fail)?;
            channels.push((c, id));
        }
        writer.flush().map_err(fail)?;
        Ok(McapFile { path, writer, closing, sample_period: header.sample_period, channels, rows: 0, json: String::with_capacity(256) })
    }
}

impl Sink for McapFile {
    fn path(&self) -> &Path {
        &self.path
    }
    fn rows(&self) -> u64 {
        self.rows
    }
    fn sample_period(&self) -> f64 {
        self.sample_period
    }

    fn append(&mut self, batch: &[f64], width: usize) -> Result<(), String> {
        for row in batch.chunks_exact(width) {
            let t = row[0];
            // Simulated time from 0; a negative or NaN time cannot be a log time.
            let ns = if t.is_finite() && t > 0.0 { (t * 1e9).round() as u64 } else { 0 };
            for (c, id) in &self.channels {
                self.json.clear();
                self.json.push_str("{\"time\":");
                push_number(&mut self.json, t);
                self.json.push_str(",\"value\":");
                match c.ty {
                    ValueType::Integer => {
                        let _ = write!(self.json, "{}", row[c.offset] as i64);
                    }
                    ValueType::Boolean => self.json.push_str(if row[c.offset] != 0.0 { "true" } else { "false" }),
                    ValueType::Vector(_) => {
                        self.json.push('[');
                        for (k, x) in row[c.offset..c.offset + c.width].iter().enumerate() {
                            if k > 0 {
                                self.json.push(',');
                            }
                            push_number(&mut self.json, *x);
                        }
                        self.json.push(']');
                    }
                    ValueType::Real | ValueType::String => push_number(&mut self.json, row[c.offset]),
                }
                self.json.push('}');
                let header = mcap::records::MessageHeader { channel_id: *id, sequence: self.rows as u32, log_time: ns, publish_time: ns };
                self.writer.write_to_known_channel(&header, self.json.as_bytes()).map_err(|e| mcap_error(&self.path, e))?;
            }
            self.rows += 1;
        }
        Ok(())
    }

    fn flush(&mut self, _dropped: u64) -> Result<(), String> {
        // Ends the chunk and commits it, so what is written so far reads back after a crash.
        self.writer.flush().map_err(|e| mcap_error(&self.path, e))?;
        if let Ok(f) = std::fs::File::open(&self.path) {
            let _ = f.sync_data();
        }
        Ok(())
    }

    fn close(mut self: Box<Self>, dropped: u64, complete: bool) -> Result<(), String> {
        let fields = vec![("samples".into(), self.rows.to_string()), ("dropped_samples".into(), dropped.to_string()), ("complete".into(), u8::from(complete).to_string())];
        let end = metadata("morc.end", fields);
        self.writer.write_metadata(&end).map_err(|e| mcap_error(&self.path, e))?;
        self.writer.flush().map_err(|e| mcap_error(&self.path, e))?;
        // The summary and the real Footer replace the provisional end in one commit.
        self.closing.store(true, Ordering::Relaxed);
        self.writer.finish().map_err(|e| mcap_error(&self.path, e))?;
        let inner = self.writer.into_inner();
        let _ = inner.file().sync_data();
        Ok(())
    }
}

fn timing_fields(t: &TimingEntry) -> Vec<(String, String)> {
    vec![
        ("kind".into(), t.kind.clone()),
        ("every".into(), t.every.to_string()),
        ("steps".into(), t.steps.to_string()),
        ("count".into(), t.count.to_string()),
        ("mean".into(), t.mean.to_string()),
        ("p50".into(), t.p50.to_string()),
        ("p99".into(), t.p99.to_string()),
        ("max".into(), t.max.to_string()),
        ("overruns".into(), t.overruns.to_string()),
    ]
}

/// Adds the run's timing to a closed MCAP recording (replacing earlier
/// timing): an MCAP file cannot grow after its summary, so the file is
/// written anew beside it and renamed over it.
pub(crate) fn write_timing(path: &Path, entries: &[TimingEntry]) -> Result<(), RecordError> {
    let fail = |e: String| RecordError::Write(format!("cannot write timing into {}: {e}", path.display()));
    let bytes = std::fs::read(path).map_err(|e| fail(e.to_string()))?;
    let tmp = path.with_extension("mcap.tmp");
    let result = (|| -> Result<(), String> {
        let file = std::fs::File::create(&tmp).map_err(|e| e.to_string())?;
        let options = mcap::WriteOptions::new().compression(None).profile("").library(format!("morc {}", env!("CARGO_PKG_VERSION")));
        let mut w = options.create(BufWriter::new(file)).map_err(|e| e.to_string())?;
        copy_records(&bytes, &mut w, |name| !name.starts_with("timing/"))?;
        for t in entries {
            w.write_metadata(&metadata(&format!("timing/{}", t.name), timing_fields(t))).map_err(|e| e.to_string())?;
        }
        w.finish().map_err(|e| e.to_string())?;
        let f = w.into_inner().into_inner().map_err(|e| e.to_string())?;
        f.sync_data().map_err(|e| e.to_string())
    })();
    match result {
        Ok(()) => std::fs::rename(&tmp, path).map_err(|e| fail(e.to_string())),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(fail(e))
        }
    }
}

/// Copies schemas, channels, messages and the metadata `keep` accepts from the MCAP file `bytes` into `w`, ids kept.
fn copy_records<W: std::io::Write + std::io::Seek>(bytes: &[u8], w: &mut mcap::Writer<W>, keep: impl Fn(&str) -> bool) -> Result<(), String> {
    use mcap::records::Record;
    for record in mcap::read::ChunkFlattener::new(bytes).map_err(|e| e.to_string())? {
        match record.map_err(|e| e.to_string())? {
            Record::Schema { header, data } => {
                w.add_schema_with_id(header.id, &header.name, &header.encoding, &data).map_err(|e| e.to_string())?;
            }
            Record::Channel(c) => {
                w.add_channel_with_id(c.id, c.schema_id, &c.topic, &c.message_encoding, &c.metadata).map_err(|e| e.to_string())?;
            }
            Record::Message { header, data } => w.write_to_known_channel(&header, &data).map_err(|e| e.to_string())?,
            Record::Metadata(m) if keep(&m.name) => w.write_metadata(&m).map_err(|e| e.to_string())?,
            _ => {}
        }
    }
    Ok(())
}

/// Reads a whole MCAP recording written by morc (or converted by `morc rec
/// convert`); another tool's MCAP file is an error saying so.
pub(crate) fn read(path: &Path) -> Result<crate::convert::Contents, RecordError> {
    use super::recorder::RecordingMetadata;
    use crate::convert::{columns_of, parse_type, value_of_text, Contents};
    use mcap::records::Record;
    let err = |e: String| RecordError::Read(format!("reading {}: {e}", path.display()));
    if path.is_dir() {
        return Err(RecordError::Read(format!("{} is a folder, not a recording", path.display())));
    }
    let bytes = std::fs::read(path).map_err(|e| RecordError::Read(if path.exists() { format!("cannot read {}: {e}", path.display()) } else { format!("no file {}", path.display()) }))?;
    if !bytes.starts_with(mcap::MAGIC) {
        return Err(err("not an MCAP file (no MCAP magic at its start)".into()));
    }
    let mut meta: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    // Channel id → (topic, type, unit, description); messages per channel: (sequence, time, value).
    let mut channels: BTreeMap<u16, (String, ValueType, String, String)> = BTreeMap::new();
    let mut messages: BTreeMap<u16, Vec<(u32, f64, serde_json::Value)>> = BTreeMap::new();
    // Channel id → its vector's units and names per element.
    let mut elements: BTreeMap<u16, (Vec<String>, Vec<String>)> = BTreeMap::new();
    let records = mcap::read::ChunkFlattener::new(&bytes).map_err(|e| err(format!("not an MCAP file ({e})")))?;
    for record in records {
        // A file a crash cut short reads up to its last complete record.
        let Ok(record) = record else { break };
        match record {
            Record::Metadata(m) => {
                meta.insert(m.name, m.metadata);
            }
            Record::Channel(c) => {
                let ty = c
                    .metadata
                    .get("type")
                    .and_then(|t| parse_type(t))
                    .ok_or_else(|| err(format!("channel '{}' has no morc signal type: not a morc recording", c.topic)))?;
                let get = |k: &str| c.metadata.get(k).cloned().unwrap_or_default();
                channels.insert(c.id, (c.topic.clone(), ty, get("unit"), get("description")));
                let list = |k: &str| c.metadata.get(k).and_then(|v| serde_json::from_str::<Vec<String>>(v).ok()).unwrap_or_default();
                elements.insert(c.id, (list("element_units"), list("element_names")));
            }
            Record::Message { header, data } => {
                let v: serde_json::Value = serde_json::from_slice(&data).map_err(|e| err(format!("message {} on channel {}: {e}", header.sequence, header.channel_id)))?;
                let t = v.get("time").and_then(serde_json::Value::as_f64).unwrap_or(header.log_time as f64 * 1e-9);
                let value = v.get("value").cloned().unwrap_or(serde_json::Value::Null);
                messages.entry(header.channel_id).or_default().push((header.sequence, t, value));
            }
            _ => {}
        }
    }
    let head = meta.get("morc").ok_or_else(|| err("no \"morc\" metadata record: not a morc recording".into()))?;
    let field = |m: &BTreeMap<String, String>, k: &str| m.get(k).cloned().unwrap_or_default();
    let number = |m: &BTreeMap<String, String>, k: &str| m.get(k).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    let ids: Vec<u16> = channels.keys().copied().collect();
    let (mut columns, width) = columns_of(ids.iter().map(|id| channels[id].clone()).collect());
    for (c, id) in columns.iter_mut().zip(&ids) {
        (c.element_units, c.element_names) = elements.remove(id).unwrap_or_default();
    }
    let n = ids.iter().map(|id| messages.get(id).map_or(0, Vec::len)).min().unwrap_or(0);
    let mut rows = vec![0.0; n * width];
    for (c, id) in columns.iter().zip(&ids) {
        let mut list = messages.remove(id).unwrap_or_default();
        list.sort_by_key(|m| m.0);
        for (i, (_, t, v)) in list.into_iter().take(n).enumerate() {
            let row = &mut rows[i * width..(i + 1) * width];
            row[0] = t;
            let x = |v: &serde_json::Value| match v {
                serde_json::Value::Bool(b) => f64::from(u8::from(*b)),
                other => other.as_f64().unwrap_or(f64::NAN),
            };
            match &v {
                serde_json::Value::Array(items) => {
                    for (k, item) in items.iter().take(c.width).enumerate() {
                        row[c.offset + k] = x(item);
                    }
                }
                other => row[c.offset] = x(other),
            }
        }
    }
    let mut components = Vec::new();
    let mut timing = Vec::new();
    for (name, m) in &meta {
        if let Some(c) = name.strip_prefix("assembly/") {
            let params = m.iter().filter_map(|(k, v)| k.strip_prefix("parameters.").map(|p| (p.to_string(), value_of_text(v)))).collect();
            components.push(ComponentMetadata { name: c.into(), kind: field(m, "kind"), every: number(m, "every") as u32, params });
        } else if let Some(c) = name.strip_prefix("timing/") {
            timing.push(TimingEntry {
                name: c.into(),
                kind: field(m, "kind"),
                every: number(m, "every") as i64,
                steps: number(m, "steps") as u64,
                count: number(m, "count") as u64,
                mean: number(m, "mean"),
                p50: number(m, "p50"),
                p99: number(m, "p99"),
                max: number(m, "max"),
                overruns: number(m, "overruns") as u64,
            });
        }
    }
    let end = meta.get("morc.end");
    let metadata = RecordingMetadata {
        path: path.to_path_buf(),
        robot: field(head, "robot"),
        assembly: field(head, "assembly"),
        base_period: number(head, "base_period"),
        notes: field(head, "notes"),
        components,
        ..Default::default()
    };
    let header = FileHeader {
        metadata,
        sample_period: number(head, "sample_period"),
        decimation: number(head, "decimation").max(1.0) as u32,
        recorder: field(head, "recorder"),
        utc_start: Some(field(head, "utc_start")),
    };
    let dropped = end.map_or(0.0, |m| number(m, "dropped_samples")) as u64;
    Ok(Contents { header, columns, rows, width, dropped, complete: end.is_some_and(|m| field(m, "complete") == "1"), timing })
}

/// `morc rec info` of an MCAP recording.
pub(crate) fn info(path: &Path) -> Result<String, RecordError> {
    let c = read(path)?;
    let h = &c.header;
    let m = &h.metadata;
    let mut s = String::new();
    let _ = writeln!(s, "{} (MCAP)", path.display());
    let _ = writeln!(s, "attributes:");
    let attrs = [
        ("assembly", m.assembly.clone()),
        ("base_period", m.base_period.to_string()),
        ("complete", u8::from(c.complete).to_string()),
        ("decimation", h.decimation.to_string()),
        ("dropped_samples", c.dropped.to_string()),
        ("notes", m.notes.clone()),
        ("recorder", h.recorder.clone()),
        ("robot", m.robot.clone()),
        ("sample_period", h.sample_period.to_string()),
        ("samples", c.samples().to_string()),
        ("utc_start", h.utc_start.clone().unwrap_or_default()),
    ];
    for (k, v) in attrs {
        let _ = writeln!(s, "  {k:<16} {v}");
    }
    if !c.complete {
        let _ = writeln!(s, "{}", super::read::cut_short(path, c.samples() as u64, c.samples() as f64 * h.sample_period));
    }
    let w = c.columns.iter().map(|c| c.name.len()).max().unwrap_or(4).max(7);
    let _ = writeln!(s, "channels (json):");
    let _ = writeln!(s, "  {:<w$} {:<10} {:<11} {:<10} description", "name", "messages", "type", "unit");
    for col in &c.columns {
        let _ = writeln!(s, "  {:<w$} {:<10} {:<11} {:<10} {}", col.name, c.samples(), col.ty.to_string(), col.unit, col.description);
    }
    if !m.components.is_empty() {
        let _ = writeln!(s, "assembly '{}':", m.assembly);
        for comp in &m.components {
            let params: Vec<String> = comp.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let _ = writeln!(s, "  {:<16} {:<12} every {:<4} ({} s)  {}", comp.name, comp.kind, comp.every, f64::from(comp.every) * m.base_period, params.join(" "));
        }
    }
    if !c.timing.is_empty() {
        let human = super::read::human_s;
        let _ = writeln!(s, "timing (execution time per step):");
        let _ = writeln!(s, "  {:<16} {:>8} {:>10} {:>10} {:>10} {:>8}", "component", "steps", "mean", "p99", "max", "overruns");
        for t in &c.timing {
            let _ = writeln!(s, "  {:<16} {:>8} {:>10} {:>10} {:>10} {:>8}", t.name, t.count, human(t.mean), human(t.p99), human(t.max), t.overruns);
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_read_back_with_their_types() {
        // A real that happens to be whole stays a real (it once came back as the integer 1).
        let c = ComponentMetadata {
            name: "g".into(),
            kind: "gain".into(),
            every: 1,
            params: vec![("k".into(), Value::Real(1.0)), ("n".into(), Value::Integer(6)), ("tiny".into(), Value::Real(1e-7))],
        };
        let fields = component_fields(&c, 0.001);
        let read = |p: &str| crate::convert::value_of_text(&fields.iter().find(|(k, _)| k == &format!("parameters.{p}")).unwrap().1);
        assert_eq!(read("k"), Value::Real(1.0));
        assert_eq!(read("n"), Value::Integer(6));
        assert_eq!(read("tiny"), Value::Real(1e-7));
    }
}
