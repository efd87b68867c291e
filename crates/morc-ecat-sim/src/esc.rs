//! One simulated EtherCAT SubDevice Controller (ESC): the 4 KiB register space, process RAM,
//! the datagram commands with their working-counter rules, the AL state machine, the SII EEPROM
//! interface, FMMUs, SyncManagers (mailbox handshake) and the DC time registers.
//!
//! Register numbers and semantics follow the Beckhoff ESC datasheet section II and ETG.1000.4/6.
//! The device application (what sits behind the PDI) is not here: the ESC reports
//! [`EscEvents`] and the owner reacts (see `devices.rs`).

use super::sii::{SiiImage, SiiInfo};
use morc_ecat_wire::frame::{read_u16, write_u16, Command, DatagramLayout};

use morc_ecat_wire::esc::{al, fmmu_type, sii_control, sm, sm_status};
pub use morc_ecat_wire::esc::{al_code, reg, AlState};

/// What happened inside the ESC during one datagram that the device application must handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EscEvents {
    /// AL control (0x0120) was written: a state change request is pending.
    pub al_control: bool,
    /// The master filled the receive mailbox (its last byte was written).
    pub mailbox_received: bool,
    /// The master emptied the send mailbox (its last byte was read).
    pub mailbox_read: bool,
    /// A SyncManager or FMMU register was written.
    pub configuration_changed: bool,
}

impl EscEvents {
    fn merge(&mut self, other: EscEvents) {
        self.al_control |= other.al_control;
        self.mailbox_received |= other.mailbox_received;
        self.mailbox_read |= other.mailbox_read;
        self.configuration_changed |= other.configuration_changed;
    }

    pub fn any(&self) -> bool {
        self.al_control || self.mailbox_received || self.mailbox_read || self.configuration_changed
    }
}

/// Which DC registers an ESC has (ESC datasheet 0x0900..0x09FF; smaller ESCs/configurations
/// have only the receive-time latches, or nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DcUnit {
    /// No DC unit: 0x0900..0x09FF do not answer.
    None,
    /// Receive times 0x0900..0x090F only (seen on a real EL2828: 0x0910+ do not answer).
    ReceiveTimesOnly,
    /// Receive times, system time, offset, delay, control loop and SYNC/LATCH units.
    Full,
}

/// Fixed properties of the ESC chip (registers 0x0000..0x000F and SII interface options).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EscConfig {
    /// ESC type (register 0x0000), e.g. 0x11 for an ET1100.
    pub esc_type: u8,
    /// ESC revision (0x0001).
    pub revision: u8,
    /// ESC build (0x0002).
    pub build: u16,
    /// FMMUs supported (0x0004).
    pub fmmu_count: u8,
    /// SyncManagers supported (0x0005).
    pub sm_count: u8,
    /// Process RAM in KiB, starting at 0x1000.
    pub ram_kib: u8,
    /// Port descriptor (0x0007): the physical type of ports 0..3, two bits each.
    pub port_descriptor: u8,
    /// ESC features supported (0x0008): DC, 64-bit DC, enhanced DC sync, …
    pub features: u16,
    /// SII read chunk: 4 or 8 bytes (0x0502 bit 6), a property of the ESC.
    pub sii_read_bytes: u8,
    /// Supports the Bootstrap state (firmware update); none of the simulated devices do.
    pub bootstrap: bool,
    /// Which DC registers exist.
    pub dc: DcUnit,
    /// Low-byte bits of 0x0502 that an ESC reports beyond read size and address width
    /// (a real EL2828 reads 0x50 where an EK1100 or EL2889 read 0x40).
    pub sii_control_fixed_bits: u8,
}

impl EscConfig {
    /// A Beckhoff ET1100-like ESC: 8 FMMUs, 8 SMs, 8 KiB RAM, 64-bit DC, 8-byte SII reads.
    pub fn et1100() -> Self {
        Self {
            esc_type: 0x11,
            revision: 0x00,
            build: 0x0002,
            fmmu_count: 8,
            sm_count: 8,
            ram_kib: 8,
            port_descriptor: 0x0F,
            // 0x00FC: DC, 64-bit DC, low jitter, enhanced link detection (EBUS, MII),
            // separate FCS error handling (ESC datasheet 0x0008); what a real EK1100 reports.
            features: 0x00FC,
            sii_read_bytes: 8,
            bootstrap: false,
            dc: DcUnit::Full,
            sii_control_fixed_bits: 0x00,
        }
    }

    /// An ET1100 with enhanced DC sync activation (0x0008 bit 8: registers 0x0981..0x0984),
    /// as servo drives that run DC-synchronous have: SYNC0 can be configured.
    pub fn et1100_dc_sync() -> Self {
        Self { features: 0x01FC, ..Self::et1100() }
    }

    /// A Beckhoff ET1200-like ESC as in EL2xxx terminals: 3 FMMUs, 4 SMs, 1 KiB RAM
    /// (register counts as a real EL2889 answers them).
    pub fn et1200() -> Self {
        Self { esc_type: 0x12, fmmu_count: 3, sm_count: 4, ram_kib: 1, port_descriptor: 0x03, ..Self::et1100() }
    }

    /// Whether a register exists on this ESC. Accesses to missing registers are not counted
    /// in the working counter (observed on real devices: BWR to FMMU 3..15 counts only the
    /// ESCs that have them).
    pub fn register_exists(&self, address: u16) -> bool {
        match address {
            0x0600..=0x06FF => (address - 0x0600) / 16 < u16::from(self.fmmu_count),
            0x0800..=0x087F => (address - 0x0800) / 8 < u16::from(self.sm_count),
            0x0900..=0x090F => self.dc != DcUnit::None,
            0x0910..=0x09FF => self.dc == DcUnit::Full,
            _ => true,
        }
    }

    /// Whether the feature register (0x0008 bit 2) reports Distributed Clocks.
    pub fn dc_supported(&self) -> bool {
        self.features & 0x0004 != 0
    }
}

/// Where the frame is when it reaches this ESC, for position addressing and DC latching.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DatagramContext {
    /// Virtual time (ns) the frame's first bit reaches this ESC's port 0.
    pub arrival_ns: u64,
    /// Virtual time (ns) the frame comes back into port 1 from downstream, if anything is there.
    pub return_ns: Option<u64>,
}

/// Counters of things the simulation refused or that look wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EscCounters {
    pub datagrams: u64,
    pub unknown_commands: u64,
    pub out_of_range_accesses: u64,
    pub mailbox_overruns: u64,
    pub invalid_al_requests: u64,
}

/// One simulated ESC.
#[derive(Debug, Clone)]
pub struct Esc {
    config: EscConfig,
    /// Registers 0x0000..0x0FFF followed by process RAM.
    memory: Vec<u8>,
    sii: SiiImage,
    /// Which SMs hold the standard mailbox (from the SII), to check the Init→PreOp request.
    expected_mailbox: Option<(u16, u16, u16, u16)>,
    /// Local clock offset against the segment's virtual time: real ESCs power up at
    /// different times, so their local clocks differ.
    clock_offset_ns: u64,
    al_state: AlState,
    counters: EscCounters,
}

impl Esc {
    /// An ESC in Init with its registers at their power-up values, `sii` as its EEPROM and its local clock `clock_offset_ns` ahead of the segment's virtual time.
    pub fn new(config: EscConfig, sii: SiiImage, clock_offset_ns: u64) -> Self {
        let info = sii.parse().unwrap_or_default();
        let memory_len = usize::from(reg::PROCESS_RAM) + usize::from(config.ram_kib) * 1024;
        let mut esc = Self {
            config,
            memory: vec![0; memory_len],
            expected_mailbox: Self::expected_mailbox(&info),
            sii,
            clock_offset_ns,
            al_state: AlState::Init,
            counters: EscCounters::default(),
        };
        esc.power_on();
        esc
    }

    fn expected_mailbox(info: &SiiInfo) -> Option<(u16, u16, u16, u16)> {
        let mb = info.mailbox;
        mb.has_mailbox().then_some((mb.receive_offset, mb.receive_size, mb.send_offset, mb.send_size))
    }

    /// Register values after power-up / EEPROM load (ESC datasheet section II, reset values).
    fn power_on(&mut self) {
        let c = self.config;
        self.memory.fill(0);
        self.set_u8(reg::TYPE, c.esc_type);
        self.set_u8(reg::REVISION, c.revision);
        self.set_u16(reg::BUILD, c.build);
        self.set_u8(reg::FMMU_COUNT, c.fmmu_count);
        self.set_u8(reg::SM_COUNT, c.sm_count);
        self.set_u8(reg::RAM_SIZE, c.ram_kib);
        self.set_u8(reg::PORT_DESCRIPTOR, c.port_descriptor);
        self.set_u16(reg::FEATURES, c.features);
        // The alias comes from SII word 4, loaded at power-up (ETG.2010 Table 2).
        self.set_u16(reg::STATION_ALIAS, self.sii.word(super::sii::word::STATION_ALIAS));
        // DL control reset value: forwarding on, loops auto (0x0100 = 0x00C0001 style; simplified).
        self.set_u16(reg::DL_CONTROL, 0x0001);
        self.set_ports(false);
        self.al_state = AlState::Init;
        self.set_u8(reg::AL_STATUS, AlState::Init.bits());
        self.set_u8(reg::AL_CONTROL, AlState::Init.bits());
        // PDI control (0x0140) and ESC configuration (0x0141) from SII word 0.
        self.set_u16(reg::PDI_CONTROL, self.sii.word(0));
        self.refresh_sii_status(false, false);
    }

    /// The chip's fixed properties.
    pub fn config(&self) -> &EscConfig {
        &self.config
    }

    /// The EEPROM contents.
    pub fn sii(&self) -> &SiiImage {
        &self.sii
    }

    /// What the ESC refused or found suspicious so far.
    pub fn counters(&self) -> EscCounters {
        self.counters
    }

    /// The current AL state (AL status 0x0130, bits 0..3).
    pub fn al_state(&self) -> AlState {
        self.al_state
    }

    /// The AL status code (0x0134): why the last transition was refused, 0 if none.
    pub fn al_status_code(&self) -> u16 {
        self.u16_at(reg::AL_STATUS_CODE)
    }

    /// The error indication in AL status (0x0130 bit 4): a refused transition not yet acknowledged.
    pub fn al_error(&self) -> bool {
        self.u8_at(reg::AL_STATUS) & al::ERROR != 0
    }

    pub(crate) fn station_address(&self) -> u16 {
        self.u16_at(reg::STATION_ADDRESS)
    }

    /// Sets the DL status (0x0110) for a line topology: port 0 always has a link to upstream;
    /// port 1 has one when something is downstream, else it is closed (looped back).
    pub fn set_ports(&mut self, has_downstream: bool) {
        // Bit 0 PDI operational (EEPROM loaded), bit 4/5 physical link port 0/1,
        // bit 8/10/12/14 loop port 0..3 closed, bit 9/11 communication on port 0/1.
        let mut status: u16 = 0x0001 | 0x0010 | 0x0200;
        // Bit 1: PDI watchdog reloaded; only ESCs with a PDI (SII word 0 low byte ≠ 0) have one.
        if self.sii.word(0) & 0x00FF != 0 {
            status |= 0x0002;
        }
        if has_downstream {
            status |= 0x0020 | 0x0800;
        } else {
            status |= 0x0400;
        }
        status |= 0x1000 | 0x4000;
        self.set_u16(reg::DL_STATUS, status);
    }

    // --- raw memory access for the device application (the PDI side) ---

    /// The byte at `address` in ESC memory (registers or process RAM); 0 past its end.
    pub fn u8_at(&self, address: u16) -> u8 {
        self.memory.get(usize::from(address)).copied().unwrap_or(0)
    }

    /// The little-endian u16 at `address`; 0 past the end of memory.
    pub fn u16_at(&self, address: u16) -> u16 {
        read_u16(&self.memory, address.into()).unwrap_or(0)
    }

    /// The little-endian u32 at `address`; 0 past the end of memory.
    pub fn u32_at(&self, address: u16) -> u32 {
        u32::from(self.u16_at(address)) | (u32::from(self.u16_at(address.wrapping_add(2))) << 16)
    }

    /// The little-endian u64 at `address` (DC times); 0 past the end of memory.
    pub fn u64_at(&self, address: u16) -> u64 {
        u64::from(self.u32_at(address)) | (u64::from(self.u32_at(address.wrapping_add(4))) << 32)
    }

    fn set_u8(&mut self, address: u16, value: u8) {
        if let Some(b) = self.memory.get_mut(usize::from(address)) {
            *b = value;
        }
    }

    fn set_u16(&mut self, address: u16, value: u16) {
        write_u16(&mut self.memory, address.into(), value);
    }

    fn set_u32(&mut self, address: u16, value: u32) {
        self.set_u16(address, value as u16);
        self.set_u16(address.wrapping_add(2), (value >> 16) as u16);
    }

    fn set_u64(&mut self, address: u16, value: u64) {
        self.set_u32(address, value as u32);
        self.set_u32(address.wrapping_add(4), (value >> 32) as u32);
    }

    /// The memory the PDI sees (process RAM and registers), for a device application.
    pub fn pdi_read(&self, address: u16, out: &mut [u8]) {
        let start = usize::from(address);
        for (i, b) in out.iter_mut().enumerate() {
            *b = self.memory.get(start + i).copied().unwrap_or(0);
        }
    }

    /// Writes `data` at `address` from the PDI side, as the device application; bytes past the end are dropped.
    pub fn pdi_write(&mut self, address: u16, data: &[u8]) {
        let start = usize::from(address);
        for (i, b) in data.iter().enumerate() {
            if let Some(m) = self.memory.get_mut(start + i) {
                *m = *b;
            }
        }
    }

    // --- SyncManagers (ESC datasheet 0x0800 + 8n) ---

    pub(crate) fn sm(&self, index: u8) -> SyncManagerRegs {
        let base = reg::SM_BASE + u16::from(index) * reg::SM_LEN;
        SyncManagerRegs {
            start: self.u16_at(base),
            length: self.u16_at(base + 2),
            control: self.u8_at(base + 4),
            status: self.u8_at(base + 5),
            activate: self.u8_at(base + 6),
        }
    }

    fn set_sm_status(&mut self, index: u8, status: u8) {
        self.set_u8(reg::SM_BASE + u16::from(index) * reg::SM_LEN + sm::STATUS, status);
    }

    /// Index of the enabled SM that contains `address`, if any.
    fn sm_containing(&self, address: u16) -> Option<u8> {
        (0..self.config.sm_count.min(16)).find(|&i| {
            let sm = self.sm(i);
            sm.enabled() && sm.length > 0 && address >= sm.start && u32::from(address) < u32::from(sm.start) + u32::from(sm.length)
        })
    }

    /// Puts a complete mailbox message into the send mailbox `sm_index` (device → master) and
    /// flags it full (SM status bit 3). Returns false while the previous one is unread.
    pub fn post_mailbox(&mut self, sm_index: u8, message: &[u8]) -> bool {
        let sm = self.sm(sm_index);
        if !sm.enabled() || sm.status & sm_status::MAILBOX_FULL != 0 {
            return false;
        }
        let len = message.len().min(usize::from(sm.length));
        let start = usize::from(sm.start);
        if let Some(area) = self.memory.get_mut(start..start + usize::from(sm.length)) {
            area[..len].copy_from_slice(&message[..len]);
            area[len..].fill(0);
            self.set_sm_status(sm_index, sm.status | sm_status::MAILBOX_FULL);
            true
        } else {
            false
        }
    }

    /// Takes a received mailbox message out of the receive mailbox `sm_index` (master →
    /// device), clearing its full flag so the master may write again.
    pub fn take_mailbox(&mut self, sm_index: u8, out: &mut [u8]) -> usize {
        let sm = self.sm(sm_index);
        if sm.status & sm_status::MAILBOX_FULL == 0 {
            return 0;
        }
        let len = usize::from(sm.length).min(out.len());
        self.pdi_read(sm.start, &mut out[..len]);
        self.set_sm_status(sm_index, sm.status & !sm_status::MAILBOX_FULL);
        len
    }

    // --- FMMUs (ESC datasheet 0x0600 + 16n) ---

    pub(crate) fn fmmu(&self, index: u8) -> FmmuRegs {
        let base = reg::FMMU_BASE + u16::from(index) * reg::FMMU_LEN;
        FmmuRegs {
            logical_start: self.u32_at(base),
            length: self.u16_at(base + 4),
            physical_start: self.u16_at(base + 8),
            kind: self.u8_at(base + 11),
            activate: self.u8_at(base + 12),
        }
    }

    // --- AL state machine (ETG.1000.6 §6.4.1, ESC datasheet 0x0120/0x0130/0x0134) ---

    /// The state change the master asked for in 0x0120, with the error-acknowledge bit.
    pub fn requested_state(&self) -> (u8, bool) {
        let control = self.u8_at(reg::AL_CONTROL);
        (control & al::STATE_MASK, control & al::ERROR != 0)
    }

    /// Checks a requested transition against the AL state diagram and the ESC configuration
    /// (mailbox SMs for PreOp). `Ok(Some(state))` is a transition to perform, `Ok(None)` a
    /// request to ignore, `Err(code)` a refusal.
    pub fn check_transition(&self) -> Result<Option<AlState>, u16> {
        let (bits, ack) = self.requested_state();
        let Some(to) = AlState::from_bits(bits) else {
            return Err(al_code::UNKNOWN_STATE);
        };
        let from = self.al_state;
        // With the error indication set, only a request that acknowledges it, or one to a lower
        // state, is followed (ETG.1000.6 §6.4.1.2 "error acknowledge").
        if self.al_error() && !ack && to > from {
            return Ok(None);
        }
        use AlState::*;
        let allowed = match (from, to) {
            (a, b) if a == b => true,
            (_, Init) => true,
            (Init, PreOp) => true,
            (Init, Bootstrap) => {
                if !self.config.bootstrap {
                    return Err(al_code::BOOTSTRAP_NOT_SUPPORTED);
                }
                true
            }
            (PreOp, SafeOp) | (SafeOp, Op) | (SafeOp, PreOp) | (Op, SafeOp) | (Op, PreOp) => true,
            _ => false,
        };
        if !allowed {
            return Err(al_code::INVALID_STATE_CHANGE);
        }
        if from == Init && to == PreOp {
            if let Some((rx_start, rx_len, tx_start, tx_len)) = self.expected_mailbox {
                let rx = self.sm(0);
                let tx = self.sm(1);
                let valid = rx.enabled() && rx.start == rx_start && rx.length == rx_len && tx.enabled() && tx.start == tx_start && tx.length == tx_len;
                if !valid {
                    return Err(al_code::INVALID_MAILBOX_CONFIG);
                }
            }
        }
        Ok(Some(to))
    }

    /// Enters `state`, clearing the error indication and status code.
    pub fn enter_state(&mut self, state: AlState) {
        if state == AlState::Init || state == AlState::PreOp && self.al_state > AlState::PreOp {
            // Leaving PreOp downwards (or into Init) drops process-data SMs' buffers; mailbox
            // full flags reset when going to Init (ETG.1000.6 Table 8, "stop mailbox").
            if state == AlState::Init {
                for i in 0..self.config.sm_count.min(16) {
                    self.set_sm_status(i, 0);
                }
            }
        }
        self.al_state = state;
        self.set_u8(reg::AL_STATUS, state.bits());
        self.set_u16(reg::AL_STATUS_CODE, al_code::NO_ERROR);
    }

    /// Refuses a transition: stays in the current state with the error indication set and
    /// `code` in 0x0134.
    pub fn refuse_transition(&mut self, code: u16) {
        self.counters.invalid_al_requests += 1;
        self.set_u8(reg::AL_STATUS, self.al_state.bits() | al::ERROR);
        self.set_u16(reg::AL_STATUS_CODE, code);
    }

    /// Drops to `state` with the error indication and `code` set, as a device does on a local
    /// fault (e.g. SM watchdog → SafeOp + 0x001B).
    pub fn fault_to(&mut self, state: AlState, code: u16) {
        self.al_state = state;
        self.set_u8(reg::AL_STATUS, state.bits() | al::ERROR);
        self.set_u16(reg::AL_STATUS_CODE, code);
    }

    /// Device emulation (PDI control 0x0140 bit 8, loaded from SII word 0): ESCs without an
    /// application controller copy AL control into AL status as written, error-acknowledge bit
    /// included (ESC datasheet 0x0140 / 0x0130). Real EK1100/EL2xxx answer 0x11 after a
    /// master writes Init + acknowledge.
    pub fn device_emulation(&self) -> bool {
        self.u8_at(reg::PDI_CONTROL + 1) & 0x01 != 0
    }

    pub(crate) fn emulate_al_control(&mut self) {
        let control = self.u8_at(reg::AL_CONTROL);
        if let Some(state) = AlState::from_bits(control) {
            self.al_state = state;
        }
        self.set_u8(reg::AL_STATUS, control & 0x1F);
    }

    /// The default AL handling when no application overrides it: check, then enter or refuse.
    pub fn handle_al_control(&mut self) {
        match self.check_transition() {
            Ok(Some(to)) => self.enter_state(to),
            Ok(None) => {}
            Err(code) => self.refuse_transition(code),
        }
    }

    // --- SII EEPROM interface (ESC datasheet 0x0500..0x050F, ETG.1000.4 §6.4) ---

    fn refresh_sii_status(&mut self, command_error: bool, write_error: bool) {
        // Low byte: bit 0 write enable (cleared after a command), bit 6 read size (1 = 8 bytes),
        // bit 7 two address bytes (EEPROMs > 16 Kbit).
        let mut low = self.config.sii_control_fixed_bits;
        if self.config.sii_read_bytes == 8 {
            low |= 0x40;
        }
        if self.sii.bytes().len() > 2048 {
            low |= 0x80;
        }
        // High byte: bits 8..10 commands (clear once done), 11 checksum error, 12 device info
        // error, 13 command error, 14 write error, 15 busy. Commands complete instantly here.
        let mut high = 0u8;
        if command_error {
            high |= 0x20;
        }
        if write_error {
            high |= 0x40;
        }
        self.set_u8(reg::SII_CONTROL, low);
        self.set_u8(reg::SII_CONTROL + 1, high);
    }

    fn execute_sii_command(&mut self, written_control: u16) {
        let read = written_control & sii_control::READ != 0;
        let write = written_control & sii_control::WRITE != 0;
        let reload = written_control & sii_control::RELOAD != 0;
        let commands = u8::from(read) + u8::from(write) + u8::from(reload);
        // 0x0500 bit 0: EEPROM assigned to PDI; the master has no access then.
        let pdi_owns = self.u8_at(reg::SII_CONFIG) & 0x01 != 0;
        if commands == 0 {
            // Writing 0 to the command bits clears the error bits (ESC datasheet 0x0502).
            self.refresh_sii_status(false, false);
            return;
        }
        if commands > 1 || pdi_owns {
            self.refresh_sii_status(true, false);
            return;
        }
        let address = self.u32_at(reg::SII_ADDRESS);
        if read {
            let word = address as u16;
            let words = u16::from(self.config.sii_read_bytes / 2);
            for i in 0..words {
                let value = if address + u32::from(i) <= 0xFFFF { self.sii.word(word.wrapping_add(i)) } else { 0xFFFF };
                self.set_u16(reg::SII_DATA + 2 * i, value);
            }
            self.refresh_sii_status(false, false);
        } else if write {
            // Writes need the write-enable bit in the same access (ESC datasheet 0x0502 bit 0).
            if written_control & 0x0001 == 0 {
                self.refresh_sii_status(true, false);
                return;
            }
            let value = self.u16_at(reg::SII_DATA);
            let ok = self.sii.set_word(address as u16, value);
            self.refresh_sii_status(false, !ok);
        } else {
            // Reload: the ESC re-reads its configuration words (alias, PDI control).
            self.set_u16(reg::STATION_ALIAS, self.sii.word(super::sii::word::STATION_ALIAS));
            self.refresh_sii_status(false, false);
        }
    }

    // --- DC (ESC datasheet 0x0900..0x09FF, ETG.1000.4 §6.8) ---

    /// The ESC's local time at virtual time `t`.
    pub fn local_time(&self, t_ns: u64) -> u64 {
        t_ns.wrapping_add(self.clock_offset_ns)
    }

    /// System time: local time plus the offset the master wrote to 0x0920.
    pub fn system_time(&self, t_ns: u64) -> u64 {
        self.local_time(t_ns).wrapping_add(self.u64_at(reg::DC_SYSTEM_TIME_OFFSET))
    }

    fn latch_receive_times(&mut self, ctx: &DatagramContext) {
        let p0 = self.local_time(ctx.arrival_ns);
        self.set_u32(reg::DC_RECEIVE_TIME_PORT0, p0 as u32);
        if let Some(back) = ctx.return_ns {
            self.set_u32(reg::DC_RECEIVE_TIME_PORT1, self.local_time(back) as u32);
        }
        self.set_u64(reg::DC_RECEIVE_TIME_ECAT, p0);
    }

    // --- datagram processing ---

    /// Processes one datagram of a frame passing through this ESC, in place: reads and writes
    /// its data, increments its working counter and, for position addressing, its ADP.
    pub fn process_datagram(&mut self, frame: &mut [u8], layout: &DatagramLayout, ctx: &DatagramContext) -> EscEvents {
        self.counters.datagrams += 1;
        let mut events = EscEvents::default();
        let Some(command) = Command::from_code(layout.header.command) else {
            // Reserved commands pass unchanged (ETG.1000.4 §5.4).
            self.counters.unknown_commands += 1;
            return events;
        };
        let adp_offset = layout.address_offset();
        let adp = read_u16(frame, adp_offset).unwrap_or(0);
        let ado = layout.header.ado();
        let range = layout.data_range();
        if range.end > frame.len() || layout.wkc_offset + 2 > frame.len() {
            return events;
        }
        let mut wkc_add: u16 = 0;
        use Command::*;
        match command {
            Nop => {}
            Aprd | Apwr | Aprw | Armw | Brd | Bwr | Brw => {
                let addressed = matches!(command, Brd | Bwr | Brw) || adp == 0;
                // Every ESC increments ADP on the way (ETG.1000.4 §5.4.1.1, position addressing;
                // broadcast does so too, so a master can count devices).
                write_u16(frame, adp_offset, adp.wrapping_add(1));
                if addressed || command == Armw {
                    let (do_read, do_write) = match command {
                        Aprd => (true, false),
                        Apwr | Bwr => (false, true),
                        Aprw | Brw => (true, true),
                        Armw => (addressed, !addressed),
                        Brd => (true, false),
                        _ => (false, false),
                    };
                    let or_read = matches!(command, Brd | Brw);
                    wkc_add = self.physical(frame, range, ado, do_read, do_write, or_read, command, ctx, &mut events);
                }
            }
            Fprd | Fpwr | Fprw | Frmw => {
                let alias_enabled = self.u32_at(reg::DL_CONTROL) & (1 << 24) != 0;
                let addressed = adp == self.station_address() || alias_enabled && adp == self.u16_at(reg::STATION_ALIAS);
                if addressed || command == Frmw {
                    let (do_read, do_write) = match command {
                        Fprd => (true, false),
                        Fpwr => (false, true),
                        Fprw => (true, true),
                        _ => (addressed, !addressed),
                    };
                    wkc_add = self.physical(frame, range, ado, do_read, do_write, false, command, ctx, &mut events);
                }
            }
            Lrd | Lwr | Lrw => {
                wkc_add = self.logical(frame, range, layout.header.address, command, ctx, &mut events);
            }
        }
        if wkc_add > 0 {
            let wkc = read_u16(frame, layout.wkc_offset).unwrap_or(0);
            write_u16(frame, layout.wkc_offset, wkc.wrapping_add(wkc_add));
        }
        events
    }

    /// A physical (position, configured or broadcast) access to `ado..ado+len`.
    /// Returns the working counter increment: +1 read, +1 write, +3 read-write
    /// (ETG.1000.4 Table 15); ARMW/FRMW count +1 for whichever they did.
    #[allow(clippy::too_many_arguments)]
    fn physical(
        &mut self,
        frame: &mut [u8],
        range: std::ops::Range<usize>,
        ado: u16,
        do_read: bool,
        do_write: bool,
        or_read: bool,
        command: Command,
        ctx: &DatagramContext,
        events: &mut EscEvents,
    ) -> u16 {
        let len = range.len();
        let mut read_ok = false;
        let mut write_ok = false;
        // Read-write commands: the ESC reads the old contents into the frame and writes the
        // incoming data; write first from a copy would need a buffer, so swap byte by byte.
        for i in 0..len {
            let address = u32::from(ado) + i as u32;
            if address > 0xFFFF {
                self.counters.out_of_range_accesses += 1;
                break;
            }
            let address = address as u16;
            if !self.config.register_exists(address) {
                continue;
            }
            let incoming = frame[range.start + i];
            if do_read {
                if let Some(value) = self.read_byte(address, ctx, events) {
                    frame[range.start + i] = if or_read { incoming | value } else { value };
                    read_ok = true;
                }
            }
            if do_write && self.write_byte(address, incoming, events) {
                write_ok = true;
            }
        }
        if do_write && write_ok {
            self.after_write(ado, len, frame, range.clone(), ctx, events);
        }
        match (command, read_ok, write_ok) {
            (Command::Aprw | Command::Fprw | Command::Brw, r, w) => u16::from(r) + 2 * u16::from(w),
            (_, r, w) => u16::from(r || w),
        }
    }

    /// Reads one byte as the master sees it; `None` when the access is refused (an empty
    /// mailbox), which leaves the working counter alone.
    fn read_byte(&mut self, address: u16, ctx: &DatagramContext, events: &mut EscEvents) -> Option<u8> {
        if (reg::DC_SYSTEM_TIME..reg::DC_SYSTEM_TIME + 8).contains(&address) {
            // System time is computed on access, not stored (ESC datasheet 0x0910).
            let t = self.system_time(ctx.arrival_ns);
            return Some(t.to_le_bytes()[usize::from(address - reg::DC_SYSTEM_TIME)]);
        }
        if address >= reg::PROCESS_RAM || (0x0F00..0x1000).contains(&address) {
            if let Some(sm_index) = self.sm_containing(address) {
                let sm = self.sm(sm_index);
                if sm.is_mailbox() && !sm.master_writes() {
                    // Send mailbox: only readable when full; reading its last byte empties it.
                    if sm.status & sm_status::MAILBOX_FULL == 0 {
                        return None;
                    }
                    let sm_end = u32::from(sm.start) + u32::from(sm.length) - 1;
                    if u32::from(address) == sm_end {
                        self.set_sm_status(sm_index, sm.status & !sm_status::MAILBOX_FULL);
                        events.mailbox_read = true;
                    }
                }
            }
        }
        match self.memory.get(usize::from(address)) {
            Some(v) => Some(*v),
            None => {
                self.counters.out_of_range_accesses += 1;
                Some(0)
            }
        }
    }

    /// Writes one byte from the master, honouring read-only registers and mailbox rules.
    /// Returns whether the access counts.
    fn write_byte(&mut self, address: u16, value: u8, events: &mut EscEvents) -> bool {
        if address < reg::PROCESS_RAM && !(0x0F00..0x0F04).contains(&address) {
            if !Self::master_writable(address) {
                // Read-only registers ignore writes and the write is not counted (a real EK1100
                // and EL2889 give WKC 0 for a BWR to 0x092C).
                return false;
            }
            if (reg::DC_RECEIVE_TIME_PORT0..reg::DC_RECEIVE_TIME_ECAT).contains(&address) {
                // Receive times are latched and system time is computed: a write triggers
                // (see after_write) but does not store (ESC datasheet 0x0900, 0x0910).
                return true;
            }
            if (reg::SM_BASE..reg::SM_BASE + 16 * reg::SM_LEN).contains(&address) || (reg::FMMU_BASE..reg::FMMU_BASE + 16 * reg::FMMU_LEN).contains(&address) {
                events.configuration_changed = true;
            }
            if let Some(m) = self.memory.get_mut(usize::from(address)) {
                *m = value;
            }
            return true;
        }
        if let Some(sm_index) = self.sm_containing(address) {
            let sm = self.sm(sm_index);
            if sm.is_mailbox() {
                if !sm.master_writes() || sm.status & sm_status::MAILBOX_FULL != 0 {
                    // Writing to a send mailbox, or to a receive mailbox not yet emptied by the
                    // device, is refused (ESC datasheet "mailbox mode").
                    if sm.master_writes() {
                        self.counters.mailbox_overruns += 1;
                    }
                    return false;
                }
                if let Some(m) = self.memory.get_mut(usize::from(address)) {
                    *m = value;
                }
                if u32::from(address) == u32::from(sm.start) + u32::from(sm.length) - 1 {
                    self.set_sm_status(sm_index, sm.status | sm_status::MAILBOX_FULL);
                    events.mailbox_received = true;
                }
                return true;
            }
        }
        match self.memory.get_mut(usize::from(address)) {
            Some(m) => {
                *m = value;
                true
            }
            None => {
                self.counters.out_of_range_accesses += 1;
                true
            }
        }
    }

    /// Which registers the master may write (ESC datasheet section II, "ECAT" access column).
    fn master_writable(address: u16) -> bool {
        match address {
            0x0000..=0x000F => false,                  // ESC information
            0x0010..=0x0011 => true,                   // configured station address
            0x0012..=0x0013 => false,                  // alias: from the SII only
            0x0100..=0x0103 | 0x0108..=0x0109 => true, // DL control, physical r/w offset
            0x0110..=0x0111 => false,                  // DL status
            0x0120..=0x0121 => true,                   // AL control
            0x0130..=0x013F => false,                  // AL status, status code, (LED override writable, rarely used)
            0x0140..=0x01FF => false,                  // PDI control/config
            0x0200..=0x0203 => true,                   // ECAT event mask
            0x0204..=0x021F => false,
            0x0300..=0x0313 => true,                            // error counters (writing clears)
            0x0400..=0x0421 => true,                            // watchdog divider/times
            0x0440..=0x0443 => false,                           // watchdog status/counters
            0x0500..=0x0501 => true,                            // SII config/owner
            0x0502..=0x050F => true,                            // SII control, address, data
            0x0510..=0x05FF => true,                            // MII management
            0x0600..=0x06FF => true,                            // FMMUs
            0x0800..=0x087F => !matches!(address & 0x7, 5 | 7), // SM status and PDI control are read-only
            0x0900..=0x0917 => true,                            // latch trigger / system time (handled in after_write)
            0x0918..=0x091F => false,                           // receive time ECAT unit
            0x0920..=0x092B => true,                            // DC system time offset, delay
            0x092C..=0x092F => false,                           // system time difference (a real EK1100 gives WKC 0)
            0x0930..=0x09FF => true,                            // DC control loop, SYNC/LATCH units
            0x0E00..=0x0EFF => true,
            0x0F00..=0x0FFF => true,
            _ => false,
        }
    }

    /// Side effects of a completed write, evaluated once per datagram so multi-byte registers
    /// are seen whole.
    fn after_write(&mut self, ado: u16, len: usize, frame: &[u8], range: std::ops::Range<usize>, ctx: &DatagramContext, events: &mut EscEvents) {
        let end = u32::from(ado) + len as u32;
        let covers = |register: u16| u32::from(register) >= u32::from(ado) && u32::from(register) < end;
        if covers(reg::AL_CONTROL) {
            events.al_control = true;
        }
        if covers(reg::SII_CONTROL + 1) || covers(reg::SII_CONTROL) {
            // The command bits are in the high byte; the datagram may also carry the address.
            let control = self.u16_at(reg::SII_CONTROL);
            // Restore the status-only bits and run the command.
            self.execute_sii_command(control);
        }
        if covers(reg::DC_RECEIVE_TIME_PORT0) {
            // Any write to 0x0900 latches the receive times of all ports (ETG.1000.4 §6.8.3).
            self.latch_receive_times(ctx);
        }
        if covers(reg::DC_SYSTEM_TIME) {
            // A write of system time (FRMW from the reference, or a direct write) is compared with
            // the own system time; the difference goes to 0x092C as sign + magnitude.
            let start = range.start + usize::from(reg::DC_SYSTEM_TIME.saturating_sub(ado));
            let mut received = [0u8; 8];
            let available = frame.get(start..range.end).unwrap_or(&[]);
            let n = available.len().min(8);
            received[..n].copy_from_slice(&available[..n]);
            let received = u64::from_le_bytes(received);
            let own = self.system_time(ctx.arrival_ns);
            let difference = received.wrapping_sub(own) as i64;
            let magnitude = difference.unsigned_abs().min(0x7FFF_FFFF) as u32;
            let sign = if difference < 0 { 0x8000_0000 } else { 0 };
            self.set_u32(reg::DC_SYSTEM_TIME_DIFFERENCE, magnitude | sign);
        }
        if u32::from(ado) < u32::from(reg::SM_BASE + 16 * reg::SM_LEN) && end > u32::from(reg::SM_BASE) {
            // (Re)activating or deactivating an SM resets its mailbox state.
            for i in 0..self.config.sm_count.min(16) {
                let base = reg::SM_BASE + u16::from(i) * reg::SM_LEN;
                if u32::from(base) + 8 > u32::from(ado) && u32::from(base) < end && !self.sm(i).enabled() {
                    self.set_sm_status(i, 0);
                }
            }
        }
    }

    /// A logical access through the FMMUs (ESC datasheet 0x0600, ETG.1000.4 §6.5).
    /// Working counter: +1 if a read FMMU matched, +1 (LWR) or +2 (LRW) if a write FMMU
    /// matched (ETG.1000.4 Table 15).
    fn logical(&mut self, frame: &mut [u8], range: std::ops::Range<usize>, logical_address: u32, command: Command, ctx: &DatagramContext, events: &mut EscEvents) -> u16 {
        let len = range.len() as u64;
        let datagram_start = u64::from(logical_address);
        let datagram_end = datagram_start + len;
        let mut read_hit = false;
        let mut write_hit = false;
        // Writes before reads: the frame's incoming bytes are what write FMMUs must see.
        for pass in [true, false] {
            for index in 0..self.config.fmmu_count.min(16) {
                let fmmu = self.fmmu(index);
                if fmmu.activate & 1 == 0 || fmmu.length == 0 {
                    continue;
                }
                let is_write = pass;
                let kind_bit = if is_write { fmmu_type::WRITE } else { fmmu_type::READ };
                if fmmu.kind & kind_bit == 0 {
                    continue;
                }
                let command_does = match command {
                    Command::Lrd => !is_write,
                    Command::Lwr => is_write,
                    _ => true,
                };
                if !command_does {
                    continue;
                }
                let fmmu_start = u64::from(fmmu.logical_start);
                let fmmu_end = fmmu_start + u64::from(fmmu.length);
                let start = datagram_start.max(fmmu_start);
                let end = datagram_end.min(fmmu_end);
                if start >= end {
                    continue;
                }
                for logical in start..end {
                    let frame_index = range.start + (logical - datagram_start) as usize;
                    let physical = u32::from(fmmu.physical_start) + (logical - fmmu_start) as u32;
                    if physical > 0xFFFF {
                        self.counters.out_of_range_accesses += 1;
                        continue;
                    }
                    let physical = physical as u16;
                    if is_write {
                        if self.write_byte(physical, frame[frame_index], events) {
                            write_hit = true;
                        }
                    } else if let Some(v) = self.read_byte(physical, ctx, events) {
                        frame[frame_index] = v;
                        read_hit = true;
                    }
                }
            }
        }
        match command {
            Command::Lrw => u16::from(read_hit) + 2 * u16::from(write_hit),
            _ => u16::from(read_hit || write_hit),
        }
    }

    /// Merges events of several datagrams.
    pub fn merge_events(into: &mut EscEvents, from: EscEvents) {
        into.merge(from);
    }
}

/// A SyncManager's registers (0x0800 + 8n).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncManagerRegs {
    pub start: u16,
    pub length: u16,
    /// Bits 0..1 mode (00 buffered, 10 mailbox), bits 2..3 direction (00 master reads, 01 master writes).
    pub control: u8,
    pub status: u8,
    pub activate: u8,
}

impl SyncManagerRegs {
    pub fn enabled(&self) -> bool {
        self.activate & 1 != 0
    }

    pub fn is_mailbox(&self) -> bool {
        self.control & 0x03 == 0x02
    }

    /// Direction "ECAT write, PDI read" (control bits 2..3 = 01).
    pub fn master_writes(&self) -> bool {
        self.control & 0x0C == 0x04
    }
}

/// An FMMU's registers (0x0600 + 16n).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FmmuRegs {
    pub logical_start: u32,
    pub length: u16,
    pub physical_start: u16,
    pub kind: u8,
    pub activate: u8,
}

#[cfg(test)]
mod tests {
    use super::*;
    use morc_ecat_wire::frame::{parse_datagrams, FrameBuilder};
    use morc_ecat_wire::sii::{build_image, DeviceDescription, Identity};

    fn plain_esc() -> Esc {
        let desc = DeviceDescription { identity: Identity { vendor_id: 1, product_code: 2, revision: 3, serial: 4 }, name: "T".into(), ..Default::default() };
        Esc::new(EscConfig::et1100(), build_image(&desc, 256).unwrap(), 1000)
    }

    /// Runs one datagram through `esc`, returning (data, wkc, adp after).
    fn run(esc: &mut Esc, command: Command, address: u32, data: &[u8]) -> (Vec<u8>, u16, u16) {
        let mut buf = [0u8; 1600];
        let mut b = FrameBuilder::new(&mut buf, [0xFF; 6], [0x10; 6]).unwrap();
        b.push(command.code(), 0, address, data, 0).unwrap();
        let len = b.finish();
        let mut layouts = Vec::new();
        parse_datagrams(&buf[..len], &mut layouts, 8).unwrap();
        let l = layouts[0];
        let events = esc.process_datagram(&mut buf[..len], &l, &DatagramContext::default());
        if events.al_control {
            esc.handle_al_control();
        }
        (buf[l.data_range()].to_vec(), read_u16(&buf, l.wkc_offset).unwrap(), read_u16(&buf, l.address_offset()).unwrap())
    }

    fn fp(station: u16, register: u16) -> u32 {
        u32::from(station) | (u32::from(register) << 16)
    }

    #[test]
    fn missing_registers_are_not_counted() {
        let mut esc = Esc::new(EscConfig::et1200(), plain_esc().sii().clone(), 0);
        let (_, wkc, _) = run(&mut esc, Command::Bwr, u32::from(reg::FMMU_BASE + 3 * 16) << 16, &[0; 16]);
        assert_eq!(wkc, 0);
        let (_, wkc, _) = run(&mut esc, Command::Bwr, u32::from(reg::FMMU_BASE + 2 * 16) << 16, &[0; 16]);
        assert_eq!(wkc, 1);
        let (_, wkc, _) = run(&mut esc, Command::Brd, u32::from(reg::SM_BASE + 4 * 8) << 16, &[0; 8]);
        assert_eq!(wkc, 0);
    }

    #[test]
    fn information_registers_are_read_only() {
        let mut esc = plain_esc();
        let (data, wkc, adp) = run(&mut esc, Command::Aprd, 0, &[0; 2]);
        assert_eq!((data, wkc, adp), (vec![0x11, 0x00], 1, 1));
        let (_, wkc, _) = run(&mut esc, Command::Apwr, 0, &[0xAA]);
        assert_eq!(wkc, 0, "writes to read-only registers are not counted");
        assert_eq!(esc.u8_at(reg::TYPE), 0x11);
    }

    #[test]
    fn configured_address_and_read_write_counters() {
        let mut esc = plain_esc();
        run(&mut esc, Command::Apwr, fp(0, reg::STATION_ADDRESS), &0x1001u16.to_le_bytes());
        assert_eq!(esc.station_address(), 0x1001);
        // Not addressed: no change, no count.
        let (_, wkc, _) = run(&mut esc, Command::Fprd, fp(0x1002, reg::STATION_ADDRESS), &[0, 0]);
        assert_eq!(wkc, 0);
        // FPRW: +1 read, +2 write.
        let (data, wkc, _) = run(&mut esc, Command::Fprw, fp(0x1001, 0x0F80), &[7, 8]);
        assert_eq!((data, wkc), (vec![0, 0], 3));
        let (data, wkc, _) = run(&mut esc, Command::Fprd, fp(0x1001, 0x0F80), &[0, 0]);
        assert_eq!((data, wkc), (vec![7, 8], 1));
    }

    #[test]
    fn al_transitions_and_refusal() {
        let mut esc = plain_esc();
        let station = fp(0, reg::AL_CONTROL);
        run(&mut esc, Command::Apwr, station, &[AlState::PreOp.bits(), 0]);
        assert_eq!(esc.al_state(), AlState::PreOp);
        // PreOp → Op skips SafeOp: refused with 0x0011, error flag set.
        run(&mut esc, Command::Apwr, station, &[AlState::Op.bits(), 0]);
        assert_eq!(esc.al_state(), AlState::PreOp);
        assert!(esc.al_error());
        assert_eq!(esc.al_status_code(), al_code::INVALID_STATE_CHANGE);
        let (data, _, _) = run(&mut esc, Command::Aprd, fp(0, reg::AL_STATUS), &[0; 6]);
        assert_eq!(data, vec![0x12, 0, 0, 0, 0x11, 0]);
        // Going up again without acknowledging is ignored; acknowledging clears the error.
        run(&mut esc, Command::Apwr, station, &[AlState::SafeOp.bits(), 0]);
        assert_eq!(esc.al_state(), AlState::PreOp);
        run(&mut esc, Command::Apwr, station, &[AlState::SafeOp.bits() | 0x10, 0]);
        assert_eq!(esc.al_state(), AlState::SafeOp);
        assert!(!esc.al_error());
        run(&mut esc, Command::Apwr, station, &[0x07, 0]);
        assert_eq!(esc.al_status_code(), al_code::UNKNOWN_STATE);
        run(&mut esc, Command::Apwr, station, &[AlState::Init.bits() | 0x10, 0]);
        assert_eq!(esc.al_state(), AlState::Init);
        run(&mut esc, Command::Apwr, station, &[AlState::Bootstrap.bits(), 0]);
        assert_eq!(esc.al_status_code(), al_code::BOOTSTRAP_NOT_SUPPORTED);
    }

    #[test]
    fn sii_reads_return_image_words() {
        let mut esc = plain_esc();
        run(&mut esc, Command::Apwr, fp(0, reg::STATION_ADDRESS), &0x1000u16.to_le_bytes());
        // Read request at word 8 (vendor id): control 0x0100, address 8.
        let (_, wkc, _) = run(&mut esc, Command::Fpwr, fp(0x1000, reg::SII_CONTROL), &[0x00, 0x01, 0x08, 0x00, 0, 0]);
        assert_eq!(wkc, 1);
        let (status, _, _) = run(&mut esc, Command::Fprd, fp(0x1000, reg::SII_CONTROL), &[0, 0]);
        assert_eq!(status[1] & 0x80, 0, "not busy");
        assert_eq!(status[0] & 0x40, 0x40, "8-byte reads");
        let (data, _, _) = run(&mut esc, Command::Fprd, fp(0x1000, reg::SII_DATA), &[0; 8]);
        assert_eq!(data, esc.sii().bytes()[16..24].to_vec());
        // Two commands at once is a command error.
        run(&mut esc, Command::Fpwr, fp(0x1000, reg::SII_CONTROL), &[0x00, 0x03]);
        assert_eq!(esc.u8_at(reg::SII_CONTROL + 1) & 0x20, 0x20);
    }
}
