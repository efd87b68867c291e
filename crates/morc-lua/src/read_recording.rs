//! `morc.read_recording(path_or_result [, {signals…}])`: a recording's signals back in Lua, to
//! compare runs from what was recorded rather than from what a run returned.

use std::path::Path;

use mlua::{Lua, Table, Value};

const DOC: &str = "morc.read_recording(path_or_result [, {signals…}]): a recording (HDF5 or MCAP) read back: \
{ title, time = { s… }, signals = { [\"trk.pos\"] = { unit, labels = { … }, columns = { { … }, … } } } }, one column per element, \
as long as time. A run result reads its first recording; signals are names or globs (\"robot.q\", \"*.pos\"), all by default.\n  \
morc.read_recording(what: string|run_result, signals?: string[]) → { title: string, time: number[], signals: table<string, { unit: string, labels: string[], columns: number[][] }> }";

/// Registers `morc.read_recording` and its documentation.
pub fn install(lua: &Lua, morc: &Table) -> mlua::Result<()> {
    let read = lua.create_function(|lua, (what, signals): (Value, Option<Vec<String>>)| {
        let origin = crate::origin::caller(lua);
        let path = match &what {
            Value::String(s) => s.to_str()?.to_string(),
            Value::Table(t) => t
                .get::<Option<Table>>("recordings")?
                .and_then(|r| r.get::<Option<String>>(1).ok().flatten())
                .ok_or_else(|| crate::error::raise(crate::error::ErrorKind::Record, format!("{origin}: morc.read_recording: this run recorded nothing (r.recordings is empty)")))?,
            other => return Err(mlua::Error::runtime(format!("{origin}: morc.read_recording expects a recording's path or a run result, got a {}", other.type_name()))),
        };
        let patterns = signals.unwrap_or_default();
        let patterns: Vec<&str> = patterns.iter().map(String::as_str).collect();
        let loaded = morc_record::plot::load(Path::new(&path), &patterns).map_err(|e| crate::error::raise(crate::error::ErrorKind::Record, format!("{origin}: morc.read_recording: {e}")))?;
        let out = lua.create_table()?;
        out.set("title", loaded.title)?;
        out.set("time", lua.create_sequence_from(loaded.time)?)?;
        let signals = lua.create_table()?;
        for s in loaded.signals {
            let t = lua.create_table()?;
            t.set("unit", s.unit)?;
            t.set("labels", lua.create_sequence_from(s.labels)?)?;
            let columns = lua.create_table()?;
            for c in s.columns {
                columns.push(lua.create_sequence_from(c)?)?;
            }
            t.set("columns", columns)?;
            signals.set(s.name, t)?;
        }
        out.set("signals", signals)?;
        Ok(out)
    })?;
    morc.set("read_recording", read)?;
    lua.load(format!("if morc.doc then morc.doc(morc.read_recording, {DOC:?}) end")).set_name("@morc/read_recording").exec()
}
