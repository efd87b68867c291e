//! The simulated segment morc runs on without hardware (`morc run --bus sim`, `morc bus scan
//! --sim`): a coupler, CiA 402 drives and digital I/O terminals, with morc's own identities
//! (vendor 0x0DEF) and EEPROM images built here, so nothing outside the binary is needed.

use crate::bus::devices::DriveConfig;
use crate::bus::transport::SharedSegment;
use crate::bus::virtual_segment::sii::{self, build_image, DeviceDescription, FmmuUsage, Identity, MailboxConfig, Pdo, PdoEntry, SyncManagerEntry, SyncManagerUsage};
use crate::bus::virtual_segment::{cia402_drive, coupler, digital_inputs, digital_outputs, morc_drive_image, EscConfig, IdealFollower, Segment};
use std::sync::{Arc, Mutex};

/// morc's vendor id for simulated devices.
pub const MORC_VENDOR_ID: u32 = 0x0000_0DEF;

/// What the simulated segment holds.
#[derive(Debug, Clone)]
pub struct SimSegmentConfig {
    pub drives: usize,
    /// Scaling of the simulated drives (the master's drive class uses the same).
    pub drive: DriveConfig,
    /// Joint velocity and acceleration limits of the simulated plant (rad/s, rad/s²).
    pub max_velocity: f64,
    pub max_acceleration: f64,
    pub digital_outputs: u32,
    pub digital_inputs: u32,
}

impl Default for SimSegmentConfig {
    fn default() -> Self {
        Self { drives: 6, drive: DriveConfig::default(), max_velocity: 3.0, max_acceleration: 30.0, digital_outputs: 8, digital_inputs: 8 }
    }
}

fn terminal_image(product_code: u32, name: &str, outputs: bool, channels: u32) -> Result<sii::SiiImage, String> {
    let entries = (0..channels)
        .map(|c| PdoEntry { index: if outputs { 0x7000 } else { 0x6000 } + (c as u16) * 0x10, sub_index: 1, name_string: 0, data_type: 1, bit_len: 1 })
        .collect();
    let bytes = channels.div_ceil(8) as u16;
    let (sm, pdo) = if outputs {
        (SyncManagerEntry { start: 0x0F00, length: bytes, control: 0x44, enable: 1, usage: SyncManagerUsage::ProcessDataOut }, Pdo { index: 0x1600, sync_manager: 0, name_string: 0, entries })
    } else {
        (SyncManagerEntry { start: 0x1000, length: bytes, control: 0x00, enable: 1, usage: SyncManagerUsage::ProcessDataIn }, Pdo { index: 0x1A00, sync_manager: 0, name_string: 0, entries })
    };
    let desc = DeviceDescription {
        identity: Identity { vendor_id: MORC_VENDOR_ID, product_code, revision: 1, serial: 0 },
        name: name.into(),
        group: if outputs { "DigOut" } else { "DigIn" }.into(),
        order_code: name.into(),
        mailbox: MailboxConfig { receive_offset: 0, receive_size: 0, send_offset: 0, send_size: 0, protocols: 0 },
        coe_details: 0,
        fmmus: vec![if outputs { FmmuUsage::Outputs } else { FmmuUsage::Inputs }],
        sync_managers: vec![sm],
        tx_pdos: if outputs { vec![] } else { vec![pdo.clone()] },
        rx_pdos: if outputs { vec![pdo] } else { vec![] },
    };
    build_image(&desc, 512).map_err(|e| e.to_string())
}

fn coupler_image() -> Result<sii::SiiImage, String> {
    let desc = DeviceDescription {
        identity: Identity { vendor_id: MORC_VENDOR_ID, product_code: 0x0000_1100, revision: 1, serial: 0 },
        name: "SIM-COUPLER".into(),
        group: "Coupler".into(),
        order_code: "SIM-COUPLER".into(),
        mailbox: MailboxConfig { receive_offset: 0, receive_size: 0, send_offset: 0, send_size: 0, protocols: 0 },
        coe_details: 0,
        fmmus: vec![],
        sync_managers: vec![],
        tx_pdos: vec![],
        rx_pdos: vec![],
    };
    build_image(&desc, 512).map_err(|e| e.to_string())
}

/// Coupler, then `drives` CiA 402 drives, then a digital output and a digital input terminal
/// (each left out when it has 0 channels). Devices at positions 0, 1.., in that order.
pub fn sim_segment(config: &SimSegmentConfig) -> Result<Segment, String> {
    config.drive.check()?;
    let mut s = Segment::new();
    s.push(coupler(coupler_image()?, 1_000));
    let counts_per_rad = config.drive.counts_per_rev * config.drive.gear / std::f64::consts::TAU;
    for i in 0..config.drives {
        let plant = IdealFollower::new(config.max_velocity * counts_per_rad, config.max_acceleration * counts_per_rad);
        let image = morc_drive_image().map_err(|e| e.to_string())?;
        s.push(cia402_drive(image, 2_000 + 100 * i as u64, Box::new(plant))?);
    }
    if config.digital_outputs > 0 {
        let image = terminal_image(0x2000 + config.digital_outputs, &format!("SIM-DO{}", config.digital_outputs), true, config.digital_outputs)?;
        s.push(digital_outputs(image, EscConfig::et1200(), 3_000)?);
    }
    if config.digital_inputs > 0 {
        let image = terminal_image(0x1000 + config.digital_inputs, &format!("SIM-DI{}", config.digital_inputs), false, config.digital_inputs)?;
        s.push(digital_inputs(image, EscConfig::et1200(), 4_000)?);
    }
    // Start virtual time away from 0 so DC system times look like a running line.
    s.set_time_ns(1_000_000_000);
    Ok(s)
}

/// [`sim_segment`], shared for the in-process transport.
pub fn shared_sim_segment(config: &SimSegmentConfig) -> Result<SharedSegment, String> {
    Ok(Arc::new(Mutex::new(sim_segment(config)?)))
}
