//! Reading recordings back: a summary for people (`morc rec info FILE`).

use std::fmt::Write;
use std::path::Path;

use hdf5_metno as hdf5;
use hdf5::types::{FloatSize, TypeDescriptor, VarLenAscii, VarLenUnicode};
use hdf5::{Attribute, File, Group, Location};

/// A description of the recording at `path`: its attributes, every dataset
/// (shape, type, unit, description), the assembly and its timing.
pub fn info(path: &Path) -> Result<String, String> {
    let file = File::open(path).map_err(|e| {
        if path.exists() {
            format!("cannot read {} as HDF5: {e}", path.display())
        } else {
            format!("no file {}", path.display())
        }
    })?;
    describe(&file, path).map_err(|e| format!("reading {}: {e}", path.display()))
}

fn describe(file: &File, path: &Path) -> hdf5::Result<String> {
    let mut s = String::new();
    let _ = writeln!(s, "{}", path.display());
    let _ = writeln!(s, "attributes:");
    for (name, value) in attributes(file)? {
        let _ = writeln!(s, "  {name:<16} {value}");
    }

    let mut rows = Vec::new();
    for ds in file.datasets()? {
        let name = ds.name().trim_start_matches('/').to_string();
        let shape = format!("{:?}", ds.shape());
        let dtype = ds.dtype()?.to_descriptor().map(|d| d.to_string()).unwrap_or_else(|_| "?".into());
        let unit = text_attr(&ds, "unit");
        let doc = text_attr(&ds, "description");
        rows.push((name, shape, dtype, unit, doc));
    }
    // Time first, then signals by name.
    rows.sort_by(|a, b| (a.0 != "time", &a.0).cmp(&(b.0 != "time", &b.0)));
    let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(4).max(7);
    let _ = writeln!(s, "datasets:");
    let _ = writeln!(s, "  {:<w$} {:<14} {:<9} {:<10} description", "name", "shape", "dtype", "unit");
    for (name, shape, dtype, unit, doc) in &rows {
        let _ = writeln!(s, "  {name:<w$} {shape:<14} {dtype:<9} {unit:<10} {doc}");
    }

    if let Ok(assembly) = file.group("assembly") {
        let _ = writeln!(s, "assembly '{}':", text_attr(&assembly, "name"));
        for c in sorted_groups(&assembly)? {
            let name = c.name().rsplit('/').next().unwrap_or_default().to_string();
            let params = c
                .group("parameters")
                .ok()
                .and_then(|p| attributes(&p).ok())
                .map(|a| a.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "))
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "  {name:<16} {:<12} every {:<4} ({} s)  {params}",
                text_attr(&c, "kind"),
                text_attr(&c, "every"),
                text_attr(&c, "sample_time")
            );
        }
    }
    if let Ok(timing) = file.group("timing") {
        let _ = writeln!(s, "timing (execution time per step):");
        let _ = writeln!(s, "  {:<16} {:>8} {:>10} {:>10} {:>10} {:>8}", "component", "steps", "mean", "p99", "max", "overruns");
        for c in sorted_groups(&timing)? {
            let name = c.name().rsplit('/').next().unwrap_or_default().to_string();
            let secs = |k: &str| c.attr(k).and_then(|a| a.read_scalar::<f64>()).map(human_s).unwrap_or_default();
            let _ = writeln!(
                s,
                "  {name:<16} {:>8} {:>10} {:>10} {:>10} {:>8}",
                text_attr(&c, "count"),
                secs("mean"),
                secs("p99"),
                secs("max"),
                text_attr(&c, "overruns")
            );
        }
    }
    Ok(s)
}

fn sorted_groups(g: &Group) -> hdf5::Result<Vec<Group>> {
    let mut groups = g.groups()?;
    groups.sort_by_key(|g| g.name());
    Ok(groups)
}

fn human_s(x: f64) -> String {
    if x < 1e-6 {
        format!("{:.0} ns", x * 1e9)
    } else if x < 1e-3 {
        format!("{:.1} µs", x * 1e6)
    } else {
        format!("{:.2} ms", x * 1e3)
    }
}

/// Every attribute of `loc` as (name, value as text), sorted by name.
fn attributes(loc: &Location) -> hdf5::Result<Vec<(String, String)>> {
    let mut names = loc.attr_names()?;
    names.sort();
    Ok(names.into_iter().map(|n| {
        let v = loc.attr(&n).map(|a| attr_text(&a)).unwrap_or_else(|e| format!("<{e}>"));
        (n, v)
    }).collect())
}

/// An attribute's value as text ("" when absent).
fn text_attr(loc: &Location, name: &str) -> String {
    loc.attr(name).map(|a| attr_text(&a)).unwrap_or_default()
}

fn attr_text(a: &Attribute) -> String {
    let Ok(desc) = a.dtype().and_then(|t| t.to_descriptor()) else {
        return "<unreadable type>".into();
    };
    let scalar = a.is_scalar();
    let joined = |v: Vec<String>| if scalar { v.join("") } else { format!("[{}]", v.join(", ")) };
    let r = match desc {
        TypeDescriptor::Float(FloatSize::U8) | TypeDescriptor::Float(_) => {
            a.read_raw::<f64>().map(|v| joined(v.iter().map(|x| x.to_string()).collect()))
        }
        TypeDescriptor::Integer(_) => a.read_raw::<i64>().map(|v| joined(v.iter().map(|x| x.to_string()).collect())),
        TypeDescriptor::Unsigned(_) => a.read_raw::<u64>().map(|v| joined(v.iter().map(|x| x.to_string()).collect())),
        TypeDescriptor::VarLenUnicode => a.read_raw::<VarLenUnicode>().map(|v| joined(v.iter().map(|x| x.to_string()).collect())),
        TypeDescriptor::VarLenAscii => a.read_raw::<VarLenAscii>().map(|v| joined(v.iter().map(|x| x.to_string()).collect())),
        other => return format!("<{other}>"),
    };
    r.unwrap_or_else(|e| format!("<{e}>"))
}
