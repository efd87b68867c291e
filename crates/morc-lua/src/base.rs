//! The one place the engine's base is chosen: six ideal axes by default, a robot's direct
//! simulation, or the EtherCAT bus (the simulated segment "sim" or a network interface), with
//! or without a robot's drives on it. `morc.start_engine`/`morc.use_robot`, the command line's
//! `--bus` (`morc run`, the REPL) and the default engine all open theirs here, so they agree on
//! the clock, the checks and the wrapping of each base.

use std::fmt;
use std::sync::Arc;

use morc_ecat::base::{BusBase, BusConfig};
use morc_ecat::virtual_bus::{clock_for, link_for, DEFAULT_DRIVES};
use morc_ecat::BusError;
use morc_kernel::{Base, ClockKind, Engine, EngineConfig, IdealAxes};
use morc_robot::{CommandMode, Robot, RobotError, SimulatedRobot};

/// What the engine is to run on.
#[derive(Clone)]
pub struct BaseRequest {
    /// The robot to put on the engine; none: six ideal axes, or bare drives on the bus.
    pub robot: Option<Arc<Robot>>,
    /// Where the robot starts (SI, one per joint, within its limits); unused without a robot.
    pub q0: Vec<f64>,
    /// The bus: "sim" (the simulated segment) or a network interface; none: no bus (the
    /// robot's direct simulation, or the ideal axes).
    pub bus: Option<String>,
    /// How many drives the simulated segment has when no robot gives them.
    pub drives: usize,
    /// The clock asked for (`clock =`), if any; else the engine's.
    pub clock: Option<ClockKind>,
    /// `morc check`: nothing real moves, so any bus is the simulated segment, on the virtual clock.
    pub checking: bool,
}

impl Default for BaseRequest {
    fn default() -> Self {
        BaseRequest { robot: None, q0: Vec::new(), bus: None, drives: DEFAULT_DRIVES, clock: None, checking: false }
    }
}

/// Why a base did not open.
#[derive(Debug)]
pub enum BaseError {
    /// The bus: its clock, link, configuration or bring-up, or the simulated segment.
    Bus(BusError),
    /// The robot's direct simulation would not start.
    Robot(RobotError),
    /// The robot cannot run on this base (a drive mode the direct simulation does not take).
    Refused(String),
}

impl fmt::Display for BaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BaseError::Bus(e) => e.fmt(f),
            BaseError::Robot(e) => e.fmt(f),
            BaseError::Refused(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for BaseError {}

impl From<BusError> for BaseError {
    fn from(e: BusError) -> Self {
        BaseError::Bus(e)
    }
}

/// Opens the base `request` asks for, and sets `config.clock` to the clock it runs on (a real
/// interface runs on the wall clock; `morc check` on the virtual one). `config.period` is the
/// period the base is cycled at.
pub fn open_base(request: &BaseRequest, config: &mut EngineConfig) -> Result<Box<dyn Base>, BaseError> {
    let bus = if request.checking { request.bus.as_ref().map(|_| "sim") } else { request.bus.as_deref() };
    config.clock = match bus {
        _ if request.checking => ClockKind::Virtual,
        Some(bus) => clock_for(bus, request.clock, config.clock)?,
        None => request.clock.unwrap_or(config.clock),
    };
    let period = config.period;
    let base = open_unguarded(request, bus, period)?;
    // Every command to a robot is checked against its limits, whoever wrote it.
    Ok(match &request.robot {
        // A bus's drives hold where they are when stopped: the guard brakes them first.
        Some(robot) => morc_robot::GuardedBase::wrap(robot.clone(), base, period, if bus.is_some() { morc_robot::Braking::Ramp } else { morc_robot::Braking::Base }),
        None => base,
    })
}

/// The base for `request` on `bus` (after `morc check`'s substitution), without the guard.
fn open_unguarded(request: &BaseRequest, bus: Option<&str>, period: f64) -> Result<Box<dyn Base>, BaseError> {
    Ok(match (bus, &request.robot) {
        // The robot's drives on the bus, through the real master: simulated (the arm behind the
        // virtual segment's drives) or a network interface (real drives, scaled as the robot
        // definition maps them).
        (Some(bus), Some(robot)) => {
            let (link, bus_config, links) = if bus == "sim" {
                // The virtual segment behind the robot's drives: its errors are the bus's.
                morc_robot_ecat::simulated_cell(robot.clone(), &request.q0, period).map_err(BusError::Sim)?
            } else {
                let link = link_for(bus, robot.dof())?;
                let bus_config = morc_robot_ecat::bus_config(robot, period).map_err(BusError::Config)?;
                (link, bus_config, None)
            };
            let mut base = BusBase::open(link, bus_config)?;
            base.set_standstill(robot.standstill_speeds(period, &[]));
            // A controller swapped in on the running arm is checked as on the simulated robot.
            let limits = robot.clone();
            base.set_takeover_check(robot.dof(), Box::new(move |before, last, next| limits.command_past_limits(period, before, last, next).map(|(_, what)| what)));
            base.set_description(&format!("{} ({})", robot.name, if bus == "sim" { "simulated, on the virtual EtherCAT segment".to_string() } else { format!("EtherCAT on {bus}") }));
            match links {
                Some(links) => links.wrap(Box::new(base)),
                None if robot.ft.is_some() => {
                    let roles = morc_robot_ecat::role_positions(robot, base.bus().devices());
                    morc_robot_ecat::WristPorts::wrap(Box::new(base), &roles).map_err(|e| BaseError::Refused(format!("robot '{}': {e}", robot.name)))?
                }
                None => Box::new(base),
            }
        }
        (Some(bus), None) => Box::new(BusBase::open(link_for(bus, request.drives)?, BusConfig { period, ..Default::default() })?),
        (None, None) => Box::new(IdealAxes::new(&[0.0; 6], period, 3.0)),
        (None, Some(robot)) => {
            // The direct simulation takes positions only; a drive in velocity or torque mode
            // runs on a bus (the virtual segment's drives take all three).
            if let Some(j) = robot.joints.iter().find(|j| j.drive.mode != CommandMode::Position) {
                return Err(BaseError::Refused(format!(
                    "robot '{}', joint {}: its drive runs in {}, which the direct simulation does not take; run it on the bus: morc --bus sim (or bus = \"sim\")",
                    robot.name,
                    j.name,
                    j.drive.mode.name()
                )));
            }
            Box::new(SimulatedRobot::new(robot.clone(), &request.q0, period).map_err(BaseError::Robot)?)
        }
    })
}

/// The engine started on the base `request` asks for (errors as text, for the command line).
pub fn start_engine_on(request: &BaseRequest, mut config: EngineConfig) -> Result<Engine, String> {
    let base = open_base(request, &mut config).map_err(|e| e.to_string())?;
    Engine::start(config, base)
}

/// The engine a program runs on until it uses a robot: six ideal axes as its base.
pub fn start_engine(config: EngineConfig) -> Result<Engine, String> {
    start_engine_on(&BaseRequest::default(), config)
}
