//! Recording signals to HDF5 (or MCAP of ROS 2 messages, by the file's
//! extension: see the `mcap` module and [`convert`]): a real-time [`Recorder`] component hands rows
//! of samples through a lock-free ring to a writer thread that appends them
//! to chunked, compressed datasets and flushes regularly ([`WriterTiming`]),
//! so a crash leaves a valid file. [`attach`] records from an assembly,
//! [`read`] describes a recording, [`plot`] draws it.
//!
//! The file (`h5py.File(path)["robot.q"][:]`):
//! ```text
//! /                    attrs: morc_version, git_commit, utc_start (ISO 8601), robot, assembly,
//!                             base_period, sample_period, decimation, recorder, notes,
//!                             samples, dropped_samples (updated at each flush and at the end),
//!                             complete (1 once closed cleanly, 0 after a crash),
//!                             write_error (why the recording stopped early: a full disk; only then)
//! /time                f64 [N]     s since the start of the assembly
//! /<component.port>    f64 [N] or [N, n] (reals, vectors), int64 [N] (integers), uint8 [N] (booleans);
//!                      chunked along time, unfiltered (see writer.rs); attrs: unit, description,
//!                      source ("component.port"), sample_period, type; a vector's
//!                      element_names and (when they differ) element_units, string lists
//! /assembly            attrs: name, base_period
//! /assembly/<name>     attrs: kind, every (k), sample_time (s); group parameters/ (one attribute each)
//! /timing/<name>       written after the run by [`write_timing`]: kind, every, steps, count,
//!                      mean, p50, p99, max (s), overruns
//! ```

#![deny(clippy::missing_safety_doc)]
#![warn(missing_docs)]

pub mod attach;
pub mod bench;
pub mod convert;
mod error;
mod glob;
mod mcap;
mod mcap_sink;
pub mod plot;
pub mod read;
mod recorder;
pub mod repair;
pub mod ring;
mod room;
mod writer;

pub use error::RecordError;

pub use glob::expand;
pub use recorder::{ComponentMetadata, FileNaming, RecordedSignal, Recorder, RecorderTuning, RecordingMetadata};
pub use writer::{is_mcap, write_timing, TimingEntry, WriterTiming};
