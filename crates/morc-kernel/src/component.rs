//! The component seam: one lifecycle for every kind (FMI's), named typed
//! ports and parameters that Lua can introspect.
//!
//! Lifecycle: the factory instantiates with default parameters →
//! [`Component::set_parameter`] → [`Component::configure`] (ports take their
//! final sizes) → the assembly validates connections → [`Component::initialize`]
//! (enter/exit initialisation: state and initial outputs) → [`Component::step`]
//! once per sample period → [`Component::terminate`].

use super::data::AssemblyData;
use super::value::{Value, ValueType};

/// A named, typed port.
#[derive(Clone, Debug, PartialEq)]
pub struct PortInfo {
    /// Port name, unique among the component's inputs or outputs.
    pub name: String,
    /// Value type carried.
    pub ty: ValueType,
    /// Unit (SI: m, rad, s, N·m …); empty when unitless. A vector whose elements differ
    /// names each different unit once, in order ("N, N·m"); `element_units` has them all.
    pub unit: String,
    /// A vector's unit per element, when they differ (a wrench's N and N·m, a robot's
    /// prismatic joint in m among revolute ones in rad); empty: every element is in `unit`.
    pub element_units: Vec<String>,
    /// A vector's name per element ("x", "y", "z"; a robot's joint names) for legends and
    /// recordings; empty: numbered 1…n.
    pub element_names: Vec<String>,
    /// One-line description for help and metadata.
    pub doc: String,
    /// An input that must be connected before the assembly may run.
    pub required: bool,
    /// What an input holds while nothing is connected to it (an FMU input's declared start
    /// value, say); None: zero of its type.
    pub start: Option<Value>,
}

impl PortInfo {
    /// A port named `name` carrying `ty`, without unit or doc, optional.
    pub fn new(name: &str, ty: ValueType) -> Self {
        PortInfo {
            name: name.into(),
            ty,
            unit: String::new(),
            element_units: Vec::new(),
            element_names: Vec::new(),
            doc: String::new(),
            required: false,
            start: None,
        }
    }
    /// With unit `unit` for every element.
    pub fn unit(mut self, unit: &str) -> Self {
        self.unit = unit.into();
        self.element_units.clear();
        self
    }
    /// With one unit per element of a vector (`units[i]` for element i): `unit` becomes the
    /// one unit they share, or each different one once ("N, N·m").
    pub fn units<S: AsRef<str>>(mut self, units: &[S]) -> Self {
        let mut distinct: Vec<&str> = Vec::new();
        for u in units {
            if !distinct.contains(&u.as_ref()) {
                distinct.push(u.as_ref());
            }
        }
        self.unit = distinct.join(", ");
        self.element_units = if distinct.len() > 1 { units.iter().map(|u| u.as_ref().to_string()).collect() } else { Vec::new() };
        self
    }
    /// With a name per element of a vector (`names[i]` for element i).
    pub fn elements<S: AsRef<str>>(mut self, names: &[S]) -> Self {
        self.element_names = names.iter().map(|n| n.as_ref().to_string()).collect();
        self
    }
    /// A wrench port: a 6-vector Fx Fy Fz (N), Tx Ty Tz (N·m), its elements so named.
    pub fn wrench(name: &str) -> Self {
        PortInfo::new(name, ValueType::Vector(6)).units(&["N", "N", "N", "N·m", "N·m", "N·m"]).elements(&["Fx", "Fy", "Fz", "Tx", "Ty", "Tz"])
    }
    /// A pose port: a 6-vector x y z (m), roll pitch yaw (rad), its elements so named.
    pub fn pose(name: &str) -> Self {
        PortInfo::new(name, ValueType::Vector(6)).units(&["m", "m", "m", "rad", "rad", "rad"]).elements(&["x", "y", "z", "roll", "pitch", "yaw"])
    }
    /// A frame velocity port: a 6-vector vx vy vz (m/s), wx wy wz (rad/s), its elements so named.
    pub fn twist(name: &str) -> Self {
        PortInfo::new(name, ValueType::Vector(6)).units(&["m/s", "m/s", "m/s", "rad/s", "rad/s", "rad/s"]).elements(&["vx", "vy", "vz", "wx", "wy", "wz"])
    }
    /// A position port: a 3-vector x y z (m), its elements so named.
    pub fn position(name: &str) -> Self {
        PortInfo::new(name, ValueType::Vector(3)).unit("m").elements(&["x", "y", "z"])
    }
    /// The unit of element `i` (of a vector; 0 for a scalar).
    pub fn unit_of(&self, i: usize) -> &str {
        self.element_units.get(i).map_or(&self.unit, |u| u)
    }
    /// With description `doc`.
    pub fn doc(mut self, doc: &str) -> Self {
        self.doc = doc.into();
        self
    }
    /// Marks an input that must be connected.
    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }
    /// With `value` held while the input is not connected (of the port's type).
    pub fn start(mut self, value: Value) -> Self {
        self.start = Some(value);
        self
    }
    /// The value an unconnected input holds: its start, else zero.
    pub fn initial_value(&self) -> Value {
        self.start.clone().unwrap_or_else(|| Value::zero(self.ty))
    }
}

/// A named, typed parameter and its current value.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamInfo {
    /// Parameter name, unique in the component.
    pub name: String,
    /// Current value (the default until set).
    pub value: Value,
    /// Unit (SI: m, rad, s, Hz …); empty when unitless.
    pub unit: String,
    /// One-line description for help and metadata.
    pub doc: String,
}

impl ParamInfo {
    /// A parameter named `name` with default `value`, without unit or doc.
    pub fn new(name: &str, value: Value) -> Self {
        ParamInfo { name: name.into(), value, unit: String::new(), doc: String::new() }
    }
    /// With unit `unit`.
    pub fn unit(mut self, unit: &str) -> Self {
        self.unit = unit.into();
        self
    }
    /// With description `doc`.
    pub fn doc(mut self, doc: &str) -> Self {
        self.doc = doc.into();
        self
    }
}

/// What a component is: its kind, documentation, ports and parameters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ComponentInfo {
    /// Kind name ("pid", an FMU's model name, a Lua kind).
    pub kind: String,
    /// One-line description of the kind.
    pub doc: String,
    /// What this instance is beyond its kind — the robot a base simulates or drives
    /// ("KUKA KR 16-2 + 16 kg payload"); empty for most components.
    pub description: String,
    /// Input ports, in port-index order.
    pub inputs: Vec<PortInfo>,
    /// Output ports, in port-index order.
    pub outputs: Vec<PortInfo>,
    /// Parameters with their current values.
    pub params: Vec<ParamInfo>,
}

impl ComponentInfo {
    /// Info for kind `kind` described by `doc`, without ports or parameters.
    pub fn new(kind: &str, doc: &str) -> Self {
        ComponentInfo { kind: kind.into(), doc: doc.into(), ..Default::default() }
    }
    /// With input port `p` appended.
    pub fn input(mut self, p: PortInfo) -> Self {
        self.inputs.push(p);
        self
    }
    /// With output port `p` appended.
    pub fn output(mut self, p: PortInfo) -> Self {
        self.outputs.push(p);
        self
    }
    /// With parameter `p` appended.
    pub fn param(mut self, p: ParamInfo) -> Self {
        self.params.push(p);
        self
    }
    /// Index of the input port named `name`.
    pub fn input_index(&self, name: &str) -> Option<usize> {
        self.inputs.iter().position(|p| p.name == name)
    }
    /// Index of the output port named `name`.
    pub fn output_index(&self, name: &str) -> Option<usize> {
        self.outputs.iter().position(|p| p.name == name)
    }
    /// Checks that every port carries a port type ([`ValueType::is_port_type`]): lists and
    /// records are for parameters. `name` is the component's instance name, for the message.
    pub fn check_ports(&self, name: &str) -> Result<(), String> {
        match self.inputs.iter().chain(&self.outputs).find(|p| !p.ty.is_port_type()) {
            Some(p) => Err(format!("port '{}' of component '{name}': a port cannot carry a {}; only parameters can", p.name, p.ty)),
            None => Ok(()),
        }
    }
    /// Current value of the parameter named `name`.
    pub fn param_value(&self, name: &str) -> Option<&Value> {
        self.params.iter().find(|p| p.name == name).map(|p| &p.value)
    }
    /// A real parameter's value (NaN when absent or not numeric).
    pub fn real(&self, name: &str) -> f64 {
        self.param_value(name).map_or(f64::NAN, Value::real)
    }
    /// An integer parameter's value (0 when absent or not numeric).
    pub fn integer(&self, name: &str) -> i64 {
        self.param_value(name).map_or(0, Value::integer)
    }
    /// A boolean parameter's value (false when absent or not numeric).
    pub fn boolean(&self, name: &str) -> bool {
        self.param_value(name).is_some_and(Value::boolean)
    }
    /// A parameter as a vector of length `n`: a scalar is broadcast.
    pub fn vector(&self, name: &str, n: usize) -> Result<Vec<f64>, String> {
        let v = self.param_value(name).ok_or_else(|| format!("no parameter '{name}'"))?;
        match v.coerce(ValueType::Vector(n))? {
            Value::Vector(v) => Ok(v),
            _ => unreachable!("coerce to vector gives a vector"),
        }
    }
    /// Stores a parameter value after checking name and type.
    pub fn set_param(&mut self, name: &str, value: &Value) -> Result<(), String> {
        let kind = self.kind.clone();
        let Some(i) = self.params.iter().position(|p| p.name == name) else {
            let known: Vec<&str> = self.params.iter().map(|p| p.name.as_str()).collect();
            return Err(crate::names::unknown("parameter", name, &format!("of {kind}"), &known));
        };
        let p = &mut self.params[i];
        // Vector parameters take any length: the component checks sizes in configure().
        p.value = match (&p.value, value) {
            (Value::Vector(_), Value::Vector(v)) => Value::Vector(v.clone()),
            (Value::Vector(_), Value::Real(x)) => Value::Vector(vec![*x]),
            (Value::Vector(_), Value::Integer(i)) => Value::Vector(vec![*i as f64]),
            (Value::Real(_), Value::Vector(v)) if v.len() != 1 => Value::Vector(v.clone()),
            _ => value.coerce(p.value.ty()).map_err(|e| format!("parameter '{name}' of {kind}: {e}"))?,
        };
        Ok(())
    }
}

/// Context handed to [`Component::initialize`].
pub struct InitContext<'a> {
    /// The component's instance name in its assembly.
    pub name: &'a str,
    /// The component's own sample period h = k·T in seconds.
    pub period: f64,
    /// The engine's base period T in seconds.
    pub base_period: f64,
    /// Assembly Data as the program left it before the run.
    pub data: &'a AssemblyData,
    /// What the components stepped by the same thread share (see [`crate::StepThread`]).
    pub thread: &'a super::step_thread::StepThread,
    /// The base's measurement latency in base periods ([`crate::Base::latency`]; 0 outside
    /// an engine).
    pub base_latency: u32,
}

/// Context handed to [`Component::step`]. Time is derived from integer ticks
/// so it is bit-identical whatever the clock.
#[derive(Clone, Copy, Debug)]
pub struct StepContext {
    /// How many times this component has been stepped before (0 at the first step).
    pub step: u64,
    /// Assembly time in seconds at this step: `step · period`.
    pub time: f64,
    /// The component's sample period h in seconds.
    pub period: f64,
}

/// What a step asks of the assembly.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Keep going.
    Continue,
    /// The assembly should end after this tick, for this reason (a monitor's
    /// completion). Allocating the reason is fine: it happens once.
    Finish(String),
    /// Something went wrong: the assembly stops and the robot holds.
    Fault(String),
}

/// Implements [`Component::info`] and [`Component::info_mut`] for the usual
/// component, which keeps its [`ComponentInfo`] in a field: write it inside the
/// `impl Component` block with the field's name. A component that does more
/// than hand out a field writes the two methods itself.
///
/// ```
/// use morc_kernel::{Component, ComponentInfo, InitContext, StepContext, Step};
/// use morc_kernel::Value;
///
/// struct Hold {
///     info: ComponentInfo,
/// }
///
/// impl Component for Hold {
///     morc_kernel::component_info!(info);
///
///     fn initialize(&mut self, _: &InitContext, _: &mut [Value]) -> Result<(), String> {
///         Ok(())
///     }
///     fn step(&mut self, _: &StepContext, _: &[Value], _: &mut [Value]) -> Step {
///         Step::Continue
///     }
/// }
///
/// let hold = Hold { info: ComponentInfo::new("hold", "Holds nothing.") };
/// assert_eq!(hold.info().kind, "hold");
/// ```
#[macro_export]
macro_rules! component_info {
    ($field:ident) => {
        fn info(&self) -> &$crate::ComponentInfo {
            &self.$field
        }
        fn info_mut(&mut self) -> &mut $crate::ComponentInfo {
            &mut self.$field
        }
    };
}

/// Every component — native, FMU or Lua — implements this.
pub trait Component: Send {
    /// The component's kind, ports and parameters.
    fn info(&self) -> &ComponentInfo;
    /// Mutable access to the same, for setting parameters and sizing ports.
    fn info_mut(&mut self) -> &mut ComponentInfo;

    /// Sets a parameter before initialisation. The default checks the
    /// name and type against [`ComponentInfo::params`] and stores it there.
    fn set_parameter(&mut self, name: &str, value: &Value) -> Result<(), String> {
        self.info_mut().set_param(name, value)
    }

    /// Parameters are final: size the ports, check parameter consistency.
    fn configure(&mut self) -> Result<(), String> {
        Ok(())
    }

    /// Enter and exit initialisation: set up state and write initial outputs
    /// (seen by delayed and slower readers before the first step).
    fn initialize(&mut self, ctx: &InitContext, outputs: &mut [Value]) -> Result<(), String>;

    /// One sample period. Real-time path for native components: must not
    /// allocate, lock or make system calls in steady state.
    fn step(&mut self, ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step;

    /// End of life: write results into Assembly Data (as `name.key`) and
    /// release resources. Runs off the real-time path.
    fn terminate(&mut self, _results: &mut AssemblyResults) {}

    /// At a swap ([`crate::Engine::swap`]), after [`Component::initialize`] and before the first
    /// step: carry on from `old`, the component of the same name in the assembly being replaced,
    /// as its last step left it (its outputs are already copied). Called on the Coordinator
    /// between two ticks. By default nothing carries over: the component goes on from its
    /// initialisation (its time continues all the same). Lua components hand their state over.
    fn take_over(&mut self, _old: &mut dyn Component) -> Result<(), String> {
        Ok(())
    }

    /// The component as [`std::any::Any`], for [`Component::take_over`] to recognise an old
    /// instance of its own type (None: not offered).
    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        None
    }

    /// The block as an ODE, for blocks that are one (exported for FMI model exchange).
    fn ode(&mut self) -> Option<&mut dyn super::ode::Ode> {
        None
    }
}

/// Where a terminating component writes its results; keys are prefixed with
/// the component's instance name.
pub struct AssemblyResults<'a> {
    pub(crate) prefix: &'a str,
    pub(crate) data: &'a mut AssemblyData,
}

impl<'a> AssemblyResults<'a> {
    /// Results written under `prefix` (a component's name) into `data`.
    pub fn new(prefix: &'a str, data: &'a mut AssemblyData) -> Self {
        AssemblyResults { prefix, data }
    }

    /// Writes `value` under `key`, stored as "component.key".
    pub fn set(&mut self, key: &str, value: Value) {
        self.data.set(&format!("{}.{key}", self.prefix), value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_per_element_are_kept_only_when_they_differ() {
        let same = PortInfo::new("q", ValueType::Vector(3)).units(&["rad", "rad", "rad"]);
        assert_eq!((same.unit.as_str(), same.element_units.len()), ("rad", 0));
        let w = PortInfo::wrench("ft");
        assert_eq!(w.unit, "N, N·m");
        assert_eq!((w.unit_of(2), w.unit_of(3)), ("N", "N·m"));
        assert_eq!(w.element_names[5], "Tz");
        let pose = PortInfo::pose("x_ref");
        assert_eq!((pose.unit.as_str(), pose.unit_of(4), pose.element_names[0].as_str()), ("m, rad", "rad", "x"));
        assert_eq!(PortInfo::position("tcp").element_names, ["x", "y", "z"]);
        // A unit for all after a list replaces the list.
        assert!(w.unit("N").element_units.is_empty());
    }
}
