//! The safety PLC interface: what the PLC that owns the e-stop circuit tells morc, and the
//! heartbeat morc gives it. The PLC decides whether motion is permitted (safe torque off is
//! its job); morc's part is to hold the robot while it is not, and to say why.
//!
//! Process data (a PLC's process image is configured to this layout):
//! - inputs, 4 bytes: status word ([`status`] bits), inhibit reason code ([`reason`]);
//! - outputs, 2 bytes: control word — bit 0 heartbeat (toggles every cycle; the PLC inhibits
//!   motion when it stops toggling for its watchdog's number of cycles), bit 1 acknowledge
//!   (re-arms the PLC after an e-stop is released: a fault reset sends it).

use super::pd;
use super::{ClassPorts, DeviceClass, DeviceName};
use morc_kernel::{PortInfo, Value, ValueType};

pub use morc_ecat_wire::profiles::safety_plc::{control, reason, status, INPUT_BYTES, OUTPUT_BYTES};

/// The reason in words, and what the user does about it.
pub(crate) fn reason_text(code: u16) -> (&'static str, &'static str) {
    match code {
        reason::NONE => ("no reason given", "check the PLC"),
        reason::ESTOP => ("e-stop pressed", "release the e-stop, then reset faults"),
        reason::DOOR_OPEN => ("cell door open", "close the door (or hold the enabling switch), then reset faults"),
        reason::HEARTBEAT_LOST => ("heartbeat from morc lost", "the bus stalled; reset faults"),
        reason::ACKNOWLEDGE_NEEDED => ("waiting for acknowledge", "reset faults"),
        reason::PLC_FAULT => ("PLC internal fault", "check the PLC's diagnostics"),
        _ => ("unknown reason code", "see the PLC's documentation"),
    }
}

/// How many cycles the acknowledge bit stays set, so that the PLC sees it whatever its cycle.
const ACKNOWLEDGE_CYCLES: u32 = 3;

/// The master's side of the safety PLC.
#[derive(Debug, Clone)]
pub struct SafetyPlc {
    name: DeviceName,
    status: u16,
    reason: u16,
    heartbeat: bool,
    acknowledge_cycles: u32,
    /// Inputs arrived at least once (before that, nothing is known: not permitted).
    received: bool,
}

impl SafetyPlc {
    /// A safety PLC interface; motion is not permitted until its first inputs arrive.
    pub fn new(name: DeviceName) -> Self {
        Self { name, status: 0, reason: 0, heartbeat: false, acknowledge_cycles: 0, received: false }
    }
    /// Where the PLC sits and what it is.
    pub fn name(&self) -> &DeviceName {
        &self.name
    }
    /// The mapped sizes must hold the interface's inputs (status, reason) and control word.
    pub fn check_process_data(&self, input_bytes: usize, output_bytes: usize) -> Result<(), String> {
        if input_bytes < INPUT_BYTES || output_bytes < OUTPUT_BYTES {
            return Err(format!(
                "{}: a safety PLC interface needs {INPUT_BYTES} input and {OUTPUT_BYTES} output bytes (status, reason; control), the device maps {input_bytes} and {output_bytes}; configure the PLC's process image",
                self.name
            ));
        }
        Ok(())
    }
    /// Decodes this cycle's inputs: status word and inhibit reason.
    pub fn read_inputs(&mut self, inputs: &[u8]) {
        self.status = pd::u16_at(inputs, 0);
        self.reason = pd::u16_at(inputs, 2);
        self.received = true;
    }
    /// Status word as last received ([`status`] bits).
    pub fn status(&self) -> u16 {
        self.status
    }
    /// Inhibit reason code as last received ([`reason`]; [`inhibit_message`](Self::inhibit_message) says it in words).
    pub fn reason(&self) -> u16 {
        self.reason
    }
    /// The PLC permits motion (and inputs have arrived at least once).
    pub fn motion_permitted(&self) -> bool {
        self.received && self.status & status::MOTION_PERMITTED != 0
    }
    /// The PLC reports the e-stop pressed.
    pub fn estop_pressed(&self) -> bool {
        self.status & status::ESTOP_PRESSED != 0
    }

    /// Why motion is inhibited, for the user (allocates: once per fault).
    pub fn inhibit_message(&self) -> String {
        let (why, what_to_do) = reason_text(self.reason);
        format!("{}: safety PLC inhibits motion — {why} (reason code {}); {what_to_do}", self.name, self.reason)
    }

    /// Asks the PLC to re-arm (after the cause is gone); sent with the next few cycles.
    pub fn acknowledge(&mut self) {
        self.acknowledge_cycles = ACKNOWLEDGE_CYCLES;
    }

    /// The control word for this cycle: the heartbeat toggles on every call.
    pub fn write_outputs(&mut self, outputs: &mut [u8]) {
        self.heartbeat = !self.heartbeat;
        let mut word = if self.heartbeat { control::HEARTBEAT } else { 0 };
        if self.acknowledge_cycles > 0 {
            self.acknowledge_cycles -= 1;
            word |= control::ACKNOWLEDGE;
        }
        pd::put(outputs, 0, &word.to_le_bytes());
    }
}

impl DeviceClass for SafetyPlc {
    fn name(&self) -> &DeviceName {
        &self.name
    }
    fn kind(&self) -> &'static str {
        "safety"
    }
    fn ports(&self) -> ClassPorts {
        let port = PortInfo::new(&format!("safety{}", self.name.position), ValueType::Integer)
            .doc(&format!("{}: safety PLC status bits: 1 e-stop pressed, 2 door closed, 4 enabling switch, 8 motion permitted", self.name));
        ClassPorts { outputs: vec![port], ..ClassPorts::default() }
    }
    fn read_inputs(&mut self, inputs: &[u8]) {
        SafetyPlc::read_inputs(self, inputs)
    }
    fn write_measurements(&self, outputs: &mut [Value]) {
        outputs[0] = Value::Integer(i64::from(self.status));
    }
    fn write_outputs(&mut self, outputs: &mut [u8]) {
        SafetyPlc::write_outputs(self, outputs)
    }
    fn fault(&self) -> Option<String> {
        (!self.motion_permitted()).then(|| self.inhibit_message())
    }
    fn permits_motion(&self) -> bool {
        self.motion_permitted()
    }
    fn acknowledge(&mut self) {
        SafetyPlc::acknowledge(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heartbeat_toggles_and_the_reason_is_named() {
        let mut plc = SafetyPlc::new(DeviceName { position: 10, name: "SIM-SAFETY-PLC".into() });
        assert!(!plc.motion_permitted(), "nothing known before the first inputs");
        let mut out = [0u8; 2];
        plc.write_outputs(&mut out);
        let first = out[0] & 1;
        plc.acknowledge();
        plc.write_outputs(&mut out);
        assert_ne!(out[0] & 1, first);
        assert_ne!(out[0] & 2, 0, "acknowledge sent");
        plc.read_inputs(&[status::ESTOP_PRESSED as u8, 0, reason::ESTOP as u8, 0]);
        assert!(!plc.motion_permitted());
        assert_eq!(plc.inhibit_message(), "device 10 'SIM-SAFETY-PLC': safety PLC inhibits motion — e-stop pressed (reason code 1); release the e-stop, then reset faults");
        plc.read_inputs(&[status::MOTION_PERMITTED as u8 | status::DOOR_CLOSED as u8, 0, 0, 0]);
        assert!(plc.motion_permitted());
        assert!(plc.check_process_data(2, 2).unwrap_err().contains("needs 4 input"));
    }
}
