//! `ros.publish`: a component whose inputs go out on a ROS 2 topic. Its step copies them into a
//! row of a preallocated ring; the bridge's thread drains the ring into messages.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use morc_kernel::{AssemblyResults, Component, ComponentInfo, InitContext, ParamInfo, Step, StepContext, Value};
use morc_record::ring::{ring, RingConsumer, RingProducer};
use morc_ros_msgs::builtin_interfaces::Time;
use ros2_client::Publisher;

use super::messages::{values_to_words, width, Meta, Reader, RowMessage};
use super::{check_topic_parameter, configure_topic, on_ros, ports_doc, topic_params, Link, Topic, PUBLISH};
use crate::bridge::{Endpoint, Outlet};
use crate::stamp_at;

/// The kind's documentation.
pub const DOC: &str = concat!(
    "publishes its inputs on a ROS 2 topic, off the real-time path (a bridge thread sends what each step queues; a full queue drops \
the row and counts it): topic, type, qos (default, sensor_data, transient_local), rate (messages per second; 0: every step), \
frame_id (of a message with a header, stamped UTC: the wall time the run started plus its time). Results: name.sent, name.dropped. ",
    ports_doc!()
);

/// The `ros.publish` component.
pub struct RosPublish {
    info: ComponentInfo,
    topic: Option<Topic>,
    /// Steps per message.
    decimation: u64,
    /// The first step's time: messages are stamped from the run's start.
    t0: Option<f64>,
    /// The row pushed: run time, then the inputs' words.
    words: Vec<u64>,
    row: Vec<f64>,
    producer: Option<RingProducer>,
    link: Option<Link>,
    /// Counted by the outlet: messages sent, and rows and messages dropped.
    sent: Arc<AtomicU64>,
    dropped: Arc<AtomicU64>,
}

impl Default for RosPublish {
    fn default() -> Self {
        Self::new()
    }
}

impl RosPublish {
    /// A component with the default parameters (no topic yet).
    pub fn new() -> RosPublish {
        let info = topic_params(ComponentInfo::new(PUBLISH, DOC))
            .param(ParamInfo::new("rate", Value::Real(0.0)).unit("Hz").doc("messages per second (the nearest whole number of steps apart); 0: one every step"))
            .param(ParamInfo::new("frame_id", Value::String(String::new())).doc("the frame a message with a header is in"));
        RosPublish {
            info,
            topic: None,
            decimation: 1,
            t0: None,
            words: Vec::new(),
            row: Vec::new(),
            producer: None,
            link: None,
            sent: Arc::default(),
            dropped: Arc::default(),
        }
    }

    fn close(&mut self) {
        self.producer = None;
        if let Some(link) = self.link.take() {
            link.close();
        }
    }
}

impl Component for RosPublish {
    morc_kernel::component_info!(info);

    fn set_parameter(&mut self, name: &str, value: &Value) -> Result<(), String> {
        self.info.set_param(name, value)?;
        check_topic_parameter(name, value)?;
        let rate = self.info.real("rate");
        if name == "rate" && !(rate.is_finite() && rate >= 0.0) {
            return Err(format!("rate = {rate}: give messages per second, 0 or more (0: every step)"));
        }
        on_ros(PUBLISH).map(drop)
    }

    fn configure(&mut self) -> Result<(), String> {
        let frame_id = self.info.param_value("frame_id").map_or(String::new(), |v| v.str().to_string());
        let topic = configure_topic(&self.info, frame_id)?;
        self.info.inputs = topic.ty.ports(&topic.meta);
        let width = width(&self.info.inputs);
        self.words = vec![0; 1 + width];
        self.row = vec![0.0; 1 + width];
        self.topic = Some(topic);
        Ok(())
    }

    fn initialize(&mut self, ctx: &InitContext, _outputs: &mut [Value]) -> Result<(), String> {
        self.close();
        let Some(topic) = self.topic.as_ref() else { return Err(format!("{PUBLISH} '{}' was not configured", ctx.name)) };
        let rate = self.info.real("rate");
        self.decimation = if rate > 0.0 { ((1.0 / (rate * ctx.period)).round() as u64).max(1) } else { 1 };
        self.t0 = None;
        let Some(bridge) = on_ros(PUBLISH)? else {
            // morc check: the rows go nowhere.
            self.producer = None;
            return Ok(());
        };
        // Two seconds of rows, at least 256: the bridge looks every POLL_PERIOD (100 µs).
        let rows = ((2.0 / (ctx.period * self.decimation as f64)).ceil() as usize).max(256);
        let (producer, consumer) = ring(rows, self.row.len());
        let feed = OutletFeed { consumer, meta: topic.meta.clone(), epoch: crate::run_epoch(), sent: self.sent.clone(), dropped: self.dropped.clone() };
        let (ty, name, qos) = (topic.ty, topic.topic.clone(), topic.qos.clone());
        let id = bridge
            .add(Box::new(move |node| ty.outlet(node, &name, qos, feed).map(Endpoint::Outlet)))
            .map_err(|e| format!("{PUBLISH} '{}' on {}: {e}", ctx.name, topic.topic))?;
        self.producer = Some(producer);
        self.link = Some(Link { bridge, id });
        Ok(())
    }

    /// Real-time path: copies the inputs into the preallocated row and pushes it; never blocks,
    /// allocates or calls the system.
    fn step(&mut self, ctx: &StepContext, inputs: &[Value], _outputs: &mut [Value]) -> Step {
        let t0 = *self.t0.get_or_insert(ctx.time);
        if !ctx.step.is_multiple_of(self.decimation) {
            return Step::Continue;
        }
        let Some(producer) = self.producer.as_mut() else { return Step::Continue };
        self.words[0] = (ctx.time - t0).to_bits();
        values_to_words(inputs, &mut self.words[1..]);
        for (x, w) in self.row.iter_mut().zip(&self.words) {
            *x = f64::from_bits(*w);
        }
        producer.push_row(&self.row);
        Step::Continue
    }

    fn terminate(&mut self, results: &mut AssemblyResults) {
        self.close();
        results.set("sent", Value::Integer(self.sent.load(Ordering::Relaxed) as i64));
        results.set("dropped", Value::Integer(self.dropped.load(Ordering::Relaxed) as i64));
    }
}

impl Drop for RosPublish {
    fn drop(&mut self) {
        self.close();
    }
}

/// What a publisher's outlet takes from its component.
pub struct OutletFeed {
    /// The rows the component pushes.
    pub consumer: RingConsumer,
    /// The rows' sizes and names.
    pub meta: Meta,
    /// The wall time (ns since the Unix epoch) the run's first step maps to.
    pub epoch: u64,
    /// Messages sent, for the component's results.
    pub sent: Arc<AtomicU64>,
    /// Rows a full ring refused and messages a peer's full window refused.
    pub dropped: Arc<AtomicU64>,
}

/// The bridge's side of a `ros.publish`: rows to messages of type `M`.
pub struct RowOutlet<M: RowMessage> {
    publisher: Publisher<M>,
    feed: OutletFeed,
    batch: Vec<f64>,
    words: Vec<u64>,
    refused: u64,
}

impl<M: RowMessage> RowOutlet<M> {
    /// An outlet publishing on `publisher` what `feed` queues.
    pub fn new(publisher: Publisher<M>, feed: OutletFeed) -> RowOutlet<M> {
        let width = feed.consumer.width();
        RowOutlet { publisher, batch: Vec::with_capacity(feed.consumer.capacity() * width), words: vec![0; width], feed, refused: 0 }
    }
}

impl<M: RowMessage> Outlet for RowOutlet<M> {
    fn drain(&mut self) -> u64 {
        self.batch.clear();
        let width = self.feed.consumer.width();
        self.feed.consumer.pop_into(&mut self.batch, usize::MAX);
        let mut sent = 0;
        for row in self.batch.chunks_exact(width) {
            for (w, x) in self.words.iter_mut().zip(row) {
                *w = x.to_bits();
            }
            let stamp = Time::from_nanos(stamp_at(self.feed.epoch, row[0]));
            let message = M::encode(&mut Reader::new(&self.words[1..]), stamp, &self.feed.meta);
            match self.publisher.publish(message) {
                Ok(()) => sent += 1,
                Err(_) => self.refused += 1,
            }
        }
        self.feed.sent.fetch_add(sent, Ordering::Relaxed);
        self.feed.dropped.store(self.dropped(), Ordering::Relaxed);
        sent
    }

    fn dropped(&self) -> u64 {
        self.feed.consumer.dropped() + self.refused
    }
}
