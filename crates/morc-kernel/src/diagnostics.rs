//! What a base's fieldbus reports to other threads (the live view, the operator page, Lua's
//! `engine.bus`) while the engine owns the base: counts, the latched fault, each device's
//! state, and the fault reset. A trait here, at the bottom, so that those readers need no
//! bus crate and no downcast: a bus base hands one out ([`crate::Base::diagnostics`]).

use std::any::Any;

/// One device on the bus as the last exchange with a reply found it.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceStatus {
    /// Position on the line (0 = first after the master).
    pub position: usize,
    /// Its name (from its EEPROM).
    pub name: String,
    /// Its state, as the bus's tools name it ("OP", "SAFEOP", "not answering" …).
    pub state: &'static str,
}

/// The bus as its last cycles left it: counts since bring-up, the latched fault, every device's state.
#[derive(Debug, Clone, PartialEq)]
pub struct BusStatus {
    /// Cycles run.
    pub cycles: u64,
    /// Frames lost: no reply within the master's reply timeout.
    pub lost_frames: u64,
    /// Replies that came after their cycle had moved on, within the reply timeout: late, not lost.
    pub late_replies: u64,
    /// Cycles whose reply came with a wrong working counter.
    pub working_counter_errors: u64,
    /// Cycles with some device not in its operational state.
    pub not_op: u64,
    /// Faults latched since start.
    pub faults: u64,
    /// Whether a fault is latched now.
    pub faulted: bool,
    /// The latched fault's message (None when none is latched).
    pub fault: Option<String>,
    /// The devices, in line order.
    pub devices: Vec<DeviceStatus>,
}

/// A running bus's diagnostics, read from any thread without waiting on the base's tick.
pub trait BusDiagnostics: Send + Sync {
    /// Counts, latched fault and device states as the last cycles left them.
    fn status(&self) -> BusStatus;
    /// Whether a fault is latched now (cheaper than [`status`](Self::status): polled often).
    fn faulted(&self) -> bool;
    /// Faults latched since start.
    fn faults(&self) -> u64;
    /// Cycles run since start.
    fn cycles(&self) -> u64;
    /// Asks the base to reset latched faults and recover at its next tick.
    fn reset_faults(&self);
    /// The bus's own handle, for what only that bus has (a simulated segment's devices): the
    /// caller downcasts it, in one place, knowing which bus it drives.
    fn as_any(&self) -> &dyn Any;
}
