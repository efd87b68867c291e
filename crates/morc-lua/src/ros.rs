//! `morc.ros`: morc as a ROS 2 participant from Lua, and what every run gets while it is on:
//! the robot's joint states and links on ROS 2 topics. Also registers the component kinds
//! `ros.publish` and `ros.subscribe` (crates/morc-ros/src/pubsub.rs).

use std::sync::atomic::Ordering;

use mlua::{Lua, Table};
use morc_kernel::{AttachmentSpec, Engine};

const DOC_START: &str = "morc.ros.start([options]): joins ROS 2 (no ROS install needed) as the node /morc (options.name, \
options.namespace) in the domain ROS_DOMAIN_ID names (options.domain). While it is on, every run of a robot publishes \
/joint_states (sensor_msgs/msg/JointState), /tf (tf2_msgs/msg/TFMessage, the URDF's links), and, latched, /tf_static and \
/robot_description (std_msgs/msg/String, the URDF), so RViz or Foxglove shows the arm move. options.rate: joint states per \
second (default 100). Returns a line saying who morc is on ROS 2. `morc --ros` starts it for a whole program. Under `morc check` it joins no network (topic components run without it, their subscriptions silent).\n  \
morc.ros.start(options?: { name?: string, namespace?: string, domain?: integer, rate?: number }) → string";
const DOC_TRAJECTORY_SERVER: &str = "morc.ros.trajectory_server([options]): the FollowJointTrajectory action server's program side \
(control_msgs/action/FollowJointTrajectory, what MoveIt's controller manager calls) on options.action (default \
/joint_trajectory_controller/follow_joint_trajectory) for the robot the engine drives (options.robot). Its methods take one goal at \
a time: next(timeout_s) → { id, points } or nil; plan(q) with the robot's position (SI) → the joint_trajectory parameters \
{ times, positions, velocities, accelerations, duration, path_tolerance, goal_tolerance, goal_time_tolerance } or nil, \
error code name, reason (the goal is then rejected); accept(); reject(reason); cancel_requested(); finish(end, code, text) \
with end \"succeeded\", \"aborted\" or \"canceled\". While an accepted goal runs, its runs send feedback and a cancel \
stops them (the robot holds). morc.ros.follow_joint_trajectory serves goals with it.\n  \
morc.ros.trajectory_server(options?: { action?: string, robot?: robot }) → trajectory_server\n  \
trajectory_server:next(timeout?: number) → { id: string, points: integer }?\n  \
trajectory_server:plan(q: number[]) → table?, string?, string?\n  \
trajectory_server:accept()\n  \
trajectory_server:reject(reason: string)\n  \
trajectory_server:cancel_requested() → boolean\n  \
trajectory_server:finish(ending: string, code: string, text?: string)\n  \
trajectory_server.action: string";
const DOC_WAIT: &str = "morc.ros.wait_for_subscribers(topic, [count], [timeout]): waits until count (default 1) subscriptions \
to topic (\"/joint_states\") are in the ROS 2 graph, at most timeout seconds (default 10) of wall time; true when they are, false \
when the time ran out. For a program that must not move before a viewer or a recorder listens. Ctrl-C stops the wait.\n  \
morc.ros.wait_for_subscribers(topic: string, count?: integer, timeout?: number) → boolean";
const DOC_FOLLOW: &str = "morc.ros.follow_joint_trajectory([options]): MoveIt drives morc. Serves \
control_msgs/action/FollowJointTrajectory goals on options.action (default /joint_trajectory_controller/follow_joint_trajectory, \
where MoveIt's moveit_controllers.yaml points a joint_trajectory_controller) for the engine's robot: each goal is checked before \
the robot moves (its joints must be the robot's, its points timed and within the joints' position, velocity and acceleration \
limits, a first point at time 0 where the robot is) and rejected with the action's error code otherwise; an accepted goal runs \
as a monitored motion through its points at their times, with feedback; a cancel request, Ctrl-C or hold stops it and the robot \
holds. The result: SUCCESSFUL, PATH_TOLERANCE_VIOLATED (stopped on the way) or GOAL_TOLERANCE_VIOLATED. Serves until \
options.goals goals came, or none came for options.timeout seconds, or Ctrl-C; returns each goal's { id, status, code, text }. \
Needs morc on ROS 2 (morc --ros).\n  \
morc.ros.follow_joint_trajectory(options?: { action?: string, robot?: robot, goals?: integer, timeout?: number, log?: fun(line: string) }) → { id: string, status: string, code: string, text: string }[]";
const DOC_TOPIC_CONTROL: &str = "morc.ros.topic_based_control([options]): morc as a ros2_control system's hardware, by the \
topic_based_ros2_control convention (its TopicBasedSystem plugin): takes the joints' commands as sensor_msgs/msg/JointState on \
options.commands (default /robot_joint_commands; joints by name, positions in rad or m) and publishes the robot's position, \
velocity and effort as sensor_msgs/msg/JointState on options.states (default /robot_joint_states; options.rate per second, \
default every step). The commands are a target: the robot holds until the first comes, then follows from sample to sample \
within its velocity and acceleration limits (kind joint_stream), monitored like every motion (options.max_error, °, default 2). \
A command outside a joint's limits or more than options.max_jump (°, default 5; mm for prismatic joints) from the robot stops \
the run naming the joint: in the plugin set use_initial_states_as_initial_commands to true, or it sends zeros first. Runs until \
Ctrl-C, a fault, options.duration seconds or no command for options.idle seconds (the robot standing at the last), then the \
robot holds; returns the run's result. Needs morc on ROS 2 (morc --ros).\n  \
morc.ros.topic_based_control(options?: { robot?: robot, commands?: string, states?: string, rate?: number, max_jump?: number, max_error?: number, duration?: number, idle?: number, log?: fun(line: string) }) → run_result";
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

/// Registers `morc.ros` with its documentation, and the component kinds `ros.publish` and
/// `ros.subscribe`.
pub fn install(lua: &Lua, morc: &Table) -> mlua::Result<()> {
    crate::kinds::with(lua, |k| morc_ros::pubsub::register(&mut k.registry)).map_err(mlua::Error::runtime)?;
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
            if lua.app_data_ref::<crate::CheckOnly>().is_some() && morc_ros::bridge().is_none() {
                // morc check joins no network; topic components run without it.
                return Ok("morc check: not joining ROS 2 (topic components run without it, their subscriptions silent)".to_string());
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
        "wait_for_subscribers",
        lua.create_function(|lua, (topic, count, timeout): (String, Option<usize>, Option<f64>)| {
            let origin = crate::origin::caller(lua);
            if morc_ros::bridge().is_none() {
                return Err(mlua::Error::runtime(format!("{origin}: morc.ros.wait_for_subscribers: morc is not on ROS 2: run `morc --ros …` or call morc.ros.start() first")));
            }
            let name = if topic.starts_with('/') { topic } else { format!("/{topic}") };
            let timeout = timeout.unwrap_or(10.0);
            if !(timeout >= 0.0 && timeout.is_finite()) {
                return Err(mlua::Error::runtime(format!("{origin}: morc.ros.wait_for_subscribers: timeout must be seconds ≥ 0, got {timeout}")));
            }
            let end = std::time::Instant::now() + std::time::Duration::from_secs_f64(timeout);
            let count = count.unwrap_or(1);
            loop {
                if morc_ros::subscription_count(&name) >= count {
                    return Ok(true);
                }
                if crate::interrupt::pending() {
                    return Err(crate::interrupt::error_in(lua));
                }
                if std::time::Instant::now() >= end {
                    return Ok(false);
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
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
    ros.set(
        "trajectory_server",
        lua.create_function(|lua, options: Option<Table>| {
            let origin = crate::origin::caller(lua);
            let fail = |e: String| mlua::Error::runtime(format!("{origin}: morc.ros.trajectory_server: {e}"));
            let mut action = morc_ros::trajectory_action::DEFAULT_ACTION.to_string();
            let mut robot = lua.globals().get::<Table>("morc")?.get::<mlua::Value>("current_robot")?;
            if let Some(options) = options {
                for pair in options.pairs::<String, mlua::Value>() {
                    let (key, value) = pair?;
                    match key.as_str() {
                        "action" => action = lua.unpack::<String>(value).map_err(|_| fail("action must be a string".into()))?,
                        "robot" => robot = value,
                        k => return Err(fail(morc_kernel::names::unknown("option", k, "in its options", &["action", "robot"]))),
                    }
                }
            }
            let robot = match robot {
                mlua::Value::UserData(ud) => ud.borrow::<crate::robot::LuaRobot>().map(|r| r.0.clone()).map_err(|_| fail("robot must be a robot".into()))?,
                _ => return Err(fail("no robot: morc.use_robot(require \"robots.kr16\") first, or give options.robot".into())),
            };
            crate::ros_trajectory::new_server(robot, &action).map_err(fail)
        })?,
    )?;
    ros.set("follow_joint_trajectory", lua.load("return require('stdlib.ros.follow_joint_trajectory')(...)").set_name("@morc/ros").into_function()?)?;
    ros.set("topic_based_control", lua.load("return require('stdlib.ros.topic_based_control')(...)").set_name("@morc/ros").into_function()?)?;
    morc.set("ros", ros)?;
    lua.load(format!("if morc.doc then morc.doc(morc.ros.start, {DOC_START:?}); morc.doc(morc.ros.stop, {DOC_STOP:?}); morc.doc(morc.ros.status, {DOC_STATUS:?}); morc.doc(morc.ros.wait_for_subscribers, {DOC_WAIT:?}); morc.doc(morc.ros.trajectory_server, {DOC_TRAJECTORY_SERVER:?}); morc.doc(morc.ros.follow_joint_trajectory, {DOC_FOLLOW:?}); morc.doc(morc.ros.topic_based_control, {DOC_TOPIC_CONTROL:?}) end"))
        .set_name("@morc/ros")
        .exec()
}

/// A run's attachments as ROS 2 needs them: while morc is on ROS 2, a tap of the robot's joints
/// on every run of the engine's robot (its latched topics sent when the robot is new).
pub fn for_ros(lua: &Lua, engine: &Engine, attachments: &mut Vec<AttachmentSpec>) -> mlua::Result<()> {
    attachments.retain(|a| a.kind != morc_ros::robot::TAP_NAME);
    crate::ros_trajectory::for_goal(lua, engine, attachments);
    if morc_ros::bridge().is_none() && !morc_ros::check_only() {
        return Ok(());
    }
    let model = match lua.globals().get::<Table>("morc")?.get::<mlua::Value>("current_robot")? {
        mlua::Value::UserData(ud) => ud.borrow::<crate::robot::LuaRobot>().ok().map(|r| r.0.model.clone()),
        _ => None,
    };
    let Some(model) = model else { return Ok(()) };
    morc_ros::set_robot(Some(model.clone())).map_err(mlua::Error::runtime)?;
    if let Some(stream) = morc_ros::robot_stream(&model) {
        // `~/state` says what the operator page says.
        let page = crate::live::live(lua).page_handle();
        stream.set_state(Some(std::sync::Arc::new(move || page.robot_state())));
    }
    if morc_ros::bridge().is_none() {
        // morc check: the topic components take their joints from the robot; nothing goes out.
        return Ok(());
    }
    let rate = *RATE.lock().unwrap_or_else(|p| p.into_inner());
    attachments.push(AttachmentSpec {
        name: morc_ros::robot::TAP_NAME.into(),
        kind: morc_ros::robot::TAP_NAME.into(),
        attach: morc_ros::robot::attachment(model, rate),
        origin: morc_kernel::Origin::default(),
    });
    Ok(())
}
