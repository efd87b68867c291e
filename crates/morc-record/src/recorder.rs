//! The Recorder component: samples its inputs every `decimation`-th step
//! into a lock-free ring; a writer thread puts them in an HDF5 file.
//!
//! Its inputs are fixed at construction, one per recorded signal, named
//! after the signal with '/' for '.' (see [`Recorder::input_port`]), so the
//! assembly connects `robot.q` → `rec.robot/q`.

use std::path::PathBuf;
use std::sync::Arc;

use super::ring::{ring, RingProducer};
use super::writer::{FileHeader, RecordedRobot, SignalColumn, Writer, WriterOutcome, WriterProgress, WriterTiming};
use morc_kernel::*;
use morc_kernel::{Value, ValueType};

/// One signal to record.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedSignal {
    /// "component.port", e.g. "robot.q": names the dataset too.
    pub name: String,
    /// Value type of the signal; sets the dataset's element type and shape.
    pub ty: ValueType,
    /// Unit, stored as the dataset's `unit` attribute.
    pub unit: String,
    /// A vector's unit per element when they differ: the `element_units` attribute.
    pub element_units: Vec<String>,
    /// A vector's name per element: the `element_names` attribute.
    pub element_names: Vec<String>,
    /// Stored as the dataset's `description` attribute.
    pub description: String,
}

impl RecordedSignal {
    /// A signal to record from its name, type, unit and description.
    pub fn new(name: &str, ty: ValueType, unit: &str, description: &str) -> Self {
        RecordedSignal { name: name.into(), ty, unit: unit.into(), element_units: Vec::new(), element_names: Vec::new(), description: description.into() }
    }
    /// With a vector's units and names per element (as its port declares them; empty: none).
    pub fn with_elements(mut self, units: &[String], names: &[String]) -> Self {
        (self.element_units, self.element_names) = (units.to_vec(), names.to_vec());
        self
    }
}

/// One component of the recorded assembly, as the file describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct ComponentMetadata {
    /// Component name: the group `/assembly/<name>`.
    pub name: String,
    /// Component kind, the group's `kind` attribute.
    pub kind: String,
    /// Sample time as a multiple of the base period.
    pub every: u32,
    /// Parameter values, one attribute each in `/assembly/<name>/parameters`.
    pub params: Vec<(String, Value)>,
}

/// How a recording's file is named when recording starts. Either way an
/// existing file is never replaced: the file is created exclusively, and
/// when the name is taken the next free numbered name next to it is used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FileNaming {
    /// `path` itself; if it exists, `stem-001.ext`, `stem-002.ext`… (with a warning
    /// saying which): a file the user named.
    #[default]
    AsGiven,
    /// `stem-000.ext`, `stem-001.ext`…, the first free one: the run files of a folder.
    Numbered,
}

/// Where to record and what the file says about the run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RecordingMetadata {
    /// The file asked for; the one written (see [`FileNaming`]) is the result `path`.
    pub path: PathBuf,
    /// How the written file is named from `path`.
    pub naming: FileNaming,
    /// The robot (the base's description, else its name), the root's `robot` attribute.
    pub robot: String,
    /// The assembly's name, the root's `assembly` attribute.
    pub assembly: String,
    /// Base period T in seconds.
    pub base_period: f64,
    /// The user's words about the run.
    pub notes: String,
    /// Every component of the assembly, written under `/assembly`.
    pub components: Vec<ComponentMetadata>,
}

/// Sizes and intervals; the defaults suit everything but tests of the limits.
#[derive(Clone, Debug, Default)]
pub struct RecorderTuning {
    /// Rows the ring holds; by default 2 s of data, at least 4096.
    pub ring_rows: Option<usize>,
    /// When the writer flushes and how long it waits (see [`WriterTiming`]).
    pub writer: WriterTiming,
}

/// The component that records its inputs to an HDF5 file through a lock-free ring and a writer thread.
pub struct Recorder {
    info: ComponentInfo,
    signals: Vec<RecordedSignal>,
    metadata: RecordingMetadata,
    tuning: RecorderTuning,
    decimation: u64,
    columns: Vec<SignalColumn>,
    /// The row being assembled on the real-time side (preallocated).
    row: Vec<f64>,
    producer: Option<RingProducer>,
    writer: Option<Writer>,
    /// A full ring waits for the writer rather than drop (the virtual clock).
    wait_when_full: bool,
    /// The writer's thread and progress, to wake it and to stop waiting if it ended.
    writer_thread: Option<(std::thread::Thread, Arc<WriterProgress>)>,
    /// The robot the assembly drives and its q, qd and tau signals, for an MCAP file's
    /// `/joint_states` and `/tf` ([`Recorder::with_robot`]).
    robot: Option<(Arc<morc_model::Model>, [Option<String>; 3])>,
    /// Inputs read for the robot's topics but not recorded (after the recorded ones).
    extra: Vec<RecordedSignal>,
    /// The run was told that writing failed.
    failure_told: bool,
}

impl Recorder {
    /// A recorder of `signals` into `metadata.path`, keeping every
    /// `decimation`-th step (1 = every step).
    pub fn new(signals: Vec<RecordedSignal>, metadata: RecordingMetadata, decimation: u32) -> Self {
        let mut info = ComponentInfo::new("recorder", "records its inputs to an HDF5 file; results: name.path, name.samples, name.dropped")
            .param(ParamInfo::new("path", Value::String(metadata.path.display().to_string())).doc("the HDF5 file to write"))
            .param(ParamInfo::new("notes", Value::String(metadata.notes.clone())).doc("the user's words about the run, stored in the file"))
            .param(ParamInfo::new("decimation", Value::Integer(i64::from(decimation))).doc("record every m-th step"))
            .param(
                ParamInfo::new("wait_when_full", Value::Boolean(false))
                    .doc("on a full buffer, wait for the writer instead of dropping the sample (only on the virtual clock, where time can wait; engine:run sets it there)"),
            );
        for s in &signals {
            let doc = if s.description.is_empty() { format!("records {}", s.name) } else { s.description.clone() };
            let mut port = PortInfo::new(&Self::input_port(&s.name), s.ty).unit(&s.unit).elements(&s.element_names).doc(&doc).required();
            port.element_units = s.element_units.clone();
            info = info.input(port);
        }
        Recorder {
            info,
            signals,
            metadata,
            tuning: RecorderTuning::default(),
            decimation: u64::from(decimation.max(1)),
            columns: Vec::new(),
            row: Vec::new(),
            producer: None,
            writer: None,
            wait_when_full: false,
            writer_thread: None,
            robot: None,
            extra: Vec::new(),
            failure_told: false,
        }
    }

    /// Also writes the robot's joint states, its frames and its URDF (an MCAP recording's
    /// `/joint_states`, `/tf`, `/robot_description`; HDF5 ignores them): `joints` are its
    /// q, qd and tau signals (vectors of the model's `nq`, SI units), each when the assembly
    /// has it. Those not recorded become inputs of their own, read but not written as signals.
    pub fn with_robot(mut self, model: Arc<morc_model::Model>, joints: [Option<RecordedSignal>; 3]) -> Self {
        let mut names: [Option<String>; 3] = Default::default();
        for (slot, j) in names.iter_mut().zip(joints) {
            let Some(j) = j else { continue };
            if !matches!(j.ty, ValueType::Vector(n) if n == model.nq()) {
                continue;
            }
            *slot = Some(j.name.clone());
            if !self.signals.iter().chain(&self.extra).any(|s| s.name == j.name) {
                let port = PortInfo::new(&Self::input_port(&j.name), j.ty).unit(&j.unit).doc(&format!("the robot's {} for /joint_states and /tf", j.name)).required();
                self.info.inputs.push(port);
                self.extra.push(j);
            }
        }
        if names[0].is_some() || names[1].is_some() || names[2].is_some() {
            self.robot = Some((model, names));
        }
        self
    }

    /// Sets ring size and writer intervals (tests of the limits).
    pub fn with_tuning(mut self, tuning: RecorderTuning) -> Self {
        self.tuning = tuning;
        self
    }

    /// The input port that records `signal`: "robot.q" → "robot/q" (a port
    /// name cannot hold '.', which separates component and port).
    pub fn input_port(signal: &str) -> String {
        signal.replace('.', "/")
    }

    /// The signals read for the robot's topics but not recorded ([`Recorder::with_robot`]), to connect.
    pub fn extra_inputs(&self) -> Vec<String> {
        self.extra.iter().map(|s| s.name.clone()).collect()
    }

    /// Rows written and flushed so far, while recording.
    pub fn progress(&self) -> Option<Arc<WriterProgress>> {
        self.writer.as_ref().map(|w| w.progress().clone())
    }

    /// The file being written, while recording: the one reserved when the
    /// recorder was initialised (see [`FileNaming`]).
    pub fn file(&self) -> Option<&std::path::Path> {
        self.writer.as_ref().map(|w| w.path())
    }

    fn stop_writer(&mut self) -> Option<WriterOutcome> {
        self.producer = None;
        self.writer_thread = None;
        self.writer.take().map(|mut w| w.finish())
    }
}

impl Component for Recorder {
    morc_kernel::component_info!(info);

    fn configure(&mut self) -> Result<(), String> {
        let path = self.info.param_value("path").map(|v| v.str().to_string()).unwrap_or_default();
        if path.is_empty() {
            return Err("no file to record into: set parameter 'path' (e.g. runs/x.h5)".into());
        }
        self.metadata.path = PathBuf::from(path);
        self.metadata.notes = self.info.param_value("notes").map(|v| v.str().to_string()).unwrap_or_default();
        let m = self.info.integer("decimation");
        if !(1..=1_000_000).contains(&m) {
            return Err(format!("decimation must be a whole number from 1 (every step) up, got {m}"));
        }
        self.decimation = m as u64;
        self.wait_when_full = self.info.boolean("wait_when_full");
        if self.signals.is_empty() {
            return Err("nothing to record: give the recorder at least one signal".into());
        }
        self.columns.clear();
        let mut offset = 1; // column 0 is time

        for (i, s) in self.signals.iter().enumerate() {
            if self.signals[..i].iter().any(|t| t.name == s.name) {
                return Err(format!("signal '{}' is recorded twice; list it once", s.name));
            }
            if s.name == "time" || s.name.starts_with("assembly") || s.name.starts_with("timing") {
                // These name the file's own datasets and groups.
                if !s.name.contains('.') {
                    return Err(format!("'{}' is reserved in a recording; record signals as \"component.port\"", s.name));
                }
            }
            let width = match s.ty {
                ValueType::Real | ValueType::Integer | ValueType::Boolean => 1,
                ValueType::Vector(n) if n > 0 => n,
                ValueType::Vector(_) => return Err(format!("signal '{}' is an empty vector: nothing to record", s.name)),
                ValueType::String => return Err(format!("signal '{}': string signals can't be recorded yet; leave it out", s.name)),
                // No port carries one (the assembly refuses it), so no signal either.
                ValueType::List | ValueType::Record => return Err(format!("signal '{}' is a {}: only parameters can be lists or records", s.name, s.ty)),
            };
            self.columns.push(SignalColumn {
                name: s.name.clone(),
                ty: s.ty,
                unit: s.unit.clone(),
                element_units: s.element_units.clone(),
                element_names: s.element_names.clone(),
                description: s.description.clone(),
                offset,
                width,
            });
            offset += width;
        }
        // The robot's joints that are read but not recorded, after the recorded signals.
        for s in &self.extra {
            let width = match s.ty {
                ValueType::Vector(n) => n,
                _ => 1,
            };
            self.columns.push(SignalColumn {
                name: s.name.clone(),
                ty: s.ty,
                unit: s.unit.clone(),
                element_units: Vec::new(),
                element_names: Vec::new(),
                description: String::new(),
                offset,
                width,
            });
            offset += width;
        }
        self.row = vec![0.0; offset];
        Ok(())
    }

    fn initialize(&mut self, ctx: &InitContext, _outputs: &mut [Value]) -> Result<(), String> {
        // A re-initialised recorder closes its previous file first.
        self.stop_writer();
        let sample_period = ctx.period * self.decimation as f64;
        let rows = self.tuning.ring_rows.unwrap_or_else(|| ((2.0 / sample_period).ceil() as usize).max(4096));
        let (producer, consumer) = ring(rows.max(1), self.row.len());
        let mut metadata = self.metadata.clone();
        if metadata.base_period == 0.0 {
            metadata.base_period = ctx.base_period;
        }
        let robot = self.robot.as_ref().map(|(model, names)| {
            let at = |name: &Option<String>| name.as_ref().and_then(|n| self.columns.iter().find(|c| &c.name == n)).map(|c| c.offset);
            RecordedRobot { model: model.clone(), dof: model.nq(), q: at(&names[0]), qd: at(&names[1]), tau: at(&names[2]) }
        });
        let header = FileHeader { metadata, sample_period, decimation: self.decimation as u32, recorder: ctx.name.to_string(), utc_start: None, robot };
        let recorded = self.columns.len() - self.extra.len();
        let writer = Writer::start(header, self.columns[..recorded].to_vec(), consumer, self.tuning.writer.clone())?;
        self.writer_thread = writer.thread().map(|t| (t.clone(), writer.progress().clone()));
        self.failure_told = false;
        self.producer = Some(producer);
        self.writer = Some(writer);
        Ok(())
    }

    /// Real-time path: copies the inputs into the preallocated row and
    /// pushes it; never blocks, allocates or calls the system.
    fn step(&mut self, ctx: &StepContext, inputs: &[Value], _outputs: &mut [Value]) -> Step {
        // A recording that cannot be written fails the run (once: the message is made then).
        if let Some((_, progress)) = &self.writer_thread {
            if progress.failed.load(std::sync::atomic::Ordering::Acquire) && !self.failure_told {
                self.failure_told = true;
                let message = progress.error.lock().unwrap_or_else(|p| p.into_inner()).clone();
                return Step::Fault(message.unwrap_or_else(|| "the recording stopped: writing its file failed".into()));
            }
        }
        if !ctx.step.is_multiple_of(self.decimation) {
            return Step::Continue;
        }
        let Some(producer) = self.producer.as_mut() else {
            return Step::Continue;
        };
        self.row[0] = ctx.time;
        for (c, v) in self.columns.iter().zip(inputs) {
            match v {
                Value::Vector(x) => {
                    let n = c.width.min(x.len());
                    self.row[c.offset..c.offset + n].copy_from_slice(&x[..n]);
                }
                // Reals, and integers and booleans as f64 (exact up to 2^53).
                other => self.row[c.offset] = other.real(),
            }
        }
        // Simulated time can wait for the disk: nothing is dropped on the virtual clock.
        if self.wait_when_full {
            if let Some((thread, progress)) = &self.writer_thread {
                while !producer.has_room() && !progress.ended.load(std::sync::atomic::Ordering::Acquire) {
                    thread.unpark();
                    std::thread::yield_now();
                }
            }
        }
        // A full ring drops the row and counts it: the file says how many.
        producer.push_row(&self.row);
        Step::Continue
    }

    fn terminate(&mut self, results: &mut AssemblyResults) {
        let Some(outcome) = self.stop_writer() else {
            return;
        };
        if outcome.dropped > 0 && outcome.error.is_none() {
            log::warn!("recording {}: {} samples dropped (the writer did not keep up; record fewer signals, decimate, or use a faster disk)", outcome.path.display(), outcome.dropped);
        }
        results.set("path", Value::String(outcome.path.display().to_string()));
        results.set("samples", Value::Integer(outcome.samples as i64));
        results.set("dropped", Value::Integer(outcome.dropped as i64));
        if let Some(e) = outcome.error {
            // A failure the run faulted with was said then.
            if !self.failure_told {
                log::error!("{e}");
            }
            results.set("error", Value::String(e));
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        // An assembly that fails before terminate still leaves a closed file.
        self.stop_writer();
    }
}
