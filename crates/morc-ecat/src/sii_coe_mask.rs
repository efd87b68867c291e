//! A device whose mailbox does not answer CoE, though its EEPROM says it does (an
//! EEPROM-only device), can still run: SOEM then takes its process data from the PDO
//! description in its EEPROM. ethercrab 0.7 has no such fallback, and decides whether to ask
//! CoE from the EEPROM alone (the mailbox protocols, SII word 0x001C), with no way to override
//! it per device. So for those devices the master's frames pass through this mask, which
//! clears the CoE bit in the SII data they read back from word 0x001C: ethercrab then
//! configures them from their EEPROM PDOs. Nothing else of the frames changes.

use morc_ecat_wire::esc::{reg, sii_control};
use morc_ecat_wire::frame::{read_u16, Command, Datagrams};
use morc_ecat_wire::sii::{protocol, word as sii_word};

/// The mailbox protocols' CoE bit, in the low byte of its word.
const COE_BIT: u8 = protocol::COE as u8;

/// Which stations to hide CoE from, and the SII word each last asked to read.
#[derive(Debug, Clone, Default)]
pub struct SiiCoeMask {
    /// (configured station address, word address of its pending SII read).
    stations: Vec<(u16, Option<u16>)>,
}

impl SiiCoeMask {
    pub fn new(stations: &[u16]) -> Self {
        Self { stations: stations.iter().map(|s| (*s, None)).collect() }
    }

    /// A frame going out: notes the SII word address a masked station is asked to read.
    pub fn outgoing(&mut self, frame: &[u8]) {
        if self.stations.is_empty() {
            return;
        }
        let Ok(datagrams) = Datagrams::new(frame) else { return };
        for d in datagrams.flatten() {
            let h = d.header;
            if h.command != Command::Fpwr.code() || h.ado() != reg::SII_CONTROL || h.len < 4 {
                continue;
            }
            if let Some(slot) = self.stations.iter_mut().find(|(s, _)| *s == h.adp()) {
                let control = read_u16(frame, d.data_offset).unwrap_or(0);
                slot.1 = if control & sii_control::READ != 0 { read_u16(frame, d.data_offset + 2) } else { None };
            }
        }
    }

    /// A reply coming back: clears the CoE bit in SII data a masked station returned for
    /// word 0x001C. No allocation (it sees every frame, the cyclic ones too).
    pub fn reply(&self, frame: &mut [u8]) {
        if self.stations.is_empty() {
            return;
        }
        let mut patches = [0usize; 4];
        let mut n = 0;
        if let Ok(datagrams) = Datagrams::new(frame) {
            for d in datagrams.flatten() {
                let h = d.header;
                if h.command != Command::Fprd.code() || h.ado() != reg::SII_DATA {
                    continue;
                }
                let Some(&(_, Some(word))) = self.stations.iter().find(|(s, _)| *s == h.adp()) else { continue };
                let words = h.len / 2;
                if (word..word.saturating_add(words)).contains(&sii_word::MAILBOX_PROTOCOLS) && n < patches.len() {
                    patches[n] = d.data_offset + usize::from(sii_word::MAILBOX_PROTOCOLS - word) * 2;
                    n += 1;
                }
            }
        }
        for &at in &patches[..n] {
            if let Some(b) = frame.get_mut(at) {
                *b &= !COE_BIT;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use morc_ecat_wire::frame::FrameBuilder;

    fn frame(command: Command, station: u16, register: u16, data: &[u8]) -> Vec<u8> {
        let mut buf = vec![0u8; 128];
        let mut b = FrameBuilder::new(&mut buf, [0xFF; 6], [0x02, 0, 0, 0, 0, 1]).unwrap();
        b.push(command.code(), 0, u32::from(station) | (u32::from(register) << 16), data, 1).unwrap();
        let len = b.finish();
        buf.truncate(len);
        buf
    }

    #[test]
    fn the_coe_bit_of_word_0x1c_is_hidden_for_masked_stations_only() {
        let mut mask = SiiCoeMask::new(&[0x1001]);
        // Read request for words 0x1C.. from the masked station, then its data.
        mask.outgoing(&frame(Command::Fpwr, 0x1001, reg::SII_CONTROL, &[0x00, 0x01, 0x1C, 0x00, 0, 0]));
        let mut reply = frame(Command::Fprd, 0x1001, reg::SII_DATA, &[0x0C, 0x00, 0, 0, 0, 0, 0, 0]);
        mask.reply(&mut reply);
        let data = Datagrams::new(&reply).unwrap().next().unwrap().unwrap().data_offset;
        assert_eq!(reply[data], 0x08, "CoE (0x04) cleared, FoE (0x08) kept");
        // Another station's data, and another word, pass unchanged.
        let mut other = frame(Command::Fprd, 0x1002, reg::SII_DATA, &[0x0C, 0, 0, 0]);
        mask.reply(&mut other);
        assert_eq!(other[data], 0x0C);
        mask.outgoing(&frame(Command::Fpwr, 0x1001, reg::SII_CONTROL, &[0x00, 0x01, 0x40, 0x00, 0, 0]));
        let mut later = frame(Command::Fprd, 0x1001, reg::SII_DATA, &[0x0C, 0, 0, 0]);
        mask.reply(&mut later);
        assert_eq!(later[data], 0x0C);
    }
}
