//! A joint drive's own parameters in a robot file: `drive = { …, parameters = { { index =
//! 0x6072, sub = 0, u16 = 1500 }, … } }`, each an object of the drive's manual and its value
//! with its CoE type as the key (u8, i8, u16, i16, u32, i32). Written over CoE, in order, when
//! the bus comes up (`morc_robot::JointDrive::parameters`).

use super::keys;
use mlua::Table;
use morc_ecat::devices::SdoValue;
use morc_robot::DriveParameter;

/// The `parameters` of drive table `d`; `what` names the joint for messages.
pub fn parse(d: &Table, what: &str) -> Result<Vec<DriveParameter>, String> {
    let list = match d.get::<mlua::Value>("parameters").map_err(|e| e.to_string())? {
        mlua::Value::Nil => return Ok(Vec::new()),
        mlua::Value::Table(t) => t,
        other => return Err(format!("{what}: the drive's parameters must be a list {{ {{ index = 0x6072, sub = 0, u16 = 1500 }}, … }}, got a {}", other.type_name())),
    };
    let known: Vec<&str> = ["index", "sub"].into_iter().chain(SdoValue::TYPES).collect();
    let mut out = Vec::new();
    for (k, entry) in list.sequence_values::<mlua::Value>().enumerate() {
        let place = format!("{what}: drive parameter {}", k + 1);
        let mlua::Value::Table(p) = entry.map_err(|e| e.to_string())? else {
            return Err(format!("{place} must be a table {{ index = 0x6072, sub = 0, u16 = 1500 }}"));
        };
        keys::check(&p, &format!("in drive parameter {} of {what}", k + 1), &known, 0)?;
        let integer = |key: &str, max: i64| -> Result<i64, String> {
            match p.get::<mlua::Value>(key).map_err(|e| e.to_string())? {
                mlua::Value::Integer(n) if (0..=max).contains(&n) => Ok(n),
                mlua::Value::Nil if key == "sub" => Ok(0),
                other => Err(format!("{place}: {key} must be an integer 0…0x{max:X}, got {}", other.to_string().unwrap_or_else(|_| other.type_name().into()))),
            }
        };
        let (index, sub) = (integer("index", 0xFFFF)? as u16, integer("sub", 0xFF)? as u8);
        let typed: Vec<(&str, f64)> = SdoValue::TYPES.into_iter().filter_map(|t| p.get::<Option<f64>>(t).ok().flatten().map(|x| (t, x))).collect();
        let [(ty, x)] = typed[..] else {
            return Err(format!("{place} (0x{index:04X}:{sub:02X}) needs exactly one value, keyed by its type: {}", SdoValue::TYPES.join(", ")));
        };
        let value = SdoValue::of(ty, x).map_err(|e| format!("{place} (0x{index:04X}:{sub:02X}): {e}"))?;
        out.push(DriveParameter { index, sub, value });
    }
    if out.len() != list.raw_len() {
        return Err(format!("{what}: the drive's parameters must be a list without gaps"));
    }
    Ok(out)
}
