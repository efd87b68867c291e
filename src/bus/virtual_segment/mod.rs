//! A simulated EtherCAT segment: SubDevice controllers (ESCs) with their EEPROM, mailbox and
//! device application, chained so that frames pass through them as on a real line.

pub mod sii;
pub mod esc;
pub mod mailbox;
