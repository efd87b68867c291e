//! The bus as the engine's base: each tick `sense` exchanges process data once (and steps a
//! simulated segment by the base period), checks the working counter and the devices' states,
//! and writes measurements; `actuate` turns commands (or hold) into the devices' outputs,
//! sent at the next tick's exchange.
//!
//! Ports (drives and terminals in line order):
//! - outputs: `q` (rad), `qd` (rad/s), `tau` (N·m) per drive — a real for one drive, a vector
//!   for several —, `enabled` (all drives in Operation enabled), and `din<p>` (integer, bit 0 =
//!   channel 1) per digital input terminal at position p;
//! - inputs: `q_cmd` for drives in CSP, `qd_cmd` in CSV, `tau_cmd` in CST (each a real or a
//!   vector over the drives in that mode, in line order), and `dout<p>` (integer) per digital
//!   output terminal at position p.
//!
//! Faults: a drive fault or a device leaving Op faults at once; lost frames and wrong working
//! counters once they persist for `max_bad_cycles` consecutive cycles. The fault is latched
//! (drives quick-stop) until [`BusBase::reset_faults`] (or a [`BusHandle`]) asks for recovery.

use crate::bus::devices::{classify, known_channels, Cia402Drive, DeviceClassChoice, DeviceName, DigitalInputs, DigitalOutputs, DriveConfig, DriveMode};
use crate::bus::master::{Bus, CycleStatus, DeviceInfo, Link, MasterConfig, PreOpWrite};
use crate::kernel::base::{Base, Commands};
use crate::kernel::component::{ComponentInfo, PortInfo, Step};
use crate::kernel::value::{Value, ValueType};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// How the bus base is set up.
#[derive(Debug, Clone)]
pub struct BusConfig {
    /// Base period (s): the bus cycle, and the step of a simulated segment.
    pub period: f64,
    /// Scaling and mode of every drive found, unless `drive_overrides` names its position.
    pub drive: DriveConfig,
    pub drive_overrides: Vec<(usize, DriveConfig)>,
    /// Class overrides by position (e.g. a device whose identity says nothing useful).
    pub class_overrides: Vec<(usize, DeviceClassChoice)>,
    /// Consecutive lost frames / wrong working counters tolerated before a fault.
    pub max_bad_cycles: u32,
    /// Switch the drives on at start (holding where they are).
    pub enable_drives: bool,
    pub master: MasterConfig,
}

impl Default for BusConfig {
    fn default() -> Self {
        Self {
            period: 0.001,
            drive: DriveConfig::default(),
            drive_overrides: Vec::new(),
            class_overrides: Vec::new(),
            max_bad_cycles: 3,
            enable_drives: true,
            master: MasterConfig::default(),
        }
    }
}

/// Talks to a bus base from other threads (the REPL, a program) while the engine owns it.
#[derive(Debug, Default)]
pub struct BusShared {
    reset_requested: AtomicBool,
    faulted: AtomicBool,
    faults: AtomicU64,
    cycles: AtomicU64,
}

/// A handle on a running bus base.
#[derive(Debug, Clone)]
pub struct BusHandle(Arc<BusShared>);

impl BusHandle {
    /// Asks for fault reset and recovery at the next tick.
    pub fn reset_faults(&self) {
        self.0.reset_requested.store(true, Ordering::Relaxed);
    }
    pub fn faulted(&self) -> bool {
        self.0.faulted.load(Ordering::Relaxed)
    }
    /// Faults seen since start.
    pub fn faults(&self) -> u64 {
        self.0.faults.load(Ordering::Relaxed)
    }
    pub fn cycles(&self) -> u64 {
        self.0.cycles.load(Ordering::Relaxed)
    }
}

struct DriveSlot {
    position: usize,
    class: Cia402Drive,
    /// Index into the command vector of its mode.
    command_index: usize,
}

struct DoutSlot {
    position: usize,
    class: DigitalOutputs,
    port: usize,
}

struct DinSlot {
    position: usize,
    class: DigitalInputs,
    port: usize,
}

/// Port indices, fixed at construction.
#[derive(Default)]
struct Ports {
    q: Option<usize>,
    qd: Option<usize>,
    tau: Option<usize>,
    enabled: Option<usize>,
    /// Command input per mode (CSP, CSV, CST).
    command: [Option<usize>; 3],
}

fn mode_slot(mode: DriveMode) -> usize {
    match mode {
        DriveMode::Csp => 0,
        DriveMode::Csv => 1,
        DriveMode::Cst => 2,
    }
}

/// The EtherCAT bus with its drives and terminals, as the engine's base ("robot").
pub struct BusBase {
    bus: Bus,
    info: ComponentInfo,
    config: BusConfig,
    period_ns: u64,
    drives: Vec<DriveSlot>,
    douts: Vec<DoutSlot>,
    dins: Vec<DinSlot>,
    ports: Ports,
    bad_cycles: u32,
    /// The latched fault, until reset.
    fault: Option<String>,
    shared: Arc<BusShared>,
}

fn vector_type(n: usize) -> ValueType {
    if n == 1 {
        ValueType::Real
    } else {
        ValueType::Vector(n)
    }
}

fn write_real(value: &mut Value, i: usize, x: f64) {
    match value {
        Value::Real(r) => *r = x,
        Value::Vector(v) => {
            if let Some(slot) = v.get_mut(i) {
                *slot = x;
            }
        }
        _ => {}
    }
}

fn read_real(value: &Value, i: usize) -> f64 {
    match value {
        Value::Real(r) => *r,
        Value::Vector(v) => v.get(i).copied().unwrap_or(f64::NAN),
        _ => f64::NAN,
    }
}

impl BusBase {
    /// Opens the bus on `link`, configures every device's class, brings all to Op and (if
    /// configured) switches the drives on. Blocks; not for the real-time path.
    pub fn open(link: Link, config: BusConfig) -> Result<BusBase, String> {
        if !(config.period.is_finite() && config.period > 0.0) {
            return Err(format!("bus period must be positive, got {} s", config.period));
        }
        config.drive.check()?;
        for (_, d) in &config.drive_overrides {
            d.check()?;
        }
        let drive_config = |position: usize| config.drive_overrides.iter().find(|(p, _)| *p == position).map(|(_, d)| d.clone()).unwrap_or_else(|| config.drive.clone());
        let choice_before_op = |d: &DeviceInfo| -> Option<DeviceClassChoice> {
            if let Some((_, c)) = config.class_overrides.iter().find(|(p, _)| *p == d.position) {
                return Some(c.clone());
            }
            // Before Op the sizes are unknown; only drives are decided here (they need SDOs).
            match classify(d.device_type, 0, 0, &drive_config(d.position)) {
                c @ DeviceClassChoice::Drive(_) => Some(c),
                _ => None,
            }
        };
        let period = config.period;
        let bus = Bus::open(link, config.master.clone(), |devices| {
            let mut writes = Vec::new();
            for d in devices {
                if let Some(DeviceClassChoice::Drive(dc)) = choice_before_op(d) {
                    let class = Cia402Drive::new(DeviceName { position: d.position, name: d.name.clone() }, dc, period);
                    writes.extend(class.setup().into_iter().map(|write| PreOpWrite { position: d.position, write }));
                }
            }
            Ok(writes)
        })?;
        let mut drives = Vec::new();
        let mut douts = Vec::new();
        let mut dins = Vec::new();
        for d in bus.devices() {
            let name = DeviceName { position: d.position, name: d.name.clone() };
            let choice = match choice_before_op(d) {
                Some(c) => c,
                None => classify(d.device_type, d.input_bytes, d.output_bytes, &drive_config(d.position)),
            };
            match choice {
                DeviceClassChoice::Drive(dc) => {
                    let class = Cia402Drive::new(name, dc, period);
                    class.check_process_data(d.input_bytes, d.output_bytes)?;
                    drives.push(DriveSlot { position: d.position, class, command_index: 0 });
                }
                DeviceClassChoice::DigitalOutputs { channels } => {
                    let channels = known_channels(d.vendor_id, d.product_code).unwrap_or(channels).min((d.output_bytes * 8) as u32);
                    douts.push(DoutSlot { position: d.position, class: DigitalOutputs::new(name, channels), port: 0 });
                }
                DeviceClassChoice::DigitalInputs { channels } => {
                    let channels = known_channels(d.vendor_id, d.product_code).unwrap_or(channels).min((d.input_bytes * 8) as u32);
                    dins.push(DinSlot { position: d.position, class: DigitalInputs::new(name, channels), port: 0 });
                }
                DeviceClassChoice::Passive => {}
            }
        }
        // Ports.
        let mut info = ComponentInfo::new("ethercat", "the EtherCAT bus: CiA 402 drives and I/O terminals through ethercrab");
        let mut ports = Ports::default();
        let n = drives.len();
        let (mut n_in, mut n_out) = (0, 0);
        if n > 0 {
            let ty = vector_type(n);
            info = info
                .output(PortInfo::new("q", ty).unit("rad").doc("measured joint positions, drives in line order"))
                .output(PortInfo::new("qd", ty).unit("rad/s").doc("measured joint velocities"))
                .output(PortInfo::new("tau", ty).unit("N·m").doc("measured joint torques"))
                .output(PortInfo::new("enabled", ValueType::Boolean).doc("every drive is in Operation enabled"));
            ports.q = Some(0);
            ports.qd = Some(1);
            ports.tau = Some(2);
            ports.enabled = Some(3);
            n_out = 4;
            for (slot, (name, unit, what)) in [("q_cmd", "rad", "position (CSP)"), ("qd_cmd", "rad/s", "velocity (CSV)"), ("tau_cmd", "N·m", "torque (CST)")].into_iter().enumerate() {
                let in_mode: Vec<usize> = (0..n).filter(|&i| mode_slot(drives[i].class.config().mode) == slot).collect();
                if in_mode.is_empty() {
                    continue;
                }
                for (k, &i) in in_mode.iter().enumerate() {
                    drives[i].command_index = k;
                }
                info = info.input(PortInfo::new(name, vector_type(in_mode.len())).unit(unit).doc(&format!("commanded joint {what} of the drives in that mode, in line order")));
                ports.command[slot] = Some(n_in);
                n_in += 1;
            }
        }
        for s in &mut dins {
            info = info.output(PortInfo::new(&format!("din{}", s.position), ValueType::Integer).doc(&format!("{}: {} digital inputs, bit 0 = channel 1", s.class.name(), s.class.channels())));
            s.port = n_out;
            n_out += 1;
        }
        for s in &mut douts {
            info = info.input(PortInfo::new(&format!("dout{}", s.position), ValueType::Integer).doc(&format!("{}: {} digital outputs, bit 0 = channel 1", s.class.name(), s.class.channels())));
            s.port = n_in;
            n_in += 1;
        }
        let period_ns = (config.period * 1e9).round() as u64;
        let mut base = BusBase { bus, info, config, period_ns, drives, douts, dins, ports, bad_cycles: 0, fault: None, shared: Arc::new(BusShared::default()) };
        if !base.config.enable_drives {
            for d in &mut base.drives {
                d.class.disable();
            }
        }
        base.start()?;
        Ok(base)
    }

    /// First cycles, off the real-time path: check the exchange, and switch the drives on.
    fn start(&mut self) -> Result<(), String> {
        let timeout = self.drives.iter().map(|d| d.class.config().switch_on_timeout).fold(0.0, f64::max);
        let max_cycles = ((4.0 * timeout + 0.1) / self.config.period).ceil() as u64 + 10;
        for _ in 0..max_cycles {
            self.cycle();
            if let Some(f) = self.fault.take() {
                return Err(f);
            }
            let _ = self.write_outputs(None);
            if !self.config.enable_drives || self.drives.iter().all(|d| d.class.enabled()) {
                return Ok(());
            }
        }
        let slow: Vec<String> = self.drives.iter().filter(|d| !d.class.enabled()).map(|d| d.class.not_switching_on()).collect();
        Err(slow.join("\n"))
    }

    pub fn bus(&self) -> &Bus {
        &self.bus
    }
    pub fn bus_mut(&mut self) -> &mut Bus {
        &mut self.bus
    }
    pub fn handle(&self) -> BusHandle {
        BusHandle(self.shared.clone())
    }
    /// The latched fault, if any.
    pub fn fault(&self) -> Option<&str> {
        self.fault.as_deref()
    }
    pub fn drive(&self, i: usize) -> Option<&Cia402Drive> {
        self.drives.get(i).map(|d| &d.class)
    }
    /// Which class drives the device at `position` ("drive", "dout", "din"), if any.
    pub fn class_of(&self, position: usize) -> Option<&'static str> {
        if self.drives.iter().any(|d| d.position == position) {
            Some("drive")
        } else if self.douts.iter().any(|d| d.position == position) {
            Some("dout")
        } else if self.dins.iter().any(|d| d.position == position) {
            Some("din")
        } else {
            None
        }
    }
    pub fn drive_count(&self) -> usize {
        self.drives.len()
    }

    /// Asks for fault reset and recovery at the next tick (same as [`BusHandle::reset_faults`]).
    pub fn reset_faults(&mut self) {
        self.shared.reset_requested.store(true, Ordering::Relaxed);
    }

    /// Quick stop every drive (they end disabled; [`reset_faults`](Self::reset_faults)
    /// switches them on again).
    pub fn quick_stop(&mut self) {
        for d in &mut self.drives {
            d.class.quick_stop();
        }
    }

    fn latch(&mut self, message: String) {
        if self.fault.is_none() {
            self.shared.faults.fetch_add(1, Ordering::Relaxed);
            log::error!("bus fault: {message}");
            self.fault = Some(message);
            self.shared.faulted.store(true, Ordering::Relaxed);
            // Safe hold: drives quick-stop (the fault may be theirs or the line's).
            for d in &mut self.drives {
                d.class.quick_stop();
            }
        }
    }

    /// Recovery, requested by reset: devices back to Op, drive faults acknowledged, drives
    /// switched on again. Off the steady state (a few acyclic frames).
    fn recover(&mut self) {
        match self.bus.recover() {
            Ok(report) => {
                if !report.is_empty() {
                    log::info!("bus recovery: {report}");
                }
                for d in &mut self.drives {
                    d.class.reset_fault();
                }
                self.fault = None;
                self.bad_cycles = 0;
                self.shared.faulted.store(false, Ordering::Relaxed);
            }
            Err(e) => {
                // Still faulted: say why the reset did not work.
                self.fault = Some(format!("fault reset failed: {e}"));
            }
        }
    }

    /// One exchange with its checks; latches a fault when one is found.
    fn cycle(&mut self) {
        let status = self.bus.cycle();
        self.shared.cycles.fetch_add(1, Ordering::Relaxed);
        // The simulated devices move by one base period between exchanges.
        self.bus.advance_segment(self.period_ns);
        match status {
            CycleStatus::Ok => self.bad_cycles = 0,
            CycleStatus::NotOp => {
                let which = self.bus.devices_not_in_op();
                self.latch(format!("{which} left OP; check the device's power and cabling, then reset faults"));
            }
            CycleStatus::Lost | CycleStatus::Error | CycleStatus::WorkingCounter { .. } => {
                self.bad_cycles += 1;
                if self.bad_cycles >= self.config.max_bad_cycles.max(1) && self.fault.is_none() {
                    let message = match status {
                        CycleStatus::WorkingCounter { got, expected } => format!(
                            "working counter {got}, expected {expected}, for {} cycles: a device is not exchanging process data{}; check the line, then reset faults",
                            self.bad_cycles,
                            match self.bus.devices_not_in_op() {
                                s if s.is_empty() => String::new(),
                                s => format!(" ({s})"),
                            }
                        ),
                        _ => format!(
                            "{} frames in a row lost{}: link down or the first device does not answer; check the cable and the devices' power, then reset faults",
                            self.bad_cycles,
                            self.bus.interface().map(|i| format!(" on {i}")).unwrap_or_default()
                        ),
                    };
                    self.latch(message);
                }
                // Inputs are last cycle's: measurements are not updated.
                return;
            }
        }
        for d in &mut self.drives {
            d.class.read_inputs(self.bus.inputs(d.position));
        }
        for s in &mut self.dins {
            s.class.read_inputs(self.bus.inputs(s.position));
        }
        if self.fault.is_none() {
            for i in 0..self.drives.len() {
                if let Err(m) = self.drives[i].class.check() {
                    self.latch(m);
                    break;
                }
            }
        }
    }

    /// Commands (or hold) into the devices' outputs, for the next exchange.
    fn write_outputs(&mut self, commands: Option<Commands>) -> Result<(), String> {
        let mut result = Ok(());
        let commands = if self.fault.is_some() { None } else { commands };
        for d in &mut self.drives {
            let slot = mode_slot(d.class.config().mode);
            let value = commands.and_then(|c| self.ports.command[slot].and_then(|p| c.get(p))).map(|v| read_real(v, d.command_index));
            if let Err(e) = d.class.command(value) {
                result = Err(e);
            }
            d.class.write_outputs(self.bus.outputs_mut(d.position));
        }
        for s in &mut self.douts {
            let value = commands.and_then(|c| c.get(s.port)).map(|v| v.integer());
            if let Err(e) = s.class.command(value) {
                result = Err(e);
            }
            s.class.write_outputs(self.bus.outputs_mut(s.position));
        }
        result
    }
}

impl Base for BusBase {
    fn info(&self) -> &ComponentInfo {
        &self.info
    }

    fn sense(&mut self, _tick: u64, outputs: &mut [Value]) -> Step {
        if self.shared.reset_requested.swap(false, Ordering::Relaxed) {
            self.recover();
        }
        self.cycle();
        for (i, d) in self.drives.iter().enumerate() {
            if let Some(p) = self.ports.q {
                write_real(&mut outputs[p], i, d.class.position());
            }
            if let Some(p) = self.ports.qd {
                write_real(&mut outputs[p], i, d.class.velocity());
            }
            if let Some(p) = self.ports.tau {
                write_real(&mut outputs[p], i, d.class.torque());
            }
        }
        if let Some(p) = self.ports.enabled {
            outputs[p] = Value::Boolean(self.drives.iter().all(|d| d.class.enabled()));
        }
        for s in &self.dins {
            outputs[s.port] = Value::Integer(s.class.value() as i64);
        }
        match &self.fault {
            // Cloning the message allocates, once per faulted run (the engine ends it).
            Some(f) => Step::Fault(f.clone()),
            None => Step::Continue,
        }
    }

    fn actuate(&mut self, _tick: u64, commands: Option<Commands>) -> Step {
        match self.write_outputs(commands) {
            Ok(()) => Step::Continue,
            Err(e) => Step::Fault(e),
        }
    }
}
