//! `morc.assembly "name"`: describing an assembly from Lua.

use mlua::{AnyUserData, Table, UserData, UserDataFields, UserDataMethods};

use super::origin::caller;
use morc_kernel::{AssemblySpec, AttachmentSpec, ConnectionSpec, OverrunPolicy};
use morc_record::attach::{RecordFormat, RecordRequest, RecordTarget};

/// Puts `component` into the assembly `ud`, whose names must stay unique.
pub(crate) fn push(ud: &AnyUserData, component: morc_kernel::ComponentSpec) -> mlua::Result<()> {
    let mut this = ud
        .borrow_mut::<LuaAssembly>()
        .map_err(|_| mlua::Error::runtime(format!("{}: robot:add(a, name, kind, params): a must be an assembly", component.origin)))?;
    if this.0.components.iter().any(|c| c.name == component.name) {
        return Err(mlua::Error::runtime(format!("{}: a component named '{}' is already in assembly '{}'", component.origin, component.name, this.0.name)));
    }
    this.0.components.push(component);
    Ok(())
}

/// The `morc.assembly "name"` userdata: the assembly being described (`a:add`, `a:connect`, …).
pub struct LuaAssembly(pub AssemblySpec);

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
            push(&ud, crate::kinds::add::component(lua, name, kind, opts)?)?;
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
            this.0.attachments.push(crate::live::publish_spec(lua, patterns, rate, origin));
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
