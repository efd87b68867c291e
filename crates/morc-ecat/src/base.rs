//! The bus as the engine's base: each tick `sense` exchanges process data once (and steps a
//! simulated segment by the base period), checks the working counter, the devices' states and
//! the safety PLC, and writes measurements; `actuate` turns commands (or hold) into the
//! devices' outputs, sent at the next tick's exchange.
//!
//! Ports (devices in line order, `p` = position on the line):
//! - outputs: `q` (rad), `qd` (rad/s), `tau` (N·m) per drive — a real for one drive, a vector
//!   for several —, `enabled` (all drives in Operation enabled), `din<p>` (integer, bit 0 =
//!   channel 1) per digital input terminal, `ain<p>` (V or mA per channel) per analog input
//!   terminal, `ft<p>` (Fx Fy Fz in N, Tx Ty Tz in N·m) per force/torque sensor, `safety<p>`
//!   (integer: the safety PLC's status bits) per safety PLC, `enc<p>` (rad) per incremental
//!   encoder terminal;
//! - inputs: `q_cmd` for drives in CSP, `qd_cmd` in CSV, `tau_cmd` in CST (each a real or a
//!   vector over the drives in that mode, in port order: line order, or [`BusConfig::drive_order`]), `dout<p>` (integer) per digital
//!   output terminal, `aout<p>` (V or mA per channel) per analog output terminal, and last
//!   `tau_ff` (N·m per drive): feed-forward torque, sent as each drive's torque offset (0x60B2).
//!
//! Faults: a drive fault, a device leaving Op, the safety PLC inhibiting motion, an F/T
//! sensor error or an encoder terminal's fault (invalid inputs, open circuit) fault at once;
//! lost frames (no reply within the master's reply timeout: a late reply is not a lost one)
//! and wrong working counters once they persist for `max_bad_cycles` frames or cycles in a
//! row. The fault is latched (drives quick-stop) until [`BusBase::reset_faults`] (or a
//! [`BusHandle`]) asks for recovery. The message is made once, when the fault is found; an
//! idle faulted base cycles without allocating.

mod handle;
mod ports;

pub use handle::{BusHandle, BusStatus, DeviceStatus};

use crate::devices::read_real;
use crate::devices::{
    classify, classify_identity, force_torque, known_channels, AnalogInputs, AnalogOutputs, Cia402Drive, DeviceClass, DeviceClassChoice, DeviceName, DigitalInputs, DigitalOutputs, DriveConfig,
    ForceTorqueSensor, FtScaling, GenericDevice, PdoLayout, SafetyPlc,
};
use crate::master::{Bus, CycleStatus, DeviceInfo, Link, MasterConfig, PreOpPlan, PreOpWrite};
use crate::BusError;
use handle::BusShared;
use morc_kernel::Value;
use morc_kernel::{Base, Commands, Standstill};
use morc_kernel::{ComponentInfo, Step, ValueType};
use ports::{mode_slot, Ports};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// How the bus base is set up.
#[derive(Debug, Clone)]
pub struct BusConfig {
    /// Base period (s): the bus cycle, and the step of a simulated segment.
    pub period: f64,
    /// Scaling and mode of every drive found, unless `drive_overrides` names its position.
    pub drive: DriveConfig,
    /// Drive settings by position on the line, in place of `drive` for those drives.
    pub drive_overrides: Vec<(usize, DriveConfig)>,
    /// The drives' positions in the order their ports list them (a robot's joint order,
    /// whatever the wiring's); each must be a drive on the line, and drives it does not list
    /// follow in line order. `None`: line order.
    pub drive_order: Option<Vec<usize>>,
    /// Class overrides by position (e.g. a device whose identity says nothing useful).
    pub class_overrides: Vec<(usize, DeviceClassChoice)>,
    /// Class overrides by identity (vendor id, product code): the one device on the line with
    /// it, wherever it sits; none or several is an error when the bus comes up.
    pub class_by_identity: Vec<((u32, u32), DeviceClassChoice)>,
    /// Classes written outside morc (a lab's own), each for every device with its identity.
    pub classes: Vec<crate::devices::LabClass>,
    /// A fault when this many frames in a row get no reply within the master's reply timeout
    /// ([`MasterConfig::reply_timeout`]), or this many cycles in a row bring a wrong working
    /// counter.
    pub max_bad_cycles: u32,
    /// Switch the drives on at start (holding where they are).
    pub enable_drives: bool,
    /// Run the drives that can DC-synchronous: SYNC0 every period.
    pub distributed_clocks: bool,
    /// Master settings: bring-up, receive and reply timeouts, SYNC0 period.
    pub master: MasterConfig,
    /// A device whose class refuses it (a process-data mapping it cannot work with…) fails
    /// the bring-up, unless this is set: then it takes part passively and
    /// [`BusBase::refusal`] says why (what `morc bus scan` does, to list every device).
    pub keep_refused: bool,
}

impl Default for BusConfig {
    fn default() -> Self {
        Self {
            period: 0.001,
            drive: DriveConfig::default(),
            drive_overrides: Vec::new(),
            drive_order: None,
            class_overrides: Vec::new(),
            class_by_identity: Vec::new(),
            classes: Vec::new(),
            max_bad_cycles: 3,
            enable_drives: true,
            distributed_clocks: true,
            master: MasterConfig::default(),
            keep_refused: false,
        }
    }
}

/// Base periods a drive's measurement lags the commands beyond a directly stepped plant
/// ([`Base::latency`]): the commands of tick n go out with the frame of tick n+1 (one), and
/// that frame reads what the devices latched in their last cycle, before applying them (one
/// more), so they show at tick n+3 where a direct plant shows them at n+1.
pub const BUS_LATENCY_CYCLES: u32 = 2;

/// The longest reply timeout (s) a bus of this period takes.
fn period_limit(period: f64) -> f64 {
    crate::master::MAX_REPLY_TIMEOUT_CYCLES as f64 * period
}

/// Cycles a fault reset waits for the safety PLC to re-arm.
const REARM_CYCLES: u32 = 20;

pub(crate) struct DriveSlot {
    pub position: usize,
    pub class: Cia402Drive,
    /// Index into the command vector of its mode.
    pub command_index: usize,
}

/// A device other than a drive, at its line position, with where its ports start.
pub(crate) struct Slot {
    pub position: usize,
    pub class: Box<dyn DeviceClass>,
    /// Its first output port (measurements) and how many it has.
    pub outputs: std::ops::Range<usize>,
    /// Its first input port (commands).
    pub first_input: usize,
}

/// The device classes on the line: the drives (the robot's joints, whose ports the base lays
/// out together) and every other device, each through its [`DeviceClass`].
#[derive(Default)]
pub(crate) struct Devices {
    pub drives: Vec<DriveSlot>,
    pub others: Vec<Slot>,
    /// Devices whose class refused them, and why (with [`BusConfig::keep_refused`]).
    pub refused: Vec<(usize, String)>,
}

impl Devices {
    /// The `i`-th device of class `C` (in line order), for typed access.
    fn nth<C: DeviceClass>(&self, i: usize) -> Option<&C> {
        self.others.iter().filter_map(|s| (s.class.as_ref() as &dyn std::any::Any).downcast_ref::<C>()).nth(i)
    }
}

/// The EtherCAT bus with its drives and terminals, as the engine's base ("robot").
pub struct BusBase {
    bus: Bus,
    info: ComponentInfo,
    config: BusConfig,
    period_ns: u64,
    devices: Devices,
    ports: Ports,
    /// Consecutive cycles without fresh inputs (no reply yet, or a wrong one).
    bad_cycles: u32,
    /// Consecutive cycles whose reply had a wrong working counter.
    wrong_counters: u32,
    /// The latched fault, until reset.
    fault: Option<String>,
    /// The engine has not been told of the latched fault yet.
    fault_unreported: bool,
    /// The last `actuate` had commands: an assembly is trying to move the robot.
    commanded: bool,
    shared: Arc<BusShared>,
    /// Whether the drives have stood still for the last few cycles, drive by drive.
    standstill: Standstill,
    /// The robot's rule for a swapped-in assembly's first position commands ([`TakeoverCheck`]).
    takeover_check: Option<TakeoverCheck>,
    /// The last two position commands (q_cmd) that went out, newest first, and how many did.
    last_positions: [Vec<f64>; 2],
    positions_seen: u8,
}

/// The robot's rule for the first position commands of an assembly swapped in on a running
/// arm (`morc_robot::Robot::command_past_limits`): given the command before the last (when
/// known), the last and the next (rad or m, one per joint), what the next would do past a
/// joint's velocity or acceleration limit.
pub type TakeoverCheck = Box<dyn Fn(Option<&[f64]>, &[f64], &[f64]) -> Option<String> + Send>;

/// The class for the device `d`: a configured override, its identity, a CiA 402 device type
/// (drives are known before Op: they need SDOs), else its process-data shape (after Op).
fn choose_class(config: &BusConfig, d: &DeviceInfo, after_op: bool) -> Option<DeviceClassChoice> {
    if let Some((_, c)) = config.class_overrides.iter().find(|(p, _)| *p == d.position) {
        return Some(c.clone());
    }
    if let Some((_, c)) = config.class_by_identity.iter().find(|(id, _)| *id == (d.vendor_id, d.product_code)) {
        return Some(c.clone());
    }
    if let Some(lab) = config.classes.iter().find(|c| c.identity == (d.vendor_id, d.product_code)) {
        return Some(DeviceClassChoice::Lab(lab.clone()));
    }
    if let Some(c) = classify_identity(d.vendor_id, d.product_code) {
        return Some(c);
    }
    let drive = config.drive_overrides.iter().find(|(p, _)| *p == d.position).map(|(_, c)| c.clone()).unwrap_or_else(|| config.drive.clone());
    match classify(d.device_type, d.input_bytes, d.output_bytes, &drive) {
        c @ DeviceClassChoice::Drive(_) => Some(c),
        c if after_op => Some(c),
        _ => None,
    }
}

impl BusBase {
    /// Says what the bus drives (the robot's name), for recordings and messages.
    pub fn set_description(&mut self, description: &str) {
        self.info.description = description.to_string();
    }

    /// Each drive's standstill speed (line order, its joint's unit per second; see
    /// [`morc_kernel::standstill_speed`]), from the robot's joints: what [`Base::is_still`]
    /// compares the drives' measured velocities with after a fault or Ctrl-C.
    pub fn set_standstill(&mut self, speeds: Vec<f64>) {
        self.standstill = Standstill::new(speeds, self.config.period);
    }

    /// The robot's rule for a swapped-in assembly's first position commands, checked by
    /// [`Base::check_takeover`] against the last ones that went out (only where every drive
    /// takes positions, `q_cmd` one per joint: `joints` of them).
    pub fn set_takeover_check(&mut self, joints: usize, check: TakeoverCheck) {
        let csp = self.ports.command[0].map(|slot| match self.info.inputs[slot].ty {
            ValueType::Vector(n) => n,
            _ => 1,
        });
        if csp == Some(joints) {
            self.last_positions = [vec![0.0; joints], vec![0.0; joints]];
            self.positions_seen = 0;
            self.takeover_check = Some(check);
        }
    }

    /// Opens the bus on `link`, configures every device's class, brings all to Op and (if
    /// configured) switches the drives on. Blocks; not for the real-time path.
    pub fn open(link: Link, config: BusConfig) -> Result<BusBase, BusError> {
        if !(config.period.is_finite() && config.period > 0.0) {
            return Err(BusError::Config(format!("bus period must be positive, got {} s", config.period)));
        }
        config.drive.check().map_err(BusError::Config)?;
        let timeout = config.master.reply_timeout.as_secs_f64();
        if !(timeout > 0.0 && timeout <= period_limit(config.period)) {
            return Err(BusError::Config(format!(
                "the bus's reply timeout must be more than 0 and at most {} cycles ({:.1} ms at a {} ms cycle), got {:.3} ms",
                crate::master::MAX_REPLY_TIMEOUT_CYCLES,
                period_limit(config.period) * 1e3,
                config.period * 1e3,
                timeout * 1e3
            )));
        }
        for (_, d) in &config.drive_overrides {
            d.check().map_err(BusError::Config)?;
        }
        let period = config.period;
        let mut master = config.master.clone();
        if config.distributed_clocks {
            master.sync0_period = Some(std::time::Duration::from_nanos((period * 1e9).round() as u64));
        }
        let mut bus = Bus::open(link, master, |devices| {
            let mut plan = PreOpPlan::default();
            for d in devices {
                match choose_class(&config, d, false) {
                    Some(DeviceClassChoice::Drive(dc)) => {
                        let class = Cia402Drive::new(DeviceName { position: d.position, name: d.name.clone() }, dc, period);
                        // A drive without CoE keeps its EEPROM's mapping (the mode goes in the PDO).
                        if !d.pdo_from_eeprom {
                            plan.writes.extend(class.setup().into_iter().map(|write| PreOpWrite { position: d.position, write }));
                        }
                        plan.sync0.push(d.position);
                    }
                    Some(DeviceClassChoice::Lab(lab)) => plan.writes.extend(lab.setup.iter().map(|&write| PreOpWrite { position: d.position, write })),
                    _ => {}
                }
            }
            Ok(plan)
        })?;
        check_identities(bus.devices(), &config).map_err(BusError::BringUp)?;
        let mut devices = build_classes(&mut bus, &config).map_err(BusError::BringUp)?;
        if let Some(order) = &config.drive_order {
            order_drives(&mut devices.drives, order, bus.devices()).map_err(BusError::BringUp)?;
        }
        let (info, ports, devices) = ports::layout(devices);
        let period_ns = (config.period * 1e9).round() as u64;
        let shared = Arc::new(BusShared::new(bus.devices().iter().map(|d| (d.position, d.name.clone())).collect(), bus.interface().map(str::to_string)));
        // Without the joints' velocity limits (BusBase::set_standstill gives them), a drive
        // stands when it reads less than a few encoder counts per cycle.
        let speeds = devices.drives.iter().map(|d| morc_kernel::standstill_speed(f64::NAN, d.class.config().velocity_from_counts(1).abs() / period)).collect();
        let standstill = Standstill::new(speeds, period);
        let mut base = BusBase {
            bus,
            info,
            config,
            period_ns,
            devices,
            ports,
            bad_cycles: 0,
            wrong_counters: 0,
            fault: None,
            fault_unreported: false,
            commanded: false,
            shared,
            standstill,
            takeover_check: None,
            last_positions: [Vec::new(), Vec::new()],
            positions_seen: 0,
        };
        if !base.config.enable_drives {
            for d in &mut base.devices.drives {
                d.class.disable();
            }
        }
        base.start().map_err(BusError::BringUp)?;
        Ok(base)
    }

    /// First cycles, off the real-time path: check the exchange, and switch the drives on.
    /// A safety PLC inhibiting motion is no reason to fail: the fault stays latched (and says
    /// why) until the cause is gone and faults are reset.
    fn start(&mut self) -> Result<(), String> {
        let timeout = self.devices.drives.iter().map(|d| d.class.config().switch_on_timeout).fold(0.0, f64::max);
        let max_cycles = ((4.0 * timeout + 0.1) / self.config.period).ceil() as u64 + 10;
        for _ in 0..max_cycles {
            self.cycle();
            if self.fault.is_some() {
                if self.devices.others.iter().any(|s| !s.class.permits_motion()) {
                    log::warn!("bus up, motion inhibited: {}", self.fault.as_deref().unwrap_or_default());
                    return Ok(());
                }
                return Err(self.fault.take().unwrap_or_default());
            }
            let _ = self.write_outputs(None);
            if !self.config.enable_drives || self.devices.drives.iter().all(|d| d.class.enabled()) {
                return Ok(());
            }
        }
        let slow: Vec<String> = self.devices.drives.iter().filter(|d| !d.class.enabled()).map(|d| d.class.not_switching_on()).collect();
        Err(slow.join("\n"))
    }

    /// The EtherCAT master the base runs.
    pub fn bus(&self) -> &Bus {
        &self.bus
    }
    /// The master, mutably (e.g. to set its receive timeout).
    pub fn bus_mut(&mut self) -> &mut Bus {
        &mut self.bus
    }
    /// A handle for other threads: fault reset, F/T bias, fault and cycle counts, the simulated devices.
    pub fn handle(&self) -> BusHandle {
        BusHandle { shared: self.shared.clone(), segment: self.bus.segment().cloned() }
    }
    /// The latched fault, if any.
    pub fn fault(&self) -> Option<&str> {
        self.fault.as_deref()
    }
    /// The `i`-th CiA 402 drive (0-based, in port order: line order, or [`BusConfig::drive_order`]), not its position on the line.
    pub fn drive(&self, i: usize) -> Option<&Cia402Drive> {
        self.devices.drives.get(i).map(|d| &d.class)
    }
    /// Number of CiA 402 drives on the bus.
    pub fn drive_count(&self) -> usize {
        self.devices.drives.len()
    }
    /// The `i`-th safety PLC interface (0-based, in line order).
    pub fn safety_plc(&self, i: usize) -> Option<&SafetyPlc> {
        self.devices.nth(i)
    }
    /// The `i`-th force/torque sensor (0-based, in line order).
    pub fn force_sensor(&self, i: usize) -> Option<&ForceTorqueSensor> {
        self.devices.nth(i)
    }
    /// Which class drives the device at `position` ("drive", "dout", "din", "ain", "aout",
    /// "safety", "ft", "enc"), if any.
    pub fn class_of(&self, position: usize) -> Option<&'static str> {
        let d = &self.devices;
        let drive = d.drives.iter().find(|s| s.position == position).map(|s| s.class.kind());
        drive.or_else(|| d.others.iter().find(|s| s.position == position).map(|s| s.class.kind()))
    }

    /// The ports the device at `position` adds (its measurements, its commands), off the
    /// real-time path: what `morc bus scan` lists for a generic device.
    pub fn ports_of(&self, position: usize) -> (Vec<&str>, Vec<&str>) {
        let Some(slot) = self.devices.others.iter().find(|s| s.position == position) else { return (Vec::new(), Vec::new()) };
        let inputs = slot.first_input..slot.first_input + slot.class.ports().inputs.len();
        fn names(ports: &[morc_kernel::PortInfo]) -> Vec<&str> {
            ports.iter().map(|p| p.name.as_str()).collect()
        }
        (names(&self.info.outputs[slot.outputs.clone()]), names(&self.info.inputs[inputs]))
    }

    /// For a device without a class, where its ports came from ("its CoE PDO assignment",
    /// "the PDOs in its EEPROM"); `None` for other devices.
    pub fn generic_source(&self, position: usize) -> Option<&'static str> {
        let slot = self.devices.others.iter().find(|s| s.position == position)?;
        (slot.class.as_ref() as &dyn std::any::Any).downcast_ref::<GenericDevice>().map(GenericDevice::source)
    }

    /// Why the class chosen for the device at `position` refused it, if it did (only with
    /// [`BusConfig::keep_refused`]; otherwise the bring-up fails with this message).
    pub fn refusal(&self, position: usize) -> Option<&str> {
        self.devices.refused.iter().find(|(p, _)| *p == position).map(|(_, why)| why.as_str())
    }

    /// Asks for fault reset and recovery at the next tick (same as [`BusHandle::reset_faults`]).
    pub fn reset_faults(&mut self) {
        self.shared.reset_requested.store(true, Ordering::Relaxed);
    }

    /// Quick stop every drive (they end disabled; [`reset_faults`](Self::reset_faults)
    /// switches them on again).
    pub fn quick_stop(&mut self) {
        for d in &mut self.devices.drives {
            d.class.quick_stop();
        }
    }

    fn latch(&mut self, message: String) {
        if self.fault.is_none() {
            self.shared.faults.fetch_add(1, Ordering::Relaxed);
            log::error!("bus fault: {message}");
            // For handles (the live view): tried, never waited for; a reader holds it for a copy.
            if let Ok(mut text) = self.shared.fault.try_lock() {
                *text = Some(message.clone());
            }
            self.fault = Some(message);
            self.fault_unreported = true;
            self.shared.faulted.store(true, Ordering::Relaxed);
            // Safe hold: drives quick-stop (the fault may be theirs, the line's or the cell's).
            self.quick_stop();
        }
    }

    /// Recovery, requested by reset: devices back to Op, the safety PLC re-armed, drive
    /// faults acknowledged, drives switched on again. Off the steady state (acyclic frames,
    /// and a few extra exchanges while the PLC re-arms).
    fn recover(&mut self) {
        match self.bus.recover().map_err(String::from).and_then(|report| self.rearm_safety().map(|()| report)) {
            Ok(report) => {
                if !report.is_empty() {
                    log::info!("bus recovery: {report}");
                }
                for d in &mut self.devices.drives {
                    d.class.reset_fault();
                }
                self.fault = None;
                self.fault_unreported = false;
                self.bad_cycles = 0;
                self.wrong_counters = 0;
                self.bus.clear_frames_without_reply();
                self.shared.faulted.store(false, Ordering::Relaxed);
            }
            Err(e) => {
                // Still faulted: say why the reset did not work.
                let message = format!("fault reset failed: {e}");
                if let Ok(mut text) = self.shared.fault.try_lock() {
                    *text = Some(message.clone());
                }
                self.fault = Some(message);
                self.fault_unreported = true;
            }
        }
    }

    /// Acknowledges every safety PLC and exchanges until they permit motion again, or says
    /// what still inhibits it.
    fn rearm_safety(&mut self) -> Result<(), String> {
        let permitted = |d: &Devices| d.others.iter().all(|s| s.class.permits_motion());
        if permitted(&self.devices) {
            return Ok(());
        }
        for s in &mut self.devices.others {
            s.class.acknowledge();
        }
        for _ in 0..REARM_CYCLES {
            let _ = self.write_outputs(None);
            self.exchange();
            if permitted(&self.devices) {
                return Ok(());
            }
        }
        match self.devices.others.iter().find(|s| !s.class.permits_motion()) {
            Some(s) => Err(s.class.fault().unwrap_or_else(|| format!("{} does not permit motion", s.class.name()))),
            None => Ok(()),
        }
    }

    /// One process-data exchange: the simulated devices move by one base period, the classes
    /// decode what came back (unless nothing did).
    fn exchange(&mut self) -> CycleStatus {
        let status = self.bus.cycle();
        self.shared.cycles.fetch_add(1, Ordering::Relaxed);
        // Mirrored for handles: a few relaxed stores, no lock.
        let counters = self.bus.counters();
        self.shared.lost_frames.store(counters.lost_frames, Ordering::Relaxed);
        self.shared.late_replies.store(counters.late_replies, Ordering::Relaxed);
        self.shared.working_counter_errors.store(counters.working_counter_errors, Ordering::Relaxed);
        self.shared.not_op.store(counters.not_op, Ordering::Relaxed);
        for (cell, state) in self.shared.states.iter().zip(self.bus.states()) {
            cell.store(handle::state_code(*state), Ordering::Relaxed);
        }
        self.bus.advance_segment(self.period_ns);
        if matches!(status, CycleStatus::Ok | CycleStatus::NotOp) {
            let (bus, d) = (&self.bus, &mut self.devices);
            for s in &mut d.drives {
                s.class.read_inputs(bus.inputs(s.position));
            }
            for s in &mut d.others {
                s.class.read_inputs(bus.inputs(s.position));
            }
        }
        status
    }

    /// One exchange with its checks; latches a fault when one is found. Nothing here
    /// allocates unless a new fault is latched.
    fn cycle(&mut self) {
        let status = self.exchange();
        let limit = self.config.max_bad_cycles.max(1);
        // The loss rule: frames in a row without reply within the reply timeout (a late reply
        // is no lost one). The report says what was seen of the replies.
        let without_reply = self.bus.frames_without_reply();
        if without_reply >= limit && self.fault.is_none() {
            let message = self.bus.loss_report(without_reply);
            self.latch(message);
        }
        match status {
            CycleStatus::Ok => {
                self.bad_cycles = 0;
                self.wrong_counters = 0;
            }
            CycleStatus::NotOp => {
                if self.fault.is_none() {
                    let which = self.bus.devices_not_in_op();
                    self.latch(format!("{which} left OP; check the device's power and cabling, then reset faults"));
                }
            }
            CycleStatus::WorkingCounter { got, expected } => {
                self.bad_cycles = self.bad_cycles.saturating_add(1);
                self.wrong_counters = self.wrong_counters.saturating_add(1);
                if self.wrong_counters >= limit && self.fault.is_none() {
                    let message = format!(
                        "working counter {got}, expected {expected}, for {} cycles: a device is not exchanging process data{}; check the line, then reset faults",
                        self.wrong_counters,
                        match self.bus.devices_not_in_op() {
                            s if s.is_empty() => String::new(),
                            s => format!(" ({s})"),
                        }
                    );
                    self.latch(message);
                }
                return;
            }
            // Inputs are last cycle's: nothing new to check.
            CycleStatus::Late | CycleStatus::Lost | CycleStatus::Error => {
                self.bad_cycles = self.bad_cycles.saturating_add(1);
                return;
            }
        }
        if self.fault.is_none() {
            if let Some(m) = self.device_fault() {
                self.latch(m);
            }
        }
    }

    /// A device's own fault, or the safety PLC inhibiting motion (the message allocates: only
    /// when there is one).
    fn device_fault(&self) -> Option<String> {
        let d = &self.devices;
        d.others
            .iter()
            .find(|s| !s.class.permits_motion())
            .and_then(|s| s.class.fault())
            .or_else(|| d.drives.iter().find_map(|s| s.class.check().err()))
            .or_else(|| d.others.iter().find_map(|s| s.class.fault()))
    }

    /// Commands (or hold) into the devices' outputs, for the next exchange.
    fn write_outputs(&mut self, commands: Option<Commands>) -> Result<(), String> {
        let mut result = Ok(());
        let commands = if self.fault.is_some() { None } else { commands };
        let (bus, d, ports) = (&mut self.bus, &mut self.devices, &self.ports);
        for (drive, s) in d.drives.iter_mut().enumerate() {
            let slot = mode_slot(s.class.config().mode);
            let value = commands.and_then(|c| ports.command[slot].and_then(|p| c.get(p))).map(|v| read_real(v, s.command_index));
            if let Err(e) = s.class.command(value) {
                result = Err(e);
            }
            let tau_ff = value.and(commands).and_then(|c| ports.tau_ff.and_then(|p| c.get(p))).map(|v| read_real(v, drive));
            if let Err(e) = s.class.set_torque_offset(tau_ff) {
                result = Err(e);
            }
            s.class.write_outputs(bus.outputs_mut(s.position));
        }
        for s in &mut d.others {
            if let Err(e) = s.class.command(commands, s.first_input) {
                result = Err(e);
            }
            s.class.write_outputs(bus.outputs_mut(s.position));
        }
        result
    }
}

/// The class of every device found, with its checks; F/T sensors without configured scaling
/// get theirs from their calibration objects (SDO uploads, once).
fn build_classes(bus: &mut Bus, config: &BusConfig) -> Result<Devices, String> {
    let mut devices = Devices::default();
    for d in bus.devices().to_vec() {
        let Some(choice) = choose_class(config, &d, true) else { continue };
        // A device found without a class whose description does not do runs without ports, as
        // before there was a generic class; asked for in the configuration, it is an error.
        let choice_was_generic = choice == DeviceClassChoice::Generic && !config.class_overrides.iter().any(|(p, _)| *p == d.position);
        match build_class(bus, config, &d, choice) {
            Ok(Built::Drive(class)) => devices.drives.push(DriveSlot { position: d.position, class: *class, command_index: 0 }),
            Ok(Built::Other(class)) => devices.others.push(Slot { position: d.position, class, outputs: 0..0, first_input: 0 }),
            Ok(Built::Passive) => {}
            Err(why) if choice_was_generic => {
                log::warn!("{why}");
                if config.keep_refused {
                    devices.refused.push((d.position, why));
                }
            }
            Err(why) if config.keep_refused => devices.refused.push((d.position, why)),
            Err(why) => return Err(why),
        }
    }
    Ok(devices)
}

/// The drives in `order` (their positions on the line), then those it does not list in line
/// order; a position that holds no drive is an error naming what is there.
fn order_drives(drives: &mut Vec<DriveSlot>, order: &[usize], line: &[DeviceInfo]) -> Result<(), String> {
    let mut ordered = Vec::with_capacity(drives.len());
    for &position in order {
        match drives.iter().position(|d| d.position == position) {
            Some(i) => ordered.push(drives.remove(i)),
            None => {
                return Err(match line.iter().find(|d| d.position == position) {
                    Some(d) => format!("slave {position} is '{}', not a CiA 402 drive: check the robot file's drive slaves against `morc bus scan`", d.name),
                    None => format!(
                        "no device at slave {position}: the line has {} (slaves 0 to {}); check the robot file's drive slaves against `morc bus scan`",
                        line.len(),
                        line.len().saturating_sub(1)
                    ),
                })
            }
        }
    }
    ordered.append(drives);
    *drives = ordered;
    Ok(())
}

/// Each identity the configuration binds a class to is on the line exactly once.
fn check_identities(devices: &[DeviceInfo], config: &BusConfig) -> Result<(), String> {
    for ((vendor_id, product_code), _) in &config.class_by_identity {
        let at: Vec<String> = devices.iter().filter(|d| (d.vendor_id, d.product_code) == (*vendor_id, *product_code)).map(|d| format!("{} '{}'", d.position, d.name)).collect();
        match at.len() {
            1 => {}
            0 => return Err(format!("no device on the line is vendor 0x{vendor_id:X}, product 0x{product_code:X} (`morc bus scan` lists each device's identity)")),
            _ => return Err(format!("devices {} are all vendor 0x{vendor_id:X}, product 0x{product_code:X}: bind the one meant by its position (slave = …)", at.join(", "))),
        }
    }
    Ok(())
}

/// What a device's class came out as.
enum Built {
    Drive(Box<Cia402Drive>),
    Other(Box<dyn DeviceClass>),
    Passive,
}

/// The class `choice` for device `d`, with its checks; an F/T sensor without configured
/// scaling gets its own from its calibration objects (SDO uploads, once).
fn build_class(bus: &mut Bus, config: &BusConfig, d: &DeviceInfo, choice: DeviceClassChoice) -> Result<Built, String> {
    let name = DeviceName { position: d.position, name: d.name.clone() };
    let other = |class: Box<dyn DeviceClass>| Ok(Built::Other(class));
    match choice {
        DeviceClassChoice::Drive(dc) => {
            let class = match &d.eeprom_mapping {
                // Run from its EEPROM's PDOs: the class adapts to that mapping, or says what it lacks.
                Some((rx, tx)) if d.pdo_from_eeprom => Cia402Drive::with_fixed_mapping(name, dc, config.period, rx, tx)?,
                _ => Cia402Drive::new(name, dc, config.period),
            };
            class.check_process_data(d.input_bytes, d.output_bytes)?;
            Ok(Built::Drive(Box::new(class)))
        }
        DeviceClassChoice::DigitalOutputs { channels } => {
            let channels = known_channels(d.vendor_id, d.product_code).unwrap_or(channels).min((d.output_bytes * 8) as u32);
            other(Box::new(DigitalOutputs::new(name, channels)))
        }
        DeviceClassChoice::DigitalInputs { channels } => {
            let channels = known_channels(d.vendor_id, d.product_code).unwrap_or(channels).min((d.input_bytes * 8) as u32);
            other(Box::new(DigitalInputs::new(name, channels)))
        }
        DeviceClassChoice::AnalogInputs { range } => other(Box::new(AnalogInputs::new(name, d.input_bytes / AnalogInputs::BYTES_PER_CHANNEL, range))),
        DeviceClassChoice::AnalogOutputs { range } => other(Box::new(AnalogOutputs::new(name, d.output_bytes / AnalogOutputs::BYTES_PER_CHANNEL, range))),
        DeviceClassChoice::SafetyPlc => {
            let class = SafetyPlc::new(name);
            class.check_process_data(d.input_bytes, d.output_bytes)?;
            other(Box::new(class))
        }
        DeviceClassChoice::ForceTorque { scaling } => {
            let scaling = match scaling {
                Some(s) => s,
                None => {
                    let (f, t) = (force_torque::obj::COUNTS_PER_FORCE, force_torque::obj::COUNTS_PER_TORQUE);
                    let why =
                        |e: BusError| format!("{e}: the force/torque sensor's scaling (counts per N, per N·m) is needed; give it in the bus configuration if the sensor has no calibration objects");
                    FtScaling {
                        counts_per_newton: f64::from(bus.sdo_read_u32(d.position, f.0, f.1).map_err(why)?),
                        counts_per_newton_metre: f64::from(bus.sdo_read_u32(d.position, t.0, t.1).map_err(why)?),
                    }
                }
            };
            scaling.check().map_err(|e| format!("{name}: {e}"))?;
            let class = ForceTorqueSensor::new(name, scaling);
            class.check_process_data(d.input_bytes, d.output_bytes)?;
            other(Box::new(class))
        }
        DeviceClassChoice::Encoder { scaling } => other(Box::new(crate::devices::IncrementalEncoder::new(name, scaling, d.input_bytes, d.output_bytes)?)),
        DeviceClassChoice::Lab(lab) => other((lab.build)(name, d.input_bytes, d.output_bytes).map_err(|e| format!("device {} '{}' ({}): {e}", d.position, d.name, lab.name))?),
        DeviceClassChoice::Generic if d.input_bytes + d.output_bytes == 0 => Ok(Built::Passive),
        DeviceClassChoice::Generic => other(Box::new(GenericDevice::new(name, &generic_layout(bus, d)?, d.input_bytes, d.output_bytes)?)),
        DeviceClassChoice::Passive => Ok(Built::Passive),
    }
}

/// What a device without a class maps: its CoE PDO assignment when its mailbox answers CoE
/// (what the master sized its process data from), else the PDOs its EEPROM assigns.
fn generic_layout(bus: &mut Bus, d: &DeviceInfo) -> Result<PdoLayout, String> {
    let sii = bus.read_sii(d.position).map_err(|e| e.to_string());
    if d.device_type.is_some() && !d.pdo_from_eeprom {
        match coe_assignment(bus, d.position, sii.as_ref().ok()) {
            Ok(layout) => return Ok(layout),
            Err(e) => log::info!("{e}; taking its PDOs from its EEPROM"),
        }
    }
    Ok(PdoLayout::from_sii(&sii?))
}

/// The PDO assignment of each process-data SyncManager (0x1C10 + n) and each assigned PDO's
/// mapping, read over CoE.
#[allow(clippy::type_complexity)]
fn coe_assignment(bus: &mut Bus, position: usize, sii: Option<&morc_ecat_sim::SiiInfo>) -> Result<PdoLayout, BusError> {
    use morc_ecat_wire::sii::SyncManagerUsage;
    let usage = |u: SyncManagerUsage| -> Vec<u8> {
        match sii {
            Some(info) if !info.sync_managers.is_empty() => info.sync_managers.iter().enumerate().filter(|(_, s)| s.usage == u).map(|(i, _)| i as u8).collect(),
            // Without a description, the standard SyncManagers: SM2 outputs, SM3 inputs.
            _ => vec![if u == SyncManagerUsage::ProcessDataOut { 2 } else { 3 }],
        }
    };
    let mut read = |sms: Vec<u8>| -> Result<Vec<(u8, Vec<(u16, Vec<u32>)>)>, BusError> {
        let mut out = Vec::new();
        for sm in sms {
            let assign = 0x1C10 + u16::from(sm);
            let mut pdos = Vec::new();
            for i in 1..=bus.sdo_read::<u8>(position, assign, 0)? {
                let pdo = bus.sdo_read::<u16>(position, assign, i)?;
                let entries = (1..=bus.sdo_read::<u8>(position, pdo, 0)?).map(|j| bus.sdo_read::<u32>(position, pdo, j)).collect::<Result<Vec<u32>, _>>()?;
                pdos.push((pdo, entries));
            }
            out.push((sm, pdos));
        }
        Ok(out)
    };
    let rx = read(usage(SyncManagerUsage::ProcessDataOut))?;
    let tx = read(usage(SyncManagerUsage::ProcessDataIn))?;
    Ok(PdoLayout::from_coe(&rx, &tx, sii))
}

impl Base for BusBase {
    fn info(&self) -> &ComponentInfo {
        &self.info
    }

    fn diagnostics(&self) -> Option<Arc<dyn morc_kernel::BusDiagnostics>> {
        Some(Arc::new(BusBase::handle(self)))
    }

    fn latency(&self) -> u32 {
        BUS_LATENCY_CYCLES
    }

    fn sense(&mut self, _tick: u64, outputs: &mut [Value]) -> Step {
        if self.shared.reset_requested.swap(false, Ordering::Relaxed) {
            self.recover();
        }
        if self.shared.bias_requested.swap(false, Ordering::Relaxed) {
            for s in &mut self.devices.others {
                s.class.bias();
            }
        }
        self.cycle();
        self.standstill.observe(self.devices.drives.iter().map(|d| d.class.velocity()));
        ports::write_measurements(&self.devices, &self.ports, outputs);
        match &self.fault {
            // Told once when found, then to each assembly that tries to move: an idle faulted
            // base does not clone the message every tick.
            Some(f) if self.fault_unreported || self.commanded => {
                self.fault_unreported = false;
                Step::Fault(f.clone())
            }
            _ => Step::Continue,
        }
    }

    fn actuate(&mut self, _tick: u64, commands: Option<Commands>) -> Step {
        self.commanded = commands.is_some();
        // The last two position commands, for a takeover's check (copies into buffers of the
        // right size: nothing allocated).
        match (commands.and_then(|c| self.ports.command[0].and_then(|slot| c.get(slot))), self.takeover_check.is_some()) {
            (Some(q), true) if q.as_slice().len() == self.last_positions[0].len() => {
                self.last_positions.swap(0, 1);
                self.last_positions[0].copy_from_slice(q.as_slice());
                self.positions_seen = self.positions_seen.saturating_add(1).min(2);
            }
            // Holding: the drives hold where they are, and a new command starts from there.
            _ => self.positions_seen = 0,
        }
        match self.write_outputs(commands) {
            Ok(()) => Step::Continue,
            Err(e) => Step::Fault(e),
        }
    }

    fn check_takeover(&self, commands: Commands) -> Result<(), (usize, String)> {
        let (Some(check), Some(slot)) = (&self.takeover_check, self.ports.command[0]) else { return Ok(()) };
        let Some(next) = commands.get(slot).map(Value::as_slice) else { return Ok(()) };
        if self.positions_seen == 0 || next.len() != self.last_positions[0].len() {
            return Ok(());
        }
        let before = (self.positions_seen > 1).then_some(&self.last_positions[1][..]);
        match check(before, &self.last_positions[0], next) {
            Some(what) => Err((slot, what)),
            None => Ok(()),
        }
    }

    /// The drives stand still (they brake by themselves: hold, quick stop or fault reaction):
    /// each below its own standstill speed for the last few cycles ([`Standstill`]).
    /// A bus whose last cycle failed cannot tell and has nothing more to do.
    fn is_still(&self) -> bool {
        // While cycles fail the measurements are stale: nothing more to wait for here (the
        // drives' own watchdogs stop them when the master falls silent).
        self.bad_cycles > 0 || self.standstill.is_still()
    }
}
