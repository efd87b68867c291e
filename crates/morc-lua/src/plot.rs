//! `plot(path_or_result, {signals…}, "out.png")` in Lua: the REPL's "plot the
//! last run". A run result plots its first recording.

use std::path::{Path, PathBuf};

use mlua::{Lua, Table, Value};

use morc_record::plot::{default_output, plot, plot_data, Loaded, PlotOptions, Signal};

const DOC: &str = "plot(path_or_result [, {signals…}] [, \"out.png\"|\"out.svg\"]): plots a recording over time, \
one panel per signal, units on the axes; never over an existing file (the next free NAME-001.png … instead). A run result plots its first recording (r.recordings[1]); \
signals are names or globs (\"robot.q\", \"*.y\"), all by default; the picture defaults to the recording with .png. \
Returns the picture's path.\n\
  plot(data, \"out.png\"): plots data that is no recording (a fit's residuals, predicted against measured torque): \
data = { title = \"…\", x = { … }, x_label = \"pose\", panels = { { name = \"J1 torque\", unit = \"N·m\", \
lines = { { \"measured\", { … } }, { \"predicted\", { … } } } }, … } }, every line as long as x.\n\
  plot(what: string|run_result|skill_result|table, signals?: string[]|string, output?: string) → string";

/// Defines the global `plot` (and its documentation, where `morc.doc` exists).
pub fn install(lua: &Lua) -> mlua::Result<()> {
    let plot_fn = lua.create_function(|lua, (what, signals, output): (Value, Value, Option<String>)| {
        // A plot is a file written where the caller says.
        crate::library::check(lua, "io", "use io outside its folder (plot writes a picture file)")?;
        if let Value::Table(t) = &what {
            if t.contains_key("panels")? {
                let Value::String(out) = signals else {
                    return Err(mlua::Error::runtime("plot(data, \"out.png\"): give the picture's path (PNG or SVG)"));
                };
                let output = free_output(lua, &out.to_str()?)?;
                let summary = plot_data(data_of(t)?, &t.get::<Option<String>>("x_label")?.unwrap_or_else(|| "x".into()), &output, &PlotOptions::default()).map_err(|e| failed(&output, e))?;
                return Ok(summary.output.display().to_string());
            }
        }
        let signals = match signals {
            Value::Table(t) => Some(t),
            Value::Nil => None,
            other => return Err(mlua::Error::runtime(format!("plot: the signals are a list of names or globs, got a {}", other.type_name()))),
        };
        let recording = recording_of(&what)?;
        let patterns: Vec<String> = match signals {
            Some(t) => t.sequence_values::<String>().collect::<mlua::Result<_>>()?,
            None => Vec::new(),
        };
        let patterns: Vec<&str> = patterns.iter().map(String::as_str).collect();
        let output = free_output(lua, &output.unwrap_or_else(|| default_output(&recording).to_string_lossy().into_owned()))?;
        let summary = plot(&recording, &patterns, &output, &PlotOptions::default()).map_err(|e| failed(&output, e))?;
        Ok(summary.output.display().to_string())
    })?;
    lua.globals().set("plot", plot_fn)?;
    // morc.doc comes from the prelude when built; without it plot still works.
    lua.load(format!("if morc and morc.doc then morc.doc(plot, {DOC:?}) end")).set_name("@morc/plot").exec()
}

/// Where a picture asked for at `path` goes: never over an existing file (the next free
/// `NAME-001.png` … beside it, as every save in morc), and under `morc check` into its scratch folder.
fn free_output(lua: &Lua, path: &str) -> mlua::Result<PathBuf> {
    let path = crate::new_file::checked_path(lua, path);
    // The picture's folder is made as the plotter makes it (a recording's runs/ folder).
    if let Some(dir) = Path::new(&path).parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| mlua::Error::runtime(format!("plot: cannot make the folder {}: {e}", dir.display())))?;
    }
    let (_, path) = crate::new_file::create_new(&path, "plot")?;
    Ok(PathBuf::from(path))
}

/// A plot that failed leaves no empty picture behind (its name was taken by [`free_output`]).
fn failed(output: &Path, e: impl crate::error::Kind + std::fmt::Display) -> mlua::Error {
    let _ = std::fs::remove_file(output);
    crate::error::with_prefix("plot: ", e)
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

/// The data of `plot(data, out)`: { title, x, panels = { { name, unit, lines = { { label, values }, … } }, … } }.
fn data_of(t: &Table) -> mlua::Result<Loaded> {
    let bad = |m: &str| mlua::Error::runtime(format!("plot(data, out): {m}"));
    let x: Vec<f64> = t.get::<Option<Vec<f64>>>("x")?.ok_or_else(|| bad("data.x must be a list of numbers"))?;
    let panels: Table = t.get("panels")?;
    let mut signals = Vec::new();
    for (i, panel) in panels.sequence_values::<Table>().enumerate() {
        let panel = panel.map_err(|_| bad(&format!("panels[{}] must be a table {{ name, unit, lines }}", i + 1)))?;
        let name: String = panel.get::<Option<String>>("name")?.unwrap_or_else(|| format!("panel {}", i + 1));
        let lines: Table = panel.get::<Option<Table>>("lines")?.ok_or_else(|| bad(&format!("panel '{name}' needs lines = {{ {{ label, values }}, … }}")))?;
        let (mut labels, mut columns) = (Vec::new(), Vec::new());
        for (k, line) in lines.sequence_values::<Table>().enumerate() {
            let line = line.map_err(|_| bad(&format!("panel '{name}': line {} must be {{ label, values }}", k + 1)))?;
            labels.push(line.get::<Option<String>>(1)?.unwrap_or_else(|| format!("{}", k + 1)));
            columns.push(line.get::<Vec<f64>>(2).map_err(|_| bad(&format!("panel '{name}': line {} needs its values, a list of numbers", k + 1)))?);
        }
        signals.push(Signal { name, unit: panel.get::<Option<String>>("unit")?.unwrap_or_default(), labels, columns });
    }
    Ok(Loaded { title: t.get::<Option<String>>("title")?.unwrap_or_default(), time: x, signals })
}
