//! A tiny pcapng reader: Section Header, Interface Description and Enhanced Packet blocks are
//! enough for tshark captures; other blocks are skipped.

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet {
    pub timestamp: u64,
    pub data: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PcapError {
    Truncated { offset: usize },
    NotPcapNg,
    BadBlockLength { offset: usize, length: u32 },
}

const SECTION_HEADER: u32 = 0x0A0D_0D0A;
const ENHANCED_PACKET: u32 = 0x0000_0006;
const SIMPLE_PACKET: u32 = 0x0000_0003;
const BYTE_ORDER_MAGIC: u32 = 0x1A2B_3C4D;

pub fn read_packets(bytes: &[u8]) -> Result<Vec<Packet>, PcapError> {
    let mut packets = Vec::new();
    let mut offset = 0;
    let mut little_endian = true;
    let u32_at = |le: bool, at: usize| -> Option<u32> {
        let b: [u8; 4] = bytes.get(at..at + 4)?.try_into().ok()?;
        Some(if le { u32::from_le_bytes(b) } else { u32::from_be_bytes(b) })
    };
    while offset < bytes.len() {
        let raw_type = u32_at(true, offset).ok_or(PcapError::Truncated { offset })?;
        if raw_type == SECTION_HEADER {
            // The byte-order magic follows the block length and tells the section's endianness.
            let magic = u32_at(true, offset + 8).ok_or(PcapError::Truncated { offset })?;
            little_endian = match magic {
                BYTE_ORDER_MAGIC => true,
                m if m.swap_bytes() == BYTE_ORDER_MAGIC => false,
                _ => return Err(PcapError::NotPcapNg),
            };
        } else if offset == 0 {
            return Err(PcapError::NotPcapNg);
        }
        let block_type = u32_at(little_endian, offset).ok_or(PcapError::Truncated { offset })?;
        let length = u32_at(little_endian, offset + 4).ok_or(PcapError::Truncated { offset })?;
        if length < 12 || length % 4 != 0 || offset + length as usize > bytes.len() {
            return Err(PcapError::BadBlockLength { offset, length });
        }
        let body = &bytes[offset + 8..offset + length as usize - 4];
        match block_type {
            ENHANCED_PACKET if body.len() >= 20 => {
                let word = |i: usize| u32_at(little_endian, offset + 8 + i * 4).unwrap_or(0);
                let timestamp = (u64::from(word(1)) << 32) | u64::from(word(2));
                let captured = word(3) as usize;
                let data = body.get(20..20 + captured).ok_or(PcapError::Truncated { offset })?;
                packets.push(Packet { timestamp, data: data.to_vec() });
            }
            SIMPLE_PACKET if body.len() >= 4 => {
                packets.push(Packet { timestamp: 0, data: body[4..].to_vec() });
            }
            _ => {}
        }
        offset += length as usize;
    }
    Ok(packets)
}
