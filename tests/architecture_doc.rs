//! `docs/architecture.md`'s "Where a new thing goes" checked against the code (issue 28, item 6):
//! - the examples the doc follows — the encoder device class, a native block, a robot kind — are
//!   named in no Rust file but the ones the doc names, so a newcomer who follows it touches them
//!   all and nothing else (a new hidden place fails this test with the file that holds it);
//! - a robot and a Lua component kind are added as the doc says, one file each in a lab's own
//!   folders (nothing in morc's tree changed), and a program runs them on the simulated robot.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The doc's bullet that starts with `**title**`, up to the next bullet.
fn bullet(title: &str) -> String {
    let doc = std::fs::read_to_string(repo().join("docs/architecture.md")).unwrap();
    let start = doc.find(&format!("- **{title}**")).unwrap_or_else(|| panic!("docs/architecture.md has no bullet '{title}'"));
    let rest = &doc[start + 2..];
    rest[..rest.find("\n- **").unwrap_or(rest.len())].to_string()
}

/// The repository paths a bullet names in backticks (`crates/…`, `tests/…`, `src/…`).
fn paths_named(bullet: &str) -> Vec<String> {
    bullet.split('`').skip(1).step_by(2).filter(|s| ["crates/", "tests/", "src/"].iter().any(|p| s.starts_with(p))).map(str::to_string).collect()
}

/// Every Rust file of the workspace (crates/, src/, tests/), relative to the repository.
fn rust_files() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    for d in ["crates", "src", "tests"] {
        walk(&repo().join(d), &mut files);
    }
    files.iter().map(|p| p.strip_prefix(repo()).unwrap().to_string_lossy().replace('\\', "/")).collect()
}

/// The files whose code (not their `#[cfg(test)]` unit tests, which may name anything) contains
/// one of `words`, this test itself left out.
fn files_naming(words: &[&str]) -> BTreeSet<String> {
    rust_files()
        .into_iter()
        .filter(|f| f != "tests/architecture_doc.rs")
        .filter(|f| {
            let text = std::fs::read_to_string(repo().join(f)).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or("");
            words.iter().any(|w| code.contains(w))
        })
        .collect()
}

/// `found` all lie where `allowed` says: a named file, or a file of `own` (the new thing's own
/// files) that sits in a folder the doc names.
fn check_only_named(what: &str, found: &BTreeSet<String>, named: &[String], own: &[&str]) {
    for n in named.iter().filter(|n| !n.contains('<')) {
        assert!(repo().join(n).exists(), "docs/architecture.md names {n} for {what}, which does not exist");
    }
    let allowed = |f: &String| named.contains(f) || (own.contains(&f.as_str()) && named.iter().any(|n| n.ends_with('/') && f.starts_with(n.as_str())));
    let elsewhere: Vec<&String> = found.iter().filter(|f| !allowed(f)).collect();
    assert!(elsewhere.is_empty(), "{what} is also in {elsewhere:?}, which docs/architecture.md does not name (named: {named:?})");
    for f in own {
        assert!(found.contains(*f), "{what}: its own file {f} is not where the doc says");
    }
}

#[test]
fn the_encoder_device_class_is_in_the_files_the_doc_names_and_no_other() {
    let doc = bullet("An EtherCAT device class");
    assert!(doc.contains("the incremental encoder terminal is the example"), "{doc}");
    // `tests/ecat_<class>.rs` is the encoder's test.
    let mut named = paths_named(&doc);
    named.push("tests/ecat_encoder.rs".into());
    let found = files_naming(&["IncrementalEncoder", "SimEncoder", "EncoderScaling", "DeviceClassChoice::Encoder", "profiles::encoder", "encoder::"]);
    check_only_named("the encoder class", &found, &named, &["crates/morc-ecat/src/devices/encoder.rs", "crates/morc-ecat-sim/src/encoder.rs"]);
    // A lab's own class is the one file the doc names, and it runs (tests/ecat_lab_class.rs).
    assert!(doc.contains("`tests/ecat_lab_class.rs`") && repo().join("tests/ecat_lab_class.rs").exists(), "{doc}");
    // Its wire profile is where step 1 says.
    let profiles = std::fs::read_to_string(repo().join("crates/morc-ecat-wire/src/profiles.rs")).unwrap();
    assert!(profiles.contains("pub mod encoder"), "the encoder's wire profile");
}

#[test]
fn a_native_block_is_its_file_and_its_registration() {
    let doc = bullet("A native component kind");
    let mut named = paths_named(&doc);
    // `blocks::register` is in the folder's mod.rs.
    named.push("crates/morc-kernel/src/blocks/mod.rs".into());
    check_only_named("the rate limiter block", &files_naming(&["RateLimiter"]), &named, &["crates/morc-kernel/src/blocks/nonlinear.rs"]);
}

#[test]
fn a_robot_kind_is_its_file_and_its_line_in_kinds() {
    let doc = bullet("A robot's component kind");
    let mut named = paths_named(&doc);
    named.push("crates/morc-robot/src/components/mod.rs".into());
    assert!(doc.contains("`KINDS`"), "{doc}");
    check_only_named("the tracker kind", &files_naming(&["Tracker", "tracker::", "\"tracker\""]), &named, &["crates/morc-robot/src/components/tracker.rs"]);
}

/// A lab's folder: its robot (`robots/two_link.lua`) and its library with one Lua component kind
/// (`labkit/components/lowpass.lua`), written as the doc says, and a program using both.
fn lab_folder() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("morc-architecture-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for d in ["robots", "libs/labkit/components"] {
        std::fs::create_dir_all(dir.join(d)).unwrap();
    }
    std::fs::write(
        dir.join("robots/two_link.lua"),
        r#"-- A planar two-link arm: a robot is a Lua file in robots/ (docs/robots.md).
return morc.robot {
  name = "two-link",
  model = morc.model.dh { name = "two-link", convention = "standard",
    { a = 300, alpha = 0, d = 0, mass = 2, com = { -150, 0, 0 }, inertia = { 0.01, 0.02, 0.02, 0, 0, 0 } },
    { a = 200, alpha = 0, d = 0, mass = 1, com = { -100, 0, 0 }, inertia = { 0.005, 0.01, 0.01, 0, 0, 0 } } },
  joints = {
    { "j1", limits = { pos = { -170, 170 }, vel = 90, acc = 300, torque = 50 } },
    { "j2", limits = { pos = { -170, 170 }, vel = 90, acc = 300, torque = 20 } },
  },
}
"#,
    )
    .unwrap();
    std::fs::write(dir.join("libs/labkit/morc-lib.lua"), "return { name = \"labkit\", version = \"0.1.0\", morc = \">=0.1.0\", depends = {}, capabilities = {}, doc = \"a lab's kit\" }\n").unwrap();
    std::fs::write(
        dir.join("libs/labkit/components/lowpass.lua"),
        r#"-- A first-order low-pass per element: a component kind in Lua is a library's components/NAME.lua.
return morc.register(morc.component {
  name = "lowpass",
  doc = "first-order low-pass y += (u − y)·h/(T + h) per element",
  inputs = { "u[n]" },
  outputs = { "y[n]" },
  params = { n = 2, T = 0.05 },
  init = function(self, out) for i = 1, self.n do out.y[i] = 0 end end,
  step = function(self, inp, out)
    local a = self.period / (self.T + self.period)
    for i = 1, self.n do out.y[i] = out.y[i] + (inp.u[i] - out.y[i]) * a end
  end,
})
"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("program.lua"),
        r#"local r = require "robots.two_link"
morc.use_robot(r)
morc.lib.load "labkit"
local a = morc.assembly { "walk-through" }
r:add(a, "move", "ptp", { target = { 30, -45 }, settle = 0.3 })
a:connect("robot.q", "move.start"); a:connect("move.q", "robot.q_cmd")
a:add("lp", "labkit.lowpass", { n = 2, T = 0.02 })
a:connect("robot.q", "lp.u")
a:add("p", "probe", { n = 2 }); a:connect("lp.y", "p.u")
local res = morc.engine:run(a)
assert(res.ok, res.reason)
local y = res.data["p.u"]
print(("two-link at %.3f°, %.3f° (filtered)"):format(math.deg(y[#y - 1]), math.deg(y[#y])))
"#,
    )
    .unwrap();
    dir
}

#[test]
fn a_robot_and_a_lua_component_kind_are_added_as_the_doc_says_and_run() {
    assert!(bullet("A robot").contains("a Lua file in `robots/`"));
    assert!(bullet("A component kind in Lua").contains("a library's `components/NAME.lua`"));
    let dir = lab_folder();
    let out = Command::new(env!("CARGO_BIN_EXE_morc")).current_dir(&dir).env("MORC_PATH", dir.join("libs")).args(["run", "program.lua"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    // The PTP arrived and the lab's filter followed it (T = 20 ms, the run settles well after).
    let last = stdout.lines().last().unwrap_or_default();
    let angles: Vec<f64> = last.trim_start_matches("two-link at ").trim_end_matches(" (filtered)").split(", ").map(|a| a.trim_end_matches('°').parse().unwrap()).collect();
    assert!((angles[0] - 30.0).abs() < 0.05 && (angles[1] + 45.0).abs() < 0.05, "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}
