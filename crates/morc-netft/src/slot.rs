//! Single-writer slots that a reader takes whole or not at all (a sequence lock): neither side
//! blocks or allocates, so they hand values between a network thread and the real-time thread in
//! either direction. [`Slot`] holds `N` words fixed at compile time (a Net F/T record);
//! [`RowSlot`] holds as many as it was made with (a ROS 2 message of a size known at configure).

use std::sync::atomic::{fence, AtomicU64, Ordering};

/// How often a reader tries before it gives up for now (the writer was mid-write each time).
const TRIES: usize = 16;

/// `N` words written by one thread and read whole by others.
pub struct Slot<const N: usize> {
    /// Odd while a write is under way.
    seq: AtomicU64,
    words: [AtomicU64; N],
}

impl<const N: usize> Default for Slot<N> {
    fn default() -> Self {
        Slot { seq: AtomicU64::new(0), words: std::array::from_fn(|_| AtomicU64::new(0)) }
    }
}

impl<const N: usize> Slot<N> {
    /// Writes all words. One writer at a time: two threads writing at once may leave a mix.
    pub fn write(&self, words: &[u64; N]) {
        write(&self.seq, &self.words, words);
    }

    /// The words of one write; None when every try met a write under way.
    pub fn read(&self) -> Option<[u64; N]> {
        let mut out = [0; N];
        read(&self.seq, &self.words, &mut out).then_some(out)
    }
}

/// A row of words, as many as it was made with, written by one thread and read whole by others.
pub struct RowSlot {
    /// Odd while a write is under way.
    seq: AtomicU64,
    words: Box<[AtomicU64]>,
}

impl RowSlot {
    /// A slot of `len` words, all 0 (allocates: make it off the real-time path).
    pub fn new(len: usize) -> RowSlot {
        RowSlot { seq: AtomicU64::new(0), words: (0..len).map(|_| AtomicU64::new(0)).collect() }
    }

    /// Words in a row.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// Whether a row has no words.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// Writes a row (`words.len()` must be [`RowSlot::len`]). One writer at a time.
    pub fn write(&self, words: &[u64]) {
        assert_eq!(words.len(), self.words.len(), "row width");
        write(&self.seq, &self.words, words);
    }

    /// Copies the row of one write into `out` (of [`RowSlot::len`] words) and returns true;
    /// false, `out` in an unspecified state, when every try met a write under way.
    pub fn read_into(&self, out: &mut [u64]) -> bool {
        assert_eq!(out.len(), self.words.len(), "row width");
        read(&self.seq, &self.words, out)
    }
}

/// The sequence lock's write: odd while the words change, even again after.
fn write(seq: &AtomicU64, cells: &[AtomicU64], words: &[u64]) {
    let s = seq.load(Ordering::Relaxed);
    seq.store(s.wrapping_add(1), Ordering::Relaxed);
    fence(Ordering::Release);
    for (w, v) in cells.iter().zip(words) {
        w.store(*v, Ordering::Relaxed);
    }
    seq.store(s.wrapping_add(2), Ordering::Release);
}

/// The sequence lock's read: the words, if the sequence was even and unchanged around them.
fn read(seq: &AtomicU64, cells: &[AtomicU64], out: &mut [u64]) -> bool {
    for _ in 0..TRIES {
        let before = seq.load(Ordering::Acquire);
        if before % 2 == 1 {
            std::hint::spin_loop();
            continue;
        }
        for (o, w) in out.iter_mut().zip(cells) {
            *o = w.load(Ordering::Relaxed);
        }
        fence(Ordering::Acquire);
        if seq.load(Ordering::Relaxed) == before {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use morc_test_support::overlap::read_while_writing;

    /// Changes of the value the reader must see, each a write landing between two of its reads.
    const CHANGES: u64 = 100;

    #[test]
    fn a_reader_never_sees_a_mix_of_two_writes() {
        let slot = Slot::<4>::default();
        let mut seen = 0;
        let o = read_while_writing(
            CHANGES,
            |k| slot.write(&[k, k, k, k]),
            || {
                let w = slot.read()?;
                assert!(w.iter().all(|x| *x == w[0]), "torn read {w:?}");
                assert!(w[0] >= seen, "went back from {seen} to {}", w[0]);
                seen = w[0];
                Some(w[0])
            },
        );
        println!("Slot<4>: {} whole reads, the value changing {} times, during {} writes", o.reads, o.changes, o.writes);
        assert_eq!(slot.read(), Some([o.writes; 4]), "the last write is what stays");
    }

    #[test]
    fn a_row_slot_is_read_whole_too() {
        let slot = RowSlot::new(7);
        assert_eq!((slot.len(), slot.is_empty()), (7, false));
        let mut out = [0u64; 7];
        let mut seen = 0;
        let o = read_while_writing(
            CHANGES,
            |k| slot.write(&[k; 7]),
            || {
                if !slot.read_into(&mut out) {
                    return None;
                }
                assert!(out.iter().all(|x| *x == out[0]), "torn read {out:?}");
                assert!(out[0] >= seen, "went back from {seen} to {}", out[0]);
                seen = out[0];
                Some(out[0])
            },
        );
        println!("RowSlot(7): {} whole reads, the value changing {} times, during {} writes", o.reads, o.changes, o.writes);
        assert!(slot.read_into(&mut out));
        assert_eq!(out, [o.writes; 7]);
    }
}
