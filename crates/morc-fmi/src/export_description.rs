//! modelDescription.xml of an exported morc block, FMI 2.0 or 3.0, with its
//! GUID / instantiation token derived from the description itself (SHA-256
//! of the text without it): it changes exactly when the interface does, and
//! the binary recomputes it to find the model it is asked to instantiate.

use std::fmt::Write as _;

use sha2::{Digest, Sha256};

use super::description::FmiVersion;
use super::export::{ExportVariable, ExportedBlock, Role, DEFAULT_SAMPLE_PERIOD};
use morc_kernel::ComponentInfo;
use morc_kernel::{Value, ValueType};

/// The description and its GUID (FMI 2) or instantiation token (FMI 3).
pub fn write(block: &ExportedBlock, info: &ComponentInfo, vars: &[ExportVariable], model_exchange: bool, version: FmiVersion) -> (String, String) {
    let without = xml(block, info, vars, model_exchange, version, "");
    let digest = Sha256::digest(without.as_bytes());
    let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    let token = format!("{{{}-{}-{}-{}-{}}}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32]);
    (xml(block, info, vars, model_exchange, version, &token), token)
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

fn type_element(ty: ValueType, version: FmiVersion) -> &'static str {
    match (ty, version) {
        (ValueType::Real | ValueType::Vector(_), FmiVersion::V2) => "Real",
        (ValueType::Real | ValueType::Vector(_), FmiVersion::V3) => "Float64",
        // morc integers are 64-bit: FMI 3 says so, FMI 2 has only 32-bit Integer.
        (ValueType::Integer, FmiVersion::V2) => "Integer",
        (ValueType::Integer, FmiVersion::V3) => "Int64",
        (ValueType::Boolean, _) => "Boolean",
        (ValueType::String, _) => "String",
        (ValueType::List | ValueType::Record, _) => unreachable!("no port is a list or record, and variables() leaves such parameters out"),
    }
}

fn start_text(v: &Value) -> String {
    match v {
        Value::Real(x) => xml_real(*x),
        Value::Integer(i) => i.to_string(),
        Value::Boolean(b) => b.to_string(),
        Value::String(s) => xml_escape(s),
        Value::Vector(v) => v.first().map_or("0".into(), |x| xml_real(*x)),
        Value::List(_) | Value::Record(_) => unreachable!("no port is a list or record, and variables() leaves such parameters out"),
    }
}

/// Causality, variability and initial of a variable.
fn attributes(v: &ExportVariable) -> (&'static str, &'static str, Option<&'static str>) {
    let variability = if v.ty == ValueType::Real { "continuous" } else { "discrete" };
    match v.role {
        Role::Input(_) => ("input", variability, None),
        Role::Output(_) => ("output", variability, Some("calculated")),
        Role::Parameter(_) | Role::SamplePeriod => ("parameter", "fixed", Some("exact")),
        Role::Derivative(_) => ("local", "continuous", Some("calculated")),
        Role::Time => ("independent", "continuous", None),
    }
}

fn xml(block: &ExportedBlock, info: &ComponentInfo, vars: &[ExportVariable], model_exchange: bool, version: FmiVersion, token: &str) -> String {
    let v3 = version == FmiVersion::V3;
    let id = block.model_identifier;
    let mut x = String::new();
    let _ = writeln!(x, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let (fmi_version, token_attribute, event_indicators) = if v3 { ("3.0", "instantiationToken", "") } else { ("2.0", "guid", r#" numberOfEventIndicators="0""#) };
    let _ = writeln!(
        x,
        r#"<fmiModelDescription fmiVersion="{fmi_version}" modelName="{id}" {token_attribute}="{token}" description="{}" generationTool="morc {}" variableNamingConvention="structured"{event_indicators}>"#,
        xml_escape(&info.doc),
        env!("CARGO_PKG_VERSION"),
    );
    let state = if v3 { r#"canGetAndSetFMUState="false" canSerializeFMUState="false""# } else { r#"canGetAndSetFMUstate="false" canSerializeFMUstate="false""# };
    let memory = if v3 { "" } else { r#" canNotUseMemoryManagementFunctions="true""# };
    if model_exchange {
        let _ = writeln!(x, r#"  <ModelExchange modelIdentifier="{id}" canBeInstantiatedOnlyOncePerProcess="false"{memory} {state}/>"#);
    }
    let _ = writeln!(x, r#"  <CoSimulation modelIdentifier="{id}" canHandleVariableCommunicationStepSize="true" canBeInstantiatedOnlyOncePerProcess="false"{memory} {state}/>"#);
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
    let _ = writeln!(x, r#"  <DefaultExperiment startTime="0" stopTime="{}" stepSize="{}"/>"#, xml_real(block.stop_time), xml_real(DEFAULT_SAMPLE_PERIOD));
    let _ = writeln!(x, "  <ModelVariables>");
    for v in vars {
        variable(&mut x, v, vars, version);
    }
    let _ = writeln!(x, "  </ModelVariables>");
    let outputs: Vec<&ExportVariable> = vars.iter().filter(|v| matches!(v.role, Role::Output(_))).collect();
    let derivatives: Vec<&ExportVariable> = vars.iter().filter(|v| matches!(v.role, Role::Derivative(_))).collect();
    let mut initial: Vec<&ExportVariable> = outputs.iter().chain(&derivatives).copied().collect();
    initial.sort_by_key(|v| v.value_reference);
    let _ = writeln!(x, "  <ModelStructure>");
    if v3 {
        for (element, list) in [("Output", &outputs), ("ContinuousStateDerivative", &derivatives), ("InitialUnknown", &initial)] {
            for v in list.iter() {
                let _ = writeln!(x, r#"    <{element} valueReference="{}"/>"#, v.value_reference);
            }
        }
    } else {
        // FMI 2 refers to variables by 1-based position, which is the value reference + 1 here.
        for (element, list) in [("Outputs", &outputs), ("Derivatives", &derivatives), ("InitialUnknowns", &initial)] {
            if list.is_empty() {
                continue;
            }
            let _ = writeln!(x, "    <{element}>");
            for v in list.iter() {
                let _ = writeln!(x, r#"      <Unknown index="{}"/>"#, v.value_reference + 1);
            }
            let _ = writeln!(x, "    </{element}>");
        }
    }
    let _ = writeln!(x, "  </ModelStructure>");
    let _ = writeln!(x, "</fmiModelDescription>");
    x
}

fn variable(x: &mut String, v: &ExportVariable, vars: &[ExportVariable], version: FmiVersion) {
    let (causality, variability, initial) = attributes(v);
    let ty = type_element(v.ty, version);
    let name = xml_escape(&v.name);
    let vr = v.value_reference;
    let mut common = format!(r#"name="{name}" valueReference="{vr}" causality="{causality}" variability="{variability}""#);
    if let Some(initial) = initial {
        let _ = write!(common, r#" initial="{initial}""#);
    }
    if !v.description.is_empty() {
        let _ = write!(common, r#" description="{}""#, xml_escape(&v.description));
    }
    let unit = if !v.unit.is_empty() && v.ty == ValueType::Real { format!(r#" unit="{}""#, xml_escape(&v.unit)) } else { String::new() };
    match version {
        FmiVersion::V2 => {
            let _ = write!(x, "    <ScalarVariable {common}>\n      <{ty}");
            if let Some(start) = &v.start {
                let _ = write!(x, r#" start="{}""#, start_text(start));
            }
            if let Some(state) = v.derivative_of {
                let index = vars.iter().position(|s| s.value_reference == state).map_or(0, |i| i + 1);
                let _ = write!(x, r#" derivative="{index}""#);
            }
            let _ = writeln!(x, "{unit}/>\n    </ScalarVariable>");
        }
        FmiVersion::V3 => {
            let _ = write!(x, "    <{ty} {common}{unit}");
            if let Some(state) = v.derivative_of {
                let _ = write!(x, r#" derivative="{state}""#);
            }
            match &v.start {
                // FMI 3 strings carry their start in a child element.
                Some(Value::String(s)) => {
                    let _ = writeln!(x, ">\n      <Start value=\"{}\"/>\n    </{ty}>", xml_escape(s));
                }
                Some(start) => {
                    let _ = writeln!(x, r#" start="{}"/>"#, start_text(start));
                }
                None => {
                    let _ = writeln!(x, "/>");
                }
            }
        }
    }
}
