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

/// Incremental encoder terminals, Beckhoff EL5101-style: one encoder channel (the "ENC" module
/// of Beckhoff's MDP 511 profile, objects 0x6010 inputs and 0x7010 outputs on the EL5101), a
/// status word, a counter and a latch value in; a control word and a counter preset out.
///
/// The EL5101 offers two predefined PDO assignments in its standard mode; its default is the
/// 16-bit one, so a master meets either:
///
/// | assignment | inputs (SM3) | outputs (SM2) |
/// |---|---|---|
/// | Standard 32 Bit | 0x1A04 "ENC Status": status u16, counter u32 (0x6010:11), latch u32 (0x6010:12) = 10 bytes | 0x1603 "ENC Control": control u16, set counter value u32 (0x7010:11) = 6 bytes |
/// | Standard 16 Bit (default) | 0x1A03 "ENC Status compact": status u16, counter u16, latch u16 = 6 bytes | 0x1602 "ENC Control compact": control u16, set counter value u16 = 4 bytes |
///
/// Sources: Beckhoff's EL5101 documentation (infosys.beckhoff.com, EL5101 → "Predefined PDO
/// Assignment": the two assignments above, sizes and the default; "Input data", index 0x6010
/// "ENC Inputs": the status bits) and an ESI-derived configuration listing the entries of 0x1A04
/// and 0x1603 (ICube-Robotics/ethercat_driver_ros2_examples,
/// `ethercat_slave_description/config/beckhoff/beckhoff_el5101.yaml`: status bits 0..12 are
/// 0x6010:01..0D, bit 13 the sync error 0x1C32:20, bit 14 the TxPDO state 0x1804:07, bit 15 the
/// TxPDO toggle 0x1804:09; control bits 0..3 are 0x7010:01..04, "Set counter" = bit 2). The
/// legacy EL5101 PDOs (0x1A00 with 0x6000:01 status u8, 0x6000:02 value u16, as older masters
/// map it) are not these. EL5101-0010 and later EL51xx terminals put the same channel at
/// 0x6000/0x7000.
pub mod encoder {
    /// Beckhoff's vendor id.
    pub const VENDOR_ID: u32 = 0x0000_0002;
    /// EL5101: terminal number << 16 | 0x3052 ("EL"), as Beckhoff forms its product codes.
    pub const EL5101: u32 = (5101 << 16) | 0x3052;

    /// One PDO entry: (index, sub-index, bits); index 0 is a gap.
    pub type Entry = (u16, u8, u8);

    /// The entries of TxPDO 0x1A04 "ENC Status" (Standard 32 Bit).
    pub const TX_ENTRIES: [Entry; 18] = [
        (0x6010, 0x01, 1),  // Latch C valid
        (0x6010, 0x02, 1),  // Latch extern valid
        (0x6010, 0x03, 1),  // Set counter done
        (0x6010, 0x04, 1),  // Counter underflow
        (0x6010, 0x05, 1),  // Counter overflow
        (0x6010, 0x06, 1),  // Status of input status
        (0x6010, 0x07, 1),  // Open circuit
        (0x6010, 0x08, 1),  // Extrapolation stall
        (0x6010, 0x09, 1),  // Status of input A
        (0x6010, 0x0A, 1),  // Status of input B
        (0x6010, 0x0B, 1),  // Status of input C
        (0x6010, 0x0C, 1),  // Status of input gate
        (0x6010, 0x0D, 1),  // Status of extern latch
        (0x1C32, 0x20, 1),  // Sync error
        (0x1804, 0x07, 1),  // TxPDO State
        (0x1804, 0x09, 1),  // TxPDO Toggle
        (0x6010, 0x11, 32), // Counter value
        (0x6010, 0x12, 32), // Latch value
    ];
    /// The entries of RxPDO 0x1603 "ENC Control" (Standard 32 Bit).
    pub const RX_ENTRIES: [Entry; 7] = [
        (0x7010, 0x01, 1), // Enable latch C
        (0x7010, 0x02, 1), // Enable latch extern on positive edge
        (0x7010, 0x03, 1), // Set counter
        (0x7010, 0x04, 1), // Enable latch extern on negative edge
        (0, 0, 4),
        (0, 0, 8),
        (0x7010, 0x11, 32), // Set counter value
    ];
    /// TxPDO of the Standard 32 Bit assignment.
    pub const TX_PDO: u16 = 0x1A04;
    /// RxPDO of the Standard 32 Bit assignment.
    pub const RX_PDO: u16 = 0x1603;

    /// Which of the two assignments a device maps, told by its process-data sizes.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Layout {
        /// Standard 32 Bit: 10 input bytes, 6 output bytes.
        Standard32,
        /// Standard 16 Bit (the EL5101's default): 6 input bytes, 4 output bytes.
        Compact16,
    }

    impl Layout {
        /// The layout of a device mapping `input_bytes` and `output_bytes`, if it is one of these.
        pub fn from_sizes(input_bytes: usize, output_bytes: usize) -> Option<Layout> {
            [Layout::Standard32, Layout::Compact16].into_iter().find(|l| l.input_bytes() == input_bytes && l.output_bytes() == output_bytes)
        }
        /// Bits of the counter (and latch and preset) value.
        pub const fn counter_bits(self) -> u32 {
            match self {
                Layout::Standard32 => 32,
                Layout::Compact16 => 16,
            }
        }
        /// Inputs: status word, counter, latch.
        pub const fn input_bytes(self) -> usize {
            2 + 2 * (self.counter_bits() as usize / 8)
        }
        /// Outputs: control word, set counter value.
        pub const fn output_bytes(self) -> usize {
            2 + self.counter_bits() as usize / 8
        }
    }

    /// Where the values sit in the inputs (both layouts): status word, then the counter.
    pub const STATUS_AT: usize = 0;
    /// Byte offset of the counter value in the inputs.
    pub const COUNTER_AT: usize = 2;
    /// Byte offset of the set counter value in the outputs (after the control word).
    pub const SET_COUNTER_VALUE_AT: usize = 2;

    /// Status word bits (inputs, bytes 0..2).
    pub mod status {
        /// The counter was set (0x6010:03), in answer to [`super::control::SET_COUNTER`].
        pub const SET_COUNTER_DONE: u16 = 1 << 2;
        /// The counter ran below its range and wrapped (0x6010:04).
        pub const UNDERFLOW: u16 = 1 << 3;
        /// The counter ran above its range and wrapped (0x6010:05).
        pub const OVERFLOW: u16 = 1 << 4;
        /// Open circuit on a track, where its detection is enabled (0x6010:07; 0x8010:0A..0C).
        pub const OPEN_CIRCUIT: u16 = 1 << 6;
        /// DC mode: a SYNC came without new data (0x1C32:20).
        pub const SYNC_ERROR: u16 = 1 << 13;
        /// TxPDO State (0x1804:07): the inputs are invalid (0 = valid, 1 = invalid).
        pub const TXPDO_STATE: u16 = 1 << 14;
        /// TxPDO Toggle (0x1804:09): toggles with each new set of inputs.
        pub const TXPDO_TOGGLE: u16 = 1 << 15;
    }

    /// Control word bits (outputs, bytes 0..2).
    pub mod control {
        /// Set counter (0x7010:03): on the rising edge the counter takes the set counter value.
        pub const SET_COUNTER: u16 = 1 << 2;
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn entries_add_up_to_the_standard_32_bit_sizes() {
            let bytes = |entries: &[Entry]| entries.iter().map(|e| usize::from(e.2)).sum::<usize>() / 8;
            assert_eq!(bytes(&TX_ENTRIES), Layout::Standard32.input_bytes());
            assert_eq!(bytes(&RX_ENTRIES), Layout::Standard32.output_bytes());
            assert_eq!((Layout::Compact16.input_bytes(), Layout::Compact16.output_bytes()), (6, 4));
            assert_eq!(Layout::from_sizes(10, 6), Some(Layout::Standard32));
            assert_eq!(Layout::from_sizes(6, 4), Some(Layout::Compact16));
            assert_eq!(Layout::from_sizes(5, 3), None, "the legacy PDOs");
            assert_eq!(EL5101, 0x13ED_3052);
            // Status bit k is the k-th one-bit entry: TxPDO State is bit 14.
            assert_eq!(TX_ENTRIES[14], (0x1804, 0x07, 1));
            assert_eq!(status::TXPDO_STATE, 1 << 14);
            assert_eq!(RX_ENTRIES[2], (0x7010, 0x03, 1));
            assert_eq!(control::SET_COUNTER, 1 << 2);
        }
    }
}
