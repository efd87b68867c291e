//! Every command line README.md and docs/*.md show, run as a reader types it: the README's
//! live command once failed with `unrecognized subcommand`, and `morc test NAME` (docs/lua-api.md)
//! with "No such file or directory", because no test ran what the page said.
//!
//! The command lines are read from the documents themselves (code blocks, `$ ` prompts and inline
//! code that starts with `morc ` or `cargo run --release --`), so a new line in any of them is
//! tested without touching this file. Each runs with the built `morc` in a scratch folder where
//! `examples/` is the repository's (recordings and new files land in the scratch folder).
//! Placeholders are filled the way a reader would: `prog.lua`/`FILE` a short program, `DIR` a
//! folder, `NAME` a library (installed first, for `morc test NAME`). A line that only names a
//! command (`morc check`) must at least be a command (`--help` answers); a synopsis with
//! alternatives (`A | B`) likewise. A command for real hardware (`--iface eth1`) must fail for
//! the interface, never for its words. The lines that need what a test machine lacks (ROS 2
//! peers, a reader's own FMU, minutes of measuring) are listed in [`NOT_RUN`] with the reason;
//! their words are still checked (`--help` after them parses them). The REPL sessions
//! (`morc> ` lines) are typed into the REPL in order.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One command line of a document.
#[derive(Debug, Clone)]
struct DocLine {
    /// "README.md:60".
    place: String,
    /// As written, with `cargo run --release --` and `sudo` read as `morc`.
    words: Vec<String>,
}

/// A REPL session of a document: its `morc> ` lines in order.
#[derive(Debug)]
struct Session {
    place: String,
    lines: Vec<String>,
    /// What the document shows the REPL answering (lines between the `morc> ` lines).
    shown: Vec<String>,
}

/// Document lines not run, by how they start (the words after `morc`), and why. Their words
/// must still parse as a command: the line with `--help` after it answers.
const NOT_RUN: &[(&str, &str)] = &[
    ("--ros run", "joins ROS 2 on the network and serves peers that run in another shell (tests/ros_robot.rs, tests/ros_pubsub.rs run these beside rclpy)"),
    ("ros fmu", "the reader's own FMU as a ROS 2 node, until Ctrl-C (tests/ros_fmu.rs runs one)"),
    ("bench ros", "measures against an rclpy peer (tests/ros_pubsub.rs)"),
    ("bench lua-gc --seconds 600", "a ten-minute measurement"),
    ("bench lua --seconds", "a measurement on the wall clock for seconds at 1 kHz (`morc bench lua` alone is run)"),
];

/// Why `words` is not run, if it is listed in [`NOT_RUN`].
fn not_run(words: &[String]) -> Option<&'static str> {
    let line = words[1..].join(" ");
    NOT_RUN.iter().find(|(start, _)| line.starts_with(start)).map(|(_, why)| *why)
}

/// The documents read: README.md and every docs/*.md.
fn documents() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|f| f.ends_with(".md"))
        .map(|f| format!("docs/{f}"))
        .collect();
    files.sort();
    files.insert(0, "README.md".into());
    files
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The command lines and REPL sessions in `file`.
fn read_document(file: &str) -> (Vec<DocLine>, Vec<Session>) {
    let text = std::fs::read_to_string(repo().join(file)).unwrap();
    let mut lines = Vec::new();
    let mut sessions: Vec<Session> = Vec::new();
    let mut fenced = false;
    let mut session_open = false;
    let mut paragraph = String::new();
    let mut paragraph_start = 0;
    let all: Vec<&str> = text.lines().collect();
    for (i, raw) in all.iter().enumerate() {
        let n = i + 1;
        if raw.trim_start().starts_with("```") {
            fenced = !fenced;
            session_open = false;
            continue;
        }
        let code = fenced || raw.starts_with("    ") || raw.starts_with('\t');
        if code {
            let t = raw.trim();
            if let Some(input) = t.strip_prefix("morc> ") {
                if !session_open {
                    sessions.push(Session { place: format!("{file}:{n}"), lines: Vec::new(), shown: Vec::new() });
                    session_open = true;
                }
                sessions.last_mut().unwrap().lines.push(strip_lua_comment(input).to_string());
            } else if session_open && !t.is_empty() {
                sessions.last_mut().unwrap().shown.push(t.to_string());
            } else if let Some(words) = command_words(t) {
                lines.push(DocLine { place: format!("{file}:{n}"), words });
            } else {
                // A doc string's text block (docs/lua-api.md) quotes commands in backticks too.
                lines.extend(inline_commands(file, n, t));
            }
            continue;
        }
        session_open = false;
        // Prose: inline code spans, which may wrap across lines of a paragraph.
        if raw.trim().is_empty() {
            lines.extend(inline_commands(file, paragraph_start, &paragraph));
            paragraph.clear();
        } else {
            if paragraph.is_empty() {
                paragraph_start = n;
            }
            paragraph.push_str(raw.trim());
            paragraph.push(' ');
        }
    }
    lines.extend(inline_commands(file, paragraph_start, &paragraph));
    (lines, sessions)
}

fn inline_commands(file: &str, start: usize, paragraph: &str) -> Vec<DocLine> {
    paragraph
        .split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|span| command_words(span.trim()).map(|words| DocLine { place: format!("{file}:{start}"), words }))
        .collect()
}

/// The words of a command line, if `text` is one: `morc …`, `$ morc …`, `sudo morc …`,
/// `cargo run --release -- …` (also after `scripts/setup && `); comments after `#` dropped.
fn command_words(text: &str) -> Option<Vec<String>> {
    let mut t = text.trim();
    t = t.strip_prefix("$ ").unwrap_or(t);
    if let Some((_, after)) = t.split_once("&& ") {
        t = after;
    }
    t = t.strip_prefix("sudo ").unwrap_or(t);
    // `cargo run --release -- …` is morc; `cargo run --release --features x` another crate's.
    let rest = if let Some(r) = t.strip_prefix("cargo run --release --").filter(|r| r.is_empty() || r.starts_with(' ')) {
        r
    } else if t == "morc" {
        ""
    } else {
        t.strip_prefix("morc ")?
    };
    // A comment: `  # …` after the command.
    let rest = rest.split(" #").next().unwrap_or("");
    // What morc printed, quoted in prose ("morc experiment: tool residual …"), is no command.
    if rest.split_whitespace().take(2).any(|w| w.ends_with(':')) {
        return None;
    }
    Some(std::iter::once("morc".to_string()).chain(rest.split_whitespace().map(str::to_string)).collect())
}

fn strip_lua_comment(line: &str) -> &str {
    line.split(" --").next().unwrap_or(line).trim()
}

/// The scratch folder a command runs in: `examples`, `stdlib`, `skills` and `robots` are the repository's.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("docs_commands").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // The reader is in the repository: its example and library folders are there.
    for folder in ["examples", "stdlib", "skills", "robots"] {
        std::os::unix::fs::symlink(repo().join(folder), dir.join(folder)).unwrap();
    }
    dir
}

/// A short program for `prog.lua`, `FILE`: a robot, one motion, one recording.
const PROGRAM: &str = r#"
local a = morc.assembly { "doc", duration = 0.2 }
a:add("ref", "sine", { n = 6, amplitude = 0.01, frequency = 1 })
a:connect("ref.y", "robot.q_cmd")
a:record { "robot.q" }
local r = morc.engine:run(a)
assert(r.ok, tostring(r))
print("program ran")
"#;

/// What a reader puts for the placeholders of `words` (the words after `morc`), run in `dir`:
/// a program, or for `morc rec` and `morc plot` a recording the program made; a folder; a library.
fn filled(words: &[String], dir: &Path) -> Vec<String> {
    let program = dir.join("prog.lua");
    std::fs::write(&program, PROGRAM).unwrap();
    let wants_recording = matches!(words.first().map(String::as_str), Some("rec" | "plot"));
    let recording = if wants_recording { Some(make_recording(dir)) } else { None };
    let file = |w: &str| match &recording {
        Some(r) if w == "FILE" || w.ends_with(".h5") => r.display().to_string(),
        _ => program.display().to_string(),
    };
    words
        .iter()
        .flat_map(|w| -> Vec<String> {
            match w.as_str() {
                "prog.lua" | "program.lua" | "x.lua" | "FILE" | "FILE.lua" | "A.h5" => vec![file(w)],
                "FILE.zip" => vec![make_library_zip(dir).display().to_string()],
                "DIR" => vec![dir.join("out").display().to_string()],
                "NAME" => vec!["motion".into()],
                w if w.starts_with("~/") => vec![dir.join(&w[2..]).display().to_string()],
                // The shell's glob.
                w if w.contains('*') => glob(dir, w),
                _ => vec![w.to_string()],
            }
        })
        .collect()
}

/// Runs the short program in `dir`; the recording it made.
fn make_recording(dir: &Path) -> PathBuf {
    let out = morc().args(["--record", "recorded", "run", "prog.lua"]).current_dir(dir).output().unwrap();
    assert!(out.status.success(), "the short program failed: {}", String::from_utf8_lossy(&out.stderr));
    let file = std::fs::read_dir(dir.join("recorded")).unwrap().filter_map(|e| e.ok()).map(|e| e.path()).find(|p| p.extension().is_some_and(|x| x == "h5"));
    file.expect("the short program recorded nothing")
}

/// A library as a reader would zip one: `morc lib new`, then zip the folder.
fn make_library_zip(dir: &Path) -> PathBuf {
    let out = morc().args(["lib", "new", "ziplib"]).current_dir(dir).output().unwrap();
    assert!(out.status.success(), "morc lib new: {}", String::from_utf8_lossy(&out.stderr));
    let zip = dir.join("ziplib.zip");
    let status = Command::new("python3").args(["-m", "zipfile", "-c"]).arg(&zip).arg("ziplib").current_dir(dir).status().unwrap();
    assert!(status.success(), "python3 -m zipfile failed");
    zip
}

/// A library `name` as a reader installs it: `morc lib new`, then `morc lib install` into
/// `dir/lib` (the user library folder the lines run with).
fn install_library(dir: &Path, name: &str) {
    let made = dir.join("made");
    std::fs::create_dir_all(&made).unwrap();
    let out = morc().args(["lib", "new", name]).current_dir(&made).output().unwrap();
    assert!(out.status.success(), "morc lib new: {}", String::from_utf8_lossy(&out.stderr));
    let out = morc().args(["lib", "install"]).arg(made.join(name)).env("MORC_LIB", dir.join("lib")).current_dir(dir).output().unwrap();
    assert!(out.status.success(), "morc lib install: {}", String::from_utf8_lossy(&out.stderr));
}

/// `examples/*.lua` as a shell expands it, in `dir`.
fn glob(dir: &Path, pattern: &str) -> Vec<String> {
    let (folder, file) = pattern.rsplit_once('/').unwrap_or((".", pattern));
    let (prefix, suffix) = file.split_once('*').unwrap();
    let mut out: Vec<String> = std::fs::read_dir(dir.join(folder))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|f| f.starts_with(prefix) && f.ends_with(suffix))
        .map(|f| format!("{folder}/{f}"))
        .collect();
    out.sort();
    out
}

fn morc() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_morc"));
    c.env_remove("MORC_PATH").env_remove("RUST_BACKTRACE");
    c
}

/// Output of a child so far, and whether it ended (its status) within `limit`.
fn wait(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return Some(s);
        }
        if start.elapsed() > limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn read_all(child: &mut Child) -> String {
    let mut text = String::new();
    if let Some(mut o) = child.stdout.take() {
        let _ = o.read_to_string(&mut text);
    }
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut text);
    }
    text
}

/// A usage error is what the bug was: the words were not a command morc knows.
fn usage_error(text: &str) -> bool {
    ["error: unrecognized subcommand", "error: unexpected argument", "error: invalid value"].iter().any(|m| text.contains(m))
}

/// Names a real network interface (hardware a test machine does not have).
fn real_interface(words: &[String]) -> bool {
    words.windows(2).any(|w| (w[0] == "--iface" || w[0] == "--bus") && w[1] != "sim") || words.iter().any(|w| w == "IFACE" || w.starts_with("--bus=") && w != "--bus=sim")
}

/// Runs one document line; an error in words, or `None` when it ran as written.
fn run_line(line: &DocLine, index: usize) -> Option<String> {
    let dir = scratch(&format!("line{index}"));
    let words = &line.words;
    let what = format!("{}: `{}`", line.place, words.join(" "));
    // A synopsis (`A | B`, `…`) or a name (`morc check`): the command exists.
    let synopsis = words.iter().any(|w| w == "|" || w.contains('…'));
    // (`check/doc/test` names three commands; a later word with a `/` is a path: `morc test stdlib/controllers` runs.)
    let name_only = words.len() > 1 && words[1..].iter().all(|w| w.chars().all(|c| c.is_ascii_lowercase() || c == '/')) && !words[2..].iter().any(|w| w.contains('/'));
    if synopsis || name_only {
        let sub: Vec<&str> = words[1..].iter().take_while(|w| w.chars().all(|c| c.is_ascii_lowercase() || c == '/')).map(String::as_str).collect();
        // `morc check/doc/test`: several commands' names at once.
        let names: Vec<Vec<&str>> = match sub.first() {
            Some(first) if first.contains('/') => first.split('/').map(|n| vec![n]).collect(),
            _ => vec![sub],
        };
        return names.iter().find_map(|name| {
            let out = morc().args(name).arg("--help").current_dir(&dir).output().unwrap();
            (!out.status.success()).then(|| format!("{what}: `morc {} --help` failed: {}", name.join(" "), String::from_utf8_lossy(&out.stderr)))
        });
    }
    let mut args = filled(&words[1..], &dir);
    if let Some(why) = not_run(words) {
        let out = morc().args(&args).arg("--help").current_dir(&dir).output().unwrap();
        eprintln!("not run ({why}): {what}");
        return (!out.status.success()).then(|| format!("{what}: its words are not a command morc knows: {}", String::from_utf8_lossy(&out.stderr)));
    }
    // `morc test NAME` tests an installed library: the one the reader made and installed.
    if words.get(1).is_some_and(|w| w == "test") && words.get(2).is_some_and(|w| w == "NAME") {
        install_library(&dir, "mylib");
        args[1] = "mylib".into();
    }
    let live = args.iter().any(|a| a == "--live" || a.starts_with("--live="));
    // The live view's port is one: two live lines at once would take it from each other.
    static LIVE_PORT: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _port = live.then(|| LIVE_PORT.lock().unwrap_or_else(|e| e.into_inner()));
    let repl = args.is_empty();
    let mut child = morc()
        .args(&args)
        .current_dir(&dir)
        .env("MORC_LIB", dir.join("lib"))
        .env("HOME", &dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if repl {
        // The REPL as a pipe: its help, then the end of input.
        child.stdin.take().unwrap().write_all(b"help()\n").unwrap();
    } else {
        drop(child.stdin.take());
    }
    // A live run serves while it goes: alive after a few seconds is running as written.
    let limit = if live { Duration::from_secs(8) } else { Duration::from_secs(120) };
    let status = wait(&mut child, limit);
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    let text = read_all(&mut child);
    let code = status.and_then(|s| s.code());
    if usage_error(&text) || code == Some(2) {
        // A command's name without its arguments (`morc run`, `morc lib info`) is a name in the
        // prose: its --help must answer.
        if text.contains("required arguments were not provided") || text.contains("requires a subcommand") {
            let out = morc().args(&args).arg("--help").current_dir(&dir).output().unwrap();
            return (!out.status.success()).then(|| format!("{what}: names no command: {}", String::from_utf8_lossy(&out.stderr)));
        }
        return Some(format!("{what}: not a command morc knows (exit {code:?}):\n{text}"));
    }
    match (code, status) {
        (Some(0), _) => None,
        (_, None) if live => (!text.contains("live view on")).then(|| format!("{what}: ran 8 s without saying where the live view is:\n{text}")),
        (_, None) => Some(format!("{what}: still running after {} s:\n{text}", limit.as_secs())),
        (Some(3), _) if real_interface(words) => {
            (!text.contains("eth1") && !text.contains("veth0") && !text.contains("interface")).then(|| format!("{what}: failed without naming the interface:\n{text}"))
        }
        (code, _) => Some(format!("{what}: exit {code:?}:\n{text}")),
    }
}

#[test]
fn every_command_line_of_the_documents_runs_as_written() {
    let mut lines = Vec::new();
    for file in documents() {
        let (l, _) = read_document(&file);
        if ["README.md", "docs/guide.md"].contains(&file.as_str()) {
            assert!(!l.is_empty(), "{file}: no command lines found: the reader of this test is broken");
        }
        lines.extend(l);
    }
    // The lines the bugs were about are among them.
    assert!(lines.iter().any(|l| l.place.starts_with("README.md") && l.words.join(" ") == "morc --live run examples/motion_tour.lua"), "README's live command is not found");
    assert!(lines.iter().any(|l| l.place.starts_with("docs/lua-api.md") && l.words.join(" ") == "morc test NAME"), "docs/lua-api.md's `morc test NAME` is not found");
    // Each distinct line once (the guide repeats README's), two at a time.
    let mut distinct: Vec<DocLine> = Vec::new();
    for l in lines {
        if !distinct.iter().any(|d| d.words == l.words) {
            distinct.push(l);
        }
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(l) = distinct.get(i) else { break };
                let t = Instant::now();
                let failed = run_line(l, i);
                eprintln!("{:6.2} s  {}  {}", t.elapsed().as_secs_f64(), l.place, l.words.join(" "));
                failures.lock().unwrap().extend(failed);
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    let lines = distinct;
    assert!(failures.is_empty(), "{} of {} command lines do not run as written:\n\n{}", failures.len(), lines.len(), failures.join("\n\n"));
}

#[test]
fn the_readme_repl_session_runs_as_written() {
    let (_, sessions) = read_document("README.md");
    assert!(!sessions.is_empty(), "README.md: no REPL session found");
    for s in sessions {
        let dir = scratch("repl");
        let mut child = morc().current_dir(&dir).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let input = s.lines.join("\n") + "\n";
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        let status = wait(&mut child, Duration::from_secs(120));
        if status.is_none() {
            let _ = child.kill();
        }
        let text = read_all(&mut child);
        assert_eq!(status.and_then(|s| s.code()), Some(0), "{}: the REPL session did not end cleanly:\n{text}", s.place);
        for bad in ["✗", "stack traceback", "\nerror"] {
            assert!(!text.contains(bad), "{}: the session printed '{bad}':\n{text}", s.place);
        }
        // What the document shows is what a reader sees.
        for shown in &s.shown {
            assert!(text.contains(shown.as_str()), "{}: the document shows `{shown}`, the REPL printed:\n{text}", s.place);
        }
        // Each motion of the session reports success.
        for cmd in s.lines.iter().filter_map(|l| l.split_whitespace().next()).filter(|w| ["ptp", "lin", "circ"].contains(w)) {
            assert!(text.contains(&format!("{cmd} ✓")), "{}: `{cmd}` did not report success:\n{text}", s.place);
        }
    }
}
