//! Device classes: the master's side of each generic device type, written once and chosen by
//! identity (CoE device type, process-data shape) or by configuration. A class knows the
//! process-data layout it asks for, decodes inputs into SI units and encodes commands.
//!
//! Classes never see ethercrab: they get SDO writes to perform in PreOp and byte slices of the
//! process image each cycle, so they are testable on their own.
//!
//! Every class implements [`DeviceClass`]: the bus base holds one `Box<dyn DeviceClass>` per
//! device and runs them all through it (ports, inputs, commands, outputs, faults). A new
//! class is a file here implementing it, its wire profile in `morc-ecat-wire`, a
//! [`DeviceClassChoice`] variant with its arm in `base.rs`'s `build_classes`, and its line in
//! [`classify_identity`] (or the choice given in the bus configuration); see
//! `docs/architecture.md` ([`encoder`] is the example followed there).

pub mod analog_io;
pub mod cia402;
pub mod digital_io;
pub mod encoder;
pub mod force_torque;
pub mod generic;
pub mod safety_plc;

pub use analog_io::{AnalogInputs, AnalogOutputs, AnalogRange};
pub use cia402::{Cia402Drive, DriveConfig, DriveMode};
pub use digital_io::{DigitalInputs, DigitalOutputs};
pub use encoder::{EncoderScaling, IncrementalEncoder};
pub use force_torque::{ForceTorqueSensor, FtScaling};
pub use generic::{GenericDevice, PdoLayout};
pub use safety_plc::SafetyPlc;

/// The ports a device class adds to the bus base, named after its position on the line
/// (`din3`, `ft8`): its measurements (outputs of the base) and its commands (inputs).
#[derive(Debug, Default)]
pub struct ClassPorts {
    /// Measurements, in the order [`DeviceClass::write_measurements`] writes them.
    pub outputs: Vec<morc_kernel::PortInfo>,
    /// Commands, in the order [`DeviceClass::command`] reads them.
    pub inputs: Vec<morc_kernel::PortInfo>,
}

/// The master's side of one kind of device, as the bus base runs it every cycle. Nothing here
/// may allocate in steady state, except to word a fault when one is found.
pub trait DeviceClass: Send + std::any::Any {
    /// Where the device sits and what it is.
    fn name(&self) -> &DeviceName;
    /// The class's short name, as [`BusBase::class_of`](crate::base::BusBase::class_of) says it ("din", "ft", "safety"…).
    fn kind(&self) -> &'static str;
    /// The ports it adds to the bus base (none for a drive: drives are the robot's joints,
    /// and the base gives them joint ports together).
    fn ports(&self) -> ClassPorts {
        ClassPorts::default()
    }
    /// Decodes this cycle's inputs (its slice of the process image).
    fn read_inputs(&mut self, inputs: &[u8]);
    /// Its measurements into its output ports: `outputs` are its own, in [`ports`](Self::ports) order.
    fn write_measurements(&self, _outputs: &mut [morc_kernel::Value]) {}
    /// This cycle's commands: `commands.get(first + k)` is its k-th input port; `None` holds.
    fn command(&mut self, _commands: Option<morc_kernel::Commands>, _first: usize) -> Result<(), String> {
        Ok(())
    }
    /// Encodes what goes out with the next exchange (its slice of the process image).
    fn write_outputs(&mut self, outputs: &mut [u8]);
    /// The device's own fault, worded for the user, or `None`.
    fn fault(&self) -> Option<String> {
        None
    }
    /// Whether it lets the robot move (a safety PLC may not); [`fault`](Self::fault) says why not.
    fn permits_motion(&self) -> bool {
        true
    }
    /// A fault reset was asked for: acknowledge what the device latched.
    fn acknowledge(&mut self) {}
    /// Zero the measurement at the current load (a force/torque sensor's bias).
    fn bias(&mut self) {}
}

/// Where a device sits and what it says it is: every message about a device starts here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceName {
    /// Position on the line, 0 = first after the master.
    pub position: usize,
    /// Device name from its EEPROM (SII), e.g. "EL2008".
    pub name: String,
}

impl std::fmt::Display for DeviceName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "device {} '{}'", self.position, self.name)
    }
}

pub use morc_ecat_wire::data_type::SdoValue;

/// One SDO download done in PreOp (PDO mapping, mode of operation…).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SdoWrite {
    /// Object index (e.g. 0x1600).
    pub index: u16,
    /// Subindex.
    pub sub: u8,
    /// The value downloaded; its width is the object's.
    pub value: SdoValue,
}

impl SdoWrite {
    /// A download of `value` to object `index`:`sub`.
    pub const fn new(index: u16, sub: u8, value: SdoValue) -> Self {
        Self { index, sub, value }
    }
}

/// Builds a lab's class for one device: where it sits and its process-data sizes (input bytes,
/// output bytes) as mapped; refusing sizes it cannot read is its job.
pub type BuildLabClass = dyn Fn(DeviceName, usize, usize) -> Result<Box<dyn DeviceClass>, String> + Send + Sync;

/// A device class a lab writes in its own crate, without editing morc: an implementation of
/// [`DeviceClass`] and this entry, registered by the device's identity in the bus
/// configuration ([`BusConfig::classes`](crate::base::BusConfig::classes)). Every device on
/// the line with that identity runs as it (before morc's own class for it, if any).
#[derive(Clone)]
pub struct LabClass {
    /// The class's name, for messages and `morc bus scan`.
    pub name: &'static str,
    /// Vendor id and product code of the devices it runs (identity object 0x1018:01, :02).
    pub identity: (u32, u32),
    /// Makes the class for one device.
    pub build: std::sync::Arc<BuildLabClass>,
    /// Its settings, written over CoE in PreOp to every device it runs (a refusal fails the
    /// bring-up naming the device and the object).
    pub setup: Vec<SdoWrite>,
}

impl std::fmt::Debug for LabClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LabClass({} for vendor 0x{:X}, product 0x{:X})", self.name, self.identity.0, self.identity.1)
    }
}

impl PartialEq for LabClass {
    /// The same registration: name, identity and the very same builder.
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.identity == other.identity && std::sync::Arc::ptr_eq(&self.build, &other.build)
    }
}

/// Which class drives a device; chosen by the bus base from the device's identity, CoE device type and process-data shape, or set in the bus configuration.
#[derive(Debug, Clone, PartialEq)]
pub enum DeviceClassChoice {
    /// A CiA 402 servo drive.
    Drive(DriveConfig),
    /// Digital outputs; `channels` bits from bit 0.
    DigitalOutputs {
        /// Number of output channels.
        channels: u32,
    },
    /// Digital inputs; `channels` bits from bit 0.
    DigitalInputs {
        /// Number of input channels.
        channels: u32,
    },
    /// Analog inputs (status word + value per channel; channels from the process-data size).
    AnalogInputs {
        /// Measuring range (e.g. ±10 V, 4…20 mA).
        range: AnalogRange,
    },
    /// Analog outputs (a value per channel; channels from the process-data size).
    AnalogOutputs {
        /// Output range (e.g. ±10 V, 4…20 mA).
        range: AnalogRange,
    },
    /// The safety PLC interface ([`safety_plc`]).
    SafetyPlc,
    /// A 6-axis force/torque sensor; `None`: scaling from its calibration objects (CoE).
    ForceTorque {
        /// Counts per N and per N·m, for a sensor without calibration objects.
        scaling: Option<FtScaling>,
    },
    /// An incremental encoder terminal (EL5101-style): its counter as a position ([`encoder`]).
    Encoder {
        /// Counts per revolution, gear, direction and offset.
        scaling: EncoderScaling,
    },
    /// A device morc has no class for: its ports from its own PDO description ([`generic`]).
    Generic,
    /// A class from outside morc, a lab's own ([`LabClass`], registered in
    /// [`BusConfig::classes`](crate::base::BusConfig::classes)).
    Lab(LabClass),
    /// No process data the robot uses (a coupler), or a device to leave alone: it still takes
    /// part in the cycle (its working counter is checked).
    Passive,
}

impl DeviceClassChoice {
    /// The names a bus configuration (a robot file's `bus = { … }`) may choose a class by.
    pub const NAMES: [&'static str; 4] = ["ati_axia", "safety_plc", "generic", "passive"];

    /// The class named `name` (see [`NAMES`](Self::NAMES)), with what it learns from the
    /// device itself (an F/T sensor's scaling from its calibration objects).
    pub fn by_name(name: &str) -> Result<DeviceClassChoice, String> {
        match name {
            "ati_axia" => Ok(DeviceClassChoice::ForceTorque { scaling: None }),
            "safety_plc" => Ok(DeviceClassChoice::SafetyPlc),
            "generic" => Ok(DeviceClassChoice::Generic),
            "passive" => Ok(DeviceClassChoice::Passive),
            _ => Err(format!("unknown device class '{name}': use {}", Self::NAMES.map(|n| format!("\"{n}\"")).join(", "))),
        }
    }
}

/// Chooses a class from what the master learned: the CoE device type (if the device has CoE)
/// and the process-data sizes in bytes once mapped. Drives are recognised in PreOp by their
/// device type; I/O terminals by having only outputs or only inputs.
pub(crate) fn classify(device_type: Option<u32>, input_bytes: usize, output_bytes: usize, drive: &DriveConfig) -> DeviceClassChoice {
    if device_type.is_some_and(morc_ecat_wire::cia402::is_drive_device_type) {
        return DeviceClassChoice::Drive(drive.clone());
    }
    match (input_bytes, output_bytes) {
        (0, 0) => DeviceClassChoice::Passive,
        (0, n) if n <= 4 => DeviceClassChoice::DigitalOutputs { channels: (n * 8) as u32 },
        (n, 0) if n <= 4 => DeviceClassChoice::DigitalInputs { channels: (n * 8) as u32 },
        _ => DeviceClassChoice::Generic,
    }
}

/// morc's own identities: the simulated devices (`morc bus scan --sim`), whose class the
/// identity says. A real safety PLC or F/T sensor gets its class from the bus configuration.
pub mod identity {
    /// morc's vendor id for simulated devices.
    pub const MORC_VENDOR_ID: u32 = 0x0000_0DEF;
    /// A bus coupler (EK1100-like), no process data.
    pub const COUPLER: u32 = 0x0000_1100;
    /// A CiA 402 servo drive.
    pub const DRIVE: u32 = 0x0000_0402;
    /// 4 analog inputs, ±10 V.
    pub const ANALOG_IN: u32 = 0x0000_3104;
    /// 4 analog outputs, ±10 V.
    pub const ANALOG_OUT: u32 = 0x0000_4134;
    /// A safety PLC interface ([`super::safety_plc`]).
    pub const SAFETY_PLC: u32 = 0x0000_5AFE;
    /// A 6-axis force/torque sensor.
    pub const FORCE_TORQUE: u32 = 0x0000_0F76;
    /// An electric gripper with its own PDO layout, which no class knows: a generic device.
    pub const GRIPPER: u32 = 0x0000_6121;
}

/// The class an identity says, for devices whose process data alone does not (analog
/// terminals, a safety PLC, an F/T sensor).
pub(crate) fn classify_identity(vendor_id: u32, product_code: u32) -> Option<DeviceClassChoice> {
    use identity::*;
    match (vendor_id, product_code) {
        (MORC_VENDOR_ID, ANALOG_IN) => Some(DeviceClassChoice::AnalogInputs { range: AnalogRange::VOLTS_PM10 }),
        (MORC_VENDOR_ID, ANALOG_OUT) => Some(DeviceClassChoice::AnalogOutputs { range: AnalogRange::VOLTS_PM10 }),
        (MORC_VENDOR_ID, SAFETY_PLC) => Some(DeviceClassChoice::SafetyPlc),
        (MORC_VENDOR_ID, FORCE_TORQUE) => Some(DeviceClassChoice::ForceTorque { scaling: None }),
        (encoder::VENDOR_ID, encoder::EL5101) => Some(DeviceClassChoice::Encoder { scaling: EncoderScaling::default() }),
        // Beckhoff EL3xxx / EL4xxx: product code = terminal number << 16 | 0x3052.
        (2, p) => analog_io::beckhoff_analog(p >> 16).map(|(inputs, range)| if inputs { DeviceClassChoice::AnalogInputs { range } } else { DeviceClassChoice::AnalogOutputs { range } }),
        _ => None,
    }
}

/// Channel counts of terminals whose process image is wider than their channels (ethercrab
/// maps whole bytes), so that commands to missing channels are refused with a clear message.
pub(crate) fn known_channels(vendor_id: u32, product_code: u32) -> Option<u32> {
    // Beckhoff: product code = terminal number << 16 | 0x3052 ("EL") etc.
    if vendor_id != 2 {
        return None;
    }
    match product_code >> 16 {
        1002 | 2002 | 1012 => Some(2),
        1004 | 1014 | 2004 | 2024 => Some(4),
        1008 | 1018 | 2008 | 2808 | 2828 => Some(8),
        1809 | 1819 | 2809 | 2889 | 1889 => Some(16),
        _ => None,
    }
}

/// A real for one value, a vector for several (a port's type).
pub(crate) fn vector_type(n: usize) -> morc_kernel::ValueType {
    if n == 1 {
        morc_kernel::ValueType::Real
    } else {
        morc_kernel::ValueType::Vector(n)
    }
}

/// Writes `x` as element `i` of a real or vector port value, in place.
pub(crate) fn write_real(value: &mut morc_kernel::Value, i: usize, x: f64) {
    match value {
        morc_kernel::Value::Real(r) => *r = x,
        morc_kernel::Value::Vector(v) => {
            if let Some(slot) = v.get_mut(i) {
                *slot = x;
            }
        }
        _ => {}
    }
}

/// Element `i` of a real or vector command (NaN if it has none).
pub(crate) fn read_real(value: &morc_kernel::Value, i: usize) -> f64 {
    match value {
        morc_kernel::Value::Real(r) => *r,
        morc_kernel::Value::Vector(v) => v.get(i).copied().unwrap_or(f64::NAN),
        _ => f64::NAN,
    }
}

/// Little-endian helpers on process-data slices; out-of-range reads give 0 and writes are
/// dropped, so a short image can never panic the cyclic path.
pub(crate) mod pd {
    pub fn u16_at(b: &[u8], at: usize) -> u16 {
        b.get(at..at + 2).map_or(0, |s| u16::from_le_bytes([s[0], s[1]]))
    }
    pub fn i16_at(b: &[u8], at: usize) -> i16 {
        u16_at(b, at) as i16
    }
    pub fn i32_at(b: &[u8], at: usize) -> i32 {
        b.get(at..at + 4).map_or(0, |s| i32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }
    pub fn u32_at(b: &[u8], at: usize) -> u32 {
        i32_at(b, at) as u32
    }
    pub fn put(b: &mut [u8], at: usize, bytes: &[u8]) {
        if let Some(s) = b.get_mut(at..at + bytes.len()) {
            s.copy_from_slice(bytes);
        }
    }
    /// Up to 8 bytes as an unsigned little-endian integer.
    pub fn bits_of(b: &[u8]) -> u64 {
        b.iter().take(8).enumerate().fold(0, |acc, (i, &x)| acc | (u64::from(x) << (8 * i)))
    }
}
