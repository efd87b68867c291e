//! morc as a ROS 2 participant, with no ROS installation: a pure-Rust DDS participant
//! (ros2-client on RustDDS) that ROS 2 nodes on Fast DDS or Cyclone DDS see as the node `/morc`.
//!
//! Nothing on the real-time path talks DDS. The participant lives on the [`bridge`]'s thread;
//! components on the stepping threads hand it fixed-size rows through preallocated lock-free
//! rings (the live view's and the recorder's pattern) and read what subscriptions received from
//! slots. A full ring drops the row and counts it.
//!
//! While the bridge runs, every run of a robot's assembly publishes the robot ([`robot`]):
//! ```text
//! /joint_states        sensor_msgs/msg/JointState   default QoS        names as the robot's joints, SI units
//! /tf                  tf2_msgs/msg/TFMessage       default QoS, 100   each moving joint's child link in its parent link
//! /tf_static           tf2_msgs/msg/TFMessage       transient local    the fixed joints (tool and flange frames)
//! /robot_description   std_msgs/msg/String          transient local    the URDF those links belong to
//! ```
//! Stamps are UTC: the wall time a run starts at plus its run time.
//!
//! Assemblies put their own signals on topics and read topics with the component kinds
//! `ros.publish` and `ros.subscribe` ([`pubsub`]).
//!
//! Topics are named as ROS 2 names them (`/joint_states` is the DDS topic `rt/joint_states`, of
//! type `sensor_msgs::msg::dds_::JointState_`); the domain is `ROS_DOMAIN_ID` (0 when unset).

#![warn(missing_docs)]

pub mod bridge;
pub mod fmu_node;
pub mod pubsub;
pub mod qos;
pub mod robot;
pub mod trajectory_action;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use morc_model::Model;
use morc_ros_msgs::RosMessage;
use ros2_client::{MessageTypeName, Name, Node, Publisher, QosProfile, Subscription};

pub use bridge::{Bridge, BridgeOptions, NodeParameters, ParameterHook};

/// The node's name when none is given.
pub const DEFAULT_NODE_NAME: &str = "morc";

static BRIDGE: Mutex<Option<Arc<Bridge>>> = Mutex::new(None);

/// Set while `morc check` runs a program: topic components work without a bridge.
static CHECK_ONLY: AtomicBool = AtomicBool::new(false);

/// Under `morc check` (`on`), a program's `ros.publish` and `ros.subscribe` are configured and
/// stepped without joining ROS 2 (a check touches no network): what they publish goes nowhere and
/// their subscriptions never receive. Otherwise they need the bridge.
pub fn set_check_only(on: bool) {
    CHECK_ONLY.store(on, Ordering::Relaxed);
}

/// Whether topic components run without a network ([`set_check_only`]).
pub fn check_only() -> bool {
    CHECK_ONLY.load(Ordering::Relaxed)
}

/// The running bridge, if morc is on ROS 2.
pub fn bridge() -> Option<Arc<Bridge>> {
    BRIDGE.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// The domain `ROS_DOMAIN_ID` names (0 when it is unset), as ROS 2 reads it.
pub fn domain_from_env() -> Result<u16, String> {
    match std::env::var("ROS_DOMAIN_ID") {
        Err(_) => Ok(0),
        Ok(s) if s.trim().is_empty() => Ok(0),
        Ok(s) => match s.trim().parse::<u16>() {
            // DDS's port arithmetic allows domains 0 to 232 (ROS 2's documentation says so).
            Ok(d) if d <= 232 => Ok(d),
            _ => Err(format!("ROS_DOMAIN_ID is '{s}': give a domain from 0 to 232 (ROS 2 uses 0 to 101 on Linux without port clashes)")),
        },
    }
}

/// Joins ROS 2 as the node `options.name` (a bridge already running is left first), and
/// publishes the robot set with [`set_robot`], if any. Returns a line saying who morc is there.
pub fn start(options: &BridgeOptions) -> Result<String, String> {
    stop();
    let bridge = Arc::new(Bridge::start(options)?);
    let said = format!("on ROS 2 as node {} in domain {}", bridge.node_name, bridge.domain_id);
    *BRIDGE.lock().unwrap_or_else(|p| p.into_inner()) = Some(bridge);
    let model = LATCHED.lock().unwrap_or_else(|p| p.into_inner()).take().map(|(m, _)| m);
    if let Some(model) = model {
        set_robot(Some(model))?;
    }
    Ok(said)
}

/// Leaves ROS 2: the node and its topics go (runs still going keep their taps until they end).
pub fn stop() {
    let taken = BRIDGE.lock().unwrap_or_else(|p| p.into_inner()).take();
    drop(taken);
}

/// The robot whose topics the bridge holds: its endpoint and the stream runs feed.
static LATCHED: Mutex<Option<(Arc<Model>, Option<RobotOnBridge>)>> = Mutex::new(None);

/// The robot's endpoint on the bridge and the stream its runs feed.
type RobotOnBridge = (bridge::EndpointId, Arc<robot::RobotStream>);

/// The robot set with [`set_robot`], if any: the one runs drive (`ros.publish` and
/// `ros.subscribe` take their joints from it when not told otherwise).
pub fn robot_model() -> Option<Arc<Model>> {
    LATCHED.lock().unwrap_or_else(|p| p.into_inner()).as_ref().map(|(m, _)| m.clone())
}

/// Sets the robot runs drive: its `/robot_description` and `/tf_static` go out (latched) and its
/// `/joint_states` and `/tf` publishers are made when it is new; none keeps what was there.
pub fn set_robot(model: Option<Arc<Model>>) -> Result<(), String> {
    let Some(model) = model else { return Ok(()) };
    let mut latched = LATCHED.lock().unwrap_or_else(|p| p.into_inner());
    if latched.as_ref().is_some_and(|(m, on)| Arc::ptr_eq(m, &model) && on.is_some()) {
        return Ok(());
    }
    let Some(bridge) = bridge() else {
        *latched = Some((model, None));
        return Ok(());
    };
    if let Some((_, Some((id, _)))) = latched.take() {
        bridge.remove(id);
    }
    let stream = Arc::new(robot::RobotStream::default());
    let id = bridge.add(robot::robot_topics(model.clone(), stream.clone()))?;
    *latched = Some((model, Some((id, stream))));
    Ok(())
}

/// Where runs of `model` hand the bridge their rows, while it is the robot on ROS 2.
pub fn robot_stream(model: &Arc<Model>) -> Option<Arc<robot::RobotStream>> {
    match LATCHED.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
        Some((m, Some((_, stream)))) if Arc::ptr_eq(m, model) => Some(stream.clone()),
        _ => None,
    }
}

/// How many subscriptions to `topic` (an absolute name, "/joint_states") the participant has
/// discovered in the graph; 0 when morc is not on ROS 2.
pub fn subscription_count(topic: &str) -> usize {
    let topic = topic.to_string();
    bridge().map_or(0, |b| b.with_node(move |node| node.subscription_count(&topic)).unwrap_or(0))
}

/// A ROS 2 topic name ("/joint_states", "cmd_vel", "/arm/cmd") as ros2-client takes it.
pub fn topic_name(topic: &str) -> Result<Name, String> {
    let absolute = if topic.starts_with('/') { topic.to_string() } else { format!("/{topic}") };
    let (namespace, base) = absolute.rsplit_once('/').unwrap_or(("", &absolute));
    let namespace = if namespace.is_empty() { "/" } else { namespace };
    Name::new(namespace, base).map_err(|e| format!("'{topic}' is not a ROS 2 topic name ({e:?}): use letters, digits and '_', parts separated by '/'"))
}

/// A ROS 2 type name (`sensor_msgs/msg/JointState`) as ros2-client takes it.
pub fn message_type_name(type_name: &str) -> Result<MessageTypeName, String> {
    match type_name.split('/').collect::<Vec<_>>().as_slice() {
        [package, "msg", name] if !package.is_empty() && !name.is_empty() => Ok(MessageTypeName::new(package, name)),
        _ => Err(format!("'{type_name}' is not a ROS 2 message type: give package/msg/Type, e.g. std_msgs/msg/Float64")),
    }
}

/// A publisher of `M` on `topic` with `qos`, on the bridge's node.
pub fn publisher<M: RosMessage>(node: &mut Node, topic: &str, qos: QosProfile) -> Result<Publisher<M>, String> {
    let t = node.create_topic(&topic_name(topic)?, message_type_name(M::TYPE_NAME)?, &qos).map_err(|e| format!("ROS 2 topic {topic}: {e:?}"))?;
    node.create_publisher::<M>(&t, None).map_err(|e| format!("ROS 2 publisher on {topic}: {e:?}"))
}

/// A subscription to `M` on `topic` with `qos`, on the bridge's node.
pub fn subscription<M: RosMessage + 'static>(node: &mut Node, topic: &str, qos: QosProfile) -> Result<Subscription<M>, String> {
    let t = node.create_topic(&topic_name(topic)?, message_type_name(M::TYPE_NAME)?, &qos).map_err(|e| format!("ROS 2 topic {topic}: {e:?}"))?;
    node.create_subscription::<M>(&t, None).map_err(|e| format!("ROS 2 subscription to {topic}: {e:?}"))
}

/// The last stamp sent (ns since the Unix epoch): no stamp goes before it.
static LAST_STAMP: AtomicU64 = AtomicU64::new(0);

fn wall_clock_ns() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

/// The wall time a run starting now maps its time 0 to: now, or the last stamp sent when that is
/// later (a run on the virtual clock may go faster than the wall clock).
pub fn run_epoch() -> u64 {
    wall_clock_ns().max(LAST_STAMP.load(Ordering::Relaxed))
}

/// The stamp of run time `t` (s) in the run that started at `epoch`.
pub fn stamp_at(epoch: u64, t: f64) -> u64 {
    let stamp = epoch.saturating_add((t.max(0.0) * 1e9).round() as u64);
    LAST_STAMP.fetch_max(stamp, Ordering::Relaxed);
    stamp
}

/// The stamp of something that happens now.
pub fn stamp_now() -> u64 {
    let now = wall_clock_ns();
    now.max(LAST_STAMP.fetch_max(now, Ordering::Relaxed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_as_ros_2_does() {
        assert!(topic_name("/joint_states").is_ok());
        assert!(topic_name("cmd_vel").is_ok());
        assert!(topic_name("/arm/cmd").is_ok());
        assert!(topic_name("/bad topic").is_err());
        assert!(message_type_name("sensor_msgs/msg/JointState").is_ok());
        assert!(message_type_name("sensor_msgs/JointState").unwrap_err().contains("package/msg/Type"));
    }
}
