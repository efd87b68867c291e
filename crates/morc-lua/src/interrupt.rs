//! Stopping Lua code on Ctrl-C: a stop stops.
//!
//! [`request`] (called from a signal handler) cancels every engine's run — the robots hold
//! within a tick — and marks the Lua code interrupted. From then on the hook raises
//! "interrupted" at every instruction the Lua code reaches, so a `pcall` somewhere in a skill or a
//! library cannot swallow it and carry the program on to its next motion: the interruption
//! unwinds to the top (the REPL's prompt, the end of `morc run`). Only
//! `morc.catch_interrupt(f, …)` takes it, for programs that want to clean up and go on.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use mlua::{HookTriggers, Lua, MultiValue, Table, VmState};

/// The message the interrupted code fails with (after the Lua position where it stopped),
/// when Ctrl-C (SIGINT) stopped it.
pub(crate) const MESSAGE: &str = "interrupted (Ctrl-C); the robot holds";
/// The same when SIGTERM asked the process to end (a service manager, `kill`): not a Ctrl-C.
const MESSAGE_TERM: &str = "terminated (SIGTERM); the robot holds";
/// The same when SIGHUP did (the terminal closed).
const MESSAGE_HUP: &str = "hung up (SIGHUP: the terminal closed); the robot holds";

/// POSIX signal numbers (the same on every Unix morc runs on), without a libc dependency here.
const SIGHUP: i32 = 1;
const SIGINT: i32 = 2;
const SIGTERM: i32 = 15;

/// The signal behind the pending interruption (SIGINT unless [`request_by`] said otherwise).
static SIGNAL: AtomicI32 = AtomicI32::new(SIGINT);

/// What the interrupted code fails with, naming the signal that stopped it.
fn message() -> &'static str {
    match SIGNAL.load(Ordering::SeqCst) {
        SIGTERM => MESSAGE_TERM,
        SIGHUP => MESSAGE_HUP,
        _ => MESSAGE,
    }
}

/// Set by [`request`]; cleared by [`clear`] (the REPL, before each command) or by
/// `morc.catch_interrupt`.
static PENDING: AtomicBool = AtomicBool::new(false);

/// Stops what runs: cancels every engine's run and interrupts the Lua code at its next line.
/// Async-signal-safe (atomics only).
pub fn request() {
    request_by(SIGINT);
}

/// [`request`] for `signal` (SIGINT, SIGTERM, SIGHUP): the message names it, so a stop asked
/// by a service manager is not reported as a Ctrl-C. Async-signal-safe (atomics only).
pub fn request_by(signal: i32) {
    SIGNAL.store(signal, Ordering::SeqCst);
    PENDING.store(true, Ordering::SeqCst);
    morc_kernel::cancel_all_runs();
}

/// Whether Lua code was interrupted and nothing has taken the interruption yet.
pub fn pending() -> bool {
    PENDING.load(Ordering::SeqCst)
}

/// Forgets an interruption (a new REPL command starts clean).
pub fn clear() {
    PENDING.store(false, Ordering::SeqCst);
}

/// The error for Lua code that would go on while interrupted.
pub(crate) fn error() -> mlua::Error {
    mlua::Error::runtime(message())
}

/// [`error`], raised by a morc call back into Lua code (a run cancelled by Ctrl-C, say): from
/// now on the hook looks at every instruction, so the Lua code that catches it (a skill's
/// `pcall`) stops at its next instruction, not thousands later.
pub(crate) fn error_in(lua: &Lua) -> mlua::Error {
    set_hook(lua, true);
    error()
}

/// Whether an error (as text) is the interruption.
pub fn is_interruption(text: &str) -> bool {
    find_message(text).is_some()
}

/// Where in `text` the interruption's message starts, if it is there.
fn find_message(text: &str) -> Option<usize> {
    [MESSAGE, MESSAGE_TERM, MESSAGE_HUP].iter().filter_map(|m| text.find(m)).min()
}

/// Instructions between two looks at the interruption (some 10–50 µs of Lua): a Ctrl-C stops
/// tight loops as fast as anyone can tell. A count hook, not a line hook: with a line hook Lua
/// works out the line of every instruction, which made planners' Lua ~6× slower (a
/// 1000-iteration arithmetic loop: 62.6 µs with it, 9.9 µs without, ~24 µs with a count hook).
const LOOK_EVERY: u32 = 10_000;

/// Installs the hook that raises the interruption within [`LOOK_EVERY`] instructions of Lua
/// code (a loop's jump back counts, so tight loops stop too); once raised, it raises again at
/// every instruction until the interruption is taken, so that a `pcall` in the way cannot
/// swallow it.
pub fn install_hook(lua: &Lua) {
    set_hook(lua, false);
}

/// The hook looking every [`LOOK_EVERY`] instructions, or at every one (`interrupted`).
fn set_hook(lua: &Lua, interrupted: bool) {
    let every = if interrupted { 1 } else { LOOK_EVERY };
    lua.set_hook(HookTriggers::new().every_nth_instruction(every), move |lua, debug| {
        if !pending() {
            if interrupted {
                // Taken (morc.catch_interrupt, or the REPL's next command): the cheap pace again.
                set_hook(lua, false);
            }
            return Ok(VmState::Continue);
        }
        if !interrupted {
            set_hook(lua, true);
        }
        let source = debug.source();
        // The error handlers of morc's own wrappers must run, or the error becomes
        // "error in error handling" and the message is lost.
        if source.source.as_deref().is_some_and(|s| s.starts_with("=morc")) {
            return Ok(VmState::Continue);
        }
        let line = debug.curr_line();
        match source.short_src.as_deref() {
            Some(src) if line > 0 => Err(mlua::Error::runtime(format!("{src}:{line}: {}", message()))),
            _ => Err(error()),
        }
    });
}

/// Registers `morc.catch_interrupt`.
pub(crate) fn install(lua: &Lua, morc: &Table) -> mlua::Result<()> {
    // Calls anything callable: skills are tables with __call, not functions.
    let call: mlua::Function = lua.load("return function(f, ...) return f(...) end").set_name("=morc.catch_interrupt").eval()?;
    morc.set(
        "catch_interrupt",
        lua.create_function(move |lua, args: MultiValue| {
            let result = call.call::<MultiValue>(args);
            if pending() {
                clear();
                let message = match &result {
                    Err(e) => first_line(&e.to_string()),
                    Ok(_) => message().to_string(),
                };
                return Ok(MultiValue::from_iter([mlua::Value::Boolean(false), mlua::Value::String(lua.create_string(&message)?)]));
            }
            let mut values = result?;
            values.push_front(mlua::Value::Boolean(true));
            Ok(values)
        })?,
    )?;
    Ok(())
}

/// How an interruption is reported at the top: the message, where the user's own code
/// (`source`, e.g. the program's path or "stdin") was when it stopped, and no traceback.
pub fn report(error_text: &str, source: &str) -> String {
    let first = first_line(error_text);
    let message = find_message(&first).map_or(first.as_str(), |at| &first[at..]);
    // The first frame of the user's own file in the traceback (morc's library frames, where
    // the hook often fires, are skipped). Lua shortens a long path to "...its/end.lua".
    let place = error_text.lines().map(str::trim).find_map(|l| {
        let (src, line) = position(l)?;
        let shortened = src.strip_prefix("...").is_some_and(|end| !end.is_empty() && source.ends_with(end));
        (src == source || shortened).then(|| format!("{source}:{line}"))
    });
    match place {
        Some(place) => format!("{place}: {message}"),
        None => first,
    }
}

/// The `file` and `line` a traceback line or message starts with ("file:12: …").
fn position(text: &str) -> Option<(&str, &str)> {
    text.match_indices(':').find_map(|(at, _)| {
        let rest = &text[at + 1..];
        let digits = rest.find(|c: char| !c.is_ascii_digit())?;
        (digits > 0 && rest[digits..].starts_with(':')).then(|| (&text[..at], &rest[..digits]))
    })
}

/// The first line of an error's text, without mlua's prefix.
fn first_line(text: &str) -> String {
    let text = text.strip_prefix("runtime error: ").unwrap_or(text);
    text.lines().next().unwrap_or(message()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interruption_names_the_users_line_even_when_lua_shortened_its_path() {
        let source = "/home/lab/a_rather_long_folder_name_for_the_lab/projects/arm_cell_7/prog.lua";
        let text = format!(
            "lua/morc/skill.lua:312: {MESSAGE}\nstack traceback:\n\t[C]: in ?\n\tlua/morc/skill.lua:312: in function 'run_skill'\n\t...lder_name_for_the_lab/projects/arm_cell_7/prog.lua:8: in main chunk"
        );
        assert_eq!(report(&text, source), format!("{source}:8: {MESSAGE}"));
        assert_eq!(report(&format!("stdin:1: {MESSAGE}\nstack traceback:\n\tstdin:1: in main chunk"), "stdin"), format!("stdin:1: {MESSAGE}"));
        // Another file that merely ends alike is not the user's.
        assert_eq!(report(&format!("lua/morc/skill.lua:3: {MESSAGE}\n\t...other/prog.lua:8: in main chunk"), source), format!("lua/morc/skill.lua:3: {MESSAGE}"));
    }
}
