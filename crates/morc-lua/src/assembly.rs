//! `morc.assembly "name"`: describing an assembly from Lua.

use std::sync::Arc;

use mlua::{AnyUserData, Table, UserData, UserDataFields, UserDataMethods};

use super::convert::to_value_any;
use super::fmu::FmuKind;
use super::origin::caller;
use crate::component::LuaComponentDef;
use crate::error::{note_component_kind, prefixed, ErrorKind};
use crate::kinds::{self, Resolved};
use crate::robot::RobotKind;
use morc_kernel::{AssemblySpec, AttachmentSpec, ComponentSpec, ConnectionSpec, OverrunPolicy};
use morc_record::attach::{RecordFormat, RecordRequest, RecordTarget};

/// A Lua component kind made by `morc.component { … }`.
#[derive(Clone)]
pub struct LuaKind(pub Arc<LuaComponentDef>);

impl UserData for LuaKind {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("name", |_, this| Ok(this.0.kind.clone()));
        fields.add_field_method_get("doc", |_, this| Ok(this.0.doc.clone()));
    }
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method("__tostring", |_, this, ()| Ok(format!("lua component kind '{}'", this.0.kind)));
    }
}

/// The `morc.assembly "name"` userdata: the assembly being described (`a:add`, `a:connect`, …).
pub struct LuaAssembly(pub AssemblySpec);

/// Resolves what `a:add` was given as kind: a registered name, a kind value, or `"fmu"` with
/// the `path` option (the same kind as `morc.fmu(path)`).
fn resolve(lua: &mlua::Lua, kind: &mlua::Value, fmu_path: Option<&str>) -> mlua::Result<Resolved> {
    match kind {
        mlua::Value::String(s) if s.to_str()? == "fmu" => {
            let path = fmu_path.ok_or_else(|| mlua::Error::runtime("kind \"fmu\" needs the FMU file: a:add(name, \"fmu\", { path = \"model.fmu\", … })"))?;
            crate::library::check(lua, "binary", &format!("load binary code (the FMU {path})"))?;
            let kind = super::fmu::open(lua, path)?;
            Ok(Resolved::Kind(kinds::fmu_entry(&kind, &format!("FMU {path}"))))
        }
        mlua::Value::String(s) => kinds::find(lua, &s.to_str()?).map_err(mlua::Error::runtime),
        mlua::Value::UserData(ud) if ud.is::<FmuKind>() => Ok(Resolved::Kind(kinds::fmu_entry(&*ud.borrow::<FmuKind>()?, "morc.fmu"))),
        mlua::Value::UserData(ud) if ud.is::<LuaKind>() => Ok(Resolved::Kind(kinds::lua_entry(&*ud.borrow::<LuaKind>()?, "morc.component"))),
        mlua::Value::UserData(ud) if ud.is::<RobotKind>() => Ok(Resolved::Robot(ud.borrow::<RobotKind>()?.clone())),
        other => Err(mlua::Error::runtime(format!(
            "a component kind is a name (\"gain\", see morc.components()), \"fmu\" with a path, a kind made with morc.component{{…}}, morc.fmu(path) or robot:component \"ptp\", got a {}",
            other.type_name()
        ))),
    }
}

/// `{ "u", "v" }`: the inputs named in an `interpolate` option.
pub(super) fn input_names(v: &mlua::Value, what: &str) -> mlua::Result<Vec<String>> {
    match v {
        mlua::Value::Table(t) => t.clone().sequence_values::<String>().collect(),
        _ => Err(mlua::Error::runtime(format!("{what} is a list of input names, e.g. interpolate = {{ \"u\" }}"))),
    }
}

impl UserData for LuaAssembly {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("name", |_, this| Ok(this.0.name.clone()));
        fields.add_field_method_get("duration", |_, this| Ok(this.0.duration));
        fields.add_field_method_set("duration", |_, this, d: Option<f64>| {
            this.0.duration = d;
            Ok(())
        });
        fields.add_field_method_get("overrun", |_, this| {
            Ok(match this.0.overrun {
                OverrunPolicy::Warn => "warn",
                OverrunPolicy::Fault => "fault",
            })
        });
        fields.add_field_method_set("overrun", |_, this, p: String| {
            this.0.overrun = parse_overrun(&p)?;
            Ok(())
        });
    }

    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_function("add", |lua, (ud, name, kind, opts): (AnyUserData, String, mlua::Value, Option<Table>)| {
            let origin = caller(lua);
            let fmu_path = match &opts {
                Some(o) if matches!(&kind, mlua::Value::String(s) if s.to_str().is_ok_and(|s| s == "fmu")) => o.get::<Option<String>>("path")?,
                _ => None,
            };
            let entry = match resolve(lua, &kind, fmu_path.as_deref()).map_err(|e| prefixed(&origin, e))? {
                Resolved::Robot(k) => return super::robot::add_component(lua, &k.robot, ud, name, &k.kind, opts),
                Resolved::Kind(entry) => entry,
            };
            let (kind_name, mut factory) = (entry.name, entry.make);
            // FMU and Lua kinds are named by their model and definition: what their faults are about
            // (kinds registered by name are noted by morc.register).
            match &kind {
                _ if fmu_path.is_some() => note_component_kind(&kind_name, ErrorKind::Fmi),
                mlua::Value::UserData(k) if k.is::<FmuKind>() => note_component_kind(&kind_name, ErrorKind::Fmi),
                mlua::Value::UserData(k) if k.is::<LuaKind>() => note_component_kind(&kind_name, ErrorKind::Lua),
                _ => {}
            }
            let mut every = 1u32;
            let mut period = None;
            let mut params = Vec::new();
            let mut interpolate = Vec::new();
            // Parameters checked on an instance now, so the errors point at this line.
            let mut probe = factory().map_err(|e| mlua::Error::runtime(format!("{origin}: {e}")))?;
            // A Lua component's parameters that take a robot or a model: handed to it, not converted.
            let objects = crate::object_params::of_kind(&mut *probe);
            let mut handed = Vec::new();
            let component = format!("component '{name}' ({kind_name})");
            let at = |e: String| mlua::Error::runtime(format!("{origin}: {e}"));
            if let Some(opts) = opts {
                for pair in opts.pairs::<String, mlua::Value>() {
                    let (k, v) = pair?;
                    match k.as_str() {
                        "path" if fmu_path.is_some() => {}
                        "interpolate" => interpolate = input_names(&v, &format!("{origin}: 'interpolate' of '{name}'"))?,
                        "every" => match v {
                            mlua::Value::Integer(i) if i >= 1 && i <= i64::from(u32::MAX) => every = i as u32,
                            _ => return Err(mlua::Error::runtime(format!("{origin}: 'every' of '{name}' must be a whole number ≥ 1 of base periods"))),
                        },
                        "period" => match v {
                            mlua::Value::Number(x) => period = Some(x),
                            mlua::Value::Integer(i) => period = Some(i as f64),
                            _ => return Err(mlua::Error::runtime(format!("{origin}: 'period' of '{name}' must be a number of seconds"))),
                        },
                        _ => match objects.iter().find(|p| p.name == k) {
                            Some(p) => handed.push((k.clone(), crate::object_params::take(lua, p, &v, &component).map_err(at)?)),
                            None => {
                                crate::object_params::refuse(&v, &k, &component).map_err(at)?;
                                params.push((k.clone(), to_value_any(&v, &format!("{origin}: {name}.{k}"))?));
                            }
                        },
                    }
                }
            }
            // Not given: the robot on the engine.
            for p in &objects {
                if !handed.iter().any(|(n, _)| *n == p.name) {
                    handed.push((p.name.clone(), crate::object_params::default(lua, p, &component).map_err(at)?));
                }
            }
            if !handed.is_empty() {
                factory = crate::object_params::handing(&mut *probe, handed).ok_or_else(|| at(format!("{component}: only a Lua component takes robots")))?;
            }
            // NaN never; an infinity only where the kind's own default is one ("no limit").
            let unbounded: Vec<String> = probe.info().params.iter().filter(|d| crate::convert::non_finite(&d.value).is_some_and(|(_, x)| x.is_infinite())).map(|d| d.name.clone()).collect();
            for (p, v) in &params {
                probe.set_parameter(p, v).map_err(|e| mlua::Error::runtime(format!("{origin}: component '{name}': {e}")))?;
                let unbounded = unbounded.contains(p);
                match crate::convert::non_finite(v) {
                    Some((at, x)) if x.is_nan() || !unbounded => {
                        let element = at.map_or(String::new(), |i| format!(" (element {})", i + 1));
                        return Err(mlua::Error::runtime(format!("{origin}: component '{name}': parameter '{p}'{element} is {x}: give a finite number")));
                    }
                    _ => {}
                }
            }
            let mut this = ud.borrow_mut::<LuaAssembly>()?;
            if this.0.components.iter().any(|c| c.name == name) {
                return Err(mlua::Error::runtime(format!("{origin}: a component named '{name}' is already in assembly '{}'", this.0.name)));
            }
            this.0.components.push(ComponentSpec { name, kind: kind_name, factory, every, period, params, interpolate, origin });
            drop(this);
            Ok(ud)
        });

        methods.add_function("connect", |lua, (ud, from, to, opts): (AnyUserData, String, String, Option<Table>)| {
            let origin = caller(lua);
            let delay = match &opts {
                Some(t) => {
                    crate::keys::check(t, "in a:connect's options", &["delay"], 0).map_err(|e| mlua::Error::runtime(format!("{origin}: {e}")))?;
                    t.get::<Option<bool>>("delay")?.unwrap_or(false)
                }
                None => false,
            };
            ud.borrow_mut::<LuaAssembly>()?.0.connections.push(ConnectionSpec { from, to, delay, origin });
            Ok(ud)
        });

        methods.add_function("record", |lua, (ud, opts): (AnyUserData, Table)| {
            let origin = caller(lua);
            let fail = |m: String| crate::error::raise(crate::error::ErrorKind::Record, format!("{origin}: {m}"));
            crate::keys::check(&opts, "in a:record's options", &["every", "decimation", "notes", "path", "folder", "name", "format"], opts.raw_len()).map_err(fail)?;
            let mut patterns = Vec::new();
            for p in opts.clone().sequence_values::<String>() {
                patterns.push(p?);
            }
            if patterns.is_empty() {
                return Err(fail("a:record needs signals to record, e.g. a:record { \"robot.q\", \"pid.*\" }".into()));
            }
            let every: u32 = opts.get::<Option<u32>>("every")?.unwrap_or(1).max(1);
            let decimation: u32 = opts.get::<Option<u32>>("decimation")?.unwrap_or(1).max(1);
            let notes: String = opts.get::<Option<String>>("notes")?.unwrap_or_default();
            // Where the program's recordings go (morc.record_dir, which libraries cannot change) is
            // every skill's to use; a file or folder of a library's choosing is io outside its folder.
            if let Some(place) = opts.get::<Option<String>>("path")?.or(opts.get::<Option<String>>("folder")?) {
                crate::library::check(lua, "io", &format!("use io outside its folder (a:record to {place})"))?;
            }
            let target = match opts.get::<Option<String>>("path")? {
                Some(file) => RecordTarget::File(file.into()),
                None => {
                    let morc: Table = lua.globals().get("morc")?;
                    let dir = opts.get::<Option<String>>("folder")?.or(morc.get::<Option<String>>("record_dir")?).unwrap_or_else(|| "runs".into());
                    RecordTarget::Folder(dir.into())
                }
            };
            let mut this = ud.borrow_mut::<LuaAssembly>()?;
            let name = match opts.get::<Option<String>>("name")? {
                Some(n) => n,
                None => (1..)
                    .map(|i| if i == 1 { "rec".to_string() } else { format!("rec{i}") })
                    .find(|n| !this.0.attachments.iter().any(|a| &a.name == n) && !this.0.components.iter().any(|c| &c.name == n))
                    .expect("a free name"),
            };
            // format = "mcap" | "hdf5"; else morc.record_format (--record-format); a path's extension says its own.
            let format_name = match opts.get::<Option<String>>("format")? {
                Some(f) => Some(f),
                None => lua.globals().get::<Table>("morc")?.get::<Option<String>>("record_format")?,
            };
            let format = format_name.as_deref().map(RecordFormat::parse).transpose().map_err(fail)?.unwrap_or_default();
            let target = match target {
                RecordTarget::File(f) if format_name.is_some() && f.extension().is_none() => RecordTarget::File(f.with_extension(format.extension())),
                t => t,
            };
            let request = RecordRequest { patterns, every, decimation, target, notes, format, robot: None };
            this.0.attachments.push(AttachmentSpec { name, kind: "recorder".into(), attach: morc_record::attach::attachment(request), origin });
            drop(this);
            Ok(ud)
        });

        // a:publish { "robot.q", "ff.tau", rate = 100 }: these signals go to the live view (morc.live.start, morc --live).
        methods.add_function("publish", |lua, (ud, opts): (AnyUserData, Table)| {
            let origin = caller(lua);
            crate::keys::check(&opts, "in a:publish's options", &["rate"], opts.raw_len()).map_err(|e| mlua::Error::runtime(format!("{origin}: {e}")))?;
            let mut patterns = Vec::new();
            for p in opts.clone().sequence_values::<String>() {
                patterns.push(p?);
            }
            if patterns.is_empty() {
                return Err(mlua::Error::runtime(format!("{origin}: a:publish needs signals to publish, e.g. a:publish {{ \"robot.q\", \"ff.tau\" }}")));
            }
            let rate: f64 = opts.get::<Option<f64>>("rate")?.unwrap_or(crate::live::DEFAULT_RATE);
            if !(rate > 0.0 && rate.is_finite()) {
                return Err(mlua::Error::runtime(format!("{origin}: a:publish rate must be samples per second above 0, got {rate}")));
            }
            let mut this = ud.borrow_mut::<LuaAssembly>()?;
            this.0.attachments.retain(|a| a.kind != "live");
            this.0.attachments.push(crate::live::publish_spec(patterns, rate, origin));
            drop(this);
            Ok(ud)
        });

        methods.add_method("components", |lua, this, ()| {
            let t = lua.create_table()?;
            for c in &this.0.components {
                let e = lua.create_table()?;
                e.set("name", c.name.as_str())?;
                e.set("kind", c.kind.as_str())?;
                e.set("every", c.every)?;
                e.set("period", c.period)?;
                t.push(e)?;
            }
            Ok(t)
        });

        methods.add_meta_method("__tostring", |_, this, ()| Ok(describe(&this.0)));
    }
}

/// An `overrun` setting: "warn" or "fault".
pub fn parse_overrun(p: &str) -> mlua::Result<OverrunPolicy> {
    match p {
        "warn" => Ok(OverrunPolicy::Warn),
        "fault" => Ok(OverrunPolicy::Fault),
        other => Err(mlua::Error::runtime(format!("overrun policy '{other}': use \"warn\" or \"fault\""))),
    }
}

/// A one-screen description of an assembly.
pub fn describe(spec: &AssemblySpec) -> String {
    let mut s = format!("assembly '{}' ({} components, {} connections)", spec.name, spec.components.len(), spec.connections.len());
    for c in &spec.components {
        let rate = match c.period {
            Some(p) => format!("period {p} s"),
            None => format!("every {}", c.every),
        };
        s.push_str(&format!("\n  {:<14} {:<12} {rate}", c.name, c.kind));
    }
    for a in &spec.attachments {
        s.push_str(&format!("\n  {:<14} {:<12}", a.name, a.kind));
    }
    for c in &spec.connections {
        s.push_str(&format!("\n  {} → {}{}", c.from, c.to, if c.delay { " (delay)" } else { "" }));
    }
    s
}
