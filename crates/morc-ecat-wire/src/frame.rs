//! EtherCAT frames on Ethernet: parsing and building, without panics.
//!
//! Layout (ETG.1000.4 §5.3, ETG.1000.3 §5.4):
//! ```text
//! Ethernet  dst[6] src[6] ethertype[2]=0x88A4
//! EtherCAT  header u16: length (bits 0..10), reserved (bit 11), type (bits 12..15, 1 = datagrams)
//! datagram  cmd u8, idx u8, address u32 (ADP u16 + ADO u16, or one logical u32),
//!           len u16 (bits 0..10 length, bit 14 circulating, bit 15 more follows), irq u16,
//!           data[len], working counter u16
//! ```
//! All multi-byte fields are little-endian except the EtherType.

use std::fmt;

/// EtherType of EtherCAT frames (ETG.1000.4 §5.3.1).
pub const ETHERTYPE_ETHERCAT: u16 = 0x88A4;
/// Destination + source MAC + EtherType.
pub const ETHERNET_HEADER_LEN: usize = 14;
/// The 2-byte EtherCAT frame header after the Ethernet header.
pub const ECAT_HEADER_LEN: usize = 2;
/// cmd, idx, address (4), len/flags (2), irq (2).
pub const DATAGRAM_HEADER_LEN: usize = 10;
/// The working counter trailing every datagram.
pub const WKC_LEN: usize = 2;
/// EtherCAT frame type "datagrams" in the EtherCAT header (ETG.1000.4 Table 11).
pub const ECAT_TYPE_DATAGRAMS: u8 = 1;
/// Largest datagram data length that the 11-bit length field can carry.
pub const MAX_DATAGRAM_LEN: usize = 0x7FF;
/// Ethernet frames are at least 60 bytes without FCS; shorter ones get zero padding.
pub const MIN_ETHERNET_FRAME_LEN: usize = 60;
/// Locally-administered bit of the first MAC byte: the first ESC sets it in the source MAC
/// on the way back (ESC datasheet section I, "Frame processing"), so a master can tell its
/// own frames from replies.
pub const MAC_LOCALLY_ADMINISTERED: u8 = 0x02;

const LEN_MASK: u16 = 0x07FF;
const FLAG_CIRCULATING: u16 = 1 << 14;
const FLAG_MORE_FOLLOWS: u16 = 1 << 15;

/// What can be wrong with the bytes of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameError {
    /// Shorter than Ethernet + EtherCAT headers.
    TooShort {
        /// Bytes received.
        len: usize,
    },
    /// Not EtherType 0x88A4 (VLAN-tagged frames are not supported either).
    NotEtherCat {
        /// The EtherType found.
        ethertype: u16,
    },
    /// EtherCAT header type other than 1 (datagrams); network variables and mailbox gateway
    /// frames are not supported.
    UnsupportedType {
        /// The type field of the EtherCAT header.
        frame_type: u8,
    },
    /// The EtherCAT header says more bytes than the frame holds.
    LengthBeyondFrame {
        /// Length in the EtherCAT header (bytes).
        header_len: usize,
        /// Bytes after the EtherCAT header.
        available: usize,
    },
    /// A datagram header, its data or its working counter runs past the EtherCAT payload.
    DatagramOverrun {
        /// Where the datagram starts, in bytes after the EtherCAT header.
        offset: usize,
    },
    /// Datagram lengths do not add up to the EtherCAT header length.
    LengthMismatch {
        /// Length in the EtherCAT header (bytes).
        header_len: usize,
        /// Bytes the datagrams take, headers and working counters included.
        datagrams_len: usize,
    },
    /// A buffer to build into is too small.
    BufferTooSmall {
        /// Bytes the frame or datagram needs.
        needed: usize,
        /// Bytes the buffer has.
        available: usize,
    },
    /// Datagram data longer than the 11-bit length field allows.
    DatagramTooLong {
        /// The data length asked for (bytes).
        len: usize,
    },
    /// More datagrams than the caller's layout buffer holds.
    TooManyDatagrams {
        /// Datagrams the layout buffer holds.
        max: usize,
    },
    /// Lost on the wire (a simulated fault): no reply.
    Lost,
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooShort { len } => write!(f, "frame of {len} bytes is too short for EtherCAT"),
            Self::NotEtherCat { ethertype } => write!(f, "EtherType {ethertype:#06x} is not EtherCAT (0x88a4)"),
            Self::UnsupportedType { frame_type } => write!(f, "EtherCAT frame type {frame_type} is not 1 (datagrams)"),
            Self::LengthBeyondFrame { header_len, available } => write!(f, "EtherCAT header says {header_len} bytes but only {available} follow"),
            Self::DatagramOverrun { offset } => write!(f, "datagram at payload offset {offset} runs past the frame"),
            Self::LengthMismatch { header_len, datagrams_len } => write!(f, "EtherCAT header length {header_len} but datagrams take {datagrams_len}"),
            Self::BufferTooSmall { needed, available } => write!(f, "buffer of {available} bytes too small, {needed} needed"),
            Self::DatagramTooLong { len } => write!(f, "datagram data of {len} bytes exceeds 2047"),
            Self::TooManyDatagrams { max } => write!(f, "more than {max} datagrams in one frame"),
            Self::Lost => write!(f, "frame lost on the wire (simulated)"),
        }
    }
}

impl std::error::Error for FrameError {}

/// Datagram commands (ETG.1000.4 Table 14 / ESC datasheet section I, "EtherCAT commands").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Command {
    /// No operation: ESCs ignore the datagram.
    Nop = 0,
    /// Auto-increment physical read: the ESC at position ADP = 0 reads; each ESC increments ADP.
    Aprd = 1,
    /// Auto-increment physical write.
    Apwr = 2,
    /// Auto-increment physical read-write.
    Aprw = 3,
    /// Configured-address physical read: the ESC whose station address is ADP reads.
    Fprd = 4,
    /// Configured-address physical write.
    Fpwr = 5,
    /// Configured-address physical read-write.
    Fprw = 6,
    /// Broadcast read: every ESC ORs its register into the data.
    Brd = 7,
    /// Broadcast write: every ESC writes.
    Bwr = 8,
    /// Broadcast read-write.
    Brw = 9,
    /// Logical read: ESCs with a matching FMMU copy process data into the datagram.
    Lrd = 10,
    /// Logical write: ESCs with a matching FMMU take process data from the datagram.
    Lwr = 11,
    /// Logical read-write: outputs taken and inputs put back in one pass.
    Lrw = 12,
    /// Auto-increment read, multiple write: the addressed ESC reads, all following write (DC time distribution).
    Armw = 13,
    /// Configured-address read, multiple write: as ARMW, the reader chosen by station address.
    Frmw = 14,
}

impl Command {
    /// `None` for reserved codes (15..255); an ESC passes such datagrams on untouched.
    pub fn from_code(code: u8) -> Option<Self> {
        use Command::*;
        Some(match code {
            0 => Nop,
            1 => Aprd,
            2 => Apwr,
            3 => Aprw,
            4 => Fprd,
            5 => Fpwr,
            6 => Fprw,
            7 => Brd,
            8 => Bwr,
            9 => Brw,
            10 => Lrd,
            11 => Lwr,
            12 => Lrw,
            13 => Armw,
            14 => Frmw,
            _ => return None,
        })
    }

    /// The command's code in the datagram header.
    pub fn code(self) -> u8 {
        self as u8
    }
}

/// A datagram's 10-byte header, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DatagramHeader {
    /// Raw command code; see [`Command::from_code`].
    pub command: u8,
    /// Index the master chooses to match replies to requests; ESCs leave it unchanged.
    pub index: u8,
    /// ADP in the low 16 bits and ADO in the high 16 bits, or one 32-bit logical address.
    pub address: u32,
    /// Data length (bytes, 11 bits).
    pub len: u16,
    /// Set by an ESC whose port 0 is closed, so a frame circling a broken ring is recognised and
    /// dropped when it comes round again.
    pub circulating: bool,
    /// Another datagram follows in the same frame.
    pub more_follows: bool,
    /// EtherCAT event request: ESCs OR their event request register (0x0220) into it.
    pub irq: u16,
}

impl DatagramHeader {
    /// Position (auto-increment) or configured station address.
    pub fn adp(&self) -> u16 {
        self.address as u16
    }

    /// Register / memory offset inside the addressed ESC.
    pub fn ado(&self) -> u16 {
        (self.address >> 16) as u16
    }

    /// The header at the start of `bytes`; `None` when fewer than 10 bytes.
    fn decode(bytes: &[u8]) -> Option<Self> {
        let h = bytes.get(..DATAGRAM_HEADER_LEN)?;
        let len_flags = u16::from_le_bytes([h[6], h[7]]);
        Some(Self {
            command: h[0],
            index: h[1],
            address: u32::from_le_bytes([h[2], h[3], h[4], h[5]]),
            len: len_flags & LEN_MASK,
            circulating: len_flags & FLAG_CIRCULATING != 0,
            more_follows: len_flags & FLAG_MORE_FOLLOWS != 0,
            irq: u16::from_le_bytes([h[8], h[9]]),
        })
    }

    /// Writes the 10-byte header to the start of `out`.
    fn encode(&self, out: &mut [u8]) -> Result<(), FrameError> {
        let available = out.len();
        let h = out.get_mut(..DATAGRAM_HEADER_LEN).ok_or(FrameError::BufferTooSmall { needed: DATAGRAM_HEADER_LEN, available })?;
        if usize::from(self.len) > MAX_DATAGRAM_LEN {
            return Err(FrameError::DatagramTooLong { len: self.len.into() });
        }
        let mut len_flags = self.len & LEN_MASK;
        if self.circulating {
            len_flags |= FLAG_CIRCULATING;
        }
        if self.more_follows {
            len_flags |= FLAG_MORE_FOLLOWS;
        }
        h[0] = self.command;
        h[1] = self.index;
        h[2..6].copy_from_slice(&self.address.to_le_bytes());
        h[6..8].copy_from_slice(&len_flags.to_le_bytes());
        h[8..10].copy_from_slice(&self.irq.to_le_bytes());
        Ok(())
    }
}

/// Where one datagram sits inside a whole Ethernet frame buffer (absolute byte offsets), so a
/// processor can modify it in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DatagramLayout {
    /// The decoded header.
    pub header: DatagramHeader,
    /// Offset of the 10-byte header.
    pub header_offset: usize,
    /// Offset of the data; the data is `header.len` bytes long.
    pub data_offset: usize,
    /// Offset of the 2-byte working counter.
    pub wkc_offset: usize,
}

impl DatagramLayout {
    /// Byte range of the data in the frame buffer.
    pub fn data_range(&self) -> std::ops::Range<usize> {
        self.data_offset..self.data_offset + usize::from(self.header.len)
    }

    /// Offset of the address field (ADP first), which position addressing modifies in place.
    pub fn address_offset(&self) -> usize {
        self.header_offset + 2
    }
}

/// The Ethernet and EtherCAT headers of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    /// Destination MAC address.
    pub destination: [u8; 6],
    /// Source MAC address (its locally-administered bit set by the first ESC on the way back).
    pub source: [u8; 6],
    /// Length of all datagrams, from the EtherCAT header.
    pub ecat_len: u16,
    /// Type from the EtherCAT header (1: datagrams, the only one accepted).
    pub ecat_type: u8,
}

/// Decodes the Ethernet and EtherCAT headers.
pub fn parse_header(frame: &[u8]) -> Result<FrameHeader, FrameError> {
    if frame.len() < ETHERNET_HEADER_LEN + ECAT_HEADER_LEN {
        return Err(FrameError::TooShort { len: frame.len() });
    }
    let ethertype = u16::from_be_bytes([frame[12], frame[13]]);
    if ethertype != ETHERTYPE_ETHERCAT {
        return Err(FrameError::NotEtherCat { ethertype });
    }
    let ecat = u16::from_le_bytes([frame[14], frame[15]]);
    let ecat_type = (ecat >> 12) as u8;
    if ecat_type != ECAT_TYPE_DATAGRAMS {
        return Err(FrameError::UnsupportedType { frame_type: ecat_type });
    }
    let ecat_len = ecat & LEN_MASK;
    let available = frame.len() - ETHERNET_HEADER_LEN - ECAT_HEADER_LEN;
    if usize::from(ecat_len) > available {
        return Err(FrameError::LengthBeyondFrame { header_len: ecat_len.into(), available });
    }
    let mut destination = [0; 6];
    let mut source = [0; 6];
    destination.copy_from_slice(&frame[0..6]);
    source.copy_from_slice(&frame[6..12]);
    Ok(FrameHeader { destination, source, ecat_len, ecat_type })
}

/// Iterates over the datagrams of a frame, yielding their layout or the first error.
/// Stops after the datagram whose more-follows flag is clear.
#[derive(Debug, Clone)]
pub struct Datagrams<'a> {
    frame: &'a [u8],
    offset: usize,
    end: usize,
    done: bool,
}

impl<'a> Datagrams<'a> {
    /// The datagrams of `frame`, after checking its headers.
    pub fn new(frame: &'a [u8]) -> Result<Self, FrameError> {
        let header = parse_header(frame)?;
        let start = ETHERNET_HEADER_LEN + ECAT_HEADER_LEN;
        Ok(Self { frame, offset: start, end: start + usize::from(header.ecat_len), done: false })
    }
}

impl Iterator for Datagrams<'_> {
    type Item = Result<DatagramLayout, FrameError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let payload_offset = self.offset - ETHERNET_HEADER_LEN - ECAT_HEADER_LEN;
        let overrun = FrameError::DatagramOverrun { offset: payload_offset };
        let header_end = self.offset + DATAGRAM_HEADER_LEN;
        let header = match self.frame.get(self.offset..header_end).and_then(DatagramHeader::decode) {
            Some(h) if header_end <= self.end => h,
            _ => {
                self.done = true;
                return Some(Err(overrun));
            }
        };
        let data_offset = header_end;
        let wkc_offset = data_offset + usize::from(header.len);
        let next = wkc_offset + WKC_LEN;
        if next > self.end {
            self.done = true;
            return Some(Err(overrun));
        }
        let layout = DatagramLayout { header, header_offset: self.offset, data_offset, wkc_offset };
        self.offset = next;
        if !header.more_follows {
            self.done = true;
        }
        Some(Ok(layout))
    }
}

/// Parses all datagram layouts of `frame` into `out` (cleared first). `out` is caller-owned so
/// that cyclic processing reuses its capacity instead of allocating per frame.
pub fn parse_datagrams(frame: &[u8], out: &mut Vec<DatagramLayout>, max: usize) -> Result<FrameHeader, FrameError> {
    out.clear();
    let header = parse_header(frame)?;
    let mut datagrams_len = 0;
    for layout in Datagrams::new(frame)? {
        let layout = layout?;
        if out.len() >= max {
            return Err(FrameError::TooManyDatagrams { max });
        }
        datagrams_len += DATAGRAM_HEADER_LEN + usize::from(layout.header.len) + WKC_LEN;
        out.push(layout);
    }
    // A frame whose last datagram still says "more follows" but the EtherCAT length ends is
    // caught by the overrun check; a header length longer than the datagrams is a mismatch.
    if datagrams_len != usize::from(header.ecat_len) {
        return Err(FrameError::LengthMismatch { header_len: header.ecat_len.into(), datagrams_len });
    }
    Ok(header)
}

/// Reads a little-endian u16 at `offset`, if it is inside `bytes`.
pub fn read_u16(bytes: &[u8], offset: usize) -> Option<u16> {
    let b = bytes.get(offset..offset.checked_add(2)?)?;
    Some(u16::from_le_bytes([b[0], b[1]]))
}

/// Writes a little-endian u16 at `offset`; false if it does not fit.
pub fn write_u16(bytes: &mut [u8], offset: usize, value: u16) -> bool {
    match offset.checked_add(2).and_then(|end| bytes.get_mut(offset..end)) {
        Some(b) => {
            b.copy_from_slice(&value.to_le_bytes());
            true
        }
        None => false,
    }
}

/// Builds a frame of datagrams into a caller-provided buffer (no allocation).
#[derive(Debug)]
pub struct FrameBuilder<'a> {
    buf: &'a mut [u8],
    len: usize,
    last_header_offset: Option<usize>,
}

impl<'a> FrameBuilder<'a> {
    /// Starts a frame with the given MAC addresses.
    pub fn new(buf: &'a mut [u8], destination: [u8; 6], source: [u8; 6]) -> Result<Self, FrameError> {
        let needed = ETHERNET_HEADER_LEN + ECAT_HEADER_LEN;
        if buf.len() < needed {
            return Err(FrameError::BufferTooSmall { needed, available: buf.len() });
        }
        buf[0..6].copy_from_slice(&destination);
        buf[6..12].copy_from_slice(&source);
        buf[12..14].copy_from_slice(&ETHERTYPE_ETHERCAT.to_be_bytes());
        Ok(Self { buf, len: needed, last_header_offset: None })
    }

    /// Appends a datagram with the given data and working counter; sets more-follows on the
    /// previous one.
    pub fn push(&mut self, command: u8, index: u8, address: u32, data: &[u8], wkc: u16) -> Result<&mut Self, FrameError> {
        if data.len() > MAX_DATAGRAM_LEN {
            return Err(FrameError::DatagramTooLong { len: data.len() });
        }
        let needed = self.len + DATAGRAM_HEADER_LEN + data.len() + WKC_LEN;
        if needed > self.buf.len() {
            return Err(FrameError::BufferTooSmall { needed, available: self.buf.len() });
        }
        let ecat_len = needed - ETHERNET_HEADER_LEN - ECAT_HEADER_LEN;
        if ecat_len > MAX_DATAGRAM_LEN {
            return Err(FrameError::DatagramTooLong { len: ecat_len });
        }
        if let Some(previous) = self.last_header_offset {
            // More-follows is bit 15 of the len field, byte 7 of the header.
            self.buf[previous + 7] |= 0x80;
        }
        let header = DatagramHeader { command, index, address, len: data.len() as u16, circulating: false, more_follows: false, irq: 0 };
        header.encode(&mut self.buf[self.len..])?;
        let data_offset = self.len + DATAGRAM_HEADER_LEN;
        self.buf[data_offset..data_offset + data.len()].copy_from_slice(data);
        write_u16(self.buf, data_offset + data.len(), wkc);
        self.last_header_offset = Some(self.len);
        self.len = needed;
        Ok(self)
    }

    /// Writes the EtherCAT header, pads to the Ethernet minimum and returns the frame length.
    pub fn finish(self) -> usize {
        let ecat_len = (self.len - ETHERNET_HEADER_LEN - ECAT_HEADER_LEN) as u16;
        let header = (ecat_len & LEN_MASK) | (u16::from(ECAT_TYPE_DATAGRAMS) << 12);
        self.buf[14..16].copy_from_slice(&header.to_le_bytes());
        let mut len = self.len;
        while len < MIN_ETHERNET_FRAME_LEN && len < self.buf.len() {
            self.buf[len] = 0;
            len += 1;
        }
        len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MASTER: [u8; 6] = [0x10; 6];
    const BROADCAST: [u8; 6] = [0xFF; 6];

    fn two_datagram_frame(buf: &mut [u8]) -> usize {
        let mut b = FrameBuilder::new(buf, BROADCAST, MASTER).unwrap();
        b.push(Command::Brd.code(), 7, 0x0130_0000, &[0, 0], 0).unwrap();
        b.push(Command::Lrw.code(), 8, 0x0001_0000, &[1, 2, 3], 5).unwrap();
        b.finish()
    }

    #[test]
    fn build_then_parse_round_trips() {
        let mut buf = [0u8; 128];
        let len = two_datagram_frame(&mut buf);
        assert_eq!(len, MIN_ETHERNET_FRAME_LEN);
        let header = parse_header(&buf[..len]).unwrap();
        assert_eq!(header.source, MASTER);
        assert_eq!(header.ecat_len as usize, 2 * (DATAGRAM_HEADER_LEN + WKC_LEN) + 5);
        let mut layouts = Vec::new();
        parse_datagrams(&buf[..len], &mut layouts, 16).unwrap();
        assert_eq!(layouts.len(), 2);
        let first = layouts[0];
        assert_eq!(first.header.command, 7);
        assert_eq!(first.header.index, 7);
        assert_eq!(first.header.ado(), 0x0130);
        assert_eq!(first.header.adp(), 0);
        assert!(first.header.more_follows);
        let second = layouts[1];
        assert!(!second.header.more_follows);
        assert_eq!(&buf[second.data_range()], &[1, 2, 3]);
        assert_eq!(read_u16(&buf, second.wkc_offset), Some(5));
        // Re-encoding the decoded header gives the same bytes.
        let mut again = [0u8; DATAGRAM_HEADER_LEN];
        second.header.encode(&mut again).unwrap();
        assert_eq!(&again[..], &buf[second.header_offset..second.data_offset]);
    }

    #[test]
    fn flags_survive_encoding() {
        let h = DatagramHeader { command: 4, index: 1, address: 0x0502_1001, len: 6, circulating: true, more_follows: true, irq: 0xBEEF };
        let mut b = [0u8; 10];
        h.encode(&mut b).unwrap();
        assert_eq!(DatagramHeader::decode(&b), Some(h));
    }

    #[test]
    fn malformed_frames_are_errors_not_panics() {
        let mut buf = [0u8; 128];
        let len = two_datagram_frame(&mut buf);
        let frame = &buf[..len];
        // Every truncation is an error or a clean parse, never a panic.
        let mut layouts = Vec::new();
        for cut in 0..len {
            let _ = parse_datagrams(&frame[..cut], &mut layouts, 16);
        }
        assert_eq!(parse_header(&frame[..10]), Err(FrameError::TooShort { len: 10 }));
        let mut bad = buf;
        bad[12] = 0x08;
        bad[13] = 0x00;
        assert_eq!(parse_header(&bad[..len]), Err(FrameError::NotEtherCat { ethertype: 0x0800 }));
        let mut bad = buf;
        bad[15] = (bad[15] & 0x0F) | 0x40;
        assert!(matches!(parse_header(&bad[..len]), Err(FrameError::UnsupportedType { frame_type: 4 })));
        // EtherCAT length larger than the frame.
        let mut bad = buf;
        bad[14] = 0xFF;
        bad[15] = 0x17;
        assert!(matches!(parse_header(&bad[..len]), Err(FrameError::LengthBeyondFrame { .. })));
        // A datagram length pointing past the payload.
        let mut bad = buf;
        bad[ETHERNET_HEADER_LEN + ECAT_HEADER_LEN + 6] = 0x50;
        assert!(matches!(parse_datagrams(&bad[..len], &mut layouts, 16), Err(FrameError::DatagramOverrun { .. })));
        // Too many datagrams for the caller's limit.
        assert_eq!(parse_datagrams(frame, &mut layouts, 1), Err(FrameError::TooManyDatagrams { max: 1 }));
        // Random garbage with a valid header never panics.
        let mut state = 0x1234_5678u32;
        for _ in 0..2000 {
            let mut junk = buf;
            for b in junk[16..len].iter_mut() {
                state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                *b = (state >> 24) as u8;
            }
            let _ = parse_datagrams(&junk[..len], &mut layouts, 16);
        }
    }

    #[test]
    fn builder_rejects_small_buffers() {
        let mut tiny = [0u8; 8];
        assert!(matches!(FrameBuilder::new(&mut tiny, BROADCAST, MASTER), Err(FrameError::BufferTooSmall { .. })));
        let mut small = [0u8; 20];
        let mut b = FrameBuilder::new(&mut small, BROADCAST, MASTER).unwrap();
        assert!(matches!(b.push(1, 0, 0, &[0; 8], 0), Err(FrameError::BufferTooSmall { .. })));
    }

    #[test]
    fn commands_decode() {
        for code in 0..=14u8 {
            assert_eq!(Command::from_code(code).map(Command::code), Some(code));
        }
        assert_eq!(Command::from_code(15), None);
    }
}
