//! The robot on ROS 2, as robot_state_publisher and joint_state_broadcaster put one there:
//! `/joint_states` (`sensor_msgs/msg/JointState`), `/tf` (`tf2_msgs/msg/TFMessage`, each moving
//! joint's child link in its parent link, as the URDF's joints), and, latched (transient local),
//! `/tf_static` (the fixed joints) and `/robot_description` (`std_msgs/msg/String`, the URDF whose
//! links those transforms name); and `~/state` (`std_msgs/msg/String`, latched: the robot's one
//! state as the operator page says it — "idle", "moving", "holding", "paused", "jogging",
//! "stopping" while it brakes, "faulted" — sent when it changes).
//!
//! A [`RobotTap`] on the running assembly copies the robot's q, qd and tau into a preallocated
//! ring every few ticks; the bridge turns the rows into messages on publishers that outlive the
//! runs ([`RobotStream`]).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use morc_kernel::*;
use morc_model::{LinkTree, Model, TreeMotion};
use morc_record::ring::{ring, RingConsumer, RingProducer};
use morc_ros_msgs::builtin_interfaces::Time;
use morc_ros_msgs::geometry_msgs::{Quaternion, Transform, TransformStamped, Vector3};
use morc_ros_msgs::sensor_msgs::JointState;
use morc_ros_msgs::std_msgs::{Header, String as RosString};
use morc_ros_msgs::tf2_msgs::TFMessage;
use ros2_client::Publisher;

use crate::bridge::{Endpoint, Outlet};
use crate::{publisher, qos, stamp_at, stamp_now};

/// The tap's name in an assembly.
pub const TAP_NAME: &str = "ros";

/// Joint states per second sent by default (joint_state_broadcaster's default is 50 Hz; a
/// viewer follows a fast arm better at 100).
pub const DEFAULT_RATE: f64 = 100.0;

/// The attachment that puts a [`RobotTap`] on an assembly that drives `model`: it reads the
/// base's q, qd and tau.
pub fn attachment(model: Arc<Model>, rate: f64) -> Attach {
    Arc::new(move |view| {
        let names: Vec<String> = ["q", "qd", "tau"].iter().map(|p| format!("{}.{p}", view.base_name)).collect();
        let mut inputs = Vec::new();
        let mut widths = Vec::new();
        for name in &names {
            let Some(s) = view.signals.iter().find(|s| &s.name == name) else {
                return Err(format!("the ROS 2 robot topics need '{name}', which the assembly does not have"));
            };
            let ValueType::Vector(n) = s.ty else {
                return Err(format!("the ROS 2 robot topics need '{name}' as a vector, it is {}", s.ty));
            };
            if n != model.nq() {
                return Err(format!("'{name}' has {n} elements but robot '{}' has {} joints", model.name(), model.nq()));
            }
            widths.push(n);
            inputs.push((name.clone(), name.replace('.', "/")));
        }
        let decimation = ((1.0 / (rate.max(1e-3) * view.base_period)).round() as u64).max(1);
        let tap = RobotTap::new(model.clone(), &inputs, decimation);
        Ok(Attachment { component: Box::new(tap), every: 1, inputs })
    })
}

/// The rows of one run's [`RobotTap`], as the robot's outlet drains them.
struct Source {
    consumer: RingConsumer,
    /// The wall time the run's time 0 maps to (ns since the Unix epoch).
    epoch: u64,
    /// The run ended: the source goes once it is drained.
    ended: Arc<AtomicBool>,
    sent: Arc<AtomicU64>,
    dropped: Arc<AtomicU64>,
    /// Ended and drained: it goes.
    finished: bool,
}

/// Where runs hand their rows to the robot's publishers: the publishers live as long as the
/// robot is the bridge's (a ROS 2 node's publishers live as long as the node), so subscribers
/// stay matched from one run to the next and see no gap while discovery catches up.
#[derive(Default)]
pub struct RobotStream {
    sources: Mutex<Vec<Source>>,
    /// Where `~/state` reads the robot's state.
    state: Mutex<Option<StateSource>>,
}

/// How often `~/state` looks whether the state changed.
const STATE_EVERY: std::time::Duration = std::time::Duration::from_millis(20);

/// Reads the robot's one state (the operator page's word), from the bridge's thread.
pub type StateSource = Arc<dyn Fn() -> RobotState + Send + Sync>;

impl RobotStream {
    /// Sets where `~/state` reads the robot's state (none: it is not sent).
    pub fn set_state(&self, source: Option<StateSource>) {
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = source;
    }
}

/// The component on the real-time path: copies q, qd and tau into a preallocated ring every
/// `decimation` steps; the bridge publishes them.
pub struct RobotTap {
    info: ComponentInfo,
    model: Arc<Model>,
    /// Run time, q, qd, tau.
    row: Vec<f64>,
    decimation: u64,
    producer: Option<RingProducer>,
    /// Set when the run ends, so the outlet lets the ring go once drained.
    ended: Arc<AtomicBool>,
    /// Counted by the bridge: messages sent and dropped.
    sent: Arc<AtomicU64>,
    dropped: Arc<AtomicU64>,
}

impl RobotTap {
    fn new(model: Arc<Model>, inputs: &[(String, String)], decimation: u64) -> RobotTap {
        let mut info = ComponentInfo::new("ros", "publishes the robot's joint states and links on ROS 2 (/joint_states, /tf) off the real-time path; results: name.sent, name.dropped");
        let n = model.nq();
        for (_, port) in inputs {
            info = info.input(PortInfo::new(port, ValueType::Vector(n)).required());
        }
        RobotTap { info, row: vec![0.0; 1 + 3 * n], model, decimation, producer: None, ended: Arc::default(), sent: Arc::default(), dropped: Arc::default() }
    }

    fn stop_outlet(&mut self) {
        self.producer = None;
        self.ended.store(true, Ordering::Release);
    }
}

impl Component for RobotTap {
    morc_kernel::component_info!(info);

    fn initialize(&mut self, ctx: &InitContext, _outputs: &mut [Value]) -> Result<(), String> {
        self.stop_outlet();
        let Some(stream) = crate::robot_stream(&self.model) else {
            return Ok(());
        };
        // Two seconds of rows, at least 256: the bridge looks every half millisecond.
        let rows = ((2.0 / (ctx.period * self.decimation as f64)).ceil() as usize).max(256);
        let (producer, consumer) = ring(rows, self.row.len());
        self.ended = Arc::default();
        let source = Source { consumer, epoch: crate::run_epoch(), ended: self.ended.clone(), sent: self.sent.clone(), dropped: self.dropped.clone(), finished: false };
        stream.sources.lock().unwrap_or_else(|p| p.into_inner()).push(source);
        self.producer = Some(producer);
        Ok(())
    }

    /// Real-time path: copies the inputs into the preallocated row and pushes it; never blocks,
    /// allocates or calls the system.
    fn step(&mut self, ctx: &StepContext, inputs: &[Value], _outputs: &mut [Value]) -> Step {
        if !ctx.step.is_multiple_of(self.decimation) {
            return Step::Continue;
        }
        let Some(producer) = self.producer.as_mut() else {
            return Step::Continue;
        };
        self.row[0] = ctx.time;
        let n = self.model.nq();
        for (k, v) in inputs.iter().enumerate() {
            if let Value::Vector(x) = v {
                let m = n.min(x.len());
                self.row[1 + k * n..1 + k * n + m].copy_from_slice(&x[..m]);
            }
        }
        producer.push_row(&self.row);
        Step::Continue
    }

    fn terminate(&mut self, results: &mut AssemblyResults) {
        self.stop_outlet();
        results.set("sent", Value::Integer(self.sent.load(Ordering::Relaxed) as i64));
        results.set("dropped", Value::Integer(self.dropped.load(Ordering::Relaxed) as i64));
    }
}

impl Drop for RobotTap {
    fn drop(&mut self) {
        self.stop_outlet();
    }
}

/// The bridge's side of the robot's topics: each run's rows to JointState and TFMessage; the
/// latched `/robot_description` and `/tf_static` publishers kept beside them.
struct RobotOutlet {
    model: Arc<Model>,
    tree: LinkTree,
    data: morc_model::Data,
    names: Vec<String>,
    stream: Arc<RobotStream>,
    batch: Vec<f64>,
    joint_states: Publisher<JointState>,
    tf: Publisher<TFMessage>,
    /// `~/state`, and the state it last sent.
    state: Publisher<RosString>,
    state_sent: Option<RobotState>,
    state_read: Option<std::time::Instant>,
    _latched: (Publisher<RosString>, Publisher<TFMessage>),
    /// Dropped by sources drained and gone, and refused by a peer's full window.
    dropped_before: u64,
}

/// The names of a robot's joint states: one per coordinate of q, as the URDF names its joints.
pub fn joint_state_names(model: &Model) -> Vec<String> {
    (0..model.nq()).map(|d| model.joint_names()[model.dof_joint(d)].clone()).collect()
}

/// `x` as a geometry_msgs Transform.
pub fn transform(x: &morc_model::Se3) -> Transform {
    let q = nalgebra::UnitQuaternion::from_rotation_matrix(&nalgebra::Rotation3::from_matrix_unchecked(x.rotation));
    let p = x.translation;
    Transform { translation: Vector3 { x: p[0], y: p[1], z: p[2] }, rotation: Quaternion { x: q.i, y: q.j, z: q.k, w: q.w } }
}

/// The transforms of the tree's joints that `moving` selects, from the placements in `data`.
pub fn tree_transforms(tree: &LinkTree, data: &morc_model::Data, stamp: Time, moving: bool) -> Vec<TransformStamped> {
    tree.joints
        .iter()
        .enumerate()
        .filter(|(_, j)| matches!(j.motion, TreeMotion::Joint(_)) == moving)
        .map(|(k, j)| TransformStamped {
            header: Header { stamp, frame_id: tree.links[j.parent].clone() },
            child_frame_id: tree.links[j.child].clone(),
            transform: transform(&tree.placement(data, k)),
        })
        .collect()
}

impl RobotOutlet {
    /// Sends `~/state` when the state changed (looked at every [`STATE_EVERY`]); whether it went out.
    fn send_state(&mut self) -> bool {
        if self.state_read.is_some_and(|t| t.elapsed() < STATE_EVERY) {
            return false;
        }
        self.state_read = Some(std::time::Instant::now());
        let source = self.stream.state.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let Some(now) = source.map(|read| read()) else { return false };
        if self.state_sent == Some(now) || self.state.publish(RosString { data: now.name().to_string() }).is_err() {
            return false;
        }
        self.state_sent = Some(now);
        true
    }
}

impl Outlet for RobotOutlet {
    fn drain(&mut self) -> u64 {
        let mut sent_all = u64::from(self.send_state());
        let n = self.model.nq();
        let mut sources = self.stream.sources.lock().unwrap_or_else(|p| p.into_inner());
        for source in sources.iter_mut() {
            // Read the flag first: rows pushed before it was set are in the ring now.
            let ended = source.ended.load(Ordering::Acquire);
            self.batch.clear();
            let width = source.consumer.width();
            source.consumer.pop_into(&mut self.batch, usize::MAX);
            let (mut sent, mut refused) = (0, 0);
            for row in self.batch.chunks_exact(width) {
                let stamp = Time::from_nanos(stamp_at(source.epoch, row[0]));
                let (q, qd, tau) = (&row[1..1 + n], &row[1 + n..1 + 2 * n], &row[1 + 2 * n..1 + 3 * n]);
                let message = JointState {
                    header: Header { stamp, frame_id: String::new() },
                    name: self.names.clone(),
                    position: q.to_vec(),
                    velocity: qd.to_vec(),
                    effort: tau.to_vec(),
                };
                match self.joint_states.publish(message) {
                    Ok(()) => sent += 1,
                    Err(_) => refused += 1,
                }
                morc_model::forward_kinematics_placements(&self.model, &mut self.data, q);
                let message = TFMessage { transforms: tree_transforms(&self.tree, &self.data, stamp, true) };
                match self.tf.publish(message) {
                    Ok(()) => sent += 1,
                    Err(_) => refused += 1,
                }
            }
            source.sent.fetch_add(sent, Ordering::Relaxed);
            source.dropped.fetch_add(refused, Ordering::Relaxed);
            self.dropped_before += refused;
            sent_all += sent;
            if ended {
                // What the real-time side found the ring full for, now that it pushes no more.
                let lost = source.consumer.dropped();
                source.dropped.fetch_add(lost, Ordering::Relaxed);
                self.dropped_before += lost;
                source.finished = true;
            }
        }
        sources.retain(|s| !s.finished);
        sent_all
    }

    fn dropped(&self) -> u64 {
        let live: u64 = self.stream.sources.lock().unwrap_or_else(|p| p.into_inner()).iter().filter(|s| !s.finished).map(|s| s.consumer.dropped()).sum();
        self.dropped_before + live
    }
}

/// The robot's topics on the bridge: `/joint_states` and `/tf` fed by the runs through `stream`,
/// and the latched `/robot_description` and `/tf_static`, sent once, so a subscriber that joins
/// later gets them.
pub fn robot_topics(model: Arc<Model>, stream: Arc<RobotStream>) -> crate::bridge::Job {
    Box::new(move |node| {
        let description = publisher::<RosString>(node, "/robot_description", qos::transient_local())?;
        let tf_static = publisher::<TFMessage>(node, "/tf_static", qos::transient_local())?;
        let urdf = morc_model::display_urdf(&model);
        let _ = description.publish(RosString { data: urdf });
        let tree = LinkTree::new(&model);
        let data = morc_model::Data::new(&model);
        let stamp = Time::from_nanos(stamp_now());
        let _ = tf_static.publish(TFMessage { transforms: tree_transforms(&tree, &data, stamp, false) });
        let joint_states = publisher::<JointState>(node, "/joint_states", qos::default_profile())?;
        // tf2's TransformBroadcaster: the default profile, 100 deep.
        let tf = publisher::<TFMessage>(node, "/tf", qos::default_profile().history(ros2_client::qos::History::KeepLast { depth: 100 }))?;
        let state = publisher::<RosString>(node, &format!("{}/state", node.fully_qualified_name()), qos::transient_local())?;
        Ok(Endpoint::Outlet(Box::new(RobotOutlet {
            state,
            state_sent: None,
            state_read: None,
            names: joint_state_names(&model),
            data,
            tree,
            model,
            stream,
            batch: Vec::new(),
            joint_states,
            tf,
            _latched: (description, tf_static),
            dropped_before: 0,
        })))
    })
}
