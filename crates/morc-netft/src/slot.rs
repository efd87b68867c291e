//! A single-writer slot of `N` words that a reader takes whole or not at all (a sequence lock):
//! neither side blocks or allocates, so it hands values between a network thread and the
//! real-time thread in either direction.

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
        let s = self.seq.load(Ordering::Relaxed);
        self.seq.store(s.wrapping_add(1), Ordering::Relaxed);
        fence(Ordering::Release);
        for (w, v) in self.words.iter().zip(words) {
            w.store(*v, Ordering::Relaxed);
        }
        self.seq.store(s.wrapping_add(2), Ordering::Release);
    }

    /// The words of one write; None when every try met a write under way.
    pub fn read(&self) -> Option<[u64; N]> {
        for _ in 0..TRIES {
            let before = self.seq.load(Ordering::Acquire);
            if before % 2 == 1 {
                std::hint::spin_loop();
                continue;
            }
            let words = std::array::from_fn(|i| self.words[i].load(Ordering::Relaxed));
            fence(Ordering::Acquire);
            if self.seq.load(Ordering::Relaxed) == before {
                return Some(words);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_reader_never_sees_a_mix_of_two_writes() {
        let slot = Arc::new(Slot::<4>::default());
        let writer = {
            let slot = slot.clone();
            std::thread::spawn(move || {
                for k in 1..=200_000u64 {
                    slot.write(&[k, k, k, k]);
                }
            })
        };
        let mut seen = 0;
        while !writer.is_finished() {
            if let Some(w) = slot.read() {
                assert!(w.iter().all(|x| *x == w[0]), "torn read {w:?}");
                assert!(w[0] >= seen, "went back from {seen} to {}", w[0]);
                seen = w[0];
            }
        }
        writer.join().unwrap();
        assert_eq!(slot.read(), Some([200_000; 4]));
    }
}
