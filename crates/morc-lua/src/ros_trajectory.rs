//! `morc.ros.trajectory_server`: the program's side of the FollowJointTrajectory action server
//! (`morc_ros::trajectory_action`). It takes one goal at a time, checks it against the robot
//! (joint names, points, header stamp, start state, position/velocity/acceleration limits),
//! rejects what fails with the action's error code and hands the rest to Lua as the parameters
//! of a `joint_trajectory` component. `stdlib/ros/follow_joint_trajectory.lua` serves goals with
//! it; while an accepted goal runs, [`for_goal`] puts its feedback tap and cancel on every run.

use std::sync::Arc;
use std::time::Duration;

use mlua::{Lua, Table, UserData, UserDataMethods};
use morc_kernel::{AttachmentSpec, Engine};
use morc_motion::{TimedPoint, TimedTrajectory};
use morc_robot::components::joint_trajectory::{check_limits, start_tolerance};
use morc_robot::Robot;
use morc_ros::trajectory_action::{feedback, ExecutingGoal, GoalEnd, ReceivedGoal, TrajectoryServer};
use morc_ros_msgs::control_msgs::{follow_joint_trajectory as code, FollowJointTrajectoryGoal, JointTolerance};

/// How far in the future a goal's header stamp may start it.
const LONGEST_DELAY: f64 = 60.0;

/// The goal that runs, for [`for_goal`] (Lua app data while one runs).
struct RunningGoal(Arc<ExecutingGoal>);

/// A goal being decided: what came and the robot's joint index of each of its joints (or why
/// its joints are not the robot's).
struct Pending {
    goal: ReceivedGoal,
    order: Result<Vec<usize>, String>,
}

/// `morc.ros.trajectory_server` userdata.
pub struct LuaTrajectoryServer {
    server: TrajectoryServer,
    robot: Arc<Robot>,
    pending: Option<Pending>,
    running: Option<Arc<ExecutingGoal>>,
}

/// The codes by the names the action gives them.
fn code_named(name: &str) -> Option<i32> {
    Some(match name {
        "SUCCESSFUL" => code::SUCCESSFUL,
        "INVALID_GOAL" => code::INVALID_GOAL,
        "INVALID_JOINTS" => code::INVALID_JOINTS,
        "OLD_HEADER_TIMESTAMP" => code::OLD_HEADER_TIMESTAMP,
        "PATH_TOLERANCE_VIOLATED" => code::PATH_TOLERANCE_VIOLATED,
        "GOAL_TOLERANCE_VIOLATED" => code::GOAL_TOLERANCE_VIOLATED,
        _ => return None,
    })
}

const CODE_NAMES: &[&str] = &["SUCCESSFUL", "INVALID_GOAL", "INVALID_JOINTS", "OLD_HEADER_TIMESTAMP", "PATH_TOLERANCE_VIOLATED", "GOAL_TOLERANCE_VIOLATED"];

/// The robot's joints as ROS 2 names them: the URDF's joints of `/robot_description`, the names
/// of `/joint_states`.
fn ros_joint_names(robot: &Robot) -> Vec<String> {
    morc_ros::robot::joint_state_names(&robot.model)
}

/// Where each of the goal's joints is among the robot's: every robot joint exactly once.
fn joint_order(robot: &Robot, goal: &FollowJointTrajectoryGoal) -> Result<Vec<usize>, String> {
    let names = &goal.trajectory.joint_names;
    let ros_names = ros_joint_names(robot);
    let robot_names: Vec<&str> = ros_names.iter().map(String::as_str).collect();
    if !goal.multi_dof_trajectory.joint_names.is_empty() {
        return Err(format!("it moves multi-DOF joints {:?}; robot '{}' has none", goal.multi_dof_trajectory.joint_names, robot.model.name()));
    }
    let mut order = Vec::with_capacity(names.len());
    for name in names {
        match robot_names.iter().position(|n| n == name) {
            Some(j) if order.contains(&j) => return Err(format!("it names joint {name} twice")),
            Some(j) => order.push(j),
            None => return Err(format!("joint {name} is not one of robot '{}': {}", robot.model.name(), robot_names.join(", "))),
        }
    }
    if order.len() != robot_names.len() {
        let missing: Vec<&str> = robot_names.iter().enumerate().filter(|(j, _)| !order.contains(j)).map(|(_, n)| *n).collect();
        return Err(format!("it leaves out joint(s) {}: a goal moves all of robot '{}''s joints", missing.join(", "), robot.model.name()));
    }
    Ok(order)
}

/// Per robot joint, the position tolerance `tolerances` gives it (0: the server's default, −1: none).
fn tolerances(robot: &Robot, tolerances: &[JointTolerance]) -> Result<Vec<f64>, String> {
    let mut out = vec![0.0; robot.dof()];
    let names = ros_joint_names(robot);
    for t in tolerances {
        let Some(j) = names.iter().position(|n| *n == t.name) else {
            return Err(format!("a tolerance names joint {}, which robot '{}' does not have", t.name, robot.model.name()));
        };
        if !t.position.is_finite() || (t.position < 0.0 && t.position != -1.0) {
            return Err(format!("joint {}'s position tolerance is {}: give one ≥ 0, or −1 for none", t.name, t.position));
        }
        out[j] = t.position;
    }
    Ok(out)
}

impl LuaTrajectoryServer {
    /// The joint_trajectory parameters of the pending goal from where the robot is (`q`, SI), or
    /// (error code, why).
    fn plan(&self, q: &[f64]) -> Result<Planned, (i32, String)> {
        let Some(Pending { goal: received, order }) = &self.pending else { return Err((code::INVALID_GOAL, "no goal is waiting: call next() first".into())) };
        let order = order.as_ref().map_err(|why| (code::INVALID_JOINTS, why.clone()))?;
        let (robot, n) = (&self.robot, self.robot.dof());
        let goal = &received.goal;
        if q.len() != n {
            return Err((code::INVALID_GOAL, format!("the robot's position has {} joints, the robot {n}", q.len())));
        }
        let points = &goal.trajectory.points;
        if points.is_empty() {
            return Err((code::INVALID_GOAL, "the trajectory has no points".into()));
        }
        // A stamp of 0 starts it now; one in the future waits that long at the start; one so old
        // that the whole trajectory is over is refused, as joint_trajectory_controller refuses it.
        let last = points.last().map_or(0.0, |p| p.time_from_start.as_secs_f64());
        let stamp = goal.trajectory.header.stamp.as_nanos();
        let delay = if stamp == 0 { 0.0 } else { (stamp as f64 - received.received as f64) * 1e-9 };
        if delay + last < 0.0 {
            return Err((code::OLD_HEADER_TIMESTAMP, format!("its header stamp puts its end {:.3} s in the past", -(delay + last))));
        }
        if delay > LONGEST_DELAY {
            return Err((code::INVALID_GOAL, format!("its header stamp starts it {delay:.1} s from now; at most {LONGEST_DELAY} s")));
        }
        let delay = delay.max(0.0);
        let given = |v: &Vec<f64>| !v.is_empty();
        for (what, count) in [("velocities", points.iter().filter(|p| given(&p.velocities)).count()), ("accelerations", points.iter().filter(|p| given(&p.accelerations)).count())] {
            if count != 0 && count != points.len() {
                return Err((code::INVALID_GOAL, format!("{count} of its {} points give {what}: give them for every point or none", points.len())));
            }
        }
        let reorder = |v: &Vec<f64>, what: &str, k: usize| -> Result<Vec<f64>, (i32, String)> {
            if v.is_empty() {
                return Ok(Vec::new());
            }
            if v.len() != order.len() {
                return Err((code::INVALID_GOAL, format!("point {} has {} {what} for {} joints", k + 1, v.len(), order.len())));
            }
            let mut out = vec![0.0; n];
            for (i, &j) in order.iter().enumerate() {
                out[j] = v[i];
            }
            Ok(out)
        };
        let mut timed = Vec::with_capacity(points.len() + 1);
        for (k, p) in points.iter().enumerate() {
            timed.push(TimedPoint {
                time: p.time_from_start.as_secs_f64() + delay,
                positions: reorder(&p.positions, "positions", k)?,
                velocities: reorder(&p.velocities, "velocities", k)?,
                accelerations: reorder(&p.accelerations, "accelerations", k)?,
            });
        }
        if timed[0].time > 0.0 {
            // From where the robot is, at rest, as joint_trajectory_controller starts a goal.
            let rest = |v: &Vec<f64>| if v.is_empty() { Vec::new() } else { vec![0.0; n] };
            timed.insert(0, TimedPoint { time: 0.0, positions: q.to_vec(), velocities: rest(&timed[0].velocities), accelerations: rest(&timed[0].accelerations) });
        } else if let Some(j) = (0..n).find(|&j| timed[0].positions.get(j).is_some_and(|x| (x - q[j]).abs() > start_tolerance(robot.is_prismatic(j)))) {
            return Err((
                code::INVALID_GOAL,
                format!(
                    "it starts with joint {} at {}, the robot is at {}: a first point at time 0 must be where the robot is",
                    ros_joint_names(robot)[j],
                    robot.show(j, timed[0].positions[j], 2),
                    robot.show(j, q[j], 2)
                ),
            ));
        }
        let trajectory = TimedTrajectory::new(n, &timed).map_err(|e| (code::INVALID_GOAL, e))?;
        check_limits(robot, &trajectory).map_err(|e| (code::INVALID_GOAL, e))?;
        let path = tolerances(robot, &goal.path_tolerance).map_err(|e| (code::INVALID_GOAL, e))?;
        let at_goal = tolerances(robot, &goal.goal_tolerance).map_err(|e| (code::INVALID_GOAL, e))?;
        Ok(Planned {
            duration: trajectory.duration(),
            points: timed,
            path_tolerance: path,
            goal_tolerance: at_goal,
            goal_time_tolerance: goal.goal_time_tolerance.as_secs_f64(),
        })
    }
}

/// A goal planned: the points of its `joint_trajectory` and its tolerances, per robot joint.
struct Planned {
    points: Vec<TimedPoint>,
    duration: f64,
    path_tolerance: Vec<f64>,
    goal_tolerance: Vec<f64>,
    goal_time_tolerance: f64,
}

impl Planned {
    /// As Lua gets it: the `joint_trajectory` parameters (times, positions, velocities,
    /// accelerations; SI) beside duration and the tolerances.
    fn table(&self, lua: &Lua) -> mlua::Result<Table> {
        let flat = |f: &dyn Fn(&TimedPoint) -> &Vec<f64>| -> Vec<f64> { self.points.iter().flat_map(|p| f(p).iter().copied()).collect() };
        let t = lua.create_table()?;
        t.set("times", self.points.iter().map(|p| p.time).collect::<Vec<f64>>())?;
        t.set("positions", flat(&|p| &p.positions))?;
        t.set("velocities", flat(&|p| &p.velocities))?;
        t.set("accelerations", flat(&|p| &p.accelerations))?;
        t.set("duration", self.duration)?;
        t.set("path_tolerance", self.path_tolerance.clone())?;
        t.set("goal_tolerance", self.goal_tolerance.clone())?;
        t.set("goal_time_tolerance", self.goal_time_tolerance)?;
        Ok(t)
    }
}

impl UserData for LuaTrajectoryServer {
    fn add_fields<F: mlua::UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("action", |_, this| Ok(this.server.action.clone()));
    }

    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method_mut("next", |lua, this, timeout: Option<f64>| {
            if lua.app_data_ref::<crate::engine::CheckOnly>().is_some() {
                return Ok(mlua::Value::Nil); // morc check runs the program without serving
            }
            if this.pending.is_some() || this.running.is_some() {
                return Err(mlua::Error::runtime("trajectory_server:next(): accept or reject the goal taken before, and finish it"));
            }
            let end = std::time::Instant::now() + Duration::from_secs_f64(timeout.unwrap_or(f64::INFINITY).clamp(0.0, 1e9));
            loop {
                if crate::interrupt::pending() {
                    return Err(crate::interrupt::error_in(lua));
                }
                let slice = end.saturating_duration_since(std::time::Instant::now()).min(Duration::from_millis(50));
                if let Some(goal) = this.server.next(slice) {
                    let t = lua.create_table()?;
                    t.set("id", goal.id.iter().map(|b| format!("{b:02x}")).collect::<String>())?;
                    t.set("points", goal.goal.trajectory.points.len())?;
                    this.pending = Some(Pending { order: joint_order(&this.robot, &goal.goal), goal });
                    return Ok(mlua::Value::Table(t));
                }
                if std::time::Instant::now() >= end {
                    return Ok(mlua::Value::Nil);
                }
            }
        });
        methods.add_method_mut("plan", |lua, this, q: Vec<f64>| match this.plan(&q) {
            Ok(planned) => Ok((mlua::Value::Table(planned.table(lua)?), mlua::Value::Nil, mlua::Value::Nil)),
            Err((c, why)) => {
                let name = CODE_NAMES.iter().find(|n| code_named(n) == Some(c)).copied().unwrap_or("INVALID_GOAL");
                if let Some(p) = this.pending.take() {
                    this.server.reject(p.goal.id, &format!("{name}: {why}"));
                }
                Ok((mlua::Value::Nil, mlua::Value::String(lua.create_string(name)?), mlua::Value::String(lua.create_string(&why)?)))
            }
        });
        methods.add_method_mut("accept", |lua, this, ()| {
            let Some(p) = this.pending.take() else { return Err(mlua::Error::runtime("trajectory_server:accept(): no goal is waiting")) };
            let goal = this.server.accept(p.goal.id);
            lua.set_app_data(RunningGoal(goal.clone()));
            this.running = Some(goal);
            Ok(())
        });
        methods.add_method_mut("reject", |_, this, why: String| {
            let Some(p) = this.pending.take() else { return Err(mlua::Error::runtime("trajectory_server:reject(): no goal is waiting")) };
            this.server.reject(p.goal.id, &why);
            Ok(())
        });
        methods.add_method("cancel_requested", |_, this, ()| Ok(this.running.as_ref().is_some_and(|g| g.cancel_requested())));
        methods.add_method_mut("finish", |lua, this, (end, name, text): (String, String, Option<String>)| {
            let Some(goal) = this.running.take() else { return Err(mlua::Error::runtime("trajectory_server:finish(): no goal runs")) };
            let end = match end.as_str() {
                "succeeded" => GoalEnd::Succeeded,
                "aborted" => GoalEnd::Aborted,
                "canceled" => GoalEnd::Canceled,
                other => return Err(mlua::Error::runtime(morc_kernel::names::unknown("goal end", other, "in trajectory_server:finish", &["succeeded", "aborted", "canceled"]))),
            };
            let Some(c) = code_named(&name) else { return Err(mlua::Error::runtime(morc_kernel::names::unknown("error code", &name, "in trajectory_server:finish", CODE_NAMES))) };
            this.server.finish(goal.id, end, c, text.unwrap_or_default());
            lua.remove_app_data::<RunningGoal>();
            Ok(())
        });
        methods.add_meta_method("__tostring", |_, this, ()| Ok(format!("FollowJointTrajectory server on {}", this.server.action)));
    }
}

/// `morc.ros.trajectory_server(action, robot)`: serves `action` for `robot`.
pub fn new_server(robot: Arc<Robot>, action: &str) -> Result<LuaTrajectoryServer, String> {
    let joints = ros_joint_names(&robot);
    Ok(LuaTrajectoryServer { server: TrajectoryServer::start(action, joints)?, robot, pending: None, running: None })
}

/// While a goal runs, every run gets its feedback tap, and a cancel request stops the run.
pub fn for_goal(lua: &Lua, engine: &Engine, attachments: &mut Vec<AttachmentSpec>) {
    attachments.retain(|a| a.kind != feedback::TAP_NAME);
    let Some(goal) = lua.app_data_ref::<RunningGoal>().map(|g| g.0.clone()) else { return };
    goal.set_canceller(engine.canceller());
    attachments.push(AttachmentSpec { name: feedback::TAP_NAME.into(), kind: feedback::TAP_NAME.into(), attach: feedback::attachment(goal), origin: morc_kernel::Origin::default() });
}
