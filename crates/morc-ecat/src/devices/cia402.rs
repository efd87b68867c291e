//! CiA 402 servo drive (CiA 402-2 / ETG.6010), master side: PDO mapping set up through SDOs
//! in PreOp, the power drive state machine walked from the controlword and statusword (enable
//! sequence, quick stop, fault reset), cyclic synchronous position / velocity / torque, and
//! scaling between drive units (counts, per-mille torque) and joint SI units.

use super::pd;
use super::{DeviceClass, DeviceName, SdoValue, SdoWrite};
use std::f64::consts::TAU;

/// Cyclic synchronous mode the drive runs in when commanded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DriveMode {
    /// Cyclic synchronous position (8): the command is a joint position (rad).
    Csp,
    /// Cyclic synchronous velocity (9): the command is a joint velocity (rad/s).
    Csv,
    /// Cyclic synchronous torque (10): the command is a joint torque (N·m).
    Cst,
}

impl DriveMode {
    /// Modes of operation value (0x6060).
    pub fn code(self) -> i8 {
        match self {
            DriveMode::Csp => mode::CSP,
            DriveMode::Csv => mode::CSV,
            DriveMode::Cst => mode::CST,
        }
    }
}

impl std::str::FromStr for DriveMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "csp" | "position" => Ok(DriveMode::Csp),
            "csv" | "velocity" => Ok(DriveMode::Csv),
            "cst" | "torque" => Ok(DriveMode::Cst),
            _ => Err(format!("unknown drive mode '{s}': use csp, csv or cst")),
        }
    }
}

/// How a drive's units map to its joint, and how it is run.
#[derive(Debug, Clone, PartialEq)]
pub struct DriveConfig {
    /// Encoder counts per motor revolution (e.g. 2^20).
    pub counts_per_rev: f64,
    /// Motor revolutions per joint revolution.
    pub gear: f64,
    /// The joint turns the other way than the motor counts.
    pub reversed: bool,
    /// Joint position (rad) when the encoder reads 0 counts.
    pub offset: f64,
    /// Rated motor torque (N·m): the drive's torque objects are per mille of it.
    pub rated_torque: f64,
    /// Cyclic synchronous mode (modes of operation, 0x6060).
    pub mode: DriveMode,
    /// How long each step of the enable sequence may take before the drive is reported as
    /// not switching on (s).
    pub switch_on_timeout: f64,
    /// SDO downloads in PreOp after morc's own (mapping, mode): the drive's own gains and
    /// limits, as its manual names them (0x6072 max torque, a vendor's 0x2xxx loop gains).
    pub parameters: Vec<SdoWrite>,
}

impl Default for DriveConfig {
    fn default() -> Self {
        Self {
            counts_per_rev: 1_048_576.0,
            gear: 1.0,
            reversed: false,
            offset: 0.0,
            rated_torque: 1.0,
            mode: DriveMode::Csp,
            switch_on_timeout: 0.5,
            parameters: Vec::new(),
        }
    }
}

impl DriveConfig {
    fn sign(&self) -> f64 {
        if self.reversed {
            -1.0
        } else {
            1.0
        }
    }
    /// Counts per joint radian, signed by direction.
    fn counts_per_rad(&self) -> f64 {
        self.sign() * self.counts_per_rev * self.gear / TAU
    }
    /// Encoder counts (0x6064) → joint position (rad).
    pub fn position_from_counts(&self, counts: i32) -> f64 {
        f64::from(counts) / self.counts_per_rad() + self.offset
    }
    /// Saturates at the i32 range rather than wrapping.
    pub fn counts_from_position(&self, q: f64) -> i32 {
        ((q - self.offset) * self.counts_per_rad()).round().clamp(f64::from(i32::MIN), f64::from(i32::MAX)) as i32
    }
    /// Counts/s (0x606C) → joint velocity (rad/s).
    pub fn velocity_from_counts(&self, counts_per_s: i32) -> f64 {
        f64::from(counts_per_s) / self.counts_per_rad()
    }
    /// Joint velocity (rad/s) → counts/s (0x60FF); saturates at the i32 range.
    pub fn counts_from_velocity(&self, qd: f64) -> i32 {
        (qd * self.counts_per_rad()).round().clamp(f64::from(i32::MIN), f64::from(i32::MAX)) as i32
    }
    /// Per-mille of rated motor torque → joint torque (gear ratio, no losses).
    pub fn torque_from_per_mille(&self, t: i16) -> f64 {
        self.sign() * f64::from(t) * 1e-3 * self.rated_torque * self.gear
    }
    /// Joint torque (N·m) → per mille of rated motor torque (0x6071, 0x60B2); saturates at the i16 range.
    pub fn per_mille_from_torque(&self, tau: f64) -> i16 {
        (tau * self.sign() / (self.rated_torque * self.gear) * 1e3).round().clamp(-32768.0, 32767.0) as i16
    }
    /// Refuses a counts_per_rev, gear or rated_torque that is not finite and positive, a non-finite offset, a non-positive switch-on timeout.
    pub fn check(&self) -> Result<(), String> {
        let positive = |x: f64| x.is_finite() && x > 0.0;
        if !positive(self.counts_per_rev) || !positive(self.gear) || !positive(self.rated_torque) || !self.offset.is_finite() {
            return Err(format!("drive scaling must be finite and positive (counts_per_rev {}, gear {}, rated_torque {}, offset {})", self.counts_per_rev, self.gear, self.rated_torque, self.offset));
        }
        if !positive(self.switch_on_timeout) {
            return Err(format!("switch_on_timeout must be positive, got {} s", self.switch_on_timeout));
        }
        Ok(())
    }
}

pub use morc_ecat_wire::cia402::PowerState;
use morc_ecat_wire::cia402::{controlword, error_code_text, mode, obj, pdo, statusword};

/// Sizes of the process data this class maps (see [`Cia402Drive::setup`]).
mod layout {
    use super::pdo;
    pub const OUTPUT_BYTES: usize = pdo::bytes(&pdo::RX);
    pub const INPUT_BYTES: usize = pdo::bytes(&pdo::TX);
}

/// Where each object the class uses sits in a drive's process data: the class's own mapping
/// (set up over CoE), or a fixed one the device brings (its EEPROM's PDOs, for a drive whose
/// mailbox does not answer). `None`: not mapped.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mapped {
    controlword: Option<usize>,
    target_position: Option<usize>,
    target_velocity: Option<usize>,
    target_torque: Option<usize>,
    mode: Option<usize>,
    torque_offset: Option<usize>,
    output_bytes: usize,
    statusword: Option<usize>,
    position: Option<usize>,
    velocity: Option<usize>,
    torque: Option<usize>,
    error_code: Option<usize>,
    input_bytes: usize,
    /// The device's own mapping (from its EEPROM), not the class's.
    fixed: bool,
}

impl Mapped {
    /// The offsets in `rx` (outputs) and `tx` (inputs), PDO entries as
    /// [`pdo::entry`] writes them; an object mapped with another width than CiA 402's is
    /// not taken.
    fn of(rx: &[u32], tx: &[u32], fixed: bool) -> Mapped {
        let find = |entries: &[u32], index: u16, bits: u8| {
            let mut at = 0usize;
            for e in entries {
                let (i, sub, b) = pdo::decode(*e);
                if i == index && sub == 0 && b == bits {
                    return Some(at);
                }
                at += usize::from(b) / 8;
            }
            None
        };
        Mapped {
            controlword: find(rx, obj::CONTROLWORD, 16),
            target_position: find(rx, obj::TARGET_POSITION, 32),
            target_velocity: find(rx, obj::TARGET_VELOCITY, 32),
            target_torque: find(rx, obj::TARGET_TORQUE, 16),
            mode: find(rx, obj::MODES_OF_OPERATION, 8),
            torque_offset: find(rx, obj::TORQUE_OFFSET, 16),
            output_bytes: pdo::bytes(rx),
            statusword: find(tx, obj::STATUSWORD, 16),
            position: find(tx, obj::POSITION_ACTUAL, 32),
            velocity: find(tx, obj::VELOCITY_ACTUAL, 32),
            torque: find(tx, obj::TORQUE_ACTUAL, 16),
            error_code: find(tx, obj::ERROR_CODE, 16),
            input_bytes: pdo::bytes(tx),
            fixed,
        }
    }

    /// What `mode` needs that is not mapped, named for the user ("target torque (0x6071)").
    fn missing_for(&self, mode: DriveMode) -> Vec<&'static str> {
        let mut need = vec![(self.controlword, "controlword (0x6040)"), (self.statusword, "statusword (0x6041)"), (self.position, "position actual value (0x6064)")];
        match mode {
            DriveMode::Csp => need.push((self.target_position, "target position (0x607A)")),
            DriveMode::Csv => need.push((self.target_velocity, "target velocity (0x60FF)")),
            DriveMode::Cst => need.push((self.target_torque, "target torque (0x6071)")),
        }
        // Holding runs in CSP: a drive in another mode switches to it through the mode object.
        if mode != DriveMode::Csp {
            need.push((self.mode, "modes of operation (0x6060), to hold in CSP"));
            need.push((self.target_position, "target position (0x607A), to hold in CSP"));
        }
        need.into_iter().filter(|(at, _)| at.is_none()).map(|(_, what)| what).collect()
    }

    /// The modes this mapping can run.
    fn modes(&self) -> Vec<&'static str> {
        [(DriveMode::Csp, "csp"), (DriveMode::Csv, "csv"), (DriveMode::Cst, "cst")]
            .into_iter()
            .filter(|(m, _)| self.missing_for(*m).is_empty())
            .map(|(_, n)| n)
            .collect()
    }
}

/// What the master wants of the drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    Enabled,
    QuickStop,
    Disabled,
}

/// One CiA 402 drive as the master sees it.
#[derive(Debug, Clone)]
pub struct Cia402Drive {
    name: DeviceName,
    config: DriveConfig,
    period: f64,
    mapped: Mapped,
    /// Position counts of the last cycle, for the velocity of a drive that does not map it.
    previous_position: Option<i32>,
    // Inputs, as last received.
    statusword: u16,
    position_counts: i32,
    velocity_counts: i32,
    torque_per_mille: i16,
    error_code: u16,
    // What goes out.
    want: Want,
    target_position: i32,
    target_velocity: i32,
    target_torque: i16,
    /// Torque offset (0x60B2), per mille of rated torque: the feed-forward torque.
    torque_offset: i16,
    /// Commands arrived last cycle; a switch to hold latches the actual position.
    commanded: bool,
    /// Fault reset: bit 7 low for one cycle, then high (the drive acts on the rising edge).
    reset_cycles: u32,
    cycles_in_state: u32,
    last_state: PowerState,
    last_controlword: u16,
}

impl Cia402Drive {
    /// A drive scaled and run by `config`, cycled every `period` seconds; it wants to be enabled.
    pub fn new(name: DeviceName, config: DriveConfig, period: f64) -> Self {
        Self {
            name,
            config,
            period,
            mapped: Mapped::of(&pdo::RX, &pdo::TX, false),
            previous_position: None,
            statusword: 0,
            position_counts: 0,
            velocity_counts: 0,
            torque_per_mille: 0,
            error_code: 0,
            want: Want::Enabled,
            target_position: 0,
            target_velocity: 0,
            target_torque: 0,
            torque_offset: 0,
            commanded: false,
            reset_cycles: 0,
            cycles_in_state: 0,
            last_state: PowerState::NotReadyToSwitchOn,
            last_controlword: 0,
        }
    }

    /// A drive run with the fixed PDO mapping it brings (`rx`, `tx`: PDO entries, e.g. from
    /// its EEPROM), in `config`'s mode if the mapping holds what that mode needs; else an
    /// error naming what is missing and the modes it could run. Unmapped measurements read:
    /// velocity from the position's change per cycle, torque NaN.
    pub fn with_fixed_mapping(name: DeviceName, config: DriveConfig, period: f64, rx: &[u32], tx: &[u32]) -> Result<Self, String> {
        if let Some(p) = config.parameters.first() {
            return Err(format!(
                "{name}: its mailbox does not answer CoE, so its parameters (SDO 0x{:04X}:{:02X} = {:?} and the rest) cannot be written; set them with the drive's own tool, and take them out of the joint's drive",
                p.index, p.sub, p.value
            ));
        }
        let mapped = Mapped::of(rx, tx, true);
        let missing = mapped.missing_for(config.mode);
        if !missing.is_empty() {
            let modes = mapped.modes();
            let mode = format!("{:?}", config.mode).to_uppercase();
            return Err(format!(
                "{name}: its fixed PDO mapping ({} output, {} input bytes) has no {}, which {mode} needs; {}",
                mapped.output_bytes,
                mapped.input_bytes,
                missing.join(", "),
                if modes.is_empty() {
                    "it cannot run as a CiA 402 drive with this mapping: map those objects in its EEPROM (ESI)".to_string()
                } else {
                    format!("it can run in {} (set the joint's drive mode)", modes.join(" or "))
                }
            ));
        }
        Ok(Self { mapped, ..Self::new(name, config, period) })
    }

    /// Where the drive sits and what it is.
    pub fn name(&self) -> &DeviceName {
        &self.name
    }
    /// Its scaling and mode.
    pub fn config(&self) -> &DriveConfig {
        &self.config
    }

    /// SDO downloads in PreOp: the PDO mapping this class reads and writes, and the mode.
    pub fn setup(&self) -> Vec<SdoWrite> {
        use SdoValue::*;
        let mut w = Vec::new();
        for (assign, pdo, entries) in [(obj::RX_PDO_ASSIGN, obj::RX_PDO_1, &pdo::RX[..]), (obj::TX_PDO_ASSIGN, obj::TX_PDO_1, &pdo::TX[..])] {
            // Assignment off while the mapping changes (ETG.1000.6 §5.6.7.4 sequence).
            w.push(SdoWrite::new(assign, 0, U8(0)));
            w.push(SdoWrite::new(pdo, 0, U8(0)));
            for (i, m) in entries.iter().enumerate() {
                w.push(SdoWrite::new(pdo, i as u8 + 1, U32(*m)));
            }
            w.push(SdoWrite::new(pdo, 0, U8(entries.len() as u8)));
            w.push(SdoWrite::new(assign, 1, U16(pdo)));
            w.push(SdoWrite::new(assign, 0, U8(1)));
        }
        w.push(SdoWrite::new(obj::MODES_OF_OPERATION, 0, I8(self.config.mode.code())));
        w.extend(self.config.parameters.iter().copied());
        w
    }

    /// The mapped sizes must be what [`setup`](Self::setup) asked for (or what the fixed
    /// mapping says).
    pub fn check_process_data(&self, input_bytes: usize, output_bytes: usize) -> Result<(), String> {
        if self.mapped.fixed && (input_bytes != self.mapped.input_bytes || output_bytes != self.mapped.output_bytes) {
            return Err(format!(
                "{}: its EEPROM's PDO description maps {} input and {} output bytes, the process image has {input_bytes} and {output_bytes}; check its EEPROM (ESI) against the device",
                self.name, self.mapped.input_bytes, self.mapped.output_bytes
            ));
        }
        if !self.mapped.fixed && (input_bytes != layout::INPUT_BYTES || output_bytes != layout::OUTPUT_BYTES) {
            return Err(format!(
                "{}: the CiA 402 class maps {} input and {} output bytes, the device has {input_bytes} and {output_bytes}; \
                 its PDO mapping did not take (check that it accepts 0x1C12/0x1C13 and 0x1600/0x1A00 through SDOs in PreOp)",
                self.name,
                layout::INPUT_BYTES,
                layout::OUTPUT_BYTES
            ));
        }
        Ok(())
    }

    /// Decodes this cycle's inputs.
    pub fn read_inputs(&mut self, inputs: &[u8]) {
        let m = &self.mapped;
        let (u16_at, i32_at) = (|at: Option<usize>| at.map_or(0, |at| pd::u16_at(inputs, at)), |at: Option<usize>| at.map_or(0, |at| pd::i32_at(inputs, at)));
        self.statusword = u16_at(m.statusword);
        self.position_counts = i32_at(m.position);
        self.velocity_counts = match (m.velocity, self.previous_position) {
            (Some(at), _) => pd::i32_at(inputs, at),
            // Not mapped: the position's change over the cycle.
            (None, Some(before)) => (f64::from(self.position_counts.wrapping_sub(before)) / self.period).round() as i32,
            (None, None) => 0,
        };
        self.previous_position = Some(self.position_counts);
        self.torque_per_mille = u16_at(m.torque) as i16;
        self.error_code = u16_at(m.error_code);
        let state = self.state();
        if state == self.last_state {
            self.cycles_in_state = self.cycles_in_state.saturating_add(1);
        } else {
            self.cycles_in_state = 0;
            self.last_state = state;
        }
    }

    /// Statusword (0x6041) as last received.
    pub fn statusword(&self) -> u16 {
        self.statusword
    }
    /// Power drive state, from the statusword.
    pub fn state(&self) -> PowerState {
        PowerState::from_statusword(self.statusword)
    }
    /// In Operation Enabled: following commands.
    pub fn enabled(&self) -> bool {
        self.state() == PowerState::OperationEnabled
    }
    /// Error code (0x603F) as last received; 0 for none.
    pub fn error_code(&self) -> u16 {
        self.error_code
    }
    /// Joint position (rad).
    pub fn position(&self) -> f64 {
        self.config.position_from_counts(self.position_counts)
    }
    /// Joint velocity (rad/s).
    pub fn velocity(&self) -> f64 {
        self.config.velocity_from_counts(self.velocity_counts)
    }
    /// Joint torque (N·m).
    pub fn torque(&self) -> f64 {
        if self.mapped.torque.is_none() {
            return f64::NAN;
        }
        self.config.torque_from_per_mille(self.torque_per_mille)
    }
    /// Position actual value (0x6064), counts.
    pub fn position_counts(&self) -> i32 {
        self.position_counts
    }
    /// Target position (0x607A) sent this cycle, counts.
    pub fn target_counts(&self) -> i32 {
        self.target_position
    }

    /// The command for this cycle in the configured mode's SI unit, or `None` to hold where
    /// the drive is. Non-finite commands are refused (the drive holds).
    pub fn command(&mut self, value: Option<f64>) -> Result<(), String> {
        let value = match value {
            Some(v) if !v.is_finite() => {
                self.hold();
                return Err(format!("{}: non-finite command {v}: holding", self.name));
            }
            v => v,
        };
        if !self.enabled() {
            // Not enabled: the target follows the actual position, so enabling never jumps.
            self.hold_here();
            self.commanded = false;
            return Ok(());
        }
        match value {
            None => self.hold(),
            Some(v) => {
                self.commanded = true;
                match self.config.mode {
                    DriveMode::Csp => self.target_position = self.config.counts_from_position(v),
                    DriveMode::Csv => self.target_velocity = self.config.counts_from_velocity(v),
                    DriveMode::Cst => self.target_torque = self.config.per_mille_from_torque(v),
                }
            }
        }
        Ok(())
    }

    /// The feed-forward torque (N·m at the joint) sent as the torque offset (0x60B2) with
    /// this cycle's command; `None` for none. Only while commanded: holding sends 0.
    pub fn set_torque_offset(&mut self, tau: Option<f64>) -> Result<(), String> {
        match tau {
            Some(t) if !t.is_finite() => {
                self.torque_offset = 0;
                Err(format!("{}: non-finite feed-forward torque {t}: none sent", self.name))
            }
            Some(t) if self.commanded => {
                self.torque_offset = self.config.per_mille_from_torque(t);
                Ok(())
            }
            _ => {
                self.torque_offset = 0;
                Ok(())
            }
        }
    }

    /// Hold: on the switch from commands, keep the target at the actual position then.
    fn hold(&mut self) {
        if self.commanded {
            self.hold_here();
        }
        self.commanded = false;
        self.target_velocity = 0;
        self.target_torque = 0;
    }

    fn hold_here(&mut self) {
        self.target_position = self.position_counts;
        self.target_velocity = 0;
        self.target_torque = 0;
    }

    /// Stop: quick stop now (the drive decelerates and ends disabled).
    pub fn quick_stop(&mut self) {
        self.want = Want::QuickStop;
    }
    /// Disable the power stage.
    pub fn disable(&mut self) {
        self.want = Want::Disabled;
    }
    /// Enable again (after a quick stop, or with a fault reset if the drive is in Fault).
    pub fn enable(&mut self) {
        self.want = Want::Enabled;
        self.cycles_in_state = 0;
    }
    /// Acknowledge a drive fault and enable again.
    pub fn reset_fault(&mut self) {
        self.enable();
        if matches!(self.state(), PowerState::Fault | PowerState::FaultReactionActive) {
            self.reset_cycles = 1;
        }
    }

    /// The controlword for this cycle, from the state the drive reports and what we want.
    fn controlword(&mut self) -> u16 {
        use controlword::*;
        use PowerState::*;
        let state = self.state();
        match self.want {
            Want::Disabled => DISABLE_VOLTAGE,
            Want::QuickStop => QUICK_STOP,
            Want::Enabled => match state {
                // Fault reaction runs on its own; then bit 7 low for a cycle and high (the drive
                // acts on the rising edge), repeated every 16 cycles until it leaves Fault.
                FaultReactionActive => DISABLE_VOLTAGE,
                Fault if self.reset_cycles == 0 => DISABLE_VOLTAGE,
                Fault => {
                    self.reset_cycles += 1;
                    if (self.reset_cycles - 2).is_multiple_of(16) {
                        DISABLE_VOLTAGE
                    } else {
                        FAULT_RESET
                    }
                }
                NotReadyToSwitchOn | Unknown => DISABLE_VOLTAGE,
                SwitchOnDisabled => {
                    self.reset_cycles = 0;
                    SHUTDOWN
                }
                ReadyToSwitchOn => SWITCH_ON,
                SwitchedOn | OperationEnabled => ENABLE_OPERATION,
                // Leave quick stop through Switch on disabled, then enable from the start.
                QuickStopActive => DISABLE_VOLTAGE,
            },
        }
    }

    /// Encodes controlword, targets and mode into this cycle's outputs.
    pub fn write_outputs(&mut self, outputs: &mut [u8]) {
        if !self.enabled() {
            self.hold_here();
        }
        let cw = self.controlword();
        self.last_controlword = cw;
        // Holding runs in CSP whatever the mode: a velocity or torque drive holds its position.
        let mode = if self.commanded { self.config.mode } else { DriveMode::Csp };
        let offset = if self.commanded && self.enabled() { self.torque_offset } else { 0 };
        let m = &self.mapped;
        let mut put = |at: Option<usize>, bytes: &[u8]| {
            if let Some(at) = at {
                pd::put(outputs, at, bytes);
            }
        };
        put(m.controlword, &cw.to_le_bytes());
        put(m.target_position, &self.target_position.to_le_bytes());
        put(m.target_velocity, &self.target_velocity.to_le_bytes());
        put(m.target_torque, &self.target_torque.to_le_bytes());
        put(m.mode, &[mode.code() as u8]);
        put(m.torque_offset, &offset.to_le_bytes());
    }

    /// A fault to report, if any: a drive fault, or a drive that will not switch on within
    /// its timeout. Allocates only when it reports (once per fault).
    pub fn check(&self) -> Result<(), String> {
        use PowerState::*;
        let state = self.state();
        let timeout_cycles = (self.config.switch_on_timeout / self.period).ceil().max(1.0) as u32;
        let reset_failed = self.reset_cycles > timeout_cycles.saturating_add(2);
        if matches!(state, Fault | FaultReactionActive) && (self.reset_cycles == 0 || reset_failed) {
            let what = if reset_failed { "drive fault that a fault reset did not clear" } else { "drive fault" };
            return Err(format!(
                "{}: {what}, error code 0x{:04X} ({}), statusword 0x{:04X}; fix the cause, then reset faults",
                self.name,
                self.error_code,
                error_code_text(self.error_code),
                self.statusword
            ));
        }
        if self.want == Want::Enabled && state != OperationEnabled && self.cycles_in_state > timeout_cycles {
            return Err(self.not_switching_on());
        }
        Ok(())
    }

    /// Which bit of which state is missing for the next step of the enable sequence.
    pub fn not_switching_on(&self) -> String {
        use PowerState::*;
        let state = self.state();
        let sw = self.statusword;
        let next = match state {
            NotReadyToSwitchOn | Unknown | QuickStopActive => SwitchOnDisabled,
            SwitchOnDisabled => ReadyToSwitchOn,
            ReadyToSwitchOn => SwitchedOn,
            SwitchedOn => OperationEnabled,
            Fault | FaultReactionActive => SwitchOnDisabled,
            OperationEnabled => OperationEnabled,
        };
        let (mask, value) = next.pattern();
        let mut missing = Vec::new();
        for bit in 0..16u32 {
            if mask & (1 << bit) != 0 && (sw ^ value) & (1 << bit) != 0 {
                let want = if value & (1 << bit) != 0 { "set" } else { "clear" };
                missing.push(format!("bit {bit} '{}' {want}", statusword::bit_name(bit)));
            }
        }
        let mut hints = String::new();
        if sw & statusword::REMOTE == 0 {
            hints.push_str("; statusword bit 9 'remote' is clear: the drive is under local control and ignores the controlword");
        }
        if matches!(next, SwitchedOn | OperationEnabled) && sw & statusword::VOLTAGE_ENABLED == 0 {
            hints.push_str("; bit 4 'voltage enabled' is clear: no DC-bus voltage (main power, STO or the drive's enable input?)");
        }
        format!(
            "{}: drive will not switch on: it stays in '{}' (statusword 0x{sw:04X}) for {:.3} s after controlword 0x{:04X}; \
             '{}' needs statusword {}{hints}",
            self.name,
            state.label(),
            f64::from(self.cycles_in_state) * self.period,
            self.last_controlword,
            next.label(),
            missing.join(", ")
        )
    }
}

/// A drive's joint ports are the bus base's (the drives together are the robot's joints):
/// through this trait it is read, written and checked like any device.
impl DeviceClass for Cia402Drive {
    fn name(&self) -> &DeviceName {
        &self.name
    }
    fn kind(&self) -> &'static str {
        "drive"
    }
    fn read_inputs(&mut self, inputs: &[u8]) {
        Cia402Drive::read_inputs(self, inputs)
    }
    fn write_outputs(&mut self, outputs: &mut [u8]) {
        Cia402Drive::write_outputs(self, outputs)
    }
    fn fault(&self) -> Option<String> {
        self.check().err()
    }
    fn acknowledge(&mut self) {
        self.reset_fault()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drive() -> Cia402Drive {
        Cia402Drive::new(DeviceName { position: 3, name: "AKD".into() }, DriveConfig { gear: 100.0, ..Default::default() }, 0.001)
    }

    fn inputs(sw: u16, position: i32) -> [u8; layout::INPUT_BYTES] {
        let mut b = [0u8; layout::INPUT_BYTES];
        b[0..2].copy_from_slice(&sw.to_le_bytes());
        b[2..6].copy_from_slice(&position.to_le_bytes());
        b
    }

    fn cycle(d: &mut Cia402Drive, sw: u16, position: i32, command: Option<f64>) -> [u8; layout::OUTPUT_BYTES] {
        d.read_inputs(&inputs(sw, position));
        d.command(command).unwrap();
        let mut out = [0u8; layout::OUTPUT_BYTES];
        d.write_outputs(&mut out);
        out
    }

    fn cw(out: &[u8]) -> u16 {
        u16::from_le_bytes([out[0], out[1]])
    }
    fn target(out: &[u8]) -> i32 {
        i32::from_le_bytes(out[2..6].try_into().unwrap())
    }

    #[test]
    fn scaling_round_trips_with_gear_direction_and_offset() {
        let c = DriveConfig { counts_per_rev: 4096.0, gear: 50.0, reversed: true, offset: 0.25, rated_torque: 2.0, ..Default::default() };
        let counts = c.counts_from_position(1.25);
        assert_eq!(counts, -(4096.0 * 50.0 / TAU).round() as i32);
        assert!((c.position_from_counts(counts) - 1.25).abs() < 1e-4);
        assert_eq!(c.per_mille_from_torque(-100.0), 1000);
        assert_eq!(c.torque_from_per_mille(1000), -100.0);
        assert_eq!(c.counts_from_position(1e30), i32::MIN, "saturates (reversed)");
    }

    #[test]
    fn enable_sequence_and_hold_at_actual() {
        let mut d = drive();
        assert_eq!(cw(&cycle(&mut d, 0x0240, 500, None)), controlword::SHUTDOWN);
        assert_eq!(cw(&cycle(&mut d, 0x0221, 500, None)), controlword::SWITCH_ON);
        let out = cycle(&mut d, 0x0233, 510, Some(3.0));
        assert_eq!(cw(&out), controlword::ENABLE_OPERATION);
        assert_eq!(target(&out), 510, "enabling starts at the actual position");
        let out = cycle(&mut d, 0x1237, 510, Some(0.001));
        assert_eq!(target(&out), d.config().counts_from_position(0.001));
        // Switch to hold while lagging: the target is latched at the actual position.
        let out = cycle(&mut d, 0x1237, 9_000, None);
        assert_eq!(target(&out), 9_000);
        let out = cycle(&mut d, 0x1237, 9_100, None);
        assert_eq!(target(&out), 9_000, "hold keeps the latched target");
    }

    #[test]
    fn fault_is_reported_and_reset_by_a_rising_edge() {
        let mut d = drive();
        let mut b = inputs(0x0208, 0);
        b[13..15].copy_from_slice(&0x8611u16.to_le_bytes());
        d.read_inputs(&b);
        let err = d.check().unwrap_err();
        assert!(err.contains("device 3 'AKD'") && err.contains("0x8611") && err.contains("following error"), "{err}");
        d.reset_fault();
        let mut out = [0u8; layout::OUTPUT_BYTES];
        d.write_outputs(&mut out);
        assert_eq!(cw(&out), 0, "bit 7 low first");
        d.write_outputs(&mut out);
        assert_eq!(cw(&out), controlword::FAULT_RESET);
        assert!(d.check().is_ok(), "resetting: not reported again");
        assert_eq!(cw(&cycle(&mut d, 0x0240, 0, None)), controlword::SHUTDOWN);
    }

    #[test]
    fn not_switching_on_names_the_missing_bit() {
        let mut d = drive();
        for _ in 0..600 {
            cycle(&mut d, 0x0221, 0, None);
        }
        let msg = d.check().unwrap_err();
        assert!(msg.contains("'Ready to switch on'") && msg.contains("'Switched on' needs statusword bit 1 'switched on' set"), "{msg}");
        assert!(msg.contains("voltage enabled"), "{msg}");
        let mut d = drive();
        for _ in 0..600 {
            cycle(&mut d, 0x0040, 0, None);
        }
        let msg = d.check().unwrap_err();
        assert!(msg.contains("bit 9 'remote' is clear"), "{msg}");
    }

    #[test]
    fn a_fixed_interpolated_position_mapping_runs_in_csp_and_says_what_cst_lacks() {
        use morc_ecat_wire::cia402::pdo::entry;
        // ETG.6010's 0x1701 / 0x1B01 as an EEPROM-only drive maps them: 6 and 6 bytes.
        let rx = [entry(obj::CONTROLWORD, 0, 16), entry(obj::TARGET_POSITION, 0, 32)];
        let tx = [entry(obj::STATUSWORD, 0, 16), entry(obj::POSITION_ACTUAL, 0, 32)];
        let name = DeviceName { position: 4, name: "EEPROM-DRIVE".into() };
        let config = DriveConfig { counts_per_rev: 1000.0, ..DriveConfig::default() };
        let mut d = Cia402Drive::with_fixed_mapping(name.clone(), config.clone(), 0.001, &rx, &tx).unwrap();
        assert!(d.check_process_data(6, 6).is_ok());
        assert!(d.check_process_data(15, 15).unwrap_err().contains("EEPROM's PDO description maps 6 input and 6 output bytes"));
        let image = |sw: u16, counts: i32| {
            let mut b = [0u8; 6];
            b[..2].copy_from_slice(&sw.to_le_bytes());
            b[2..].copy_from_slice(&counts.to_le_bytes());
            b
        };
        d.read_inputs(&image(0x1237, 100));
        d.read_inputs(&image(0x1237, 110));
        assert_eq!(d.velocity(), config.velocity_from_counts(10_000), "from the position's change per cycle");
        assert!(d.torque().is_nan(), "no torque mapped: no measurement");
        d.command(Some(1.0)).unwrap();
        let mut out = [0u8; 6];
        d.write_outputs(&mut out);
        assert_eq!(u16::from_le_bytes([out[0], out[1]]), controlword::ENABLE_OPERATION);
        assert_eq!(i32::from_le_bytes([out[2], out[3], out[4], out[5]]), config.counts_from_position(1.0));
        let cst = DriveConfig { mode: DriveMode::Cst, ..config };
        let err = Cia402Drive::with_fixed_mapping(name, cst, 0.001, &rx, &tx).unwrap_err();
        assert!(err.contains("device 4 'EEPROM-DRIVE': its fixed PDO mapping (6 output, 6 input bytes) has no target torque (0x6071)") && err.contains("it can run in csp"), "{err}");
        assert!(!err.contains("SDO"), "no hint at SDOs a drive without CoE cannot take: {err}");
    }
}
