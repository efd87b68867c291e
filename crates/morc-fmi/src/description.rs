//! modelDescription.xml of FMI 2.0 and 3.0, read with roxmltree into one
//! version-neutral shape: what morc needs to run, introspect and check an FMU.

use roxmltree::{Document, Node};

use super::FmiError;

/// The FMI version of a model description (its fmiVersion attribute).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FmiVersion {
    /// FMI 2.0.
    V2,
    /// FMI 3.0.
    V3,
}

/// A variable's type. FMI 2's Real, Integer and Enumeration are Float64, Int32, Int32;
/// FMI 3's Enumeration is Int64.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarType {
    /// 64-bit float (FMI 2 Real).
    Float64,
    /// 32-bit float (FMI 3).
    Float32,
    /// 8-bit signed integer (FMI 3).
    Int8,
    /// 8-bit unsigned integer (FMI 3).
    UInt8,
    /// 16-bit signed integer (FMI 3).
    Int16,
    /// 16-bit unsigned integer (FMI 3).
    UInt16,
    /// 32-bit signed integer (FMI 2 Integer and Enumeration).
    Int32,
    /// 32-bit unsigned integer (FMI 3).
    UInt32,
    /// 64-bit signed integer (FMI 3, and FMI 3 Enumeration).
    Int64,
    /// 64-bit unsigned integer (FMI 3).
    UInt64,
    /// Boolean (fmi2Boolean is a C int, fmi3Boolean a C bool).
    Boolean,
    /// String.
    String,
    /// FMI 3 Binary (bytes): not offered as ports or parameters.
    Binary,
    /// FMI 3 Clock: not offered as ports or parameters (morc does not run scheduled execution).
    Clock,
    /// A type element morc does not know.
    Other,
}

impl VarType {
    /// Float64 or Float32.
    pub fn is_float(self) -> bool {
        matches!(self, VarType::Float64 | VarType::Float32)
    }
    /// One of the eight integer types.
    pub fn is_integer(self) -> bool {
        matches!(self, VarType::Int8 | VarType::UInt8 | VarType::Int16 | VarType::UInt16 | VarType::Int32 | VarType::UInt32 | VarType::Int64 | VarType::UInt64)
    }
}

/// A variable's causality (FMI 2.0 §2.2.7, FMI 3.0 §2.4.7.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Causality {
    /// Set by the importer before initialisation.
    Parameter,
    /// Computed by the FMU from parameters during initialisation.
    CalculatedParameter,
    /// Set by the importer at each communication point.
    Input,
    /// Computed by the FMU, for the importer to read.
    Output,
    /// Internal to the FMU, readable for inspection (also the default, and any causality not listed here).
    Local,
    /// The independent variable, usually time.
    Independent,
    /// FMI 3: a parameter that changes the FMU's structure (array sizes).
    StructuralParameter,
}

/// One model variable: FMI 2 ScalarVariable, FMI 3 Float64 etc. (possibly an array).
#[derive(Clone, Debug)]
pub struct Variable {
    /// Variable name, unique in the FMU.
    pub name: String,
    /// valueReference: the handle the FMU's getters and setters take.
    pub value_reference: u32,
    /// Its type.
    pub ty: VarType,
    /// Its causality.
    pub causality: Causality,
    /// The variability attribute as written ("continuous" when absent).
    pub variability: String,
    /// The initial attribute as written ("exact", "approx", "calculated"), if any.
    pub initial: Option<String>,
    /// The start attribute as written (space-separated for FMI 3 arrays).
    pub start: Option<String>,
    /// Unit name (the variable's, else its declared type's); empty when none.
    pub unit: String,
    /// The element that declared it as written ("Real", "Enumeration", "Float64", "Binary" …).
    pub type_name: String,
    /// Its declaredType (a type definition's name); empty when none.
    pub declared_type: String,
    /// The description attribute; empty when none.
    pub description: String,
    /// FMI 3 array dimensions (empty: scalar).
    pub dimensions: Vec<usize>,
    /// For a state derivative: the value reference of its state.
    pub derivative_of: Option<u32>,
}

impl Variable {
    /// Number of scalar elements.
    pub fn len(&self) -> usize {
        self.dimensions.iter().product::<usize>().max(1)
    }
    /// Never: a variable has at least one element.
    pub fn is_empty(&self) -> bool {
        false
    }
}

/// The DefaultExperiment element: the exporter's suggested run (times in s).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DefaultExperiment {
    /// startTime (s).
    pub start_time: Option<f64>,
    /// stopTime (s).
    pub stop_time: Option<f64>,
    /// Relative tolerance for the solver.
    pub tolerance: Option<f64>,
    /// Communication step size (s).
    pub step_size: Option<f64>,
}

/// The parts of modelDescription.xml that morc uses.
#[derive(Clone, Debug)]
pub struct ModelDescription {
    /// FMI 2.0 or 3.0, from fmiVersion.
    pub version: FmiVersion,
    /// The fmiVersion attribute as written.
    pub fmi_version: String,
    /// modelName.
    pub model_name: String,
    /// The model's description attribute; empty when none.
    pub description: String,
    /// FMI 2 guid or FMI 3 instantiationToken.
    pub token: String,
    /// generationTool; empty when none.
    pub generation_tool: String,
    /// modelIdentifier for co-simulation, when supported.
    pub co_simulation: Option<String>,
    /// modelIdentifier for model exchange, when supported.
    pub model_exchange: Option<String>,
    /// FMI 3 scheduled execution's modelIdentifier, when offered (morc does not run it).
    pub scheduled_execution: Option<String>,
    /// Co-simulation: canHandleVariableCommunicationStepSize.
    pub can_handle_variable_step: bool,
    /// Model exchange: the number of event indicators (FMI 2: the numberOfEventIndicators
    /// attribute, 0 when absent; FMI 3: the elements of the ModelStructure's EventIndicators).
    pub number_of_event_indicators: usize,
    /// The suggested run.
    pub default_experiment: DefaultExperiment,
    /// Every model variable, in document order.
    pub variables: Vec<Variable>,
    /// Model exchange: (state, derivative) value references, in the FMU's state order.
    pub states: Vec<(u32, u32)>,
}

impl ModelDescription {
    /// The variable named `name`.
    pub fn variable(&self, name: &str) -> Option<&Variable> {
        self.variables.iter().find(|v| v.name == name)
    }
    /// The interfaces it offers, as people name them: "co-simulation, model exchange".
    pub fn interfaces(&self) -> String {
        let named = [("co-simulation", &self.co_simulation), ("model exchange", &self.model_exchange), ("scheduled execution", &self.scheduled_execution)];
        let offered: Vec<&str> = named.iter().filter(|(_, id)| id.is_some()).map(|(what, _)| *what).collect();
        if offered.is_empty() {
            "none".into()
        } else {
            offered.join(", ")
        }
    }
    /// Model exchange: the number of continuous state elements (an FMI 3 state array of
    /// three elements counts three), the length of the FMU's state vector.
    pub fn continuous_state_count(&self) -> usize {
        self.states.iter().map(|&(vr, _)| self.variables.iter().find(|v| v.value_reference == vr && v.ty.is_float()).map_or(1, Variable::len)).sum()
    }
    /// The variable of type `ty` with value reference `vr`.
    pub fn by_reference(&self, vr: u32, ty: VarType) -> Option<&Variable> {
        self.variables.iter().find(|v| v.value_reference == vr && v.ty == ty)
    }
}

/// The most elements an FMI 3 array variable may have (8 MiB of Float64).
pub const MAX_ARRAY_ELEMENTS: usize = 1 << 20;

fn attr(node: Node, name: &str) -> String {
    node.attribute(name).unwrap_or_default().to_string()
}

/// An xs:double, including INF, -INF and NaN.
pub fn parse_real(text: &str) -> Option<f64> {
    match text.trim() {
        "INF" => Some(f64::INFINITY),
        "-INF" => Some(f64::NEG_INFINITY),
        t => t.parse().ok(),
    }
}

fn child<'a, 'i>(node: Node<'a, 'i>, name: &str) -> Option<Node<'a, 'i>> {
    node.children().find(|c| c.has_tag_name(name))
}

/// Parses modelDescription.xml text; errors say what is wrong where.
pub fn parse(xml: &str) -> Result<ModelDescription, FmiError> {
    parse_description(xml).map_err(FmiError::Description)
}

fn parse_description(xml: &str) -> Result<ModelDescription, String> {
    let doc = Document::parse(xml).map_err(|e| format!("modelDescription.xml is not well-formed XML: {e}"))?;
    let root = doc.root_element();
    if !root.has_tag_name("fmiModelDescription") {
        return Err(format!("modelDescription.xml: root element is <{}>, not <fmiModelDescription>", root.tag_name().name()));
    }
    let fmi_version = attr(root, "fmiVersion");
    let version = if fmi_version.starts_with("2.") {
        FmiVersion::V2
    } else if fmi_version.starts_with("3.") {
        FmiVersion::V3
    } else {
        return Err(format!("FMI version \"{fmi_version}\" is not supported (morc runs FMI 2.0 and 3.0)"));
    };
    let token = attr(root, if version == FmiVersion::V2 { "guid" } else { "instantiationToken" });
    let cs = child(root, "CoSimulation");
    let me = child(root, "ModelExchange");
    let mut md = ModelDescription {
        version,
        fmi_version: fmi_version.clone(),
        model_name: attr(root, "modelName"),
        description: attr(root, "description"),
        token,
        generation_tool: attr(root, "generationTool"),
        co_simulation: cs.map(|n| attr(n, "modelIdentifier")),
        model_exchange: me.map(|n| attr(n, "modelIdentifier")),
        scheduled_execution: child(root, "ScheduledExecution").map(|n| attr(n, "modelIdentifier")),
        can_handle_variable_step: cs.is_some_and(|n| n.attribute("canHandleVariableCommunicationStepSize") == Some("true")),
        number_of_event_indicators: match attr(root, "numberOfEventIndicators").parse::<usize>() {
            Ok(n) if n > MAX_ARRAY_ELEMENTS => return Err(format!("numberOfEventIndicators = {n}: more than the {MAX_ARRAY_ELEMENTS} morc takes")),
            n => n.unwrap_or(0),
        },
        default_experiment: DefaultExperiment::default(),
        variables: Vec::new(),
        states: Vec::new(),
    };
    if let Some(de) = child(root, "DefaultExperiment") {
        let get = |n: &str| de.attribute(n).and_then(parse_real);
        md.default_experiment = DefaultExperiment { start_time: get("startTime"), stop_time: get("stopTime"), tolerance: get("tolerance"), step_size: get("stepSize") };
    }
    let vars = child(root, "ModelVariables").ok_or("modelDescription.xml has no <ModelVariables>")?;
    match version {
        FmiVersion::V2 => parse_v2_variables(&mut md, vars)?,
        FmiVersion::V3 => parse_v3_variables(&mut md, vars)?,
    }
    Ok(md)
}

fn causality(text: &str) -> Causality {
    match text {
        "parameter" => Causality::Parameter,
        "calculatedParameter" => Causality::CalculatedParameter,
        "input" => Causality::Input,
        "output" => Causality::Output,
        "independent" => Causality::Independent,
        "structuralParameter" => Causality::StructuralParameter,
        _ => Causality::Local,
    }
}

/// The units of the type definitions, by type name: FMI 2 `<SimpleType name><Real unit/>`, FMI 3
/// `<Float64Type name unit/>`.
fn type_units(vars: Node) -> Vec<(String, String)> {
    let Some(types) = vars.parent().and_then(|r| child(r, "TypeDefinitions")) else { return Vec::new() };
    let mut units = Vec::new();
    for t in types.children().filter(|c| c.is_element()) {
        // FMI 2 puts the attributes on the SimpleType's one child, FMI 3 on the type itself.
        let unit = t.attribute("unit").or_else(|| t.children().find(|c| c.is_element()).and_then(|c| c.attribute("unit")));
        if let (Some(name), Some(unit)) = (t.attribute("name"), unit) {
            units.push((name.to_string(), unit.to_string()));
        }
    }
    units
}

/// The unit a variable inherits from its declared type ("" when none).
fn declared_unit(units: &[(String, String)], declared_type: &str) -> String {
    units.iter().find(|(name, _)| name == declared_type).map(|(_, unit)| unit.clone()).unwrap_or_default()
}

fn parse_v2_variables(md: &mut ModelDescription, vars: Node) -> Result<(), String> {
    let units = type_units(vars);
    // FMI 2 derivatives name their state by 1-based index into ModelVariables.
    let mut derivative_index: Vec<Option<usize>> = Vec::new();
    for sv in vars.children().filter(|c| c.has_tag_name("ScalarVariable")) {
        let name = attr(sv, "name");
        let vr: u32 = attr(sv, "valueReference").parse().map_err(|_| format!("variable '{name}': valueReference is not a whole number"))?;
        let Some(type_node) = sv.children().find(|c| c.is_element()) else {
            return Err(format!("variable '{name}' has no type element"));
        };
        let type_name = type_node.tag_name().name().to_string();
        let declared_type = attr(type_node, "declaredType");
        let ty = match type_name.as_str() {
            "Real" => VarType::Float64,
            "Integer" | "Enumeration" => VarType::Int32,
            "Boolean" => VarType::Boolean,
            "String" => VarType::String,
            _ => VarType::Other,
        };
        derivative_index.push(type_node.attribute("derivative").and_then(|d| d.parse().ok()));
        let variability = sv.attribute("variability").unwrap_or("continuous").to_string();
        md.variables.push(Variable {
            name,
            value_reference: vr,
            ty,
            causality: causality(sv.attribute("causality").unwrap_or("local")),
            variability,
            initial: sv.attribute("initial").map(str::to_string),
            start: type_node.attribute("start").map(str::to_string),
            unit: type_node.attribute("unit").map_or_else(|| declared_unit(&units, &declared_type), str::to_string),
            type_name,
            declared_type,
            description: attr(sv, "description"),
            dimensions: Vec::new(),
            derivative_of: None,
        });
    }
    for (i, d) in derivative_index.iter().enumerate() {
        if let Some(state) = d {
            let state_vr = md
                .variables
                .get(state.wrapping_sub(1))
                .ok_or_else(|| format!("variable '{}': derivative=\"{state}\" is no variable index", md.variables[i].name))?
                .value_reference;
            md.variables[i].derivative_of = Some(state_vr);
        }
    }
    // States in the order of ModelStructure/Derivatives (the FMU's state vector order).
    let structure = vars.parent().and_then(|r| child(r, "ModelStructure"));
    if let Some(derivatives) = structure.and_then(|s| child(s, "Derivatives")) {
        for u in derivatives.children().filter(|c| c.has_tag_name("Unknown")) {
            let index: usize = attr(u, "index").parse().map_err(|_| "ModelStructure/Derivatives: bad index".to_string())?;
            let v = md.variables.get(index.wrapping_sub(1)).ok_or("ModelStructure/Derivatives: index out of range")?;
            let state = v.derivative_of.ok_or_else(|| format!("derivative '{}' names no state", v.name))?;
            md.states.push((state, v.value_reference));
        }
    }
    Ok(())
}

fn parse_v3_variables(md: &mut ModelDescription, vars: Node) -> Result<(), String> {
    let units = type_units(vars);
    // Which variable (index) each model variable element became, for the dimension pass.
    let mut element_of = Vec::new();
    let mut aliases = Vec::new();
    for node in vars.children().filter(|c| c.is_element()) {
        let name = attr(node, "name");
        let vr: u32 = attr(node, "valueReference").parse().map_err(|_| format!("variable '{name}': valueReference is not a whole number"))?;
        let type_name = node.tag_name().name().to_string();
        let declared_type = attr(node, "declaredType");
        let ty = match type_name.as_str() {
            "Float64" => VarType::Float64,
            "Float32" => VarType::Float32,
            "Int8" => VarType::Int8,
            "UInt8" => VarType::UInt8,
            "Int16" => VarType::Int16,
            "UInt16" => VarType::UInt16,
            "Int32" => VarType::Int32,
            "UInt32" => VarType::UInt32,
            // FMI 3.0 reads and writes Enumeration variables with fmi3GetInt64/fmi3SetInt64.
            "Int64" | "Enumeration" => VarType::Int64,
            "UInt64" => VarType::UInt64,
            "Boolean" => VarType::Boolean,
            "String" => VarType::String,
            "Binary" => VarType::Binary,
            "Clock" => VarType::Clock,
            _ => VarType::Other,
        };
        let mut dimensions = Vec::new();
        for d in node.children().filter(|c| c.has_tag_name("Dimension")) {
            dimensions.push(d.attribute("start").and_then(|s| s.parse().ok()).unwrap_or(usize::MAX));
        }
        // String starts are child elements in FMI 3.
        let start = node.attribute("start").map(str::to_string).or_else(|| child(node, "Start").and_then(|s| s.attribute("value")).map(str::to_string));
        let default_variability = if ty.is_float() { "continuous" } else { "discrete" };
        md.variables.push(Variable {
            name,
            value_reference: vr,
            ty,
            causality: causality(node.attribute("causality").unwrap_or("local")),
            variability: node.attribute("variability").unwrap_or(default_variability).to_string(),
            initial: node.attribute("initial").map(str::to_string),
            start,
            unit: node.attribute("unit").map_or_else(|| declared_unit(&units, &declared_type), str::to_string),
            type_name,
            declared_type,
            description: attr(node, "description"),
            dimensions,
            derivative_of: node.attribute("derivative").and_then(|d| d.parse().ok()),
        });
        element_of.push(md.variables.len() - 1);
        for alias in node.children().filter(|c| c.has_tag_name("Alias")) {
            aliases.push((md.variables.len() - 1, attr(alias, "name"), attr(alias, "description")));
        }
    }
    // Dimensions given by a structural parameter: that parameter's start value.
    let sizes: Vec<(u32, usize)> = md
        .variables
        .iter()
        .filter(|v| v.causality == Causality::StructuralParameter)
        .filter_map(|v| Some((v.value_reference, v.start.as_deref()?.trim().parse().ok()?)))
        .collect();
    // Variables were pushed one per element, in order: pair them by position (names may repeat).
    for (node, &i) in vars.children().filter(|c| c.is_element()).zip(&element_of) {
        let v = &mut md.variables[i];
        for (k, d) in node.children().filter(|c| c.has_tag_name("Dimension")).enumerate() {
            if let Some(vr) = d.attribute("valueReference").and_then(|s| s.parse::<u32>().ok()) {
                let size = sizes
                    .iter()
                    .find(|(r, _)| *r == vr)
                    .map(|(_, s)| *s)
                    .ok_or_else(|| format!("variable '{}': dimension refers to value reference {vr}, which is no structural parameter with a start", v.name))?;
                v.dimensions[k] = size;
            }
        }
    }
    // FMI 3 aliases: other names (and descriptions) for a variable's value reference, after
    // the model's own variables (FMPy lists them there too).
    for (of, name, description) in aliases {
        let v = Variable { name, description, ..md.variables[of].clone() };
        md.variables.push(v);
    }
    if let Some(v) = md.variables.iter().find(|v| v.dimensions.contains(&usize::MAX)) {
        return Err(format!("variable '{}': a dimension has neither start nor valueReference", v.name));
    }
    // Sizes come from the file: an array is allocated with them, so they are capped here.
    for v in &md.variables {
        let elements = v.dimensions.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
        if elements.is_none_or(|n| n > MAX_ARRAY_ELEMENTS) {
            return Err(format!("variable '{}': dimensions {:?} make more than {MAX_ARRAY_ELEMENTS} elements, more than morc takes in one variable", v.name, v.dimensions));
        }
    }
    let structure = vars.parent().and_then(|r| child(r, "ModelStructure"));
    if let Some(structure) = structure {
        for u in structure.children().filter(|c| c.has_tag_name("ContinuousStateDerivative")) {
            let vr: u32 = attr(u, "valueReference").parse().map_err(|_| "ContinuousStateDerivative: bad valueReference")?;
            let v = md.variables.iter().find(|v| v.value_reference == vr).ok_or("ContinuousStateDerivative: unknown variable")?;
            let state = v.derivative_of.ok_or_else(|| format!("derivative '{}' names no state", v.name))?;
            md.states.push((state, vr));
        }
        // FMI 3 has no numberOfEventIndicators: one per element of each listed variable.
        for u in structure.children().filter(|c| c.has_tag_name("EventIndicator")) {
            let vr: u32 = attr(u, "valueReference").parse().map_err(|_| "EventIndicator: bad valueReference")?;
            let v = md.variables.iter().find(|v| v.value_reference == vr).ok_or_else(|| format!("EventIndicator: no variable has value reference {vr}"))?;
            md.number_of_event_indicators += v.len();
        }
        if md.number_of_event_indicators > MAX_ARRAY_ELEMENTS {
            return Err(format!("ModelStructure lists {} event indicators: more than the {MAX_ARRAY_ELEMENTS} morc takes", md.number_of_event_indicators));
        }
    }
    Ok(())
}
