//! Simulated analog terminals: inputs whose values a test (or Lua) sets, and outputs that
//! record what the master commands and fall to their safe value (raw 0) outside Op.

use super::process_data::FixedProcessData;
use morc_ecat_wire::profiles::analog_io::{status, AnalogRange, MAX_ANALOG_CHANNELS};

/// Analog input terminal: per channel a status word and a 16-bit value.
#[derive(Debug, Clone)]
pub struct SimAnalogInputs {
    range: AnalogRange,
    channels: usize,
    raw: [i16; MAX_ANALOG_CHANNELS],
    status: [u16; MAX_ANALOG_CHANNELS],
}

impl SimAnalogInputs {
    /// A terminal with `channels` inputs (at most 16) measuring in `range`, all reading 0 counts.
    pub fn new(channels: usize, range: AnalogRange) -> Self {
        Self { range, channels: channels.min(MAX_ANALOG_CHANNELS), raw: [0; MAX_ANALOG_CHANNELS], status: [0; MAX_ANALOG_CHANNELS] }
    }
    /// Number of channels.
    pub fn channels(&self) -> usize {
        self.channels
    }
    /// The measuring range.
    pub fn range(&self) -> AnalogRange {
        self.range
    }
    /// Sets channel `channel` (0-based) to `value` in the range's unit; beyond the range the
    /// value is clipped and the under/overrange bit set, as a real terminal does.
    pub fn set_value(&mut self, channel: usize, value: f64) {
        if channel >= self.channels {
            return;
        }
        let clipped = value.clamp(self.range.low, self.range.high);
        self.raw[channel] = self.range.to_raw(clipped).unwrap_or(0);
        self.status[channel] = if value < self.range.low {
            status::UNDERRANGE
        } else if value > self.range.high {
            status::OVERRANGE
        } else {
            0
        };
    }
    /// A broken wire (or any channel error): the error bit, no value.
    pub fn set_error(&mut self, channel: usize, error: bool) {
        if let Some(s) = self.status.get_mut(channel) {
            *s = if error { status::ERROR } else { 0 };
        }
    }
    /// The value channel `channel` (0-based) reports, in the range's unit; NaN for no such channel.
    pub fn value(&self, channel: usize) -> f64 {
        self.raw.get(channel).map_or(f64::NAN, |r| self.range.to_si(*r))
    }
}

impl FixedProcessData for SimAnalogInputs {
    fn send(&self, inputs: &mut [u8]) {
        for c in 0..self.channels {
            if let Some(b) = inputs.get_mut(4 * c..4 * c + 4) {
                b[..2].copy_from_slice(&self.status[c].to_le_bytes());
                b[2..].copy_from_slice(&self.raw[c].to_le_bytes());
            }
        }
    }
}

/// Analog output terminal: a 16-bit value per channel.
#[derive(Debug, Clone)]
pub struct SimAnalogOutputs {
    range: AnalogRange,
    channels: usize,
    raw: [i16; MAX_ANALOG_CHANNELS],
}

impl SimAnalogOutputs {
    /// A terminal with `channels` outputs (at most 16) driving `range`, all at 0 counts.
    pub fn new(channels: usize, range: AnalogRange) -> Self {
        Self { range, channels: channels.min(MAX_ANALOG_CHANNELS), raw: [0; MAX_ANALOG_CHANNELS] }
    }
    /// Number of channels.
    pub fn channels(&self) -> usize {
        self.channels
    }
    /// The output of channel `channel` (0-based) in the range's unit.
    pub fn value(&self, channel: usize) -> f64 {
        self.raw.get(channel).map_or(f64::NAN, |r| self.range.to_si(*r))
    }
    /// The counts the master last wrote to channel `channel` (0-based); 0 for no such channel.
    pub fn raw(&self, channel: usize) -> i16 {
        self.raw.get(channel).copied().unwrap_or(0)
    }
}

impl FixedProcessData for SimAnalogOutputs {
    fn receive(&mut self, outputs: &[u8]) {
        for c in 0..self.channels {
            if let Some(b) = outputs.get(2 * c..2 * c + 2) {
                self.raw[c] = i16::from_le_bytes([b[0], b[1]]);
            }
        }
    }
    fn outputs_invalid(&mut self) {
        self.raw = [0; MAX_ANALOG_CHANNELS];
    }
}
