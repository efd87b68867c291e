//! A device morc has no class for, run from its own description of its process data: the PDOs
//! its CoE assignment maps (0x1C12/0x1C13 and the mapping objects they list) or, without CoE,
//! the PDO categories of its EEPROM, as SOEM does. Every mapped entry that holds one number
//! becomes a port named from the EEPROM's strings: a TxPDO entry a measurement (`dev9_actual_width`),
//! an RxPDO entry a command. Values are the device's raw numbers (its own units: counts,
//! 0.1 °C…), so a new sensor or gripper is usable from Lua before anyone writes its class.
//!
//! Commands are checked against the entry's type: a fraction, a value out of range or NaN
//! for an integer entry is refused, naming the port, and the entry keeps its last value.

use super::{ClassPorts, DeviceClass, DeviceName};
use morc_ecat_wire::data_type::{read_bits, write_bits, Number};
use morc_ecat_wire::sii::SiiInfo;
use morc_kernel::{Commands, PortInfo, Value, ValueType};

/// One mapped object of a PDO.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MappedEntry {
    /// Object index (0 for a gap).
    pub index: u16,
    /// Subindex.
    pub sub: u8,
    /// Size in the process image (bits).
    pub bit_len: u8,
    /// CoE data type (0 when unknown: read as unsigned).
    pub data_type: u8,
    /// Its name, from the EEPROM's strings (empty when it has none).
    pub name: String,
}

/// One PDO as mapped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MappedPdo {
    /// PDO index (0x16xx RxPDO, 0x1Axx TxPDO).
    pub index: u16,
    /// Its name, from the EEPROM's strings.
    pub name: String,
    /// The SyncManager it is assigned to: each SyncManager's data starts on a byte.
    pub sync_manager: u8,
    /// Its entries, in process-image order.
    pub entries: Vec<MappedEntry>,
}

/// What a device maps, both directions, and where the description came from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PdoLayout {
    /// RxPDOs (master → device), in process-image order.
    pub rx: Vec<MappedPdo>,
    /// TxPDOs (device → master), in process-image order.
    pub tx: Vec<MappedPdo>,
    /// "its CoE PDO assignment" or "the PDOs in its EEPROM".
    pub source: &'static str,
}

impl PdoLayout {
    /// The PDOs the EEPROM assigns to a SyncManager (those a master maps without CoE).
    pub fn from_sii(info: &SiiInfo) -> PdoLayout {
        let pdos = |pdos: &[morc_ecat_wire::sii::Pdo]| -> Vec<MappedPdo> {
            let mut mapped: Vec<MappedPdo> = pdos
                .iter()
                .filter(|p| usize::from(p.sync_manager) < info.sync_managers.len())
                .map(|p| MappedPdo {
                    index: p.index,
                    name: info.string(p.name_string).unwrap_or_default().to_string(),
                    sync_manager: p.sync_manager,
                    entries: p
                        .entries
                        .iter()
                        .map(|e| MappedEntry {
                            index: e.index,
                            sub: e.sub_index,
                            bit_len: e.bit_len,
                            data_type: e.data_type,
                            name: info.string(e.name_string).unwrap_or_default().to_string(),
                        })
                        .collect(),
                })
                .collect();
            mapped.sort_by_key(|p| p.sync_manager);
            mapped
        };
        PdoLayout { rx: pdos(&info.rx_pdos), tx: pdos(&info.tx_pdos), source: "the PDOs in its EEPROM" }
    }

    /// The PDOs a CoE assignment lists: per SyncManager, (PDO index, its mapping entries as
    /// 0x1600's subindices hold them: index << 16 | sub << 8 | bits), RxPDOs then TxPDOs.
    /// Names and data types come from the EEPROM's description of the same objects.
    #[allow(clippy::type_complexity)]
    pub fn from_coe(rx: &[(u8, Vec<(u16, Vec<u32>)>)], tx: &[(u8, Vec<(u16, Vec<u32>)>)], sii: Option<&SiiInfo>) -> PdoLayout {
        let described = |index: u16, sub: u8| sii.and_then(|i| i.rx_pdos.iter().chain(&i.tx_pdos).flat_map(|p| &p.entries).find(|e| e.index == index && e.sub_index == sub && index != 0));
        let pdo_name = |index: u16| sii.and_then(|i| i.rx_pdos.iter().chain(&i.tx_pdos).find(|p| p.index == index).and_then(|p| i.string(p.name_string))).unwrap_or_default().to_string();
        let pdos = |assignment: &[(u8, Vec<(u16, Vec<u32>)>)]| -> Vec<MappedPdo> {
            let mut out = Vec::new();
            for (sync_manager, list) in assignment {
                for (index, mapping) in list {
                    let entries = mapping
                        .iter()
                        .map(|&m| {
                            let (index, sub, bit_len) = ((m >> 16) as u16, (m >> 8) as u8, m as u8);
                            let found = described(index, sub);
                            MappedEntry {
                                index,
                                sub,
                                bit_len,
                                data_type: found.map_or(0, |e| e.data_type),
                                name: found.and_then(|e| sii.and_then(|i| i.string(e.name_string))).unwrap_or_default().to_string(),
                            }
                        })
                        .collect();
                    out.push(MappedPdo { index: *index, name: pdo_name(*index), sync_manager: *sync_manager, entries });
                }
            }
            out
        };
        PdoLayout { rx: pdos(rx), tx: pdos(tx), source: "its CoE PDO assignment" }
    }

    /// Process-image bytes of `pdos`: their bits, each SyncManager's rounded up to a byte.
    fn bytes(pdos: &[MappedPdo]) -> usize {
        fields(pdos).1
    }
}

/// One entry that holds a number: where it sits, what it is, its port.
#[derive(Debug, Clone)]
struct Field {
    port: String,
    doc: String,
    offset: usize,
    bit_len: u8,
    number: Number,
}

/// The entries of `pdos` with their bit offsets, and the bytes they take.
fn fields(pdos: &[MappedPdo]) -> (Vec<(usize, &MappedPdo, &MappedEntry)>, usize) {
    let mut out = Vec::new();
    let (mut bit, mut bytes_before) = (0usize, 0usize);
    let mut current_sm = None;
    for p in pdos {
        if current_sm != Some(p.sync_manager) {
            bytes_before += bit.div_ceil(8);
            bit = 0;
            current_sm = Some(p.sync_manager);
        }
        for e in &p.entries {
            out.push((bytes_before * 8 + bit, p, e));
            bit += usize::from(e.bit_len);
        }
    }
    (out, bytes_before + bit.div_ceil(8))
}

/// `text` as a port-name part: lower case, runs of anything but letters and digits one `_`.
fn slug(text: &str) -> String {
    let mut s = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.is_empty() && !s.ends_with('_') {
            s.push('_');
        }
    }
    s.trim_end_matches('_').to_string()
}

/// The ports of one direction: named by the entry, or by its PDO and entry where entry names
/// repeat (each channel's "Value"), or by the object where the EEPROM names none.
fn ports_of(device: &DeviceName, pdos: &[MappedPdo], direction: &str) -> Vec<Field> {
    let (placed, _) = fields(pdos);
    let numbers: Vec<(usize, &MappedPdo, &MappedEntry, Number)> =
        placed.into_iter().filter(|(_, _, e)| e.index != 0).filter_map(|(o, p, e)| Number::of(e.data_type, e.bit_len).map(|n| (o, p, e, n))).collect();
    let object = |e: &MappedEntry| format!("x{:04x}_{:02x}", e.index, e.sub);
    let short = |e: &MappedEntry| Some(slug(&e.name)).filter(|s| !s.is_empty()).unwrap_or_else(|| object(e));
    let repeated = |names: &[String]| -> Vec<bool> { names.iter().map(|n| names.iter().filter(|m| *m == n).count() > 1).collect() };
    let mut names: Vec<String> = numbers.iter().map(|(_, _, e, _)| short(e)).collect();
    for (i, again) in repeated(&names).into_iter().enumerate() {
        if again {
            let (_, p, e, _) = numbers[i];
            let pdo = Some(slug(&p.name)).filter(|s| !s.is_empty()).unwrap_or_else(|| format!("x{:04x}", p.index));
            names[i] = format!("{pdo}_{}", short(e));
        }
    }
    for (i, again) in repeated(&names).into_iter().enumerate() {
        if again {
            names[i] = format!("{}_{}", names[i], object(numbers[i].2));
        }
    }
    numbers
        .iter()
        .zip(names)
        .map(|((offset, p, e, number), name)| Field {
            port: format!("dev{}_{name}", device.position),
            doc: format!(
                "{device}: {direction} 0x{:04X} '{}', entry 0x{:04X}:{:02X} '{}' ({}, {} bits); the device's raw value",
                p.index,
                p.name,
                e.index,
                e.sub,
                e.name,
                Number::type_name(e.data_type),
                e.bit_len
            ),
            offset: *offset,
            bit_len: e.bit_len,
            number: *number,
        })
        .collect()
}

/// The master's side of a device without a class (see the module doc).
#[derive(Debug, Clone)]
pub struct GenericDevice {
    name: DeviceName,
    source: &'static str,
    measurements: Vec<Field>,
    commands: Vec<Field>,
    /// This cycle's measurements, as numbers.
    measured: Vec<f64>,
    /// The raw bits each command entry sends (held until a new command comes).
    commanded: Vec<u64>,
}

impl GenericDevice {
    /// The class for a device mapping `layout`, which must describe its process image
    /// (`input_bytes`, `output_bytes`) exactly.
    pub fn new(name: DeviceName, layout: &PdoLayout, input_bytes: usize, output_bytes: usize) -> Result<Self, String> {
        let (rx, tx) = (PdoLayout::bytes(&layout.rx), PdoLayout::bytes(&layout.tx));
        if (rx, tx) != (output_bytes, input_bytes) {
            return Err(format!(
                "{name}: {} describes {rx} output and {tx} input bytes, but the device maps {output_bytes} and {input_bytes}; it runs without ports (a class for it, or its ESI's PDO assignment, is needed)",
                layout.source
            ));
        }
        let measurements = ports_of(&name, &layout.tx, "TxPDO");
        let commands = ports_of(&name, &layout.rx, "RxPDO");
        if measurements.is_empty() && commands.is_empty() {
            return Err(format!("{name}: {} has no entry that holds a number; it runs without ports", layout.source));
        }
        Ok(Self { measured: vec![0.0; measurements.len()], commanded: vec![0; commands.len()], name, source: layout.source, measurements, commands })
    }

    /// Where its layout came from ("its CoE PDO assignment", "the PDOs in its EEPROM").
    pub fn source(&self) -> &'static str {
        self.source
    }

    /// Its measurement ports' names and this cycle's values, in port order.
    pub fn measurements(&self) -> impl Iterator<Item = (&str, f64)> {
        self.measurements.iter().map(|f| f.port.as_str()).zip(self.measured.iter().copied())
    }

    fn port_info(f: &Field) -> PortInfo {
        let ty = if f.number == Number::Boolean { ValueType::Boolean } else { ValueType::Real };
        PortInfo::new(&f.port, ty).doc(&f.doc)
    }
}

impl DeviceClass for GenericDevice {
    fn name(&self) -> &DeviceName {
        &self.name
    }
    fn kind(&self) -> &'static str {
        "generic"
    }
    fn ports(&self) -> ClassPorts {
        ClassPorts { outputs: self.measurements.iter().map(Self::port_info).collect(), inputs: self.commands.iter().map(Self::port_info).collect() }
    }
    fn read_inputs(&mut self, inputs: &[u8]) {
        for (f, x) in self.measurements.iter().zip(&mut self.measured) {
            *x = f.number.value(read_bits(inputs, f.offset, f.bit_len), f.bit_len);
        }
    }
    fn write_measurements(&self, outputs: &mut [Value]) {
        for ((f, x), out) in self.measurements.iter().zip(&self.measured).zip(outputs.iter_mut()) {
            *out = if f.number == Number::Boolean { Value::Boolean(*x != 0.0) } else { Value::Real(*x) };
        }
    }
    fn command(&mut self, commands: Option<Commands>, first: usize) -> Result<(), String> {
        let Some(commands) = commands else { return Ok(()) };
        let mut result = Ok(());
        for (k, (f, bits)) in self.commands.iter().zip(&mut self.commanded).enumerate() {
            let x = match commands.get(first + k) {
                None => continue,
                Some(Value::Real(x)) => *x,
                Some(Value::Boolean(b)) => f64::from(u8::from(*b)),
                Some(other) => {
                    result = Err(format!("{}: {} takes a number, got {other:?}", self.name, f.port));
                    continue;
                }
            };
            match f.number.bits(x, f.bit_len) {
                Ok(b) => *bits = b,
                Err(why) => result = Err(format!("{}: command {} {why}; it keeps its last value", self.name, f.port)),
            }
        }
        result
    }
    fn write_outputs(&mut self, outputs: &mut [u8]) {
        for (f, bits) in self.commands.iter().zip(&self.commanded) {
            write_bits(outputs, f.offset, f.bit_len, *bits);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use morc_ecat_wire::data_type::{BOOLEAN, INTEGER16, REAL32, UNSIGNED16};

    fn entry(index: u16, sub: u8, bit_len: u8, data_type: u8, name: &str) -> MappedEntry {
        MappedEntry { index, sub, bit_len, data_type, name: name.into() }
    }

    fn two_channels() -> PdoLayout {
        let channel = |c: u16| MappedPdo {
            index: 0x1A00 + c,
            name: format!("AI Channel {}", c + 1),
            sync_manager: 3,
            entries: vec![entry(0x6000 + 0x10 * c, 1, 1, BOOLEAN, "Error"), entry(0, 0, 7, 0, ""), entry(0x6000 + 0x10 * c, 0x11, 16, INTEGER16, "Value")],
        };
        let command = MappedPdo {
            index: 0x1600,
            name: "Out".into(),
            sync_manager: 2,
            entries: vec![entry(0x7000, 1, 16, UNSIGNED16, "Setpoint"), entry(0x7000, 2, 32, REAL32, "")],
        };
        PdoLayout { rx: vec![command], tx: vec![channel(0), channel(1)], source: "test" }
    }

    #[test]
    fn ports_are_named_from_the_strings_and_read_their_bits() {
        let name = DeviceName { position: 4, name: "X".into() };
        let mut d = GenericDevice::new(name, &two_channels(), 6, 6).unwrap();
        let ports = d.ports();
        let outputs: Vec<&str> = ports.outputs.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(outputs, ["dev4_ai_channel_1_error", "dev4_ai_channel_1_value", "dev4_ai_channel_2_error", "dev4_ai_channel_2_value"]);
        let inputs: Vec<&str> = ports.inputs.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(inputs, ["dev4_setpoint", "dev4_x7000_02"]);
        assert_eq!(ports.outputs[0].ty, ValueType::Boolean);
        // Channel 1: error set, value -5; channel 2: value 300.
        d.read_inputs(&[0x01, 0xFB, 0xFF, 0x00, 0x2C, 0x01]);
        let values: Vec<f64> = d.measurements().map(|(_, x)| x).collect();
        assert_eq!(values, [1.0, -5.0, 0.0, 300.0]);
    }

    #[test]
    fn commands_are_checked_against_the_entry_and_held_when_refused() {
        let name = DeviceName { position: 4, name: "X".into() };
        let mut d = GenericDevice::new(name, &two_channels(), 6, 6).unwrap();
        let mut out = [0u8; 6];
        let good = [Value::Real(513.0), Value::Real(-1.5)];
        d.command(Some(Commands::all(&good)), 0).unwrap();
        d.write_outputs(&mut out);
        assert_eq!(out, [0x01, 0x02, 0x00, 0x00, 0xC0, 0xBF]);
        let bad = [Value::Real(70000.0), Value::Real(2.0)];
        let e = d.command(Some(Commands::all(&bad)), 0).unwrap_err();
        assert!(e.contains("dev4_setpoint") && e.contains("0 to 65535"), "{e}");
        d.write_outputs(&mut out);
        assert_eq!(&out[..2], [0x01, 0x02], "the refused command keeps the last value");
        assert_eq!(&out[2..], 2.0f32.to_le_bytes(), "the other entry took its command");
    }

    #[test]
    fn a_layout_that_does_not_describe_the_image_is_refused() {
        let name = DeviceName { position: 4, name: "X".into() };
        let e = GenericDevice::new(name, &two_channels(), 8, 6).unwrap_err();
        assert!(e.contains("6 output and 6 input bytes, but the device maps 6 and 8"), "{e}");
    }
}
