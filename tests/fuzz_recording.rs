//! Fuzzing what morc reads back from recordings (`morc rec info`, `morc
//! plot`: `record::read::info` and `record::plot::load`): a real recording
//! with bytes flipped, overwritten, cut, spliced; plain garbage; and
//! well-formed HDF5 files with the wrong shapes, types and attributes (a
//! 2^40-sample dataset in a 2 KB file among them). Each must give the
//! content or an error naming the file — never a panic, and never an
//! allocation the file's size does not justify.
//!
//! Cases: `MORC_FUZZ_CASES` (default 200 per property). At length:
//! `MORC_FUZZ_CASES=200000 cargo test --release --test fuzz_recording`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use hdf5_metno as hdf5;
use morc_kernel::AssemblyData;
use morc_kernel::{Component, InitContext, StepContext};
use morc_kernel::{Value, ValueType};
use morc_record::{write_timing, RecordedSignal, Recorder, RecordingMetadata};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

fn cases() -> u32 {
    std::env::var("MORC_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(200)
}

fn dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("morc-fuzz-recording-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    })
}

/// A fresh file name for one input.
fn input_path() -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    dir().join(format!("input-{}.h5", N.fetch_add(1, Ordering::Relaxed)))
}

/// A real recording: scalar, vector, integer and boolean signals, 300
/// samples, closed cleanly, with the timing group; its bytes.
fn seed() -> &'static [u8] {
    static SEED: OnceLock<Vec<u8>> = OnceLock::new();
    SEED.get_or_init(|| {
        let path = dir().join("seed.h5");
        let _ = std::fs::remove_file(&path);
        let signals = vec![
            RecordedSignal::new("robot.q", ValueType::Vector(3), "rad", "joint positions"),
            RecordedSignal::new("wave.y", ValueType::Real, "m", "a sine"),
            RecordedSignal::new("mon.n", ValueType::Integer, "", ""),
            RecordedSignal::new("mon.ok", ValueType::Boolean, "", ""),
        ];
        let meta = RecordingMetadata { path: path.clone(), robot: "fuzz arm".into(), assembly: "fuzz".into(), base_period: 0.001, notes: "seed".into(), ..Default::default() };
        let mut rec = Recorder::new(signals, meta, 1);
        rec.configure().unwrap();
        let data = AssemblyData::new();
        rec.initialize(&InitContext { name: "rec", period: 0.001, base_period: 0.001, data: &data, thread: &Default::default(), base_latency: 0 }, &mut [])
            .unwrap();
        let mut inputs = vec![Value::zero(ValueType::Vector(3)), Value::Real(0.0), Value::Integer(0), Value::Boolean(false)];
        for step in 0..300u64 {
            let t = step as f64 * 0.001;
            inputs[0].as_mut_slice().iter_mut().enumerate().for_each(|(i, x)| *x = t * i as f64);
            inputs[1].set_real(t.sin());
            inputs[2] = Value::Integer(step as i64);
            inputs[3] = Value::Boolean(step % 3 == 0);
            rec.step(&StepContext { step, time: t, period: 0.001 }, &inputs, &mut []);
        }
        drop(rec); // closes the file
        write_timing(&path, &[]).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        // The seed itself reads back whole.
        let loaded = morc_record::plot::load(&path, &[]).unwrap();
        assert_eq!(loaded.time.len(), 300);
        assert!(morc_record::read::info(&path).unwrap().contains("robot.q"));
        bytes
    })
}

/// Reads `path` as `morc rec info` and `morc plot` do, in-process: no panic,
/// and an error names the file. 0: both read it; 1: an error naming the file;
/// 2: an error that does not name it; 3: data that does not hang together.
fn read_in_process(path: &Path) -> i32 {
    let name = path.display().to_string();
    let info = morc_record::read::info(path);
    if info.as_ref().is_err_and(|e| !e.to_string().contains(&name)) {
        eprintln!("info's error does not name the file: {info:?}");
        return 2;
    }
    let loaded = morc_record::plot::load(path, &[]);
    match &loaded {
        Err(e) if !e.to_string().contains(&name) => {
            eprintln!("load's error does not name the file: {e}");
            return 2;
        }
        Err(_) => {}
        Ok(l) => {
            for s in &l.signals {
                if s.labels.len() != s.columns.len() || s.columns.iter().any(|c| c.len() > l.time.len()) {
                    eprintln!("{}: {} labels, {} columns, {} samples", s.name, s.labels.len(), s.columns.len(), l.time.len());
                    return 3;
                }
            }
        }
    }
    i32::from(!(info.is_ok() && loaded.is_ok()))
}

/// What became of the inputs of one property.
#[derive(Default)]
struct Tally {
    tried: std::cell::Cell<u64>,
    read_whole: std::cell::Cell<u64>,
    /// libhdf5 crashed or looped on the input: morc's commands read files in a
    /// reader process ([`morc_record::read::isolated`]) and say so, naming the file.
    library_failed: std::cell::Cell<u64>,
}

impl Tally {
    fn report(&self, what: &str) {
        eprintln!("fuzz recording ({what}): {} inputs ({} read whole, {} crashed or hung libhdf5 and were reported as damaged)", self.tried.get(), self.read_whole.get(), self.library_failed.get());
    }
}

/// HDF5 is used by one test at a time: a reader process forked while
/// another thread holds the library's lock would wait for it for ever.
static HDF5: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn hdf5_lock() -> std::sync::MutexGuard<'static, ()> {
    HDF5.lock().unwrap_or_else(|p| p.into_inner())
}

/// Reads `path` as the commands do (in a reader process) and checks the answer.
fn read_back(path: &Path, tally: &Tally) -> Result<(), TestCaseError> {
    tally.tried.set(tally.tried.get() + 1);
    match morc_record::read::isolated(path, std::time::Duration::from_secs(10), || read_in_process(path)) {
        Ok(0) => tally.read_whole.set(tally.read_whole.get() + 1),
        Ok(1) => {}
        Ok(101) => return Err(TestCaseError::fail(format!("reading {} panicked", path.display()))),
        Ok(code) => return Err(TestCaseError::fail(format!("reading {} answered wrongly ({code}; see stderr)", path.display()))),
        Err(e) => {
            prop_assert!(e.contains(&path.display().to_string()), "{e}");
            tally.library_failed.set(tally.library_failed.get() + 1);
            // Keep the input for a bug report to HDF5.
            let _ = std::fs::copy(path, path.with_extension("libhdf5-failure.h5"));
        }
    }
    Ok(())
}

/// One change to a file's bytes.
#[derive(Debug, Clone)]
enum Mutation {
    /// Set the byte at (position modulo length).
    Set(usize, u8),
    /// Flip one bit.
    Flip(usize, u8),
    /// Overwrite a run with one value (a run of zeros: a hole from a crash).
    Fill(usize, usize, u8),
    /// Cut the file at (position modulo length).
    Truncate(usize),
    /// Remove a run of bytes.
    Delete(usize, usize),
    /// Insert bytes.
    Insert(usize, Vec<u8>),
    /// Copy a run of the file elsewhere in it (plausible structures in the wrong place).
    Splice(usize, usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Mutation::Set(p, b)),
        4 => (any::<usize>(), 0u8..8).prop_map(|(p, b)| Mutation::Flip(p, b)),
        1 => (any::<usize>(), 1usize..64, prop_oneof![Just(0u8), Just(0xff), any::<u8>()]).prop_map(|(p, n, b)| Mutation::Fill(p, n, b)),
        1 => any::<usize>().prop_map(Mutation::Truncate),
        1 => (any::<usize>(), 1usize..256).prop_map(|(p, n)| Mutation::Delete(p, n)),
        1 => (any::<usize>(), proptest::collection::vec(any::<u8>(), 1..32)).prop_map(|(p, v)| Mutation::Insert(p, v)),
        1 => (any::<usize>(), any::<usize>(), 1usize..128).prop_map(|(a, b, n)| Mutation::Splice(a, b, n)),
    ]
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    if bytes.is_empty() {
        return;
    }
    let len = bytes.len();
    match m {
        Mutation::Set(p, b) => bytes[p % len] = *b,
        Mutation::Flip(p, bit) => bytes[p % len] ^= 1 << bit,
        Mutation::Fill(p, n, b) => {
            let s = p % len;
            bytes[s..(s + n).min(len)].fill(*b);
        }
        Mutation::Truncate(p) => bytes.truncate(p % len),
        Mutation::Delete(p, n) => {
            let s = p % len;
            bytes.drain(s..(s + n).min(len));
        }
        Mutation::Insert(p, v) => {
            let s = p % len;
            bytes.splice(s..s, v.iter().copied());
        }
        Mutation::Splice(from, to, n) => {
            let (f, t) = (from % len, to % len);
            let run: Vec<u8> = bytes[f..(f + n).min(len)].to_vec();
            let end = (t + run.len()).min(len);
            bytes[t..end].copy_from_slice(&run[..end - t]);
        }
    }
}

fn runner() -> TestRunner {
    TestRunner::new(Config { cases: cases(), failure_persistence: None, ..Config::default() })
}

#[test]
fn mutated_recordings_read_back_or_fail_naming_the_file() {
    let _hdf5 = hdf5_lock();
    let seed = seed();
    let tally = Tally::default();
    runner()
        .run(&proptest::collection::vec(mutation(), 1..6), |mutations| {
            let mut bytes = seed.to_vec();
            for m in &mutations {
                apply(&mut bytes, m);
            }
            let path = input_path();
            std::fs::write(&path, &bytes).unwrap();
            read_back(&path, &tally)?;
            let _ = std::fs::remove_file(&path);
            Ok(())
        })
        .unwrap();
    tally.report("mutated");
}

#[test]
fn garbage_and_cut_files_fail_naming_the_file() {
    let _hdf5 = hdf5_lock();
    let seed = seed();
    let signature: &[u8] = b"\x89HDF\r\n\x1a\n";
    let tally = Tally::default();
    let input = prop_oneof![
        // Anything at all.
        proptest::collection::vec(any::<u8>(), 0..4096),
        // HDF5's signature, then garbage.
        proptest::collection::vec(any::<u8>(), 0..4096).prop_map(move |v| [signature, &v[..]].concat()),
        // The real recording cut anywhere.
        (0..seed.len()).prop_map(move |n| seed[..n].to_vec()),
        // The real recording's beginning, then garbage.
        ((0..seed.len()), proptest::collection::vec(any::<u8>(), 0..4096)).prop_map(move |(n, v)| [&seed[..n], &v[..]].concat()),
    ];
    runner()
        .run(&input, |bytes| {
            let path = input_path();
            std::fs::write(&path, &bytes).unwrap();
            read_back(&path, &tally)?;
            let _ = std::fs::remove_file(&path);
            Ok(())
        })
        .unwrap();
    // A folder and a missing file, once.
    let e = morc_record::read::info(dir()).unwrap_err().to_string();
    assert!(e.contains("is a folder"), "{e}");
    let missing = dir().join("missing.h5");
    let e = morc_record::plot::load(&missing, &[]).unwrap_err().to_string();
    assert!(e.contains("no file") && e.contains(&missing.display().to_string()), "{e}");
    tally.report("garbage, cut");
}

/// A dataset or attribute as a crafted file might hold it.
#[derive(Debug, Clone)]
enum Data {
    /// f64 of this shape (chunked and resizable when `chunk` is given; unwritten: fill values).
    Reals(Vec<usize>, Option<Vec<usize>>),
    Ints(Vec<usize>),
    Bytes(Vec<usize>),
    /// A string where numbers belong.
    Text(String),
    /// Compound records.
    Pairs(usize),
}

fn shape() -> impl Strategy<Value = Vec<usize>> {
    prop_oneof![Just(vec![]), (0usize..40).prop_map(|n| vec![n]), (0usize..40, 0usize..5).prop_map(|(n, m)| vec![n, m]), (0usize..8, 0usize..4, 0usize..4).prop_map(|(a, b, c)| vec![a, b, c]),]
}

fn data() -> impl Strategy<Value = Data> {
    prop_oneof![
        4 => shape().prop_map(|s| Data::Reals(s, None)),
        // Huge declared sizes with nothing written: a tiny file claiming terabytes.
        1 => prop_oneof![Just(vec![1usize << 40]), Just(vec![1usize << 33, 1 << 10]), Just(vec![1usize << 20])]
            .prop_flat_map(|s| {
                let chunk = prop_oneof![Just(vec![64usize; s.len()]), Just(s.iter().map(|&d| d.min(1 << 28)).collect::<Vec<_>>())];
                (Just(s), chunk)
            })
            .prop_map(|(s, c)| Data::Reals(s, Some(c))),
        2 => shape().prop_map(Data::Ints),
        1 => shape().prop_map(Data::Bytes),
        1 => "[a-zé\\-]{0,12}".prop_map(Data::Text),
        1 => (0usize..10).prop_map(Data::Pairs),
    ]
}

#[derive(hdf5::H5Type, Clone, Copy)]
#[repr(C)]
struct Pair {
    a: f64,
    b: i32,
}

fn write_dataset(file: &hdf5::File, name: &str, d: &Data) -> hdf5::Result<()> {
    match d {
        Data::Reals(shape, None) => {
            let n: usize = shape.iter().product();
            let v: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
            let arr = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(shape), v).unwrap();
            file.new_dataset_builder().with_data(&arr).create(name)?;
        }
        Data::Reals(shape, Some(chunk)) => {
            file.new_dataset::<f64>().chunk(chunk.clone()).shape(shape.clone()).create(name)?;
        }
        Data::Ints(shape) => {
            let n: usize = shape.iter().product();
            let arr = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(shape), (0..n as i32).collect()).unwrap();
            file.new_dataset_builder().with_data(&arr).create(name)?;
        }
        Data::Bytes(shape) => {
            let n: usize = shape.iter().product();
            let arr = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(shape), (0..n).map(|i| i as u8).collect()).unwrap();
            file.new_dataset_builder().with_data(&arr).create(name)?;
        }
        Data::Text(s) => {
            let v: hdf5::types::VarLenUnicode = s.parse().unwrap();
            file.new_dataset::<hdf5::types::VarLenUnicode>().shape(()).create(name)?.write_scalar(&v)?;
        }
        Data::Pairs(n) => {
            let v: Vec<Pair> = (0..*n).map(|i| Pair { a: i as f64, b: i as i32 }).collect();
            file.new_dataset_builder().with_data(&v).create(name)?;
        }
    }
    Ok(())
}

fn write_attr(loc: &hdf5::Location, name: &str, d: &Data) -> hdf5::Result<()> {
    match d {
        Data::Reals(shape, _) | Data::Ints(shape) | Data::Bytes(shape) if shape.iter().product::<usize>() > 64 => Ok(()),
        Data::Reals(shape, _) => {
            let n: usize = shape.iter().product();
            let arr = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(shape), vec![1.5f64; n]).unwrap();
            loc.new_attr_builder().with_data(&arr).create(name).map(|_| ())
        }
        Data::Ints(shape) | Data::Bytes(shape) => {
            let n: usize = shape.iter().product();
            let arr = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(shape), vec![7i64; n]).unwrap();
            loc.new_attr_builder().with_data(&arr).create(name).map(|_| ())
        }
        Data::Text(s) => {
            let v: hdf5::types::VarLenUnicode = s.parse().unwrap();
            loc.new_attr::<hdf5::types::VarLenUnicode>().shape(()).create(name)?.write_scalar(&v)
        }
        Data::Pairs(n) => {
            let v: Vec<Pair> = (0..*n).map(|i| Pair { a: i as f64, b: i as i32 }).collect();
            loc.new_attr_builder().with_data(&v).create(name).map(|_| ())
        }
    }
}

#[test]
fn wrong_shapes_types_and_attributes_fail_naming_the_file() {
    let _hdf5 = hdf5_lock();
    let tally = Tally::default();
    static NAMES: [&str; 4] = ["time", "robot.q", "wave.y", "mon.n"];
    static ATTRS: [&str; 8] = ["unit", "description", "element_names", "assembly", "robot", "utc_start", "samples", "complete"];
    let (names, attrs) = (&NAMES, &ATTRS);
    let input = (
        proptest::collection::vec((proptest::sample::select(&names[..]), data()), 0..4),
        proptest::collection::vec((proptest::sample::select(&attrs[..]), data()), 0..4),
        proptest::collection::vec((proptest::sample::select(&attrs[..]), data()), 0..3),
        any::<bool>(),
    );
    runner()
        .run(&input, |(datasets, file_attrs, ds_attrs, groups)| {
            let path = input_path();
            let huge;
            {
                let file = hdf5::File::create(&path).unwrap();
                let mut made: Vec<(&str, &Data)> = Vec::new();
                for (name, d) in &datasets {
                    if !made.iter().any(|(n, _)| n == name) && write_dataset(&file, name, d).is_ok() {
                        made.push((*name, d));
                    }
                }
                // A dataset declared larger than the file could hold is refused, not read.
                huge = made.iter().any(|(_, d)| matches!(d, Data::Reals(s, Some(_)) if s.iter().product::<usize>() >= 1 << 30));
                for (name, d) in &file_attrs {
                    let _ = write_attr(&file, name, d);
                }
                if let Some((first, _)) = made.first() {
                    let ds = file.dataset(first).unwrap();
                    for (name, d) in &ds_attrs {
                        let _ = write_attr(&ds, name, d);
                    }
                }
                if groups {
                    // /assembly and /timing with members of the wrong kinds.
                    let g = file.create_group("assembly").unwrap();
                    let _ = write_attr(&g, "name", &Data::Pairs(2));
                    let c = g.create_group("c").unwrap();
                    let _ = write_attr(&c, "every", &Data::Text("often".into()));
                    let t = file.create_group("timing").unwrap();
                    let _ = t.new_dataset::<f64>().shape(3).create("not_a_group");
                    let _ = write_attr(&t.create_group("x").unwrap(), "mean", &Data::Text("fast".into()));
                }
            }
            read_back(&path, &tally)?;
            if huge {
                prop_assert!(morc_record::plot::load(&path, &[]).is_err(), "a 2^30-sample dataset in a small file was read");
            }
            let _ = std::fs::remove_file(&path);
            Ok(())
        })
        .unwrap();
    tally.report("wrong shapes, types, attributes");
}

#[test]
fn a_tiny_file_claiming_terabytes_is_refused_before_reading() {
    let _hdf5 = hdf5_lock();
    let path = dir().join("huge.h5");
    let _ = std::fs::remove_file(&path);
    {
        let file = hdf5::File::create(&path).unwrap();
        file.new_dataset::<f64>().chunk(1 << 16).shape(1usize << 40).create("time").unwrap();
    }
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(size < 10_000, "{size} bytes");
    let e = morc_record::plot::load(&path, &[]).unwrap_err().to_string();
    assert!(e.contains("more than the file") && e.contains(&path.display().to_string()), "{e}");
    // `rec info` only describes it.
    assert!(morc_record::read::info(&path).unwrap().contains("1099511627776"));
    let _ = std::fs::remove_file(&path);
}
