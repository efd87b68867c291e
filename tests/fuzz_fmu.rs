//! Fuzzing what an FMU brings from outside: the archive (`morc_fmi::archive::extract`) and its
//! modelDescription.xml (`morc_fmi::description::parse`). No input panics or hangs; nothing
//! is written outside the extraction folder; no input makes morc allocate more than the
//! limits allow, whatever sizes the archive declares (a counting allocator watches the
//! largest single allocation). Inputs: archives built with entry names that climb out
//! (`../`, absolute, backslashes, NUL), bombs, lying size fields, bytes flipped, and garbage;
//! model descriptions of FMI 2 and 3 with hostile values and dimensions, mutated and raw.
//!
//! Briefly in `cargo test`; at length:
//! `MORC_FUZZ_CASES=200000 cargo test --release --test fuzz_fmu -- --nocapture`.

use morc_test_support::alloc::{largest_allocation, reset_largest_allocation, CountingAllocator};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use morc_fmi::archive::{extract, Limits};
use morc_fmi::description::{parse, MAX_ARRAY_ELEMENTS};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn cases() -> u32 {
    std::env::var("MORC_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(1000)
}

/// What an archive may expand to here: small, so that bombs show quickly.
const LIMITS: Limits = Limits { max_total_bytes: 4 << 20, max_entries: 64, max_ratio: 200 };
/// No single allocation may exceed this while extracting (a few times the limits' total).
const MAX_ALLOCATION: usize = 16 << 20;

fn scratch() -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("fuzz_fmu_{}_{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)))
}

/// Every file under `dir` stays under it and none is a link; their total size.
fn inside(dir: &Path) -> u64 {
    let mut total = 0;
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    for e in entries.flatten() {
        let meta = std::fs::symlink_metadata(e.path()).unwrap();
        assert!(!meta.file_type().is_symlink(), "a link was extracted: {}", e.path().display());
        let canonical = e.path().canonicalize().unwrap();
        assert!(canonical.starts_with(dir.canonicalize().unwrap()), "{} is outside {}", canonical.display(), dir.display());
        total += if meta.is_dir() { inside(&e.path()) } else { meta.len() };
    }
    total
}

static ARCHIVES: AtomicUsize = AtomicUsize::new(0);
static EXTRACTED: AtomicUsize = AtomicUsize::new(0);

/// Extracts `bytes` into a fresh folder and checks what landed there; the folder is removed.
fn exercise_archive(bytes: &[u8]) -> Result<(), String> {
    ARCHIVES.fetch_add(1, Ordering::Relaxed);
    let dest = scratch();
    reset_largest_allocation();
    let result = extract(bytes, &dest, &LIMITS).map_err(String::from);
    let largest = largest_allocation();
    let total = inside(&dest);
    let _ = std::fs::remove_dir_all(&dest);
    assert!(largest <= MAX_ALLOCATION, "extracting {} bytes allocated {largest} bytes at once ({result:?})", bytes.len());
    assert!(total <= LIMITS.max_total_bytes, "{total} bytes extracted, more than the limit");
    match &result {
        Ok(()) => _ = EXTRACTED.fetch_add(1, Ordering::Relaxed),
        Err(e) => assert!(!e.is_empty()),
    }
    result
}

/// Entry names: ordinary, climbing out, absolute, odd.
fn entry_name() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => "[a-z]{1,8}(/[a-z]{1,8}){0,2}(\\.xml|\\.so|/)?",
        1 => prop::sample::select(vec![
            "../evil", "a/../../evil", "/etc/evil", "..\\evil", "C:\\evil", "a\0b", "", ".", "./", "a//b", "modelDescription.xml",
            "binaries/linux64/../../../evil.so", "\u{202e}txt.so", "a/./b", "..", "...",
        ])
        .prop_map(str::to_string),
    ]
}

#[derive(Clone, Debug)]
enum Entry {
    File { name: String, data: Vec<u8>, deflate: bool },
    Zeros { name: String, len: usize },
    Dir(String),
    Link(String, String),
}

fn entry() -> impl Strategy<Value = Entry> {
    prop_oneof![
        12 => (entry_name(), prop::collection::vec(any::<u8>(), 0..200), any::<bool>()).prop_map(|(name, data, deflate)| Entry::File { name, data, deflate }),
        2 => (entry_name(), 0..(3usize << 20)).prop_map(|(name, len)| Entry::Zeros { name, len }),
        2 => entry_name().prop_map(Entry::Dir),
        1 => (entry_name(), entry_name()).prop_map(|(a, b)| Entry::Link(a, b)),
    ]
}

fn build(entries: &[Entry]) -> Vec<u8> {
    use zip::write::SimpleFileOptions;
    use zip::CompressionMethod::{Deflated, Stored};
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for e in entries {
        // The writer refuses some names itself (duplicates): such entries are left out.
        let _ = match e {
            Entry::File { name, data, deflate } => {
                let method = if *deflate { Deflated } else { Stored };
                zip.start_file(name.as_str(), SimpleFileOptions::default().compression_method(method)).map(|()| zip.write_all(data).unwrap())
            }
            Entry::Zeros { name, len } => zip.start_file(name.as_str(), SimpleFileOptions::default().compression_method(Deflated)).map(|()| zip.write_all(&vec![0u8; *len]).unwrap()),
            Entry::Dir(name) => zip.add_directory(name.as_str(), SimpleFileOptions::default()),
            Entry::Link(name, target) => zip.add_symlink(name.as_str(), target.as_str(), SimpleFileOptions::default()),
        };
    }
    zip.finish().unwrap().into_inner()
}

/// Rewrites the size fields of every header: what a forged archive declares.
fn forge_sizes(bytes: &mut [u8], compressed: u32, uncompressed: u32) {
    let mut i = 0;
    while i + 30 <= bytes.len() {
        match u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]) {
            0x0403_4b50 => {
                bytes[i + 18..i + 22].copy_from_slice(&compressed.to_le_bytes());
                bytes[i + 22..i + 26].copy_from_slice(&uncompressed.to_le_bytes());
            }
            0x0201_4b50 => {
                bytes[i + 20..i + 24].copy_from_slice(&compressed.to_le_bytes());
                bytes[i + 24..i + 28].copy_from_slice(&uncompressed.to_le_bytes());
            }
            _ => {}
        }
        i += 1;
    }
}

fn mutate(mut bytes: Vec<u8>, edits: &[(prop::sample::Index, u8, u8)]) -> Vec<u8> {
    for (at, byte, op) in edits {
        if bytes.is_empty() {
            break;
        }
        let i = at.index(bytes.len());
        match op {
            0 => bytes[i] = *byte,
            1 => {
                bytes.remove(i);
            }
            2 => bytes.truncate(i),
            _ => bytes.insert(i, *byte),
        }
    }
    bytes
}

fn edits() -> impl Strategy<Value = Vec<(prop::sample::Index, u8, u8)>> {
    prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0..4u8), 0..8)
}

#[test]
fn no_fmu_archive_escapes_or_blows_up() {
    // Named cases first: what each must give.
    let climb = build(&[Entry::File { name: "../evil".into(), data: b"x".to_vec(), deflate: false }]);
    assert!(exercise_archive(&climb).unwrap_err().contains("outside the extraction folder"));
    let bomb = build(&[Entry::Zeros { name: "bomb".into(), len: 64 << 20 }]);
    assert!(exercise_archive(&bomb).unwrap_err().contains("zip bomb"));
    let mut lying = build(&[Entry::File { name: "big.so".into(), data: vec![7; 100], deflate: false }]);
    forge_sizes(&mut lying, u32::MAX - 1, u32::MAX - 1);
    assert!(exercise_archive(&lying).is_err());
    let mut small_claim = build(&[Entry::Zeros { name: "sneaky".into(), len: 3 << 20 }]);
    forge_sizes(&mut small_claim, 100, 100);
    assert!(exercise_archive(&small_claim).is_err(), "an entry expanding beyond what it declares");
    assert!(exercise_archive(b"PK\x05\x06garbage").is_err());
    let good = build(&[Entry::File { name: "modelDescription.xml".into(), data: b"<x/>".to_vec(), deflate: true }]);
    exercise_archive(&good).unwrap();

    let n = cases();
    let mut runner = TestRunner::new(Config { cases: n / 4 + 1, failure_persistence: None, ..Config::default() });
    let strategy = (prop::collection::vec(entry(), 0..6), prop_oneof![Just(Vec::new()), edits()], prop::option::weighted(0.1, (any::<u32>(), any::<u32>())));
    runner
        .run(&strategy, |(entries, edits, forged)| {
            let mut bytes = build(&entries);
            if let Some((c, u)) = forged {
                forge_sizes(&mut bytes, c, u);
            }
            let _ = exercise_archive(&mutate(bytes, &edits));
            Ok(())
        })
        .unwrap();
    let mut runner = TestRunner::new(Config { cases: n / 4 + 1, failure_persistence: None, ..Config::default() });
    runner
        .run(&prop::collection::vec(any::<u8>(), 0..300), |bytes| {
            let mut with_magic = b"PK\x03\x04".to_vec();
            with_magic.extend(&bytes);
            let _ = exercise_archive(&bytes);
            let _ = exercise_archive(&with_magic);
            Ok(())
        })
        .unwrap();
    eprintln!("fuzz fmu archive: {} inputs ({} extracted)", ARCHIVES.load(Ordering::Relaxed), EXTRACTED.load(Ordering::Relaxed));
}

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        20 => (0u32..20).prop_map(|x| x.to_string()),
        1 => prop::sample::select(vec!["-1", "4294967296", "18446744073709551615", "18446744073709551616", "1e3", "", "INF", "NaN", "0x10", "99999999999"])
            .prop_map(str::to_string),
        1 => any::<u64>().prop_map(|x| x.to_string()),
    ]
}

/// A model description: FMI 2 or 3, variables of random types, dimensions, derivatives and
/// a model structure that refer to whatever index or value reference came up.
fn description() -> impl Strategy<Value = String> {
    let v2 = (
        prop::sample::select(vec!["Real", "Real", "Real", "Integer", "Boolean", "String", "Enumeration", "Binary", ""]),
        number(),
        prop::option::weighted(0.2, number()),
        prop::sample::select(vec!["input", "output", "parameter", "local", "independent", "calculatedParameter", "x"]),
    );
    let v3 = (
        prop::sample::select(vec!["Float64", "Float32", "Int8", "UInt64", "Boolean", "String", "Binary", "Clock", "Enumeration", "Nope"]),
        number(),
        prop::collection::vec(prop_oneof![number().prop_map(|n| format!("start=\"{n}\"")), number().prop_map(|n| format!("valueReference=\"{n}\"")), Just(String::new())], 0..4),
        prop::option::weighted(0.2, number()),
        prop::sample::select(vec!["input", "output", "parameter", "structuralParameter", "local"]),
        prop::option::of(number()),
    );
    (any::<bool>(), prop::collection::vec(v2, 0..6), prop::collection::vec(v3, 0..6), prop::collection::vec(number(), 0..4), number(), 0..3u8).prop_map(
        |(fmi3, v2s, v3s, unknowns, indicators, names)| {
            let name = |i: usize| if names == 0 { "x".to_string() } else { format!("v{}", i % (names as usize * 2 + 1)) };
            let mut xml = String::new();
            if fmi3 {
                xml += &format!("<fmiModelDescription fmiVersion=\"3.0\" modelName=\"m\" instantiationToken=\"t\" numberOfEventIndicators=\"{indicators}\"><ModelExchange modelIdentifier=\"m\"/><DefaultExperiment stopTime=\"{indicators}\"/><ModelVariables>");
                for (i, (ty, vr, dims, derivative, causality, start)) in v3s.iter().enumerate() {
                    xml += &format!("<{ty} name=\"{}\" valueReference=\"{vr}\" causality=\"{causality}\"", name(i));
                    if let Some(d) = derivative {
                        xml += &format!(" derivative=\"{d}\"");
                    }
                    if let Some(s) = start {
                        xml += &format!(" start=\"{s}\"");
                    }
                    xml += ">";
                    for d in dims {
                        xml += &format!("<Dimension {d}/>");
                    }
                    xml += &format!("</{ty}>");
                }
                xml += "</ModelVariables><ModelStructure>";
                for u in &unknowns {
                    xml += &format!("<ContinuousStateDerivative valueReference=\"{u}\"/>");
                }
            } else {
                xml += &format!("<fmiModelDescription fmiVersion=\"2.0\" modelName=\"m\" guid=\"g\" numberOfEventIndicators=\"{indicators}\"><CoSimulation modelIdentifier=\"m\"/><ModelVariables>");
                for (i, (ty, vr, derivative, causality)) in v2s.iter().enumerate() {
                    xml += &format!("<ScalarVariable name=\"{}\" valueReference=\"{vr}\" causality=\"{causality}\">", name(i));
                    match derivative {
                        Some(d) => xml += &format!("<{ty} derivative=\"{d}\"/>"),
                        None if ty.is_empty() => {}
                        None => xml += &format!("<{ty} start=\"{vr}\"/>"),
                    }
                    xml += "</ScalarVariable>";
                }
                xml += "</ModelVariables><ModelStructure><Derivatives>";
                for u in &unknowns {
                    xml += &format!("<Unknown index=\"{u}\"/>");
                }
                xml += "</Derivatives>";
            }
            xml + "</ModelStructure></fmiModelDescription>"
        },
    )
}

static DESCRIPTIONS: AtomicUsize = AtomicUsize::new(0);
static PARSED: AtomicUsize = AtomicUsize::new(0);

/// Parse, then what morc does with a parsed description: size each variable.
fn exercise_description(xml: &str) {
    DESCRIPTIONS.fetch_add(1, Ordering::Relaxed);
    let Ok(md) = parse(xml) else { return };
    PARSED.fetch_add(1, Ordering::Relaxed);
    for v in &md.variables {
        assert!(v.len() <= MAX_ARRAY_ELEMENTS, "variable '{}' of {} elements accepted", v.name, v.len());
    }
    for (state, derivative) in &md.states {
        assert!(md.variables.iter().any(|v| v.value_reference == *derivative), "derivative {derivative} of state {state} is no variable");
    }
}

#[test]
fn no_model_description_panics_or_sizes_without_bound() {
    // Named cases: a dimension that would overflow, and a name given twice with dimensions.
    let huge = r#"<fmiModelDescription fmiVersion="3.0" modelName="m" instantiationToken="t"><ModelVariables>
        <Float64 name="a" valueReference="1"><Dimension start="4294967296"/><Dimension start="4294967296"/></Float64>
        </ModelVariables></fmiModelDescription>"#;
    assert!(parse(huge).unwrap_err().to_string().contains("variable 'a'"));
    let twice = r#"<fmiModelDescription fmiVersion="3.0" modelName="m" instantiationToken="t"><ModelVariables>
        <UInt64 name="n" valueReference="9" causality="structuralParameter" start="3"/>
        <Float64 name="a" valueReference="1"/>
        <Float64 name="a" valueReference="2"><Dimension valueReference="9"/></Float64>
        </ModelVariables></fmiModelDescription>"#;
    let md = parse(twice).unwrap();
    assert_eq!(md.variables[2].dimensions, vec![3]);

    let n = cases();
    let mut runner = TestRunner::new(Config { cases: n, failure_persistence: None, ..Config::default() });
    runner
        .run(&(description(), edits()), |(xml, edits)| {
            exercise_description(&xml);
            if !edits.is_empty() {
                exercise_description(&String::from_utf8_lossy(&mutate(xml.into_bytes(), &edits)));
            }
            Ok(())
        })
        .unwrap();
    let mut runner = TestRunner::new(Config { cases: n / 4 + 1, failure_persistence: None, ..Config::default() });
    runner
        .run(&prop::collection::vec(any::<u8>(), 0..300), |bytes| {
            exercise_description(&String::from_utf8_lossy(&bytes));
            Ok(())
        })
        .unwrap();
    eprintln!("fuzz fmu modelDescription: {} inputs ({} parsed)", DESCRIPTIONS.load(Ordering::Relaxed), PARSED.load(Ordering::Relaxed));
}
