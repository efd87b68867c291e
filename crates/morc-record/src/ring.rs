//! A preallocated single-producer / single-consumer ring of fixed-width rows
//! of f64 samples: the hand-off between a real-time component and the thread
//! that writes its data to disk.
//!
//! The producer never blocks, allocates or makes a system call: when the
//! ring is full the row is dropped and counted, so a slow disk costs data
//! (visibly) rather than a missed deadline.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// Keeps the two indices on separate cache lines so producer and consumer
/// do not invalidate each other's line on every row.
#[repr(align(64))]
struct Padded<T>(T);

struct Shared {
    /// `capacity · width` samples, row-major.
    buf: Box<[UnsafeCell<f64>]>,
    width: usize,
    capacity: usize,
    /// Rows ever written (only the producer stores it).
    head: Padded<AtomicUsize>,
    /// Rows ever read (only the consumer stores it).
    tail: Padded<AtomicUsize>,
    /// Rows refused because the ring was full.
    dropped: AtomicU64,
}

// SAFETY: the UnsafeCell slots are the only non-Sync part. A slot is written only by the one
// producer while it is outside [tail, head) and read only by the one consumer while it is inside
// (RingProducer and RingConsumer are not Clone and their methods take &mut self); the
// Release/Acquire pairs on head and tail order those accesses. (Send needs no impl: every field,
// UnsafeCell<f64> included, is Send.)
unsafe impl Sync for Shared {}

/// The real-time side: pushes rows.
pub struct RingProducer {
    shared: Arc<Shared>,
    /// Cached copy of `head` (the producer is its only writer).
    head: usize,
    /// `tail` as last read: at most the consumer's, so a row that fits by it fits. Read again only
    /// when the ring looks full, so a push does not fetch the line the consumer writes.
    seen_tail: usize,
}

/// The writer side: takes rows out.
pub struct RingConsumer {
    shared: Arc<Shared>,
    /// Cached copy of `tail` (the consumer is its only writer).
    tail: usize,
}

/// A ring of `capacity` rows of `width` samples each.
pub fn ring(capacity: usize, width: usize) -> (RingProducer, RingConsumer) {
    assert!(capacity > 0 && width > 0, "a ring needs at least one row of at least one sample");
    let buf: Box<[UnsafeCell<f64>]> = (0..capacity * width).map(|_| UnsafeCell::new(0.0)).collect();
    let shared = Arc::new(Shared { buf, width, capacity, head: Padded(AtomicUsize::new(0)), tail: Padded(AtomicUsize::new(0)), dropped: AtomicU64::new(0) });
    (RingProducer { shared: shared.clone(), head: 0, seen_tail: 0 }, RingConsumer { shared, tail: 0 })
}

impl Shared {
    #[inline]
    fn slot(&self, row: usize) -> *mut f64 {
        // UnsafeCell<f64> has the layout of f64, so a row is contiguous.
        self.buf[(row % self.capacity) * self.width].get()
    }
}

impl RingProducer {
    /// Whether a row would fit now (the consumer may make room at any time).
    #[inline]
    pub fn has_room(&self) -> bool {
        let s = &*self.shared;
        self.head.wrapping_sub(s.tail.0.load(Ordering::Acquire)) < s.capacity
    }

    /// Appends one row (`row.len()` must be the ring's width). Returns false,
    /// and counts the row as dropped, when the ring is full. Wait-free.
    #[inline]
    pub fn push_row(&mut self, row: &[f64]) -> bool {
        let s = &*self.shared;
        assert_eq!(row.len(), s.width, "row width");
        if self.head.wrapping_sub(self.seen_tail) >= s.capacity {
            self.seen_tail = s.tail.0.load(Ordering::Acquire);
            if self.head.wrapping_sub(self.seen_tail) >= s.capacity {
                s.dropped.fetch_add(1, Ordering::Relaxed);
                return false;
            }
        }
        // SAFETY: `row` has `width` samples (asserted) and slot(head) starts a row of `width` samples in `buf`;
        // that row is outside [tail, head), so the consumer does not read it until head is published below.
        unsafe { std::ptr::copy_nonoverlapping(row.as_ptr(), s.slot(self.head), s.width) };
        self.head = self.head.wrapping_add(1);
        s.head.0.store(self.head, Ordering::Release);
        true
    }

    /// Rows dropped so far because the ring was full.
    #[cfg(test)]
    pub fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }
    /// Rows accepted so far.
    #[cfg(test)]
    pub fn pushed(&self) -> u64 {
        self.head as u64
    }
}

impl RingConsumer {
    /// Rows waiting to be read.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.shared.head.0.load(Ordering::Acquire).wrapping_sub(self.tail)
    }
    /// Whether no row waits to be read.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Moves up to `max_rows` rows to the end of `out` (row-major) and
    /// returns how many. Reserve `out` beforehand to avoid reallocation.
    pub fn pop_into(&mut self, out: &mut Vec<f64>, max_rows: usize) -> usize {
        let s = &*self.shared;
        let head = s.head.0.load(Ordering::Acquire);
        let n = head.wrapping_sub(self.tail).min(max_rows);
        let mut done = 0;
        while done < n {
            // Copy the contiguous run up to the end of the buffer, then wrap.
            let start = (self.tail.wrapping_add(done)) % s.capacity;
            let run = (n - done).min(s.capacity - start);
            // SAFETY: rows start..start+run lie inside `buf` (run <= capacity - start) and are in [tail, head):
            // complete (Acquire on head) and not written by the producer until tail moves past them (Release below).
            let src = unsafe { std::slice::from_raw_parts(s.slot(start) as *const f64, run * s.width) };
            out.extend_from_slice(src);
            done += run;
        }
        self.tail = self.tail.wrapping_add(n);
        s.tail.0.store(self.tail, Ordering::Release);
        n
    }

    /// Samples per row (time and every signal's elements).
    pub fn width(&self) -> usize {
        self.shared.width
    }
    /// Rows the ring holds.
    pub fn capacity(&self) -> usize {
        self.shared.capacity
    }
    /// Rows dropped so far by the producer because the ring was full.
    pub fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_come_out_in_order_across_the_wrap() {
        let (mut p, mut c) = ring(4, 3);
        let mut out = Vec::new();
        let mut next = 0.0;
        for round in 0..10 {
            for _ in 0..3 {
                assert!(p.push_row(&[next, next + 0.1, next + 0.2]));
                next += 1.0;
            }
            out.clear();
            assert_eq!(c.pop_into(&mut out, usize::MAX), 3, "round {round}");
            let first = next - 3.0;
            for r in 0..3 {
                let x = first + r as f64;
                assert_eq!(&out[r * 3..r * 3 + 3], &[x, x + 0.1, x + 0.2]);
            }
        }
        assert_eq!(p.dropped(), 0);
        assert!(c.is_empty());
    }

    #[test]
    fn a_full_ring_drops_and_counts() {
        let (mut p, mut c) = ring(2, 1);
        assert!(p.push_row(&[1.0]));
        assert!(p.push_row(&[2.0]));
        assert!(!p.push_row(&[3.0]));
        assert!(!p.push_row(&[4.0]));
        assert_eq!(p.dropped(), 2);
        assert_eq!(c.dropped(), 2);
        let mut out = Vec::new();
        assert_eq!(c.pop_into(&mut out, 1), 1);
        assert!(p.push_row(&[5.0]));
        assert_eq!(c.pop_into(&mut out, 10), 2);
        assert_eq!(out, [1.0, 2.0, 5.0]);
        assert_eq!(p.pushed(), 3);
    }

    #[test]
    fn concurrent_producer_and_consumer_lose_and_reorder_nothing() {
        const ROWS: usize = 200_000;
        const WIDTH: usize = 5;
        let (mut p, mut c) = ring(64, WIDTH);
        let producer = std::thread::spawn(move || {
            let mut row = [0.0; WIDTH];
            let mut i = 0usize;
            while i < ROWS {
                for (k, x) in row.iter_mut().enumerate() {
                    *x = (i * WIDTH + k) as f64;
                }
                if p.push_row(&row) {
                    i += 1;
                } else {
                    std::thread::yield_now();
                }
            }
            p.dropped()
        });
        let mut out = Vec::with_capacity(64 * WIDTH);
        let mut seen = 0usize;
        while seen < ROWS {
            out.clear();
            let n = c.pop_into(&mut out, 17);
            for (j, x) in out.iter().enumerate() {
                assert_eq!(*x, (seen * WIDTH + j) as f64, "sample {j} after row {seen}");
            }
            seen += n;
            if n == 0 {
                std::thread::yield_now();
            }
        }
        let refused = producer.join().unwrap();
        assert_eq!(refused, c.dropped(), "every refusal is counted");
        assert!(c.is_empty());
    }
}
