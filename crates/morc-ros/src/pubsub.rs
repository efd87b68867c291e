//! Assemblies on ROS 2: the component kinds `ros.publish` and `ros.subscribe`, wired like any
//! component. Their ports are the message's fields (`pubsub/messages.rs` lists the types and their ports).
//!
//! ```lua
//! a:add("cmd", "ros.subscribe", { topic = "/cmd_vel", type = "geometry_msgs/msg/Twist", stale = "zero" })
//! a:add("out", "ros.publish", { topic = "/wrench", type = "geometry_msgs/msg/WrenchStamped", qos = "sensor_data", rate = 100 })
//! ```
//!
//! Nothing on the real-time path talks DDS. A publisher's step copies its inputs into a row of a
//! preallocated lock-free ring (`morc_record::ring`, the live view's and the recorder's), which
//! the bridge's thread drains into messages; a full ring drops the row and counts it. A
//! subscription's messages are turned into rows on the bridge's thread and written to a
//! sequence-locked slot (`morc_netft::slot::RowSlot`) that the subscriber's step reads whole.
//! Sizes are fixed at configure, so a step never allocates. Each component's endpoint is made on
//! the bridge when its run starts and removed, waited for, when it ends or is swapped out.

mod messages;
mod publish;
mod subscribe;

use std::sync::Arc;

use morc_kernel::registry::{KindRegistry, NATIVE};
use morc_kernel::{ComponentInfo, ParamInfo, Value};
use ros2_client::QosProfile;

use crate::bridge::{Bridge, EndpointId};
use messages::{MessageType, Meta};

pub use messages::type_names;
pub use publish::RosPublish;
pub use subscribe::{RosSubscribe, Stale};

/// The publishing kind's name.
pub const PUBLISH: &str = "ros.publish";
/// The subscribing kind's name.
pub const SUBSCRIBE: &str = "ros.subscribe";

/// The ports of the message types, as the kinds' documentation lists them.
macro_rules! ports_doc {
    () => {
        "Ports are the message's fields: std_msgs/msg/Float64, Float32 `data` (real); Int32, Int64 `data` (integer); \
Bool `data` (boolean); Float64MultiArray `data` (vector[size]); geometry_msgs/msg/Pose, PoseStamped `position` [x y z] m and \
`orientation` [x y z w] (a unit quaternion, w last); Twist, TwistStamped `linear` [x y z] m/s and `angular` [x y z] rad/s; Wrench, \
WrenchStamped `force` [x y z] N and `torque` [x y z] N·m; sensor_msgs/msg/JointState `position`, `velocity`, `effort` (vector[size]); \
trajectory_msgs/msg/JointTrajectory `positions`, `velocities` (vector[size]) and `time_from_start` (s) of its first (a publisher's \
only) point. size: the `size` parameter, else the count of `names`, else the robot's joint count; joints are named by `names` \
(\"A1,A2,…\") or the robot's joint names."
    };
}
pub(crate) use ports_doc;

/// Registers `ros.publish` and `ros.subscribe` into `registry`.
pub fn register(registry: &mut KindRegistry) -> Result<(), String> {
    registry.register_fn(PUBLISH, publish::DOC, NATIVE, || Box::new(RosPublish::new()))?;
    registry.register_fn(SUBSCRIBE, subscribe::DOC, NATIVE, || Box::new(RosSubscribe::new()))
}

/// The running bridge (None under `morc check`: no network), or the error for a topic component
/// while morc is not on ROS 2.
fn on_ros(kind: &str) -> Result<Option<Arc<Bridge>>, String> {
    if let Some(bridge) = crate::bridge() {
        return Ok(Some(bridge));
    }
    if crate::check_only() {
        return Ok(None);
    }
    Err(format!("{kind} needs morc on ROS 2, and it is not: run the program with `morc --ros run prog.lua`, or call morc.ros.start() before adding the component"))
}

/// The parameters both kinds take.
fn topic_params(info: ComponentInfo) -> ComponentInfo {
    let types = type_names().join(", ");
    info.param(ParamInfo::new("topic", Value::String(String::new())).doc("the ROS 2 topic (\"/cmd_vel\"); a name without a leading / is taken from the root"))
        .param(ParamInfo::new("type", Value::String(String::new())).doc(&format!("the message type: {types}")))
        .param(ParamInfo::new("qos", Value::String("default".into())).doc(&format!("the QoS profile, as ROS 2 defines it: {}", crate::qos::NAMES.join(", "))))
        .param(
            ParamInfo::new("size", Value::Integer(0)).doc("the size of the message's arrays (Float64MultiArray, JointState, JointTrajectory); 0: the count of `names`, else the robot's joint count"),
        )
        .param(
            ParamInfo::new("names", Value::String(String::new()))
                .doc("the joints' names (JointState, JointTrajectory), separated by commas or spaces; empty: the robot's joint names when size is its joint count"),
        )
}

/// Checks a value [`topic_params`] declared: the topic, message type and QoS are known names.
fn check_topic_parameter(name: &str, value: &Value) -> Result<(), String> {
    match name {
        "topic" => crate::topic_name(value.str()).map(drop),
        "type" => messages::find(value.str()).map(drop),
        "qos" => crate::qos::by_name(value.str()).map(drop),
        "size" if value.integer() < 0 => Err(format!("size = {}: give the arrays' size, 1 or more (0: the robot's joint count)", value.integer())),
        _ => Ok(()),
    }
}

/// A topic as configured: where, what, how, and the rows' sizes.
struct Topic {
    topic: String,
    ty: &'static dyn MessageType,
    qos: QosProfile,
    meta: Meta,
}

/// Reads the topic parameters of `info`, once they are final; `frame_id`: a header's frame.
fn configure_topic(info: &ComponentInfo, frame_id: String) -> Result<Topic, String> {
    let text = |p: &str| info.param_value(p).map_or(String::new(), |v| v.str().trim().to_string());
    let topic = text("topic");
    if topic.is_empty() {
        return Err(format!("{} needs a topic: topic = \"/name\"", info.kind));
    }
    crate::topic_name(&topic)?;
    let type_name = text("type");
    if type_name.is_empty() {
        return Err(format!("{} needs a message type: type = \"geometry_msgs/msg/Twist\" (known: {})", info.kind, type_names().join(", ")));
    }
    let ty = messages::find(&type_name)?;
    let qos = crate::qos::by_name(&text("qos"))?;
    let mut names: Vec<String> = text("names").split([',', ' ', '\t']).filter(|s| !s.is_empty()).map(String::from).collect();
    let mut n = 0;
    if ty.sized() {
        let size = info.integer("size");
        let robot = crate::robot_model();
        n = match (size, names.len(), &robot) {
            (s, _, _) if s > 0 => s as usize,
            (0, k, _) if k > 0 => k,
            (0, _, Some(model)) => model.nq(),
            _ => return Err(format!("{type_name} on {topic} has arrays: give their size (size = 6) or the joints' names (names = \"A1,A2,…\"); there is no robot to take the joint count from")),
        };
        if !names.is_empty() && names.len() != n {
            return Err(format!("names gives {} joints but size is {n}", names.len()));
        }
        if names.is_empty() && ty.joints() {
            if let Some(model) = robot.filter(|m| m.nq() == n) {
                names = crate::robot::joint_state_names(&model);
            }
        }
    }
    if !ty.joints() {
        names.clear();
    }
    Ok(Topic { topic, ty, qos, meta: Meta { n, names, frame_id } })
}

/// A component's endpoint on the bridge, removed (and waited for) when it goes.
struct Link {
    bridge: Arc<Bridge>,
    id: EndpointId,
}

impl Link {
    /// Removes the endpoint; returns once the bridge published what it still held.
    fn close(self) {
        if let Err(e) = self.bridge.remove_and_wait(self.id) {
            log::warn!("ROS 2: {e}");
        }
    }
}
