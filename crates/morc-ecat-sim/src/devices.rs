//! Simulated devices: a coupler, digital output terminals and a CiA 402 servo drive.
//!
//! Each is an [`Esc`] with an SII image (a real one where we have it) and a [`DeviceApp`].

use super::esc::{al_code, AlState, Esc, EscConfig};
use super::mailbox::{Access, CoeServer, ObjectDictionary};
use super::segment::{DeviceApp, PassiveApp, SubDevice};
use super::sii::{self, SiiImage, SyncManagerUsage};
use std::any::Any;
use std::path::Path;

/// Reads an SII image file (`.bin` raw, `.hex` raw or hex text).
pub fn load_sii(path: impl AsRef<Path>) -> Result<SiiImage, String> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    SiiImage::from_file_bytes(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// A coupler (EK1100-style, ET1100 ESC): no process data, no mailbox.
pub fn coupler(image: SiiImage, clock_offset_ns: u64) -> SubDevice {
    SubDevice::new(Esc::new(EscConfig::et1100(), image, clock_offset_ns), Box::new(PassiveApp))
}

/// Digital output terminal (EL2004, EL2828, EL2889…): outputs follow the process-data
/// SyncManager in Op and fall to 0 (the safe state) otherwise.
#[derive(Debug, Clone)]
pub struct DigitalOutputs {
    channels: u32,
    sm_index: u8,
    outputs: u32,
}

impl DigitalOutputs {
    /// Output bits, channel 1 in bit 0.
    pub fn outputs(&self) -> u32 {
        self.outputs
    }

    /// Number of output channels (bits of the RxPDOs).
    pub fn channels(&self) -> u32 {
        self.channels
    }
}

impl DeviceApp for DigitalOutputs {
    fn on_transition(&mut self, esc: &Esc, _from: AlState, to: AlState) -> Result<(), u16> {
        if to == AlState::SafeOp || to == AlState::Op {
            let sm = esc.sm(self.sm_index);
            let needed = self.channels.div_ceil(8) as u16;
            if !sm.enabled() || sm.length < needed {
                return Err(al_code::INVALID_OUTPUT_CONFIG);
            }
        }
        Ok(())
    }

    fn after_frame(&mut self, esc: &mut Esc) {
        if esc.al_state() != AlState::Op {
            self.outputs = 0;
            return;
        }
        let sm = esc.sm(self.sm_index);
        let mut bytes = [0u8; 4];
        let n = usize::from(sm.length).min(4);
        esc.pdi_read(sm.start, &mut bytes[..n]);
        let mask = if self.channels >= 32 { u32::MAX } else { (1 << self.channels) - 1 };
        self.outputs = u32::from_le_bytes(bytes) & mask;
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// A digital output terminal from its SII image: channel count from the RxPDO bits, the
/// SyncManager from the process-data-out entry.
/// `esc` is the chip behind it, e.g. [`EscConfig::et1200`] (ET1200-based EL2xxx).
pub fn digital_outputs(image: SiiImage, esc: EscConfig, clock_offset_ns: u64) -> Result<SubDevice, String> {
    let info = image.parse().map_err(|e| e.to_string())?;
    let channels: u32 = info.rx_pdos.iter().map(|p| p.bit_len()).sum();
    let sm_index = info
        .sync_managers
        .iter()
        .position(|s| s.usage == SyncManagerUsage::ProcessDataOut)
        .ok_or_else(|| format!("{}: no process-data output SyncManager in the SII", info.name().unwrap_or("device")))? as u8;
    let app = DigitalOutputs { channels: channels.min(32), sm_index, outputs: 0 };
    Ok(SubDevice::new(Esc::new(esc, image, clock_offset_ns), Box::new(app)))
}

/// Digital input terminal (EL1004, EL1008…): the process-data SM shows the input bits, set
/// from outside with [`DigitalInputs::set_inputs`] (a test, or the simulated robot's sensors).
#[derive(Debug, Clone)]
pub struct DigitalInputs {
    channels: u32,
    sm_index: u8,
    inputs: u32,
    /// Where the bits come from each cycle, when a simulated world feeds them.
    feed: Option<std::sync::Arc<crate::SensorFeed>>,
}

impl DigitalInputs {
    /// Sets the input bits, channel 1 in bit 0; bits beyond the channel count are dropped.
    pub fn set_inputs(&mut self, bits: u32) {
        let mask = if self.channels >= 32 { u32::MAX } else { (1 << self.channels) - 1 };
        self.inputs = bits & mask;
    }
    /// The input bits, channel 1 in bit 0.
    pub fn inputs(&self) -> u32 {
        self.inputs
    }
}

impl DeviceApp for DigitalInputs {
    fn on_transition(&mut self, esc: &Esc, _from: AlState, to: AlState) -> Result<(), u16> {
        if to == AlState::SafeOp || to == AlState::Op {
            let sm = esc.sm(self.sm_index);
            if !sm.enabled() || sm.length < self.channels.div_ceil(8) as u16 {
                return Err(al_code::INVALID_INPUT_CONFIG);
            }
        }
        Ok(())
    }

    fn after_frame(&mut self, esc: &mut Esc) {
        if let Some(bits) = self.feed.as_ref().map(|f| f.bits()) {
            self.set_inputs(bits);
        }
        if esc.al_state() >= AlState::SafeOp {
            let sm = esc.sm(self.sm_index);
            let bytes = self.inputs.to_le_bytes();
            let n = usize::from(sm.length).min(4);
            esc.pdi_write(sm.start, &bytes[..n]);
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// A digital input terminal from its SII image: channels from the TxPDO bits.
pub fn digital_inputs(image: SiiImage, esc: EscConfig, clock_offset_ns: u64) -> Result<SubDevice, String> {
    digital_inputs_fed(image, esc, clock_offset_ns, None)
}

/// As [`digital_inputs`], its bits read from `feed` every cycle when given.
pub fn digital_inputs_fed(image: SiiImage, esc: EscConfig, clock_offset_ns: u64, feed: Option<std::sync::Arc<crate::SensorFeed>>) -> Result<SubDevice, String> {
    let info = image.parse().map_err(|e| e.to_string())?;
    let channels: u32 = info.tx_pdos.iter().map(|p| p.bit_len()).sum();
    let sm_index = info
        .sync_managers
        .iter()
        .position(|s| s.usage == SyncManagerUsage::ProcessDataIn)
        .ok_or_else(|| format!("{}: no process-data input SyncManager in the SII", info.name().unwrap_or("device")))? as u8;
    let app = DigitalInputs { channels: channels.min(32), sm_index, inputs: 0, feed };
    Ok(SubDevice::new(Esc::new(esc, image, clock_offset_ns), Box::new(app)))
}

// ---------------------------------------------------------------------------------------------
// CiA 402 drive
// ---------------------------------------------------------------------------------------------

pub use morc_ecat_wire::cia402::PowerState;
use morc_ecat_wire::cia402::{controlword, mode, obj, pdo, statusword, PROFILE};

/// What the drive asks of its plant in one step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PlantCommand {
    /// Power stage off or holding: keep still (brake).
    Hold,
    /// Target position (counts) and torque offset (per mille of rated torque, 0x60B2).
    Position {
        /// Target position (counts, 0x607A).
        target: f64,
        /// Torque feed-forward (per mille of rated torque, 0x60B2).
        torque_offset: f64,
    },
    /// Target velocity (counts/s) and torque offset.
    Velocity {
        /// Target velocity (counts/s, 0x60FF).
        target: f64,
        /// Torque feed-forward (per mille of rated torque, 0x60B2).
        torque_offset: f64,
    },
    /// Target torque (per mille of rated torque, 0x6071).
    Torque(f64),
    /// Decelerate to standstill (quick stop / fault reaction).
    Stop,
}

/// Actual values (position in counts, velocity in counts/s, torque in per-mille of rated).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PlantActual {
    /// Position (counts).
    pub position: f64,
    /// Velocity (counts/s).
    pub velocity: f64,
    /// Torque (per mille of rated torque).
    pub torque: f64,
}

/// The mechanics behind a drive; the robot dynamics plug in here later.
pub trait DrivePlant: Send {
    /// Advances the mechanics by `dt_s` seconds under `command`; returns the new actual values.
    fn step(&mut self, command: PlantCommand, dt_s: f64) -> PlantActual;
    /// The actual values now.
    fn actual(&self) -> PlantActual;
}

/// An ideal position follower with velocity and acceleration limits.
#[derive(Debug, Clone, PartialEq)]
pub struct IdealFollower {
    /// Velocity limit (counts/s).
    pub max_velocity: f64,
    /// Deceleration on stop (counts/s²).
    pub max_acceleration: f64,
    /// Velocity per torque unit per second, for torque mode (a plain inertia).
    pub torque_gain: f64,
    state: PlantActual,
}

impl IdealFollower {
    /// A follower at rest at 0 with these limits (counts/s, counts/s²).
    pub fn new(max_velocity: f64, max_acceleration: f64) -> Self {
        Self { max_velocity, max_acceleration, torque_gain: 1000.0, state: PlantActual::default() }
    }
}

impl DrivePlant for IdealFollower {
    fn step(&mut self, command: PlantCommand, dt: f64) -> PlantActual {
        let s = &mut self.state;
        match command {
            PlantCommand::Hold => {
                s.velocity = 0.0;
                s.torque = 0.0;
            }
            PlantCommand::Position { target, .. } => {
                let step = (target - s.position).clamp(-self.max_velocity * dt, self.max_velocity * dt);
                s.position += step;
                s.velocity = if dt > 0.0 { step / dt } else { 0.0 };
                s.torque = 0.0;
            }
            PlantCommand::Velocity { target: v, .. } => {
                s.velocity = v.clamp(-self.max_velocity, self.max_velocity);
                s.position += s.velocity * dt;
                s.torque = 0.0;
            }
            PlantCommand::Torque(t) => {
                s.torque = t;
                s.velocity = (s.velocity + t * self.torque_gain * dt).clamp(-self.max_velocity, self.max_velocity);
                s.position += s.velocity * dt;
            }
            PlantCommand::Stop => {
                let dv = self.max_acceleration * dt;
                s.velocity = if s.velocity.abs() <= dv { 0.0 } else { s.velocity - dv * s.velocity.signum() };
                s.position += s.velocity * dt;
                s.torque = 0.0;
            }
        }
        *s
    }

    fn actual(&self) -> PlantActual {
        self.state
    }
}

/// One PDO entry mapped to bytes of a SyncManager buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct MappedEntry {
    index: u16,
    sub: u8,
    bytes: u8,
    offset: u16,
}

/// The CiA 402 drive application: CoE object dictionary, PDO mapping, the power drive state
/// machine, and a plant.
pub struct Cia402Drive {
    od: ObjectDictionary,
    coe: CoeServer,
    plant: Box<dyn DrivePlant>,
    state: PowerState,
    previous_controlword: u16,
    fault_pending: Option<u16>,
    rx_map: Vec<MappedEntry>,
    tx_map: Vec<MappedEntry>,
    rx_sm: u8,
    tx_sm: u8,
}

impl std::fmt::Debug for Cia402Drive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cia402Drive").field("state", &self.state).finish()
    }
}

impl Cia402Drive {
    /// A drive whose identity objects (0x1018) match `identity`, with the default mapping
    /// RxPDO 0x1600 = {6040, 607A, 60FF, 6071, 6060}, TxPDO 0x1A00 = {6041, 6064, 606C, 6077, 6061}:
    /// the first five entries of the mapping morc's drive class asks for.
    pub fn new(identity: sii::Identity, name: &str, complete_access: bool, plant: Box<dyn DrivePlant>) -> Self {
        let mut od = ObjectDictionary::new();
        use Access::*;
        // Device type: profile 402, servo drive (CiA 402-2 §6.2, 0x1000).
        od.add_var(obj::DEVICE_TYPE, "Device type", &(0x0002_0000 | PROFILE).to_le_bytes(), ReadOnly);
        od.add_var(0x1001, "Error register", &[0], ReadOnly);
        od.add_string(0x1008, "Manufacturer device name", name);
        od.add_string(0x100A, "Manufacturer software version", "morc-sim 0.1");
        od.add_identity(&identity);
        let rx: Vec<[u8; 4]> = pdo::RX[..5].iter().map(|m| m.to_le_bytes()).collect();
        let tx: Vec<[u8; 4]> = pdo::TX[..5].iter().map(|m| m.to_le_bytes()).collect();
        // Room for 8 entries per PDO, 5 in use: masters may remap (e.g. add 0x603F).
        let unused = [0u8; 4];
        let rx_subs: Vec<(&[u8], Access)> = rx.iter().map(|m| &m[..]).chain(std::iter::repeat_n(&unused[..], 3)).map(|m| (m, ReadWritePreOp)).collect();
        let tx_subs: Vec<(&[u8], Access)> = tx.iter().map(|m| &m[..]).chain(std::iter::repeat_n(&unused[..], 3)).map(|m| (m, ReadWritePreOp)).collect();
        od.add_record(obj::RX_PDO_1, "RxPDO map 1", ReadWritePreOp, &rx_subs);
        od.add_record(obj::TX_PDO_1, "TxPDO map 1", ReadWritePreOp, &tx_subs);
        od.set(obj::RX_PDO_1, 0, &[rx.len() as u8]);
        od.set(obj::TX_PDO_1, 0, &[tx.len() as u8]);
        // SM communication types: mailbox out, in, process data out, in (ETG.1000.6 0x1C00).
        od.add_record(0x1C00, "Sync manager type", ReadOnly, &[(&[1], ReadOnly), (&[2], ReadOnly), (&[3], ReadOnly), (&[4], ReadOnly)]);
        od.add_record(obj::RX_PDO_ASSIGN, "RxPDO assign", ReadWritePreOp, &[(&obj::RX_PDO_1.to_le_bytes(), ReadWritePreOp)]);
        od.add_record(obj::TX_PDO_ASSIGN, "TxPDO assign", ReadWritePreOp, &[(&obj::TX_PDO_1.to_le_bytes(), ReadWritePreOp)]);
        od.add_var(obj::ERROR_CODE, "Error code", &0u16.to_le_bytes(), ReadOnly);
        od.add_var(obj::CONTROLWORD, "Controlword", &0u16.to_le_bytes(), ReadWrite);
        od.add_var(obj::STATUSWORD, "Statusword", &0u16.to_le_bytes(), ReadOnly);
        od.add_var(obj::QUICK_STOP_OPTION, "Quick stop option code", &2i16.to_le_bytes(), ReadWrite);
        od.add_var(obj::MODES_OF_OPERATION, "Modes of operation", &[0], ReadWrite);
        od.add_var(obj::MODES_DISPLAY, "Modes of operation display", &[0], ReadOnly);
        od.add_var(obj::POSITION_ACTUAL, "Position actual value", &0i32.to_le_bytes(), ReadOnly);
        od.add_var(obj::VELOCITY_ACTUAL, "Velocity actual value", &0i32.to_le_bytes(), ReadOnly);
        od.add_var(obj::TARGET_TORQUE, "Target torque", &0i16.to_le_bytes(), ReadWrite);
        // Unlimited until a master sets it (beyond the i16 target torque's range).
        od.add_var(obj::MAX_TORQUE, "Max torque", &u16::MAX.to_le_bytes(), ReadWrite);
        od.add_var(obj::TORQUE_ACTUAL, "Torque actual value", &0i16.to_le_bytes(), ReadOnly);
        od.add_var(obj::TARGET_POSITION, "Target position", &0i32.to_le_bytes(), ReadWrite);
        od.add_var(obj::TARGET_VELOCITY, "Target velocity", &0i32.to_le_bytes(), ReadWrite);
        od.add_var(obj::TORQUE_OFFSET, "Torque offset", &0i16.to_le_bytes(), ReadWrite);
        od.add_var(obj::SUPPORTED_MODES, "Supported drive modes", &mode::SUPPORTED_CYCLIC.to_le_bytes(), ReadOnly);
        Self {
            od,
            coe: CoeServer::new(complete_access),
            plant,
            state: PowerState::NotReadyToSwitchOn,
            previous_controlword: 0,
            fault_pending: None,
            rx_map: Vec::with_capacity(16),
            tx_map: Vec::with_capacity(16),
            rx_sm: 2,
            tx_sm: 3,
        }
    }

    /// The drive's CiA 402 state.
    pub fn state(&self) -> PowerState {
        self.state
    }

    /// Replaces the default PDO mapping (0x1600 / 0x1A00, at most 8 entries each: index << 16
    /// | sub-index << 8 | bits), e.g. to match the PDO description of a drive's EEPROM.
    pub fn set_default_mapping(&mut self, rx: &[u32], tx: &[u32]) {
        for (pdo, entries) in [(obj::RX_PDO_1, rx), (obj::TX_PDO_1, tx)] {
            let entries = &entries[..entries.len().min(8)];
            for (i, m) in entries.iter().enumerate() {
                self.od.set(pdo, i as u8 + 1, &m.to_le_bytes());
            }
            self.od.set(pdo, 0, &[entries.len() as u8]);
        }
    }

    /// Sets the mode of operation (0x6060) the drive runs in, as its own configuration does
    /// for a drive whose PDOs do not carry the mode (e.g. a fixed CSP mapping).
    pub fn set_mode_of_operation(&mut self, mode: i8) {
        self.od.set(obj::MODES_OF_OPERATION, 0, &[mode as u8]);
    }

    /// The drive's CoE object dictionary.
    pub fn od(&self) -> &ObjectDictionary {
        &self.od
    }

    /// The mechanics behind the drive.
    pub fn plant(&self) -> &dyn DrivePlant {
        self.plant.as_ref()
    }

    /// Raises a drive fault (e.g. following error); the drive goes through fault reaction to
    /// Fault with `error_code` in 0x603F.
    pub fn inject_fault(&mut self, error_code: u16) {
        self.fault_pending = Some(error_code);
    }

    fn i32_of(&self, index: u16) -> i32 {
        self.od.get_u32(index, 0).unwrap_or(0) as i32
    }

    /// Builds the PDO → SM byte maps from 0x1C12/0x1C13 (ETG.1000.6 §5.6.7.4). Done at the
    /// PreOp → SafeOp transition, the only allocation point, not per cycle.
    fn build_map(&self, assign: u16) -> Result<Vec<MappedEntry>, ()> {
        let mut map = Vec::with_capacity(16);
        let mut offset = 0u16;
        let count = self.od.get_u8(assign, 0).ok_or(())?;
        for i in 1..=count {
            let pdo = self.od.get_u16(assign, i).ok_or(())?;
            let entries = self.od.get_u8(pdo, 0).ok_or(())?;
            for e in 1..=entries {
                let m = self.od.get_u32(pdo, e).ok_or(())?;
                let (index, sub, bits) = pdo::decode(m);
                if bits % 8 != 0 {
                    return Err(());
                }
                // Index 0 entries are padding (gaps) in a mapping.
                if index != 0 {
                    let len = self.od.read(index, sub).map_err(|_| ())?.len();
                    if len * 8 != usize::from(bits) {
                        return Err(());
                    }
                    map.push(MappedEntry { index, sub, bytes: bits / 8, offset });
                }
                offset += u16::from(bits / 8);
            }
        }
        Ok(map)
    }

    fn map_len(map: &[MappedEntry]) -> u16 {
        map.iter().map(|m| m.offset + u16::from(m.bytes)).max().unwrap_or(0)
    }

    fn run_state_machine(&mut self) {
        use PowerState::*;
        let cw = self.od.get_u16(obj::CONTROLWORD, 0).unwrap_or(0);
        let fault_reset_edge = cw & controlword::FAULT_RESET != 0 && self.previous_controlword & controlword::FAULT_RESET == 0;
        self.previous_controlword = cw;
        if let Some(code) = self.fault_pending.take() {
            self.od.set(obj::ERROR_CODE, 0, &code.to_le_bytes());
            if !matches!(self.state, Fault | FaultReactionActive) {
                self.state = FaultReactionActive;
                return;
            }
        }
        use controlword::Command;
        let command = controlword::command(cw);
        let disable_voltage = command == Command::DisableVoltage;
        let quick_stop = command == Command::QuickStop;
        let shutdown = command == Command::Shutdown;
        let switch_on = command == Command::SwitchOn;
        let switch_on_enable = command == Command::EnableOperation;
        self.state = match self.state {
            NotReadyToSwitchOn => SwitchOnDisabled,
            SwitchOnDisabled if shutdown => ReadyToSwitchOn,
            ReadyToSwitchOn if switch_on => SwitchedOn,
            ReadyToSwitchOn if switch_on_enable => OperationEnabled,
            ReadyToSwitchOn if disable_voltage || quick_stop => SwitchOnDisabled,
            SwitchedOn if switch_on_enable => OperationEnabled,
            SwitchedOn if shutdown => ReadyToSwitchOn,
            SwitchedOn if disable_voltage || quick_stop => SwitchOnDisabled,
            OperationEnabled if quick_stop => QuickStopActive,
            OperationEnabled if switch_on => SwitchedOn,
            OperationEnabled if shutdown => ReadyToSwitchOn,
            OperationEnabled if disable_voltage => SwitchOnDisabled,
            QuickStopActive if disable_voltage => SwitchOnDisabled,
            // Quick stop option 2: stop, then switch on disabled once at standstill.
            QuickStopActive if self.plant.actual().velocity == 0.0 => SwitchOnDisabled,
            FaultReactionActive if self.plant.actual().velocity == 0.0 => Fault,
            Fault if fault_reset_edge => {
                self.od.set(obj::ERROR_CODE, 0, &0u16.to_le_bytes());
                SwitchOnDisabled
            }
            s => s,
        };
    }

    fn plant_command(&self) -> PlantCommand {
        use PowerState::*;
        match self.state {
            OperationEnabled => match self.od.get_u8(obj::MODES_DISPLAY, 0).map(|m| m as i8) {
                Some(mode::CSP) => PlantCommand::Position { target: f64::from(self.i32_of(obj::TARGET_POSITION)), torque_offset: self.torque_offset() },
                Some(mode::CSV) => PlantCommand::Velocity { target: f64::from(self.i32_of(obj::TARGET_VELOCITY)), torque_offset: self.torque_offset() },
                Some(mode::CST) => {
                    let max = f64::from(self.od.get_u16(obj::MAX_TORQUE, 0).unwrap_or(u16::MAX));
                    PlantCommand::Torque(f64::from(self.od.get_u16(obj::TARGET_TORQUE, 0).unwrap_or(0) as i16).clamp(-max, max))
                }
                _ => PlantCommand::Hold,
            },
            QuickStopActive | FaultReactionActive => PlantCommand::Stop,
            _ => PlantCommand::Hold,
        }
    }

    fn torque_offset(&self) -> f64 {
        f64::from(self.od.get_u16(obj::TORQUE_OFFSET, 0).unwrap_or(0) as i16)
    }

    fn update_statusword(&mut self, at_target: bool) {
        let mut sw = self.state.statusword_bits();
        if matches!(self.state, PowerState::SwitchedOn | PowerState::OperationEnabled | PowerState::QuickStopActive) {
            sw |= statusword::VOLTAGE_ENABLED;
        }
        sw |= statusword::REMOTE;
        if at_target {
            sw |= statusword::TARGET_REACHED;
        }
        if self.state == PowerState::OperationEnabled {
            sw |= statusword::FOLLOWS_COMMAND;
        }
        self.od.set(obj::STATUSWORD, 0, &sw.to_le_bytes());
    }
}

impl DeviceApp for Cia402Drive {
    fn on_transition(&mut self, esc: &Esc, _from: AlState, to: AlState) -> Result<(), u16> {
        if to == AlState::SafeOp && esc.al_state() == AlState::PreOp {
            let rx = self.build_map(obj::RX_PDO_ASSIGN).map_err(|_| al_code::INVALID_OUTPUT_CONFIG)?;
            let tx = self.build_map(obj::TX_PDO_ASSIGN).map_err(|_| al_code::INVALID_INPUT_CONFIG)?;
            // The master must size the process-data SMs to the mapping (ETG.1000.6 §6.4.1.3).
            let (rx_sm, tx_sm) = (esc.sm(self.rx_sm), esc.sm(self.tx_sm));
            if Self::map_len(&rx) > 0 && (!rx_sm.enabled() || rx_sm.length != Self::map_len(&rx)) {
                return Err(al_code::INVALID_OUTPUT_CONFIG);
            }
            if Self::map_len(&tx) > 0 && (!tx_sm.enabled() || tx_sm.length != Self::map_len(&tx)) {
                return Err(al_code::INVALID_INPUT_CONFIG);
            }
            self.rx_map = rx;
            self.tx_map = tx;
        }
        if to < AlState::SafeOp || to == AlState::Bootstrap {
            // Leaving SafeOp: outputs no longer valid, the drive disables (CiA 402 on AL drop).
            if matches!(self.state, PowerState::OperationEnabled) {
                self.state = PowerState::QuickStopActive;
            }
        }
        Ok(())
    }

    fn on_mailbox(&mut self, state: AlState, request: &[u8], response: &mut [u8]) -> usize {
        self.coe.handle(&mut self.od, state, request, response)
    }

    fn after_frame(&mut self, esc: &mut Esc) {
        let state = esc.al_state();
        if state == AlState::Op {
            let sm = esc.sm(self.rx_sm);
            for m in &self.rx_map {
                let mut buf = [0u8; 8];
                let n = usize::from(m.bytes).min(8);
                esc.pdi_read(sm.start.wrapping_add(m.offset), &mut buf[..n]);
                self.od.set(m.index, m.sub, &buf[..n]);
            }
            // Mode display follows the requested mode for supported modes (0x6061).
            if let Some(requested) = self.od.get_u8(obj::MODES_OF_OPERATION, 0) {
                if matches!(requested as i8, mode::CSP | mode::CSV | mode::CST) {
                    self.od.set(obj::MODES_DISPLAY, 0, &[requested]);
                }
            }
        }
        if state == AlState::Op || state == AlState::SafeOp {
            let sm = esc.sm(self.tx_sm);
            for m in &self.tx_map {
                if let Ok(value) = self.od.read(m.index, m.sub) {
                    let mut buf = [0u8; 8];
                    let n = value.len().min(8);
                    buf[..n].copy_from_slice(&value[..n]);
                    esc.pdi_write(sm.start.wrapping_add(m.offset), &buf[..n]);
                }
            }
        }
    }

    fn step(&mut self, esc: &mut Esc, dt_ns: u64) {
        if esc.al_state() != AlState::Op && self.state == PowerState::OperationEnabled {
            // Process data stopped: quick stop (ETG.6010 §5, outputs invalid).
            self.state = PowerState::QuickStopActive;
        }
        self.run_state_machine();
        let command = self.plant_command();
        let actual = self.plant.step(command, dt_ns as f64 * 1e-9);
        self.od.set(obj::POSITION_ACTUAL, 0, &(actual.position.round() as i32).to_le_bytes());
        self.od.set(obj::VELOCITY_ACTUAL, 0, &(actual.velocity.round() as i32).to_le_bytes());
        self.od.set(obj::TORQUE_ACTUAL, 0, &(actual.torque.round() as i16).to_le_bytes());
        let at_target = match command {
            PlantCommand::Position { target, .. } => (target - actual.position).abs() < 0.5,
            _ => actual.velocity == 0.0,
        };
        self.update_statusword(at_target);
        self.after_frame(esc);
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// A CiA 402 servo drive with the given SII image (e.g. the Kollmorgen AKD's) and plant.
pub fn cia402_drive(image: SiiImage, clock_offset_ns: u64, plant: Box<dyn DrivePlant>) -> Result<SubDevice, String> {
    let info = image.parse().map_err(|e| e.to_string())?;
    if !info.mailbox.has_coe() {
        return Err(format!("{}: the SII has no CoE mailbox, a CiA 402 drive needs one", info.name().unwrap_or("device")));
    }
    let complete_access = info.general.is_some_and(|g| g.coe_details & sii::coe_details::COMPLETE_ACCESS != 0);
    let mut app = Cia402Drive::new(info.identity, info.description().or(info.name()).unwrap_or("CiA 402 drive"), complete_access, plant);
    let find = |usage| info.sync_managers.iter().position(|s| s.usage == usage).map(|i| i as u8);
    app.rx_sm = find(SyncManagerUsage::ProcessDataOut).unwrap_or(2);
    app.tx_sm = find(SyncManagerUsage::ProcessDataIn).unwrap_or(3);
    Ok(SubDevice::new(Esc::new(EscConfig::et1100_dc_sync(), image, clock_offset_ns), Box::new(app)))
}

/// An SII image for a drive that has no real one: morc's own identity, CoE with complete
/// access, the standard SM layout.
pub fn morc_drive_image() -> Result<SiiImage, sii::SiiError> {
    use sii::*;
    let desc = DeviceDescription {
        identity: Identity { vendor_id: 0x0000_0DEF, product_code: 0x0000_0402, revision: 1, serial: 1 },
        name: "morc simulated CiA 402 servo drive".into(),
        group: "Drives".into(),
        order_code: "MORC-402".into(),
        mailbox: MailboxConfig { receive_offset: 0x1000, receive_size: 128, send_offset: 0x1080, send_size: 128, protocols: protocol::COE },
        coe_details: coe_details::SDO | coe_details::PDO_ASSIGN | coe_details::COMPLETE_ACCESS,
        fmmus: vec![FmmuUsage::Outputs, FmmuUsage::Inputs, FmmuUsage::SyncManagerStatus],
        sync_managers: vec![
            SyncManagerEntry { start: 0x1000, length: 128, control: 0x26, enable: 1, usage: SyncManagerUsage::MailboxOut },
            SyncManagerEntry { start: 0x1080, length: 128, control: 0x22, enable: 1, usage: SyncManagerUsage::MailboxIn },
            SyncManagerEntry { start: 0x1100, length: 0, control: 0x64, enable: 1, usage: SyncManagerUsage::ProcessDataOut },
            SyncManagerEntry { start: 0x1180, length: 0, control: 0x20, enable: 1, usage: SyncManagerUsage::ProcessDataIn },
        ],
        tx_pdos: vec![],
        rx_pdos: vec![],
        strings: vec![],
    };
    build_image(&desc, 2048)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drive() -> (Cia402Drive, Esc) {
        let image = morc_drive_image().unwrap();
        let info = image.parse().unwrap();
        let d = Cia402Drive::new(info.identity, "test drive", true, Box::new(IdealFollower::new(1000.0, 100_000.0)));
        (d, Esc::new(EscConfig::et1100(), image, 0))
    }

    fn command(d: &mut Cia402Drive, esc: &mut Esc, controlword: u16) -> PowerState {
        d.od.set(obj::CONTROLWORD, 0, &controlword.to_le_bytes());
        d.step(esc, 1_000_000);
        d.state
    }

    fn statusword(d: &Cia402Drive) -> u16 {
        d.od.get_u16(obj::STATUSWORD, 0).unwrap()
    }

    #[test]
    fn in_cst_the_target_torque_is_limited_to_max_torque() {
        let (mut d, mut esc) = drive();
        esc.enter_state(AlState::Op);
        for cw in [0x0000, 0x0006, 0x0007, 0x000F] {
            command(&mut d, &mut esc, cw);
        }
        d.od.set(obj::MODES_DISPLAY, 0, &[mode::CST as u8]);
        d.od.set(obj::TARGET_TORQUE, 0, &(-2000i16).to_le_bytes());
        assert!(matches!(d.plant_command(), PlantCommand::Torque(t) if t == -2000.0), "no limit until one is set");
        d.od.set(obj::MAX_TORQUE, 0, &500u16.to_le_bytes());
        assert!(matches!(d.plant_command(), PlantCommand::Torque(t) if t == -500.0));
    }

    #[test]
    fn state_machine_enable_quick_stop_fault_reset() {
        use PowerState::*;
        let (mut d, mut esc) = drive();
        esc.enter_state(AlState::Op);
        assert_eq!(command(&mut d, &mut esc, 0x0000), SwitchOnDisabled);
        assert_eq!(statusword(&d) & 0x6F, 0x40);
        // Enable operation straight from switch on disabled is not a transition.
        assert_eq!(command(&mut d, &mut esc, 0x000F), SwitchOnDisabled);
        assert_eq!(command(&mut d, &mut esc, 0x0006), ReadyToSwitchOn);
        assert_eq!(statusword(&d) & 0x6F, 0x21);
        assert_eq!(command(&mut d, &mut esc, 0x0007), SwitchedOn);
        assert_eq!(statusword(&d) & 0x6F, 0x23);
        assert_eq!(command(&mut d, &mut esc, 0x000F), OperationEnabled);
        assert_eq!(statusword(&d) & 0x6F, 0x27);
        // CSV: move, then quick stop decelerates to standstill and ends in switch on disabled.
        d.od.set(obj::MODES_OF_OPERATION, 0, &[mode::CSV as u8]);
        d.od.set(obj::MODES_DISPLAY, 0, &[mode::CSV as u8]);
        d.od.set(obj::TARGET_VELOCITY, 0, &500i32.to_le_bytes());
        command(&mut d, &mut esc, 0x000F);
        assert_eq!(d.plant().actual().velocity, 500.0);
        assert_eq!(command(&mut d, &mut esc, 0x000B), QuickStopActive);
        assert_eq!(statusword(&d) & 0x6F, 0x07);
        let mut state = QuickStopActive;
        for _ in 0..20 {
            state = command(&mut d, &mut esc, 0x000B);
        }
        assert_eq!(state, SwitchOnDisabled);
        assert_eq!(d.plant().actual().velocity, 0.0);
        // Fault: reaction, then fault; reset only on a rising edge of bit 7.
        command(&mut d, &mut esc, 0x0006);
        d.inject_fault(0x8611);
        assert_eq!(command(&mut d, &mut esc, 0x0006), FaultReactionActive);
        assert_eq!(statusword(&d) & 0x6F, 0x0F);
        assert_eq!(command(&mut d, &mut esc, 0x0080), Fault);
        assert_eq!(d.od.get_u16(obj::ERROR_CODE, 0), Some(0x8611));
        // Bit 7 already high when entering Fault: holding it is no edge.
        assert_eq!(command(&mut d, &mut esc, 0x0080), Fault);
        assert_eq!(command(&mut d, &mut esc, 0x0000), Fault);
        assert_eq!(command(&mut d, &mut esc, 0x0080), SwitchOnDisabled);
        assert_eq!(d.od.get_u16(obj::ERROR_CODE, 0), Some(0));
    }

    #[test]
    fn csp_follows_with_velocity_limit() {
        let (mut d, mut esc) = drive();
        esc.enter_state(AlState::Op);
        for cw in [0x0000, 0x0006, 0x0007] {
            command(&mut d, &mut esc, cw);
        }
        d.od.set(obj::MODES_DISPLAY, 0, &[mode::CSP as u8]);
        d.od.set(obj::TARGET_POSITION, 0, &10i32.to_le_bytes());
        command(&mut d, &mut esc, 0x000F);
        // 1000 counts/s, 1 ms: one count per step.
        assert_eq!(d.od.get_u32(obj::POSITION_ACTUAL, 0), Some(1));
        for _ in 0..20 {
            command(&mut d, &mut esc, 0x000F);
        }
        assert_eq!(d.od.get_u32(obj::POSITION_ACTUAL, 0), Some(10));
        assert_ne!(statusword(&d) & statusword::TARGET_REACHED, 0, "target reached");
    }

    #[test]
    fn pdo_mapping_must_match_the_sync_managers() {
        let (mut d, esc) = drive();
        // SM2/SM3 not configured by a master: SafeOp is refused as invalid output config.
        let mut esc = esc;
        esc.enter_state(AlState::PreOp);
        assert_eq!(d.on_transition(&esc, AlState::PreOp, AlState::SafeOp), Err(al_code::INVALID_OUTPUT_CONFIG));
    }
}
