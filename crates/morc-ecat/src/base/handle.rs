//! Talking to a bus base from other threads (the REPL, a program, a test) while the engine
//! owns it: requests the base acts on at its next tick, what it reports back, and — on a
//! simulated segment — the simulated devices themselves.

use crate::transport::{lock, SharedSegment};
use crate::BusError;
use morc_ecat_sim::{SimAnalogInputs, SimAnalogOutputs, SimForceSensor, SimSafetyPlc};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Flags between the base and its handles (atomics: the base's tick never waits on them).
#[derive(Debug, Default)]
pub(super) struct BusShared {
    pub reset_requested: AtomicBool,
    pub bias_requested: AtomicBool,
    pub faulted: AtomicBool,
    pub faults: AtomicU64,
    pub cycles: AtomicU64,
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
    /// Bus cycles run since start.
    pub fn cycles(&self) -> u64 {
        self.shared.cycles.load(Ordering::Relaxed)
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
