//! `morc ros fmu MODEL.fmu`: an FMU as a ROS 2 node, as Bosch's fmi_adapter makes one, on
//! morc's FMI import: FMI 2 and 3, co-simulation and model exchange (morc's solver), Real,
//! Integer and Boolean variables.
//!
//! ```text
//! input  u (Real)       ← /u  std_msgs/msg/Float64   interpolated between its samples
//! input  n (Integer)    ← /n  std_msgs/msg/Int32     (Int64 for FMI 3's 64-bit, UInt32 and Enumeration types)
//! input  b (Boolean)    ← /b  std_msgs/msg/Bool
//! output y              → /y  the same types, published every update_period
//! parameter k           ↔ ROS 2 parameter k          tunable: set while running; fixed: at start only
//! ```
//!
//! Names: a variable's topic and parameter are its name with every character outside
//! `[A-Za-z0-9_]` made `_` (fmi_adapter's rule), runs of `_` made one and a leading `_` dropped
//! (ROS 2 refuses both), `_` before a leading digit: `der(x)` → `der_x_`, `arm.q[1]` → `arm_q_1_`.
//! Topics are relative to the node's namespace.
//!
//! Time: the node's time 0 is when it starts stepping; the FMU's time is its start time (the
//! default experiment's) plus the node's time. Every `update_period` the node steps the FMU by
//! `step_size` up to the node's time and publishes every output. On the wall clock the node's
//! time is the wall time since the start; on the virtual clock it advances by `update_period`
//! per update as fast as the FMU steps and the outputs go out.
//!
//! Inputs: a sample is stamped with the node's time when it arrives (std_msgs carry no stamp;
//! fmi_adapter does the same). A step at time t sees each continuous Real input interpolated
//! linearly between the samples before and after t, the last one held after it; discrete
//! inputs, Integers and Booleans hold the last sample at or before t. Before an input's first
//! sample its start value holds. A sample can only be used by steps not taken yet: on the wall
//! clock the steps of one update see the samples that came during it, so the interpolation
//! smooths between updates; with a long update period it covers whole ramps.
//!
//! On the virtual clock the outputs are published every `update_period` of wall time (and at the
//! end), not every update: a node stepping as fast as it can would otherwise flood its peers.
//!
//! The node runs on the calling thread; the bridge's thread owns the DDS entities and hands
//! samples and output rows over channels, so DDS never waits on the FMU nor the FMU on DDS (a
//! full channel drops the row or the sample and counts it).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, Receiver, Sender};
use morc_fmi::description::{Causality, VarType, Variable};
use morc_fmi::FmuComponent;
use morc_kernel::{AssemblyData, AssemblyResults, ClockKind, Component, InitContext, Step, StepContext, Value, ValueType};
use morc_ros_msgs::std_msgs::{Bool, Float64, Int32, Int64};
use ros2_client::{Node, ParameterValue, Publisher, Subscription};

use crate::bridge::{Bridge, BridgeOptions, Endpoint, Inlet, NodeParameters, Outlet};
use crate::{publisher, qos, subscription};

/// fmi_adapter's default update period (s).
pub const DEFAULT_UPDATE_PERIOD: f64 = 0.01;

/// The step when neither the command nor the FMU's default experiment gives one (s).
pub const DEFAULT_STEP_SIZE: f64 = 0.001;

/// The ROS 2 parameter holding the FMU's communication step (s); fixed once running.
pub const STEP_SIZE: &str = "step_size";

/// The ROS 2 parameter holding how often outputs are published (s); may change while running.
pub const UPDATE_PERIOD: &str = "update_period";

/// Samples waiting between the bridge and the stepping (beyond: dropped and counted).
const SAMPLE_QUEUE: usize = 65_536;

/// Output rows waiting for the bridge.
const ROW_QUEUE: usize = 1024;

/// The longest the node sleeps before looking at a signal or a parameter change.
const NAP: Duration = Duration::from_millis(20);

/// How long a parameter change waits for the stepping loop to apply it.
const APPLY_TIMEOUT: Duration = Duration::from_secs(5);

/// What `morc ros fmu` was asked.
#[derive(Clone, Debug)]
pub struct FmuNodeOptions {
    /// The FMU file.
    pub path: PathBuf,
    /// The communication step (s); default: the default experiment's, else [`DEFAULT_STEP_SIZE`].
    pub step_size: Option<f64>,
    /// How often the outputs are published (s).
    pub update_period: f64,
    /// `NAME=VALUE` texts: FMU parameters and start values (by FMU or ROS name), and morc's own
    /// FMU options (`interface=me`, `me_solver=euler` …).
    pub params: Vec<String>,
    /// The node's name (default: the model's name, made a ROS 2 name).
    pub name: Option<String>,
    /// The node's namespace ("/" for none).
    pub namespace: String,
    /// The ROS 2 domain.
    pub domain_id: u16,
    /// Wall (the FMU keeps pace with the wall time) or virtual (as fast as possible).
    pub clock: ClockKind,
    /// Ends the node when the FMU's run time reaches this (s); none: runs until stopped.
    pub duration: Option<f64>,
}

/// Why the node did not run to its end: the arguments (exit 2), or the FMU or ROS 2 (exit 3).
#[derive(Debug)]
pub enum FmuNodeError {
    /// What to change in the command.
    Usage(String),
    /// What failed.
    Fault(String),
}

impl std::fmt::Display for FmuNodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FmuNodeError::Usage(e) | FmuNodeError::Fault(e) => f.write_str(e),
        }
    }
}

/// What a node did, over its life.
#[derive(Clone, Debug, Default)]
pub struct FmuNodeSummary {
    /// The node's fully qualified name.
    pub node: String,
    /// FMU steps taken.
    pub steps: u64,
    /// The run time reached (s): steps × step_size, or where the FMU ended.
    pub time: f64,
    /// Messages published, samples received, messages and samples dropped.
    pub published: u64,
    /// Samples received.
    pub received: u64,
    /// Rows or samples dropped (full queues, a peer's full window).
    pub dropped: u64,
    /// Parameter changes applied while running.
    pub parameters_set: u64,
    /// The largest lag of the FMU's time behind the wall clock after an update (s; wall clock).
    pub max_lag: f64,
    /// The signal that stopped the node, if one did.
    pub stopped_by: Option<i32>,
    /// The FMU ended the simulation itself: what it said.
    pub ended: Option<String>,
}

/// A variable's ROS 2 message type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageKind {
    /// `std_msgs/msg/Float64`: Float64 and Float32 (Real).
    Float64,
    /// `std_msgs/msg/Int32`: Int8, UInt8, Int16, UInt16, Int32 (FMI 2 Integer and Enumeration).
    Int32,
    /// `std_msgs/msg/Int64`: Int64, UInt32, UInt64 and FMI 3 Enumeration.
    Int64,
    /// `std_msgs/msg/Bool`.
    Bool,
}

impl MessageKind {
    /// The message type of a scalar variable of type `ty`; none for strings, binaries, clocks.
    pub fn of(ty: VarType) -> Option<MessageKind> {
        Some(match ty {
            VarType::Float64 | VarType::Float32 => MessageKind::Float64,
            VarType::Int8 | VarType::UInt8 | VarType::Int16 | VarType::UInt16 | VarType::Int32 => MessageKind::Int32,
            VarType::Int64 | VarType::UInt32 | VarType::UInt64 => MessageKind::Int64,
            VarType::Boolean => MessageKind::Bool,
            VarType::String | VarType::Binary | VarType::Clock | VarType::Other => return None,
        })
    }

    /// The ROS 2 type name.
    pub fn type_name(self) -> &'static str {
        match self {
            MessageKind::Float64 => "std_msgs/msg/Float64",
            MessageKind::Int32 => "std_msgs/msg/Int32",
            MessageKind::Int64 => "std_msgs/msg/Int64",
            MessageKind::Bool => "std_msgs/msg/Bool",
        }
    }
}

/// A variable's name as a ROS 2 topic or parameter name: every character outside
/// `[A-Za-z0-9_]` made `_` (fmi_adapter's `rosifyName`), runs of `_` made one and leading ones
/// dropped (ROS 2 refuses both), `_` before a leading digit (ROS 2 refuses one there too).
pub fn ros_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 1);
    for c in name.chars() {
        let c = if c.is_ascii_alphanumeric() { c } else { '_' };
        if c == '_' && (out.is_empty() || out.ends_with('_')) {
            continue;
        }
        out.push(c);
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

/// One input or output on ROS 2.
#[derive(Clone, Debug)]
struct Port {
    /// The FMU variable's name.
    name: String,
    /// The topic, relative to the node's namespace.
    topic: String,
    kind: MessageKind,
    /// The component's port index.
    port: usize,
    /// Interpolated between samples (a continuous Real input).
    interpolate: bool,
}

/// One FMU parameter as a ROS 2 parameter.
#[derive(Clone, Debug)]
struct Param {
    /// The FMU variable's name.
    name: String,
    /// The ROS 2 parameter's name.
    ros: String,
    tunable: bool,
    ty: ValueType,
}

/// The samples of one input, stamped with the node's time when they came, oldest first. Only
/// the last sample at or before the time asked for and those after it are kept.
#[derive(Clone, Debug)]
pub struct InputHistory {
    samples: VecDeque<(f64, Value)>,
    start: Value,
    interpolate: bool,
}

impl InputHistory {
    /// An input whose start value is `start`; `interpolate`: linear between samples (else held).
    pub fn new(start: Value, interpolate: bool) -> InputHistory {
        InputHistory { samples: VecDeque::new(), start, interpolate }
    }

    /// A sample that came at `t` (a sample stamped before the last one is taken as at its time).
    pub fn push(&mut self, t: f64, value: Value) {
        let t = self.samples.back().map_or(t, |(last, _)| t.max(*last));
        self.samples.push_back((t, value));
    }

    /// Samples kept.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Whether no sample is kept.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// The input's value at `t` into `out`; times asked for never go back.
    pub fn value_at(&mut self, t: f64, out: &mut Value) {
        while self.samples.len() >= 2 && self.samples[1].0 <= t {
            self.samples.pop_front();
        }
        match (self.samples.front(), self.samples.get(1)) {
            // Before the first sample: the start value holds.
            (Some((t0, _)), _) if *t0 > t => out.copy_from(&self.start),
            (Some((t0, Value::Real(x0))), Some((t1, Value::Real(x1)))) if self.interpolate && t1 > t0 => {
                *out = Value::Real(x0 + (t - t0) / (t1 - t0) * (x1 - x0));
            }
            (Some((_, v0)), _) => out.copy_from(v0),
            (None, _) => out.copy_from(&self.start),
        }
    }
}

/// A change asked through ROS 2, carried out by the stepping loop between two steps.
enum Change {
    /// A tunable FMU parameter.
    Fmu(String, Value),
    /// update_period (s).
    UpdatePeriod(f64),
}

type Reply = Sender<Result<(), String>>;

/// The FMU loaded and set up, its variables mapped to topics and parameters, not yet on ROS 2.
pub struct FmuNode {
    component: FmuComponent,
    label: String,
    node_name: String,
    step_size: f64,
    update_period: f64,
    inputs: Vec<Port>,
    outputs: Vec<Port>,
    params: Vec<Param>,
    /// Variables not on ROS 2 (strings, arrays, binaries): name and why.
    left_out: Vec<(String, &'static str)>,
    options: FmuNodeOptions,
}

impl FmuNode {
    /// Opens the FMU, applies `--param`s, maps its variables. Errors name the file and what is
    /// wrong with it, or the argument to change.
    pub fn open(options: &FmuNodeOptions) -> Result<FmuNode, FmuNodeError> {
        let usage = FmuNodeError::Usage;
        let path = &options.path;
        if !path.exists() {
            return Err(usage(format!("{}: no such file", path.display())));
        }
        let fmu = morc_fmi::Fmu::open(path).map_err(|e| FmuNodeError::Fault(e.to_string()))?;
        let label = fmu.label.clone();
        let md = fmu.description.clone();
        let mut component = FmuComponent::new(fmu);

        // Every ROS 2 name must be one and unique.
        let mut taken: Vec<(String, String)> = Vec::new();
        let mut claim = |ros: &str, name: &str| -> Result<(), FmuNodeError> {
            if let Some((_, other)) = taken.iter().find(|(r, _)| r == ros) {
                return Err(FmuNodeError::Fault(format!("{label}: variables '{other}' and '{name}' both become '{ros}' on ROS 2 (characters outside [A-Za-z0-9_] become '_')")));
            }
            crate::topic_name(ros).map_err(|e| FmuNodeError::Fault(format!("{label}: variable '{name}': {e}")))?;
            taken.push((ros.to_string(), name.to_string()));
            Ok(())
        };
        let info = component.info().clone();
        let mut left_out = Vec::new();
        let mut port = |ports: &[morc_kernel::PortInfo], v: &Variable| -> Result<Option<Port>, FmuNodeError> {
            let Some(index) = ports.iter().position(|p| p.name == v.name) else {
                left_out.push((v.name.clone(), "a type morc does not import"));
                return Ok(None);
            };
            let kind = match MessageKind::of(v.ty) {
                Some(k) if v.dimensions.is_empty() => k,
                Some(_) => {
                    left_out.push((v.name.clone(), "an array"));
                    return Ok(None);
                }
                None => {
                    left_out.push((v.name.clone(), "a string or binary"));
                    return Ok(None);
                }
            };
            let topic = ros_name(&v.name);
            claim(&topic, &v.name)?;
            Ok(Some(Port { name: v.name.clone(), topic, kind, port: index, interpolate: v.ty.is_float() && v.variability == "continuous" }))
        };
        let (mut inputs, mut outputs) = (Vec::new(), Vec::new());
        for v in &md.variables {
            match v.causality {
                Causality::Input => inputs.extend(port(&info.inputs, v)?),
                Causality::Output => outputs.extend(port(&info.outputs, v)?),
                _ => {}
            }
        }
        let mut params = Vec::new();
        for v in md.variables.iter().filter(|v| v.causality == Causality::Parameter && v.variability != "constant") {
            let Some(p) = info.params.iter().find(|p| p.name == v.name) else { continue };
            let ros = ros_name(&v.name);
            if [STEP_SIZE, UPDATE_PERIOD, "use_sim_time"].contains(&ros.as_str()) {
                left_out.push((v.name.clone(), "a name the node's own parameters use"));
                continue;
            }
            claim(&ros, &v.name)?;
            params.push(Param { name: v.name.clone(), ros, tunable: v.variability == "tunable", ty: p.value.ty() });
        }

        for text in &options.params {
            let (name, value) = text.split_once('=').ok_or_else(|| usage(format!("--param {text:?}: write NAME=VALUE")))?;
            let name = params.iter().find(|p| p.ros == name).map_or(name, |p| p.name.as_str());
            let current = component.info().param_value(name).ok_or_else(|| {
                let known: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
                usage(morc_kernel::names::unknown("parameter", name, &format!("of {label}"), &known))
            })?;
            let value = morc_fmi::value_from_text(current.ty(), value).ok_or_else(|| usage(format!("--param {name}={value}: expected {}", current.ty())))?;
            component.set_parameter(name, &value).map_err(usage)?;
        }
        let de = &md.default_experiment;
        component.set_parameter(morc_fmi::START_TIME, &Value::Real(de.start_time.unwrap_or(0.0))).map_err(usage)?;
        component.configure().map_err(usage)?;

        let step_size = options.step_size.or(de.step_size.filter(|h| *h > 0.0)).unwrap_or(DEFAULT_STEP_SIZE);
        if !(step_size.is_finite() && step_size > 0.0) {
            return Err(usage(format!("--step-size {step_size}: give a positive time in s")));
        }
        check_update_period(options.update_period).map_err(|e| usage(format!("--update-period {}: {e}", options.update_period)))?;
        if let Some(d) = options.duration {
            if !(d.is_finite() && d > 0.0) {
                return Err(usage(format!("--duration {d}: give a positive time in s")));
            }
        }
        let node_name = match &options.name {
            Some(n) => n.clone(),
            None => {
                let n = ros_name(&md.model_name);
                if n.is_empty() {
                    "fmu".to_string()
                } else {
                    n
                }
            }
        };
        Ok(FmuNode { component, label, node_name, step_size, update_period: options.update_period, inputs, outputs, params, left_out, options: options.clone() })
    }

    /// The node's name (without namespace).
    pub fn node_name(&self) -> &str {
        &self.node_name
    }

    /// The communication step (s).
    pub fn step_size(&self) -> f64 {
        self.step_size
    }

    /// What is on ROS 2, one line each: inputs, outputs, parameters, and what is not.
    pub fn describe(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for (what, ports) in [("input ", &self.inputs), ("output", &self.outputs)] {
            for p in ports.iter() {
                lines.push(format!("{what} {:<24} {} {}", p.name, p.topic, p.kind.type_name()));
            }
        }
        for p in &self.params {
            lines.push(format!("param  {:<24} {} ({})", p.name, p.ros, if p.tunable { "tunable" } else { "fixed: at start only" }));
        }
        for (name, why) in &self.left_out {
            lines.push(format!("not on ROS 2: {name} ({why})"));
        }
        lines
    }

    /// Joins ROS 2 and runs until the duration, the FMU's end, or `stop` returns a signal;
    /// `say` gets a line when the node is up. The FMU is freed and the node leaves the graph
    /// before it returns.
    pub fn run(mut self, stop: &dyn Fn() -> Option<i32>, say: &mut dyn FnMut(&str)) -> Result<FmuNodeSummary, FmuNodeError> {
        let fault = FmuNodeError::Fault;
        let started = Arc::new(AtomicBool::new(false));
        let (changes_tx, changes_rx) = bounded::<(Change, Reply)>(16);
        let parameters = self.ros_parameters(started.clone(), changes_tx);
        let options = BridgeOptions { domain_id: self.options.domain_id, namespace: self.options.namespace.clone(), name: self.node_name.clone(), parameters: Some(parameters) };
        let bridge = Bridge::start(&options).map_err(fault)?;

        // The FMU first: a model that cannot start never shows up on ROS 2 with topics.
        let h = self.step_size;
        let data = AssemblyData::new();
        let info = self.component.info().clone();
        let mut values: Vec<Value> = info.inputs.iter().map(morc_kernel::PortInfo::initial_value).collect();
        let mut outputs: Vec<Value> = info.outputs.iter().map(|p| Value::zero(p.ty)).collect();
        self.component
            .initialize(&InitContext { name: &self.node_name, period: h, base_period: h, data: &data, thread: &Default::default(), base_latency: 0 }, &mut outputs)
            .map_err(|e| fault(format!("{}: {e}", self.label)))?;

        let epoch = Instant::now();
        let virtual_clock = self.options.clock == ClockKind::Virtual;
        let fmu_time = Arc::new(AtomicU64::new(0f64.to_bits()));
        let (samples_tx, samples_rx) = bounded::<(usize, f64, Value)>(SAMPLE_QUEUE);
        let (rows_tx, rows_rx) = bounded::<Vec<Value>>(ROW_QUEUE);
        let counts = Arc::new(NodeCounts::default());
        let stamp = if virtual_clock { Stamp::Virtual(fmu_time.clone()) } else { Stamp::Wall(epoch) };
        let (inputs, outputs_ports) = (self.inputs.clone(), self.outputs.clone());
        let job_counts = counts.clone();
        let endpoint = bridge
            .add(Box::new(move |node: &mut Node| {
                let inlet = FmuInlet::new(node, &inputs, stamp, samples_tx, job_counts.clone())?;
                let outlet = FmuOutlet::new(node, &outputs_ports, rows_rx, job_counts)?;
                Ok(Endpoint::Both(Box::new(outlet), Box::new(inlet)))
            }))
            .map_err(fault);
        let endpoint = match endpoint {
            Ok(id) => id,
            Err(e) => {
                self.terminate();
                return Err(e);
            }
        };
        started.store(true, Ordering::SeqCst);
        say(&format!("on ROS 2 as node {} in domain {} ({} clock, step {} s, update every {} s)", bridge.node_name, bridge.domain_id, self.options.clock, h, self.update_period));

        let mut histories: Vec<InputHistory> = info.inputs.iter().map(|p| InputHistory::new(p.initial_value(), false)).collect();
        for p in &self.inputs {
            histories[p.port].interpolate = p.interpolate;
        }
        let mut summary = FmuNodeSummary { node: bridge.node_name.clone(), ..Default::default() };
        let mut k: u64 = 0;
        let mut last_update = 0.0;
        let mut next_update = self.update_period;
        let mut last_published = None;
        let duration = self.options.duration;
        let now = || epoch.elapsed().as_secs_f64();
        let result = 'run: loop {
            // Wait for the update (wall clock), carrying out parameter changes meanwhile.
            loop {
                if let Some(signal) = stop() {
                    summary.stopped_by = Some(signal);
                    break 'run Ok(());
                }
                let wait = if virtual_clock { 0.0 } else { next_update - now() };
                let change = if wait <= 0.0 { changes_rx.try_recv().ok() } else { changes_rx.recv_timeout(Duration::from_secs_f64(wait).min(NAP)).ok() };
                match change {
                    Some((change, reply)) => {
                        let done = self.change(change, k as f64 * h, &mut next_update, last_update);
                        summary.parameters_set += u64::from(done.is_ok());
                        let _ = reply.send(done);
                    }
                    None if wait <= 0.0 => break,
                    None => {}
                }
            }
            let mut target = if virtual_clock { next_update } else { now() };
            if let Some(d) = duration {
                target = target.min(d);
            }
            for (port, t, value) in samples_rx.try_iter() {
                histories[port].push(t, value);
            }
            while (k as f64 + 0.5) * h < target {
                if let Some(signal) = stop() {
                    summary.stopped_by = Some(signal);
                    break 'run Ok(());
                }
                let t = k as f64 * h;
                for (history, value) in histories.iter_mut().zip(values.iter_mut()) {
                    history.value_at(t, value);
                }
                match self.component.step(&StepContext { step: k, time: t, period: h }, &values, &mut outputs) {
                    Step::Continue => k += 1,
                    Step::Finish(said) => {
                        k += 1;
                        summary.ended = Some(said);
                        break;
                    }
                    Step::Fault(e) => break 'run Err(fault(e)),
                }
            }
            fmu_time.store((k as f64 * h).to_bits(), Ordering::Relaxed);
            if !virtual_clock {
                summary.max_lag = summary.max_lag.max(now() - k as f64 * h);
            }
            let finishing = summary.ended.is_some() || duration.is_some_and(|d| (k as f64 + 0.5) * h >= d);
            // The outputs go out every update; on the virtual clock, whose updates come as fast
            // as the FMU steps, every update_period of wall time (and at the end).
            if !virtual_clock || finishing || last_published.is_none_or(|at: Instant| at.elapsed().as_secs_f64() >= self.update_period) {
                last_published = Some(Instant::now());
                if rows_tx.try_send(outputs.clone()).is_err() {
                    counts.dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
            if finishing {
                break Ok(());
            }
            last_update = next_update;
            next_update += self.update_period;
            if !virtual_clock {
                // Updates missed (an FMU slower than the wall clock) are not made up.
                let now = now();
                while next_update <= now {
                    next_update += self.update_period;
                }
            }
        };
        summary.steps = k;
        summary.time = self.component.ended_at().map_or(k as f64 * h, |t| t - self.start_time());
        // What was computed goes out before the node leaves.
        bridge.remove(endpoint);
        drop(bridge);
        self.terminate();
        summary.published = counts.published.load(Ordering::Relaxed);
        summary.received = counts.received.load(Ordering::Relaxed);
        summary.dropped = counts.dropped.load(Ordering::Relaxed);
        result.map(|()| summary)
    }

    /// The FMU's time at the node's time 0 (s).
    fn start_time(&self) -> f64 {
        self.component.info().param_value(morc_fmi::START_TIME).map_or(0.0, Value::real)
    }

    /// Ends the FMU's simulation and frees its instance.
    fn terminate(&mut self) {
        let mut data = AssemblyData::new();
        let mut results = AssemblyResults::new(&self.node_name, &mut data);
        self.component.terminate(&mut results);
    }

    /// Carries out a change between two steps (`t`: the run time reached).
    fn change(&mut self, change: Change, t: f64, next_update: &mut f64, last_update: f64) -> Result<(), String> {
        match change {
            Change::Fmu(name, value) => self.component.set_tunable(&name, &value, t),
            Change::UpdatePeriod(p) => {
                self.update_period = p;
                *next_update = last_update + p;
                Ok(())
            }
        }
    }

    /// The node's ROS 2 parameters: step_size, update_period and the FMU's parameters, with
    /// their current values; a change is checked on ros2-client's thread and carried out by
    /// the stepping loop, whose answer goes back to the caller.
    fn ros_parameters(&self, started: Arc<AtomicBool>, changes: Sender<(Change, Reply)>) -> NodeParameters {
        let mut declared = vec![(STEP_SIZE.to_string(), ParameterValue::Double(self.step_size)), (UPDATE_PERIOD.to_string(), ParameterValue::Double(self.update_period))];
        let info = self.component.info();
        for p in &self.params {
            if let Some(v) = info.param_value(&p.name).and_then(to_parameter) {
                declared.push((p.ros.clone(), v));
            }
        }
        let params = Arc::new(self.params.clone());
        let label = self.label.clone();
        let check_started = started.clone();
        let check_params = params.clone();
        let check = move |name: &str, value: &ParameterValue| -> Result<(), String> {
            if !check_started.load(Ordering::SeqCst) {
                return Ok(());
            }
            match name {
                STEP_SIZE => Err(format!("{STEP_SIZE} is fixed while the node runs: start it again with --step-size")),
                UPDATE_PERIOD => match value {
                    ParameterValue::Double(p) => check_update_period(*p).map_err(|e| format!("{UPDATE_PERIOD} {p}: {e}")),
                    _ => Err(format!("{UPDATE_PERIOD} is a time in s (a double, e.g. 0.01)")),
                },
                _ => {
                    let Some(p) = check_params.iter().find(|p| p.ros == name) else { return Ok(()) };
                    if !p.tunable {
                        return Err(format!("'{}' is a fixed parameter of {label}: it is set before the FMU starts only (morc ros fmu --param {}=VALUE)", p.name, p.ros));
                    }
                    from_parameter(value, p.ty).map(|_| ()).ok_or_else(|| format!("'{}' is {}, not {}", p.name, p.ty, parameter_type(value)))
                }
            }
        };
        let apply = move |name: &str, value: &ParameterValue| -> Result<(), String> {
            if !started.load(Ordering::SeqCst) {
                return Ok(());
            }
            let change = match name {
                UPDATE_PERIOD => match value {
                    ParameterValue::Double(p) => Change::UpdatePeriod(*p),
                    _ => return Err(format!("{UPDATE_PERIOD} is a time in s")),
                },
                _ => {
                    let Some(p) = params.iter().find(|p| p.ros == name) else { return Ok(()) };
                    let v = from_parameter(value, p.ty).ok_or_else(|| format!("'{}' is {}", p.name, p.ty))?;
                    Change::Fmu(p.name.clone(), v)
                }
            };
            let (reply, answer) = bounded(1);
            changes.send_timeout((change, reply), APPLY_TIMEOUT).map_err(|_| "the node is not running any more".to_string())?;
            answer.recv_timeout(APPLY_TIMEOUT).map_err(|_| "the node did not take the change in time".to_string())?
        };
        NodeParameters { declared, check: Arc::new(check), apply: Arc::new(apply) }
    }
}

fn check_update_period(p: f64) -> Result<(), String> {
    if p.is_finite() && (1e-4..=3600.0).contains(&p) {
        Ok(())
    } else {
        Err("give a time in s from 0.0001 to 3600".into())
    }
}

/// A morc value as a ROS 2 parameter value; None for a list or record.
fn to_parameter(v: &Value) -> Option<ParameterValue> {
    Some(match v {
        Value::Real(x) => ParameterValue::Double(*x),
        Value::Integer(i) => ParameterValue::Integer(*i),
        Value::Boolean(b) => ParameterValue::Boolean(*b),
        Value::String(s) => ParameterValue::String(s.clone()),
        Value::Vector(x) => ParameterValue::DoubleArray(x.clone()),
        // ROS 2 parameters have no structured type (and an FMU has no such parameter).
        Value::List(_) | Value::Record(_) => return None,
    })
}

/// A ROS 2 parameter value as a morc value of type `ty`.
fn from_parameter(v: &ParameterValue, ty: ValueType) -> Option<Value> {
    Some(match (v, ty) {
        (ParameterValue::Double(x), ValueType::Real) => Value::Real(*x),
        (ParameterValue::Integer(i), ValueType::Integer) => Value::Integer(*i),
        (ParameterValue::Boolean(b), ValueType::Boolean) => Value::Boolean(*b),
        (ParameterValue::String(s), ValueType::String) => Value::String(s.clone()),
        (ParameterValue::DoubleArray(x), ValueType::Vector(n)) if x.len() == n => Value::Vector(x.clone()),
        _ => return None,
    })
}

fn parameter_type(v: &ParameterValue) -> &'static str {
    match v {
        ParameterValue::Double(_) => "a double",
        ParameterValue::Integer(_) => "an integer",
        ParameterValue::Boolean(_) => "a bool",
        ParameterValue::String(_) => "a string",
        _ => "an array or unset",
    }
}

/// What the bridge's side counted.
#[derive(Debug, Default)]
struct NodeCounts {
    published: AtomicU64,
    received: AtomicU64,
    dropped: AtomicU64,
}

/// How a sample is stamped when the bridge takes it.
#[derive(Clone)]
enum Stamp {
    /// The wall time since the node's start.
    Wall(Instant),
    /// The FMU's run time now (f64 bits).
    Virtual(Arc<AtomicU64>),
}

impl Stamp {
    fn now(&self) -> f64 {
        match self {
            Stamp::Wall(epoch) => epoch.elapsed().as_secs_f64(),
            Stamp::Virtual(t) => f64::from_bits(t.load(Ordering::Relaxed)),
        }
    }
}

enum Sub {
    F64(Subscription<Float64>),
    I32(Subscription<Int32>),
    I64(Subscription<Int64>),
    B(Subscription<Bool>),
}

enum Pub {
    F64(Publisher<Float64>),
    I32(Publisher<Int32>),
    I64(Publisher<Int64>),
    B(Publisher<Bool>),
}

/// The bridge's side of the inputs: takes what came, stamps it, hands it to the stepping loop.
struct FmuInlet {
    subs: Vec<(usize, Sub)>,
    stamp: Stamp,
    samples: Sender<(usize, f64, Value)>,
    counts: Arc<NodeCounts>,
}

impl FmuInlet {
    fn new(node: &mut Node, inputs: &[Port], stamp: Stamp, samples: Sender<(usize, f64, Value)>, counts: Arc<NodeCounts>) -> Result<FmuInlet, String> {
        let q = qos::default_profile();
        let subs = inputs
            .iter()
            .map(|p| {
                Ok((
                    p.port,
                    match p.kind {
                        MessageKind::Float64 => Sub::F64(subscription(node, &p.topic, q.clone())?),
                        MessageKind::Int32 => Sub::I32(subscription(node, &p.topic, q.clone())?),
                        MessageKind::Int64 => Sub::I64(subscription(node, &p.topic, q.clone())?),
                        MessageKind::Bool => Sub::B(subscription(node, &p.topic, q.clone())?),
                    },
                ))
            })
            .collect::<Result<_, String>>()?;
        Ok(FmuInlet { subs, stamp, samples, counts })
    }
}

/// Every message waiting on `sub`, at most 1000 (the rest next time).
fn take_all<M: serde::de::DeserializeOwned + 'static>(sub: &Subscription<M>, mut each: impl FnMut(M)) {
    for _ in 0..1000 {
        match sub.take() {
            Ok(Some((m, _))) => each(m),
            Ok(None) => break,
            Err(e) => {
                log::warn!("ROS 2: a sample could not be read: {e:?}");
                break;
            }
        }
    }
}

impl Inlet for FmuInlet {
    fn poll(&mut self) -> u64 {
        let t = self.stamp.now();
        let mut got = Vec::new();
        for (port, sub) in &self.subs {
            let port = *port;
            match sub {
                Sub::F64(s) => take_all(s, |m| got.push((port, Value::Real(m.data)))),
                Sub::I32(s) => take_all(s, |m| got.push((port, Value::Integer(m.data.into())))),
                Sub::I64(s) => take_all(s, |m| got.push((port, Value::Integer(m.data)))),
                Sub::B(s) => take_all(s, |m| got.push((port, Value::Boolean(m.data)))),
            }
        }
        let n = got.len() as u64;
        for (port, value) in got {
            if self.samples.try_send((port, t, value)).is_err() {
                self.counts.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.counts.received.fetch_add(n, Ordering::Relaxed);
        n
    }
}

/// The bridge's side of the outputs: every row the stepping loop made, one message per output.
struct FmuOutlet {
    pubs: Vec<(usize, Pub)>,
    rows: Receiver<Vec<Value>>,
    counts: Arc<NodeCounts>,
    refused: u64,
}

impl FmuOutlet {
    fn new(node: &mut Node, outputs: &[Port], rows: Receiver<Vec<Value>>, counts: Arc<NodeCounts>) -> Result<FmuOutlet, String> {
        let q = qos::default_profile();
        let pubs = outputs
            .iter()
            .map(|p| {
                Ok((
                    p.port,
                    match p.kind {
                        MessageKind::Float64 => Pub::F64(publisher(node, &p.topic, q.clone())?),
                        MessageKind::Int32 => Pub::I32(publisher(node, &p.topic, q.clone())?),
                        MessageKind::Int64 => Pub::I64(publisher(node, &p.topic, q.clone())?),
                        MessageKind::Bool => Pub::B(publisher(node, &p.topic, q.clone())?),
                    },
                ))
            })
            .collect::<Result<_, String>>()?;
        Ok(FmuOutlet { pubs, rows, counts, refused: 0 })
    }
}

impl Outlet for FmuOutlet {
    fn drain(&mut self) -> u64 {
        let mut sent = 0;
        for row in self.rows.try_iter().take(256) {
            for (port, p) in &self.pubs {
                let v = &row[*port];
                let ok = match p {
                    Pub::F64(p) => p.publish(Float64 { data: v.real() }).is_ok(),
                    Pub::I32(p) => p.publish(Int32 { data: v.integer().clamp(i32::MIN.into(), i32::MAX.into()) as i32 }).is_ok(),
                    Pub::I64(p) => p.publish(Int64 { data: v.integer() }).is_ok(),
                    Pub::B(p) => p.publish(Bool { data: v.boolean() }).is_ok(),
                };
                if ok {
                    sent += 1;
                } else {
                    self.refused += 1;
                    self.counts.dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        self.counts.published.fetch_add(sent, Ordering::Relaxed);
        sent
    }

    fn dropped(&self) -> u64 {
        self.refused
    }
}

/// Opens and runs `options` (the whole of `morc ros fmu` but the command line).
pub fn run(options: &FmuNodeOptions, stop: &dyn Fn() -> Option<i32>, say: &mut dyn FnMut(&str)) -> Result<FmuNodeSummary, FmuNodeError> {
    FmuNode::open(options)?.run(stop, say)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_ros_names_as_fmi_adapter_makes_them() {
        for (given, want) in
            [("u", "u"), ("der(x)", "der_x_"), ("arm.q[1]", "arm_q_1_"), ("_hidden", "hidden"), ("a..b", "a_b"), ("2nd", "_2nd"), ("Float64_continuous_input", "Float64_continuous_input")]
        {
            assert_eq!(ros_name(given), want, "{given}");
            assert!(crate::topic_name(&ros_name(given)).is_ok(), "{given}");
        }
    }

    #[test]
    fn inputs_interpolate_between_samples_and_hold_the_start_value_before_the_first() {
        let mut h = InputHistory::new(Value::Real(2.5), true);
        let mut v = Value::Real(0.0);
        h.value_at(0.0, &mut v);
        assert_eq!(v, Value::Real(2.5), "no sample yet: the start value");
        h.push(1.0, Value::Real(0.0));
        h.push(2.0, Value::Real(10.0));
        h.value_at(0.5, &mut v);
        assert_eq!(v, Value::Real(2.5), "before the first sample: the start value");
        h.value_at(1.0, &mut v);
        assert_eq!(v, Value::Real(0.0));
        h.value_at(1.25, &mut v);
        assert_eq!(v, Value::Real(2.5));
        h.value_at(2.0, &mut v);
        assert_eq!(v, Value::Real(10.0));
        h.value_at(7.0, &mut v);
        assert_eq!(v, Value::Real(10.0), "after the last sample it holds");
        assert_eq!(h.len(), 1, "only the last sample at or before the time asked is kept");
        // A sample stamped before the last is taken at the last one's time.
        h.push(1.5, Value::Real(4.0));
        h.value_at(7.0, &mut v);
        assert_eq!(v, Value::Real(4.0));
    }

    #[test]
    fn discrete_inputs_hold_the_last_sample() {
        let mut h = InputHistory::new(Value::Integer(7), false);
        let mut v = Value::Integer(0);
        h.push(1.0, Value::Integer(1));
        h.push(2.0, Value::Integer(3));
        h.value_at(0.9, &mut v);
        assert_eq!(v, Value::Integer(7));
        h.value_at(1.9, &mut v);
        assert_eq!(v, Value::Integer(1));
        h.value_at(2.0, &mut v);
        assert_eq!(v, Value::Integer(3));
        let mut r = InputHistory::new(Value::Real(0.0), false);
        let mut x = Value::Real(0.0);
        r.push(0.0, Value::Real(1.0));
        r.push(1.0, Value::Real(3.0));
        r.value_at(0.5, &mut x);
        assert_eq!(x, Value::Real(1.0), "a discrete Real holds");
    }

    #[test]
    fn message_types_hold_every_value_of_the_variable() {
        assert_eq!(MessageKind::of(VarType::Float32), Some(MessageKind::Float64));
        assert_eq!(MessageKind::of(VarType::Int32), Some(MessageKind::Int32));
        assert_eq!(MessageKind::of(VarType::UInt16), Some(MessageKind::Int32));
        assert_eq!(MessageKind::of(VarType::UInt32), Some(MessageKind::Int64));
        assert_eq!(MessageKind::of(VarType::Int64), Some(MessageKind::Int64));
        assert_eq!(MessageKind::of(VarType::Boolean), Some(MessageKind::Bool));
        assert_eq!(MessageKind::of(VarType::String), None);
    }

    #[test]
    fn parameters_convert_only_to_their_own_type() {
        assert_eq!(from_parameter(&ParameterValue::Double(1.5), ValueType::Real), Some(Value::Real(1.5)));
        assert_eq!(from_parameter(&ParameterValue::Integer(3), ValueType::Real), None);
        assert_eq!(from_parameter(&ParameterValue::Integer(3), ValueType::Integer), Some(Value::Integer(3)));
        assert_eq!(from_parameter(&ParameterValue::Boolean(true), ValueType::Boolean), Some(Value::Boolean(true)));
        assert_eq!(to_parameter(&Value::Real(2.0)), Some(ParameterValue::Double(2.0)));
    }
}
