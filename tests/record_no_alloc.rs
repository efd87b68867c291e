//! `Recorder::step` allocates nothing once initialised: a counting global
//! allocator, armed only on the stepping thread (the writer thread may
//! allocate as it likes), sees no allocation in 20 000 steps.
//! One test in this binary, so no other test allocates concurrently.

use std::sync::atomic::Ordering;

use morc_test_support::alloc::{assert_allocated_nothing, control_allocation, watch_this_thread, watched_allocations, CountingAllocator};

use morc_kernel::AssemblyData;
use morc_kernel::*;
use morc_kernel::{Value, ValueType};
use morc_record::{RecordedSignal, Recorder, RecorderTuning, RecordingMetadata};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

#[test]
fn recorder_step_allocates_nothing() {
    const STEPS: u64 = 20_000;
    let period = 0.001;
    let dir = std::env::temp_dir().join(format!("morc-record-noalloc-{}", std::process::id()));
    let signals = vec![
        RecordedSignal::new("robot.q", ValueType::Vector(6), "rad", ""),
        RecordedSignal::new("fb.y", ValueType::Real, "", ""),
        RecordedSignal::new("mon.n", ValueType::Integer, "", ""),
        RecordedSignal::new("mon.ok", ValueType::Boolean, "", ""),
    ];
    let meta = RecordingMetadata { path: dir.join("noalloc.h5"), assembly: "noalloc".into(), base_period: period, ..Default::default() };
    // A ring that holds the whole run: the test measures the push, not drops.
    let tuning = RecorderTuning { ring_rows: Some(STEPS as usize + 1), ..Default::default() };
    let mut rec = Recorder::new(signals, meta, 1).with_tuning(tuning);
    rec.configure().unwrap();
    let data = AssemblyData::new();
    let ctx = InitContext { name: "rec", period, base_period: period, data: &data, thread: &Default::default(), base_latency: 0 };
    rec.initialize(&ctx, &mut []).unwrap();
    let mut inputs = vec![Value::zero(ValueType::Vector(6)), Value::Real(0.0), Value::Integer(0), Value::Boolean(false)];

    let start = std::time::Instant::now();
    watch_this_thread(true);
    control_allocation();
    for step in 0..STEPS {
        let t = step as f64 * period;
        inputs[0].as_mut_slice().iter_mut().for_each(|x| *x = t);
        inputs[1].set_real(t.sin());
        inputs[2].set_real(step as f64);
        inputs[3].set_real((step % 2) as f64);
        let s = rec.step(&StepContext { step, time: t, period }, &inputs, &mut []);
        assert!(s == Step::Continue);
    }
    watch_this_thread(false);
    let per_step = start.elapsed().as_nanos() as f64 / STEPS as f64;

    assert_allocated_nothing(&format!("{STEPS} recorder steps"), watched_allocations());
    println!("Recorder::step with 9 columns: {per_step:.0} ns per step (test profile)");
    let written = rec.progress().unwrap();
    drop(rec); // finishes the writer and closes the file
    assert!(written.written.load(Ordering::Relaxed) <= STEPS);
    let _ = std::fs::remove_dir_all(dir);
}
