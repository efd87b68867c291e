//! A panic in Rust code that Lua called is a bug in morc; the user meets it as a Lua error
//! naming the call and where the program made it, not as Rust's panic message and an abort.
//!
//! The seam is mlua's, not each of the hundreds of functions morc registers: mlua runs every
//! Rust callback (functions and userdata methods alike) under `catch_unwind` and raises a
//! caught panic into Lua as an error value whose text is the panic's message (`pcall` catches
//! it; returned to Rust it would panic again). So the panic hook here, which runs at the panic
//! while the Lua call is still on the stack, notes the call and its place ([`watch`]: per
//! thread, the Lua state created there), and keeps Rust's message off the terminal; the error
//! value's `tostring` then says the note (`error.rs` installs that), and its `kind` is
//! "internal".

use std::cell::RefCell;

use mlua::{Lua, WeakLua};

/// What a panic in a Lua call was: its message, and the text that names the call.
struct Note {
    message: String,
    text: String,
}

thread_local! {
    /// The Lua state made on this thread (a program's, or a stepping thread's).
    static STATE: RefCell<Option<WeakLua>> = const { RefCell::new(None) };
    /// The last panic in a Lua call on this thread.
    static LAST: RefCell<Option<Note>> = const { RefCell::new(None) };
}

/// Notes panics in Rust functions that `lua` calls on this thread (installs the hook once).
pub(crate) fn watch(lua: &Lua) {
    STATE.with(|s| *s.borrow_mut() = Some(lua.weak()));
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !note(info) {
                previous(info);
            }
        }));
    });
}

/// Notes a panic inside a Rust function the thread's Lua state is running; false when the
/// panic is elsewhere (Rust's own hook reports it then).
fn note(info: &std::panic::PanicHookInfo) -> bool {
    let Some(lua) = STATE.with(|s| s.borrow().as_ref().and_then(WeakLua::try_upgrade)) else { return false };
    // The running function is a C (Rust) one: the panic is in a call from Lua.
    let Some(call) = lua.inspect_stack(0).filter(|d| d.source().what == "C").map(|d| {
        let names = d.names();
        let name = names.name.map_or("?".to_string(), |n| n.to_string());
        format!("{} '{name}'", names.name_what.filter(|w| !w.is_empty()).unwrap_or("function"))
    }) else {
        return false;
    };
    let place = (1..12)
        .filter_map(|level| lua.inspect_stack(level))
        .find(|d| d.curr_line() > 0)
        .map(|d| format!("{}:{}: ", d.source().short_src.unwrap_or_default(), d.curr_line()))
        .unwrap_or_default();
    let payload = info.payload();
    let message = payload.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| payload.downcast_ref::<String>().cloned()).unwrap_or_else(|| "<panic>".into());
    let at = info.location().map_or(String::new(), |l| format!(" (at {}:{})", l.file(), l.line()));
    let text = format!("{place}internal error in morc's {call}: {message}{at}. This is a bug in morc: please report it with the program that ran into it");
    LAST.with(|n| *n.borrow_mut() = Some(Note { message, text }));
    true
}

/// The note naming the call when `text` is the message of the last panic in a Lua call on
/// this thread, else None.
pub(crate) fn explain(text: &str) -> Option<String> {
    LAST.with(|n| n.borrow().as_ref().filter(|n| n.message == text).map(|n| n.text.clone()))
}

#[cfg(test)]
mod tests {
    /// No call of morc's own is known to panic any more (tests/lua/api_sweep.lua sweeps them):
    /// a function that does stands in for the next bug.
    #[test]
    fn a_panic_in_a_call_from_lua_is_an_error_naming_the_call_and_the_line_of_kind_internal() {
        let lua = crate::new_state().unwrap();
        crate::error::install(&lua).unwrap();
        let broken = lua.create_table().unwrap();
        broken.set("calibrate", lua.create_function(|_, ()| -> mlua::Result<()> { panic!("Cannot compute the SVD of an empty matrix.") }).unwrap()).unwrap();
        lua.globals().set("arm", broken).unwrap();
        let (ok, text, kind, message, after): (bool, String, String, String, i64) = lua
            .load(
                "local ok, err = pcall(function()\n  return arm:calibrate()\nend)\n\
                 return ok, tostring(err), err.kind, err.message, 1 + 1",
            )
            .set_name("@prog.lua")
            .eval()
            .unwrap();
        assert!(!ok);
        assert!(text.starts_with("prog.lua:2: internal error in morc's method 'calibrate': Cannot compute the SVD of an empty matrix. (at "), "{text}");
        assert!(text.contains("This is a bug in morc: please report it"), "{text}");
        assert_eq!(kind, "internal");
        assert!(message.contains("method 'calibrate'"), "{message}");
        // The state goes on.
        assert_eq!(after, 2);
    }
}
