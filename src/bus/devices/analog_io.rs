//! Analog I/O terminals: EL3xxx-style inputs (per channel a status word and a 16-bit value)
//! and EL4xxx-style outputs (per channel a 16-bit value), in volts or milliamperes over a
//! configurable range.

use super::pd;
use super::DeviceName;

/// How raw counts map to a physical value: `raw_low..=raw_high` ⇄ `low..=high`, linearly.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AnalogRange {
    pub low: f64,
    pub high: f64,
    pub raw_low: i16,
    pub raw_high: i16,
    pub unit: &'static str,
}

impl AnalogRange {
    /// ±10 V: −10 V = 0x8001, +10 V = 0x7FFF (EL3102, EL4132).
    pub const VOLTS_PM10: AnalogRange = AnalogRange { low: -10.0, high: 10.0, raw_low: -32767, raw_high: 32767, unit: "V" };
    /// 0…10 V: 0x7FFF = 10 V (EL3162, EL4102).
    pub const VOLTS_0_10: AnalogRange = AnalogRange { low: 0.0, high: 10.0, raw_low: 0, raw_high: 32767, unit: "V" };
    /// 0…20 mA (EL3142, EL4112).
    pub const MA_0_20: AnalogRange = AnalogRange { low: 0.0, high: 20.0, raw_low: 0, raw_high: 32767, unit: "mA" };
    /// 4…20 mA (EL3152, EL4122).
    pub const MA_4_20: AnalogRange = AnalogRange { low: 4.0, high: 20.0, raw_low: 0, raw_high: 32767, unit: "mA" };

    /// A range by name: "+-10V", "0-10V", "0-20mA", "4-20mA".
    pub fn parse(s: &str) -> Result<AnalogRange, String> {
        match s.replace(' ', "").to_ascii_lowercase().as_str() {
            "+-10v" | "±10v" | "-10-10v" => Ok(Self::VOLTS_PM10),
            "0-10v" => Ok(Self::VOLTS_0_10),
            "0-20ma" => Ok(Self::MA_0_20),
            "4-20ma" => Ok(Self::MA_4_20),
            _ => Err(format!("unknown analog range '{s}': use \"+-10V\", \"0-10V\", \"0-20mA\" or \"4-20mA\"")),
        }
    }

    pub fn to_si(&self, raw: i16) -> f64 {
        let span = f64::from(self.raw_high) - f64::from(self.raw_low);
        self.low + (f64::from(raw) - f64::from(self.raw_low)) * (self.high - self.low) / span
    }

    /// Counts for `x`, or `None` outside the range (or not finite).
    pub fn to_raw(&self, x: f64) -> Option<i16> {
        if !(x.is_finite() && x >= self.low && x <= self.high) {
            return None;
        }
        let span = f64::from(self.raw_high) - f64::from(self.raw_low);
        Some((f64::from(self.raw_low) + (x - self.low) * span / (self.high - self.low)).round() as i16)
    }
}

impl std::fmt::Display for AnalogRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}…{} {}", self.low, self.high, self.unit)
    }
}

/// Most channels of one analog terminal.
pub const MAX_ANALOG_CHANNELS: usize = 16;

/// Status word bits of an analog input channel (EL31xx).
pub mod status {
    pub const UNDERRANGE: u16 = 1 << 0;
    pub const OVERRANGE: u16 = 1 << 1;
    /// Wire break, or out of the measuring range far enough to be no measurement.
    pub const ERROR: u16 = 1 << 6;
}

/// What both kinds of analog terminal are: a device with channels over a range.
#[derive(Debug, Clone)]
pub struct AnalogTerminal {
    name: DeviceName,
    range: AnalogRange,
    channels: usize,
}

impl AnalogTerminal {
    fn new(name: DeviceName, channels: usize, range: AnalogRange) -> Self {
        Self { name, range, channels: channels.min(MAX_ANALOG_CHANNELS) }
    }
    pub fn name(&self) -> &DeviceName {
        &self.name
    }
    pub fn channels(&self) -> usize {
        self.channels
    }
    pub fn range(&self) -> AnalogRange {
        self.range
    }
}

/// Analog inputs: 4 process-data bytes per channel (status word, value).
#[derive(Debug, Clone)]
pub struct AnalogInputs {
    terminal: AnalogTerminal,
    values: [f64; MAX_ANALOG_CHANNELS],
    status: [u16; MAX_ANALOG_CHANNELS],
}

impl AnalogInputs {
    pub const BYTES_PER_CHANNEL: usize = 4;

    pub fn new(name: DeviceName, channels: usize, range: AnalogRange) -> Self {
        Self { terminal: AnalogTerminal::new(name, channels, range), values: [0.0; MAX_ANALOG_CHANNELS], status: [0; MAX_ANALOG_CHANNELS] }
    }
    /// A channel in error (e.g. a wire break on 4…20 mA) reads NaN: no measurement.
    pub fn read_inputs(&mut self, inputs: &[u8]) {
        for c in 0..self.terminal.channels {
            let at = c * Self::BYTES_PER_CHANNEL;
            let status = pd::u16_at(inputs, at);
            self.status[c] = status;
            self.values[c] = if status & status::ERROR != 0 { f64::NAN } else { self.terminal.range.to_si(pd::i16_at(inputs, at + 2)) };
        }
    }
    /// Measured values in the range's unit, channel 1 first.
    pub fn values(&self) -> &[f64] {
        &self.values[..self.terminal.channels]
    }
    pub fn status(&self) -> &[u16] {
        &self.status[..self.terminal.channels]
    }
}

/// Analog outputs: 2 process-data bytes per channel. All channels start at the range's low
/// end (0 V, 4 mA) and hold their last command.
#[derive(Debug, Clone)]
pub struct AnalogOutputs {
    terminal: AnalogTerminal,
    raw: [i16; MAX_ANALOG_CHANNELS],
}

impl AnalogOutputs {
    pub const BYTES_PER_CHANNEL: usize = 2;

    pub fn new(name: DeviceName, channels: usize, range: AnalogRange) -> Self {
        let zero = range.to_raw(0.0_f64.clamp(range.low, range.high)).unwrap_or(0);
        Self { terminal: AnalogTerminal::new(name, channels, range), raw: [zero; MAX_ANALOG_CHANNELS] }
    }
    /// The commanded values in the range's unit.
    pub fn values(&self) -> impl Iterator<Item = f64> + '_ {
        self.raw[..self.terminal.channels].iter().map(|r| self.terminal.range.to_si(*r))
    }

    /// Sets channel `channel` (0-based); a value outside the range is refused and the channel
    /// keeps its value. Allocates only for the message.
    pub fn command(&mut self, channel: usize, value: f64) -> Result<(), String> {
        if channel >= self.terminal.channels {
            return Err(format!("{}: no analog output channel {} (it has {})", self.terminal.name, channel + 1, self.terminal.channels));
        }
        match self.terminal.range.to_raw(value) {
            Some(raw) => {
                self.raw[channel] = raw;
                Ok(())
            }
            None => Err(format!("{}: analog output {} = {value} {} is outside its range {}; holding", self.terminal.name, channel + 1, self.terminal.range.unit, self.terminal.range)),
        }
    }

    pub fn write_outputs(&self, outputs: &mut [u8]) {
        for c in 0..self.terminal.channels {
            pd::put(outputs, c * Self::BYTES_PER_CHANNEL, &self.raw[c].to_le_bytes());
        }
    }
}

impl std::ops::Deref for AnalogInputs {
    type Target = AnalogTerminal;
    fn deref(&self) -> &AnalogTerminal {
        &self.terminal
    }
}

impl std::ops::Deref for AnalogOutputs {
    type Target = AnalogTerminal;
    fn deref(&self) -> &AnalogTerminal {
        &self.terminal
    }
}

/// Range and direction of Beckhoff analog terminals by terminal number (product code >> 16),
/// for terminals the identity says enough about. `true`: inputs.
pub fn beckhoff_analog(terminal: u32) -> Option<(bool, AnalogRange)> {
    match terminal {
        3001..=3004 | 3101..=3104 => Some((true, AnalogRange::VOLTS_PM10)),
        3061..=3064 | 3161..=3164 => Some((true, AnalogRange::VOLTS_0_10)),
        3041..=3044 | 3141..=3144 => Some((true, AnalogRange::MA_0_20)),
        3051..=3054 | 3151..=3154 => Some((true, AnalogRange::MA_4_20)),
        4001..=4004 | 4101..=4104 => Some((false, AnalogRange::VOLTS_0_10)),
        4031..=4034 | 4131..=4134 => Some((false, AnalogRange::VOLTS_PM10)),
        4011..=4014 | 4111..=4114 => Some((false, AnalogRange::MA_0_20)),
        4021..=4024 | 4121..=4124 => Some((false, AnalogRange::MA_4_20)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name() -> DeviceName {
        DeviceName { position: 9, name: "SIM-AO4".into() }
    }

    #[test]
    fn ranges_scale_both_ways() {
        let r = AnalogRange::VOLTS_PM10;
        assert_eq!(r.to_raw(10.0), Some(32767));
        assert_eq!(r.to_raw(-10.0), Some(-32767));
        assert!((r.to_si(16384) - 5.0).abs() < 1e-3);
        let ma = AnalogRange::MA_4_20;
        assert_eq!(ma.to_raw(4.0), Some(0));
        assert!((ma.to_si(32767) - 20.0).abs() < 1e-12);
        assert_eq!(ma.to_raw(3.0), None);
        assert_eq!(AnalogRange::parse("4-20 mA").unwrap(), ma);
        assert!(AnalogRange::parse("5V").unwrap_err().contains("0-10V"));
    }

    #[test]
    fn outputs_refuse_values_outside_the_range_and_inputs_flag_errors() {
        let mut o = AnalogOutputs::new(name(), 2, AnalogRange::VOLTS_0_10);
        o.command(1, 2.5).unwrap();
        let err = o.command(0, 11.0).unwrap_err();
        assert!(err.contains("device 9 'SIM-AO4'") && err.contains("0…10 V"), "{err}");
        assert!(o.command(2, 1.0).unwrap_err().contains("no analog output channel 3"));
        let mut b = [0u8; 4];
        o.write_outputs(&mut b);
        assert_eq!(i16::from_le_bytes([b[2], b[3]]), 8192);
        let mut i = AnalogInputs::new(name(), 2, AnalogRange::VOLTS_PM10);
        let mut image = [0u8; 8];
        image[2..4].copy_from_slice(&(-16384i16).to_le_bytes());
        image[4..6].copy_from_slice(&status::ERROR.to_le_bytes());
        i.read_inputs(&image);
        assert!((i.values()[0] + 5.0).abs() < 1e-3);
        assert!(i.values()[1].is_nan());
    }
}
