//! A simulated 6-axis force/torque sensor (the layout of
//! [`morc_ecat_wire::profiles::force_torque`]): the load on it is set from outside (a test, Lua,
//! or a simulated contact), bias (tare) on the control word's rising edge, saturation and an
//! injectable error in the status word, calibration in CoE objects 0x2040:31/32.

use super::mailbox::{Access, ObjectDictionary};
use super::process_data::{add_fixed_pdo_objects, FixedProcessData};
use super::sii::Identity;
use morc_ecat_wire::profiles::force_torque::{control, obj, status};
use std::sync::Arc;

use super::feed::SensorFeed;

/// Counts per newton and per newton-metre of the simulated sensor (ATI Axia80-like).
pub const COUNTS_PER_NEWTON: u32 = 1_000_000;
pub const COUNTS_PER_NEWTON_METRE: u32 = 1_000_000;
/// Calibrated range: beyond it a gauge saturates.
pub const RANGE_NEWTON: f64 = 500.0;
pub const RANGE_NEWTON_METRE: f64 = 20.0;

/// A simulated 6-axis force/torque sensor (see the module doc): load in, counts out, bias on request.
#[derive(Debug, Clone, Default)]
pub struct SimForceSensor {
    load: [f64; 6],
    bias: [f64; 6],
    last_control: u32,
    error: bool,
    samples: u32,
    biases: u32,
    /// Where the load comes from each cycle, when a simulated world feeds it.
    feed: Option<Arc<SensorFeed>>,
}

impl SimForceSensor {
    /// A sensor whose load is `feed`'s wrench, read every cycle (the simulated robot's wrist).
    pub fn fed(feed: Arc<SensorFeed>) -> SimForceSensor {
        SimForceSensor { feed: Some(feed), ..SimForceSensor::default() }
    }
    /// The load on the sensor: Fx Fy Fz (N), Tx Ty Tz (N·m).
    pub fn set_load(&mut self, wrench: [f64; 6]) {
        self.load = wrench;
    }
    /// The load last set: Fx Fy Fz (N), Tx Ty Tz (N·m).
    pub fn load(&self) -> [f64; 6] {
        self.load
    }
    /// The sensor's own monitoring reports a fault (status bit 31).
    pub fn set_error(&mut self, error: bool) {
        self.error = error;
    }
    /// Times the master biased it.
    pub fn biases(&self) -> u32 {
        self.biases
    }

    /// Its CoE objects: identity, calibration, fixed PDO mapping.
    pub fn objects(identity: Identity) -> ObjectDictionary {
        use Access::ReadOnly;
        let mut od = ObjectDictionary::new();
        od.add_var(0x1000, "Device type", &0u32.to_le_bytes(), ReadOnly);
        od.add_identity(&identity);
        let mut calibration: Vec<(Vec<u8>, Access)> = vec![(vec![0; 4], ReadOnly); 0x32];
        calibration[usize::from(obj::COUNTS_PER_FORCE.1) - 1].0 = COUNTS_PER_NEWTON.to_le_bytes().to_vec();
        calibration[usize::from(obj::COUNTS_PER_TORQUE.1) - 1].0 = COUNTS_PER_NEWTON_METRE.to_le_bytes().to_vec();
        let subs: Vec<(&[u8], Access)> = calibration.iter().map(|(v, a)| (&v[..], *a)).collect();
        od.add_record(obj::COUNTS_PER_FORCE.0, "Calibration", ReadOnly, &subs);
        let tx: Vec<(u16, u8, u8)> = (1..=6).map(|s| (0x6000, s, 32)).chain([(0x6010, 0, 32), (0x6020, 0, 32)]).collect();
        add_fixed_pdo_objects(&mut od, &[(0x7010, 1, 32)], &tx);
        od
    }

    fn counts(&self, i: usize) -> (i32, bool) {
        let (per, range) = if i < 3 { (f64::from(COUNTS_PER_NEWTON), RANGE_NEWTON) } else { (f64::from(COUNTS_PER_NEWTON_METRE), RANGE_NEWTON_METRE) };
        let saturated = self.load[i].abs() > range;
        let measured = self.load[i].clamp(-range, range) - self.bias[i];
        ((measured * per).round() as i32, saturated)
    }
}

impl FixedProcessData for SimForceSensor {
    fn receive(&mut self, outputs: &[u8]) {
        let word = outputs.get(..4).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        if word & control::BIAS != 0 && self.last_control & control::BIAS == 0 {
            self.bias = self.load;
            self.biases += 1;
        }
        self.last_control = word;
    }

    fn step(&mut self, _dt_ns: u64) {
        if let Some(feed) = &self.feed {
            self.load = feed.wrench();
        }
        self.samples = self.samples.wrapping_add(1);
    }

    fn send(&self, inputs: &mut [u8]) {
        let mut word = if self.error { status::ERROR } else { 0 };
        for i in 0..6 {
            let (counts, saturated) = self.counts(i);
            if saturated {
                word |= status::SATURATED;
            }
            if let Some(b) = inputs.get_mut(4 * i..4 * i + 4) {
                b.copy_from_slice(&counts.to_le_bytes());
            }
        }
        if let Some(b) = inputs.get_mut(24..32) {
            b[..4].copy_from_slice(&word.to_le_bytes());
            b[4..].copy_from_slice(&self.samples.to_le_bytes());
        }
    }
}
