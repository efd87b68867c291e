//! 6-axis force/torque sensors (ATI Axia-style EtherCAT F/T): Fx Fy Fz Tx Ty Tz as int32
//! counts, a status word and a sample counter in; a control word out whose bit 0 biases
//! (tares) the sensor: it takes the present load as its zero.
//!
//! Scaling, counts per newton and per newton-metre, comes from the sensor's calibration
//! objects (CoE [`obj::COUNTS_PER_FORCE`], [`obj::COUNTS_PER_TORQUE`], as ATI's) or from the
//! bus configuration for sensors without them.

use super::{pd, write_real};
use super::{ClassPorts, DeviceClass, DeviceName};
use morc_kernel::{PortInfo, Value};

pub use morc_ecat_wire::profiles::force_torque::{control, obj, status, INPUT_BYTES, OUTPUT_BYTES};

/// How many cycles the bias bit stays set (the sensor acts on its rising edge).
const BIAS_CYCLES: u32 = 3;

/// Counts per unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FtScaling {
    /// Force scaling (counts per N).
    pub counts_per_newton: f64,
    /// Torque scaling (counts per N·m).
    pub counts_per_newton_metre: f64,
}

impl FtScaling {
    /// Refuses scaling that is not finite and positive.
    pub fn check(&self) -> Result<(), String> {
        if self.counts_per_newton.is_finite() && self.counts_per_newton > 0.0 && self.counts_per_newton_metre.is_finite() && self.counts_per_newton_metre > 0.0 {
            Ok(())
        } else {
            Err(format!("force/torque scaling must be positive: {} counts/N, {} counts/N·m", self.counts_per_newton, self.counts_per_newton_metre))
        }
    }
}

/// The master's side of an F/T sensor.
#[derive(Debug, Clone)]
pub struct ForceTorqueSensor {
    name: DeviceName,
    scaling: FtScaling,
    wrench: [f64; 6],
    status: u32,
    samples: u32,
    bias_cycles: u32,
}

impl ForceTorqueSensor {
    /// A sensor with this scaling, reading zero load before the first cycle.
    pub fn new(name: DeviceName, scaling: FtScaling) -> Self {
        Self { name, scaling, wrench: [0.0; 6], status: 0, samples: 0, bias_cycles: 0 }
    }
    /// Where the sensor sits and what it is.
    pub fn name(&self) -> &DeviceName {
        &self.name
    }
    /// Its counts per N and per N·m.
    pub fn scaling(&self) -> FtScaling {
        self.scaling
    }
    /// The mapped sizes must hold the sensor's inputs (Fx..Tz, status, sample counter) and control word.
    pub fn check_process_data(&self, input_bytes: usize, output_bytes: usize) -> Result<(), String> {
        if input_bytes < INPUT_BYTES || output_bytes < OUTPUT_BYTES {
            return Err(format!(
                "{}: a force/torque sensor needs {INPUT_BYTES} input bytes (Fx..Tz, status, sample counter) and {OUTPUT_BYTES} output bytes (control), the device maps {input_bytes} and {output_bytes}",
                self.name
            ));
        }
        Ok(())
    }
    /// Decodes this cycle's inputs: the wrench in N and N·m, status word, sample counter.
    pub fn read_inputs(&mut self, inputs: &[u8]) {
        for (i, w) in self.wrench.iter_mut().enumerate() {
            let counts = f64::from(pd::i32_at(inputs, 4 * i));
            *w = counts / if i < 3 { self.scaling.counts_per_newton } else { self.scaling.counts_per_newton_metre };
        }
        self.status = pd::u32_at(inputs, 24);
        self.samples = pd::u32_at(inputs, 28);
    }
    /// Fx, Fy, Fz (N), Tx, Ty, Tz (N·m), in the sensor's frame.
    pub fn wrench(&self) -> &[f64; 6] {
        &self.wrench
    }
    /// Status word as last received ([`status`] bits).
    pub fn status(&self) -> u32 {
        self.status
    }
    /// Sample counter as last received (the sensor increments it per measurement).
    pub fn samples(&self) -> u32 {
        self.samples
    }
    /// Bias (tare): the present load becomes zero, from the next few cycles on.
    pub fn bias(&mut self) {
        self.bias_cycles = BIAS_CYCLES;
    }
    /// Encodes the control word into this cycle's outputs (the bias bit while a bias is pending).
    pub fn write_outputs(&mut self, outputs: &mut [u8]) {
        let mut word = 0u32;
        if self.bias_cycles > 0 {
            self.bias_cycles -= 1;
            word |= control::BIAS;
        }
        pd::put(outputs, 0, &word.to_le_bytes());
    }
    /// A fault to report: the sensor's error bit (allocates only when it reports).
    pub fn check(&self) -> Result<(), String> {
        if self.status & status::ERROR != 0 {
            return Err(format!("{}: force/torque sensor reports an error (status 0x{:08X}); check the sensor and its cable, then reset faults", self.name, self.status));
        }
        Ok(())
    }
}

impl DeviceClass for ForceTorqueSensor {
    fn name(&self) -> &DeviceName {
        &self.name
    }
    fn kind(&self) -> &'static str {
        "ft"
    }
    fn ports(&self) -> ClassPorts {
        let port = PortInfo::wrench(&format!("ft{}", self.name.position)).doc(&format!("{}: force/torque Fx Fy Fz (N) Tx Ty Tz (N·m) in the sensor frame", self.name));
        ClassPorts { outputs: vec![port], ..ClassPorts::default() }
    }
    fn read_inputs(&mut self, inputs: &[u8]) {
        ForceTorqueSensor::read_inputs(self, inputs)
    }
    fn write_measurements(&self, outputs: &mut [Value]) {
        for (c, x) in self.wrench.iter().enumerate() {
            write_real(&mut outputs[0], c, *x);
        }
    }
    fn write_outputs(&mut self, outputs: &mut [u8]) {
        ForceTorqueSensor::write_outputs(self, outputs)
    }
    fn fault(&self) -> Option<String> {
        self.check().err()
    }
    fn bias(&mut self) {
        ForceTorqueSensor::bias(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_scale_to_newtons_and_bias_pulses() {
        let mut ft = ForceTorqueSensor::new(DeviceName { position: 11, name: "SIM-FT".into() }, FtScaling { counts_per_newton: 1e6, counts_per_newton_metre: 1e6 / 0.05 });
        let mut image = [0u8; INPUT_BYTES];
        image[8..12].copy_from_slice(&(-12_500_000i32).to_le_bytes());
        image[12..16].copy_from_slice(&(20_000_000i32).to_le_bytes());
        ft.read_inputs(&image);
        assert_eq!(ft.wrench()[2], -12.5);
        assert_eq!(ft.wrench()[3], 1.0);
        assert!(ft.check().is_ok());
        image[24..28].copy_from_slice(&status::ERROR.to_le_bytes());
        ft.read_inputs(&image);
        assert!(ft.check().unwrap_err().contains("device 11 'SIM-FT': force/torque sensor reports an error"));
        let mut out = [0u8; 4];
        ft.bias();
        for _ in 0..BIAS_CYCLES {
            ft.write_outputs(&mut out);
            assert_eq!(out[0], 1);
        }
        ft.write_outputs(&mut out);
        assert_eq!(out[0], 0);
        assert!(FtScaling { counts_per_newton: 0.0, counts_per_newton_metre: 1.0 }.check().is_err());
    }
}
