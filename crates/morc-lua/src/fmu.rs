//! FMUs from Lua: `morc.fmu(path)` is a component kind made from an FMU
//! file (`a:add("ctl", morc.fmu "pid.fmu", { kp = 2 })`, or equally
//! `a:add("ctl", "fmu", { path = "pid.fmu", kp = 2 })`), and
//! `morc.fmu_info(path)` describes one: variables with causality, type,
//! unit, description and start, interfaces and default experiment.
//! A relative path is taken from the current folder, else from the folder
//! of the calling script.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mlua::{Lua, Table, UserData, UserDataFields, UserDataMethods};

use super::origin::caller;
use morc_fmi::description::{Causality, ModelDescription};
use morc_fmi::{Fmu, FmuComponent};
use morc_kernel::Component;
use morc_kernel::Factory;

/// A component kind made from an FMU.
#[derive(Clone)]
pub struct FmuKind(pub Arc<Fmu>);

impl FmuKind {
    /// Makes an FMU component of this kind (one instance of the FMU each).
    pub fn factory(&self) -> Factory {
        let fmu = self.0.clone();
        Arc::new(move || Ok(Box::new(FmuComponent::new(fmu.clone())) as Box<dyn Component>))
    }
}

impl UserData for FmuKind {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("name", |_, this| Ok(this.0.description.model_name.clone()));
        fields.add_field_method_get("doc", |_, this| Ok(this.0.description.description.clone()));
        fields.add_field_method_get("path", |_, this| Ok(this.0.path.display().to_string()));
    }
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method("info", |lua, this, ()| info_table(lua, &this.0.description));
        methods.add_meta_method("__tostring", |_, this, ()| Ok(format!("FMU kind '{}' ({})", this.0.description.model_name, this.0.path.display())));
    }
}

/// `path` as given if it exists, else beside the calling script.
fn resolve(lua: &Lua, path: &str) -> PathBuf {
    let given = PathBuf::from(path);
    if given.is_absolute() || given.exists() {
        return given;
    }
    let script = caller(lua).file;
    match Path::new(&script).parent() {
        Some(dir) if dir.join(&given).exists() => dir.join(given),
        _ => given,
    }
}

/// Opens the FMU at `path` (resolved as above); errors point at the calling line.
pub fn open(lua: &Lua, path: &str) -> mlua::Result<FmuKind> {
    let origin = caller(lua);
    let file = resolve(lua, path);
    crate::library::check_read(lua, &file, "read the FMU")?;
    Fmu::open(&file).map(FmuKind).map_err(|e| crate::error::raise(crate::error::Kind::kind(&e), format!("{origin}: {e}")))
}

fn info_table(lua: &Lua, md: &ModelDescription) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set("name", md.model_name.as_str())?;
    t.set("doc", md.description.as_str())?;
    t.set("fmi_version", md.fmi_version.as_str())?;
    t.set("generation_tool", md.generation_tool.as_str())?;
    t.set("co_simulation", md.co_simulation.is_some())?;
    t.set("model_exchange", md.model_exchange.is_some())?;
    let de = lua.create_table()?;
    de.set("start", md.default_experiment.start_time)?;
    de.set("stop", md.default_experiment.stop_time)?;
    de.set("step", md.default_experiment.step_size)?;
    de.set("tolerance", md.default_experiment.tolerance)?;
    t.set("default_experiment", de)?;
    let vars = lua.create_table()?;
    for v in &md.variables {
        let e = lua.create_table()?;
        e.set("name", v.name.as_str())?;
        let causality = match v.causality {
            Causality::Parameter => "parameter",
            Causality::CalculatedParameter => "calculatedParameter",
            Causality::Input => "input",
            Causality::Output => "output",
            Causality::Local => "local",
            Causality::Independent => "independent",
            Causality::StructuralParameter => "structuralParameter",
        };
        e.set("causality", causality)?;
        e.set("type", format!("{:?}", v.ty))?;
        e.set("variability", v.variability.as_str())?;
        e.set("unit", v.unit.as_str())?;
        e.set("doc", v.description.as_str())?;
        e.set("start", v.start.as_deref())?;
        e.set("value_reference", v.value_reference)?;
        if !v.dimensions.is_empty() {
            e.set("dimensions", lua.create_sequence_from(v.dimensions.iter().copied())?)?;
        }
        vars.push(e)?;
    }
    t.set("variables", vars)?;
    Ok(t)
}

/// Puts `morc.fmu` and `morc.fmu_info` into the `morc` table.
pub fn install(lua: &Lua, morc: &Table) -> mlua::Result<()> {
    morc.set(
        "fmu",
        lua.create_function(|lua, path: String| {
            crate::library::check(lua, "binary", &format!("load binary code (the FMU {path})"))?;
            open(lua, &path)
        })?,
    )?;
    morc.set("fmu_info", lua.create_function(|lua, path: String| info_table(lua, &open(lua, &path)?.0.description))?)?;
    Ok(())
}
