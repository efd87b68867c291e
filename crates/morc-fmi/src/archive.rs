//! FMU archives: extracted once into a cache folder named by the archive's
//! SHA-256, so an FMU that changes gets a fresh folder and an unchanged one
//! is never extracted twice. Hostile archives are rejected: entries whose
//! path escapes the folder, too many entries, too much data in total, or a
//! compression ratio that only a zip bomb has.

use std::io::Read as _;
use std::path::{Component as PathPart, Path, PathBuf};

use sha2::{Digest, Sha256};

use super::FmiError;

/// What an archive may expand to.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Total uncompressed bytes.
    pub max_total_bytes: u64,
    /// Number of entries.
    pub max_entries: usize,
    /// Uncompressed/compressed size of any entry larger than 1 MiB.
    pub max_ratio: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_total_bytes: 1 << 30, max_entries: 20_000, max_ratio: 200 }
    }
}

/// The folder FMUs are extracted under: `$MORC_FMU_CACHE`, else
/// `$XDG_CACHE_HOME/morc/fmu`, else `~/.cache/morc/fmu`, else the temp folder.
pub fn cache_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("MORC_FMU_CACHE") {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(dir).join("morc").join("fmu");
    }
    if let Some(home) = std::env::var_os("HOME") {
        return PathBuf::from(home).join(".cache").join("morc").join("fmu");
    }
    std::env::temp_dir().join("morc-fmu-cache")
}

/// SHA-256 of `bytes` in hex.
pub fn content_hash(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Marks a completely extracted folder (a crash mid-extraction leaves none).
const COMPLETE: &str = ".morc-extracted";

/// Extracts `fmu` into `<cache_root>/<hash>` unless that is already there;
/// returns the folder.
pub fn extract_cached(fmu: &Path, limits: &Limits) -> Result<PathBuf, FmiError> {
    let bytes = std::fs::read(fmu).map_err(|e| FmiError::Archive(format!("cannot read {}: {e}", fmu.display())))?;
    let hash = content_hash(&bytes);
    let root = cache_root();
    let folder = root.join(&hash[..32]);
    if folder.join(COMPLETE).is_file() {
        return Ok(folder);
    }
    std::fs::create_dir_all(&root).map_err(|e| FmiError::Archive(format!("cannot create the FMU cache {}: {e}", root.display())))?;
    // Extract beside the final folder, then rename: readers never see half an FMU.
    let staging = root.join(format!("{}.partial-{}-{:?}", &hash[..32], std::process::id(), std::thread::current().id()));
    let _ = std::fs::remove_dir_all(&staging);
    let result = extract(&bytes, &staging, limits).and_then(|()| std::fs::write(staging.join(COMPLETE), hash.as_bytes()).map_err(|e| FmiError::Archive(e.to_string())));
    if let Err(e) = result {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e.prefixed(&fmu.display().to_string()));
    }
    if std::fs::rename(&staging, &folder).is_err() {
        // Someone else finished first (or a stale incomplete folder is in the way).
        let _ = std::fs::remove_dir_all(&staging);
        if !folder.join(COMPLETE).is_file() {
            let _ = std::fs::remove_dir_all(&folder);
            extract(&bytes, &folder, limits).map_err(|e| e.prefixed(&fmu.display().to_string()))?;
            std::fs::write(folder.join(COMPLETE), hash.as_bytes()).map_err(|e| FmiError::Archive(e.to_string()))?;
        }
    }
    Ok(folder)
}

/// A zip entry's name as a relative path that stays inside the folder.
fn safe_relative_path(name: &str) -> Option<PathBuf> {
    if name.contains('\\') || name.contains('\0') {
        return None;
    }
    let path = Path::new(name);
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            PathPart::Normal(p) => out.push(p),
            PathPart::CurDir => {}
            PathPart::ParentDir | PathPart::RootDir | PathPart::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// Extracts the archive in `bytes` into `dest` (created), enforcing `limits`.
pub fn extract(bytes: &[u8], dest: &Path, limits: &Limits) -> Result<(), FmiError> {
    extract_archive(bytes, dest, limits).map_err(FmiError::Archive)
}

fn extract_archive(bytes: &[u8], dest: &Path, limits: &Limits) -> Result<(), String> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| format!("not an FMU: the file is not a readable zip archive ({e})"))?;
    if zip.len() > limits.max_entries {
        return Err(format!("rejected: {} entries (at most {})", zip.len(), limits.max_entries));
    }
    // Check every entry before writing anything.
    let mut declared: u64 = 0;
    for i in 0..zip.len() {
        let entry = zip.by_index_raw(i).map_err(|e| format!("corrupt archive entry {i}: {e}"))?;
        let name = entry.name().map_err(|e| format!("corrupt archive entry {i}: {e}"))?.to_string();
        if safe_relative_path(&name).is_none() {
            return Err(format!("rejected: entry \"{name}\" would be written outside the extraction folder"));
        }
        if entry.is_symlink() {
            return Err(format!("rejected: entry \"{name}\" is a symbolic link"));
        }
        let (size, packed) = (entry.size(), entry.compressed_size().max(1));
        if size > 1 << 20 && size / packed > limits.max_ratio {
            return Err(format!("rejected as a zip bomb: entry \"{name}\" expands {} times ({size} bytes from {packed})", size / packed));
        }
        declared = declared.saturating_add(size);
        if declared > limits.max_total_bytes {
            return Err(format!("rejected: it expands to more than {} bytes", limits.max_total_bytes));
        }
    }
    std::fs::create_dir_all(dest).map_err(|e| format!("cannot create {}: {e}", dest.display()))?;
    // Declared sizes can lie: count what is actually written as well.
    let mut written: u64 = 0;
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(|e| format!("corrupt archive entry {i}: {e}"))?;
        let name = entry.name().map_err(|e| format!("corrupt archive entry {i}: {e}"))?.to_string();
        let relative = safe_relative_path(&name).ok_or("rejected: unsafe entry path")?;
        let target = dest.join(&relative);
        if entry.is_dir() {
            std::fs::create_dir_all(&target).map_err(|e| format!("cannot create {}: {e}", target.display()))?;
            continue;
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        // Streamed to the file, never held whole: an entry may write at most what it declared
        // (checked against the ratio above) and what is left of the budget.
        let declared = entry.size();
        let allowed = declared.min(limits.max_total_bytes - written);
        let mut file = std::fs::File::create(&target).map_err(|e| format!("cannot write {}: {e}", target.display()))?;
        let copied = std::io::copy(&mut (&mut entry).take(allowed + 1), &mut file).map_err(|e| format!("corrupt archive entry \"{}\": {e}", relative.display()))?;
        written += copied;
        if written > limits.max_total_bytes {
            return Err(format!("rejected as a zip bomb: it expands to more than {} bytes", limits.max_total_bytes));
        }
        if copied > declared {
            return Err(format!("rejected: entry \"{}\" expands beyond the {declared} bytes it declares", relative.display()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_must_stay_inside() {
        assert_eq!(safe_relative_path("binaries/linux64/a.so"), Some(PathBuf::from("binaries/linux64/a.so")));
        assert_eq!(safe_relative_path("./modelDescription.xml"), Some(PathBuf::from("modelDescription.xml")));
        assert!(safe_relative_path("../evil").is_none());
        assert!(safe_relative_path("a/../../evil").is_none());
        assert!(safe_relative_path("/etc/passwd").is_none());
        assert!(safe_relative_path("..\\evil").is_none());
    }
}
