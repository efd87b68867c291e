//! `plot(path_or_result, {signals…}, "out.png")` in Lua: the REPL's "plot the
//! last run". A run result plots its first recording.

use std::path::{Path, PathBuf};

use mlua::{Lua, Table, Value};

use morc_record::plot::{default_output, plot, PlotOptions};

const DOC: &str = "plot(path_or_result [, {signals…}] [, \"out.png\"|\"out.svg\"]): plots a recording over time, \
one panel per signal, units on the axes. A run result plots its first recording (r.recordings[1]); \
signals are names or globs (\"robot.q\", \"*.y\"), all by default; the picture defaults to the recording with .png. \
Returns the picture's path.\n  plot(what: string|run_result|skill_result, signals?: string[], output?: string) → string";

/// Defines the global `plot` (and its documentation, where `morc.doc` exists).
pub fn install(lua: &Lua) -> mlua::Result<()> {
    let plot_fn = lua.create_function(|lua, (what, signals, output): (Value, Option<Table>, Option<String>)| {
        // A plot is a file written where the caller says.
        crate::library::check(lua, "io", "use io outside its folder (plot writes a picture file)")?;
        let recording = recording_of(&what)?;
        let patterns: Vec<String> = match signals {
            Some(t) => t.sequence_values::<String>().collect::<mlua::Result<_>>()?,
            None => Vec::new(),
        };
        let patterns: Vec<&str> = patterns.iter().map(String::as_str).collect();
        let output = output.map(PathBuf::from).unwrap_or_else(|| default_output(&recording));
        let summary = plot(&recording, &patterns, &output, &PlotOptions::default()).map_err(|e| crate::error::with_prefix("plot: ", e))?;
        Ok(summary.output.display().to_string())
    })?;
    lua.globals().set("plot", plot_fn)?;
    // morc.doc comes from the prelude when built; without it plot still works.
    lua.load(format!("if morc and morc.doc then morc.doc(plot, {DOC:?}) end")).set_name("@morc/plot").exec()
}

fn recording_of(what: &Value) -> mlua::Result<PathBuf> {
    match what {
        Value::String(s) => Ok(Path::new(&*s.to_str()?).to_path_buf()),
        Value::Table(t) => match t.get::<Option<Table>>("recordings")?.and_then(|r| r.get::<Option<String>>(1).ok().flatten()) {
            Some(path) => Ok(PathBuf::from(path)),
            None => Err(crate::error::raise(crate::error::ErrorKind::Record, "plot: this run recorded nothing (r.recordings is empty): add a recorder to the assembly")),
        },
        other => Err(mlua::Error::runtime(format!("plot expects a recording's path or a run result, got a {}", other.type_name()))),
    }
}
