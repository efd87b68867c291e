//! ATI's Raw Data Transfer (RDT) protocol of the Net F/T, on UDP port 49152, all numbers
//! big-endian. A request is 8 bytes: u16 header 0x1234, u16 command, u32 sample count (0: until
//! stopped). A record is 36 bytes: u32 rdt_sequence (one more per record sent), u32 ft_sequence
//! (the sensor's internal sample number), u32 status, then Fx Fy Fz Tx Ty Tz as i32 counts; the
//! sensor's calibration gives counts per force (N) and per torque (N·m).

/// The Net F/T's RDT port.
pub const PORT: u16 = 49152;
/// The header every request starts with.
pub const HEADER: u16 = 0x1234;
/// Bytes of a request.
pub const REQUEST_LEN: usize = 8;
/// Bytes of a record.
pub const RECORD_LEN: usize = 36;
/// The status bit the sensor sets when something is wrong (its diagnostics say what).
pub const STATUS_ERROR: u32 = 0x8000_0000;

/// What a request asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// Stop streaming (0).
    Stop,
    /// Start real-time streaming (2).
    Start,
    /// Zero the sensor at its present reading (0x42).
    Bias,
    /// Any other command, kept so a decoder reports it rather than guessing.
    Other(u16),
}

impl Command {
    /// The command's number on the wire.
    pub fn code(self) -> u16 {
        match self {
            Command::Stop => 0,
            Command::Start => 2,
            Command::Bias => 0x42,
            Command::Other(c) => c,
        }
    }
    fn from_code(c: u16) -> Self {
        match c {
            0 => Command::Stop,
            2 => Command::Start,
            0x42 => Command::Bias,
            c => Command::Other(c),
        }
    }
}

/// A request to the sensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// What to do.
    pub command: Command,
    /// How many records to send (0: until stopped).
    pub count: u32,
}

impl Request {
    /// The request's 8 bytes.
    pub fn encode(&self) -> [u8; REQUEST_LEN] {
        let mut b = [0u8; REQUEST_LEN];
        b[0..2].copy_from_slice(&HEADER.to_be_bytes());
        b[2..4].copy_from_slice(&self.command.code().to_be_bytes());
        b[4..8].copy_from_slice(&self.count.to_be_bytes());
        b
    }

    /// A request from its bytes; an error says what is wrong with them.
    pub fn decode(b: &[u8]) -> Result<Request, String> {
        if b.len() != REQUEST_LEN {
            return Err(format!("an RDT request is {REQUEST_LEN} bytes, got {}", b.len()));
        }
        let header = u16::from_be_bytes([b[0], b[1]]);
        if header != HEADER {
            return Err(format!("an RDT request starts with 0x{HEADER:04x}, got 0x{header:04x}"));
        }
        Ok(Request { command: Command::from_code(u16::from_be_bytes([b[2], b[3]])), count: u32::from_be_bytes([b[4], b[5], b[6], b[7]]) })
    }
}

/// One record of the stream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// One more for each record sent (wraps).
    pub rdt_sequence: u32,
    /// The sensor's internal sample number.
    pub ft_sequence: u32,
    /// The status word: 0 when all is well, [`STATUS_ERROR`] set on an error.
    pub status: u32,
    /// Fx Fy Fz Tx Ty Tz in counts.
    pub counts: [i32; 6],
}

impl Record {
    /// The record's 36 bytes.
    pub fn encode(&self) -> [u8; RECORD_LEN] {
        let mut b = [0u8; RECORD_LEN];
        b[0..4].copy_from_slice(&self.rdt_sequence.to_be_bytes());
        b[4..8].copy_from_slice(&self.ft_sequence.to_be_bytes());
        b[8..12].copy_from_slice(&self.status.to_be_bytes());
        for (i, c) in self.counts.iter().enumerate() {
            b[12 + 4 * i..16 + 4 * i].copy_from_slice(&c.to_be_bytes());
        }
        b
    }

    /// A record from its bytes; None unless there are exactly 36.
    pub fn decode(b: &[u8]) -> Option<Record> {
        if b.len() != RECORD_LEN {
            return None;
        }
        let word = |i: usize| [b[i], b[i + 1], b[i + 2], b[i + 3]];
        Some(Record {
            rdt_sequence: u32::from_be_bytes(word(0)),
            ft_sequence: u32::from_be_bytes(word(4)),
            status: u32::from_be_bytes(word(8)),
            counts: std::array::from_fn(|i| i32::from_be_bytes(word(12 + 4 * i))),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_request_is_the_documented_eight_bytes() {
        let r = Request { command: Command::Start, count: 0 };
        assert_eq!(r.encode(), [0x12, 0x34, 0x00, 0x02, 0, 0, 0, 0]);
        assert_eq!(Request { command: Command::Bias, count: 10 }.encode(), [0x12, 0x34, 0x00, 0x42, 0, 0, 0, 10]);
        assert_eq!(Request::decode(&r.encode()), Ok(r));
        assert!(Request::decode(&[0x43, 0x21, 0, 2, 0, 0, 0, 0]).unwrap_err().contains("0x4321"));
        assert!(Request::decode(&[0x12, 0x34]).unwrap_err().contains("8 bytes"));
    }

    #[test]
    fn records_are_big_endian_and_round_trip() {
        let r = Record { rdt_sequence: 0x01020304, ft_sequence: 7, status: STATUS_ERROR, counts: [1, -1, 1_000_000, -2_000_000, i32::MAX, i32::MIN] };
        let b = r.encode();
        assert_eq!(&b[0..4], &[1, 2, 3, 4]);
        assert_eq!(&b[8..12], &[0x80, 0, 0, 0]);
        assert_eq!(&b[12..20], &[0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(Record::decode(&b), Some(r));
        assert_eq!(Record::decode(&b[..35]), None);
    }
}
