//! Shared by the FMU tests: exported FMUs built from this repo, a private
//! extraction cache, and assembly helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use morc_fmi::description::FmiVersion;
use morc_fmi::export;
use morc_kernel::rt::RtPolicy;
use morc_kernel::AssemblyData;
use morc_kernel::AssemblySpec;
use morc_kernel::ClockKind;
use morc_kernel::IdealAxes;
use morc_kernel::Value;
use morc_kernel::{Engine, EngineConfig, RunResult};

pub const T: f64 = 0.001;

/// A scratch folder for this test binary.
pub fn scratch() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("fmu-tests-{}", std::process::id()))
}

/// Exports every morc FMU once per test binary and returns its folder.
/// The cache goes under the target folder, not the user's home.
pub fn exported() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        // Set once, before any thread reads it.
        std::env::set_var("MORC_FMU_CACHE", scratch().join("cache"));
        let exe = std::env::current_exe().unwrap();
        let library = export::find_library(&exe).unwrap_or_else(|| panic!("the morc-fmu library was not built next to {}: run the tests with `cargo test` from the workspace", exe.display()));
        let dir = scratch().join("fmus");
        for block in export::EXPORTED {
            for version in [FmiVersion::V2, FmiVersion::V3] {
                export::package(block, version, &library, &dir).unwrap();
            }
        }
        dir
    })
}

pub fn fmu_path(model: &str) -> PathBuf {
    exported().join(format!("{model}.fmu"))
}

/// The FMI 3.0 export of `model`.
pub fn fmu3_path(model: &str) -> PathBuf {
    exported().join(format!("{model}-fmi3.fmu"))
}

/// Adds an FMU component made from `path`.
pub fn add_fmu(spec: &mut AssemblySpec, name: &str, path: &Path, every: u32, params: &[(&str, Value)]) {
    let factory = morc_fmi::factory(path).unwrap_or_else(|e| panic!("{e}"));
    spec.add(name, "fmu", every, factory);
    let c = spec.components.last_mut().unwrap();
    c.params = params.iter().map(|(p, v)| (p.to_string(), v.clone())).collect();
}

pub fn probe(spec: &mut AssemblySpec, name: &str, from: &str) {
    spec.add_native(name, "probe", 1, &[]);
    spec.connect(from, &format!("{name}.u"));
}

pub fn run(spec: &AssemblySpec, clock: ClockKind) -> RunResult {
    run_at(spec, clock, T)
}

/// [`run`] with base period `period` (s).
pub fn run_at(spec: &AssemblySpec, clock: ClockKind, period: f64) -> RunResult {
    let config = EngineConfig { period, clock, rt: RtPolicy { enabled: false, ..RtPolicy::default() } };
    let mut engine = Engine::start(config, Box::new(IdealAxes::new(&[0.0], period, 10.0))).unwrap();
    engine.run(spec, &AssemblyData::new()).unwrap()
}

pub fn samples(r: &RunResult, probe: &str) -> Vec<f64> {
    match r.data.get(&format!("{probe}.u")) {
        Some(Value::Vector(v)) => v.clone(),
        other => panic!("no samples for {probe}: {other:?}\n{}", r.report()),
    }
}

pub fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Writes a zip archive of `entries` (name, content) at `path`.
/// Builds the C test FMU `tests/fmu_support/c/<stem>.c` (with `<stem>.xml`, whose
/// `{morc-<stem>-token}` becomes `token`) into `<scratch>/<stem>/<name>`. One shared library
/// per FMU name: tests run in parallel and must not load a file another is writing.
pub fn build_c_fmu(stem: &str, token: &str, name: &str) -> PathBuf {
    exported(); // sets the private extraction cache
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fmu_support/c");
    let dir = scratch().join(stem);
    std::fs::create_dir_all(&dir).unwrap();
    let so = dir.join(format!("{name}.so"));
    if !so.exists() {
        // Built beside and renamed into place: tests of one binary run in parallel, and one must
        // never load (or zip) a library another is still writing.
        let staging = dir.join(format!("{name}.{}.{:?}.so.tmp", std::process::id(), std::thread::current().id()));
        let c = src.join(format!("{stem}.c"));
        // FMPy binds every FMI function: an FMU compared with it links weak stand-ins for the rest.
        let stubs = std::fs::read_to_string(&c).unwrap().lines().next().is_some_and(|l| l.contains("links fmi_stubs.c"));
        let out = std::process::Command::new("cc")
            .args(["-shared", "-fPIC", "-O1", "-o"])
            .arg(&staging)
            .arg(&c)
            .args(stubs.then(|| src.join("fmi_stubs.c")))
            .output()
            .expect("a C compiler (cc) to build the test FMU");
        assert!(out.status.success(), "cc failed:\n{}", String::from_utf8_lossy(&out.stderr));
        std::fs::rename(&staging, &so).unwrap();
    }
    let xml = std::fs::read_to_string(src.join(format!("{stem}.xml"))).unwrap().replace(&format!("{{morc-{stem}-token}}"), token);
    let binary = std::fs::read(&so).unwrap();
    // FMI 2 names the platform folder "linux64", FMI 3 "x86_64-linux".
    let platform = if xml.contains("fmiVersion=\"2.0\"") { morc_fmi::export::platform_folder() } else { morc_fmi::export::platform_tuple() }.unwrap();
    let path = dir.join(name);
    let staging = dir.join(format!("{name}.{}.{:?}.tmp", std::process::id(), std::thread::current().id()));
    zip_file(&staging, &[("modelDescription.xml", xml.as_bytes()), (&format!("binaries/{platform}/{stem}.so"), &binary)]);
    std::fs::rename(&staging, &path).unwrap();
    path
}

pub fn zip_file(path: &Path, entries: &[(&str, &[u8])]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut zip = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, content) in entries {
        zip.start_file(*name, options).unwrap();
        std::io::Write::write_all(&mut zip, content).unwrap();
    }
    zip.finish().unwrap();
}

/// `morc fmu sim FMU ARGS -o OUT`: its output (status, stderr) and the CSV it wrote.
pub fn morc_sim(fmu: &Path, args: &[&str], out: &Path) -> (std::process::Output, String) {
    let _ = std::fs::remove_file(out);
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_morc"))
        .args(["fmu", "sim", fmu.to_str().unwrap()])
        .args(args)
        .args(["-o", out.to_str().unwrap()])
        .env("MORC_FMU_CACHE", scratch().join("cache"))
        .output()
        .unwrap();
    let csv = std::fs::read_to_string(out).unwrap_or_default();
    (o, csv)
}

pub fn morc_ok(fmu: &Path, args: &[&str], out: &Path) -> String {
    let (o, csv) = morc_sim(fmu, args, out);
    assert!(o.status.success(), "morc fmu sim {} {args:?} failed:\n{}", fmu.display(), String::from_utf8_lossy(&o.stderr));
    csv
}

pub fn fmpy_sim(fmu: &Path, args: &[&str], out: &Path) -> String {
    let o = std::process::Command::new("python3")
        .args(["-m", "fmpy", "simulate", fmu.to_str().unwrap()])
        .args(args)
        .args(["--output-file", out.to_str().unwrap()])
        .output()
        .expect("python3 with FMPy (python3 -m pip install fmpy)");
    assert!(o.status.success(), "fmpy simulate {} {args:?} failed:\n{}", fmu.display(), String::from_utf8_lossy(&o.stderr));
    std::fs::read_to_string(out).unwrap()
}
