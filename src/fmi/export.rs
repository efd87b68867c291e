//! morc's native blocks as FMI 2.0 co-simulation FMUs: the variable table
//! and modelDescription.xml generated from a block's ports and parameters,
//! and packaging into a `.fmu`. The C entry points live in the `morc-fmus`
//! crate (a cdylib): one shared library serves every exported model and
//! tells them apart by GUID, so the build produces it once and each `.fmu`
//! carries a copy named after its model.
//!
//! Mapping: inputs → causality "input", outputs → "output", parameters →
//! "parameter" (fixed, set before initialisation), plus the fixed parameter
//! `sample_period`: the block's own period h. `fmi2DoStep(t, m·h)` runs the
//! block's steps k = t/h … t/h + m − 1; the outputs after it are those of the
//! last step. Vector parameters and the width `n` are not exported (n = 1).

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::kernel::component::ComponentInfo;
use crate::kernel::value::{Value, ValueType};

/// A native block exported as an FMU.
#[derive(Debug)]
pub struct ExportedBlock {
    /// The FMU's modelIdentifier: the binary's file name and the model's name.
    pub model_identifier: &'static str,
    /// The native component kind it wraps (see [`crate::components::kinds`]).
    pub kind: &'static str,
    /// Default experiment: stop time in seconds.
    pub stop_time: f64,
}

/// Every block morc exports, by model identifier.
pub static EXPORTED: &[ExportedBlock] = &[
    ExportedBlock {
        model_identifier: "morc_bessel",
        kind: "bessel",
        stop_time: 1.0,
    },
    ExportedBlock {
        model_identifier: "morc_pid",
        kind: "pid",
        stop_time: 1.0,
    },
    ExportedBlock {
        model_identifier: "morc_ppi",
        kind: "ppi",
        stop_time: 1.0,
    },
    ExportedBlock {
        model_identifier: "morc_trajectory",
        kind: "trajectory",
        stop_time: 2.0,
    },
    ExportedBlock {
        model_identifier: "morc_arm",
        kind: "arm",
        stop_time: 2.0,
    },
];

/// The default sample period of an exported block (also its default experiment's step).
pub const DEFAULT_SAMPLE_PERIOD: f64 = 1e-3;

/// Name of the extra parameter that holds the block's sample period.
pub const SAMPLE_PERIOD: &str = "sample_period";

/// What an exported variable stands for in the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Input(usize),
    Output(usize),
    /// Index into [`ComponentInfo::params`].
    Parameter(usize),
    SamplePeriod,
}

/// One variable of an exported FMU. Value references are the variable's
/// index: unique across types, so one table serves every getter and setter.
#[derive(Clone, Debug)]
pub struct ExportVariable {
    pub name: String,
    pub value_reference: u32,
    pub ty: ValueType,
    pub role: Role,
    pub start: Option<Value>,
    pub unit: String,
    pub description: String,
}

/// The exported variables of a block with default parameters (inputs,
/// outputs, parameters, sample period, in that order).
pub fn variables(info: &ComponentInfo) -> Vec<ExportVariable> {
    let mut vars = Vec::new();
    let mut push = |name: &str, ty, role, start: Option<Value>, unit: &str, doc: &str| {
        vars.push(ExportVariable {
            name: name.into(),
            value_reference: vars.len() as u32,
            ty,
            role,
            start,
            unit: unit.into(),
            description: doc.into(),
        });
    };
    for (i, p) in info.inputs.iter().enumerate() {
        push(&p.name, p.ty, Role::Input(i), Some(Value::zero(p.ty)), &p.unit, &p.doc);
    }
    for (i, p) in info.outputs.iter().enumerate() {
        push(&p.name, p.ty, Role::Output(i), None, &p.unit, &p.doc);
    }
    for (i, p) in info.params.iter().enumerate() {
        // The width is structural (ports become vectors) and FMI 2 has no arrays.
        if p.name == "n" || matches!(p.value, Value::Vector(_)) {
            continue;
        }
        push(
            &p.name,
            p.value.ty(),
            Role::Parameter(i),
            Some(p.value.clone()),
            &p.unit,
            &p.doc,
        );
    }
    push(
        SAMPLE_PERIOD,
        ValueType::Real,
        Role::SamplePeriod,
        Some(Value::Real(DEFAULT_SAMPLE_PERIOD)),
        "s",
        "the block's sample period h; each doStep must span a whole number of periods",
    );
    vars
}

/// Looks an exported block up by model identifier.
pub fn find(model_identifier: &str) -> Option<&'static ExportedBlock> {
    EXPORTED.iter().find(|b| b.model_identifier == model_identifier)
}

/// The block's component with default parameters.
pub fn instantiate(block: &ExportedBlock) -> Result<Box<dyn crate::kernel::component::Component>, String> {
    crate::components::create(block.kind).ok_or_else(|| format!("morc has no component kind '{}'", block.kind))
}

/// modelDescription.xml and the GUID in it. The GUID is derived from the
/// description itself (SHA-256 of the text without it), so it changes
/// exactly when the interface does, and the binary can recompute it.
pub fn model_description(block: &ExportedBlock) -> Result<(String, String), String> {
    let component = instantiate(block)?;
    let without_guid = description_xml(block, component.info(), "");
    let digest = Sha256::digest(without_guid.as_bytes());
    let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    let guid = format!(
        "{{{}-{}-{}-{}-{}}}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    );
    Ok((description_xml(block, component.info(), &guid), guid))
}

/// Escapes text for an XML attribute.
pub fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// A real in XML Schema's xs:double lexical form, exact (shortest round trip).
pub fn xml_real(x: f64) -> String {
    if x == f64::INFINITY {
        "INF".into()
    } else if x == f64::NEG_INFINITY {
        "-INF".into()
    } else if x.is_nan() {
        "NaN".into()
    } else {
        format!("{x:?}")
    }
}

fn type_element(ty: ValueType) -> &'static str {
    match ty {
        ValueType::Real | ValueType::Vector(_) => "Real",
        ValueType::Integer => "Integer",
        ValueType::Boolean => "Boolean",
        ValueType::String => "String",
    }
}

fn start_text(v: &Value) -> String {
    match v {
        Value::Real(x) => xml_real(*x),
        Value::Integer(i) => i.to_string(),
        Value::Boolean(b) => b.to_string(),
        Value::String(s) => xml_escape(s),
        Value::Vector(v) => v.first().map_or("0".into(), |x| xml_real(*x)),
    }
}

fn description_xml(block: &ExportedBlock, info: &ComponentInfo, guid: &str) -> String {
    let vars = variables(info);
    let mut x = String::new();
    let _ = writeln!(x, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = writeln!(
        x,
        r#"<fmiModelDescription fmiVersion="2.0" modelName="{}" guid="{guid}" description="{}" generationTool="morc {}" variableNamingConvention="structured" numberOfEventIndicators="0">"#,
        block.model_identifier,
        xml_escape(&info.doc),
        env!("CARGO_PKG_VERSION"),
    );
    let _ = writeln!(
        x,
        r#"  <CoSimulation modelIdentifier="{}" canHandleVariableCommunicationStepSize="true" canBeInstantiatedOnlyOncePerProcess="false" canNotUseMemoryManagementFunctions="true" canGetAndSetFMUstate="false" canSerializeFMUstate="false"/>"#,
        block.model_identifier
    );
    let mut units: Vec<&str> = vars.iter().map(|v| v.unit.as_str()).filter(|u| !u.is_empty()).collect();
    units.sort_unstable();
    units.dedup();
    if !units.is_empty() {
        let _ = writeln!(x, "  <UnitDefinitions>");
        for u in units {
            let _ = writeln!(x, r#"    <Unit name="{}"/>"#, xml_escape(u));
        }
        let _ = writeln!(x, "  </UnitDefinitions>");
    }
    let _ = writeln!(
        x,
        r#"  <DefaultExperiment startTime="0" stopTime="{}" stepSize="{}"/>"#,
        xml_real(block.stop_time),
        xml_real(DEFAULT_SAMPLE_PERIOD)
    );
    let _ = writeln!(x, "  <ModelVariables>");
    for v in &vars {
        let (causality, variability, initial) = match v.role {
            Role::Input(_) => (
                "input",
                if v.ty == ValueType::Real {
                    "continuous"
                } else {
                    "discrete"
                },
                None,
            ),
            Role::Output(_) => (
                "output",
                if v.ty == ValueType::Real {
                    "continuous"
                } else {
                    "discrete"
                },
                Some("calculated"),
            ),
            Role::Parameter(_) | Role::SamplePeriod => ("parameter", "fixed", Some("exact")),
        };
        let _ = write!(
            x,
            r#"    <ScalarVariable name="{}" valueReference="{}" causality="{causality}" variability="{variability}""#,
            xml_escape(&v.name),
            v.value_reference
        );
        if let Some(initial) = initial {
            let _ = write!(x, r#" initial="{initial}""#);
        }
        if !v.description.is_empty() {
            let _ = write!(x, r#" description="{}""#, xml_escape(&v.description));
        }
        let _ = write!(x, ">\n      <{}", type_element(v.ty));
        if let Some(start) = &v.start {
            let _ = write!(x, r#" start="{}""#, start_text(start));
        }
        if !v.unit.is_empty() && v.ty == ValueType::Real {
            let _ = write!(x, r#" unit="{}""#, xml_escape(&v.unit));
        }
        let _ = writeln!(x, "/>\n    </ScalarVariable>");
    }
    let _ = writeln!(x, "  </ModelVariables>");
    let _ = writeln!(x, "  <ModelStructure>");
    let outputs: Vec<usize> = vars
        .iter()
        .enumerate()
        .filter(|(_, v)| matches!(v.role, Role::Output(_)))
        .map(|(i, _)| i + 1)
        .collect();
    if !outputs.is_empty() {
        let _ = writeln!(x, "    <Outputs>");
        for i in &outputs {
            let _ = writeln!(x, r#"      <Unknown index="{i}"/>"#);
        }
        let _ = writeln!(x, "    </Outputs>");
        let _ = writeln!(x, "    <InitialUnknowns>");
        for i in &outputs {
            let _ = writeln!(x, r#"      <Unknown index="{i}"/>"#);
        }
        let _ = writeln!(x, "    </InitialUnknowns>");
    }
    let _ = writeln!(x, "  </ModelStructure>");
    let _ = writeln!(x, "</fmiModelDescription>");
    x
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

/// Writes `<out_dir>/<model_identifier>.fmu`: modelDescription.xml and the
/// shared library `library` (the built `morc-fmus` cdylib) as
/// binaries/<platform>/<model_identifier>.so.
pub fn package(block: &ExportedBlock, library: &Path, out_dir: &Path) -> Result<PathBuf, String> {
    let (xml, _) = model_description(block)?;
    let binary =
        std::fs::read(library).map_err(|e| format!("cannot read the FMU library {}: {e}", library.display()))?;
    let platform = platform_folder().ok_or("FMU export: this platform has no FMI 2.0 platform folder")?;
    std::fs::create_dir_all(out_dir).map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
    let path = out_dir.join(format!("{}.fmu", block.model_identifier));
    let write = || -> zip::result::ZipResult<()> {
        let file = std::fs::File::create(&path)?;
        let mut zip = zip::ZipWriter::new(file);
        let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        zip.start_file("modelDescription.xml", options)?;
        zip.write_all(xml.as_bytes())?;
        zip.start_file(
            format!(
                "binaries/{platform}/{}{}",
                block.model_identifier,
                std::env::consts::DLL_SUFFIX
            ),
            options,
        )?;
        zip.write_all(&binary)?;
        zip.finish()?;
        Ok(())
    };
    write().map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// Where the built `morc-fmus` library is: beside `exe` (target/<profile>/)
/// or in its deps/ folder (where test builds leave it).
pub fn find_library(exe: &Path) -> Option<PathBuf> {
    let name = format!(
        "{}morc_fmus{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    let dir = exe.parent()?;
    [dir.join(&name), dir.join("deps").join(&name), dir.parent()?.join(&name)]
        .into_iter()
        .find(|p| p.is_file())
}
