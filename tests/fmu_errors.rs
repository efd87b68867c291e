//! Bad FMUs and bad use give one clear error naming the FMU, the call and
//! what the FMU said; hostile archives are rejected before anything is written.

use morc_test_support::doubles as common;
mod fmu_support;

use std::io::Read;
use std::path::{Path, PathBuf};

use common::func;
use fmu_support::*;
use morc_fmi::archive::{extract, Limits};
use morc_fmi::instance::{instantiate, Interface};
use morc_fmi::FmiError;
use morc_kernel::rt::RtPolicy;
use morc_kernel::AssemblyData;
use morc_kernel::AssemblySpec;
use morc_kernel::ClockKind;
use morc_kernel::Step;
use morc_kernel::Value;
use morc_kernel::{Engine, EngineConfig, Outcome};

/// Writes a zip with the given (name, content) entries.
/// The entries of an exported FMU, with `edit` applied to modelDescription.xml.
fn rewritten(model: &str, out: &str, edit: impl Fn(String) -> String, keep_binary: bool) -> PathBuf {
    let mut archive = zip::ZipArchive::new(std::fs::File::open(fmu_path(model)).unwrap()).unwrap();
    let mut entries: Vec<(String, Vec<u8>)> = Vec::new();
    for i in 0..archive.len() {
        let mut e = archive.by_index(i).unwrap();
        let name = e.name().unwrap().to_string();
        let mut data = Vec::new();
        e.read_to_end(&mut data).unwrap();
        if name == "modelDescription.xml" {
            data = edit(String::from_utf8(data).unwrap()).into_bytes();
        } else if !keep_binary {
            continue;
        }
        entries.push((name, data));
    }
    let path = scratch().join("bad").join(out);
    let refs: Vec<(&str, &[u8])> = entries.iter().map(|(n, d)| (n.as_str(), d.as_slice())).collect();
    zip_file(&path, &refs);
    path
}

fn open_error(path: &Path) -> FmiError {
    match morc_fmi::factory(path) {
        Ok(_) => panic!("{} opened", path.display()),
        Err(e) => e,
    }
}

/// The message of an archive error (the kind callers react to: the file itself is bad).
fn archive_error(path: &Path) -> String {
    let e = open_error(path);
    assert!(matches!(e, FmiError::Archive(_)), "{e:?}");
    e.to_string()
}

/// Runs one FMU component (inputs from a test source) and returns the run's outcome,
/// or the preparation error.
fn run_fmu(path: &Path, params: &[(&str, Value)], input: f64) -> Result<Outcome, String> {
    let mut a = AssemblySpec::new("errors");
    a.duration = Some(0.05);
    a.add(
        "src",
        "test",
        1,
        func(&[], &["y"], move || {
            Box::new(move |_, _, o| {
                o[0].set_real(input);
                Step::Continue
            })
        }),
    );
    add_fmu(&mut a, "fmu", path, 1, params);
    a.connect("src.y", "fmu.u");
    let config = EngineConfig { period: T, clock: ClockKind::Virtual, rt: RtPolicy { enabled: false, ..RtPolicy::default() } };
    let mut engine = Engine::start(config, Box::new(morc_kernel::IdealAxes::new(&[0.0], T, 10.0))).unwrap();
    engine.run(&a, &AssemblyData::new()).map(|r| r.outcome).map_err(|e| e.to_string())
}

#[test]
fn not_a_zip_archive() {
    let path = scratch().join("bad").join("garbage.fmu");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, b"this is no zip archive").unwrap();
    let e = archive_error(&path);
    assert!(e.contains("garbage.fmu") && e.contains("not a readable zip archive"), "{e}");
}

#[test]
fn archive_without_model_description() {
    let path = scratch().join("bad").join("empty.fmu");
    zip_file(&path, &[("readme.txt", b"hello")]);
    let e = archive_error(&path);
    assert!(e.contains("empty.fmu: not an FMU: it has no readable modelDescription.xml"), "{e}");
}

#[test]
fn paths_escaping_the_folder_are_rejected_before_writing() {
    let path = scratch().join("bad").join("traversal.fmu");
    zip_file(&path, &[("modelDescription.xml", b"<x/>"), ("../../escaped.txt", b"owned")]);
    let e = archive_error(&path);
    assert!(e.contains("\"../../escaped.txt\" would be written outside the extraction folder"), "{e}");
    let dest = scratch().join("traversal-dest");
    let bytes = std::fs::read(&path).unwrap();
    assert!(extract(&bytes, &dest.join("x"), &Limits::default()).is_err());
    assert!(!dest.join("escaped.txt").exists() && !scratch().join("escaped.txt").exists());
}

#[test]
fn zip_bombs_are_rejected() {
    // 64 MiB of zeros compress about 1000:1.
    let path = scratch().join("bad").join("bomb.fmu");
    let zeros = vec![0u8; 64 << 20];
    zip_file(&path, &[("modelDescription.xml", b"<x/>"), ("binaries/linux64/bomb.so", &zeros)]);
    let e = archive_error(&path);
    assert!(e.contains("rejected as a zip bomb") && e.contains("expands"), "{e}");
    // A total over the limit is rejected too, whatever the ratio.
    let small = Limits { max_total_bytes: 1000, ..Limits::default() };
    let path2 = scratch().join("bad").join("big.fmu");
    zip_file(&path2, &[("a.bin", &[7u8; 600]), ("b.bin", &[9u8; 600])]);
    let e = extract(&std::fs::read(&path2).unwrap(), &scratch().join("big-dest"), &small).unwrap_err().to_string();
    assert!(e.contains("more than 1000 bytes"), "{e}");
}

#[test]
fn an_unsupported_fmi_version_is_a_description_error() {
    let path = scratch().join("bad").join("fmi1.fmu");
    zip_file(&path, &[("modelDescription.xml", br#"<fmiModelDescription fmiVersion="1.0" modelName="old"><ModelVariables/></fmiModelDescription>"#)]);
    let e = open_error(&path);
    assert!(matches!(e, FmiError::Description(_)), "{e:?}");
    assert_eq!(e.to_string(), "fmi1.fmu: FMI version \"1.0\" is not supported (morc runs FMI 2.0 and 3.0)");
}

#[test]
fn guid_mismatch_names_the_call_and_quotes_the_fmu() {
    let path = rewritten(
        "morc_bessel",
        "wrong_guid.fmu",
        |xml| {
            let start = xml.find("guid=\"").unwrap() + 6;
            format!("{}{{00000000-0000-0000-0000-000000000000}}{}", &xml[..start], &xml[start + 38..])
        },
        true,
    );
    let e = run_fmu(&path, &[], 1.0).unwrap_err();
    assert!(e.contains("wrong_guid.fmu: fmi2Instantiate failed"), "{e}");
    assert!(e.contains("GUID {00000000-0000-0000-0000-000000000000} matches no model of this binary"), "{e}");
    // The typed error names the call that failed.
    let fmu = morc_fmi::Fmu::open(&path).unwrap();
    let e = instantiate(&fmu, Interface::CoSimulation, "x", false).err().unwrap();
    assert!(matches!(e, FmiError::Call { call: "fmi2Instantiate", .. }), "{e:?}");
}

#[test]
fn no_binary_for_this_platform() {
    let path = rewritten("morc_bessel", "no_binary.fmu", |x| x, false);
    let e = run_fmu(&path, &[], 1.0).unwrap_err();
    assert!(e.contains("no_binary.fmu: no binary for this platform: binaries/linux64/morc_bessel.so is missing"), "{e}");
    let e = morc_fmi::Fmu::open(&path).unwrap().binary("morc_bessel").unwrap_err();
    assert!(matches!(e, FmiError::Binary(_)), "{e:?}");
}

#[test]
fn unknown_parameter_and_wrong_type() {
    let e = run_fmu(&fmu_path("morc_bessel"), &[("cutoff", Value::Real(3.0))], 1.0).unwrap_err();
    assert!(e.contains("unknown parameter 'cutoff' of the FMU") && e.contains("morc_bessel.fmu; known: fc, fmu_logging"), "{e}");
    let e = run_fmu(&fmu_path("morc_bessel"), &[("order", Value::String("two".into()))], 1.0).unwrap_err();
    assert!(e.contains("morc_bessel.fmu: parameter 'order' is integer, got string"), "{e}");
}

#[test]
fn an_error_in_initialisation_quotes_the_fmu() {
    let e = run_fmu(&fmu_path("morc_bessel"), &[("fc", Value::Real(900.0))], 1.0).unwrap_err();
    assert!(e.contains("morc_bessel.fmu: fmi2ExitInitializationMode returned Error; the FMU said:"), "{e}");
    assert!(e.contains("below the Nyquist frequency 500 Hz"), "{e}");
}

#[test]
fn an_fmu_error_in_a_step_faults_the_assembly() {
    // The FMU's sample period is 3 ms but morc steps it every 1 ms.
    let outcome = run_fmu(&fmu_path("morc_bessel"), &[("sample_period", Value::Real(0.003))], 1.0).unwrap();
    let Outcome::Fault(e) = outcome else { panic!("{outcome:?}") };
    let e = e.message;
    assert!(e.contains("morc_bessel.fmu: fmi2DoStep returned Error; the FMU said:"), "{e}");
    assert!(e.contains("doStep of 0.001 s is not a whole number of sample periods"), "{e}");
}

#[test]
fn non_finite_outputs_fault_the_assembly() {
    let outcome = run_fmu(&fmu_path("morc_bessel"), &[], f64::NAN).unwrap();
    let Outcome::Fault(e) = outcome else { panic!("{outcome:?}") };
    let e = e.message;
    assert!(e.contains("morc_bessel.fmu: output with value reference 1 is NaN (non-finite)"), "{e}");
}

#[test]
fn the_same_archive_is_extracted_once() {
    let a = morc_fmi::Fmu::open(&fmu_path("morc_pid")).unwrap();
    let marker = a.folder.join("modelDescription.xml");
    let before = std::fs::metadata(&marker).unwrap().modified().unwrap();
    let b = morc_fmi::Fmu::open(&fmu_path("morc_pid")).unwrap();
    assert_eq!(a.folder, b.folder);
    assert_eq!(before, std::fs::metadata(&marker).unwrap().modified().unwrap());
    // A different archive gets a different folder.
    let c = morc_fmi::Fmu::open(&fmu_path("morc_ppi")).unwrap();
    assert_ne!(a.folder, c.folder);
}
