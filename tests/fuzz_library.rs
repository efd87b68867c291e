//! Fuzzing what `morc lib install` and `morc.lib.load` accept from strangers: manifests
//! (morc-lib.lua, run in a capped Lua state of their own) and library archives (.zip, .tar.gz).
//! No input may panic, hang, allocate without bound or write outside the folder it unpacks to.
//!
//! Briefly in `cargo test`; at length:
//!     MORC_FUZZ_CASES=200000 cargo test --release --test fuzz_library

use std::io::Write;
use std::path::{Path, PathBuf};

use morc_lua::library::parse_manifest;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

fn cases(default: u32) -> u32 {
    std::env::var("MORC_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn runner(n: u32) -> TestRunner {
    TestRunner::new(Config { cases: n, failure_persistence: None, ..Config::default() })
}

/// A Lua value as manifest text: strings (with quotes, escapes, long brackets), numbers,
/// booleans, nested tables, and expressions that compute.
fn lua_value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        "[a-z0-9._ <>=^~*-]{0,12}".prop_map(|s| format!("{s:?}")),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|x| format!("{x:?}")),
        Just("true".to_string()),
        Just("nil".to_string()),
        Just("'1.0' .. '.0'".to_string()),
        Just("[[long\nstring]]".to_string()),
        Just("(\"x\"):rep(3)".to_string()),
        Just("io".to_string()),
        Just("os and os.execute('echo pwned')".to_string()),
        Just("require".to_string()),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop::collection::vec((prop::option::of("[a-z_]{1,8}"), inner), 0..4).prop_map(|items| {
            let fields: Vec<String> = items
                .into_iter()
                .map(|(k, v)| match k {
                    Some(k) => format!("{k} = {v}"),
                    None => v,
                })
                .collect();
            format!("{{ {} }}", fields.join(", "))
        })
    })
}

/// A manifest: the known fields, each present or not, with any value; sometimes extra code.
fn manifest_text() -> impl Strategy<Value = String> {
    let field = |k: &'static str| prop::option::of(lua_value()).prop_map(move |v| v.map(|v| format!("{k} = {v}")));
    let prefix = prop_oneof![
        Just(String::new()),
        Just("local x = 1\n".to_string()),
        Just("while true do end\n".to_string()),
        Just("local t = {} for i = 1, 1e7 do t[i] = i end\n".to_string()),
        Just("local s = ('x'):rep(1 << 30)\n".to_string()),
        Just("error(setmetatable({}, { __tostring = function() while true do end end }))\n".to_string()),
        Just("return setmetatable({}, { __index = function() while true do end end })\n".to_string()),
    ];
    (prefix, field("name"), field("version"), field("morc"), field("depends"), field("doc"), field("capabilities")).prop_map(|(prefix, a, b, c, d, e, f)| {
        let fields: Vec<String> = [a, b, c, d, e, f].into_iter().flatten().collect();
        format!("{prefix}return {{ {} }}\n", fields.join(", "))
    })
}

const GOOD: &str = "return { name = \"acme-grip\", version = \"1.2.0\", morc = \">=0.1\", depends = { sweep = \"^1.0\" }, capabilities = { \"io\", \"process\" }, doc = \"grips\" }\n";

#[test]
fn manifests_never_panic_hang_or_run_outside_their_state() {
    let n = cases(300);
    let mut tried = 0u64;
    // Fixed cases: the good one parses; the traps are refused with the file named.
    let good = parse_manifest("acme-grip/morc-lib.lua", GOOD.as_bytes()).unwrap();
    assert_eq!((good.name.as_str(), good.capabilities.clone()), ("acme-grip", vec!["io".to_string(), "process".to_string()]));
    for (text, expect) in [
        ("while true do end", "runs too long"),
        ("local s = ('x'):rep(1 << 40) return {}", "acme/morc-lib.lua"),
        ("return { name = 'a', version = '1', capabilities = { 'root' } }", "unknown capability 'root'"),
        ("os.execute('touch /tmp/pwned') return {}", "acme/morc-lib.lua"),
        ("return io.open('/etc/passwd')", "acme/morc-lib.lua"),
        ("return require 'os'", "acme/morc-lib.lua"),
        ("\x1bLua", "acme/morc-lib.lua"),
    ] {
        let err = parse_manifest("acme/morc-lib.lua", text.as_bytes()).unwrap_err();
        assert!(err.contains(expect), "{text:?}: {err}");
        tried += 1;
    }
    runner(n)
        .run(&manifest_text(), |text| {
            let _ = parse_manifest("fuzz/morc-lib.lua", text.as_bytes());
            Ok(())
        })
        .unwrap();
    tried += n as u64;
    // Raw bytes, and the good manifest with bytes flipped.
    runner(n)
        .run(&(prop::collection::vec(any::<u8>(), 0..300), prop::collection::vec((0..GOOD.len(), any::<u8>()), 0..6)), |(raw, flips)| {
            let _ = parse_manifest("fuzz/morc-lib.lua", &raw);
            let mut bytes = GOOD.as_bytes().to_vec();
            for (i, b) in flips {
                bytes[i] = b;
            }
            if let Ok(m) = parse_manifest("fuzz/morc-lib.lua", &bytes) {
                assert!(!m.name.is_empty() && m.capabilities.iter().all(|c| ["io", "process", "network", "bus", "binary"].contains(&c.as_str())));
            }
            Ok(())
        })
        .unwrap();
    tried += 2 * n as u64;
    eprintln!("fuzz library manifest: {tried} inputs");
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every path under `dir` (files and folders), to check nothing landed outside it.
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            out.push(e.path());
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                out.extend(tree(&e.path()));
            }
        }
    }
    out
}

/// Entry names an attacker would try, and ordinary ones.
fn entry_name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{1,6}(/[a-z]{1,6}){0,2}(\\.lua)?",
        Just("lib/morc-lib.lua".to_string()),
        Just("../escape.lua".to_string()),
        Just("a/../../escape.lua".to_string()),
        Just("/tmp/abs.lua".to_string()),
        Just("./a/./b".to_string()),
        Just("a//b".to_string()),
        Just(String::new()),
        Just("dir/".to_string()),
        "[^\u{0}]{0,12}",
    ]
}

/// A tar header for `name` with `size` (octal field as given: may be garbage) and `kind`.
fn tar_header(name: &str, size_field: &str, kind: u8) -> [u8; 512] {
    let mut h = [0u8; 512];
    let n = name.as_bytes();
    h[..n.len().min(100)].copy_from_slice(&n[..n.len().min(100)]);
    let s = size_field.as_bytes();
    h[124..124 + s.len().min(12)].copy_from_slice(&s[..s.len().min(12)]);
    h[156] = kind;
    h[257..262].copy_from_slice(b"ustar");
    h
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

#[test]
fn archives_never_panic_or_write_outside_their_folder() {
    let n = cases(150);
    let work = scratch("fuzz-archives");
    let mut tried = 0u64;
    let size_field = prop_oneof![(0u64..2000).prop_map(|s| format!("{s:011o}")), Just("77777777777".to_string()), Just("zzzz".to_string()), Just(String::new()), Just("-1".to_string()),];
    let entry = (entry_name(), size_field, prop::sample::select(vec![b'0', 0, b'5', b'L', b'2', b'x']), prop::collection::vec(any::<u8>(), 0..600));
    let case = std::sync::atomic::AtomicU64::new(0);
    runner(n)
        .run(&(prop::collection::vec(entry, 0..5), any::<bool>(), prop::collection::vec(any::<u8>(), 0..200)), |(entries, truncate, raw)| {
            let box_dir = work.join(format!("t{}", case.fetch_add(1, std::sync::atomic::Ordering::Relaxed)));
            let to = box_dir.join("out");
            std::fs::create_dir_all(&to).unwrap();
            // tar.gz of the entries (possibly cut short), and raw bytes as a .tar.gz and a .zip.
            let mut tar = Vec::new();
            for (name, size, kind, data) in &entries {
                tar.extend_from_slice(&tar_header(name, size, *kind));
                tar.extend_from_slice(data);
                tar.resize(tar.len().div_ceil(512) * 512, 0);
            }
            if truncate {
                tar.truncate(tar.len() / 2);
            }
            let tgz = box_dir.join("a.tar.gz");
            std::fs::write(&tgz, gzip(&tar)).unwrap();
            let _ = morc::cli::library::extract_tar_gz(&tgz, &to);
            std::fs::write(&tgz, &raw).unwrap();
            let _ = morc::cli::library::extract_tar_gz(&tgz, &to);
            // A well-formed zip with the same names, and the raw bytes as a zip.
            let zip_path = box_dir.join("a.zip");
            {
                let mut zip = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
                for (name, _, kind, data) in &entries {
                    let opts: zip::write::SimpleFileOptions = Default::default();
                    if *kind == b'5' {
                        let _ = zip.add_directory(name.as_str(), opts);
                    } else if zip.start_file(name.as_str(), opts).is_ok() {
                        let _ = zip.write_all(data);
                    }
                }
                let _ = zip.finish();
            }
            let _ = morc::cli::library::extract_zip(&zip_path, &to);
            std::fs::write(&zip_path, &raw).unwrap();
            let _ = morc::cli::library::extract_zip(&zip_path, &to);
            // Whatever landed, landed in `to`; then a library there is looked for and read.
            for p in tree(&box_dir) {
                let ok = p.starts_with(&to) || p == to || p == tgz || p == zip_path;
                prop_assert!(ok, "{} written outside the folder", p.display());
            }
            if let Ok(root) = morc::cli::library::library_root(&to) {
                let _ = morc_lua::library::read_manifest(&root);
            }
            let _ = std::fs::remove_dir_all(&box_dir);
            Ok(())
        })
        .unwrap();
    tried += 4 * n as u64;
    eprintln!("fuzz library archive: {tried} inputs");
}

#[test]
fn a_decompression_bomb_is_refused_without_filling_memory() {
    // 100 MB of zeros as one tar entry: gzip makes it ~100 KB; extraction stops at the cap.
    let work = scratch("fuzz-bomb");
    let tgz = work.join("bomb.tar.gz");
    let mut e = flate2::write::GzEncoder::new(std::fs::File::create(&tgz).unwrap(), flate2::Compression::fast());
    e.write_all(&tar_header("lib/big", &format!("{:011o}", 100u64 << 20), b'0')).unwrap();
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..100 {
        e.write_all(&zeros).unwrap();
    }
    e.finish().unwrap();
    let err = morc::cli::library::extract_tar_gz(&tgz, &work.join("out")).unwrap_err();
    assert!(err.contains("unpacks to more than 64 MB"), "{err}");
}
