//! `morc test [DIR]`: runs a library's Lua tests on the virtual clock.

use std::path::Path;

use super::exit;

pub fn main(dir: &Path) -> i32 {
    let results = match morc_lua::testing::run_library(dir) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("morc test: {e}");
            return exit::USAGE;
        }
    };
    let (mut passed, mut failed) = (0, 0);
    for r in &results {
        passed += r.passed;
        failed += r.failed;
        let first = r.report.lines().next().unwrap_or("");
        if r.failed == 0 {
            println!("{}: {first}", r.file.display());
        } else {
            println!("{}: FAILED\n{}", r.file.display(), r.report);
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        exit::OK
    } else {
        exit::SCRIPT_ERROR
    }
}
