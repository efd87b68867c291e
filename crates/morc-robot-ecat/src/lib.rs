//! A morc robot on EtherCAT drives.
//!
//! The simulated arm behind the virtual EtherCAT segment's drives: each simulated CiA 402
//! drive of the segment moves one joint of one shared [`SimulatedRobot`] (forward dynamics,
//! servo loop, torque limit), in the drive's own units (encoder counts through the joint's
//! gear, direction and offset). So a robot program runs through the real master, real frames
//! and the drives' state machines onto the same plant the direct simulation uses.
//!
//! The segment steps its drives one after the other each cycle; every joint reports the arm's
//! state from the start of the cycle, and the arm integrates once, when the last joint has
//! handed in its command.

#![deny(clippy::missing_safety_doc)]
#![warn(missing_docs)]

use std::sync::{Arc, Mutex};

use morc_ecat::base::BusConfig;
use morc_ecat::devices::DriveConfig;
use morc_ecat::devices::{DeviceClassChoice, DriveMode};
use morc_ecat::master::Link;
use morc_ecat::virtual_bus::{sim_segment_with_plants, SimDevice, SimSegmentConfig};
use morc_ecat_sim::{DrivePlant, PlantActual, PlantCommand, SensorFeed};
use morc_kernel::{Base, Commands};
use morc_kernel::{Value, ValueType};

use morc_robot::{CommandMode, DeviceAt, Robot, SimulatedRobot};

/// The arm all joints share, with the commands of the current cycle.
struct SharedArm {
    plant: SimulatedRobot,
    /// q_cmd, qd_ff, tau_ff (rad, rad/s, N·m) as the plant's inputs.
    commands: Vec<Value>,
    /// Measured q, qd, tau (and the plant's other outputs) at the start of the cycle.
    sensed: Vec<Value>,
    holding: Vec<bool>,
    /// Whether a drive commanded torque this cycle — in torque mode, or a torque offset
    /// (0x60B2) with its position or velocity — (tau_ff is then driven).
    torque_driven: bool,
    /// Whether a drive is in quick stop or fault reaction this cycle.
    quick_stop: bool,
    handed_in: usize,
    tick: u64,
    /// The segment's F/T sensor and digital inputs, fed from the plant's wrist sensor and
    /// handle (a robot with `ft`).
    feed: Option<Arc<SensorFeed>>,
}

impl SharedArm {
    fn integrate(&mut self) {
        // CSP drives command positions (with the velocity feed-forward they derive); the torque
        // input is driven only while a drive is in torque mode or gets a torque offset, so
        // otherwise the servo's integrator keeps carrying gravity (taking tau_ff as driven would
        // hand gravity over to a feed-forward of 0 and drop the arm at the start of every first
        // motion).
        let driven = [true, true, self.torque_driven];
        let all_holding = self.holding.iter().all(|h| *h);
        if all_holding && (self.quick_stop || !self.plant.is_still()) {
            // A drive's quick stop or fault reaction brakes the arm (the drive waits for
            // standstill), and the arm goes on braking until it stands; a still arm holding
            // between assemblies lets the plant's time stand still.
            let _ = self.plant.stop(self.tick);
        } else {
            let commands = if all_holding { None } else { Some(Commands::new(&self.commands, &driven)) };
            // A fault of the plant (non-finite command) holds it; the drive reports what it measures.
            let _ = self.plant.actuate(self.tick, commands);
        }
        self.tick += 1;
        let _ = self.plant.sense(self.tick, &mut self.sensed);
        if let (Some(feed), [_, _, _, ft, enable, button, ..]) = (&self.feed, &self.sensed[..]) {
            // What the wrist sensor reads goes onto the segment's F/T device; the handle's
            // enabling switch to the safety PLC and channel 1 of the digital inputs, its button
            // to channel 2.
            feed.set_wrench(ft.as_slice());
            feed.set_bits(u32::from(matches!(enable, Value::Boolean(true))) | u32::from(matches!(button, Value::Boolean(true))) << 1);
        }
        self.handed_in = 0;
        self.torque_driven = false;
        self.quick_stop = false;
    }
}

/// One joint of the shared arm, as a drive's mechanics.
struct ArmJointPlant {
    arm: Arc<Mutex<SharedArm>>,
    joint: usize,
    drive: DriveConfig,
    actual: PlantActual,
}

/// Below this speed (motor revolutions per second: 0.6 rpm) a stopping joint counts as
/// standing (the drive state machine waits for standstill after a quick stop). A servo holding
/// against gravity never reaches exactly 0; one encoder count per second would never be met.
const STANDSTILL_REV_PER_S: f64 = 0.01;

impl ArmJointPlant {
    fn counts_per_rad(&self) -> f64 {
        let sign = if self.drive.reversed { -1.0 } else { 1.0 };
        sign * self.drive.counts_per_rev * self.drive.gear / std::f64::consts::TAU
    }

    /// A drive torque in per mille of rated motor torque, as joint torque (N·m).
    fn joint_torque(&self, per_mille: f64) -> f64 {
        per_mille * 1e-3 * self.drive.rated_torque * self.drive.gear * self.counts_per_rad().signum()
    }
}

impl DrivePlant for ArmJointPlant {
    fn step(&mut self, command: PlantCommand, dt: f64) -> PlantActual {
        let k = self.counts_per_rad();
        let mut arm = self.arm.lock().unwrap_or_else(|e| e.into_inner());
        let j = self.joint;
        let (q, qd, tau) = (arm.sensed[0].as_slice()[j], arm.sensed[1].as_slice()[j], arm.sensed[2].as_slice()[j]);
        let stopping = matches!(command, PlantCommand::Hold | PlantCommand::Stop);
        arm.quick_stop |= matches!(command, PlantCommand::Stop);
        let velocity = (qd * k).abs() < STANDSTILL_REV_PER_S * self.drive.counts_per_rev && stopping;
        self.actual = PlantActual {
            position: (q - self.drive.offset) * k,
            velocity: if velocity { 0.0 } else { qd * k },
            torque: tau / (self.drive.rated_torque * self.drive.gear) * 1e3 * k.signum(),
        };
        let was_holding = arm.holding[j];
        arm.holding[j] = stopping;
        let [q_cmd, qd_ff, tau_ff] = &mut arm.commands[..] else { unreachable!("three commands") };
        let (q_cmd, qd_ff, tau_ff) = (&mut q_cmd.as_mut_slice()[j], &mut qd_ff.as_mut_slice()[j], &mut tau_ff.as_mut_slice()[j]);
        match command {
            // As servo drives do in CSP: the velocity feed-forward is the slope of the targets.
            // The torque offset (0x60B2) adds to the servo's torque, as in a servo drive.
            PlantCommand::Position { target: counts, torque_offset } => {
                let target = counts / k + self.drive.offset;
                *qd_ff = if was_holding || dt <= 0.0 { 0.0 } else { (target - *q_cmd) / dt };
                (*q_cmd, *tau_ff) = (target, self.joint_torque(torque_offset));
                arm.torque_driven |= torque_offset != 0.0;
            }
            PlantCommand::Velocity { target: counts_per_s, torque_offset } => {
                if was_holding {
                    *q_cmd = q;
                }
                *qd_ff = counts_per_s / k;
                *q_cmd += *qd_ff * dt;
                *tau_ff = self.joint_torque(torque_offset);
                arm.torque_driven |= torque_offset != 0.0;
            }
            // The drive's torque command adds to holding the position it had (the simulated
            // drive keeps its position loop; a pure torque mode would let the arm fall).
            PlantCommand::Torque(per_mille) => {
                if was_holding {
                    *q_cmd = q;
                }
                (*qd_ff, *tau_ff) = (0.0, self.joint_torque(per_mille));
                arm.torque_driven = true;
            }
            PlantCommand::Hold | PlantCommand::Stop => {
                if !was_holding {
                    *q_cmd = q;
                }
                (*qd_ff, *tau_ff) = (0.0, 0.0);
            }
        }
        arm.handed_in += 1;
        if arm.handed_in == arm.holding.len() {
            arm.integrate();
        }
        self.actual
    }

    fn actual(&self) -> PlantActual {
        self.actual
    }
}

/// How the master scales and runs joint `j`'s drive: the robot definition's drive mapping
/// (counts = (q·direction·gear/2π + offset)·counts), its mode (csp, csv, cst) and the motor's
/// rated torque — when not given, a third of the joint's torque limit seen at the motor, so the
/// limit is 3000 ‰ (a servo motor's peak). An error where the robot file wires no drive to the
/// joint (no `counts`).
pub fn drive_config(robot: &Robot, joint: usize) -> Result<DriveConfig, String> {
    let j = &robot.joints[joint];
    let Some(counts) = j.drive.counts else {
        return Err(format!(
            "robot '{}', joint {}: no drive is wired to it: give drive = {{ slave = N, gear = G, counts = C }} in the robot file to run it on a bus (counts: the encoder's counts per motor turn, 2^17, 2^19 or 2^20 are usual)",
            robot.name, j.name
        ));
    };
    let gear = j.drive.gear.abs();
    let reversed = (j.drive.direction * j.drive.gear.signum()) < 0.0;
    let sign = if reversed { -1.0 } else { 1.0 };
    Ok(DriveConfig {
        counts_per_rev: counts,
        gear,
        reversed,
        // Joint position at 0 counts: q·dir·gear/2π + offset = 0.
        offset: -j.drive.offset * std::f64::consts::TAU / (sign * gear),
        rated_torque: j.drive.rated_torque.unwrap_or(j.limits.torque / gear / 3.0),
        mode: match j.drive.mode {
            CommandMode::Position => DriveMode::Csp,
            CommandMode::Velocity => DriveMode::Csv,
            CommandMode::Torque => DriveMode::Cst,
        },
        parameters: j.drive.parameters.iter().map(|p| morc_ecat::devices::SdoWrite::new(p.index, p.sub, p.value)).collect(),
        ..DriveConfig::default()
    })
}

/// The bus configuration of `robot`'s line, cycled every `period` s: each joint's drive at
/// its slave position, scaled and run as [`drive_config`] says, its ports in the robot's joint
/// order whatever the line's, and the devices of its robot file's `bus = { … }` run by the
/// class each names.
pub fn bus_config(robot: &Robot, period: f64) -> Result<BusConfig, String> {
    let mut config = BusConfig { period, ..Default::default() };
    for j in 0..robot.dof() {
        let drive = drive_config(robot, j)?;
        drive.check().map_err(|e| format!("robot '{}', joint {}: {e}", robot.name, robot.joints[j].name))?;
        config.drive_overrides.push((robot.joints[j].drive.slave as usize, drive));
    }
    config.drive_order = Some(robot.joints.iter().map(|j| j.drive.slave as usize).collect());
    for d in &robot.bus {
        let class = DeviceClassChoice::by_name(&d.class).map_err(|e| format!("robot '{}', bus.{}: {e}", robot.name, d.role))?;
        match d.at {
            DeviceAt::Slave(slave) => config.class_overrides.push((slave as usize, class)),
            DeviceAt::Identity { vendor_id, product_code } => config.class_by_identity.push(((vendor_id, product_code), class)),
        }
    }
    Ok(config)
}

/// The simulated robot cell for `robot` at `q0`: the segment of `SimSegmentConfig::cell` with
/// one drive per joint moving the simulated arm, each at the slave the robot file gives it (the
/// cell's other devices fill the line around them, in their order), and the bus configuration
/// that scales each drive as the robot definition maps it: a wiring mistake fails here as it
/// would on the real line.
///
/// With elastic gears the drives move the motors; the third value then gives the bus the links'
/// positions as well ([`SimulatedLinks`]).
pub fn simulated_cell(robot: Arc<Robot>, q0: &[f64], period: f64) -> Result<(Link, BusConfig, Option<SimulatedLinks>), String> {
    let n = robot.dof();
    let config = bus_config(&robot, period)?;
    let mut plant = SimulatedRobot::new(robot.clone(), q0, period)?;
    // All the plant's outputs (a robot with a wrist sensor has more than q, qd, tau).
    let mut sensed: Vec<Value> = morc_kernel::Base::info(&plant).outputs.iter().map(|p| Value::zero(p.ty)).collect();
    let _ = plant.sense(0, &mut sensed);
    let mut commands: Vec<Value> = (0..3).map(|_| Value::zero(ValueType::Vector(n))).collect();
    commands[0].as_mut_slice().copy_from_slice(q0);
    let feed = robot.ft.as_ref().map(|_| Arc::new(SensorFeed::default()));
    let elastic = plant.elastic_substeps().is_some();
    let arm = Arc::new(Mutex::new(SharedArm { plant, commands, sensed, holding: vec![true; n], torque_driven: false, quick_stop: false, handed_in: 0, tick: 0, feed: feed.clone() }));
    let links = elastic.then(|| SimulatedLinks { arm: arm.clone(), n });
    // One plant per joint, in joint order (the configuration's drives are in joint order too).
    let plants: Vec<Box<dyn DrivePlant>> = config
        .drive_overrides
        .iter()
        .enumerate()
        .map(|(joint, (_, drive))| {
            let mut plant = ArmJointPlant { arm: arm.clone(), joint, drive: drive.clone(), actual: PlantActual::default() };
            // The encoders read where the arm is before the first cycle.
            plant.actual.position = (q0[joint] - drive.offset) * plant.counts_per_rad();
            Box::new(plant) as Box<dyn DrivePlant>
        })
        .collect();
    // The drives and the robot file's bus devices where it says they are (one bound by
    // identity is found wherever the cell has it).
    let drives = robot.joints.iter().enumerate().map(|(joint, j)| (SimDevice::Drive(joint), j.drive.slave as usize));
    let devices = robot.bus.iter().filter_map(|d| match (d.class.as_str(), d.at) {
        ("ati_axia", DeviceAt::Slave(slave)) => Some((SimDevice::ForceTorque, slave as usize)),
        ("safety_plc", DeviceAt::Slave(slave)) => Some((SimDevice::SafetyPlc, slave as usize)),
        _ => None,
    });
    let placed = drives.chain(devices).collect();
    let cell = SimSegmentConfig { sensor_feed: feed, placed, ..SimSegmentConfig::cell(n) };
    // Encoders and grippers come last, after the positions a robot file can name.
    let positions = cell.device_count() - cell.encoders - cell.grippers;
    if let Some(j) = robot.joints.iter().find(|j| j.drive.slave as usize >= positions) {
        return Err(format!(
            "robot '{}', joint {}: drive slave {} is past the simulated line, whose coupler, {n} drives and terminals take slaves 0 to {}: number the drives as `morc bus scan` shows the real line",
            robot.name,
            j.name,
            j.drive.slave,
            positions - 1
        ));
    }
    let segment = sim_segment_with_plants(&cell, plants).map_err(|e| format!("robot '{}' on the simulated line: {e}", robot.name))?;
    Ok((Link::Simulated(segment), config, links))
}

/// Ports a bus shows beside its own, computed from them or from the simulated cell each cycle.
trait ExtraPorts: Send {
    /// Fills `extra` (the added ports, in the order they were declared) after the bus sensed `own`.
    fn sense(&mut self, own: &[Value], extra: &mut [Value]);
}

/// A bus with extra ports after its own ([`ExtraPorts`]); everything else is the bus's.
struct WithPorts<E: ExtraPorts> {
    bus: Box<dyn Base>,
    info: morc_kernel::ComponentInfo,
    /// How many outputs are the bus's own.
    own: usize,
    extra: E,
}

impl<E: ExtraPorts + 'static> WithPorts<E> {
    /// `bus` with `ports` added after its own outputs, filled by `extra`.
    fn wrap(bus: Box<dyn Base>, ports: Vec<morc_kernel::PortInfo>, extra: E) -> Box<dyn Base> {
        let own = bus.info().outputs.len();
        let info = ports.into_iter().fold(bus.info().clone(), |info, p| info.output(p));
        Box::new(WithPorts { bus, info, own, extra })
    }
}

impl<E: ExtraPorts> Base for WithPorts<E> {
    fn name(&self) -> &str {
        self.bus.name()
    }
    fn info(&self) -> &morc_kernel::ComponentInfo {
        &self.info
    }
    fn sense(&mut self, tick: u64, outputs: &mut [Value]) -> morc_kernel::Step {
        let step = self.bus.sense(tick, &mut outputs[..self.own]);
        let (own, extra) = outputs.split_at_mut(self.own);
        self.extra.sense(own, extra);
        step
    }
    fn actuate(&mut self, tick: u64, commands: Option<Commands>) -> morc_kernel::Step {
        self.bus.actuate(tick, commands)
    }
    fn stop(&mut self, tick: u64) -> morc_kernel::Step {
        self.bus.stop(tick)
    }
    fn is_still(&self) -> bool {
        self.bus.is_still()
    }
    fn check_takeover(&self, commands: Commands) -> Result<(), (usize, String)> {
        self.bus.check_takeover(commands)
    }
    fn diagnostics(&self) -> Option<std::sync::Arc<dyn morc_kernel::BusDiagnostics>> {
        self.bus.diagnostics()
    }
    fn latency(&self) -> u32 {
        self.bus.latency()
    }
}

/// The simulated cell's links behind elastic gears: what a tracker sees, which no drive reports.
pub struct SimulatedLinks {
    arm: Arc<Mutex<SharedArm>>,
    n: usize,
}

impl SimulatedLinks {
    /// `bus` with the outputs `q_link` and `qd_link` of the simulated arm (the plant's own, as
    /// the direct simulation gives them), so a program with a tracker runs unchanged on `--bus sim`.
    pub fn wrap(self, bus: Box<dyn Base>) -> Box<dyn Base> {
        let ty = ValueType::Vector(self.n);
        let ports = vec![
            morc_kernel::PortInfo::new("q_link", ty).unit("rad").doc("the simulated arm's links behind the elastic gears (what a tracker sees)"),
            morc_kernel::PortInfo::new("qd_link", ty).unit("rad/s").doc("their velocities"),
        ];
        WithPorts::wrap(bus, ports, self)
    }
}

impl ExtraPorts for SimulatedLinks {
    fn sense(&mut self, _own: &[Value], extra: &mut [Value]) {
        let arm = self.arm.lock().unwrap_or_else(|p| p.into_inner());
        // The plant's outputs: q, qd, tau, q_link, qd_link (an elastic arm has no wrist sensor).
        if let [.., q_link, qd_link] = &arm.sensed[..] {
            extra[0].as_mut_slice().copy_from_slice(q_link.as_slice());
            extra[1].as_mut_slice().copy_from_slice(qd_link.as_slice());
        }
    }
}

/// Where on the line the robot file's `bus = { … }` devices are: by their slave, or found by
/// their identity among the bus's `devices` (the bring-up has checked each identity is there once).
pub fn role_positions(robot: &Robot, devices: &[morc_ecat::master::DeviceInfo]) -> Vec<(String, usize)> {
    robot
        .bus
        .iter()
        .filter_map(|d| match d.at {
            DeviceAt::Slave(slave) => Some((d.role.clone(), slave as usize)),
            DeviceAt::Identity { vendor_id, product_code } => devices.iter().find(|i| (i.vendor_id, i.product_code) == (vendor_id, product_code)).map(|i| (d.role.clone(), i.position)),
        })
        .collect()
}

/// The robot's bus with the ports of its wrist sensor and hand-guiding handle under the names
/// the simulated robot gives them: `ft` (the F/T sensor the robot file's `bus.ft` places, else the
/// segment's first, N and N·m), `enable` (the enabling switch as the safety PLC of `bus.safety`, or
/// the segment's first, reports it, or channel 1 of the first digital input terminal on a bus
/// without one) and `button` (channel 2 of the digital inputs). So a program that guides the arm
/// runs unchanged on the simulated robot, `--bus sim` and real drives wired so.
pub struct WristPorts {
    /// Where among the bus's own outputs the F/T sensor's, the digital inputs' and the safety
    /// PLC's are.
    ft: usize,
    din: usize,
    safety: Option<usize>,
}

impl WristPorts {
    /// `bus` with the wrist's ports, or `bus` as it is when it has no F/T sensor or no digital
    /// inputs (then a program that needs them says so). `roles` are where the robot file's
    /// `bus = { … }` put its devices ([`role_positions`]): a role there names the device (`ft8`
    /// for `ft = { slave = 8 }`), and an error says so when the bus has no such port.
    pub fn wrap(bus: Box<dyn Base>, roles: &[(String, usize)]) -> Result<Box<dyn Base>, String> {
        let outputs = &bus.info().outputs;
        let numbered = |prefix: &str| outputs.iter().position(|p| p.name.strip_prefix(prefix).is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit())));
        // The device a role of the robot file names, else the segment's first of its kind.
        let device = |role: &str| -> Result<Option<usize>, String> {
            match roles.iter().find(|(r, _)| r == role) {
                Some((_, position)) => {
                    let name = format!("{role}{position}");
                    outputs.iter().position(|p| p.name == name).map(Some).ok_or_else(|| {
                        let found: Vec<&str> = outputs.iter().map(|p| p.name.as_str()).filter(|n| n.starts_with(role)).collect();
                        format!("bus.{role} is device {position}, but the bus has no port {name} there (its {role} ports: {})", if found.is_empty() { "none".to_string() } else { found.join(", ") })
                    })
                }
                None => Ok(numbered(role)),
            }
        };
        let (ft, safety) = (device("ft")?, device("safety")?);
        let (Some(ft), Some(din)) = (ft, numbered("din")) else { return Ok(bus) };
        let ports = vec![
            morc_kernel::PortInfo::wrench("ft").doc("the wrist F/T sensor (bus.ft of the robot file, else the bus's first F/T device)"),
            morc_kernel::PortInfo::new("enable", ValueType::Boolean).doc("the handle's enabling switch (through the safety PLC; else digital input channel 1)"),
            morc_kernel::PortInfo::new("button", ValueType::Boolean).doc("the handle's teach button (digital input channel 2)"),
        ];
        Ok(WithPorts::wrap(bus, ports, WristPorts { ft, din, safety }))
    }
}

impl ExtraPorts for WristPorts {
    fn sense(&mut self, own: &[Value], extra: &mut [Value]) {
        extra[0].as_mut_slice().copy_from_slice(own[self.ft].as_slice());
        let bits = match own[self.din] {
            Value::Integer(b) => b,
            _ => 0,
        };
        let enabling = match self.safety.map(|i| &own[i]) {
            Some(Value::Integer(status)) => status & i64::from(morc_ecat::devices::safety_plc::status::ENABLING_SWITCH) != 0,
            _ => bits & 1 != 0,
        };
        extra[1] = Value::Boolean(enabling);
        extra[2] = Value::Boolean(bits & 2 != 0);
    }
}
