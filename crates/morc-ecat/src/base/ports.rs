//! The bus base's ports: laid out once from the device classes found (see the list in
//! [`super`]), and the measurements written to them every tick without allocating.

use super::Devices;
use crate::devices::{vector_type, write_real, DriveMode};
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
            .output(PortInfo::new("q", ty).unit("rad").doc("measured joint positions, drives in port order (line order, or the robot's joint order)"))
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
            info = info.input(PortInfo::new(name, vector_type(in_mode.len())).unit(unit).doc(&format!("commanded joint {what} of the drives in that mode, in port order")));
            ports.command[slot] = Some(n_in);
            n_in += 1;
        }
    }
    // Each other device's measurements, then its commands, in line order: outputs first so
    // that the drives' inputs keep their places.
    for s in &mut devices.others {
        let ports = s.class.ports();
        s.outputs = n_out..n_out + ports.outputs.len();
        n_out += ports.outputs.len();
        info.outputs.extend(ports.outputs);
    }
    for s in &mut devices.others {
        let ports = s.class.ports();
        s.first_input = n_in;
        n_in += ports.inputs.len();
        info.inputs.extend(ports.inputs);
    }
    // Last, so the other inputs keep their places.
    if n > 0 {
        let port = PortInfo::new("tau_ff", vector_type(n))
            .unit("N·m")
            .doc("feed-forward joint torque per drive, in port order: sent as the drive's torque offset (0x60B2), added to its own control");
        info = info.input(port);
        ports.tau_ff = Some(n_in);
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
    for s in &devices.others {
        s.class.write_measurements(&mut outputs[s.outputs.clone()]);
    }
}
