//! morc's EtherCAT master (ethercrab) with its device classes, as the engine's base; the
//! transports to real NICs (raw sockets) and to the virtual segment (`morc-ecat-sim`) in process.

#![deny(clippy::missing_safety_doc)]
#![warn(missing_docs)]

pub mod base;
pub mod devices;
mod error;
pub mod master;
pub mod raw_socket;
pub mod replies;
mod sii_coe_mask;
pub mod transport;
pub mod virtual_bus;

pub use error::BusError;
