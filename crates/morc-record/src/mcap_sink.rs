//! The file under the MCAP writer, written so that a crash (`kill -9`, a
//! power cut after the last fsync) at any moment leaves a file the standard
//! readers read: `mcap.reader.make_reader(f).iter_messages()` in Python,
//! Foxglove, the `mcap` crate.
//!
//! Those readers look for a Footer at the end of the file first; with no
//! summary there (`summary_start = 0`) they read the records from the start
//! up to the first Footer. So between flushes the file is
//! ```text
//! magic header … records …  TAIL  [hole]  TAIL
//!                           ^ the readers stop here   ^ the file's end: what the readers look at first
//! ```
//! with `TAIL` = DataEnd (crc 0) + Footer (no summary) + magic, 50 constant
//! bytes. The mcap writer's bytes since the last commit (its open chunk, with
//! the placeholder length it patches when the chunk ends) stay in memory. A
//! commit (at each flush, once the writer ended its chunk) writes them so
//! that every moment in between is a valid file:
//!
//! 1. if the far `TAIL` (the file's end) would be overtaken, a new one
//!    further on, page-aligned (one page: see below);
//! 2. the new bytes but their first 50, then a `TAIL`, behind the current
//!    `TAIL`: readers stop before them, so a crash half way hurts nothing;
//! 3. the first 50 new bytes over the current `TAIL`: the commit.
//!
//! A kill -9 can cut a `write(2)` to a regular file short, but only between
//! pages (Linux checks for a fatal signal before each page it copies), so
//! the writes that must be whole (1 and 3) lie within one page: each `TAIL`
//! is placed (padding with a private record, opcode [`PADDING`], which
//! readers skip) so that it does not cross a page boundary. When the file is
//! closed the writer's summary and Footer are committed the same way and the
//! file is cut at its real end (`ftruncate`, atomic), so a closed file is an
//! ordinary indexed MCAP file.

use std::io::{self, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The opcode of padding records: private (≥ 0x80), skipped by readers.
pub(crate) const PADDING: u8 = 0x80;
/// DataEnd (crc 0), Footer (no summary, crc 0), magic.
const TAIL: [u8; 50] = {
    let mut t = [0u8; 50];
    t[0] = 0x0F; // DataEnd, length 4, crc 0
    t[1] = 4;
    t[13] = 0x02; // Footer, length 20, summary_start 0, summary_offset_start 0, crc 0
    t[14] = 20;
    let magic = *b"\x89MCAP0\r\n";
    let mut i = 0;
    while i < 8 {
        t[42 + i] = magic[i];
        i += 1;
    }
    t
};
pub(crate) const PAGE: u64 = 4096;
/// Room kept between the data and the far `TAIL` (a hole, until the recording's room
/// ahead fills it: see `room.rs`, which is why it is small).
pub(crate) const RESERVE: u64 = 64 << 10;

/// A `Write + Seek` for the mcap writer; its `flush` commits (see the module's text).
pub(crate) struct CommitFile {
    file: std::fs::File,
    /// Bytes of the file as the writer sees it that are committed (the current `TAIL` follows them).
    committed: u64,
    /// The writer's bytes from `committed` on, not yet in the file.
    pending: Vec<u8>,
    /// The writer's position.
    pos: u64,
    /// Where the far `TAIL` is (the file's end); 0: none yet.
    far_tail: u64,
    /// Set before the writer writes its summary: the next flush is the last.
    closing: Arc<AtomicBool>,
}

impl CommitFile {
    /// A sink writing into the empty `file`; `closing` is set before the writer's `finish`.
    pub(crate) fn new(file: std::fs::File, closing: Arc<AtomicBool>) -> CommitFile {
        CommitFile { file, committed: 0, pending: Vec::with_capacity(1 << 16), pos: 0, far_tail: 0, closing }
    }

    fn end(&self) -> u64 {
        self.committed + self.pending.len() as u64
    }

    /// Padding to add at the end so that the next `TAIL` neither overlaps the
    /// current one nor crosses a page boundary: 0, or at least a record's 9 bytes.
    fn padding(&self) -> u64 {
        let tail = TAIL.len() as u64;
        let fits = |e: u64| e - self.committed >= tail && e % PAGE <= PAGE - tail;
        let end = self.end();
        if fits(end) {
            return 0;
        }
        (9..).find(|pad| fits(end + pad)).unwrap_or(PAGE)
    }

    /// Puts a `TAIL` at a page boundary beyond `beyond`, if the far one is not there already.
    fn keep_far_tail_beyond(&mut self, beyond: u64) -> io::Result<()> {
        if self.far_tail >= beyond {
            return Ok(());
        }
        let at = (beyond + RESERVE).div_ceil(PAGE) * PAGE;
        self.file.write_all_at(&TAIL, at)?;
        self.far_tail = at;
        Ok(())
    }

    /// Makes the pending bytes part of the file (steps 1–3).
    fn commit(&mut self) -> io::Result<()> {
        let tail = TAIL.len();
        if self.committed == 0 {
            // The first bytes (magic, header, channels) go in one write: the
            // file was empty and unreadable until now anyway.
            let pad = self.padding();
            self.pad(pad);
            let end = self.end();
            self.keep_far_tail_beyond(end + tail as u64)?;
            self.pending.extend_from_slice(&TAIL);
            self.file.write_all_at(&self.pending, 0)?;
        } else {
            let pad = self.padding();
            self.pad(pad);
            let end = self.end();
            self.keep_far_tail_beyond(end + tail as u64)?;
            self.pending.extend_from_slice(&TAIL);
            self.file.write_all_at(&self.pending[tail..], self.committed + tail as u64)?;
            self.file.write_all_at(&self.pending[..tail], self.committed)?;
        }
        self.committed = self.end() - tail as u64;
        self.pending.clear();
        Ok(())
    }

    /// The last commit: the writer's DataEnd, summary, Footer and magic
    /// replace the `TAIL`, then the file is cut at their end.
    fn commit_last(&mut self) -> io::Result<()> {
        let tail = TAIL.len();
        let end = self.end();
        if self.pending.len() < tail {
            return Err(io::Error::other("the MCAP summary is shorter than its footer"));
        }
        self.keep_far_tail_beyond(end)?;
        self.file.write_all_at(&self.pending[tail..], self.committed + tail as u64)?;
        self.file.write_all_at(&self.pending[..tail], self.committed)?;
        self.file.set_len(end)?;
        self.committed = end;
        self.pending.clear();
        Ok(())
    }

    /// Appends a padding record of `pad` bytes in all (0 or ≥ 9).
    fn pad(&mut self, pad: u64) {
        if pad == 0 {
            return;
        }
        self.pending.push(PADDING);
        self.pending.extend_from_slice(&(pad - 9).to_le_bytes());
        self.pending.resize(self.pending.len() + (pad - 9) as usize, 0);
        self.pos = self.end();
    }

    /// The file, for its fsync.
    pub(crate) fn file(&self) -> &std::fs::File {
        &self.file
    }
}

impl Write for CommitFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.pos < self.committed {
            return Err(io::Error::other("the MCAP writer went back into committed data"));
        }
        let at = (self.pos - self.committed) as usize;
        let overlap = buf.len().min(self.pending.len().saturating_sub(at));
        self.pending[at..at + overlap].copy_from_slice(&buf[..overlap]);
        self.pending.extend_from_slice(&buf[overlap..]);
        self.pos += buf.len() as u64;
        Ok(buf.len())
    }

    /// Commits what the writer wrote: the mcap writer flushes once a chunk has ended, and after its footer.
    fn flush(&mut self) -> io::Result<()> {
        if self.closing.load(Ordering::Relaxed) {
            self.commit_last()
        } else if self.pending.is_empty() {
            Ok(())
        } else {
            self.commit()
        }
    }
}

impl Seek for CommitFile {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::End(d) => self.end().checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        match target {
            Some(t) if t >= self.committed && t <= self.end() => {
                self.pos = t;
                Ok(t)
            }
            _ => Err(io::Error::other("the MCAP writer seeked outside the bytes it has not committed yet")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_is_a_data_end_a_footer_and_the_magic() {
        assert_eq!(&TAIL[42..], mcap::MAGIC);
        let mut r = mcap::read::LinearReader::sans_magic(&TAIL[..42]);
        assert!(matches!(r.next(), Some(Ok(mcap::records::Record::DataEnd(_)))));
        assert!(matches!(r.next(), Some(Ok(mcap::records::Record::Footer(f))) if f.summary_start == 0));
    }

    #[test]
    fn tails_never_cross_a_page_nor_overlap() {
        let closing = Arc::new(AtomicBool::new(false));
        let path = std::env::temp_dir().join(format!("morc-mcap-sink-{}", std::process::id()));
        let mut f = CommitFile::new(std::fs::File::create(&path).unwrap(), closing);
        for n in [1usize, 40, 4000, 4046, 4090, 100, 70_000, 3] {
            f.write_all(&vec![7u8; n]).unwrap();
            let before = f.committed;
            f.flush().unwrap();
            assert!(f.committed >= before + 50, "a commit of {n} bytes moved the tail {before} → {}", f.committed);
            assert!(f.committed % PAGE <= PAGE - 50, "the tail at {} crosses a page", f.committed);
            assert!(f.far_tail >= f.committed + 50 && f.far_tail.is_multiple_of(PAGE));
        }
        let _ = std::fs::remove_file(&path);
    }
}
