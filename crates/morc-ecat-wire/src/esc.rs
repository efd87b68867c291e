//! The EtherCAT SubDevice Controller's registers as a master addresses them (Beckhoff ESC
//! datasheet section II, ETG.1000.4/6): register addresses, the bits morc reads and writes in
//! them, and the AL status codes. The master's frames and the simulated ESC both use these names.

/// Register addresses (ESC datasheet section II, Table 1).
pub mod reg {
    /// ESC type.
    pub const TYPE: u16 = 0x0000;
    /// ESC revision.
    pub const REVISION: u16 = 0x0001;
    /// ESC build (u16).
    pub const BUILD: u16 = 0x0002;
    /// FMMUs supported.
    pub const FMMU_COUNT: u16 = 0x0004;
    /// SyncManagers supported.
    pub const SM_COUNT: u16 = 0x0005;
    /// Process RAM size (KiB).
    pub const RAM_SIZE: u16 = 0x0006;
    /// Port descriptor.
    pub const PORT_DESCRIPTOR: u16 = 0x0007;
    /// ESC features supported (u16).
    pub const FEATURES: u16 = 0x0008;
    /// Configured station address (u16).
    pub const STATION_ADDRESS: u16 = 0x0010;
    /// Configured station alias (u16, from the SII).
    pub const STATION_ALIAS: u16 = 0x0012;
    /// DL control (u32).
    pub const DL_CONTROL: u16 = 0x0100;
    /// DL status (u16).
    pub const DL_STATUS: u16 = 0x0110;
    /// AL control: the state the master asks for (u16).
    pub const AL_CONTROL: u16 = 0x0120;
    /// AL status: the state the device is in, and the error flag (u16).
    pub const AL_STATUS: u16 = 0x0130;
    /// AL status code: why a state change was refused (u16, [`super::al_code`]).
    pub const AL_STATUS_CODE: u16 = 0x0134;
    /// PDI control (u16).
    pub const PDI_CONTROL: u16 = 0x0140;
    /// SII (EEPROM) configuration: who owns the EEPROM interface.
    pub const SII_CONFIG: u16 = 0x0500;
    /// SII control/status (u16, [`super::sii_control`]).
    pub const SII_CONTROL: u16 = 0x0502;
    /// SII word address (u32).
    pub const SII_ADDRESS: u16 = 0x0504;
    /// SII data (4 or 8 bytes read at once).
    pub const SII_DATA: u16 = 0x0508;
    /// First FMMU's registers.
    pub const FMMU_BASE: u16 = 0x0600;
    /// Bytes per FMMU.
    pub const FMMU_LEN: u16 = 16;
    /// First SyncManager's registers.
    pub const SM_BASE: u16 = 0x0800;
    /// Bytes per SyncManager.
    pub const SM_LEN: u16 = 8;
    /// DC receive time, port 0.
    pub const DC_RECEIVE_TIME_PORT0: u16 = 0x0900;
    /// DC receive time, port 1.
    pub const DC_RECEIVE_TIME_PORT1: u16 = 0x0904;
    /// DC system time.
    pub const DC_SYSTEM_TIME: u16 = 0x0910;
    /// DC receive time of the processing unit.
    pub const DC_RECEIVE_TIME_ECAT: u16 = 0x0918;
    /// DC system time offset.
    pub const DC_SYSTEM_TIME_OFFSET: u16 = 0x0920;
    /// DC system time delay.
    pub const DC_SYSTEM_TIME_DELAY: u16 = 0x0928;
    /// DC system time difference.
    pub const DC_SYSTEM_TIME_DIFFERENCE: u16 = 0x092C;
    /// First byte of process RAM.
    pub const PROCESS_RAM: u16 = 0x1000;
}

/// Application-layer states (AL control/status bits 0..3, ETG.1000.6 Table 9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AlState {
    /// Init: no mailbox, no process data; the master configures SyncManagers for the mailbox.
    Init = 1,
    /// Pre-Operational: mailbox communication (SDOs), no process data.
    PreOp = 2,
    /// Bootstrap: firmware update over FoE.
    Bootstrap = 3,
    /// Safe-Operational: inputs are exchanged, outputs held in their safe state.
    SafeOp = 4,
    /// Operational: inputs and outputs are exchanged.
    Op = 8,
}

impl AlState {
    /// The state AL control/status bits 0..3 say, if they say one.
    pub fn from_bits(bits: u8) -> Option<Self> {
        match bits & 0x0F {
            1 => Some(Self::Init),
            2 => Some(Self::PreOp),
            3 => Some(Self::Bootstrap),
            4 => Some(Self::SafeOp),
            8 => Some(Self::Op),
            _ => None,
        }
    }

    /// The state's bits in AL control/status.
    pub fn bits(self) -> u8 {
        self as u8
    }

    /// The state's name as masters print it ("PREOP").
    pub fn name(self) -> &'static str {
        match self {
            Self::Init => "INIT",
            Self::PreOp => "PREOP",
            Self::Bootstrap => "BOOT",
            Self::SafeOp => "SAFEOP",
            Self::Op => "OP",
        }
    }
}

/// AL control / AL status bits beyond the state (ETG.1000.6 Table 9/10).
pub mod al {
    /// The state bits (Init 1, PreOp 2, Bootstrap 3, SafeOp 4, Op 8).
    pub const STATE_MASK: u8 = 0x0F;
    /// AL status: a state change was refused (the code is in AL status code). AL control:
    /// the master acknowledges that error.
    pub const ERROR: u8 = 0x10;
}

/// SII control/status bits (register 0x0502, ETG.1000.4 Table 43).
pub mod sii_control {
    /// Read command (bit 8).
    pub const READ: u16 = 0x0100;
    /// Write command (bit 9).
    pub const WRITE: u16 = 0x0200;
    /// Reload command (bit 10).
    pub const RELOAD: u16 = 0x0400;
}

/// Offsets of a SyncManager's registers from its first (`reg::SM_BASE + reg::SM_LEN · n`).
pub mod sm {
    /// Physical start address (u16).
    pub const START: u16 = 0;
    /// Length in bytes (u16).
    pub const LENGTH: u16 = 2;
    /// Control byte: mode (bits 0..1: 00 buffered, 10 mailbox) and direction (bits 2..3).
    pub const CONTROL: u16 = 4;
    /// Status byte ([`super::sm_status`]).
    pub const STATUS: u16 = 5;
}

/// SyncManager status bits (register 0x0805 + 8n).
pub mod sm_status {
    /// Mailbox full (bit 3).
    pub const MAILBOX_FULL: u8 = 0x08;
}

/// FMMU type bits (register 0x060B + 16n).
pub mod fmmu_type {
    /// The master reads through the FMMU (inputs).
    pub const READ: u8 = 0x01;
    /// The master writes through the FMMU (outputs).
    pub const WRITE: u8 = 0x02;
}

/// AL status codes (ETG.1000.6 Table 11) morc produces or explains.
pub mod al_code {
    /// No error.
    pub const NO_ERROR: u16 = 0x0000;
    /// Unspecified error.
    pub const UNSPECIFIED: u16 = 0x0001;
    /// Invalid requested state change.
    pub const INVALID_STATE_CHANGE: u16 = 0x0011;
    /// Unknown requested state.
    pub const UNKNOWN_STATE: u16 = 0x0012;
    /// Bootstrap not supported.
    pub const BOOTSTRAP_NOT_SUPPORTED: u16 = 0x0013;
    /// Invalid mailbox configuration (Init → PreOp).
    pub const INVALID_MAILBOX_CONFIG: u16 = 0x0016;
    /// Invalid sync manager configuration.
    pub const INVALID_SM_CONFIG: u16 = 0x0017;
    /// Invalid output configuration (PreOp → SafeOp).
    pub const INVALID_OUTPUT_CONFIG: u16 = 0x001D;
    /// Invalid input configuration.
    pub const INVALID_INPUT_CONFIG: u16 = 0x001E;
    /// Synchronisation error.
    pub const SYNC_ERROR: u16 = 0x001A;
    /// Invalid DC SYNC configuration.
    pub const INVALID_DC_SYNC_CONFIG: u16 = 0x0030;
    /// Distributed clocks: PLL error.
    pub const DC_PLL_ERROR: u16 = 0x0032;
    /// Distributed clocks: sync0 cycle time invalid.
    pub const DC_SYNC0_CYCLE_TIME: u16 = 0x002C;
}
