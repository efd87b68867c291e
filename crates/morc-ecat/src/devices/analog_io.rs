//! Analog I/O terminals: EL3xxx-style inputs (per channel a status word and a 16-bit value)
//! and EL4xxx-style outputs (per channel a 16-bit value), in volts or milliamperes over a
//! configurable range.

use super::{pd, read_real, vector_type, write_real};
use super::{ClassPorts, DeviceClass, DeviceName};
use morc_kernel::{Commands, PortInfo, Value};

pub use morc_ecat_wire::profiles::analog_io::{status, AnalogRange, MAX_ANALOG_CHANNELS};

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
    /// Where the terminal sits and what it is.
    pub fn name(&self) -> &DeviceName {
        &self.name
    }
    /// Number of channels (at most 16).
    pub fn channels(&self) -> usize {
        self.channels
    }
    /// The range, mapping counts to volts or milliamperes.
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
    /// Process-data bytes per channel: status word (u16) and value (i16).
    pub const BYTES_PER_CHANNEL: usize = 4;

    /// A terminal with `channels` inputs (at most 16) over `range`, reading 0 before the first cycle.
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
    /// Status word per channel (EL3xxx bits: under/over range, error), channel 1 first.
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
    /// Process-data bytes per channel: value (i16).
    pub const BYTES_PER_CHANNEL: usize = 2;

    /// A terminal with `channels` outputs (at most 16) over `range`, at 0 clamped into the range (0 V, 4 mA) until commanded.
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

    /// Encodes the channels' counts into this cycle's outputs.
    pub fn write_outputs(&self, outputs: &mut [u8]) {
        for c in 0..self.terminal.channels {
            pd::put(outputs, c * Self::BYTES_PER_CHANNEL, &self.raw[c].to_le_bytes());
        }
    }
}

impl DeviceClass for AnalogInputs {
    fn name(&self) -> &DeviceName {
        &self.terminal.name
    }
    fn kind(&self) -> &'static str {
        "ain"
    }
    fn ports(&self) -> ClassPorts {
        let (t, r) = (&self.terminal, self.terminal.range);
        let port = PortInfo::new(&format!("ain{}", t.name.position), vector_type(t.channels))
            .unit(r.unit)
            .doc(&format!("{}: {} analog inputs, {r}; NaN on a channel error (wire break)", t.name, t.channels));
        ClassPorts { outputs: vec![port], ..ClassPorts::default() }
    }
    fn read_inputs(&mut self, inputs: &[u8]) {
        AnalogInputs::read_inputs(self, inputs)
    }
    fn write_measurements(&self, outputs: &mut [Value]) {
        for (c, x) in self.values().iter().enumerate() {
            write_real(&mut outputs[0], c, *x);
        }
    }
    fn write_outputs(&mut self, _outputs: &mut [u8]) {}
}

impl DeviceClass for AnalogOutputs {
    fn name(&self) -> &DeviceName {
        &self.terminal.name
    }
    fn kind(&self) -> &'static str {
        "aout"
    }
    fn ports(&self) -> ClassPorts {
        let (t, r) = (&self.terminal, self.terminal.range);
        let port = PortInfo::new(&format!("aout{}", t.name.position), vector_type(t.channels))
            .unit(r.unit)
            .doc(&format!("{}: {} analog outputs, {r}; held when not driven", t.name, t.channels));
        ClassPorts { inputs: vec![port], ..ClassPorts::default() }
    }
    fn read_inputs(&mut self, _inputs: &[u8]) {}
    fn command(&mut self, commands: Option<Commands>, first: usize) -> Result<(), String> {
        let mut result = Ok(());
        if let Some(v) = commands.and_then(|c| c.get(first)) {
            for channel in 0..self.terminal.channels {
                if let Err(e) = AnalogOutputs::command(self, channel, read_real(v, channel)) {
                    result = Err(e);
                }
            }
        }
        result
    }
    fn write_outputs(&mut self, outputs: &mut [u8]) {
        AnalogOutputs::write_outputs(self, outputs)
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
pub(crate) fn beckhoff_analog(terminal: u32) -> Option<(bool, AnalogRange)> {
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
