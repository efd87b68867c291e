//! A robot's groups (`groups = { left = { joints = { … }, tool = "frame" } }`: the arms of a
//! dual-arm robot), its wrist F/T sensor (`ft = { frame, sim = { … } }`), and the simulated
//! operator's hand (`r:sim_hand { … }`), which the simulated plant follows.

use std::sync::Arc;

use mlua::Table;

use super::model_define::{number, numbers};
use crate::error::{raise, ErrorKind};
use morc_robot::{FtSensor, HandAction, HandScript, HandSegment, Robot, RobotGroup, SimFtSpec};

fn frame_of(robot: &Robot, name: &str, what: &str) -> mlua::Result<usize> {
    robot.model.frame_index(name).ok_or_else(|| {
        let frames: Vec<&str> = robot.model.frames().iter().map(|f| f.name.as_str()).collect();
        mlua::Error::runtime(format!("{what}: the model has no frame '{name}' (it has {})", frames.join(", ")))
    })
}

/// The robot's joints (indices into its joints) that move `frame`: those on its chain from the base.
pub(crate) fn joints_moving(robot: &Robot, frame: usize) -> Vec<usize> {
    let parent = robot.model.frames()[frame].parent_joint;
    (0..robot.dof()).filter(|&i| robot.model.is_ancestor(robot.model.dof_joint(i), parent)).collect()
}

/// `groups = { NAME = { joints = { "J1", … }, tool = "frame" }, … }` → the robot's groups, sorted by name.
pub(crate) fn parse_groups(robot: &Robot, t: &Table) -> mlua::Result<Vec<RobotGroup>> {
    let mut groups = Vec::new();
    for pair in t.pairs::<String, Table>() {
        let (name, g) = pair.map_err(|_| mlua::Error::runtime("groups = { NAME = { joints = { \"J1\", … }, tool = \"frame\" }, … }"))?;
        let what = format!("robot '{}', group '{name}'", robot.name);
        if ["name", "dof", "joints", "home", "model", "payload", "cartesian", "components", "groups"].contains(&name.as_str()) {
            return Err(mlua::Error::runtime(format!("{what}: the name is taken by a field of the robot; choose another")));
        }
        let list: Table = g.get::<Option<Table>>("joints")?.ok_or_else(|| mlua::Error::runtime(format!("{what}: needs joints = {{ \"J1\", … }}")))?;
        let mut joints = Vec::new();
        for j in list.sequence_values::<String>() {
            let j = j.map_err(|_| mlua::Error::runtime(format!("{what}: joints are names")))?;
            let index = robot.joints.iter().position(|x| x.name == j).ok_or_else(|| {
                let names: Vec<&str> = robot.joints.iter().map(|x| x.name.as_str()).collect();
                mlua::Error::runtime(format!("{what}: no joint '{j}' (the robot has {})", names.join(", ")))
            })?;
            joints.push(index);
        }
        if joints.is_empty() {
            return Err(mlua::Error::runtime(format!("{what}: needs at least one joint")));
        }
        let tool = match g.get::<Option<String>>("tool")? {
            Some(f) => frame_of(robot, &f, &what)?,
            None => robot.tool_frame,
        };
        groups.push(RobotGroup { name, joints, tool });
    }
    groups.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(groups)
}

/// `ft = { frame = "left_tool", sim = { load = { mass, com = {mm} }, bias = {N, N·m}, noise = { N, N·m } } }`.
pub(crate) fn parse_ft(robot: &Robot, t: &Table) -> mlua::Result<FtSensor> {
    let what = format!("robot '{}', ft", robot.name);
    let frame = match t.get::<Option<String>>("frame")? {
        Some(f) => frame_of(robot, &f, &what)?,
        None => robot.tool_frame,
    };
    let sim: Table = t.get::<Option<Table>>("sim")?.unwrap_or(t.clone());
    let (mut load_mass, mut load_com) = (0.0, [0.0; 3]);
    if let Some(load) = sim.get::<Option<Table>>("load")? {
        load_mass = number(&load, "mass", Some(0.0), &format!("{what}.sim.load"))?;
        if let Some(c) = load.get::<Option<mlua::Value>>("com")? {
            let c = numbers(c, 3, &format!("{what}.sim.load.com (mm)"))?;
            load_com = [c[0] * 1e-3, c[1] * 1e-3, c[2] * 1e-3];
        }
    }
    let bias = match sim.get::<Option<mlua::Value>>("bias")? {
        Some(b) => numbers(b, 6, &format!("{what}.sim.bias {{Fx, Fy, Fz (N), Tx, Ty, Tz (N·m)}}"))?.try_into().unwrap_or([0.0; 6]),
        None => [0.0; 6],
    };
    let noise = match sim.get::<Option<mlua::Value>>("noise")? {
        Some(n) => {
            let n = numbers(n, 2, &format!("{what}.sim.noise {{N, N·m}}"))?;
            [n[0], n[1]]
        }
        None => [0.0; 2],
    };
    if !(load_mass >= 0.0 && noise[0] >= 0.0 && noise[1] >= 0.0) {
        return Err(mlua::Error::runtime(format!("{what}: the load's mass and the noise must be ≥ 0")));
    }
    Ok(FtSensor { frame, sim: SimFtSpec { load_mass, load_com, bias, noise } })
}

/// `r:sim_hand { { push = {N}, time = s }, { tour = { {mm}, … }, stiffness, damping, max_force, tolerance = mm, dwell, time }, { release = true, time } }`:
/// the simulated operator's script, published to the robot's simulated plant (it starts at the plant's next step).
pub(crate) fn sim_hand(lua: &mlua::Lua, robot: &Robot, t: Table) -> mlua::Result<f64> {
    let origin = super::origin::caller(lua);
    let fail = |m: String| raise(ErrorKind::Robot, format!("{origin}: robot '{}': sim_hand: {m}", robot.name));
    if robot.ft.is_none() {
        return Err(fail("the robot has no F/T sensor for the hand to push on: add ft = { frame = \"tool\" } to its definition".into()));
    }
    let mut segments = Vec::new();
    for (i, s) in t.sequence_values::<Table>().enumerate() {
        let s = s.map_err(|_| fail(format!("segment {} must be a table", i + 1)))?;
        let what = format!("segment {}", i + 1);
        let duration = number(&s, "time", None, &what).map_err(|e| fail(format!("{e} (s: how long it lasts, at most)")))?;
        if !(duration > 0.0 && duration.is_finite()) {
            return Err(fail(format!("{what}: time must be > 0 s")));
        }
        let enable = s.get::<Option<bool>>("enable")?;
        let action = if let Some(f) = s.get::<Option<mlua::Value>>("push")? {
            let f = numbers(f, 3, &format!("{what}: push {{Fx, Fy, Fz}} (N, base axes)")).map_err(|e| fail(e.to_string()))?;
            HandAction::Push { force: [f[0], f[1], f[2]] }
        } else if let Some(list) = s.get::<Option<Table>>("tour")? {
            let mut targets = Vec::new();
            for p in list.sequence_values::<mlua::Value>() {
                // NaN and infinities are refused by `numbers`: they would reach the plant and
                // fault there, blamed on the arm's model.
                let p = numbers(p?, 3, &format!("{what}: tour point {} {{x, y, z}} (mm, base axes)", targets.len() + 1)).map_err(|e| fail(e.to_string()))?;
                targets.push([p[0] * 1e-3, p[1] * 1e-3, p[2] * 1e-3]);
            }
            let get = |key: &str, default: f64| number(&s, key, Some(default), &what).map_err(|e| fail(e.to_string()));
            HandAction::Tour {
                targets,
                stiffness: get("stiffness", 200.0)?,
                damping: get("damping", 20.0)?,
                max_force: get("max_force", 30.0)?,
                tolerance: get("tolerance", 1.0)? * 1e-3,
                dwell: get("dwell", 0.3)?,
            }
        } else if s.get::<Option<bool>>("release")?.unwrap_or(false) {
            HandAction::Release
        } else {
            return Err(fail(format!("{what}: say what the hand does: push = {{N}}, tour = {{ {{mm}}, … }} or release = true")));
        };
        let enable = enable.unwrap_or(!matches!(action, HandAction::Release));
        segments.push(HandSegment { duration, action, enable });
    }
    let script = HandScript { segments };
    let duration = script.duration();
    robot.hand.publish(Arc::new(script));
    Ok(duration)
}
