//! Recording signals to HDF5: a real-time [`recorder::Recorder`] component
//! hands rows of samples through a lock-free [`ring`] to a [`writer`] thread
//! that appends them to chunked, compressed datasets and flushes regularly,
//! so a crash leaves a valid file. [`read`] describes a recording.

pub mod bench;
pub mod glob;
pub mod read;
pub mod ring;
pub mod recorder;
pub mod writer;

pub use glob::expand;
pub use recorder::{ComponentMetadata, RecordedSignal, Recorder, RecorderTuning, RecordingMetadata};
pub use writer::write_timing;
