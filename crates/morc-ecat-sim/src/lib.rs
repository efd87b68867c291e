//! A virtual EtherCAT segment: SubDevice controllers (ESCs) with their EEPROM, mailbox and
//! device application, chained so that frames pass through them as on a real line.
//!
//! Checked against a real line: `tests/ecat_replay.rs` replays ethercrab bringing up a real
//! EK1100 + EL2828 + EL2889 and gets the same replies byte for byte, time-dependent fields aside.
//!
//! Modelled: all datagram commands and their working counters (missing registers and writes to
//! read-only ones are not counted, as on real ESCs); AL states with checks and status codes, or
//! device emulation (AL control mirrored into AL status) for ESCs without an application
//! controller; the SII interface (instant completion); FMMUs (byte granularity) and SMs
//! (mailbox handshake); DC receive-time latches, system time, offset and delay on virtual time.
//!
//! Not modelled (yet): FMMU bit-granular mapping, the 3-buffer mode of process-data SMs (they
//! act as plain memory), SM/PDI watchdogs, mailbox repeat, SDO Information (answered with an
//! SDO Info error), emergencies, EoE/FoE, DC SYNC signals and drift, alias addressing beyond
//! the DL-control enable bit, topologies other than a line.

#![warn(missing_docs)]
#![deny(clippy::missing_safety_doc)]

mod analog_terminals;
mod devices;
mod encoder;
mod esc;
mod feed;
mod force_sensor;
pub mod gripper;
mod mailbox;
mod process_data;
mod safety_plc;
mod segment;
pub use morc_ecat_wire::sii;

pub use analog_terminals::{SimAnalogInputs, SimAnalogOutputs};
pub use devices::{
    cia402_drive, coupler, digital_inputs, digital_inputs_fed, digital_outputs, load_sii, morc_drive_image, Cia402Drive, DigitalInputs, DigitalOutputs, DrivePlant, IdealFollower, PlantActual,
    PlantCommand, PowerState,
};
pub use encoder::SimEncoder;
pub use esc::{AlState, DcUnit, Esc, EscConfig};
pub use feed::SensorFeed;
pub use force_sensor::SimForceSensor;
pub use gripper::SimGripper;
pub use mailbox::{Access, ObjectDictionary};
pub use process_data::{add_fixed_pdo_objects, fixed_pdo_device, FixedProcessData, PdoEntrySpec};
pub use safety_plc::SimSafetyPlc;
pub use segment::{DeviceApp, ScheduledFault, Segment, SubDevice};
pub use sii::{SiiImage, SiiInfo};
