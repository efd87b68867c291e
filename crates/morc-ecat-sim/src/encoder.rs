//! A simulated incremental encoder terminal (EL5101-style, the "Standard 32 Bit" layout of
//! [`morc_ecat_wire::profiles::encoder`]): its count is set from outside (a test, Lua, or a
//! simulated link) and the 32-bit counter wraps as the terminal's does; the master can set the
//! counter (control word "Set counter", answered with "Set counter done"); an injectable error
//! marks the inputs invalid (TxPDO state).

use super::process_data::FixedProcessData;
use morc_ecat_wire::profiles::encoder::{control, status, COUNTER_AT, SET_COUNTER_VALUE_AT, STATUS_AT};

/// A simulated incremental encoder terminal (see the module doc).
#[derive(Debug, Clone, Default)]
pub struct SimEncoder {
    counter: u32,
    error: bool,
    last_control: u16,
    set_done: bool,
}

impl SimEncoder {
    /// The encoder's position in counts; the terminal's 32-bit counter shows it modulo 2^32.
    /// (Its underflow and overflow bits are not modelled.)
    pub fn set_counts(&mut self, counts: i64) {
        self.counter = counts as u32;
    }
    /// The counter as the terminal reports it.
    pub fn counter(&self) -> u32 {
        self.counter
    }
    /// The terminal marks its inputs invalid (TxPDO state, status bit 14).
    pub fn set_error(&mut self, error: bool) {
        self.error = error;
    }
}

impl FixedProcessData for SimEncoder {
    fn receive(&mut self, outputs: &[u8]) {
        let word = outputs.get(..2).map_or(0, |b| u16::from_le_bytes([b[0], b[1]]));
        if word & control::SET_COUNTER != 0 && self.last_control & control::SET_COUNTER == 0 {
            if let Some(b) = outputs.get(SET_COUNTER_VALUE_AT..SET_COUNTER_VALUE_AT + 4) {
                self.counter = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
        }
        // "Set counter done" stays up while the master holds "Set counter".
        self.set_done = word & control::SET_COUNTER != 0;
        self.last_control = word;
    }

    fn send(&self, inputs: &mut [u8]) {
        let word = [(self.set_done, status::SET_COUNTER_DONE), (self.error, status::TXPDO_STATE)].iter().filter(|(on, _)| *on).fold(0, |w, (_, bit)| w | bit);
        if let Some(b) = inputs.get_mut(STATUS_AT..STATUS_AT + 2) {
            b.copy_from_slice(&word.to_le_bytes());
        }
        if let Some(b) = inputs.get_mut(COUNTER_AT..COUNTER_AT + 4) {
            b.copy_from_slice(&self.counter.to_le_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counter_wraps_at_32_bits_and_the_master_can_set_it() {
        let mut e = SimEncoder::default();
        let mut inputs = [0u8; 10];
        e.set_counts(-3);
        e.send(&mut inputs);
        assert_eq!(u32::from_le_bytes(inputs[2..6].try_into().unwrap()), u32::MAX - 2);
        e.set_counts((1 << 32) + 7);
        assert_eq!(e.counter(), 7);
        e.set_error(true);
        e.send(&mut inputs);
        assert_eq!(u16::from_le_bytes([inputs[0], inputs[1]]) & status::TXPDO_STATE, status::TXPDO_STATE);
        let mut outputs = [0u8; 6];
        outputs[..2].copy_from_slice(&control::SET_COUNTER.to_le_bytes());
        outputs[2..].copy_from_slice(&1234u32.to_le_bytes());
        e.receive(&outputs);
        e.set_error(false);
        e.send(&mut inputs);
        assert_eq!(e.counter(), 1234);
        assert_eq!(u16::from_le_bytes([inputs[0], inputs[1]]) & status::SET_COUNTER_DONE, status::SET_COUNTER_DONE);
    }
}
