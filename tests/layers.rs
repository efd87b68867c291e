//! The workspace's layers, as docs/architecture.md draws them: each crate depends only on
//! crates of lower layers, and the exported-FMU library reaches no Lua, EtherCAT, HDF5 or
//! plotting code. Read from the crates' Cargo.toml files, so a new dependency that points the
//! wrong way fails here, not in a reader's head.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The crates from the bottom layer up: a crate may use only crates listed before it.
const LAYERS: &[&str] = &[
    "morc-kernel",
    "morc-ros-msgs",
    "morc-model",
    "morc-motion",
    "morc-ecat-wire",
    "morc-ecat-sim",
    "morc-ecat",
    "morc-netft",
    "morc-fmi",
    "morc-record",
    "morc-ros",
    "morc-live",
    "morc-robot",
    "morc-robot-ecat",
    "morc-lua",
    "morc-fmu",
];

/// The normal (not dev) dependencies of the crate whose manifest is `path`: names only.
fn dependencies(path: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut in_dependencies = false;
    let mut names = BTreeSet::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_dependencies = line == "[dependencies]";
            continue;
        }
        if !in_dependencies || line.is_empty() || line.starts_with('#') {
            continue;
        }
        let name = line.split(['=', '.']).next().unwrap().trim();
        names.insert(name.to_string());
    }
    names
}

fn manifests() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = BTreeMap::new();
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        all.insert(name, dependencies(&dir.join("Cargo.toml")));
    }
    all
}

#[test]
fn every_crate_uses_only_lower_layers() {
    let all = manifests();
    for (name, deps) in &all {
        if name == "morc-test-support" {
            continue; // tests only; it may use the kernel's doubles
        }
        let layer = LAYERS.iter().position(|l| l == name).unwrap_or_else(|| panic!("crate {name} is in no layer: add it to LAYERS and docs/architecture.md"));
        for dep in deps.iter().filter(|d| d.starts_with("morc")) {
            let below = LAYERS.iter().position(|l| l == dep).unwrap_or_else(|| panic!("{name} depends on {dep}, which is in no layer"));
            assert!(below < layer, "{name} depends on {dep}, a crate of a higher layer: dependencies point down only");
        }
    }
}

#[test]
fn the_fmu_library_reaches_no_lua_ethercat_hdf5_or_plotting() {
    let all = manifests();
    let mut reached = BTreeSet::new();
    let mut todo = vec!["morc-fmu".to_string()];
    while let Some(name) = todo.pop() {
        for dep in all.get(&name).into_iter().flatten() {
            if reached.insert(dep.clone()) && all.contains_key(dep) {
                todo.push(dep.clone());
            }
        }
    }
    for forbidden in ["mlua", "ethercrab", "hdf5-metno", "hdf5-metno-sys", "plotters", "morc-lua", "morc-ecat", "morc-record", "morc-live", "foxglove"] {
        assert!(!reached.contains(forbidden), "morc-fmu reaches {forbidden}: {reached:?}");
    }
    assert!(reached.contains("morc-kernel"), "the blocks it exports are the kernel's: {reached:?}");
}
