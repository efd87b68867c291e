//! EtherCAT as it is on the wire, shared by morc's master (`morc-ecat`) and its virtual
//! segment (`morc-ecat-sim`): frames and datagrams ([`frame`]), the ESC's registers ([`esc`]),
//! SII EEPROM images ([`sii`]), the CoE data types of PDO entries and their bits in the
//! process image ([`data_type`]), CiA 402 drives ([`cia402`]) and the process-data layouts of
//! morc's other device profiles ([`profiles`]).

#![warn(missing_docs)]
#![deny(clippy::missing_safety_doc)]

pub mod cia402;
pub mod data_type;
pub mod esc;
pub mod frame;
pub mod profiles;
pub mod sii;
