//! Incremental encoder terminals (Beckhoff EL5101-style; wire layout in
//! [`morc_ecat_wire::profiles::encoder`]): the terminal's counter as a position. What an
//! elastic-joint robot needs to see its link: the drive's encoder sees the motor, an encoder on
//! the link side of the gear sees where the link went.
//!
//! The counter is 32 bits (the "Standard 32 Bit" assignment) or 16 (the EL5101's default,
//! "Standard 16 Bit"; the class reads whichever the terminal maps) and wraps. The class unwraps
//! it into a 64-bit count, taking each cycle's step the shorter way round: the encoder must
//! move less than half the counter's range per cycle (2^31 counts, or 2^15 with the 16-bit
//! counter; an EL5101 counts at most 4·10^6 increments/s, 4000 per 1 ms cycle). The first
//! reading counts up from 0, the counter taken as signed: a terminal keeps its count while it
//! is powered, so a restarted controller reads the position it left. While the terminal marks
//! its inputs invalid (TxPDO state) the count holds, and the class reports a fault.
//!
//! Position (rad) = ±count / (counts_per_rev · gear) · 2π + offset (− when `reversed`).

use super::{pd, write_real};
use super::{ClassPorts, DeviceClass, DeviceName};
use morc_ecat_wire::profiles::encoder::{COUNTER_AT, STATUS_AT};
use morc_kernel::{PortInfo, Value, ValueType};
use std::f64::consts::TAU;

pub use morc_ecat_wire::profiles::encoder::{control, status, Layout, EL5101, VENDOR_ID};

/// How counts become a position.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EncoderScaling {
    /// Counts per encoder revolution, after the terminal's evaluation (4-fold by default: a
    /// 1024-line encoder gives 4096).
    pub counts_per_rev: f64,
    /// Encoder revolutions per revolution of what it measures (1 on the link itself).
    pub gear: f64,
    /// The position grows when the counter falls.
    pub reversed: bool,
    /// Position (rad) at count 0.
    pub offset: f64,
}

impl Default for EncoderScaling {
    /// 4096 counts per revolution (a 1024-line encoder, 4-fold evaluation), gear 1, not
    /// reversed, no offset: what a terminal found by its identity gets unless the bus
    /// configuration says otherwise.
    fn default() -> Self {
        Self { counts_per_rev: 4096.0, gear: 1.0, reversed: false, offset: 0.0 }
    }
}

impl EncoderScaling {
    /// Refuses counts per revolution or gear that are not finite and positive, and an offset that is not finite.
    pub fn check(&self) -> Result<(), String> {
        let positive = |x: f64| x.is_finite() && x > 0.0;
        if positive(self.counts_per_rev) && positive(self.gear) && self.offset.is_finite() {
            Ok(())
        } else {
            Err(format!("encoder scaling must be finite and positive: counts_per_rev {}, gear {}, offset {}", self.counts_per_rev, self.gear, self.offset))
        }
    }
    /// The position (rad) at `count`.
    pub fn position(&self, count: i64) -> f64 {
        let sign = if self.reversed { -1.0 } else { 1.0 };
        sign * count as f64 / (self.counts_per_rev * self.gear) * TAU + self.offset
    }
}

/// The master's side of an incremental encoder terminal.
#[derive(Debug, Clone)]
pub struct IncrementalEncoder {
    name: DeviceName,
    scaling: EncoderScaling,
    layout: Layout,
    status: u16,
    /// The last valid counter reading (the low 16 bits with the 16-bit counter).
    raw: u32,
    /// The counter unwrapped.
    count: i64,
}

impl IncrementalEncoder {
    /// The class for a terminal mapping `input_bytes` and `output_bytes` (one of the two
    /// [`Layout`]s), at count 0 before the first cycle.
    pub fn new(name: DeviceName, scaling: EncoderScaling, input_bytes: usize, output_bytes: usize) -> Result<Self, String> {
        scaling.check().map_err(|e| format!("{name}: {e}"))?;
        let Some(layout) = Layout::from_sizes(input_bytes, output_bytes) else {
            let (wide, compact) = (Layout::Standard32, Layout::Compact16);
            return Err(format!(
                "{name}: an incremental encoder terminal maps {} input and {} output bytes (Standard 32 Bit: PDOs 0x1A04, 0x1603) or {} and {} (Standard 16 Bit: 0x1A03, 0x1602); the device maps {input_bytes} and {output_bytes}: choose one of these in its PDO assignment",
                wide.input_bytes(),
                wide.output_bytes(),
                compact.input_bytes(),
                compact.output_bytes()
            ));
        };
        Ok(Self { name, scaling, layout, status: 0, raw: 0, count: 0 })
    }
    /// Its scaling.
    pub fn scaling(&self) -> EncoderScaling {
        self.scaling
    }
    /// The process-data layout the terminal maps.
    pub fn layout(&self) -> Layout {
        self.layout
    }
    /// Status word as last received ([`status`] bits).
    pub fn status(&self) -> u16 {
        self.status
    }
    /// The counter unwrapped: counts since 0, in 64 bits.
    pub fn count(&self) -> i64 {
        self.count
    }
    /// The position (rad), from [`count`](Self::count) through the scaling.
    pub fn position(&self) -> f64 {
        self.scaling.position(self.count)
    }

    /// `x` as a signed number of the counter's width: a difference of two readings becomes the
    /// shorter step between them.
    fn signed(&self, x: u32) -> i64 {
        match self.layout {
            Layout::Standard32 => i64::from(x as i32),
            Layout::Compact16 => i64::from(x as u16 as i16),
        }
    }

    /// Decodes this cycle's inputs: the status word, and the counter's step since the last
    /// valid reading (none while the inputs are marked invalid).
    pub fn read_inputs(&mut self, inputs: &[u8]) {
        self.status = pd::u16_at(inputs, STATUS_AT);
        if self.status & status::TXPDO_STATE != 0 {
            return;
        }
        let raw = match self.layout {
            Layout::Standard32 => pd::u32_at(inputs, COUNTER_AT),
            Layout::Compact16 => u32::from(pd::u16_at(inputs, COUNTER_AT)),
        };
        self.count = self.count.saturating_add(self.signed(raw.wrapping_sub(self.raw)));
        self.raw = raw;
    }

    /// A fault to report: inputs marked invalid, or an open circuit (allocates only when it reports).
    pub fn check(&self) -> Result<(), String> {
        if self.status & status::TXPDO_STATE != 0 {
            return Err(format!(
                "{}: the encoder terminal marks its inputs invalid (TxPDO state, status 0x{:04X}); the position holds at {:.4} rad; check the encoder's supply and cable and the terminal's diagnostics, then reset faults",
                self.name,
                self.status,
                self.position()
            ));
        }
        if self.status & status::OPEN_CIRCUIT != 0 {
            return Err(format!("{}: open circuit on the encoder's tracks (status 0x{:04X}); check the encoder cable and its connector, then reset faults", self.name, self.status));
        }
        Ok(())
    }
}

impl DeviceClass for IncrementalEncoder {
    fn name(&self) -> &DeviceName {
        &self.name
    }
    fn kind(&self) -> &'static str {
        "enc"
    }
    fn ports(&self) -> ClassPorts {
        let s = self.scaling;
        let port = PortInfo::new(&format!("enc{}", self.name.position), ValueType::Real).unit("rad").doc(&format!(
            "{}: position from the incremental encoder's counter (rad): {}count / ({} counts/rev × gear {}) · 2π + {} rad; the terminal's {}-bit counter unwrapped",
            self.name,
            if s.reversed { "−" } else { "" },
            s.counts_per_rev,
            s.gear,
            s.offset,
            self.layout.counter_bits()
        ));
        ClassPorts { outputs: vec![port], ..ClassPorts::default() }
    }
    fn read_inputs(&mut self, inputs: &[u8]) {
        IncrementalEncoder::read_inputs(self, inputs)
    }
    fn write_measurements(&self, outputs: &mut [Value]) {
        write_real(&mut outputs[0], 0, self.position());
    }
    /// Control word and set counter value stay 0: the class never sets the counter.
    fn write_outputs(&mut self, outputs: &mut [u8]) {
        outputs.fill(0);
    }
    fn fault(&self) -> Option<String> {
        self.check().err()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name() -> DeviceName {
        DeviceName { position: 9, name: "EL5101".into() }
    }

    /// A 32-bit input image: status word, counter, latch 0.
    fn image(status: u16, counter: u32) -> [u8; 10] {
        let mut b = [0u8; 10];
        b[..2].copy_from_slice(&status.to_le_bytes());
        b[2..6].copy_from_slice(&counter.to_le_bytes());
        b
    }

    #[test]
    fn the_32_bit_counter_unwraps_both_ways_into_64_bits() {
        let mut e = IncrementalEncoder::new(name(), EncoderScaling::default(), 10, 6).unwrap();
        assert_eq!(e.layout(), Layout::Standard32);
        e.read_inputs(&image(0, u32::MAX - 5));
        assert_eq!(e.count(), -6, "the first reading is the counter taken as signed");
        e.read_inputs(&image(0, 10));
        assert_eq!(e.count(), 10, "forward across the wrap");
        // Up past the 32-bit range in steps under half of it.
        for raw in [2_000_000_000u32, 4_000_000_000, 705_032_704] {
            e.read_inputs(&image(0, raw));
        }
        assert_eq!(e.count(), 5_000_000_000);
        e.read_inputs(&image(0, 4_000_000_000));
        assert_eq!(e.count(), 4_000_000_000, "back across the wrap");
    }

    #[test]
    fn the_16_bit_default_layout_unwraps_too() {
        let mut e = IncrementalEncoder::new(name(), EncoderScaling::default(), 6, 4).unwrap();
        assert_eq!(e.layout(), Layout::Compact16);
        let mut count = 0i64;
        let mut raw = 0u16;
        for _ in 0..100 {
            raw = raw.wrapping_add(30_000);
            count += 30_000;
            let mut b = [0u8; 6];
            b[2..4].copy_from_slice(&raw.to_le_bytes());
            b[4..6].copy_from_slice(&0xBEEFu16.to_le_bytes());
            e.read_inputs(&b);
        }
        assert_eq!(e.count(), count, "3·10^6 counts through a 16-bit counter");
        let mut out = [0xFFu8; 4];
        e.write_outputs(&mut out);
        assert_eq!(out, [0; 4], "never sets the counter");
    }

    #[test]
    fn counts_scale_to_radians_with_gear_sign_and_offset() {
        let scaling = EncoderScaling { counts_per_rev: 1000.0, gear: 2.0, reversed: true, offset: 0.5 };
        let mut e = IncrementalEncoder::new(name(), scaling, 10, 6).unwrap();
        e.read_inputs(&image(0, 500));
        assert!((e.position() - (0.5 - TAU / 4.0)).abs() < 1e-12, "{}", e.position());
        assert_eq!(EncoderScaling::default().position(4096), TAU);
        assert!(EncoderScaling { gear: 0.0, ..scaling }.check().is_err());
        let err = IncrementalEncoder::new(name(), EncoderScaling { counts_per_rev: f64::NAN, ..scaling }, 10, 6).unwrap_err();
        assert!(err.starts_with("device 9 'EL5101': encoder scaling must be finite and positive"), "{err}");
        let err = IncrementalEncoder::new(name(), scaling, 5, 3).unwrap_err();
        assert!(err.contains("maps 10 input and 6 output bytes") && err.contains("the device maps 5 and 3"), "{err}");
        let ports = e.ports();
        assert_eq!((ports.outputs[0].name.as_str(), ports.outputs[0].unit.as_str()), ("enc9", "rad"));
    }

    #[test]
    fn invalid_inputs_hold_the_count_and_report_a_fault() {
        let mut e = IncrementalEncoder::new(name(), EncoderScaling::default(), 10, 6).unwrap();
        e.read_inputs(&image(0, 4096));
        assert!(e.check().is_ok());
        e.read_inputs(&image(status::TXPDO_STATE, 0xDEAD_BEEF));
        assert_eq!(e.count(), 4096, "held");
        let err = e.fault().unwrap();
        assert!(err.starts_with("device 9 'EL5101': the encoder terminal marks its inputs invalid (TxPDO state, status 0x4000); the position holds at 6.2832 rad"), "{err}");
        e.read_inputs(&image(0, 4096 + 10));
        assert_eq!((e.count(), e.fault()), (4106, None), "counts on from the last valid reading");
        e.read_inputs(&image(status::OPEN_CIRCUIT, 4106));
        assert!(e.fault().unwrap().contains("open circuit on the encoder's tracks (status 0x0040)"));
    }
}
