//! `morc run prog.lua [args]`: a robot program, run to its end on the main thread
//! (never the engine's). Errors print with file:line and a Lua traceback.

use std::path::Path;

use mlua::{Function, Lua, MultiValue};

use super::{exit, exit_code, lua_with_engine, LuaSetup};
use morc_kernel::EngineConfig;

pub fn main(config: EngineConfig, setup: &LuaSetup, file: &Path, args: &[String]) -> i32 {
    let lua = match lua_with_engine(config, setup) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("morc: {e}");
            return exit::FAULT;
        }
    };
    // Ctrl-C cancels the running assembly (the robot holds) and ends the program.
    if let Err(e) = super::interrupt::install(&lua) {
        log::warn!("{e}");
    }
    let result = run_file(&lua, file, args);
    if result.is_ok() && morc_kernel::runs_in_progress() > 0 {
        // Leaving stops them (the engines brake and close their recordings): say so, since
        // the program asked for more than it got.
        eprintln!("morc: {} ended with a run still going (started with engine:start): it is stopped now and the robot holds; to let it finish, end the program with h:wait()", file.display());
    }
    // The engine holds the robot when no assembly runs; dropping the state stops it.
    match result {
        Err(e) if morc_lua::interrupt::pending() || super::interrupt::terminating().is_some() => {
            // Where it stopped is enough: the traceback of an interruption says nothing new.
            eprintln!("morc: {}", morc_lua::interrupt::report(&e, &file.display().to_string()));
            super::interrupt::terminating().map_or(exit::INTERRUPTED, |signal| 128 + signal)
        }
        Err(e) => {
            eprintln!("morc: {e}");
            exit_code(&lua, true)
        }
        Ok(()) => match exit_code(&lua, false) {
            // A skill failed and the program went on as if it had not: say so, as `morc check` does.
            exit::OK => {
                let unread = super::check::unread_failures(&lua).unwrap_or_default();
                for failure in &unread {
                    eprintln!("morc: {failure}\n  ({})", super::check::UNREAD);
                }
                if unread.is_empty() {
                    exit::OK
                } else {
                    exit::UNHANDLED_FAILURE
                }
            }
            code => code,
        },
    }
}

/// Loads and runs `file` with `arg` set as the standalone lua interpreter does.
/// The error text has the failing file:line and a traceback.
pub fn run_file(lua: &Lua, file: &Path, args: &[String]) -> Result<(), String> {
    let setup = || -> mlua::Result<Function> {
        let arg = lua.create_sequence_from(args.iter().cloned())?;
        arg.set(0, file.display().to_string())?;
        lua.globals().set("arg", arg)?;
        let code = std::fs::read(file).map_err(|e| mlua::Error::runtime(format!("cannot read {}: {e}", file.display())))?;
        lua.load(code).set_name(format!("@{}", file.display())).into_function()
    };
    let chunk = setup().map_err(|e| error_text(&e))?;
    call_with_traceback(lua, &chunk, args).map(|_| ())
}

/// Calls `f` under xpcall with a handler that adds the traceback where the
/// error happened (mlua's own error gives it only for errors raised in Rust).
pub fn call_with_traceback(lua: &Lua, f: &Function, args: &[String]) -> Result<MultiValue, String> {
    let wrapper: Function = lua
        .load(
            r#"local f = ...
            return function(...)
              return xpcall(f, function(e)
                if type(e) ~= "string" then e = tostring(e) end
                if e:find("stack traceback:", 1, true) then return e end
                return debug.traceback(e, 2)
              end, ...)
            end"#,
        )
        .set_name("=morc")
        .call(f.clone())
        .map_err(|e| error_text(&e))?;
    let args = args.iter().map(|a| lua.create_string(a).map(mlua::Value::String)).collect::<mlua::Result<MultiValue>>().map_err(|e| error_text(&e))?;
    let mut values: MultiValue = wrapper.call(args).map_err(|e| error_text(&e))?;
    let ok = matches!(values.pop_front(), Some(mlua::Value::Boolean(true)));
    if ok {
        Ok(values)
    } else {
        let message = values.pop_front().map(|v| v.to_string().unwrap_or_else(|_| "error".into())).unwrap_or_default();
        Err(without_wrapper(&message))
    }
}

/// The error text without this wrapper's own traceback frames and mlua's
/// "runtime error: " prefix (errors raised in Rust).
fn without_wrapper(text: &str) -> String {
    let text = text.strip_prefix("runtime error: ").unwrap_or(text);
    text.lines().filter(|l| *l != "\t[C]: in function 'xpcall'" && !l.starts_with("\tmorc:")).collect::<Vec<_>>().join("\n")
}

/// An mlua error as a person reads it: the message (with file:line) and traceback.
pub fn error_text(e: &mlua::Error) -> String {
    morc_lua::lua_error_text(e)
}
