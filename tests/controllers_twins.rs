//! The controllers library (stdlib/controllers) as a person runs it: `morc test
//! stdlib/controllers` runs its Lua controllers beside their native twins in the same assembly
//! on the simulated UR5 (the elastic feed-forward on the elastic KR 16) and checks they agree to
//! 1e-12 at every step (tests/twins.lua there).

use std::path::Path;
use std::process::Command;

#[test]
fn lua_controllers_equal_their_rust_twins_in_the_same_run() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("stdlib/controllers");
    let out = Command::new(env!("CARGO_BIN_EXE_morc")).env_remove("MORC_PATH").env_remove("MORC_LIB").arg("test").arg(&dir).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && text.contains("4 passed, 0 failed"), "{text}");
    // The three laws were compared over the whole run, and the figures are printed.
    assert!(text.contains("ppi: 12000 samples"), "{text}");
    assert!(text.contains("cartesian_velocity: ") && text.contains(" samples, largest |qd|"), "{text}");
    assert!(text.contains("elastic_feed_forward: ") && text.contains("|lua − rust| 0"), "{text}");
}

/// `morc bench lua` runs the library's Cartesian law and elastic feed-forward in Lua and natively
/// before the gain, whose
/// ratio stays the last line printed. Not timed: only what is printed is checked.
#[test]
fn bench_lua_runs_the_cartesian_law_and_keeps_the_ratio_last() {
    let out = Command::new(env!("CARGO_BIN_EXE_morc"))
        .env_remove("MORC_PATH")
        .env_remove("MORC_LIB")
        .args(["--no-rt", "bench", "lua", "--seconds", "0.2"])
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && !stderr.contains("morc bench lua:"), "{stdout}{stderr}");
    for line in ["native cart. step mean", "Lua cart.    step mean", "native elast. step mean", "Lua elast.   step mean"] {
        assert!(stdout.lines().any(|l| l.starts_with(line)), "no '{line}' in:\n{stdout}");
    }
    let last = stdout.lines().last().unwrap_or("");
    assert!(last.starts_with("lua/native step ratio: ") && last.contains("(lua mean "), "last line: {last}\n{stdout}");
}
