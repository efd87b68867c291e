//! The EtherCAT master: ethercrab's MainDevice and one group of SubDevices behind a small
//! synchronous API. Bring-up (discovery, PDO configuration through SDOs, PreOp → Op) happens
//! at [`Bus::open`], off the real-time path; [`Bus::cycle`] then does one process-data
//! exchange (LRW + AL status checks), driven to completion on the calling thread.
//!
//! Two links: the in-process transport to a virtual segment (deterministic: a cycle is a
//! plain function call through the simulated devices) and a network interface, where the
//! calling thread sends ethercrab's frames on a raw socket and waits for the replies up to the
//! receive timeout. Not ethercrab's own `std` TX/RX task: it ends for good at the first reply
//! that comes after its frame was given up (a late reply), which turns one late frame into a
//! dead link.
//!
//! Late is not lost. A cycle whose reply has not come within the receive timeout moves on with
//! last cycle's inputs (the next setpoints go out on time, as with IgH's or TwinCAT's master);
//! ethercrab frees the frame and refuses its reply when it comes. That reply is then matched
//! to the frame by its PDU index and counted as late ([`BusCounters::late_replies`]); its data
//! is not used (newer frames are already out). A frame is lost only when no reply has come
//! within [`MasterConfig::reply_timeout`] of its sending, or it could not be sent at all
//! (see [`crate::replies`]).
//!
//! Why ethercrab's PDU timeout is infinite: a finite one registers a timer with async-io's
//! reactor on every frame (a system call and a waker clone); lost frames are detected here
//! instead, where the cyclic path knows its own deadline.

use crate::raw_socket::RawSocket;
use crate::replies::{ReplyLedger, MAX_IN_FLIGHT};
use crate::sii_coe_mask::SiiCoeMask;
use crate::transport::{lock, InProcessTransport, SharedSegment, MAX_FRAME_LEN};
use crate::BusError;
use ethercrab::subdevice_group::{DcConfiguration, HasDc, Op};
use ethercrab::{DcSupport, DcSync, MainDevice, MainDeviceConfig, PduRx, PduStorage, PduTx, SubDeviceGroup, SubDeviceState, Timeouts};
use morc_ecat_wire::esc::{al, al_code, reg, sm, AlState};
use morc_ecat_wire::sii;
use std::future::Future;
use std::ops::Range;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// Most SubDevices one bus handles.
pub const MAX_SUBDEVICES: usize = 32;
/// Largest process image (inputs + outputs) in bytes.
pub(crate) const MAX_PDI: usize = 1024;
const MAX_FRAMES: usize = 16;
const MAX_PDU_DATA: usize = PduStorage::element_size(1100);

type Storage = PduStorage<MAX_FRAMES, MAX_PDU_DATA>;
/// The group in Op, with or without distributed clocks (ethercrab's typestates differ).
enum OpGroup {
    Plain(SubDeviceGroup<MAX_SUBDEVICES, MAX_PDI, ethercrab::DefaultLock, Op>),
    Dc(SubDeviceGroup<MAX_SUBDEVICES, MAX_PDI, ethercrab::DefaultLock, Op, HasDc>),
}

/// `$body` with `$g` bound to the group, whichever typestate it has.
macro_rules! with_group {
    ($group:expr, $g:ident => $body:expr) => {
        match $group {
            OpGroup::Plain($g) => $body,
            OpGroup::Dc($g) => $body,
        }
    };
}

/// Where the segment is.
#[derive(Clone)]
pub enum Link {
    /// A virtual segment in this process.
    Simulated(SharedSegment),
    /// A network interface (e.g. `eth1`, or one end of a veth pair); needs CAP_NET_RAW.
    Interface(String),
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Link::Simulated(_) => write!(f, "simulated segment"),
            Link::Interface(i) => write!(f, "interface {i}"),
        }
    }
}

/// Options of the master.
#[derive(Debug, Clone)]
pub struct MasterConfig {
    /// How long bring-up may take in all (discovery, SDOs, state changes).
    pub bring_up_timeout: Duration,
    /// Over a network interface: how long a cycle waits for its frame to come back before it
    /// moves on with last cycle's inputs (keep it under the cycle time). The frame is not lost
    /// yet: see `reply_timeout`.
    pub receive_timeout: Duration,
    /// Over a network interface: a frame whose reply has not come this long after its
    /// sending is lost ([`DEFAULT_REPLY_TIMEOUT`] unless set); a reply that comes later than
    /// its cycle's wait but within this is late, counted and not lost.
    pub reply_timeout: Duration,
    /// Distributed clocks: the SYNC0 cycle of the devices the plan asks it for (the bus
    /// cycle), or `None` to leave DC sync off.
    pub sync0_period: Option<Duration>,
}

impl Default for MasterConfig {
    fn default() -> Self {
        Self {
            bring_up_timeout: Duration::from_secs(10),
            receive_timeout: Duration::from_micros(900),
            reply_timeout: DEFAULT_REPLY_TIMEOUT,
            sync0_period: None,
        }
    }
}

/// How long a frame's reply may take before the frame counts as lost: 2 ms, SOEM's
/// `EC_TIMEOUTRET` (2000 µs). A direct line answers in tens of µs, a NIC with interrupt
/// moderation or a USB adapter within about 1 ms; 2 ms rides through those, yet a line that is
/// cut still faults within a few cycles.
pub const DEFAULT_REPLY_TIMEOUT: Duration = Duration::from_millis(2);

/// The longest reply timeout the master takes, in cycles: frames waiting for a late reply are
/// kept in a fixed table (and ethercrab's 8-bit PDU index must not come round meanwhile).
pub const MAX_REPLY_TIMEOUT_CYCLES: usize = MAX_IN_FLIGHT - 4;

/// How long after configuration the first SYNC0 pulse comes: time for the devices to reach
/// Op (ethercrab's examples use 100 ms).
const SYNC0_START_DELAY: Duration = Duration::from_millis(100);

/// What the master knows of one SubDevice.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceInfo {
    /// Position on the line, 0 = first after the master.
    pub position: usize,
    /// Name from its EEPROM (SII), e.g. "EL2008".
    pub name: String,
    /// Vendor id (identity object 0x1018:01, from the SII).
    pub vendor_id: u32,
    /// Product code (0x1018:02).
    pub product_code: u32,
    /// Revision number (0x1018:03).
    pub revision: u32,
    /// Serial number (0x1018:04).
    pub serial: u32,
    /// Configured station address (register 0x0010) the master gave it.
    pub configured_address: u16,
    /// Configured station alias (register 0x0012, from the SII).
    pub alias_address: u16,
    /// Distributed clocks: "64 bit", "32 bit", "ref only" or "no".
    pub dc: &'static str,
    /// Its SYNC0 can be configured (enhanced DC sync activation).
    pub dc_sync_capable: bool,
    /// SYNC0 was configured at bring-up.
    pub sync0: bool,
    /// CoE device type (0x1000), for devices with a CoE mailbox.
    pub device_type: Option<u32>,
    /// Process-data input bytes (TxPDOs) in the process image, once mapped.
    pub input_bytes: usize,
    /// Process-data output bytes (RxPDOs) in the process image, once mapped.
    pub output_bytes: usize,
    /// Its EEPROM says CoE but its mailbox does not answer: its process data comes from the
    /// PDO description in its EEPROM, as SOEM does (and no SDOs go to it).
    pub pdo_from_eeprom: bool,
    /// For such a device, the PDO entries its EEPROM maps (RxPDO entries, TxPDO entries, as
    /// `morc_ecat_wire::cia402::pdo::entry` writes them), in process-image order.
    pub eeprom_mapping: Option<(Vec<u32>, Vec<u32>)>,
}

/// An SDO download to do in PreOp, for the device at `position`.
#[derive(Debug, Clone, Copy)]
pub struct PreOpWrite {
    /// The device's position on the line.
    pub position: usize,
    /// What to download.
    pub write: crate::devices::SdoWrite,
}

/// What to do in PreOp, chosen from what discovery found.
#[derive(Debug, Clone, Default)]
pub struct PreOpPlan {
    /// SDO downloads, in order (PDO mapping, mode of operation…).
    pub writes: Vec<PreOpWrite>,
    /// Devices to run DC-synchronous (SYNC0 every [`MasterConfig::sync0_period`]).
    pub sync0: Vec<usize>,
}

/// How one cycle went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CycleStatus {
    /// The reply came with the expected working counter, every device in Op.
    Ok,
    /// No reply within the cycle's wait (the receive timeout): inputs are last cycle's. The
    /// frame is in flight: lost only if no reply comes within the reply timeout.
    Late,
    /// No reply can come (the send failed, or the segment dropped the frame): inputs are last
    /// cycle's, the frame is lost.
    Lost,
    /// The reply came with another working counter than the devices give in Op.
    WorkingCounter {
        /// Working counter received.
        got: u16,
        /// Working counter the devices give in Op.
        expected: u16,
    },
    /// The reply came, but some devices are not in Op (see [`Bus::states`]).
    NotOp,
    /// ethercrab refused the exchange (e.g. no free frame): counted like a lost frame.
    Error,
}

/// Counts since bring-up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BusCounters {
    /// Cycles run.
    pub cycles: u64,
    /// Frames lost: no reply within the reply timeout, or none possible.
    pub lost_frames: u64,
    /// Replies that came after their cycle had moved on, within the reply timeout: late, not lost.
    pub late_replies: u64,
    /// Cycles with a wrong working counter ([`CycleStatus::WorkingCounter`]).
    pub working_counter_errors: u64,
    /// Cycles with some device not in Op ([`CycleStatus::NotOp`]).
    pub not_op: u64,
    /// Exchanges ethercrab refused ([`CycleStatus::Error`]).
    pub errors: u64,
}

enum Driver {
    InProcess {
        transport: InProcessTransport<'static>,
        segment: SharedSegment,
    },
    /// A raw socket pumped on the calling thread: frames go out and replies come in within
    /// `run`, no TX/RX thread in between.
    Socket {
        interface: String,
        socket: RawSocket,
        tx: PduTx<'static>,
        rx: PduRx<'static>,
        buffer: Box<[u8; MAX_FRAME_LEN + 4]>,
        /// The last frame sent on the cyclic path: its first PDU's index and when it went out.
        sent: Option<(u8, Instant)>,
        /// Replies ethercrab refused (their frame was given up), not yet given to the ledger.
        late: Box<[(u8, Instant); LATE_QUEUE]>,
        late_len: usize,
        link_error: Option<i32>,
        sii_mask: SiiCoeMask,
    },
}

/// Refused replies kept between cycles (more in one cycle are counted as after loss).
const LATE_QUEUE: usize = 16;

/// Where the first PDU's index sits in an EtherCAT frame: after the Ethernet header (14
/// bytes), the EtherCAT header (2) and the PDU's command byte.
const FIRST_PDU_INDEX: usize = 17;

/// How long to wait for a future's frames.
#[derive(Clone, Copy)]
enum Patience {
    /// The cyclic path: a frame without reply is lost at once (in-process) or after the
    /// receive timeout (socket).
    Cycle(Duration),
    /// Bring-up and recovery: ethercrab may wait on its own timers; give up at the deadline.
    Until(Instant),
}

impl Driver {
    /// Polls `fut` to completion on this thread, moving its frames. `None`: gave up.
    fn run<F: Future>(&mut self, fut: F, patience: Patience) -> Option<F::Output> {
        let mut fut = pin!(fut);
        match self {
            Driver::InProcess { transport, .. } => {
                let mut cx = Context::from_waker(Waker::noop());
                let dropped_before = transport.counters().frames_dropped;
                loop {
                    if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
                        return Some(v);
                    }
                    let exchanged = transport.pump();
                    // In-process, a frame without reply never gets one: lost, whatever the patience.
                    if transport.counters().frames_dropped != dropped_before {
                        return None;
                    }
                    if exchanged == 0 {
                        match patience {
                            // Nothing to send and no reply: the frame was lost.
                            Patience::Cycle(_) => return None,
                            Patience::Until(deadline) => {
                                if Instant::now() > deadline {
                                    return None;
                                }
                                // ethercrab waits on a timer of its own (a retry delay).
                                std::thread::sleep(Duration::from_micros(20));
                            }
                        }
                    }
                }
            }
            Driver::Socket { socket, tx, rx, buffer, sent, late, late_len, link_error, sii_mask, .. } => {
                *link_error = None;
                *sent = None;
                let cyclic = matches!(patience, Patience::Cycle(_));
                let mut cx = Context::from_waker(Waker::noop());
                let (deadline, slice) = match patience {
                    Patience::Cycle(d) => (Instant::now() + d, d),
                    // ethercrab may also wait on timers of its own: re-poll every millisecond.
                    Patience::Until(t) => (t, Duration::from_millis(1)),
                };
                loop {
                    if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
                        return Some(v);
                    }
                    let mut send_failed = None;
                    while let Some(frame) = tx.next_sendable_frame() {
                        // ethercrab makes a frame whose send failed sendable again: trying it
                        // again at once would spin for ever on a link that is down (ENETDOWN).
                        // The future is dropped on return, which frees the frame.
                        let mut errno = 0;
                        let result = frame.send_blocking(|bytes| {
                            sii_mask.outgoing(bytes);
                            socket.send(bytes).map(|_| bytes.len()).map_err(|e| {
                                errno = e.raw_os_error().unwrap_or(libc::EIO);
                                ethercrab::error::Error::SendFrame
                            })?;
                            if cyclic {
                                *sent = bytes.get(FIRST_PDU_INDEX).map(|i| (*i, Instant::now()));
                            }
                            Ok(bytes.len())
                        });
                        if result.is_err() {
                            send_failed = Some(errno);
                            break;
                        }
                    }
                    if let Some(errno) = send_failed {
                        *link_error = Some(errno);
                        // A full queue may drain: bring-up waits for it; everything else (the
                        // link is down, the interface gone) fails now, with the reason kept.
                        let transient = matches!(errno, libc::ENOBUFS | libc::EAGAIN | libc::EINTR);
                        if !transient || matches!(patience, Patience::Cycle(_)) || Instant::now() >= deadline {
                            return None;
                        }
                        std::thread::sleep(Duration::from_micros(200));
                        continue;
                    }
                    // Past the deadline this still takes what has come (a zero wait): a reply
                    // already there when the thread was late to look is not given up.
                    let wait = deadline.saturating_duration_since(Instant::now()).min(slice);
                    match socket.receive(&mut buffer[..], wait) {
                        Ok(Some(n)) => {
                            sii_mask.reply(&mut buffer[..n]);
                            // A reply to a frame already given up (a late one) is refused by
                            // ethercrab; it is kept for the ledger, the link goes on.
                            if rx.receive_frame(&buffer[..n]).is_err() && *late_len < LATE_QUEUE {
                                let index = buffer.get(FIRST_PDU_INDEX).copied().unwrap_or(0);
                                late[*late_len] = (index, Instant::now());
                                *late_len += 1;
                            }
                        }
                        Ok(None) if cyclic || Instant::now() >= deadline => return None,
                        Ok(None) => {}
                        Err(e) => {
                            *link_error = Some(e.raw_os_error().unwrap_or(libc::EIO));
                            return None;
                        }
                    }
                }
            }
        }
    }
}

impl Driver {
    /// Gives the replies refused since the last call to the ledger (late, or after their
    /// frame was lost), oldest first.
    fn settle_late_replies(&mut self, ledger: &mut ReplyLedger) {
        if let Driver::Socket { late, late_len, .. } = self {
            for (index, at) in &late[..*late_len] {
                ledger.late_reply(*index, *at);
            }
            *late_len = 0;
        }
    }

    /// The cyclic frame the last exchange sent (first PDU index, when), if it went out.
    fn sent_frame(&self) -> Option<(u8, Instant)> {
        match self {
            Driver::Socket { sent, .. } => *sent,
            Driver::InProcess { .. } => None,
        }
    }

    /// The OS error that made the last exchange fail on a network interface, as
    /// "eth1: network is down (ENETDOWN)".
    fn link_error(&self) -> Option<String> {
        match self {
            Driver::Socket { interface, link_error: Some(errno), .. } => Some(format!("{interface}: {}", crate::raw_socket::os_error_text(*errno))),
            _ => None,
        }
    }

    /// What to do about the last exchange's OS error, for messages.
    fn link_error_hint(&self) -> String {
        match self {
            Driver::Socket { interface, link_error: Some(libc::ENETDOWN), .. } => format!("the interface is down: bring it up (`ip link set {interface} up`) and check the cable"),
            Driver::Socket { link_error: Some(libc::ENODEV | libc::ENXIO), .. } => "the interface is gone (an unplugged USB adapter?): see `ip link`".into(),
            _ => "check the interface (`ip link`) and the cable".into(),
        }
    }
}

/// The master with its devices in Op.
pub struct Bus {
    // Declared before the storage it borrows; dropped explicitly in `Drop`.
    maindevice: Option<MainDevice<'static>>,
    group: OpGroup,
    driver: Driver,
    config: MasterConfig,
    devices: Vec<DeviceInfo>,
    states: Vec<SubDeviceState>,
    input_ranges: Vec<Range<usize>>,
    output_ranges: Vec<Range<usize>>,
    inputs: Vec<u8>,
    outputs: Vec<u8>,
    expected_wkc: u16,
    last_wkc: u16,
    counters: BusCounters,
    ledger: ReplyLedger,
}

fn state_text(s: SubDeviceState) -> &'static str {
    match s {
        SubDeviceState::None => "not answering",
        SubDeviceState::Init => "INIT",
        SubDeviceState::PreOp => "PREOP",
        SubDeviceState::Bootstrap => "BOOT",
        SubDeviceState::SafeOp => "SAFEOP",
        SubDeviceState::Op => "OP",
        _ => "in an undefined state",
    }
}

/// IgH-style state names (`ethercat slaves`).
pub fn state_name(s: SubDeviceState) -> &'static str {
    state_text(s)
}

fn dc_text(dc: DcSupport) -> &'static str {
    match dc {
        DcSupport::Bits64 => "64 bit",
        DcSupport::Bits32 => "32 bit",
        DcSupport::RefOnly => "ref only",
        _ => "no",
    }
}

impl Bus {
    /// Discovers the devices on `link`, lets `plan` choose SDO downloads for PreOp from what
    /// was found, and brings every device to Op. Blocks (bring-up is not real-time).
    pub fn open(link: Link, config: MasterConfig, plan: impl FnOnce(&[DeviceInfo]) -> Result<PreOpPlan, String>) -> Result<Bus, BusError> {
        let what = format!("{link:?}");
        let mut plan = Some(plan);
        // A second bring-up when devices turn out not to answer CoE, with CoE hidden from
        // ethercrab for them (see `sii_coe_mask`); they are not probed again.
        let mut without_coe: Vec<u16> = Vec::new();
        loop {
            // ethercrab 0.7 panics on some malformed EEPROM contents (a category length that
            // overflows its u16 address arithmetic, found by tests/fuzz_sii.rs): a device's
            // bytes must not take the process down, so that becomes an error naming the cause.
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| Self::open_unguarded(link.clone(), config.clone(), &mut plan, &without_coe))) {
                Ok(Ok(Opened::Bus(bus))) => return Ok(*bus),
                Ok(Ok(Opened::WithoutCoe(stations))) if without_coe.is_empty() => without_coe = stations,
                Ok(Ok(Opened::WithoutCoe(_))) => return Err(BusError::BringUp(format!("EtherCAT bring-up on {what}: devices stopped answering CoE during bring-up"))),
                Ok(Err(e)) => return Err(BusError::BringUp(e)),
                Err(panic) => {
                    let why = panic.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| panic.downcast_ref::<String>().cloned()).unwrap_or_default();
                    return Err(BusError::BringUp(format!(
                        "EtherCAT bring-up on {what} failed reading a device's EEPROM (SII): its content is malformed (ethercrab: {why}); read each device's EEPROM with its vendor's tool, or take devices off the line one at a time to find it"
                    )));
                }
            }
        }
    }

    /// One bring-up. `without_coe`: configured addresses of the devices whose CoE is hidden.
    fn open_unguarded(link: Link, config: MasterConfig, plan: &mut Option<impl FnOnce(&[DeviceInfo]) -> Result<PreOpPlan, String>>, without_coe: &[u16]) -> Result<Opened, String> {
        // The frame storage lives as long as the process: ethercrab borrows it for the
        // MainDevice's lifetime, and a bus is opened a handful of times per process.
        let storage: &'static Storage = Box::leak(Box::new(Storage::new()));
        let (tx, rx, pdu_loop) = storage.try_split().map_err(|_| "ethercrab frame storage already in use".to_string())?;
        let timeouts = Timeouts {
            pdu: Duration::MAX,
            state_transition: config.bring_up_timeout,
            mailbox_response: Duration::from_secs(2),
            // ethercrab's 10 ms default fails bring-up when the thread is preempted that long
            // (a loaded machine, a VM stall) while an EEPROM read is pending.
            eeprom: Duration::from_millis(500),
            mailbox_echo: Duration::from_millis(500),
            wait_loop_delay: Duration::ZERO,
        };
        let maindevice = MainDevice::new(pdu_loop, timeouts, MainDeviceConfig { dc_static_sync_iterations: 100, ..Default::default() });
        let (mut driver, clock): (Driver, Box<dyn Fn() -> u64>) = match &link {
            Link::Simulated(segment) => {
                let seg = segment.clone();
                let mut transport = InProcessTransport::new(tx, rx, segment.clone());
                transport.set_sii_mask(SiiCoeMask::new(without_coe));
                (Driver::InProcess { transport, segment: segment.clone() }, Box::new(move || lock(&seg).time_ns()))
            }
            Link::Interface(interface) => {
                let socket = RawSocket::open(interface).map_err(|e| raw_socket_error(interface, &e))?;
                let driver = Driver::Socket {
                    interface: interface.clone(),
                    socket,
                    tx,
                    rx,
                    buffer: Box::new([0; MAX_FRAME_LEN + 4]),
                    sent: None,
                    late: Box::new([(0, Instant::now()); LATE_QUEUE]),
                    late_len: 0,
                    link_error: None,
                    sii_mask: SiiCoeMask::new(without_coe),
                };
                (driver, Box::new(monotonic_ns))
            }
        };
        let bus_driver_failed = |driver: &Driver, what: &str, e: Option<ethercrab::error::Error>| -> String {
            match (e, driver.link_error()) {
                // The link itself failed (e.g. the interface is down): that is the cause.
                (_, Some(link_error)) => format!("EtherCAT bring-up on {link:?}: {what} failed: {link_error}; {}", driver.link_error_hint()),
                (Some(e), None) => format!("EtherCAT bring-up on {link:?}: {what} failed: {e}"),
                (None, None) => format!("EtherCAT bring-up on {link:?}: {what} did not finish within {:?}: no devices answer? Check the cable / interface", config.bring_up_timeout),
            }
        };
        let deadline = Instant::now() + config.bring_up_timeout;
        let until = Patience::Until(deadline);
        let clock_ref = &clock;
        let now = move || clock_ref();
        let group = match driver.run(maindevice.init_single_group::<MAX_SUBDEVICES, MAX_PDI>(&now), until) {
            Some(Ok(g)) => g,
            Some(Err(ethercrab::error::Error::Capacity(ethercrab::error::Item::SubDevice))) => {
                return Err(format!(
                    "EtherCAT on {link:?}: {} devices on the line, but morc handles at most {MAX_SUBDEVICES} on one bus; split the line over two network interfaces, or take devices off it",
                    maindevice.num_subdevices()
                ))
            }
            Some(Err(e)) => return Err(bus_driver_failed(&driver, "discovery", Some(e))),
            None => return Err(bus_driver_failed(&driver, "discovery", None)),
        };
        if group.is_empty() {
            return Err(format!("EtherCAT on {link:?}: no devices found"));
        }
        let mut devices = Vec::new();
        for (position, sd) in group.iter(&maindevice).enumerate() {
            let id = sd.identity();
            devices.push(DeviceInfo {
                position,
                name: sd.name().to_string(),
                vendor_id: id.vendor_id,
                product_code: id.product_id,
                revision: id.revision,
                serial: id.serial,
                configured_address: sd.configured_address(),
                alias_address: sd.alias_address(),
                dc: dc_text(sd.dc_support()),
                dc_sync_capable: sd.dc_support().enhanced(),
                sync0: false,
                device_type: None,
                input_bytes: 0,
                output_bytes: 0,
                pdo_from_eeprom: false,
                eeprom_mapping: None,
            });
        }
        // The CoE device type says what a device is (a CiA 402 drive: 0x....0192). Devices
        // without a mailbox refuse at once.
        let mut not_answering_coe = Vec::new();
        for d in &mut devices {
            let sd = group.subdevice(&maindevice, d.position).map_err(|e| e.to_string())?;
            if without_coe.contains(&d.configured_address) {
                // What its EEPROM's PDOs map says what it is (0x6040/0x6041: a CiA 402 drive).
                d.pdo_from_eeprom = true;
                let info = read_sii_info(&mut driver, &sd, &maindevice, until).ok();
                d.device_type = info.as_ref().and_then(device_type_from_pdos);
                d.eeprom_mapping = info.as_ref().map(eeprom_mapping);
                log::warn!("device {} '{}': its EEPROM says CoE but its mailbox does not answer it; using the PDO description in its EEPROM (as SOEM does), no SDOs", d.position, d.name);
                continue;
            }
            // SM0 in mailbox mode (control bits 0..1 = 10b) once in PreOp: the device has one.
            let sm0_control = driver.run(sd.register_read::<u8>(reg::SM_BASE + sm::CONTROL), until);
            if !matches!(sm0_control, Some(Ok(c)) if c & 0x03 == 0x02) {
                continue;
            }
            match driver.run(sd.sdo_read::<u32>(0x1000, 0), Patience::Until(Instant::now() + Duration::from_millis(500).min(config.bring_up_timeout))) {
                Some(Ok(t)) => d.device_type = Some(t),
                // No answer at all (an abort would be one): the mailbox does not do CoE.
                Some(Err(ethercrab::error::Error::Timeout(_))) | None if driver.link_error().is_none() => {
                    // Only a device whose EEPROM promises CoE (mailbox protocols, SII word
                    // 0x001C, bit 2) gets the fallback; others just have no device type.
                    let protocols = driver.run(sd.eeprom_read::<u16>(&maindevice, sii::word::MAILBOX_PROTOCOLS), until);
                    if !matches!(protocols, Some(Ok(p)) if p & sii::protocol::COE == 0) {
                        not_answering_coe.push(d.configured_address);
                    }
                }
                _ => {}
            }
        }
        if !not_answering_coe.is_empty() {
            return Ok(Opened::WithoutCoe(not_answering_coe));
        }
        let plan = plan.take().ok_or("EtherCAT bring-up: the PreOp plan was already used")?;
        let PreOpPlan { writes, sync0 } = plan(&devices)?;
        for w in writes {
            let d = &devices[w.position];
            let sd = group.subdevice(&maindevice, w.position).map_err(|e| e.to_string())?;
            use crate::devices::SdoValue::*;
            let (index, sub) = (w.write.index, w.write.sub);
            let result = match w.write.value {
                U8(v) => driver.run(sd.sdo_write(index, sub, v), until),
                I8(v) => driver.run(sd.sdo_write(index, sub, v), until),
                U16(v) => driver.run(sd.sdo_write(index, sub, v), until),
                I16(v) => driver.run(sd.sdo_write(index, sub, v), until),
                U32(v) => driver.run(sd.sdo_write(index, sub, v), until),
                I32(v) => driver.run(sd.sdo_write(index, sub, v), until),
            };
            match result {
                Some(Ok(())) => {}
                Some(Err(e)) => return Err(format!("device {} '{}': SDO download 0x{index:04X}:{sub:02X} = {:?} refused: {e}", d.position, d.name, w.write.value)),
                None => return Err(format!("device {} '{}': SDO download 0x{index:04X}:{sub:02X} got no answer", d.position, d.name)),
            }
        }
        let sync0: Vec<usize> = sync0.into_iter().filter(|p| devices.get(*p).is_some_and(|d| d.dc_sync_capable)).collect();
        // A device refusing a state says why in its AL status code: read it, rather than wait
        // for ethercrab's state-transition timeout and report "timeout".
        let into_op_failed = |driver: &mut Driver, devices: &[DeviceInfo], e: Option<ethercrab::error::Error>| -> String {
            if driver.link_error().is_some() {
                return bus_driver_failed(driver, "PREOP → OP", e);
            }
            let states = device_states(driver, &maindevice, devices, Instant::now() + Duration::from_secs(1));
            match (states, e) {
                (Some(states), _) => format!("EtherCAT bring-up on {link:?}: PREOP → OP failed: {states}"),
                (None, e) => bus_driver_failed(driver, "PREOP → OP", e),
            }
        };
        let group = match config.sync0_period {
            Some(period) if !sync0.is_empty() => {
                let mut group = group;
                for (position, mut sd) in group.iter_mut(&maindevice).enumerate() {
                    if sync0.contains(&position) {
                        sd.set_dc_sync(DcSync::Sync0);
                    }
                }
                // FMMUs first: configure_dc_sync leaves them as they are.
                let group = match driver.run(watch_al_errors(&maindevice, group.into_pre_op_pdi(&maindevice)), until) {
                    Some(Transition::Done(Ok(g))) => g,
                    Some(Transition::Done(Err(e))) => return Err(bus_driver_failed(&driver, "process data configuration", Some(e))),
                    Some(Transition::Refused) => return Err(into_op_failed(&mut driver, &devices, None)),
                    None => return Err(bus_driver_failed(&driver, "process data configuration", None)),
                };
                let dc = DcConfiguration { start_delay: SYNC0_START_DELAY, sync0_period: period, sync0_shift: Duration::ZERO };
                let group = match driver.run(group.configure_dc_sync(&maindevice, dc), until) {
                    Some(Ok(g)) => g,
                    Some(Err(e)) => return Err(format!("EtherCAT bring-up on {link:?}: configuring distributed clocks (SYNC0 every {period:?}) failed: {e}")),
                    None => return Err(bus_driver_failed(&driver, "distributed clock configuration", None)),
                };
                for p in &sync0 {
                    devices[*p].sync0 = true;
                }
                match driver.run(watch_al_errors(&maindevice, group.into_op(&maindevice)), until) {
                    Some(Transition::Done(Ok(g))) => OpGroup::Dc(g),
                    Some(Transition::Done(Err(e))) => return Err(into_op_failed(&mut driver, &devices, Some(e))),
                    Some(Transition::Refused) | None => return Err(into_op_failed(&mut driver, &devices, None)),
                }
            }
            _ => match driver.run(watch_al_errors(&maindevice, group.into_op(&maindevice)), until) {
                Some(Transition::Done(Ok(g))) => OpGroup::Plain(g),
                Some(Transition::Done(Err(e))) => return Err(into_op_failed(&mut driver, &devices, Some(e))),
                Some(Transition::Refused) | None => return Err(into_op_failed(&mut driver, &devices, None)),
            },
        };
        let mut input_ranges = Vec::new();
        let mut output_ranges = Vec::new();
        let (mut n_in, mut n_out) = (0, 0);
        let mut expected_wkc = 0u16;
        let sizes: Vec<(usize, usize)> = with_group!(&group, g => g.iter(&maindevice).map(|sd| (sd.io_raw().inputs().len(), sd.io_raw().outputs().len())).collect());
        for (d, (input_bytes, output_bytes)) in devices.iter_mut().zip(sizes) {
            d.input_bytes = input_bytes;
            d.output_bytes = output_bytes;
            input_ranges.push(n_in..n_in + d.input_bytes);
            output_ranges.push(n_out..n_out + d.output_bytes);
            n_in += d.input_bytes;
            n_out += d.output_bytes;
            // LRW: a device reading its outputs counts 2, writing its inputs 1 (ETG.1000.4).
            expected_wkc += if d.output_bytes > 0 { 2 } else { 0 } + if d.input_bytes > 0 { 1 } else { 0 };
        }
        let n = devices.len();
        let mut bus = Bus {
            maindevice: Some(maindevice),
            group,
            driver,
            config,
            devices,
            states: vec![SubDeviceState::Op; n],
            input_ranges,
            output_ranges,
            inputs: vec![0; n_in],
            outputs: vec![0; n_out],
            expected_wkc,
            last_wkc: 0,
            counters: BusCounters::default(),
            ledger: ReplyLedger::new(Instant::now()),
        };
        // Reserve the states' room so that copying them in the cycle never allocates.
        bus.states.reserve(MAX_SUBDEVICES);
        Ok(Opened::Bus(Box::new(bus)))
    }

    /// The devices found, in line order.
    pub fn devices(&self) -> &[DeviceInfo] {
        &self.devices
    }
    /// AL states from the last cycle that got a reply.
    pub fn states(&self) -> &[SubDeviceState] {
        &self.states
    }
    /// Cycle counts since bring-up.
    pub fn counters(&self) -> BusCounters {
        self.counters
    }
    /// Working counter a cycle's frame returns with every device in Op.
    pub fn expected_working_counter(&self) -> u16 {
        self.expected_wkc
    }
    /// Working counter of the last reply.
    pub fn last_working_counter(&self) -> u16 {
        self.last_wkc
    }
    /// The settings the bus was opened with.
    pub fn config(&self) -> &MasterConfig {
        &self.config
    }
    /// How long a cycle waits for its frame over a network interface (e.g. just under the
    /// cycle time).
    pub fn set_receive_timeout(&mut self, timeout: Duration) {
        self.config.receive_timeout = timeout;
    }
    /// The simulated segment behind an in-process link.
    pub fn segment(&self) -> Option<&SharedSegment> {
        match &self.driver {
            Driver::InProcess { segment, .. } => Some(segment),
            Driver::Socket { .. } => None,
        }
    }
    /// Replies that came after their frame was already counted lost (or matched no frame
    /// sent on the cyclic path).
    pub fn replies_after_loss(&self) -> u64 {
        self.ledger.replies_after_loss
    }
    /// Consecutive frames (in sending order) without reply within the reply timeout, up to the
    /// latest one decided; 0 once a later frame got its reply. The bus base faults on it.
    pub fn frames_without_reply(&self) -> u32 {
        self.ledger.lost_in_a_row()
    }
    /// Forgets the run of frames without reply (a fault reset starts a new count).
    pub fn clear_frames_without_reply(&mut self) {
        self.ledger.clear_run();
    }
    /// Sets the reply timeout (see [`MasterConfig::reply_timeout`]).
    pub fn set_reply_timeout(&mut self, timeout: Duration) {
        self.config.reply_timeout = timeout;
    }
    /// What was seen of the replies, for the fault of `lost` frames in a row without reply:
    /// "3 frames in a row without reply (lost: none came within 2 ms of its sending) on eth1;
    /// 12 replies came late in the last second (1.1–3.0 ms after their frame, …)" and what to
    /// do. Allocates: for fault messages only.
    pub fn loss_report(&self, lost: u32) -> String {
        if let Some(e) = self.link_error() {
            // The OS refused the frames (the interface went down): that is the cause.
            return format!("{lost} frames in a row without reply (lost): {e}, then reset faults");
        }
        let Some(interface) = self.interface() else {
            return format!(
                "{lost} frames in a row without reply (lost) on the simulated segment: link down or the first device does not answer; check the cable and the devices' power, then reset faults"
            );
        };
        let ms = |d: Duration| format!("{:.1}", d.as_secs_f64() * 1e3);
        let timeout = ms(self.config.reply_timeout);
        let late = self.ledger.late_in_last_second(Instant::now());
        let seen = if late.count > 0 {
            format!(
                "{} replies came late in the last second ({}–{} ms after their frame; counted, not lost): the line answers, but slowly — a loaded or descheduled peer, or the NIC's interrupt moderation (`ethtool -C {interface} rx-usecs 0`); if this line is like that, raise the master's reply timeout (MasterConfig::reply_timeout)",
                late.count,
                ms(late.shortest),
                ms(late.longest)
            )
        } else {
            "no reply came late either: link down or the first device does not answer; check the cable and the devices' power".to_string()
        };
        format!("{lost} frames in a row without reply (lost: none came within {timeout} ms of its sending) on {interface}; {seen}; then reset faults")
    }
    /// Why the last exchange failed on the network interface, if the OS said so, with what
    /// to do: "eth1: network is down (ENETDOWN); the interface is down: …". Allocates: for
    /// fault messages only.
    pub fn link_error(&self) -> Option<String> {
        self.driver.link_error().map(|e| format!("{e}; {}", self.driver.link_error_hint()))
    }
    /// The network interface the bus runs on; `None` for an in-process segment.
    pub fn interface(&self) -> Option<&str> {
        match &self.driver {
            Driver::InProcess { .. } => None,
            Driver::Socket { interface, .. } => Some(interface),
        }
    }

    /// This device's inputs as last received.
    pub fn inputs(&self, position: usize) -> &[u8] {
        self.input_ranges.get(position).and_then(|r| self.inputs.get(r.clone())).unwrap_or(&[])
    }
    /// This device's outputs, sent at the next cycle.
    pub(crate) fn outputs_mut(&mut self, position: usize) -> &mut [u8] {
        match self.output_ranges.get(position) {
            Some(r) => &mut self.outputs[r.clone()],
            None => &mut [],
        }
    }

    /// One process-data exchange. Real-time path: no allocation; with the in-process link no
    /// system call either.
    pub fn cycle(&mut self) -> CycleStatus {
        self.counters.cycles += 1;
        let Some(md) = self.maindevice.as_ref() else { return CycleStatus::Error };
        with_group!(&self.group, g => {
            for (sd, range) in g.iter(md).zip(&self.output_ranges) {
                sd.outputs_raw_mut().copy_from_slice(&self.outputs[range.clone()]);
            }
        });
        let seq = self.ledger.next_frame();
        // The cycle waits at most the reply timeout: past it the frame is lost anyway.
        let patience = Patience::Cycle(self.config.receive_timeout.min(self.config.reply_timeout));
        // With DC, the exchange also carries the reference clock's system time to the others
        // (FRMW), which keeps their clocks in step.
        let exchanged = match &self.group {
            OpGroup::Plain(g) => self.driver.run(g.tx_rx(md), patience).map(|r| r.map(|r| (r.working_counter, r.subdevice_states))),
            OpGroup::Dc(g) => self.driver.run(g.tx_rx_dc(md), patience).map(|r| r.map(|r| (r.working_counter, r.subdevice_states))),
        };
        let now = Instant::now();
        self.driver.settle_late_replies(&mut self.ledger);
        let status = match &exchanged {
            Some(Ok(_)) => {
                self.ledger.replied(seq);
                None
            }
            Some(Err(_)) => {
                self.counters.errors += 1;
                self.ledger.no_reply_possible(seq, now);
                Some(CycleStatus::Error)
            }
            // Sent and not answered yet: in flight until the reply timeout.
            None => match self.driver.sent_frame() {
                Some((index, sent)) => {
                    self.ledger.gave_up(seq, index, sent);
                    Some(CycleStatus::Late)
                }
                None => {
                    self.ledger.no_reply_possible(seq, now);
                    Some(CycleStatus::Lost)
                }
            },
        };
        self.ledger.expire(now, self.config.reply_timeout);
        self.counters.lost_frames = self.ledger.lost;
        self.counters.late_replies = self.ledger.late_replies;
        let (working_counter, subdevice_states) = match (exchanged, status) {
            (Some(Ok(r)), _) => r,
            (_, status) => return status.unwrap_or(CycleStatus::Error),
        };
        self.last_wkc = working_counter;
        for (s, r) in self.states.iter_mut().zip(subdevice_states.iter()) {
            *s = *r;
        }
        with_group!(&self.group, g => {
            for (sd, range) in g.iter(md).zip(&self.input_ranges) {
                self.inputs[range.clone()].copy_from_slice(&sd.inputs_raw());
            }
        });
        if self.states.iter().any(|s| *s != SubDeviceState::Op) {
            self.counters.not_op += 1;
            return CycleStatus::NotOp;
        }
        if working_counter != self.expected_wkc {
            self.counters.working_counter_errors += 1;
            return CycleStatus::WorkingCounter { got: working_counter, expected: self.expected_wkc };
        }
        CycleStatus::Ok
    }

    /// Steps the simulated devices' dynamics by `dt_ns` of virtual time (in-process link only).
    pub(crate) fn advance_segment(&mut self, dt_ns: u64) {
        if let Driver::InProcess { segment, .. } = &self.driver {
            lock(segment).advance(dt_ns);
        }
    }

    /// The devices that are not in Op, as "device 2 'EL2004' (SAFEOP)" — for fault messages.
    pub(crate) fn devices_not_in_op(&self) -> String {
        let mut s = String::new();
        for (d, st) in self.devices.iter().zip(&self.states) {
            if *st != SubDeviceState::Op {
                if !s.is_empty() {
                    s.push_str(", ");
                }
                s.push_str(&format!("device {} '{}' ({})", d.position, d.name, state_text(*st)));
            }
        }
        s
    }

    /// Fault recovery, off the steady state: reads each device's AL status and status code and
    /// requests Op again (with error acknowledge) from devices that left it. Returns what it
    /// found, or why a device cannot be brought back.
    pub fn recover(&mut self) -> Result<String, BusError> {
        let Some(md) = self.maindevice.as_ref() else { return Err(BusError::Closed) };
        let deadline = Instant::now() + self.config.bring_up_timeout;
        let mut report = String::new();
        for (position, d) in self.devices.iter().enumerate() {
            let driver = &mut self.driver;
            let found = with_group!(&self.group, g => match g.subdevice(md, position) {
                Ok(sd) => recover_device(driver, &sd, d, deadline),
                Err(e) => Err(e.to_string()),
            })
            .map_err(BusError::Device)?;
            if let Some(what) = found {
                report.push_str(&what);
            }
        }
        Ok(report)
    }

    /// Asks every device for PRE-OP (outputs no longer valid: drives stop, output terminals
    /// go to their safe values; mailboxes stay usable) and waits until all are there, at
    /// most `timeout`. What a master does when it lets go of the line.
    pub fn to_pre_op(&mut self, timeout: Duration) -> Result<(), BusError> {
        let Some(md) = self.maindevice.as_ref() else { return Ok(()) };
        let fail = |m: String| Err(BusError::Device(m));
        let until = Patience::Until(Instant::now() + timeout);
        match self.driver.run(ethercrab::Command::bwr(reg::AL_CONTROL).ignore_wkc().send(md, u16::from(AlState::PreOp.bits())), until) {
            Some(Ok(())) => {}
            Some(Err(e)) => return fail(format!("requesting PREOP: {e}")),
            None => return fail(format!("requesting PREOP: no answer{}", self.link_error().map(|e| format!(" ({e})")).unwrap_or_default())),
        }
        loop {
            // BRD ORs every device's AL status: exactly PREOP once all are there.
            match self.driver.run(ethercrab::Command::brd(reg::AL_STATUS).ignore_wkc().receive::<u16>(md), until) {
                Some(Ok(status)) if status & u16::from(al::STATE_MASK | al::ERROR) == u16::from(AlState::PreOp.bits()) => return Ok(()),
                Some(Ok(_)) => {}
                Some(Err(e)) => return fail(format!("waiting for PREOP: {e}")),
                None => return fail(format!("devices not in PREOP within {timeout:?}: {}", self.devices_not_in_op())),
            }
        }
    }

    /// An SDO upload of a u32, off the real-time path (e.g. a sensor's calibration, once
    /// after bring-up).
    pub fn sdo_read_u32(&mut self, position: usize, index: u16, sub: u8) -> Result<u32, BusError> {
        self.sdo_read(position, index, sub)
    }

    /// An SDO upload of a u16, off the real-time path (a setting read back).
    pub fn sdo_read_u16(&mut self, position: usize, index: u16, sub: u8) -> Result<u16, BusError> {
        self.sdo_read(position, index, sub)
    }

    /// An SDO upload of an object of `T`'s width, off the real-time path.
    pub(crate) fn sdo_read<T: ethercrab::EtherCrabWireReadSized>(&mut self, position: usize, index: u16, sub: u8) -> Result<T, BusError> {
        let Some(md) = self.maindevice.as_ref() else { return Err(BusError::Closed) };
        let name = self.devices.get(position).map(|d| format!("device {position} '{}'", d.name)).unwrap_or_else(|| format!("device {position}"));
        let until = Patience::Until(Instant::now() + self.config.bring_up_timeout);
        let driver = &mut self.driver;
        let read = with_group!(&self.group, g => match g.subdevice(md, position) {
            Ok(sd) => driver.run(sd.sdo_read::<T>(index, sub), until),
            Err(e) => Some(Err(e)),
        });
        match read {
            Some(Ok(v)) => Ok(v),
            Some(Err(e)) => Err(BusError::Sdo { position, index, sub, message: format!("{name}: SDO upload 0x{index:04X}:{sub:02X} refused: {e}") }),
            None => Err(BusError::Sdo { position, index, sub, message: format!("{name}: SDO upload 0x{index:04X}:{sub:02X} got no answer") }),
        }
    }

    /// The device's EEPROM (SII) read whole and decoded, off the real-time path: what its PDOs
    /// are called and how they map, for a device morc has no class for.
    pub(crate) fn read_sii(&mut self, position: usize) -> Result<morc_ecat_sim::SiiInfo, BusError> {
        let Some(md) = self.maindevice.as_ref() else { return Err(BusError::Closed) };
        let name = self.devices.get(position).map(|d| format!("device {position} '{}'", d.name)).unwrap_or_else(|| format!("device {position}"));
        let until = Patience::Until(Instant::now() + self.config.bring_up_timeout);
        let driver = &mut self.driver;
        let info = with_group!(&self.group, g => match g.subdevice(md, position) {
            Ok(sd) => read_sii_info(driver, &sd, md, until),
            Err(e) => Err(e.to_string()),
        });
        info.map_err(|e| BusError::Device(format!("{name}: reading its EEPROM (SII) failed: {e}")))
    }
}

/// Brings one device back to Op if it left it: `Some(what it found)`, `None` if it was in Op.
fn recover_device<S>(driver: &mut Driver, sd: &ethercrab::SubDeviceRef<'_, S>, d: &DeviceInfo, deadline: Instant) -> Result<Option<String>, String> {
    let (position, name) = (d.position, &d.name);
    let status = match driver.run(sd.status(), Patience::Until(deadline)) {
        Some(Ok(s)) => s,
        Some(Err(e)) => return Err(format!("device {position} '{name}': cannot read its AL status: {e}; check the cable and its power")),
        None => return Err(format!("device {position} '{name}' does not answer; check the cable and its power")),
    };
    if status.0 == SubDeviceState::Op {
        return Ok(None);
    }
    let found = format!("device {position} '{name}' was in {} ({}); ", state_text(status.0), status.1);
    // SafeOp with the error acknowledged (AL control: state | error bit), then Op.
    let safe_op_acknowledged = u16::from(AlState::SafeOp.bits() | al::ERROR);
    for (value, target) in [(safe_op_acknowledged, SubDeviceState::SafeOp), (u16::from(AlState::Op.bits()), SubDeviceState::Op)] {
        match driver.run(sd.register_write(reg::AL_CONTROL, value), Patience::Until(deadline)) {
            Some(Ok(_)) => {}
            _ => return Err(format!("device {position} '{name}': cannot request {}", state_text(target))),
        }
    }
    loop {
        match driver.run(sd.status(), Patience::Until(deadline)) {
            Some(Ok((SubDeviceState::Op, _))) => return Ok(Some(found)),
            Some(Ok((s, code))) if Instant::now() > deadline => return Err(format!("device {position} '{name}' stays in {} ({code})", state_text(s))),
            Some(Ok(_)) => continue,
            _ => return Err(format!("device {position} '{name}' does not answer")),
        }
    }
}

/// How one bring-up attempt ended.
enum Opened {
    Bus(Box<Bus>),
    /// These devices (configured addresses) do not answer CoE: bring up again without it.
    WithoutCoe(Vec<u16>),
}

/// Largest EEPROM read whole (for a device's PDO description): 32 kbit.
const MAX_EEPROM_BYTES: usize = 4096;

/// A device's EEPROM read whole (at most [`MAX_EEPROM_BYTES`]) and decoded.
fn read_sii_info(driver: &mut Driver, sd: &ethercrab::SubDevice, md: &MainDevice<'_>, until: Patience) -> Result<morc_ecat_sim::SiiInfo, String> {
    let size = match driver.run(sd.eeprom_size(md), until) {
        Some(Ok(size)) => size.min(MAX_EEPROM_BYTES),
        Some(Err(e)) => return Err(e.to_string()),
        None => return Err("no answer".into()),
    };
    let mut image = vec![0u8; size];
    match driver.run(sd.eeprom_read_raw(md, 0, &mut image), until) {
        Some(Ok(_)) => {}
        Some(Err(e)) => return Err(e.to_string()),
        None => return Err("no answer".into()),
    }
    let image = morc_ecat_sim::SiiImage::from_raw(image).map_err(|e| e.to_string())?;
    image.parse().map_err(|e| e.to_string())
}

/// A CiA 402 device type (servo drive) if the EEPROM's PDOs map the controlword or
/// statusword (0x6040 / 0x6041), as the CoE object 0x1000 would say.
/// The entries of the PDOs an EEPROM assigns to a SyncManager (those a master maps from it),
/// RxPDOs then TxPDOs.
fn eeprom_mapping(info: &morc_ecat_sim::SiiInfo) -> (Vec<u32>, Vec<u32>) {
    let entries = |pdos: &[sii::Pdo]| -> Vec<u32> {
        pdos.iter()
            .filter(|p| usize::from(p.sync_manager) < info.sync_managers.len())
            .flat_map(|p| &p.entries)
            .map(|e| morc_ecat_wire::cia402::pdo::entry(e.index, e.sub_index, e.bit_len))
            .collect()
    };
    (entries(&info.rx_pdos), entries(&info.tx_pdos))
}

fn device_type_from_pdos(info: &morc_ecat_sim::SiiInfo) -> Option<u32> {
    let cia402 = info.rx_pdos.iter().chain(&info.tx_pdos).flat_map(|p| &p.entries).any(|e| matches!(e.index, 0x6040 | 0x6041));
    cia402.then_some(0x0002_0192)
}

/// How a watched state transition ended.
enum Transition<G> {
    /// ethercrab finished it (or failed it).
    Done(Result<G, ethercrab::error::Error>),
    /// A device set the AL error indication: it refused the state it was asked for.
    Refused,
}

/// Runs `transition` while watching every device's AL status (BRD 0x0130, ORed over the
/// line): a device that refuses sets the error indication at once, where ethercrab would
/// wait out its whole state-transition timeout and then say only "timeout".
async fn watch_al_errors<G>(md: &MainDevice<'_>, transition: impl Future<Output = Result<G, ethercrab::error::Error>>) -> Transition<G> {
    let watch = async {
        loop {
            if let Ok(status) = ethercrab::Command::brd(reg::AL_STATUS).ignore_wkc().receive::<u16>(md).await {
                if status & u16::from(al::ERROR) != 0 {
                    return Transition::Refused;
                }
            }
            pause(Duration::from_millis(2)).await;
        }
    };
    futures_lite::future::or(async { Transition::Done(transition.await) }, watch).await
}

/// Pending until `d` has passed (the drivers re-poll on their own; no timer needed).
async fn pause(d: Duration) {
    let until = Instant::now() + d;
    std::future::poll_fn(|_| if Instant::now() >= until { Poll::Ready(()) } else { Poll::Pending }).await
}

/// AL state bits (0x0130 / 0x0120, bits 0..3) in IgH's words.
fn state_bits_text(bits: u16) -> &'static str {
    AlState::from_bits(bits as u8).map_or("an undefined state", AlState::name)
}

/// An AL status code (0x0134, ETG.1000.6 Table 11) with its meaning: "0x001E (invalid input
/// configuration)".
pub(crate) fn al_status_code_text(code: u16) -> String {
    use ethercrab::EtherCrabWireRead;
    match ethercrab::AlStatusCode::unpack_from_slice(&code.to_le_bytes()) {
        // ethercrab's text is "0x001e: Invalid Input Configuration".
        Ok(known) => {
            let text = known.to_string();
            let words = text.split_once(": ").map(|(_, w)| w).unwrap_or(&text).to_lowercase();
            format!("0x{code:04X} ({words})")
        }
        Err(_) if code >= 0x8000 => format!("0x{code:04X} (vendor specific: see the device's manual)"),
        Err(_) => format!("0x{code:04X} (not a code ETG.1000.6 defines)"),
    }
}

/// What each device that is not where it was asked to be says about it: its AL status, the
/// state it was asked for (AL control) and the AL status code. `None` if every device is
/// where it was asked to be (the cause lies elsewhere).
fn device_states(driver: &mut Driver, md: &MainDevice<'_>, devices: &[DeviceInfo], deadline: Instant) -> Option<String> {
    let mut found = Vec::new();
    for d in devices {
        let read = |register: u16| ethercrab::Command::fprd(d.configured_address, register).receive::<u16>(md);
        let (status, control, code) = match (
            driver.run(read(reg::AL_STATUS), Patience::Until(deadline)),
            driver.run(read(reg::AL_CONTROL), Patience::Until(deadline)),
            driver.run(read(reg::AL_STATUS_CODE), Patience::Until(deadline)),
        ) {
            (Some(Ok(s)), Some(Ok(c)), Some(Ok(code))) => (s, c, code),
            _ => {
                found.push(format!("device {} '{}' does not answer (check its power and the cable before it)", d.position, d.name));
                continue;
            }
        };
        let (now, asked) = (state_bits_text(status), state_bits_text(control));
        if status & u16::from(al::ERROR) != 0 {
            found.push(format!("device {} '{}' refused {asked}: AL status code {}; it stays in {now}{}", d.position, d.name, al_status_code_text(code), al_code_hint(code)));
        } else if status & 0x0F != control & 0x0F {
            found.push(format!("device {} '{}' is still in {now} (asked for {asked}), AL status code {}", d.position, d.name, al_status_code_text(code)));
        }
    }
    (!found.is_empty()).then(|| found.join("; "))
}

/// What to look at for the AL status codes a configuration causes.
fn al_code_hint(code: u16) -> &'static str {
    match code {
        al_code::INVALID_MAILBOX_CONFIG | al_code::INVALID_SM_CONFIG | al_code::INVALID_OUTPUT_CONFIG | al_code::INVALID_INPUT_CONFIG => {
            " (the process-data or sync manager setup from its EEPROM does not fit the device: check its EEPROM/ESI, e.g. a sync manager marked virtual, or configure its class)"
        }
        al_code::SYNC_ERROR | al_code::DC_SYNC0_CYCLE_TIME | al_code::INVALID_DC_SYNC_CONFIG | al_code::DC_PLL_ERROR => " (distributed clocks: check its SYNC0 settings and the cycle time)",
        _ => "",
    }
}

fn raw_socket_error(interface: &str, e: &std::io::Error) -> String {
    let why = match e.raw_os_error() {
        Some(libc::EPERM) | Some(libc::EACCES) => "opening a raw socket needs root or CAP_NET_RAW (setcap cap_net_raw+ep on the morc binary)".to_string(),
        Some(libc::ENODEV) | Some(libc::ENXIO) => "no such network interface (see `ip link`)".to_string(),
        _ => e.to_string(),
    };
    format!("cannot open EtherCAT on interface '{interface}': {why}")
}

impl Drop for Bus {
    fn drop(&mut self) {
        // Devices left in OP would go on acting on the last outputs until their watchdogs
        // trip; bounded, so a dead link does not hold up the exit.
        if let Err(e) = self.to_pre_op(Duration::from_millis(500)) {
            log::warn!("EtherCAT: leaving the bus: {e}");
        }
        if let Some(md) = self.maindevice.take() {
            // SAFETY: the group is not used with this MainDevice again (we are dropping it).
            let _ = unsafe { md.release_all() };
        }
    }
}

fn monotonic_ns() -> u64 {
    morc_kernel::monotonic_ns()
}
