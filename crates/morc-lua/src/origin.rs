//! Where in a script the current call comes from, so that errors point there.

use mlua::Lua;

use morc_kernel::Origin;

/// The file and line of the Lua code that called the running Rust function.
pub fn caller(lua: &Lua) -> Origin {
    // Level 0 is the Rust function itself; level 1 its Lua caller. Skip frames without a
    // line (C functions such as pcall), and morc's own Lua (lua/morc/: the skill runner, the
    // prelude) when the user's line is further out: a message names the user's line, not
    // lua/morc/skill.lua's.
    let mut first = None;
    for level in 1..16 {
        let Some(debug) = lua.inspect_stack(level) else { break };
        let line = debug.curr_line();
        if line > 0 {
            let source = debug.source();
            let file = source.short_src.map(|s| s.to_string()).unwrap_or_default();
            let origin = Origin { file, line: line as u32 };
            if !origin.file.starts_with(MORC_LUA) {
                return origin;
            }
            first.get_or_insert(origin);
        }
    }
    first.unwrap_or_default()
}

/// Where morc's own Lua code is loaded from (its chunk names).
const MORC_LUA: &str = "lua/morc/";
