//! SII EEPROM contents (ETG.1000.6 §5.4, ETG.2010): parse a real image into what a master reads
//! from it, and build an image from a device description for simulated devices that have none.
//!
//! The image is a sequence of 16-bit little-endian words: words 0x00..0x3F are fixed fields
//! (ESC configuration, identity, mailbox), categories start at word 0x40, each a header
//! `type u16, length u16 (in words)` followed by its data, ending with type 0xFFFF.

use std::fmt;

/// Word addresses of the fixed SII fields (ETG.2010 Table 2).
pub mod word {
    /// Configured Station Alias, loaded into register 0x0012 at power-up.
    pub const STATION_ALIAS: u16 = 0x0004;
    /// Checksum: CRC-8 of words 0..6 in the low byte ([`SiiImage::config_checksum`](super::SiiImage::config_checksum)).
    pub const CHECKSUM: u16 = 0x0007;
    /// Vendor ID (u32, two words).
    pub const VENDOR_ID: u16 = 0x0008;
    /// Product Code (u32, two words).
    pub const PRODUCT_CODE: u16 = 0x000A;
    /// Revision Number (u32, two words).
    pub const REVISION: u16 = 0x000C;
    /// Serial Number (u32, two words).
    pub const SERIAL: u16 = 0x000E;
    /// Bootstrap mailbox: receive offset, receive size, send offset, send size (four words).
    pub const BOOTSTRAP_RX_MAILBOX: u16 = 0x0014;
    /// Standard Receive Mailbox Offset: start of the master → device mailbox (SM0).
    pub const STD_RX_MAILBOX_OFFSET: u16 = 0x0018;
    /// Standard Receive Mailbox Size (bytes).
    pub const STD_RX_MAILBOX_SIZE: u16 = 0x0019;
    /// Standard Send Mailbox Offset: start of the device → master mailbox (SM1).
    pub const STD_TX_MAILBOX_OFFSET: u16 = 0x001A;
    /// Standard Send Mailbox Size (bytes).
    pub const STD_TX_MAILBOX_SIZE: u16 = 0x001B;
    /// Mailbox Protocol: the supported protocols, bits of [`protocol`](super::protocol).
    pub const MAILBOX_PROTOCOLS: u16 = 0x001C;
    /// Size: EEPROM size in KiBit − 1.
    pub const SIZE: u16 = 0x003E;
    /// Version of the SII layout (1).
    pub const VERSION: u16 = 0x003F;
    /// Where the first category header sits; everything before is fixed fields.
    pub const FIRST_CATEGORY: u16 = 0x0040;
}

/// Category types (ETG.2010 Table 3).
pub mod category {
    /// Strings: counted texts that other categories refer to by 1-based index.
    pub const STRINGS: u16 = 10;
    /// DataTypes (reserved by ETG.2010; not parsed).
    pub const DATA_TYPES: u16 = 20;
    /// General: names, CoE/FoE/EoE details, flags, E-Bus current ([`General`](super::General)).
    pub const GENERAL: u16 = 30;
    /// FMMU: one usage byte per FMMU ([`FmmuUsage`](super::FmmuUsage)).
    pub const FMMU: u16 = 40;
    /// SyncM: default SM settings, 8 bytes each ([`SyncManagerEntry`](super::SyncManagerEntry)).
    pub const SYNC_MANAGER: u16 = 41;
    /// TXPDO: fixed or default device → master PDOs ([`Pdo`](super::Pdo)).
    pub const TX_PDO: u16 = 50;
    /// RXPDO: fixed or default master → device PDOs ([`Pdo`](super::Pdo)).
    pub const RX_PDO: u16 = 51;
    /// DC: distributed-clock operation modes (not parsed).
    pub const DC: u16 = 60;
    /// End of the category list.
    pub const END: u16 = 0xFFFF;
}

/// Mailbox protocol bits in word 0x1C (ETG.2010 Table 2).
pub mod protocol {
    /// AoE: ADS over EtherCAT.
    pub const AOE: u16 = 0x01;
    /// EoE: Ethernet over EtherCAT.
    pub const EOE: u16 = 0x02;
    /// CoE: CANopen over EtherCAT (SDOs, object dictionary).
    pub const COE: u16 = 0x04;
    /// FoE: File access over EtherCAT.
    pub const FOE: u16 = 0x08;
    /// SoE: Servo drive profile over EtherCAT.
    pub const SOE: u16 = 0x10;
    /// VoE: Vendor specific protocol over EtherCAT.
    pub const VOE: u16 = 0x20;
}

/// CoE details bits of the General category (ETG.2010 Table 4).
pub mod coe_details {
    /// SDO transfers supported.
    pub const SDO: u8 = 0x01;
    /// SDO Information service supported (object dictionary listing).
    pub const SDO_INFO: u8 = 0x02;
    /// PDO assignment (0x1C1x) can be written.
    pub const PDO_ASSIGN: u8 = 0x04;
    /// PDO mapping (0x16xx/0x1Axx) can be written.
    pub const PDO_CONFIG: u8 = 0x08;
    /// The master should read the PDO configuration at start-up.
    pub const UPLOAD_AT_STARTUP: u8 = 0x10;
    /// SDO Complete Access (a whole object in one transfer) supported.
    pub const COMPLETE_ACCESS: u8 = 0x20;
}

/// What can be wrong with an SII image, or with one to be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SiiError {
    /// Image shorter than the fixed header (128 bytes) or not a whole number of words.
    TooShort {
        /// Bytes in the image.
        len: usize,
    },
    /// A category header or its data runs past the image.
    CategoryOverrun {
        /// Word address of the category header.
        word_address: u16,
    },
    /// Text image with a character that is not a hex digit.
    BadHexText {
        /// Byte offset of the bad character in the text.
        position: usize,
    },
    /// A string index refers past the strings category.
    BadStringIndex {
        /// The 1-based string index.
        index: u8,
    },
    /// The built image would not fit the given size.
    ImageTooLarge {
        /// Words the image would take.
        words: usize,
    },
}

impl fmt::Display for SiiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooShort { len } => write!(f, "SII image of {len} bytes is shorter than its 128-byte header"),
            Self::CategoryOverrun { word_address } => write!(f, "SII category at word {word_address:#06x} runs past the image"),
            Self::BadHexText { position } => write!(f, "SII hex text has a non-hex character at {position}"),
            Self::BadStringIndex { index } => write!(f, "SII string index {index} is not in the strings category"),
            Self::ImageTooLarge { words } => write!(f, "SII image of {words} words is too large"),
        }
    }
}

impl std::error::Error for SiiError {}

/// Who a device is: the identity object 0x1018's four values, as words 0x08..0x0F hold them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Identity {
    /// Vendor ID assigned by the ETG (2: Beckhoff).
    pub vendor_id: u32,
    /// The vendor's product code.
    pub product_code: u32,
    /// Revision number.
    pub revision: u32,
    /// Serial number.
    pub serial: u32,
}

/// The standard mailbox, as words 0x18..0x1C describe it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MailboxConfig {
    /// Start of the master → device mailbox (SM0) in ESC memory.
    pub receive_offset: u16,
    /// Size of the master → device mailbox (bytes; 0: no mailbox).
    pub receive_size: u16,
    /// Start of the device → master mailbox (SM1) in ESC memory.
    pub send_offset: u16,
    /// Size of the device → master mailbox (bytes; 0: no mailbox).
    pub send_size: u16,
    /// Supported mailbox protocols, bits of [`protocol`].
    pub protocols: u16,
}

impl MailboxConfig {
    /// Both mailbox directions are configured.
    pub fn has_mailbox(&self) -> bool {
        self.receive_size > 0 && self.send_size > 0
    }

    /// A mailbox that speaks CoE (SDOs).
    pub fn has_coe(&self) -> bool {
        self.has_mailbox() && self.protocols & protocol::COE != 0
    }
}

/// The General category, the fields a master uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct General {
    /// GroupIdx: string index of the device group.
    pub group_string: u8,
    /// ImgIdx: string index of the device's image name for configuration tools.
    pub image_string: u8,
    /// OrderIdx: string index of the order code, e.g. "EK1100".
    pub order_string: u8,
    /// NameIdx: string index of the long device name.
    pub name_string: u8,
    /// CoE Details: bits of [`coe_details`].
    pub coe_details: u8,
    /// FoE Details: bit 0 set when FoE is supported.
    pub foe_details: u8,
    /// EoE Details: bit 0 set when EoE is supported.
    pub eoe_details: u8,
    /// DS402 channel count (byte 9 of the General category, ETG.2010 Table 4; byte 10 is SysmanClass).
    pub ds402_channels: u8,
    /// Flags: bit 0 Enable SafeOp, bit 1 Enable notLRW, bit 2 MBoxDataLinkLayer, bit 3 IdentALSts, bit 4 IdentPhyM.
    pub flags: u8,
    /// Current drawn from the E-Bus (mA); negative: the device feeds current in.
    pub ebus_current_ma: i16,
}

/// FMMU usage byte (ETG.2010 Table 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FmmuUsage {
    /// Not used (0x00 or 0xFF).
    Unused,
    /// Maps outputs (master → device process data).
    Outputs,
    /// Maps inputs (device → master process data).
    Inputs,
    /// Maps a SyncManager's status (read-mailbox state).
    SyncManagerStatus,
    /// A value ETG.2010 does not define, kept as read.
    Other(u8),
}

impl FmmuUsage {
    fn from_byte(b: u8) -> Self {
        match b {
            0 | 0xFF => Self::Unused,
            1 => Self::Outputs,
            2 => Self::Inputs,
            3 => Self::SyncManagerStatus,
            other => Self::Other(other),
        }
    }

    fn to_byte(self) -> u8 {
        match self {
            Self::Unused => 0,
            Self::Outputs => 1,
            Self::Inputs => 2,
            Self::SyncManagerStatus => 3,
            Self::Other(b) => b,
        }
    }
}

/// SyncManager usage (ETG.2010 Table 7, last byte of each SyncM entry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncManagerUsage {
    /// Not used.
    Unused,
    /// Mailbox, master → device (SM0).
    MailboxOut,
    /// Mailbox, device → master (SM1).
    MailboxIn,
    /// Process data outputs (usually SM2).
    ProcessDataOut,
    /// Process data inputs (usually SM3).
    ProcessDataIn,
    /// A value ETG.2010 does not define, kept as read.
    Other(u8),
}

impl SyncManagerUsage {
    fn from_byte(b: u8) -> Self {
        match b {
            0 => Self::Unused,
            1 => Self::MailboxOut,
            2 => Self::MailboxIn,
            3 => Self::ProcessDataOut,
            4 => Self::ProcessDataIn,
            other => Self::Other(other),
        }
    }

    fn to_byte(self) -> u8 {
        match self {
            Self::Unused => 0,
            Self::MailboxOut => 1,
            Self::MailboxIn => 2,
            Self::ProcessDataOut => 3,
            Self::ProcessDataIn => 4,
            Self::Other(b) => b,
        }
    }
}

/// One SyncM category entry: the default SM register values (0x0800 + 8n).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncManagerEntry {
    /// Physical start address in ESC memory.
    pub start: u16,
    /// Length (bytes).
    pub length: u16,
    /// Control register value (0x0804 + 8n): mode, direction, interrupts.
    pub control: u8,
    /// Enable byte: bit 0 enable, bit 1 fixed content, bit 2 virtual SM, bit 3 OP only.
    pub enable: u8,
    /// What the SyncManager is for.
    pub usage: SyncManagerUsage,
}

/// One mapped object in a PDO of the TXPDO/RXPDO categories.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PdoEntry {
    /// Index of the mapped object (0 for a gap).
    pub index: u16,
    /// Subindex of the mapped object.
    pub sub_index: u8,
    /// String index of the entry's name.
    pub name_string: u8,
    /// CoE data type code (ETG.1000.6 data type area, e.g. 7 = UNSIGNED32).
    pub data_type: u8,
    /// Size in the process image (bits).
    pub bit_len: u8,
}

/// A fixed or default PDO from the TXPDO/RXPDO categories.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pdo {
    /// PDO index: 0x1600.. for RxPDOs, 0x1A00.. for TxPDOs.
    pub index: u16,
    /// SyncManager the PDO is assigned to.
    pub sync_manager: u8,
    /// String index of the PDO's name.
    pub name_string: u8,
    /// Mapped objects, in process-image order.
    pub entries: Vec<PdoEntry>,
}

impl Pdo {
    /// Size of the PDO in the process image (bits).
    pub fn bit_len(&self) -> u32 {
        self.entries.iter().map(|e| u32::from(e.bit_len)).sum()
    }
}

/// Everything a master learns from an SII image.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SiiInfo {
    /// Configured Station Alias (word 0x04).
    pub station_alias: u16,
    /// Vendor, product, revision and serial.
    pub identity: Identity,
    /// The standard mailbox.
    pub mailbox: MailboxConfig,
    /// Size in bytes, from word 0x3E (KiBit − 1).
    pub size_bytes: usize,
    /// SII layout version (word 0x3F).
    pub version: u16,
    /// Strings category, index 1 first (index 0 means "no string").
    pub strings: Vec<String>,
    /// The General category; `None` when missing or too short.
    pub general: Option<General>,
    /// FMMU category: the intended use of each FMMU.
    pub fmmus: Vec<FmmuUsage>,
    /// SyncM category: each SyncManager's default settings.
    pub sync_managers: Vec<SyncManagerEntry>,
    /// TXPDO category: device → master PDOs.
    pub tx_pdos: Vec<Pdo>,
    /// RXPDO category: master → device PDOs.
    pub rx_pdos: Vec<Pdo>,
}

impl SiiInfo {
    /// String `index` (1-based as in the SII); `None` for 0 or out of range.
    pub fn string(&self, index: u8) -> Option<&str> {
        let i = usize::from(index).checked_sub(1)?;
        self.strings.get(i).map(String::as_str)
    }

    /// The device name as masters show it (ethercrab, SOEM): the General category's order
    /// string, e.g. "EK1100".
    pub fn name(&self) -> Option<&str> {
        self.general.and_then(|g| self.string(g.order_string))
    }

    /// The long description: the General category's name string, e.g.
    /// "EK1100 EtherCAT-Koppler (2A E-Bus)".
    pub fn description(&self) -> Option<&str> {
        self.general.and_then(|g| self.string(g.name_string))
    }
}

/// A raw image, as words in little-endian bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiiImage {
    bytes: Vec<u8>,
}

impl SiiImage {
    /// Wraps raw bytes (`.bin` files, and the reference `.hex` files, which are raw bytes too).
    /// Text images (hex digits and whitespace only) are decoded first.
    pub fn from_file_bytes(bytes: &[u8]) -> Result<Self, SiiError> {
        let is_text = !bytes.is_empty() && bytes.iter().all(|b| b.is_ascii_hexdigit() || b.is_ascii_whitespace());
        let raw = if is_text { decode_hex_text(bytes)? } else { bytes.to_vec() };
        Self::from_raw(raw)
    }

    /// Takes raw EEPROM bytes; an odd length is padded with 0xFF (unprogrammed).
    pub fn from_raw(mut bytes: Vec<u8>) -> Result<Self, SiiError> {
        if bytes.len() < usize::from(word::FIRST_CATEGORY) * 2 {
            return Err(SiiError::TooShort { len: bytes.len() });
        }
        if bytes.len() % 2 == 1 {
            bytes.push(0xFF);
        }
        Ok(Self { bytes })
    }

    /// The image as little-endian bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Length in 16-bit words.
    pub fn len_words(&self) -> usize {
        self.bytes.len() / 2
    }

    /// The word at `address`; an unprogrammed EEPROM reads 0xFFFF past its end.
    pub fn word(&self, address: u16) -> u16 {
        let i = usize::from(address) * 2;
        match self.bytes.get(i..i + 2) {
            Some(b) => u16::from_le_bytes([b[0], b[1]]),
            None => 0xFFFF,
        }
    }

    /// Writes the word at `address`; false when it is past the end of the image.
    pub fn set_word(&mut self, address: u16, value: u16) -> bool {
        let i = usize::from(address) * 2;
        match self.bytes.get_mut(i..i + 2) {
            Some(b) => {
                b.copy_from_slice(&value.to_le_bytes());
                true
            }
            None => false,
        }
    }

    fn dword(&self, address: u16) -> u32 {
        u32::from(self.word(address)) | (u32::from(self.word(address + 1)) << 16)
    }

    /// CRC-8 (poly 0x07, init 0xFF) over words 0..6, as stored in the low byte of word 7
    /// (ETG.2010 §2.2 "Checksum").
    pub fn config_checksum(&self) -> u8 {
        crc8(&self.bytes[0..14])
    }

    /// Decodes the fixed fields and categories.
    pub fn parse(&self) -> Result<SiiInfo, SiiError> {
        let mut info = SiiInfo {
            station_alias: self.word(word::STATION_ALIAS),
            identity: Identity {
                vendor_id: self.dword(word::VENDOR_ID),
                product_code: self.dword(word::PRODUCT_CODE),
                revision: self.dword(word::REVISION),
                serial: self.dword(word::SERIAL),
            },
            mailbox: MailboxConfig {
                receive_offset: self.word(word::STD_RX_MAILBOX_OFFSET),
                receive_size: self.word(word::STD_RX_MAILBOX_SIZE),
                send_offset: self.word(word::STD_TX_MAILBOX_OFFSET),
                send_size: self.word(word::STD_TX_MAILBOX_SIZE),
                protocols: self.word(word::MAILBOX_PROTOCOLS),
            },
            size_bytes: (usize::from(self.word(word::SIZE)) + 1) * 128,
            version: self.word(word::VERSION),
            ..SiiInfo::default()
        };
        let mut address = word::FIRST_CATEGORY;
        while usize::from(address) + 2 <= self.len_words() {
            let kind = self.word(address);
            if kind == category::END {
                break;
            }
            let len_words = self.word(address + 1);
            let start = usize::from(address) * 2 + 4;
            let end = start + usize::from(len_words) * 2;
            let data = self.bytes.get(start..end).ok_or(SiiError::CategoryOverrun { word_address: address })?;
            match kind {
                category::STRINGS => info.strings = parse_strings(data),
                category::GENERAL => info.general = parse_general(data),
                category::FMMU => info.fmmus = data.iter().map(|&b| FmmuUsage::from_byte(b)).collect(),
                category::SYNC_MANAGER => info.sync_managers = parse_sync_managers(data),
                category::TX_PDO => info.tx_pdos = parse_pdos(data),
                category::RX_PDO => info.rx_pdos = parse_pdos(data),
                _ => {}
            }
            address = match address.checked_add(2 + len_words) {
                Some(a) => a,
                None => break,
            };
        }
        Ok(info)
    }
}

fn decode_hex_text(text: &[u8]) -> Result<Vec<u8>, SiiError> {
    let mut out = Vec::with_capacity(text.len() / 2);
    let mut high: Option<u8> = None;
    for (position, &c) in text.iter().enumerate() {
        if c.is_ascii_whitespace() {
            continue;
        }
        let nibble = (c as char).to_digit(16).ok_or(SiiError::BadHexText { position })? as u8;
        match high.take() {
            Some(h) => out.push(h << 4 | nibble),
            None => high = Some(nibble),
        }
    }
    Ok(out)
}

/// CRC-8 with polynomial x^8 + x^2 + x + 1 and initial value 0xFF (ETG.2010 §2.2).
fn crc8(data: &[u8]) -> u8 {
    let mut crc = 0xFFu8;
    for &b in data {
        crc ^= b;
        for _ in 0..8 {
            crc = if crc & 0x80 != 0 { (crc << 1) ^ 0x07 } else { crc << 1 };
        }
    }
    crc
}

fn parse_strings(data: &[u8]) -> Vec<String> {
    let Some((&count, mut rest)) = data.split_first() else { return Vec::new() };
    let mut strings = Vec::with_capacity(count.into());
    for _ in 0..count {
        let Some((&len, tail)) = rest.split_first() else { break };
        let len = usize::from(len).min(tail.len());
        strings.push(String::from_utf8_lossy(&tail[..len]).into_owned());
        rest = &tail[len..];
    }
    strings
}

fn parse_general(d: &[u8]) -> Option<General> {
    if d.len() < 14 {
        return None;
    }
    Some(General {
        group_string: d[0],
        image_string: d[1],
        order_string: d[2],
        name_string: d[3],
        coe_details: d[5],
        foe_details: d[6],
        eoe_details: d[7],
        ds402_channels: d[9],
        flags: d[11],
        ebus_current_ma: i16::from_le_bytes([d[12], d[13]]),
    })
}

fn parse_sync_managers(data: &[u8]) -> Vec<SyncManagerEntry> {
    data.chunks_exact(8)
        .map(|c| SyncManagerEntry {
            start: u16::from_le_bytes([c[0], c[1]]),
            length: u16::from_le_bytes([c[2], c[3]]),
            control: c[4],
            enable: c[6],
            usage: SyncManagerUsage::from_byte(c[7]),
        })
        .collect()
}

fn parse_pdos(mut data: &[u8]) -> Vec<Pdo> {
    let mut pdos = Vec::new();
    while data.len() >= 8 {
        let count = usize::from(data[2]);
        let mut pdo = Pdo { index: u16::from_le_bytes([data[0], data[1]]), sync_manager: data[3], name_string: data[5], entries: Vec::with_capacity(count) };
        data = &data[8..];
        for _ in 0..count {
            let Some(e) = data.get(..8) else { break };
            pdo.entries.push(PdoEntry { index: u16::from_le_bytes([e[0], e[1]]), sub_index: e[2], name_string: e[3], data_type: e[4], bit_len: e[5] });
            data = &data[8..];
        }
        pdos.push(pdo);
    }
    pdos
}

/// What a simulated device without a real image puts in its EEPROM.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeviceDescription {
    /// Vendor, product, revision and serial.
    pub identity: Identity,
    /// Long device name (the General category's NameIdx string).
    pub name: String,
    /// Device group (GroupIdx string).
    pub group: String,
    /// Order code, the short name masters show (OrderIdx string).
    pub order_code: String,
    /// The standard mailbox; sizes 0 for a device without one.
    pub mailbox: MailboxConfig,
    /// CoE Details byte of the General category, bits of [`coe_details`].
    pub coe_details: u8,
    /// FMMU category: the intended use of each FMMU.
    pub fmmus: Vec<FmmuUsage>,
    /// SyncM category: each SyncManager's default settings.
    pub sync_managers: Vec<SyncManagerEntry>,
    /// TXPDO category: device → master PDOs.
    pub tx_pdos: Vec<Pdo>,
    /// RXPDO category: master → device PDOs.
    pub rx_pdos: Vec<Pdo>,
    /// Names of PDOs and their entries: a `name_string` k ≥ 1 in `tx_pdos` and `rx_pdos`
    /// means `strings[k - 1]` (the image numbers them after the device's own names).
    pub strings: Vec<String>,
}

/// Builds an image of `size_bytes` (a power of two ≥ 256; unprogrammed bytes are 0xFF).
pub fn build_image(desc: &DeviceDescription, size_bytes: usize) -> Result<SiiImage, SiiError> {
    let mut words: Vec<u16> = vec![0; usize::from(word::FIRST_CATEGORY)];
    // ESC configuration area: PDI control 0x0000 keeps the PDI off; simulated devices need none.
    let id = desc.identity;
    for (address, value) in [(word::VENDOR_ID, id.vendor_id), (word::PRODUCT_CODE, id.product_code), (word::REVISION, id.revision), (word::SERIAL, id.serial)] {
        words[usize::from(address)] = value as u16;
        words[usize::from(address) + 1] = (value >> 16) as u16;
    }
    let mb = desc.mailbox;
    words[usize::from(word::BOOTSTRAP_RX_MAILBOX)..usize::from(word::BOOTSTRAP_RX_MAILBOX) + 4].copy_from_slice(&[mb.receive_offset, mb.receive_size, mb.send_offset, mb.send_size]);
    words[usize::from(word::STD_RX_MAILBOX_OFFSET)] = mb.receive_offset;
    words[usize::from(word::STD_RX_MAILBOX_SIZE)] = mb.receive_size;
    words[usize::from(word::STD_TX_MAILBOX_OFFSET)] = mb.send_offset;
    words[usize::from(word::STD_TX_MAILBOX_SIZE)] = mb.send_size;
    words[usize::from(word::MAILBOX_PROTOCOLS)] = mb.protocols;
    words[usize::from(word::SIZE)] = ((size_bytes / 128).max(1) - 1) as u16;
    words[usize::from(word::VERSION)] = 1;

    let mut strings: Vec<String> = Vec::new();
    let mut intern = |s: &str| -> u8 {
        if s.is_empty() {
            return 0;
        }
        if let Some(i) = strings.iter().position(|x| x == s) {
            return (i + 1) as u8;
        }
        strings.push(s.to_string());
        strings.len() as u8
    };
    // Order code first, as in Beckhoff's images: SOEM names a device by string 1, ethercrab
    // by the order code, so both then show the short name.
    let order = intern(&desc.order_code);
    let group = intern(&desc.group);
    let name = intern(&desc.name);
    let pdo_strings = strings.len() as u8;
    strings.extend(desc.strings.iter().cloned());
    let pdo_string = |k: u8| if k == 0 { 0 } else { k.saturating_add(pdo_strings) };

    let mut categories: Vec<(u16, Vec<u8>)> = Vec::new();
    let mut strings_data = vec![strings.len() as u8];
    for s in &strings {
        let b = s.as_bytes();
        let len = b.len().min(255);
        strings_data.push(len as u8);
        strings_data.extend_from_slice(&b[..len]);
    }
    categories.push((category::STRINGS, strings_data));
    let mut general = vec![0u8; 32];
    general[0] = group;
    general[2] = order;
    general[3] = name;
    general[5] = desc.coe_details;
    categories.push((category::GENERAL, general));
    if !desc.fmmus.is_empty() {
        categories.push((category::FMMU, desc.fmmus.iter().map(|f| f.to_byte()).collect()));
    }
    if !desc.sync_managers.is_empty() {
        let mut d = Vec::new();
        for sm in &desc.sync_managers {
            d.extend_from_slice(&sm.start.to_le_bytes());
            d.extend_from_slice(&sm.length.to_le_bytes());
            d.extend_from_slice(&[sm.control, 0, sm.enable, sm.usage.to_byte()]);
        }
        categories.push((category::SYNC_MANAGER, d));
    }
    for (kind, pdos) in [(category::TX_PDO, &desc.tx_pdos), (category::RX_PDO, &desc.rx_pdos)] {
        if pdos.is_empty() {
            continue;
        }
        let mut d = Vec::new();
        for p in pdos.iter() {
            d.extend_from_slice(&p.index.to_le_bytes());
            d.extend_from_slice(&[p.entries.len() as u8, p.sync_manager, 0, pdo_string(p.name_string), 0, 0]);
            for e in &p.entries {
                d.extend_from_slice(&e.index.to_le_bytes());
                d.extend_from_slice(&[e.sub_index, pdo_string(e.name_string), e.data_type, e.bit_len, 0, 0]);
            }
        }
        categories.push((kind, d));
    }
    for (kind, mut data) in categories {
        if data.len() % 2 == 1 {
            data.push(0);
        }
        words.push(kind);
        words.push((data.len() / 2) as u16);
        words.extend(data.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])));
    }
    words.push(category::END);
    if words.len() * 2 > size_bytes {
        return Err(SiiError::ImageTooLarge { words: words.len() });
    }
    let mut bytes = vec![0xFFu8; size_bytes];
    for (i, w) in words.iter().enumerate() {
        bytes[i * 2..i * 2 + 2].copy_from_slice(&w.to_le_bytes());
    }
    let mut image = SiiImage::from_raw(bytes)?;
    let checksum = image.config_checksum();
    image.set_word(word::CHECKSUM, u16::from(checksum));
    Ok(image)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub fn reference_image(name: &str) -> SiiImage {
        let path = format!("{}/../../tests/data/reference/ethercat/eeprom/{name}", env!("CARGO_MANIFEST_DIR"));
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        SiiImage::from_file_bytes(&bytes).unwrap()
    }

    #[test]
    fn general_reads_each_field_from_its_own_byte() {
        // ETG.2010 Table 4: byte 9 DS402Channels, byte 10 SysmanClass, byte 11 Flags.
        let mut d = [0u8; 32];
        (d[5], d[9], d[10], d[11]) = (0x23, 2, 0x77, 0x01);
        d[12..14].copy_from_slice(&(-100i16).to_le_bytes());
        let g = parse_general(&d).unwrap();
        assert_eq!((g.coe_details, g.ds402_channels, g.flags, g.ebus_current_ma), (0x23, 2, 0x01, -100));
    }

    #[test]
    fn parses_ek1100() {
        let info = reference_image("ek1100.hex").parse().unwrap();
        assert_eq!(info.identity.vendor_id, 0x2);
        assert_eq!(info.identity.product_code, 0x044c_2c52);
        assert_eq!(info.name(), Some("EK1100"));
        assert_eq!(info.description(), Some("EK1100 EtherCAT-Koppler (2A E-Bus)"));
        assert!(!info.mailbox.has_mailbox());
        assert!(info.sync_managers.is_empty());
    }

    #[test]
    fn parses_all_reference_images_with_valid_checksums() {
        for name in ["ek1100.hex", "el2004.bin", "el2828.hex", "el2889.hex", "el2262.bin", "akd.hex", "hbm_clipx_eeprom_dump.bin"] {
            let image = reference_image(name);
            let info = image.parse().unwrap();
            assert_eq!(u16::from(image.config_checksum()), image.word(word::CHECKSUM) & 0xFF, "{name}");
            assert!(info.identity.vendor_id != 0, "{name}");
            assert!(!info.strings.is_empty(), "{name}");
        }
    }

    #[test]
    fn parses_el2004_outputs_and_akd_mailbox() {
        let el2004 = reference_image("el2004.bin").parse().unwrap();
        assert_eq!(el2004.name(), Some("EL2004"));
        assert_eq!(el2004.identity.product_code, 0x07d4_3052);
        assert_eq!(el2004.rx_pdos.iter().map(Pdo::bit_len).sum::<u32>(), 4);
        assert!(el2004.sync_managers.iter().any(|s| s.usage == SyncManagerUsage::ProcessDataOut));

        let akd = reference_image("akd.hex").parse().unwrap();
        assert_eq!(akd.name(), Some("AKD"));
        assert!(akd.mailbox.has_coe());
        assert_eq!(akd.sync_managers[0].usage, SyncManagerUsage::MailboxOut);
        assert_eq!(akd.sync_managers[1].usage, SyncManagerUsage::MailboxIn);
    }

    #[test]
    fn hex_text_decodes_like_raw() {
        let raw = reference_image("ek1100.hex");
        let text: String = raw.bytes().iter().map(|b| format!("{b:02x} ")).collect();
        assert_eq!(SiiImage::from_file_bytes(text.as_bytes()).unwrap(), raw);
        assert_eq!(SiiImage::from_file_bytes(b"0g"), Err(SiiError::TooShort { len: 2 }));
        assert!(matches!(decode_hex_text(b"0g"), Err(SiiError::BadHexText { position: 1 })));
    }

    #[test]
    fn truncated_or_garbage_images_do_not_panic() {
        let raw = reference_image("akd.hex");
        for cut in (0..raw.bytes().len()).step_by(7) {
            if let Ok(image) = SiiImage::from_raw(raw.bytes()[..cut].to_vec()) {
                let _ = image.parse();
            }
        }
        let mut junk = raw.bytes().to_vec();
        for (i, b) in junk.iter_mut().enumerate().skip(128) {
            *b = (i * 37 % 251) as u8;
        }
        let _ = SiiImage::from_raw(junk).unwrap().parse();
    }

    #[test]
    fn built_image_parses_back() {
        let desc = DeviceDescription {
            identity: Identity { vendor_id: 0x1234, product_code: 0x42, revision: 3, serial: 7 },
            name: "MORC-SERVO".into(),
            group: "Drives".into(),
            order_code: "MS-1".into(),
            mailbox: MailboxConfig { receive_offset: 0x1000, receive_size: 128, send_offset: 0x1080, send_size: 128, protocols: protocol::COE },
            coe_details: coe_details::SDO | coe_details::COMPLETE_ACCESS,
            fmmus: vec![FmmuUsage::Outputs, FmmuUsage::Inputs, FmmuUsage::SyncManagerStatus],
            sync_managers: vec![SyncManagerEntry { start: 0x1000, length: 128, control: 0x26, enable: 1, usage: SyncManagerUsage::MailboxOut }],
            tx_pdos: vec![Pdo {
                index: 0x1A00,
                sync_manager: 3,
                name_string: 1,
                entries: vec![PdoEntry { index: 0x6041, sub_index: 0, name_string: 2, data_type: 6, bit_len: 16 }],
            }],
            rx_pdos: vec![],
            strings: vec!["Inputs".into(), "Statusword".into()],
        };
        let image = build_image(&desc, 2048).unwrap();
        let info = image.parse().unwrap();
        assert_eq!(info.identity, desc.identity);
        assert_eq!(info.name(), Some("MS-1"));
        assert_eq!(info.description(), Some("MORC-SERVO"));
        assert_eq!(info.mailbox, desc.mailbox);
        assert_eq!(info.general.unwrap().coe_details, desc.coe_details);
        // The category is padded to whole words with an unused entry.
        assert_eq!(&info.fmmus[..3], &desc.fmmus[..]);
        assert_eq!(info.sync_managers, desc.sync_managers);
        // PDO names count in the description's strings, after the device's own names.
        let pdo = &info.tx_pdos[0];
        assert_eq!((pdo.index, pdo.sync_manager, &pdo.entries[0].index), (0x1A00, 3, &0x6041));
        assert_eq!(info.string(pdo.name_string), Some("Inputs"));
        assert_eq!(info.string(pdo.entries[0].name_string), Some("Statusword"));
        assert_eq!(info.size_bytes, 2048);
        assert_eq!(u16::from(image.config_checksum()), image.word(word::CHECKSUM));
    }
}
