//! How much a Recorder sustains: `signals` real signals stepped in real time
//! at `rate` Hz for `seconds`, with the cost of each step on the real-time
//! side and whether the writer kept up (zero dropped rows).

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use super::recorder::{RecordedSignal, Recorder, RecordingMetadata};
use morc_kernel::AssemblyData;
use morc_kernel::{monotonic_ns, sleep_until};
use morc_kernel::{Component, InitContext, StepContext};
use morc_kernel::{Histogram, Summary};
use morc_kernel::{Value, ValueType};

/// What a [`sustained`] run measured; `Display` prints the report `morc rec bench` shows.
#[derive(Clone, Debug)]
pub struct BenchReport {
    /// Real signals recorded.
    pub signals: usize,
    /// Steps per second (Hz).
    pub rate: f64,
    /// Steps run.
    pub steps: u64,
    /// Rows in the file at the end.
    pub samples: u64,
    /// Rows that did not make it (the writer fell behind).
    pub dropped: u64,
    /// Cost of `Recorder::step` on the stepping thread, ns.
    pub step_ns: Summary,
    /// Steps that started later than one period after their deadline.
    pub late_steps: u64,
    /// Size of the file at the end (bytes).
    pub file_bytes: u64,
    /// The file written (removed after the run).
    pub path: PathBuf,
}

impl std::fmt::Display for BenchReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let row_bytes = (self.signals + 1) as f64 * 8.0;
        let raw = self.samples as f64 * row_bytes;
        writeln!(f, "record {} f64 signals at {} Hz for {} steps ({:.1} MB/s offered)", self.signals, self.rate, self.steps, row_bytes * self.rate / 1e6)?;
        writeln!(f, "  kept {} rows, dropped {}{}", self.samples, self.dropped, if self.dropped == 0 { " — sustained" } else { " — NOT sustained" })?;
        writeln!(f, "  Recorder::step  {}", self.step_ns)?;
        writeln!(f, "  late steps {} (the pacing thread itself was late)", self.late_steps)?;
        write!(f, "  file {} bytes ({:.2}× smaller than raw)", self.file_bytes, raw / self.file_bytes.max(1) as f64)
    }
}

/// Runs the benchmark, writing `dir/record-bench.h5` (removed afterwards).
pub fn sustained(dir: &Path, signals: usize, rate: f64, seconds: f64) -> Result<BenchReport, String> {
    if signals == 0 || rate.is_nan() || rate <= 0.0 || seconds.is_nan() || seconds <= 0.0 {
        return Err("need at least one signal, a positive rate and a positive duration".into());
    }
    let period = 1.0 / rate;
    let path = dir.join("record-bench.h5");
    let list: Vec<RecordedSignal> = (0..signals).map(|i| RecordedSignal::new(&format!("bench.s{i:03}"), ValueType::Real, "", "")).collect();
    let meta = RecordingMetadata { path: path.clone(), assembly: "record-bench".into(), base_period: period, ..Default::default() };
    let mut rec = Recorder::new(list, meta, 1);
    rec.configure()?;
    let data = AssemblyData::new();
    rec.initialize(&InitContext { name: "rec", period, base_period: period, data: &data, thread: &Default::default(), base_latency: 0 }, &mut [])?;
    let progress = rec.progress().ok_or("the recorder did not start its writer")?;
    // record-bench-001.h5 when record-bench.h5 is there already (a recording never replaces a file).
    let path = rec.file().map(Path::to_path_buf).unwrap_or(path);

    let mut inputs: Vec<Value> = (0..signals).map(|_| Value::Real(0.0)).collect();
    let mut hist = Histogram::new();
    let steps = (seconds * rate).round() as u64;
    let period_ns = (period * 1e9).round() as u64;
    let start = monotonic_ns() + 1_000_000;
    let mut late_steps = 0;
    for step in 0..steps {
        let deadline = start + step * period_ns;
        sleep_until(deadline);
        if monotonic_ns() > deadline + period_ns {
            late_steps += 1;
        }
        let t = step as f64 * period;
        // Signals that change every step but compress like real ones do.
        for (i, v) in inputs.iter_mut().enumerate() {
            v.set_real((t * (1.0 + i as f64 * 0.1)).sin());
        }
        let t0 = monotonic_ns();
        rec.step(&StepContext { step, time: t, period }, &inputs, &mut []);
        hist.record(monotonic_ns() - t0);
    }
    drop(rec); // stops the writer: everything left in the ring is written
    let samples = progress.written.load(Ordering::Relaxed);
    let file_bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let _ = std::fs::remove_file(&path);
    Ok(BenchReport { signals, rate, steps, samples, dropped: steps - samples.min(steps), step_ns: hist.summary(), late_steps, file_bytes, path })
}
