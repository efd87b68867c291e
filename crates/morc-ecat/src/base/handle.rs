//! Talking to a bus base from other threads (the REPL, a program, a test) while the engine
//! owns it: requests the base acts on at its next tick, what it reports back, and — on a
//! simulated segment — the simulated devices themselves.

use crate::transport::{lock, SharedSegment};
use crate::BusError;
use ethercrab::SubDeviceState;
use morc_ecat_sim::{SimAnalogInputs, SimAnalogOutputs, SimForceSensor, SimSafetyPlc};
use morc_kernel::BusDiagnostics;
/// The status types are the kernel's ([`morc_kernel::BusDiagnostics`]): the live view reads them without this crate.
pub use morc_kernel::{BusStatus, DeviceStatus};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

/// Flags between the base and its handles (atomics: the base's tick never waits on them).
#[derive(Debug, Default)]
pub(super) struct BusShared {
    pub reset_requested: AtomicBool,
    pub bias_requested: AtomicBool,
    pub faulted: AtomicBool,
    pub faults: AtomicU64,
    pub cycles: AtomicU64,
    /// The master's counts, mirrored after each exchange.
    pub lost_frames: AtomicU64,
    pub late_replies: AtomicU64,
    pub working_counter_errors: AtomicU64,
    pub not_op: AtomicU64,
    /// Each device's position and name, and its AL state (ETG.1000 code) after each exchange.
    pub devices: Vec<(usize, String)>,
    pub states: Box<[AtomicU8]>,
    /// The latched fault's message (set when latched; the base only tries the lock, never waits).
    pub fault: Mutex<Option<String>>,
    /// The network interface the bus runs on; None for an in-process segment (`--bus sim`).
    pub interface: Option<String>,
}

impl BusShared {
    pub fn new(devices: Vec<(usize, String)>, interface: Option<String>) -> Self {
        let states = devices.iter().map(|_| AtomicU8::new(0)).collect();
        BusShared { devices, states, interface, ..BusShared::default() }
    }
}

/// The AL state's code on the wire (ETG.1000.6 table 9).
pub(super) fn state_code(s: SubDeviceState) -> u8 {
    match s {
        SubDeviceState::None => 0,
        SubDeviceState::Init => 1,
        SubDeviceState::PreOp => 2,
        SubDeviceState::Bootstrap => 3,
        SubDeviceState::SafeOp => 4,
        SubDeviceState::Op => 8,
        SubDeviceState::Other(x) => x,
    }
}

fn state_of(code: u8) -> SubDeviceState {
    match code {
        0 => SubDeviceState::None,
        1 => SubDeviceState::Init,
        2 => SubDeviceState::PreOp,
        3 => SubDeviceState::Bootstrap,
        4 => SubDeviceState::SafeOp,
        8 => SubDeviceState::Op,
        x => SubDeviceState::Other(x),
    }
}

/// A handle on a running bus base.
#[derive(Debug, Clone)]
pub struct BusHandle {
    pub(super) shared: Arc<BusShared>,
    pub(super) segment: Option<SharedSegment>,
}

impl BusHandle {
    /// Asks for fault reset and recovery at the next tick: devices back to Op, drive faults
    /// acknowledged, the safety PLC re-armed, drives switched on again.
    pub fn reset_faults(&self) {
        self.shared.reset_requested.store(true, Ordering::Relaxed);
    }
    /// Asks every force/torque sensor to bias (tare) at the next tick.
    pub fn bias_force_sensors(&self) {
        self.shared.bias_requested.store(true, Ordering::Relaxed);
    }
    /// The base holds a latched fault (cleared by a successful fault reset).
    pub fn faulted(&self) -> bool {
        self.shared.faulted.load(Ordering::Relaxed)
    }
    /// Faults seen since start.
    pub fn faults(&self) -> u64 {
        self.shared.faults.load(Ordering::Relaxed)
    }
    /// The network interface the bus runs on ("eth1"); None for an in-process segment.
    pub fn interface(&self) -> Option<&str> {
        self.shared.interface.as_deref()
    }
    /// Bus cycles run since start.
    pub fn cycles(&self) -> u64 {
        self.shared.cycles.load(Ordering::Relaxed)
    }
    /// The bus's counts, latched fault and device states, as the base's last cycles left them
    /// (read from atomics the base writes each cycle: it never waits for this).
    pub fn status(&self) -> BusStatus {
        let s = &self.shared;
        let faulted = s.faulted.load(Ordering::Relaxed);
        let devices = s
            .devices
            .iter()
            .zip(s.states.iter())
            .map(|((position, name), state)| DeviceStatus { position: *position, name: name.clone(), state: crate::master::state_name(state_of(state.load(Ordering::Relaxed))) })
            .collect();
        BusStatus {
            cycles: s.cycles.load(Ordering::Relaxed),
            lost_frames: s.lost_frames.load(Ordering::Relaxed),
            late_replies: s.late_replies.load(Ordering::Relaxed),
            working_counter_errors: s.working_counter_errors.load(Ordering::Relaxed),
            not_op: s.not_op.load(Ordering::Relaxed),
            faults: s.faults.load(Ordering::Relaxed),
            faulted,
            fault: if faulted { s.fault.lock().unwrap_or_else(|p| p.into_inner()).clone() } else { None },
            devices,
        }
    }
    /// The simulated segment, when the bus runs on one.
    pub fn segment(&self) -> Option<&SharedSegment> {
        self.segment.as_ref()
    }

    /// Runs `f` on the first simulated device of type `T` (e.g. [`SimSafetyPlc`]), or says
    /// why it cannot.
    pub fn with_sim_device<T: 'static, R>(&self, what: &str, f: impl FnOnce(&mut T) -> R) -> Result<R, BusError> {
        let segment = self.segment.as_ref().ok_or_else(|| BusError::Sim(format!("the bus is not simulated: there is no simulated {what} to set")))?;
        let mut s = lock(segment);
        for position in 0..s.len() {
            if let Some(device) = s.device_mut(position).and_then(|d| d.app_as_mut::<T>()) {
                return Ok(f(device));
            }
        }
        Err(BusError::Sim(format!("the simulated segment has no {what}")))
    }

    /// Runs `f` on the simulated safety PLC (e.g. to press its e-stop).
    pub fn sim_safety_plc<R>(&self, f: impl FnOnce(&mut SimSafetyPlc) -> R) -> Result<R, BusError> {
        self.with_sim_device("safety PLC", f)
    }
    /// Runs `f` on the simulated force/torque sensor (e.g. to load it).
    pub fn sim_force_sensor<R>(&self, f: impl FnOnce(&mut SimForceSensor) -> R) -> Result<R, BusError> {
        self.with_sim_device("force/torque sensor", f)
    }
    /// Runs `f` on the simulated analog input terminal (e.g. to set a channel's voltage).
    pub fn sim_analog_inputs<R>(&self, f: impl FnOnce(&mut SimAnalogInputs) -> R) -> Result<R, BusError> {
        self.with_sim_device("analog input terminal", f)
    }
    /// Runs `f` on the simulated analog output terminal (e.g. to read what the master wrote).
    pub fn sim_analog_outputs<R>(&self, f: impl FnOnce(&mut SimAnalogOutputs) -> R) -> Result<R, BusError> {
        self.with_sim_device("analog output terminal", f)
    }
}

/// What the live view, the operator page and Lua's `engine.bus` read of the bus, without
/// knowing it is EtherCAT.
impl BusDiagnostics for BusHandle {
    fn status(&self) -> BusStatus {
        BusHandle::status(self)
    }
    fn faulted(&self) -> bool {
        BusHandle::faulted(self)
    }
    fn faults(&self) -> u64 {
        BusHandle::faults(self)
    }
    fn cycles(&self) -> u64 {
        BusHandle::cycles(self)
    }
    fn reset_faults(&self) {
        BusHandle::reset_faults(self)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
