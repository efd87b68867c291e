//! CiA 402 servo drives (CiA 402-2 / ETG.6010) as they are on the wire: object indices, modes of
//! operation, the power drive states and their statusword patterns, the controlword commands,
//! PDO mapping entries and the mapping morc's drive class asks for. Written once: the master's
//! drive class encodes with it and the simulated drive decodes with it.

/// Object indices (CiA 402-2 §6, CiA 301 for 0x1000..0x1FFF).
pub mod obj {
    /// Device type (CiA 301): profile number in the low word (402 for a drive).
    pub const DEVICE_TYPE: u16 = 0x1000;
    /// RxPDO assignment (ETG.1000.6): which RxPDOs the outputs SyncManager carries.
    pub const RX_PDO_ASSIGN: u16 = 0x1C12;
    /// TxPDO assignment: which TxPDOs the inputs SyncManager carries.
    pub const TX_PDO_ASSIGN: u16 = 0x1C13;
    /// First RxPDO mapping object.
    pub const RX_PDO_1: u16 = 0x1600;
    /// First TxPDO mapping object.
    pub const TX_PDO_1: u16 = 0x1A00;
    /// Error code of the last fault.
    pub const ERROR_CODE: u16 = 0x603F;
    /// Controlword.
    pub const CONTROLWORD: u16 = 0x6040;
    /// Statusword.
    pub const STATUSWORD: u16 = 0x6041;
    /// Quick stop option code.
    pub const QUICK_STOP_OPTION: u16 = 0x605A;
    /// Modes of operation (requested).
    pub const MODES_OF_OPERATION: u16 = 0x6060;
    /// Modes of operation display (in effect).
    pub const MODES_DISPLAY: u16 = 0x6061;
    /// Position actual value (counts).
    pub const POSITION_ACTUAL: u16 = 0x6064;
    /// Velocity actual value (counts/s).
    pub const VELOCITY_ACTUAL: u16 = 0x606C;
    /// Target torque (per mille of rated torque).
    pub const TARGET_TORQUE: u16 = 0x6071;
    /// Max torque (UNSIGNED16, per mille of rated torque): the drive limits its torque to it.
    pub const MAX_TORQUE: u16 = 0x6072;
    /// Torque actual value (per mille of rated torque).
    pub const TORQUE_ACTUAL: u16 = 0x6077;
    /// Target position (counts).
    pub const TARGET_POSITION: u16 = 0x607A;
    /// Torque offset: added to the torque the drive's own control computes (feed-forward).
    pub const TORQUE_OFFSET: u16 = 0x60B2;
    /// Target velocity (counts/s).
    pub const TARGET_VELOCITY: u16 = 0x60FF;
    /// Supported drive modes (bit per mode).
    pub const SUPPORTED_MODES: u16 = 0x6502;
}

/// The profile number a CiA 402 drive has in the low word of its device type (0x1000).
pub const PROFILE: u32 = 402;

/// Whether a CoE device type (0x1000) says CiA 402.
pub fn is_drive_device_type(device_type: u32) -> bool {
    device_type & 0xFFFF == PROFILE
}

/// Modes of operation (0x6060, 0x6061) of the cyclic synchronous modes.
pub mod mode {
    /// Cyclic synchronous position.
    pub const CSP: i8 = 8;
    /// Cyclic synchronous velocity.
    pub const CSV: i8 = 9;
    /// Cyclic synchronous torque.
    pub const CST: i8 = 10;
    /// Supported drive modes (0x6502) bits of CSP, CSV and CST (bits 7, 8, 9).
    pub const SUPPORTED_CYCLIC: u32 = 0x0000_0380;
}

/// CiA 402 power drive system states, as decoded from the statusword (CiA 402-2 Table 30).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PowerState {
    /// Statusword x0xx 0000: initialising, the power stage cannot be switched on yet.
    NotReadyToSwitchOn,
    /// Statusword x1xx 0000: power stage off; shutdown (controlword 0x06) leads on.
    SwitchOnDisabled,
    /// Statusword x01x 0001: ready; switch on (0x07) powers the stage.
    ReadyToSwitchOn,
    /// Statusword x01x 0011: power stage on, no torque; enable operation (0x0F) leads on.
    SwitchedOn,
    /// Statusword x01x 0111: following the commanded target.
    OperationEnabled,
    /// Statusword x00x 0111: decelerating on a quick stop request.
    QuickStopActive,
    /// Statusword x0xx 1111: a fault occurred; the drive is stopping.
    FaultReactionActive,
    /// Statusword x0xx 1000: stopped after a fault; fault reset (controlword bit 7 rising) leads to Switch On Disabled.
    Fault,
    /// A bit pattern the profile does not define.
    Unknown,
}

impl PowerState {
    const DEFINED: [PowerState; 8] = [
        PowerState::NotReadyToSwitchOn,
        PowerState::SwitchOnDisabled,
        PowerState::ReadyToSwitchOn,
        PowerState::SwitchedOn,
        PowerState::OperationEnabled,
        PowerState::QuickStopActive,
        PowerState::FaultReactionActive,
        PowerState::Fault,
    ];

    /// (mask, value) of the statusword for the state: bits 0..3, 5, 6.
    pub fn pattern(self) -> (u16, u16) {
        use PowerState::*;
        match self {
            NotReadyToSwitchOn => (0x4F, 0x00),
            SwitchOnDisabled => (0x4F, 0x40),
            ReadyToSwitchOn => (0x6F, 0x21),
            SwitchedOn => (0x6F, 0x23),
            OperationEnabled => (0x6F, 0x27),
            QuickStopActive => (0x6F, 0x07),
            FaultReactionActive => (0x4F, 0x0F),
            Fault => (0x4F, 0x08),
            Unknown => (0, 0xFFFF),
        }
    }

    /// The state a statusword (0x6041) reports.
    pub fn from_statusword(sw: u16) -> Self {
        Self::DEFINED
            .into_iter()
            .find(|s| {
                let (mask, value) = s.pattern();
                sw & mask == value
            })
            .unwrap_or(PowerState::Unknown)
    }

    /// The statusword bits a drive in this state reports (bits 0..3, 5, 6; the others, such
    /// as voltage enabled, are the drive's to add).
    pub fn statusword_bits(self) -> u16 {
        match self {
            PowerState::Unknown => 0,
            s => s.pattern().1,
        }
    }

    /// The state's name as CiA 402 writes it, for messages ("Switch on disabled").
    pub fn label(self) -> &'static str {
        use PowerState::*;
        match self {
            NotReadyToSwitchOn => "Not ready to switch on",
            SwitchOnDisabled => "Switch on disabled",
            ReadyToSwitchOn => "Ready to switch on",
            SwitchedOn => "Switched on",
            OperationEnabled => "Operation enabled",
            QuickStopActive => "Quick stop active",
            FaultReactionActive => "Fault reaction active",
            Fault => "Fault",
            Unknown => "an undefined state",
        }
    }
}

/// Statusword bits beyond the state pattern (CiA 402-2 Table 29).
pub mod statusword {
    /// Voltage enabled: the power stage has its supply.
    pub const VOLTAGE_ENABLED: u16 = 1 << 4;
    /// Remote: the drive obeys the controlword (clear: under local control).
    pub const REMOTE: u16 = 1 << 9;
    /// Target reached.
    pub const TARGET_REACHED: u16 = 1 << 10;
    /// In the cyclic synchronous modes: the drive follows the command value.
    pub const FOLLOWS_COMMAND: u16 = 1 << 12;

    /// A statusword bit's name, for messages.
    pub fn bit_name(bit: u32) -> &'static str {
        match bit {
            0 => "ready to switch on",
            1 => "switched on",
            2 => "operation enabled",
            3 => "fault",
            4 => "voltage enabled",
            5 => "quick stop (active low)",
            6 => "switch on disabled",
            7 => "warning",
            9 => "remote",
            10 => "target reached",
            11 => "internal limit active",
            12 => "drive follows the command value",
            13 => "following error",
            _ => "manufacturer specific",
        }
    }
}

/// Controlword commands (CiA 402-2 Table 28): what the master writes, and what a drive reads
/// from it.
pub mod controlword {
    /// Disable voltage: to Switch on disabled.
    pub const DISABLE_VOLTAGE: u16 = 0x0000;
    /// Quick stop (bit 2 low, bit 1 high).
    pub const QUICK_STOP: u16 = 0x0002;
    /// Shutdown: to Ready to switch on.
    pub const SHUTDOWN: u16 = 0x0006;
    /// Switch on: to Switched on.
    pub const SWITCH_ON: u16 = 0x0007;
    /// Enable operation: to Operation enabled.
    pub const ENABLE_OPERATION: u16 = 0x000F;
    /// Fault reset (bit 7; the drive acts on its rising edge).
    pub const FAULT_RESET: u16 = 0x0080;

    /// The command a controlword carries, as a drive decodes it (bits 0..3 and 7).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Command {
        /// Bit 1 low.
        DisableVoltage,
        /// Bits 2..1 = 01.
        QuickStop,
        /// xxx0 x110.
        Shutdown,
        /// xxx0 0111.
        SwitchOn,
        /// xxx0 1111.
        EnableOperation,
        /// A pattern with no transition of its own (e.g. fault reset held).
        None,
    }

    /// Decodes a controlword's device-control command.
    pub fn command(cw: u16) -> Command {
        if cw & 0x02 == 0 {
            Command::DisableVoltage
        } else if cw & 0x06 == 0x02 {
            Command::QuickStop
        } else if cw & 0x87 == 0x06 {
            Command::Shutdown
        } else if cw & 0x8F == 0x07 {
            Command::SwitchOn
        } else if cw & 0x8F == 0x0F {
            Command::EnableOperation
        } else {
            Command::None
        }
    }
}

/// Why a drive fault happened, for common CiA 402 / CiA 301 error codes (0x603F).
pub fn error_code_text(code: u16) -> &'static str {
    match code {
        0 => "no error code given",
        0x2200..=0x23FF => "overcurrent",
        0x3210 | 0x3211 => "DC-link overvoltage",
        0x3220 | 0x3221 => "DC-link undervoltage",
        0x4000..=0x4FFF => "over-temperature",
        0x5000..=0x5FFF => "drive hardware",
        0x6000..=0x6FFF => "drive software",
        0x7300..=0x73FF => "sensor / encoder",
        0x8110..=0x81FF => "communication (e.g. sync or PDO watchdog)",
        0x8400..=0x84FF => "velocity / speed controller",
        0x8611 => "following error",
        0x8612 => "reference limit (position limit)",
        0x8600..=0x86FF => "positioning controller",
        0xFF00..=0xFFFF => "manufacturer specific",
        _ => "see the drive manual",
    }
}

/// PDO mapping entries (ETG.1000.6 §5.6.7.4): index << 16 | sub-index << 8 | bit length.
pub mod pdo {
    /// The entry mapping `index`:`sub`, `bits` long.
    pub const fn entry(index: u16, sub: u8, bits: u8) -> u32 {
        ((index as u32) << 16) | ((sub as u32) << 8) | bits as u32
    }

    /// (index, sub, bits) of an entry; index 0 is padding.
    pub const fn decode(entry: u32) -> (u16, u8, u8) {
        ((entry >> 16) as u16, (entry >> 8) as u8, entry as u8)
    }

    /// The RxPDO morc's drive class maps (0x1600): controlword, target position, target
    /// velocity, target torque, mode, torque offset.
    pub const RX: [u32; 6] = [
        entry(super::obj::CONTROLWORD, 0, 16),
        entry(super::obj::TARGET_POSITION, 0, 32),
        entry(super::obj::TARGET_VELOCITY, 0, 32),
        entry(super::obj::TARGET_TORQUE, 0, 16),
        entry(super::obj::MODES_OF_OPERATION, 0, 8),
        entry(super::obj::TORQUE_OFFSET, 0, 16),
    ];
    /// The TxPDO morc's drive class maps (0x1A00): statusword, position, velocity, torque, mode
    /// display, error code.
    pub const TX: [u32; 6] = [
        entry(super::obj::STATUSWORD, 0, 16),
        entry(super::obj::POSITION_ACTUAL, 0, 32),
        entry(super::obj::VELOCITY_ACTUAL, 0, 32),
        entry(super::obj::TORQUE_ACTUAL, 0, 16),
        entry(super::obj::MODES_DISPLAY, 0, 8),
        entry(super::obj::ERROR_CODE, 0, 16),
    ];

    /// Bytes an entry list takes in the process image.
    pub const fn bytes(entries: &[u32]) -> usize {
        let mut n = 0;
        let mut i = 0;
        while i < entries.len() {
            n += (entries[i] & 0xFF) as usize / 8;
            i += 1;
        }
        n
    }

    /// Byte offset of `index`:0 in an entry list, if mapped.
    pub const fn offset(entries: &[u32], index: u16) -> Option<usize> {
        let mut at = 0;
        let mut i = 0;
        while i < entries.len() {
            if (entries[i] >> 16) as u16 == index {
                return Some(at);
            }
            at += (entries[i] & 0xFF) as usize / 8;
            i += 1;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_reads_back_from_its_bits() {
        for s in PowerState::DEFINED {
            assert_eq!(PowerState::from_statusword(s.statusword_bits() | statusword::REMOTE), s);
        }
        assert_eq!(PowerState::from_statusword(0x0218), PowerState::Fault);
    }

    #[test]
    fn commands_decode_as_written() {
        use controlword::*;
        assert_eq!(command(SHUTDOWN), Command::Shutdown);
        assert_eq!(command(SWITCH_ON), Command::SwitchOn);
        assert_eq!(command(ENABLE_OPERATION), Command::EnableOperation);
        assert_eq!(command(QUICK_STOP), Command::QuickStop);
        assert_eq!(command(DISABLE_VOLTAGE), Command::DisableVoltage);
        assert_eq!(command(FAULT_RESET | SHUTDOWN), Command::None);
    }

    #[test]
    fn the_class_mapping_is_15_bytes_each_way() {
        assert_eq!(pdo::bytes(&pdo::RX), 15);
        assert_eq!(pdo::bytes(&pdo::TX), 15);
        assert_eq!(pdo::offset(&pdo::RX, obj::TORQUE_OFFSET), Some(13));
        assert_eq!(pdo::offset(&pdo::TX, obj::ERROR_CODE), Some(13));
        assert_eq!(pdo::decode(pdo::RX[1]), (obj::TARGET_POSITION, 0, 32));
    }
}
