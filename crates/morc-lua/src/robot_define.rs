//! The robot definition: `morc.robot { name, model, joints, home, cartesian, tool, payload,
//! groups, ft, bus }` read into a `Robot` (joint drives and limits checked against the model,
//! the bus devices of the robot file), and the tool and payload tables robots take later
//! (`robot:set_tool`, `robot:with_payload`, …). Lua speaks degrees and millimetres; the Rust side SI units.

use std::sync::Arc;

use mlua::{Lua, Table};

use super::model::LuaModel;
use super::model_define::{inertia_matrix, number, numbers, optional_number, vec3_mm};
use super::origin::caller;
use super::robot::LuaRobot;
use super::robot_params::Units;
use crate::error::{message_of, raise, typed, ErrorKind};
use crate::keys;
use morc_ecat::devices::DeviceClassChoice;
use morc_model::rotation_from_rpy;
use morc_model::{DriveTrain, Inertia, JointKind, JointLimits, Model, Se3};
use morc_robot::DeviceAt;
use morc_robot::{CartesianLimits, JointDrive, Limits, Robot, RobotJoint};

/// The keys of a drive, of a joint's limits, and of a joint entry in `morc.robot { joints = … }`.
const DRIVE_KEYS: [&str; 13] = ["slave", "gear", "counts", "offset", "direction", "mode", "rated_torque", "parameters", "armature", "viscous", "coulomb", "stiffness", "damping"];
const LIMIT_KEYS: [&str; 5] = ["pos", "vel", "acc", "torque", "unit"];
const JOINT_KEYS: [&str; 5] = ["name", "drive", "limits", "kind", "unit"];

/// The frame a payload and tool attach to: the flange ("tool0"/"flange" of the model, else the
/// "tool" a DH table ends in, before any tool is set), else the last joint.
pub(crate) fn flange(model: &Model) -> (usize, Se3) {
    let last = model.njoints() - 1;
    ["tool0", "flange", "tool"]
        .iter()
        .filter_map(|n| model.frame_index(n))
        .map(|f| &model.frames()[f])
        .find(|f| f.parent_joint == last)
        .map_or((last, Se3::identity()), |f| (last, f.placement))
}

/// A joint's limits from its Lua table (degrees, or mm for a `prismatic` joint), else its model's.
fn limits_of(j: &Table, model_limits: &JointLimits, prismatic: bool, what: &str) -> mlua::Result<Limits> {
    let l: Table = j.get::<Option<Table>>("limits")?.unwrap_or(j.clone());
    let finite = |x: f64| if x.is_finite() { Some(x) } else { None };
    let (si, unit, force) = if prismatic { (1e-3, "mm", "N") } else { (1f64.to_radians(), "°", "N·m") };
    let pos = match l.get::<mlua::Value>("pos")? {
        mlua::Value::Nil => match (finite(model_limits.lower), finite(model_limits.upper)) {
            (Some(lo), Some(hi)) => (lo, hi),
            _ => return Err(mlua::Error::runtime(format!("{what}: needs limits.pos = {{lower, upper}} ({unit}); the model has none"))),
        },
        v => {
            let x = numbers(v, 2, &format!("{what}: limits.pos {{lower, upper}} ({unit})"))?;
            (x[0] * si, x[1] * si)
        }
    };
    let velocity = match optional_number(&l, "vel", what)? {
        Some(v) => v * si,
        None => finite(model_limits.velocity).ok_or_else(|| mlua::Error::runtime(format!("{what}: needs limits.vel ({unit}/s); the model has none")))?,
    };
    let acceleration = match optional_number(&l, "acc", what)? {
        Some(a) => a * si,
        None => return Err(mlua::Error::runtime(format!("{what}: needs limits.acc ({unit}/s²)"))),
    };
    let torque = match optional_number(&l, "torque", what)? {
        Some(t) => t,
        None => finite(model_limits.effort).ok_or_else(|| mlua::Error::runtime(format!("{what}: needs limits.torque ({force}); the model has none")))?,
    };
    Ok(Limits { lower: pos.0, upper: pos.1, velocity, acceleration, torque })
}

/// A joints entry against the model's joint `i` (0-based): its name (the model's at that
/// position; a DH table's generated "jointN" takes any), its `kind` and `unit` when given.
fn check_joint_against_model(model: &Model, i: usize, given: Option<&str>, j: &Table, limits: Option<&Table>, what: &str) -> Result<(), String> {
    let names = model.joint_names();
    let kind_of = |k: usize| if model.joint_kinds()[k] == JointKind::Prismatic { ("prismatic", "mm") } else { ("revolute", "deg") };
    let here = &names[i + 1];
    let (kind, unit) = kind_of(i + 1);
    if let Some(g) = given {
        let generated = *here == format!("joint{}", i + 1);
        if g != here && !generated {
            return Err(match names.iter().skip(1).position(|n| n == g) {
                Some(k) => format!(
                    "{what}: entry {} is '{g}', but the model's joint {} is '{here}' ({kind}, {unit}) and '{g}' is its joint {} ({}): list the joints in the model's order",
                    i + 1,
                    i + 1,
                    k + 1,
                    kind_of(k + 1).0
                ),
                None => {
                    let near = morc_kernel::names::nearest(g, names.iter().skip(1).map(String::as_str)).map_or(String::new(), |n| format!("; did you mean '{n}'?"));
                    format!("{what}: the model has no joint '{g}' (its joint {} is '{here}'){near}: name the joints as the model does, in its order", i + 1)
                }
            });
        }
    }
    if let Some(k) = j.get::<Option<String>>("kind").map_err(|e| e.to_string())? {
        if k != kind {
            return Err(format!("{what}: kind = \"{k}\", but the model's joint {} ('{here}') is {kind}: fix the kind, or the joint's place in joints", i + 1));
        }
    }
    for t in std::iter::once(j).chain(limits) {
        if let Some(u) = t.get::<Option<String>>("unit").map_err(|e| e.to_string())? {
            let same = u == unit || (unit == "deg" && u == "°");
            if !same {
                return Err(format!("{what}: unit = \"{u}\", but the model's joint {} ('{here}') is {kind}: its limits are in {unit}", i + 1));
            }
        }
    }
    Ok(())
}

/// The settings that wire a joint to a drive on the bus (the rest of [`DRIVE_KEYS`] describe the
/// drive train the simulation moves).
const WIRING_KEYS: [&str; 8] = ["slave", "gear", "counts", "offset", "direction", "mode", "rated_torque", "parameters"];

/// A joint drive's encoder counts per motor turn: required once the drive is wired (a bus
/// scales every position by it, and one count per turn moves the joint in steps of 2π/gear),
/// `None` where `d` describes no wired drive (the direct simulation needs none).
fn drive_counts(d: &Table, what: &str) -> Result<Option<f64>, String> {
    if d.contains_key("counts").map_err(|e| e.to_string())? {
        return number(d, "counts", None, what).map(Some).map_err(|e| message_of(&e));
    }
    let wired: Vec<&str> = WIRING_KEYS.iter().copied().filter(|k| d.contains_key(*k).unwrap_or(false)).collect();
    if wired.is_empty() {
        return Ok(None);
    }
    Err(format!(
        "{what}: its drive ({}) needs counts, the encoder's counts per motor turn: 2^17 = 131072, 2^19 = 524288 or 2^20 = 1048576 are usual for a servo motor's encoder (its data sheet says)",
        wired.iter().map(|k| format!("{k} = …")).collect::<Vec<_>>().join(", ")
    ))
}

/// `morc.robot { name, model, joints = { { "A1", drive = {…}, limits = {…} }, … }, tool = {…}, payload = {…} }`.
pub(crate) fn define_robot(lua: &Lua, t: Table) -> mlua::Result<LuaRobot> {
    let origin = caller(lua).to_string();
    let fail = |m: String| raise(ErrorKind::Robot, format!("{origin}: {m}"));
    let name: String = t.get::<Option<String>>("name")?.ok_or_else(|| fail("morc.robot needs a name".into()))?;
    keys::check(&t, &format!("in robot '{name}'"), &["name", "model", "joints", "home", "cartesian", "tool", "payload", "groups", "ft", "bus"], 0).map_err(fail)?;
    let mut model = match t.get::<mlua::Value>("model")? {
        mlua::Value::UserData(ud) if ud.is::<LuaModel>() => (*ud.borrow::<LuaModel>()?.model).clone(),
        _ => return Err(fail(format!("robot '{name}': model must be morc.model.urdf \"file\" or morc.model.dh {{…}}"))),
    };
    if model.has_mimic_joints() {
        let mimics: Vec<&str> = (1..model.njoints()).filter(|&j| model.mimic(j).is_some()).map(|j| model.joint_names()[j].as_str()).collect();
        return Err(fail(format!(
            "robot '{name}': the model has mimic joints ({}), and a robot's joints are its drives one to one: remove the <mimic> joints from the robot's URDF (morc.model still loads the full model for dynamics)",
            mimics.join(", ")
        )));
    }
    let list: Table = t.get::<Option<Table>>("joints")?.ok_or_else(|| fail(format!("robot '{name}' needs joints = {{ {{ \"A1\", drive = {{…}}, limits = {{…}} }}, … }}")))?;
    let mut joints = Vec::new();
    for (i, j) in list.sequence_values::<Table>().enumerate() {
        let j = j.map_err(|_| fail(format!("robot '{name}': joint {} must be a table", i + 1)))?;
        let given = j.get::<Option<String>>(1)?.or(j.get::<Option<String>>("name")?);
        let jname = given.clone().unwrap_or_else(|| format!("joint {}", i + 1));
        let what = format!("robot '{name}', joint {jname}");
        if i >= model.nv() {
            return Err(fail(format!("{what}: the model has only {} joints", model.nv())));
        }
        // Drive and limit settings sit in drive = {…} and limits = {…}, or beside the name
        // (the form robot.joints reads back), not both.
        let (drive_table, limits_table) = (j.get::<Option<Table>>("drive")?, j.get::<Option<Table>>("limits")?);
        let mut known: Vec<&str> = JOINT_KEYS.to_vec();
        known.extend(if drive_table.is_none() { &DRIVE_KEYS[..] } else { &[] });
        known.extend(if limits_table.is_none() { &LIMIT_KEYS[..4] } else { &[] });
        keys::check(&j, &format!("in joint {jname} of robot '{name}'"), &known, 1).map_err(fail)?;
        check_joint_against_model(&model, i, given.as_deref(), &j, limits_table.as_ref(), &what).map_err(fail)?;
        if let Some(d) = &drive_table {
            keys::check(d, &format!("in the drive of joint {jname}"), &DRIVE_KEYS, 0).map_err(fail)?;
        }
        if let Some(l) = &limits_table {
            keys::check(l, &format!("in the limits of joint {jname}"), &LIMIT_KEYS, 0).map_err(fail)?;
        }
        let d: Table = drive_table.unwrap_or(j.clone());
        let drive = JointDrive {
            slave: d
                .get::<Option<u32>>("slave")
                .map_err(|_| fail(format!("{what}: drive slave must be the drive's position on the line, a whole number from 1")))?
                .unwrap_or(i as u32 + 1),
            gear: number(&d, "gear", Some(1.0), &what).map_err(|e| fail(message_of(&e)))?,
            counts: drive_counts(&d, &what).map_err(fail)?,
            offset: number(&d, "offset", Some(0.0), &what).map_err(|e| fail(message_of(&e)))?,
            direction: number(&d, "direction", Some(1.0), &what).map_err(|e| fail(message_of(&e)))?,
            mode: match d.get::<Option<String>>("mode").map_err(|_| fail(format!("{what}: drive mode must be \"csp\", \"csv\" or \"cst\"")))? {
                Some(m) => morc_robot::CommandMode::parse(&m).map_err(|e| fail(format!("{what}: {e}")))?,
                None => morc_robot::CommandMode::Position,
            },
            rated_torque: match optional_number(&d, "rated_torque", &what).map_err(|e| fail(message_of(&e)))? {
                Some(t) if t <= 0.0 => return Err(fail(format!("{what}: the drive's rated_torque must be > 0 N·m (the motor's rated torque), got {t}"))),
                t => t,
            },
            parameters: crate::drive_parameters::parse(&d, &what).map_err(fail)?,
        };
        let train = DriveTrain {
            armature: number(&d, "armature", Some(0.0), &what).map_err(|e| fail(message_of(&e)))?,
            viscous_friction: number(&d, "viscous", Some(0.0), &what).map_err(|e| fail(message_of(&e)))?,
            coulomb_friction: number(&d, "coulomb", Some(0.0), &what).map_err(|e| fail(message_of(&e)))?,
            stiffness: number(&d, "stiffness", Some(0.0), &what).map_err(|e| fail(message_of(&e)))?,
            damping: number(&d, "damping", Some(0.0), &what).map_err(|e| fail(message_of(&e)))?,
        };
        if [train.armature, train.viscous_friction, train.coulomb_friction, train.stiffness, train.damping].iter().any(|x| !(x.is_finite() && *x >= 0.0)) {
            return Err(fail(format!("{what}: drive armature, viscous, coulomb, stiffness and damping must be finite and ≥ 0")));
        }
        if train.stiffness > 0.0 && train.armature <= 0.0 {
            return Err(fail(format!("{what}: an elastic drive (stiffness) needs the motor's inertia: armature > 0 (kg·m² seen at the joint)")));
        }
        model.set_drive_train(i + 1, train).map_err(|e| fail(e.to_string()))?;
        let prismatic = model.joint_kinds()[i + 1] == JointKind::Prismatic;
        let limits = limits_of(&j, &model.limits()[i], prismatic, &what).map_err(|e| fail(message_of(&e)))?;
        joints.push(RobotJoint { name: jname, drive, limits });
    }
    let (_, flange_placement) = flange(&model);
    if let Some(tool) = t.get::<Option<Table>>("tool")? {
        let placement = tool_placement(&tool).map_err(|e| fail(message_of(&e)))?;
        morc_robot::set_tool(&mut model, flange_placement.compose(&placement));
    }
    let mut robot = Robot::new(&name, model, joints, &origin).map_err(typed)?;
    if let Some(g) = t.get::<Option<Table>>("groups")? {
        for (group, v) in g.clone().pairs::<mlua::Value, mlua::Value>().flatten() {
            if let mlua::Value::Table(v) = v {
                let group = group.to_string().unwrap_or_default();
                keys::check(&v, &format!("in group '{group}' of robot '{name}'"), &["joints", "tool"], 0).map_err(fail)?;
            }
        }
        robot.groups = super::robot_groups::parse_groups(&robot, &g).map_err(|e| fail(message_of(&e)))?;
    }
    if let Some(ft) = t.get::<Option<Table>>("ft")? {
        let sim_keys = ["load", "bias", "noise"];
        let sim = ft.get::<Option<Table>>("sim")?;
        let mut known = vec!["frame", "sim"];
        known.extend(if sim.is_none() { &sim_keys[..] } else { &[] });
        keys::check(&ft, &format!("in the ft sensor of robot '{name}'"), &known, 0).map_err(fail)?;
        if let Some(sim) = &sim {
            keys::check(sim, &format!("in the simulated ft sensor of robot '{name}'"), &sim_keys, 0).map_err(fail)?;
        }
        if let Some(load) = sim.as_ref().unwrap_or(&ft).get::<Option<Table>>("load")? {
            keys::check(&load, &format!("in the ft sensor's load of robot '{name}'"), &["mass", "com"], 0).map_err(fail)?;
        }
        robot.ft = Some(super::robot_groups::parse_ft(&robot, &ft).map_err(|e| fail(message_of(&e)))?);
    }
    if let Some(bus) = t.get::<Option<Table>>("bus")? {
        robot.bus = bus_devices(&robot, &bus).map_err(fail)?;
    }
    if let Some(p) = t.get::<Option<Table>>("payload")? {
        let (loaded, mass) = with_payload_table(&robot.unloaded, &p).map_err(|e| fail(format!("robot '{name}': {e}")))?;
        robot = robot.loaded(loaded, Some(mass));
    }
    if let Some(home) = t.get::<Option<mlua::Value>>("home")? {
        let q = joint_vector(&robot, home, &format!("robot '{name}': home")).map_err(|e| fail(message_of(&e)))?;
        if let Some(i) = robot.outside_limits(&q) {
            return Err(fail(format!("robot '{name}': home of joint {} is outside its limits", robot.joints[i].name)));
        }
        robot.home = q;
    }
    if let Some(c) = t.get::<Option<Table>>("cartesian")? {
        let what = format!("robot '{name}': cartesian");
        keys::check(&c, &format!("in the cartesian limits of robot '{name}'"), &["vel", "acc", "rot_vel", "rot_acc"], 0).map_err(fail)?;
        let limit = |key: &str, default: f64, factor: f64| -> mlua::Result<f64> {
            let x = number(&c, key, Some(default / factor), &what)? * factor;
            if x > 0.0 && x.is_finite() {
                Ok(x)
            } else {
                Err(fail(format!("{what}.{key} must be > 0")))
            }
        };
        let (deg, mm) = (1f64.to_radians(), 1e-3);
        robot.cartesian = CartesianLimits {
            velocity: limit("vel", robot.cartesian.velocity, mm)?,
            acceleration: limit("acc", robot.cartesian.acceleration, mm)?,
            angular_velocity: limit("rot_vel", robot.cartesian.angular_velocity, deg)?,
            angular_acceleration: limit("rot_acc", robot.cartesian.angular_acceleration, deg)?,
        };
    }
    Ok(LuaRobot(Arc::new(robot)))
}

/// `unloaded` with the payload `{ mass = kg, com = {mm}, inertia = {…} }` (in the flange frame) added.
pub(crate) fn with_payload_table(unloaded: &Model, p: &Table) -> mlua::Result<(Model, f64)> {
    keys::check(p, "in the payload", &["mass", "com", "inertia"], 0).map_err(|e| raise(ErrorKind::Robot, e))?;
    let mut model = unloaded.clone();
    let inertia = flange_body(&model, p, "payload")?;
    morc_robot::add_payload(&mut model, inertia.mass, inertia.com, inertia.rotational).map_err(typed)?;
    Ok((model, inertia.mass))
}

/// `{ mass = kg, com = {mm}, inertia = {…} }` (com and inertia in the flange's frame) as an
/// inertia in the last joint's frame; `what` names it in errors.
pub(crate) fn flange_body(model: &Model, p: &Table, what: &str) -> mlua::Result<Inertia> {
    let (_, flange_placement) = flange(model);
    let mass = number(p, "mass", None, what).map_err(|e| raise(ErrorKind::Robot, format!("{e} (kg)")))?;
    let com = vec3_mm(p, "com", what)?;
    let rotational = inertia_matrix(p, what)?;
    Ok(flange_placement.act_inertia(&Inertia::new(mass, com, rotational)))
}

/// `{ xyz = {mm}, rpy = {°} }` → the tool's placement at the flange.
pub(crate) fn tool_placement(tool: &Table) -> mlua::Result<Se3> {
    keys::check(tool, "in the tool", &["xyz", "rpy"], 0).map_err(mlua::Error::runtime)?;
    tool_frame_of(tool)
}

/// The placement at the flange of a table's `xyz` (mm) and `rpy` (°), its keys checked by the caller.
pub(crate) fn tool_frame_of(tool: &Table) -> mlua::Result<Se3> {
    let xyz = vec3_mm(tool, "xyz", "tool")?;
    let rpy = match tool.get::<mlua::Value>("rpy")? {
        mlua::Value::Nil => vec![0.0; 3],
        v => numbers(v, 3, "tool.rpy (degrees)")?,
    };
    Ok(Se3::new(rotation_from_rpy(rpy[0].to_radians(), rpy[1].to_radians(), rpy[2].to_radians()), xyz))
}

/// `robot` with its tool at `placement` from the flange (a new robot: its own live model).
pub(crate) fn tooled_robot(robot: &Robot, placement: &Se3, origin: &str) -> mlua::Result<Robot> {
    let tooled = |model: &Model| {
        let mut model = model.clone();
        let (_, flange_placement) = flange(&model);
        morc_robot::set_tool(&mut model, flange_placement.compose(placement));
        model
    };
    let mut r = Robot::new(&robot.name, tooled(&robot.unloaded), robot.joints.clone(), origin).map_err(typed)?;
    (r.cartesian, r.home) = (robot.cartesian, robot.home.clone());
    (r.groups, r.ft, r.hand) = (robot.groups.clone(), robot.ft.clone(), robot.hand.clone());
    Ok(r.loaded(tooled(&robot.model), robot.payload))
}

/// Degrees (mm for prismatic joints) → SI, for the robot's joints.
pub(crate) fn joint_vector(robot: &Robot, v: mlua::Value, what: &str) -> mlua::Result<Vec<f64>> {
    let x = numbers(v, robot.dof(), &format!("{what} (degrees, mm for prismatic joints; one per joint)"))?;
    Ok(x.into_iter().enumerate().map(|(i, a)| a * Units::LUA.joint(robot, i)).collect())
}

/// A role a device plays for the robot in its file's `bus = { … }`: the class it takes by
/// default, and what a class must be to fill it.
struct BusRole {
    name: &'static str,
    default_class: &'static str,
    kind: &'static str,
    fits: fn(&DeviceClassChoice) -> bool,
}

const BUS_ROLES: [BusRole; 2] = [
    BusRole { name: "ft", default_class: "ati_axia", kind: "a force/torque sensor", fits: |c| matches!(c, DeviceClassChoice::ForceTorque { .. }) },
    BusRole { name: "safety", default_class: "safety_plc", kind: "a safety PLC", fits: |c| matches!(c, DeviceClassChoice::SafetyPlc) },
];

/// The devices of a robot file's `bus = { ft = { slave = 8, class = "ati_axia" }, safety = { slave = 9 } }`:
/// each bound by its position on the line, which no drive may hold, or by its identity
/// (`vendor = 0x…, product = 0x…`).
fn bus_devices(robot: &Robot, bus: &Table) -> Result<Vec<morc_robot::BusDevice>, String> {
    let name = &robot.name;
    keys::check(bus, &format!("in the bus of robot '{name}'"), &BUS_ROLES.map(|r| r.name), 0)?;
    let mut devices: Vec<morc_robot::BusDevice> = Vec::new();
    for BusRole { name: role, default_class, kind, fits } in BUS_ROLES {
        let Some(d) = bus.get::<Option<Table>>(role).map_err(|_| format!("robot '{name}': bus.{role} must be a table {{ slave = N, class = \"…\" }}"))? else { continue };
        let what = format!("robot '{name}', bus.{role}");
        keys::check(&d, &format!("in the {role} device of robot '{name}'"), &["slave", "vendor", "product", "class"], 0)?;
        let whole = |key: &str, max: i64, meaning: &str| -> Result<Option<u32>, String> {
            match d.get::<mlua::Value>(key).map_err(|e| e.to_string())? {
                mlua::Value::Nil => Ok(None),
                mlua::Value::Integer(n) if (0..=max).contains(&n) => Ok(Some(n as u32)),
                other => Err(format!("{what}: {key} must be {meaning}, got {}", other.to_string().unwrap_or_else(|_| other.type_name().into()))),
            }
        };
        let slave = whole("slave", i64::from(u16::MAX), "the device's position on the line (0 = first after the master)")?;
        let vendor = whole("vendor", i64::from(u32::MAX), "the device's vendor id (0x1018:01, as `morc bus scan` shows it)")?;
        let product = whole("product", i64::from(u32::MAX), "the device's product code (0x1018:02, as `morc bus scan` shows it)")?;
        let at = match (slave, vendor, product) {
            (Some(slave), None, None) => DeviceAt::Slave(slave),
            (None, Some(vendor_id), Some(product_code)) => DeviceAt::Identity { vendor_id, product_code },
            _ => return Err(format!("{what}: give the device's position (slave = N) or its identity (vendor = 0x…, product = 0x…), one of the two")),
        };
        if let DeviceAt::Slave(slave) = at {
            if let Some(j) = robot.joints.iter().find(|j| j.drive.slave == slave) {
                return Err(format!("{what}: slave {slave} is joint {}'s drive", j.name));
            }
        }
        if let Some(other) = devices.iter().find(|o| o.at == at) {
            return Err(format!("{what}: {at} is already bus.{}", other.role));
        }
        let class = d.get::<Option<String>>("class").map_err(|_| format!("{what}: class must be a string"))?.unwrap_or_else(|| default_class.to_string());
        let choice = DeviceClassChoice::by_name(&class).map_err(|e| format!("{what}: {e}"))?;
        if !fits(&choice) {
            let fitting: Vec<String> = DeviceClassChoice::NAMES.iter().filter(|n| DeviceClassChoice::by_name(n).is_ok_and(|c| fits(&c))).map(|n| format!("\"{n}\"")).collect();
            return Err(format!("{what}: class \"{class}\" is not {kind}; bus.{role} takes {}", fitting.join(", ")));
        }
        devices.push(morc_robot::BusDevice { role: role.to_string(), at, class });
    }
    Ok(devices)
}
