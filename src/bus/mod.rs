//! EtherCAT: frames, a virtual segment of simulated SubDevices, and the in-process transport
//! that lets a real master (ethercrab) drive that segment.

pub mod frame;
pub mod transport;
pub mod virtual_segment;
