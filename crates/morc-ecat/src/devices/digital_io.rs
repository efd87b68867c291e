//! Digital I/O terminals (EL1xxx inputs, EL2xxx outputs, and any device whose process data is
//! a few bytes of bits one way): channel 1 is bit 0 of the first byte.

use super::pd;
use super::{ClassPorts, DeviceClass, DeviceName};
use morc_kernel::{Commands, PortInfo, Value, ValueType};

/// Digital outputs: an integer command, bit n = channel n+1. Held (kept) when there is no
/// command, and all off before the first one.
#[derive(Debug, Clone)]
pub struct DigitalOutputs {
    name: DeviceName,
    channels: u32,
    value: u64,
}

impl DigitalOutputs {
    /// A terminal with `channels` outputs (at most 64), all off.
    pub fn new(name: DeviceName, channels: u32) -> Self {
        Self { name, channels: channels.min(64), value: 0 }
    }
    /// Where the terminal sits and what it is.
    pub fn name(&self) -> &DeviceName {
        &self.name
    }
    /// Number of output channels.
    pub fn channels(&self) -> u32 {
        self.channels
    }
    /// The commanded bits, channel 1 in bit 0.
    pub fn value(&self) -> u64 {
        self.value
    }
    fn mask(&self) -> u64 {
        if self.channels >= 64 {
            u64::MAX
        } else {
            (1u64 << self.channels) - 1
        }
    }

    /// Sets the outputs; bits beyond the channels are refused (the value is kept).
    pub fn command(&mut self, value: Option<i64>) -> Result<(), String> {
        let Some(v) = value else { return Ok(()) };
        let bits = v as u64;
        if v < 0 || bits & !self.mask() != 0 {
            return Err(format!("{}: output value {v} sets bits beyond its {} channels (0..=0x{:X})", self.name, self.channels, self.mask()));
        }
        self.value = bits;
        Ok(())
    }

    /// Encodes the bits into this cycle's outputs (up to 8 bytes).
    pub fn write_outputs(&self, outputs: &mut [u8]) {
        for (i, b) in outputs.iter_mut().enumerate().take(8) {
            *b = (self.value >> (8 * i)) as u8;
        }
    }
}

/// Digital inputs: an integer measurement, bit n = channel n+1.
#[derive(Debug, Clone)]
pub struct DigitalInputs {
    name: DeviceName,
    channels: u32,
    value: u64,
}

impl DigitalInputs {
    /// A terminal with `channels` inputs (at most 64), reading 0 before the first cycle.
    pub fn new(name: DeviceName, channels: u32) -> Self {
        Self { name, channels: channels.min(64), value: 0 }
    }
    /// Where the terminal sits and what it is.
    pub fn name(&self) -> &DeviceName {
        &self.name
    }
    /// Number of input channels.
    pub fn channels(&self) -> u32 {
        self.channels
    }
    /// Decodes this cycle's inputs; bits beyond the channels are dropped.
    pub fn read_inputs(&mut self, inputs: &[u8]) {
        let mask = if self.channels >= 64 { u64::MAX } else { (1u64 << self.channels) - 1 };
        self.value = pd::bits_of(inputs) & mask;
    }
    /// The input bits as last received, channel 1 in bit 0.
    pub fn value(&self) -> u64 {
        self.value
    }
}

impl DeviceClass for DigitalOutputs {
    fn name(&self) -> &DeviceName {
        &self.name
    }
    fn kind(&self) -> &'static str {
        "dout"
    }
    fn ports(&self) -> ClassPorts {
        let port = PortInfo::new(&format!("dout{}", self.name.position), ValueType::Integer).doc(&format!("{}: {} digital outputs, bit 0 = channel 1", self.name, self.channels));
        ClassPorts { inputs: vec![port], ..ClassPorts::default() }
    }
    fn read_inputs(&mut self, _inputs: &[u8]) {}
    fn command(&mut self, commands: Option<Commands>, first: usize) -> Result<(), String> {
        DigitalOutputs::command(self, commands.and_then(|c| c.get(first)).map(Value::integer))
    }
    fn write_outputs(&mut self, outputs: &mut [u8]) {
        DigitalOutputs::write_outputs(self, outputs)
    }
}

impl DeviceClass for DigitalInputs {
    fn name(&self) -> &DeviceName {
        &self.name
    }
    fn kind(&self) -> &'static str {
        "din"
    }
    fn ports(&self) -> ClassPorts {
        let port = PortInfo::new(&format!("din{}", self.name.position), ValueType::Integer).doc(&format!("{}: {} digital inputs, bit 0 = channel 1", self.name, self.channels));
        ClassPorts { outputs: vec![port], ..ClassPorts::default() }
    }
    fn read_inputs(&mut self, inputs: &[u8]) {
        DigitalInputs::read_inputs(self, inputs)
    }
    fn write_measurements(&self, outputs: &mut [Value]) {
        outputs[0] = Value::Integer(self.value as i64);
    }
    fn write_outputs(&mut self, _outputs: &mut [u8]) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_refuse_bits_beyond_channels_and_inputs_mask() {
        let mut o = DigitalOutputs::new(DeviceName { position: 1, name: "EL2004".into() }, 4);
        o.command(Some(0b1010)).unwrap();
        let err = o.command(Some(0x10)).unwrap_err();
        assert!(err.contains("device 1 'EL2004'") && err.contains("4 channels"), "{err}");
        let mut b = [0u8; 1];
        o.write_outputs(&mut b);
        assert_eq!(b[0], 0b1010);
        o.command(None).unwrap();
        assert_eq!(o.value(), 0b1010, "held");
        let mut i = DigitalInputs::new(DeviceName { position: 2, name: "EL1004".into() }, 4);
        i.read_inputs(&[0xFF]);
        assert_eq!(i.value(), 0x0F);
    }
}
