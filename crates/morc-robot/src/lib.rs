//! Robots: an arm's [`Model`] plus what the controller needs beyond it — how each joint maps
//! to its drive (bus position, gear, encoder counts, offset, direction) and the joint limits
//! the controller enforces. [`SimulatedRobot`] is the plant that stands in for the arm; the
//! components in [`components`] (trajectory, feed-forward, monitor) are built around a robot.

#![deny(clippy::missing_safety_doc)]
#![warn(missing_docs)]

pub mod components;
pub mod elastic;
mod error;
pub mod guard;
mod kinematics;
mod live;
pub mod operator;
mod sim_hand;
mod simulated;

use std::sync::Arc;

use nalgebra::{Matrix3, Vector3};

pub use error::RobotError;
pub use guard::{Braking, CommandGuard, GuardedBase};
pub use kinematics::RobotKinematics;
pub use live::{LiveModel, Published};
use morc_model::{Data, Frame, FrameIndex, FrameKind, Inertia, JointKind, JointLimits, Model, Se3};
pub use operator::Operator;
pub use sim_hand::{FtSensor, HandAction, HandOutput, HandScript, HandSegment, HandState, Noise, SimFtSpec};
pub use simulated::{DriveGains, SimulatedRobot};

/// How a joint maps to its drive: `drive counts = (q · direction · gear / 2π + offset) · counts`
/// for a revolute joint (q in rad, offset in motor turns).
#[derive(Clone, Debug, PartialEq)]
pub struct JointDrive {
    /// Position on the bus (EtherCAT slave index, 1-based).
    pub slave: u32,
    /// Motor turns per joint turn.
    pub gear: f64,
    /// Encoder counts per motor turn; `None` where the robot file describes no drive for the
    /// joint (the direct simulation needs none; a bus refuses the joint).
    pub counts: Option<f64>,
    /// Motor turns at q = 0.
    pub offset: f64,
    /// +1 or −1: whether motor and joint turn the same way.
    pub direction: f64,
    /// How the bus commands the drive: position, velocity or torque (CiA 402's CSP, CSV, CST).
    pub mode: CommandMode,
    /// The motor's rated torque (N·m), the unit of the drive's torque objects; `None`: a third
    /// of the joint's torque limit seen at the motor (a servo motor's peak is about 3×).
    pub rated_torque: Option<f64>,
    /// The drive's own parameters, written over CoE when the bus comes up (its loop gains,
    /// max torque…), in order.
    pub parameters: Vec<DriveParameter>,
}

/// One of a drive's own parameters: its object, as the drive's manual names it, and the value
/// written there (of the object's width).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DriveParameter {
    /// Object index (0x6072 max torque; a vendor's gains at 0x2000…0x5FFF).
    pub index: u16,
    /// Subindex.
    pub sub: u8,
    /// The value, of the object's type.
    pub value: morc_ecat_wire::data_type::SdoValue,
}

impl Default for JointDrive {
    /// Slave 1, no encoder counts given, direct drive, commanded by position.
    fn default() -> Self {
        JointDrive { slave: 1, gear: 1.0, counts: None, offset: 0.0, direction: 1.0, mode: CommandMode::Position, rated_torque: None, parameters: Vec::new() }
    }
}

/// How the bus commands a joint's drive: CiA 402's cyclic synchronous modes. The bus base's
/// command input follows it (`q_cmd`, `qd_cmd` or `tau_cmd`, over the joints in that mode).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CommandMode {
    /// Cyclic synchronous position (csp): the joint follows `q_cmd`.
    #[default]
    Position,
    /// Cyclic synchronous velocity (csv): `qd_cmd`.
    Velocity,
    /// Cyclic synchronous torque (cst): `tau_cmd`.
    Torque,
}

impl CommandMode {
    /// The mode by its robot-file name: "csp", "csv" or "cst".
    pub fn parse(name: &str) -> Result<CommandMode, String> {
        match name {
            "csp" => Ok(CommandMode::Position),
            "csv" => Ok(CommandMode::Velocity),
            "cst" => Ok(CommandMode::Torque),
            _ => Err(format!("unknown drive mode '{name}': use \"csp\" (position), \"csv\" (velocity) or \"cst\" (torque)")),
        }
    }
    /// Its robot-file name.
    pub fn name(self) -> &'static str {
        match self {
            CommandMode::Position => "csp",
            CommandMode::Velocity => "csv",
            CommandMode::Torque => "cst",
        }
    }
}

/// A device on the robot's bus beside its drives, bound by its position on the line or by its
/// identity: the wrist's F/T sensor, the cell's safety PLC.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BusDevice {
    /// What it is to the robot ("ft", "safety").
    pub role: String,
    /// Where it is on the line.
    pub at: DeviceAt,
    /// The device class the master runs it with ("ati_axia", "safety_plc").
    pub class: String,
}

/// Where a device of the robot's bus is: a position on the line, or an identity (the one device
/// on the line with that vendor id and product code, wherever the cell's wiring put it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceAt {
    /// Its position on the line (EtherCAT slave index, as the joints' drives count).
    Slave(u32),
    /// Its identity object's vendor id and product code (0x1018:01, :02).
    Identity {
        /// Vendor id.
        vendor_id: u32,
        /// Product code.
        product_code: u32,
    },
}

impl std::fmt::Display for DeviceAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceAt::Slave(n) => write!(f, "slave {n}"),
            DeviceAt::Identity { vendor_id, product_code } => write!(f, "vendor 0x{vendor_id:X}, product 0x{product_code:X}"),
        }
    }
}

/// The joints' drives on the line: each at a slave of its own, none at slave 0 (the line's
/// first device, the coupler of a drive line: drives count from 1).
fn check_wiring(robot: &str, joints: &[RobotJoint]) -> Result<(), String> {
    for (i, j) in joints.iter().enumerate() {
        if j.drive.slave == 0 {
            return Err(format!("robot '{robot}', joint {}: drive slave = 0 is the line's first device (its coupler); drives count from 1, as `morc bus scan` numbers them", j.name));
        }
        if let Some(other) = joints[..i].iter().find(|o| o.drive.slave == j.drive.slave) {
            return Err(format!(
                "robot '{robot}': joints {} and {} are both at drive slave {}: give each joint the slave its drive has on the line (`morc bus scan` lists them)",
                other.name, j.name, j.drive.slave
            ));
        }
    }
    Ok(())
}

/// Limits the controller enforces on one joint, in SI units: rad, rad/s, rad/s², N·m for a revolute joint; m, m/s, m/s², N for a prismatic one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// Lowest position (rad, or m for a prismatic joint).
    pub lower: f64,
    /// Highest position (rad or m).
    pub upper: f64,
    /// Largest speed in either direction (rad/s or m/s).
    pub velocity: f64,
    /// Largest acceleration in either direction (rad/s² or m/s²).
    pub acceleration: f64,
    /// Largest drive torque (N·m, or N for a prismatic joint).
    pub torque: f64,
}

/// Limits of the tool's motion in Cartesian moves (m/s, m/s², rad/s, rad/s²).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CartesianLimits {
    /// Largest tool speed along the path (m/s).
    pub velocity: f64,
    /// Largest tool acceleration along the path (m/s²).
    pub acceleration: f64,
    /// Largest tool rotation speed (rad/s).
    pub angular_velocity: f64,
    /// Largest tool rotation acceleration (rad/s²).
    pub angular_acceleration: f64,
}

impl Default for CartesianLimits {
    /// Conservative for a medium industrial arm: 1 m/s, 4 m/s², 180°/s, 720°/s².
    fn default() -> Self {
        CartesianLimits { velocity: 1.0, acceleration: 4.0, angular_velocity: std::f64::consts::PI, angular_acceleration: 4.0 * std::f64::consts::PI }
    }
}

/// One joint of a robot: its name in the model, how it maps to its drive, and its limits.
#[derive(Clone, Debug, PartialEq)]
pub struct RobotJoint {
    /// As the definition names it (`"A1"`), for messages; the model's joint at the same index moves it.
    pub name: String,
    /// How joint positions map to drive counts.
    pub drive: JointDrive,
    /// What the controller enforces on this joint.
    pub limits: Limits,
}

/// A robot: its model (with drive-train terms and payload already in it) and its joints.
#[derive(Clone, Debug)]
pub struct Robot {
    /// The robot's name, as the definition gives it.
    pub name: String,
    /// Kinematics and dynamics as loaded: drive-train terms, tool and payload included.
    pub model: Arc<Model>,
    /// One per degree of freedom, in model order.
    pub joints: Vec<RobotJoint>,
    /// The frame FK reports and Cartesian moves move: "tool", "tool0" or "flange", else the
    /// last frame on the last joint.
    pub tool_frame: FrameIndex,
    /// Limits of the tool's motion in Cartesian moves.
    pub cartesian: CartesianLimits,
    /// Where `home` moves (rad): the definition's `home`, else 0 clamped into the limits.
    pub home: Vec<f64>,
    /// Mass of the payload added with `with_payload` (kg), for the record.
    pub payload: Option<f64>,
    /// The model as it is now (payload changes at runtime), shared by the copies of this robot
    /// that `set_payload` makes and read by the real-time users each step.
    pub live: Arc<LiveModel>,
    /// The operator's override and pause, and what the running motion reports (shared by the
    /// copies of this robot, as `live`).
    pub operator: Arc<Operator>,
    /// The model without payload, which payloads are added to.
    pub unloaded: Arc<Model>,
    /// Where the definition came from (file:line), for error messages.
    pub origin: String,
    /// Named subsets of the joints that move on their own (the arms of a dual-arm robot).
    pub groups: Vec<RobotGroup>,
    /// The wrist force/torque sensor, if the robot has one.
    pub ft: Option<FtSensor>,
    /// The simulated operator's hand script, which the simulated plant follows (shared by the
    /// copies of this robot, as `live`).
    pub hand: Arc<Published<HandScript>>,
    /// The mass of the tool [`Robot::tool_changed`] connected (in the last joint's frame), which
    /// the next change cuts off again.
    pub tool_body: Option<Inertia>,
    /// Devices on its bus beside the drives (robot file `bus = { ft = { slave = … }, … }`).
    pub bus: Vec<BusDevice>,
}

/// A named subset of a robot's joints with a tool of its own, which moves on its own: one arm
/// of a dual-arm robot (joints it shares with another group, such as a platform, are
/// commanded by one group at a time).
#[derive(Clone, Debug, PartialEq)]
pub struct RobotGroup {
    /// Its name (`"left"`).
    pub name: String,
    /// Its joints (0-based indices into the robot's joints).
    pub joints: Vec<usize>,
    /// The frame its Cartesian moves and FK use.
    pub tool: FrameIndex,
}

impl Robot {
    /// A new robot like this one carrying a payload: `model` is `unloaded` with the payload added.
    pub fn loaded(&self, model: Model, payload: Option<f64>) -> Robot {
        let model = Arc::new(model);
        Robot { live: Arc::new(LiveModel::new(model.clone())), model, payload, ..self.clone() }
    }

    /// This robot keeping `other`'s live model: a tool change, which moves no mass, leaves the
    /// running plant and feed-forward as they are and the payload changes shared.
    pub fn sharing_live(self, other: &Robot) -> Robot {
        Robot { live: other.live.clone(), ..self }
    }

    /// This robot with `model` (same structure, another payload), published to the live slot so
    /// that running plants and feed-forward pick it up at their next step.
    pub fn swapped(&self, model: Model, payload: Option<f64>) -> Result<Robot, RobotError> {
        if model.nv() != self.model.nv() || model.frames().len() != self.model.frames().len() {
            return Err(RobotError::Structure(format!("robot '{}': the new model has another structure; only tool and payload may change at runtime", self.name)));
        }
        let model = Arc::new(model);
        self.live.publish(model.clone());
        Ok(Robot { model, payload, ..self.clone() })
    }

    /// Checks that joints and model agree (one joint per degree of freedom, sane limits).
    pub fn new(name: &str, mut model: Model, joints: Vec<RobotJoint>, origin: &str) -> Result<Robot, RobotError> {
        if joints.len() != model.nv() {
            return Err(RobotError::Definition(format!("{origin}: robot '{name}' lists {} joints but its model has {} ({})", joints.len(), model.nv(), model.joint_names()[1..].join(", "))));
        }
        for (i, j) in joints.iter().enumerate() {
            let l = &j.limits;
            let bad = |what: &str| Err(RobotError::Definition(format!("{origin}: robot '{name}', joint {}: {what}", j.name)));
            if l.lower.is_nan() || l.upper.is_nan() || l.lower >= l.upper {
                let (scale, unit) = joint_unit(model.joint_kinds().get(i + 1) == Some(&JointKind::Prismatic));
                return bad(&format!("position limits must be {{lower, upper}} with lower < upper, got {{{}{unit}, {}{unit}}}", l.lower * scale, l.upper * scale));
            }
            for (what, x) in [("vel", l.velocity), ("acc", l.acceleration), ("torque", l.torque)] {
                if x.is_nan() || x <= 0.0 {
                    return bad(&format!("limit '{what}' must be > 0, got {x}"));
                }
            }
            let d = &j.drive;
            let direction_ok = d.direction == 1.0 || d.direction == -1.0;
            let counts_ok = d.counts.is_none_or(|c| c.is_finite() && c > 0.0);
            if !(d.gear.is_finite() && d.gear != 0.0 && counts_ok && direction_ok) {
                return bad("drive needs gear ≠ 0, counts > 0 and direction ±1");
            }
        }
        check_wiring(name, &joints).map_err(|m| RobotError::Definition(format!("{origin}: {m}")))?;
        // The model keeps the robot's limits too, so that IK solves within them.
        for (index, j) in joints.iter().enumerate() {
            let limits = JointLimits { lower: j.limits.lower, upper: j.limits.upper, velocity: j.limits.velocity, effort: j.limits.torque };
            model.set_limits(index, limits);
        }
        // The simulated plant and the feed-forward need a mass matrix they can invert.
        model.check_mass_matrix().map_err(|source| RobotError::Model { context: format!("{origin}: robot '{name}'"), source })?;
        let home = joints.iter().map(|j| 0f64.clamp(j.limits.lower, j.limits.upper)).collect();
        // The tool: "tool", else the URDF conventions' flange "tool0"/"flange", else the last
        // frame on the last joint.
        let last_joint = model.njoints() - 1;
        let tool_frame = ["tool", "tool0", "flange"]
            .iter()
            .find_map(|n| model.frame_index(n))
            .or_else(|| model.frames().iter().rposition(|f| f.parent_joint == last_joint))
            .unwrap_or(model.frames().len() - 1);
        let model = Arc::new(model);
        let live = Arc::new(LiveModel::new(model.clone()));
        Ok(Robot {
            name: name.into(),
            unloaded: model.clone(),
            model,
            joints,
            tool_frame,
            cartesian: CartesianLimits::default(),
            payload: None,
            home,
            live,
            operator: Arc::default(),
            origin: origin.into(),
            groups: Vec::new(),
            ft: None,
            hand: Arc::new(Published::new(Arc::new(HandScript::default()))),
            tool_body: None,
            bus: Vec::new(),
        })
    }

    /// This robot with its tool changed, while the engine runs: the last tool's mass (if
    /// [`Robot::tool_changed`] connected one) cut off, `body` connected (the new tool's inertia in
    /// the last joint's frame; None: a massless tool), and the "tool" frame at `placement` (from
    /// the last joint). The mass goes to the live model, so a running plant and feed-forward
    /// carry the new tool from their next step; motions planned from here on use its frame.
    pub fn tool_changed(&self, placement: Se3, body: Option<Inertia>) -> Result<Robot, RobotError> {
        if let Some(why) = body.as_ref().and_then(Inertia::physical_error) {
            return Err(RobotError::Payload(format!("robot '{}': the tool: {why}", self.name)));
        }
        let last = self.model.njoints() - 1;
        let carrying = |model: &Model| {
            let mut model = model.clone();
            if let Some(old) = &self.tool_body {
                model.add_body_inertia(last, &Inertia::new(-old.mass, old.com, -old.rotational));
            }
            if let Some(new) = &body {
                model.add_body_inertia(last, new);
            }
            model
        };
        // The live model changes its masses only (its structure is what running components sized for).
        let live = carrying(&self.live.current());
        live.check_mass_matrix().map_err(|source| RobotError::Model { context: format!("robot '{}' with its new tool", self.name), source })?;
        let tooled = |model: &Model| {
            let mut model = carrying(model);
            set_tool(&mut model, placement);
            model
        };
        let unloaded = Arc::new(tooled(&self.unloaded));
        let model = Arc::new(tooled(&self.model));
        let tool_frame = model.frame_index("tool").unwrap_or(self.tool_frame);
        self.live.publish(Arc::new(live));
        Ok(Robot { model, unloaded, tool_frame, tool_body: body, ..self.clone() })
    }

    /// Number of joints (degrees of freedom).
    pub fn dof(&self) -> usize {
        self.joints.len()
    }

    /// Each joint's standstill speed on a base cycling every `period` seconds (rad/s, m/s for
    /// a prismatic joint; [`morc_kernel::standstill_speed`]): a share of its velocity limit,
    /// or a few encoder counts per cycle (the finest speed its drive can measure) if that is
    /// more. `noise` adds what the plant's own velocity dithers by per joint (empty: none).
    pub fn standstill_speeds(&self, period: f64, noise: &[f64]) -> Vec<f64> {
        self.joints
            .iter()
            .enumerate()
            .map(|(i, j)| {
                let counts_per_unit = j.drive.counts.unwrap_or(0.0) * j.drive.gear.abs() / std::f64::consts::TAU;
                let one_count = if counts_per_unit > 0.0 && period > 0.0 { 1.0 / (counts_per_unit * period) } else { 0.0 };
                morc_kernel::standstill_speed(j.limits.velocity, one_count.max(noise.get(i).copied().unwrap_or(0.0)))
            })
            .collect()
    }

    /// Whether joint `i` (0-based) slides (positions in m, shown in mm) rather than turns
    /// (positions in rad, shown in degrees).
    pub fn is_prismatic(&self, i: usize) -> bool {
        self.model.joint_kinds().get(i + 1) == Some(&JointKind::Prismatic)
    }

    /// A port carrying one value per joint, each element named after its joint and in its
    /// joint's SI unit: `revolute` ("rad", "N·m") for a turning joint, `prismatic` ("m", "N")
    /// for a sliding one.
    pub fn joint_port(&self, name: &str, revolute: &str, prismatic: &str) -> morc_kernel::PortInfo {
        let units: Vec<&str> = (0..self.dof()).map(|i| if self.is_prismatic(i) { prismatic } else { revolute }).collect();
        let names: Vec<&str> = self.joints.iter().map(|j| j.name.as_str()).collect();
        morc_kernel::PortInfo::new(name, morc_kernel::ValueType::Vector(self.dof())).units(&units).elements(&names)
    }

    /// The unit of joint `i` in a unit a parameter declares: for a per-joint unit ("rad|m",
    /// [`per_joint_unit`]) the revolute or prismatic one as the joint is; any other unit is
    /// every joint's.
    pub fn unit_of_joint<'a>(&self, declared: &'a str, i: usize) -> &'a str {
        match declared.split_once(PER_JOINT) {
            Some((revolute, prismatic)) => {
                if self.is_prismatic(i) {
                    prismatic
                } else {
                    revolute
                }
            }
            None => declared,
        }
    }

    /// Joint `i`'s position `x` (SI) as people read it: "12.50°", or "40.00 mm" for a prismatic joint.
    pub fn show(&self, i: usize, x: f64, decimals: usize) -> String {
        let (scale, unit) = joint_unit(self.is_prismatic(i));
        let text = format!("{:.decimals$}", x * scale);
        // A value that rounds to zero reads "0.00", not "-0.00".
        let text = if text.starts_with('-') && text[1..].chars().all(|c| c == '0' || c == '.') { text[1..].to_string() } else { text };
        format!("{text}{unit}")
    }

    /// Joint `i`'s velocity `v` (SI) as people read it: "°/s", or "mm/s" for a prismatic joint.
    pub fn show_rate(&self, i: usize, v: f64, decimals: usize) -> String {
        format!("{}/s", self.show(i, v, decimals))
    }

    /// Whether position command `next`, following `last` (and `before` it, when known) one bus
    /// period `dt` later, moves a joint past its velocity or acceleration limit: the first such
    /// joint and what it would do ("moves A5 at 409.1°/s, past its limit 330.0°/s"). Checks the
    /// first command of a controller swapped in on a running arm.
    pub fn command_past_limits(&self, dt: f64, before: Option<&[f64]>, last: &[f64], next: &[f64]) -> Option<(usize, String)> {
        for (i, joint) in self.joints.iter().enumerate() {
            let l = &joint.limits;
            let si = if self.is_prismatic(i) { "m" } else { "rad" };
            let v = (next[i] - last[i]) / dt;
            if v.abs() > l.velocity {
                let show = |x: f64| format!("{} ({x:.2} {si}/s)", self.show_rate(i, x, 1));
                return Some((i, format!("moves {} at {}, past its limit {}", joint.name, show(v), show(l.velocity))));
            }
            let v_before = before.map_or(0.0, |b| (last[i] - b[i]) / dt);
            let a = (v - v_before) / dt;
            if a.abs() > l.acceleration {
                let show = |x: f64| format!("{}/s² ({x:.1} {si}/s²)", self.show(i, x, 1));
                return Some((i, format!("accelerates {} at {}, past its limit {}", joint.name, show(a), show(l.acceleration))));
            }
        }
        None
    }

    /// The joint whose position limit `q` (rad) violates, if any.
    pub fn outside_limits(&self, q: &[f64]) -> Option<usize> {
        self.joints.iter().zip(q).position(|(j, &x)| !(x >= j.limits.lower && x <= j.limits.upper))
    }

    /// Placement of the tool frame at `q` (allocates a Data: not for the real-time path).
    pub fn fk(&self, q: &[f64]) -> Se3 {
        let mut data = Data::new(&self.model);
        morc_model::forward_kinematics_placements(&self.model, &mut data, q);
        morc_model::update_frame_placements(&self.model, &mut data);
        morc_model::frame_placement(&self.model, &data, self.tool_frame)
    }
}

/// What separates a per-joint unit's revolute and prismatic halves ("rad|m").
const PER_JOINT: char = '|';

/// The unit a parameter with a value per joint declares: each joint's own, `revolute` for a
/// turning joint and `prismatic` for a sliding one, written "rad|m" ([`Robot::unit_of_joint`]
/// reads it). Lua's numbers for such a parameter are degrees or millimetres, joint by joint.
pub fn per_joint_unit(revolute: &str, prismatic: &str) -> String {
    format!("{revolute}{PER_JOINT}{prismatic}")
}

/// Whether `unit` is a per-joint unit ([`per_joint_unit`]).
pub fn is_per_joint_unit(unit: &str) -> bool {
    unit.contains(PER_JOINT)
}

/// How a joint's SI values read: the factor from SI and the unit's symbol (with its space) —
/// degrees for a revolute joint, millimetres for a prismatic one, as Lua speaks them.
pub fn joint_unit(prismatic: bool) -> (f64, &'static str) {
    if prismatic {
        (1e3, " mm")
    } else {
        (180.0 / std::f64::consts::PI, "°")
    }
}

/// Adds a rigid payload (mass in kg, centre of mass in the last joint's frame, m) to the model.
pub fn add_payload(model: &mut Model, mass: f64, com: Vector3<f64>, rotational: Matrix3<f64>) -> Result<(), RobotError> {
    if !(mass >= 0.0 && mass.is_finite() && com.iter().all(|x| x.is_finite())) {
        return Err(RobotError::Payload(format!("payload mass must be ≥ 0 and finite and its com finite, got {mass} kg at {com:?}")));
    }
    let payload = Inertia::new(mass, com, rotational);
    if let Some(why) = payload.physical_error() {
        return Err(RobotError::Payload(format!("payload: {why}")));
    }
    let last = model.njoints() - 1;
    model.add_body_inertia(last, &payload);
    Ok(())
}

/// Adds (or replaces) the "tool" frame on the last joint; `placement` is from the last joint.
pub fn set_tool(model: &mut Model, placement: Se3) {
    let last = model.njoints() - 1;
    // Keep where the flange is (a DH model's "tool" is its flange) before the tool replaces it,
    // so that a later tool change is measured from the flange again.
    let has_flange = ["tool0", "flange"].iter().any(|n| model.frame_index(n).is_some_and(|f| model.frames()[f].parent_joint == last));
    if !has_flange {
        let flange = model.frame_index("tool").filter(|&f| model.frames()[f].parent_joint == last).map_or(Se3::identity(), |f| model.frames()[f].placement);
        model.set_frame(Frame { name: "flange".into(), parent_joint: last, placement: flange, kind: FrameKind::Operational });
    }
    model.set_frame(Frame { name: "tool".into(), parent_joint: last, placement, kind: FrameKind::Operational });
}
