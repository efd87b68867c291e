//! The simulated segment morc runs on without hardware (`morc run --bus sim`, `morc bus scan
//! --sim`): a coupler, CiA 402 drives, digital and analog I/O terminals, a safety PLC, a
//! force/torque sensor, with morc's own identities (vendor 0x0DEF), and incremental encoder
//! terminals with Beckhoff's (EL5101), and grippers no class knows (run as generic devices); EEPROM images built here, so nothing outside the binary
//! is needed.

use crate::devices::identity;
use crate::devices::AnalogRange;
use crate::devices::DriveConfig;
use crate::master::Link;
use crate::transport::SharedSegment;
use crate::BusError;
use morc_ecat_sim::PdoEntrySpec;
use morc_ecat_sim::{
    cia402_drive, coupler, digital_inputs, digital_outputs, fixed_pdo_device, morc_drive_image, DrivePlant, EscConfig, IdealFollower, Segment, SimAnalogInputs, SimAnalogOutputs, SimEncoder,
    SimForceSensor, SimGripper, SimSafetyPlc,
};
use morc_ecat_wire::sii::{self, build_image, DeviceDescription, FmmuUsage, Identity, MailboxConfig, Pdo, PdoEntry, SyncManagerEntry, SyncManagerUsage};
use std::sync::{Arc, Mutex};

pub use identity::MORC_VENDOR_ID;

/// Drives in the simulated cell unless told otherwise: the same for `--bus sim`, `morc bus
/// scan --sim`, `morc bus serve` and `morc.start_engine { bus = "sim" }`.
pub const DEFAULT_DRIVES: usize = 6;

/// What the simulated segment holds.
#[derive(Debug, Clone)]
pub struct SimSegmentConfig {
    /// Number of simulated CiA 402 drives.
    pub drives: usize,
    /// Scaling of the simulated drives (the master's drive class uses the same).
    pub drive: DriveConfig,
    /// Joint velocity limit of the simulated plant (rad/s).
    pub max_velocity: f64,
    /// Joint acceleration limit of the simulated plant (rad/s²).
    pub max_acceleration: f64,
    /// Channels of the digital output terminal, 0 for none.
    pub digital_outputs: u32,
    /// Channels of the digital input terminal, 0 for none.
    pub digital_inputs: u32,
    /// Channels of the analog input terminal (±10 V), 0 for none.
    pub analog_inputs: usize,
    /// Channels of the analog output terminal (±10 V), 0 for none.
    pub analog_outputs: usize,
    /// A safety PLC interface on the segment.
    pub safety_plc: bool,
    /// A 6-axis force/torque sensor on the segment.
    pub force_torque: bool,
    /// Incremental encoder terminals (EL5101, 32-bit counter), after the other devices.
    pub encoders: usize,
    /// Electric grippers with a vendor PDO layout morc has no class for (a CoE mailbox with
    /// their PDO assignment), last on the line: run as generic devices.
    pub grippers: usize,
    /// What a simulated world feeds the force/torque sensor and the digital inputs each cycle
    /// (the simulated robot's wrist sensor and handle); none: they read what tests set.
    pub sensor_feed: Option<std::sync::Arc<morc_ecat_sim::SensorFeed>>,
    /// Devices at a position of their own on the line (a robot file's drives and `bus = { … }`
    /// bind them by position); the others fill the line around them in their order.
    pub placed: Vec<(SimDevice, usize)>,
}

/// A device of the simulated segment that can be placed on the line ([`SimSegmentConfig::placed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimDevice {
    /// The safety PLC interface.
    SafetyPlc,
    /// The force/torque sensor.
    ForceTorque,
    /// The `i`-th drive (0-based, the order of its plant).
    Drive(usize),
}

impl Default for SimSegmentConfig {
    /// Coupler, six drives, DO8, DI8: the segment most tests pin positions on.
    fn default() -> Self {
        Self {
            drives: 6,
            drive: DriveConfig::default(),
            max_velocity: 3.0,
            max_acceleration: 30.0,
            digital_outputs: 8,
            digital_inputs: 8,
            analog_inputs: 0,
            analog_outputs: 0,
            safety_plc: false,
            force_torque: false,
            encoders: 0,
            grippers: 0,
            sensor_feed: None,
            placed: Vec::new(),
        }
    }
}

impl SimSegmentConfig {
    /// A robot cell: the default segment plus analog terminals (AI4, AO4), a safety PLC, a
    /// force/torque sensor and, last, a gripper no class knows (a generic device). What
    /// `--bus sim` and `morc bus scan --sim` run on.
    pub fn cell(drives: usize) -> Self {
        Self { drives, analog_inputs: 4, analog_outputs: 4, safety_plc: true, force_torque: true, grippers: 1, ..Default::default() }
    }

    /// How many devices the segment has.
    pub fn device_count(&self) -> usize {
        1 + self.drives
            + [self.digital_outputs > 0, self.digital_inputs > 0, self.analog_inputs > 0, self.analog_outputs > 0, self.safety_plc, self.force_torque]
                .iter()
                .filter(|b| **b)
                .count()
            + self.encoders
            + self.grippers
    }
}

/// What an SII image built here holds.
struct ImageSpec<'a> {
    product_code: u32,
    name: &'a str,
    group: &'a str,
    /// Entries of the one RxPDO (outputs) and TxPDO (inputs): (index, sub-index, bits).
    rx: &'a [PdoEntrySpec],
    tx: &'a [PdoEntrySpec],
    /// A CoE mailbox (SM0/SM1), process data on SM2/SM3; else process data on SM0/SM1.
    coe: bool,
    /// Start and control byte of the process-data SMs without a mailbox (outputs, inputs).
    pd_sms: [(u16, u8); 2],
}

/// Process-data SMs in process RAM (mailbox-less devices with both directions).
const PD_IN_RAM: [(u16, u8); 2] = [(0x1000, 0x64), (0x1100, 0x20)];
const NO_PD: [(u16, u8); 2] = [(0, 0); 2];

fn image(spec: &ImageSpec) -> Result<sii::SiiImage, String> {
    build_image(&description(spec), if spec.coe { 2048 } else { 512 }).map_err(|e| e.to_string())
}

fn description(spec: &ImageSpec) -> DeviceDescription {
    let pdo = |index: u16, sync_manager: u8, entries: &[PdoEntrySpec]| Pdo {
        index,
        sync_manager,
        name_string: 0,
        // CoE data types: BOOL, UNSIGNED8/16/32 (ETG.1000.6 Table 64).
        entries: entries
            .iter()
            .map(|&(index, sub_index, bit_len)| PdoEntry {
                index,
                sub_index,
                name_string: 0,
                data_type: match bit_len {
                    1 => 0x01,
                    8 => 0x05,
                    16 => 0x06,
                    _ => 0x07,
                },
                bit_len,
            })
            .collect(),
    };
    let bytes = |entries: &[PdoEntrySpec]| entries.iter().map(|e| u32::from(e.2)).sum::<u32>().div_ceil(8) as u16;
    let mut sync_managers = Vec::new();
    let mut fmmus = Vec::new();
    let mut mailbox = MailboxConfig { receive_offset: 0, receive_size: 0, send_offset: 0, send_size: 0, protocols: 0 };
    let [(out_start, out_control), (in_start, in_control)] = if spec.coe {
        mailbox = MailboxConfig { receive_offset: 0x1000, receive_size: 128, send_offset: 0x1080, send_size: 128, protocols: sii::protocol::COE };
        sync_managers.push(SyncManagerEntry { start: 0x1000, length: 128, control: 0x26, enable: 1, usage: SyncManagerUsage::MailboxOut });
        sync_managers.push(SyncManagerEntry { start: 0x1080, length: 128, control: 0x22, enable: 1, usage: SyncManagerUsage::MailboxIn });
        [(0x1100, 0x64), (0x1180, 0x20)]
    } else {
        spec.pd_sms
    };
    let (mut rx_pdos, mut tx_pdos) = (Vec::new(), Vec::new());
    if !spec.rx.is_empty() {
        rx_pdos.push(pdo(0x1600, sync_managers.len() as u8, spec.rx));
        sync_managers.push(SyncManagerEntry { start: out_start, length: bytes(spec.rx), control: out_control, enable: 1, usage: SyncManagerUsage::ProcessDataOut });
        fmmus.push(FmmuUsage::Outputs);
    } else if spec.coe {
        // A mailbox device's inputs are on SM3 (its PDO assignment, 0x1C13, says so) even
        // without outputs: SM2 stays, empty and disabled.
        sync_managers.push(SyncManagerEntry { start: out_start, length: 0, control: out_control, enable: 0, usage: SyncManagerUsage::ProcessDataOut });
    }
    if !spec.tx.is_empty() {
        tx_pdos.push(pdo(0x1A00, sync_managers.len() as u8, spec.tx));
        sync_managers.push(SyncManagerEntry { start: in_start, length: bytes(spec.tx), control: in_control, enable: 1, usage: SyncManagerUsage::ProcessDataIn });
        fmmus.push(FmmuUsage::Inputs);
    }
    if spec.coe {
        fmmus.push(FmmuUsage::SyncManagerStatus);
    }
    DeviceDescription {
        identity: Identity { vendor_id: MORC_VENDOR_ID, product_code: spec.product_code, revision: 1, serial: 0 },
        name: spec.name.into(),
        group: spec.group.into(),
        order_code: spec.name.into(),
        mailbox,
        coe_details: if spec.coe { sii::coe_details::SDO | sii::coe_details::PDO_ASSIGN } else { 0 },
        fmmus,
        sync_managers,
        tx_pdos,
        rx_pdos,
        strings: Vec::new(),
    }
}

/// A digital terminal: one bit per channel, on the ESC's digital I/O registers' SM layout
/// (outputs at 0x0F00, as EL2xxx terminals have).
fn terminal_image(product_code: u32, name: &str, outputs: bool, channels: u32) -> Result<sii::SiiImage, String> {
    let entries: Vec<PdoEntrySpec> = (0..channels).map(|c| (if outputs { 0x7000 } else { 0x6000 } + (c as u16) * 0x10, 1, 1)).collect();
    let (rx, tx): (&[PdoEntrySpec], &[PdoEntrySpec]) = if outputs { (&entries, &[]) } else { (&[], &entries) };
    image(&ImageSpec { product_code, name, group: if outputs { "DigOut" } else { "DigIn" }, rx, tx, coe: false, pd_sms: [(0x0F00, 0x44), (0x1000, 0x00)] })
}

fn coupler_image() -> Result<sii::SiiImage, String> {
    image(&ImageSpec { product_code: identity::COUPLER, name: "SIM-COUPLER", group: "Coupler", rx: &[], tx: &[], coe: false, pd_sms: NO_PD })
}

fn analog_image(product_code: u32, name: &str, outputs: bool, channels: usize) -> Result<sii::SiiImage, String> {
    // Inputs: status word + value per channel (EL31xx); outputs: a value per channel (EL41xx).
    let entries: Vec<PdoEntrySpec> = (0..channels as u16)
        .flat_map(|c| if outputs { vec![(0x7000 + 0x10 * c, 1, 16)] } else { vec![(0x6000 + 0x10 * c, 1, 16), (0x6000 + 0x10 * c, 0x11, 16)] })
        .collect();
    let (rx, tx): (&[PdoEntrySpec], &[PdoEntrySpec]) = if outputs { (&entries, &[]) } else { (&[], &entries) };
    image(&ImageSpec { product_code, name, group: if outputs { "AnaOut" } else { "AnaIn" }, rx, tx, coe: false, pd_sms: PD_IN_RAM })
}

fn safety_plc_image() -> Result<sii::SiiImage, String> {
    image(&ImageSpec {
        product_code: identity::SAFETY_PLC,
        name: "SIM-SAFETY-PLC",
        group: "Safety",
        rx: &[(0x7000, 1, 16)],
        tx: &[(0x6000, 1, 16), (0x6000, 2, 16)],
        coe: false,
        pd_sms: PD_IN_RAM,
    })
}

fn force_sensor_image() -> Result<sii::SiiImage, String> {
    let tx: Vec<PdoEntrySpec> = (1..=6).map(|s| (0x6000, s, 32)).chain([(0x6010, 0, 32), (0x6020, 0, 32)]).collect();
    image(&ImageSpec { product_code: identity::FORCE_TORQUE, name: "SIM-FT6", group: "Sensors", rx: &[(0x7010, 1, 32)], tx: &tx, coe: true, pd_sms: NO_PD })
}

/// The EEPROM image of a simulated device with fixed process data, for a twin written outside
/// morc (a lab's own device, pushed onto a [`Segment`] with [`morc_ecat_sim::fixed_pdo_device`]):
/// its identity, name, one RxPDO 0x1600 of `rx` entries (the master's outputs) and one TxPDO
/// 0x1A00 of `tx` entries (its inputs), each (index, sub-index, bits); `coe`: with a CoE mailbox
/// (then give `fixed_pdo_device` its object dictionary, with
/// [`morc_ecat_sim::add_fixed_pdo_objects`] for its PDO assignment), else none.
pub fn fixed_pdo_image(vendor_id: u32, product_code: u32, name: &str, group: &str, rx: &[PdoEntrySpec], tx: &[PdoEntrySpec], coe: bool) -> Result<sii::SiiImage, String> {
    let mut desc = description(&ImageSpec { product_code, name, group, rx, tx, coe, pd_sms: PD_IN_RAM });
    desc.identity.vendor_id = vendor_id;
    build_image(&desc, if coe { 2048 } else { 512 }).map_err(|e| e.to_string())
}

/// An EL5101 in its Standard 32 Bit assignment (PDOs 0x1A04, 0x1603), with Beckhoff's identity
/// so that the master chooses its class as it would for the real terminal.
fn encoder_image() -> Result<sii::SiiImage, String> {
    use morc_ecat_wire::profiles::encoder::{EL5101, RX_ENTRIES, RX_PDO, TX_ENTRIES, TX_PDO, VENDOR_ID};
    let spec = ImageSpec { product_code: EL5101, name: "SIM-EL5101", group: "Encoder", rx: &RX_ENTRIES, tx: &TX_ENTRIES, coe: false, pd_sms: PD_IN_RAM };
    let mut desc = description(&spec);
    desc.identity.vendor_id = VENDOR_ID;
    desc.rx_pdos[0].index = RX_PDO;
    desc.tx_pdos[0].index = TX_PDO;
    build_image(&desc, 512).map_err(|e| e.to_string())
}

/// A simulated gripper ([`morc_ecat_sim::gripper`]), morc's identity with a product code no
/// class knows, its PDOs and their entries named in its EEPROM; `coe`: with a CoE mailbox
/// answering its PDO assignment, else its process data described by its EEPROM alone.
pub fn gripper(coe: bool, clock_offset_ns: u64) -> Result<morc_ecat_sim::SubDevice, String> {
    use morc_ecat_sim::gripper::{GripperEntry, COMMAND, STATUS};
    let (rx, tx) = (SimGripper::specs(&COMMAND.2), SimGripper::specs(&STATUS.2));
    let spec = ImageSpec { product_code: identity::GRIPPER, name: "SIM-GRIPPER", group: "Grippers", rx: &rx, tx: &tx, coe, pd_sms: PD_IN_RAM };
    let mut desc = description(&spec);
    let mut name = |text: &str| -> u8 {
        desc.strings.push(text.to_string());
        desc.strings.len() as u8
    };
    let named = |pdo: &mut Pdo, title: &str, entries: &[GripperEntry], name: &mut dyn FnMut(&str) -> u8| {
        pdo.name_string = name(title);
        for (e, g) in pdo.entries.iter_mut().zip(entries) {
            e.data_type = g.data_type;
            e.name_string = if g.name.is_empty() { 0 } else { name(g.name) };
        }
    };
    let (mut rx_pdo, mut tx_pdo) = (desc.rx_pdos[0].clone(), desc.tx_pdos[0].clone());
    named(&mut rx_pdo, COMMAND.1, &COMMAND.2, &mut name);
    named(&mut tx_pdo, STATUS.1, &STATUS.2, &mut name);
    (desc.rx_pdos[0], desc.tx_pdos[0]) = (rx_pdo, tx_pdo);
    let image = build_image(&desc, if coe { 2048 } else { 512 }).map_err(|e| e.to_string())?;
    let objects = coe.then(|| SimGripper::objects(desc.identity));
    fixed_pdo_device(image, EscConfig::et1100(), clock_offset_ns, SimGripper::default(), objects)
}

/// Coupler, then `drives` CiA 402 drives, then a digital output and a digital input terminal
/// (each left out when it has 0 channels), analog inputs and outputs, the safety PLC and the
/// force/torque sensor (each when configured), and last `encoders` encoder terminals. Devices
/// at positions 0, 1.., in that order.
pub fn sim_segment(config: &SimSegmentConfig) -> Result<Segment, String> {
    config.drive.check()?;
    let counts_per_rad = config.drive.counts_per_rev * config.drive.gear / std::f64::consts::TAU;
    let plants = (0..config.drives)
        .map(|_| Box::new(IdealFollower::new(config.max_velocity * counts_per_rad, config.max_acceleration * counts_per_rad)) as Box<dyn DrivePlant>)
        .collect();
    build_segment(config, plants)
}

/// [`sim_segment`] with the drives' mechanics given (one plant per drive, e.g. the joints of
/// a simulated arm), shared for the in-process transport.
pub fn sim_segment_with_plants(config: &SimSegmentConfig, plants: Vec<Box<dyn DrivePlant>>) -> Result<SharedSegment, String> {
    if plants.len() != config.drives {
        return Err(format!("{} drive plants for {} drives", plants.len(), config.drives));
    }
    Ok(Arc::new(Mutex::new(build_segment(config, plants)?)))
}

fn build_segment(config: &SimSegmentConfig, plants: Vec<Box<dyn DrivePlant>>) -> Result<Segment, String> {
    // In line order; placed devices are moved once all are built.
    let mut line: Vec<(Option<SimDevice>, morc_ecat_sim::SubDevice)> = Vec::new();
    line.push((None, coupler(coupler_image()?, 1_000)));
    for (i, plant) in plants.into_iter().enumerate() {
        let image = morc_drive_image().map_err(|e| e.to_string())?;
        line.push((Some(SimDevice::Drive(i)), cia402_drive(image, 2_000 + 100 * i as u64, plant)?));
    }
    if config.digital_outputs > 0 {
        let image = terminal_image(0x2000 + config.digital_outputs, &format!("SIM-DO{}", config.digital_outputs), true, config.digital_outputs)?;
        line.push((None, digital_outputs(image, EscConfig::et1200(), 3_000)?));
    }
    if config.digital_inputs > 0 {
        let image = terminal_image(0x1000 + config.digital_inputs, &format!("SIM-DI{}", config.digital_inputs), false, config.digital_inputs)?;
        line.push((None, morc_ecat_sim::digital_inputs_fed(image, EscConfig::et1200(), 4_000, config.sensor_feed.clone())?));
    }
    if config.analog_inputs > 0 {
        let image = analog_image(identity::ANALOG_IN, &format!("SIM-AI{}", config.analog_inputs), false, config.analog_inputs)?;
        line.push((None, fixed_pdo_device(image, EscConfig::et1200(), 5_000, SimAnalogInputs::new(config.analog_inputs, AnalogRange::VOLTS_PM10), None)?));
    }
    if config.analog_outputs > 0 {
        let image = analog_image(identity::ANALOG_OUT, &format!("SIM-AO{}", config.analog_outputs), true, config.analog_outputs)?;
        line.push((None, fixed_pdo_device(image, EscConfig::et1200(), 6_000, SimAnalogOutputs::new(config.analog_outputs, AnalogRange::VOLTS_PM10), None)?));
    }
    if config.safety_plc {
        let plc = config.sensor_feed.clone().map_or_else(SimSafetyPlc::default, SimSafetyPlc::fed);
        line.push((Some(SimDevice::SafetyPlc), fixed_pdo_device(safety_plc_image()?, EscConfig::et1100(), 7_000, plc, None)?));
    }
    if config.force_torque {
        let image = force_sensor_image()?;
        let identity = image.parse().map_err(|e| e.to_string())?.identity;
        let sensor = config.sensor_feed.clone().map_or_else(SimForceSensor::default, SimForceSensor::fed);
        line.push((Some(SimDevice::ForceTorque), fixed_pdo_device(image, EscConfig::et1100(), 8_000, sensor, Some(SimForceSensor::objects(identity)))?));
    }
    let line = place(line, &config.placed)?;
    let mut s = Segment::new();
    for device in line {
        s.push(device);
    }
    for i in 0..config.encoders {
        s.push(fixed_pdo_device(encoder_image()?, EscConfig::et1200(), 9_000 + 100 * i as u64, SimEncoder::default(), None)?);
    }
    for i in 0..config.grippers {
        s.push(gripper(true, 10_000 + 100 * i as u64)?);
    }
    // Start virtual time away from 0 so DC system times look like a running line.
    s.set_time_ns(1_000_000_000);
    Ok(s)
}

/// The line with each placed device at its position and the others filling the rest in their
/// order (the coupler first, unless a device is placed there).
fn place<D>(line: Vec<(Option<SimDevice>, D)>, placed: &[(SimDevice, usize)]) -> Result<Vec<D>, String> {
    let len = line.len();
    let mut slots: Vec<Option<D>> = (0..len).map(|_| None).collect();
    let mut what: Vec<Option<SimDevice>> = vec![None; len];
    let mut rest = Vec::new();
    let mut line: Vec<Option<(Option<SimDevice>, D)>> = line.into_iter().map(Some).collect();
    for &(device, at) in placed {
        let Some(from) = line.iter().position(|d| matches!(d, Some((Some(x), _)) if *x == device)) else {
            return Err(format!("the simulated segment has no {} to place at position {at}: enable it in the segment's configuration", device.describe()));
        };
        if at >= len {
            return Err(format!("the simulated segment has {len} devices (positions 0 to {}): no position {at} for its {}", len - 1, device.describe()));
        }
        if let Some(other) = what[at] {
            return Err(format!("{} and {} are both placed at position {at}", other.describe(), device.describe()));
        }
        what[at] = Some(device);
        slots[at] = line[from].take().map(|(_, d)| d);
    }
    rest.extend(line.into_iter().flatten().map(|(_, d)| d));
    let mut rest = rest.into_iter();
    // The placed took one slot each, so the rest fill the others exactly.
    Ok(slots.into_iter().filter_map(|slot| slot.or_else(|| rest.next())).collect())
}

impl SimDevice {
    /// What it is, for messages.
    fn describe(&self) -> String {
        match self {
            SimDevice::SafetyPlc => "safety PLC".into(),
            SimDevice::ForceTorque => "force/torque sensor".into(),
            SimDevice::Drive(i) => format!("drive {}", i + 1),
        }
    }
}

/// Devices with the faults real lines have, to test the master's diagnostics against (push
/// them onto a [`Segment`]).
pub mod faulty {
    use super::*;
    use morc_ecat_sim::SubDevice;

    /// A digital input terminal whose EEPROM marks its input sync manager virtual (enable byte
    /// bit 2): a master that configures it from the EEPROM enables that SM, and the terminal
    /// refuses SAFE-OP with AL status code 0x001E (invalid input configuration).
    pub fn input_terminal_with_virtual_sm(channels: u32, clock_offset_ns: u64) -> Result<SubDevice, String> {
        let entries: Vec<PdoEntrySpec> = (0..channels).map(|c| (0x6000 + (c as u16) * 0x10, 1, 1)).collect();
        let spec = ImageSpec {
            product_code: 0x1F00 + channels,
            name: &format!("SIM-DI{channels}-VSM"),
            group: "DigIn",
            rx: &[],
            tx: &entries,
            coe: false,
            pd_sms: [(0x0F00, 0x44), (0x1000, 0x00)],
        };
        let mut desc = description(&spec);
        for sm in &mut desc.sync_managers {
            if sm.usage == SyncManagerUsage::ProcessDataIn {
                sm.enable = 0x05;
            }
        }
        let image = build_image(&desc, 512).map_err(|e| e.to_string())?;
        digital_inputs(image, EscConfig::et1200(), clock_offset_ns)
    }

    /// A CiA 402 drive whose EEPROM says CoE but whose mailbox never answers it (an
    /// EEPROM-only device): its process data is described by the PDOs in its EEPROM — the
    /// mapping morc's drive class uses — and a master must take them from there.
    pub fn drive_without_coe(clock_offset_ns: u64, plant: Box<dyn DrivePlant>) -> Result<SubDevice, String> {
        use morc_ecat_wire::cia402::pdo::{RX, TX};
        drive_without_coe_mapping(clock_offset_ns, plant, &RX, &TX)
    }

    /// As [`drive_without_coe`], its EEPROM (and its fixed mapping) holding the PDO entries
    /// `rx` and `tx` (e.g. ETG.6010's 0x1701/0x1B01: controlword and target position,
    /// statusword and position actual value).
    pub fn drive_without_coe_mapping(clock_offset_ns: u64, plant: Box<dyn DrivePlant>, rx: &[u32], tx: &[u32]) -> Result<SubDevice, String> {
        use morc_ecat_wire::cia402::pdo::decode;
        let entries = |mapping: &[u32]| -> Vec<PdoEntrySpec> { mapping.iter().map(|m| decode(*m)).collect() };
        let (rx_entries, tx_entries) = (entries(rx), entries(tx));
        let spec = ImageSpec { product_code: identity::DRIVE + 1, name: "MORC-402-EEPROM", group: "Drives", rx: &rx_entries, tx: &tx_entries, coe: true, pd_sms: NO_PD };
        let image = build_image(&description(&spec), 2048).map_err(|e| e.to_string())?;
        let info = image.parse().map_err(|e| e.to_string())?;
        let mut drive = morc_ecat_sim::Cia402Drive::new(info.identity, "MORC-402-EEPROM", false, plant);
        drive.set_default_mapping(rx, tx);
        // Configured for CSP by its own means: its PDOs may not carry the mode.
        drive.set_mode_of_operation(morc_ecat_wire::cia402::mode::CSP);
        let esc = morc_ecat_sim::Esc::new(EscConfig::et1100_dc_sync(), image, clock_offset_ns);
        Ok(SubDevice::new(esc, Box::new(WithoutCoe(drive))))
    }

    /// A drive application whose mailbox takes requests and never answers.
    struct WithoutCoe(morc_ecat_sim::Cia402Drive);

    impl morc_ecat_sim::DeviceApp for WithoutCoe {
        fn on_transition(&mut self, esc: &morc_ecat_sim::Esc, from: morc_ecat_sim::AlState, to: morc_ecat_sim::AlState) -> Result<(), u16> {
            self.0.on_transition(esc, from, to)
        }
        fn on_mailbox(&mut self, _state: morc_ecat_sim::AlState, _request: &[u8], _response: &mut [u8]) -> usize {
            0
        }
        fn after_frame(&mut self, esc: &mut morc_ecat_sim::Esc) {
            self.0.after_frame(esc)
        }
        fn step(&mut self, esc: &mut morc_ecat_sim::Esc, dt_ns: u64) {
            self.0.step(esc, dt_ns)
        }
        // The drive itself, so `app_as::<Cia402Drive>()` finds it.
        fn as_any(&self) -> &dyn std::any::Any {
            &self.0
        }
        fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
            &mut self.0
        }
    }
}

/// [`sim_segment`], shared for the in-process transport.
pub fn shared_sim_segment(config: &SimSegmentConfig) -> Result<SharedSegment, String> {
    Ok(Arc::new(Mutex::new(sim_segment(config)?)))
}

/// Where `--bus` (morc run), `morc bus scan --sim | --iface` or `morc.start_engine { bus = … }`
/// points: "sim" is the simulated cell ([`SimSegmentConfig::cell`]) with `drives` drives,
/// anything else a network interface.
pub fn link_for(spec: &str, drives: usize) -> Result<Link, BusError> {
    match spec {
        "sim" => Ok(Link::Simulated(shared_sim_segment(&SimSegmentConfig::cell(drives)).map_err(BusError::Sim)?)),
        iface if !iface.is_empty() => Ok(Link::Interface(iface.to_string())),
        _ => Err(BusError::Config("the bus is 'sim' (the simulated cell) or a network interface name (e.g. eth1)".into())),
    }
}

/// The clock a run on the bus `spec` takes: `asked` (the `--clock` or `clock =` given, if
/// any), else `default`. A real interface runs on the wall clock whatever the default: its
/// drives take a setpoint per SYNC0 pulse, and on the virtual clock the cycles (and the
/// setpoints) would go out as fast as the CPU computes them. Asking for the virtual clock
/// there is an error saying so; the simulated segment ("sim") takes either.
pub fn clock_for(spec: &str, asked: Option<morc_kernel::ClockKind>, default: morc_kernel::ClockKind) -> Result<morc_kernel::ClockKind, BusError> {
    use morc_kernel::ClockKind;
    match (spec, asked) {
        ("sim", asked) => Ok(asked.unwrap_or(default)),
        (iface, Some(ClockKind::Virtual)) => Err(BusError::Config(format!(
            "the virtual clock cannot drive the EtherCAT bus on {iface}: its cycles, and the drives' setpoints, would go out as fast as the CPU computes them, not once per SYNC0 period; a real interface runs on the wall clock: leave the clock out or ask for the wall clock (--clock wall, clock = \"wall\"); the virtual clock is for the simulated segment (--bus sim, bus = \"sim\")"
        ))),
        (_, _) => Ok(ClockKind::Wall),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line of named devices: the coupler, `drives` drives, a PLC and a sensor.
    fn line(drives: usize) -> Vec<(Option<SimDevice>, String)> {
        let mut l = vec![(None, "coupler".to_string())];
        l.extend((0..drives).map(|i| (Some(SimDevice::Drive(i)), format!("drive{}", i + 1))));
        l.push((None, "do8".into()));
        l.push((Some(SimDevice::SafetyPlc), "plc".into()));
        l.push((Some(SimDevice::ForceTorque), "ft".into()));
        l
    }

    #[test]
    fn placed_devices_land_where_asked_and_the_others_fill_the_rest_in_order() {
        // Drives wired in reverse, the sensor between them and the coupler.
        let placed = [(SimDevice::Drive(0), 4), (SimDevice::Drive(1), 3), (SimDevice::Drive(2), 2), (SimDevice::ForceTorque, 1)];
        assert_eq!(place(line(3), &placed).unwrap(), ["coupler", "ft", "drive3", "drive2", "drive1", "do8", "plc"]);
        // A gap between drives takes the next unplaced device.
        let gap = [(SimDevice::Drive(0), 1), (SimDevice::Drive(1), 3)];
        assert_eq!(place(line(2), &gap).unwrap(), ["coupler", "drive1", "do8", "drive2", "plc", "ft"]);
        assert_eq!(place(line(2), &[]).unwrap(), ["coupler", "drive1", "drive2", "do8", "plc", "ft"]);
    }

    #[test]
    fn two_devices_at_one_position_or_one_past_the_line_are_errors() {
        let twice = place(line(2), &[(SimDevice::Drive(0), 2), (SimDevice::Drive(1), 2)]).unwrap_err();
        assert!(twice.contains("drive 1 and drive 2 are both placed at position 2"), "{twice}");
        let far = place(line(2), &[(SimDevice::Drive(1), 9)]).unwrap_err();
        assert!(far.contains("no position 9 for its drive 2"), "{far}");
        let missing = place(line(2), &[(SimDevice::Drive(5), 1)]).unwrap_err();
        assert!(missing.contains("no drive 6"), "{missing}");
    }
}
