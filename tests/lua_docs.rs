//! docs/lua-api.md is generated from the doc strings; this test fails when it
//! differs (regenerate: `MORC_BLESS=1 cargo test --test lua_docs`) or when a
//! public Lua function has no doc string.

use std::path::Path;

#[test]
fn lua_api_reference_is_up_to_date() {
    let (markdown, missing) = morc_lua::docs::markdown().unwrap();
    assert!(missing.is_empty(), "public Lua functions without a doc string (add morc.doc(f, \"…\")): {}", missing.join(", "));
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/lua-api.md");
    if std::env::var_os("MORC_BLESS").is_some() {
        std::fs::write(&path, &markdown).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != markdown {
        let line = committed.lines().zip(markdown.lines()).position(|(a, b)| a != b).map_or(committed.lines().count().min(markdown.lines().count()), |i| i) + 1;
        panic!(
            "docs/lua-api.md is out of date with the doc strings (first difference at line {line}).\n\
             Regenerate it: MORC_BLESS=1 cargo test --test lua_docs"
        );
    }
}
