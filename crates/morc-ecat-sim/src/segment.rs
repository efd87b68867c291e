//! A line of simulated SubDevices: each frame passes through them in order (every ESC
//! processes every datagram, incrementing position addresses on the way), and comes back with
//! the source MAC's locally-administered bit set, as the first real ESC does.

use super::esc::{al_code, AlState, DatagramContext, Esc, EscEvents};
use super::sii::SyncManagerUsage;
use morc_ecat_wire::frame::{parse_datagrams, DatagramLayout, FrameError, MAC_LOCALLY_ADMINISTERED};
use std::any::Any;

/// What sits behind an ESC's PDI: the device's own behaviour.
pub trait DeviceApp: Send {
    /// A requested AL transition passed the ESC's own checks; refuse with an AL status code
    /// (ETG.1000.6 Table 11) if the device cannot go there.
    fn on_transition(&mut self, _esc: &Esc, _from: AlState, _to: AlState) -> Result<(), u16> {
        Ok(())
    }

    /// A mailbox message arrived; write the reply message into `response` and return its
    /// length (0 for no reply).
    fn on_mailbox(&mut self, _state: AlState, _request: &[u8], _response: &mut [u8]) -> usize {
        0
    }

    /// After each frame: move process data between the SyncManager buffers and the device.
    fn after_frame(&mut self, _esc: &mut Esc) {}

    /// Virtual time advanced by `dt_ns`: run the device's own dynamics.
    fn step(&mut self, _esc: &mut Esc, _dt_ns: u64) {}

    /// The application as `Any`, for [`SubDevice::app_as`]; implement as `self`.
    fn as_any(&self) -> &dyn Any;
    /// The application as `Any`, for [`SubDevice::app_as_mut`]; implement as `self`.
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// A device with no behaviour beyond its ESC (e.g. a coupler).
#[derive(Debug, Default)]
pub struct PassiveApp;

impl DeviceApp for PassiveApp {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// One simulated SubDevice: its ESC and its application.
pub struct SubDevice {
    /// The device's ESC: registers, SyncManagers, FMMUs, EEPROM.
    pub esc: Esc,
    app: Box<dyn DeviceApp>,
    /// SMs of the standard mailbox, from the SII (master → device, device → master).
    mailbox_sms: Option<(u8, u8)>,
    mailbox_in: Vec<u8>,
    mailbox_out: Vec<u8>,
    /// A reply waiting for the send mailbox to be emptied.
    pending_reply: usize,
    /// SMs the SII marks virtual (enable byte bit 2: no hardware behind them), with the AL
    /// status code for a master that enables one anyway.
    virtual_sms: Vec<(u8, u16)>,
}

impl std::fmt::Debug for SubDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubDevice").field("station", &self.esc.station_address()).field("state", &self.esc.al_state()).finish()
    }
}

impl SubDevice {
    /// A device of `esc` with `app` behind its PDI; mailbox SyncManagers and buffers come from the ESC's SII.
    pub fn new(esc: Esc, app: Box<dyn DeviceApp>) -> Self {
        let info = esc.sii().parse().unwrap_or_default();
        let find = |usage| info.sync_managers.iter().position(|s| s.usage == usage).map(|i| i as u8);
        let mailbox_sms = match (find(SyncManagerUsage::MailboxOut), find(SyncManagerUsage::MailboxIn)) {
            (Some(rx), Some(tx)) if info.mailbox.has_mailbox() => Some((rx, tx)),
            _ => None,
        };
        // Mailbox buffers are sized once here, so mailbox traffic does not allocate.
        let size = usize::from(info.mailbox.receive_size.max(info.mailbox.send_size)).max(16);
        let virtual_sms = (info.sync_managers.iter().enumerate())
            .filter(|(_, sm)| sm.enable & 0x04 != 0)
            .map(|(i, sm)| (i as u8, if matches!(sm.usage, SyncManagerUsage::ProcessDataIn | SyncManagerUsage::MailboxIn) { al_code::INVALID_INPUT_CONFIG } else { al_code::INVALID_OUTPUT_CONFIG }))
            .collect();
        Self { esc, app, mailbox_sms, mailbox_in: vec![0; size], mailbox_out: vec![0; size], pending_reply: 0, virtual_sms }
    }

    /// The device application.
    pub fn app(&self) -> &dyn DeviceApp {
        self.app.as_ref()
    }

    /// The application as its concrete type, to inspect a simulated device in tests.
    pub fn app_as<T: 'static>(&self) -> Option<&T> {
        self.app.as_any().downcast_ref()
    }

    /// The application as its concrete type, to drive a simulated device (set inputs, inject faults).
    pub fn app_as_mut<T: 'static>(&mut self) -> Option<&mut T> {
        self.app.as_any_mut().downcast_mut()
    }

    fn handle_events(&mut self, events: EscEvents) {
        if events.al_control && self.esc.device_emulation() {
            self.esc.emulate_al_control();
        } else if events.al_control {
            let from = self.esc.al_state();
            // Firmware behind a virtual SM finds a master enabling it an invalid configuration.
            let virtual_enabled = self.virtual_sms.iter().find(|(sm, _)| self.esc.sm(*sm).enabled()).map(|(_, code)| *code);
            match self.esc.check_transition() {
                Ok(Some(to)) if to >= AlState::SafeOp && to != AlState::Bootstrap && virtual_enabled.is_some() => self.esc.refuse_transition(virtual_enabled.unwrap_or_default()),
                Ok(Some(to)) => match self.app.on_transition(&self.esc, from, to) {
                    Ok(()) => self.esc.enter_state(to),
                    Err(code) => self.esc.refuse_transition(code),
                },
                Ok(None) => {}
                Err(code) => self.esc.refuse_transition(code),
            }
        }
        let Some((rx_sm, tx_sm)) = self.mailbox_sms else { return };
        if events.mailbox_received {
            let n = self.esc.take_mailbox(rx_sm, &mut self.mailbox_in);
            // Mailbox services run from PreOp on (ETG.1000.6 Table 8).
            let state = self.esc.al_state();
            if n > 0 && state != AlState::Init {
                let reply_len = self.esc.sm(tx_sm).length as usize;
                let out_len = reply_len.min(self.mailbox_out.len());
                let len = self.app.on_mailbox(state, &self.mailbox_in[..n], &mut self.mailbox_out[..out_len]);
                if len > 0 {
                    self.pending_reply = len;
                }
            }
        }
        if self.pending_reply > 0 && self.esc.post_mailbox(tx_sm, &self.mailbox_out[..self.pending_reply]) {
            self.pending_reply = 0;
        }
    }
}

/// Counts of what the segment saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SegmentCounters {
    pub frames: u64,
    /// Frames lost on purpose ([`Segment::lose_frames`]).
    pub lost_frames: u64,
    pub malformed_frames: u64,
    pub datagrams: u64,
}

/// Maximum datagrams per frame the segment accepts (a 1500-byte frame holds at most 125).
pub const MAX_DATAGRAMS_PER_FRAME: usize = 256;

/// The chain of SubDevices and the virtual time they share.
pub struct Segment {
    devices: Vec<SubDevice>,
    time_ns: u64,
    /// Per-hop delay, so DC receive times differ along the line as on a real one.
    hop_delay_ns: u64,
    layouts: Vec<DatagramLayout>,
    counters: SegmentCounters,
    /// Simulated faults: frames still to lose, and where the line is cut.
    frames_to_lose: u32,
    line_cut_before: Option<usize>,
    /// A fault to raise once virtual time reaches the given ns ([`Segment::schedule_fault`]).
    scheduled: Option<(u64, ScheduledFault)>,
}

/// A fault the segment raises by itself at a moment of its virtual time: fault injection, to
/// check that a program, its recording and the robot come through a line failing mid-motion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScheduledFault {
    /// The next `n` frames are lost ([`Segment::lose_frames`]; `u32::MAX`: the link is gone).
    LoseFrames(u32),
    /// The CiA 402 drive at `position` faults with `error_code` (0x603F).
    DriveFault {
        /// Position of the drive on the line (0 = first).
        position: usize,
        /// The error code the drive reports in 0x603F.
        error_code: u16,
    },
    /// The line is cut before `position` ([`Segment::cut_line_before`]).
    CutLine(usize),
}

impl std::fmt::Debug for Segment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Segment").field("devices", &self.devices).field("time_ns", &self.time_ns).finish()
    }
}

impl Default for Segment {
    fn default() -> Self {
        Self::new()
    }
}

impl Segment {
    /// An empty line at virtual time 0.
    pub fn new() -> Self {
        Self {
            devices: Vec::new(),
            time_ns: 0,
            hop_delay_ns: 150,
            layouts: Vec::with_capacity(MAX_DATAGRAMS_PER_FRAME),
            counters: SegmentCounters::default(),
            frames_to_lose: 0,
            line_cut_before: None,
            scheduled: None,
        }
    }

    /// Appends a device at the end of the line.
    pub fn push(&mut self, device: SubDevice) -> &mut Self {
        if let Some(last) = self.devices.last_mut() {
            last.esc.set_ports(true);
        }
        let mut device = device;
        device.esc.set_ports(false);
        self.devices.push(device);
        self
    }

    /// Number of devices on the line.
    pub fn len(&self) -> usize {
        self.devices.len()
    }

    /// True when no device is on the line.
    pub fn is_empty(&self) -> bool {
        self.devices.is_empty()
    }

    /// The device at `position` (0 = first after the master).
    pub fn device(&self, position: usize) -> Option<&SubDevice> {
        self.devices.get(position)
    }

    /// The device at `position`, to change it.
    pub fn device_mut(&mut self, position: usize) -> Option<&mut SubDevice> {
        self.devices.get_mut(position)
    }

    /// All devices, in line order.
    pub fn devices(&self) -> &[SubDevice] {
        &self.devices
    }

    /// Frames and datagrams seen, lost and malformed so far.
    pub fn counters(&self) -> SegmentCounters {
        self.counters
    }

    /// The segment's virtual time (ns).
    pub fn time_ns(&self) -> u64 {
        self.time_ns
    }

    /// Sets the virtual time (ns) without stepping the devices (see [`Segment::advance`]).
    pub fn set_time_ns(&mut self, t: u64) {
        self.time_ns = t;
    }

    /// Simulated fault: the next `n` frames are lost on the wire (no reply at all).
    pub fn lose_frames(&mut self, n: u32) {
        self.frames_to_lose = n;
    }

    /// Simulated fault: the line is cut just before `position` (that device and all after it
    /// drop out: their power failed or a cable was pulled). `None` reconnects them unchanged.
    pub fn cut_line_before(&mut self, position: Option<usize>) {
        self.line_cut_before = position;
    }

    /// Raises `fault` once virtual time has advanced `after_ns` from now (replacing a fault
    /// scheduled before). A drive fault for a position that holds no CiA 402 drive is refused.
    pub fn schedule_fault(&mut self, after_ns: u64, fault: ScheduledFault) -> Result<(), String> {
        if let ScheduledFault::DriveFault { position, .. } = fault {
            if self.device(position).and_then(|d| d.app_as::<super::Cia402Drive>()).is_none() {
                return Err(format!("there is no CiA 402 drive at position {position} of the simulated segment"));
            }
        }
        self.scheduled = Some((self.time_ns.saturating_add(after_ns), fault));
        Ok(())
    }

    /// Advances virtual time, stepping every device's dynamics.
    pub fn advance(&mut self, dt_ns: u64) {
        self.time_ns = self.time_ns.wrapping_add(dt_ns);
        if let Some((at, fault)) = self.scheduled {
            if self.time_ns >= at {
                self.scheduled = None;
                match fault {
                    ScheduledFault::LoseFrames(n) => self.lose_frames(n),
                    ScheduledFault::CutLine(position) => self.cut_line_before(Some(position)),
                    ScheduledFault::DriveFault { position, error_code } => {
                        if let Some(drive) = self.device_mut(position).and_then(|d| d.app_as_mut::<super::Cia402Drive>()) {
                            drive.inject_fault(error_code);
                        }
                    }
                }
            }
        }
        for d in &mut self.devices {
            d.app.step(&mut d.esc, dt_ns);
        }
    }

    /// Passes a frame through the line: `input` is what the master sent, `output` receives the
    /// frame as it comes back. Returns the reply length. Malformed frames are counted and
    /// returned as errors (a real segment would drop or mangle them).
    pub fn process_frame(&mut self, input: &[u8], output: &mut [u8]) -> Result<usize, FrameError> {
        self.counters.frames += 1;
        if self.frames_to_lose > 0 {
            self.frames_to_lose -= 1;
            self.counters.lost_frames += 1;
            return Err(FrameError::Lost);
        }
        if let Err(e) = parse_datagrams(input, &mut self.layouts, MAX_DATAGRAMS_PER_FRAME) {
            self.counters.malformed_frames += 1;
            return Err(e);
        }
        let len = input.len();
        let out = match output.get_mut(..len) {
            Some(o) => o,
            None => {
                self.counters.malformed_frames += 1;
                return Err(FrameError::BufferTooSmall { needed: len, available: output.len() });
            }
        };
        out.copy_from_slice(input);
        // The first ESC marks the source MAC as locally administered (ESC datasheet I,
        // "Frame processing": port 0 → processing unit sets bit 1 of the first MAC byte).
        out[6] |= MAC_LOCALLY_ADMINISTERED;
        // A cut line: the last connected device closes its port and returns the frame.
        let connected = self.line_cut_before.unwrap_or(self.devices.len()).min(self.devices.len());
        let n = connected as u64;
        for (position, device) in self.devices[..connected].iter_mut().enumerate() {
            let position = position as u64;
            let ctx = DatagramContext {
                arrival_ns: self.time_ns + position * self.hop_delay_ns,
                return_ns: (position + 1 < n).then(|| self.time_ns + (2 * (n - 1) - position) * self.hop_delay_ns),
            };
            for layout in &self.layouts {
                let events = device.esc.process_datagram(out, layout, &ctx);
                if events.any() {
                    device.handle_events(events);
                }
            }
            device.app.after_frame(&mut device.esc);
        }
        self.counters.datagrams += self.layouts.len() as u64;
        Ok(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::devices::{coupler, digital_outputs, load_sii, DigitalOutputs};
    use crate::esc::{reg, EscConfig};
    use morc_ecat_wire::frame::{read_u16, Command, FrameBuilder};

    fn reference(name: &str) -> morc_ecat_wire::sii::SiiImage {
        load_sii(format!("{}/../../tests/data/reference/ethercat/eeprom/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    /// EK1100 + EL2004 + EL2828 from their real EEPROM images.
    fn three_devices() -> Segment {
        let mut s = Segment::new();
        s.push(coupler(reference("ek1100.hex"), 10_000));
        s.push(digital_outputs(reference("el2004.bin"), EscConfig::et1200(), 20_000).unwrap());
        s.push(digital_outputs(reference("el2828.hex"), EscConfig::et1200(), 30_000).unwrap());
        s
    }

    /// Sends one datagram; returns (data, wkc, address field) of the reply.
    fn send(s: &mut Segment, command: Command, address: u32, data: &[u8]) -> (Vec<u8>, u16, u32) {
        let mut buf = [0u8; 1600];
        let mut b = FrameBuilder::new(&mut buf, [0xFF; 6], [0x10; 6]).unwrap();
        b.push(command.code(), 0x42, address, data, 0).unwrap();
        let len = b.finish();
        let mut out = [0u8; 1600];
        let n = s.process_frame(&buf[..len], &mut out).unwrap();
        assert_eq!(n, len);
        assert_eq!(out[6], 0x12, "locally administered bit set on the way back");
        let start = 16 + 10;
        let address = u32::from_le_bytes(out[18..22].try_into().unwrap());
        (out[start..start + data.len()].to_vec(), read_u16(&out, start + data.len()).unwrap(), address)
    }

    fn ap(position: u16, register: u16) -> u32 {
        u32::from(position.wrapping_neg()) | (u32::from(register) << 16)
    }

    fn fp(station: u16, register: u16) -> u32 {
        u32::from(station) | (u32::from(register) << 16)
    }

    fn address_all(s: &mut Segment) {
        for i in 0..3u16 {
            let (_, wkc, _) = send(s, Command::Apwr, ap(i, reg::STATION_ADDRESS), &(0x1000 + i).to_le_bytes());
            assert_eq!(wkc, 1);
        }
    }

    #[test]
    fn broadcast_read_counts_every_device() {
        let mut s = three_devices();
        let (data, wkc, address) = send(&mut s, Command::Brd, 0, &[0; 2]);
        assert_eq!(wkc, 3);
        assert_eq!(data, vec![0x13, 0x00], "ESC types OR-ed: ET1100 0x11 | ET1200 0x12, as the real line answers");
        assert_eq!(address as u16, 3, "each device increments ADP");
        let (_, wkc, _) = send(&mut s, Command::Bwr, u32::from(reg::DL_CONTROL) << 16, &[1, 0, 0, 0]);
        assert_eq!(wkc, 3);
    }

    #[test]
    fn position_addressing_reaches_only_that_device() {
        let mut s = three_devices();
        address_all(&mut s);
        // Alias register holds nothing here; read the station address of position 1.
        let (data, wkc, address) = send(&mut s, Command::Aprd, ap(1, reg::STATION_ADDRESS), &[0, 0]);
        assert_eq!((data, wkc), (vec![0x01, 0x10], 1));
        assert_eq!(address as u16, 2, "ADP -1 incremented three times");
        // Past the end of the line: nobody answers.
        let (_, wkc, _) = send(&mut s, Command::Aprd, ap(3, reg::STATION_ADDRESS), &[0, 0]);
        assert_eq!(wkc, 0);
        // APRW on position 2: +3.
        let (_, wkc, _) = send(&mut s, Command::Aprw, ap(2, 0x0F80), &[1, 2]);
        assert_eq!(wkc, 3);
    }

    #[test]
    fn configured_addressing_and_read_multiple_write() {
        let mut s = three_devices();
        address_all(&mut s);
        let (_, wkc, _) = send(&mut s, Command::Fpwr, fp(0x1002, 0x0F80), &[0xAB, 0xCD]);
        assert_eq!(wkc, 1);
        assert_eq!(s.device(2).unwrap().esc.u16_at(0x0F80), 0xCDAB);
        assert_eq!(s.device(1).unwrap().esc.u16_at(0x0F80), 0);
        // FRMW: device 0x1002 reads, the others (positions 0, 1) write.
        let (data, wkc, _) = send(&mut s, Command::Frmw, fp(0x1002, 0x0F80), &[0x11, 0x22]);
        assert_eq!(wkc, 3);
        assert_eq!(data, vec![0xAB, 0xCD]);
        // Downstream devices get what the reader put in: position 0 wrote 0x2211 before the
        // reader; nothing is downstream of position 2.
        assert_eq!(s.device(0).unwrap().esc.u16_at(0x0F80), 0x2211);
        // ARMW: position 0 reads, 1 and 2 write what it read.
        let (data, wkc, _) = send(&mut s, Command::Armw, ap(0, 0x0F80), &[0, 0]);
        assert_eq!((data, wkc), (vec![0x11, 0x22], 3));
        assert_eq!(s.device(1).unwrap().esc.u16_at(0x0F80), 0x2211);
    }

    #[test]
    fn logical_read_write_over_two_devices() {
        let mut s = three_devices();
        address_all(&mut s);
        // SM0 of both terminals: 1 byte at 0x0F00, PD out (control 0x44 from the SII), enabled.
        for station in [0x1001u16, 0x1002] {
            send(&mut s, Command::Fpwr, fp(station, reg::SM_BASE), &[0x00, 0x0F, 1, 0, 0x44, 0, 1, 0]);
        }
        // FMMU0: EL2004 at logical 0x10000, EL2828 at 0x10001, 1 byte each, write.
        for (i, station) in [0x1001u16, 0x1002].into_iter().enumerate() {
            let mut fmmu = [0u8; 16];
            fmmu[0..4].copy_from_slice(&(0x10000u32 + i as u32).to_le_bytes());
            fmmu[4..6].copy_from_slice(&1u16.to_le_bytes());
            fmmu[7] = 7;
            fmmu[8..10].copy_from_slice(&0x0F00u16.to_le_bytes());
            fmmu[11] = 0x02;
            fmmu[12] = 1;
            send(&mut s, Command::Fpwr, fp(station, reg::FMMU_BASE), &fmmu);
        }
        for (state, station) in [(2u8, 0x1001u16), (4, 0x1001), (8, 0x1001), (2, 0x1002), (4, 0x1002), (8, 0x1002)] {
            send(&mut s, Command::Fpwr, fp(station, reg::AL_CONTROL), &[state, 0]);
        }
        assert_eq!(s.device(2).unwrap().esc.al_state(), AlState::Op);
        // LRW over both: +2 per write-FMMU hit.
        let (_, wkc, _) = send(&mut s, Command::Lrw, 0x10000, &[0x0A, 0xA5]);
        assert_eq!(wkc, 4);
        assert_eq!(s.device(1).unwrap().app_as::<DigitalOutputs>().unwrap().outputs(), 0x0A);
        assert_eq!(s.device(2).unwrap().app_as::<DigitalOutputs>().unwrap().outputs(), 0xA5);
        // Only the second one: LWR counts +1.
        let (_, wkc, _) = send(&mut s, Command::Lwr, 0x10001, &[0x3C]);
        assert_eq!(wkc, 1);
        // Outside every FMMU: nothing.
        let (_, wkc, _) = send(&mut s, Command::Lrd, 0x20000, &[0; 4]);
        assert_eq!(wkc, 0);
    }

    #[test]
    fn whole_real_eeprom_reads_back_through_the_sii_registers() {
        let mut s = three_devices();
        address_all(&mut s);
        let image = reference("el2004.bin");
        let mut read_back = Vec::new();
        for word in (0..image.len_words() as u32).step_by(4) {
            // Control: read command (0x0100); address: word, as one FPWR of 6 bytes (ETG.1000.4 §6.4).
            let mut request = [0u8; 6];
            request[0..2].copy_from_slice(&0x0100u16.to_le_bytes());
            request[2..6].copy_from_slice(&word.to_le_bytes());
            let (_, wkc, _) = send(&mut s, Command::Fpwr, fp(0x1001, reg::SII_CONTROL), &request);
            assert_eq!(wkc, 1);
            let (status, _, _) = send(&mut s, Command::Fprd, fp(0x1001, reg::SII_CONTROL), &[0, 0]);
            assert_eq!(status[1], 0, "not busy, no error");
            let (data, wkc, _) = send(&mut s, Command::Fprd, fp(0x1001, reg::SII_DATA), &[0; 8]);
            assert_eq!(wkc, 1);
            read_back.extend_from_slice(&data);
        }
        assert_eq!(&read_back[..image.bytes().len()], image.bytes());
    }

    #[test]
    fn malformed_frames_are_counted() {
        let mut s = three_devices();
        let mut out = [0u8; 64];
        assert!(s.process_frame(&[0u8; 10], &mut out).is_err());
        assert_eq!(s.counters().malformed_frames, 1);
    }
}
