//! The process-data and object layouts of the device profiles morc speaks: what a master's
//! device class reads and writes, and what a simulated device answers, in one place.

/// Analog I/O terminals (EL3xxx inputs, EL4xxx outputs): ranges and status bits.
pub mod analog_io {
    /// How raw counts map to a physical value: `raw_low..=raw_high` ⇄ `low..=high`, linearly.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct AnalogRange {
        /// Physical value at `raw_low`, in `unit`.
        pub low: f64,
        /// Physical value at `raw_high`, in `unit`.
        pub high: f64,
        /// Counts at the bottom of the range.
        pub raw_low: i16,
        /// Counts at the top of the range.
        pub raw_high: i16,
        /// Unit of `low` and `high` ("V", "mA").
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

        /// The physical value of `raw` counts, in `unit` (not clamped: beyond the range extrapolates).
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
        /// The value is below the measuring range.
        pub const UNDERRANGE: u16 = 1 << 0;
        /// The value is above the measuring range.
        pub const OVERRANGE: u16 = 1 << 1;
        /// Wire break, or out of the measuring range far enough to be no measurement.
        pub const ERROR: u16 = 1 << 6;
    }
}

/// 6-axis force/torque sensors (ATI Axia-style): sizes, calibration objects, status and control bits.
pub mod force_torque {
    /// Inputs: 6 × int32, status u32, sample counter u32.
    pub const INPUT_BYTES: usize = 32;
    /// Outputs: control u32.
    pub const OUTPUT_BYTES: usize = 4;

    /// Calibration objects (CoE).
    pub mod obj {
        /// (index, sub): counts per newton (u32).
        pub const COUNTS_PER_FORCE: (u16, u8) = (0x2040, 0x31);
        /// (index, sub): counts per newton-metre (u32).
        pub const COUNTS_PER_TORQUE: (u16, u8) = (0x2040, 0x32);
    }

    /// Status word bits.
    pub mod status {
        /// A gauge is saturated: the load is beyond the calibrated range.
        pub const SATURATED: u32 = 1 << 0;
        /// The sensor's own monitoring found a fault (bit 31, "status summary").
        pub const ERROR: u32 = 1 << 31;
    }

    /// Control word bits.
    pub mod control {
        /// Bias (tare) on the rising edge: the current load becomes zero.
        pub const BIAS: u32 = 1 << 0;
    }
}

/// The safety PLC interface: sizes, status and control bits, inhibit reasons.
pub mod safety_plc {
    /// Inputs: status word, inhibit reason.
    pub const INPUT_BYTES: usize = 4;
    /// Outputs: control word.
    pub const OUTPUT_BYTES: usize = 2;

    /// Status word bits (inputs, bytes 0..2).
    pub mod status {
        /// The e-stop is pressed.
        pub const ESTOP_PRESSED: u16 = 1 << 0;
        /// The cell door is closed.
        pub const DOOR_CLOSED: u16 = 1 << 1;
        /// The enabling switch is held (motion allowed with the door open).
        pub const ENABLING_SWITCH: u16 = 1 << 2;
        /// The safety circuit permits motion: nothing tripped, or acknowledged since.
        pub const MOTION_PERMITTED: u16 = 1 << 3;
    }

    /// Control word bits (outputs).
    pub mod control {
        /// Toggled by the controller every cycle; the PLC trips when it stops toggling.
        pub const HEARTBEAT: u16 = 1 << 0;
        /// Acknowledge on the rising edge: re-arms the circuit once the cause is gone.
        pub const ACKNOWLEDGE: u16 = 1 << 1;
    }

    /// Why the PLC inhibits motion (inputs, bytes 2..4).
    pub mod reason {
        /// Nothing inhibits motion.
        pub const NONE: u16 = 0;
        /// The e-stop is pressed.
        pub const ESTOP: u16 = 1;
        /// The door is open and the enabling switch not held.
        pub const DOOR_OPEN: u16 = 2;
        /// The controller's heartbeat stopped toggling (watchdog).
        pub const HEARTBEAT_LOST: u16 = 3;
        /// The cause is gone; motion waits for an acknowledge.
        pub const ACKNOWLEDGE_NEEDED: u16 = 4;
        /// The PLC found an internal fault.
        pub const PLC_FAULT: u16 = 5;
    }
}
