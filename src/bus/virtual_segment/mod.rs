//! A simulated EtherCAT segment: SubDevice controllers (ESCs) with their EEPROM, mailbox and
//! device application, chained so that frames pass through them as on a real line.

pub mod sii;
pub mod esc;
pub mod mailbox;
pub mod segment;
pub mod devices;

pub use devices::{cia402_drive, coupler, digital_outputs, load_sii, Cia402Drive, Cia402State, DigitalOutputs, DrivePlant, IdealFollower};
pub use esc::{AlState, DcUnit, Esc, EscConfig};
pub use segment::{DeviceApp, Segment, SubDevice};
pub use sii::{SiiImage, SiiInfo};
