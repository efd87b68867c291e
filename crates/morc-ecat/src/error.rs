//! [`BusError`]: what can go wrong opening, bringing up and running the EtherCAT bus, with the
//! same message a person reads (naming the device and what to do); the variant says which step
//! failed, so a caller can react to it without reading the text.

use std::fmt;

/// An error of the EtherCAT master's public API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BusError {
    /// The bus's configuration is wrong (period, drive settings, where the bus is).
    Config(String),
    /// The link cannot be opened or used (network interface, raw socket, virtual segment).
    Link(String),
    /// Bringing the bus up failed: discovery, a device's EEPROM, PRE-OP set-up, OP, switch-on.
    BringUp(String),
    /// A device is in fault or cannot be brought back to OP.
    Device(String),
    /// An SDO transfer to or from device `position` failed.
    Sdo {
        /// The device's position on the line (0 = first).
        position: usize,
        /// The object's index.
        index: u16,
        /// Its subindex.
        sub: u8,
        /// What happened, naming the device.
        message: String,
    },
    /// The simulated segment cannot do what was asked (the bus is not simulated, it has no
    /// such device, a fault to inject is malformed).
    Sim(String),
    /// The bus has been closed.
    Closed,
}

impl fmt::Display for BusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BusError::Config(m) | BusError::Link(m) | BusError::BringUp(m) | BusError::Device(m) | BusError::Sim(m) => f.write_str(m),
            BusError::Sdo { message, .. } => f.write_str(message),
            BusError::Closed => f.write_str("the bus is closed"),
        }
    }
}

impl std::error::Error for BusError {}

/// For callers that still pass errors on as text.
impl From<BusError> for String {
    fn from(e: BusError) -> Self {
        e.to_string()
    }
}
