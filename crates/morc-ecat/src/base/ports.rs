//! The bus base's ports: laid out once from the device classes found (see the list in
//! [`super`]), and the measurements written to them every tick without allocating.

use super::Devices;
use crate::devices::DriveMode;
use morc_kernel::{ComponentInfo, PortInfo};
use morc_kernel::{Value, ValueType};

/// Port indices of the drives, fixed at construction (terminals keep theirs in their slot).
#[derive(Default)]
pub(crate) struct Ports {
    pub q: Option<usize>,
    pub qd: Option<usize>,
    pub tau: Option<usize>,
    pub enabled: Option<usize>,
    /// Command input per mode (CSP, CSV, CST).
    pub command: [Option<usize>; 3],
    /// Feed-forward torque per drive (its torque offset, 0x60B2).
    pub tau_ff: Option<usize>,
}

pub(crate) fn mode_slot(mode: DriveMode) -> usize {
    match mode {
        DriveMode::Csp => 0,
        DriveMode::Csv => 1,
        DriveMode::Cst => 2,
    }
}

/// A real for one value, a vector for several.
fn vector_type(n: usize) -> ValueType {
    if n == 1 {
        ValueType::Real
    } else {
        ValueType::Vector(n)
    }
}

pub(crate) fn write_real(value: &mut Value, i: usize, x: f64) {
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

pub(crate) fn read_real(value: &Value, i: usize) -> f64 {
    match value {
        Value::Real(r) => *r,
        Value::Vector(v) => v.get(i).copied().unwrap_or(f64::NAN),
        _ => f64::NAN,
    }
}

/// The component description and port indices for `devices` (their slots get their ports).
pub(crate) fn layout(mut devices: Devices) -> (ComponentInfo, Ports, Devices) {
    let mut info = ComponentInfo::new("ethercat", "the EtherCAT bus: CiA 402 drives, I/O terminals, safety PLC and sensors through ethercrab");
    let mut ports = Ports::default();
    let (mut n_in, mut n_out) = (0, 0);
    let drives = &mut devices.drives;
    let n = drives.len();
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
    let mut output = |info: ComponentInfo, port: PortInfo| {
        n_out += 1;
        (info.output(port), n_out - 1)
    };
    for s in &mut devices.dins {
        (info, s.port) = output(info, PortInfo::new(&format!("din{}", s.position), ValueType::Integer).doc(&format!("{}: {} digital inputs, bit 0 = channel 1", s.class.name(), s.class.channels())));
    }
    for s in &mut devices.ains {
        let (c, r) = (&s.class, s.class.range());
        let port = PortInfo::new(&format!("ain{}", s.position), vector_type(c.channels())).unit(r.unit).doc(&format!(
            "{}: {} analog inputs, {r}; NaN on a channel error (wire break)",
            c.name(),
            c.channels()
        ));
        (info, s.port) = output(info, port);
    }
    for s in &mut devices.fts {
        let port = PortInfo::wrench(&format!("ft{}", s.position)).doc(&format!("{}: force/torque Fx Fy Fz (N) Tx Ty Tz (N·m) in the sensor frame", s.class.name()));
        (info, s.port) = output(info, port);
    }
    for s in &mut devices.safety {
        let port = PortInfo::new(&format!("safety{}", s.position), ValueType::Integer)
            .doc(&format!("{}: safety PLC status bits: 1 e-stop pressed, 2 door closed, 4 enabling switch, 8 motion permitted", s.class.name()));
        (info, s.port) = output(info, port);
    }
    let mut input = |info: ComponentInfo, port: PortInfo| {
        n_in += 1;
        (info.input(port), n_in - 1)
    };
    for s in &mut devices.douts {
        (info, s.port) = input(info, PortInfo::new(&format!("dout{}", s.position), ValueType::Integer).doc(&format!("{}: {} digital outputs, bit 0 = channel 1", s.class.name(), s.class.channels())));
    }
    for s in &mut devices.aouts {
        let (c, r) = (&s.class, s.class.range());
        let port = PortInfo::new(&format!("aout{}", s.position), vector_type(c.channels()))
            .unit(r.unit)
            .doc(&format!("{}: {} analog outputs, {r}; held when not driven", c.name(), c.channels()));
        (info, s.port) = input(info, port);
    }
    // Last, so the other inputs keep their places.
    if n > 0 {
        let port = PortInfo::new("tau_ff", vector_type(n))
            .unit("N·m")
            .doc("feed-forward joint torque per drive, in line order: sent as the drive's torque offset (0x60B2), added to its own control");
        let at;
        (info, at) = input(info, port);
        ports.tau_ff = Some(at);
    }
    (info, ports, devices)
}

/// Measurements into the output ports (no allocation: values are written in place).
pub(crate) fn write_measurements(devices: &Devices, ports: &Ports, outputs: &mut [Value]) {
    for (i, d) in devices.drives.iter().enumerate() {
        for (port, x) in [(ports.q, d.class.position()), (ports.qd, d.class.velocity()), (ports.tau, d.class.torque())] {
            if let Some(p) = port {
                write_real(&mut outputs[p], i, x);
            }
        }
    }
    if let Some(p) = ports.enabled {
        outputs[p] = Value::Boolean(devices.drives.iter().all(|d| d.class.enabled()));
    }
    for s in &devices.dins {
        outputs[s.port] = Value::Integer(s.class.value() as i64);
    }
    for s in &devices.ains {
        for (c, x) in s.class.values().iter().enumerate() {
            write_real(&mut outputs[s.port], c, *x);
        }
    }
    for s in &devices.fts {
        for (c, x) in s.class.wrench().iter().enumerate() {
            write_real(&mut outputs[s.port], c, *x);
        }
    }
    for s in &devices.safety {
        outputs[s.port] = Value::Integer(i64::from(s.class.status()));
    }
}
