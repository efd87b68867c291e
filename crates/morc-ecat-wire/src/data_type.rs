//! CoE data types of PDO entries (ETG.1000.6 Table 64, ETG.1020 Table 98), as the SII's PDO
//! categories and ESI files name them, and how a value of each sits in the process image:
//! little-endian, packed bit by bit from the entry's bit offset (entries need not start on a
//! byte). Written once for the master's generic device and the simulator's twins.

/// BOOLEAN.
pub const BOOLEAN: u8 = 0x01;
/// INTEGER8.
pub const INTEGER8: u8 = 0x02;
/// INTEGER16.
pub const INTEGER16: u8 = 0x03;
/// INTEGER32.
pub const INTEGER32: u8 = 0x04;
/// UNSIGNED8.
pub const UNSIGNED8: u8 = 0x05;
/// UNSIGNED16.
pub const UNSIGNED16: u8 = 0x06;
/// UNSIGNED32.
pub const UNSIGNED32: u8 = 0x07;
/// REAL32 (IEEE 754 single).
pub const REAL32: u8 = 0x08;
/// VISIBLE_STRING.
pub const VISIBLE_STRING: u8 = 0x09;
/// OCTET_STRING.
pub const OCTET_STRING: u8 = 0x0A;
/// INTEGER24.
pub const INTEGER24: u8 = 0x10;
/// REAL64 (IEEE 754 double).
pub const REAL64: u8 = 0x11;
/// INTEGER40, INTEGER48, INTEGER56 are 0x12..=0x14.
pub const INTEGER40: u8 = 0x12;
/// INTEGER64.
pub const INTEGER64: u8 = 0x15;
/// UNSIGNED24.
pub const UNSIGNED24: u8 = 0x16;
/// UNSIGNED40, UNSIGNED48, UNSIGNED56 are 0x18..=0x1A.
pub const UNSIGNED40: u8 = 0x18;
/// UNSIGNED64.
pub const UNSIGNED64: u8 = 0x1B;
/// BYTE, WORD, DWORD (bit strings of 8, 16, 32 bits) are 0x1E..=0x20.
pub const BYTE: u8 = 0x1E;
/// BITARR8, BITARR16, BITARR32 are 0x2D..=0x2F.
pub const BITARR8: u8 = 0x2D;
/// BIT1 … BIT16 are 0x30..=0x3F (BITn = 0x2F + n).
pub const BIT1: u8 = 0x30;

/// A value for an SDO download, of the object's width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SdoValue {
    /// UNSIGNED8.
    U8(u8),
    /// INTEGER8 (e.g. modes of operation, 0x6060).
    I8(i8),
    /// UNSIGNED16 (e.g. max torque, 0x6072).
    U16(u16),
    /// INTEGER16.
    I16(i16),
    /// UNSIGNED32 (e.g. a PDO mapping entry).
    U32(u32),
    /// INTEGER32.
    I32(i32),
}

impl SdoValue {
    /// The type names [`SdoValue::of`] takes.
    pub const TYPES: [&'static str; 6] = ["u8", "i8", "u16", "i16", "u32", "i32"];

    /// `x` as a value of the type named `ty` ("u16", "i32"…), or why it is not one.
    pub fn of(ty: &str, x: f64) -> Result<SdoValue, String> {
        let (number, bits) = match ty {
            "u8" => (Number::Unsigned, 8),
            "i8" => (Number::Signed, 8),
            "u16" => (Number::Unsigned, 16),
            "i16" => (Number::Signed, 16),
            "u32" => (Number::Unsigned, 32),
            "i32" => (Number::Signed, 32),
            _ => return Err(format!("unknown SDO type '{ty}': use {}", Self::TYPES.map(|t| format!("\"{t}\"")).join(", "))),
        };
        let raw = number.bits(x, bits).map_err(|e| format!("a {ty} {e}"))?;
        Ok(match ty {
            "u8" => SdoValue::U8(raw as u8),
            "i8" => SdoValue::I8(raw as u8 as i8),
            "u16" => SdoValue::U16(raw as u16),
            "i16" => SdoValue::I16(raw as u16 as i16),
            "u32" => SdoValue::U32(raw as u32),
            _ => SdoValue::I32(raw as u32 as i32),
        })
    }
}

/// How a number of a data type reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Number {
    /// One bit, false or true.
    Boolean,
    /// A two's-complement integer of the entry's bits.
    Signed,
    /// An unsigned integer (or a bit string) of the entry's bits.
    Unsigned,
    /// IEEE 754, 32 or 64 bits.
    Float,
}

impl Number {
    /// The number a `data_type` of `bit_len` bits holds; `None` for what is not one number
    /// (strings, a float of another width, more than 64 bits). A type the table does not know
    /// (0, or a vendor's) reads as unsigned, as masters show raw PDO data.
    pub fn of(data_type: u8, bit_len: u8) -> Option<Number> {
        let number = match data_type {
            BOOLEAN => Number::Boolean,
            INTEGER8 | INTEGER16 | INTEGER24 | INTEGER32 | INTEGER64 | 0x12..=0x14 => Number::Signed,
            REAL32 if bit_len == 32 => Number::Float,
            REAL64 if bit_len == 64 => Number::Float,
            REAL32 | REAL64 | VISIBLE_STRING | OCTET_STRING | 0x0B => return None,
            _ if bit_len == 1 => Number::Boolean,
            _ => Number::Unsigned,
        };
        (bit_len > 0 && bit_len <= 64).then_some(number)
    }

    /// The type's name as ETG.1000.6 writes it ("UNSIGNED16"), for messages and port docs.
    pub fn type_name(data_type: u8) -> String {
        match data_type {
            BOOLEAN => "BOOLEAN".into(),
            INTEGER8 => "INTEGER8".into(),
            INTEGER16 => "INTEGER16".into(),
            INTEGER24 => "INTEGER24".into(),
            INTEGER32 => "INTEGER32".into(),
            INTEGER64 => "INTEGER64".into(),
            UNSIGNED8 => "UNSIGNED8".into(),
            UNSIGNED16 => "UNSIGNED16".into(),
            UNSIGNED24 => "UNSIGNED24".into(),
            UNSIGNED32 => "UNSIGNED32".into(),
            UNSIGNED64 => "UNSIGNED64".into(),
            REAL32 => "REAL32".into(),
            REAL64 => "REAL64".into(),
            VISIBLE_STRING => "VISIBLE_STRING".into(),
            OCTET_STRING => "OCTET_STRING".into(),
            0x1E => "BYTE".into(),
            0x1F => "WORD".into(),
            0x20 => "DWORD".into(),
            0x2D => "BITARR8".into(),
            0x2E => "BITARR16".into(),
            0x2F => "BITARR32".into(),
            t @ 0x30..=0x3F => format!("BIT{}", t - 0x2F),
            t => format!("type 0x{t:02X}"),
        }
    }

    /// The value of `bits` (the entry's raw bits, right-aligned) as a number.
    pub fn value(self, bits: u64, bit_len: u8) -> f64 {
        match self {
            Number::Boolean => (bits & 1) as f64,
            Number::Unsigned => bits as f64,
            Number::Signed => {
                let shift = 64 - u32::from(bit_len.clamp(1, 64));
                ((bits << shift) as i64 >> shift) as f64
            }
            Number::Float if bit_len == 32 => f64::from(f32::from_bits(bits as u32)),
            Number::Float => f64::from_bits(bits),
        }
    }

    /// The raw bits of `x` for an entry of `bit_len` bits, or why `x` does not fit: a non-finite
    /// value, a fraction for an integer, or a value outside the entry's range.
    pub fn bits(self, x: f64, bit_len: u8) -> Result<u64, String> {
        let n = u32::from(bit_len.clamp(1, 64));
        let integer = |lo: f64, hi: f64| -> Result<f64, String> {
            if !x.is_finite() || x.fract() != 0.0 {
                return Err(format!("takes whole numbers, got {x}"));
            }
            if x < lo || x > hi {
                return Err(format!("takes {lo} to {hi}, got {x}"));
            }
            Ok(x)
        };
        match self {
            Number::Boolean => match x {
                0.0 => Ok(0),
                1.0 => Ok(1),
                _ => Err(format!("takes 0 or 1, got {x}")),
            },
            Number::Unsigned => {
                let hi = if n == 64 { u64::MAX as f64 } else { ((1u64 << n) - 1) as f64 };
                Ok(integer(0.0, hi)? as u64)
            }
            Number::Signed => {
                let hi = ((1u64 << (n - 1)) - 1) as f64;
                let v = integer(-hi - 1.0, hi)? as i64;
                Ok(if n == 64 { v as u64 } else { (v as u64) & ((1u64 << n) - 1) })
            }
            Number::Float if !x.is_finite() => Err(format!("takes finite numbers, got {x}")),
            Number::Float if n == 32 => Ok(u64::from((x as f32).to_bits())),
            Number::Float => Ok(x.to_bits()),
        }
    }
}

/// The `bit_len` bits (at most 64) from bit `offset` of `bytes` (bit 0 = the first byte's
/// least significant bit), right-aligned; bits past the end read 0.
pub fn read_bits(bytes: &[u8], offset: usize, bit_len: u8) -> u64 {
    let mut value = 0u64;
    for k in 0..usize::from(bit_len.min(64)) {
        let bit = offset + k;
        if bytes.get(bit / 8).is_some_and(|b| b >> (bit % 8) & 1 == 1) {
            value |= 1 << k;
        }
    }
    value
}

/// Writes the low `bit_len` bits (at most 64) of `value` at bit `offset` of `bytes`, leaving
/// the other bits as they are; bits past the end are dropped.
pub fn write_bits(bytes: &mut [u8], offset: usize, bit_len: u8, value: u64) {
    for k in 0..usize::from(bit_len.min(64)) {
        let bit = offset + k;
        if let Some(b) = bytes.get_mut(bit / 8) {
            let mask = 1u8 << (bit % 8);
            if value >> k & 1 == 1 {
                *b |= mask;
            } else {
                *b &= !mask;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_read_and_write_across_bytes_without_touching_neighbours() {
        let mut b = [0xFFu8, 0x00, 0xAA];
        write_bits(&mut b, 4, 8, 0x5A);
        assert_eq!(b, [0xAF, 0x05, 0xAA]);
        assert_eq!(read_bits(&b, 4, 8), 0x5A);
        assert_eq!(read_bits(&b, 16, 8), 0xAA);
        assert_eq!(read_bits(&b, 20, 8), 0x0A, "bits past the end read 0");
        write_bits(&mut b, 20, 8, 0xFF);
        assert_eq!(b[2], 0xFA, "bits past the end are dropped");
    }

    #[test]
    fn numbers_round_trip_and_refuse_what_does_not_fit() {
        let cases: [(u8, u8, f64); 7] = [(INTEGER16, 16, -1234.0), (UNSIGNED16, 16, 65535.0), (INTEGER32, 32, -2.0e9), (REAL32, 32, 1.5), (REAL64, 64, -0.1), (BOOLEAN, 1, 1.0), (BIT1 + 2, 3, 5.0)];
        for (t, n, x) in cases {
            let number = Number::of(t, n).unwrap();
            let bits = number.bits(x, n).unwrap();
            assert_eq!(number.value(bits, n), x, "{} {x}", Number::type_name(t));
        }
        assert_eq!(Number::of(INTEGER8, 8).unwrap().bits(-1.0, 8), Ok(0xFF));
        assert_eq!(Number::of(INTEGER8, 8).unwrap().value(0x80, 8), -128.0);
        assert!(Number::of(UNSIGNED8, 8).unwrap().bits(256.0, 8).unwrap_err().contains("0 to 255"));
        assert!(Number::of(INTEGER16, 16).unwrap().bits(0.5, 16).unwrap_err().contains("whole"));
        assert!(Number::of(UNSIGNED16, 16).unwrap().bits(f64::NAN, 16).is_err());
        assert!(Number::of(BOOLEAN, 1).unwrap().bits(2.0, 1).is_err());
        assert!(Number::of(REAL32, 32).unwrap().bits(f64::INFINITY, 32).is_err());
        assert_eq!(Number::of(VISIBLE_STRING, 64), None);
        assert_eq!(Number::of(REAL32, 16), None);
        assert_eq!(Number::of(0, 12), Some(Number::Unsigned), "an unknown type reads as raw bits");
        assert_eq!(Number::type_name(BIT1 + 1), "BIT2");
    }

    #[test]
    fn sdo_values_take_their_type_and_range() {
        assert_eq!(SdoValue::of("u16", 500.0), Ok(SdoValue::U16(500)));
        assert_eq!(SdoValue::of("i32", -7.0), Ok(SdoValue::I32(-7)));
        assert_eq!(SdoValue::of("i8", -128.0), Ok(SdoValue::I8(-128)));
        assert!(SdoValue::of("u8", 300.0).unwrap_err().contains("a u8 takes 0 to 255, got 300"));
        assert!(SdoValue::of("i16", 1.5).unwrap_err().contains("whole"));
        assert!(SdoValue::of("float", 1.0).unwrap_err().contains("unknown SDO type 'float'"));
    }
}
