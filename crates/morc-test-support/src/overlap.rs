//! Reads that overlap writes, for the tests of what one thread hands another without a lock
//! (the sequence locks of `morc-kernel`'s snapshot and `morc-netft`'s slots).
//!
//! "The reader never saw a torn value" proves something only if the reader read while the
//! writer wrote. A writer that makes a fixed number of writes may finish before the reader's
//! thread is even scheduled (a loaded machine), and the test passes having checked nothing.
//! [`read_while_writing`] therefore keeps the writer writing until the reader has seen the
//! value change a given number of times — each change a write that landed between two of its
//! reads — and fails if that never happens.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What [`read_while_writing`] saw.
#[derive(Debug, Clone, Copy)]
pub struct Overlap {
    /// Writes the writer made (1, 2, …, `writes`).
    pub writes: u64,
    /// Reads that returned a value, every one made while the writer was writing.
    pub reads: u64,
    /// Reads whose value differed from the reader's previous one.
    pub changes: u64,
}

/// How long the writer writes at most, waiting for the reader's changes: a bound for a reader
/// that cannot read while a write is under way, far above what any machine needs.
const PATIENCE: Duration = Duration::from_secs(60);

/// Calls `write(k)` for k = 1, 2, … on a thread of its own while this thread calls `read()`,
/// until `read` has returned a value different from its previous one `changes` times; then
/// stops the writer and returns the counts. `read` returns the write number it saw (after
/// checking the value whole, as its test requires) or `None` when it got none this time.
///
/// Every read counted happened while the writer was still writing (it stops only when told),
/// so the checks in `read` are checks of concurrent reads. Panics, saying so, if the writer
/// wrote for a minute without the reader seeing `changes` changes.
pub fn read_while_writing(changes: u64, write: impl FnMut(u64) + Send, read: impl FnMut() -> Option<u64>) -> Overlap {
    read_while_writing_within(PATIENCE, changes, write, read)
}

fn read_while_writing_within(patience: Duration, changes: u64, write: impl FnMut(u64) + Send, mut read: impl FnMut() -> Option<u64>) -> Overlap {
    let stop = AtomicBool::new(false);
    let mut write = write;
    let (mut reads, mut seen, mut last) = (0, 0, 0);
    let writes = std::thread::scope(|s| {
        let writer = s.spawn(|| {
            let started = Instant::now();
            let mut k = 0;
            while !stop.load(Ordering::Relaxed) && started.elapsed() < patience {
                // A batch between clock readings, so the clock is not what the writer spends its time on.
                for _ in 0..64 {
                    k += 1;
                    write(k);
                }
            }
            k
        });
        while !writer.is_finished() && seen < changes {
            if let Some(k) = read() {
                reads += 1;
                if k != last {
                    seen += 1;
                    last = k;
                }
            }
        }
        stop.store(true, Ordering::Relaxed);
        writer.join().expect("the writer thread panicked")
    });
    assert!(seen >= changes, "the reader saw the value change {seen} times of the {changes} asked in {writes} writes over {patience:?}: its reads did not overlap the writer's writes");
    Overlap { writes, reads, changes: seen }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn the_reads_counted_overlap_the_writes() {
        let cell = AtomicU64::new(0);
        let o = read_while_writing(100, |k| cell.store(k, Ordering::Relaxed), || Some(cell.load(Ordering::Relaxed)));
        assert!(o.changes >= 100 && o.reads >= o.changes, "{o:?}");
        // The writer ran past every value the reader saw.
        assert!(o.writes >= o.changes, "{o:?}");
    }

    #[test]
    #[should_panic(expected = "its reads did not overlap")]
    fn a_reader_that_sees_nothing_fails() {
        // A reader that never gets a value (always meeting a write under way, say) has checked nothing.
        read_while_writing_within(Duration::from_millis(50), 1, |_| {}, || None);
    }
}
