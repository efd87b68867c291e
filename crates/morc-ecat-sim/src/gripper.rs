//! A simulated electric gripper with a vendor's own PDO layout, for which morc has no device
//! class: what the master's generic device (ports from the device's PDO description) is tested
//! on. Its PDOs name every entry, mix bits, integers and a float, and leave gaps, as real
//! vendor layouts do ([`COMMAND`], [`STATUS`]).
//!
//! Behaviour: enabled, its fingers move towards the target width at [`SPEED`] (0.01 mm/s);
//! closing on an object set from outside, they stop there and it reports holding. A grip
//! force outside 0…[`MAX_FORCE`] N latches a fault (not ready, fingers stop) until a rising
//! edge of Acknowledge with a valid force. Outputs going invalid (the bus leaves Op) disable it.

use super::mailbox::{Access, ObjectDictionary};
use super::process_data::{add_fixed_pdo_objects, FixedProcessData, PdoEntrySpec};
use morc_ecat_wire::data_type::{read_bits, write_bits, Number, BOOLEAN, INTEGER16, REAL32, UNSIGNED16};
use morc_ecat_wire::sii::Identity;

/// One entry of the gripper's PDOs: object, bits, CoE data type and name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GripperEntry {
    /// Object index (0 for a gap).
    pub index: u16,
    /// Subindex.
    pub sub: u8,
    /// Size in the process image (bits).
    pub bit_len: u8,
    /// CoE data type.
    pub data_type: u8,
    /// Name, as its EEPROM's strings hold it.
    pub name: &'static str,
}

const fn entry(index: u16, sub: u8, bit_len: u8, data_type: u8, name: &'static str) -> GripperEntry {
    GripperEntry { index, sub, bit_len, data_type, name }
}

/// Its RxPDO 0x1600 "Gripper Command": enable and acknowledge bits, a 6-bit gap, the target
/// width (UNSIGNED16, 0.01 mm) and the grip force (REAL32, N). 7 bytes.
pub const COMMAND: (u16, &str, [GripperEntry; 5]) = (
    0x1600,
    "Gripper Command",
    [
        entry(0x7000, 1, 1, BOOLEAN, "Enable"),
        entry(0x7000, 2, 1, BOOLEAN, "Acknowledge"),
        entry(0, 0, 6, 0, ""),
        entry(0x7000, 3, 16, UNSIGNED16, "Target Width"),
        entry(0x7000, 4, 32, REAL32, "Grip Force"),
    ],
);

/// Its TxPDO 0x1A00 "Gripper Status": ready, holding and fault bits, a 5-bit gap, the actual
/// width (UNSIGNED16, 0.01 mm) and the motor temperature (INTEGER16, 0.1 °C). 5 bytes.
pub const STATUS: (u16, &str, [GripperEntry; 6]) = (
    0x1A00,
    "Gripper Status",
    [
        entry(0x6000, 1, 1, BOOLEAN, "Ready"),
        entry(0x6000, 2, 1, BOOLEAN, "Holding"),
        entry(0x6000, 3, 1, BOOLEAN, "Fault"),
        entry(0, 0, 5, 0, ""),
        entry(0x6000, 4, 16, UNSIGNED16, "Actual Width"),
        entry(0x6000, 5, 16, INTEGER16, "Motor Temperature"),
    ],
);

/// Finger speed, 0.01 mm/s (100 mm/s).
pub const SPEED: f64 = 10_000.0;
/// Largest grip force it takes (N).
pub const MAX_FORCE: f64 = 140.0;
/// Fully open (0.01 mm): 80 mm.
pub const OPEN_WIDTH: f64 = 8_000.0;

/// Bit offset of entry `i` in `entries`.
fn offset(entries: &[GripperEntry], i: usize) -> usize {
    entries[..i].iter().map(|e| usize::from(e.bit_len)).sum()
}

/// The simulated gripper (see the module doc).
#[derive(Debug, Clone)]
pub struct SimGripper {
    enabled: bool,
    acknowledge: bool,
    target: f64,
    force: f64,
    width: f64,
    object: Option<f64>,
    fault: bool,
    temperature: f64,
}

impl Default for SimGripper {
    /// Fully open, disabled, at 25 °C, nothing between its fingers.
    fn default() -> Self {
        Self { enabled: false, acknowledge: false, target: OPEN_WIDTH, force: 0.0, width: OPEN_WIDTH, object: None, fault: false, temperature: 25.0 }
    }
}

impl SimGripper {
    /// Puts an object of `width` (0.01 mm) between the fingers, or takes it away.
    pub fn set_object(&mut self, width: Option<f64>) {
        self.object = width;
    }
    /// Sets the motor temperature (°C) it reports.
    pub fn set_temperature(&mut self, celsius: f64) {
        self.temperature = celsius;
    }
    /// The fingers' width (0.01 mm).
    pub fn width(&self) -> f64 {
        self.width
    }
    /// The grip force last commanded (N).
    pub fn force(&self) -> f64 {
        self.force
    }
    /// A fault is latched.
    pub fn fault(&self) -> bool {
        self.fault
    }
    /// Enabled by the master.
    pub fn enabled(&self) -> bool {
        self.enabled
    }
    /// Its CoE objects, for a gripper with a CoE mailbox: device type 0 (no profile), its
    /// identity, and the fixed PDO assignment and mapping of [`COMMAND`] and [`STATUS`].
    pub fn objects(identity: Identity) -> ObjectDictionary {
        let mut od = ObjectDictionary::new();
        od.add_var(0x1000, "Device type", &0u32.to_le_bytes(), Access::ReadOnly);
        od.add_identity(&identity);
        add_fixed_pdo_objects(&mut od, &Self::specs(&COMMAND.2), &Self::specs(&STATUS.2));
        od
    }
    /// `entries` as (index, sub-index, bits).
    pub fn specs(entries: &[GripperEntry]) -> Vec<PdoEntrySpec> {
        entries.iter().map(|e| (e.index, e.sub, e.bit_len)).collect()
    }
    fn holding(&self) -> bool {
        self.enabled && !self.fault && self.object.is_some_and(|o| self.width <= o && self.target < o)
    }
    fn force_valid(&self) -> bool {
        self.force.is_finite() && (0.0..=MAX_FORCE).contains(&self.force)
    }
}

impl FixedProcessData for SimGripper {
    fn receive(&mut self, outputs: &[u8]) {
        let entries = &COMMAND.2;
        let field = |i: usize| {
            let e = entries[i];
            Number::of(e.data_type, e.bit_len).map_or(0.0, |n| n.value(read_bits(outputs, offset(entries, i), e.bit_len), e.bit_len))
        };
        self.enabled = field(0) != 0.0;
        let acknowledge = field(1) != 0.0;
        self.target = field(3);
        self.force = field(4);
        if !self.force_valid() {
            self.fault = true;
        } else if acknowledge && !self.acknowledge {
            self.fault = false;
        }
        self.acknowledge = acknowledge;
    }

    fn send(&self, inputs: &mut [u8]) {
        let entries = &STATUS.2;
        let values =
            [f64::from(u8::from(self.enabled && !self.fault)), f64::from(u8::from(self.holding())), f64::from(u8::from(self.fault)), 0.0, self.width.round(), (self.temperature * 10.0).round()];
        for (i, (e, x)) in entries.iter().zip(values).enumerate() {
            if let Some(bits) = Number::of(e.data_type, e.bit_len).and_then(|n| n.bits(x, e.bit_len).ok()) {
                write_bits(inputs, offset(entries, i), e.bit_len, bits);
            }
        }
    }

    fn outputs_invalid(&mut self) {
        self.enabled = false;
    }

    fn step(&mut self, dt_ns: u64) {
        if !self.enabled || self.fault {
            return;
        }
        let step = SPEED * dt_ns as f64 * 1e-9;
        let floor = self.object.filter(|o| self.target < *o).unwrap_or(0.0);
        let goal = self.target.clamp(floor, OPEN_WIDTH);
        self.width = if self.width < goal { (self.width + step).min(goal) } else { (self.width - step).max(goal) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(enable: bool, acknowledge: bool, target: u16, force: f32) -> [u8; 7] {
        let mut b = [0u8; 7];
        b[0] = u8::from(enable) | u8::from(acknowledge) << 1;
        b[1..3].copy_from_slice(&target.to_le_bytes());
        b[3..7].copy_from_slice(&force.to_le_bytes());
        b
    }

    #[test]
    fn it_closes_on_an_object_and_latches_a_bad_force() {
        let mut g = SimGripper::default();
        g.set_object(Some(3000.0));
        g.receive(&command(true, false, 1000, 50.0));
        // 50 mm at 100 mm/s: 0.5 s.
        for _ in 0..600 {
            g.step(1_000_000);
        }
        assert_eq!(g.width(), 3000.0);
        let mut inputs = [0u8; 7];
        g.send(&mut inputs);
        assert_eq!(inputs[0] & 0b111, 0b011, "ready and holding");
        assert_eq!(u16::from_le_bytes([inputs[1], inputs[2]]), 3000);
        assert_eq!(i16::from_le_bytes([inputs[3], inputs[4]]), 250);
        g.receive(&command(true, false, 1000, 500.0));
        assert!(g.fault());
        g.receive(&command(true, true, 1000, 50.0));
        assert!(!g.fault(), "acknowledged with a valid force");
    }
}
