//! Where in a script the current call comes from, so that errors point there.

use mlua::Lua;

use morc_kernel::Origin;

/// The file and line of the Lua code that called the running Rust function.
pub fn caller(lua: &Lua) -> Origin {
    // Level 0 is the Rust function itself; level 1 its Lua caller. Skip
    // frames without a line (C functions such as pcall).
    for level in 1..8 {
        let Some(debug) = lua.inspect_stack(level) else { break };
        let line = debug.curr_line();
        if line > 0 {
            let source = debug.source();
            let file = source.short_src.map(|s| s.to_string()).unwrap_or_default();
            return Origin { file, line: line as u32 };
        }
    }
    Origin::default()
}
