//! `ros.subscribe`: a component whose outputs are the last message that came on a ROS 2 topic.
//! The bridge's thread turns each message into a row and writes it to a sequence-locked slot;
//! the component's step reads the slot whole, and says how old what it holds is (`age`, in
//! steps). When nothing came for `stale_after` steps the input is stale, and the `stale` policy
//! says what happens: hold the last message, output zeros, or fault naming the topic.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use morc_kernel::{AssemblyResults, Component, ComponentInfo, InitContext, ParamInfo, PortInfo, Step, StepContext, Value, ValueType};
use morc_netft::slot::RowSlot;
use ros2_client::Subscription;

use super::messages::{values_to_words, width, words_to_values, Meta, RowMessage, Writer};
use super::{check_topic_parameter, configure_topic, on_ros, ports_doc, topic_params, Link, Topic, SUBSCRIBE};
use crate::bridge::{Endpoint, Inlet};

/// The kind's documentation.
pub const DOC: &str = concat!(
    "the last message on a ROS 2 topic as outputs, read from a lock-free slot the bridge thread fills (no DDS on the real-time path): \
topic, type, qos (default, sensor_data, transient_local); output age: steps since the last message (0: one came this step; it \
starts at stale_after, stale until the first message). After stale_after steps (default 100) without a message the input is \
stale and stale says what happens: \"hold\" keeps the last message, \"zero\" outputs zeros (the identity for an orientation) until \
one comes, \"fault\" faults the component naming the topic and how long nothing came (armed by the first message). A message \
whose arrays are not the component's size, or that lacks one of its joints, is dropped and counted. Results: name.received, \
name.dropped. ",
    ports_doc!()
);

/// What a subscription does when its input is stale.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stale {
    /// The outputs keep the last message.
    Hold,
    /// The outputs are zeros (an orientation the identity) until a message comes.
    Zero,
    /// The component faults, naming the topic (once a message has come).
    Fault,
}

impl Stale {
    /// The policies' names, as the `stale` parameter takes them.
    pub const NAMES: &'static [&'static str] = &["hold", "zero", "fault"];

    /// The policy named `name`.
    pub fn by_name(name: &str) -> Result<Stale, String> {
        match name {
            "hold" => Ok(Stale::Hold),
            "zero" => Ok(Stale::Zero),
            "fault" => Ok(Stale::Fault),
            other => Err(morc_kernel::names::unknown("stale policy", other, "(stale = …)", Stale::NAMES)),
        }
    }
}

/// The `ros.subscribe` component.
pub struct RosSubscribe {
    info: ComponentInfo,
    topic: Option<Topic>,
    stale: Stale,
    stale_after: i64,
    /// The fields' outputs (the last output is `age`).
    fields: usize,
    slot: Option<Arc<RowSlot>>,
    link: Option<Link>,
    /// What the slot held at the last read: the messages' count, then the row.
    read: Vec<u64>,
    /// The last message's row, and the row of zeros (the ports' start values).
    latest: Vec<u64>,
    zeros: Vec<u64>,
    /// The count of the last message taken.
    count: u64,
    age: i64,
    /// The run time of the last message taken (None: none yet).
    last_time: Option<f64>,
    name: String,
    /// Counted by the inlet: messages taken, and dropped.
    received: Arc<AtomicU64>,
    dropped: Arc<AtomicU64>,
}

impl Default for RosSubscribe {
    fn default() -> Self {
        Self::new()
    }
}

impl RosSubscribe {
    /// A component with the default parameters (no topic yet).
    pub fn new() -> RosSubscribe {
        let info = topic_params(ComponentInfo::new(SUBSCRIBE, DOC))
            .param(ParamInfo::new("stale", Value::String("hold".into())).doc("what a stale input does: \"hold\" the last message, \"zero\" its outputs, \"fault\" the component"))
            .param(ParamInfo::new("stale_after", Value::Integer(100)).doc("steps without a message after which the input is stale"));
        RosSubscribe {
            info,
            topic: None,
            stale: Stale::Hold,
            stale_after: 100,
            fields: 0,
            slot: None,
            link: None,
            read: Vec::new(),
            latest: Vec::new(),
            zeros: Vec::new(),
            count: 0,
            age: 0,
            last_time: None,
            name: String::new(),
            received: Arc::default(),
            dropped: Arc::default(),
        }
    }

    fn close(&mut self) {
        if let Some(link) = self.link.take() {
            link.close();
        }
        self.slot = None;
    }

    /// Starts reading `slot`: no message yet, the outputs zeros and `age` stale_after.
    fn start(&mut self, name: &str, slot: Arc<RowSlot>, outputs: &mut [Value]) {
        self.name = name.to_string();
        self.slot = Some(slot);
        self.latest.copy_from_slice(&self.zeros);
        self.count = 0;
        self.age = self.stale_after;
        self.last_time = None;
        words_to_values(&self.zeros, &mut outputs[..self.fields]);
        outputs[self.fields] = Value::Integer(self.age);
    }

    /// The fault of a stale input (allocates, once: the run ends).
    fn stale_fault(&self, period: f64) -> String {
        let topic = self.topic.as_ref().map_or("", |t| t.topic.as_str());
        let last = self.last_time.map_or(String::new(), |t| format!("; the last came at t = {t:.3} s"));
        format!(
            "{SUBSCRIBE} '{}': nothing came on {topic} for {} steps ({:.3} s; stale_after = {}){last}: is its publisher still running?",
            self.name,
            self.age,
            self.age as f64 * period,
            self.stale_after
        )
    }
}

impl Component for RosSubscribe {
    morc_kernel::component_info!(info);

    fn set_parameter(&mut self, name: &str, value: &Value) -> Result<(), String> {
        self.info.set_param(name, value)?;
        check_topic_parameter(name, value)?;
        match name {
            "stale" => self.stale = Stale::by_name(value.str())?,
            "stale_after" if value.integer() < 1 => return Err(format!("stale_after = {}: give steps, 1 or more", value.integer())),
            _ => {}
        }
        on_ros(SUBSCRIBE).map(drop)
    }

    fn configure(&mut self) -> Result<(), String> {
        self.stale = Stale::by_name(self.info.param_value("stale").map_or("hold", Value::str))?;
        self.stale_after = self.info.integer("stale_after");
        if self.stale_after < 1 {
            return Err(format!("stale_after = {}: give steps, 1 or more", self.stale_after));
        }
        let topic = configure_topic(&self.info, String::new())?;
        let mut outputs = topic.ty.ports(&topic.meta);
        self.fields = outputs.len();
        let width = width(&outputs);
        let starts: Vec<Value> = outputs.iter().map(PortInfo::initial_value).collect();
        self.zeros = vec![0; width];
        values_to_words(&starts, &mut self.zeros);
        self.latest = self.zeros.clone();
        self.read = vec![0; 1 + width];
        outputs.push(PortInfo::new("age", ValueType::Integer).doc("steps since the last message (0: one came this step); stale_after until the first"));
        self.info.outputs = outputs;
        self.topic = Some(topic);
        Ok(())
    }

    fn initialize(&mut self, ctx: &InitContext, outputs: &mut [Value]) -> Result<(), String> {
        self.close();
        let Some(topic) = self.topic.as_ref() else { return Err(format!("{SUBSCRIBE} '{}' was not configured", ctx.name)) };
        let slot = Arc::new(RowSlot::new(self.read.len()));
        let Some(bridge) = on_ros(SUBSCRIBE)? else {
            // morc check: a slot nothing writes, so no message ever comes.
            self.start(ctx.name, slot, outputs);
            return Ok(());
        };
        let feed = InletFeed { slot: slot.clone(), meta: topic.meta.clone(), topic: topic.topic.clone(), received: self.received.clone(), dropped: self.dropped.clone() };
        let (ty, name, qos) = (topic.ty, topic.topic.clone(), topic.qos.clone());
        let id = bridge
            .add(Box::new(move |node| ty.inlet(node, &name, qos, feed).map(Endpoint::Inlet)))
            .map_err(|e| format!("{SUBSCRIBE} '{}' on {}: {e}", ctx.name, topic.topic))?;
        self.link = Some(Link { bridge, id });
        self.start(ctx.name, slot, outputs);
        Ok(())
    }

    /// Real-time path: reads the slot into the preallocated row and writes the outputs; never
    /// blocks, allocates or calls the system (but to say why it faults, once).
    fn step(&mut self, ctx: &StepContext, _inputs: &[Value], outputs: &mut [Value]) -> Step {
        // A read that met the bridge mid-write each try counts as no message this step.
        let fresh = self.slot.as_ref().is_some_and(|s| s.read_into(&mut self.read)) && self.read[0] != self.count;
        if fresh {
            self.count = self.read[0];
            self.latest.copy_from_slice(&self.read[1..]);
            self.age = 0;
            self.last_time = Some(ctx.time);
        } else {
            self.age = self.age.saturating_add(1);
        }
        let stale = self.age >= self.stale_after;
        let row = if stale && self.stale == Stale::Zero { &self.zeros } else { &self.latest };
        words_to_values(row, &mut outputs[..self.fields]);
        outputs[self.fields] = Value::Integer(self.age);
        if stale && self.stale == Stale::Fault && self.last_time.is_some() {
            return Step::Fault(self.stale_fault(ctx.period));
        }
        Step::Continue
    }

    fn terminate(&mut self, results: &mut AssemblyResults) {
        self.close();
        results.set("received", Value::Integer(self.received.load(Ordering::Relaxed) as i64));
        results.set("dropped", Value::Integer(self.dropped.load(Ordering::Relaxed) as i64));
    }
}

impl Drop for RosSubscribe {
    fn drop(&mut self) {
        self.close();
    }
}

/// What a subscription's inlet hands its component.
pub struct InletFeed {
    /// Where the last message's row goes, after the messages' count.
    pub slot: Arc<RowSlot>,
    /// The rows' sizes and names.
    pub meta: Meta,
    /// The topic, for messages.
    pub topic: String,
    /// Messages taken, for the component's results.
    pub received: Arc<AtomicU64>,
    /// Messages dropped (not of the component's size, or not readable).
    pub dropped: Arc<AtomicU64>,
}

/// The bridge's side of a `ros.subscribe`: messages of type `M` to rows.
pub struct RowInlet<M: RowMessage> {
    subscription: Subscription<M>,
    feed: InletFeed,
    /// The messages' count, then the last one's row: what the slot gets.
    row: Vec<u64>,
    scratch: Vec<u64>,
    count: u64,
    dropped: u64,
    warned: bool,
}

impl<M: RowMessage> RowInlet<M> {
    /// An inlet taking what `subscription` receives into `feed`'s slot.
    pub fn new(subscription: Subscription<M>, feed: InletFeed) -> RowInlet<M> {
        let width = feed.slot.len();
        RowInlet { subscription, row: vec![0; width], scratch: vec![0; width - 1], feed, count: 0, dropped: 0, warned: false }
    }

    fn drop_one(&mut self, why: &str) {
        self.dropped += 1;
        if !self.warned {
            self.warned = true;
            log::warn!("ROS 2: a {} on {} was dropped: {why} (further ones are counted: {SUBSCRIBE}'s result dropped)", M::TYPE_NAME, self.feed.topic);
        }
    }
}

impl<M: RowMessage> Inlet for RowInlet<M> {
    fn poll(&mut self) -> u64 {
        let mut taken = 0;
        let mut fresh = false;
        loop {
            match self.subscription.take() {
                Ok(Some((message, _))) => {
                    taken += 1;
                    self.scratch.fill(0);
                    match message.decode(&mut Writer::new(&mut self.scratch), &self.feed.meta) {
                        Ok(()) => {
                            self.count += 1;
                            self.row[1..].copy_from_slice(&self.scratch);
                            fresh = true;
                        }
                        Err(why) => self.drop_one(&why),
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    taken += 1;
                    self.drop_one(&format!("{e:?}"));
                    break;
                }
            }
        }
        if fresh {
            self.row[0] = self.count;
            self.feed.slot.write(&self.row);
        }
        self.feed.received.store(self.count, Ordering::Relaxed);
        self.feed.dropped.store(self.dropped, Ordering::Relaxed);
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A subscriber of `params` (set as an assembly would, but for the bridge: these tests run
    /// without ROS 2), configured, reading a slot the test writes.
    fn subscriber(params: &[(&str, Value)]) -> (RosSubscribe, Arc<RowSlot>, Vec<Value>) {
        let mut s = RosSubscribe::new();
        for (k, v) in params {
            s.info.set_param(k, v).unwrap();
            check_topic_parameter(k, v).unwrap();
        }
        s.configure().unwrap();
        let slot = Arc::new(RowSlot::new(s.read.len()));
        let mut outputs: Vec<Value> = s.info.outputs.iter().map(PortInfo::initial_value).collect();
        s.start("cmd", slot.clone(), &mut outputs);
        (s, slot, outputs)
    }

    fn step(s: &mut RosSubscribe, k: u64, outputs: &mut [Value]) -> Step {
        s.step(&StepContext { step: k, time: k as f64 * 1e-3, period: 1e-3 }, &[], outputs)
    }

    fn float64(stale: &str) -> Vec<(&'static str, Value)> {
        vec![("topic", Value::String("/level".into())), ("type", Value::String("std_msgs/msg/Float64".into())), ("stale", Value::String(stale.into())), ("stale_after", Value::Integer(3))]
    }

    #[test]
    fn ports_are_the_fields_and_age() {
        let (s, _, outputs) = subscriber(&[("topic", Value::String("/cmd_vel".into())), ("type", Value::String("geometry_msgs/msg/Twist".into()))]);
        let names: Vec<&str> = s.info.outputs.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["linear", "angular", "age"]);
        assert_eq!(outputs[2], Value::Integer(100), "stale until the first message");
        let (s, _, outputs) = subscriber(&[("topic", Value::String("/p".into())), ("type", Value::String("geometry_msgs/msg/Pose".into()))]);
        assert_eq!(s.info.outputs[1].element_names, ["x", "y", "z", "w"]);
        assert_eq!(outputs[1], Value::Vector(vec![0.0, 0.0, 0.0, 1.0]), "the identity, not a zero quaternion");
    }

    #[test]
    fn a_stale_input_holds_zeroes_or_faults() {
        for policy in ["hold", "zero", "fault"] {
            let (mut s, slot, mut outputs) = subscriber(&float64(policy));
            // Nothing yet: no fault whatever the policy (armed by the first message).
            assert_eq!(step(&mut s, 0, &mut outputs), Step::Continue, "{policy}");
            assert_eq!(outputs[1], Value::Integer(4));
            slot.write(&[1, 42.0f64.to_bits()]);
            assert_eq!(step(&mut s, 1, &mut outputs), Step::Continue);
            assert_eq!((outputs[0].real(), outputs[1].integer()), (42.0, 0), "{policy}");
            assert_eq!(step(&mut s, 2, &mut outputs), Step::Continue);
            assert_eq!(step(&mut s, 3, &mut outputs), Step::Continue);
            assert_eq!((outputs[0].real(), outputs[1].integer()), (42.0, 2), "{policy}: fresh for stale_after steps");
            let at_stale = step(&mut s, 4, &mut outputs);
            assert_eq!(outputs[1].integer(), 3);
            match policy {
                "hold" => assert_eq!((at_stale, outputs[0].real()), (Step::Continue, 42.0)),
                "zero" => assert_eq!((at_stale, outputs[0].real()), (Step::Continue, 0.0)),
                _ => {
                    let Step::Fault(why) = at_stale else { panic!("no fault: {at_stale:?}") };
                    assert_eq!(why, "ros.subscribe 'cmd': nothing came on /level for 3 steps (0.003 s; stale_after = 3); the last came at t = 0.001 s: is its publisher still running?");
                }
            }
            // A message again: fresh.
            slot.write(&[2, 7.0f64.to_bits()]);
            let again = step(&mut s, 5, &mut outputs);
            assert_eq!((again, outputs[0].real(), outputs[1].integer()), (Step::Continue, 7.0, 0), "{policy}");
        }
    }

    #[test]
    fn parameters_are_checked_by_name() {
        let mut s = RosSubscribe::new();
        let e = s.set_parameter("stale_aftr", &Value::Integer(3)).unwrap_err();
        assert!(e.contains("did you mean 'stale_after'"), "{e}");
        let e = s.set_parameter("stale", &Value::String("keep".into())).unwrap_err();
        assert!(e.contains("unknown stale policy 'keep'") && e.contains("fault, hold, zero"), "{e}");
        assert!(s.set_parameter("stale_after", &Value::Integer(0)).unwrap_err().contains("1 or more"));
        // Not on ROS 2 (no bridge in these tests): a good parameter says how to get there.
        let e = s.set_parameter("topic", &Value::String("/x".into())).unwrap_err();
        assert!(e.contains("morc --ros run") && e.contains("morc.ros.start()"), "{e}");
    }

    #[test]
    fn arrays_take_their_size_and_names() {
        let js = |extra: (&'static str, Value)| {
            let mut s = RosSubscribe::new();
            s.info.set_param("topic", &Value::String("/js".into())).unwrap();
            s.info.set_param("type", &Value::String("sensor_msgs/msg/JointState".into())).unwrap();
            s.info.set_param(extra.0, &extra.1).unwrap();
            s.configure().map(|_| s)
        };
        let s = js(("names", Value::String("a, b,c".into()))).unwrap();
        assert_eq!(s.info.outputs[0].ty, ValueType::Vector(3));
        assert_eq!(s.info.outputs[0].element_names, ["a", "b", "c"]);
        assert_eq!(js(("size", Value::Integer(4))).unwrap().info.outputs[2].ty, ValueType::Vector(4));
        let mut both = RosSubscribe::new();
        for (k, v) in [("topic", "/js"), ("type", "sensor_msgs/msg/JointState"), ("names", "a,b")] {
            both.info.set_param(k, &Value::String(v.into())).unwrap();
        }
        both.info.set_param("size", &Value::Integer(3)).unwrap();
        assert!(both.configure().unwrap_err().contains("names gives 2 joints but size is 3"));
    }
}
