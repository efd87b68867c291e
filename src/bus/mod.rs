//! EtherCAT: frames, a virtual segment of simulated SubDevices, the in-process transport and
//! the master (ethercrab) with device classes, as the engine's base.

pub mod base;
pub mod devices;
pub mod frame;
pub mod master;
pub mod raw_socket;
pub mod sii_coe_mask;
pub mod sim;
pub mod transport;
pub mod virtual_segment;
