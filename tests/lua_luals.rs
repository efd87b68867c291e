//! `morc doc --luals DIR` as a user runs it: the stubs it writes are valid Lua, every type an
//! annotation names is a LuaLS type or a class of the stubs, every `---@param` names a parameter
//! of the function it annotates, and the Lua surface a robot program and a library component use
//! (module functions, methods, the component definition table, the skills) is declared.
//! Then a type checker reads them as an editor would: lua-language-server has no Debian, npm or
//! PyPI package here, so the checker is EmmyLua's (`emmylua_check`, from crates.io through
//! scripts/setup --test), which reads the same LuaLS annotations. A sample robot program and a
//! library component (tests/luals/) check without a warning, and wrong calls are caught.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

const BUILTIN: &[&str] = &["nil", "any", "boolean", "string", "number", "integer", "function", "table", "thread", "userdata", "lightuserdata", "unknown", "self", "true", "false"];

fn generate(dir: &Path) -> (String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_morc")).args(["doc", "--luals"]).arg(dir).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "morc doc --luals failed: {stderr}");
    (stdout, stderr)
}

/// Every Lua file under dir, relative path → text.
fn read_tree(dir: &Path) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "lua") {
                files.insert(p.strip_prefix(dir).unwrap().display().to_string(), std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    files
}

/// The type at the start of s: up to the first blank outside brackets and string literals.
fn leading_type(s: &str) -> &str {
    let mut depth = 0i32;
    let mut in_str = false;
    for (i, c) in s.char_indices() {
        match c {
            '"' => in_str = !in_str,
            _ if in_str => {}
            '(' | '{' | '[' | '<' => depth += 1,
            ')' | '}' | ']' | '>' => depth -= 1,
            ' ' if depth == 0 => return &s[..i],
            _ => {}
        }
    }
    s
}

/// The names a type text uses as types (not keys, parameter names, literals or `fun`).
fn type_names(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut names = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i] as char;
        if c == '"' {
            i += 1 + text[i + 1..].find('"').unwrap_or(text.len() - i - 1) + 1;
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < bytes.len() && ((bytes[i] as char).is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'.') {
                i += 1;
            }
            let name = &text[start..i];
            let rest = text[i..].trim_start();
            let is_key = rest.starts_with(':') || rest.starts_with("?:") || rest.starts_with("? :");
            if name != "fun" && !is_key {
                names.push(name.to_string());
            }
        } else {
            i += 1;
        }
    }
    names
}

/// The problems of well-formedness in the stubs: unknown types, @param lines that do not match
/// the function's parameters.
fn check_annotations(files: &BTreeMap<String, String>) -> Vec<String> {
    let mut classes: BTreeSet<String> = BUILTIN.iter().map(|s| s.to_string()).collect();
    for text in files.values() {
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("---@class ") {
                classes.insert(rest.split([':', ' ']).next().unwrap().to_string());
            }
        }
    }
    let mut problems = Vec::new();
    for (path, text) in files {
        let mut params: Vec<String> = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let at = format!("{path}:{}", n + 1);
            let ty = if let Some(rest) = line.strip_prefix("---@param ") {
                let (name, rest) = rest.split_once(' ').unwrap_or((rest, ""));
                params.push(name.trim_end_matches('?').to_string());
                Some(leading_type(rest))
            } else if let Some(rest) = line.strip_prefix("---@field ") {
                let (_, rest) = rest.split_once(' ').unwrap_or((rest, ""));
                Some(leading_type(rest))
            } else {
                line.strip_prefix("---@return ").or_else(|| line.strip_prefix("---@type ")).or_else(|| line.strip_prefix("---@overload ")).map(leading_type)
            };
            if let Some(ty) = ty {
                if ty.is_empty() {
                    problems.push(format!("{at}: an annotation without a type: {line}"));
                }
                for name in type_names(ty) {
                    if !classes.contains(&name) {
                        problems.push(format!("{at}: type '{name}' is not defined: {line}"));
                    }
                }
            }
            if let Some(rest) = line.strip_prefix("function ") {
                let args = rest.split_once('(').and_then(|(_, a)| a.split_once(')')).map(|(a, _)| a).unwrap_or("");
                let args: Vec<String> = args.split(',').map(|a| a.trim().to_string()).filter(|a| !a.is_empty()).collect();
                if !params.is_empty() && params != args {
                    problems.push(format!("{at}: ---@param names {params:?} but the function takes {args:?}"));
                }
                params.clear();
            } else if !line.starts_with("---") {
                params.clear();
            }
        }
    }
    problems
}

#[test]
fn luals_stubs_are_valid_lua_with_defined_types_and_cover_the_api() {
    let stubs = std::env::temp_dir().join(format!("morc-luals-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&stubs);
    let (stdout, stderr) = generate(&stubs);
    assert!(stderr.is_empty(), "morc doc --luals warns about the doc strings:\n{stderr}");
    let last = stdout.lines().last().unwrap_or("");
    assert!(last.contains("workspace.library") && last.contains(&stubs.display().to_string()), "the last line tells how to point LuaLS at the folder: {last}");

    let files = read_tree(&stubs);
    for name in ["morc.lua", "skills.lua", "morc/testing.lua", "classes/engine.lua", "classes/assembly.lua", "classes/component_def.lua", "classes/skill_result.lua"] {
        assert!(files.contains_key(name), "no {name} among {:?}", files.keys().collect::<Vec<_>>());
    }
    // Valid Lua: each file compiles and runs in a plain state (meta files only define things).
    for (path, text) in &files {
        let lua = mlua::Lua::new();
        lua.load(text.as_str()).set_name(path.as_str()).exec().unwrap_or_else(|e| panic!("{path} is not valid Lua: {e}"));
        assert!(text.starts_with("---@meta"), "{path} is not a meta file");
    }
    let problems = check_annotations(&files);
    assert!(problems.is_empty(), "ill-formed annotations:\n{}", problems.join("\n"));

    // What a robot program and a library component use is declared, with types.
    let all: String = files.values().cloned().collect::<Vec<_>>().join("\n");
    for decl in [
        "function morc.assembly(name_or_spec) end",
        "---@return morc.Assembly",
        "function __assembly:add(name, kind, params) end",
        "function __assembly:connect(from, to, opts) end",
        "---@type morc.Engine\nmorc.engine = nil",
        "---@return morc.RunResult\nfunction __engine:run(a, opts) end",
        "---@field ok boolean",
        "function __robot:fk(q, frame) end",
        "function morc.lib.use(name_or_dir) end",
        "function M.near(a, b, tol, what) end",
        "---@param def morc.ComponentDef",
        "---@field step fun(self: table, inp: table<string, any>, out: table<string, any>, t: number): string?",
        "---@field init? fun(self: table, out: table<string, any>)",
        "---@field kind string",
        "---@class morc.Skill.ptp: morc.Skill",
        "---@overload fun(q: number[], p?: morc.Skill.ptp.opts): morc.SkillResult",
        "ptp = {}",
        "---@field q number[] target joint positions",
        "function __skill_handle:wait() end",
        "function plot(what, signals, output) end",
    ] {
        assert!(all.contains(decl), "the stubs lack `{decl}`");
    }
    // help()'s text is the stubs' comment: one doc string, two readers.
    assert!(all.contains("---Describes an assembly: components on one clock, connected by name."));
    std::fs::remove_dir_all(&stubs).unwrap();
}

#[test]
fn the_checks_catch_an_undefined_type_and_a_mismatched_param() {
    let mut files = BTreeMap::new();
    files.insert("x.lua".to_string(), "---@meta\n---@class morc.A\n---@field b morc.B\n---@param x morc.A\n---@param y string\nfunction f(x) end\n".to_string());
    let problems = check_annotations(&files);
    assert!(problems.iter().any(|p| p.contains("'morc.B' is not defined")), "{problems:?}");
    assert!(problems.iter().any(|p| p.contains("takes [\"x\"]")), "{problems:?}");
}

#[test]
fn the_generator_reports_an_untyped_function_and_an_unknown_type() {
    let lua = morc_lua::new_state().unwrap();
    morc_lua::install(&lua, morc_lua::start_engine(Default::default()).unwrap()).unwrap();
    let problems: Vec<String> = lua
        .load(
            r#"morc.extra = morc.doc(function() end, "morc.extra(x) — does something")
               morc.other = morc.doc(function() end, "morc.other(x: widget) → number  does something else")
               local _, problems = morc.docs.luals()
               return problems"#,
        )
        .eval()
        .unwrap();
    assert!(problems.iter().any(|p| p.contains("morc.extra") && p.contains("no typed signature")), "{problems:?}");
    assert!(problems.iter().any(|p| p.contains("morc.other") && p.contains("widget")), "{problems:?}");
}

/// EmmyLua's checker, installed by scripts/setup --test (cargo install puts it in ~/.cargo/bin).
fn emmylua_check() -> PathBuf {
    let cargo_bin = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))
        .map(|c| c.join("bin/emmylua_check"));
    let on_path = std::env::var_os("PATH").and_then(|p| std::env::split_paths(&p).map(|d| d.join("emmylua_check")).find(|f| f.is_file()));
    on_path
        .or(cargo_bin.filter(|f| f.is_file()))
        .unwrap_or_else(|| panic!("MISSING PEER: emmylua_check, the type checker of the LuaLS stubs (cargo install --locked emmylua_check, or scripts/setup --test)"))
}

/// Checks the files (workspace path → source) against the stubs as an editor would, and returns
/// the diagnostics of severity warning and above: (file, line, code, message).
fn type_check(name: &str, stubs: &Path, files: &[(&str, PathBuf)]) -> Vec<(String, u64, String, String)> {
    let ws = std::env::temp_dir().join(format!("morc-luals-ws-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&ws);
    for (rel, src) in files {
        let dest = ws.join(rel);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(src, &dest).unwrap();
    }
    // The settings a user gives LuaLS (runtime, the stub folder as a library). EmmyLua checks an
    // array's element for nil where LuaLS does not: strict.arrayIndex off makes it judge as LuaLS.
    let config = serde_json::json!({ "runtime": { "version": "Lua5.4" }, "workspace": { "library": [stubs] }, "strict": { "arrayIndex": false } });
    std::fs::write(ws.join(".emmyrc.json"), config.to_string()).unwrap();
    let report = ws.join("report.json");
    let out = Command::new(emmylua_check()).args(["--severity", "warn", "-f", "json", "--output"]).arg(&report).arg(&ws).output().unwrap();
    let text = std::fs::read_to_string(&report).unwrap_or_else(|e| panic!("emmylua_check wrote no report ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut found = Vec::new();
    for file in json.as_array().unwrap() {
        let path = file["file"].as_str().unwrap_or("");
        let rel = Path::new(path).strip_prefix(&ws).map(|p| p.display().to_string()).unwrap_or_else(|_| path.to_string());
        for d in file["diagnostics"].as_array().into_iter().flatten() {
            let line = d["range"]["start"]["line"].as_u64().unwrap_or(0) + 1;
            found.push((rel.clone(), line, d["code"].as_str().unwrap_or("").to_string(), d["message"].as_str().unwrap_or("").to_string()));
        }
    }
    std::fs::remove_dir_all(&ws).unwrap();
    found
}

#[test]
fn a_robot_program_and_a_library_component_type_check_against_the_stubs() {
    let stubs = std::env::temp_dir().join(format!("morc-luals-check-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&stubs);
    generate(&stubs);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The samples are real: the program runs cleanly on the simulation.
    let check = Command::new(env!("CARGO_BIN_EXE_morc")).arg("check").arg(root.join("tests/luals/program.lua")).output().unwrap();
    assert!(check.status.success(), "morc check of the sample program: {}{}", String::from_utf8_lossy(&check.stdout), String::from_utf8_lossy(&check.stderr));

    let good = [
        ("program.lua", root.join("tests/luals/program.lua")),
        ("component.lua", root.join("tests/luals/component.lua")),
        // What the program requires, as morc ships it: a robot definition, typed by the stubs too.
        ("robots/kr16.lua", root.join("robots/kr16.lua")),
    ];
    let found = type_check("good", &stubs, &good);
    assert!(found.is_empty(), "the type checker finds fault with correct code:\n{found:#?}");

    // Wrong calls are caught: each line of wrong.lua is one diagnostic of its kind.
    let found = type_check("wrong", &stubs, &[("wrong.lua", root.join("tests/luals/wrong.lua"))]);
    let got: Vec<(u64, &str)> = found.iter().map(|(_, line, code, _)| (*line, code.as_str())).collect();
    let wrong = [(3, "param-type-mismatch"), (4, "param-type-mismatch"), (5, "undefined-field"), (6, "param-type-mismatch"), (7, "missing-fields"), (8, "undefined-field"), (9, "missing-fields")];
    for want in wrong {
        assert!(got.contains(&want), "the type checker misses {want:?}; it found {found:#?}");
    }
    // Without the stubs the same checker knows no morc: they are what it checks against.
    let empty = stubs.join("empty-library");
    std::fs::create_dir_all(&empty).unwrap();
    let found = type_check("bare", &empty, &good[..1]);
    assert!(found.iter().any(|(_, _, code, _)| code == "undefined-global"), "{found:#?}");
    std::fs::remove_dir_all(&stubs).unwrap();
}

#[test]
fn morc_doc_luals_replaces_its_own_stubs_and_keeps_a_users_files() {
    let dir = std::env::temp_dir().join(format!("morc-luals-rerun-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    generate(&dir);
    // A stub an earlier version wrote (a class since gone) is removed by the next run.
    std::fs::write(dir.join("classes/gone.lua"), "---@meta\n").unwrap();
    let list = std::fs::read_to_string(dir.join(".morc-luals")).unwrap();
    std::fs::write(dir.join(".morc-luals"), format!("{list}classes/gone.lua\n")).unwrap();
    generate(&dir);
    assert!(!dir.join("classes/gone.lua").exists() && dir.join("classes/engine.lua").exists());
    std::fs::remove_dir_all(&dir).unwrap();

    // A folder of the user's own (a project with its skills.lua) is refused, untouched.
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("skills.lua"), "-- mine\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_morc")).args(["doc", "--luals"]).arg(&dir).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("empty or new folder"), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_to_string(dir.join("skills.lua")).unwrap(), "-- mine\n");
    assert!(!dir.join("morc.lua").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
