//! Libraries end to end: `morc test` on the example library, version conflicts
//! and missing dependencies as clear errors, `morc lib new | install | list | info`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn morc() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_morc"));
    c.env_remove("MORC_PATH").env_remove("MORC_LIB");
    c
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn manifest(dir: &Path, name: &str, version: &str, morc: &str, depends: &str) {
    write(&dir.join(name).join("morc-lib.lua"), &format!("return {{ name = \"{name}\", version = \"{version}\", morc = \"{morc}\", depends = {{ {depends} }}, doc = \"test library\" }}\n"));
}

/// Runs a Lua program with `MORC_PATH=libs`; returns (success, stdout + stderr).
fn run_lua(libs: &Path, code: &str) -> (bool, String) {
    let prog = libs.join("prog.lua");
    write(&prog, code);
    let out = morc().env("MORC_PATH", libs).arg("run").arg(&prog).output().unwrap();
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn morc_test_runs_the_example_library() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/libs/sweep");
    let out = morc().arg("test").arg(&dir).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    assert!(text.contains("5 passed, 0 failed"), "{text}");
}

#[test]
fn morc_test_runs_the_motion_library() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("skills/motion");
    let out = morc().arg("test").arg(&dir).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    // The summary of all its files: every test passed (however many there are).
    assert!(out.status.success() && text.lines().last().is_some_and(|l| l.ends_with(" passed, 0 failed") && !l.starts_with("0 ")), "{text}");
}

#[test]
fn morc_test_runs_the_calibrate_library() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("skills/calibrate");
    let out = morc().arg("test").arg(&dir).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("3 passed, 0 failed"), "{text}");
}

#[test]
fn morc_test_fails_with_exit_1_and_names_the_failure() {
    let libs = scratch("lib-failing");
    manifest(&libs, "failing", "0.1.0", ">=0.1", "");
    write(&libs.join("failing/tests/t.lua"), "local T = require 'morc.testing'\nT.test('one', function() T.eq(1, 2, 'x') end)\nT.test('two', function() end)\nreturn T.summary()\n");
    let out = morc().arg("test").arg(libs.join("failing")).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("1 passed, 1 failed") && text.contains("t.lua:2: x = 1, expected 2"), "{text}");
}

/// A test file that declares no test (all commented out, say) proves nothing: it fails, naming
/// the file, where it passed with "0 passed" beside the library's real tests.
#[test]
fn morc_test_fails_a_file_that_declares_no_test() {
    let libs = scratch("lib-empty-tests");
    manifest(&libs, "empty", "0.1.0", ">=0.1", "");
    write(&libs.join("empty/tests/a.lua"), "local T = require 'morc.testing'\nT.test('one', function() T.eq(1, 1) end)\nreturn T.summary()\n");
    write(&libs.join("empty/tests/b.lua"), "local T = require 'morc.testing'\n-- T.test('one', function() end)\nreturn T.summary()\n");
    let out = morc().arg("test").arg(libs.join("empty")).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("a.lua: 1 passed, 0 failed"), "{text}");
    assert!(text.contains("b.lua: FAILED") && text.contains("b.lua: declares no test: add T.test("), "{text}");
    assert!(text.trim_end().ends_with("1 passed, 1 failed"), "{text}");
}

#[test]
fn version_conflict_and_missing_dependency_are_clear_errors() {
    let libs = scratch("lib-versions");
    manifest(&libs, "base", "1.2.0", ">=0.1", "");
    manifest(&libs, "needs_new_base", "1.0.0", ">=0.1", "base = \">=2.0\"");
    manifest(&libs, "needs_ghost", "1.0.0", ">=0.1", "ghost = \"^1.0\"");
    manifest(&libs, "future", "1.0.0", ">=9.0", "");
    manifest(&libs, "good", "1.0.0", "^0.1", "base = \"^1.1\"");

    let (ok, text) = run_lua(&libs, "morc.lib.load 'needs_new_base'");
    assert!(!ok);
    assert!(text.contains("version conflict") && text.contains("needs_new_base/morc-lib.lua needs library 'base' >=2.0, but the one found is 1.2.0"), "{text}");

    let (ok, text) = run_lua(&libs, "morc.lib.load 'base'\nmorc.lib.load 'needs_new_base'");
    assert!(!ok);
    assert!(text.contains("but base 1.2.0 is already loaded"), "{text}");

    let (ok, text) = run_lua(&libs, "require 'lib.needs_ghost'");
    assert!(!ok);
    assert!(text.contains("missing dependency") && text.contains("needs library 'ghost' ^1.0, which is not in the library path") && text.contains("morc lib install"), "{text}");

    let (ok, text) = run_lua(&libs, "morc.lib.load 'future'");
    assert!(!ok);
    assert!(text.contains("future/morc-lib.lua: library 'future' 1.0.0 needs morc >=9.0, this is morc 0.1.0"), "{text}");

    let (ok, text) = run_lua(&libs, "morc.lib.load 'nowhere'");
    assert!(!ok && text.contains("library 'nowhere' not found in the library path"), "{text}");

    let (ok, text) = run_lua(&libs, "local g = morc.lib.load 'good'\nprint(g.name, g.version, morc.lib.loaded().base.version)");
    assert!(ok && text.contains("good\t1.0.0\t1.2.0"), "{text}");
}

#[test]
fn lib_new_install_list_info() {
    let work = scratch("lib-cli");
    let user = work.join("user-lib");
    let out = morc().arg("lib").arg("new").arg("grasp").arg("--dir").arg(&work).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The new library's own test passes as generated.
    let out = morc().arg("test").arg(work.join("grasp")).output().unwrap();
    assert!(out.status.success() && String::from_utf8_lossy(&out.stdout).contains("1 passed, 0 failed"), "{}", String::from_utf8_lossy(&out.stdout));

    // From a folder, then again only with --force.
    let install = |src: &Path, force: bool| {
        let mut c = morc();
        c.env("MORC_LIB", &user).arg("lib").arg("install");
        if force {
            c.arg("--force");
        }
        c.arg(src).output().unwrap()
    };
    assert!(install(&work.join("grasp"), false).status.success());
    let again = install(&work.join("grasp"), false);
    assert!(!again.status.success() && String::from_utf8_lossy(&again.stderr).contains("--force"));

    // From a .tar.gz (made by the system tar) and a .zip of the example library.
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/libs");
    let tgz = work.join("sweep.tar.gz");
    assert!(Command::new("tar").arg("czf").arg(&tgz).arg("-C").arg(&example).arg("sweep").status().unwrap().success());
    let out = install(&tgz, false);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(user.join("sweep/skills/sweep.lua").exists());
    let zip_path = work.join("grasp.zip");
    {
        let mut zip = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
        let opts: zip::write::SimpleFileOptions = Default::default();
        zip.start_file("grasp/morc-lib.lua", opts).unwrap();
        std::io::Write::write_all(&mut zip, b"return { name = \"grasp\", version = \"0.2.0\", morc = \">=0.1\" }\n").unwrap();
        zip.finish().unwrap();
    }
    assert!(install(&zip_path, true).status.success());

    let out = morc().env("MORC_LIB", &user).arg("lib").arg("list").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("grasp            0.2.0") && text.contains("sweep            1.0.0"), "{text}");
    let out = morc().env("MORC_LIB", &user).arg("lib").arg("info").arg("sweep").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("sweep 1.0.0") && text.contains("skills   sweep.lua") && text.contains("Frequency sweeps"), "{text}");

    // A zip entry escaping the archive is refused.
    let evil = work.join("evil.zip");
    {
        let mut zip = zip::ZipWriter::new(std::fs::File::create(&evil).unwrap());
        zip.start_file("../escape/morc-lib.lua", zip::write::SimpleFileOptions::default()).unwrap();
        zip.finish().unwrap();
    }
    let out = install(&evil, false);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("points outside the archive"));
}

#[test]
fn lib_install_from_git() {
    // Never a silent pass (as tests/ecat_veth.rs's policy): without git the test fails saying so.
    if let Err(e) = Command::new("git").arg("--version").output() {
        panic!("MISSING TOOL: cannot run git ({e}): install it (apt-get install git, or scripts/setup --test)");
    }
    let work = scratch("lib-git");
    let repo = work.join("repo");
    manifest(&work, "repo", "3.1.0", ">=0.1", "");
    let git = |args: &[&str]| assert!(Command::new("git").args(args).current_dir(&repo).status().unwrap().success());
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "lib"]);
    let url = format!("file://{}", repo.display());
    let out = morc().env("MORC_LIB", work.join("user")).arg("lib").arg("install").arg(&url).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(work.join("user/repo/morc-lib.lua").exists());
}

/// A library shared as a release archive on a web server: `morc lib install https://…/x.tar.gz`
/// fetches it (curl) and installs it as from a local archive; a missing one says what failed.
#[test]
fn lib_install_from_an_archive_url() {
    let work = scratch("lib-url");
    let served = work.join("served");
    std::fs::create_dir_all(&served).unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/libs");
    assert!(Command::new("tar").arg("czf").arg(served.join("sweep.tar.gz")).arg("-C").arg(&example).arg("sweep").status().unwrap().success());
    // A real HTTP server on a free port (it prints the port it took).
    let mut server = Command::new("python3")
        .args(["-u", "-m", "http.server", "0", "--bind", "127.0.0.1"])
        .current_dir(&served)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("python3 (scripts/setup installs it)");
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(server.stdout.take().unwrap()), &mut line).unwrap();
    let port = line.split_whitespace().skip_while(|w| *w != "port").nth(1).unwrap_or_else(|| panic!("no port in {line:?}")).to_string();
    let install = |name: &str| morc().env("MORC_LIB", work.join("user")).args(["lib", "install"]).arg(format!("http://127.0.0.1:{port}/{name}")).output().unwrap();
    let out = install("sweep.tar.gz");
    let missing = install("missing.tar.gz");
    let _ = server.kill();
    let _ = server.wait();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(work.join("user/sweep/skills/sweep.lua").exists());
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(!missing.status.success() && err.contains("downloading http://127.0.0.1:") && err.contains("404"), "{err}");
}

/// A library's code that tries every way out, one function each (lib.NAME.probe). `outside`
/// is a file outside the library's folder.
const PROBE: &str = r#"
local outside = ...
local P = {}
P.io_open_outside = function() local f, e = io.open(OUTSIDE) return f, e end
P.io_lines_outside = function() for l in io.lines(OUTSIDE) do end end
P.io_write_own_folder = function() return io.open(morc.lib.find(LIB) .. "/new.txt", "w") end
P.os_remove = function() return os.remove(OUTSIDE) end
P.loadfile_outside = function() return loadfile(OUTSIDE) end
P.os_execute = function() return os.execute("true") end
P.io_popen = function() return io.popen("true") end
P.os_exit = function() return os.exit(0) end
P.load_dumped = function() return load(string.dump(function() return 1 end)) end
P.load_mode_b = function() return load("return 1", "x", "b") end
P.package_loadlib = function() return package.loadlib("libc.so.6", "*") end
P.require_debug = function() return require "debug" end
P.rawget_G_io = function() return rawget(_G, "io").open(OUTSIDE) end
P.require_io = function() return require("io").open(OUTSIDE) end
P.require_os = function() return require("os").execute("true") end
P.require_G = function() return require("_G").os.execute("true") end
P.load_with_G = function() return load("return os", "x", "t", _G)().execute("true") end
P.system_module = function() return require "helper_outside" end
P.start_engine_bus = function() return morc.start_engine { bus = "sim" } end
P.engine_bus = function() return morc.engine.bus end
P.coroutine_wrap_engine = function() return coroutine.wrap(morc.start_engine)({ bus = "sim" }) end
P.tail_call = function() return io.open(OUTSIDE) end
P.fmu = function() return morc.fmu(OUTSIDE) end
P.plot = function() return plot(OUTSIDE, nil, OUTSIDE .. ".png") end
P.component = function()
  local k = morc.component { name = "sneaky", outputs = { "y" }, init = function(self, out) os.execute("true") end, step = function(self, inp, out, t) out.y = 1 end }
  local a = morc.assembly { "sneaky", duration = 0.01 }
  a:add("s", k)
  local r = morc.engine:run(a)
  error(tostring(r.reason or r.report or r), 0)
end
P.set_record_dir = function() morc.record_dir = "/tmp" end
P.set_bus = function() morc.bus = "eth0" end
P.record_to_path = function()
  local a = morc.assembly { "r", duration = 0.01 }
  a:record { "robot.q", path = OUTSIDE .. ".h5" }
end
P.nested_library = function()
  morc.lib.load(morc.lib.find(LIB) .. "/evil")
  return require("lib.evil.run").go()
end
-- Escapes that must not error but must not reach the program either.
P.string_metatable = function() getmetatable("").__index.upper = function() return "pwned" end end
P.no_debug = function() return debug == nil and rawget(_G, "debug") == nil end
P.read_own = function() return io.open(morc.lib.find(LIB) .. "/data.txt"):read("l") end
return P
"#;

fn probe_library(libs: &Path, name: &str, caps: &str, outside: &Path) {
    // A library it ships in a folder of its own, declaring everything.
    write(&libs.join(name).join("evil/morc-lib.lua"), "return { name = \"evil\", version = \"1.0.0\", capabilities = { \"io\", \"process\", \"network\", \"bus\", \"binary\" } }\n");
    write(&libs.join(name).join("evil/run.lua"), "return { go = function() return os.execute('true') end }\n");
    write(&libs.join(name).join("morc-lib.lua"), &format!("return {{ name = \"{name}\", version = \"1.0.0\", capabilities = {{ {caps} }}, doc = \"probes\" }}\n"));
    write(&libs.join(name).join("probe.lua"), &PROBE.replace("OUTSIDE", &format!("{:?}", outside.display().to_string())).replace("LIB", &format!("{name:?}")));
}

/// Runs each probe of library `name` in a program; returns probe → (ok, message).
fn run_probes(libs: &Path, name: &str, probes: &[&str]) -> Vec<(String, bool, String)> {
    let list: Vec<String> = probes.iter().map(|p| format!("{p:?}")).collect();
    let code = format!(
        "local P = require 'lib.{name}.probe'\nfor _, k in ipairs {{ {} }} do\n  local ok, err = pcall(P[k])\n  print('PROBE', k, ok, (tostring(err):gsub('\\n', ' ')))\nend\nprint('UPPER', ('a'):upper())\n",
        list.join(", ")
    );
    let (_, text) = run_lua(libs, &code);
    let mut out = Vec::new();
    for p in probes {
        let line = text.lines().find(|l| l.starts_with(&format!("PROBE\t{p}\t"))).unwrap_or_else(|| panic!("no result for {p}:\n{text}"));
        let mut parts = line.splitn(4, '\t').skip(2);
        let ok = parts.next() == Some("true");
        out.push((p.to_string(), ok, parts.next().unwrap_or("").to_string()));
    }
    assert!(text.contains("UPPER\tA"), "a library changed the program's string functions:\n{text}");
    out
}

const FORBIDDEN: [(&str, &str); 25] = [
    ("io_open_outside", "io"),
    ("io_lines_outside", "io"),
    ("io_write_own_folder", "io"),
    ("os_remove", "io"),
    ("loadfile_outside", "io"),
    ("os_execute", "process"),
    ("io_popen", "process"),
    ("os_exit", "process"),
    ("load_dumped", "binary"),
    ("load_mode_b", "binary"),
    ("package_loadlib", "binary"),
    ("rawget_G_io", "io"),
    ("require_io", "io"),
    ("require_os", "process"),
    ("require_G", "process"),
    ("load_with_G", "process"),
    ("system_module", "io"),
    ("start_engine_bus", "bus"),
    ("engine_bus", "bus"),
    ("coroutine_wrap_engine", "bus"),
    ("tail_call", "io"),
    ("fmu", "binary"),
    ("plot", "io"),
    ("component", "process"),
    ("require_debug", "debug"),
];

/// Ways out that are refused with their own words.
const OTHER_REFUSALS: [(&str, &str); 4] = [
    ("set_record_dir", "library 'stranger' may not change morc.record_dir (morc's settings and functions belong to the program)"),
    ("set_bus", "library 'stranger' may not change morc.bus"),
    ("record_to_path", "library 'stranger' may not use io outside its folder (a:record to "),
    ("nested_library", "library 'evil' may not start a process (os.execute \"true\") (capability 'process': it was loaded from a folder by library 'stranger', which does not have it either)"),
];

#[test]
fn a_library_without_capabilities_is_refused_each_way_out() {
    let libs = scratch("lib-sandbox");
    let outside = libs.join("outside.txt");
    write(&outside, "secret\n");
    // A module outside any library, on the search path: it runs with the requiring library's rights.
    write(&libs.join("helper_outside.lua"), &format!("return io.open({:?})\n", outside.display().to_string()));
    probe_library(&libs, "stranger", "", &outside);
    write(&libs.join("stranger/data.txt"), "own data\n");
    let names: Vec<&str> = FORBIDDEN.iter().map(|(p, _)| *p).chain(["string_metatable", "no_debug", "read_own"]).chain(OTHER_REFUSALS.iter().map(|(p, _)| *p)).collect();
    let results = run_probes(&libs, "stranger", &names);
    for ((probe, ok, msg), (_, cap)) in results.iter().zip(FORBIDDEN.iter()) {
        assert!(!ok, "{probe} was allowed: {msg}");
        if *cap == "debug" {
            assert!(msg.contains("library 'stranger' may not use the debug library"), "{probe}: {msg}");
            continue;
        }
        assert!(msg.contains("library 'stranger' may not") && msg.contains(&format!("capability '{cap}' not declared in its manifest")) && msg.contains("stranger/morc-lib.lua"), "{probe}: {msg}");
    }
    // The error points at the library's line that tried.
    assert!(results[0].2.contains("stranger/probe.lua:4: library 'stranger' may not use io outside its folder (io.open"), "{}", results[0].2);
    let (_, ok, msg) = &results[FORBIDDEN.len()];
    assert!(*ok, "string_metatable: {msg}");
    let (_, ok, msg) = &results[FORBIDDEN.len() + 1];
    assert!(*ok && msg == "true", "no_debug: {msg}");
    let (_, ok, msg) = &results[FORBIDDEN.len() + 2];
    assert!(*ok && msg == "own data", "its own folder it may read: {msg}");
    for ((probe, ok, msg), (_, expect)) in results[FORBIDDEN.len() + 3..].iter().zip(OTHER_REFUSALS.iter()) {
        assert!(!ok && msg.contains(expect), "{probe}: {msg}");
    }
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "secret\n");

    // The program itself keeps every power.
    let (ok, text) = run_lua(&libs, "local lib = morc.lib.load 'stranger'\nlocal P = require 'lib.stranger.probe'\nprint(load('return io.open(...):read(\"l\")', 'x', 't', _G) ~= nil)\nprint(require('lib.stranger.probe') == P)\nprint(io.open(lib.dir .. '/data.txt'):read('l'), os.execute('true'), debug.getinfo(1).currentline)");
    assert!(ok && text.contains("true\ntrue\nown data\ttrue\t5"), "{text}");
}

#[test]
fn a_library_granted_its_capabilities_may_use_them() {
    let libs = scratch("lib-sandbox-granted");
    let outside = libs.join("outside.txt");
    write(&outside, "secret\n");
    write(&libs.join("helper_outside.lua"), &format!("return io.open({:?})\n", outside.display().to_string()));
    // Used from MORC_PATH (not installed): it has what it declares.
    probe_library(&libs, "trusted", "\"io\", \"process\", \"binary\", \"bus\"", &outside);
    let results = run_probes(&libs, "trusted", &["io_open_outside", "io_lines_outside", "os_execute", "io_popen", "load_dumped", "load_mode_b", "system_module", "start_engine_bus", "require_debug"]);
    for (probe, ok, msg) in &results[..8] {
        assert!(ok, "{probe} refused although declared: {msg}");
    }
    assert!(!results[8].1, "debug is granted by no capability");

    // Installed with --grant: what was granted; a declared capability not granted is refused
    // with the way to grant it. Install refuses one whose capabilities were not granted.
    let user = libs.join("user-lib");
    let src = libs.join("src");
    probe_library(&src, "acme-grip", "\"io\", \"process\"", &outside);
    let install = |grant: Option<&str>| {
        let mut c = morc();
        c.env("MORC_LIB", &user).args(["lib", "install", "--force"]);
        if let Some(g) = grant {
            c.args(["--grant", g]);
        }
        c.arg(src.join("acme-grip")).output().unwrap()
    };
    let out = install(None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("library 'acme-grip' asks for capabilities not granted: io (use io outside its folder")
            && err.contains("process (start processes")
            && err.contains("morc lib install --grant io,process"),
        "{err}"
    );
    assert!(!user.join("acme-grip").exists(), "refused, yet installed");
    let out = install(Some("io,process"));
    assert!(out.status.success() && String::from_utf8_lossy(&out.stdout).contains("granted io, process"), "{}", String::from_utf8_lossy(&out.stderr));
    let run_installed = |code: &str| {
        write(&libs.join("prog2.lua"), code);
        let out = morc().env("MORC_LIB", &user).arg("run").arg(libs.join("prog2.lua")).output().unwrap();
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
    };
    let text = run_installed("local P = require 'lib.acme-grip.probe'\nprint(pcall(P.io_open_outside))\nprint(pcall(P.os_execute))\nprint(pcall(P.load_dumped))");
    assert!(text.contains("true\tfile (") && text.contains("true\ttrue\texit\t0"), "{text}");
    assert!(text.contains("capability 'binary' not declared in its manifest") && text.contains("declare it and reinstall with --grant binary"), "{text}");
    // A grant recorded for less than it declares (as an older install would leave it).
    std::fs::write(user.join(".grants/acme-grip"), "io").unwrap();
    let text = run_installed("local P = require 'lib.acme-grip.probe'\nprint(pcall(P.os_execute))");
    assert!(
        text.contains("library 'acme-grip' may not start a process")
            && text.contains("capability 'process' declared in its manifest")
            && text.contains("not granted when it was installed")
            && text.contains("--grant process"),
        "{text}"
    );
    let out = morc().env("MORC_LIB", &user).args(["lib", "info", "acme-grip"]).output().unwrap();
    let info = String::from_utf8_lossy(&out.stdout);
    assert!(info.contains("may      io       use io outside its folder") && info.contains("[granted]") && info.contains("process  start processes") && info.contains("NOT granted"), "{info}");
    let out = morc().args(["lib", "info", "motion"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("may      run skills on the engine and read its own folder; nothing more"), "{}", String::from_utf8_lossy(&out.stdout));
}
