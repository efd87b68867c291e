//! morc's native blocks as FMUs (FMI 2.0 and 3.0, co-simulation, and model
//! exchange for blocks that are an ODE): the variable table generated from a
//! block's ports and parameters, and packaging into a `.fmu` (the model
//! description is written by `export_description.rs`). The C entry points
//! live in the `morc-fmu` crate (a cdylib): one shared library serves every
//! exported model and FMI version and tells them apart by GUID or
//! instantiation token, so the build produces it once and each `.fmu`
//! carries a copy named after its model.
//!
//! Mapping: inputs → causality "input", outputs → "output", parameters →
//! "parameter" (fixed, set before initialisation), plus the fixed parameter
//! `sample_period`: the block's own period h. `fmiDoStep(t, m·h)` runs the
//! block's steps k = t/h … t/h + m − 1; the outputs after it are those of the
//! last step. Vector parameters and the width `n` are not exported (n = 1).
//! Model exchange (blocks whose [`Component::ode`] is Some): the states are
//! outputs, each with a local `der(name)`; the importer integrates them.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::description::FmiVersion;
use super::FmiError;
use morc_kernel::Component;
use morc_kernel::{Value, ValueType};

/// A native block exported as an FMU.
#[derive(Debug)]
pub struct ExportedBlock {
    /// The FMU's modelIdentifier: the binary's file name and the model's name.
    pub model_identifier: &'static str,
    /// The native component kind it wraps (see [`morc_kernel::registry::natives`]).
    pub kind: &'static str,
    /// Default experiment: stop time in seconds.
    pub stop_time: f64,
}

/// Every block morc exports, by model identifier.
pub static EXPORTED: &[ExportedBlock] = &[
    ExportedBlock { model_identifier: "morc_bessel", kind: "bessel", stop_time: 1.0 },
    ExportedBlock { model_identifier: "morc_pid", kind: "pid", stop_time: 1.0 },
    ExportedBlock { model_identifier: "morc_ppi", kind: "ppi", stop_time: 1.0 },
    ExportedBlock { model_identifier: "morc_trajectory", kind: "trajectory", stop_time: 2.0 },
    ExportedBlock { model_identifier: "morc_arm", kind: "arm", stop_time: 2.0 },
];

/// The default sample period of an exported block (also its default experiment's step).
pub const DEFAULT_SAMPLE_PERIOD: f64 = 1e-3;

/// Name of the extra parameter that holds the block's sample period.
pub const SAMPLE_PERIOD: &str = "sample_period";

/// What an exported variable stands for in the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Input port k of the block.
    Input(usize),
    /// Output port k of the block.
    Output(usize),
    /// Index into [`ComponentInfo::params`](morc_kernel::ComponentInfo).
    Parameter(usize),
    /// The sample period parameter (s).
    SamplePeriod,
    /// FMI 3's explicit independent variable.
    Time,
    /// Model exchange: the derivative of state k.
    Derivative(usize),
}

/// One variable of an exported FMU. Value references are the variable's
/// index: unique across types, so one table serves every getter and setter.
#[derive(Clone, Debug)]
pub struct ExportVariable {
    /// Variable name (the block's port or parameter name).
    pub name: String,
    /// valueReference: the index into the exported variable table.
    pub value_reference: u32,
    /// morc value type.
    pub ty: ValueType,
    /// What it stands for in the block.
    pub role: Role,
    /// Start value written to the model description; None for outputs calculated by the block.
    pub start: Option<Value>,
    /// Unit; empty when none.
    pub unit: String,
    /// One-line description from the port or parameter.
    pub description: String,
    /// A derivative: the value reference of its state.
    pub derivative_of: Option<u32>,
}

/// The exported variables of a block with default parameters (inputs,
/// outputs, parameters, sample period; then the derivatives of its states
/// if it is an ODE, and FMI 3's time, in that order).
pub fn variables(component: &mut dyn Component, version: FmiVersion) -> Vec<ExportVariable> {
    let info = component.info().clone();
    let mut vars: Vec<ExportVariable> = Vec::new();
    let push = |vars: &mut Vec<ExportVariable>, name: &str, ty, role, start: Option<Value>, unit: &str, doc: &str| {
        vars.push(ExportVariable { name: name.into(), value_reference: vars.len() as u32, ty, role, start, unit: unit.into(), description: doc.into(), derivative_of: None });
    };
    for (i, p) in info.inputs.iter().enumerate() {
        push(&mut vars, &p.name, p.ty, Role::Input(i), Some(Value::zero(p.ty)), &p.unit, &p.doc);
    }
    for (i, p) in info.outputs.iter().enumerate() {
        push(&mut vars, &p.name, p.ty, Role::Output(i), None, &p.unit, &p.doc);
    }
    for (i, p) in info.params.iter().enumerate() {
        // The width is structural (ports become vectors), vectors would need FMI 3 arrays, and
        // lists and records have no FMI type at all: those keep their defaults.
        if p.name == "n" || matches!(p.value, Value::Vector(_) | Value::List(_) | Value::Record(_)) {
            continue;
        }
        push(&mut vars, &p.name, p.value.ty(), Role::Parameter(i), Some(p.value.clone()), &p.unit, &p.doc);
    }
    push(&mut vars, SAMPLE_PERIOD, ValueType::Real, Role::SamplePeriod, Some(Value::Real(DEFAULT_SAMPLE_PERIOD)), "s", "the block's sample period h; each doStep must span a whole number of periods");
    // Exported blocks have width 1: state k is output port state_outputs[k], whose value reference is its index.
    let state_ports: Vec<usize> = component.ode().map(|o| o.state_outputs().to_vec()).unwrap_or_default();
    for (k, port) in state_ports.into_iter().enumerate() {
        let state = &info.outputs[port];
        let state_vr = (info.inputs.len() + port) as u32;
        push(&mut vars, &format!("der({})", state.name), ValueType::Real, Role::Derivative(k), None, "", &format!("derivative of {}", state.name));
        if let Some(v) = vars.last_mut() {
            v.derivative_of = Some(state_vr);
        }
    }
    if version == FmiVersion::V3 {
        push(&mut vars, "time", ValueType::Real, Role::Time, None, "s", "simulation time");
    }
    vars
}

/// Looks an exported block up by model identifier.
pub fn find(model_identifier: &str) -> Option<&'static ExportedBlock> {
    EXPORTED.iter().find(|b| b.model_identifier == model_identifier)
}

/// The block's component with default parameters.
pub fn instantiate(block: &ExportedBlock) -> Result<Box<dyn Component>, FmiError> {
    morc_kernel::registry::natives().create(block.kind).map_err(|e| FmiError::Export(format!("morc cannot export '{}': {e}", block.model_identifier)))
}

/// modelDescription.xml of `version` and the GUID or instantiation token in it.
pub fn model_description(block: &ExportedBlock, version: FmiVersion) -> Result<(String, String), FmiError> {
    let mut component = instantiate(block)?;
    let vars = variables(&mut *component, version);
    let model_exchange = component.ode().is_some();
    Ok(super::export_description::write(block, component.info(), &vars, model_exchange, version))
}

/// The file name of a block's FMU of `version`.
pub fn file_name(block: &ExportedBlock, version: FmiVersion) -> String {
    match version {
        FmiVersion::V2 => format!("{}.fmu", block.model_identifier),
        FmiVersion::V3 => format!("{}-fmi3.fmu", block.model_identifier),
    }
}

/// The platform folder of FMI 2.0 binaries on this machine.
pub fn platform_folder() -> Option<&'static str> {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") | ("linux", "aarch64") => Some("linux64"),
        ("linux", "x86") => Some("linux32"),
        ("macos", _) => Some("darwin64"),
        ("windows", "x86_64") => Some("win64"),
        _ => None,
    }
}

/// The platform tuple of FMI 3.0 binaries on this machine.
pub fn platform_tuple() -> Option<&'static str> {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => Some("x86_64-linux"),
        ("linux", "aarch64") => Some("aarch64-linux"),
        ("linux", "x86") => Some("x86-linux"),
        ("macos", "x86_64") => Some("x86_64-darwin"),
        ("macos", "aarch64") => Some("aarch64-darwin"),
        ("windows", "x86_64") => Some("x86_64-windows"),
        _ => None,
    }
}

/// Writes `<out_dir>/<file_name>`: modelDescription.xml and the shared
/// library `library` (the built `morc-fmu` cdylib) as
/// binaries/<platform>/<model_identifier>.so.
pub fn package(block: &ExportedBlock, version: FmiVersion, library: &Path, out_dir: &Path) -> Result<PathBuf, FmiError> {
    let (xml, _) = model_description(block, version)?;
    let binary = std::fs::read(library).map_err(|e| FmiError::Export(format!("cannot read the FMU library {}: {e}", library.display())))?;
    let platform = match version {
        FmiVersion::V2 => platform_folder(),
        FmiVersion::V3 => platform_tuple(),
    }
    .ok_or_else(|| FmiError::Export("FMU export: this platform has no FMI platform folder".into()))?;
    std::fs::create_dir_all(out_dir).map_err(|e| FmiError::Export(format!("cannot create {}: {e}", out_dir.display())))?;
    let path = out_dir.join(file_name(block, version));
    let write = || -> zip::result::ZipResult<()> {
        let file = std::fs::File::create(&path)?;
        let mut zip = zip::ZipWriter::new(file);
        let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        zip.start_file("modelDescription.xml", options)?;
        zip.write_all(xml.as_bytes())?;
        zip.start_file(format!("binaries/{platform}/{}{}", block.model_identifier, std::env::consts::DLL_SUFFIX), options)?;
        zip.write_all(&binary)?;
        zip.finish()?;
        Ok(())
    };
    write().map_err(|e| FmiError::Export(format!("cannot write {}: {e}", path.display())))?;
    Ok(path)
}

/// Where the built `morc-fmu` library is: beside `exe` (target/<profile>/)
/// or in its deps/ folder (where test builds leave it).
pub fn find_library(exe: &Path) -> Option<PathBuf> {
    let name = format!("{}morc_fmu{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX);
    let dir = exe.parent()?;
    [dir.join(&name), dir.join("deps").join(&name), dir.parent()?.join(&name)].into_iter().find(|p| p.is_file())
}
