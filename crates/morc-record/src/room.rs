//! Disk space kept ahead of a recording's writes, so that a full disk is seen before a row is
//! lost and the file can still be closed whole, saying why it ended.
//!
//! The writer asks for room up to a bound its sink gives (the largest the file can grow to with
//! the rows it is about to write, the next flush and the closing records included); [`Room`]
//! allocates the disk blocks up to that bound ahead of time (`fallocate` with
//! `FALLOC_FL_KEEP_SIZE`: blocks, not size, so readers see the file as it is). When the disk
//! cannot give them, the writer stops taking rows while everything it already took still fits:
//! the file closes with the rows it holds and the reason. On a file system without `fallocate`
//! the room is not kept and a full disk shows as a failed write, at the next flush.

use std::io;
use std::os::fd::AsRawFd;

/// Reserve at least this much beyond what is asked, so `fallocate` runs rarely.
const STEP: u64 = 256 << 10;

/// The room kept in one file.
pub(crate) struct Room {
    /// The recording's file (a second descriptor of it); None: the file system keeps no room.
    file: Option<std::fs::File>,
    /// Bytes from the file's start that have disk blocks.
    reserved: u64,
}

impl Room {
    /// Room in `file`, opened for writing (its own descriptor, so the sink's is left alone).
    pub(crate) fn new(file: std::fs::File) -> Room {
        Room { file: Some(file), reserved: 0 }
    }

    /// Makes sure the first `end` bytes of the file have disk blocks, reserving a step more
    /// when the disk has it. Err: the disk cannot give them (`No space left on device`, a
    /// quota); the room already kept stays.
    pub(crate) fn ensure(&mut self, end: u64) -> io::Result<()> {
        if end <= self.reserved {
            return Ok(());
        }
        let Some(file) = &self.file else { return Ok(()) };
        let generous = end + STEP.max(end / 8);
        for want in [generous, end] {
            match allocate(file, want) {
                Ok(()) => {
                    self.reserved = want;
                    return Ok(());
                }
                Err(e) if unsupported(&e) => {
                    log::debug!("this file system keeps no room ahead of a recording ({e}): a full disk shows at the next flush");
                    self.file = None;
                    return Ok(());
                }
                Err(e) if want == end => return Err(e),
                Err(_) => continue,
            }
        }
        Ok(())
    }

    /// Gives back the blocks reserved beyond the file's end (after it is closed).
    pub(crate) fn release(&mut self) {
        let Some(file) = self.file.take() else { return };
        let Ok(size) = file.metadata().map(|m| m.len()) else { return };
        if self.reserved > size {
            // SAFETY: fallocate on a descriptor this process owns; punching past the end frees
            // the blocks reserved there and changes no byte of the file.
            unsafe {
                libc::fallocate(file.as_raw_fd(), libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, size as libc::off_t, (self.reserved - size) as libc::off_t);
            }
        }
    }
}

impl Drop for Room {
    fn drop(&mut self) {
        self.release();
    }
}

fn allocate(file: &std::fs::File, end: u64) -> io::Result<()> {
    // SAFETY: fallocate on a descriptor this process owns; KEEP_SIZE allocates blocks and leaves
    // the file's size and content as they are.
    let r = unsafe { libc::fallocate(file.as_raw_fd(), libc::FALLOC_FL_KEEP_SIZE, 0, end as libc::off_t) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn unsupported(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_is_blocks_not_size() {
        let path = std::env::temp_dir().join(format!("morc-room-{}", std::process::id()));
        let file = std::fs::OpenOptions::new().create(true).truncate(true).write(true).open(&path).unwrap();
        let mut room = Room::new(file.try_clone().unwrap());
        room.ensure(100_000).unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.len(), 0, "the file's size is unchanged");
        use std::os::unix::fs::MetadataExt;
        assert!(meta.blocks() * 512 >= 100_000 || room.file.is_none(), "blocks reserved: {}", meta.blocks());
        room.release();
        let _ = std::fs::remove_file(&path);
    }
}
