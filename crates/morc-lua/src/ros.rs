//! `morc.ros`: morc as a ROS 2 participant from Lua, and what every run gets while it is on:
//! the robot's joint states and links on ROS 2 topics.

use std::sync::atomic::Ordering;

use mlua::{Lua, Table};
use morc_kernel::{AttachmentSpec, Engine};

const DOC_START: &str = "morc.ros.start([options]): joins ROS 2 (no ROS install needed) as the node /morc (options.name, \
options.namespace) in the domain ROS_DOMAIN_ID names (options.domain). While it is on, every run of a robot publishes \
/joint_states (sensor_msgs/msg/JointState), /tf (tf2_msgs/msg/TFMessage, the URDF's links), and, latched, /tf_static and \
/robot_description (std_msgs/msg/String, the URDF), so RViz or Foxglove shows the arm move. options.rate: joint states per \
second (default 100). Returns a line saying who morc is on ROS 2. `morc --ros` starts it for a whole program.\n  \
morc.ros.start(options?: { name?: string, namespace?: string, domain?: integer, rate?: number }) → string";
const DOC_STOP: &str = "morc.ros.stop(): leaves ROS 2; the node and its topics go.\n  morc.ros.stop()";
const DOC_STATUS: &str = "morc.ros.status(): nil when morc is not on ROS 2, else { node, domain, published, received, dropped } \
(messages since it started; dropped: rows a full queue refused and messages a peer's full window refused).\n  \
morc.ros.status() → { node: string, domain: integer, published: integer, received: integer, dropped: integer }?";

/// Joint states per second, as set by `morc.ros.start { rate = … }`.
static RATE: std::sync::Mutex<f64> = std::sync::Mutex::new(morc_ros::robot::DEFAULT_RATE);

/// Joins ROS 2 with `options` (name, namespace, domain, rate), as `morc.ros.start` and `morc --ros` do.
pub fn start(name: Option<String>, namespace: Option<String>, domain: Option<u16>, rate: Option<f64>) -> Result<String, String> {
    let domain_id = match domain {
        Some(d) if d > 232 => return Err(format!("ROS 2 domain {d}: give a domain from 0 to 232")),
        Some(d) => d,
        None => morc_ros::domain_from_env()?,
    };
    if let Some(r) = rate {
        if !(r > 0.0 && r.is_finite()) {
            return Err(format!("rate must be joint states per second, more than 0; got {r}"));
        }
        *RATE.lock().unwrap_or_else(|p| p.into_inner()) = r;
    }
    let options = morc_ros::BridgeOptions {
        domain_id,
        namespace: namespace.unwrap_or_else(|| "/".into()),
        name: name.unwrap_or_else(|| morc_ros::DEFAULT_NODE_NAME.into()),
        parameters: None,
    };
    morc_ros::start(&options)
}

/// Registers `morc.ros` with its documentation.
pub fn install(lua: &Lua, morc: &Table) -> mlua::Result<()> {
    let ros = lua.create_table()?;
    ros.set(
        "start",
        lua.create_function(|lua, options: Option<Table>| {
            let origin = crate::origin::caller(lua);
            let fail = |e: String| mlua::Error::runtime(format!("{origin}: morc.ros.start: {e}"));
            let (mut name, mut namespace, mut domain, mut rate) = (None, None, None, None);
            if let Some(options) = options {
                for pair in options.pairs::<String, mlua::Value>() {
                    let (key, value) = pair?;
                    match key.as_str() {
                        "name" => name = Some(lua.unpack::<String>(value).map_err(|_| fail("name must be a string".into()))?),
                        "namespace" => namespace = Some(lua.unpack::<String>(value).map_err(|_| fail("namespace must be a string".into()))?),
                        "domain" => domain = Some(lua.unpack::<u16>(value).map_err(|_| fail("domain must be an integer from 0 to 232".into()))?),
                        "rate" => rate = Some(lua.unpack::<f64>(value).map_err(|_| fail("rate must be a number".into()))?),
                        k => return Err(fail(morc_kernel::names::unknown("option", k, "in its options", &["name", "namespace", "domain", "rate"]))),
                    }
                }
            }
            start(name, namespace, domain, rate).map_err(fail)
        })?,
    )?;
    ros.set(
        "stop",
        lua.create_function(|_, ()| {
            morc_ros::stop();
            Ok(())
        })?,
    )?;
    ros.set(
        "status",
        lua.create_function(|lua, ()| {
            let Some(b) = morc_ros::bridge() else { return Ok(mlua::Value::Nil) };
            let t = lua.create_table()?;
            t.set("node", b.node_name.clone())?;
            t.set("domain", b.domain_id)?;
            t.set("published", b.counts.published.load(Ordering::Relaxed))?;
            t.set("received", b.counts.received.load(Ordering::Relaxed))?;
            t.set("dropped", b.counts.dropped.load(Ordering::Relaxed))?;
            Ok(mlua::Value::Table(t))
        })?,
    )?;
    morc.set("ros", ros)?;
    lua.load(format!("if morc.doc then morc.doc(morc.ros.start, {DOC_START:?}); morc.doc(morc.ros.stop, {DOC_STOP:?}); morc.doc(morc.ros.status, {DOC_STATUS:?}) end"))
        .set_name("@morc/ros")
        .exec()
}

/// A run's attachments as ROS 2 needs them: while morc is on ROS 2, a tap of the robot's joints
/// on every run of the engine's robot (its latched topics sent when the robot is new).
pub fn for_ros(lua: &Lua, _engine: &Engine, attachments: &mut Vec<AttachmentSpec>) -> mlua::Result<()> {
    attachments.retain(|a| a.kind != morc_ros::robot::TAP_NAME);
    if morc_ros::bridge().is_none() {
        return Ok(());
    }
    let model = match lua.globals().get::<Table>("morc")?.get::<mlua::Value>("current_robot")? {
        mlua::Value::UserData(ud) => ud.borrow::<crate::robot::LuaRobot>().ok().map(|r| r.0.model.clone()),
        _ => None,
    };
    let Some(model) = model else { return Ok(()) };
    morc_ros::set_robot(Some(model.clone())).map_err(mlua::Error::runtime)?;
    let rate = *RATE.lock().unwrap_or_else(|p| p.into_inner());
    attachments.push(AttachmentSpec {
        name: morc_ros::robot::TAP_NAME.into(),
        kind: morc_ros::robot::TAP_NAME.into(),
        attach: morc_ros::robot::attachment(model, rate),
        origin: morc_kernel::Origin::default(),
    });
    Ok(())
}
