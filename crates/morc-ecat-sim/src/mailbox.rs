//! CoE (CANopen over EtherCAT) on the mailbox: an object dictionary per device and an SDO
//! server — expedited, normal and segmented upload/download, complete access, aborts.
//!
//! Mailbox frame (ETG.1000.4 §5.6): header `length u16, address u16, channel/priority u8,
//! type (bits 0..3) | counter (bits 4..6) u8`, then the protocol data. CoE (type 3) adds
//! `number (bits 0..8) | service (bits 12..15) u16`, and SDO services a command byte, index,
//! sub-index and data (ETG.1000.6 §5.6.2).

use super::esc::AlState;

/// Mailbox types (ETG.1000.4 Table 29).
pub const MAILBOX_TYPE_ERROR: u8 = 0x00;
pub const MAILBOX_TYPE_COE: u8 = 0x03;
/// Mailbox header length.
pub const MAILBOX_HEADER_LEN: usize = 6;
/// CoE header + SDO command + index + sub-index + 4 data/size bytes.
const SDO_HEADER_LEN: usize = 2 + 1 + 2 + 1;

/// CoE services (ETG.1000.6 Table 29).
const COE_SDO_REQUEST: u8 = 2;
const COE_SDO_RESPONSE: u8 = 3;
const COE_SDO_INFO: u8 = 8;

/// SDO abort codes (ETG.1000.6 Table 41), the table whole even where the simulation raises none.
#[allow(dead_code)]
pub mod abort {
    pub const TOGGLE_BIT: u32 = 0x0503_0000;
    pub const COMMAND_SPECIFIER: u32 = 0x0504_0001;
    pub const UNSUPPORTED_ACCESS: u32 = 0x0601_0000;
    pub const WRITE_ONLY: u32 = 0x0601_0001;
    pub const READ_ONLY: u32 = 0x0601_0002;
    pub const SUBINDEX_0_NOT_ZERO: u32 = 0x0601_0003;
    pub const COMPLETE_ACCESS_UNSUPPORTED: u32 = 0x0601_0004;
    pub const OBJECT_NOT_FOUND: u32 = 0x0602_0000;
    pub const LENGTH_MISMATCH: u32 = 0x0607_0010;
    pub const LENGTH_TOO_HIGH: u32 = 0x0607_0012;
    pub const LENGTH_TOO_LOW: u32 = 0x0607_0013;
    pub const SUBINDEX_NOT_FOUND: u32 = 0x0609_0011;
    pub const VALUE_RANGE: u32 = 0x0609_0030;
    pub const GENERAL: u32 = 0x0800_0000;
    pub const DEVICE_STATE: u32 = 0x0800_0022;
}

/// Who may write an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(clippy::enum_variant_names)] // ETG.1000.6's names for the access attributes
pub enum Access {
    /// Read only.
    ReadOnly,
    /// Readable and writable in every state.
    ReadWrite,
    /// Writable in PreOp only, like PDO assignment and mapping (ETG.1000.6 §5.6.7.4).
    ReadWritePreOp,
}

/// One sub-index: its bytes (little-endian) and access.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub value: Vec<u8>,
    pub access: Access,
    /// Strings may be written shorter than their capacity.
    pub variable_length: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Object {
    pub index: u16,
    pub name: String,
    /// For a variable, one entry at sub-index 0. For records/arrays, sub-index 0 is the
    /// number of sub-indices in use (u8) and entries 1.. follow.
    pub entries: Vec<Entry>,
    pub is_record: bool,
}

/// An object dictionary, sorted by index so lookups are a binary search (no allocation).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObjectDictionary {
    objects: Vec<Object>,
}

impl ObjectDictionary {
    /// An empty dictionary.
    pub fn new() -> Self {
        Self::default()
    }

    fn insert(&mut self, object: Object) {
        match self.objects.binary_search_by_key(&object.index, |o| o.index) {
            Ok(i) => self.objects[i] = object,
            Err(i) => self.objects.insert(i, object),
        }
    }

    /// Adds a variable (value at sub-index 0).
    pub fn add_var(&mut self, index: u16, name: &str, value: &[u8], access: Access) -> &mut Self {
        self.insert(Object { index, name: name.into(), entries: vec![Entry { value: value.to_vec(), access, variable_length: false }], is_record: false });
        self
    }

    /// Adds a visible string variable.
    pub fn add_string(&mut self, index: u16, name: &str, value: &str) -> &mut Self {
        self.insert(Object {
            index,
            name: name.into(),
            entries: vec![Entry { value: value.as_bytes().to_vec(), access: Access::ReadOnly, variable_length: true }],
            is_record: false,
        });
        self
    }

    /// Adds a record/array; sub-index 0 holds `subs.len()` with `count_access`.
    pub fn add_record(&mut self, index: u16, name: &str, count_access: Access, subs: &[(&[u8], Access)]) -> &mut Self {
        let mut entries = Vec::with_capacity(subs.len() + 1);
        entries.push(Entry { value: vec![subs.len() as u8], access: count_access, variable_length: false });
        entries.extend(subs.iter().map(|(v, a)| Entry { value: v.to_vec(), access: *a, variable_length: false }));
        self.insert(Object { index, name: name.into(), entries, is_record: true });
        self
    }

    /// Adds the identity object (0x1018: vendor id, product code, revision, serial), read-only.
    pub fn add_identity(&mut self, identity: &morc_ecat_wire::sii::Identity) -> &mut Self {
        use Access::ReadOnly;
        let words = [identity.vendor_id, identity.product_code, identity.revision, identity.serial].map(u32::to_le_bytes);
        let subs: Vec<(&[u8], Access)> = words.iter().map(|w| (&w[..], ReadOnly)).collect();
        self.add_record(0x1018, "Identity", ReadOnly, &subs)
    }

    /// The object at `index`, if any.
    pub fn object(&self, index: u16) -> Option<&Object> {
        self.objects.binary_search_by_key(&index, |o| o.index).ok().map(|i| &self.objects[i])
    }

    fn object_mut(&mut self, index: u16) -> Option<&mut Object> {
        self.objects.binary_search_by_key(&index, |o| o.index).ok().map(move |i| &mut self.objects[i])
    }

    /// The indices of its objects, in order.
    pub fn indices(&self) -> impl Iterator<Item = u16> + '_ {
        self.objects.iter().map(|o| o.index)
    }

    /// The bytes of `index:sub`, or the abort code a master would get.
    pub fn read(&self, index: u16, sub: u8) -> Result<&[u8], u32> {
        let object = self.object(index).ok_or(abort::OBJECT_NOT_FOUND)?;
        let entry = object.entries.get(usize::from(sub)).ok_or(abort::SUBINDEX_NOT_FOUND)?;
        Ok(&entry.value)
    }

    /// Writes `index:sub` as a master would (access and length checked).
    pub fn write(&mut self, index: u16, sub: u8, data: &[u8], state: AlState) -> Result<(), u32> {
        let object = self.object_mut(index).ok_or(abort::OBJECT_NOT_FOUND)?;
        let max_sub = object.entries.len().saturating_sub(1);
        let entry = object.entries.get_mut(usize::from(sub)).ok_or(abort::SUBINDEX_NOT_FOUND)?;
        match entry.access {
            Access::ReadOnly => return Err(abort::READ_ONLY),
            Access::ReadWritePreOp if state != AlState::PreOp => return Err(abort::DEVICE_STATE),
            _ => {}
        }
        if entry.variable_length {
            if data.len() > entry.value.capacity().max(entry.value.len()) {
                return Err(abort::LENGTH_TOO_HIGH);
            }
            entry.value.clear();
            entry.value.extend_from_slice(data);
            return Ok(());
        }
        if data.len() != entry.value.len() {
            return Err(if data.len() > entry.value.len() { abort::LENGTH_TOO_HIGH } else { abort::LENGTH_TOO_LOW });
        }
        if object.is_record && sub == 0 && usize::from(data[0]) > max_sub {
            return Err(abort::VALUE_RANGE);
        }
        entry.value.copy_from_slice(data);
        Ok(())
    }

    /// Sets a value from the device side (no access checks), if sizes match.
    pub fn set(&mut self, index: u16, sub: u8, data: &[u8]) -> bool {
        match self.object_mut(index).and_then(|o| o.entries.get_mut(usize::from(sub))) {
            Some(e) if e.value.len() == data.len() => {
                e.value.copy_from_slice(data);
                true
            }
            _ => false,
        }
    }

    /// The entry at `index`:`sub` read as a u8 (its first byte), if it exists.
    pub fn get_u8(&self, index: u16, sub: u8) -> Option<u8> {
        self.read(index, sub).ok().and_then(|v| v.first().copied())
    }

    /// The entry at `index`:`sub` read as a little-endian u16 (its first two bytes), if it has them.
    pub fn get_u16(&self, index: u16, sub: u8) -> Option<u16> {
        self.read(index, sub).ok().and_then(|v| Some(u16::from_le_bytes(v.get(..2)?.try_into().ok()?)))
    }

    /// The entry at `index`:`sub` read as a little-endian u32 (its first four bytes), if it has them.
    pub fn get_u32(&self, index: u16, sub: u8) -> Option<u32> {
        self.read(index, sub).ok().and_then(|v| Some(u32::from_le_bytes(v.get(..4)?.try_into().ok()?)))
    }

    /// Complete access (ETG.1000.6 §5.6.2.1.1): all sub-indices from `first_sub` on, packed;
    /// sub-index 0 takes 2 bytes (u8 + padding) as in the slave stack convention.
    pub fn read_complete(&self, index: u16, first_sub: u8, out: &mut Vec<u8>) -> Result<(), u32> {
        let object = self.object(index).ok_or(abort::OBJECT_NOT_FOUND)?;
        if !object.is_record || first_sub > 1 {
            return Err(abort::UNSUPPORTED_ACCESS);
        }
        out.clear();
        let used = usize::from(object.entries[0].value[0]);
        if first_sub == 0 {
            out.push(object.entries[0].value[0]);
            out.push(0);
        }
        for entry in object.entries.iter().skip(1).take(used) {
            out.extend_from_slice(&entry.value);
        }
        Ok(())
    }

    /// Complete-access download: the inverse of [`Self::read_complete`].
    pub fn write_complete(&mut self, index: u16, first_sub: u8, data: &[u8], state: AlState) -> Result<(), u32> {
        let object = self.object(index).ok_or(abort::OBJECT_NOT_FOUND)?;
        if !object.is_record || first_sub > 1 {
            return Err(abort::UNSUPPORTED_ACCESS);
        }
        let mut rest = data;
        let count = if first_sub == 0 {
            let c = *rest.first().ok_or(abort::LENGTH_TOO_LOW)?;
            rest = rest.get(2..).ok_or(abort::LENGTH_TOO_LOW)?;
            c
        } else {
            object.entries[0].value[0]
        };
        if usize::from(count) >= object.entries.len() {
            return Err(abort::VALUE_RANGE);
        }
        let sizes: usize = object.entries.iter().skip(1).take(count.into()).map(|e| e.value.len()).sum();
        if rest.len() != sizes {
            return Err(if rest.len() > sizes { abort::LENGTH_TOO_HIGH } else { abort::LENGTH_TOO_LOW });
        }
        // Check every access first so a refused write changes nothing.
        for sub in 1..=count {
            let e = &object.entries[usize::from(sub)];
            match e.access {
                Access::ReadOnly => return Err(abort::READ_ONLY),
                Access::ReadWritePreOp if state != AlState::PreOp => return Err(abort::DEVICE_STATE),
                _ => {}
            }
        }
        let object = self.object_mut(index).ok_or(abort::OBJECT_NOT_FOUND)?;
        if first_sub == 0 {
            object.entries[0].value[0] = 0;
        }
        for sub in 1..=usize::from(count) {
            let len = object.entries[sub].value.len();
            object.entries[sub].value.copy_from_slice(&rest[..len]);
            rest = &rest[len..];
        }
        if first_sub == 0 {
            object.entries[0].value[0] = count;
        }
        Ok(())
    }
}

/// Largest segmented download accepted (the scratch buffer's reserved capacity).
const SEGMENTED_MAX: usize = 4096;

/// A segmented transfer in progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Transfer {
    index: u16,
    sub: u8,
    complete_access: bool,
    offset: usize,
    toggle: bool,
    /// Total size announced by the master (download).
    total: usize,
}

/// Counts of what the SDO server saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CoeCounters {
    pub requests: u64,
    pub aborts_sent: u64,
    pub malformed: u64,
}

/// The SDO server of one device.
#[derive(Debug, Clone)]
pub struct CoeServer {
    upload: Option<Transfer>,
    download: Option<Transfer>,
    /// Holds a segmented transfer's data; its capacity is reserved up front.
    scratch: Vec<u8>,
    counter: u8,
    complete_access: bool,
    pub counters: CoeCounters,
}

impl CoeServer {
    /// `complete_access`: whether the device supports it (SII General CoE details bit 5).
    pub fn new(complete_access: bool) -> Self {
        Self { upload: None, download: None, scratch: Vec::with_capacity(SEGMENTED_MAX), counter: 0, complete_access, counters: CoeCounters::default() }
    }

    fn next_counter(&mut self) -> u8 {
        // Mailbox counter cycles 1..7; 0 is reserved (ETG.1000.4 §5.6).
        self.counter = if self.counter >= 7 { 1 } else { self.counter + 1 };
        self.counter
    }

    /// Handles one mailbox message; writes the whole response mailbox message into `response`
    /// (sized to the send mailbox) and returns its length (0: nothing to send).
    pub fn handle(&mut self, od: &mut ObjectDictionary, state: AlState, request: &[u8], response: &mut [u8]) -> usize {
        self.counters.requests += 1;
        let Some(header) = request.get(..MAILBOX_HEADER_LEN) else {
            self.counters.malformed += 1;
            return 0;
        };
        let length = usize::from(u16::from_le_bytes([header[0], header[1]]));
        let kind = header[5] & 0x0F;
        let Some(body) = request.get(MAILBOX_HEADER_LEN..MAILBOX_HEADER_LEN + length) else {
            self.counters.malformed += 1;
            return self.mailbox_error(response, 0x0006); // invalid size
        };
        if kind != MAILBOX_TYPE_COE {
            return self.mailbox_error(response, 0x0002); // unsupported protocol
        }
        if body.len() < 2 {
            self.counters.malformed += 1;
            return self.mailbox_error(response, 0x0006);
        }
        let service = body[1] >> 4;
        match service {
            COE_SDO_REQUEST => self.sdo(od, state, body, response),
            COE_SDO_INFO => self.sdo_info_error(response, abort::UNSUPPORTED_ACCESS),
            _ => self.mailbox_error(response, 0x0005), // invalid mailbox header / service
        }
    }

    /// Mailbox error reply (ETG.1000.4 Table 30): type 0, service 1, detail code.
    fn mailbox_error(&mut self, out: &mut [u8], detail: u16) -> usize {
        let mut data = [0u8; 4];
        data[0..2].copy_from_slice(&1u16.to_le_bytes());
        data[2..4].copy_from_slice(&detail.to_le_bytes());
        self.write_mailbox(out, MAILBOX_TYPE_ERROR, &data, &[])
    }

    fn sdo_info_error(&mut self, out: &mut [u8], code: u32) -> usize {
        // SDO Information service, opcode 7 = error request (ETG.1000.6 §5.6.3.8).
        let mut data = [0u8; 2 + 4 + 4];
        data[0..2].copy_from_slice(&(u16::from(COE_SDO_INFO) << 12).to_le_bytes());
        data[2] = 0x07;
        data[6..10].copy_from_slice(&code.to_le_bytes());
        self.write_mailbox(out, MAILBOX_TYPE_COE, &data, &[])
    }

    /// Writes a mailbox header + `a` + `b` into `out`; 0 if it does not fit.
    fn write_mailbox(&mut self, out: &mut [u8], kind: u8, a: &[u8], b: &[u8]) -> usize {
        let len = a.len() + b.len();
        let total = MAILBOX_HEADER_LEN + len;
        if total > out.len() {
            return 0;
        }
        out[0..2].copy_from_slice(&(len as u16).to_le_bytes());
        out[2..4].copy_from_slice(&0u16.to_le_bytes());
        out[4] = 0;
        out[5] = kind | (self.next_counter() << 4);
        out[6..6 + a.len()].copy_from_slice(a);
        out[6 + a.len()..total].copy_from_slice(b);
        total
    }

    fn abort(&mut self, out: &mut [u8], index: u16, sub: u8, code: u32) -> usize {
        self.counters.aborts_sent += 1;
        self.upload = None;
        self.download = None;
        let mut data = [0u8; 10];
        data[0..2].copy_from_slice(&(u16::from(COE_SDO_REQUEST) << 12).to_le_bytes());
        data[2] = 0x80; // abort transfer (ccs 4)
        data[3..5].copy_from_slice(&index.to_le_bytes());
        data[5] = sub;
        data[6..10].copy_from_slice(&code.to_le_bytes());
        self.write_mailbox(out, MAILBOX_TYPE_COE, &data, &[])
    }

    fn sdo(&mut self, od: &mut ObjectDictionary, state: AlState, body: &[u8], out: &mut [u8]) -> usize {
        let Some(&command) = body.get(2) else {
            self.counters.malformed += 1;
            return self.mailbox_error(out, 0x0006);
        };
        let ccs = command >> 5;
        let index = body.get(3..5).map(|b| u16::from_le_bytes([b[0], b[1]])).unwrap_or(0);
        let sub = body.get(5).copied().unwrap_or(0);
        let complete_access = command & 0x10 != 0;
        if complete_access && matches!(ccs, 1 | 2) && !self.complete_access {
            return self.abort(out, index, sub, abort::COMPLETE_ACCESS_UNSUPPORTED);
        }
        // Largest data that fits one response: mailbox minus headers and the 4-byte size.
        let max_normal = out.len().saturating_sub(MAILBOX_HEADER_LEN + SDO_HEADER_LEN + 4);
        match ccs {
            // Initiate upload (ETG.1000.6 §5.6.2.4).
            2 => {
                self.upload = None;
                let result = if complete_access {
                    let mut data = std::mem::take(&mut self.scratch);
                    let r = od.read_complete(index, sub, &mut data);
                    self.scratch = data;
                    r.map(|_| ())
                } else {
                    od.read(index, sub).map(|v| {
                        self.scratch.clear();
                        self.scratch.extend_from_slice(v);
                    })
                };
                if let Err(code) = result {
                    return self.abort(out, index, sub, code);
                }
                let size = self.scratch.len();
                let mut head = [0u8; 10];
                head[0..2].copy_from_slice(&(u16::from(COE_SDO_RESPONSE) << 12).to_le_bytes());
                head[3..5].copy_from_slice(&index.to_le_bytes());
                head[5] = sub;
                let ca = if complete_access { 0x10 } else { 0 };
                if size <= 4 && !complete_access {
                    // Expedited: scs 2, size indicated, e = 1, n = 4 - size unused bytes.
                    head[2] = 0x40 | ca | ((4 - size as u8) << 2) | 0x02 | 0x01;
                    head[6..6 + size].copy_from_slice(&self.scratch[..size]);
                    let data = head;
                    return self.write_mailbox(out, MAILBOX_TYPE_COE, &data, &[]);
                }
                head[2] = 0x40 | ca | 0x01;
                head[6..10].copy_from_slice(&(size as u32).to_le_bytes());
                let first = size.min(max_normal);
                if first < size {
                    self.upload = Some(Transfer { index, sub, complete_access, offset: first, toggle: false, total: size });
                }
                let scratch = std::mem::take(&mut self.scratch);
                let n = self.write_mailbox(out, MAILBOX_TYPE_COE, &head, &scratch[..first]);
                self.scratch = scratch;
                n
            }
            // Upload segment (ETG.1000.6 §5.6.2.6).
            3 => {
                let toggle = command & 0x10 != 0;
                let Some(mut t) = self.upload else {
                    return self.abort(out, index, sub, abort::COMMAND_SPECIFIER);
                };
                if toggle != t.toggle {
                    return self.abort(out, t.index, t.sub, abort::TOGGLE_BIT);
                }
                let max_segment = out.len().saturating_sub(MAILBOX_HEADER_LEN + 3);
                let remaining = t.total - t.offset;
                let n = remaining.min(max_segment);
                let last = n == remaining;
                // Segment data is at least 7 bytes; bits 1..3 say how many are unused.
                let unused = 7usize.saturating_sub(n);
                let mut head = [0u8; 3];
                head[0..2].copy_from_slice(&(u16::from(COE_SDO_RESPONSE) << 12).to_le_bytes());
                head[2] = (if toggle { 0x10 } else { 0 }) | ((unused as u8) << 1) | u8::from(last);
                let scratch = std::mem::take(&mut self.scratch);
                let mut padded = [0u8; 7];
                let written = if n < 7 {
                    padded[..n].copy_from_slice(&scratch[t.offset..t.offset + n]);
                    self.write_mailbox(out, MAILBOX_TYPE_COE, &head, &padded)
                } else {
                    self.write_mailbox(out, MAILBOX_TYPE_COE, &head, &scratch[t.offset..t.offset + n])
                };
                self.scratch = scratch;
                t.offset += n;
                t.toggle = !t.toggle;
                self.upload = if last { None } else { Some(t) };
                written
            }
            // Initiate download (ETG.1000.6 §5.6.2.1/2).
            1 => {
                self.download = None;
                let expedited = command & 0x02 != 0;
                let size_indicated = command & 0x01 != 0;
                let result = if expedited {
                    let size = if size_indicated { 4 - usize::from((command >> 2) & 0x03) } else { 4 };
                    match body.get(6..6 + size) {
                        Some(data) => self.download_into(od, state, index, sub, complete_access, data),
                        None => Err(abort::LENGTH_TOO_LOW),
                    }
                } else {
                    let total = body.get(6..10).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
                    let data = body.get(10..).unwrap_or(&[]);
                    match total {
                        None => Err(abort::LENGTH_TOO_LOW),
                        Some(total) if data.len() >= total => self.download_into(od, state, index, sub, complete_access, &data[..total]),
                        Some(total) => {
                            // More follows in download segments. The size comes from the
                            // wire: beyond what the scratch buffer holds it is refused, not
                            // allocated (no object here is that large).
                            if total > SEGMENTED_MAX {
                                Err(abort::LENGTH_TOO_HIGH)
                            } else if od.object(index).is_none() {
                                Err(abort::OBJECT_NOT_FOUND)
                            } else {
                                self.scratch.clear();
                                self.scratch.extend_from_slice(data);
                                self.download = Some(Transfer { index, sub, complete_access, offset: data.len(), toggle: false, total });
                                Ok(())
                            }
                        }
                    }
                };
                if let Err(code) = result {
                    return self.abort(out, index, sub, code);
                }
                let mut data = [0u8; 10];
                data[0..2].copy_from_slice(&(u16::from(COE_SDO_RESPONSE) << 12).to_le_bytes());
                data[2] = 0x60 | if complete_access { 0x10 } else { 0 };
                data[3..5].copy_from_slice(&index.to_le_bytes());
                data[5] = sub;
                self.write_mailbox(out, MAILBOX_TYPE_COE, &data, &[])
            }
            // Download segment (ETG.1000.6 §5.6.2.3).
            0 => {
                let toggle = command & 0x10 != 0;
                let last = command & 0x01 != 0;
                let Some(mut t) = self.download else {
                    return self.abort(out, index, sub, abort::COMMAND_SPECIFIER);
                };
                if toggle != t.toggle {
                    return self.abort(out, t.index, t.sub, abort::TOGGLE_BIT);
                }
                let segment = body.get(3..).unwrap_or(&[]);
                let segment = if segment.len() == 7 { &segment[..7 - usize::from((command >> 1) & 0x07)] } else { segment };
                if t.offset + segment.len() > SEGMENTED_MAX {
                    self.download = None;
                    return self.abort(out, t.index, t.sub, abort::LENGTH_TOO_HIGH);
                }
                self.scratch.extend_from_slice(segment);
                t.offset += segment.len();
                t.toggle = !t.toggle;
                if last || t.offset >= t.total {
                    self.download = None;
                    let data = std::mem::take(&mut self.scratch);
                    let end = t.total.min(data.len());
                    let result = if t.offset != t.total { Err(abort::LENGTH_MISMATCH) } else { self.download_into(od, state, t.index, t.sub, t.complete_access, &data[..end]) };
                    self.scratch = data;
                    if let Err(code) = result {
                        return self.abort(out, t.index, t.sub, code);
                    }
                } else {
                    self.download = Some(t);
                }
                let mut data = [0u8; 10];
                data[0..2].copy_from_slice(&(u16::from(COE_SDO_RESPONSE) << 12).to_le_bytes());
                data[2] = 0x20 | if toggle { 0x10 } else { 0 };
                self.write_mailbox(out, MAILBOX_TYPE_COE, &data, &[])
            }
            // Abort from the master: drop any transfer, no reply.
            4 => {
                self.upload = None;
                self.download = None;
                0
            }
            _ => self.abort(out, index, sub, abort::COMMAND_SPECIFIER),
        }
    }

    fn download_into(&mut self, od: &mut ObjectDictionary, state: AlState, index: u16, sub: u8, complete_access: bool, data: &[u8]) -> Result<(), u32> {
        if complete_access {
            od.write_complete(index, sub, data, state)
        } else {
            od.write(index, sub, data, state)
        }
    }
}

/// Builds SDO request mailbox messages, as a master would; for the tests.
#[cfg(test)]
pub mod request {
    use super::*;

    fn message(out: &mut Vec<u8>, body: &[u8]) {
        out.clear();
        out.extend_from_slice(&(body.len() as u16).to_le_bytes());
        out.extend_from_slice(&[0, 0, 0, MAILBOX_TYPE_COE | 0x10]);
        out.extend_from_slice(body);
    }

    fn head(command: u8, index: u16, sub: u8) -> Vec<u8> {
        let mut b = (u16::from(COE_SDO_REQUEST) << 12).to_le_bytes().to_vec();
        b.push(command);
        b.extend_from_slice(&index.to_le_bytes());
        b.push(sub);
        b
    }

    pub fn upload(index: u16, sub: u8, complete_access: bool) -> Vec<u8> {
        let mut b = head(0x40 | if complete_access { 0x10 } else { 0 }, index, sub);
        b.extend_from_slice(&[0; 4]);
        let mut out = Vec::new();
        message(&mut out, &b);
        out
    }

    pub fn upload_segment(toggle: bool) -> Vec<u8> {
        let mut b = (u16::from(COE_SDO_REQUEST) << 12).to_le_bytes().to_vec();
        b.push(0x60 | if toggle { 0x10 } else { 0 });
        b.extend_from_slice(&[0; 7]);
        let mut out = Vec::new();
        message(&mut out, &b);
        out
    }

    pub fn download_expedited(index: u16, sub: u8, data: &[u8]) -> Vec<u8> {
        let n = 4 - data.len().min(4) as u8;
        let mut b = head(0x20 | (n << 2) | 0x03, index, sub);
        let mut d = [0u8; 4];
        d[..data.len().min(4)].copy_from_slice(&data[..data.len().min(4)]);
        b.extend_from_slice(&d);
        let mut out = Vec::new();
        message(&mut out, &b);
        out
    }

    /// Normal download with the first `first_len` bytes; the rest goes in segments.
    pub fn download_normal(index: u16, sub: u8, complete_access: bool, total: usize, first: &[u8]) -> Vec<u8> {
        let mut b = head(0x21 | if complete_access { 0x10 } else { 0 }, index, sub);
        b.extend_from_slice(&(total as u32).to_le_bytes());
        b.extend_from_slice(first);
        let mut out = Vec::new();
        message(&mut out, &b);
        out
    }

    pub fn download_segment(toggle: bool, last: bool, data: &[u8]) -> Vec<u8> {
        let mut b = (u16::from(COE_SDO_REQUEST) << 12).to_le_bytes().to_vec();
        let unused = 7usize.saturating_sub(data.len()) as u8;
        b.push((if toggle { 0x10 } else { 0 }) | (unused << 1) | u8::from(last));
        b.extend_from_slice(data);
        b.extend(std::iter::repeat_n(0, unused.into()));
        let mut out = Vec::new();
        message(&mut out, &b);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn od() -> ObjectDictionary {
        let mut od = ObjectDictionary::new();
        od.add_var(0x1000, "Device type", &0x0002_0192u32.to_le_bytes(), Access::ReadOnly);
        od.add_string(0x1008, "Device name", "MORC simulated servo drive with a long name");
        od.add_record(
            0x1018,
            "Identity",
            Access::ReadOnly,
            &[(&1u32.to_le_bytes(), Access::ReadOnly), (&2u32.to_le_bytes(), Access::ReadOnly), (&3u32.to_le_bytes(), Access::ReadOnly), (&4u32.to_le_bytes(), Access::ReadOnly)],
        );
        od.add_record(0x1C12, "RxPDO assign", Access::ReadWritePreOp, &[(&0x1600u16.to_le_bytes(), Access::ReadWritePreOp)]);
        od.add_var(0x6060, "Modes of operation", &[0], Access::ReadWrite);
        od
    }

    /// Sends `request` and returns (service/command byte, index, sub, data after the 10-byte SDO part).
    fn exchange(server: &mut CoeServer, od: &mut ObjectDictionary, state: AlState, request: &[u8], mailbox_len: usize) -> Vec<u8> {
        let mut out = vec![0u8; mailbox_len];
        let n = server.handle(od, state, request, &mut out);
        out.truncate(n);
        out
    }

    fn abort_code(reply: &[u8]) -> Option<u32> {
        (reply[8] == 0x80).then(|| u32::from_le_bytes(reply[12..16].try_into().unwrap()))
    }

    #[test]
    fn expedited_upload_and_download() {
        let (mut s, mut od) = (CoeServer::new(true), od());
        let r = exchange(&mut s, &mut od, AlState::PreOp, &request::upload(0x1000, 0, false), 128);
        assert_eq!(r[5] & 0x0F, MAILBOX_TYPE_COE);
        assert_eq!(r[7] >> 4, COE_SDO_RESPONSE);
        assert_eq!(r[8], 0x43, "scs 2, expedited, size indicated, 4 bytes");
        assert_eq!(&r[12..16], &0x0002_0192u32.to_le_bytes());
        let r = exchange(&mut s, &mut od, AlState::PreOp, &request::download_expedited(0x6060, 0, &[8]), 128);
        assert_eq!(r[8], 0x60);
        assert_eq!(od.get_u8(0x6060, 0), Some(8));
        let r = exchange(&mut s, &mut od, AlState::PreOp, &request::upload(0x6060, 0, false), 128);
        assert_eq!(r[8], 0x4F, "1 byte: n = 3");
        assert_eq!(r[12], 8);
    }

    #[test]
    fn aborts_for_unknown_objects_sizes_and_access() {
        let (mut s, mut od) = (CoeServer::new(true), od());
        let r = exchange(&mut s, &mut od, AlState::PreOp, &request::upload(0x2000, 0, false), 128);
        assert_eq!(abort_code(&r), Some(abort::OBJECT_NOT_FOUND));
        let r = exchange(&mut s, &mut od, AlState::PreOp, &request::upload(0x1018, 9, false), 128);
        assert_eq!(abort_code(&r), Some(abort::SUBINDEX_NOT_FOUND));
        let r = exchange(&mut s, &mut od, AlState::PreOp, &request::download_expedited(0x6060, 0, &[1, 2]), 128);
        assert_eq!(abort_code(&r), Some(abort::LENGTH_TOO_HIGH));
        let r = exchange(&mut s, &mut od, AlState::PreOp, &request::download_expedited(0x1000, 0, &[0; 4]), 128);
        assert_eq!(abort_code(&r), Some(abort::READ_ONLY));
        let r = exchange(&mut s, &mut od, AlState::SafeOp, &request::download_expedited(0x1C12, 0, &[0]), 128);
        assert_eq!(abort_code(&r), Some(abort::DEVICE_STATE));
        assert_eq!(s.counters.aborts_sent, 5);
        // Segment request without a transfer.
        let r = exchange(&mut s, &mut od, AlState::PreOp, &request::upload_segment(false), 128);
        assert_eq!(abort_code(&r), Some(abort::COMMAND_SPECIFIER));
        // Malformed: short message, non-CoE type.
        assert_eq!(exchange(&mut s, &mut od, AlState::PreOp, &[1, 2], 128).len(), 0);
        let r = exchange(&mut s, &mut od, AlState::PreOp, &[2, 0, 0, 0, 0, 0x05, 0, 0], 128);
        assert_eq!(r[5] & 0x0F, MAILBOX_TYPE_ERROR);
    }

    #[test]
    fn normal_and_segmented_upload() {
        let (mut s, mut od) = (CoeServer::new(true), od());
        let name = b"MORC simulated servo drive with a long name";
        // Big mailbox: one normal response.
        let r = exchange(&mut s, &mut od, AlState::PreOp, &request::upload(0x1008, 0, false), 128);
        assert_eq!(r[8], 0x41);
        assert_eq!(u32::from_le_bytes(r[12..16].try_into().unwrap()) as usize, name.len());
        assert_eq!(&r[16..], name);
        // Small mailbox (32 bytes): first part then segments with alternating toggle.
        let mut got = Vec::new();
        let r = exchange(&mut s, &mut od, AlState::PreOp, &request::upload(0x1008, 0, false), 32);
        got.extend_from_slice(&r[16..]);
        let mut toggle = false;
        loop {
            let r = exchange(&mut s, &mut od, AlState::PreOp, &request::upload_segment(toggle), 32);
            let len = usize::from(u16::from_le_bytes([r[0], r[1]])) - 3;
            let cmd = r[8];
            assert_eq!(cmd & 0x10 != 0, toggle);
            let len = if len == 7 { 7 - usize::from((cmd >> 1) & 7) } else { len };
            got.extend_from_slice(&r[9..9 + len]);
            if cmd & 1 != 0 {
                break;
            }
            toggle = !toggle;
        }
        assert_eq!(&got[..], name);
        // Wrong toggle aborts.
        exchange(&mut s, &mut od, AlState::PreOp, &request::upload(0x1008, 0, false), 32);
        let r = exchange(&mut s, &mut od, AlState::PreOp, &request::upload_segment(true), 32);
        assert_eq!(abort_code(&r), Some(abort::TOGGLE_BIT));
    }

    #[test]
    fn segmented_download_and_complete_access() {
        let (mut s, mut od) = (CoeServer::new(true), od());
        od.add_record(0x1600, "RxPDO", Access::ReadWritePreOp, &[(&[0; 4], Access::ReadWritePreOp), (&[0; 4], Access::ReadWritePreOp), (&[0; 4], Access::ReadWritePreOp)]);
        let mut payload = vec![3u8, 0];
        for m in [0x6040_0010u32, 0x607A_0020, 0x6060_0008] {
            payload.extend_from_slice(&m.to_le_bytes());
        }
        // 14 bytes: 4 in the initiate request, then segments of 7 and 3.
        let r = exchange(&mut s, &mut od, AlState::PreOp, &request::download_normal(0x1600, 0, true, payload.len(), &payload[..4]), 128);
        assert_eq!(r[8], 0x70);
        let r = exchange(&mut s, &mut od, AlState::PreOp, &request::download_segment(false, false, &payload[4..11]), 128);
        assert_eq!(r[8], 0x20);
        let r = exchange(&mut s, &mut od, AlState::PreOp, &request::download_segment(true, true, &payload[11..]), 128);
        assert_eq!(r[8], 0x30);
        assert_eq!(od.get_u32(0x1600, 2), Some(0x607A_0020));
        assert_eq!(od.get_u8(0x1600, 0), Some(3));
        // Complete-access upload gives the same bytes back.
        let r = exchange(&mut s, &mut od, AlState::PreOp, &request::upload(0x1600, 0, true), 128);
        assert_eq!(r[8], 0x51);
        assert_eq!(&r[16..], &payload[..]);
        // A device without complete access refuses it.
        let mut plain = CoeServer::new(false);
        let r = exchange(&mut plain, &mut od, AlState::PreOp, &request::upload(0x1600, 0, true), 128);
        assert_eq!(abort_code(&r), Some(abort::COMPLETE_ACCESS_UNSUPPORTED));
    }
}
