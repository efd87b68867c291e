//! Robots in Lua: the `LuaRobot` userdata that `morc.robot { … }` makes (its fields, kinematics,
//! tool and payload changes, planning, and components it adds to assemblies), and the
//! registration of `morc.model`, `morc.robot`, `morc.start_engine` and `morc.use_robot`.
//! Lua speaks degrees and millimetres; the Rust side SI units.

use std::sync::Arc;

use mlua::{AnyUserData, Lua, Table, UserData, UserDataFields, UserDataMethods};

use super::model::LuaModel;
use super::model_define;
use super::origin::caller;
use super::robot_define::{self, flange, flange_body, joint_vector, tool_frame_of, tool_placement, tooled_robot, with_payload_table};
use super::robot_params::{self, Units};
use super::start_engine::{start_engine, use_robot};
use crate::error::{message_of, raise, typed, ErrorKind};
use crate::keys;
use crate::kinds::robot_kind::{robot_kind, units_of, RobotKind};
use morc_kernel::Component;
use morc_kernel::Value;
use morc_model::rpy_from_rotation;
use morc_motion::pose_from_vector;
use morc_motion::Kinematics;
use morc_robot::{components, Robot, RobotKinematics};

/// A robot made by `morc.robot { … }`.
#[derive(Clone)]
pub struct LuaRobot(pub Arc<Robot>);

/// `robot:plan(start, moves, opts)`: plans moves from `start` as the trajectory component
/// would, without moving, and reports what a precondition needs.
fn plan(lua: &Lua, robot: &Arc<Robot>, start: mlua::Value, list: Table, opts: Option<Table>) -> mlua::Result<Table> {
    let units = units_of(opts.as_ref())?;
    let start = robot_params::joints(robot, &start, units, "robot:plan start")?;
    let mut moves = Vec::new();
    for (i, m) in list.sequence_values::<Table>().enumerate() {
        moves.push(robot_params::parse_move(robot, &m?, units, &format!("move {}", i + 1))?);
    }
    let out = lua.create_table()?;
    let mut trajectory = components::MotionTrajectory::new(robot.clone(), "path");
    let mut check = || -> Result<(), String> {
        trajectory.set_parameter("moves", &components::trajectory::moves_value(&moves))?;
        if let Some(o) = &opts {
            for key in ["vel_scale", "acc_scale", "ramp"] {
                if let Ok(Some(x)) = o.get::<Option<f64>>(key) {
                    trajectory.set_parameter(key, &Value::Real(x))?;
                }
            }
        }
        trajectory.configure()
    };
    if let Err(e) = check() {
        out.set("ok", false)?;
        out.set("reason", e)?;
        return Ok(out);
    }
    match trajectory.survey(&start, 200) {
        Ok(s) => {
            out.set("ok", true)?;
            out.set("duration", s.duration)?;
            out.set("singularity", s.singularity)?;
            out.set("end", lua.create_sequence_from(s.end.iter().enumerate().map(|(i, x)| x / units.joint(robot, i)))?)?;
        }
        Err(e) => {
            // Said of the one move the caller gave, the sequence's own prefix is noise.
            let mut reason = e.strip_prefix("path: ").unwrap_or(&e);
            if moves.len() == 1 {
                reason = reason.split_once("): ").filter(|(head, _)| head.starts_with("move 1 (")).map_or(reason, |(_, rest)| rest);
            }
            out.set("ok", false)?;
            out.set("reason", reason)?;
        }
    }
    Ok(out)
}

/// SI → Lua's numbers (degrees, mm for prismatic joints), for the robot's joints.
fn lua_joints(robot: &Robot, q: &[f64]) -> Vec<f64> {
    q.iter().enumerate().map(|(i, x)| x / Units::LUA.joint(robot, i)).collect()
}

impl UserData for LuaRobot {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("name", |_, this| Ok(this.0.name.clone()));
        fields.add_field_method_get("dof", |_, this| Ok(this.0.dof()));
        fields.add_field_method_get("joints", |lua, this| {
            let list = lua.create_table()?;
            for (i, j) in this.0.joints.iter().enumerate() {
                let e = lua.create_table()?;
                let to_lua = 1.0 / Units::LUA.joint(&this.0, i);
                e.set("name", j.name.as_str())?;
                e.set("kind", if this.0.is_prismatic(i) { "prismatic" } else { "revolute" })?;
                e.set("unit", if this.0.is_prismatic(i) { "mm" } else { "deg" })?;
                // A joint without a wired drive reads back without one, so that it defines
                // the same robot again.
                if let Some(counts) = j.drive.counts {
                    e.set("slave", j.drive.slave)?;
                    e.set("gear", j.drive.gear)?;
                    e.set("counts", counts)?;
                    e.set("offset", j.drive.offset)?;
                    e.set("direction", j.drive.direction)?;
                    e.set("mode", j.drive.mode.name())?;
                }
                if let Some(t) = j.drive.rated_torque {
                    e.set("rated_torque", t)?;
                }
                if let Some(train) = this.0.model.drive_trains().get(i) {
                    e.set("armature", train.armature)?;
                    e.set("viscous", train.viscous_friction)?;
                    e.set("coulomb", train.coulomb_friction)?;
                    e.set("stiffness", train.stiffness)?;
                    e.set("damping", train.damping)?;
                }
                let l = lua.create_table()?;
                l.set("pos", lua.create_sequence_from([j.limits.lower * to_lua, j.limits.upper * to_lua])?)?;
                l.set("vel", j.limits.velocity * to_lua)?;
                l.set("acc", j.limits.acceleration * to_lua)?;
                l.set("torque", j.limits.torque)?;
                e.set("limits", l)?;
                list.push(e)?;
            }
            Ok(list)
        });
        fields.add_field_method_get("home", |lua, this| lua.create_sequence_from(lua_joints(&this.0, &this.0.home)));
        // robot.model: the robot's model (SI units, tool and payload included) with a workspace, the same each time.
        fields.add_field_function_get("model", |lua, ud| {
            let model = ud.borrow::<LuaRobot>()?.0.model.clone();
            super::model::robot_model(lua, &ud, &model)
        });
        fields.add_field_method_get("payload", |_, this| Ok(this.0.payload));
        fields.add_field_method_get("cartesian", |lua, this| {
            let c = this.0.cartesian;
            let t = lua.create_table()?;
            t.set("vel", c.velocity * 1e3)?;
            t.set("acc", c.acceleration * 1e3)?;
            t.set("rot_vel", c.angular_velocity.to_degrees())?;
            t.set("rot_acc", c.angular_acceleration.to_degrees())?;
            Ok(t)
        });
        fields.add_field_method_get("groups", |lua, this| {
            let t = lua.create_table()?;
            for g in &this.0.groups {
                let names: Vec<&str> = g.joints.iter().map(|&i| this.0.joints[i].name.as_str()).collect();
                let group = lua.create_table()?;
                group.set("joints", lua.create_sequence_from(g.joints.iter().map(|i| i + 1))?)?;
                group.set("names", names)?;
                group.set("tool", this.0.model.frames()[g.tool].name.as_str())?;
                t.set(g.name.as_str(), group)?;
            }
            Ok(t)
        });
        fields.add_field_method_get("origin", |_, this| Ok(this.0.origin.clone()));
        fields.add_field_method_get("ft", |lua, this| {
            this.0
                .ft
                .as_ref()
                .map(|ft| -> mlua::Result<Table> {
                    let t = lua.create_table()?;
                    t.set("frame", this.0.model.frames()[ft.frame].name.as_str())?;
                    let joints = super::robot_groups::joints_moving(&this.0, ft.frame);
                    t.set("names", joints.iter().map(|&i| this.0.joints[i].name.as_str()).collect::<Vec<_>>())?;
                    t.set("joints", lua.create_sequence_from(joints.iter().map(|i| i + 1))?)?;
                    Ok(t)
                })
                .transpose()
        });
        fields.add_field_method_get("components", |lua, this| {
            let t = lua.create_table()?;
            for k in components::kinds(&this.0).kinds() {
                t.set(k.name.as_str(), k.doc.as_str())?;
            }
            Ok(t)
        });
    }
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        // A group by its name (r.left): a Lua object for the group's commands, and r:together
        // for several groups' motions at once (stdlib/motion/group.lua).
        methods.add_meta_function(mlua::MetaMethod::Index, |lua, (ud, key): (AnyUserData, mlua::Value)| {
            let name = match &key {
                mlua::Value::String(s) => s.to_str()?.to_string(),
                _ => return Ok(mlua::Value::Nil),
            };
            let is_group = ud.borrow::<LuaRobot>()?.0.groups.iter().any(|g| g.name == name);
            if !is_group && name != "together" {
                return Ok(mlua::Value::Nil);
            }
            let module: Table = lua.globals().get::<mlua::Function>("require")?.call("stdlib.motion.group")?;
            if !is_group {
                // r:together { left = moves, right = moves }: the groups' motions at the same time.
                return module.get("together");
            }
            module.get::<mlua::Function>("of")?.call((ud, name))
        });
        methods.add_method("sim_hand", |lua, this, t: Table| super::robot_groups::sim_hand(lua, &this.0, t));
        methods.add_method("sim_hand_duration", |_, this, ()| Ok(this.0.hand.current().duration()));
        methods.add_method("reachable", |_, this, q: mlua::Value| {
            let q = joint_vector(&this.0, q, "robot:reachable(q)")?;
            Ok(match this.0.outside_limits(&q) {
                None => (true, None),
                Some(i) => {
                    let j = &this.0.joints[i];
                    let r = &this.0;
                    let msg = format!("joint {} at {} is outside [{}, {}]", j.name, r.show(i, q[i], 3), r.show(i, j.limits.lower, 1), r.show(i, j.limits.upper, 1));
                    (false, Some(msg))
                }
            })
        });
        // robot:fk(q° [, "frame"]): the tool frame's (or the named frame's) pose, in the workspace
        // of the robot's model userdata (robot.model) rather than a workspace per call.
        methods.add_function("fk", |lua, (ud, q, frame): (AnyUserData, mlua::Value, Option<mlua::Value>)| {
            let robot = ud.borrow::<LuaRobot>()?.0.clone();
            let q = joint_vector(&robot, q, "robot:fk(q)")?;
            let model_ud = super::model::robot_model(lua, &ud, &robot.model)?;
            let mut model = model_ud.borrow_mut::<LuaModel>()?;
            let frame = match frame {
                None | Some(mlua::Value::Nil) => robot.tool_frame,
                Some(name) => model.frame(&name, "robot:fk(q, frame)")?,
            };
            let p = model.placement(&q, frame);
            let t = lua.create_table()?;
            t.set("pos", lua.create_sequence_from(p.translation.iter().map(|x| x * 1e3))?)?;
            t.set("rpy", lua.create_sequence_from(rpy_from_rotation(&p.rotation).iter().map(|x| x.to_degrees()))?)?;
            Ok(t)
        });
        // The operator's seat: what the robot does now, the override, pause and resume.
        methods.add_function("state", |lua, ud: AnyUserData| super::robot_state::state(lua, &ud));
        methods.add_method("override", |lua, this, percent: Option<f64>| super::robot_state::set_override(lua, &this.0, percent));
        methods.add_function("jog", |lua, (ud, t): (AnyUserData, Table)| super::robot_state::jog(lua, &ud, t));
        // Geometric calibration, and a perturbed "true" robot to simulate one.
        methods.add_method("calibrate", |lua, this, t: Table| super::robot_calibration::calibrate(lua, &this.0, t));
        methods.add_method("perturbed", |lua, this, t: Option<Table>| super::robot_calibration::perturbed(lua, &this.0, t));
        methods.add_method("calibrated", |lua, this, errors: Table| super::robot_calibration::calibrated(lua, &this.0, errors));
        methods.add_method("save_calibration", |lua, this, (path, result): (String, Table)| super::robot_calibration::save_calibration(lua, &this.0, path, result));
        methods.add_method("measurement_poses", |lua, this, t: Table| super::robot_calibration::measurement_poses(lua, &this.0, t));
        methods.add_method("pause", |_, this, ()| {
            this.0.operator.pause();
            Ok(())
        });
        methods.add_method("resume", |_, this, ()| {
            this.0.operator.resume();
            Ok(())
        });
        // robot:with_payload { mass = kg, com = {x, y, z} mm, inertia = {…} }: a new robot with the
        // payload added at the flange (the model is rebuilt here, off the real-time path).
        methods.add_method("with_payload", |lua, this, p: Table| {
            let origin = caller(lua);
            let (model, mass) = with_payload_table(&this.0.unloaded, &p).map_err(|e| raise(ErrorKind::Robot, format!("{origin}: robot '{}': {e}", this.0.name)))?;
            Ok(LuaRobot(Arc::new(this.0.loaded(model, Some(mass)))))
        });
        // robot:add(a, name, kind, params): a robot component in assembly a.
        methods.add_method("add", |lua, this, (a, name, kind, opts): (AnyUserData, String, String, Option<Table>)| {
            let kind = lua.create_userdata(RobotKind { robot: this.0.clone(), kind })?;
            crate::assembly::push(&a, crate::kinds::add::component(lua, name, mlua::Value::UserData(kind), opts)?)?;
            Ok(a)
        });
        // robot:component(kind): the kind for a:add(name, robot:component "ptp", params).
        methods.add_method("component", |lua, this, kind: String| {
            robot_kind(&this.0, &kind).map_err(|e| raise(ErrorKind::Robot, format!("{}: {e}", caller(lua))))?;
            Ok(RobotKind { robot: this.0.clone(), kind })
        });
        // robot:ik(pose, seed) → q (degrees) nearest to seed, or nil and why.
        methods.add_method("ik", |lua, this, (pose, seed, opts): (mlua::Value, Option<mlua::Value>, Option<Table>)| {
            let units = units_of(opts.as_ref())?;
            let target = robot_params::pose(&pose, units, "robot:ik(pose)")?;
            let seed = match seed {
                Some(s) if !s.is_nil() => robot_params::joints(&this.0, &s, units, "robot:ik seed")?,
                _ => this.0.joints.iter().map(|j| 0f64.clamp(j.limits.lower, j.limits.upper)).collect(),
            };
            let mut kinematics = RobotKinematics::new(this.0.clone());
            kinematics.cartesian().map_err(typed)?;
            let mut q = vec![0.0; this.0.dof()];
            if kinematics.inverse(&pose_from_vector(&target), &seed, &mut q) {
                let q: Vec<f64> = q.iter().enumerate().map(|(i, x)| x / units.joint(&this.0, i)).collect();
                Ok((Some(lua.create_sequence_from(q)?), None))
            } else {
                Ok((None, Some(format!("the pose is out of reach of {} or outside its joint limits", this.0.name))))
            }
        });
        // robot:set_payload { mass, com, inertia } (nil: none): changes this robot's payload now.
        methods.add_method_mut("set_payload", |lua, this, p: Option<Table>| {
            crate::object_params::check_writable(lua, &this.0, "set_payload")?;
            let origin = caller(lua);
            let fail = |m: String| raise(ErrorKind::Robot, format!("{origin}: robot '{}': set_payload: {m}", this.0.name));
            let (model, mass) = match p {
                None => ((*this.0.unloaded).clone(), None),
                Some(p) => {
                    let (model, mass) = with_payload_table(&this.0.unloaded, &p).map_err(|e| fail(message_of(&e)))?;
                    (model, Some(mass))
                }
            };
            this.0 = Arc::new(this.0.swapped(model, mass).map_err(|e| fail(e.to_string()))?);
            Ok(())
        });
        // robot:plan(start, moves, opts) → { ok, reason, duration, singularity, end } without moving.
        methods.add_method("plan", |lua, this, (start, moves, opts): (mlua::Value, Table, Option<Table>)| plan(lua, &this.0, start, moves, opts));
        // robot:with_tool { xyz = {mm}, rpy = {°} }: a new robot with this tool at the flange.
        // robot:set_tool { xyz, rpy }: this robot's tool changes now, for every motion planned
        // from here on (a running one keeps the tool it was planned with).
        methods.add_method_mut("set_tool", |lua, this, tool: Table| {
            crate::object_params::check_writable(lua, &this.0, "set_tool")?;
            let origin = caller(lua);
            let placement = tool_placement(&tool).map_err(|e| raise(ErrorKind::Robot, format!("{origin}: {e}")))?;
            this.0 = Arc::new(tooled_robot(&this.0, &placement, &origin.to_string())?.sharing_live(&this.0));
            Ok(())
        });
        // robot:change_tool { xyz, rpy, mass, com, inertia }: the tool changes now, geometry and
        // mass: a running plant and feed-forward carry the new tool from their next step.
        methods.add_method_mut("change_tool", |lua, this, tool: Table| {
            crate::object_params::check_writable(lua, &this.0, "change_tool")?;
            let origin = caller(lua);
            let fail = |m: String| raise(ErrorKind::Robot, format!("{origin}: robot '{}': change_tool: {m}", this.0.name));
            keys::check(&tool, "in the tool", &["xyz", "rpy", "mass", "com", "inertia"], 0).map_err(&fail)?;
            let placement = tool_frame_of(&tool).map_err(|e| fail(message_of(&e)))?;
            let (_, flange_placement) = flange(&this.0.model);
            let body = match tool.get::<mlua::Value>("mass")? {
                mlua::Value::Nil => None,
                _ => Some(flange_body(&this.0.model, &tool, "tool").map_err(|e| fail(message_of(&e)))?),
            };
            this.0 = Arc::new(this.0.tool_changed(flange_placement.compose(&placement), body).map_err(|e| fail(e.to_string()))?);
            Ok(())
        });
        methods.add_method("with_tool", |lua, this, tool: Table| {
            let origin = caller(lua);
            let placement = tool_placement(&tool).map_err(|e| raise(ErrorKind::Robot, format!("{origin}: {e}")))?;
            Ok(LuaRobot(Arc::new(tooled_robot(&this.0, &placement, &origin.to_string())?)))
        });
        methods.add_meta_method("__tostring", |_, this, ()| {
            let names: Vec<&str> = this.0.joints.iter().map(|j| j.name.as_str()).collect();
            Ok(format!("robot '{}' ({})", this.0.name, names.join(", ")))
        });
    }
}

/// Registers `morc.model`, `morc.robot`, `morc.start_engine` and `morc.use_robot`.
pub fn install(lua: &Lua, morc: &Table) -> mlua::Result<()> {
    let model = lua.create_table()?;
    model.set("urdf", lua.create_function(model_define::model_urdf)?)?;
    model.set("dh", lua.create_function(model_define::model_dh)?)?;
    model.set("build", lua.create_function(model_define::model_build)?)?;
    morc.set("model", model)?;
    morc.set("robot", lua.create_function(robot_define::define_robot)?)?;
    morc.set("start_engine", lua.create_function(start_engine)?)?;
    morc.set("use_robot", lua.create_function(use_robot)?)?;
    Ok(())
}
