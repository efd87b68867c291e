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
    assert!(out.status.success() && text.contains("4 passed, 0 failed"), "{text}");
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
    if Command::new("git").arg("--version").output().is_err() {
        eprintln!("git not available: skipping install from a git URL");
        return;
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
