//! EtherCAT as it is on the wire, shared by morc's master (`morc-ecat`) and its virtual
//! segment (`morc-ecat-sim`): frames and datagrams ([`frame`]), SII EEPROM images ([`sii`]),
//! and the process-data layouts of morc's device profiles ([`profiles`]).

#![warn(missing_docs)]
#![deny(clippy::missing_safety_doc)]

pub mod frame;
pub mod profiles;
pub mod sii;
