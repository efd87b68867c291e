//! A recording as part of an assembly: signal patterns are matched against
//! every output of the assembly when it is planned, and a Recorder is
//! attached to the matches. Each run writes a new file: a recording never
//! replaces an existing file (see [`super::writer`]).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::recorder::{ComponentMetadata, FileNaming, RecordedSignal, Recorder, RecordingMetadata};
use morc_kernel::ValueType;
use morc_kernel::{Attach, Attachment};

/// What the program asked to record.
#[derive(Clone, Debug)]
pub struct RecordRequest {
    /// "robot.q", "ff.*", "*.y" …
    pub patterns: Vec<String>,
    /// The recorder steps every this many base periods.
    pub every: u32,
    /// Of the recorder's steps, every this many is written (1: all).
    pub decimation: u32,
    /// A file, or a folder to put a new file in for each run (never replacing one).
    pub target: RecordTarget,
    /// Written to the file's `notes` attribute.
    pub notes: String,
    /// The file format of a folder's run files (a file's own extension says its format).
    pub format: RecordFormat,
    /// The robot the assembly drives (None: the engine's, as [`set_robot`] last set it). An
    /// MCAP recording writes its joint states, frames and URDF for ROS 2 tools.
    pub robot: Option<Arc<morc_model::Model>>,
}

/// The engine's robot, for requests that name none.
static ROBOT: Mutex<Option<Arc<morc_model::Model>>> = Mutex::new(None);

/// Sets the robot the recordings of the next runs describe (the engine's robot), or none.
pub fn set_robot(model: Option<Arc<morc_model::Model>>) {
    *ROBOT.lock().unwrap_or_else(|p| p.into_inner()) = model;
}

/// The file format of a recording.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RecordFormat {
    /// HDF5 (`.h5`), the default.
    #[default]
    Hdf5,
    /// MCAP (`.mcap`), which Foxglove and PlotJuggler open.
    Mcap,
}

impl RecordFormat {
    /// "hdf5"/"h5" or "mcap"; the error says what there is.
    pub fn parse(name: &str) -> Result<Self, String> {
        match name.to_ascii_lowercase().as_str() {
            "hdf5" | "h5" => Ok(RecordFormat::Hdf5),
            "mcap" => Ok(RecordFormat::Mcap),
            other => Err(format!("unknown recording format '{other}': use hdf5 or mcap")),
        }
    }
    /// The file extension of this format.
    pub fn extension(self) -> &'static str {
        match self {
            RecordFormat::Hdf5 => "h5",
            RecordFormat::Mcap => "mcap",
        }
    }
}

/// Where a run's recording goes.
#[derive(Clone, Debug)]
pub enum RecordTarget {
    /// This file, or the next free numbered name next to it if it exists ([`FileNaming::AsGiven`]).
    File(PathBuf),
    /// A new `<assembly>-<UTC time>.h5` in this folder for each run.
    Folder(PathBuf),
}

/// A folder's run file: `<assembly>-<UTC time to the second>.h5` (or `.mcap`), numbered
/// `-000`, `-001`… by the writer when it creates the file exclusively (see
/// [`super::writer`]), so runs in the same second, in this process or
/// another, get distinct files.
fn run_file(folder: &std::path::Path, assembly: &str, format: RecordFormat) -> PathBuf {
    let stamp: String = super::writer::utc_now_iso8601().chars().filter(|c| c.is_ascii_digit() || *c == 'T').take(15).collect();
    let safe: String = assembly.chars().map(|c| if c.is_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    folder.join(format!("{safe}-{stamp}.{}", format.extension()))
}

/// The attachment that builds the Recorder when the assembly is planned.
pub fn attachment(request: RecordRequest) -> Attach {
    Arc::new(move |view| {
        let available: Vec<(String, ValueType, String)> = view.signals.iter().filter(|s| s.ty != ValueType::String).map(|s| (s.name.clone(), s.ty, s.unit.clone())).collect();
        let patterns: Vec<&str> = request.patterns.iter().map(String::as_str).collect();
        let matched = super::glob::expand(&patterns, &available)?;
        let signals: Vec<RecordedSignal> = matched
            .iter()
            .map(|(name, ty, unit)| {
                let info = view.signals.iter().find(|s| &s.name == name);
                let doc = info.map(|s| s.doc.clone()).unwrap_or_default();
                let (units, names) = info.map(|s| (&s.element_units[..], &s.element_names[..])).unwrap_or_default();
                RecordedSignal::new(name, *ty, unit, &doc).with_elements(units, names)
            })
            .collect();
        let (path, naming) = match &request.target {
            RecordTarget::File(p) => (p.clone(), FileNaming::AsGiven),
            RecordTarget::Folder(dir) => (run_file(dir, view.name, request.format), FileNaming::Numbered),
        };
        let metadata = RecordingMetadata {
            path,
            naming,
            robot: if view.base_description.is_empty() { view.base_name.to_string() } else { view.base_description.to_string() },
            assembly: view.name.to_string(),
            base_period: view.base_period,
            notes: request.notes.clone(),
            components: view.components.iter().map(|c| ComponentMetadata { name: c.name.clone(), kind: c.kind.clone(), every: c.every, params: c.params.clone() }).collect(),
        };
        let mcap = super::writer::is_mcap(&metadata.path);
        let mut inputs: Vec<(String, String)> = matched.iter().map(|(name, _, _)| (name.clone(), Recorder::input_port(name))).collect();
        let mut recorder = Recorder::new(signals, metadata, request.decimation);
        let robot = request.robot.clone().or_else(|| ROBOT.lock().unwrap_or_else(|p| p.into_inner()).clone());
        if let (true, Some(model)) = (mcap, robot) {
            // The base's joints, for /joint_states and /tf, whether recorded or not.
            let joint = |port: &str| {
                let name = format!("{}.{port}", view.base_name);
                view.signals.iter().find(|s| s.name == name).map(|s| RecordedSignal::new(&s.name, s.ty, &s.unit, &s.doc))
            };
            recorder = recorder.with_robot(model, [joint("q"), joint("qd"), joint("tau")]);
            for name in recorder.extra_inputs() {
                inputs.push((name.clone(), Recorder::input_port(&name)));
            }
        }
        Ok(Attachment { component: Box::new(recorder), every: request.every, inputs })
    })
}
