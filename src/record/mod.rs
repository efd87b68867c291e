//! Recording signals to HDF5: a real-time [`recorder::Recorder`] component
//! hands rows of samples through a lock-free [`ring`] to a [`writer`] thread
//! that appends them to chunked, compressed datasets and flushes regularly,
//! so a crash leaves a valid file. [`read`] describes a recording.

pub mod glob;
pub mod ring;
