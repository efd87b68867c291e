//! The REPL: `morc` with no command. Lua runs on the main thread (the engine has
//! its own); rustyline edits lines, keeps history and completes names.
//!
//! Ctrl-C while a command runs cancels the running assembly (the robot holds) or
//! interrupts Lua code; the REPL stays. Ctrl-C at the prompt clears the line;
//! Ctrl-D exits, dropping the Lua state, which stops the engine and closes recordings.

use std::borrow::Cow;
use std::path::PathBuf;

use mlua::{Function, Lua, MultiValue, Table};
use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::FileHistory;
use rustyline::validate::Validator;
use rustyline::{Context, Editor, Helper};

use super::{exit, lua_with_engine, LuaSetup};
use morc_kernel::EngineConfig;

/// Pretty printing and completion, written in Lua (they walk Lua values).
const REPL_LUA: &str = include_str!("../../lua/morc/repl.lua");

const PROMPT: &str = "morc> ";
const CONTINUATION: &str = "   …> ";

/// `$MORC_HISTORY`, else `~/.local/share/morc/history`.
pub fn history_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MORC_HISTORY") {
        return Some(PathBuf::from(p));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share/morc/history"))
}

struct ReplHelper {
    complete: Function,
}

impl Completer for ReplHelper {
    type Candidate = Pair;
    fn complete(&self, line: &str, pos: usize, _ctx: &Context<'_>) -> rustyline::Result<(usize, Vec<Pair>)> {
        let Some(before) = line.get(..pos) else { return Ok((pos, Vec::new())) };
        // A failing completion must not disturb the line being edited.
        let Ok((start, names)) = self.complete.call::<(usize, Vec<String>)>(before) else { return Ok((pos, Vec::new())) };
        let pairs = names.into_iter().map(|n| Pair { display: n.clone(), replacement: n }).collect();
        Ok((start.min(pos), pairs))
    }
}
impl Hinter for ReplHelper {
    type Hint = String;
}
impl Highlighter for ReplHelper {
    fn highlight_prompt<'b, 's: 'b, 'p: 'b>(&'s self, prompt: &'p str, _default: bool) -> Cow<'b, str> {
        Cow::Borrowed(prompt)
    }
}
impl Validator for ReplHelper {}
impl Helper for ReplHelper {}

/// What became of one chunk typed at the prompt.
enum Evaluated {
    /// The chunk is not finished (its syntax error is at <eof>): read more lines.
    Incomplete,
    Done,
}

pub fn main(config: EngineConfig, setup: &LuaSetup) -> i32 {
    let lua = match lua_with_engine(config, setup) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("morc: {e}");
            return exit::FAULT;
        }
    };
    match session(&lua) {
        // Leaving with Ctrl-D (or the end of piped input) is a clean end, whatever the last run
        // did: the REPL reported each run's fault when it happened.
        Ok(()) => match super::interrupt::terminating() {
            Some(signal) => 128 + signal,
            None => exit::OK,
        },
        Err(e) => {
            eprintln!("morc: {e}");
            exit::SCRIPT_ERROR
        }
    }
}

fn session(lua: &Lua) -> Result<(), String> {
    let helpers: Table = lua.load(REPL_LUA).set_name("@lua/morc/repl.lua").eval().map_err(|e| e.to_string())?;
    let pretty: Function = helpers.get("pretty").map_err(|e| e.to_string())?;
    let complete: Function = helpers.get("complete").map_err(|e| e.to_string())?;
    super::interrupt::install(lua)?;

    let config = rustyline::Config::builder()
        .completion_type(rustyline::CompletionType::List)
        .auto_add_history(false)
        .max_history_size(10_000)
        .map_err(|e| e.to_string())?
        .build();
    let mut editor: Editor<ReplHelper, FileHistory> = Editor::with_config(config).map_err(|e| e.to_string())?;
    editor.set_helper(Some(ReplHelper { complete }));
    watch_background_faults(editor.create_external_printer().ok());
    let history = history_path();
    if let Some(h) = &history {
        let _ = editor.load_history(h); // none yet is fine
    }
    println!("morc {} — Lua REPL. help() for help, Ctrl-D to quit.", env!("CARGO_PKG_VERSION"));
    let mut chunk = String::new();
    loop {
        if super::interrupt::terminating().is_some() {
            break;
        }
        let prompt = if chunk.is_empty() { PROMPT } else { CONTINUATION };
        super::interrupt::set_busy(false);
        let line = editor.readline(prompt);
        super::interrupt::set_busy(true);
        match line {
            Ok(line) => {
                if !chunk.is_empty() {
                    chunk.push('\n');
                }
                chunk.push_str(&line);
                if chunk.trim().is_empty() {
                    chunk.clear();
                    continue;
                }
                morc_lua::interrupt::clear();
                // `jog` alone: the jog mode (keys move the robot; src/cli/jog.rs).
                if chunk.trim() == "jog" {
                    if let Err(e) = super::jog::run(lua) {
                        eprintln!("jog: {e}");
                    }
                    let _ = editor.add_history_entry(chunk.as_str());
                    chunk.clear();
                    continue;
                }
                // `reload` alone is the REPL's command (the function reload() of lua/morc/repl.lua).
                let code = if chunk.trim() == "reload" { "reload()".to_string() } else { chunk.clone() };
                if let Evaluated::Done = evaluate(lua, &pretty, &code) {
                    let _ = editor.add_history_entry(chunk.as_str());
                    chunk.clear();
                }
            }
            // Ctrl-C at the prompt: drop what was typed (and any unfinished chunk), and stop
            // what runs in the background (`engine:start`): no signal reaches the handler while
            // the line editor reads, yet a Ctrl-C must stop the robot wherever it is pressed.
            Err(ReadlineError::Interrupted) => {
                if super::interrupt::terminating().is_some() {
                    break;
                }
                chunk.clear();
                let running = morc_kernel::runs_in_progress();
                if running > 0 {
                    morc_kernel::cancel_all_runs();
                    let what = if running == 1 { "the assembly" } else { "the assemblies" };
                    eprintln!("Ctrl-C: stopped {what} running in the background; the robot holds (h:wait() gives the result of a run started as h = engine:start(a))");
                }
            }
            Err(ReadlineError::Eof) => {
                if morc_kernel::runs_in_progress() > 0 {
                    // Leaving stops it (the engines brake and close its recordings on the way out).
                    eprintln!("Ctrl-D: stopping what runs in the background; the robot holds");
                }
                break;
            }
            Err(e) => {
                save_history(&mut editor, history.as_ref());
                return Err(format!("reading input: {e}"));
            }
        }
    }
    save_history(&mut editor, history.as_ref());
    Ok(())
}

/// What the REPL says when a run it started in the background (`h = engine:start(a)`) faults.
pub(crate) const BACKGROUND_FAULT: &str = "a run in the background faulted; the robot holds (h:status() says 'faulted', h:wait() gives the reason)";

/// Says at once, above the prompt, when a run in the background faults: a fault nobody waits for
/// (a command's own is reported by the command). Polls the engines' counts every 50 ms; with no
/// terminal to print above (input from a pipe), the line goes to stderr.
fn watch_background_faults(mut printer: Option<impl rustyline::ExternalPrinter + Send + 'static>) {
    let spawned = std::thread::Builder::new().name("repl-faults".into()).spawn(move || {
        let mut announced = morc_kernel::runs_faulted().0;
        loop {
            std::thread::sleep(std::time::Duration::from_millis(50));
            let (faulted, unread) = morc_kernel::runs_faulted();
            // While a command runs, its own run's fault is its to report (it reads the result).
            if faulted > announced && unread > 0 && !super::interrupt::busy() {
                announced = faulted;
                match printer.as_mut() {
                    Some(p) => {
                        let _ = p.print(format!("{BACKGROUND_FAULT}\n"));
                    }
                    None => eprintln!("{BACKGROUND_FAULT}"),
                }
            } else if unread == 0 {
                announced = faulted;
            }
        }
    });
    if let Err(e) = spawned {
        log::warn!("the REPL cannot watch background runs for faults: {e}");
    }
}

fn save_history(editor: &mut Editor<ReplHelper, FileHistory>, path: Option<&PathBuf>) {
    let Some(path) = path else { return };
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Err(e) = editor.save_history(path) {
        eprintln!("morc: could not save the history to {}: {e}", path.display());
    }
}

/// Runs one chunk: as an expression first (`return <chunk>`, printed), else as
/// statements, as the standalone lua REPL does.
fn evaluate(lua: &Lua, pretty: &Function, chunk: &str) -> Evaluated {
    let function = match lua.load(format!("return {chunk}")).set_name("=stdin").into_function() {
        Ok(f) => f,
        Err(_) => match lua.load(chunk).set_name("=stdin").into_function() {
            Ok(f) => f,
            Err(mlua::Error::SyntaxError { incomplete_input: true, .. }) => return Evaluated::Incomplete,
            Err(e) => {
                eprintln!("{}", super::run::error_text(&e));
                return Evaluated::Done;
            }
        },
    };
    match super::run::call_with_traceback(lua, &function, &[]) {
        Ok(values) => print_values(pretty, values),
        // Where it stopped is enough: the traceback of an interruption says nothing new.
        Err(e) if morc_lua::interrupt::is_interruption(&e) => eprintln!("{}", morc_lua::interrupt::report(&e, "stdin")),
        Err(e) => eprintln!("{e}"),
    }
    morc_lua::interrupt::clear();
    Evaluated::Done
}

fn print_values(pretty: &Function, values: MultiValue) {
    let texts: Vec<String> = values
        .into_iter()
        .map(|v| pretty.call::<String>(v.clone()).unwrap_or_else(|_| v.to_string().unwrap_or_else(|_| format!("<{}>", v.type_name()))))
        .collect();
    if !texts.is_empty() {
        println!("{}", texts.join("\t"));
    }
}
