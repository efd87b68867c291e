//! `morc rec repair FILE`: mends a recording a crash cut short, or one an
//! older morc left broken (an HDF5 chunk rewritten under its index, "filter
//! returned failure during read"; an MCAP file ending in a chunk whose
//! length was never written), so that the standard readers read it.
//!
//! What can be read (see [`crate::convert`]'s `read_what_is_readable`) is
//! written anew beside the file and renamed over it; the file as it was is
//! kept next to it as `FILE.broken`. A file that is whole is left alone.

use std::path::{Path, PathBuf};

use crate::convert::{read_what_is_readable, write};
use crate::RecordError;

/// What `repair` did.
#[derive(Clone, Debug, PartialEq)]
pub enum Repair {
    /// The file was closed by its run and reads whole: left as it was.
    Whole {
        /// Its samples.
        samples: usize,
    },
    /// The file was rewritten with what could be read.
    Mended {
        /// Samples kept (every signal's, at increasing times).
        samples: usize,
        /// The file as it was.
        kept: PathBuf,
    },
}

/// Mends the recording at `path` (HDF5 or MCAP by its extension), see the module's text.
pub fn repair(path: &Path) -> Result<Repair, RecordError> {
    let contents = read_what_is_readable(path)?;
    let samples = contents.samples();
    if contents.complete && (!crate::is_mcap(path) || ends_in_summary(path)) {
        return Ok(Repair::Whole { samples });
    }
    let kept = with_suffix(path, ".broken");
    if kept.exists() {
        return Err(RecordError::Write(format!("{} exists: a repair keeps the file as it was under that name; move it away first", kept.display())));
    }
    let tmp = with_suffix(path, ".mending");
    // The new file must carry the format's extension, so the suffix goes before it.
    let tmp = match path.extension() {
        Some(ext) => tmp.with_extension(ext),
        None => tmp,
    };
    let _ = std::fs::remove_file(&tmp);
    write(&contents, &tmp).map_err(|e| RecordError::Write(format!("mending {}: {e}", path.display())))?;
    let fail = |e: std::io::Error| RecordError::Write(format!("mending {}: {e}", path.display()));
    std::fs::hard_link(path, &kept).map_err(fail)?;
    std::fs::rename(&tmp, path).map_err(fail)?;
    Ok(Repair::Mended { samples, kept })
}

/// `x.mcap` → `x.mcap.broken`.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// Whether an MCAP file ends in a Footer that points at a summary (a file its run closed).
fn ends_in_summary(path: &Path) -> bool {
    let Ok(bytes) = std::fs::read(path) else { return false };
    bytes.ends_with(mcap::MAGIC) && mcap::Summary::read(&bytes).is_ok_and(|s| s.is_some())
}
