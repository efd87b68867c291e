//! Recordings as MCAP (`.mcap`), the log format Foxglove and PlotJuggler
//! open, beside HDF5: the same rows as ROS 2 messages (profile `ros2`, message
//! encoding `cdr`, schemas `ros2msg` as rosbag2 writes them: the `.msg`
//! definition, then each type it uses after a line of 80 `=` and `MSG:
//! pkg/Type`), so ROS 2 tools (rosbags, Foxglove, `ros2 bag`) read the file.
//!
//! The file:
//! ```text
//! metadata "morc"              morc_version, git_commit, utc_start, robot, assembly, base_period,
//!                              sample_period, decimation, recorder, notes (as text)
//! metadata "assembly/<name>"   kind, every, sample_time, parameters.<p> (one per parameter)
//! channel  "/morc/<component>" one per component with recorded signals (a robot base's too),
//!                              schema morc_msgs/msg/<Component>:
//!                                builtin_interfaces/Time stamp   UTC: utc_start + time
//!                                float64 time                    s since the start of the assembly
//!                                <type> <field>                  one per recorded port, in order:
//!                                                                float64, float64[n] (vector), int64, bool
//!                              the field is the port's name made a valid ROS name (lowercase
//!                              letters, digits, single underscores). Channel metadata: component,
//!                              sample_period, signals (JSON list of "component.port" in field
//!                              order) and per signal "<signal>.<what>": field, column (its place
//!                              among the recorded signals), type, unit, description,
//!                              element_names, element_units (JSON lists, when the port has them)
//! message                      one per row and component; log and publish time = stamp (ns since
//!                              the Unix epoch); sequence = row index
//! channel  "/robot_description" std_msgs/msg/String: the robot's URDF (morc_model::display_urdf),
//!                              one message at the start   } when the recorded assembly drives a
//! channel  "/joint_states"     sensor_msgs/msg/JointState: } robot morc knows (FileHeader::robot):
//!                              the model's joint names, q, } at most every ROBOT_TOPICS_PERIOD
//!                              qd, tau (SI units)          } (100 Hz), whether or not q, qd, tau
//! channel  "/tf"               tf2_msgs/msg/TFMessage: one } are recorded signals
//!                              transform per URDF joint, parent link → child link
//! metadata "morc.end"          samples, dropped_samples, complete = 1 (written when closed)
//! metadata "timing/<name>"     written after the run by write_timing: kind, every, steps,
//!                              count, mean, p50, p99, max (s), overruns
//! ```
//! Messages sit in uncompressed chunks, each finished at every flush and
//! committed so that the file ends in a Footer at every moment (see
//! `mcap_sink`): a file a crash cut short reads, with the standard readers,
//! up to its last flush. Such a file has no "morc.end" record. [`read`]
//! also reads the files of older morc: one JSON channel per signal,
//! `{"time": t, "value": x}`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::mcap_sink::CommitFile;
use super::recorder::ComponentMetadata;
use super::writer::{FileHeader, RecordedRobot, SignalColumn, Sink, TimingEntry};
use crate::RecordError;
use morc_kernel::{Value, ValueType};
use morc_ros_msgs::builtin_interfaces::Time;
use morc_ros_msgs::{geometry_msgs, sensor_msgs, std_msgs, tf2_msgs, CdrWriter, RosMessage};

/// The package of the generated per-component message types.
const PACKAGE: &str = "morc_msgs";
/// The `/tf` and `/joint_states` messages are written at most this often (s): a viewer's rate.
/// The component channels keep every row.
const ROBOT_TOPICS_PERIOD: f64 = 0.01;

/// An MCAP recording being written.
pub(crate) struct McapFile {
    path: PathBuf,
    writer: mcap::Writer<CommitFile>,
    /// Tells the sink that the writer's next flush ends the file.
    closing: Arc<AtomicBool>,
    sample_period: f64,
    /// The run's start, ns since the Unix epoch (UTC): log times are this plus the row's time.
    start_ns: u64,
    /// One channel per component: its id and its signals, in field order.
    groups: Vec<(u16, Vec<SignalColumn>)>,
    /// `/joint_states` and `/tf`, when the recorded assembly drives a known robot.
    robot: Option<RobotTopics>,
    rows: u64,
    /// One message's CDR, reused.
    cdr: CdrWriter,
    /// Bytes on disk once created (header, schemas, channels, the description).
    created: u64,
    /// The most bytes one row adds.
    row_bytes: u64,
    /// Channels in the file.
    channels: u64,
}

/// What writes `/joint_states` and `/tf` from a row.
struct RobotTopics {
    robot: RecordedRobot,
    data: morc_model::Data,
    tree: morc_model::LinkTree,
    joint_states: u16,
    tf: u16,
    /// Every this many rows.
    every: u64,
    state: sensor_msgs::JointState,
    transforms: tf2_msgs::TFMessage,
    q: Vec<f64>,
    /// Bytes of one `/joint_states` and one `/tf` message in the file, with their record
    /// headers and index entries.
    message_bytes: u64,
}

fn mcap_error(path: &Path, e: impl std::fmt::Display) -> String {
    format!("{}: {e}", path.display())
}

/// The ROS 2 type of a signal's field: `float64`, `float64[n]`, `int64` or `bool`.
fn field_type(ty: ValueType) -> String {
    match ty {
        ValueType::Integer => "int64".into(),
        ValueType::Boolean => "bool".into(),
        ValueType::Vector(n) => format!("float64[{n}]"),
        ValueType::Real | ValueType::String => "float64".into(),
        ValueType::List | ValueType::Record => unreachable!("the recorder refuses list and record signals"),
    }
}

/// A component's message type: `morc_msgs/msg/<Component>`'s ros2msg schema, and each
/// signal's field name (valid ROS names, distinct, never `stamp` or `time`).
fn component_schema(columns: &[SignalColumn]) -> (String, Vec<String>) {
    let mut names: Vec<String> = vec!["stamp".into(), "time".into()];
    let mut def = String::from("builtin_interfaces/Time stamp\nfloat64 time\n");
    for c in columns {
        let port = c.name.split_once('.').map_or(c.name.as_str(), |(_, p)| p);
        let base = morc_ros_msgs::field_name(port);
        let name = (1..).map(|i| if i == 1 { base.clone() } else { format!("{base}_{i}") }).find(|n| !names.contains(n)).unwrap_or(base);
        let _ = writeln!(def, "{} {name}", field_type(c.ty));
        names.push(name);
    }
    def.push_str(&"=".repeat(80));
    def.push_str("\nMSG: builtin_interfaces/Time\n");
    def.push_str(morc_ros_msgs::definition("builtin_interfaces/msg/Time").unwrap_or_default());
    (def, names.split_off(2))
}

/// A valid ROS topic name token for `name` (letters, digits, underscores; not starting with a digit).
fn topic_token(name: &str) -> String {
    let mut t: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if !t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        t.insert(0, '_');
    }
    t
}

/// The component of a signal "component.port".
fn component_of(signal: &str) -> &str {
    signal.split_once('.').map_or(signal, |(c, _)| c)
}

fn metadata(name: &str, fields: Vec<(String, String)>) -> mcap::records::Metadata {
    mcap::records::Metadata { name: name.into(), metadata: fields.into_iter().collect() }
}

/// The header's fields as the "morc" metadata record holds them.
fn header_fields(h: &FileHeader, utc: &str) -> Vec<(String, String)> {
    let m = &h.metadata;
    vec![
        ("morc_version".into(), env!("CARGO_PKG_VERSION").into()),
        ("git_commit".into(), env!("MORC_GIT_COMMIT").into()),
        ("utc_start".into(), utc.into()),
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

/// The component channels' metadata: the channel's signals, and per signal (keys
/// `<signal>.<what>`) its field, column (its place among all recorded signals), type, unit,
/// description and a vector's element names and units (JSON lists, when the port has them).
fn group_metadata(component: &str, columns: &[SignalColumn], fields: &[String], index: &[usize], sample_period: f64) -> BTreeMap<String, String> {
    let mut meta = BTreeMap::new();
    meta.insert("component".to_string(), component.to_string());
    meta.insert("sample_period".to_string(), sample_period.to_string());
    let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
    meta.insert("signals".to_string(), serde_json::to_string(&names).unwrap_or_default());
    for ((c, field), column) in columns.iter().zip(fields).zip(index) {
        let mut put = |k: &str, v: String| {
            meta.insert(format!("{}.{k}", c.name), v);
        };
        put("field", field.clone());
        put("column", column.to_string());
        put("type", c.ty.to_string());
        put("unit", c.unit.clone());
        put("description", c.description.clone());
        for (key, list) in [("element_units", &c.element_units), ("element_names", &c.element_names)] {
            if !list.is_empty() {
                put(key, serde_json::to_string(list).unwrap_or_default());
            }
        }
    }
    meta
}

impl McapFile {
    /// Creates the file (already reserved, empty) with its header, component and channel records.
    pub(crate) fn create(header: &FileHeader, columns: Vec<SignalColumn>, at: &Path) -> Result<McapFile, String> {
        let path = header.metadata.path.clone();
        let fail = |e: mcap::McapError| format!("cannot create {}: {e} — choose another --record DIR", path.display());
        let file = std::fs::OpenOptions::new().write(true).truncate(true).open(at).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        // No automatic chunk ends: a chunk ends (and is committed) at each flush.
        // No data-section CRC: the sink pads the data section behind the writer's back.
        let options = mcap::WriteOptions::new()
            .compression(None)
            .chunk_size(None)
            .calculate_data_section_crc(false)
            .profile("ros2")
            .library(format!("morc {}", env!("CARGO_PKG_VERSION")));
        let closing = Arc::new(AtomicBool::new(false));
        let mut writer = options.create(CommitFile::new(file, closing.clone())).map_err(fail)?;
        let utc = header.utc_start.clone().unwrap_or_else(super::writer::utc_now_iso8601);
        let start_ns = super::writer::iso8601_nanos(&utc).unwrap_or(0);
        writer.write_metadata(&metadata("morc", header_fields(header, &utc))).map_err(fail)?;
        for c in &header.metadata.components {
            writer.write_metadata(&metadata(&format!("assembly/{}", c.name), component_fields(c, header.metadata.base_period))).map_err(fail)?;
        }
        // One channel per component, in the order of its first signal; each signal keeps its column's place.
        let mut order: Vec<(String, Vec<(usize, SignalColumn)>)> = Vec::new();
        for (i, c) in columns.into_iter().enumerate() {
            let component = component_of(&c.name).to_string();
            match order.iter_mut().find(|(n, _)| *n == component) {
                Some((_, list)) => list.push((i, c)),
                None => order.push((component, vec![(i, c)])),
            }
        }
        let mut groups = Vec::with_capacity(order.len());
        let (mut topics, mut types): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
        for (component, list) in order {
            let (index, cols): (Vec<usize>, Vec<SignalColumn>) = list.into_iter().unzip();
            let (def, fields) = component_schema(&cols);
            let distinct = |base: String, taken: &[String]| (1..).map(|i| if i == 1 { base.clone() } else { format!("{base}_{i}") }).find(|n| !taken.contains(n)).unwrap_or(base);
            let topic = distinct(format!("/morc/{}", topic_token(&component)), &topics);
            let ty = distinct(format!("{PACKAGE}/msg/{}", morc_ros_msgs::type_name(&component)), &types);
            let schema_id = writer.add_schema(&ty, "ros2msg", def.as_bytes()).map_err(fail)?;
            let meta = group_metadata(&component, &cols, &fields, &index, header.sample_period);
            let id = writer.add_channel(schema_id, &topic, "cdr", &meta).map_err(fail)?;
            topics.push(topic);
            types.push(ty);
            groups.push((id, cols));
        }
        let robot = match &header.robot {
            Some(r) => Some(RobotTopics::create(&mut writer, r, header.sample_period, start_ns).map_err(fail)?),
            None => None,
        };
        writer.flush().map_err(fail)?;
        // A message per component and row: record header (31 bytes), its index entry (16), the
        // CDR header, stamp and time (20), and each field (a vector's length and padding, 16).
        let mut row_bytes: u64 = groups.iter().map(|(_, cols)| 67 + cols.iter().map(|c| 16 + 8 * c.width as u64).sum::<u64>()).sum();
        if let Some(r) = &robot {
            row_bytes += r.message_bytes.div_ceil(r.every);
        }
        let channels = groups.len() as u64 + if robot.is_some() { 3 } else { 0 };
        Ok(McapFile {
            path: at.to_path_buf(),
            writer,
            closing,
            sample_period: header.sample_period,
            start_ns,
            groups,
            robot,
            rows: 0,
            cdr: CdrWriter::with_capacity(256),
            created: super::writer::disk_bytes(at),
            row_bytes,
            channels,
        })
    }
}

/// A ROS 2 type's schema in the file.
fn ros_schema<W: std::io::Write + std::io::Seek, M: RosMessage>(writer: &mut mcap::Writer<W>) -> Result<u16, mcap::McapError> {
    let def = morc_ros_msgs::ros2msg_schema(M::TYPE_NAME).unwrap_or_default();
    writer.add_schema(M::TYPE_NAME, "ros2msg", def.as_bytes())
}

impl RobotTopics {
    /// The channels `/joint_states`, `/tf` and `/robot_description`, and the description (the URDF) written once.
    fn create<W: std::io::Write + std::io::Seek>(writer: &mut mcap::Writer<W>, robot: &RecordedRobot, sample_period: f64, start_ns: u64) -> Result<RobotTopics, mcap::McapError> {
        let model = &robot.model;
        let none = BTreeMap::new();
        let description = ros_schema::<_, std_msgs::String>(writer)?;
        let description = writer.add_channel(description, "/robot_description", "cdr", &none)?;
        let urdf = std_msgs::String { data: morc_model::display_urdf(model) };
        let header = mcap::records::MessageHeader { channel_id: description, sequence: 0, log_time: start_ns, publish_time: start_ns };
        writer.write_to_known_channel(&header, &morc_ros_msgs::to_cdr(&urdf))?;
        let js = ros_schema::<_, sensor_msgs::JointState>(writer)?;
        let joint_states = writer.add_channel(js, "/joint_states", "cdr", &none)?;
        let tf = ros_schema::<_, tf2_msgs::TFMessage>(writer)?;
        let tf = writer.add_channel(tf, "/tf", "cdr", &none)?;
        let names: Vec<String> = (0..robot.dof).map(|i| model.joint_names()[model.dof_joint(i)].clone()).collect();
        let tree = morc_model::LinkTree::new(model);
        let transforms = tf2_msgs::TFMessage {
            transforms: tree
                .joints
                .iter()
                .map(|j| geometry_msgs::TransformStamped {
                    header: std_msgs::Header { stamp: Time::default(), frame_id: tree.links[j.parent].clone() },
                    child_frame_id: tree.links[j.child].clone(),
                    transform: geometry_msgs::Transform::default(),
                })
                .collect(),
        };
        let state = sensor_msgs::JointState { name: names, ..Default::default() };
        let every = ((ROBOT_TOPICS_PERIOD / sample_period).round() as u64).max(1);
        let full = sensor_msgs::JointState { position: vec![0.0; robot.dof], velocity: vec![0.0; robot.dof], effort: vec![0.0; robot.dof], ..state.clone() };
        let message_bytes = (2 * 47 + morc_ros_msgs::to_cdr(&full).len() + morc_ros_msgs::to_cdr(&transforms).len()) as u64;
        Ok(RobotTopics {
            robot: robot.clone(),
            data: morc_model::Data::new(model),
            tree,
            joint_states,
            tf,
            every,
            state,
            transforms,
            q: vec![0.0; robot.dof],
            message_bytes,
        })
    }

    /// The messages of the row `row` (written at `ns`, stamped `stamp`).
    fn write<W: std::io::Write + std::io::Seek>(&mut self, writer: &mut mcap::Writer<W>, row: &[f64], sequence: u32, ns: u64, stamp: Time) -> Result<(), mcap::McapError> {
        let n = self.robot.dof;
        let take = |at: Option<usize>, into: &mut Vec<f64>| {
            into.clear();
            if let Some(o) = at {
                into.extend_from_slice(&row[o..o + n]);
            }
        };
        self.state.header.stamp = stamp;
        take(self.robot.q, &mut self.state.position);
        take(self.robot.qd, &mut self.state.velocity);
        take(self.robot.tau, &mut self.state.effort);
        let header = mcap::records::MessageHeader { channel_id: self.joint_states, sequence, log_time: ns, publish_time: ns };
        writer.write_to_known_channel(&header, &morc_ros_msgs::to_cdr(&self.state))?;
        let Some(q) = self.robot.q else { return Ok(()) };
        self.q.copy_from_slice(&row[q..q + n]);
        let model = &self.robot.model;
        morc_model::forward_kinematics_joints(model, &mut self.data, &self.q);
        for (k, t) in self.transforms.transforms.iter_mut().enumerate() {
            let x = self.tree.placement(&self.data, k);
            let r = nalgebra::UnitQuaternion::from_rotation_matrix(&nalgebra::Rotation3::from_matrix_unchecked(x.rotation));
            t.header.stamp = stamp;
            t.transform.translation = geometry_msgs::Vector3 { x: x.translation.x, y: x.translation.y, z: x.translation.z };
            t.transform.rotation = geometry_msgs::Quaternion { x: r.i, y: r.j, z: r.k, w: r.w };
        }
        let header = mcap::records::MessageHeader { channel_id: self.tf, sequence, log_time: ns, publish_time: ns };
        writer.write_to_known_channel(&header, &morc_ros_msgs::to_cdr(&self.transforms))
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
            // From the run's start (UTC); a negative or NaN time is the start.
            let ns = self.start_ns + if t.is_finite() && t > 0.0 { (t * 1e9).round() as u64 } else { 0 };
            let stamp = Time::from_nanos(ns);
            let sequence = self.rows as u32;
            for (id, columns) in &self.groups {
                let w = &mut self.cdr;
                w.begin();
                w.time(stamp);
                w.f64(t);
                for c in columns {
                    match c.ty {
                        ValueType::Integer => w.i64(row[c.offset] as i64),
                        ValueType::Boolean => w.bool(row[c.offset] != 0.0),
                        ValueType::Vector(_) => w.f64_array(&row[c.offset..c.offset + c.width]),
                        ValueType::Real | ValueType::String => w.f64(row[c.offset]),
                        ValueType::List | ValueType::Record => unreachable!("the recorder refuses list and record signals"),
                    }
                }
                let header = mcap::records::MessageHeader { channel_id: *id, sequence, log_time: ns, publish_time: ns };
                self.writer.write_to_known_channel(&header, w.bytes()).map_err(|e| mcap_error(&self.path, e))?;
            }
            if let Some(r) = &mut self.robot {
                if self.rows.is_multiple_of(r.every) {
                    r.write(&mut self.writer, row, (self.rows / r.every) as u32, ns, stamp).map_err(|e| mcap_error(&self.path, e))?;
                }
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

    /// Each flush ends a chunk (its record, message indexes, the commit's padding and tail) and
    /// adds a chunk index to the summary; the summary repeats the header's schemas and channels;
    /// the far tail is at most one reserve and a page beyond the data.
    fn bound(&self, rows: u64, flushes: u64) -> u64 {
        let per_flush = 512 + 128 * self.channels;
        2 * self.created + rows * self.row_bytes + flushes * per_flush + (16 << 10) + super::mcap_sink::RESERVE + 2 * super::mcap_sink::PAGE
    }
    fn renamed(&mut self, path: PathBuf) {
        self.path = path;
    }
    fn close(mut self: Box<Self>, dropped: u64, complete: bool, write_error: &str) -> Result<(), String> {
        let mut fields = vec![("samples".into(), self.rows.to_string()), ("dropped_samples".into(), dropped.to_string()), ("complete".into(), u8::from(complete).to_string())];
        if !write_error.is_empty() {
            fields.push(("write_error".into(), write_error.to_string()));
        }
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
        let options = mcap::WriteOptions::new().compression(None).profile("ros2").library(format!("morc {}", env!("CARGO_PKG_VERSION")));
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

/// A signal as a recording's channel metadata describes it.
struct Signal {
    name: String,
    /// Its place among the recorded signals.
    column: usize,
    ty: ValueType,
    unit: String,
    description: String,
    units: Vec<String>,
    names: Vec<String>,
}

/// Samples a signal of type `ty` takes in a row.
fn width_of(ty: ValueType) -> usize {
    match ty {
        ValueType::Vector(n) => n,
        _ => 1,
    }
}

/// A component's message: its time and its signals' samples, in field order.
fn cdr_message(data: &[u8], types: impl Iterator<Item = ValueType>) -> Result<(f64, Vec<f64>), morc_ros_msgs::DecodeError> {
    let mut r = morc_ros_msgs::CdrReader::new(data)?;
    r.time()?;
    let t = r.f64()?;
    let mut values = Vec::new();
    for ty in types {
        match ty {
            ValueType::Integer => values.push(r.i64()? as f64),
            ValueType::Boolean => values.push(f64::from(u8::from(r.bool()?))),
            ValueType::Vector(n) => {
                for _ in 0..n {
                    values.push(r.f64()?);
                }
            }
            ValueType::Real | ValueType::String => values.push(r.f64()?),
            ValueType::List | ValueType::Record => unreachable!("a recording's types are parsed by parse_type, which knows no list or record"),
        }
    }
    Ok((t, values))
}

/// An older file's message: `{"time": t, "value": x}`.
fn json_message(data: &[u8], ty: ValueType, log_time: u64) -> Result<(f64, Vec<f64>), String> {
    let v: serde_json::Value = serde_json::from_slice(data).map_err(|e| e.to_string())?;
    let t = v.get("time").and_then(serde_json::Value::as_f64).unwrap_or(log_time as f64 * 1e-9);
    let x = |v: &serde_json::Value| match v {
        serde_json::Value::Bool(b) => f64::from(u8::from(*b)),
        other => other.as_f64().unwrap_or(f64::NAN),
    };
    let mut values = vec![f64::NAN; width_of(ty)];
    match v.get("value") {
        Some(serde_json::Value::Array(items)) => {
            for (slot, item) in values.iter_mut().zip(items) {
                *slot = x(item);
            }
        }
        Some(other) => values[0] = x(other),
        None => {}
    }
    Ok((t, values))
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
    let mut signals: Vec<Signal> = Vec::new();
    // Channel id → its signals' indices in `signals`, and whether its messages are JSON (older files).
    let mut channels: BTreeMap<u16, (Vec<usize>, bool)> = BTreeMap::new();
    // Per channel, its messages: (sequence, time, values of its signals in field order).
    let mut messages: BTreeMap<u16, Vec<(u32, f64, Vec<f64>)>> = BTreeMap::new();
    let records = mcap::read::ChunkFlattener::new(&bytes).map_err(|e| err(format!("not an MCAP file ({e})")))?;
    for record in records {
        // A file a crash cut short reads up to its last complete record.
        let Ok(record) = record else { break };
        match record {
            Record::Metadata(m) => {
                meta.insert(m.name, m.metadata);
            }
            Record::Channel(c) => {
                let list = |k: &str| c.metadata.get(k).and_then(|v| serde_json::from_str::<Vec<String>>(v).ok());
                let first = signals.len();
                if let Some(names) = list("signals") {
                    // A component's channel: its signals' metadata under "<signal>.<what>".
                    for name in names {
                        let get = |k: &str| c.metadata.get(&format!("{name}.{k}")).cloned().unwrap_or_default();
                        let ty = parse_type(&get("type")).ok_or_else(|| err(format!("signal '{name}' on channel '{}' has no morc signal type", c.topic)))?;
                        let elements = |k: &str| list(&format!("{name}.{k}")).unwrap_or_default();
                        let column = get("column").parse().unwrap_or(usize::MAX);
                        signals.push(Signal { column, ty, unit: get("unit"), description: get("description"), units: elements("element_units"), names: elements("element_names"), name });
                    }
                    channels.insert(c.id, ((first..signals.len()).collect(), false));
                } else if c.message_encoding == "json" {
                    // morc before ROS 2 messages: a channel per signal, {"time", "value"} in JSON.
                    let ty = c
                        .metadata
                        .get("type")
                        .and_then(|t| parse_type(t))
                        .ok_or_else(|| err(format!("channel '{}' has no morc signal type: not a morc recording", c.topic)))?;
                    let get = |k: &str| c.metadata.get(k).cloned().unwrap_or_default();
                    let column = usize::from(c.id);
                    signals.push(Signal {
                        column,
                        ty,
                        unit: get("unit"),
                        description: get("description"),
                        units: list("element_units").unwrap_or_default(),
                        names: list("element_names").unwrap_or_default(),
                        name: c.topic.clone(),
                    });
                    channels.insert(c.id, (vec![first], true));
                }
                // Anything else (/joint_states, /tf, /robot_description) is there for other tools.
            }
            Record::Message { header, data } => {
                let Some((ids, json)) = channels.get(&header.channel_id) else { continue };
                let what = |e: String| err(format!("message {} on channel {}: {e}", header.sequence, header.channel_id));
                let (t, values) = if *json {
                    json_message(&data, signals[ids[0]].ty, header.log_time).map_err(what)?
                } else {
                    cdr_message(&data, ids.iter().map(|&i| signals[i].ty)).map_err(|e| what(e.to_string()))?
                };
                messages.entry(header.channel_id).or_default().push((header.sequence, t, values));
            }
            _ => {}
        }
    }
    let head = meta.get("morc").ok_or_else(|| err("no \"morc\" metadata record: not a morc recording".into()))?;
    let field = |m: &BTreeMap<String, String>, k: &str| m.get(k).cloned().unwrap_or_default();
    let number = |m: &BTreeMap<String, String>, k: &str| m.get(k).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // The signals in the order they were recorded; each with its channel and place in its messages.
    let mut order: Vec<(usize, u16, usize)> = channels.iter().flat_map(|(id, (ids, _))| ids.iter().enumerate().map(move |(k, &i)| (i, *id, k))).collect();
    order.sort_by_key(|&(i, id, k)| (signals[i].column, id, k));
    let (mut columns, width) = columns_of(order.iter().map(|&(i, _, _)| (signals[i].name.clone(), signals[i].ty, signals[i].unit.clone(), signals[i].description.clone())).collect());
    for (c, &(i, _, _)) in columns.iter_mut().zip(&order) {
        (c.element_units, c.element_names) = (std::mem::take(&mut signals[i].units), std::mem::take(&mut signals[i].names));
    }
    for list in messages.values_mut() {
        list.sort_by_key(|m| m.0);
    }
    let n = channels.keys().map(|id| messages.get(id).map_or(0, Vec::len)).min().unwrap_or(0);
    let mut rows = vec![0.0; n * width];
    for (c, &(_, id, k)) in columns.iter().zip(&order) {
        let Some(list) = messages.get(&id) else { continue };
        // Where signal k's values start in its channel's messages.
        let start: usize = channels[&id].0[..k].iter().map(|&i| width_of(signals[i].ty)).sum();
        for (i, (_, t, values)) in list.iter().take(n).enumerate() {
            let row = &mut rows[i * width..(i + 1) * width];
            row[0] = *t;
            for (x, v) in row[c.offset..c.offset + c.width].iter_mut().zip(&values[start..]) {
                *x = *v;
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
        robot: None,
    };
    let dropped = end.map_or(0.0, |m| number(m, "dropped_samples")) as u64;
    let write_error = end.map(|m| field(m, "write_error").to_string()).unwrap_or_default();
    Ok(Contents { header, columns, rows, width, dropped, complete: end.is_some_and(|m| field(m, "complete") == "1"), write_error, timing })
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
    if !c.write_error.is_empty() {
        let _ = writeln!(s, "{}", super::read::stopped_early(&c.write_error, c.samples() as u64, c.samples() as f64 * h.sample_period));
    } else if !c.complete {
        let _ = writeln!(s, "{}", super::read::cut_short(path, c.samples() as u64, c.samples() as f64 * h.sample_period));
    }
    let w = c.columns.iter().map(|c| c.name.len()).max().unwrap_or(4).max(7);
    let _ = writeln!(s, "signals (a channel /morc/<component> each, ROS 2 messages):");
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

    fn column(name: &str, ty: ValueType, offset: usize) -> SignalColumn {
        let width = if let ValueType::Vector(n) = ty { n } else { 1 };
        SignalColumn { name: name.into(), ty, unit: String::new(), element_units: Vec::new(), element_names: Vec::new(), description: String::new(), offset, width }
    }

    #[test]
    fn fields_are_distinct_valid_ros_names_and_the_schema_is_rosbag2s() {
        let cols = [column("c.q", ValueType::Vector(3), 1), column("c.Q", ValueType::Real, 4), column("c.time", ValueType::Integer, 5), column("c.ok?", ValueType::Boolean, 6)];
        let (def, fields) = component_schema(&cols);
        assert_eq!(fields, ["q", "q_2", "time_2", "ok"]);
        assert!(fields.iter().all(|f| morc_ros_msgs::is_field_name(f)));
        let sep = "=".repeat(80);
        assert_eq!(def, format!("builtin_interfaces/Time stamp\nfloat64 time\nfloat64[3] q\nfloat64 q_2\nint64 time_2\nbool ok\n{sep}\nMSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n"));
        assert_eq!(topic_token("my-ctl"), "my_ctl");
        assert_eq!(topic_token("2nd"), "_2nd");
    }

    #[test]
    fn a_row_reads_back_from_its_message() {
        let cols = [column("c.q", ValueType::Vector(2), 1), column("c.n", ValueType::Integer, 3), column("c.b", ValueType::Boolean, 4), column("c.x", ValueType::Real, 5)];
        let row = [0.5, 1.25, -2.0, 7.0, 1.0, f64::MIN_POSITIVE];
        let mut w = CdrWriter::default();
        w.begin();
        w.time(Time::from_nanos(12));
        w.f64(row[0]);
        w.f64_array(&row[1..3]);
        w.i64(7);
        w.bool(true);
        w.f64(row[5]);
        let (t, values) = cdr_message(w.bytes(), cols.iter().map(|c| c.ty)).unwrap();
        assert_eq!(t, 0.5);
        assert_eq!(values, &row[1..]);
        assert!(cdr_message(&w.bytes()[..w.bytes().len() - 1], cols.iter().map(|c| c.ty)).is_err());
    }

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
