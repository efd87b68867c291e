//! An assembly as the program describes it, and its validation into an
//! execution plan: which component runs in which task, in which order, and
//! where every input reads from. Nothing here runs on the real-time path.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use super::component::{Component, ComponentInfo};
use super::data::AssemblyData;
use super::value::{Value, ValueType};

/// Where in a script something was declared: errors point there.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Origin {
    /// The script's path; empty for assemblies built in Rust.
    pub file: String,
    /// 1-based line in that script.
    pub line: u32,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.file.is_empty() {
            write!(f, "<rust>")
        } else {
            write!(f, "{}:{}", self.file, self.line)
        }
    }
}

/// Makes a fresh instance of a component (native, FMU, Lua) each time an
/// assembly is prepared.
pub type Factory = Arc<dyn Fn() -> Result<Box<dyn Component>, String> + Send + Sync>;

/// One component of an assembly.
#[derive(Clone)]
pub struct ComponentSpec {
    /// Instance name, unique in the assembly (ports are `name.port`).
    pub name: String,
    /// What the user called its kind (for messages and metadata).
    pub kind: String,
    /// Makes the instance each time the assembly is prepared.
    pub factory: Factory,
    /// Sample time as a multiple k of the base period…
    pub every: u32,
    /// …or in seconds (then it must be an integer multiple of the base period).
    pub period: Option<f64>,
    /// Parameter values set before configuration, overriding the kind's defaults.
    pub params: Vec<(String, Value)>,
    /// Inputs to interpolate linearly when fed by a slower component (see
    /// `interpolate.rs`); the others hold the producer's latest sample.
    pub interpolate: Vec<String>,
    /// Where the script declared it.
    pub origin: Origin,
}

/// One connection `from` (component.output) → `to` (component.input).
#[derive(Clone, Debug)]
pub struct ConnectionSpec {
    /// The producing output, "component.port".
    pub from: String,
    /// The consuming input, "component.port".
    pub to: String,
    /// Read the value of the reader's previous step (breaks same-tick loops).
    pub delay: bool,
    /// Where the script declared it.
    pub origin: Origin,
}

/// An output the assembly can read: a base measurement or a component output.
#[derive(Clone, Debug, PartialEq)]
pub struct SignalInfo {
    /// "component.port"
    pub name: String,
    /// Value type of the signal.
    pub ty: ValueType,
    /// Unit of the signal (SI: m, rad, s, N·m …); empty when unitless or unknown.
    pub unit: String,
    /// Unit per element when they differ ([`PortInfo::element_units`]).
    pub element_units: Vec<String>,
    /// Name per element ([`PortInfo::element_names`]).
    pub element_names: Vec<String>,
    /// One-line description from the port.
    pub doc: String,
}

/// A component of the assembly as an attachment sees it.
#[derive(Clone, Debug)]
pub struct ComponentView {
    /// Instance name.
    pub name: String,
    /// What the user called its kind.
    pub kind: String,
    /// Sample time in base periods.
    pub every: u32,
    /// Every parameter with its value (defaults included).
    pub params: Vec<(String, Value)>,
}

/// The assembly as planned so far, for attachments to look at.
pub struct AssemblyView<'a> {
    /// The assembly's name.
    pub name: &'a str,
    /// How the assembly refers to the base ("robot").
    pub base_name: &'a str,
    /// What the base is (the robot's name), or empty.
    pub base_description: &'a str,
    /// Base period T in seconds.
    pub base_period: f64,
    /// Every signal the assembly can read: base measurements, then component outputs.
    pub signals: Vec<SignalInfo>,
    /// The components declared so far, attachments excluded.
    pub components: Vec<ComponentView>,
}

/// A component made from the rest of the assembly (a recorder of `robot.q*`,
/// a monitor of every output…), with the connections into its inputs.
pub struct Attachment {
    /// The component to add.
    pub component: Box<dyn Component>,
    /// Its sample time in base periods.
    pub every: u32,
    /// (signal "component.port", input port of the attachment)
    pub inputs: Vec<(String, String)>,
}

/// Builds an [`Attachment`] from the planned assembly, or says why it cannot.
pub type Attach = Arc<dyn Fn(&AssemblyView) -> Result<Attachment, String> + Send + Sync>;

/// An attachment as the program declares it: built last by `attach`, from the other components.
#[derive(Clone)]
pub struct AttachmentSpec {
    /// Instance name of the attached component.
    pub name: String,
    /// What the user called its kind ("recorder").
    pub kind: String,
    /// Builds it from the assembly view.
    pub attach: Attach,
    /// Where the script declared it.
    pub origin: Origin,
}

/// What to do when a slower component is not done by its deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OverrunPolicy {
    /// Count it, report it, keep the previous outputs until it is done.
    #[default]
    Warn,
    /// End the assembly with a fault.
    Fault,
}

/// An assembly as described by a program: components, connections, how long.
#[derive(Clone, Default)]
pub struct AssemblySpec {
    /// The assembly's name (for messages and results).
    pub name: String,
    /// Where the script declared it.
    pub origin: Origin,
    /// Components in declaration order.
    pub components: Vec<ComponentSpec>,
    /// Connections between component ports and the base.
    pub connections: Vec<ConnectionSpec>,
    /// Components built last, from what the others are (recorders).
    pub attachments: Vec<AttachmentSpec>,
    /// Stop after this many seconds (rounded to whole base periods).
    pub duration: Option<f64>,
    /// What a component overrunning its deadline does.
    pub overrun: OverrunPolicy,
    /// The memory pool of each stepping thread, for components that allocate from one (Lua
    /// components' Lua state), in bytes; None: the components' default.
    pub memory: Option<usize>,
    /// Keep every slower task on its Updater thread, even one cheap enough to run inline on
    /// the Coordinator (which is the default): to measure the hand-off, or to isolate them.
    pub keep_updaters: bool,
    /// A run morc makes for itself (reading where the robot is before a motion): not the
    /// operator's "last run" on the operator page or the live view's `/morc/run`.
    pub internal: bool,
}

pub use super::error::AssemblyError;

pub(crate) fn err<T>(origin: &Origin, msg: impl fmt::Display) -> Result<T, AssemblyError> {
    Err(AssemblyError { message: format!("{origin}: {msg}"), component: None })
}

/// Where a component input reads from, in the plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanSource {
    /// An output of the base (robot, bus).
    Base {
        /// The base's output port index.
        port: usize,
    },
    /// An output of another assembly component.
    Component {
        /// The producer's index in [`Plan::components`].
        index: usize,
        /// The producer's output port index.
        port: usize,
    },
}

/// One resolved connection into component `to`'s input `port`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanInput {
    /// The reader's input port index.
    pub port: usize,
    /// What it reads.
    pub source: PlanSource,
    /// Read the producer's value of the previous tick (a delayed connection).
    pub delay: bool,
    /// Interpolate between the producer's samples when it is slower.
    pub interpolate: bool,
}

/// A validated assembly, its components instantiated, configured and ready
/// for initialisation.
pub struct Plan {
    /// The assembly's name.
    pub name: String,
    /// Components in declaration order, each with its resolved inputs.
    pub components: Vec<PlannedComponent>,
    /// Component indices in data-flow order (declaration order breaks ties).
    pub order: Vec<usize>,
    /// Base input port ← assembly component output.
    pub base_commands: Vec<(usize, usize, usize)>,
    /// How the assembly refers to the base ("robot"), for messages.
    pub base_name: String,
    /// Stop after this many base ticks; None runs until a component finishes or the run is cancelled.
    pub duration_ticks: Option<u64>,
    /// What a component overrunning its deadline does.
    pub overrun: OverrunPolicy,
    /// The memory pool of each stepping thread in bytes ([`AssemblySpec::memory`]).
    pub memory: Option<usize>,
    /// [`AssemblySpec::keep_updaters`].
    pub keep_updaters: bool,
    /// The base's [`crate::Base::latency`], told to the components at initialisation (set by
    /// the engine; 0 from [`plan`]).
    pub base_latency: u32,
}

/// A component of a [`Plan`]: instantiated, configured, its inputs resolved.
pub struct PlannedComponent {
    /// Instance name.
    pub name: String,
    /// What the user called its kind.
    pub kind: String,
    /// Sample time in base periods.
    pub every: u32,
    /// The configured instance.
    pub component: Box<dyn Component>,
    /// One entry per connected input port.
    pub inputs: Vec<PlanInput>,
    /// Where the script declared it.
    pub origin: Origin,
}

/// Every output an assembly component can read: the base's, then the components'.
fn signals_of(base_name: &str, base: &ComponentInfo, components: &[PlannedComponent]) -> Vec<SignalInfo> {
    let mut out = Vec::new();
    let mut add = |owner: &str, ports: &[super::component::PortInfo]| {
        for p in ports {
            out.push(SignalInfo {
                name: format!("{owner}.{}", p.name),
                ty: p.ty,
                unit: p.unit.clone(),
                element_units: p.element_units.clone(),
                element_names: p.element_names.clone(),
                doc: p.doc.clone(),
            });
        }
    };
    add(base_name, &base.outputs);
    for c in components {
        add(&c.name, &c.component.info().outputs);
    }
    out
}

/// The sample time of `c` as a whole multiple of the base period.
fn sample_multiple(c: &ComponentSpec, base_period: f64) -> Result<u32, AssemblyError> {
    let Some(period) = c.period else {
        if c.every == 0 {
            return err(&c.origin, format!("component '{}': 'every' must be a positive whole number of base periods", c.name));
        }
        return Ok(c.every);
    };
    let k = period / base_period;
    let rounded = k.round();
    if !period.is_finite() || rounded < 1.0 || (k - rounded).abs() > 1e-9 * k.max(1.0) || rounded > f64::from(u32::MAX) {
        return err(
            &c.origin,
            format!(
                "component '{}': sample time {period} s is not a whole multiple of the base period {base_period} s; use e.g. period = {} or every = {}",
                c.name,
                rounded.max(1.0) * base_period,
                rounded.max(1.0)
            ),
        );
    }
    Ok(rounded as u32)
}

fn split_port<'a>(path: &'a str, origin: &Origin) -> Result<(&'a str, &'a str), AssemblyError> {
    match path.rsplit_once('.') {
        Some((c, p)) if !c.is_empty() && !p.is_empty() => Ok((c, p)),
        _ => err(origin, format!("'{path}' is not a port: write \"component.port\"")),
    }
}

fn port_list(ports: &[super::component::PortInfo]) -> String {
    if ports.is_empty() {
        return "none".into();
    }
    ports.iter().map(|p| format!("{} ({})", p.name, p.ty)).collect::<Vec<_>>().join(", ")
}

/// Validates `spec` against the base's ports and instantiates its components.
/// `base_name` is how assemblies call the base ("robot").
pub fn plan(spec: &AssemblySpec, base_name: &str, base: &ComponentInfo, base_period: f64, data: &AssemblyData) -> Result<Plan, AssemblyError> {
    base.check_ports(base_name).or_else(|e| err(&spec.origin, e))?;
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut components = Vec::with_capacity(spec.components.len());
    for c in &spec.components {
        if c.name == base_name {
            return err(&c.origin, format!("'{}' is the name of the engine's base component; choose another name", c.name));
        }
        if c.name.is_empty() || c.name.contains('.') {
            return err(&c.origin, format!("component name '{}' must be non-empty and contain no '.'", c.name));
        }
        if index.insert(&c.name, components.len()).is_some() {
            return err(&c.origin, format!("a component named '{}' is already in assembly '{}'", c.name, spec.name));
        }
        let every = sample_multiple(c, base_period)?;
        let mut component = (c.factory)().or_else(|e| err(&c.origin, format!("component '{}' ({}): {e}", c.name, c.kind)))?;
        for (p, v) in &c.params {
            component.set_parameter(p, v).or_else(|e| err(&c.origin, format!("component '{}': {e}", c.name)))?;
        }
        // Assembly Data may override parameters as "component.parameter".
        let overrides: Vec<(String, Value)> = component.info().params.iter().filter_map(|p| data.get(&format!("{}.{}", c.name, p.name)).map(|v| (p.name.clone(), v.clone()))).collect();
        for (p, v) in overrides {
            component.set_parameter(&p, &v).or_else(|e| err(&c.origin, format!("component '{}', from Assembly Data: {e}", c.name)))?;
        }
        component.configure().or_else(|e| err(&c.origin, format!("component '{}' ({}): {e}", c.name, c.kind)).map_err(|e| e.in_component(&c.name, &c.kind)))?;
        // After configure, which gives the ports their final types.
        component.info().check_ports(&c.name).or_else(|e| err(&c.origin, e))?;
        components.push(PlannedComponent { name: c.name.clone(), kind: c.kind.clone(), every, component, inputs: Vec::new(), origin: c.origin.clone() });
    }

    let mut connections = spec.connections.clone();
    let mut names: Vec<String> = spec.components.iter().map(|c| c.name.clone()).collect();
    for a in &spec.attachments {
        if a.name == base_name || index.contains_key(a.name.as_str()) || names.contains(&a.name) {
            return err(&a.origin, format!("a component named '{}' is already in assembly '{}'", a.name, spec.name));
        }
        let view = AssemblyView {
            name: &spec.name,
            base_name,
            base_description: &base.description,
            base_period,
            signals: signals_of(base_name, base, &components),
            components: components
                .iter()
                .map(|c| ComponentView {
                    name: c.name.clone(),
                    kind: c.kind.clone(),
                    every: c.every,
                    params: c.component.info().params.iter().map(|p| (p.name.clone(), p.value.clone())).collect(),
                })
                .collect(),
        };
        let Attachment { mut component, every, inputs } = (a.attach)(&view).or_else(|e| err(&a.origin, format!("{} '{}': {e}", a.kind, a.name)).map_err(|e| e.in_component(&a.name, &a.kind)))?;
        component.configure().or_else(|e| err(&a.origin, format!("{} '{}': {e}", a.kind, a.name)).map_err(|e| e.in_component(&a.name, &a.kind)))?;
        component.info().check_ports(&a.name).or_else(|e| err(&a.origin, e))?;
        for (from, port) in inputs {
            connections.push(ConnectionSpec { from, to: format!("{}.{port}", a.name), delay: false, origin: a.origin.clone() });
        }
        names.push(a.name.clone());
        components.push(PlannedComponent { name: a.name.clone(), kind: a.kind.clone(), every, component, inputs: Vec::new(), origin: a.origin.clone() });
    }
    let index: HashMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (n.as_str(), i)).collect();
    let known = || {
        let mut names: Vec<&str> = names.iter().map(String::as_str).collect();
        names.push(base_name);
        names.join(", ")
    };
    let mut base_commands = Vec::new();
    for conn in &connections {
        let o = &conn.origin;
        let (fc, fp) = split_port(&conn.from, o)?;
        let (tc, tp) = split_port(&conn.to, o)?;
        let (source, from_ty) = if fc == base_name {
            let Some(p) = base.output_index(fp) else {
                return err(o, format!("{base_name} has no output '{fp}' (outputs: {})", port_list(&base.outputs)));
            };
            (PlanSource::Base { port: p }, base.outputs[p].ty)
        } else {
            let Some(&ci) = index.get(fc) else {
                return err(o, format!("no component '{fc}' in assembly '{}' (components: {})", spec.name, known()));
            };
            let info = components[ci].component.info();
            let Some(p) = info.output_index(fp) else {
                let hint = if info.input_index(fp).is_some() { " — it is an input; connect from an output" } else { "" };
                return err(o, format!("{fc} ({}) has no output '{fp}'{hint} (outputs: {})", info.kind, port_list(&info.outputs)));
            };
            (PlanSource::Component { index: ci, port: p }, info.outputs[p].ty)
        };
        if tc == base_name {
            let Some(p) = base.input_index(tp) else {
                return err(o, format!("{base_name} has no input '{tp}' (inputs: {})", port_list(&base.inputs)));
            };
            if base.inputs[p].ty != from_ty {
                return err(o, format!("type mismatch: {} is {from_ty} but {} is {}", conn.from, conn.to, base.inputs[p].ty));
            }
            let PlanSource::Component { index: ci, port } = source else {
                return err(o, format!("{} → {}: connect the base to itself inside the robot definition, not in an assembly", conn.from, conn.to));
            };
            if base_commands.iter().any(|&(bp, _, _)| bp == p) {
                return err(o, format!("{} is already connected; an input takes one source", conn.to));
            }
            base_commands.push((p, ci, port));
            continue;
        }
        let Some(&ti) = index.get(tc) else {
            return err(o, format!("no component '{tc}' in assembly '{}' (components: {})", spec.name, known()));
        };
        let info = components[ti].component.info();
        let Some(p) = info.input_index(tp) else {
            let hint = if info.output_index(tp).is_some() { " — it is an output; connect to an input" } else { "" };
            return err(o, format!("{tc} ({}) has no input '{tp}'{hint} (inputs: {})", info.kind, port_list(&info.inputs)));
        };
        let to_ty = info.inputs[p].ty;
        if to_ty != from_ty {
            return err(o, format!("type mismatch: {} is {from_ty} but {} is {to_ty}", conn.from, conn.to));
        }
        if components[ti].inputs.iter().any(|i| i.port == p) {
            return err(o, format!("{} is already connected; an input takes one source (use a sum block to combine)", conn.to));
        }
        components[ti].inputs.push(PlanInput { port: p, source, delay: conn.delay, interpolate: false });
    }

    for (c, planned) in spec.components.iter().zip(components.iter_mut()) {
        for name in &c.interpolate {
            let info = planned.component.info();
            let Some(p) = info.input_index(name) else {
                return err(&c.origin, format!("component '{}': interpolate names '{name}', which is no input (inputs: {})", c.name, port_list(&info.inputs)));
            };
            if !matches!(info.inputs[p].ty, ValueType::Real | ValueType::Vector(_)) {
                return err(&c.origin, format!("component '{}': input '{name}' is {}; only real inputs can be interpolated", c.name, info.inputs[p].ty));
            }
            let Some(input) = planned.inputs.iter_mut().find(|i| i.port == p) else {
                return err(&c.origin, format!("component '{}': input '{name}' is to be interpolated but is not connected", c.name));
            };
            input.interpolate = true;
        }
    }

    for c in &components {
        for (p, port) in c.component.info().inputs.iter().enumerate() {
            if port.required && !c.inputs.iter().any(|i| i.port == p) {
                return err(&c.origin, format!("input {}.{} ({}) is not connected; connect it, e.g. a:connect(\"source.port\", \"{}.{}\")", c.name, port.name, port.ty, c.name, port.name));
            }
        }
    }

    let order = data_flow_order(spec, &connections, &components)?;
    let duration_ticks = match spec.duration {
        None => None,
        Some(d) if d.is_finite() && d >= 0.0 => Some((d / base_period).round() as u64),
        Some(d) => return err(&spec.origin, format!("duration must be a non-negative number of seconds, got {d}")),
    };
    Ok(Plan {
        name: spec.name.clone(),
        components,
        order,
        base_commands,
        base_name: base_name.to_string(),
        duration_ticks,
        overrun: spec.overrun,
        memory: spec.memory,
        keep_updaters: spec.keep_updaters,
        base_latency: 0,
    })
}

/// Topological order of the same-tick graph (same rate, not delayed), with
/// declaration order breaking ties so that the order is deterministic.
fn data_flow_order(spec: &AssemblySpec, connections: &[ConnectionSpec], components: &[PlannedComponent]) -> Result<Vec<usize>, AssemblyError> {
    let n = components.len();
    let mut successors: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut indegree = vec![0usize; n];
    for (ti, c) in components.iter().enumerate() {
        for input in &c.inputs {
            if let PlanSource::Component { index: si, .. } = input.source {
                if !input.delay && components[si].every == c.every {
                    successors[si].push(ti);
                    indegree[ti] += 1;
                }
            }
        }
    }
    let mut order = Vec::with_capacity(n);
    let mut done = vec![false; n];
    while order.len() < n {
        // The first ready component in declaration order: O(n²), n is small.
        let Some(next) = (0..n).find(|&i| !done[i] && indegree[i] == 0) else {
            let cycle = find_cycle(&successors, &done);
            let names: Vec<&str> = cycle.iter().map(|&i| components[i].name.as_str()).collect();
            let first = cycle[0];
            let second = cycle[1 % cycle.len()];
            let origin = connections
                .iter()
                .find(|c| c.from.starts_with(&format!("{}.", components[first].name)) && c.to.starts_with(&format!("{}.", components[second].name)))
                .map(|c| c.origin.clone())
                .unwrap_or_else(|| spec.origin.clone());
            return err(&origin, format!("same-tick loop {} → {}: declare one of its connections as delayed, e.g. a:connect(\"from.y\", \"to.u\", {{ delay = true }})", names.join(" → "), names[0]));
        };
        done[next] = true;
        order.push(next);
        for &s in &successors[next] {
            indegree[s] -= 1;
        }
    }
    Ok(order)
}

/// A cycle among the not-yet-ordered nodes. Each of them still has an
/// unordered predecessor, so walking predecessors must come back on itself.
fn find_cycle(successors: &[Vec<usize>], done: &[bool]) -> Vec<usize> {
    let n = done.len();
    let mut predecessor = vec![usize::MAX; n];
    for (from, succ) in successors.iter().enumerate() {
        for &to in succ {
            if !done[from] && !done[to] && predecessor[to] == usize::MAX {
                predecessor[to] = from;
            }
        }
    }
    let mut node = (0..n).find(|&i| !done[i]).unwrap_or(0);
    let mut seen = vec![false; n];
    while !seen[node] && predecessor[node] != usize::MAX {
        seen[node] = true;
        node = predecessor[node];
    }
    // `node` is on the cycle: collect it backwards, then turn it forwards.
    let mut cycle = vec![node];
    let mut at = predecessor[node];
    while at != node && at != usize::MAX && cycle.len() <= n {
        cycle.push(at);
        at = predecessor[at];
    }
    cycle.reverse();
    // Start at the component declared first, so the message reads naturally.
    let first = (0..cycle.len()).min_by_key(|&i| cycle[i]).unwrap_or(0);
    cycle.rotate_left(first);
    cycle
}

/// Building an assembly from Rust (tests, benchmarks, built-in assemblies).
impl AssemblySpec {
    /// An empty assembly named `name`: no components, no duration, overruns warn.
    pub fn new(name: &str) -> Self {
        AssemblySpec { name: name.into(), ..Default::default() }
    }

    /// Adds a component made by `factory`, stepped every `every` base periods.
    pub fn add(&mut self, name: &str, kind: &str, every: u32, factory: Factory) -> &mut Self {
        self.components
            .push(ComponentSpec { name: name.into(), kind: kind.into(), factory, every, period: None, params: Vec::new(), interpolate: Vec::new(), origin: Origin::default() });
        self
    }

    /// Adds a native kind (see [`crate::registry::natives`]) with parameters; an unknown kind
    /// fails when the assembly is built, with the message listing the kinds there are.
    pub fn add_native(&mut self, name: &str, kind: &str, every: u32, params: &[(&str, Value)]) -> &mut Self {
        let factory = crate::registry::natives().factory(kind).unwrap_or_else(|e| Arc::new(move || Err(e.clone())));
        self.add(name, kind, every, factory);
        let c = self.components.last_mut().expect("just added");
        c.params = params.iter().map(|(p, v)| (p.to_string(), v.clone())).collect();
        self
    }

    /// Connects output `from` ("component.port") to input `to` within the same tick.
    pub fn connect(&mut self, from: &str, to: &str) -> &mut Self {
        self.connections.push(ConnectionSpec { from: from.into(), to: to.into(), delay: false, origin: Origin::default() });
        self
    }

    /// Connects `from` to `to` through a one-tick delay (the reader sees the previous tick's value).
    pub fn connect_delayed(&mut self, from: &str, to: &str) -> &mut Self {
        self.connections.push(ConnectionSpec { from: from.into(), to: to.into(), delay: true, origin: Origin::default() });
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::component::{InitContext, PortInfo, Step, StepContext};

    /// A component with one input of type `ty`.
    struct Takes {
        info: ComponentInfo,
    }

    impl Component for Takes {
        crate::component_info!(info);
        fn initialize(&mut self, _: &InitContext, _: &mut [Value]) -> Result<(), String> {
            Ok(())
        }
        fn step(&mut self, _: &StepContext, _: &[Value], _: &mut [Value]) -> Step {
            Step::Continue
        }
    }

    fn planned(ty: ValueType) -> Result<Plan, AssemblyError> {
        let mut spec = AssemblySpec::new("a");
        let factory: Factory = Arc::new(move || Ok(Box::new(Takes { info: ComponentInfo::new("takes", "").input(PortInfo::new("moves", ty)) }) as Box<dyn Component>));
        spec.add("c", "takes", 1, factory);
        plan(&spec, "robot", &ComponentInfo::new("base", ""), 0.001, &AssemblyData::new())
    }

    #[test]
    fn a_port_cannot_carry_a_list_or_record() {
        assert!(planned(ValueType::Vector(3)).is_ok());
        for (ty, name) in [(ValueType::List, "list"), (ValueType::Record, "record")] {
            let Err(e) = planned(ty) else { panic!("a {name} port was accepted") };
            assert_eq!(e.message, format!("<rust>: port 'moves' of component 'c': a port cannot carry a {name}; only parameters can"));
        }
        // Nor the base's.
        let base = ComponentInfo::new("base", "").output(PortInfo::new("moves", ValueType::Record));
        let e = plan(&AssemblySpec::new("a"), "robot", &base, 0.001, &AssemblyData::new()).err().expect("refused");
        assert!(e.message.ends_with("port 'moves' of component 'robot': a port cannot carry a record; only parameters can"), "{}", e.message);
    }
}
