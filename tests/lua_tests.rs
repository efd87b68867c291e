//! Runs every Lua test file in tests/lua/ on a fresh engine (virtual clock,
//! simulated axes). Each file uses `morc.testing` and returns its summary.
//! The runner is `morc_lua::testing`, the same one `morc test DIR` uses.

mod fmu_support;

use std::path::Path;

#[test]
fn lua_tests() {
    // tests/lua/fmus.lua loads morc's exported FMUs from here.
    std::env::set_var("MORC_TEST_FMUS", fmu_support::exported());
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lua");
    let files = morc_lua::testing::test_files(&dir).unwrap();
    assert!(!files.is_empty(), "no Lua tests in {}", dir.display());
    let mut failed = Vec::new();
    for f in &files {
        let r = morc_lua::testing::run_file(f, &[]);
        if r.failed == 0 {
            eprintln!("{}: {}", f.display(), r.report.lines().next().unwrap_or(""));
        } else {
            failed.push(format!("{}: {}", f.display(), r.report));
        }
    }
    assert!(failed.is_empty(), "Lua tests failed:\n{}", failed.join("\n\n"));
}
